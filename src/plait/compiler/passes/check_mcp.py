"""MCP server declarations + the `plait.lock` beside them → lock state, offered tools, and every MCP tool name checked.

Runs after check_types (the attribute values are normalised) and before the
graph is built, which carries what this pass records in `ctx.values`:
`lock_state`, `fingerprint` and `offered`. Nothing is started: the tools a
server offers come from the lock `plait mcp lock` wrote (src/plait/core/mcp_lock.py),
read as a regular, size-capped file inside the project. Without a usable
lock the names the spec itself settles (the allow-list, `approval`, an
agent's `files.read_text_file`) are still checked against each other.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator
from urllib.parse import urlsplit

from plait.core.codes import declare, make
from plait.core.diagnostics import Fix, Label, Severity, did_you_mean
from plait.core.source import Span
from plait.dsl import ast

from ..context import CompileContext, Reference
from ..schema import Hints
from .check_types import folder
from ..draft import NOTHING

if TYPE_CHECKING:  # imported when a spec declares a server (plait check start-up)
    from plait.core.mcp_lock import Lock

# The codes this module raises; their documentation is explain/<code>.md beside it.
P331 = declare(
    "P331",
    "mcp-server-invalid",
    Severity.ERROR,
    "an mcp server without exactly one of `command` and `url`, or a bad one",
)
P332 = declare(
    "P332", "mcp-lock-missing", Severity.WARNING, "an mcp server with no `plait.lock` entry to check its tools against"
)
P333 = declare("P333", "mcp-lock-stale", Severity.WARNING, "an mcp server declared differently from when it was locked")
P334 = declare("P334", "mcp-lock-invalid", Severity.ERROR, "a `plait.lock` that cannot be read")
P335 = declare(
    "P335", "mcp-unknown-tool", Severity.ERROR, "a tool name the mcp server does not offer (per `plait.lock`)"
)
P336 = declare("P336", "mcp-tool-not-allowed", Severity.ERROR, "an mcp tool its server's `tools` allow-list leaves out")

__all__ = ["check_mcp", "tool_names"]


def check_mcp(ctx: CompileContext) -> None:
    servers = {name: decl for name, decl in ctx.decls.items() if isinstance(decl, ast.McpDecl)}
    if not servers:
        return
    from plait.core.mcp_lock import LOCK_FILE, fingerprint

    locks = _Locks(ctx, LOCK_FILE)
    hints = ctx.hints
    #: Server → every tool name its fresh lock entry lists (before the allow-list), None without one.
    #: Names are kept as dict keys throughout: in order for messages, and cheap to test against.
    locked: dict[str, dict[str, None] | None] = {}
    for name, decl in servers.items():
        values = ctx.draft(name)
        values["fingerprint"] = fingerprint(
            command=values.get("command"), url=values.get("url"), env=values.get("env"), headers=values.get("headers")
        )
        # A server that cannot be reached as written gets no lock warning: fixing it changes the fingerprint.
        offered = locks.offered(name, decl, values["fingerprint"]) if _shape(ctx, name, decl) else None
        _server_names(ctx, hints, name, decl, offered)
        allowed = values.get("tools")
        keep = dict.fromkeys(allowed) if allowed is not None else None
        values["offered"] = tuple(t for t in offered or () if keep is None or t["name"] in keep)
        locked[name] = dict.fromkeys(t["name"] for t in offered) if offered is not None else None
    _agent_members(ctx, hints, servers, locked)
    _collisions(ctx)


# --- the declaration's own shape -------------------------------------------------------


def _shape(ctx: CompileContext, name: str, decl: ast.McpDecl) -> bool:
    """Exactly one of `command` and `url`, an http(s) URL, `env` only for a started server, `headers` only for a URL;
    False when the server cannot be reached as written."""
    before = len(ctx.diagnostics)
    report = ctx.diagnostics.append
    body = decl.body
    command, url = body.get("command"), body.get("url")
    if command is None and url is None:
        report(
            make(
                "P331",
                f"mcp `{name}` has neither `command` nor `url`",
                decl.name.span,
                fix=Fix(
                    'add `command = ["prog", "arg"]` (a server plait starts) or `url = "https://..."` (one it calls)'
                ),
            )
        )
    elif command is not None and url is not None:
        report(
            make(
                "P331",
                f"mcp `{name}` sets both `command` and `url`",
                url.key.span,
                labels=[Label(command.key.span, "`command` set here")],
                notes=["a server is either started by plait (`command`) or reached over HTTP (`url`)"],
                fix=Fix("remove one of them"),
            )
        )
    value = ctx.values[name].get("url")
    if url is not None and isinstance(value, str) and not _http_url(value):
        # The URL itself is not echoed: it may carry a token.
        report(make("P331", f"`url` of mcp `{name}` is not an http:// or https:// URL", url.value.span))
    for key, needs, other in (("env", "command", "url"), ("headers", "url", "command")):
        entry = body.get(key)
        if entry is not None and body.get(needs) is None and body.get(other) is not None:
            what = "the environment of a server plait starts" if key == "env" else "sent to a server reached by `url`"
            report(
                make(
                    "P331",
                    f"`{key}` does nothing for mcp `{name}`: it is {what}",
                    entry.key.span,
                    labels=[Label(body.get(other).key.span, f"the server's `{other}`")],  # type: ignore[union-attr]
                    fix=Fix(f"remove `{key}`"),
                )
            )
    return len(ctx.diagnostics) == before


def _http_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


# --- the lock --------------------------------------------------------------------------


class _Locks:
    """Each folder's `plait.lock`, read at most once; every server's state recorded and, when not fresh, reported."""

    def __init__(self, ctx: CompileContext, file_name: str) -> None:
        self.ctx = ctx
        self.file_name = file_name
        #: folder → the Lock, or the reason it cannot be used (str), or None when there is no file.
        self.read: dict[Path, Lock | str | None] = {}
        self.reported: set[Path] = set()

    def offered(self, name: str, decl: ast.McpDecl, fp: str) -> list[dict[str, Any]] | None:
        """The tools the fresh lock entry lists (every one, in lock order), or None without a fresh entry."""
        import shlex  # only a spec with an MCP server pays for it

        values = self.ctx.values[name]
        where = folder(self.ctx, decl)
        spec = _spec_name(decl.span.file)
        command = f"plait mcp lock {shlex.quote(spec)}" if spec else "plait mcp lock SPEC"
        fix = Fix(f"run `{command}`")
        notes = ["`plait check` reads the server's tools from the lock; it never starts the server"]
        lock = self._lock(where) if where is not None else None
        if isinstance(lock, str):
            values["lock_state"] = "invalid"
            assert where is not None
            if where not in self.reported:
                self.reported.add(where)
                self.ctx.diagnostics.append(
                    make(
                        "P334", f"`{self.file_name}` {lock}", decl.name.span, notes=[f"read for mcp `{name}`"], fix=fix
                    )
                )
            return None
        entry = lock.servers.get(name) if lock is not None else None
        if entry is None:
            values["lock_state"] = "missing"
            whose = f"no entry for mcp `{name}`" if lock is not None else f"no `{self.file_name}` beside the spec"
            self.ctx.diagnostics.append(
                make("P332", f"mcp `{name}` is not locked: {whose}", decl.name.span, notes=notes, fix=fix)
            )
            return None
        if entry.fingerprint != fp:
            values["lock_state"] = "stale"
            self.ctx.diagnostics.append(
                make(
                    "P333",
                    f"the `{self.file_name}` entry for mcp `{name}` is stale",
                    decl.name.span,
                    notes=["its `command`, `url`, `env` or `headers` changed since it was locked", *notes],
                    fix=fix,
                )
            )
            return None
        values["lock_state"] = "fresh"
        return [
            {
                "name": t.name,
                "description": t.description,
                "input_schema": t.input_schema,
                "output_schema": t.output_schema,
                "annotations": t.annotations,
            }
            for t in entry.tools
        ]

    def _lock(self, where: Path) -> Lock | str | None:
        if where not in self.read:
            from ..lock_file import read_lock

            self.read[where] = read_lock(where / self.file_name, self.ctx.load.root_dir)
        return self.read[where]


def _spec_name(file: str) -> str | None:
    """The declaring file as the user would type it: relative to the working directory when inside it."""
    if file == "<string>":
        return None
    try:
        relative = os.path.relpath(file)
    except ValueError:  # another drive on Windows
        return file
    return file if relative.startswith("..") else relative


# --- names the spec writes ---------------------------------------------------------------


def _items(decl: ast.McpDecl, key: str) -> Iterator[tuple[str, Span]]:
    """The names of the first `key = [...]` (or `key = { NAME = ... }`) of a server's block, with where each is written."""
    entry = decl.body.get(key)
    if key == "approval" and entry is not None and isinstance(entry.value, ast.Block):  # `{ write_file = ... }` (0.3)
        for rule in entry.value.attributes:
            yield rule.key.name, rule.key.span
        return
    if entry is None or not isinstance(entry.value, ast.ListValue):
        return
    for item in entry.value.items:
        word = item.name if isinstance(item, ast.Ref) else item.value if isinstance(item, ast.String) else None
        if word:
            yield word, item.span


