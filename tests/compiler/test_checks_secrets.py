"""Literal secrets (P501): recognised formats anywhere, suspicious tokens in credential
positions, never echoed in full, the source span marked for redaction."""

from __future__ import annotations

import pytest

from checks_helpers import FAST, assert_at, clean, compile_text, only

SECRETS = {
    "openai": "sk-abcdefghijklmnopqrstuvwxyz012345",
    "openai-project": "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv",
    "anthropic": "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2",
    "google": "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "github": "ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "github-pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    "slack": "xoxb-1234567890-abcdefghij",
    "hugging-face": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


def _spec(where: str) -> str:
    return (
        FAST.replace('"openai/gpt-4o-mini"', '"openai/gpt-4o-mini" { ' + where + " }")
        + 'step main { model = fast, prompt = "{{input}}" }\n'
    )


@pytest.mark.parametrize("kind", SECRETS)
def test_known_formats_in_a_model_header(tmp_path, kind):
    secret = SECRETS[kind]
    text = _spec(f'headers = {{ "X-Key" = "{secret}" }}')
    d = only(compile_text(text, tmp_path), "P501")
    assert_at(d, text, f'"{secret}"')
    assert secret not in d.message and secret[4:] not in d.message
    assert f"`{secret[:4]}…`" in d.message
    assert d.redact == (d.span,)


def test_api_key_literal_is_a_secret_not_a_type_error(tmp_path):
    text = _spec('api_key = "hunter2"')
    result = compile_text(text, tmp_path)
    d = only(result, "P501")
    assert [x.code for x in result.diagnostics] == ["P501"]
    assert_at(d, text, '"hunter2"')
    assert "hunter2" not in d.message
    assert d.fix.message == 'move it into an environment variable and write `api_key = env("API_KEY")`'


def test_openai_key_fix_names_the_usual_variable(tmp_path):
    d = only(compile_text(_spec(f'api_key = "{SECRETS["openai"]}"'), tmp_path), "P501")
    assert d.message == "literal secret: `sk-a…` looks like an OpenAI API key"
    assert 'env("OPENAI_API_KEY")' in d.fix.message


def test_env_is_clean(tmp_path):
    clean(compile_text(_spec('api_key = env("OPENAI_API_KEY"), base_url = "https://api.openai.com/v1"'), tmp_path))


def test_secret_in_a_system_prompt(tmp_path):
    text = FAST + f'agent main {{ model = fast, system = "Use key {SECRETS["anthropic"]} for the API." }}\n'
    d = only(compile_text(text, tmp_path), "P501")
    assert "Anthropic" in d.message and "`sk-a…`" in d.message


def test_bearer_token_in_an_http_tool_header(tmp_path):
    text = (
        FAST
        + """
    tool t "T." {
      run = http(GET, "https://x.example/") { headers = { "Authorization" = "Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0" } }
    }
    agent main { model = fast, tools = [t] }
    """
    )
    d = only(compile_text(text, tmp_path), "P501")
    assert "bearer token" in d.message and "9f8e7d" not in d.message


def test_high_entropy_token_in_a_credential_position(tmp_path):
    text = (
        FAST
        + """
    tool t "T." {
      run = http(GET, "https://x.example/") { headers = { "X-Auth-Token" = "q8Zr2LmT0vNw5KpXa7YcBd3FhJ6GsE1u" } }
    }
    agent main { model = fast, tools = [t] }
    """
    )
    assert "looks like a credential" in only(compile_text(text, tmp_path), "P501").message


def test_long_words_and_templates_in_credential_positions_are_clean(tmp_path):
    text = (
        FAST
        + """
    tool t "T." {
      params { token: string }
      run = http(GET, "https://x.example/sk-not-a-key/path") {
        headers = { "Authorization" = "Bearer {{token}}", "X-Token-Kind" = "organisation_wide_read_only_access_token" }
      }
    }
    agent main { model = fast, tools = [t], system = "Tokens look like sk-..., never print them." }
    """
    )
    clean(compile_text(text, tmp_path))


def test_a_secret_in_a_maps_or_loops_attributes_is_found_and_their_bodies_do_not_crash_the_scan(tmp_path):
    # A map's and a loop's `body` is their runnables, not an attribute block: the scan once crashed on them.
    secret = SECRETS["openai"]
    text = _spec('api_key = env("OPENAI_API_KEY")').replace("step main", "step one") + (
        'map each = one { over = input.items, on_error = "' + secret + '" }\nloop main = one { max_iterations = 2 }\n'
    )
    d = only(compile_text(text, tmp_path), "P501")
    assert_at(d, text, f'"{secret}"')
