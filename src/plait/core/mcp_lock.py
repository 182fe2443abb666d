"""`plait.lock` text ⇄ the tools each declared MCP server offers (and the models section), and a declaration's fingerprint.

One lock file holds both: `servers` (this module's, below) and `models`, the
catalogue entries `plait models lock` writes for the models a spec uses
(`LockedModel`, its entry a `plait.core.catalogue.ModelInfo`). Each command
rewrites its own section and keeps the other as read.

`plait mcp lock` starts each server once and writes what it offers here;
`plait check` reads it so MCP tools are checked offline, with nothing started;
`plait run` compares the live tool list with it. The file sits beside the spec
that declares the servers (one lock per folder, servers keyed by name), is
JSON with sorted keys so it diffs well in review, and never holds a secret:
the fingerprint covers the command, the URL, the environment (each
variable's name and where its value comes from: an environment variable's
*name*, or the literal written in the spec) and the header *names*, never a
value read from the environment nor a header's value.

A lock entry is stale when the declaration's fingerprint no longer matches:
the command, URL or environment changed, so the server may offer other tools.
The allow-list (`tools = [...]`), `timeout` and `approval` are not part of it:
the lock records every tool the server offers and the spec picks from those.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from .catalogue import ModelInfo
from .record import Record, record

__all__ = [
    "LOCK_FILE",
    "LOCK_VERSION",
    "Lock",
    "LockError",
    "LockedModel",
    "LockedServer",
    "LockedTool",
    "dumps",
    "fingerprint",
    "loads",
]

LOCK_FILE = "plait.lock"
LOCK_VERSION = 1


class LockError(ValueError):
    """A lock file that is not one this plait can read; the message says what is wrong and where."""


# Records, not dataclasses: a locked `plait check` reads these, and `@dataclass` would cost it ~1.5 ms a class.
@record
class LockedTool(Record):
    name: str
    description: str = ""
    #: The tool's JSON Schema for its arguments, as the server sent it.
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    #: The tool's result schema (MCP `outputSchema`), when the server declares one.
    output_schema: dict[str, Any] | None = None
    #: The server's hints about the tool (`idempotentHint`, `readOnlyHint`, `destructiveHint`, ...), as sent.
    annotations: dict[str, Any] | None = None


@record
class LockedServer(Record):
    #: The declaration's name in the spec (`mcp files { ... }` → "files").
    name: str
    fingerprint: str
    #: What the server said it is in its `initialize` reply (`serverInfo`).
    server_name: str = ""
    server_version: str = ""
    protocol_version: str = ""
    tools: tuple[LockedTool, ...] = ()

    def tool(self, name: str) -> LockedTool | None:
        return next((t for t in self.tools if t.name == name), None)


@record
class LockedModel(Record):
    #: `provider/model-id` as the spec writes it (`openai/gpt-4o-mini`).
    ref: str
    #: Its catalogue entry; None when the catalogue has no such model.
    info: ModelInfo | None = None
    #: For an unknown model: the catalogue's nearest ids of that provider, nearest first (the did-you-mean).
    near: tuple[str, ...] = ()


@record(kw_only=False)
class Lock(Record):
    servers: Mapping[str, LockedServer] = field(default_factory=dict)
    #: `provider/model-id` → its entry.
    models: Mapping[str, LockedModel] = field(default_factory=dict)

    def merged(self, *servers: LockedServer) -> Lock:
        """This lock with `servers` added or replaced; the others are kept (another spec in the folder may use them)."""
        return Lock(servers={**self.servers, **{s.name: s for s in servers}}, models=self.models)

    def with_models(self, *models: LockedModel) -> Lock:
        """This lock with `models` added or replaced; the other entries are kept, as `merged` keeps servers."""
        return Lock(servers=self.servers, models={**self.models, **{m.ref: m for m in models}})


def fingerprint(
    *,
    command: Sequence[str] | None,
    url: str | None,
    env: Mapping[str, str | Mapping[str, str]] | None = None,
    headers: Mapping[str, object] | None = None,
) -> str:
    """The identity of a server declaration: what decides which server starts, never a secret's value.

    `env` is the graph's shape (`McpNode.env`): a variable the server sees → `{"env": "NAME"}` (read
    from that environment variable; the name counts) or a literal string (written in the spec, so it
    counts too; P501 keeps secrets out of it). `headers` contributes its names only, since a header's
    value may be a token. plait check and `plait mcp lock` call this with the same McpNode values.
    """
    identity = {
        "command": list(command) if command is not None else None,
        "url": url,
        "env": {k: dict(v) if isinstance(v, Mapping) else v for k, v in sorted((env or {}).items())},
        "headers": sorted(k.lower() for k in (headers or {})),
    }
    import hashlib  # only for a spec with MCP servers: a locked check of models alone never hashes

    digest = hashlib.sha256(json.dumps(identity, sort_keys=True, separators=(",", ":")).encode())
    return "sha256:" + digest.hexdigest()


def dumps(lock: Lock) -> str:
    """The lock as the text `plait mcp lock` writes: stable, sorted, one trailing newline."""
    servers: dict[str, Any] = {}
    for name in sorted(lock.servers):
        s = lock.servers[name]
        tools = []
        for t in sorted(s.tools, key=lambda t: t.name):
            entry: dict[str, Any] = {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            if t.output_schema is not None:
                entry["output_schema"] = t.output_schema
            if t.annotations is not None:
                entry["annotations"] = t.annotations
            tools.append(entry)
        servers[name] = {
            "fingerprint": s.fingerprint,
            "server": {"name": s.server_name, "version": s.server_version},
            "protocol_version": s.protocol_version,
            "tools": tools,
        }
    data: dict[str, Any] = {"version": LOCK_VERSION, "servers": servers}
    if lock.models:
        data["models"] = {ref: _model_json(lock.models[ref]) for ref in sorted(lock.models)}
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _model_json(model: LockedModel) -> dict[str, Any]:
    if model.info is None:
        return {"unknown": True, "near": list(model.near)}
    entry = model.info.to_json()
    for key in ("provider", "model_id", "source"):  # the key says the first two; a lock entry's source is the lock
        del entry[key]
    return entry


def loads(text: str) -> Lock:
    """Lock text → a Lock; LockError naming the first thing wrong (the compiler turns it into a diagnostic)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise LockError(f"is not JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise LockError("is nested too deeply to read") from None
    if not isinstance(data, dict):
        raise LockError("is not a JSON object")
    version = data.get("version")
    if version != LOCK_VERSION:
        raise LockError(f"has version {version!r}; this plait reads version {LOCK_VERSION}")
    raw = data.get("servers")
    if not isinstance(raw, dict):
        raise LockError("has no `servers` object")
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise LockError("has a `models` that is not an object")
    return Lock(
        {name: _server(name, entry) for name, entry in raw.items()},
        {ref: _model(ref, entry) for ref, entry in models.items()},
    )


def _model(ref: str, entry: object) -> LockedModel:
    where = f"models.{ref}"
    provider, sep, model_id = ref.partition("/")
    if not sep or not isinstance(entry, dict):
        raise LockError(f"`{where}` needs a `provider/model-id` key and an object")
    if entry.get("unknown") is True:
        near = entry.get("near", [])
        if not isinstance(near, list) or not all(isinstance(n, str) for n in near):
            raise LockError(f"`{where}.near` is not a list of strings")
        return LockedModel(ref=ref, near=tuple(near))
    try:
        info = ModelInfo.from_json({**entry, "provider": provider, "model_id": model_id, "source": "lock"})
    except ValueError as exc:
        raise LockError(f"`{where}`: {exc}") from None
    return LockedModel(ref=ref, info=info)


def _server(name: str, entry: object) -> LockedServer:
    where = f"servers.{name}"
    if not isinstance(entry, dict):
        raise LockError(f"`{where}` is not an object")
    info = entry.get("server") or {}
    tools = entry.get("tools")
    if not isinstance(info, dict) or not isinstance(tools, list):
        raise LockError(f"`{where}` needs a `server` object and a `tools` list")
    fp = entry.get("fingerprint")
    if not isinstance(fp, str):
        raise LockError(f"`{where}.fingerprint` is not a string")
    return LockedServer(
        name=name,
        fingerprint=fp,
        server_name=str(info.get("name", "")),
        server_version=str(info.get("version", "")),
        protocol_version=str(entry.get("protocol_version", "")),
        tools=tuple(_tool(f"{where}.tools[{i}]", t) for i, t in enumerate(tools)),
    )


def _tool(where: str, entry: object) -> LockedTool:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise LockError(f"`{where}` needs a string `name`")
    schema = entry.get("input_schema", {"type": "object"})
    output = entry.get("output_schema")
    if not isinstance(schema, dict) or not (output is None or isinstance(output, dict)):
        raise LockError(f"`{where}`'s schemas must be JSON objects")
    annotations = entry.get("annotations")
    if not (annotations is None or isinstance(annotations, dict)):
        raise LockError(f"`{where}.annotations` must be a JSON object")
    return LockedTool(
        name=entry["name"],
        description=str(entry.get("description", "")),
        input_schema=schema,
        output_schema=output,
        annotations=annotations,
    )
