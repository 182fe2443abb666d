"""`plait check PATH...`: spec files and directories → diagnostics on stdout and an exit code.

Exit 0 when no errors are found (warnings allowed unless `--strict`), 1 when
some are, 2 on a usage problem or an internal failure. Several files make one
report (one JSON or SARIF document). Everything heavy is imported inside
`run`, and nothing here touches the runtime or the HTTP stack.
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

from plait.cli import EXIT_ERRORS, EXIT_OK, EXIT_USAGE
from plait.core.vocab import REPORT_FORMATS as FORMATS


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="spec files, or directories to search for *.plait (default: the current directory; "
        "hidden folders such as .plait/ and virtual environments are skipped)",
    )
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    parser.add_argument("--strict", action="store_true", help="fail (exit 1) on warnings too")
    parser.add_argument(
        "--select", metavar="CODES", help="report only these codes or prefixes, comma-separated (e.g. P1,P305)"
    )
    parser.add_argument("--ignore", metavar="CODES", help="never report these codes or prefixes, comma-separated")
    color = parser.add_mutually_exclusive_group()
    color.add_argument("--color", dest="color", action="store_const", const=True, help="colour text output always")
    color.add_argument("--no-color", dest="color", action="store_const", const=False, help="never colour text output")
    parser.add_argument("-q", "--quiet", action="store_true", help="print diagnostics only, no summary line")
    parser.add_argument(
        "--config",
        metavar="PATH",
        type=Path,
        help="use this plait.toml or pyproject.toml, not the one found by walking up from each spec",
    )
    parser.add_argument("--fix", action="store_true", help="apply the fixes diagnostics suggest, then report the rest")
    parser.add_argument(
        "--diff", action="store_true", help="print the fixes `--fix` would make as a diff; write nothing"
    )
    parser.epilog = (
        "File and syntax errors (P0xx) are always reported. `plait explain CODE` documents a code. "
        "`# plait: ignore[CODE]` on a line (or a declaration's first line) suppresses a warning there."
    )


def run(args: argparse.Namespace) -> int:
    # The cyclic collector is paused for the whole check: its passes over the ~100 modules' classes and
    # tables a check imports, and the parser's tables, find nothing to free (~10 ms of a small spec's
    # check, a tenth of it), and a compile leaves almost no cycles (about five per spec of examples/).
    # Reference counting still frees everything else; an in-process caller gets the collector back as it was.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(args)
    finally:
        if enabled:
            gc.enable()


def _run(args: argparse.Namespace) -> int:
    from plait.compiler.project import ConfigError, Resolver

    paths = args.paths or ["."]  # as `ruff check`: no path means the current directory, searched
    try:
        select = _selectors(args.select, "--select")
        ignore = _selectors(args.ignore, "--ignore")
        configs = Resolver(args.config)
        return _check(args, paths, configs, select, ignore)
    except ConfigError as exc:
        return _usage(str(exc))


def _check(args: argparse.Namespace, paths: list[str], configs, select: tuple, ignore: tuple) -> int:
    roots, empty = _specs(paths, configs)
    if not roots:
        return _usage("no .plait files found under " + ", ".join(f"`{p}`" for p in paths))
    for path in empty:
        print(f"plait check: warning: no .plait files under `{path}`", file=sys.stderr)
    for root, _ in roots:
        configs.of(root)  # a broken config is reported before any spec is checked, even with nothing to filter

    from plait.compiler.report import render, wants_color

    graphs: dict = {}  # spec → its graph when it compiled without errors: what `--format json`'s cost bound reads
    diagnostics, sources, failed = _diagnose(roots, configs, select, ignore, graphs)
    if args.diff:
        return _show_fixes(diagnostics, sources)
    if args.fix and _fix(diagnostics, sources):
        diagnostics, sources, failed = _diagnose(roots, configs, select, ignore, graphs)
    sources = {**sources, **_undecodable(diagnostics, sources)}
    options = {"summary": not args.quiet} if args.format == "text" else {}
    color = args.color if args.color is not None else wants_color(sys.stdout)
    output = render(diagnostics, sources, args.format, color=args.format == "text" and color, **options)
    if args.format == "json":
        output = _with_cost(output, graphs)
    _write(output)
    if failed:
        return EXIT_USAGE
    failing = [
        d
        for d in diagnostics
        if d.is_error or (str(d.severity) == "warning" and (args.strict or configs.of(d.span.file).strict))
    ]
    return EXIT_ERRORS if failing else EXIT_OK


def _with_cost(output: str, graphs: dict) -> str:
    """The JSON report with each error-free spec's static cost bound under `cost` (as `plait cost --format json`)."""
    import json

    from plait.compiler.bounds import bounds

    found = [{"file": str(path), "entries": [b.to_json() for b in bounds(graph)]} for path, graph in graphs.items()]
    if not found:
        return output
    document = json.loads(output)
    document["cost"] = found
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _diagnose(
    roots: list[tuple[Path, bool]], configs, select: tuple, ignore: tuple, graphs: dict | None = None
) -> tuple[list, dict, bool]:
    """Compile, apply inline suppressions, then the filters: `--select` over the config's, `--ignore` added to it."""
    from plait.compiler.project import reported
    from plait.compiler.suppress import apply

    diagnostics, sources, failed = _compile(roots, graphs)
    return reported(apply(diagnostics, sources), configs, select, ignore), sources, failed


def _planned(diagnostics: list, sources: dict) -> tuple[list, tuple]:
    """[(source, new text, edits)] per file a fix changes, and the fixes skipped for overlapping."""
    from plait.compiler import fixes

    plan = fixes.plan(diagnostics)
    changes = [
        (sources[file], fixes.apply_in_layout(sources[file], edits), edits)
        for file, edits in plan.edits.items()
        if file in sources and edits
    ]
    return changes, plan.skipped


