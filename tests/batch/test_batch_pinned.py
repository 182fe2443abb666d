"""A batch's runs are pinned to their spec: a row's run is resumed under an edited spec only when the edit cannot
affect what is left to run (else it is left as it is and reported `spec_changed`, with the changes, unless they are
accepted), and `plait resume` of a batch row checks the spec as it does for any run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from batch_helpers import EFFECT_SPEC, results, write_effects
from plait.cli import main
from plait.cli.batch import Progress, exit_status
from plait.runtime.batch import Row, RowResult, run_row
from plait.runtime.engine import Engine

OUTAGE = {"error": {"kind": "server_error", "message": "down"}}
CALL = {"tool_calls": [{"name": "record", "arguments": {"note": "x"}}]}
#: The agent that has not finished (its first call failed) gets a system prompt: it can affect what is left to run.
AFFECTING = EFFECT_SPEC.replace('agent main "does the work" {', 'agent main "does the work" {\n  system = "Be brief."')
#: A step the entry never reaches: it cannot.
HARMLESS = EFFECT_SPEC + '\nstep extra { model = m, prompt = "Unrelated." }\n'


def failed_row(tmp_path: Path) -> tuple[Path, str]:
    """A one-row batch whose run failed on a server outage (a rerun resumes it); (project, run id)."""
    root = write_effects(tmp_path / "p", rows=1, delay="0ms")
    (root / "replies.json").write_text(json.dumps([OUTAGE, CALL]))
    code = main(["batch", str(root / "spec.plait"), str(root / "in.jsonl"), "-o", str(root / "out.jsonl")])
    assert code == 1
    (row,) = results(root / "out.jsonl")
    assert row["stop_reason"] == "error"
    return root, row["run_id"]


async def resume_row(root: Path, run_id: str, accept: bool = False) -> tuple[RowResult, Engine]:
    engine = Engine.from_spec(root / "spec.plait")
    try:
        return await run_row(engine, Row(0, 1, "ticket 0", None, run_id, resume=True), accept_changes=accept), engine
    finally:
        await engine.aclose()


def stored(root: Path, run_id: str) -> tuple[str, int, str | None]:
    """(status, rows, pinned digest) of the run in the project's journal."""
    engine = Engine.from_spec(root / "spec.plait")
    try:
        store = engine.store
        assert store is not None
        row = store.run(run_id)
        pin = store.pinned(run_id)
        assert row is not None
        return row["status"], len(list(store.events(run_id))), None if pin is None else pin[0]
    finally:
        asyncio.run(engine.aclose())


def test_a_row_is_not_resumed_under_an_edit_that_can_affect_it_unless_accepted(tmp_path: Path) -> None:
    root, run_id = failed_row(tmp_path)
    status, rows, pinned = stored(root, run_id)
    assert pinned is not None  # a batch's run is pinned, as `plait run`'s is
    (root / "spec.plait").write_text(AFFECTING)
    # `plait resume` of the row checks the spec as for any run.
    assert main(["resume", run_id, "--dir", str(root)]) == 5
    result, _ = asyncio.run(resume_row(root, run_id))
    assert (result.run_id, result.stop_reason) == (run_id, "spec_changed")
    assert result.error is not None and result.error["kind"] == "spec_changed"
    assert [c.split(":")[0] for c in result.error["changes"]] == ["~ agent main"]
    assert "agent main: system" in result.error["message"]
    # Left as it was: no row added, nothing run, still pinned to the spec it started with.
    assert stored(root, run_id) == (status, rows, pinned)
    assert not (root / "effects.txt").exists()
    result, engine = asyncio.run(resume_row(root, run_id, accept=True))
    assert result.stop_reason == "until"
    assert len((root / "effects.txt").read_text().split()) == 1
    assert stored(root, run_id)[2] == engine.pinned[0] != pinned  # type: ignore[index]


def test_a_row_is_resumed_under_a_harmless_edit_and_re_pinned(tmp_path: Path) -> None:
    root, run_id = failed_row(tmp_path)
    pinned = stored(root, run_id)[2]
    (root / "spec.plait").write_text(HARMLESS)
    result, engine = asyncio.run(resume_row(root, run_id))
    assert result.stop_reason == "until", result.error
    assert stored(root, run_id)[2] == engine.pinned[0] != pinned  # type: ignore[index]


def test_a_row_not_resumed_is_counted_in_the_summary_and_the_exit_status() -> None:
    progress = Progress(3, live=False)
    for index, reason in enumerate(["done", "spec_changed", "interrupt"]):
        progress.add(RowResult(index, index + 1, f"r{index}", reason))
    assert "1 not resumed (spec changed; --accept-changes)" in progress.summary()
    assert exit_status(["done", "spec_changed", "interrupt"]) == 5
    assert exit_status(["error", "spec_changed"]) == 1
