"""Spec files with tests → their outcomes, the files shared out over worker processes (`plait test --workers N`).

In one process the tests already run side by side as tasks of one event loop, which is what a run waiting on a
model needs; offline, a run is Python on one core, so a suite of many spec files can use more cores by giving
each worker process a share of the files. Each worker compiles its files, runs their selected tests in a
`Session` of its own and sends back plain data: each outcome's verdict, failures (by the expectation's index),
run id and time, and when asked the run's journal rows (what coverage reads). The parent maps them back onto its
own compiled records, so reports and coverage read the same objects as in one process.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from .runner import Failure, Outcome, Session, SpecTests, load_tests

__all__ = ["run_in_workers"]


def run_in_workers(
    specs: list[SpecTests], selected: set[str], workers: int, options: dict[str, Any], rows: bool = False
) -> tuple[list[Outcome], dict[str, list[Any]]]:
    """The outcomes of the `selected` tests (ids `FILE::NAME`) of `specs`, in the order the specs give them, run by
    up to `workers` processes; with `rows`, each run's journal rows by run id as well."""
    files = [spec for spec in specs if spec.graph is not None and any(_id(t) in selected for t in spec.tests)]
    shares: list[list[str]] = [[] for _ in range(max(1, min(workers, len(files))))]
    for index, spec in enumerate(files):
        shares[index % len(shares)].append(str(spec.path))
    # fork where there is one: a worker starts with plait already imported, so a share costs no start-up.
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with ProcessPoolExecutor(max_workers=len(shares), mp_context=context) as pool:
        done = list(pool.map(_work, shares, [selected] * len(shares), [options] * len(shares), [rows] * len(shares)))
    by_id: dict[str, dict[str, Any]] = {item["id"]: item for share in done for item in share}
    journal: dict[str, list[Any]] = {}
    outcomes = []
    for spec in files:
        for test in spec.tests:
            item = by_id.get(_id(test))
            if item is None:
                continue
            outcome = Outcome(test, spec, status=item["status"], message=item["message"], run_id=item["run_id"])
            outcome.seconds = item["seconds"]
            outcome.failures = [
                Failure(message, test.expects[index] if index is not None else None)
                for message, index in item["failures"]
            ]
            outcomes.append(outcome)
            if item["rows"] is not None and outcome.run_id is not None:
                journal[outcome.run_id] = item["rows"]
    return outcomes, journal


def _id(test: Any) -> str:
    return f"{test.file}::{test.name}"


def _work(paths: list[str], selected: set[str], options: dict[str, Any], rows: bool) -> list[dict[str, Any]]:
    """One worker's share: its files compiled and their selected tests run; the outcomes as plain data."""
    specs = load_tests([Path(p) for p in paths])
    session = Session(**options)
    try:
        outcomes = asyncio.run(session.run(specs, lambda test: _id(test) in selected))
        return [
            {
                "id": _id(outcome.test),
                "status": outcome.status,
                "message": outcome.message,
                "run_id": outcome.run_id,
                "seconds": outcome.seconds,
                "failures": [
                    (f.message, outcome.test.expects.index(f.expectation) if f.expectation is not None else None)
                    for f in outcome.failures
                ],
                "rows": list(session.store.events(outcome.run_id)) if rows and outcome.run_id else None,
            }
            for outcome in outcomes
        ]
    finally:
        session.close()
