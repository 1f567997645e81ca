"""The versions the tests were written against are the ones installed.

pyproject.toml keeps the runtime requirements as ranges (only Textual is exact) and
pins in the `test` extra the exact releases the snapshot tests were drawn with and
whose figures the tests compare. A snapshot that fails because another Rich or
Pygments is installed says nothing about the app, so this names the culprit first.
"""

from __future__ import annotations

import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PYPROJECT = tomllib.loads(
    (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
RUNTIME = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
TEST_EXTRA = [Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"]["test"]]
# Textual and Rich draw the screen, markdown-it-py splits answers into blocks, Pygments
# colours code: each changes what the snapshots compare.
RENDERING = ("textual", "rich", "markdown-it-py", "pygments")


def exact_pins(requirements: list[Requirement]) -> dict[str, str]:
    """name -> version of each `==` requirement that applies to this interpreter."""
    pins: dict[str, str] = {}
    for requirement in requirements:
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        for spec in requirement.specifier:
            if spec.operator == "==":
                pins[canonicalize_name(requirement.name)] = spec.version
    return pins


def installed_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def test_installed_versions_are_the_pinned_ones() -> None:
    pins = {**exact_pins(RUNTIME), **exact_pins(TEST_EXTRA)}
    wrong = [
        f"{name}: pyproject.toml pins {pinned}, installed is {installed_version(name)}"
        for name, pinned in sorted(pins.items())
        if installed_version(name) != pinned
    ]
    assert not wrong, (
        "; ".join(wrong) + ". The tests were written against the pinned versions: "
        "reinstall with `pip install -e '.[test]'` (in a virtual environment of its own)")


def test_rendering_libraries_are_pinned_for_the_snapshots() -> None:
    runtime_pins, test_pins = exact_pins(RUNTIME), exact_pins(TEST_EXTRA)
    # Textual exactly, for users too: tests/ui/test_textual_internals.py checks its
    # private internals against one version.
    assert "textual" in runtime_pins
    for name in RENDERING:
        assert name in runtime_pins or name in test_pins, (
            f"{name} renders what the snapshots compare: pin it with == in the test extra")


def test_runtime_requirements_are_ranges_except_textual() -> None:
    pinned = set(exact_pins(RUNTIME)) - {"textual"}
    assert not pinned, (
        f"{', '.join(sorted(pinned))}: exact in [project] dependencies; give users a range "
        "and pin the exact version in the test extra")


def test_test_pins_fall_within_the_runtime_ranges() -> None:
    # Otherwise `pip install -e '.[test]'` asks for two versions at once and fails.
    ranges = {canonicalize_name(r.name): r.specifier for r in RUNTIME}
    for name, pinned in exact_pins(TEST_EXTRA).items():
        if name in ranges:
            assert ranges[name].contains(pinned, prereleases=True), (
                f"{name}: the test extra pins {pinned}, outside the runtime range "
                f"{ranges[name]}")
