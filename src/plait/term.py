"""Untrusted text → text safe to show at a terminal: control characters shown as escapes, never obeyed.

Model replies, tool results, run inputs, file contents and server errors can
hold terminal control sequences: OSC 52 writes the clipboard, OSC 8 hides a
link behind innocent text, OSC 0 retitles the window, CSI moves the cursor and
erases what was printed. Every terminal path of the CLI prints such text
through `clean`, which keeps newlines and tabs and writes every other control
character as a visible escape (`\\x1b`, `\\x9b`, `\\u202e`), so the sequence is
shown, not run. JSON output (`--json`, `--events`) stays exact: JSON escapes
the C0 controls itself, and `json_text` writes the rest (DEL, C1, bidi) as
`\\uXXXX` escapes, which decode to the same string.

Both also mask every secret value this process resolved (an API key read with
`env()`, an MCP server's `env()` or header value: src/plait/runtime/secret_values.py),
so a model reply or tool result that echoes one shows `<redacted>` at the
terminal and in `--json`, as the journal, `--events` and `trace` do.
"""

from __future__ import annotations

import sys
from types import ModuleType

__all__ = ["clean", "json_text"]

_SECRET_VALUES = "plait.runtime.secret_values"


def _secret_values() -> ModuleType | None:
    """The run's record of the secrets it resolved, when this process resolved any: a process that never loaded it
    (`check`, `render`, `fmt`, ...) has none to mask and does not pay for importing it."""
    module = sys.modules.get(_SECRET_VALUES)
    return module if module is not None and module.known() else None


#: C0 controls (but newline and tab), DEL, and the C1 controls (0x9b is a one-byte CSI, 0x9d an OSC).
_CONTROLS = [c for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if chr(c) not in "\n\t"]
#: Bidirectional overrides and isolates: they reorder what is shown ("Trojan Source"), so they are shown instead.
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
#: Lone surrogates (a non-UTF-8 file name a tool listed, a model's `\ud800`): no terminal encoding can write them,
#: so printing one raw would fail the command, not just show garbage. The journal keeps them exactly.
_SURROGATES = [*range(0xD800, 0xE000)]

_TABLE: dict[int, str] = {c: f"\\x{c:02x}" for c in _CONTROLS} | {c: f"\\u{c:04x}" for c in (*_BIDI, *_SURROGATES)}


def clean(text: object) -> str:
    """`text` (any value, as `str()` shows it) with every control character but newline and tab made visible and
    every resolved secret value masked."""
    shown = str(text)
    if (secrets := _secret_values()) is not None:
        shown = secrets.mask(shown)
    return shown.translate(_TABLE)


#: The same characters as JSON escapes: in serialized JSON they can only stand inside a string, where `\\u` is exact.
_JSON_TABLE: dict[int, str] = {c: f"\\u{c:04x}" for c in (*_CONTROLS, *_BIDI, *_SURROGATES)}


def json_text(serialized: str) -> str:
    """Serialized JSON (`ensure_ascii=False`) with the control characters JSON leaves raw escaped (the same value)
    and every resolved secret value masked inside its strings (still valid JSON)."""
    if (secrets := _secret_values()) is not None:
        serialized = secrets.mask_json(serialized)
    return serialized.translate(_JSON_TABLE)
