"""`plait run FILE` → compile, execute the entry runnable, report; exit 0/1/3/4.

Progress goes to stderr (at a TTY the live view of src/plait/cli/live.py
and a summary that stays, plain lines otherwise), the final output to stdout;
`--events` prints every event as a JSON line and `--json` the run report as
one object. An approval interrupt asks approve/edit/reject at a TTY, an `ask`
its question field by field (src/plait/cli/fields.py); elsewhere the pending
items are printed with a resume command naming them, and the exit code is 3.
A spec with an `input` block gets `--input` (text or JSON) or `--input-file`
(JSON) checked first: a mismatch, like a refused answer, is a usage error (2)
naming the field. Every run is journaled in `.plait/journal.db` beside the
spec as it goes (or in the PostgreSQL database `--store URL` names), so even a
run that was killed can be resumed. SIGTERM stops a run as Ctrl-C does: it is
stored as stopped and the exit code is 143.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shlex
import signal
import sys
from typing import Any

from plait.cli import (
    EXIT_BUDGET,
    EXIT_ERRORS,
    EXIT_HUMAN,
    EXIT_MAX_STEPS,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
    print_diagnostics,
)

from plait.core.defaults import MAX_INPUT_BYTES
from plait.term import clean, json_text

from .answers import ask_answers, asks_of, parse_answers, print_asks, split_ask_decisions
from .approval import ask_decisions, tool_schemas

EXIT_FOR = {
    "done": EXIT_OK,
    "until": EXIT_OK,
    "error": EXIT_ERRORS,
    "interrupt": EXIT_HUMAN,
    "pause": EXIT_HUMAN,
    "max_steps": EXIT_MAX_STEPS,
}


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="the .plait spec to run")
    parser.add_argument("stdin", nargs="?", choices=["-"], metavar="-", help="read the input from standard input")
    parser.add_argument("--entry", metavar="NAME", help="the runnable to start from (default: main, or the only one)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--input", metavar="TEXT", help="the input text")
    source.add_argument(
        "--input-file", metavar="F", help="read the input from a file (JSON when the spec declares `input`)"
    )
    parser.add_argument("--json", action="store_true", help="print the run report as one JSON object")
    parser.add_argument("--events", action="store_true", help="print every event as a JSON line")
    parser.add_argument(
        "--otel",
        action="store_true",
        help="export OpenTelemetry spans over OTLP/HTTP (needs plait[otel]; on anyway when "
        "OTEL_EXPORTER_OTLP_ENDPOINT is set)",
    )
    parser.add_argument(
        "--resume",
        metavar="RUN_ID",
        help="continue a stored run (interrupted, paused, failed or killed); runs are journaled in .plait/journal.db beside the spec",
    )
    from plait.cli.runs import add_store

    add_store(parser)
    parser.add_argument(
        "--decide",
        metavar="ID=ACTION",
        action="append",
        default=[],
        help="a decision for a pending call when resuming: ID=approve, ID=reject[:message], ID=edit:{json}; "
        "for a call whose outcome a crash left unknown: ID=retry or ID=skip; for an ask: NAME=JSON, as --answer",
    )
    parser.add_argument(
        "--record",
        metavar="FILE",
        help="write every model reply of the run into this cassette file (keyed by request; secrets masked)",
    )
    parser.add_argument(
        "--record-tools",
        action="store_true",
        help="with --record: keep each tool call's result in the cassette too, so a replay runs no tool",
    )
    parser.add_argument(
        "--cassette",
        metavar="FILE",
        help="serve every model reply from this cassette, offline; a request it has no recording of fails the run",
    )
    parser.add_argument(
        "--answer",
        metavar="NAME=JSON",
        action="append",
        default=[],
        help="an answer for a pending ask when resuming: the ask's name (or pending id) = JSON (text for a text answer)",
    )
    parser.add_argument(
        "--budget",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="the run's own budget (usd=2, tokens=N, model_calls=N, on_exceeded=pause|fail, unpriced=allow); "
        "when resuming a run stopped on a budget: that budget's new limits (usd=5)",
    )
    parser.add_argument(
        "--accept-changes",
        action="store_true",
        help="when resuming: go on under this spec even if it changed since the run started in ways that can "
        "affect what is left to run (else exit 5, the changes listed)",
    )


def run(args: argparse.Namespace) -> int:
    if args.stdin and (args.input is not None or args.input_file):
        return fail("give the input once: --input, --input-file or -", EXIT_USAGE)
    from plait.runtime import tracing

    traced = tracing.requested(getattr(args, "otel", False))
    if traced and (problem := tracing.missing()) is not None:
        if args.otel:
            return fail(problem, EXIT_USAGE)
        print(f"plait: warning: an OTLP endpoint is set but {problem}; the run is not traced", file=sys.stderr)
        traced = False
    from plait.cli.runs import store_url

    engine = load_engine(args.file, store_url(args))
    if isinstance(engine, int):
        return engine
    try:
        recorder = cassettes(engine, args)
        if isinstance(recorder, int):
            return recorder
        code = run_engine(engine, args, traced)
        if recorder is not None:
            code = save_cassette(recorder, engine, args) or code
        return code
    finally:
        if engine.store is not None:  # a run that never started (a bad input, a held lease) still lets go of it
            with contextlib.suppress(Exception):
                engine.store.close()


def run_engine(engine: Any, args: argparse.Namespace, traced: bool) -> int:
    if (args.answer or args.decide) and not args.resume:
        return fail("--decide and --answer answer a stopped run: give --resume RUN_ID too", EXIT_USAGE)
    if args.resume is not None:
        from plait.core.paths import run_id_problem

        # The store resolves an id; a path would load a snapshot from anywhere.
        if (problem := run_id_problem(args.resume)) is not None:
            return fail(problem, EXIT_USAGE)
    from plait.runtime.errors import AgentError

    try:
        text = read_input(args, typed=engine.program.input is not None)
        decide, asked = split_ask_decisions(args.decide, engine.program)
        decisions = parse_decisions(decide)
        answers = parse_answers([*args.answer, *asked], engine.program)
        budget = parse_budget(getattr(args, "budget", []))
    except (OSError, ValueError, AgentError) as exc:
        return fail(str(exc), EXIT_USAGE)

    if args.resume:
        from plait.runtime.pinning import repin

        from .pinned import check_spec

        refused = check_spec(engine, args.resume, getattr(args, "accept_changes", False))
        if refused is not None:
            return refused
    try:
        if args.resume:
            started = engine.restore(args.resume)
            repin(engine, started.id)
        else:
            started = engine.start(text, entry=args.entry, budget=budget)
    except (AgentError, KeyError, ValueError) as exc:
        # Another process holds the run (its lease in the journal): a usage error, like an unknown id.
        locked = getattr(exc, "kind", None) == "run_locked"
        return fail(str(exc).strip("'\""), EXIT_USAGE if args.resume is None or locked else EXIT_ERRORS)
    telemetry: Any = None
    provider: Any = None
    if traced:
        from plait.runtime import tracing
        from plait.runtime.telemetry import attach

        provider = tracing.exporting_provider()
        telemetry = attach(started, provider)
    from .live import view_for

    view = quiet_view() if args.events else view_for()
    from plait.runtime.store import JournalWriteError

    try:
        result = asyncio.run(
            drive(started, args, decisions if args.resume else None, engine, answers, view, budget=budget)
        )
    except AgentError as exc:  # a refused answer or decision changes nothing: the run still waits
        return fail(str(exc), EXIT_USAGE)
    except JournalWriteError as exc:  # a full disk mid-run: what was written stands, no step runs unrecorded
        return fail(
            f"{exc}; the run is kept up to its last written row: make room (or see `plait runs doctor`), then "
            f"`plait resume {started.id}`",
            EXIT_ERRORS,
        )
    except Terminated:
        return fail(f"terminated; the run is stored: resume with `plait resume {started.id}`", EXIT_TERMINATED)
    finally:
        if telemetry is not None and provider is not None:
            telemetry.close()  # spans a cancelled run left open end here, before the exporter flushes
            provider.shutdown()
    code = finish(result, args)
    view.summary(result, args.json)
    return code


def cassettes(engine: Any, args: argparse.Namespace) -> Any:
    """`--cassette`: serve the models from it; `--record`: the recorder to save after the run (or an exit code)."""
    record_to, replay_from = getattr(args, "record", None), getattr(args, "cassette", None)
    if record_to is None and replay_from is None and not getattr(args, "record_tools", False):
        return None
    from plait.runtime import cassettes

    if replay_from is not None:
        try:
            cassettes.replay(engine, cassettes.Cassette.load(replay_from))
        except cassettes.CassetteError as exc:
            return fail(str(exc), EXIT_USAGE)
    if getattr(args, "record_tools", False) and record_to is None:
        return fail("--record-tools keeps tool results in the cassette --record writes: give --record FILE", EXIT_USAGE)
    return cassettes.record(engine, tools=args.record_tools) if record_to is not None else None


def save_cassette(recorder: Any, engine: Any, args: argparse.Namespace) -> int:
    """Write what the run asked and was answered, whatever its end (a failed run's replies are data too)."""
    from pathlib import Path

    from plait.runtime.cassettes import CassetteError

    if not recorder.interactions and not recorder.tool_results:
        # A run that stopped before its first model call must not wipe a cassette recorded before.
        print(f"plait: no model call was made; {clean(args.record)} is left as it was", file=sys.stderr)
        return 0
    spec = Path(args.file).name
    try:
        recorder.cassette(spec=spec, entry=args.entry or engine.program.entry).save(args.record)
    except CassetteError as exc:
        return fail(str(exc), EXIT_ERRORS)
    tools = f" and {len(recorder.tool_results)} tool result(s)" if args.record_tools else ""
    print(
        f"plait: recorded {len(recorder.interactions)} model call(s){tools} into {clean(args.record)}", file=sys.stderr
    )
    return 0


def events_printer(event: Any) -> None:
    """`--events`: every event as a JSON line (JSON escapes every control character: exact and safe)."""
    print(json.dumps(event.to_dict(), default=str), flush=True)


def quiet_view() -> Any:
    from .live import PlainView

    return PlainView()


class Terminated(Exception):
    """The process got SIGTERM; the run was stopped (and stored) like a cancelled one."""


# -- shared with `plait chat` ----------------------------------------------------------


def fail(message: str, code: int = EXIT_ERRORS) -> int:
    print(f"plait: {clean(message)}", file=sys.stderr)  # messages quote files, inputs and servers
    return code


def compile_engine(file: str, store: str | None = None) -> Any:
    """(the engine for a spec, its compile), its runs kept in the store `store` names or beside it, pinned to the
    spec's text; or an exit code after printing why there is none: a spec with errors (1), a store URL plait cannot
    use (2). The store is not opened here."""
    from pathlib import Path

    import plait
    from plait.runtime.engine import Engine
    from plait.runtime.store import StoreError

    try:
        # A Path, so the compiler never mistakes a file name for spec text.
        compiled = plait.compile(Path(file))
    except (OSError, ValueError) as exc:
        return fail(f"cannot read {file}: {exc}")
    if not compiled.ok or compiled.graph is None:
        print_diagnostics(compiled.diagnostics, compiled.sources)
        return EXIT_ERRORS
    try:
        engine = Engine.from_graph(compiled.graph, **({"store": store} if store else {}))
    except StoreError as exc:
        return fail(str(exc), EXIT_USAGE)
    engine.spec = str(Path(file).resolve())  # journaled with each run, so `plait resume ID` finds the spec
    from plait.compiler.pin import pin_of

    engine.pinned = pin_of(compiled.sources, engine.spec)  # and its text: a resume compares it with the spec then
    return engine, compiled


def load_engine(file: str, store: str | None = None, *, journaled: bool = True) -> Any:
    """The engine for a spec (its runs kept in the store `store` names, or beside it), or an exit code after printing
    why there is none: a spec with errors (1), a store that cannot be opened (2). `journaled=False` (chat, whose
    conversation is its own file) leaves the run store unopened."""
    loaded = compile_engine(file, store)
    if isinstance(loaded, int):
        return loaded
    engine = loaded[0]
    from plait.runtime.store import StoreError

    try:
        if engine.store is not None and (journaled or store):
            # Opened and checked now, before any step: a bad URL, a server that is down, refused credentials, a
            # journal.db that is not a database or is from a newer plait is one line (exit 2), not a run whose
            # effects all happen and then cannot be recorded.
            engine.store.open()
            if problems := engine.store.problems():  # damage elsewhere in the journal: this run goes on
                more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
                print(f"plait: warning: {clean(problems[0])}{more}; see `plait runs doctor`", file=sys.stderr)
    except StoreError as exc:
        return fail(str(exc), EXIT_USAGE)
    return engine


def read_input(args: argparse.Namespace, typed: bool = False) -> Any:
    """The run's input: text; for a spec that declares `input` (`typed`), `--input-file` holds JSON."""
    if args.input is not None:
        return args.input
    if args.input_file:
        try:
            with open(args.input_file, encoding="utf-8") as fh:
                text = bounded(fh.read(MAX_INPUT_BYTES + 1), f"the input file `{args.input_file}`")
        except OSError as exc:
            raise OSError(f"cannot read the input file `{args.input_file}`: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise ValueError(f"the input file `{args.input_file}` is not UTF-8 text") from None
        if not typed:
            return text
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ValueError(
                f"the input file `{args.input_file}` is not JSON ({exc}); the spec's `input` block wants an object"
            ) from None
    if args.stdin:
        return bounded(sys.stdin.read(MAX_INPUT_BYTES + 1), "the input on stdin")
    return ""


def bounded(text: str, what: str) -> str:
    """`text`, read as at most one character past the input cap: more characters than the cap is more bytes than
    the cap, so a bigger file or stream is refused here, never held whole (the engine checks the JSON of the rest)."""
    if len(text) <= MAX_INPUT_BYTES:
        return text
    raise ValueError(
        f"input_too_large: {what} is over {MAX_INPUT_BYTES // 2**20} MiB ({MAX_INPUT_BYTES:,} bytes), the most a run "
        "takes, as it is stored with the run: pass the file's path in the input instead, for a tool to read"
    )


def parse_decisions(items: list[str]) -> dict[str, Any]:
    from plait.runtime.outcomes import Decision

    decisions = {}
    for item in items:
        pid, sep, action = item.rpartition("=")
        if not sep or not pid:
            raise ValueError(f"--decide wants ID=ACTION, got `{item}`")
        verb, _, rest = action.partition(":")
        if verb == "edit":
            arguments = json.loads(rest) if rest else None
            decisions[pid] = Decision("edit", arguments)
        elif verb == "reject":
            decisions[pid] = Decision("reject", message=rest or None)
        else:
            decisions[pid] = Decision(verb)
    return decisions


def parse_budget(items: list[str]) -> dict[str, str] | None:
    """`--budget usd=5 --budget tokens=none` → {"usd": "5", "tokens": "none"}, checked (ValueError when bad)."""
    if not items:
        return None
    from plait.core.budget import Budget

    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise ValueError(f"--budget wants KEY=VALUE (usd=2, tokens=50000, model_calls=20), got `{item}`")
        out[key.strip()] = value.strip()
    Budget().with_items(out)
    return out


def interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def print_pending(pending: list[Any], file: str | None = None, run_id: str | None = None) -> None:
    asks = asks_of(pending)
    calls = [p for p in pending if p not in asks]
    if asks:
        print_asks(asks, file, run_id)
    if not calls:
        return
    print("plait: the run is waiting for approval of:", file=sys.stderr)
    for p in calls:
        print(
            clean(
                f"  {p.id}  {p.tool}({json.dumps(p.arguments)})  agent={p.agent}{f' branch={p.branch}' if p.branch else ''}"
            ),
            file=sys.stderr,
        )
    if file and run_id:
        decide = " ".join(shlex.quote(f"--decide={p.id}=approve") for p in calls)
        print(
            clean(
                f"resume with: plait run {file} --resume {run_id} {decide}"
                "  (or ID=approve_same, ID=reject[:message], ID=edit:JSON)"
            ),
            file=sys.stderr,
        )


def fit(line: str, columns: int) -> str:
    """One terminal row: a status line that wrapped could not be erased by `\\r` and would stay behind."""
    width = max(columns - 1, 10)  # the last column would make some terminals wrap early
    return line if len(line) <= width else line[: width - 1] + "…"


async def drive(
    started: Any,
    args: argparse.Namespace,
    decisions: dict[str, Any] | None,
    engine: Any,
    answers: dict[str, Any] | None = None,
    view: Any = None,
    *,
    budget: dict[str, Any] | None = None,
) -> Any:
    progress = view if view is not None else quiet_view()
    started.ctx.bus.listen(events_printer if args.events else progress)
    # Deltas only cost something when someone watches them.
    started.ctx.stream = args.events
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    terminated: list[bool] = []

    def on_sigterm() -> None:
        terminated.append(True)
        if task is not None:
            task.cancel("SIGTERM")  # the stored run says what stopped it

    try:
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
        pass
    try:
        result = await (started.resume(decisions, answers=answers, budget=budget) if decisions is not None else started)
        while result.stop_reason == "interrupt" and interactive() and not args.json and not args.events:
            progress.pause()
            calls = [p for p in result.pending if p not in asks_of(result.pending)]
            try:
                decided, answered = (
                    ask_decisions(calls, tool_schemas(engine.program)),
                    ask_answers(result.pending, engine.program),
                )
            except EOFError:  # input ended mid-question: everything stays pending (exit 3)
                print(file=sys.stderr)
                break
            result = await started.resume(decided, answers=answered)
        return result
    except asyncio.CancelledError:
        if terminated:
            raise Terminated() from None
        raise
    finally:
        try:
            loop.remove_signal_handler(signal.SIGTERM)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
        progress.close()
        await engine.aclose()


def finish(result: Any, args: argparse.Namespace) -> int:
    code = EXIT_FOR.get(result.stop_reason, EXIT_ERRORS)
    if result.stop_reason == "error" and getattr(result.error, "kind", None) == "budget_exceeded":
        code = EXIT_BUDGET
    if args.json:
        print(json_text(json.dumps(result.to_dict(), default=str, ensure_ascii=False)))
    elif not args.events and result.stop_reason in ("done", "until", "max_steps"):
        from plait.runtime.templates import as_text

        print(clean(as_text(result.output)))
    if result.stop_reason == "error":
        error = result.error
        fail(
            f"run failed: {getattr(error, 'kind', type(error).__name__)}: {getattr(error, 'message', error)} (run {result.run_id})"
        )
    elif result.stop_reason == "interrupt":
        print_pending(result.pending, args.file, result.run_id)
    elif result.stop_reason == "pause":
        fail(
            f"the run paused{f': {result.pause_reason}' if result.pause_reason else ''} (resume with --resume {result.run_id})"
        )
    elif result.stop_reason == "max_steps":
        print("plait: the run stopped at max_steps", file=sys.stderr)
    return code
