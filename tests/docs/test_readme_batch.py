"""The README's batch example runs offline exactly as written, from the repository's root, and prints what the
README shows: the inputs it names ship in examples/triage, and the scripted replies answer them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from doc_blocks import Shell, blocks, session

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_readme_batch_example_runs_as_shown(tmp_path):
    [block] = [b for b in blocks(ROOT / "README.md") if b.lang == "console" and "$ plait batch " in b.text]
    # A fresh clone's examples/triage: no run store from an earlier run.
    shutil.copytree(
        ROOT / "examples" / "triage", tmp_path / "examples" / "triage", ignore=shutil.ignore_patterns(".plait")
    )
    shell = Shell(tmp_path)
    try:
        steps = session(block.text)
        for command, shown in steps:
            shell.expect(command, shown)
        assert shell.run("echo $?")[1] == ["0"], "the last command of the block failed"
        assert [c for c, _ in steps][-1].startswith("plait trace batch-")
        assert shell.ids, "the trace command typed the batch's id, which the session learnt"
    finally:
        shell.close()
