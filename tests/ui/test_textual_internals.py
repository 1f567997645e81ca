"""Textual internals: the pinned version, the shape of each internal used, and that only
`anoman_tui/ui/textual_internals.py` touches them.

After a Textual upgrade these fail first, saying what to re-check."""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.metadata
import inspect
import pathlib
import pkgutil
import re
import textwrap
import types
from collections.abc import Iterator

import pytest
import textual
from textual import events
from textual.app import App, ComposeResult
from textual.message import Message
from textual.message_pump import MessagePump
from textual.screen import Screen
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget

import anoman_tui
from anoman_tui.ui.textual_internals import (
    TEXTUAL_VERSION,
    RowStylesCache,
    StylesCache,
    made_vertical_scrollbar,
    styles_cache,
    use_row_styles_cache,
    vertical_scrollbar,
)

PACKAGE = pathlib.Path(anoman_tui.__file__).parent
INTERNALS = PACKAGE / "ui" / "textual_internals.py"
TEXTUAL_SOURCE = pathlib.Path(textual.__file__).parent

RECHECK = (
    "re-check every function in anoman_tui/ui/textual_internals.py against the installed "
    "Textual source (its docstring lists each internal and why it is used), re-run "
    "benchmarks/answer_view_lag.py and benchmarks/app_display_lag.py and compare with the "
    "Performance section of benchmarks/README.md, then set TEXTUAL_VERSION"
)


# -- (a) the version ----------------------------------------------------------------------
def test_installed_textual_is_the_version_the_internals_were_written_for() -> None:
    installed = importlib.metadata.version("textual")
    assert installed == TEXTUAL_VERSION, (
        f"Textual {installed} is installed, but anoman_tui/ui/textual_internals.py was "
        f"written against Textual {TEXTUAL_VERSION}: {RECHECK}."
    )
    assert textual.__version__ == installed


# -- (b) each internal still has the shape used ---------------------------------------------
def parameters(function: object) -> list[str]:
    assert callable(function)
    return list(inspect.signature(function).parameters)


def shape(what: str, check: bool) -> None:
    assert check, f"Textual {textual.__version__}: {what} is not as used; {RECHECK}."


def test_styles_cache_internals() -> None:
    shape("Widget._styles_cache", isinstance(Widget()._styles_cache, StylesCache))
    shape(
        "StylesCache.render()",
        parameters(StylesCache.render) == [
            "self", "styles", "size", "base_background", "background", "render_content_line",
            "filters", "border_title", "border_subtitle", "content_size", "padding", "crop",
            "opacity", "ansi_theme", "native_ansi",
        ],
    )
    shape(
        "StylesCache.render_line()",
        parameters(StylesCache.render_line) == [
            "self", "styles", "y", "size", "content_size", "padding", "base_background",
            "background", "render_content_line", "border_title", "border_subtitle", "opacity",
            "ansi_theme", "native_ansi",
        ],
    )
    # The widget draws through StylesCache.render_widget(), which calls render().
    shape("StylesCache.render_widget()", parameters(StylesCache.render_widget)[:3] == [
        "self", "widget", "crop",
    ])
    shape("StylesCache.render_widget() -> render()",
          "self.render(" in inspect.getsource(StylesCache.render_widget))
    # RowStylesCache's own attributes must not shadow StylesCache's.
    init = ast.parse(textwrap.dedent(inspect.getsource(RowStylesCache.__init__)))
    ours = {
        node.attr
        for node in ast.walk(init)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
    }
    theirs = set(vars(StylesCache())) | set(dir(StylesCache))
    shape(f"StylesCache's attributes (clash with {ours & theirs})", not ours & theirs)

    widget = Widget()
    cache = use_row_styles_cache(widget, lambda y: None, widget.render_line)
    assert styles_cache(widget) is cache


def test_scrollbar_internals() -> None:
    widget = Widget()
    shape("Widget._vertical_scrollbar", widget._vertical_scrollbar is None)
    assert made_vertical_scrollbar(widget) is None
    shape("Widget._scroll_update()", parameters(Widget._scroll_update) == [
        "self", "virtual_size",
    ])
    shape("App._start_widget()", parameters(App._start_widget) == ["self", "parent", "widget"])


