"""The arena's leaderboard, served by ``bourre arena serve``: pages for people, the same as JSON.

================================================== ==============================================================
``GET /leaderboard``                               the bots ranked: rating with interval, OpenSkill, matches,
                                                   deals, timeouts and fallbacks (HTML)
``GET /api/leaderboard``                           the same, ``train.arena.ratings.Standings.to_dict()`` (JSON)
``GET /bots/{name}``                               a bot's cells and its matches, each linking its hand histories
``GET /api/leaderboard/{name}``                    the same (JSON): its standing and its matches
``GET /api/matches/{id}/histories``                a settled match's hand histories, every game and the all-field
                                                   tables of a reference match (JSON); ``?offset=&limit=``: a page
                                                   of at most 500 games (``train.arena.histories``)
``GET /api/matches/{id}/games/{deal}/{rotation}``  one game's hand history (``docs/hand_history.md``): the file
                                                   ``bourre serve``'s replay view opens
================================================== ==============================================================

No token is asked: the pages show only what is settled. A running match's games are not served (its deals are
played again in its next rotations). A bot's name is untrusted input: every name is escaped in the HTML and quoted in
the links, and a path's name must match ``protocol.NAME_PATTERN``, a match id ``histories.MATCH_ID`` and a deal or
a rotation nine digits at most (else 404).

Every page is read, rendered and encoded in a thread, never on the event loop that runs the tables and the bots: what
it costs grows with what is stored. The pages have threads of their own (``PAGE_THREADS``), apart from the default
pool in which the tables' built-in agents think and the pacer sleeps, and at most ``MAX_PAGES`` are built or waiting
at once, ``MAX_PAGES_PER_CLIENT`` for one client address (503 and 429 past them): a client asking for pages as fast as
it could held back every table's built-in moves while the pages shared that pool.

A database that fails (PostgreSQL out of reach for more than ``PAGE_WAIT_SECONDS``, tried again meanwhile) makes a
page answer 503 with one line, logged once until a page answers again; a page never answers with a traceback.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import html
import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from train.arena.games import public_label
from train.arena.histories import MATCH_ID, MAX_HEAVY, MAX_HEAVY_PER_CLIENT, page, page_bounds
from train.arena.protocol import NAME_PATTERN
from train.arena.ratings import BotStanding, Standings
from train.arena.records import Book, bot_matches, game_history
from train.arena.storage import Store
from train.web import http_input
from train.web.errors import TableError

__all__ = [
    "MAX_PAGES",
    "MAX_PAGES_PER_CLIENT",
    "PAGE_THREADS",
    "PAGE_WAIT_SECONDS",
    "bot_page",
    "leaderboard_page",
    "routes",
]

log = logging.getLogger("bourre.arena")

PAGE_WAIT_SECONDS = 3.0
"""How long a page waits for a database server out of reach (PostgreSQL: tried again every ``RETRY_SECONDS``) before
it answers 503; the ladder and the matches wait longer (``storage.RECONNECT_SECONDS``)."""
_NUMBER = re.compile(r"[0-9]{1,9}")
PAGE_THREADS = 2
"""Threads that build the pages, shared by every server of the process."""
MAX_PAGES = 16
"""Pages built or waiting for a page thread at once, in all (503 past it)."""
MAX_PAGES_PER_CLIENT = 4
"""Pages built or waiting at once for one client address (429 past it)."""
# an executor starts its threads at its first pages, not here
_page_threads = concurrent.futures.ThreadPoolExecutor(PAGE_THREADS, thread_name_prefix="arena-pages")


_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
    "td,th{padding:.3em .7em;border-bottom:1px solid #ddd;text-align:right}td.l,th.l{text-align:left}"
)


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _ci(value: float | None, ci: Sequence[float] | None) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" + ("" if ci is None else f" [{ci[0]:+.3f}, {ci[1]:+.3f}]")


def _page(title: str, body: list[str]) -> str:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        f"<style>{_STYLE}</style></head><body><h1>{_e(title)}</h1>" + "".join(body) + "</body></html>"
    )


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], left: Sequence[int] = (1,)) -> str:
    """Cells are HTML already (escaped by the caller)."""

    def cell(tag: str, c: int, text: str) -> str:
        return f'<{tag} class="l">{text}</{tag}>' if c in left else f"<{tag}>{text}</{tag}>"

    lines = ["<table><tr>" + "".join(cell("th", c, _e(h)) for c, h in enumerate(head)) + "</tr>"]
    lines += ["<tr>" + "".join(cell("td", c, text) for c, text in enumerate(row)) + "</tr>" for row in rows]
    return "".join(lines) + "</table>"


def _bot_link(name: str) -> str:
    return f'<a href="/bots/{quote(name, safe="")}">{_e(name)}</a>'


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(seconds)) if seconds > 0 else "-"


REFERENCE_SCALE = (
    "<p>Not on the bots' scale: the copies of a reference agent at one table are one participant, ranked by their "
    "mean chips, and a mean of several seats is seldom last, so a reference agent rates above a bot that plays as "
    "it does (a bot that is the heuristic sits some points below the heuristic here). Compare reference agents with "
    "each other and bots with each other; the ladder rating above is what compares a bot with a reference agent.</p>"
)
"""What the page says of the reference agents' OpenSkill (docs/arena.md, "Ratings")."""


