"""The agent loop on the scripted provider: budget, until, truncation, retry, validation, repair, finals."""

from __future__ import annotations

from plait.runtime.outcomes import CONTINUE, Pause
from plait.runtime.pipeline import TURN_STEPS, run_turn
from plait.runtime.providers.base import ProviderError
from plait.runtime.tools import ToolResult
from runtime_helpers import call, fn_tool, go, make, schema, texts


def adder(calls: list | None = None):
    def add(a: int, b: int) -> int:
        if calls is not None:
            calls.append((a, b))
        return a + b

    return fn_tool("add", add, schema(a="integer", b="integer"))


def test_turn_steps_are_the_documented_pipeline_in_order():
    assert [s.__name__ for s in TURN_STEPS] == [
        "check_budget",
        "expand_messages",
        "call_model",
        "check_interrupts",
        "run_tools",
        "propagate_state",
        "check_until",
        "loop_boundary",
    ]


def test_run_turn_passes_a_terminal_result_through_and_skips_later_steps():
    seen = []

    async def first(run, ctx):
        seen.append("first")
        return CONTINUE

    async def pausing(run, ctx):
        return Pause("draining node")

    async def never(run, ctx):
        seen.append("never")
        return CONTINUE

    class Run:
        resume_at = None

    run = Run()
    outcome = go(run_turn(run, None, None, (first, pausing, never)))
    # The resume point is the step's name: a stored run survives steps being added or reordered.
    assert outcome == Pause("draining node") and seen == ["first"] and run.resume_at == "pausing"
    seen.clear()
    assert go(run_turn(run, None, "pausing", (never, first, pausing))) == Pause("draining node") and seen == []


def test_tool_loop_runs_tool_and_returns_final_answer():
    engine = make([call("add", a=2, b=3), {"text": "5"}], tools={"add": adder()})
    result = go(engine.run("2+3?"))
    assert (result.stop_reason, result.output) == ("done", "5")
    assert result.report.tool_calls[0]["name"] == "add" and result.report.model_calls == 2
    second = engine.providers["m"].requests[1]
    assert texts(second)[-1] == ("tool", "5")


def test_max_steps_counts_model_calls_and_last_response_still_runs_its_tools():
    calls: list = []
    engine = make(
        [call("add", a=1, b=1), call("add", a=2, b=2), {"text": "never"}], tools={"add": adder(calls)}, max_steps=2
    )
    result = go(engine.run("go"))
    assert result.stop_reason == "max_steps"
    assert result.output == "stopped: reached max_steps (2)"
    assert result.report.model_calls == 2 and calls == [(1, 1), (2, 2)]


def test_last_permitted_response_can_satisfy_until():
    engine = make(
        [call("add", a=1, b=1), call("submit", title="t")],
        max_steps=2,
        until=("submit",),
        tools={"add": adder(), "submit": fn_tool("submit", lambda title: f"submitted {title}", schema(title="string"))},
    )
    result = go(engine.run("go"))
    assert result.stop_reason == "until" and result.until_result == "submitted t" and result.output == "submitted t"


def test_until_succeeded_keeps_looping_on_an_error_result():
    attempts = []

    def submit(title: str):
        attempts.append(title)
        if title == "bad":
            raise ValueError("title rejected")
        return "ok"

    tools = {"submit": fn_tool("submit", submit, schema(title="string"))}
    engine = make(
        [call("submit", title="bad"), call("submit", title="good")],
        tools=tools,
        until=("submit",),
        until_succeeded=True,
    )
    result = go(engine.run("go"))
    assert result.stop_reason == "until" and attempts == ["bad", "good"] and result.until_result == "ok"
    # Without `succeeded` the first (error) result already ends the run.
    engine = make([call("submit", title="bad")], tools=tools, until=("submit",))
    result = go(engine.run("go"))
    assert result.stop_reason == "until" and "title rejected" in result.until_result


def test_model_stopping_without_calling_until_tool_is_an_error_naming_targets():
    engine = make([{"text": "done, I think"}], tools={"add": adder()}, until=("add",))
    result = go(engine.run("go"))
    assert result.stop_reason == "error"
    assert result.error.kind == "until_tool_not_called" and "`add`" in result.error.message


