"""PromptBox: Up/Down at the edges recall earlier prompts; elsewhere they move the cursor
and typing goes into the box as usual."""

from __future__ import annotations

from textual.app import App, ComposeResult

from anoman_tui.ui.messages import PromptSubmitted
from anoman_tui.ui.widgets.prompt_box import PromptBox


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    def compose(self) -> ComposeResult:
        yield PromptBox()

    def on_prompt_submitted(self, message: PromptSubmitted) -> None:
        self.sent.append(message.prompt)


async def test_up_and_down_recall_earlier_prompts_at_the_edges() -> None:
    app = Host()
    async with app.run_test(size=(40, 12)) as pilot:
        box = app.query_one(PromptBox)
        box.focus()
        for prompt in ("first", "second"):
            await pilot.press(*prompt, "enter")
            await pilot.pause()
            box.clear()
        assert app.sent == ["first", "second"]
        await pilot.press("up")
        assert box.text == "second"
        await pilot.press("up")
        assert box.text == "first"
        await pilot.press("down")
        assert box.text == "second"
        await pilot.press("down")
        assert box.text == ""
        # Not at an edge: the arrows move the cursor, keys type into the box.
        await pilot.press("a", "ctrl+j", "b", "up", "c")
        assert box.text == "ac\nb"
        await pilot.press("down", "d")
        assert box.text == "ac\nbd"
