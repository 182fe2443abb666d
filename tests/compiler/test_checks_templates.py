"""Template paths (P401): `{{input.x}}` against what each use receives, tool parameters,
malformed and escaped placeholders, with the span on the path inside the string."""

from __future__ import annotations

from checks_helpers import FAST, MODELS, assert_at, clean, compile_text, only

PIPELINE = (
    MODELS
    + """
agent writer { model = fast }
step translate { model = fast, prompt = "Translate: {{input}}" }
step critique { model = strong, prompt = "Critique: {{input}}" }
step summary { model = fast, prompt = "French: {{ input.translat }}" }
chain main = writer -> parallel(translate, critique) -> summary
"""
)


def test_branch_that_the_parallel_lacks(tmp_path):
    d = only(compile_text(PIPELINE, tmp_path), "P401")
    assert_at(d, PIPELINE, "input.translat")
    assert d.span.end_column - d.span.column == len("input.translat")
    assert (
        d.message == "`{{input.translat}}` does not resolve: `parallel(translate, critique)` has no branch `translat`"
    )
    assert d.fix.message == "did you mean `translate`?" and d.fix.replacement == "input.translate"
    assert d.labels[0].message == "`summary` follows `parallel(translate, critique)` in chain `main`"
    assert_at(d.labels[0], PIPELINE, "summary\n")


def test_existing_branches_resolve(tmp_path):
    clean(
        compile_text(
            PIPELINE.replace("{{ input.translat }}", "{{ input.translate }} {{input.critique}} {{input}}"), tmp_path
        )
    )


def test_declared_parallel(tmp_path):
    text = PIPELINE.replace(
        "chain main = writer -> parallel(translate, critique) -> summary",
        "parallel both = [translate, critique] { on_error = collect }\nchain main = writer -> both -> summary",
    )
    d = only(compile_text(text, tmp_path), "P401")
    assert "`both` has no branch `translat`" in d.message


def test_input_record_after_text(tmp_path):
    text = (
        MODELS
        + """
    agent writer { model = fast }
    step summary { model = fast, prompt = "Verdict: {{input.verdict}}" }
    chain main = writer -> summary
    """
    )
    d = only(compile_text(text, tmp_path), "P401")
    assert_at(d, text, "input.verdict")
    assert d.message == "`{{input.verdict}}` does not resolve: `summary` receives text from `writer`, not a record"


def test_each_use_is_checked(tmp_path):
    # Fine after the parallel in `main`, wrong after `writer` in `other`.
    text = (
        PIPELINE.replace("{{ input.translat }}", "{{input.translate}}")
        + "chain other = writer -> summary\nchain main2 = main -> other\n"
    )
    text = (
        text.replace("chain main2", "chain main_all")
        .replace("chain main =", "chain first =")
        .replace("main -> other", "first -> other")
    )
    d = only(compile_text(text, tmp_path), "P401")
    assert "receives text from `writer`" in d.message
    assert d.labels[0].message == "`summary` follows `writer` in chain `other`"


def test_entry_and_unplaced_runnables_may_read_any_input(tmp_path):
    # The caller decides what the entry receives.
    clean(compile_text(FAST + 'step main { model = fast, prompt = "{{input.topic}} {{input}}" }\n', tmp_path))


def test_nested_chain_after_a_parallel(tmp_path):
    text = PIPELINE.replace("-> summary", "-> tail") + "chain tail = summary\n"
    d = only(compile_text(text, tmp_path), "P401")
    assert "has no branch `translat`" in d.message


def test_branch_of_a_branch(tmp_path):
    text = (
        MODELS
        + """
    step a { model = fast, prompt = "{{input}}" }
    step b { model = fast, prompt = "{{input}}" }
    parallel inner = [a, b]
    step c { model = fast, prompt = "{{input}}" }
    step last { model = fast, prompt = "{{input.inner.a}} {{input.inner.z}} {{input.c.x}}" }
    chain main = parallel(inner, c) -> last
    """
    )
    messages = [d.message for d in compile_text(text, tmp_path).diagnostics if d.code == "P401"]
    assert messages == [
        "`{{input.inner.z}}` does not resolve: `inner` has no branch `z`",
        "`{{input.c.x}}` does not resolve: `input.c` is text from `c`, not a record",
    ]


def test_delegated_and_debating_agents_receive_text(tmp_path):
    text = (
        MODELS
        + """
    agent helper "Helps." { model = fast, system = "Task: {{input.topic}}" }
    agent main { model = fast, tools = [helper] }
    """
    )
    d = only(compile_text(text, tmp_path), "P401")
    assert "receives text from `main`" in d.message
    assert d.labels[0].message == "`helper` delegated to by `main`"


def test_consolidate_task(tmp_path):
    text = (
        MODELS
        + """
    agent a { model = fast }
    agent b { model = strong }
    step first { model = fast, prompt = "{{input}}" }
    consolidate v { agents = [a, b], judge = strong, task = "Decide: {{input.frist}}" }
    chain main = parallel(first, a) -> v
    """
    )
    d = only(compile_text(text, tmp_path), "P401")
    assert d.fix.message == "did you mean `first`?"


