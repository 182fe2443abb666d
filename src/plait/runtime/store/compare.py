"""Two runs' journal rows → where they first went different ways, and what each did (outputs, paths, tokens, time).

Calls are matched by position (a model call `PATH#N`, a tool call
`PATH#N:CALL_ID`, a route, loop, map or ask decision `PATH...`), the same key
a resume replays by, so parallel branches that finished in another order are
not a difference. Walking each run's calls in the order it made them, the
first divergence is the earliest call that the other run made differently or
not at all: a model request (the model it went to, its tools, system prompt,
output schema, or the first message that differs, from the digests of
requests.py), its reply, a tool call's name or arguments (each argument that
differs, by path), its result, or a decision (a route's case, a loop's
verdict, an ask's answer).
"""

from __future__ import annotations

from typing import Any

from .requests import digest

__all__ = ["divergence", "summary"]

_DECISIONS = ("route", "loop", "map", "ask")


def _calls(events: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(calls by position in the order made, message bodies by digest) of a run's rows."""
    calls: dict[str, dict[str, Any]] = {}
    bodies: dict[str, Any] = {}
    for e in events:
        kind, key, data = e["kind"], e["key"], e["data"]
        if not key or not isinstance(data, dict):
            continue
        if kind == "model_request":
            bodies.update(data.get("bodies") or {})
            calls.setdefault(key, {"kind": "model", "position": key, "seq": e["seq"]})["request"] = data
        elif kind in ("model_reply", "model_error"):
            calls.setdefault(key, {"kind": "model", "position": key, "seq": e["seq"]})["reply"] = data | {"row": kind}
        elif kind == "tool_intent":
            calls.setdefault(key, {"kind": "tool", "position": key, "seq": e["seq"]})["request"] = data
        elif kind == "tool_completed":
            calls.setdefault(key, {"kind": "tool", "position": key, "seq": e["seq"]})["reply"] = data
        elif kind == "decision" and data.get("kind") in _DECISIONS:
            item = calls.setdefault(key, {"kind": "decision", "position": key, "seq": e["seq"]})
            item["request"] = {**item.get("request", {}), **data}  # an ask's answer given, then taken: one
    return calls, bodies


def divergence(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first call the two runs made differently (or only one made), or None when every call matches."""
    calls_a, bodies_a = _calls(a)
    calls_b, bodies_b = _calls(b)
    found: list[tuple[int, dict[str, Any]]] = []
    for index, (position, call) in enumerate(calls_a.items()):
        other = calls_b.get(position)
        how = _differs(call, other, bodies_a, bodies_b)
        if how is not None:
            found.append((index, how))
            break
    for index, (position, call) in enumerate(calls_b.items()):
        if position not in calls_a:
            found.append((index, {"position": position, "call": call["kind"], "what": "only_b", **_show(call)}))
            break
    if not found:
        return None
    return min(found, key=lambda f: f[0])[1]


def _show(call: dict[str, Any]) -> dict[str, Any]:
    request = call.get("request") or {}
    if call["kind"] == "model":
        return {"agent": request.get("agent"), "model": request.get("model")}
    if call["kind"] == "tool":
        return {"tool": request.get("tool") or request.get("step")}
    return {"decision": request.get("kind"), "name": request.get("name")}


def _differs(
    a: dict[str, Any], b: dict[str, Any] | None, bodies_a: dict[str, Any], bodies_b: dict[str, Any]
) -> dict[str, Any] | None:
    head = {"position": a["position"], "call": a["kind"], **_show(a)}
    if b is None:
        return head | {"what": "only_a"}
    ra, rb = a.get("request") or {}, b.get("request") or {}
    if a["kind"] == "model":
        for field, what in (("model", "model"), ("target", "model"), ("tools", "tools"), ("output", "output")):
            if ra.get(field) != rb.get(field):
                return head | {"what": what, "a": ra.get(field), "b": rb.get(field)}
        if ra.get("system") != rb.get("system"):
            return head | {
                "what": "system",
                "a": _body(bodies_a, ra.get("system")),
                "b": _body(bodies_b, rb.get("system")),
            }
        da, db = ra.get("digests"), rb.get("digests")
        if da is not None and db is not None and da != db:
            index = next((i for i, (x, y) in enumerate(zip(da, db)) if x != y), min(len(da), len(db)))
            return head | {
                "what": "message",
                "index": index,
                "messages": [len(da), len(db)],
                "a": _body(bodies_a, da[index] if index < len(da) else None),
                "b": _body(bodies_b, db[index] if index < len(db) else None),
            }
        pa, pb = a.get("reply") or {}, b.get("reply") or {}
        if bool(pa) != bool(pb):  # one run stopped (was killed) while the call was in flight
            return head | {"what": "unanswered", "side": "a" if not pa else "b", "a": _reply(pa), "b": _reply(pb)}
        va, vb = _reply(pa), _reply(pb)
        if va != vb:
            return head | {"what": "reply", "a": va, "b": vb}
        return None
    if a["kind"] == "tool":
        if (ra.get("tool"), ra.get("step")) != (rb.get("tool"), rb.get("step")):
            return head | {"what": "tool", "a": ra.get("tool"), "b": rb.get("tool")}
        changed = _paths(ra.get("arguments"), rb.get("arguments"))
        if changed:
            return head | {"what": "arguments", "arguments": changed}
        pa, pb = a.get("reply") or {}, b.get("reply") or {}
        if bool(pa) != bool(pb):
            return head | {"what": "unanswered", "side": "a" if not pa else "b", "a": _result(pa), "b": _result(pb)}
        ca, cb = _result(pa), _result(pb)
        if ca != cb:
            return head | {"what": "result", "a": ca, "b": cb}
        return None
    keep = ("case", "target", "holds", "iteration", "status", "answer", "index")
    da, db = ({k: r.get(k) for k in keep if k in r} for r in (ra, rb))
    if da != db:
        return head | {"what": "decision", "a": da, "b": db}
    return None


def _body(bodies: dict[str, Any], key: str | None) -> Any:
    if key is None:
        return None
    return bodies.get(key, {"digest": key})


def _reply(reply: dict[str, Any]) -> Any:
    if reply.get("row") == "model_error":
        return {"error": reply.get("kind"), "message": reply.get("message")}
    message = reply.get("message") or {}
    out: dict[str, Any] = {"text": "".join(p.get("text", "") for p in message.get("content", ()))}
    calls = [{"name": c.get("name"), "arguments": c.get("arguments")} for c in message.get("tool_calls", ())]
    if calls:
        out["tool_calls"] = calls
    return out if reply else None


def _result(done: dict[str, Any]) -> Any:
    if not done:
        return None
    return done.get("value") if done.get("code") else {"content": done.get("content"), "is_error": done.get("is_error")}


def _paths(a: Any, b: Any, prefix: str = "") -> list[dict[str, Any]]:
    """Each place two JSON values differ: `{"path": "items[1].name", "a": ..., "b": ...}` (missing: absent)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in [*a, *(k for k in b if k not in a)]:
            where = f"{prefix}.{key}" if prefix else str(key)
            if key not in a or key not in b:
                out.append(
                    {"path": where, **({"a": a[key]} if key in a else {}), **({"b": b[key]} if key in b else {})}
                )
            else:
                out += _paths(a[key], b[key], where)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _paths(x, y, f"{prefix}[{i}]")]
    return [] if a == b else [{"path": prefix or "(the arguments)", "a": a, "b": b}]


def summary(row: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """What a run did: status, output, paths taken, model and tool calls, tokens and time (a fork's copied calls
    counted apart: `replayed`, served from its source's rows)."""
    result = row.get("result") or {}
    routes: dict[str, Any] = {}
    loops: dict[str, int] = {}
    maps: dict[str, int] = {}
    asks: dict[str, Any] = {}
    model_calls = tool_calls = replayed = 0
    tokens = [0, 0]
    live_tokens = [0, 0]
    latency = 0.0
    forked: dict[str, Any] | None = None
    for e in events:
        kind, key, data = e["kind"], e["key"], e["data"]
        if not isinstance(data, dict):
            continue
        if kind == "fork":
            forked = {"from": data.get("from"), "at": data.get("at")}
            replayed = model_calls + tool_calls
            continue
        if kind == "model_reply":
            model_calls += 1
            usage = data.get("usage") or (0, 0)
            tokens = [tokens[0] + usage[0], tokens[1] + usage[1]]
            if forked is not None:
                live_tokens = [live_tokens[0] + usage[0], live_tokens[1] + usage[1]]
            latency += data.get("latency_ms") or 0
        elif kind == "tool_completed":
            tool_calls += 1
            latency += data.get("latency_ms") or 0
        elif kind == "decision":
            of, name = data.get("kind"), key or ""
            if of == "route":
                routes[name] = data.get("case")
            elif of == "loop":
                loops[name.rsplit("#", 1)[0]] = max(loops.get(name.rsplit("#", 1)[0], 0), data.get("iteration") or 0)
            elif of == "map":
                base = name.rsplit("[", 1)[0]
                maps[base] = maps.get(base, 0) + 1
            elif of == "ask" and "answer" in data:
                asks[name] = data["answer"]
    stamps = [e["at"] for e in events if isinstance(e.get("at"), (int, float))]
    out: dict[str, Any] = {
        "id": row["id"],
        "status": row["status"],
        "output": result.get("output") if isinstance(result, dict) else None,
        "output_digest": digest(result.get("output")) if isinstance(result, dict) else None,
        "routes": routes,
        "loops": loops,
        "maps": maps,
        "asks": asks,
        "model_calls": model_calls,
        "tool_calls": tool_calls,
        "input_tokens": tokens[0],
        "output_tokens": tokens[1],
        "call_ms": round(latency, 3),
        "wall_s": round(max(stamps) - min(stamps), 3) if stamps else 0.0,
    }
    if forked is not None:
        out["fork"] = forked | {"replayed_calls": replayed, "live_tokens": live_tokens[0] + live_tokens[1]}
    return out
