"""Diagnostic codes → their names, severities and documentation (`plait explain`).

Codes are stable: a code is never reused for a different problem. P0xx files
and syntax, P1xx names, P2xx attributes and types, P3xx graph shape and
contracts, P4xx templates, P5xx secrets, P6xx lint warnings.
"""

from __future__ import annotations

from dataclasses import dataclass

from plait.dsl.diagnostics import Diagnostic, Fix, Label, Severity
from plait.dsl.source import Span

__all__ = ["CODES", "Code", "by_name", "make"]


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    name: str
    severity: Severity
    summary: str
    #: Longer documentation: what, why, example, fix (markdown-ish text).
    explanation: str = ""


E, W = Severity.ERROR, Severity.WARNING

CODES: dict[str, Code] = {
    c.code: c
    for c in (
        Code("P001", "syntax-error", E, "the text does not follow the grammar"),
        Code("P002", "invalid-token", E, "a character or literal the lexer cannot read"),
        Code("P003", "invalid-escape", E, "a string escape that is not a JSON escape"),
        Code("P004", "nesting-too-deep", E, "brackets nested deeper than the parser allows"),
        Code("P005", "unreadable-file", E, "a spec file that cannot be read as UTF-8 text"),
        Code("P006", "import-outside-root", E, "an import that leaves the spec's directory"),
        Code("P007", "import-not-found", E, "an imported file that does not exist"),
        Code("P101", "undefined-name", E, "a reference to a name nothing declares"),
        Code("P102", "duplicate-name", E, "two declarations with one name"),
        Code("P103", "wrong-kind", E, "a reference to a declaration of the wrong kind"),
        Code("P201", "unknown-attribute", E, "an attribute the declaration does not have"),
        Code("P202", "missing-attribute", E, "a required attribute is missing"),
        Code("P203", "wrong-type", E, "an attribute value of the wrong type"),
        Code("P204", "invalid-value", E, "a value of the right type that is not allowed"),
        Code("P205", "duplicate-attribute", E, "an attribute written twice in one block"),
        Code("P206", "bad-default", E, "a parameter default that does not match its type"),
        Code("P207", "unknown-type", E, "a parameter type that does not exist"),
        Code("P208", "duplicate-parameter", E, "two parameters with one name"),
        Code("P301", "until-not-a-tool", E, "`until` names a tool the agent does not have"),
        Code("P302", "model-unreachable", E, "a model the agent cannot reach"),
        Code("P303", "delegation-cycle", E, "an agent that can reach itself through `tools`"),
        Code("P304", "chain-cycle", E, "a chain or parallel that contains itself"),
        Code("P305", "too-few-agents", E, "a consolidate with fewer than two agents"),
        Code("P306", "tool-name-collision", E, "two tools an agent would see under one name"),
        Code("P307", "script-invalid", E, "a scripted model's replies file is missing or does not parse"),
        Code("P401", "unresolved-template", E, "a template path that cannot resolve"),
        Code("P501", "literal-secret", E, "a secret written into the spec"),
        Code("P601", "unused-declaration", W, "a declaration nothing uses"),
    )
}

_BY_NAME = {c.name: c for c in CODES.values()}


def by_name(name: str) -> Code:
    return _BY_NAME[name]


def make(
    code: str,
    message: str,
    span: Span,
    *,
    labels: tuple[Label, ...] | list[Label] = (),
    notes: tuple[str, ...] | list[str] = (),
    fix: Fix | None = None,
    redact: tuple[Span, ...] = (),
) -> Diagnostic:
    """A diagnostic with the catalogue's name and severity for `code`."""
    entry = CODES[code]
    return Diagnostic(code, entry.name, entry.severity, message, span, tuple(labels), tuple(notes), fix, redact)
