"""A finished run (what it made and did) + a checked expectation → passed, or the reason it did not.

The expectation is the compiler's data (src/plait/core/kinds/test.py documents its shape); what it reads is an
`Observed`, made once per run from the run's report, its finished results and the stops the runner answered.
Judged expectations ask a model, so evaluation is a coroutine.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

__all__ = ["MISSING", "Observed", "evaluate", "show"]


class _Missing:
    def __repr__(self) -> str:
        return "missing"


#: What a subject is when the run never made it (a runnable that did not run, a field its output lacks).
MISSING: Any = _Missing()


@dataclass
class Observed:
    """What one run made and did, as expectations read it."""

    output: Any = None
    #: (runnable name, output) for every finished runnable, in the order they finished.
    results: list[tuple[str, Any]] = field(default_factory=list)
    stop_reason: str = "done"
    error: str | None = None
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    steps: int = 0
    cost: float | None = None
    #: (name, arguments) per executed tool call, in order.
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)
    #: The report's decisions: routes, loop iterations, map items, answered asks.
    decisions: list[dict[str, Any]] = field(default_factory=list)
    #: Asks the run stopped at and tools it asked approval for, by name, in order.
    asked: list[str] = field(default_factory=list)
    approvals: list[str] = field(default_factory=list)
    #: How a judge is asked: (its subject, the text judged) → (passed, reason); set by the runner.
    judge: Callable[[dict[str, Any], str], Awaitable[tuple[bool, str]]] | None = None

    def last_output(self, name: str) -> Any:
        for ran, output in reversed(self.results):
            if ran == name:
                return output
        return MISSING


def show(value: Any) -> str:
    """A value as a failure message writes it: JSON, long text cut."""
    if value is MISSING:
        return "missing"
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 200 else text[:197] + "..."


async def evaluate(tree: dict[str, Any], seen: Observed) -> tuple[bool, str]:
    """(passed, why): `why` says what the run did instead, or what the check found when it passed."""
    op = tree["op"]
    if op == "not":
        passed, why = await evaluate(tree["operand"], seen)
        return not passed, why
    if op in ("and", "or"):
        reasons = []
        for operand in tree["operands"]:
            passed, why = await evaluate(operand, seen)
            if op == "and" and not passed:
                return False, why
            if op == "or" and passed:
                return True, why
            reasons.append(why)
        return op == "and", "; ".join(reasons)
    left_tree = tree["left"]
    if left_tree["kind"] == "judge":
        return await _judge(left_tree, seen)
    left = _read(left_tree, seen)
    if op == "truthy":
        if left_tree["kind"] in ("called", "asked"):
            return bool(left), _said(left_tree, left, seen)
        return bool(left) and left is not MISSING, f"it is {show(left)}"
    right_tree = tree["right"]
    if right_tree["kind"] == "calls_list":
        return _calls(op, right_tree["calls"], seen)
    right = right_tree["value"]
    if left is MISSING:
        return False, _missing(left_tree, seen)
    if op == "==":
        return _same(left, right), f"it is {show(left)}"
    if op == "!=":
        return not _same(left, right), f"it is {show(left)}"
    if op in ("<", "<=", ">", ">="):
        if not isinstance(left, int | float) or isinstance(left, bool):
            return False, f"it is {show(left)}, not a number"
        passed = {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]
        return passed, f"it is {show(left)}"
    if op == "in":
        if isinstance(right, str):
            return isinstance(left, str) and left in right, f"it is {show(left)}"
        return any(_same(left, item) for item in right), f"it is {show(left)}"
    if op == "contains":
        if isinstance(left, str):
            return isinstance(right, str) and right in left, f"it is {show(left)}"
        if isinstance(left, list):
            return any(_same(item, right) for item in left), f"it is {show(left)}"
        return False, f"it is {show(left)}, neither text nor a list"
    if op == "matches":
        text = left if isinstance(left, str) else json.dumps(left, ensure_ascii=False, default=str)
        return re.search(right, text) is not None, f"it is {show(left)}"
    raise ValueError(f"unknown operator {op!r}")  # pragma: no cover - the compiler only writes the ones above


def _same(a: Any, b: Any) -> bool:
    # JSON equality: 1 == 1.0, but true is not 1.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _dig(value: Any, path: list[str]) -> Any:
    for part in path:
        if isinstance(value, str) and value[:1] in "{[":
            try:  # a text output that is JSON: read into it, as a template would
                value = json.loads(value)
            except ValueError:
                return MISSING
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


def _read(subject: dict[str, Any], seen: Observed) -> Any:
    kind = subject["kind"]
    if kind == "value":
        return subject["value"]
    if kind == "output":
        return _dig(seen.output, subject["path"])
    if kind == "field":
        found = seen.last_output(subject["name"])
        return found if found is MISSING else _dig(found, subject["path"])
    if kind == "run":
        stat = subject["stat"]
        if stat == "tokens":
            return seen.input_tokens + seen.output_tokens
        if stat == "tool_calls":
            return [name for name, _ in seen.tool_calls]
        return getattr(seen, stat)
    name: str = subject.get("name") or ""
    if kind == "case":
        cases = [d.get("case") for d in seen.decisions if d.get("kind") == "route" and d.get("name") == name]
        return cases[-1] if cases else MISSING
    if kind == "iterations":
        return sum(1 for d in seen.decisions if d.get("kind") == "loop" and d.get("name") == name)
    if kind == "exit":
        loops = [d for d in seen.decisions if d.get("kind") == "loop" and d.get("name") == name]
        if not loops:
            return MISSING
        if loops[-1].get("exit") == "break":
            return "break"
        return "met" if loops[-1].get("holds") else "exhausted"
    if kind == "items":
        # The items it ran: one its `filter` skipped did not run.
        return sum(
            1
            for d in seen.decisions
            if d.get("kind") == "map" and d.get("name") == name and d.get("status") != "skipped"
        )
    if kind == "asked":
        return name in seen.asked
    if kind == "approvals":
        return seen.approvals.count(name)
    if kind in ("called", "calls"):
        count: int = sum(1 for call in seen.tool_calls if _call_fits(call, name, subject["args"]))
        return count > 0 if kind == "called" else count
    raise ValueError(f"unknown subject {kind!r}")  # pragma: no cover


def _call_fits(call: tuple[str, Any], name: str, matchers: dict[str, Any]) -> bool:
    called, arguments = call
    if called != name:
        return False
    arguments = arguments if isinstance(arguments, dict) else {}
    for key, matcher in matchers.items():
        if key not in arguments:
            return False
        value = arguments[key]
        if "matches" in matcher:
            text = value if isinstance(value, str) else json.dumps(value, default=str)
            if re.search(matcher["matches"], text) is None:
                return False
        elif not _same(value, matcher["equals"]):
            return False
    return True


def _said(subject: dict[str, Any], value: Any, seen: Observed) -> str:
    name = subject["name"]
    if subject["kind"] == "asked":
        return f"the run {'stopped' if value else 'never stopped'} at ask `{name}`"
    calls = [show({"tool": n, "arguments": a}) for n, a in seen.tool_calls if n == name]
    if not calls:
        made = ", ".join(n for n, _ in seen.tool_calls) or "none"
        return f"`{name}` was never called (calls made: {made})"
    return f"`{name}` was called: " + "; ".join(calls)


def _missing(subject: dict[str, Any], seen: Observed) -> str:
    kind, name = subject["kind"], str(subject.get("name") or "")
    if kind == "case":
        return f"route `{name}` never ran"
    if kind == "exit":
        return f"loop `{name}` never ran"
    if kind == "field":
        if seen.last_output(name) is MISSING:
            return f"`{name}` never finished in this run"
        return f"`{name}`'s output has no `{'.'.join(subject['path'])}`: it is {show(seen.last_output(name))}"
    if kind == "output":
        return f"the output has no `{'.'.join(subject['path'])}`: it is {show(seen.output)}"
    return "it is missing"


def _calls(op: str, expected: list[dict[str, Any]], seen: Observed) -> tuple[bool, str]:
    made = seen.tool_calls
    listed = "calls made: " + (", ".join(name for name, _ in made) or "none")
    if op in ("==", "!="):
        same = len(made) == len(expected) and all(
            _call_fits(call, want["name"], want["args"]) for call, want in zip(made, expected)
        )
        return same if op == "==" else not same, listed
    if op == "in_order":
        position = 0
        for want in expected:
            while position < len(made) and not _call_fits(made[position], want["name"], want["args"]):
                position += 1
            if position == len(made):
                return False, f"no call of `{want['name']}` in order after the ones before it ({listed})"
            position += 1
        return True, listed
    if op == "any_order":
        used: set[int] = set()
        for want in expected:
            found = next(
                (i for i, call in enumerate(made) if i not in used and _call_fits(call, want["name"], want["args"])),
                None,
            )
            if found is None:
                return False, f"no call of `{want['name']}` that fits ({listed})"
            used.add(found)
        return True, listed
    return False, f"`{op}` does not compare calls"  # pragma: no cover - the compiler refuses it


async def _judge(subject: dict[str, Any], seen: Observed) -> tuple[bool, str]:
    if seen.judge is None:  # pragma: no cover - the runner always sets it
        return False, "no judge"
    judged = seen.output if subject.get("of") is None else seen.last_output(subject["of"])
    if judged is MISSING:
        return False, f"`{subject['of']}` never finished in this run"
    text = judged if isinstance(judged, str) else json.dumps(judged, ensure_ascii=False, default=str)
    verdicts = [await seen.judge(subject, text) for _ in range(subject["repeat"])]
    passes = sum(1 for passed, _ in verdicts if passed)
    rate = passes / len(verdicts)
    needed = subject["pass_rate"]
    why = f"the judge passed it {passes} of {len(verdicts)} times ({rate:.0%}, {needed:.0%} needed)"
    failed = [reason for passed, reason in verdicts if not passed and reason]
    if failed:
        why += f"; it said: {failed[0]}"
    return rate >= needed, why
