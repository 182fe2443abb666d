"""`plait fake-server SCRIPT` → a loopback server answering in the providers' wire formats until Ctrl-C.

Prints the base URL on stdout (one line, flushed) so a CI script or a
benchmark can read it; point a model's `base_url` at it (`URL/v1` for openai
and openai-compatible, `URL` for anthropic and google). The script is the
scripted provider's replies file; see plait.runtime.providers.fake.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from plait.cli import EXIT_OK, EXIT_USAGE


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", help="replies file: a JSON list, or an object keyed by agent or model id")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port (default: 0, any free port)")
    parser.add_argument("--cycle", action="store_true", help="start the replies over when they run out")


def run(args: argparse.Namespace) -> int:
    from plait.runtime.providers.fake import FakeServer, Script

    try:
        script = Script.load(args.script, cycle=args.cycle)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"plait fake-server: cannot load {args.script}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    server = FakeServer(script, host=args.host, port=args.port, record=False)

    async def serve() -> None:
        print(await server.serve(), flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except OSError as exc:
        print(f"plait fake-server: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        pass
    return EXIT_OK
