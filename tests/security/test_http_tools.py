"""http tools, whose arguments the model chooses → requests that reach only what the tool allows, bounded.

The guard refuses loopback, private, link-local (cloud metadata) and other non-public addresses by the resolved IP
(checked before any connection, so the refusals below send no traffic at all), re-checks every redirect, connects to
the address it checked, caps the body, and encodes each template value for where it stands. The servers here are
on loopback and reached with `allow_private`; nothing is ever sent to another address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
from plait.runtime import http_guard
from plait.core.kinds import ToolNode
from plait.runtime.tools import ToolRunner


class _Handler(BaseHTTPRequestHandler):
    hits: list[dict] = []

    def _send(self, status: int, body: bytes = b"", headers: dict | None = None, length: bool = True) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if length:
            self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        self.hits.append(
            {
                "path": self.path,
                "host": self.headers.get("host"),
                "body": body,
                "auth": self.headers.get("authorization"),
            }
        )
        path = urlsplit(self.path).path
        if path == "/big":
            self._send(200, b"x" * (5 * 1024 * 1024))
        elif path == "/stream":  # no content-length: the cap must hold while reading
            self._send(200, b"y" * (3 * 1024 * 1024), length=False)
        elif path == "/found":
            self._send(302, headers={"location": "/echo?from=redirect"})
        elif path == "/loop":
            self._send(302, headers={"location": "/loop"})
        elif path == "/to-metadata":
            self._send(302, headers={"location": "http://169.254.169.254/latest/meta-data/"})
        elif path == "/elsewhere":
            self._send(302, headers={"location": parse_qs(urlsplit(self.path).query)["to"][0]})
        elif path == "/see-other":
            self._send(303, headers={"location": "/echo"})
        else:
            self._send(200, json.dumps(self.hits[-1]).encode(), {"content-type": "application/json"})

    do_GET = do_POST = _handle

    def log_message(self, *args) -> None:
        pass


async def _names_to_loopback(host, port):
    """A fake DNS: names resolve to 127.0.0.1, IP literals stay themselves (so the guard still sees them)."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        return [ipaddress.ip_address("127.0.0.1")]


@pytest.fixture()
def server():
    _Handler.hits = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def _call(run: dict, arguments: dict | None = None):
    async def go():
        runner = ToolRunner()
        try:
            return await runner.execute(
                ToolNode(name="t", run={"type": "http", "method": "GET", **run}), arguments or {}, 10
            )
        finally:
            await runner.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/echo",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/",
        "http://[::1]:{port}/",
        "http://[::ffff:127.0.0.1]:{port}/",
        "http://0.0.0.0:{port}/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",
        "http://[2002:a9fe:a9fe::]/latest/meta-data/",
        "http://[2002:7f00:1::]:{port}/",
        "http://[fec0::1]/",
    ],
)
def test_non_public_addresses_are_refused_before_any_connection(url, server):
    outcome = _call({"url": url.format(port=server)})
    assert outcome.is_error and "refused" in outcome.content and "allow_private" in outcome.content
    assert _Handler.hits == []


def test_a_host_the_model_puts_in_the_url_is_checked_too(server):
    outcome = _call({"url": "http://{{host}}/latest/meta-data/"}, {"host": "169.254.169.254"})
    assert outcome.is_error and "link-local" in outcome.content


def test_a_name_resolving_to_loopback_is_refused(server, monkeypatch):
    monkeypatch.setattr(http_guard, "resolve_host", _names_to_loopback)
    outcome = _call({"url": f"http://internal.example:{server}/echo"})
    assert outcome.is_error and "internal.example" in outcome.content and "loopback" in outcome.content
    assert _Handler.hits == []


