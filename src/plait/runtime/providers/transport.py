"""httpx requests → aiohttp, so one shared client scales to thousands of concurrent calls.

httpx stays the API every provider is written against; only the connection
layer is swapped. httpcore's pool does bookkeeping that grows with the number
of waiting requests, which made 1,000 concurrent calls take ~25 s; aiohttp's
connector does not. aiohttp exceptions are translated here into httpx's, so the
providers' error mapping sees one family.
"""

from __future__ import annotations

import asyncio
import urllib.request
import weakref
from typing import Any, AsyncIterator, Awaitable

import aiohttp
import httpx
from yarl import URL

__all__ = ["AiohttpTransport", "DirectResponse", "client_timeout", "direct_transport", "make_client"]

#: Clients built by make_client → their transport (see direct_transport).
_DIRECT: "weakref.WeakKeyDictionary[httpx.AsyncClient, AiohttpTransport]" = weakref.WeakKeyDictionary()

#: Most specific first: several aiohttp errors subclass each other.
_ERRORS: tuple[tuple[type[BaseException], type[httpx.TransportError]], ...] = (
    (aiohttp.ConnectionTimeoutError, httpx.ConnectTimeout),
    (aiohttp.SocketTimeoutError, httpx.ReadTimeout),
    (aiohttp.ServerTimeoutError, httpx.ReadTimeout),
    (asyncio.TimeoutError, httpx.TimeoutException),
    (aiohttp.ClientConnectorError, httpx.ConnectError),
    (aiohttp.ServerDisconnectedError, httpx.RemoteProtocolError),
    (aiohttp.ClientPayloadError, httpx.RemoteProtocolError),
    (aiohttp.ClientResponseError, httpx.RemoteProtocolError),
    (aiohttp.ClientOSError, httpx.ReadError),
    (aiohttp.ClientError, httpx.TransportError),
)


#: What aiohttp raises for a failed request or read; _translate turns it into httpx's.
_ERRORS_CAUGHT = (aiohttp.ClientError, asyncio.TimeoutError)


def _translate(exc: BaseException) -> httpx.TransportError:
    for source, target in _ERRORS:
        if isinstance(exc, source):
            return target(_plain(exc))
    return httpx.TransportError(_plain(exc))  # pragma: no cover - _ERRORS ends with the base class


def _plain(exc: BaseException) -> str:
    """What happened, in words a user knows: aiohttp's own texts carry `ssl:default` on plain http://
    and internal parser codes (`TransferEncodingError: 400`) that read like HTTP statuses."""
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return f"the TLS certificate of {exc.host} was not accepted ({exc.certificate_error})"
    if isinstance(exc, aiohttp.ClientConnectorSSLError):
        # OpenSSL's reason code, without its source line (`(_ssl.c:1006)`).
        reason = getattr(exc.os_error, "reason", None)
        if reason == "WRONG_VERSION_NUMBER":  # the reply to the TLS hello was clear text: an http:// server
            return f"{exc.host}:{exc.port} does not speak TLS; if it is a plain HTTP server, use http:// in base_url"
        said = reason.replace("_", " ").lower() if reason else exc.os_error.strerror or exc.os_error
        return f"the TLS handshake with {exc.host}:{exc.port} failed ({said})"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return f"the host name {exc.host} could not be resolved"
    if isinstance(exc, aiohttp.ClientConnectorError):
        where = f"{exc.host}:{exc.port}"
        if isinstance(exc.os_error, ConnectionRefusedError):
            return f"the connection to {where} was refused; is the server running, on that port?"
        return f"could not connect to {where} ({exc.os_error.strerror or exc.os_error})"
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return "timed out connecting to the server"
    if isinstance(exc, (aiohttp.SocketTimeoutError, aiohttp.ServerTimeoutError)):
        return "timed out waiting for the server to send data"
    if isinstance(exc, asyncio.TimeoutError):
        return "timed out"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the server closed the connection before it replied"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "the server closed the connection in the middle of its reply"
    if isinstance(exc, aiohttp.ClientResponseError):
        return f"the server's reply is not valid HTTP ({exc.message})"
    if isinstance(exc, ConnectionResetError):  # aiohttp.ClientConnectionResetError
        return "the server reset the connection"
    if isinstance(exc, aiohttp.ClientOSError):
        return f"the connection failed ({exc.strerror or exc})"
    if isinstance(exc, aiohttp.InvalidUrlClientError):
        return f"the URL is not valid ({exc})"
    return str(exc) or type(exc).__name__


