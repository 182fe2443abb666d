"""Failures over real HTTP: status codes, in-band stream errors, dropped and truncated streams, timeouts, retries."""

from __future__ import annotations

import time

import pytest

from plait.runtime.providers.base import ERROR_KINDS, FALLBACK_KINDS, ProviderError, TextDelta

from conftest import FLAVOURS
from helpers import request, run_once, streamed_events

#: Every kind the fake server can be asked to fail with; it answers each in the provider's own wire shape.
SCRIPTED_KINDS = [
    "auth",
    "model_not_found",
    "rate_limit",
    "quota_exceeded",
    "context_length",
    "invalid_request",
    "unsupported",
    "content_filter",
    "server_error",
    "timeout",
]


@pytest.mark.parametrize("stream", [False, True], ids=["buffered", "streamed"])
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_every_error_kind_round_trips_through_the_wire(plait_fake_server, flavour: str, stream: bool) -> None:
    for kind in SCRIPTED_KINDS:
        plait_fake_server.push({"error": {"kind": kind, "message": f"scripted {kind}"}})
        err = run_once(plait_fake_server, flavour, stream, retries=0)
        assert isinstance(err, ProviderError), kind
        assert err.kind == kind, (kind, err.message)
        assert f"scripted {kind}" in err.message  # the provider's own words survive
        assert err.status is not None and err.status >= 400
        assert err.provider and err.model == flavour


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_in_band_stream_error_after_events_is_not_retried(plait_fake_server, sleeps, flavour: str) -> None:
    plait_fake_server.push(
        {"text": "one two three four five six", "stream_error": {"kind": "server_error", "after": 6}},
        {"text": "must not be used"},
    )
    seen, err = streamed_events(plait_fake_server, flavour, request(), retries=2)
    assert isinstance(err, ProviderError) and err.kind == "server_error"
    assert any(isinstance(e, TextDelta) for e in seen)
    assert len(plait_fake_server.requests) == 1 and sleeps == []


def test_in_band_error_before_any_event_is_retried(plait_fake_server, sleeps) -> None:
    # Anthropic's message_start yields nothing to the caller, so an overload right after it is safe to retry.
    plait_fake_server.push(
        {"text": "lost", "stream_error": {"kind": "server_error", "after": 1}}, {"text": "second try"}
    )
    seen, err = streamed_events(plait_fake_server, "anthropic", request(), retries=2)
    assert err is None and seen[-1].response.text == "second try"
    assert len(plait_fake_server.requests) == 2 and len(sleeps) == 1


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_truncated_stream_is_a_network_error(plait_fake_server, flavour: str) -> None:
    plait_fake_server.push({"text": "cut short here", "truncate": True})
    seen, err = streamed_events(plait_fake_server, flavour, request(), retries=0)
    assert isinstance(err, ProviderError) and err.kind == "network"
    assert "ended before" in err.message


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_connection_dropped_mid_stream(plait_fake_server, sleeps, flavour: str) -> None:
    plait_fake_server.push({"text": "a b c d e f g", "drop": 5}, {"text": "unused"})
    seen, err = streamed_events(plait_fake_server, flavour, request(), retries=2)
    assert isinstance(err, ProviderError) and err.kind == "network"
    # Words were already delivered, so the stream must not be restarted.
    assert any(isinstance(e, TextDelta) for e in seen)
    assert len(plait_fake_server.requests) == 1 and sleeps == []


@pytest.mark.parametrize("stream", [False, True], ids=["buffered", "streamed"])
def test_dropped_connection_before_a_reply_is_retried(plait_fake_server, sleeps, stream: bool) -> None:
    plait_fake_server.push({"drop": True}, {"drop": True}, {"text": "third time lucky"})
    result = run_once(plait_fake_server, "openai", stream, retries=2)
    assert not isinstance(result, ProviderError), result
    assert result[0].text == "third time lucky"
    assert len(sleeps) == 2 and 0.375 <= sleeps[0] <= 0.5 and 0.75 <= sleeps[1] <= 1.0


def test_retries_run_out_and_the_last_error_is_raised(plait_fake_server, sleeps) -> None:
    plait_fake_server.push(*[{"error": {"kind": "server_error", "message": f"attempt {i}"}} for i in range(3)])
    err = run_once(plait_fake_server, "anthropic", False, retries=2)
    assert isinstance(err, ProviderError) and err.kind == "server_error" and err.message == "attempt 2"
    assert len(sleeps) == 2


