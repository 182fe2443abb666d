"""Scripted models → P307 when the replies file is missing, is not JSON, or is not a script.

Why: the scripted provider is what examples and tests run on; a broken script
should fail `plait check`, not the run halfway through. The file is read as
JSON data (never executed). Its shape is LANGUAGE.md's: a list of replies, or
an object mapping an agent or step name (or a graph path ending in one, such as
`main/each/[2]/item`: that place in the run only) to its own list; each reply an
object with known keys. For an object script, every key must name a declaration, and a
tool call an agent's reply makes must be to a tool that agent has. A runnable
without a key needs none until a run reaches it (issue 9.12): the scripted
provider then fails naming the model and the agent.
"""

from __future__ import annotations

import re
from itertools import islice
from pathlib import Path
from typing import Any, Iterator

from plait.core.diagnostics import Fix, Severity
from plait.core.redact import REDACTED, find_secrets
from plait.core.paths import MAX_DATA_BYTES, UnreadableFile, outside_root, read_regular

from plait.core.codes import declare, make
from ..context import CompileContext
from ..passes.check_mcp import tool_names
from ..schema import ERROR_KINDS, suggest
from ..draft import NOTHING

# The codes this module raises; their documentation is explain/<code>.md beside it.
P307 = declare("P307", "script-invalid", Severity.ERROR, "a scripted model's replies file is missing or does not parse")

__all__ = ["CODE", "script_invalid"]

CODE = "P307"

MAX_SCRIPT_BYTES = MAX_DATA_BYTES
#: Problems reported per script: past this, the rest are noise.
MAX_PROBLEMS = 10

_REPLY_KEYS = (
    "text",
    "output",
    "tool_calls",
    "finish_reason",
    "phase",
    "delay",
    "error",
    "usage",
    "parts",
    "response_id",
    "created_at",
    "hosted",
)
_CALL_KEYS = ("name", "arguments", "raw_arguments", "id")
_TYPES = {
    "text": str,
    "finish_reason": str,
    "phase": str,
    "usage": dict,
    "tool_calls": list,
    "parts": list,
    "hosted": dict,
}
_TYPE_WORDS = {str: "string", dict: "object", list: "list"}
#: The scripted provider's duration syntax (a bare number is seconds).
_DELAY = re.compile(r"^\s*\d+(?:\.\d+)?\s*(?:ms|s|m|h)?\s*$")


def _read(path: Path) -> tuple[Any, str | None]:
    try:
        text = read_regular(path, MAX_SCRIPT_BYTES).decode("utf-8")
    except FileNotFoundError:
        return None, "does not exist"
    except UnreadableFile as exc:
        return None, str(exc)
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot be read ({getattr(exc, 'strerror', None) or exc})"
    import json  # here, not at the top: only a spec with a scripted model reads a replies file

    try:
        return json.loads(text), None
    except ValueError as exc:
        return None, f"is not valid JSON: {exc}"
    except RecursionError:
        return None, "is nested too deeply to read"


def _reply(reply: Any, where: str, tools: tuple[str, ...] | None) -> Iterator[str]:
    if not isinstance(reply, dict):
        yield f'{where} is not an object like {{"text": "..."}}'
        return
    for key, value in reply.items():
        if key not in _REPLY_KEYS:
            hint = suggest(key, _REPLY_KEYS)
            yield f"{where} has unknown key `{key}`" + (f"; did you mean `{hint}`?" if hint else "")
        elif key in _TYPES and not isinstance(value, _TYPES[key]):
            yield f"{where}.{key} must be a {_TYPE_WORDS[_TYPES[key]]}"
    delay = reply.get("delay")
    if delay is not None and not (
        isinstance(delay, int | float) and not isinstance(delay, bool) or _DELAY.match(str(delay))
    ):
        yield f'{where}.delay `{delay}` is not a duration like "50ms"'
    if isinstance(reply.get("error"), dict | type(None)):
        kind = (reply.get("error") or {}).get("kind", "server_error")
        if kind not in ERROR_KINDS:
            yield f"{where}.error.kind `{kind}` is not an error kind"
    else:
        yield f'{where}.error must be an object like {{"kind": "rate_limit"}}'
    calls = reply.get("tool_calls")
    for i, call in enumerate(calls if isinstance(calls, list) else ()):
        at = f"{where}.tool_calls[{i}]"
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            yield f'{at} must be an object with a "name"'
            continue
        for key in call:
            if key not in _CALL_KEYS:
                yield f"{at} has unknown key `{key}`"
        if "arguments" in call and not isinstance(call["arguments"], dict):
            yield f"{at}.arguments must be an object"
        if tools is not None and call["name"] not in tools:
            yield f"{at} calls `{call['name']}`, which is not in the agent's `tools`"


