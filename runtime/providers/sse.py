"""Server-sent event bytes → (event name, data) pairs, incrementally.

Providers disagree on framing: `\\n\\n` or `\\r\\n\\r\\n` between events, `event:`
lines or none, comment keep-alives (`: OPENROUTER PROCESSING`), padded `data:`
JSON. The decoder follows the SSE spec for fields and leaves the data as bytes
so `json.loads` parses it without an extra decode.
"""

from __future__ import annotations

__all__ = ["SSEDecoder", "is_done"]


class SSEDecoder:
    """Feed raw chunks; get back complete events. Chunk boundaries may fall anywhere."""

    __slots__ = ("_buf", "_event", "_data")

    def __init__(self) -> None:
        self._buf = b""
        self._event: str | None = None
        self._data: list[bytes] = []

    def feed(self, chunk: bytes) -> list[tuple[str | None, bytes]]:
        buf = self._buf + chunk if self._buf else chunk
        held = b""
        if b"\r" in buf:
            # A trailing \r may be the first half of \r\n split across chunks.
            if buf.endswith(b"\r"):
                buf, held = buf[:-1], b"\r"
            buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = buf.split(b"\n")
        self._buf = lines.pop() + held
        out: list[tuple[str | None, bytes]] = []
        for line in lines:
            self._line(line, out)
        return out

    def close(self) -> list[tuple[str | None, bytes]]:
        """End of stream: a last event missing its blank line still counts; a partial line does not."""
        out: list[tuple[str | None, bytes]] = []
        self._buf = b""
        self._line(b"", out)
        return out

    def _line(self, line: bytes, out: list[tuple[str | None, bytes]]) -> None:
        if not line:
            if self._data:
                out.append((self._event, b"\n".join(self._data)))
            self._event, self._data = None, []
            return
        if line[0] == 58:  # ":" starts a comment (keep-alive)
            return
        name, _, value = line.partition(b":")
        if value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._data.append(value)
        elif name == b"event":
            self._event = value.decode().strip()
        # `id:` and `retry:` are reconnection hints; no provider stream is resumable.


def is_done(data: bytes) -> bool:
    """OpenAI-style terminator, tolerant of padding."""
    return data.strip() == b"[DONE]"
