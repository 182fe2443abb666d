"""Parse tree → AST: frozen pydantic nodes, each with the span it came from.

The AST mirrors what was written (no name resolution, no defaults); the
compiler gives it meaning. `Module` holds one file; imports are followed by
`plait.dsl.loader`. The parser builds nodes without validation (`constructor`,
a lean `model_construct`: the grammar already guarantees their shape), so
validation costs nothing on the parse path.
"""

# No `from __future__ import annotations`: pydantic would evaluate every
# annotation string again when each class is created (~15% of this import).

from typing import Annotated, Any, Callable, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field

from plait.core.source import Span

__all__ = [
    "AgentDecl",
    "Attribute",
    "Block",
    "Bool",
    "Call",
    "ChainDecl",
    "ChainRef",
    "Comment",
    "ConsolidateDecl",
    "Decl",
    "Duration",
    "Ident",
    "ImportDecl",
    "InlineParallel",
    "ListValue",
    "ModelDecl",
    "Module",
    "Node",
    "Number",
    "Param",
    "ParallelDecl",
    "Ref",
    "StepDecl",
    "String",
    "Succeeded",
    "ToolDecl",
    "TypeExpr",
    "Value",
    "constructor",
    "strip_spans",
]


class Node(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, defer_build=True)
    span: Span


N = TypeVar("N", bound=Node)
_set = object.__setattr__
_REQUIRED = object()
_IMMUTABLE = (str, int, float, bool, type(None), tuple)


def constructor(cls: type[N]) -> Callable[..., N]:
    """A faster `cls.model_construct` for the parser, which always passes every
    required field and nothing else (the grammar guarantees the shape; a test
    checks every node it builds has all its fields in declaration order).
    pydantic's general version, with aliases, extra fields, post-init hooks and
    default factories, was a quarter of the parse."""
    template = _template(cls)
    if template is None:
        return cls.model_construct
    new = cls.__new__

    def construct(**values: Any) -> N:
        # Copying the ordered template and updating it keeps declaration order.
        data = template.copy()
        data.update(values)
        node = new(cls)
        _set(node, "__dict__", data)
        _set(node, "__pydantic_fields_set__", set(values))
        _set(node, "__pydantic_extra__", None)
        _set(node, "__pydantic_private__", None)
        return node

    return construct


def _template(cls: type[Node]) -> dict[str, Any] | None:
    """Field -> default (or _REQUIRED) in declaration order, or None when
    pydantic's own model_construct must be used (a default could be shared
    mutable state, or the class has an alias, a post-init hook or extras)."""
    if cls.__pydantic_post_init__ or cls.model_config.get("extra") == "allow":
        return None
    template: dict[str, Any] = {}
    for name, info in cls.model_fields.items():
        if info.is_required():
            template[name] = _REQUIRED
        elif info.default_factory is not None or not isinstance(info.default, _IMMUTABLE) or info.alias:
            return None
        else:
            template[name] = info.default
    return template


class Ident(Node):
    """A name as written where it is *declared* or used as a key."""

    name: str


class Comment(Node):
    text: str


# --- values -------------------------------------------------------------------


class String(Node):
    kind: Literal["string"] = "string"
    #: The decoded value (escapes applied; `\{` kept so templates see a literal brace).
    value: str
    #: True for `"""block"""` strings (already dedented in `value`).
    block: bool = False


class Number(Node):
    kind: Literal["number"] = "number"
    value: int | float
    raw: str


class Duration(Node):
    kind: Literal["duration"] = "duration"
    seconds: float
    raw: str


class Bool(Node):
    kind: Literal["bool"] = "bool"
    value: bool


class Ref(Node):
    """A bare name used as a value: a reference (`fast`) or a symbol (`required`)."""

    kind: Literal["ref"] = "ref"
    name: str


class Succeeded(Node):
    """`until = submit_report succeeded`."""

    kind: Literal["succeeded"] = "succeeded"
    target: Ref


class ListValue(Node):
    kind: Literal["list"] = "list"
    items: tuple["Value", ...]


