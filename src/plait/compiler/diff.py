"""Two AgentGraphs → the semantic changes between them: nodes, edges and contracts added, removed or changed.

Both sides are compared through `to_json()` minus spans, so formatting,
comments, declaration order and where things were written never show up;
only what the compiled graph means does. Changes come out in a stable order:
new-side declaration order, then what only the old side had.

A runnable's output type is compared field by field, and a route's cases
case by case, so a removed enum member or a retargeted case is one line.
`case` and `back` edges are drawn from those node attributes (a route's
cases, a loop's condition and bound), so they are compared there only.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Callable

from plait.core.kinds import KINDS, contracts

from .graph import AgentGraph

__all__ = [
    "CONTRACTS",
    "EMITTERS",
    "Change",
    "changes_to_json",
    "changes_to_text",
    "diff_graphs",
    "render_changes",
    "schema_text",
]

#: Attributes that are a kind's contract (drawn on the picture; its record's `contract` fields); other attribute
#: changes are "attribute".
CONTRACTS: dict[str, tuple[str, ...]] = {kind: contracts(cls) for kind, cls in KINDS.items()}
#: `tool`: an agent's `files.read_text_file` and `files.write_file` are two `uses` edges to one server.
_EDGE_ATTRS_IN_KEY = ("chain", "branch", "path", "tool")
#: Attributes derived from others compared already: an MCP server's fingerprint (its command, url, env, headers).
_DERIVED_ATTRS = ("fingerprint",)
#: Edges that only redraw node attributes compared already (a route's cases and breaks, a loop's until and bound).
_DERIVED_EDGES = ("case", "back", "break")
#: Attributes holding a type, compared field by field.
_TYPED = ("output", "type")


@dataclass(frozen=True)
class Change:
    #: "node", "edge", "contract", "attribute" or "entry".
    what: str
    #: "added", "removed" or "changed".
    op: str
    #: The node id (node, contract, attribute), "source -> target" (edge), or "" (entry).
    subject: str
    #: The node's kind, or the edge's kind.
    kind: str
    field: str | None = None
    old: Any = None
    new: Any = None

    def describe(self) -> str:
        mark = {"added": "+", "removed": "-", "changed": "~"}[self.op]
        if self.what == "entry":
            return f"~ entry {_show(self.old)} → {_show(self.new)}"
        if self.what == "node":
            return f"{mark} node {self.kind} {self.subject}"
        if self.what == "edge":
            attrs = self.new if self.op == "added" else self.old
            extra = " (" + ", ".join(f"{k} {_show(v)}" for k, v in attrs.items()) + ")" if attrs else ""
            return f"{mark} edge {self.kind} {self.subject}{extra}"
        if self.op == "added":
            return f"+ {self.kind} {self.subject}: {self.field} {_show(self.new)}  [{self.what}]"
        if self.op == "removed":
            return f"- {self.kind} {self.subject}: {self.field} (was {_show(self.old)})  [{self.what}]"
        return f"~ {self.kind} {self.subject}: {self.field} {_verb(self.old, self.new)}  [{self.what}]"


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


def _verb(old: Any, new: Any) -> str:
    """How a value moved, in words a reviewer scans for: raised, lowered, gained, lost, items added/removed."""
    if isinstance(old, bool) or isinstance(new, bool):
        return f"turned {'on' if new else 'off'} ({_show(old)} → {_show(new)})"
    if isinstance(old, int | float) and isinstance(new, int | float):
        return f"{'raised' if new > old else 'lowered'} {_show(old)} → {_show(new)}"
    if isinstance(old, list) and isinstance(new, list):
        added = [x for x in new if x not in old]
        removed = [x for x in old if x not in new]
        parts = [f"added {_show(added)}"] if added else []
        parts += [f"removed {_show(removed)}"] if removed else []
        return (
            ", ".join(parts) + f" ({_show(old)} → {_show(new)})" if parts else f"reordered {_show(old)} → {_show(new)}"
        )
    if old is None:
        return f"set to {_show(new)}"
    if new is None:
        return f"unset (was {_show(old)})"
    return f"changed {_show(old)} → {_show(new)}"


def _nodes(data: dict) -> dict[str, dict]:
    return {n["id"]: n for n in data["nodes"]}


def _edges(data: dict) -> dict[tuple, dict]:
    """Edges keyed by what identifies them; the rest (order, index, approval, succeeded) can change."""
    out: dict[tuple, dict] = {}
    for e in data["edges"]:
        if e["kind"] in _DERIVED_EDGES:
            continue
        # A path is a JSON list; as text it can be part of a key.
        key = (e["source"], e["target"], e["kind"], *(_show(e["attrs"].get(a)) for a in _EDGE_ATTRS_IN_KEY))
        out.setdefault(key, e)
    return out


def _node_changes(old: dict, new: dict) -> list[Change]:
    out = []
    for id, node in new.items():
        if id not in old:
            out.append(Change("node", "added", id, node["kind"]))
        elif old[id]["kind"] != node["kind"]:
            out += [Change("node", "removed", id, old[id]["kind"]), Change("node", "added", id, node["kind"])]
        else:
            contracts = CONTRACTS.get(node["kind"], ())
            for field, value in node["attrs"].items():
                before = old[id]["attrs"].get(field)
                if before == value or field in _DERIVED_ATTRS:
                    continue
                contract = field in contracts or _expressions_differ(before, value) or _answered(field, before, value)
                what = "contract" if contract else "attribute"
                if field in _TYPED and isinstance(before, dict) and isinstance(value, dict):
                    out += _type_changes(what, id, node["kind"], field, before, value)
                elif field in ("cases", "breaks") and isinstance(before, list) and isinstance(value, list):
                    # A case that goes to a runnable or to `break` is one case: compared once, by its literal.
                    if field == "breaks" and old[id]["attrs"].get("cases") != node["attrs"].get("cases"):
                        continue
                    out += _case_changes(id, node["kind"], _every_case(old[id]["attrs"]), _every_case(node["attrs"]))
                elif field == "offered" and isinstance(before, list) and isinstance(value, list):
                    out += _offered_changes(id, node["kind"], before, value)
                elif field == "bindings" and isinstance(before, dict) and isinstance(value, dict):
                    out += _binding_changes(what, id, node["kind"], before, value)
                else:
                    out.append(Change(what, "changed", id, node["kind"], field, before, value))
    out += [Change("node", "removed", id, node["kind"]) for id, node in old.items() if id not in new]
    return out


def _answered(field: str, old: Any, new: Any) -> bool:
    """A tool an agent answers or the provider runs (plait 0.3): which agent or hosted tool it is, and what it
    returns, are what the tool promises the model, so a changed `run` is a contract change."""
    return field == "run" and any(isinstance(v, dict) and v.get("type") in ("agent", "hosted") for v in (old, new))


def _expressions(value: Any) -> list[str]:
    """The `{{ expression }}`s a template holds (not its plain paths), as written."""
    if not isinstance(value, str) or "{{" not in value:
        return []
    from .rules._placeholders import scan

    return [" ".join(text.split()) for _, _, text, problem in scan(value) if problem == "expression"]


def _expressions_differ(old: Any, new: Any) -> bool:
    """A template whose expressions changed changes what the runnable computes: a contract change (a reworded
    prompt around the same expressions stays an attribute change)."""
    return _expressions(old) != _expressions(new)


def _bound(value: Any) -> str:
    """A binding as the spec writes it: a path (a JSON list of its parts), or an expression's `{{ ... }}` text."""
    return value if isinstance(value, str) else ".".join(value)


