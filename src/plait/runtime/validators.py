"""An answer that matched its `output` and the runnable's `validate = python("mod:fn")` → None, or why it was rejected.

The function is imported when it is first called, from the spec's folder (tool_modules.py), never by
`plait check`. It is called with the answer as its one argument (a record as a dict, text as a string); a sync
function runs in a worker thread. It accepts by returning None or True; it rejects by returning a string (the
reason), False, or by raising ValueError or AssertionError (the message is the reason). A rejection is sent
back to the model in the same conversation as a retry (bounded by `retry_malformed`, as a reply that misses
its schema is); any other exception is a bug in the validator and fails the run, named.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from .errors import AgentError
from .tool_modules import load

__all__ = ["REJECTED", "rejection"]

#: The retry message for a rejected answer: what the validator said, and the ask to answer again.
REJECTED = (
    "Attempt {attempt} of {total}: your previous answer was rejected: {reason}. "
    "Reply again with a corrected answer in the same form."
)


def _function(owner: str, run: dict[str, Any]) -> Callable[..., Any]:
    module_name, _, attr = run.get("target", "").partition(":")
    try:
        module = load(module_name, run.get("base_dir"))
    except Exception as exc:  # importing user code can raise anything; it fails the run, named
        raise AgentError(
            "validator_import",
            f"`{owner}`: cannot import validator module `{module_name}`: {type(exc).__name__}: {exc}",
        ) from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise AgentError("validator_import", f"`{owner}`: module `{module_name}` has no function `{attr}`")
    return fn


async def rejection(owner: str, run: dict[str, Any], value: Any, path: tuple[str, ...]) -> str | None:
    """Why the validator rejects `value`, or None when it accepts it."""
    fn = _function(owner, run)
    try:
        if inspect.iscoroutinefunction(fn):
            verdict = await fn(value)
        else:
            verdict = await asyncio.to_thread(fn, value)
            if inspect.isawaitable(verdict):
                verdict = await verdict
    except (ValueError, AssertionError) as exc:
        return str(exc) or type(exc).__name__
    except Exception as exc:
        raise AgentError(
            "validator_failed",
            f"`{owner}`: validator `{run.get('target')}` raised {type(exc).__name__}: {exc}",
            path=path,
        ) from exc
    if verdict is None or verdict is True:
        return None
    if verdict is False:
        return f"it did not pass `{run.get('target')}`"
    return str(verdict)
