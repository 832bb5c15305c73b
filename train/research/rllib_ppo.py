"""RLlib PPO on ``bourre_v0``: one shared policy for every seat, the action mask applied in the model.

    python -m train.research.rllib_ppo --players 5 --iterations 50                    # a local Ray instance
    python -m train.research.rllib_ppo --players 5 --iterations 500 --address auto --env-runners 63  # a cluster

An example of training on Ray's RLlib (its current API stack: RLModule, EnvRunner, Learner) rather
than with the project's own trainers (``train.ppo.trainer``); it needs ``pip install "bourre-rl[ray]"``.

* **Environment**: the PettingZoo AEC env ``bourre_env.env(rules=preset, num_players=players)``
  through RLlib's ``PettingZooEnv`` wrapper, which turns it into a turn-based ``MultiAgentEnv``: each
  step returns the observation of the one player to act, and a player's reward (its chips for the
  deal) reaches it at its next observation or when the deal ends, whoever moved last.
* **Model** (``MaskedPPOModule``): RLlib's default PPO module (an MLP encoder, policy and value heads)
  built on the observation vector alone; the ``action_mask`` half of the observation dict sets the
  logits of illegal actions to the lowest float before any distribution is formed, in exploration,
  inference and training alike, so an illegal action has probability 0 and the env, which raises on
  one, never sees one.
* **Self-play**: every seat maps to the one module ``shared``, so all seats' decisions train it.

Arguments: ``Args`` below (``--help``). Each iteration samples ``batch_size`` env steps with
``env_runners`` EnvRunner actors (0: in the driver) and runs ``epochs`` passes of minibatches of
``minibatch_size``. Ctrl-C ends the iteration under way and goes on as at the end (exit status 130). At the end
the script saves a checkpoint to ``run_dir`` (the trained module alone:
``RLModule.from_checkpoint(run_dir / "learner_group/learner/rl_module/shared")``) and plays ``check_deals``
deals with the trained module, sampling every seat's action, and reports how many were illegal: 0 is the
only correct answer (``legal_action_check``).

On a cluster, ``--address auto`` from a node of the cluster (or ``ray://HOST:10001``) connects to it;
each EnvRunner takes one CPU, so ``--env-runners`` is the cluster's CPUs less the driver's. Every node
needs bourre-rl and the ``ray`` extra installed. A fixed ``seed`` seeds the module, the env runners and
the check; RLlib does not promise bit-identical runs across cluster layouts.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.utils.metrics import (
    ENV_RUNNER_RESULTS,
    ENV_RUNNER_SAMPLING_TIMER,
    EPISODE_LEN_MEAN,
    LEARNER_UPDATE_TIMER,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    TIMERS,
)
from ray.tune.registry import register_env
from tqdm.auto import tqdm

import bourre_env
from bourre_env.core.rules import Rules
from bourre_env.words import plural
from train.runs import CtrlC
from train.table import Deal, Decision, drive, game

__all__ = ["Args", "MaskedPPOModule", "build_config", "legal_action_check", "main", "make_env", "train"]

POLICY = "shared"
"""The module id that every seat maps to."""


@dataclasses.dataclass
class Args:
    players: int = 3
    """table size (2-8)"""
    preset: str = "standard"
    """rule preset of bourre_env.core.rules.presets"""
    iterations: int = 20
    """training iterations (one sampling round and one update each)"""
    seed: int = 0
    """seed of the module's initialisation, the env runners' envs and sampling, and the legal-action check"""
    address: str | None = None
    """Ray cluster to run on ("auto" from a cluster node, "ray://HOST:10001"); default: a local instance"""
    num_cpus: int | None = None
    """CPUs of the local Ray instance (default: all of this machine's); ignored with --address"""
    env_runners: int = 1
    """EnvRunner actors sampling in parallel, one CPU each (0: sample in the driver process)"""
    envs_per_runner: int = 8
    """environments stepped together by each EnvRunner (one forward pass for all of them: 8 samples about 6x
    faster than 1)"""
    batch_size: int = 4000
    """env steps (decisions of all seats) sampled per iteration"""
    minibatch_size: int = 256
    """decisions per gradient step"""
    epochs: int = 4
    """passes over each iteration's batch"""
    lr: float = 3e-4
    """Adam learning rate"""
    entropy_coeff: float = 0.01
    """entropy bonus"""
    hidden: tuple[int, ...] = (256, 256)
    """hidden layer widths of the encoder (shared by the policy and value heads)"""
    run_dir: Path | None = None
    """folder of the checkpoint (default: runs/rllib/{players}p_seed{seed})"""
    check_deals: int = 20
    """deals played by the trained module after training, every action checked against the mask"""
    progress: bool = True
    """show a progress bar over the iterations"""

    def check(self) -> None:
        """``ValueError`` naming the first bad argument."""
        Rules.from_options(self.preset, num_players=self.players)  # an unknown preset or table size fails here
        for name in ("iterations", "batch_size", "minibatch_size", "epochs", "envs_per_runner", "check_deals"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected at least 1, got {getattr(self, name)}")
        if self.env_runners < 0 or self.seed < 0:
            raise ValueError(f"env_runners and seed: expected >= 0, got {self.env_runners} and {self.seed}")
        if self.minibatch_size > self.batch_size:
            raise ValueError(f"minibatch_size {self.minibatch_size} exceeds batch_size {self.batch_size}")
        if not self.hidden or min(self.hidden) < 1:
            raise ValueError(f"hidden: expected positive layer widths, got {self.hidden}")


# ---------------------------------------------------------------------------- environment
def make_env(config: dict[str, Any]) -> Any:
    """RLlib's env creator: ``bourre_v0`` with ``config["preset"]`` and ``config["players"]`` as a MultiAgentEnv."""
    return PettingZooEnv(bourre_env.env(rules=config.get("preset", "standard"), num_players=config["players"]))


# ---------------------------------------------------------------------------- the masking module
class MaskedPPOModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO module on ``observation``, with illegal actions' logits pushed to the lowest float.

    The env's observation space is a Dict of ``observation`` (the vector) and ``action_mask``; the networks are
    built for the vector alone, and every forward pass splits the batch's observation dict into the two."""

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not (
            isinstance(observation_space, gym.spaces.Dict)
            and {"observation", "action_mask"} <= set(observation_space.spaces)
        ):
            raise ValueError(
                f"MaskedPPOModule: expected a Dict space with 'observation' and 'action_mask', got {observation_space}"
            )
        self.space_with_mask = observation_space
        # The catalog builds the encoder for the space it is given: the vector's, without the mask.
        super().__init__(observation_space=observation_space["observation"], **kwargs)

    def setup(self) -> None:
        super().setup()
        self.observation_space = self.space_with_mask  # what the env runners check observations against

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[torch.Tensor, dict[str, Any]]:
        """The mask, and a shallow copy of ``batch`` whose observation is the vector (the batch itself is left
        alone: RLlib may hand the same batch to the value function and to the training pass)."""
        obs = batch[Columns.OBS]
        return obs["action_mask"], {**batch, Columns.OBS: obs["observation"]}

    @staticmethod
    def _masked(out: dict[str, Any], mask: torch.Tensor) -> dict[str, Any]:
        logits = out[Columns.ACTION_DIST_INPUTS]
        lowest = torch.finfo(logits.dtype).min
        out[Columns.ACTION_DIST_INPUTS] = torch.where(mask.bool(), logits, torch.full_like(logits, lowest))
        return out

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = self._split(batch)
        return self._masked(super()._forward_inference(inner, **kwargs), mask)

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = self._split(batch)
        return self._masked(super()._forward_exploration(inner, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, inner = self._split(batch)
        return self._masked(super()._forward_train(inner, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if embeddings is None and isinstance(batch[Columns.OBS], dict):
            batch = self._split(batch)[1]
        return super().compute_values(batch, embeddings)


# ---------------------------------------------------------------------------- configuration
def build_config(args: Args) -> Any:
    """The ``PPOConfig`` of a run: the env, one shared masked module for every seat, the sampling and the update."""
    register_env("bourre_v0", make_env)
    return (
        PPOConfig()
        # RLlib's env check steps the env with an action drawn from the whole action space, mask ignored, and the env
        # rejects an illegal action with a ValueError (the error we rely on to catch a policy that picks one).
        .environment(
            "bourre_v0", env_config={"players": args.players, "preset": args.preset}, disable_env_checking=True
        )
        .env_runners(
            num_env_runners=args.env_runners, num_envs_per_env_runner=args.envs_per_runner, num_cpus_per_env_runner=1
        )
        .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, episode, **kwargs: POLICY)
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    POLICY: RLModuleSpec(
                        module_class=MaskedPPOModule,
                        model_config={
                            "fcnet_hiddens": list(args.hidden),
                            "fcnet_activation": "relu",
                            "vf_share_layers": True,
                        },
                    )
                }
            )
        )
        .training(
            train_batch_size_per_learner=args.batch_size,
            minibatch_size=args.minibatch_size,
            num_epochs=args.epochs,
            lr=args.lr,
            entropy_coeff=args.entropy_coeff,
            vf_loss_coeff=0.5,
        )
        .debugging(seed=args.seed)
    )


# ---------------------------------------------------------------------------- the legality check
def legal_action_check(module: Any, players: int, preset: str, deals: int, seed: int) -> tuple[int, int]:
    """``(decisions, illegal)``: ``deals`` deals played by ``module`` in every seat, each action sampled from its
    exploration output; an illegal choice is counted, and the first legal action played in its place."""
    env = bourre_env.env(rules=preset, num_players=players)
    generator = torch.Generator().manual_seed(seed)
    decisions = illegal = 0

    def decide(decision: Decision) -> int:
        nonlocal decisions, illegal
        obs = decision.observation
        batch = {
            Columns.OBS: {
                "observation": torch.as_tensor(obs["observation"])[None],
                "action_mask": torch.as_tensor(obs["action_mask"])[None],
            }
        }
        with torch.no_grad():
            logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS][0]
        action = int(torch.multinomial(torch.softmax(logits.double(), -1), 1, generator=generator))
        decisions += 1
        if not obs["action_mask"][action]:
            illegal += 1
            action = int(np.flatnonzero(obs["action_mask"])[0])
        return action

    rules = env.unwrapped.rules
    for deal in range(deals):
        drive(game(env, Deal(rules, env_seed=seed * 100_003 + deal), ["rllib"] * players, f"deal {deal}"), decide)
    return decisions, illegal


# ---------------------------------------------------------------------------- the run
def _metric(result: dict[str, Any], *keys: str) -> float | None:
    for key in keys:
        result = result.get(key, {}) if isinstance(result, dict) else {}
    return float(result) if isinstance(result, int | float) else None


def train(args: Args) -> dict[str, Any]:
    """Train as ``args`` say (module docstring); the summary that ``main`` prints."""
    args.check()
    run_dir = (args.run_dir or Path("runs/rllib") / f"{args.players}p_seed{args.seed}").resolve()
    started_ray = not ray.is_initialized()
    if started_ray:
        if args.address is None:
            ray.init(num_cpus=args.num_cpus, include_dashboard=False, configure_logging=False)
        else:
            ray.init(address=args.address, configure_logging=False)
    try:
        algo = build_config(args).build_algo()
        started = time.perf_counter()
        result: dict[str, Any] = {}
        done = 0
        bar = tqdm(total=args.iterations, disable=not args.progress, unit="iter", desc="rllib ppo")
        with CtrlC() as ctrl_c, bar:
            # Ctrl-C ends the iteration under way, then the run saves and checks as at its end
            while done < args.iterations and not ctrl_c.pressed:
                result = algo.train()
                done += 1
                ret = _metric(result, ENV_RUNNER_RESULTS, "agent_episode_returns_mean", "player_0")
                bar.set_postfix_str(f"return p0 {ret:+.2f}" if ret is not None else "")
                bar.update()
        if ctrl_c.pressed:
            print(
                f"interrupted after {done} of {plural(args.iterations, 'iteration')}: saving what was learned",
                file=sys.stderr,
            )
        elapsed = time.perf_counter() - started
        checkpoint = algo.save_to_path(str(run_dir))
        decisions, illegal = legal_action_check(
            algo.get_module(POLICY), args.players, args.preset, args.check_deals, args.seed
        )
        algo.stop()
    finally:
        if started_ray:
            ray.shutdown()
    steps = _metric(result, ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME)
    sampled = steps / done if steps and done else None  # per iteration: batch_size, give or take an episode
    sampling = _metric(result, TIMERS, ENV_RUNNER_SAMPLING_TIMER)  # RLlib's running mean, seconds per iteration
    return {
        "iterations": done,
        "interrupted": ctrl_c.pressed,
        "env_steps": steps,
        "seconds": elapsed,
        "env_steps_per_second": steps / elapsed if steps else None,
        "sampling_seconds_per_iteration": sampling,
        "update_seconds_per_iteration": _metric(result, TIMERS, LEARNER_UPDATE_TIMER),
        "env_steps_per_second_per_runner": sampled / sampling / max(args.env_runners, 1)
        if sampled and sampling
        else None,
        "episode_length": _metric(result, ENV_RUNNER_RESULTS, EPISODE_LEN_MEAN),
        "return_player_0": _metric(result, ENV_RUNNER_RESULTS, "agent_episode_returns_mean", "player_0"),
        "checkpoint": str(checkpoint),
        "check_decisions": decisions,
        "check_illegal": illegal,
    }


def main(argv: list[str] | None = None) -> int:
    import tyro

    args = tyro.cli(Args, args=argv, description=__doc__)
    try:
        summary = train(args)
    except ValueError as err:
        print(f"rllib_ppo: error: {err}", file=sys.stderr)
        return 2
    for key, value in summary.items():
        print(f"{key:>31}: {value:.4g}" if isinstance(value, float) else f"{key:>31}: {value}")
    return 1 if summary["check_illegal"] else 130 if summary["interrupted"] else 0


if __name__ == "__main__":
    sys.exit(main())
