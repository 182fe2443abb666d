"""Text before the cursor + the names a document sees → completion items for that position.

The text being typed rarely parses, so the position is read from the text
itself (strings, comments, brackets, `key =`, `->`) and the candidates come
from the files' last good parse: names of the kind the attribute's schema
entry accepts (`model =` a model, `tools = [` tools and agents, chain, loop,
map, parallel and route elements any runnable), the attribute keys of the
enclosing declaration's kind (src/plait/compiler/schema.py, the same table the checker
reads) and its typed blocks, a symbol's choices, and inside `{{` a template
path: runnable names, `input` and `state`, then after `NAME.` the fields of
NAME's declared `output` (or an ask's `answer`; `input.` the input block's);
inside `with { name: ` the same paths.
After `SERVER.` of an `mcp` declaration: the tools its `plait.lock` (beside
the declaring file) lists, within its allow-list; without a lock, none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

from plait.core import types as t
from plait.core.graph import RUNNABLE_KINDS
from plait.dsl import ast

from plait.compiler.schema import SCHEMAS, TYPED_BLOCKS, Attr

from . import words

__all__ = ["Completion", "complete"]


@dataclass(frozen=True, slots=True)
class Completion:
    label: str
    #: "declaration" (then `detail` is its kind), "attribute", "block", "field", "value", "keyword".
    kind: str
    detail: str = ""
    #: An attribute's doc line (from its kind record, src/plait/core/kinds/), shown beside the item.
    doc: str = ""


_STRING_BODY = r'(?:[^"\\]|\\.|"(?!""))*'
_TOKEN = re.compile(
    rf'(?P<string>"""{_STRING_BODY}"""|"(?:[^"\\\n]|\\.)*")'
    rf'|(?P<open>"""{_STRING_BODY}\Z|"(?:[^"\\\n]|\\.)*(?=\n|\Z))'
    r"|(?P<comment>#[^\n]*)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]*)*)"
    r"|(?P<number>[0-9][A-Za-z0-9_.]*)"
    r"|(?P<arrow>->)"
    r"|(?P<newline>\n)"
    r"|(?P<punct>[{}\[\]()=,])"
    r"|(?P<other>\S)",
    re.S,
)
_DECL_KEYWORDS = frozenset(
    {"model", "tool", "agent", "step", "consolidate", "chain", "parallel", "route", "loop", "map", "ask", "mcp"}
    | {"input", "state", "import", "thread"}
    | {"type", "test"}
)
_DECL_START = re.compile(rf"^(?:{'|'.join(sorted(_DECL_KEYWORDS))})\b", re.M)
_TYPED_KEYWORDS = frozenset({"params", "output", "answer", "object"})
# An open `{{` (no `}}` after it), then, wherever the cursor stands in a path or expression, the path being
# written (`{{ len(plan.ta|`), or the filter after `|` (`{{ docs | le|`).
_OPEN_TEMPLATE = re.compile(
    r"\{\{(?:(?!\}\}).)*?(?:\|\s*(?P<filter>\w*)|(?<![\w.|])(?P<path>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]*)*)?)$",
    re.S,
)
#: The filters offered after `|` inside `{{ }}` (Jinja's, as plait's expressions use them).
_FILTERS = (
    "default",
    "length",
    "join",
    "tojson",
    "upper",
    "lower",
    "trim",
    "first",
    "last",
    "sort",
    "unique",
    "round",
    "int",
    "float",
    "replace",
    "truncate",
    "title",
    "capitalize",
    "wordcount",
    "map",
    "select",
)


@dataclass
class _Open:
    """An open bracket: what it holds ("body", "list", "elements", "typed", "other") and the key it is the value of."""

    char: str
    role: str
    key: str | None = None
    #: For a body: the tokens of the attribute being written (since the last newline or comma), the keys written.
    statement: list[str] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)
    #: For a call (`delegate(`, `case(`): the tokens written between its brackets; for a call's block
    #: (`delegate(finder) {`), the call's.
    args: list[str] = field(default_factory=list)
    #: The call just closed in this statement (`run = delegate(finder)`): its name and arguments.
    closed: tuple[str, tuple[str, ...]] | None = None
    #: What earlier statements of a body wrote: `entry = main` → {"entry": ["main"]}.
    written: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class _Position:
    kind: str | None = None
    name: str | None = None
    #: Significant tokens at depth 0 since the declaration started.
    head: list[str] = field(default_factory=list)
    stack: list[_Open] = field(default_factory=list)
    in_string: str | None = None
    prefix: str = ""
    #: At the start of a statement outside every bracket: where a declaration may begin.
    at_start: bool = False


