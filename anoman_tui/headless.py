"""`anoman-tui compare`: stream one prompt to several models at once, without the TUI.

Runs every model concurrently through the stream core (one request each),
shows live per-model progress (a Rich live table on a terminal, one line per
milestone otherwise), then each answer and a summary table; or, with
`--json`, prints exactly one JSON document on stdout.

Imports the stream core and Rich (which Textual brings); never Textual itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import sys
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import IO, Any

import httpx
from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from anoman_tui.history import (
    ComparisonRecord,
    HistoryStore,
    HistoryUnavailable,
    pane_record,
)
from anoman_tui.report.rerun import rerun_deltas
from anoman_tui.safe_text import terminal_safe
from anoman_tui.streaming import (
    ChatTurn,
    EndpointFormat,
    GatewayRequestError,
    ModelInfo,
    ModelStream,
    ReasoningDelta,
    StreamClient,
    StreamDone,
    StreamFailed,
    StreamFailure,
    StreamOpened,
    StreamRequest,
    StreamResult,
    TextDelta,
    cost_text,
    describe_failure,
)
from anoman_tui.streaming.recording import ReplayTransport, StreamRecording
from anoman_tui.targets import Connection, Target, connect

BLIND_LABELS = ("A", "B", "C")


@dataclass(frozen=True)
class CompareSpec:
    """Everything `compare` was asked to do; the key stays out of every repr."""

    prompt: str
    models: list[str]
    base_url: str
    api_key: str = field(repr=False)
    endpoint: EndpointFormat = "openai"
    system: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    idle_timeout: float = 60.0
    headers: tuple[tuple[str, str], ...] = ()
    gateway_label: str = ""
    targets: tuple[Target, ...] = ()
    """One per model, where it streams from (empty: every model on `base_url`)."""
    default_target: Target | None = None
    """Where the models come from when none are given (None: `base_url`)."""
    connections: tuple[Connection, ...] = ()
    """`targets` resolved (the local gateway started): set by `run_compare_with_target`."""
    blind: bool = False
    """A blind arena round: output names the models A, B, C only (`BLIND_LABELS`)."""
    pane_params: tuple[tuple[EndpointFormat, float | None, int | None], ...] = ()
    """One per model when they differ (`[[panes]]`): endpoint format, temperature and
    max tokens (empty: `endpoint`, `temperature`, `max_tokens` for all)."""
    record_limit: int | None = None
    """Record the streams for replay, kept when they total at most this many bytes
    (None: not recorded)."""
    conversations: tuple[tuple[tuple[str, str], ...], ...] = ()
    """Per model, the (role, content) turns sent before the prompt (a rerun's)."""
    original: ComparisonRecord | None = None
    """The saved comparison this run repeats (`--rerun`) or replays (`--replay`)."""
    replay: dict[int, StreamRecording] | None = None
    """Pane number -> recording: streamed from these, not from any server."""
    speed: float = 1.0
    """A replay's pace: 2 plays twice as fast as recorded."""

    def params_for(self, index: int) -> tuple[float | None, int | None]:
        """Model `index`'s (0-based) temperature and max tokens."""
        if index < len(self.pane_params):
            return self.pane_params[index][1], self.pane_params[index][2]
        return self.temperature, self.max_tokens

    def connection(self, index: int) -> Connection | None:
        """Model `index`'s (0-based) resolved target; None: `base_url` with `api_key`."""
        return self.connections[index] if index < len(self.connections) else None

    def endpoint_for(self, index: int) -> EndpointFormat:
        if index < len(self.pane_params):
            return self.pane_params[index][0]
        connection = self.connection(index)
        return connection.target.default_endpoint(self.endpoint) if connection \
            else self.endpoint

    def base_url_for(self, index: int) -> str:
        connection = self.connection(index)
        return connection.base_url if connection else self.base_url


@dataclass
class PaneProgress:
    pane: int
    model: str
    target: str = ""
    endpoint: str = ""
    label: str = ""
    """A blind round's name for it (`A`, `B`, `C`): all that is shown of it."""

    @property
    def shown(self) -> str:
        """What the output calls it: its label in a blind round, else its model."""
        return self.label or self.model
    state: str = "waiting"
    chunks: int = 0
    reasoning_chunks: int = 0
    tail: str = ""
    result: StreamResult | None = None


REPLAY_BASE_URL = "http://replay.invalid"
"""Where a replay's requests claim to go: nowhere (`.invalid` never resolves); the
replay transport answers them."""


def _requests(spec: CompareSpec) -> list[StreamRequest]:
    compare_id = f"cmp-{uuid.uuid4().hex[:12]}"
    requests = []
    for i, model in enumerate(spec.models, start=1):
        connection = spec.connection(i - 1)
        endpoint = spec.endpoint_for(i - 1)
        where: dict[str, Any] = {"base_url": spec.base_url, "api_key": spec.api_key,
                                 "extra_headers": spec.headers}
        if connection is not None:
            target = connection.target
            where = {"base_url": connection.base_url, "api_key": connection.api_key,
                     "extra_headers": (*target.headers, *spec.headers),
                     "path": target.path_for(endpoint),
                     "include_usage": target.include_usage, "key_env": target.key_source}
        if spec.replay is not None and i in spec.replay:
            # The recorded path: the replay answers only the request it recorded.
            where = {"base_url": REPLAY_BASE_URL, "path": spec.replay[i].path}
        temperature, max_tokens = spec.params_for(i - 1)
        earlier = spec.conversations[i - 1] if i - 1 < len(spec.conversations) else ()
        requests.append(StreamRequest(
            endpoint=endpoint,
            model=model,
            messages=(*(ChatTurn(role=role, content=content) for role, content in earlier
                        if role in ("user", "assistant")),
                      ChatTurn(role="user", content=spec.prompt)),
            record=spec.record_limit is not None and spec.replay is None,
            system=spec.system,
            temperature=temperature,
            max_tokens=max_tokens,
            idle_timeout=spec.idle_timeout,
            compare_id=compare_id,
            pane=i,
            **where,
        ))
    return requests


class CompareRun:
    """Drives the streams and keeps per-pane progress for whichever view is showing it."""

    def __init__(self, spec: CompareSpec, on_change: Any = None) -> None:
        self.spec = spec
        self.panes = [PaneProgress(i, m, spec.targets[i - 1].name if spec.targets else "",
                                   spec.endpoint_for(i - 1),
                                   BLIND_LABELS[i - 1] if spec.blind else "")
                      for i, m in enumerate(spec.models, start=1)]
        if spec.replay is not None and spec.original is not None:
            # A replay streams from no target: each pane keeps the one it was recorded from.
            for pane, was in zip(self.panes, spec.original.panes, strict=False):
                pane.target = was.target
        self._on_change = on_change or (lambda pane, what: None)
        self._streams: list[ModelStream] = []
        # What each target lists about its models: prices for an estimated cost.
        self.model_info: dict[str, ModelInfo] = {}
        self.target_info: dict[tuple[str, str], ModelInfo] = {}

    def cost(self, pane: PaneProgress) -> str:
        """Its cost as shown: reported, else estimated (labelled), else `—`."""
        r = pane.result
        assert r is not None
        index = pane.pane - 1
        connection = self.spec.connection(index)
        shown = cost_text(r.anoman, r.usage, self.info(pane), r.provider_cost, model=pane.model,
                          provider=connection.target.price_provider if connection else None)
        original = self.spec.original
        if self.spec.replay is not None and original is not None and shown == "—":
            # A replay has no model list to price from: the cost shown when it was recorded.
            was = next((p for p in original.panes if p.pane == pane.pane), None)
            return was.cost_text if was is not None else shown
        return shown

    def info(self, pane: PaneProgress) -> ModelInfo | None:
        """What pane's target listed about its model (prices), if anything."""
        return self.target_info.get((pane.target, pane.model)) or (
            None if pane.target else self.model_info.get(pane.model))

    def cancel(self) -> None:
        for stream in self._streams:
            stream.cancel()

    async def run(self) -> list[StreamResult]:
        http = None
        if self.spec.replay is not None:
            http = httpx.AsyncClient(transport=ReplayTransport(self.spec.replay,
                                                               self.spec.speed))
        async with StreamClient(http) as client:
            self._streams = [client.stream(r) for r in _requests(self.spec)]
            await asyncio.gather(
                *(self._follow(p, s) for p, s in zip(self.panes, self._streams, strict=True))
            )
        return [p.result for p in self.panes if p.result is not None]

    async def _follow(self, pane: PaneProgress, stream: ModelStream) -> None:
        async for event in stream:
            if isinstance(event, TextDelta):
                if pane.chunks == 0:
                    pane.state = "streaming"
                    self._on_change(pane, "first_token")
                pane.chunks += 1
                pane.tail = (pane.tail + event.text)[-200:]
            elif isinstance(event, ReasoningDelta):
                if pane.reasoning_chunks == 0 and pane.chunks == 0:
                    pane.state = "thinking"
                    self._on_change(pane, "thinking")
                pane.reasoning_chunks += 1
            elif isinstance(event, StreamOpened):
                pane.state = "opened"
            elif isinstance(event, StreamFailed):
                pane.state = event.failure.kind
            elif isinstance(event, StreamDone):
                pane.result = event.result
                pane.state = event.result.status
                self._on_change(pane, "done")


# -- output -----------------------------------------------------------------


def pane_json(pane: PaneProgress) -> dict[str, Any]:
    result = pane.result
    assert result is not None
    return {
        "panel": pane.pane,  # the --json document's names ("panels", "panel") are public
        "model": pane.model,
        "target": pane.target,
        "endpoint": pane.endpoint,  # each model's own (a [[panes]] table may set it)
        "status": result.status,
        "text": result.text,
        "committed": result.committed,
        "finish_reason": result.finish_reason,  # "length" / "max_tokens": cut by the limit
        "failure": result.failure.to_json() if result.failure else None,
        "usage": result.usage.model_dump(include={"prompt_tokens", "completion_tokens",
                                                  "total_tokens"}) if result.usage else None,
        "anoman": result.anoman_raw,
        # What the server said the answer cost, when it says (LiteLLM, OpenRouter).
        "provider_cost_usd": str(result.provider_cost)
        if result.provider_cost is not None else None,
        "metrics": result.metrics.to_json(),
    }


def blind_failure(pane: PaneProgress) -> StreamFailure:
    """The pane's failure, its model's name replaced by its label in a blind round."""
    assert pane.result is not None and pane.result.failure is not None
    failure = pane.result.failure
    if not pane.label:
        return failure
    return replace(failure, detail=failure.detail.replace(pane.model, pane.label))


# What a blind round's pane leaves out of `pane_json`: all that names or prices a model.
_IDENTIFYING = ("model", "target", "endpoint", "anoman", "provider_cost_usd")


def blind_pane_json(pane: PaneProgress) -> dict[str, Any]:
    """A blind round's pane: its label, never its model, target, Anoman block or cost
    (a price can be unique to one model); its text, status and measured numbers."""
    shown = {k: v for k, v in pane_json(pane).items() if k not in _IDENTIFYING}
    shown["panel"] = pane.label
    if pane.result is not None and pane.result.failure is not None:
        shown["failure"] = {k: v for k, v in blind_failure(pane).to_json().items()
                            if k not in ("route", "key_env")}
    return shown


def compare_json(spec: CompareSpec, run: CompareRun,
                 history_id: int | None = None) -> dict[str, Any]:
    if spec.blind:
        return {"id": history_id, "blind": True, "prompt": spec.prompt,
                "endpoint": spec.endpoint, "panels": [blind_pane_json(p) for p in run.panes]}
    document: dict[str, Any] = {
        "id": history_id,  # the history's id; null when not saved
        "prompt": spec.prompt,
        "endpoint": spec.endpoint,
        "panels": [pane_json(p) for p in run.panes],
    }
    original = spec.original
    if original is not None and spec.replay is not None:
        document["replay_of"] = original.id
        document["speed"] = spec.speed
        saved = {p.pane: p for p in original.panes}
        for panel in document["panels"]:
            was = saved.get(panel["panel"])
            if was is not None:  # what was measured live, beside what the replay measured
                panel["recorded"] = {"status": was.status, "metrics": was.metrics}
    elif original is not None:
        document["rerun_of"] = original.id
        deltas = rerun_deltas(comparison_record(spec, run).panes, original.panes,
                              original.id or 0)
        for panel in document["panels"]:
            delta = deltas.get(panel["panel"])
            panel["vs_original"] = delta.to_json() if delta is not None else None
    return document


def _fmt(value: float | None, unit: str, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}{unit}"


_STATUS_STYLE = {"completed": "green", "failed": "red", "cancelled": "yellow"}


def summary_table(run: CompareRun) -> Table:
    """One row per model; a failure's description is below the table (`failure_lines`)."""
    table = Table(title="Summary", title_justify="left", expand=False)
    longest = max((len(p.shown) for p in run.panes), default=5)
    # Models from more than one server: which one each streamed from.
    several = len({p.target for p in run.panes}) > 1 and not run.spec.blind
    columns = [("#", "right"), ("model", "left"), *([("target", "left")] if several else []),
               ("status", "left"), ("TTFT", "right"), ("tok/s", "right"), ("tokens", "right"),
               ("cost", "right")]
    for column, justify in columns:
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    model_column = table.columns[1]  # never shortened: a cut name is a different model
    model_column.no_wrap, model_column.min_width = True, longest
    for pane in run.panes:
        r = pane.result
        if r is None:
            continue
        if r.usage is not None:
            tokens = f"{r.usage.prompt_tokens}→{r.usage.completion_tokens}"
        elif r.failure is not None and r.failure.completion_tokens is not None:
            tokens = f"→{r.failure.completion_tokens} (received)"
        elif r.metrics.chunks:
            # No usage from the server (a stream cut short): what arrived, counted here.
            tokens = f"~{r.metrics.chunks} received"
        else:
            tokens = "—"
        cost = "hidden until the vote" if run.spec.blind else run.cost(pane)
        status = r.status + (" (cache hit)" if r.cache_hit else "")
        if r.cut_at_max_tokens:
            status += " (cut: max tokens)"
        table.add_row(
            str(pane.pane),
            Text(pane.shown),
            *([Text(pane.target)] if several and not run.spec.blind else []),
            Text(status, style=_STATUS_STYLE.get(r.status, "")),
            _fmt(r.metrics.ttft_s, " s"),
            _fmt(r.metrics.output_tokens_per_s, "", 1),
            tokens,
            cost,
        )
    return table


def rerun_table(original: ComparisonRecord, new: ComparisonRecord) -> Table:
    """Per pane, what changed against the comparison it repeats."""
    table = Table(title=f"Against comparison #{original.id}", title_justify="left",
                  expand=False)
    for column, justify in (("#", "right"), ("model", "left"), ("TTFT", "right"),
                            ("tok/s", "right"), ("cost", "right"), ("outcome", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    table.columns[1].no_wrap = True
    for pane, d in rerun_deltas(new.panes, original.panes, original.id or 0).items():
        now = next(p.model for p in new.panes if p.pane == pane)
        model = f"{d.original_model} → {now}" if d.original_model else now
        table.add_row(
            str(pane), Text(model), *d.cells(),
            Text(f"{d.outcome_was} → {d.outcome_now}" if d.was is not None
                 else f"{d.outcome_now} (unchanged)"))
    return table


def failure_lines(run: CompareRun) -> list[str]:
    """`failures:` and one line per failed model, for below the summary table."""
    lines = [f"  {p.pane} {p.shown}: {describe_failure(blind_failure(p)).line}"
             for p in run.panes if p.result is not None and p.result.failure is not None]
    return ["failures:", *lines] if lines else []


def progress_table(run: CompareRun) -> Table:
    table = Table(box=None, show_header=True, expand=True)
    table.add_column("#", width=2, justify="right")
    table.add_column("model", no_wrap=True)
    table.add_column("state", no_wrap=True)
    table.add_column("chunks", justify="right")
    table.add_column("latest text", no_wrap=True, overflow="ellipsis", ratio=1)
    for p in run.panes:
        tail = " ".join(terminal_safe(p.tail).split())[-80:]
        table.add_row(
            str(p.pane),
            Text(p.shown),
            Text(p.state, style=_STATUS_STYLE.get(p.state, "cyan")),
            str(p.chunks),
            Text(tail, style="dim"),
        )
    return table


def answers(run: CompareRun) -> Group:
    parts: list[Any] = []
    for p in run.panes:
        r = p.result
        if r is None:
            continue
        label = "" if r.committed else " [not committed]"
        parts.append(Rule(Text(f"{p.pane} · {p.shown}{label}"), align="left"))
        if r.reasoning:
            # Labelled: in a file, dim italics are gone and the two would run together.
            parts.append(Text("Reasoning:", style="bold"))
            parts.append(Text(terminal_safe(r.reasoning).strip(), style="dim italic"))
            parts.append(Text("Answer:", style="bold"))
        parts.append(Text(terminal_safe(r.text).strip() or "(no text)",
                          style="" if r.committed else "dim"))
    return Group(*parts)


async def run_compare(
    spec: CompareSpec,
    *,
    as_json: bool,
    out: IO[str] | None = None,
    model_info: dict[str, ModelInfo] | None = None,
    history: HistoryStore | None = None,
    target_info: dict[tuple[str, str], ModelInfo] | None = None,
) -> int:
    """Run the comparison and print it; returns the exit status (0: all completed).

    With a `history`, the comparison is saved there once every model has ended.
    """
    out = out or sys.stdout  # looked up now: a caller may have redirected it
    console = Console(file=out, highlight=False, soft_wrap=False)
    err_console = Console(stderr=True, highlight=False)
    live_console = err_console if as_json else console
    live_ok = live_console.is_terminal
    # Into a file or a pipe, text goes as it came: Rich would wrap it at 80 columns,
    # inside sentences and code (a terminal wraps long lines itself).
    as_is = console.soft_wrap = not console.is_terminal

    def milestone(pane: PaneProgress, what: str) -> None:
        if live_ok or as_json:
            return
        if what == "first_token" and pane.result is None:
            console.print(f"[{pane.pane}] {escape(pane.shown)}: streaming")
        elif what == "thinking":
            console.print(f"[{pane.pane}] {escape(pane.shown)}: thinking")
        elif what == "done" and pane.result is not None:
            r = pane.result
            why = f" ({blind_failure(pane).message})" if r.failure else ""
            console.print(f"[{pane.pane}] {escape(pane.shown)}: {r.status}{escape(why)}")

    run = CompareRun(spec, milestone)
    run.model_info = model_info or {}
    run.target_info = target_info or {}
    if not as_json:
        labels = list(dict.fromkeys(c.label() for c in spec.connections))
        where = ", ".join(labels) if len(labels) > 1 else (spec.gateway_label or spec.base_url)
        count = len(spec.models)
        if spec.replay is not None and spec.original is not None:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(spec.original.created_at))
            console.print(f"Replaying comparison #{spec.original.id} (recorded {when}) at "
                          f"{spec.speed:g}×: {count} model{'' if count == 1 else 's'}, "
                          "no network")
        else:
            rerun = f"Rerun of comparison #{spec.original.id}: " if spec.original else ""
            console.print(
                f"{rerun}Comparing {count} model{'' if count == 1 else 's'} via "
                f"{escape(where)} ({spec.endpoint} format)"
            )
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, run.cancel)
    try:
        if live_ok:
            with Live(
                progress_table(run), console=live_console, refresh_per_second=8,
                transient=True, get_renderable=lambda: progress_table(run),
            ):
                await run.run()
        else:
            await run.run()
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)

    history_id = save_to_history(history, spec, run)
    if as_json:
        out.write(json.dumps(compare_json(spec, run, history_id), ensure_ascii=False) + "\n")
        out.flush()
    else:
        console.print(answers(run))
        console.print()
        table = summary_table(run)
        against = rerun_table(spec.original, comparison_record(spec, run)) \
            if spec.original is not None and spec.replay is None else None
        if as_is:  # as wide as it needs: no column of a file's table is ever squeezed
            unbounded = console.options.update_width(10_000)
            console.width = max(console.width, *(
                console.measure(t, options=unbounded).maximum for t in (table, against) if t))
        console.print(table, soft_wrap=False)
        for line in failure_lines(run):
            console.print(Text(line))
        if against is not None:
            console.print()
            console.print(against, soft_wrap=False)
            console.print(Text("(rerun minus original; ▲ better, ▼ worse; est.: both costs "
                               "estimated; — (est. vs reported): one estimated, one "
                               "reported, not compared)", style="dim"))
    return 0 if all(p.result and p.result.status == "completed" for p in run.panes) else 1


