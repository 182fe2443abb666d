"""`plait test [PATH...]`: the `test` blocks of spec files → their runs, judged → a report and an exit code.

Exit 0 when every test selected passed (skipped ones allowed), 1 when one failed or could not run, a spec has
errors, or `--fail-on-missing` finds a test that expects nothing; 2 on a usage problem (no tests found, a bad
option). Runs are offline unless `--live`: a test's model replies are its inline `replies` or the spec's
scripted models.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable

from plait.cli import EXIT_COVERAGE, EXIT_ERRORS, EXIT_OK, EXIT_USAGE
from plait.term import clean

FORMATS = ("text", "json", "junit", "github")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="spec files, or directories to search for *.plait files with tests (default: the current directory)",
    )
    parser.add_argument(
        "-k",
        dest="keyword",
        metavar="EXPR",
        help="run only the tests whose `FILE::NAME` id "
        "contains these words, combined with and, or, not and brackets (as pytest's -k)",
    )
    parser.add_argument("--list", action="store_true", help="list the tests selected (FILE::NAME), run nothing")
    parser.add_argument("--format", choices=FORMATS, default="text", help="report format (default: text)")
    parser.add_argument(
        "--live",
        action="store_true",
        help="let tests call real models (`replies = live`, and models that are not scripted)",
    )
    parser.add_argument("--jobs", "-j", type=int, default=8, metavar="N", help="tests run at once (default: 8)")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="share the spec files out over N processes, each running its tests --jobs at a time (default: 1)",
    )
    parser.add_argument("--fail-on-missing", action="store_true", help="fail a test that expects nothing")
    parser.add_argument(
        "--record",
        action="store_true",
        help="run the tests whose `replies = cassette(FILE)` against their real models and write FILE",
    )
    parser.add_argument(
        "--record-tools",
        action="store_true",
        help="with --record: keep each tool call's result in the cassette too, so the replay runs no tool",
    )
    parser.add_argument(
        "--coverage",
        nargs="?",
        const=True,
        metavar="FILE",
        help="report the graph coverage of the tests' runs; with FILE (one spec) also write it as JSON, "
        "for `plait render --coverage FILE`",
    )
    from plait.cli.coverage import add_min_coverage

    add_min_coverage(parser)
    color = parser.add_mutually_exclusive_group()
    color.add_argument("--color", dest="color", action="store_const", const=True, help="colour text output always")
    color.add_argument("--no-color", dest="color", action="store_const", const=False, help="never colour text output")
    parser.epilog = "A test is a `test NAME { ... }` block in a spec or in a `*.test.plait` beside it that imports it."


def run(args: argparse.Namespace) -> int:
    from plait.compiler.project import ConfigError, Resolver
    from plait.dsl.discover import spec_files
    from plait.spectest.runner import has_tests, load_tests

    if args.jobs < 1 or args.workers < 1:
        return _usage("--jobs and --workers must be 1 or more")
    try:
        selected = _selector(args.keyword)
    except ValueError as exc:
        return _usage(str(exc))
    configs = Resolver(None)
    files: list[Path] = []
    for given in args.paths or ["."]:
        path = Path(given)
        if path.is_dir():
            # The project's `exclude` applies to the search, as for `plait check` (a file named is tested anyway).
            try:
                found = [p for p in spec_files(path) if not configs.of(p).excludes(p)]
            except ConfigError as exc:
                return _usage(str(exc))
            files.extend(p for p in found if has_tests(p))
        elif path.exists():
            files.append(path)
        else:
            return _usage(f"no such file or directory: `{given}`")
    specs = load_tests(dict.fromkeys(files))
    broken = [s for s in specs if s.graph is None or any(d.is_error for d in s.diagnostics)]
    if broken:
        from plait.cli import print_diagnostics

        for spec in broken:
            print_diagnostics([d for d in spec.diagnostics if d.is_error], spec.sources)
    tests = [(spec, test) for spec in specs for test in spec.tests if selected(f"{test.file}::{test.name}")]
    if args.list:
        for _, test in tests:
            print(clean(f"{test.file}::{test.name}"))
        return EXIT_ERRORS if broken else EXIT_OK
    if not tests and not broken:
        where = ", ".join(f"`{p}`" for p in args.paths or ["."])
        return _usage(f"no tests found under {where}" + (" matching -k" if args.keyword else ""))
    measured = args.coverage is not None or args.min_coverage is not None
    if isinstance(args.coverage, str) and len({spec.path for spec, _ in tests}) > 1:
        return _usage("--coverage FILE holds one spec's coverage: select the tests of one spec (or leave out FILE)")
    reports: list[Any] = []
    outcomes, seconds = _run(specs, args, selected, reports if measured else None)
    if args.fail_on_missing:
        from plait.spectest.runner import Failure

        for outcome in outcomes:
            if not outcome.test.expects and outcome.status == "passed":
                outcome.status = "failed"
                outcome.failures.append(Failure("the test expects nothing (--fail-on-missing)"))
    from plait.compiler.report import wants_color
    from plait.spectest.report import render

    color = args.color if args.color is not None else wants_color(sys.stdout)
    sys.stdout.write(render(outcomes, args.format, seconds, color=args.format == "text" and color))
    failed = broken or any(o.status in ("failed", "error") for o in outcomes)
    covered = _coverage(reports, args) if measured else EXIT_OK
    return EXIT_ERRORS if failed else covered


def _coverage(reports: list[Any], args: argparse.Namespace) -> int:
    """Each spec's coverage table (to stderr when stdout carries a machine format); exit 7 below --min-coverage."""
    from plait.cli.coverage import table, write

    for report in reports:
        if isinstance(args.coverage, str):
            problem = write(report, args.coverage)
            if problem is not None:
                return problem
        table(report, sys.stdout if args.format == "text" else sys.stderr)
    items = [it for report in reports for entry in report.entries for it in entry.items]
    percent = 100.0 * sum(it.hit for it in items) / len(items) if items else 100.0
    if args.min_coverage is not None and percent < args.min_coverage:
        print(f"plait: coverage {percent:.1f}% is below --min-coverage {args.min_coverage:g}%", file=sys.stderr)
        return EXIT_COVERAGE
    return EXIT_OK


