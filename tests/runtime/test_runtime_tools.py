"""Tools: python (sync/async, import on first use, spec dir first), http via httpx on loopback, timeouts, failures."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from plait.core.kinds import ToolNode
from plait.runtime.function_tool import FunctionTool
from plait.runtime.tools import ToolRunner
from runtime_helpers import go, schema


def python_tool(tmp_path, target, **kw) -> ToolNode:
    return ToolNode(
        name=target.split(":")[1],
        description="t",
        parameters=schema(x="string") if "x" in kw.pop("params", "x") else {},
        run={"type": "python", "target": target, "base_dir": str(tmp_path)},
        **kw,
    )


def test_python_tools_sync_and_async_import_on_first_use_from_the_spec_dir(tmp_path):
    (tmp_path / "rt_tools_mod.py").write_text(
        "import asyncio, pathlib\n"
        "pathlib.Path(__file__).with_name('imported.flag').write_text('yes')\n"
        "def shout(x): return x.upper()\n"
        "async def later(x):\n    await asyncio.sleep(0)\n    return {'echo': x}\n"
    )
    runner = ToolRunner()
    sync_tool = python_tool(tmp_path, "rt_tools_mod:shout")
    assert not (tmp_path / "imported.flag").exists()  # nothing imported before the first call
    outcome = go(runner.execute(sync_tool, {"x": "hi"}, 5))
    assert (outcome.content, outcome.is_error) == ("HI", False) and (tmp_path / "imported.flag").exists()
    assert sys.path[0] == str(tmp_path)
    outcome = go(runner.execute(python_tool(tmp_path, "rt_tools_mod:later"), {"x": "a"}, 5))
    assert json.loads(outcome.content) == {"echo": "a"}


def test_missing_module_or_function_is_a_clear_error_result(tmp_path):
    runner = ToolRunner()
    outcome = go(runner.execute(python_tool(tmp_path, "rt_no_such_module_xyz:f"), {"x": "1"}, 5))
    assert outcome.is_error and "cannot import module `rt_no_such_module_xyz`" in outcome.content
    (tmp_path / "rt_tools_empty.py").write_text("")
    outcome = go(runner.execute(python_tool(tmp_path, "rt_tools_empty:gone"), {"x": "1"}, 5))
    assert outcome.is_error and "has no function `gone`" in outcome.content


def test_raising_and_slow_tools_become_error_results():
    def boom(x):
        raise RuntimeError("disk full")

    async def slow(x):
        import asyncio

        await asyncio.sleep(5)

    runner = ToolRunner()
    outcome = go(runner.execute(FunctionTool(name="boom", fn=boom), {"x": "1"}, 5))
    assert outcome.is_error and outcome.content == "tool `boom` failed: RuntimeError: disk full"
    outcome = go(runner.execute(FunctionTool(name="slow", fn=slow), {"x": "1"}, 0.05))
    assert outcome.is_error and "timed out after 0.05s" in outcome.content


class _Handler(BaseHTTPRequestHandler):
    def _reply(self, body: bytes, status: int = 200):
        self.send_response(status)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.startswith("/missing"):
            return self._reply(b"not here", 404)
        self._reply(json.dumps({"path": self.path, "key": self.headers.get("x-key")}).encode())

    def do_POST(self):
        length = int(self.headers["content-length"])
        self._reply(json.dumps({"body": json.loads(self.rfile.read(length))}).encode())

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    httpd = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_http_tool_templates_url_headers_and_body(server):
    async def scenario():
        runner = ToolRunner()
        get = ToolNode(
            name="lookup",
            run={
                "type": "http",
                "allow_private": True,
                "method": "GET",
                "url": server + "/search?q={{topic}}&n={{limit}}",
                "headers": {"x-key": "k-{{limit}}"},
            },
        )
        post = ToolNode(
            name="file",
            run={
                "type": "http",
                "allow_private": True,
                "method": "POST",
                "url": server + "/file",
                "body": '{"title": "{{title}}", "n": {{n}}}',
            },
        )
        missing = ToolNode(
            name="gone", run={"type": "http", "allow_private": True, "method": "GET", "url": server + "/missing"}
        )
        try:
            return (
                await runner.execute(get, {"topic": "a b&c", "limit": 5}, 5),
                await runner.execute(post, {"title": 'say "hi"', "n": 3}, 5),
                await runner.execute(missing, {}, 5),
            )
        finally:
            await runner.aclose()

    got, posted, missing = go(scenario())
    assert json.loads(got.content) == {"path": "/search?q=a%20b%26c&n=5", "key": "k-5"}
    assert json.loads(posted.content) == {"body": {"title": 'say "hi"', "n": 3}}
    assert missing.is_error and missing.content == "HTTP 404: not here"


from itertools import product  # noqa: E402

from jsonschema import Draft202012Validator  # noqa: E402

from plait.runtime.tools import quick_check  # noqa: E402

QUICK_SCHEMAS = [
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string", "description": "d"}},
        "required": ["a"],
    },
    {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "boolean"}, "z": {"type": "null"}},
        "additionalProperties": False,
    },
    {"type": "object", "properties": {"l": {"type": "array"}, "o": {"type": "object"}}, "required": ["l", "o"]},
]
#: One value of every JSON type, and the edges between them: bool is no integer, 1.0 is one, 2.5 is not.
EDGES = [True, 0, 1.0, 2.5, "", None, [], {}]
ABSENT = object()


def test_quick_check_never_accepts_what_the_full_validator_refuses():
    # Every property and one undeclared name, each absent or holding each edge value.
    for params in QUICK_SCHEMAS:
        quick, full = quick_check(params), Draft202012Validator(params)
        names = [*params["properties"], "q"]
        for values in product([ABSENT, *EDGES], repeat=len(names)):
            arguments = {name: value for name, value in zip(names, values) if value is not ABSENT}
            if quick(arguments):
                assert full.is_valid(arguments), (params, arguments)


def test_quick_check_declines_schemas_it_cannot_read():
    assert quick_check({"type": "object", "properties": {"u": {"enum": ["a", "b"]}}}) is None
    assert quick_check({"type": "object", "properties": {"s": {"type": "string", "minLength": 2}}}) is None
    assert quick_check({"type": "object", "anyOf": []}) is None


def test_same_named_tool_modules_of_two_specs_do_not_collide(tmp_path):
    """Two spec folders each with a `tools.py`: each spec's tool runs its own module, in one runner or two."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "rt_same_name.py").write_text(
            f"from rt_same_helper import tag\ndef which(): return tag + '{name}'\n"
        )
        (tmp_path / name / "rt_same_helper.py").write_text(f"tag = 'helper-{name}:'\n")
    before = sys.modules.get("rt_same_name")
    tools = {n: python_tool(tmp_path / n, "rt_same_name:which", params="") for n in ("a", "b")}
    runner = ToolRunner()
    got = [go(runner.execute(tools[n], {}, 5)).content for n in ("a", "b", "a")]
    assert got == ["helper-a:a", "helper-b:b", "helper-a:a"]
    assert go(ToolRunner().execute(tools["b"], {}, 5)).content == "helper-b:b"
    assert go(ToolRunner().execute(tools["a"], {}, 5)).content == "helper-a:a"
    assert (
        before is None and sys.modules["rt_same_name"].which() == "helper-a:a"
    )  # the name stays with its first holder


