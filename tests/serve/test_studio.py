"""The studio in a real browser: a real `plait serve` on loopback, Debian's Chromium driven by Playwright.

One run goes through everything a person does in the studio: the token asked for
once, a run started from the form generated from the entry's input type (with a
mistake caught before sending), the graph showing where the run is (the step it
passed, the ask it waits at, the agent whose call runs), an ask answered, a bad
edit refused, the call approved, and the timeline and output shown. Text the run
produced that looks like markup is shown as text. Screenshots are kept (under
tmp_path, and copied to $PLAIT_ARTIFACTS when it is set) and each is checked for
layout at 1280x800: nothing wider than the window, the drawing inside it.

Nothing waits on time: the page is waited on by selector, and the approved tool
blocks on a loopback socket the test opens, so the page can be looked at while
the call runs, until the test lets it finish.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

sync_api = pytest.importorskip("playwright.sync_api", reason="the studio tests need playwright (the test extra)")
pytest.importorskip("starlette", reason="plait serve needs the serve extra")
CHROMIUM = "/usr/bin/chromium"
if not Path(CHROMIUM).exists():  # pragma: no cover - .ci/run installs it
    pytest.skip("the studio tests need Debian's chromium (apt-get install chromium)", allow_module_level=True)

#: Debian's Chromium, headless, with nothing that reaches past loopback.
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOKEN = "studio-test-token-5f1c2a"

SPEC = """plait 0.2

model fast = "scripted/fast" { script = "purchase.replies.json" }

input {
  item:     string "What the requester wants to buy"
  amount:   float "Its price, in EUR"
  priority: "low" | "normal" | "urgent"
  express:  bool
}

step assess "Assess a purchase request." {
  model  = fast
  prompt = "Assess this purchase request: {{run.input.item}} for {{run.input.amount}} EUR."
  output {
    risk:   "low" | "high"
    reason: string
  }
}

ask approval "Approve buying {{run.input.item}}? Risk: {{input.risk}} ({{input.reason}})" {
  answer {
    decision: "approve" | "reject"
    note:     string? "Optional, for the requester"
  }
}

tool place_order "Place the order." {
  params {
    item:   string
    amount: float
  }
  run      = python("purchase_tools:place_order")
  approval = required
}

agent buyer "Place the order." {
  model  = fast
  system = "Place the order with the tool."
  tools  = [place_order]
}

chain main = assess -> approval -> buyer
"""
REPLIES = {
    # Model text that looks like markup: the page must show it, never parse it.
    "assess": [{"output": {"risk": "high", "reason": "Above the <b>500 EUR</b> limit."}}],
    "buyer": [
        {"tool_calls": [{"name": "place_order", "arguments": {"item": "a laptop", "amount": 1200.0}}]},
        {"text": "Ordered <script>window.pwned = 1</script> the laptop."},
    ],
}
#: Nested input: a list and an object, an optional field inside it, a whole number.
SURVEY = """plait 0.2

model fast = "scripted/fast" { script = "survey.replies.json" }

input {
  title:  string "What the survey is about"
  tags:   list[string]
  place:  object { city: string, zip: int? }
  weight: int
}

step summarise "Summarise a survey." {
  model  = fast
  prompt = "Summarise this survey: {{run.input.title}}"
}
"""
SURVEY_REPLIES = {"summarise": [{"text": "A survey about Lisbon."}]}
TOOLS = """
import os
import socket


def place_order(item: str, amount: float) -> str:
    # Held open until the test has seen the call running in the browser, then let go by it.
    with socket.create_connection(("127.0.0.1", int(os.environ["STUDIO_GATE_PORT"])), timeout=120) as gate:
        gate.recv(1)
    return f"order 42 placed: {item} for {amount} EUR"
"""


@pytest.fixture
def gate() -> Iterator[socket.socket]:
    """The loopback socket the approved tool connects to and waits on."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(120)
    yield server
    server.close()


