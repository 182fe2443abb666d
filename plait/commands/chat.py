"""`plait chat FILE [--agent NAME]` → a multi-turn conversation with one agent, history kept.

Each line read is one turn (`agent.complete`); replies stream to stdout. At a
TTY an approval interrupt asks approve/edit/reject; elsewhere the pending calls
are printed and the exit code is 3. The conversation is saved as a snapshot
under `.plait/chats/` after every turn, so nothing said is lost on a failure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from plait.cli import EXIT_ERRORS, EXIT_HUMAN, EXIT_OK, EXIT_USAGE

from .run import ask_decisions, fail, interactive, load_engine, print_pending


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="the .plait spec")
    parser.add_argument("--agent", metavar="NAME", help="the agent to talk to (default: main, or the only agent)")


def run(args: argparse.Namespace) -> int:
    engine = load_engine(args.file)
    if isinstance(engine, int):
        return engine
    agents = list(engine.program.agents)
    name = args.agent or ("main" if "main" in agents else (agents[0] if len(agents) == 1 else None))
    if name not in engine.program.agents:
        return fail(f"pick an agent with --agent: {', '.join(agents) or 'the spec has none'}", EXIT_USAGE)
    saved = Path(engine.program.base_dir or ".") / ".plait" / "chats" / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    return asyncio.run(_converse(engine, name, saved))


async def _converse(engine: Any, name: str, saved: Path) -> int:
    agent = engine.agent(name)
    tty = interactive()
    try:
        while True:
            if tty:
                print("you> ", end="", file=sys.stderr, flush=True)
            line = sys.stdin.readline()
            if not line:
                return EXIT_OK
            prompt = line.strip()
            if prompt in ("/exit", "/quit"):
                return EXIT_OK
            if not prompt:
                continue
            code = await _turn(agent, prompt, tty)
            _save(agent, saved)
            if code != EXIT_OK:
                return code
    finally:
        await engine.aclose()


async def _turn(agent: Any, prompt: str, tty: bool) -> int:
    try:
        async for event in agent.stream(prompt):
            if event.type == "text" and event.data.get("phase") != "commentary":
                print(event.data["text"], end="", flush=True)
            elif event.type == "tool_call_start" and tty:
                print(f"\n[{event.agent} calls {event.data['name']}]", file=sys.stderr)
        result = agent.last_result
        while result.stop_reason == "interrupt":
            if not tty:
                print()
                print_pending(result.pending)
                return EXIT_HUMAN
            result = await agent.resume(ask_decisions(result.pending))
            print(result.text, end="")
    except Exception as exc:  # a failed turn ends the chat with one line; the history is saved
        print()
        return fail(f"turn failed: {getattr(exc, 'kind', type(exc).__name__)}: {getattr(exc, 'message', exc)}", EXIT_ERRORS)
    print()
    if result.stop_reason == "pause":
        return EXIT_HUMAN
    return EXIT_OK


def _save(agent: Any, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(agent.snapshot(), default=str), encoding="utf-8")
    except OSError as exc:
        print(f"plait: could not save the conversation: {exc}", file=sys.stderr)
