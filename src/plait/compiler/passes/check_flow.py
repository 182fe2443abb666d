"""Output types and every place each runnable runs → diagnostics for what flows there.

Each `{{...}}` path of a runnable's templates, each route subject and each
map `over` is checked at every instance (a runnable used in two places is
checked in both, against what really arrives there): fields a producer does
not declare, `state` keys, `loop...`/`map...` outside a body, and `{{NAME}}`
reads that NAME does not dominate. Routes are checked for exhaustiveness,
unknown and duplicate cases; loops for a bound and a well-typed `until`.
Malformed placeholders and tool templates are the unresolved_template rule's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Iterator

from plait.core import types as t
from plait.core.codes import declare, make
from plait.core.diagnostics import Diagnostic, Fix, Label, Severity, did_you_mean
from plait.core.source import SourceFile, Span
from plait.dsl import ast

from ..bindings import record_of
from ..context import CompileContext
from ..flow import Instance, RunGraph, tool_params, walk
from ..paths import WITH_PREFIX, Resolved, cases_without, describe_use, resolve, show
from ..rules._placeholders import Placeholder, placeholders
from ..rules.python_module import code_step_inputs, function_of
from ..schema import TEMPLATES, suggest
from ._blocks import path_parts
from .infer_types import members
from ..draft import NOTHING

if TYPE_CHECKING:
    from ..expressions import Finding
    import ast as pyast

# The codes this module raises; their documentation is explain/<code>.md beside it.
P308 = declare(
    "P308", "route-subject-type", Severity.ERROR, "a route on a value no case list can cover, without `else`"
)
P309 = declare("P309", "route-unknown-case", Severity.ERROR, "a route case that is not a value of the subject's type")
P310 = declare("P310", "route-uncovered", Severity.ERROR, "a value of a route's subject no case covers, without `else`")
P311 = declare("P311", "route-duplicate-case", Severity.ERROR, "two cases of one route for the same value")
P312 = declare("P312", "loop-unbounded", Severity.ERROR, "a loop without `max_iterations`")
P313 = declare(
    "P313", "ill-typed-condition", Severity.ERROR, "a loop `until` reading a missing field or comparing the wrong types"
)
P314 = declare("P314", "map-over-not-list", Severity.ERROR, "a map `over` a path that is not a list")
P316 = declare(
    "P316", "read-before-finished", Severity.ERROR, "a `{{NAME}}` read where NAME has not finished on every path"
)
P320 = declare("P320", "unused-binding", Severity.WARNING, "a `with` binding the runnable's templates never read")

__all__ = ["check_flow"]


def binding_entries(decl: ast.Node) -> list[ast.Attribute]:
    """The `name: path` entries of a declaration's `with` (the first one: P205 reports another)."""
    body = getattr(decl, "block", None) if isinstance(decl, ast.AskDecl) else getattr(decl, "body", None)
    entry = body.get("with") if isinstance(body, ast.Block) else None
    if entry is None or not isinstance(entry.value, ast.Block):
        return []
    seen: set[str] = set()
    found = []
    for binding in entry.value.attributes:
        if binding.key.name not in seen:
            seen.add(binding.key.name)
            found.append(binding)
    return found


def _unbraced(d: Diagnostic, path: str) -> Diagnostic:
    """A finding about `{{path}}` worded for a path written bare (`with { plan: planner.tasks }`)."""
    return replace(d, message=d.message.replace(f"`{{{{{path}}}}}`", f"`{path}`"))


def template_strings(decl: ast.Node) -> list[ast.String]:
    """The strings of a declaration whose placeholders read other steps' results (also what the editor indexes)."""
    if isinstance(decl, ast.AskDecl):
        return [decl.question]
    if not isinstance(decl, ast.StepDecl | ast.AgentDecl | ast.ConsolidateDecl):
        return []
    found = []
    for key in TEMPLATES[decl.kind]:
        entry = decl.body.get(key)
        if entry is not None and isinstance(entry.value, ast.String):
            found.append(entry.value)
    if isinstance(decl, ast.StepDecl) and decl.body.get("messages") is not None:
        from ..messages import message_strings

        found.extend(message_strings(decl))
    return found


