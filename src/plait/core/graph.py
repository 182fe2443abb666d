"""Compiled declarations → typed graph records: one frozen record per node kind, one edge record.

The compiler builds these (src/plait/compiler/passes/build_graph.py) and everything
after it (render, diff, `plait graph --json`, the runtime's graph adapter)
reads them by attribute. docs/graph.md is the contract; `record_json` and
`edge_json` are the one serialisation, and a test holds them to the document.
Values are normalised: defaults are filled in (from `core.defaults`), names
are node ids, tuples stand for lists, and every runnable carries its
inferred output type (`core.types`).
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator, Protocol, Union, get_args

from . import defaults as D
from .conditions import Condition, condition_text, literal_text
from .record import Record, field_names, record
from .source import Span
from .types import TEXT, Type, to_json_schema

__all__ = [
    "AgentNode",
    "AskNode",
    "ChainNode",
    "ConsolidateNode",
    "EDGE_ATTRS",
    "EDGE_KINDS",
    "Edge",
    "EntryNode",
    "GraphView",
    "ExitNode",
    "InputNode",
    "JoinNode",
    "LoopNode",
    "MapNode",
    "McpNode",
    "ModelNode",
    "NODE_TYPES",
    "Node",
    "ParallelNode",
    "RUN_EDGES",
    "RUNNABLE_KINDS",
    "RouteCase",
    "RouteNode",
    "Runnable",
    "StateNode",
    "StepNode",
    "ToolNode",
    "edge_json",
    "node_attrs",
    "record_json",
]

Literal = Union[str, int, float, bool]


@record
class Node(Record):
    """What every node has: its id (`name`), where its name is written, and the declaring file."""

    kind: ClassVar[str] = ""
    name: str
    span: Span | None = None
    #: Absolute path of the declaring file (None for text input and generated `@` nodes).
    file: str | None = None


@record
class Runnable(Node):
    """A node a chain can place: it takes an input and produces `output`."""

    output: Type = TEXT


@record
class ModelNode(Node):
    kind: ClassVar[str] = "model"
    provider: str = ""
    model_id: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float | None = None
    base_url: str | None = None
    #: The environment variable's name; a key's value never reaches the graph.
    api_key_env: str | None = None
    retries: int = D.MODEL_RETRIES
    headers: dict[str, str] = field(default_factory=dict)
    api: str | None = None
    script: str | None = None
    #: "auto", "none" or "required": the default for agents on this model that set none.
    tool_choice: str | None = None


@record
class ToolNode(Node):
    kind: ClassVar[str] = "tool"
    description: str = ""
    #: JSON Schema object of the arguments.
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    #: {"type": "python", "target": "mod:fn", "base_dir": ...} or {"type": "http", "method", "url", "headers", "body"}.
    run: dict[str, Any] = field(default_factory=dict)
    approval: bool = False
    timeout: float = D.TOOL_TIMEOUT
    result: str = D.TOOL_RESULT
    idempotent: bool = False


@record
class McpNode(Node):
    kind: ClassVar[str] = "mcp"
    description: str = ""
    command: tuple[str, ...] | None = None
    url: str | None = None
    #: Variable → `{"env": "NAME"}` (read from that environment variable at run time) or a literal string.
    env: dict[str, str | dict[str, str]] = field(default_factory=dict)
    #: Header → `{"env": "NAME"}` or a literal string, as `env`.
    headers: dict[str, str | dict[str, str]] = field(default_factory=dict)
    #: The allow-list; None is every tool the server offers.
    tools: tuple[str, ...] | None = None
    timeout: float = D.TOOL_TIMEOUT
    #: Tools of this server every agent must get approval for.
    approval: tuple[str, ...] = ()
    #: What `plait.lock` beside the declaring file says of this server: "fresh", "stale" (the declaration
    #: changed since it was locked), "missing" (no lock, or no entry) or "invalid" (the lock cannot be read).
    lock_state: str = "missing"
    #: The declaration's fingerprint (`core.mcp_lock.fingerprint`), which a fresh lock entry matches.
    fingerprint: str = ""
    #: The locked tools the allow-list keeps, in the lock's order: {"name", "description", "input_schema",
    #: "output_schema", "annotations"} (the last two None when the server sent none). Empty unless the lock is fresh.
    offered: tuple[dict[str, Any], ...] = ()


@record
class AgentNode(Runnable):
    kind: ClassVar[str] = "agent"
    description: str | None = None
    model: str = ""
    fallback: tuple[str, ...] = ()
    #: None is the default set (core.defaults.FALLBACK_ON).
    fallback_on: tuple[str, ...] | None = None
    system: str | None = None
    #: Tool, agent and mcp ids, in spec order.
    tools: tuple[str, ...] = ()
    max_steps: int = D.MAX_STEPS
    until: tuple[str, ...] = ()
    until_succeeded: bool = False
    retry_malformed: int = D.RETRY_MALFORMED
    validate_arguments: bool = True
    keep_last: int | None = None
    approval: tuple[str, ...] = ()
    tool_timeout: float | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    #: "auto", "none", "required" or one of `tools`; None leaves it to the model's default, then the provider's.
    tool_choice: str | None = None
    label: str | None = None
    source: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


@record
class StepNode(Runnable):
    kind: ClassVar[str] = "step"
    #: None for a code step (`run = python(...)`).
    model: str | None = None
    prompt: str = D.PROMPT
    system: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    retry_malformed: int = D.RETRY_MALFORMED
    #: A code step's {"type": "python", "target": "mod:fn", "base_dir": ...}; None for a model step.
    run: dict[str, Any] | None = None


@record
class ChainNode(Runnable):
    kind: ClassVar[str] = "chain"
    elements: tuple[str, ...] = ()


@record
class ParallelNode(Runnable):
    """A parallel is its own fork: its `branch` edges leave it; `join` names the node they meet at."""

    kind: ClassVar[str] = "parallel"
    branches: tuple[str, ...] = ()
    on_error: str = D.ON_ERROR
    join: str = ""


@record
class JoinNode(Node):
    kind: ClassVar[str] = "join"
    parallel: str = ""


@record
class ConsolidateNode(Runnable):
    kind: ClassVar[str] = "consolidate"
    agents: tuple[str, ...] = ()
    judge: str = ""
    rounds: int = D.ROUNDS
    task: str = D.TASK


@record(kw_only=False)
class RouteCase(Record):
    """One `LITERAL -> target` line of a route."""

    value: Literal
    target: str
    span: Span | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        return literal_text(self.value)


@record
class RouteNode(Runnable):
    kind: ClassVar[str] = "route"
    description: str | None = None
    #: The path switched on, from what the route receives: ("input", "category").
    subject: tuple[str, ...] = ("input",)
    cases: tuple[RouteCase, ...] = ()
    #: The `else` target, or None.
    otherwise: str | None = None

    def targets(self) -> tuple[str, ...]:
        """Every case's target, `else` last, without repeats."""
        out = [c.target for c in self.cases] + ([self.otherwise] if self.otherwise else [])
        return tuple(dict.fromkeys(out))


