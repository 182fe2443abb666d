"""Parse tree → AST: frozen slotted dataclasses, each with the span it came from.

The AST mirrors what was written (no name resolution, no defaults); the
compiler gives it meaning. `Module` holds one file; imports are followed by
`plait.dsl.loader`. Nodes are plain dataclasses rather than pydantic models:
the grammar already guarantees their shape, so validation would buy nothing,
and building ~40 model classes was a quarter of a small `plait check`.
"""

from __future__ import annotations

from array import array
from sys import intern
from collections.abc import Iterator, Sequence
from dataclasses import fields
from typing import Callable, Literal, TypeVar, Union, overload

from plait.core.record import Record, field_names

# Every node: a frozen slotted keyword-only dataclass (see plait.core.record for why not `@dataclass(frozen=True)`).
# An import alias, not `_node = record`: mypy applies `dataclass_transform` only through the former.
from plait.core.record import record as _node
from plait.core.source import SourceFile, Span, span_of

__all__ = [
    "AgentDecl",
    "AskDecl",
    "Attribute",
    "Block",
    "Bool",
    "BoolOp",
    "Call",
    "ChainDecl",
    "ChainElement",
    "ChainRef",
    "Comment",
    "Compare",
    "Condition",
    "ConsolidateDecl",
    "Decl",
    "Duration",
    "Ident",
    "ImportDecl",
    "InlineParallel",
    "InputDecl",
    "ListValue",
    "LoopDecl",
    "MapDecl",
    "McpDecl",
    "ModelDecl",
    "Module",
    "Node",
    "Not",
    "Number",
    "PackedAttributes",
    "PackedItems",
    "Param",
    "ParallelDecl",
    "Params",
    "PathValue",
    "Ref",
    "RouteCase",
    "RouteDecl",
    "Size",
    "StateDecl",
    "StepDecl",
    "String",
    "Succeeded",
    "TestDecl",
    "TypeDecl",
    "Expect",
    "ToolDecl",
    "TypeExpr",
    "Value",
    "constructor",
    "number_value",
    "meaning",
    "strip_spans",
]


@_node
class Node(Record):
    """Every node has the span of the text it came from."""

    span: Span


N = TypeVar("N", bound=Node)


def constructor(cls: type[N]) -> Callable[..., N]:
    """What the parser calls to make a `cls` node: the class itself, whose
    `__init__` sets each slot through its descriptor (as cheap as a
    hand-written constructor; kept so callers need not know)."""
    return cls


@_node
class Ident(Node):
    """A name as written where it is *declared* or used as a key."""

    name: str


@_node
class Comment(Node):
    """`# ...`, kept for the formatter."""

    text: str


# --- values -------------------------------------------------------------------


@_node
class String(Node):
    """A string literal: `"..."`, or a block string."""

    kind: Literal["string"] = "string"
    #: The decoded value (escapes applied; `\{` kept so templates see a literal brace).
    value: str
    #: True for `"""block"""` strings (already dedented in `value`).
    block: bool = False


@_node
class Number(Node):
    """`16`, `0.2`, `-1`, `1e3` (`raw` as written)."""

    kind: Literal["number"] = "number"
    value: int | float
    raw: str


def number_value(raw: str) -> int | float:
    """A number literal's value: an int unless it has a fraction or an exponent. Raises ValueError."""
    return float(raw) if "." in raw or "e" in raw or "E" in raw else int(raw)


@_node
class Duration(Node):
    """`500ms`, `30s`, `2m`, `1h`."""

    kind: Literal["duration"] = "duration"
    seconds: float
    raw: str


@_node
class Size(Node):
    """`4MB`, `512KB`, `1GB`, `100B` (binary units: 1KB = 1024 bytes)."""

    kind: Literal["size"] = "size"
    bytes: int
    raw: str


@_node
class Bool(Node):
    """`true` / `false`."""

    kind: Literal["bool"] = "bool"
    value: bool


@_node
class Ref(Node):
    """A bare name used as a value: a reference (`fast`) or a symbol (`required`)."""

    kind: Literal["ref"] = "ref"
    name: str


