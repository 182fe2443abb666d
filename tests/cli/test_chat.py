"""`plait chat` driven through stdin: the banner, a failed turn that keeps the conversation, `--resume`, and
edited arguments at the approval prompt checked against the tool's JSON Schema before they are accepted."""

from __future__ import annotations

import io
import json
import sys

import pytest

from plait.cli import main

SPEC = """
model demo = "scripted/demo" { script = "demo.json" }

tool send "Send a message." {
  params {
    to: string
    copies: int = 1
  }
  run = python("chat_tools:send")
  approval = required
}

agent main {
  model = demo
  system = "You help."
  tools = [send]
  max_steps = 4
}
"""


@pytest.fixture
def chat(tmp_path, monkeypatch, capsys):
    """Run `plait chat` on the spec with these scripted replies and these stdin lines → (code, stdout, stderr)."""
    (tmp_path / "spec.plait").write_text(SPEC)
    (tmp_path / "chat_tools.py").write_text("def send(to, copies=1):\n    return f'sent {copies} to {to}'\n")

    def go(replies, lines, *argv, tty=False):
        (tmp_path / "demo.json").write_text(json.dumps({"main": replies}))
        monkeypatch.setattr(sys, "stdin", io.StringIO("".join(f"{line}\n" for line in lines)))
        monkeypatch.setattr("plait.cli.chat.interactive", lambda: tty)
        code = main(["chat", str(tmp_path / "spec.plait"), *argv])
        out, err = capsys.readouterr()
        return code, out, err

    return go


def _saved(tmp_path) -> list:
    return sorted((tmp_path / ".plait" / "chats").glob("*.json"))


def test_the_banner_names_the_agent_and_how_to_quit(chat):
    code, out, err = chat([{"text": "hello"}], ["hi", "/exit", "never read"])
    assert code == 0 and out == "hello\n"
    banner = err.splitlines()[0]
    assert "`main`" in banner and "/exit" in banner and "Ctrl-D" in banner


def test_a_failed_turn_is_reported_and_the_conversation_goes_on(chat, tmp_path):
    replies = [
        {"text": "hi Ann"},
        {"error": {"kind": "server_error", "message": "overloaded"}},
        {"text": "you are Ann"},
    ]
    code, out, err = chat(replies, ["I am Ann", "who am I?", "who am I?"])
    assert "plait: turn failed: server_error: overloaded" in err
    assert out.splitlines() == ["hi Ann", "", "you are Ann"]  # the chat answered after the failure
    assert code == 0  # a later turn answered: the input ended on a conversation that went on
    [saved] = _saved(tmp_path)
    messages = json.loads(saved.read_text())["run"]["messages"]
    # The failed question is not kept twice: the history reads as the conversation that happened.
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]


def test_resume_continues_a_stored_chat(chat, tmp_path):
    code, _, err = chat([{"text": "noted: Ann"}, {"text": "you are Ann"}], ["I am Ann"])
    assert code == 0
    [saved] = _saved(tmp_path)
    chat_id = saved.stem
    assert chat_id in err.splitlines()[0]
    # The replies file is read afresh; the stored chat's scripted cursor continues where it stopped.
    code, out, err = chat([{"text": "noted: Ann"}, {"text": "you are Ann"}], ["who am I?"], "--resume", chat_id)
    assert (code, out) == (0, "you are Ann\n")
    assert "2 messages so far" in err.splitlines()[0]
    assert _saved(tmp_path) == [saved]  # the same chat, not a new one
    messages = json.loads(saved.read_text())["run"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]


def test_resume_of_an_unknown_chat_is_a_usage_error(chat):
    code, _, err = chat([], [], "--resume", "main-19990101-000000")
    assert code == 2 and "no stored chat `main-19990101-000000`" in err


def test_exit_after_a_failed_turn_exits_0_and_input_ending_on_one_exits_1(chat):
    failed = [{"text": "hi"}, {"error": {"kind": "server_error", "message": "overloaded"}}]
    code, _, err = chat(failed, ["hello", "and?", "/exit"])
    assert code == 0 and "turn failed" in err  # the person ended it, having seen the failure
    code, _, err = chat(failed, ["hello", "and?"])
    assert code == 1  # a script's last question went unanswered


def test_edited_arguments_are_asked_per_field_and_must_fit_the_tools_schema(chat, tmp_path, monkeypatch):
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    replies = [{"tool_calls": [{"name": "send", "arguments": {"to": "ann"}}]}, {"text": "sent it"}]
    answers = [
        "send a note to ann",
        "edit",
        "bob",  # to
        "two",  # copies: not a whole number, asked again
        "2",
    ]
    code, out, err = chat(replies, answers, tty=True)
    assert code == 0 and out.strip().endswith("sent it")
    assert "to [ann]" in err and "`two` is not a whole number" in err
    [saved] = _saved(tmp_path)
    tool_results = [m for m in json.loads(saved.read_text())["run"]["messages"] if m["role"] == "tool"]
    assert "sent 2 to bob" in json.dumps(tool_results)


def test_input_ending_at_the_approval_prompt_keeps_the_call_pending(chat):
    replies = [{"tool_calls": [{"name": "send", "arguments": {"to": "ann"}}]}]
    code, _, err = chat(replies, ["send it"], tty=True)
    assert code == 3 and 'send({"to": "ann"})' in err


def test_an_unknown_agent_is_named_in_the_usage_error(chat):
    code, _, err = chat([], [], "--agent", "nobody")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "no agent `nobody`" in err and "main" in err
