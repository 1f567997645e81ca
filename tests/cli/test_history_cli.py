"""`anoman-tui compare` saves to the history and `anoman-tui history` lists it: real CLI,
real local gateway, a history file in a temporary data directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.history import HistoryStore
from anoman_tui.report.json_report import panel_json
from tests.cli.helpers import FAST, KEY, cli, history_file


def compare(data_home: Path, gateway: EmbeddedGateway, prompt: str, *extra: str,
            env: dict[str, str] | None = None, config: str = "",
            ) -> tuple[dict[str, object], str]:
    result = cli(data_home, "compare", prompt, "--json", "--base-url", gateway.base_url,
                 "-m", "anoman-lite", "-m", "claude-sonnet-4-6", "-H", FAST, *extra,
                 env={"ANOMAN_API_KEY": KEY, **(env or {})}, config=config)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout), result.stderr


def test_compare_saves_and_history_lists_it(gateway: EmbeddedGateway, data_home: Path) -> None:
    first, _ = compare(data_home, gateway, "Why is the sky blue?")
    second, _ = compare(data_home, gateway, "Write a haiku about rain")
    assert isinstance(first["id"], int) and second["id"] == first["id"] + 1
    assert {"prompt", "endpoint", "panels"} <= set(first)

    listed = cli(data_home, "history", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [r["id"] for r in rows] == [second["id"], first["id"]]  # newest first
    assert rows[1]["prompt"] == "Why is the sky blue?"
    assert rows[1]["time"][:4].isdigit() and "T" in rows[1]["time"]
    assert [(p["pane"], p["model"], p["status"]) for p in rows[1]["panes"]] == [
        (1, "anoman-lite", "completed"), (2, "claude-sonnet-4-6", "completed")]
    assert all(p["cost"].startswith("$") for p in rows[1]["panes"])

    found = cli(data_home, "history", "--json", "--search", "haiku rain")
    assert [json.loads(line)["id"] for line in found.stdout.splitlines()] == [second["id"]]
    limited = cli(data_home, "history", "--json", "--limit", "1")
    assert [json.loads(line)["id"] for line in limited.stdout.splitlines()] == [second["id"]]

    table = cli(data_home, "history")
    lines = table.stdout.splitlines()
    assert len(lines) == 2 and lines[1].lstrip().startswith(str(first["id"]))
    assert "Why is the sky blue?" in lines[1]
    # The local gateway's models are simulated: the list says so.
    assert "anoman-lite (simulated) completed $" in lines[1]
    assert "claude-sonnet-4-6 (simulated) completed $" in lines[1]

    # What was saved is what compare printed.
    with HistoryStore.open(history_file(data_home)) as store:
        saved = store.get(int(first["id"]))  # type: ignore[call-overload]
    assert saved is not None and saved.source == "compare"
    panels = first["panels"]
    assert isinstance(panels, list)
    for pane, panel in zip(saved.panes, panels, strict=True):
        assert (pane.text, pane.usage, pane.anoman) == (
            panel["text"], panel["usage"], panel["anoman"])
        assert panel_json(pane)["metrics"] == panel["metrics"]  # the export's, as compare's
        assert pane.base_url == gateway.base_url


def test_the_key_reaches_no_byte_of_the_history(gateway: EmbeddedGateway,
                                                data_home: Path) -> None:
    compare(data_home, gateway, f"a prompt that is not the key {KEY[:8]}")
    files = list(history_file(data_home).parent.glob("history.sqlite3*"))
    assert history_file(data_home) in files
    for path in files:
        data = path.read_bytes()
        assert KEY.encode() not in data and KEY[8:].encode() not in data, path


@pytest.mark.parametrize(
    ("how", "extra", "env", "config"),
    [("flag", ("--no-history",), None, ""), ("env", (), {"ANOMAN_HISTORY": "false"}, ""),
     ("config", (), None, "history = false\n")],
    ids=["flag", "env", "config"],
)
def test_no_history_saves_nothing(gateway: EmbeddedGateway, data_home: Path, how: str,
                                  extra: tuple[str, ...], env: dict[str, str] | None,
                                  config: str) -> None:
    doc, err = compare(data_home, gateway, "Not to be kept", *extra, env=env, config=config)
    assert doc["id"] is None and err == ""
    assert not history_file(data_home).exists()
    empty = cli(data_home, "history")
    assert empty.returncode == 0
    assert empty.stdout.startswith("No comparisons saved yet")


def test_an_unusable_history_disables_it_and_compare_still_runs(
    gateway: EmbeddedGateway, data_home: Path,
) -> None:
    path = history_file(data_home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage, not sqlite\n" * 100)
    before = path.read_bytes()
    doc, err = compare(data_home, gateway, "Still compared")
    assert doc["id"] is None
    panels = doc["panels"]
    assert isinstance(panels, list) and all(p["status"] == "completed" for p in panels)
    assert err.splitlines() == [
        f"anoman-tui compare: history disabled: {path} is not a readable history database "
        "(corrupt or another kind of file)"]
    assert path.read_bytes() == before
    listed = cli(data_home, "history")
    assert listed.returncode == 1 and "corrupt" in listed.stderr


def test_history_search_without_a_match_is_friendly(gateway: EmbeddedGateway,
                                                     data_home: Path) -> None:
    compare(data_home, gateway, "Why is the sky blue?")
    found = cli(data_home, "history", "--search", "zebra")
    assert (found.returncode, found.stdout.strip()) == (0, "No saved comparison matches 'zebra'")
    as_json = cli(data_home, "history", "--json", "--search", "zebra")
    assert (as_json.returncode, as_json.stdout) == (0, "")


@pytest.mark.parametrize("argv", [["--no-history"], ["compare", "hi", "--no-history"]])
def test_no_history_flag_sets_the_setting_for_the_screen_and_compare(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    from anoman_tui.cli import build_parser, settings_from_args

    monkeypatch.setenv("ANOMAN_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.delenv("ANOMAN_HISTORY", raising=False)
    on = settings_from_args(build_parser([]).parse_args(argv[:-1] if len(argv) > 1 else []),
                            "anoman-tui")
    off = settings_from_args(build_parser(argv).parse_args(argv), "anoman-tui")
    assert on is not None and on.history is True
    assert off is not None and off.history is False


def _tags(page: str) -> list[tuple[str, list[str]]]:
    from html.parser import HTMLParser

    found: list[tuple[str, list[str]]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, [name for name, _ in attrs]))

    Collect().feed(page)
    return found


def test_export_writes_each_format_of_a_saved_comparison(
    data_home: Path, gateway: EmbeddedGateway, tmp_path: Path,
) -> None:
    hostile = "Explain <script>alert(1)</script> and <img src=x onerror=alert(1)> please"
    document, _ = compare(data_home, gateway, hostile)
    comparison = document["id"]
    assert isinstance(comparison, int)
    for fmt in ("md", "html", "json"):
        target = tmp_path / f"report.{fmt}"
        result = cli(data_home, "export", str(comparison), "--format", fmt, "-o", str(target))
        assert result.returncode == 0, result.stderr
        assert str(target) in result.stdout
        text = target.read_text(encoding="utf-8")
        assert KEY not in text and "anm-sk-" not in text
        if fmt == "md":
            assert "anoman-lite" in text and "claude-sonnet-4-6" in text
        if fmt == "html":
            tags = _tags(text)
            assert "script" not in {tag for tag, _ in tags} and "img" not in {t for t, _ in tags}
            assert not [name for _, attrs in tags for name in attrs if name.startswith("on")]
            assert "&lt;script&gt;" in text  # shown as text
        if fmt == "json":
            report = json.loads(text)
            assert report["id"] == comparison and report["prompt"] == hostile
            assert [p["model"] for p in report["panels"]] == ["anoman-lite", "claude-sonnet-4-6"]
    to_stdout = cli(data_home, "export", str(comparison), "-f", "json", "-o", "-")
    assert to_stdout.returncode == 0 and json.loads(to_stdout.stdout)["id"] == comparison


def test_export_of_an_unknown_id_exits_two_with_one_line(data_home: Path) -> None:
    result = cli(data_home, "export", "424242", "-o", "-")
    assert result.returncode == 2
    assert "no comparison 424242" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
