"""The parser on plait 0.2's constructs: each becomes the pinned AST node with a
span covering exactly its text, in `plait 0.1` and `plait 0.2` files alike,
and the 0.1 forms they share words with parse as before."""

from __future__ import annotations

import pytest
from test_parser import covers, errors, parse

from plait.dsl import ast


def decl(text: str, index: int = 0):
    return parse(text).declarations[index]


def value(text: str, key: str = "x"):
    """The value of attribute `key` of `agent a { key = text }`."""
    agent = decl(f"agent a {{ {key} = {text} }}")
    return agent.body.get(key).value


# --- input and state -----------------------------------------------------------------


@pytest.mark.parametrize("version", ["", "plait 0.1\n", "plait 0.2\n"])
def test_input_and_state_blocks_in_every_version(version):
    text = version + 'input {\n  ticket: string "The message"\n  urgency: int = 3\n}\nstate { order_id: string? }\n'
    module = parse(text)
    inp, state = module.declarations
    assert isinstance(inp, ast.InputDecl) and inp.kind == "input"
    assert covers(text, inp).startswith("input {") and covers(text, inp).endswith("}")
    assert inp.fields.keyword == "input"
    assert [p.name.name for p in inp.fields.params] == ["ticket", "urgency"]
    assert inp.fields.params[0].description.value == "The message"
    assert inp.fields.params[1].default.value == 3
    assert isinstance(state, ast.StateDecl) and state.fields.keyword == "state"
    assert state.fields.params[0].type.optional
    assert covers(text, state) == "state { order_id: string? }"


def test_empty_input_block():
    assert decl("input { }").fields.params == ()


# --- typed blocks ---------------------------------------------------------------------


def test_output_and_answer_are_typed_blocks_beside_params():
    text = (
        'step s { model = m\n  output {\n    category: "billing" | "tech"\n    score: int "0-10"\n  }\n'
        "  params { q: string }\n}\n"
    )
    body = decl(text).body
    assert [p.keyword for p in body.params] == ["output", "params"]
    output = body.typed("output")
    assert covers(text, output).startswith("output {")
    assert [p.name.name for p in output.params] == ["category", "score"]
    assert [s.value for s in output.params[0].type.literals] == ["billing", "tech"]
    assert body.typed("params").params[0].name.name == "q"
    assert body.typed("answer") is None


def test_output_on_one_line_with_commas():
    body = decl('step review { model = m, output { verdict: "accept" | "revise", feedback: string } }').body
    assert [p.name.name for p in body.typed("output").params] == ["verdict", "feedback"]


# --- route ------------------------------------------------------------------------------


def test_route_with_literal_cases_and_else():
    text = (
        'route triage on input.category {\n  "billing" -> billing\n  "tech"    -> tech_support\n  else      -> sales\n}'
    )
    route = decl(text)
    assert isinstance(route, ast.RouteDecl) and route.kind == "route"
    assert route.name.name == "triage" and route.description is None
    assert route.subject.parts == ("input", "category")
    assert covers(text, route.subject) == "input.category"
    assert [c.target.name for c in route.cases] == ["billing", "tech_support", "sales"]
    assert [c.literal.value if c.literal else None for c in route.cases] == ["billing", "tech", None]
    assert covers(text, route.cases[0]) == '"billing" -> billing'
    assert covers(text, route.cases[2]) == "else      -> sales"
    assert covers(text, route) == text


def test_route_with_description_bool_and_number_cases():
    route = decl('route r "Pick one." on input { true -> a, false -> b }')
    assert route.description.value == "Pick one."
    assert route.subject.parts == ("input",)
    assert [(type(c.literal), c.literal.value) for c in route.cases] == [(ast.Bool, True), (ast.Bool, False)]
    route = decl("route r on classify.urgency { 1 -> a\n -2 -> b\n 2.5\n   -> c }")
    assert [c.literal.value for c in route.cases] == [1, -2, 2.5]


def test_route_subject_may_start_with_any_name():
    assert decl("route r on review.verdict { else -> a }").subject.parts == ("review", "verdict")
    assert decl("route r on state.mode.on { else -> a }").subject.parts == ("state", "mode", "on")


def test_an_attribute_or_param_named_on_is_not_a_route():
    agent = decl("agent a { on = 1, else = 2 }")
    assert [a.key.name for a in agent.body.attributes] == ["on", "else"]
    tool = decl('tool t { params { on: int }, run = python("m:f") }')
    assert tool.body.typed("params").params[0].name.name == "on"


# --- loop and map -----------------------------------------------------------------------


