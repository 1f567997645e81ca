"""`anoman-tui compare` without the TUI, from a spec to an exit status: starts the local
gateway or resolves the targets, lists the models (for prices, and to pick them when
none are given), runs every model at once, saves the run to the history it is given
and prints it (Rich) or its `--json` document.

The command line (`anoman_tui.cli.compare`) builds the spec and opens the history;
this never opens it itself. Imports the stream core and Rich; never Textual.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import sys
from dataclasses import replace
from typing import IO

from anoman_tui.headless.records import compare_json, comparison_record
from anoman_tui.headless.run import CompareRun, save_to_history
from anoman_tui.headless.spec import CompareSpec, PaneSpec
from anoman_tui.history import HistoryStore
from anoman_tui.history.pending import PendingSaves
from anoman_tui.secrets_in_use import secrets_in_use
from anoman_tui.streaming import GatewayRequestError, ModelInfo, StreamClient
from anoman_tui.streaming.safe_text import mask_secrets, masked, masked_stream
from anoman_tui.targets import connect


async def run_compare(
    spec: CompareSpec,
    *,
    as_json: bool,
    out: IO[str] | None = None,
    model_info: dict[str, ModelInfo] | None = None,
    history: HistoryStore | PendingSaves | None = None,
    target_info: dict[tuple[str, str], ModelInfo] | None = None,
) -> int:
    """Run the comparison and print it; returns the exit status (0: all completed).

    With a `history`, the comparison is saved there once every model has ended.
    """
    # No key leaves: the settings' and this run's are masked in every answer, error and
    # line written (a server may echo one back; a user may paste one into a prompt).
    # The terminal's output loads here: importing the headless commands (as `eval` does)
    # loads no terminal renderer.
    from rich.console import Console
    from rich.live import Live

    from anoman_tui.headless.output import (
        milestones,
        print_heading,
        print_results,
        progress_table,
    )

    secrets = spec_secrets(spec)
    out = masked_stream(out or sys.stdout, secrets)  # sys.stdout looked up now: a caller
    console = Console(file=out, highlight=False, soft_wrap=False)  # may have redirected it
    err_console = Console(file=masked_stream(sys.stderr, secrets), highlight=False)
    live_console = err_console if as_json else console
    live_ok = live_console.is_terminal
    # Into a file or a pipe, text goes as it came: Rich would wrap it at 80 columns,
    # inside sentences and code (a terminal wraps long lines itself).
    as_is = console.soft_wrap = not console.is_terminal

    run = CompareRun(spec, None if live_ok or as_json else milestones(console))
    run.model_info = model_info or {}
    run.target_info = target_info or {}
    if not as_json:
        print_heading(console, spec)
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, run.cancel)
    try:
        if live_ok:
            with Live(
                progress_table(run, secrets), console=live_console, refresh_per_second=8,
                transient=True, get_renderable=lambda: progress_table(run, secrets),
            ):
                await run.run()
        else:
            await run.run()
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)

    for pane in run.panes:
        pane.result = masked(pane.result, secrets)
    record = masked(comparison_record(spec, run), secrets)
    history_id = save_to_history(history, record, spec.record_limit) \
        if history is not None and run.ended else None
    if as_json:
        document = masked(compare_json(spec, record, history_id), secrets)
        out.write(json.dumps(document, ensure_ascii=False) + "\n")
        out.flush()
    else:
        rerun = record if spec.original is not None and spec.replay is None else None
        print_results(console, run, rerun, as_is=as_is)
    return 0 if all(p.result and p.result.status == "completed" for p in run.panes) else 1


def spec_secrets(spec: CompareSpec) -> tuple[str, ...]:
    """The secrets to mask in a run's output: the settings', and the keys it sends."""
    return secrets_in_use([spec.api_key,
                           *(c.api_key.get_secret_value() for c in spec.connections)])


def run_compare_with_target(spec: CompareSpec, *, as_json: bool,
                            history: HistoryStore | PendingSaves | None = None) -> int:
    """`compare` from the command line: each model on its target, or (no targets given)
    against `spec.base_url`, or the local gateway.

    The local gateway starts in-process (a free loopback port, a fresh key) only when a
    model streams from it, or when no models are given and it is the target that lists
    them (the first three it lists are then used). A target whose key variable is unset
    is named, and nothing is sent (exit status 2). With a `history`, the comparison is
    saved there.
    """
    prog = "anoman-tui compare"
    # The default target is reached only to pick the models when none are given.
    picks = not spec.panes and spec.default_target is not None
    wanted = [*(p.target for p in spec.panes if p.target is not None),
              *([spec.default_target] if picks and spec.default_target else [])]
    for target in dict.fromkeys(wanted):
        variable = target.missing_key()
        if variable is not None:
            models = ", ".join(p.model for p in spec.panes
                               if p.target is not None and p.target.name == target.name)
            print(f"{prog}: target {target.name} takes its key from {variable}, which is not "
                  f"set{f' (for {models})' if models else ''}: set it, or choose another "
                  "target; nothing was sent", file=sys.stderr)
            return 2
    gateway = None
    # Models without a target stream from `base_url`: unset, from the local gateway.
    bare = not spec.base_url and (any(p.target is None for p in spec.panes)
                                  or (not spec.panes and spec.default_target is None))
    if bare or any(t.is_local for t in wanted):
        from anoman_tui.gateway.embedded import EmbeddedGateway

        gateway = EmbeddedGateway().start()
        if bare:
            spec = replace(spec, base_url=gateway.base_url, api_key=gateway.api_key,
                           gateway_label=f"the local gateway ({gateway.base_url})")
    local = (gateway.base_url, gateway.api_key) if gateway is not None else None
    if wanted:
        spec = replace(spec, panes=tuple(
            replace(p, connection=connect(p.target, local=local)) if p.target is not None
            else p for p in spec.panes))
        default = connect(spec.default_target, local=local) \
            if picks and spec.default_target else None
        if default is not None:
            spec = replace(spec, base_url=default.base_url,
                           api_key=default.api_key.get_secret_value(),
                           gateway_label=default.label())
        else:
            # Announced as where each model goes, not as the default target, which is
            # neither reached nor started.
            labels = list(dict.fromkeys(c.label() for c in spec.connections))
            spec = replace(spec, default_target=None, gateway_label=", ".join(labels))
    try:
        return asyncio.run(_compare_main(spec, as_json, history))
    finally:
        if gateway is not None:
            gateway.stop()


async def _compare_main(spec: CompareSpec, as_json: bool,
                        store: HistoryStore | PendingSaves | None) -> int:
    if spec.blind:  # as the arena: a cached answer may be the very one revealed before
        spec = replace(spec, headers=(*spec.headers, ("Cache-Control", "no-cache")))
    # The model lists also carry prices: without an Anoman block, cost is estimated
    # from them (as on the compare screen). Needed only to pick models when none given.
    listed: list[ModelInfo] = []
    by_target: dict[tuple[str, str], ModelInfo] = {}
    default = connect(spec.default_target, local=(spec.base_url, spec.api_key)) \
        if spec.default_target is not None else None
    async with StreamClient() as client:
        try:
            if default is not None:
                base_url, key, headers, path = default.list_models_args()
                listed = await client.list_models(base_url, key, (*headers, *spec.headers),
                                                  path)
            elif not spec.connections or len(spec.connections) < len(spec.panes):
                # Only a pane without a target of its own streams from `base_url`.
                listed = await client.list_models(spec.base_url, spec.api_key, spec.headers)
        except GatewayRequestError as exc:
            if not spec.panes:
                print("anoman-tui compare: cannot list models: "
                      + mask_secrets(str(exc), spec_secrets(spec)), file=sys.stderr)
                return 1
        for connection in {c.name: c for c in spec.connections}.values():
            if default is not None and connection.name == default.name:
                models = listed
            else:
                base_url, key, headers, path = connection.list_models_args()
                try:
                    models = await client.list_models(base_url, key,
                                                      (*headers, *spec.headers), path)
                except GatewayRequestError:
                    continue  # prices only: a target without a model list still streams
            by_target.update({(connection.name, m.id): m for m in models})
        if default is not None:  # models picked from its list stream from it too
            by_target.update({(default.name, m.id): m for m in listed})
    if not spec.panes:
        if not listed:
            print("anoman-tui compare: the gateway lists no models; pass --model",
                  file=sys.stderr)
            return 1
        # A blind round draws three at random (shuffled); otherwise the first three.
        # A judge model grades answers; it is never one of the contestants.
        answering = [m.id for m in listed if not m.judge and m.id not in spec.never_draw]
        chosen = (random.sample(answering, min(3, len(answering))) if spec.blind
                  else answering[:3])
        if spec.blind and len(chosen) < 2:
            print("anoman-tui compare: a blind round needs at least two models; the target "
                  "lists fewer", file=sys.stderr)
            return 2
        # Each on the default target, with the comparison's format and parameters.
        endpoint = default.target.default_endpoint(spec.endpoint) if default is not None \
            else spec.endpoint
        spec = replace(spec, panes=tuple(
            PaneSpec(model=model, endpoint=endpoint, temperature=spec.temperature,
                     max_tokens=spec.max_tokens,
                     target=default.target if default is not None else None,
                     connection=default)
            for model in chosen))
    return await run_compare(spec, as_json=as_json, model_info={m.id: m for m in listed},
                             history=store, target_info=by_target)


def run_replay(spec: CompareSpec, *, as_json: bool) -> int:
    """Replay offline: no gateway, no key, nothing saved."""
    return asyncio.run(run_compare(spec, as_json=as_json))
