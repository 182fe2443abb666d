"""Code steps: `run = python("mod:fn")` calls the function with the step's input; `output` checks what it returns."""

from __future__ import annotations

import sys
import textwrap

from plait.core.kinds import StepNode
from plait.core.types import INT, TEXT, FieldType, ObjectType
from plait.core.kinds import ChainNode
from runtime_helpers import code, go, make, program


SUM = ObjectType((FieldType("sum", INT),))


def spec(tmp_path, source: str, **kw):
    name = f"codemod_{abs(hash(str(tmp_path))) % 10**8}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    return name, program(steps=[code("main", f"{name}:fn", tmp_path, **kw)])


def test_a_record_input_arrives_as_keyword_arguments(tmp_path):
    _, p = spec(
        tmp_path,
        """
    def fn(a, b):
        return {"sum": a + b}
    """,
        output=SUM,
    )
    assert go(make(models={}, agents={}, program=p).run({"a": 2, "b": 3})).output == {"sum": 5}


def test_text_arrives_as_input_and_async_functions_are_awaited(tmp_path):
    _, p = spec(
        tmp_path,
        """
    import asyncio
    async def fn(input):
        await asyncio.sleep(0)
        return input[::-1]
    """,
    )
    assert go(make(models={}, agents={}, program=p).run("abc")).output == "cba"


def test_the_module_is_imported_only_when_the_step_runs(tmp_path):
    name, p = spec(
        tmp_path,
        """
    def fn(input):
        return "ran"
    """,
    )
    engine = make(models={}, agents={}, program=p)
    assert name not in sys.modules and not any(name in str(m) for m in sys.modules)
    assert go(engine.run("x")).output == "ran"


def test_a_return_value_that_misses_output_fails_with_output_invalid(tmp_path):
    _, p = spec(
        tmp_path,
        """
    def fn(input):
        return {"sum": "five"}
    """,
        output=SUM,
    )
    result = go(make(models={}, agents={}, program=p).run("x"))
    assert result.error.kind == "output_invalid" and "$.sum: expected integer, got string" in result.error.message


def test_absent_optional_fields_become_null_and_render_empty(tmp_path):
    _, p = spec(
        tmp_path,
        """
    def fn(input):
        return {"name": "ann"}
    """,
        output=ObjectType((FieldType("name", TEXT), FieldType("nick", TEXT, optional=True))),
    )
    p.steps["show"] = StepNode(name="show", model="m", prompt="[{{input.name}}|{{input.nick}}]")
    p.chains["chain"] = ChainNode(name="chain", elements=("main", "show"))
    engine = make(models={"m": {"show": [{"text": "ok"}]}}, agents={}, program=p, entry="chain")
    result = go(engine.run("x"))
    assert result.output == "ok" and engine.providers["m"].requests[0]["messages"][0].text == "[ann|]"


def test_a_raise_and_a_missing_function_fail_naming_the_step(tmp_path):
    _, p = spec(
        tmp_path,
        """
    def fn(input):
        raise RuntimeError("disk full")
    """,
    )
    result = go(make(models={}, agents={}, program=p).run("x"))
    assert (
        result.error.kind == "code_step_failed" and result.error.message == "step `main` raised RuntimeError: disk full"
    )
    (tmp_path / "other").mkdir()
    name, p = spec(tmp_path / "other", "x = 1\n")
    result = go(make(models={}, agents={}, program=p).run("x"))
    assert result.error.kind == "code_step_import" and f"module `{name}` has no function `fn`" in result.error.message
