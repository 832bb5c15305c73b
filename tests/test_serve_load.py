"""A bounded load test of ``bourre serve``: a real uvicorn server on the loopback, one table whose agents think until
the test lets them move, and a few hundred requests showing that the options, another table and the slow table's
own refusals are all answered while those agents still think; and replays held while their answers are encoded,
showing that they hold up nothing and that the replays past the limits are refused at once. Nothing here is timed:
a request held up by the slow work could not finish before the test releases it."""

from __future__ import annotations

import http.client
import json
import socket
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
from train.serve import replays as serve_replays  # noqa: E402
from train.serve import tables as tb  # noqa: E402

WAIT_SECONDS = 60
"""The longest any one step of the test waits (a bound on a broken server, not a figure the test measures)."""


class SlowAgent:
    """An agent that thinks until ``release`` is set (it holds a thread, not the processor); ``thinking`` is set
    when it starts to."""

    def __init__(self, agent: Agent, thinking: threading.Event, release: threading.Event) -> None:
        self.agent = agent
        self.name = f"slow {agent.name}"
        self.thinking = thinking
        self.release = release

    def reset(self) -> None:
        self.agent.reset()

    def act(self, observation: Observation) -> int:
        self.thinking.set()
        self.release.wait(WAIT_SECONDS)
        return self.agent.act(observation)


@pytest.fixture()
def server() -> Iterator[tuple[int, tb.Tables]]:
    """A real server on 127.0.0.1 at a free port, in a thread, with its tables."""
    state = tb.Tables(seed=0, move_seconds=2 * WAIT_SECONDS)  # the slow agents below are not replaced
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


def _request(
    port: int, method: str, path: str, body: Any = None, raw: bytes | None = None, source: str = "127.0.0.1"
) -> tuple[int, Any]:
    """(status, JSON answer) of one request to the server on 127.0.0.1, from ``source`` (a loopback address: each
    is another client to the server); ``raw``: a body sent as it is."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_SECONDS, source_address=(source, 0))
    try:
        headers = {"Content-Type": "application/json"} if method == "POST" else {}
        data = raw if raw is not None else None if body is None else json.dumps(body)
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        payload = json.loads(response.read() or b"null")
        return response.status, payload
    finally:
        connection.close()


def test_a_slow_table_holds_up_neither_the_other_tables_nor_the_options(server: tuple[int, tb.Tables]) -> None:
    port, state = server
    status, fast = _request(port, "POST", "/api/tables", {"players": 4, "agents": "random"})
    assert status == 201, fast
    slow_view = _request(port, "POST", "/api/tables", {"players": 4, "agents": "random", "seat": 0})[1]
    slow = state.get(slow_view["table"])
    thinking, release = threading.Event(), threading.Event()
    slow.bots = {q: SlowAgent(bot, thinking, release) for q, bot in slow.bots.items()}

    slow_answers: list[int] = []

    def play_slowly() -> None:
        """Two actions at the slow table: each waits for its agents' moves."""
        view = slow_view
        for _ in range(2):
            if view["over"]:
                view = _request(port, "POST", f"/api/tables/{view['table']}/deals")[1]
            status, view = _request(
                port,
                "POST",
                f"/api/tables/{view['table']}/actions",
                {"action": view["legal"][0]["action"], "turn": view["turn"]},
            )
            assert status == 200, view
            slow_answers.append(status)

    slow_player = threading.Thread(target=play_slowly)
    slow_player.start()
    assert thinking.wait(WAIT_SECONDS), "the slow table's agents never started to think"
    rng = np.random.default_rng(0)
    answered = busy = 0
    with ThreadPoolExecutor(max_workers=24) as pool:
        # many at once at the busy table: each is refused at once instead of holding a thread
        queued = [pool.submit(_request, port, "GET", f"/api/tables/{slow.id}") for _ in range(48)]
        view = fast
        for k in range(240):
            if k % 3 == 0:
                status, _ = _request(port, "GET", "/api/options")
            elif view["over"]:
                status, view = _request(port, "POST", f"/api/tables/{view['table']}/deals")
            else:
                action = view["legal"][int(rng.integers(len(view["legal"])))]["action"]
                status, view = _request(
                    port, "POST", f"/api/tables/{view['table']}/actions", {"action": action, "turn": view["turn"]}
                )
            assert status in (200, 201), view
            answered += 1
        for future in queued:
            status, answer = future.result(timeout=WAIT_SECONDS)
            assert status in (200, 409), answer
            busy += status == 409
            answered += 1
    # every request above was answered while the slow table's agents were still held: none waited for them
    assert not release.is_set() and slow_player.is_alive() and not slow_answers
    assert answered == 240 + 48
    release.set()
    slow_player.join(timeout=WAIT_SECONDS)
    assert not slow_player.is_alive() and slow_answers == [200, 200]  # the slow table did play on
    assert busy > 0  # the slow table was busy while the others were answered


