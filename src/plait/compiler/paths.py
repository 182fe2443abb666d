"""A dotted path read at one instance → its type, or the diagnostic that says why it does not resolve.

What a path may start with at a runnable (LANGUAGE.md, "Paths"): `input...`
(what arrives), `run.input...` (the run's input), `state...`, `NAME...` (an
earlier runnable's output; dominance is the caller's check), and inside a
loop or map body `loop.iteration`, `loop.last...`, `loop.history`,
`map.index`, `map.item...`. The 0.1 wording of P401 is kept for the paths 0.1
already had.
"""

from __future__ import annotations

from dataclasses import field

from plait.core import types as t
from plait.core.codes import declare, make
from plait.core.diagnostics import Diagnostic, Fix, Label, Severity, did_you_mean
from plait.core.record import Record, record
from plait.core.source import Span

from .context import CompileContext
from .flow import Frame, Instance, source
from .rules._inputs import show as _show
from .schema import a, suggest

# The codes this module raises; their documentation is explain/<code>.md beside it.
P315 = declare(
    "P315", "undeclared-state", Severity.ERROR, "a `{{state.x}}` read the `state` block does not declare (0.2)"
)
P402 = declare(
    "P402", "unknown-field", Severity.ERROR, "a template path naming a field its record type does not declare"
)

__all__ = ["WITH_PREFIX", "Resolved", "cases_without", "describe_use", "resolve", "show"]


@record(kw_only=False)
class Resolved(Record):
    #: The type at the path; None when it does not resolve (then `problem` is set, once a span is given).
    type: t.Type | None
    problem: Diagnostic | None = None
    #: The runnable whose output the path reads by name (`{{classify.summary}}`), for the dominance check.
    reads: str | None = None
    frames: tuple[Frame, ...] = field(default=(), repr=False)


def show(ctx: CompileContext, node: str | None) -> str:
    """How a runnable is written in the spec (inline parallels as `parallel(a, b)`); None is the run's input."""
    if node is None:
        return "the run's input"
    return _show(ctx.graph, node) if ctx.graph is not None and node in ctx.graph else node


def describe_use(ctx: CompileContext, note: tuple) -> str:
    branches = []
    while note and note[0] == "branch":  # parallels nest deeply: unwrap in a loop
        branches.append(note[1])
        note = note[2]
    if not note:
        text = ""
    elif note[0] == "follows":
        _, element, before, chain = note
        text = f"`{show(ctx, element)}` follows `{show(ctx, before)}` in {ctx.kind(chain) or 'chain'} `{chain}`"
    elif note[0] == "case":
        text = f"`{note[1]}` is a case of route `{note[2]}`"
    else:
        verb, target, source_ = note
        text = f"`{target}` {verb} `{source_}`"
    return text + "".join(f"; `{b}` is a branch of it" for b in reversed(branches))


def _labels(ctx: CompileContext, inst: Instance) -> list[Label]:
    return [Label(inst.span, describe_use(ctx, inst.note))] if inst.span is not None else []


def _is_parallel(ctx: CompileContext, node: str | None) -> bool:
    return node is not None and (ctx.kind(node) == "parallel" or ("/" in node and ctx.kind(node) is None))


def _record_label(record: t.Type, whose: str) -> list[Label]:
    span = getattr(t.strip_optional(record), "span", None)
    return [Label(span, f"{whose} is declared here")] if span is not None else []


#: The producer of a runnable's `input` when its `with` binds it: `with:NAME` (src/plait/compiler/bindings.py).
WITH_PREFIX = "with:"


def _whose(ctx: CompileContext, producer: str | None, head: str) -> str:
    if producer is not None and producer.startswith(WITH_PREFIX):
        return f"the `with` of `{producer[len(WITH_PREFIX) :]}`"
    if head == "run" or (producer is None and head == "input"):
        return "the run's `input`"
    if head == "state":
        return "the `state` key"
    return f"`{show(ctx, producer)}`'s output"


