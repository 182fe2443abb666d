"""Recorded request bodies → ModelRequests, and any body → the fields plait controls.

The request-shape tests rebuild each recorded request as a ModelRequest, let
the provider build its own body, and compare the two through `project`: the
message/turn structure, tool calls and results, tools and tool choice. Fields
an SDK adds that plait does not (cache_control, strict, safetySettings) are
outside the projection.
"""

from __future__ import annotations

import json
from typing import Any

from plait.runtime.providers.base import Message, ModelRequest, TextPart, ToolCall, ToolSpec


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, dict))


def _args(raw: Any) -> Any:
    if isinstance(raw, str):
        return json.loads(raw) if raw.strip() else {}
    return raw


def _choice(choice: Any) -> str | None:
    if choice is None or isinstance(choice, str):
        return choice
    if choice.get("type") == "function":
        return (choice.get("function") or choice)["name"]
    return {"any": "required", "auto": "auto", "none": "none", "tool": choice.get("name")}.get(choice["type"])


# --- recorded → ModelRequest ------------------------------------------------------


def chat_request(body: dict[str, Any]) -> ModelRequest:
    messages = []
    for m in body["messages"]:
        if m["role"] == "assistant":
            calls = [
                ToolCall(c["id"], c["function"]["name"], _args(c["function"]["arguments"]), c["function"]["arguments"])
                for c in m.get("tool_calls") or ()
            ]
            text = _text(m.get("content"))
            messages.append(Message("assistant", [TextPart(text)] if text else [], calls))
        elif m["role"] == "tool":
            messages.append(Message("tool", [TextPart(_text(m["content"]))], tool_call_id=m["tool_call_id"]))
        else:
            messages.append(Message(m["role"], [TextPart(_text(m["content"]))]))
    tools = [
        ToolSpec(t["function"]["name"], t["function"].get("description"), t["function"]["parameters"])
        for t in body.get("tools") or ()
    ]
    return ModelRequest(body["model"], messages, tools, tool_choice=_choice(body.get("tool_choice")))


def responses_request(body: dict[str, Any]) -> ModelRequest:
    messages: list[Message] = []
    previous = body.get("previous_response_id")
    if previous:
        # The turn that produced the stored state; the provider must send only what follows it.
        messages.append(Message("assistant", [TextPart("(earlier turn)")], response_id=previous))
    items = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            if not (messages and messages[-1].role == "assistant" and messages[-1].response_id is None):
                messages.append(Message("assistant"))
            messages[-1].tool_calls.append(
                ToolCall(item["call_id"], item["name"], _args(item["arguments"]), item["arguments"])
            )
        elif kind == "function_call_output":
            messages.append(Message("tool", [TextPart(item["output"])], tool_call_id=item["call_id"]))
        else:
            role = "system" if item["role"] in ("system", "developer") else item["role"]
            messages.append(Message(role, [TextPart(_text(item["content"]))]))
    tools = [ToolSpec(t["name"], t.get("description"), t["parameters"]) for t in body.get("tools") or ()]
    return ModelRequest(
        body["model"], messages, tools, tool_choice=_choice(body.get("tool_choice")), previous_response_id=previous
    )


def anthropic_request(body: dict[str, Any]) -> ModelRequest:
    messages = []
    for m in body["messages"]:
        blocks = [{"type": "text", "text": m["content"]}] if isinstance(m["content"], str) else m["content"]
        if m["role"] == "assistant":
            text = "".join(b["text"] for b in blocks if b["type"] == "text")
            calls = [
                ToolCall(b["id"], b["name"], b["input"], json.dumps(b["input"]))
                for b in blocks
                if b["type"] == "tool_use"
            ]
            messages.append(Message("assistant", [TextPart(text)] if text else [], calls))
            continue
        for b in blocks:
            if b["type"] == "tool_result":
                messages.append(
                    Message(
                        "tool",
                        [TextPart(_text(b["content"]))],
                        tool_call_id=b["tool_use_id"],
                        is_error=bool(b.get("is_error")),
                    )
                )
            else:
                messages.append(Message("user", [TextPart(b["text"])]))
    system = body.get("system")
    tools = [ToolSpec(t["name"], t.get("description"), t["input_schema"]) for t in body.get("tools") or ()]
    return ModelRequest(
        body["model"],
        messages,
        tools,
        system=_text(system) or None,
        tool_choice=_choice(body.get("tool_choice")),
        max_tokens=body.get("max_tokens"),
    )


