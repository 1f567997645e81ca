"""What `compare` was asked to do: the prompt and shared settings, and one spec per pane.

Plain data (no I/O). Imports the stream core's types, the history's record and the
targets; never Rich or Textual.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from anoman_tui.history import ComparisonRecord
from anoman_tui.streaming import EndpointFormat
from anoman_tui.streaming.recording import StreamRecording
from anoman_tui.targets import Connection, Target

BLIND_LABELS = ("A", "B", "C")

REPLAY_BASE_URL = "http://replay.invalid"
"""Where a replay's requests claim to go: nowhere (`.invalid` never resolves); the
replay transport answers them."""

Conversation = tuple[tuple[str, str], ...]
"""(role, content) turns, oldest first."""


@dataclass(frozen=True)
class PaneSpec:
    """One model of a comparison: what is sent to it and where it streams from."""

    model: str
    endpoint: EndpointFormat = "openai"
    """Its endpoint format (a `[[panes]]` table may give each pane its own)."""
    temperature: float | None = None
    """None: not sent."""
    max_tokens: int | None = None
    """None: not sent (the anthropic format sends 4096)."""
    target: Target | None = None
    """Where it streams from (None: the comparison's `base_url` with its key)."""
    connection: Connection | None = None
    """`target` resolved (the local gateway started, the key read): set by
    `run_compare_with_target`; its key stays out of the repr."""
    conversation: Conversation | None = None
    """The turns sent before the prompt (a rerun's or a replay's); None: none."""

    @property
    def target_name(self) -> str:
        return self.target.name if self.target is not None else ""


@dataclass(frozen=True)
class CompareSpec:
    """Everything `compare` was asked to do; the key stays out of every repr."""

    prompt: str
    panes: tuple[PaneSpec, ...]
    """One per model, in pane order (empty: the first three the default target lists,
    or three drawn from them for a blind round)."""
    base_url: str
    """The gateway that lists the models when no `default_target` is given, and that a
    pane without a target streams from ("": start the local gateway)."""
    api_key: str = field(repr=False)
    endpoint: EndpointFormat = "openai"
    """The format asked for; each pane's own is `PaneSpec.endpoint`."""
    system: str | None = None
    max_tokens: int | None = None
    """For models picked from the default target's list (a given pane has its own)."""
    temperature: float | None = None
    """For models picked from the default target's list (a given pane has its own)."""
    idle_timeout: float = 60.0
    headers: tuple[tuple[str, str], ...] = ()
    gateway_label: str = ""
    default_target: Target | None = None
    """Where the models come from when none are given (None: `base_url`)."""
    blind: bool = False
    """A blind arena round: output names the models A, B, C only (`BLIND_LABELS`)."""
    never_draw: frozenset[str] = frozenset()
    """Models of the default target a blind round never draws (the arena's judge)."""
    record_limit: int | None = None
    """Record the streams for replay, kept when they total at most this many bytes
    (None: not recorded)."""
    original: ComparisonRecord | None = None
    """The saved comparison this run repeats (`--rerun`) or replays (`--replay`)."""
    replay: dict[int, StreamRecording] | None = None
    """Pane number -> recording: streamed from these, not from any server."""
    speed: float = 1.0
    """A replay's pace: 2 plays twice as fast as recorded."""

    def base_url_of(self, pane: PaneSpec) -> str:
        """Where `pane`'s requests go: its target's, else the comparison's gateway."""
        return pane.connection.base_url if pane.connection is not None else self.base_url

    @property
    def connections(self) -> tuple[Connection, ...]:
        """The panes' resolved targets, in pane order (panes without one left out)."""
        return tuple(p.connection for p in self.panes if p.connection is not None)


def _earlier(record: ComparisonRecord) -> tuple[Conversation, ...]:
    return tuple(p.conversation if p.conversation is not None else record.conversation
                 for p in record.panes)


def replay_spec(record: ComparisonRecord, recordings: dict[int, StreamRecording], *,
                speed: float, idle_timeout: float) -> CompareSpec:
    """`compare --replay`: the saved comparison's requests, answered by its recordings."""
    return CompareSpec(
        prompt=record.prompt,
        panes=tuple(PaneSpec(model=p.model, endpoint=recordings[p.pane].endpoint,
                             temperature=p.temperature, max_tokens=p.max_tokens,
                             conversation=earlier)
                    for p, earlier in zip(record.panes, _earlier(record), strict=True)),
        base_url=REPLAY_BASE_URL,
        api_key="",
        endpoint=recordings[record.panes[0].pane].endpoint,
        system=record.system_prompt or None,
        idle_timeout=idle_timeout,
        original=record,
        replay=recordings,
        speed=speed,
    )


def rerun_spec(record: ComparisonRecord, spec: CompareSpec) -> CompareSpec:
    """`compare --rerun`: `spec` (models, targets, settings) sending the saved
    comparison's prompt, system prompt and each pane's conversation again."""
    earlier = _earlier(record)
    panes = tuple(replace(p, conversation=earlier[i]) if i < len(earlier) else p
                  for i, p in enumerate(spec.panes))
    return replace(spec, prompt=record.prompt, system=record.system_prompt or None,
                   panes=panes, original=record,
                   # Measured again, not answered from a gateway's cache.
                   headers=(*spec.headers, ("Cache-Control", "no-cache")))