def _unknown(hints: Hints, name: str, tool: str, span: Span, names: dict[str, None]) -> Any:
    offered = list(names)
    hint = hints(tool, offered)
    listed = ", ".join(f"`{t}`" for t in offered[:12]) + (", ..." if len(offered) > 12 else "")
    return make(
        "P335",
        f"mcp `{name}` does not offer a tool `{tool}`",
        span,
        notes=[f"its tools (from the lock): {listed or 'none'}"],
        fix=did_you_mean(hint, span) or Fix(f"run `plait mcp lock` if `{name}` changed"),
    )


def _not_allowed(
    hints: Hints,
    name: str,
    tool: str,
    span: Span,
    allowed: dict[str, None],
    allow_span: Span | None,
    offered: dict[str, None] | None,
) -> Any:
    # A tool the lock says the server offers was left out of the allow-list, not misspelt.
    hint = hints(tool, list(allowed)) if offered is None or tool not in offered else None
    return make(
        "P336",
        f"`{tool}` is not in the `tools` allow-list of mcp `{name}`",
        span,
        labels=[Label(allow_span, "the allow-list")] if allow_span else [],
        fix=did_you_mean(hint, span) or Fix(f"add `{tool}` to `tools` of mcp `{name}`"),
    )


def _server_names(
    ctx: CompileContext, hints: Hints, name: str, decl: ast.McpDecl, offered: list[dict[str, Any]] | None
) -> None:
    """The allow-list names offered tools; the server's `approval` names allowed, offered tools."""
    names = dict.fromkeys(t["name"] for t in offered) if offered is not None else None
    allowed = _allowed(ctx, name)
    allow = decl.body.get("tools")
    for tool, span in _items(decl, "tools"):
        if names is not None and tool not in names:
            ctx.diagnostics.append(_unknown(hints, name, tool, span, names))
    for tool, span in _items(decl, "approval"):
        if names is not None and tool not in names:
            ctx.diagnostics.append(_unknown(hints, name, tool, span, names))
        elif allowed is not None and tool not in allowed:
            where = allow.value.span if allow else None
            ctx.diagnostics.append(_not_allowed(hints, name, tool, span, allowed, where, names))


