"""Cassettes: a run recorded (`plait run --record`, `plait runs export --cassette`) replays offline as it ran; a
request with no recording fails the run, naming the nearest recording and the first difference; no secret is kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plait.cli import main
from plait.runtime.cassettes import Cassette, Recorder, ReplayProvider, canonical_bytes, request_key
from plait.runtime.cassettes.record import reply_json
from plait.runtime.providers.base import Message, ModelRequest, ProviderError
from plait.runtime.secret_values import forget_all, remember

SECRET = "sk-cassette-test-key-0123456789abcdefXYZ"

COMPATIBLE = """
model m = "openai-compatible/fake-model" {{ base_url = "{url}", api_key = env("PLAIT_FAKE_API_KEY") }}

tool add "Add two numbers." {{
  params {{
    a: int
    b: int
  }}
  run = python("cassette_tools:add")
}}

agent main {{
  model = m
  system = "{system}"
  tools = [add]
  max_steps = 4
}}
"""

TRIAGE = """
model fast = "scripted/fast" { script = "replies.json" }

step classify {
  model  = fast
  prompt = "Sort: {{input}}"
  output { category: "billing" | "tech" }
}

step billing { model = fast, prompt = "Billing: {{input.category}}" }
step tech { model = fast, prompt = "Tech: {{input.category}}" }

route triage on input.category {
  "billing" -> billing
  else      -> tech
}

