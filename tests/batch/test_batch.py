"""`plait batch` in this process: results in input order, a bad line is that row's error, the concurrency bound
holds, and running the same batch again reads what finished from the journal instead of running it again."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import Raw, calls, results, write_echo, write_effects, write_lines
from plait.cli import main
from plait.runtime.batch import InOrder, RowResult, plan, read_rows, run_batch
from plait.runtime.engine import Engine
from plait.runtime.providers.base import Message, ModelResponse, ToolCall, Usage


def batch(root: Path, *extra: str, inputs: str = "in.jsonl") -> int:
    return main(["batch", str(root / "spec.plait"), str(root / inputs), "-o", str(root / "out.jsonl"), *extra])


def test_results_come_in_input_order_though_rows_finish_out_of_order(echo_project: Path) -> None:
    assert batch(echo_project, "--concurrency", "4") == 0
    rows = results(echo_project / "out.jsonl")
    assert [r["index"] for r in rows] == list(range(8))
    assert [r["output"] for r in rows] == [{"text": f"T{i}"} for i in range(8)]
    assert all(r["stop_reason"] == "done" and r["error"] is None for r in rows)
    assert len({r["run_id"] for r in rows}) == 8
    finished = [c["text"] for c in calls(echo_project)]
    assert sorted(finished) == [f"t{i}" for i in range(8)]
    assert finished != [f"t{i}" for i in range(8)]  # they did finish out of order: the file put them back


@pytest.mark.parametrize("concurrency", [1, 3])
def test_no_more_runs_in_flight_than_the_concurrency(echo_project: Path, concurrency: int) -> None:
    assert batch(echo_project, "--concurrency", str(concurrency)) == 0
    assert max(c["peak"] for c in calls(echo_project)) == concurrency


class CountingModel:
    """An in-process model with a delay that counts how many of its calls overlap."""

    name = "m"

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.in_flight = self.peak = self.calls = 0

    async def complete(self, request: Any) -> ModelResponse:
        self.in_flight += 1
        self.calls += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        call = ToolCall(f"c{self.calls}", "record", {"note": "x"}, '{"note": "x"}')
        return ModelResponse(Message("assistant", [], [call]), "tool_calls", usage=Usage(3, 2))

    async def aclose(self) -> None:
        return None


def test_model_calls_in_flight_respect_the_bound(tmp_path: Path) -> None:
    root = write_effects(tmp_path / "fx", rows=12)
    model = CountingModel(0.03)
    engine = Engine.from_spec(root / "spec.plait", providers={"m": model})
    rows = read_rows((root / "in.jsonl").read_bytes(), engine.program.input, "batch-test")
    got: list[RowResult] = []

    async def go() -> None:
        try:
            await run_batch(engine, rows, got.append, concurrency=5)
        finally:
            await engine.aclose()

    asyncio.run(go())
    assert model.calls == 12 and model.peak == 5
    assert sorted(r.index for r in got) == list(range(12))
    assert all(r.stop_reason == "until" and r.tokens == {"input_tokens": 3, "output_tokens": 2} for r in got)
    assert len(set((root / "effects.txt").read_text().split())) == 12


def test_a_bad_line_is_that_rows_error_and_the_rest_still_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = write_echo(
        tmp_path / "bad",
        [{"text": "a"}, Raw("not json"), Raw(""), {"txt": "b"}, {"text": "boom"}, Raw('{"text": '), {"text": "c"}],
    )
    assert batch(root, "--concurrency", "2") == 1
    rows = results(root / "out.jsonl")
    assert [(r["index"], r["line"]) for r in rows] == [(0, 1), (1, 2), (2, 4), (3, 5), (4, 6), (5, 7)]
    assert [r["stop_reason"] for r in rows] == ["done", "error", "error", "error", "error", "done"]
    assert [r["output"] for r in rows if r["output"]] == [{"text": "A"}, {"text": "C"}]
    kinds = [r["error"]["kind"] for r in rows if r["error"]]
    assert kinds == ["input_invalid", "input_invalid", "code_step_failed", "input_invalid"]
    assert "line 4" in rows[2]["error"]["message"] and "did you mean `text`" in rows[2]["error"]["message"]
    assert rows[1]["run_id"] is None  # a bad line never becomes a run
    assert "6 rows: 2 done, 4 failed" in capsys.readouterr().err


def test_text_lines_for_a_spec_without_input(tmp_path: Path) -> None:
    root = write_effects(tmp_path / "text", rows=0)
    write_lines(root / "in.jsonl", ["a JSON string", Raw("a plain line"), {"an": "object"}])
    engine = Engine.from_spec(root / "spec.plait")
    rows = read_rows((root / "in.jsonl").read_bytes(), engine.program.input)
    assert [r.input for r in rows] == ["a JSON string", "a plain line", '{"an": "object"}']
    assert all(r.problem is None for r in rows)


def test_running_the_same_batch_again_runs_nothing_that_finished(
    echo_project: Path, capsys: pytest.CaptureFixture
) -> None:
    assert batch(echo_project, "--concurrency", "4") == 0
    first = (echo_project / "out.jsonl").read_text()
    ran = len(calls(echo_project))
    capsys.readouterr()
    assert batch(echo_project, "--concurrency", "4") == 0
    assert (echo_project / "out.jsonl").read_text() == first
    assert len(calls(echo_project)) == ran == 8
    assert "8 of them from an earlier run" in capsys.readouterr().err


def test_other_inputs_are_another_batch(echo_project: Path) -> None:
    assert batch(echo_project) == 0
    first = {r["run_id"] for r in results(echo_project / "out.jsonl")}
    write_lines(echo_project / "in.jsonl", [{"text": "new"}])
    assert batch(echo_project) == 0
    second = results(echo_project / "out.jsonl")
    assert second[0]["output"] == {"text": "NEW"} and second[0]["run_id"] not in first


#: Phase one of the cancel test, in a process of its own (a re-run is a new process): cancel after 4 rows.
CANCEL_AFTER_FOUR = """
import asyncio, json, sys
from pathlib import Path
from plait.runtime.batch import read_rows, run_batch
from plait.runtime.engine import Engine

