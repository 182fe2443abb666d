"""`plait fake-server SCRIPT` as users run it: a separate process that prints its URL and serves."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from plait.runtime.providers import make_provider
from plait.core.kinds import ModelNode

from helpers import request


@pytest.mark.slow
def test_fake_server_command_serves_a_script(tmp_path, monkeypatch) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps({"*": [{"text": "from the script"}], "gpt-special": [{"text": "keyed by model"}]}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "plait", "fake-server", str(script), "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        monkeypatch.setenv("K", "x")

        async def go():
            a = make_provider(
                ModelNode(name="a", provider="anthropic", model_id="claude", base_url=url, api_key_env="K")
            )
            b = make_provider(
                ModelNode(name="b", provider="openai", model_id="gpt-special", base_url=url + "/v1", api_key_env="K")
            )
            first = await a.complete(request())
            second = await b.complete(request(model="gpt-special"))
            await a.aclose()
            await b.aclose()
            return first.text, second.text

        assert asyncio.run(go()) == ("from the script", "keyed by model")
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()


@pytest.mark.slow
def test_fake_server_command_reports_a_bad_script(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    done = subprocess.run([sys.executable, "-m", "plait", "fake-server", str(bad)], capture_output=True, text=True)
    assert done.returncode == 2 and "cannot load" in done.stderr


@pytest.mark.slow
def test_pytest_plugin_gives_users_the_fixture(tmp_path) -> None:
    (tmp_path / "test_user.py").write_text(
        "import asyncio\n"
        "from plait.runtime.providers import make_provider\n"
        "from plait.runtime.providers.base import Message, ModelRequest\n"
        "def test_agent(plait_fake_server):\n"
        "    plait_fake_server.push({'text': 'hello from CI'})\n"
        "    provider = make_provider(plait_fake_server.config('google'))\n"
        "    async def go():\n"
        "        try:\n"
        "            return await provider.complete(ModelRequest('gemini-x', [Message.user('hi')]))\n"
        "        finally:\n"
        "            await provider.aclose()\n"
        "    assert asyncio.run(go()).text == 'hello from CI'\n"
    )
    # No autoloaded plugins: the fixture must come from `-p plait.testing` alone (and startup stays fast).
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "plait.testing", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


@pytest.mark.slow
def test_fake_server_command_prints_each_providers_base_url_and_serves_an_agent_by_path(tmp_path) -> None:
    import openai

    script = tmp_path / "replies.json"
    script.write_text(json.dumps({"triage": [{"text": "triage's reply"}], "*": [{"text": "anyone's"}]}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "plait", "fake-server", str(script)], stdout=subprocess.PIPE, text=True
    )
    try:
        url = proc.stdout.readline().strip()
        lines = [proc.stdout.readline().split("base_url =") for _ in range(4)]
        printed = {name.strip(): where.strip() for name, where in lines}
        assert printed == {"openai:": url + "/v1", "openai-compatible:": url + "/v1", "anthropic:": url, "google:": url}
        assert f"{url}/agents/NAME/v1" in proc.stdout.readline()
        with openai.OpenAI(base_url=f"{url}/agents/triage/v1", api_key="any", max_retries=0) as client:
            reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert reply.choices[0].message.content == "triage's reply"
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()


def test_fake_server_help_says_how_to_reach_an_agents_replies(capsys) -> None:
    from plait.cli import main

    with pytest.raises(SystemExit):
        main(["fake-server", "--help"])
    text = capsys.readouterr().out
    assert "/agents/NAME" in text and "metadata.agent" in text and "base_url" in text
