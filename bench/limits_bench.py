"""Bounded-cost benchmark: `python bench/limits_bench.py [--runs N] [--shapes ...]`.

`plait check` of each hostile shape (bench/limits_gen.py) beside a normal spec of the same size, each a
whole process, measured by the OS (`os.wait4`): wall time, CPU time and peak RSS. Printed per shape: the
medians, and the ratios to the normal spec of that size measured in the same round (the issue's bound:
at most 10x, and never more than 1 GiB of memory for an input under the 8 MiB cap). Rounds alternate
the reference and the shapes, so load that comes and goes falls on both. CPU time is the steadier
figure on a busy machine. `--command fmt` times `plait fmt --check` instead (the layout, nothing written).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import limits_gen  # noqa: E402
from frontend_bench import machine  # noqa: E402

#: (shape, size in bytes): the sizes of the test's cases.
CASES = (
    ("numbers", 7_900_000),
    ("blank-lines", 7_900_000),
    ("attributes", 7_900_000),
    ("calls", 7_900_000),
    ("nested-lists", 7_900_000),
    ("chain", 7_900_000),
    ("tools", 7_900_000),
    ("agents", 7_900_000),
    ("undefined", 7_900_000),
    ("nested-calls", 4_000_000),
    ("strings", 4_000_000),
    ("numbers", 800_000),
    ("attributes", 800_000),
    ("refs", 800_000),
    ("nested-lists", 800_000),
    ("blocks", 800_000),
    ("calls", 800_000),
    ("paths", 800_000),
    ("chain", 800_000),
    ("tools", 800_000),
    ("agents", 800_000),
    ("undefined", 800_000),
)
GIB = 1024**3


#: What is timed: `plait check --quiet FILE`, or `plait fmt --check FILE` (lays the file out, writes nothing).
COMMANDS = {"check": ["check", "--quiet"], "fmt": ["fmt", "--check"]}


def _check(path: Path, command: str = "check") -> tuple[float, float, int]:
    """(wall s, CPU s, peak RSS bytes) of the command on `path` as a fresh process."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "plait", *COMMANDS[command], str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):
        raise SystemExit(f"plait {command} {path.name} exited {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="rounds (each: every reference, then every shape)")
    parser.add_argument("--shapes", nargs="*", help="only these shapes (default: all)")
    parser.add_argument("--max-size", type=int, default=8_000_000, help="skip cases larger than this many bytes")
    parser.add_argument("--min-size", type=int, default=0, help="skip cases smaller than this many bytes")
    parser.add_argument("--command", choices=sorted(COMMANDS), default="check", help="what to time (default: check)")
    args = parser.parse_args(argv)
    cases = [(k, s) for k, s in CASES if (not args.shapes or k in args.shapes) and args.min_size <= s <= args.max_size]
    sizes = sorted({s for _, s in cases})
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        files: dict[tuple[str, int], Path] = {}
        for size in sizes:
            files["normal", size] = Path(tmp, f"normal-{size}.plait")
            files["normal", size].write_text(limits_gen.normal(size))
        for kind, size in cases:
            files[kind, size] = Path(tmp, f"{kind}-{size}.plait")
            files[kind, size].write_text(limits_gen.hostile(kind, size))
        results: dict[tuple[str, int], list[tuple[float, float, int]]] = {key: [] for key in files}
        for run in range(args.runs):
            for size in sizes:
                results["normal", size].append(_check(files["normal", size], args.command))
                for kind, s in cases:
                    if s == size:
                        results[kind, s].append(_check(files[kind, s], args.command))
                        print(f"  round {run + 1}: {kind} {s:,} done", file=sys.stderr)
        print(f"plait {args.command}; {args.runs} round(s); medians; ratios to the normal spec of the same size")
        print("| shape | bytes | wall s | CPU s | peak RSS MB | CPU ratio | memory ratio | under 1 GiB |")
        print("|---|---|---|---|---|---|---|---|")
        for size in sizes:
            ref = [statistics.median(x[i] for x in results["normal", size]) for i in range(3)]
            for kind in ["normal", *[k for k, s in cases if s == size]]:
                wall, cpu, rss = (statistics.median(x[i] for x in results[kind, size]) for i in range(3))
                real = files[kind, size].stat().st_size
                print(
                    f"| {kind} | {real:,} | {wall:.1f} | {cpu:.1f} | {rss / 2**20:.0f} | {cpu / ref[1]:.2f}x |"
                    f" {rss / ref[2]:.2f}x | {'yes' if rss < GIB else '**no**'} |"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
