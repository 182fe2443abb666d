"""A compiled graph + what runs exercised → graph coverage: per entry, which runnables, route cases, loop exits,
map paths, asks, approval outcomes and fallback edges were reached, as a report, JSON, a table and a drawing's marks.

The items an entry can reach come from the graph alone (`coverable`): every
runnable reachable from the entry, each case of each route (`else` included),
each loop's exits (`met`: its `until` held; `exhausted`: it ran out of
iterations; `break`: a route case left it, when one can), each route case that
goes to `break`, each map's two item paths (`done`, `error`), each ask, the three
answers (`approve`, `reject`, `edit`) to each approval-gated tool an agent
uses, and each fallback edge. What was reached is a set of the same item ids,
measured from run records by the runtime (src/plait/runtime/coverage.py); this
module never reads a journal and imports nothing of the runtime, so `plait
render --coverage FILE` draws a saved report without it.

A coverage file (JSON, `"format": "plait-coverage"`, version 1) holds, per
entry, every item with whether it was reached and by how many runs.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable

from plait.core.conditions import literal_text
from plait.core.graph import GraphView
from plait.core.kinds import RUNNABLE_KINDS

__all__ = [
    "COVERAGE_FORMAT",
    "COVERAGE_VERSION",
    "CoverageError",
    "EntryCoverage",
    "Item",
    "Report",
    "coverable",
    "item_id",
]

COVERAGE_FORMAT = "plait-coverage"
COVERAGE_VERSION = 1
#: Item kinds, in report order.
KINDS = ("runnable", "case", "loop", "map", "ask", "approval", "fallback")
#: Edges a run can travel to reach a runnable (data reads and model/tool resources excluded).
_REACH = ("next", "branch", "case", "body", "each", "delegates", "participant", "judge", "uses", "handoff")


class CoverageError(Exception):
    """A coverage file that cannot be read; the message is one line for the user."""


def item_id(kind: str, node: str, outcome: str | None = None) -> str:
    """`case:triage=else`, `loop:refine:met`, `runnable:classify`, `fallback:support->solid`."""
    if kind in ("runnable", "ask"):
        return f"{kind}:{node}"
    if kind == "case":
        return f"case:{node}={outcome}"
    if kind == "fallback":
        return f"fallback:{node}->{outcome}"
    return f"{kind}:{node}:{outcome}"


@dataclass(slots=True)
class Item:
    id: str
    kind: str
    #: The graph node it belongs to (a route, loop, map, ask, agent or runnable).
    node: str
    #: What it is of that node: a case's label, `met`/`exhausted`, `done`/`error`, `tool:approve`, a model.
    detail: str = ""
    #: The edge it draws as, when it is one: (source, target).
    edge: tuple[str, str] | None = None
    runs: int = 0

    @property
    def hit(self) -> bool:
        return self.runs > 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "kind": self.kind, "node": self.node, "detail": self.detail}
        if self.edge is not None:
            out["edge"] = list(self.edge)
        out["runs"] = self.runs
        return out


def coverable(graph: GraphView, entry: str) -> list[Item]:
    """Every item a run of `entry` could exercise, in report order (KINDS, then graph order)."""
    reached = _reachable(graph, entry)
    items: list[Item] = []
    broken = {edge.target for edge in graph.edges("break")}
    for name in reached:
        node = graph.node(name)
        kind = node.kind
        if kind in RUNNABLE_KINDS:
            items.append(Item(item_id("runnable", name), "runnable", name))
        if kind == "route":
            for case in node.cases:  # type: ignore[attr-defined]
                label = literal_text(case.value)
                items.append(Item(item_id("case", name, label), "case", name, label, (name, case.target)))
            if node.otherwise:  # type: ignore[attr-defined]
                items.append(Item(item_id("case", name, "else"), "case", name, "else", (name, node.otherwise)))  # type: ignore[attr-defined]
            for leave in node.breaks:  # type: ignore[attr-defined]
                items.append(Item(item_id("case", name, leave.label), "case", name, leave.label, (name, leave.leaves)))
        elif kind == "loop":
            exits = (("met",) if node.until is not None else ()) + ("exhausted",)  # type: ignore[attr-defined]
            if name in broken:  # a route case can leave it
                exits += ("break",)
            items.extend(Item(item_id("loop", name, e), "loop", name, e) for e in exits)
        elif kind == "map":
            # With a `filter`, an item it skipped is a path of its own.
            paths = ("done", "error", "skipped") if getattr(node, "filter", None) is not None else ("done", "error")
            items.extend(Item(item_id("map", name, p), "map", name, p) for p in paths)
        elif kind == "ask":
            items.append(Item(item_id("ask", name), "ask", name))
    for edge in graph.edges("uses"):
        # Gated by the agent (`approval = [tool]`) or by the tool itself (`approval = required`).
        target = _node(graph, edge.target)
        if getattr(target, "kind", None) == "mcp":
            # An MCP server gates some of its tools (`approval = [write_file]`): each is an item, as SERVER.TOOL.
            gated_tools = [f"{edge.target}.{tool}" for tool in getattr(target, "approval", ())]
        else:
            gated_tools = [edge.target] if edge.approval or getattr(target, "approval", False) else []
        if edge.source not in reached:
            continue
        for tool in gated_tools:
            for action in ("approve", "reject", "edit"):
                detail = f"{tool}:{action}"
                items.append(Item(item_id("approval", edge.source, detail), "approval", edge.source, detail))
    for edge in graph.edges("fallback"):
        if edge.source in reached:
            items.append(
                Item(
                    item_id("fallback", edge.source, edge.target),
                    "fallback",
                    edge.source,
                    edge.target,
                    (edge.source, edge.target),
                )
            )
    order = {k: i for i, k in enumerate(KINDS)}
    items.sort(key=lambda it: order[it.kind])  # stable: graph order within a kind
    return items


def _node(graph: GraphView, name: str) -> Any:
    try:
        return graph.node(name)
    except KeyError:
        return None


def _reachable(graph: GraphView, entry: str) -> list[str]:
    """Nodes a run of `entry` can reach, breadth first (so the report reads from the entry outwards)."""
    out: dict[str, list[str]] = {}
    for edge in graph.edges(*_REACH):
        out.setdefault(edge.source, []).append(edge.target)
    seen = {entry: None}
    queue = deque([entry])
    while queue:
        for target in out.get(queue.popleft(), ()):
            if target not in seen and not target.startswith("@"):
                seen[target] = None
                queue.append(target)
    return list(seen)


@dataclass(slots=True)
class EntryCoverage:
    entry: str
    items: list[Item]
    #: How many runs were measured.
    runs: int = 0

    @property
    def hit(self) -> int:
        return sum(it.hit for it in self.items)

    @property
    def percent(self) -> float:
        return 100.0 * self.hit / len(self.items) if self.items else 100.0

    def missed(self) -> list[Item]:
        return [it for it in self.items if not it.hit]

    def count(self, runs: Iterable[set[str]]) -> None:
        """Add runs, each the set of item ids it exercised."""
        index = {it.id: it for it in self.items}
        for exercised in runs:
            self.runs += 1
            for id in exercised:
                if id in index:
                    index[id].runs += 1


@dataclass(slots=True)
class Report:
    entries: list[EntryCoverage] = field(default_factory=list)
    spec: str | None = None

    @property
    def percent(self) -> float:
        total = sum(len(e.items) for e in self.entries)
        return 100.0 * sum(e.hit for e in self.entries) / total if total else 100.0

    def unreached(self) -> set[str]:
        """Ids of the items no run reached, in any entry."""
        return {it.id for e in self.entries for it in e.items if not it.hit}

    def to_json(self) -> dict[str, Any]:
        return {
            "format": COVERAGE_FORMAT,
            "version": COVERAGE_VERSION,
            "spec": self.spec,
            "percent": round(self.percent, 2),
            "entries": [
                {
                    "entry": e.entry,
                    "runs": e.runs,
                    "percent": round(e.percent, 2),
                    "items": [it.to_json() for it in e.items],
                }
                for e in self.entries
            ],
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, document: Any, source: str = "the coverage file") -> "Report":
        if not isinstance(document, dict) or document.get("format") != COVERAGE_FORMAT:
            raise CoverageError(f'{source} is not a plait coverage report (no "format": "{COVERAGE_FORMAT}")')
        if document.get("version") != COVERAGE_VERSION:
            raise CoverageError(
                f"{source} has version {document.get('version')!r}; this plait reads version {COVERAGE_VERSION}"
            )
        entries = []
        try:
            for e in document["entries"]:
                items = [
                    Item(
                        str(i["id"]),
                        str(i["kind"]),
                        str(i["node"]),
                        str(i.get("detail") or ""),
                        tuple(i["edge"]) if i.get("edge") else None,
                        int(i.get("runs") or 0),
                    )
                    for i in e["items"]
                ]
                entries.append(EntryCoverage(str(e["entry"]), items, int(e.get("runs") or 0)))
        except (KeyError, TypeError, ValueError) as exc:
            raise CoverageError(f"{source} is not a coverage report this plait can read ({exc})") from None
        spec = document.get("spec")
        return cls(entries, spec if isinstance(spec, str) else None)

    @classmethod
    def load(cls, path: str) -> "Report":
        try:
            with open(path, encoding="utf-8") as handle:
                document = json.load(handle)
        except OSError as exc:
            raise CoverageError(f"cannot read coverage file {path}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise CoverageError(f"coverage file {path} is not JSON: {exc}") from None
        return cls.from_json(document, path)
