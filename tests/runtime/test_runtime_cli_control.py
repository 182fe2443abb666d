"""`plait run` on a 0.2 spec: --input / --input-file checked against `input`, an ask stops with exit 3, --answer resumes."""

from __future__ import annotations

import io
import json
import sys

from plait.cli import main

SPEC = r"""plait 0.2

model fast = "scripted/fast" { script = "spec.replies.json" }

input {
  ticket:   string
  customer: string
}

step draft { model = fast, prompt = "Reply to {{input.customer}}: {{input.ticket}}" }

ask confirm "Send this reply?\n{{input}}" {
  answer {
    decision: "send" | "drop"
    note: string?
  }
}

step send { model = fast, prompt = "Send it. {{input.note}}" }
step drop { model = fast, prompt = "Drop it." }

route decide on input.decision {
  "send" -> send
  "drop" -> drop
}

chain main = draft -> confirm -> decide
"""

REPLIES = {"draft": [{"text": "Dear Ann"}], "send": [{"text": "sent"}], "drop": [{"text": "dropped"}]}
TICKET = '{"ticket": "broken", "customer": "Ann"}'


def write(tmp_path):
    (tmp_path / "spec.plait").write_text(SPEC)
    (tmp_path / "spec.replies.json").write_text(json.dumps(REPLIES))
    return str(tmp_path / "spec.plait")


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_an_input_that_does_not_fit_is_a_usage_error_naming_the_field(tmp_path, capsys):
    spec = write(tmp_path)
    code, out, err = cli(capsys, "run", spec, "--input", '{"ticket": "x"}')
    assert (
        (code, out) == (2, "")
        and err.strip()
        == "plait: input_invalid: the input does not fit the `input` block: $: field `customer` is missing"
    )
    code, _, err = cli(capsys, "run", spec, "--input", "just text")
    assert code == 2 and "declares `ticket`, `customer`: pass a JSON object" in err


def test_input_file_is_json_when_input_is_declared(tmp_path, capsys):
    spec = write(tmp_path)
    (tmp_path / "in.json").write_text(TICKET)
    code, out, _ = cli(capsys, "run", spec, "--input-file", str(tmp_path / "in.json"), "--json")
    assert code == 3 and json.loads(out)["pending"][0]["question"] == "Send this reply?\nDear Ann"
    (tmp_path / "bad.json").write_text("ticket: broken")
    code, _, err = cli(capsys, "run", spec, "--input-file", str(tmp_path / "bad.json"))
    assert code == 2 and "is not JSON" in err


def test_an_ask_stops_with_exit_3_and_answer_resumes_into_the_route(tmp_path, capsys):
    spec = write(tmp_path)
    code, out, err = cli(capsys, "run", spec, "--input", TICKET, "--json")
    report = json.loads(out)
    assert code == 3 and report["stop_reason"] == "interrupt"
    [pending] = report["pending"]
    assert pending["kind"] == "ask" and pending["id"] == "main/confirm" and "'--answer=confirm={" in err
    code, out, _ = cli(
        capsys,
        "run",
        spec,
        "--resume",
        report["run_id"],
        "--answer",
        'confirm={"decision": "send", "note": "thanks"}',
        "--json",
    )
    report = json.loads(out)
    assert code == 0 and report["output"] == "sent"
    assert [(d["kind"], d.get("case")) for d in report["decisions"]] == [("ask", None), ("route", "send")]


def test_a_bad_answer_is_refused_with_the_reason_and_the_run_still_waits(tmp_path, capsys):
    spec = write(tmp_path)
    run_id = json.loads(cli(capsys, "run", spec, "--input", TICKET, "--json")[1])["run_id"]
    code, out, err = cli(capsys, "run", spec, "--resume", run_id, "--answer", 'confirm={"decision": "maybe"}')
    assert (code, out) == (2, "") and "'maybe' is not one of ['send', 'drop']" in err
    code, out, _ = cli(capsys, "run", spec, "--resume", run_id, "--answer", "confirm=not json")
    assert code == 2
    code, out, err = cli(capsys, "run", spec, "--resume", run_id, "--answer", 'main/confirm={"decision": "drop"}')
    assert (code, out) == (0, "dropped\n"), err


def test_decide_answers_an_ask_as_answer_does(tmp_path, capsys):
    spec = write(tmp_path)
    run_id = json.loads(cli(capsys, "run", spec, "--input", TICKET, "--json")[1])["run_id"]
    code, out, err = cli(capsys, "run", spec, "--resume", run_id, "--decide", 'confirm={"decision": "maybe"}')
    assert (code, out) == (2, "") and "'maybe' is not one of ['send', 'drop']" in err
    code, out, err = cli(capsys, "run", spec, "--resume", run_id, "--decide", 'main/confirm={"decision": "drop"}')
    assert (code, out) == (0, "dropped\n"), err


def test_answer_without_resume_is_a_usage_error(tmp_path, capsys):
    code, _, err = cli(capsys, "run", write(tmp_path), "--answer", "confirm=1")
    assert code == 2 and "--resume" in err


LOOP_SPEC = r"""plait 0.2

model fast = "scripted/fast" { script = "loop.replies.json" }

step draft { model = fast, prompt = "Try {{loop.iteration}}: {{input}}" }

ask check "Good? {{input}}" {
  answer { ok: bool }
}

loop main = draft -> check {
  until          = ok
  max_iterations = 3
}
"""