def _binding_changes(what: str, id: str, kind: str, old: dict, new: dict) -> list[Change]:
    """`with` binding by binding (`with.topic`), each path as the spec writes it: what the runnable receives."""
    out = []
    for name, path in new.items():
        shown = _bound(path)
        if name not in old:
            out.append(Change(what, "added", id, kind, f"with.{name}", None, shown))
        elif old[name] != path:
            out.append(Change(what, "changed", id, kind, f"with.{name}", _bound(old[name]), shown))
    out += [Change(what, "removed", id, kind, f"with.{name}", _bound(p)) for name, p in old.items() if name not in new]
    return out


def _offered_changes(id: str, kind: str, old: list[dict], new: list[dict]) -> list[Change]:
    """An MCP server's offered tools, tool by tool: added, removed, or its description or schemas changed."""
    before = {t.get("name"): t for t in old}
    after = {t.get("name"): t for t in new}
    out = [
        Change("contract", "added", id, kind, f"offered.{n}", None, t.get("description"))
        for n, t in after.items()
        if n not in before
    ]
    for name, tool in after.items():
        for part in ("description", "input_schema", "output_schema") if name in before else ():
            was, now = before[name].get(part), tool.get(part)
            if was != now:
                shown = (was, now) if part == "description" else (schema_text(was), schema_text(now))
                out.append(Change("contract", "changed", id, kind, f"offered.{name}.{part}", *shown))
    out += [
        Change("contract", "removed", id, kind, f"offered.{n}", t.get("description"), None)
        for n, t in before.items()
        if n not in after
    ]
    return out