def complete(text: str, offset: int, declared: dict[str, ast.Decl], modules: list[ast.Module]) -> list[Completion]:
    """What may be written at `offset`: `declared` is every name the document sees, `modules` its (last good) files."""
    # Read from the declaration the cursor is in (the last line starting with a declaration keyword), not the file.
    starts = [m.start() for m in _DECL_START.finditer(text, 0, offset)]
    while starts and text.count('"""', 0, starts[-1]) % 2:  # a keyword at a line's start inside a block string
        starts.pop()
    pos = _read(text[starts[-1] if starts else 0 : offset])
    if pos.in_string is not None:
        match = _OPEN_TEMPLATE.search(pos.in_string)
        if match is not None and match.group("filter") is not None:
            return [Completion(f, "value", "filter") for f in _FILTERS if f.startswith(match.group("filter"))]
        return _template(match.group("path") or "", declared, modules, pos.name) if match else []
    if "." in pos.prefix:
        own = _own_paths(pos, declared, modules)
        return own if own is not None else _fields(pos.prefix, declared, modules)
    return list(_by_position(pos, declared, modules))


# --- reading the position -------------------------------------------------------------


def _read(before: str) -> _Position:
    pos = _Position()
    tokens = [(m.lastgroup or "", m.group()) for m in _TOKEN.finditer(before)]
    if tokens and tokens[-1][0] in ("open", "comment") and before.endswith(tokens[-1][1]):
        group, value = tokens[-1]
        # In a comment nothing is offered: an "open string" without a template.
        pos.in_string = value[3:] if value.startswith('"""') else value[1:] if group == "open" else ""
        return pos
    if tokens and tokens[-1][0] == "word" and before.endswith(tokens[-1][1]):
        pos.prefix = tokens.pop()[1]
    stack = pos.stack
    at_start = True  # at the start of a statement at depth 0
    for group, value in tokens:
        if group == "comment":
            continue
        if not stack:
            if group == "newline":
                at_start = True
                continue
            if at_start and group == "word" and value in _DECL_KEYWORDS:
                pos.kind, pos.name, pos.head = value, None, []
            elif pos.kind is not None and pos.name is None and group == "word" and len(pos.head) == 1:
                pos.name = value
            at_start = False
        top = stack[-1] if stack else None
        if group == "punct" and value in "{[(":
            stack.append(_opened(value, pos, top))
        elif group == "punct" and value in "}])":
            closed = stack.pop() if stack else None
            if closed is not None and closed.role == "call" and stack and closed.key is not None:
                stack[-1].closed = (closed.key, tuple(closed.args))
            if not stack:
                at_start = value == "}"
        elif top is not None and top.role == "call":
            top.args.append(value)
        elif top is not None and top.role in _STATEMENT_ROLES:
            if group == "newline" or value == ",":
                if len(top.statement) >= 3 and top.statement[1] == "=":
                    top.written[top.statement[0]] = top.statement[2:]
                top.statement.clear()
                top.closed = None
            else:
                top.statement.append(value)
                if value == "=" and len(top.statement) == 2:
                    top.keys.add(top.statement[0])
        if not stack and group != "newline":
            pos.head.append(value)
    pos.at_start = at_start and not stack
    return pos


#: The brackets whose statements are read (`key = value`, `name: type`, `expect ...`).
_STATEMENT_ROLES = ("body", "bindings", "typed", "budget", "options", "keyed", "arguments", "entry")
#: A test's attributes whose block is keyed by declarations: the kinds of those keys.
_KEYED = {
    "replies": ("agent", "step", "consolidate", "model"),
    "answers": ("ask",),
    "decisions": ("tool",),
    "tools": ("tool",),
}
_WORD_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _opened(char: str, pos: _Position, top: _Open | None) -> _Open:
    if top is not None and top.role == "call" and char == "{" and top.args and "," in top.args:
        return _Open(char, "arguments", key=top.key, args=top.args[:1])  # `called(lookup, {`
    if top is not None and top.role == "keyed":
        name = top.statement[0] if len(top.statement) == 2 and top.statement[1] == "=" else None
        if name is not None and char in "{[":  # `confirm = {`, `draft = [`
            return _Open(char, "entry" if char == "{" else "entries", key=top.key, args=[name])
    if top is not None and top.role == "entries" and char == "{":  # `draft = [{`
        return _Open(char, "entry", key=top.key, args=top.args)
    return _opened_within(char, pos, top)


