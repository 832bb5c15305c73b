"""An arena server in a thread of this process, for the tests and the benchmarks: ``serve_in_thread`` starts it,
``ServerInThread.stop`` stops it and waits until it has.

Why the wait: when a bot's connection ends, the server lets go of its hold in the database
(``train.arena.holds.drop``) in the connection's handler, after the bot has gone. A caller that closed the store or
removed the data folder as soon as it had asked the server to exit raced those writes: SQLite then reports a disk
I/O error and recreates its journal in a folder being removed. ``stop`` returns once uvicorn's shutdown has waited
for every handler (within ``server.STOP_SECONDS``), so the store is the caller's alone after it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from train.arena.server import STOP_SECONDS, Arena, create_app, settle_heap, ws_options
from train.web import connections

__all__ = ["START_SECONDS", "ServerInThread", "serve_in_thread"]

START_SECONDS = 60.0
"""The longest ``serve_in_thread`` waits for the server to listen (a shared machine may be slow)."""


class ServerInThread(connections.Server):
    """A ``connections.Server`` run in a daemon thread of its own (``serve_in_thread``)."""

    thread: threading.Thread | None = None

    def stop(self, wait: float = STOP_SECONDS + 30.0) -> None:
        """Ask the server to exit, then wait up to ``wait`` seconds for its thread to end: its connections closed and
        their handlers finished. ``RuntimeError`` if it is still running then."""
        self.should_exit = True
        if self.thread is None:
            return
        self.thread.join(wait)
        if self.thread.is_alive():
            raise RuntimeError(f"the arena server did not stop within {wait:g} s")


def serve_in_thread(
    arena: Arena,
    host: str = "127.0.0.1",
    port: int = 0,
    guard: connections.Guard | None = None,
    ws: Any = None,
    loop: str = "auto",
) -> tuple[ServerInThread, int]:
    """Start a server for ``arena`` in a daemon thread: the server and its port, once it listens. ``guard``: the
    connection limits (``connections.Guard``; a benchmark whose bots all connect from the loopback raises the limit
    of one address). ``ws``: another WebSocket protocol of uvicorn's than the arena's (a test of the plain ASGI
    path). ``loop``: the server's event loop, as uvicorn names it (``auto``: uvloop where it imports, else asyncio's;
    ``asyncio``; ``uvloop``), as ``server.serve``'s."""
    settle_heap()
    options = {**ws_options(), **({} if ws is None else {"ws": ws})}
    config = connections.config(
        create_app(arena),
        guard,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=STOP_SECONDS,
        loop=loop,
        **options,
    )
    server = ServerInThread(config)
    server.thread = threading.Thread(target=server.run, daemon=True, name="arena server")
    server.thread.start()
    deadline = time.monotonic() + START_SECONDS
    while not server.started:
        if not server.thread.is_alive():
            raise RuntimeError("the arena server stopped before it listened (its log says why)")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the arena server did not start within {START_SECONDS:g} s")
        time.sleep(0.01)
    return server, server.servers[0].sockets[0].getsockname()[1]