def leaderboard_page(standings: Standings) -> str:
    """The leaderboard as HTML; every name escaped."""
    cells = len(standings.fields) * len(standings.players)
    rows = [
        [
            str(b.rank),
            _bot_link(b.name),
            _e(_ci(b.rating, b.rating_ci95)) + ("" if b.complete else f" ({b.cells_played} of {b.cells_total} cells)"),
            _e(f"{b.mu:.2f} ± {b.sigma:.2f}"),
            str(b.matches),
            str(b.deals),
            str(b.timeouts),
            str(b.fallbacks),
            _when(b.last_match),
        ]
        for b in standings.bots
    ]
    body = [
        f"<p>Ladder rating: the mean replacement advantage, in antes per deal, over {cells} cells (reference agents "
        f"{_e(', '.join(standings.fields))} at {_e(', '.join(map(str, standings.players)))} players), with its 95% "
        f"interval (ranked on its low end); OpenSkill: mu ± sigma over every deal of {standings.matches} matches; "
        "a bot's last match started when the last column says (UTC). "
        '<a href="/api/leaderboard">JSON</a></p>',
        _table(
            [
                "rank",
                "bot",
                "ladder rating [95% CI]",
                "OpenSkill",
                "matches",
                "deals",
                "timeouts",
                "fallbacks",
                "last match",
            ],
            rows,
        ),
    ]
    if standings.references:
        body.append("<h2>Reference agents (OpenSkill)</h2>")
        body.append(REFERENCE_SCALE)
        body.append(
            _table(
                ["agent", "OpenSkill", "deals"],
                [[_e(r.spec), _e(f"{r.mu:.2f} ± {r.sigma:.2f}"), str(r.deals)] for r in standings.references],
                left=(0,),
            )
        )
    return _page("Arena leaderboard", body)


FORMAT_NAMES = {"single": "deals", "rotations": "rotations", "session": "session (pot carried)"}
"""How the bot page names a match's format (``train.arena.match.FORMATS``)."""


