"""`model NAME = "provider/model-id" { ... }` → its graph record and attribute schema."""

from __future__ import annotations

from typing import ClassVar

from ..catalogue import CAPABILITIES, ModelInfo
from .base import TOOL_CHOICES, Attr, Node, attr, kind_record

__all__ = ["ModelNode"]

#: Network retries per call.
RETRIES = 2


@kind_record
class ModelNode(Node):
    kind: ClassVar[str] = "model"
    # The model's own catalogue entry, for a self-hosted or compatible server the catalogue does not list (or to
    # correct it): folded into `catalogue` over the `plait.lock` entry, field by field.
    folded: ClassVar[dict[str, Attr]] = {
        "price": Attr(
            "map", doc="USD per million tokens: `{ input = 0.15, output = 0.60 }` (`cached_input`, `per_request`)."
        ),
        "context_window": Attr("int", minimum=1, doc="Most tokens of input and output one call may hold."),
        "max_output": Attr("int", minimum=1, doc="Most tokens one reply may have (the model's limit)."),
        "capabilities": Attr(
            "symbols", choices=CAPABILITIES, doc="What the model can do: `[tools, structured_output, streaming]`."
        ),
    }
    provider: str = attr(drawn=True, default="", contract=True, doc="The target's provider prefix (`openai`).")
    model_id: str = attr(drawn=True, default="", contract=True, doc="The target's model id (`gpt-4o-mini`).")
    temperature: float | None = attr(
        journaled=True,
        drawn=True,
        default=None,
        spec=Attr("number", minimum=0, maximum=2),
        doc="Sampling temperature, 0 to 2.",
    )
    max_tokens: int | None = attr(
        journaled=True, drawn=True, default=None, spec=Attr("int", minimum=1), doc="Most tokens one reply may have."
    )
    timeout: float | None = attr(
        drawn=True, default=None, spec=Attr("duration", minimum=0.001), contract=True, doc="One model call's deadline."
    )
    base_url: str | None = attr(default=None, spec=Attr("string"), doc="The server's URL (openai-compatible).")
    #: The environment variable's name; a key's value never reaches the graph.
    api_key_env: str | None = attr(
        drawn=True,
        default=None,
        spec=Attr("env"),
        spelled="api_key",
        doc='`env("NAME")`: the variable holding the API key.',
    )
    retries: int = attr(
        drawn=True,
        default=RETRIES,
        spec=Attr("int", default=RETRIES, minimum=0, maximum=10),
        contract=True,
        doc="Network retries per call (default 2).",
    )
    headers: dict[str, str] = attr(
        drawn=True, default_factory=dict, spec=Attr("map", default={}), doc="HTTP headers on every call to the model."
    )
    api: str | None = attr(
        drawn=True,
        default=None,
        spec=Attr("string", choices=("chat", "responses")),
        doc="openai: `chat` or `responses`.",
    )
    script: str | None = attr(default=None, spec=Attr("string"), doc="scripted: the replies file beside the spec.")
    #: "auto", "none" or "required": the default for agents on this model that set none.
    # A tool name is an agent's own choice (it knows its tools), so the model offers only the three words.
    tool_choice: str | None = attr(
        journaled=True,
        default=None,
        spec=Attr("tool_choice", choices=TOOL_CHOICES),
        doc="`auto`, `none` or `required`: the default for agents on this model.",
    )
    #: Price, limits and capabilities: the spec's overrides over the `plait.lock` entry; None when neither says.
    catalogue: ModelInfo | None = attr(default=None, doc="Its price, limits and capabilities (spec, then plait.lock).")
