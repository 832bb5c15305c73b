"""The command line of the arena: ``bourre arena serve|match|add-bot|add-operator`` and ``bourre connect``.

``add_parsers(commands)`` adds both to the ``bourre`` command's subparsers (``train.cli``); each sets ``func``, which
returns the exit status and raises ``ValueError`` for a one-line error (status 2).

Tokens are secrets: ``add-bot`` and ``add-operator`` with ``--token-file FILE`` write the token to a new file that
only its owner may read (mode 600, created so, never widened first; an existing file only with ``--force``), the
same option ``connect`` and ``match`` read it from; ``connect`` and ``match`` warn, in one line, when the file they
read is open to the group or others.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import stat
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from train import arguments
from train.arena import ladder_cli
from train.arena.processes import LOOPS

__all__ = ["add_parsers", "event_loop", "run_on"]

DEFAULT_PORT = 8765
DEFAULT_DATA = "runs/arena"
TOKEN_VARIABLE = "BOURRE_ARENA_TOKEN"
"""The environment variable ``bourre arena match`` reads the operator token from, without ``--token-file``."""
DATABASE_VARIABLE = "BOURRE_ARENA_DATABASE"
"""The environment variable the commands that open the database read its URL from, without ``--database`` (a
variable keeps a password out of the list of processes)."""


def _database_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database",
        default=None,
        metavar="URL",
        help="the database, instead of the data folder's SQLite file: postgresql://USER:PASSWORD@"
        f"HOST:PORT/DB, or sqlite:///FILE (default: the {DATABASE_VARIABLE} variable; docs/arena.md)",
    )


def _database(args: argparse.Namespace) -> str | None:
    """The ``--database`` URL, else the ``BOURRE_ARENA_DATABASE`` variable's, else None (the data folder's file)."""
    return getattr(args, "database", None) or os.environ.get(DATABASE_VARIABLE, "").strip() or None


def _token_file_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--token-file",
        default=None,
        metavar="FILE",
        help="write the token to FILE, a new file readable by you alone (mode 600), instead of printing it",
    )
    parser.add_argument("--force", action="store_true", help="with --token-file: replace an existing FILE")


def _loop_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--loop",
        choices=LOOPS,
        default="auto",
        help="the event loop: uvloop (libuv's, in C; the arena extra installs it on Linux and macOS) or asyncio's "
        "own; auto: uvloop where it is installed (default: auto)",
    )


def event_loop(choice: str) -> str:
    """The event loop ``--loop choice`` names, as uvicorn names it: ``auto`` is ``uvloop`` where it imports, else
    ``asyncio``; ``ValueError`` in one line for ``uvloop`` where it does not import (Windows: it has no wheels)."""
    if choice not in LOOPS:
        raise ValueError(f"--loop: expected one of {', '.join(LOOPS)}, got {choice!r}")
    if choice == "asyncio":
        return choice
    try:
        import uvloop  # noqa: F401
    except ImportError:
        if choice == "uvloop":
            raise ValueError(
                "--loop uvloop: uvloop is not installed (pip install uvloop; it has no wheels for Windows)"
            ) from None
        return "asyncio"
    return "uvloop"


def run_on(main: Coroutine[Any, Any, None], loop: str) -> None:
    """Run ``main`` to its end on the event loop ``loop`` (``event_loop``'s answer)."""
    if loop == "uvloop":
        import uvloop

        uvloop.run(main)
    else:
        asyncio.run(main)


def add_parsers(commands: Any) -> None:
    arena = commands.add_parser("arena", help="host remote bots at duplicate matches (docs/arena.md)")
    sub = arena.add_subparsers(dest="arena_command", required=True, metavar="SUBCOMMAND")

    serve = sub.add_parser("serve", help="host tables that remote bots connect to")
    serve.add_argument("--data", default=DEFAULT_DATA, help=f"data folder: the database (default: {DEFAULT_DATA})")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=arguments.port, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT})")
    serve.add_argument(
        "--processes",
        type=int,
        default=1,
        metavar="N",
        help="N server processes on the one port and database, so that N cores serve (default 1; at "
        "most 4 per core and 64): a process that dies is replaced, its bots reconnect to the others "
        "and its running matches are marked interrupted (docs/arena.md)",
    )
    serve.add_argument("--agent", action="append", default=[], metavar="SPEC", help="also offer this agent spec")
    serve.add_argument(
        "--max-connections-per-address",
        type=int,
        default=None,
        metavar="N",
        help="connections open at once from one client address, its request budget raised with it (default 64; "
        "behind a proxy every bot has the proxy's address: raise it there)",
    )
    serve.add_argument(
        "--token-file",
        default=None,
        metavar="FILE",
        help="at the first start, write the operator token to FILE, a new file readable by you alone "
        "(mode 600), instead of printing it",
    )
    serve.add_argument("--force", action="store_true", help="with --token-file: replace an existing FILE")
    _database_option(serve)
    ladder_cli.add_options(serve)
    serve.add_argument(
        "--people", action="store_true", help="admit people at tables with bots, from the page /play (docs/arena.md)"
    )
    _loop_option(serve)
    serve.set_defaults(func=_serve)

    match = sub.add_parser("match", help="ask a running server for a match, and print its report")
    match.add_argument("--seats", required=True, help="one entry per seat: bot:NAME or an agent spec, comma-separated")
    match.add_argument("--players", type=int, default=None, help="table size (default: the number of seats)")
    match.add_argument(
        "--deals",
        type=int,
        default=20,
        help="deals (default 20): with a remote seat each played once, the seats turning round "
        "the table from deal to deal; in a match of built-in agents alone, each in every "
        "rotation",
    )
    match.add_argument(
        "--seed",
        type=arguments.seed,
        default=None,
        help="seed of the deals, for a match of built-in agents alone (bourre eval's deals, each "
        "played in every rotation); a match with a remote seat is dealt from the server's secret",
    )
    match.add_argument(
        "--session",
        action="store_true",
        help="play the deals as one session at one table, the pot carried from deal to deal (the seats fixed, the "
        "deal passing left), paired with its par session: Bourré as it is played (docs/arena.md)",
    )
    match.add_argument(
        "--rule",
        type=arguments.rule_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a house rule of the match (a field of bourre_env.core.rules.Rules: pot_limit=20, tie=split); "
        "repeatable; every rule is sent to the bots in match_start",
    )
    match.add_argument(
        "--par",
        default=None,
        metavar="SPEC",
        help="the agent of the par games each deal is paired with (default: the match's built-in "
        "agent if it seats one kind, else the fallback; none: no par game)",
    )
    match.add_argument("--clock", type=float, default=2.0, help="seconds per move of a remote bot (default 2)")
    match.add_argument(
        "--grace",
        type=float,
        default=30.0,
        help="seconds a remote bot that lost its connection has to come back before it forfeits its "
        "seat for the rest of the match (default 30, at most 600)",
    )
    match.add_argument(
        "--wait",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long the server may wait for a bot that is playing another match (a ladder's) "
        "to end it, holding the bot meanwhile so that the ladder starts no new match for it "
        "(default 60, at most 600; 0: refuse at once)",
    )
    match.add_argument(
        "--fallback",
        default="heuristic",
        metavar="SPEC",
        help="the built-in agent that plays a remote bot's move when the bot cannot (a timeout, an "
        "illegal answer, no connection): one the server offers (default: heuristic)",
    )
    match.add_argument(
        "--token-file",
        default=None,
        metavar="FILE",
        help=f"a file holding an operator token (default: the {TOKEN_VARIABLE} variable)",
    )
    match.add_argument(
        "--url",
        default=f"http://127.0.0.1:{DEFAULT_PORT}",
        help=f"the server, http://HOST:PORT (default: http://127.0.0.1:{DEFAULT_PORT})",
    )
    match.add_argument("--json", default=None, metavar="FILE", help="also write the report as JSON")
    match.set_defaults(func=_match)

    rerate = ladder_cli.add_rerate(sub, DEFAULT_DATA)
    _database_option(rerate)
    rerate.set_defaults(func=lambda args: ladder_cli.rerate(args, _database(args)))

    add = sub.add_parser("add-bot", help="register a bot and print its token (once: only a hash is kept)")
    add.add_argument("name")
    add.add_argument("--data", default=DEFAULT_DATA, help=f"data folder (default: {DEFAULT_DATA})")
    _database_option(add)
    _token_file_option(add)
    add.set_defaults(func=_add_bot)

    operator = sub.add_parser("add-operator", help="make an operator token, which asks for matches (printed once)")
    operator.add_argument("name")
    operator.add_argument("--data", default=DEFAULT_DATA, help=f"data folder (default: {DEFAULT_DATA})")
    _database_option(operator)
    _token_file_option(operator)
    operator.set_defaults(func=_add_operator)

    connect = commands.add_parser("connect", help="play an agent spec as a remote bot at an arena server")
    connect.add_argument("spec", help="an agents.make spec: heuristic, file.py:Class, module:Class, ppo:PATH")
    connect.add_argument("--url", default=f"ws://127.0.0.1:{DEFAULT_PORT}/bot", help="the server's bot address")
    connect.add_argument("--name", required=True, help="the bot's name (bourre arena add-bot NAME)")
    connect.add_argument("--token-file", required=True, help="a file holding the bot's token")
    connect.add_argument("--seed", type=arguments.seed, default=0, help="the agent's seed")
    _loop_option(connect)
    connect.set_defaults(func=_connect)


def _serve(args: argparse.Namespace) -> int:
    from train.arena.processes import check_processes

    check_processes(args.processes)  # before the server's imports: a bad count is said at once
    loop = event_loop(args.loop)  # the supervisor's answer is every child's: they run the same interpreter
    ladder = ladder_cli.config(args)
    _per_address(args)
    keeper = _OperatorTokenFile(args.token_file, args.force)
    try:
        if args.processes > 1:
            from train.arena import processes

            processes.run(
                args.data,
                args.host,
                args.port,
                args.agent,
                _database(args),
                ladder,
                args.people,
                args.processes,
                keeper.keep_token,
                per_address=args.max_connections_per_address,
                loop=loop,
            )
            return 0
        from train.arena import server

        server.run(
            args.data,
            args.host,
            args.port,
            args.agent,
            database=_database(args),
            ladder=ladder,
            people=args.people,
            keep_token=keeper.keep_token,
            loop=loop,
        )
        return 0
    finally:
        keeper.close()


def _per_address(args: argparse.Namespace) -> None:
    """``--max-connections-per-address``, checked (``ValueError`` in one line) and made the guard's default."""
    if args.max_connections_per_address is None:
        return
    from train.web import connections

    per_address = connections.check_per_address(args.max_connections_per_address)
    connections.set_default_per_address(per_address)


class _OperatorTokenFile:
    """``bourre arena serve --token-file FILE``: the file is made (mode 600; an existing one refused unless
    ``--force``) before the server starts, so that a refusal comes before a token exists; the first start's operator
    token is written to it, and where the data has an operator already the file is removed again, as it is when the
    server stops before its start's work is done."""

    def __init__(self, path: str | None, force: bool) -> None:
        if force and path is None:
            raise ValueError("--force: only with --token-file")
        self.path = path
        self.secret = None if path is None else _new_secret_file(path, force)
        self.keep_token = None if path is None else self._keep

    def _keep(self, token: str | None) -> None:
        assert self.secret is not None and self.path is not None
        secret, self.secret = self.secret, None
        if token is None:
            os.close(secret)
            os.unlink(self.path)
            print(
                "bourre arena: no operator token made: this data has one already (bourre arena add-operator NAME "
                "--token-file FILE makes another)",
                file=sys.stderr,
                flush=True,
            )
            return
        with os.fdopen(secret, "w") as out:
            out.write(token + "\n")
        print(
            f"bourre arena: the operator token is written to {self.path}, readable by its owner alone (mode 600); "
            "only its hash is kept",
            file=sys.stderr,
            flush=True,
        )

    def close(self) -> None:
        if self.secret is not None and self.path is not None:  # the server stopped before its start's work
            os.close(self.secret)
            os.unlink(self.path)
            self.secret = None


def _add_bot(args: argparse.Namespace) -> int:
    return _add_token(args, "bot")


def _add_operator(args: argparse.Namespace) -> int:
    return _add_token(args, "operator")


def _add_token(args: argparse.Namespace, what: str) -> int:
    from train.arena.protocol import NAME_PATTERN
    from train.arena.storage import Store

    if not NAME_PATTERN.fullmatch(args.name):
        raise ValueError(f"name: expected 1 to 32 of A-Z a-z 0-9 _ . -, got {args.name!r}")
    if args.force and args.token_file is None:
        raise ValueError("--force: only with --token-file")
    # the file first: a refused file changes nothing, and a token is never made that could not be kept
    secret = None if args.token_file is None else _new_secret_file(args.token_file, args.force)
    try:
        store = Store(args.data, url=_database(args))
        try:
            token = store.add_bot(args.name) if what == "bot" else store.add_operator(args.name)
        finally:
            store.close()
    except BaseException:
        if secret is not None:
            os.close(secret)
            os.unlink(args.token_file)
        raise
    if secret is None:
        print(token)
        print(
            f"the token of {what} {args.name}: shown this once; keep it in a file readable by you alone "
            "(--token-file FILE writes one, mode 600)",
            file=sys.stderr,
        )
        return 0
    with os.fdopen(secret, "w") as out:
        out.write(token + "\n")
    print(
        f"the token of {what} {args.name}: written to {args.token_file}, readable by its owner alone (mode 600); "
        "only its hash is kept",
        file=sys.stderr,
    )
    return 0


def _new_secret_file(path: str, force: bool) -> int:
    """A new file at ``path``, open for writing, that only its owner may read: created with mode 600 (never a wider
    mode narrowed later), refused if ``path`` exists unless ``force``, which removes it first (a link is removed, not
    followed)."""
    if force:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as err:
            raise ValueError(f"--token-file: {err.strerror}: {path}") from None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(path, flags, 0o600)
    except FileExistsError:
        raise ValueError(f"--token-file: {path} exists already (--force replaces it)") from None
    except OSError as err:
        raise ValueError(f"--token-file: {err.strerror}: {path}") from None


def _read_token_file(path: str) -> str:
    """The token in ``path``; a one-line warning on stderr when the file is open to the group or others (the
    token lets anyone play as the bot, or ask for matches)."""
    try:
        token = Path(path).read_text().strip()
        mode = os.stat(path).st_mode
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) else "not text"
        raise ValueError(f"--token-file: {reason}: {path}") from None
    if os.name == "posix" and mode & 0o077:
        print(
            f"warning: --token-file {path} is open to others (mode {stat.S_IMODE(mode):o}): chmod 600 {path}",
            file=sys.stderr,
        )
    return token