def _opened_within(char: str, pos: _Position, top: _Open | None) -> _Open:
    if top is None:
        before = pos.head[-1] if pos.head else ""
        if char == "{":
            return _Open(char, "typed" if pos.kind in ("input", "state", "type") else "body")
        if char == "(" and before == "parallel":
            return _Open(char, "elements")
        if char == "[" and pos.kind == "parallel":
            return _Open(char, "elements")
        return _Open(char, "other")
    statement = top.statement
    key = statement[0] if len(statement) >= 2 and statement[1] == "=" else None
    if top.role == "body" and char == "[" and key is not None and len(statement) == 2:
        return _Open(char, "list", key=key)
    if char == "{" and statement and statement[-1] in _TYPED_KEYWORDS:
        return _Open(char, "typed")
    if char == "{" and top.role == "body" and statement == ["with"]:
        return _Open(char, "bindings")
    if char == "(" and top.role in ("body", "options") and statement and _WORD_TOKEN.match(statement[-1]):
        return _Open(char, "call", key=statement[-1])  # `run = delegate(`, `expect case(`
    if char == "{" and top.closed is not None and statement and statement[-1] == top.closed[0]:
        # `delegate(finder) {`, `hosted(web_search) {`, `judge(grader, "...") {`: the call's options.
        return _Open(char, "options", key=top.closed[0], args=list(top.closed[1]))
    if char == "{" and top.role == "body" and key is not None and len(statement) == 2:
        if pos.kind == "test" and key in _KEYED:
            return _Open(char, "keyed", key=key)
        attr = SCHEMAS.get(pos.kind or "", {}).get(key)
        if attr is not None and attr.type == "budget":
            return _Open(char, "budget", key=key)
    return _Open(char, "other")


# --- candidates -----------------------------------------------------------------------


def _names(declared: dict[str, ast.Decl], kinds: tuple[str, ...] | frozenset[str], own: str | None) -> list[Completion]:
    return [
        Completion(name, "declaration", decl.kind)
        for name, decl in declared.items()
        if decl.kind in kinds and name != own
    ]