def test_the_connection_goes_to_the_checked_address_with_the_name_in_host(server, monkeypatch):
    """`pinned.example` does not exist: the request arrives only because the guard connects to the IP it checked."""
    calls = []

    async def fake(host, port):
        calls.append(host)
        return [ipaddress.ip_address("127.0.0.1")]

    monkeypatch.setattr(http_guard, "resolve_host", fake)
    outcome = _call({"url": f"http://pinned.example:{server}/echo", "allow_private": True})
    assert not outcome.is_error, outcome.content
    assert json.loads(outcome.content)["host"] == f"pinned.example:{server}"
    assert calls == ["pinned.example"]  # resolved once, for the check and the connection both


def test_allow_private_reaches_a_loopback_server(server):
    outcome = _call({"url": f"http://127.0.0.1:{server}/echo", "allow_private": True})
    assert not outcome.is_error and json.loads(outcome.content)["path"] == "/echo"


def test_redirects_are_followed_and_each_hop_checked(server):
    followed = _call({"url": f"http://127.0.0.1:{server}/found", "allow_private": True})
    assert not followed.is_error and json.loads(followed.content)["path"] == "/echo?from=redirect"
    looping = _call({"url": f"http://127.0.0.1:{server}/loop", "allow_private": True})
    assert looping.is_error and "too many redirects" in looping.content


def test_a_redirect_to_metadata_is_refused_without_allow_private(server, monkeypatch):
    """The first hop is a 'public' name (faked to the loopback server); the redirect aims at 169.254.169.254."""
    monkeypatch.setattr(http_guard, "resolve_host", _names_to_loopback)
    monkeypatch.setattr(
        http_guard,
        "address_problem",
        lambda ip: None if str(ip) == "127.0.0.1" else "a link-local address (cloud metadata lives there)",
    )
    outcome = _call({"url": f"http://public.example:{server}/to-metadata"})
    assert outcome.is_error and "169.254.169.254" in outcome.content
    assert [h["path"] for h in _Handler.hits] == ["/to-metadata"]


def test_see_other_turns_a_post_into_a_get_without_the_body(server):
    outcome = _call(
        {"url": f"http://127.0.0.1:{server}/see-other", "method": "POST", "body": "a=1", "allow_private": True}
    )
    assert not outcome.is_error and json.loads(outcome.content)["body"] == ""


def test_credentials_are_not_sent_on_to_another_host(server, monkeypatch):
    monkeypatch.setattr(http_guard, "resolve_host", _names_to_loopback)
    headers = {"Authorization": "Bearer t"}
    same = _call({"url": f"http://a.example:{server}/found", "headers": headers, "allow_private": True})
    assert json.loads(same.content)["auth"] == "Bearer t"
    other = _call(
        {
            "url": f"http://a.example:{server}/elsewhere?to=http://b.example:{server}/echo",
            "headers": headers,
            "allow_private": True,
        }
    )
    assert json.loads(other.content)["host"] == f"b.example:{server}" and json.loads(other.content)["auth"] is None


@pytest.mark.parametrize(
    ("path", "limit", "ok"),
    [("/big", None, False), ("/big", 6 * 1024 * 1024, True), ("/stream", 1024 * 1024, False), ("/stream", None, True)],
)
def test_the_body_is_capped_by_max_response(server, path, limit, ok):
    run = {"url": f"http://127.0.0.1:{server}{path}", "allow_private": True}
    if limit is not None:
        run["max_response"] = limit
    outcome = _call(run)
    if ok:
        assert not outcome.is_error
    else:
        assert outcome.is_error and "response too large" in outcome.content and len(outcome.content) < 500


def test_path_values_cannot_climb_and_query_values_cannot_add_parameters(server):
    outcome = _call(
        {"url": f"http://127.0.0.1:{server}/api/{{{{topic}}}}/x?q={{{{q}}}}", "allow_private": True},
        {"topic": "..", "q": "a&admin=true"},
    )
    seen = json.loads(outcome.content)["path"]
    assert seen.startswith("/api/%2E%2E/x?")
    assert parse_qs(urlsplit(seen).query) == {"q": ["a&admin=true"]}


