"""Loaded modules → the shared state the compiler passes read and extend."""

from __future__ import annotations

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


class CompileContext:
    """What the passes share. A plain class: `@dataclass` wrote its methods with `exec` at every start (~1 ms)."""

    def __init__(self, load: LoadResult, diagnostics: Findings | None = None, hints: Hints | None = None) -> None:
        self.load = load
        # A plain list from a caller gets the same limit.
        self.diagnostics = diagnostics if isinstance(diagnostics, Findings) else Findings(diagnostics or ())
        #: "Did you mean" over the spec's own names, within one budget for the whole check.
        self.hints = Hints() if hints is None else hints
        #: name -> declaration, in declaration order (first wins on duplicates).
        self.decls: dict[str, Any] = {}
        #: name -> its checked, normalised attribute values (defaults filled in), on their way to its kind record.
        self.values: dict[str, Draft] = {}
        #: name -> attribute -> the span of the value as written.
        self.spans: dict[str, dict[str, Span]] = {}
        self.references: list[Reference] = []
        #: chain name -> ids of its inline parallels with their branch idents, in order.
        self.inline_parallels: dict[str, list[tuple[str, ast.InlineParallel]]] = {}
        self.graph: AgentGraph | None = None
        #: The spec's `input { ... }` and `state { ... }` declarations (the first of each), if written.
        self.blocks: dict[str, Any] = {}
        #: Every runnable's output type (infer_types), and the declared run input and state records.
        self.types: dict[str, Type] = {}
        #: An agent with `handoff`: the type of its own answer (its entry in `types` is the union with its targets').
        self.answers: dict[str, Type] = {}
        self.input_type: ObjectType | None = None
        #: Runnable name -> what arrives as its `{{input}}`, one type per distinct place it runs (check_flow).
        self.received: dict[str, list[Type]] = {}
        self.state_type: ObjectType | None = None
        #: The `type` declarations (plait 0.3), by name, and each as the type it names (collect_symbols).
        self.type_decls: dict[str, Any] = {}
        self.named_types: dict[str, Type] = {}
        #: The `test` declarations as written (collect_symbols), and their checked records (check_tests).
        self.tests_written: list[ast.TestDecl] = []
        self.tests: list[Any] = []
        #: Set by a pass whose output later passes cannot use.
        self.stop = False

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
