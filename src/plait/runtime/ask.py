"""An ask, its input and a graph path → the person's answer, or an interrupt that waits for it.

Like an approval, a pending ask stops the run (exit code 3 from `plait run`)
and is listed among the result's pending items under its graph path; the run
resumes with an answer (`Run.resume(answers=...)`, `plait run --resume ID
--answer NAME=JSON`), which `accept` checks against the `answer` block's JSON
Schema before the run goes on, so a bad answer is refused with the reason and
the run stays waiting.
"""

from __future__ import annotations

import json
from typing import Any

from plait.core.kinds import AskNode

from .program import Program
from .context import RunContext
from .errors import AgentError
from .outcomes import Done, Interrupt, Outcome, PendingAsk
from .records import complete, problems
from .templates import render

__all__ = ["accept", "accept_answers", "parse_answer", "run_ask"]


async def run_ask(ctx: RunContext, ask: AskNode, input: Any, path: tuple[str, ...], branch: str | None) -> Outcome:
    key = "/".join(path)
    if key in ctx.answers:
        answer = ctx.answers[key]
        ctx.decide("ask", ask.name, path, key, answer=answer)
        if ctx.bus.active:
            ctx.emit("ask_answered", path, None, ask=ask.name, answer=answer)
        return Done(answer)
    question = render(ask.question, input=input, state=ctx.state, scope=ctx.scope)
    pending = PendingAsk(key, path, ask.name, question, ask.answer, branch)
    if ctx.bus.active:
        ctx.emit("ask", path, None, pending=[pending.to_dict()])
    return Interrupt([pending])


def accept(ask: AskNode, value: Any) -> Any:
    """The answer as the run will see it (absent optional fields null); AgentError `answer_invalid` saying why not."""
    if ask.answer is None:
        if not isinstance(value, str):
            raise AgentError("answer_invalid", f"ask `{ask.name}` wants text, got {json.dumps(value)}")
        return value
    found = problems(value, ask.answer)
    if found:
        raise AgentError(
            "answer_invalid", f"the answer to ask `{ask.name}` does not fit its `answer`: {'; '.join(found)}"
        )
    return complete(value, ask.answer)


def parse_answer(ask: AskNode, text: str) -> Any:
    """A command-line answer: JSON; where the answer is text (or one of some words) the text as written when
    its JSON reading is not such a value, so `--answer note=8` answers a text ask with "8", quote-free."""
    textual = ask.answer is None or ask.answer.get("type") == "string" or "enum" in ask.answer
    try:
        value = json.loads(text)
    except ValueError:
        if textual:
            return text
        raise AgentError("answer_invalid", f"the answer to ask `{ask.name}` is not JSON: {text!r}") from None
    if textual and not isinstance(value, str) and not (ask.answer and value in ask.answer.get("enum", ())):
        return text
    return value


def accept_answers(program: Program, pending: list[dict[str, Any]], answers: dict[str, Any]) -> dict[str, Any]:
    """Answers keyed by a pending ask's id or its ask's name → checked answers by pending id.

    A name stands for its ask only while one ask of that name is pending (an
    ask inside a map can be pending once per item; answer those by id).
    """
    by_id = {p["id"]: p for p in pending}
    accepted: dict[str, Any] = {}
    for name, value in answers.items():
        matches = [by_id[name]] if name in by_id else [p for p in pending if p["ask"] == name]
        if not matches:
            waiting = ", ".join(f"`{p['ask']}` ({p['id']})" for p in pending) or "none"
            raise AgentError("resume_invalid", f"no pending ask `{name}`; pending asks: {waiting}")
        if len(matches) > 1:
            ids = ", ".join(p["id"] for p in matches)
            raise AgentError(
                "resume_invalid", f"ask `{name}` is pending {len(matches)} times; answer each by its id: {ids}"
            )
        target = matches[0]
        ask = program.asks.get(target["ask"])
        if ask is None:
            raise AgentError("resume_invalid", f"the spec no longer declares ask `{target['ask']}`")
        accepted[target["id"]] = accept(ask, value)
    return accepted