def schema_text(schema: Any) -> str:
    """A JSON Schema (as `to_json` writes a type) in the spec's own type words: `"a" | "b"`, `list[int]`, `object {x, y}`."""
    if not isinstance(schema, dict):
        return _show(schema)
    if "enum" in schema:
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    if "anyOf" in schema:
        return " | ".join(schema_text(s) for s in schema["anyOf"])
    kind = schema.get("type")
    if kind == "array":
        return f"list[{schema_text(schema.get('items', {}))}]"
    if kind == "object":  # a named record (plait 0.3) by its name, with its fields: a change shows in them
        return schema.get("title", "object") + " {" + ", ".join(schema.get("properties", {})) + "}"
    if kind == "string" and schema.get("format") in ("date", "date-time"):
        return "date" if schema["format"] == "date" else "datetime"
    words = {"string": "string", "integer": "int", "number": "float", "boolean": "bool", "null": "null"}
    return words.get(kind, "any") if isinstance(kind, str) else "any" if kind is None else _show(schema)


def _fields(schema: dict) -> dict[str, dict] | None:
    return schema.get("properties") if schema.get("type") == "object" else None


def _type_changes(what: str, id: str, kind: str, field: str, old: dict, new: dict, prefix: str = "") -> list[Change]:
    """One change per record field added, removed or retyped (nested records followed); else the whole type."""
    name = prefix or field
    before, after = _fields(old), _fields(new)
    if before is None or after is None:
        return [Change(what, "changed", id, kind, name, schema_text(old), schema_text(new))]
    out = []
    required_before, required_after = set(old.get("required", ())), set(new.get("required", ()))
    for key, schema in after.items():
        path = f"{name}.{key}"
        if key not in before:
            out.append(Change(what, "added", id, kind, path, None, schema_text(schema)))
        elif before[key] != schema:
            out += _type_changes(what, id, kind, field, before[key], schema, path)
        elif (key in required_before) != (key in required_after):
            out.append(
                Change(
                    what,
                    "changed",
                    id,
                    kind,
                    path,
                    "required" if key in required_before else "optional",
                    "required" if key in required_after else "optional",
                )
            )
    out += [
        Change(what, "removed", id, kind, f"{name}.{key}", schema_text(schema), None)
        for key, schema in before.items()
        if key not in after
    ]
    return out


def _every_case(attrs: dict[str, Any]) -> list[dict]:
    """A route's cases and its break cases (plait 0.3) as one list, a break's target written `break LOOP`."""
    breaks = [{"value": b["value"], "target": f"break {b['leaves']}"} for b in attrs.get("breaks") or ()]
    return list(attrs.get("cases") or ()) + breaks