class Server:
    """One `plait serve` process over `folder`; `start` again after a kill takes the same port."""

    def __init__(self, folder: Path, gate_port: int) -> None:
        self.folder, self.port = folder, 0
        self.env = os.environ | {"PLAIT_SERVE_TOKEN": TOKEN, "STUDIO_GATE_PORT": str(gate_port)}
        self.proc: subprocess.Popen[str] | None = None
        self.drain: threading.Thread | None = None
        self.url = ""

    def start(self) -> str:
        proc = self.proc = subprocess.Popen(
            [sys.executable, "-m", "plait", "serve", str(self.folder), "--port", str(self.port)],
            cwd=self.folder,
            env=self.env,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        # The start line names the port; it is printed once the socket listens.
        line = proc.stderr.readline()
        if " on http://" not in line:
            proc.kill()
            rest = proc.stderr.read()
            self.stop()
            pytest.fail(f"plait serve did not start: {line}{rest}")
        # Keep reading its stderr so the server never blocks on a full pipe.
        self.drain = threading.Thread(target=lambda: proc.stderr and proc.stderr.read(), daemon=True)
        self.drain.start()
        self.url = line.split(" on ", 1)[1].strip()
        self.port = int(self.url.rsplit(":", 1)[1])
        return self.url

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.stop()

    def stop(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        proc.wait()
        if self.drain is not None:
            self.drain.join()
        if proc.stderr is not None:
            proc.stderr.close()
        self.proc = self.drain = None


@pytest.fixture
def server(tmp_path: Path, gate: socket.socket) -> Iterator[Server]:
    """`plait serve` on a free loopback port with a bearer token, serving both specs."""
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "purchase.plait").write_text(SPEC)
    (folder / "purchase.replies.json").write_text(json.dumps(REPLIES))
    (folder / "purchase_tools.py").write_text(TOOLS)
    (folder / "survey.plait").write_text(SURVEY)
    (folder / "survey.replies.json").write_text(json.dumps(SURVEY_REPLIES))
    running = Server(folder, gate.getsockname()[1])
    running.start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def served(server: Server) -> str:
    """The server's base URL."""
    return server.url


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.errors = errors  # type: ignore[attr-defined]
            yield page
        finally:
            browser.close()


def snapshot(page: Any, tmp_path: Path, name: str) -> Path:
    """A screenshot kept as an artifact, after the layout facts every view must hold at 1280x800."""
    facts = page.evaluate(
        """() => {
        const svg = document.querySelector('#canvas svg');
        const box = svg ? svg.getBoundingClientRect() : null;
        const canvas = document.querySelector('#canvas').getBoundingClientRect();
        return {scroll: document.documentElement.scrollWidth, bodyScroll: document.body.scrollWidth,
                width: innerWidth, height: innerHeight, svg: box && [box.left, box.top, box.right, box.bottom],
                canvas: [canvas.left, canvas.top, canvas.right, canvas.bottom],
                wide: [...document.querySelectorAll('#side, #picture, #detail')]
                  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.id)};
    }"""
    )
    assert facts["scroll"] <= facts["width"] and facts["bodyScroll"] <= facts["width"], f"{name}: wider than the window"
    assert facts["wide"] == [], f"{name}: these panes scroll sideways: {facts['wide']}"
    if facts["svg"] is not None:
        left, top, right, bottom = facts["svg"]
        assert 0 <= left and 0 <= top and right <= facts["width"] and bottom <= facts["height"], f"{name}: {facts}"
        c_left, c_top, c_right, c_bottom = facts["canvas"]
        assert c_left <= left + 1 and c_top <= top + 1 and right <= c_right + 1 and bottom <= c_bottom + 1
    path = tmp_path / f"studio-{name}.png"
    page.screenshot(path=str(path))
    if os.environ.get("PLAIT_ARTIFACTS"):
        into = Path(os.environ["PLAIT_ARTIFACTS"]) / "studio"
        into.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, into / path.name)
    return path


