"""`plait batch --executor ray` on a real local Ray instance: the same results as in this process, the runs spread
over the actors (not the driver), the concurrency bound per actor, effects once, and a re-run reads the journal."""

from __future__ import annotations

import os
import shutil
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest

from batch_helpers import calls, results, write_echo, write_effects, write_lines
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


def test_ray_actors_share_a_postgresql_journal(ray_instance: Any, pg_url: str, tmp_path: Path) -> None:
    root = write_effects(tmp_path / "pg", rows=10, delay="10ms")
    # A database may outlive the test: inputs of its own make this batch new there.
    write_lines(root / "in.jsonl", [f"ticket {i} {uuid.uuid4().hex}" for i in range(10)])
    assert batch(root, "--executor", "ray", "--store", pg_url, "--concurrency", "4") == 0
    first = results(root / "out.jsonl")
    acted = (root / "effects.txt").read_text().split()
    assert [r["stop_reason"] for r in first] == ["until"] * 10 and len(set(acted)) == 10
    assert not (root / ".plait" / "journal.db").exists()  # the runs are in PostgreSQL, not beside the spec
    # Another process (this one, in-process this time) finds every row there and runs none again.
    assert batch(root, "--store", pg_url) == 0
    assert results(root / "out.jsonl") == first
    assert (root / "effects.txt").read_text().split() == acted


def test_a_dead_actor_fails_its_row_and_the_others_go_on(ray_instance: Any, tmp_path: Path) -> None:
    lines = [{"text": f"t{i}", "delay": 0.05} for i in range(8)]
    lines[2] = {"text": "die", "delay": 0.05}
    root = write_echo(tmp_path / "die", lines)
    assert batch(root, "--executor", "ray", "--actors", "2", "--concurrency", "2") == 1
    rows = results(root / "out.jsonl")
    assert [r["index"] for r in rows] == list(range(8))
    assert [r["index"] for r in rows if r["stop_reason"] == "error"] == [2]  # one row at a time per actor
    assert rows[2]["error"]["kind"] == "executor_failed" and "run the batch again" in rows[2]["error"]["message"]
    assert [r["output"]["text"] for r in rows if r["index"] != 2] == [f"T{i}" for i in range(8) if i != 2]
    assert len({c["pid"] for c in calls(root) if c["text"] in ("t6", "t7")}) == 1  # the survivor took the rest
