"""The arena's database: bots and operators (token hashes), matches and every finished game, through SQLAlchemy 2.0
Core.

SQLite by default, one file under the data folder (``arena.sqlite3``), in WAL mode with ``synchronous=NORMAL``; another
URL (PostgreSQL) goes through the same tables. The schema is under Alembic migrations (``train/arena/migrations``),
applied when a ``Store`` opens. Every write goes through one writer thread, which commits whatever is queued in one
transaction (a group commit: 16 tables that finish games at once cost one commit, not 16). A game is committed before
``game_finished`` returns (or its future is done), and the match waits for it before it tells the bots the game is
over, so a server killed mid-match loses no finished game (a committed WAL transaction survives the death of the
process; only a power cut may lose the last ones, which ``synchronous=NORMAL`` trades for a commit without fsync); on
the next start its matches still marked ``running`` are marked ``interrupted``.

PostgreSQL (``postgresql://USER:PASSWORD@HOST:PORT/DB``, through psycopg 3) takes the same tables and migrations:
several arena processes may share one database. There, a connection is checked before use (``pool_pre_ping``), and a
write or a read that meets a lost server (a restart, a failover) is tried again every ``RETRY_SECONDS`` for up to
``RECONNECT_SECONDS``, with one warning when the database goes away and one when it is back: a table waiting for its
game's commit waits that long, and loses nothing. A write retried after a lost connection is made idempotent (an
insert that finds its row already there, committed before the connection dropped, does nothing). A URL is shown only
through ``masked``: its password never reaches a message or a log line.

A match waiting for a server is ``pending``; ``Store.claim_match`` takes the oldest one for one server, once, however
many servers ask at once (``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL, one atomic ``UPDATE ... RETURNING`` on
SQLite); with ``bots``, the oldest one whose remote bots are all among them (connected to that server, idle).

Several servers may serve one database: each ``Store`` is one server (``server_id``), every match it starts or claims
carries that id, and its lease (``train.arena.liveness``: a liveness lock, on PostgreSQL a heartbeat too) tells the
other servers whether it is alive; the running matches of a server that is gone are marked ``interrupted``
(``sweep``), and one judged gone that lives on is fenced (``generation``).

Tokens are 32 random bytes (``secrets.token_urlsafe``), shown once; only their SHA-256 is stored (a token is random,
not a password: a slow hash would add nothing), and a presented token is compared with ``hmac.compare_digest``.
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import hmac
import itertools
import json
import logging
import os
import queue
import secrets
import socket
import threading
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa

from train.arena.database_urls import database_url, masked
from train.arena.json_text import compact
from train.arena.liveness import Liveness
from train.arena.schema import (
    NewerDatabaseError,
    alembic_config,
    bot_connections,
    bots,
    games,
    match_bots,
    matches,
    metadata,
    migrate,
    operators,
    servers,
)

__all__ = [
    "CLAIM_WINDOW",
    "DB_FILE",
    "NewerDatabaseError",
    "PENDING",
    "RECONNECT_SECONDS",
    "RETRY_SECONDS",
    "Store",
    "alembic_config",
    "bot_connections",
    "bots",
    "database_url",
    "games",
    "masked",
    "match_bots",
    "matches",
    "metadata",
    "migrate",
    "operators",
    "servers",
]

log = logging.getLogger("bourre.arena")

DB_FILE = "arena.sqlite3"
PENDING = "pending"
"""The status of a match that waits for a server to claim it (``Store.queue_match``, ``Store.claim_match``)."""
RECONNECT_SECONDS = 120.0
"""How long a write or a read waits for a database server that went away (PostgreSQL) before it fails."""
RETRY_SECONDS = 0.5
"""The pause between two tries to reach a database server that went away."""
CLAIM_WINDOW = 200
"""``Store.claim_match`` with ``bots`` looks at this many of the oldest pending matches for one it can play."""
_T = TypeVar("_T")

_INSERT_GAME = sa.insert(games)
_INSERT_MATCH = sa.insert(matches)


def _seated_bots(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``match_bots`` rows of ``matches`` rows: one per remote bot seated (``bot:NAME`` in the request's seats,
    a name that fits the column: a longer one is no bot's)."""
    seated = []
    for row in rows:
        names = {
            seat[4:] for seat in json.loads(row["request"])["seats"] if seat.startswith("bot:") and len(seat) <= 36
        }
        seated += [{"name": name, "match_id": row["id"], "created": row["created"]} for name in sorted(names)]
    return seated


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


