"""Budgets at run time: a call that would go over does not start; `fail` ends the run, `pause` stops it for a
person who raises the limit on resume; nested budgets; budgets inside a map and a parallel; unpriced models.

Prices come from the spec's own `price` (USD per million tokens) and usage from the scripted replies, so the
numbers here never change with an upstream catalogue.
"""

from __future__ import annotations

import asyncio
import json

import pytest

import plait
from plait.cli import main
from plait.runtime.engine import Engine
from plait.runtime.errors import AgentError

# $1 per million input tokens, $2 per million output: 10,000 in + 5,000 out = $0.02.
HEAD = 'model m = "scripted/m" { script = "replies.json", price = { input = 1.0, output = 2.0 } }\n'
TOOLS = "def look(**kw):\n    return 'found'\n"
BIG = {"input_tokens": 10000, "output_tokens": 5000}  # $0.02
SMALL = {"input_tokens": 1000, "output_tokens": 100}  # $0.0012


def project(tmp_path, body, replies):
    (tmp_path / "spec.plait").write_text(HEAD + body)
    (tmp_path / "replies.json").write_text(json.dumps(replies))
    (tmp_path / "budget_tools.py").write_text(TOOLS)
    return tmp_path / "spec.plait"


def engine(spec):
    return Engine.from_spec(spec)


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


WORKER = """
tool look "Look something up." {{ run = python("budget_tools:look") }}
agent worker {{ model = m, tools = [look], budget = {budget} }}
step sum {{ model = m, prompt = "Sum: {{{{input}}}}" }}
chain main = worker -> sum
"""
# The worker calls a tool ($0.02), then answers ($0.0012); the step sums ($0.0012).
WORKER_REPLIES = [
    {"tool_calls": [{"name": "look", "arguments": {}}], "usage": BIG},
    {"text": "worker done", "usage": SMALL},
    {"text": "summed", "usage": SMALL},
]


def test_cost_is_reported_per_call_per_runnable_and_per_run(tmp_path):
    spec = project(tmp_path, WORKER.format(budget="{ usd = 1.00 }"), WORKER_REPLIES)
    result = plait.run(engine(spec), "hi")
    data = result.to_dict()
    assert [s["cost_usd"] for s in data["steps"]] == pytest.approx([0.02, 0.0012, 0.0012])
    assert data["usage"]["cost_usd"] == pytest.approx(0.0224) and data["usage"]["unpriced_calls"] == 0
    assert data["runnables"]["worker"]["cost_usd"] == pytest.approx(0.0212)
    assert data["runnables"]["sum"] == {
        "model_calls": 1,
        "input_tokens": 1000,
        "output_tokens": 100,
        "cost_usd": 0.0012,
    }
    assert data["runnables"]["main"]["model_calls"] == 3
    [scope] = data["budget"]["scopes"]
    assert scope["runnable"] == "worker" and scope["spent"]["usd"] == pytest.approx(0.0212)
    assert scope["spent"]["model_calls"] == 2 and scope["spent"]["tokens"] == 16100


def test_fail_ends_the_run_before_the_call_that_would_go_over(tmp_path):
    spec = project(tmp_path, WORKER.format(budget="{ usd = 0.02, on_exceeded = fail }"), WORKER_REPLIES)
    with pytest.raises(AgentError) as failed:
        plait.run(engine(spec), "hi")
    assert failed.value.kind == "budget_exceeded"
    assert "the budget of `worker` would be exceeded: $0.0200 spent of $0.0200" in failed.value.message
    report = failed.value.report
    assert report["model_calls"] == 1  # the second call never started
    assert report["budget"]["exceeded"]["limit"] == "usd"


def test_fail_exits_6_from_the_command_line(tmp_path, capsys):
    spec = project(tmp_path, WORKER.format(budget="{ model_calls = 1, on_exceeded = fail }"), WORKER_REPLIES)
    code, _, err = cli(capsys, "run", spec, "--input", "hi")
    assert code == 6
    assert "budget_exceeded" in err and "1 model calls spent of 1 model calls" in err


