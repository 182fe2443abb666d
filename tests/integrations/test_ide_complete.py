"""src/plait/ide/complete.py: what completion offers at each kind of position, without a server."""

from __future__ import annotations

import pytest

from plait.ide.complete import complete
from plait.ide.workspace import Workspace
from plait.compiler.schema import SCHEMAS

MODELS = 'model fast = "openai/gpt-4o-mini"\n'
SPEC = """plait 0.2
import "models.plait"

input { topic: string, opts: object { depth: int } }

tool lookup "Look up a topic." {
  params { topic: string }
  run = python("kb:lookup")
}

step review {
  model  = fast
  prompt = "Review: {{input.topic}}"
  output { verdict: "ok" | "redo", notes: object { text: string } }
}

agent writer "Writes things." {
  model = fast
  tools = [lookup]
}

ask confirm "Go ahead?" { answer { ok: bool } }

chain main = review -> writer
"""
RUNNABLES = ["review", "writer", "confirm", "main"]


@pytest.fixture
def offered(project):
    project("models.plait", MODELS)
    path = project("spec.plait", SPEC).resolve()
    ws = Workspace()
    ws.set(path, SPEC)
    ws.project().declared(path)  # a parse that succeeds: what completion reads while the text is broken

    def at(typed: str) -> list[str]:
        """Labels offered with `typed` written (unfinished) at the end of the spec."""
        text = SPEC + typed
        ws.set(path, text)
        project_ = ws.project()
        return [c.label for c in complete(text, len(text), project_.declared(path), project_.seen_modules(path))]

    return at


@pytest.mark.parametrize(
    "typed, expected",
    [
        ("agent x {\n  model = ", ["fast"]),
        ("agent x {\n  tools = [", ["lookup", "writer"]),
        ("agent x {\n  tools = [lookup, ", ["lookup", "writer"]),
        ("agent x {\n  until = ", ["lookup"]),
        ("agent x {\n  approval = [", ["lookup"]),
        ("consolidate c {\n  agents = [", ["writer"]),
        ("consolidate c {\n  judge = ", ["writer", "fast"]),
        ("chain c = review -> ", RUNNABLES),
        ("chain c = parallel(review, ", RUNNABLES),
        ("parallel p = [", RUNNABLES),
        ("loop l = review -> writer {\n  until = ", RUNNABLES),
        ('route r on review.verdict {\n  "ok" -> ', [*RUNNABLES, "break"]),
        ("route r on ", ["input", "state", *RUNNABLES]),
        ("map m = review {\n  over = ", ["input", "state", *RUNNABLES]),
        ("tool t {\n  approval = ", ["required", "never"]),
        ("tool t {\n  idempotent = ", ["true", "false"]),
    ],
)
def test_names_of_the_kind_the_position_takes(offered, typed, expected):
    assert offered(typed) == expected


def test_attribute_keys_come_from_the_schema_and_skip_those_written(offered):
    keys = offered("agent x {\n  model = fast\n  ")
    assert keys == [k for k in SCHEMAS["agent"] if k != "model"] + ["output"]
    assert offered("tool t {\n  ") == [*SCHEMAS["tool"], "params"]
    assert offered("step s {\n  mo") == [*SCHEMAS["step"], "output"]  # the client filters by the prefix


def test_attribute_keys_carry_their_kind_records_doc_line():
    text = "tool t {\n  "
    items = {c.label: c for c in complete(text, len(text), {}, []) if c.kind == "attribute"}
    assert items["approval"].doc == (
        "`required`: every call waits for a person's decision; `amount > 100`: only a call it holds for."
    )
    assert items["timeout"].doc == "One call's deadline (default 60s)."
    assert all(c.doc for c in items.values()), [k for k, c in items.items() if not c.doc]


@pytest.mark.parametrize(
    "typed, expected",
    [
        ('step s {\n  prompt = "About {{', ["input", "state", *RUNNABLES]),
        ('step s {\n  prompt = "About {{review.', ["verdict", "notes"]),
        ('step s {\n  prompt = "About {{ review.notes.', ["text"]),
        ('step s {\n  prompt = """\n    About {{input.', ["topic", "opts"]),
        ('step s {\n  prompt = "About {{input.opts.de', ["depth"]),
        ('step s {\n  prompt = "About {{confirm.', ["ok"]),
        ('step s {\n  prompt = "About {{writer.', []),  # text output: no fields
        ("route r on review.", ["verdict", "notes"]),
    ],
)
def test_fields_after_a_name_are_its_declared_output(offered, typed, expected):
    assert offered(typed) == expected


