"""A probe, not a feature: would playing each table's opponents to the learner's next turn in one compiled call
make ``BourreVectorEnv`` faster than its round-by-round loop?

    python benchmarks/vector_env_fused_probe.py --tables 1024 --players 5 --seconds 6

The env plays the other seats in rounds: each round, one call of the heuristic on every table where an opponent
is to act, then one call that steps those tables, until the learner is to act everywhere (about 17 rounds per
learner step at 5 players, on fewer and more scattered tables each round). ``FusedEnv`` here replaces those
rounds, when every other seat is the heuristic, with one compiled loop that takes each table in turn and plays
its opponents one after another (observe, decide, step, settle) until its learner is to act or its episode
ends; the table's state stays in cache across its opponents' moves. Tie-break numbers are drawn per table
and move, so its games differ from the env's in ties: the probe compares speed only. The two take turns in
half-second slices (``vector_env_speed.interleaved_rates``) and learner steps/s of each are printed.
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import os

import numpy as np
from numba import njit
from vector_env_speed import interleaved_rates, vector_stepper

from agents.batched_players import BatchedHeuristicPlayer
from agents.heuristic.batch import FLOAT_WORK, INT_WORK, heuristic_action
from bourre_env import BourreVectorEnv, core, observation
from bourre_env.vector_env import _step_accepted_rows

MOVES_PER_TABLE = 256
"""Tie-break numbers drawn per table per call: more opponent moves than fit between two learner decisions."""


@njit(cache=True)
def _play_to_learner(
    states: np.ndarray,
    p: np.ndarray,
    rngs: np.ndarray,
    template: np.ndarray,
    rows: np.ndarray,
    seats: np.ndarray,
    rewards: np.ndarray,
    ended: np.ndarray,
    truncated: np.ndarray,
    final_obs: np.ndarray,
    final_pot: np.ndarray,
    dealt: np.ndarray,
    scratch: np.ndarray,
    tie_breaks: np.ndarray,
    params: np.ndarray,
) -> None:
    obs = np.zeros(observation.OBS_SIZE, dtype=np.float32)
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    ints = np.zeros(INT_WORK, dtype=np.int64)
    floats = np.zeros(FLOAT_WORK, dtype=np.float64)
    action = np.zeros(1, dtype=np.int64)
    for i in range(rows.shape[0]):
        b = rows[i]
        s = states[b]
        move = 0
        while s[core.S_CUR] != seats[b] and s[core.S_CUR] >= 0 and move < MOVES_PER_TABLE:
            observation.observe_with(s, p, s[core.S_CUR], obs, mask, scratch[b])
            action[0] = heuristic_action(obs, mask, tie_breaks[b, move], params, ints, floats)
            move += 1
            # the env's own step of one row (a view of rows: no copy), settling and dealing anew as in a round
            was_ended = ended[b]
            code = _step_accepted_rows(
                states,
                p,
                rngs,
                template,
                rows[i : i + 1],
                action,
                seats,
                rewards,
                ended,
                truncated,
                final_obs,
                final_pot,
                dealt,
                scratch,
            )
            if code != -1 or ended[b] != was_ended:  # the episode ended: the next one's learner seat is drawn first
                break


class FusedEnv(BourreVectorEnv):
    """``BourreVectorEnv`` whose opponents (the batched heuristic in every other seat) play in ``_play_to_learner``."""

    def _play_opponents(self, rewards: np.ndarray, ended: np.ndarray, truncated: np.ndarray) -> None:
        g = self.game
        heuristic = self._members[0].heuristic  # type: ignore[attr-defined]
        pending = np.flatnonzero(g.states[:, core.S_CUR] != self.seats)
        while pending.size:
            before = ended.copy()
            tie_breaks = heuristic.rng.random((self.num_envs, MOVES_PER_TABLE))
            _play_to_learner(
                g.states,
                g.params,
                g._rngs,
                g._template,
                pending,
                self.seats,
                rewards,
                ended,
                truncated,
                self._final_obs,
                self._final_pot,
                self._dealt,
                g.scratch,
                tie_breaks,
                heuristic._params,
            )
            if self._dealt.any():
                dealt = np.flatnonzero(self._dealt)
                self._dealt[dealt] = False
                self._draw(dealt)
            newly = np.flatnonzero(ended & ~before)
            if newly.size:  # the next episode's learner seat; its opponents play in the next pass
                self._new_seats(newly)
            pending = pending[g.states[pending, core.S_CUR] != self.seats[pending]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1024)
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=6.0, help="timing of each env")
    a = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    steppers = {
        "rounds": vector_stepper(a.tables, a.players, BatchedHeuristicPlayer("default", 0)),
        "fused": vector_stepper(a.tables, a.players, BatchedHeuristicPlayer("default", 0), env_class=FusedEnv),
    }
    rates = interleaved_rates(steppers, a.seconds)
    print(f"{a.tables} tables, {a.players} players, heuristic opponents, random learner actions: learner steps/s")
    print(f"  BourreVectorEnv, opponents in rounds (the env):  {rates['rounds']:10,.0f}")
    ratio = rates["fused"] / rates["rounds"]
    print(f"  one compiled loop per table (this probe):         {rates['fused']:10,.0f}  {ratio:.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
