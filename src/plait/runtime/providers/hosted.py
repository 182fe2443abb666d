"""A request's hosted tools → each wire's own tool entries; a provider's reply → what they reported, as plait's
typed reports (`{"web_search": {"queries": [...], "citations": [...]}, "code_execution": {"runs": [...]}}`).

A hosted tool runs on the provider's side (src/plait/core/hosted.py says which
provider runs which kind): plait asks for it in the request body and reads
what the reply says it did. Wire shapes, from each API's reference:

- OpenAI Chat Completions: `web_search_options: {search_context_size?}` (the
  search models); citations are the message's `annotations` of type
  `url_citation` (`{url, title, start_index, end_index}` into the content).
- OpenAI Responses: `tools: [{"type": "web_search", search_context_size?,
  filters: {allowed_domains}?}]`; `web_search_call` output items carry
  `action.query`; `output_text` parts carry `url_citation` annotations.
- Anthropic Messages: `tools: [{"type": "web_search_20250305", "name":
  "web_search", max_uses?, allowed_domains?, blocked_domains?}]`;
  `server_tool_use` blocks carry `input.query`; text blocks carry `citations`
  of type `web_search_result_location` (`{url, title, cited_text}`).
- Gemini: `tools: [{"google_search": {}}]` and `[{"code_execution": {}}]`;
  the candidate's `groundingMetadata` carries `webSearchQueries`,
  `groundingChunks[].web {uri, title}` and `groundingSupports` (the answer's
  segments and the chunks each cites); code runs are `executableCode
  {language, code}` parts, each followed by a `codeExecutionResult {outcome,
  output}` part.
"""

from __future__ import annotations

from typing import Any

from plait.core.hosted import empty_report

from .base import ModelRequest

__all__ = [
    "anthropic_tools",
    "chat_options",
    "from_anthropic",
    "from_chat",
    "from_gemini",
    "from_responses",
    "gemini_tools",
    "responses_tools",
]

#: Anthropic's web search tool version (its `type`); the tool's name on the wire is always `web_search`.
ANTHROPIC_WEB_SEARCH = "web_search_20250305"


def _asked(request: ModelRequest, kind: str) -> dict[str, Any] | None:
    """The options of the request's hosted tool of this kind, or None when it asks for none."""
    for run in request.hosted:
        if run.get("hosted") == kind:
            return run.get("options") or {}
    return None


# --- request bodies -------------------------------------------------------------------


def chat_options(request: ModelRequest) -> dict[str, Any] | None:
    options = _asked(request, "web_search")
    if options is None:
        return None
    return {"search_context_size": options["context_size"]} if "context_size" in options else {}


def responses_tools(request: ModelRequest) -> list[dict[str, Any]]:
    options = _asked(request, "web_search")
    if options is None:
        return []
    tool: dict[str, Any] = {"type": "web_search"}
    if "context_size" in options:
        tool["search_context_size"] = options["context_size"]
    if "allowed_domains" in options:
        tool["filters"] = {"allowed_domains": options["allowed_domains"]}
    return [tool]


def anthropic_tools(request: ModelRequest) -> list[dict[str, Any]]:
    options = _asked(request, "web_search")
    if options is None:
        return []
    tool: dict[str, Any] = {"type": ANTHROPIC_WEB_SEARCH, "name": "web_search"}
    for key in ("max_uses", "allowed_domains", "blocked_domains"):
        if key in options:
            tool[key] = options[key]
    return [tool]


def gemini_tools(request: ModelRequest) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    if _asked(request, "web_search") is not None:
        tools.append({"google_search": {}})
    if _asked(request, "code_execution") is not None:
        tools.append({"code_execution": {}})
    return tools


# --- replies ----------------------------------------------------------------------------


def _reports(request: ModelRequest) -> dict[str, Any] | None:
    """An empty report per kind the request asked for (None: it asked for none)."""
    if not request.hosted:
        return None
    return {run["hosted"]: empty_report(run["hosted"]) for run in request.hosted if run.get("hosted")}


