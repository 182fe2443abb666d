"""A journaled run's rows → a cassette of its model replies (`plait runs export ID --cassette`).

Each `model_reply` (and `model_error`) row names the key of the request as the
serving model was asked (store/effects.py), so the cassette serves the same
run offline. The journal keeps each message a run sent once, by digest
(store/requests.py), so an exported recording's `request` is that comparable
form (`"form": "comparable"`: each message's role, text, tool calls and
arguments, the system prompt, the tools' names) and a miss still names the
first differing message; a row journaled before digests has none (`null`). A
call that failed over to a fallback model is kept as the reply of the model
that served it, after the failure of each model before it (kept in the reply's
row with the key of the request that model was asked), so a replay takes the
same fallback edge; runs journaled before request keys have none to export. With
`tools` (`--tools`), each completed tool call's result is kept too.
"""

from __future__ import annotations

from typing import Any, Iterable

from .file import COMPARABLE, Cassette, Interaction
from .tools import tool_key

__all__ = ["from_rows"]


def from_rows(
    rows: Iterable[dict[str, Any]], *, spec: str | None = None, entry: str | None = None, tools: bool = False
) -> Cassette:
    """The cassette of one run's history rows, in the order they were recorded; with `tools`, its tool results too
    (each completed call's, paired with the intent row that named the tool and its arguments)."""
    intents: dict[str, dict[str, Any]] = {}
    tool_results: list[dict[str, Any]] = []
    agents: dict[str, str] = {}
    asked: dict[str, dict[str, Any] | None] = {}
    bodies: dict[str, Any] = {}
    interactions = []
    for row in rows:
        kind, position, data = row["kind"], row.get("key") or "", row.get("data")
        if not isinstance(data, dict):
            continue
        if kind == "model_request":
            agents[position] = str(data.get("agent") or "")
            if isinstance(data.get("bodies"), dict):
                bodies.update(data["bodies"])
            asked[position] = _comparable(data, bodies)
            continue
        if tools and kind == "tool_intent" and not data.get("code"):
            intents[position] = data
            continue
        if tools and kind == "tool_completed" and position in intents:
            intent = intents.pop(position)
            name, arguments = str(intent.get("tool")), intent.get("arguments") or {}
            result = {k: data.get(k) for k in ("content", "is_error", "state", "expand", "value")}
            tool_results.append(
                {"key": tool_key(name, arguments), "tool": name, "arguments": arguments, "outcome": result}
            )
            continue
        if kind not in ("model_reply", "model_error") or not isinstance(data.get("request_key"), str):
            continue
        path, _, step = position.partition("#")
        number = int(step.partition("~")[0]) if step.partition("~")[0].isdigit() else 0
        for failed in data.get("failed_over") or () if kind == "model_reply" else ():
            # A model that failed over: its failure, under the key of the request it was asked, before the reply.
            error = {"kind": failed.get("kind"), "message": failed.get("message"), "status": None}
            model = str(failed.get("model") or "")
            interactions.append(
                Interaction(
                    failed["request_key"], model, agents.get(position), path, number, asked.get(position), error=error
                )
            )
        outcome: dict[str, Any]
        if kind == "model_reply":
            outcome = {
                "reply": {
                    "message": data["message"],
                    "finish_reason": data.get("finish_reason"),
                    "raw_finish_reason": data.get("raw_finish_reason"),
                    "usage": list(data.get("usage") or (0, 0)),
                    "model": data.get("model"),
                    "response_id": data.get("response_id"),
                    **({"hosted": data["hosted"]} if data.get("hosted") else {}),
                }
            }
        else:
            outcome = {"error": {"kind": data.get("kind"), "message": data.get("message"), "status": None}}
        interactions.append(
            Interaction(
                data["request_key"],
                str(data.get("model") or ""),
                agents.get(position),
                path,
                number,
                asked.get(position),
                **outcome,
            )
        )
    return Cassette(interactions, spec, entry, tool_results=tool_results)


def _comparable(data: dict[str, Any], bodies: dict[str, Any]) -> dict[str, Any] | None:
    """The request a `model_request` row describes (store/requests.py: each message's digest, its body the first
    time the run sent it), in that comparable form: what a model reads, without ids. None for an older row."""
    digests = data.get("digests")
    if not isinstance(digests, list) or not all(d in bodies for d in digests):
        return None
    system = bodies.get(data["system"], {}).get("text") if data.get("system") else None
    return {
        "form": COMPARABLE,
        "system": system,
        "tools": data.get("tools") or [],
        "messages": [bodies[d] for d in digests],
    }