def _games_of(form: str, games: int, players: int) -> list[tuple[int, int]]:
    """The (deal, rotation) of a match's first ``games`` stored games, in order: one a deal in the single format
    (rotation ``deal % N``) and in a session (rotation 0), every rotation of each deal in the rotations format."""
    if form == "session":
        return [(k, 0) for k in range(games)]
    if form == "single":
        return [(k, k % max(players, 1)) for k in range(games)]
    return [(g // players, g % players) for g in range(games)] if players else []


def public(standings: Standings) -> Standings:
    """The standings as the public pages show them: a reference agent named as ``match_start`` names it
    (``train.arena.games.public_label``), never by an operator's whole spec (a server address, a file's path)."""
    references = [dataclasses.replace(r, spec=public_label(r.spec)) for r in standings.references]
    return dataclasses.replace(standings, references=references)


def bot_page(name: str, standing: BotStanding | None, played: Sequence[dict[str, Any]]) -> str:
    """A bot's page: its standing, its cells, its matches with links to their hand histories."""
    body = ['<p><a href="/leaderboard">leaderboard</a></p>']
    if standing is not None:
        body.append(
            f"<p>Rank {standing.rank}; ladder rating {_e(_ci(standing.rating, standing.rating_ci95))} over "
            f"{standing.cells_played} of {standing.cells_total} cells; OpenSkill {standing.mu:.2f} ± "
            f"{standing.sigma:.2f}; {standing.matches} matches, {standing.deals} deals, {standing.decisions} moves, "
            f"{standing.timeouts} timeouts, {standing.fallbacks} fallbacks, {standing.disconnects} disconnects; "
            f"its last match started {_when(standing.last_match)} UTC.</p>"
        )
        body.append(
            _table(
                ["field", "players", "matches", "deals", "table advantage [95% CI]", "replacement advantage [95% CI]"],
                [
                    [
                        _e(c.field),
                        str(c.players),
                        str(c.matches),
                        str(c.deals),
                        _e(_ci(c.advantage, c.advantage_ci95)),
                        _e(_ci(c.replacement_advantage, c.replacement_advantage_ci95)),
                    ]
                    for c in standing.cells
                ],
                left=(0,),
            )
        )
    body.append(
        "<h2>Matches</h2><p>Each game's hand history opens in the replay view of <code>bourre serve</code> (the "
        "table page's replay: choose the downloaded file).</p>"
    )
    rows = []
    for m in played:
        match = quote(str(m["match"]), safe="")
        players = len(m["seats"])
        games = [
            f'<a href="/api/matches/{match}/games/{k}/{r}" download="{match}_deal{k}_rotation{r}.json">{k}.{r}</a>'
            for k, r in _games_of(m.get("format", "rotations"), m["games"], players)
        ]
        rows.append(
            [
                _e(time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(m["created"]))),
                f'<a href="/api/matches/{match}/histories">{_e(m["match"])}</a>',
                _e(m["status"]),
                _e(FORMAT_NAMES.get(m.get("format", "rotations"), str(m.get("format")))),
                ", ".join(_bot_link(s[4:]) if s.startswith("bot:") else _e(s) for s in m["seats"]),
                " ".join(games[:40]) + (" ..." if len(games) > 40 else ""),
            ]
        )
    header = ["created (UTC)", "match (all histories)", "status", "format", "seats", "games (deal.rotation)"]
    body.append(_table(header, rows, left=(0, 1, 2, 3, 4, 5)))
    return _page(f"Bot {name}", body)


def routes(book: Book, store: Store) -> list[Route]:
    """The leaderboard's routes, reading the ratings from ``book`` and the matches from ``store``."""
    heavy = http_input.Slots(MAX_HEAVY, MAX_HEAVY_PER_CLIENT, "pages of hand histories being built")
    pages = http_input.Slots(MAX_PAGES, MAX_PAGES_PER_CLIENT, "pages being built")
    outage = Outage(store)

    async def answer(request: Request, work: Callable[[], Response]) -> Response:
        """``work()`` in a page thread (reading and rendering grow with what is stored: none of it on the event loop
        that runs the tables, nor in the pool where their agents think); a refusal in one line, a database out of
        reach 503."""
        client = request.client.host if request.client is not None else None
        try:
            pages.take(client)
        except TableError as err:
            return _json_error(err.status, err.message)
        try:
            response = await asyncio.get_running_loop().run_in_executor(_page_threads, work)
        except TableError as err:
            return _json_error(err.status, err.message)
        except sa.exc.DBAPIError as err:
            return outage.refused(err)
        except Exception:
            log.exception("%s %s failed", request.method, request.url.path[:200])
            return _json_error(500, "internal error")
        finally:
            pages.give_back(client)
        outage.answered()
        return response

    def standings() -> Standings:
        return public(store.read(book.standings, PAGE_WAIT_SECONDS))

    async def board(request: Request) -> Response:
        return await answer(request, lambda: HTMLResponse(leaderboard_page(standings())))

    async def board_json(request: Request) -> Response:
        return await answer(request, lambda: _json(standings().to_dict()))

    async def bot(request: Request) -> Response:
        name = request.path_params["name"]
        if not NAME_PATTERN.fullmatch(name):
            return _json_error(404, "no such bot")

        def work() -> Response:
            found = standings()
            played = store.read(lambda: bot_matches(store, name), PAGE_WAIT_SECONDS)
            if request.url.path.startswith("/api/"):
                standing = found.bot(name)
                return _json(
                    {
                        "name": name,
                        "standing": None if standing is None else dataclasses.asdict(standing),
                        "matches": played,
                    }
                )
            return HTMLResponse(bot_page(name, found.bot(name), played))

        return await answer(request, work)

    async def histories(request: Request) -> Response:
        match = request.path_params["match"]
        if not MATCH_ID.fullmatch(match):
            return _json_error(404, "no such match, or it is still running")
        try:
            offset, limit = page_bounds(request.query_params)
        except TableError as err:
            return _json_error(err.status, err.message)
        client = request.client.host if request.client is not None else None

        def work() -> Response:
            body = page(store, match, offset, limit, PAGE_WAIT_SECONDS)
            if body is None:
                raise TableError(404, "no such match, or it is still running")
            return Response(body, media_type="application/json")

        try:
            heavy.take(client)
        except TableError as err:
            return _json_error(err.status, err.message)
        try:
            return await answer(request, work)
        finally:
            heavy.give_back(client)

    async def game(request: Request) -> Response:
        p = request.path_params
        match, deal, rotation = p["match"], p["deal"], p["rotation"]
        # read here, not by an int convertor: a number past the database's integers made the query fail (500)
        if not (MATCH_ID.fullmatch(match) and _NUMBER.fullmatch(deal) and _NUMBER.fullmatch(rotation)):
            return _json_error(404, "no such game, or its match is still running")

        def work() -> Response:
            found = store.read(lambda: game_history(store, match, int(deal), int(rotation)), PAGE_WAIT_SECONDS)
            if found is None:
                raise TableError(404, "no such game, or its match is still running")
            return _json(found)

        return await answer(request, work)

    return [
        Route("/leaderboard", board, methods=["GET"]),
        Route("/api/leaderboard", board_json, methods=["GET"]),
        Route("/bots/{name}", bot, methods=["GET"]),
        Route("/api/leaderboard/{name}", bot, methods=["GET"]),
        Route("/api/matches/{match}/histories", histories, methods=["GET"]),
        Route("/api/matches/{match}/games/{deal}/{rotation}", game, methods=["GET"]),
    ]


def _json(content: Any) -> Response:
    """``content`` encoded as Starlette's ``JSONResponse`` would, by the calling thread (not on the event loop)."""
    body = json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode()
    return Response(body, media_type="application/json")


def _json_error(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)


class Outage:
    """A database out of reach answers each page 503 with one line, and is logged once (and once when it is back),
    however many pages are asked meanwhile. ``pages`` names them in the log. Called on the event loop only."""

    def __init__(self, store: Store, pages: str = "the leaderboard's pages") -> None:
        self.store = store
        self.pages = pages
        self.down = False

    def refused(self, err: sa.exc.DBAPIError) -> Response:
        reason = self.store.reason(err)
        if not self.down:
            self.down = True
            log.warning("%s answer 503: the database at %s fails (%s)", self.pages, self.store.masked_url, reason)
        return _json_error(503, f"the database is out of reach ({reason[:200]}); try again in a few seconds")

    def answered(self) -> None:
        if self.down:
            self.down = False
            log.warning("%s answer again: the database at %s is back", self.pages, self.store.masked_url)
