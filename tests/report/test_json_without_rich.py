"""Text formatting for reports needs no terminal renderer: the report modules a suite
run's Markdown, HTML, JUnit, JSON, plain-text summary and diff are made by never import
Rich (only `suite_terminal`, the terminal's coloured view, does), and `anoman-tui eval
--json`, run whole in a fresh interpreter (its local gateway, its run, its document),
loads neither Rich nor Textual."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLAIN = ("axes", "html_page", "suite_diff", "suite_files", "suite_html", "suite_json",
         "suite_junit", "suite_markdown", "suite_print", "suite_text", "text_layout")

SUITE = """
name = "plain"
models = ["anoman-lite"]
temperature = 0  # the same answer every run: the verdict is the point, not the draw

[[case]]
id = "kettle"
prompt = "How do I get a refund for a broken kettle?"
[[case.assert]]
type = "icontains"
value = "kettle"
"""

# Run as `anoman-tui eval FILE --json` runs, piped; then say what it loaded.
SCRIPT = """
import sys
from anoman_tui.cli import main
status = main(["eval", sys.argv[1], "--json", "-H", "X-Anoman-Simulate: ttft=0,rate=4000"])
loaded = sorted({m.split(".")[0] for m in sys.modules} & {"rich", "textual"})
print("LOADED", status, ",".join(loaded) or "-", file=sys.stderr)
"""


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def test_the_plain_report_modules_import_no_terminal_renderer() -> None:
    for name in PLAIN:
        imports = _imports(ROOT / "anoman_tui" / "report" / f"{name}.py")
        assert not imports & {"rich", "textual"}, name


def test_eval_json_loads_no_terminal_renderer(clean_env: Path, tmp_path: Path) -> None:
    suite = tmp_path / "plain.toml"
    suite.write_text(SUITE, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for name in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(suite)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert "LOADED 0 -" in done.stderr, done.stderr
    document = json.loads(done.stdout)
    assert [r["pass"] for r in document["results"]] == [True]