def comparison_record(spec: CompareSpec, run: CompareRun) -> ComparisonRecord:
    """The history's record of a finished run (the target is its base URL, never the key),
    with its recordings when recording is on (`within_recording_limit` drops them when
    too big)."""
    def earlier(index: int) -> tuple[tuple[str, str], ...] | None:
        return spec.conversations[index] if index < len(spec.conversations) else None

    panes = tuple(
        pane_record(
            p.pane, p.model, base_url=spec.base_url_for(p.pane - 1),
            endpoint=spec.endpoint_for(p.pane - 1), result=p.result, target=p.target,
            temperature=spec.params_for(p.pane - 1)[0],
            max_tokens=spec.params_for(p.pane - 1)[1],
            cost_text=run.cost(p),
            conversation=earlier(p.pane - 1),
        )
        for p in run.panes if p.result is not None
    )
    if spec.blind:
        panes = tuple(replace(p, label=BLIND_LABELS[p.pane - 1]) for p in panes)
    return ComparisonRecord(
        prompt=spec.prompt, panes=panes, system_prompt=spec.system or "",
        conversation=earlier(0) or (), created_at=time.time(), source="compare",
        blind=spec.blind, rerun_of=spec.original.id if spec.original is not None else None)


def save_to_history(history: HistoryStore | None, spec: CompareSpec,
                    run: CompareRun) -> int | None:
    """Save the run once every model has ended; its id, or None when not saved."""
    if history is None or any(p.result is None for p in run.panes):
        return None
    full = comparison_record(spec, run)
    record, dropped = full.within_recording_limit(spec.record_limit)
    if dropped:
        print(f"anoman-tui compare: saved without its recording: "
              f"{full.recording_bytes / 1e6:.1f} MB of "
              f"streams, over the {(spec.record_limit or 0) / 1e6:g} MB limit "
              "(record_limit_mb)", file=sys.stderr)
    try:
        return history.save(record)
    except HistoryUnavailable as exc:
        print(f"anoman-tui compare: not saved to history: {exc.reason}", file=sys.stderr)
        return None


