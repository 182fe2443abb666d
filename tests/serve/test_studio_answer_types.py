"""An ask whose `answer` is a union of records (plait 0.3, `answer Booking`) in the studio, in a real browser: the
answer form asks which record, then that record's fields (not its discriminator), and the run goes on with the
record; over plain HTTP the answer endpoint checks an answer against the whole type."""

from __future__ import annotations

import json
import urllib.error
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

model m = "scripted/m" { script = "booking.replies.json" }

type Flight { kind: "flight", number: string }
type Hotel { kind: "hotel", name: string, nights: int }
type Booking = Flight | Hotel

ask pick "Which booking for {{input}}?" { answer Booking }

step book_flight { model = m, prompt = "Book flight {{input.number}}" }
step book_hotel { model = m, prompt = "Book hotel {{input.name}} for {{input.nights}} nights" }

route book on input.kind {
  "flight" -> book_flight
  "hotel"  -> book_hotel
}

chain main = pick -> book
"""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "booking.plait").write_text(SPEC)
    (folder / "booking.replies.json").write_text(
        json.dumps({"book_flight": [{"text": "flight booked"}], "book_hotel": [{"text": "hotel booked"}]})
    )
    running = Server(folder, 0)
    running.start()
    try:
        yield running.url
    finally:
        running.stop()


def call(served: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        served + path,
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read())


def test_the_answer_endpoint_checks_a_union_answer_against_its_records(served: str):
    status, run = call(served, "/runs?wait=60s", {"spec": "booking", "input": "a trip"})
    assert status in (200, 201) and run["status"] == "waiting"
    [ask] = run["pending"]
    assert [o["title"] for o in ask["answer_schema"]["anyOf"]] == ["Flight", "Hotel"]
    decide = f"/runs/{run['id']}/decisions"
    status, refused = call(
        served,
        decide,
        {"decisions": [{"id": ask["id"], "action": "answer", "answer": {"kind": "hotel", "name": "Ritz"}}]},
    )
    assert status == 400 and "nights" in refused["error"]
    answer = {"kind": "hotel", "name": "Ritz", "nights": 2}
    status, _ = call(served, decide, {"decisions": [{"id": ask["id"], "action": "answer", "answer": answer}]})
    assert status == 202


def test_answer_a_union_in_the_browser(served: str, page: Any, tmp_path: Path):
    status, run = call(served, "/runs?wait=60s", {"spec": "booking", "input": "a trip"})
    assert status in (200, 201) and run["status"] == "waiting"
    sign_in(page, f"{served}/#spec=booking&run={run['id']}")
    card = page.wait_for_selector(".pending[data-kind=ask]")
    chooser = card.query_selector("select[name='value.record']")
    assert chooser.eval_on_selector_all("option", "os => os.map(o => o.textContent)") == ["Flight", "Hotel"]
    chooser.select_option(label="Hotel")
    card.wait_for_selector("input[name=nights]")
    assert card.query_selector("[name=kind]") is None  # the discriminator is the record chosen, not a field
    card.query_selector("input[name=name]").fill("Ritz")
    card.query_selector("input[name=nights]").fill("2")
    snapshot(page, tmp_path, "union-answer")
    card.query_selector("button[type=submit]").click()
    page.wait_for_selector("#run .pill.done")
    request = urllib.request.Request(f"{served}/runs/{run['id']}", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=60) as reply:
        done = json.loads(reply.read())
    # The hotel case ran: the answer was the Hotel record, whole (its nights are required).
    assert done["status"] == "done" and done["output"] == "hotel booked"
    assert page.errors == []  # type: ignore[attr-defined]
