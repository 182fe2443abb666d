"""A scripted reply list → a loopback server speaking the OpenAI, Anthropic and Gemini wire formats.

    with FakeServer([{"tool_calls": [{"name": "add", "arguments": {"a": 2}}]}, {"text": "4"}]) as server:
        provider = make_provider(server.config("anthropic"))

See `reply.py` for the reply shape and the server-only failure knobs.
"""

from .reply import Reply
from .script import Script, ScriptExhausted
from .server import FAKE_KEY_ENV, FakeServer, RecordedRequest

__all__ = ["FAKE_KEY_ENV", "FakeServer", "RecordedRequest", "Reply", "Script", "ScriptExhausted"]
