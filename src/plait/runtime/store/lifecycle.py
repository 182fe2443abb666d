"""A run's life (start, resume, stop) → the journal rows that bracket it; the engine calls one hook per moment.

Kept out of engine.py so the engine reads as it did: `attach` gives a new run
its journal, `admit` commits the run's row before the first step, `restore`
is the one entry back into a stored run (`replay` rebuilds it from its rows),
`take_decisions` records a resume's decisions, and `record_stop` writes the
stop and the run's result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import AgentError
from ..outcomes import EFFECT_ACTIONS, Decision
from .run_journal import RunJournal
from .base import LeaseHeld
from .doctor import quarantined
from .export import export_pin, stored_form
from .snapshot import legacy_snapshot

if TYPE_CHECKING:
    from ..engine import Engine, Run
    from ..report import RunResult

__all__ = ["admit", "attach", "record_stop", "replay", "restore", "take_decisions"]


def attach(run: Run) -> Run:
    """A new run of an engine with a journal writes to it (admitted when it starts)."""
    store = run.engine.store
    if store is not None:
        run.ctx.journal = RunJournal(store, run.id)
    return run


async def admit(run: Run) -> None:
    """The run's row (and its lease) committed before its first step."""
    journal = run.ctx.journal
    if journal is not None and not journal.admitted:
        # Opened (and checked) before the first step: a journal that cannot be written fails the run here,
        # before any effect, not at its stop with every effect done and nothing recorded.
        journal.store.open()
        journal.store.admit(run.id, run.entry, run.engine.spec, run.input)
        if run.engine.pinned is not None:
            journal.store.pin(run.id, *run.engine.pinned)
        journal.admitted = True
        journal.record("admit", None, {"entry": run.entry, "input": run.input})
        await journal.durable()


def restore(engine: Engine, source: dict[str, Any] | str) -> Run:
    """The one way back into a stored run: its id in the journal, plait 0.1's `.plait/runs/<id>.json`, a snapshot or
    an export → a Run ready to resume. Whatever is not in the journal yet is put there first (export.stored_form),
    then every form resumes the same way, from the journal's rows (`replay`)."""
    store = engine.store
    if isinstance(source, str):
        replayed = replay(engine, source)
        if replayed is not None:
            return replayed
        legacy = legacy_snapshot(engine.program.base_dir, source) if engine.program.base_dir else None
        if legacy is None:
            raise AgentError("resume_invalid", f"no stored run `{source}`" + (f" in {store.where}" if store else ""))
        source = legacy
    run_id, entry, input, result, rows = stored_form(source)
    pin = export_pin(source)  # an export carries the spec its run started with: the import stays pinned to it
    if store is None:  # no journal to keep it in: the run goes on in memory, from its snapshot
        if any(r["kind"] != "base" for r in rows):
            raise AgentError("resume_invalid", f"run {run_id} is an export of a journal: resume it with a journal")
        return _rebuild(engine, run_id, entry, input, result, rows[0]["data"], None)
    try:
        store.import_run(run_id, entry, engine.spec, input, result, rows)
    except KeyError:
        raise AgentError(
            "resume_invalid", f"run {run_id} is already in the journal {store.where}: resume it by its id"
        ) from None
    if pin is not None:
        store.pin(run_id, *pin)
    replayed = replay(engine, run_id)
    assert replayed is not None  # just committed
    return replayed


