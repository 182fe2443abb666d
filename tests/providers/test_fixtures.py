"""Every recorded fixture in tests/fixtures/providers is parsed, mapped or compared here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plait.runtime.providers import anthropic, errors, google, openai_chat, openai_responses
from plait.runtime.providers.base import ProviderError, ResponseDone, TextDelta, ToolCallDelta, ToolCallStart

from fixtures import FIXTURES, files, meta, parse_body, replay_payloads, replay_sse, wire
from recorded import BUILDERS

#: name → (finish_reason, tool calls, has text). Read from each fixture's own description.
EXPECTED = {
    "anthropic/messages_nonstream_after_tool_results": ("stop", 0, True),
    "anthropic/messages_nonstream_max_tokens": ("length", 0, True),
    "anthropic/messages_nonstream_parallel_tool_use": ("tool_calls", 2, True),
    "anthropic/messages_stream_after_tool_results": ("stop", 0, True),
    "anthropic/messages_stream_max_tokens": ("length", 0, True),
    "anthropic/messages_stream_parallel_tool_use": ("tool_calls", 2, True),
    "anthropic/messages_stream_tool_use_no_args_haiku45": ("tool_calls", 1, False),
    "google/generate_content_after_function_responses": ("stop", 0, True),
    "google/generate_content_max_tokens": ("length", 0, True),
    "google/generate_content_parallel_function_calls": ("tool_calls", 2, False),
    "google/stream_generate_content_json_array_after_function_response_gemini3": ("stop", 0, True),
    "google/stream_generate_content_json_array_function_call_gemini3": ("tool_calls", 1, False),
    "google/stream_generate_content_sse_after_function_responses": ("stop", 0, True),
    "google/stream_generate_content_sse_max_tokens": ("length", 0, True),
    "google/stream_generate_content_sse_parallel_function_calls": ("tool_calls", 2, False),
    "google/stream_malformed_function_call": ("malformed_tool_call", 0, False),
    "google/stream_malformed_function_call_with_real_call": ("malformed_tool_call", 1, False),
    "google/vertex_generate_content_unexpected_tool_call": ("unexpected_tool_call", 1, False),
    "openai/chat_nonstream_after_tool_results": ("stop", 0, True),
    "openai/chat_nonstream_finish_length": ("length", 0, True),
    "openai/chat_nonstream_finish_length_reasoning_exhausted": ("length", 0, False),
    "openai/chat_nonstream_named_tool_choice_finish_stop": ("tool_calls", 1, False),
    "openai/chat_nonstream_parallel_tool_calls": ("tool_calls", 2, False),
    "openai/chat_nonstream_tool_chain_turn1": ("tool_calls", 1, False),
    "openai/chat_nonstream_tool_chain_turn2": ("tool_calls", 1, False),
    "openai/chat_nonstream_tool_chain_turn3": ("stop", 0, True),
    "openai/chat_stream_after_tool_results": ("stop", 0, True),
    "openai/chat_stream_finish_length": ("length", 0, True),
    "openai/chat_stream_finish_length_reasoning_exhausted": ("length", 0, False),
    "openai/chat_stream_parallel_tool_calls": ("tool_calls", 2, False),
    "openai/chat_stream_single_tool_call_fine_deltas": ("tool_calls", 1, False),
    "openai/chat_stream_single_tool_call_followup": ("stop", 0, True),
    "openai/responses_nonstream_after_function_call_output": ("stop", 0, True),
    "openai/responses_nonstream_incomplete_max_output_tokens": ("length", 0, True),
    "openai/responses_nonstream_parallel_function_calls": ("tool_calls", 2, False),
    "openai/responses_previous_response_id_chain_turn1": ("stop", 0, True),
    "openai/responses_previous_response_id_chain_turn2": ("tool_calls", 1, False),
    "openai/responses_previous_response_id_chain_turn3": ("tool_calls", 1, False),
    "openai/responses_previous_response_id_chain_turn4": ("stop", 0, True),
    "openai/responses_previous_response_id_text_turn1": ("stop", 0, True),
    "openai/responses_previous_response_id_text_turn2": ("stop", 0, True),
    "openai/responses_stream_after_function_call_output": ("stop", 0, True),
    "openai/responses_stream_function_call_store_false": ("tool_calls", 1, False),
    "openai/responses_stream_function_call_store_false_followup": ("stop", 0, True),
    "openai/responses_stream_incomplete_max_output_tokens": ("length", 0, True),
    "openai/responses_stream_parallel_function_calls": ("tool_calls", 2, False),
    "openrouter/chat_stream_tool_call_kimi_k2": ("tool_calls", 1, False),
}

#: Error fixtures (HTTP errors and in-band stream errors) → the kind they must map to.
ERROR_KINDS = {
    "anthropic/error_400_invalid_request_error": "invalid_request",
    "anthropic/error_400_prompt_too_long.observed": "context_length",
    "anthropic/error_401_authentication_error": "auth",
    "anthropic/error_404_not_found_error": "model_not_found",
    "anthropic/error_429_rate_limit_error.observed": "rate_limit",
    "anthropic/error_529_overloaded.observed": "server_error",
    "anthropic/error_529_overloaded_with_request_id.observed": "server_error",
    "anthropic/stream_error_overloaded.observed": "server_error",
    "google/error_400_api_key_invalid": "auth",
    "google/error_400_api_key_invalid_stream": "auth",
    "google/error_404_model_not_found": "model_not_found",
    "google/error_404_model_not_found_stream": "model_not_found",
    "google/error_429_resource_exhausted": "rate_limit",
    "openai/chat_error_400_context_length_exceeded.observed": "context_length",
    "openai/chat_error_400_invalid_value": "invalid_request",
    "openai/chat_error_401_invalid_api_key": "auth",
    "openai/chat_error_404_model_not_found": "model_not_found",
    "openai/chat_error_429_insufficient_quota.observed": "quota_exceeded",
    "openai/chat_error_429_rate_limit_tpm.observed": "rate_limit",
    "openai/responses_error_400_model_not_found": "model_not_found",
    "openai/responses_error_401_invalid_api_key": "auth",
    "openai/responses_error_429_headers.observed": "rate_limit",
    "openai/responses_stream_error_insufficient_quota": "quota_exceeded",
    "openrouter/chat_error_429_upstream_rate_limited": "rate_limit",
}

PARSERS = {
    "chat": (openai_chat.parse_chat, openai_chat.ChatStream),
    "responses": (openai_responses.parse_responses, openai_responses.ResponsesStream),
    "anthropic": (anthropic.parse_anthropic, anthropic.AnthropicStream),
    "google": (google.parse_google, google.GoogleStream),
}


def key(path: Path) -> str:
    name = path.name
    for suffix in (".meta.json", ".request.json", ".chunks.jsonl", ".chunks.json", ".json", ".sse"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return f"{path.parent.name}/{name}"


def bodies() -> list[Path]:
    return [
        p
        for p in files("*/*")
        if p.suffix in (".json", ".sse", ".jsonl") and not p.name.endswith((".meta.json", ".request.json"))
    ]


def is_error(path: Path) -> bool:
    return key(path) in ERROR_KINDS


def test_fixture_folder_is_present() -> None:
    assert FIXTURES.is_dir(), f"provider fixtures missing: expected them at {FIXTURES}"
    assert len(bodies()) > 60


def test_every_fixture_body_has_an_expectation() -> None:
    unclaimed = sorted({key(p) for p in bodies()} - set(EXPECTED) - set(ERROR_KINDS))
    assert not unclaimed, f"add these fixtures to EXPECTED or ERROR_KINDS: {unclaimed}"


@pytest.mark.parametrize("path", [p for p in files("*/*.meta.json")], ids=lambda p: key(p))
def test_every_meta_file_parses(path: Path) -> None:
    data = json.loads(path.read_text())
    assert isinstance(data, dict) and data


def replay(path: Path, chunk_size: int = 0):
    """Any success fixture → the event list its stream state yields (a buffered body yields one ResponseDone)."""
    if path.suffix == ".sse":
        return replay_sse(path, chunk_size)
    if path.name.endswith(".chunks.jsonl"):
        return replay_payloads(path, [json.loads(line) for line in path.read_text().splitlines() if line.strip()])
    data = json.loads(path.read_text())
    if path.name.endswith(".chunks.json"):
        return replay_payloads(path, data["chunks"])
    if isinstance(data, list):  # Gemini streamGenerateContent without alt=sse: one JSON array
        return replay_payloads(path, data)
    return [ResponseDone(parse_body(path, data))]


@pytest.mark.parametrize("path", [p for p in bodies() if not is_error(p)], ids=key)
def test_success_fixture_parses_to_expected_turn(path: Path) -> None:
    events = replay(path)
    assert isinstance(events[-1], ResponseDone)
    response = events[-1].response
    finish_reason, n_calls, has_text = EXPECTED[key(path)]
    assert response.finish_reason == finish_reason
    # The provider's own value is kept; only the OpenRouter stream never sends one.
    assert (response.raw_finish_reason is None) == key(path).startswith("openrouter/")
    assert len(response.tool_calls) == n_calls
    assert bool(response.text) == has_text
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
    for call in response.tool_calls:
        assert call.id and call.name
        assert call.arguments is not None and not call.malformed
    streamed = [e for e in events if not isinstance(e, ResponseDone)]
    if path.suffix == ".sse" or path.name.endswith((".chunks.json",)) or streamed:
        assert "".join(e.text for e in streamed if isinstance(e, TextDelta)) == response.text
        starts = [e for e in streamed if isinstance(e, ToolCallStart)]
        assert [(s.call_id, s.name, s.arguments) for s in starts] == [
            (c.id, c.name, c.arguments) for c in response.tool_calls
        ]
        for call in response.tool_calls:
            fragments = "".join(e.arguments for e in streamed if isinstance(e, ToolCallDelta) and e.call_id == call.id)
            assert fragments in ("", call.raw_arguments)
        assert all(e.step == 3 for e in streamed if isinstance(e, (ToolCallDelta, ToolCallStart)))


@pytest.mark.parametrize("path", files("*/*.sse"), ids=key)
@pytest.mark.parametrize("chunk_size", [1, 7, 64])
def test_stream_fixture_survives_arbitrary_chunking(path: Path, chunk_size: int) -> None:
    def outcome(size: int):
        try:
            events = replay_sse(path, size)
        except ProviderError as err:
            return ("error", err.kind)
        r = events[-1].response
        # Ids invented for Gemini 2.5 calls are random; only the wire's own ids must be stable.
        ids = [None if c.id.startswith("plait_") else c.id for c in r.tool_calls]
        return [type(e).__name__ for e in events], r.text, r.finish_reason, ids, [c.arguments for c in r.tool_calls]

    assert outcome(chunk_size) == outcome(0)


def test_streamed_and_buffered_twins_agree() -> None:
    """Same prompt recorded both ways: the shared finish table gives the same answer shape."""
    twins = [
        ("anthropic/messages_nonstream_parallel_tool_use.json", "anthropic/messages_stream_parallel_tool_use.sse"),
        ("anthropic/messages_nonstream_max_tokens.json", "anthropic/messages_stream_max_tokens.sse"),
        (
            "google/generate_content_parallel_function_calls.json",
            "google/stream_generate_content_sse_parallel_function_calls.sse",
        ),
        ("google/generate_content_max_tokens.json", "google/stream_generate_content_sse_max_tokens.sse"),
        ("openai/chat_nonstream_parallel_tool_calls.json", "openai/chat_stream_parallel_tool_calls.sse"),
        ("openai/chat_nonstream_finish_length.json", "openai/chat_stream_finish_length.sse"),
        (
            "openai/responses_nonstream_parallel_function_calls.json",
            "openai/responses_stream_parallel_function_calls.sse",
        ),
        (
            "openai/responses_nonstream_incomplete_max_output_tokens.json",
            "openai/responses_stream_incomplete_max_output_tokens.sse",
        ),
    ]
    for buffered, streamed in twins:
        a = replay(FIXTURES / buffered)[-1].response
        b = replay(FIXTURES / streamed)[-1].response
        assert (a.finish_reason, a.raw_finish_reason, len(a.tool_calls)) == (
            b.finish_reason,
            b.raw_finish_reason,
            len(b.tool_calls),
        ), (buffered, streamed)


def test_openrouter_ids_only_on_first_fragment_are_kept() -> None:
    events = replay_sse(FIXTURES / "openrouter/chat_stream_tool_call_kimi_k2.sse")
    call = events[-1].response.tool_calls[0]
    assert call.id == "0" and call.arguments == {} and events[-1].response.raw_finish_reason is None


def test_openai_fine_deltas_carry_one_accumulator_id() -> None:
    events = replay_sse(FIXTURES / "openai/chat_stream_single_tool_call_fine_deltas.sse")
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert len(deltas) == 11 and len({d.call_id for d in deltas}) == 1
    assert deltas[0].call_id == events[-1].response.tool_calls[0].id


def test_gemini_thought_signature_is_kept_on_the_call() -> None:
    response = replay(FIXTURES / "google/generate_content_parallel_function_calls.json")[-1].response
    assert response.tool_calls[0].signature and response.tool_calls[1].signature is None
    assert all(c.id.startswith("plait_") for c in response.tool_calls)  # Gemini 2.5 sends no ids


# --- errors -----------------------------------------------------------------------


def error_of(path: Path) -> ProviderError:
    info = meta(path).get("response") or {}
    status = info.get("status") or 200
    headers = {k.lower(): v for k, v in (info.get("headers") or {}).items()}
    if path.suffix == ".sse":
        replay_sse(path)
    elif path.name.endswith(".chunks.jsonl"):
        replay(path)
    else:
        raw = path.read_bytes()
        if key(path) == "openai/responses_error_429_headers.observed":
            recorded = json.loads(raw)  # headers only; the body was not captured
            return errors.from_response(recorded["status"], recorded["headers"], b"")
        return errors.from_response(status, headers, raw)
    raise AssertionError("in-band error fixture replayed without raising")


@pytest.mark.parametrize("path", [p for p in bodies() if is_error(p)], ids=key)
def test_error_fixture_maps_to_its_kind(path: Path) -> None:
    try:
        err = error_of(path)
    except ProviderError as raised:
        err = raised
    assert err.kind == ERROR_KINDS[key(path)]
    assert err.message and not err.message.startswith("HTTP ") or key(path).endswith("429_headers.observed")


def test_error_messages_are_the_providers_own() -> None:
    err = error_of(FIXTURES / "anthropic/error_401_authentication_error.json")
    assert err.message == "invalid x-api-key"
    err = error_of(FIXTURES / "openai/chat_error_429_rate_limit_tpm.observed.json")
    assert err.retry_after == pytest.approx(26.604)


# --- request bodies ------------------------------------------------------------------


@pytest.mark.parametrize("path", files("*/*.request.json"), ids=key)
def test_built_request_matches_recorded_shape(path: Path) -> None:
    recorded = json.loads(path.read_text())
    kind = wire(path)
    to_request, project = BUILDERS[kind]
    request = to_request(recorded)
    if kind == "chat":
        body = openai_chat.chat_body(request, stream=False, temperature=None, max_tokens=None)
    elif kind == "responses":
        body = openai_responses.responses_body(request, stream=False, temperature=None, max_tokens=None)
    elif kind == "anthropic":
        body = anthropic.anthropic_body(request, stream=False, temperature=None, max_tokens=request.max_tokens)
    else:
        body = google.google_body(request, temperature=None, max_tokens=None)
    assert project(body) == project(recorded)
