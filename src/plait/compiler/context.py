"""Loaded modules → the shared state the compiler passes read and extend."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from plait.core.kinds import KINDS
from plait.core.record import Record, record
from plait.dsl import ast
from plait.core.diagnostics import Findings
from plait.dsl.loader import LoadResult
from plait.core.source import Span

from plait.core.types import ObjectType, Type

from .draft import Draft
from .graph import AgentGraph
from .schema import Hints

__all__ = ["CompileContext", "Reference", "unrepeated"]


@record(kw_only=False)
class Reference(Record):
    """A name used by a declaration: the source of every graph edge."""

    owner: str
    attr: str  # "model", "tools", "elements", "branches", ...
    target: str
    span: Span
    index: int = 0
    #: One tool of an MCP server (`files.read_text_file` → target "files", member "read_text_file"); None for all.
    member: str | None = None


def unrepeated(references: Iterable[Reference]) -> Iterator[Reference]:
    """The references without an entry listed again in one `tools` (P306 reports it): it offers nothing new,
    and a list of 100,000 copies of one agent would be 100,000 edges and delegates for every later pass."""
    offered: set[tuple[str, str, str | None]] = set()
    for ref in references:
        if ref.attr == "tools":
            key = (ref.owner, ref.target, ref.member)
            if key in offered:
                continue
            offered.add(key)
        yield ref


@dataclass
class CompileContext:
    load: LoadResult
    diagnostics: Findings = field(default_factory=Findings)
    #: "Did you mean" over the spec's own names, within one budget for the whole check.
    hints: Hints = field(default_factory=Hints)
    #: name -> declaration, in declaration order (first wins on duplicates).
    decls: dict[str, Any] = field(default_factory=dict)
    #: name -> its checked, normalised attribute values (defaults filled in), on their way to its kind record.
    values: dict[str, Draft] = field(default_factory=dict)
    #: name -> attribute -> the span of the value as written.
    spans: dict[str, dict[str, Span]] = field(default_factory=dict)
    references: list[Reference] = field(default_factory=list)
    #: chain name -> ids of its inline parallels with their branch idents, in order.
    inline_parallels: dict[str, list[tuple[str, ast.InlineParallel]]] = field(default_factory=dict)
    graph: AgentGraph | None = None
    #: The spec's `input { ... }` and `state { ... }` declarations (the first of each), if written.
    blocks: dict[str, Any] = field(default_factory=dict)
    #: Every runnable's output type (infer_types), and the declared run input and state records.
    types: dict[str, Type] = field(default_factory=dict)
    #: An agent with `handoff`: the type of its own answer (its entry in `types` is the union with its targets').
    answers: dict[str, Type] = field(default_factory=dict)
    input_type: ObjectType | None = None
    state_type: ObjectType | None = None
    #: The `type` declarations (plait 0.3), by name, and each as the type it names (collect_symbols).
    type_decls: dict[str, Any] = field(default_factory=dict)
    named_types: dict[str, Type] = field(default_factory=dict)
    #: The `test` declarations as written (collect_symbols), and their checked records (check_tests).
    tests_written: list[ast.TestDecl] = field(default_factory=list)
    tests: list[Any] = field(default_factory=list)
    #: Set by a pass whose output later passes cannot use.
    stop: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.diagnostics, Findings):  # a plain list from a caller: the same limit applies
            self.diagnostics = Findings(self.diagnostics)

    def draft(self, name: str) -> Draft:
        """The declaration's `Draft`, made empty for its kind on first use."""
        draft = self.values.get(name)
        if draft is None:
            draft = self.values[name] = Draft(KINDS[self.decls[name].kind])
        return draft

    def kind(self, name: str) -> str | None:
        decl = self.decls.get(name)
        return None if decl is None else decl.kind

    @property
    def version(self) -> tuple[int, int]:
        """The entry file's `plait X.Y` line ((0, 1) without one): 0.2 files get the stricter checks."""
        module = self.load.modules[0] if self.load.modules else None
        number = getattr(module, "version", None)
        raw = getattr(number, "raw", None) or "0.1"
        major, _, minor = str(raw).partition(".")
        try:
            return int(major), int(minor or 0)
        except ValueError:
            return 0, 1

    @property
    def strict(self) -> bool:
        return self.version >= (0, 2)

    @property
    def has_errors(self) -> bool:
        return self.diagnostics.has_errors