def test_a_stored_run_resumes_mid_loop_at_the_right_iteration(tmp_path, capsys):
    (tmp_path / "loop.plait").write_text(LOOP_SPEC)
    (tmp_path / "loop.replies.json").write_text(json.dumps({"draft": [{"text": "d1"}, {"text": "d2"}]}))
    spec = str(tmp_path / "loop.plait")
    code, out, _ = cli(capsys, "run", spec, "--input", "x", "--json")
    first = json.loads(out)
    assert code == 3 and first["pending"][0]["id"] == "main/#1/check"
    code, out, _ = cli(capsys, "run", spec, "--resume", first["run_id"], "--answer", 'check={"ok": false}', "--json")
    second = json.loads(out)
    assert (
        code == 3
        and [p["id"] for p in second["pending"]] == ["main/#2/check"]
        and second["pending"][0]["question"] == "Good? d2"
    )
    code, out, _ = cli(capsys, "run", spec, "--resume", first["run_id"], "--answer", 'check={"ok": true}', "--json")
    done = json.loads(out)
    assert code == 0 and done["output"] == {"ok": True} and done["model_calls"] == 2  # each draft made once
    loops = [(d["iteration"], d["holds"]) for d in done["decisions"] if d["kind"] == "loop"]
    assert loops == [(1, False), (2, True)]


def test_at_a_terminal_an_ask_is_asked_until_the_answer_fits(monkeypatch, capsys):
    from plait.cli.answers import ask_answers
    from plait.core.kinds import AskNode
    from plait.core.types import FieldType, LiteralType, ObjectType
    from plait.runtime.program import Program
    from plait.runtime.outcomes import PendingAsk

    answer = ObjectType((FieldType("decision", LiteralType(("send", "drop"))),))
    program = Program(asks={"confirm": AskNode(name="confirm", question="Send?", output=answer)})
    # A choice is asked as its choices: a word that is none of them gets them listed, and the question again.
    monkeypatch.setattr(sys, "stdin", io.StringIO("maybe\nsend\n"))
    answers = ask_answers(
        [PendingAsk("main/confirm", ("main", "confirm"), "confirm", "Send this?", program.asks["confirm"].answer)],
        program,
    )
    assert answers == {"main/confirm": {"decision": "send"}}
    err = capsys.readouterr().err
    assert "Send this?" in err and "1) send, 2) drop" in err and "one of: send, drop (or its number)" in err


MAP_SPEC = r"""plait 0.2

model fast = "scripted/fast" { script = "map.replies.json" }

step write { model = fast, prompt = "Write about {{input}}" }

ask keep "Keep item {{map.index}}: {{input}}?" {
  answer { ok: bool }
}

map main = write -> keep { over = input, concurrency = 2 }
"""


def test_a_stored_run_resumes_mid_map_running_only_the_unfinished_items(tmp_path, capsys):
    (tmp_path / "map.plait").write_text(MAP_SPEC)
    (tmp_path / "map.replies.json").write_text(json.dumps({"write": [{"text": "w0"}, {"text": "w1"}, {"text": "w2"}]}))
    spec = str(tmp_path / "map.plait")
    code, out, _ = cli(capsys, "run", spec, "--input", '["a", "b", "c"]', "--json")
    first = json.loads(out)
    assert code == 3 and sorted(p["id"] for p in first["pending"]) == [
        "main/[0]/keep",
        "main/[1]/keep",
        "main/[2]/keep",
    ]
    code, out, _ = cli(
        capsys,
        "run",
        spec,
        "--resume",
        first["run_id"],
        "--answer",
        'main/[0]/keep={"ok": true}',
        "--answer",
        'main/[2]/keep={"ok": false}',
        "--json",
    )
    second = json.loads(out)
    assert code == 3 and [p["id"] for p in second["pending"]] == ["main/[1]/keep"]
    code, out, _ = cli(capsys, "run", spec, "--resume", first["run_id"], "--answer", 'keep={"ok": true}', "--json")
    done = json.loads(out)
    assert code == 0 and done["output"] == [{"ok": True}, {"ok": True}, {"ok": False}] and done["model_calls"] == 3
    assert sorted(d["index"] for d in done["decisions"] if d["kind"] == "map") == [0, 1, 2]


TEXT_SPEC = r"""plait 0.2

model fast = "scripted/fast" { script = "text.replies.json" }

ask answer "How many seats?"

step book { model = fast, prompt = "Book {{input}} seats" }

chain main = answer -> book
"""


def test_a_text_answer_is_taken_as_written_even_when_it_reads_as_json(tmp_path, capsys):
    (tmp_path / "text.plait").write_text(TEXT_SPEC)
    (tmp_path / "text.replies.json").write_text(json.dumps({"book": [{"text": "booked"}]}))
    spec = str(tmp_path / "text.plait")
    run_id = json.loads(cli(capsys, "run", spec, "--input", "x", "--json")[1])["run_id"]
    code, out, err = cli(capsys, "run", spec, "--resume", run_id, "--answer", "answer=8", "--json")
    done = json.loads(out)
    assert code == 0, err
    assert [d.get("answer") for d in done["decisions"] if d["kind"] == "ask"] == ["8"]
