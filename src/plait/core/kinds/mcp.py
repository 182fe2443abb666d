"""`mcp NAME "description" { ... }` → its graph record and attribute schema.

Exactly one of `command` and `url` (src/plait/compiler/passes/check_mcp.py); the tool names are checked
against plait.lock there too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from ..conditions import Condition
from .base import Attr, Node, attr, kind_record
from .tool import TIMEOUT

__all__ = ["McpNode"]


@kind_record
class McpNode(Node):
    kind: ClassVar[str] = "mcp"
    description: str = ""
    command: tuple[str, ...] | None = attr(
        drawn=True, default=None, spec=Attr("strings"), contract=True, doc="The program and its arguments (stdio)."
    )
    url: str | None = attr(
        drawn=True, default=None, spec=Attr("string"), contract=True, doc="The server's URL (streamable HTTP)."
    )
    #: Variable → `{"env": "NAME"}` (read from that environment variable at run time) or a literal string.
    env: dict[str, str | dict[str, str]] = attr(
        default_factory=dict, spec=Attr("env_map", default={}), doc="Environment of a server plait starts."
    )
    #: Header → `{"env": "NAME"}` or a literal string, as `env`.
    headers: dict[str, str | dict[str, str]] = attr(
        default_factory=dict, spec=Attr("env_map", default={}), doc="HTTP headers for a server reached by `url`."
    )
    #: The allow-list; None is every tool the server offers.
    tools: tuple[str, ...] | None = attr(
        drawn=True, default=None, spec=Attr("names"), contract=True, doc="The tools agents may use (default every one)."
    )
    timeout: float = attr(
        default=TIMEOUT,
        spec=Attr("duration", default=TIMEOUT, minimum=0.001),
        contract=True,
        doc="One tool call's deadline (default 60s).",
    )
    #: Tools of this server every agent must get approval for (`[write_file]`, or the keys of `{ write_file = ... }`).
    approval: tuple[str, ...] = attr(
        drawn=True,
        default=(),
        spec=Attr("mcp_approval", default=()),
        contract=True,
        doc='Tools every agent must get approved: `[write_file]`, or `{ write_file = path != "notes.md" }`.',
    )
    #: From 0.3, the tools of `approval` gated by a condition over the call's arguments (the rest: every call).
    approval_when: dict[str, Condition] = attr(
        drawn=True, default_factory=dict, contract=True, doc="The conditions of a conditional `approval`, by tool."
    )
    #: What `plait.lock` beside the declaring file says of this server: "fresh", "stale" (the declaration
    #: changed since it was locked), "missing" (no lock, or no entry) or "invalid" (the lock cannot be read).
    lock_state: str = attr(default="missing", drawn=True, doc="What `plait.lock` says of it.")
    #: The declaration's fingerprint (`core.mcp_lock.fingerprint`), which a fresh lock entry matches.
    fingerprint: str = ""
    #: The locked tools the allow-list keeps, in the lock's order: {"name", "description", "input_schema",
    #: "output_schema", "annotations"} (the last two None when the server sent none). Empty unless the lock is fresh.
    offered: tuple[dict[str, Any], ...] = attr(
        drawn=True, default=(), contract=True, doc="The locked tools the allow-list keeps."
    )

    @property
    def cwd(self) -> str | None:
        """Where a stdio server runs: the declaring spec's folder, as `./data` in its command reads (None for
        spec text: the process's working directory)."""
        return str(Path(self.file).parent) if self.file else None
