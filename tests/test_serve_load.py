"""A bounded load test of ``bourre serve``: a real uvicorn server on the loopback, one table whose agents are slow,
and a few hundred requests showing that the options, another table and the slow table's own refusals answer at
once while the slow table's agents think."""

from __future__ import annotations

import http.client
import json
import socket
import statistics
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

uvicorn = pytest.importorskip("uvicorn", reason="the load test needs the serve extra (pip install -e '.[serve]')")

from agents.base import Agent, Observation  # noqa: E402
from train.serve import app as serve_app  # noqa: E402
from train.serve import tables as tb  # noqa: E402

THINK_SECONDS = 0.5
"""How long each slow agent takes over a move."""


class SlowAgent:
    """An agent that thinks ``THINK_SECONDS`` over every move (a sleep: it holds a thread, not the processor)."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.name = f"slow {agent.name}"

    def reset(self) -> None:
        self.agent.reset()

    def act(self, observation: Observation) -> int:
        time.sleep(THINK_SECONDS)
        return self.agent.act(observation)


@pytest.fixture()
def server() -> Iterator[tuple[int, tb.Tables]]:
    """A real server on 127.0.0.1 at a free port, in a thread, with its tables."""
    state = tb.Tables(seed=0)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = uvicorn.Config(serve_app.create_app(state), host="127.0.0.1", port=port, log_level="warning")
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not instance.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield port, state
    finally:
        instance.should_exit = True
        thread.join(timeout=30)


def _request(port: int, method: str, path: str, body: Any = None) -> tuple[int, Any, float]:
    """(status, JSON answer, seconds taken) of one request to the server on 127.0.0.1."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    start = time.perf_counter()
    try:
        headers = {"Content-Type": "application/json"} if method == "POST" else {}
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        payload = json.loads(response.read() or b"null")
        return response.status, payload, time.perf_counter() - start
    finally:
        connection.close()


def test_a_slow_table_holds_up_neither_the_other_tables_nor_the_options(server: tuple[int, tb.Tables]) -> None:
    port, state = server
    status, fast, _ = _request(port, "POST", "/api/tables", {"players": 4, "agents": "random"})
    assert status == 201, fast
    slow_view = _request(port, "POST", "/api/tables", {"players": 4, "agents": "random", "seat": 0})[1]
    slow = state.get(slow_view["table"])
    slow.bots = {q: SlowAgent(bot) for q, bot in slow.bots.items()}

    slow_times: list[float] = []

    def play_slowly() -> None:
        """Two actions at the slow table: each waits for its agents' moves."""
        view = slow_view
        for _ in range(2):
            if view["over"]:
                view = _request(port, "POST", f"/api/tables/{view['table']}/deals")[1]
            status, view, seconds = _request(
                port,
                "POST",
                f"/api/tables/{view['table']}/actions",
                {"action": view["legal"][0]["action"], "turn": view["turn"]},
            )
            assert status == 200, view
            slow_times.append(seconds)

    slow_player = threading.Thread(target=play_slowly)
    slow_player.start()
    time.sleep(0.1)  # the slow table's agents are thinking now
    rng = np.random.default_rng(0)
    latencies: list[float] = []
    busy = 0
    with ThreadPoolExecutor(max_workers=24) as pool:
        # many at once at the busy table: each is refused at once instead of holding a thread
        queued = [pool.submit(_request, port, "GET", f"/api/tables/{slow.id}") for _ in range(48)]
        view = fast
        for k in range(240):
            if not slow_player.is_alive():
                break
            if k % 3 == 0:
                status, _, seconds = _request(port, "GET", "/api/options")
            elif view["over"]:
                status, view, seconds = _request(port, "POST", f"/api/tables/{view['table']}/deals")
            else:
                action = view["legal"][int(rng.integers(len(view["legal"])))]["action"]
                status, view, seconds = _request(
                    port, "POST", f"/api/tables/{view['table']}/actions", {"action": action, "turn": view["turn"]}
                )
            assert status in (200, 201), view
            latencies.append(seconds)
        for future in queued:
            status, answer, seconds = future.result()
            assert status in (200, 409), answer
            busy += status == 409
            latencies.append(seconds)
    slow_player.join(timeout=60)
    assert len(slow_times) == 2 and min(slow_times) >= THINK_SECONDS  # the slow table did think
    assert len(latencies) >= 100
    # a request held up by the slow table would take at least one agent's move
    assert statistics.median(latencies) < THINK_SECONDS / 4, sorted(latencies)[-10:]
    assert max(latencies) < THINK_SECONDS, sorted(latencies)[-10:]
    assert busy > 0  # the slow table was busy while the others were answered
