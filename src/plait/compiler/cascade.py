"""Sorted diagnostics + the declarations' spans → the same diagnostics, each root cause followed by what follows
from it.

One slip often shows up several times: a tool-name typo (`lookpu`) is the
undefined name itself, then a replies file whose script calls `lookup`, which
the agent no longer has, then `lookup` never used. Sorted by position alone,
the consequences come first and the cause last. Here a diagnostic that follows
from another is marked with `follows` (the root's code and span) and placed
right after its root, so every report shows the cause first; the text report
folds the followers into one line under it (JSON, SARIF and GitHub keep them
whole, marked).

Each rule is a code whose diagnostics can be roots, and what makes another
diagnostic follow from one of them.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable, Mapping

from plait.core.diagnostics import Diagnostic
from plait.core.source import Span

__all__ = ["RULES", "fold"]

_QUOTED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")

#: Given the declarations' spans and a root, whether another diagnostic follows from that root.
Rule = Callable[[Mapping[str, Span], Diagnostic], Callable[[Diagnostic], bool]]


def _inside(span: Span, outer: Span) -> bool:
    return span.file == outer.file and outer.offset <= span.offset and span.end_offset <= outer.end_offset


def _named(d: Diagnostic) -> set[str]:
    return set(_QUOTED.findall(d.message))


def _undefined_name(decls: Mapping[str, Span], root: Diagnostic) -> Callable[[Diagnostic], bool]:
    """A typo (`lookpu` for `lookup`) leaves the name meant unused and its users short of it: what the later
    checks (contracts, paths, lints: P3xx and up) say of the name meant follows from the typo. Names and
    attributes (P1xx, P2xx) are checked on their own, so those are never folded."""
    if root.fix is None or not root.fix.replacement or root.fix.replacement not in decls:
        return lambda other: False
    meant = root.fix.replacement
    return lambda other: other.code >= "P3" and meant in _named(other)


def _never_used(decls: Mapping[str, Span], root: Diagnostic) -> Callable[[Diagnostic], bool]:
    """A runnable nothing runs has no input of anyone's: what its templates read of `input` is checked against
    the run's input, and an error there usually means the runnable lost its place (a route's case, a chain)."""
    owner = next((span for span in decls.values() if _inside(root.span, span)), None)
    if owner is None:
        return lambda other: False
    return lambda other: other.is_error and other.code.startswith("P4") and _inside(other.span, owner)


_CASE_VALUE = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _uncovered_case(decls: Mapping[str, Span], root: Diagnostic) -> Callable[[Diagnostic], bool]:
    """A route without a case for a value (often: its `else` or a case was just removed) leaves the runnable that
    handled the value unused: a never-used runnable named for a missing value (`sales` for "sales", `tech_support`
    for "tech") follows from it, and so does what follows from that runnable being unused."""
    _, _, listed = root.message.partition(" has no case for ")
    values = {v.lower() for v in _CASE_VALUE.findall(listed)}
    if not values:
        return lambda other: False

    def handled_here(name: str) -> bool:
        lowered = name.lower()
        return lowered in values or any(part in values for part in lowered.split("_"))

    return lambda other: other.code == "P601" and any(handled_here(name) for name in _named(other) & decls.keys())


#: Root code → its rule, in the order roots are tried: an undefined name can be why a runnable is never used, and
#: so can a route's missing case.
RULES: dict[str, Rule] = {
    "P101": _undefined_name,
    "P310": _uncovered_case,
    "P601": _never_used,
}


def fold(diagnostics: list[Diagnostic], decls: Mapping[str, Any]) -> list[Diagnostic]:
    """The diagnostics (sorted by position) with each root's followers marked and moved right after it."""
    order = list(RULES)
    roots = sorted((d for d in diagnostics if d.code in RULES), key=lambda d: order.index(d.code))
    if not roots:
        return diagnostics
    spans = {name: decl.span for name, decl in decls.items() if getattr(decl, "span", None) is not None}
    after: dict[int, list[Diagnostic]] = {}
    taken: set[int] = set()
    for root in roots:
        if id(root) in taken:
            continue  # a follower is not a root of its own: its cause is already shown above it
        causes = [root]  # what follows from a follower follows from its root too, listed under the root
        while causes:
            cause = causes.pop(0)
            follows = RULES[cause.code](spans, cause)
            for other in diagnostics:
                if other is not root and id(other) not in taken and follows(other):
                    taken.add(id(other))
                    after.setdefault(id(root), []).append(replace(other, follows=(cause.code, cause.span)))
                    if other.code in RULES:
                        causes.append(other)
    if not taken:
        return diagnostics
    out: list[Diagnostic] = []
    for d in diagnostics:
        if id(d) not in taken:
            out.append(d)
            out.extend(after.get(id(d), ()))
    return out
