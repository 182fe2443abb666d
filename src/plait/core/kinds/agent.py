"""`agent NAME "description" { ... }` → its graph record and attribute schema."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, ClassVar

from ..types import TextType, Type, to_json_schema
from ..vocab import ERROR_KINDS
from .base import TOOL_CHOICES, Attr, Runnable, attr, kind_record
from .thread import thread_attr

__all__ = ["AgentNode", "schema_of"]

#: LLM calls in one run.
MAX_STEPS = 16
#: Malformed replies re-asked (a step's too).
RETRY_MALFORMED = 0


def validate_attr() -> Any:
    """`validate = python("module:function")` (plait 0.3): a check of the answer after its `output` schema; a
    rejection goes back to the model as a retry (src/plait/runtime/validators.py). The same shape as a code
    step's `run`."""
    return attr(
        default=None,
        spec=Attr("validator"),
        contract=True,
        drawn=True,
        doc='Checks its answer: `python("module:function")`; a rejection is retried (`retry_malformed`).',
    )


def with_attr() -> Any:
    """`with { name: path ... }` (plait 0.3): what a runnable receives, bound from visible paths; a step, an agent
    and an ask take it. Binding name → the path's parts, in spec order."""
    return attr(
        default_factory=dict,
        spec=Attr("bindings"),
        spelled="with",
        contract=True,
        doc="`with { name: path, ... }`: its input, a record bound from paths (`planner.tasks`, `input.topic`).",
    )


@kind_record
class AgentNode(Runnable):
    kind: ClassVar[str] = "agent"
    blocks: ClassVar[tuple[str, ...]] = ("output",)
    description: str | None = None
    bindings: dict[str, tuple[str, ...]] = with_attr()
    model: str = attr(
        drawn=True,
        default="",
        spec=Attr("ref", required=True, kinds=("model",)),
        contract=True,
        doc="The model it calls.",
    )
    fallback: tuple[str, ...] = attr(
        drawn=True,
        default=(),
        spec=Attr("refs", kinds=("model",), default=()),
        contract=True,
        doc="Models tried in order when a call fails.",
    )
    #: None is the default set (core.vocab.FALLBACK_KINDS).
    fallback_on: tuple[str, ...] | None = attr(
        drawn=True,
        default=None,
        spec=Attr("symbols", choices=ERROR_KINDS),
        contract=True,
        doc="The error kinds that move to a fallback.",
    )
    system: str | None = attr(default=None, spec=Attr("template"), doc="The system prompt (template).")
    #: None: the first user message is the input itself (text, or a record's JSON).
    prompt: str | None = attr(
        default=None,
        spec=Attr("template"),
        doc="Its first user message (template; default: its input, a record as JSON).",
    )
    #: Tool, agent and mcp ids, in spec order.
    tools: tuple[str, ...] = attr(
        drawn=True,
        default=(),
        spec=Attr("refs", kinds=("tool", "agent", "mcp"), default=()),
        contract=True,
        doc="Tools, agents (delegated to) and MCP servers or their tools.",
    )
    #: Runnables it may hand control to (plait 0.3): each becomes a `transfer_to_NAME` tool.
    handoff: tuple[str, ...] = attr(
        default=(),
        spec=Attr(
            "refs",
            kinds=("agent", "step", "chain", "parallel", "consolidate", "route", "loop", "map", "ask"),
            default=(),
        ),
        contract=True,
        doc="Runnables it may hand control to, with its input: its output is then theirs.",
    )
    max_steps: int = attr(
        drawn=True,
        default=MAX_STEPS,
        spec=Attr("int", default=MAX_STEPS, minimum=1),
        contract=True,
        doc="LLM calls in one run (default 16).",
    )
    #: None: as many as a reply asks for. Calls past it are refused (src/plait/runtime/steps/run_tools.py), which
    #: is what lets `plait cost` bound its delegations (src/plait/compiler/bounds.py).
    max_tool_calls: int | None = attr(
        default=None,
        spec=Attr("int", minimum=1),
        contract=True,
        doc="Tool calls one reply may make; the rest are refused as error results (default: no limit).",
    )
    until: tuple[str, ...] = attr(
        drawn=True, default=(), spec=Attr("until", default=()), contract=True, doc="The tool calls that end its turn."
    )
    until_succeeded: bool = attr(drawn=True, default=False, contract=True, doc="`until = TOOL succeeded`.")
    retry_malformed: int = attr(
        drawn=True,
        default=RETRY_MALFORMED,
        spec=Attr("int", default=RETRY_MALFORMED, minimum=0),
        contract=True,
        doc="Malformed replies reflected on and re-asked (default 0).",
    )
    #: {"type": "python", "target": "mod:fn", "base_dir": ...}, or None.
    validate: dict[str, Any] | None = validate_attr()
    validate_arguments: bool = attr(
        default=True, spec=Attr("bool", default=True), doc="Check tool arguments against their schema (default true)."
    )
    keep_last: int | None = attr(
        drawn=True,
        default=None,
        spec=Attr("keep_last"),
        spelled="history",
        contract=True,
        doc="`keep_last(N)`: the turns of history sent.",
    )
    thread: str | None = thread_attr()
    approval: tuple[str, ...] = attr(
        drawn=True,
        default=(),
        spec=Attr("refs", kinds=("tool", "mcp"), default=()),
        contract=True,
        doc="Tools whose calls wait for a person's decision.",
    )
    tool_timeout: float | None = attr(
        drawn=True,
        default=None,
        spec=Attr("duration", minimum=0.001),
        contract=True,
        doc="A deadline for each of its tool calls.",
    )
    temperature: float | None = attr(
        journaled=True, default=None, spec=Attr("number", minimum=0, maximum=2), doc="Sampling temperature, 0 to 2."
    )
    max_tokens: int | None = attr(
        journaled=True, default=None, spec=Attr("int", minimum=1), doc="Most tokens one reply may have."
    )
    #: "auto", "none", "required" or one of `tools`; None leaves it to the model's default, then the provider's.
    # A tool's name is checked against `tools` by src/plait/compiler/passes/check_types.py.
    tool_choice: str | None = attr(
        journaled=True,
        drawn=True,
        default=None,
        spec=Attr("tool_choice", choices=TOOL_CHOICES),
        contract=True,
        doc="`auto`, `none`, `required` or one of its tools.",
    )
    label: str | None = attr(default=None, spec=Attr("string"), doc="Telemetry: its label.")
    source: str | None = attr(default=None, spec=Attr("string"), doc="Telemetry: where it comes from.")
    attributes: dict[str, Any] = attr(
        default_factory=dict, spec=Attr("map", default={}), doc="Telemetry: attributes on its spans."
    )

    def output_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of `output` in its strict form, what the model is asked for; None for text."""
        return schema_of(self.output, True)


@lru_cache(maxsize=1024)
def schema_of(output: Type, strict: bool) -> dict[str, Any] | None:
    """A declared output's JSON Schema (non-strict: optional fields may be absent or null); None for text."""
    # Types are frozen records: one schema per declared type, not one per call. Callers only read it.
    return None if isinstance(output, TextType) else to_json_schema(output, strict=strict, nullable=not strict)