def test_screen_update_internals() -> None:
    shape("App._batch_count", App()._batch_count == 0)
    shape("Screen._on_timer_update()", parameters(Screen._on_timer_update) == ["self"])
    # The benchmarks time frames by wrapping this one.
    shape("Screen._compositor_refresh()",
          parameters(Screen._compositor_refresh) == ["self"])
    # benchmarks/app_harness.py draws each frame as terminal output through this one.
    shape("App._display()", parameters(App._display) == ["self", "screen", "renderable"])
    # no_composite_while_batching: a composite inside a batch is not drawn, and a layout
    # in a batch composites later (call_later), as the batch may still run.
    shape("App._display() while batching",
          "if self._batch_count:\n                return" in inspect.getsource(App._display))
    shape("Screen._refresh_layout() while batching",
          "self.call_later(self._compositor_refresh)" in inspect.getsource(
              Screen._refresh_layout))


def test_theme_internals() -> None:
    # start_with_theme does to an app not yet started what _watch_theme does to the app.
    shape("App._refresh_truecolor_filter()",
          parameters(App._refresh_truecolor_filter) == ["self", "theme"])
    watch = inspect.getsource(App._watch_theme)
    shape("App._watch_theme()", all(part in watch for part in (
        '"-theme-', '"-dark-mode"', '"-light-mode"', "update_classes(",
        "_refresh_truecolor_filter(self.ansi_theme)", "refresh_css")))


def test_partial_update_internals() -> None:
    from textual._compositor import ChopsUpdate, Compositor

    compositor = Compositor()
    shape("Compositor.render_partial_update()",
          parameters(Compositor.render_partial_update) == ["self"])
    shape("Compositor._dirty_regions", isinstance(compositor._dirty_regions, set))
    shape("Compositor._regions_to_spans()",
          parameters(Compositor._regions_to_spans) == ["regions"])
    shape("Compositor.cuts / .visible_widgets",
          isinstance(Compositor.cuts, property)
          and isinstance(Compositor.visible_widgets, property))
    shape("ChopsUpdate()", parameters(ChopsUpdate.__init__) == [
        "self", "chops", "spans", "chop_ends",
    ])
    # The repaints a widget asks for, and the screen's set that composites them.
    widget = Widget()
    shape("Widget._repaint_required", widget._repaint_required is False)
    shape("Screen._dirty_widgets", isinstance(Screen()._dirty_widgets, set))


def test_strip_equality_compares_segments() -> None:
    # AnswerView keeps unchanged rows by Strip equality: the segments must decide it.
    a = Strip.blank(3)
    assert a == Strip.blank(3) and a != Strip.blank(4)


class _OwnBar(ScrollBar):
    pass


class _BarHost(App[None]):
    def compose(self) -> ComposeResult:
        yield Widget()


async def test_vertical_scrollbar_is_made_once_started_and_hidden() -> None:
    app = _BarHost()
    async with app.run_test(size=(20, 5)) as pilot:
        widget = app.query_one(Widget)
        bar = vertical_scrollbar(widget, lambda: _OwnBar(vertical=True))
        assert isinstance(bar, _OwnBar) and not bar.display and bar.parent is widget
        await pilot.pause()
        assert bar.is_running  # started: it gets its own messages
        assert vertical_scrollbar(widget, lambda: _OwnBar(vertical=True)) is bar
        assert made_vertical_scrollbar(widget) is bar is widget.vertical_scrollbar


# -- (c) no Textual private outside textual_internals.py --------------------------------------
def textual_private_names() -> set[str]:
    """Every underscore name Textual defines as a method or an attribute."""
    names: set[str] = set()
    for path in TEXTUAL_SOURCE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        names.update(re.findall(r"\bdef (_[A-Za-z]\w*)", text))
        names.update(re.findall(r"\bself\.(_[A-Za-z]\w*)\s*(?::[^=\n]*)?=(?!=)", text))
        names.update(re.findall(r"^[ \t]+(_[A-Za-z]\w*)\s*[:=]", text, re.M))
    return {name for name in names if not name.endswith("__")}


def is_textual(cls: type) -> bool:
    return (cls.__module__ or "").split(".")[0] == "textual"


def textual_class_private_names(cls: type) -> set[str]:
    """Private names the Textual classes in `cls`'s MRO define (class and instance)."""
    names: set[str] = set()
    for base in cls.__mro__:
        if is_textual(base):
            names |= textual_own_private_names(base)
    return names


@functools.cache
def textual_own_private_names(base: type) -> frozenset[str]:
    """Private names one Textual class defines itself (class and instance). Kept once
    read: the project's classes share a few bases (`Widget`, `Screen`, `App`), whose
    source takes most of a second each to find and parse."""
    names = {n for n in vars(base) if n.startswith("_") and not n.endswith("__")}
    try:
        source = textwrap.dedent(inspect.getsource(base))
    except (OSError, TypeError):
        return frozenset(names)
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and node.attr.startswith("_")
        ):
            names.add(node.attr)
    return frozenset(names)


