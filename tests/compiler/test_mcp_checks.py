"""`mcp` declarations checked offline: attributes, the plait.lock beside the spec, tool names, collisions, the graph."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from plait.cli import main
from plait.compiler.diff import changes_to_text, diff_graphs
from plait.compiler.pipeline import compile_spec
from plait.compiler.render import render
from plait.core import graph as g
from plait.core.mcp_lock import Lock, LockedServer, LockedTool, dumps, fingerprint

COMMAND = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "./data"]
FS_TOOLS = ("read_text_file", "write_file", "list_directory", "search_files")
HEAD = 'model m = "openai/gpt-4o"\n'
FILES = (
    'mcp files "The files." {\n  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "./data"]\n%s}\n'
)


def server(name: str = "files", tools: tuple[str, ...] = FS_TOOLS, **identity) -> LockedServer:
    identity = identity or {"command": COMMAND, "url": None}
    return LockedServer(
        name=name,
        fingerprint=fingerprint(**identity),
        server_name="secure-filesystem-server",
        tools=tuple(
            LockedTool(name=t, description=f"The {t} tool.", input_schema={"type": "object", "properties": {}})
            for t in tools
        ),
    )


def write(folder: Path, spec: str, *servers: LockedServer, lock: str | None = None) -> Path:
    path = folder / "spec.plait"
    path.write_text(spec, encoding="utf-8")
    if servers:
        (folder / "plait.lock").write_text(dumps(Lock({s.name: s for s in servers})), encoding="utf-8")
    elif lock is not None:
        (folder / "plait.lock").write_text(lock, encoding="utf-8")
    return path


def spec(files_body: str = "", agent: str = "tools = [files]", more: str = "") -> str:
    return HEAD + FILES % files_body + more + f"agent a {{ model = m, {agent} }}\n"


def codes(path: Path) -> list[str]:
    return [d.code for d in compile_spec(path).diagnostics]


def only(path: Path, code: str):
    found = [d for d in compile_spec(path).diagnostics if d.code == code]
    assert len(found) == 1, [(d.code, d.message) for d in compile_spec(path).diagnostics]
    return found[0]


def mcp_node(path: Path) -> g.McpNode:
    result = compile_spec(path)
    assert result.graph is not None, [(d.code, d.message) for d in result.diagnostics]
    node = result.graph.node("files")
    assert isinstance(node, g.McpNode)
    return node


# --- attributes ------------------------------------------------------------------------------


def test_a_locked_server_checks_clean_and_the_graph_carries_its_lock(tmp_path):
    path = write(tmp_path, spec("  tools = [read_text_file, write_file]\n  timeout = 30s\n"), server())
    assert codes(path) == []
    node = mcp_node(path)
    assert node.lock_state == "fresh" and node.timeout == 30.0 and node.command == tuple(COMMAND)
    assert node.fingerprint == fingerprint(command=COMMAND, url=None)
    # Lock order (sorted by name), only what the allow-list keeps, each with the four documented keys.
    assert [t["name"] for t in node.offered] == ["read_text_file", "write_file"]
    assert node.offered[0] == {
        "name": "read_text_file",
        "description": "The read_text_file tool.",
        "input_schema": {"type": "object", "properties": {}},
        "output_schema": None,
        "annotations": None,
    }


def test_unknown_attribute_gets_a_did_you_mean_like_other_declarations(tmp_path):
    diagnostic = only(write(tmp_path, spec("  timeuot = 30s\n"), server()), "P201")
    assert "unknown attribute `timeuot` for mcp `files`" in diagnostic.message
    assert diagnostic.fix is not None and diagnostic.fix.replacement == "timeout"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("  command = []\n", "`command` must be a non-empty list of strings"),
        ('  command = "npx server"\n', "`command` must be a non-empty list of strings"),
        ("  command = [npx]\n", "`command` must be a non-empty list of strings"),
        ("  timeout = 30\n", "`timeout` must be a duration"),
        ("  tools = read_text_file\n", "`tools` must be a list of tool names"),
        ("  env = { KEY = 3 }\n", '`env` must be `env("VARIABLE")`'),
        ('  env = "KEY"\n', '`env` must be `{ KEY = env("VARIABLE") }`'),
    ],
)
def test_wrongly_typed_attributes_are_p203(tmp_path, body, says):
    text = HEAD + f"mcp files {{\n{body}" + ('  command = ["npx"]\n' if "command" not in body else "") + "}\n"
    text += "agent a { model = m, tools = [files] }\n"
    found = [d for d in compile_spec(write(tmp_path, text)).diagnostics if d.code == "P203"]
    assert found and says in found[0].message, [d.message for d in compile_spec(write(tmp_path, text)).diagnostics]


def test_env_and_headers_read_variables_or_take_literals_and_a_literal_secret_is_p501(tmp_path):
    text = HEAD + 'mcp files {\n  command = ["npx", "server"]\n  env = { TOKEN = env("GH_TOKEN"), MODE = "debug" }\n}\n'
    text += 'mcp web { url = "https://mcp.example.com/mcp", headers = { Authorization = env("WEB_TOKEN") } }\n'
    text += "agent a { model = m, tools = [files, web] }\n"
    result = compile_spec(write(tmp_path, text))
    assert result.ok and result.graph is not None
    assert result.graph.node("files").env == {"TOKEN": {"env": "GH_TOKEN"}, "MODE": "debug"}
    assert result.graph.node("web").headers == {"Authorization": {"env": "WEB_TOKEN"}}
    leaked = text.replace('env("WEB_TOKEN")', '"Bearer ' + "ghp_" + 'Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi"')
    assert "P501" in codes(write(tmp_path, leaked))


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("  timeout = 30s\n", "has neither `command` nor `url`"),
        ('  command = ["npx"]\n  url = "https://mcp.example.com/mcp"\n', "sets both `command` and `url`"),
        ('  url = "file:///etc/passwd"\n', "is not an http:// or https:// URL"),
        ('  url = "https://"\n', "is not an http:// or https:// URL"),
        ('  url = "https://mcp.example.com/mcp"\n  env = { K = env("K") }\n', "`env` does nothing"),
        ('  command = ["npx"]\n  headers = { K = env("K") }\n', "`headers` does nothing"),
    ],
)
def test_a_server_must_be_started_or_reached_exactly_one_way(tmp_path, body, says):
    text = HEAD + f"mcp files {{\n{body}}}\nagent a {{ model = m, tools = [files] }}\n"
    path = write(tmp_path, text)
    diagnostic = only(path, "P331")
    assert says in diagnostic.message
    assert "P332" not in codes(path)  # no lock nag for a server that cannot be reached as written


def test_the_url_is_never_echoed_in_a_message(tmp_path):
    text = (
        HEAD
        + 'mcp files { url = "ftp://mcp.example.com/x?key=abc123def456" }\nagent a { model = m, tools = [files] }\n'
    )
    assert "abc123" not in only(write(tmp_path, text), "P331").message


# --- the lock --------------------------------------------------------------------------------


def test_no_lock_is_a_warning_whose_fix_is_the_lock_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, spec())
    diagnostic = only(path, "P332")
    assert diagnostic.severity == "warning" and "no `plait.lock` beside the spec" in diagnostic.message
    assert diagnostic.fix is not None and "`plait mcp lock spec.plait`" in diagnostic.fix.message
    result = compile_spec(path)
    assert result.ok and result.graph is not None and result.graph.node("files").lock_state == "missing"
    assert result.graph.node("files").offered == ()


def test_a_lock_without_this_server_is_missing_too(tmp_path):
    path = write(tmp_path, spec(), server("other"))
    assert "no entry for mcp `files`" in only(path, "P332").message


def test_a_changed_declaration_makes_the_entry_stale(tmp_path):
    path = write(tmp_path, spec().replace("./data", "./docs"), server())
    diagnostic = only(path, "P333")
    assert diagnostic.severity == "warning" and "stale" in diagnostic.message
    assert diagnostic.fix is not None and "plait mcp lock" in diagnostic.fix.message
    assert mcp_node(path).lock_state == "stale" and mcp_node(path).offered == ()


def test_the_allow_list_timeout_and_approval_do_not_make_a_lock_stale(tmp_path):
    body = "  tools = [read_text_file, write_file]\n  timeout = 5s\n  approval = [write_file]\n"
    assert codes(write(tmp_path, spec(body), server())) == []


def test_an_env_variable_renamed_makes_it_stale_but_its_value_is_never_read(tmp_path, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", "one")
    body = '  env = { TOKEN = env("GH_TOKEN") }\n'
    locked = server(command=COMMAND, url=None, env={"TOKEN": {"env": "GH_TOKEN"}})
    assert codes(write(tmp_path, spec(body), locked)) == []
    monkeypatch.setenv("GH_TOKEN", "two")
    assert codes(write(tmp_path, spec(body), locked)) == []
    assert "P333" in codes(write(tmp_path, spec(body.replace("GH_TOKEN", "GITHUB_TOKEN")), locked))


@pytest.mark.parametrize(
    ("lock", "says"),
    [
        ("<<<<<<< HEAD\n{}\n", "is not JSON (line 1"),
        ('{"version": 9, "servers": {}}', "has version 9"),
        ('{"version": 1, "servers": {"files": {"server": {}, "tools": []}}}', "servers.files.fingerprint"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("\udcff".encode("utf-8", "surrogateescape").decode("latin-1"), "not JSON"),
    ],
)
def test_an_unreadable_lock_is_an_error(tmp_path, lock, says):
    path = write(tmp_path, spec(), lock=lock)
    diagnostic = only(path, "P334")
    assert diagnostic.severity == "error" and says in diagnostic.message
    assert compile_spec(path).graph is None


def test_a_lock_that_is_not_utf8_or_a_directory_is_an_error(tmp_path):
    path = write(tmp_path, spec())
    (tmp_path / "plait.lock").write_bytes(b'{"version": 1, "servers": {"\xff": {}}}')
    assert "cannot be read" in only(path, "P334").message
    (tmp_path / "plait.lock").unlink()
    (tmp_path / "plait.lock").mkdir()
    assert "is a directory" in only(path, "P334").message


def test_a_lock_linked_from_outside_the_project_is_not_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "plait.lock").write_text(dumps(Lock({"files": server()})), encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    path = write(project, spec())
    os.symlink(outside / "plait.lock", project / "plait.lock")
    assert "leaves the spec's directory" in only(path, "P334").message


def test_a_fifo_lock_does_not_hang_the_check(tmp_path):
    path = write(tmp_path, spec())
    os.mkfifo(tmp_path / "plait.lock")
    assert "is not a regular file" in only(path, "P334").message


def test_one_unreadable_lock_is_reported_once_for_all_its_servers(tmp_path):
    text = spec(more='mcp docs { command = ["npx", "docs"] }\n', agent="tools = [files, docs]")
    path = write(tmp_path, text, lock="nope")
    assert codes(path).count("P334") == 1


def test_the_lock_sits_beside_the_file_that_declares_the_server(tmp_path):
    (tmp_path / "servers").mkdir()
    (tmp_path / "servers" / "files.plait").write_text(FILES % "", encoding="utf-8")
    (tmp_path / "servers" / "plait.lock").write_text(dumps(Lock({"files": server()})), encoding="utf-8")
    path = tmp_path / "spec.plait"
    path.write_text('import "servers/files.plait"\n' + HEAD + "agent a { model = m, tools = [files.read_text_file] }\n")
    assert codes(path) == []
    (tmp_path / "plait.lock").write_text("not the one", encoding="utf-8")  # beside the importer: not read
    assert codes(path) == []


def test_spec_text_without_a_folder_has_no_lock_to_read():
    result = compile_spec(spec(), path="<string>")
    assert [d.code for d in result.diagnostics] == ["P332"]
    assert result.diagnostics[0].fix is not None and "plait mcp lock SPEC" in result.diagnostics[0].fix.message


# --- tool names --------------------------------------------------------------------------------


def test_an_agent_tool_the_server_does_not_offer_gets_a_did_you_mean(tmp_path):
    path = write(tmp_path, spec(agent="tools = [files.read_txt_file]"), server())
    diagnostic = only(path, "P335")
    assert diagnostic.message == "mcp `files` does not offer a tool `read_txt_file`"
    assert diagnostic.fix is not None and diagnostic.fix.replacement == "read_text_file"


@pytest.mark.parametrize(
    ("body", "agent"),
    [
        ("  tools = [read_text_file, list_dirs]\n", "tools = [files]"),
        ("  approval = [delete_file]\n", "tools = [files]"),
        ("", "tools = [files], until = files.write_fil"),
        ("", "tools = [files], until = files.write_fil succeeded"),
        ("", "tools = [files], approval = [files.wirte_file]"),
    ],
)
def test_every_place_that_names_an_mcp_tool_is_checked_against_the_lock(tmp_path, body, agent):
    assert codes(write(tmp_path, spec(body, agent), server())) == ["P335"]


def test_without_a_lock_tool_names_are_not_guessed(tmp_path):
    path = write(tmp_path, spec(agent="tools = [files.anything], until = files.anything"))
    assert codes(path) == ["P332"]


def test_a_tool_the_allow_list_leaves_out_is_p336_with_or_without_a_lock(tmp_path):
    body = "  tools = [read_text_file]\n  approval = [write_file]\n"
    text = spec(body, agent="tools = [files.write_file]")
    assert codes(write(tmp_path, text)).count("P336") == 2
    # With the lock the tool is known to exist: the fix adds it to the allow-list rather than guessing a spelling.
    locked = [d for d in compile_spec(write(tmp_path, text, server())).diagnostics if d.code == "P336"]
    assert len(locked) == 2 and all(d.fix is not None and d.fix.replacement is None for d in locked)
    assert "add `write_file` to `tools` of mcp `files`" in locked[0].fix.message


def test_until_and_approval_must_name_a_tool_the_agent_lists(tmp_path):
    agent = "tools = [files.read_text_file], until = files.write_file succeeded, approval = [files.list_directory]"
    found = {d.code: d.message for d in compile_spec(write(tmp_path, spec(agent=agent), server())).diagnostics}
    assert found == {
        "P301": "`until` names `files.write_file`, which agent `a` does not have in `tools`",
        "P204": "`approval` names `files.list_directory`, which agent `a` does not have in `tools`",
    }


def test_until_on_an_mcp_tool_and_its_edges(tmp_path):
    agent = "tools = [files.read_text_file, files.write_file], until = files.write_file succeeded"
    agent += ", approval = [files.write_file]"
    result = compile_spec(write(tmp_path, spec(agent=agent), server()))
    assert result.ok and result.graph is not None
    a = result.graph.node("a")
    assert isinstance(a, g.AgentNode)
    assert a.tools == ("files",) and a.until == ("files.write_file",) and a.until_succeeded
    assert a.approval == ("files.write_file",)
    uses = [(e.tool, e.approval) for e in result.graph.out_edges("a", "uses")]
    assert uses == [("read_text_file", False), ("write_file", True)]
    assert [(e.target, e.tool, e.succeeded) for e in result.graph.out_edges("a", "until")] == [
        ("files", "write_file", True)
    ]


def test_a_server_level_approval_gates_that_tool_for_every_agent(tmp_path):
    path = write(tmp_path, spec("  approval = [write_file]\n", "tools = [files.write_file]"), server())
    result = compile_spec(path)
    assert result.graph is not None
    assert [e.approval for e in result.graph.out_edges("a", "uses")] == [True]


def test_a_tool_and_its_whole_server_listed_together_is_listed_twice(tmp_path):
    diagnostic = only(write(tmp_path, spec(agent="tools = [files, files.read_text_file]"), server()), "P306")
    assert diagnostic.message == "agent `a` lists `files.read_text_file` twice in `tools`"


def test_two_tools_of_one_server_are_two_tools(tmp_path):
    assert codes(write(tmp_path, spec(agent="tools = [files.read_text_file, files.write_file]"), server())) == []


# --- one name, one tool ------------------------------------------------------------------------


def test_an_mcp_tool_and_a_python_tool_of_one_name_collide(tmp_path):
    more = 'tool read_text_file "Read." { run = python("kb:read") }\n'
    path = write(tmp_path, spec(more=more, agent="tools = [files, read_text_file]"), server())
    (tmp_path / "kb.py").write_text("def read(path: str) -> str:\n    return path\n", encoding="utf-8")
    diagnostic = only(path, "P306")
    assert "two tools named `read_text_file`: `files.read_text_file` and tool `read_text_file`" in diagnostic.message


def test_two_servers_offering_one_name_collide_unless_an_allow_list_separates_them(tmp_path):
    web = 'mcp web { url = "https://mcp.example.com/mcp" }\n'
    locked = (server(), server("web", ("search_files", "fetch"), command=None, url="https://mcp.example.com/mcp"))
    path = write(tmp_path, spec(more=web, agent="tools = [files, web]"), *locked)
    assert "`files.search_files` and `web.search_files`" in only(path, "P306").message
    allowed = spec("  tools = [read_text_file]\n", more=web, agent="tools = [files, web]")
    assert codes(write(tmp_path, allowed, *locked)) == []


def test_collisions_among_named_tools_are_found_without_a_lock(tmp_path):
    web = 'mcp web { url = "https://mcp.example.com/mcp" }\n'
    path = write(tmp_path, spec(more=web, agent="tools = [files.fetch, web.fetch]"))
    assert "P306" in codes(path)


def test_a_scripted_reply_may_call_an_mcp_tool_by_its_own_name(tmp_path):
    (tmp_path / "replies.json").write_text(
        json.dumps({"a": [{"tool_calls": [{"name": "read_text_file", "arguments": {"path": "x"}}]}, {"text": "ok"}]})
    )
    text = spec(agent="tools = [files]").replace('"openai/gpt-4o"', '"scripted/demo" { script = "replies.json" }')
    assert codes(write(tmp_path, text, server())) == []
    wrong = text.replace("tools = [files]", "tools = [files.write_file]")
    assert "P307" in codes(write(tmp_path, wrong, server()))


# --- render and diff --------------------------------------------------------------------------


def test_the_picture_shows_the_tools_and_a_missing_lock(tmp_path):
    path = write(tmp_path, spec(agent="tools = [files.read_text_file]"), server())
    result = compile_spec(path)
    assert result.graph is not None
    picture = render(result.graph, "mermaid")
    assert "tools list_directory, read_text_file, search_files, write_file" in picture
    assert '|"read_text_file"|' in picture
    (tmp_path / "plait.lock").unlink()
    unlocked = compile_spec(path).graph
    assert unlocked is not None and "lock missing" in render(unlocked, "mermaid")


def test_diff_shows_a_tool_added_to_the_offered_list_and_the_allow_list(tmp_path):
    before_dir, after_dir = tmp_path / "a", tmp_path / "b"
    before_dir.mkdir()
    after_dir.mkdir()
    old = compile_spec(write(before_dir, spec("  tools = [read_text_file]\n"), server(tools=FS_TOOLS[:3]))).graph
    new_spec = spec("  tools = [read_text_file, search_files]\n", agent="tools = [files, files.search_files]")
    new = compile_spec(write(after_dir, new_spec.replace(", files.search_files", ""), server())).graph
    assert old is not None and new is not None
    text = changes_to_text(diff_graphs(old, new))
    assert '~ mcp files: tools added ["search_files"]' in text
    assert "+ mcp files: offered.search_files The search_files tool.  [contract]" in text
    assert "fingerprint" not in text


def test_graph_json_shows_env_names_never_values(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", "the-value-of-the-token")
    path = write(tmp_path, spec('  env = { TOKEN = env("GH_TOKEN") }\n'))
    assert main(["graph", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    node = next(n for n in json.loads(out)["nodes"] if n["id"] == "files")
    assert node["attrs"]["env"] == {"TOKEN": {"env": "GH_TOKEN"}} and "the-value-of-the-token" not in out
    assert node["attrs"]["fingerprint"].startswith("sha256:") and len(node["attrs"]["fingerprint"]) == 71


# --- nothing is started ------------------------------------------------------------------------


def test_check_starts_no_process_and_opens_no_socket(tmp_path, monkeypatch, capsys):
    import socket
    import subprocess

    marker = tmp_path / "started"
    text = HEAD + f'mcp files {{ command = ["sh", "-c", "touch {marker}"] }}\n'
    text += 'mcp web { url = "http://127.0.0.1:9/mcp" }\nagent a { model = m, tools = [files, web] }\n'
    path = write(tmp_path, text)

    def refuse(*args, **kwargs):
        raise AssertionError("plait check tried to start a process or open a socket")

    for target, name in ((subprocess, "Popen"), (os, "posix_spawn"), (os, "fork"), (socket, "socket")):
        monkeypatch.setattr(target, name, refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for command in (["check", str(path)], ["graph", "--json", str(path)], ["render", "-f", "mermaid", str(path)]):
        assert main(command) == 0, capsys.readouterr()
    assert not marker.exists()


def test_a_tool_listed_before_its_whole_server_is_listed_twice_too(tmp_path):
    diagnostic = only(write(tmp_path, spec(agent="tools = [files.read_text_file, files]"), server()), "P306")
    assert diagnostic.message == "agent `a` lists `files.read_text_file` twice in `tools`"


def test_did_you_mean_hints_stop_at_a_budget_but_every_unknown_name_is_still_reported(tmp_path, monkeypatch):
    from plait.compiler import schema

    # One budget for the whole check, shared with the names' hints (the spec's own names compare few here).
    monkeypatch.setattr(schema, "HINT_BUDGET", 2 * len(FS_TOOLS))
    agent = "tools = [files.read_txt_file, files.write_fil, files.list_dir]"
    found = [d for d in compile_spec(write(tmp_path, spec(agent=agent), server())).diagnostics if d.code == "P335"]
    assert len(found) == 3
    assert [d.fix.replacement if d.fix else None for d in found] == ["read_text_file", "write_file", None]
