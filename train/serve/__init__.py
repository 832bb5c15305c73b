"""``bourre serve``: play Bourré in the browser against the agents, and watch hand histories again.

``bourre serve`` (``pip install -e ".[serve]"``) starts a web server on ``http://127.0.0.1:8000``;
the page there needs no build step (``train/serve/static``: one HTML page, a script, a style sheet).
Choose a preset, a table size, your seat and the agent in every other seat (among those the server offers),
then play deal after deal: the page shows your hand, the card turned for trump, the pot, who passed or
plays and how many cards each drew, the trick on the table, tricks won and running chip totals, and
your legal actions are its only buttons. After each deal it shows every hand, the payments and a link
to the deal's hand history (``docs/hand_history.md``); its replay view steps through any history file,
from one player's seat or with every hand open.

At a browser table each deal is an episode of one deal: the pot carries to the next deal and the deal
passes left, but the ante exemptions of a multi-deal episode do not carry (everyone antes every deal).

Design
------
The server keeps every game (``train.serve.tables``); a client holds only a table id, 128 random bits
that are the table's only key, and sees only its own seat's observation, decoded by ``seat_view``,
with the public log of the deal (the others' draws as counts). Agents' moves are played on the server
until the person is to act. Hidden cards appear in a response only once the deal is over.

HTTP API (JSON; a refusal is a 4xx with ``{"error": message}`` and changes nothing):

=========================================== =====================================================================
``GET /api/options``                        presets, table sizes, suggested agent specs, the server's limits
``POST /api/tables``                        ``{"preset", "players", "seat", "agents"}``: a new table (201, its view)
``GET /api/tables/{id}``                    the table as your seat sees it
``POST /api/tables/{id}/actions``           ``{"action": id, "turn": n}``: your action (``turn`` guards against
                                            a stale or repeated request)
``POST /api/tables/{id}/deals``             the next deal, once the current one is over
``GET /api/tables/{id}/deals/{k}/history``  the hand history of finished deal ``k`` (a download)
``DELETE /api/tables/{id}``                 close the table
``POST /api/replays?seat=k&open=0|1``       body: a hand history file; every position of it, to step through
=========================================== =====================================================================

Limits and checks (each refusal a 4xx JSON error naming what is wrong; a failure of an agent at a table is a 502
naming it; a failure of the server itself is a 500 ``{"error": "internal error"}``, its traceback only in the
server's log):

* Tables: at most ``tables.MAX_TABLES`` (32) live tables in all (``--max-tables``) and
  ``tables.MAX_TABLES_PER_CLIENT`` (8) for one client IP address (429 past either; behind a proxy every client
  has the proxy's address), each closed after ``tables.IDLE_SECONDS`` (30 minutes) without a request
  (``--idle-minutes``: finite and positive).
* Bodies: requests of at most ``app.MAX_BODY`` (16 KiB) bytes, history uploads of ``app.MAX_UPLOAD`` (1 MiB)
  bytes and ``tables.MAX_REPLAY_DEALS`` (20) deals (413 past them); JSON nested too deep or with an integer past
  Python's digit limit is a 400 (a 422 in an upload).
* Replays: at most ``app.MAX_REPLAYS`` (4) worked out at once in all (503 past it) and
  ``app.MAX_REPLAYS_PER_CLIENT`` (2) for one client address (429 past it), refused at once rather than queued;
  reading the file, replaying it and encoding the answer all run in a thread, off the event loop, and an answer
  is at most ``app.MAX_REPLAY_BYTES`` (4 MiB, 413 past it; 20 deals at 8 players make about 1.2 to 1.7 MB).
* Agents' budgets: a search agent chosen on the page is held to ``agents.search.pimc.LIMITS`` (at most 256 worlds,
  ``infer`` 32, ``draws`` 8, ``ms`` 1000) and ``agents.search.ismcts.LIMITS`` (1024 iterations, ``batch`` 64,
  ``infer`` 32, ``draws`` 8, ``ms`` 1000) by ``agents.check_budget`` (400 past them, naming the option and its
  maximum), and each of its moves is capped at ``tables.MOVE_MS`` (1 s: its ``ms`` option).
* The agents' clock: every agent at a table, the operator's too, has ``tables.MOVE_SECONDS`` (10 s of wall time,
  ``run(move_seconds=...)``) for each call into it (being built, its reset before a deal, a move), each in a daemon
  thread. A call past it is abandoned and the heuristic plays that seat meanwhile: the agent plays again from its
  next move once that call has returned (never two calls at once; in a deal only once reset for it, so an agent
  built late from the next deal). The table's view says so in ``notices``. An agent that raises or answers with no
  legal action fails its table: a 502 naming the agent, its seat and what it did, and the table is closed.
* Stopping: Ctrl-C (or SIGTERM) stops the server within ``STOP_SECONDS`` (3 s) whatever its threads are doing
  (requests in flight have until then to finish; whatever still runs then is abandoned), a second Ctrl-C at once.
* Threads: a table's work (its agents' moves) runs off the event loop in at most ``app.TABLE_THREADS`` (16)
  threads, one request per table at a time; a request to a table already busy is refused at once (409), so
  one slow table holds up neither the other tables nor ``GET /api/options``.
* Senders: every ``POST`` must be ``Content-Type: application/json`` (415 otherwise: a page elsewhere can post
  a form or text without the browser asking the server first, but not JSON), and a request that changes
  something with an ``Origin`` header naming another host than the request's ``Host`` is refused (403).
  On 127.0.0.1 (the default) only requests naming this machine (``Host`` 127.0.0.1 or localhost) are answered.

What it trusts: nothing from the page. A page chooses its agents by name among those the server offers
(``train.web.agent_specs``, the rule of both servers): a registered agent's bare name (``ppo`` is the shipped model),
a heuristic variant, a search with budget options and the words of ``agent_specs.SEARCH_WORDS`` for its text options,
or exactly a spec the operator offers (``--agent``). It never names a file or code: any other ``ppo:...`` (with or
without a slash or a dot), or a file in a search's options, is refused from its text alone, with one message whether
or not such a file exists, before anything is opened. No budget past the limits above, and no rule, seat or action
the server does not check. The operator's ``--agent`` specs are trusted: offered specs may name files and code and
take any budget (no ``ms`` cap), but they keep the agents' clock.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the serve extra: imported where the server starts
    import uvicorn

__all__ = ["run", "STOP_SECONDS"]

STOP_SECONDS = 3.0
"""After Ctrl-C (or SIGTERM), the server stops within this many seconds whatever its threads are doing: requests in
flight have until then to finish, and whatever still runs then (an agent thinking, a replay) is abandoned."""


def run(
    host: str = "127.0.0.1",
    port: int = 8000,
    max_tables: int | None = None,
    idle_minutes: float | None = None,
    offered: Sequence[str] = (),
    seed: int | None = None,
    per_client: int | None = None,
    move_seconds: float | None = None,
) -> None:
    """Serve until interrupted (Ctrl-C: ``KeyboardInterrupt``, within ``STOP_SECONDS``); ``ValueError`` for a port
    outside 1..65535, a bad limit or a bad offered spec; ``move_seconds``: the agents' clock (``tables.MOVE_SECONDS``
    by default)."""
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"port: expected an integer in 1..65535, got {port!r}")
    from train.serve import app, tables
    from train.web import agent_specs, connections, http_input

    checked = []
    for spec in offered:
        try:
            checked.append(agent_specs.check_offered(spec))
        except ValueError as err:
            raise ValueError(f"--agent {spec}: {err}") from None
    state = tables.Tables(
        max_tables=max_tables or tables.MAX_TABLES,
        idle_seconds=tables.IDLE_SECONDS if idle_minutes is None else idle_minutes * 60,
        seed=seed,
        offered=checked,
        per_client=per_client or tables.MAX_TABLES_PER_CLIENT,
        move_seconds=tables.MOVE_SECONDS if move_seconds is None else move_seconds,
    )
    warm_up()
    hosts = http_input.allowed_hosts(host)
    if hosts == ["*"]:
        print(f"bourre serve: listening on {host}: any machine that can reach it can open tables", flush=True)
    print(f"Bourré table: http://{'[' + host + ']' if ':' in host else host}:{port}/  (Ctrl-C to stop)", flush=True)
    # slow or many clients cannot exhaust it (train.web.connections)
    config = connections.config(app.create_app(state, allowed_hosts=hosts), host=host, port=port, log_level="warning")
    _server(config).run()


def _server(config: uvicorn.Config) -> uvicorn.Server:
    """A uvicorn server that stops within ``STOP_SECONDS`` of the first Ctrl-C or SIGTERM, and at once on a second.

    uvicorn waits for the requests in flight, the event loop for the threads they wait on, and the interpreter, at
    exit, for every thread that is not a daemon (the event loop's workers are not): a table whose agent never
    returns would keep the process alive for ever. A daemon timer started by the first signal ends the process,
    with the status a shell gives a command killed by that signal (130 for Ctrl-C), if it is still there."""
    from train.web import connections

    class Server(connections.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if self.should_exit:  # the second signal: at once
                _stop_now(sig, "a second signal")
            super().handle_exit(sig, frame)
            timer = threading.Timer(STOP_SECONDS, _stop_now, (sig, f"{STOP_SECONDS:g} s after the signal"))
            timer.daemon = True
            timer.start()

    return Server(config)


def _stop_now(sig: int, when: str) -> None:
    print(
        f"\nbourre serve: stopped {when}, without waiting for the work still running (agents' moves, replays)",
        file=sys.stderr,
        flush=True,
    )
    os._exit(128 + sig)


def warm_up() -> None:
    """Deal a table and let its agents act, so that the compiled rules are loaded before the first person arrives."""
    import numpy as np

    from bourre_env.core.rules import Rules
    from train.serve.tables import Table

    # no clock here: compiling (the first run after an install) may take minutes, and nobody is waiting yet
    Table(
        Rules(num_players=3), "standard", 0, ["human", "heuristic", "ppo"], np.random.default_rng(0), move_seconds=None
    )
