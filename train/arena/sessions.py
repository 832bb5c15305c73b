"""The session format's bookkeeping: each deal of a session read as it settles, and what the deals leave in the pot.

A match in the ``session`` format (``train.arena.match``) is one game of the env with ``deals_per_episode`` set to
the match's deals: one table, the seats fixed, the deal passing left, the pot carried from deal to deal. The env
deals the next deal inside the step that settles one, so ``DealEnds`` reads each settled deal off a copy of the
state before that step, stepped by the rules core (as ``train.schedule.SessionTally`` and the hand-history
recorder read it): the deal's outcome rows and the pot it leaves. The match turns them into a ``deal_end`` for
each bot, a stored game per deal, and its results.

A seat's result in a session counts the pot left at the end as the table's, shared equally by the seats, as
``bourre eval --session`` counts it (``train.schedule``): the session's chips of a seat are its chip change plus
``pot_left / N``. Per deal that is the deal's chip change plus ``N``-th of the change of the pot over the deal
(``pot_changes``); summed over the session the pot's changes add up to the pot left.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bourre_env import core
from bourre_env.core.rules import Rules
from bourre_env.deal_recorder import DealRecorder
from bourre_env.view import StateView
from train.arena import protocol
from train.arena.games import DealHook, ParHook, build_all, close_seats, play_game, public_label
from train.arena.pacing import Pacer
from train.arena.remote import FencedError, RemoteSeat, TurnContext
from train.schedule import agent_seed
from train.table import CHIPS, Deals, Decision, Observer, seat_outcomes

__all__ = ["DealEnds", "play_par_session", "play_session", "pot_changes"]


class DealEnds(Observer):
    """Watches a game: ``ended`` gets ``(rows, pot)`` for each deal as it settles, the deal's ``seat_outcomes``
    rows and the chips it leaves in the pot. The match takes them in order (``taken`` counts those it took)."""

    def __init__(self, rules: Rules) -> None:
        self.players = rules.num_players
        self.params = rules.params()
        self.ended: list[tuple[np.ndarray, int]] = []
        self.taken = 0

    def dealt(self, env: Any) -> None:
        self.ended = []
        self.taken = 0

    def stepped(self, decision: Decision, action: int, before: np.ndarray, env: Any) -> None:
        n = self.players
        if StateView(env.unwrapped.state_vector, n).deals_done == StateView(before, n).deals_done:
            return
        settled = before.copy()
        core.step(settled, self.params, int(action))
        self.ended.append((seat_outcomes(settled, n), StateView(settled, n).pot))

    def take(self) -> list[tuple[int, np.ndarray, int]]:
        """The deals settled since the last call: ``(deal, rows, pot left)``, the deal counted from 0."""
        fresh = [(self.taken + i, rows, pot) for i, (rows, pot) in enumerate(self.ended[self.taken :])]
        self.taken = len(self.ended)
        return fresh


def pot_changes(pots: np.ndarray) -> np.ndarray:
    """The change of the pot over each deal, from the pot each deal left (the table's pot is 0 before the first):
    they sum to the pot the last deal left."""
    return np.diff(np.asarray(pots, dtype=np.int64), prepend=0)


async def play_par_session(
    agent: str, seed: int, rules: Any, deals: Deals, played_in: tuple[Any, DealRecorder], on_par: ParHook | None
) -> tuple[np.ndarray, np.ndarray]:
    """The par session: ``agent`` in every seat, seat ``s`` seeded from ``(seed, N, 0, 1 + s)``, each deal handed to
    ``on_par`` as it settles; every deal's rows ``(deals, seat, 6)`` and the pot each deal left (past the session's
    end, when the pot bound cut it, the pot it left)."""
    n = rules.num_players
    labels = [public_label(agent)] * n
    env, recorder = played_in
    rows = np.zeros((rules.deals_per_episode, n, 6), dtype=np.int64)
    pots = np.zeros(rules.deals_per_episode, dtype=np.int64)
    ends = DealEnds(rules)

    async def settled() -> None:
        for k, deal_rows, pot in ends.take():
            rows[k], pots[k:] = deal_rows, pot
            if on_par is not None:
                await on_par(k, deal_rows, recorder.deal_history(labels, k))

    table = await asyncio.to_thread(build_all, agent, [agent_seed(seed, n, 0, 1 + s) for s in range(n)])
    try:
        await play_game(env, table, deals, 0, labels, "the par session", recorder, None, (ends,), settled)
    finally:
        close_seats(table)
    await settled()
    return rows, pots


class StopSessionError(Exception):
    """The server stops: a session ends between two deals."""


async def play_session(
    *,
    match: str,
    labels: Sequence[str],
    env: Any,
    recorder: DealRecorder,
    pacer: Pacer | None,
    deals: Deals,
    entries: Sequence[Any],
    remotes: Sequence[tuple[int, RemoteSeat]],
    context: TurnContext,
    totals: list[int],
    on_game: DealHook | None,
    stop: Callable[[], bool],
    outcomes: np.ndarray,
    pots: np.ndarray,
) -> tuple[int, bool]:
    """The session format's game (``train.arena.match``): one game of the env, each deal settled between two decisions
    (its rows and pot kept, the game stored, ``deal_end`` sent to the bots, then the next ``deal_start``). The
    deals played, and whether the server's stop ended the session early. ``labels``: who sits in each seat, as the
    bots are told."""
    n = len(labels)
    ends = DealEnds(env.unwrapped.rules)

    def open_deal(k: int, dealer: int) -> None:
        context.deal, context.game = k, k + 1
        for i, remote in remotes:
            remote.send(protocol.deal_start(match, k, 0, i, dealer, labels))

    async def settle() -> int:
        fresh = ends.take()
        for k, rows, pot in fresh:
            outcomes[k, 0], pots[k] = rows, pot
            for s in range(n):
                totals[s] += int(rows[s, CHIPS])
            saved = recorder.deal_history(labels, k)
            if on_game is not None:  # stored before the bots hear of it, as in the other formats
                await on_game(k, 0, rows, saved)
            for i, remote in remotes:
                remote.send(protocol.deal_end(match, k, 0, i, saved["deals"][0]))
        return len(fresh)

    async def between_deals() -> None:
        if await settle():
            if stop():
                raise StopSessionError
            open_deal(len(ends.ended), StateView(env.unwrapped.state_vector, n).dealer)

    context.chips = lambda: list(totals)
    open_deal(0, int(deals.dealers[0]))
    try:
        await play_game(env, list(entries), deals, 0, labels, "the session", recorder, pacer, (ends,), between_deals)
    except (StopSessionError, FencedError):  # the server stops, or was judged gone: the session ends here
        return len(ends.ended), True
    await settle()
    return len(ends.ended), False
