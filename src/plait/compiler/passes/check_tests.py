"""`test` declarations + the built graph → checked `TestNode` records (ctx.tests), every mistake with its place.

A test names things of the spec it runs (its entry, a runnable's output fields, a route's cases, a tool the
entry's agents may call, an ask, a judge model), so each is checked here, after the graph is built and the
outputs typed: a misspelt field or a route case that does not exist is a diagnostic before anything runs, as
in the rest of the spec. What a test reads at run time is the run's report (src/plait/spectest/evaluate.py).
"""

from __future__ import annotations

import re
from typing import Any

from plait.core.codes import declare, make
from plait.core.diagnostics import Fix, Severity
from plait.core.kinds.test import RUN_STATS, Expectation, TestNode
from plait.core.types import AnyType, TextType, describe, field_names, lookup, matches, strip_optional
from plait.dsl import ast

from ..context import CompileContext
from ..entry import entry_point
from ..schema import suggest

# The codes this module raises; their documentation is explain/<code>.md beside it.
P701 = declare("P701", "test-attribute", Severity.ERROR, "a test attribute that is unknown or has a wrong value")
P702 = declare("P702", "test-unknown-subject", Severity.ERROR, "a test expects something the spec does not have")
P703 = declare("P703", "test-unreachable", Severity.ERROR, "a test expects something its entry cannot reach")
P704 = declare("P704", "test-unknown-case", Severity.ERROR, "a test expects a route case the route does not have")
P705 = declare("P705", "test-bad-expectation", Severity.ERROR, "an expectation whose operator does not fit")
P706 = declare("P706", "test-tool-result", Severity.ERROR, "a test's stand-in tool result that does not fit the tool")

#: The attributes a test takes, with their doc lines (docs/language.md's `test` entry names each).
TEST_ATTRIBUTES: dict[str, str] = {
    "entry": "the runnable to run (default: the spec's entry)",
    "input": "the run's input",
    "replies": "inline replies keyed by runnable, `cassette(FILE)` or `live`",
    "answers": "an answer per ask, by the ask's name",
    "decisions": 'a decision per tool that needs approval: "approve", "approve_same", "reject" or `{ action = "edit", ... }`',
    "tools": "stand-in results per tool, in call order: the tool never runs",
}
#: `expect SUBJECT WORD VALUE`: the words, and the comparisons a condition writes.
WORDS = ("in", "matches", "contains", "in_order", "any_order")
#: Functions an expectation may call, with what they take (docs/language.md lists the same).
FUNCTIONS = ("case", "iterations", "exit", "items", "asked", "approvals", "called", "calls", "judge")
_KIND_OF_FUNCTION = {
    "case": "route",
    "iterations": "loop",
    "exit": "loop",
    "items": "map",
    "asked": "ask",
    "approvals": "tool",
    "called": "tool",
    "calls": "tool",
}
_NUMBER_SUBJECTS = ("iterations", "items", "approvals", "calls")
_DECISION_ACTIONS = ("approve", "approve_same", "reject", "edit")
#: What `_read` gives for a value it reported as unreadable (None is a value: `null`).
_UNREAD: Any = object()
#: Tool runs a test cannot stand in for: a provider runs a hosted tool, and a delegated agent answers from `replies`.
_NOT_RUN_BY_PLAIT = ("hosted", "agent")


