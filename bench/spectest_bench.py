"""`plait test` of 100 offline tests over the examples → its wall time against the same 100 runs through `plait run`.

Four examples whose runs need no person (triage, polish, report, briefing) are copied into a temporary folder,
each with a `*.test.plait` of 25 tests that run the example's entry on its input with the example's own scripted
replies and check one thing, as the examples' own tests do. The reference is the same 100 runs through `plait
run FILE --input ...`, called one after another in this one process (`plait.cli.main`, output discarded), so
neither side pays for starting Python. Samples alternate (a `plait test`, then the 100 runs, ...) so both see the
same load; the ratio is the medians'. Target (issue 22): `plait test` at most 1.5x.

    python bench/spectest_bench.py [--runs 7] [--tests-per-example 25]

Exit 1 when the ratio of the medians is over the target.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from frontend_bench import machine  # noqa: E402

from plait.cli import main as plait  # noqa: E402

TARGET = 1.5
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

#: example → (spec file, the run's input as `plait run` takes it, the same input as a test writes it, an expectation)
CASES = {
    "triage": (
        "triage.plait",
        ["--input-file", "ticket.json"],
        'input = { ticket = "I was charged twice for my March invoice. Please fix this today.", customer = "Ann" }',
        'expect case(triage) == "billing"',
    ),
    "polish": (
        "polish.plait",
        ["--input", "Your order arrived broken."],
        'input = "Your order arrived broken."',
        'expect exit(polish) == "met"',
    ),
    "report": ("report.plait", ["--input", "heat pumps"], 'input = "heat pumps"', "expect items(write_all) == 3"),
    "briefing": (
        "briefing.plait",
        ["--input", "Brief the team on the Lisbon office move."],
        'input = "Brief the team on the Lisbon office move."',
        "expect calls(submit_report) == 1",
    ),
}


def project(folder: Path, per_example: int) -> list[tuple[Path, list[str]]]:
    """The examples copied under `folder`, each with its test file; returns the `plait run` argument lists."""
    runs = []
    for name, (spec, run_input, test_input, expect) in CASES.items():
        target = folder / name
        shutil.copytree(EXAMPLES / name, target, ignore=shutil.ignore_patterns(".plait", "*.test.plait"))
        blocks = [f'import "{spec}"\n']
        for index in range(per_example):
            blocks.append(f"test {name}_{index} {{\n  {test_input}\n  {expect}\n}}\n")
        (target / f"{name}.test.plait").write_text("\n".join(blocks), encoding="utf-8")
        runs.extend([(target, ["run", spec, *run_input])] * per_example)
    return runs


def quiet(argv: list[str], cwd: Path) -> int:
    with contextlib.chdir(cwd), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return plait(argv)


def time_test(folder: Path) -> float:
    started = time.perf_counter()
    status = quiet(["test", "--format", "json", "."], folder)
    elapsed = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"plait test exited {status}")
    return elapsed


def time_runs(runs: list[tuple[Path, list[str]]]) -> float:
    started = time.perf_counter()
    for cwd, argv in runs:
        status = quiet(argv, cwd)
        if status != 0:
            raise SystemExit(f"plait {' '.join(argv)} exited {status}")
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="samples of each side (default 7)")
    parser.add_argument("--tests-per-example", type=int, default=25, help="tests per example (default 25: 100)")
    args = parser.parse_args(argv)
    print(machine())
    with tempfile.TemporaryDirectory(prefix="plait-spectest-bench-") as tmp:
        folder = Path(tmp)
        runs = project(folder, args.tests_per_example)
        print(f"{len(runs)} tests over {', '.join(CASES)}; {args.runs} samples of each side, alternating")
        time_test(folder), time_runs(runs)  # warm: imports, the journal files, the python tools' modules
        tests: list[float] = []
        plain: list[float] = []
        for _ in range(args.runs):
            tests.append(time_test(folder))
            plain.append(time_runs(runs))
    test_median, run_median = statistics.median(tests), statistics.median(plain)
    ratio = test_median / run_median
    print(f"plait test, {len(runs)} tests:      median {test_median * 1000:8.1f} ms  (min {min(tests) * 1000:.1f})")
    print(f"plait run, the same {len(runs)} runs: median {run_median * 1000:8.1f} ms  (min {min(plain) * 1000:.1f})")
    print(f"ratio {ratio:.2f}x (target ≤ {TARGET}x): {'ok' if ratio <= TARGET else 'OVER'}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
