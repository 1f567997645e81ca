"""One comparison turn as it ended, in plain data: what history stores and reports show.

Everything here is what a reader may see later: never an API key (a target is its
base URL only). Text is stored exactly as the model sent it; escaping is the job of
whoever writes it out (`anoman_tui.report`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from anoman_tui.streaming import StreamFailure, StreamMetrics, StreamResult
from anoman_tui.streaming.cost import HIDDEN, UNKNOWN, Cost
from anoman_tui.streaming.recording import StreamRecording


@dataclass(frozen=True, slots=True)
class PaneRecord:
    """One pane (or one model of `compare`) of a comparison turn, as it ended."""

    pane: int
    """1-based, as shown."""
    model: str
    base_url: str
    """Where the request went: the target's base URL, never its key."""
    endpoint: str
    """The endpoint format: openai, anthropic or playground."""
    temperature: float | None = None
    max_tokens: int | None = None
    scenario: str = "none"
    """The local gateway's demo scenario the request carried ("none" for a real one)."""
    status: str = "completed"
    """completed | failed | cancelled."""
    committed: bool = True
    text: str = ""
    reasoning: str = ""
    finish_reason: str | None = None
    failure: dict[str, Any] | None = None
    """`StreamFailure.to_json()`: kind, status, message, ..."""
    usage: dict[str, Any] | None = None
    """prompt_tokens, completion_tokens, total_tokens."""
    anoman: dict[str, Any] | None = None
    """The gateway's `_anoman` block exactly as sent."""
    metrics: dict[str, Any] = field(default_factory=dict)
    """`StreamMetrics.to_json()`: ttft_s, e2e_s, output_tokens_per_s, chunks."""
    rate_series: tuple[float, ...] = ()
    """Tokens/s per 250 ms cell, oldest first: what the pane's sparkline drew."""
    cost: Cost = UNKNOWN
    """What the answer cost and where that came from (the gateway, the provider, an
    estimate), or unknown: a value, formatted only where it is shown (`Cost.shown`)."""
    provider_cost: Decimal | None = None
    """The server's own figure for the answer (LiteLLM's and OpenRouter's `usage.cost`),
    kept even when the gateway's block is the cost shown."""
    simulated: bool = False
    """The server said the model is simulated (the local gateway's `anoman.simulated`):
    every view and export of the answer says so."""
    conversation: tuple[tuple[str, str], ...] | None = None
    """(role, content) turns this pane had sent before this prompt: each model answered
    the earlier prompts its own way. None when not recorded (then the comparison's)."""
    target: str = ""
    """The target's name (`local`, `openai`, a config file's): "" when not recorded."""
    label: str = ""
    """In a blind round, the only name shown until the vote: `A`, `B`, `C`."""
    recording: StreamRecording | None = field(default=None, compare=False, repr=False)
    """The stream byte-exact with its timing, to be replayed (None: not recorded). Kept
    apart in the store: `HistoryStore.get` leaves it None, `recordings()` reads them."""

    @property
    def cost_text(self) -> str:
        """The cost as every view writes it (`Cost.shown`)."""
        return self.cost.shown()