def sign_in(page: Any, url: str, tmp_path: Path | None = None) -> None:
    page.goto(url)
    # The API answers 401 without the token: the page asks for it once.
    page.wait_for_selector("#token-dialog[open]")
    if tmp_path is not None:
        snapshot(page, tmp_path, "1-token")
    page.fill("#token-input", TOKEN)
    page.click("#token-form button[type=submit]")
    page.wait_for_selector("#token-dialog:not([open])", state="attached")


def test_start_watch_answer_and_approve_in_the_browser(served: str, page: Any, gate: socket.socket, tmp_path: Path):
    sign_in(page, served + "/#spec=purchase", tmp_path)
    page.wait_for_selector("#specs button[data-spec=purchase]")
    page.wait_for_selector('#canvas svg [id="plait:assess"]')
    page.wait_for_selector("#start form")
    assert page.evaluate("sessionStorage.getItem('plait-serve-token')") == TOKEN

    # The form follows the input type: text, a checked number, a select for the enum, a checkbox for the bool.
    assert page.get_attribute("#start input[name=item]", "type") == "text"
    assert page.get_attribute("#start input[name=amount]", "type") == "number"
    assert page.eval_on_selector_all("#start select[name=priority] option", "os => os.map(o => o.textContent)") == [
        "low",
        "normal",
        "urgent",
    ]
    assert page.get_attribute("#start input[name=express]", "type") == "checkbox"
    snapshot(page, tmp_path, "2-start")

    # A missing number is caught before anything is sent.
    page.fill("#start input[name=item]", "a laptop")
    page.click("#start button[type=submit]")
    assert "amount" in page.text_content("#start .error")
    assert "invalid" in (page.get_attribute("#start input[name=amount]", "class") or "")
    assert page.locator("#runs button[data-run]").count() == 0

    page.fill("#start input[name=amount]", "1200.5")
    page.select_option("#start select[name=priority]", label="urgent")
    page.check("#start input[name=express]")
    page.click("#start button[type=submit]")

    # The run stops at the ask: the step it passed is done, the ask waits, its question is text, not markup.
    ask = page.wait_for_selector(".pending[data-kind=ask]")
    page.wait_for_selector('[id="plait:approval"].waiting')
    page.wait_for_selector('[id="plait:assess"].visited')
    question = ask.query_selector(".question")
    assert question is not None
    assert "<b>500 EUR</b>" in question.text_content()
    assert question.query_selector("b") is None
    page.wait_for_selector("#timeline li.model_call")
    snapshot(page, tmp_path, "3-ask")

    ask.query_selector("select[name=decision]").select_option(label="approve")
    ask.query_selector("input[name=note]").fill("fine, use the framework contract")
    ask.query_selector("button[type=submit]").click()

    # Next, the agent's call waits for approval, with its arguments shown.
    card = page.wait_for_selector(".pending[data-kind=approval]")
    page.wait_for_selector('[id="plait:buyer"].waiting')
    page.wait_for_selector('[id="plait:approval"].visited')
    assert json.loads(card.query_selector("pre.arguments").text_content()) == {"item": "a laptop", "amount": 1200.0}
    # An edit is checked before it is sent: broken JSON stays here with a message, and the run still waits.
    card.query_selector("button[name=edit]").click()
    card.query_selector("textarea[name=arguments]").fill('{"item": "a laptop",')
    card.query_selector("button[name=edit]").click()
    assert "not valid JSON" in card.query_selector(".error").text_content()
    snapshot(page, tmp_path, "4-approval")
    assert page.text_content("#run .pill") == "waiting"

    card.query_selector("button[name=approve]").click()
    # The approved call runs (held by the gate): the agent is highlighted as running.
    page.wait_for_selector('[id="plait:buyer"].active')
    snapshot(page, tmp_path, "5-running")
    conn, _ = gate.accept()
    with conn:
        conn.sendall(b"x")

    page.wait_for_selector("#run .pill.done")
    page.wait_for_selector("#output")
    output = page.text_content("#output pre")
    assert "<script>window.pwned = 1</script>" in output
    assert page.evaluate("window.pwned") is None
    # The timeline: the model calls with their tokens, the tool call with its result, both decisions.
    page.wait_for_selector("#timeline li.tool_call .result")
    assert "order 42 placed: a laptop" in page.text_content("#timeline li.tool_call .result")
    decisions = page.eval_on_selector_all("#timeline li.decision", "ls => ls.map(l => l.textContent)")
    assert any("approval" in d and "approve" in d for d in decisions), decisions
    assert any("fine, use the framework contract" in d for d in decisions), decisions
    assert "tokens" in page.text_content("#timeline li.model_call .tl-meta")
    for node in ("assess", "approval", "buyer"):
        page.wait_for_selector(f'[id="plait:{node}"].visited')
    page.wait_for_selector("#canvas g.node.active, #canvas g.node.waiting", state="detached")
    # The list of runs catches up: the run is listed as done.
    page.wait_for_selector("#runs .pill.done")
    snapshot(page, tmp_path, "6-done")
    page.eval_on_selector("#detail", "d => d.scrollTo(0, d.scrollHeight)")
    snapshot(page, tmp_path, "7-timeline")
    assert page.errors == []  # type: ignore[attr-defined]


