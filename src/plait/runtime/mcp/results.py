"""An MCP `tools/call` result → the text the model reads and whether it is an error.

Text blocks are the result (joined by blank lines); a result with only
structured content is its JSON; images, audio and blobs are named with their
type and size rather than pasted as base64, which no model reads well; a
linked or embedded text resource is shown with its URI.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the SDK is imported when a server starts
    from mcp_types import CallToolResult

__all__ = ["result_text"]


def result_text(result: CallToolResult) -> tuple[str, bool]:
    """(text, is_error) of a `CallToolResult`."""
    parts = [text for block in (result.content or ()) if (text := _block(block))]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, sort_keys=True))
    text = "\n\n".join(parts) if parts else "(the tool returned no content)"
    return text, bool(result.is_error)


def _block(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} {block.mime_type}, {_size(block.data)}]"
    if kind == "resource_link":
        return f"[resource {block.uri}" + (f": {block.description}" if block.description else "") + "]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return f"[resource {resource.uri}]\n{text}"
        return f"[resource {resource.uri}, {resource.mime_type or 'binary'}, {_size(getattr(resource, 'blob', ''))}]"
    return f"[{kind or 'unknown'} content]"


def _size(data: str) -> str:
    """The decoded size of base64 `data`, for a person reading the transcript."""
    n = len(data or "") * 3 // 4
    return f"{n} bytes" if n < 10_000 else f"{n // 1024} KB"
