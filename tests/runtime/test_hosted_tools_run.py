"""A spec reading a hosted tool's report as typed fields (`{{web.citations}}`, `{{ len(web.queries) }}`) on the
scripted provider, also after a resume, and a field that is not there caught at check time."""

from __future__ import annotations

import asyncio

import plait
from plait.runtime.engine import Engine
from spec_helpers import write_spec

PARIS = "https://en.wikipedia.org/wiki/Paris"


SPEC = """
plait 0.3
tool web "Search the web." { run = hosted(web_search) { max_uses = 2 } }

agent researcher { model = m, tools = [web] }

ask check "Use {{input}}?" { answer { ok: bool } }

step cite {
  model  = m
  prompt = "Sources: {{ web.citations | map(attribute='url') | join(', ') }}; first title {{ web.citations[0].title }}; {{ len(web.queries) }} searches"
}

chain main = researcher -> check -> cite
"""

FOUND = {
    "web_search": {
        "queries": ["capital of France"],
        "citations": [{"url": PARIS, "title": "Paris - Wikipedia", "text": "Paris is the capital"}],
    }
}


def test_a_spec_reads_a_hosted_tools_citations_as_typed_fields_after_a_resume(tmp_path):
    replies = {"researcher": [{"text": "Paris.", "hosted": FOUND}], "cite": [{"text": "ok"}]}
    engine = Engine.from_spec(write_spec(tmp_path, SPEC, replies))
    provider = engine._make_provider("m")
    sent: list[tuple[str | None, str, list]] = []
    for_run = provider.for_run

    def spied(**options):
        view = for_run(**options)
        original = view.complete

        async def spy(req):
            sent.append((req.agent, req.messages[-1].text, list(req.hosted)))
            return await original(req)

        view.complete = spy
        return view

    provider.for_run = spied

    async def main():
        run = engine.start("Capital of France?")
        stopped = await run
        assert [p.id for p in stopped.pending] == ["main/check"]
        # A fresh run object from the journal: the report comes back with the researcher's stored result.
        restored = engine.restore(run.id)
        return await restored.resume(answers={"check": {"ok": True}})

    result = asyncio.run(main())
    assert result.stop_reason == "done", result.error
    (researcher, cite) = sent
    assert researcher[0] == "researcher" and researcher[2] == [
        {"type": "hosted", "hosted": "web_search", "options": {"max_uses": 2}}
    ]
    assert cite == ("cite", f"Sources: {PARIS}; first title Paris - Wikipedia; 1 searches", [])
    assert {"name": "web", "arguments": {"hosted": "web_search"}} in [
        {k: c[k] for k in ("name", "arguments")} for c in result.report.tool_calls
    ]


def test_a_typo_in_a_hosted_tools_field_is_caught_at_check_time(tmp_path):
    path = write_spec(tmp_path, SPEC.replace("web.citations[0].title", "web.citation[0].title"), [])
    codes = [d.code for d in plait.compile(path).diagnostics]
    assert codes == ["P402"], codes


PLAIN = SPEC.replace('ask check "Use {{input}}?" { answer { ok: bool } }\n', "").replace(
    "researcher -> check -> cite", "researcher -> cite"
)


def test_a_hosted_tools_report_is_recorded_exported_and_replayed_by_a_cassette(tmp_path, monkeypatch, capsys):
    """A recorded or exported cassette gives back what the hosted tool reported, so `{{web.citations}}` reads the
    same on a replay; and the hosted tools asked for are part of the request's key."""
    import json

    from plait.cli import main

    replies = {"researcher": [{"text": "Paris.", "hosted": FOUND}], "cite": [{"text": "ok"}]}
    spec = str(write_spec(tmp_path, PLAIN, replies))
    monkeypatch.chdir(tmp_path)
    assert main(["run", spec, "--input", "Capital?", "--json", "--record", "rec.json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["runs", "export", run_id, "--cassette", "-o", "exp.json"]) == 0
    # The scripted replies change; each cassette alone answers, the report included.
    (tmp_path / "replies.json").write_text(json.dumps({"researcher": [{"text": "Rome."}], "cite": [{"text": "x"}]}))
    for cassette in ("rec.json", "exp.json"):
        # `cite`'s recorded request holds the citations in its prompt: without the report given back, the replay
        # asks another question, which the cassette has no recording of.
        assert main(["run", spec, "--input", "Capital?", "--json", "--cassette", cassette]) == 0, capsys.readouterr()
        assert json.loads(capsys.readouterr().out)["output"] == "ok"
    # Another hosted tool set is another question: the recording is not served for it.
    (tmp_path / "spec.plait").write_text((tmp_path / "spec.plait").read_text().replace("max_uses = 2", "max_uses = 3"))
    assert main(["run", spec, "--input", "Capital?", "--cassette", "rec.json"]) == 1
    assert "has no recording of the request" in capsys.readouterr().err
