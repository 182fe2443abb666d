"""`plait batch --executor ray` on a real local Ray instance: the same results as in this process, the runs spread
over the actors (not the driver), the concurrency bound per actor, effects once, and a re-run reads the journal."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest

from batch_helpers import calls, results, write_effects
from plait.cli import main

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[Any]:
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'plait[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
    try:
        yield ray
    finally:
        ray.shutdown()


def batch(root: Path, *extra: str) -> int:
    return main(["batch", str(root / "spec.plait"), str(root / "in.jsonl"), "-o", str(root / "out.jsonl"), *extra])


def comparable(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a row's result says, without its run id (each project is its own batch)."""
    return [(r["index"], r["line"], r["stop_reason"], r["output"], r["error"] and r["error"]["kind"]) for r in rows]


@pytest.mark.parametrize("actors", [1, 2])
def test_ray_gives_the_results_of_the_in_process_executor(
    ray_instance: Any, echo_project: Path, tmp_path: Path, actors: int
) -> None:
    with (echo_project / "in.jsonl").open("a") as fh:
        fh.write('{"text": "boom"}\nnot json\n')  # a failing row and a bad line: row errors on both sides
    on_ray = tmp_path / f"ray-{actors}"
    shutil.copytree(echo_project, on_ray)
    assert batch(echo_project, "--concurrency", "4") == 1
    assert batch(on_ray, "--executor", "ray", "--actors", str(actors), "--concurrency", "4") == 1
    expected = comparable(results(echo_project / "out.jsonl"))
    assert comparable(results(on_ray / "out.jsonl")) == expected
    assert [r[2] for r in expected] == ["done"] * 8 + ["error", "error"]
    ran = calls(on_ray)
    pids = Counter(c["pid"] for c in ran)
    assert len(pids) == actors and os.getpid() not in pids  # every run in an actor, each actor hosting many
    assert all(n >= 2 for n in pids.values()) and sum(pids.values()) == 8
    assert max(c["peak"] for c in ran) <= 4 // actors  # each actor hosts its share of the bound


def test_ray_rows_act_once_and_a_rerun_reads_the_shared_journal(ray_instance: Any, tmp_path: Path) -> None:
    root = write_effects(tmp_path / "fx", rows=12, delay="20ms")
    assert batch(root, "--executor", "ray", "--concurrency", "6") == 0
    first = results(root / "out.jsonl")
    acted = (root / "effects.txt").read_text().split()
    assert [r["stop_reason"] for r in first] == ["until"] * 12
    assert sorted(r["output"] for r in first) == sorted(acted) and len(set(acted)) == 12
    # The actors wrote the project's journal; this process reads every row back and runs nothing.
    assert batch(root, "--executor", "ray", "--concurrency", "6") == 0
    assert results(root / "out.jsonl") == first
    assert (root / "effects.txt").read_text().split() == acted
    assert main(["runs", "--dir", str(root), "--status", "until", "--json"]) == 0
