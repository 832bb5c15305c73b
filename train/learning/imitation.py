"""Imitation warm start: record a teacher agent's decisions in self-play, fit a policy to them.

PPO from a random network spends most of a short budget learning what every card player
knows (follow suit, win the trick when you can, pass a hopeless hand). Cloning the heuristic
first gives PPO a competent starting point, and fitting the value head to the teacher's deal
results gives it a critic that already ranks hands, so the first updates are not noise. PPO
then improves on the teacher against the opponent pool.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from tqdm.auto import tqdm

import agents
from bourre_env import core
from bourre_env.bourre_v0 import raw_env
from bourre_env.observation import OBS_SIZE
from bourre_env.view import StateView
from train.table import Deal, PausedGame, game

__all__ = ["Decisions", "epoch_bar_description", "fit_policy", "record_decisions", "summary"]


@dataclasses.dataclass(frozen=True)
class Decisions:
    """Recorded decisions: what the actor saw, its mask, what it chose, and its chips for that deal."""

    observations: np.ndarray  # (n, OBS_SIZE) float32
    masks: np.ndarray  # (n, NUM_ACTIONS) bool
    actions: np.ndarray  # (n,) int64
    returns: np.ndarray  # (n,) float32: the actor's chip change over the deal the decision belongs to

    def __len__(self) -> int:
        return len(self.actions)


def record_decisions(teacher: str, players: Sequence[int], count: int, seed: int, progress: bool = True) -> Decisions:
    """``count`` decisions of ``teacher`` playing every seat, table sizes taken in turn deal by deal."""
    if count < 1:
        raise ValueError(f"count: expected at least 1 decision, got {count}")
    rng = np.random.default_rng([seed, 7])
    observations = np.empty((count, OBS_SIZE), dtype=np.float32)
    masks = np.empty((count, core.NUM_ACTIONS), dtype=bool)
    actions = np.empty(count, dtype=np.int64)
    returns = np.empty(count, dtype=np.float32)
    envs = {n: raw_env(num_players=n) for n in players}
    tables = {n: [agents.make(teacher, int(rng.integers(2**31))) for _ in range(n)] for n in players}
    i = 0
    deal = 0
    with tqdm(total=count, disable=not progress, unit="decision", desc=f"record {teacher}", dynamic_ncols=True) as bar:
        while i < count:
            n = players[deal % len(players)]
            env, table = envs[n], tables[n]
            dealt = Deal(env.rules, env_seed=int(rng.integers(2**62)))
            paused = PausedGame(game(env, dealt, [teacher] * n, f"deal {deal} of the recording"))
            for agent in table:
                agent.reset()
            start = i
            seats: list[int] = []
            while (decision := paused.pending) is not None and i < count:
                obs = decision.observation
                action = table[decision.seat].act(obs)
                observations[i], masks[i], actions[i] = obs["observation"], obs["action_mask"], action
                seats.append(decision.seat)
                paused.answer(action)
                i += 1
            chips = StateView(env.state_vector, n).rewards.astype(np.float32)
            returns[start:i] = chips[seats]  # an unfinished last deal ends early: its returns are partial
            bar.update(i - start)
            deal += 1
    return Decisions(observations, masks, actions, returns)


def fit_policy(
    policy: object,
    data: Decisions,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    reward_scale: float,
    value_coef: float,
    seed: int,
    progress: bool = True,
) -> dict[str, float]:
    """Fit an sb3-contrib ``MaskableActorCriticPolicy`` to ``data``: cross-entropy of the masked policy on
    the teacher's actions, plus ``value_coef`` times the squared error of the value on the scaled returns.

    Returns the last epoch's mean losses and the accuracy (the share of decisions where the policy's
    most probable legal action is the teacher's)."""
    import torch

    device = policy.device  # type: ignore[attr-defined]
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)  # type: ignore[attr-defined]
    generator = np.random.default_rng([seed, 11])
    n = len(data)
    stats: dict[str, float] = {}
    policy.set_training_mode(True)  # type: ignore[attr-defined]
    # one bar counting the decisions of an epoch (the --imitation-decisions a person asked for), started anew each
    # epoch: a total of epochs * n would count past the number the docs and the arguments name
    with tqdm(total=n, disable=not progress, unit="decision", desc="imitate", dynamic_ncols=True) as bar:
        for epoch in range(epochs):
            bar.reset(total=n)
            bar.set_description(epoch_bar_description(epoch, epochs), refresh=False)
            order = generator.permutation(n)
            totals = np.zeros(3)
            for start in range(0, n, batch_size):
                idx = order[start : start + batch_size]
                obs = torch.as_tensor(data.observations[idx], device=device)
                mask = data.masks[idx]
                act = torch.as_tensor(data.actions[idx], device=device)
                target = torch.as_tensor(data.returns[idx] * reward_scale, device=device)
                dist = policy.get_distribution(obs, action_masks=mask)  # type: ignore[attr-defined]
                values = policy.predict_values(obs)  # type: ignore[attr-defined]
                policy_loss = -dist.log_prob(act).mean()
                value_loss = torch.nn.functional.mse_loss(values.flatten(), target)
                loss = policy_loss + value_coef * value_loss
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                correct = (dist.distribution.logits.detach().argmax(dim=1) == act).float().sum().item()
                totals += (policy_loss.item() * len(idx), value_loss.item() * len(idx), correct)
                bar.update(len(idx))
            stats = {"policy_loss": totals[0] / n, "value_loss": totals[1] / n, "accuracy": totals[2] / n}
            bar.set_postfix(accuracy=f"{stats['accuracy']:.3f}", value_loss=f"{stats['value_loss']:.3f}")
    policy.set_training_mode(False)  # type: ignore[attr-defined]
    return stats


def epoch_bar_description(epoch: int, epochs: int) -> str:
    """The imitation bar's label during ``epoch`` (from 0) of ``epochs`` passes over the recorded decisions."""
    return f"imitate, epoch {epoch + 1}/{epochs}"


def summary(stats: dict[str, float]) -> str:
    """The one line a trainer prints after the imitation warm start: counts as integers, times in seconds, numba's
    compiling apart (``stats`` as ``fit_policy`` or ``imitation_warm_start`` return it, with the trainer's
    ``decisions``, ``seconds`` and ``compile_seconds`` where it has them)."""
    parts = []
    if "decisions" in stats:
        parts.append(f"{int(stats['decisions']):,} decisions")
    parts += [
        f"{key.replace('_', ' ')} {stats[key]:.3f}" for key in ("accuracy", "policy_loss", "value_loss") if key in stats
    ]
    if "seconds" in stats:
        took = f"{stats['seconds']:.0f} s"
        if stats.get("compile_seconds", 0.0) >= 0.5:
            took += f" (and {stats['compile_seconds']:.0f} s of numba compiling)"
        parts.append(took)
    return "imitation warm start: " + ", ".join(parts)
