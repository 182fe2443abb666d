"""No secret value a run resolved reaches a client of the HTTP API: the run, the list, the events, the trace."""

from __future__ import annotations

from pathlib import Path

import pytest
from serve_helpers import VAULT, VAULT_TOOLS, Server, events

from plait.runtime.providers.fake import FAKE_KEY_ENV
from plait.testing import plait_fake_server  # noqa: F401  (the fixture)

pytestmark = pytest.mark.slow

SECRET = "sk-serve-api-51c0ffee9d7a4be2"


def test_a_key_the_run_resolved_is_masked_everywhere(plait_fake_server, tmp_path: Path, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv(FAKE_KEY_ENV, SECRET)
    plait_fake_server.push(
        {"tool_calls": [{"name": "peek", "arguments": {"what": "key"}}]}, {"text": f"it says {SECRET}"}
    )
    (tmp_path / "vault.plait").write_text(VAULT.format(url=plait_fake_server.base_url("openai"), env=FAKE_KEY_ENV))
    (tmp_path / "vault_tools.py").write_text(VAULT_TOOLS)
    server = Server(str(tmp_path / "vault.plait"), cwd=tmp_path)
    try:
        with server.client() as c:
            posted = c.post("/runs?wait=60s", json={"spec": "vault", "input": "open it"})
            run_id = posted.json()["id"]
            seen = [
                posted.text,
                c.get(f"/runs/{run_id}").text,
                c.get("/runs").text,
                c.get(f"/runs/{run_id}/trace").text,
                *(str(e) for e in events(c, run_id)),
            ]
    finally:
        server.stop()
    everything = "\n".join(seen)
    assert posted.json()["status"] == "done"
    # The tool's result and the model's reply reached the client, masked: the check below is not vacuous.
    assert "the key is <redacted>" in everything and "it says <redacted>" in everything
    assert SECRET not in everything
