"""Projects for batch tests: specs whose code steps and tools are python modules written beside them, and reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: A code step with a delay per input, that remembers how many calls were in flight (the concurrency bound).
ECHO_SPEC = """plait 0.2
input {
  text: string
  delay: float = 0.01
}
step echo "upper-cases the text after a delay" {
  run = python("work:echo")
}
"""

ECHO_MODULE = """
import asyncio, json, os

HERE = os.path.dirname(os.path.abspath(__file__))
in_flight = 0

async def echo(text: str, delay: float = 0.01) -> dict:
    global in_flight
    in_flight += 1
    peak = in_flight
    try:
        await asyncio.sleep(delay)
        if text == "boom":
            raise ValueError("boom")
        if text == "die":  # the process ends at once, as on a segfault or the OOM killer (Ray tests only)
            os._exit(1)
        with open(os.path.join(HERE, "calls.txt"), "a") as fh:
            fh.write(json.dumps({"text": text, "pid": os.getpid(), "peak": peak}) + "\\n")
        return {"text": text.upper()}
    finally:
        in_flight -= 1
"""

#: An agent whose one model call (after a delay) calls a tool that appends a line to effects.txt: not idempotent.
EFFECT_SPEC = """plait 0.2
model m = "scripted/m" { script = "replies.json" }
tool record "append a line to the effects file" {
  params { note: string }
  run = python("fx:record")
}
agent main "does the work" {
  model = m
  tools = [record]
  until = record
}
"""

EFFECT_MODULE = """
import os

HERE = os.path.dirname(os.path.abspath(__file__))

def record(note: str, idempotency_key: str = "") -> str:
    with open(os.path.join(HERE, "effects.txt"), "a") as fh:
        fh.write(idempotency_key + "\\n")
    return idempotency_key
"""


def write_echo(root: Path, lines: list[Any]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "spec.plait").write_text(ECHO_SPEC)
    (root / "work.py").write_text(ECHO_MODULE)
    write_lines(root / "in.jsonl", lines)
    return root


def write_effects(root: Path, rows: int, delay: str = "30ms") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "spec.plait").write_text(EFFECT_SPEC)
    (root / "fx.py").write_text(EFFECT_MODULE)
    # One model call per row, all alike, so rows may take replies in any order; spare replies for resumes.
    reply = {"tool_calls": [{"name": "record", "arguments": {"note": "x"}}], "delay": delay}
    (root / "replies.json").write_text(json.dumps([reply] * (rows * 3)))
    write_lines(root / "in.jsonl", [f"ticket {i}" for i in range(rows)])
    return root


class Raw(str):
    """A line written as it is (not as JSON): a bad line, plain text, a blank line."""


def write_lines(path: Path, lines: list[Any]) -> None:
    path.write_text("".join((line if isinstance(line, Raw) else json.dumps(line)) + "\n" for line in lines))


def results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def calls(root: Path) -> list[dict[str, Any]]:
    path = root / "calls.txt"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