def test_loop_over_an_inline_chain_with_a_condition():
    text = 'loop polish = draft -> review {\n  until = verdict == "accept"\n  max_iterations = 3\n}'
    loop = decl(text)
    assert isinstance(loop, ast.LoopDecl) and loop.kind == "loop"
    assert [e.name for e in loop.body] == ["draft", "review"]
    until = loop.block.get("until").value
    assert isinstance(until, ast.Compare) and until.op == "=="
    assert until.left == ast.Ref(span=until.left.span, name="verdict")
    assert until.right.value == "accept"
    assert covers(text, until) == 'verdict == "accept"'
    assert loop.block.get("max_iterations").value.value == 3
    assert covers(text, loop) == text


def test_loop_body_may_be_one_name_or_hold_an_inline_parallel_and_a_description():
    loop = decl('loop again "Retry." = parallel(a, b) -> c { max_iterations = 2 }')
    assert loop.description.value == "Retry."
    assert isinstance(loop.body[0], ast.InlineParallel)
    assert [b.name for b in loop.body[0].branches] == ["a", "b"]
    assert [e.name for e in decl("loop l = only { max_iterations = 1 }").body] == ["only"]


def test_map_over_a_path():
    text = "map write_all = write_section { over = input.sections, concurrency = 4 }"
    m = decl(text)
    assert isinstance(m, ast.MapDecl) and m.kind == "map"
    assert [e.name for e in m.body] == ["write_section"]
    over = m.block.get("over").value
    assert isinstance(over, ast.PathValue) and over.parts == ("input", "sections")
    assert covers(text, over) == "input.sections"
    assert covers(text, m) == text


# --- ask and mcp ------------------------------------------------------------------------


def test_ask_with_and_without_an_answer_block():
    text = 'ask approve "Ship {{input}}?" {\n  answer { ok: bool, note: string? }\n}'
    ask = decl(text)
    assert isinstance(ask, ast.AskDecl) and ask.kind == "ask"
    assert ask.question.value == "Ship {{input}}?"
    assert [p.name.name for p in ask.block.typed("answer").params] == ["ok", "note"]
    assert covers(text, ask) == text
    bare = decl('ask q "Anything?"')
    assert bare.block is None and covers('ask q "Anything?"', bare) == 'ask q "Anything?"'


def test_mcp_declaration():
    text = (
        'mcp files "The project\'s files." {\n  command = ["npx", "server", "./data"]\n'
        '  tools   = [read_text_file, list_directory]\n  timeout = 30s\n  env = { KEY = env("NAME") }\n}'
    )
    mcp = decl(text)
    assert isinstance(mcp, ast.McpDecl) and mcp.kind == "mcp"
    assert mcp.name.name == "files" and mcp.description.value == "The project's files."
    assert [i.name for i in mcp.body.get("tools").value.items] == ["read_text_file", "list_directory"]
    assert covers(text, mcp) == text
    assert decl('mcp web { url = "http://127.0.0.1:8931/mcp" }').description is None


# --- values -------------------------------------------------------------------------------


def test_dotted_paths_as_values_and_in_lists():
    tools = value("[files, files.read_text_file]", "tools")
    assert isinstance(tools.items[0], ast.Ref)
    assert isinstance(tools.items[1], ast.PathValue) and tools.items[1].parts == ("files", "read_text_file")
    # Later parts may be keywords; the head may be one of 0.2's words.
    assert value("run.input.customer").parts == ("run", "input", "customer")
    assert value("loop.last.verdict").parts == ("loop", "last", "verdict")
    assert value("map.item").parts == ("map", "item")


def test_until_forms_of_0_1_parse_as_before():
    assert value("submit", "until") == ast.Ref(span=value("submit", "until").span, name="submit")
    assert [i.name for i in value("[a, b]", "until").items] == ["a", "b"]
    done = value("submit succeeded", "until")
    assert isinstance(done, ast.Succeeded) and done.target.name == "submit"
    mcp_done = value("files.write_file succeeded", "until")
    assert isinstance(mcp_done, ast.Succeeded) and mcp_done.target.parts == ("files", "write_file")


@pytest.mark.parametrize(
    "raw, size",
    [("100B", 100), ("512KB", 512 * 1024), ("4MB", 4 * 1024**2), ("1GB", 1024**3), ("1.5KB", 1536)],
)
def test_sizes(raw, size):
    got = value(raw)
    assert isinstance(got, ast.Size) and (got.bytes, got.raw) == (size, raw)


def test_a_size_needs_a_unit_it_knows():
    assert errors("agent a { x = 4Mb }")


@pytest.mark.parametrize("op", ["==", "!=", "<", "<=", ">", ">="])
def test_comparisons(op):
    cond = value(f"score {op} 8", "until")
    assert isinstance(cond, ast.Compare) and cond.op == op and cond.right.value == 8


