"""An engine + a cassette → an engine whose models record into it, or are served from it.

Recording wraps the providers the engine makes; replay puts a `ReplayProvider`
in place of every declared model, so a replayed run opens no connection and
reads no API key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .file import Cassette
from .record import Recorder
from .replay import ReplayProvider
from .tools import RecordingTools, ReplayTools

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = ["record", "replay"]


def record(engine: "Engine", *, tools: bool = False) -> Recorder:
    """Record every model call the engine's runs make from now on (and, with `tools`, every tool result);
    `recorder.cassette()` holds them."""
    recorder = Recorder()
    engine.wrap_provider = recorder.wrap
    if tools:
        engine.tools = RecordingTools(recorder.tool_results)
    return recorder


def replay(engine: "Engine", cassette: Cassette) -> None:
    """Serve every model of the engine's spec from `cassette`, and its tools too when it holds their results."""
    for name in engine.program.models:
        engine.providers[name] = ReplayProvider(cassette, name)
    if cassette.tool_results:
        engine.tools = ReplayTools(cassette)
