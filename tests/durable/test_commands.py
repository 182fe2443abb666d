"""`plait runs`, `plait runs export|rm|prune`, `plait trace`, `plait resume`: output, filters, exit codes, help."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from plait.cli import main
from plait.runtime.store import journal_path

SPEC = """
model demo = "scripted/demo" { script = "demo.json" }

tool add "Add two numbers." {
  params {
    a: int
    b: int
  }
  run = python("durable_cmd_tools:add")
}

tool send "Send a message." {
  params { to: string }
  run = python("durable_cmd_tools:send")
  approval = required
}

agent main {
  model = demo
  tools = [add, send]
}
"""

TOOLS = "def add(a, b):\n    return a + b\n\ndef send(to):\n    return 'sent to ' + to\n"


def call(name, **arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.fixture
def project(backend, capsys, monkeypatch):
    """Two runs: one done (a tool call), one waiting for approval; every command below uses the backend's store
    (PLAIT_STORE, as --store would: the tests read the same whichever names it)."""
    root = backend.project
    if backend.url:
        monkeypatch.setenv("PLAIT_STORE", backend.url)
    (root / "spec.plait").write_text(SPEC)
    (root / "durable_cmd_tools.py").write_text(TOOLS)
    (root / "demo.json").write_text(json.dumps([call("add", a=2, b=3), {"text": "5"}]))
    assert cli(capsys, "run", root / "spec.plait", "--input", "2+3")[0] == 0
    (root / "demo.json").write_text(json.dumps([call("send", to="ann"), {"text": "sent"}]))
    assert cli(capsys, "run", root / "spec.plait", "--input", "mail ann")[0] == 3
    monkeypatch.chdir(root)
    return backend


def ids(capsys, *argv):
    code, out, _ = cli(capsys, "runs", "--json", *argv)
    assert code == 0
    return [json.loads(line) for line in out.splitlines()]


def test_runs_lists_status_entry_started_steps_tokens_and_filters(project, capsys):
    root = project.project
    code, out, _ = cli(capsys, "runs")
    header, *lines = out.splitlines()
    assert code == 0 and header.split() == ["ID", "STATUS", "ENTRY", "STARTED", "STEPS", "TOKENS", "COST"]
    assert len(lines) == 2 and [line.split()[1] for line in lines] == ["done", "interrupt"]
    assert lines[0].split()[5] == "2" and lines[0].split()[7] == "-"  # no price for the scripted model: no cost
    [waiting] = ids(capsys, "--status", "interrupt")
    assert waiting["entry"] == "main" and waiting["steps"] == 1 and waiting["spec"] == str(root / "spec.plait")
    assert cli(capsys, "runs", "--status", "crashed")[2].startswith("no runs with status crashed")


def test_runs_without_a_journal_is_a_one_line_usage_error(tmp_path, capsys):
    code, _, err = cli(capsys, "runs", "--dir", tmp_path)
    assert (
        code == 2
        and err.strip()
        == f"plait: no run journal at {journal_path(tmp_path)}: runs are kept beside their spec (pass --dir DIR)"
    )


def test_export_prints_the_runs_journal_rows_and_unknown_ids_exit_2(project, capsys):
    done = ids(capsys, "--status", "done")[0]["id"]
    code, out, _ = cli(capsys, "runs", "export", done)
    snapshot = json.loads(out)
    assert code == 0 and snapshot["version"] == 3 and snapshot["run_id"] == done and snapshot["result"]["output"] == "5"
    # Made from the journal: every history row of the run, as `plait trace` reads them, and no second copy.
    journal = project.open()
    assert snapshot["events"] == json.loads(json.dumps(list(journal.events(done))))
    assert [e["kind"] for e in snapshot["events"]][0] == "admit" and "context" not in snapshot
    assert (
        cli(capsys, "runs", "export", done, "-o", project.project / "out.json")[0] == 0
        and json.loads((project.project / "out.json").read_text()) == snapshot
    )
    code, _, err = cli(capsys, "runs", "export", "nope")
    assert code == 2 and "no run `nope`" in err


def test_rm_deletes_a_run_and_its_history(project, capsys):
    done = ids(capsys, "--status", "done")[0]["id"]
    assert cli(capsys, "runs", "rm", done, "nope")[0] == 2 and len(ids(capsys)) == 2  # all or nothing
    code, _, err = cli(capsys, "runs", "rm", done)
    assert code == 0 and "deleted 1 run" in err and [r["status"] for r in ids(capsys)] == ["interrupt"]
    assert project.sql("SELECT count(*) FROM events WHERE run_id = ?", (done,)) == [(0,)]


def test_prune_deletes_only_runs_older_than_the_age(project, capsys):
    old = ids(capsys)[0]["id"]
    project.sql("UPDATE runs SET started = ? WHERE id = ?", (time.time() - 40 * 86400, old))
    code, out, _ = cli(capsys, "runs", "prune", "--older-than", "30d", "--dry-run")
    assert code == 0 and out.split() == [old] and len(ids(capsys)) == 2
    code, _, err = cli(capsys, "runs", "prune", "--older-than", "30d")
    assert code == 0 and "deleted 1 run" in err and old not in [r["id"] for r in ids(capsys)]
    code, _, err = cli(capsys, "runs", "prune", "--older-than", "thirty")
    assert code == 2 and "like 30d" in err


def test_trace_shows_model_calls_with_latency_and_tokens_tool_calls_with_results(project, capsys):
    done = ids(capsys, "--status", "done")[0]["id"]
    code, out, _ = cli(capsys, "trace", done)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith(f"run {done}  done  entry main")
    assert "model  main step 1 (demo) tool_calls" in lines[2] and " ms " in lines[2] and "tokens → add" in lines[2]
    assert "tool   add(" in lines[3] and "→ 5" in lines[3]
    assert lines[-1].endswith("stop   done")
    code, out, _ = cli(capsys, "trace", done, "--json")
    trace = json.loads(out)
    assert trace["run"]["status"] == "done" and [i["kind"] for i in trace["timeline"]] == [
        "admit",
        "model_call",
        "tool_call",
        "model_call",
        "stop",
    ]
    model = trace["timeline"][1]
    assert (
        model["status"] == "ok"
        and model["latency_ms"] >= 0
        and model["input_tokens"] > 0
        and model["tool_calls"] == ["add"]
    )
    assert trace["timeline"][2]["result"] == "5" and trace["timeline"][2]["status"] == "ok"
    assert cli(capsys, "trace", "nope")[0] == 2


def test_resume_finds_the_spec_and_continues_with_decisions(project, capsys):
    waiting = ids(capsys, "--status", "interrupt")[0]["id"]
    pid = next(r for r in json.loads(cli(capsys, "runs", "export", waiting)[1])["result"]["pending"])["id"]
    code, out, _ = cli(capsys, "resume", waiting, "--decide", f"{pid}=approve", "--json")
    report = json.loads(out)
    assert code == 0 and report["output"] == "sent" and [c["name"] for c in report["tool_calls"]] == ["send"]
    trace = json.loads(cli(capsys, "trace", waiting, "--json")[1])["timeline"]
    assert [i["of"] for i in trace if i["kind"] == "decision"] == ["approval"]
    assert cli(capsys, "resume", "nope")[0] == 2
    (project.project / "spec.plait").rename(project.project / "moved.plait")
    code, _, err = cli(capsys, "resume", waiting)
    assert code == 2 and "is gone; pass --spec FILE" in err


def test_an_exported_run_removed_from_the_journal_comes_back_from_its_export_and_resumes(project, capsys):
    from plait.runtime.engine import Engine
    from plait.runtime.outcomes import Decision

    waiting = ids(capsys, "--status", "interrupt")[0]["id"]
    exported = json.loads(cli(capsys, "runs", "export", waiting)[1])
    assert cli(capsys, "runs", "rm", waiting)[0] == 0 and ids(capsys, "--status", "interrupt") == []
    spec = project.project / "spec.plait"
    engine = Engine.from_spec(spec, **({"store": project.url} if project.url else {}))
    run = engine.restore(exported)
    [pending] = run.last["pending"]
    result = asyncio.run(run.resume({pending["id"]: Decision("approve")}))
    asyncio.run(engine.aclose())
    assert (result.stop_reason, result.output) == ("done", "sent")
    # The reply that asked for the send, and the script's cursor after it, came back from the exported rows.
    assert [c["name"] for c in result.report.tool_calls] == ["send"]
    [again] = ids(capsys, "--status", "done")[1:]
    assert again["id"] == waiting


def test_a_run_another_process_holds_is_refused_with_exit_2(project, capsys):
    waiting = ids(capsys, "--status", "interrupt")[0]["id"]
    holder = project.open()
    holder.acquire(waiting)
    code, _, err = cli(capsys, "resume", waiting)
    holder.close()
    assert code == 2 and len(err.strip().splitlines()) == 1 and "is being run by another process" in err


@pytest.mark.parametrize(
    "command", [["runs"], ["runs", "export"], ["runs", "rm"], ["runs", "prune"], ["trace"], ["resume"]]
)
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and "usage: plait" in out and "--dir" in out and "--store URL" in out


def store_errors(pg_url):
    """(what is wrong, URL): a URL of another kind, a port nobody listens on, a refused password."""
    import socket
    from urllib.parse import urlsplit

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    parts = urlsplit(pg_url)
    user = parts.username or "plait"
    return [
        ("not a postgresql URL", "mysql://root:hunter2-pw@localhost/runs", "--store takes a postgresql://"),
        ("server down", f"postgresql://{user}:hunter2-pw@127.0.0.1:{free}/postgres", "cannot connect to the run store"),
        (
            "auth failure",
            f"postgresql://{user}:hunter2-pw@{parts.hostname}:{parts.port or 5432}{parts.path}",
            "cannot connect to the run store",
        ),
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [["runs"], ["runs", "export", "r1"], ["trace", "r1"], ["resume", "r1"], ["run", "spec.plait"]]
)
def test_a_store_that_cannot_be_used_is_one_line_exit_2_without_the_password(command, pg_url, tmp_path, capsys):
    (tmp_path / "spec.plait").write_text(SPEC)
    (tmp_path / "durable_cmd_tools.py").write_text(TOOLS)
    (tmp_path / "demo.json").write_text(json.dumps([{"text": "5"}]))
    argv = [str(tmp_path / a) if a.endswith(".plait") else a for a in command]
    for problem, url, says in store_errors(pg_url):
        code, out, err = cli(capsys, *argv, "--store", url)
        assert code == 2 and len(err.strip().splitlines()) == 1 and says in err, (problem, err)
        assert "hunter2-pw" not in err + out and ":***@" in err, (problem, err)
    assert not (tmp_path / ".plait").exists()  # nothing fell back to the SQLite journal


def test_resume_passes_answers_to_a_pending_ask(backend, capsys, monkeypatch):
    import shutil
    from pathlib import Path

    tmp_path = backend.project
    store = backend.cli()
    example = Path(__file__).resolve().parents[2] / "examples" / "approve"
    for f in example.iterdir():
        if f.is_file():
            shutil.copy(f, tmp_path / f.name)
    code, out, _ = cli(
        capsys, "run", tmp_path / "approve.plait", "--input-file", tmp_path / "request.json", "--json", *store
    )
    assert code == 3
    run_id = json.loads(out)["run_id"]
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "resume", run_id, "--answer", 'approval={"decision": "approve"}', "--json", *store)
    assert code == 0, err
    assert json.loads(out)["stop_reason"] == "done"
    # The answer given and the ask that took it are one decision in the trace, not two.
    code, out, err = cli(capsys, "trace", run_id, "--json", *store)
    assert code == 0, err
    (asked,) = [i for i in json.loads(out)["timeline"] if i["kind"] == "decision" and i["of"] == "ask"]
    assert asked["key"] == "main/approval" and asked["decision"]["answer"]["decision"] == "approve"
    code, out, err = cli(capsys, "trace", run_id, *store)
    assert out.count("ask    approval answered: decision = approve") == 1


@pytest.mark.slow
def test_a_postgresql_server_lost_mid_run_fails_the_run_in_one_line(pg_backend, capsys, monkeypatch):
    """The journal's connection is cut while a tool runs: the run stops (exit 1) rather than act unrecorded, and
    says why in one line; no traceback, no password."""
    root = pg_backend.project
    (root / "spec.plait").write_text(SPEC)
    (root / "durable_cmd_tools.py").write_text(
        TOOLS.replace(
            "def add(a, b):\n    return a + b\n",
            "def add(a, b):\n    import os, psycopg\n"
            "    with psycopg.connect(os.environ['CUT_URL'], autocommit=True) as admin:\n"
            '        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "\n'
            "                      \"WHERE application_name = 'plait'\")\n"
            "    return a + b\n",
        )
    )
    (root / "demo.json").write_text(json.dumps([call("add", a=2, b=3), {"text": "5"}]))
    monkeypatch.setenv("CUT_URL", pg_backend.url)
    code, out, err = cli(capsys, "run", root / "spec.plait", "--input", "2+3", "--store", pg_backend.url)
    assert code == 1 and "could not be written" in err and "test-secret-pw" not in out + err, err
