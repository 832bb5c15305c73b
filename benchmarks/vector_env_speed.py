"""Learner steps/s of ``BourreVectorEnv`` against ``BourreSingleAgentEnv``, and of MaskablePPO training on
``BourreVecEnv`` against the subprocess envs the sb3 trainer used before, each pair in one run (the ratios
come from the same machine under the same load; the load average is printed with them).

    python benchmarks/vector_env_speed.py --tables 1024 --players 5 --seconds 10      # --mode env
    python benchmarks/vector_env_speed.py --mode ppo --ppo-timesteps 16384

``--mode env`` (the default) steps the vector env with uniformly random legal learner actions against
heuristic opponents, twice: the heuristic deciding from the state rows (``act_game``: one compiled
call observes and decides row by row, the env's fast path) and from observation arrays the env builds
(``act_batch``, the path of any batched player); and ``BourreSingleAgentEnv`` with the Python
heuristic. The three take turns in half-second slices until each had ``--seconds``, so that the
load of a shared machine weighs on them alike. It also prints the *limit* the heuristic sets: opponent
decisions per learner step (``d``) times the compiled heuristic's time per decision from the state
rows (``t``, timed alone on the same tables), 1 / (d t) learner steps/s for a vector env whose every
other cost were nil; and the same with the heuristic's decision alone on observations already built
(what no encoding could go below). ``--threads T`` adds the default path on T numba threads
(``BourreVectorEnv(threads=T)``: the env's steps, its observations and the heuristic's decisions on
shares of the rows) to the rotation, with its ratio to one thread.

``--mode ppo`` times ``model.learn`` of MaskablePPO with the sb3 trainer's network and PPO settings
(two hidden layers of 256, batches of 512, 4 epochs, ``train.sb3.trainer.Args`` defaults) on the
trainer's envs (``make_vec_env``: ``num_envs`` tables of ``PoolVecEnv`` in this process) and on the
envs it used before: 8 SB3 ``SubprocVecEnv`` workers, each a ``PoolEnv`` (the same opponent pool,
Python heuristic), 256 steps each per rollout (the same 2,048-step rollouts). A warm-up rollout
runs first; then whole rollouts are timed. No imitation warm start, no snapshots, no evaluation. The
share of each loop's time spent in the PPO update (``model.train``) is printed too: the update does not
depend on the env, so 1 / (the subprocess loop's share) bounds the speed-up any env could bring.
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import dataclasses
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import agents
from agents.batched_players import BatchedHeuristicPlayer, BatchedRandomPlayer
from bourre_env import BourreSingleAgentEnv, BourreVectorEnv, batch, core


class ObservationPath:
    """The batched heuristic made to take the observation path (``act_batch`` only)."""

    def __init__(self, player: BatchedHeuristicPlayer) -> None:
        self.player = player

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return self.player.act_batch(observations, masks, rows)


class Counting:
    """The heuristic's state path, counting the decisions it makes."""

    def __init__(self, player: BatchedHeuristicPlayer) -> None:
        self.player, self.decisions = player, 0

    def act_game(self, game: Any, rows: np.ndarray) -> np.ndarray:
        self.decisions += rows.shape[0]
        return self.player.act_game(game, rows)


def vector_stepper(
    tables: int, players: int, opponent: Any, threads: int = 1, env_class: type[BourreVectorEnv] = BourreVectorEnv
) -> Callable[[], int]:
    """One learner step of the vector env at every table with random legal actions; returns the steps made."""
    env = env_class(tables, opponent, num_players=players, threads=threads)
    env.reset(seed=0)
    learner = BatchedRandomPlayer(0)
    rows = np.arange(tables)

    def step() -> int:
        masks = env.action_masks().view(np.int8)
        env.step(learner.act_batch(masks, masks, rows))
        return tables

    step()  # compiled code warmed up
    return step


