"""A stored run and the spec it is about to go on under → go on (re-pinned to that spec), or the changes that stop it.

Shared by `plait resume`, `plait run --resume` and `plait runs fork`. The
run's pinned spec (the sources it started with, compiler/pin.py) and the spec
given now are compiled and compared by meaning (compiler/diff.py); a change
that can affect the part not yet run (compiler/pin.py's `affecting`, over what
the journal shows done: runtime/store/fork.py's `progress`) stops it with exit
5 and every such change listed, unless `--accept-changes`. A run that goes on
is pinned to the spec it goes on under; one journaled before runs were pinned
has nothing to compare with and goes on as before.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from plait.cli import EXIT_SPEC_CHANGED
from plait.term import clean


def check_spec(engine: Any, run_id: str, accept: bool) -> int | None:
    """None to go on, or EXIT_SPEC_CHANGED after listing why not. A run journaled before runs were pinned (or by
    the Python API) has nothing to compare with: it goes on."""
    store = engine.store
    if store is None or engine.pinned is None or engine.spec is None:
        return None
    pin = store.pinned(run_id)
    if pin is None or pin[0] == engine.pinned[0]:
        return None
    row = store.run(run_id)
    return compare(engine, run_id, pin, list(store.events(run_id)), row["entry"] if row else None, accept)


def repin(engine: Any, run_id: str) -> None:
    """Once the run is taken up (its lease held): pinned to the spec it goes on under, which the next resume
    compares with."""
    if engine.store is not None and engine.pinned is not None:
        engine.store.pin(run_id, *engine.pinned)


def compare(
    engine: Any, run_id: str, pin: tuple[str, str | None], events: list[dict[str, Any]], entry: str | None, accept: bool
) -> int | None:
    """The run's pinned spec against the engine's, over the run's rows (`events`): None to go on, else
    EXIT_SPEC_CHANGED after listing the changes that can affect what is left to run."""
    if engine.pinned is None or engine.spec is None or pin[0] == engine.pinned[0]:
        return None
    from plait.compiler.diff import diff_graphs
    from plait.compiler.pin import affecting, compile_pinned
    from plait.runtime.store.fork import progress

    source = pin[1]
    folder = Path(engine.spec).parent
    old = compile_pinned(source, folder) if source is not None else None
    new = compile_pinned(engine.pinned[1], folder)
    if old is None or old.graph is None or new is None or new.graph is None:
        if not accept:
            return _refuse(
                run_id, ["the spec the run started with cannot be compiled any more, so it cannot be compared"]
            )
        changes, bad = [], []
    else:
        changes = diff_graphs(old.graph, new.graph)
        ran, live = progress(events)
        bad = affecting(changes, old.graph, new.graph, entry or new.graph.entry or "", ran, live)
        if bad and not accept:
            return _refuse(run_id, [c.describe() for c in bad])
        if not changes:  # comments or layout: the same spec in meaning
            return None
    what = "accepted (--accept-changes)" if bad or not changes else "none can affect what is left to run"
    print(
        clean(f"plait: the spec changed since run {run_id} started: {len(changes)} change(s) in meaning, {what}"),
        file=sys.stderr,
    )
    return None


def _refuse(run_id: str, lines: list[str]) -> int:
    print(
        clean(f"plait: the spec changed since run {run_id} started, in ways that can affect what is left to run:"),
        file=sys.stderr,
    )
    for line in lines:
        print(clean(f"  {line}"), file=sys.stderr)
    print(
        "plait: go on under the spec it started with, or pass --accept-changes to go on under this one",
        file=sys.stderr,
    )
    return EXIT_SPEC_CHANGED
