"""`plait runs fork` and `plait runs diff` on a run that takes a route, loops, maps and stops at an ask; runs pinned
to their spec (a resume or fork under an edited spec goes on only when the edit cannot affect what is left to run).

The spec's scripted model `demo` has exactly the replies the first run uses, so a fork that asked it again would
fail with its script used up: a fork that finishes served every call before its step from the journal. Its tool
appends to effects.txt, so an effect done again shows up as a second line.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from typing import Any

import pytest

from plait.cli import main
from plait.runtime.store import journal_path
from plait.runtime.store.schema import MIGRATIONS

SPEC = """plait 0.2

model demo = "scripted/demo" { script = "demo.json" }
model alt = "scripted/alt" { script = "alt.json" }

tool save "Save a line." {
  params { line: string }
  run = python("forkdiff_tools:save")
}

step classify {
  model = demo
  prompt = "Classify {{input}}"
  output { kind: "short" | "long" }
}

step brief {
  model = demo
  prompt = "Brief {{input.kind}}"
}

agent writer {
  model = demo
  tools = [save]
}

step review {
  model = demo
  prompt = "Grade {{input}}"
  output { verdict: "accept" | "revise" }
}

loop polish = writer -> review {
  until = verdict == "accept"
  max_iterations = 3
}

route pick on input.kind {
  "short" -> brief
  else -> polish
}

step plan {
  model = demo
  prompt = "Plan {{input}}"
  output { items: list[string] }
}

step item {
  model = demo
  prompt = "Do {{input}}"
}

map each = item { over = input.items, concurrency = 1 }

ask confirm "Ship {{input}}?" {
  answer { ok: bool }
}

chain main = classify -> pick -> plan -> each -> confirm
"""

TOOLS = """
def save(line):
    with open("effects.txt", "a") as fh:
        fh.write(line + "\\n")
    return "saved " + line
"""


def text(value: Any) -> dict[str, Any]:
    return {"text": value if isinstance(value, str) else json.dumps(value)}


DEMO = {
    "classify": [text({"kind": "long"})],
    "writer": [{"tool_calls": [{"name": "save", "arguments": {"line": "w1"}}]}, text("draft 1"), text("draft 2")],
    "review": [text({"verdict": "revise"}), text({"verdict": "accept"})],
    "plan": [text({"items": ["a", "b"]})],
    "item": [text("did a"), text("did b")],
}
ALT = {
    "classify": [text({"kind": "short"})],
    "brief": [text("brief it is")],
    "plan": [text({"items": ["x"]})],
    "item": [text("did b, otherwise")],
}

ITEM_B = "main/each/[1]/item#1"


@pytest.fixture
def project(tmp_path, monkeypatch, backend):
    (tmp_path / "spec.plait").write_text(SPEC)
    (tmp_path / "forkdiff_tools.py").write_text(TOOLS)
    (tmp_path / "demo.json").write_text(json.dumps(DEMO))
    (tmp_path / "alt.json").write_text(json.dumps(ALT))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def plait(capsys, backend, *argv: str) -> tuple[int, str, str]:
    """One command with the backend's store; (exit code, stdout, stderr)."""
    code = main([*argv, *backend.cli()])
    out, err = capsys.readouterr()
    return code, out, err


def first_run(capsys, backend) -> str:
    code, out, _ = plait(capsys, backend, "run", "spec.plait", "--input", "go", "--json")
    assert code == 3  # it stops at the ask
    return json.loads(out)["run_id"]


