"""Pending asks → a person's typed answers: from `--answer NAME=JSON`, or asked on the terminal by `plait run`.

An answer is checked against the ask's `answer` type before the run goes on
(runtime/ask.py); at a terminal a misfit gets the reason and the question
again, on the command line it is a usage error that changes nothing.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from plait.term import clean

__all__ = ["ask_answers", "asks_of", "parse_answers", "print_asks", "split_ask_decisions"]


def asks_of(pending: list[Any]) -> list[Any]:
    """The pending asks among a stop's pending items (the rest are tool calls waiting for approval)."""
    return [p for p in pending if getattr(p, "ask", None) is not None]


def parse_answers(items: list[str], program: Any) -> dict[str, Any]:
    """`NAME=JSON` items → answers keyed by ask name or pending id, as JSON (text for a text answer).

    Each is checked against its ask's type here, before the stored run is
    opened, so a refused answer leaves the run exactly as it was.
    """
    from plait.runtime.ask import accept, parse_answer

    answers: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--answer wants NAME=JSON, got `{item}`")
        # A pending id is the ask's graph path, which ends with the ask's name.
        ask = program.asks.get(name) or program.asks.get(name.rsplit("/", 1)[-1])
        if ask is None:
            raise ValueError(
                f"--answer {name}: the spec declares no ask `{name}`; asks: {', '.join(program.asks) or 'none'}"
            )
        answers[name] = parse_answer(ask, text)
        accept(ask, answers[name])
    return answers


def split_ask_decisions(items: list[str], program: Any) -> tuple[list[str], list[str]]:
    """`--decide` items → (decisions for pending calls, answers for asks): `--decide NAME=JSON` answers an ask
    as `--answer NAME=JSON` does, so one flag settles everything a stopped run waits for."""
    calls: list[str] = []
    asks: list[str] = []
    for item in items:
        name = item.partition("=")[0]
        is_ask = name in program.asks or name.rsplit("/", 1)[-1] in program.asks
        (asks if is_ask else calls).append(item)
    return calls, asks


def ask_answers(pending: list[Any], program: Any) -> dict[str, Any]:
    """An answer for each pending ask, asked on stderr and read from stdin until it fits (EOFError when input ends)."""
    from plait.runtime.ask import accept, parse_answer
    from plait.runtime.errors import AgentError

    answers = {}
    for p in asks_of(pending):
        ask = program.asks[p.ask]
        print(clean(f"\n{p.question}"), file=sys.stderr)
        if p.schema is not None:
            print(f"  (answer with JSON that fits: {json.dumps(p.schema)})", file=sys.stderr)
        while True:
            try:
                answers[p.id] = accept(ask, parse_answer(ask, input("  answer: ").strip()))
            except AgentError as exc:
                print(clean(f"  {exc.message}"), file=sys.stderr)
                continue
            break
    return answers


def print_asks(asks: list[Any], file: str | None, run_id: str | None) -> None:
    print("plait: the run is waiting for an answer to:", file=sys.stderr)
    for p in asks:
        wants = json.dumps(p.schema) if p.schema is not None else "text"
        print(clean(f"  {p.id}  ask `{p.ask}`: {p.question}\n      answer: {wants}"), file=sys.stderr)
    if file and run_id:
        print(f"resume with: plait run {file} --resume {run_id} --answer NAME=JSON", file=sys.stderr)
