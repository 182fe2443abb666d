"""Every item of LANGUAGE.md's "What plait check must catch": a failing spec with its code,
position and message, and a passing near-miss beside it."""

from __future__ import annotations

import pytest

from checks_helpers import FAST, MODELS, assert_at, clean, codes, compile_text, only


@pytest.fixture(autouse=True)
def _tool_module(tmp_path):
    # The python tools these specs declare live in `mod.py` beside them: check reads it (never imports it).
    (tmp_path / "mod.py").write_text("def submit(): ...\ndef other(): ...\ndef fn(): ...\n")


# --- syntax -------------------------------------------------------------------------


def test_syntax_error_names_the_open_block(tmp_path):
    text = MODELS + "agent a {\n  model = fast\n"
    d = only(compile_text(text, tmp_path), "P001")
    assert "expected `}` to close `agent a` opened at 4:9" in d.message
    assert (d.span.line, d.span.column) == (6, 1)


def test_syntax_near_miss_is_clean(tmp_path):
    clean(compile_text(MODELS + "agent main { model = fast, fallback = [strong] }\n", tmp_path))


# --- names, attributes and types: one finding each ----------------------------------------

AGENT = MODELS + "agent main {{ {} }}\n"
TOOLS = """
tool submit "Submit." { run = python("mod:submit") }
tool other "Other." { run = python("mod:other") }
"""
LONG = "t" * 65

# (spec, code, text the span starts at and its occurrence, part of the message)
SINGLE = {
    "undefined-name": (AGENT.format("model = fsat, fallback = [strong]"), "P101", "fsat", 1, "undefined name `fsat`"),
    "duplicate-name": (
        'model fast = "openai/gpt-4o"\n' + AGENT.format("model = fast, fallback = [strong]"),
        "P102",
        "fast",
        2,
        "`fast` is declared twice",
    ),
    "wrong-kind": (
        AGENT.format("model = fast, fallback = [strong], tools = [fast]"),
        "P103",
        "fast]",
        1,
        "`fast` is a model",
    ),
    "unknown-attribute": (
        AGENT.format("model = fast, fallback = [strong], max_step = 3"),
        "P201",
        "max_step",
        1,
        "unknown attribute `max_step`",
    ),
    "missing-attribute": (AGENT.format("fallback = [strong, fast]"), "P202", "main", 1, "agent `main` has no `model`"),
    "wrong-type": (
        AGENT.format('model = fast, fallback = [strong], max_steps = "many"'),
        "P203",
        '"many"',
        1,
        "`max_steps` must be a whole number",
    ),
    "tool-listed-twice": (
        TOOLS + AGENT.format("model = fast, fallback = [strong], tools = [submit, other, submit]"),
        "P306",
        "submit]",
        1,
        "agent `main` lists `submit` twice in `tools`",
    ),
    "delegate-listed-twice": (
        'agent helper "Helps." { model = fast }\n'
        + AGENT.format("model = fast, fallback = [strong], tools = [helper, helper]"),
        "P306",
        "helper]",
        1,
        "agent `main` lists `helper` twice",
    ),
    "tool-name-too-long": (
        f'tool {LONG} "T." {{ run = python("mod:fn") }}\n'
        + AGENT.format(f"model = fast, fallback = [strong], tools = [{LONG}]"),
        "P306",
        LONG,
        1,
        "is 65 characters; providers accept tool names of at most 64",
    ),
    "branch-listed-twice": (
        MODELS + 'step a { model = fast, prompt = "{{input}}" }\nchain main = parallel(a, a) -> a\n',
        "P204",
        "a) ->",
        1,
        "branch `a` is listed twice in `parallel(a, a)`",
    ),
    "declared-branch-listed-twice": (
        MODELS + 'step a { model = fast, prompt = "{{input}}" }\nparallel main = [a, a]\n',
        "P204",
        "a]",
        1,
        "branch `a` is listed twice in `main`",
    ),
    "debater-listed-twice": (
        MODELS + "agent a { model = fast }\nconsolidate main { agents = [a, a], judge = strong }\n",
        "P204",
        "a]",
        1,
        "agent `a` is listed twice in `main`",
    ),
    "approval-not-in-tools": (
        TOOLS + AGENT.format("model = fast, fallback = [strong], tools = [other], approval = [submit]"),
        "P204",
        "submit]",
        1,
        "`approval` names `submit`, which agent `main` does not have in `tools`",
    ),
}


@pytest.mark.parametrize("case", SINGLE)
def test_single_finding(tmp_path, case):
    text, code, needle, nth, message = SINGLE[case]
    d = only(compile_text(text, tmp_path), code)
    assert_at(d, text, needle, nth)
    assert message in d.message


