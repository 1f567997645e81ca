"""Export a comparison from the screens: pick a format, confirm the file, write it.

The compare screen, a reopened comparison and the history list share this flow. The
file goes to the current directory under a name that is not taken (or a path the user
types); a notification says where. Reports are written by `anoman_tui.report` (which
escapes model output for each format); the SVG is the screen as it was when the export
began, taken before any dialog covered it. A recording (`anoman_tui.history.portable`)
is offered for a saved comparison whose streams were recorded, as
`anoman-tui export ID --format recording` writes it.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App

from anoman_tui.ui.screens.pickers import ChoiceScreen
from anoman_tui.ui.screens.text_input import TextInputScreen

if TYPE_CHECKING:
    from anoman_tui.history import ComparisonRecord, HistoryStore
    from anoman_tui.streaming.recording import StreamRecording

FORMAT_NAMES = {"md": "Markdown", "html": "HTML", "json": "JSON", "recording": "Recording",
                "svg": "SVG screenshot"}
FORMAT_HELP = {
    "md": "prompt, metrics table, each answer under its model's heading",
    "html": "one self-contained file for a browser: answers side by side",
    "json": "the `compare --json` document with the comparison's id and time",
    "recording": "the streams as recorded, for `anoman-tui import` and replay elsewhere",
    "svg": "a picture of the screen as it is now",
}
FORMAT_SUFFIX = {"recording": "anoman-recording.json"}
"""A file name's ending when it is not the format's name."""


def can_export_recording(record: ComparisonRecord | None, store: HistoryStore | None) -> bool:
    """A saved comparison whose streams were recorded, not a blind round before its vote
    (its recordings name the models)."""
    if record is None or record.id is None or record.hidden:
        return False
    return all(p.recording is not None for p in record.panes) or (
        record.recorded and store is not None)


def default_path(record: ComparisonRecord | None, fmt: str, directory: Path | None = None
                 ) -> Path:
    """`comparison-<id>.<fmt>` (as `anoman-tui export` names it) in `directory` (the
    current one); `-2`, `-3`… if taken."""
    directory = directory or Path.cwd()
    if record is not None and record.id is not None:
        stem = f"comparison-{record.id}"
    else:
        moment = record.created_at if record is not None and record.created_at else time.time()
        stem = "comparison-" + time.strftime("%Y%m%d-%H%M%S", time.localtime(moment))
    suffix = FORMAT_SUFFIX.get(fmt, fmt)
    path = directory / f"{stem}.{suffix}"
    n = 2
    while path.exists():
        path = directory / f"{stem}-{n}.{suffix}"
        n += 1
    return path


def check_path(text: str) -> str | None:
    """Why `text` cannot be written to, in one sentence; None if it can."""
    if not text:
        return "Type a file name."
    path = Path(text).expanduser()
    if path.is_dir():
        return f"{path} is a folder: type a file name in it."
    if path.exists():
        return f"{path} already exists: type another name."
    if not path.parent.is_dir():
        return f"There is no folder {path.parent}."
    return None


def _write(path: Path, content: str) -> None:
    # "x": never over a file that appeared after the name was checked.
    with path.open("x", encoding="utf-8", newline="") as out:
        out.write(content)


def format_choices(record: ComparisonRecord | None, *, svg: bool,
                   store: HistoryStore | None = None) -> list[str]:
    """The formats the dialog offers: SVG only when a screenshot was taken, a recording
    only when `can_export_recording`."""
    return [f for f in FORMAT_NAMES
            if (f != "svg" or svg) and (f == "svg" or record is not None)
            and (f != "recording" or can_export_recording(record, store))]


def _recording_file(app: App[Any], record: ComparisonRecord,
                    store: HistoryStore | None) -> str:
    """The portable file's text (as `anoman-tui export --format recording` writes it)."""
    from anoman_tui.history.portable import comparison_document, dumps

    recordings: dict[int, StreamRecording] = {
        p.pane: p.recording for p in record.panes if p.recording is not None}
    if len(recordings) < len(record.panes) and store is not None and record.id is not None:
        recordings = store.recordings(record.id)
    return dumps(comparison_document(record, recordings, _app_secrets(app)))


def _app_secrets(app: App[Any]) -> tuple[str, ...]:
    """Every key the app holds and the settings' (as `anoman-tui export` masks them)."""
    from anoman_tui.secrets_in_use import secrets_in_use

    connector = getattr(app, "connector", None)  # (a test's bare app has none)
    if connector is None:
        return secrets_in_use()
    return secrets_in_use([
        connector.api_key, *(t.key() for t in connector.targets.values()),
        *(c.api_key.get_secret_value() for c in connector.connections.values())])


def _report(app: App[Any], record: ComparisonRecord, fmt: str) -> str:
    """A report (`anoman_tui.report.export`) with no key in it: a server may have echoed
    one into an answer or an error, and a target's URL may hold a password."""
    from anoman_tui.report import export  # off the first paint's path
    from anoman_tui.streaming.safe_text import mask_secrets, masked

    secrets = _app_secrets(app)
    return mask_secrets(export(masked(record, secrets), fmt), secrets)  # type: ignore[arg-type]


def export_comparison(
    app: App[Any],
    record: ComparisonRecord | None,
    *,
    svg: str | None = None,
    title: str = "Export this comparison",
    store: HistoryStore | None = None,
) -> None:
    """Ask for a format (SVG only when `svg` was taken, a recording only for a recorded
    comparison `store` keeps) and a file name, then write it."""
    formats = format_choices(record, svg=svg is not None, store=store)
    if not formats:
        app.notify("Nothing to export yet: send a prompt first.", timeout=3)
        return
    options: list[tuple[str, Any]] = [
        (f, f"{FORMAT_NAMES[f]} (.{FORMAT_SUFFIX.get(f, f)}) · {FORMAT_HELP[f]}")
        for f in formats]

    def chosen_format(fmt: str | None) -> None:
        if fmt is None:
            return
        suggested = default_path(record, fmt)
        app.push_screen(
            TextInputScreen(f"Save the {FORMAT_NAMES[fmt]} as", value=str(suggested),
                            help="Enter write · Esc cancel · a relative path is from "
                                 f"{Path.cwd()}",
                            check=check_path),
            lambda text: chosen_path(fmt, text))

    def chosen_path(fmt: str, text: str | None) -> None:
        if text is None:
            return
        path = Path(text).expanduser().resolve()

        async def write() -> None:
            from anoman_tui.history import HistoryUnavailable
            from anoman_tui.history.portable import PortableRefused
            from anoman_tui.streaming.recording import RecordingError

            try:
                if fmt == "svg":
                    assert svg is not None
                    content = svg
                elif fmt == "recording":
                    assert record is not None
                    content = await asyncio.to_thread(_recording_file, app, record, store)
                else:
                    assert record is not None
                    content = await asyncio.to_thread(_report, app, record, fmt)
                await asyncio.to_thread(_write, path, content)
            except OSError as exc:
                app.notify(f"Could not write {path}: {exc.strerror or exc}.",
                           title="Export failed", severity="error", timeout=8)
                return
            except (PortableRefused, RecordingError, HistoryUnavailable) as exc:
                app.notify(f"Could not export the recording: {exc.reason}",
                           title="Export failed", severity="error", timeout=8)
                return
            app.notify(f"Wrote {path}", title=f"Exported {FORMAT_NAMES[fmt]}", timeout=6)

        app.run_worker(write(), name="export", group="export", exit_on_error=False)

    app.push_screen(ChoiceScreen(title, options, formats[0]), chosen_format)