def open_history(enabled: bool) -> HistoryStore | None:
    """The user's history, or None (with one line on stderr saying why it cannot be used)."""
    if not enabled:
        return None
    try:
        return HistoryStore.open()
    except HistoryUnavailable as exc:
        print(f"anoman-tui compare: history disabled: {exc.reason}", file=sys.stderr)
        return None


def run_compare_with_target(spec: CompareSpec, *, as_json: bool, history: bool = False) -> int:
    """`compare` from the command line: against `spec.base_url`, or the local gateway.

    Without a base URL the local gateway starts in-process on a free loopback
    port with a fresh key; without models, the first three it lists are used.
    With `history`, the comparison is saved to the user's history.
    """
    store = open_history(history)
    try:
        return _run_with_target(spec, as_json, store)
    finally:
        if store is not None:
            store.close()


def _run_with_target(spec: CompareSpec, as_json: bool, store: HistoryStore | None) -> int:
    gateway = None
    wanted = [*spec.targets, *([spec.default_target] if spec.default_target else [])]
    if (not spec.base_url and not wanted) or any(t.is_local for t in wanted):
        from anoman_tui.gateway.embedded import EmbeddedGateway

        gateway = EmbeddedGateway().start()
        if not wanted:
            spec = replace(spec, base_url=gateway.base_url, api_key=gateway.api_key,
                           gateway_label=f"the local gateway ({gateway.base_url})")
    local = (gateway.base_url, gateway.api_key) if gateway is not None else None
    if wanted:
        spec = replace(spec, connections=tuple(connect(t, local=local) for t in spec.targets))
        default = connect(spec.default_target, local=local) if spec.default_target else None
        if default is not None:
            spec = replace(spec, base_url=default.base_url,
                           api_key=default.api_key.get_secret_value(),
                           gateway_label=default.label())
    try:
        return asyncio.run(_compare_main(spec, as_json, store))
    finally:
        if gateway is not None:
            gateway.stop()


