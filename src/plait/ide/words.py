"""The language's built-in words with no kind record of their own → the one-line docs completion and hover show.

A budget's keys, a tool's `run` functions and their options, a hosted tool's
kinds, a test's attributes and what an `expect` line may read: each table is
keyed by the very names the compiler accepts (core/budget.py, core/hosted.py,
compiler/passes/check_tests.py, core/kinds/test.py), so the editor offers
nothing the checker would reject; only the doc lines are written here.
"""

from __future__ import annotations

from plait.core.budget import BUDGET_KEYS, ON_EXCEEDED, UNPRICED
from plait.core.hosted import HOSTED, OPTIONS
from plait.core.kinds.test import RUN_STATS

from plait.compiler.passes.check_tests import FUNCTIONS, TEST_ATTRIBUTES, WORDS

__all__ = [
    "BUDGET_CHOICES",
    "BUDGET_KEYS",
    "DECISIONS",
    "TEST_ENTRIES",
    "DECLARATIONS",
    "DELEGATE_OPTIONS",
    "EXPECT_FUNCTIONS",
    "EXPECT_WORDS",
    "HOSTED_KINDS",
    "HOSTED_OPTIONS",
    "JUDGE_OPTIONS",
    "MESSAGE_ROLES",
    "RUN_FUNCTIONS",
    "RUN_STATS",
    "TEST_ATTRIBUTES",
]

#: A budget's words with a choice of values.
BUDGET_CHOICES: dict[str, tuple[str, ...]] = {"on_exceeded": ON_EXCEEDED, "unpriced": UNPRICED}

#: What a tool's `run` may be (a step's only `python`), as written, with what it does.
RUN_FUNCTIONS: dict[str, str] = {
    "python": '`python("module:function")`: the function runs the call (imported when it first runs)',
    "http": '`http(METHOD, "url template") { headers = {...}, body = "template" }`: an HTTP request',
    "delegate": "`delegate(AGENT) { returns = output.FIELD }`: an agent answers the tool, its params as the agent's "
    "input",
    "hosted": "`hosted(web_search)` / `hosted(code_execution)`: the model's provider runs the tool itself",
}

#: What a delegated agent's tool block takes.
DELEGATE_OPTIONS: dict[str, str] = {
    "returns": "`output` or `output.FIELD`: the part of the agent's output the calling model gets back "
    "(default: the whole answer)",
}

#: The kinds `hosted(KIND)` takes, with the providers that run each.
HOSTED_KINDS: dict[str, str] = {
    kind: f"a hosted tool its provider runs: {', '.join(f'`{p}`' for p in providers)}"
    for kind, providers in HOSTED.items()
}
_HOSTED_OPTION_DOCS = {
    "max_uses": "the most searches in one call (Anthropic)",
    "allowed_domains": "only these domains are searched (Anthropic, OpenAI Responses)",
    "blocked_domains": "these domains are never searched (Anthropic)",
    "context_size": "`low`, `medium` or `high`: how much of the pages the model reads (OpenAI)",
}
#: Each hosted kind's options → their doc lines (the option names are core/hosted.py's).
HOSTED_OPTIONS: dict[str, dict[str, str]] = {
    kind: {name: _HOSTED_OPTION_DOCS.get(name, "") for name in options} for kind, options in OPTIONS.items()
}

