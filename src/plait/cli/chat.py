"""`plait chat FILE [--agent NAME] [--resume CHAT]` → a multi-turn conversation with one agent, history kept.

Each line read is one turn (`agent.complete`); replies stream to stdout, and a
banner on stderr says which agent is listening and how to quit. At a TTY an
approval interrupt asks approve/edit/reject (edited arguments must fit the
tool's schema); elsewhere the pending calls are printed and the exit code is 3.
A failed turn is reported in one line and the conversation goes on. Ending
the chat (`/exit`, `/quit`, Ctrl-D at a terminal) exits 0 whatever turns
failed before; only input that is not a terminal ending right after a failed
turn exits 1 (a script's last question went unanswered). The conversation is
saved under `.plait/chats/` after every turn, so nothing said is lost on a
failure, and `--resume` continues it. The save replaces the file in one rename: a full disk keeps the history stored
before, says so in one line, and the exit code is then 1.

Budgets (the agent's `budget`, and `--budget usd=1`, the chat's own) cover the whole conversation, what it spent
kept with it. A turn that would go over one that pauses asks, at a TTY, for new limits (`usd=5`) or stop (Enter),
which ends the chat with exit code 3; elsewhere it prints why and exits 3. `--resume CHAT --budget usd=5` raises the
budget it stopped on. One whose `on_exceeded` is `fail` fails the turn (one line; the chat goes on).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from plait.cli import EXIT_ERRORS, EXIT_HUMAN, EXIT_OK, EXIT_USAGE
from plait.term import clean

from .approval import ask_decisions, tool_schemas
from .run import fail, interactive, load_engine, parse_budget, print_pending

QUIT = ("/exit", "/quit")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="the .plait spec")
    parser.add_argument("--agent", metavar="NAME", help="the agent to talk to (default: main, or the only agent)")
    parser.add_argument(
        "--resume",
        metavar="CHAT",
        help="continue a stored chat: its id (as the banner prints it) or its file under .plait/chats/",
    )
    parser.add_argument(
        "--budget",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="the chat's own budget over every turn (usd=1, tokens=N, model_calls=N, on_exceeded=pause|fail, "
        "unpriced=allow); on --resume, new limits for the budget the chat stopped on",
    )


def run(args: argparse.Namespace) -> int:
    try:
        budget = parse_budget(args.budget)
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    engine = load_engine(args.file, journaled=False)  # a chat is stored in its own file, not the run journal
    if isinstance(engine, int):
        return engine
    chats = Path(engine.program.base_dir or ".") / ".plait" / "chats"
    snapshot = None
    if args.resume:
        found = _find_chat(chats, args.resume)
        if isinstance(found, str):
            return fail(found, EXIT_USAGE)
        saved, snapshot = found
        name = str(snapshot["agent"])
        if args.agent and args.agent != name:
            return fail(f"chat `{saved.stem}` is with agent `{name}`, not `{args.agent}`", EXIT_USAGE)
        if name not in engine.program.agents:
            return fail(f"chat `{saved.stem}` is with agent `{name}`, which the spec no longer declares", EXIT_USAGE)
    else:
        agents = list(engine.program.agents)
        picked = args.agent or ("main" if "main" in agents else (agents[0] if len(agents) == 1 else None))
        if picked not in engine.program.agents:
            unknown = f"no agent `{args.agent}` in the spec; " if args.agent else ""
            return fail(f"{unknown}pick an agent with --agent: {', '.join(agents) or 'the spec has none'}", EXIT_USAGE)
        name = str(picked)
        saved = chats / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    return asyncio.run(_converse(engine, name, saved, snapshot, budget))


def _find_chat(chats: Path, ref: str) -> tuple[Path, dict[str, Any]] | str:
    """(file, snapshot) of a stored chat named by id or path, or why there is none (one line)."""
    path = Path(ref)
    if not path.suffix == ".json" or not path.exists():
        path = chats / f"{ref}.json"
    try:
        snapshot = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        known = sorted(p.stem for p in chats.glob("*.json")) if chats.is_dir() else []
        listed = f"; stored chats: {', '.join(known[-5:])}" if known else "; there are no stored chats"
        return f"no stored chat `{ref}`{listed}"
    except (OSError, ValueError) as exc:
        return f"cannot read chat `{ref}`: {exc}"
    if not isinstance(snapshot, dict) or "agent" not in snapshot or "run" not in snapshot:
        return f"`{path}` is not a stored chat"
    return path, snapshot


async def _converse(
    engine: Any, name: str, saved: Path, snapshot: dict[str, Any] | None, budget: dict[str, str] | None = None
) -> int:
    from plait.runtime.agent import Agent

    if snapshot:
        agent = Agent.restore(snapshot, engine.new_context())
        if budget:  # a raise for the budget it stopped on, else the chat's own
            agent.raise_budget(budget)
    else:
        agent = engine.agent(name, budget=budget)
    tty = interactive()
    resumed = f", {len(agent.history)} messages so far" if snapshot else ""
    print(
        clean(f"plait chat: talking to `{name}` (chat {saved.stem}{resumed}); /exit or Ctrl-D quits"), file=sys.stderr
    )
    status = EXIT_OK  # 1 once a save failed: what was said may not all be stored
    last_failed = False
    try:
        while True:
            if tty:
                print("you> ", end="", file=sys.stderr, flush=True)
            line = sys.stdin.readline()
            if not line:  # Ctrl-D at a terminal ends it as /exit does; a script's input ending on a failure is one
                return EXIT_ERRORS if last_failed and not tty else status
            prompt = line.strip()
            if prompt in QUIT:
                return status  # the person ended it, having seen every failed turn: not an error
            if not prompt:
                continue
            code = await _turn(agent, prompt, tty, tool_schemas(engine.program, agent.ctx.extra_tools))
            if not _save(agent, saved):
                status = EXIT_ERRORS  # reported; the file keeps the last history stored, the next turn tries again
            last_failed = code == EXIT_ERRORS  # reported; the conversation goes on
            if code not in (EXIT_OK, EXIT_ERRORS):
                return code
    finally:
        await engine.aclose()


async def _turn(agent: Any, prompt: str, tty: bool, schemas: dict[str, Any]) -> int:
    before = len(agent.history)
    try:
        async for event in agent.stream(prompt):
            if event.type == "text" and event.data.get("phase") != "commentary":
                print(clean(event.data["text"]), end="", flush=True)  # a model's reply: shown, never obeyed
            elif event.type == "tool_call_start" and tty:
                print(clean(f"\n[{event.agent} calls {event.data['name']}]"), file=sys.stderr)
        result = agent.last_result
        while result.stop_reason == "interrupt":
            if not tty:
                print()
                print_pending(result.pending)
                return EXIT_HUMAN
            try:
                decisions = ask_decisions(result.pending, schemas)
            except EOFError:  # input ended mid-question: the calls stay pending
                print()
                print_pending(result.pending)
                return EXIT_HUMAN
            result = await agent.resume(decisions)
            print(clean(result.text), end="")
        while result.stop_reason == "pause" and _budget_stop(agent) is not None:
            raised = _ask_raise(agent, tty)
            if raised is None:
                return EXIT_HUMAN  # the chat is saved as it stopped: `--resume CHAT --budget ...` goes on
            result = await agent.resume({})
            print(clean(result.text), end="")
    except Exception as exc:  # a failed turn is one line; the conversation before it is kept
        print()
        _forget_failed_turn(agent, before)
        kind = getattr(exc, "kind", type(exc).__name__)
        fail(f"turn failed: {kind}: {getattr(exc, 'message', exc)}")
        return EXIT_ERRORS
    print()
    if result.stop_reason == "pause":
        return EXIT_HUMAN
    return EXIT_OK


def _budget_stop(agent: Any) -> dict[str, Any] | None:
    """What the turn's pause stopped on, when it was a budget (its limit, spent and needed), else None."""
    ledger = agent.ledger
    return ledger.exceeded if ledger is not None else None


