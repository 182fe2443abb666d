"""`plait mcp lock [SPEC...]`: each declared MCP server started once → `plait.lock` beside the spec that declares it;
`plait mcp serve SPEC`: the spec's entries → MCP tools over stdio (src/plait/serve/protocols/mcp_server.py).

The lock records every tool the server offers (name, description, input and
output schema) and the server's identity, so `plait check` verifies MCP tools
offline and `plait run` can tell when the server has changed. Entries of
servers not locked this time are kept (another spec in the folder may declare
them). `--check` writes nothing and exits 1 when the lock would change: a CI
step that fails when someone forgot to re-lock.

Exit codes: 0 the locks are written (or, with --check, already current);
1 a spec has errors, a server could not be started, or --check found a
change; 2 usage (no spec found, the `mcp` package missing). `serve`: 0 when
the client hangs up, 1 the spec has errors, 2 usage.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass, field
from pathlib import Path

from plait.cli import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, print_diagnostics
from plait.cli.lock_files import compiled, declaring_file, read_lock, shown, spec_paths, write_lock
from plait.term import clean


def register(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="mcp_command", metavar="ACTION", required=True)
    lock = sub.add_parser(
        "lock",
        help="start each declared MCP server once and write its tools to plait.lock beside the spec",
        description="Start each MCP server the specs declare, once, and write what it offers to plait.lock "
        "beside the declaring spec. `plait check` reads the lock and never starts a server.",
        epilog="exit status: 0 the locks are written (with --check: already current); 1 a spec has errors, a "
        "server could not be started, or --check found a lock out of date; 2 usage (no spec found, the mcp "
        "package missing: pip install -e '.[mcp]' in plait's clone)",
    )
    lock.add_argument("specs", nargs="*", metavar="SPEC", help="spec files or folders (default: the current folder)")
    lock.add_argument(
        "--check",
        action="store_true",
        help="start every server as a lock does (trusted code only; `plait check --strict` starts none), write nothing; exit 1 if a lock would change",
    )
    serve = sub.add_parser(
        "serve",
        help="serve a spec's entries as MCP tools over stdio",
        description="Serve each entry of SPEC as an MCP tool on this process's stdin and stdout: the tool's input "
        "schema is the entry's `input` type, its result the run's output. Runs are journaled as `plait run`'s are; "
        "a run that waits for a person is a tool error naming the run id, and `plait resume ID` answers it.",
        epilog="exit status: 0 the client hung up; 1 the spec has errors; 2 usage (no such spec, a store that cannot "
        "be opened, the mcp or serve package missing: pip install -e '.[mcp,serve]' in plait's clone)",
    )
    serve.add_argument("spec", metavar="SPEC", help="the spec file whose entries become tools")
    serve.add_argument("--store", metavar="URL", help="the run journal (default: SQLite beside the spec)")


@dataclass
class _Folder:
    """The servers declared by specs of one folder, and that folder's lock."""

    path: Path
    servers: dict[str, tuple[object, str]] = field(default_factory=dict)
    #: The spec files that declare them (what the `--check` hint names, as `plait check`'s P333 help does).
    specs: set[Path] = field(default_factory=set)


def run(args: argparse.Namespace) -> int:
    if args.mcp_command == "serve":
        return _serve(args)
    from plait.runtime.mcp import missing_sdk

    specs, problem = spec_paths(args.specs or ["."])
    if problem:
        print(f"plait mcp lock: {problem}", file=sys.stderr)
        return EXIT_USAGE
    folders, failed = _declarations(specs)
    if failed:
        return EXIT_ERRORS
    if not folders:
        print("plait mcp lock: the specs declare no MCP server; nothing to lock")
        return EXIT_OK
    missing = missing_sdk()
    if missing:
        print(f"plait mcp lock: {missing}", file=sys.stderr)
        return EXIT_USAGE
    return asyncio.run(_lock_all(folders, args.check))