_Write = tuple[Any, Any, "concurrent.futures.Future[Any]"]  # a statement, its parameters, its future


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # readers never block the writer, a commit appends to the log
    cursor.execute("PRAGMA synchronous=NORMAL")  # no fsync per commit: durable across a crash of the process
    cursor.close()


class Store:
    """The database at ``url`` (``database_url``), or ``sqlite:///{folder}/arena.sqlite3``; migrated to the newest
    schema on opening. ``ValueError`` (one line, the password masked) for a URL it cannot use or a server it cannot
    reach at the start. ``masked_url``: the URL to show. ``server_id``: this server's id in the ``server`` column of
    the matches it starts or claims (default: host name, process id and 4 random bytes)."""

    def __init__(self, folder: str | Path | None = None, url: str | None = None, server_id: str | None = None) -> None:
        if url is None:
            if folder is None:
                raise ValueError("Store: a data folder or a database URL")
            Path(folder).mkdir(parents=True, exist_ok=True)
            url = f"sqlite:///{Path(folder) / DB_FILE}"
        parsed = database_url(url)
        self.masked_url = masked(parsed)
        self._secrets = [s for s in (parsed.password, parsed.query.get("password")) if isinstance(s, str) and s]
        self.sqlite = parsed.get_backend_name() == "sqlite"
        self.server_id = server_id or f"{socket.gethostname()[:40]}-{os.getpid()}-{secrets.token_hex(4)}"
        # a pooled connection that a restarted server dropped is found before use and replaced
        self.engine = sa.create_engine(parsed, pool_pre_ping=not self.sqlite)
        if self.sqlite:
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
        self._insert_or_keep: dict[str, Any] = {}
        # an insert tried again after a lost connection may find its row committed already: then it does nothing
        self._again = {id(_INSERT_GAME): self.insert_or_keep(games), id(_INSERT_MATCH): self.insert_or_keep(matches)}
        try:
            migrate(self.engine)
        except sa.exc.DBAPIError as err:
            self.engine.dispose()
            raise ValueError(f"database {self.masked_url}: {self._reason(err)}") from None
        except NewerDatabaseError as err:
            self.engine.dispose()
            raise NewerDatabaseError(f"database {self.masked_url}: {err}") from None
        self._writes: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._writer_lock = threading.Lock()
        self._down_since: float | None = None
        self._down_lock = threading.Lock()
        locks = Path(f"{parsed.database}.servers") if self.sqlite and parsed.database else None
        self.liveness = Liveness(self.engine, self.server_id, locks, self._retrying)

    def close(self) -> None:
        with self._writer_lock:
            if self._writer is not None:
                self._writes.put(None)
                self._writer.join()
                self._writer = None
        self.liveness.close()
        self.engine.dispose()

    # ------------------------------------------------------------------------ a server that went away
    def reason(self, err: BaseException) -> str:
        """The driver's first line about ``err``, any password in it masked: what a one-line message may say."""
        return self._reason(err)

    def _reason(self, err: BaseException) -> str:
        """The driver's first line about ``err``, any password in it masked."""
        orig = getattr(err, "orig", None) or err
        text = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _lost(self, err: sa.exc.DBAPIError) -> bool:
        """Whether ``err`` says the database server is out of reach (PostgreSQL: a restart, a dropped connection, a
        server not yet accepting), so that the same work may be tried again. SQLite waits for its locks itself."""
        if self.sqlite:
            return False
        return bool(err.connection_invalidated) or isinstance(err, (sa.exc.OperationalError, sa.exc.InterfaceError))

    def read(self, work: Callable[[], _T], patience: float = RECONNECT_SECONDS) -> _T:
        """``work()`` (reads: it may run more than once), tried again every ``RETRY_SECONDS`` while the database server
        is out of reach, for up to ``patience`` seconds; then its ``sqlalchemy.exc.DBAPIError``."""
        return self._retrying(work, patience)

    def _retrying(self, work: Callable[[], _T], patience: float = RECONNECT_SECONDS) -> _T:
        """``work()``, tried again every ``RETRY_SECONDS`` while the server is out of reach, for up to ``patience``
        (``RECONNECT_SECONDS``); one warning when it goes away, one when it is back, no traceback."""
        deadline: float | None = None
        while True:
            try:
                result = work()
            except sa.exc.DBAPIError as err:
                if not self._lost(err):
                    raise
                now = time.monotonic()
                if deadline is None:
                    deadline = now + patience
                    with self._down_lock:
                        if self._down_since is None:
                            self._down_since = now
                            log.warning(
                                "the database at %s is out of reach (%s): waiting up to %g s for it",
                                self.masked_url,
                                self._reason(err),
                                patience,
                            )
                if now >= deadline:
                    raise
                time.sleep(RETRY_SECONDS)
                continue
            if deadline is not None:
                with self._down_lock:
                    if self._down_since is not None:
                        log.warning(
                            "the database at %s is back after %.1f s",
                            self.masked_url,
                            time.monotonic() - self._down_since,
                        )
                        self._down_since = None
            return result

    # ------------------------------------------------------------------------ the writer
    def submit(self, statement: Any, parameters: Any = None) -> concurrent.futures.Future[Any]:
        """Queue a write for the writer thread; its future is done once the transaction that holds it commits."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._writer_lock:
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, name="arena store", daemon=True)
                self._writer.start()
            self._writes.put((statement, parameters, future))
        return future

    def insert_or_keep(self, table: sa.Table) -> Any:
        """``table``'s insert that leaves a row with the same key as it is (the same statement every time, so that
        the writer puts consecutive ones in one transaction)."""
        if table.name not in self._insert_or_keep:
            from sqlalchemy.dialects import postgresql, sqlite

            insert = sqlite.insert if self.sqlite else postgresql.insert
            self._insert_or_keep[table.name] = insert(table).on_conflict_do_nothing()
        return self._insert_or_keep[table.name]

    def _commit(self, groups: list[tuple[Any, list[Any], Any]], tries: Iterator[int]) -> list[int]:
        """Execute ``groups`` in one transaction; after the first try, each insert in its idempotent form. A match's
        bots (``match_bots``) are inserted with it."""
        again = next(tries) > 0
        counts = []
        with self.engine.begin() as db:
            for st, ps, _ in groups:
                counts.append(
                    db.execute(self._again.get(id(st), st) if again else st, ps if len(ps) > 1 else ps[0]).rowcount
                )
                if st is _INSERT_MATCH and (seated := _seated_bots(ps)):
                    db.execute(self.insert_or_keep(match_bots), seated)
        return counts

    def _write_loop(self) -> None:
        while (first := self._writes.get()) is not None:
            batch, last = [first], False
            while not self._writes.empty():
                item = self._writes.get()
                if item is None:
                    last = True
                    break
                batch.append(item)
            # consecutive games are inserted in one executemany
            groups: list[tuple[Any, list[Any], list[concurrent.futures.Future[Any]]]] = []
            for statement, parameters, future in batch:
                if groups and statement is _INSERT_GAME and groups[-1][0] is _INSERT_GAME:
                    groups[-1][1].append(parameters)
                    groups[-1][2].append(future)
                else:
                    groups.append((statement, [parameters], [future]))
            if not self._commit_together(groups):
                # one bad write must not fail the others queued with it: each again in its own transaction
                for group in groups:
                    self._commit_together([group])
            if last:
                return

    def _commit_together(self, groups: list[tuple[Any, list[Any], list[concurrent.futures.Future[Any]]]]) -> bool:
        """``groups`` in one transaction, their futures settled: True; False, none settled, if a batch of several
        failed (the caller tries each alone). The futures of a lone group that failed are told its error."""
        try:
            counts = self._retrying(functools.partial(self._commit, groups, itertools.count()))
        except Exception as err:
            if len(groups) > 1:
                return False
            for future in groups[0][2]:  # the write is told; the writer goes on
                future.set_exception(err)
            return True
        for (_, _, futures), count in zip(groups, counts, strict=True):
            for future in futures:
                future.set_result(count)
        return True

    def _read(self, statement: Any) -> Any:
        """The first row of ``statement`` (a tuple), or None; tried again while the server is out of reach."""

        def work() -> Any:
            with self.engine.connect() as db:
                return db.execute(statement).first()

        return self._retrying(work)

    # ------------------------------------------------------------------------ bots and operators
    def add_bot(self, name: str) -> str:
        """A new bot's token (shown once); ``ValueError`` if the name is taken."""
        return self._add_token(bots, name, "bot")

    def check_token(self, name: str, token: str) -> bool:
        row = self._read(sa.select(bots.c.token_sha256).where(bots.c.name == name))
        # an unknown name is compared too, so the answer takes as long whether the name exists or not
        return hmac.compare_digest(row[0] if row is not None else "0" * 64, _digest(token)) and row is not None

    def add_operator(self, name: str) -> str:
        """A new operator's token (shown once), which ``POST /api/matches`` asks for; ``ValueError`` if the name is
        taken."""
        return self._add_token(operators, name, "operator")

    def has_operator(self) -> bool:
        return self._read(sa.select(operators.c.name).limit(1)) is not None

    def operator_of(self, token: str) -> str | None:
        """The name of the operator whose token this is, or None (looked up by the token's hash)."""
        row = self._read(sa.select(operators.c.name).where(operators.c.token_sha256 == _digest(token)))
        return None if row is None else str(row[0])

    def _add_token(self, table: sa.Table, name: str, what: str) -> str:
        token = secrets.token_urlsafe(32)
        with self.engine.begin() as db:
            if db.execute(sa.select(table.c.name).where(table.c.name == name)).first() is not None:
                raise ValueError(f"{what} {name!r} exists already")
            db.execute(sa.insert(table).values(name=name, token_sha256=_digest(token), created=time.time()))
        return token

    # ------------------------------------------------------------------------ servers alive and gone (liveness)
    @property
    def generation(self) -> int:
        """Raised each time this server finds it was judged gone meanwhile (``Liveness.generation``): a match
        started under an older generation is fenced and stops (``train.arena.server``)."""
        return self.liveness.generation

    def hold(self) -> None:
        """Take this server's liveness lock if it does not hold it, and on PostgreSQL beat (``Liveness.hold``)."""
        self.liveness.hold()

    def server_gone(self, db: sa.Connection, server: str) -> bool:
        """Whether server ``server`` is gone, looked at in ``db``'s transaction (``Liveness.server_gone``)."""
        return self.liveness.server_gone(db, server)

    def sweep(self, own: bool = False) -> int:
        """Mark ``interrupted`` the running matches of the servers that are gone, with ``own`` this server's too
        (``Liveness.sweep``); their count."""
        return self.liveness.sweep(own)

    def keep_alive(self) -> int:
        """``hold`` and ``sweep``, as a serving store does every ``liveness.LIVENESS_SECONDS``; the matches
        interrupted."""
        return self.liveness.keep_alive()

    def mark_interrupted(self) -> int:
        """At a server's start: the matches left ``running`` by a server that stopped without finishing them, marked
        ``interrupted`` (``Liveness.mark_interrupted``); their count."""
        return self.liveness.mark_interrupted()

    # ------------------------------------------------------------------------ matches
    def start_match(self, match: str, request: dict[str, Any]) -> concurrent.futures.Future[Any]:
        """Store a match as ``running`` on this server (``server_id``); its future is done once it is committed."""
        values = {
            "id": match,
            "created": time.time(),
            "request": json.dumps(request),
            "status": "running",
            "server": self.server_id,
            "claimed": time.time(),
        }
        return self.submit(_INSERT_MATCH, values)

    def queue_match(self, match: str, request: dict[str, Any]) -> concurrent.futures.Future[Any]:
        """Store a match as ``pending``, for whichever server claims it first (``claim_match``); its future is done
        once it is committed."""
        values = {"id": match, "created": time.time(), "request": json.dumps(request), "status": PENDING}
        return self.submit(_INSERT_MATCH, values)

    def claim_match(self, server: str, bots: Collection[str] | None = None) -> dict[str, Any] | None:
        """Claim the oldest pending match for ``server`` (the claiming arena process's id, up to 64 characters): its
        row, now ``running`` with ``server`` and ``claimed`` (the time) set, its ``request`` decoded from JSON; None
        when no match is pending. With ``bots`` (the bots connected to that server and idle), the oldest of the
        ``CLAIM_WINDOW`` oldest pending matches whose remote seats (``bot:NAME``) are all among them.

        However many servers (threads, processes, machines) claim at once, every pending match goes to exactly one of
        them, and none is skipped while it is pending:

        - PostgreSQL: the oldest pending row is selected ``FOR UPDATE SKIP LOCKED`` and updated in the same
          transaction. A second server's select skips the row the first one holds locked (it neither waits for it nor
          sees it as pending again after the commit) and takes the next; a server that dies before its commit
          releases its lock and the match stays pending.
        - SQLite: one statement, ``UPDATE matches SET ... WHERE id = (SELECT the oldest pending) AND status = 'pending'
          RETURNING ...``; SQLite has one writer at a time and the statement reads under the write lock, so two
          claims run one after the other (the second waits, up to the driver's busy timeout of 5 s).

        The commit is the claim: a claim whose connection drops before the answer arrives is tried again, and may
        leave that first match ``running`` with this server's id, unplayed (``mark_interrupted`` finds it at the
        server's next start). ``tests/test_arena_postgres.py`` claims a queue from two processes at once, on both."""
        values = {"status": "running", "server": server, "claimed": time.time()}
        oldest = sa.select(matches.c.id).where(matches.c.status == PENDING).order_by(matches.c.created, matches.c.id)
        if server == self.server_id:
            self.hold()

        def claim_among() -> Any:
            """The first playable candidate that is still pending and that no other server holds locked."""
            assert bots is not None
            with self.engine.begin() as db:
                candidates = db.execute(oldest.add_columns(matches.c.request).limit(CLAIM_WINDOW)).all()
                for match, request in candidates:
                    seats = json.loads(request).get("seats", [])
                    if not all(s[4:] in bots for s in seats if s.startswith("bot:")):
                        continue
                    where = sa.and_(matches.c.id == match, matches.c.status == PENDING)
                    if not self.sqlite:  # lock it, or skip it if another server holds it
                        locked = sa.select(matches.c.id).where(where).with_for_update(skip_locked=True)
                        if db.execute(locked).first() is None:
                            continue
                    update = sa.update(matches).where(where).values(**values).returning(*matches.c)
                    row = db.execute(update).mappings().first()
                    if row is not None:
                        return row
                return None

        def claim() -> Any:
            with self.engine.begin() as db:
                if not self.sqlite:
                    row = db.execute(oldest.limit(1).with_for_update(skip_locked=True)).first()
                    if row is None:
                        return None
                    where = matches.c.id == row[0]
                else:
                    pending = matches.alias("pending")  # the inner select must not correlate to the updated table
                    first = sa.select(pending.c.id).where(pending.c.status == PENDING)
                    first = first.order_by(pending.c.created, pending.c.id).limit(1)
                    where = sa.and_(matches.c.id == first.scalar_subquery(), matches.c.status == PENDING)
                update = sa.update(matches).where(where).values(**values).returning(*matches.c)
                return db.execute(update).mappings().first()

        row = self._retrying(claim if bots is None else claim_among)
        return None if row is None else {**dict(row), "request": json.loads(row["request"])}

    def game_finished(
        self, match: str, deal: int, rotation: int, outcomes: Any, history: dict[str, Any]
    ) -> concurrent.futures.Future[Any]:
        """Queue a finished game; its future is done once it is committed."""
        values = {
            "match_id": match,
            "deal": deal,
            "rotation": rotation,
            "outcomes": json.dumps(outcomes.tolist()),
            "history": compact(history),  # json.dumps(history, separators=(",", ":")), faster
        }
        return self.submit(_INSERT_GAME, values)

    def finish_match(self, match: str, status: str, report: dict[str, Any] | None) -> concurrent.futures.Future[Any]:
        """Settle a running match. One that another server marked ``interrupted`` meanwhile (it judged this server
        gone) stays so, and keeps this server's report: a report is never dropped."""
        running = matches.c.status == "running"
        ours = sa.and_(
            matches.c.status == "interrupted", matches.c.server == self.server_id, matches.c.report.is_(None)
        )
        statement = (
            sa.update(matches)
            .where(matches.c.id == match, sa.or_(running, ours))
            .values(
                status=sa.case((running, sa.bindparam("settled")), else_=matches.c.status),
                report=sa.bindparam("reported"),
            )
        )
        return self.submit(statement, {"settled": status, "reported": None if report is None else json.dumps(report)})

    def match(self, match: str) -> dict[str, Any] | None:
        def work() -> dict[str, Any] | None:
            with self.engine.connect() as db:
                row = db.execute(sa.select(matches).where(matches.c.id == match)).mappings().first()
                if row is None:
                    return None
                count = db.execute(sa.select(sa.func.count()).select_from(games).where(games.c.match_id == match))
                return {**dict(row), "games": int(count.scalar_one())}

        return self._retrying(work)

    def games(self, match: str) -> list[dict[str, Any]]:
        def work() -> list[dict[str, Any]]:
            with self.engine.connect() as db:
                rows = db.execute(
                    sa.select(games).where(games.c.match_id == match).order_by(games.c.deal, games.c.rotation)
                ).mappings()
                return [
                    {**dict(r), "outcomes": json.loads(r["outcomes"]), "history": json.loads(r["history"])}
                    for r in rows
                ]

        return self._retrying(work)
