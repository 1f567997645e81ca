"""Every piece of information fits the terminal, from 80×24 up: nothing overlaps, nothing
is cut mid-word, and what does not fit on one line moves whole to the next.

Read from the screen as drawn (tests/ui/screen_text.py), not from the widgets' contents.
"""

from __future__ import annotations

import re

import pytest

from anoman_tui.config import Settings
from anoman_tui.gateway import EmbeddedGateway
from anoman_tui.targets import TargetConfig
from anoman_tui.ui.app import AnomanApp
from anoman_tui.ui.render import pane_state
from anoman_tui.ui.render.fit import fit_model_and_target, shorten
from anoman_tui.ui.render.pane_state import PaneState
from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.widgets.pane import PaneHeader, pack_fields
from anoman_tui.ui.widgets.status_line import StatusLine
from tests.pilot import panes, ready, settled, until
from tests.pilot import submit as send
from tests.ui.deck_host import DeckHost
from tests.ui.screen_text import screen_lines

SIZES = [(80, 24), (100, 30), (120, 30), (200, 50)]
ALWAYS_SHOWN_KEYS = ("History", "Abort all", "Retry", "Next pane", "Zoom", "Quit", "palette")
# tok/s is "—" for an answer read in one go (docs/wire-contract.md §7): a loaded machine
# reads a short answer so (seen in CI with a core busy).
FOOTER_FIELDS = (r"TTFT \d+\.\d\d s", r"tok/s (?:[\d.]+|—)", r"tokens \d+ in · \d+ out",
                 r"cost \$0\.\d+", r"weighted \d+", "route realtime/id", "cache miss")
GUARDRAILS = tuple(rf"{name} pass \d\.\d\d" for name in ("injection", "pii", "moderation",
                                                          "policy"))


def header_rows(app: AnomanApp) -> list[int]:
    """The screen rows of the shown panes' headers, each checked to be one row high."""
    headers = [p.query_one(PaneHeader) for p in panes(app) if p.display]
    assert all(h.region.height == 1 for h in headers), [h.region for h in headers]
    return [h.region.y for h in headers]


def whole_in_one_line(lines: list[str], pattern: str) -> int:
    """How many times the screen shows `pattern` unbroken, within one line."""
    return sum(len(re.findall(pattern, line)) for line in lines)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_every_word_is_on_screen_whole_at_every_size(make_app, size) -> None:
    width = size[0]
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        # (a prompt of its own: the gateway's cache is shared by the tests)
        await send(pilot, f"Explain TCP slow start in a {width}-column terminal")
        await until(pilot, lambda: settled(app))
        await pilot.pause(0.2)
        lines = screen_lines(app)
        shown = "\n".join(lines)
        assert all(len(line) <= width for line in lines)
        # Only a header shortens a model's name (in its middle, marked `…`), on its one line.
        rows = header_rows(app)
        assert "…" not in "\n".join(line for y, line in enumerate(lines) if y not in rows), \
            "something was cut short:\n" + shown
        assert all(re.search(r"\bdone\b", lines[y]) for y in rows), shown
        # the key bar: no key hidden under the palette key, every label whole
        bar = lines[-1]
        for label in ALWAYS_SHOWN_KEYS:
            assert label in bar, f"{label!r} missing from the key bar {bar!r}"
        assert bar.endswith("^p palette") and bar.count("palette") == 1
        if width >= 100:
            assert "f1 f2 f3 Abort pane" in bar
        if width >= 120:
            assert "f5 Usage" in bar and "^n New" in bar
        # The deck's keys (what they do is tested on the deck alone, tests/ui/deck_host.py):
        # Zoom at every width; Diff and Copy shed at 80 columns; all shown at 200.
        assert "f8 Zoom" in bar, bar
        if width in (80, 200):
            for label in ("f7 Diff", "f9 Copy"):
                assert (label in bar) == (width == 200), (label, bar)
        if width == 200:
            assert "Scroll" in bar and "⇧PgUp" in bar, bar
        # the status line's fields, each whole
        status = "\n".join(lines[:2])
        for words in ("anoman-tui", "requests go to: local gateway", "cache: on",
                      "params: per pane"):
            assert words in status, status
        # each visible pane's footer: every field and every guardrail check whole
        visible = 1 if width < 120 else 3
        for words in FOOTER_FIELDS + GUARDRAILS:
            assert whole_in_one_line(lines, words) >= visible, (words, shown)
        assert whole_in_one_line(lines, "guardrails ") == visible


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=["80x24", "100x30"])
async def test_the_status_line_says_how_many_stream(make_app, monkeypatch, size) -> None:
    monkeypatch.setitem(pane_state.SCENARIO_HEADERS, "slow_thinking", "ttft=0.05,rate=15")
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        line = app.compare.query_one("#status-line")
        # Connected, the line names the gateway; on a loaded machine its new height is
        # laid out a frame after `ready`.
        await until(pilot, lambda: "local gateway" in "\n".join(screen_lines(app)[:2])
                    and line.size.height == app.compare.query_one(StatusLine).lines)
        height_idle = line.size.height
        for pane in app.panes:
            pane.scenario = "slow_thinking"
        await send(pilot, f"Count the streams in {size[0]} columns")
        await until(pilot, lambda: all(p.status == "streaming" for p in panes(app)))
        await pilot.pause(0.2)
        status = "\n".join(screen_lines(app)[:2])
        assert "3 streaming" in status and "params: per pane" in status, status
        # room for the count was kept: the line did not grow when streams started
        assert app.compare.query_one("#status-line").size.height == height_idle
        await pilot.press("escape")
        await until(pilot, lambda: settled(app))