root = Path(sys.argv[1])
async def main():
    engine = Engine.from_spec(root / "spec.plait")
    got = []
    four = asyncio.Event()

    def emit(result):
        got.append(result)
        if len(got) == 4:  # cancel on the 4th result itself, not on a poll that may wake after later ones
            four.set()

    rows = read_rows((root / "in.jsonl").read_bytes(), None, "batch-c")
    task = asyncio.ensure_future(run_batch(engine, rows, emit, concurrency=3))
    await asyncio.wait([task, asyncio.ensure_future(four.wait())], return_when=asyncio.FIRST_COMPLETED)
    assert not task.done(), "the batch finished before 4 rows had"
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    await engine.aclose()
    print(json.dumps([r.to_dict() for r in got]))
asyncio.run(main())
"""


@pytest.mark.slow
def test_a_cancelled_batch_resumes_its_cut_off_rows_without_repeating_effects(tmp_path: Path) -> None:
    """Cancelling the executor cancels the runs in flight; the next run of the batch resumes them."""
    root = write_effects(tmp_path / "cancel", rows=10, delay="80ms")
    data = (root / "in.jsonl").read_bytes()
    cancelled = subprocess.run([sys.executable, "-c", CANCEL_AFTER_FOUR, str(root)], capture_output=True, text=True)
    assert cancelled.returncode == 0, cancelled.stderr
    done_first = [RowResult.from_dict(r) for r in json.loads(cancelled.stdout)]
    effects_first = (root / "effects.txt").read_text().split()

    async def again() -> tuple[list[RowResult], list[Any]]:
        engine = Engine.from_spec(root / "spec.plait")
        known, todo = plan(read_rows(data, None, "batch-c"), engine.store.runs())
        got = list(known)
        await run_batch(engine, todo, got.append, concurrency=3)
        await engine.aclose()
        return got, todo

    rows, todo = asyncio.run(again())
    assert sorted(r.index for r in rows) == list(range(10))
    assert {r.index for r in done_first} <= {r.index for r in rows if r.stored}  # finished rows: read back
    assert any(row.resume for row in todo)  # the cut-off ones were resumed, not started afresh
    effects = (root / "effects.txt").read_text().split()
    assert len(effects) == len(set(effects))  # no effect happened twice
    assert set(effects_first) <= set(effects)
    by_index = {r.index: r for r in rows}
    assert all(by_index[r.index].output == r.output for r in done_first)
    # A row cut off between its tool call's intent and completion waits for a person (the outcome is unknown);
    # every other row finished, its one effect in the file.
    paused = [r for r in rows if r.stop_reason == "pause"]
    assert len(paused) <= 3
    assert all(r.stop_reason == "until" and r.output in effects for r in rows if r not in paused)
    assert len(effects) >= 10 - len(paused)


def test_in_order_writes_each_result_once_every_earlier_row_is_written() -> None:
    written: list[int] = []
    ordered = InOrder(lambda r: written.append(r.index))
    for index in (2, 0, 3, 1, 4):
        ordered(RowResult(index, index + 1, None, "done"))
    assert written == [0, 1, 2, 3, 4] and ordered.held == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--concurrency", "0"], "--concurrency wants"),
        (["--actors", "2"], "--actors and --address are for --executor ray"),
        (["--entry", "nope"], "`nope` is not a runnable"),
    ],
)
def test_usage_errors_exit_2(echo_project: Path, capsys: pytest.CaptureFixture, extra: list[str], message: str) -> None:
    assert batch(echo_project, *extra) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (echo_project / "out.jsonl").exists()


def test_results_never_overwrite_the_inputs(echo_project: Path, capsys: pytest.CaptureFixture) -> None:
    before = (echo_project / "in.jsonl").read_text()
    code = main(
        [
            "batch",
            str(echo_project / "spec.plait"),
            str(echo_project / "in.jsonl"),
            "-o",
            str(echo_project / "in.jsonl"),
        ]
    )
    assert code == 2 and "would overwrite the inputs" in capsys.readouterr().err
    assert (echo_project / "in.jsonl").read_text() == before


def test_an_unwritable_results_file_is_a_usage_error(echo_project: Path, capsys: pytest.CaptureFixture) -> None:
    (echo_project / "out").mkdir()
    args = ["batch", str(echo_project / "spec.plait"), str(echo_project / "in.jsonl"), "-o", str(echo_project / "out")]
    assert main(args) == 2
    assert "cannot write the results file" in capsys.readouterr().err
    assert calls(echo_project) == []  # nothing ran


def test_a_missing_inputs_file_is_a_usage_error(echo_project: Path, capsys: pytest.CaptureFixture) -> None:
    assert batch(echo_project, inputs="missing.jsonl") == 2
    assert "cannot read the inputs file" in capsys.readouterr().err


def test_a_remote_ray_cluster_needs_a_shared_journal(echo_project: Path, capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("ray")
    assert batch(echo_project, "--executor", "ray", "--address", "ray://head:10001") == 2
    assert "--store postgresql://" in capsys.readouterr().err


def test_a_spec_with_errors_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = write_echo(tmp_path / "broken", [{"text": "a"}])
    (root / "spec.plait").write_text("agent a { model = nope }\n")
    assert batch(root) == 1
    assert "nope" in capsys.readouterr().err


def test_help_shows_examples_and_exit_codes(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["batch", "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    for text in (
        "examples:",
        "plait batch triage.plait tickets.jsonl -o results.jsonl",
        "--executor ray",
        "exit status",
    ):
        assert text in out
    assert "Run the same command again" in out


def test_results_go_to_stdout_without_o(echo_project: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["batch", str(echo_project / "spec.plait"), str(echo_project / "in.jsonl")]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["output"]["text"] for r in lines] == [f"T{i}" for i in range(8)]


def test_the_project_can_move_and_still_resume(echo_project: Path, tmp_path: Path) -> None:
    """The batch id hashes the spec's text, not where it lives: a copied project (journal included) resumes."""
    assert batch(echo_project) == 0
    moved = tmp_path / "moved"
    shutil.copytree(echo_project, moved)
    (moved / "calls.txt").unlink()
    assert batch(moved) == 0
    assert results(moved / "out.jsonl") == results(echo_project / "out.jsonl")
    assert calls(moved) == []


