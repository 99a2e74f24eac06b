"""Backends for the index tests: the local SQLite index and a real PostgreSQL server.

The PostgreSQL server is named by ``MEMDIR_PG_DSN`` (``.ci/postgres start`` prints one). When
it is missing the PostgreSQL cases skip with that reason, except under CI (``CI=true``), where
``.ci/run`` starts a server: there a missing DSN fails instead of hiding the tests.
Each test gets its own PostgreSQL schema, dropped afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

DSN_VARIABLE = "MEMDIR_PG_DSN"


def pg_dsn() -> str:
    """Return the test server's DSN, or skip (fail under CI) when none is configured."""
    dsn = os.environ.get(DSN_VARIABLE, "")
    if dsn:
        return dsn
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI runs the PostgreSQL index tests: {DSN_VARIABLE} is not set (.ci/run)")
    pytest.skip(f"no PostgreSQL server configured: set {DSN_VARIABLE} (.ci/postgres start)")


def with_schema(dsn: str, schema: str) -> str:
    """Return ``dsn`` with memdir's ``schema`` parameter added."""
    return dsn + ("&" if "?" in dsn else "?") + f"schema={schema}"


@pytest.fixture
def pg_uri() -> Iterator[str]:
    """A ``postgresql://`` URI with a fresh schema of its own; the schema is dropped after."""
    import psycopg

    dsn = pg_dsn()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    yield with_schema(dsn, schema)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """The ``[index] backend`` under test: ``sqlite`` or a PostgreSQL URI."""
    if request.param == "sqlite":
        return "sqlite"
    uri: str = request.getfixturevalue("pg_uri")
    return uri
