"""map `max_items`: a list longer than the declared bound fails the map before any item runs (the cost bound's premise)."""

from __future__ import annotations

import json

import pytest

import plait
from plait.runtime.errors import AgentError
from plait.runtime.engine import Engine

SPEC = """
model m = "scripted/m" { script = "m.replies.json" }

input { items: list[string] }

step each { model = m, prompt = "Say {{input}}" }

map all = each { over = run.input.items, max_items = 2 }
"""


def _engine(tmp_path):
    (tmp_path / "spec.plait").write_text(SPEC)
    (tmp_path / "m.replies.json").write_text(json.dumps([{"text": "one"}, {"text": "two"}, {"text": "three"}]))
    return Engine.from_spec(tmp_path / "spec.plait")


def test_a_list_within_max_items_runs_every_item(tmp_path):
    result = plait.run(_engine(tmp_path), {"items": ["a", "b"]})
    assert result.stop_reason == "done" and result.output == ["one", "two"]


def test_a_list_longer_than_max_items_fails_before_any_item_runs(tmp_path):
    with pytest.raises(AgentError) as failed:
        plait.run(_engine(tmp_path), {"items": ["a", "b", "c"]})
    assert failed.value.kind == "map_too_long" and "3 items, more than max_items = 2" in str(failed.value)
    assert failed.value.report["model_calls"] == 0