def test_condition_precedence_comparisons_then_not_then_and_then_or():
    text = 'agent a { until = not a == "x" and b or c }'
    cond = decl(text).body.get("until").value
    assert isinstance(cond, ast.BoolOp) and cond.op == "or"
    left, right = cond.operands
    assert isinstance(left, ast.BoolOp) and left.op == "and"
    negated, b = left.operands
    assert isinstance(negated, ast.Not) and isinstance(negated.operand, ast.Compare)
    assert b.name == "b" and right.name == "c"
    assert covers(text, cond) == 'not a == "x" and b or c'


def test_and_or_chains_are_flat_and_parentheses_group():
    cond = value("a and b and c", "until")
    assert cond.op == "and" and [o.name for o in cond.operands] == ["a", "b", "c"]
    text = "agent a { until = a and (b or c) }"
    cond = decl(text).body.get("until").value
    group = cond.operands[1]
    assert isinstance(group, ast.BoolOp) and group.op == "or"
    assert covers(text, group) == "(b or c)"
    assert value("not not a", "until").operand.kind == "not"


def test_a_path_in_a_condition():
    cond = value('review.verdict != "revise"', "until")
    assert cond.left.parts == ("review", "verdict") and cond.op == "!="


# --- keywords stay usable as names ------------------------------------------------------


def test_0_2_words_as_0_1_names():
    text = (
        'step answer { model = m, prompt = "x" }\nagent route { model = m }\n'
        "chain loop = answer -> route -> map\nparallel input = [answer, route]\n"
        "agent a { model = m, tools = [map, state, ask], on = input }\n"
        'tool t { params { loop: int, output: string, and: bool }, run = python("m:f") }\n'
    )
    module = parse(text)
    assert [d.name.name for d in module.declarations] == ["answer", "route", "loop", "input", "a", "t"]
    chain = module.declarations[2]
    assert [e.name for e in chain.elements] == ["answer", "route", "map"]
    agent = module.declarations[4]
    assert [i.name for i in agent.body.get("tools").value.items] == ["map", "state", "ask"]
    assert agent.body.get("on").value.name == "input"
    assert [b.name for b in module.declarations[3].branches.items] == ["answer", "route"]


def test_templates_inside_strings_are_untouched():
    step = decl('step s { model = m, prompt = "{{input}} {{state.x}} {{loop.last}} {{map.index}}" }')
    assert step.body.get("prompt").value.value == "{{input}} {{state.x}} {{loop.last}} {{map.index}}"


# --- syntax errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "route r { else -> a }",  # no subject
        "route r on input { -> a }",
        "route r on input { else a }",
        "loop l = { max_iterations = 1 }",
        "loop l = a",  # a loop needs its block
        "map m = a -> b",
        "ask q { answer { ok: bool } }",  # the question is required
        "input ticket: string",
        "agent a { until = a == }",
        "agent a { until = (a or b }",
    ],
)
def test_broken_0_2_constructs_are_syntax_errors(text):
    assert errors(text)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "route r on input { -> a }",
            'expected a case (`"literal" -> runnable` or `else -> runnable`), an attribute (`budget = { ... }`) or `}`'
            " inside `route r`",
        ),
        ('route r on input { "a" a }', "expected `->` or `=` inside `route r`"),
        ("route r { else -> a }", "expected `on` or a string inside `route r`"),
        ("loop l = { max_iterations = 1 }", "expected a runnable name or `parallel(...)` inside `loop l`"),
        ("map m = a -> b", "expected `->` or `{`"),
        ("ask q { answer { ok: bool } }", "expected a string inside `ask q`"),
        ("input { ticket string }", "expected `:` inside `input`"),
        ('step s { model = m\n  output { verdict "x" }\n}', "expected `:` inside `output` block of `step s`"),
        (
            "agent a { = 1 }",
            "expected an attribute (`key = value`) or a `params`, `output`, `answer` or `with` block or `}`",
        ),
        ("agent a { x = 1 y = 2 }", "expected `}` or a newline or `,` inside `agent a`"),
        ("state { k: int\n", "expected `}` to close `state` opened at 1:7"),
        ('mcp files { command = ["a" }', "expected `,` or `]` inside `mcp files`"),
        # A bare name in a route starts an attribute (`budget = ...`): the `=` is what is missing.
        ("chain loop = a -> loop\nroute r on input { x }", "unexpected `}`, expected `=`"),
    ],
)
def test_syntax_errors_in_0_2_blocks_say_what_was_expected_and_where(text, message):
    [(code, _, _, got)] = errors(text)
    assert code == "P001" and message in got, got
