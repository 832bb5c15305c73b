"""The Deep Monte-Carlo trainer's arguments: one dataclass, a docstring per field, read by tyro (``bourre train
--trainer dmc --help``). What each iteration does with them is ``train.dmc.trainer``."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from bourre_env.memory import check_fits
from train.dmc.actors import selfplay_bytes
from train.learning.policy_net import network_bytes
from train.run_dir import args_from_json, args_to_json
from train.schedule import check_session

__all__ = ["Args"]


@dataclasses.dataclass
class Args:
    seed: int = 0
    """seed of the deals, the exploration, the network initialisation, the minibatches and the evaluations"""
    run_dir: Path | None = None
    """run folder (default: runs/dmc/seed{seed}); it holds the checkpoint, the logs, the model and the report"""
    resume: bool = False
    """continue the run in run_dir from its last checkpoint"""
    overwrite: bool = False
    """start a new run in a run_dir that holds one, deleting the earlier run's files first (else a run_dir that is
    not empty is refused)"""
    progress: bool = True
    """show progress bars"""

    total_decisions: int = 2_000_000
    """decisions to regress on, every seat's (a decision counts once its deal has ended and its target is known)"""
    players: tuple[int, ...] = (5,)
    """table sizes of the self-play tables, mixed in one run: the tables are shared out in proportion to how often
    a size is listed (3 3 5: two thirds at 3 players)"""
    session: int = 1
    """deals per episode at every self-play table: 1, single deals; K, a session of K deals at one table with the
    pot carried (bourré payments and tied pots stay in it, bourré and tied players skip the next ante), each
    decision's target its seat's chips to the session's end and the evaluations played in sessions of K deals
    (docs/training.md: sessions with the other trainers)"""
    tables: int = 256
    """self-play tables stepped together, all sizes included"""
    hidden: tuple[int, ...] = (256, 128)
    """widths of the Q-network's ReLU layers (the first reads the observation sparsely); the output layer gives one
    Q-value per action id"""
    epsilon: float = 0.1
    """exploration: the share of decisions where an actor plays a uniformly random legal action instead of its
    greedy one (DouZero's 0.01 is for billions of decisions: after 100,000 decisions at 3 players, 0.01 never
    passed and beat the random agent by +0.23 chips/deal, 0.1 passed a quarter of its deals and won +0.53;
    docs/training.md)"""
    learning_rate: float = 1e-3
    """Adam learning rate"""
    rollout_decisions: int = 16_384
    """decisions of finished deals gathered per iteration (one regression per iteration)"""
    minibatch_size: int = 256
    """decisions per minibatch of the regression"""
    update_epochs: int = 2
    """passes over each iteration's decisions (DouZero's learner uses each sample about once; two learn more from
    a small budget)"""
    reward_scale: float = 0.1
    """targets are the deal's chips for the acting seat times this (Q-values are in the same unit)"""
    max_grad_norm: float = 5.0
    """gradient clipping"""
    torch_threads: int = 1
    """torch threads (0: the number of CPU cores, at most 4); one is fastest on a small machine, where the compiled
    env runs between the forward passes"""

    eval_every: int = 500_000
    """decisions between evaluations against the heuristic field, the first at decision 0 (0: none during
    training)"""
    eval_deals: int = 300
    """deals per table size of each evaluation during training (with --session K: eval_deals / K sessions, rounded
    up)"""
    eval_players: tuple[int, ...] = (5,)
    """table sizes of the evaluations"""
    final_eval_deals: int = 1000
    """deals per table size and field of the final evaluation (fields: random and heuristic; with --session K, a
    second one in final_eval_deals / K sessions, rounded up)"""
    eval_workers: int = 2
    """processes of the final evaluation (the results do not depend on it)"""
    checkpoint_every: int = 500_000
    """decisions between checkpoints (a checkpoint is also written at the end and on Ctrl-C)"""

    def validate(self) -> None:
        """``ValueError`` naming the first bad field; the memory of the tables, the decisions and the network is
        checked before anything is allocated."""
        positive = (
            "total_decisions",
            "tables",
            "rollout_decisions",
            "minibatch_size",
            "update_epochs",
            "eval_deals",
            "final_eval_deals",
            "eval_workers",
            "checkpoint_every",
        )
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected at least 1, got {getattr(self, name)}")
        check_session(self.session)  # a ValueError naming session
        for name in ("eval_every", "torch_threads", "seed"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: expected >= 0, got {getattr(self, name)}")
        for name in ("players", "eval_players"):
            sizes = getattr(self, name)
            if not sizes or any(not 2 <= n <= 8 for n in sizes):
                raise ValueError(f"{name}: table sizes between 2 and 8, got {sizes}")
        if self.tables < len(set(self.players)):
            raise ValueError(f"tables: at least one per table size, got {self.tables} for players {self.players}")
        if not self.hidden or any(w < 1 for w in self.hidden):
            raise ValueError(f"hidden: positive layer widths, got {self.hidden}")
        if not (math.isfinite(self.epsilon) and 0 <= self.epsilon <= 1):
            raise ValueError(f"epsilon: expected a share in [0, 1], got {self.epsilon}")
        for name in ("learning_rate", "reward_scale", "max_grad_norm"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name}: expected a finite number > 0, got {value}")
        # a table holds its whole session's decisions: the session length shares the blame with the tables
        what = f"--tables {self.tables}" + (f" --session {self.session}" if self.session > 1 else "")
        check_fits(selfplay_bytes(self.tables, self.rollout_decisions, self.session), what)
        check_fits(network_bytes(self.hidden), f"--hidden {' '.join(map(str, self.hidden))}")

    def eval_games(self, deals: int) -> int:
        """The games of an evaluation of ``deals`` deals (eval_deals, final_eval_deals): the deals themselves, or
        with sessions as many sessions of ``session`` deals as make at least ``deals`` deals."""
        return -(-deals // self.session)

    def to_json(self) -> dict[str, Any]:
        return args_to_json(self)

    @classmethod
    def from_json(cls, data: Any, source: Path | str = "args.json") -> Args:
        """The arguments saved in ``source`` (read as JSON into ``data``); ``ValueError`` naming ``source`` if a field
        is unknown, of the wrong type or invalid."""
        args: Args = args_from_json(cls, data, source)
        return args
