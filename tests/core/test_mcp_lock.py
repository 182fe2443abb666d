"""plait.lock round-trips, diffs well, names what is wrong, and never holds a secret's value."""

from __future__ import annotations

import json

import pytest

from plait.core.mcp_lock import Lock, LockedServer, LockedTool, LockError, dumps, fingerprint, loads


def _server(name: str = "files", **over: object) -> LockedServer:
    base: dict = dict(
        name=name,
        fingerprint=fingerprint(command=["npx", "server", "./data"], url=None),
        server_name="secure-filesystem-server",
        server_version="0.2.0",
        protocol_version="2025-06-18",
        tools=(
            LockedTool(name="write_file", description="Write.", input_schema={"type": "object", "required": ["path"]}),
            LockedTool(name="read_text_file", description="Read.", output_schema={"type": "object"}),
        ),
    )
    base.update(over)
    return LockedServer(**base)


def test_a_lock_round_trips_and_is_written_sorted_and_stable():
    lock = Lock({"web": _server("web"), "files": _server()})
    text = dumps(lock)
    assert text.endswith("}\n") and dumps(loads(text)) == text
    assert list(json.loads(text)["servers"]) == ["files", "web"]
    back = loads(text).servers["files"]
    assert [t.name for t in back.tools] == [
        "read_text_file",
        "write_file",
    ]  # sorted, so a re-lock diffs only real changes
    assert back.tool("write_file") == _server().tool("write_file")
    assert back.tool("missing") is None


def test_merging_keeps_the_servers_another_spec_in_the_folder_locked():
    lock = Lock({"web": _server("web")}).merged(_server())
    assert sorted(lock.servers) == ["files", "web"]


def test_the_fingerprint_changes_with_what_starts_the_server_and_never_holds_a_value():
    a = fingerprint(command=["npx", "a"], url=None, env={"TOKEN": "GH_TOKEN"}, headers={"Authorization": "Bearer sk-x"})
    assert a.startswith("sha256:") and "sk-x" not in a
    assert a == fingerprint(
        command=["npx", "a"], url=None, env={"TOKEN": "GH_TOKEN"}, headers={"authorization": "other"}
    )
    assert a != fingerprint(command=["npx", "b"], url=None, env={"TOKEN": "GH_TOKEN"})
    assert a != fingerprint(command=["npx", "a"], url=None, env={"TOKEN": "OTHER"})
    assert fingerprint(command=None, url="http://127.0.0.1:1/mcp") != fingerprint(command=None, url="http://x/mcp")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "is not JSON (line 1"),
        ("[]", "is not a JSON object"),
        ('{"version": 7, "servers": {}}', "has version 7"),
        ('{"version": 1}', "no `servers`"),
        ('{"version": 1, "servers": {"f": {"server": {}, "tools": [{}], "fingerprint": "x"}}}', "servers.f.tools[0]"),
        ('{"version": 1, "servers": {"f": {"server": {}, "tools": []}}}', "servers.f.fingerprint"),
    ],
)
def test_a_bad_lock_says_what_is_wrong(text: str, says: str):
    with pytest.raises(LockError, match=None) as e:
        loads(text)
    assert says in str(e.value)


def test_the_fingerprint_takes_the_graphs_env_shapes_a_source_and_a_literal_differ():
    read = fingerprint(command=["npx", "a"], url=None, env={"TOKEN": {"env": "GH_TOKEN"}})
    assert read == fingerprint(command=("npx", "a"), url=None, env={"TOKEN": {"env": "GH_TOKEN"}})
    assert read != fingerprint(command=["npx", "a"], url=None, env={"TOKEN": "GH_TOKEN"})
    assert read != fingerprint(command=["npx", "a"], url=None, env={"TOKEN": {"env": "GITHUB_TOKEN"}})
    # A header's source is not part of it either: only its name.
    assert fingerprint(command=None, url="https://x/mcp", headers={"Authorization": {"env": "A"}}) == fingerprint(
        command=None, url="https://x/mcp", headers={"authorization": "literal"}
    )
