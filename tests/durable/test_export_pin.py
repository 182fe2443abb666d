"""`plait runs export` carries the run's pin (the sources of the spec it started with and their digest), so the run
imported from it (`Engine.restore(export)`) is pinned to that spec and a resume under an edited one is checked as it
would be where it came from; an export without a pin (written before runs were pinned) still imports, unpinned; one
whose pin does not match its sources is refused."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from plait.cli import main
from plait.compiler.pin import digest_of
from plait.runtime import pinning
from plait.runtime.engine import Engine
from plait.runtime.store.snapshot import SnapshotError

SPEC = """plait 0.2

model demo = "scripted/demo" { script = "demo.json" }

step draft {
  model = demo
  prompt = "Draft {{input}}"
}

ask confirm "Send {{input}}?" {
  answer { ok: bool }
}

step send {
  model = demo
  prompt = "Send {{input}}"
}

chain main = draft -> confirm -> send
"""
DEMO = {"draft": [{"text": "a draft"}], "send": [{"text": "sent"}]}
EDITED = SPEC.replace('prompt = "Send {{input}}"', 'prompt = "Send {{input}} now"')


def project(root: Path, spec: str) -> Path:
    root.mkdir()
    (root / "spec.plait").write_text(spec)
    (root / "demo.json").write_text(json.dumps(DEMO))
    return root / "spec.plait"


@pytest.fixture
def exported(tmp_path, capsys) -> dict[str, Any]:
    """The export of a run that waits at its ask, made in project `a`."""
    spec = project(tmp_path / "a", SPEC)
    assert main(["run", str(spec), "--input", "go", "--json"]) == 3
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    out = tmp_path / "run.json"
    assert main(["runs", "export", run_id, "--dir", str(spec.parent), "-o", str(out)]) == 0
    return json.loads(out.read_text())


def imported(spec: Path, document: dict[str, Any]) -> tuple[str, tuple[str, str | None] | None, Any]:
    """The export restored into the project of `spec`: (run id, its pin there, the check of it against `spec`)."""
    engine = Engine.from_spec(spec)
    try:
        run = engine.restore(document)
        assert engine.store is not None
        return run.id, engine.store.pinned(run.id), pinning.check(engine, run.id)
    finally:
        asyncio.run(engine.aclose())


def test_an_export_carries_its_pin_and_the_imported_run_stays_pinned(tmp_path, exported):
    pin = exported["pin"]
    assert exported["version"] == 3
    assert pin["digest"] == digest_of(pin["spec"]) and json.loads(pin["spec"])["files"]["spec.plait"] == SPEC
    spec = project(tmp_path / "b", EDITED)  # another project, whose spec was edited where the run has not been yet
    engine = Engine.from_spec(spec)
    before = pinning.check_export(engine, exported)  # what a caller can ask before importing anything
    asyncio.run(engine.aclose())
    assert before is not None and before.blocked
    assert [c.split(" Send")[0] for c in before.blocking] == ["~ step send: prompt changed"]
    run_id, pinned, found = imported(spec, exported)
    assert run_id == exported["run_id"] and pinned == (pin["digest"], pin["spec"])
    # Checked against the journal now, as `plait resume`, serve and batch check it: the same changes stop it.
    assert found is not None and found.blocking == before.blocking


def test_an_export_without_a_pin_still_imports_unpinned(tmp_path, exported):
    del exported["pin"]
    spec = project(tmp_path / "b", EDITED)
    run_id, pinned, found = imported(spec, exported)
    assert run_id == exported["run_id"] and pinned is None and found is None  # nothing to compare: goes on


def test_an_export_whose_pin_was_edited_is_refused(tmp_path, exported):
    exported["pin"]["spec"] = exported["pin"]["spec"].replace("Send {{input}}", "Send {{input}} now")
    spec = project(tmp_path / "b", EDITED)
    with pytest.raises(SnapshotError, match="does not match its spec's sources"):
        imported(spec, exported)
    exported["pin"] = "sha256:0"
    with pytest.raises(SnapshotError, match="is not"):
        imported(spec, exported)