def test_an_empty_inputs_file_is_an_empty_batch(echo_project: Path, capsys: pytest.CaptureFixture) -> None:
    (echo_project / "in.jsonl").write_text("\n\n")
    assert batch(echo_project) == 0
    assert (echo_project / "out.jsonl").read_text() == ""
    assert "0 rows" in capsys.readouterr().err


def test_inputs_from_stdin(echo_project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b'{"text": "piped"}\n')))
    assert main(["batch", str(echo_project / "spec.plait"), "-"]) == 0
    assert json.loads(capsys.readouterr().out)["output"] == {"text": "PIPED"}


def test_the_progress_line_at_a_terminal_and_nothing_elsewhere() -> None:
    import io

    from plait.cli.batch import Progress

    shown, quiet = io.StringIO(), io.StringIO()
    live, silent = Progress(4, live=True, out=shown), Progress(4, live=False, out=quiet)
    for reason in ("done", "error", "done", "done"):
        for progress in (live, silent):
            progress.add(RowResult(0, 1, "r", reason))
    live.close()
    assert "[########################] 4/4 · 1 failed" in shown.getvalue() and shown.getvalue().startswith("\r")
    assert quiet.getvalue() == ""
    assert silent.summary() == "4 rows: 3 done, 1 failed"


@pytest.mark.slow
def test_the_in_process_executor_never_imports_ray(echo_project: Path) -> None:
    code = (
        "import sys; from plait.cli import main; "
        f"code = main(['batch', {str(echo_project / 'spec.plait')!r}, {str(echo_project / 'in.jsonl')!r}, '-o', "
        f"{str(echo_project / 'out.jsonl')!r}]); print(code, 'ray' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["0", "False"], done.stderr


def test_a_row_waiting_for_approval_says_how_to_answer_and_exits_3(tmp_path: Path) -> None:
    root = write_effects(tmp_path / "approve", rows=2, delay="1ms")
    spec = (
        (root / "spec.plait")
        .read_text()
        .replace('run = python("fx:record")', 'run = python("fx:record")\n  approval = required')
    )
    (root / "spec.plait").write_text(spec)
    assert batch(root) == 3
    rows = results(root / "out.jsonl")
    assert [r["stop_reason"] for r in rows] == ["interrupt", "interrupt"]
    assert all(f"plait resume {r['run_id']} --dir {root} --decide" in r["waiting"] for r in rows)
    assert not (root / "effects.txt").exists()  # nothing acted without approval
    assert batch(root) == 3 and results(root / "out.jsonl") == rows  # read back the same, still waiting


def test_a_waiting_rows_hint_resumes_it_from_where_the_batch_ran(tmp_path: Path, monkeypatch, capsys) -> None:
    import re
    import shlex

    root = write_effects(tmp_path / "approve", rows=1, delay="1ms")
    spec = (root / "spec.plait").read_text()
    (root / "spec.plait").write_text(
        spec.replace('run = python("fx:record")', 'run = python("fx:record")\n  approval = required')
    )
    monkeypatch.chdir(tmp_path)  # the journal is beside the spec, in approve/, not here
    assert main(["batch", "approve/spec.plait", "approve/in.jsonl", "-o", "out.jsonl"]) == 3
    (row,) = results(tmp_path / "out.jsonl")
    hint = re.fullmatch(r"pending (.+): answer with `plait (resume .+) --decide ID=\.\.\.` or .*", row["waiting"])
    assert hint, row["waiting"]
    decisions = [f"--decide={pid}=approve" for pid in hint.group(1).split(", ")]
    capsys.readouterr()
    code = main([*shlex.split(hint.group(2)), *decisions])
    assert "no run journal" not in capsys.readouterr().err and code == 0
    assert (root / "effects.txt").exists()  # the approved call acted