def _allowed(ctx: CompileContext, name: str) -> dict[str, None] | None:
    tools = ctx.values[name].get("tools")
    return dict.fromkeys(tools) if tools is not None else None


def _agent_members(
    ctx: CompileContext, hints: Hints, servers: dict[str, ast.McpDecl], locked: dict[str, dict[str, None] | None]
) -> None:
    """Each `files.read_text_file` an agent writes: a tool the server offers and allows, and for `until` and
    `approval` one the agent has (the whole server in `tools`, or that tool)."""
    allow_lists = {name: _allowed(ctx, name) for name in servers}
    has: dict[str, set[tuple[str, str | None]]] = {}
    for ref in ctx.references:
        if ref.attr == "tools" and ref.target in servers:
            has.setdefault(ref.owner, set()).add((ref.target, ref.member))
    for ref in ctx.references:
        if ref.member is None or ref.target not in servers:
            continue
        allowed = allow_lists[ref.target]
        offered = locked.get(ref.target)
        if offered is not None and ref.member not in offered:
            ctx.diagnostics.append(_unknown(hints, ref.target, ref.member, ref.span, offered))
            continue
        if allowed is not None and ref.member not in allowed:
            allow = servers[ref.target].body.get("tools")
            span = allow.value.span if allow else None
            ctx.diagnostics.append(_not_allowed(hints, ref.target, ref.member, ref.span, allowed, span, offered))
            continue
        listed = {member for server, member in has.get(ref.owner, ()) if server == ref.target}
        # Not listing the server at all is the general check's (P301, P204); here it is listed, but not this tool.
        if ref.attr in ("until", "approval") and listed and None not in listed and ref.member not in listed:
            _not_listed(ctx, ref)


