"""A run's model requests → their journal fields and cassette keys, computed from what is new in each call.

`RunKeys` and `RequestRows` keep per conversation what its last call sent; whatever the next call does with the
conversation (grow it, window it, change a setting, interleave with another conversation), the key must be the one
`request_key` gives the whole request (a recorded cassette is looked up by it) and the digests one per message in
order, each body stored once (`plait runs diff` reads them).
"""

from __future__ import annotations

from plait.runtime.cassettes.request import RunKeys, request_key
from plait.runtime.providers.base import Message, ModelRequest, ToolCall, ToolSpec
from plait.runtime.secret_values import forget_all, remember
from plait.runtime.store.requests import RequestRows, comparable, digest

SYSTEM = "Answer in one short line."
TOOLS = [ToolSpec("echo", "Echo.", {"type": "object", "properties": {"text": {"type": "string"}}})]


def _turns() -> list[ModelRequest]:
    """Two conversations taking turns: one grows, is windowed, changes its max_tokens; the other grows."""
    a: list[Message] = [Message.user("go")]
    b: list[Message] = [Message.user("other")]
    out = []
    for n in range(6):
        out.append(ModelRequest("m", a[:], TOOLS, system=SYSTEM, path=("main",), max_tokens=None if n < 4 else 9))
        out.append(ModelRequest("m", b[:], [], path=("each", "[0]")))
        a.append(Message("assistant", tool_calls=[ToolCall(f"c{n}", "echo", {"text": str(n)})]))
        a.append(Message("tool", [], tool_call_id=f"c{n}", name="echo"))
        b.append(Message.user(f"more {n}"))
        if n == 2:  # a window: longer than what was sent, but no longer starting with it
            del a[:1]
    return out


def test_each_request_key_is_the_whole_requests_key() -> None:
    keys = RunKeys()
    for request in _turns():
        assert keys.key(request) == request_key(request)


def test_a_secret_remembered_mid_run_is_masked_in_later_keys() -> None:
    keys = RunKeys()
    requests = _turns()
    keys.key(requests[0])
    later = requests[2]
    unmasked = request_key(later)
    try:
        remember(SYSTEM)  # a secret's value the process read, as the system prompt happens to say
        assert keys.key(later) == request_key(later) != unmasked
    finally:
        forget_all()


def test_digests_are_one_per_message_and_each_body_is_stored_once() -> None:
    rows = RequestRows()
    stored: dict[str, object] = {}
    for request in _turns():
        row = rows.describe(request)
        assert row["digests"] == [digest(comparable(m)) for m in request.messages]
        for key, body in row.get("bodies", {}).items():
            assert key not in stored
            stored[key] = body
        assert set(row["digests"]) <= set(stored)
        if request.system:
            assert stored[row["system"]] == {"role": "system", "text": request.system}