def _citation(url: Any, title: Any, text: Any) -> dict[str, Any] | None:
    if not isinstance(url, str) or not url:
        return None
    return {
        "url": url,
        "title": title if isinstance(title, str) else None,
        "text": text if isinstance(text, str) else None,
    }


def _span(text: str, annotation: dict[str, Any]) -> str | None:
    start, end = annotation.get("start_index"), annotation.get("end_index")
    if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text):
        return text[start:end]
    return None


def _add(report: dict[str, Any], citation: dict[str, Any] | None) -> None:
    if citation is not None and citation not in report["citations"]:
        report["citations"].append(citation)


def from_chat(message: dict[str, Any], request: ModelRequest) -> dict[str, Any] | None:
    reports = _reports(request)
    if reports is None or "web_search" not in reports:
        return reports
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    for annotation in message.get("annotations") or ():
        if isinstance(annotation, dict) and annotation.get("type") == "url_citation":
            cited = annotation.get("url_citation") or {}
            _add(reports["web_search"], _citation(cited.get("url"), cited.get("title"), _span(text, cited)))
    return reports


def from_responses(output: list[Any], request: ModelRequest) -> dict[str, Any] | None:
    reports = _reports(request)
    if reports is None or "web_search" not in reports:
        return reports
    report = reports["web_search"]
    for item in output:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "web_search_call":
            action = item.get("action") or {}
            queries = action.get("queries") or ([action["query"]] if action.get("query") else [])
            report["queries"] += [q for q in queries if isinstance(q, str)]
        elif item.get("type") == "message":
            for content in item.get("content") or ():
                text = content.get("text") or ""
                for annotation in content.get("annotations") or ():
                    if isinstance(annotation, dict) and annotation.get("type") == "url_citation":
                        _add(report, _citation(annotation.get("url"), annotation.get("title"), _span(text, annotation)))
    return reports


def from_anthropic(content: list[Any], request: ModelRequest) -> dict[str, Any] | None:
    reports = _reports(request)
    if reports is None or "web_search" not in reports:
        return reports
    report = reports["web_search"]
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "server_tool_use" and block.get("name") == "web_search":
            query = (block.get("input") or {}).get("query")
            if isinstance(query, str):
                report["queries"].append(query)
        elif block.get("type") == "text":
            for cited in block.get("citations") or ():
                if isinstance(cited, dict) and cited.get("type") == "web_search_result_location":
                    _add(report, _citation(cited.get("url"), cited.get("title"), cited.get("cited_text")))
    return reports


def from_gemini(candidate: dict[str, Any], request: ModelRequest) -> dict[str, Any] | None:
    reports = _reports(request)
    if reports is None:
        return None
    if "web_search" in reports:
        report = reports["web_search"]
        meta = candidate.get("groundingMetadata") or {}
        report["queries"] += [q for q in meta.get("webSearchQueries") or () if isinstance(q, str)]
        chunks = meta.get("groundingChunks") or []
        # Each chunk is cited by the answer's segments that name its index: the first such segment is its text.
        texts: dict[int, str] = {}
        for support in meta.get("groundingSupports") or ():
            segment = (support.get("segment") or {}).get("text")
            for index in support.get("groundingChunkIndices") or ():
                if isinstance(segment, str) and isinstance(index, int):
                    texts.setdefault(index, segment)
        for index, chunk in enumerate(chunks):
            web = (chunk or {}).get("web") or {}
            _add(report, _citation(web.get("uri"), web.get("title"), texts.get(index)))
    if "code_execution" in reports:
        runs = reports["code_execution"]["runs"]
        for part in (candidate.get("content") or {}).get("parts") or ():
            code = part.get("executableCode") or part.get("executable_code")
            result = part.get("codeExecutionResult") or part.get("code_execution_result")
            if isinstance(code, dict):
                language = str(code.get("language") or "PYTHON").lower()
                runs.append({"language": language, "code": code.get("code") or "", "outcome": "", "output": ""})
            elif isinstance(result, dict) and runs and not runs[-1]["outcome"]:
                runs[-1]["outcome"] = str(result.get("outcome") or "OUTCOME_OK").lower().removeprefix("outcome_")
                runs[-1]["output"] = result.get("output") or ""
    return reports
