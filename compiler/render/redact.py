"""Values that look like credentials → "<redacted>", for every output render and graph write.

The compiler rejects literal secrets, but a picture or JSON file travels
further than a spec (pull requests, wikis), so the writers check again.
Header *names* and env variable *names* are kept: they are what a reader needs.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["REDACTED", "looks_secret", "redact_graph_json", "redact_text"]

REDACTED = "<redacted>"

_TOKEN = re.compile(
    r"sk-[A-Za-z0-9_\-]{16,}"
    r"|(?:Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=\-]{8,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abpr]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{35}"
)
# A long run of token characters mixing upper case, lower case and digits: most other API keys
# (model ids and names are lower case). Only whole values, or whole quoted strings in source
# text, so a long name is never taken for one.
_OPAQUE = r"(?=[\w\-+/=]*[0-9])(?=[\w\-+/=]*[a-z])(?=[\w\-+/=]*[A-Z])[A-Za-z0-9_\-+/=]{32,}"
_OPAQUE_VALUE = re.compile(_OPAQUE + r"\Z")
_OPAQUE_QUOTED = re.compile(r'(?<=")' + _OPAQUE + r'(?=")')
_SECRET_KEY = re.compile(r"auth|key|token|secret|passw|cookie|credential", re.IGNORECASE)


def looks_secret(value: Any, key: str = "") -> bool:
    if not isinstance(value, str) or not value or "{{" in value:
        return False
    return bool(_TOKEN.search(value) or _OPAQUE_VALUE.match(value)) or bool(key and _SECRET_KEY.search(key))


def redact_text(text: str) -> str:
    """Free text (a spec's source) with every token-shaped run replaced."""
    return _OPAQUE_QUOTED.sub(REDACTED, _TOKEN.sub(REDACTED, text))


def _headers(headers: dict | None) -> dict | None:
    if not headers:
        return headers
    return {k: REDACTED if looks_secret(v, k) else v for k, v in headers.items()}


def _url(url: str) -> str:
    parts = urlsplit(url)
    if "@" in parts.netloc:
        user, _, host = parts.netloc.rpartition("@")
        name, colon, _password = user.partition(":")
        parts = parts._replace(netloc=f"{name}{colon}{REDACTED if colon else ''}@{host}")
        url = urlunsplit(parts)
    if not parts.query:
        return url
    query = [(k, REDACTED if looks_secret(v, k) else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    if all(v != REDACTED for _, v in query):
        return url
    return urlunsplit(parts._replace(query=urlencode(query, safe="{}<>")))


def redact_graph_json(data: dict) -> dict:
    """`AgentGraph.to_json()` with header values and URL query values that look secret redacted (in place)."""
    for node in data["nodes"]:
        attrs = node["attrs"]
        if node["kind"] == "model":
            attrs["headers"] = _headers(attrs.get("headers"))
        elif node["kind"] == "tool" and attrs["run"]["type"] == "http":
            attrs["run"]["headers"] = _headers(attrs["run"].get("headers"))
            attrs["run"]["url"] = _url(attrs["run"]["url"])
    return data
