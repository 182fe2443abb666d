"""The VS Code extension (editors/vscode): `vsce package` builds a .vsix holding the grammar, the language
configuration and the language client, and the command the extension starts is a language server over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from editors_support import EXTENSION, GRAMMAR, node, npm_tool

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def vsix(tmp_path_factory) -> Iterator[zipfile.ZipFile]:
    vsce = npm_tool("vsce")
    out = tmp_path_factory.mktemp("vsix") / "plait.vsix"
    # The project has no public repository URL yet; without the flag vsce stops to ask.
    result = subprocess.run(
        [str(vsce), "package", "--allow-missing-repository", "--out", str(out)],
        cwd=EXTENSION,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    with zipfile.ZipFile(out) as archive:
        yield archive


def test_the_vsix_holds_the_grammar_the_configuration_and_the_client(vsix):
    names = set(vsix.namelist())
    manifest = json.loads(vsix.read("extension/package.json"))
    (language,) = manifest["contributes"]["languages"]
    (grammar,) = manifest["contributes"]["grammars"]
    # Every file the manifest points at is in the package...
    for path in (manifest["main"], language["configuration"], grammar["path"]):
        assert "extension/" + os.path.normpath(path) in names, path
    # ...the grammar is the repository's, byte for byte, and the configuration is the folder's.
    assert vsix.read("extension/" + os.path.normpath(grammar["path"])) == GRAMMAR.read_bytes()
    configuration = json.loads(vsix.read("extension/language-configuration.json"))
    assert configuration["comments"]["lineComment"] == "#"
    assert ["{", "}"] in configuration["brackets"]
    # The client and what it requires at run time are bundled; the build and test tools are not.
    assert "extension/server.js" in names
    assert "extension/node_modules/vscode-languageclient/package.json" in names
    assert "extension/node_modules/vscode-jsonrpc/package.json" in names
    assert not any(
        n.startswith(("extension/node_modules/@vscode/vsce", "extension/node_modules/vscode-tmgrammar-test"))
        for n in names
    )
    assert {"extension/LICENSE.txt", "extension/readme.md"} <= names


def lsp_message(stream, payload: dict | None = None) -> dict:
    """Write one LSP message (when given) or read one: `Content-Length` framing over the pipes."""
    if payload is not None:
        body = json.dumps(payload).encode()
        stream.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        stream.flush()
        return payload
    length = 0
    while (line := stream.readline().strip()) != b"":
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(stream.read(length))


def test_the_command_the_extension_starts_answers_initialize_over_stdio(tmp_path):
    pytest.importorskip("pygls", reason="`plait lsp` needs the lsp extra")
    # The extension's defaults, through its own settings logic (server.js), with no settings written.
    script = "console.log(JSON.stringify(require('./server').serverCommand({}, process.argv[1])))"
    shown = subprocess.run(
        [node(), "-e", script, str(tmp_path)], cwd=EXTENSION, capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    command = json.loads(shown.stdout)
    assert command == {"command": "plait", "args": ["lsp"]}
    # `plait` as VS Code would find it on PATH: the one installed beside this interpreter.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    server = subprocess.Popen(
        [command["command"], *command["args"]],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        lsp_message(
            server.stdin,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": {}},
            },
        )
        reply = lsp_message(server.stdout)
        assert reply["id"] == 1 and "textDocumentSync" in reply["result"]["capabilities"], reply
        lsp_message(server.stdin, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
        lsp_message(server.stdin, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        assert lsp_message(server.stdout)["id"] == 2
        lsp_message(server.stdin, {"jsonrpc": "2.0", "method": "exit"})
        assert server.wait(timeout=30) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        for pipe in (server.stdin, server.stdout, server.stderr):
            pipe.close()


def test_the_extension_scripts_are_valid_javascript():
    for script in ("extension.js", "server.js", "copy-grammar.js"):
        result = subprocess.run([node(), "--check", script], cwd=EXTENSION, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr


def test_the_settings_become_the_server_command():
    cases = [
        ({}, None),
        ({"path": "${workspaceFolder}/.venv/bin/plait"}, "/work/spec"),
        ({"path": "~/bin/plait", "args": ["lsp", "--stdio"]}, None),
        ({"path": "  "}, None),
    ]
    script = (
        "const {serverCommand} = require('./server');"
        "const cases = JSON.parse(process.argv[1]);"
        "console.log(JSON.stringify(cases.map(([s, f]) => serverCommand(s, f === null ? undefined : f))));"
    )
    shown = subprocess.run(
        [node(), "-e", script, json.dumps(cases)], cwd=EXTENSION, capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == [
        {"command": "plait", "args": ["lsp"]},
        {"command": "/work/spec/.venv/bin/plait", "args": ["lsp"]},
        {"command": str(Path.home() / "bin" / "plait"), "args": ["lsp", "--stdio"]},
        {"command": "plait", "args": ["lsp"]},
    ]