def test_a_keyword_starting_a_line_of_a_block_string_is_not_a_declaration(offered):
    assert offered('step s {\n  prompt = """\nagent of change: {{review.') == ["verdict", "notes"]
    assert offered('step s {\n  system = """\nmodel answers\n"""\n  model = ') == ["fast"]


@pytest.mark.parametrize(
    "typed",
    # (A field's type, `output { a: `, offers the types: tests/integrations/test_ide_types.py.)
    ['step s {\n  prompt = "no template yet', "step s {\n  # {{review.", 'model m = "'],
)
def test_nothing_is_offered_where_no_name_goes(offered, typed):
    assert offered(typed) == []


MCP = """plait 0.2
mcp files "The file system." {
  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]
  tools   = [read_text_file, "list_directory"]
}
model fast = "openai/gpt-4o-mini"
"""


def _lock(folder, tools: list[str]) -> None:
    from plait.core.mcp_lock import LOCK_FILE, Lock, LockedServer, LockedTool, dumps

    server = LockedServer(
        name="files", fingerprint="sha256:x", tools=tuple(LockedTool(name=t, description=f"{t} tool") for t in tools)
    )
    (folder / LOCK_FILE).write_text(dumps(Lock({"files": server})))


@pytest.mark.parametrize("typed", ["agent x {\n  tools = [files.", "agent x {\n  until = files."])
def test_an_mcp_servers_tools_come_from_its_lock_within_its_allow_list(project, typed):
    path = project("spec.plait", MCP).resolve()
    ws = Workspace()
    ws.set(path, MCP)
    ws.project().declared(path)
    text = MCP + typed
    ws.set(path, text)

    def offered() -> list[tuple[str, str]]:
        p = ws.project()
        return [(c.label, c.detail) for c in complete(text, len(text), p.declared(path), p.seen_modules(path))]

    assert offered() == []  # no plait.lock yet: nothing is started to find out
    _lock(path.parent, ["read_text_file", "write_file", "list_directory"])
    assert offered() == [
        ("list_directory", "list_directory tool"),
        ("read_text_file", "read_text_file tool"),
    ]  # lock order


def test_mcp_servers_are_offered_where_tools_are(offered):
    # SPEC declares no mcp server: the list is what the schema's kinds allow among the declared names.
    assert "mcp" in SCHEMAS["agent"]["tools"].kinds and offered("agent x {\n  tools = [") == ["lookup", "writer"]


def test_every_position_of_every_example_gets_an_answer_not_an_exception():
    """Typing through each example (every prefix as the whole text) and asking everywhere never raises."""
    from pathlib import Path

    from plait.ide.refs import RenameError, references, rename_target, target_at
    from plait.dsl.loader import resolve_path

    examples = Path(__file__).parents[2] / "examples"
    # is_file: a run leaves each example's journal in a `.plait/` folder, which the glob also matches.
    for spec in sorted(p for p in examples.glob("*/*.plait") if p.is_file()):
        path = resolve_path(spec)
        text = spec.read_text()
        ws = Workspace()
        ws.set(path, text)
        project = ws.project()
        declared, modules = project.declared(path), project.seen_modules(path)
        for offset in range(0, len(text) + 1, 7):  # a prime stride: every kind of position, in a second or two
            complete(text[:offset], offset, declared, modules)
            complete(text, offset, declared, modules)
            target = target_at(project, path, offset)
            if target is not None:
                assert references(project, target)
            try:
                rename_target(project, path, offset)
            except RenameError as exc:
                assert str(exc)


def test_with_is_offered_as_a_block_and_its_values_are_paths(offered):
    assert ("with" in offered("step s {\n  ")) and offered("step s {\n  with { r: ") == [
        "input",
        "state",
        *RUNNABLES,
        "run",
    ]
    assert offered("step s {\n  with { r: review.") == ["verdict", "notes"]
    assert offered("step s {\n  with { r: review.verdict, n: review.notes.") == ["text"]
