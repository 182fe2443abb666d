"""The GC threshold is raised while runs are in flight and put back when the last one ends."""

from __future__ import annotations

import gc

import pytest

from plait.runtime.gc_scope import RUN_THRESHOLDS, relaxed_gc
from runtime_helpers import call, fn_tool, go, make


@pytest.fixture()
def default_threshold():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_threshold_is_raised_during_a_run_and_restored_after_it(default_threshold):
    seen = []
    engine = make(
        [call("peek"), {"text": "ok"}], tools={"peek": fn_tool("peek", lambda: seen.append(gc.get_threshold()) or "x")}
    )
    go(engine.run("a"))
    assert seen == [RUN_THRESHOLDS] and gc.get_threshold() == (700, 10, 10)


def test_overlapping_scopes_restore_only_when_the_last_ends(default_threshold):
    with relaxed_gc():
        with relaxed_gc():
            pass
        assert gc.get_threshold() == RUN_THRESHOLDS
    assert gc.get_threshold() == (700, 10, 10)


def test_a_threshold_changed_during_a_run_is_kept(default_threshold):
    engine = make(
        [call("tune"), {"text": "ok"}], tools={"tune": fn_tool("tune", lambda: gc.set_threshold(1234, 5, 5) or "x")}
    )
    go(engine.run("go"))
    assert gc.get_threshold() == (1234, 5, 5)


def test_higher_thresholds_already_set_are_kept(default_threshold):
    gc.set_threshold(100_000, 5, 50)
    with relaxed_gc():
        assert gc.get_threshold() == (100_000, RUN_THRESHOLDS[1], 50)
    assert gc.get_threshold() == (100_000, 5, 50)


def test_a_disabled_threshold_stays_disabled(default_threshold):
    gc.set_threshold(0, 10, 10)
    seen = []
    engine = make(
        [call("peek"), {"text": "ok"}], tools={"peek": fn_tool("peek", lambda: seen.append(gc.get_threshold()) or "x")}
    )
    go(engine.run("go"))
    assert seen == [(0, 10, 10)] and gc.get_threshold() == (0, 10, 10)


def test_the_host_can_keep_its_own_gc_settings(default_threshold, monkeypatch):
    from plait.runtime import gc_scope

    monkeypatch.setattr(gc_scope, "enabled", False)
    seen = []
    engine = make(
        [call("peek"), {"text": "ok"}], tools={"peek": fn_tool("peek", lambda: seen.append(gc.get_threshold()) or "x")}
    )
    go(engine.run("a"))
    assert seen == [(700, 10, 10)] and gc.get_threshold() == (700, 10, 10)


@pytest.mark.slow
def test_plait_gc_keep_in_the_environment_turns_it_off():
    import subprocess
    import sys

    code = "import plait.runtime.gc_scope as g; print(g.enabled)"
    outs = [
        subprocess.run(
            [sys.executable, "-c", code], env={"PLAIT_GC": value}, capture_output=True, text=True, check=True
        ).stdout.strip()
        for value in ("keep", "")
    ]
    assert outs == ["False", "True"]
