"""Front-end benchmark: `python bench/frontend_bench.py [--quick] [--lines N ...]`.

Generates specs of 10,000 and 100,000 lines (bench/frontend_gen.py) and
reports, side by side and from the same run, the median of several runs of:

- plait check in-process (`plait.cli.main(["check", path])`, output discarded),
  and `plait.compile(path)` split into load (read + parse) and the passes;
- lark's bare LALR parse of the same text (same grammar and post-lexer, no
  AST building), the floor any lark front-end stands on;
- PyYAML's pure-Python loader on the equivalent YAML;
- `plait check` of a small spec as a whole process (interpreter start included).

Wall time and CPU time are both shown: on a busy machine CPU time is the
steadier of the two.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import frontend_gen  # noqa: E402


def _measure(fn, runs: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of `runs` calls."""
    walls, cpus = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        cpus.append(time.process_time() - c)
        walls.append(time.perf_counter() - w)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


def _bare_lark():
    from plait.dsl.lark_parse import make_lark

    return make_lark(transformer=None)


def _check_in_process(path: Path) -> None:
    from plait.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["check", str(path)])
    if code != 0:
        raise SystemExit(f"plait check {path} failed with exit {code}")


def _paused(fn):
    """`fn` with the garbage collector paused as `plait.compile` pauses it (when it does)."""
    try:
        from plait.dsl.parser import collector_paused
    except ImportError:  # a tree from before the pause
        return fn

    def run():
        with collector_paused():
            return fn()

    return run


def _stages(path: Path) -> tuple:
    from plait.compiler.pipeline import run_passes
    from plait.dsl.loader import load

    loaded = load(path)
    return loaded, _paused(lambda: run_passes(loaded))


def bench_size(lines: int, runs: int, workdir: Path) -> list[tuple[str, float, float]]:
    import yaml

    from plait.dsl.loader import load

    text = frontend_gen.spec(lines)
    path = workdir / f"spec_{lines}.plait"
    path.write_text(text, encoding="utf-8")
    yaml_text = yaml.dump(frontend_gen.yaml_data(lines), sort_keys=False, default_flow_style=False)
    lark = _bare_lark()
    _check_in_process(path)  # warm: grammar cache, imports
    loaded, passes = _stages(path)
    rows = [
        ("plait check (in-process)", *_measure(lambda: _check_in_process(path), runs)),
        ("  load: read + parse + AST", *_measure(_paused(lambda: load(path)), runs)),
        ("  passes", *_measure(passes, runs)),
        ("lark bare LALR parse", *_measure(lambda: lark.parse(text), runs)),
        ("PyYAML yaml.Loader", *_measure(lambda: yaml.load(yaml_text, Loader=yaml.Loader), runs)),
    ]
    print(f"\n{lines:,} lines ({text.count(chr(10)):,} actual, {len(loaded.modules[0].declarations):,} declarations),"
          f" median of {runs}:")
    for name, wall, cpu in rows:
        print(f"  {name:30} {wall:9.1f} ms wall {cpu:9.1f} ms cpu")
    return rows


def bench_process(runs: int, workdir: Path) -> tuple[float, float]:
    path = workdir / "small.plait"
    path.write_text(frontend_gen.SMALL, encoding="utf-8")
    cmd = [sys.executable, "-m", "plait", "check", str(path)]
    subprocess.run(cmd, check=True, capture_output=True)  # warm the OS cache and lark's grammar cache
    bare = [sys.executable, "-c", "pass"]
    check = _measure(lambda: subprocess.run(cmd, check=True, capture_output=True), runs)
    python = _measure(lambda: subprocess.run(bare, check=True, capture_output=True), runs)
    print(f"\nplait check small.plait as a process, median of {runs}: {check[0]:.1f} ms wall"
          f" (python -c pass: {python[0]:.1f} ms)")
    return check


def machine() -> str:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; nproc {os.cpu_count()}; {cpu}; "
            f"Python {platform.python_version()}; load average {load:.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=7, help="runs per measurement (100k lines: a third)")
    parser.add_argument("--quick", action="store_true", help="10,000 lines only, 3 runs")
    args = parser.parse_args(argv)
    if args.quick:
        args.lines, args.runs = [10_000], 3
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for lines in args.lines:
            bench_size(lines, args.runs if lines <= 10_000 else max(3, args.runs // 3), workdir)
        bench_process(max(args.runs, 10), workdir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
