"""`plait chat` honours budgets over the whole conversation: the agent's `budget` and `--budget` (the chat's own)
count every turn's calls; a pause at a terminal asks for new limits or stop, elsewhere it exits 3, and
`--resume CHAT --budget` raises the budget the chat stopped on."""

from __future__ import annotations

import io
import json
import sys

import pytest

from plait.cli import main

SPEC = """
model demo = "scripted/demo" { script = "demo.json", price = { input = 1.0, output = 2.0 } }

agent main {
  model = demo
  system = "You help."
  BUDGET
}
"""
USAGE = {"input_tokens": 1000, "output_tokens": 100}


@pytest.fixture
def chat(tmp_path, monkeypatch, capsys):
    """`plait chat` on the spec (its agent's budget line), these replies and stdin lines → (code, stdout, stderr)."""

    def go(budget, lines, *argv, tty=False, replies=5):
        (tmp_path / "spec.plait").write_text(SPEC.replace("BUDGET", budget))
        (tmp_path / "demo.json").write_text(
            json.dumps([{"text": f"reply {i}", "usage": USAGE} for i in range(replies)])
        )
        monkeypatch.setattr(sys, "stdin", io.StringIO("".join(f"{line}\n" for line in lines)))
        monkeypatch.setattr("plait.cli.chat.interactive", lambda: tty)
        code = main(["chat", str(tmp_path / "spec.plait"), *argv])
        out, err = capsys.readouterr()
        assert "Traceback" not in err
        return code, out, err

    return go


def _saved(tmp_path):
    return sorted((tmp_path / ".plait" / "chats").glob("*.json"))


def test_the_agents_budget_covers_every_turn_and_stops_the_chat_away_from_a_terminal(chat, tmp_path):
    code, out, err = chat("budget = { model_calls = 2 }", ["one", "two", "three", "four"])
    assert code == 3
    assert out.splitlines()[:2] == ["reply 0", "reply 1"]  # two turns, one call each; the third would be over
    assert "the budget of `main` would be exceeded: 2 model calls spent of 2 model calls" in err
    assert "--budget" in err
    [saved] = _saved(tmp_path)
    spent = json.loads(saved.read_text())["budget"]["scopes"][0]["spent"]
    assert spent["model_calls"] == 2


def test_at_a_terminal_a_raise_goes_on_with_the_same_turn(chat):
    code, out, err = chat("budget = { model_calls = 1 }", ["one", "two", "model_calls=3", "three", "/exit"], tty=True)
    assert code == 0, err
    assert out.split() == ["reply", "0", "reply", "1", "reply", "2"]
    assert "raise it (e.g. usd=5 model_calls=40) or press Enter to stop" in err


def test_at_a_terminal_a_bad_raise_asks_again_and_enter_stops(chat):
    code, out, err = chat("budget = { model_calls = 1 }", ["one", "two", "dollars=5", ""], tty=True)
    assert code == 3
    assert "`dollars` is not a budget key" in err
    assert err.count("press Enter to stop") == 2


def test_the_chats_own_budget_and_a_raise_on_resume(chat, tmp_path):
    code, out, err = chat("", ["one", "two"], "--budget", "model_calls=1")
    assert code == 3 and "the run's budget would be exceeded" in err
    [saved] = _saved(tmp_path)
    code, out, err = chat("", ["three"], "--resume", saved.stem, "--budget", "model_calls=5")
    assert code == 0, err
    # The raised budget counts what was spent before: one call, then the paused turn's and the new one's.
    spent = json.loads(saved.read_text())["budget"]["scopes"][0]
    assert spent["limits"]["model_calls"] == 5


def test_a_failing_budget_fails_the_turn_and_the_chat_goes_on_to_its_end(chat):
    code, out, err = chat("budget = { model_calls = 1, on_exceeded = fail }", ["one", "two", "/exit"])
    assert code == 0
    assert "plait: turn failed: budget_exceeded: the budget of `main` would be exceeded" in err


def test_a_bad_budget_is_a_usage_error(chat):
    code, _, err = chat("", ["one"], "--budget", "usd=lots")
    assert code == 2 and "budget `usd` must be a number" in err