def test_form_fields_and_json_strings_are_encoded(server):
    form = _call(
        {
            "url": f"http://127.0.0.1:{server}/echo",
            "method": "POST",
            "body": "name={{v}}&role=user",
            "allow_private": True,
        },
        {"v": "bob&role=admin"},
    )
    assert parse_qs(json.loads(form.content)["body"]) == {"name": ["bob&role=admin"], "role": ["user"]}
    body = _call(
        {
            "url": f"http://127.0.0.1:{server}/echo",
            "method": "POST",
            "body": '{"q": "{{v}}", "n": 1}',
            "allow_private": True,
        },
        {"v": 'x", "admin": true, "y": "'},
    )
    assert json.loads(json.loads(body.content)["body"]) == {"q": 'x", "admin": true, "y": "', "n": 1}


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=30))
def test_any_value_stays_in_its_segment_and_query_value(value):
    from plait.runtime.tools import _render_url

    url = _render_url("https://h.example/api/{{a}}/end?q={{a}}&k=1", {"a": value}, None)
    parts = urlsplit(url)
    assert parts.hostname == "h.example" and parts.path.startswith("/api/") and parts.path.endswith("/end")
    assert parts.path.count("/") == 3
    assert parse_qs(parts.query, keep_blank_values=True) == {"q": [value], "k": ["1"]} if value else True


@pytest.mark.parametrize(
    "ip",
    [
        "127.0.0.1",
        "169.254.169.254",
        "10.0.0.1",
        "::1",
        "fd00:ec2::254",
        "172.16.0.1",
        "0.0.0.0",
        "::ffff:10.0.0.1",
        "224.0.0.1",
        # 6to4 wrapping metadata, loopback, private and shared IPv4 (the router on the way unwraps them)
        "2002:a9fe:a9fe::",
        "2002:a9fe:a9fe:1::7",
        "2002:7f00:1::",
        "2002:c0a8:101::1",
        "2002:6440:1::",
        # deprecated site-local, Teredo whose client end is private, NAT64 and IPv4-compatible forms
        "fec0::1",
        "feff::1",
        "2001:0:4136:e378:8000:63bf:f5ff:fffe",
        "64:ff9b::a9fe:a9fe",
        "::a9fe:a9fe",
    ],
)
def test_address_problem_names_every_non_public_kind(ip):
    assert http_guard.address_problem(ipaddress.ip_address(ip)) is not None


def test_a_wrapped_address_is_named_as_what_it_wraps():
    problem = http_guard.address_problem(ipaddress.ip_address("2002:a9fe:a9fe::"))
    assert problem is not None and "link-local" in problem


@pytest.mark.parametrize("ip", ["93.184.216.34", "2606:4700:4700::1111", "1.1.1.1", "2002:808:808::1"])
def test_public_addresses_pass(ip):
    assert http_guard.address_problem(ipaddress.ip_address(ip)) is None


def test_the_spec_attributes_compile_into_the_tools_run(tmp_path):
    spec = tmp_path / "spec.plait"
    spec.write_text(
        'model m = "openai/gpt-4o-mini"\n'
        'tool t "T." {\n  params { q: string }\n  run = http(GET, "http://127.0.0.1/x?q={{q}}")\n'
        "  allow_private = true\n  max_response = 512KB\n}\n"
        'tool u "U." {\n  params { q: string }\n  run = http(GET, "https://x.example/?q={{q}}")\n}\n'
        'agent main "A." { model = m, tools = [t, u] }\n'
    )
    result = plait.compile(spec)
    assert result.ok, [str(d) for d in result.diagnostics]
    assert (
        result.graph.node("t").run["allow_private"] is True and result.graph.node("t").run["max_response"] == 512 * 1024
    )
    assert (
        result.graph.node("u").run["allow_private"] is False
        and result.graph.node("u").run["max_response"] == 4 * 1024 * 1024
    )
    bad = spec.read_text().replace("max_response = 512KB", 'max_response = "lots"')
    spec.write_text(bad)
    assert any(d.code.startswith("P2") for d in plait.compile(spec).errors)