def _serve(args: argparse.Namespace) -> int:
    """`plait mcp serve SPEC`: stdout is the protocol's, so every word for a person goes to stderr."""
    from plait.serve.protocols import missing

    problem = missing("mcp")
    spec = Path(args.spec)
    if problem is None and not spec.is_file():
        problem = f"no such spec: {args.spec}"
    if problem:
        print(clean(f"plait mcp serve: {problem}"), file=sys.stderr)
        return EXIT_USAGE
    import plait

    try:
        compiled = plait.compile(spec)
    except (OSError, ValueError) as exc:
        print(clean(f"plait mcp serve: cannot read {args.spec}: {exc}"), file=sys.stderr)
        return EXIT_ERRORS
    if not compiled.ok:
        print_diagnostics(compiled.diagnostics, compiled.sources)  # on stderr: stdout is the protocol's
        return EXIT_ERRORS
    from plait.runtime.store import StoreError
    from plait.serve.protocols.mcp_server import serve_stdio
    from plait.serve.service import RunService, ServiceError

    try:
        service = RunService([spec], args.store)
    except (ServiceError, StoreError) as exc:
        print(clean(f"plait mcp serve: {exc}"), file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, StoreError) else EXIT_ERRORS

    async def serve() -> None:
        try:
            await serve_stdio(service)
        finally:
            await service.aclose()

    asyncio.run(serve())
    return EXIT_OK


def _declarations(specs: list[Path]) -> tuple[dict[Path, _Folder], bool]:
    """The MCP servers the specs declare, by the folder of the declaring file; True when a spec has errors.

    The MCP checks are left out: they read the lock this command is about to write.
    """
    from plait.compiler.passes.check_mcp import check_mcp
    from plait.core.graph import McpNode
    from plait.core.mcp_lock import fingerprint
    from plait.runtime.program import program_from_graph

    graphs, failed = compiled(specs, check_mcp)
    folders: dict[Path, _Folder] = {}
    for spec, graph in graphs:
        program = program_from_graph(graph)
        for name, config in program.mcp.items():
            node = graph.node(name)
            assert isinstance(node, McpNode)
            file = declaring_file(node, spec)
            entry = folders.setdefault(file.parent, _Folder(file.parent))
            # The same call check_mcp makes, so the entry written is the one `plait check` finds fresh.
            fp = fingerprint(command=node.command, url=node.url, env=node.env, headers=node.headers)
            entry.servers[name] = (config, fp)
            entry.specs.add(file)
    return folders, failed


async def _lock_all(folders: dict[Path, _Folder], check: bool) -> int:
    from plait.core.mcp_lock import LOCK_FILE, Lock, dumps
    from plait.runtime.mcp.locking import lock_server

    code = EXIT_OK
    for folder in sorted(folders.values(), key=lambda f: f.path):
        path = folder.path / LOCK_FILE
        where = shown(path)
        current, old = read_lock(path)
        if isinstance(old, Exception):
            print(clean(f"{where}: {old}; it is written anew"), file=sys.stderr)
            old = Lock()
        locked = []
        for name, (config, fp) in sorted(folder.servers.items()):
            try:
                locked.append(await lock_server(config, fp))  # type: ignore[arg-type]
            except Exception as exc:  # a server that cannot start: say which and why, lock the others
                print(clean(f"{where}: {name}: {exc}"), file=sys.stderr)  # a server's words: shown, never obeyed
                code = EXIT_ERRORS
        new = old.merged(*locked)
        for server in locked:
            print(clean(f"{where}: {server.name}: {_change(old.servers.get(server.name), server)}"))
        if not (locked or check):  # every server failed: the old lock stays as it was
            continue
        if not write_lock(path, dumps(new), current, check=check, command="mcp lock", specs=folder.specs):
            code = EXIT_ERRORS
    return code


def _change(before: object, after: object) -> str:
    """One line: what the new entry changes in the old one."""
    from plait.core.mcp_lock import LockedServer
    from plait.runtime.mcp.drift import compare, offered_tool

    assert isinstance(after, LockedServer)
    if not isinstance(before, LockedServer):
        server = f" from {after.server_name} {after.server_version}".rstrip() if after.server_name else ""
        return f"{len(after.tools)} tools locked{server}"
    notes = []
    drift = compare(map(offered_tool, before.tools), map(offered_tool, after.tools))
    if drift:
        notes.append(drift.describe())
    if before.fingerprint != after.fingerprint:
        notes.append("declaration changed")
    if (before.server_name, before.server_version) != (after.server_name, after.server_version):
        notes.append(
            f"server {before.server_name} {before.server_version} → {after.server_name} {after.server_version}"
        )
    return "; ".join(notes) or f"unchanged ({len(after.tools)} tools)"