_FUNCTION_DOCS = {
    "case": '`case(ROUTE)`: the case the route took (its literal, or `"else"`)',
    "iterations": "`iterations(LOOP)`: how many times the loop's body ran",
    "exit": '`exit(LOOP)`: `"met"` (its `until` held), `"exhausted"` or `"break"`',
    "items": "`items(MAP)`: the items the map ran (not those its `filter` skipped)",
    "asked": "`asked(ASK)`: whether the run stopped at the ask",
    "approvals": "`approvals(TOOL)`: how many approvals the tool asked for",
    "called": "`called(TOOL[, { arg = value }])`: whether the tool was called (with those arguments)",
    "calls": "`calls(TOOL[, { arg = value }])`: how many times the tool was called",
    "judge": '`judge(MODEL, "RUBRIC") { repeat = N, pass_rate = R, of = NAME }`: the model grades the output',
}
#: What an `expect` line may call → (the kinds of declaration it takes first, its doc line).
EXPECT_FUNCTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    name: (kinds, _FUNCTION_DOCS.get(name, ""))
    for name, kinds in {
        "case": ("route",),
        "iterations": ("loop",),
        "exit": ("loop",),
        "items": ("map",),
        "asked": ("ask",),
        "approvals": ("tool",),
        "called": ("tool", "agent"),
        "calls": ("tool", "agent"),
        "judge": ("model",),
    }.items()
    if name in FUNCTIONS
}
_WORD_DOCS = {
    "in": "a member of a list, or a part of a text",
    "contains": "the list holds the value, or the text the substring",
    "matches": "a regular expression (Python's) found in the text",
    "in_order": "`run.tool_calls in_order [a, b]`: these calls among others, in this order",
    "any_order": "`run.tool_calls any_order [a, b]`: these calls among others, in any order",
}
#: `expect SUBJECT WORD VALUE`: the words and their doc lines.
EXPECT_WORDS: dict[str, str] = {word: _WORD_DOCS.get(word, "") for word in WORDS}
#: What a `judge(...)` block takes.
JUDGE_OPTIONS: dict[str, str] = {
    "repeat": "how many times the model grades (default 1)",
    "pass_rate": "the share of verdicts that must pass, 0 to 1 (default 1)",
    "of": "the runnable whose output is graded (default: the test's output)",
    "replies": 'the verdicts, scripted: `[{ output = { pass = true, reason = "..." } }]`',
}
#: What a test's `decisions` answer for a tool, as written.
DECISIONS: dict[str, str] = {
    '"approve"': "the call runs",
    '"approve_same"': "the call runs, and the same call again in the run does not ask",
    '"reject"': "the call is refused (the model reads why)",
}

#: The words a declaration starts with, in the order the language reference introduces them.
DECLARATIONS: dict[str, str] = {
    "model": 'model NAME = "provider/model" { ... }',
    "tool": 'tool NAME "description" { params { ... }, run = ... }',
    "mcp": 'mcp NAME { command = [...] } or { url = "..." }: an MCP server\'s tools',
    "agent": 'agent NAME "description" { model = ..., tools = [...] }',
    "step": 'step NAME { model = ..., prompt = "..." }: one model call (or a code step, a record builder)',
    "chain": "chain NAME = a -> b -> c",
    "parallel": "parallel NAME = [a, b]: branches run at once",
    "consolidate": "consolidate NAME { agents = [...], judge = ... }: a debate",
    "route": "route NAME on PATH { LITERAL -> runnable ... }",
    "loop": "loop NAME = BODY { until = CONDITION, max_iterations = N }",
    "map": "map NAME = BODY { over = PATH }: the body once per item",
    "ask": 'ask NAME "question" { answer { ... } }: a person answers',
    "input": "input { field: type ... }: the run's input",
    "state": "state { key: type ... }: keys tools may write",
    "import": 'import "file.plait"',
    "type": "type NAME { field: type ... } or type NAME = TYPE",
    "thread": 'thread NAME ["description"] { keep_last = N }: a conversation runnables share',
    "test": 'test NAME ["description"] { input = ..., expect ... }: a test of the spec',
}

#: What one entry of a test's `replies`, `tools` and `decisions` holds (an answer's fields are its ask's).
TEST_ENTRIES: dict[str, dict[str, str]] = {
    "replies": {
        "text": "the reply's text",
        "output": "the record a typed `output` declares",
        "tool_calls": '`[{ name = "lookup", arguments = { ... } }]`: the tools the model calls',
    },
    "tools": {"result": "what the tool returns (text, or a record)", "error": "the call fails with this text"},
    "decisions": {
        "action": '`"edit"`: the call runs with other arguments',
        "arguments": "the arguments the edited call runs with",
    },
}

#: The messages a step's or an agent's `messages = [...]` sends, by role.
MESSAGE_ROLES: dict[str, str] = {
    "system": '`system("template")`: sent as the system prompt (system messages come first, joined)',
    "user": '`user("template")`: a user message; the list ends with the one the model answers',
    "assistant": '`assistant("template")`: an answer of the model before the last `user` message (a worked '
    "example, few-shot)",
}
