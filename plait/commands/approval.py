"""Pending tool calls → a person's decisions (approve, edit, reject), asked on the terminal by `plait run` and `chat`.

Edited arguments are checked against the tool's JSON Schema before they are
accepted, with the same validator the runtime uses on a model's arguments: a
person's typo gets the reason and the question again, rather than a tool call
that fails (or, worse, succeeds with the wrong shape) after approval.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from plait.term import clean

__all__ = ["ask_decisions", "check_edit", "tool_schemas"]


def tool_schemas(program: Any, extra: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Tool name → its arguments' JSON Schema: the spec's tools, then tools registered in code (`extra`)."""
    tools = {**program.tools, **(extra or {})}
    return {name: tool.parameters for name, tool in tools.items()}


def check_edit(text: str, schema: dict[str, Any] | None) -> tuple[dict[str, Any] | None, str | None]:
    """(arguments, None) when `text` is a JSON object that fits `schema`; else (None, the reason, one line)."""
    from plait.runtime.records import problems

    try:
        value = json.loads(text)
    except ValueError as exc:
        return None, f"not JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"arguments are a JSON object ({{...}}), not {type(value).__name__}"
    found = problems(value, schema)
    if found:
        return None, "does not fit the tool's parameters: " + "; ".join(found)
    return value, None


def ask_decisions(pending: list[Any], schemas: Mapping[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """approve / edit / reject for each pending call, asked on stderr and read from stdin.

    Raises EOFError when input ends before every call has a decision: the caller
    keeps the calls pending (the run or chat stops for a human, exit 3).
    """
    from plait.runtime.outcomes import Decision

    decisions = {}
    for p in pending:
        where = f" (branch {p.branch})" if p.branch else ""
        print(clean(f"\n{p.agent}{where} wants to call `{p.tool}` with {json.dumps(p.arguments)}"), file=sys.stderr)
        while True:
            answer = input("  [a]pprove, [e]dit or [r]eject? ").strip().lower()
            if answer in ("a", "approve"):
                decisions[p.id] = Decision("approve")
            elif answer in ("e", "edit"):
                arguments, reason = check_edit(input("  new arguments (JSON): "), (schemas or {}).get(p.tool))
                if arguments is None:
                    print(clean(f"  {reason}; try again"), file=sys.stderr)
                    continue
                decisions[p.id] = Decision("edit", arguments)
            elif answer in ("r", "reject"):
                decisions[p.id] = Decision(
                    "reject", message=input("  message for the model (optional): ").strip() or None
                )
            else:
                continue
            break
    return decisions
