"""`backend`: each durable test runs against the embedded SQLite journal and against PostgreSQL (a fresh schema per
test in the session's server, see `pg_url` in tests/conftest.py); `pg_backend`: PostgreSQL alone."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Iterator

import pytest

from durable_helpers import Backend


def postgres(url: str, project: Path) -> Iterator[Backend]:
    import psycopg

    schema = f"plait_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    # Every connection the test makes (the journal's, the CLI's, a subprocess's) works in that schema alone.
    sep = "&" if "?" in url else "?"
    backend = Backend(project, f"{url}{sep}options=-csearch_path%3D{schema}")
    yield backend
    backend.close()
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")


# PostgreSQL runs are slow tests: they need a server (started once per session).
@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def backend(request, tmp_path):
    if request.param == "postgres":
        yield from postgres(request.getfixturevalue("pg_url"), tmp_path)
        return
    backend = Backend(tmp_path)
    yield backend
    backend.close()


@pytest.fixture
def pg_backend(pg_url, tmp_path):
    yield from postgres(pg_url, tmp_path)