chain main = classify -> triage
"""

REPLIES = {
    "classify": [{"output": {"category": "billing"}}],
    "billing": [{"text": "Refunded."}],
    "tech": [{"text": "Restart it."}],
}


def report_of(out: str) -> dict:
    report = json.loads(out)
    report.pop("run_id")
    return report


def scripted(tmp_path):
    (tmp_path / "triage.plait").write_text(TRIAGE)
    (tmp_path / "replies.json").write_text(json.dumps(REPLIES))
    return str(tmp_path / "triage.plait")


@pytest.mark.slow
def test_a_run_recorded_against_a_real_server_replays_offline_identically(tmp_path, monkeypatch, capsys):
    from plait.runtime.providers.fake import FakeServer

    monkeypatch.setenv("PLAIT_FAKE_API_KEY", SECRET)
    (tmp_path / "cassette_tools.py").write_text("def add(a, b):\n    return a + b\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cassette = tmp_path / "add.cassette.json"
    spec = tmp_path / "add.plait"
    with FakeServer() as server:
        server.push({"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]}, {"text": "2 + 3 = 5"})
        spec.write_text(COMPATIBLE.format(url=server.base_url("openai-compatible"), system="You add."))
        code = main(["run", str(spec), "--input", "What is 2 + 3?", "--json", "--record", str(cassette)])
        recorded = capsys.readouterr()
        assert code == 0, recorded.err
        assert len(server.requests) == 2
    # The server is gone: the replay reaches no network and reads no key.
    monkeypatch.delenv("PLAIT_FAKE_API_KEY")
    code = main(["run", str(spec), "--input", "What is 2 + 3?", "--json", "--cassette", str(cassette)])
    replayed = capsys.readouterr()
    assert code == 0, replayed.err
    assert report_of(replayed.out) == report_of(recorded.out)
    assert report_of(replayed.out)["output"] == "2 + 3 = 5"
    text = cassette.read_text()
    assert SECRET not in text and "Authorization" not in text and "Bearer" not in text
    assert json.loads(text)["version"] == 1

    # A prompt edit: the replay fails on the first request and shows what changed.
    spec.write_text(COMPATIBLE.format(url="http://127.0.0.1:9/v1", system="You add numbers."))
    code = main(["run", str(spec), "--input", "What is 2 + 3?", "--cassette", str(cassette)])
    err = capsys.readouterr().err
    assert code == 1
    assert "has no recording of the request agent `main` at main step 1 made" in err
    assert "nearest recording: `main` at main step 1" in err
    assert "first difference: `system`" in err
    assert 'recorded: "You add."' in err and 'asked:    "You add numbers."' in err


def test_a_changed_input_names_the_first_differing_message(tmp_path, capsys):
    spec = scripted(tmp_path)
    cassette = str(tmp_path / "t.json")
    assert main(["run", spec, "--input", "charged twice", "--record", cassette]) == 0
    # Replay never reads the script.
    (tmp_path / "replies.json").write_text(json.dumps({"classify": [{"output": {"category": "tech"}}]}))
    assert main(["run", spec, "--input", "charged twice", "--cassette", cassette]) == 0
    assert capsys.readouterr().out.strip().endswith("Refunded.")
    assert main(["run", spec, "--input", "charged three times", "--cassette", cassette]) == 1
    err = capsys.readouterr().err
    assert "first difference: message 1 (user)" in err
    assert 'recorded: "Sort: charged twice"' in err
    assert 'asked:    "Sort: charged three times"' in err
    assert "Traceback" not in err


def test_a_run_exported_from_the_journal_replays(tmp_path, capsys, monkeypatch):
    spec = scripted(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["run", spec, "--input", "charged twice", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    cassette = tmp_path / "exported.json"
    assert main(["runs", "export", run_id, "--cassette", "-o", str(cassette)]) == 0
    document = json.loads(cassette.read_text())
    assert [i["agent"] for i in document["interactions"]] == ["classify", "billing"]
    # The request as the journal keeps it: what the model read, comparable with the one a replay asks.
    first = document["interactions"][0]["request"]
    assert first["form"] == "comparable"
    assert first["messages"] == [{"role": "user", "text": "Sort: charged twice"}]
    (tmp_path / "replies.json").write_text(json.dumps({"classify": [{"output": {"category": "tech"}}]}))
    assert main(["run", spec, "--input", "charged twice", "--cassette", str(cassette)]) == 0
    assert capsys.readouterr().out.strip().endswith("Refunded.")  # the journal's replies, not the script's
    assert main(["run", spec, "--input", "other", "--cassette", str(cassette)]) == 1
    err = capsys.readouterr().err
    assert "nearest recording: `classify` at main/classify step 1" in err
    assert "first difference: message 1 (user)" in err
    assert 'recorded: "Sort: charged twice"' in err and 'asked:    "Sort: other"' in err


def test_a_request_asked_more_often_than_recorded_fails(tmp_path):
    import asyncio

    request = ModelRequest("m", [Message.user("hi")], agent="a", path=("main",), step=1)
    recorder = Recorder()

    class Echo:
        name = "m"

        async def complete(self, req):
            from plait.runtime.providers.base import ModelResponse

            return ModelResponse(Message("assistant", [], model="m"), "stop")

    provider = recorder.wrap("m", Echo())
    asyncio.run(provider.complete(request))
    path = tmp_path / "c.json"
    recorder.cassette().save(path)
    replay = ReplayProvider(Cassette.load(path), "m").for_run()
    asyncio.run(replay.complete(request))
    with pytest.raises(ProviderError) as caught:
        asyncio.run(replay.complete(request))
    assert caught.value.kind == "invalid_request"
    assert "has 1 recording(s) of the request agent `a` at main step 1 made, and the run asked it again" in str(
        caught.value
    )
    # Each run starts from the first recording.
    asyncio.run(ReplayProvider(Cassette.load(path), "m").for_run().complete(request))


def test_secrets_never_enter_a_cassette_and_volatile_fields_do_not_change_the_key(tmp_path):
    remember(SECRET)
    try:
        asked = Message.user(f"my key is {SECRET}")
        request = ModelRequest("m", [asked], agent="a", step=1)
        later = ModelRequest("m", [Message.user(f"my key is {SECRET}")], agent="b", step=7, timeout=3.0)
        later.messages[0].created_at = 123.0
        assert request_key(request) == request_key(later)
        assert request_key(request) != request_key(ModelRequest("m", [Message.user("other")]))
        recorder = Recorder()
        from plait.runtime.providers.base import ModelResponse

        recorder.add("m", request, canonical_bytes(request), reply={"message": {"role": "assistant", "content": []}})
        recorder.interactions[0].reply = {
            "message": {"role": "assistant", "content": [{"text": f"noted {SECRET} and ghp_" + "a1B2" * 9}]},
        }
        recorder.cassette().save(tmp_path / "c.json")
        text = (tmp_path / "c.json").read_text()
        assert SECRET not in text and "ghp_a1B2" not in text
        assert "<redacted>" in text
        assert ModelResponse  # imported for the recorder's types
    finally:
        forget_all()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "is not JSON"),
        ('{"format": "plait-cassette", "version": 9, "interactions": []}', "has version 9"),
        ('{"format": "other"}', "is not a plait cassette"),
        ('{"format": "plait-cassette", "version": 1, "interactions": [{"key": 1}]}', "interaction 1 is not"),
    ],
)
def test_a_bad_cassette_is_a_usage_error(tmp_path, capsys, content, message):
    spec = scripted(tmp_path)
    (tmp_path / "bad.json").write_text(content)
    assert main(["run", spec, "--input", "x", "--cassette", str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert main(["run", spec, "--input", "x", "--cassette", str(tmp_path / "missing.json")]) == 2
    assert "cannot read cassette" in capsys.readouterr().err


def test_a_run_that_asks_no_model_leaves_the_cassette_as_it_was(tmp_path, capsys):
    spec = scripted(tmp_path)
    cassette = tmp_path / "t.json"
    assert main(["run", spec, "--input", "charged twice", "--record", str(cassette)]) == 0
    before = cassette.read_text()
    assert main(["run", spec, "--entry", "nothing", "--record", str(cassette)]) == 2
    assert cassette.read_text() == before


def test_a_run_cached_encoding_is_the_canonical_json():
    import orjson

    from plait.runtime.cassettes.request import canonical
    from plait.runtime.providers.base import ToolCall, ToolSpec

    calls = [ToolCall("c1", "add", {"a": 1}, '{"a": 1}')]
    messages = [Message.user("héllo"), Message("assistant", [], calls), Message.system("x")]
    tools = [ToolSpec("add", "Add.", {"type": "object"})]
    request = ModelRequest(
        "m", messages, tools, tool_choice="auto", system="s", temperature=0.5, output_schema={"b": 1}
    )
    cache: dict = {}
    expected = orjson.dumps(canonical(request), option=orjson.OPT_SORT_KEYS)
    assert canonical_bytes(request) == canonical_bytes(request, cache) == canonical_bytes(request, cache) == expected
    # A later call of the run: new messages and settings are encoded, the cached ones reused.
    later = ModelRequest("m", [*messages, Message.user("more")], tools, tool_choice="none", system="s")
    assert canonical_bytes(later, cache) == orjson.dumps(canonical(later), option=orjson.OPT_SORT_KEYS)
    assert request_key(later, cache) == request_key(later) != request_key(request)


TOOLED = """
model m = "scripted/m" { script = "m.json" }

