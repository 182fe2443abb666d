"""Provider failures (HTTP status, error body, in-band stream error, httpx exception) → ProviderError.

One mapping for every provider: the wire vocabularies overlap enough (OpenAI
`code`, Anthropic `error.type`, Google `error.status` and `details[].reason`,
OpenAI-compatible servers copying any of these) that a single table of tokens
keeps the decision in one place. The provider's own message is kept verbatim.
"""

from __future__ import annotations

import html
import json
import re
import time
from email.utils import parsedate_to_datetime
from typing import Any, Mapping

import httpx

from .base import ProviderError

__all__ = [
    "STATUS_KINDS",
    "TOKEN_KINDS",
    "from_exception",
    "from_payload",
    "from_response",
    "page_text",
    "retry_after",
    "shown_url",
    "status_kind",
]

#: Fallback by HTTP status when the body names nothing more specific.
STATUS_KINDS: dict[int, str] = {
    400: "invalid_request",
    401: "auth",
    402: "quota_exceeded",
    403: "auth",
    404: "model_not_found",
    408: "timeout",
    409: "server_error",
    413: "invalid_request",
    422: "invalid_request",
    429: "rate_limit",
    504: "timeout",
}

#: Error `type` / `code` / `status` / `details[].reason` tokens, lower-cased.
#: Checked before the status, since 400 and 429 each cover several kinds.
TOKEN_KINDS: dict[str, str] = {
    # quota and billing: never retried, another account's model may still work
    "insufficient_quota": "quota_exceeded",
    "billing_error": "quota_exceeded",
    "billing_hard_limit_reached": "quota_exceeded",
    # auth
    "invalid_api_key": "auth",
    "authentication_error": "auth",
    "permission_error": "auth",
    "permission_denied": "auth",
    "unauthenticated": "auth",
    "api_key_invalid": "auth",
    # model
    "model_not_found": "model_not_found",
    "not_found_error": "model_not_found",
    "not_found": "model_not_found",
    # context
    "context_length_exceeded": "context_length",
    "exceed_context_size_error": "context_length",  # llama.cpp server
    "string_above_max_length": "context_length",
    # content policy
    "content_filter": "content_filter",
    "content_policy_violation": "content_filter",
    "invalid_prompt": "content_filter",
    # parameters a different model may accept
    "unsupported_value": "unsupported",
    "unsupported_parameter": "unsupported",
    # transient
    "rate_limit_exceeded": "rate_limit",
    "rate_limit_error": "rate_limit",
    "resource_exhausted": "rate_limit",
    "overloaded_error": "server_error",
    "api_error": "server_error",
    "server_error": "server_error",
    "internal": "server_error",
    "unavailable": "server_error",
    "timeout_error": "timeout",
    "timeout": "timeout",
    "deadline_exceeded": "timeout",
    # plain invalid requests (lowest priority among tokens)
    "invalid_request_error": "invalid_request",
    "invalid_argument": "invalid_request",
    "invalid_value": "invalid_request",
}

#: Context overflow has no code of its own on Anthropic, Gemini and several
#: compatible servers, so the message decides (on client-error statuses only).
_CONTEXT_MESSAGES = re.compile(
    r"prompt is too long|maximum context length|context[ _]length|context window"
    r"|exceeds the maximum number of tokens|too many tokens|reduce the length",
    re.IGNORECASE,
)
_TRY_AGAIN = re.compile(r"try again in (\d+(?:\.\d+)?)\s*(ms|s)\b", re.IGNORECASE)
_GOOGLE_DELAY = re.compile(r"^(\d+(?:\.\d+)?)s$")


def from_response(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    provider: str | None = None,
    model: str | None = None,
    url: str | None = None,
) -> ProviderError:
    """A non-2xx HTTP response. Google sends these as `text/event-stream` with a JSON body; that parses too.

    With `url` (as `shown_url` gives it), a body that is not an API's error (a plain `File Not
    Found`, a proxy's HTML page, `{"detail": ...}`) gets the status and the URL added: such a
    reply comes from the wrong server or path, not the API. So does a 404 that does not speak
    of a model (llama-server's JSON `File Not Found` for an unknown path): it is the path that
    is wrong, and only the URL shows it. An API's own error is otherwise kept verbatim.
    """
    try:
        payload: Any = json.loads(body) if body else None
    except ValueError:
        payload = None
    if payload is None:
        text = page_text(body.decode("utf-8", "replace"))[:300]
        payload = {"error": {"message": text or f"HTTP {status}"}}
        from_api = False
    else:
        error = _error_object(payload)
        from_api = isinstance(error.get("message"), str) or bool(_tokens(error))
    err = from_payload(payload, status=status, headers=headers, provider=provider, model=model)
    if url is not None:
        _name_url(err, status, url, from_api)
    should = headers.get("x-should-retry")
    if should in ("true", "false"):
        err.should_retry = should == "true"  # type: ignore[attr-defined]
    return err


def from_payload(
    payload: Any,
    *,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    provider: str | None = None,
    model: str | None = None,
) -> ProviderError:
    """An error body or an in-band stream error event, in any provider's shape."""
    error = _error_object(payload)
    message = _message(error, payload, status)
    kind = _kind(error, message, status)
    delay = retry_after(headers or {}, error, message)
    if kind == "rate_limit" and _daily_quota(error):
        kind = "quota_exceeded"
    return ProviderError(kind, message, provider=provider, model=model, status=status, retry_after=delay, raw=payload)


