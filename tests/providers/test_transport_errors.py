"""Transport failures in the user's terms: every one names the URL it called, none leaks aiohttp's vocabulary.

Each case has its own loopback server written at the socket level (asyncio), so the failure is exact: a
plain-text 404 from a wrong path, a reply cut off mid-body, a refused port.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from plait.runtime.providers import make_provider
from plait.core.kinds import ModelNode
from plait.runtime.providers.base import ProviderError

from helpers import request

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

#: aiohttp's words that once reached users: its SSL context name on plain http://, its parser's error class.
LIBRARY_WORDS = ("ssl:default", "TransferEncodingError", "ContentLengthError", "aiohttp", "Errno")


async def _read_request(reader: asyncio.StreamReader) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")),
        0,
    )
    await reader.readexactly(length)


def _answers(raw: bytes, *, reads_request: bool = True) -> Handler:
    """A server that reads the request (or only a first byte: a TLS hello has no HTTP head), writes `raw` as it
    stands (a reply, a part of one, or nothing) and hangs up."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if reads_request:
            await _read_request(reader)
        else:
            await reader.read(1)
        writer.write(raw)
        await writer.drain()
        writer.close()
        await writer.wait_closed()  # the server's socket is closed before the handler ends, not left to the GC

    return handler


def _answers_404(body: bytes, content_type: bytes) -> Handler:
    return _answers(
        b"HTTP/1.1 404 Not Found\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n%s" % (content_type, len(body), body)
    )


#: A static server's plain text for an unknown path.
_not_found = _answers_404(b"File Not Found", b"text/plain")
#: llama-server's answer for an unknown path, in the API's own error shape (as recorded from a real server).
_llama_not_found = _answers_404(
    b'{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}', b"application/json"
)
#: A real "no such model" (OpenAI's shape): the API's words are enough, and are kept as they are.
_model_not_found = _answers_404(
    b'{"error":{"message":"The model `m` does not exist","type":"invalid_request_error","code":"model_not_found"}}',
    b"application/json",
)


