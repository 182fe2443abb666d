"""A final answer's text and its declared `output` JSON Schema → the parsed record, or what is wrong with it.

The provider was asked for the schema natively where it can be, but nothing on
the wire guarantees it (older models, compatible servers, a schema told in
words), so every structured answer is parsed and checked here (with the same
validator as every other record, `records.problems`) before a runnable's output
becomes a record. The model is asked for the strict form (every field listed,
an optional one as `T | null`), but an answer that leaves an optional field
out is accepted too, as the reference says (`complete` then makes it null). An invalid answer is a malformed turn: the guidance names the
schema errors so a retry can fix them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import AgentError
from .records import complete, problems

__all__ = [
    "GUIDANCE",
    "WRAPPED",
    "check_output",
    "guidance",
    "output_cut_off",
    "output_invalid",
    "summary",
    "wire_schema",
]

#: The one field a model's answer is asked to wrap an `output` that is not a record in (a top-level list, a union
#: of records): the providers' structured output wants an object at the top.
WRAPPED = "value"

#: How many schema errors a message names; the rest are counted.
_SHOWN = 5
#: id(strict schema) → (it, the same schema with optional fields not required); schemas live as long as the program.
_ACCEPTED: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
#: id(schema) → (it, its wrapped wire form); see wire_schema.
_WIRE: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
#: A model told the schema in words may still wrap its JSON in a code fence.
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n?```\s*$", re.S)

GUIDANCE = (
    "Attempt {attempt} of {total}: your previous answer does not match the required output schema: {errors}. "
    "Reply again with only one JSON object that matches this JSON Schema: {schema}"
)


def guidance(attempt: int, total: int, errors: list[str], schema: dict[str, Any]) -> str:
    """The retry message: what was wrong, and the schema itself, for a server that never saw it natively."""
    compact = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    return GUIDANCE.format(attempt=attempt, total=total, errors=summary(errors), schema=compact)


def check_output(text: str, schema: dict[str, Any]) -> tuple[Any, list[str]]:
    """(the parsed value, []) when `text` is JSON matching `schema`; else (None, the errors in words)."""
    fenced = _FENCE.match(text)
    try:
        value = json.loads(fenced.group(1) if fenced else text)
    except ValueError as exc:
        shown = text.strip()[:80]
        start = f"it begins {shown!r}" if shown else "the reply is empty"
        return None, [f"the answer is not JSON ({exc.args[0].split(':')[0]}; {start})"]
    accepted = _accepted(schema)
    errors = problems(value, accepted)
    if errors and schema.get("type") != "object" and isinstance(value, dict) and list(value) == [WRAPPED]:
        # Asked for on the wire as `{"value": ...}` (wire_schema); a model told in words may answer either way.
        if not problems(value[WRAPPED], accepted):
            value, errors = value[WRAPPED], []
    if errors:
        return None, errors
    return complete(value, schema), []


def wire_schema(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the provider is asked for: `schema` itself for a record, else a record of one field `value` holding
    it (OpenAI's and Anthropic's structured output take only an object at the top); check_output unwraps it."""
    if schema is None or schema.get("type") == "object":
        return schema
    entry = _WIRE.get(id(schema))
    if entry is None or entry[0] is not schema:
        wrapped = {
            "type": "object",
            "properties": {WRAPPED: schema},
            "required": [WRAPPED],
            "additionalProperties": False,
        }
        entry = _WIRE[id(schema)] = (schema, wrapped)
    return entry[1]


def _accepted(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` (strict) with every nullable field dropped from `required`: an optional field may also be absent."""
    entry = _ACCEPTED.get(id(schema))
    if entry is None or entry[0] is not schema:
        entry = _ACCEPTED[id(schema)] = (schema, _absent_ok(schema))
    return entry[1]


def _absent_ok(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_absent_ok(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _absent_ok(v) if k in ("items", "anyOf") else v for k, v in schema.items()}
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _absent_ok(v) for k, v in schema["properties"].items()}
        props = out["properties"]
        if isinstance(schema.get("required"), list):
            out["required"] = [n for n in schema["required"] if not _nullable(props.get(n))]
    return out


def _nullable(schema: Any) -> bool:
    return isinstance(schema, dict) and any(
        isinstance(o, dict) and o.get("type") == "null" for o in schema.get("anyOf") or ()
    )


def summary(errors: list[str]) -> str:
    """The first few errors, joined, with a count of the rest."""
    shown = "; ".join(errors[:_SHOWN])
    more = len(errors) - _SHOWN
    return f"{shown}; and {more} more" if more > 0 else shown


def output_invalid(
    agent: Any, errors: list[str], attempts: int, path: tuple[str, ...], rejected: bool = False
) -> AgentError:
    """The run's failure once the retry budget is spent (or was 0): what was wrong, and how to allow more tries.
    `rejected`: the answer matched its `output` but its `validate` function rejected it."""
    tries = f"{attempts} answers in a row" if attempts > 1 else "its answer"
    hint = (
        f"raise `retry_malformed` (now {agent.retry_malformed})"
        if agent.retry_malformed
        else "set `retry_malformed` to let it retry"
    )
    if rejected:
        missed = f"did not pass its validator `{(agent.validate or {}).get('target')}`"
    else:
        missed = "did not match its declared `output`"
    return AgentError("output_invalid", f"`{agent.name}`: {tries} {missed}: {summary(errors)}; {hint}", path=path)


def output_cut_off(agent: Any, why: str, fix: str, path: tuple[str, ...]) -> AgentError:
    """An answer that stopped before its JSON was complete: not malformed, so not retried; the limit is named."""
    return AgentError(
        "output_invalid",
        f"`{agent.name}`: its answer was cut off before it matched its declared `output` ({why}); {fix}",
        path=path,
    )
