"""Secret values this process resolved (API keys, `env()` values) → any text or value with each one masked.

The catalogue (src/plait/core/redact.py) knows secret *formats*; a key of another format,
echoed back by a provider's error body or an MCP server, would pass it. So the
places that read a secret from the environment `remember` its value, and every
sink masks what it writes: provider errors where they are created, events as
they are emitted, journal rows as they are encoded, span statuses, tool results
before the model reads them. A value is masked in every run of the process,
not only the one that read it: hiding too much is safe, and one process may
run several specs.

A value shorter than MIN_LENGTH is not remembered: masking `dev` or `1` in
every output would mangle ordinary text, and no real key is that short.
"""

from __future__ import annotations

import json
import threading
from typing import Any
from urllib.parse import quote

__all__ = ["MIN_LENGTH", "REDACTED", "forget_all", "known", "mask", "mask_data", "mask_json", "remember"]

REDACTED = "<redacted>"
MIN_LENGTH = 8

_lock = threading.Lock()
#: Every form a remembered value is searched for, longest first (so a value containing another is masked whole).
#: Replaced, never mutated: readers take the tuple without the lock.
_forms: tuple[str, ...] = ()
#: The forms as they appear inside a JSON string (escaped), for masking encoded rows.
_json_forms: tuple[str, ...] = ()


def remember(value: str | None) -> None:
    """Mask `value` from now on, in every sink of this process."""
    global _forms, _json_forms
    if not value or len(value.strip()) < MIN_LENGTH:
        return
    value = value.strip()
    # As written, URL-encoded (a key in a query string or form body a server echoes).
    new = {value, quote(value, safe="")}
    with _lock:
        if new <= set(_forms):
            return
        forms = sorted(set(_forms) | new, key=len, reverse=True)
        _forms = tuple(forms)
        _json_forms = tuple(sorted({json.dumps(f, ensure_ascii=False)[1:-1] for f in forms}, key=len, reverse=True))


def known() -> bool:
    return bool(_forms)


def forget_all() -> None:
    """Tests only: start again from no remembered values."""
    global _forms, _json_forms
    with _lock:
        _forms = _json_forms = ()


def mask(text: str) -> str:
    """`text` with every remembered value replaced by "<redacted>" (a C substring search per value)."""
    for form in _forms:
        if form in text:
            text = text.replace(form, REDACTED)
    return text


def mask_json(text: str) -> str:
    """Encoded JSON text with every remembered value masked where it stands inside a string (still valid JSON)."""
    for form in _json_forms:
        if form in text:
            text = text.replace(form, REDACTED)
    return text


def mask_data(value: Any) -> Any:
    """A JSON-like value (dicts, lists, tuples, strings; keys too) with every remembered value masked; the same
    object when nothing changed."""
    if not _forms:
        return value
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        out = {mask_data(k): mask_data(v) for k, v in value.items()}
        return value if all(k in value and out[k] is value[k] for k in out) and len(out) == len(value) else out
    if isinstance(value, list | tuple):
        items = [mask_data(v) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return items if isinstance(value, list) else tuple(items)
    return value
