"""Front-end benchmark: `python bench/frontend_bench.py [--quick] [--lines N ...]`.

Generates specs of 10,000 and 100,000 lines (bench/frontend_gen.py) and
reports, side by side and from the same run, the median of several runs of:

- plait check in-process (`plait.cli.main(["check", path])`, output discarded),
  and `plait.compile(path)` split into load (read + parse) and the passes;
- lark's bare LALR parse of the same text (lark's own lexer and parser over the
  same grammar, separators folded as plait's lexer folds them, no AST
  building), the floor any lark front-end stands on;
- PyYAML's pure-Python loader on the equivalent YAML;
- `plait check` of a small spec as a whole process (interpreter start included);
- `plait check` of a 0.2 spec of 10,000 lines (typed outputs, routes, loops,
  maps) against the 0.1 one of the same length, as a ratio;
- `plait check` of the same spec written in 0.3 (named types, `with`,
  expressions, threads, a map filter, a route case that leaves its loop by
  `break`) against the 0.2 one, as a ratio (`--only-03` runs just this).

Wall time and CPU time are both shown: on a busy machine CPU time is the
steadier of the two.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import resource
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


class _FoldSeparators:
    """lark post-lexer doing what plait's lexer does past matching (and what plait used to run under lark
    until 2026-12-05): newlines and commas between block members become one `_SEP`, and the open brackets
    with the declaration that opened each are tracked, so the reference does the same work per token."""

    always_accept = ("NL", "_SEP", "COMMA")  # NL: the grammar's newline terminal before it was named _SEP
    _openers = {"LBRACE": "RBRACE", "LSQB": "RSQB", "LPAR": "RPAR"}
    _declarations = frozenset(
        "MODEL TOOL AGENT STEP CHAIN PARALLEL CONSOLIDATE IMPORT INPUT STATE ROUTE LOOP MAP ASK MCP".split()
    )
    _name_after = frozenset({"__ANON_0", "EQUAL", "LPAR", "COMMA", "ON", "DOT"})

    def __init__(self) -> None:
        self.glue: frozenset[str] = frozenset()

    def process(self, stream):
        from lark import Token

        openers, closers = self._openers, set(self._openers.values())
        stack: list = []
        pending = None
        last_type = last_value = owner = ""
        naming = False
        for tok in stream:
            kind = tok.type
            top = stack[-1][0] if stack else None
            if kind in ("NL", "_SEP") or (kind == "COMMA" and top == "LBRACE"):
                if top == "LBRACE" and last_type != "LBRACE" and pending is None:
                    pending = tok
                continue
            if pending is not None:
                if kind not in self.glue:
                    yield Token.new_borrow_pos("_SEP", str(pending), pending)
                pending = None
            if kind in openers:
                naming = False
                opened_by = owner
                if kind == "LBRACE" and last_type in ("PARAMS", "OUTPUT", "ANSWER") and owner:
                    opened_by = f"{last_value}` block of `{owner}"
                stack.append((kind, tok, opened_by))
            elif kind in closers and stack and openers[stack[-1][0]] == kind:
                stack.pop()
            elif not stack:
                if naming:
                    naming = False
                    if kind not in ("STRING", "LONG_STRING"):
                        owner = f"{owner} {tok.value}"
                elif kind in self._declarations and last_type not in self._name_after:
                    owner, naming = tok.value, True
            last_type, last_value = kind, tok.value
            yield tok


def _bare_lark():
    """lark's own LALR parser and basic lexer over plait's grammar, building lark's tree (no AST)."""
    from lark import Lark

    import plait.grammars

    grammar = (Path(plait.grammars.__file__).parent / "plait.lark").read_text(encoding="utf-8")
    postlex = _FoldSeparators()
    lark = Lark(grammar, parser="lalr", lexer="basic", postlex=postlex, maybe_placeholders=True, cache=True)
    arrows = {t.name for t in lark.terminals if getattr(t.pattern, "value", None) in ("->", "|")}
    postlex.glue = frozenset({"RBRACE", "LBRACE", *arrows})
    return lark


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
    print(
        f"\n{lines:,} lines ({text.count(chr(10)):,} actual, {len(loaded.modules[0].declarations):,} declarations),"
        f" median of {runs}:"
    )
    for name, wall, cpu in rows:
        print(f"  {name:30} {wall:9.1f} ms wall {cpu:9.1f} ms cpu")
    return rows


