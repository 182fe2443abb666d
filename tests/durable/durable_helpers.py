"""Builders for durable-run tests: journaled engines over scripted models, and journal reads, for either backend."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plait.core.kinds import ModelNode
from plait.core.kinds import ToolNode
from plait.runtime.function_tool import FunctionTool
from plait.core.kinds import AgentNode
from plait.runtime.program import Program
from plait.runtime.engine import Engine
from plait.runtime.providers.scripted import ScriptedProvider
from plait.runtime.store import Journal, journal_path, open_store


@dataclass
class Backend:
    """Where a test's runs are: the SQLite journal in `project`, or the PostgreSQL database `url` names."""

    project: Path
    url: str | None = None
    #: Every journal `open` made, closed when the test ends (an engine a test drops still holds a connection).
    opened: list[Journal] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "postgres" if self.url else "sqlite"

    def open(self) -> Journal:
        """A journal of its own (another connection), as another process would open it."""
        journal = open_store(self.url, self.project)
        self.opened.append(journal)
        return journal

    def close(self) -> None:
        for journal in self.opened:
            try:
                journal.close()
            except Exception:  # a test that cut a write off, or dropped the schema's tables on purpose
                pass

    def cli(self) -> list[str]:
        """What a `plait` command needs to use this store."""
        return ["--store", self.url] if self.url else []

    def take_in(self) -> None:
        """Another process opens the journal: what live or dead writers left in their segments goes into the tables."""
        other = open_store(self.url, self.project)
        try:
            other.open()  # SQLite: opening takes every segment in
        finally:
            other.close()

    def sql(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """One statement (`?` placeholders) through a connection of its own, committed; the rows it returns."""
        if self.url is None:
            conn = sqlite3.connect(journal_path(self.project))
            try:
                found = conn.execute(statement, params).fetchall()
                conn.commit()
                return found
            finally:
                conn.close()
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            cursor = conn.execute(statement.replace("?", "%s"), params)
            return cursor.fetchall() if cursor.description else []


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def tool(name: str, fn: Any, **kw: Any) -> ToolNode:
    props = kw.pop("props", {})
    params = {"type": "object", "properties": {k: {"type": t} for k, t in props.items()}, "required": list(props)}
    return FunctionTool(
        name=name, description=f"the {name} tool", parameters=params, run={"type": "function"}, fn=fn, **kw
    )


def engine(backend: Backend, replies: list[dict[str, Any]], tools: dict[str, ToolNode], **agent_kw: Any) -> Engine:
    """A journaled engine (the backend's store) whose one agent `main` uses `tools`."""
    program = Program(entry="main", base_dir=str(backend.project))
    config = ModelNode(name="m", provider="scripted", model_id="m")
    program.models["m"] = config
    program.tools.update(tools)
    program.agents["main"] = AgentNode(name="main", model="m", tools=tuple(tools), **agent_kw)
    return Engine(program, providers={"m": ScriptedProvider(config, replies=replies)}, store=backend.open())


def go(awaitable: Any) -> Any:
    async def main() -> Any:
        return await awaitable

    return asyncio.run(main())


def rows(backend: Backend, run_id: str | None = None) -> list[tuple[Any, ...]]:
    """(run_id, seq, kind, key, data) of every durable journal row, read through a connection of its own."""
    backend.take_in()
    sql = "SELECT run_id, seq, kind, key, data FROM events" + (" WHERE run_id = ?" if run_id else "")
    return backend.sql(sql + " ORDER BY run_id, seq", (run_id,) if run_id else ())


def kinds(backend: Backend, run_id: str) -> list[str]:
    return [r[2] for r in rows(backend, run_id)]
