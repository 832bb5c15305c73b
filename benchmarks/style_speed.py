"""Decision speed of the style zoo's batched player (``agents.batched_styles``) against the per-observation agent.

What is measured
----------------
For each style, ``--batch-size`` ``BatchGame`` tables of ``--players`` players are played by that style in every
seat (seeded by ``--seed``). At every step three figures are taken, each in rows (decisions) per second of the
timed calls:

* ``batched``: ``BatchedStylePlayer.act_batch`` on the step's observations and masks (built untimed, as a trainer's
  collector builds them);
* ``from states``: ``BatchedStylePlayer.act_game``, which observes each row itself (the vector env's path; the
  random styles observe each row twice);
* ``per row``: ``StyleAgent.act`` on each row's observation dict (what ``PerRowPlayer`` calls; rows recorded from
  the same games).

The ratio printed is ``batched`` over ``per row``. Single-process, single-thread figures
(``benchmarks/preamble.py``); the load average is printed with them. Every style gets an untimed warm-up (the first
run compiles the kernels).

Usage
-----
::

    python benchmarks/style_speed.py                               # 5 players, 1,024 tables, 2 s per figure
    python benchmarks/style_speed.py --styles rock eager-random --players 3 --seconds 5 --seed 1
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import os
import time

import numpy as np

from agents.batched_styles import BatchedStylePlayer
from agents.styles import STYLES, StyleAgent
from bourre_env.batch import BatchGame

WARMUP_STEPS = 5


def measure(style: str, players: int, batch_size: int, seconds: float, seed: int) -> dict[str, float]:
    """Rows per second of each way of deciding (``batched``, ``from states``, ``per row``) for one style."""
    game = BatchGame(batch_size, seed=seed, num_players=players)
    player, agent = BatchedStylePlayer(style, seed), StyleAgent(style, seed)
    rows = np.arange(batch_size)
    timed = {"batched": 0.0, "from states": 0.0}
    counted = {"batched": 0, "from states": 0}
    recorded: list[tuple[np.ndarray, np.ndarray]] = []
    step = 0
    while step < WARMUP_STEPS or timed["batched"] < seconds or timed["from states"] < seconds:
        obs, masks = game.observations(), game.legal_masks()
        t0 = time.perf_counter()
        chosen = player.act_batch(obs, masks, rows)
        t1 = time.perf_counter()
        player.act_game(game, rows)
        t2 = time.perf_counter()
        if step >= WARMUP_STEPS:
            timed["batched"] += t1 - t0
            timed["from states"] += t2 - t1
            counted["batched"] += batch_size
            counted["from states"] += batch_size
            if len(recorded) * batch_size < 20_000:
                recorded.append((obs.copy(), masks.copy()))
        game.step(chosen)
        step += 1
    rates = {key: counted[key] / timed[key] for key in timed}
    per_row, rows_done = 0.0, 0
    while per_row < seconds:
        for obs, masks in recorded:
            t0 = time.perf_counter()
            for b in range(batch_size):
                agent.act({"observation": obs[b], "action_mask": masks[b]})
            per_row += time.perf_counter() - t0
            rows_done += batch_size
            if per_row >= seconds:
                break
    rates["per row"] = rows_done / per_row
    return rates


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--styles", nargs="+", default=list(STYLES), choices=list(STYLES), help="styles to measure")
    parser.add_argument("--players", type=int, default=5, help="table size (default: 5)")
    parser.add_argument("--batch-size", type=int, default=1024, help="tables per call (default: 1,024)")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per figure (default: 2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the tables and the styles (default: 0)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(
        f"style speed: {args.players} players, {args.batch_size} tables, {args.seconds:g} s per figure, seed "
        f"{args.seed}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
    )
    print("| style | batched rows/s | from states rows/s | per row rows/s | batched / per row |")
    print("|---|---:|---:|---:|---:|")
    for style in args.styles:
        r = measure(style, args.players, args.batch_size, args.seconds, args.seed)
        ratio = r["batched"] / r["per row"]
        print(
            f"| {style} | {r['batched']:,.0f} | {r['from states']:,.0f} | {r['per row']:,.0f} | {ratio:,.0f}x |",
            flush=True,
        )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
