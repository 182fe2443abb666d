"""What an A2A follow-up's plain text decides for a lone pending approval (src/plait/serve/protocols/a2a.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("a2a")

from a2a.helpers.proto_helpers import new_message, new_text_part  # noqa: E402
from a2a.types.a2a_pb2 import Role  # noqa: E402

from plait.serve.protocols.a2a import decisions  # noqa: E402

PENDING = {"id": "main:call-1", "kind": "approval", "name": "pay", "arguments": {"amount": 500}}


def _decide(text: str) -> list:
    view = SimpleNamespace(id="run-1", pending=[PENDING])
    return decisions(view, new_message([new_text_part(text)], role=Role.ROLE_USER))  # type: ignore[arg-type]


def test_approve_same_by_text_remembers_the_call_for_the_run():
    assert _decide("approve same") == [{"id": "main:call-1", "action": "approve_same"}]
    assert _decide("approve_same") == [{"id": "main:call-1", "action": "approve_same"}]


def test_approve_and_reject_by_text_are_as_before():
    assert _decide("approve") == [{"id": "main:call-1", "action": "approve"}]
    assert _decide("reject too much") == [{"id": "main:call-1", "action": "reject", "reason": "too much"}]
