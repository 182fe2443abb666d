"""docs/tutorial.md works as a new user follows it: every file it shows is written, in order, and every console
block is typed into one shell in a fresh temporary folder, each command printing what the page shows (the
progress lines aside). A page that drifts from plait's real behaviour fails here, not in front of a reader."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_blocks import Shell, blocks, session

from plait import __version__

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
BLOCKS = blocks(TUTORIAL)


def test_every_block_is_a_file_a_session_or_says_why_it_is_not_run():
    for block in BLOCKS:
        assert block.mark in ("file", "not run") or block.lang == "console", (
            f"docs/tutorial.md:{block.line}: a ```{block.lang} block the test neither writes nor runs; mark it "
            "<!-- file: NAME --> or <!-- not run: why -->"
        )
    kinds = {(b.mark or b.lang) for b in BLOCKS}
    assert {"file", "console", "not run"} <= kinds


def test_the_page_names_what_it_promises():
    text = TUTORIAL.read_text(encoding="utf-8")
    for word in ("output {", "route ", "tool ", "approval = required", "plait check", "plait render", "plait resume"):
        assert word in text, word


@pytest.mark.slow
def test_the_tutorial_runs_from_an_empty_folder_as_shown(tmp_path):
    shell = Shell(tmp_path)
    folder = tmp_path  # where the reader is: the console blocks `cd` into the project folder
    try:
        for block in BLOCKS:
            if block.mark == "file":
                (folder / block.detail).write_text(block.text, encoding="utf-8")
            elif block.lang == "console" and block.mark != "not run":
                for command, shown in session(block.text):
                    shell.expect(command, shown)
                folder = Path(shell.run("pwd")[1][0])
        assert folder == tmp_path / "helpdesk", "the tutorial works in the folder it makes"
        assert (folder / "helpdesk.html").is_file()
        # The run it approved and resumed ended where the page says, with the tool's result as its output.
        assert len(shell.ids) == 1
    finally:
        shell.close()


def test_the_version_the_page_shows_is_plaits():
    shown = re.search(r"^\$ plait -V\nplait (\S+)$", TUTORIAL.read_text(encoding="utf-8"), re.M)
    assert shown and shown.group(1) == __version__
