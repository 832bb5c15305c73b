"""The arena's leaderboard, served by ``bourre arena serve``: pages for people, the same as JSON.

================================================== ==============================================================
``GET /leaderboard``                               the bots ranked: rating with interval, OpenSkill, matches,
                                                   deals, timeouts and fallbacks (HTML)
``GET /api/leaderboard``                           the same, ``train.arena.ratings.Standings.to_dict()`` (JSON)
``GET /bots/{name}``                               a bot's cells and its matches, each linking its hand histories
``GET /api/leaderboard/{name}``                    the same (JSON): its standing and its matches
``GET /api/matches/{id}/histories``                a settled match's hand histories, every game and the all-field
                                                   tables of a reference match (JSON)
``GET /api/matches/{id}/games/{deal}/{rotation}``  one game's hand history (``docs/hand_history.md``): the file
                                                   ``bourre serve``'s replay view opens
================================================== ==============================================================

No token is asked: the pages show only what is settled. A running match's games are not served (its deals are
played again in its next rotations). A bot's name is untrusted input: every name is escaped in the HTML and quoted in
the links, and a path's name must match ``protocol.NAME_PATTERN``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import html
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from train.arena.protocol import NAME_PATTERN
from train.arena.ratings import BotStanding, Standings
from train.arena.records import Book, bot_matches, game_history, match_histories
from train.arena.storage import Store

__all__ = ["bot_page", "leaderboard_page", "routes"]

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
        ]
        for b in standings.bots
    ]
    body = [
        f"<p>Ladder rating: the mean replacement advantage, in antes per deal, over {cells} cells (reference agents "
        f"{_e(', '.join(standings.fields))} at {_e(', '.join(map(str, standings.players)))} players), with its 95% "
        f"interval; OpenSkill: mu ± sigma over every deal of {standings.matches} matches. "
        '<a href="/api/leaderboard">JSON</a></p>',
        _table(
            ["rank", "bot", "ladder rating [95% CI]", "OpenSkill", "matches", "deals", "timeouts", "fallbacks"], rows
        ),  # fmt: skip
    ]
    if standings.references:
        body.append("<h2>Reference agents (OpenSkill)</h2>")
        body.append(
            _table(
                ["agent", "OpenSkill", "deals"],
                [[_e(r.spec), _e(f"{r.mu:.2f} ± {r.sigma:.2f}"), str(r.deals)] for r in standings.references],
                left=(0,),
            )
        )
    return _page("Arena leaderboard", body)


def bot_page(name: str, standing: BotStanding | None, played: Sequence[dict[str, Any]]) -> str:
    """A bot's page: its standing, its cells, its matches with links to their hand histories."""
    body = ['<p><a href="/leaderboard">leaderboard</a></p>']
    if standing is not None:
        body.append(
            f"<p>Rank {standing.rank}; ladder rating {_e(_ci(standing.rating, standing.rating_ci95))} over "
            f"{standing.cells_played} of {standing.cells_total} cells; OpenSkill {standing.mu:.2f} ± "
            f"{standing.sigma:.2f}; {standing.matches} matches, {standing.deals} deals, {standing.decisions} moves, "
            f"{standing.timeouts} timeouts, {standing.fallbacks} fallbacks, {standing.disconnects} disconnects.</p>"
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
            )  # fmt: skip
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
            for k in range(m["games"] // max(players, 1) + 1)
            for r in range(players)
            if k * players + r < m["games"]
        ]
        rows.append(
            [
                _e(time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(m["created"]))),
                f'<a href="/api/matches/{match}/histories">{_e(m["match"])}</a>',
                _e(m["status"]),
                ", ".join(_bot_link(s[4:]) if s.startswith("bot:") else _e(s) for s in m["seats"]),
                " ".join(games[:40]) + (" ..." if len(games) > 40 else ""),
            ]
        )
    body.append(_table(["created (UTC)", "match (all histories)", "status", "seats", "games (deal.rotation)"], rows,
                       left=(0, 1, 2, 3, 4)))  # fmt: skip
    return _page(f"Bot {name}", body)


def routes(book: Book, store: Store) -> list[Route]:
    """The leaderboard's routes, reading the ratings from ``book`` and the matches from ``store``."""

    async def board(_request: Request) -> Response:
        return HTMLResponse(leaderboard_page(await asyncio.to_thread(book.standings)))

    async def board_json(_request: Request) -> Response:
        return JSONResponse((await asyncio.to_thread(book.standings)).to_dict())

    async def bot(request: Request) -> Response:
        name = request.path_params["name"]
        if not NAME_PATTERN.fullmatch(name):
            return JSONResponse({"error": "no such bot"}, status_code=404)
        standings = await asyncio.to_thread(book.standings)
        played = await asyncio.to_thread(bot_matches, store, name)
        if request.url.path.startswith("/api/"):
            standing = standings.bot(name)
            found = None if standing is None else dataclasses.asdict(standing)
            return JSONResponse({"name": name, "standing": found, "matches": played})
        return HTMLResponse(bot_page(name, standings.bot(name), played))

    async def histories(request: Request) -> Response:
        found = await asyncio.to_thread(match_histories, store, request.path_params["match"][:64])
        if found is None:
            return JSONResponse({"error": "no such match, or it is still running"}, status_code=404)
        return JSONResponse(found)

    async def game(request: Request) -> Response:
        p = request.path_params
        found = await asyncio.to_thread(game_history, store, p["match"][:64], p["deal"], p["rotation"])
        if found is None:
            return JSONResponse({"error": "no such game, or its match is still running"}, status_code=404)
        return JSONResponse(found)

    return [
        Route("/leaderboard", board, methods=["GET"]),
        Route("/api/leaderboard", board_json, methods=["GET"]),
        Route("/bots/{name}", bot, methods=["GET"]),
        Route("/api/leaderboard/{name}", bot, methods=["GET"]),
        Route("/api/matches/{match}/histories", histories, methods=["GET"]),
        Route("/api/matches/{match}/games/{deal:int}/{rotation:int}", game, methods=["GET"]),
    ]
