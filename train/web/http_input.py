"""What the web servers (``bourre serve``, ``bourre arena``) accept from a request before reading it: an ``Origin`` of
their own host only, a JSON content type, a body within a cap and strict JSON. Each refusal is a ``TableError`` with
the status the client gets (400, 403, 413, 415), so a bad request is answered in one line, never with a traceback.
``Slots`` bounds the heavy requests (a replay, a page of hand histories) in all and per client address (503, 429).
``allowed_hosts``: the ``Host`` names a server answers (``HostCheck`` refuses the others)."""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request

from bourre_env.history import strict_json
from train.web.errors import TableError

_LENGTH = re.compile(r"[0-9]{1,12}")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
"""The ``Host`` names a server on the loopback answers: this machine's own."""


class HostCheck:
    """Starlette's ``TrustedHostMiddleware`` (a request for another ``Host`` is a 400), except that a WebSocket for
    another ``Host`` is refused at its handshake (a close before the accept: uvicorn answers 403). Starlette answers it
    with an HTTP response the WebSocket protocol cannot send, and uvicorn logged an error for each such request."""

    def __init__(self, app: Any, allowed_hosts: list[str]) -> None:
        self.app = app
        self.http = TrustedHostMiddleware(app, allowed_hosts=allowed_hosts)
        self.probe = TrustedHostMiddleware(self._admitted, allowed_hosts=allowed_hosts)

    @staticmethod
    async def _admitted(scope: Any, receive: Any, send: Any) -> None:
        scope[_HOST_ADMITTED] = True

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await self.http(scope, receive, send)
            return

        async def unsent(message: Any) -> None:  # the 400 that Starlette would answer
            return None

        await self.probe(scope, receive, unsent)
        if scope.pop(_HOST_ADMITTED, False):
            await self.app(scope, receive, send)
        else:
            await send({"type": "websocket.close", "code": 1008})


_HOST_ADMITTED = "bourre.host_admitted"


def allowed_hosts(host: str) -> list[str]:
    """The ``Host`` names a server listening on ``host`` answers. On a loopback address only this machine's names (a
    page elsewhere cannot rebind its name to the server); on another address the server is meant to be reached from
    the network, by any name (``["*"]``)."""
    return list(LOOPBACK_HOSTS) if host in ("127.0.0.1", "localhost", "::1") else ["*"]


def foreign_origin(headers: Mapping[str, str]) -> str | None:
    """Why a request whose ``Origin`` is another site is refused (a page elsewhere reaching the server through its
    visitor's browser), or None: no ``Origin`` (a program, not a page) or this server's own."""
    origin = headers.get("origin")
    if origin is None:
        return None
    parts = urlsplit(origin)
    own = headers.get("host", "").lower()
    if parts.scheme not in ("http", "https") or parts.netloc.lower() != own:
        return f"Origin {origin[:100]!r} is not this server ({own[:100]}): requests from other sites' pages are refused"
    return None


def check_json_type(headers: Mapping[str, str]) -> None:
    """415 unless the body is declared JSON: a page elsewhere can send a form or text/plain without asking, not JSON."""
    kind = headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind != "application/json":
        raise TableError(415, f"Content-Type: expected application/json, got {kind[:100] or 'none'!r}")


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) past ``limit`` bytes, whether or not the client announced its length."""
    declared = request.headers.get("content-length")
    if declared is not None and (not _LENGTH.fullmatch(declared) or int(declared) > limit):
        raise TableError(413, f"request body too large: at most {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise TableError(413, f"request body too large: at most {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json(request: Request, limit: int, *, empty: Any = None) -> Any:
    """The body as strict JSON (a key given twice is refused, not silently the last), at most ``limit`` bytes; an
    empty body is ``empty`` where that is given, else refused like any body that is not JSON (400)."""
    data = await read_body(request, limit)
    if empty is not None and not data.strip():
        return empty
    try:
        return strict_json(data)
    except RecursionError:
        raise TableError(400, "malformed JSON body: nested too deep") from None
    except ValueError as err:  # not JSON, not UTF-8, or an integer past Python's digit limit
        raise TableError(400, f"malformed JSON body: {err}") from None


class Slots:
    """Counts of heavy requests in flight (``what``: "replays being worked out"), in all and per client address, taken
    without waiting: a request past a limit is refused at once (429 past the client's, 503 past the server's), so that
    queued work can neither pile up nor hold the event loop. Given back from any thread."""

    def __init__(self, total: int, per_client: int, what: str) -> None:
        self.total, self.per_client, self.what = total, per_client, what
        self._held: Counter[str | None] = Counter()
        self._lock = threading.Lock()

    def take(self, client: str | None) -> None:
        with self._lock:
            if self._held[client] >= self.per_client:
                raise TableError(
                    429, f"you have {self.per_client} {self.what}, the limit for one client; wait for them"
                )
            if sum(self._held.values()) >= self.total:
                raise TableError(503, f"the server has {self.total} {self.what}, its limit; try again in a few seconds")
            self._held[client] += 1

    def give_back(self, client: str | None) -> None:
        with self._lock:
            self._held[client] -= 1
            if self._held[client] <= 0:
                del self._held[client]