@_node
class PathValue(Node):
    """A dotted name used as a value: `input.sections`, `review.verdict`, `files.read_text_file`.

    A single word is a `Ref`; a route's subject is always a PathValue (`on input`
    gives `parts == ("input",)`).
    """

    kind: Literal["path"] = "path"
    parts: tuple[str, ...]


@_node
class Succeeded(Node):
    """`until = submit_report succeeded` (or `files.write_file succeeded`)."""

    kind: Literal["succeeded"] = "succeeded"
    target: Ref | PathValue


@_node
class ListValue(Node):
    """`[a, b]`. A long list's `items` is a `PackedItems` (a read-only sequence of the same nodes), not a tuple."""

    kind: Literal["list"] = "list"
    items: Sequence[Value]


@_node
class Call(Node):
    """`python("m:f")`, `http(GET, "url") { ... }`, `env("KEY")`, `keep_last(8)`."""

    kind: Literal["call"] = "call"
    func: Ident
    #: A tuple, or `PackedItems` for a machine-sized argument list (as ListValue.items).
    args: Sequence[Value]
    block: Block | None = None


# --- conditions (an attribute's value, e.g. a loop's `until`) -----------------


@_node
class Compare(Node):
    """`verdict == "accept"`, `score >= 8`: the operands as written (usually Ref or PathValue, then a literal)."""

    kind: Literal["compare"] = "compare"
    left: Value
    op: Literal["==", "!=", "<", "<=", ">", ">="]
    right: Value


@_node
class Not(Node):
    """`not x`."""

    kind: Literal["not"] = "not"
    operand: Condition


@_node
class BoolOp(Node):
    """`a and b and c` (one node, operands flattened) or `a or b`."""

    kind: Literal["boolop"] = "boolop"
    op: Literal["and", "or"]
    operands: tuple[Condition, ...]


@_node
class Attribute(Node):
    """`key = value` in a block."""

    key: Ident
    #: True when the key was written as a string (`"app.tenant" = ...`): map entries.
    quoted: bool = False
    value: Value | Compare | Not | BoolOp


@_node
class Block(Node):
    """`{ ... }`: a declaration body, or a map value (`headers = { ... }`)."""

    kind: Literal["block"] = "block"
    #: A tuple; a block of thousands of members keeps them packed (PackedAttributes), read one at a time.
    attributes: tuple[Attribute, ...] | PackedAttributes
    #: Every typed block in it, in order: `params`, `output`, `answer` (see `Params.keyword`).
    params: tuple[Params, ...] = ()

    def get(self, key: str) -> Attribute | None:
        for attr in self.attributes:
            if attr.key.name == key:
                return attr
        return None

    def entries(self) -> Iterator[tuple[str, Value | Compare | Not | BoolOp]]:
        """(key, value) of each attribute, in order: what a pass reading a map needs, without the key's
        node (a packed block then builds one node per entry, not three)."""
        if isinstance(self.attributes, PackedAttributes):
            return self.attributes.entries()
        return ((a.key.name, a.value) for a in self.attributes)

    def typed(self, keyword: str) -> Params | None:
        """The first `params` / `output` / `answer` block, or None."""
        for params in self.params:
            if params.keyword == keyword:
                return params
        return None


Value = Union[String, Number, Duration, Size, Bool, Ref, PathValue, Succeeded, ListValue, Call, Block]
#: An expression in a condition; a plain operand (a `Ref`, a `PathValue`) is a condition of one.
Condition = Union[Compare, Not, BoolOp, Value]


# --- types --------------------------------------------------------------------


@_node
class TypeExpr(Node):
    """A parameter type. `form` says which fields are used:

    - "name": `string`, `int`, ... (`name`)
    - "generic": `list[T]` (`name`, `args`)
    - "object": `object { ... }` (`name`, `fields`)
    - "union": `"a" | "b"`, and from 0.3 `1 | 2 | 3` (`literals`)
    - "names": `Flight | Hotel` (plait 0.3: `args`, each a "name")
    """

    form: Literal["name", "generic", "object", "union", "names"]
    name: str | None = None
    args: tuple[TypeExpr, ...] = ()
    fields: tuple[Param, ...] = ()
    literals: tuple[String | Number, ...] = ()
    optional: bool = False


@_node
class Param(Node):
    """`name: type ["description"] [= default]`."""

    name: Ident
    type: TypeExpr
    description: String | None = None
    default: Value | None = None


