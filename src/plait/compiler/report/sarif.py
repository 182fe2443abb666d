"""Diagnostics → a SARIF 2.1.0 log, for GitHub code scanning and other SARIF viewers.

One run, tool `plait`, with every catalogue code as a rule (so a viewer can
show a rule's documentation even for codes that found nothing): the full
explanation once, as the help's markdown, and a plain-text pointer to
`plait explain` beside it, so the log stays about 1 KB a code. URIs are
relative to the directory `plait` ran in (`%SRCROOT%`); a file outside it
gets an absolute `file:` URI. Columns count code points, as spans do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import quote

from plait.core.codes import CODES, sections
from plait.core.diagnostics import Diagnostic, Severity
from plait.core.source import SourceFile, Span

from .mask import Redactor
from .paths import relative_path

__all__ = ["INFORMATION_URI", "SARIF_SCHEMA", "render_sarif", "to_uri"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
#: The tool's home page (pyproject's Homepage): viewers link the tool name to it.
INFORMATION_URI = "https://plait.dev"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def to_uri(path: str, cwd: Path | None = None) -> tuple[str, str | None]:
    """(uri, uriBaseId) for a span's file."""
    p = relative_path(path, cwd)
    if p.is_absolute():
        return Path(p).as_uri(), None
    return quote(p.as_posix()), "%SRCROOT%"


def _location(span: Span) -> dict[str, Any]:
    uri, base = to_uri(span.file)
    artifact: dict[str, Any] = {"uri": uri}
    if base:
        artifact["uriBaseId"] = base
    region = {
        "startLine": max(span.line, 1),
        "startColumn": max(span.column, 1),
        "endLine": max(span.end_line, span.line, 1),
        "endColumn": max(span.end_column, 1) if span.end_line > span.line else max(span.end_column, span.column, 1),
    }
    return {"physicalLocation": {"artifactLocation": artifact, "region": region}}


def _rules(diagnostics: Sequence[Diagnostic]) -> list[dict[str, Any]]:
    rules = []
    for entry in CODES.values():
        doc = sections(entry.code)
        rules.append(
            {
                "id": entry.code,
                "name": entry.name,
                "shortDescription": {"text": entry.summary},
                "fullDescription": {"text": doc.get("What it catches") or entry.summary},
                # The explanation is carried once (SARIF viewers render the markdown); the plain text points to it.
                "help": {
                    "text": f"{entry.summary}. `plait explain {entry.code}` prints the full explanation.",
                    "markdown": entry.explanation or entry.summary,
                },
                "defaultConfiguration": {"level": _LEVEL[entry.severity]},
            }
        )
    known = set(CODES)
    for d in diagnostics:  # a code missing from the catalogue still needs a rule to point at
        if d.code not in known:
            known.add(d.code)
            rules.append(
                {
                    "id": d.code,
                    "name": d.name,
                    "shortDescription": {"text": d.name},
                    "defaultConfiguration": {"level": _LEVEL[d.severity]},
                }
            )
    return rules


def _result(d: Diagnostic, sources: Mapping[str, SourceFile], index: int) -> dict[str, Any]:
    say = Redactor(d, sources).text
    text = [say(d.message)]
    text += [f"note: {say(note)}" for note in d.notes]
    if d.fix is not None:
        text.append(f"help: {say(d.fix.message)}")
    result: dict[str, Any] = {
        "ruleId": d.code,
        "ruleIndex": index,
        "level": _LEVEL[d.severity],
        "message": {"text": "\n".join(text)},
        "locations": [_location(d.span)],
    }
    if d.labels:
        result["relatedLocations"] = [
            {"id": i, **_location(label.span), "message": {"text": say(label.message)}}
            for i, label in enumerate(d.labels, 1)
        ]
    if d.fix is not None and d.fix.span is not None and d.fix.replacement is not None:
        change = _location(d.fix.span)["physicalLocation"]
        result["fixes"] = [
            {
                "description": {"text": say(d.fix.message)},
                "artifactChanges": [
                    {
                        "artifactLocation": change["artifactLocation"],
                        "replacements": [
                            {"deletedRegion": change["region"], "insertedContent": {"text": say(d.fix.replacement)}}
                        ],
                    }
                ],
            }
        ]
    return result


def render_sarif(diagnostics: Sequence[Diagnostic], sources: Mapping[str, SourceFile]) -> str:
    from plait import __version__

    rules = _rules(diagnostics)
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "plait",
                        "informationUri": INFORMATION_URI,
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, sources, index[d.code]) for d in diagnostics],
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