_EVENT = b'data: {"choices":[{"index":0,"delta":{"content":"Hello"}}]}\n\n'
_dies_mid_stream = _answers(
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    + b"%x\r\n%s\r\n" % (len(_EVENT), _EVENT)
    + b"40\r\ndata: {"  # a chunk announced as 64 bytes, then the process is gone
)
_dies_mid_body = _answers(
    b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{"id": "x", '
)


def _call(base_url: str, *, stream: bool, handler: Handler | None = None, **config: Any) -> ProviderError:
    """One call through the real client; the ProviderError it ends with."""

    async def go() -> ProviderError:
        server = None
        url = base_url
        if handler is not None:
            server = await asyncio.start_server(handler, "127.0.0.1", 0)
            url = base_url.replace("PORT", str(server.sockets[0].getsockname()[1]))
        provider = make_provider(
            ModelNode(name="local", provider="openai-compatible", model_id="m", base_url=url, retries=0, **config)
        )
        try:
            if stream:
                async for _ in provider.stream(request()):
                    pass
            else:
                await provider.complete(request())
        except ProviderError as err:
            return err
        finally:
            await provider.aclose()
            if server is not None:
                server.close()
                await server.wait_closed()
        raise AssertionError("the call succeeded")

    return asyncio.run(go())


def _refused_port() -> int:
    # Bound and never listened on: a connection to it is refused for as long as the socket is held.
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    _HELD.append(sock)
    return int(sock.getsockname()[1])


_HELD: list[socket.socket] = []


@pytest.fixture(autouse=True)
def _release_sockets() -> Any:
    yield
    while _HELD:
        _HELD.pop().close()


@pytest.mark.parametrize("handler", [_not_found, _llama_not_found], ids=["plain-text", "llama-server"])
@pytest.mark.parametrize("stream", [False, True], ids=["buffered", "streamed"])
def test_a_wrong_base_url_path_names_the_url_and_says_to_check_base_url(stream: bool, handler: Handler) -> None:
    err = _call("http://127.0.0.1:PORT/wrong/v1", stream=stream, handler=handler)
    text = str(err)
    assert "POST http://127.0.0.1:" in text and "/wrong/v1/chat/completions" in text
    assert "HTTP 404" in text and "check base_url" in text
    assert "File Not Found" in text  # the server's own words are kept
    assert err.status == 404


def test_a_missing_model_keeps_the_apis_own_words() -> None:
    err = _call("http://127.0.0.1:PORT/v1", stream=False, handler=_model_not_found)
    assert err.kind == "model_not_found" and err.message == "The model `m` does not exist"


@pytest.mark.parametrize("stream", [False, True], ids=["buffered", "streamed"])
def test_a_refused_port_says_refused_and_names_the_url_without_ssl_words(stream: bool) -> None:
    port = _refused_port()
    err = _call(f"http://127.0.0.1:{port}/v1", stream=stream)
    text = str(err)
    assert err.kind == "network"
    assert "refused" in text and "is the server running" in text
    assert f"calling POST http://127.0.0.1:{port}/v1/chat/completions" in text
    assert not [word for word in LIBRARY_WORDS if word in text], text


def test_a_server_dying_mid_stream_says_the_reply_was_cut_off() -> None:
    err = _call("http://127.0.0.1:PORT/v1", stream=True, handler=_dies_mid_stream)
    text = str(err)
    assert err.kind == "network"
    assert "closed the connection in the middle of its reply" in text
    assert "calling POST http://127.0.0.1:" in text and "/v1/chat/completions" in text
    # aiohttp's parser code 400 read like an HTTP status the server never sent
    assert not [word for word in LIBRARY_WORDS if word in text] and "400" not in text, text


def test_a_server_dying_mid_body_says_the_reply_was_cut_off() -> None:
    err = _call("http://127.0.0.1:PORT/v1", stream=False, handler=_dies_mid_body)
    text = str(err)
    assert err.kind == "network" and "in the middle of its reply" in text
    assert "/v1/chat/completions" in text
    assert not [word for word in LIBRARY_WORDS if word in text], text


#: The request is read, then the process is gone before a byte of reply.
_hangs_up = _answers(b"")
#: A web server where the API was expected: a 200 whose body is a page.
_html_page = _answers(b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 22\r\n\r\n<html>It works!</html>")


@pytest.mark.parametrize("stream", [False, True], ids=["buffered", "streamed"])
def test_a_server_hanging_up_before_replying_says_so_and_names_the_url(stream: bool) -> None:
    err = _call("http://127.0.0.1:PORT/v1", stream=stream, handler=_hangs_up)
    text = str(err)
    assert err.kind == "network" and "closed the connection before it replied" in text
    assert "calling POST http://127.0.0.1:" in text and "/v1/chat/completions" in text
    assert not [word for word in LIBRARY_WORDS if word in text], text


def test_a_reply_that_is_not_the_apis_names_the_url_and_shows_what_came_back() -> None:
    err = _call("http://127.0.0.1:PORT/v1", stream=False, handler=_html_page)
    text = str(err)
    assert "the reply is not JSON: 'It works!'" in text and "b'" not in text, text
    assert "POST http://127.0.0.1:" in text and "/v1/chat/completions" in text


def test_a_web_page_answering_a_streamed_call_is_named_as_one() -> None:
    err = _call("http://127.0.0.1:PORT/v1", stream=True, handler=_html_page)
    text = str(err)
    assert "the reply is a web page, not an event stream: 'It works!'" in text, text
    assert "POST http://127.0.0.1:" in text and "/v1/chat/completions" in text and "finish_reason" not in text


#: What a static web server (python -m http.server) answers a POST: a 501 as a multi-line HTML page.
_static_501 = b"""<!DOCTYPE HTML>
<html lang="en">
    <head>
        <meta charset="utf-8">
        <title>Error response</title>
    </head>
    <body>
        <h1>Error response</h1>
        <p>Error code: 501</p>
        <p>Message: Unsupported method (&#x27;POST&#x27;).</p>
    </body>
</html>
"""


_static_server = _answers(
    b"HTTP/1.0 501 Unsupported method\r\ncontent-type: text/html;charset=utf-8\r\ncontent-length: %d\r\n\r\n%s"
    % (len(_static_501), _static_501)
)


def test_a_web_pages_error_is_one_line_of_its_text_with_the_status_and_url() -> None:
    err = _call("http://127.0.0.1:PORT/v1", stream=False, handler=_static_server)
    text = err.message
    assert "\n" not in text and "<" not in text, text  # one line of the page's words, not its markup
    assert "Error code: 501 Message: Unsupported method ('POST')." in text
    assert "(HTTP 501 from POST http://127.0.0.1:" in text and "/v1/chat/completions)" in text


_garbled_stream = _answers(
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 17\r\n\r\ndata: {not json\n\n"
)


def test_a_garbled_stream_names_the_url() -> None:
    err = _call("http://127.0.0.1:PORT/v1", stream=True, handler=_garbled_stream)
    text = str(err)
    assert "malformed stream data: '{not json'" in text
    assert "(from POST http://127.0.0.1:" in text and "/v1/chat/completions)" in text


#: What a plain-HTTP server answers to a TLS hello: a 400 in clear text, which the client cannot read as TLS.
_speaks_plain_http = _answers(
    b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n", reads_request=False
)


@pytest.mark.parametrize("stream", [False, True], ids=["buffered", "streamed"])
def test_https_to_a_plain_http_server_says_to_use_http(stream: bool) -> None:
    err = _call("https://127.0.0.1:PORT/v1", stream=stream, handler=_speaks_plain_http)
    text = str(err)
    assert err.kind == "network"
    assert "does not speak TLS" in text and "http://" in text  # the fix, in the user's terms
    assert "calling POST https://127.0.0.1:" in text and "/v1/chat/completions" in text
    # OpenSSL's reason code and source line are not the user's words
    assert "WRONG_VERSION_NUMBER" not in text and "_ssl.c" not in text, text


def test_the_url_in_a_message_never_carries_credentials_or_a_query(monkeypatch: pytest.MonkeyPatch) -> None:
    err = _call("http://user:url-secret@127.0.0.1:PORT/wrong/v1", stream=False, handler=_not_found)
    text = str(err)
    assert "/wrong/v1/chat/completions" in text
    assert "url-secret" not in text and "user:" not in text
    monkeypatch.setenv("LOCAL_KEY", "sk-header-secret")
    err = _call("http://127.0.0.1:PORT/wrong/v1", stream=True, handler=_not_found, api_key_env="LOCAL_KEY")
    assert "/wrong/v1/chat/completions" in str(err) and "sk-header-secret" not in str(err)
    port = _refused_port()
    err = _call(f"http://127.0.0.1:{port}/v1?api-key=query-secret", stream=False)
    assert "query-secret" not in str(err) and f"127.0.0.1:{port}/v1" in str(err)


def test_a_host_name_that_does_not_resolve_is_named(monkeypatch) -> None:
    """The resolver's failure (the OS's getaddrinfo, stood in for: tests reach no DNS server) in the user's words."""
    real = socket.getaddrinfo

    def resolver(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "models.example.invalid":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    err = _call("http://models.example.invalid:8080/v1", stream=False)
    text = str(err)
    assert err.kind == "network" and "the host name models.example.invalid could not be resolved" in text, text
    assert "calling POST http://models.example.invalid:8080/v1/chat/completions" in text
    assert not [word for word in LIBRARY_WORDS if word in text], text
