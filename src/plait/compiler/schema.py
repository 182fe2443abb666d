"""Declaration kinds → the attributes each accepts, their value types and defaults.

One table drives attribute checking, normalisation into graph attributes, and
"did you mean" suggestions for unknown attributes.
"""

from __future__ import annotations

from typing import Any

from plait.core import defaults as D
from plait.core.graph import RUNNABLE_KINDS
from plait.core.record import Record, record
from plait.core.vocab import ERROR_KINDS, PROVIDERS

__all__ = [
    "Attr",
    "ERROR_KINDS",
    "PROVIDERS",
    "RUNNABLE_KINDS",
    "SCHEMAS",
    "TOOL_CHOICES",
    "TYPED_BLOCKS",
    "a",
    "suggest",
]

#: What `tool_choice` may say besides a tool's name: the three every wire format with tools understands.
TOOL_CHOICES = ("auto", "none", "required")


@record(kw_only=False)
class Attr(Record):
    """How one attribute is written.

    `type` is one of: string, template, number, int, duration, bool, map,
    ref (one name of `kinds`), refs (a list of such names), symbol (one bare
    word of `choices`), symbols (a list of them), run (python(...) or
    http(...)), env (env("NAME")), keep_last (keep_last(N)), until, size
    (`4MB`, or a whole number of bytes), strings (a non-empty list of
    strings), names (a list of bare words, not resolved: an MCP server's tool
    names), env_map (`{ KEY = env("NAME") }` or literal strings).
    """

    type: str
    required: bool = False
    default: Any = None
    kinds: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None


SCHEMAS: dict[str, dict[str, Attr]] = {
    "model": {
        "temperature": Attr("number", minimum=0, maximum=2),
        "max_tokens": Attr("int", minimum=1),
        "timeout": Attr("duration", minimum=0.001),
        "base_url": Attr("string"),
        "api_key": Attr("env"),
        "retries": Attr("int", default=D.MODEL_RETRIES, minimum=0, maximum=10),
        "headers": Attr("map", default={}),
        "api": Attr("string", choices=("chat", "responses")),
        "script": Attr("string"),
        # The default for agents on this model; a tool name is an agent's own choice (it knows its tools).
        "tool_choice": Attr("tool_choice", choices=TOOL_CHOICES),
    },
    "tool": {
        "run": Attr("run", required=True),
        "approval": Attr("symbol", choices=("required", "never"), default="never"),
        "timeout": Attr("duration", default=D.TOOL_TIMEOUT, minimum=0.001),
        "result": Attr("symbol", choices=("content", "messages"), default=D.TOOL_RESULT),
        # Safe to run twice: a resumed run re-runs a call a crash left unknown instead of asking a person.
        "idempotent": Attr("bool", default=False),
        # http tools: reach loopback/private/metadata addresses only when asked; cap the body read (bytes).
        "allow_private": Attr("bool", default=False),
        "max_response": Attr("size", default=4 * 1024 * 1024, minimum=1),
    },
    "agent": {
        "model": Attr("ref", required=True, kinds=("model",)),
        "fallback": Attr("refs", kinds=("model",), default=()),
        "fallback_on": Attr("symbols", choices=ERROR_KINDS),
        "system": Attr("template"),
        "tools": Attr("refs", kinds=("tool", "agent", "mcp"), default=()),
        "max_steps": Attr("int", default=D.MAX_STEPS, minimum=1),
        "until": Attr("until", default=()),
        "retry_malformed": Attr("int", default=D.RETRY_MALFORMED, minimum=0),
        "validate_arguments": Attr("bool", default=True),
        "history": Attr("keep_last"),
        "approval": Attr("refs", kinds=("tool", "mcp"), default=()),
        "tool_timeout": Attr("duration", minimum=0.001),
        "temperature": Attr("number", minimum=0, maximum=2),
        "max_tokens": Attr("int", minimum=1),
        # One of TOOL_CHOICES or one of the agent's `tools` (check_types.tool_choice).
        "tool_choice": Attr("tool_choice", choices=TOOL_CHOICES),
        "label": Attr("string"),
        "source": Attr("string"),
        "attributes": Attr("map", default={}),
    },
    "step": {
        "model": Attr("ref", required=True, kinds=("model",)),
        "prompt": Attr("template", required=True),
        "system": Attr("template"),
        "max_tokens": Attr("int", minimum=1),
        "temperature": Attr("number", minimum=0, maximum=2),
        "retry_malformed": Attr("int", default=D.RETRY_MALFORMED, minimum=0),
        # A code step: `run = python(...)` instead of `model` and `prompt` (see check_types).
        "run": Attr("run"),
    },
    "consolidate": {
        "agents": Attr("refs", required=True, kinds=("agent",)),
        "judge": Attr("ref", required=True, kinds=("model", "agent")),
        "rounds": Attr("int", default=D.ROUNDS, minimum=1),
        "task": Attr("template", default=D.TASK),
    },
    "parallel": {
        "on_error": Attr("symbol", choices=("fail", "collect"), default=D.ON_ERROR),
    },
    # `max_iterations` is required, but its absence has its own code (P312, unbounded loop).
    "loop": {
        "until": Attr("condition"),
        "max_iterations": Attr("int", minimum=1),
        "on_exhausted": Attr("symbol", choices=("fail", "last"), default=D.ON_EXHAUSTED),
    },
    "map": {
        "over": Attr("path", required=True),
        "concurrency": Attr("int", default=D.MAP_CONCURRENCY, minimum=1),
        "on_error": Attr("symbol", choices=("fail", "collect"), default=D.ON_ERROR),
    },
    "ask": {},
    # Exactly one of `command` and `url` (check_mcp); the tool names are checked against plait.lock there too.
    "mcp": {
        "command": Attr("strings"),
        "url": Attr("string"),
        "env": Attr("env_map", default={}),
        "headers": Attr("env_map", default={}),
        "tools": Attr("names"),
        "timeout": Attr("duration", default=D.TOOL_TIMEOUT, minimum=0.001),
        "approval": Attr("names", default=()),
    },
}