def _operator_token(args: argparse.Namespace) -> str:
    if args.token_file is not None:
        token = _read_token_file(args.token_file)
    else:
        token = os.environ.get(TOKEN_VARIABLE, "").strip()
    if not token:
        raise ValueError(
            f"an operator token is needed: --token-file FILE or {TOKEN_VARIABLE} (bourre arena serve "
            "prints one at its first start; bourre arena add-operator NAME makes another)"
        )
    return token


def _server_url(url: str) -> str:
    """``--url`` checked before anything is sent: ``http(s)://HOST[:PORT]``, a host without spaces or control
    characters and a port that is a number; ``ValueError`` in one line otherwise."""
    if not url.startswith(("http://", "https://")):  # a bot's ws:// address, say
        raise ValueError(f"--url: expected the server's http://HOST:PORT or https://..., got {url!r:.80}")
    try:
        parts = urllib.parse.urlsplit(url)
        _ = parts.port  # a port that is no number, or out of range, raises here
    except ValueError as err:
        raise ValueError(f"--url: {err}, in {url!r:.80}") from None
    if not parts.hostname or any(c.isspace() or not c.isprintable() for c in parts.netloc):
        raise ValueError(f"--url: expected http://HOST:PORT with a host and no spaces, got {url!r:.80}")
    return url


