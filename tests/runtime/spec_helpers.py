"""Run a spec file on the scripted provider and see what each model call was sent (the user messages' text)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import plait
from plait.runtime.engine import Engine


def write_spec(tmp_path: Path, body: str, replies: Any, **files: str) -> Path:
    """A spec on `model m = "scripted/m"` reading `replies` (a list, or an object by runnable), with files beside."""
    (tmp_path / "replies.json").write_text(json.dumps(replies))
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    path = tmp_path / "spec.plait"
    head = 'model m = "scripted/m" { script = "replies.json" }\n'
    text = textwrap.dedent(body).lstrip("\n")
    if text.startswith("plait "):
        first, _, rest = text.partition("\n")
        text = first + "\n" + head + rest
    else:
        text = head + text
    path.write_text(text, encoding="utf-8")
    return path


def run_seeing(spec: Path, input: Any, model: str = "m") -> tuple[Any, list[tuple[str | None, str]]]:
    """(the run's result, [(agent or step, the text of the last user message) per model call, in order])."""
    engine = Engine.from_spec(spec)
    seen: list[tuple[str | None, str]] = []
    provider = engine._make_provider(model)
    for_run = provider.for_run

    def spied(**options: Any) -> Any:
        view = for_run(**options)
        original = view.complete

        async def spy(request: Any) -> Any:
            users = [m for m in request.messages if m.role == "user"]
            seen.append((request.agent, users[-1].text if users else ""))
            return await original(request)

        view.complete = spy
        return view

    provider.for_run = spied
    return plait.run(engine, input, raise_on_error=False), seen
