"""Masked PPO on ``bourre_env.BourreVectorEnv``, CleanRL style: one ``Args`` dataclass, one loop.

    python -m train.examples.cleanrl_ppo --num-envs 256 --total-timesteps 2000000
    bourre eval --candidate ppo:runs/cleanrl/model.npz --field heuristic --players 5

It trains whole rollouts of ``num_envs * num_steps`` decisions, as many as reach ``total_timesteps`` (the last one
may go past it), and writes the actor as a policy file of ``agents.ppo`` (``model_path``), which every command
takes as ``ppo:PATH``; Ctrl-C writes the actor so far.

The learner plays one seat per table against batched opponents (the compiled heuristic by default); illegal
actions get a logit of -1e9, so the policy only ever samples legal moves. Episodes reset within the step
(``AutoresetMode.SAME_STEP``): the observation after a ``done`` is the new episode's, so the value of the
next state is cut at every ``done`` (a pot-bound truncation is rare and treated as an end, as CleanRL does).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np
import torch
import tyro
from torch import nn

from agents.batched_players import make_batched
from agents.ppo import PolicyWeights, save_policy
from bourre_env import BourreVectorEnv


@dataclasses.dataclass
class Args:
    seed: int = 0
    """seed of the deals, the opponents and the network"""
    num_players: int = 5
    """seats at each table"""
    opponents: str = "heuristic"
    """agent spec of every other seat (agents.batched_players.make_batched)"""
    num_envs: int = 256
    """tables stepped together"""
    env_threads: int = 1
    """numba threads that step the tables and play the opponents (BourreVectorEnv(threads=...))"""
    num_steps: int = 32
    """steps per table per rollout"""
    total_timesteps: int = 1_000_000
    """learner decisions to train for"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    gamma: float = 1.0
    """discount (a deal is short and only its end pays)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    num_minibatches: int = 4
    """minibatches per epoch"""
    update_epochs: int = 4
    """passes over each rollout"""
    clip_coef: float = 0.2
    """PPO clip range"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient clipping"""
    reward_scale: float = 0.1
    """chips are multiplied by this before PPO sees them"""
    hidden: int = 256
    """width of the two hidden layers"""
    torch_threads: int = 1
    """torch threads"""
    model_path: str = "runs/cleanrl/model.npz"
    """where the trained actor is written (agents.ppo's policy file: bourre eval --candidate ppo:PATH)"""