def _declared_here(typed: t.Type, what: str) -> list[Label]:
    """A label at the declaration of a type that keeps one (a literal union, an object), else none."""
    span = typed.span if isinstance(typed, t.LiteralType | t.ObjectType) else None
    return [Label(span, f"{what} is declared here")] if span else []


def _literal_text(value: object) -> str:
    return t.describe(t.LiteralType((value,))) if isinstance(value, str | int | float | bool) else str(value)


def _fits(value: object, typed: t.Type) -> bool:
    """Whether a case literal can equal a value of `typed` (a number, text, ...); a record or list never can."""
    if isinstance(typed, t.TextType):
        return isinstance(value, str)
    if isinstance(typed, t.DateType | t.DateTimeType):  # a date is text in ISO 8601 (plait 0.3)
        return isinstance(value, str) and t.is_iso(typed.kind, value)
    if isinstance(typed, t.IntType):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(typed, t.FloatType):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(typed, t.LiteralType):
        return any(value == v and type(value) is type(v) for v in typed.values)
    if isinstance(typed, t.UnionType):
        return any(_fits(value, o) for o in typed.options)
    return False


class _Flow:
    def __init__(self, ctx: CompileContext) -> None:
        self.ctx = ctx
        self.seen: set[tuple[Span, str]] = set()
        self.reads: list[tuple[Instance, str, str, Span | Placeholder]] = []
        self.functions: dict[str, pyast.FunctionDef | pyast.AsyncFunctionDef | None] = {}
        #: (code, message) -> [index of its first diagnostic in ctx.diagnostics, how many more were left out].
        self.same: dict[tuple[str, str], list[int]] = {}
        #: (instance id, parts, path, where) -> a resolution that failed without span-bound labels or fix.
        self.failed: dict[tuple[int, tuple[str, ...], str, str | None], Resolved] = {}

    def emit(self, d: Diagnostic | None) -> None:
        # One placeholder may fail the same way at several uses: say it once.
        if d is None or (d.span, d.message) in self.seen:
            return
        self.seen.add((d.span, d.message))
        # The same finding at many places (a prompt with 600,000 `{{a}}`) is shown once, with a count: one
        # diagnostic each would cost minutes to render and tell the reader nothing more.
        same = self.same.get((d.code, d.message))
        if same is not None:
            same[1] += 1
            return
        index = len(self.ctx.diagnostics)
        self.ctx.diagnostics.append(d)
        if len(self.ctx.diagnostics) > index:  # else past the cap: counted there, and no note to add
            self.same[(d.code, d.message)] = [index, 0]

    def finish(self) -> None:
        """Add "and N more" to each finding that was left out at other places."""
        for index, more in self.same.values():
            if more:
                d = self.ctx.diagnostics[index]
                note = f"and {more} more like this ({more + 1} in all); fix one, the others are the same"
                self.ctx.diagnostics[index] = replace(d, notes=(*d.notes, note))

    def path(
        self,
        inst: Instance,
        parts: tuple[str, ...],
        span: Span | Placeholder,
        path: str,
        where: str | None = None,
        bare: bool = False,
    ) -> Resolved:
        """Resolve a path; a placeholder's span is worked out only when a finding needs it (it rescans the source).

        `bare`: the path is written without braces (a `with` binding), and its findings name it so."""
        key = (inst.id, parts, path, where)
        failed = self.failed.get(key)
        if failed is not None and failed.problem is not None:
            # The same path failed at this instance before: the finding differs only in where it is written.
            self.emit(replace(failed.problem, span=span if isinstance(span, Span) else span.span))
            return failed
        found = resolve(self.ctx, inst, parts, span if isinstance(span, Span) else None, path, where)
        if found.problem is not None and not isinstance(span, Span):
            span = span.span
            found = resolve(self.ctx, inst, parts, span, path, where)
        if found.problem is not None and not found.problem.labels and found.problem.fix is None:
            self.failed[key] = found
        if bare and found.problem is not None:
            found = replace(found, problem=_unbraced(found.problem, path))
        self.emit(found.problem)
        if found.reads is not None and found.problem is None:
            self.reads.append((inst, found.reads, path if bare else f"{{{{{path}}}}}", span))
        return found

    # --- per instance ---------------------------------------------------------------

    def templates(self, inst: Instance, strings: list[ast.String]) -> None:
        sources = self.ctx.load.sources
        for string in strings:
            for p in placeholders(string, sources):
                if p.problem == "expression":
                    self.expression(inst, p)
                if p.problem is not None or p.path == "input":
                    continue
                self.path(inst, tuple(p.parts), p, p.path)

    def expression(self, inst: Instance, p: Placeholder, syntax: bool = False) -> t.Type | None:
        """Type an expression at `inst`: its paths as plain paths are, then what is built on them (P404)."""
        from ..expressions import check
        from ..rules.literal_secret import looks_secret_in

        if looks_secret_in(p.path, p.string.span, p.sources):
            return None  # the template rule reports it, masked

        def read(parts: tuple[str, ...], start: int, end: int) -> t.Type | None:
            if parts == ("input",):
                return inst.input
            return self.path(inst, parts, p.part(start, end), ".".join(parts)).type

        typed, findings = check(p.path, read)
        for f in findings:
            if syntax or f.code != "P403":  # in a template the template rule reports a syntax error, once
                self.emit(_finding(p, f))
        return typed

    def subject_expression(self, inst: Instance, decl: ast.RouteDecl, subject: ast.String) -> t.Type | None:
        """A route's subject written as one expression: typed where the route runs (P403 here: no template
        rule reads a subject); None when it is not one, or does not parse."""
        from ..expressions import sole

        found = _typable(subject, self.ctx.load.sources)
        if sole(subject.value) is None or len(found) != 1:
            self.emit(
                make(
                    "P308",
                    f"route `{decl.name.name}` switches on a string: a subject is a path or one `{{{{ expression }}}}`",
                    subject.span,
                    fix=Fix('write the subject as `"{{ EXPRESSION }}"`, e.g. `on "{{ len(input.docs) > 0 }}"`'),
                )
            )
            return None
        p = found[0]
        if p.problem is None:  # `on "{{input.kind}}"`: a path in braces, read as the path
            return self.path(inst, tuple(p.parts), p, p.path, where=f"in route `{decl.name.name}`").type
        return self.expression(inst, p, syntax=True)

    def bound_expression(self, inst: Instance, value: ast.String) -> t.Type | None:
        """A `with` value written as one expression, typed where the runnable runs (check_types refused any other
        string); a path in braces reads as the path."""
        found = _typable(value, self.ctx.load.sources)
        if len(found) != 1:
            return None
        p = found[0]
        if p.problem is None:
            return self.path(inst, tuple(p.parts), p, p.path, where=f"in the `with` of `{inst.name}`").type
        return self.expression(inst, p, syntax=True)

    def route(self, inst: Instance, decl: ast.RouteDecl) -> None:
        subject = decl.subject
        if isinstance(subject, ast.String):  # `on "{{ len(docs) > 0 }}"`: the expression's type is the subject's
            path = " ".join(subject.value.split())
            typed_subject = self.subject_expression(inst, decl, subject)
        else:
            parts = tuple(subject.parts)
            path = ".".join(parts)
            where = f"in route `{decl.name.name}`"  # written bare (`on input.category`): named as written
            typed_subject = self.path(inst, parts, subject.span, path, where=where, bare=True).type
        if typed_subject is None:
            return
        typed = t.strip_optional(typed_subject)
        otherwise = next((c for c in decl.cases if c.literal is None), None)
        if isinstance(typed, t.LiteralType):
            values: tuple | None = typed.values
        elif isinstance(typed, t.BoolType):
            values = (True, False)
        else:
            values = None
        declared = _declared_here(typed, f"`{path}`")
        if values is None:
            self.case_types(decl, typed, path, declared)
            if otherwise is None and not isinstance(typed, t.AnyType):
                self.emit(
                    make(
                        "P308",
                        f"route `{decl.name.name}` switches on `{path}`, which is `{t.describe(typed)}`:"
                        " without `else` no case list can cover it",
                        subject.span,
                        labels=declared + self.placed(inst),
                        notes=[
                            'a route\'s subject is a literal union (`"a" | "b"`) or `bool`, or any type with `else`'
                        ],
                        fix=Fix("add `else -> RUNNABLE`, or declare the field as a literal union in its `output`"),
                    )
                )
            return
        covered: list = []
        for case in decl.cases:
            if case.literal is None:
                continue
            value = case.literal.value
            if not any(value == v and type(value) is type(v) for v in values):
                hint = suggest(str(value), [str(v) for v in values])
                shown = ", ".join(_literal_text(v) for v in values)
                self.emit(
                    make(
                        "P309",
                        f"case {_literal_text(value)} is not a value of `{path}`",
                        case.literal.span,
                        labels=declared,
                        notes=[f"`{path}` is one of {shown}"],
                        fix=_literal_hint(hint, case.literal.span),
                    )
                )
            covered.append(value)
        missing = [v for v in values if not any(v == c and type(v) is type(c) for c in covered)]
        if missing and otherwise is None:
            listed = ", ".join(_literal_text(v) for v in missing)
            self.emit(
                make(
                    "P310",
                    f"route `{decl.name.name}` has no case for {listed}",
                    decl.name.span,
                    labels=declared,
                    notes=[f"every value of `{path}` needs a case when there is no `else`"],
                    fix=Fix(f"add `{_literal_text(missing[0])} -> RUNNABLE` for each, or `else -> RUNNABLE`"),
                )
            )

    def case_types(self, decl: ast.RouteDecl, typed: t.Type, path: str, declared: list[Label]) -> None:
        """P309 for a case whose literal can never equal a subject of an open type (`1` on a `string`)."""
        if isinstance(typed, t.AnyType):
            return
        for case in decl.cases:
            if case.literal is None:
                continue
            value = case.literal.value
            if _fits(value, typed):
                continue
            shown = t.describe(typed)
            self.emit(
                make(
                    "P309",
                    f"case {_literal_text(value)} is not a value of `{path}`, which is `{shown}`",
                    case.literal.span,
                    labels=declared,
                    notes=[f"a case on a `{shown}` subject is a `{shown}` literal"],
                    fix=Fix(f"write the case as a `{shown}` literal, or route on another field"),
                )
            )

    def bindings(self, inst: Instance, entries: list[ast.Attribute]) -> t.ObjectType:
        """Each `with` path resolved where `inst` runs (the rules of `{{...}}`: fields, dominance, scopes) → the
        record the runnable receives; a path that does not resolve is reported and typed `any`."""
        fields: dict[str, t.Type] = {}
        for entry in entries:
            if isinstance(entry.value, ast.String):  # `n: "{{ len(plan.tasks) }}"`: typed as a route subject is
                fields[entry.key.name] = self.bound_expression(inst, entry.value) or t.ANY
                continue
            parts = path_parts(entry.value)
            if parts is None:
                continue  # not a path: check_types said so
            path = ".".join(parts)
            found = self.path(inst, parts, entry.value.span, path, where=f"in the `with` of `{inst.name}`", bare=True)
            fields[entry.key.name] = found.type if found.type is not None else t.ANY
        return record_of(fields)

    def placed(self, inst: Instance) -> list[Label]:
        return [Label(inst.span, describe_use(self.ctx, inst.note))] if inst.span is not None and inst.note else []

    def map(self, inst: Instance, decl: ast.MapDecl) -> None:
        entry = decl.block.get("over")
        over = self.ctx.values.get(decl.name.name, NOTHING).get("over")
        if entry is None or not over:
            return
        path = ".".join(over)
        found = self.path(inst, tuple(over), entry.value.span, path, where=f"in map `{decl.name.name}`")
        if found.type is None:
            return
        typed = t.strip_optional(found.type)
        if not isinstance(typed, t.ListType | t.AnyType):
            declared = _declared_here(typed, f"`{path}`")
            self.emit(
                make(
                    "P314",
                    f"map `{decl.name.name}` runs over `{path}`, which is `{t.describe(typed)}`, not a list",
                    entry.value.span,
                    labels=declared + self.placed(inst),
                    notes=["`over` names a `list[T]`: the body runs once per item"],
                    fix=Fix("point `over` at a list field, e.g. one declared `sections: list[string]`"),
                )
            )
            return
        kept = decl.block.get("filter")
        if kept is not None:  # typed against the item, read bare as `until` reads the body's output
            item = typed.item if isinstance(typed, t.ListType) else t.ANY
            whose = f"an item of `{path}`"
            Condition(self, decl.name.name, item, set(), word="filter", whose=whose).check(kept.value)

    def code_step(self, inst: Instance, decl: ast.StepDecl) -> None:
        """P319 where a code step's function hints disagree with what arrives (a record's fields, or `input`)."""
        run = self.ctx.values[inst.name]["run"]
        if run.get("type") != "python":
            return
        cache = self.functions
        if inst.name not in cache:
            cache[inst.name] = function_of(self.ctx, run)
        fn = cache[inst.name]
        if fn is None:
            return  # not a file in the spec's folders: python_module reports what it can
        arrived = t.strip_optional(inst.input)
        if isinstance(arrived, t.AnyType):
            return
        if isinstance(arrived, t.ObjectType):
            fields = {f.name: not f.optional for f in arrived.fields}
        else:
            fields = {"input": True}
        entry = decl.body.get("run")
        value = entry.value if entry is not None else None
        span = value.args[0].span if isinstance(value, ast.Call) and value.args else decl.name.span
        for problem in code_step_inputs(fn, fields):
            self.emit(
                make(
                    "P319",
                    f"code step `{inst.name}` calls `{run['target']}` wrongly: {problem}",
                    span,
                    labels=self.placed(inst),
                    notes=["a code step gets a record's fields as keyword arguments, text as `input`"],
                    fix=Fix("make the function's parameters match the fields that arrive"),
                )
            )

    # --- per declaration --------------------------------------------------------------

    def duplicate_cases(self, decl: ast.RouteDecl) -> None:
        first: dict[object, ast.RouteCase] = {}
        for case in decl.cases:
            key = ("else",) if case.literal is None else (type(case.literal.value), case.literal.value)
            if key in first:
                shown = "`else`" if case.literal is None else _literal_text(case.literal.value)
                where = case.literal.span if case.literal is not None else case.target.span
                self.emit(
                    make(
                        "P311",
                        f"route `{decl.name.name}` has two cases for {shown}",
                        where,
                        labels=[Label(first[key].span, "first case here")],
                        fix=Fix("remove one; a route runs exactly one case"),
                    )
                )
            else:
                first[key] = case

    def unused_bindings(self, decl: ast.StepDecl | ast.AgentDecl | ast.AskDecl, entries: list[ast.Attribute]) -> None:
        """P320: a binding that a runnable which reads its input through templates never reads.

        A code step gets every binding as an argument (P319 checks them), a record builder returns them all, and
        an agent without `prompt` sends the whole record; the others read what they use by `{{input.NAME}}`."""
        name = decl.name.name
        values = self.ctx.values.get(name, NOTHING)
        if isinstance(decl, ast.StepDecl) and (values.get("run") is not None or values.get("model") is None):
            return
        if isinstance(decl, ast.AgentDecl) and "prompt" not in self.ctx.spans.get(name, {}):
            return
        used: set[str] = set()
        for string in template_strings(decl):
            for p in placeholders(string, self.ctx.load.sources):
                if p.problem == "expression":  # `{{ len(input.tasks) }}` reads `tasks` too
                    from ..expressions import reads

                    read = reads(p.path)
                else:
                    read = [tuple(p.parts)] if p.problem is None else []
                for parts in read:
                    if parts[0] != "input":
                        continue
                    if len(parts) == 1:
                        return  # `{{input}}`: the whole record, every binding with it
                    used.add(parts[1])
        for entry in entries:
            field = entry.key.name
            if field not in used:
                self.emit(
                    make(
                        "P320",
                        f"`with` binds `{field}`, which {decl.kind} `{name}` never reads",
                        entry.key.span,
                        notes=[
                            f"what `with` binds is `{name}`'s input: its templates read it as `{{{{input.{field}}}}}`"
                        ],
                        fix=Fix(f"read it as `{{{{input.{field}}}}}`, or remove the binding"),
                    )
                )

    def loop(self, decl: ast.LoopDecl) -> None:
        name = decl.name.name
        if decl.block.get("max_iterations") is None:
            self.emit(
                make(
                    "P312",
                    f"loop `{name}` has no `max_iterations`",
                    decl.name.span,
                    notes=["a loop must stop even when `until` never holds"],
                    fix=Fix("add `max_iterations = 3` (any whole number of rounds) to the loop"),
                )
            )
        entry = decl.block.get("until")
        if entry is not None:
            Condition(self, name, self.ctx.types.get(name, t.ANY), _inside(self.ctx, name)).check(entry.value)

    def approval(self, decl: ast.ToolDecl) -> None:
        """A tool's conditional `approval` typed against its `params` (P313): it reads the call's arguments bare."""
        entry = decl.body.get("approval")
        conditions = ast.Compare | ast.BoolOp | ast.Not | ast.String | ast.PathValue
        if entry is None or not isinstance(entry.value, conditions):
            return
        name = decl.name.name
        arguments = tool_params(self.ctx, name)
        whose = f"the `params` of tool `{name}`"
        Condition(self, name, arguments, set(), word="approval", whose=whose).check(entry.value)

    def mcp_approval(self, decl: ast.McpDecl) -> None:
        """An MCP server's conditional `approval` typed against each tool's locked input schema (P313); without a
        fresh lock entry there is no schema to check it against, and the lock's own warning says so (P332/P333)."""
        name = decl.name.name
        values = self.ctx.values.get(name, NOTHING)
        entry = decl.body.get("approval")
        if not values.get("approval_when") or entry is None or not isinstance(entry.value, ast.Block):
            return
        from ..schema_types import from_json_schema

        schemas = {tool["name"]: tool.get("input_schema") for tool in values.get("offered") or ()}
        for rule in entry.value.attributes:
            tool = rule.key.name
            if tool in values["approval_when"] and tool in schemas:
                whose = f"the arguments of `{tool}` (mcp `{name}`'s lock)"
                arguments = from_json_schema(schemas[tool])
                Condition(self, name, arguments, set(), word="approval", whose=whose).check(rule.value)


