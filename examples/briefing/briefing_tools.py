"""The briefing example's tools: offline stand-ins for a clock, a knowledge base and a report inbox.

plait imports this module when a tool first runs (never when checking).
"""

from __future__ import annotations

from plait.runtime.tools import ToolResult

FACTS = {
    "lisbon office": [
        "The Lisbon office moves to Avenida da Liberdade 110 on 1 December.",
        "Desks are assigned by team; the list is in the shared drive.",
        "The old office closes on 28 November at 18:00.",
    ],
}


def get_time() -> str:
    # Fixed, so a run of the example is reproducible.
    return "2026-11-30T08:00:00Z"


def lookup(topic: str, limit: int = 3) -> ToolResult:
    key = next((k for k in FACTS if k in topic.lower()), None)
    facts = FACTS.get(key, [f"No entry for {topic!r}."])[:limit]
    # The topic is kept in the run's state, where templates read it as {{state.topic}}.
    return ToolResult(content="\n".join(facts), state={"topic": topic})


def submit_report(title: str, body: str) -> str:
    return f"{title}\n\n{body}"
