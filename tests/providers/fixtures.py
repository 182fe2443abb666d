"""The recorded provider traffic in tests/fixtures/providers → parsed ModelResponses and errors.

Shared by the fixture tests: which parser and stream state each file belongs
to, and how to replay a recorded body through them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plait.runtime.providers import anthropic, google, openai_chat, openai_responses
from plait.runtime.providers.base import ModelRequest, ModelResponse, StreamEvent
from plait.runtime.providers.sse import SSEDecoder

#: The repo's own copy of the recordings (kept in step with the design documents' recordings), so a clone stands alone.
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "providers"


def files(pattern: str) -> list[Path]:
    return sorted(FIXTURES.glob(pattern))


def wire(path: Path) -> str:
    """ "chat", "responses", "anthropic" or "google" for a fixture file."""
    folder, name = path.parent.name, path.name
    if folder == "openai" and name.startswith("responses_"):
        return "responses"
    if folder in ("openai", "openrouter"):
        return "chat"
    return folder


def request_for(path: Path) -> ModelRequest:
    return ModelRequest(model="recorded", messages=[], step=3)


def parse_body(path: Path, data: Any) -> ModelResponse:
    req = request_for(path)
    kind = wire(path)
    if kind == "chat":
        return openai_chat.parse_chat(data, req)
    if kind == "responses":
        return openai_responses.parse_responses(data, req)
    if kind == "anthropic":
        return anthropic.parse_anthropic(data, req)
    return google.parse_google(data, req)


def stream_state(path: Path) -> Any:
    req = request_for(path)
    return {
        "chat": openai_chat.ChatStream,
        "responses": openai_responses.ResponsesStream,
        "anthropic": anthropic.AnthropicStream,
        "google": google.GoogleStream,
    }[wire(path)](req)


def replay_sse(path: Path, chunk_size: int = 0) -> list[StreamEvent]:
    """Feed a recorded .sse body through the decoder and the provider's stream state.

    `chunk_size` splits the bytes at arbitrary points, as a network would.
    """
    raw = path.read_bytes()
    chunks = [raw[i : i + chunk_size] for i in range(0, len(raw), chunk_size)] if chunk_size else [raw]
    return replay_events(path, chunks)


def replay_events(path: Path, chunks: list[bytes]) -> list[StreamEvent]:
    state = stream_state(path)
    decoder = SSEDecoder()
    out: list[StreamEvent] = []
    for chunk in chunks:
        for name, data in decoder.feed(chunk):
            out += state.feed(name, data)
    for name, data in decoder.close():
        out += state.feed(name, data)
    return out + state.finish()


def replay_payloads(path: Path, payloads: list[Any]) -> list[StreamEvent]:
    """Stored parsed chunks (`*.chunks.json`, the Gemini JSON-array stream) replayed as SSE data lines."""
    return replay_events(path, [b"data: " + json.dumps(p).encode() + b"\n\n" for p in payloads])


def meta(path: Path) -> dict[str, Any]:
    name = path.name
    for suffix in (".request.json", ".chunks.jsonl", ".chunks.json", ".json", ".sse"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    candidates = [path.with_name(name + ".meta.json"), path.with_name(name + ".chunks.meta.json")]
    for candidate in candidates:
        if candidate.exists():
            return json.loads(candidate.read_text())
    return {}