async def test_the_usage_ledger_shows_what_requests_cost_at_80_columns(
        make_app, ui_gateway: EmbeddedGateway) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await send(pilot, "What does the usage ledger record?")
        await until(pilot, lambda: settled(app))
        # The gateway writes a request's ledger row as its handler ends, which can be just
        # after the client read the last frame: open the ledger once all three are written.
        ids = [p.state.last_result.request_id for p in panes(app)
               if p.state.last_result is not None]
        assert len(ids) == 3
        await until(pilot, lambda: all(ui_gateway.state.ledger.get(i) for i in ids))
        await pilot.press("f5")
        await until(pilot, lambda: "requests, newest first" in "\n".join(screen_lines(app)))
        # The rows are read from the gateway after the screen shows its title: waited for.
        await until(pilot, lambda: any("claude-sonnet-4-6" in line and "0.00" in line
                                       for line in screen_lines(app)))
        lines = screen_lines(app)
        header = next(line for line in lines if " time " in f" {line} ")
        for column in ("time", "model", "status", "cost USD", "tok in", "tok out", "weighted"):
            assert column in header, header
        assert "← → more columns" in "\n".join(lines)
        # the other columns are a scroll away
        table = app.screen.query_one("DataTable")
        for _ in range(40):
            await pilot.press("right")
        await pilot.pause(0.2)
        assert table.scroll_x > 0
        assert "routing" in "\n".join(screen_lines(app))


async def test_a_toast_is_flush_with_the_right_edge_and_has_no_stray_half_block() -> None:
    # The deck's abort key says so in a toast: a deck alone (tests/ui/deck_host.py) under
    # its prompt box, in the app's theme and styles.
    app = DeckHost(3, prompt=True, theme="anoman-dark")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.press("f1")  # nothing streams: a toast says so
        await until(pilot, lambda: bool(app.screen.query("Toast"))
                    and "Pane 1 is not streaming." in "\n".join(screen_lines(app)))
        toast = app.screen.query_one("Toast")
        assert toast.region.right == app.size.width
        lines = screen_lines(app)
        row = next(i for i, line in enumerate(lines) if "Pane 1 is not streaming." in line)
        rows = lines[toast.region.y:toast.region.bottom]
        assert row in range(toast.region.y, toast.region.bottom)
        # its left edge is a bar drawn in the toast's own colour, not an `outer` half block
        assert all(line[toast.region.x] == "▊" for line in rows), rows
        assert "▌" not in "\n".join(lines)


def test_fields_wrap_whole_and_a_long_one_between_its_parts() -> None:
    fields = [("TTFT", "0.57 s", True), ("tokens", "7 in · 357 out", True),
              ("guardrails", "injection pass 0.02, pii pass 0.00, moderation flag 0.60, "
               "policy pass 0.00", False)]
    assert pack_fields(fields, 36).plain.split("\n") == [
        "TTFT 0.57 s  tokens 7 in · 357 out",
        "guardrails injection pass 0.02,",
        "pii pass 0.00, moderation flag 0.60,",
        "policy pass 0.00",
    ]
    assert pack_fields(fields, 200).plain.count("\n") == 0
    # a word wider than the line is the only thing ever cut
    assert pack_fields([("url", "http://a.example/" + "x" * 30, False)], 20).plain.split(
        "\n") == ["url", "http://a.example/xxx", "x" * 20, "x" * 7]


LONG_MODELS = ["claude-sonnet-4-6-20250514-extended-thinking",
               "qwen3-coder-480b-a35b-instruct-fp8", "anoman-lite"]
LONG_TARGET = "team-eu-west-inference-gateway"
HEADER_SIZES = [(80, 24), (120, 30), (160, 40), (200, 50)]


def deck_rows(host: DeckHost) -> list[int]:
    """The screen rows of the shown panes' headers, each checked to be one row high."""
    headers = [p.query_one(PaneHeader) for p in host.deck.widgets if p.display]
    assert all(h.region.height == 1 for h in headers), [h.region for h in headers]
    return [h.region.y for h in headers]


