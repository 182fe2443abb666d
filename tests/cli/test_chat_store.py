"""`plait chat`'s stored conversation survives a write that fails: a real file-size limit (RLIMIT_FSIZE, the
failure a full disk gives a writer: the write stops short with an error) set on a chat process, so the save of
its next turn cannot be written whole. A limit rather than an injected error, because it is the kernel that cuts the
write short wherever it happens (the payload, the flush, a temporary file), as a full disk would."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SPEC = """
model demo = "scripted/demo" { script = "demo.json" }

agent main {
  model = demo
  system = "You help."
}
"""


def chat(root: Path, lines: list[str], *argv: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def cap() -> None:  # in the child, before exec: files it writes may not grow past `limit` bytes
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "plait", "chat", str(root / "spec.plait"), *argv],
        input="".join(f"{line}\n" for line in lines),
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
        preexec_fn=cap,
        timeout=120,
    )


def test_a_save_cut_short_keeps_the_stored_history_and_fails_the_chat(tmp_path: Path) -> None:
    (tmp_path / "spec.plait").write_text(SPEC)
    (tmp_path / "demo.json").write_text(json.dumps({"main": [{"text": "first answer"}, {"text": "x" * 4000}]}))
    first = chat(tmp_path, ["hello"])
    assert first.returncode == 0, first.stderr
    [saved] = (tmp_path / ".plait" / "chats").glob("*.json")
    before = saved.read_bytes()
    assert "first answer" in before.decode()

    # The next turn's history is larger than the limit: its save cannot be written whole.
    second = chat(tmp_path, ["and now?"], "--resume", saved.stem, limit=len(before) + 200)

    assert second.returncode == 1, second.stderr
    problems = [line for line in second.stderr.splitlines() if "could not save the conversation" in line]
    assert len(problems) == 1 and "kept" in problems[0], second.stderr
    assert "Traceback" not in second.stderr
    assert saved.read_bytes() == before  # the earlier conversation is whole, not truncated or emptied
    assert json.loads(before)["agent"] == "main"
    assert [p.name for p in saved.parent.iterdir()] == [saved.name]  # no temporary file left behind
    assert saved.stat().st_mode & 0o077 == 0  # owner-only, as anything said in a chat may be private
