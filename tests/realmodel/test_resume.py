"""A model server killed in the middle of a run (SIGKILL), restarted, and the run resumed with `plait resume`.

The kill is made by the run itself, between two model calls: a code step SIGKILLs the server whose
pid the test wrote beside the spec, so the next call is certain to find it dead (no race with a
reply in flight). On resume the same step would kill the restarted server: the resumed run only
finishes if what had finished is replayed from the journal, not run again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from realmodel.runner import new_server, plait, write_spec
from realmodel.llama import Server

pytestmark = pytest.mark.slow

TOOLS = """
import os, signal, socket, time
from pathlib import Path

HERE = Path(__file__).parent


def kill_server(input: str) -> str:
    pid, port = (int(n) for n in (HERE / "server.pid").read_text().split())
    os.kill(pid, signal.SIGKILL)
    # Go on only once the port refuses connections: the kernel closes the socket as the process dies.
    for _ in range(500):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except ConnectionRefusedError:
            (HERE / "killed").write_text(str(pid))
            return input
        time.sleep(0.01)
    raise RuntimeError("the server is still accepting connections")
"""


@pytest.fixture
def own_server() -> Iterator[Server]:
    """A server of this test's own: the shared one must survive the kill."""
    server = new_server().start()
    yield server
    server.stop()


def test_a_run_survives_its_server_being_killed_and_resumes(own_server: Server, tmp_path: Path) -> None:
    write_spec(
        tmp_path,
        own_server,
        """step first  { model = local, prompt = "Name one colour. Answer with the colour only.", max_tokens = 16 }
step crash  { run = python("tools:kill_server") }
step second { model = local, prompt = "Write one sentence using the word {{first}}.", max_tokens = 48 }
chain main = first -> crash -> second
""",
    )
    (tmp_path / "tools.py").write_text(TOOLS)
    assert own_server.proc is not None
    (tmp_path / "server.pid").write_text(f"{own_server.proc.pid} {own_server.port}")

    ran = plait(tmp_path, "run", "spec.plait", "--json")
    assert (tmp_path / "killed").read_text() == str(own_server.proc.pid)
    own_server.proc.wait()  # reaped: it was killed by the run
    report = ran.report
    assert ran.code == 1 and report["stop_reason"] == "error", report
    error = report["error"]
    # The failure says what happened and where, in the user's terms.
    assert error["kind"] == "network"
    assert "refused" in error["message"] and f"127.0.0.1:{own_server.port}/v1/chat/completions" in error["message"]
    assert [s["agent"] for s in report["steps"]] == ["first"]

    own_server.start()  # the same port, as a supervisor would restart it
    assert own_server.proc is not None
    (tmp_path / "killed").unlink()
    (tmp_path / "server.pid").write_text(f"{own_server.proc.pid} {own_server.port}")

    resumed = plait(tmp_path, "resume", report["run_id"], "--json")
    assert resumed.code == 0, resumed.stderr
    done = resumed.report
    assert done["run_id"] == report["run_id"] and done["stop_reason"] == "done"
    assert isinstance(done["output"], str) and done["output"].strip()
    # Nothing that finished ran again: the code step did not kill the new server, and `first` was not asked again.
    assert not (tmp_path / "killed").exists() and own_server.proc.poll() is None
    assert [s["agent"] for s in done["steps"]].count("first") <= 1
    assert [s["agent"] for s in done["steps"]][-1] == "second"
