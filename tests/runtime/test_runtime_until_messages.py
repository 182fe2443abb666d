"""An `until` satisfied by a tool with `result = messages` returns what the tool returned: no next call happens
to deliver the messages, so the "(delivered as N messages on the next call)" placeholder must never be the answer."""

from __future__ import annotations

from runtime_helpers import call, fn_tool, go, make

from plait.runtime.tools import ToolResult


def test_until_on_a_messages_tool_returns_the_tools_real_result():
    tool = fn_tool("fetch", lambda: "the material itself", result="messages")
    engine = make([call("fetch")], tools={"fetch": tool}, until=("fetch",))
    result = go(engine.run("go"))
    assert result.stop_reason == "until"
    assert result.output == "the material itself" and result.until_result == "the material itself"


def test_until_on_a_messages_tool_returning_a_list_returns_the_list():
    payload = [{"role": "user", "content": "doc one"}, {"role": "user", "content": "doc two"}]
    tool = fn_tool("fetch", lambda: payload, result="messages")
    engine = make([call("fetch")], tools={"fetch": tool}, until=("fetch",))
    result = go(engine.run("go"))
    assert result.output == payload and "delivered as" not in result.until_result
    assert "doc two" in result.until_result


def test_until_on_a_tool_result_with_messages_returns_its_messages():
    tool = fn_tool("fetch", lambda: ToolResult(None, messages=["read this"]))
    engine = make([call("fetch")], tools={"fetch": tool}, until=("fetch",))
    assert go(engine.run("go")).output == ["read this"]
