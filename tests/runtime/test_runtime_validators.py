"""`validate = python("module:function")` on a step's or an agent's `output`: a rejection goes back to the model in
the same conversation with the reason, bounded by `retry_malformed`; then the run fails `output_invalid`
(src/plait/runtime/validators.py, model_call.structured_answer, steps/call_model.py)."""

from __future__ import annotations

import json

import pytest

import plait
from plait.runtime.engine import Engine
from plait.runtime.errors import AgentError

CHECKS = """
def even(answer):
    if answer["count"] % 2:
        raise ValueError(f"count {answer['count']} is odd; it must be even")


def short(answer):
    return None if len(answer) <= 5 else f"{len(answer)} characters is too long; use at most 5"


def broken(answer):
    raise KeyError("oops")
"""

SPEC = """
model m = "scripted/m" { script = "m.replies.json" }

step count {
  model           = m
  prompt          = "Count {{input}}"
  retry_malformed = 2
  validate        = python("checks:even")
  output { count: int }
}
"""


class Seen:
    """A provider that hands each request on and keeps its messages: what the model was sent, call by call."""

    def __init__(self, inner, sent: list) -> None:
        self.inner, self.sent = inner, sent

    async def complete(self, request):
        self.sent.append(list(request.messages))
        return await self.inner.complete(request)

    def for_run(self, *args, **kwargs):  # the scripted provider's per-run copy keeps the watch on
        return Seen(self.inner.for_run(*args, **kwargs), self.sent)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _engine(tmp_path, replies, spec=SPEC, sent=None):
    (tmp_path / "spec.plait").write_text(spec)
    (tmp_path / "checks.py").write_text(CHECKS)
    (tmp_path / "m.replies.json").write_text(json.dumps(replies))
    engine = Engine.from_spec(tmp_path / "spec.plait")
    if sent is not None:
        engine.wrap_provider = lambda model, provider: Seen(provider, sent)
    return engine


def test_a_rejected_answer_is_sent_back_with_the_reason_and_the_retry_is_kept(tmp_path):
    sent: list = []
    engine = _engine(tmp_path, [{"output": {"count": 3}}, {"output": {"count": 4}}], sent=sent)
    result = plait.run(engine, "sheep")
    assert result.output == {"count": 4} and result.report.model_calls == 2
    [warning] = [w for w in result.report.warnings if w["code"] == "output_rejected_retried"]
    assert "count 3 is odd" in warning["message"]
    # The same conversation: the first answer, then the reason, before the second call.
    messages = sent[-1]
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert "your previous answer was rejected: count 3 is odd; it must be even" in messages[-1].text


def test_rejections_past_retry_malformed_fail_the_run_naming_the_validator(tmp_path):
    engine = _engine(tmp_path, [{"output": {"count": n}} for n in (1, 3, 5)])
    with pytest.raises(AgentError) as failed:
        plait.run(engine, "sheep")
    assert failed.value.kind == "output_invalid"
    assert "3 answers in a row did not pass its validator `checks:even`: count 5 is odd" in str(failed.value)


def test_a_text_answer_of_an_agent_is_validated_too(tmp_path):
    spec = SPEC + '\nagent say { model = m, retry_malformed = 1, validate = python("checks:short") }\n'
    sent: list = []
    engine = _engine(tmp_path, [{"text": "far too long"}, {"text": "ok"}], spec, sent)
    result = plait.run(engine, "hi", entry="say")
    assert result.output == "ok"
    assert "12 characters is too long" in sent[-1][-1].text


def test_a_validator_that_crashes_fails_the_run_named(tmp_path):
    engine = _engine(tmp_path, [{"output": {"count": 2}}], SPEC.replace("checks:even", "checks:broken"))
    with pytest.raises(AgentError) as failed:
        plait.run(engine, "sheep")
    assert failed.value.kind == "validator_failed" and "KeyError" in str(failed.value)


def test_a_rejection_is_journaled_and_traced(tmp_path, capsys, monkeypatch):
    from plait.cli import main

    _engine(tmp_path, [{"output": {"count": 3}}, {"output": {"count": 4}}])
    monkeypatch.chdir(tmp_path)
    assert main(["run", "spec.plait", "--input", "sheep", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    [decision] = [d for d in out["decisions"] if d["kind"] == "validate"]
    assert decision["answer"] == 1 and decision["validator"] == "checks:even"
    assert main(["trace", out["run_id"]]) == 0
    assert "check  count answer 1 rejected by checks:even: count 3 is odd; it must be even" in capsys.readouterr().out