def diff(capsys, backend, a: str, b: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = plait(capsys, backend, "runs", "diff", a, b, "--json")
    return code, json.loads(out)


def test_a_fork_replays_up_to_its_step_and_goes_on_live_there(project, capsys, backend):
    source = first_run(capsys, backend)
    code, out, err = plait(capsys, backend, "runs", "fork", source, "--at", ITEM_B, "--model", "demo=alt", "--json")
    assert code == 3, err  # the fork goes on to the ask, as its source did
    report = json.loads(out)
    fork = report["run_id"]
    assert fork != source and f"run {fork} is a fork of run {source} at {ITEM_B}" in err
    # Everything before the step was served from the journal: `demo` has no reply left, and the tool ran once.
    assert (project / "effects.txt").read_text() == "w1\n"
    assert len(report["steps"]) == 9 and report["steps"][-1]["agent"] == "item"
    code, out, _ = plait(capsys, backend, "trace", fork)
    assert "map    each item 0 done → did a" in out and "map    each item 1 done → did b, otherwise" in out
    code, compared = diff(capsys, backend, source, fork)
    assert code == 1 and not compared["same"]
    first = compared["divergence"]
    assert (first["position"], first["what"], first["a"], first["b"]) == (
        ITEM_B,
        "model",
        "scripted/demo",
        "scripted/alt",
    )
    a, b = compared["runs"]
    assert a["routes"] == b["routes"] == {"main/pick": "else"}
    assert a["loops"] == b["loops"] == {"main/pick/polish": 2}
    assert a["maps"] == b["maps"] == {"main/each": 2}
    assert (a["model_calls"], b["model_calls"], b["fork"]["from"], b["fork"]["replayed_calls"]) == (9, 9, source, 9)
    # The fork is a run like any other: its ask is answered by a resume, and a diff shows the answer.
    code, _, err = plait(capsys, backend, "resume", fork, "--answer", 'confirm={"ok": true}')
    assert code == 0, err
    code, compared = diff(capsys, backend, source, fork)
    assert compared["runs"][1]["asks"] == {"main/confirm": {"ok": True}} and compared["runs"][0]["asks"] == {}


def test_a_fork_at_a_route_takes_the_other_case_and_the_diff_says_where(project, capsys, backend):
    source = first_run(capsys, backend)
    code, out, err = plait(
        capsys, backend, "runs", "fork", source, "--at", "main/classify#1", "--model", "demo=alt", "--json"
    )
    assert code == 3, err
    fork = json.loads(out)["run_id"]
    code, compared = diff(capsys, backend, source, fork)
    first = compared["divergence"]
    assert first["position"] == "main/classify#1" and first["what"] == "model"
    a, b = compared["runs"]
    assert (a["routes"], b["routes"]) == ({"main/pick": "else"}, {"main/pick": "short"})
    assert b["loops"] == {} and b["fork"]["replayed_calls"] == 0
    assert not (project / "effects.txt").read_text().count("w1") > 1
    # The text form says the same, escaped, with the summary beneath.
    code, out, _ = plait(capsys, backend, "runs", "diff", source, fork)
    assert code == 1
    assert "first divergence" in out and "main/classify#1" in out and "it went to another model" in out
    assert "route cases" in out and '"main/pick": "short"' in out


def test_the_diff_names_the_message_a_prompt_edit_changed(project, capsys, backend):
    source = first_run(capsys, backend)
    spec = project / "spec.plait"
    spec.write_text(SPEC.replace('prompt = "Do {{input}}"', 'prompt = "Please do {{input}}"'))
    # The step the fork starts at is not yet run: the edit can affect it, so the fork is refused, the change listed.
    code, out, err = plait(capsys, backend, "runs", "fork", source, "--at", ITEM_B)
    assert code == 5 and "step item: prompt changed" in err and "--accept-changes" in err
    code, out, err = plait(capsys, backend, "runs", "fork", source, "--at", ITEM_B, "--accept-changes", "--json")
    assert code == 3, err
    fork = json.loads(out)["run_id"]
    code, compared = diff(capsys, backend, source, fork)
    first = compared["divergence"]
    assert (first["position"], first["what"], first["index"]) == (ITEM_B, "message", 0)
    assert (first["a"]["text"], first["b"]["text"]) == ("Do b", "Please do b")
    code, out, _ = plait(capsys, backend, "runs", "diff", source, fork)
    assert "message 1 differs" in out and "'Do b'" in out and "'Please do b'" in out


def test_a_run_diffed_with_itself_is_the_same(project, capsys, backend):
    source = first_run(capsys, backend)
    code, compared = diff(capsys, backend, source, source)
    assert code == 0 and compared["same"] and compared["divergence"] is None
    code, out, _ = plait(capsys, backend, "runs", "diff", source, source)
    assert code == 0 and "no divergence" in out


def test_a_fork_at_an_unknown_step_lists_the_steps_there_are(project, capsys, backend):
    source = first_run(capsys, backend)
    code, _, err = plait(capsys, backend, "runs", "fork", source, "--at", "main/nowhere#1")
    assert code == 2
    assert "no step `main/nowhere#1`" in err and "main/pick/polish#2" in err and ITEM_B in err
    code, _, err = plait(capsys, backend, "runs", "fork", source, "--at", "x", "--model", "nope=alt")
    assert code == 2 and "no step `x`" in err
    code, _, err = plait(capsys, backend, "runs", "fork", source, "--at", ITEM_B, "--model", "nope=alt")
    assert code == 2 and "declares no model `nope`" in err
    code, _, err = plait(capsys, backend, "runs", "diff", source, "missing")
    assert code == 2 and "no run `missing`" in err


def test_trace_shows_the_positions_a_fork_names(project, capsys, backend):
    source = first_run(capsys, backend)
    code, out, _ = plait(capsys, backend, "trace", source)
    assert code == 0
    assert f"@ {ITEM_B}" in out and "@ main/pick\n" in out and "@ main/each[1]" in out
    # A row number works too (`trace --json`'s seq): row 12 is review's first reply, so its request runs again.
    code, out, err = plait(capsys, backend, "runs", "fork", source, "--at", "12", "--json")
    assert code == 3, err
    fork = json.loads(out)["run_id"]
    code, out, _ = plait(capsys, backend, "trace", fork)
    assert f"fork   of run {source} at 12" in out
    assert plait(capsys, backend, "runs", "diff", source, fork)[0] == 0  # the same script: the same run


# -- runs pinned to their spec ------------------------------------------------------------------------------------


def test_a_resume_goes_on_after_an_edit_to_what_already_ran(project, capsys, backend):
    source = first_run(capsys, backend)
    # `item` finished (both map items are done; the run waits at the ask): its recorded replies stand.
    (project / "spec.plait").write_text(SPEC.replace('prompt = "Do {{input}}"', 'prompt = "Do {{input}} well"'))
    code, out, err = plait(capsys, backend, "resume", source, "--answer", 'confirm={"ok": true}', "--json")
    assert code == 0, err
    assert "1 change(s) in meaning, none can affect what is left to run" in err


def test_a_resume_is_refused_when_the_edit_can_affect_what_is_left(project, capsys, backend):
    source = first_run(capsys, backend)
    edited = SPEC.replace('kind: "short" | "long"', 'kind: "short" | "long" | "medium"').replace(
        "Ship {{input}}?", "Really ship {{input}}?"
    )
    (project / "spec.plait").write_text(edited)
    code, _, err = plait(capsys, backend, "resume", source, "--answer", 'confirm={"ok": true}')
    assert code == 5
    # A contract change to what already ran (its recorded output meets a new type), and the ask still to come.
    assert "step classify: output.kind changed" in err and "ask confirm: question changed" in err
    assert "[contract]" in err
    code, _, err = plait(capsys, backend, "resume", source, "--answer", 'confirm={"ok": true}', "--accept-changes")
    assert code == 0, err
    assert "accepted (--accept-changes)" in err
    # Pinned to the spec it went on under: nothing to compare any more.
    code, _, err = plait(capsys, backend, "trace", source)
    assert code == 0


def test_a_fork_inside_a_loop_counts_the_loop_body_as_still_to_run(project, capsys, backend):
    """Forked at the loop's second iteration: `review` ran in the first, but runs again, so an edit to it can affect
    what is left; `classify` ran before the loop and is replayed as recorded, so an edit to it cannot."""
    source = first_run(capsys, backend)
    spec = project / "spec.plait"
    at = "main/pick/polish/#2/writer#1"
    spec.write_text(SPEC.replace("Grade {{input}}", "Grade {{input}} strictly"))
    code, _, err = plait(capsys, backend, "runs", "fork", source, "--at", at)
    assert code == 5 and "step review: prompt changed" in err
    spec.write_text(SPEC.replace("Classify {{input}}", "Classify {{input}} carefully"))
    code, out, err = plait(capsys, backend, "runs", "fork", source, "--at", at, "--json")
    assert code == 3, err
    assert "none can affect what is left to run" in err
    code, compared = diff(capsys, backend, source, json.loads(out)["run_id"])
    assert code == 0 and compared["divergence"] is None  # the edit never reached a call


def test_an_edit_to_comments_only_is_no_change(project, capsys, backend):
    source = first_run(capsys, backend)
    (project / "spec.plait").write_text(SPEC + "\n# a note\n")
    code, _, err = plait(capsys, backend, "resume", source, "--answer", 'confirm={"ok": true}')
    assert code == 0, err
    assert "changed" not in err


def test_an_old_journal_migrates_and_its_runs_resume_unchecked(tmp_path, capsys, monkeypatch):
    """Schema 1 (before runs were pinned) → 2: its runs are unpinned, and resume as before, whatever the spec says."""
    (tmp_path / "spec.plait").write_text(SPEC)
    (tmp_path / "forkdiff_tools.py").write_text(TOOLS)
    (tmp_path / "demo.json").write_text(json.dumps(DEMO))
    (tmp_path / "alt.json").write_text(json.dumps(ALT))
    monkeypatch.chdir(tmp_path)
    assert main(["run", "spec.plait", "--input", "go", "--json"]) == 3
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    path = journal_path(tmp_path)
    assert main(["runs", "--json"]) == 0  # moves every row into the tables
    capsys.readouterr()
    # Make it the journal plait wrote before: schema 1's tables, the run's rows, no pin.
    conn = sqlite3.connect(path)
    runs = conn.execute("SELECT id, entry, spec, input, status, started, updated, snapshot FROM runs").fetchall()
    events = conn.execute("SELECT run_id, seq, kind, key, at, data FROM events").fetchall()
    conn.close()
    path.unlink()
    conn = sqlite3.connect(path)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (1)")
    conn.executemany(
        "INSERT INTO runs (id, entry, spec, input, status, started, updated, snapshot) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        runs,
    )
    conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", events)
    conn.commit()
    conn.close()
    (tmp_path / "spec.plait").write_text(SPEC.replace("Ship {{input}}?", "Really ship {{input}}?"))
    assert main(["resume", run_id, "--answer", 'confirm={"ok": true}']) == 0
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT version FROM schema_version").fetchall() == [(len(MIGRATIONS),)]
    # Going on pinned it to the spec it went on under; a new run is pinned from its start.
    assert conn.execute("SELECT spec_digest IS NOT NULL FROM runs").fetchall() == [(1,)]
    conn.close()


def test_runs_of_one_spec_share_one_stored_copy(project, capsys, backend):
    first_run(capsys, backend)
    first_run(capsys, backend)
    assert backend.sql("SELECT COUNT(*) FROM specs") == [(1,)]
    [(digest,)] = {row for row in backend.sql("SELECT spec_digest FROM runs")}
    [(source,)] = backend.sql("SELECT source FROM specs")
    assert digest.startswith("sha256:") and json.loads(source)["files"]["spec.plait"] == SPEC


# -- a run killed mid-way ------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_run_killed_mid_map_forks_and_diffs(tmp_path, capsys, monkeypatch, backend):
    """Killed (SIGKILL) while the map's second item is in flight, held there by a reply scripted to wait an hour
    (the crash tests' technique: the run stops at the point and the test sees it arrive in the journal)."""
    from test_crash import ARRIVAL, HANG, Journal, PostgresJournal
    from test_crash import plait as start

    root = tmp_path
    (root / "spec.plait").write_text(SPEC)
    (root / "forkdiff_tools.py").write_text(TOOLS)
    (root / "alt.json").write_text(json.dumps(ALT))
    held = json.loads(json.dumps(DEMO))
    held["item"][1] = held["item"][1] | {"delay": HANG}
    (root / "demo.json").write_text(json.dumps(held))
    journal = PostgresJournal(root, backend.url) if backend.url else Journal(root)
    process = start(root, "run", "spec.plait", "--input", "go", "--json", store=backend.url)
    try:
        deadline = time.monotonic() + ARRIVAL
        while not any(kind == "model_request" and key == ITEM_B for kind, key, _ in journal.rows()):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the run never reached the map's second item"
            time.sleep(0.01)  # polling a state the run holds: how often we look, not when we kill
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=30)
        source = journal.run_id()
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        journal.close()
    (root / "demo.json").write_text(json.dumps(DEMO))  # the script without the hold, as a resume would have it
    monkeypatch.chdir(root)
    code, out, _ = plait(capsys, backend, "runs", "--json")
    assert [json.loads(line)["status"] for line in out.splitlines()] == ["crashed"]
    # Forked at the call that was in flight: everything before it replays, it runs live.
    code, out, err = plait(capsys, backend, "runs", "fork", source, "--at", ITEM_B, "--json")
    assert code == 3, err
    fork = json.loads(out)["run_id"]
    assert (root / "effects.txt").read_text() == "w1\n"  # the tool before the kill did not run again
    code, compared = diff(capsys, backend, source, fork)
    first = compared["divergence"]
    assert (first["position"], first["what"], first["side"]) == (ITEM_B, "unanswered", "a")
    assert compared["runs"][0]["status"] == "crashed" and compared["runs"][1]["status"] == "interrupt"
    code, out, _ = plait(capsys, backend, "runs", "diff", source, fork)
    assert "A stopped while this call was in flight" in out
    # The crashed run itself still resumes, and then made the same calls as its fork.
    code, _, err = plait(capsys, backend, "resume", source)
    assert code == 3, err
    code, compared = diff(capsys, backend, source, fork)
    assert compared["divergence"] is None and code == 0
    assert (root / "effects.txt").read_text() == "w1\n"
