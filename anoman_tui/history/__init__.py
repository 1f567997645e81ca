"""Comparisons that last: what one comparison turn was, and (in `store.py`) where it is kept.

`model.py` describes a finished comparison turn in plain data, built from the stream
core's results and read back from the database; the exporters (`anoman_tui.report`)
and both commands (the compare screen and `anoman-tui compare`) share it. `runs.py`
keeps suite runs (`anoman-tui eval`): what they hand it and read back are plain JSON
dicts, so the history never imports `anoman_tui.suites` (which uses it).

Where it is kept: `store.py` is the open history (connection, transactions, queries),
`schema/` each engine's tables and migrations, `rows.py` a record to rows and back,
`engines.py` what differs between SQLite and PostgreSQL. Around it: `pending.py` and
`spool.py` (saves that wait for the server), `portable.py` (the recording file),
`transfer.py` (copying one history into another, `history migrate`).

May import: the standard library, pydantic, `anoman_tui.streaming` (for the results it
records) and `anoman_tui.wire` (to read a saved result back).
Never Textual, never httpx directly.
"""

from anoman_tui.history.model import (
    LEFT_OUT_REASONS,
    ComparisonRecord,
    LeftOut,
    ListedComparison,
    ListedPane,
    ModelNumbers,
    PaneRecord,
    RoundJudgement,
    VotedRound,
    VoteRecord,
    left_out_reason,
    pane_record,
    result_from_record,
)
from anoman_tui.history.runs import (
    STOP_REASONS,
    AmbiguousRunId,
    GroupInfo,
    RunExists,
    RunListing,
    RunRefused,
    StoredRun,
    UnknownRun,
    UnreadableRun,
)
from anoman_tui.history.store import HistoryStore, HistoryUnavailable, VoteRefused, default_path

__all__ = [
    "LEFT_OUT_REASONS",
    "STOP_REASONS",
    "AmbiguousRunId",
    "ComparisonRecord",
    "GroupInfo",
    "HistoryStore",
    "HistoryUnavailable",
    "LeftOut",
    "ListedComparison",
    "ListedPane",
    "ModelNumbers",
    "PaneRecord",
    "RoundJudgement",
    "RunExists",
    "RunListing",
    "RunRefused",
    "StoredRun",
    "UnknownRun",
    "UnreadableRun",
    "VoteRecord",
    "VoteRefused",
    "VotedRound",
    "default_path",
    "left_out_reason",
    "pane_record",
    "result_from_record",
]
