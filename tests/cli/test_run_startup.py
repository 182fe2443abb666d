"""`plait run` start-up → only what the run needs is imported (issue 26.9; measured by bench/startup_bench.py).

A scripted run makes no HTTP call, so the HTTP stack (aiohttp, httpx) must not
load; and with stderr not a terminal there is no live view, so neither does
`rich`. An import probe in a subprocess, as tests/cli/test_check.py does for
`plait check`.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SPEC = 'model m = "scripted/m" { script = "one.json" }\n\nstep hello {\n  model  = m\n  prompt = "Hi {{input}}"\n}\n'


@pytest.mark.slow
def test_a_scripted_run_never_imports_the_http_stack_or_the_live_view(tmp_path):
    (tmp_path / "one.plait").write_text(SPEC)
    (tmp_path / "one.json").write_text('[{"text": "hello"}]')
    probe = (
        "import sys\nfrom plait.cli import main\n"
        "status = main(['run', 'one.plait', '--input', 'you'])\n"
        "heavy = ('aiohttp', 'httpx', 'httpcore', 'rich')\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in heavy)\n"
        "print('LOADED', loaded, file=sys.stderr)\nsys.exit(status)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello\n"
    assert "LOADED []" in done.stderr
