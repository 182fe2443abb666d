"""`plait fake-server SCRIPT` → a loopback server answering in the providers' wire formats until Ctrl-C.

The first stdout line is the server's root URL (flushed) so a CI script or a
benchmark can read it; the lines after it give the exact `base_url` for each
provider's SDK or model declaration. The script is the scripted provider's
replies file; see plait.runtime.providers.fake.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from plait.cli import EXIT_OK, EXIT_USAGE

HELP = """\
Point your app's client at the base_url printed for its provider:
  openai, openai-compatible  URL/v1   (Chat Completions and Responses)
  anthropic                  URL      (the SDK adds /v1/messages)
  google                     URL      (google-genai: http_options base_url)
Any API key is accepted.

A replies file may be a list (used in order by every request) or an object
keyed by agent name or model id, with "*" for the rest. A request picks its
agent's list by any of, in order:
  a base_url under /agents/NAME        URL/agents/triage/v1 for openai
  the x-plait-agent header
  the request's metadata.agent, Anthropic's metadata.user_id, or `user`
  the requested model id               e.g. "gpt-4o-mini" or "gemini-2.5-flash"

A reply: {"text": ...}, {"output": {...}} (a structured answer), {"tool_calls":
[{"name": ..., "arguments": {...}}]}, {"error": {"kind": "rate_limit"}}; see the
scripted provider in docs/language.md for the rest."""


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", help="replies file: a JSON list, or an object keyed by agent or model id")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port (default: 0, any free port)")
    parser.add_argument("--cycle", action="store_true", help="start the replies over when they run out")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = HELP + (f"\n\n{parser.epilog}" if parser.epilog else "")


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
        width = max(len(p) for p in server.base_urls())
        for provider, url in server.base_urls().items():
            print(f"  {provider + ':':<{width + 1}} base_url = {url}")
        print(f"  (an agent's own replies: {server.base_url('openai', 'NAME')}; see --help)", flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except OSError as exc:
        print(f"plait fake-server: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        pass
    return EXIT_OK