@_node
class Params(Node):
    """`params { ... }`, and from 0.2 `output { ... }`, `answer { ... }`, and the
    fields of `input { ... }` / `state { ... }`: `keyword` says which."""

    params: tuple[Param, ...]
    keyword: Literal["params", "output", "answer", "input", "state"] = "params"
    #: `output TYPE` (plait 0.3: `output list[Flight]`, `output Booking`): the whole output's type, no fields.
    type: TypeExpr | None = None


# --- declarations -------------------------------------------------------------


@_node
class ModelDecl(Node):
    """`model NAME = "provider/model" [{ ... }]`."""

    kind: Literal["model"] = "model"
    name: Ident
    target: String
    body: Block | None = None


@_node
class _Described(Node):
    """`KEYWORD NAME ["description"] { ... }`: the shape tool, agent, step, consolidate and mcp share."""

    name: Ident
    description: String | None = None
    body: Block


@_node
class ToolDecl(_Described):
    """`tool NAME ["description"] { ... }`."""

    kind: Literal["tool"] = "tool"


@_node
class AgentDecl(_Described):
    """`agent NAME ["description"] { ... }`."""

    kind: Literal["agent"] = "agent"


@_node
class StepDecl(_Described):
    """`step NAME ["description"] { ... }`."""

    kind: Literal["step"] = "step"


@_node
class ConsolidateDecl(_Described):
    """`consolidate NAME ["description"] { ... }`."""

    kind: Literal["consolidate"] = "consolidate"


@_node
class McpDecl(_Described):
    """`mcp NAME "description" { command = [...] | url = "...", tools = [...], ... }`."""

    kind: Literal["mcp"] = "mcp"


@_node
class ThreadDecl(Node):
    """`thread NAME ["description"] [{ keep_last = N }]` (plait 0.3): a conversation runnables share."""

    kind: Literal["thread"] = "thread"
    name: Ident
    description: String | None = None
    body: Block | None = None


@_node
class TypeDecl(Node):
    """`type NAME ["description"] { field: type ... }` or `type NAME = TYPE` (plait 0.3): a named type."""

    kind: Literal["type"] = "type"
    name: Ident
    description: String | None = None
    #: The record's fields (`type Flight { ... }`); None for `type NAME = TYPE`.
    fields: Params | None = None
    #: The type it names (`type Booking = Flight | Hotel`); None for a record.
    alias: TypeExpr | None = None


@_node
class ChainRef(Node):
    """A runnable named as a chain element."""

    kind: Literal["ref"] = "ref"
    name: str


@_node
class InlineParallel(Node):
    """`parallel(a, b)` as a chain element."""

    kind: Literal["parallel"] = "parallel"
    branches: tuple[Ident, ...]


ChainElement = Union[ChainRef, InlineParallel]


@_node
class ChainDecl(Node):
    """`chain NAME = a -> b -> c [{ budget = ... }]`."""

    kind: Literal["chain"] = "chain"
    name: Ident
    elements: tuple[ChainElement, ...]
    #: Its attributes (a `budget`), or None.
    body: Block | None = None


@_node
class ParallelDecl(Node):
    """`parallel NAME = [a, b] [{ ... }]`."""

    kind: Literal["parallel"] = "parallel"
    name: Ident
    branches: ListValue
    body: Block | None = None


@_node
class ImportDecl(Node):
    """`import "path.plait"`."""

    kind: Literal["import"] = "import"
    path: String


@_node
class InputDecl(Node):
    """`input { ticket: string ... }`: the run's input."""

    kind: Literal["input"] = "input"
    fields: Params


@_node
class StateDecl(Node):
    """`state { order_id: string? ... }`: the keys tools may write."""

    kind: Literal["state"] = "state"
    fields: Params


@_node
class RouteCase(Node):
    """`"billing" -> billing`; `literal` is None for `else -> sales`. `"accept" -> break outer` (plait 0.3) leaves
    a loop: `target` is `break` and `loop` the loop named after it (None for the innermost)."""

    literal: String | Bool | Number | None
    target: Ident
    loop: Ident | None = None


