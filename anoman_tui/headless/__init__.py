"""`anoman-tui compare`: stream one prompt to several models at once, without the TUI.

Runs every model concurrently through the stream core (one request each),
shows live per-model progress (a Rich live table on a terminal, one line per
milestone otherwise), then each answer and a summary table; or, with
`--json`, prints exactly one JSON document on stdout.

- `spec`: what was asked (`CompareSpec`, one `PaneSpec` per pane); plain data.
- `run`: the run itself (`CompareRun`, each pane's progress) and saving it.
- `records`: the `--json` document and the history's record of a run.
- `output`: the terminal output (Rich).
- `compare`: from a spec to an exit status (targets, model lists, run, save, print).

Imports the stream core and Rich (which Textual brings); never Textual itself.
"""

from anoman_tui.headless.compare import run_compare, run_compare_with_target, run_replay
from anoman_tui.headless.spec import CompareSpec, PaneSpec, replay_spec, rerun_spec

__all__ = ["CompareSpec", "PaneSpec", "replay_spec", "rerun_spec", "run_compare",
           "run_compare_with_target", "run_replay"]