def _by_position(pos: _Position, declared: dict[str, ast.Decl], modules: list[ast.Module]) -> Iterator[Completion]:
    top = pos.stack[-1] if pos.stack else None
    kind, own = pos.kind, pos.name
    if top is None:
        last = pos.head[-1] if pos.head else ""
        if pos.at_start and last not in ("=", "->", "on", "|", ","):
            yield from (Completion(word, "keyword", "declaration", doc) for word, doc in words.DECLARATIONS.items())
            return
        if kind == "type" and last == "=":  # `type Booking = |`
            yield from _types(declared, own)
        elif kind in ("chain", "loop", "map") and last in ("=", "->"):
            yield from _names(declared, RUNNABLE_KINDS, own)
        elif kind == "route" and last == "on":
            yield from _paths(declared, own)
        return
    if top.role == "elements":
        yield from _names(declared, RUNNABLE_KINDS, own)
        return
    if top.role == "bindings":
        # `with { name: |`: any path a template could read there.
        if len(top.statement) == 2 and top.statement[1] == ":":
            yield from _paths(declared, own)
            yield Completion("run", "value", "`run.input`: the run's input")
        return
    if top.role == "typed":
        # `name: |` in a typed block, or an `object { ... }`, `list[` inside one.
        if top.statement[-1:] in ([":"], ["|"]) or (len(top.statement) >= 2 and top.statement[1] == ":"):
            yield from _types(declared, own)
        return
    if top.role == "other" and len(pos.stack) >= 2 and pos.stack[-2].role == "typed":  # `list[|`
        yield from _types(declared, own)
        return
    if top.role == "list" and kind is not None and top.key is not None:
        yield from _values(SCHEMAS.get(kind, {}).get(top.key), declared, own)
        return
    if top.role in ("call", "options", "budget", "keyed", "arguments", "entry"):
        yield from _inside(top, kind, declared, own, modules)
        return
    if top.role != "body" or kind is None:
        return
    if kind == "test":
        yield from _test_body(top, declared, own)
        return
    if kind == "route" and top.statement and top.statement[-1] == "->":
        yield from _names(declared, RUNNABLE_KINDS, own)
        if "break" not in declared:  # plait 0.3: a case may leave the loop around the route
            yield Completion(
                "break", "value", "leave the loop", "`break` leaves the innermost loop; `break NAME` that loop."
            )
        return
    if kind == "route" and top.statement[-2:] == ["->", "break"] and "break" not in declared:
        yield from _names(declared, ("loop",), own)  # `-> break outer`
        return
    # A route's attributes (`budget`) stand among its cases; a chain's are in its block.
    schema = SCHEMAS.get(kind, {})
    statement = top.statement
    if not statement:
        used = top.keys
        for key, attr in schema.items():
            if key in used:
                continue
            if attr.type == "bindings":  # written as a block: `with { name: path }`
                yield Completion(key, "block", "with { name: path, ... }", attr.doc)
            else:
                yield Completion(key, "attribute", attr.type + (" (required)" if attr.required else ""), attr.doc)
        for keyword in TYPED_BLOCKS.get(kind, ()):
            yield Completion(keyword, "block", f"{keyword} {{ ... }}")
    elif len(statement) == 2 and statement[1] == "=":
        written = schema.get(statement[0])
        if kind == "map" and statement[0] == "filter":  # read bare: the fields of the list's item
            yield from _fields_of(_item(top.written.get("over"), declared, modules), [""])
            return
        if kind == "loop" and statement[0] == "until" and pos.head[-1:]:  # the body's output fields, bare
            yield from _fields_of(_output(pos.head[-1], declared, modules), [""])
        if kind == "tool" and statement[0] == "approval":  # a condition over the call's arguments
            yield from _params(declared.get(own or ""))
        if written is not None and written.type == "run":  # `run = |`: a step's is a code step's function only
            for name, doc in words.RUN_FUNCTIONS.items():
                if kind == "tool" or name == "python":
                    yield Completion(name, "value", "function", doc)
        yield from _values(written, declared, own)
    elif statement in (["output"], ["answer"]) and statement[0] in TYPED_BLOCKS.get(kind, ()):
        # `output |`, an ask's `answer |`: one type (plait 0.3)
        yield from _types(declared, own)


def _inside(
    top: _Open, kind: str | None, declared: dict[str, ast.Decl], own: str | None, modules: list[ast.Module]
) -> Iterator[Completion]:
    """Inside a call's brackets, a call's block, a budget, a test's keyed block or one of its entries."""
    statement = top.statement
    if top.role == "arguments":  # `called(lookup, { |`: the tool's parameters
        if not statement:
            yield from (c for c in _params(declared.get(top.args[0] if top.args else "")) if c.label not in top.keys)
        return
    if top.role == "entry":  # `answers = { confirm = { |`, `replies = { draft = [{ |`, ...
        if statement:
            return
        if top.key == "answers":
            fields = _fields_of(_record(top.args[0], declared, modules), [""]) if top.args else []
            yield from (c for c in fields if c.label not in top.keys)
        else:
            yield from _keys(words.TEST_ENTRIES.get(top.key or "", {}), top.keys)
        return
    if top.role == "call":
        if top.args and "," in top.args:
            return  # only a call's first argument names something (`called(lookup, { ...`)
        if top.key == "delegate" and kind == "tool":
            yield from _names(declared, ("agent",), own)
        elif top.key == "hosted" and kind == "tool":
            yield from (Completion(name, "value", "hosted tool", doc) for name, doc in words.HOSTED_KINDS.items())
        elif kind == "test" and top.key in words.EXPECT_FUNCTIONS:
            yield from _names(declared, words.EXPECT_FUNCTIONS[top.key][0], own)
        return
    value = statement[0] if len(statement) == 2 and statement[1] == "=" else None
    if top.role == "budget":
        if not statement:
            yield from _keys(words.BUDGET_KEYS, top.keys)
        for choice in words.BUDGET_CHOICES.get(value or "", ()):
            yield Completion(choice, "value", value or "")
    elif top.role == "keyed":
        if not statement:
            kinds = _KEYED.get(top.key or "", ())
            yield from (c for c in _names(declared, kinds, None) if c.label not in top.keys)
        elif value is not None and top.key == "decisions":
            yield from (Completion(label, "value", "decision", doc) for label, doc in words.DECISIONS.items())
    elif top.key == "delegate":
        if not statement:
            yield from _keys(words.DELEGATE_OPTIONS, top.keys)
        elif value == "returns":
            yield Completion("output", "value", "the agent's output")
    elif top.key == "hosted":
        options = words.HOSTED_OPTIONS.get(top.args[0] if top.args else "", {})
        if not statement:
            yield from _keys(options, top.keys)
        elif value is not None:
            from plait.core.hosted import OPTIONS

            choices = OPTIONS.get(top.args[0], {}).get(value)
            if isinstance(choices, tuple):
                yield from (Completion(choice, "value", value) for choice in choices)
    elif top.key == "judge":
        if not statement:
            yield from _keys(words.JUDGE_OPTIONS, top.keys)
        elif value == "of":
            yield from _names(declared, RUNNABLE_KINDS, own)