# --- credentials on redirects: only to the origin (scheme, host, port) they were declared for -------------------


class _Headers(BaseHTTPRequestHandler):
    """`/go?to=URL` redirects there; any other path answers with the headers it received."""

    def do_GET(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        if urlsplit(self.path).path == "/go":
            self.send_response(302)
            self.send_header("location", query["to"][0])
            self.send_header("content-length", "0")
            self.end_headers()
            return
        body = json.dumps({k.lower(): v for k, v in self.headers.items()}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture()
def two_ports():
    servers = []
    for _ in range(2):
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Headers)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
    yield [s.server_address[1] for s in servers]
    for s in servers:
        s.shutdown()
        s.server_close()


#: A run-resolved value of no catalogue format (a key read by `env()`), under a header name that says nothing.
RESOLVED = "r3SolvedV4lue9Kq"
CREDENTIALS = {
    "Authorization": "Bearer abc.def",
    "Cookie": "session=1",
    "Proxy-Authorization": "Basic eDp5",
    "X-Auth-Token": "t0k",
    "Api-Key": "k3y",
    "Private-Token": "p4t",
    "X-Upstream": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",  # a catalogue format under a plain name
    "X-Tenant": RESOLVED,
}
PLAIN = {"Accept": "application/json", "X-Trace": "42"}


def _remember_resolved():
    from plait.runtime import secret_values

    secret_values.remember(RESOLVED)


def _received(outcome) -> dict:
    assert not outcome.is_error, outcome.content
    return json.loads(outcome.content)


def test_credentials_do_not_follow_a_redirect_to_another_port_of_the_same_host(two_ports):
    _remember_resolved()
    a, b = two_ports
    to = f"http://127.0.0.1:{b}/echo"
    got = _received(
        _call({"url": f"http://127.0.0.1:{a}/go?to={to}", "headers": {**CREDENTIALS, **PLAIN}, "allow_private": True})
    )
    assert got["host"] == f"127.0.0.1:{b}"
    assert not {k.lower() for k in CREDENTIALS} & set(got)
    assert {k.lower(): v for k, v in PLAIN.items()}.items() <= got.items()


def test_credentials_do_not_follow_a_redirect_to_another_host(two_ports, monkeypatch):
    _remember_resolved()
    monkeypatch.setattr(http_guard, "resolve_host", _names_to_loopback)
    a, _ = two_ports
    to = f"http://b.example:{a}/echo"
    got = _received(
        _call({"url": f"http://a.example:{a}/go?to={to}", "headers": {**CREDENTIALS, **PLAIN}, "allow_private": True})
    )
    assert got["host"] == f"b.example:{a}"
    assert not {k.lower() for k in CREDENTIALS} & set(got)
    assert got["x-trace"] == "42"


def test_credentials_do_not_come_back_when_the_chain_returns_to_the_origin(two_ports):
    a, b = two_ports
    back = f"http://127.0.0.1:{a}/echo"
    to = f"http://127.0.0.1:{b}/go?to={back}"
    got = _received(
        _call(
            {"url": f"http://127.0.0.1:{a}/go?to={to}", "headers": {"Authorization": "Bearer x"}, "allow_private": True}
        )
    )
    assert got["host"] == f"127.0.0.1:{a}" and "authorization" not in got


def test_credentials_follow_a_redirect_within_the_origin(two_ports):
    _remember_resolved()
    a, _ = two_ports
    got = _received(
        _call({"url": f"http://127.0.0.1:{a}/go?to=/echo", "headers": {**CREDENTIALS, **PLAIN}, "allow_private": True})
    )
    assert {k.lower() for k in CREDENTIALS} <= set(got)
    assert got["x-tenant"] == "<redacted>"  # sent; only what the tool hands the model is masked
