"""A Python callable registered in code → a tool record the runtime runs like a declared one.

A `tool` declaration's record (`plait.core.kinds.ToolNode`) is what the graph
holds; a callable is something only a Python caller has, so it lives on this
runtime-only subclass, which no spec and no graph ever holds (the graph's JSON
and the kind's spec attributes stay those of `ToolNode`).
"""

from __future__ import annotations

from typing import Any, Callable

from plait.core.kinds import ToolNode
from plait.core.kinds.base import kind_record

__all__ = ["FunctionTool"]


@kind_record
class FunctionTool(ToolNode):
    """A tool whose body is `fn` (sync or async), called with the arguments as keywords."""

    fn: Callable[..., Any]
