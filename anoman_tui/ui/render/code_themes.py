"""The Pygments themes of code fences, one per kind of app theme.

Apart from the renderer (`markdown_render`, which imports Rich's Markdown, markdown-it
and Pygments): the answer view names them at import, before the first paint, and
loads the renderer only with the first answer or the warm-up after the first paint.

May import: nothing.
"""

CODE_THEME = "monokai"
"""Pygments theme for code fences under a dark app theme."""
LIGHT_CODE_THEME = "friendly"
"""Pygments theme for code fences under a light app theme."""