@_node
class RouteDecl(Node):
    """`route NAME ["description"] on PATH { LITERAL -> runnable ... [else -> runnable] }`; the subject may be a
    string holding one expression (`on "{{ len(docs) > 0 }}"`)."""

    kind: Literal["route"] = "route"
    name: Ident
    description: String | None = None
    subject: PathValue | String
    cases: tuple[RouteCase, ...]
    #: Its attributes (a `budget`), written beside its cases, as a block spanning its braces; None when none.
    body: Block | None = None


@_node
class _BodyDecl(Node):
    """`KEYWORD NAME ["description"] = a -> b { ... }`: `body` is the chain's elements."""

    name: Ident
    description: String | None = None
    body: tuple[ChainElement, ...]
    block: Block


@_node
class LoopDecl(_BodyDecl):
    """`loop NAME = BODY { until = ..., max_iterations = N, on_exhausted = ... }`."""

    kind: Literal["loop"] = "loop"


@_node
class MapDecl(_BodyDecl):
    """`map NAME = BODY { over = PATH, concurrency = N, on_error = ... }`."""

    kind: Literal["map"] = "map"


@_node
class AskDecl(Node):
    """`ask NAME "question template" { answer { ... } }`."""

    kind: Literal["ask"] = "ask"
    name: Ident
    question: String
    block: Block | None = None


@_node
class Expect(Node):
    """`expect CONDITION` or `expect SUBJECT WORD VALUE` in a test: `op` is the word (`in`, `matches`, ...),
    None for a plain condition (then `subject` is the whole condition and `value` None)."""

    kind: Literal["expect"] = "expect"
    subject: Value | Compare | Not | BoolOp
    op: Ident | None = None
    value: Value | None = None


@_node
class TestDecl(Node):
    """`test NAME ["description"] { attribute ... expect ... }`."""

    kind: Literal["test"] = "test"
    name: Ident
    description: String | None = None
    attributes: tuple[Attribute, ...]
    expects: tuple[Expect, ...]

    def get(self, key: str) -> Attribute | None:
        for attr in self.attributes:
            if attr.key.name == key:
                return attr
        return None


Decl = Union[
    ModelDecl,
    ToolDecl,
    AgentDecl,
    StepDecl,
    ConsolidateDecl,
    ChainDecl,
    ParallelDecl,
    ImportDecl,
    InputDecl,
    StateDecl,
    RouteDecl,
    LoopDecl,
    MapDecl,
    AskDecl,
    McpDecl,
    TestDecl,
    ThreadDecl,
    TypeDecl,
]


@_node
class Module(Node):
    """One parsed file."""

    file: str
    version: Number | None = None
    declarations: tuple[Decl, ...]
    comments: tuple[Comment, ...] = ()


def strip_spans(node: object) -> object:
    """The node as plain data without spans or comments: equal iff two trees mean the same."""
    if isinstance(node, Node):
        return {
            f.name: strip_spans(getattr(node, f.name))
            for f in fields(node)
            if f.name not in ("span", "comments", "file")
        } | {"__type__": type(node).__name__}
    if isinstance(node, tuple | list | PackedItems | PackedAttributes):
        return [strip_spans(item) for item in node]
    return node


def meaning(node: object) -> bytes:
    """A digest of `strip_spans(node)`, made in one walk without building it: two trees mean the same iff
    their digests are equal (BLAKE2b-256). The formatter compares a spec with its formatted text this way,
    so it never holds both trees, nor a dict per node of either (a dense spec's was 3.9 GB at the cap)."""
    from hashlib import blake2b  # only fmt compares trees: hashlib's import stays out of every check

    digest = blake2b(digest_size=32)
    _feed(node, digest.update)
    return digest.digest()


def _feed(node: object, update: Callable[[bytes], object]) -> None:
    # Recursion is bounded: brackets nest at most 64 deep (the parser's limit), declarations a few levels more.
    if isinstance(node, Node):
        update(b"(" + type(node).__name__.encode())
        for name in field_names(type(node)):
            if name not in _NO_MEANING:
                update(b" " + name.encode() + b"=")
                _feed(getattr(node, name), update)
        update(b")")
    elif isinstance(node, tuple | list | PackedItems | PackedAttributes):
        update(b"[%d" % len(node))
        for item in node:
            _feed(item, update)
        update(b"]")
    elif isinstance(node, str):
        data = node.encode("utf-8", "surrogatepass")
        update(b"s%d:" % len(data) + data)
    else:  # numbers, booleans, None: the type keeps 1, 1.0 and True apart, as == on strip_spans does not
        update(f"{type(node).__name__}:{node!r};".encode())


