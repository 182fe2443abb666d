"""Hosted tools: a kind of tool a model's provider runs itself → which providers run it, the options a spec may
give it, and the typed record of what a run of it reports (citations, queries, code runs).

The compiler checks a spec against these tables and types `{{TOOL.citations}}`
with `report_type`; the providers read the same options when they put the tool
on the wire (src/plait/runtime/providers/hosted.py).
"""

from __future__ import annotations

from typing import Any

from .types import TEXT, FieldType, ListType, ObjectType, Type

__all__ = ["HOSTED", "OPTIONS", "empty_report", "hosts", "report_type"]

#: Each kind → the providers that run it. `scripted` runs every kind (its replies say what the search found),
#: so a spec with hosted tools runs and is tested offline.
HOSTED: dict[str, tuple[str, ...]] = {
    "web_search": ("openai", "anthropic", "google", "scripted"),
    "code_execution": ("google", "scripted"),
}

#: Each kind's options: "int" (≥ 1), "strings" (a list of strings), or a tuple of words.
OPTIONS: dict[str, dict[str, Any]] = {
    "web_search": {
        "max_uses": "int",  # Anthropic: the most searches in one call
        "allowed_domains": "strings",  # Anthropic, OpenAI Responses
        "blocked_domains": "strings",  # Anthropic
        "context_size": ("low", "medium", "high"),  # OpenAI: search_context_size
    },
    "code_execution": {},
}


def hosts(provider: str, kind: str) -> bool:
    return provider in HOSTED.get(kind, ())


_CITATION = ObjectType(
    (
        FieldType("url", TEXT),
        FieldType("title", TEXT, optional=True),
        FieldType("text", TEXT, optional=True),
    )
)
_CODE_RUN = ObjectType(
    (
        FieldType("language", TEXT),
        FieldType("code", TEXT),
        FieldType("outcome", TEXT),
        FieldType("output", TEXT),
    )
)

#: What `{{TOOL...}}` reads after an agent used the hosted tool TOOL: its last run's report.
_REPORTS: dict[str, ObjectType] = {
    "web_search": ObjectType((FieldType("queries", ListType(TEXT)), FieldType("citations", ListType(_CITATION)))),
    "code_execution": ObjectType((FieldType("runs", ListType(_CODE_RUN)),)),
}


def report_type(kind: str) -> Type:
    return _REPORTS[kind]


def empty_report(kind: str) -> dict[str, list[Any]]:
    """A report with nothing in it: what an agent that never used the tool in its run leaves (each list of its
    type empty, so the two never drift apart)."""
    return {f.name: [] for f in _REPORTS[kind].fields}
