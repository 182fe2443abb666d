"""Every example in examples/ has tests, and they pass offline at 100% graph coverage (route cases, loop exits,
map paths, asks, approval answers, fallback edges): `plait test FOLDER --coverage --min-coverage 100` for each,
with the network and new processes refused, so an example's HTTP, MCP and process tools are stood in for."""

from __future__ import annotations

import asyncio
import socket
import subprocess
from pathlib import Path

import pytest

from plait.cli import EXIT_OK, main
from plait.spectest.runner import has_tests

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.name for p in (ROOT / "examples").iterdir() if p.is_dir() and any(p.glob("*.plait")))


def test_every_example_has_tests():
    untested = [name for name in EXAMPLES if not any(has_tests(f) for f in (ROOT / "examples" / name).glob("*.plait"))]
    assert untested == [], f"examples without a test: {untested}"


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Refuse every connection and every new process, recording what was tried."""
    tried: list[str] = []

    def refuse(what: str):
        def refused(*args, **kwargs):
            tried.append(f"{what} {args[1:2] or args[:1]}")
            raise OSError(f"the examples' tests must run offline: {what} refused")

        return refused

    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect"))
    monkeypatch.setattr(socket, "create_connection", refuse("connect"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("name lookup"))
    monkeypatch.setattr(subprocess.Popen, "__init__", refuse("process"))
    monkeypatch.setattr(asyncio, "create_subprocess_exec", refuse("process"))
    return tried


@pytest.mark.parametrize("example", EXAMPLES)
def test_an_examples_tests_pass_offline_at_full_coverage(example, offline, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    status = main(["test", f"examples/{example}", "--no-color", "--coverage", "--min-coverage", "100"])
    out = capsys.readouterr()
    assert status == EXIT_OK, out.out + out.err
    assert "total: 100.0%" in out.out
    assert offline == []