_NO_MEANING = frozenset({"span", "comments", "file"})


# --- long lists ---------------------------------------------------------------

# What a packed item is; its text is the source between its offsets.
_NODE, _NUMBER, _STRING, _STRING_VALUE, _BLOCK_STRING, _TRUE, _FALSE, _REF = range(8)


_T = TypeVar("_T")


class _Packed(Sequence[_T]):
    """A sequence of nodes kept as offsets into one source text, rebuilt one at a time by `_item`: read-only,
    equal to (and hashed as) the tuple of its nodes, pickled as that tuple (a copy need not carry the text)."""

    __slots__ = ()

    def __len__(self) -> int:
        raise NotImplementedError

    def _item(self, index: int) -> _T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> _T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[_T, ...]: ...

    def __getitem__(self, index: int | slice) -> _T | tuple[_T, ...]:
        size = len(self)
        if isinstance(index, slice):
            return tuple(self._item(i) for i in range(*index.indices(size)))
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("index out of range")
        return self._item(index)

    def __iter__(self) -> Iterator[_T]:
        return map(self._item, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} items)"

    def __reduce__(self) -> tuple:
        return tuple, (tuple(self),)


class PackedItems(_Packed["Value"]):
    """A long list's (or call's) items, its literals kept as offsets into the source text.

    A node with its span cost about 300 bytes (150 since spans are three slots); a list of 3.9 million
    numbers (7.8 MB) made 1.3 GB of them. Here a number, a string, `true`/`false` or a bare name is one code byte and two 32-bit offsets
    (its text and span are read back from the source); other items (blocks, calls, nested lists) are kept
    as they are. Reading an item builds the same node the parser built, equal to it: `items[i]` and
    iteration make nodes one at a time, so a pass that walks the list holds one at once.
    The parser fills it (`add`, `prepend`) while the list is read; afterwards it is not changed.
    """

    __slots__ = ("_source", "_codes", "_starts", "_lengths", "_kept")

    def __init__(self, source: SourceFile) -> None:
        self._source = source
        self._codes = bytearray()
        # Offsets fit in 32 bits: a spec is at most 8 MiB (the loader's cap); `add` keeps any other item whole.
        self._starts = array("I")
        self._lengths = array("I")
        #: Per index, the node itself (code _NODE) or a string's decoded value (_STRING_VALUE, _BLOCK_STRING),
        #: else None; made when the first such item comes (a list of plain literals has none).
        self._kept: list[object] | None = None

    # --- filling (the parser) ----------------------------------------------------

    def add(self, node: Value) -> None:
        # Called once per item of a machine-sized list: one pass, no helper calls.
        span = node.span
        start, end = span.offset, span.end_offset
        code, length = _NODE, 0
        keep: object = None
        if span.file == self._source.path and 0 <= start <= end < 4294967296:
            length = end - start
            if isinstance(node, Number):
                if len(node.raw) == length:
                    code = _NUMBER
            elif isinstance(node, String):
                if node.block:
                    code, keep = _BLOCK_STRING, node.value
                # Same length as its text between the quotes: no escape changed it, so the text is the value.
                elif len(node.value) + 2 == length:
                    code = _STRING
                else:
                    code, keep = _STRING_VALUE, node.value
            elif isinstance(node, Bool):
                code = _TRUE if node.value else _FALSE
            elif isinstance(node, Ref):
                if len(node.name) == length:
                    code = _REF
        if code == _NODE:
            keep, start, length = node, 0, 0  # a node is kept whole
        kept = self._kept
        if keep is not None and kept is None:
            kept = self._kept = [None] * len(self._codes)
        if kept is not None:
            kept.append(keep)
        self._codes.append(code)
        self._starts.append(start)
        self._lengths.append(length)

    def prepend(self, node: Value) -> None:
        """Put `node` first (the list's first item is parsed apart from the rest)."""
        tail = PackedItems(self._source)
        tail.add(node)
        tail._codes += self._codes
        tail._starts += self._starts
        tail._lengths += self._lengths
        if self._kept is not None or tail._kept is not None:
            tail._kept = (tail._kept or [None]) + (self._kept or [None] * len(self._codes))
        self._codes, self._starts, self._lengths, self._kept = tail._codes, tail._starts, tail._lengths, tail._kept

    # --- reading (the sequence protocol is _Packed's) -----------------------------------

    def __len__(self) -> int:
        return len(self._codes)

    def _item(self, index: int) -> Value:
        code = self._codes[index]
        if code == _NODE:
            return self._kept[index]  # type: ignore[index, return-value]
        source = self._source
        start = self._starts[index]
        end = start + self._lengths[index]
        span = span_of(source, start, end)  # offsets the parser took from this text: no clamping needed
        if code == _NUMBER:
            raw = source.text[start:end]
            return Number(span=span, value=number_value(raw), raw=raw)
        if code == _STRING:
            return String(span=span, value=source.text[start + 1 : end - 1], block=False)
        if code == _STRING_VALUE or code == _BLOCK_STRING:
            return String(span=span, value=self._kept[index], block=code == _BLOCK_STRING)  # type: ignore[index, arg-type]
        if code == _REF:
            return Ref(span=span, name=source.text[start:end])
        return Bool(span=span, value=code == _TRUE)


