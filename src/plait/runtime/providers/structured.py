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
from typing import Any

from .base import ModelRequest

__all__ = ["OUTPUT_TOOL", "instruction", "output_tool_name", "schema_name"]

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
