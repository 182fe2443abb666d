"""ModelRequest → HTTP POST → ModelResponse or stream events: what every HTTP provider shares.

A provider subclass supplies the wire format (`url`, `auth_headers`, `body`,
`parse`, `stream_state`); this class owns the client, the per-call deadline,
retries, and the translation of every failure into ProviderError, so the
wire modules never see httpx.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any, AsyncIterator, ClassVar, Protocol

import httpx

from . import errors, retry
from plait.core.kinds import ModelNode
from .base import ModelRequest, ModelResponse, ProviderError, StreamEvent
from .keys import Secret, resolve_key
from .sse import SSEDecoder
from .transport import DirectResponse, client_timeout, direct_transport, make_client

__all__ = ["HTTPProvider", "StreamState"]


class StreamState(Protocol):
    """One streamed reply being assembled: SSE events in, plait stream events out."""

    def feed(self, event: str | None, data: str) -> list[StreamEvent]: ...

    def finish(self) -> list[StreamEvent]:
        """The events left once the body ends, the last one ResponseDone; ProviderError if it ended early."""


class HTTPProvider:
    """Base for the HTTP providers. Subclasses set `provider` and implement the wire hooks."""

    provider: ClassVar[str]
    default_base_url: ClassVar[str]

    def __init__(self, config: ModelNode, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.name = config.name
        self.base_url = (config.base_url or self.default_base_url).rstrip("/")
        self._owns_client = client is None
        self._client: httpx.AsyncClient | None = None
        self._urls: dict[str, httpx.URL] = {}
        self._wire_urls: dict[str, str] = {}
        if client is not None:
            self._client = client
            self._open_client()
        try:
            self._key: Secret | None = resolve_key(config)
            self._key_error: ProviderError | None = None
        except ProviderError as err:
            # Raised on the first call, before any request: an unused fallback model need not have a key.
            self._key, self._key_error = None, err

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, model={self.config.model_id!r}, base_url={self.base_url!r})"

    # --- wire hooks -------------------------------------------------------------

    def url(self, request: ModelRequest, stream: bool) -> str:
        raise NotImplementedError

    def auth_headers(self, key: str) -> dict[str, str]:
        raise NotImplementedError

    def body(self, request: ModelRequest, stream: bool) -> dict[str, Any]:
        raise NotImplementedError

    def parse(self, data: Any, request: ModelRequest) -> ModelResponse:
        raise NotImplementedError

    def stream_state(self, request: ModelRequest) -> StreamState:
        raise NotImplementedError

    def stream_headers(self) -> dict[str, str]:
        # Streams are read raw (no decoder layer per chunk), so ask for them uncompressed.
        return {"accept-encoding": "identity"}

    # --- the seam ---------------------------------------------------------------

    async def complete(self, request: ModelRequest) -> ModelResponse:
        headers = self._request_headers()
        content = _dumps(self.body(request, stream=False))
        url = self.url(request, stream=False)
        deadline = self._deadline(request)
        # Arguments rather than a closure: with a thousand calls in flight, every cell and
        # frame a call holds is live, and the garbage collector walks them all.
        return await retry.with_retries(
            self._attempt, self.config.retries, deadline, request, url, content, headers, deadline
        )

    async def _attempt(
        self, request: ModelRequest, url: str, content: bytes, headers: dict[str, str], deadline: float | None
    ) -> ModelResponse:
        if deadline is None:
            data = await self._read(await self._send(url, content, headers, stream=False), url)
        else:
            async with _until(deadline, self, request, url):
                data = await self._read(await self._send(url, content, headers, stream=False), url)
        try:
            return self.parse(data, request)
        except ProviderError as err:
            self._stamp(err)
            raise

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        headers = self._request_headers()
        headers.update(self.stream_headers())
        content = _dumps(self.body(request, stream=True))
        url = self.url(request, stream=True)
        deadline = self._deadline(request)
        tries = 0
        while True:
            delivered = False
            try:
                # Batches, one per network chunk: an async generator hop per event was a
                # visible share of a burst's cost.
                async for batch in self._stream_once(request, url, content, headers, deadline):
                    for event in batch:
                        delivered = True
                        yield event
                return
            except ProviderError as err:
                # Once the caller has seen an event, a retry would splice two answers together.
                delay = None if delivered else retry.next_delay(err, tries, self.config.retries, deadline)
                if delay is None:
                    raise
            tries += 1
            await retry.sleep(delay)

    async def aclose(self) -> None:
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None

    # --- plumbing -----------------------------------------------------------------

    async def _stream_once(
        self, request: ModelRequest, url: str, content: bytes, headers: dict[str, str], deadline: float | None
    ) -> AsyncIterator[list[StreamEvent]]:
        async with _until(deadline, self, request, url):
            response = await self._send(url, content, headers, stream=True)
        try:
            if response.status_code >= 300:
                async with _until(deadline, self, request, url):
                    await self._read(response, url)
            if "html" in response.headers.get("content-type", ""):
                # A web page where the event stream was expected (a web server or proxy at base_url): its words,
                # not "the stream ended before its finish".
                async with _until(deadline, self, request, url):
                    await self._not_a_stream(response, url)
            state = self.stream_state(request)
            decoder = SSEDecoder()
            chunks = response.aiter_raw().__aiter__()
            while True:
                try:
                    if deadline is None:
                        chunk = await chunks.__anext__()
                    else:
                        async with _until(deadline, self, request, url):
                            chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    break
                except httpx.TransportError as exc:
                    raise self._stamp(errors.from_exception(exc, url=self._where(url))) from exc
                events, failure = self._feed(state, decoder.feed(chunk), url)
                if events:
                    yield events
                if failure is not None:
                    raise failure
            events, failure = self._feed(state, decoder.close(), url)
            if events:
                yield events
            if failure is not None:
                raise failure
            try:
                tail = state.finish()
            except ProviderError as err:
                if err.kind == "network":  # the body ended early: say where from
                    err.message = f"{err.message} (calling {self._where(url)})"
                    err.args = (err.message,)
                raise self._stamp(err) from None
            yield tail
        finally:
            await response.aclose()

    def _feed(
        self, state: StreamState, sse_events: list[tuple[str | None, str]], url: str
    ) -> tuple[list[StreamEvent], ProviderError | None]:
        """Events parsed from one network chunk, and the failure that ended them, if any.

        Events before an in-band error are still delivered, whatever the chunking.
        """
        out: list[StreamEvent] = []
        for name, data in sse_events:
            try:
                out += state.feed(name, data)
            except ProviderError as err:
                return out, self._stamp(err)
            except ValueError:  # unparseable JSON in a data line
                message = f"malformed stream data: {data[:200]!r} (from {self._where(url)})"
                return out, self._stamp(ProviderError("server_error", message))
        return out, None

    async def _send(
        self, url: str, content: bytes, headers: dict[str, str], *, stream: bool
    ) -> httpx.Response | DirectResponse:
        client = self._client or self._open_client()
        # A parsed URL kept per endpoint: client.build_request re-parses and re-merges everything on every call.
        target = self._urls.get(url)
        if target is None:
            target = self._urls[url] = httpx.URL(url)
            self._wire_urls[url] = str(target)  # httpx's normalisation, so both paths send the same URL
        try:
            if self._direct is not None:
                # No httpx.Request or Response at all: the client has nothing to add to them.
                return await self._direct.post(self._wire_urls[url], headers, content, self._direct_timeout)
            request = httpx.Request(
                "POST",
                target,
                content=content,
                headers={**self._client_headers, **headers},
                extensions=self._extensions,
            )
            return await client.send(request, stream=stream)
        except httpx.TransportError as exc:
            raise self._stamp(errors.from_exception(exc, url=self._where(url))) from exc

    def _open_client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = make_client()
        self._extensions = {"timeout": self._client.timeout.as_dict()}
        self._direct = direct_transport(self._client)
        self._direct_timeout = client_timeout(self._extensions["timeout"])
        # httpx's stock defaults (accept, user-agent...) are what aiohttp sends anyway; a user's
        # own client may carry headers that matter, so those are merged.
        self._client_headers = {} if self._direct is not None else dict(self._client.headers)
        return self._client

    async def _read(self, response: httpx.Response | DirectResponse, url: str) -> Any:
        try:
            body = await response.aread()
        except httpx.TransportError as exc:
            raise self._stamp(errors.from_exception(exc, url=self._where(url))) from exc
        finally:
            await response.aclose()
        if response.status_code >= 300:
            raise errors.from_response(
                response.status_code,
                response.headers,
                body,
                provider=self.provider,
                model=self.name,
                url=self._where(url),
            )
        try:
            return json.loads(body)
        except ValueError as exc:
            shown = errors.page_text(body.decode("utf-8", "replace"))[:200]
            message = f"the reply is not JSON: {shown!r} (from {self._where(url)})"
            raise self._stamp(ProviderError("server_error", message)) from exc

    async def _not_a_stream(self, response: httpx.Response | DirectResponse, url: str) -> None:
        try:
            body = await response.aread()
        except httpx.TransportError as exc:
            raise self._stamp(errors.from_exception(exc, url=self._where(url))) from exc
        shown = errors.page_text(body.decode("utf-8", "replace"))[:200]
        message = f"the reply is a web page, not an event stream: {shown!r} (from {self._where(url)})"
        raise self._stamp(ProviderError("server_error", message))

    def _request_headers(self) -> dict[str, str]:
        # Built per call rather than cached, so no long-lived object holds the key in clear.
        if self._key_error is not None:
            raise self._key_error
        headers = {"content-type": "application/json"}
        if self._key is not None:
            headers.update(self.auth_headers(self._key.reveal()))
        headers.update(self.config.headers)
        return headers

    def _deadline(self, request: ModelRequest) -> float | None:
        seconds = request.timeout if request.timeout is not None else self.config.timeout
        return None if seconds is None else time.monotonic() + seconds

    def _timeout_error(self, request: ModelRequest, url: str) -> ProviderError:
        seconds = request.timeout if request.timeout is not None else self.config.timeout
        message = f"model call exceeded its timeout of {seconds:g}s (calling {self._where(url)})"
        return self._stamp(ProviderError("timeout", message))

    def endpoint(self, request: ModelRequest, stream: bool) -> str:
        """The call `request` makes, as error messages name it (`POST URL`): for a deadline kept outside the
        provider (src/plait/runtime/model_call.py) to say which call it gave up on, as the provider's own does."""
        return self._where(self.url(request, stream))

    def _where(self, url: str) -> str:
        """The endpoint as error messages name it (errors.shown_url: no credentials or query)."""
        return errors.shown_url("POST", url)

    def _stamp(self, err: ProviderError) -> ProviderError:
        err.provider = err.provider or self.provider
        err.model = err.model or self.name
        return err

    def _max_tokens(self, request: ModelRequest) -> int | None:
        return request.max_tokens if request.max_tokens is not None else self.config.max_tokens

    def _temperature(self, request: ModelRequest) -> float | None:
        return request.temperature if request.temperature is not None else self.config.temperature


