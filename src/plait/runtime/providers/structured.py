"""A request's `output_schema` → what each wire needs to ask for it: a schema name, a tool, an instruction.

Each wire module puts the schema where its API takes it (OpenAI `response_format` /
`text.format`, Anthropic `output_config.format`, Gemini `responseJsonSchema`); these
are the pieces they share. Where a model cannot be asked natively (older Claude
models; Gemini 2 with tools), the answer is still requested (a forced final tool, an
instruction) and the runtime's validation is what holds it to the schema.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from .base import ModelRequest, OutputVia

if TYPE_CHECKING:
    from plait.core.kinds import ModelNode

__all__ = ["OUTPUT_TOOL", "instruction", "output_tool_name", "output_via", "schema_name", "tell_chat"]

#: The tool a model without native structured output answers through (Anthropic legacy models).
OUTPUT_TOOL = "final_answer"
_NAME = re.compile(r"[^A-Za-z0-9_-]")


def schema_name(request: ModelRequest) -> str:
    """OpenAI wants `^[a-zA-Z0-9_-]{1,64}$`; the agent's name says what the answer is."""
    return (_NAME.sub("_", request.agent or "") or "output")[:64]


def output_tool_name(request: ModelRequest) -> str:
    """OUTPUT_TOOL, unless one of the agent's own tools already has that name."""
    taken = {t.name for t in request.tools}
    name = OUTPUT_TOOL
    while name in taken:
        name += "_"
    return name


def instruction(schema: dict[str, Any]) -> str:
    """For a model that can only be told: the schema in words the reply is then validated against."""
    return (
        "When you give your final answer (not a tool call), reply with exactly one JSON object and nothing else, "
        "matching this JSON Schema:\n" + json.dumps(schema, ensure_ascii=False)
    )


def output_via(config: ModelNode) -> OutputVia:
    """How `config` is asked for an `output`: its catalogue entry may say it has no structured output.

    Unknown (no entry, or one that does not say) is "native": the wire decides by
    the ids it knows. A model without it that can call tools, on Anthropic, answers
    through a forced tool (its own API's way); any other is told the schema.
    """
    info = config.catalogue
    if info is None or info.can("structured_output") is not False:
        return "native"
    return "tool" if config.provider == "anthropic" and info.can("tools") is not False else "told"


def tell_chat(messages: list[dict[str, Any]], schema: dict[str, Any]) -> None:
    """Chat messages: the schema told in the system message (added to the first, or a new one first)."""
    told = instruction(schema)
    if messages and messages[0]["role"] == "system":
        messages[0] = {**messages[0], "content": f"{messages[0]['content']}\n\n{told}"}
    else:
        messages.insert(0, {"role": "system", "content": told})
