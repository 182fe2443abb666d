"""`plait trace ID`: a run's journal rows → its timeline (model calls with latency and tokens, tool calls, decisions).

Text by default, one line per moment, offset from the run's first row, a
call's or decision's position after `@` (the STEP `plait runs fork --at` takes);
`--json` prints the timeline as one JSON object (`{"run": ..., "timeline":
[...]}`) for other tools. Exit 0, or 2 when there is no such run.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from plait.cli import EXIT_OK
from plait.term import clean, json_text
from plait.cli.money import usd
from plait.cli.runs import add_where, read_run, when, with_totals


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", metavar="ID", help="the run id (see `plait runs`)")
    parser.add_argument("--json", action="store_true", help="print the timeline as one JSON object")
    add_where(parser)


def run(args: argparse.Namespace) -> int:
    got = read_run(
        args, args.id, lambda journal, row: (with_totals(journal, row), build(list(journal.events(args.id))))
    )
    if isinstance(got, int):
        return got
    row, timeline = got
    summary = {
        k: row.get(k)
        for k in ("id", "status", "entry", "spec", "started", "steps", "input_tokens", "output_tokens", "cost_usd")
    }
    if args.json:
        print(json_text(json.dumps({"run": summary, "timeline": timeline}, ensure_ascii=False, default=str)))
        return EXIT_OK
    # Rows hold model replies, tool results, inputs and server errors: shown, never obeyed.
    print(
        clean(
            f"run {row['id']}  {row['status']}  entry {row['entry']}  started {when(row['started'])}  "
            f"{row['steps']} step(s)  {row['input_tokens'] + row['output_tokens']} tokens"
            + (f"  {usd(row['cost_usd'])}" if row.get("cost_usd") is not None else "")
        )
    )
    for item in timeline:
        # A call's or decision's position: what `plait runs fork ID --at STEP` names.
        # A person's decision names its pending id already.
        decided = item["kind"] == "decision" and item.get("of") not in ("approval", "effect")
        where = item.get("position") or (item.get("key") if decided else None)
        print(f"{item['t']:>9.3f}s  {clean(line(item))}" + (f"  @ {clean(where)}" if where else ""))
    return EXIT_OK


def build(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Journal rows → timeline items: a model request and its reply become one model call, an intent and its completion one tool call."""
    start = events[0]["at"] if events else 0.0
    items: list[dict[str, Any]] = []
    open_models: dict[str, dict[str, Any]] = {}
    open_tools: dict[str, dict[str, Any]] = {}
    #: An ask's answer as `resume --answer` gave it, by key, until the ask takes it (then one item shows both).
    given: dict[str, dict[str, Any]] = {}
    from plait.runtime.store.doctor import quarantined

    for e in events:
        kind, key, data = e["kind"], e["key"], e["data"]
        base = {"t": round(e["at"] - start, 3), "seq": e["seq"]}
        if e.get("damaged") or quarantined(data) or not isinstance(data, dict):
            # A row that cannot be read is shown as such; the rest of the run traces as usual.
            problem = e.get("damaged") or (
                f"moved aside to {data['quarantined']}" if quarantined(data) else "its data is not a JSON object"
            )
            items.append(base | {"kind": "damaged", "row": kind, "position": key, "problem": problem})
            continue
        if kind == "model_request":
            item = base | {
                "kind": "model_call",
                "position": key,
                "agent": data.get("agent"),
                "step": data.get("step"),
                "model": data.get("model"),
                "status": "in flight",
            }
            open_models[key] = item
            items.append(item)
        elif kind in ("model_reply", "model_error"):
            item = open_models.pop(key) if key in open_models else base | {"kind": "model_call", "position": key}
            item.update(model=data.get("model"), latency_ms=data.get("latency_ms"))
            if kind == "model_reply":
                usage = data.get("usage") or (0, 0)
                message = data.get("message") or {}
                item.update(
                    status="ok",
                    finish_reason=data.get("finish_reason"),
                    input_tokens=usage[0],
                    output_tokens=usage[1],
                    cost_usd=data.get("cost_usd"),
                    tool_calls=[c["name"] for c in message.get("tool_calls", ())],
                    text=_text(message),
                )
                if data.get("hosted"):  # what the call's hosted tools reported (src/plait/runtime/providers/hosted.py)
                    item["hosted"] = data["hosted"]
            else:
                item.update(status="error", error={"kind": data.get("kind"), "message": data.get("message")})
        elif kind == "tool_intent":
            tool = data.get("tool") or f"code step {data.get('step')}"
            item = base | {
                "kind": "tool_call",
                "position": key,
                "tool": tool,
                "arguments": data.get("arguments"),
                "attempt": data.get("attempt", 1),
                "status": "started, no outcome recorded",
            }
            open_tools[key] = item
            items.append(item)
        elif kind == "tool_completed":
            item = (
                open_tools.pop(key)
                if key in open_tools
                else base | {"kind": "tool_call", "position": key, "tool": data.get("tool")}
            )
            item.update(
                status="skipped" if data.get("skipped") else "error" if data.get("is_error") else "ok",
                # A code step's completion holds its return value, not tool content (src/plait/runtime/store/effects.py).
                result=data.get("value") if data.get("code") else data.get("content"),
                latency_ms=data.get("latency_ms"),
            )
        elif kind == "decision":
            item = base | {
                "kind": "decision",
                "of": data.get("kind"),
                "key": key,
                "decision": {k: v for k, v in data.items() if k != "kind"},
            }
            if data.get("kind") == "ask" and "name" not in data:  # the answer given, journaled before the run goes on
                given[key] = item
            elif data.get("kind") == "ask" and key in given:  # the ask took it: one decision, not two
                items.remove(given.pop(key))
            items.append(item)
        elif kind == "state":
            items.append(base | {"kind": "state", "path": key, "updates": data})
        elif kind in ("pause", "stop", "resume", "admit", "base", "fork"):
            items.append(
                base
                | {"kind": kind}
                | ({} if kind == "base" else {k: v for k, v in data.items() if v not in (None, [], {})})
            )
    return items