def test_pause_is_raised_on_resume_and_what_was_spent_is_kept(tmp_path, capsys):
    spec = project(tmp_path, WORKER.format(budget="{ usd = 0.02 }"), WORKER_REPLIES)
    code, out, err = cli(capsys, "run", spec, "--input", "hi", "--json")
    assert code == 3, err
    paused = json.loads(out)
    assert paused["stop_reason"] == "pause" and "the budget of `worker`" in paused["pause_reason"]
    assert paused["budget"]["exceeded"]["scope"] == "main/worker"
    run_id = paused["run_id"]

    # A raise that is still too small pauses again, at the same place, without calling the model.
    code, out, err = cli(capsys, "resume", run_id, "--dir", tmp_path, "--budget", "usd=0.01", "--json")
    assert code == 3, err
    assert json.loads(out)["model_calls"] == 1

    code, out, err = cli(capsys, "resume", run_id, "--dir", tmp_path, "--budget", "usd=0.05", "--json")
    assert code == 0, err
    done = json.loads(out)
    assert done["output"] == "summed"
    [scope] = done["budget"]["scopes"]
    # The journal's replayed call counts again against the rebuilt budget: spent is the whole run's, not a restart.
    assert scope["limits"]["usd"] == 0.05 and scope["spent"]["usd"] == pytest.approx(0.0212)
    raises = [d for d in done["decisions"] if d["kind"] == "budget"]
    assert [d["items"] for d in raises] == [{"usd": 0.01}, {"usd": 0.05}]


def test_a_bad_budget_on_the_command_line_is_a_usage_error(tmp_path, capsys):
    spec = project(tmp_path, WORKER.format(budget="{ usd = 1.00 }"), WORKER_REPLIES)
    code, _, err = cli(capsys, "run", spec, "--input", "hi", "--budget", "dollars=5")
    assert code == 2 and "`dollars` is not a budget key" in err
    code, _, err = cli(capsys, "run", spec, "--input", "hi", "--budget", "usd=lots")
    assert code == 2 and "budget `usd` must be a number" in err


def test_the_runs_own_budget_holds_every_call(tmp_path, capsys):
    spec = project(tmp_path, WORKER.format(budget="{ usd = 1.00 }"), WORKER_REPLIES)
    code, out, err = cli(capsys, "run", spec, "--input", "hi", "--json", "--budget", "tokens=15000")
    assert code == 3, err
    paused = json.loads(out)
    assert "the run's budget would be exceeded: 15000 tokens spent of 15000 tokens" in paused["pause_reason"]
    assert paused["model_calls"] == 1 and paused["budget"]["scopes"][0]["path"] == []


def test_a_nested_budget_gets_only_what_is_left_of_its_parents(tmp_path):
    # The loop may spend $0.03 in all; each iteration's agent may spend $0.025 on its own. The first iteration
    # spends $0.02, so the second one's first call ($0.02 more) is refused by the loop's budget, not the agent's.
    body = """
agent worker {
  model  = m
  budget = { usd = 0.025, on_exceeded = fail }
  output { verdict: "yes" | "no" }
}
loop again = worker { until = verdict == "no", max_iterations = 3, budget = { usd = 0.03, on_exceeded = fail } }
"""
    big = "x" * 40000  # about 10,000 tokens of input, as the estimate counts them
    replies = [{"output": {"verdict": "yes"}, "usage": BIG}] * 3
    spec = project(tmp_path, body, replies)
    with pytest.raises(AgentError) as failed:
        plait.run(engine(spec), big)
    assert failed.value.kind == "budget_exceeded"
    assert "the budget of `again` would be exceeded: $0.0200 spent of $0.0300" in failed.value.message
    assert failed.value.report["model_calls"] == 1


def test_a_budget_hit_inside_a_map_fails_the_run_even_when_the_map_collects(tmp_path):
    body = """
input { items: list[string] }
step each { model = m, prompt = "Say {{input}}" }
map all = each { over = run.input.items, concurrency = 1, on_error = collect, budget = { model_calls = 2, on_exceeded = fail } }
"""
    spec = project(tmp_path, body, [{"text": "one", "usage": SMALL}, {"text": "two", "usage": SMALL}, {"text": "3"}])
    with pytest.raises(AgentError) as failed:
        plait.run(engine(spec), {"items": ["a", "b", "c"]})
    assert failed.value.kind == "budget_exceeded" and "the budget of `all`" in failed.value.message
    assert failed.value.report["model_calls"] == 2


def test_a_budget_hit_inside_a_map_pauses_and_a_raise_finishes_it(tmp_path):
    body = """
input { items: list[string] }
step each { model = m, prompt = "Say {{input}}" }
map all = each { over = run.input.items, concurrency = 1, budget = { model_calls = 2 } }
"""
    spec = project(tmp_path, body, [{"text": "one"}, {"text": "two"}, {"text": "three"}])
    run = engine(spec).start({"items": ["a", "b", "c"]})

    async def go():
        first = await run
        assert first.stop_reason == "pause" and "2 model calls spent of 2 model calls" in first.pause_reason
        second = await run.resume(budget={"model_calls": 3})
        return first, second

    first, second = asyncio.run(go())
    assert second.stop_reason == "done" and second.output == ["one", "two", "three"]
    assert second.report.model_calls == 3


