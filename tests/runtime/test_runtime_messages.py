"""A step's `messages` (plait 0.3): each rendered as a prompt is, the system ones as the system prompt and the
rest, in order, as the conversation the model answers; journaled and traced as any model call
(src/plait/runtime/compose.py)."""

from __future__ import annotations

import json

import plait
from plait.cli import main
from plait.runtime.engine import Engine

SPEC = """plait 0.3
model m = "scripted/m" { script = "m.replies.json" }

input { text: string, lang: string }

step translate {
  model    = m
  messages = [
    system("You translate into {{run.input.lang}}."),
    system("Answer with the translation only."),
    user("Good morning"),
    assistant("Bonjour"),
    user("{{input.text}}"),
  ]
}
"""


class Seen:
    """A provider that hands each request on and keeps it: what the model was sent."""

    def __init__(self, inner, sent: list) -> None:
        self.inner, self.sent = inner, sent

    async def complete(self, request):
        self.sent.append(request)
        return await self.inner.complete(request)

    def for_run(self, *args, **kwargs):
        return Seen(self.inner.for_run(*args, **kwargs), self.sent)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _write(tmp_path) -> None:
    (tmp_path / "spec.plait").write_text(SPEC)
    (tmp_path / "m.replies.json").write_text(json.dumps([{"text": "Bonsoir"}]))


def test_the_model_is_sent_the_messages_in_order_with_the_system_ones_as_its_system_prompt(tmp_path):
    _write(tmp_path)
    engine = Engine.from_spec(tmp_path / "spec.plait")
    sent: list = []
    engine.wrap_provider = lambda model, provider: Seen(provider, sent)
    result = plait.run(engine, {"text": "Good evening", "lang": "French"})
    assert result.output == "Bonsoir"
    [request] = sent
    assert request.system == "You translate into French.\n\nAnswer with the translation only."
    assert [(m.role, m.text) for m in request.messages] == [
        ("user", "Good morning"),
        ("assistant", "Bonjour"),
        ("user", "Good evening"),
    ]


def test_a_journaled_run_keeps_the_messages_it_sent(tmp_path, capsys, monkeypatch):
    _write(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "spec.plait", "--input", '{"text": "Good evening", "lang": "French"}', "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["runs", "export", run_id]) == 0
    stored = capsys.readouterr().out
    assert "Good morning" in stored and "Bonjour" in stored and "Good evening" in stored
