"""Replies cut off at `max_tokens` by a real server: bounded, never taken for success, named for what they are.

These are the cases only a real model showed (issue 26, items 1, 2 and 4): a length stop is not a
stop. The server decides where the reply ends, so nothing here depends on the words chosen; a
prompt asks for far more than the limit allows, which a 135M model always writes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from realmodel.runner import plait, write_spec
from realmodel.llama import Server

pytestmark = pytest.mark.slow

LONG = "Write a long story, at least ten paragraphs, about {{input}}."


def test_a_steps_max_tokens_bounds_the_reply_and_warns(llama: Server, tmp_path: Path) -> None:
    write_spec(tmp_path, llama, f'step tell {{ model = local, prompt = "{LONG}", max_tokens = 5 }}\n')
    ran = plait(tmp_path, "run", "spec.plait", "--input", "a dragon", "--json")
    report = ran.report
    (step,) = report["steps"]
    # The limit reached the server: it generated at most 5 tokens, by its own count.
    assert 0 < step["output_tokens"] <= 5
    assert step["finish_reason"] == "length"
    # The cut text does not flow on silently: the step is warned about, as an agent is.
    truncated = [w for w in report["warnings"] if w.get("code") == "response_truncated"]
    assert truncated, report["warnings"]
    assert "tell" in truncated[0]["message"]


def test_an_until_agent_cut_off_at_max_tokens_is_not_a_success(llama: Server, tmp_path: Path) -> None:
    write_spec(
        tmp_path,
        llama,
        """tool submit "Submit the finished story." {
  params { story: string }
  run = python("tools:submit")
}
agent writer {
  model      = local
  system     = "You write stories. When the story is finished, call submit with it."
  tools      = [submit]
  until      = submit succeeded
  max_tokens = 5
  max_steps  = 3
}
""",
    )
    (tmp_path / "tools.py").write_text("def submit(story: str) -> str:\n    return 'submitted'\n")
    ran = plait(tmp_path, "run", "spec.plait", "--input", LONG.replace("{{input}}", "a dragon"), "--json")
    report = ran.report
    assert report["tool_calls"] == []  # five tokens are too few for any tool call
    # The contract was not met: a length stop must not end the run `done` (exit 0).
    assert ran.code != 0 and report["stop_reason"] != "done", report
    assert report["error"]["kind"] == "until_tool_not_called", report["error"]
    assert "max_tokens = 5" in report["error"]["message"]  # the limit it hit, so the fix is plain


def test_a_typed_output_cut_off_names_max_tokens_and_is_not_retried(llama: Server, tmp_path: Path) -> None:
    write_spec(
        tmp_path,
        llama,
        f"""step tell {{
  model           = local
  prompt          = "{LONG}"
  max_tokens      = 8
  retry_malformed = 2
  output {{ story: string }}
}}
""",
    )
    ran = plait(tmp_path, "run", "spec.plait", "--input", "a dragon", "--json")
    report = ran.report
    assert ran.code == 1 and report["stop_reason"] == "error", report
    message = report["error"]["message"]
    # Said for what it is: cut off at the limit, not "not JSON", and not retried into the same limit.
    assert "max_tokens" in message, message
    assert "retry_malformed" not in message, message
    assert report["model_calls"] == 1
