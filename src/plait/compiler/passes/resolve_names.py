"""Declarations → references: every name a declaration uses, resolved to a declaration of the right kind.

Attribute references (`model`, `tools`, `until`, `agents`, `judge`, ...),
chain elements, parallel branches, and from 0.2 route cases and loop and map
bodies. Each resolved name becomes a `Reference` (the source of every graph
edge), in declaration order and, inside one, in written order; an undefined
or wrong-kind name is reported with a "did you mean".
"""

from __future__ import annotations

from plait.core.codes import declare, make
from plait.core.diagnostics import Label, Severity, did_you_mean
from plait.dsl import ast

from ..context import CompileContext, Reference
from ..schema import RUNNABLE_KINDS, SCHEMAS, Attr, a
from ._blocks import REF_TYPES, body_of, inline_id, settled, wrong_type
from .check_breaks import is_break

# The codes this module raises; their documentation is explain/<code>.md beside it.
P009 = declare(
    "P009", "too-many-references", Severity.ERROR, "a spec that uses declared names more often than a check follows"
)
P101 = declare("P101", "undefined-name", Severity.ERROR, "a reference to a name nothing declares")
P103 = declare("P103", "wrong-kind", Severity.ERROR, "a reference to a declaration of the wrong kind")

__all__ = ["RUNNABLE", "Resolver", "resolve_names"]

#: Names one spec may use (references, each a graph edge), in all its files. Every later pass costs memory and
#: time per reference, and a spec under the 8 MiB size cap can hold 1.6 million (`chain c = a -> a -> ...`: 1.6
#: GB). The densest spec people write holds about 12,000 per megabyte (91,000 at the cap); past this, the check
#: stops after naming (P009).
MAX_REFERENCES = 250_000

#: What a chain element, parallel branch, route case or loop/map body may name, in the order messages list them.
RUNNABLE = tuple(sorted(RUNNABLE_KINDS))


def _either(kinds: tuple[str, ...]) -> str:
    """("tool", "agent", "mcp") → "tool, agent or mcp"."""
    return " or ".join(kinds) if len(kinds) < 3 else ", ".join(kinds[:-1]) + " or " + kinds[-1]


