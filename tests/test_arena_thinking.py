"""Heavy built-in seats in worker processes (``train.arena.thinking``): which specs go there, the same actions as the
agent built in place for the same seed and observations, and a worker that dies failing its seat in one line."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest

import bourre_env
from agents.base import AgentError
from train.arena import thinking
from train.eval.duplicate import build_agent, make_deals, table_rules

WAIT = 300.0  # a worker's start and its first compiled-code load, on a shared machine


@pytest.fixture(scope="module", autouse=True)
def _workers_ended() -> Iterator[None]:
    yield
    thinking.shutdown()


def test_the_search_agents_are_heavy_and_the_others_are_built_in_place() -> None:
    assert thinking.is_heavy("pimc") and thinking.is_heavy("pimc:16") and thinking.is_heavy(" ismcts:200,c=2")
    assert not any(thinking.is_heavy(s) for s in ("heuristic", "heuristic:tight", "random", "ppo", "llm", "x.py:C", 3))
    seat = thinking.build_seat("heuristic", 7)
    assert not isinstance(seat, thinking.SeatProxy) and type(seat) is type(build_agent("heuristic", 7))
    with pytest.raises(ValueError, match="worlds"):
        thinking.build_seat("pimc:0", 1)  # refused here, before any worker is asked
    assert 1 <= thinking.workers() <= thinking.MAX_WORKERS


def _play(table: list[Any], use_async: bool, deals: int = 2) -> list[int]:
    """Every action of ``deals`` deals at a 3-seat table; a proxy answers through ``act_async`` or ``act``."""
    rules = table_rules(len(table), {})
    dealt = make_deals(11, rules, deals)
    env = bourre_env.env(num_players=len(table))
    actions = []
    for k in range(deals):
        env.reset(
            seed=int(dealt.env_seeds[k]), options={"deck": dealt.decks[k].tolist(), "dealer": int(dealt.dealers[k])}
        )
        for agent in table:
            agent.reset()
        for name in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            agent = table[env.unwrapped.agent_name_mapping[name]]
            if use_async and isinstance(agent, thinking.SeatProxy):
                action = asyncio.run(asyncio.wait_for(agent.act_async(obs), WAIT))
            else:
                action = int(agent.act(obs))
            actions.append(action)
            env.step(action)
    return actions


@pytest.mark.parametrize("use_async", [True, False])
def test_a_proxy_plays_the_actions_of_the_agent_built_in_place(use_async: bool) -> None:
    specs, seeds = ("pimc:4", "ismcts:16", "heuristic"), (101, 202, 303)
    here = [build_agent(spec, seed) for spec, seed in zip(specs, seeds, strict=True)]
    there = [thinking.build_seat(spec, seed) for spec, seed in zip(specs, seeds, strict=True)]
    assert [isinstance(s, thinking.SeatProxy) for s in there] == [True, True, False]
    try:
        assert _play(there, use_async) == _play(here, False)
    finally:
        for seat in there:
            if isinstance(seat, thinking.SeatProxy):
                seat.close()
    with pytest.raises(AgentError, match="closed"):
        _play(there, use_async, 1)


def test_a_worker_that_dies_fails_its_seat_in_one_line_and_is_replaced() -> None:
    seat = thinking.build_seat("pimc:2", 5)
    assert isinstance(seat, thinking.SeatProxy)
    _play([seat, build_agent("random", 1), build_agent("random", 2)], True, 1)  # the worker is up and warm
    processes = getattr(seat._worker.executor, "_processes", {})  # noqa: SLF001
    assert len(processes) == 1
    os.kill(next(iter(processes)), signal.SIGKILL)
    deadline = time.monotonic() + WAIT
    with pytest.raises(AgentError) as died:
        while time.monotonic() < deadline:  # until the executor has seen its process end
            _play([seat, build_agent("random", 1), build_agent("random", 2)], True, 1)
    message = str(died.value)
    assert "'pimc:2'" in message and "worker process ended" in message and "\n" not in message
    seat.close()
    again = thinking.build_seat("pimc:2", 5)  # a new worker for the seats built after
    try:
        assert _play([again, build_agent("random", 1), build_agent("random", 2)], True, 1)
    finally:
        again.close()


def test_the_arenas_play_game_gets_the_same_rows_from_proxies() -> None:
    """``train.arena.match.play_game`` as it is (a built-in seat's move in a thread: the proxy's ``act`` waits on its
    worker there) plays the deal as with the agents built in place."""
    import numpy as np

    from train.arena.match import play_game

    specs = ("pimc:2", "random", "ismcts:8")
    dealt = make_deals(3, table_rules(3, {}), 1)
    rows = []
    for build in (build_agent, thinking.build_seat):
        table = [build(spec, 40 + s) for s, spec in enumerate(specs)]
        env = bourre_env.env(num_players=3)
        rows.append(asyncio.run(play_game(env, table, dealt, 0, list(specs), "deal 0")))
        for agent in table:
            if isinstance(agent, thinking.SeatProxy):
                agent.close()
    np.testing.assert_array_equal(rows[0], rows[1])