def textual_handler_names() -> set[str]:
    """`on_<message>` names of every Textual message (`_on_<message>` is Textual's own)."""
    found: set[str] = set()
    pending = [Message]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        handler = getattr(cls, "handler_name", None)  # set for each subclass
        if is_textual(cls) and handler:
            found.add(handler)
    return found


def project_private_names(trees: list[ast.Module]) -> set[str]:
    """Private names the project defines itself (methods, attributes, class attributes)."""
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return {name for name in names if name.startswith("_")}


def receiver_is_own(node: ast.expr) -> bool:
    """`self`, `cls` or `super()`: the class's own attributes (checked against its bases)."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
    )


def private_uses(
    tree: ast.Module,
    namespace: dict[str, object],
    textual_names: set[str],
    own_names: set[str],
    handlers: set[str],
) -> Iterator[tuple[int, str]]:
    """(line, what) for each use of a Textual private in one module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if any(part.startswith("_") for part in alias.name.split(".")[1:]) and (
                    alias.name.split(".")[0] == "textual"
                ):
                    yield node.lineno, f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "textual":
            module = node.module or ""
            if any(part.startswith("_") for part in module.split(".")):
                yield node.lineno, f"from {module} import ..."
            for alias in node.names:
                if alias.name.startswith("_"):
                    yield node.lineno, f"from {module} import {alias.name}"
        elif (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.endswith("__")
            and not receiver_is_own(node.value)
            and node.attr in textual_names
            and node.attr not in own_names
        ):
            yield node.lineno, ast.unparse(node)
    yield from _class_uses(tree.body, namespace, handlers)


def walk_class(statement: ast.ClassDef) -> Iterator[ast.AST]:
    """The nodes of a class body, not descending into nested classes."""
    pending: list[ast.AST] = list(statement.body)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, ast.ClassDef):
            pending.extend(ast.iter_child_nodes(node))


def _class_uses(
    body: list[ast.stmt], namespace: dict[str, object], handlers: set[str]
) -> Iterator[tuple[int, str]]:
    for statement in body:
        if not isinstance(statement, ast.ClassDef):
            continue
        cls = namespace.get(statement.name)
        if not isinstance(cls, type):
            continue
        yield from _class_uses(statement.body, dict(vars(cls)), handlers)  # nested classes
        if not any(is_textual(base) for base in cls.__mro__[1:]):
            continue
        private = textual_class_private_names(cls)
        for node in walk_class(statement):
            if (
                isinstance(node, ast.Attribute)
                and receiver_is_own(node.value)
                and node.attr in private
            ):
                yield node.lineno, f"{cls.__qualname__}: {ast.unparse(node)}"
        for item in statement.body:
            name = ""
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                name = item.name
            elif isinstance(item, ast.Assign | ast.AnnAssign):
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                name = next((t.id for t in targets if isinstance(t, ast.Name)), "")
            if name in private or (name.startswith("_") and name[1:] in handlers):
                yield item.lineno, f"{cls.__qualname__}: defines {name}"


@pytest.fixture(scope="module")
def checker_names() -> tuple[set[str], set[str]]:
    return textual_private_names(), textual_handler_names()


def project_modules() -> list[tuple[str, pathlib.Path]]:
    modules = [("anoman_tui", PACKAGE / "__init__.py")]
    for info in pkgutil.walk_packages([str(PACKAGE)], "anoman_tui."):
        path = PACKAGE.joinpath(*info.name.split(".")[1:])
        path = path / "__init__.py" if info.ispkg else path.with_suffix(".py")
        modules.append((info.name, path))
    return modules


def test_only_textual_internals_touches_textual_privates(
    checker_names: tuple[set[str], set[str]],
) -> None:
    textual_names, handlers = checker_names
    modules = [(name, path) for name, path in project_modules() if path != INTERNALS]
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules}
    # On an object of unknown type, a name the project defines itself is taken as its own.
    own = project_private_names(list(trees.values()))
    found = sorted(
        f"{path.relative_to(PACKAGE.parent)}:{line}: {what}"
        for (name, path) in modules
        for line, what in private_uses(
            trees[name], vars(importlib.import_module(name)), textual_names, own, handlers
        )
    )
    assert not found, (
        "Textual privates used outside anoman_tui/ui/textual_internals.py (add a named "
        "function there, with why and which benchmark, and call it):\n" + "\n".join(found)
    )