STEPS = 'step a { model = fast, prompt = "{{input}}" }\nstep b { model = fast, prompt = "{{input}}" }\n'

# The same specs, one step from wrong: each must check clean.
NEAR_MISS = {
    "undefined-name": AGENT.format("model = fast, fallback = [strong]"),
    "duplicate-name": 'model quick = "openai/gpt-4o"\n' + AGENT.format("model = quick, fallback = [strong, fast]"),
    "wrong-kind": TOOLS + AGENT.format("model = fast, fallback = [strong], tools = [submit, other]"),
    "unknown-attribute": AGENT.format("model = fast, fallback = [strong], max_steps = 3"),
    "missing-attribute": AGENT.format("model = fast, fallback = [strong]"),
    "wrong-type": AGENT.format("model = fast, fallback = [strong], max_steps = 5"),
    "tool-listed-twice": TOOLS + AGENT.format("model = fast, fallback = [strong], tools = [submit, other]"),
    "delegate-listed-twice": 'agent helper "Helps." { model = fast }\n'
    + AGENT.format("model = fast, fallback = [strong], tools = [helper]"),
    "branch-listed-twice": MODELS
    + STEPS
    + 'step c { model = strong, prompt = "{{input.a}}" }\nchain main = parallel(a, b) -> c\n',
    "declared-branch-listed-twice": FAST + STEPS + "parallel main = [a, b]\n",
    "debater-listed-twice": MODELS
    + "agent a { model = fast }\nagent b { model = fast }\nconsolidate main { agents = [a, b], judge = strong }\n",
    "approval-not-in-tools": TOOLS
    + AGENT.format("model = fast, fallback = [strong], tools = [other, submit], approval = [submit]"),
}


@pytest.mark.parametrize("case", NEAR_MISS)
def test_near_miss_is_clean(tmp_path, case):
    clean(compile_text(NEAR_MISS[case], tmp_path))


def test_every_single_finding_has_a_near_miss():
    assert set(SINGLE) - set(NEAR_MISS) == {"tool-name-too-long"}  # its near miss is test_tool_name_of_64_is_clean


def test_near_miss_names_are_suggested(tmp_path):
    fixes = {
        case: only(compile_text(SINGLE[case][0], tmp_path), SINGLE[case][1]).fix
        for case in ("undefined-name", "unknown-attribute")
    }
    assert fixes["undefined-name"].message == "did you mean `fast`?" and fixes["undefined-name"].replacement == "fast"
    assert fixes["unknown-attribute"].message == "did you mean `max_steps`?"


def test_duplicate_name_labels_the_first(tmp_path):
    d = only(compile_text(SINGLE["duplicate-name"][0], tmp_path), "P102")
    assert d.labels[0].message == "first declared here as a model"


def test_bad_default(tmp_path):
    text = (
        MODELS
        + """
    tool t "T." {
      params { n: int = "five" }
      run = python("mod:fn")
    }
    agent main { model = fast, fallback = [strong], tools = [t] }
    """
    )
    d = only(compile_text(text, tmp_path), "P206")
    assert_at(d, text, '"five"')
    assert "default of `n`" in d.message


def test_good_default_is_clean(tmp_path):
    text = (
        MODELS
        + """
    tool t "T." {
      params { n: int = 5, unit: "a" | "b" = "a", tags: list[string] = ["x"] }
      run = python("mod:fn")
    }
    agent main { model = fast, fallback = [strong], tools = [t] }
    """
    )
    clean(compile_text(text, tmp_path))


# --- until, delegation, chains, consolidate --------------------------------------------


def test_until_naming_a_tool_the_agent_lacks(tmp_path):
    text = (
        MODELS + TOOLS + "agent main { model = fast, fallback = [strong], tools = [other], until = submit succeeded }\n"
    )
    d = only(compile_text(text, tmp_path), "P301")
    assert_at(d, text, "submit succeeded")
    assert "`until` names `submit`" in d.message


def test_until_with_the_tool_is_clean(tmp_path):
    text = (
        MODELS
        + TOOLS
        + "agent main { model = fast, fallback = [strong], tools = [other, submit], until = submit succeeded }\n"
    )
    clean(compile_text(text, tmp_path))


def test_delegation_cycle(tmp_path):
    text = (
        MODELS
        + """
    agent a "A." { model = fast, tools = [b] }
    agent b "B." { model = strong, tools = [a] }
    chain main = a -> b
    """
    )
    d = only(compile_text(text, tmp_path), "P303")
    assert "delegation cycle: `a` -> `b` -> `a`" in d.message


def test_delegation_without_cycle_is_clean(tmp_path):
    text = (
        MODELS
        + """
    agent a "A." { model = fast, tools = [b] }
    agent b "B." { model = strong }
    chain main = a -> b
    """
    )
    clean(compile_text(text, tmp_path))


