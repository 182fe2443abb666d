"""Builders for durable-run tests: journaled engines over scripted models, and journal reads."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from plait.runtime.config import AgentConfig, ModelConfig, Program, ToolConfig
from plait.runtime.engine import Engine
from plait.runtime.providers.scripted import ScriptedProvider
from plait.runtime.store import SQLiteJournal, journal_path


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def tool(name: str, fn: Any, **kw: Any) -> ToolConfig:
    props = kw.pop("props", {})
    params = {"type": "object", "properties": {k: {"type": t} for k, t in props.items()}, "required": list(props)}
    return ToolConfig(name, f"the {name} tool", params, {"type": "function"}, fn=fn, **kw)


def engine(project: Path, replies: list[dict[str, Any]], tools: dict[str, ToolConfig], **agent_kw: Any) -> Engine:
    """A journaled engine (the project's .plait/journal.db) whose one agent `main` uses `tools`."""
    program = Program(entry="main", base_dir=str(project))
    config = ModelConfig("m", "scripted", "m")
    program.models["m"] = config
    program.tools.update(tools)
    program.agents["main"] = AgentConfig("main", "m", tools=tuple(tools), **agent_kw)
    return Engine(
        program, providers={"m": ScriptedProvider(config, replies=replies)}, store=SQLiteJournal(journal_path(project))
    )


def go(awaitable: Any) -> Any:
    async def main() -> Any:
        return await awaitable

    return asyncio.run(main())


def rows(project: Path, run_id: str | None = None) -> list[tuple[Any, ...]]:
    """(run_id, seq, kind, key, data) of every journal row, read through a connection of its own."""
    conn = sqlite3.connect(journal_path(project))
    try:
        sql = (
            "SELECT run_id, seq, kind, key, data FROM events"
            + (" WHERE run_id = ?" if run_id else "")
            + " ORDER BY run_id, seq"
        )
        return conn.execute(sql, (run_id,) if run_id else ()).fetchall()
    finally:
        conn.close()


def kinds(project: Path, run_id: str) -> list[str]:
    return [r[2] for r in rows(project, run_id)]