def _inside(ctx: CompileContext, name: str) -> set[str]:
    """Every runnable a loop's body runs (recursively): the names `until` may read."""
    found: set[str] = set()
    stack = list(members(ctx, name))
    while stack:
        node = stack.pop()
        if node not in found:
            found.add(node)
            stack.extend(members(ctx, node))
    return found


class Condition:
    """A loop's `until` typed against its body's output (P313); with `word` and `whose`, a map's `filter` against
    its item, or a tool's `approval` against its arguments."""

    def __init__(
        self, flow: _Flow, loop: str, body: t.Type, inside: set[str], word: str = "until", whose: str | None = None
    ) -> None:
        self.flow, self.loop, self.body, self.inside = flow, loop, body, inside
        self.word = word
        self.whose = whose or f"the output of loop `{loop}`'s body"

    def bad(self, message: str, span: Span, **extra) -> None:
        self.flow.emit(make("P313", message, span, **extra))

    def operand(self, node: ast.Node) -> tuple[str, t.Type] | None:
        """The path an operand reads and its type; None (reported) when it does not resolve."""
        parts = path_parts(node)
        if parts is None:
            self.bad(f"a condition compares a field of {self.whose}: write the field first", node.span)
            return None
        path = ".".join(parts)
        if parts[0] in self.inside and self.flow.ctx.kind(parts[0]) is not None:
            base, rest, whose = self.flow.ctx.types.get(parts[0], t.ANY), parts[1:], f"`{parts[0]}`'s output"
            producer = parts[0]
        else:
            base, rest, whose = self.body, parts, self.whose
            producer = self.loop
        current: t.Type = base
        for part in rest:
            bare = t.strip_optional(current)
            found = t.step(bare, part)
            if found is None:
                names = t.field_names(bare)
                hint = suggest(part, names)
                labels = _declared_here(bare, whose)
                listed = ", ".join(f"`{n}`" for n in names) or "none"
                cases = cases_without(self.flow.ctx, producer, part) if current is base else None
                if isinstance(bare, t.TextType):
                    note = f"{whose} is text: declare an `output` with the fields `{self.word}` reads"
                elif isinstance(bare, t.UnionType) and cases:
                    labels = cases[1]
                    note = (
                        f"{whose} is the output of the case of route `{cases[0]}` that ran, so `{self.word}` reads only"
                        f" the fields common to all its cases: {listed}"
                    )
                else:
                    note = f"its fields are {listed}"
                self.bad(
                    f"`{self.word}` reads `{path}`, which {whose} does not have",
                    node.span,
                    labels=labels,
                    notes=[note],
                    fix=did_you_mean(hint, node.span, path.replace(part, hint, 1)) if hint else None,
                )
                return None
            current = found
        return path, current

    def check(self, node: ast.Node) -> None:
        if isinstance(node, ast.BoolOp):
            for operand in node.operands:
                self.check(operand)
        elif isinstance(node, ast.Not):
            self.check(node.operand)
        elif isinstance(node, ast.Compare):
            self.compare(node)
        elif isinstance(node, ast.String):
            self.expression(node)
        else:
            found = self.operand(node)
            if found is None:
                return
            path, typed = found
            if not isinstance(t.strip_optional(typed), t.BoolType | t.AnyType):
                self.bad(
                    f"`{path}` is `{t.describe(typed)}`, not `bool`: compare it to a value",
                    node.span,
                    fix=Fix(f"write `{path} == VALUE`"),
                )

    def expression(self, node: ast.String) -> None:
        """`until = "{{ EXPR }}"`: its paths read as an operand's do (the body's fields, runnables inside it)."""
        from ..expressions import check, sole

        found = _typable(node, self.flow.ctx.load.sources)
        if sole(node.value) is None or len(found) != 1:
            self.bad(
                f'a `{self.word}` written as a string is one expression: `"{{{{ ... }}}}"`',
                node.span,
                fix=Fix("write the condition inside `{{ }}`, e.g. `until = \"{{ 'APPROVED' in review.reply }}\"`"),
            )
            return
        p = found[0]

        def read(parts: tuple[str, ...], start: int, end: int) -> t.Type | None:
            resolved = self.operand(ast.PathValue(parts=parts, span=p.part(start, end)))
            return None if resolved is None else resolved[1]

        typed, findings = check(p.path, read)
        for f in findings:
            self.flow.emit(_finding(p, f))
        if typed is not None and not isinstance(t.strip_optional(typed), t.BoolType | t.AnyType):
            self.bad(
                f"`{self.word}` is `{t.describe(typed)}`, not `bool`: it must be true or false",
                p.span,
                fix=Fix("compare it: `len(docs) == 0`, `'APPROVED' in reply`"),
            )

    def compare(self, node: ast.Compare) -> None:
        found = self.operand(node.left)
        if found is None:
            return
        path, typed = found
        bare = t.strip_optional(typed)
        right = node.right
        if not isinstance(right, ast.String | ast.Number | ast.Bool):
            self.bad(
                f"`{path}` is compared with a value written in the spec: a string, number or `true`/`false`", right.span
            )
            return
        value = right.value
        if isinstance(bare, t.AnyType):
            return
        if node.op in ("<", "<=", ">", ">="):
            if not t.is_numeric(bare) or not isinstance(value, int | float) or isinstance(value, bool):
                self.bad(
                    f"`{path} {node.op} {_literal_text(value)}` compares `{t.describe(bare)}` by order;"
                    " only numbers have one",
                    node.span,
                    fix=Fix("use `==` or `!=`, or compare a number field"),
                )
            return
        if isinstance(bare, t.LiteralType):
            if not any(value == v and type(value) is type(v) for v in bare.values):
                hint = suggest(str(value), [str(v) for v in bare.values])
                shown = ", ".join(_literal_text(v) for v in bare.values)
                labels = [Label(bare.span, f"`{path}` is declared here")] if bare.span is not None else []
                self.bad(
                    f"{_literal_text(value)} is not a value of `{path}`",
                    right.span,
                    labels=labels,
                    notes=[f"`{path}` is one of {shown}"],
                    fix=_literal_hint(hint, right.span),
                )
            return
        if not t.matches(bare, value):
            self.bad(f"`{path}` is `{t.describe(bare)}`, so it never equals {_literal_text(value)}", node.span)