def single_stepper(players: int) -> Callable[[], int]:
    """One learner step of ``BourreSingleAgentEnv`` with a random legal action (a reset where the episode ended)."""
    env = BourreSingleAgentEnv("heuristic", agent_factory=agents.make, num_players=players)
    env.reset(seed=0)
    rng = np.random.default_rng(0)

    def step() -> int:
        _, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if term or trunc:
            env.reset()
        return 1

    return step


def interleaved_rates(steppers: dict[str, Callable[[], int]], seconds: float, slice_s: float = 0.5) -> dict[str, float]:
    """Learner steps/s of each stepper, run in turn in slices of ``slice_s`` until each had ``seconds``: a change
    of the machine's load during the run falls on all of them alike."""
    steps = dict.fromkeys(steppers, 0)
    spent = dict.fromkeys(steppers, 0.0)
    while min(spent.values()) < seconds:
        for name, step in steppers.items():
            start = time.perf_counter()
            while time.perf_counter() - start < slice_s:
                steps[name] += step()
            spent[name] += time.perf_counter() - start
    return {name: steps[name] / spent[name] for name in steppers}


def _per_row(call: Any, rows: int) -> float:
    """Seconds per row of ``call()``, repeated for two seconds."""
    repeats, start = 0, time.perf_counter()
    while time.perf_counter() - start < 2.0:
        call()
        repeats += 1
    return (time.perf_counter() - start) / (repeats * rows)


def heuristic_limit(tables: int, players: int) -> tuple[float, float, float]:
    """(opponent decisions per learner step, seconds per decision of the heuristic's state path, seconds per
    decision of the compiled heuristic alone on observations already built)."""
    counting = Counting(BatchedHeuristicPlayer("default", 0))
    env = BourreVectorEnv(tables, counting, num_players=players)
    env.reset(seed=1)
    learner = BatchedRandomPlayer(1)
    rows = np.arange(tables)
    for _ in range(50):
        masks = env.action_masks().view(np.int8)
        env.step(learner.act_batch(masks, masks, rows))
    per_step = counting.decisions / (50 * tables)
    # the same tables with every seat to act: the game's current seats, which are the learner's here; the
    # heuristic reads them as it reads an opponent's (a decision is a decision)
    game, player = env.game, counting.player
    live = np.flatnonzero(game.states[:, core.S_CUR] >= 0)
    obs, masks = game.observations()[live], game.legal_masks()[live]
    state_path = _per_row(lambda: player.act_game(game, live), live.shape[0])
    decide_only = _per_row(lambda: player.heuristic.act(obs, masks), live.shape[0])
    return per_step, state_path, decide_only


def ppo_rate(venv: Any, args: Any, timesteps: int) -> tuple[float, float]:
    """MaskablePPO learner steps/s on ``venv`` with the trainer's model, whole rollouts after a warm-up one, and the
    share of that time spent in the PPO update (``model.train``), which no env makes shorter."""
    import torch

    from train.sb3.trainer import build_model

    torch.set_num_threads(1)
    torch.distributions.Distribution.set_default_validate_args(False)  # as the trainer
    with tempfile.TemporaryDirectory() as folder:
        model = build_model(args, venv, Path(folder))
        rollout = args.num_envs * args.n_steps
        model.learn(rollout)  # warm-up: the first reset, compiled code, torch's first calls
        update = [0.0]
        train = model.train

        def timed_train() -> None:
            started = time.perf_counter()
            train()
            update[0] += time.perf_counter() - started

        model.train = timed_train  # type: ignore[method-assign]
        start = time.perf_counter()
        model.learn(timesteps, reset_num_timesteps=False)
        seconds = time.perf_counter() - start
        return (model.num_timesteps - rollout) / seconds, update[0] / seconds