def bench_typed(lines: int, runs: int, workdir: Path) -> float:
    """`plait check` of the 0.2 spec (routes, loops, maps, typed outputs read downstream) against the 0.1 spec
    of the same length: CPU medians of interleaved runs, and their ratio (issue 11: at most 1.3x)."""
    old, new = workdir / f"spec_{lines}.plait", workdir / f"spec_{lines}_02.plait"
    old.write_text(frontend_gen.spec(lines), encoding="utf-8")
    new.write_text(frontend_gen.spec_02(lines), encoding="utf-8")
    for path in (old, new):
        _check_in_process(path)  # warm, and both must check clean
    cpus: dict[Path, list[float]] = {old: [], new: []}
    for _ in range(runs):
        for path in (old, new):
            c = time.process_time()
            _check_in_process(path)
            cpus[path].append(time.process_time() - c)
    a, b = (statistics.median(cpus[p]) * 1000 for p in (old, new))
    print(f"\nplait check, 0.1 vs 0.2 spec of {lines:,} lines, CPU median of {runs} interleaved runs:")
    print(f"  0.1 (models, tools, agents, chains, parallels) {a:9.1f} ms cpu")
    print(f"  0.2 (typed outputs, routes, loops, maps)      {b:9.1f} ms cpu")
    print(f"  ratio 0.2 / 0.1                               {b / a:9.2f}x  (target <= 1.3x)")
    return b / a


def bench_03(lines: int, runs: int, workdir: Path) -> float:
    """`plait check` of the 0.3 spec against the same workflow written in 0.2 (frontend_gen.spec_03_in_02), and
    beside it the 0.2 spec of bench_typed: CPU medians of interleaved runs, in-process, and the ratio to the
    same workflow's (issue 21: at most 1.3x)."""
    twin, classic, new = (workdir / f"spec_{lines}_{n}.plait" for n in ("03_in_02", "02", "03"))
    twin.write_text(frontend_gen.spec_03_in_02(lines), encoding="utf-8")
    classic.write_text(frontend_gen.spec_02(lines), encoding="utf-8")
    new.write_text(frontend_gen.spec_03(lines), encoding="utf-8")
    paths = (twin, classic, new)
    for path in paths:
        _check_in_process(path)  # warm (Jinja2 included), and each must check clean
    cpus: dict[Path, list[float]] = {p: [] for p in paths}
    ratios: list[float] = []
    for _ in range(runs):
        for path in paths:
            c = time.process_time()
            _check_in_process(path)
            cpus[path].append(time.process_time() - c)
        ratios.append(cpus[new][-1] / cpus[twin][-1])
    a, b, c3 = (statistics.median(cpus[p]) * 1000 for p in paths)
    print(f"\nplait check, 0.3 spec of {lines:,} lines against 0.2, CPU median of {runs} interleaved runs:")
    print(f"  its workflow in 0.2 (spec_03_in_02)            {a:9.1f} ms cpu")
    print(f"  the 0.2 spec (spec_02)                         {b:9.1f} ms cpu")
    print(f"  0.3 (types, with, expressions, threads, break) {c3:9.1f} ms cpu")
    print(f"  ratio 0.3 / same workflow in 0.2, of medians   {c3 / a:9.2f}x  (target <= 1.3x)")
    print(f"  median of paired ratios                        {statistics.median(ratios):9.2f}x")
    print(f"  ratio 0.3 / the 0.2 spec                       {c3 / b:9.2f}x")
    return c3 / a


def _compile_bytecode() -> None:
    """Write plait's bytecode, as `pip install` does for an installed package.

    An editable tree run with PYTHONDONTWRITEBYTECODE set (as some sandboxes
    and containers do) would otherwise recompile every module from source on
    every start, which no installed copy of plait does.
    """
    import compileall

    import plait

    # The whole package (src/plait/ and its subpackages), so no process row recompiles a module on start.
    compileall.compile_dir(str(Path(plait.__file__).parent), quiet=1)