async def _chunks(response: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
    try:
        async for chunk in response.content.iter_any():
            yield chunk
    except _ERRORS_CAUGHT as exc:
        raise _translate(exc) from exc


class _Body(httpx.AsyncByteStream):
    __slots__ = ("_response",)

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    def __aiter__(self) -> AsyncIterator[bytes]:
        return _chunks(self._response)

    async def aclose(self) -> None:
        self._response.release()


class DirectResponse:
    """The part of httpx.Response the providers read, over aiohttp's response without building one.

    httpx.Response costs about as much CPU as aiohttp's whole request (header
    normalisation, stream wrappers, byte chunkers). Errors are httpx's, as from
    the transport; the body is decoded as httpx would (these sessions leave
    content-encoding alone), and headers are built only when asked for, i.e.
    on the error path.
    """

    __slots__ = ("_response", "status_code")

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status_code = response.status

    @property
    def headers(self) -> httpx.Headers:
        return httpx.Headers(self._response.raw_headers)

    async def aread(self) -> bytes:
        response = self._response
        try:
            body = await response.read()
        except _ERRORS_CAUGHT as exc:
            raise _translate(exc) from exc
        finally:
            response.release()
        if "Content-Encoding" in response.headers:
            # Rare (compressed JSON); httpx's decoders give the same bytes and errors as before.
            body = httpx.Response(self.status_code, headers=response.raw_headers, content=body).content
        return body

    def aiter_raw(self) -> AsyncIterator[bytes]:
        return _chunks(self._response)

    async def aclose(self) -> None:
        self._response.release()


def client_timeout(timeout: dict[str, float | None]) -> aiohttp.ClientTimeout:
    """httpx's timeout dict (`Timeout.as_dict()`) as aiohttp's; httpx's write timeout has no counterpart."""
    return aiohttp.ClientTimeout(
        sock_connect=timeout.get("connect"), sock_read=timeout.get("read"), connect=timeout.get("pool")
    )


class AiohttpTransport(httpx.AsyncBaseTransport):
    """An httpx transport over one aiohttp session, opened lazily inside the running loop.

    `max_connections=None` means no pool limit: HTTP/1.1 needs a connection per
    in-flight call, and the run's own concurrency bounds how many there are.
    """

    def __init__(self, *, max_connections: int | None = None, keepalive_expiry: float = 30.0) -> None:
        self._limit = max_connections or 0
        self._keepalive = keepalive_expiry
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: The task that closes the session when its loop's owner cancels what is left (see _open).
        self._closer: asyncio.Task[None] | None = None
        #: Parsed URLs by text: providers post to a handful of endpoints, over and over.
        self._urls: dict[str, URL] = {}
        # Read proxy settings once: aiohttp's trust_env re-reads them (and .netrc, in a
        # thread) on every request, which dominated the cost of a call.
        self._proxies = urllib.request.getproxies()

    def _open(self) -> aiohttp.ClientSession:
        # An aiohttp session belongs to the loop it was made in; a provider reused
        # under a second asyncio.run() gets a fresh one.
        if self._session is not None:
            self._abandon()
        loop = self._loop = asyncio.get_running_loop()
        connector = aiohttp.TCPConnector(limit=self._limit, keepalive_timeout=self._keepalive)
        session = self._session = aiohttp.ClientSession(
            connector=connector, auto_decompress=False, skip_auto_headers=("User-Agent",)
        )
        # asyncio.run() cancels the tasks still pending before it closes its loop, and this one then closes
        # the session while the loop can still run aiohttp's teardown: a session left open when its loop
        # ends can no longer close its sockets.
        self._closer = loop.create_task(self._close_when_cancelled(session, loop.create_future()))
        return session

    async def _close_when_cancelled(self, session: aiohttp.ClientSession, never: asyncio.Future[None]) -> None:
        try:
            await never
        finally:
            if self._session is session:
                self._session = None
            await session.close()

    def _abandon(self) -> None:
        """Let go of a session made in an earlier loop: closed there if that loop still runs, else dropped."""
        loop, closer = self._loop, self._closer
        self._session = self._closer = None
        if closer is not None and loop is not None and not loop.is_closed():
            # Its owner has not cancelled it yet (a loop kept after run_until_complete, or one in a thread).
            loop.call_soon_threadsafe(closer.cancel)
        # A closed loop that did not cancel its tasks leaves the sockets to their transports' finalizers.

    def _proxy(self, url: URL) -> str | None:
        proxy = self._proxies.get(url.scheme)
        if proxy is None or urllib.request.proxy_bypass(url.host or ""):
            return None
        return proxy

    def _request(
        self, method: str, text: str, headers: Any, data: bytes | None, timeout: aiohttp.ClientTimeout
    ) -> Awaitable[aiohttp.ClientResponse]:
        """aiohttp's request, not yet awaited: callers await it under `except _ERRORS_CAUGHT`.

        Not a coroutine itself, so a call holds one frame less while it waits on the server.
        """
        session = self._session
        if session is None or self._loop is not asyncio.get_running_loop():
            session = self._open()
        url = self._urls.get(text)
        if url is None:
            if len(self._urls) > 256:
                self._urls.clear()
            url = self._urls[text] = URL(text, encoded=True)
        return session.request(
            method,
            url,
            headers=headers,
            data=data,
            allow_redirects=False,
            compress=False,
            proxy=self._proxy(url) if self._proxies else None,
            timeout=timeout,
        )

    async def post(
        self, url: str, headers: dict[str, str], content: bytes, timeout: aiohttp.ClientTimeout
    ) -> DirectResponse:
        """What `handle_async_request` does for a POST, without httpx's Request and Response objects.

        aiohttp adds the Host and Content-Length headers httpx's Request would have.
        """
        try:
            response = await self._request("POST", url, headers, content or None, timeout)
        except _ERRORS_CAUGHT as exc:
            raise _translate(exc) from exc
        return DirectResponse(response)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        data = await request.aread() or None
        timeout = client_timeout(request.extensions.get("timeout") or {})
        try:
            response = await self._request(
                request.method, str(request.url), request.headers.multi_items(), data, timeout
            )
        except _ERRORS_CAUGHT as exc:
            raise _translate(exc) from exc
        return httpx.Response(
            status_code=response.status,
            headers=response.raw_headers,
            stream=_Body(response),
            request=request,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": (response.reason or "").encode()},
        )

    async def aclose(self) -> None:
        if self._session is None:
            return
        if self._loop is not asyncio.get_running_loop():  # opened under an earlier asyncio.run()
            self._abandon()
            return
        session, closer = self._session, self._closer
        self._session = self._closer = None
        if closer is not None:
            closer.cancel()
            await asyncio.gather(closer, return_exceptions=True)
        await session.close()  # a no-op when the closer did it


def make_client(*, max_connections: int | None = None) -> httpx.AsyncClient:
    """The client a run should share between all its providers (pass it to `make_provider`)."""
    transport = AiohttpTransport(max_connections=max_connections)
    client = httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(600.0, connect=10.0))
    _DIRECT[client] = transport
    return client


def direct_transport(client: httpx.AsyncClient) -> AiohttpTransport | None:
    """The transport of a client from make_client, which has no auth, hooks or cookies to apply.

    Providers hand such a client's requests straight to the transport: the
    layers of `client.send` (auth and redirect flows, cookie extraction through
    urllib's cookie jar) cost about as much as aiohttp's whole request. Any
    other client (a user's own, with auth or a mock transport) goes through send.
    """
    transport = _DIRECT.get(client)
    if transport is None or client.auth is not None or any(client.event_hooks.values()):
        return None
    return transport
