"""`plait check` (and graph, render, diff, fmt) of every example → the modules loaded: no runtime, no heavy extra.

Checking is offline and cheap: it never starts a server or runs user code, so it has no use for the runtime,
the MCP SDK, Ray, the PostgreSQL driver, the language server, the journal's encoder, JSON Schema or an HTTP
client. Each of those is imported lazily where it is used; one import moved to a module's top would load it
into every check (and slow its start-up), which only a look at sys.modules after real checks shows.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Files only: the demo leaves a run store `examples/briefing/.plait/`, a folder the glob also matches.
EXAMPLES = sorted(p for p in (ROOT / "examples").rglob("*.plait") if p.is_file())

# Top-level import names (a module counts when its first dotted part is one of these).
FORBIDDEN = (
    "mcp",
    "mcp_types",
    "httpx2",
    "ray",
    "psycopg",
    "pygls",
    "lsprotocol",
    "orjson",
    "jsonschema",
    "httpx",
    "httpcore",
    "aiohttp",
    "opentelemetry",
)

PROBE = """
import contextlib, io, sys
from plait.cli import main

forbidden = set(sys.argv[1].split(","))
statuses = []
for path in sys.argv[2:]:
    with contextlib.redirect_stdout(io.StringIO()):
        statuses.append(main(["check", path]))
        # The other offline commands read the same compiled graph; their status is not the point here.
        main(["graph", path])
        main(["render", path, "--format", "mermaid"])
        main(["diff", path, path])
        main(["fmt", "--check", path])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in forbidden or m.startswith("plait.runtime"))
print("STATUSES", statuses)
print("LOADED", loaded)
"""


def _loaded_by_check(*prelude: str) -> tuple[str, str]:
    code = "\n".join(prelude) + PROBE
    done = subprocess.run(
        [sys.executable, "-c", code, ",".join(FORBIDDEN), *map(str, EXAMPLES)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith(("STATUSES", "LOADED")))
    return lines["STATUSES"], lines["LOADED"]


@pytest.mark.slow
def test_checking_every_example_loads_no_runtime_and_no_heavy_extra():
    assert len(EXAMPLES) >= 10  # the examples folder moved: the check below would prove nothing
    statuses, loaded = _loaded_by_check()
    assert statuses == str([0] * len(EXAMPLES))  # every example checks clean, so every pass ran
    assert loaded == "[]"


@pytest.mark.slow
def test_the_probe_sees_a_module_loaded_before_the_check():
    # The same probe reports what is in sys.modules: a heavy import made anywhere in the process shows up.
    _, loaded = _loaded_by_check("import orjson")
    assert loaded.startswith("['orjson'")
