"""A JSON Schema → a value typed at the terminal, one question per field (for asks and edited tool arguments).

An object is asked field by field; each field by its declared type: a list of
choices for an enum (its number or its value), y/n for a boolean, a checked
number for an integer or a number, a line for a string. Lists and nested
objects are typed as JSON, with the shape they want shown. An optional field
left empty is left out; a field with a current value (`defaults`, e.g. the
arguments being edited) keeps it on an empty line. Questions go to stderr and
answers come from stdin, so stdout stays the run's output; input that ends
raises EOFError (the caller keeps the run waiting). Everything shown passes
through `plait.term.clean`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from plait.term import clean

__all__ = ["ask_line", "ask_value", "describe", "show"]

_SKIP = object()


def ask_line(prompt: str) -> str:
    """One line typed after `prompt` (on stderr), without its newline; EOFError when input ends."""
    print(clean(prompt), end="", file=sys.stderr, flush=True)
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\r\n")


def say(text: str) -> None:
    print(clean(text), file=sys.stderr, flush=True)


def show(value: Any) -> str:
    """A value as a person reads it: text as is, anything else as compact JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def describe(schema: dict[str, Any] | None) -> str:
    """What `schema` wants, in words: `decision: approve | reject; note: text (optional)`."""
    if schema is None:
        return "text"
    if "enum" in schema:
        return " | ".join(show(c) for c in schema["enum"])
    records = records_of(schema)
    if records:
        return "one of: " + " | ".join(f"{label} ({describe(record)})" for label, record in records)
    kind = schema.get("type")
    if kind == "object" and "properties" in schema:
        required = set(schema.get("required", ()))
        return "; ".join(
            f"{name}: {describe(field)}{'' if name in required else ' (optional)'}"
            for name, field in schema["properties"].items()
        )
    if kind == "array":
        return f"a list of {describe(schema.get('items'))}" if schema.get("items") else "a list"
    words = {"string": "text", "integer": "a whole number", "number": "a number", "boolean": "true or false"}
    return words.get(str(kind), json.dumps(schema, ensure_ascii=False))


def ask_value(schema: dict[str, Any] | None, defaults: Any = None, indent: str = "  ") -> Any:
    """The value `schema` describes, asked at the terminal (free text when there is no schema)."""
    if schema is None:
        return ask_line(f"{indent}answer: ")
    records = records_of(schema)
    if records:  # a union of records (`answer Booking`): which one, then its fields
        labels = [label for label, _ in records]
        chosen = _ask_field("which", {"enum": labels}, _SKIP, True, indent)
        return _ask_object(dict(records)[chosen], {}, indent)
    if schema.get("type") == "object" and "properties" in schema:
        return _ask_object(schema, defaults if isinstance(defaults, dict) else {}, indent)
    value = _ask_field("answer", schema, defaults, required=True, indent=indent)
    return None if value is _SKIP else value


def records_of(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A union of records (`anyOf` of objects, as `type Booking = Flight | Hotel` is) → (label, record) each: its
    type's name, else the literal of its discriminating field; empty for any other schema."""
    options = schema.get("anyOf") or schema.get("oneOf") or ()
    if len(options) < 2 or not all(o.get("type") == "object" and "properties" in o for o in options):
        return []
    labels = [o.get("title") for o in options]
    if not all(labels) or len(set(labels)) != len(labels):
        fixed = [[k for k, v in o["properties"].items() if len(v.get("enum", ())) == 1] for o in options]
        common = [k for k in fixed[0] if all(k in f for f in fixed[1:])]
        if not common:
            return []
        labels = [show(o["properties"][common[0]]["enum"][0]) for o in options]
    return list(zip(labels, options))


def _ask_object(schema: dict[str, Any], defaults: dict[str, Any], indent: str) -> dict[str, Any]:
    required = set(schema.get("required", ()))
    out: dict[str, Any] = {}
    for name, field in schema["properties"].items():
        if name in required and len(field.get("enum", ())) == 1 and name not in defaults:
            out[name] = field["enum"][0]  # one possible value (a record's discriminator): nothing to ask
            continue
        value = _ask_field(name, field, defaults.get(name, _SKIP), name in required, indent)
        if value is not _SKIP:
            out[name] = value
    return out


def _ask_field(name: str, field: dict[str, Any], current: Any, required: bool, indent: str) -> Any:
    kind = field.get("type")
    about = f" ({field['description']})" if field.get("description") else ""
    keep = f" [{show(current)}]" if current is not _SKIP and current is not None else ""
    optional = "" if required or keep else " (optional: empty skips)"
    if "enum" in field:
        choices = field["enum"]
        say(f"{indent}{name}{about}: " + ", ".join(f"{i}) {show(c)}" for i, c in enumerate(choices, 1)))
        while True:
            text = ask_line(f"{indent}  choose 1-{len(choices)}{keep}{optional}: ").strip()
            if not text:
                if keep or not required:
                    return current
                continue
            if text.isdigit() and 1 <= int(text) <= len(choices):
                return choices[int(text) - 1]
            matches = [c for c in choices if show(c) == text]
            if matches:
                return matches[0]
            say(f"{indent}  one of: {', '.join(show(c) for c in choices)} (or its number)")
    while True:
        prompt = f"{indent}{name}{about}"
        if kind == "boolean":
            prompt += " [y/n]"
        elif kind in ("integer", "number"):
            prompt += f" ({'a whole number' if kind == 'integer' else 'a number'})"
        elif kind in ("array", "object"):
            prompt += f" (JSON: {json.dumps(field, ensure_ascii=False)})"
        text = ask_line(f"{prompt}{keep}{optional}: ")
        if not text.strip() and kind != "string":
            if keep or not required:
                return current
            continue
        if not text and kind == "string" and (keep or not required):
            return current
        value, problem = _parse(text.strip() if kind != "string" else text, kind)
        if problem is None:
            return value
        say(f"{indent}  {problem}")


def _parse(text: str, kind: Any) -> tuple[Any, str | None]:
    if kind == "boolean":
        word = text.lower()
        if word in ("y", "yes", "true"):
            return True, None
        if word in ("n", "no", "false"):
            return False, None
        return None, "answer y or n"
    if kind == "integer":
        try:
            return int(text), None
        except ValueError:
            return None, f"`{text}` is not a whole number"
    if kind == "number":
        try:
            number = float(text)
        except ValueError:
            return None, f"`{text}` is not a number"
        if number != number or number in (float("inf"), float("-inf")):
            return None, f"`{text}` is not a finite number"
        return (int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number), None
    if kind in ("array", "object") or kind is None:
        try:
            return json.loads(text), None
        except ValueError as exc:
            return None, f"not JSON: {exc}"
    return text, None