def _match(args: argparse.Namespace) -> int:
    _server_url(args.url)
    seats = [s.strip() for s in args.seats.split(",") if s.strip()]
    body = {
        "seats": seats,
        "players": args.players or len(seats),
        "deals": args.deals,
        "clock": args.clock,
        "grace": args.grace,
        "fallback": args.fallback,
        "wait": args.wait,
    }
    if args.seed is not None:
        body["seed"] = args.seed
    if args.par is not None:
        body["par"] = args.par
    if args.session:
        body["format"] = "session"
    if args.rule:
        body["rules"] = dict(args.rule)
    request = urllib.request.Request(
        args.url.rstrip("/") + "/api/matches",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {_operator_token(args)}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request) as answer:
            result = json.loads(answer.read())
    except urllib.error.HTTPError as err:
        try:
            message = json.loads(err.read()).get("error", str(err))
        except ValueError:
            message = str(err)
        raise ValueError(message) from None
    except urllib.error.URLError as err:
        raise ValueError(f"no arena server at {args.url}: {err.reason}") from None
    print(result["text"])
    if args.json is not None:
        Path(args.json).write_text(json.dumps(result["report"], indent=1))
    return 0


def _connect(args: argparse.Namespace) -> int:
    from train.arena.client import AgentBot, RefusedError, play_async
    from train.arena.protocol import NAME_PATTERN

    if not NAME_PATTERN.fullmatch(args.name):  # refused by any server, for good: said before connecting
        raise ValueError(f"--name: expected 1 to 32 of A-Z a-z 0-9 _ . -, got {args.name!r}")
    if not args.url.startswith(("ws://", "wss://")):
        raise ValueError(f"--url: expected ws://HOST:PORT/bot or wss://..., got {args.url!r}")
    loop = event_loop(args.loop)
    token = _read_token_file(args.token_file)
    bot = AgentBot(args.spec, args.seed)
    try:
        run_on(play_async(bot, args.url, args.name, token, progress=True), loop)
    except RefusedError as err:
        raise ValueError(f"refused by the server: {err}") from None
    except KeyboardInterrupt:
        print("bourre connect: stopped", file=sys.stderr)
        return 130
    return 0
