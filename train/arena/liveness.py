"""Which arena servers on a database are alive, and the matches of those that are gone: each ``Store`` is one server
(``server_id``), and every match it starts or claims carries that id; its ``Liveness`` (``Store.liveness``) holds the
server's lease.

A serving store holds a *liveness lock* for its life (``hold``): on PostgreSQL a session advisory lock keyed by the
id, on SQLite an exclusive ``flock`` on a file beside the database. Whatever kills the process (SIGKILL included),
the database or the kernel releases the lock at once. On SQLite that is all ``sweep`` needs: a running match whose
server's lock can be taken is marked ``interrupted``. On PostgreSQL a lock also goes with its one database session
when only that session drops (a reset connection, a pooler, ``pg_terminate_backend``) while the server lives, so a
server there also *beats*: every ``LIVENESS_SECONDS`` it writes the database's clock into its row of ``servers``
through its other connections, and takes its lock again if it lost it. A server is judged gone only when its lock
is free *and* its beat is older than ``grace_seconds`` (10 beats), or absent (a store that closed deletes its row):
a lease with a grace period, never one missed beat. A sweep that judges a server gone deletes its row with the
interruption, which *fences* it: should it live on (paused past the grace period, cut off from the database), its
next beat finds its row gone, raises ``generation``, and every match it plays stops before its next remote turn
(``train.arena.remote.FencedError``); its report is still stored (``Store.finish_match``). Leases were chosen over a
generation number in every write because the server's writes are few and grouped (one writer thread), while its
turns, which must stop, go to the bots without touching the database. A server sweeps at its start
(``mark_interrupted``, which also takes its own old matches and those without a server id) and every
``LIVENESS_SECONDS`` after; on PostgreSQL only once the database has been up ``STEADY_SECONDS`` (a restarted
database has lost every lock, and each live server takes its own again within ``LIVENESS_SECONDS``).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from train.arena.schema import matches, servers

__all__ = ["GRACE_BEATS", "LIVENESS_SECONDS", "STEADY_SECONDS", "Liveness", "grace_seconds"]

log = logging.getLogger("bourre.arena")

LIVENESS_SECONDS = 1.0
"""How often a serving store checks its liveness lock (taking it again after a lost connection) and sweeps the
matches of servers that are gone (``Store.keep_alive``, from the server's lifespan)."""
GRACE_BEATS = 10
"""PostgreSQL: a server is judged gone only when its liveness lock is free *and* its last heartbeat is older than
``GRACE_BEATS`` times ``LIVENESS_SECONDS`` (``grace_seconds``), never on one missed beat: a live server whose lock's
session dropped (a reset connection, a pooler, ``pg_terminate_backend``) beats on through its other connections and
takes its lock again within a beat."""
STEADY_SECONDS = 5.0
"""PostgreSQL: no sweep until the database has been up this long, so that after a restart of the database every
live server has taken its liveness lock again (each does within ``LIVENESS_SECONDS``) before any is judged gone."""

# only PostgreSQL beats; a beat tried again after a lost connection may find its row committed already
_INSERT_SERVER = postgresql.insert(servers).on_conflict_do_nothing()


def grace_seconds() -> float:
    """How long a PostgreSQL server's heartbeat may be old before a server whose liveness lock is free is judged
    gone (``GRACE_BEATS`` beats)."""
    return GRACE_BEATS * LIVENESS_SECONDS


def _lock_key(server: str) -> int:
    """The PostgreSQL advisory lock (a signed 64-bit key) that says the server ``server`` is alive."""
    return int.from_bytes(hashlib.sha256(b"bourre-server:" + server.encode()).digest()[:8], "big", signed=True)


class Liveness:
    """The lease of server ``server_id`` on the database of ``engine``: its liveness lock (on SQLite a file in
    ``locks``, a folder beside the database; None: an in-memory database, whose servers are all alive), its
    heartbeat, and the sweep of the matches of the servers that are gone. ``retrying``: the store's way to run a
    piece of work, tried again while a PostgreSQL server is out of reach (``Store.read``)."""

    def __init__(
        self,
        engine: sa.Engine,
        server_id: str,
        locks: Path | None,
        retrying: Callable[[Callable[[], Any]], Any],
    ) -> None:
        self.engine = engine
        self.server_id = server_id
        self.sqlite = engine.dialect.name == "sqlite"
        self._locks = locks
        self._retrying = retrying
        self._life: Any = None  # the liveness lock: a PostgreSQL connection, or an open file on SQLite
        self._life_lock = threading.Lock()
        self._closed = False  # a liveness check still under way when the store closes does nothing more
        self._beating = False  # PostgreSQL: this server's heartbeat row has been written
        self.generation = 0
        """Raised each time this server finds it was judged gone meanwhile (its heartbeat row deleted by another
        server's sweep, its running matches interrupted): a match started under an older generation is fenced and
        stops (``train.arena.server``)."""

    def close(self) -> None:
        """Let the lock go, and say that this server is gone (its heartbeat row deleted): another server need not
        wait out the grace period. Nothing more is checked or beaten after."""
        with self._life_lock:
            self._closed = True
            if self._beating:
                with contextlib.suppress(Exception), self.engine.begin() as db:
                    db.execute(sa.delete(servers).where(servers.c.id == self.server_id))
            if self._life is not None:
                with contextlib.suppress(Exception):  # a connection the database dropped already
                    self._life.close()
                self._life = None

    def hold(self) -> None:
        """Take this server's liveness lock if it does not hold it (again, after PostgreSQL dropped its connection),
        and on PostgreSQL beat (``_beat``): while either is fresh, ``sweep`` in other servers leaves this server's
        running matches alone."""
        self._hold_lock()
        if not self.sqlite:
            self._retrying(self._beat)

    def _hold_lock(self) -> None:
        with self._life_lock:
            if self._closed:
                return
            if self.sqlite:
                if self._life is None and self._locks is not None:
                    import fcntl

                    self._locks.mkdir(exist_ok=True)
                    life = open(self._lock_file(self.server_id), "a")  # noqa: SIM115 (held for the server's life)
                    fcntl.flock(life, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    self._life = life
                return
            if self._life is not None:
                try:
                    self._life.execute(sa.text("SELECT 1"))
                    return
                except sa.exc.DBAPIError:  # the database restarted, or the connection dropped: the lock is gone
                    with contextlib.suppress(Exception):
                        self._life.close()
                    self._life = None

            def take() -> Any:
                life = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
                try:
                    life.execute(sa.text("SELECT pg_advisory_lock(:key)"), {"key": _lock_key(self.server_id)})
                except BaseException:
                    life.close()
                    raise
                return life

            self._life = self._retrying(take)

    def _beat(self) -> None:
        """PostgreSQL: this server's heartbeat, in the database's clock. Its row gone after this server wrote it
        means another server judged it gone and interrupted its running matches: ``generation`` goes up, so that the
        matches this server still plays stop (they are fenced off), and it beats again."""
        now = sa.select(sa.func.extract("epoch", sa.func.now())).scalar_subquery()
        with self._life_lock, self.engine.begin() as db:
            if self._closed:
                return
            mine = servers.c.id == self.server_id
            if db.execute(sa.update(servers).where(mine).values(beat=now)).rowcount:
                return
            if self._beating:
                self.generation += 1
                log.warning("server %s was judged gone by another server: its matches are stopped", self.server_id)
            db.execute(_INSERT_SERVER, {"id": self.server_id, "beat": 0.0})
            db.execute(sa.update(servers).where(mine).values(beat=now))
            self._beating = True

    def _lock_file(self, server: str) -> Path:
        assert self._locks is not None
        return self._locks / (hashlib.sha256(server.encode()).hexdigest()[:24] + ".lock")

    def server_gone(self, db: sa.Connection, server: str) -> bool:
        """Whether server ``server`` is gone, looked at in ``db``'s transaction (``_lease``)."""
        return self._lease(db, server) == "gone"

    def _lease(self, db: sa.Connection, server: str) -> str:
        """Whether server ``server`` is gone: its liveness lock is free (its process has ended, or never held one),
        and on PostgreSQL its heartbeat too is older than ``grace_seconds`` (or absent: a server that closed, or of
        an older version), since a live server's lock goes with its session when only that session drops. ``held``
        while its lock is held, ``beating`` while its lock is free but its beat fresh, else ``gone``."""
        if self.sqlite:
            if self._locks is None:
                return "held"
            import fcntl

            path = self._lock_file(server)
            with open(path, "a") as probe:
                try:
                    fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return "held"
                path.unlink(missing_ok=True)  # nobody holds it: the file of a server that is gone
                return "gone"
        if not db.execute(sa.text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": _lock_key(server)}).scalar():
            return "held"
        age = sa.func.extract("epoch", sa.func.now()) - servers.c.beat
        old = db.execute(sa.select(age).where(servers.c.id == server)).scalar()
        return "gone" if old is None or float(old) > grace_seconds() else "beating"

    def sweep(self, own: bool = False) -> int:
        """Mark ``interrupted`` the running matches of every other server that is gone (its liveness lock free), and
        with ``own`` this server's and those without a server id (a server of an older version); their count. On
        PostgreSQL nothing of another server is swept before the database has been up ``STEADY_SECONDS``."""
        self.hold()

        def work() -> int:
            with self.engine.begin() as db:
                running = sa.select(matches.c.server).where(matches.c.status == "running").distinct()
                others = {row[0] for row in db.execute(running)}
                others.discard(self.server_id)
                others.discard(None)
                if others and not self.sqlite:
                    up = db.execute(sa.text("SELECT extract(epoch from now() - pg_postmaster_start_time())"))
                    if float(up.scalar_one()) < STEADY_SECONDS:
                        others = set()
                gone = sorted(server for server in others if self.server_gone(db, server))
                whose: sa.ColumnElement[bool] = matches.c.server.in_(gone)
                if own:
                    whose = sa.or_(whose, matches.c.server == self.server_id, matches.c.server.is_(None))
                if not gone and not own:
                    return 0
                update = sa.update(matches).where(matches.c.status == "running", whose)
                counted = db.execute(update.values(status="interrupted")).rowcount
                if gone and not self.sqlite:  # fenced: a server judged gone that still lives finds out at its beat
                    db.execute(sa.delete(servers).where(servers.c.id.in_(gone)))
            for server in gone:
                log.warning("server %s is gone: its running matches are marked interrupted", server)
            return int(counted)

        return self._retrying(work)

    def keep_alive(self) -> int:
        """``hold`` and ``sweep``, as a serving store does every ``LIVENESS_SECONDS``; the matches interrupted."""
        return 0 if self._closed else self.sweep()

    def mark_interrupted(self) -> int:
        """At a server's start: matches left ``running`` by a server that stopped without finishing them (this id's,
        those without an id, and those of every server that is gone: ``sweep``); their count. On PostgreSQL a server
        whose lock is free but whose beat is fresh (dead a moment ago, or alive with its lock's session dropped) is
        waited for, up to the grace period and a beat: it takes its lock again, or its beat ages out."""
        counted = self.sweep(own=True)
        deadline = time.monotonic() + grace_seconds() + LIVENESS_SECONDS
        while not self.sqlite and self._beating_only() and time.monotonic() < deadline:
            time.sleep(LIVENESS_SECONDS)
            counted += self.sweep()
        return counted

    def _beating_only(self) -> bool:
        """Whether a server with running matches has its lock free and its beat fresh (neither live nor gone yet)."""

        def work() -> bool:
            with self.engine.begin() as db:
                running = sa.select(matches.c.server).where(matches.c.status == "running").distinct()
                others = {row[0] for row in db.execute(running)} - {self.server_id, None}
                return any(self._lease(db, server) == "beating" for server in sorted(others))

        return self._retrying(work)
