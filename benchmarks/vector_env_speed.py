"""Learner steps/s of ``BourreVectorEnv`` against ``BourreSingleAgentEnv``, and MaskablePPO on ``BourreVecEnv``
against SB3 subprocess envs, each pair in one run (ratios on the same machine and load).

    python benchmarks/vector_env_speed.py --tables 1024 --players 5 --seconds 10
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import agents
from agents.batched_players import BatchedRandomPlayer, make_batched
from bourre_env import BourreSingleAgentEnv, BourreVectorEnv


def vector_rate(tables: int, players: int, seconds: float) -> float:
    env = BourreVectorEnv(tables, "heuristic", agent_factory=make_batched, num_players=players)
    env.reset(seed=0)
    learner = BatchedRandomPlayer(0)
    rows = np.arange(tables)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        masks = env.action_masks().view(np.int8)
        env.step(learner.act_batch(masks, masks, rows))
        steps += tables
    return steps / (time.perf_counter() - start)


def single_rate(players: int, seconds: float) -> float:
    env = BourreSingleAgentEnv("heuristic", agent_factory=agents.make, num_players=players)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        steps += 1
        if term or trunc:
            env.reset()
    return steps / (time.perf_counter() - start)


def ppo_rates(players: int, timesteps: int, envs: int) -> tuple[float, float]:
    """MaskablePPO steps/s on BourreVecEnv(256 tables) and on ``envs`` SB3 subprocess envs (the old trainer's)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from train.sb3.glue import MaskInInfo, MasksFromInfos
    from train.sb3.vec_env import BourreVecEnv

    def thunk() -> object:
        return MaskInInfo(BourreSingleAgentEnv("heuristic", agent_factory=agents.make, num_players=players))

    rates = []
    for venv, n_steps in (
        (BourreVecEnv(256, opponents="heuristic", agent_factory=make_batched, num_players=players), 32),
        (MasksFromInfos(SubprocVecEnv([thunk] * envs)), 256),
    ):
        model = MaskablePPO(
            "MlpPolicy",
            venv,
            n_steps=n_steps,
            batch_size=512,
            n_epochs=1,
            seed=0,
            device="cpu",
            policy_kwargs={"net_arch": [256, 256]},
        )
        model.learn(total_timesteps=min(timesteps, 256 * 32))  # warm-up: compile, first rollout
        start = time.perf_counter()
        model.learn(total_timesteps=timesteps, reset_num_timesteps=True)
        rates.append(model.num_timesteps / (time.perf_counter() - start))
        venv.close()
    return rates[0], rates[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1024)
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--ppo-timesteps", type=int, default=32_768, help="0: skip the MaskablePPO pair")
    parser.add_argument("--subprocess-envs", type=int, default=2)
    a = parser.parse_args()
    vec = vector_rate(a.tables, a.players, a.seconds)
    single = single_rate(a.players, a.seconds)
    print(f"BourreVectorEnv ({a.tables} tables, {a.players} players, heuristic opponents): {vec:,.0f} learner steps/s")
    print(
        f"BourreSingleAgentEnv (same opponents):                  {single:,.0f} learner steps/s  "
        f"ratio {vec / single:.1f}x"
    )
    if a.ppo_timesteps:
        ours, sub = ppo_rates(a.players, a.ppo_timesteps, a.subprocess_envs)
        print(f"MaskablePPO on BourreVecEnv (256 tables):   {ours:,.0f} steps/s")
        print(f"MaskablePPO on {a.subprocess_envs} SubprocVecEnv envs: {sub:,.0f} steps/s  ratio {ours / sub:.1f}x")


if __name__ == "__main__":
    main()