def _show_fixes(diagnostics: list, sources: dict) -> int:
    from plait.compiler.fixes import diff
    from plait.core.redact import redact_text

    changes, skipped = _planned(diagnostics, sources)
    from plait.term import clean

    # A literal secret on a context line of the diff must not be printed (the report masks them too), nor a
    # control character a string holds raw (shown as an escape, as on every terminal path).
    _write(clean(redact_text("".join(diff(source, new) for source, new, _ in changes))))
    count = sum(len(edits) for _, _, edits in changes)
    print(f"plait check: {_fixes(count)} would change {_files(len(changes))}" + _later(skipped), file=sys.stderr)
    return EXIT_ERRORS if changes else EXIT_OK


def _fix(diagnostics: list, sources: dict) -> bool:
    """Write every file a fix changes (atomically) and say what changed; True when something was written."""
    from plait.compiler.fixes import write_atomic
    from plait.core.redact import redact_text

    changes, skipped = _planned(diagnostics, sources)
    written = made = 0
    for source, new, edits in changes:
        path = Path(source.path)
        try:
            if path.read_text(encoding="utf-8") != source.text:
                print(f"plait check: `{source.path}` changed while it was checked; not fixed", file=sys.stderr)
                continue
            write_atomic(path, new)
        except (OSError, UnicodeDecodeError) as exc:
            print(f"plait check: cannot fix `{source.path}`: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
            continue
        written += 1
        made += len(edits)
        for edit in edits:
            line = edit.describe(source.text[edit.span.offset : edit.span.end_offset])
            print(f"fixed {redact_text(line)}", file=sys.stderr)
    if changes:
        print(f"plait check: {_fixes(made)} applied in {_files(written)}" + _later(skipped), file=sys.stderr)
    else:
        print("plait check: nothing to fix", file=sys.stderr)
    return written > 0


def _fixes(n: int) -> str:
    return f"{n} fix" if n == 1 else f"{n} fixes"


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def _later(skipped: tuple) -> str:
    return f"; {_fixes(len(skipped))} overlapping another left for the next --fix" if skipped else ""


def _usage(message: str) -> int:
    print(f"plait check: {message}", file=sys.stderr)
    return EXIT_USAGE


def _selectors(raw: str | None, flag: str) -> tuple[str, ...]:
    """`P1,undefined-name` → ("P1", "P101"); a selector matching no code is a usage error (ConfigError)."""
    from plait.compiler.project import selectors

    return selectors((raw or "").split(","), flag)


def _specs(paths: list[str], configs) -> tuple[list[tuple[Path, bool]], list[str]]:
    """(path, found by searching a directory) for each spec to check, in a stable order; and the empty directories.

    A config's `exclude` applies to the search only: a file named on the command line is checked (as ruff does).
    """
    from plait.dsl.discover import spec_files

    out: list[tuple[Path, bool]] = []
    empty: list[str] = []
    for raw in paths:
        path = Path(raw)
        if not _is_dir(path):
            out.append((path, False))  # a missing or unreadable file becomes a P005 diagnostic
            continue
        found = [p for p in spec_files(path) if not configs.of(p).excludes(p)]
        if not found:
            empty.append(raw)
        out.extend((p, True) for p in found)
    return out, empty


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # e.g. a name too long for the file system: the loader reports it as unreadable
        return False


def _compile(roots: list[tuple[Path, bool]], graphs: dict | None = None) -> tuple[list, dict, bool]:
    """Every root compiled; a file found in a directory that another root imports is checked as part of it."""
    from plait.compiler.pipeline import compile_spec
    from plait.dsl.loader import resolve_path

    results = []
    failed = False
    for path, searched in roots:
        try:
            results.append((path, searched, compile_spec(path)))
        except Exception as exc:  # a compiler bug must not hide the other files' results
            print(f"plait check: internal error while checking {path}: {type(exc).__name__}: {exc}", file=sys.stderr)
            failed = True
    imported: set[Path] = set()
    for path, _, result in results:
        own = resolve_path(path)
        imported.update(p for p in map(resolve_path, result.sources) if p != own)
    diagnostics: dict = {}  # an ordered set: a file imported by two roots reports its problems once
    sources: dict = {}
    for path, searched, result in results:
        if searched and resolve_path(path) in imported:
            continue
        diagnostics.update(dict.fromkeys(result.diagnostics))
        sources.update(result.sources)
        if graphs is not None and result.graph is not None and not any(d.is_error for d in result.diagnostics):
            graphs[path] = result.graph
    return list(diagnostics), sources, failed


def _undecodable(diagnostics: list, sources: dict) -> dict:
    """Files the loader refused for their bytes (invalid UTF-8, NUL), decoded leniently so the bad spot can be shown."""
    from plait.dsl.loader import MAX_FILE_BYTES
    from plait.core.source import SourceFile

    out = {}
    for d in diagnostics:
        file, span = d.span.file, d.span
        if d.code != "P005" or file in sources or file in out or not (span.offset or span.end_offset):
            continue  # only a refusal that points into the file has something to show
        try:
            path = Path(file)
            if path.stat().st_size <= MAX_FILE_BYTES:
                out[file] = SourceFile(file, path.read_bytes().decode("utf-8", "replace"))
        except OSError:
            continue
    return out


def _write(text: str) -> None:
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    # A terminal that cannot show "…" or a name in another script still gets the report, not a traceback.
    sys.stdout.write(text.encode(encoding, "backslashreplace").decode(encoding))
    sys.stdout.flush()
