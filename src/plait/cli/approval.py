"""Pending tool calls → a person's decisions (approve, approve the same call for the rest of the run, edit, reject),
asked on the terminal by `plait run` and `chat`.

Edited arguments are checked against the tool's JSON Schema before they are
accepted, with the same validator the runtime uses on a model's arguments: a
person's typo gets the reason and the question again, rather than a tool call
that fails (or, worse, succeeds with the wrong shape) after approval.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from .fields import ask_line, ask_value, say, show

__all__ = ["ask_decisions", "check_edit", "edit_arguments", "tool_schemas"]


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
    """approve / same / edit / reject for each pending call, asked on stderr and read from stdin.

    `same` approves the call and every later call of the tool with the same
    arguments in this run (remembered with the run, so a resume keeps it).

    The call is shown field by field. `edit` opens $VISUAL or $EDITOR on the
    arguments as JSON when one is set, else asks each parameter again with the
    model's value kept on an empty line; either way the result is checked
    against the tool's schema, and a misfit gets the reason and the question
    again. Raises EOFError when input ends before every call has a decision:
    the caller keeps the calls pending (the run or chat stops for a human, exit 3).
    """
    from plait.runtime.outcomes import Decision

    decisions = {}
    for p in pending:
        where = f" (branch {p.branch})" if p.branch else ""
        say(f"\n{p.agent}{where} wants to call `{p.tool}` (call {p.id})")
        for name, value in (p.arguments or {}).items():
            say(f"    {name}: {show(value)}")
        schema = (schemas or {}).get(p.tool)
        while True:
            answer = ask_line("  approve, same for the rest of this run, edit or reject? [a/s/e/r] ").strip().lower()
            if answer in ("a", "approve", "y", "yes"):
                decisions[p.id] = Decision("approve")
            elif answer in ("s", "same", "approve_same"):
                decisions[p.id] = Decision("approve_same")
            elif answer in ("e", "edit"):
                arguments, reason = edit_arguments(p.arguments or {}, schema)
                if arguments is None:
                    say(f"  {reason}; approve, edit again or reject")
                    continue
                decisions[p.id] = Decision("edit", arguments)
            elif answer in ("r", "reject", "n", "no"):
                decisions[p.id] = Decision(
                    "reject", message=ask_line("  message for the model (optional): ").strip() or None
                )
            else:
                say("  type a (approve), s (approve this and the same call again in this run), e (edit) or r (reject)")
                continue
            break
    return decisions


def edit_arguments(
    arguments: dict[str, Any], schema: dict[str, Any] | None
) -> tuple[dict[str, Any] | None, str | None]:
    """Edited arguments that fit `schema`, or (None, why not): in $VISUAL/$EDITOR when set, else field by field."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if editor:
        text, problem = _in_editor(editor, arguments)
        return check_edit(text, schema) if problem is None else (None, problem)
    if schema and schema.get("type") == "object" and "properties" in schema:
        return check_edit(json.dumps(ask_value(schema, arguments, indent="    ")), schema)
    return check_edit(ask_line("  new arguments (JSON): "), schema)


def _in_editor(editor: str, arguments: dict[str, Any]) -> tuple[str, str | None]:
    """The arguments as JSON in a temporary file, opened in the person's editor: (the file's text afterwards, None),
    or ("", why the editor could not run)."""
    import shlex
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="plait-edit-") as folder:
        path = os.path.join(folder, "arguments.json")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(arguments, indent=2, ensure_ascii=False) + "\n")
        try:
            subprocess.run([*shlex.split(editor), path], check=False)
        except OSError as exc:  # no such editor: said, and the question is asked again
            return "", f"cannot start the editor `{editor}`: {exc.strerror or exc}"
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(), None