def test_nested_input_form_in_the_browser(served: str, page: Any, tmp_path: Path):
    sign_in(page, served + "/#spec=survey")
    page.wait_for_selector("#start form")
    page.wait_for_selector('#canvas svg [id="plait:summarise"]')
    page.fill("#start input[name=title]", "office move")
    # A list: items added one by one (and one removed again); an object: its fields in a group.
    for _ in range(3):
        page.click("#start fieldset:has(> legend:text-is('tags')) button:text-is('+ add')")
    page.fill('#start input[name="tags[0]"]', "lisbon")
    page.fill('#start input[name="tags[1]"]', "dropped")
    page.fill('#start input[name="tags[2]"]', "desks")
    page.click('#start .item:has(input[name="tags[1]"]) button[title=remove]')
    page.fill("#start fieldset input[name=city]", "Lisbon")
    # An integer field refuses a fraction before anything is sent; the optional zip may stay empty.
    page.fill("#start input[name=weight]", "2.5")
    page.click("#start button[type=submit]")
    assert "whole number" in page.text_content("#start .error")
    snapshot(page, tmp_path, "nested-form")
    page.fill("#start input[name=weight]", "3")
    page.click("#start button[type=submit]")
    page.wait_for_selector("#run .pill.done")
    page.wait_for_selector("#timeline li.admit pre")
    sent = json.loads(page.text_content("#timeline li.admit pre"))
    # The zip was left out (the run admits it as null).
    assert sent.pop("place") in ({"city": "Lisbon"}, {"city": "Lisbon", "zip": None})
    assert sent == {"title": "office move", "tags": ["lisbon", "desks"], "weight": 3}
    assert "A survey about Lisbon." in page.text_content("#output pre")
    page.wait_for_selector('[id="plait:summarise"].visited')
    snapshot(page, tmp_path, "nested-done")
    assert page.errors == []  # type: ignore[attr-defined]


