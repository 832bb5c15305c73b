"""``bourre serve``: play Bourré in the browser against the agents, and watch hand histories again.

``bourre serve`` (``pip install -e ".[serve]"``) starts a web server on ``http://127.0.0.1:8000``;
the page there needs no build step (``train/serve/static``: one HTML page, a script, a style sheet).
Choose a preset, a table size, your seat and the agent in every other seat (any ``agents.make`` spec),
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

Limits and checks (each refusal a 4xx JSON error naming what is wrong; a failure of the server itself is a 500
``{"error": "internal error"}``, its traceback only in the server's log):

* Tables: at most ``tables.MAX_TABLES`` (32) live tables in all (``--max-tables``) and
  ``tables.MAX_TABLES_PER_CLIENT`` (8) for one client IP address (429 past either; behind a proxy every client
  has the proxy's address), each closed after ``tables.IDLE_SECONDS`` (30 minutes) without a request
  (``--idle-minutes``: finite and positive).
* Bodies: requests of at most ``app.MAX_BODY`` (16 KiB) bytes, history uploads of ``app.MAX_UPLOAD`` (1 MiB)
  bytes and ``tables.MAX_REPLAY_DEALS`` (20) deals (413 past them); JSON nested too deep or with an integer past
  Python's digit limit is a 400 (a 422 in an upload).
* Agents' budgets: a search agent chosen on the page is held to ``agents.search.pimc.LIMITS`` (at most 256 worlds,
  ``infer`` 32, ``draws`` 8, ``ms`` 1000) and ``agents.search.ismcts.LIMITS`` (1024 iterations, ``batch`` 64,
  ``infer`` 32, ``draws`` 8, ``ms`` 1000) by ``agents.check_budget`` (400 past them, naming the option and its
  maximum), and each of its moves is capped at ``tables.MOVE_MS`` (1 s: its ``ms`` option).
* Threads: a table's work (its agents' moves) runs off the event loop in at most ``app.TABLE_THREADS`` (16)
  threads, one request per table at a time; a request to a table already busy is refused at once (409), so
  one slow table holds up neither the other tables nor ``GET /api/options``.
* Senders: every ``POST`` must be ``Content-Type: application/json`` (415 otherwise: a page elsewhere can post
  a form or text without the browser asking the server first, but not JSON), and a request that changes
  something with an ``Origin`` header naming another host than the request's ``Host`` is refused (403).
  On 127.0.0.1 (the default) only requests naming this machine (``Host`` 127.0.0.1 or localhost) are answered.

What it trusts: nothing from the page. The page names no file (a ``ppo:PATH`` agent only when the server offers
it), no budget past the limits above, and no rule, seat or action the server does not check. The operator's
``--agent`` specs are trusted: offered specs may name files and take any budget, and their moves are not capped.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["run"]


def run(
    host: str = "127.0.0.1",
    port: int = 8000,
    max_tables: int | None = None,
    idle_minutes: float | None = None,
    offered: Sequence[str] = (),
    seed: int | None = None,
    per_client: int | None = None,
) -> None:
    """Serve until interrupted (Ctrl-C); ``ValueError`` for a port outside 1..65535 or a bad limit."""
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"port: expected an integer in 1..65535, got {port!r}")
    import uvicorn

    from train.serve import app, tables

    try:
        checked = [tables.check_agent(spec, offered) for spec in offered]
    except tables.TableError as err:
        raise ValueError(f"--agent: {err.message}") from None
    state = tables.Tables(
        max_tables=max_tables or tables.MAX_TABLES,
        idle_seconds=tables.IDLE_SECONDS if idle_minutes is None else idle_minutes * 60,
        seed=seed,
        offered=checked,
        per_client=per_client or tables.MAX_TABLES_PER_CLIENT,
    )
    warm_up()
    # On a loopback address only this machine's names are answered (a page elsewhere cannot rebind its name to the
    # server); on another address the server is meant to be reached from the network, by any name.
    hosts = list(app.LOOPBACK_HOSTS) if host in ("127.0.0.1", "localhost", "::1") else ["*"]
    if hosts == ["*"]:
        print(f"bourre serve: listening on {host}: any machine that can reach it can open tables", flush=True)
    print(f"Bourré table: http://{'[' + host + ']' if ':' in host else host}:{port}/  (Ctrl-C to stop)", flush=True)
    uvicorn.run(app.create_app(state, allowed_hosts=hosts), host=host, port=port, log_level="warning")


def warm_up() -> None:
    """Deal a table and let its agents act, so that the compiled rules are loaded before the first person arrives."""
    import numpy as np

    from bourre_env.core.rules import Rules
    from train.serve.tables import Table

    Table(Rules(num_players=3), "standard", 0, ["human", "heuristic", "ppo"], np.random.default_rng(0))