@pytest.mark.parametrize("size", HEADER_SIZES, ids=[f"{w}x{h}" for w, h in HEADER_SIZES])
async def test_a_pane_header_is_one_line_that_keeps_its_state(size) -> None:
    """Long model and target names are shortened (in their middle), never the state: each
    header is one row of the screen as exported (the SVG), state word included. (The
    headers and tabs are the deck's: a deck alone, tests/ui/deck_host.py.)"""
    settings = Settings(targets={LONG_TARGET: TargetConfig(base_url="http://127.0.0.1:9/v1")})
    target = settings.all_targets()[LONG_TARGET]
    local = settings.all_targets()["local"]
    app = DeckHost(panes=[PaneState(index=1, model=LONG_MODELS[0], target=target),
                          PaneState(index=2, model=LONG_MODELS[1], target=local),
                          PaneState(index=3, model=LONG_MODELS[2], target=local)])
    async with app.run_test(size=size) as pilot:
        app.deck.panes[2].status = "cancelled"
        app.deck.pane(3).refresh_chrome()
        app.deck.update_tabs(size[0])  # (as the screen does with its status line)
        if size[0] < 120:
            await pilot.press("f4", "f4")  # the third pane's tab: its state is the longest
        await until(pilot, lambda: all(h.region.height == 1 for h in
                                       (p.query_one(PaneHeader) for p in app.deck.widgets
                                        if p.display)), 10)
        lines = screen_lines(app)
        rows = deck_rows(app)
        shown = [p for p in app.deck.widgets if p.display]
        assert len(rows) == (3 if size[0] >= 120 else 1)
        for pane, y in zip(shown, rows, strict=True):
            left, right = pane.region.x, pane.region.right
            line, below = lines[y][left:right], lines[y + 1][left:right]
            state = pane.state.status
            assert line.lstrip("│ ").startswith(f"{pane.state.index} "), line
            assert re.search(rf"\b{state}\b", line), (state, line)
            # the next row is the answer's, not the rest of the header
            assert state not in below and "@" not in below, below
        if size[0] >= 200:
            assert LONG_MODELS[1] in "\n".join(lines)  # whole where there is room
        # In the tab strip too: every tab whole on screen, with its state.
        if size[0] < 120:
            strip = next(line for line in lines if line.startswith(" 1 "))
            assert " · idle" in strip and strip.rstrip().endswith("3 anoman-lite · cancelled")


async def test_a_scenario_note_that_does_not_fit_has_a_row_of_its_own() -> None:
    app = DeckHost(3, models=["claude-sonnet-4-6"] * 3)  # the header is the pane's
    async with app.run_test(size=(120, 30)) as pilot:
        app.deck.panes[1].scenario = "interrupt"
        app.deck.pane(2).refresh_chrome()
        note = re.escape("sim. interruption (next)")
        # Drawn by the pane's next frame: waited for, not slept on (a busy core delays it).
        await until(pilot, lambda: whole_in_one_line(screen_lines(app), note) == 1, 10)
        lines = screen_lines(app)
        header = app.deck.pane(2).query_one(PaneHeader)
        assert header.region.height == 2
        assert re.search(r"2  claude-sonnet-4-6 @local  idle", lines[header.region.y]), lines
        assert note.replace("\\", "") in lines[header.region.y + 1]
        assert "…" not in "\n".join(lines).replace("starting the local gateway…", "")
        assert whole_in_one_line(lines, "claude-sonnet-4-6") == 3
        # Wide enough, it shares the header's one line.
        await pilot.resize_terminal(260, 30)
        await until(pilot, lambda: header.region.height == 1, 10)
        assert "simulating interruption (next prompt)" in screen_lines(app)[header.region.y]


def test_shortened_names_keep_their_start_and_end() -> None:
    assert shorten("claude-sonnet-4-6", 17) == "claude-sonnet-4-6"
    assert shorten("claude-sonnet-4-6", 12) == "claude-…-4-6"
    assert all(len(shorten("claude-sonnet-4-6", n)) == n for n in range(1, 17))
    assert fit_model_and_target("anoman-lite", "local", 40) == ("anoman-lite", "local")
    assert fit_model_and_target("anoman-lite", "openrouter", 17) == ("anoman-lite", "op…r")
    assert fit_model_and_target("anoman-lite", "openrouter", 14) == ("anoman-lite", None)
    assert fit_model_and_target("anoman-lite", "local", 8) == ("anoma…te", None)
    # A short target is whole or left out, never cut to a stub.
    assert fit_model_and_target("anoman-lite", "local", 17) == ("anoman-lite", None)


async def test_the_model_picker_scrolls_with_a_hint_and_keeps_its_help_at_80x24(
        make_app) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        app.compare.pick_model(1)
        await until(pilot, lambda: isinstance(app.screen, ChoiceScreen))
        models = [m.id for m in app.connector.target_models["local"]]
        assert len(models) >= 6  # more than 24 rows show, two rows each

        def shown() -> str:
            return "\n".join(screen_lines(app))

        await until(pilot, lambda: "▼ more below" in shown(), 10)
        text = shown()
        assert "Enter select · Esc cancel" in text and "▲ more above" not in text
        assert f"{len(models)} to choose from" in text
        assert models[0] in text and models[-1] not in text
        assert "…" not in text.replace("starting the local gateway…", "")
        await pilot.press("end")  # the last entry: scrolled into view
        await until(pilot, lambda: "▲ more above" in shown() and models[-1] in shown(), 10)
        text = shown()
        assert "▼ more below" not in text and "Enter select · Esc cancel" in text
        await pilot.press("enter")
        await until(pilot, lambda: app.panes[0].model == models[-1])
