"""The parser: every construct of LANGUAGE.md becomes the right AST node, with a
span that covers exactly its text (checked through offsets, lines and columns)."""

from __future__ import annotations

import pytest

import plait
from plait.dsl import ast
from plait.core.source import SourceFile


def parse(text: str) -> ast.Module:
    module, diagnostics = plait.parse(text)
    assert not diagnostics, [str(d) for d in diagnostics]
    return module


def covers(text: str, node) -> str:
    """The text under `node`'s span, after checking its line/column agree with its offsets."""
    span = node.span
    source = SourceFile("<string>", text)
    start, end = source.position(span.offset), source.position(span.end_offset)
    assert (span.line, span.column, span.end_line, span.end_column) == (start.line, start.column, end.line, end.column)
    return text[span.offset : span.end_offset]


def errors(text: str) -> list[tuple[str, int, int, str]]:
    module, diagnostics = plait.parse(text)
    assert module is None
    return [(d.code, d.span.line, d.span.column, d.message) for d in diagnostics]


# --- file ---------------------------------------------------------------------------


def test_empty_file_and_version_line():
    assert parse("").declarations == ()
    text = "plait 0.1\n"
    module = parse(text)
    assert module.version.value == 0.1 and covers(text, module.version) == "0.1"
    assert covers(text, module) == text


def test_comments_are_kept_with_spans_and_hashes_in_strings_are_not_comments():
    text = '# head\nmodel m = "openai/x#y"  # tail\n'
    module = parse(text)
    assert [c.text for c in module.comments] == ["# head", "# tail"]
    assert [covers(text, c) for c in module.comments] == ["# head", "# tail"]
    assert module.declarations[0].target.value == "openai/x#y"


# --- declarations -----------------------------------------------------------------------


def test_model_with_and_without_block():
    text = 'model fast = "openai/gpt-4o-mini" { temperature = 0.2, timeout = 30s }\nmodel strong = "anthropic/c"'
    fast, strong = parse(text).declarations
    assert isinstance(fast, ast.ModelDecl) and fast.name.name == "fast"
    assert covers(text, fast) == text.splitlines()[0]
    assert covers(text, fast.name) == "fast" and covers(text, fast.target) == '"openai/gpt-4o-mini"'
    assert [a.key.name for a in fast.body.attributes] == ["temperature", "timeout"]
    assert strong.body is None and covers(text, strong) == 'model strong = "anthropic/c"'


def test_tool_with_every_parameter_type():
    text = """tool lookup "Look up a topic." {
  params {
    topic: string "What to look up"
    limit: int = 5
    ratio: float?
    flag: bool = false
    tags: list[string]
    units: "metric" | "imperial" = "metric"
    where: object { city: string, near: bool? }
  }
  run = python("tools:lookup")
}"""
    tool = parse(text).declarations[0]
    assert isinstance(tool, ast.ToolDecl) and tool.description.value == "Look up a topic."
    params = {p.name.name: p for p in tool.body.params[0].params}
    assert list(params) == ["topic", "limit", "ratio", "flag", "tags", "units", "where"]
    assert params["topic"].description.value == "What to look up"
    assert covers(text, params["topic"]) == 'topic: string "What to look up"'
    assert params["limit"].default.value == 5 and covers(text, params["limit"]) == "limit: int = 5"
    assert params["ratio"].type.optional and covers(text, params["ratio"].type) == "float?"
    assert params["tags"].type.form == "generic" and params["tags"].type.args[0].name == "string"
    assert covers(text, params["tags"].type) == "list[string]"
    units = params["units"].type
    assert units.form == "union" and [lit.value for lit in units.literals] == ["metric", "imperial"]
    assert covers(text, units) == '"metric" | "imperial"'
    where = params["where"].type
    assert where.form == "object" and [f.name.name for f in where.fields] == ["city", "near"]
    assert where.fields[1].type.optional
    assert covers(text, tool.body.params[0]).startswith("params {") and covers(text, tool) == text


def test_agent_with_every_value_form():
    text = """agent writer "Writes." {
  model     = strong
  fallback  = [fast, cheap]
  system    = "Hi \\"you\\"\\n\\{{literal}}"
  max_steps = -16
  temperature = 0.5
  tool_timeout = 500ms
  validate_arguments = true
  until     = submit succeeded
  history   = keep_last(8)
  attributes = { "app.tenant" = "acme", team = "core" }
  run = http(POST, "https://x") { headers = { "X-A" = "b" } }
}"""
    agent = parse(text).declarations[0]
    assert isinstance(agent, ast.AgentDecl) and agent.description.value == "Writes."
    values = {a.key.name: a.value for a in agent.body.attributes}
    assert isinstance(values["model"], ast.Ref) and covers(text, values["model"]) == "strong"
    assert [i.name for i in values["fallback"].items] == ["fast", "cheap"]
    assert values["system"].value == 'Hi "you"\n\\{{literal}}'
    assert values["max_steps"].value == -16 and values["temperature"].value == 0.5
    assert values["tool_timeout"].seconds == 0.5 and values["tool_timeout"].raw == "500ms"
    assert values["validate_arguments"].value is True
    until = values["until"]
    assert isinstance(until, ast.Succeeded) and until.target.name == "submit"
    assert covers(text, until) == "submit succeeded"
    history = values["history"]
    assert isinstance(history, ast.Call) and history.func.name == "keep_last" and history.args[0].value == 8
    assert covers(text, history) == "keep_last(8)"
    attributes = values["attributes"]
    assert isinstance(attributes, ast.Block)
    assert [(a.key.name, a.quoted) for a in attributes.attributes] == [("app.tenant", True), ("team", False)]
    run = values["run"]
    assert [type(a) for a in run.args] == [ast.Ref, ast.String] and run.block.get("headers") is not None
    assert covers(text, run) == 'http(POST, "https://x") { headers = { "X-A" = "b" } }'


