"""`step NAME ["description"] { ... }` → its graph record and attribute schema."""

from __future__ import annotations

from typing import Any, ClassVar

from .agent import RETRY_MALFORMED, schema_of, validate_attr, with_attr
from .base import Attr, Runnable, attr, kind_record
from .thread import thread_attr

__all__ = ["StepNode"]

#: What a step sends when it has no prompt (only a code step or the Python API has none).
PROMPT = "{{input}}"


@kind_record
class StepNode(Runnable):
    kind: ClassVar[str] = "step"
    blocks: ClassVar[tuple[str, ...]] = ("output",)
    bindings: dict[str, tuple[str, ...]] = with_attr()
    #: None for a code step (`run = python(...)`) and a record builder (`with` alone).
    model: str | None = attr(
        drawn=True,
        default=None,
        spec=Attr("ref", required=True, kinds=("model",)),
        contract=True,
        doc="The model it calls.",
    )
    prompt: str = attr(
        default=PROMPT, spec=Attr("template", required=True), doc="What it sends (template; `{{input}}`)."
    )
    system: str | None = attr(default=None, spec=Attr("template"), doc="The system prompt (template).")
    #: plait 0.3: what it sends as a list of messages instead of `prompt` and `system`: ({"role", "content"}, ...),
    # each content a template (src/plait/runtime/compose.py renders them).
    messages: tuple[dict[str, str], ...] = attr(
        drawn=True,
        default=(),
        spec=Attr("messages", choices=("system", "user", "assistant")),  # the roles: completion and hover offer them
        contract=True,
        doc='What it sends, as messages: `[system("..."), user("..."), assistant("..."), user("...")]`.',
    )
    thread: str | None = thread_attr()
    max_tokens: int | None = attr(
        journaled=True,
        drawn=True,
        default=None,
        spec=Attr("int", minimum=1),
        contract=True,
        doc="Most tokens the reply may have.",
    )
    temperature: float | None = attr(
        journaled=True,
        drawn=True,
        default=None,
        spec=Attr("number", minimum=0, maximum=2),
        doc="Sampling temperature, 0 to 2.",
    )
    retry_malformed: int = attr(
        drawn=True,
        default=RETRY_MALFORMED,
        spec=Attr("int", default=RETRY_MALFORMED, minimum=0),
        contract=True,
        doc="Malformed replies reflected on and re-asked (default 0).",
    )
    #: {"type": "python", "target": "mod:fn", "base_dir": ...}, or None.
    validate: dict[str, Any] | None = validate_attr()
    #: A code step's {"type": "python", "target": "mod:fn", "base_dir": ...}; None for a model step.
    # `run = python(...)` instead of `model` and `prompt` (src/plait/compiler/passes/check_types.py).
    run: dict[str, Any] | None = attr(
        drawn=True, default=None, spec=Attr("run"), contract=True, doc='A code step: `python("module:function")`.'
    )

    def output_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of `output`; None for text (nothing to ask for or to check).

        A model is held to the strict form; a Python function may leave an optional field out or return null for it."""
        return schema_of(self.output, self.run is None)
