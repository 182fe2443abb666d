"""Hand-off (plait 0.3): an agent with `handoff = [...]` is offered a `transfer_to_NAME` tool per target; calling
one ends its run and the target runs with the agent's own input, its output the agent's; the choice is a decision,
kept across a resume; the compiler types the agent's output as the union of its own and its targets', like a
route's, and finds a hand-off that contains itself."""

from __future__ import annotations

import asyncio

import plait
from plait.runtime.engine import Engine
from spec_helpers import write_spec

SPEC = """
plait 0.3
step billing "Answer billing questions." { model = m, prompt = "Billing: {{input}}" }

ask confirm "Refund {{input}}?" { answer { ok: bool } }

step refunds { model = m, prompt = "Refund: {{input}}", output { amount: int } }

chain refund_flow = confirm -> refunds

agent triage {
  model   = m
  system  = "Route the customer."
  handoff = [billing, refund_flow]
}

step after { model = m, prompt = "Done: {{input}}" }

chain main = triage -> after
"""


def spy(engine: Engine) -> list[tuple[str | None, str, list[str]]]:
    """(agent, last message's text, tool names offered) per model call, as sent."""
    sent: list[tuple[str | None, str, list[str]]] = []
    provider = engine._make_provider("m")
    for_run = provider.for_run

    def spied(**options):
        view = for_run(**options)
        original = view.complete

        async def complete(req):
            sent.append((req.agent, req.messages[-1].text, [t.name for t in req.tools]))
            return await original(req)

        view.complete = complete
        return view

    provider.for_run = spied
    return sent


def test_an_agent_hands_over_its_input_and_its_output_is_the_targets(tmp_path):
    replies = {
        "triage": [{"tool_calls": [{"name": "transfer_to_billing", "arguments": {}}]}],
        "billing": [{"text": "Your invoice is attached."}],
        "after": [{"text": "ok"}],
    }
    engine = Engine.from_spec(write_spec(tmp_path, SPEC, replies))
    sent = spy(engine)
    result = plait.run(engine, "Where is my invoice?", raise_on_error=False)
    assert result.error is None, result.error
    triage, billing, after = sent
    assert triage[0] == "triage" and triage[2] == ["transfer_to_billing", "transfer_to_refund_flow"]
    assert billing == ("billing", "Billing: Where is my invoice?", [])
    assert after[1] == "Done: Your invoice is attached."
    assert [d for d in result.report.decisions if d["kind"] == "handoff"] == [
        {"kind": "handoff", "name": "triage", "path": ["main", "triage"], "target": "billing"}
    ]


def test_an_agent_that_answers_itself_hands_nothing_over(tmp_path):
    replies = {"triage": [{"text": "We are open 9 to 5."}], "after": [{"text": "ok"}]}
    engine = Engine.from_spec(write_spec(tmp_path, SPEC, replies))
    sent = spy(engine)
    result = plait.run(engine, "When are you open?", raise_on_error=False)
    assert result.error is None, result.error
    assert [s[0] for s in sent] == ["triage", "after"] and sent[-1][1] == "Done: We are open 9 to 5."
    assert not [d for d in result.report.decisions if d["kind"] == "handoff"]


def test_a_resumed_run_goes_back_into_the_target_without_asking_the_model_again(tmp_path):
    replies = {
        "triage": [{"tool_calls": [{"name": "transfer_to_refund_flow", "arguments": {}}]}],
        "refunds": [{"output": {"amount": 42}}],
        "after": [{"text": "ok"}],
    }
    engine = Engine.from_spec(write_spec(tmp_path, SPEC, replies))
    sent = spy(engine)

    async def main():
        run = engine.start("Money back please")
        stopped = await run
        assert [p.id for p in stopped.pending] == ["main/triage/refund_flow/confirm"]
        return await engine.restore(run.id).resume(answers={"confirm": {"ok": True}})

    result = asyncio.run(main())
    assert result.error is None, result.error
    assert [s[0] for s in sent] == ["triage", "refunds", "after"]  # triage was not asked a second time
    assert sent[1][1] == 'Refund: {"ok": true}' and sent[2][1] == 'Done: {"amount": 42}'


def test_the_output_is_the_union_of_the_agents_and_its_targets_and_a_text_one_has_no_fields(tmp_path):
    typed = SPEC.replace(
        'prompt = "Billing: {{input}}"', 'prompt = "Billing: {{input}}", output { amount: int, note: string }'
    )
    typed = typed.replace('system  = "Route the customer."', 'system  = "Route."\n  output { amount: int }')
    clean = typed.replace('"Done: {{input}}"', '"Done: {{input.amount}} {{input.note}}"')
    assert [d.code for d in plait.compile(write_spec(tmp_path, clean, {})).diagnostics] == []
    text = SPEC.replace('"Done: {{input}}"', '"Done: {{input.amount}}"')
    assert [d.code for d in plait.compile(write_spec(tmp_path, text, {})).diagnostics] == ["P402"]


def test_a_hand_off_to_a_runnable_that_contains_the_agent_is_a_cycle(tmp_path):
    spec = SPEC.replace("handoff = [billing, refund_flow]", "handoff = [billing, main]")
    codes = [d.code for d in plait.compile(write_spec(tmp_path, spec, {})).diagnostics]
    assert "P304" in codes, codes


def test_trace_words_a_hand_off_and_a_calls_hosted_tools():
    from plait.cli.trace import decision_line, line

    assert (
        decision_line("handoff", "main/triage", {"name": "triage", "target": "billing"}) == "handoff triage → billing"
    )
    item = {
        "kind": "model_call",
        "agent": "researcher",
        "step": 1,
        "model": "m",
        "status": "ok",
        "finish_reason": "stop",
        "text": "Paris.",
        "hosted": {"web_search": {"queries": ["q"], "citations": [{"url": "u"}, {"url": "v"}]}},
    }
    assert line(item).endswith("[web_search: 1 search(es), 2 citation(s)]")