def test_chain_containing_itself(tmp_path):
    text = (
        MODELS
        + """
    agent a { model = fast, fallback = [strong] }
    chain main = a -> inner
    chain inner = a -> main
    """
    )
    d = only(compile_text(text, tmp_path), "P304")
    assert "contains itself" in d.message


def test_consolidate_with_one_agent(tmp_path):
    text = (
        MODELS
        + """
    agent a { model = fast }
    consolidate main { agents = [a], judge = strong }
    """
    )
    d = only(compile_text(text, tmp_path), "P305")
    assert_at(d, text, "[a]")
    assert "at least two agents, found 1" in d.message


def test_consolidate_with_two_agents_is_clean(tmp_path):
    text = (
        MODELS
        + """
    agent a { model = fast }
    agent b { model = fast }
    consolidate main { agents = [a, b], judge = strong }
    """
    )
    clean(compile_text(text, tmp_path))


# --- model reachability (P302) ------------------------------------------------------------


def test_openai_compatible_without_base_url(tmp_path):
    text = """
    model local = "openai-compatible/llama3"
    agent main { model = local }
    """
    d = only(compile_text(text, tmp_path), "P302")
    assert_at(d, text, '"openai-compatible/llama3"')
    assert "no `base_url`" in d.message
    assert d.labels and d.labels[0].message == "`main` calls it"


def test_openai_compatible_with_base_url_is_clean(tmp_path):
    text = """
    model local = "openai-compatible/llama3" { base_url = "http://localhost:11434/v1" }
    agent main { model = local }
    """
    clean(compile_text(text, tmp_path))


def test_scripted_without_script_labels_the_fallback_user(tmp_path):
    text = """
    model fast = "openai/gpt-4o-mini"
    model demo = "scripted/demo"
    agent main { model = fast, fallback = [demo] }
    """
    d = only(compile_text(text, tmp_path), "P302")
    assert "has no `script`" in d.message
    assert [label.message for label in d.labels] == ["`main` falls back to it"]


def test_responses_api_on_anthropic(tmp_path):
    text = """
    model m = "anthropic/claude-sonnet-4-5" { api = "responses" }
    step main { model = m, prompt = "{{input}}" }
    """
    d = only(compile_text(text, tmp_path), "P302")
    assert_at(d, text, '"responses"')
    assert "needs provider `openai`" in d.message


def test_responses_api_on_openai_is_clean(tmp_path):
    text = """
    model m = "openai/gpt-4o" { api = "responses" }
    step main { model = m, prompt = "{{input}}" }
    """
    clean(compile_text(text, tmp_path))


# --- tool name collisions (P306) ---------------------------------------------------------


def test_tool_listed_twice_labels_the_first(tmp_path):
    d = only(compile_text(SINGLE["tool-listed-twice"][0], tmp_path), "P306")
    assert d.labels[0].message == "first listed here"


def test_tool_name_of_64_is_clean(tmp_path):
    name = "t" * 64
    text = (
        MODELS
        + f'tool {name} "T." {{ run = python("mod:fn") }}\nagent main {{ model = fast, fallback = [strong], tools = [{name}] }}\n'
    )
    clean(compile_text(text, tmp_path))


# --- agent lists (P204) ------------------------------------------------------------------


def test_approval_of_an_own_tool_is_clean(tmp_path):
    text = (
        MODELS
        + TOOLS
        + "agent main { model = fast, fallback = [strong], tools = [other, submit], approval = [submit] }\n"
    )
    clean(compile_text(text, tmp_path))


@pytest.mark.parametrize(
    "fallback, message", [("[fast]", "is the primary model"), ("[strong, strong]", "listed twice")]
)
def test_fallback_that_cannot_help(tmp_path, fallback, message):
    text = MODELS + f"agent main {{ model = fast, fallback = {fallback} }}\n"
    d = only(compile_text(text, tmp_path), "P204")
    assert message in d.message


# --- unused declarations (P601) ------------------------------------------------------------


@pytest.mark.parametrize(
    "extra, kind, name",
    [
        ('model spare = "openai/gpt-4o"', "model", "spare"),
        ('tool spare "S." { run = python("mod:fn") }', "tool", "spare"),
        ("agent spare { model = fast }", "agent", "spare"),
        ('step spare { model = fast, prompt = "{{input}}" }', "step", "spare"),
        ("chain spare = main -> main", "chain", "spare"),
        ("parallel spare = [main]", "parallel", "spare"),
    ],
)
def test_unused_declaration_is_a_warning(tmp_path, extra, kind, name):
    text = MODELS + "agent main { model = fast, fallback = [strong] }\n" + extra + "\n"
    result = compile_text(text, tmp_path)
    d = only(result, "P601")
    assert result.ok and d.severity == "warning"
    assert d.message == f"{kind} `{name}` is never used"
    assert_at(d, text, name)


