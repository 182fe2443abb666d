"""plait against a real model server (llama-server, SmolLM2-135M-Instruct) on loopback: every shape of run.

The assertions are about behaviour (what ran, in which order, with which shape of output), not
the words a 135M model happens to choose: at temperature 0 llama.cpp samples greedily, so where a
test compares two replies it compares the model with itself, never with a text written here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from realmodel.runner import plait, write_spec
from realmodel.llama import Server

pytestmark = pytest.mark.slow


def test_a_step_gets_the_models_answer(llama: Server, tmp_path: Path) -> None:
    write_spec(tmp_path, llama, 'step hello { model = local, prompt = "Say hello to {{input}} in one sentence." }\n')
    ran = plait(tmp_path, "run", "spec.plait", "--input", "Ada", "--json")
    assert ran.code == 0, ran.stderr
    report = ran.report
    assert report["stop_reason"] == "done" and report["model_calls"] == 1
    assert isinstance(report["output"], str) and report["output"].strip()
    (step,) = report["steps"]
    assert step["finish_reason"] == "stop"
    assert step["input_tokens"] > 0 and step["output_tokens"] > 0  # the server's own usage counts reach the report


def test_a_chain_feeds_each_answer_to_the_next_step(llama: Server, tmp_path: Path) -> None:
    write_spec(
        tmp_path,
        llama,
        """step name_it { model = local, prompt = "Name one fruit. Answer with the name only.", max_tokens = 16 }
step describe { model = local, prompt = "Describe {{input}} in one sentence.", max_tokens = 64 }
step shout { run = python("tools:shout") }
chain main = name_it -> describe -> shout
""",
    )
    (tmp_path / "tools.py").write_text("def shout(input: str) -> str:\n    return input.upper()\n")
    ran = plait(tmp_path, "run", "spec.plait", "--json")
    assert ran.code == 0, ran.stderr
    report = ran.report
    assert [s["agent"] for s in report["steps"]] == ["name_it", "describe"]
    # The last element is a code step over the model's text: the output is that text, upper-cased.
    assert report["output"] and report["output"] == report["output"].upper()


def test_a_typed_output_is_a_record_of_the_declared_fields(llama: Server, tmp_path: Path) -> None:
    write_spec(
        tmp_path,
        llama,
        """step person "Describe a person." {
  model  = local
  prompt = "Invent a person called {{input}}. Give their age and their favourite colour."
  max_tokens = 128
  output {
    name:   string
    age:    int
    colour: "red" | "green" | "blue"
  }
}
""",
    )
    ran = plait(tmp_path, "run", "spec.plait", "--input", "Ada", "--json")
    assert ran.code == 0, ran.stderr
    record = ran.report["output"]
    # llama-server turns response_format's JSON Schema into a grammar: the record always fits it.
    assert set(record) == {"name", "age", "colour"}
    assert isinstance(record["name"], str) and isinstance(record["age"], int)
    assert record["colour"] in {"red", "green", "blue"}


def test_a_route_runs_exactly_the_case_the_model_chose(llama: Server, tmp_path: Path) -> None:
    write_spec(
        tmp_path,
        llama,
        """step classify "Sort a message." {
  model  = local
  prompt = "Is this message a greeting or a question? {{input}}"
  max_tokens = 32
  output { kind: "greeting" | "question" }
}
step greet    { run = python("tools:greet") }
step answer   { run = python("tools:answer") }
route reply on input.kind {
  "greeting" -> greet
  "question" -> answer
}
chain main = classify -> reply
""",
    )
    (tmp_path / "tools.py").write_text(
        "def greet(kind: str) -> str:\n    return 'ran greet'\n\ndef answer(kind: str) -> str:\n    return 'ran answer'\n"
    )
    ran = plait(tmp_path, "run", "spec.plait", "--input", "Hello there, friend!", "--json")
    assert ran.code == 0, ran.stderr
    report = ran.report
    (decision,) = [d for d in report["decisions"] if d["kind"] == "route"]
    chosen = {"greeting": "ran greet", "question": "ran answer"}
    # Whichever kind the model picked, the case for that kind (and only it) produced the output.
    assert decision["value"] in chosen, decision
    assert report["output"] == chosen[decision["value"]]


def test_a_map_runs_the_body_once_per_item_in_item_order(llama: Server, tmp_path: Path) -> None:
    write_spec(
        tmp_path,
        llama,
        """input { fruits: list[string] }
