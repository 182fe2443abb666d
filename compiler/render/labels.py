"""One graph node → the lines of its label: name first, then the contracts it carries.

Contracts are always written out (a default `max_steps` too): the picture is
where a reader checks them. Header values and URL queries never appear; only
header names do, so no secret reaches a picture.
"""

from __future__ import annotations

from typing import Any, Callable
from urllib.parse import urlsplit

__all__ = ["edge_label", "is_gated", "node_lines", "seconds", "until_text"]

Graph = Any  # AgentGraph; typed loosely so this module needs no import cycle


def seconds(value: float) -> str:
    """30.0 → "30s", 0.5 → "500ms", 120.0 → "2m": durations as the spec writes them."""
    if value < 1:
        return f"{round(value * 1000)}ms"
    if value >= 60 and value % 60 == 0:
        return f"{int(value // 60)}m"
    return f"{value:g}s"


def _model(graph: Graph, id: str, a: dict) -> list[str]:
    lines = [id, f"{a['provider']}/{a['model_id']}"]
    if a["temperature"] is not None:
        lines.append(f"temperature {a['temperature']:g}")
    if a["max_tokens"] is not None:
        lines.append(f"max_tokens {a['max_tokens']}")
    if a["timeout"] is not None:
        lines.append(f"timeout {seconds(a['timeout'])}")
    if a["retries"] not in (None, 2):
        lines.append(f"retries {a['retries']}")
    if a["api"]:
        lines.append(f"api {a['api']}")
    if a["api_key_env"]:
        lines.append(f"key from env {a['api_key_env']}")
    if a["headers"]:
        lines.append("headers " + ", ".join(a["headers"]))
    return lines


def _tool_run(run: dict) -> str:
    if run["type"] == "python":
        return f"python {run['target']}"
    # The query string can carry parameters and tokens; host and path say enough.
    parts = urlsplit(run["url"])
    host = parts.netloc.rpartition("@")[2]  # never the user:password part
    line = f"{run['method']} {host}{parts.path}"
    if run.get("headers"):
        line += " [headers " + ", ".join(run["headers"]) + "]"
    return line


def _tool(graph: Graph, id: str, a: dict) -> list[str]:
    lines = [id, _tool_run(a["run"])]
    if a["timeout"] not in (None, 60.0):
        lines.append(f"timeout {seconds(a['timeout'])}")
    if a["result"] == "messages":
        lines.append("result as messages")
    if a["approval"]:
        lines.append("APPROVAL REQUIRED")
    return lines


def until_text(a: dict) -> str:
    return "until " + ", ".join(a["until"]) + (" succeeded" if a["until_succeeded"] else " called")


def _agent(graph: Graph, id: str, a: dict, hidden: frozenset[str]) -> list[str]:
    lines = [id, f"max_steps {a['max_steps']}"]
    if a["until"]:
        lines.append(until_text(a))
    if a["retry_malformed"]:
        lines.append(f"retry_malformed {a['retry_malformed']}")
    if a["keep_last"] is not None:
        lines.append(f"history keep_last({a['keep_last']})")
    if a["approval"]:
        lines.append("approval " + ", ".join(a["approval"]))
    if a["tool_timeout"] is not None:
        lines.append(f"tool_timeout {seconds(a['tool_timeout'])}")
    if "models" in hidden:
        lines.append(f"model {_model_name(graph, a['model'])}")
        if a["fallback"]:
            lines.append("fallback " + " → ".join(f"{i}. {m}" for i, m in enumerate(a["fallback"], 1)))
    if a["fallback"] and a["fallback_on"]:
        lines.append("fallback_on " + ", ".join(a["fallback_on"]))
    if "tools" in hidden:
        tools = [t for t in a["tools"] if graph.node(t)["kind"] == "tool"]
        if tools:
            lines.append("tools " + ", ".join(_gated(graph, a, t) for t in tools))
    return lines


def is_gated(graph: Graph, agent: dict, tool: str) -> bool:
    """Whether `agent`'s calls of `tool` wait for a human: the tool requires it, or the agent does."""
    return bool(graph.node(tool)["approval"]) or tool in (agent["approval"] or ())


def _gated(graph: Graph, agent: dict, tool: str) -> str:
    return f"{tool} [approval]" if is_gated(graph, agent, tool) else tool


def _model_name(graph: Graph, id: str | None) -> str:
    if id is None or id not in graph:
        return str(id)
    a = graph.node(id)
    return f"{id} ({a['provider']}/{a['model_id']})" if a["kind"] == "model" else id


def _step(graph: Graph, id: str, a: dict, hidden: frozenset[str]) -> list[str]:
    lines = [id, "step: one model call"]
    if a["max_tokens"] is not None:
        lines.append(f"max_tokens {a['max_tokens']}")
    if a["temperature"] is not None:
        lines.append(f"temperature {a['temperature']:g}")
    if "models" in hidden:
        lines.append(f"model {_model_name(graph, a['model'])}")
    return lines


def _consolidate(graph: Graph, id: str, a: dict, hidden: frozenset[str]) -> list[str]:
    lines = [id, f"consolidate: rounds {a['rounds']}"]
    judge_is_model = a["judge"] in graph and graph.node(a["judge"])["kind"] == "model"
    if "models" in hidden and judge_is_model:
        lines.append(f"judge {_model_name(graph, a['judge'])}")
    if a["task"] not in (None, "{{input}}"):
        lines.append("task " + _short(a["task"]))
    return lines


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _parallel(graph: Graph, id: str, a: dict) -> list[str]:
    title = "parallel" if "/" in id else f"parallel {id}"
    return [title, f"on_error {a['on_error']}"]


_PLAIN: dict[str, Callable[[Graph, str, dict], list[str]]] = {
    "model": _model,
    "tool": _tool,
    "parallel": _parallel,
    "chain": lambda g, id, a: [f"chain {id}"],
    "join": lambda g, id, a: ["join"],
    "entry": lambda g, id, a: ["start"],
    "exit": lambda g, id, a: ["end"],
}
_FOLDING: dict[str, Callable[[Graph, str, dict, frozenset[str]], list[str]]] = {
    "agent": _agent,
    "step": _step,
    "consolidate": _consolidate,
}


def node_lines(graph: Graph, id: str, hidden: frozenset[str] = frozenset()) -> list[str]:
    a = graph.node(id)
    kind = a["kind"]
    if kind in _FOLDING:
        return _FOLDING[kind](graph, id, a, hidden)
    return _PLAIN[kind](graph, id, a)


def edge_label(graph: Graph, source: str, target: str, data: dict) -> str:
    """What flows along an edge, or the contract it stands for."""
    kind = data["kind"]
    if kind == "next":
        return "output" if graph.node(target)["kind"] == "exit" else "input"
    if kind == "branch":
        return "input"
    if kind == "join":
        return f"input.{data['branch']}"
    if kind == "uses":
        gated = data.get("approval") or graph.node(target)["approval"]
        return "approval" if gated else ""
    if kind == "delegates":
        return "task"
    if kind == "fallback":
        return f"fallback {data['order']}"
    if kind == "participant":
        return f"agent {data['index'] + 1}"
    if kind == "judge":
        return "judge"
    if kind == "until":
        return "until succeeded" if data.get("succeeded") else "until"
    return ""
