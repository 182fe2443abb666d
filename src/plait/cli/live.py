"""Run events → what a person watching `plait run` sees: a live view at a terminal, plain lines elsewhere.

At a terminal (stderr a TTY, TERM not `dumb`) the view is drawn with `rich`
(imported only then): finished moments (a model call, a tool call, a route, a
loop iteration, a map item, a warning) scroll above a live panel showing what
is running now, a tree of the runnables in flight, each with a spinner and
its elapsed time, and the model calls, tool calls, tokens and cost so far
(USD, when a model has a price). The panel is drawn from the first event,
goes away at the end, and a summary stays: run id, how it stopped, duration,
model calls, tokens, cost, where the output went.
Elsewhere each finished moment is one plain line, as before, and no summary.

On a resume, model replies and tool results read back from the journal are
marked `(replayed)`: they did not run again.
Every text from the run (names, values, messages) is shown through
`plait.term.clean`, so nothing in it can drive the terminal.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from plait.cli.money import usd
from plait.term import clean

__all__ = ["PlainView", "LiveView", "describe", "view_for"]

REPLAYED = " (replayed)"


def describe(event: Any) -> str | None:
    """One finished moment as a line, or None for an event that is not one (a start, a text delta)."""
    data = event.data
    again = REPLAYED if data.get("replayed") else ""
    if event.type == "step_end":
        cost = data.get("cost_usd")
        shown = f" {usd(cost)}" if cost is not None else ""
        return f"{event.agent}: step {data['step']} ({data['model']}) {data['finish_reason']}{shown}{again}"
    if event.type == "budget_exceeded":
        return f"budget: {data['message']}"
    if event.type == "tool_call_end":
        return f"{event.agent}: tool {data['name']} {'failed' if data['is_error'] else 'ok'}{again}"
    if event.type == "route":
        value = json.dumps(data["value"], default=str, ensure_ascii=False)
        target = f"break {data['leaves']}" if data.get("leaves") else data["target"]  # a case that leaves a loop
        return f"{data['route']}: case {json.dumps(data['case'])} -> {target} ({data['subject']} = {value})"
    if event.type == "loop_iteration":
        holds = f", {data['condition']} is {str(data['holds']).lower()}" if data["condition"] else ""
        if data.get("exit") == "break":
            holds = ", left by break" + (f" on its way out of {data['leaves']}" if data.get("leaves") else "")
        return f"{data['loop']}: iteration {data['iteration']}{holds}"
    if event.type == "map_item":
        status = data["status"]
        said = {"done": "done", "skipped": "skipped by its filter"}.get(status, "failed")
        return f"{data['map']}: item {data['index']} {said}"
    if event.type == "warning":
        return f"warning[{data['code']}]: {data['message']}"
    return None


class Tally:
    """What the summary counts: model calls (and how many were replayed), tool calls, tokens."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.model_calls = 0
        self.replayed = 0
        self.tools = 0
        self.input_tokens = 0
        self.output_tokens = 0
        #: USD of the priced calls; None until one had a price.
        self.cost: float | None = None

    def add(self, event: Any) -> None:
        data = event.data
        if event.type == "step_end":
            self.model_calls += 1
            self.replayed += bool(data.get("replayed"))
            self.input_tokens += data.get("input_tokens", 0)
            self.output_tokens += data.get("output_tokens", 0)
            if data.get("cost_usd") is not None:
                self.cost = (self.cost or 0.0) + data["cost_usd"]
        elif event.type == "tool_call_end":
            self.tools += 1

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def counts(self) -> str:
        replayed = f" ({self.replayed} replayed)" if self.replayed else ""
        return (
            f"{self.model_calls} model call{'s' if self.model_calls != 1 else ''}{replayed} · "
            f"{self.tools} tool call{'s' if self.tools != 1 else ''} · "
            f"{self.tokens} tokens ({self.input_tokens} in, {self.output_tokens} out)"
            + (f" · {usd(self.cost)}" if self.cost is not None else "")
        )


class PlainView:
    """One line per finished moment on stderr; nothing drawn, nothing erased."""

    def __init__(self) -> None:
        self.tally = Tally()

    def __call__(self, event: Any) -> None:
        self.tally.add(event)
        line = describe(event)
        if line is not None:
            print(clean(line), file=sys.stderr, flush=True)

    def pause(self) -> None:
        """Before a question at the terminal: nothing to clear."""

    def close(self) -> None:
        pass

    def summary(self, result: Any, json_out: bool) -> None:
        """Plain output has no summary: a log gets the lines and the final messages only."""


class _Flight:
    """A runnable, model call or tool call that started and has not ended."""

    __slots__ = ("label", "started", "spinner", "implicit")

    def __init__(self, label: str, spinner: Any, implicit: bool = False) -> None:
        self.label = label
        self.started = time.monotonic()
        self.spinner = spinner
        #: Made for a model call whose runnable announced no start of its own (a step): ends with the call.
        self.implicit = implicit


#: Events that change what runs now; the rest only update counts, which the next tick draws.
_REDRAW = frozenset(
    ("run_start", "agent_start", "agent_end", "step_start", "step_end", "tool_call_start", "tool_call_end", "run_end")
)


