"""A real `plait serve` process on a free loopback port for the serve tests, an SSE reader, and the specs they serve.

The server is `python -m plait serve ... --port 0`; its start line names the
port it bound (bound and listening before the line is written, so a request
made at once waits in the backlog: nothing here waits on time). Every test
synchronises on what the server says: its start line, its responses, its events.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from plait.runtime.providers.fake import FAKE_KEY_ENV

TOKEN = "serve-test-token-42"

#: An ask with a typed answer, then an agent whose tool needs approval and a tool that waits on a file.
SPEC = """plait 0.2

model demo = "scripted/demo" { script = "demo.json" }

input {
  topic: string
}

tool send "Send a message (a person approves it)." {
  params { text: string }
  run = python("serve_tools:send")
  approval = required
}

tool append "Append a line to the effects file (not idempotent); holds while hold.txt exists." {
  params { line: string }
  run = python("serve_tools:append")
}

ask confirm "Go on with {{input.topic}}?" {
  answer { ok: bool }
}

agent helper {
  model = demo
  tools = [send]
}

agent writer {
  model = demo
  tools = [append]
}

step grade {
  model = demo
  prompt = "Grade {{input}}"
  output { verdict: "accept" | "revise" }
}

chain main = confirm -> helper
"""

# `append` says it started (started.txt), then waits until hold.txt is gone: the test kills the server meanwhile.
TOOLS = """
import time
from pathlib import Path

HERE = Path(__file__).parent


def send(text):
    with (HERE / "sent.txt").open("a") as fh:
        fh.write(text + "\\n")
    return "sent " + text


def append(line, idempotency_key=""):
    if (HERE / "hold.txt").exists():
        (HERE / "started.txt").write_text(line)
        while (HERE / "hold.txt").exists():  # released (or the process killed) by the test
            time.sleep(0.01)
    with (HERE / "effects.txt").open("a") as fh:
        fh.write(f"{line} {idempotency_key}\\n")
    return "appended " + line
"""


def replies(*, hang_writer: bool = False) -> dict[str, Any]:
    """The scripted replies; `hang_writer`: the writer's first reply stays in flight until the process dies."""
    writer: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "append", "arguments": {"line": "w1"}}]},
        {"text": "written"},
    ]
    if hang_writer:
        writer[0] = writer[0] | {"delay": "1h"}
    return {
        "helper": [{"tool_calls": [{"name": "send", "arguments": {"text": "hi"}}]}, {"text": "done"}],
        "writer": writer,
        "grade": [{"output": {"verdict": "accept"}}],
    }


def make_project(root: Path, **options: Any) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.plait").write_text(SPEC)
    (root / "serve_tools.py").write_text(TOOLS)
    (root / "demo.json").write_text(json.dumps(replies(**options)))
    return root / "app.plait"


class Server:
    """One `plait serve` subprocess; `url` is its base URL."""

    def __init__(self, *args: str, cwd: Path, token: str | None = TOKEN, env: dict[str, str] | None = None) -> None:
        full_env = dict(os.environ, **(env or {}))
        full_env.pop("PLAIT_SERVE_TOKEN", None)
        if token is not None:
            full_env["PLAIT_SERVE_TOKEN"] = token
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "plait", "serve", *args, "--port", "0"],
            cwd=cwd,
            env=full_env,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stderr is not None
        first = self.proc.stderr.readline()
        self.lines = [first]
        found = re.search(r"on (http://\S+)", first)
        if found is None:
            rest = self.proc.stderr.read()
            self.proc.wait()
            self.proc.stderr.close()
            raise AssertionError(f"plait serve did not start: {first}{rest}")
        self.url = found.group(1)
        # The rest of stderr is drained in the background, so the server never blocks on a full pipe.
        self._drain = threading.Thread(target=self._read, daemon=True)
        self._drain.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def client(self, token: str | None = TOKEN) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=180)  # above the tests' ?wait=120s

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self._drain.join()
        self.proc.stderr.close()  # type: ignore[union-attr]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)
        self._drain.join()
        self.proc.stderr.close()  # type: ignore[union-attr]


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ, **(env or {}))
    full_env.pop("PLAIT_SERVE_TOKEN", None)
    return subprocess.run(
        [sys.executable, "-m", "plait", "serve", *args], cwd=cwd, env=full_env, capture_output=True, text=True
    )


def events(client: httpx.Client, run_id: str, *, last: int | None = None, stop: Any = None) -> Iterator[dict[str, Any]]:
    """The run's SSE events as {"id", "event", "data"}; `last` is sent as Last-Event-ID; ends with the stream, or
    after the first event `stop(event)` is true for (the connection is closed then, as a client that goes away)."""
    headers = {} if last is None else {"Last-Event-ID": str(last)}
    with client.stream("GET", f"/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        current: dict[str, Any] = {}
        for line in response.iter_lines():
            if line == "":
                if current:
                    current["data"] = json.loads(current["data"])
                    yield current
                    if stop is not None and stop(current):
                        return
                current = {}
                continue
            if line.startswith(":"):  # a comment (the server's keep-alive): no event
                continue
            field, _, value = line.partition(": ")
            current[field] = value


#: A spec whose tool reads the model's key from the environment and returns it: what must never reach a client.
VAULT = """plait 0.2

model m = "openai-compatible/vault-model" {{ base_url = "{url}", api_key = env("{env}") }}

tool peek "Read the vault." {{
  params {{ what: string }}
  run = python("vault_tools:peek")
}}

agent main "Reads the vault." {{
  model = m
  tools = [peek]
  max_steps = 3
}}
"""
VAULT_TOOLS = f'''import os


def peek(what: str) -> str:
    return "the key is " + os.environ["{FAKE_KEY_ENV}"]
'''
