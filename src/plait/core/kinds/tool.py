"""`tool NAME "description" { ... }` → its graph record and attribute schema."""

from __future__ import annotations

from typing import Any, ClassVar

from ..conditions import Condition
from .base import Attr, Node, attr, kind_record

__all__ = ["ToolNode"]

#: Seconds one call may take (an MCP server's calls too).
TIMEOUT = 60.0
#: How the result reaches the model.
RESULT = "content"


@kind_record
class ToolNode(Node):
    kind: ClassVar[str] = "tool"
    blocks: ClassVar[tuple[str, ...]] = ("params",)
    # http tools: reach loopback/private/metadata addresses only when asked; cap the body read (bytes).
    # Both are folded into `run`: they mean nothing to a python tool.
    folded: ClassVar[dict[str, Attr]] = {
        "allow_private": Attr("bool", default=False, doc="http: may reach loopback, private and metadata addresses."),
        "max_response": Attr("size", default=4 * 1024 * 1024, minimum=1, doc="http: the most body read (4MB)."),
    }
    description: str = ""
    #: JSON Schema object of the arguments.
    parameters: dict[str, Any] = attr(
        default_factory=lambda: {"type": "object", "properties": {}}, doc="JSON Schema of its `params` block."
    )
    #: {"type": "python", "target": "mod:fn", "base_dir": ...} or {"type": "http", "method", "url", "headers", "body"}.
    run: dict[str, Any] = attr(
        drawn=True,
        default_factory=dict,
        spec=Attr("run", required=True),
        doc='`python("module:function")` or `http(METHOD, "url")`.',
    )
    #: True for `required`; a condition over the call's arguments (`amount > 100`) asks only when it holds.
    approval: bool | Condition = attr(
        drawn=True,
        default=False,
        spec=Attr("approval", choices=("required", "never"), default="never"),
        contract=True,
        doc="`required`: every call waits for a person's decision; `amount > 100`: only a call it holds for.",
    )
    timeout: float = attr(
        drawn=True,
        default=TIMEOUT,
        spec=Attr("duration", default=TIMEOUT, minimum=0.001),
        contract=True,
        doc="One call's deadline (default 60s).",
    )
    result: str = attr(
        drawn=True,
        default=RESULT,
        spec=Attr("symbol", choices=("content", "messages"), default=RESULT),
        contract=True,
        doc="`messages`: the result arrives as messages on the model's next call.",
    )
    # Safe to run twice: a resumed run re-runs a call a crash left unknown instead of asking a person.
    idempotent: bool = attr(
        default=False, spec=Attr("bool", default=False), doc="Running a call twice does what running it once does."
    )
