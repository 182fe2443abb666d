"""The studio shows a loop left by a break, in a real browser: the route decision names the loop its case leaves,
and each loop the break ended says it was left by a break, from which route case, and (for a loop inside the one
named) the outer loop it is on its way out of; a loop whose condition ended it says so, not "break"."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_studio import TOKEN, Server, sign_in, snapshot
from test_studio import page as page  # noqa: F401 - a fixture, used by name

pytestmark = pytest.mark.slow

SPEC = """\
plait 0.3
model m = "scripted/m" { script = "nested.replies.json" }
step work {
  model  = m
  prompt = "work {{outer.iteration}}.{{loop.iteration}}"
  output { state: "more" | "next" | "stop" }
}
step rest { model = m, prompt = "rest" }
route judge on input.state {
  "more" -> rest
  "next" -> break
  "stop" -> break outer
}
loop inner = work -> judge { max_iterations = 3 }
step tally { model = m, prompt = "tally {{input}}" }
loop outer = inner -> tally { max_iterations = 3 }
chain main = outer
"""
REPLIES = [
    {"output": {"state": "more"}},
    {"text": "r"},
    {"output": {"state": "next"}},  # leaves inner: the outer loop goes on to tally
    {"text": "t1"},
    {"output": {"state": "stop"}},  # leaves outer from inside inner: tally does not run
]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "nested.plait").write_text(SPEC)
    (folder / "nested.replies.json").write_text(json.dumps(REPLIES))
    running = Server(folder, 0)
    running.start()
    try:
        yield running.url
    finally:
        running.stop()


def run_over_http(served: str) -> dict[str, Any]:
    request = urllib.request.Request(
        served + "/runs?wait=60s",
        data=json.dumps({"spec": "nested", "input": "x"}).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.loads(reply.read())


def test_a_loop_left_by_a_break_says_so_in_the_timeline(served: str, page: Any, tmp_path: Path):
    run = run_over_http(served)
    assert run["status"] == "done", run
    sign_in(page, f"{served}/#spec=nested&run={run['id']}")
    page.wait_for_selector("#run .pill.done")
    page.wait_for_selector("#timeline li.decision.break")
    lines = page.eval_on_selector_all(
        "#timeline li.decision",
        "ls => ls.map(l => [l.classList.contains('break'), l.querySelector('.tl-head b').textContent, (l.querySelector('.tl-meta') || {}).textContent || ''])",
    )
    # The two route cases that went to `break`, each naming the loop it leaves.
    routes = [(b, meta) for b, title, meta in lines if title == "route · judge"]
    assert routes == [
        (False, "case more"),
        (True, "case next → break inner"),
        (True, "case stop → break outer"),
    ], lines
    loops = [(title, meta) for b, title, meta in lines if title.startswith("loop · ")]
    assert loops == [
        ("loop · inner", "iteration 1"),
        ("loop · inner", "iteration 2 · left by break at route judge, case next"),
        ("loop · outer", "iteration 1"),
        ("loop · inner", "iteration 1 · left by break at route judge, case stop · on its way out of outer"),
        ("loop · outer", "iteration 2 · left by break at route judge, case stop"),
    ], lines
    snapshot(page, tmp_path, "loop-break")
    assert page.errors == []  # type: ignore[attr-defined]
