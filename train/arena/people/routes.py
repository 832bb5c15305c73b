"""The people's HTTP routes: ``GET /play`` (the page) and its static files, ``GET /api/people/options``,
``POST /api/people/seats``, ``GET /people`` and ``GET /api/people`` (the people's results). The page is drawn with the
browser table's script and style (``train/serve/static``, served at ``/static``) and its own (``/arena-static``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from sqlalchemy.exc import DBAPIError
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from train.arena.leaderboard import Outage
from train.arena.people import bounds
from train.arena.people.admission import People
from train.arena.people.handles import _agent_name, _handles
from train.arena.people.pages import people_page
from train.arena.people.storage import people_matches
from train.web import http_input
from train.web.errors import TableError

__all__ = ["STATIC", "TABLE_STATIC", "options", "routes"]

STATIC = Path(__file__).resolve().parent.parent / "static"
"""The people's page and its script (``train/arena/static``)."""
TABLE_STATIC = Path(__file__).resolve().parent.parent.parent / "serve" / "static"
"""The browser table's script and style, which draw the people's table too (a path, not an import)."""


def options(people: People) -> dict[str, Any]:
    """What the page needs (the package docstring); ``TableError`` 403 without ``--people``."""
    people.check_enabled()
    arena = people.arena
    handles = _handles(arena.offered)
    bots = [] if arena.ladder is not None else [f"bot:{n}" for n in arena.registry.connected()]  # the ladder's
    return {
        "enabled": True,
        "bots": bots,
        "agents": list(dict.fromkeys([*bounds.AGENTS, *handles])),
        "offered": {handle: _agent_name(spec) for handle, spec in handles.items()},
        "max_deals": bounds.MAX_DEALS,
        "max_games": bounds.MAX_GAMES,
        "clock": bounds.CLOCK,
        "idle_moves": bounds.IDLE_MOVES,
        "match_seconds": bounds.MATCH_SECONDS,
    }


def routes(people: People) -> list[BaseRoute]:
    """The routes of the module docstring, answering for ``people``; a refusal is a JSON ``{"error": message}``."""

    outage = Outage(people.arena.store, "the people's routes")

    def out_of_reach(err: DBAPIError) -> Response:
        return outage.refused(err)

    async def page(_request: Request) -> Response:
        return FileResponse(STATIC / "people.html", media_type="text/html")

    async def show_options(_request: Request) -> Response:
        try:
            return JSONResponse(options(people))
        except TableError as err:
            return JSONResponse({"error": err.message}, status_code=err.status)
        except DBAPIError as err:
            return out_of_reach(err)

    async def seats(request: Request) -> Response:
        try:
            refused = http_input.foreign_origin(request.headers)
            if refused is not None:
                raise TableError(403, refused)
            http_input.check_json_type(request.headers)
            address = request.client.host if request.client is not None else None
            answer = JSONResponse(await people.admit(await http_input.read_json(request, bounds.MAX_BODY), address))
        except TableError as err:
            return JSONResponse({"error": err.message}, status_code=err.status)
        except DBAPIError as err:
            return out_of_reach(err)
        outage.answered()
        return answer

    async def results(request: Request) -> Response:
        arena = people.arena
        try:
            found = await asyncio.to_thread(people_matches, arena.store, 200, arena.offered)
        except DBAPIError as err:
            return out_of_reach(err)
        outage.answered()
        if request.url.path.startswith("/api/"):
            return JSONResponse({"matches": found})
        return HTMLResponse(people_page(found, {s.match for s in people.seats.values() if s.match is not None}))

    return [
        Route("/play", page, methods=["GET"]),
        Route("/api/people/options", show_options, methods=["GET"]),
        Route("/api/people/seats", seats, methods=["POST"]),
        Route("/people", results, methods=["GET"]),
        Route("/api/people", results, methods=["GET"]),
        Mount("/static", app=StaticFiles(directory=TABLE_STATIC), name="table-static"),
        Mount("/arena-static", app=StaticFiles(directory=STATIC), name="people-static"),
    ]