class LiveView:
    """The terminal view: finished moments scroll, the tree of what runs now is redrawn under them."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.live import Live

        self.tally = Tally()
        self.flight: dict[tuple[str, ...], _Flight] = {}
        self.running = False
        self.console = Console(file=sys.stderr, highlight=False, soft_wrap=False)
        # stdout is the run's output (maybe a file): never rerouted into the view.
        self.live = Live(
            console=self.console,
            get_renderable=self._panel,
            refresh_per_second=8,
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )

    # -- events -----------------------------------------------------------------------------------

    def __call__(self, event: Any) -> None:
        self.tally.add(event)
        kind, data, path = event.type, event.data, tuple(event.path)
        if kind == "run_start":
            self._open(path, f"{data.get('entry') or path[-1]}  run {data.get('run_id')}")
        elif kind == "agent_start":
            self._open(path, str(event.agent))
        elif kind == "agent_end":
            self._close_under(path)
        elif kind == "step_start":
            if path not in self.flight:
                self._open(path, str(event.agent), implicit=True)
            self._open(path + ("#model",), f"model call, step {data.get('step')}")
        elif kind == "step_end":
            self.flight.pop(path + ("#model",), None)
            if path in self.flight and self.flight[path].implicit:
                self.flight.pop(path)
        elif kind == "tool_call_start":
            self._open(path + ("#tool", str(data.get("call_id"))), f"tool {data.get('name')}")
        elif kind == "tool_call_end":
            self.flight.pop(path + ("#tool", str(data.get("call_id"))), None)
        elif kind == "run_end":
            self.flight.clear()
        line = describe(event)
        if line is not None:
            self._show(line, dim=bool(data.get("replayed")), warning=kind == "warning")
        if kind in _REDRAW and (self.flight or self.running):
            self._start()
            self.live.refresh()  # what runs changed: drawn now, not at the next tick

    def _open(self, key: tuple[str, ...], label: str, implicit: bool = False) -> None:
        from rich.spinner import Spinner

        self.flight[key] = _Flight(clean(label), Spinner("dots", style="cyan"), implicit)

    def _close_under(self, path: tuple[str, ...]) -> None:
        for key in [k for k in self.flight if k[: len(path)] == path]:
            del self.flight[key]

    def _show(self, line: str, dim: bool = False, warning: bool = False) -> None:
        from rich.text import Text

        style = "yellow" if warning else "dim" if dim else None
        self._start()
        self.console.print(Text(clean(line), style=style or ""), overflow="fold")

    def _start(self) -> None:
        if not self.running:
            self.live.start()
            self.running = True

    # -- drawing ----------------------------------------------------------------------------------

    def _panel(self) -> Any:
        """The tree of what runs now (parents by path prefix), then the counts; computed at each refresh."""
        from rich.console import Group
        from rich.text import Text
        from rich.tree import Tree

        now = time.monotonic()
        nodes: dict[tuple[str, ...], Tree] = {}
        roots: list[Tree] = []
        for key, item in list(self.flight.items()):  # a copy: the refresh thread draws while events arrive
            item.spinner.update(
                text=Text(f"{item.label}  {now - item.started:.1f}s", no_wrap=True, overflow="ellipsis")
            )
            parent = next((nodes[key[:n]] for n in range(len(key) - 1, 0, -1) if key[:n] in nodes), None)
            node = parent.add(item.spinner) if parent is not None else Tree(item.spinner, guide_style="dim")
            if parent is None:
                roots.append(node)
            nodes[key] = node
        counts = Text(f"{self.tally.counts()} · {now - self.tally.started:.1f}s", style="bold", no_wrap=True)
        return Group(*roots, counts)

    def pause(self) -> None:
        """Before a question at the terminal: the panel goes, so the question and its answer stay readable."""
        if self.running:
            self.live.stop()
            self.running = False

    def close(self) -> None:
        self.flight.clear()
        self.pause()

    def summary(self, result: Any, json_out: bool) -> None:
        """The lines that stay: run id, how it stopped, duration, counts, where the output went."""
        from rich.text import Text

        stopped = {"done": "done", "until": "done", "error": "failed", "interrupt": "waiting for a person"}.get(
            result.stop_reason, result.stop_reason
        )
        took = time.monotonic() - self.tally.started
        style = "green" if stopped == "done" else "red" if stopped == "failed" else "yellow"
        head = Text(f"run {result.run_id} ", style="bold")
        head.append(clean(stopped), style=f"bold {style}")
        head.append(f" in {took:.1f}s · {self.tally.counts()}")
        self.console.print(head)
        if result.stop_reason in ("done", "until", "max_steps") or json_out:
            what = "the run report (JSON)" if json_out else "output"
            self.console.print(Text(clean(f"{what}: {_stdout_target()}"), style="dim"))


def _stdout_target() -> str:
    """Where stdout goes: above at this terminal, or the file or pipe it was redirected to."""
    if sys.stdout.isatty():
        return "above (stdout)"
    try:
        target = os.readlink(f"/proc/self/fd/{sys.stdout.fileno()}")
    except (OSError, ValueError, AttributeError):
        return "stdout (redirected)"
    if target.startswith(("pipe:", "socket:")):
        return "stdout, to a pipe"
    return f"stdout, written to {target}"


def view_for(stderr: Any = None) -> PlainView | LiveView:
    """The live view at a terminal that can draw it, plain lines anywhere else."""
    stream = stderr or sys.stderr
    if stream.isatty() and os.environ.get("TERM", "") != "dumb":
        return LiveView()
    return PlainView()
