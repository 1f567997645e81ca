"""Asking a judge model: its calls through the stream core (`calls`: a suite's rubrics
and pairs, and the arena's rounds) and the arena judge's verdict on one voted round
(`rounds`). Beside `anoman_tui.judges`, which holds what is pure (prompts, reading a
verdict, agreement figures): this package does the I/O.

May import: the stream core, the targets, the settings, the history and
`anoman_tui.judges`; never the suites, the gateway, Rich, Textual or a view.
"""
