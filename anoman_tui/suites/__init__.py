"""Evaluation suites: many prompts x models x repeats, each a stream through the stream
core, checked by assertions, summarised with statistics (docs/suites.md).

`model` is the data; `loader` and `promptfoo` read suite files (with what they share in
`reading`); `assertions` checks an answer; `stats` and `summary` compute the figures;
`engine` runs a suite (concurrency, the cost limit, saving, resume; rate limits and
retries by `anoman_tui.streaming.retry`); `prepare` makes a run's request from the
settings and readies the run. The judge's calls are `anoman_tui.judging`'s; the exit
statuses and the reports are the commands' and `anoman_tui.report`'s.

May import: the standard library, numpy, `anoman_tui.streaming`, `anoman_tui.history`,
`anoman_tui.targets`, `anoman_tui.judges` and `anoman_tui.judging`; never the reports,
Rich, Textual or the UI.
"""
