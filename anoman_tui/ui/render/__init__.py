"""What the screens draw, worked out without Textual: text, Rich renderables and pane state.

Here belong the parts of the UI that are plain data or plain rendering, so they can be
tested and benchmarked without an app: cutting a streamed answer into Markdown blocks
(`markdown_blocks`) and rendering a block with Rich (`markdown_render`, `fence_render`),
the fenced code blocks of an answer (`code_blocks`), the word diff of two answers
(`diff`), a rerun's line against its original (`rerun`), the verdict on a turn's
figures (`verdict`) and what one pane is and has done (`pane_state`). Widgets, screens
and anything that posts a `Message` stay in `anoman_tui.ui`.

May import: the standard library, `rich` (with `markdown_it` and `pygments`), the layers
below the UI (`anoman_tui.streaming`, `anoman_tui.targets`, `anoman_tui.report`,
`anoman_tui.streaming.safe_text`) and each other. Never Textual, and nothing else of
`anoman_tui.ui` (the `ui-render-without-textual` contract in `.importlinter` checks).
"""