class Agent(nn.Module):
    def __init__(self, obs_size: int, num_actions: int, hidden: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(
            nn.Linear(obs_size, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1)
        )
        self.actor = nn.Sequential(
            nn.Linear(obs_size, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, num_actions)
        )

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)

    def act(
        self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        logits = self.actor(x).masked_fill(~mask, -1e9)
        dist = torch.distributions.Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(x)


def train(args: Args) -> dict[str, float]:
    """Train; returns the last figures (``charts/``, ``losses/``)."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, args.torch_threads))
    envs = BourreVectorEnv(
        args.num_envs,
        args.opponents,
        agent_factory=make_batched,
        opponent_seed=args.seed,
        threads=args.env_threads,
        num_players=args.num_players,
    )
    n, t_len = args.num_envs, args.num_steps
    obs_size = envs.single_observation_space.shape[0]  # type: ignore[index]
    num_actions = int(envs.single_action_space.n)  # type: ignore[attr-defined]
    agent = Agent(obs_size, num_actions, args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    obs_buf = torch.zeros((t_len, n, obs_size))
    mask_buf = torch.zeros((t_len, n, num_actions), dtype=torch.bool)
    act_buf = torch.zeros((t_len, n), dtype=torch.long)
    logp_buf, rew_buf, done_buf, val_buf = (torch.zeros((t_len, n)) for _ in range(4))
    obs_np, infos = envs.reset(seed=args.seed)
    next_obs, next_mask = torch.from_numpy(obs_np), torch.from_numpy(infos["action_mask"])
    returns = np.zeros(n)
    finished: list[float] = []
    stats: dict[str, float] = {}
    start, step = time.perf_counter(), 0
    iterations = max(1, -(-args.total_timesteps // (n * t_len)))  # rounded up: at least the steps asked for
    try:
        for iteration in range(1, iterations + 1):
            for t in range(t_len):
                obs_buf[t], mask_buf[t] = next_obs, next_mask
                with torch.no_grad():
                    action, logp, _, value = agent.act(next_obs, next_mask)
                act_buf[t], logp_buf[t], val_buf[t] = action, logp, value
                obs_np, reward, term, trunc, infos = envs.step(action.numpy())
                done = term | trunc
                returns += reward
                finished.extend(returns[done].tolist())
                returns[done] = 0.0
                rew_buf[t] = torch.from_numpy(reward * args.reward_scale)
                done_buf[t] = torch.from_numpy(done.astype(np.float32))
                next_obs, next_mask = torch.from_numpy(obs_np), torch.from_numpy(infos["action_mask"])
                step += n
            with torch.no_grad():  # GAE; done_buf[t] cuts the bootstrap from step t to t + 1 (a new episode)
                next_value = agent.value(next_obs)
                adv = torch.zeros_like(rew_buf)
                last = torch.zeros(n)
                for t in reversed(range(t_len)):
                    nv = next_value if t == t_len - 1 else val_buf[t + 1]
                    delta = rew_buf[t] + args.gamma * nv * (1 - done_buf[t]) - val_buf[t]
                    last = delta + args.gamma * args.gae_lambda * (1 - done_buf[t]) * last
                    adv[t] = last
                ret = adv + val_buf
            b_obs, b_mask = obs_buf.reshape(-1, obs_size), mask_buf.reshape(-1, num_actions)
            b_act, b_logp, b_adv, b_ret = act_buf.reshape(-1), logp_buf.reshape(-1), adv.reshape(-1), ret.reshape(-1)
            size = n * t_len
            mb = max(1, size // args.num_minibatches)
            for _ in range(args.update_epochs):
                order = torch.randperm(size)
                for s in range(0, size, mb):
                    idx = order[s : s + mb]
                    _, logp, entropy, value = agent.act(b_obs[idx], b_mask[idx], b_act[idx])
                    ratio = (logp - b_logp[idx]).exp()
                    a = b_adv[idx]
                    a = (a - a.mean()) / (a.std() + 1e-8)
                    pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                    v_loss = 0.5 * ((value - b_ret[idx]) ** 2).mean()
                    loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                    optimizer.step()
            sps = step / (time.perf_counter() - start)
            stats = {
                "charts/SPS": sps,
                "charts/episodic_return": float(np.mean(finished[-1000:])) if finished else 0.0,
                "losses/policy_loss": pg_loss.item(),
                "losses/value_loss": v_loss.item(),
                "losses/entropy": entropy.mean().item(),
            }
            print(
                f"iteration {iteration}/{iterations} step {step:,} "
                + " ".join(f"{k}={v:.4g}" for k, v in stats.items()),
                flush=True,
            )
    except KeyboardInterrupt:  # Ctrl-C: the actor so far is saved, as at the end
        print(f"interrupted at step {step:,}", flush=True)
    envs.close()
    path = save_actor(agent, args)
    print(f"wrote {path}: bourre eval --candidate ppo:{path} --field heuristic --players {args.num_players}")
    return stats


def save_actor(agent: Agent, args: Args) -> Path:
    """The actor's layers as an ``agents.ppo`` policy file (relu, the full observation), with the arguments."""
    linear = [m for m in agent.actor if isinstance(m, nn.Linear)]
    layers = [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy()) for m in linear]
    meta = {"trainer": "train.examples.cleanrl_ppo", "args": dataclasses.asdict(args)}
    return save_policy(args.model_path, PolicyWeights(tuple(layers[:-1]), layers[-1], "relu", meta))


if __name__ == "__main__":
    train(tyro.cli(Args))