def _text(message: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in message.get("content", ()))


def _short(value: Any, width: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _fields(value: Any, width: int = 60) -> str:
    """A value as a person reads it: an object's fields as `name = value`, text as is, the rest as short JSON."""
    if isinstance(value, dict) and value:
        return ", ".join(f"{k} = {_short(v, width)}" for k, v in value.items())
    return _short(value, width)


def decision_line(of: str, key: str, data: dict[str, Any]) -> str:
    """One decision in words, by kind (src/plait/runtime/context.decide, src/plait/runtime/store/lifecycle): what was decided and why."""
    name = data.get("name") or key
    if of == "route":
        value = _short(data.get("value"), 60)
        case = _short(data.get("case"), 40)
        # A case that goes to `break` (plait 0.3) runs nothing: it names the loop it leaves.
        target = f"break {data['leaves']}" if data.get("leaves") else data.get("target")
        return f"route  {name}: {data.get('subject')} = {value} → case {case} → {target}"
    if of == "handoff":
        return f"handoff {name} → {data.get('target')}"
    if of == "loop":
        condition = data.get("condition")
        holds = f": {condition} is {str(data.get('holds')).lower()}" if condition else ""
        if data.get("exit") == "break":  # left by a route case, its condition not read
            leaves = f" on its way out of {data['leaves']}" if data.get("leaves") else ""
            holds = f": left by break{leaves}"
        return f"loop   {name} iteration {data.get('iteration')}{holds}"
    if of == "map":
        if data.get("status") == "done":
            return f"map    {name} item {data.get('index')} done → {_short(data.get('output'), 60)}"
        if data.get("status") == "skipped":  # its `filter` did not hold
            return f"map    {name} item {data.get('index')} skipped by its filter"
        error = data.get("error") or {}
        return f"map    {name} item {data.get('index')} failed: {error.get('kind')}: {_short(error.get('message'), 60)}"
    if of == "ask":
        return f"ask    {name} answered: {_fields(data.get('answer'))}"
    if of == "validate":  # src/plait/runtime/model_call.py: an answer its `validate` rejected
        return f"check  {name} answer {data.get('answer')} rejected by {data.get('validator')}: {_short(data.get('reason'), 80)}"
    if of == "thread":  # src/plait/runtime/threads.py: the thread after a runnable's turn
        messages = data.get("messages") or []
        dropped = f", {data.get('dropped')} dropped by keep_last" if data.get("dropped") else ""
        last = _short(_text(messages[-1]), 50) if messages else ""
        return (
            f"thread {name}: {data.get('by')} added {data.get('added')} message(s), {len(messages)} kept{dropped}"
            + (f" → {last!r}" if last else "")
        )
    if of == "with":
        return f"with   {name} given: {_fields(data.get('record'))}"
    if of == "approval":
        action = data.get("action")
        if action == "edit":
            return f"human  {key} edited, then approved: {_fields(data.get('arguments'))}"
        if action == "reject":
            message = data.get("message")
            return f"human  {key} rejected{f': {_short(message, 80)}' if message else ''}"
        if action == "approve_same":
            return f"human  {key} approved, and the same call again in this run: {_fields(data.get('arguments'))}"
        return f"human  {key} {'approved' if action == 'approve' else action}"
    if of == "effect":
        again = "run again" if data.get("action") == "retry" else "skipped (the model is told it may not have run)"
        return f"human  {key} (outcome unknown after attempt {data.get('attempt')}): {again}"
    details = {k: v for k, v in data.items() if k not in ("name", "path")}
    return f"decide {of} {name}: {_fields(details)}"


def _hosted(reports: Any) -> str:
    """A model call's hosted tools in words: `  [web_search: 1 search, 2 citations]`."""
    if not isinstance(reports, dict):
        return ""
    said = []
    for kind, report in reports.items():
        if kind == "web_search":
            searches, cited = len(report.get("queries") or []), len(report.get("citations") or [])
            said.append(f"{kind}: {searches} search(es), {cited} citation(s)")
        elif kind == "code_execution":
            said.append(f"{kind}: {len(report.get('runs') or [])} run(s)")
    return f"  [{'; '.join(said)}]" if said else ""


def line(item: dict[str, Any]) -> str:
    kind = item["kind"]
    if kind == "model_call":
        head = f"model  {item.get('agent') or ''} step {item.get('step')} ({item.get('model')})"
        if item.get("status") == "ok":
            calls = (
                f" → {', '.join(item['tool_calls'])}"
                if item.get("tool_calls")
                else f" {_short(item.get('text', ''), 50)!r}"
            )
            cost = item.get("cost_usd")
            return (
                f"{head} {item.get('finish_reason')}  {item.get('latency_ms', 0):.0f} ms  "
                f"{item.get('input_tokens', 0)}+{item.get('output_tokens', 0)} tokens"
                f"{f'  {usd(cost)}' if cost is not None else ''}{calls}{_hosted(item.get('hosted'))}"
            )
        if item.get("status") == "error":
            return f"{head} failed: {item['error']['kind']}: {_short(item['error']['message'], 60)}"
        return f"{head} in flight (no reply recorded)"
    if kind == "tool_call":
        attempt = f" attempt {item['attempt']}" if item.get("attempt", 1) > 1 else ""
        # A code step's intent records no arguments (its input is the previous runnable's output).
        arguments = "" if item.get("arguments") is None else f"({_short(item['arguments'], 40)})"
        head = f"tool   {item.get('tool')}{arguments}{attempt}"
        if "result" in item:
            return f"{head} {item['status']}  {item.get('latency_ms', 0):.0f} ms  → {_short(item['result'], 60)}"
        return f"{head} {item['status']}"
    if kind == "decision":
        return decision_line(item["of"], item.get("key") or "", item.get("decision") or {})
    if kind == "state":
        return f"state  {_short(item['updates'], 80)}"
    if kind == "stop":
        extra = item.get("pause_reason") or (item.get("error") or {}).get("message") or ""
        return f"stop   {item.get('stop_reason')}{f': {_short(extra, 80)}' if extra else ''}"
    if kind == "pause":
        return f"pause  {_short(item.get('reason', ''), 100)}"
    if kind == "admit":
        return f"start  {item.get('entry')} input {_short(item.get('input', ''), 60)}"
    if kind == "base":
        return "start  (from a stored snapshot)"
    if kind == "fork":
        return f"fork   of run {item.get('from')} at {item.get('at')}: what came before is its history, live from here"
    if kind == "damaged":
        return f"damaged {item['row']} row {item['seq']}: {item['problem']} (see `plait runs doctor`)"
    return kind