def test_a_declared_default_reaches_the_tool_when_the_model_leaves_the_parameter_out(server, tmp_path):
    from dataclasses import replace

    from plait.compiler.pipeline import compile_spec

    (tmp_path / "papers.plait").write_text(
        'model m = "openai/gpt-4o-mini"\n'
        'agent reader "Reads." {\n  model = m\n  tools = [search]\n}\n'
        'tool search "Search." {\n'
        "  params {\n    query: string\n    year_from: int = 2015\n  }\n"
        '  run = http(GET, "https://papers.example.org/search?q={{query}}&from={{year_from}}")\n'
        "}\n"
    )
    result = compile_spec(tmp_path / "papers.plait")
    assert result.graph is not None, result.diagnostics
    declared = result.graph.get("search")
    # The spec's URL, pointed at the loopback server (which only a test may call: it is a private address).
    tool = replace(
        declared,
        run={**declared.run, "url": declared.run["url"].replace("https://papers.example.org", server)}
        | {"allow_private": True},
    )
    runner = ToolRunner()

    async def both():
        try:
            return (
                await runner.execute(tool, {"query": "agents"}, 5),
                await runner.execute(tool, {"query": "agents", "year_from": 2024}, 5),
            )
        finally:
            await runner.aclose()

    left_out, given = go(both())
    assert json.loads(left_out.content)["path"] == "/search?q=agents&from=2015"
    assert json.loads(given.content)["path"] == "/search?q=agents&from=2024"