tool stamp "Stamp a letter." {
  params { to: string }
  run = python("cassette_stamp:stamp")
}

agent main {
  model = m
  tools = [stamp]
  max_steps = 3
}
"""

STAMP = """
import pathlib

def stamp(to):
    log = pathlib.Path(__file__).with_name("stamped.log")
    log.write_text(log.read_text() + to + "\\n" if log.exists() else to + "\\n")
    return "stamped for " + to + " (#" + str(len(log.read_text().split())) + ")"
"""


def test_tool_results_recorded_by_choice_replay_without_running_the_tool(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "cassette_stamp.py").write_text(STAMP)
    spec = tmp_path / "tooled.plait"
    spec.write_text(TOOLED)
    replies = [{"tool_calls": [{"name": "stamp", "arguments": {"to": "ann"}}]}, {"text": "Done."}]
    (tmp_path / "m.json").write_text(json.dumps(replies))
    cassette = str(tmp_path / "c.json")
    assert main(["run", str(spec), "--input", "go", "--record", cassette, "--record-tools", "--json"]) == 0
    recorded = capsys.readouterr()
    assert "recorded 2 model call(s) and 1 tool result(s)" in recorded.err
    assert (tmp_path / "stamped.log").read_text() == "ann\n"
    results = json.loads(Path(cassette).read_text())["tool_results"]
    assert [(r["tool"], r["arguments"], r["outcome"]["content"]) for r in results] == [
        ("stamp", {"to": "ann"}, "stamped for ann (#1)")
    ]
    assert main(["run", str(spec), "--input", "go", "--cassette", cassette, "--json"]) == 0
    replayed = capsys.readouterr()
    assert report_of(replayed.out) == report_of(recorded.out)
    assert (tmp_path / "stamped.log").read_text() == "ann\n"  # the tool did not run again

    # The same from the journal: `runs export --cassette --tools`.
    exported = str(tmp_path / "exported.json")
    run_id = json.loads(recorded.out)["run_id"]
    assert main(["runs", "export", run_id, "--cassette", "--tools", "--dir", str(tmp_path), "-o", exported]) == 0
    assert json.loads(Path(exported).read_text())["tool_results"] == results
    assert main(["run", str(spec), "--input", "go", "--cassette", exported]) == 0
    assert (tmp_path / "stamped.log").read_text() == "ann\n"
    capsys.readouterr()
    assert main(["runs", "export", run_id, "--tools", "--dir", str(tmp_path)]) == 2
    assert "give --cassette too" in capsys.readouterr().err

    # A cassette without tool results runs the tools.
    assert main(["run", str(spec), "--input", "go", "--record", cassette]) == 0
    assert "tool_results" not in json.loads(Path(cassette).read_text())
    capsys.readouterr()
    assert main(["run", str(spec), "--input", "go", "--cassette", cassette]) == 1  # the tool now says (#3)
    assert "first difference: message 3 (tool)" in capsys.readouterr().err
    assert main(["run", str(spec), "--input", "go", "--record-tools"]) == 2
    assert "give --record FILE" in capsys.readouterr().err


def test_a_streamed_replay_gives_the_recorded_message(tmp_path):
    import asyncio

    from plait.runtime.providers.base import ModelResponse, ResponseDone, TextDelta, TextPart, ToolCall, ToolCallStart

    request = ModelRequest("m", [Message.user("hi")], agent="a", path=("main",), step=1)
    message = Message("assistant", [TextPart("Let me look.")], [ToolCall("c-1", "find", {"q": "x"}, '{"q": "x"}')])
    recorder = Recorder()
    recorder.add("m", request, canonical_bytes(request), reply=reply_json(ModelResponse(message, "tool_calls")))
    recorder.cassette().save(tmp_path / "c.json")
    provider = ReplayProvider(Cassette.load(tmp_path / "c.json"), "m").for_run()

    async def events():
        return [event async for event in provider.stream(request)]

    seen = asyncio.run(events())
    assert [type(e) for e in seen] == [TextDelta, ToolCallStart, ResponseDone]
    done = seen[-1].response
    assert done.message == message and done.finish_reason == "tool_calls"


GATED = """
model primary = "scripted/primary" { script = "primary.json" }