CHECKER_SAMPLE = '''
from textual._styles_cache import StylesCache
from textual.widget import Widget
from textual.scrollbar import ScrollBar


class Plain:
    def __init__(self):
        self._styles_cache = None  # not a Textual object: the project's own
        self._width = 0


class View(Widget):
    def __init__(self):
        super().__init__()
        self._blocks = []  # the project's own: Widget has no _blocks
        self._styles_cache = StylesCache()  # Widget's

    def layout(self, app, strip):
        self._scroll_update(None)
        app._batch_count
        strip._segments
        return self._blocks, self._other._row


class Bar(ScrollBar):
    def _on_resize(self):
        pass

    def _on_own_timer(self):
        pass
'''


def test_the_checker_flags_textual_privates_and_not_the_projects_own(
    checker_names: tuple[set[str], set[str]],
) -> None:
    textual_names, handlers = checker_names
    module = types.ModuleType("sample")
    exec(compile(CHECKER_SAMPLE, "sample", "exec"), vars(module))
    tree = ast.parse(CHECKER_SAMPLE)
    own = {"_blocks", "_other", "_row", "_width", "_on_own_timer"}
    found = {what for _, what in private_uses(tree, vars(module), textual_names, own, handlers)}
    assert found == {
        "from textual._styles_cache import ...",
        "View: self._styles_cache",
        "View: self._scroll_update",
        "app._batch_count",
        "strip._segments",
        "Bar: defines _on_resize",
    }


def test_output_thread_internals() -> None:
    # Why the app ends its process when its exit blocks (end_process_if_exit_blocks): the
    # output thread's queue is bounded and nothing catches a failed write in its loop.
    writer = importlib.import_module("textual.drivers._writer_thread")
    shape("textual.drivers._writer_thread.MAX_QUEUED_WRITES",
          isinstance(getattr(writer, "MAX_QUEUED_WRITES", None), int))
    run = inspect.getsource(writer.WriterThread.run)
    shape("WriterThread.run() (stops at a failed write)", "except" not in run)


def test_footer_key_internals() -> None:
    # set_footer_key_enabled(): FooterKey keeps its disabled state in `_disabled` (read by
    # its mouse handler) and dims through the `-disabled` class, as its __init__ sets them.
    from textual.widgets._footer import FooterKey

    init = inspect.getsource(FooterKey.__init__)
    shape("FooterKey.__init__ sets _disabled and -disabled",
          "self._disabled = disabled" in init and "-disabled" in init)
    shape("FooterKey.on_mouse_down() reads _disabled",
          "self._disabled" in inspect.getsource(FooterKey.on_mouse_down))
    shape("FooterKey's CSS dims -disabled", "&.-disabled" in FooterKey.DEFAULT_CSS)


def test_offstage_screen_internals() -> None:
    # mount_offstage(): push_screen's own first step, which mounts a screen not yet shown.
    shape("App._get_screen()", parameters(App._get_screen) == ["self", "screen"])
    shape("App._get_screen() registers a screen not running",
          "_register" in inspect.getsource(App._get_screen))
    # KeepStylesOnResume: Screen's handler restyles only when the event asks it to, and
    # handlers of one name run class by class, the subclass's first.
    shape("ScreenResume.refresh_styles", events.ScreenResume().refresh_styles is True)
    shape("Screen._on_screen_resume() reads refresh_styles",
          "event.refresh_styles" in inspect.getsource(Screen._on_screen_resume))
    shape("MessagePump._get_dispatch_methods() walks the MRO",
          "__mro__" in inspect.getsource(MessagePump._get_dispatch_methods))
    shape("Screen._refresh_layout()",
          parameters(Screen._refresh_layout) == ["self", "size", "scroll"])
    # mount_offstage() clears the layout flag as the update timer does after its layout.
    shape("Screen._on_timer_update() clears _layout_required after a layout",
          "self._layout_required = False" in inspect.getsource(Screen._on_timer_update))
    # resume_now(): Screen's handler called directly; the message that follows stops at
    # KeepStylesOnResume's handler (prevent_default keeps the MRO walk from going on).
    shape("Screen._on_screen_resume(event)",
          parameters(Screen._on_screen_resume) == ["self", "event"])
    shape("MessagePump._get_dispatch_methods() stops at prevent_default()",
          "_no_default_action" in inspect.getsource(MessagePump._get_dispatch_methods))
    from textual._compositor import Compositor

    shape("Compositor.render_update()",
          parameters(Compositor.render_update) == ["self", "full", "screen_stack",
                                                   "simplify"])