def _not_listed(ctx: CompileContext, ref: Reference) -> None:
    """`until`/`approval` naming an MCP tool the agent's `tools` leave out (the server itself is listed)."""
    what = f"{ref.target}.{ref.member}"
    spans = ctx.spans.get(ref.owner, {})
    labels = [Label(spans["tools"], "the agent's tools")] if "tools" in spans else []
    if ref.attr == "until":
        diagnostic = make(
            "P301",
            f"`until` names `{what}`, which agent `{ref.owner}` does not have in `tools`",
            ref.span,
            labels=labels,
            notes=["the run can only end on a tool the model can call"],
        )
    else:
        diagnostic = make(
            "P204",
            f"`approval` names `{what}`, which agent `{ref.owner}` does not have in `tools`",
            ref.span,
            labels=labels,
            fix=Fix(f"add `{what}` to `tools`, or remove it from `approval`"),
        )
    ctx.diagnostics.append(diagnostic)


# --- one name, one tool --------------------------------------------------------------------


def _collisions(ctx: CompileContext) -> None:
    """P306 when an agent would see two tools under one name: an MCP tool and a tool, an agent or another server's."""
    seen: dict[tuple[str, str], tuple[str, Span]] = {}
    for ref in ctx.references:
        if ref.attr != "tools" or ctx.kind(ref.owner) != "agent":
            continue
        for visible, source in _visible(ctx, ref) or ():
            key = (ref.owner, visible)
            first = seen.get(key)
            if first is None:
                seen[key] = (source, ref.span)
            elif first[0] != source:
                ctx.diagnostics.append(
                    make(
                        "P306",
                        f"agent `{ref.owner}` would see two tools named `{visible}`: {first[0]} and {source}",
                        ref.span,
                        labels=[Label(first[1], "the first listed here")],
                        notes=["the model sees an MCP tool under its own name, without the server's"],
                        fix=Fix(f"list `{visible}` from one of them (an allow-list `tools = [...]` on the server)"),
                    )
                )


def _visible(ctx: CompileContext, ref: Reference) -> list[tuple[str, str]] | None:
    """The names the model sees for one `tools` item, each with how a message names where it comes from;
    None for a whole server with neither a fresh lock nor an allow-list (its tools are not known)."""
    if ctx.kind(ref.target) != "mcp":
        return [(ref.target, f"{ctx.kind(ref.target)} `{ref.target}`")]
    if ref.member is not None:
        return [(ref.member, f"`{ref.target}.{ref.member}`")]
    values = ctx.values.get(ref.target, NOTHING)
    if values.get("lock_state") == "fresh":
        names = [t["name"] for t in values.get("offered", ())]
    elif values.get("tools") is not None:
        names = list(values["tools"])  # without a lock, the allow-list is all that is known
    else:
        return None
    return [(n, f"`{ref.target}.{n}`") for n in names]


def tool_names(ctx: CompileContext, agent: str) -> tuple[str, ...] | None:
    """Every tool name the model of `agent` is offered (MCP tools by their own names), or None when an MCP
    server it lists has no fresh lock and no allow-list. Readable once check_mcp has run."""
    names: list[str] = []
    for ref in ctx.references:
        if ref.owner == agent and ref.attr == "tools":
            visible = _visible(ctx, ref)
            if visible is None:
                return None
            names += [name for name, _ in visible]
        elif ref.owner == agent and ref.attr == "handoff":  # a hand-off target is offered as a tool (plait 0.3)
            names.append(f"transfer_to_{ref.target}")
    return tuple(dict.fromkeys(names))
