"""The batched PPO trainer against a field it cannot freeze itself: a style of the zoo in every seat but the
learner's (``bourre exploit --agent style:NAME``).

The trainer's opponent pool knows the heuristic, the random agent and policy files. A style (``agents.styles``)
has no compiled form, so ``StyleRows`` plays it row by row through the same ``act(observations, masks)`` call the
pool's players answer, and ``train_in_field`` runs the trainer in one process with every heuristic seat of its pool
played by that player instead (``Args`` with all the pool's weight on the heuristic). The imitation warm start
still imitates the heuristic: it is where PPO starts, not the field it trains against.

One Python decision per opponent row costs far more than the compiled heuristic's: on one core of the 2-core
machine a run against a style made about 12,000 learner steps a second at 3 players, half its rate against the
heuristic (docs/measurements.md, section 7).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.styles import STYLES, StyleAgent
from train import runs
from train.learning import run_start
from train.learning.checkpoint import export
from train.ppo import trainer

__all__ = ["StyleRows", "style_name", "train_in_field"]


def style_name(agent: str) -> str | None:
    """``"style:NAME"``'s NAME (``ValueError`` for a style that does not exist); None for any other spec."""
    name, _, variant = agent.partition(":")
    if name != "style":
        return None
    if variant not in STYLES:
        raise ValueError(f"--agent {agent!r}: style:NAME with NAME one of {', '.join(STYLES)}")
    return variant


class StyleRows:
    """A style for many rows at once, as the trainer's collector calls its opponents: one ``StyleAgent`` decision
    per row (the styles keep nothing between decisions but their seeded generator, so one agent serves every
    seat)."""

    def __init__(self, style: str, seed: int = 0) -> None:
        self.agent = StyleAgent(style, seed)
        self.name = self.agent.name

    def act(self, observations: np.ndarray, masks: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        actions = np.empty(len(observations), np.int64) if out is None else out
        for i in range(len(observations)):
            actions[i] = self.agent.act({"observation": observations[i], "action_mask": masks[i]})
        return actions

    def __repr__(self) -> str:
        return f"StyleRows({self.name!r})"


class FieldTraining(trainer.Training):
    """The trainer's rollout-update loop with ``player`` in the seats its pool gives the heuristic."""

    def __init__(self, *args: Any, player: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.collector is None:  # rollout workers build their own collectors, with the compiled heuristic
            raise ValueError("workers: a field the trainer cannot freeze itself trains in one process (workers 1)")
        self.collector.heuristic = player


def train_in_field(args: trainer.Args, player: Any) -> Path:
    """``trainer.run(args)`` with ``player`` in every heuristic seat of the pool, in this process; returns the run
    folder, holding the trainer's files (``model.npz``, ``snapshots/``, checkpoints, TensorBoard logs) but no
    ``report.md``: that report rates the model against the heuristic and random fields, not this one."""
    if args.worker_count() != 1:
        raise ValueError(f"workers: a field the trainer cannot freeze itself trains in one process, got {args.workers}")
    args, saved = trainer.claim_run(args, set())
    if saved is not None:
        raise ValueError(f"{args.run_dir}: a field's exploiter starts afresh (--overwrite), it does not resume")
    run_dir = args.run_dir
    assert run_dir is not None  # claim_run sets it
    device = torch.device(args.device)
    net, optimizer, state = trainer.build_network(args, None, device)
    command = runs.invocation(trainer.MODULE)
    run_start.record_command(run_dir, command)
    trainer.start_network(net, args, state, resumed=False, device=device)
    meta = {"seed": args.seed, "players": list(args.players), "trainer": "batched", "command": command}
    training = FieldTraining(args, run_dir, net, optimizer, state, meta, device, player=player)
    training.train()
    export(net, run_dir / "model.npz", {**meta, "num_timesteps": state.num_timesteps, "field": player.name})
    return run_dir
