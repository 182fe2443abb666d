"""HTTP requests on loopback → scripted replies in the four providers' wire formats.

A deliberately small HTTP/1.1 server on asyncio streams (keep-alive,
Content-Length request bodies, chunked SSE responses) so the failure knobs
(dropped connections, truncated streams) act on the real socket.

A script keyed by agent is reached the way an app can without knowing plait:
a base_url under `/agents/NAME` (`http://127.0.0.1:PORT/agents/triage/v1` for
openai), or the request's own `metadata.agent`, `user`, Anthropic's
`metadata.user_id`, or the `x-plait-agent` header; else the requested model id.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from dataclasses import dataclass
from functools import partial
from types import ModuleType
from typing import Any, Callable
from urllib.parse import unquote

from plait.core.kinds import ModelNode
from ..errors import status_kind
from . import anthropic, google, openai_chat, openai_responses
from .reply import Reply
from .script import Script, ScriptExhausted

__all__ = ["AGENT_PREFIX", "FAKE_KEY_ENV", "FakeServer", "RecordedRequest", "request_keys"]

#: A base_url path prefix that picks a script's agent key: `/agents/NAME/...`.
AGENT_PREFIX = "/agents/"

#: The variable `FakeServer.config()` names for the key; `start()` sets it if unset.
FAKE_KEY_ENV = "PLAIT_FAKE_API_KEY"
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    529: "Overloaded",
}
#: Where each provider's base_url points, relative to the server's root.
_BASE_PATHS = {"openai": "/v1", "openai-compatible": "/v1", "anthropic": "", "google": ""}


@dataclass(slots=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeServer:
    """Serve `replies` (a list, or an object keyed by agent or model id) until stopped.

    Use it from a thread (`start()` / `stop()`, or `with FakeServer(...) as server:`)
    or inside a running loop (`await serve()` / `await aclose()`). `requests`
    records every request body, for assertions on what a provider sent.
    """

    def __init__(
        self,
        replies: Script | list[Any] | dict[str, list[Any]] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        cycle: bool = False,
        record: bool = True,
    ) -> None:
        self.script = replies if isinstance(replies, Script) else Script(replies, cycle=cycle)
        self.host, self.port = host, port
        self.record = record
        self.requests: list[RecordedRequest] = []
        self.url = ""
        self._server: asyncio.base_events.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._responses = 0

    # --- lifecycle ------------------------------------------------------------

    async def serve(self) -> str:
        """Start listening in the running loop; returns the base URL."""
        self._server = await asyncio.start_server(self._connection, self.host, self.port, backlog=4096)
        self.port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://{self.host}:{self.port}"
        return self.url

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    async def _shutdown(self) -> None:
        await self.aclose()
        # Open keep-alive connections still have handlers waiting on a read.
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def start(self) -> str:
        """Serve from a background thread; returns the base URL once listening."""
        os.environ.setdefault(FAKE_KEY_ENV, "fake-key")
        ready = threading.Event()

        def run() -> None:
            loop = self._loop = asyncio.new_event_loop()
            loop.run_until_complete(self.serve())
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=run, name="plait-fake-server", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self.url

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop = self._thread = None

    def __enter__(self) -> "FakeServer":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # --- conveniences -----------------------------------------------------------

    def push(self, *replies: Any, key: str = "*") -> None:
        """Queue replies (the scripted provider's shape) for the next requests."""
        self.script.extend(list(replies), key)

    def base_url(self, provider: str, agent: str | None = None) -> str:
        """The base_url to give `provider`'s client; with `agent`, one that reads that agent's replies."""
        root = self.url + (AGENT_PREFIX + agent if agent else "")
        return root + _BASE_PATHS.get(provider, "")

    def base_urls(self, agent: str | None = None) -> dict[str, str]:
        """Every provider's base_url, as `plait fake-server` prints them."""
        return {provider: self.base_url(provider, agent) for provider in _BASE_PATHS}

    def config(
        self, provider: str, model_id: str = "fake-model", *, name: str | None = None, **fields: Any
    ) -> ModelNode:
        """A ModelNode pointing `provider` at this server (`provider` may be "openai-responses")."""
        api, name = None, name or provider
        if provider == "openai-responses":
            provider, api = "openai", "responses"
        fields.setdefault("api_key_env", FAKE_KEY_ENV)
        return ModelNode(
            name=name, provider=provider, model_id=model_id, base_url=self.base_url(provider), api=api, **fields
        )

    # --- HTTP -------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                request_line, *lines = head.decode("latin-1").split("\r\n")
                method, target, _ = request_line.split(" ", 2)
                headers = {}
                for line in lines:
                    if line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                size = int(headers.get("content-length") or 0)
                raw = await reader.readexactly(size) if size else b""
                keep = await self._answer(method, target, headers, raw, writer)
                if not keep or headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            # Shutdown cancels idle keep-alive connections; end quietly, it is not a failure.
            pass
        finally:
            writer.close()

    async def _answer(
        self, method: str, target: str, headers: dict[str, str], raw: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        path = target.partition("?")[0]
        path = unquote(path)
        agent = None
        if path.startswith(AGENT_PREFIX):
            agent, _, rest = path[len(AGENT_PREFIX) :].partition("/")
            path = "/" + rest
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = None
        if self.record:
            self.requests.append(RecordedRequest(method, target, headers, body))
        wire, model = _route(path, body)
        if wire is None or not isinstance(body, dict):
            await _send_json(writer, 404, {"error": {"message": f"no such endpoint: {method} {path}"}})
            return True
        streamed = "streamGenerateContent" in path or body.get("stream") is True
        try:
            reply = self.script.next(agent, *request_keys(headers, body), model)
        except ScriptExhausted as exc:
            status, payload = wire.error("invalid_request", f"fake server: {exc}")
            await _send_json(writer, status, payload)
            return True
        if reply.output is not None and wire is anthropic:
            tool = anthropic.answer_tool(body)
            if tool is not None:
                reply = reply.through_tool(tool)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.drop is True:
            writer.transport.abort()
            return False
        spec = reply.failure(streamed)
        if spec is not None:
            # A bare scripted status gets the body a provider would send with it.
            kind = spec.get("kind") or status_kind(reply.status or 500)
            status, payload = wire.error(kind, spec.get("message", "scripted failure"))
            await _send_json(
                writer, reply.status or status, payload, reply.headers, sse_type="streamGenerateContent" in path
            )
            return True
        self._responses += 1
        args = (reply, model, f"resp_fake{self._responses}", body) if wire is openai_responses else (reply, model)
        if not streamed:
            payload = wire.body(*args) if reply.body is None else reply.body
            await _send_json(writer, reply.status or 200, payload, reply.headers)
            return True
        stream_error = wire.stream_error
        if wire is openai_responses:  # the failed Response keeps the stream's id, and its events their numbering
            after = int((reply.stream_error or {}).get("after", 1))
            stream_error = partial(
                openai_responses.stream_error, response_id=f"resp_fake{self._responses}", model=model, after=after
            )
        return await _send_stream(writer, stream_error, reply, wire.events(*args))


def request_keys(headers: dict[str, str], body: dict[str, Any]) -> list[str]:
    """Agent keys a request carries in fields an app already sets (before the model id, after the path)."""
    keys = [headers.get("x-plait-agent")]
    metadata = body.get("metadata")
    if isinstance(metadata, dict):
        keys += [metadata.get("agent"), metadata.get("user_id")]
    keys += [body.get("user"), body.get("safety_identifier")]
    return [k for k in keys if isinstance(k, str) and k]


def _route(path: str, body: Any) -> tuple[ModuleType | None, str]:
    model = body.get("model", "") if isinstance(body, dict) else ""
    if path.endswith("/chat/completions"):
        return openai_chat, model
    if path.endswith("/responses"):
        return openai_responses, model
    if path.endswith("/messages"):
        return anthropic, model
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return google, path.rsplit("/", 1)[-1].split(":", 1)[0]
    return None, model


def _head(status: int, content_type: str, extra: dict[str, str], length: int | None) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", f"content-type: {content_type}"]
    lines.append(f"content-length: {length}" if length is not None else "transfer-encoding: chunked")
    lines += [f"{k}: {v}" for k, v in extra.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _send_json(
    writer: asyncio.StreamWriter,
    status: int,
    payload: Any,
    headers: dict[str, str] | None = None,
    *,
    sse_type: bool = False,
) -> None:
    data = json.dumps(payload).encode()
    # Gemini sends pre-stream errors as text/event-stream with a plain JSON body; so do we.
    content_type = "text/event-stream" if sse_type else "application/json"
    writer.write(_head(status, content_type, headers or {}, len(data)) + data)
    await writer.drain()


async def _send_stream(
    writer: asyncio.StreamWriter,
    stream_error: Callable[[str, str], list[bytes]],
    reply: Reply,
    parts: tuple[list[bytes], list[bytes]],
) -> bool:
    events, terminal = parts
    cut: int | None = None
    tail = terminal
    if reply.stream_error:
        cut = int(reply.stream_error.get("after", 1))
        tail = stream_error(
            reply.stream_error.get("kind", "server_error"), reply.stream_error.get("message", "scripted failure")
        )
    elif reply.truncate is not False:
        cut, tail = (len(events) if reply.truncate is True else int(reply.truncate)), []
    elif reply.drop is not False:
        cut, tail = int(reply.drop), []
    body = (events if cut is None else events[:cut]) + tail
    writer.write(_head(reply.status or 200, "text/event-stream", reply.headers, None))
    for event in body:
        writer.write(b"%x\r\n%s\r\n" % (len(event), event))
        if reply.chunk_delay:
            await writer.drain()
            await asyncio.sleep(reply.chunk_delay)
    if reply.drop is not False and not reply.stream_error:
        await writer.drain()
        writer.transport.abort()  # mid-body: the client sees an incomplete chunked response
        return False
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    return True
