"""A spec's MCP declarations and its plait.lock → the tools each agent sees at run time; no server is started."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plait import compile
from plait.core.mcp_lock import Lock, LockedServer, LockedTool, dumps, fingerprint
from plait.runtime.context import RunContext
from plait.runtime.errors import AgentError
from plait.runtime.program import program_from_graph
from plait.runtime.mcp.drift import Drift, compare
from plait.runtime.mcp.server import McpStartError, resolve
from plait.runtime.mcp.toolset import is_idempotent

SPEC = """
model m = "openai/gpt-4o"

mcp files "The project's files." {
  command  = ["node", "server.js", "./data"]
  env      = { ROOT = "data", TOKEN = env("FILES_TOKEN") }
  tools    = [read_text_file, write_file, list_directory]
  timeout  = 5s
  approval = [write_file]
}

agent reader { model = m, tools = [files.read_text_file, files.list_directory] }
agent writer {
  model    = m
  tools    = [files]
  until    = files.write_file succeeded
}
"""

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def _tool(name: str, schema: dict | None = None) -> LockedTool:
    return LockedTool(name=name, description=f"The {name} tool.", input_schema=schema or SCHEMA)


def _spec(tmp_path: Path, text: str = SPEC, *, locked: bool = True, tools: tuple[LockedTool, ...] = ()) -> Path:
    spec = tmp_path / "files.plait"
    spec.write_text(text)
    if locked:
        fp = fingerprint(
            command=["node", "server.js", "./data"], url=None, env={"ROOT": "data", "TOKEN": {"env": "FILES_TOKEN"}}
        )
        tools = tools or tuple(_tool(n) for n in ("read_text_file", "write_file", "list_directory", "delete_file"))
        lock = Lock().merged(LockedServer(name="files", fingerprint=fp, server_name="fs", tools=tools))
        (tmp_path / "plait.lock").write_text(dumps(lock))
    return spec


def _program(spec: Path):
    result = compile(spec)
    assert result.graph is not None, [str(d) for d in result.diagnostics]
    return program_from_graph(result.graph)


def test_each_locked_allowed_tool_is_a_plait_tool_called_by_its_own_name(tmp_path):
    program = _program(_spec(tmp_path))
    mcp = {k: t for k, t in program.tools.items() if t.run.get("type") == "mcp"}
    # delete_file is locked but not in the allow-list: never offered.
    assert sorted(mcp) == ["files.list_directory", "files.read_text_file", "files.write_file"]
    tool = mcp["files.read_text_file"]
    assert (tool.name, tool.run) == ("read_text_file", {"type": "mcp", "server": "files", "tool": "read_text_file"})
    assert tool.parameters == SCHEMA and tool.description == "The read_text_file tool."
    assert tool.timeout == 5.0 and not tool.idempotent
    assert mcp["files.write_file"].approval and not tool.approval  # the declaration's approval list


def test_agents_see_the_tools_they_name_and_until_names_the_called_tool(tmp_path):
    program = _program(_spec(tmp_path))
    assert program.agents["reader"].tools == ("files.read_text_file", "files.list_directory")
    # All of a server's tools come in the lock's order (sorted by name): stable whatever the server lists first.
    assert program.agents["writer"].tools == ("files.list_directory", "files.read_text_file", "files.write_file")
    assert program.agents["writer"].until == ("write_file",)
    ctx = RunContext(program)
    toolset = ctx.toolset(program.agents["writer"])
    assert list(toolset.tools) == ["list_directory", "read_text_file", "write_file"]
    assert toolset.approval == frozenset({"write_file"})
    assert [s.name for s in toolset.specs] == ["list_directory", "read_text_file", "write_file"]


def test_the_graph_keeps_the_agent_as_declared(tmp_path):
    """The resolved tools are the run's view: `plait graph` and a second program from the same graph see the spec's."""
    graph = compile(_spec(tmp_path)).graph
    assert graph is not None
    first = program_from_graph(graph)
    assert graph.node("writer").tools == ("files",) and graph.node("writer").until == ("files.write_file",)
    assert program_from_graph(graph).agents["writer"] == first.agents["writer"]


def test_a_stdio_server_runs_in_the_spec_folder_with_env_read_later(tmp_path):
    server = _program(_spec(tmp_path)).mcp["files"]
    assert server.cwd == str(tmp_path)
    assert server.env == {"ROOT": "data", "TOKEN": {"env": "FILES_TOKEN"}}  # the name, not a value
    assert server.lock_state == "fresh"


def test_an_agent_approval_on_an_mcp_tool_is_the_called_name(tmp_path):
    text = SPEC.replace(
        "agent reader { model = m, tools = [files.read_text_file, files.list_directory] }",
        "agent reader { model = m, tools = [files.read_text_file], approval = [files.read_text_file] }",
    )
    program = _program(_spec(tmp_path, text))
    ctx = RunContext(program)
    assert ctx.toolset(program.agents["reader"]).approval == frozenset({"read_text_file"})


def test_an_agent_approval_on_a_whole_server_covers_each_of_its_tools(tmp_path):
    text = SPEC.replace("  until    = files.write_file succeeded\n", "  approval = [files]\n")
    program = _program(_spec(tmp_path, text))
    ctx = RunContext(program)
    assert ctx.toolset(program.agents["writer"]).approval == {"list_directory", "read_text_file", "write_file"}
    assert not ctx.toolset(program.agents["reader"]).approval  # it has no write_file, and asked for no approval


def test_without_a_lock_the_agent_fails_at_its_start_naming_the_fix(tmp_path):
    program = _program(_spec(tmp_path, locked=False))
    assert not any(t.run.get("type") == "mcp" for t in program.tools.values())
    with pytest.raises(AgentError) as caught:
        RunContext(program).toolset(program.agents["writer"])
    assert caught.value.kind == "mcp_lock_missing"
    assert f"run `plait mcp lock {tmp_path / 'files.plait'}` first" in caught.value.message  # tmp is outside cwd


def test_a_schema_that_is_not_json_schema_checks_nothing_rather_than_failing_every_call(tmp_path):
    bad = {"type": "object", "properties": {"path": {"type": "nonsense"}}}
    tools = (_tool("read_text_file", bad), _tool("write_file"), _tool("list_directory"))
    program = _program(_spec(tmp_path, tools=tools))
    assert program.tools["files.read_text_file"].parameters == {"type": "object"}
    assert program.tools["files.write_file"].parameters == SCHEMA


def test_idempotent_only_when_the_server_says_so():
    assert is_idempotent({"name": "a", "annotations": {"idempotentHint": True}})
    assert not is_idempotent({"name": "a", "annotations": {"idempotentHint": False, "readOnlyHint": True}})
    assert not is_idempotent({"name": "a"})


def test_drift_names_added_removed_and_changed_tools():
    before = [{"name": "a", "description": "A"}, {"name": "b", "input_schema": SCHEMA}, {"name": "c"}]
    after = [{"name": "a", "description": "A"}, {"name": "b", "input_schema": {"type": "object"}}, {"name": "d"}]
    drift = compare(before, after)
    assert drift == Drift(added=("d",), removed=("c",), changed=("b",))
    assert drift.describe() == "added: d; removed: c; changed: b"
    assert not compare(before, before) and compare(before, before).describe() == "no change"
    hinted = [{"name": "a", "annotations": {"idempotentHint": True}}]
    assert compare(hinted, [{"name": "a", "annotations": {"idempotentHint": False}}]).changed == ("a",)
    assert not compare([{"name": "a"}], hinted)  # an entry without annotations (an older lock) has none to differ


def test_env_values_are_read_from_the_environment_and_a_missing_one_is_named(monkeypatch):
    monkeypatch.setenv("PLAIT_TEST_MCP_VALUE", "v1")
    assert resolve("s", "variable", {"A": "lit", "B": {"env": "PLAIT_TEST_MCP_VALUE"}}) == {"A": "lit", "B": "v1"}
    monkeypatch.delenv("PLAIT_TEST_MCP_VALUE")
    with pytest.raises(McpStartError, match="`PLAIT_TEST_MCP_VALUE` \\(for header `B`\\) is not set"):
        resolve("s", "header", {"B": {"env": "PLAIT_TEST_MCP_VALUE"}})
    assert "PLAIT_TEST_MCP_VALUE" not in os.environ


def test_without_the_sdk_a_server_start_and_the_lock_command_say_how_to_get_it(tmp_path, monkeypatch, capsys):
    import importlib.util

    from plait.cli import main
    from plait.core.kinds import McpNode
    from plait.runtime.mcp import McpPool

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a))
    pool = McpPool({"files": McpNode(name="files", command=("node",))}, lambda *a, **k: None)
    with pytest.raises(McpStartError, match=r"pip install -e '\.\[mcp\]' in plait's clone"):
        asyncio.run(pool.start("files"))
    assert main(["mcp", "lock", str(_spec(tmp_path, locked=False))]) == 2
    assert "pip install -e '.[mcp]' in plait's clone" in capsys.readouterr().err


@pytest.mark.slow
def test_check_never_imports_the_sdk():
    example = Path(__file__).resolve().parents[2] / "examples" / "files" / "files.plait"
    code = (
        "import sys; from plait.cli import main; status = main(['check', sys.argv[1]]);"
        "assert 'mcp' not in sys.modules and 'mcp_types' not in sys.modules, 'check imported the mcp SDK';"
        "sys.exit(status)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(example)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
