"""The contracts are drawn, in DOT and in Mermaid alike, and labels cannot break either syntax."""

from __future__ import annotations

import html
import re

import pytest
from render_helpers import graph

from plait.compiler.render import RenderOptions, render
from plait.compiler.render.dot import quote
from plait.compiler.render.mermaid import mermaid_id
from plait.core.redact import REDACTED, protect, redact_text

FORMATS = ["dot", "mermaid"]


@pytest.fixture(params=FORMATS)
def drawn(request):
    def draw(name: str, **options) -> str:
        # Models and tools drawn as nodes (`--hide none`): their contracts are what these tests read.
        return render(graph(name), request.param, RenderOptions(**{"hide": ("none",), **options}))

    draw.format = request.param
    return draw


@pytest.mark.parametrize(
    "text",
    [
        "max_steps 5",
        "max_steps 40",
        "until publish, notify called",
        "APPROVAL REQUIRED",
        "approval notify",
        "retry_malformed 1",
        "history keep_last(6)",
        "fallback_on rate_limit, server_error",
        "on_error collect",
        "consolidate: rounds 2",
        "tool_timeout 2m",
        "result as messages",
        "key from env ANTHROPIC_KEY_FOR_TESTS",
    ],
)
def test_contract_labels(drawn, text):
    assert text in drawn("contracts")


def test_until_succeeded_and_edge_labels(drawn):
    out = drawn("language")
    for text in (
        "until submit_report succeeded",
        "until succeeded",
        "input.translate",
        "input.verdict",
        "judge",
        "task",
    ):
        assert text in out


def _edge_line(out: str, source: str, target: str, label: str) -> bool:
    if out.startswith("digraph"):
        pattern = rf'"{source}" -> "{target}" \[[^\n]*label="{re.escape(label)}"'
    else:
        pattern = rf'n_{source} [-=.>]+\|"{re.escape(label)}"\| n_{target}'
    return re.search(pattern, out) is not None


def test_fallbacks_are_drawn_in_order(drawn):
    out = drawn("contracts")
    assert _edge_line(out, "scout", "strong", "fallback 1")
    assert _edge_line(out, "scout", "backup", "fallback 2")
    assert not _edge_line(out, "scout", "backup", "fallback 1")


def test_approval_gates_on_the_tool_and_the_edge(drawn):
    out = drawn("contracts")
    assert _edge_line(out, "editor", "publish", "approval")  # the tool requires it
    assert _edge_line(out, "editor", "notify", "approval")  # the agent requires it
    assert not _edge_line(out, "scout", "search", "approval")
    if drawn.format == "dot":
        assert re.search(r'"publish" \[[^\n]*penwidth=2.5', out)
    else:
        assert re.search(r"class n_publish gate", out)


def test_consolidate_judge_and_participants(drawn):
    out = drawn("contracts")
    assert _edge_line(out, "debate", "chair", "judge")
    assert _edge_line(out, "debate", "pro", "agent 1")
    assert _edge_line(out, "debate", "con", "agent 2")


def test_clusters_per_chain_parallel_and_consolidate(drawn):
    out = drawn("contracts")
    for title in ("chain main", "parallel fanout", "consolidate debate"):
        assert (f'label="{title}"' if drawn.format == "dot" else f'["{title}"]') in out


def test_header_values_never_drawn(drawn):
    out = drawn("contracts")
    assert "headers X-Team" in out and "headers X-Client" in out
    assert "research" not in out.replace("researcher", "") and '"plait"' not in out
    # Query strings can carry parameters and tokens; only host and path are drawn.
    assert "text=" not in out


def test_escaping_labels_with_quotes_newlines_and_templates():
    dot = render(graph("nested"), "dot")
    mermaid = render(graph("nested"), "mermaid")
    assert "&quot;x&quot; &lt;b&gt;&amp;amp;&lt;/b&gt;" in dot
    assert "#quot;x#quot; #lt;b#gt;#amp;amp;#lt;/b#gt; #124; #96;#35;1#96; #123;#123;input#125;#125;" in mermaid
    assert "n_end_" in mermaid and "\n  end\n" in mermaid  # a node named like the keyword is prefixed


def test_identifier_escaping_is_injective_and_safe():
    ids = ["main", "main/parallel#1", "main/parallel#1/join", "@entry", "g_main", "n_x", "a@turn/call_model"]
    made = [mermaid_id(i) for i in ids]
    assert len(set(made)) == len(made)
    assert all(re.fullmatch(r"[A-Za-z0-9_]+", m) for m in made)
    assert quote('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'


def test_redaction_of_credential_looking_values():
    headers = protect({"X-Api-Key": "abc123", "X-Team": "a", "X-Tok": "sk-" + "a1" * 12})
    assert headers == {"X-Api-Key": REDACTED, "X-Team": "a", "X-Tok": REDACTED}
    run = protect({"type": "http", "url": "https://h/x?q={{q}}&api_key=zz9", "headers": {"Authorization": "{{token}}"}})
    assert "zz9" not in run["url"] and "q={{q}}" in run["url"]
    assert run["headers"] == {"Authorization": "{{token}}"}  # a template is not a secret
    assert "ghp_" not in redact_text('x = "ghp_' + "A" * 36 + '"')
    key = "Zx9" * 12
    assert redact_text(f'h = {{ "X-Key" = "{key}" }}') == f'h = {{ "X-Key" = "{REDACTED}" }}'
    long_name = "agent_named_at_great_length_number_123456789"
    assert redact_text(f"agent {long_name} {{ }}") == f"agent {long_name} {{ }}"
    model = 'model m = "openai-compatible/mistral-large-instruct-2407"'
    assert redact_text(model) == model


def test_url_passwords_never_reach_json_or_labels():
    from plait.compiler.render.labels import node_lines

    url = "https://bot:hunter2@h.example/x?q={{q}}"
    assert protect({"url": url})["url"] == f"https://bot:{REDACTED}@h.example/x?q={{{{q}}}}"

    from plait.compiler.graph import AgentGraph
    from plait.core.graph import ToolNode

    one_tool = AgentGraph()
    one_tool.add(ToolNode(name="t", run={"type": "http", "method": "GET", "url": url, "headers": {}}))
    assert node_lines(one_tool, "t") == ["t", "GET h.example/x"]


def test_an_mcp_servers_conditional_approval_is_drawn_with_its_condition():
    import plait

    spec = """plait 0.3
model fast = "openai/gpt-4o-mini"
mcp files {
  command  = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "."]
  approval = { write_file = path != "notes.md", move_file = required }
}
agent writer { model = fast, tools = [files] }
"""
    compiled = plait.compile(spec)
    assert compiled.graph is not None, compiled.diagnostics  # an unlocked server is a warning only
    # The condition, as written, on the tool that waits only when it holds; the other tool always waits.
    dot = html.unescape(render(compiled.graph, "dot", RenderOptions(hide=("none",))))
    assert 'approval write_file when path != "notes.md", move_file' in dot, dot
    mermaid = render(compiled.graph, "mermaid", RenderOptions(hide=("none",)))
    assert "approval write_file when path != #quot;notes.md#quot;, move_file" in mermaid, mermaid