def walk_fields(
    ctx: CompileContext,
    inst: Instance,
    path: str,
    span: Span,
    head: tuple[str, ...],
    start: t.Type,
    producer: str | None,
    rest: tuple[str, ...],
    placed: bool,
) -> Resolved:
    """Follow `rest` field by field from `start` (produced by `producer`); the first part that fails is the problem.

    `placed` says the labels may describe where `inst` is placed (an `input...` path)."""
    shape, walked = start, ".".join(head)
    for part in rest:
        current = t.strip_optional(shape)
        if isinstance(current, t.AnyType):
            return Resolved(t.ANY)
        found = t.step(current, part)
        if found is not None:
            if _is_parallel(ctx, producer):
                producer = source(ctx, part)
            walked = f"{walked}.{part}"
            shape = found
            continue
        # Worded only now: most paths resolve, and describing where a runnable is placed is not free.
        labels = _labels(ctx, inst) if placed else []
        if isinstance(current, t.TextType):
            what = f"`{show(ctx, inst.name)}` receives text" if walked == "input" else f"`{walked}` is text"
            origin = f" from `{show(ctx, producer)}`" if producer is not None else ""
            return Resolved(
                None,
                make(
                    "P401",
                    f"`{{{{{path}}}}}` does not resolve: {what}{origin}, not a record",
                    span,
                    labels=labels,
                    notes=[
                        "`{{input.<branch>}}` reads a branch of a parallel placed right before; use `{{input}}` for text"
                    ]
                    if walked == "input"
                    else ["a step or agent without `output` returns text"],
                ),
            )
        names = t.field_names(current)
        hint = suggest(part, names)
        fix = did_you_mean(hint, span, path.replace(part, hint, 1)) if hint else None
        listed = ", ".join(f"`{n}`" for n in names) or "none"
        if _is_parallel(ctx, producer) and isinstance(current, t.ObjectType):
            return Resolved(
                None,
                make(
                    "P401",
                    f"`{{{{{path}}}}}` does not resolve: `{show(ctx, producer)}` has no branch `{part}`",
                    span,
                    labels=labels,
                    notes=[f"its branches are {listed}"],
                    fix=fix,
                ),
            )
        if not isinstance(current, t.ObjectType | t.UnionType):
            return Resolved(
                None,
                make(
                    "P402",
                    f"`{{{{{path}}}}}` does not resolve: `{walked}` is `{t.describe(current)}`, not a record",
                    span,
                    labels=labels + _record_label(start, _whose(ctx, producer, head[0])),
                ),
            )
        whose = f"`{walked}`" if head[0] == "state" else _whose(ctx, producer, head[0])
        cases = cases_without(ctx, producer, part) if isinstance(current, t.UnionType) else None
        if cases:
            route, lacking = cases
            return Resolved(
                None,
                make(
                    "P402",
                    f"`{{{{{path}}}}}` does not resolve: {whose} has no field `{part}`: not every case of route"
                    f" `{route}` declares it",
                    span,
                    labels=labels + lacking,
                    notes=[
                        "a route's output is the output of the case that ran, so a path reads only the fields"
                        f" common to all its cases: {listed}"
                    ],
                    fix=fix or Fix(f"declare `{part}` in the `output` of every case of `{route}`"),
                ),
            )
        return Resolved(
            None,
            make(
                "P402",
                f"`{{{{{path}}}}}` does not resolve: {whose} has no field `{part}`",
                span,
                labels=labels + _record_label(current, whose.capitalize() if whose.startswith("the") else whose),
                notes=[f"its fields are {listed}", *_narrowing(current, part, walked)],
                fix=fix,
            ),
        )
    return Resolved(shape)


def _narrowing(union: t.Type, part: str, walked: str) -> list[str]:
    """How to read a field only some records of a union of records declare (plait 0.3): narrow it."""
    key = t.discriminator(union)
    if key is None or not isinstance(union, t.UnionType):
        return []
    having = [o.name or "object {...}" for o in union.options if isinstance(o, t.ObjectType) and o.get(part)]
    if not having:
        return []
    return [
        f"it is one of {t.describe(union)}; only {', '.join(having)} declares `{part}`: a route `on {walked}.{key}`"
        " gives each case its record, where the case reads the field"
    ]


def cases_without(ctx: CompileContext, producer: str | None, part: str) -> tuple[str, list[Label]] | None:
    """(the route `producer` ends in, a label at each of its cases whose output lacks `part`), or None.

    A route's output is a union of its cases' outputs; a path into it reads only
    their common fields, so a finding there names that rule and the cases."""
    route = source(ctx, producer) if producer is not None else None
    decl = ctx.decls.get(route) if route is not None else None
    if route is None or decl is None or decl.kind != "route":
        return None
    lacking = []
    for case in getattr(decl, "cases", ()):
        typed = ctx.types.get(case.target.name)
        if typed is not None and t.step(typed, part) is None:
            lacking.append(Label(case.span, f"`{case.target.name}` declares no `{part}` in its `output`"))
    return (route, lacking) if lacking else None