def _callers(ctx: CompileContext, model: str) -> list[str]:
    """Runnables whose calls reach `model` first (the script is keyed by their names)."""
    names = [r.owner for r in ctx.references if r.target == model and r.attr == "model"]
    if any(r.target == model and r.attr == "judge" for r in ctx.references):
        names.append(model)  # a model judge asks under the model's own name
    return list(dict.fromkeys(names))


def _problems(ctx: CompileContext, model: str, script: Any) -> Iterator[str]:
    if isinstance(script, list):
        for i, reply in enumerate(script):
            yield from _reply(reply, f"reply [{i}]", None)
        return
    if not isinstance(script, dict):
        yield "must be a list of replies, or an object mapping agent and step names to lists"
        return
    callers = _callers(ctx, model)
    for key, replies in script.items():
        name = key.rsplit("/", 1)[-1]  # a graph path's last part is the runnable that calls
        if name not in ctx.decls:
            hint = ctx.hints(name, callers or list(ctx.decls))
            yield f"has replies for `{key}`, which nothing declares" + (f"; did you mean `{hint}`?" if hint else "")
        if not isinstance(replies, list):
            yield f"`{key}` must map to a list of replies"
            continue
        # The names the model sees: an MCP server's tools by their own names (unknown without its lock).
        tools = tool_names(ctx, name) if ctx.kind(name) == "agent" else None
        for i, reply in enumerate(replies):
            yield from _reply(reply, f"`{key}`[{i}]", tools)


def script_invalid(ctx: CompileContext) -> None:
    for name, decl in ctx.decls.items():
        values = ctx.values.get(name, NOTHING)
        if decl.kind != "model" or values.get("provider") != "scripted" or not values.get("script"):
            continue
        path = Path(values["script"])
        if not path.is_absolute():
            continue  # spec text with no file: nothing to resolve the script against
        span = ctx.spans.get(name, {}).get("script", decl.target.span)
        # The name is echoed in messages; a secret pasted into it is not (P501 reports it).
        shown = path.name if not find_secrets(str(path)) else REDACTED
        # Spec text with no file lives where the process runs, as the runtime has it (`plait.compile(text)`).
        root = ctx.load.root_dir or Path.cwd()
        if outside_root(path, root):
            # As imports: a spec reads files in its own folder only, so check never shows another file's keys.
            ctx.diagnostics.append(
                make(
                    CODE,
                    f"script of model `{name}` leaves the spec's directory",
                    span,
                    notes=[f"a script must stay inside `{root}` (no `../`, absolute path or symlink out)"],
                )
            )
            continue
        script, error = _read(path)
        if error is not None:
            fix = Fix("write the replies file beside the spec") if "does not exist" in error else None
            ctx.diagnostics.append(make(CODE, f"script `{shown}` of model `{name}` {error}", span, fix=fix))
            continue
        for problem in islice(_problems(ctx, name, script), MAX_PROBLEMS):
            ctx.diagnostics.append(make(CODE, f"script `{shown}` of model `{name}`: {problem}", span))
