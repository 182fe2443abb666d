"""The examples: every one checks clean (no warnings), together they use every construct
of LANGUAGE.md, and the briefing runs to the end offline on the scripted provider."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import plait
from plait.compiler.schema import PROVIDERS, SCHEMAS
from plait.dsl import ast
from plait.dsl.discover import spec_files

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SPECS = spec_files(EXAMPLES)


def _compiled() -> dict[Path, object]:
    results = {path: plait.compile(path) for path in SPECS}
    imported = {
        Path(f).resolve() for path, r in results.items() for f in r.sources if Path(f).resolve() != path.resolve()
    }
    # A file another example imports is checked as part of its importer, as `plait check DIR` does.
    return {path: r for path, r in results.items() if path.resolve() not in imported}


ROOTS = _compiled()


def test_there_are_five_examples():
    assert len(ROOTS) >= 5


@pytest.mark.parametrize("path", list(ROOTS), ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_example_checks_clean(path):
    result = ROOTS[path]
    assert result.diagnostics == [], [f"{d} {d.message}" for d in result.diagnostics]
    assert result.graph.entry is not None


@pytest.mark.slow
def test_check_strict_on_the_examples_folder():
    done = subprocess.run(
        [sys.executable, "-m", "plait", "check", "--strict", str(EXAMPLES)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


# --- every construct is used somewhere ------------------------------------------------------


def _type_tags(t: ast.TypeExpr) -> set[str]:
    tags = {f"type:{t.name if t.form == 'name' else t.form}"} | ({"type:optional"} if t.optional else set())
    for inner in (*t.args, *(f.type for f in t.fields)):
        tags |= _type_tags(inner)
    return tags


def _value_tags(value: ast.Node) -> set[str]:
    tags: set[str] = set()
    if isinstance(value, ast.Duration):
        tags.add("duration:" + value.raw.lstrip("0123456789."))
    elif isinstance(value, ast.Number) and value.value < 0:
        tags.add("number:negative")
    elif isinstance(value, ast.Bool):
        tags.add(f"bool:{str(value.value).lower()}")
    elif isinstance(value, ast.String):
        tags |= {"string:block"} if value.block else set()
        tags |= {"template:escape"} if "\\{{" in value.value else set()
        tags |= {"template:branch"} if "{{input." in value.value else set()
        tags |= {"template:state"} if "{{state." in value.value else set()
    elif isinstance(value, ast.Succeeded):
        tags.add("until:succeeded")
    elif isinstance(value, ast.Call):
        tags.add(f"call:{value.func.name}")
        for arg in value.args:
            tags |= _value_tags(arg)
        for entry in value.block.attributes if value.block else ():
            tags |= {f"http:{entry.key.name}"} | _value_tags(entry.value)
    elif isinstance(value, ast.ListValue):
        for item in value.items:
            tags |= _value_tags(item)
    elif isinstance(value, ast.Block):
        tags.add("map")
        for entry in value.attributes:
            tags |= _value_tags(entry.value)
    return tags


def _decl_tags(decl: ast.Node) -> set[str]:
    tags = {f"decl:{decl.kind}"}
    if isinstance(decl, ast.ModelDecl):
        tags.add("provider:" + decl.target.value.partition("/")[0])
    if isinstance(decl, ast.ChainDecl):
        tags |= {"chain:inline-parallel" for e in decl.elements if isinstance(e, ast.InlineParallel)}
    if getattr(decl, "description", None) is not None:
        tags.add(f"{decl.kind}:description")
    body = getattr(decl, "body", None)
    if not isinstance(body, ast.Block):  # a loop's or a map's body is its elements; its attributes are in `block`
        body = getattr(decl, "block", None)
    for entry in body.attributes if body else ():
        tags |= {f"{decl.kind}.{entry.key.name}"} | _value_tags(entry.value)
        if entry.key.name == "until":
            tags.add("until:list" if isinstance(entry.value, ast.ListValue) else "until:name")
        if entry.key.name == "api" and isinstance(entry.value, ast.String):
            tags.add(f"api:{entry.value.value}")
    for param in (p for params in (body.params if body else ()) for p in params.params):
        tags |= _type_tags(param.type)
        if param.description is not None:
            tags.add("param:description")
        if param.default is not None:
            tags |= {"param:default"} | _value_tags(param.default)
    return tags


def test_examples_use_every_construct():
    used: set[str] = set()
    for result in ROOTS.values():
        for module in _modules(result):
            used |= {"version"} if module.version is not None else set()
            for decl in module.declarations:
                used |= _decl_tags(decl)
        used.add("entry:main" if result.graph.entry == "main" else "entry:only")
    expected = {f"{kind}.{attr}" for kind, attrs in SCHEMAS.items() for attr in attrs if kind != "parallel"}
    # examples/files runs its MCP server over stdio, offline; `url` and `headers` (streamable HTTP) need a server
    # listening, which tests/mcp starts on loopback.
    expected -= {"mcp.url", "mcp.headers"}
    expected |= {"decl:mcp", "mcp:description"}
    expected |= {"parallel.on_error", "version", "entry:main", "entry:only", "map", "string:block", "number:negative"}
    expected |= {f"provider:{p}" for p in PROVIDERS} | {"api:responses"}
    expected |= {f"decl:{k}" for k in ("model", "tool", "agent", "step", "chain", "parallel", "consolidate", "import")}
    expected |= {f"{k}:description" for k in ("tool", "agent", "step", "consolidate")}
    expected |= {
        "type:string",
        "type:int",
        "type:float",
        "type:bool",
        "type:generic",
        "type:object",
        "type:union",
        "type:optional",
    }
    expected |= {"param:description", "param:default", "bool:true", "bool:false"}
    expected |= {"call:python", "call:http", "call:env", "call:keep_last", "http:headers", "http:body"}
    expected |= {"until:name", "until:list", "until:succeeded", "chain:inline-parallel"}
    expected |= {"duration:ms", "duration:s", "duration:m", "duration:h"}
    expected |= {"template:branch", "template:state", "template:escape"}
    assert expected - used == set()


def _modules(result) -> list[ast.Module]:
    modules = []
    for source in result.sources.values():
        module, _ = plait.parse(source.text, source.path)
        modules.append(module)
    return modules


# --- the offline example runs -----------------------------------------------------------------


@pytest.mark.slow
def test_briefing_runs_offline_to_the_end(tmp_path):
    folder = shutil.copytree(
        EXAMPLES / "briefing", tmp_path / "briefing", ignore=shutil.ignore_patterns(".plait", "__pycache__")
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "plait",
            "run",
            str(folder / "briefing.plait"),
            "--input",
            "the Lisbon office move",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["stop_reason"] == "done"
    assert "Avenida da Liberdade" in report["output"]
