"""`plait serve [SPEC...]` → the specs as an HTTP service (src/plait/serve/): runs, events, decisions, the studio.

Specs (files, or directories searched as `plait check DIR` does; default the
current directory) are compiled once at start; a spec with errors stops the
server before it listens (exit 1, with its diagnostics). Runs are journaled
beside each spec (`.plait/journal.db`) or in `--store` (PostgreSQL for several
server processes); runs a killed server left are taken up at start. Needs the
`serve` extra (Starlette and uvicorn), imported only by this command. Exit 2
for a bad option, a missing token, a store that cannot be opened, or a port in use.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path

from plait.cli import EXIT_ERRORS, EXIT_OK, EXIT_USAGE
from plait.cli.runs import add_store, store_url


#: How long a SIGTERM waits for open requests (event streams, `?wait=`) before the server stops.
GRACE_SECONDS = 5


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("specs", metavar="SPEC", nargs="*", help="spec files or directories (default: .)")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="the port (default: 8000; 0 picks a free one)")
    parser.add_argument(
        "--token-file",
        metavar="FILE",
        help="a file holding the bearer token every request must carry (default: $PLAIT_SERVE_TOKEN)",
    )
    parser.add_argument(
        "--no-auth", action="store_true", help="no token (allowed only when --host is a loopback address)"
    )
    parser.add_argument(
        "--max-body", metavar="BYTES", type=int, default=2**20, help="the request body cap (default: 1 MiB)"
    )
    parser.add_argument("--mcp", action="store_true", help="also serve each entry as an MCP tool at /mcp")
    add_store(parser)
    parser.epilog = "Needs the `serve` extra: pip install 'plait[serve]'. The API: docs/serve.md."


def _specs(given: list[str]) -> list[Path] | str:
    from plait.dsl.discover import spec_files

    found: list[Path] = []
    for item in given or ["."]:
        path = Path(item)
        if path.is_dir():
            found.extend(spec_files(path))
        elif path.is_file():
            found.append(path)
        else:
            return f"no such spec file or directory: {item}"
    if not found:
        return f"no .plait specs under {', '.join(given or ['.'])}"
    return found


def run(args: argparse.Namespace) -> int:
    from plait.term import clean

    def fail(message: str, code: int = EXIT_USAGE) -> int:
        print(f"plait serve: {clean(message)}", file=sys.stderr)
        return code

    if args.max_body <= 0:
        return fail("--max-body must be a positive number of bytes")
    try:
        import uvicorn

        from plait.serve.app import build_app
        from plait.serve.auth import TokenError, load_token
        from plait.serve.service import RunService, ServiceError
    except ImportError as exc:
        return fail(f"needs {exc.name}: pip install 'plait[serve]'")
    try:
        token = load_token(args.token_file, args.no_auth, args.host)
    except TokenError as exc:
        return fail(str(exc))
    specs = _specs(args.specs)
    if isinstance(specs, str):
        return fail(specs)
    from plait.runtime.engine import SpecError
    from plait.runtime.errors import AgentError
    from plait.runtime.store import StoreError

    try:
        service = RunService(specs, store_url(args))
    except SpecError as exc:
        from plait.cli import print_diagnostics

        print_diagnostics(exc.diagnostics, {})
        return EXIT_ERRORS
    except AgentError as exc:  # a spec's store (a journal that cannot be opened) or runtime set-up refused
        return fail(str(exc))
    except ServiceError as exc:
        return fail(str(exc), EXIT_ERRORS)
    except StoreError as exc:
        return fail(str(exc))
    try:
        app = build_app(service, auth=token, mcp=args.mcp, max_body=args.max_body)
    except RuntimeError as exc:  # a protocol asked for whose SDK is missing
        return fail(str(exc))
    try:
        sock = _listen(args.host, args.port)
    except OSError as exc:  # the port is taken, the address is not ours
        return fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    # On SIGTERM: open event streams (a run waiting for a person keeps its stream open) get this long to end,
    # then the runs in flight are stopped and stored; the next start takes them up.
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=GRACE_SECONDS)
    server = uvicorn.Server(config)
    host, port = sock.getsockname()[:2]
    names = ", ".join(s.name for s in service.specs())
    # Bound and listening from here: a client may connect at once (it waits in the backlog until the app is up).
    print(f"plait serve: {names} on http://{_url_host(host)}:{port}", file=sys.stderr, flush=True)
    server.run(sockets=[sock])
    return EXIT_OK if server.started else EXIT_USAGE


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (port 0: a free one, named in the start line)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
