"""docs/deploy.md's systemd unit, as an operator would install it: systemd accepts it, and its command line is
one `plait serve` takes."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from doc_blocks import blocks

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "docs" / "deploy.md"


def _unit() -> str:
    (unit,) = [block.text for block in blocks(DEPLOY) if block.lang == "ini"]
    return unit


def _exec_start(unit: str) -> list[str]:
    (line,) = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    return shlex.split(line.removeprefix("ExecStart="))


def test_the_unit_passes_systemds_own_verification(tmp_path: Path) -> None:
    unit = _unit()
    argv = _exec_start(unit)
    # The unit names the operator's venv; here it runs the plait this suite installed, the same program.
    plait = Path(sys.executable).with_name("plait")
    unit = unit.replace(f"ExecStart={argv[0]}", f"ExecStart={plait}")
    path = tmp_path / "plait-serve.service"
    path.write_text(unit)
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze (Debian's systemd package) is installed by .ci/run"
    done = subprocess.run([analyze, "verify", "--man=no", str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "plait-serve.service" not in done.stderr  # systemd found nothing to say about the unit


def test_the_units_command_is_a_plait_serve_command_line() -> None:
    from plait.cli import _parser

    argv = _exec_start(_unit())
    assert Path(argv[0]).name == "plait"
    parser, _ = _parser("serve", helping=False)
    args = parser.parse_args(argv[1:])
    assert args.command == "serve" and (args.host, args.port) == ("127.0.0.1", 8000)