def start_over_http(served: str, input: dict[str, Any]) -> dict[str, Any]:
    """A purchase run started with plain HTTP and waited for until it stops (at its ask)."""
    request = urllib.request.Request(
        served + "/runs?wait=60s",
        data=json.dumps({"spec": "purchase", "input": input}).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.loads(reply.read())


def test_open_a_waiting_run_and_edit_the_call(served: str, page: Any, gate: socket.socket, tmp_path: Path):
    # A run started by another client (plain HTTP), waiting at its ask: the studio opens on it by link.
    run = start_over_http(served, {"item": "a desk", "amount": 300, "priority": "low", "express": False})
    assert run["status"] == "waiting"
    sign_in(page, f"{served}/#spec=purchase&run={run['id']}")
    # The events so far are replayed onto the graph: the step done, the ask waiting.
    ask = page.wait_for_selector(".pending[data-kind=ask]")
    page.wait_for_selector('[id="plait:approval"].waiting')
    page.wait_for_selector('[id="plait:assess"].visited')
    snapshot(page, tmp_path, "opened-waiting")
    ask.query_selector("select[name=decision]").select_option(label="approve")
    ask.query_selector("button[type=submit]").click()

    # The call is edited: new arguments as JSON, sent once they parse.
    card = page.wait_for_selector(".pending[data-kind=approval]")
    card.query_selector("button[name=edit]").click()
    card.query_selector("textarea[name=arguments]").fill('{"item": "a standing desk", "amount": 999}')
    card.query_selector("button[name=edit]").click()
    page.wait_for_selector('[id="plait:buyer"].active')
    conn, _ = gate.accept()
    with conn:
        conn.sendall(b"x")
    page.wait_for_selector("#run .pill.done")
    page.wait_for_selector("#timeline li.tool_call .result")
    # The tool ran with the edited arguments, and the timeline says the call was edited.
    assert "order 42 placed: a standing desk for 999" in page.text_content("#timeline li.tool_call .result")
    decisions = page.eval_on_selector_all("#timeline li.decision", "ls => ls.map(l => l.textContent)")
    assert any("edit" in d and "a standing desk" in d for d in decisions), decisions
    snapshot(page, tmp_path, "edited-done")
    assert page.errors == []  # type: ignore[attr-defined]


def test_reject_a_call_with_a_reason(served: str, page: Any, tmp_path: Path):
    run = start_over_http(served, {"item": "a boat", "amount": 90000, "priority": "normal", "express": False})
    sign_in(page, f"{served}/#spec=purchase&run={run['id']}")
    ask = page.wait_for_selector(".pending[data-kind=ask]")
    ask.query_selector("select[name=decision]").select_option(label="approve")
    ask.query_selector("button[type=submit]").click()
    card = page.wait_for_selector(".pending[data-kind=approval]")
    card.query_selector("input[name=reason]").fill("over the <i>budget</i>")
    card.query_selector("button[name=reject]").click()
    # The tool never runs (no gate is opened here); the model is told why, and the run ends.
    page.wait_for_selector("#run .pill.done")
    page.wait_for_selector("#timeline li.decision:has-text('reject')")
    decisions = page.eval_on_selector_all("#timeline li.decision", "ls => ls.map(l => l.textContent)")
    assert any("reject" in d and "over the <i>budget</i>" in d for d in decisions), decisions
    assert page.locator("#timeline li.tool_call").count() == 0
    assert page.locator("#timeline i").count() == 0
    snapshot(page, tmp_path, "rejected-done")
    assert page.errors == []  # type: ignore[attr-defined]


def test_the_page_follows_a_run_across_a_killed_server(server: Server, page: Any, tmp_path: Path):
    run = start_over_http(server.url, {"item": "a chair", "amount": 80, "priority": "low", "express": False})
    sign_in(page, f"{server.url}/#spec=purchase&run={run['id']}")
    ask = page.wait_for_selector(".pending[data-kind=ask]")
    ask.query_selector("select[name=decision]").select_option(label="approve")
    ask.query_selector("button[type=submit]").click()
    page.wait_for_selector(".pending[data-kind=approval] button[name=approve]").click()
    # The approved call is in flight (held by the gate, which never lets it go) when the server is killed.
    page.wait_for_selector('[id="plait:buyer"].active')
    server.kill()
    page.wait_for_selector("#conn:text-matches('retrying|reconnecting')")
    # The same port again: the page reads on from the last event it saw; the restarted server took the run up
    # from its journal and asks what to do with a call that may or may not have happened.
    server.start()
    card = page.wait_for_selector(".pending[data-kind=unknown_outcome]", timeout=60_000)
    snapshot(page, tmp_path, "unknown-outcome")
    card.query_selector("button[name=skip]").click()
    page.wait_for_selector("#run .pill.done")
    # The timeline follows the run's status (it is read after it): the skip is in it.
    page.wait_for_selector("#timeline li.decision:has-text('skip')")
    # The call is shown as skipped; it never placed an order.
    call = page.text_content("#timeline li.tool_call")
    assert "skipped" in call and "order 42 placed" not in call, call
    assert page.errors == []  # type: ignore[attr-defined]
