"""Project config (`plait.toml`, `[tool.plait]` in pyproject.toml): discovery, keys, `--config`, clear errors."""

from __future__ import annotations

from conftest import CLEAN, WARNING


def test_pyproject_tool_plait_ignore_is_found_walking_up_from_the_spec(project, check):
    project("pyproject.toml", '[project]\nname = "x"\n\n[tool.plait]\nignore = ["P601"]\n')
    project("specs/deep/spec.plait", WARNING)
    status, out, _ = check("specs/deep/spec.plait")
    assert status == 0 and "P601" not in out


def test_a_pyproject_without_tool_plait_is_skipped_for_one_further_up(project, check):
    project("plait.toml", "strict = true\n")
    project("sub/pyproject.toml", '[project]\nname = "x"\n')
    project("sub/spec.plait", WARNING)
    status, out, _ = check("sub/spec.plait")
    assert status == 1 and "warning[P601]" in out  # strict from ../plait.toml


def test_plait_toml_wins_over_pyproject_in_one_folder_and_the_nearest_folder_wins(project, check):
    project("pyproject.toml", "[tool.plait]\nstrict = true\n")
    project("a/plait.toml", 'ignore = ["unused-declaration"]\n')
    project("a/pyproject.toml", "[tool.plait]\nstrict = true\n")
    project("a/spec.plait", WARNING)
    project("b/spec.plait", WARNING)
    assert check("a/spec.plait")[0] == 0
    assert check("b/spec.plait")[0] == 1  # only the root's strict applies there


def test_select_limits_the_report_and_the_command_line_select_replaces_it(project, check):
    project("plait.toml", 'select = ["P1"]\n')
    project("spec.plait", WARNING)
    status, out, _ = check("spec.plait")
    assert status == 0 and "P601" not in out
    status, out, _ = check("spec.plait", "--select", "P6")
    assert "warning[P601]" in out


def test_command_line_ignore_adds_to_the_config(project, check):
    project("plait.toml", 'ignore = ["P101"]\n')
    project("spec.plait", WARNING.replace("model = fast", "model = fsat"))
    status, out, _ = check("spec.plait", "--ignore", "P601")
    assert status == 0 and "P101" not in out and "P601" not in out


def test_per_file_ignores_by_glob_relative_to_the_config(project, check):
    project("plait.toml", '[per-file-ignores]\n"drafts/*.plait" = ["P601"]\n')
    project("drafts/a.plait", WARNING)
    project("final/a.plait", WARNING)
    _, out, _ = check(".")
    assert "drafts/a.plait" not in out and "final/a.plait:2:7" in out


def test_exclude_skips_files_found_in_a_folder_but_not_files_named_explicitly(project, check):
    project("plait.toml", 'exclude = ["generated"]\n')
    project("generated/bad.plait", "agent {")
    project("spec.plait", CLEAN)
    status, out, _ = check(".")
    assert status == 0 and "bad.plait" not in out
    status, out, _ = check("generated/bad.plait")
    assert status == 1 and "P001" in out


def test_config_option_overrides_discovery(project, check):
    project("plait.toml", "strict = true\n")
    project("ci/lenient.toml", 'ignore = ["P601"]\n')
    project("spec.plait", WARNING)
    assert check("spec.plait")[0] == 1
    status, out, _ = check("spec.plait", "--config", "ci/lenient.toml")
    assert status == 0 and "P601" not in out


def test_unknown_key_is_a_usage_error_naming_the_file_and_the_key(project, check):
    project("pyproject.toml", "[tool.plait]\nper_file_ignores = {}\n")
    project("spec.plait", CLEAN)
    status, out, err = check("spec.plait")
    assert status == 2 and out == ""
    assert err.count("\n") == 1
    assert "pyproject.toml: [tool.plait]: unknown key `per_file_ignores` (did you mean `per-file-ignores`?)" in err


def test_bad_values_and_bad_toml_are_one_line_errors(project, check):
    project("spec.plait", CLEAN)
    for text, expected in [
        ("strict = 'yes'\n", "`strict` must be true or false"),
        ("select = [1]\n", "`select` must be a list of strings"),
        ('ignore = ["P9"]\n', "`ignore`: `P9` matches no code"),
        ("select = [\n", "plait.toml: not valid TOML"),
    ]:
        project("plait.toml", text)
        status, out, err = check("spec.plait")
        assert status == 2 and err.count("\n") == 1 and expected in err, (text, err)


def test_a_missing_config_file_is_a_usage_error(project, check):
    project("spec.plait", CLEAN)
    status, _, err = check("spec.plait", "--config", "nope.toml")
    assert status == 2 and "nope.toml: cannot read" in err