@dataclass(frozen=True, slots=True)
class ComparisonRecord:
    """A comparison turn: one prompt sent to every pane at once, and how each ended."""

    prompt: str
    panes: tuple[PaneRecord, ...]
    system_prompt: str = ""
    conversation: tuple[tuple[str, str], ...] = ()
    """(role, content) turns sent before this prompt (the first pane's, for one list)."""
    created_at: float = 0.0
    """Unix time the turn was saved."""
    source: str = "app"
    """Which command made it: app | compare."""
    id: int | None = None
    """The history's id once saved."""
    blind: bool = False
    """A blind arena round: its panes are `A`, `B`, `C` until it is voted on."""
    vote: VoteRecord | None = None
    """The vote cast on it, if any."""
    rerun_of: int | None = None
    """The history id of the comparison whose prompt it sent again, if it is a rerun."""
    recorded: bool = False
    """Its streams were recorded (`HistoryStore.recordings` replays them)."""
    suite_run: str | None = None
    """The suite run (`anoman-tui eval`) it holds one (case, repeat) of, if any; not
    carried by the portable export (an imported copy is a comparison of its own)."""
    suite_case: str | None = None
    """That case's id in its suite."""
    suite_repeat: int | None = None
    """That repeat (1-based)."""
    user: str = ""
    """Who ran it (the `user` setting, by default the login name); "" for one saved
    before authors were kept (schema 12) or with no author given."""
    uid: str | None = field(default=None, compare=False)
    """Its id across copies of the history (an export carries it; importing or migrating
    it twice is recognised); read from the history, never chosen by a saver (`save`
    makes a fresh one). Not part of equality: it says where a record is, not what."""

    @property
    def recording_bytes(self) -> int:
        """The bytes of its panes' recordings as they came off the socket."""
        return sum(len(p.recording.body) for p in self.panes if p.recording is not None)

    def without_recordings(self) -> ComparisonRecord:
        return replace(self, panes=tuple(replace(p, recording=None) for p in self.panes),
                       recorded=False)

    def within_recording_limit(self, limit_bytes: int | None) -> tuple[ComparisonRecord, bool]:
        """Itself, or without its recordings when they hold more than `limit_bytes`
        (None: recording is off); and whether recordings were dropped for their size."""
        if not any(p.recording is not None for p in self.panes):
            return self, False
        if limit_bytes is None:
            return self.without_recordings(), False
        if self.recording_bytes > limit_bytes:
            return self.without_recordings(), True
        return self, False

    @property
    def hidden(self) -> bool:
        """A blind round not voted on yet: no model may be shown."""
        return self.blind and self.vote is None

    def masked(self) -> ComparisonRecord:
        """What may be shown of it while `hidden`: every pane named by its label only,
        with nothing else that identifies its model (target, URL, the Anoman block and
        the cost, which can be unique to one model). Itself when not hidden."""
        if not self.hidden:
            return self
        return replace(self, panes=tuple(
            replace(p, model=p.label or f"pane {p.pane}", base_url="", target="",
                    anoman=None, cost=HIDDEN, provider_cost=None, recording=None,
                    failure=_masked_failure(p.failure, p.model, p.label))
            for p in self.panes))


@dataclass(frozen=True, slots=True)
class VoteRecord:
    """A vote on a comparison: blind (an arena round) or sighted (names on screen)."""

    blind: bool
    outcome: str
    """win | tie | bad (every answer bad)."""
    winner_pane: int | None
    """The winning pane's number for `win`, else None."""
    voted_at: float
    user: str = ""
    """Who voted (the `user` setting); "" when not known."""


@dataclass(frozen=True, slots=True)
class VotedRound:
    """A kind of voted round as the scoreboard reads it, with how many there were."""

    models: tuple[str, ...]
    failed: frozenset[str]
    """Models whose pane did not complete (a failed pane cannot win)."""
    outcome: str
    """win | tie | bad."""
    winner: str | None
    blind: bool
    judge_outcome: str | None = None
    """The arena judge's verdict on the round: win | tie; None when it has none."""
    judge_winner: str | None = None
    """The judge's best model for a "win"."""
    count: int = 1
    left_out: tuple[tuple[str, str], ...] = ()
    """(model, reason) of the panes whose answer was not the model's doing
    (`left_out_reason`): the scoreboard takes them out of the round."""


LEFT_OUT_REASONS = ("scenario", "request", "cache_hit")
"""Why a pane's answer is not its model's doing (`left_out_reason`), in that order."""