def test_unknown_root_in_a_step(tmp_path):
    text = MODELS + 'step main { model = fast, prompt = "Hi {{inptu}} {{state.user}}" }\n'
    d = only(compile_text(text, tmp_path), "P401")
    assert_at(d, text, "inptu")
    assert d.message == "`{{inptu}}` does not resolve in step `main`"
    assert d.fix.message == "did you mean `input`?"


def test_tool_url_parameter(tmp_path):
    text = (
        MODELS
        + """
    tool lookup "Look up." {
      params { topic: string, limit: int = 5 }
      run = http(GET, "https://kb.example.com/?q={{topc}}&n={{limit}}") {
        headers = { "X-Topic" = "{{topic}}", "X-Bad" = "{{nope}}" }
        body = "{\\"q\\": \\"{{ topic }}\\", \\"s\\": \\"{{state.k}}\\"}"
      }
    }
    agent main { model = fast, fallback = [strong], tools = [lookup] }
    """
    )
    result = compile_text(text, tmp_path)
    found = [d for d in result.diagnostics if d.code == "P401"]
    assert [d.message for d in found] == [
        "`{{topc}}` is not a parameter of tool `lookup`",
        "`{{nope}}` is not a parameter of tool `lookup`",
    ]
    assert_at(found[0], text, "topc")
    assert found[0].fix.message == "did you mean `topic`?"
    assert_at(found[1], text, "nope")


def test_tool_cannot_read_input(tmp_path):
    text = (
        MODELS
        + """
    tool lookup "Look up." { run = http(GET, "https://kb.example.com/?q={{input}}") }
    agent main { model = fast, fallback = [strong], tools = [lookup] }
    """
    )
    assert "not a parameter of tool `lookup`" in only(compile_text(text, tmp_path), "P401").message


def test_escaped_braces_are_literal(tmp_path):
    text = FAST + 'step main { model = fast, prompt = "Write \\{{not_a_path}} literally: {{input}}" }\n'
    clean(compile_text(text, tmp_path))


def test_unclosed_placeholder(tmp_path):
    text = MODELS + 'step main { model = fast, prompt = "Hello {{input" }\n'
    d = only(compile_text(text, tmp_path), "P401")
    assert_at(d, text, "{{input")
    assert d.message == "unclosed `{{` in template"


def test_malformed_placeholder(tmp_path):
    text = MODELS + 'step main { model = fast, prompt = "Hello {{ two words }}" }\n'
    d = only(compile_text(text, tmp_path), "P403")
    assert "is not an expression" in d.message


def test_block_string_points_into_the_right_line(tmp_path):
    text = (
        MODELS
        + '''
    agent writer { model = fast }
    step summary {
      model = fast
      prompt = """
        Summarise this.
        French: {{input.frnch}}
      """
    }
    chain main = writer -> parallel(summary2, other) -> summary
    step summary2 { model = fast, prompt = "{{input}}" }
    step other { model = fast, prompt = "{{input}}" }
    '''
    )
    d = only(compile_text(text, tmp_path), "P401")
    assert_at(d, text, "input.frnch")


def test_malformed_placeholder_never_echoes_a_secret(tmp_path):
    key = "sk-proj-Zx81kQ2mWv7RtY5uPa3LdN9bC4eF6gH0jK"
    text = FAST + f'step main {{ model = fast, prompt = "{{{{ {key} }}}}" }}\n'
    result = compile_text(text, tmp_path)
    assert sorted(d.code for d in result.diagnostics) == ["P401", "P501"]
    assert all(key[4:10] not in d.message for d in result.diagnostics)


def test_deeply_nested_chains_and_parallels_are_walked_without_recursion(tmp_path):
    depth = 3000
    text = FAST + 'step s0 { model = fast, prompt = "{{input}}" }\nchain c0 = s0\nparallel p0 = [s0]\n'
    text += "".join(f"chain c{i} = c{i - 1}\nparallel p{i} = [p{i - 1}]\n" for i in range(1, depth))
    text += 'step last { model = fast, prompt = "{{input.x}}" }\n'
    text += f"chain main = parallel(s0, c{depth - 1}) -> c{depth - 1} -> p{depth - 1} -> last\n"
    d = only(compile_text(text, tmp_path), "P401")
    assert d.message == f"`{{{{input.x}}}}` does not resolve: `p{depth - 1}` has no branch `x`"


def test_a_malformed_placeholder_over_a_line_break_is_echoed_on_one_line(tmp_path):
    # JSON, SARIF and GitHub annotations carry the message as one line; `\n` in the prompt is shown escaped.
    text = MODELS + 'step s { model = fast, prompt = "{{run.inp}:\\n{{run.input.ticket}}" }\n'
    d = only(compile_text(text, tmp_path), "P403")
    assert "\n" not in d.message and d.message.startswith("`{{ run.inp}:\\n{{")