def test_parallel_branches_that_check_at_once_cannot_both_take_the_last_call(tmp_path):
    # Both branches ask before either is answered: what the first holds counts for the second.
    body = """
step a { model = m, prompt = "A {{input}}" }
step b { model = m, prompt = "B {{input}}" }
parallel both = [a, b] { on_error = collect, budget = { model_calls = 1, on_exceeded = fail } }
"""
    spec = project(
        tmp_path, body, {"a": [{"text": "from a", "delay": "20ms"}], "b": [{"text": "from b", "delay": "20ms"}]}
    )
    with pytest.raises(AgentError) as failed:
        plait.run(engine(spec), "go")
    assert failed.value.kind == "budget_exceeded" and "the budget of `both`" in failed.value.message


def test_parallel_branches_share_the_parallels_budget(tmp_path):
    body = """
step a { model = m, prompt = "A {{input}}" }
step b { model = m, prompt = "B {{input}}" }
parallel both = [a, b] { budget = { model_calls = 2 } }
"""
    spec = project(tmp_path, body, {"a": [{"text": "from a"}], "b": [{"text": "from b"}]})
    result = plait.run(engine(spec), "go")
    assert result.output == {"a": "from a", "b": "from b"}
    [scope] = result.report.to_dict()["budget"]["scopes"]
    assert scope["spent"]["model_calls"] == 2


def test_an_unpriced_model_allowed_in_a_budget_counts_tokens_but_no_dollars(tmp_path):
    (tmp_path / "spec.plait").write_text(
        'model free = "scripted/free" { script = "replies.json" }\n'
        "agent main { model = free, budget = { usd = 0.01, tokens = 20000, unpriced = allow } }\n"
    )
    (tmp_path / "replies.json").write_text(json.dumps([{"text": "ok", "usage": BIG}]))
    result = plait.run(Engine.from_spec(tmp_path / "spec.plait"), "hi")
    data = result.to_dict()
    assert data["steps"][0]["cost_usd"] is None and data["usage"]["unpriced_calls"] == 1
    [scope] = data["budget"]["scopes"]
    assert scope["spent"] == {"usd": 0.0, "tokens": 15000, "model_calls": 1, "unpriced_calls": 1}


def test_an_unpriced_model_in_a_usd_budget_does_not_check(tmp_path, capsys):
    (tmp_path / "spec.plait").write_text(
        'model free = "scripted/free" { script = "replies.json" }\nagent main { model = free, budget = { usd = 0.01 } }\n'
    )
    (tmp_path / "replies.json").write_text("[]")
    code, out, _ = cli(capsys, "check", tmp_path / "spec.plait")
    assert code == 1 and "P360" in out and "which has no price" in out


def test_cost_is_in_runs_trace_and_batch(tmp_path, capsys, monkeypatch):
    spec = project(tmp_path, WORKER.format(budget="{ usd = 1.00 }"), WORKER_REPLIES)
    assert cli(capsys, "run", spec, "--input", "hi")[0] == 0
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, "runs", "--json")
    [row] = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and row["cost_usd"] == pytest.approx(0.0224)
    code, out, _ = cli(capsys, "runs")
    assert out.splitlines()[0].split()[-1] == "COST" and out.splitlines()[1].split()[-1] == "$0.0224"
    code, out, _ = cli(capsys, "trace", row["id"], "--json")
    trace = json.loads(out)
    assert trace["run"]["cost_usd"] == pytest.approx(0.0224)
    calls = [item for item in trace["timeline"] if item["kind"] == "model_call"]
    assert [c["cost_usd"] for c in calls] == pytest.approx([0.02, 0.0012, 0.0012])
    code, out, _ = cli(capsys, "trace", row["id"])
    assert "10000+5000 tokens  $0.0200" in out and "$0.0224" in out.splitlines()[0]

    (tmp_path / "rows.jsonl").write_text('"a"\n"b"\n')
    (tmp_path / "replies.json").write_text(json.dumps([{"text": "ok", "usage": SMALL}]))
    (tmp_path / "one.plait").write_text(HEAD + "agent main { model = m }\n")
    code, out, err = cli(capsys, "batch", tmp_path / "one.plait", tmp_path / "rows.jsonl")
    assert code == 0, err
    assert [json.loads(line)["cost_usd"] for line in out.splitlines()] == [0.0012, 0.0012]
    assert err.strip().endswith("cost $0.0024")


