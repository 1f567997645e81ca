"""The blind arena: three models drawn at random, shown as A, B and C until the vote.

A round draws three distinct models from the pool (the config's `arena.pool`, else
every model the default target lists), shuffles them into the panes and names the
panes A, B, C only: headers, tabs, footers (cost and weighted tokens, which can be
unique to a model), badges, marks (no "cheapest"), exports and the history all hide
the models until the vote. TTFT, tokens/s and token counts stay visible. Every request
carries `Cache-Control: no-cache`: a model drawn again answers afresh, never with the
text revealed a round earlier; a pane a server answers from its cache anyway is withheld
(the pane shows no text and no mark) and cannot win.

Once every pane has ended: A, B, C vote for a pane, T for a tie, X for "all bad", in
either case (a failed or withheld pane cannot win; a round with no answer to vote on
asks for no vote); the prompt box is locked meanwhile and takes no text. The vote is
stored with the round in the history, marked blind, and the names are revealed in
place with each pane's cost. With `[arena] judge` set, the judge then gives its verdict
on the round (every pair in both orders, docs/judges.md): shown on the status line
beside the vote and kept with the round; it never runs before the vote. Ctrl+N starts
the next round with a new draw and the same prompt; typing a new prompt starts it with
that one. Esc leaves the arena when nothing streams.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Literal

from textual import on
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input

from anoman_tui.streaming import GatewayRequestError
from anoman_tui.targets import Target, split_model
from anoman_tui.ui.messages import PaneStatusChanged, PromptSubmitted
from anoman_tui.ui.palette import ScreenCommands
from anoman_tui.ui.render.pane_state import PaneParams, PaneState, simulated_field
from anoman_tui.ui.screens.compare import CompareScreen, save_turn, turn_record, write_vote
from anoman_tui.ui.screens.deck_keys import (
    ABORT_KEYS,
    COPY_KEY,
    DIFF_KEY,
    EXPORT_KEY,
    NEXT_PANE_KEY,
    SCROLL_KEYS,
    ZOOM_KEY,
    DeckKeys,
)
from anoman_tui.ui.screens.prompting import TypedPrompts, live_sources, prompt_area
from anoman_tui.ui.services import AppServices, app_services
from anoman_tui.ui.textual_internals import draw_dirty_lines_only
from anoman_tui.ui.widgets.deck import PaneDeck
from anoman_tui.ui.widgets.key_bar import KeyBar
from anoman_tui.ui.widgets.prompt_box import PromptBox
from anoman_tui.ui.widgets.status_line import APP_BADGE, StatusLine

if TYPE_CHECKING:
    from anoman_tui.history import ComparisonRecord
    from anoman_tui.history.pending import PendingSaves
    from anoman_tui.judging.rounds import RoundVerdict

LABELS = ("A", "B", "C")
Phase = Literal["drawing", "ready", "streaming", "voting", "no_vote", "revealed"]
_VOTE = Binding.Group("Vote")


class ArenaScreen(DeckKeys, TypedPrompts, Screen[None]):
    """Blind rounds and their votes; the compare screen stays as it was underneath."""

    BINDINGS = [
        *ABORT_KEYS,
        Binding("escape", "leave", "Abort / leave", id="arena.leave", priority=True),
        Binding("ctrl+n", "next_round", "Next round", id="arena.next", priority=True),
        NEXT_PANE_KEY,
        DIFF_KEY,
        ZOOM_KEY,
        COPY_KEY,
        EXPORT_KEY,
        *SCROLL_KEYS,
        # Voting keys: single letters, live only while a round waits for its vote (the
        # prompt box is locked then, so they cannot be typing). Either case: Shift or Caps
        # Lock sends `B`, and a terminal reporting modifiers `shift+b`.
        # One footer entry for the five ("a b c t x Vote"): it fits 80 columns; the status
        # line says what each key means.
        Binding("a,A,shift+a", "vote('A')", "A best", id="arena.vote_a", priority=True,
                group=_VOTE),
        Binding("b,B,shift+b", "vote('B')", "B best", id="arena.vote_b", priority=True,
                group=_VOTE),
        Binding("c,C,shift+c", "vote('C')", "C best", id="arena.vote_c", priority=True,
                group=_VOTE),
        Binding("t,T,shift+t", "vote('tie')", "Tie", id="arena.vote_tie", priority=True,
                group=_VOTE),
        Binding("x,X,shift+x", "vote('bad')", "All bad", id="arena.vote_bad", priority=True,
                group=_VOTE),
    ]
    # Its palette entries (`palette_commands`), beside the app's theme, keys and quit.
    COMMANDS = {ScreenCommands}

    def __init__(self, live: CompareScreen, *, frozen_clock: bool = False) -> None:
        super().__init__(id="arena")
        # Its panes redraw side by side many times a second: composite only what changed
        # (see textual_internals._render_dirty_lines).
        draw_dirty_lines_only(self)
        panes = [PaneState(index=i + 1, label=label) for i, label in enumerate(LABELS)]
        self.deck = PaneDeck(panes, frozen_clock=frozen_clock, model_info=live.model_info)
        self._frozen = frozen_clock
        self.live = live
        self.phase: Phase = "drawing"
        self.round = 0
        self.last_prompt: str | None = None
        self.voted: str | None = None
        self.judge_said: str | None = None
        """The arena judge's verdict on the revealed round, in words (None: no judge)."""
        self._pool: list[tuple[Target, str]] = []
        # The latest round saved, by prompt, with its history id (the vote names it).
        self._saved: dict[str, ComparisonRecord] = {}

    @property
    def services(self) -> AppServices:
        return app_services(self.app)

    # -- the screen -------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusLine(id="status-line")
        yield self.deck
        yield prompt_area("", frozen=self._frozen)
        yield KeyBar(shed=("scroll_pane", "copy_answer", "export", "diff", "zoom", "abort",
                           "next_pane", "next_round", "leave"))

    def on_mount(self) -> None:
        if not self.set_up_deck():
            return
        self.run_worker(self._start(), group="arena", exclusive=True, exit_on_error=False)

    def on_resize(self) -> None:
        self.deck_resized()

    @property
    def hidden(self) -> bool:
        """The models are not to be shown: a round not yet revealed."""
        return self.phase != "revealed"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # A round is one prompt, drawn afresh: no retry of a drawn model, no new
        # comparison (neither is bound here).
        if action == "vote":
            return self.phase == "voting"
        return True

    def update_status(self) -> None:
        if self.phase == "revealed":
            names = " · ".join(f"{LABELS[p.index - 1]} {p.model}" for p in self.panes
                               if p.model)
            vote = {"tie": "a tie", "bad": "all bad"}.get(self.voted or "", self.voted or "")
            said = f" · {self.judge_said}" if self.judge_said else ""
            what = ("revealed:", f"{names} · your vote: {vote}{said}", True)
        elif self.phase == "voting":
            what = ("vote:", "A, B or C for the best answer · T tie · X all bad", True)
        elif self.phase == "no_vote":
            what = ("", "no answer to vote on · Ctrl+N next round", True)
        elif self.phase == "drawing":
            what = ("", "drawing three models…", True)
        else:
            what = ("blind round:", "the models are hidden until you vote", True)
        fields = [("", APP_BADGE, True), ("arena", f"round {max(1, self.round)}", True), what]
        simulated = simulated_field(self.panes)
        if simulated is not None:
            fields.append(simulated)
        # Below 100 columns the line is full: the shared store is named only when
        # something is wrong with it (unavailable, saves waiting).
        history = self.services.history_status(narrow=self.size.width < 100)
        if history:
            fields.append(("history:", history, False))
        self.show_status(fields)

    # -- rounds -------------------------------------------------------------------------

    async def _start(self) -> None:
        services = self.services
        # `--arena` opens the arena as soon as the gateway answers, which on a busy
        # machine can be before the history has finished opening.
        await services.history_settled()
        if services.history is None:
            self.app.notify("The arena keeps its votes in the history, which is "
                            f"{'off' if not services.settings.history else 'not available'}"
                            " this session.", title="No arena", severity="error", timeout=8)
            self.dismiss()
            return
        targets = services.connector.targets
        pool = [split_model(spec, targets) for spec in services.settings.arena.pool]
        default = services.connector.default_target
        if pool:
            self._pool = list(dict.fromkeys(
                (targets[name] if name else default, model) for name, model in pool))
        else:
            try:
                listed = await services.connector.models_of(default)
            except GatewayRequestError as exc:
                self.app.notify(f"No pool to draw from: {exc}", title="No arena",
                                severity="error", timeout=8)
                self.dismiss()
                return
            # A judge model grades answers; it is never drawn as a contestant.
            self._pool = [(default, m.id) for m in listed if not m.judge]
        judge = self._judge_model()
        if judge is not None:  # the judge grades the rounds; it never answers in one
            self._pool = [(t, m) for t, m in self._pool if (t.name, m) != judge]
        if len(self._pool) < 2:
            self.app.notify("The arena needs at least two models in its pool "
                            "(arena.pool in the config file).", title="No arena",
                            severity="error", timeout=8)
            self.dismiss()
            return
        self.draw()

    def draw(self) -> None:
        """A new round: distinct models at random, shuffled into the panes, blind."""
        chosen = random.sample(self._pool, min(3, len(self._pool)))
        self.round += 1
        self.voted = None
        self.judge_said = None
        self._saved = {}
        for state in self.panes:
            pane = self.pane(state.index)
            pane.abort()
            pane.clear()
            state.reset()
            state.label, state.tag = LABELS[state.index - 1], ""
            if state.index <= len(chosen):
                state.target, state.model = chosen[state.index - 1]
            else:
                state.model = ""
            state.endpoint = state.target.default_endpoint(self.services.settings.endpoint)
            state.params = PaneParams(self.services.settings.temperature,
                                      self.services.settings.max_tokens)
            pane.refresh_chrome()
        self.phase = "ready"
        self._lock_prompt(False)
        self.update_status()
        self.app.refresh_bindings()

    @on(PromptSubmitted)
    def _submitted(self, event: PromptSubmitted) -> None:
        prompt = event.prompt
        if self.phase in ("drawing", "voting"):
            self.notify("Vote first: A, B or C for the best answer, T tie, X all bad."
                        if self.phase == "voting" else "Drawing the round's models…",
                        timeout=3)
            return
        if self.phase in ("revealed", "no_vote"):
            self.draw()  # a new prompt starts the next round, with a new draw
        self.phase = "streaming"
        self.last_prompt = prompt
        self.update_status()
        if self.live.base_url is None:
            self.notify("No gateway to send to: see the status line.",
                        title="Not connected", severity="error")
            return
        running = self.deck.running
        if running:
            self.confirm_busy(prompt, running)
            return
        self._confirm_send = None
        self.query_one(PromptBox).clear()
        self.send(prompt, self.panes)

    def send(self, prompt: str, panes: list[PaneState],
             delays: dict[int, float] | None = None) -> None:
        # Every request of a round asks the gateway not to answer from its cache: a model
        # drawn again would be given away by the very text revealed a round earlier, and
        # "fastest first token" would go to the cache.
        system = self.query_one("#system", Input).value
        self.deck.play(prompt, live_sources(self.deck, panes, prompt, system=system,
                                            bypass_cache=True, delays=delays))
        self.update_status()

    @on(PaneDeck.PaneEnded)
    def _pane_ended(self) -> None:
        self.update_status()

    @on(PaneStatusChanged)
    def _pane_status(self) -> None:
        self.update_status()
        self.send_if_settled()  # (a pane that failed while drawing posts no PaneEnded)

    def turn_record(self, prompt: str | None = None) -> ComparisonRecord | None:
        """The round of `prompt` (default: the latest) as the history keeps it: blind,
        under the panes' labels, until the vote."""
        return turn_record(self.deck, self.services, prompt, blind=True,
                           system_prompt=self.query_one("#system", Input).value,
                           rerun_of=None, saved=self._saved, base_url=self.live.base_url)

    @on(PaneDeck.TurnEnded)
    def _turn_ended(self, event: PaneDeck.TurnEnded) -> None:
        if self.deck.running:
            return  # a prompt waiting for the aborted panes already went out
        record = self.turn_record(event.prompt)
        if record is not None:
            save_turn(self, record, self._keep_saved)
        if not any(_votable(p) for p in self.panes):
            self.phase = "no_vote"  # every pane failed: nothing to vote on
        else:
            self.phase = "voting"
            self._lock_prompt(True)
        self.update_status()
        self.app.refresh_bindings()
        self.send_if_settled()

    def _keep_saved(self, prompt: str, record: ComparisonRecord) -> None:
        self._saved = {prompt: record}

    def _lock_prompt(self, locked: bool) -> None:
        # While a vote is due the letters are votes, not typing.
        prompt = self.query_one(PromptBox)
        prompt.locked = locked
        if locked:
            self.pane(self.deck.current).answer.focus()
        else:
            prompt.focus()

    def export_record(self) -> ComparisonRecord | None:
        record = self.turn_record()
        return record.masked() if record is not None else None

    def export_title(self) -> str:
        return f"arena round {self.round}"

    # -- the palette: nothing that would name a model before the vote ----------------

    def palette_commands(self) -> Iterator[SystemCommand]:
        if self.phase == "voting":
            for choice, words in (("A", "A is best"), ("B", "B is best"), ("C", "C is best"),
                                  ("tie", "a tie"), ("bad", "every answer is bad")):
                yield SystemCommand(f"Vote: {words}", "then the names are revealed",
                                    partial(self.action_vote, choice))
        yield SystemCommand("Next round", "a new draw, the same prompt", self.action_next_round)
        for pane in self.panes:
            yield SystemCommand(f"Copy answer from pane {LABELS[pane.index - 1]}",
                                "to the clipboard", partial(self.copy_answer, pane.index))
        yield SystemCommand("Diff two panes", "one pane's answer as a word diff against "
                            "another's", self.action_diff)
        yield SystemCommand("Export this round", "Markdown, HTML, JSON or SVG (names hidden "
                            "until the vote)", self.action_export)
        if not self.hidden:
            yield SystemCommand("Scoreboard", "per model: the blind votes' rating and more",
                                self.services.action_scoreboard)
        yield SystemCommand("Leave the arena", "back to the compare screen", self.action_leave)

    # -- voting -------------------------------------------------------------------------

    def action_vote(self, choice: str) -> None:
        if self.phase != "voting":
            return
        if choice in LABELS:
            state = self.panes[LABELS.index(choice)]
            result = state.last_result
            if result is not None and result.cache_hit:
                self.notify(f"{choice} was answered from the gateway's cache: it is left "
                            "out of this round.", severity="warning", timeout=4)
                return
            if not _votable(state):
                self.notify(f"{choice} did not complete: a failed pane cannot win.",
                            severity="warning", timeout=4)
                return
        saved = self._saved.get(self.last_prompt or "")
        store = self.services.history
        if saved is None or (saved.id is None and not saved.uid) or store is None:
            self.notify("The round is still being saved; vote again in a moment.", timeout=3)
            return
        outcome = choice if choice in ("tie", "bad") else "win"
        winner = LABELS.index(choice) + 1 if outcome == "win" else None
        self.run_worker(self._cast(saved, outcome, winner, choice), group="vote",
                        exclusive=True, exit_on_error=False)

    async def _cast(self, saved: ComparisonRecord, outcome: str, winner: int | None,
                    choice: str) -> None:
        from anoman_tui.history import HistoryUnavailable, VoteRecord, VoteRefused

        store = self.services.history
        assert store is not None
        try:
            queued = await asyncio.to_thread(write_vote, self.services, saved, outcome,
                                             winner, blind=True)
        except (VoteRefused, HistoryUnavailable) as exc:
            self.notify(f"The vote was not recorded: {exc.reason}.", severity="error",
                        timeout=6)
            return
        if queued:
            self.services.refresh_history_status()
            self.notify("The history cannot be reached: the vote is kept and saved when it "
                        "is back.", title="History", severity="warning", timeout=6)
        self._saved = {self.last_prompt or "": dataclasses.replace(
            saved, vote=VoteRecord(True, outcome, winner, time.time(), store.user))}
        self.voted = choice
        self.reveal()

    def reveal(self) -> None:
        """The names, in place: headers, costs, weighted tokens and the cheapest mark."""
        self.phase = "revealed"
        for state in self.panes:
            state.label, state.tag = "", state.label  # the label stays in the header
            self.pane(state.index).refresh_chrome()
        self.deck.mark_verdict()
        self._lock_prompt(False)
        prompt = self.query_one(PromptBox)
        if self.last_prompt and not prompt.text:
            prompt.load_text(self.last_prompt)  # Enter: the same prompt, a new draw
            prompt.move_cursor(prompt.document.end)
        self.update_status()
        self.app.refresh_bindings()
        names = ", ".join(f"{LABELS[p.index - 1]} was {p.model}" for p in self.panes if p.model)
        self.notify(f"{names}.", title="Revealed", timeout=6)
        saved = self._saved.get(self.last_prompt or "")
        if self.services.settings.arena.judge and saved is not None:
            # After the vote, never before: nothing of the judge can sway it.
            self.judge_said = "judge: reading the answers…"
            self.update_status()
            self.run_worker(self._judge(saved, self.round), group="judge",
                            exit_on_error=False)

    # -- the judge ----------------------------------------------------------------------

    def _judge_model(self) -> tuple[str, str] | None:
        """(target name, model) of `[arena] judge`, if one is configured."""
        spec = self.services.settings.arena.judge
        if not spec:
            return None
        name, model = split_model(spec, self.services.connector.targets)
        return name or self.services.settings.default_target, model

    async def _judge(self, saved: ComparisonRecord, round_number: int) -> None:
        """The judge's verdict on the revealed round, shown beside the vote and kept
        with it; it goes on (and is kept) if the next round starts meanwhile."""
        from anoman_tui.judges import TIE
        from anoman_tui.judging.calls import Judge
        from anoman_tui.judging.rounds import (
            ROUND_JUDGE_CONCURRENCY,
            NoVerdict,
            judge_round,
            judges_itself,
            keep_verdict,
            resolve_judge,
            round_answers,
        )
        from anoman_tui.targets import ModelSlot

        services = self.services
        spec = services.settings.arena.judge or ""
        found = resolve_judge(services.settings, spec)
        said: str
        if isinstance(found, NoVerdict):
            said = f"judge: no verdict ({found.reason})"
        elif judges_itself(saved, *found):
            said = f"judge: no verdict ({spec} is one of this round's models)"
        else:
            target, model = found
            connection = services.connector.connection(target)
            if connection is None:
                said = f"judge: no verdict ({target.name} is not connected)"
            else:
                listed = services.connector.target_models.get(target.name) or ()
                slot = ModelSlot(spec=spec, model=model, pane=0, connection=connection,
                                 endpoint=target.default_endpoint(services.settings.endpoint),
                                 info=next((m for m in listed if m.id == model), None))
                judge = Judge(slot, concurrency=ROUND_JUDGE_CONCURRENCY,
                              idle_timeout=services.settings.idle_timeout)
                network = services.connector.network
                try:
                    verdict = await asyncio.wrap_future(network.run(
                        lambda client: judge_round(client, judge, saved.prompt,
                                                   round_answers(saved),
                                                   round_id=saved.id or "")))
                except Exception as exc:  # one line on the status line; the arena goes on
                    verdict = None
                    said = f"judge: no verdict ({type(exc).__name__}: {exc})"
                store = services.history
                problem = None
                pending = services.pending_saves
                if verdict is not None and pending is not None:
                    problem = await asyncio.to_thread(_keep_verdict, pending, saved, verdict)
                    services.refresh_history_status()
                elif verdict is not None and store is not None and saved.id is not None:
                    problem = await asyncio.to_thread(keep_verdict, store, saved.id, verdict)
                if verdict is None:
                    pass
                elif verdict.best is None:
                    said = ("judge: no verdict ("
                            f"{verdict.errors[0] if verdict.errors else 'it failed'})")
                else:
                    best = verdict.best
                    label = next((p.tag for p in self.panes if p.model == best), "")
                    picked = "a tie" if best == TIE else f"{label or best} best"
                    human = next((p.model for p in self.panes
                                  if p.tag == self.voted), TIE)
                    agrees = "agrees with your vote" if human == best else "differs from your vote"
                    simulated = " (simulated)" if verdict.simulated else ""
                    said = f"judge {verdict.judge}{simulated}: {picked} · {agrees}"
                if problem is not None:
                    said += f" · not kept: {problem}"
        if self.round == round_number and self.phase == "revealed":
            self.judge_said = said
            self.update_status()
        self.notify(said, title="Judge", timeout=6)

    def action_next_round(self) -> None:
        if any(p.running for p in self.panes):
            self.notify("A round is streaming: Esc aborts it first.", timeout=3)
            return
        if self.phase == "voting":
            self.notify("Vote first: A, B or C for the best answer, T tie, X all bad.",
                        timeout=3)
            return
        prompt = self.last_prompt
        self.draw()
        self.query_one(PromptBox).clear()
        if prompt:
            self.phase = "streaming"
            self.update_status()
            self.send(prompt, self.panes)

    def action_leave(self) -> None:
        if any(p.running for p in self.panes):
            self.action_abort_all()
            return
        if self.deck.zoomed:
            self.deck.zoom()
            return
        self.dismiss()


def _votable(state: PaneState) -> bool:
    """A drawn pane whose answer can win: it completed, and not from the gateway's cache
    (withheld in a blind round, left out of the round's vote on the scoreboard)."""
    result = state.last_result
    return bool(state.model) and result is not None and result.committed \
        and not result.cache_hit


def _keep_verdict(pending: PendingSaves, saved: ComparisonRecord,
                  verdict: RoundVerdict) -> str | None:
    """(a thread) Keep the judge's verdict with its round through the waiting saves (the
    round and its vote may be waiting for the server too); why it could not be, or
    None."""
    from anoman_tui.history import HistoryUnavailable, VoteRefused
    from anoman_tui.history.pending import verdict_write

    try:
        pending.write(verdict_write(saved.id, saved.uid, verdict.judge, verdict.outcome,
                                    verdict.winner, verdict.to_json()),
                      "The arena judge's verdict")
    except (VoteRefused, HistoryUnavailable) as exc:
        return exc.reason
    return None