step describe { model = local, prompt = "Describe the fruit {{input}} in one short sentence.", max_tokens = 48 }
step tag { run = python("tools:tag") }
map each = describe -> tag { over = run.input.fruits, concurrency = 3 }
""",
    )
    (tmp_path / "tools.py").write_text("def tag(input: str) -> str:\n    return 'tagged:' + input\n")
    fruits = ["apple", "banana", "cherry", "apple"]
    ran = plait(tmp_path, "run", "spec.plait", "--input", json.dumps({"fruits": fruits}), "--json")
    assert ran.code == 0, ran.stderr
    report = ran.report
    out = report["output"]
    assert isinstance(out, list) and len(out) == 4 and report["model_calls"] == 4
    assert all(item.startswith("tagged:") and item[7:].strip() for item in out)  # every item went on to tag
    # Items 0 and 3 are the same fruit: at temperature 0 the model answers them alike, concurrency or not.
    assert out[0] == out[3]
    items = sorted((d["index"], d["status"]) for d in report["decisions"] if d["kind"] == "map")
    assert items == [(0, "done"), (1, "done"), (2, "done"), (3, "done")]


def test_a_loop_goes_round_until_its_condition_or_its_bound(llama: Server, tmp_path: Path) -> None:
    write_spec(
        tmp_path,
        llama,
        """step draft {
  model  = local
  prompt = "Write one sentence about {{input}}. Attempt {{loop.iteration}}; reviewer said: {{loop.last.feedback}}"
  max_tokens = 48
}
step review {
  model  = local
  prompt = "Grade this sentence. Accept it if it is about the sea:\\n{{input}}"
  max_tokens = 64
  output {
    verdict:  "accept" | "revise"
    feedback: string
  }
}
loop polish = draft -> review {
  until          = verdict == "accept"
  max_iterations = 3
  on_exhausted   = last
}
""",
    )
    ran = plait(tmp_path, "run", "spec.plait", "--input", "the sea", "--json")
    assert ran.code == 0, ran.stderr
    report = ran.report
    rounds = [d for d in report["decisions"] if d["kind"] == "loop"]
    assert 1 <= len(rounds) <= 3
    assert report["model_calls"] == 2 * len(rounds)  # draft and review, once each per round
    assert set(report["output"]) == {"verdict", "feedback"}
    # It stopped either because the reviewer accepted or because the bound was reached.
    assert report["output"]["verdict"] == "accept" or len(rounds) == 3


def test_a_batch_runs_every_row_and_keeps_input_order(llama: Server, tmp_path: Path) -> None:
    write_spec(tmp_path, llama, 'step hello { model = local, prompt = "Say hello to {{input}}.", max_tokens = 32 }\n')
    rows = ["Ada", "Grace", "Ada", "Linus"]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ran = plait(tmp_path, "batch", "spec.plait", "in.jsonl", "-o", "out.jsonl", "--concurrency", "4")
    assert ran.code == 0, ran.stderr
    results = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(results) == 4
    assert all(r["stop_reason"] == "done" and r["output"] for r in results), results
    # Rows 0 and 2 have the same input, run concurrently: greedy sampling answers them the same.
    assert results[0]["output"] == results[2]["output"]


def test_a_streamed_step_arrives_in_pieces_that_add_up_to_the_answer(llama: Server, tmp_path: Path) -> None:
    write_spec(
        tmp_path,
        llama,
        'step tell { model = local, prompt = "Tell a short story about {{input}}.", max_tokens = 60 }\n',
    )
    ran = plait(tmp_path, "run", "spec.plait", "--input", "a cat", "--events")
    assert ran.code == 0, ran.stderr
    events = ran.events
    pieces = [e["text"] for e in events if e["type"] == "text"]
    assert len(pieces) > 5  # deltas as the server sent them, not one block at the end
    (end,) = [e for e in events if e["type"] == "run_end"]
    assert "".join(pieces).strip() == end["output"].strip()


def test_a_wrong_base_url_path_names_the_url_it_called(llama: Server, tmp_path: Path) -> None:
    # llama-server answers an unknown path with a JSON "File Not Found" in the API's own error shape.
    wrong = llama.base_url.replace("/v1", "/api/v1")
    (tmp_path / "spec.plait").write_text(
        f'model local = "openai-compatible/smollm2" {{ base_url = "{wrong}", retries = 0 }}\n'
        'step hello { model = local, prompt = "Say hello to {{input}}." }\n'
    )
    ran = plait(tmp_path, "run", "spec.plait", "--input", "Ada")
    assert ran.code == 1
    assert f"POST {wrong}/chat/completions" in ran.stderr and "check base_url" in ran.stderr, ran.stderr


def test_a_prompt_longer_than_the_context_is_a_context_length_error(llama: Server, tmp_path: Path) -> None:
    write_spec(tmp_path, llama, 'step summarise { model = local, prompt = "Summarise: {{input}}", max_tokens = 16 }\n')
    # Far past the server's whole context (--ctx-size), whichever way its slots share it.
    (tmp_path / "long.txt").write_text("apple banana cherry " * 6000)
    ran = plait(tmp_path, "run", "spec.plait", "--input-file", "long.txt", "--json")
    report = ran.report
    assert ran.code == 1 and report["stop_reason"] == "error"
    # llama-server's exceed_context_size_error: a kind `fallback_on` can send to a model with a larger context.
    assert report["error"]["kind"] == "context_length", report["error"]


def test_a_template_without_tools_is_named_when_until_needs_a_tool(llama: Server, tmp_path: Path) -> None:
    # SmolLM2's chat template renders no tools, so llama-server drops them, --jinja or not: the model can only
    # answer in text. The run must fail its contract and say why it probably happened, not look like a choice.
    write_spec(
        tmp_path,
        llama,
        """tool add "Add two integers." {
  params { a: int, b: int }
  run = python("tools:add")
}
agent calc {
  model      = local
  system     = "You are a calculator. Always use the add tool to add numbers."
  tools      = [add]
  until      = add succeeded
  max_steps  = 3
  max_tokens = 128
}
""",
    )
    (tmp_path / "tools.py").write_text("def add(a: int, b: int) -> int:\n    return a + b\n")
    ran = plait(tmp_path, "run", "spec.plait", "--input", "What is 2 + 3?", "--json")
    report = ran.report
    assert ran.code == 1 and report["error"]["kind"] == "until_tool_not_called"
    (warning,) = [w for w in report["warnings"] if w["code"] == "tools_never_called"]
    assert "--jinja" in warning["message"]
