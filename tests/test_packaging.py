"""The package as users install it: a built wheel in a fresh virtual environment.

An editable install reads the stylesheet and themes from the checkout, so it hides a
wheel that lacks them. This builds the sdist and, from it, the wheel (as `python -m
build`, `pipx install` and an index upload do), installs the wheel (not editable) into
a new virtual environment, and runs the installed `anoman-tui` from outside the
checkout: `--version`, a headless `compare --json` against the embedded gateway, and
the TUI's first paint in a pseudo-terminal.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tarfile
import time
import tomllib
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# One worker runs them all: the module's wheel and virtual environment (about 45 s to
# build) are then made once, not once on each worker.
pytestmark = pytest.mark.xdist_group("packaging")

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
VERSION = PYPROJECT["project"]["version"]
THEME_FILES = ["anoman-dark.toml", "anoman-light.toml", "anoman-high-contrast.toml"]
# Each file as it sits in the wheel and in the sdist (the checkout's layout). The theme
# files live in the checkout's top-level themes/ and ship as anoman_tui.theme_files
# (setup.py). py.typed is not read at run time but promised to type checkers (PEP 561).
SHIPPED_FILES = [
    ("anoman_tui/ui/anoman.tcss", "anoman_tui/ui/anoman.tcss"),
    *((f"anoman_tui/theme_files/{name}", f"themes/{name}") for name in THEME_FILES),
    ("anoman_tui/py.typed", "anoman_tui/py.typed"),
]
# anoman-dark's `background` (#0F1420) as a 24-bit SGR colour: seen only if the bundled
# theme loaded (Textual's own default theme has another background).
DARK_BACKGROUND_SGR = "48;2;15;20;32"


def test_checkout_themes_are_the_bundled_ones() -> None:
    """In a checkout (`pip install -e .`, as CI and contributors run) the app reads the
    theme files from the top-level themes/ folder itself, so an edit there shows at once."""
    from anoman_tui.locations import theme_dirs
    from anoman_tui.ui.themes import load_themes

    assert Path(str(theme_dirs()[0])).resolve() == ROOT / "themes"
    bundled = load_themes(theme_dirs()[:1])
    assert sorted(bundled) == sorted(name.removesuffix(".toml") for name in THEME_FILES)


def _clean_env(home: Path) -> dict[str, str]:
    """The environment of a user who has nothing but the installed tool."""
    env = {
        k: v for k, v in os.environ.items()
        if not k.startswith(("ANOMAN_", "PYTHON", "VIRTUAL_ENV", "XDG_"))
    }
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_DATA_HOME=str(home / "data"))
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtual environment with the built wheel installed; yields its bin/."""
    work = tmp_path_factory.mktemp("wheel")
    # From a copy of what git would commit: build leftovers in the checkout (an old
    # egg-info's file list) must not stand in for the package's own declarations.
    source = work / "source"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True, timeout=60,
    ).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    dist = work / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(dist), str(source)],
        check=True, capture_output=True, timeout=300,
    )
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        in_wheel = set(zf.namelist())
    with tarfile.open(sdist) as tf:
        in_sdist = {name.split("/", 1)[1] for name in tf.getnames() if "/" in name}
    for in_the_wheel, in_the_sdist in SHIPPED_FILES:
        assert in_the_wheel in in_wheel, f"the wheel lacks {in_the_wheel}"
        assert in_the_sdist in in_sdist, f"the sdist lacks {in_the_sdist}"

    env_dir = work / "venv"
    # No pip of its own (ensurepip: ~5 s of CPU): this run's pip installs into it
    # (`pip --python`), as pipx and uv install a tool into an environment without pip.
    # --no-compile: pip would byte-compile every module of every dependency (~5 s of
    # CPU); the runs below compile what they import, as Python does for any module.
    venv.EnvBuilder(with_pip=False, clear=True).create(env_dir)
    bin_dir = env_dir / "bin"
    home = work / "home"
    home.mkdir()
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install",
         "--quiet", "--no-compile", str(wheel)],
        check=True, capture_output=True, timeout=600, env=_clean_env(home), cwd=work,
    )
    yield bin_dir


def _run(bin_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = bin_dir.parent.parent / "home"
    return subprocess.run(
        [str(bin_dir / "anoman-tui"), *args], capture_output=True, text=True, timeout=120,
        env=_clean_env(home), cwd=home,
    )


def test_installed_package_is_not_the_checkout(installed: Path) -> None:
    probe = subprocess.run(
        [str(installed / "python"), "-c",
         "import anoman_tui, anoman_tui.locations as l; print(anoman_tui.__file__); "
         "print(l.theme_dirs()[0]); "
         "print(sorted(p.name for p in l.theme_dirs()[0].iterdir()))"],
        capture_output=True, text=True, timeout=60, cwd=installed,
        env=_clean_env(installed.parent.parent / "home"),
    )
    assert probe.returncode == 0, probe.stderr
    where, themes_dir, themes = probe.stdout.splitlines()
    assert str(installed.parent) in where and str(ROOT) not in where
    # The wheel-installed app reads its themes from inside the installed package.
    assert str(installed.parent) in themes_dir and str(ROOT) not in themes_dir
    for name in THEME_FILES:
        assert name in themes


def test_installed_version(installed: Path) -> None:
    result = _run(installed, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"anoman-tui {VERSION}"


def test_installed_compare_json_against_embedded_gateway(installed: Path) -> None:
    # Not thinking models: they spend a small budget thinking and may end with no text.
    result = _run(installed, "compare", "--json", "--max-tokens", "20", "Explain TCP slow start",
                  "-m", "anoman-lite", "-m", "claude-sonnet-4-6", "-m", "local:qwen3-coder")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert len(document["panels"]) == 3
    for entry in document["panels"]:
        assert entry["status"] == "completed", entry
        assert entry["text"]


def _read_until(fd: int, done: re.Pattern[str], timeout: float) -> str:
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
        if done.search(seen.decode("utf-8", "replace")):
            break
    return seen.decode("utf-8", "replace")


def test_installed_tui_first_paint(installed: Path) -> None:
    import fcntl
    import termios

    env = _clean_env(installed.parent.parent / "home")
    env.update(TERM="xterm-256color", COLORTERM="truecolor")
    env.pop("CI", None)  # as a user's terminal: no headless shortcuts
    pid, fd = pty.fork()
    if pid == 0:  # the child: becomes the installed app on the pseudo-terminal
        try:
            os.chdir(env["HOME"])
            os.execve(str(installed / "anoman-tui"), [str(installed / "anoman-tui")], env)
        finally:
            os._exit(127)
    try:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
        os.kill(pid, signal.SIGWINCH)
        # The status line and the theme's background can come in different writes.
        both = re.compile(rf"(?s)(?=.*local gateway)(?=.*{re.escape(DARK_BACKGROUND_SGR)})")
        screen = _read_until(fd, both, timeout=60)
        assert DARK_BACKGROUND_SGR in screen, "the bundled theme did not load"
        assert "local gateway" in screen, screen[-2000:]
        assert "Traceback" not in screen
        os.write(fd, b"\x11")  # Ctrl+Q
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            _read_until(fd, re.compile(r"$^"), timeout=0.2)
            finished, status = os.waitpid(pid, os.WNOHANG)
            if finished:
                assert os.waitstatus_to_exitcode(status) == 0
                break
        else:
            pytest.fail("the installed app did not quit on Ctrl+Q")
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)
