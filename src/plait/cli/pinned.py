"""A stored run and the spec it is about to go on under → go on (re-pinned to that spec), or exit 5 with the changes.

Shared by `plait resume`, `plait run --resume` and `plait runs fork`. Which
changes stop a run is decided in src/plait/runtime/pinning.py (shared with
`plait serve` and `plait batch`); this module only prints them and gives the
exit code: 5 with every blocking change listed, unless `--accept-changes`. A
run that goes on is pinned to the spec it goes on under; one journaled before
runs were pinned has nothing to compare with and goes on as before.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from plait.cli import EXIT_SPEC_CHANGED
from plait.term import clean

if TYPE_CHECKING:
    from plait.runtime.pinning import SpecCheck


def check_spec(engine: Any, run_id: str, accept: bool) -> int | None:
    """None to go on, or EXIT_SPEC_CHANGED after listing why not. A run journaled before runs were pinned (or by
    the Python API) has nothing to compare with: it goes on."""
    from plait.runtime.pinning import check

    return _decide(check(engine, run_id), run_id, accept)


def compare(
    engine: Any, run_id: str, pin: tuple[str, str | None], events: list[dict[str, Any]], entry: str | None, accept: bool
) -> int | None:
    """The run's pinned spec against the engine's, over the run's rows (`events`): None to go on, else
    EXIT_SPEC_CHANGED after listing the changes that can affect what is left to run."""
    from plait.runtime import pinning

    return _decide(pinning.compare(engine, run_id, pin, events, entry), run_id, accept)


def _decide(found: SpecCheck | None, run_id: str, accept: bool) -> int | None:
    if found is None:
        return None
    if found.blocked and not accept:
        return _refuse(run_id, found.blocking)
    if not found.changes and not found.blocked:  # comments or layout: the same spec in meaning
        return None
    what = "accepted (--accept-changes)" if found.blocked else "none can affect what is left to run"
    print(
        clean(f"plait: the spec changed since run {run_id} started: {len(found.changes)} change(s) in meaning, {what}"),
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