def google_request(body: dict[str, Any]) -> ModelRequest:
    messages = []
    pending: list[ToolCall] = []
    for turn in body["contents"]:
        parts = turn["parts"]
        if turn.get("role") == "model":
            calls = []
            for p in parts:
                fn = p.get("functionCall") or p.get("function_call")
                if fn:
                    call_id = fn.get("id") or f"plait_{len(pending)}"
                    calls.append(
                        ToolCall(
                            call_id, fn["name"], fn["args"], json.dumps(fn["args"]), signature=p.get("thoughtSignature")
                        )
                    )
            pending += calls
            text = "".join(p.get("text", "") for p in parts)
            messages.append(Message("assistant", [TextPart(text)] if text else [], calls))
            continue
        for p in parts:
            fr = p.get("functionResponse") or p.get("function_response")
            if fr:
                match = next(c for c in pending if c.name == fr["name"] and (fr.get("id") in (None, c.id)))
                pending.remove(match)
                output = fr["response"].get("output", json.dumps(fr["response"]))
                messages.append(Message("tool", [TextPart(output)], tool_call_id=match.id, name=fr["name"]))
            else:
                messages.append(Message("user", [TextPart(p["text"])]))
    system = body.get("systemInstruction")
    tools = [
        ToolSpec(d["name"], d.get("description"), d.get("parameters") or d.get("parametersJsonSchema"))
        for t in body.get("tools") or ()
        for d in t.get("functionDeclarations") or ()
    ]
    return ModelRequest(
        "recorded", messages, tools, system="".join(p["text"] for p in system["parts"]) if system else None
    )


# --- any body → the fields plait controls ------------------------------------------


def project_chat(body: dict[str, Any]) -> dict[str, Any]:
    messages = []
    for m in body["messages"]:
        calls = [(c["id"], c["function"]["name"], _args(c["function"]["arguments"])) for c in m.get("tool_calls") or ()]
        messages.append((m["role"], _text(m.get("content")), calls, m.get("tool_call_id")))
    tools = [
        (t["function"]["name"], t["function"].get("description"), t["function"]["parameters"])
        for t in body.get("tools") or ()
    ]
    return {"messages": messages, "tools": tools, "tool_choice": _choice(body.get("tool_choice"))}


def project_responses(body: dict[str, Any]) -> dict[str, Any]:
    items = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
    out = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            out.append(("call", item["call_id"], item["name"], _args(item["arguments"])))
        elif kind == "function_call_output":
            out.append(("output", item["call_id"], item["output"]))
        else:
            role = "system" if item["role"] in ("system", "developer") else item["role"]
            out.append((role, _text(item["content"])))
    tools = [(t["name"], t.get("description"), t["parameters"]) for t in body.get("tools") or ()]
    return {
        "input": out,
        "tools": tools,
        "tool_choice": _choice(body.get("tool_choice")),
        "previous_response_id": body.get("previous_response_id"),
    }


def project_anthropic(body: dict[str, Any]) -> dict[str, Any]:
    messages = []
    for m in body["messages"]:
        blocks = [{"type": "text", "text": m["content"]}] if isinstance(m["content"], str) else m["content"]
        shaped = []
        for b in blocks:
            if b["type"] == "text":
                shaped.append(("text", b["text"]))
            elif b["type"] == "tool_use":
                shaped.append(("tool_use", b["id"], b["name"], b["input"]))
            elif b["type"] == "tool_result":
                shaped.append(("tool_result", b["tool_use_id"], _text(b["content"]), bool(b.get("is_error"))))
        messages.append((m["role"], shaped))
    tools = [(t["name"], t.get("description"), t["input_schema"]) for t in body.get("tools") or ()]
    return {
        "messages": messages,
        "system": _text(body.get("system")),
        "tools": tools,
        "tool_choice": _choice(body.get("tool_choice")),
    }


def project_google(body: dict[str, Any]) -> dict[str, Any]:
    contents = []
    for turn in body["contents"]:
        shaped = []
        for p in turn["parts"]:
            fn = p.get("functionCall") or p.get("function_call")
            fr = p.get("functionResponse") or p.get("function_response")
            if fn:
                shaped.append(("call", fn["name"], fn["args"], fn.get("id"), p.get("thoughtSignature")))
            elif fr:
                shaped.append(("response", fr["name"], fr["response"], fr.get("id")))
            elif p.get("text"):
                shaped.append(("text", p["text"]))
        contents.append((turn.get("role", "user"), shaped))
    system = body.get("systemInstruction")
    tools = [
        (d["name"], d.get("description"), d.get("parameters") or d.get("parametersJsonSchema"))
        for t in body.get("tools") or ()
        for d in t.get("functionDeclarations") or ()
    ]
    return {
        "contents": contents,
        "system": "".join(p["text"] for p in system["parts"]) if system else None,
        "tools": tools,
    }


BUILDERS = {
    "chat": (chat_request, project_chat),
    "responses": (responses_request, project_responses),
    "anthropic": (anthropic_request, project_anthropic),
    "google": (google_request, project_google),
}
