"""`./scripts/demo` runs the offline briefing: its scripted replies must answer the question the demo asks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BRIEFING = ROOT / "examples" / "briefing"


def _demo_input() -> str:
    match = re.search(r'^input="([^"]+)"$', (ROOT / "scripts" / "demo").read_text(), re.M)
    assert match, 'scripts/demo sets input="..." for its run'
    return match.group(1)


def _topic_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3}


def test_the_demo_asks_what_the_spec_header_documents():
    assert f'--input "{_demo_input()}"' in (BRIEFING / "briefing.plait").read_text()


def test_the_scripted_replies_answer_the_demos_question():
    replies = json.loads((BRIEFING / "briefing.replies.json").read_text())
    asked = _topic_words(_demo_input())
    delegated = replies["writer"][0]["tool_calls"][0]["arguments"]["task"]
    report = replies["writer"][-1]["tool_calls"][0]["arguments"]
    assert asked <= _topic_words(report["title"]), (asked, report["title"])
    # The researcher is asked about the same topic, and what it looks up is in the knowledge base.
    assert asked - {"move"} <= _topic_words(delegated)
    lookup = replies["researcher"][0]["tool_calls"][0]["arguments"]["topic"]
    assert asked - {"move"} <= _topic_words(lookup)


def test_what_a_run_leaves_behind_is_never_taken_for_a_spec(tmp_path, monkeypatch, capsys):
    """`./scripts/demo` then `./scripts/test`: the run store a demo leaves in examples/ must not trip the next command."""
    import shutil

    from plait.cli import main
    from plait.dsl.discover import spec_files

    folder = shutil.copytree(BRIEFING, tmp_path / "examples" / "briefing", ignore=shutil.ignore_patterns(".plait"))
    spec = folder / "briefing.plait"
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(spec), "--input", _demo_input()]) == 0
    assert (folder / ".plait").is_dir()  # the store: a folder named like a spec
    # The store is skipped; the example's own `plait test` file beside it is a spec file like any other.
    assert spec_files(tmp_path / "examples") == [spec, folder / "briefing.test.plait"]
    assert main(["check", "examples"]) == 0
    assert main(["fmt", "--check", "examples"]) == 0
    assert main(["check"]) == 0  # no path: the working directory, store skipped
    capsys.readouterr()


# --- Graphviz: what scripts/setup (so the demo) does about a missing `dot` ---------------------------------------

DEBCONF = "debconf: delaying package configuration, since apt-utils is not installed"


def _graphviz(tmp_path: Path, *, apt_status: int = 0, **env: str):
    """Run scripts/graphviz where `dot` is missing, `id -u` says root and apt-get is a stub that talks as the real
    one does (a debconf line on stderr) and records its arguments: (result, the stub's calls, the log)."""
    import shutil
    import subprocess

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "apt-calls"
    bash = shutil.which("bash")
    assert bash
    for name in ("mkdir", "dirname", "cat"):
        tool = shutil.which(name)
        assert tool
        (bin_dir / name).symlink_to(tool)
    stubs = {
        "id": "echo 0\n",
        "apt-get": f'echo "$*" >> {calls}\necho "{DEBCONF}" >&2\necho "Reading package lists..."\nexit {apt_status}\n',
    }
    for name, body in stubs.items():
        (bin_dir / name).write_text(f"#!{bash}\n{body}")
        (bin_dir / name).chmod(0o755)
    log = tmp_path / "logs" / "apt.log"
    result = subprocess.run(
        [bash, str(ROOT / "scripts" / "graphviz"), str(log)],
        env={"PATH": str(bin_dir), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    made = calls.read_text().splitlines() if calls.exists() else []
    return result, made, (log.read_text() if log.exists() else "")


@pytest.mark.slow
def test_setup_says_it_installs_graphviz_and_keeps_apt_quiet(tmp_path):
    result, calls, log = _graphviz(tmp_path)
    assert result.returncode == 0, result.stderr
    assert calls == ["update -qq", "install -y -qq graphviz"]
    said = result.stdout + result.stderr
    assert "installing the 'graphviz' package with apt-get" in said and "PLAIT_NO_APT=1" in said
    assert "debconf" not in said and "Reading package lists" not in said
    assert DEBCONF in log  # kept, for when something goes wrong


@pytest.mark.slow
def test_plait_no_apt_never_runs_apt_get(tmp_path):
    result, calls, _ = _graphviz(tmp_path, PLAIT_NO_APT="1")
    assert result.returncode == 0
    assert calls == []
    assert "not installing" in result.stderr and "graphviz" in result.stderr


@pytest.mark.slow
def test_a_failed_install_shows_apt_gets_output_and_says_how_to_skip_it(tmp_path):
    result, _, _ = _graphviz(tmp_path, apt_status=100)
    assert result.returncode == 2
    assert DEBCONF in result.stderr and "PLAIT_NO_APT=1 skips it" in result.stderr