@record
class LoopNode(Runnable):
    kind: ClassVar[str] = "loop"
    description: str | None = None
    #: The body's elements in order (one runnable, or an inline chain's elements).
    body: tuple[str, ...] = ()
    #: None only in a spec with errors (a loop needs `until` or at least a bound).
    until: Condition | None = None
    max_iterations: int | None = None
    on_exhausted: str = D.ON_EXHAUSTED


@record
class MapNode(Runnable):
    kind: ClassVar[str] = "map"
    description: str | None = None
    body: tuple[str, ...] = ()
    #: The list's path: ("input", "sections").
    over: tuple[str, ...] = ("input",)
    concurrency: int = D.MAP_CONCURRENCY
    on_error: str = D.ON_ERROR


@record
class AskNode(Runnable):
    """A question for a person; `output` is the `answer` type (text without one)."""

    kind: ClassVar[str] = "ask"
    question: str = ""


@record
class InputNode(Node):
    """`@input`: the run's declared input (`input { ... }`)."""

    kind: ClassVar[str] = "input"
    type: Type = TEXT


@record
class StateNode(Node):
    """`@state`: the state keys tools may write and templates read."""

    kind: ClassVar[str] = "state"
    type: Type = TEXT


@record
class EntryNode(Node):
    kind: ClassVar[str] = "entry"


@record
class ExitNode(Node):
    kind: ClassVar[str] = "exit"


NODE_TYPES: dict[str, type[Node]] = {
    cls.kind: cls
    for cls in (
        ModelNode,
        ToolNode,
        McpNode,
        AgentNode,
        StepNode,
        ChainNode,
        ParallelNode,
        JoinNode,
        ConsolidateNode,
        RouteNode,
        LoopNode,
        MapNode,
        AskNode,
        InputNode,
        StateNode,
        EntryNode,
        ExitNode,
    )
}
RUNNABLE_KINDS: frozenset[str] = frozenset(k for k, cls in NODE_TYPES.items() if issubclass(cls, Runnable))