def _typable(string: ast.String, sources: dict[str, SourceFile]) -> list[Placeholder]:
    """A string's placeholders that are a path or an expression: one of them is a subject, condition or binding."""
    return [p for p in placeholders(string, sources) if p.problem in (None, "expression")]


def _finding(p: Placeholder, f: Finding) -> Diagnostic:
    """An expression's finding, placed inside the placeholder it is in."""
    return make(f.code, f.message, p.part(f.start, f.end), notes=f.notes, fix=Fix(f.fix) if f.fix else None)


#: Distinct input types kept per runnable for the editor (a runnable reused in many places: the first few).
_RECEIVED = 8


def _literal_hint(hint: Any, span: Span) -> Fix | None:
    """A near-miss case value, written as the literal it is (`"billing"`, `3`)."""
    return did_you_mean(_literal_text(hint), span, shown=_literal_text(hint)) if hint is not None else None


def _instances(ctx: CompileContext, run: RunGraph) -> Iterator[Instance]:
    return walk(ctx, run)


def check_flow(ctx: CompileContext) -> None:
    flow = _Flow(ctx)
    strings: dict[str, list[ast.String]] = {}
    withs: dict[str, list[ast.Attribute]] = {}
    run = RunGraph()
    for inst in _instances(ctx, run):
        decl = ctx.decls.get(inst.name)
        if decl is None:
            continue
        bound = withs.get(inst.name)
        if bound is None:
            bound = withs[inst.name] = binding_entries(decl)
        if bound:
            # What the runnable's own templates and code see is the record its `with` binds here.
            inst = replace(inst, input=flow.bindings(inst, bound), producer=WITH_PREFIX + inst.name)
        received = ctx.received.setdefault(inst.name, [])
        if len(received) < _RECEIVED and inst.input not in received:
            received.append(inst.input)
        found = strings.get(inst.name)
        if found is None:
            found = strings[inst.name] = template_strings(decl)
        if found:
            flow.templates(inst, found)
        if isinstance(decl, ast.RouteDecl):
            flow.route(inst, decl)
        elif isinstance(decl, ast.MapDecl):
            flow.map(inst, decl)
        elif isinstance(decl, ast.StepDecl) and isinstance(ctx.values.get(inst.name, NOTHING).get("run"), dict):
            flow.code_step(inst, decl)
    for decl in ctx.decls.values():
        bound = withs.get(decl.name.name)
        if bound and isinstance(decl, ast.StepDecl | ast.AgentDecl | ast.AskDecl):
            flow.unused_bindings(decl, bound)
        if isinstance(decl, ast.RouteDecl):
            flow.duplicate_cases(decl)
        elif isinstance(decl, ast.LoopDecl):
            flow.loop(decl)
        elif isinstance(decl, ast.ToolDecl):
            flow.approval(decl)
        elif isinstance(decl, ast.McpDecl):
            flow.mcp_approval(decl)
    for inst, name, path, where in flow.reads:
        if not run.dominated(name, inst):
            span = where if isinstance(where, Span) else where.span
            target = ctx.decls[name]
            labels = [Label(target.name.span, f"`{name}` is declared here")]
            labels += [Label(inst.span, describe_use(ctx, inst.note))] if inst.span is not None and inst.note else []
            reader = show(ctx, inst.name)
            flow.emit(
                make(
                    "P316",
                    f"`{path}` reads `{name}`, which has not finished on every path to `{reader}`",
                    span,
                    labels=labels,
                    notes=[f"`{name}` must run (and finish) before `{reader}` wherever `{reader}` runs"],
                    fix=Fix(
                        f"place `{name}` before `{reader}` in the chain, or pass what it needs through `{{{{input}}}}`"
                    ),
                )
            )
    flow.finish()
