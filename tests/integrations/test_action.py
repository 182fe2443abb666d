"""action.yml: a composite GitHub Action, validated as a runner reads it, and its shell steps run here for real."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from offline import REPO, offline_env, snapshot

ACTION = yaml.safe_load((REPO / "action.yml").read_text())
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
INPUT = re.compile(r"inputs\.([A-Za-z0-9_-]+)")
#: The only `if:` form the action uses (and this test's tiny evaluator understands).
CONDITION = re.compile(r"^inputs\.([A-Za-z0-9_-]+) (!= ''|== 'true')$")


def _steps() -> list[dict]:
    return ACTION["runs"]["steps"]


def test_the_action_is_composite_with_documented_inputs():
    assert ACTION["name"] and ACTION["description"] and ACTION["runs"]["using"] == "composite"
    for name, spec in ACTION["inputs"].items():
        assert spec["description"] and "default" in spec, name
    assert set(ACTION["inputs"]) == {"paths", "args", "sarif", "test", "test-args", "python-version"}


def test_every_step_is_runnable_and_reads_inputs_only_through_env():
    ids = {s["id"] for s in _steps() if "id" in s}
    for step in _steps():
        assert "run" in step or "uses" in step
        if "uses" in step:
            assert step["uses"] == "actions/setup-python@v5"
            continue
        assert step["shell"] == "bash"  # composite run steps must name their shell
        # An input pasted into the script text is shell injection; they arrive as environment variables.
        assert "${{" not in step["run"], step["name"]
        for value in step.get("env", {}).values():
            for expression in EXPRESSION.findall(str(value)):
                assert INPUT.fullmatch(expression) and INPUT.fullmatch(expression).group(1) in ACTION["inputs"]
        if "if" in step:
            assert CONDITION.match(step["if"]).group(1) in ACTION["inputs"]
    for output in ACTION["outputs"].values():
        step_id = re.search(r"steps\.([\w-]+)\.outputs", output["value"]).group(1)
        assert step_id in ids


def _run_steps(
    inputs: dict[str, str], workspace: Path, env: dict[str, str], skip: tuple[str, ...] = ()
) -> dict[str, subprocess.CompletedProcess]:
    """Each `run:` step, in order, as a runner would: `bash --noprofile --norc -eo pipefail`, inputs via env."""
    values = {name: inputs.get(name, spec["default"]) for name, spec in ACTION["inputs"].items()}
    results = {}
    for step in _steps():
        if step.get("id") in skip:
            continue
        if "uses" in step:
            continue  # setup-python: the test's own python stands in for it
        condition = step.get("if")
        if condition:
            matched = CONDITION.match(condition)
            value = values[matched.group(1)]
            if (matched.group(2) == "== 'true'" and value != "true") or (matched.group(2) == "!= ''" and value == ""):
                continue
        step_env = {
            k: EXPRESSION.sub(lambda m: values[INPUT.fullmatch(m.group(1)).group(1)], str(v))
            for k, v in step.get("env", {}).items()
        }
        results[step["id"]] = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=workspace,
            env={**env, **step_env},
            capture_output=True,
            text=True,
            timeout=900,
        )
        if results[step["id"]].returncode != 0:
            break
    return results


@pytest.mark.slow
def test_the_steps_install_plait_from_the_action_path_annotate_and_write_sarif(tmp_path):
    action_path = tmp_path / "action"
    action_path.mkdir()
    snapshot(action_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    workspace = tmp_path / "workspace"
    (workspace / "specs").mkdir(parents=True)
    (workspace / "specs" / "bad.plait").write_text('model fast = "openai/gpt-4o-mini"\nagent main { model = fsat }\n')
    (workspace / "specs" / "good.plait").write_text('model fast = "openai/gpt-4o-mini"\nagent main { model = fast }\n')
    env = offline_env(tmp_path)
    env.update(
        PATH=f"{venv / 'bin'}:{env['PATH']}",
        GITHUB_ACTION_PATH=str(action_path),
        GITHUB_OUTPUT=str(tmp_path / "github_output"),
        GITHUB_WORKSPACE=str(workspace),
    )

    results = _run_steps({"paths": "specs", "sarif": "plait.sarif"}, workspace, env)

    assert results["install"].returncode == 0, results["install"].stderr
    assert (venv / "bin" / "plait").exists()  # installed from the action's path into the job's python
    assert results["sarif"].returncode == 0, results["sarif"].stderr
    sarif = json.loads((workspace / "plait.sarif").read_text())
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == [
        "P101",
        "P601",
    ]  # the typo first, the model it left unused after it
    assert (tmp_path / "github_output").read_text() == "path=plait.sarif\n"
    check = results["check"]
    assert check.returncode == 1  # errors fail the job
    assert "::error file=specs/bad.plait,line=2,col=22" in check.stdout and "title=P101 undefined-name" in check.stdout


@pytest.mark.slow
def test_without_sarif_the_sarif_step_is_skipped_and_a_clean_tree_passes(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "good.plait").write_text('model fast = "openai/gpt-4o-mini"\nagent main { model = fast }\n')
    env = offline_env(tmp_path)
    # The job's python already has plait (this venv): the install step is what the first test proves.
    env.update(
        PATH=f"{Path(sys.executable).parent}:{env['PATH']}",
        GITHUB_ACTION_PATH=str(REPO),
        GITHUB_OUTPUT=str(tmp_path / "github_output"),
        PYTHONPATH="",
    )
    results = _run_steps({"args": "--strict"}, workspace, env, skip=("install",))
    assert "sarif" not in results
    assert results["check"].returncode == 0 and results["check"].stdout == ""


@pytest.mark.slow
def test_with_test_true_the_specs_tests_run_and_failures_are_annotated(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "good.plait").write_text('model fast = "openai/gpt-4o-mini"\nagent main { model = fast }\n')
    (workspace / "good.test.plait").write_text(
        'import "good.plait"\ntest hi {\n  input = "x"\n  replies = { main = [{ text = "hi" }] }\n'
        '  expect output == "hello"\n}\n'
    )
    env = offline_env(tmp_path)
    env.update(
        PATH=f"{Path(sys.executable).parent}:{env['PATH']}",
        GITHUB_ACTION_PATH=str(REPO),
        GITHUB_OUTPUT=str(tmp_path / "github_output"),
        PYTHONPATH="",
    )
    skipped = _run_steps({}, workspace, env, skip=("install",))
    assert "test" not in skipped  # off unless asked for
    results = _run_steps({"test": "true", "test-args": "--fail-on-missing"}, workspace, env, skip=("install",))
    assert results["check"].returncode == 0
    assert results["test"].returncode == 1
    assert results["test"].stdout.splitlines()[0] == (
        '::error file=good.test.plait,line=5,col=3,title=plait test::hi: it is "hi"'
    )