def ppo_rates(timesteps: int, players: int) -> tuple[tuple[float, float], tuple[float, float]]:
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from train.ppo.opponent_pool import PoolEnv
    from train.sb3.glue import MaskInInfo, MasksFromInfos
    from train.sb3.trainer import Args, make_vec_env

    args = Args(players=(players,), imitation_decisions=0, progress=False)
    ours = make_vec_env(args)
    try:
        vec = ppo_rate(ours, args, timesteps)
    finally:
        ours.close()
    before = dataclasses.replace(args, num_envs=8, n_steps=256)

    def thunk(k: int) -> Any:
        return lambda: MaskInInfo(PoolEnv(before.pool_weights(), seed=k, num_players=players))

    sub = MasksFromInfos(SubprocVecEnv([thunk(k) for k in range(before.num_envs)]))
    try:
        old = ppo_rate(sub, before, timesteps)
    finally:
        sub.close()
    return vec, old


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("env", "ppo"), default="env")
    parser.add_argument("--tables", type=int, default=1024)
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=10.0, help="timing of each env (--mode env)")
    parser.add_argument("--ppo-timesteps", type=int, default=16_384, help="steps timed on each side (--mode ppo)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="also time the default path on this many numba threads (BourreVectorEnv(threads=T); needs "
        "NUMBA_NUM_THREADS >= T in the environment: NUMBA_NUM_THREADS=2 python benchmarks/vector_env_speed.py "
        "--threads 2)",
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = make_parser()
    a = parser.parse_args(argv)
    if not 1 <= a.threads <= batch.max_threads():
        parser.error(f"--threads: 1..{batch.max_threads()} (NUMBA_NUM_THREADS; set it in the environment)")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, CPUs: {os.cpu_count()}")
    if a.mode == "env":
        rates = interleaved_rates(
            {
                "state": vector_stepper(a.tables, a.players, BatchedHeuristicPlayer("default", 0)),
                "observations": vector_stepper(
                    a.tables, a.players, ObservationPath(BatchedHeuristicPlayer("default", 0))
                ),
                "single": single_stepper(a.players),
            }
            | (
                {"threads": vector_stepper(a.tables, a.players, BatchedHeuristicPlayer("default", 0), a.threads)}
                if a.threads > 1
                else {}
            ),
            a.seconds,
        )
        fast, slow, single = rates["state"], rates["observations"], rates["single"]
        per_step, per_decision, decide_only = heuristic_limit(a.tables, a.players)
        print(f"{a.tables} tables, {a.players} players, heuristic opponents, random learner actions: learner steps/s")
        print(f"  BourreVectorEnv, heuristic from the state rows (act_game): {fast:12,.0f}  {fast / single:6.1f}x")
        print(f"  BourreVectorEnv, heuristic from observations (act_batch):  {slow:12,.0f}  {slow / single:6.1f}x")
        if a.threads > 1:
            threaded = rates["threads"]
            label = f"  the same as the first, on {a.threads} threads:"
            print(f"{label:<61}{threaded:12,.0f}  {threaded / single:6.1f}x  ({threaded / fast:.2f}x one thread)")
        print(f"  BourreSingleAgentEnv, Python heuristic:                    {single:12,.0f}  {1.0:6.1f}x")
        print(
            f"  limit of the heuristic: {per_step:.2f} opponent decisions per learner step x "
            f"{per_decision * 1e6:.2f} us each = {1 / (per_step * per_decision):,.0f} learner steps/s"
        )
        print(
            f"  (deciding alone, observations given: {decide_only * 1e6:.2f} us each = "
            f"{1 / (per_step * decide_only):,.0f} learner steps/s)"
        )
    else:
        (vec, vec_update), (old, old_update) = ppo_rates(a.ppo_timesteps, a.players)
        print(f"MaskablePPO, trainer settings, {a.players} players: learner steps/s, share of the time in the update")
        print(f"  on BourreVecEnv (PoolVecEnv, 64 tables x 32 steps):{vec:8,.0f}  {vec / old:5.1f}x  {vec_update:4.0%}")
        print(f"  on 8 SubprocVecEnv PoolEnv workers (256 steps):    {old:8,.0f}  {1.0:5.1f}x  {old_update:4.0%}")
        print(
            f"  limit of any env: the update alone, {1 / old_update:.1f}x the subprocess envs' rate "
            f"(their loop's time without its rollouts)"
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
