"""An http tool's request (URL, headers, body, its limits) → the response text, sent only where it may go.

The model chooses an http tool's arguments, so it may aim the request anywhere the
URL template lets it. This module is the guard (LANGUAGE.md, `allow_private`):
- every hop's host is resolved once and each address checked: loopback, private,
  link-local (cloud metadata at 169.254.169.254), shared, reserved, multicast and
  other non-global addresses are refused unless the tool says `allow_private = true`;
- the connection goes to the checked address itself (the URL's host replaced by the
  IP; `Host` and TLS SNI keep the name, so the certificate is still verified against
  it), so a second DNS answer cannot swap in another address (DNS rebinding);
- redirects are followed by hand, at most MAX_REDIRECTS, each hop checked the same
  way; a hop to another origin (scheme, host or port) carries no credential
  header (by name, by a secret-looking value, or a secret value the run resolved);
- the body is read streamed and stops at `max_response` bytes.
A refusal is an `HttpToolError`, which the tool runner turns into an error result.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Any
from urllib.parse import urljoin, urlsplit

__all__ = [
    "DEFAULT_MAX_RESPONSE",
    "MAX_REDIRECTS",
    "HttpToolError",
    "address_problem",
    "carries_credentials",
    "fetch",
    "resolve_host",
]

DEFAULT_MAX_RESPONSE = 4 * 1024 * 1024
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: Sent to the first origin only, with any header whose name or value says it is a credential (carries_credentials).
_CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization", "x-api-key"})

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class HttpToolError(Exception):
    """A request the guard refused or a response it would not read; the message is the tool's error result."""


#: NAT64's well-known prefix (RFC 6052): the last 32 bits are the IPv4 address a translator connects to.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def _wrapped_ipv4(ip: IPAddress) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries and a router or translator may deliver to: IPv4-mapped
    (`::ffff:a.b.c.d`), 6to4 (`2002:AABB:CCDD::`), both ends of Teredo, NAT64 and IPv4-compatible (`::a.b.c.d`)."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return []
    out = [v4 for v4 in (ip.ipv4_mapped, ip.sixtofour) if v4 is not None]
    if ip.teredo is not None:
        out.extend(ip.teredo)
    if ip in _NAT64 or (int(ip) >> 32 == 0 and int(ip) > 1):
        out.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return out


def address_problem(ip: IPAddress) -> str | None:
    """Why a request may not go to `ip` without `allow_private`, or None for a public address.

    One classification decides, Python's `ipaddress` (its is_global / is_private follow IANA's special-purpose
    address registries), applied to the address and to every IPv4 address it wraps: `2002:a9fe:a9fe::` is
    6to4 for 169.254.169.254 and is refused as that address is. Deprecated site-local `fec0::/10` is not global.
    """
    for inner in _wrapped_ipv4(ip):
        problem = address_problem(inner)
        if problem is not None:
            return f"{problem} wrapped in {ip}"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address (cloud metadata lives there)"
    if ip.is_private or (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local):
        return "a private address"
    if ip.is_multicast or ip.is_unspecified or ip.is_reserved or not ip.is_global:
        return "not a public address"
    return None


def carries_credentials(name: str, value: str) -> bool:
    """Whether a request header must not follow a redirect to another origin: the usual credential headers, a
    name that says it holds one (`X-Auth-Token`, `Api-Key`, `Private-Token`), a value of a known secret format,
    or a secret value the run resolved."""
    from plait.core.redact import credential_key, find_secrets

    from .secret_values import mask

    return (
        name.lower() in _CREDENTIAL_HEADERS or credential_key(name) or bool(find_secrets(value)) or mask(value) != value
    )


async def resolve_host(host: str, port: int) -> list[IPAddress]:
    """Every address `host` resolves to (an IP literal is itself). Tests replace this to fake DNS."""
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise HttpToolError(f"cannot resolve host `{host}`: {exc.strerror or exc}") from None
    out: list[IPAddress] = []
    for _family, _type, _proto, _name, address in infos:
        ip = ipaddress.ip_address(str(address[0]).split("%", 1)[0])  # an IPv6 address may carry a %zone
        if ip not in out:
            out.append(ip)
    return out


async def _checked(url: str, allow_private: bool) -> tuple[Any, str, IPAddress]:
    """(the httpx URL, its host name, the one address to connect to) for a URL the tool may reach."""
    import httpx

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError) as exc:
        raise HttpToolError(f"invalid URL: {exc}") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise HttpToolError(f"only http and https URLs with a host can be fetched, not `{parsed.scheme}:`")
    host = parsed.host
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    addresses = await resolve_host(host, port)
    if not addresses:
        raise HttpToolError(f"host `{host}` has no address")
    if not allow_private:
        for ip in addresses:
            problem = address_problem(ip)
            if problem is not None:
                # Any non-public answer refuses the host: a name that also points inward is not trusted.
                raise HttpToolError(
                    f"refused: `{host}` resolves to {ip}, {problem}; set `allow_private = true` on the tool to reach it"
                )
    return parsed, host, addresses[0]


async def fetch(
    client: Any,
    method: str,
    url: str,
    headers: dict[str, str],
    content: str | bytes | None,
    *,
    allow_private: bool = False,
    max_response: int = DEFAULT_MAX_RESPONSE,
) -> tuple[int, str]:
    """(status, body text) of the final response; HttpToolError for a refusal, a redirect loop or a body too large.

    `client` is an httpx.AsyncClient that does not follow redirects itself.
    """
    origin = None
    for _hop in range(MAX_REDIRECTS + 1):
        parsed, host, ip = await _checked(url, allow_private)
        here = (parsed.scheme, host, parsed.port or (443 if parsed.scheme == "https" else 80))
        origin = origin or here
        if here != origin:
            # Left the origin (scheme, host or port): the credentials stay behind for the rest of the chain.
            headers = {k: v for k, v in headers.items() if not carries_credentials(k, v)}
        sent = dict(headers)
        # Pin the connection: the request goes to the checked IP, the name rides in Host and SNI.
        sent["Host"] = host if parsed.port is None else f"{host}:{parsed.port}"
        pinned = parsed.copy_with(host=str(ip))
        extensions = {"sni_hostname": host} if parsed.scheme == "https" else {}
        request = client.build_request(method, pinned, headers=sent, content=content, extensions=extensions)
        response = await client.send(request, stream=True)
        try:
            if response.status_code in _REDIRECTS and "location" in response.headers:
                location = response.headers["location"]
                url = urljoin(str(parsed), location)
                if response.status_code == 303 or (
                    response.status_code in (301, 302) and method not in ("GET", "HEAD")
                ):
                    method, content = "GET", None
                    headers = {k: v for k, v in headers.items() if k.lower() not in ("content-type", "content-length")}
                continue
            body = await _read(response, max_response)
            return response.status_code, body.decode(response.encoding or "utf-8", "replace")
        finally:
            await response.aclose()
    raise HttpToolError(f"too many redirects (more than {MAX_REDIRECTS}); last to {_shown(url)}")


async def _read(response: Any, limit: int) -> bytes:
    declared = response.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HttpToolError(f"response too large: {int(declared)} bytes is over max_response ({limit} bytes)")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise HttpToolError(f"response too large: over max_response ({limit} bytes); the rest was not read")
        chunks.append(chunk)
    return b"".join(chunks)


def _shown(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{parts.path}"[:200]
