"""A stored run and the engine about to take it up → whether its spec changed since, and which changes stop it going on.

A run is pinned to the spec it started with (compiler/pin.py: its sources and
their digest, stored in the journal's `specs` table). Everything that takes a
run up again under a spec asks here first: `plait resume`, `plait run
--resume` and `plait runs fork` (which print and exit 5), `plait serve`'s
recovery and decisions (which hold the run back, or answer 409), and a rerun
of `plait batch` (which reports the row refused). The pinned spec and the
engine's are compiled and compared by meaning (compiler/diff.py); the changes
that can reach the part of the run not yet run (compiler/pin.py's `affecting`,
over what the journal shows done: store/fork.py's `progress`) are *blocking*,
the rest harmless. A run journaled before runs were pinned, or an engine with
no spec file (the Python API's `from_graph`), has nothing to compare: None.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engine import Engine

__all__ = ["SpecCheck", "check", "check_export", "compare", "repin"]

#: What `blocking` says when the pinned spec no longer compiles (nothing to compare it with).
UNCOMPILABLE = "the spec the run started with cannot be compiled any more, so it cannot be compared"


@dataclass(frozen=True)
class SpecCheck:
    """The pinned spec against the engine's: how many changes in meaning, and those that can affect the rest."""

    run_id: str
    #: Every change in meaning, described (`Change.describe()`); empty when only comments or layout changed.
    changes: list[str] = field(default_factory=list)
    #: The changes that can affect what is left to run (or why they cannot be known): the run does not go on
    #: under this spec unless they are accepted.
    blocking: list[str] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        return bool(self.blocking)

    def message(self) -> str:
        """One line: why the run does not go on (for a log, an HTTP error, a batch row)."""
        return (
            f"the spec changed since run {self.run_id} started, in ways that can affect what is left to run: "
            + "; ".join(self.blocking)
        )


def check(engine: Engine, run_id: str) -> SpecCheck | None:
    """The stored run `run_id` against the engine's spec; None when there is nothing to compare (not pinned, the
    engine not built from a spec file, no journal, or the very same spec)."""
    store = engine.store
    if store is None or engine.pinned is None or engine.spec is None:
        return None
    pin = store.pinned(run_id)
    if pin is None or pin[0] == engine.pinned[0]:
        return None
    row = store.run(run_id)
    return compare(engine, run_id, pin, list(store.events(run_id)), row["entry"] if row else None)


def check_export(engine: Engine, document: dict[str, Any]) -> SpecCheck | None:
    """An export (`plait runs export`) about to be restored on the engine, against the engine's spec, before anything
    is imported; None when the export carries no pin (an older export, a snapshot) or the spec is the same."""
    pin = document.get("pin") if isinstance(document, dict) else None
    if not isinstance(pin, dict) or not isinstance(pin.get("digest"), str):
        return None
    events = document.get("events")
    source = pin.get("spec")
    return compare(
        engine,
        str(document.get("run_id")),
        (pin["digest"], source if isinstance(source, str) else None),
        events if isinstance(events, list) else [],
        document.get("entry") if isinstance(document.get("entry"), str) else None,
    )


def compare(
    engine: Engine, run_id: str, pin: tuple[str, str | None], events: list[dict[str, Any]], entry: str | None
) -> SpecCheck | None:
    """The pinned spec `pin` (digest, sources) against the engine's, over the run's rows `events`: None when the
    engine has no pin or the digests agree, else the changes and those that can affect what is left to run."""
    if engine.pinned is None or engine.spec is None or pin[0] == engine.pinned[0]:
        return None
    from plait.compiler.diff import diff_graphs
    from plait.compiler.pin import affecting, compile_pinned

    from .store.fork import progress

    source = pin[1]
    folder = Path(engine.spec).parent
    old = compile_pinned(source, folder) if source is not None else None
    new = compile_pinned(engine.pinned[1], folder)
    if old is None or old.graph is None or new is None or new.graph is None:
        return SpecCheck(run_id, [], [UNCOMPILABLE])
    changes = diff_graphs(old.graph, new.graph)
    ran, live = progress(events)
    bad = affecting(changes, old.graph, new.graph, entry or new.graph.entry or "", ran, live)
    return SpecCheck(run_id, [c.describe() for c in changes], [c.describe() for c in bad])


def repin(engine: Engine, run_id: str) -> None:
    """Once the run is taken up (its lease held): pinned to the spec it goes on under, which the next check
    compares with."""
    if engine.store is not None and engine.pinned is not None:
        engine.store.pin(run_id, *engine.pinned)
