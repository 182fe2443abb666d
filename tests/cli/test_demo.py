"""`./scripts/demo` runs the offline briefing: its scripted replies must answer the question the demo asks."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BRIEFING = ROOT / "examples" / "briefing"


def _demo_input() -> str:
    match = re.search(r'^input="([^"]+)"$', (ROOT / "scripts" / "demo").read_text(), re.M)
    assert match, 'scripts/demo sets input="..." for its run'
    return match.group(1)


def _topic_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3}


def test_the_demo_asks_what_the_spec_header_documents():
    assert f'--input "{_demo_input()}"' in (BRIEFING / "briefing.plait").read_text()


def test_the_scripted_replies_answer_the_demos_question():
    replies = json.loads((BRIEFING / "briefing.replies.json").read_text())
    asked = _topic_words(_demo_input())
    delegated = replies["writer"][0]["tool_calls"][0]["arguments"]["task"]
    report = replies["writer"][-1]["tool_calls"][0]["arguments"]
    assert asked <= _topic_words(report["title"]), (asked, report["title"])
    # The researcher is asked about the same topic, and what it looks up is in the knowledge base.
    assert asked - {"move"} <= _topic_words(delegated)
    lookup = replies["researcher"][0]["tool_calls"][0]["arguments"]["topic"]
    assert asked - {"move"} <= _topic_words(lookup)