@pytest.mark.parametrize("unit, seconds", [("500ms", 0.5), ("30s", 30.0), ("2m", 120.0), ("1h", 3600.0), ("1.5s", 1.5)])
def test_durations(unit, seconds):
    value = parse(f"agent a {{ t = {unit} }}").declarations[0].body.attributes[0].value
    assert isinstance(value, ast.Duration) and value.seconds == seconds


def test_step_consolidate_parallel_chain_and_import():
    text = '''step translate { model = fast, prompt = "Translate: {{input}}" }
consolidate verdict "Debate." {
  agents = [a, b]
  judge  = judge
}
parallel both = [translate, verdict] { on_error = collect }
parallel bare = [x, y]
chain main = writer -> parallel(translate, verdict) -> summary
import "other.plait"'''
    step, consolidate, both, bare, chain, imported = parse(text).declarations
    assert isinstance(step, ast.StepDecl) and step.body.get("prompt").value.value == "Translate: {{input}}"
    assert isinstance(consolidate, ast.ConsolidateDecl) and consolidate.description.value == "Debate."
    assert [i.name for i in both.branches.items] == ["translate", "verdict"] and both.body.get("on_error")
    assert bare.body is None and covers(text, bare) == "parallel bare = [x, y]"
    assert covers(text, chain) == "chain main = writer -> parallel(translate, verdict) -> summary"
    first, inline, last = chain.elements
    assert isinstance(first, ast.ChainRef) and first.name == "writer" and covers(text, first) == "writer"
    assert isinstance(inline, ast.InlineParallel) and [b.name for b in inline.branches] == ["translate", "verdict"]
    assert covers(text, inline) == "parallel(translate, verdict)"
    assert isinstance(imported, ast.ImportDecl) and imported.path.value == "other.plait"
    assert covers(text, imported) == 'import "other.plait"'


def test_chain_may_continue_on_the_next_line():
    chain = parse("chain main = a\n  -> b\n  -> parallel(c,\n d)").declarations[0]
    assert [getattr(e, "name", None) for e in chain.elements] == ["a", "b", None]


# --- blocks and strings ------------------------------------------------------------------


def test_separators_newlines_commas_and_trailing_commas():
    text = "agent a {\n  x = 1,\n\n  y = [1,\n 2,]\n  z = 3, w = 4\n}"
    block = parse(text).declarations[0].body
    assert [a.key.name for a in block.attributes] == ["x", "y", "z", "w"]
    assert [i.value for i in block.get("y").value.items] == [1, 2]


def test_keywords_may_be_attribute_keys_and_parameter_names():
    text = 'tool t { params { model: string, params: int }\n run = python("m:f")\n model = 1 }'
    tool = parse(text).declarations[0]
    assert [p.name.name for p in tool.body.params[0].params] == ["model", "params"]
    assert tool.body.get("model").value.value == 1


def test_block_strings_dedent_and_drop_the_first_and_last_line_break():
    text = 'agent a {\n  system = """\n    one\n      two\n    three\n  """\n}'
    value = parse(text).declarations[0].body.get("system").value
    assert value.block and value.value == "one\n  two\nthree"
    crlf = parse(text.replace("\n", "\r\n")).declarations[0].body.get("system").value
    assert crlf.value == "one\n  two\nthree"


def test_crlf_spans_match_lf_lines():
    text = 'model m = "openai/x"\r\nagent a {\r\n  model = m\r\n}\r\n'
    agent = parse(text).declarations[1]
    assert (agent.span.line, agent.span.end_line) == (2, 4)
    assert covers(text, agent.body.get("model").value) == "m"


# --- syntax errors -------------------------------------------------------------------------


def test_unclosed_block_names_its_owner():
    [(code, line, column, message)] = errors("agent writer {\n  model = m\n")
    assert code == "P001" and "expected `}` to close `agent writer` opened at 1:14" in message


def test_missing_separator_and_unexpected_token():
    [(code, line, column, _)] = errors("agent a { x = 1 y = 2 }")
    assert (code, line, column) == ("P001", 1, 17)


def test_every_broken_declaration_is_reported_once():
    found = errors('agent a { x = }\nmodel m = "openai/x"\nagent b { = 1 }\n')
    assert [(c, line) for c, line, _, _ in found] == [("P001", 1), ("P001", 3)]


def test_lexical_errors():
    assert errors('agent a { x = "open }')[0][:2] == ("P002", 1)
    assert "unterminated string" in errors('agent a { x = "open }')[0][3]
    assert errors('agent a { x = "\\q" }')[0][0] == "P003"
    assert errors("agent a { x = " + "[" * 100 + " }")[0][0] == "P004"
