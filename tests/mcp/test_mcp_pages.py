"""A server that lists its tools in pages and sends a schema that is not JSON Schema (tests/mcp/paged_server.py):
`plait mcp lock` reads every page, and a run checks arguments against each tool's input schema, except the
one it cannot read, whose arguments go to the server as they are."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp_helpers import locked_spec, new_marker, processes_with, wait_until  # noqa: E402

from plait.cli import main  # noqa: E402
from plait.core.mcp_lock import LOCK_FILE, loads  # noqa: E402

pytestmark = pytest.mark.slow

PAGED = str(Path(__file__).with_name("paged_server.py"))


def test_every_page_is_locked_and_arguments_are_checked_against_the_locked_schemas(tmp_path, capsys):
    marker = new_marker()
    command = [sys.executable, PAGED, f"--marker={marker}"]
    calls = [{"name": "broken", "arguments": {"value": 42}}, {"name": "last", "arguments": {"value": 5}}]
    replies = [{"tool_calls": calls}, {"text": "done"}]
    spec = locked_spec(tmp_path, "paged", replies, f"mcp paged {{ command = {json.dumps(command)} }}", "paged")
    assert "paged: 3 tools locked from paged 1.0" in capsys.readouterr().out
    assert [t.name for t in loads((tmp_path / LOCK_FILE).read_text()).servers["paged"].tools] == [
        "broken",
        "first",
        "last",
    ]

    code = main(["run", str(spec), "--input", "go", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["output"] == "done"
    calls = {c["name"]: c for c in report["tool_calls"]}
    assert not calls["broken"]["is_error"]  # an unreadable schema checks nothing: the server decides
    assert calls["last"]["is_error"]  # 5 is not the string the locked schema asks for: the server never sees it
    invalid = [w for w in report["warnings"] if w["code"] == "tool_arguments_invalid"]
    assert [w["details"]["tool"] for w in invalid] == ["last"]
    assert wait_until(lambda: not processes_with(marker))


def test_a_server_declared_in_an_imported_module_is_locked_beside_the_module(tmp_path, capsys):
    (tmp_path / "lib").mkdir()
    command = [sys.executable, PAGED, f"--marker={new_marker()}"]
    (tmp_path / "lib" / "servers.plait").write_text(f"mcp paged {{ command = {json.dumps(command)} }}\n")
    main_spec = tmp_path / "main.plait"
    main_spec.write_text(
        'import "lib/servers.plait"\nmodel m = "openai/gpt-4o"\nagent a { model = m, tools = [paged] }\n'
    )
    assert main(["mcp", "lock", str(main_spec)]) == 0
    assert (tmp_path / "lib" / LOCK_FILE).exists() and not (tmp_path / LOCK_FILE).exists()
    capsys.readouterr()
    assert main(["check", str(main_spec)]) == 0
    assert "No problems" in "".join(capsys.readouterr())


def test_a_json_rpc_error_is_an_error_result_with_a_warning():
    import asyncio

    from plait.core.kinds import McpNode
    from plait.runtime.mcp import McpPool

    warnings: list[dict] = []
    config = McpNode(name="paged", command=(sys.executable, PAGED, f"--marker={new_marker()}"))
    pool = McpPool({"paged": config}, lambda code, message, path, **details: warnings.append(details))

    async def refused():
        try:
            return await pool.call("paged", "refuse", {}, 10)
        finally:
            await pool.aclose()

    result = asyncio.run(refused())
    assert result.is_error and "refused `refuse`: refused on purpose (-32602)" in result.content
    assert warnings[-1]["reason"] == "rpc"