@pytest.mark.parametrize("header,value,expected", [("retry-after", "3", 3.0), ("retry-after-ms", "250", 0.25)])
def test_retry_after_is_honoured(plait_fake_server, sleeps, header: str, value: str, expected: float) -> None:
    plait_fake_server.push({"error": {"kind": "rate_limit"}, "headers": {header: value}}, {"text": "ok"})
    result = run_once(plait_fake_server, "openai", False)
    assert not isinstance(result, ProviderError) and sleeps == [expected]


def test_retry_after_beyond_the_cap_is_not_waited_for(plait_fake_server, sleeps) -> None:
    plait_fake_server.push({"error": {"kind": "rate_limit"}, "headers": {"retry-after": "3600"}}, {"text": "unused"})
    err = run_once(plait_fake_server, "openai", False)
    assert isinstance(err, ProviderError) and err.kind == "rate_limit" and err.retry_after == 3600
    assert sleeps == []


@pytest.mark.parametrize("kind", ["quota_exceeded", "auth", "invalid_request", "context_length", "model_not_found"])
def test_unfixable_failures_are_never_retried(plait_fake_server, sleeps, kind: str) -> None:
    plait_fake_server.push({"error": {"kind": kind}}, {"text": "unused"})
    err = run_once(plait_fake_server, "openai", False, retries=5)
    assert isinstance(err, ProviderError) and err.kind == kind
    assert sleeps == [] and len(plait_fake_server.requests) == 1


def test_x_should_retry_false_wins(plait_fake_server, sleeps) -> None:
    plait_fake_server.push(
        {"error": {"kind": "server_error"}, "headers": {"x-should-retry": "false"}}, {"text": "unused"}
    )
    err = run_once(plait_fake_server, "anthropic", False)
    assert isinstance(err, ProviderError) and err.kind == "server_error" and sleeps == []


@pytest.mark.parametrize("stream", [False, True], ids=["buffered", "streamed"])
def test_call_timeout_is_a_timeout_error(plait_fake_server, stream: bool) -> None:
    plait_fake_server.push({"text": "too late", "delay": "2s"})
    started = time.monotonic()
    err = run_once(plait_fake_server, "google", stream, request(timeout=0.2))
    assert isinstance(err, ProviderError) and err.kind == "timeout" and "0.2s" in err.message
    assert time.monotonic() - started < 1.5


def test_timeout_covers_a_slow_stream_too(plait_fake_server) -> None:
    plait_fake_server.push({"text": "one two three four five six seven eight", "chunk_delay": "100ms"})
    seen, err = streamed_events(plait_fake_server, "openai", request(timeout=0.35))
    assert isinstance(err, ProviderError) and err.kind == "timeout"
    assert seen  # some words arrived before the deadline


def test_config_timeout_applies_when_the_request_has_none(plait_fake_server) -> None:
    plait_fake_server.push({"text": "late", "delay": "2s"})
    err = run_once(plait_fake_server, "anthropic", False, timeout=0.2)
    assert isinstance(err, ProviderError) and err.kind == "timeout"


def test_unreachable_server_is_a_network_error(sleeps, monkeypatch) -> None:
    from plait.runtime.providers.fake import FAKE_KEY_ENV, FakeServer

    monkeypatch.setenv(FAKE_KEY_ENV, "k")
    server = FakeServer()
    server.url = "http://127.0.0.1:9"  # discard port: nothing listens
    err = run_once(server, "openai", False, retries=1)
    assert isinstance(err, ProviderError) and err.kind == "network" and len(sleeps) == 1
    assert err.kind in FALLBACK_KINDS


def test_every_kind_the_providers_raise_is_declared() -> None:
    assert set(SCRIPTED_KINDS) <= set(ERROR_KINDS)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_bare_scripted_status_gets_the_matching_error(plait_fake_server, flavour: str) -> None:
    plait_fake_server.push({"status": 404}, {"status": 503})
    not_found = run_once(plait_fake_server, flavour, False, retries=0)
    unavailable = run_once(plait_fake_server, flavour, True, retries=0)
    assert (not_found.kind, unavailable.kind) == ("model_not_found", "server_error")
    assert (not_found.status, unavailable.status) == (404, 503)
