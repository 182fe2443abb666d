"""src/plait/core/kinds/: each declaration kind is one record whose fields carry their schema, read by every stage."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from plait.core import kinds
from plait.core.kinds import KINDS, spec_attrs

LANGUAGE = Path(__file__).resolve().parents[2] / "docs" / "language.md"
ISSUE_KINDS = ("model", "tool", "mcp", "agent", "step", "chain", "parallel", "consolidate", "route", "loop", "map")
ISSUE_KINDS += ("ask", "input", "state", "thread")
# Where a kind's reference starts: a `### \`kind NAME` heading or a `- **\`kind NAME` bullet.
_START = r"^(?:#{{3,4}} |- \*\*)`{kind} "
_NEXT = re.compile(r"^(?:#{1,4} |- \*\*`)", re.M)


def test_every_kind_is_one_record_in_its_own_module():
    assert set(KINDS) == set(ISSUE_KINDS)
    for name, cls in KINDS.items():
        assert cls.kind == name
        assert cls.__module__ == f"plait.core.kinds.{name}", name


def _section(text: str, kind: str) -> str:
    start = re.search(_START.format(kind=kind), text, re.M)
    assert start, f"docs/language.md has no reference for `{kind}`"
    end = _NEXT.search(text, start.end())
    return text[start.start() : end.start() if end else len(text)]


@pytest.mark.parametrize("kind", kinds.DECLARED)
def test_the_language_reference_names_every_attribute_its_kind_record_declares(kind):
    """Adding an attribute to a kind record without documenting it fails here (docs/language.md, its kind's entry)."""
    section = _section(LANGUAGE.read_text(encoding="utf-8"), kind)
    code = " ".join(re.findall(r"`([^`]+)`", section))
    missing = [name for name in spec_attrs(KINDS[kind]) if not re.search(rf"(?<![\w.]){name}(?!\w)", code)]
    assert not missing, f"docs/language.md's `{kind}` entry does not name: {missing}"


def test_every_attribute_has_a_doc_line():
    undocumented = [(k, name) for k in kinds.DECLARED for name, attr in spec_attrs(KINDS[k]).items() if not attr.doc]
    assert not undocumented


def test_every_runnable_kind_has_one_executor_and_one_program_table():
    from plait.core.kinds import RUNNABLE_KINDS
    from plait.runtime.compose import EXECUTORS
    from plait.runtime.program import RUNNABLE_TABLES

    assert set(EXECUTORS) == set(RUNNABLE_KINDS) == {kind for kind, _ in RUNNABLE_TABLES}


def test_the_program_holds_each_kinds_own_record():
    """What the runtime runs is the graph's record of each kind, never a copy made for the runtime."""
    import typing

    from plait.runtime.program import RUNNABLE_TABLES, Program

    hints = typing.get_type_hints(Program)
    for kind, table in (*RUNNABLE_TABLES, ("model", "models"), ("tool", "tools"), ("mcp", "mcp")):
        assert hints[table] == dict[str, KINDS[kind]], (table, hints[table])


RUNTIME = Path(__file__).resolve().parents[2] / "src" / "plait" / "runtime"


def _copies(root: Path) -> list[str]:
    """Classes under `root` with a declaration's `name` and half or more of a kind's attributes: a copy of its record."""
    import ast

    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            own = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
            for kind, cls in KINDS.items():
                attrs = set(kinds.metas(cls)) - {"output"}
                if "name" in own and len(attrs) >= 4 and len(own & attrs) * 2 >= len(attrs):
                    found.append(f"{path.relative_to(root).as_posix()}: {node.name} copies {kind}")
    return found


def test_no_runtime_class_copies_a_kinds_record():
    assert _copies(RUNTIME) == []


def test_a_copy_of_a_kinds_fields_is_found(tmp_path):
    fields = "\n".join(f"    {name}: object = None" for name in kinds.metas(KINDS["agent"]))
    (tmp_path / "config.py").write_text(f"class AgentConfig:\n    name: str\n{fields}\n")
    (tmp_path / "toolset.py").write_text("class Toolset:\n    name: str\n    tools: dict\n    approval: frozenset\n")
    found = _copies(tmp_path)
    assert "config.py: AgentConfig copies agent" in found and not [f for f in found if "Toolset" in f]