_KEPT = 0xFFFFFFFF  # a key length that marks an attribute kept whole


class PackedAttributes(_Packed[Attribute]):
    """A long block's attributes, each `name = value` kept as its key's offsets and its value in a PackedItems.

    An attribute is three nodes and three spans (~400 bytes); a block of 2 million `a=1,` (7.9 MB) held
    them all at once. Here a key is two 32-bit offsets and its value what PackedItems keeps for it (a
    literal: a code byte and two offsets); a quoted key's attribute is kept whole. Reading builds the same
    Attribute the parser built, one at a time. Typed blocks (`params`, ...) among the members are kept in
    `params`, in order. The parser fills it (`add`, `prepend`); afterwards it is not changed.
    """

    __slots__ = ("_source", "_keys", "_key_lengths", "_values", "params")

    def __init__(self, source: SourceFile) -> None:
        self._source = source
        self._keys = array("I")
        self._key_lengths = array("I")
        self._values = PackedItems(source)
        self.params: list[Params] = []

    def add(self, member: Attribute | Params) -> None:
        if isinstance(member, Params):
            self.params.append(member)
            return
        key = member.key.span
        start, end = key.offset, key.end_offset
        if member.quoted or key.file != self._source.path or not 0 <= start <= end < _KEPT:
            self._keys.append(0)
            self._key_lengths.append(_KEPT)
            self._values.add(member)  # type: ignore[arg-type]  # kept whole, as a node
            return
        self._keys.append(start)
        self._key_lengths.append(end - start)
        self._values.add(member.value)  # type: ignore[arg-type]  # conditions are kept as nodes

    def prepend(self, member: Attribute | Params) -> None:
        """Put `member` first (a block's first member is parsed apart from the rest)."""
        if isinstance(member, Params):
            self.params.insert(0, member)
            return
        head = PackedAttributes(self._source)
        head.add(member)
        self._keys[0:0] = head._keys
        self._key_lengths[0:0] = head._key_lengths
        self._values.prepend(head._values[0])

    def __len__(self) -> int:
        return len(self._keys)

    def entries(self) -> Iterator[tuple[str, Value | Compare | Not | BoolOp]]:
        """`Block.entries()` of a packed block."""
        text, values, keys, lengths = self._source.text, self._values, self._keys, self._key_lengths
        for index in range(len(keys)):
            length = lengths[index]
            if length == _KEPT:
                attr: Attribute = values._item(index)  # type: ignore[assignment]  # kept whole
                yield attr.key.name, attr.value
            else:
                start = keys[index]
                yield intern(text[start : start + length]), values._item(index)

    def _item(self, index: int) -> Attribute:
        value = self._values._item(index)
        length = self._key_lengths[index]
        if length == _KEPT:
            return value  # type: ignore[return-value]
        source, start = self._source, self._keys[index]
        key = Ident(span=span_of(source, start, start + length), name=intern(source.text[start : start + length]))
        return Attribute(span=span_of(source, start, value.span.end_offset), key=key, quoted=False, value=value)