def test_truncated_response_ends_run_and_its_tool_calls_never_run():
    calls: list = []
    for finish in ("length", "content_filter"):
        engine = make(
            [
                {
                    "text": "partial",
                    "tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}],
                    "finish_reason": finish,
                }
            ],
            tools={"add": adder(calls)},
        )
        result = go(engine.run("go"))
        assert result.stop_reason == "done" and result.finish_reason == finish and result.output == "partial"
        assert [w["code"] for w in result.report.warnings] == ["response_truncated"]
    assert calls == []


def test_unknown_finish_reasons_pass_through():
    engine = make([{"text": "hi", "finish_reason": "TOO_MANY_TOOL_CALLS"}])
    result = go(engine.run("go"))
    assert (
        result.finish_reason == "too_many_tool_calls"
        and result.report.steps[0]["finish_reason"] == "too_many_tool_calls"
    )


def test_malformed_call_is_never_executed_and_gets_an_error_result():
    calls: list = []
    bad = {"tool_calls": [{"name": "add", "raw_arguments": '{"a": 2'}]}
    engine = make([bad, {"text": "sorry"}], tools={"add": adder(calls)})
    result = go(engine.run("go"))
    assert calls == [] and result.output == "sorry"
    assert result.report.steps[0]["finish_reason"] == "malformed_tool_call"
    tool_msg = engine.providers["m"].requests[1]["messages"][-1]
    assert tool_msg.role == "tool" and tool_msg.is_error and "not valid JSON" in tool_msg.text


def test_reflect_and_retry_injects_guidance_and_drops_the_failed_turn():
    bad = {"tool_calls": [{"name": "add", "raw_arguments": '{"a": 2'}]}
    engine = make([bad, call("add", a=2, b=2), {"text": "4"}], tools={"add": adder()}, retry_malformed=2)
    result = go(engine.run("go"))
    assert result.output == "4"
    retry = engine.providers["m"].requests[1]
    roles = [m.role for m in retry["messages"]]
    assert roles == ["user", "user"], "the malformed assistant turn must not be appended"
    assert (
        "Attempt 1 of 2" in retry["messages"][-1].text and "Do not repeat the same call" in retry["messages"][-1].text
    )
    assert "malformed_tool_call_retried" in [w["code"] for w in result.report.warnings]


def test_reflect_and_retry_counts_consecutively_and_fails_clearly_when_spent():
    bad = {"tool_calls": [{"name": "add", "raw_arguments": "{"}]}
    # bad, good, bad, good: a success clears the streak, so a budget of 1 suffices.
    engine = make(
        [bad, call("add", a=1, b=1), bad, call("add", a=1, b=1), {"text": "2"}],
        tools={"add": adder()},
        retry_malformed=1,
    )
    assert go(engine.run("go")).output == "2"
    engine = make([bad, bad, {"text": "unreached"}], tools={"add": adder()}, retry_malformed=1)
    result = go(engine.run("go"))
    assert result.stop_reason == "error" and result.error.kind == "malformed_tool_call"
    assert "retry_malformed = 1" in result.error.message and "2 times in a row" in result.error.message


def test_invalid_arguments_are_refused_with_the_documented_wording():
    calls: list = []
    engine = make([call("add", a="two", b=2), {"text": "fixed"}], tools={"add": adder(calls)})
    result = go(engine.run("go"))
    refusal = engine.providers["m"].requests[1]["messages"][-1]
    assert calls == [] and refusal.is_error
    assert (
        refusal.text
        == 'Invalid arguments for "add": $.a: expected integer, got string.\nCall the tool again with arguments matching its schema.'
    )
    assert [w["code"] for w in result.report.warnings] == ["tool_arguments_invalid"]
    assert result.report.tool_calls[0]["is_error"] is True


def test_validation_is_full_json_schema_and_can_be_turned_off():
    params = {
        "type": "object",
        "properties": {"city": {"type": "string", "minLength": 3}},
        "required": ["city"],
        "additionalProperties": False,
    }
    tool = fn_tool("lookup", lambda city: city, params)
    engine = make([call("lookup", city="NY", extra=1), {"text": "x"}], tools={"lookup": tool})
    go(engine.run("go"))
    text = engine.providers["m"].requests[1]["messages"][-1].text
    assert "$.city: 'NY' is too short" in text and "Additional properties are not allowed" in text
    engine = make([call("lookup", city=5), {"text": "x"}], tools={"lookup": tool}, validate_arguments=False)
    result = go(engine.run("go"))
    assert result.report.tool_calls[0]["is_error"] is False and not result.report.warnings