def test_an_unpriced_run_lists_no_cost(tmp_path, capsys, monkeypatch):
    (tmp_path / "spec.plait").write_text(
        'model free = "scripted/free" { script = "replies.json" }\nagent main { model = free }\n'
    )
    (tmp_path / "replies.json").write_text(json.dumps([{"text": "ok", "usage": SMALL}]))
    assert cli(capsys, "run", tmp_path / "spec.plait", "--input", "hi")[0] == 0
    monkeypatch.chdir(tmp_path)
    [row] = [json.loads(line) for line in cli(capsys, "runs", "--json")[1].splitlines()]
    assert row["cost_usd"] is None


def test_the_progress_view_shows_each_calls_cost_the_total_and_a_budget_stop(tmp_path, capsys):
    from plait.cli.live import Tally
    from plait.runtime.events import Event

    spec = project(tmp_path, WORKER.format(budget="{ usd = 0.02 }"), WORKER_REPLIES)
    code, _, err = cli(capsys, "run", spec, "--input", "hi")
    assert code == 3
    assert "worker: step 1 (m) tool_calls $0.0200" in err
    assert "budget: the budget of `worker` would be exceeded" in err
    tally = Tally()
    for cost in (0.02, None, 0.0012):
        tally.add(Event("step_end", ("main",), {"input_tokens": 1, "output_tokens": 1, "cost_usd": cost}))
    assert tally.counts().endswith("6 tokens (3 in, 3 out) · $0.0212")


def test_events_carry_each_calls_cost_and_the_budget_stop(tmp_path, capsys):
    spec = project(tmp_path, WORKER.format(budget="{ usd = 0.02 }"), WORKER_REPLIES)
    code, out, _ = cli(capsys, "run", spec, "--input", "hi", "--events")
    assert code == 3
    events = [json.loads(line) for line in out.splitlines()]
    [step_end] = [e for e in events if e["type"] == "step_end"]
    assert step_end["cost_usd"] == pytest.approx(0.02)
    [stop] = [e for e in events if e["type"] == "budget_exceeded"]
    assert stop["runnable"] == "worker" and stop["limit"] == "usd" and stop["on_exceeded"] == "pause"
    [end] = [e for e in events if e["type"] == "run_end"]
    assert end["usage"]["cost_usd"] == pytest.approx(0.02) and end["budget"]["exceeded"]["scope"] == "main/worker"


def test_the_python_api_takes_the_runs_budget_and_a_raise(tmp_path):
    spec = project(tmp_path, WORKER.format(budget="{ usd = 1.00 }"), WORKER_REPLIES)
    with pytest.raises(AgentError) as failed:
        plait.run(spec, "hi", budget={"model_calls": 1, "on_exceeded": "fail"})
    assert failed.value.kind == "budget_exceeded" and "the run's budget" in failed.value.message

    async def go():
        run = plait.arun(spec, "hi", budget={"model_calls": 2})
        first = await run
        second = await run.resume(budget={"model_calls": 3})
        await run.engine.aclose()
        return first, second

    first, second = asyncio.run(go())
    assert first.stop_reason == "pause" and second.stop_reason == "done" and second.output == "summed"
    with pytest.raises(ValueError, match="`dollars` is not a budget key"):
        plait.run(spec, "hi", budget={"dollars": 1})


def test_a_budget_hit_inside_a_parallel_pauses_and_a_raise_finishes_it(tmp_path):
    # One branch's agent has spent its budget after its first call; the other branch finishes meanwhile.
    body = """
tool look "Look something up." { run = python("budget_tools:look") }
agent a { model = m, tools = [look], budget = { model_calls = 1 } }
step b { model = m, prompt = "B {{input}}" }
parallel both = [a, b]
"""
    replies = {
        "a": [{"tool_calls": [{"name": "look", "arguments": {}}]}, {"text": "from a"}],
        "b": [{"text": "from b"}],
    }
    spec = project(tmp_path, body, replies)

    async def go():
        run = engine(spec).start("go")
        first = await run
        second = await run.resume(budget={"model_calls": 2})
        return first, second

    first, second = asyncio.run(go())
    assert first.stop_reason == "pause" and "the budget of `a`" in first.pause_reason
    assert second.stop_reason == "done" and second.output == {"a": "from a", "b": "from b"}
    assert second.report.model_calls == 3  # b was not asked again
