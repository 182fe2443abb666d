"""Server-sent event bytes → (event name, data) pairs, incrementally.

Providers disagree on framing: `\\n\\n` or `\\r\\n\\r\\n` between events, `event:`
lines or none, comment keep-alives (`: OPENROUTER PROCESSING`), padded `data:`
JSON. The decoder follows the SSE spec for fields. It works on text decoded
once per network chunk, because a lone `data:` line per event is by far the
common case and the stream's hot path: a chunk made only of those is split
in one call, anything else block by block.
"""

from __future__ import annotations

import codecs
import json
from typing import Any, Callable

__all__ = ["SSEDecoder", "is_done", "loads"]

#: The C scanner json.loads wraps; typeshed does not declare the attribute the decoder sets on itself.
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


class SSEDecoder:
    """Feed raw chunks; get back complete events. Chunk boundaries may fall anywhere, even inside a character."""

    __slots__ = ("_buf", "_utf8")

    def __init__(self) -> None:
        self._buf = ""
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, chunk: bytes) -> list[tuple[str | None, str]]:
        text = self._buf + self._utf8.decode(chunk)
        held = ""
        if "\r" in text:
            # A trailing \r may be the first half of \r\n split across chunks: hold it back.
            if text.endswith("\r"):
                text, held = text[:-1], "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        end = text.rfind("\n\n")
        if end < 0:
            self._buf = text + held
            return []
        self._buf = text[end + 2 :] + held
        complete = text[:end]
        if complete.startswith("data: "):
            datas = complete[6:].split("\n\ndata: ")
            # No newline left means every event was one `data: ` line: all split in one call
            # rather than block by block (joined because `in` is a memchr and count is not).
            if "\n" not in "".join(datas):
                return [(None, data) for data in datas]
        out: list[tuple[str | None, str]] = []
        for block in complete.split("\n\n"):
            if block.startswith("data:") and "\n" not in block:
                out.append((None, block[6:] if block[5:6] == " " else block[5:]))
            elif block:
                event = _block(block)
                if event is not None:
                    out.append(event)
        return out

    def close(self) -> list[tuple[str | None, str]]:
        """End of stream: a last event missing its blank line still counts.

        So does a last `data:` line missing its newline when its value is whole JSON
        (Anthropic may end on `message_stop` so, and the official SDKs accept it);
        any other partial line is a cut-off and is dropped.
        """
        text = self._buf.replace("\r", "\n")
        self._buf = ""
        complete, newline, partial = text.rpartition("\n")
        if partial.startswith("data:") and _whole(partial[5:]):
            complete, newline = text, "\n"
        event = _block(complete) if newline else None
        return [event] if event is not None else []


def _whole(value: str) -> bool:
    """A complete JSON object (a cut number or string could still parse) or the [DONE] terminator."""
    if is_done(value):
        return True
    try:
        return isinstance(json.loads(value), dict)
    except ValueError:
        return False


def _block(block: str) -> tuple[str | None, str] | None:
    name: str | None = None
    data: list[str] = []
    for line in block.split("\n"):
        if not line or line[0] == ":":  # blank, or a comment (keep-alive)
            continue
        field, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value.strip()
        # `id:` and `retry:` are reconnection hints; no provider stream is resumable.
    return (name, "\n".join(data)) if data else None


def is_done(data: str) -> bool:
    """OpenAI-style terminator, tolerant of padding."""
    return data.strip() == "[DONE]"


def loads(data: str) -> Any:
    """`json.loads` for one event's data, the stream's per-event cost.

    json.loads runs two whitespace regexes and three Python calls around the C
    scanner; event payloads rarely have whitespace around them, so the scanner is
    called directly and anything else (padding, trailing bytes, malformed JSON)
    goes to json.loads, which parses it or raises exactly as before.
    """
    try:
        value, end = _scan(data, 0)
    except StopIteration:
        return json.loads(data)
    if end != len(data):
        return json.loads(data)
    return value
