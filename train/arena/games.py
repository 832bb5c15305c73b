"""One game of a match on the table's loop, and the par games the server plays beside a match.

``play_game`` plays a deal (or a session, one game of the env) as evaluation plays it (``train.table``), awaiting
each move: a remote seat's turn (``train.arena.remote.RemoteSeat``), a search's move from its worker process, a
built-in agent's in a worker thread, so that no table of the server's event loop holds up the others.
``play_par_games`` plays the single format's par games (``train.arena.match``), one per deal as the match deals
it, in an env of their own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np

import bourre_env
from agents.base import choose
from bourre_env import history
from bourre_env.core.rules import Rules
from bourre_env.deal_recorder import DealRecorder
from train.arena import thinking
from train.arena.pacing import Pacer
from train.arena.remote import RemoteSeat
from train.schedule import seat_seeds
from train.table import Deals, Decision, Observer, play_async, reset_agents

__all__ = ["DealHook", "ParHook", "close_seats", "par_env", "play_game", "play_par_games", "public_label"]

DealHook = Callable[[int, int, np.ndarray, dict[str, Any]], Awaitable[None]]
"""Awaited as each game ends: ``(deal, rotation, outcome rows, hand history)``; the store commits it there."""
ParHook = Callable[[int, np.ndarray, dict[str, Any]], Awaitable[None]]
"""Awaited as each par game ends: ``(deal, outcome rows, hand history)``."""


def public_label(seat: str) -> str:
    """What the bots and the published hand histories are told of a seat: ``bot:NAME``, or an agent spec; a spec
    with options or a path (an operator's ``--agent``: a server address, a file) by its agent's name alone, which is
    all a table shows of a player."""
    if seat.startswith("bot:") or not any(c in seat for c in "=/\\"):
        return seat
    return seat.split(":", 1)[0]


async def play_game(
    env: Any,
    table: Sequence[Any],
    deals: Deals,
    k: int,
    labels: Sequence[str],
    deal_name: str,
    recorder: DealRecorder | None = None,
    pacer: Pacer | None = None,
    observers: Sequence[Observer] = (),
    before: Callable[[], Awaitable[None]] | None = None,
) -> np.ndarray:
    """Deal ``k`` of ``deals`` on the table's loop (``train.table.play_async``), agents reset first as evaluation
    resets them: a remote seat's turn awaited, a search's move awaited from its worker process and a built-in
    agent's move chosen in a worker thread, so that no table holds up the others; the ``seat_outcomes`` rows.
    ``recorder``: writes the game's hand history (``recorder.history(labels)`` once it is over). ``pacer``: holds
    back the built-in seats' moves (``train.arena.pacing``; a match with a remote seat). ``observers`` watch the
    game after the recorder; ``before`` is awaited before each decision (a session's deals settled in between)."""
    reset_agents(table)
    deal = deals.deal(k, env.unwrapped.rules)
    if recorder is not None:
        recorder.next_game(deal.deck, deal.env_seed)

    async def decide(decision: Decision) -> Any:
        if before is not None:
            await before()
        agent = table[decision.seat]
        if isinstance(agent, RemoteSeat):
            return await agent.act_decision(decision)  # its turn is built from the decision itself
        move: Awaitable[Any]
        if isinstance(agent, thinking.SeatProxy):
            move = agent.act_async(decision.observation, where=decision.where)
        else:
            move = asyncio.to_thread(choose, agent, decision.observation, repr(decision.label), decision.where)
        return await (move if pacer is None else pacer.paced(id(agent), move))

    watching = (*(() if recorder is None else (recorder,)), *observers)
    return await play_async(env, deal, decide, labels, deal_name, watching)


def build_all(spec: str, seeds: Sequence[int]) -> list[Any]:
    return [thinking.build_seat(spec, seed) for seed in seeds]


def close_seats(table: Sequence[Any]) -> None:
    """Free the agents that think in worker processes (``thinking.SeatProxy``)."""
    for agent in table:
        if isinstance(agent, thinking.SeatProxy):
            agent.close()


def par_env(rules: Rules) -> tuple[Any, DealRecorder]:
    """The env a par game (or the ladder's all-field table) is played in, and the recorder of its hand histories:
    the plain env, whose games ``DealRecorder`` records as ``bourre_env.history.Recording`` would, for less."""
    env = bourre_env.env(rules=rules)
    return env, DealRecorder(rules, history.rules_record(rules)["preset"])


async def play_par_games(
    agent: str,
    seed: int,
    rules: Any,
    deals: Deals,
    dealt: asyncio.Queue[int | None],
    played_in: tuple[Any, DealRecorder],
    on_par: ParHook,
) -> None:
    """The par games, one per deal number taken from ``dealt`` (None: no more): ``agent`` in every seat, seat
    ``s`` seeded from ``(seed, N, k, 1 + s)`` (``train.schedule.seat_seeds``) as the ladder's all-field table is, so
    a deal's par game is the same whenever it is played."""
    n = rules.num_players
    labels = [public_label(agent)] * n
    env, recorder = played_in
    while (k := await dealt.get()) is not None:
        table = await asyncio.to_thread(build_all, agent, seat_seeds(seed, n, k))
        try:
            rows = await play_game(env, table, deals, k, labels, f"par game of deal {k}", recorder)
        finally:
            close_seats(table)
        await on_par(k, rows, recorder.history(labels))
