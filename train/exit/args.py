"""The expert-iteration trainer's arguments: one dataclass, a docstring per field, read by tyro
(``bourre train --trainer exit --help``). What each round does with them is ``train.exit.trainer``."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import agents
from agents.ppo import SHIPPED_MODEL, load_policy
from agents.search.pimc import PIMCAgent
from train.eval.jobs import BACKENDS
from train.run_dir import args_from_json, args_to_json
from train.schedule import check_session

__all__ = ["Args", "POLICY_SLOT"]

POLICY_SLOT = "{policy}"
"""Written in ``--search``, it stands for the policy file of the current round's network."""


@dataclasses.dataclass
class Args:
    seed: int = 0
    """seed of the deals, the searches, the network's training and the evaluations"""
    run_dir: Path | None = None
    """run folder (default: runs/exit/seed{seed}); it holds the rounds' data and policies, checkpoints, logs and
    the report"""
    resume: bool = False
    """continue the run in run_dir from its last finished round"""
    overwrite: bool = False
    """start a new run in a run_dir that holds one, deleting the earlier run's files first (else a run_dir that is
    not empty is refused)"""
    progress: bool = True
    """show progress bars"""

    rounds: int = 3
    """rounds of generation, training and evaluation"""
    players: tuple[int, ...] = (5,)
    """table sizes of the self-play deals (each size gets --deals deals per round)"""
    deals: int = 300
    """self-play deals per table size and round"""
    session: int = 1
    """deals per game: 1 only. Expert iteration cannot train on sessions of K deals with the pot carried: its
    targets are the search's values of each action, chips at the end of the deal (pimc plays every world to the
    deal's end), which count a bourré payment as lost where in a session it is a stake in the next pot
    (docs/training.md: sessions with the other trainers; bourre train --session K trains on them)"""
    search: str = "pimc:32,rollout=ppo:" + POLICY_SLOT
    """the expert: a pimc spec (docs/search.md) in which {policy} is replaced by the current network's policy file
    (pimc:32 for heuristic rollouts, pimc:64,rollout=ppo:{policy},model=ppo:{policy},infer=8, ...)"""
    search_seats: int = 1
    """seats of each deal where the search acts (a different seat each deal); the current network plays the others"""
    search_share: float = 1.0
    """share of the search seats' decisions that are searched (drawn decision by decision); the network takes the
    rest"""
    init_policy: Path = SHIPPED_MODEL
    """policy file (agents.ppo format) of the first round's network; its layer widths are the network's"""

    temperature: float = 0.1
    """temperature, in chips, of the softmax of the search's action values that the policy is fitted to (the best
    two candidates of a 5-player decision are a median 0.16 chips apart: at 1.0 most targets are near uniform)"""
    value_scale: float = 0.1
    """the critic predicts the deal's chips times this (0.1: the batched PPO trainer's reward scale)"""
    vf_coef: float = 0.5
    """weight of the value loss"""
    epochs: int = 4
    """passes over each round's training data"""
    minibatch_size: int = 256
    """decisions per minibatch"""
    learning_rate: float = 1e-4
    """Adam learning rate (3e-4 broke the shipped network on a round of 2,655 trick-play decisions: the decisions no
    search labelled drifted with the shared trunk; docs/expert_iteration.md)"""
    max_grad_norm: float = 0.5
    """gradient clipping"""
    replay_rounds: int = 1
    """train on the searched decisions of this many latest rounds"""
    torch_threads: int = 1
    """torch threads of the training"""

    workers: int = 1
    """processes of the generation and the evaluations (the results do not depend on it)"""
    backend: str = "local"
    """where generation and evaluation jobs run: local (processes on this machine) or ray (Ray tasks)"""
    address: str | None = None
    """with --backend ray: the cluster (auto, ray://HOST:10001); default: a local Ray instance of --workers CPUs"""
    eval_deals: int = 200
    """deals per table size of each round's evaluations (against the heuristic field and the previous network)"""
    eval_players: tuple[int, ...] = (5,)
    """table sizes of the evaluations"""
    search_eval_deals: int = 50
    """deals per table size of each round's evaluations of its search (the expert the round learned from) against
    the heuristic field and the round's starting network, on the first of the evaluations' deals (0: none; a
    searched decision costs a few hundred of the network's)"""

    def search_spec(self, policy: Path | str) -> str:
        """``search`` with the policy file of the current network in place of ``{policy}``."""
        return self.search.replace(POLICY_SLOT, str(policy))

    def validate(self) -> None:
        """``ValueError`` naming the first bad field; the search spec and the first policy are built once here."""
        for name in ("rounds", "deals", "search_seats", "epochs", "minibatch_size", "replay_rounds", "workers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected at least 1, got {getattr(self, name)}")
        if check_session(self.session) > 1:
            raise ValueError(
                f"session: expert iteration trains on single deals only, got {self.session}: the search's values "
                "that it learns are chips at the end of the deal (pimc plays every world to the deal's end) and "
                "cannot value a carried pot; bourre train --session K (or --trainer sb3|dmc) trains on sessions"
            )
        for name in ("eval_deals", "search_eval_deals", "torch_threads", "seed"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: expected >= 0, got {getattr(self, name)}")
        for name in ("players", "eval_players"):
            sizes = getattr(self, name)
            if not sizes or any(not 2 <= n <= 8 for n in sizes):
                raise ValueError(f"{name}: table sizes between 2 and 8, got {sizes}")
        if self.search_seats > min(self.players):
            raise ValueError(
                f"search_seats: at most the smallest table size, {min(self.players)}, got {self.search_seats}"
            )
        if not 0 < self.search_share <= 1:
            raise ValueError(f"search_share: expected a share in (0, 1], got {self.search_share}")
        for name in ("temperature", "value_scale", "learning_rate", "max_grad_norm"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name}: expected a finite number > 0, got {value}")
        if not (math.isfinite(self.vf_coef) and self.vf_coef >= 0):
            raise ValueError(f"vf_coef: expected a finite number >= 0, got {self.vf_coef}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend: expected one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.address is not None and self.backend != "ray":
            raise ValueError("address: only with --backend ray")
        try:
            load_policy(self.init_policy)
        except ValueError as e:
            raise ValueError(f"init_policy: {e}") from None
        # built now, with the first policy, so that a bad spec is refused before any worker starts
        spec = self.search_spec(self.init_policy)
        try:
            expert = agents.make(spec, self.seed)
        except ValueError as e:
            raise ValueError(f"search: {self.search!r}: {e}") from None
        if not isinstance(expert, PIMCAgent):
            raise ValueError(f"search: expected a pimc spec (pimc:WORLDS,...), got {self.search!r}")

    def to_json(self) -> dict[str, Any]:
        return args_to_json(self)

    @classmethod
    def from_json(cls, data: Any, source: Path | str = "args.json") -> Args:
        """The arguments saved in ``source`` (read as JSON into ``data``); ``ValueError`` naming ``source`` if a field
        is unknown, of the wrong type or invalid."""
        args: Args = args_from_json(cls, data, source)
        return args