def _own_paths(pos: _Position, declared: dict[str, ast.Decl], modules: list[ast.Module]) -> list[Completion] | None:
    """A dotted path whose head means something only where it is written: `run.` and `output.` in an `expect`
    line (the run's figures, the entry's output), `output.` in `delegate(AGENT) { returns = ... }` (the agent's).
    None elsewhere: the path is read as a template's."""
    top = pos.stack[-1] if pos.stack else None
    head, *rest = pos.prefix.split(".")
    if top is None:
        return None
    if pos.kind == "test" and top.role == "body" and top.statement[:1] == ["expect"] and head in ("run", "output"):
        if head == "run":
            return [Completion(k, "field", "run", doc) for k, doc in words.RUN_STATS.items()] if len(rest) == 1 else []
        written = top.written.get("entry")
        entry = written[0] if written else "main" if "main" in declared else None
        return _fields_of(_output(entry, declared, modules), rest)
    if top.role == "options" and top.key == "delegate" and top.statement[:2] == ["returns", "="] and head == "output":
        agent = top.args[0] if top.args else None
        return _fields_of(_output(agent, declared, modules), rest)
    return None


def _output(
    name: str | None, declared: dict[str, ast.Decl], modules: list[ast.Module], depth: int = 0
) -> t.Type | None:
    """The declared output of runnable `name` (or the `input`/`state` block): an agent's, a step's or an ask's,
    a chain's or a loop's last element's, a route's cases' and a handing-over agent's targets' records together
    (a field only some of them declare is optional); None when nothing declares it."""
    if name in ("input", "state"):
        return _record(name, declared, modules)
    decl = declared.get(name or "")
    if decl is None or depth > 50:
        return None
    if isinstance(decl, ast.ChainDecl | ast.LoopDecl):
        elements = decl.elements if isinstance(decl, ast.ChainDecl) else decl.body
        last = elements[-1] if elements else None
        return _output(last.name, declared, modules, depth + 1) if isinstance(last, ast.ChainRef) else None
    if isinstance(decl, ast.RouteDecl):
        return _union([_output(case.target.name, declared, modules, depth + 1) for case in decl.cases])
    own = _record(decl.name.name, declared, modules)  # type: ignore[union-attr]
    handoff = decl.body.get("handoff") if isinstance(decl, ast.AgentDecl) else None
    if handoff is not None and isinstance(handoff.value, ast.ListValue):
        targets = [item.name for item in handoff.value.items if isinstance(item, ast.Ref)]
        return _union([own, *(_output(target, declared, modules, depth + 1) for target in targets)])
    return own


def _union(outputs: list[t.Type | None]) -> t.Type | None:
    """The records among `outputs` as one: every field any of them has, optional unless all of them have it."""
    records = [found for found in outputs if isinstance(found, t.ObjectType)]
    if not records:
        return None
    merged: dict[str, t.FieldType] = {}
    for record in records:
        for each in record.fields:
            merged.setdefault(each.name, each)
    return t.ObjectType(
        tuple(
            t.FieldType(f.name, f.type, optional=f.optional or not all(r.get(f.name) for r in records))
            for f in merged.values()
        )
    )


