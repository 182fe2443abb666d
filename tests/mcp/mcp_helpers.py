"""Where the MCP test servers are, and how a test tells that a server process is gone."""

from __future__ import annotations

import json
import os
import random
import socket
import string
import sys
import time
from pathlib import Path

import pytest

from plait.cli import main
from plait.core.kinds import McpNode

ROOT = Path(__file__).resolve().parents[2]
#: `npm ci` in the repo root installs the reference servers here (package.json); .ci/run does it.
NODE_BIN = ROOT / "node_modules" / ".bin"
FLAKY = Path(__file__).with_name("flaky_server.py")


def npm_server(name: str) -> str:
    """The installed bin of a reference server; the test skips when `npm ci` has not been run."""
    path = NODE_BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed: run `npm ci` in the repo root")
    return str(path)


def new_marker() -> str:
    """A word to put on a server's command line and find its process by (letters only: a hex one reads as a secret)."""
    return "plaitmark" + "".join(random.choices(string.ascii_lowercase, k=16))


def flaky(marker: str, *args: str, **options: object) -> McpNode:
    """The flaky test server over stdio; `marker` is put on its command line so a test can find its process."""
    return McpNode(name="flaky", command=(sys.executable, str(FLAKY), *args, f"--marker={marker}"), **options)  # type: ignore[arg-type]


def processes_with(marker: str) -> list[int]:
    """Live processes whose command line holds `marker` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            status = (entry / "stat").read_text()
        except OSError:
            continue
        if marker.encode() in cmdline and ") Z " not in status:  # a zombie has exited already
            found.append(int(entry.name))
    return found


def wait_until(predicate, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def processes_in(folder: Path) -> list[int]:
    """Live processes whose working directory is `folder` (how a test finds a stdio server it did not name)."""
    found = []
    target = str(folder.resolve())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            status = (entry / "stat").read_text()
        except OSError:
            continue
        if cwd == target and ") Z " not in status:
            found.append(int(entry.name))
    return found


def locked_spec(folder: Path, stem: str, replies: dict, mcp: str, tools: str) -> Path:
    """`folder/stem.plait`: a scripted model giving agent `a` `replies`, the declaration `mcp` on line 3, and
    `a` offered `tools`; locked with `plait mcp lock` (which starts the server once)."""
    (folder / f"{stem}.replies.json").write_text(json.dumps({"a": replies}))
    spec = folder / f"{stem}.plait"
    spec.write_text(
        f'model m = "scripted/m" {{ script = "{stem}.replies.json" }}\n\n{mcp}\n\nagent a {{ model = m, tools = [{tools}] }}\n'
    )
    assert main(["mcp", "lock", str(spec)]) == 0
    return spec
