"""The reference MCP servers from the npm registry (installed by `npm ci` at the repo root): `plait mcp lock`
writes a lock that `plait check` accepts offline, `--check` catches a stale one, and plait's client talks to
the servers over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess

import pytest

pytest.importorskip("mcp")

from mcp_helpers import new_marker, free_port, npm_server, processes_with, wait_until  # noqa: E402

from plait.cli import main  # noqa: E402
from plait.core.mcp_lock import LOCK_FILE, loads  # noqa: E402
from plait.core.kinds import McpNode  # noqa: E402
from plait.runtime.mcp import McpPool, McpStartError  # noqa: E402

pytestmark = pytest.mark.slow

FILES_SPEC = """model m = "openai/gpt-4o"

mcp files "The project's notes." {{
  command = ["{bin}", "data", "--marker={marker}"]
  tools   = [read_text_file, list_directory, write_file]
}}

agent a {{ model = m, tools = [files], until = files.write_file succeeded }}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A folder with a spec on the filesystem server, locked once for the module: (folder, first lock output)."""
    folder = tmp_path_factory.mktemp("files")
    (folder / "data").mkdir()
    (folder / "data" / "notes.txt").write_text("buy milk\n")
    marker = new_marker()
    (folder / "files.plait").write_text(FILES_SPEC.format(bin=npm_server("mcp-server-filesystem"), marker=marker))
    return folder, marker


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_lock_writes_what_the_server_offers_and_check_accepts_it_offline(project, capsys):
    folder, marker = project
    spec = str(folder / "files.plait")
    code, out, err = _cli(capsys, "mcp", "lock", spec)
    assert code == 0, err
    assert "files: 14 tools locked from secure-filesystem-server" in out
    lock = loads((folder / LOCK_FILE).read_text())
    entry = lock.servers["files"]
    assert {"read_text_file", "write_file", "list_directory", "directory_tree"} <= {t.name for t in entry.tools}
    assert entry.tool("read_text_file").input_schema["required"] == ["path"]  # type: ignore[union-attr]
    assert entry.server_name == "secure-filesystem-server" and entry.protocol_version
    assert entry.tool("read_text_file").annotations["readOnlyHint"] is True  # type: ignore[union-attr,index]
    assert wait_until(lambda: not processes_with(marker)), "lock left the server running"
    # check starts nothing: it reads the lock (and the lock it reads is fresh).
    code, out, err = _cli(capsys, "check", spec)
    assert code == 0 and "No problems" in out + err, out + err
    assert not processes_with(marker)


def test_check_mode_passes_on_a_current_lock_and_fails_on_a_stale_one(project, capsys):
    folder, _ = project
    spec = str(folder / "files.plait")
    path = folder / LOCK_FILE
    if not path.exists():
        assert _cli(capsys, "mcp", "lock", spec)[0] == 0
    assert _cli(capsys, "mcp", "lock", "--check", spec)[0] == 0
    data = json.loads(path.read_text())
    tools = data["servers"]["files"]["tools"]
    data["servers"]["files"]["tools"] = [t for t in tools if t["name"] != "move_file"]
    for t in data["servers"]["files"]["tools"]:
        if t["name"] == "read_text_file":
            t["description"] = "an older description"
    data["servers"]["other"] = {"fingerprint": "x", "server": {}, "tools": []}  # another spec's server
    stale = json.dumps(data)
    path.write_text(stale)
    code, out, err = _cli(capsys, "mcp", "lock", "--check", spec)
    assert code == 1
    assert "files: added: move_file; changed: read_text_file" in out
    assert f"would change; run `plait mcp lock {spec}` and commit it" in err  # names the spec, as check's P333 does
    assert path.read_text() == stale  # --check writes nothing
    code, out, err = _cli(capsys, "mcp", "lock", spec)
    assert code == 0 and "written" in out
    again = loads(path.read_text())
    assert "move_file" in {t.name for t in again.servers["files"].tools}
    assert "other" in again.servers  # kept: the lock is per folder, not per spec


def test_a_server_that_cannot_start_is_named_and_exits_1(tmp_path, capsys):
    (tmp_path / "bad.plait").write_text(
        'model m = "openai/gpt-4o"\nmcp gone { command = ["no-such-mcp-server-81c2"] }\nagent a { model = m, tools = [gone] }\n'
    )
    code, out, err = _cli(capsys, "mcp", "lock", str(tmp_path))
    assert code == 1
    assert "gone" in err and "command not found" in err
    assert not (tmp_path / LOCK_FILE).exists()


def test_no_spec_is_a_usage_error(tmp_path, capsys):
    assert _cli(capsys, "mcp", "lock", str(tmp_path))[0] == 2


def test_the_everything_server_over_stdio():
    marker = new_marker()
    config = McpNode(name="everything", command=(npm_server("mcp-server-everything"), "stdio", f"--marker={marker}"))

    warnings: list[str] = []

    async def session() -> tuple[list[str], str, bool]:
        # Not locked: nothing to compare the live tools with, so no drift warning.
        pool = McpPool({"everything": config}, lambda code, *a, **k: warnings.append(code))
        try:
            connection = await pool.start("everything")
            names = [t.name for t in await connection.list_tools()]
            echo = await pool.call("everything", "echo", {"message": "hi"}, 10)
            total = await pool.call("everything", "get-sum", {"a": 2, "b": 3}, 10)
            assert "5" in total.content
            return names, echo.content, echo.is_error
        finally:
            await pool.aclose()

    names, text, is_error = asyncio.run(session())
    assert {"echo", "get-sum"} <= set(names)
    assert (text, is_error) == ("Echo: hi", False) and warnings == []
    assert wait_until(lambda: not processes_with(marker))


def test_the_everything_server_over_streamable_http_on_loopback():
    port = free_port()
    process = subprocess.Popen(
        [npm_server("mcp-server-everything"), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    config = McpNode(name="everything", url=f"http://127.0.0.1:{port}/mcp", headers={"X-Plait": "test"})

    async def session() -> str:
        for _ in range(150):  # node takes a moment to listen
            pool = McpPool({"everything": config}, lambda *a, **k: None)
            try:
                await pool.start("everything")
            except McpStartError:
                await pool.aclose()
                await asyncio.sleep(0.2)
                continue
            try:
                return (await pool.call("everything", "echo", {"message": "over http"}, 10)).content
            finally:
                await pool.aclose()
        raise AssertionError("the everything server never listened")

    try:
        assert asyncio.run(session()) == "Echo: over http"
    finally:
        process.terminate()
        process.wait(10)


def test_paths_are_read_relative_to_the_spec_folder(project):
    folder, _ = project
    marker = new_marker()
    config = McpNode(
        name="files",
        command=(npm_server("mcp-server-filesystem"), "data", f"--marker={marker}"),
        file=str(folder / "agent.plait"),  # a stdio server runs in its declaring spec's folder
    )

    async def read() -> str:
        pool = McpPool({"files": config}, lambda *a, **k: None)
        try:
            return (await pool.call("files", "read_text_file", {"path": "notes.txt"}, 10)).content
        finally:
            await pool.aclose()

    text = asyncio.run(read())
    assert "buy milk" in text