def left_out_reason(pane: PaneRecord) -> str | None:
    """Why this answer says nothing of its model's speed or failures, or None.

    "scenario": the request carried a demo scenario (`X-Anoman-Simulate`: a fault or a
    pace asked for); "request": refused before streaming for the request itself, a 4xx
    other than 408 (the server's timeout) and 429 (its rate limit), e.g. a 400 for an
    invalid parameter, a 401 for a wrong key, a 404 for a model that does not exist;
    "cache_hit": the gateway answered from its cache (a complete answer, but an earlier
    one, and the cache's speed). The scoreboard leaves the first two out of failure rates
    and speed figures, and cache hits out of speed figures."""
    if pane.scenario not in ("", "none"):
        return "scenario"
    failure = pane.failure
    if isinstance(failure, dict) and failure.get("kind") == "http_error":
        status = failure.get("status")
        if isinstance(status, int) and 400 <= status < 500 and status not in (408, 429):
            return "request"
    cache = pane.anoman.get("cache") if isinstance(pane.anoman, dict) else None
    if isinstance(cache, dict) and cache.get("hit") is True:
        return "cache_hit"
    return None


@dataclass(frozen=True, slots=True)
class LeftOut:
    """What the scoreboard's figures leave out, by reason (`LEFT_OUT_REASONS`)."""

    rounds: dict[str, int] = field(default_factory=dict)
    """Comparisons with at least one pane left out for that reason."""
    answers: dict[str, int] = field(default_factory=dict)
    """Panes left out for that reason."""


@dataclass(frozen=True)
class RoundJudgement:
    """The arena judge's verdict on one voted blind round, as stored with the round.

    `outcome` is "win" (`best` names the model that won every one of its pairs after
    the position swap), "tie" (no single model did), or "none" (no verdict: the judge
    failed on a pair; `data["errors"]` says why). `data` is the verdict as JSON
    (`anoman_tui.judging.rounds.RoundVerdict.to_json`): each pair in both orders,
    calls, errors, cost.
    """

    comparison_id: int
    judge: str
    outcome: str
    best: str | None
    data: dict[str, Any]
    judged_at: float


@dataclass(slots=True)
class ModelNumbers:
    """What the history knows of one model over all its answers."""

    answers: int = 0
    percentiles: dict[tuple[str, float], float] = field(default_factory=dict)
    """(column, q) -> the q-th percentile: ("ttft_s", 50.0), ("tokens_per_s", 95.0)..."""
    mean_cost: float | None = None
    """Dollars per answer, as shown (reported or estimated), over those with a cost."""
    simulated_answers: int = 0
    """How many of its answers came from a simulated model (the local gateway's)."""
    failures: dict[str, int] = field(default_factory=dict)
    """By failure kind: http_error (refused before streaming), stream_error, truncated,
    stalled, protocol_error, transport_error, cancelled."""


def _masked_failure(failure: dict[str, Any] | None, model: str, label: str
                    ) -> dict[str, Any] | None:
    # A server's message may name the model ("model X not found"): say the label instead.
    if failure is None or not model:
        return failure
    return {k: (v.replace(model, label or "the model") if isinstance(v, str) else v)
            for k, v in failure.items()}


def _metrics(result: StreamResult) -> dict[str, Any]:
    metrics = result.metrics.to_json()
    rate = result.metrics.output_tokens_per_s
    if rate is not None:
        # To 4 places, not 2: a reopened footer rounds it to 1 place exactly as the live
        # one did (1428.1549 read back as 1428.15 would show 1428.1, not 1428.2).
        metrics["output_tokens_per_s"] = round(rate, 4)
    return metrics


