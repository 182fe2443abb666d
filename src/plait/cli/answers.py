"""Pending asks → a person's typed answers: from `--answer NAME=JSON`, or asked on the terminal by `plait run`.

An answer is checked against the ask's `answer` type before the run goes on
(src/plait/runtime/ask.py); at a terminal a misfit gets the reason and the question
again, on the command line it is a usage error that changes nothing.
"""

from __future__ import annotations

import json
import shlex
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
    """An answer for each pending ask, asked field by field from its declared type until it fits (EOFError when
    input ends): choices for an enum, y/n for a bool, checked numbers, a line for text (src/plait/cli/fields.py)."""
    from plait.runtime.ask import accept
    from plait.runtime.errors import AgentError

    from .fields import ask_value, say

    answers = {}
    for p in asks_of(pending):
        ask = program.asks[p.ask]
        say(f"\n{p.question}")
        while True:
            try:
                value = ask_value(p.schema)
                accept(ask, value)  # checked now, so a misfit is asked again; the run completes it (absent → null)
                answers[p.id] = value
            except AgentError as exc:
                say(f"  {exc.message}; again:")
                continue
            break
    return answers


def example(schema: dict[str, Any] | None) -> str:
    """A value that fits `schema`, as a resume hint shows it (the first choice of an enum, a zero, a word)."""
    if schema is None:
        return "text"
    if "enum" in schema:
        return json.dumps(schema["enum"][0], ensure_ascii=False)
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:  # a union (`answer Booking`): its first choice
        return example(options[0])
    kind = schema.get("type")
    if kind == "object":
        required = set(schema.get("required", ()))
        fields = {k: json.loads(example(v)) for k, v in schema.get("properties", {}).items() if k in required}
        return json.dumps(fields, ensure_ascii=False)
    return {"boolean": "true", "integer": "0", "number": "0", "array": "[]", "string": '"text"'}.get(str(kind), "null")


def print_asks(asks: list[Any], file: str | None, run_id: str | None) -> None:
    print("plait: the run is waiting for an answer to:", file=sys.stderr)
    from .fields import describe

    for p in asks:
        print(clean(f"  {p.id}  ask `{p.ask}`: {p.question}\n      answer: {describe(p.schema)}"), file=sys.stderr)
    if file and run_id:
        # The real names (an ask pending twice, inside a map, is answered by its id), with a value that fits.
        names = [p.ask if sum(q.ask == p.ask for q in asks) == 1 else p.id for p in asks]
        given = " ".join(shlex.quote(f"--answer={name}={example(p.schema)}") for name, p in zip(names, asks))
        print(clean(f"resume with: plait run {file} --resume {run_id} {given}"), file=sys.stderr)