@record
class Edge(Record):
    """One edge. Which optional fields a kind carries is `EDGE_ATTRS[kind]`; the rest stay None."""

    kind: str
    source: str
    target: str
    #: Where the reference was written (None for edges touching `@entry`/`@exit`).
    span: Span | None = None
    #: What the picture writes on it: a case's literal or `else`, a back edge's condition and bound.
    label: str | None = None
    #: next/body/each: the chain, loop or map whose order this is (None for `@entry`/`@exit` edges).
    chain: str | None = None
    #: next/body: 0-based position of the target; participant: the agent's position.
    index: int | None = None
    #: branch/join: the branch's name.
    branch: str | None = None
    #: uses: this agent must get approval for the tool.
    approval: bool | None = None
    #: fallback: 1-based.
    order: int | None = None
    #: until: `until = TOOL succeeded`.
    succeeded: bool | None = None
    #: case: the literal (None for `else`).
    value: Literal | None = None
    #: back: the loop's max_iterations.
    bound: int | None = None
    #: reads: the path read (`("classify", "category")`).
    path: tuple[str, ...] | None = None
    #: uses/until (agent → mcp): the one tool named (`files.read_text_file`), None for all of them.
    tool: str | None = None


#: Edge kind → the optional fields it carries (and that its JSON `attrs` hold), in docs/graph.md order.
EDGE_ATTRS: dict[str, tuple[str, ...]] = {
    "next": ("chain", "index"),
    "branch": ("branch",),
    "join": ("branch",),
    "uses": ("approval", "tool"),
    "delegates": (),
    "calls": (),
    "fallback": ("order",),
    "judge": (),
    "participant": ("index",),
    "until": ("succeeded", "tool"),
    "case": ("label", "value"),
    "body": ("chain", "index"),
    "back": ("label", "bound"),
    "each": ("chain", "index"),
    "reads": ("path",),
}
EDGE_KINDS = tuple(EDGE_ATTRS)
#: Edges a run travels (control flow), as opposed to resources (calls, uses, fallback) and contracts.
#: `back` closes a loop's one allowed cycle; every other cycle on these edges is an error.
RUN_EDGES = ("next", "branch", "join", "case", "body", "back", "each")


# --- JSON ------------------------------------------------------------------------

_OWN = ("name", "span", "file")
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def node_attrs(cls: type[Node]) -> tuple[str, ...]:
    """The attribute names a node kind carries beyond name/span/file, in declaration order."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = tuple(name for name in field_names(cls) if name not in _OWN and name != "output")
        # The output type last: it reads after what the runnable is.
        names = _FIELD_NAMES[cls] = names + (("output",) if issubclass(cls, Runnable) else ())
    return names


def _jsonable(value: Any, relative: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return relative(value)
    if isinstance(value, tuple | list):
        return [_jsonable(v, relative) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v, relative) for k, v in value.items()}
    if isinstance(value, RouteCase):
        return {"value": value.value, "target": value.target}
    if isinstance(value, _TYPES):
        return to_json_schema(value, strict=False)
    if isinstance(value, _CONDITIONS):
        return condition_text(value)
    return value


_TYPES = get_args(Type)
_CONDITIONS = get_args(Condition)


def record_json(node: Node, relative: Callable[[str], str] = str) -> dict[str, Any]:
    """A node's JSON `attrs`: every attribute of its kind; types as JSON Schema, conditions as spec text.

    `relative` rewrites strings (absolute paths differ per machine)."""
    return {name: _jsonable(getattr(node, name), relative) for name in node_attrs(type(node))}


def edge_json(edge: Edge, relative: Callable[[str], str] = str) -> dict[str, Any]:
    """An edge's JSON `attrs`: exactly the fields its kind carries."""
    return {name: _jsonable(getattr(edge, name), relative) for name in EDGE_ATTRS[edge.kind]}


class GraphView(Protocol):
    """What a reader below the compiler (the runtime) may rely on: `compiler.graph.AgentGraph` is one."""

    entry: str | None
    base_dir: Path | None

    def node(self, id: str) -> Node: ...

    def nodes(self) -> Iterator[Node]: ...

    def nodes_of(self, *kinds: str) -> list[str]: ...

    def edges(self, *kinds: str) -> Iterator[Edge]: ...