#: The attributes whose strings are templates (`{{...}}` reads other steps' results), by declaration kind.
TEMPLATES: dict[str, tuple[str, ...]] = {
    kind: names
    for kind, attrs in SCHEMAS.items()
    if (names := tuple(name for name, attr in attrs.items() if attr.type == "template"))
}

#: The typed blocks (`params`, `output`, `answer`) each kind may have.
TYPED_BLOCKS: dict[str, tuple[str, ...]] = {
    "tool": ("params",),
    "agent": ("output",),
    "step": ("output",),
    "ask": ("answer",),
}


def a(kind: str) -> str:
    """`kind` with its indefinite article: "a tool", "an agent"."""
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


#: Candidate names one check compares for "did you mean" hints over the spec's own names, in all (about 2 s of
#: difflib): a hint per unknown name compares it with every declaration, so 4,000 undefined names among 4,000
#: agents took a minute (and 100,000 of each, hours). Past it, names are reported without a hint.
HINT_BUDGET = 200_000


class Hints:
    """ "Did you mean" within one check's budget of candidates compared (see HINT_BUDGET)."""

    __slots__ = ("budget",)

    def __init__(self, budget: int | None = None) -> None:
        self.budget = HINT_BUDGET if budget is None else budget

    def __call__(self, word: str, candidates: list[str] | tuple[str, ...]) -> str | None:
        self.budget -= len(candidates)
        return suggest(word, candidates) if self.budget >= 0 else None


def suggest(word: str, candidates: list[str] | tuple[str, ...]) -> str | None:
    """The candidate closest to `word` for a "did you mean" hint, or None."""
    # difflib's ratio is 2*M/(len(a)+len(b)) with M <= the shorter length, so it
    # cannot reach 0.6 when one word is over 2.34x the other. Dropping those first
    # gives the same answer without indexing a huge word (a 1 MB string took seconds).
    near = [c for c in candidates if len(word) <= 2.34 * len(c) and len(c) <= 2.34 * len(word)]
    if not near:
        return None
    import difflib  # only a spec with a misspelt name needs it: not imported by every `plait check`

    matches = difflib.get_close_matches(word, near, n=1, cutoff=0.6)
    return matches[0] if matches else None
