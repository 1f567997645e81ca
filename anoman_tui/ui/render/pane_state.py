"""What one pane is and has done: its model, format, parameters, scenario and history.

Pure data, no Textual: a `PaneDeck` owns one `PaneState` a pane and the
pane widgets draw them. Only committed answers enter a pane's history, so a
follow-up prompt continues each pane's own conversation without the partial
output of a failed or cancelled stream (docs/wire-contract.md §3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from anoman_tui.streaming import EndpointFormat, ResultStatus, StreamResult
from anoman_tui.suites.scenarios import SCENARIO_HEADERS, Scenario
from anoman_tui.targets import BUILT_IN, LOCAL, Connection, Target, stream_request

if TYPE_CHECKING:
    # pydantic models, imported with the first request (not before the first paint).
    from anoman_tui.streaming import ChatTurn, StreamRequest

PaneStatus = Literal["idle", "waiting", "streaming", "done", "failed", "cancelled"]

# Each label says what the scenario simulates: the gateway misbehaves on purpose, whatever
# the prompt says.
SCENARIO_LABELS: dict[Scenario, str] = {
    "none": "none: a normal answer",
    "interrupt": "simulate an interruption: error frame after 40 tokens",
    "drop": "simulate a dropped connection after 40 tokens",
    "stall": "simulate a stall: no bytes after 30 tokens",
    "malformed": "simulate a malformed frame after 25 tokens",
    "guardrail": "simulate a guardrail block (403), whatever the prompt",
    "rate_limit": "simulate a rate limit: 429 with Retry-After",
    "slow_thinking": "simulate a slow model: 4 s to first token, 12 tok/s",
}
# Short names for the pane header.
SCENARIO_SHORT: dict[Scenario, str] = {
    "none": "none", "interrupt": "interruption", "drop": "dropped connection",
    "stall": "stall", "malformed": "malformed frame", "guardrail": "guardrail block",
    "rate_limit": "rate limit", "slow_thinking": "slow model",
}


def _short(scenario: str) -> str:
    # Tools may register scenarios of their own in SCENARIO_HEADERS (benchmarks do).
    for name, short in SCENARIO_SHORT.items():
        if name == scenario:
            return short
    return scenario


# The picker's option ids: "interrupt" arms the scenario for the next prompt only,
# "interrupt+pinned" keeps it for every prompt until changed.
PINNED_SUFFIX = "+pinned"


def scenario_choices() -> list[tuple[str, str]]:
    """The picker's options: each scenario once for the next prompt, once pinned."""
    choices: list[tuple[str, str]] = [("none", SCENARIO_LABELS["none"])]
    for name, label in SCENARIO_LABELS.items():
        if name != "none":
            choices.append((name, f"{label} · once"))
    for name, label in SCENARIO_LABELS.items():
        if name != "none":
            choices.append((name + PINNED_SUFFIX, f"{label} · pinned"))
    return choices


# A stalled demo should not make the audience wait the default 60 s.
SCENARIO_IDLE_TIMEOUT: dict[Scenario, float] = {"stall": 5.0}


@dataclass
class PaneParams:
    temperature: float | None = None
    max_tokens: int | None = None

    def describe(self) -> str:
        temp = "default" if self.temperature is None else f"{self.temperature:g}"
        tokens = "default" if self.max_tokens is None else str(self.max_tokens)
        return f"temperature {temp} · max tokens {tokens}"


OUTCOME_STATUS: dict[ResultStatus, PaneStatus] = {
    "completed": "done", "failed": "failed", "cancelled": "cancelled",
}


