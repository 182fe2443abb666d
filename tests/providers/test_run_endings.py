"""How a turn's ending reaches the user: every finish reason as itself, and never a silent clean `done` (issue 9.6)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from plait.core.kinds import AgentNode
from plait.runtime.program import Program
from plait.runtime.engine import Engine

from test_provider_truth import GEMINI_ENDINGS


def run_on(server: Any, flavour: str, **agent: Any) -> Any:
    program = Program(entry="main")
    program.models["m"] = server.config(flavour, name="m", retries=0)
    program.agents["main"] = AgentNode(name="main", model="m", **agent)
    engine = Engine(program)

    async def go():
        try:
            return await engine.run("go")
        finally:
            await engine.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("reason", [r for r in GEMINI_ENDINGS if r != "MODEL_ARMOR"])
def test_an_empty_unusual_gemini_ending_is_done_with_a_warning_naming_it(plait_fake_server, reason: str) -> None:
    plait_fake_server.push({"text": "", "finish_reason": reason})
    result = run_on(plait_fake_server, "google")
    assert result.stop_reason == "done" and result.output == "" and result.finish_reason == reason.lower()
    [warning] = result.report.warnings
    assert warning["code"] == "unexpected_finish" and reason in warning["message"] and "no answer" in warning["message"]
    assert warning["details"]["raw_finish_reason"] == reason


def test_model_armor_ends_the_run_as_a_content_filter_naming_geminis_word(plait_fake_server) -> None:
    plait_fake_server.push({"text": "", "finish_reason": "MODEL_ARMOR"})
    result = run_on(plait_fake_server, "google")
    [warning] = result.report.warnings
    assert warning["code"] == "response_truncated" and "content_filter: MODEL_ARMOR" in warning["message"]


@pytest.mark.parametrize("flavour", ["openai", "anthropic", "google"])
def test_a_plain_stop_warns_nothing(plait_fake_server, flavour: str) -> None:
    plait_fake_server.push({"text": "fine"})
    result = run_on(plait_fake_server, flavour)
    assert result.output == "fine" and result.report.warnings == []


def test_an_empty_body_falls_back_to_the_next_model(plait_fake_server, sleeps) -> None:
    program = Program(entry="main")
    program.models["p"] = plait_fake_server.config("anthropic", name="p", retries=1)
    program.models["b"] = plait_fake_server.config("openai", name="b", retries=0)
    program.agents["main"] = AgentNode(name="main", model="p", fallback=("b",))
    plait_fake_server.push({"body": {}}, {"body": {}}, {"text": "from the backup"})
    engine = Engine(program)

    async def go():
        try:
            return await engine.run("go")
        finally:
            await engine.aclose()

    result = asyncio.run(go())
    assert result.output == "from the backup" and len(plait_fake_server.requests) == 3
    assert [w["code"] for w in result.report.warnings] == ["model_fallback"]
