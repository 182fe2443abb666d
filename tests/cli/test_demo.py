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


def test_what_a_run_leaves_behind_is_never_taken_for_a_spec(tmp_path, monkeypatch, capsys):
    """`./scripts/demo` then `./scripts/test`: the run store a demo leaves in examples/ must not trip the next command."""
    import shutil

    from plait.cli import main
    from plait.dsl.discover import spec_files

    folder = shutil.copytree(BRIEFING, tmp_path / "examples" / "briefing", ignore=shutil.ignore_patterns(".plait"))
    spec = folder / "briefing.plait"
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(spec), "--input", _demo_input()]) == 0
    assert (folder / ".plait").is_dir()  # the store: a folder named like a spec
    assert spec_files(tmp_path / "examples") == [spec]
    assert main(["check", "examples"]) == 0
    assert main(["fmt", "--check", "examples"]) == 0
    assert main(["check"]) == 0  # no path: the working directory, store skipped
    capsys.readouterr()