def pane_record(
    pane: int,
    model: str,
    *,
    base_url: str,
    endpoint: str,
    result: StreamResult,
    temperature: float | None = None,
    max_tokens: int | None = None,
    scenario: str = "none",
    rate_series: tuple[float, ...] = (),
    cost: Cost = UNKNOWN,
    conversation: tuple[tuple[str, str], ...] | None = None,
    target: str = "",
    simulated: bool = False,
    label: str = "",
) -> PaneRecord:
    """The record of one pane from its stream's result."""
    usage = result.usage
    return PaneRecord(
        pane=pane,
        model=model,
        base_url=base_url,
        endpoint=endpoint,
        temperature=temperature,
        max_tokens=max_tokens,
        scenario=scenario,
        status=result.status,
        committed=result.committed,
        text=result.text,
        reasoning=result.reasoning,
        finish_reason=result.finish_reason,
        # With `detail` (what the server said, key-free): the badge is drawn again from it.
        failure={**result.failure.to_json(), "detail": result.failure.detail}
        if result.failure else None,
        usage=usage.model_dump(include={"prompt_tokens", "completion_tokens", "total_tokens"})
        if usage is not None else None,
        anoman=result.anoman_raw,
        metrics=_metrics(result),
        rate_series=rate_series,
        cost=cost,
        provider_cost=result.provider_cost,
        simulated=simulated,
        conversation=conversation,
        target=target,
        label=label,
        recording=result.recording,
    )


@dataclass(frozen=True, slots=True)
class ListedPane:
    """What a list of comparisons shows of a pane: its model, outcome and cost."""

    pane: int
    model: str
    status: str
    cost: Cost
    simulated: bool = False

    @property
    def cost_text(self) -> str:
        return self.cost.shown()


@dataclass(frozen=True, slots=True)
class ListedComparison:
    """What a list of comparisons shows of one (`HistoryStore.listing`): no answers."""

    id: int
    created_at: float
    prompt: str
    follow_up: bool
    """It continued a conversation (earlier turns were sent before its prompt)."""
    panes: tuple[ListedPane, ...]
    blind: bool = False
    hidden: bool = False
    """A blind round not voted on yet: `panes` carry labels, not models."""
    recorded: bool = False
    """Its streams were recorded: it can be replayed."""
    suite_run: str | None = None
    """The suite run it holds one (case, repeat) of, if any (`ComparisonRecord`)."""
    suite_case: str | None = None
    suite_repeat: int | None = None
    user: str = ""
    """Who ran it (`ComparisonRecord.user`)."""


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def result_from_record(pane: PaneRecord) -> StreamResult:
    """The stream result a saved pane ended with, for drawing it again as it ended.

    The stored JSON is read defensively (a file may have been edited): a usage or
    `_anoman` block of a shape the wire models refuse reads as absent.
    """
    # Imported here: the wire models import pydantic, which listing and summing suite
    # runs (`runs show`) never needs.
    from pydantic import ValidationError

    from anoman_tui.wire import AnomanBlock, Usage

    usage = anoman = None
    if isinstance(pane.usage, dict):
        try:
            usage = Usage.model_validate(pane.usage)
        except ValidationError:
            usage = None
    if isinstance(pane.anoman, dict):
        try:
            anoman = AnomanBlock.model_validate(pane.anoman)
        except ValidationError:
            anoman = None
    metrics = pane.metrics if isinstance(pane.metrics, dict) else {}
    chunks = metrics.get("chunks")
    status = pane.status if pane.status in ("completed", "failed", "cancelled") else "failed"
    return StreamResult(
        status=status,  # type: ignore[arg-type]  # checked against ResultStatus above
        text=pane.text,
        reasoning=pane.reasoning,
        failure=StreamFailure.from_json(pane.failure),
        usage=usage,
        anoman=anoman,
        anoman_raw=pane.anoman if isinstance(pane.anoman, dict) else None,
        metrics=StreamMetrics(
            ttft_s=_float(metrics.get("ttft_s")),
            e2e_s=_float(metrics.get("e2e_s")),
            output_tokens_per_s=_float(metrics.get("output_tokens_per_s")),
            chunks=chunks if isinstance(chunks, int) and not isinstance(chunks, bool) else 0,
        ),
        finish_reason=pane.finish_reason,
        cache_hit=bool(anoman is not None and anoman.cache_hit),
        provider_cost=pane.provider_cost,
    )