def test_tool_state_updates_merge_into_run_state():
    def remember(key: str, value: str):
        return ToolResult(f"stored {key}", state={key: value})

    engine = make(
        [
            {
                "tool_calls": [
                    {"name": "remember", "arguments": {"key": "city", "value": "Oslo"}},
                    {"name": "remember", "arguments": {"key": "unit", "value": "C"}},
                ]
            },
            {"text": "ok"},
        ],
        tools={"remember": fn_tool("remember", remember, schema(key="string", value="string"))},
    )
    run = engine.start("go")
    go(run)
    assert run.ctx.state == {"city": "Oslo", "unit": "C"}


def test_result_messages_expand_on_the_very_next_call_with_the_tools_role():
    def fetch():
        return [{"role": "user", "content": "the document body"}]

    tool = fn_tool("fetch", fetch, result="messages")
    engine = make([call("fetch"), {"text": "read it"}], tools={"fetch": tool})
    go(engine.run("go"))
    after = texts(engine.providers["m"].requests[1])
    assert after[-2][0] == "tool" and "delivered as 1 message" in after[-2][1]
    assert after[-1] == ("user", "the document body")


def test_a_run_ending_on_until_expands_nothing():
    tool = fn_tool("fetch", lambda: "material", result="messages")
    engine = make([call("fetch")], tools={"fetch": tool}, until=("fetch",))
    run = engine.start("go")
    result = go(run)
    assert result.stop_reason == "until"
    messages = run.ctx.runs["main"].messages
    assert messages[-1].role == "tool" and run.ctx.runs["main"].expand  # still waiting, never spliced in


def test_final_answer_drops_commentary_parts():
    engine = make(
        [{"parts": [{"text": "Let me think. ", "phase": "commentary"}, {"text": "42", "phase": "final_answer"}]}]
    )
    assert go(engine.run("q")).output == "42"


def test_provider_error_ends_run_as_error_with_readable_report():
    engine = make([call("add", a=1, b=1), {"error": {"kind": "auth", "message": "bad key"}}], tools={"add": adder()})
    result = go(engine.run("go"))
    assert result.stop_reason == "error" and isinstance(result.error, ProviderError)
    data = result.to_dict()
    assert data["error"] == {
        "type": "ProviderError",
        "kind": "auth",
        "message": "bad key",
        "model": "m",
        "provider": "scripted",
    }
    assert data["tool_calls"][0]["name"] == "add" and data["model_calls"] == 1


def test_model_timeout_is_a_provider_error_of_kind_timeout():
    engine = make([{"text": "slow", "delay": "300ms"}], model_options={"m": {"timeout": 0.05}})
    result = go(engine.run("go"))
    assert isinstance(result.error, ProviderError) and result.error.kind == "timeout"
    assert engine.providers["m"].requests[0]["timeout"] == 0.05


def test_pause_hook_pauses_with_reason_and_resume_continues():
    flags = ["draining"]
    engine = make([{"text": "done"}])
    engine.should_pause = lambda: flags.pop() if flags else False
    run = engine.start("go")
    result = go(run)
    assert (result.stop_reason, result.pause_reason) == ("pause", "draining")
    result = go(run.resume())
    assert (result.stop_reason, result.output) == ("done", "done")


def test_script_exhaustion_names_model_and_agent():
    engine = make([])
    result = go(engine.run("go"))
    assert result.error.kind == "invalid_request"
    assert "`m`" in result.error.message and "`main`" in result.error.message and "used up" in result.error.message


def test_unknown_tool_name_gets_an_error_result():
    engine = make([call("nope"), {"text": "ok"}], tools={"add": adder()})
    go(engine.run("go"))
    msg = engine.providers["m"].requests[1]["messages"][-1]
    assert msg.is_error and "unknown tool `nope`" in msg.text and "`add`" in msg.text


def test_a_providers_own_timeout_error_is_reported_the_same_with_or_without_a_listener():
    class TimesOut:
        name = "m"

        async def complete(self, request):
            raise TimeoutError("upstream gave up")

        async def aclose(self):
            pass

    def outcome(listen: bool):
        engine = make([{"text": "unused"}])
        engine.providers["m"] = TimesOut()
        if listen:
            engine.observe("model_call_start", lambda e: None)
        result = go(engine.run("go"))
        return result.stop_reason, type(result.error).__name__, str(result.error)

    assert outcome(listen=True) == outcome(listen=False)
    assert outcome(listen=True)[1] == "TimeoutError"