class _Bad(Exception):
    """One expectation's problem, raised inside its check and reported once (the rest of the line is not read)."""

    def __init__(self, code: str, message: str, span: Any, fix: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.span, self.fix = code, message, span, fix


def check_tests(ctx: CompileContext) -> None:
    graph = ctx.graph
    if graph is None or not ctx.tests_written:
        return
    for decl in ctx.tests_written:
        test = _Test(ctx, decl)
        node = test.build()
        if node is not None:
            ctx.tests.append(node)


class _Test:
    def __init__(self, ctx: CompileContext, decl: ast.TestDecl) -> None:
        self.ctx = ctx
        self.decl = decl
        self.graph = ctx.graph
        assert self.graph is not None
        self.ok = True
        self.entry = ""
        self.reached: set[str] = set()
        self.judges: set[str] = set()

    def _src(self, span: Any) -> str:
        source = self.ctx.load.sources.get(span.file)
        return source.text[span.offset : span.end_offset] if source is not None else "it"

    def report(self, code: str, message: str, span: Any, fix: str | None = None) -> None:
        self.ok = False
        self.ctx.diagnostics.append(make(code, message, span, fix=Fix(fix) if fix else None))

    # --- the test -------------------------------------------------------------------

    def build(self) -> TestNode | None:
        decl = self.decl
        seen: set[str] = set()
        for attribute in decl.attributes:
            key = attribute.key.name
            if key not in TEST_ATTRIBUTES:
                hint = suggest(key, list(TEST_ATTRIBUTES))
                self.report(
                    "P701",
                    f"test `{decl.name.name}` has no attribute `{key}`" + (f"; did you mean `{hint}`?" if hint else ""),
                    attribute.key.span,
                    "a test takes " + ", ".join(f"`{k}`" for k in TEST_ATTRIBUTES),
                )
            elif key in seen:
                self.report("P701", f"`{key}` is set twice in test `{decl.name.name}`", attribute.key.span)
            seen.add(key)
        self.entry = self._entry()
        if not self.entry:
            return None
        self.reached = self._reach(self.entry)
        input = self._input()
        replies, reply_data = self._replies_source()
        answers = self._answers()
        decisions = self._decisions()
        tools = self._tools()
        expects = []
        for expect in decl.expects:
            try:
                tree = self._expect(expect)
            except _Quiet:
                continue
            except _Bad as bad:
                self.report(bad.code, bad.message, bad.span, bad.fix)
                continue
            expects.append(Expectation(span=expect.span, text=self._src(expect.span), tree=tree))
        if replies == "inline":
            reply_data = self._inline(reply_data)
        if not self.ok:
            return None
        return TestNode(
            name=decl.name.name,
            span=decl.span,
            description=decl.description.value if decl.description else None,
            file=decl.span.file,
            entry=self.entry,
            input=input,
            replies=replies,
            reply_data=reply_data,
            answers=answers,
            decisions=decisions,
            tools=tools,
            expects=tuple(expects),
        )

    def _entry(self) -> str:
        graph = self.graph
        assert graph is not None
        attribute = self.decl.get("entry")
        if attribute is None:
            found = graph.entry or entry_point(graph)
            if found is None:
                why = (
                    "the spec has no `main` and more than one runnable nothing else uses"
                    if graph.runnables()
                    else "the spec declares no runnable"
                )
                self.report(
                    "P701",
                    f"test `{self.decl.name.name}` has nothing to run: {why}",
                    self.decl.name.span,
                    "add `entry = NAME`" if graph.runnables() else "declare what the test runs, or import the spec",
                )
                return ""
            return found
        value = attribute.value
        if not isinstance(value, ast.Ref) or value.name not in graph.runnables():
            hint = suggest(value.name, graph.runnables()) if isinstance(value, ast.Ref) else None
            self.report(
                "P701",
                "`entry` must name a runnable of the spec" + (f"; did you mean `{hint}`?" if hint else ""),
                value.span,
            )
            return ""
        return value.name

    def _reach(self, entry: str) -> set[str]:
        """Every node a run of `entry` may touch: what it places, calls, uses and asks, followed through."""
        graph = self.graph
        assert graph is not None
        reached = {entry}
        todo = [entry]
        while todo:
            node = todo.pop()
            for edge in graph.out_edges(node):
                # A chain's order edges belong to that chain: the next element of another chain is not ours.
                if edge.kind == "next" and edge.chain is not None and edge.chain not in reached:
                    continue
                if edge.kind == "back":  # a loop body's way back to its loop: reached from the loop only
                    continue
                if edge.target not in reached and not edge.target.startswith("@"):
                    reached.add(edge.target)
                    todo.append(edge.target)
        return reached

    def _input(self) -> Any:
        attribute = self.decl.get("input")
        if attribute is None:
            return None
        value = self._read(attribute.value)
        if value is _UNREAD:
            return None
        declared = self.ctx.input_type
        if declared is not None and not matches(declared, value):
            self.report(
                "P701",
                f"`input` does not fit the spec's `input` ({describe(declared, fields=True)})",
                attribute.value.span,
            )
        return value

    def _replies_source(self) -> tuple[str, Any]:
        attribute = self.decl.get("replies")
        if attribute is None:
            return "spec", None
        value = attribute.value
        if isinstance(value, ast.Ref) and value.name == "live":
            return "live", None
        if isinstance(value, ast.Call) and value.func.name == "cassette":
            if len(value.args) != 1 or not isinstance(value.args[0], ast.String):
                self.report("P701", 'a cassette is `cassette("FILE")`', value.span)
                return "cassette", None
            return "cassette", {"path": value.args[0].value}
        if isinstance(value, ast.Block):
            return "inline", value
        self.report(
            "P701",
            '`replies` must be a map of replies by runnable `{ NAME = [...] }`, `cassette("FILE")` or `live`',
            value.span,
        )
        return "inline", None

    def _inline(self, block: ast.Block | None) -> dict[str, Any] | None:
        if block is None:
            return None
        out: dict[str, Any] = {}
        for attribute in block.attributes:
            name = attribute.key.name
            target = name.rsplit("/", 1)[-1] if attribute.quoted else name
            if target not in self.reached and target not in self.judges:
                known = self.graph is not None and target in self.graph
                if known and self.graph is not None and self.graph.node(target).kind == "model":
                    self.report(
                        "P702",
                        f"`replies` names model `{target}`, which `{self.entry}` never calls and no `judge(...)` "
                        "of this test uses",
                        attribute.key.span,
                    )
                    continue
                self.report(
                    "P703" if known else "P702",
                    f"`replies` names `{target}`, which "
                    + (f"`{self.entry}` does not reach" if known else "is not a runnable of the spec nor a judge"),
                    attribute.key.span,
                )
                continue
            replies = self._read(attribute.value)
            if replies is _UNREAD:
                continue
            if not isinstance(replies, list) or not all(isinstance(r, dict | str) for r in replies):
                self.report(
                    "P701",
                    f'the replies for `{name}` must be a list like `[{{ text = "..." }}, {{ output = {{ ... }} }}]`',
                    attribute.value.span,
                )
                continue
            out[name] = replies
        return out

    def _answers(self) -> dict[str, Any] | None:
        entries = self._map("answers", "`{ ASK = answer }`")
        if entries is None:
            return None
        out: dict[str, Any] = {}
        for entry in entries:
            name = entry.key.name
            if not self._known(name, "ask", entry.key.span, "`answers`"):
                continue
            value = self._read(entry.value)
            if value is _UNREAD:
                continue
            ask = self.graph.node(name) if self.graph is not None else None
            answer_type = getattr(ask, "output", None)
            if answer_type is not None and not isinstance(answer_type, TextType) and not matches(answer_type, value):
                self.report(
                    "P701",
                    f"the answer for `{name}` does not fit its `answer` ({describe(answer_type, fields=True)})",
                    entry.value.span,
                )
                continue
            out[name] = value
        return out

    def _decisions(self) -> dict[str, Any] | None:
        entries = self._map("decisions", '`{ TOOL = "approve" }`')
        if entries is None:
            return None
        out: dict[str, Any] = {}
        for entry in entries:
            name = entry.key.name
            if not self._known(name, "tool", entry.key.span, "`decisions`"):
                continue
            value = self._read(entry.value)
            if value is _UNREAD:
                continue
            action = value.get("action") if isinstance(value, dict) else value
            if action == "edit" and not (isinstance(value, dict) and isinstance(value.get("arguments"), dict)):
                self.report(
                    "P701",
                    f"an edit of `{name}` gives the call's new arguments: "
                    '`{ action = "edit", arguments = { ... } }`',
                    entry.value.span,
                )
                continue
            if action not in _DECISION_ACTIONS:
                self.report(
                    "P701",
                    f'the decision for `{name}` must be "approve", "approve_same", "reject" or '
                    '`{ action = "edit", arguments = { ... } }`',
                    entry.value.span,
                )
                continue
            out[name] = value
        return out

    def _tools(self) -> dict[str, list[dict[str, Any]]] | None:
        """`tools = { TOOL = [RESULT, ...] }`: each tool one the entry reaches, each result one it could return."""
        entries = self._map("tools", 'of results by tool `{ TOOL = [{ result = "..." }] }`')
        if entries is None:
            return None
        out: dict[str, list[dict[str, Any]]] = {}
        for entry in entries:
            name = entry.key.name
            schema = self._stand_in(name, entry.key.span)
            if isinstance(schema, bool):  # not a tool the entry reaches, reported
                continue
            value = self._read(entry.value)
            if value is _UNREAD:
                continue
            results = self._results(name, value, schema, entry.value)
            if results is not None:
                # An MCP tool written by its own name is keyed by its server, as the runner looks it up.
                plain = "." not in name and self.graph is not None and self.graph.get(name) is None
                server = self._mcp_server_of(name) if plain else None
                out[f"{server}.{name}" if server else name] = results
        return out

    def _stand_in(self, name: str, span: Any) -> dict[str, Any] | None | bool:
        """The declared output schema of the tool `name` stands for (None: it declares none); False when it is not a
        tool the entry reaches (reported)."""
        graph = self.graph
        assert graph is not None
        server, dot, tool = name.partition(".")
        offering = self._mcp_server_of(name) if not dot and graph.get(name) is None else None
        if offering is not None:  # an MCP server's tool written by its own name
            server, dot, tool = offering, ".", name
        if dot:
            record = graph.get(server)
            if record is None or record.kind != "mcp":
                hint = suggest(server, graph.nodes_of("mcp"))
                self.report(
                    "P702",
                    f"`tools` names `{name}`, but `{server}` is not an MCP server of the spec"
                    + (f"; did you mean `{hint}`?" if hint else ""),
                    span,
                )
                return False
            offered = {entry["name"]: entry for entry in getattr(record, "offered", ())}
            allowed = _offered(record)
            if allowed and tool not in allowed:
                hint = suggest(tool, allowed)
                self.report(
                    "P702",
                    f"MCP server `{server}` offers no tool `{tool}`" + (f"; did you mean `{hint}`?" if hint else ""),
                    span,
                    "its tools: " + ", ".join(allowed),
                )
                return False
            if server not in self.reached:
                self.report(
                    "P703", f"`tools` names `{name}`, and `{self.entry}` never uses MCP server `{server}`", span
                )
                return False
            found = (offered.get(tool) or {}).get("output_schema")
            return found if isinstance(found, dict) else None
        record = graph.get(name)
        if record is not None and record.kind == "agent":
            self.report(
                "P706",
                f"`tools` names agent `{name}`: a test stands in for tools, and an agent answers from `replies`",
                span,
                f"give `{name}` replies, or stand in for the tools it calls",
            )
            return False
        runs = (getattr(record, "run", None) or {}).get("type") if record is not None else None
        if runs in _NOT_RUN_BY_PLAIT:
            self.report(
                "P706",
                f"`tools` names `{name}`, which plait does not run (a provider's hosted tool or a delegated agent)",
                span,
            )
            return False
        if not self._known(name, "tool", span, "`tools`"):
            return False
        return None

    def _results(self, name: str, value: Any, schema: dict[str, Any] | None, node: Any) -> list[dict[str, Any]] | None:
        """The stand-in results for `name` as {"result": JSON} / {"error": TEXT}, or None (reported)."""
        shape = f'the results for `{name}` must be a list like `[{{ result = "..." }}, {{ error = "..." }}]`'
        if not isinstance(value, list):
            self.report("P706", shape, node.span)
            return None
        items = node.items if isinstance(node, ast.ListValue) else [node] * len(value)
        out: list[dict[str, Any]] = []
        for item, place in zip(value, items):
            if isinstance(item, str):
                item = {"result": item}
            keys = set(item) if isinstance(item, dict) else set()
            if keys not in ({"result"}, {"error"}) or ("error" in keys and not isinstance(item["error"], str)):
                self.report("P706", shape + ": one `result = VALUE` or one `error = TEXT` each", place.span)
                return None
            if schema is not None and "result" in item and not isinstance(item["result"], str):
                problem = _schema_problem(schema, item["result"])
                if problem is not None:
                    self.report("P706", f"this result does not fit the output `{name}` declares: {problem}", place.span)
                    return None
            out.append(item)
        return out

    def _mcp_server_of(self, tool: str) -> str | None:
        """The MCP server the entry reaches that offers `tool` (by the lock, else its allow-list), if one does."""
        graph = self.graph
        assert graph is not None
        for server in sorted(self.reached):
            record = graph.get(server)
            if record is None or record.kind != "mcp":
                continue
            if tool in _offered(record):
                return server
        return None

    def _map(self, key: str, shape: str) -> tuple[ast.Attribute, ...] | None:
        """The entries of the test's map attribute `key`: None when the test leaves it out, or when it is no map
        (reported: "`key` must be a map SHAPE")."""
        attribute = self.decl.get(key)
        if attribute is None:
            return None
        if not isinstance(attribute.value, ast.Block):
            self.report("P701", f"`{key}` must be a map {shape}", attribute.value.span)
            return None
        return tuple(attribute.value.attributes)

    def _read(self, node: Any) -> Any:
        """A literal's value, or _UNREAD once what keeps it from being one is reported."""
        try:
            return _json(node)
        except _Bad as bad:
            self.report(bad.code, bad.message, bad.span)
            return _UNREAD

    def _known(self, name: str, kind: str, span: Any, where: str) -> bool:
        """Whether `name` is a `kind` the entry reaches; reported (P702/P703) when not."""
        graph = self.graph
        assert graph is not None
        node = graph.get(name)
        # A tool call may be an agent delegated to: the trajectory records it by the agent's name.
        kinds = ("tool", "agent") if kind == "tool" else (kind,)
        if node is None and kind == "tool" and self._mcp_server_of(name) is not None:
            return True  # an MCP server's tool, called (and approved) by its own name
        if node is None or node.kind not in kinds:
            candidates = graph.nodes_of(*kinds)
            hint = suggest(name, candidates)
            self.report(
                "P702",
                f"{where} names `{name}`, which is not {_a(kind)} of the spec"
                + (f"; did you mean `{hint}`?" if hint else ""),
                span,
            )
            return False
        if name not in self.reached:
            self.report("P703", f"{where} names {kind} `{name}`, which `{self.entry}` never reaches", span)
            return False
        return True

    # --- expectations -----------------------------------------------------------------

    def _expect(self, expect: ast.Expect) -> dict[str, Any]:
        if expect.op is None:
            return self._condition(expect.subject)
        word = expect.op.name
        if word not in WORDS:
            hint = suggest(word, list(WORDS))
            raise _Bad(
                "P705",
                f"`{word}` is not an operator of `expect`" + (f"; did you mean `{hint}`?" if hint else ""),
                expect.op.span,
                "write `expect SUBJECT OP VALUE` with OP one of " + ", ".join(WORDS) + ", or a comparison",
            )
        left = self._subject(expect.subject)
        assert expect.value is not None
        if word in ("in_order", "any_order"):
            if left != {"kind": "run", "stat": "tool_calls"}:
                raise _Bad("P705", f"`{word}` compares `run.tool_calls` with a list of calls", expect.subject.span)
            return {"op": word, "left": left, "right": self._calls_list(expect.value)}
        right = self._value(expect.value)
        if word == "matches":
            pattern = right.get("value")
            if not isinstance(pattern, str):
                raise _Bad("P705", "`matches` takes a regular expression in a string", expect.value.span)
            try:
                re.compile(pattern)
            except re.error as exc:
                raise _Bad("P705", f"`{pattern}` is not a regular expression: {exc}", expect.value.span) from None
            self._texty(left, expect.subject)
        if word == "in" and not isinstance(right.get("value"), list | str):
            raise _Bad("P705", "`in` takes a list (or a string)", expect.value.span)
        if word == "in" and left.get("kind") == "case":
            for item in right["value"] if isinstance(right["value"], list) else [right["value"]]:
                self._case(left["name"], item, expect.value.span)
        return {"op": word, "left": left, "right": right}

    def _condition(self, node: Any) -> dict[str, Any]:
        if isinstance(node, ast.Not):
            return {"op": "not", "operand": self._condition(node.operand)}
        if isinstance(node, ast.BoolOp):
            return {"op": node.op, "operands": [self._condition(o) for o in node.operands]}
        if isinstance(node, ast.Compare):
            left = self._subject(node.left)
            if left.get("kind") == "run" and left.get("stat") == "tool_calls" and isinstance(node.right, ast.ListValue):
                right = self._calls_list(node.right)
            else:
                right = self._value(node.right)
            if left.get("kind") == "case" and node.op in ("==", "!="):
                self._case(left["name"], right.get("value"), node.right.span)
            if node.op in ("<", "<=", ">", ">=") and not isinstance(right.get("value"), int | float):
                raise _Bad("P705", f"`{node.op}` compares with a number", node.right.span)
            self._typed(left, right, node)
            return {"op": node.op, "left": left, "right": right}
        return {"op": "truthy", "left": self._subject(node)}

    def _typed(self, left: dict[str, Any], right: dict[str, Any], node: ast.Compare) -> None:
        """A comparison of a typed output field with a literal that field can never hold is a mistake."""
        declared = left.get("type")
        if declared is None or "value" not in right or node.op not in ("==", "!="):
            return
        if isinstance(strip_optional(declared), AnyType) or matches(declared, right["value"]):
            return
        raise _Bad(
            "P705",
            f"`{self._src(node.left.span)}` is {describe(declared)}: it is never {_show(right['value'])}",
            node.right.span,
        )

    def _texty(self, subject: dict[str, Any], node: Any) -> None:
        declared = subject.get("type")
        if declared is None:
            return
        bare = strip_optional(declared)
        if not isinstance(bare, TextType | AnyType) and describe(bare).count('"') == 0:
            raise _Bad("P705", f"`matches` reads text, and `{self._src(node.span)}` is {describe(declared)}", node.span)

    def _subject(self, node: Any) -> dict[str, Any]:
        """The left side of an expectation: what the run made or did."""
        graph = self.graph
        assert graph is not None
        if isinstance(node, ast.Ref | ast.PathValue):
            parts = (node.name,) if isinstance(node, ast.Ref) else node.parts
            head, path = parts[0], list(parts[1:])
            if head == "output":
                return self._field(self.entry, path, node, {"kind": "output", "path": path})
            if head == "run":
                if len(path) != 1 or path[0] not in RUN_STATS:
                    stat = ".".join(path)
                    hint = suggest(stat, list(RUN_STATS))
                    raise _Bad(
                        "P702",
                        f"`run.{stat}` is not something a run reports"
                        + (f"; did you mean `run.{hint}`?" if hint else ""),
                        node.span,
                        "`run.` reads " + ", ".join(RUN_STATS),
                    )
                return {"kind": "run", "stat": path[0]}
            if head not in graph or graph.node(head).kind not in _RUNNABLE:
                hint = suggest(head, [*graph.runnables(), "output", "run"])
                raise _Bad(
                    "P702",
                    f"`{head}` is not a runnable of the spec" + (f"; did you mean `{hint}`?" if hint else ""),
                    node.span,
                    "an expectation reads `output`, `run.STAT`, a runnable's output `NAME.field`, or calls "
                    + ", ".join(f"`{f}(...)`" for f in FUNCTIONS),
                )
            if head not in self.reached:
                raise _Bad("P703", f"`{head}` never runs in a run of `{self.entry}`", node.span)
            return self._field(head, path, node, {"kind": "field", "name": head, "path": path})
        if isinstance(node, ast.Call):
            return self._function(node)
        raise _Bad(
            "P705",
            "an expectation starts with what the run did: `output`, `NAME.field`, `run.STAT` or a call such as "
            "`called(TOOL)`",
            node.span,
        )

    def _field(self, name: str, path: list[str], node: Any, subject: dict[str, Any]) -> dict[str, Any]:
        output = self.ctx.types.get(name)
        if output is None:
            record = self.graph.get(name) if self.graph is not None else None
            output = getattr(record, "output", None)
        if output is None:
            return subject
        found = lookup(output, path)
        if found is None:
            # The first part that does not exist, for the message and the hint.
            for depth in range(len(path)):
                if lookup(output, path[: depth + 1]) is None:
                    parent = lookup(output, path[:depth])
                    names = field_names(parent) if parent is not None else []
                    hint = suggest(path[depth], names)
                    where = ".".join([name, *path[:depth]]) if depth else name
                    listed = ", ".join(names) if names else f"none: it is {describe(parent)}" if parent else "none"
                    raise _Bad(
                        "P702",
                        f"`{where}` has no field `{path[depth]}`"
                        + (f"; did you mean `{hint}`?" if hint else f" (its fields: {listed})"),
                        node.span,
                    )
        subject["type"] = found
        return subject

    def _function(self, call: ast.Call) -> dict[str, Any]:
        name = call.func.name
        if name not in FUNCTIONS:
            hint = suggest(name, list(FUNCTIONS))
            raise _Bad(
                "P702",
                f"`{name}(...)` is not something an expectation can read"
                + (f"; did you mean `{hint}(...)`?" if hint else ""),
                call.func.span,
                "an expectation may call " + ", ".join(f"`{f}(...)`" for f in FUNCTIONS),
            )
        if name == "judge":
            return self._judge(call)
        args = list(call.args)
        if not args or not isinstance(args[0], ast.Ref):
            raise _Bad("P705", f"`{name}(...)` takes the name of {_a(_KIND_OF_FUNCTION[name])}", call.span)
        target = args[0].name
        kind = _KIND_OF_FUNCTION[name]
        if not self._known(target, kind, args[0].span, f"`{name}(...)`"):
            raise _Quiet()
        subject: dict[str, Any] = {"kind": name, "name": target}
        if name in ("called", "calls"):
            subject["args"] = self._matchers(args[1] if len(args) > 1 else None, target)
            if len(args) > 2:
                raise _Bad("P705", f"`{name}(TOOL, {{ ARG = VALUE }})` takes at most two arguments", call.span)
        elif len(args) > 1:
            raise _Bad("P705", f"`{name}(...)` takes one name", call.span)
        return subject

    def _matchers(self, node: Any, tool: str) -> dict[str, Any]:
        if node is None:
            return {}
        if not isinstance(node, ast.Block):
            raise _Bad("P705", "a tool call's arguments are matched by a map `{ NAME = VALUE }`", node.span)
        record = self.graph.get(tool) if self.graph is not None else None
        # A declared tool's parameters (its JSON Schema); an agent delegated to takes whatever it is given.
        schema = getattr(record, "parameters", None) if getattr(record, "kind", None) == "tool" else None
        names = list(schema.get("properties", {})) if isinstance(schema, dict) else None
        out: dict[str, Any] = {}
        for entry in node.attributes:
            key = entry.key.name
            if names is not None and key not in names:
                hint = suggest(key, names)
                raise _Bad(
                    "P702",
                    f"tool `{tool}` has no parameter `{key}`"
                    + (f"; did you mean `{hint}`?" if hint else f" (its parameters: {', '.join(names) or 'none'})"),
                    entry.key.span,
                )
            value = entry.value
            if isinstance(value, ast.Call) and value.func.name == "matches":
                if len(value.args) != 1 or not isinstance(value.args[0], ast.String):
                    raise _Bad("P705", '`matches("REGEX")` takes one string', value.span)
                try:
                    re.compile(value.args[0].value)
                except re.error as exc:
                    raise _Bad("P705", f"not a regular expression: {exc}", value.span) from None
                out[key] = {"matches": value.args[0].value}
            else:
                out[key] = {"equals": _json(value)}
        return out

    def _calls_list(self, node: Any) -> dict[str, Any]:
        if not isinstance(node, ast.ListValue):
            raise _Bad("P705", 'a list of tool calls is written `[lookup, submit({ title = "x" })]`', node.span)
        calls = []
        for item in node.items:
            if isinstance(item, ast.Ref):
                tool, matcher = item.name, None
            elif isinstance(item, ast.Call) and len(item.args) <= 1:
                tool, matcher = item.func.name, item.args[0] if item.args else None
            else:
                raise _Bad("P705", "each call is a tool's name, or `TOOL({ ARG = VALUE })`", item.span)
            span = item.span if isinstance(item, ast.Ref) else item.func.span
            if not self._known(tool, "tool", span, "the expected calls"):
                raise _Quiet()
            calls.append({"name": tool, "args": self._matchers(matcher, tool)})
        return {"kind": "calls_list", "calls": calls}

    def _judge(self, call: ast.Call) -> dict[str, Any]:
        graph = self.graph
        assert graph is not None
        args = list(call.args)
        if len(args) != 2 or not isinstance(args[0], ast.Ref) or not isinstance(args[1], ast.String):
            raise _Bad("P705", '`judge(MODEL, "rubric")` takes a model and the rubric', call.span)
        model = args[0].name
        if model not in graph or graph.node(model).kind != "model":
            hint = suggest(model, graph.nodes_of("model"))
            raise _Bad(
                "P702",
                f"`{model}` is not a model of the spec" + (f"; did you mean `{hint}`?" if hint else ""),
                args[0].span,
            )
        options: dict[str, Any] = {"repeat": 1, "pass_rate": 1.0, "of": None, "replies": None}
        for entry in call.block.attributes if call.block else ():
            key, value = entry.key.name, entry.value
            if key == "repeat" and isinstance(value, ast.Number) and isinstance(value.value, int) and value.value >= 1:
                options["repeat"] = value.value
            elif key == "pass_rate" and isinstance(value, ast.Number) and 0 <= value.value <= 1:
                options["pass_rate"] = float(value.value)
            elif key == "of" and isinstance(value, ast.Ref):
                self._subject(value)
                options["of"] = value.name
            elif key == "replies" and isinstance(value, ast.ListValue):
                verdicts = _json(value)
                if not all(isinstance(v, dict) for v in verdicts):
                    raise _Bad(
                        "P705", 'a judge\'s `replies` are `[{ output = { pass = true, reason = "..." } }]`', value.span
                    )
                options["replies"] = verdicts
            elif key in options:
                raise _Bad(
                    "P705",
                    {
                        "repeat": "`repeat` is a whole number, 1 or more",
                        "pass_rate": "`pass_rate` is a number from 0 to 1",
                        "of": "`of` names the runnable whose output is judged",
                        "replies": 'a judge\'s `replies` are a list `[{ output = { pass = true, reason = "..." } }]`',
                    }[key],
                    value.span,
                )
            else:
                raise _Bad(
                    "P705", f"`judge` takes `repeat`, `pass_rate`, `of` and `replies`, not `{key}`", entry.key.span
                )
        self.judges.add(model)
        return {"kind": "judge", "model": model, "rubric": args[1].value, **options}

    def _case(self, route: str, value: Any, span: Any) -> None:
        record = self.graph.get(route) if self.graph is not None else None
        cases = getattr(record, "cases", ())
        labels = [case.value for case in cases]
        # A case that goes to `break` (plait 0.3) is a case the route can take too.
        labels += [leave.value if leave.value is not None else "else" for leave in getattr(record, "breaks", ())]
        if getattr(record, "otherwise", None) is not None:
            labels.append("else")
        if not any(value == label and type(value) is type(label) for label in labels):
            shown = ", ".join(_show(label) if label != "else" else "else" for label in labels)
            raise _Bad("P704", f"route `{route}` has no case {_show(value)} (its cases: {shown})", span)

    def _value(self, node: Any) -> dict[str, Any]:
        return {"kind": "value", "value": _json(node)}


class _Quiet(_Bad):
    """A problem already reported (by `_known`): stop reading the line, report nothing more."""

    def __init__(self) -> None:
        super().__init__("", "", None)


_RUNNABLE = frozenset({"agent", "step", "chain", "parallel", "consolidate", "route", "loop", "map", "ask"})


def _a(kind: str) -> str:
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


def _json(node: Any) -> Any:
    """A literal as JSON: strings, numbers, booleans, lists, maps; `null` is the bare name `null`."""
    if isinstance(node, ast.String | ast.Number | ast.Bool):
        return node.value
    if isinstance(node, ast.Duration):
        return node.raw
    if isinstance(node, ast.ListValue):
        return [_json(item) for item in node.items]
    if isinstance(node, ast.Block):
        return {key: _json(value) for key, value in node.entries()}
    if isinstance(node, ast.Ref) and node.name == "null":
        return None
    if isinstance(node, ast.Ref):
        # A bare word is a symbol (`approve`, an enum member): its text.
        return node.name
    raise _Bad("P701", "expected a literal value (a string, number, boolean, list or map)", node.span)


def _offered(server: Any) -> list[str]:
    """The tools an MCP server's record offers: its lock's, else its `tools` allow-list (empty: unknown)."""
    return [entry["name"] for entry in getattr(server, "offered", ())] or list(getattr(server, "tools", None) or ())


def _schema_problem(schema: dict[str, Any], value: Any) -> str | None:
    """Why `value` does not fit a tool's declared output schema (None: it fits, or the schema checks nothing)."""
    from jsonschema import SchemaError, validators

    try:
        validator = validators.validator_for(schema)(schema)
        error = next(iter(validator.iter_errors(value)), None)
    except SchemaError:
        return None
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return (f"at `{where}`: " if where else "") + error.message


def _show(value: Any) -> str:
    import json

    return json.dumps(value)


__all__ = ["FUNCTIONS", "TEST_ATTRIBUTES", "WORDS", "check_tests"]
