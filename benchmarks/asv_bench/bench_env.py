"""The environments a learner steps: the PettingZoo AEC env's reset-and-step loop, and the vector env's step."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from ._common import Suite, attribute, need, once

PLAYERS = [5, 7]


class AECLoop(Suite):
    """``bourre_env.env()``: ``DECISIONS`` random legal decisions of the standard PettingZoo loop (``agent_iter``,
    ``last``, ``step``: an observation and a mask per decision), from ``reset(seed=0)`` and resetting when an episode
    ends, the choice drawn from a ``random.Random(0)`` made before each call: the same games at every call."""

    params = PLAYERS
    param_names = ["players"]
    DECISIONS = 1000

    def setup(self, players: int) -> None:
        self.env = once(("aec", players), lambda: need("bourre_env").env(num_players=players))
        self.rnd = random.Random(0)
        once(("aec_played", players), lambda: self.time_reset_and_play(players))  # compiles the core (untimed)
        self.rnd = random.Random(0)

    def time_reset_and_play(self, players: int) -> None:
        env, rnd, decisions = self.env, self.rnd, 0
        env.reset(seed=0)
        while True:
            for _agent in env.agent_iter():
                obs, _reward, term, trunc, _info = env.last()
                if term or trunc:
                    action = None  # a finished seat's step: not a decision
                else:
                    legal = np.flatnonzero(obs["action_mask"])
                    action = int(legal[rnd.randrange(legal.size)])
                    decisions += 1
                env.step(action)
                if decisions >= self.DECISIONS:
                    return
            env.reset()


class VectorEnvStep(Suite):
    """``BourreVectorEnv.step`` at 1,024 tables, heuristic opponents (batched, from the state): one learner step per
    call, the first legal action of every table's learner. The tables go on from call to call (the env's state is
    not restored), through the same sequence of positions in every process of a commit."""

    params = PLAYERS
    param_names = ["players"]

    def setup(self, players: int) -> None:
        self.env = once(("vector_env", players, self.tables), lambda: self._make(players))

    def _make(self, players: int) -> Any:
        vector_env = need("bourre_env.vector_env")
        factory = need("agents.batched_players").make_batched
        env = vector_env.BourreVectorEnv(
            num_envs=self.tables, num_players=players, opponents="heuristic", agent_factory=factory
        )
        env.reset(seed=0)
        env.step(env.action_masks().argmax(axis=1))  # compiles the step's kernels (untimed)
        return env

    def time_step(self, players: int) -> None:
        self.env.step(self.env.action_masks().argmax(axis=1))


class _Deals(Suite):
    """The arena's games (issue 48): ``GAMES`` deals of ``bourre_env.env()``, each a ``reset(seed, options)`` to a
    given deck (a list of card ids) and dealer, then the first legal action at every decision, so that what a game
    costs once (the reset, the hand history) weighs as it does in the arena, where bots pass most hands. The deals are
    drawn from ``numpy.random.default_rng(0)`` once per process: the same games at every call."""

    params = PLAYERS
    param_names = ["players"]
    GAMES = 100

    def setup(self, players: int) -> None:
        key = (players, self.tables)
        self.env = once(("given_deals_env", *key), lambda: need("bourre_env").env(num_players=players))
        self.deals = once(("given_deals", *key), lambda: self._deals(players))
        self.labels = ["first"] * players
        once(("given_deals_played", *key), lambda: self._warm_up())  # loads the compiled core (untimed)

    def _deals(self, players: int) -> list[tuple[list[int], int, int]]:
        rng = np.random.default_rng(0)
        cards = self.env.unwrapped.rules.deck_cards()
        count = max(1, min(self.GAMES, self.tables))  # tests/test_asv_suite.py runs a few
        return [
            ([int(c) for c in rng.permutation(cards)], int(rng.integers(players)), int(rng.integers(2**62)))
            for _ in range(count)
        ]

    def _warm_up(self) -> None:
        deck, dealer, seed = self.deals[0]
        self.env.reset(seed=seed, options={"deck": deck, "dealer": dealer})
        self._play(self.env)

    def _play(self, env: Any, watch: Any = None) -> None:
        """The game ``env`` was just reset to, the first legal action at every decision; ``watch``: a recorder."""
        raw = env.unwrapped
        while raw.agents and not raw.terminations[raw.agent_selection] and not raw.truncations[raw.agent_selection]:
            action = int(np.flatnonzero(env.observe(raw.agent_selection)["action_mask"])[0])
            before = raw.state_vector.copy() if watch is not None else None
            env.step(action)
            if watch is not None:
                watch.stepped(None, action, before, env)


class GivenDeals(_Deals):
    """``_Deals``' games. ``time_reset``: the resets alone. ``time_recording``: the games on a ``history.Recording``
    env and its ``history()`` per game."""

    def time_reset(self, players: int) -> None:
        env = self.env
        for deck, dealer, seed in self.deals:
            env.reset(seed=seed, options={"deck": deck, "dealer": dealer})

    def time_recording(self, players: int) -> None:
        key = ("given_deals_recording", players, self.tables)
        env = once(key, lambda: need("bourre_env.history").Recording(self.env))
        for deck, dealer, seed in self.deals:
            env.reset(seed=seed, options={"deck": deck, "dealer": dealer})
            self._play(env)
            env.history(self.labels)


class GivenDealsRecorded(_Deals):
    """``_Deals``' games on the plain env watched by ``bourre_env.deal_recorder.DealRecorder`` (the hooks
    ``train.table`` calls, as the arena plays them), and its ``history()`` per game; ``n/a`` before it existed."""

    def setup(self, players: int) -> None:
        recorder_class = attribute(need("bourre_env.deal_recorder"), "DealRecorder")
        super().setup(players)
        self.recorder = recorder_class(self.env.unwrapped.rules)

    def time_recorder(self, players: int) -> None:
        env, recorder = self.env, self.recorder
        for deck, dealer, seed in self.deals:
            env.reset(seed=seed, options={"deck": deck, "dealer": dealer})
            recorder.next_game(deck, seed)
            recorder.dealt(env)
            self._play(env, recorder)
            recorder.history(self.labels)
