"""The README and the documents it links to say what is true, and stay findable.

- Every ```python block in the README and in `docs/` runs as printed, as `__main__`
  in the test's interpreter (an interpreter and an SDK import each would cost ~1 s of
  CPU a run), against the real local gateway on loopback (`ANOMAN_BASE_URL` and
  `ANOMAN_API_KEY` point at it; the examples read them), exits 0 and prints the answer
  it streamed.
- Every configuration example loads: the app's through the settings loader, the local
  gateway's through its config model, and every `[keymap]` example shows the defaults.
- The README stays a README for users: at most 450 lines and 25 KB, its quick start as
  `.ci/run` runs it, its Performance table five rows found, figures and all, in
  `benchmarks/README.md`.
- Every relative link in these documents resolves to a file of the repository, and to a
  heading of that file when it names one.
"""

from __future__ import annotations

import os
import re
import runpy
import sys
import tomllib
import traceback
from pathlib import Path

import pytest

from anoman_tui.config import ConfigError, load_settings
from anoman_tui.gateway.config import GatewayConfig
from anoman_tui.gateway.embedded import EmbeddedGateway
from tests.helpers import LocalGateways

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
# The documents a reader reaches from the README, whose links must hold.
LINKED = [README, ROOT / "CONTRIBUTING.md", ROOT / "tests" / "README.md",
          ROOT / "benchmarks" / "README.md", *DOCS]
FENCE = re.compile(r"^(```+|~~~+)([^\n]*)\n(.*?)^\1[ \t]*$", re.M | re.S)


def _blocks(path: Path, language: str) -> list[str]:
    return [body for _, info, body in FENCE.findall(path.read_text(encoding="utf-8"))
            if info.strip() == language]


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


EXAMPLES = [(path, index, block) for path in [README, *DOCS]
            for index, block in enumerate(_blocks(path, "python"))]


@pytest.fixture(scope="module")
def gateway(make_module_gateway: LocalGateways) -> EmbeddedGateway:
    return make_module_gateway()


