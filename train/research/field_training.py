"""The batched PPO trainer against a field it cannot freeze itself: a style of the zoo in every seat but the
learner's (``bourre exploit --agent style:NAME``).

The trainer's opponent pool knows the heuristic, the random agent and policy files. A style (``agents.styles``)
is played by its compiled batched form, ``agents.batched_styles.BatchedStylePlayer``, which answers the same
``act(observations, masks)`` call as the pool's players, and ``train_in_field`` runs the trainer in one process
with every heuristic seat of its pool played by that player instead (``Args`` with all the pool's weight on the
heuristic). The imitation warm start still imitates the heuristic: it is where PPO starts, not the field it trains
against. The rollout workers build their own collectors with the compiled heuristic, so a field trains in one
process (``--workers 1``).

Speed: the style's rows are decided in one compiled call per step. 300,000 learner steps against
``style:eager-low`` at 3 players (the same decisions, the same exploiter, as the Python styles gave), on the 2-core
machine under other work (load average 6 to 8; 2026-12-04), two runs each: 42 and 53 s of training (7,100 and 5,700
learner steps a second) against 78 and 52 s (3,900 and 5,700) with the Python styles played row by row (commit
7bdc2d7); the process's CPU time fell from 49-51 s to 33-34 s, the steadier figure on a busy machine:

    python -m train.research.exploiter --agent style:eager-low --players 3 --steps 300000 --imitation-decisions 0 \
        --curve-every 300000 --deals 20 --curve-deals 20 --no-progress --overwrite --run-dir runs/exploit/speed

(``train_seconds`` of the run's ``exploit.json``, after a first run that compiled the kernels).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from agents.styles import STYLES
from train import runs
from train.learning import run_start
from train.learning.checkpoint import export
from train.ppo import trainer

__all__ = ["style_name", "train_in_field"]


def style_name(agent: str) -> str | None:
    """``"style:NAME"``'s NAME (``ValueError`` for a style that does not exist); None for any other spec."""
    name, _, variant = agent.partition(":")
    if name != "style":
        return None
    if variant not in STYLES:
        raise ValueError(f"--agent {agent!r}: style:NAME with NAME one of {', '.join(STYLES)}")
    return variant


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