def _ask_raise(agent: Any, tty: bool) -> dict[str, str] | None:
    """At a TTY: new limits for the budget the turn stopped on (`usd=5 model_calls=40`), raised; None when the
    person stops (Enter, `stop`, end of input) or away from a TTY (the reason is printed either way)."""
    reason = agent.last_result.pause_reason if agent.last_result is not None else None
    print()
    print(clean(f"budget: {reason or 'the budget would be exceeded'}"), file=sys.stderr)
    if not tty:
        print(
            "plait: the chat stopped at its budget; raise it with `plait chat --resume CHAT --budget KEY=N`",
            file=sys.stderr,
        )
        return None
    while True:
        print("raise it (e.g. usd=5 model_calls=40) or press Enter to stop: ", end="", file=sys.stderr, flush=True)
        line = sys.stdin.readline()
        words = line.split()
        if not words or words == ["stop"]:
            return None
        try:
            items = parse_budget(words)
            assert items is not None
            agent.raise_budget(items)
        except ValueError as exc:
            print(clean(f"plait: {exc}"), file=sys.stderr)
            continue
        return items


def _forget_failed_turn(agent: Any, before: int) -> None:
    """Drop a failed turn that did nothing but ask, so a retry is not the same question twice in the history.

    A turn whose tools ran stays: the model must know what already happened
    (the next turn answers any call left open with a synthetic result).
    """
    added = agent.history[before:]
    if all(m.role == "user" for m in added):
        del agent.history[before:]


def _save(agent: Any, path: Path) -> bool:
    """The conversation → `path`, whole or not at all: written beside it, synced, then renamed over it.

    False (after one line on stderr) when it could not be stored: the file still holds the history of the
    last turn that was, never a truncated mix.
    """
    from plait.runtime.store.private import private_dir

    try:
        private_dir(path.parent)  # owner-only, as the run store: a chat holds everything said in it
        _write_atomically(path, json.dumps(agent.snapshot(), default=str).encode("utf-8"))
    except OSError as exc:
        kept = "the history stored before this turn is kept" if path.exists() else "nothing is stored yet"
        fail(f"could not save the conversation to {path} ({exc.strerror or exc}); {kept}")
        return False
    return True


def _write_atomically(path: Path, data: bytes) -> None:
    # mkstemp makes the file owner-only (0600), as a chat can hold anything said in it.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
