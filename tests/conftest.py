"""Suite-wide hooks: under CI (PLAIT_CI=1, set by .ci/run) a skipped test fails.

A test may skip on a developer's machine when a component it needs (Graphviz, zsh,
PostgreSQL, Ray, an npm package) is absent. CI installs every one of them, so a skip
there means the suite proved less than it claims: it is reported as a failure that
names the reason.
"""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and os.environ.get("PLAIT_CI") == "1":
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI, where every component is installed: {reason}"
    return None


@pytest.fixture(scope="session")
def pg_url() -> object:
    """A postgresql:// URL for the whole session: PLAIT_TEST_PG, else a throwaway server of the suite's own
    (tests/durable/pg_server.py, from the Debian binaries), stopped at the end; else the test skips."""
    from durable.pg_server import server

    started = server()
    if started is None:
        pytest.skip("no PostgreSQL: set PLAIT_TEST_PG=postgresql://... or install the postgresql package")
    yield started.url
    started.stop()
