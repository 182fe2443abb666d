"""`plait models lock [SPEC...]`: the models the specs declare → their catalogue entries in `plait.lock` beside them.

Each entry holds the model's price, limits and capabilities from the
maintained catalogue packages (src/plait/cli/model_sources.py, the `models`
extra), so `plait check` checks models offline, reproducibly and fast, and
the cost bound and budgets price calls from the same numbers. An id the
catalogue does not list gets an entry saying so, with the nearest ids it
does list: `plait check` reports it (P341) with a did-you-mean. Models of
`openai-compatible` and `scripted` have no catalogue: their entry is what the
spec itself says (`price`, `context_window`, ...). The lock's MCP servers and
the entries of models no spec named this time are kept, as `plait mcp lock`
keeps them. `--check` writes nothing and exits 1 when a lock would change.

Exit codes: 0 the locks are written (or, with --check, already current);
1 a spec has errors, a model id the catalogue does not list, or --check found
a change; 2 usage (no spec found, the catalogue packages missing).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from plait.cli import EXIT_ERRORS, EXIT_OK, EXIT_USAGE
from plait.cli.lock_files import compiled, declaring_file, read_lock, shown, spec_paths, write_lock
from plait.term import clean


def register(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    lock = sub.add_parser(
        "lock",
        help="write the price, limits and capabilities of the models the specs use to plait.lock beside them",
        description="Look up each model the specs declare in the model catalogue (genai-prices for prices, "
        "models.dev for limits and capabilities) and write what it says to plait.lock beside the declaring "
        "spec. `plait check` reads the lock and never the catalogue.",
        epilog="exit status: 0 the locks are written (with --check: already current); 1 a spec has errors, a "
        "model the catalogue does not list, or --check found a lock out of date; 2 usage (no spec found, the "
        "catalogue packages missing: pip install -e '.[models]' in plait's clone)",
    )
    lock.add_argument("specs", nargs="*", metavar="SPEC", help="spec files or folders (default: the current folder)")
    lock.add_argument("--check", action="store_true", help="write nothing; exit 1 if a lock would change")


@dataclass
class _Folder:
    """The catalogued models declared by specs of one folder, and the spec files that declare them."""

    path: Path
    #: `provider/model-id` → the spec file and line first declaring it (for messages).
    refs: dict[str, str] = field(default_factory=dict)
    specs: set[Path] = field(default_factory=set)


def run(args: argparse.Namespace) -> int:
    from plait.cli.model_sources import missing

    specs, problem = spec_paths(args.specs or ["."])
    if problem:
        print(f"plait models lock: {problem}", file=sys.stderr)
        return EXIT_USAGE
    folders, failed = _declarations(specs)
    if failed:
        return EXIT_ERRORS
    if not any(f.refs for f in folders.values()):
        print("plait models lock: the specs declare no model a catalogue lists; nothing to lock")
        return EXIT_OK
    absent = missing()
    if absent:
        print(f"plait models lock: {absent}", file=sys.stderr)
        return EXIT_USAGE
    return _lock_all(folders, args.check)


def _declarations(specs: list[Path]) -> tuple[dict[Path, _Folder], bool]:
    """The catalogued models the specs declare, by the folder of the declaring file; True when a spec has errors.

    The model checks are left out: they read the lock this command is about to write."""
    from plait.compiler.passes.check_models import check_models, uncatalogued
    from plait.core.kinds import ModelNode

    graphs, failed = compiled(specs, check_models)
    folders: dict[Path, _Folder] = {}
    for spec, graph in graphs:
        for node in graph.nodes():
            if not isinstance(node, ModelNode) or uncatalogued(node.provider):
                continue
            file = declaring_file(node, spec)
            entry = folders.setdefault(file.parent, _Folder(file.parent))
            line = f":{node.span.line}" if node.span is not None else ""
            entry.refs.setdefault(f"{node.provider}/{node.model_id}", f"{shown(file)}{line}")
            entry.specs.add(file)
    return folders, failed


def _lock_all(folders: dict[Path, _Folder], check: bool) -> int:
    from plait.cli.model_sources import Catalogue
    from plait.core.mcp_lock import LOCK_FILE, Lock, dumps

    catalogue = Catalogue()
    code = EXIT_OK
    for folder in sorted(folders.values(), key=lambda f: f.path):
        if not folder.refs:
            continue
        path = folder.path / LOCK_FILE
        where = shown(path)
        current, old = read_lock(path)
        if isinstance(old, Exception):
            if check:
                print(clean(f"{where}: {old}"), file=sys.stderr)
                code = EXIT_ERRORS
                continue
            # The file is written anew only when it cannot be read: its MCP entries are then lost, so say so.
            print(
                clean(f"{where}: {old}; it is written anew (run `plait mcp lock` too if it held servers)"),
                file=sys.stderr,
            )
            old = Lock()
        entries = [catalogue.entry(*ref.split("/", 1)) for ref in sorted(folder.refs)]
        for entry in entries:
            before = old.models.get(entry.ref)
            if entry.info is None:
                near = entry.near[0] if entry.near else None
                hint = f"; did you mean {entry.ref.split('/')[0]}/{near}?" if near else ""
                where = folder.refs[entry.ref]
                print(clean(f"{where}: {entry.ref} is not in the model catalogue{hint}"), file=sys.stderr)
                code = EXIT_ERRORS
            elif before != entry:
                print(clean(f"{where}: {entry.ref}: {_change(before, entry)}"))
        text = dumps(old.with_models(*entries))
        if not write_lock(path, text, current, check=check, command="models lock", specs=folder.specs):
            code = EXIT_ERRORS
    return code


def _change(before: object, after: object) -> str:
    """One line: what the new entry is, or what it changes in the old one."""
    from plait.core.mcp_lock import LockedModel

    assert isinstance(after, LockedModel) and after.info is not None
    info = after.info
    if not isinstance(before, LockedModel) or before.info is None:
        price = f"${info.price.input:g}/${info.price.output:g} per M tokens" if info.price else "unpriced"
        window = f", {info.context_window} tokens of context" if info.context_window else ""
        return f"locked ({price}{window})"
    old = before.info
    changed = [
        name
        for name in ("price", "context_window", "max_output", "capabilities", "lacks")
        if getattr(old, name) != getattr(info, name)
    ]
    return "changed: " + ", ".join(changed)
