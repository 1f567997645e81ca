"""Evaluation suites: many prompts x models x repeats, each a stream through the stream
core, checked by assertions, summarised with statistics (docs/suites.md).

`model` is the data; `loader` and `promptfoo` read suite files (with what they share in
`reading`); `assertions` checks an
answer; `stats` and `summary` compute the figures; `engine` runs a suite (concurrency,
rate limits, retries, the cost limit, saving, resume).

May import: the standard library, numpy, `anoman_tui.streaming`, `anoman_tui.history`,
`anoman_tui.targets` and `anoman_tui.report`; never Textual or the UI.
"""
