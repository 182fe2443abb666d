"""A real `plait serve` app on loopback for the protocol tests, and the specs they serve.

The server runs in a thread with its own event loop on a socket bound before it
starts, so a client can connect at once (the connection waits in the backlog
until the server accepts it): nothing waits on time.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TOKEN = "test-token-0123456789"

#: Typed input, an ask with a typed answer, a route on the answer: text output.
TRIAGE = r"""plait 0.2

model fast = "scripted/fast" { script = "triage.replies.json" }

input {
  ticket:   string
  customer: string
}

step draft { model = fast, prompt = "Reply to {{input.customer}}: {{input.ticket}}" }

ask confirm "Send this reply?\n{{input}}" {
  answer {
    decision: "send" | "drop"
    note: string?
  }
}

step send { model = fast, prompt = "Send it. {{input.note}}" }
step drop { model = fast, prompt = "Drop it." }

route decide on input.decision {
  "send" -> send
  "drop" -> drop
}

chain main = draft -> confirm -> decide
"""
TRIAGE_REPLIES = {"draft": [{"text": "Dear Ann"}], "send": [{"text": "sent"}], "drop": [{"text": "dropped"}]}

#: Text input, typed output.
GRADE = """plait 0.2

model fast = "scripted/fast" { script = "grade.replies.json" }

step grade "Grade an answer." {
  model = fast
  prompt = "Grade this answer: {{input}}"
  output {
    verdict: "accept" | "revise"
    score: int
  }
}
"""
GRADE_REPLIES = {"grade": [{"output": {"verdict": "accept", "score": 9}}]}

#: An agent with a tool and a tool that needs approval.
DESK = """plait 0.2

model fast = "scripted/fast" { script = "desk.replies.json" }

tool add "Add two numbers." {
  params {
    a: int
    b: int
  }
  run = python("desk_tools:add")
}

tool send "Send a message." {
  params { to: string }
  run = python("desk_tools:send")
  approval = required
}

agent main "Adds numbers and sends them." {
  model = fast
  system = "You add."
  tools = [add, send]
  max_steps = 5
}
"""
DESK_TOOLS = """def add(a: int, b: int) -> int:
    return a + b


def send(to: str) -> str:
    return f"sent to {to}"
"""
DESK_REPLIES = {
    "main": [
        {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
        {"tool_calls": [{"name": "send", "arguments": {"to": "ann"}}]},
        {"text": "The sum is 5."},
    ]
}


def write_specs(folder: Path, *names: str) -> list[Path]:
    """The named specs (triage, grade, desk) and their scripts in `folder`."""
    made = []
    for name in names:
        text, replies = {"triage": (TRIAGE, TRIAGE_REPLIES), "grade": (GRADE, GRADE_REPLIES)}.get(
            name, (DESK, DESK_REPLIES)
        )
        (folder / f"{name}.plait").write_text(text)
        (folder / f"{name}.replies.json").write_text(json.dumps(replies))
        if name == "desk":
            (folder / "desk_tools.py").write_text(DESK_TOOLS)
        made.append(folder / f"{name}.plait")
    return made


@contextmanager
def serving(specs: list[Path], *, mcp: bool = False, token: str | None = TOKEN) -> Iterator[str]:
    """`plait serve`'s app for `specs` on a loopback port: yields its base URL; stopped and closed on exit."""
    import uvicorn

    from plait.serve.app import build_app
    from plait.serve.service import RunService

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    service = RunService(specs, None)
    app = build_app(service, auth=token, mcp=mcp)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join()
        sock.close()