async def _compare_main(spec: CompareSpec, as_json: bool, store: HistoryStore | None) -> int:
    # The model lists also carry prices: without an Anoman block, cost is estimated
    # from them (as on the compare screen). Needed only to pick models when none given.
    listed: list[ModelInfo] = []
    by_target: dict[tuple[str, str], ModelInfo] = {}
    default = connect(spec.default_target, local=(spec.base_url, spec.api_key)) \
        if spec.default_target is not None else None
    async with StreamClient() as client:
        try:
            if default is not None:
                base_url, key, headers, path = default.list_models_args()
                listed = await client.list_models(base_url, key, (*headers, *spec.headers),
                                                  path)
            else:
                listed = await client.list_models(spec.base_url, spec.api_key, spec.headers)
        except GatewayRequestError as exc:
            if not spec.models:
                print(f"anoman-tui compare: cannot list models: {exc}", file=sys.stderr)
                return 1
        for connection in {c.name: c for c in spec.connections}.values():
            if default is not None and connection.name == default.name:
                models = listed
            else:
                base_url, key, headers, path = connection.list_models_args()
                try:
                    models = await client.list_models(base_url, key, headers, path)
                except GatewayRequestError:
                    continue  # prices only: a target without a model list still streams
            by_target.update({(connection.name, m.id): m for m in models})
    if not spec.models:
        if not listed:
            print("anoman-tui compare: the gateway lists no models; pass --model",
                  file=sys.stderr)
            return 1
        # A blind round draws three at random (shuffled); otherwise the first three.
        chosen = (random.sample([m.id for m in listed], min(3, len(listed))) if spec.blind
                  else [m.id for m in listed[:3]])
        if spec.blind and len(chosen) < 2:
            print("anoman-tui compare: a blind round needs at least two models; the target "
                  "lists fewer", file=sys.stderr)
            return 2
        spec = replace(spec, models=chosen)
        if default is not None:
            spec = replace(spec, targets=(default.target,) * len(chosen),
                           connections=(default,) * len(chosen))
    return await run_compare(spec, as_json=as_json, model_info={m.id: m for m in listed},
                             history=store, target_info=by_target)


