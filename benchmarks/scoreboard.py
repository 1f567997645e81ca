"""Scoreboard speed: 100,000 arena votes over 12 models to ratings with 95% intervals.

    python benchmarks/scoreboard.py            # --votes 100000 --models 12 --runs 5

The votes are simulated once (not timed): each round draws three distinct models, the
winner drawn with Bradley–Terry probabilities from strengths 40 points apart; about one
round in ten is a tie, one in twenty-five "all bad", and one pane in thirty failed.
Each run times `scoreboard(votes)` as the scoreboard screen calls it: counting,
aggregation into vote patterns, the fit and the 100-resample bootstrap.

Then the same votes are written into a history file (a blind comparison of three panes
each, with TTFT, tokens/s, cost and one failure in thirty; bulk-inserted, not timed),
and each run times the whole `anoman-tui scoreboard`: opening the history, reading the
voted rounds and every answer's numbers (SQLite), the ratings and the bootstrap.

Target: within 1 s per run, for both; MET/MISSED is printed per run.

May import: the standard library, anoman_tui.arena, anoman_tui.history and
anoman_tui.report.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import median, print_header, verdict

from anoman_tui.arena import BOOTSTRAP_ROUNDS, Vote, scoreboard

TARGET_S = 1.0


def simulate(votes: int, models: int, seed: int) -> list[Vote]:
    rng = random.Random(seed)
    strength = {f"model-{n:02d}": 1200.0 - 40.0 * n for n in range(models)}
    names = list(strength)
    out = []
    for _ in range(votes):
        drawn = tuple(rng.sample(names, 3))
        failed = frozenset(m for m in drawn if rng.random() < 1 / 30)
        if failed == set(drawn):
            failed = frozenset()
        answered = [m for m in drawn if m not in failed]
        draw = rng.random()
        if draw < 0.1:
            out.append(Vote(drawn, None, "tie", failed))
        elif draw < 0.14:
            out.append(Vote(drawn, None, "bad", failed))
        else:
            weights = [10 ** (strength[m] / 400) for m in answered]
            out.append(Vote(drawn, rng.choices(answered, weights)[0], "win", failed))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--votes", type=int, default=100_000)
    parser.add_argument("--models", type=int, default=12)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bootstrap", type=int, default=BOOTSTRAP_ROUNDS)
    args = parser.parse_args()

    print_header(f"scoreboard: {args.votes:,} votes, {args.models} models, "
                 f"{args.bootstrap} bootstrap resamples")
    votes = simulate(args.votes, args.models, seed=1)
    times = []
    board = None
    for run in range(1, args.runs + 1):
        start = time.perf_counter()
        board = scoreboard(votes, bootstrap=args.bootstrap, seed=run)
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        print(f"   run {run}: {elapsed * 1000:7.1f} ms   {verdict(elapsed <= TARGET_S)} "
              f"(target ≤ {TARGET_S:.0f} s)")
    assert board is not None
    print(f"   median of {args.runs}: {median(times) * 1000:.1f} ms   "
          f"{verdict(median(times) <= TARGET_S)} (target ≤ {TARGET_S:.0f} s)")
    print("   last run's board (rating, 95% interval, rounds):")
    for row in board.models:
        print(f"     {row.model:10} {row.rating:7.1f}  [{row.ci_low:7.1f}, {row.ci_high:7.1f}]"
              f"  {row.rounds:6,}{'  unstable' if row.unstable else ''}")
    whole = whole_scoreboard(votes, args.runs)
    return 0 if all(t <= TARGET_S for t in times + whole) else 1


def whole_scoreboard(votes: list[Vote], runs: int) -> list[float]:
    """Time `anoman-tui scoreboard`'s work over a history file holding `votes`."""
    import json
    import sqlite3
    import tempfile

    from anoman_tui.history import HistoryStore
    from anoman_tui.history.schema.shared import vote_pattern
    from anoman_tui.report.scoreboard import build

    rng = random.Random(2)
    with tempfile.TemporaryDirectory(prefix="anoman-scoreboard-") as tmp:
        path = Path(tmp) / "history.sqlite3"
        HistoryStore.open(path).close()  # the schema, migrated
        conn = sqlite3.connect(path)
        conn.execute("BEGIN")
        for n, vote in enumerate(votes, start=1):
            conn.execute("INSERT INTO comparisons (id, created_at, source, prompt, blind, "
                         "author, uid) VALUES (?, ?, 'compare', 'p', 1, 'user', ?)",
                         (n, float(n), f"{n:032x}"))
            for pane, model in enumerate(vote.models, start=1):
                failed = model in vote.failed
                ttft, rate = rng.uniform(0.1, 2.0), rng.uniform(20, 200)
                conn.execute(
                    "INSERT INTO panes (comparison_id, pane, model, base_url, endpoint, "
                    "scenario, status, committed, text, reasoning, metrics, cost_decimal, "
                    "cost_source, label, ttft_s, tokens_per_s, cost_usd, failure_kind, "
                    "failure) VALUES (?, ?, ?, '', 'openai', 'none', ?, ?, 'answer', '', ?, "
                    "'0.0004', 'gateway', ?, ?, ?, ?, ?, ?)",
                    (n, pane, model, "failed" if failed else "completed", int(not failed),
                     json.dumps({"ttft_s": ttft, "output_tokens_per_s": rate}),
                     "ABC"[pane - 1], ttft, rate, 0.0004,
                     "truncated" if failed else None,
                     '{"kind": "truncated"}' if failed else None))
            winner = vote.models.index(vote.winner) + 1 if vote.winner else None
            conn.execute("INSERT INTO votes (comparison_id, blind, outcome, winner_pane, "
                         "voted_at, author) VALUES (?, 1, ?, ?, ?, 'user')",
                         (n, vote.outcome, winner, float(n)))
        # (each vote's pattern, as the app writes it with the vote)
        conn.execute(f"UPDATE votes SET pattern = {vote_pattern(postgres=False)}")
        conn.execute("COMMIT")
        conn.close()
        print(f"   the whole `anoman-tui scoreboard` over a history of {len(votes):,} voted "
              f"rounds ({len(votes) * 3:,} answers):")
        times = []
        for run in range(1, runs + 1):
            start = time.perf_counter()
            with HistoryStore.open(path) as store:
                rows = build(store.voted_rounds(), store.model_numbers(), seed=run)
            elapsed = time.perf_counter() - start
            times.append(elapsed)
            assert len(rows) > 1
            print(f"   run {run}: {elapsed * 1000:7.1f} ms   {verdict(elapsed <= TARGET_S)} "
                  f"(target ≤ {TARGET_S:.0f} s)")
        print(f"   median of {runs}: {median(times) * 1000:.1f} ms   "
              f"{verdict(max(times) <= TARGET_S)} (target ≤ {TARGET_S:.0f} s)")
    return times


if __name__ == "__main__":
    raise SystemExit(main())