def _run_example(script: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`python SCRIPT` as a user runs it, in this process (no interpreter and SDK import
    to pay for each run): as `__main__`, with its own module namespace, in the
    environment and working directory set by the test; (exit status, stdout, stderr)."""
    capsys.readouterr()
    try:
        runpy.run_path(str(script), run_name="__main__")
        status = 0
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if isinstance(stop.code, str):
            print(stop.code, file=sys.stderr)
    except Exception:  # what an interpreter would print, and its exit status
        traceback.print_exc()
        status = 1
    out, err = capsys.readouterr()
    return status, out, err


def test_the_readme_and_docs_have_python_examples() -> None:
    in_readme = [block for path, _, block in EXAMPLES if path == README]
    assert len(in_readme) >= 2  # the stream core, and a script that votes in the arena
    assert len(EXAMPLES) >= 4  # and the two official SDKs against the local gateway


@pytest.mark.parametrize(("path", "index", "source"), EXAMPLES,
                         ids=[f"{_rel(p)}-{i}" for p, i, _ in EXAMPLES])
def test_each_python_example_runs_as_printed(gateway: EmbeddedGateway, clean_env: Path,
                                            tmp_path: Path, path: Path, index: int,
                                            source: str, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / f"example_{index}.py"
    script.write_text(source, encoding="utf-8")
    # clean_env: no ANOMAN_* of ours, data under tmp_path
    monkeypatch.setenv("ANOMAN_BASE_URL", gateway.base_url)
    monkeypatch.setenv("ANOMAN_API_KEY", gateway.api_key)
    monkeypatch.setenv("ANOMAN_CONFIG", os.devnull)
    # `anoman-tui` as installed beside this interpreter
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep
                       + os.environ.get("PATH", ""))
    monkeypatch.chdir(tmp_path)
    code, out, err = _run_example(script, capsys)
    assert code == 0, f"{_rel(path)}:\n{source}\n{err}"
    assert len(out.strip()) > 20, out  # the streamed answer
    assert "Traceback" not in err
    if "no-cache" not in source:
        return
    # Twice: the no-cache header keeps the second run a stream, not an empty cache hit.
    code, out, err = _run_example(script, capsys)
    assert code == 0 and len(out.strip()) > 20, out


APP_CONFIGS = [(path, block) for path in [README, ROOT / "docs" / "configuration.md"]
               for block in _blocks(path, "toml")]


@pytest.mark.parametrize(("path", "block"), APP_CONFIGS,
                         ids=[f"{_rel(p)}-{i}" for i, (p, _) in enumerate(APP_CONFIGS)])
def test_each_config_example_loads(clean_env: Path, path: Path, block: str) -> None:
    clean_env.write_text(block, encoding="utf-8")
    try:
        load_settings()
    except ConfigError as exc:
        pytest.fail(f"{_rel(path)}: {exc}\n{block}")


def test_the_config_reference_shows_each_kind_of_example() -> None:
    tables = [set(tomllib.loads(block)) for _, block in APP_CONFIGS]
    for key in ("base_url", "targets", "panes", "keymap"):
        assert any(key in table for table in tables), key


@pytest.mark.parametrize("path", [README, ROOT / "docs" / "configuration.md"], ids=_rel)
def test_keymap_examples_name_real_bindings_with_their_defaults(path: Path) -> None:
    from textual.binding import Binding

    from anoman_tui.ui.app import AnomanApp, keymap_conflict
    from anoman_tui.ui.screens.compare import CompareScreen
    from anoman_tui.ui.widgets.prompt_box import PromptBox

    blocks = [tomllib.loads(b)["keymap"] for b in _blocks(path, "toml") if "[keymap]" in b]
    assert blocks, f"{_rel(path)} shows no [keymap] example"
    defaults = {b.id: b.key for holder in (AnomanApp, CompareScreen, PromptBox)
                for b in holder.BINDINGS if isinstance(b, Binding) and b.id is not None}
    for keymap in blocks:
        assert keymap_conflict(keymap) is None
        assert set(keymap) <= set(defaults)
        # The examples show the defaults, so copying one changes nothing.
        assert keymap == {i: defaults[i] for i in keymap}


def test_the_local_gateway_config_example_loads(tmp_path: Path) -> None:
    blocks = _blocks(ROOT / "docs" / "local-gateway.md", "toml")
    assert blocks
    for index, block in enumerate(blocks):
        file = tmp_path / f"gateway_{index}.toml"
        file.write_text(block, encoding="utf-8")
        config = GatewayConfig.load(file)
        assert config.api_keys  # the example is read, not silently defaulted


def test_the_readme_is_a_readme_for_users() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 450
    assert len(text.encode("utf-8")) <= 25_000
    # The quick start, exactly as .ci/run runs it.
    shell = _blocks(README, "sh")
    assert shell[:2] == ["pip install -e '.[test]' && anoman-tui\n", "pytest\n"]
    assert "simulated" in text
    assert re.search(r"^!\[[^\]]*\]\(screenshots/[\w-]+\.svg\)$", text, re.M)


def _unlinked(text: str) -> str:
    """A table row with each `[text](target)` reduced to its text."""
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).strip()


def test_the_readme_performance_rows_are_the_benchmarks_own() -> None:
    section = README.read_text(encoding="utf-8").split("\n## Performance\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]
    assert len(rows) == 5
    benchmarks = {_unlinked(line) for line in
                  (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8").splitlines()}
    for row in rows:
        assert _unlinked(row) in benchmarks, f"not in benchmarks/README.md: {row[:80]}"


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _prose(text: str) -> str:
    """The text outside fenced blocks and inline code, where links and headings live."""
    text = FENCE.sub("", text)
    return re.sub(r"(`+).+?\1", "", text)


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", FENCE.sub("", path.read_text("utf-8")),
                              re.M):
        slug = _slug(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


@pytest.mark.parametrize("path", LINKED, ids=_rel)
def test_every_relative_link_resolves(path: Path) -> None:
    assert path.is_file(), _rel(path)
    broken = []
    for target in re.findall(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)",
                             _prose(path.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
            continue  # a web address
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        if not resolved.exists() or ROOT not in resolved.parents:
            broken.append(f"{target}: no such file in the repository")
        elif anchor and (resolved.suffix != ".md" or anchor not in _anchors(resolved)):
            broken.append(f"{target}: no heading #{anchor} there")
    assert not broken, f"{_rel(path)}:\n" + "\n".join(broken)
