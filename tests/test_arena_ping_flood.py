"""A peer that floods the server with WebSocket pings is cut off, before its hello or after it: each ping was a pong
the event loop wrote, and four connections writing pings as fast as they could took a 200-deal match from 5 s to
122 s. A bot that pings as libraries do (every few seconds) is never cut off."""

from __future__ import annotations

import json
import time

import pytest
from arena_helpers import WAIT, Server, arena_server, hello, raw  # noqa: F401 (arena_server: the fixture 'server')
from websockets.exceptions import ConnectionClosed

from train.arena import bot_socket


def _flood(ws: object) -> int:
    """Pings sent until the server cut the connection off."""
    sent = 0
    deadline = time.monotonic() + WAIT
    with pytest.raises(ConnectionClosed):
        while time.monotonic() < deadline:
            ws.ping()  # type: ignore[attr-defined]
            sent += 1
            if sent % 50 == 0:
                time.sleep(0.01)  # let the server read them
        pytest.fail("the server never cut off a connection that flooded it with pings")
    return sent


def test_a_peer_that_floods_pings_before_its_hello_is_cut_off(server: Server) -> None:
    ws = raw(server)
    try:
        assert _flood(ws) < 10_000
    finally:
        ws.close()


def test_a_bot_that_floods_pings_is_cut_off_and_one_that_pings_slowly_is_not(server: Server) -> None:
    (flooder, flood_token), (calm, calm_token) = server.new_bot(), server.new_bot()
    ws = raw(server, hello(flooder, flood_token))
    steady = raw(server, hello(calm, calm_token))
    try:
        assert json.loads(ws.recv(WAIT))["type"] == "welcome"
        assert json.loads(steady.recv(WAIT))["type"] == "welcome"
        assert _flood(ws) < 10_000
        for _ in range(int(2 * bot_socket.MAX_PINGS)):  # under the average rate: answered every time
            assert steady.ping().wait(WAIT)
            time.sleep(1.5 / bot_socket.MAX_PINGS)
        assert calm in server.arena.registry.connected()
        deadline = time.monotonic() + WAIT
        while flooder in server.arena.registry.connected():  # its connection's end reaches the registry
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        ws.close()
        steady.close()