# -- replay and rerun -----------------------------------------------------------


def load_saved(comparison_id: int, prog: str, *, recordings: bool
               ) -> tuple[ComparisonRecord, dict[int, StreamRecording]] | int:
    """A comparison from the user's history (and its recordings), or the exit status
    after one line on stderr: 2 for one that cannot be used, 1 when the history cannot
    be read."""
    from anoman_tui.history import default_path
    from anoman_tui.streaming.recording import RecordingError

    path = default_path()
    record = None
    found: dict[int, StreamRecording] = {}
    if path.exists():
        try:
            with HistoryStore.open(path) as store:
                record = store.get(comparison_id)
                if record is not None and recordings and not record.hidden:
                    found = store.recordings(comparison_id)
        except HistoryUnavailable as exc:
            print(f"{prog}: {exc.reason}", file=sys.stderr)
            return 1
        except RecordingError as exc:
            print(f"{prog}: comparison {comparison_id}'s recording cannot be replayed: "
                  f"{exc.reason}", file=sys.stderr)
            return 2
    if record is None:
        print(f"{prog}: no comparison {comparison_id} in the history ({path}); "
              "`anoman-tui history` lists the ids", file=sys.stderr)
        return 2
    if record.hidden:
        print(f"{prog}: comparison {comparison_id} is a blind round not voted on yet: vote "
              f"first (anoman-tui vote {comparison_id} A|B|C|tie|bad)", file=sys.stderr)
        return 2
    if recordings:
        missing = [p.pane for p in record.panes if p.pane not in found]
        if len(missing) == len(record.panes):
            print(f"{prog}: comparison {comparison_id} was not recorded (recording was off, "
                  "its streams were over record_limit_mb, or it was saved before recording "
                  "existed)", file=sys.stderr)
            return 2
        if missing or [p.pane for p in record.panes] != list(range(1, len(record.panes) + 1)):
            print(f"{prog}: comparison {comparison_id} is not recorded whole (no recording "
                  f"of pane {', '.join(map(str, missing)) or '?'})", file=sys.stderr)
            return 2
    return record, found


