"""The batched trainer's imitation warm start: the compiled heuristic plays every seat of the batched tables, the
collector records its decisions with each seat's chips, and the network is fitted to its actions (cross-entropy)
and to the chips (the value), before the first PPO update (``bourre train --imitation-decisions N``).
"""

from __future__ import annotations

import time

import numpy as np
import torch
from tqdm.auto import tqdm

from agents.heuristic.batch import BatchHeuristic
from bourre_env.compile_notice import compile_seconds
from train.learning.imitation import epoch_bar_description
from train.learning.policy_net import PolicyNet, masked_logits
from train.ppo.args import Args
from train.ppo.rollout import Collector, SeatPool, gae

__all__ = ["imitation_warm_start"]


def imitation_warm_start(net: PolicyNet, args: Args, device: torch.device) -> dict[str, float]:
    """Record the heuristic in every seat, then fit the policy to its actions and the value to each seat's chips
    (scaled); returns the last epoch's mean losses and the accuracy (the teacher's action is the most probable)."""
    started, compiled = time.perf_counter(), compile_seconds()
    players = args.imitation_players or args.players
    teacher = BatchHeuristic("default", args.seed + 101)
    # The learner's seats are every seat, played by the teacher: the collector records them with their chips.
    recorder = Collector(
        net,
        players,
        min(args.tables, max(len(set(players)), args.imitation_decisions // 40)),
        SeatPool(1.0, 0.0, 0.0, 0.0),
        seed=args.seed + 100,
        reward_scale=args.reward_scale,
        device=device,
        teacher=teacher,
        rule_options=args.rule_options(),
    )
    t = recorder.transitions
    complete = np.zeros(0, np.bool_)
    with tqdm(
        total=args.imitation_decisions,
        disable=not args.progress,
        unit="decision",
        desc="record heuristic",
        dynamic_ncols=True,
    ) as bar:
        while int(complete.sum()) < args.imitation_decisions:
            recorder.collect(min(4096, args.imitation_decisions))
            _, _, complete = gae(t.next[: t.n], t.done[: t.n], t.rewards[: t.n], np.zeros(t.n, np.float32), 1.0, 1.0)
            bar.update(min(int(complete.sum()), args.imitation_decisions) - bar.n)
    returns, _, complete = gae(t.next[: t.n], t.done[: t.n], t.rewards[: t.n], np.zeros(t.n, np.float32), 1.0, 1.0)
    ids = np.flatnonzero(complete)[: args.imitation_decisions]

    optimizer = torch.optim.Adam(net.parameters(), lr=args.imitation_learning_rate)
    rng = np.random.default_rng([args.seed, 11])
    stats: dict[str, float] = {}
    # one bar per phase, counting what --imitation-decisions names: each epoch restarts it at 0 of len(ids)
    with tqdm(total=len(ids), disable=not args.progress, unit="decision", desc="imitate", dynamic_ncols=True) as bar:
        for epoch in range(args.imitation_epochs):
            bar.reset(total=len(ids))
            bar.set_description(epoch_bar_description(epoch, args.imitation_epochs), refresh=False)
            totals = np.zeros(3)
            order = rng.permutation(ids)
            for start in range(0, len(ids), args.imitation_batch_size):
                mb = order[start : start + args.imitation_batch_size]
                logits, values = net(*t.inputs(mb, device, grad=True))
                logits = masked_logits(logits, torch.from_numpy(t.masks[mb]).to(device))
                actions = torch.from_numpy(t.actions[mb]).to(device)
                policy_loss = torch.nn.functional.cross_entropy(logits, actions)
                value_loss = torch.nn.functional.mse_loss(values, torch.from_numpy(returns[mb]).to(device))
                loss = policy_loss + args.vf_coef * value_loss
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                correct = (logits.detach().argmax(dim=1) == actions).sum().item()
                totals += (policy_loss.item() * len(mb), value_loss.item() * len(mb), correct)
                bar.update(len(mb))
            stats = {
                "policy_loss": totals[0] / len(ids),
                "value_loss": totals[1] / len(ids),
                "accuracy": totals[2] / len(ids),
            }
            bar.set_postfix(accuracy=f"{stats['accuracy']:.3f}", value_loss=f"{stats['value_loss']:.3f}")
    stats["decisions"] = float(len(ids))
    # the first run after an install compiles the kernels inside the recording: counted apart, not as imitation
    stats["compile_seconds"] = compile_seconds() - compiled
    stats["seconds"] = time.perf_counter() - started - stats["compile_seconds"]
    return stats
