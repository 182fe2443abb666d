"""A code step (`run = python("mod:fn")`) and its input → the function's return value, checked against `output`.

No model is called. A record input arrives as keyword arguments, anything
else as `input=`. The module is imported when the step first runs, from the
spec's folder (tool_modules.py), never by `plait check`. A sync function runs
in a worker thread so it never stalls side-by-side branches; an async one on
the loop. What it returns must fit the step's `output` (then absent optional
fields become null); a raise or a misfit ends the step as a failure that
names the step.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from plait.core.kinds import StepNode

from .errors import AgentError
from .outcomes import Done
from .records import complete, problems
from .tool_modules import load

__all__ = ["run_code_step"]


def _function(step: StepNode) -> Callable[..., Any]:
    run = step.run or {}
    target = run.get("target", "")
    module_name, _, attr = target.partition(":")
    try:
        module = load(module_name, run.get("base_dir"))
    except Exception as exc:  # importing user code can raise anything; it ends this step, named
        raise AgentError(
            "code_step_import", f"step `{step.name}`: cannot import module `{module_name}`: {type(exc).__name__}: {exc}"
        ) from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise AgentError("code_step_import", f"step `{step.name}`: module `{module_name}` has no function `{attr}`")
    return fn


async def run_code_step(step: StepNode, input: Any, path: tuple[str, ...]) -> Done:
    fn = _function(step)
    kwargs = input if isinstance(input, dict) else {"input": input}
    try:
        if inspect.iscoroutinefunction(fn):
            value = await fn(**kwargs)
        else:
            value = await asyncio.to_thread(fn, **kwargs)
            if inspect.isawaitable(value):
                value = await value
    except Exception as exc:
        raise AgentError(
            "code_step_failed", f"step `{step.name}` raised {type(exc).__name__}: {exc}", path=path
        ) from exc
    schema = step.output_schema()
    if schema is not None:
        found = problems(value, schema)
        if found:
            raise AgentError(
                "output_invalid",
                f"step `{step.name}` returned a value that does not fit its `output`: {'; '.join(found)}",
                path=path,
            )
        value = complete(value, schema)
    return Done(value)
