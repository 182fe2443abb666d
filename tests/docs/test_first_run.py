"""What a new user meets at the repository root: `plait check` there (what the README suggests) checks the
project's own specs and passes, rather than listing the test suite's deliberately broken ones."""

from __future__ import annotations

from pathlib import Path

from plait.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_check_at_the_repository_root_passes_and_skips_test_data(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    status = main(["check"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "tests/" not in out


def test_the_readme_opens_with_the_two_commands_that_work_on_a_fresh_machine():
    opening = (ROOT / "README.md").read_text(encoding="utf-8").split("\n\n", 2)[1]
    commands = [line.split("#")[0].strip() for line in opening.splitlines() if line.startswith("./")]
    assert commands == ["./scripts/demo", "./scripts/test"]
    assert all((ROOT / c).stat().st_mode & 0o111 for c in commands)
