"""`test NAME { ... }` → its checked record: what to run, where replies come from, and what to expect.

A test is a declaration with a kind of its own but not a node of the graph: adding or editing a test never
changes what the spec runs, draws or promises (`plait render`, `plait graph`, `plait diff` ignore it). The
compiler checks each against the graph (src/plait/compiler/passes/check_tests.py) and hands the records out
in `CompileResult.tests`; `plait test` (src/plait/spectest/) runs them.

An expectation is kept as plain data (`tree`, JSON-like dicts) so a runner in another process reads it as it is:

- a check: `{"op": OP, "left": SUBJECT, "right": SUBJECT}` with OP one of `==`, `!=`, `<`, `<=`, `>`, `>=`,
  `in`, `matches`, `contains`, `in_order`, `any_order`; `{"op": "truthy", "left": SUBJECT}`;
  `{"op": "not", "operand": TREE}`, `{"op": "and"|"or", "operands": [TREE, ...]}`;
- a subject: `{"kind": "value", "value": JSON}`, `{"kind": "output", "path": [...]}` (the run's output),
  `{"kind": "field", "name": RUNNABLE, "path": [...]}`, `{"kind": "run", "stat": STAT}`, `{"kind": "case",
  "name": ROUTE}`, `iterations`, `exit` (a loop), `items` (a map), `asked` (an ask), `approvals` (a tool),
  `{"kind": "called" | "calls", "name": TOOL, "args": MATCHERS}`, `{"kind": "calls_list", "calls": [...]}`
  and `{"kind": "judge", "model": MODEL, "rubric": TEXT, "repeat": N, "pass_rate": R, "of": NAME | None,
  "replies": [REPLY, ...] | None}` (its own scripted verdicts);
- an argument matcher: `{"equals": JSON}` or `{"matches": REGEX}`.
"""

from __future__ import annotations

from typing import Any

from ..record import Record, record
from ..source import Span

__all__ = ["RUN_STATS", "REPLY_SOURCES", "Expectation", "TestNode"]

#: What `run.NAME` reads in an expectation, with its doc line (docs/language.md lists the same).
RUN_STATS: dict[str, str] = {
    "model_calls": "model calls made",
    "tokens": "input and output tokens",
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
    "steps": "model calls made (every agent turn and model step is one)",
    "tool_calls": "the tool calls, in order (a list of names)",
    "stop_reason": 'how the run ended: "done", "until", "max_steps", "error", ...',
    "error": "the failed run's error kind (null when it did not fail)",
    "cost": "what the run cost, in USD (when the models' prices are known)",
}

#: Where a test's model replies come from (`replies = ...`): inline, a cassette file, a real model, or the
#: spec's models as they are declared (a scripted model's own script).
REPLY_SOURCES = ("inline", "cassette", "live", "spec")


@record
class Expectation(Record):
    """One `expect` line: its place, its text as written, and the checked tree."""

    span: Span
    text: str
    tree: dict[str, Any]


@record
class TestNode(Record):
    """A checked `test NAME { ... }`."""

    __test__ = False  # not a pytest test class, whatever its name
    name: str
    span: Span
    description: str | None = None
    #: The spec file the test sits in (a `*.test.plait` that imports the spec, or the spec itself).
    file: str = ""
    entry: str = "main"
    input: Any = None
    #: One of REPLY_SOURCES.
    replies: str = "spec"
    #: inline: runnable (or judge model) name or graph path → its replies, as the scripted provider takes them;
    #: cassette: {"path": FILE}; otherwise empty.
    reply_data: Any = None
    #: ask name → its answer (JSON); tool name → "approve" | "reject" | {"action": ..., ...}.
    answers: dict[str, Any] | None = None
    decisions: dict[str, Any] | None = None
    #: tool (its name, or "SERVER.TOOL" for an MCP server's) → its stand-in results in call order, each
    #: {"result": JSON} or {"error": TEXT}: the test serves them and never runs the tool.
    tools: dict[str, list[dict[str, Any]]] | None = None
    expects: tuple[Expectation, ...] = ()