def _frame(inst: Instance, kind: str) -> Frame | None:
    for frame in reversed(inst.frames):
        if frame.kind == kind:
            return frame
    return None


_SCOPE_WORDS = {
    "loop": ("iteration", "last", "history"),
    "map": ("index", "item"),
}


def _scoped(ctx: CompileContext, inst: Instance, path: str, span: Span, parts: tuple[str, ...]) -> Resolved:
    head = parts[0]
    frame = _frame(inst, head)
    if frame is None:
        return Resolved(
            None,
            make(
                "P401",
                f"`{{{{{path}}}}}` does not resolve: `{inst.name}` does not run inside a {head}",
                span,
                labels=_labels(ctx, inst),
                notes=[f"`{{{{{head}...}}}}` reads the {head} a runnable is part of: place it in a {head}'s body"],
            ),
        )
    return _in_frame(ctx, inst, path, span, parts, frame, head)


def _in_frame(
    ctx: CompileContext, inst: Instance, path: str, span: Span, parts: tuple[str, ...], frame: Frame, head: str
) -> Resolved:
    """`loop.last...` or, by name, `outer.last...`: what a loop iteration or map item around the reader gives."""
    word = parts[1] if len(parts) > 1 else None
    allowed = _SCOPE_WORDS[frame.kind]
    if word not in allowed:
        hint = suggest(word or "", allowed)
        listed = ", ".join(f"`{head}.{w}`" for w in allowed)
        return Resolved(
            None,
            make(
                "P401",
                f"`{{{{{path}}}}}` does not resolve: a {head} gives {listed}",
                span,
                fix=did_you_mean(hint, span, path.replace(word or head, hint, 1), shown=f"`{head}.{hint}`")
                if hint
                else None,
            ),
        )
    if word in ("iteration", "index"):
        typed: t.Type = t.INT
    elif word == "history":
        typed = t.ListType(frame.type)
    else:
        typed = frame.type
    if len(parts) == 2:
        return Resolved(typed)
    producer = frame.name if frame.kind == "loop" else None
    return walk_fields(ctx, inst, path, span, parts[:2], typed, producer, parts[2:], False)


def _own_frame(ctx: CompileContext, inst: Instance, path: str, span: Span, parts: tuple[str, ...]) -> Resolved | None:
    """A read of a loop or map by name inside its own body: its iteration's (item's) words, or why not; else None.

    Inside `outer`'s body `outer` has not finished, so its output cannot be read;
    what it gives there is what `loop...` gives, by name, so an inner loop can
    read an outer one (`outer.iteration`, `outer.last.verdict`)."""
    head = parts[0]
    frame = next((f for f in reversed(inst.frames) if f.name == head), None)
    if frame is None:
        return None
    if len(parts) > 1 and parts[1] in _SCOPE_WORDS[frame.kind]:
        return _in_frame(ctx, inst, path, span, parts, frame, head)
    words = ", ".join(f"`{head}.{w}`" for w in _SCOPE_WORDS[frame.kind])
    rest = ".".join(parts[1:])
    better = f"{head}.last.{rest}" if frame.kind == "loop" and rest else f"{head}.last" if frame.kind == "loop" else ""
    return Resolved(
        None,
        make(
            "P316",
            f"`{{{{{path}}}}}` reads {frame.kind} `{head}` inside its own body, where it has not finished",
            span,
            labels=_labels(ctx, inst),
            notes=[f"inside its body, {frame.kind} `{head}` gives {words} (and `{frame.kind}...` the innermost)"],
            fix=did_you_mean(better, span),
        ),
    )


def _state(ctx: CompileContext, path: str, span: Span, parts: tuple[str, ...]) -> Resolved:
    declared = ctx.state_type
    if not ctx.strict or len(parts) == 1:
        return Resolved(t.ANY)
    if declared is None:
        return Resolved(
            None,
            make(
                "P315",
                f"`{{{{{path}}}}}` reads state, but the spec declares no `state`",
                span,
                fix=Fix(f"declare it: `state {{ {parts[1]}: string }}`"),
            ),
        )
    key = parts[1]
    entry = declared.get(key)
    if entry is None:
        names = [f.name for f in declared.fields]
        hint = suggest(key, names)
        return Resolved(
            None,
            make(
                "P315",
                f"`{{{{{path}}}}}` reads `{key}`, which `state` does not declare",
                span,
                labels=_record_label(declared, "`state`"),
                notes=["declared keys: " + (", ".join(f"`{n}`" for n in names) or "none")],
                fix=did_you_mean(hint, span, path.replace(key, hint, 1))
                if hint
                else Fix(f"add `{key}` to the `state` block"),
            ),
        )
    typed = t.OptionalType(entry.type) if entry.optional else entry.type
    if len(parts) == 2:
        return Resolved(typed)
    return walk_fields(ctx, _NOWHERE, path, span, parts[:2], typed, None, parts[2:], False)