tool send "Send a message." {
  params { to: string }
  run = python("cassette_send:send")
  approval = required
}

agent main {
  model = primary
  tools = [send]
  max_steps = 4
}
"""


def test_a_run_stopped_for_a_person_replays_and_resumes_from_its_exported_cassette(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cassette_send.py").write_text("def send(to):\n    return 'sent to ' + to\n")
    spec = str(tmp_path / "gated.plait")
    (tmp_path / "gated.plait").write_text(GATED)
    replies = [{"tool_calls": [{"name": "send", "arguments": {"to": "ann"}}]}, {"text": "Sent."}]
    (tmp_path / "primary.json").write_text(json.dumps(replies))

    def stopped(*extra):
        assert main(["run", spec, "--input", "tell ann", "--json", *extra]) == 3
        report = json.loads(capsys.readouterr().out)
        return report["run_id"], report["pending"][0]["id"]

    run_id, pending = stopped()
    assert main(["run", spec, "--resume", run_id, "--decide", f"{pending}=approve"]) == 0
    capsys.readouterr()
    cassette = str(tmp_path / "whole.json")
    assert main(["runs", "export", run_id, "--cassette", "-o", cassette]) == 0
    (tmp_path / "primary.json").write_text("[]")  # replay never reads the script
    run_id, pending = stopped("--cassette", cassette)
    assert main(["run", spec, "--resume", run_id, "--decide", f"{pending}=approve", "--cassette", cassette]) == 0
    assert capsys.readouterr().out.strip() == "Sent."


FALLBACK = """plait 0.3
model a = "scripted/a" { script = "a.json", retries = 0 }
model b = "scripted/b" { script = "b.json" }
agent main { model = a, fallback = [b] }
"""


def _fall_back_and_export(tmp_path, capsys, monkeypatch) -> None:
    """A journaled run whose primary model fails and whose fallback answers, exported as c.json."""
    (tmp_path / "s.plait").write_text(FALLBACK)
    (tmp_path / "a.json").write_text(json.dumps({"main": [{"error": {"kind": "server_error"}}]}))
    (tmp_path / "b.json").write_text(json.dumps({"main": [{"text": "from b"}]}))
    monkeypatch.chdir(tmp_path)
    assert main(["run", "s.plait", "--input", "hi", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["runs", "export", run_id, "--cassette", "-o", "c.json"]) == 0


def test_a_run_that_fell_back_exports_a_cassette_that_takes_the_same_fallback(tmp_path, capsys, monkeypatch):
    """The primary's failure is in the exported cassette, under the key of the request it was asked: before, only
    the fallback's reply was, and a replay's first request (to the primary) was a miss."""
    _fall_back_and_export(tmp_path, capsys, monkeypatch)
    recorded = json.loads((tmp_path / "c.json").read_text())["interactions"]
    assert [(i["model"], "error" in i) for i in recorded] == [("a", True), ("b", False)]
    # Replayed from the cassette alone: the scripts now say something else.
    (tmp_path / "a.json").write_text(json.dumps({"main": [{"text": "from a"}]}))
    (tmp_path / "b.json").write_text(json.dumps({"main": [{"text": "changed"}]}))
    assert main(["run", "s.plait", "--input", "hi", "--json", "--cassette", "c.json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["output"] == "from b"
    assert [w["details"] for w in replayed["warnings"] if w["code"] == "model_fallback"] == [
        {"from": "a", "to": "b", "kind": "server_error"}
    ]


def test_a_miss_whose_nearest_recording_is_another_models_names_the_model(tmp_path, capsys, monkeypatch):
    """A cassette holding only the fallback's reply (as one exported before failures were kept): the primary's
    request is the same request, recorded for another model, and the miss says so."""
    _fall_back_and_export(tmp_path, capsys, monkeypatch)
    document = json.loads((tmp_path / "c.json").read_text())
    document["interactions"] = [i for i in document["interactions"] if "error" not in i]
    (tmp_path / "c.json").write_text(json.dumps(document))
    assert main(["run", "s.plait", "--input", "hi", "--cassette", "c.json"]) == 1
    err = capsys.readouterr().err
    assert "the requests differ in the model only: recorded for `b`, asked of `a`" in err, err
    assert "masked secrets" not in err