@dataclass
class PaneState:
    """One pane's data; `status` is the one place the pane's status is kept."""

    index: int  # 1-based, as shown
    model: str = ""
    target: Target = field(default_factory=lambda: BUILT_IN[LOCAL])
    """Where the pane streams from: its URL, key, paths (`anoman_tui.targets`)."""
    label: str = ""
    """In a blind arena round, the pane's only name (`A`, `B`, `C`) until the vote: the
    model, its target and whatever would tell them apart stay hidden. "" otherwise."""

    tag: str = ""
    """Shown in the header instead of the pane's number (a revealed arena round keeps
    its label there)."""

    @property
    def shown_name(self) -> str:
        """What the screen calls the pane's model: its label while blind."""
        return self.label or self.model
    endpoint: EndpointFormat = "openai"
    params: PaneParams = field(default_factory=PaneParams)
    # The demo scenario for the next request. One-shot: the request it applies to clears
    # it (so Ctrl+R retries for real) unless `scenario_pinned`.
    scenario: Scenario = "none"
    scenario_pinned: bool = False
    # The scenario the latest request carried, so the pane can say its outcome was simulated.
    applied_scenario: Scenario = "none"
    simulated: bool = False
    """The pane's model is simulated: its target's model list says so (the local
    gateway's `anoman.simulated`), or the saved turn shown was. False when unknown."""
    status: PaneStatus = "idle"
    history: list[ChatTurn] = field(default_factory=list)
    last_prompt: str | None = None
    last_result: StreamResult | None = None

    @property
    def running(self) -> bool:
        return self.status in ("waiting", "streaming")

    @property
    def retryable(self) -> bool:
        return self.status in ("failed", "cancelled") and self.last_prompt is not None

    def set_scenario(self, choice: str) -> None:
        """Arm a picker choice: `name` for the next request, `name+pinned` for every one."""
        name = choice.removesuffix(PINNED_SUFFIX)
        if name not in SCENARIO_HEADERS:
            raise ValueError(f"unknown scenario {choice!r}")
        self.scenario = name
        self.scenario_pinned = choice.endswith(PINNED_SUFFIX) and name != "none"

    @property
    def scenario_choice(self) -> str:
        """The picker option id of the armed scenario."""
        pinned = self.scenario_pinned and self.scenario != "none"
        return self.scenario + (PINNED_SUFFIX if pinned else "")

    def scenario_note(self, running: bool, *, short: bool = False) -> str:
        """What the header says about scenarios: armed, pinned, or what the last result was
        (`short`: in fewer words, for a narrow pane)."""
        if self.scenario != "none":
            when = "pinned" if self.scenario_pinned else "next" if short else "next prompt"
            doing = "sim." if short else "simulating"
            return f"{doing} {_short(self.scenario)} ({when})"
        if self.applied_scenario != "none" and (running or self.last_result is not None):
            return f"simulated {_short(self.applied_scenario)}"
        return ""

    def build_request(
        self,
        prompt: str,
        *,
        connection: Connection,
        system: str | None,
        idle_timeout: float,
        bypass_cache: bool,
        compare_id: str,
        record: bool = False,
    ) -> StreamRequest:
        from anoman_tui.streaming import ChatTurn

        # Demo scenarios are the local gateway's: another server would not know them.
        scenario: Scenario = self.scenario if connection.target.is_local else "none"
        idle_timeout = min(idle_timeout, SCENARIO_IDLE_TIMEOUT.get(scenario, idle_timeout))
        self.applied_scenario = scenario
        if scenario != "none" and not self.scenario_pinned:
            self.scenario = "none"
        return stream_request(
            connection, connection.target.default_endpoint(self.endpoint), self.model,
            (*self.history, ChatTurn(role="user", content=prompt)),
            system=system or None, temperature=self.params.temperature,
            max_tokens=self.params.max_tokens,
            headers=(("Cache-Control", "no-cache"),) if bypass_cache else (),
            simulate=SCENARIO_HEADERS[scenario], idle_timeout=idle_timeout, record=record,
            compare_id=compare_id, pane=self.index)

    def record(self, prompt: str, result: StreamResult) -> None:
        """Remember how the turn ended; only a committed answer joins the conversation."""
        self.last_prompt = prompt
        self.last_result = result
        self.status = OUTCOME_STATUS[result.status]
        if result.committed:
            from anoman_tui.streaming import ChatTurn

            self.history.append(ChatTurn(role="user", content=prompt))
            self.history.append(ChatTurn(role="assistant", content=result.text))

    def reset(self) -> None:
        self.history.clear()
        self.applied_scenario = "none"
        self.status = "idle"
        self.last_prompt = None
        self.last_result = None


def answered_pairs(turns: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """(prompt, answer) pairs of a conversation of alternating user/assistant turns: the
    turns a pane shows above its latest one."""
    pairs = []
    prompt: str | None = None
    for role, content in turns:
        if role == "user":
            prompt = content
        elif role == "assistant" and prompt is not None:
            pairs.append((prompt, content))
            prompt = None
    return tuple(pairs)


def simulated_field(panes: list[PaneState]) -> tuple[str, str, bool] | None:
    """The status line's word on simulated models: which panes' answers are simulated;
    in a blind round (labels) only that some are, unless all are, so it names none."""
    drawn = [p for p in panes if p.model]
    simulated = [p for p in drawn if p.simulated]
    if not simulated:
        return None
    if len(simulated) == len(drawn):
        return ("", "simulated models: not real answers", True)
    if any(p.label for p in drawn):
        return ("", "some answers simulated (which: after the vote)", True)
    names = ", ".join(str(p.index) for p in simulated)
    return ("", f"simulated: pane{'s' if len(simulated) > 1 else ''} {names}", True)
