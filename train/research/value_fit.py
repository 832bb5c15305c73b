"""Fit a value file (``agents.search.value``) to the greedy self-play of a policy file: the estimate that the
search's cut rollouts (``pimc:...,rollout=ppo,cut=1,value=ppo:PATH``) put where a rollout stops.

    python -m train.research.value_fit --policy ppo --deals 40000 --seed 13 --out runs/value/ppo_value.npz

1. **Positions.** Tables of each size of ``--players`` (``bourre_env.batch.BatchGame``, games of several deals, so
   carried pots are in the data) are played with the policy's greedy action in every seat, as the cut rollouts
   play. At every card of trick play the acting seat's input is recorded: its observation and the other seats'
   hands (``agents.search.value``'s layout), with its chips so far this deal. When the deal is settled, each
   recorded position's target is the seat's chips at the end minus its chips then.
2. **Fit.** A network of ``--hidden`` ReLU layers (sparse first layer, ``train.learning.policy_net``) regresses the
   targets (mean squared error, Adam, ``--epochs`` passes in minibatches of ``--batch``); ``--holdout`` of the
   deals (whole deals, never trained on) measure the error.
3. **Report.** The root mean squared error on the held-out positions, next to the spread of the targets (the
   error of predicting their mean), goes to the terminal and into the file's ``meta`` with the command and seed.

Determinism: the same arguments give the same positions (every table seeded from ``--seed``) and the same
split and order of the fit; the network is the same up to the rounding of torch's threaded CPU kernels.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
import torch
from tqdm import tqdm

from agents.search.policy import PolicyModel
from agents.search.value import ValueWeights, save_value
from bourre_env import core, view
from bourre_env.batch import BatchGame
from bourre_env.observation import OBS_SIZE
from bourre_env.privileged import HIDDEN_HAND_SIZE, hidden_hand_entries
from bourre_env.words import plural
from train.learning.policy_net import SparseBatch, ValueNet, gather_batch, sparse_rows

__all__ = ["Positions", "fit", "main", "positions"]

MAX_DEALS = 10_000_000
"""Most deals one fit may ask for (about 2 GB of positions)."""


@dataclass
class Positions:
    """Recorded positions as two compressed-sparse-row stores (observation, hidden hands), their targets and the
    deal each came from (numbered across the tables, for a held-out split by deal)."""

    obs_ptr: np.ndarray
    obs_idx: np.ndarray
    obs_val: np.ndarray
    hand_ptr: np.ndarray
    hand_idx: np.ndarray
    targets: np.ndarray
    deals: np.ndarray
    states: np.ndarray | None = None  # the core state of each position, when asked for (tests)

    def __len__(self) -> int:
        return int(self.targets.shape[0])


def _csr(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    idx = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int16)
    val = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.float32)
    counts = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, np.int64)
    ptr = np.zeros(counts.shape[0] + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    return ptr, idx, val


def positions(
    policy: str,
    players: list[int],
    deals: int,
    seed: int,
    batch: int = 1024,
    progress: bool = True,
    keep_states: bool = False,
) -> Positions:
    """Play ``deals`` deals (at least), split evenly over the table sizes ``players``, with ``policy`` greedy in every
    seat; the positions of trick play with their targets (module docstring), and with ``keep_states`` their core
    states too."""
    model = PolicyModel(policy)
    obs_parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    hand_parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    targets: list[float] = []
    deal_ids: list[int] = []
    kept_states: list[np.ndarray] = []
    per_size = -(-deals // len(players))
    phase, to_act = view.phase_column(), view.to_act_column()
    next_deal = 0
    bar = tqdm(total=per_size * len(players), unit="deal", desc="positions", disable=not progress, dynamic_ncols=True)
    for k, n in enumerate(players):
        rows = min(batch, per_size)
        game = BatchGame(rows, seed=seed * 1000 + k, num_players=n)
        deal_of_row = np.arange(rows) + next_deal
        next_deal += rows
        # the positions of each row's deal in progress: (index into targets, seat, its chips then)
        pending: list[list[tuple[int, int, float]]] = [[] for _ in range(rows)]
        finished = 0
        while finished < per_size:
            states = game.states
            obs = game.observations()
            actions = model.choose(obs, game.legal_masks())
            was_playing = states[:, phase] == core.PLAY
            playing = np.flatnonzero(was_playing)
            if playing.size:
                obs_parts.append(sparse_rows(obs, playing))
                hand_parts.append(hidden_hand_entries(states, playing, n))
                if keep_states:
                    kept_states.append(states[playing].copy())
                for b in playing.tolist():
                    seat = int(states[b, to_act])
                    pending[b].append((len(targets), seat, float(view.reward_of(states[b], seat))))
                    targets.append(math.nan)
                    deal_ids.append(int(deal_of_row[b]))
            rewards, _ = game.step(actions)
            # a deal ends with chips changing hands (the antes at least), and one in trick play ends only so
            ended = np.flatnonzero(rewards.any(axis=1) | (was_playing & (game.states[:, phase] != core.PLAY)))
            for b in ended.tolist():
                for i, seat, then in pending[b]:
                    targets[i] = float(rewards[b, seat]) - then
                pending[b] = []
                deal_of_row[b] = next_deal
                next_deal += 1
            step = min(int(ended.size), per_size - finished)
            finished += step
            bar.update(step)
    bar.close()
    obs_ptr, obs_idx, obs_val = _csr(obs_parts)
    hand_ptr, hand_idx, _ = _csr(hand_parts)
    target_array = np.asarray(targets, np.float32)
    data = Positions(obs_ptr, obs_idx, obs_val, hand_ptr, hand_idx, target_array, np.asarray(deal_ids, np.int64))
    if keep_states:
        data.states = np.concatenate(kept_states) if kept_states else np.zeros((0, core.STATE_SIZE), np.int64)
    return _select(data, np.flatnonzero(np.isfinite(target_array)))  # deals still going at the end: no target


def _select(data: Positions, rows: np.ndarray) -> Positions:
    def take(ptr: np.ndarray, *stores: np.ndarray) -> tuple[np.ndarray, ...]:
        counts = ptr[rows + 1] - ptr[rows]
        new_ptr = np.zeros(rows.shape[0] + 1, np.int64)
        np.cumsum(counts, out=new_ptr[1:])
        entries = np.repeat(ptr[rows] - new_ptr[:-1], counts) + np.arange(new_ptr[-1])
        return (new_ptr, *(s[entries] for s in stores))

    obs_ptr, obs_idx, obs_val = take(data.obs_ptr, data.obs_idx, data.obs_val)
    hand_ptr, hand_idx = take(data.hand_ptr, data.hand_idx)
    states = None if data.states is None else data.states[rows]
    return Positions(obs_ptr, obs_idx, obs_val, hand_ptr, hand_idx, data.targets[rows], data.deals[rows], states)


def _hand_batch(data: Positions, rows: np.ndarray, grad: bool, ones: np.ndarray) -> SparseBatch:
    return gather_batch(data.hand_ptr, data.hand_idx, ones, rows, "cpu", grad, num_features=HIDDEN_HAND_SIZE)


def _predict(net: ValueNet, data: Positions, rows: np.ndarray, ones: np.ndarray, chunk: int = 8192) -> np.ndarray:
    out = []
    with torch.no_grad():
        for start in range(0, rows.shape[0], chunk):
            part = rows[start : start + chunk]
            obs = gather_batch(data.obs_ptr, data.obs_idx, data.obs_val, part, "cpu", False)
            out.append(net(obs, _hand_batch(data, part, False, ones)).numpy())
    return np.concatenate(out) if out else np.zeros(0, np.float32)


def fit(
    data: Positions,
    hidden: tuple[int, ...] = (256, 128),
    epochs: int = 10,
    batch: int = 1024,
    lr: float = 1e-3,
    holdout: float = 0.05,
    seed: int = 0,
    progress: bool = True,
) -> tuple[ValueWeights, dict[str, float]]:
    """Regress ``data``'s targets (module docstring); the network as ``ValueWeights`` (targets in chips) and the
    fit's figures: positions trained on and held out, the held-out root mean squared error and the targets' spread."""
    if len(data) < 2:
        raise ValueError(f"{plural(len(data), 'position')}: too few to fit (ask for more deals)")
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    deals = np.unique(data.deals)
    held = deals[rng.random(deals.shape[0]) < holdout]
    held_out = np.isin(data.deals, held)
    test, train = np.flatnonzero(held_out), np.flatnonzero(~held_out)
    if train.size == 0 or test.size == 0:
        raise ValueError(
            f"{plural(len(data), 'position')} from {plural(deals.shape[0], 'deal')}: "
            f"too few to hold out {holdout:.0%} of them"
        )
    mean, scale = float(data.targets[train].mean()), float(data.targets[train].std()) or 1.0
    scaled = torch.from_numpy((data.targets - mean) / scale)
    ones = np.ones(data.hand_idx.shape[0], np.float32)
    net = ValueNet(hidden, OBS_SIZE, HIDDEN_HAND_SIZE)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    steps = epochs * -(-train.size // batch)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: 1.0 - k / steps)
    bar = tqdm(total=steps, unit="step", desc="fit", disable=not progress, dynamic_ncols=True)
    for _ in range(epochs):
        order = train[rng.permutation(train.size)]
        for start in range(0, order.size, batch):
            rows = np.sort(order[start : start + batch])
            obs = gather_batch(data.obs_ptr, data.obs_idx, data.obs_val, rows, "cpu", True)
            loss = torch.nn.functional.mse_loss(net(obs, _hand_batch(data, rows, True, ones)), scaled[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            bar.update(1)
            bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
    bar.close()
    error = _predict(net, data, test, ones) * scale + mean - data.targets[test]
    figures = {
        "positions_trained": int(train.size),
        "positions_held_out": int(test.size),
        "held_out_rmse": float(np.sqrt(np.mean(error**2))),
        "held_out_target_std": float(data.targets[test].std()),
    }

    def numpy(t: torch.Tensor) -> np.ndarray:
        return t.detach().numpy().astype(np.float32, copy=True)

    first = np.concatenate([numpy(net.obs_weight), numpy(net.hand_weight)]).T  # (width, INPUT_SIZE)
    dense = [cast(torch.nn.Linear, layer) for layer in net.layers]
    layers = [(first, numpy(net.first_bias))] + [(numpy(layer.weight), numpy(layer.bias)) for layer in dense]
    head = (numpy(net.head.weight) * scale, numpy(net.head.bias) * scale + mean)
    return ValueWeights(tuple(layers), head, {}), figures


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m train.research.value_fit", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--policy", default="ppo", help="the policy file: 'ppo' (shipped) or 'ppo:PATH'")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 5, 6, 7, 8], help="table sizes")
    parser.add_argument("--deals", type=int, default=40_000, help="deals played, split evenly over the sizes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hidden", type=int, nargs="+", default=[256, 128], help="hidden layer widths")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch", type=int, default=1024, help="positions per gradient step")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate, decayed linearly to 0")
    parser.add_argument("--holdout", type=float, default=0.05, help="share of the deals held out to measure the fit")
    parser.add_argument("--out", type=Path, default=Path("runs/value/ppo_value.npz"), help="the value file written")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 1 <= args.deals <= MAX_DEALS:
        parser.error(f"--deals: between 1 and {MAX_DEALS:,}, got {args.deals}")
    if any(not 2 <= n <= core.MAX_PLAYERS for n in args.players):
        parser.error(f"--players: table sizes between 2 and {core.MAX_PLAYERS}, got {args.players}")
    if any(w < 1 for w in args.hidden) or args.epochs < 1 or args.batch < 1 or not args.lr > 0:
        parser.error("--hidden, --epochs and --batch take positive integers, --lr a positive number")
    if not 0.0 < args.holdout <= 0.5:
        parser.error(f"--holdout: a share in (0, 0.5], got {args.holdout}")
    command = "python -m train.research.value_fit " + shlex.join(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    try:
        data = positions(args.policy, args.players, args.deals, args.seed, progress=not args.no_progress)
        gathered = time.perf_counter() - started
        weights, figures = fit(
            data, tuple(args.hidden), args.epochs, args.batch, args.lr, args.holdout, args.seed, not args.no_progress
        )
    except ValueError as e:
        print(f"value_fit: error: {e}", file=sys.stderr)
        return 2
    meta = {
        "policy": args.policy,
        "players": args.players,
        "deals": args.deals,
        "seed": args.seed,
        "command": command,
        "positions_seconds": round(gathered, 1),
        "fit_seconds": round(time.perf_counter() - started - gathered, 1),
        **figures,
    }
    path = save_value(args.out, ValueWeights(weights.hidden, weights.head, meta))
    print(
        f"{len(data):,} positions from {args.deals:,} deals ({gathered:.0f} s), fitted in {meta['fit_seconds']:.0f} s; "
        f"held-out error {figures['held_out_rmse']:.3f} chips (root mean square) against a spread of "
        f"{figures['held_out_target_std']:.3f} in the targets; written to {path}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
