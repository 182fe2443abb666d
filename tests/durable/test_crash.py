"""Crash proof: a spec whose tools append to a file is killed (SIGKILL, SIGTERM) at many points, or hit by a provider
failure, and resumed until it finishes. Every run ends with the uninterrupted run's output, no non-idempotent effect
happens twice, and at most the calls in flight at the kill are redone.

Every kill point is held by the run itself, never found by timing: the model call that must be in flight at the kill
is scripted to wait an hour, and the tool call that must be mid-way waits (before or after its effect) for a release
file that only comes after the signal. So the run stops at the point and stays there; the test sees it arrive in the
journal and the effects file (as a person or a supervisor would), then kills. Resumes use the same script without
the hold. A resumed run that pauses on a call of unknown outcome is answered as a person would: skip when the effects
file shows the call acted, retry when it does not.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from plait.runtime.store import log, open_store

pytestmark = pytest.mark.slow

SPEC = """
model demo = "scripted/demo" { script = "demo.json" }

tool append "Append a line to the effects file (not idempotent)." {
  params { line: string }
  run = python("crash_tools:append")
}

tool note "Append a line once per idempotency key." {
  params { line: string }
  run = python("crash_tools:note")
  idempotent = true
}

agent writer {
  model = demo
  tools = [append, note]
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

step plan {
  model = demo
  prompt = "Plan {{input}}"
  output { items: list[string] }
}

agent item {
  model = demo
  tools = [append]
}

map each = item { over = input.items, concurrency = 1 }

agent left {
  model = demo
  tools = [append]
}

agent right {
  model = demo
  tools = [append]
}

parallel both = [left, right]

chain main = polish -> plan -> each -> both
"""

# Each effect line names its call by the idempotency key (stable per run and call position), so a call
# that acted twice shows up as a repeated line. A call named in hold.json holds there ("before" or "after" its
# effect): it says so in `held` and waits for `release`, which the test writes only after its signal. One-shot: the
# hold file is taken when the call holds.
TOOLS = """
import json
import time
from pathlib import Path

HERE = Path(__file__).parent
EFFECTS = HERE / "effects.txt"


def hold(line, when):
    spec = HERE / "hold.json"
    try:
        wanted = json.loads(spec.read_text())
    except FileNotFoundError:
        return
    if wanted != {"line": line, "when": when}:
        return
    spec.unlink()
    (HERE / "held").write_text(f"{line} {when}")
    while not (HERE / "release").exists():  # the test releases the call after its signal
        time.sleep(0.01)


def append(line, idempotency_key=""):
    hold(line, "before")
    with EFFECTS.open("a") as fh:
        fh.write(f"{line} {idempotency_key}\\n")
    hold(line, "after")
    return "appended " + line


def note(line, idempotency_key=""):
    hold(line, "before")
    done = EFFECTS.read_text().split("\\n") if EFFECTS.exists() else []
    if f"{line} {idempotency_key}" not in done:
        with EFFECTS.open("a") as fh:
            fh.write(f"{line} {idempotency_key}\\n")
    hold(line, "after")
    return "noted " + line
"""

#: A model reply scripted this way is in flight until the process is signalled (resumes use the script without it).
HANG = "1h"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def text(value: Any) -> dict[str, Any]:
    return {"text": value if isinstance(value, str) else json.dumps(value)}


def script(fail_at_writer: int | None = None, hang: tuple[str, ...] = ()) -> dict[str, list[dict[str, Any]]]:
    """The replies; `hang` names replies ("agent:index") that stay in flight until the process is signalled."""
    writer = [
        call("append", line="w1"),
        call("note", line="n1"),
        text("draft 1"),
        call("append", line="w2"),
        text("draft 2"),
    ]
    if fail_at_writer is not None:
        writer.insert(fail_at_writer, {"error": {"kind": "server_error", "message": "overloaded"}})
    replies = {
        "writer": writer,
        "review": [text({"verdict": "revise"}), text({"verdict": "accept"})],
        "plan": [text({"items": ["a", "b"]})],
        "item": [call("append", line="i"), text("item done"), call("append", line="i"), text("item done")],
        "left": [call("append", line="l"), text("left done")],
        "right": [call("append", line="r"), text("right done")],
    }
    for where in hang:
        agent, _, index = where.partition(":")
        replies[agent][int(index)] = replies[agent][int(index)] | {"delay": HANG}
    return replies


def make_project(root: Path, replies: dict[str, Any]) -> Path:
    root.mkdir()
    (root / "spec.plait").write_text(SPEC)
    (root / "crash_tools.py").write_text(TOOLS)
    (root / "demo.json").write_text(json.dumps(replies))
    return root


#: Bytecode for the many short plait processes, kept out of the source tree (and reused by each of them).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "plait-crash-test-pycache")


def plait(root: Path, *argv: str, store: str | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "plait", *argv],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV | {"PLAIT_STORE": store} if store else ENV,
    )


class Journal:
    """The journal and the effects file as seen from outside the process."""

    store: str | None = None

    def __init__(self, root: Path) -> None:
        self.root = root

    def rows(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(kind, key, data) of every durable row, in order: the tables' and the segments' (read, never moved)."""
        path = self.root / ".plait" / "journal.db"
        found: dict[tuple[str, int], tuple[str, str, str]] = {}
        if path.exists():
            try:
                conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
                try:
                    for run_id, seq, k, key, d in conn.execute("SELECT run_id, seq, kind, key, data FROM events"):
                        found[(run_id, seq)] = (k, key or "", d)
                finally:
                    conn.close()
            except sqlite3.Error:  # created but not yet migrated
                pass
        for segment, _ in log.segments(path.with_name("journal.db-log")):
            for run_id, seq, k, key, _at, d in log.read(segment):
                if seq:  # seq 0: a table statement (an admission, a stop), not a history row
                    found[(run_id, seq)] = (k, key or "", d)
        self.ids = {run_id for run_id, _ in found}
        return [(k, key, json.loads(d)) for _, (k, key, d) in sorted(found.items())]

    def effects(self) -> list[str]:
        path = self.root / "effects.txt"
        return path.read_text().splitlines() if path.exists() else []

    def run_id(self) -> str:
        """The one run's id, from its durable rows (a killed process's admission may be in its segment only)."""
        self.rows()
        [run_id] = self.ids
        return run_id

    def close(self) -> None:
        pass

    def in_flight(self, rows: list[tuple[str, str, dict[str, Any]]]) -> tuple[int, int]:
        """(model calls, tool calls) started and not finished in these rows."""
        models = {key for kind, key, _ in rows if kind == "model_request"} - {
            key for kind, key, _ in rows if kind in ("model_reply", "model_error")
        }
        tools = {key for kind, key, _ in rows if kind == "tool_intent"} - {
            key for kind, key, _ in rows if kind == "tool_completed"
        }
        return len(models), len(tools)


class PostgresJournal(Journal):
    """The same, for a run kept in PostgreSQL (`PLAIT_STORE`): every committed row, read over one connection."""

    def __init__(self, root: Path, store: str) -> None:
        import psycopg

        super().__init__(root)
        self.store = store
        self.conn = psycopg.connect(store, autocommit=True)

    def rows(self) -> list[tuple[str, str, dict[str, Any]]]:
        try:
            found = self.conn.execute("SELECT kind, key, data FROM events ORDER BY run_id, seq").fetchall()
        except Exception:  # the tables are not created yet
            return []
        return [(k, key or "", json.loads(d)) for k, key, d in found]

    def run_id(self) -> str:
        [(run_id,)] = self.conn.execute("SELECT id FROM runs").fetchall()
        return run_id

    def close(self) -> None:
        self.conn.close()


def count(rows, kind: str, where: str = "") -> int:
    return sum(1 for k, key, _ in rows if k == kind and where in key)


def acted_unrecorded(rows, effects) -> bool:
    """A non-idempotent call has acted (its line is in the file) and its completion is not in the journal."""
    done_positions = {key for k, key, _ in rows if k == "tool_completed"}
    unfinished = {
        d["idempotency_key"]
        for k, key, d in rows
        if k == "tool_intent" and d.get("tool") == "append" and key not in done_positions
    }
    return any(line.split(" ", 1)[1] in unfinished for line in effects)


@dataclass(frozen=True)
class Point:
    """Where to kill: what holds the run there (replies that hang, a tool call that holds), and how the journal and
    the effects file show it has arrived (a predicate over rows and effect lines; true from then on)."""

    arrived: Callable[[list, list], bool]
    hang: tuple[str, ...] = ()
    hold: tuple[str, str] | None = None


POINTS: dict[str, Point] = {
    "first model call in flight": Point(
        lambda r, e: count(r, "model_request") == 1 and count(r, "model_reply") == 0, hang=("writer:0",)
    ),
    "tool running, before its effect": Point(
        lambda r, e: count(r, "tool_intent") == 1 and not e, hold=("w1", "before")
    ),
    "tool acted, completion not recorded": Point(
        lambda r, e: acted_unrecorded(r, e) and count(r, "tool_completed") == 0, hold=("w1", "after")
    ),
    "after a tool call, next model call in flight": Point(
        lambda r, e: count(r, "tool_completed") == 1 and count(r, "model_request") == 2, hang=("writer:1",)
    ),
    "idempotent tool acted, completion not recorded": Point(
        lambda r, e: any(x.startswith("n1 ") for x in e) and count(r, "tool_completed") == 1, hold=("n1", "after")
    ),
    "loop iteration 2, its tool acted": Point(
        lambda r, e: any(x.startswith("w2 ") for x in e) and count(r, "tool_completed") == 2, hold=("w2", "after")
    ),
    "inside the map, a model call in flight": Point(
        lambda r, e: count(r, "model_request", "each") >= 1 and count(r, "model_reply", "each") == 0,
        hang=("item:0",),
    ),
    "inside the map, a tool acted": Point(
        lambda r, e: any(x.startswith("i ") for x in e) and acted_unrecorded(r, e), hold=("i", "after")
    ),
    "map item 2": Point(
        lambda r, e: count(r, "model_request", "each") == 3 and count(r, "model_reply", "each") == 2,
        hang=("item:2",),
    ),
    "inside the parallel, both branches calling the model": Point(
        lambda r, e: count(r, "model_request", "both") >= 2 and count(r, "model_reply", "both") == 0,
        hang=("left:0", "right:0"),
    ),
    "inside the parallel, a branch's tool acted": Point(
        lambda r, e: any(x[:2] == "l " for x in e) and acted_unrecorded(r, e), hold=("l", "after")
    ),
    "last model calls in flight": Point(
        lambda r, e: (
            count(r, "tool_completed") == 7
            and count(r, "model_request", "both") == 4
            and count(r, "model_reply", "both") == 2
        ),
        hang=("left:1", "right:1"),
    ),
}

SIGTERM_POINTS = (
    "first model call in flight",
    "tool running, before its effect",
    "inside the parallel, a branch's tool acted",
)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> dict[str, Any]:
    """The uninterrupted run: its output, its effects (by line text) and how many model calls it made."""
    root = make_project(tmp_path_factory.mktemp("crash") / "baseline", script())
    done = plait(root, "run", "spec.plait", "--input", "go", "--json")
    out, err = done.communicate(timeout=30)
    assert done.returncode == 0, err
    report = json.loads(out)
    journal = Journal(root)
    effects = journal.effects()
    assert (
        sorted(line.split()[0] for line in effects) == ["i", "i", "l", "n1", "r", "w1", "w2"] and len(set(effects)) == 7
    )
    return {
        "output": report["output"],
        "effects": sorted(line.split()[0] for line in effects),
        "model_calls": report["model_calls"],
        "rows": len(journal.rows()),
    }


#: How long a run may take to reach its kill point before the test gives up: a failure's bound, never a kill point.
ARRIVAL = 120.0


def kill_at(root: Path, point: str, sig: int, journal: Journal | None = None) -> tuple[int, tuple[int, int]]:
    """Start the run held at the point, wait until it shows it has arrived, send `sig`; returns (exit code, calls in
    flight at the kill). Then the project is set for resuming: the script without the hold, the held call released."""
    journal = journal or Journal(root)
    where = POINTS[point]
    (root / "demo.json").write_text(json.dumps(script(hang=where.hang)))
    if where.hold is not None:
        line, when = where.hold
        (root / "hold.json").write_text(json.dumps({"line": line, "when": when}))
    process = plait(root, "run", "spec.plait", "--input", "go", "--json", store=journal.store)
    deadline = time.monotonic() + ARRIVAL
    try:
        while time.monotonic() < deadline:
            rows, effects = journal.rows(), journal.effects()
            if where.arrived(rows, effects):
                break
            if process.poll() is not None:
                raise AssertionError(f"the run ended before `{point}` (exit {process.returncode})")
            time.sleep(0.01)  # polling a state the run holds: how often we look, not when we kill
        else:
            raise AssertionError(f"the run never reached `{point}`")
        process.send_signal(sig)
        if sig != signal.SIGKILL and where.hold is not None:
            # The held tool runs in a worker thread the process waits for: once the stop is stored, let it finish.
            while not any(kind == "stop" for kind, _, _ in journal.rows()) and process.poll() is None:
                time.sleep(0.01)
            (root / "release").write_text("")
        process.communicate(timeout=60)
        # Read once the process is gone: what it had started and not finished when the signal landed.
        return process.returncode, journal.in_flight(journal.rows())
    finally:
        if process.poll() is None:
            process.kill()
        if process.stdout is not None and not process.stdout.closed:
            process.communicate()
        (root / "demo.json").write_text(json.dumps(script()))
        (root / "hold.json").unlink(missing_ok=True)
        (root / "release").write_text("")


def resume_until_done(root: Path, journal: Journal | None = None) -> tuple[dict[str, Any], int]:
    """`plait resume` until the run finishes, deciding unknown outcomes as a person would; returns (report, decisions)."""
    journal = journal or Journal(root)
    run_id = journal.run_id()
    decisions: list[str] = []
    for _ in range(6):
        process = plait(root, "resume", run_id, "--json", *(f"--decide={d}" for d in decisions), store=journal.store)
        out, err = process.communicate(timeout=30)
        assert "Traceback" not in err
        if process.returncode == 0:
            return json.loads(out), len(decisions)
        assert process.returncode == 3, err
        report = json.loads(out)
        assert report["stop_reason"] == "pause", err
        # The pause names the call (side-by-side calls pause together); the person looks at the world (the
        # effects file) and decides each.
        rows = journal.rows()
        since = max(i for i, (k, _, _) in enumerate(rows) if k == "resume")
        decisions = []
        for kind, position, pause in rows[since:]:
            if kind != "pause":
                continue
            intent = next(d for k, key, d in reversed(rows) if k == "tool_intent" and key == position)
            acted = f"{intent['arguments']['line']} {intent['idempotency_key']}" in journal.effects()
            decisions.append(f"{pause['call']}={'skip' if acted else 'retry'}")
    raise AssertionError("the run did not finish after six resumes")


def check(
    root: Path,
    baseline: dict[str, Any],
    report: dict[str, Any],
    flight: tuple[int, int],
    journal: Journal | None = None,
) -> None:
    journal = journal or Journal(root)
    effects = journal.effects()
    assert report["output"] == baseline["output"]
    assert len(effects) == len(set(effects)), f"an effect happened twice: {effects}"
    assert sorted(line.split()[0] for line in effects) == baseline["effects"]
    rows = journal.rows()
    # Live model calls over every attempt: the uninterrupted run's, plus at most the ones in flight at the kill.
    assert baseline["model_calls"] <= count(rows, "model_request") <= baseline["model_calls"] + flight[0] + 1
    # Tool calls started again: at most those in flight at the kill.
    assert sum(1 for k, _, d in rows if k == "tool_intent" and d.get("attempt", 1) > 1) <= flight[1]


@pytest.mark.parametrize("point", list(POINTS))
def test_sigkill_anywhere_then_resume_finishes_like_an_uninterrupted_run(point, baseline, tmp_path):
    root = make_project(tmp_path / "p", script())
    code, flight = kill_at(root, point, signal.SIGKILL)
    assert code == -signal.SIGKILL
    report, _ = resume_until_done(root)
    check(root, baseline, report, flight)


@pytest.mark.parametrize("point", SIGTERM_POINTS)
def test_sigterm_stops_the_run_stored_and_resume_finishes_it(point, baseline, tmp_path):
    root = make_project(tmp_path / "p", script())
    code, flight = kill_at(root, point, signal.SIGTERM)
    assert code == 143
    conn = sqlite3.connect(root / ".plait" / "journal.db")
    # Stopped and stored as cancelled by the signal (not an internal error), its lease let go.
    assert conn.execute("SELECT status FROM runs").fetchone() == ("cancelled",)
    assert conn.execute("SELECT count(*) FROM leases").fetchone() == (0,)
    conn.close()
    (stored,) = open_store(None, root).runs()
    assert stored["result"]["error"] == {
        "type": "AgentError",
        "kind": "cancelled",
        "message": "the run was stopped by SIGTERM",
    }
    report, _ = resume_until_done(root)
    check(root, baseline, report, flight)


def test_a_provider_failure_mid_run_resumes_without_redoing_effects(baseline, tmp_path):
    root = make_project(tmp_path / "p", script(fail_at_writer=3))
    failed = plait(root, "run", "spec.plait", "--input", "go", "--json")
    out, _ = failed.communicate(timeout=30)
    assert failed.returncode == 1 and json.loads(out)["error"]["kind"] == "server_error"
    before = Journal(root).effects()
    assert [line.split()[0] for line in before] == ["w1", "n1"]
    report, decisions = resume_until_done(root)
    assert decisions == 0  # a clean failure leaves no call of unknown outcome
    check(root, baseline, report, (1, 0))


def test_sigkill_then_resume_with_the_journal_in_postgresql(baseline, pg_backend, request):
    """The same proof with the journal in PostgreSQL (no segment file: a row is durable once committed), at one point:
    two branches in flight at once (one commit serves both), one of them has acted and its completion is not recorded."""
    point = "inside the parallel, a branch's tool acted"
    root = make_project(pg_backend.project / "p", script())
    journal = PostgresJournal(root, pg_backend.url)
    request.addfinalizer(journal.close)
    code, flight = kill_at(root, point, signal.SIGKILL, journal)
    assert code == -signal.SIGKILL
    report, _ = resume_until_done(root, journal)
    check(root, baseline, report, flight, journal)
    assert not (root / ".plait").exists()  # nothing went to a SQLite journal beside the spec