def test_replays_are_worked_out_off_the_event_loop_and_bounded(
    server: tuple[int, tb.Tables], monkeypatch: pytest.MonkeyPatch
) -> None:
    port, _ = server
    status, view = _request(port, "POST", "/api/tables", {"players": 8, "agents": "random", "seat": 0})
    while status in (200, 201) and not view["over"]:
        status, view = _request(
            port,
            "POST",
            f"/api/tables/{view['table']}/actions",
            {"action": view["legal"][0]["action"], "turn": view["turn"]},
        )
    assert status == 200, view
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_SECONDS)
    connection.request("GET", view["result"]["history"])
    saved = connection.getresponse().read()
    connection.close()

    encoding, release = threading.Semaphore(0), threading.Event()

    class HeldAnswer(dict):  # type: ignore[type-arg]
        """A replay's answer whose encoding waits for the test: json's encoder asks a dict subclass for its items,
        wherever the server encodes it. Encoded on the event loop, it would hold up every request."""

        def items(self) -> Any:
            encoding.release()
            release.wait(WAIT_SECONDS)
            return super().items()

    replay_frames = serve_replays.replay_frames
    monkeypatch.setattr(serve_replays, "replay_frames", lambda *args: HeldAnswer(replay_frames(*args)))
    per_client, in_all = serve_app.MAX_REPLAYS_PER_CLIENT, serve_app.MAX_REPLAYS
    sources = [f"127.0.0.{1 + k // per_client}" for k in range(in_all)]  # every client at its limit, all at once
    with ThreadPoolExecutor(max_workers=in_all) as pool:
        held = [pool.submit(_request, port, "POST", "/api/replays", raw=saved, source=source) for source in sources]
        try:
            for _ in held:
                assert encoding.acquire(timeout=WAIT_SECONDS / 2), "the replays were not encoded side by side"
            # every replay is being worked out: the server still answers, and refuses more replays at once
            status, options = _request(port, "GET", "/api/options")
            assert status == 200 and options["limits"]["replays"] == in_all
            status, mine = _request(port, "POST", "/api/replays", raw=saved, source="127.0.0.1")
            assert status == 429 and "limit for one client" in mine["error"], mine
            newcomer = f"127.0.0.{len(set(sources)) + 1}"
            status, theirs = _request(port, "POST", "/api/replays", raw=saved, source=newcomer)
            assert status == 503 and "its limit" in theirs["error"], theirs
            assert all(not future.done() for future in held)
        finally:
            release.set()
        answers = [future.result(timeout=WAIT_SECONDS) for future in held]
    assert [status for status, _ in answers] == [200] * in_all
    assert all(len(answer["frames"]) == len(json.loads(saved)["deals"][0]["actions"]) + 1 for _, answer in answers)
    assert _request(port, "POST", "/api/replays", raw=saved)[0] == 200  # the slots were given back
