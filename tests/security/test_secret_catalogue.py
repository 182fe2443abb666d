"""core.redact's catalogue: each ported format finds its secret (and only the secret part), P501 names it, and
ordinary spec text (model ids, names, paths, prose) is never taken for one."""

from __future__ import annotations

import pytest

from plait.compiler.pipeline import compile_spec
from plait.core.redact import FORMATS, REDACTED, find_secrets, protect, redact_text, redact_url, secret_ranges
from plait.core.secret_rules import RULES

from secret_specs import SHAPES

#: (format id, text holding one, the secret part that must be found).
EXAMPLES = [
    ("anthropic-api-key", "key sk-" + "ant-api03-Qw3rTy7UiOp9AsDf2GhJkL5ZxCv", None),
    ("openai-api-key", "sk-" + "proj-Zx81kQ2mWv7RtY5uPa3LdN9bC4eF6gH0jK", None),
    ("stripe-access-token", "pay with sk_" + "live_4eC39HqLyjWDarjtT1zdp7dc", None),
    ("stripe-access-token", "rk_" + "test_51Hxyz0123456789abcdef", None),
    ("gcp-api-key", "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6q", None),
    ("github-pat", "ghp_" + "Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi", None),
    ("gitlab-pat", "glpat" + "-x7Rk2Lm9Qw4Zt8Vb3Np6", None),
    ("gitlab-pat", "glrt" + "-x7Rk2Lm9Qw4Zt8Vb3Np6abc", None),
    ("huggingface-access-token", "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz012345", None),
    (
        "slack-webhook-url",
        "https://hooks.slack.com/services/" + "T0AB12CD3/B0EF45GH6/Zq8x7WvT6sR5pQ4oN3mL2kJ1",
        "T0AB12CD3/B0EF45GH6/Zq8x7WvT6sR5pQ4oN3mL2kJ1",
    ),
    ("slack-bot-token", "xoxb" + "-1234567890-abcdefghij", None),
    ("aws-access-token", "AKIA" + "QX7RZ3M5K2L9W4NB", None),
    (
        "aws-secret-access-key",
        'aws_secret_access_key = "' + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8pLmW3x9" + '"',
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8pLmW3x9",
    ),
    ("private-key", "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", None),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", None),
    ("bearer-token", "Authorization: Bearer " + "abcDEF123ghiJKL456mno", "abcDEF123ghiJKL456mno"),
    ("basic-auth", "Authorization: Basic " + "Ym9iOmNvcnJlY3RIb3JzZTk=", "Ym9iOmNvcnJlY3RIb3JzZTk="),
    ("basic-auth", "postgres://bob:" + "Tr0ub4dor-and-3@db.example.com/app", "Tr0ub4dor-and-3"),
    (
        "hex-high-entropy",
        "secret 9f86d081884c7d65" + "9a2feaa0c55ad015a3bf4f1b2b0b822c",
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822c",
    ),
]


def test_every_format_has_an_example():
    # The rules ported from gitleaks as written are held to upstream's own examples (test_gitleaks_rules.py).
    ported = {row[3] for row in RULES}
    assert {f.id for f in FORMATS if f.pattern not in ported} == {fid for fid, _, _ in EXAMPLES}


@pytest.mark.parametrize(("fid", "text", "part"), EXAMPLES, ids=[f"{e[0]}-{i}" for i, e in enumerate(EXAMPLES)])
def test_each_format_finds_its_secret(fid, text, part):
    found = find_secrets(text)
    assert found and found[0].format.id == fid
    got = text[found[0].start : found[0].end]
    if part is not None:
        assert got == part
    assert (part or got) not in redact_text(text)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_p501_names_each_shape_in_a_prompt(shape, tmp_path):
    spec = f'model m = "openai/gpt-4o-mini"\nagent main "A." {{ model = m, system = "use {shape.written} now" }}\n'
    result = compile_spec(spec, path=str(tmp_path / "spec.plait"))
    found = [d for d in result.diagnostics if d.code == "P501"]
    assert found, shape.name
    assert shape.secret[:6] not in found[0].message


@pytest.mark.parametrize(
    "text",
    [
        "openai/gpt-4o-mini",
        "anthropic/claude-sonnet-4-5",
        "openai-compatible/mistral-large-instruct-2407",
        "Basic instructions for the agent",
        "agent_named_at_great_length_number_123456789",
        "/tmp/pytest-of-root/pytest-12/test_render_Dot0/spec.plait",
        "task-proj-and-risk-assessment-2024-q3",
        "commit 0000000000000000000000000000000000000000",
        "https://api.example.com/search?q={{q}}",
        "Bearer {{token}}",
        "support_tools:find_order",
        "hooks.slack.com is where webhooks live",
    ],
)
def test_ordinary_text_is_not_a_secret(text):
    assert find_secrets(text) == []
    assert protect({"description": text})["description"] == text


def test_url_passwords_and_credential_query_values_are_redacted_but_templates_kept():
    url = "https://bot:" + "hunter2@h.example/x?q={{q}}&api_key=zz9&page=2"
    shown = redact_url(url)
    assert "hunter2" not in shown and "zz9" not in shown
    assert shown.startswith(f"https://bot:{REDACTED}@h.example/x?") and "q={{q}}" in shown and "page=2" in shown


def test_source_text_masks_values_of_credential_keys_and_query_values():
    text = 'headers = { "X-Api-Key" = "demo-key-1" }\nrun = http(GET, "https://h/x?token=abc12345&q={{q}}")'
    hidden = [text[a:b] for a, b in secret_ranges(text)]
    assert hidden == ["demo-key-1", "abc12345"]


def _ungated(text: str) -> list:
    """find_secrets with every format's cheap precondition switched off: each pattern over the whole text."""
    import dataclasses

    from plait.core import redact

    saved = redact.FORMATS
    try:
        redact.FORMATS = tuple(dataclasses.replace(f, requires=(), run=0) for f in saved)
        return [(f.start, f.end, f.format.id) for f in redact.find_secrets(text)]
    finally:
        redact.FORMATS = saved


def test_the_cheap_preconditions_never_hide_a_secret():
    # `requires` and `run` skip a pattern over text that cannot hold its match: they may make a check
    # faster, never blinder. Every example, alone, inside prose, in a long file and cut at a chunk edge.
    filler = "a model reads the notes; " * 200
    for _, text, _ in EXAMPLES:
        for around in (text, f"see {text} here", f"{filler}\n{text}\n{filler}", "x" * 4090 + " " + text):
            got = [(f.start, f.end, f.format.id) for f in find_secrets(around)]
            assert got and got == _ungated(around), around[-80:]


def test_the_longest_run_is_seen_across_chunk_edges():
    from plait.core.redact import longest_base64_run

    assert longest_base64_run("ab cd+/ef") == 6
    assert longest_base64_run(" " * 14 + "a" * 40 + " ", chunk=15) == 40
    assert longest_base64_run("a" * 100) == 48  # capped: nothing needs more
    assert longest_base64_run("é" * 50 + "-" * 50) == 0
