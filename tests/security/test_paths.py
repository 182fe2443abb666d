"""Paths a spec names and ids a user types → only files inside the spec's folder, only regular files, bounded.

A scripted model's `script` is confined as imports are (`../`, absolute paths and symlinks out are refused, and the
outside file's keys are never printed); `/dev/zero`, `/dev/urandom`, a FIFO or a huge file are refused at once, at
check time and at run time; `plait run --resume` takes a run id, never a path.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
from plait.cli import main as cli_main
from plait.compiler.report import render
from plait.core.paths import MAX_DATA_BYTES, UnreadableFile, outside_root, read_regular, run_id_problem

#: Seconds a refusal may take: it must be immediate, this only keeps a regression from hanging the suite.
BOUND = 10.0

SECRET_KEYS = {"prod_database_password": 1, "stripe_live_key": 2}


def _spec(folder: Path, script: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "spec.plait"
    script = script.replace("\\", "\\\\")
    path.write_text(f'model m = "scripted/demo" {{ script = "{script}" }}\nagent main "A." {{ model = m }}\n')
    return path


def _bounded(fn, *args, seconds: float = BOUND):
    """fn(*args) in a thread; fails (instead of hanging) when it does not return within `seconds`."""
    box: dict = {}

    def work() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{getattr(fn, '__name__', fn)} blocked for {seconds}s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _p307(result) -> list[str]:
    return [d.message for d in result.diagnostics if d.code == "P307"]


@pytest.fixture
def outside(tmp_path) -> Path:
    secret = tmp_path / "elsewhere" / "keys.json"
    secret.parent.mkdir()
    secret.write_text(json.dumps(SECRET_KEYS))
    return secret


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink", "symlinked-folder"])
def test_a_script_outside_the_spec_folder_is_refused_without_reading_it(how, tmp_path, outside):
    root = tmp_path / "project"
    root.mkdir()
    if how == "dotdot":
        spec = _spec(root, "../elsewhere/keys.json")
    elif how == "absolute":
        spec = _spec(root, str(outside))
    elif how == "symlink":
        (root / "replies.json").symlink_to(outside)
        spec = _spec(root, "replies.json")
    else:
        (root / "data").symlink_to(outside.parent, target_is_directory=True)
        spec = _spec(root, "data/keys.json")
    result = plait.compile(spec)
    messages = _p307(result)
    assert messages and "leaves the spec's directory" in messages[0]
    for fmt in ("text", "json"):
        out = render(result.diagnostics, result.sources, fmt)
        assert not any(key in out for key in SECRET_KEYS), out


def test_a_script_inside_the_folder_and_a_subfolder_still_loads(tmp_path):
    root = tmp_path / "project"
    (root / "replies").mkdir(parents=True)
    (root / "replies" / "r.json").write_text('[{"text": "hi"}]')
    assert _p307(plait.compile(_spec(root, "replies/r.json"))) == []


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/urandom"])
def test_devices_are_refused_at_once(special, tmp_path):
    with pytest.raises(UnreadableFile, match="not a regular file"):
        _bounded(read_regular, special)
    # Through a symlink inside the folder: refused as leaving it, never opened.
    root = tmp_path / "project"
    root.mkdir()
    (root / "r.json").symlink_to(special)
    messages = _bounded(lambda: _p307(plait.compile(_spec(root, "r.json"))))
    assert messages and "leaves the spec's directory" in messages[0]


def test_a_fifo_in_the_folder_is_refused_without_waiting_for_a_writer(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    os.mkfifo(root / "r.json")
    messages = _bounded(lambda: _p307(plait.compile(_spec(root, "r.json"))))
    assert messages and "is not a regular file" in messages[0]
    with pytest.raises(UnreadableFile):
        _bounded(read_regular, root / "r.json")


def test_a_huge_script_is_refused_before_reading(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    with open(root / "r.json", "wb") as fh:  # sparse: costs no disk
        fh.truncate(MAX_DATA_BYTES + 1)
    messages = _p307(plait.compile(_spec(root, "r.json")))
    assert messages and "larger than 8 MB" in messages[0]


def _provider_error(config, root: str | None = None) -> str:
    """The error the scripted provider raises on its first call with `config` (bounded: never a hang)."""
    from plait.runtime.providers.base import ModelRequest
    from plait.runtime.providers.errors import ProviderError
    from plait.runtime.providers.scripted import ScriptedProvider

    provider = ScriptedProvider(config, root=root)
    with pytest.raises(ProviderError) as info:
        _bounded(lambda: asyncio.run(provider.complete(ModelRequest(model="demo", messages=[]))))
    return str(info.value)


def _config(script: str, root: Path | None):
    """A scripted model reading `script`, and the folder the engine confines it to (None: the working directory)."""
    from plait.core.kinds import ModelNode

    return ModelNode(name="m", provider="scripted", model_id="demo", script=script), str(root) if root else None


def test_the_scripted_provider_refuses_special_files_at_run_time(tmp_path):
    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    assert "not a regular file" in _provider_error(*_config(str(fifo), tmp_path))
    assert "not a regular file" in _provider_error(*_config("/dev/zero", Path("/dev")))


@pytest.fixture
def outside_replies(tmp_path) -> Path:
    """A replies file beside the project folder, whose keys must never be read or shown."""
    path = tmp_path / "outside.json"
    path.write_text(json.dumps({**SECRET_KEYS, "main": [{"text": "served from outside"}]}))
    return path


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink", "symlinked-folder"])
def test_the_runtime_confines_a_script_built_without_the_compiler(how, tmp_path, outside_replies):
    # A config made by hand (the Python API, a tool that writes configs) is held to check's rule where the
    # provider opens the file: before, only `plait check` confined it and this served the outside replies.
    root = tmp_path / "project"
    root.mkdir()
    if how == "dotdot":
        script = str(root / ".." / "outside.json")
    elif how == "absolute":
        script = str(outside_replies)
    elif how == "symlink":
        (root / "r.json").symlink_to(outside_replies)
        script = str(root / "r.json")
    else:
        (root / "data").symlink_to(tmp_path)
        script = "data/outside.json"
    message = _provider_error(*_config(script, root))
    assert "leaves the spec's directory" in message
    assert not any(key in message for key in SECRET_KEYS) and "outside" not in message


def test_without_a_folder_the_working_directory_is_the_root(tmp_path, outside_replies, monkeypatch):
    root = tmp_path / "project"
    root.mkdir()
    (root / "r.json").write_text(json.dumps([{"text": "inside"}]))
    monkeypatch.chdir(root)
    assert "leaves the spec's directory" in _provider_error(*_config(str(outside_replies), None))
    assert "leaves the spec's directory" in _provider_error(*_config("../outside.json", None))
    from plait.runtime.providers.base import ModelRequest
    from plait.runtime.providers.scripted import ScriptedProvider

    reply = asyncio.run(ScriptedProvider(_config("r.json", None)[0]).complete(ModelRequest(model="demo", messages=[])))
    assert reply.text == "inside"


def test_a_script_swapped_for_a_symlink_after_check_is_refused_at_run_time(tmp_path, outside_replies):
    # The compiled graph is run after the file changed: the runtime checks again, on the file it opens.
    root = tmp_path / "project"
    (root / "r.json").parent.mkdir()
    (root / "r.json").write_text(json.dumps([{"text": "inside"}]))
    result = plait.compile(_spec(root, "r.json"))
    assert result.ok, result.diagnostics
    (root / "r.json").unlink()
    (root / "r.json").symlink_to(outside_replies)
    run = plait.run(result.graph, "hi", raise_on_error=False)
    assert run.error is not None and "leaves the spec's directory" in str(run.error)
    assert "served from outside" not in repr(run.output)
    # Put back, the same graph runs: the refusal was the rule, not a broken program.
    (root / "r.json").unlink()
    (root / "r.json").write_text(json.dumps([{"text": "inside"}]))
    assert plait.run(result.graph, "hi").output == "inside"


def test_the_fake_servers_script_loader_refuses_special_files(tmp_path):
    from plait.runtime.providers.fake import Script

    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        with pytest.raises(OSError, match="not a regular file"):
            _bounded(Script.load, path)


def test_outside_root():
    assert outside_root("/etc/passwd", "/tmp")
    assert not outside_root("/tmp/x/y.json", "/tmp")
    assert outside_root("/tmp/../etc/passwd", "/tmp")


@pytest.mark.parametrize("value", ["../runs/x.json", "/tmp/snap.json", "runs/x", "x.json", "..", "a\\b", ""])
def test_a_path_is_not_a_run_id(value):
    assert run_id_problem(value) is not None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_accepted_run_id_is_a_single_plain_name(value):
    if run_id_problem(value) is None:
        assert Path(value).name == value and not Path(value).is_absolute() and ".." not in value and "/" not in value


def test_a_generated_run_id_is_accepted():
    assert run_id_problem("20261201-145919-cf7c83") is None


def test_resume_with_a_path_is_a_usage_error_and_loads_nothing(tmp_path, capsys, monkeypatch):
    root = tmp_path / "project"
    root.mkdir()
    (root / "r.json").write_text('[{"text": "hi"}]')
    spec = _spec(root, "r.json")
    snapshot = tmp_path / "evil.json"
    snapshot.write_text("{}")
    monkeypatch.chdir(root)
    code = cli_main(["run", str(spec), "--resume", str(snapshot)])
    err = capsys.readouterr().err
    assert code == 2
    assert "--resume takes a run id" in err


def test_spec_text_with_no_file_is_confined_to_the_working_directory(tmp_path, outside_replies, monkeypatch):
    # `plait.compile(text)` has no spec folder: the working directory is it, as at run time. Before, an
    # absolute script was read from anywhere and its keys printed.
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    text = f'model m = "scripted/demo" {{ script = "{outside_replies}" }}\nagent main "A." {{ model = m }}\n'
    messages = _p307(plait.compile(text))
    assert messages and "leaves the spec's directory" in messages[0]
    assert not any(key in " ".join(messages) for key in SECRET_KEYS)


def test_fmt_with_no_path_leaves_a_symlinked_spec_and_its_target_alone(tmp_path, monkeypatch, capsys):
    # Discovery takes regular files only: a `*.plait` symlink into another folder is not the project's file,
    # and `plait fmt` must not rewrite what it points at.
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    messy = 'model   m="openai/x"\n'
    target = elsewhere / "theirs.plait"
    target.write_text(messy)
    (project / "linked.plait").symlink_to(target)
    (project / "linked_folder").symlink_to(elsewhere, target_is_directory=True)  # nor is a linked folder walked
    (project / "own.plait").write_text(messy)
    monkeypatch.chdir(project)
    assert cli_main(["fmt"]) == 0
    assert target.read_text() == messy
    assert (project / "own.plait").read_text() != messy
    assert "linked.plait" not in capsys.readouterr().err