def test_consolidate_unused(tmp_path):
    text = (
        MODELS
        + """
    agent a { model = fast }
    agent b { model = fast }
    consolidate spare { agents = [a, b], judge = strong }
    chain main = a -> b
    """
    )
    assert only(compile_text(text, tmp_path), "P601").message == "consolidate `spare` is never used"


def test_only_runnable_is_the_entry(tmp_path):
    # No `main`: the only runnable is the entry, so it is used.
    clean(compile_text(MODELS + "agent solo { model = fast, fallback = [strong] }\n", tmp_path))


def test_without_main_every_root_is_a_possible_entry_and_never_unused(tmp_path):
    # A spec may be a library of entries (`plait run --entry NAME`); LANGUAGE.md, Entry point (issue 9.11).
    text = MODELS + "agent a { model = fast, fallback = [strong] }\nagent b { model = fast }\n"
    clean(compile_text(text, tmp_path))


def test_the_only_root_is_the_entry_even_when_it_delegates(tmp_path):
    # `writer` delegates to `researcher`: two runnables, one root. It runs without --entry and is not unused.
    text = (
        MODELS
        + """
    agent researcher "Research." { model = fast, fallback = [strong] }
    agent writer { model = fast, tools = [researcher] }
    """
    )
    result = compile_text(text, tmp_path)
    clean(result)
    assert result.graph.entry == "writer"


def test_several_roots_and_no_main_leave_the_entry_to_the_caller(tmp_path):
    text = MODELS + "agent a { model = fast, fallback = [strong] }\nagent b { model = fast }\n"
    assert compile_text(text, tmp_path).graph.entry is None


# --- one run reports every problem -------------------------------------------------------


def test_many_errors_in_one_run(tmp_path):
    text = """
    model fast  = "openai/gpt-4o-mini" { api_key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123" }
    model local = "openai-compatible/llama3"
    model spare = "openai/gpt-4o"
    tool t "T." {
      params { q: string, n: int = "x" }
      run = http(GET, "https://x.example/?q={{qq}}")
    }
    agent a "A." { model = fsat, tools = [t, t, b], until = nope }
    agent b "B." { model = local, tools = [a], colour = 1 }
    step s { model = fast, prompt = "{{input.zzz}}" }
    agent c { model = fast }
    consolidate v { agents = [c], judge = fast }
    chain main = a -> parallel(b, v) -> s -> loop
    chain loop = main
    """
    result = compile_text(text, tmp_path)
    got = set(codes(result))
    assert [d.message for d in result.diagnostics if d.code == "P401"] == [
        "`{{qq}}` is not a parameter of tool `t`",
        "`{{input.zzz}}` does not resolve: `parallel(b, v)` has no branch `zzz`",
    ]
    assert {"P101", "P201", "P206", "P302", "P303", "P304", "P305", "P306", "P401", "P501", "P601"} <= got


# --- http tool URLs (P204) ---------------------------------------------------------------


@pytest.mark.parametrize(
    "url, scheme",
    [
        ("javascript:alert(1)", "javascript:"),
        ("file:///etc/passwd", "file:"),
        ("FILE:///etc/passwd", "FILE:"),
        ("gopher://x.example/", "gopher:"),
        ("{{where}}", None),
        ("//x.example/{{where}}", None),
        ("https:///{{where}}", None),
    ],
)
def test_an_http_tool_fetches_only_http_and_https_urls(tmp_path, url, scheme):
    # Caught by check, with the URL's position, instead of failing at run time.
    text = (
        FAST
        + f'tool t "T." {{\n  params {{ where: string }}\n  run = http(GET, "{url}")\n}}\n'
        + "agent main { model = fast, tools = [t] }\n"
    )
    d = only(compile_text(text, tmp_path), "P204")
    assert_at(d, text, f'"{url}"')
    assert "must start with `http://` or `https://`" in d.message
    assert (f"not `{scheme}`" in d.message) if scheme else ("not `" not in d.message)


@pytest.mark.parametrize("url", ["https://x.example/{{where}}", "HTTP://x.example/", "https://{{where}}/a"])
def test_http_and_https_urls_check_clean(tmp_path, url):
    text = (
        FAST
        + f'tool t "T." {{\n  params {{ where: string }}\n  run = http(GET, "{url}")\n}}\n'
        + "agent main { model = fast, tools = [t] }\n"
    )
    clean(compile_text(text, tmp_path))