def _earlier(record: ComparisonRecord) -> tuple[tuple[tuple[str, str], ...], ...]:
    return tuple(p.conversation if p.conversation is not None else record.conversation
                 for p in record.panes)


def replay_spec(record: ComparisonRecord, recordings: dict[int, StreamRecording], *,
                speed: float, idle_timeout: float) -> CompareSpec:
    """`compare --replay`: the saved comparison's requests, answered by its recordings."""
    return CompareSpec(
        prompt=record.prompt,
        models=[p.model for p in record.panes],
        base_url=REPLAY_BASE_URL,
        api_key="",
        endpoint=recordings[record.panes[0].pane].endpoint,
        system=record.system_prompt or None,
        idle_timeout=idle_timeout,
        pane_params=tuple((recordings[p.pane].endpoint, p.temperature, p.max_tokens)
                          for p in record.panes),
        conversations=_earlier(record),
        original=record,
        replay=recordings,
        speed=speed,
    )


def rerun_spec(record: ComparisonRecord, spec: CompareSpec) -> CompareSpec:
    """`compare --rerun`: `spec` (models, targets, settings) sending the saved
    comparison's prompt, system prompt and each pane's conversation again."""
    return replace(spec, prompt=record.prompt, system=record.system_prompt or None,
                   conversations=_earlier(record), original=record,
                   # Measured again, not answered from a gateway's cache.
                   headers=(*spec.headers, ("Cache-Control", "no-cache")))


def run_replay(spec: CompareSpec, *, as_json: bool) -> int:
    """Replay offline: no gateway, no key, nothing saved."""
    return asyncio.run(run_compare(spec, as_json=as_json))
