"""Code declarations beside their checks → one catalogue (`plait explain`, SARIF rules, the LSP's hover).

Codes are stable: a code is never reused for a different problem. P0xx files
and syntax, P1xx names, P2xx attributes and types, P3xx graph shape and
contracts, P4xx templates, P5xx secrets, P6xx lint warnings.

A code lives with the code that raises it. The module declares it at its top,
`P312 = declare("P312", "loop-unbounded", Severity.ERROR, "a loop without ...")`,
and its documentation (four sections: what it catches, why it matters, an
example, the fix) is `explain/P312.md` in the same folder. A check reads only
the declarations; `CODES`, the whole catalogue with the documentation, is read
by `plait explain`, SARIF rules and the LSP. Examples in ```plait blocks are
real: the test suite compiles each "Example" and expects its code, and each
"Fix" and expects the code gone.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING

from plait.core.record import Record, record

if TYPE_CHECKING:
    from plait.core.diagnostics import Diagnostic, Fix, Label, Severity
    from plait.core.source import Span

__all__ = ["CODES", "HOMES", "SECTIONS", "Code", "catalogue", "declare", "declared", "lookup", "make", "sections"]


@record(kw_only=False)
class Code(Record):
    code: str
    name: str
    severity: Severity
    summary: str
    #: Longer documentation: what, why, example, fix (markdown-ish text); empty until read into `CODES`.
    explanation: str = ""


#: The modules that declare codes. A new home is added here (a test finds any declaration outside them).
HOMES = (
    "plait.core.diagnostics",
    "plait.dsl.syntax_errors",
    "plait.dsl.loader",
    "plait.compiler.types",
    "plait.compiler.paths",
    "plait.compiler.suppress",
    "plait.compiler.passes.resolve_names",
    "plait.compiler.passes.collect_symbols",
    "plait.compiler.passes.check_types",
    "plait.compiler.passes.infer_types",
    "plait.compiler.passes.validate_graph",
    "plait.compiler.passes.check_flow",
    "plait.compiler.passes.check_mcp",
    "plait.compiler.passes.check_models",
    "plait.compiler.passes.check_tests",
    "plait.compiler.passes.check_tool_runs",
    "plait.compiler.passes.check_breaks",
    "plait.compiler.passes.check_threads",
    "plait.compiler.rules.model_unreachable",
    "plait.compiler.rules.tool_name_collision",
    "plait.compiler.rules.script_invalid",
    "plait.compiler.rules.python_module",
    "plait.compiler.rules.unresolved_template",
    "plait.compiler.rules.literal_secret",
    "plait.compiler.rules.unused_declaration",
    "plait.compiler.rules.budget_unpriced",
)

#: Every code with its documentation, made on first read (see `__getattr__` below).
CODES: dict[str, Code]

#: The sections every explanation has, in order.
SECTIONS = ("What it catches", "Why it matters", "Example", "Fix")

# Every code declared so far, as its home module was imported: `make` needs only the raiser's own.
_DECLARED: dict[str, Code] = {}


def declare(code: str, name: str, severity: Severity, summary: str) -> Code:
    """A code of the module that raises it, known to `make` from then on (one declaration per code)."""
    entry = Code(code, name, severity, summary)
    if _DECLARED.setdefault(code, entry) != entry:
        raise ValueError(f"{code} is declared twice, as {_DECLARED[code].name} and as {name}")
    return entry


@cache
def declared() -> dict[str, Code]:
    """Every code, by code in code order, without documentation (imports every home, reads no file)."""
    for home in HOMES:
        import_module(home)
    return dict(sorted(_DECLARED.items()))


@cache
def catalogue() -> dict[str, Code]:
    """Every code with its documentation (`CODES`): each home's declarations and their `explain/` files."""
    from importlib import resources  # not at the top: it imports tempfile and more, ~2 ms a check never needs

    out: dict[str, Code] = {}
    for home in HOMES:
        module = import_module(home)
        folder = resources.files(module.__package__ or home) / "explain"
        for entry in vars(module).values():
            if isinstance(entry, Code):
                if entry.code in out:  # another raiser names the code as a string: it has one home
                    raise ValueError(f"{entry.code} is found in two homes, the second {home}")
                doc = folder / f"{entry.code}.md"
                # A code added without documentation still loads (the explain tests point it out).
                text = doc.read_text(encoding="utf-8").strip() if doc.is_file() else ""
                out[entry.code] = replace(entry, explanation=text)
    return dict(sorted(out.items()))


def __getattr__(name: str) -> dict[str, Code]:
    # `CODES` is made on first use, so a check (which never reads documentation) does not read 50 files.
    if name == "CODES":
        return catalogue()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def sections(code: str) -> dict[str, str]:
    """An explanation split at its `## ` headings: section title -> text."""
    import re

    parts = re.split(r"^## (.+)$", catalogue()[code].explanation, flags=re.M)
    return {title.strip(): body.strip() for title, body in zip(parts[1::2], parts[2::2])}


@cache
def _by_name() -> dict[str, Code]:
    return {c.name: c for c in declared().values()}


def lookup(word: str) -> Code | None:
    """A code by its code (`P101`, any case) or its name (`undefined-name`); its documentation is in `CODES`."""
    word = word.strip()
    return declared().get(word.upper()) or _by_name().get(word.lower().replace("_", "-"))


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
    """A diagnostic with the declared name and severity of `code`."""
    from plait.core.diagnostics import Diagnostic

    entry = _DECLARED.get(code) or declared()[code]
    return Diagnostic(code, entry.name, entry.severity, message, span, tuple(labels), tuple(notes), fix, redact)
