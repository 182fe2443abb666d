"""Shared words → dsl, compiler, runtime and CLI, which must spell them alike: providers, error kinds, steps, formats.

Each is defined here once; the compiler checks specs against these lists, the
runtime dispatches on them, the renderers draw them and the CLI offers them.
"""

from __future__ import annotations

__all__ = [
    "DIFF_FORMATS",
    "ERROR_KINDS",
    "FALLBACK_KINDS",
    "IMAGE_FORMATS",
    "PROVIDERS",
    "RENDER_DIRECTIONS",
    "RENDER_FORMATS",
    "REPORT_FORMATS",
    "TEXT_RENDER_FORMATS",
    "TURN_STEP_NAMES",
]

#: Provider prefixes a model target may start with (`"openai/gpt-4o-mini"`).
PROVIDERS = ("openai", "anthropic", "google", "openai-compatible", "scripted")

#: Every failure a provider can report. Open in spirit, closed in practice:
#: a provider that cannot classify a failure uses "server_error" or "invalid_request".
ERROR_KINDS = (
    "auth",
    "content_filter",
    "context_length",
    "invalid_request",
    "model_not_found",
    "network",
    "quota_exceeded",
    "rate_limit",
    "server_error",
    "timeout",
    "unsupported",
)

#: Failures another model could survive; the default `fallback_on` set.
FALLBACK_KINDS = frozenset(
    {"rate_limit", "server_error", "model_not_found", "timeout", "network", "quota_exceeded", "unsupported"}
)

#: The steps of one agent turn, in order (src/plait/runtime/pipeline.py runs them; `plait render --expand` draws them).
TURN_STEP_NAMES = (
    "check_budget",
    "expand_messages",
    "call_model",
    "check_interrupts",
    "run_tools",
    "propagate_state",
    "check_until",
    "loop_boundary",
)

#: `plait check --format`: diagnostics reports (src/plait/compiler/report dispatches on these).
REPORT_FORMATS = ("text", "json", "github", "sarif")

#: `plait diff --format`: the changes as text, JSON, or a Mermaid picture with them highlighted.
DIFF_FORMATS = ("text", "json", "mermaid")

#: `plait render --format`: text formats are built in-process, image formats through Graphviz.
TEXT_RENDER_FORMATS = ("dot", "mermaid", "json", "html")
IMAGE_FORMATS = ("svg", "png", "pdf")
RENDER_FORMATS = IMAGE_FORMATS + TEXT_RENDER_FORMATS
#: `plait render --direction`: "auto" picks left-to-right or top-to-bottom by the graph's shape.
RENDER_DIRECTIONS = ("auto", "LR", "TB")
