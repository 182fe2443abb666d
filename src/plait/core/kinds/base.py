"""Field metadata → a kind's schema: what every kind record has, and how its fields describe themselves.

A kind (src/plait/core/kinds/agent.py, ...) is one record class whose fields
are the graph's attributes. A field made with `attr(...)` also says how a
spec writes it (`Attr`: value type, bounds, choices, the spec's default),
whether it is a contract (`plait diff` reports a change to it as one),
whether it is drawn (the diagram's node label shows it), whether it is
journaled (a model request carries it into a run's records and a cassette's
key), and its doc line; the compiler's attribute checks, the diff, the
renderer, the request code, the editor's completion and the docs read these
instead of keeping tables of their own.
"""

from __future__ import annotations

from dataclasses import MISSING, Field, field
from typing import Any, Callable, ClassVar, TypeVar, dataclass_transform

from ..budget import Budget
from ..record import Record, record
from ..source import Span
from ..types import TEXT, Type

__all__ = [
    "Attr",
    "Meta",
    "Node",
    "Runnable",
    "TOOL_CHOICES",
    "attr",
    "contracts",
    "default_of",
    "drawn_fields",
    "journaled_fields",
    "kind_record",
    "metas",
    "spec_attrs",
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
    names), env_map (`{ KEY = env("NAME") }` or literal strings), tool_choice,
    condition, path, budget (`{ usd = 2.00, ... }`, core.budget). `default` is the value a spec that leaves it out has,
    as the spec would write it (`approval = never`); the record's own field
    default is the same value normalised (False).
    """

    type: str
    required: bool = False
    default: Any = None
    kinds: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    #: One line for the editor's completion and hover.
    doc: str = field(default="", compare=False)


@record
class Meta(Record):
    """What one field of a kind record says of itself beyond its type and default."""

    #: How a spec writes it; None for a field the compiler derives (a model's provider, an agent's until_succeeded).
    spec: Attr | None = None
    #: The attribute's name in a spec when it is not the field's (`history` → keep_last, `api_key` → api_key_env).
    spelled: str | None = None
    #: A change to it is a change to the runnable's contract (drawn on the picture; `plait diff` says "contract").
    contract: bool = False
    #: The diagram draws it: its node's label has a line for it (src/plait/compiler/render/labels.py).
    drawn: bool = False
    #: A model request carries it (the per-call settings a runnable and its model combine): recorded with each
    #: call and part of a cassette's key (src/plait/runtime/model_call.py, src/plait/runtime/cassettes/request.py).
    journaled: bool = False
    doc: str = ""


def attr(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | Any = MISSING,
    spec: Attr | None = None,
    spelled: str | None = None,
    contract: bool = False,
    drawn: bool = False,
    journaled: bool = False,
    doc: str = "",
) -> Any:
    """A kind record's field with its schema (read back by `metas`, `spec_attrs`, `contracts`, `drawn_fields`,
    `journaled_fields`)."""
    if spec is not None and doc and not spec.doc:
        spec = Attr(spec.type, spec.required, spec.default, spec.kinds, spec.choices, spec.minimum, spec.maximum, doc)
    meta = Meta(spec=spec, spelled=spelled, contract=contract, drawn=drawn, journaled=journaled, doc=doc)
    return field(default=default, default_factory=default_factory, metadata={"plait": meta})


N = TypeVar("N", bound=Record)


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field, attr))
def kind_record(cls: type[N]) -> type[N]:
    """`@record`, keeping each field's `Meta` (the class body's `attr(...)`s) in field order on `cls._metas`."""
    own = {
        name: value.metadata["plait"]
        for name, value in cls.__dict__.items()
        if isinstance(value, Field) and "plait" in value.metadata
    }
    inherited: dict[str, Meta] = {}
    for base in reversed(cls.__mro__[1:]):
        inherited.update(base.__dict__.get("_metas", {}))
    made = record(cls)
    merged = {**inherited, **own}
    made._metas = {name: merged[name] for name in made._names if name in merged}  # type: ignore[attr-defined]
    return made


@kind_record
class Node(Record):
    """What every node has: its id (`name`), where its name is written, and the declaring file."""

    kind: ClassVar[str] = ""
    #: The typed blocks (`params`, `output`, `answer`) a declaration of this kind may have.
    blocks: ClassVar[tuple[str, ...]] = ()
    #: Spec attributes the compiler folds into another field (a tool's `allow_private` into its `run`).
    folded: ClassVar[dict[str, Attr]] = {}
    #: Whether a declaration of this kind has an attribute block even when it declares no attribute (`ask`).
    block: ClassVar[bool] = False
    #: Fields this kind carries (from a base) that its declarations do not write: an ask makes no model call for
    #: a `budget` to limit.
    unwritten: ClassVar[tuple[str, ...]] = ()
    #: Drawn fields this kind carries (from a base) that its node's label leaves out: a parallel's `output`.
    undrawn: ClassVar[tuple[str, ...]] = ()
    _metas: ClassVar[dict[str, Meta]] = {}
    name: str
    span: Span | None = None
    #: Absolute path of the declaring file (None for text input and generated `@` nodes).
    file: str | None = None


@kind_record
class Runnable(Node):
    """A node a chain can place: it takes an input and produces `output`."""

    output: Type = attr(
        default=TEXT, contract=True, drawn=True, doc="What it produces (inferred from its `output` block)."
    )
    #: Limits on its model calls (nested runnables' included), enforced at run time (src/plait/runtime/budget.py).
    budget: Budget | None = attr(
        default=None,
        spec=Attr("budget"),
        contract=True,
        drawn=True,
        doc="`{ usd = 2.00, tokens = N, model_calls = N, on_exceeded = pause|fail, unpriced = allow }`.",
    )


def metas(cls: type[Node]) -> dict[str, Meta]:
    """Field name → its `Meta`, in field order, for the fields declared with `attr(...)`."""
    return cls._metas


def spec_attrs(cls: type[Node]) -> dict[str, Attr]:
    """The attributes a spec may write in a declaration of this kind, by their spelled name, in field order."""
    written = {
        meta.spelled or name: meta.spec
        for name, meta in cls._metas.items()
        if meta.spec is not None and name not in cls.unwritten
    }
    return {**written, **cls.folded}


def contracts(cls: type[Node]) -> tuple[str, ...]:
    """The fields that are this kind's contract, in field order."""
    return tuple(name for name, meta in cls._metas.items() if meta.contract)


def drawn_fields(cls: type[Node]) -> tuple[str, ...]:
    """The fields a node of this kind shows on the diagram, in field order."""
    return tuple(name for name, meta in cls._metas.items() if meta.drawn and name not in cls.undrawn)


def journaled_fields(cls: type[Node]) -> tuple[str, ...]:
    """The fields a model request carries from a node of this kind, in field order."""
    return tuple(name for name, meta in cls._metas.items() if meta.journaled)


def default_of(cls: type[Node], name: str) -> Any:
    """A field's default value (a fresh one for a field with a factory)."""
    for spec in cls._specs:
        if spec.name == name:
            return spec.factory() if spec.factory is not MISSING else spec.default
    raise KeyError(f"{cls.__name__} has no field {name!r}")
