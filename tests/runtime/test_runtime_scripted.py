"""The scripted provider on its own: lists vs per-agent scripts, replies, errors, streams, snapshots."""

from __future__ import annotations

import json

import pytest

from plait.core.kinds import ModelNode

from plait.runtime.providers import make_provider
from plait.runtime.providers.base import (
    Message,
    ModelRequest,
    ProviderError,
    ResponseDone,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
)
from plait.runtime.providers.scripted import ScriptedProvider, parse_duration
from runtime_helpers import drain, go


def request(agent="a"):
    return ModelRequest("demo", [Message.user("hi")], agent=agent, step=1)


def provider(script, tmp_path=None):
    if tmp_path is None:
        return ScriptedProvider(ModelNode(name="demo", provider="scripted", model_id="demo"), replies=script)
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    return make_provider(
        ModelNode(name="demo", provider="scripted", model_id="demo", script=str(path)), root=str(tmp_path)
    )


def test_a_list_is_shared_by_every_caller_and_an_object_is_keyed_by_agent(tmp_path):
    shared = provider([{"text": "one"}, {"text": "two"}], tmp_path)
    assert [go(shared.complete(request(a))).text for a in ("x", "y")] == ["one", "two"]
    keyed = provider({"x": [{"text": "for x"}], "y": [{"text": "for y"}]})
    assert go(keyed.complete(request("y"))).text == "for y" and go(keyed.complete(request("x"))).text == "for x"
    with pytest.raises(ProviderError) as info:
        go(keyed.complete(request("z")))
    assert "`demo`" in info.value.message and "`z`" in info.value.message


def test_reply_fields(tmp_path):
    p = provider(
        [
            {
                "text": "hi",
                "tool_calls": [{"name": "f", "arguments": {"a": 1}}],
                "usage": {"input_tokens": 7, "output_tokens": 3},
                "response_id": "r1",
            },
            {"tool_calls": [{"name": "f", "raw_arguments": '{"a": 2}'}, {"name": "g", "raw_arguments": "[1]"}]},
            {"text": "x", "finish_reason": "STEERED"},
            {"error": {"kind": "quota_exceeded", "message": "no credit", "status": 429}},
        ]
    )
    first = go(p.complete(request()))
    assert (first.text, first.finish_reason, first.usage.input_tokens, first.response_id) == (
        "hi",
        "tool_calls",
        7,
        "r1",
    )
    second = go(p.complete(request()))
    assert second.finish_reason == "malformed_tool_call"
    assert (second.tool_calls[0].arguments, second.tool_calls[1].malformed) == ({"a": 2}, True)
    assert go(p.complete(request())).finish_reason == "steered"
    with pytest.raises(ProviderError) as info:
        go(p.complete(request()))
    assert (info.value.kind, info.value.message, info.value.status) == ("quota_exceeded", "no credit", 429)


def test_stream_emits_text_deltas_argument_fragments_and_starts():
    p = provider([{"text": "two words", "tool_calls": [{"name": "f", "arguments": {"city": "Oslo"}}]}])

    events = go(drain(p.stream(request())))
    assert [type(e) for e in events] == [
        TextDelta,
        TextDelta,
        ToolCallDelta,
        ToolCallDelta,
        ToolCallStart,
        ResponseDone,
    ]
    assert "".join(e.arguments for e in events if isinstance(e, ToolCallDelta)) == '{"city": "Oslo"}'
    assert events[-1].response.tool_calls[0].arguments == {"city": "Oslo"}


def test_snapshot_restores_the_cursor_and_durations_parse():
    p = provider([{"text": "a"}, {"text": "b"}])
    go(p.complete(request()))
    q = provider([{"text": "a"}, {"text": "b"}])
    q.restore(p.snapshot())
    assert go(q.complete(request())).text == "b"
    assert [parse_duration(v) for v in ("50ms", "2s", "1m", 0.5)] == [0.05, 2.0, 60.0, 0.5]


def test_missing_script_file_is_a_clear_error(tmp_path):
    p = make_provider(
        ModelNode(name="demo", provider="scripted", model_id="demo", script=str(tmp_path / "nope.json")),
        root=str(tmp_path),
    )
    with pytest.raises(ProviderError) as info:
        go(p.complete(request()))
    assert "cannot read script" in info.value.message
