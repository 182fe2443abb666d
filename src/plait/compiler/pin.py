"""A compiled spec's sources → the pinned form a run records (every file's text, a digest); a pinned form → compiled again.

A run is pinned to the spec it started with: `plait resume` and `plait runs
fork` compare that spec with the one they are given, by meaning (diff.py), so
an edit that changes what the rest of the run promises is never picked up
unnoticed. The pinned form holds every file the spec is made of (its imports
too), named relative to the spec's folder, so it still compiles after the
project moved; the digest is over that form, so two runs of the same text share
one stored copy.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from plait.core.kinds import RUNNABLE_KINDS
from plait.dsl.loader import Reader, load_text, resolve_path

if TYPE_CHECKING:
    from plait.core.source import SourceFile

    from .diff import Change
    from .graph import AgentGraph
    from .pipeline import CompileResult

__all__ = ["affecting", "compile_pinned", "digest_of", "pin_of"]


def pin_of(sources: dict[str, SourceFile], spec: str | Path) -> tuple[str, str]:
    """(digest, pinned form as JSON text) of a compiled spec whose main file is `spec`."""
    main = resolve_path(spec)
    files: dict[str, str] = {}
    for name, source in sources.items():
        path = resolve_path(name)
        try:
            relative = path.relative_to(main.parent).as_posix()
        except ValueError:  # not beside the spec (imports cannot leave its folder): kept as it was named
            relative = name
        files[relative] = source.text
    form = json.dumps(
        {"main": main.name, "files": dict(sorted(files.items()))}, ensure_ascii=False, separators=(",", ":")
    )
    return digest_of(form), form


def digest_of(form: str) -> str:
    """The digest a pinned form is stored under (an export's pin is checked against it on import)."""
    return "sha256:" + hashlib.sha256(form.encode("utf-8", "surrogatepass")).hexdigest()


def compile_pinned(form: str, folder: str | Path) -> CompileResult | None:
    """The pinned spec compiled as if its files were in `folder` (the spec's folder now); None when the form cannot
    be read (not the JSON `pin_of` writes)."""
    from .pipeline import run_passes

    try:
        data = json.loads(form)
        main, files = data["main"], data["files"]
        if not isinstance(main, str) or not isinstance(files, dict) or not isinstance(files.get(main), str):
            return None
    except (ValueError, TypeError, KeyError):
        return None
    root = resolve_path(folder)
    texts = {resolve_path(root / name): text for name, text in files.items() if isinstance(text, str)}
    # Every file from the pinned form, never from the disk: an import edited since must not leak into the old side.
    reader = Reader(overlay=lambda path: texts.get(path, ""))
    return run_passes(load_text(files[main], str(root / main), root, reader))


def affecting(
    changes: list[Change], old: AgentGraph, new: AgentGraph, entry: str, ran: set[str], live: set[str]
) -> list[Change]:
    """The changes that can affect the part of a run not yet run (the rest are harmless to continue under).

    `ran`: the declarations the run's journal shows at work (runnables on its call paths, tools it called, models
    it asked); `live`: the runnables on the paths where it stopped (or a fork starts). A runnable that ran and
    will not run again is finished: its recorded results are replayed whatever its spec now says, so a change to
    one of its attributes cannot reach the rest of the run. Anything else the entry reaches can: an attribute of
    a runnable not yet finished, and any contract change (a finished runnable's recorded output, or a route's
    recorded case, would meet a spec that promises something else), node, edge or entry change. Declarations
    the entry never reaches cannot."""
    reach = _reach(old, {entry}) | _reach(new, {entry})
    again: set[str] = set()
    for name in live:
        for graph in (old, new):
            node = graph.get(name)
            # A loop or map runs its body again; an agent or step its tools and models: all still to run.
            if node is not None and node.kind in ("loop", "map", "agent", "step"):
                again |= _reach(graph, {name})
        again.add(name)
    finished = {name for name in ran if name not in again}
    for graph in (old, new):  # a tool, model or server is finished when every user the entry reaches is
        for node in graph.nodes():
            if node.kind in RUNNABLE_KINDS or node.name not in reach:
                continue
            users = {e.source for e in graph.edges() if e.target == node.name and e.source in reach}
            if node.name not in again and users and users <= finished:
                finished.add(node.name)
    out = []
    for change in changes:
        subject = change.subject.split(" -> ")[0]  # an edge's (or its attribute's) change is its source's
        if change.what != "entry" and subject not in reach:
            continue
        if change.what == "attribute" and subject in finished:
            continue
        out.append(change)
    return out


def _reach(graph: AgentGraph, start: set[str]) -> set[str]:
    seen = {name for name in start if name in graph}
    todo = list(seen)
    while todo:
        for edge in graph.out_edges(todo.pop()):
            if edge.target not in seen:
                seen.add(edge.target)
                todo.append(edge.target)
    return seen