def _fields_of(record: t.Type | None, rest: list[str]) -> list[Completion]:
    """The fields at `rest[:-1]` inside `record` (the last part is the one being written)."""
    found = t.lookup(record, rest[:-1]) if record is not None else None
    if found is None:
        return []
    shape = t.strip_optional(found)
    out = []
    for name in t.field_names(shape):
        field = shape.get(name) if isinstance(shape, t.ObjectType) else None
        detail = t.describe(field.type) + ("?" if field.optional else "") if field is not None else ""
        out.append(Completion(name, "field", detail))
    return out


def _item(over: list[str] | None, declared: dict[str, ast.Decl], modules: list[ast.Module]) -> t.Type | None:
    """The item type of the list a map's `over = NAME.a.b` (or `run.input.a`) names; None when not known."""
    if not over or len(over) != 1:
        return None
    head, *rest = over[0].split(".")
    if head == "run" and rest[:1] == ["input"]:
        head, rest = "input", rest[1:]
    elif head in ("input", "state", "loop", "map"):
        return None  # what the map receives, or a body's: known only to the checker
    found = _output(head, declared, modules)
    found = t.lookup(found, rest) if found is not None else None
    found = t.strip_optional(found) if found is not None else None
    return found.item if isinstance(found, t.ListType) else None


def _params(tool: ast.Decl | None) -> Iterator[Completion]:
    """A tool's parameters, as its calls' arguments are named."""
    if not isinstance(tool, ast.ToolDecl):
        return
    block = tool.body.typed("params")
    for param in block.params if block is not None else ():
        yield Completion(param.name.name, "field", "parameter")


def _keys(docs: dict[str, str], used: set[str]) -> Iterator[Completion]:
    return (Completion(key, "attribute", "", doc) for key, doc in docs.items() if key not in used)


def _test_body(top: _Open, declared: dict[str, ast.Decl], own: str | None) -> Iterator[Completion]:
    """A test's block: its attributes and `expect`; an attribute's value; what an `expect` line reads."""
    statement = top.statement
    if not statement:
        yield from _keys(words.TEST_ATTRIBUTES, top.keys)
        yield Completion("expect", "block", "expect CONDITION", "what the run must have made or done")
        return
    if len(statement) == 2 and statement[1] == "=":
        if statement[0] == "entry":
            yield from _names(declared, RUNNABLE_KINDS, None)
        elif statement[0] == "replies":
            yield Completion("cassette", "value", 'cassette("FILE")', "a recording of real replies")
            yield Completion("live", "value", "live", "the real models (only under `plait test --live`)")
        return
    if statement[0] != "expect":
        return
    last = statement[-1]
    if len(statement) == 1 or last in ("not", "and", "or"):
        yield Completion("output", "value", "the entry's output")
        yield Completion("run", "value", "`run.model_calls`, `run.tool_calls`, ...: what the run did")
        for name, (_, doc) in words.EXPECT_FUNCTIONS.items():
            yield Completion(name, "value", "function", doc)
        yield from _names(declared, RUNNABLE_KINDS, None)  # `NAME.FIELD`: a runnable's last output
    elif len(statement) == 2 and last not in words.EXPECT_FUNCTIONS:
        # `expect SUBJECT |`: a word (`output matches "..."`); a comparison is written as it is.
        yield from (
            Completion(word, "value", "expect SUBJECT WORD VALUE", doc) for word, doc in words.EXPECT_WORDS.items()
        )


#: The types every spec has (`_types` adds the spec's own `type` names).
_BUILTIN_TYPES = (
    ("string", "text"),
    ("int", "a whole number"),
    ("float", "a number"),
    ("bool", "true or false"),
    ("date", "an ISO 8601 date, 2026-12-05"),
    ("datetime", "an ISO 8601 date and time, 2026-12-05T08:30:00Z"),
    ("list", "list[T]"),
    ("object", "object { ... }"),
)


def _types(declared: dict[str, ast.Decl], own: str | None) -> Iterator[Completion]:
    """Where a type is written: the built-in types, then the spec's named types (`type Flight { ... }`)."""
    for name, detail in _BUILTIN_TYPES:
        yield Completion(name, "value", detail)
    yield from _names(declared, ("type",), own)


