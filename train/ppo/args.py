"""The batched trainer's arguments: one dataclass, a docstring per field, read by tyro (``bourre train --help``).

The trainer itself, and what each step does with these fields, is ``train.ppo.trainer``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import torch
import tyro

from agents.ppo import load_policy
from bourre_env.atomic_files import check_readable_file
from bourre_env.core.rules import Rules
from bourre_env.limits import check_rules
from bourre_env.memory import check_fits
from bourre_env.words import plural
from train.eval.ray_backend import import_ray
from train.learning.policy_net import PolicyNet, network_bytes
from train.ppo.league import League
from train.ppo.rollout import (
    DECISION_BYTES,
    TABLE_BYTES,
    PolicyOpponent,
    SeatPool,
    rollout_bytes,
)
from train.ppo.workers import auto_workers
from train.run_dir import args_from_json, args_to_json
from train.schedule import check_session

__all__ = ["HELP_GROUPS", "Args"]


@dataclasses.dataclass
class Args:
    seed: int = 0
    """seed of the deals, the seat draws, the network initialisation, the sampling and the evaluations"""
    run_dir: Path | None = None
    """run folder (default: runs/ppo/seed{seed}); it holds checkpoints, logs, snapshots and the report"""
    resume: bool = False
    """continue the run in run_dir from its last checkpoint, or start afresh a run stopped before its first one
    (see the module docstring)"""
    overwrite: bool = False
    """start a new run in a run_dir that holds one, deleting the earlier run's files first (else a run_dir that is
    not empty is refused)"""
    players: tuple[int, ...] = (5,)
    """table sizes trained on, mixed in one run: the tables are shared out in proportion to how often a size is
    listed (5 5 7: two thirds at 5 players)"""
    rule: tyro.conf.UseAppendAction[tuple[str, ...]] = ()
    """the rules of every table, KEY=VALUE with a field of ``Rules`` (--rule hand_size=2 --rule ranks=2):
    the rollouts, the imitation warm start and the evaluations play them (num_players comes from --players)"""
    session: int = 1
    """deals per episode at every rollout table: 1, single deals; K, a session of K deals at one table with the
    pot carried (bourré payments and tied pots stay in it, bourré and tied players skip the next ante), each seat's
    trajectory running through the session and the evaluations played in sessions of K deals (docs/training.md:
    training on sessions)"""
    tables: int = 1024
    """tables stepped together, all sizes included"""
    total_timesteps: int = 3_000_000
    """PPO learner decisions to train for (the imitation warm start is not counted)"""
    torch_threads: int = 1
    """torch threads (0: the number of CPU cores, at most 4). One is fastest on a small machine: the compiled
    env runs in the same process, between the forward passes"""
    device: str = "cpu"
    """torch device of the network ("cuda" where a GPU exists); rollouts and opponents stay on the CPU"""
    progress: bool = True
    """show progress bars"""
    workers: str = "auto"
    """rollout workers: 1 steps the tables in this process; N >= 2 shares them out among N worker processes
    while this one (the learner) only updates the network, one rollout in flight during each update
    (train.ppo.workers); auto: 1 on 2 CPUs or fewer, else 2 with --device cpu and the CPUs less one (at most 8)
    with cuda (docs/training.md: the cost model)"""
    backend: str = "local"
    """where the rollout workers run: local (spawned processes) or ray (Ray actors, on a local instance or on
    the cluster at --address)"""
    address: str | None = None
    """with --backend ray: the Ray cluster to join (auto, HOST:PORT or ray://HOST:PORT); none: a local
    instance with one CPU per worker"""

    imitation_decisions: int = 300_000
    """heuristic decisions recorded for the imitation warm start (0: start PPO from a random network)"""
    imitation_players: tuple[int, ...] = ()
    """table sizes of the imitation data (empty: the sizes of players)"""
    imitation_epochs: int = 4
    """passes over the recorded decisions"""
    imitation_learning_rate: float = 1e-3
    """Adam learning rate of the warm start"""
    imitation_batch_size: int = 512
    """decisions per minibatch of the warm start (larger ones fit the teacher worse in the same time: fewer steps)"""

    hidden: tuple[int, ...] = (256, 128)
    """widths of the trunk's ReLU layers (the first reads the observation sparsely), shared by actor and critic"""
    privileged_critic: bool = False
    """give the critic its own trunk of the same widths that reads the observation and the other seats' hands
    (``bourre_env.privileged``); training only: the policy never reads the hands, and the exported actor is the
    same network"""
    learning_rate: float = 5e-4
    """Adam learning rate of PPO"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 0 at total_timesteps"""
    rollout_decisions: int = 32_768
    """learner decisions added per rollout (one update per rollout)"""
    minibatch_size: int = 2048
    """decisions per minibatch of the update"""
    update_epochs: int = 2
    """passes over each rollout's decisions (1 runs faster and learns less per step: docs/training.md)"""
    gamma: float = 1.0
    """discount; a deal is short and only its end pays, so there is nothing to discount"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_coef: float = 0.1
    """PPO clip range of the probability ratio"""
    ent_coef: float = 0.003
    """entropy bonus"""
    vf_coef: float = 0.5
    """weight of the value loss"""
    max_grad_norm: float = 0.5
    """gradient clipping"""
    target_kl: float | None = 0.03
    """stop an update's epochs early when the approximate KL divergence from the rollout policy passes 1.5 times
    this"""
    norm_adv: bool = True
    """normalise the advantages of each minibatch"""
    reward_scale: float = 0.1
    """rewards (chips) are multiplied by this before PPO sees them"""

    pool_learner: float = 0.5
    """weight of the learner itself in each seat besides the one it always holds (self-play)"""
    pool_heuristic: float = 0.3
    """weight of the heuristic"""
    pool_random: float = 0.05
    """weight of the random agent"""
    pool_snapshot: float = 0.15
    """weight of a snapshot of the learner (goes to the heuristic until the first snapshot)"""
    snapshot_every: int = 500_000
    """steps between snapshots of the learner added to the opponent pool"""
    max_snapshots: int = 8
    """snapshots kept in the pool (the most recent)"""
    league: tuple[str, ...] = ()
    """agent specs of a league of fixed opponents (style:eager-low heuristic:loose ppo:PATH ...; any spec
    agents.batched_players.make_batched builds): a --league-share of the episodes are field tables, the learner in
    one seat and one member in every other, the member drawn by prioritised fictitious self-play (the fields it does
    worst against most often; train.ppo.league)"""
    league_share: float = 0.5
    """the chance that a table's new episode is a field table of the league (with --league)"""
    league_power: float = 2.0
    """PFSP's weighting: a member is drawn with weight (1 - the learner's rate of beating it) ** power + 0.05"""
    opponent_policy: Path | None = None
    """a frozen policy file (agents.ppo format) that plays every seat but the learner's, instead of the pool; the
    learner's snapshots are still saved but never join the pool (bourre exploit: a best response to that policy)"""
    init_policy: Path | None = None
    """a policy file (agents.ppo format, layers of --hidden's widths) whose actor the network starts from, instead
    of the imitation warm start; the critic starts afresh (bourre exploit --from-agent)"""

    eval_every: int = 750_000
    """steps between evaluations against the heuristic field, the first at step 0 (0: none during training)"""
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
    checkpoint_every: int = 1_000_000
    """steps between checkpoints (a checkpoint is also written at the end and on Ctrl-C)"""

    def validate(self) -> None:
        positive = (
            "total_timesteps",
            "tables",
            "rollout_decisions",
            "minibatch_size",
            "update_epochs",
            "snapshot_every",
            "max_snapshots",
            "eval_deals",
            "final_eval_deals",
            "eval_workers",
            "checkpoint_every",
            "imitation_epochs",
            "imitation_batch_size",
        )
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected at least 1, got {getattr(self, name)}")
        check_session(self.session)  # a ValueError naming session
        for name in ("imitation_decisions", "eval_every", "torch_threads", "seed"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: expected >= 0, got {getattr(self, name)}")
        for name in ("players", "eval_players"):
            sizes = getattr(self, name)
            if not sizes or any(not 2 <= n <= 8 for n in sizes):
                raise ValueError(f"{name}: table sizes between 2 and 8, got {sizes}")
        if any(not 2 <= n <= 8 for n in self.imitation_players):
            raise ValueError(f"imitation_players: table sizes between 2 and 8, got {self.imitation_players}")
        self.rule_options()  # raises on a bad option
        if self.tables < len(set(self.players)):
            raise ValueError(f"tables: at least one per table size, got {self.tables} for players {self.players}")
        if not self.hidden or any(w < 1 for w in self.hidden):
            raise ValueError(f"hidden: positive layer widths, got {self.hidden}")
        if not 0 < self.gamma <= 1 or not 0 <= self.gae_lambda <= 1:
            raise ValueError(f"gamma in (0, 1] and gae_lambda in [0, 1], got {self.gamma}, {self.gae_lambda}")
        for name in ("reward_scale", "learning_rate", "imitation_learning_rate", "clip_coef", "max_grad_norm"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name}: expected > 0, got {getattr(self, name)}")
        if self.ent_coef < 0 or self.vf_coef < 0 or (self.target_kl is not None and self.target_kl <= 0):
            raise ValueError("ent_coef and vf_coef must be >= 0, target_kl > 0 (or None)")
        try:
            device = torch.device(self.device)
        except RuntimeError:
            raise ValueError(f"device: not a torch device, {self.device!r} (e.g. cpu, cuda, cuda:1)") from None
        if device.type == "cuda" and (
            not torch.cuda.is_available() or (device.index or 0) >= torch.cuda.device_count()
        ):
            raise ValueError(
                f"device: {self.device!r} asked for, but torch sees {plural(torch.cuda.device_count(), 'CUDA device')}"
            )
        self.worker_count()  # raises on a bad count
        if self.backend not in ("local", "ray"):
            raise ValueError(f"backend: local or ray, got {self.backend!r}")
        if self.address is not None and self.backend != "ray":
            raise ValueError("address: the Ray cluster of --backend ray; give --backend ray too")
        if self.backend == "ray":
            try:
                import_ray()
            except ImportError as e:
                raise ValueError(f"backend: {e}") from None
        self.check_memory()
        self.pool()  # raises on bad weights
        if self.league:
            if self.opponent_policy is not None:
                raise ValueError("league: opponent_policy plays every seat but the learner's; give one or the other")
            if not 0.0 <= self.league_share <= 1.0 or not self.league_power >= 0.0:
                raise ValueError(
                    f"league_share in [0, 1] and league_power >= 0, got {self.league_share}, {self.league_power}"
                )
            try:
                self.make_league(0)  # every member built now, not after minutes of imitation
            except (ValueError, TypeError, OSError) as e:
                raise ValueError(f"league: {e}") from None
        for name in ("opponent_policy", "init_policy"):
            if getattr(self, name) is not None:
                try:
                    check_readable_file(getattr(self, name), "policy file")
                except ValueError as err:
                    raise ValueError(f"{name}: {err}") from None
        # read now, not after minutes of imitation: a damaged or mismatched file is refused before any work
        if self.opponent_policy is not None:
            try:
                PolicyOpponent(self.opponent_policy)
            except ValueError as e:
                raise ValueError(f"opponent_policy: {e}") from None
        if self.init_policy is not None:
            try:
                PolicyNet(self.hidden).load_actor(load_policy(self.init_policy))
            except ValueError as e:
                raise ValueError(f"init_policy: {self.init_policy}: {e}") from None

    def rule_options(self) -> dict[str, Any]:
        """``rule`` as ``Rules`` options; ``ValueError`` naming ``rule`` if one is not KEY=VALUE, not a field, or
        gives rules that some table size of players, imitation_players or eval_players cannot play."""
        options: dict[str, Any] = {}
        for text in self.rule:
            key, sep, raw = text.partition("=")
            if not sep or not key.strip():
                raise ValueError(f"rule: expected KEY=VALUE, got {text!r}")
            try:  # as bourre eval --rule reads it: JSON where it parses (numbers, true, null), else the text
                options[key.strip()] = json.loads(raw)
            except json.JSONDecodeError:
                options[key.strip()] = raw
        if "num_players" in options:
            raise ValueError("rule: num_players is set by --players (and --eval-players), not by --rule")
        if "deals_per_episode" in options:
            raise ValueError(
                "rule: deals_per_episode: the number of deals per episode is --session K's (a session of K deals, "
                "the pot carried); give --session instead"
            )
        unknown = sorted(set(options) - {f.name for f in dataclasses.fields(Rules)})
        if unknown:
            raise ValueError(f"rule: not a rule option {unknown} (the fields of bourre_env.core.rules.Rules)")
        for n in sorted({*self.players, *self.imitation_players, *self.eval_players}):
            try:
                rules = Rules.from_options(**{**options, "num_players": n})
                check_rules(rules)
            except (TypeError, ValueError) as err:
                raise ValueError(f"rule: {' '.join(self.rule)} at {n} players: {err}") from None
        return options

    def eval_games(self, deals: int) -> int:
        """The games of an evaluation of ``deals`` deals (eval_deals, final_eval_deals): the deals themselves, or
        with sessions as many sessions of ``session`` deals as make at least ``deals`` deals."""
        return -(-deals // self.session)

    def worker_count(self) -> int:
        """The number of rollout workers ``workers`` asks for (``auto``: ``train.ppo.workers.auto_workers``);
        ``ValueError`` naming the field if it is neither auto nor a count the tables can be shared out to."""
        if self.workers == "auto":
            count = auto_workers(gpu_learner=self.device.startswith("cuda"))
        else:
            try:
                count = int(self.workers)
            except ValueError:
                raise ValueError(f"workers: auto or a positive count, got {self.workers!r}") from None
            if count < 1:
                raise ValueError(f"workers: auto or a positive count, got {self.workers!r}")
        sizes = len(set(self.players))
        if count > 1 and self.tables < count * sizes:
            if self.workers == "auto":  # a run too small to share out: the tables stay in this process
                return 1
            raise ValueError(
                f"workers: {count} workers need at least {count * sizes} tables (one per table size each), "
                f"got --tables {self.tables}"
            )
        return count

    def check_memory(self) -> None:
        """``ValueError`` naming the option if the tables and the decisions a rollout (or the imitation data) holds
        cannot fit in this machine's memory: checked before anything is allocated, not a MemoryError later."""
        decisions = max(self.rollout_decisions, self.imitation_decisions)
        if self.tables * TABLE_BYTES >= decisions * DECISION_BYTES:
            what = f"--tables {self.tables}"
        elif self.rollout_decisions >= self.imitation_decisions:
            what = f"--rollout-decisions {self.rollout_decisions}"
        else:
            what = f"--imitation-decisions {self.imitation_decisions}"
        check_fits(rollout_bytes(self.tables, decisions), what)
        # checked apart: a network of a few huge layers asks for its memory at construction, before any table
        check_fits(
            network_bytes(self.hidden, self.privileged_critic, self.max_snapshots),
            f"--hidden {' '.join(map(str, self.hidden))}",
        )

    def pool(self) -> SeatPool:
        if self.opponent_policy is not None:
            return SeatPool(0.0, 0.0, 0.0, 1.0)  # the one snapshot slot holds opponent_policy
        return SeatPool(self.pool_learner, self.pool_heuristic, self.pool_random, self.pool_snapshot)

    def make_league(self, seed: int) -> League | None:
        """The league of ``--league`` (None without one), its draws seeded by ``seed``."""
        if not self.league:
            return None
        return League(self.league, self.league_share, seed, power=self.league_power)

    def to_json(self) -> dict[str, Any]:
        return args_to_json(self)

    @classmethod
    def from_json(cls, data: Any, source: Path | str = "args.json") -> Args:
        """The arguments saved in ``source`` (read as JSON into ``data``); ``ValueError`` naming ``source`` if a field
        is unknown, of the wrong type or invalid."""
        args: Args = args_from_json(cls, data, source)
        return args


# ``bourre train --help``'s boxes of Args's fields, in order (train.grouped_cli); tests/test_cli_help.py holds
# every field to one
HELP_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "run",
        (
            "seed",
            "run_dir",
            "resume",
            "overwrite",
            "total_timesteps",
            "players",
            "rule",
            "session",
            "imitation_decisions",
            "final_eval_deals",
            "progress",
        ),
    ),
    ("machine", ("tables", "workers", "device", "torch_threads", "backend", "address")),
    ("network", ("hidden", "privileged_critic", "init_policy")),
    (
        "imitation",
        ("imitation_players", "imitation_epochs", "imitation_learning_rate", "imitation_batch_size"),
    ),
    (
        "ppo",
        (
            "learning_rate",
            "anneal_lr",
            "rollout_decisions",
            "minibatch_size",
            "update_epochs",
            "gamma",
            "gae_lambda",
            "clip_coef",
            "ent_coef",
            "vf_coef",
            "max_grad_norm",
            "target_kl",
            "norm_adv",
            "reward_scale",
        ),
    ),
    (
        "opponents",
        (
            "pool_learner",
            "pool_heuristic",
            "pool_random",
            "pool_snapshot",
            "snapshot_every",
            "max_snapshots",
            "league",
            "league_share",
            "league_power",
            "opponent_policy",
        ),
    ),
    ("evaluation", ("eval_every", "eval_deals", "eval_players", "eval_workers", "checkpoint_every")),
)