_NOWHERE = Instance(-1, "", "step", t.ANY, None, ())


def _narrowed(ctx: CompileContext, inst: Instance, path: str, span: Span, parts: tuple[str, ...]) -> Resolved | None:
    """A read of (or below) a path a route around `inst` narrowed (`on classify.kind`): walked from the case's
    records; None when no narrowed path holds it."""
    for prefix, typed in inst.narrowed:  # longest first
        if parts[: len(prefix)] != prefix:
            continue
        head = parts[0]
        reads = head if head not in ("state", "run") else None
        producer = source(ctx, head) if reads is not None else None
        where = inst if reads is not None else _NOWHERE
        found = walk_fields(ctx, where, path, span, prefix, typed, producer, parts[len(prefix) :], False)
        return Resolved(found.type, found.problem, reads=reads)
    return None


def heads(ctx: CompileContext, inst: Instance) -> list[str]:
    found = ["input", "state", "run"]
    found += [frame.kind for frame in inst.frames]
    return found


def resolve(
    ctx: CompileContext,
    inst: Instance,
    parts: tuple[str, ...],
    span: Span | None = None,
    path: str | None = None,
    where: str | None = None,
) -> Resolved:
    """The type of `parts` read at `inst`. `where` words an unknown head ("in step `x`")."""
    path = path or ".".join(parts)
    span = span or _NO_SPAN
    head = parts[0]
    if inst.narrowed and head != "input":
        narrowed = _narrowed(ctx, inst, path, span, parts)
        if narrowed is not None:
            return narrowed
    if head == "input":
        return walk_fields(ctx, inst, path, span, ("input",), inst.input, inst.producer, parts[1:], True)
    if head == "state":
        return _state(ctx, path, span, parts)
    if head in ("loop", "map"):
        return _scoped(ctx, inst, path, span, parts)
    if head == "run" and len(parts) >= 2 and parts[1] == "input":
        declared = ctx.input_type if ctx.input_type is not None else t.ANY
        return walk_fields(ctx, inst, path, span, ("run", "input"), declared, None, parts[2:], False)
    kind = ctx.kind(head)
    if kind in ("loop", "map") and inst.frames:
        own = _own_frame(ctx, inst, path, span, parts)
        if own is not None:
            return own
    if kind in ("agent", "step", "consolidate", "ask", "chain", "parallel", "route", "loop", "map"):
        found = walk_fields(
            ctx, inst, path, span, (head,), ctx.types.get(head, t.ANY), source(ctx, head), parts[1:], False
        )
        return Resolved(found.type, found.problem, reads=head)
    if kind == "tool":  # a hosted tool's last report: `{{web.citations}}` (src/plait/core/hosted.py)
        run = ctx.draft(head).get("run")
        if isinstance(run, dict) and run.get("type") == "hosted":
            from plait.core.hosted import report_type

            return walk_fields(ctx, inst, path, span, (head,), report_type(run["hosted"]), None, parts[1:], False)
    owner_kind = ctx.kind(inst.name) or "parallel"
    hint = ctx.hints(head, heads(ctx, inst))
    if isinstance(inst.input, t.ObjectType) and inst.input.get(head) is not None:
        hint = f"input.{head}"  # a field of what runs before, written without `input.` (`route r on category`)
    if ctx.strict:
        note = (
            f"{a(owner_kind)}'s templates can use `input...`, `run.input...`, `state...`, an earlier runnable's"
            " name, and inside a loop or map body `loop...` / `map...`"
        )
    else:
        note = f"{a(owner_kind)}'s templates can use `input`, `input.<branch>` and `state.<key>`"
    where = where or f"in {owner_kind} `{inst.name}`"
    return Resolved(
        None,
        make(
            "P401",
            f"`{{{{{path}}}}}` does not resolve {where}",
            span,
            notes=[note],
            fix=did_you_mean(hint, span, path.replace(head, hint, 1)) if hint else None,
        ),
    )


_NO_SPAN = Span("<string>", 1, 1, 1, 1)
