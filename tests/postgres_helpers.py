"""A PostgreSQL server for the arena's tests (tests/test_arena_postgres.py): one that is running already, named by
``BOURRE_TEST_POSTGRES``; without it the tests skip, and say how to give them one.

``BOURRE_TEST_POSTGRES``: a URL of the server, with a user that may create databases
(``postgresql://postgres@127.0.0.1:5432/postgres``). Each test gets a database of its own, made empty and dropped
after it, so the schema is migrated from nothing every time. ``.ci/run`` starts a throwaway server and sets it, so CI
skips none of these tests; by hand, the same (as root)::

    mkdir /tmp/pg && chown postgres /tmp/pg && PG=/usr/lib/postgresql/15/bin
    runuser -u postgres -- $PG/initdb -D /tmp/pg/data -A trust -U postgres
    runuser -u postgres -- $PG/pg_ctl -D /tmp/pg/data -l /tmp/pg/log -w start \\
        -o "-p 54329 -k /tmp/pg -c listen_addresses=127.0.0.1"
    BOURRE_TEST_POSTGRES=postgresql://postgres@127.0.0.1:54329/postgres python -m pytest tests/test_arena_postgres.py

A test that stops and starts its database (the arena through a restart) starts a server of its own instead
(``private_postgres``), from PostgreSQL's binaries (Debian's ``/usr/lib/postgresql/*/bin``, or the folder in
``BOURRE_TEST_POSTGRES_BIN``), so that the shared server keeps serving the tests of other files meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

SERVER_VARIABLE = "BOURRE_TEST_POSTGRES"
BIN_VARIABLE = "BOURRE_TEST_POSTGRES_BIN"


def server_url() -> str:
    """The URL in ``BOURRE_TEST_POSTGRES``; the test skips, saying why, when it is not set."""
    url = os.environ.get(SERVER_VARIABLE, "").strip()
    if not url:
        pytest.skip(
            f"no PostgreSQL server: set {SERVER_VARIABLE}=postgresql://USER@HOST:PORT/DB (a user that may create "
            "databases) to run these tests; .ci/run starts one (tests/postgres_helpers.py shows how)"
        )
    pytest.importorskip("psycopg", reason="psycopg 3, in the arena extra: pip install -e '.[arena]'")
    return url


def _binaries() -> Path:
    """The folder of PostgreSQL's ``initdb`` and ``pg_ctl``: ``BOURRE_TEST_POSTGRES_BIN``, else Debian's newest
    (``/usr/lib/postgresql/*/bin``), else the ``PATH``'s; the test skips, saying why, when there is none."""
    named = os.environ.get(BIN_VARIABLE, "").strip()
    found = [Path(named)] if named else sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version)[-1:]
    on_path = shutil.which("initdb")
    if not found and on_path is not None:
        found = [Path(on_path).parent]
    if not found or not (found[0] / "initdb").exists():
        pytest.skip(
            f"no PostgreSQL binaries (initdb, pg_ctl) to start a server of the test's own: install Debian's "
            f"postgresql package, or set {BIN_VARIABLE} to their folder"
        )
    return found[0]


def _version(folder: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in folder.parent.name.split(".") if part.isdigit())


def _run(command: list[str]) -> None:
    subprocess.run(command, check=True, timeout=120, stdout=subprocess.DEVNULL)


class PrivateServer:
    """A PostgreSQL server of one test's own: ``url`` (trust on the loopback, user ``postgres``), and ``ctl(mode)``,
    its ``pg_ctl`` in a mode (``"stop -m fast -w"``, ``"start -w"``)."""

    def __init__(self, url: str, ctl: Callable[[str], None]) -> None:
        self.url = url
        self.ctl = ctl


@pytest.fixture(name="private_postgres")
def private_postgres_server() -> Iterator[PrivateServer]:
    """A throwaway PostgreSQL server for a test that stops and starts it (the shared one of ``BOURRE_TEST_POSTGRES``
    may serve tests of other files at the same time): initdb into a temporary folder, a free port of the loopback,
    its settings in its ``postgresql.conf`` (so that a stop and a start keep them); as root, it runs as the postgres
    user (initdb refuses root). Skips, saying why, without PostgreSQL's binaries."""
    binaries = _binaries()
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            pytest.skip("running as root, and no runuser to start PostgreSQL as its own user (initdb refuses root)")
        prefix = ["runuser", "-u", "postgres", "--"]
    folder = Path(tempfile.mkdtemp(prefix="bourre-pg-"))  # under /tmp: the postgres user reaches it
    if prefix:
        shutil.chown(folder, "postgres")
    _run([*prefix, str(binaries / "initdb"), "-D", str(folder / "data"), "-A", "trust", "-U", "postgres"])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    with open(folder / "data" / "postgresql.conf", "a") as conf:
        conf.write(f"port = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{folder}'\n")
        conf.write("fsync = off\n")  # nothing in it outlives the test

    def ctl(mode: str) -> None:
        command = [*prefix, str(binaries / "pg_ctl"), "-D", str(folder / "data"), "-l", str(folder / "log")]
        _run([*command, *mode.split()])

    ctl("start -w")
    try:
        yield PrivateServer(f"postgresql://postgres@127.0.0.1:{port}/postgres", ctl)
    finally:
        with contextlib.suppress(subprocess.SubprocessError):
            ctl("stop -m immediate -w")
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(name="postgres")
def postgres_database() -> Iterator[str]:
    """The URL of a new, empty database on the server of ``BOURRE_TEST_POSTGRES`` (dropped after the test, its
    connections with it); the test skips when the variable is not set. A set variable that names no reachable
    server fails the test: CI must not pass by skipping."""
    import sqlalchemy as sa

    from train.arena.storage import database_url

    url = database_url(server_url())
    name = f"bourre_test_{secrets.token_hex(6)}"
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)  # outlives a restart
    try:
        with admin.connect() as db:
            db.execute(sa.text(f'CREATE DATABASE "{name}"'))
        try:
            yield url.set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as db:
                db.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()
