"""The HTTP side of ``bourre serve``: a Starlette app over ``train.serve.tables`` (routes in the package docstring)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread
from anyio import CapacityLimiter
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

import agents
from bourre_env import history
from bourre_env.core.rules import MAX_PLAYERS, MIN_PLAYERS, presets
from train.serve import replays
from train.serve import tables as tb
from train.web import agent_specs, http_input
from train.web.errors import TableError
from train.web.http_input import LOOPBACK_HOSTS

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 16 * 1024
"""Bytes a table request (new table, action) may carry."""
MAX_UPLOAD = 1024 * 1024
"""Bytes a history file sent to the replay view may have."""
TABLE_THREADS = 16
"""Threads that tables' work (agents' moves) may hold at once; the other requests have the rest of the pool, so
tables that think cannot hold up the options, the replays, or the event loop."""
MAX_REPLAYS = 4
"""Replays being worked out at once, in all (a replay of 20 deals takes about a second of one core); one more is
refused at once (503) rather than queued."""
MAX_REPLAYS_PER_CLIENT = 2
"""Replays that one client address may have worked out at once (429 past it)."""
MAX_REPLAY_BYTES = 4 * 1024 * 1024
"""Bytes the answer to a replay may have (413 past it): 20 deals at 8 players make about 1.2 to 1.7 MB."""

_LOG = logging.getLogger(__name__)
_DEAL = re.compile(r"[0-9]{1,9}")
_SEAT = re.compile(r"[0-9]{1,2}")  # ASCII digits only: str.isdigit would take "٣" for 3

_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
_PAGE_HEADERS = {
    **_HEADERS,
    # the page loads its own script and style only; nothing may frame it
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
}


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=_HEADERS)


def _ok(payload: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(payload, status_code=status, headers=_HEADERS)


def _replay_answer(data: bytes, seat: int | None, open_hands: bool) -> bytes:
    """The JSON answer to a replay, built whole here (off the event loop: encoding a large one takes a tenth of a
    second), as Starlette's ``JSONResponse`` would encode it; refused (413) past ``MAX_REPLAY_BYTES``."""
    frames = replays.replay_frames(data, seat, open_hands)
    body = json.dumps(frames, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode()
    if len(body) > MAX_REPLAY_BYTES:
        raise TableError(
            413,
            f"the replay of this history would be {len(body)} bytes, past the limit of {MAX_REPLAY_BYTES}: "
            f"replay fewer deals",
        )
    return body


def _check_sender(request: Request) -> None:
    """A request that changes something comes from the server's own page: refuse another origin (403), and a POST
    that is not JSON (415)."""
    refused = http_input.foreign_origin(request.headers)
    if refused is not None:
        raise TableError(403, refused)
    if request.method == "POST":
        http_input.check_json_type(request.headers)


def _handled(endpoint: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """Refusals become a 4xx JSON ``{"error": message}``; anything unexpected a 500 ``{"error": "internal error"}``,
    logged here with its traceback, which never reaches the client."""

    async def run(request: Request) -> Response:
        try:
            if request.method not in ("GET", "HEAD"):
                _check_sender(request)
            return await endpoint(request)
        except TableError as err:
            return _error(err.status, err.message)
        except Exception:
            _LOG.exception("bourre serve: %s %s failed", request.method, request.url.path)
            return _error(500, "internal error")

    return run


def _client(request: Request) -> str | None:
    return request.client.host if request.client is not None else None


def _tables(request: Request) -> tb.Tables:
    tables: tb.Tables = request.app.state.tables
    return tables


def _table(request: Request) -> tb.Table:
    return _tables(request).get(request.path_params["table"])


async def _locked(request: Request, table: tb.Table, work: Callable[[], Any]) -> Any:
    """``work`` under the table's lock, in one of the tables' threads: agents may be thinking under that lock. A
    table busy with another request is refused (409) at once rather than waited for, so that requests queued on one
    table cannot hold threads. A table whose agent failed is closed."""
    if not table.lock.acquire(blocking=False):
        raise TableError(409, "the table is busy with another request (its agents are thinking); try again")
    try:
        return await anyio.to_thread.run_sync(work, limiter=request.app.state.table_threads)
    except tb.AgentError:
        _tables(request).discard(table.id)
        raise
    finally:
        table.lock.release()


async def page(request: Request) -> Response:
    """``GET /``: the page."""
    return FileResponse(STATIC / "index.html", headers=_PAGE_HEADERS)


async def options(request: Request) -> Response:
    """``GET /api/options``: what a new table may be, and the server's limits."""
    tables = _tables(request)
    return _ok(
        {
            "presets": list(presets),
            "players": list(range(MIN_PLAYERS, MAX_PLAYERS + 1)),
            "agents": sorted(set(agent_specs.agent_options()) | set(tables.offered)),
            "default_agent": "heuristic",
            "limits": {
                "tables": tables.max_tables,
                "tables_per_client": tables.per_client,
                "idle_seconds": tables.idle_seconds,
                "replay_deals": tb.MAX_REPLAY_DEALS,
                "upload_bytes": MAX_UPLOAD,
                "body_bytes": MAX_BODY,
                "move_ms": tables.move_ms,
                "move_seconds": tables.move_seconds,
                "replays": MAX_REPLAYS,
                "replays_per_client": MAX_REPLAYS_PER_CLIENT,
                "replay_bytes": MAX_REPLAY_BYTES,
                "budgets": {"pimc": agents.search.pimc.LIMITS, "ismcts": agents.search.ismcts.LIMITS},
            },
        }
    )


async def create(request: Request) -> Response:
    """``POST /api/tables``: a new table (201, its view)."""
    body = await http_input.read_json(request, MAX_BODY, empty={})
    threads = request.app.state.table_threads
    # a new table plays its agents' first moves: in the tables' threads
    table = await anyio.to_thread.run_sync(_tables(request).create, body, _client(request), limiter=threads)
    return _ok(await _locked(request, table, table.view), status=201)


async def show(request: Request) -> Response:
    """``GET /api/tables/{table}``: the table as the person's seat sees it."""
    table = _table(request)
    return _ok(await _locked(request, table, table.view))


async def act(request: Request) -> Response:
    """``POST /api/tables/{table}/actions``: the person's action."""
    table = _table(request)
    body = await http_input.read_json(request, MAX_BODY, empty={})
    if not isinstance(body, dict) or "action" not in body or set(body) - {"action", "turn"}:
        raise TableError(400, 'expected a JSON object {"action": id, "turn": n} ("turn" optional)')

    def apply() -> dict[str, Any]:
        table.act(body["action"], body.get("turn"))
        return table.view()

    return _ok(await _locked(request, table, apply))


async def next_deal(request: Request) -> Response:
    """``POST /api/tables/{table}/deals``: the next deal."""
    table = _table(request)

    def deal() -> dict[str, Any]:
        table.next_deal()
        return table.view()

    return _ok(await _locked(request, table, deal))


async def close(request: Request) -> Response:
    """``DELETE /api/tables/{table}``: the table closed."""
    _tables(request).close(request.path_params["table"])
    return Response(status_code=204, headers=_HEADERS)


async def download(request: Request) -> Response:
    """``GET /api/tables/{table}/deals/{deal}/history``: a finished deal's hand history, as a download."""
    table = _table(request)
    deal_text = request.path_params["deal"]
    # read here, not by the route's int convertor, which a number of 5,000 digits makes raise
    if not _DEAL.fullmatch(deal_text):
        raise TableError(404, f"no deal {deal_text[:20]!r}: deals are numbered 1, 2, ...")
    deal = int(deal_text)
    saved = await _locked(request, table, lambda: history.dumps(table.history(deal)))  # encoded in the thread too
    name = f"bourre-deal-{deal}.json"
    return Response(
        saved,
        media_type="application/json",
        headers={**_HEADERS, "Content-Disposition": f'attachment; filename="{name}"'},
    )


async def replay(request: Request) -> Response:
    """``POST /api/replays``: every position of the hand history sent, to step through."""
    data = await http_input.read_body(request, MAX_UPLOAD)
    seat_text = request.query_params.get("seat", "")
    if seat_text and not _SEAT.fullmatch(seat_text):
        raise TableError(400, f"seat: expected a seat number, got {seat_text!r}")
    open_text = request.query_params.get("open", "0")
    if open_text not in ("0", "1"):
        raise TableError(400, f"open: expected 0 or 1, got {open_text!r}")
    client = _client(request)
    slots: http_input.Slots = request.app.state.replay_slots
    slots.take(client)  # after the upload is read: a slow upload holds no slot
    try:
        # parsing, replaying and encoding the answer, all in a thread: none of it on the event loop
        seat = int(seat_text) if seat_text else None
        threads = request.app.state.replay_threads
        body = await anyio.to_thread.run_sync(_replay_answer, data, seat, open_text == "1", limiter=threads)
    finally:
        slots.give_back(client)
    return Response(body, media_type="application/json", headers=_HEADERS)


async def _not_found(request: Request, exc: Exception) -> Response:
    return _error(404, f"no such page or API route: {request.method} {request.url.path}")


async def _not_allowed(request: Request, exc: Exception) -> Response:
    return _error(405, f"{request.method} is not allowed on {request.url.path}")


def create_app(tables: tb.Tables | None = None, allowed_hosts: Sequence[str] = LOOPBACK_HOSTS) -> Starlette:
    """The app; ``allowed_hosts``: the ``Host`` names it answers (a web page elsewhere cannot rebind a name to it).
    Its endpoints read the tables and the bounds on their threads from ``request.app.state``."""
    routes = [
        Route("/", _handled(page), methods=["GET"]),
        Route("/api/options", _handled(options), methods=["GET"]),
        Route("/api/tables", _handled(create), methods=["POST"]),
        Route("/api/tables/{table}", _handled(show), methods=["GET"]),
        Route("/api/tables/{table}", _handled(close), methods=["DELETE"]),
        Route("/api/tables/{table}/actions", _handled(act), methods=["POST"]),
        Route("/api/tables/{table}/deals", _handled(next_deal), methods=["POST"]),
        Route("/api/tables/{table}/deals/{deal}/history", _handled(download), methods=["GET"]),
        Route("/api/replays", _handled(replay), methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(http_input.HostCheck, allowed_hosts=list(allowed_hosts))],
        exception_handlers={404: _not_found, 405: _not_allowed},
    )
    app.state.tables = tables if tables is not None else tb.Tables()
    app.state.table_threads = CapacityLimiter(TABLE_THREADS)  # an app's own, as its tables are
    app.state.replay_threads = CapacityLimiter(MAX_REPLAYS)
    app.state.replay_slots = http_input.Slots(MAX_REPLAYS, MAX_REPLAYS_PER_CLIENT, "replays being worked out")
    return app
