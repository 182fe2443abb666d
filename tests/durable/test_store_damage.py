"""A journal that cannot be used stops `plait run` before any effect, in one line naming the file; damage inside a
journal (a bad segment line, a stored value that is not JSON) stays with the damaged run, is reported with its file,
and `plait runs doctor --repair` moves it aside without deleting it."""

from __future__ import annotations

import json
import os
import stat
import time

import pytest

from durable_helpers import Backend
from plait.cli import main
from plait.runtime.store import SCHEMA_VERSION, journal_path
from plait.runtime.store.base import encode
from plait.runtime.store.log import line

SPEC = """
model demo = "scripted/demo" { script = "demo.json" }

tool act "Write to the effects file." {
  params { what: string }
  run = python("damage_tools:act")
}

agent main {
  model = demo
  tools = [act]
}
"""

TOOLS = """
from pathlib import Path

def act(what):
    with Path(__file__).with_name("effects.txt").open("a") as fh:
        fh.write(what + "\\n")
    return "done " + what
"""

#: A process id no process has (above any pid_max): a segment "left by a dead writer".
DEAD_PID = 999_999_999


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err
    return code, out, err


def make(backend, monkeypatch):
    root = backend.project
    if backend.url:
        monkeypatch.setenv("PLAIT_STORE", backend.url)
    (root / "spec.plait").write_text(SPEC)
    (root / "damage_tools.py").write_text(TOOLS)
    (root / "demo.json").write_text(
        json.dumps([{"tool_calls": [{"name": "act", "arguments": {"what": "x"}}]}, {"text": "ok"}])
    )
    monkeypatch.chdir(root)
    return backend


@pytest.fixture
def project(backend, monkeypatch):
    return make(backend, monkeypatch)


@pytest.fixture
def sqlite_project(tmp_path, monkeypatch):
    """For what only the SQLite journal has: its file, its segments, their permissions."""
    backend = Backend(tmp_path)
    yield make(backend, monkeypatch)
    backend.close()


def effects(root):
    path = root / "effects.txt"
    return path.read_text().splitlines() if path.exists() else []


def run_ids(capsys):
    code, out, err = cli(capsys, "runs", "--json")
    assert code == 0, err
    return [json.loads(line)["id"] for line in out.splitlines()]


# -- a journal that cannot be used: refused before any effect ------------------------------


def test_a_journal_db_that_is_not_a_database_stops_the_run_before_any_effect(sqlite_project, capsys):
    root = sqlite_project.project
    db = journal_path(root)
    db.parent.mkdir()
    db.write_bytes(b"this is not a database, it is a note\n" * 100)
    code, out, err = cli(capsys, "run", "spec.plait")
    assert code == 2 and effects(root) == []
    [message] = err.strip().splitlines()
    assert str(db) in message and "not a database" in message and "move the file aside" in message


