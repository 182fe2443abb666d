"""`plait run` start-up: a one-step scripted spec run as a whole process → its wall and CPU time against `plait check`.

The reference is `plait check SPEC` of the same spec, as a whole process, in
the same run. Samples are interleaved (a check, then a run, and so on), so
both see the same load on a shared machine; the ratio is the run's median
over the check's. Target (issue 26.9): at most 2x. The run is offline (the
scripted provider: one reply from a file), so what it measures is what `plait
run` costs before and around its one model call: imports, compile, opening
the journal, the run itself, and writing it.

    python bench/startup_bench.py [--runs 21] [--python PATH]

`--imports` also prints the modules `plait run` imports that `plait check`
does not, by their own import time (`python -X importtime`), largest first.
Exit 1 when the ratio of the medians is over the target.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from frontend_bench import machine  # noqa: E402

TARGET = 2.0

SPEC = """model m = "scripted/m" { script = "one.json" }

step hello {
  model  = m
  prompt = "Say hello to {{input}}"
}
"""


def project(folder: Path) -> Path:
    (folder / "one.json").write_text('[{"text": "hello"}]')
    spec = folder / "one.plait"
    spec.write_text(SPEC)
    return spec


def sample(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one whole process, children's CPU from rusage."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def imported(python: str, args: list[str], cwd: Path) -> dict[str, int]:
    """Module → its own import time (µs) in one process of `plait ARGS`."""
    done = subprocess.run(
        [python, "-X", "importtime", "-m", "plait", *args], cwd=cwd, capture_output=True, text=True, check=True
    )
    out: dict[str, int] = {}
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            own, _, name = line[len("import time:") :].split("|")
            out[name.strip()] = int(own)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="samples of each command")
    parser.add_argument("--python", default=sys.executable, help="the interpreter with plait installed")
    parser.add_argument("--imports", action="store_true", help="list what `run` imports beyond `check`")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        spec = project(folder)
        commands = {
            "check": [args.python, "-m", "plait", "check", spec.name],
            "run": [args.python, "-m", "plait", "run", spec.name, "--input", "you"],
        }
        for argv_ in commands.values():  # warm the file cache and the bytecode
            sample(argv_, folder)
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv_ in commands.items():
                wall, cpu = sample(argv_, folder)
                walls[name].append(wall)
                cpus[name].append(cpu)
        print(machine())
        print(f"{args.runs} samples each, interleaved; medians\n")
        print("| command | wall | CPU |")
        print("|---|---|---|")
        for name in commands:
            print(
                f"| `plait {name}` | {statistics.median(walls[name]) * 1000:.0f} ms "
                f"| {statistics.median(cpus[name]) * 1000:.0f} ms |"
            )
        wall_ratio = statistics.median(walls["run"]) / statistics.median(walls["check"])
        cpu_ratio = statistics.median(cpus["run"]) / statistics.median(cpus["check"])
        print(f"| ratio run / check | **{wall_ratio:.2f}x** | {cpu_ratio:.2f}x |")
        if args.imports:
            run_modules = imported(args.python, commands["run"][3:], folder)
            check_modules = imported(args.python, commands["check"][3:], folder)
            extra = {m: t for m, t in run_modules.items() if m not in check_modules}
            print(
                f"\n`plait run` imports {len(extra)} modules `plait check` does not ({sum(extra.values()) / 1000:.0f} ms):"
            )
            for name, own in sorted(extra.items(), key=lambda kv: -kv[1])[:25]:
                print(f"  {own / 1000:6.1f} ms  {name}")
            print("aiohttp imported by `plait run`:", "aiohttp" in run_modules)
    print(f"\ntarget: at most {TARGET:g}x: {'met' if wall_ratio <= TARGET else 'MISSED'}", file=sys.stderr)
    return 0 if wall_ratio <= TARGET else 1


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    raise SystemExit(main())