class Call(Node):
    """`python("m:f")`, `http(GET, "url") { ... }`, `env("KEY")`, `keep_last(8)`."""

    kind: Literal["call"] = "call"
    func: Ident
    args: tuple["Value", ...]
    block: "Block | None" = None


class Attribute(Node):
    key: Ident
    #: True when the key was written as a string (`"app.tenant" = ...`): map entries.
    quoted: bool = False
    value: "Value"


class Block(Node):
    """`{ ... }`: a declaration body, or a map value (`headers = { ... }`)."""

    kind: Literal["block"] = "block"
    attributes: tuple[Attribute, ...]
    params: tuple["Params", ...] = ()

    def get(self, key: str) -> Attribute | None:
        for attr in self.attributes:
            if attr.key.name == key:
                return attr
        return None


Value = Annotated[
    Union[String, Number, Duration, Bool, Ref, Succeeded, ListValue, Call, Block],
    Field(discriminator="kind"),
]


# --- types --------------------------------------------------------------------


class TypeExpr(Node):
    """A parameter type. `form` says which fields are used:

    - "name": `string`, `int`, ... (`name`)
    - "generic": `list[T]` (`name`, `args`)
    - "object": `object { ... }` (`name`, `fields`)
    - "union": `"a" | "b"` (`literals`)
    """

    form: Literal["name", "generic", "object", "union"]
    name: str | None = None
    args: tuple["TypeExpr", ...] = ()
    fields: tuple["Param", ...] = ()
    literals: tuple[String, ...] = ()
    optional: bool = False


class Param(Node):
    name: Ident
    type: TypeExpr
    description: String | None = None
    default: Value | None = None


class Params(Node):
    params: tuple[Param, ...]


# --- declarations -------------------------------------------------------------


class ModelDecl(Node):
    kind: Literal["model"] = "model"
    name: Ident
    target: String
    body: Block | None = None


class ToolDecl(Node):
    kind: Literal["tool"] = "tool"
    name: Ident
    description: String | None = None
    body: Block


class AgentDecl(Node):
    kind: Literal["agent"] = "agent"
    name: Ident
    description: String | None = None
    body: Block


class StepDecl(Node):
    kind: Literal["step"] = "step"
    name: Ident
    description: String | None = None
    body: Block


class ConsolidateDecl(Node):
    kind: Literal["consolidate"] = "consolidate"
    name: Ident
    description: String | None = None
    body: Block


class ChainRef(Node):
    kind: Literal["ref"] = "ref"
    name: str


class InlineParallel(Node):
    kind: Literal["parallel"] = "parallel"
    branches: tuple[Ident, ...]


class ChainDecl(Node):
    kind: Literal["chain"] = "chain"
    name: Ident
    elements: tuple[Annotated[Union[ChainRef, InlineParallel], Field(discriminator="kind")], ...]


class ParallelDecl(Node):
    kind: Literal["parallel"] = "parallel"
    name: Ident
    branches: ListValue
    body: Block | None = None


class ImportDecl(Node):
    kind: Literal["import"] = "import"
    path: String


Decl = Annotated[
    Union[ModelDecl, ToolDecl, AgentDecl, StepDecl, ConsolidateDecl, ChainDecl, ParallelDecl, ImportDecl],
    Field(discriminator="kind"),
]


class Module(Node):
    """One parsed file."""

    file: str
    version: Number | None = None
    declarations: tuple[Decl, ...]
    comments: tuple[Comment, ...] = ()


# No model_rebuild() here: with `defer_build` pydantic resolves the forward
# references and builds validators on first validation or dump. The parser
# never validates (model_construct), so `plait check` skips the ~0.3 s that
# building schemas for every node class costs at import.


def strip_spans(node: object) -> object:
    """The node as plain data without spans or comments: equal iff two trees mean the same."""
    if isinstance(node, BaseModel):
        return {
            key: strip_spans(getattr(node, key))
            for key in type(node).model_fields
            if key not in ("span", "comments", "file")
        } | {"__type__": type(node).__name__}
    if isinstance(node, tuple | list):
        return [strip_spans(item) for item in node]
    return node