def _run(
    specs: list[Any], args: argparse.Namespace, selected: Callable[[str], bool], reports: list[Any] | None = None
) -> tuple[list[Any], float]:
    import asyncio

    from plait.spectest.runner import Session

    options = {"live": args.live, "jobs": args.jobs, "record": args.record, "record_tools": args.record_tools}
    if args.workers > 1:
        from plait.spectest.workers import run_in_workers

        started = time.perf_counter()
        ids = {f"{t.file}::{t.name}" for spec in specs for t in spec.tests if selected(f"{t.file}::{t.name}")}
        outcomes, journal = run_in_workers(specs, ids, args.workers, options, rows=reports is not None)
        seconds = time.perf_counter() - started
        if reports is not None:
            reports.extend(_measure(journal.__getitem__, outcomes))
        return outcomes, seconds
    session = Session(**options)
    started = time.perf_counter()
    try:
        outcomes = asyncio.run(session.run(specs, lambda test: selected(f"{test.file}::{test.name}")))
        seconds = time.perf_counter() - started
        if reports is not None:
            reports.extend(_measure(lambda run_id: list(session.store.events(run_id)), outcomes))
    finally:
        session.close()
    return outcomes, seconds


def _measure(rows_of: Callable[[str], list[Any]], outcomes: list[Any]) -> list[Any]:
    """One coverage report per spec, from the journal rows of its tests' runs (before the session drops them)."""
    from plait.runtime.coverage import measure

    by_spec: dict[int, tuple[Any, list[tuple[str, list[dict[str, Any]]]]]] = {}
    for outcome in outcomes:
        if outcome.run_id is None or outcome.spec.graph is None:
            continue
        runs = by_spec.setdefault(id(outcome.spec), (outcome.spec, []))[1]
        runs.append((outcome.test.entry, rows_of(outcome.run_id)))
    return [measure(spec.graph, runs, Path(spec.path).name) for spec, runs in by_spec.values()]


_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


def _selector(expression: str | None) -> Callable[[str], bool]:
    """`-k` as pytest reads it: words matched as substrings of the id, with and / or / not and brackets."""
    if not expression:
        return lambda id: True
    tokens = _TOKEN.findall(expression)
    # Checked once on a sample id: a malformed expression is a usage error before anything runs.
    _match(tokens, "", expression)
    return lambda id: _match(tokens, id.lower(), expression)


def _match(tokens: list[str], id: str, expression: str) -> bool:
    position = 0

    def fail() -> ValueError:
        return ValueError(f"-k: cannot read `{expression}`")

    def disjunction() -> bool:
        nonlocal position
        value = conjunction()
        while position < len(tokens) and tokens[position] == "or":
            position += 1
            value = conjunction() or value
        return value

    def conjunction() -> bool:
        nonlocal position
        value = negation()
        while position < len(tokens) and tokens[position] == "and":
            position += 1
            value = negation() and value
        return value

    def negation() -> bool:
        nonlocal position
        if position < len(tokens) and tokens[position] == "not":
            position += 1
            return not negation()
        return atom()

    def atom() -> bool:
        nonlocal position
        if position >= len(tokens):
            raise fail()
        token = tokens[position]
        position += 1
        if token == "(":
            value = disjunction()
            if position >= len(tokens) or tokens[position] != ")":
                raise fail()
            position += 1
            return value
        if token in (")", "and", "or"):
            raise fail()
        return token.lower() in id

    result = disjunction()
    if position != len(tokens):
        raise fail()
    return result


def _usage(message: str) -> int:
    print(clean(f"plait test: {message}"), file=sys.stderr)  # messages quote paths
    return EXIT_USAGE