def bench_process(runs: int, workdir: Path, python: str) -> tuple[float, float]:
    path = workdir / "small.plait"
    path.write_text(frontend_gen.SMALL, encoding="utf-8")
    if python == sys.executable:
        _compile_bytecode()
    cmd = [python, "-m", "plait", "check", str(path)]
    # Run from the temporary directory, as a user would: the installed package, not the working tree.
    subprocess.run(cmd, check=True, capture_output=True, cwd=workdir)  # warm the OS cache
    # The same spec beside a `plait.lock` holding its model's catalogue entry (issue 23: a locked check keeps the
    # start-up budget); `plait models lock` writes it from the installed catalogue packages, offline.
    locked = workdir / "locked"
    locked.mkdir(exist_ok=True)
    (locked / "small.plait").write_text(frontend_gen.SMALL, encoding="utf-8")
    subprocess.run(
        [python, "-m", "plait", "models", "lock", "small.plait"], check=True, capture_output=True, cwd=locked
    )
    locked_cmd = [python, "-m", "plait", "check", str(locked / "small.plait")]
    subprocess.run(locked_cmd, check=True, capture_output=True, cwd=locked)
    rows = [
        ("plait check small.plait", cmd),
        ("plait check small.plait (plait.lock)", locked_cmd),
        ("python -c pass", [python, "-c", "pass"]),
        ("python -c 'import pydantic'", [python, "-c", "import pydantic"]),
        ("python -c 'from pydantic import BaseModel'", [python, "-c", "from pydantic import BaseModel"]),
    ]
    # Interleaved, so a burst of load elsewhere hits every row alike. CPU time
    # (user + system of the child) beside wall time: on a shared machine it is
    # the steadier of the two.
    walls: dict[str, list[float]] = {name: [] for name, _ in rows}
    cpus: dict[str, list[float]] = {name: [] for name, _ in rows}
    for _ in range(runs):
        for name, c in rows:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(c, check=True, capture_output=True, cwd=workdir)
            walls[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    print(f"\nwhole processes with {python}, median of {runs} (bytecode compiled, as installed):")
    for name in walls:
        print(
            f"  {name:44} {statistics.median(walls[name]) * 1000:7.1f} ms wall"
            f" {statistics.median(cpus[name]) * 1000:7.1f} ms cpu (min {min(cpus[name]) * 1000:.1f})"
        )
    # Issue 10's target: at most 1.5x the bare pydantic import, as paired runs.
    check, reference = "plait check small.plait", "python -c 'import pydantic'"
    pairs = [c / r for c, r in zip(walls[check], walls[reference])]
    cpu_pairs = [c / r for c, r in zip(cpus[check], cpus[reference])]
    print(
        f"  check / import pydantic, median of paired runs: {statistics.median(pairs):.2f}x wall,"
        f" {statistics.median(cpu_pairs):.2f}x cpu; minimum over minimum cpu {min(cpus[check]) / min(cpus[reference]):.2f}x"
    )
    locked_name = "plait check small.plait (plait.lock)"
    locked_pairs = [c / r for c, r in zip(cpus[locked_name], cpus[reference])]
    print(
        f"  locked check / import pydantic, median of paired runs: {statistics.median(locked_pairs):.2f}x cpu;"
        f" minimum over minimum cpu {min(cpus[locked_name]) / min(cpus[reference]):.2f}x"
    )
    # Other engineers' jobs share the machine: the load says how far to trust the rows.
    print(f"  load average after: {os.getloadavg()[0]:.1f}")
    return statistics.median(walls[check]) * 1000, 0.0


def machine() -> str:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; nproc {os.cpu_count()}; {cpu}; "
        f"Python {platform.python_version()}; load average {load:.1f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=7, help="runs per measurement (100k lines: a third)")
    parser.add_argument("--quick", action="store_true", help="10,000 lines only, 3 runs")
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter for the whole-process rows, e.g. a venv with `pip install .` (default: this one)",
    )
    parser.add_argument("--process-only", action="store_true", help="only the whole-process rows")
    parser.add_argument("--only-03", action="store_true", help="only the 0.3 against 0.2 in-process rows")
    args = parser.parse_args(argv)
    if args.quick:
        args.lines, args.runs = [10_000], 3
    print(machine())
    if args.only_03:
        with tempfile.TemporaryDirectory() as tmp:
            bench_03(10_000, max(args.runs, 5), Path(tmp))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for lines in [] if args.process_only else args.lines:
            bench_size(lines, args.runs if lines <= 10_000 else max(3, args.runs // 3), workdir)
        if not args.process_only:
            bench_typed(10_000, max(args.runs, 5), workdir)
            bench_03(10_000, max(args.runs, 5), workdir)
        bench_process(max(args.runs, 10), workdir, args.python)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
