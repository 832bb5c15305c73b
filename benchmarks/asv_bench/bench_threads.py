"""The threaded paths: ``BourreVectorEnv`` and ``BatchGame`` on every core this process may use, on the wall clock.

The rest of the suite times one thread on the process's CPU time. These benchmarks time what threads buy, which
only the wall clock shows (two threads' CPU time adds up), and what the threads' waiting between calls costs: the
vector env makes dozens of threaded calls per learner step, and a change of the threading layer's wait policy moved
it by a quarter (docs/vector_env.md, "Threads on a quiet machine"). numba's pool is the cores of the affinity mask
(``benchmarks/asv_bench/__init__.py``); a machine with one usable core skips them (``NotImplementedError``).

On a shared machine a threaded call waits for a thread that is off its core, so these samples swing more than the
single-thread ones: compare two commits with ``--interleave-rounds`` on a quiet machine, and read
``benchmarks/commits_speed.py``'s alternated figures beside them."""

from __future__ import annotations

import os
import time
from typing import Any

from ._common import WARM_DECISIONS, Positions, Suite, need, once


def pool_threads() -> int:
    """The threads a threaded benchmark runs on: the cores this process may use, up to numba's pool; skips (asv's
    ``NotImplementedError``) on one."""
    import numba

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    threads = min(cores, int(numba.config.NUMBA_NUM_THREADS))
    if threads < 2:
        raise NotImplementedError(
            f"one thread to run on (cores {cores}, NUMBA_NUM_THREADS {numba.config.NUMBA_NUM_THREADS})"
        )
    return threads


class Threaded(Suite):
    """The wall clock, and a benchmark of the threaded paths' own: one timed call per sample as elsewhere."""

    timer = staticmethod(time.perf_counter)


def threaded_positions(players: int, tables: int, threads: int) -> Positions:
    """``tables`` tables at ``players`` players stepped on ``threads`` threads, a few deals in, restored before every
    call (as ``_common.positions``, whose game runs on one thread); skips a commit whose ``BatchGame`` has no
    threads."""

    def make() -> Positions:
        batch = need("bourre_env.batch")
        try:
            game = batch.BatchGame(batch_size=tables, seed=0, num_players=players, threads=threads)
        except (TypeError, ValueError) as exc:  # before BatchGame(threads=...): an unknown keyword or rule option
            raise NotImplementedError(f"this commit's BatchGame has no threads: {exc}") from None
        game.random_play(WARM_DECISIONS)
        return Positions(game)

    found: Positions = once(("threaded positions", players, tables, threads), make)
    found.restore()
    return found


class VectorEnvThreads(Threaded):
    """``BourreVectorEnv(threads=T).step`` at 1,024 tables, 5 players, heuristic opponents (batched, from the state):
    one learner step a call, the first legal action of every table's learner; the tables go on from call to call."""

    params = [5]
    param_names = ["players"]

    def setup(self, players: int) -> None:
        threads = pool_threads()
        self.env = once(("vector_env threads", players, self.tables, threads), lambda: self._make(players, threads))

    def _make(self, players: int, threads: int) -> Any:
        vector_env = need("bourre_env.vector_env")
        factory = need("agents.batched_players").make_batched
        env = vector_env.BourreVectorEnv(
            num_envs=self.tables, num_players=players, opponents="heuristic", agent_factory=factory, threads=threads
        )
        env.reset(seed=0)
        env.step(env.action_masks().argmax(axis=1))  # compiles the step's kernels (untimed)
        return env

    def time_step(self, players: int) -> None:
        self.env.step(self.env.action_masks().argmax(axis=1))


class RandomPlayThreads(Threaded):
    """``BatchGame(threads=T).random_play(DECISIONS)`` at 1,024 tables without observations: long calls, where the
    threads' wake-up is a small part."""

    params = [5]
    param_names = ["players"]
    DECISIONS = 16

    def setup(self, players: int) -> None:
        self.game = threaded_positions(players, self.tables, pool_threads()).game

    def time_random_play(self, players: int) -> None:
        self.game.random_play(self.DECISIONS)


class StepThreads(Threaded):
    """``BatchGame(threads=T)``: ``STEPS`` rounds of masks, observations and a step of the first legal action at 1,024
    tables: short calls, a few milliseconds each, the vector env's pattern, where the threads' wake-up weighs."""

    params = [5]
    param_names = ["players"]
    STEPS = 8

    def setup(self, players: int) -> None:
        self.game = threaded_positions(players, self.tables, pool_threads()).game
        self.buffers = once(
            ("step threads buffers", players, self.tables), lambda: (self.game.legal_masks(), self.game.observations())
        )

    def time_step(self, players: int) -> None:
        masks, observations = self.buffers
        for _ in range(self.STEPS):
            self.game.legal_masks(out=masks)
            self.game.observations(out=observations)
            self.game.step(masks.argmax(axis=1))
