"""A test's `replies` → the providers its run uses: inline scripted replies, a cassette, real models, or the spec's.

`REPLY_SOURCES` is the hook: a source name (core.kinds.test.REPLY_SOURCES) → a function `(test, program, live)
→ providers by model name` (an empty dict: the engine makes each model's own provider). A source that cannot
serve a test raises `Skip` (a real model without `--live`) or `SourceError` (a broken cassette); both become the
test's outcome, never a traceback. Offline is the default: a real model is called only under `plait test --live`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from plait.core.kinds import ModelNode
from plait.core.kinds.test import TestNode
from plait.runtime.providers.base import ProviderError
from plait.runtime.providers.scripted import ScriptedProvider

__all__ = ["REPLY_SOURCES", "Offline", "Skip", "SourceError", "cassette_path", "providers_for"]


class Skip(Exception):
    """The test cannot run here (a real model, offline): reported as skipped, with this reason."""


class SourceError(Exception):
    """The replies cannot be had (a cassette that is missing or broken): the test errors with this message."""


class Offline:
    """A real model in an offline session: any call fails, saying how to give the test replies."""

    def __init__(self, config: ModelNode) -> None:
        self.config = config

    def _refuse(self) -> ProviderError:
        target = f"{self.config.provider}/{self.config.model_id}"
        return ProviderError(
            "invalid_request",
            f"model `{self.config.name}` is a real model ({target}) and `plait test` runs offline: give the test "
            "inline `replies`, or a cassette, or run it with `plait test --live`",
            provider=self.config.provider,
            model=self.config.name,
        )

    async def complete(self, request: Any) -> Any:
        raise self._refuse()

    async def stream(self, request: Any) -> Any:
        raise self._refuse()
        yield  # pragma: no cover - an async generator that fails at once

    async def aclose(self) -> None:
        return None


Source = Callable[[TestNode, Any, bool], dict[str, Any]]


def _inline(test: TestNode, program: Any, live: bool) -> dict[str, Any]:
    # One script for every model: keys are runnable names (or graph paths), as a scripted model's file has them.
    # A key naming a model gives that model's calls a list of their own, whoever asks: a fallback model, which is
    # asked the same runnable's question after the first model failed, answers from it, and so does a judge.
    script = test.reply_data or {}
    return {
        name: ScriptedProvider(config, replies=script[name] if name in script else script)
        for name, config in program.models.items()
    }


def _spec(test: TestNode, program: Any, live: bool) -> dict[str, Any]:
    if live:
        return {}
    return {name: Offline(config) for name, config in program.models.items() if config.provider != "scripted"}


def _live(test: TestNode, program: Any, live: bool) -> dict[str, Any]:
    if not live:
        raise Skip("it calls real models (`replies = live`): run `plait test --live`")
    return {}


def cassette_path(test: TestNode) -> Path:
    """`replies = cassette("FILE")`: FILE beside the file the test is written in."""
    return Path(test.file).parent / str((test.reply_data or {}).get("path", ""))


def _cassette(test: TestNode, program: Any, live: bool) -> dict[str, Any]:
    # Every model served from the recordings (runtime/cassettes/replay.py): a request with none fails the run.
    from plait.runtime.cassettes import Cassette, CassetteError, ReplayProvider

    path = cassette_path(test)
    try:
        cassette = Cassette.load(path)
    except CassetteError as exc:
        raise SourceError(f"{exc} (record it with `plait test --record`)") from None
    return {name: ReplayProvider(cassette, name) for name in program.models}


#: Source name → how its providers are made. Another source (or a better cassette) replaces its entry.
REPLY_SOURCES: dict[str, Source] = {"inline": _inline, "spec": _spec, "live": _live, "cassette": _cassette}


def providers_for(test: TestNode, program: Any, live: bool = False) -> dict[str, Any]:
    """The providers a run of `test` uses, by model name (Skip / SourceError when it cannot run)."""
    return REPLY_SOURCES[test.replies](test, program, live)
