"""A run's life (start, resume, stop) → the journal rows that bracket it; the engine calls one hook per moment.

Kept out of engine.py so the engine reads as it did: `attach` gives a new run
its journal, `admit` commits the run's row before the first step, `replay`
rebuilds a stored run from its rows, `take_decisions` records a resume's
decisions, and `record_stop` writes the stop and the export snapshot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import AgentError
from ..outcomes import EFFECT_ACTIONS, Decision
from .run_journal import RunJournal
from .base import LeaseHeld
from .doctor import quarantined

if TYPE_CHECKING:
    from ..engine import Engine, Run
    from ..report import RunResult

__all__ = ["admit", "attach", "record_stop", "replay", "take_decisions"]


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
        journal.admitted = True
        journal.record("admit", None, {"entry": run.entry, "input": run.input})
        await journal.durable()


def replay(engine: Engine, run_id: str) -> Run | None:
    """A journaled run, ready to resume with its rows replayed; None when the journal does not know it.

    Raises AgentError("run_locked") when a live process holds the run's lease.
    """
    from ..engine import Run

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
    ctx = engine.new_context()
    if journal.base is not None:  # the run came in from a snapshot: start from it, replay what followed
        ctx.load_json(journal.base["context"])
        ctx.decisions = {k: Decision.of(v) for k, v in journal.base.get("decisions", {}).items()}
    ctx.journal = journal
    ctx.restore_providers(journal.provider_state)
    ctx.decisions.update({k: Decision.of(v) for k, v in journal.approvals.items()})
    answers = getattr(ctx, "answers", None)
    if answers is not None:
        answers.update({key: d["answer"] for key, d in journal.decisions_of("ask")})
    run = Run(engine, ctx, row["entry"], row["input"], run_id)
    run.last = row["result"]
    journal.record("resume", None, {"owner": store.owner})
    return run


def continue_snapshot(run: Run, snapshot: dict[str, Any]) -> None:
    """A run restored from a JSON snapshot (plait 0.1's store, an export) goes on in the journal.

    The snapshot is its first row (`base`), so a later resume starts from it and replays only what followed.
    """
    store = run.engine.store
    if store is None:
        return
    if store.run(run.id) is not None:
        raise AgentError("resume_invalid", f"run {run.id} is already in the journal {store.where}: resume it by its id")
    store.admit(run.id, run.entry, run.engine.spec, run.input)
    journal = RunJournal(store, run.id, [])
    journal.admitted = True
    journal.record("base", None, snapshot)
    store.flush()
    run.ctx.journal = journal


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
            journal.record_decision(
                "approval", {"action": d.action, "arguments": d.arguments, "message": d.message}, pid
            )
    for key, answer in (answers or {}).items():
        journal.record_decision("ask", {"answer": answer}, key)
    return approvals


def record_stop(run: Run, result: RunResult) -> None:
    """The stop row, the run's final status and its export snapshot, on disk before the caller hears of it."""
    journal = run.ctx.journal
    if journal is None or not journal.admitted:
        return
    report = result.report
    snapshot = run.snapshot()  # its `result` is result.to_dict()
    data = snapshot["result"]
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
        run.id, result.stop_reason, snapshot, report.model_calls, (report.input_tokens, report.output_tokens)
    )
    try:
        journal.store.settle()
    except Exception as exc:  # the disk is full or read-only: say so in the report rather than lose the result
        report.warn("run_not_stored", f"could not store the run: {exc}")
