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

``--mode ppo`` times ``model.learn`` of MaskablePPO with the sb3 trainer's PPO settings (batches of 512, 4
epochs, ``train.sb3.trainer.Args`` defaults) in four loops: the trainer's envs (``make_vec_env``:
``num_envs`` tables of ``PoolVecEnv`` in this process) and the envs it used before (8 SB3
``SubprocVecEnv`` workers, each a ``PoolEnv``: the same opponent pool, Python heuristic, 256 steps each per
rollout, the same 2,048-step rollouts), each with the trainer's network today (``--trunk shared``: one
trunk of 256-256 for the actor and the critic, its first layer sparse) and with its network before
(``--trunk separate``: SB3's two dense 256-256 networks). The ratios are to the trainer as it was before
2026-11-25 (subprocess envs, separate networks). A warm-up rollout runs first; then the four loops take
turns rollout by rollout. No imitation warm start, no snapshots, no evaluation. The share of each loop's
time spent in the PPO update (``model.train``) is printed too: the update does not depend on the env, so
1 / (a subprocess loop's share) bounds the speed-up any env could bring with that network.
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


PPO_CONFIGS = {
    "vec, shared": ("vec", "shared"),
    "vec, separate": ("vec", "separate"),
    "subprocess, separate": ("subprocess", "separate"),
    "subprocess, shared": ("subprocess", "shared"),
}
"""The loops timed by ``--mode ppo``: (envs, trunk). ``vec, shared`` is ``bourre train --trainer sb3`` today;
``subprocess, separate`` is the trainer before 2026-11-25 (its envs and its network)."""


class TimedLearner:
    """A MaskablePPO model on ``venv`` with the trainer's settings, learning one rollout per call; it counts the
    wall time of its calls and of the PPO update (``model.train``) within them."""

    def __init__(self, venv: Any, args: Any, folder: Path) -> None:
        from train.sb3.trainer import build_model

        self.model = build_model(args, venv, folder)
        self.rollout = args.num_envs * args.n_steps
        self.model.learn(self.rollout)  # warm-up: the first reset, compiled code, torch's first calls
        self.steps, self.seconds, self.update = 0, 0.0, 0.0
        train = self.model.train

        def timed_train() -> None:
            started = time.perf_counter()
            train()
            self.update += time.perf_counter() - started

        self.model.train = timed_train  # type: ignore[method-assign]

    def learn_one_rollout(self) -> None:
        start = time.perf_counter()
        self.model.learn(self.rollout, reset_num_timesteps=False)
        self.seconds += time.perf_counter() - start
        self.steps += self.rollout


def subprocess_env(args: Any, seed: int, players: int) -> Callable[[], Any]:
    """The maker of one subprocess env of the trainer before ``BourreVecEnv``."""
    from train.learning.opponent_pool import PoolEnv
    from train.sb3.glue import MaskInInfo

    weights = args.pool_weights()
    return lambda: MaskInInfo(PoolEnv(weights, seed=seed, num_players=players))


def ppo_rates(timesteps: int, players: int) -> dict[str, tuple[float, float]]:
    """(learner steps/s, share of the time in the update) of each loop of ``PPO_CONFIGS``: the loops take turns
    rollout by rollout until each has ``timesteps``, so that the load of a shared machine weighs on them alike."""
    import torch
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from train.sb3.glue import MasksFromInfos
    from train.sb3.trainer import Args, make_vec_env

    torch.set_num_threads(1)
    torch.distributions.Distribution.set_default_validate_args(False)  # as the trainer
    envs: list[Any] = []
    learners: dict[str, TimedLearner] = {}
    try:
        with tempfile.TemporaryDirectory() as folder:
            for name, (kind, trunk) in PPO_CONFIGS.items():
                args = Args(players=(players,), imitation_decisions=0, progress=False, trunk=trunk)
                if kind == "vec":
                    venv = make_vec_env(args)
                else:
                    args = dataclasses.replace(args, num_envs=8, n_steps=256)  # the same 2,048-step rollouts

                    venv = MasksFromInfos(
                        SubprocVecEnv([subprocess_env(args, k, players) for k in range(args.num_envs)])
                    )
                envs.append(venv)
                learners[name] = TimedLearner(venv, args, Path(folder) / name.replace(", ", "_"))
            while min(learner.steps for learner in learners.values()) < timesteps:
                for learner in learners.values():
                    learner.learn_one_rollout()
    finally:
        for venv in envs:
            venv.close()
    return {name: (t.steps / t.seconds, t.update / t.seconds) for name, t in learners.items()}


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
        ppo = ppo_rates(a.ppo_timesteps, a.players)
        before = ppo["subprocess, separate"][0]
        print(f"MaskablePPO, trainer settings, {a.players} players: learner steps/s, ratio, time in the update")
        labels = {
            "vec, shared": "BourreVecEnv, shared sparse trunk (the trainer today)",
            "vec, separate": "BourreVecEnv, separate dense networks",
            "subprocess, separate": "8 SubprocVecEnv PoolEnv workers, separate (before)",
            "subprocess, shared": "8 SubprocVecEnv PoolEnv workers, shared sparse trunk",
        }
        for name, (rate, update) in ppo.items():
            print(f"  {labels[name]:<58}{rate:8,.0f}  {rate / before:5.1f}x  {update:4.0%}")
        for trunk in ("separate", "shared"):
            share = ppo[f"subprocess, {trunk}"][1]
            print(
                f"  limit of any env with the {trunk} network: the update alone, {1 / share:.1f}x the subprocess "
                f"envs' rate with it"
            )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
