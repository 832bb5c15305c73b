"""The operator's routes of ``bourre arena serve`` (``train.arena.server``): ``POST /api/matches``, a match asked
for and answered with its report once it is over, and ``GET /api/bots``, the bots connected now.

Each asks for an operator token (``Authorization: Bearer TOKEN``), looked up by its hash, and refuses a request with
an ``Origin`` of another host. An endpoint reads the server's ``Arena`` from ``request.app.state.arena``
(``server.create_app``), so that this module needs nothing of the server's.
"""

from __future__ import annotations

import asyncio
import logging

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from train.arena.match import MatchSpec
from train.web import http_input
from train.web.errors import TableError

__all__ = ["MAX_REQUEST", "MAX_WAIT", "bots", "check_operator", "matches"]

log = logging.getLogger("bourre.arena")

MAX_REQUEST = 16 * 1024
"""Bytes of a match request."""
MAX_WAIT = 600.0
"""Seconds a match request may wait (its ``wait``) for its bots to end the matches they are playing."""


async def check_operator(request: Request) -> None:
    """``TableError`` 403 for another site's page, 401 without an operator's token."""
    refused = http_input.foreign_origin(request.headers)
    if refused is not None:
        raise TableError(403, refused)
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise TableError(
            401,
            "an operator token is required: Authorization: Bearer TOKEN (bourre arena match "
            "--token-file FILE; bourre arena add-operator NAME makes one)",
        )
    store = request.app.state.arena.store
    if len(token) > 128 or await asyncio.to_thread(store.operator_of, token) is None:
        raise TableError(401, "unknown operator token")


async def matches(request: Request) -> Response:
    """``POST /api/matches``: a match, answered with its report once it is over."""
    arena = request.app.state.arena  # train.arena.server.Arena, untyped here: the server imports this module
    try:
        await check_operator(request)
        http_input.check_json_type(request.headers)
        body = await http_input.read_json(request, MAX_REQUEST)
        wait = body.pop("wait", 0) if isinstance(body, dict) else 0  # the request's, not the match's
        if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait <= MAX_WAIT:
            raise TableError(400, f"wait: expected seconds in 0..{MAX_WAIT:g}, got {wait!r:.40}")
        try:
            spec = MatchSpec.from_request(body)
        except ValueError as err:
            raise TableError(400, str(err)) from None
        for seat in spec.seats:
            if not seat.startswith("bot:"):
                arena.check_agent(seat)
        for what, agent in (("fallback", spec.fallback), ("par", spec.par_agent)):
            try:
                if agent is not None:
                    arena.check_agent(agent)
            except TableError as err:
                raise TableError(err.status, f"{what}: {err.message}") from None
        async with arena.bots_held([seat[4:] for seat in spec.seats if seat.startswith("bot:")], wait):
            return JSONResponse(await arena.play(spec))
    except asyncio.CancelledError:  # the server stopped before the match did: it is interrupted, no traceback
        log.warning("a match was interrupted: the server stopped")
        return JSONResponse({"error": "the server stopped: the match is interrupted"}, status_code=503)
    except TableError as err:
        return _refusal(err)
    except Exception:
        log.exception("match request failed")
        return JSONResponse({"error": "internal error"}, status_code=500)


async def bots(request: Request) -> Response:
    """``GET /api/bots``: the bots connected now."""
    try:
        await check_operator(request)
    except TableError as err:
        return _refusal(err)
    return JSONResponse({"bots": request.app.state.arena.registry.connected()})


def _refusal(err: TableError) -> Response:
    headers = {"WWW-Authenticate": "Bearer"} if err.status == 401 else None
    return JSONResponse({"error": err.message}, status_code=err.status, headers=headers)
