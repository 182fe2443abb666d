"""Secret masking: which text counts as a credential, and how much of it is shown."""

from __future__ import annotations

import pytest

from plait.core.codes import make
from plait.compiler.report.line_view import view_line
from plait.compiler.report.mask import Redactor, mask, mask_ranges, secret_ranges
from plait.core.source import SourceFile

KEYS = [
    "sk-proj-Zx81kQ2mWv7RtY5uPa3LdN9bC4eF6gH0jK",
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    "xoxb-1234567890-abcdefghij",
    "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
]


@pytest.mark.parametrize("key", KEYS)
def test_known_key_shapes_are_found_and_cut_short(key):
    text = f'system = "use {key} here"'
    assert secret_ranges(text) == [(text.index(key), text.index(key) + len(key))]
    masked = mask_ranges(text, secret_ranges(text))
    assert key not in masked and key[:4] + "…" in masked


@pytest.mark.parametrize(
    "text",
    [
        'model fast = "openai/gpt-4o-mini"',
        'model strong = "anthropic/claude-sonnet-4-5"',
        'run = http(GET, "https://kb.example.com/search?q={{topic}}&n={{limit}}")',
        'api_key = env("OPENAI_API_KEY")',
        'system = "You are a research specialist. Answer factual questions concisely."',
        'prompt = "skip-the-preamble-and-answer-briefly"',
    ],
)
def test_ordinary_spec_text_is_left_alone(text):
    assert secret_ranges(text) == []


def test_credential_positions_mask_the_value_only():
    texts = ('password = "hunter2hunter2"', '"Authorization" = "Bearer abcdefghijklmnop"', 'token: "0123456789abcdef"')
    for text in texts:
        ((start, end),) = secret_ranges(text)
        assert text[end] == '"' and text[start - 1] in ' "'


def test_mask_shows_at_most_a_quarter_and_never_more_than_four():
    assert mask("sk-abcdefghijklmnop") == "sk-a…"
    assert mask("hunter2") == "h…"
    assert mask("abc") == "…"


def test_redact_spans_mask_source_lines_and_echoes_of_the_secret():
    secret = "correct-horse-battery-staple"  # no known shape: only the redact span says it is secret
    source = SourceFile("s.plait", f'tool t "x" {{ run = http(GET, "https://x", token = "{secret}") }}\n')
    start = source.text.index(f'"{secret}"')
    span = source.span(start, start + len(secret) + 2)
    d = make("P501", f"literal secret {secret}", span, notes=[f"seen: {secret}"], redact=(span,))
    redactor = Redactor(d, {"s.plait": source})
    assert redactor.text(d.message) == "literal secret corr…"
    text = source.line_text(1)
    view = view_line(text, redactor.line_ranges(source, 1, text), 0)
    assert secret not in view.text and '"corr…"' in view.text


def test_a_window_that_opens_inside_a_secret_shows_none_of_it():
    text = "x" * 10 + "S" * 300 + " tail"
    view = view_line(text, [(10, 310)], 300)
    assert "S" not in view.text


def test_huge_messages_are_bounded_and_still_masked():
    key = KEYS[0]
    source = SourceFile("s.plait", "agent a {}\n")
    d = make("P101", f"undefined name `{'x' * 1_000_000}` near {key} and `{'y' * 500}`", source.span(0, 5))
    shown = Redactor(d, {"s.plait": source}).text(d.message)
    assert len(shown) < 200 and key not in shown
    assert shown.startswith("undefined name `" + "x" * 60 + "…`")


def test_shortening_a_quote_keeps_what_follows_it():
    source = SourceFile("s.plait", "agent a {}\n")
    d = make("P005", f"cannot read `{'a' * 5000}`: File name too long", source.span(0, 0))
    assert Redactor(d, {}).text(d.message) == f"cannot read `{'a' * 60}…`: File name too long"