def _values(attr: Attr | None, declared: dict[str, ast.Decl], own: str | None) -> Iterator[Completion]:
    if attr is None:
        return
    if attr.type in ("ref", "refs"):
        yield from _names(declared, attr.kinds, own)
    elif attr.type == "until":
        yield from _names(declared, ("tool", "mcp"), own)  # `until = TOOL succeeded`, `SERVER.tool`
    elif attr.type == "condition":
        yield from _names(declared, RUNNABLE_KINDS, own)
    elif attr.type == "path":
        yield from _paths(declared, own)
    elif attr.type == "bool":
        yield from (Completion(v, "value", "bool") for v in ("true", "false"))
    for choice in attr.choices:
        yield Completion(choice, "value", attr.type)


def _paths(declared: dict[str, ast.Decl], own: str | None) -> Iterator[Completion]:
    yield Completion("input", "value", "the run's input")
    yield Completion("state", "value", "the run's state")
    yield from _names(declared, RUNNABLE_KINDS, own)


def _template(path: str, declared: dict[str, ast.Decl], modules: list[ast.Module], own: str | None) -> list[Completion]:
    if "." in path:
        return _fields(path, declared, modules)
    return list(_paths(declared, own))


def _fields(path: str, declared: dict[str, ast.Decl], modules: list[ast.Module]) -> list[Completion]:
    """After `HEAD.a.b.`: the fields of the record there (HEAD's declared output, or the input/state block)."""
    head, *rest = path.split(".")
    server = declared.get(head)
    if isinstance(server, ast.McpDecl):
        return _locked_tools(server) if len(rest) == 1 else []
    return _fields_of(_output(head, declared, modules), rest)


def _record(head: str, declared: dict[str, ast.Decl], modules: list[ast.Module]) -> t.Type | None:
    from plait.compiler.types import block_type, named_types, output_type

    def quiet(_: object) -> None:
        return None  # the checker reports a bad block; completion offers what it can

    named = named_types({n: d for n, d in declared.items() if isinstance(d, ast.TypeDecl)}, quiet)

    if head in ("input", "state"):
        for module in modules:
            for each in module.declarations:
                if isinstance(each, ast.InputDecl | ast.StateDecl) and each.kind == head:
                    return block_type(each.fields, quiet, named)
        return None
    decl = declared.get(head)
    if isinstance(decl, ast.AgentDecl | ast.StepDecl):
        block = decl.body.typed("output")
    elif isinstance(decl, ast.AskDecl):
        block = decl.block.typed("answer") if decl.block is not None else None
    elif isinstance(decl, ast.ToolDecl):
        return _hosted_report(decl)
    else:
        return None
    return output_type(block, quiet, named) if block is not None else None


def _hosted_report(tool: ast.ToolDecl) -> t.Type | None:
    """What `{{TOOL...}}` reads of a hosted tool (`run = hosted(web_search)`): its report; None for any other."""
    from plait.core.hosted import HOSTED, report_type

    run = tool.body.get("run")
    call = run.value if run is not None else None
    if isinstance(call, ast.Call) and call.func.name == "hosted" and call.args:
        kind = call.args[0]
        if isinstance(kind, ast.Ref) and kind.name in HOSTED:
            return report_type(kind.name)
    return None


def _locked_tools(server: ast.McpDecl) -> list[Completion]:
    """The tools `plait mcp lock` recorded for the server (its allow-list applied); nothing is started."""
    from pathlib import Path

    from plait.core.mcp_lock import LOCK_FILE, LockError, loads
    from plait.dsl.loader import read_source

    source, _ = read_source(Path(server.span.file).parent / LOCK_FILE)
    if source is None:
        return []
    try:
        entry = loads(source.text).servers.get(server.name.name)
    except LockError:
        return []
    if entry is None:
        return []
    listed = server.body.get("tools")
    allowed = (
        {
            item.name if isinstance(item, ast.Ref) else item.value
            for item in listed.value.items
            if isinstance(item, ast.Ref | ast.String)
        }
        if listed is not None and isinstance(listed.value, ast.ListValue)
        else None
    )
    return [
        Completion(tool.name, "field", tool.description.split("\n")[0][:80])
        for tool in entry.tools
        if allowed is None or tool.name in allowed
    ]
