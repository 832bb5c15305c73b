"""The environments a learner steps: the PettingZoo AEC env's reset-and-step loop, and the vector env's step."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from ._common import Suite, need, once

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
