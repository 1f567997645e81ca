"""Reports of a comparison: Markdown, HTML and JSON, as pure functions of a `ComparisonRecord`.

Everything a report holds came from a model or a user: escaping for the format lives
here, and no key is ever written (a record holds none).

May import: the standard library, `anoman_tui.history`, Rich's and Pygments'
renderers. Never Textual.
"""
