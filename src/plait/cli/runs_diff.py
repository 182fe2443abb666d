"""`plait runs diff A B`: two stored runs → where they first diverged, then what each did (outputs, paths, tokens, time).

The comparison is runtime/store/compare.py's; this module prints it: text
(rich, every value from the journal escaped: replies and tool results are
shown, never obeyed) or `--json`. Exit 0 when the runs made the same calls and
ended with the same output, 1 when they differ (as `plait diff` does for
specs), 2 when a run is unknown or the journal cannot be opened.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from plait.cli import EXIT_ERRORS, EXIT_OK
from plait.cli.runs import add_where, find_run, open_journal
from plait.term import clean, json_text


def register(actions: Any) -> None:
    diff = actions.add_parser(
        "diff",
        help="compare two runs: the first call they made differently, then outputs, paths, tokens and time",
        description="Compare two stored runs: the first model request, reply, tool call or decision they made "
        "differently (which message, which argument), then each run's output, route cases, loop iterations, map "
        "items, asks, calls, tokens and time. Exit 0 when they are the same, 1 when they differ.",
    )
    diff.add_argument("a", metavar="A", help="a run id (see `plait runs`)")
    diff.add_argument("b", metavar="B", help="another run id")
    diff.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    add_where(diff)


def run(args: argparse.Namespace) -> int:
    from plait.runtime.store.compare import divergence, summary

    journal = open_journal(args)
    if isinstance(journal, int):
        return journal
    try:
        rows = []
        for run_id in (args.a, args.b):
            row = find_run(journal, run_id)
            if isinstance(row, int):
                return row
            rows.append((row, list(journal.events(run_id))))
    finally:
        journal.close()
    first = divergence(rows[0][1], rows[1][1])
    sides = [summary(row, events) for row, events in rows]
    same = first is None and sides[0]["output_digest"] == sides[1]["output_digest"]
    if args.json:
        document = {"a": args.a, "b": args.b, "same": same, "divergence": first, "runs": sides}
        print(json_text(json.dumps(document, ensure_ascii=False, default=str)))
    else:
        show(args.a, args.b, first, sides)
    return EXIT_OK if same else EXIT_ERRORS


def _short(value: Any, width: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return clean(text if len(text) <= width else text[: width - 1] + "…")


def _message(body: Any) -> str:
    if not isinstance(body, dict):
        return "(none)"
    if "digest" in body and "role" not in body:
        return f"(a message not recorded in full: {body['digest']})"
    parts = [repr(_short(body.get("text", ""), 90))] if body.get("text") else []
    parts += [f"{c.get('name')}({_short(c.get('arguments'), 60)})" for c in body.get("tool_calls", ())]
    return f"{body.get('role')}{' ' + str(body['name']) if body.get('name') else ''}: " + (", ".join(parts) or "''")


def describe(first: dict[str, Any]) -> list[tuple[str, str]]:
    """The divergence as (label, text) lines, texts already escaped."""
    who = first.get("agent") or first.get("tool") or first.get("name") or ""
    call = {"model": "model call", "tool": "tool call", "decision": f"{first.get('decision')} decision"}[first["call"]]
    lines = [("at", clean(f"{first['position']}  ({call}{f' of {who}' if who else ''})"))]
    what = first["what"]
    if what == "only_a":
        lines.append(("how", "only A made this call (B went another way or stopped before it)"))
    elif what == "only_b":
        lines.append(("how", "only B made this call (A went another way or stopped before it)"))
    elif what == "unanswered":
        side = first["side"].upper()
        lines.append(("how", f"{side} stopped while this call was in flight: it has no outcome recorded"))
        lines += [("A", _short(first.get("a"))), ("B", _short(first.get("b")))]
    elif what == "message":
        count_a, count_b = first["messages"]
        lines.append(("how", f"the request's message {first['index'] + 1} differs (A sent {count_a}, B {count_b})"))
        lines += [("A", clean(_message(first["a"]))), ("B", clean(_message(first["b"])))]
    elif what == "arguments":
        lines.append(("how", "the tool was called with other arguments"))
        for change in first["arguments"]:
            a = _short(json.dumps(change["a"], ensure_ascii=False), 60) if "a" in change else "(absent)"
            b = _short(json.dumps(change["b"], ensure_ascii=False), 60) if "b" in change else "(absent)"
            lines.append(("", clean(f"{change['path']}: A {a}  B {b}")))
    elif what == "system":
        lines += [
            ("how", "the system prompt differs"),
            ("A", clean(_message(first["a"]))),
            ("B", clean(_message(first["b"]))),
        ]
    else:
        label = {
            "model": "it went to another model",
            "tools": "it offered other tools",
            "output": "it asked for another output schema",
            "reply": "the same request got another reply",
            "tool": "another tool was called",
            "result": "the tool returned something else",
            "decision": "the decision differs",
        }.get(what, what)
        lines += [("how", label), ("A", _short(first.get("a"))), ("B", _short(first.get("b")))]
    return lines


def show(a: str, b: str, first: dict[str, Any] | None, sides: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False, soft_wrap=True)
    console.print(Text(clean(f"A = run {a}\nB = run {b}"), style="bold"))
    if first is None:
        console.print(Text("no divergence: every call and decision matches", style="green"))
    else:
        console.print(Text("first divergence", style="bold red"))
        for label, text in describe(first):
            console.print(Text.assemble((f"  {label:<4}", "dim"), text))
    table = Table(show_edge=False, pad_edge=False, box=None)
    table.add_column("")
    table.add_column("A", overflow="fold")
    table.add_column("B", overflow="fold")
    keys = [
        ("status", "status"),
        ("output", "output"),
        ("routes", "route cases"),
        ("loops", "loop iterations"),
        ("maps", "map items"),
        ("asks", "asks answered"),
        ("model_calls", "model calls"),
        ("tool_calls", "tool calls"),
        ("tokens", "tokens in+out"),
        ("call_ms", "time in calls (ms)"),
        ("wall_s", "wall time (s)"),
        ("fork", "fork of"),
    ]
    for key, label in keys:
        if key == "tokens":
            values = [f"{s['input_tokens']}+{s['output_tokens']}" for s in sides]
        else:
            if key == "fork" and not any("fork" in s for s in sides):
                continue
            values = [_value(s.get(key)) for s in sides]
        style = "yellow" if values[0] != values[1] and key not in ("call_ms", "wall_s") else ""
        table.add_row(Text(label, style="dim"), Text(values[0], style=style), Text(values[1], style=style))
    console.print(table)


def _value(value: Any) -> str:
    if value is None or value == {} or value == []:
        return "-"
    if isinstance(value, dict) and "from" in value and "at" in value:
        return clean(f"{value['from']} at {value['at']} ({value.get('replayed_calls', 0)} calls replayed)")
    return _short(value, 200)
