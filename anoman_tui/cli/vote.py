"""`anoman-tui vote`: the vote on a blind round, and the reveal."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from anoman_tui.cli._history import add_save_wait, command_history, command_writes, settle
from anoman_tui.cli.arguments import positive_int
from anoman_tui.cli.help import ARENA

if TYPE_CHECKING:
    from anoman_tui.cli.common import Subcommands
    from anoman_tui.config import Settings
    from anoman_tui.gateway.embedded import EmbeddedGateway
    from anoman_tui.history import ComparisonRecord
    from anoman_tui.history.pending import PendingSaves
    from anoman_tui.judging.rounds import NoVerdict, RoundVerdict

GROUP = ARENA
NAME = "vote"
HELP = "vote on a blind round and see which model was which"


def add_parser(commands: Subcommands, argv: Sequence[str]) -> None:
    parser = commands.add_parser(
        NAME,
        help=HELP,
        description=(
            "Record the vote on a blind round (`anoman-tui compare --blind`) and print the "
            "reveal: which model each label was, with its numbers; then, with [arena] judge "
            "in the config file, the judge's verdict on the round (every pair in both "
            "orders), kept with it. Exit status 2 for an unknown id, a round already voted "
            "on, or a label whose pane failed; a judge that fails does not undo the vote."
        ),
    )
    parser.add_argument("id", type=positive_int, help="the round's id (from compare --blind)")
    parser.add_argument("choice", choices=("A", "B", "C", "tie", "bad"),
                      help="the best answer's label, tie, or bad (every answer bad)")
    parser.add_argument("--json", action="store_true", help="print the reveal as JSON")
    add_save_wait(parser)


def run(args: argparse.Namespace) -> int:
    from anoman_tui.cli._history import history_label, history_location
    from anoman_tui.cli.common import settings_from_args
    from anoman_tui.history import VoteRefused
    from anoman_tui.history.pending import vote_write

    prog = "anoman-tui vote"
    settings = settings_from_args(args, prog)
    if settings is None:
        return 2
    verdict: RoundVerdict | NoVerdict | None = None
    with command_history(prog) as store, command_writes(prog, store, args.save_wait) as writes:
        if store is None or writes is None:
            print(f"{prog}: no comparison {args.id}: the history "
                  f"({history_label(history_location(prog))}) is empty", file=sys.stderr)
            return 2
        record = store.get(args.id)
        problem = _vote_problem(record, args.id, args.choice)
        if problem:
            print(f"{prog}: {problem}", file=sys.stderr)
            return 2
        assert record is not None
        winner = next((p.pane for p in record.panes if p.label == args.choice), None)
        outcome = args.choice if args.choice in ("tie", "bad") else "win"
        try:
            written, _ = writes.write_and_wait(
                vote_write(args.id, None, outcome, winner, blind=True, user=store.user),
                "the vote", args.save_wait)
        except VoteRefused as exc:
            print(f"{prog}: {exc.reason}", file=sys.stderr)
            return 2
        if not written:
            settle(prog, writes, args.save_wait)  # kept for the next start; exits 1
        if settings.arena.judge:
            # After the vote, never before: the judge's verdict cannot sway it.
            verdict = _judge(settings, record, writes)
    reveal: dict[str, dict[str, Any]] = {
        p.label: {"model": p.model, "target": p.target, "status": p.status,
                  "cost": p.cost_text, "metrics": dict(p.metrics)}
        for p in record.panes
    }
    if args.json:
        print(json.dumps({"id": args.id, "outcome": outcome,
                          "winner": args.choice if outcome == "win" else None,
                          "reveal": reveal, "judge": _judge_json(settings, verdict)},
                         ensure_ascii=False))
        return 0
    from anoman_tui.streaming.safe_text import terminal_safe

    for label, pane in reveal.items():
        ttft, rate = pane["metrics"].get("ttft_s"), pane["metrics"].get("output_tokens_per_s")
        where = f" @{pane['target']}" if pane["target"] else ""
        line = (f"{label}  {pane['model']}{where}  {pane['status']}"
                f"  TTFT {f'{ttft:.2f} s' if ttft is not None else '—'}"
                f"  {f'{rate:.1f}' if rate is not None else '—'} tok/s  {pane['cost']}"
                + ("  ← your pick" if label == args.choice else ""))
        print(terminal_safe(line))
    if outcome != "win":
        print("your vote: a tie" if outcome == "tie" else "your vote: every answer bad")
    if verdict is not None:
        from anoman_tui.judges import TIE

        human = next((p.model for p in record.panes if p.label == args.choice), TIE)
        print(terminal_safe(judge_line(settings.arena.judge or "", verdict, record, human)))
    return 0


def _judge(settings: Settings, record: ComparisonRecord,
           writes: PendingSaves) -> RoundVerdict | NoVerdict:
    from anoman_tui.history import HistoryUnavailable, VoteRefused
    from anoman_tui.history.pending import verdict_write
    from anoman_tui.judging.rounds import NoVerdict, judge_saved_round

    verdict = judge_saved_round(settings, record, _start_local)
    if isinstance(verdict, NoVerdict):
        return verdict
    assert record.id is not None
    problem = None
    try:
        # (still waiting when the command ends: kept in the spool, and exit status 1)
        writes.write_and_wait(verdict_write(record.id, None, verdict.judge, verdict.outcome,
                                            verdict.winner, verdict.to_json()),
                              "the judge's verdict", writes.patience)
    except (VoteRefused, HistoryUnavailable) as exc:
        problem = exc.reason
    if problem is not None:
        print(f"anoman-tui vote: the judge's verdict was not kept: {problem}", file=sys.stderr)
    return verdict


def _start_local() -> EmbeddedGateway:
    """The local gateway for a judge on the local target, as `compare` starts one."""
    from anoman_tui.gateway.config import GatewayConfig
    from anoman_tui.gateway.embedded import EmbeddedGateway

    return EmbeddedGateway(GatewayConfig()).start()


def _judge_json(settings: Settings,
                verdict: RoundVerdict | NoVerdict | None) -> dict[str, Any] | None:
    """`judge` of `vote --json`: None with no judge configured."""
    from anoman_tui.judging.rounds import RoundVerdict

    if verdict is None:
        return None
    if isinstance(verdict, RoundVerdict):
        return verdict.to_json()
    return {"model": settings.arena.judge, "best": None, "verdicts": [], "calls": 0,
            "errors": [verdict.reason], "cost_usd": None, "simulated": False}


def judge_line(spec: str, verdict: RoundVerdict | NoVerdict, record: ComparisonRecord,
               human_best: str) -> str:
    """One line: the judge's best of the round beside the person's, or why it has none."""
    from anoman_tui.judges import TIE
    from anoman_tui.judging.rounds import RoundVerdict

    if not isinstance(verdict, RoundVerdict):
        return f"judge {spec}: no verdict: {verdict.reason}"
    name = f"judge {verdict.judge}" + (" (simulated)" if verdict.simulated else "")
    if verdict.best is None:
        return f"{name}: no verdict: {verdict.errors[0] if verdict.errors else 'it failed'}"
    if verdict.best == TIE:
        said = "no single best answer (a tie after the position swap)"
    else:
        label = next((p.label for p in record.panes if p.model == verdict.best), "")
        said = f"{label} is best ({verdict.best})" if label else f"{verdict.best} is best"
    agrees = "agrees with your vote" if human_best == verdict.best else "differs from your vote"
    cost = f" · ${verdict.cost_usd:.6f}" if verdict.cost_usd is not None else ""
    return f"{name}: {said} · {agrees} · {verdict.calls} calls{cost}"


def _vote_problem(record: ComparisonRecord | None, comparison_id: int, choice: str) -> str | None:
    """Why this vote cannot be cast, in one sentence; None if it can."""
    if record is None:
        return f"no comparison {comparison_id} in the history; `anoman-tui history` lists them"
    if not record.blind:
        return f"comparison {comparison_id} is not a blind round (see compare --blind)"
    if record.vote is not None:
        by = f" by {record.vote.user}" if record.vote.user else ""
        return f"round {comparison_id} was already voted on{by}"
    if all(p.status != "completed" for p in record.panes):
        return f"every pane of round {comparison_id} failed: there is nothing to vote on"
    if choice in ("tie", "bad"):
        return None
    pane = next((p for p in record.panes if p.label == choice), None)
    if pane is None:
        labels = ", ".join(p.label for p in record.panes)
        return f"round {comparison_id} has no pane {choice} (its panes: {labels})"
    if pane.status != "completed":
        return f"pane {choice} of round {comparison_id} {pane.status}: a failed pane cannot win"
    return None