class _until:
    """`asyncio.timeout_at` against a monotonic deadline, raising the provider's timeout error instead."""

    __slots__ = ("_deadline", "_provider", "_request", "_url", "_cm")

    def __init__(self, deadline: float | None, provider: HTTPProvider, request: ModelRequest, url: str) -> None:
        self._deadline = deadline
        self._provider = provider
        self._request = request
        self._url = url

    async def __aenter__(self) -> None:
        if self._deadline is not None:
            loop_deadline = asyncio.get_running_loop().time() + (self._deadline - time.monotonic())
            self._cm = asyncio.timeout_at(loop_deadline)
            await self._cm.__aenter__()

    async def __aexit__(self, kind: Any, exc: Any, tb: Any) -> bool | None:
        if self._deadline is None:
            return None
        try:
            await self._cm.__aexit__(kind, exc, tb)
        except TimeoutError as timeout:
            raise self._provider._timeout_error(self._request, self._url) from timeout
        return None


#: One encoder for every body: json.dumps with options builds a new JSONEncoder per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _dumps(body: dict[str, Any]) -> bytes:
    text = _ENCODER.encode(body)
    try:
        return text.encode()
    except UnicodeEncodeError:
        # A lone surrogate (a non-UTF-8 file name a tool listed, a model's "\ud800") has no UTF-8 form: the model
        # is sent it as the text \udXXX (an escaped backslash in the JSON), as plait shows and journals it, which
        # every server takes; a bare \udXXX escape in JSON is refused by strict parsers.
        return _LONE_SURROGATE.sub(lambda m: f"\\\\u{ord(m.group()):04x}", text).encode()


_LONE_SURROGATE = re.compile("[\\ud800-\\udfff]")
