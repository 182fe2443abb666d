"""A value and a JSON Schema → the problems that keep it from fitting, and the value with absent optional fields filled.

One validator per schema (kept by identity: config schemas live as long as the
program), so a code step's output, a run's input, a state write and an ask's
answer are checked by the same full JSON Schema validator as tool arguments.
"""

from __future__ import annotations

from typing import Any

__all__ = ["complete", "problem", "problems", "where"]

_JSON_TYPE = {
    bool: "boolean",
    int: "number",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
    type(None): "null",
}

#: id(schema) → (schema, its validator); the schema is kept so its id is never reused while cached.
_VALIDATORS: dict[int, tuple[dict[str, Any], Any]] = {}


def where(path: Any) -> str:
    """A JSON path as a person reads it: `$.sections[2].title`."""
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def problem(error: Any) -> str:
    """One jsonschema error → `$.city: expected string, got number`."""
    if error.validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return f"{where(error.absolute_path)}: expected {expected}, got {_JSON_TYPE.get(type(error.instance), 'value')}"
    if error.validator == "required":
        missing = error.message.split("'")[1] if error.message.count("'") >= 2 else error.message
        return f"{where(error.absolute_path)}: field `{missing}` is missing"
    return f"{where(error.absolute_path)}: {error.message}"


def _validator(schema: dict[str, Any]) -> Any:
    entry = _VALIDATORS.get(id(schema))
    if entry is None or entry[0] is not schema:
        from jsonschema import validators

        validator = validators.validator_for(schema)(schema, format_checker=_formats())
        entry = _VALIDATORS[id(schema)] = (schema, validator)
    return entry[1]


_CHECKER: list[Any] = []


def _formats() -> Any:
    """A format checker for the formats a spec's types write (`date`, `date-time`), checked as the compiler's
    `matches` checks a literal; jsonschema checks no format unless given one, and its own `date-time` needs
    an extra package."""
    if not _CHECKER:
        from jsonschema import FormatChecker

        from plait.core.types import FORMATS, is_iso

        checker = FormatChecker(formats=())
        for kind, name in FORMATS.items():
            checker.checks(name)(lambda value, kind=kind: not isinstance(value, str) or is_iso(kind, value))
        _CHECKER.append(checker)
    return _CHECKER[0]


def problems(value: Any, schema: dict[str, Any] | None) -> list[str]:
    """Every way `value` misses `schema`, in path order; [] when it fits (or there is no schema)."""
    if not schema:
        return []
    validator = _validator(schema)
    if validator.is_valid(value):
        return []
    errors = [e for error in validator.iter_errors(value) for e in _closest(error)]
    return [problem(e) for e in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path])]


def _closest(error: Any) -> list[Any]:
    """An `anyOf` miss (a union of records, plait 0.3) as the errors of the option the value was meant to be:
    not those whose one-literal field (the discriminator) it contradicts, then the one it misses least. "Not
    valid under any of the given schemas" tells the model nothing it can fix."""
    if error.validator != "anyOf" or not error.context:
        return [error]
    by_option: dict[int, list[Any]] = {}
    for sub in error.context:
        by_option.setdefault(sub.schema_path[0], []).append(sub)
    options = list(by_option.values())
    meant = [o for o in options if not any(_contradicts(sub) for sub in o)]
    if not meant:
        # Every record's discriminator says no (`kind: "boat"`): that one field is the problem, with its choices.
        wrong = [next(sub for sub in o if _contradicts(sub)) for o in options]
        if len({tuple(sub.relative_path) for sub in wrong}) == 1:
            choices = ", ".join(repr(v) for sub in wrong for v in sub.validator_value)
            wrong[0].message = f"{wrong[0].instance!r} is none of {choices}"
            return [wrong[0]]
    return [e for sub in min(meant or options, key=len) for e in _closest(sub)]


def _contradicts(error: Any) -> bool:
    """A field whose schema allows one literal (`kind: "flight"`) holding another: the record is another one."""
    enum = error.validator_value if error.validator == "enum" else None
    return isinstance(enum, list) and len(enum) == 1 and len(error.relative_path) == 1


def complete(value: Any, schema: dict[str, Any] | None) -> Any:
    """`value` with every declared object field it leaves out set to its default, else null, recursively.

    An optional field may be absent or null; making "absent" null once here
    means every reader (templates, routes, conditions) sees one shape.
    """
    if not schema or value is None:
        return value
    if isinstance(value, dict) and "properties" in schema:
        out = dict(value)
        for name, sub in schema["properties"].items():
            if name not in out:
                out[name] = sub.get("default") if isinstance(sub, dict) else None
            else:
                out[name] = complete(out[name], sub)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = schema["items"]
        return [complete(v, items) for v in value]
    for option in schema.get("anyOf") or ():
        if isinstance(option, dict) and option.get("type") != "null" and not problems(value, option):
            return complete(value, option)
    return value
