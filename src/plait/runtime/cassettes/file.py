"""A cassette file ⇄ its recordings: the versioned JSON format `plait run --record` writes and replay reads.

```json
{"format": "plait-cassette", "version": 1, "spec": "triage.plait", "entry": "main",
 "interactions": [{"key": "<32 hex>", "model": "fast", "agent": "classify", "path": "main/classify",
                   "step": 1, "request": {...canonical request...},
                   "reply": {"message": {...}, "finish_reason": "stop", "raw_finish_reason": "stop",
                             "usage": [21, 23], "model": "gpt-4o-mini", "response_id": null}}]}
```

`tool_results` (only when recorded with `--record-tools`) lists each tool
call's result, keyed by the tool and its arguments (cassettes/tools.py).
An interaction holds a `reply` or an `error` (`{"kind", "message", "status"}`,
a failure a fallback answered). `request` is the canonical request
(cassettes/request.py) a miss is compared with; a cassette exported from a
run's journal has none (`null`). The file is written whole to a temporary
file and renamed, and every text in it passes the secret masks (values the
process read, and the catalogue of credential formats) on the way out.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plait.core.redact import redact_text

from ..secret_values import mask_json

__all__ = ["CASSETTE_FORMAT", "COMPARABLE", "CASSETTE_VERSION", "Cassette", "CassetteError", "Interaction"]

CASSETTE_FORMAT = "plait-cassette"
#: A recording's `request` exported from a journal: the comparable form store/requests.py keeps, not the canonical one.
COMPARABLE = "comparable"
CASSETTE_VERSION = 1


class CassetteError(Exception):
    """A cassette that cannot be read or written; the message is one line for the user."""


@dataclass(slots=True)
class Interaction:
    key: str
    model: str
    agent: str | None = None
    path: str = ""
    step: int = 0
    request: dict[str, Any] | None = None
    reply: dict[str, Any] | None = None
    error: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "model": self.model,
            "agent": self.agent,
            "path": self.path,
            "step": self.step,
            "request": self.request,
        }
        if self.error is not None:
            out["error"] = self.error
        else:
            out["reply"] = self.reply
        return out

    @property
    def where(self) -> str:
        who = f"`{self.agent}` " if self.agent else ""
        return f"{who}at {self.path or '?'} step {self.step}"


@dataclass(slots=True)
class Cassette:
    interactions: list[Interaction] = field(default_factory=list)
    spec: str | None = None
    entry: str | None = None
    #: Where it was read from, for messages.
    source: str | None = None
    #: Tool results, when recorded (`--record-tools`): {"key", "tool", "arguments", "outcome"} (cassettes/tools.py).
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    _by_key: dict[str, list[Interaction]] | None = None

    @property
    def by_key(self) -> dict[str, list[Interaction]]:
        """Recordings by request key, in recorded order (the same request asked twice is served in turn)."""
        if self._by_key is None:
            index: dict[str, list[Interaction]] = {}
            for it in self.interactions:
                index.setdefault(it.key, []).append(it)
            self._by_key = index
        return self._by_key

    def to_json(self) -> dict[str, Any]:
        return {
            "format": CASSETTE_FORMAT,
            "version": CASSETTE_VERSION,
            "spec": self.spec,
            "entry": self.entry,
            "interactions": [it.to_json() for it in self.interactions],
            **({"tool_results": list(self.tool_results)} if self.tool_results else {}),
        }

    def dumps(self) -> str:
        document = self.to_json()
        for row in document["interactions"]:
            for part in ("request", "reply", "error"):
                if row.get(part) is not None:
                    row[part] = _scrubbed(row[part])
        if "tool_results" in document:
            document["tool_results"] = [
                {**row, "arguments": _scrubbed(row["arguments"]), "outcome": _scrubbed(row["outcome"])}
                for row in document["tool_results"]
            ]
        return json.dumps(document, indent=1, ensure_ascii=False, default=str) + "\n"

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the cassette whole or not at all (a temporary file renamed over the target)."""
        target = Path(path)
        text = self.dumps()
        try:
            folder = target.parent if str(target.parent) else Path(".")
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(text)
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise CassetteError(f"cannot write cassette {target}: {exc.strerror or exc}") from None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "Cassette":
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise CassetteError(f"cannot read cassette {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise CassetteError(f"cassette {path} is not UTF-8 text") from None
        try:
            document = json.loads(text)
        except ValueError as exc:
            raise CassetteError(f"cassette {path} is not JSON: {exc}") from None
        return cls.from_json(document, source=str(path))

    @classmethod
    def from_json(cls, document: Any, *, source: str | None = None) -> "Cassette":
        name = source or "the cassette"
        if not isinstance(document, dict) or document.get("format") != CASSETTE_FORMAT:
            raise CassetteError(f'{name} is not a plait cassette (no "format": "{CASSETTE_FORMAT}")')
        version = document.get("version")
        if version != CASSETTE_VERSION:
            raise CassetteError(f"{name} has version {version!r}; this plait reads version {CASSETTE_VERSION}")
        rows = document.get("interactions")
        if not isinstance(rows, list):
            raise CassetteError(f"{name} has no `interactions` list")
        interactions = []
        for n, row in enumerate(rows, 1):
            if (
                not isinstance(row, dict)
                or not isinstance(row.get("key"), str)
                or not isinstance(row.get("model"), str)
                or not (isinstance(row.get("reply"), dict) or isinstance(row.get("error"), dict))
                or (isinstance(row.get("reply"), dict) and not isinstance(row["reply"].get("message"), dict))
            ):
                raise CassetteError(f"{name}: interaction {n} is not a recording (key, model, reply or error)")
            request = row.get("request")
            interactions.append(
                Interaction(
                    row["key"],
                    row["model"],
                    row.get("agent") if isinstance(row.get("agent"), str) else None,
                    str(row.get("path") or ""),
                    row["step"] if type(row.get("step")) is int else 0,
                    request if isinstance(request, dict) else None,
                    row.get("reply") if isinstance(row.get("reply"), dict) else None,
                    row.get("error") if isinstance(row.get("error"), dict) else None,
                )
            )
        tools = document.get("tool_results", [])
        if not isinstance(tools, list) or not all(
            isinstance(r, dict) and isinstance(r.get("key"), str) and isinstance(r.get("outcome"), dict) for r in tools
        ):
            raise CassetteError(f"{name}: `tool_results` is not a list of recorded tool results")
        spec, entry = document.get("spec"), document.get("entry")
        return cls(
            interactions,
            spec if isinstance(spec, str) else None,
            entry if isinstance(entry, str) else None,
            source,
            tools,
        )


def _scrubbed(value: Any) -> Any:
    """Secrets never enter a cassette: values this process read, then anything shaped like a credential. (The keys
    are hashes, left alone: random hex is what the credential catalogue looks for.)"""
    text = json.dumps(value, ensure_ascii=False, default=str)
    cleaned = redact_text(mask_json(text))
    return value if cleaned == text else json.loads(cleaned)