def test_a_journal_from_a_newer_plait_stops_the_run_before_any_effect(project, capsys):
    root = project.project
    assert cli(capsys, "run", "spec.plait")[0] == 0 and effects(root) == ["x"]
    (root / "effects.txt").unlink()
    project.sql("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    code, _, err = cli(capsys, "run", "spec.plait")
    assert code == 2 and effects(root) == []
    [message] = err.strip().splitlines()
    assert "newer than this plait knows" in message and "upgrade plait" in message
    # It names the store it could not use: the file, or the server (its URL without a password).
    assert str(journal_path(root)) in message if project.url is None else "postgresql://" in message


def test_a_journal_db_with_damaged_pages_stops_the_run_before_any_effect(sqlite_project, capsys):
    """A file whose header and schema read but whose history table's page is garbage opened fine and failed only
    when the run's rows were written to it, after every tool had run ("internal error", exit 2)."""
    import sqlite3

    root = sqlite_project.project
    assert cli(capsys, "run", "spec.plait")[0] == 0 and effects(root) == ["x"]
    (root / "effects.txt").unlink()
    db = journal_path(root)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the file itself
    [(page,)] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'events'")
    [(size,)] = conn.execute("PRAGMA page_size")
    conn.close()
    with db.open("r+b") as fh:
        fh.seek((page - 1) * size)
        fh.write(b"\xde\xad" * (size // 2))
    code, _, err = cli(capsys, "run", "spec.plait")
    assert code == 2 and effects(root) == []
    [message] = err.strip().splitlines()
    assert str(db) in message and "malformed" in message and "move the file aside" in message


@pytest.mark.slow
def test_a_journal_that_cannot_be_written_mid_run_is_one_line_and_the_run_resumes(sqlite_project):
    """A full disk mid-run (a real file-size limit on the process: its writes stop short with an error, as on a
    full disk) after the tool acted: one line naming the journal and how to go on, not an internal error; the run
    is kept and resumes without acting again."""
    import resource
    import subprocess
    import sys

    root = sqlite_project.project
    reply = "y" * 200_000  # the reply row cannot be written under the limit; the rows before it can
    (root / "demo.json").write_text(
        json.dumps([{"tool_calls": [{"name": "act", "arguments": {"what": "x"}}]}, {"text": reply}])
    )

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    argv = [sys.executable, "-m", "plait", "run", "spec.plait"]
    full = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert full.returncode == 1 and effects(root) == ["x"], full.stderr
    [message] = [x for x in full.stderr.splitlines() if x.startswith("plait: ")]
    assert "internal error" not in full.stderr and "Traceback" not in full.stderr
    assert str(journal_path(root)) in message and "could not be written" in message
    [run_id] = [
        json.loads(x)["id"]
        for x in subprocess.run(
            [*argv[:3], "runs", "--json"], cwd=root, capture_output=True, text=True
        ).stdout.splitlines()
    ]
    assert f"plait resume {run_id}" in message
    done = subprocess.run(
        [*argv[:3], "resume", run_id, "--json"], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and json.loads(done.stdout)["output"] == reply, done.stderr
    assert effects(root) == ["x"]  # the tool's effect is not repeated


# -- damage inside a journal: contained, reported with its file, repairable ----------------


def dead_segment(root, run_id: str, bad: str) -> os.PathLike:
    """A dead writer's segment: a whole admitted run with one history row, then a damaged line, then one more row."""
    folder = journal_path(root).with_name("journal.db-log")
    folder.mkdir(parents=True, exist_ok=True)
    at = time.time()
    text = (
        line("", 0, "~run", None, at, encode([run_id, "main", None, encode("go"), at, at]))
        + line(run_id, 1, "admit", None, at, encode({"entry": "main", "input": "go"}))
        + bad
        + line(run_id, 3, "stop", None, at, encode({"stop_reason": "error"}))
    )
    path = folder / f"{DEAD_PID}-deadbeef.jsonl"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "bad",
    [
        "not a journal line at all\n",
        '5\t{"a": 1}\n',  # a header that is JSON but not five values
        '["r-dead", 2, "state", null, 1.0]\t{not json\n',
        '["", 0, "~drop_tables", null, 1.0]\t[]\n',  # a statement no plait writes
        '["", 0, "~stopped", null, 1.0]\t["too", "few"]\n',
    ],
)
def test_a_bad_line_in_a_dead_writers_segment_is_contained_reported_and_repairable(sqlite_project, capsys, bad):
    root = sqlite_project.project
    assert cli(capsys, "run", "spec.plait")[0] == 0
    path = dead_segment(root, "r-dead", bad)
    # Every command still works; the damage is named with its file, the other rows of the segment are taken in.
    code, out, err = cli(capsys, "runs")
    assert code == 0 and len(out.splitlines()) == 3 and "r-dead" in out
    shown = f"journal.db-log/{path.name}"  # where it is, as the journal was named (here: relative)
    assert f"{shown}: line 3" in err and "plait runs doctor" in err
    assert cli(capsys, "trace", run_ids(capsys)[0])[0] == 0
    (root / "demo.json").write_text(json.dumps([{"text": "again"}]))
    code, _, err = cli(capsys, "run", "spec.plait")
    assert code == 0 and "plait: warning: " in err and f"{shown}: line 3" in err and "plait runs doctor" in err
    assert len(run_ids(capsys)) == 3  # the new run is stored and listed beside the damaged segment's
    assert path.exists()  # a damaged segment is never deleted on its own
    code, out, _ = cli(capsys, "runs", "doctor")
    assert code == 1 and f"{shown}: line 3" in out
    code, out, _ = cli(capsys, "runs", "doctor", "--repair")
    assert code == 0 and not path.exists()
    [kept] = journal_path(root).with_name("journal.db-quarantine").glob(f"*{path.name}")
    assert bad in kept.read_text()  # moved aside, whole
    code, _, err = cli(capsys, "runs", "doctor")
    assert code == 0 and "no damage" in err
    assert cli(capsys, "runs")[2] == ""


def test_one_runs_stored_value_that_is_not_json_breaks_only_that_run(project, capsys):
    root = project.project
    assert cli(capsys, "run", "spec.plait")[0] == 0
    (root / "demo.json").write_text(json.dumps([{"text": "plain"}]))
    assert cli(capsys, "run", "spec.plait", "--input", "second")[0] == 0
    (root / "demo.json").write_text(json.dumps([{"text": "third"}]))
    assert cli(capsys, "run", "spec.plait", "--input", "third")[0] == 0
    first, second, third = run_ids(capsys)
    project.sql("UPDATE runs SET snapshot = ? WHERE id = ?", ("{cut off", first))
    project.sql("UPDATE runs SET input = ? WHERE id = ?", ("not json", second))
    project.sql("UPDATE events SET data = ? WHERE run_id = ? AND seq = 2", ("{cut", third))
    # Listing, export and trace of every run still work.
    assert run_ids(capsys) == [first, second, third]
    for run_id in (first, second, third):
        assert cli(capsys, "runs", "export", run_id)[0] == 0
    code, out, _ = cli(capsys, "trace", third)
    assert code == 0 and "damaged model_request row 2" in out
    code, out, _ = cli(capsys, "trace", third, "--json")
    assert code == 0 and json.loads(out)["timeline"][1]["kind"] == "damaged"
    # A damaged run is not replayed (a lost row could repeat an effect): one line saying why, exit 1 (as any run that cannot resume).
    code, _, err = cli(capsys, "resume", third)
    assert code == 1 and f"run {third} cannot be resumed" in err and "plait runs doctor" in err
    code, out, _ = cli(capsys, "runs", "doctor")
    assert code == 1 and len(out.splitlines()) == 3
    assert all(run_id in out for run_id in (first, second, third))
    code, out, _ = cli(capsys, "runs", "doctor", "--repair")
    assert code == 0
    folder = journal_path(root).with_name("journal.db-quarantine") if not project.url else root / "plait-quarantine"
    [copy] = folder.glob("*-rows.jsonl")
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600 and stat.S_IMODE(folder.stat().st_mode) == 0o700
    kept = [json.loads(x)["value"] for x in copy.read_text().splitlines()]
    assert sorted(kept) == sorted(["{cut off", "not json", "{cut"])  # every damaged value kept, whole
    assert cli(capsys, "runs", "doctor")[0] == 0
    assert cli(capsys, "trace", third)[0] == 0


def test_runs_status_failed_means_error(project, capsys):
    root = project.project
    (root / "demo.json").write_text(json.dumps([{"error": {"kind": "server_error", "message": "down"}}]))
    assert cli(capsys, "run", "spec.plait")[0] == 1
    (root / "demo.json").write_text(json.dumps([{"text": "fine"}]))
    assert cli(capsys, "run", "spec.plait")[0] == 0
    code, out, _ = cli(capsys, "runs", "--status", "failed", "--json")
    assert code == 0 and [json.loads(x)["status"] for x in out.splitlines()] == ["error"]
    with pytest.raises(SystemExit) as refused:  # argparse's usage error, listing the statuses
        main(["runs", "--status", "nonsense"])
    assert refused.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_the_store_is_owner_only(sqlite_project, capsys):
    root = sqlite_project.project
    # A store an older plait left world-readable is narrowed when next used.
    (root / ".plait").mkdir(mode=0o755)
    os.chmod(root / ".plait", 0o755)
    assert cli(capsys, "run", "spec.plait")[0] == 0
    db = journal_path(root)
    for path in (root / ".plait", db.with_name("journal.db-log")):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    for path in db.parent.glob("journal.db*"):
        if path.is_file():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    os.chmod(db, 0o644)
    assert cli(capsys, "runs")[0] == 0
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


def test_chats_are_owner_only(tmp_path, capsys, monkeypatch):
    import io
    import sys

    (tmp_path / "spec.plait").write_text(
        'model demo = "scripted/demo" { script = "demo.json" }\nagent main { model = demo }\n'
    )
    (tmp_path / "demo.json").write_text(json.dumps({"main": [{"text": "hello"}]}))
    (tmp_path / ".plait").mkdir(mode=0o755)
    os.chmod(tmp_path / ".plait", 0o755)  # as an older plait left it
    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n"))
    assert main(["chat", str(tmp_path / "spec.plait")]) == 0
    chats = tmp_path / ".plait" / "chats"
    [saved] = chats.glob("*.json")
    assert stat.S_IMODE(chats.stat().st_mode) == 0o700 and stat.S_IMODE(saved.stat().st_mode) == 0o600


def test_a_run_that_may_have_lost_a_row_to_a_damaged_segment_is_not_replayed_until_repaired(tmp_path):
    from durable_helpers import call, engine, go, tool
    from plait.runtime.errors import AgentError
    from plait.runtime.store import doctor

    backend = Backend(tmp_path)
    acted = []
    tools = {"act": tool("act", lambda what: acted.append(what) or "done", props={"what": "string"})}
    first = engine(backend, [call("act", what="x"), {"text": "ok"}], tools)
    run = first.start("go")
    assert go(run).stop_reason == "done" and acted == ["x"]
    go(first.aclose())
    folder = journal_path(tmp_path).with_name("journal.db-log")
    bad = folder / f"{DEAD_PID}-cafe.jsonl"
    bad.write_text(f'["{run.id}", 99, "tool_completed", "main#1:x", 1.0]\t{{cut\n')
    again = engine(backend, [], tools)
    with pytest.raises(AgentError) as refused:
        again.restore(run.id)
    assert refused.value.kind == "resume_invalid" and f"{bad.name}: line 1" in str(refused.value)
    journal = backend.open()
    journal.open()
    done = doctor.repair(journal, doctor.check(journal), tmp_path / "q")
    assert len(done) == 1 and not bad.exists()
    resumed = go(again.restore(run.id).resume())
    go(again.aclose())
    assert resumed.stop_reason == "done" and acted == ["x"]


def test_a_run_started_from_python_opens_its_store_before_its_first_step(tmp_path):
    from durable_helpers import call, engine, go, tool
    from plait.runtime.store import StoreError

    db = journal_path(tmp_path)
    db.parent.mkdir()
    db.write_bytes(b"not a database" * 100)
    acted = []
    backend = Backend(tmp_path)
    eng = engine(
        backend, [call("act", what="x"), {"text": "ok"}], {"act": tool("act", acted.append, props={"what": "string"})}
    )
    with pytest.raises(StoreError, match="not a database"):
        go(eng.start("go"))
    assert acted == []
    backend.close()