class Resolver:
    def __init__(self, ctx: CompileContext) -> None:
        self.ctx = ctx
        self.report = ctx.diagnostics.append
        self.candidates: dict[tuple[str, ...], list[str]] = {}
        #: References past MAX_REFERENCES: counted, not kept; the first of them.
        self.over = 0
        self.first_over: Reference | None = None

    def resolve(
        self,
        owner: str,
        attr: str,
        ref: ast.Ref | ast.ChainRef | ast.Ident,
        kinds: tuple[str, ...],
        index: int = 0,
        member: str | None = None,
    ) -> str | None:
        """The declaration `ref` names, if it is one of `kinds`, recorded as a reference; else None, reported."""
        name = ref.name
        decl = self.ctx.decls.get(name)
        if decl is None:
            candidates = self.candidates.get(kinds)
            if candidates is None:  # once per kinds: per name, it was a walk of every declaration
                found = [n for n, d in self.ctx.decls.items() if d.kind in kinds] or list(self.ctx.decls)
                candidates = self.candidates[kinds] = found
            hint = self.ctx.hints(name, candidates)
            what = _either(kinds)
            self.report(
                make(
                    "P101",
                    f"undefined name `{name}`",
                    ref.span,
                    notes=[f"`{attr}` takes {a(what)}"],
                    fix=did_you_mean(hint, ref.span),
                )
            )
            return None
        if decl.kind not in kinds:
            self.report(
                make(
                    "P103",
                    f"`{name}` is {a(decl.kind)}, but `{attr}` takes {a(_either(kinds))}",
                    ref.span,
                    labels=[Label(decl.name.span, f"`{name}` is declared here")],
                )
            )
            return None
        self.record(Reference(owner, attr, name, ref.span, index, member))
        return name

    def record(self, reference: Reference) -> None:
        if len(self.ctx.references) < MAX_REFERENCES:
            self.ctx.references.append(reference)
            return
        self.over += 1
        if self.first_over is None:
            self.first_over = reference

    def member(self, owner: str, attr: str, spec: Attr, path: ast.PathValue, index: int = 0) -> str | None:
        """`files.read_text_file`: the MCP server `files` resolved, recorded with its tool; "files.read_text_file"."""
        if len(path.parts) != 2:
            wrong_type(self.report, attr, spec, path)
            return None
        server, tool = path.parts
        name = self.resolve(owner, attr, ast.Ref(span=path.span, name=server), ("mcp",), index, tool)
        return f"{name}.{tool}" if name else None

    def refs(self, owner: str, attr: str, spec: Attr, value: ast.ListValue, kinds: tuple[str, ...]) -> tuple[str, ...]:
        """The names of a list that resolve to one of `kinds`; every other item is reported.

        Where an MCP server may be named, `server.tool` names one of its tools: "server.tool" in the result, except
        in `tools`, which holds each server once (the `uses` edges say which of its tools)."""
        out = []
        for i, item in enumerate(value.items):
            if isinstance(item, ast.PathValue) and "mcp" in kinds:
                name = self.member(owner, attr, spec, item, i)
                if name is not None:
                    out.append(name.partition(".")[0] if attr == "tools" else name)
                continue
            if not isinstance(item, ast.Ref):
                wrong_type(self.report, attr, spec, item)
                continue
            name = self.resolve(owner, attr, item, kinds, i)
            if name is not None:
                out.append(name)
        return tuple(dict.fromkeys(out)) if attr == "tools" else tuple(out)

    def until(self, owner: str, attr: str, spec: Attr, value: ast.Node) -> tuple | None:
        if isinstance(value, ast.Succeeded):
            self.ctx.values[owner]["until_succeeded"] = True
            target = value.target
            if isinstance(target, ast.PathValue):  # `files.write_file succeeded`: a tool of an MCP server
                name = self.member(owner, attr, spec, target)
            else:
                name = self.resolve(owner, attr, target, ("tool", "agent"))
            return (name,) if name else ()
        if isinstance(value, ast.Ref):
            name = self.resolve(owner, attr, value, ("tool", "agent"))
            return (name,) if name else ()
        if isinstance(value, ast.PathValue):
            name = self.member(owner, attr, spec, value)
            return (name,) if name else ()
        if isinstance(value, ast.ListValue):
            # An `until` list names tools; an MCP server is named by one of its tools (`files.write_file`).
            out = []
            for i, item in enumerate(value.items):
                if isinstance(item, ast.PathValue):
                    name = self.member(owner, attr, spec, item, i)
                elif isinstance(item, ast.Ref):
                    name = self.resolve(owner, attr, item, ("tool", "agent"), i)
                else:
                    wrong_type(self.report, attr, spec, item)
                    continue
                if name is not None:
                    out.append(name)
            return tuple(out)
        wrong_type(self.report, attr, spec, value)
        return None

    def attribute(self, owner: str, attr: str, spec: Attr, value: ast.Node) -> object:
        if spec.type == "ref":
            if not isinstance(value, ast.Ref):
                wrong_type(self.report, attr, spec, value)
                return None
            return self.resolve(owner, attr, value, spec.kinds)
        if spec.type == "refs":
            if not isinstance(value, ast.ListValue):
                wrong_type(self.report, attr, spec, value)
                return None
            return self.refs(owner, attr, spec, value, spec.kinds)
        return self.until(owner, attr, spec, value)

    def elements(self, owner: str, attr: str, elements: tuple[ast.ChainElement, ...]) -> None:
        """A chain's elements, a loop's or map's body: names, and inline parallels with their branches."""
        count = 0
        for i, element in enumerate(elements):
            if isinstance(element, ast.InlineParallel):
                count += 1
                pid = inline_id(owner, count)
                for j, branch in enumerate(element.branches):
                    self.resolve(pid, "branches", branch, RUNNABLE, j)
                self.record(Reference(owner, attr, pid, element.span, i))
            else:
                self.resolve(owner, attr, element, RUNNABLE, i)


def resolve_names(ctx: CompileContext) -> None:
    resolver = Resolver(ctx)
    for name, decl in ctx.decls.items():
        kind = decl.kind
        values = ctx.draft(name)
        schema = SCHEMAS.get(kind, {})
        for entry in settled(body_of(decl), schema):
            spec = schema[entry.key.name]
            if spec.type in REF_TYPES:
                values[entry.key.name] = resolver.attribute(name, entry.key.name, spec, entry.value)
        if isinstance(decl, ast.ChainDecl):
            resolver.elements(name, "elements", decl.elements)
        elif isinstance(decl, ast.ParallelDecl):
            for i, item in enumerate(decl.branches.items):
                if isinstance(item, ast.Ref):  # anything else is check_chains' to report
                    resolver.resolve(name, "branches", item, RUNNABLE, i)
        elif isinstance(decl, ast.RouteDecl):
            for i, case in enumerate(decl.cases):
                if not is_break(case, ctx.decls):
                    resolver.resolve(name, "cases", case.target, RUNNABLE, i)
                elif case.loop is not None:  # `-> break outer`: which loops enclose it is check_breaks'
                    resolver.resolve(name, "breaks", case.loop, ("loop",), i)
        elif isinstance(decl, ast.LoopDecl | ast.MapDecl):
            resolver.elements(name, "body", decl.body)
    if resolver.first_over is not None:
        total = MAX_REFERENCES + resolver.over
        ctx.diagnostics.append(
            make(
                "P009",
                f"the spec uses declared names {total:,} times; plait checks at most {MAX_REFERENCES:,}",
                resolver.first_over.span,
                notes=[
                    "this is the first use past the limit; the graph and every check after naming were skipped",
                    "a spec this size is generated: split it into several, or generate fewer repeats",
                ],
            )
        )
        ctx.stop = True
