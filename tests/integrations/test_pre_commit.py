"""`.pre-commit-hooks.yaml`: plait-check and plait-fmt run by pre-commit from this repo as a local hook, offline."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from offline import REPO, git, offline_env, snapshot

CLEAN = 'model fast = "openai/gpt-4o-mini"\n\nagent main {\n  model = fast\n}\n'
GOOD_TEST = (
    'import "good.plait"\n\ntest hi {\n  input   = "x"\n  replies = { main = [{ text = "hi" }] }\n'
    '  expect output == "hi"\n}\n'
)


def test_the_hooks_file_declares_the_hooks_for_plait_files():
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"plait-check", "plait-fmt", "plait-test"}
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["files"] == r"\.plait$"
        assert hook["entry"].split() in (["plait", "check"], ["plait", "fmt"], ["plait", "test"])
    assert hooks["plait-check"]["require_serial"] is True
    # Tests run once over the project, not once per changed file: a spec's edit can break another file's test.
    assert hooks["plait-test"]["pass_filenames"] is False and hooks["plait-test"]["require_serial"] is True


@pytest.mark.slow
def test_pre_commit_runs_both_hooks_from_this_repo_without_the_network(tmp_path):
    hook_repo = tmp_path / "plait"
    hook_repo.mkdir()
    rev = snapshot(hook_repo)
    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q", cwd=project)
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo}\n    rev: {rev}\n    hooks:\n      - id: plait-fmt\n      - id: plait-check\n"
        "      - id: plait-test\n"
    )
    (project / "good.plait").write_text(CLEAN)
    (project / "good.test.plait").write_text(GOOD_TEST)
    git("add", "-A", cwd=project)
    env = offline_env(tmp_path)

    def pre_commit() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )

    done = pre_commit()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "plait check" in done.stdout and "Passed" in done.stdout
    assert "plait test" in done.stdout and "Failed" not in done.stdout

    (project / "bad.plait").write_text('model fast = "openai/gpt-4o-mini"\nagent main {model=fsat}\n')
    git("add", "-A", cwd=project)
    done = pre_commit()
    assert done.returncode == 1
    assert "error[P101]: undefined name `fsat`" in done.stdout
    assert "files were modified by this hook" in done.stdout  # plait-fmt rewrote bad.plait's layout
    assert (project / "bad.plait").read_text() == 'model fast = "openai/gpt-4o-mini"\n\nagent main { model = fsat }\n'
    assert (project / "good.plait").read_text() == CLEAN