def from_exception(
    exc: BaseException, *, provider: str | None = None, model: str | None = None, url: str | None = None
) -> ProviderError:
    """An httpx transport failure. Never carries the request, so headers (and keys) stay out.

    `url` (as `shown_url` gives it) is named in the message: "refused" means little without where.
    """
    kind = "timeout" if isinstance(exc, (httpx.TimeoutException, TimeoutError)) else "network"
    text = str(exc) or type(exc).__name__
    if url is not None:
        text = f"{text} (calling {url})"
    return ProviderError(kind, text, provider=provider, model=model)


def shown_url(method: str, url: str) -> str:
    """`POST http://host:port/path` for messages: no user name, password, query or fragment, where secrets go."""
    try:
        parsed = httpx.URL(url)
        clean = parsed.copy_with(username=None, password=None, query=None, fragment=None)
    except (httpx.InvalidURL, TypeError, ValueError):
        return f"{method} (an invalid URL)"
    return f"{method} {clean}"


#: An HTML page's markup: a tag, or a script's or style's whole element (their text is not the page's words).
_MARKUP = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]*>", re.IGNORECASE | re.DOTALL)


def page_text(text: str) -> str:
    """A reply that is not the API's, as one line of its words: a proxy's or web server's HTML error page loses
    its markup, and every body its line breaks, so the message stays one line."""
    if _MARKUP.search(text):
        text = html.unescape(_MARKUP.sub(" ", text))
    return " ".join(text.split())


def _name_url(err: ProviderError, status: int, url: str, from_api: bool) -> None:
    if status == 404 and "model" not in err.message.lower():
        _reword(err, f"{err.message} (HTTP 404 from {url}: no API answers at that path; check base_url)")
    elif not from_api:
        suffix = f" from {url}" if err.message.startswith(f"HTTP {status}") else f" (HTTP {status} from {url})"
        _reword(err, err.message + suffix)


def _reword(err: ProviderError, message: str) -> None:
    err.message = message
    err.args = (message,)


def retry_after(headers: Mapping[str, str], error: Mapping[str, Any] | None = None, message: str = "") -> float | None:
    """Seconds the provider asked us to wait: headers first, then Google's RetryInfo, then OpenAI's message text."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value:
        try:
            return float(value)
        except ValueError:
            try:
                return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
            except (TypeError, ValueError):
                pass
    for detail in (error or {}).get("details") or ():
        if isinstance(detail, dict) and isinstance(detail.get("retryDelay"), str):
            found = _GOOGLE_DELAY.match(detail["retryDelay"])
            if found:
                return float(found.group(1))
    found = _TRY_AGAIN.search(message)
    if found:
        amount = float(found.group(1))
        return amount / 1000.0 if found.group(2).lower() == "ms" else amount
    return None


def _error_object(payload: Any) -> dict[str, Any]:
    # OpenAI/Anthropic/Google nest under "error"; vLLM puts fields at the top; LM Studio sends a string.
    if isinstance(payload, dict):
        inner = payload.get("error")
        if isinstance(inner, dict):
            return inner
        if isinstance(inner, str):
            return {"message": inner}
        return payload
    if isinstance(payload, list) and payload:
        return _error_object(payload[0])
    return {}


def _message(error: Mapping[str, Any], payload: Any, status: int | None) -> str:
    message = error.get("message")
    if isinstance(message, str) and message:
        return message
    if isinstance(payload, dict) and isinstance(payload.get("message"), str):
        return payload["message"]
    return f"HTTP {status}" if status else "provider error"


def _tokens(error: Mapping[str, Any]) -> list[str]:
    out = []
    for key in ("code", "type", "status"):
        value = error.get(key)
        if isinstance(value, str):
            out.append(value.lower())
    for detail in error.get("details") or ():
        if isinstance(detail, dict) and isinstance(detail.get("reason"), str):
            out.insert(0, detail["reason"].lower())
    return out


def _kind(error: Mapping[str, Any], message: str, status: int | None) -> str:
    kinds = [TOKEN_KINDS[t] for t in _tokens(error) if t in TOKEN_KINDS]
    specific = [k for k in kinds if k != "invalid_request"]
    if specific:
        return specific[0]
    if _CONTEXT_MESSAGES.search(message) and (status is None or status in (400, 413, 422)):
        return "context_length"
    if kinds:
        return kinds[0]
    if status is not None and status >= 400:
        return status_kind(status)
    return "server_error"


def status_kind(status: int) -> str:
    """What an HTTP error status means when the body names nothing more specific."""
    return STATUS_KINDS.get(status) or ("server_error" if status >= 500 else "invalid_request")


def _daily_quota(error: Mapping[str, Any]) -> bool:
    # Google's per-day quota is a 429 like any other; waiting seconds will not clear it.
    for detail in error.get("details") or ():
        for violation in (detail or {}).get("violations") or ():
            if "PerDay" in str(violation.get("quotaId", "")):
                return True
    return False
