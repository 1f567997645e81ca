"""The suite screen's matrix (`anoman_tui.ui.widgets.case_matrix`): what a line shows, the
cursor and its keys, scrolling with the cursor, which rows are rendered again after a
change (only those changed and on screen), filtering, and a click on the cursor's row."""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual.app import App, ComposeResult

from anoman_tui.ui.widgets.case_matrix import CaseMatrix


class MatrixApp(App[None]):
    def __init__(self, rows: int) -> None:
        super().__init__()
        self.cells = {f"c{i}": [Text(f"c{i}"), Text(f"· wait {i}"), Text("✓ pass")]
                      for i in range(rows)}
        self.asked: Counter[str] = Counter()
        self.selected: list[str] = []

    def row(self, key: str) -> list[Text]:
        self.asked[key] += 1
        return self.cells[key]

    def compose(self) -> ComposeResult:
        yield CaseMatrix([("case", 8), ("model-a", 10), ("model-b", 8)], self.row,
                         id="m")

    def on_mount(self) -> None:
        matrix = self.query_one(CaseMatrix)
        matrix.set_rows(self.cells)
        matrix.focus()

    def on_case_matrix_selected(self, event: CaseMatrix.Selected) -> None:
        self.selected.append(event.key)


def lines(app: MatrixApp) -> list[str]:
    matrix = app.query_one(CaseMatrix)
    return [matrix.render_line(y).text for y in range(matrix.size.height)]


async def test_a_header_on_top_and_a_line_a_row_cut_to_its_column() -> None:
    app = MatrixApp(5)
    async with app.run_test(size=(40, 8)) as pilot:
        await pilot.pause()
        shown = lines(app)
        assert shown[0].startswith("case     model-a    model-b")
        assert shown[1].startswith("c0       · wait 0   ✓ pass")
        # A cell longer than its column ends in an ellipsis, never in the next column.
        app.cells["c1"][1] = Text("✗ FAIL 2/3 0.42s")
        app.query_one(CaseMatrix).refresh_rows(["c1"])
        await pilot.pause()
        assert lines(app)[2].startswith("c1       ✗ FAIL 2/… ✓ pass")
        assert app.query_one(CaseMatrix).row_text(1) == "c1 ✗ FAIL 2/3 0.42s ✓ pass"


async def test_the_cursor_moves_and_the_view_follows_it() -> None:
    app = MatrixApp(100)
    async with app.run_test(size=(40, 10)) as pilot:
        matrix = app.query_one(CaseMatrix)
        await pilot.pause()
        assert matrix.cursor_key == "c0"
        await pilot.press("down", "down")
        assert matrix.cursor_key == "c2"
        await pilot.press("end")
        await pilot.pause()
        assert matrix.cursor_key == "c99"
        assert lines(app)[-1].startswith("c99")  # scrolled to show it
        await pilot.press("pageup")
        await pilot.pause()
        assert matrix.cursor_row < 99 and matrix.cursor_key in " ".join(lines(app))
        await pilot.press("home", "up")
        await pilot.pause()
        assert matrix.cursor_key == "c0" and lines(app)[1].startswith("c0")


async def test_a_change_renders_only_the_rows_changed_and_on_screen() -> None:
    app = MatrixApp(1000)
    async with app.run_test(size=(40, 10)) as pilot:
        matrix = app.query_one(CaseMatrix)
        await pilot.pause()
        # Only what is on screen was ever asked for, not the 1,000 rows.
        assert set(app.asked) <= {f"c{i}" for i in range(10)}
        app.asked.clear()
        matrix.refresh_rows(["c3", "c500"])
        await pilot.pause()
        assert app.asked == Counter({"c3": 1})  # c500 waits until it is seen
        app.asked.clear()
        await pilot.press("down")  # the cursor's lines repaint from what was rendered
        await pilot.pause()
        assert app.asked == Counter()
        matrix.move_cursor(500)
        await pilot.pause()
        assert app.asked["c500"] == 1


async def test_filtered_rows_keep_the_cursor_in_range() -> None:
    app = MatrixApp(20)
    async with app.run_test(size=(40, 10)) as pilot:
        matrix = app.query_one(CaseMatrix)
        matrix.move_cursor(15)
        matrix.set_rows(["c1", "c2"])
        await pilot.pause()
        assert matrix.cursor_key == "c2" and matrix.row_count == 2
        assert lines(app)[3].strip() == ""
        matrix.set_rows([])
        await pilot.pause()
        assert matrix.cursor_key is None


async def test_a_click_moves_the_cursor_and_a_click_on_it_selects() -> None:
    app = MatrixApp(5)
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        await pilot.click(CaseMatrix, offset=(2, 3))  # the third row under the header
        assert app.query_one(CaseMatrix).cursor_key == "c2" and app.selected == []
        await pilot.click(CaseMatrix, offset=(2, 3))
        await pilot.pause()
        assert app.selected == ["c2"]
        await pilot.click(CaseMatrix, offset=(2, 0))  # the header: nothing
        await pilot.pause()
        assert app.selected == ["c2"]


class WideMatrix(App[None]):
    """A suite of `models` models, as the suite screen lays its matrix out."""

    def __init__(self, models: list[str]) -> None:
        super().__init__()
        self.models = models

    def compose(self) -> ComposeResult:
        yield CaseMatrix([("case", 30), *((m, max(17, min(len(m), 24))) for m in self.models)],
                         lambda key: [Text(f"{key}  How do I descale a kettle?"),
                                      *(Text("✓ pass 0.42s") for _ in self.models)], id="m")

    def on_mount(self) -> None:
        self.query_one(CaseMatrix).set_rows(["steps", "zebra"])


async def test_at_80_columns_the_case_column_narrows_so_every_model_fits() -> None:
    models = ["anoman-lite", "qwen3-coder", "claude-sonnet-4-6"]
    app = WideMatrix(models)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        matrix = app.query_one(CaseMatrix)
        shown = [matrix.render_line(y).text for y in range(3)]
        assert all(len(line.rstrip()) <= 80 for line in shown)
        assert shown[0].rstrip().endswith("claude-sonnet-4-6") and "→" not in shown[0]
        assert shown[1].rstrip().endswith("✓ pass 0.42s")  # the last column whole
        assert shown[1].count("✓ pass 0.42s") == 3 and "steps  How do I" in shown[1]
        # Wide again: the case column as asked.
        await pilot.resize_terminal(160, 24)
        await pilot.pause()
        assert matrix.columns[0] == ("case", 30)
        assert "steps  How do I descale a ket…" in matrix.render_line(1).text


async def test_columns_beyond_the_width_scroll_with_an_arrow_that_says_so() -> None:
    models = ["anoman-lite", "qwen3-coder", "claude-sonnet-4-6", "gpt-5-mini", "deepseek-r1"]
    app = WideMatrix(models)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        matrix = app.query_one(CaseMatrix)
        header = matrix.render_line(0).text
        assert header.endswith(" →") and not header.startswith("←"), header
        matrix.scroll_to(x=matrix.max_scroll_x, animate=False, immediate=True)
        await pilot.pause()
        header = matrix.render_line(0).text.rstrip()
        assert header.startswith("← ") and not header.endswith("→"), header
        assert header.endswith("deepseek-r1")
        assert matrix.render_line(1).text.rstrip().endswith("✓ pass 0.42s")
