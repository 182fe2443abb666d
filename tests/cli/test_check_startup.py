"""`plait check` start-up → only what the spec needs is imported or built (measured by bench/frontend_bench.py).

A check of a spec with no string escape, condition, block string or replies file needs no JSON codec; it
reads each code's declaration but never the code documentation (`plait explain`'s), nor the resources
machinery that reads it; it builds the chosen command's argument parser only; it loads no checker of a
feature the spec does not use (tests, threads, a `plait.lock`, template expressions, `--format json`'s cost
bound, the source-line view of a diagnostic); and it runs no cyclic collection. An import probe in a
subprocess, as tests/cli/test_check.py does for the runtime.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

SPEC = """\
plait 0.1

model fast = "openai/gpt-4o-mini" { temperature = 0.2, timeout = 30s }

tool lookup "Look up facts about a topic." {
  params {
    topic: string "What to look up"
  }
  run = http(GET, "https://kb.example.com/search?q={{topic}}")
}

agent main "Answer questions." {
  model = fast
  tools = [lookup]
}
"""

PROBE = """\
import argparse, gc, sys
from plait.cli import check, main
from plait.core import codes

collections = []
def collecting(phase, info):  # a cyclic collection while `plait check` runs (its `run` is on the stack)
    frame = sys._getframe().f_back
    while frame is not None and frame.f_code is not check.run.__code__:
        frame = frame.f_back
    if phase == "start" and frame is not None:
        collections.append(info["generation"])
gc.callbacks.append(collecting)

made = []
_init = argparse.ArgumentParser.__init__
def counted(self, *args, **kwargs):
    made.append(kwargs.get("prog"))
    _init(self, *args, **kwargs)
argparse.ArgumentParser.__init__ = counted

status = main(["check", "small.plait"])
unneeded = (
    "json",
    "importlib.resources",
    "tempfile",
    "jinja2",  # template expressions only
    "plait.core.mcp_lock",  # the plait.lock reader, only when there is a lock to read
    "shlex",  # quoting the spec's path in a lock's fix, only when there is a lock
    "plait.compiler.report.line_view",  # source lines and their masks, only for a diagnostic to show
    "plait.compiler.report.mask",
    "plait.compiler.bounds",  # cost bounds, only for --format json
    "plait.compiler.passes.check_tests",  # the test-block checker, only for a file with tests
    "plait.core.kinds.test",
    "plait.compiler.passes.check_threads",  # threads, only for a spec whose runnables write `thread = NAME`
)
print("LOADED", sorted(m for m in unneeded if m in sys.modules), file=sys.stderr)
print("DOCS READ", codes.catalogue.cache_info().misses, file=sys.stderr)
print("PARSERS", len(made), file=sys.stderr)
print("COLLECTIONS", len(collections), "ENABLED AFTER", gc.isenabled(), file=sys.stderr)
sys.exit(status)
"""


@pytest.mark.slow
def test_a_plain_check_loads_no_json_codec_no_code_documentation_and_one_command_parser(tmp_path):
    (tmp_path / "small.plait").write_text(SPEC, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "LOADED []" in done.stderr
    assert "DOCS READ 0" in done.stderr
    assert "PARSERS 2" in done.stderr  # `plait` and `plait check`
    # The cyclic collector is paused for the whole check (its passes over the imported modules found nothing
    # to free) and handed back as it was to an in-process caller.
    assert "COLLECTIONS 0 ENABLED AFTER True" in done.stderr


@pytest.mark.slow
def test_help_still_lists_every_command_with_the_exit_codes(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "plait", "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert "fake-server" in done.stdout and "exit status (every command):" in done.stdout


LOCKED_PROBE = """\
import sys
from plait.cli import main

status = main(["check", "small.plait"])
unneeded = ("hashlib", "shlex", "plait.compiler.bounds")  # MCP fingerprints, a lock fix's quoting, cost bounds
print("READ LOCK", "plait.core.mcp_lock" in sys.modules, file=sys.stderr)
print("LOADED", sorted(m for m in unneeded if m in sys.modules), file=sys.stderr)
sys.exit(status)
"""

LOCK = """\
{
  "models": {
    "openai/gpt-4o-mini": {
      "capabilities": {"structured_output": true, "tools": true},
      "context_window": 128000,
      "max_output": 16384,
      "price": {"input": 0.15, "output": 0.6}
    }
  },
  "servers": {},
  "version": 1
}
"""


@pytest.mark.slow
def test_a_clean_locked_check_reads_its_lock_and_nothing_it_does_not_need(tmp_path):
    # Issue 23: a locked catalogue keeps check's start-up budget; a clean check of models alone hashes no MCP
    # fingerprint and spells no `plait models lock` fix.
    (tmp_path / "small.plait").write_text(SPEC, encoding="utf-8")
    (tmp_path / "plait.lock").write_text(LOCK, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", LOCKED_PROBE], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "READ LOCK True" in done.stderr
    assert "LOADED []" in done.stderr
