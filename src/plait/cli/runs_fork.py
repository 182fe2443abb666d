"""`plait runs fork ID --at STEP`: a stored run → a new run replaying its history up to STEP, live from there on.

STEP is a position `plait trace` shows (a model call `PATH#N`, a tool call
`PATH#N:CALL_ID`, a decision `PATH`, `PATH#ITERATION` or `PATH[INDEX]`) or a
row number (`trace --json`'s `seq`); runtime/store/fork.py says what is kept.
The calls before STEP are served from the source's rows (no provider is asked,
no tool runs again); STEP and what follows run live, under the source's spec
or `--spec FILE`, with `--model NAME=MODEL` pointing a declared model at
another declared model or a `provider/model` target. The spec is checked as a
resume's is (src/plait/cli/pinned.py: exit 5 unless `--accept-changes`). Then
the fork goes on as `plait resume` would: the same output and exit codes.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
from pathlib import Path
from typing import Any

from plait.cli.runs import add_where, fail, read_run, store_url
from plait.term import clean


def register(actions: Any) -> None:
    fork = actions.add_parser(
        "fork",
        help="a new run replaying a run's history up to a step, live from there on",
        description="Start a new run whose history up to STEP is replayed from run ID's journal (cached model "
        "calls cost nothing, tool calls are not redone) and which runs live from STEP on. STEP is a position "
        "`plait trace ID` shows (PATH#N for a model call, PATH#N:CALL_ID for a tool call, a decision's PATH) or a "
        "row number (`plait trace ID --json`'s seq).",
    )
    fork.add_argument("id", metavar="ID", help="the run to fork (see `plait runs`)")
    fork.add_argument("--at", metavar="STEP", required=True, help="the step the fork runs live from")
    fork.add_argument("--spec", metavar="FILE", help="the spec to go on under (default: the one the run recorded)")
    fork.add_argument(
        "--model",
        metavar="NAME=MODEL",
        action="append",
        default=[],
        help="serve the declared model NAME by another declared model, or by a provider/model target",
    )
    fork.add_argument(
        "--accept-changes",
        action="store_true",
        help="go on under the spec even if it changed since the run started in ways that can affect the steps "
        "from STEP on (else exit 5, the changes listed)",
    )
    fork.add_argument("--json", action="store_true", help="print the run report as one JSON object")
    fork.add_argument("--events", action="store_true", help="print every event as a JSON line")
    add_where(fork)


def run(args: argparse.Namespace) -> int:
    from plait.cli import run as run_command
    from plait.cli.pinned import compare
    from plait.runtime.errors import AgentError
    from plait.runtime.store.fork import cut_at, fork, forked_rows

    got = read_run(args, args.id, lambda journal, row: (row, list(journal.events(args.id)), journal.pinned(args.id)))
    if isinstance(got, int):
        return got
    row, events, pin = got
    try:
        cut = cut_at(events, args.at)
    except AgentError as exc:
        return fail(exc.message)
    damaged = [e["seq"] for e in events if e["seq"] < cut and e.get("damaged")]
    if damaged:
        return fail(
            f"run {args.id} cannot be forked there: its rows {', '.join(map(str, damaged))} cannot be read "
            "(see `plait runs doctor`)"
        )
    spec = args.spec or row["spec"]
    if not spec:
        return fail(f"run {args.id} did not record its spec file; pass --spec FILE")
    if not Path(spec).is_file():
        return fail(f"the spec {spec} is gone; pass --spec FILE")
    engine = run_command.load_engine(spec, store_url(args))
    if isinstance(engine, int):
        return engine
    try:
        problem = override_models(engine.program, args.model)
        if problem is not None:
            return fail(problem)
        if pin is not None:
            history = [*forked_rows(events, cut), {"seq": 0, "kind": "fork", "key": None, "data": {"at": args.at}}]
            refused = compare(engine, args.id, pin, history, row["entry"], args.accept_changes)
            if refused is not None:
                return refused
        try:
            fresh = frozenset(item.partition("=")[0] for item in args.model)
            new_id = fork(engine, row, events, args.at, fresh)
        except AgentError as exc:
            return fail(exc.message)
        print(clean(f"plait: run {new_id} is a fork of run {args.id} at {args.at}"), file=sys.stderr)
        parser = argparse.ArgumentParser(prog="plait run")
        run_command.register(parser)
        argv = [spec, "--resume", new_id, *["--json"] * args.json, *["--events"] * args.events]
        return run_command.run_engine(engine, parser.parse_args(argv), False)
    finally:
        if engine.store is not None:
            with contextlib.suppress(Exception):
                engine.store.close()


def override_models(program: Any, items: list[str]) -> str | None:
    """Apply `--model NAME=MODEL` to the program's models; a message when one cannot be applied."""
    from plait.core.vocab import PROVIDERS

    for item in items:
        name, sep, target = item.partition("=")
        if not sep or not name or not target:
            return f"--model wants NAME=MODEL, got `{item}`"
        declared = program.models.get(name)
        if declared is None:
            return f"--model: the spec declares no model `{name}`; its models: {', '.join(program.models) or 'none'}"
        other = program.models.get(target)
        if other is not None:
            program.models[name] = dataclasses.replace(other, name=name)
            continue
        provider, slash, model_id = target.partition("/")
        if not slash or not model_id or provider not in PROVIDERS:
            return (
                f"--model {item}: `{target}` is neither a declared model nor PROVIDER/MODEL with a provider of: "
                f"{', '.join(PROVIDERS)}"
            )
        program.models[name] = dataclasses.replace(declared, provider=provider, model_id=model_id)
    return None


__all__ = ["override_models", "register", "run"]