def _case_changes(id: str, kind: str, old: list[dict], new: list[dict]) -> list[Change]:
    """A route's cases by literal: one added, removed or retargeted per line (`else` for a break's `else`)."""
    before = {_literal(c["value"]): c["target"] for c in old}
    after = {_literal(c["value"]): c["target"] for c in new}
    out = []
    for value, target in after.items():
        if value not in before:
            out.append(Change("contract", "added", id, kind, f"case {value}", None, target))
        elif before[value] != target:
            out.append(Change("contract", "changed", id, kind, f"case {value}", before[value], target))
    out += [
        Change("contract", "removed", id, kind, f"case {value}", target, None)
        for value, target in before.items()
        if value not in after
    ]
    return out


def _literal(value: Any) -> str:
    return "else" if value is None else json.dumps(value)


def _edge_changes(old: dict, new: dict) -> list[Change]:
    out = []
    for key, edge in new.items():
        subject = f"{key[0]} -> {key[1]}"
        if key not in old:
            out.append(Change("edge", "added", subject, edge["kind"], None, None, edge["attrs"] or None))
        elif old[key]["attrs"] != edge["attrs"]:
            for field, value in edge["attrs"].items():
                if old[key]["attrs"].get(field) != value:
                    out.append(
                        Change(
                            "contract",
                            "changed",
                            subject,
                            f"{edge['kind']} edge",
                            field,
                            old[key]["attrs"].get(field),
                            value,
                        )
                    )
    for key, edge in old.items():
        if key not in new:
            out.append(
                Change("edge", "removed", f"{key[0]} -> {key[1]}", edge["kind"], None, edge["attrs"] or None, None)
            )
    return out


def diff_graphs(old: AgentGraph, new: AgentGraph) -> list[Change]:
    """Every semantic change from `old` to `new` (AgentGraphs), in a stable order."""
    a, b = old.to_json(), new.to_json()
    changes = []
    if a["entry"] != b["entry"]:
        changes.append(Change("entry", "changed", "", "entry", "entry", a["entry"], b["entry"]))
    changes += _node_changes(_nodes(a), _nodes(b))
    changes += _edge_changes(_edges(a), _edges(b))
    return changes


def changes_to_text(changes: list[Change]) -> str:
    if not changes:
        return "no semantic differences\n"
    counts = {op: sum(c.op == op for c in changes) for op in ("added", "removed", "changed")}
    lines = [c.describe() for c in changes]
    noun = "change" if len(changes) == 1 else "changes"
    lines.append(
        f"{len(changes)} {noun}: {counts['added']} added, {counts['removed']} removed, {counts['changed']} changed"
    )
    return "\n".join(lines) + "\n"


def changes_to_json(changes: list[Change]) -> str:
    counts = {op: sum(c.op == op for c in changes) for op in ("added", "removed", "changed")}
    return json.dumps({"changes": [asdict(c) for c in changes], "summary": counts}, indent=2, ensure_ascii=False) + "\n"


def _mermaid(old: AgentGraph, new: AgentGraph, changes: list[Change]) -> str:
    from .render.diff_mermaid import diff_to_mermaid

    return diff_to_mermaid(old, new, changes)


#: `core.vocab.DIFF_FORMATS` → how the changes are written (a test holds the keys equal).
EMITTERS: dict[str, Callable[[AgentGraph, AgentGraph, list[Change]], str]] = {
    "text": lambda old, new, changes: changes_to_text(changes),
    "json": lambda old, new, changes: changes_to_json(changes),
    "mermaid": _mermaid,
}


def render_changes(format: str, old: AgentGraph, new: AgentGraph, changes: list[Change]) -> str:
    """The changes from `old` to `new` in `format` (one of core.vocab.DIFF_FORMATS)."""
    return EMITTERS[format](old, new, changes)