def replay(engine: Engine, run_id: str) -> Run | None:
    """A journaled run, ready to resume with its rows replayed; None when the journal does not know it.

    Raises AgentError("run_locked") when a live process holds the run's lease.
    """
    store = engine.store
    if store is None or not store.exists():
        return None
    row = store.run(run_id)
    if row is None:
        return None
    events = list(store.events(run_id))
    damaged = [e["seq"] for e in events if e.get("damaged") or quarantined(e["data"])]
    lost = store.damaged(run_id)  # a segment line that may have been one of its rows
    if damaged or lost or row.get("damaged") or quarantined(row["input"]):
        # Replaying around a damaged or lost row could repeat an effect it recorded: a person looks first.
        why = (
            f"row{'s' if len(damaged) > 1 else ''} {', '.join(map(str, damaged))} in {store.where} cannot be read"
            if damaged
            else f"a journal line that may be one of its rows is damaged ({lost[0]})"
            if lost
            else f"its run row in {store.where} cannot be read"
        )
        raise AgentError(
            "resume_invalid",
            f"run {run_id} cannot be resumed: {why}; see `plait runs doctor` (and `plait trace` for what the run did)",
        )
    try:
        store.acquire(run_id)
    except LeaseHeld as held:
        raise AgentError("run_locked", str(held)) from None
    journal = RunJournal(store, run_id, events)
    run = _rebuild(engine, run_id, row["entry"], row["input"], row["result"], journal.base, journal)
    journal.record("resume", None, {"owner": store.owner})
    return run


def _rebuild(
    engine: Engine,
    run_id: str,
    entry: str,
    input: Any,
    result: Any,
    base: dict[str, Any] | None,
    journal: RunJournal | None,
) -> Run:
    """A run's context: the snapshot it came in from (`base`), then what its journal's rows recorded (None: a run
    restored in memory, from its snapshot alone)."""
    from ..engine import Run

    ctx = engine.new_context()
    if base is not None:  # the run came in from a snapshot: start from it, replay what followed
        ctx.load_json(base["context"])
        ctx.decisions = {k: Decision.of(v) for k, v in base.get("decisions", {}).items()}
    ctx.journal = journal
    if journal is not None:
        ctx.restore_providers(journal.provider_state)
        ctx.decisions.update({k: Decision.of(v) for k, v in journal.approvals.items()})
        answers = getattr(ctx, "answers", None)
        if answers is not None:
            answers.update({key: d["answer"] for key, d in journal.decisions_of("ask")})
    run = Run(engine, ctx, entry, input, run_id)
    run.last = result if isinstance(result, dict) else None
    return run


def take_decisions(
    run: Run, decisions: dict[str, Decision], answers: dict[str, Any] | None = None
) -> dict[str, Decision]:
    """Record a resume's decisions; returns the approval ones (retry/skip go to the effects ledger).

    retry/skip answer a call whose outcome is unknown; approve/edit/reject an
    approval: a decision for the wrong kind of pending call is refused.
    """
    journal = run.ctx.journal
    unknown = journal.unknown if journal is not None else {}
    misplaced = sorted(k for k, d in decisions.items() if (d.action in EFFECT_ACTIONS) != (k in unknown))
    if misplaced:
        raise AgentError(
            "resume_invalid",
            f"{', '.join(misplaced)}: approve, edit and reject answer an approval; "
            "retry and skip answer a tool call whose outcome is unknown",
        )
    if journal is None:
        return decisions
    approvals = {}
    for pid, d in decisions.items():
        if d.action in EFFECT_ACTIONS:
            attempt = unknown.pop(pid)[1]
            journal.effect_decisions[pid] = (d.action, attempt)
            journal.record_decision("effect", {"action": d.action, "attempt": attempt}, pid)
        else:
            approvals[pid] = d
            journal.record_decision("approval", d.to_json(), pid)
    for key, answer in (answers or {}).items():
        journal.record_decision("ask", {"answer": answer}, key)
    return approvals


def record_stop(run: Run, result: RunResult) -> None:
    """The stop row, the run's final status and its result, on disk before the caller hears of it."""
    journal = run.ctx.journal
    if journal is None or not journal.admitted:
        return
    report = result.report
    data = result.to_dict()
    journal.record(
        "stop",
        None,
        {
            "stop_reason": result.stop_reason,
            "pause_reason": result.pause_reason,
            "pending": data.get("pending", []),
            "error": data.get("error"),
        },
    )
    journal.store.stopped(
        run.id,
        result.stop_reason,
        data,
        report.model_calls,
        (report.input_tokens, report.output_tokens),
        report.cost,
    )
    try:
        journal.store.settle()
    except Exception as exc:  # the disk is full or read-only: say so in the report rather than lose the result
        report.warn("run_not_stored", f"could not store the run: {exc}")
