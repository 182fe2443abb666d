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

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = ["record", "replay"]


def record(engine: "Engine") -> Recorder:
    """Record every model call the engine's runs make from now on; `recorder.cassette()` holds them."""
    recorder = Recorder()
    engine.wrap_provider = recorder.wrap
    return recorder


def replay(engine: "Engine", cassette: Cassette) -> None:
    """Serve every model of the engine's spec from `cassette`."""
    for name in engine.program.models:
        engine.providers[name] = ReplayProvider(cassette, name)
