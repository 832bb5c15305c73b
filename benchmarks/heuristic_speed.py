"""Decision speed of the batched heuristic (``agents.heuristic.batch``) against the Python agent it ports.

What is measured
----------------
``BatchGame`` rows (``--batch-size`` games of ``--players`` players under ``--rules``) are played
by the heuristic in every seat (``--driver self``: passes and full tables as a table of
heuristics has them) or by uniformly random legal actions with the heuristic asked at every
step (``--driver random``: the busiest tables, nearly all trick play). At every step the rows'
observations and masks are built (``BatchGame.observations`` / ``legal_masks``, untimed, so they
are fresh in cache as a trainer's are) and only ``BatchHeuristic.act`` is timed: one compiled call
for the whole batch. The figure is decisions per second of that time.

The Python agent (``HeuristicAgent.act``, one observation dict per call) is then timed on
observations recorded from the same games, and the ratio of the two rates is printed. The
batch kernel's target is 1,000,000 decisions/s.

Single-process, single-thread figures (the thread-count variables of numba and the BLAS
libraries default to 1, as in ``benchmarks/throughput.py``); the machine's load average is
printed with the figures, which move with it: close other CPU-heavy work while measuring.
Every measurement gets an untimed warm-up (and the first run compiles the kernel).

Usage
-----
::

    python benchmarks/heuristic_speed.py                       # 5 players, self-play, 3 s each
    python benchmarks/heuristic_speed.py --players 7 --driver random --seconds 10 --seed 1
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import functools
import os
import time
from collections.abc import Callable

import numpy as np

from agents.heuristic import PARAM_SETS, HeuristicAgent
from agents.heuristic.batch import BatchHeuristic
from bourre_env.actions import NUM_ACTIONS
from bourre_env.batch import BatchGame
from bourre_env.core.rules import presets
from bourre_env.observation import OBS_SIZE

TARGET = 1_000_000.0
"""Decisions per second the batch kernel must reach on one core."""
WARMUP_STEPS = 20
RECORDED = 20_000
"""Observations kept for the Python agent's measurement."""


class Clock:
    """Wall time and this thread's CPU time, summed over the timed calls."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0

    def time(self, call: Callable[[], object]) -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        call()
        self.cpu += time.thread_time() - cpu
        self.wall += time.perf_counter() - wall


def measure_batch(args: argparse.Namespace) -> tuple[int, Clock, list[tuple[np.ndarray, np.ndarray]]]:
    """``(decisions, time spent in act, recorded (observation, mask) batches)`` over ``args.seconds`` of play."""
    game = BatchGame(args.batch_size, seed=args.seed, rules=args.rules, num_players=args.players)
    bot = BatchHeuristic(args.params, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    obs = np.zeros((args.batch_size, OBS_SIZE), dtype=np.float32)
    masks = np.zeros((args.batch_size, NUM_ACTIONS), dtype=np.int8)
    actions = np.zeros(args.batch_size, dtype=np.int64)
    recorded: list[tuple[np.ndarray, np.ndarray]] = []
    kept = 0
    decisions = 0
    clock = Clock()
    step = 0
    deadline = float("inf")
    while time.perf_counter() < deadline:
        game.observations(out=obs)
        game.legal_masks(out=masks)
        step += 1
        if step > WARMUP_STEPS:
            clock.time(lambda: bot.act(obs, masks, out=actions))
            decisions += args.batch_size
        else:
            bot.act(obs, masks, out=actions)  # untimed: the first call loads (or compiles) the kernel
            if step == WARMUP_STEPS:
                deadline = time.perf_counter() + args.seconds
        if kept < RECORDED:
            take = min(RECORDED - kept, 64)  # a few rows of every step: observations of every stage of the deal
            recorded.append((obs[:take].copy(), masks[:take].copy()))
            kept += take
        if args.driver == "random":
            # a uniformly random legal action per row: the largest of the legal actions' random keys
            game.step(np.argmax(masks * rng.random(masks.shape), axis=1))
        else:
            game.step(actions)
    return decisions, clock, recorded


def measure_python(args: argparse.Namespace, recorded: list[tuple[np.ndarray, np.ndarray]]) -> tuple[int, Clock]:
    """``(decisions, time spent in act)`` of ``HeuristicAgent`` over the recorded observations, in chunks of 500."""
    agent = HeuristicAgent(args.seed, PARAM_SETS[args.params])
    rows = [{"observation": o, "action_mask": m} for obs, masks in recorded for o, m in zip(obs, masks, strict=True)]
    chunks = [rows[i : i + 500] for i in range(0, len(rows), 500)]

    def play(chunk: list[dict[str, np.ndarray]]) -> None:
        for row in chunk:
            agent.act(row)

    play(chunks[0])  # warm-up
    decisions = 0
    clock = Clock()
    deadline = time.perf_counter() + args.seconds
    while time.perf_counter() < deadline:
        chunk = chunks[(decisions // 500) % len(chunks)]
        clock.time(functools.partial(play, chunk))
        decisions += len(chunk)
    return decisions, clock


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="wall time of each measurement")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", type=int, default=5, help="table size, 2..8")
    parser.add_argument("--rules", choices=sorted(presets), default="standard", help="rule preset")
    parser.add_argument("--params", choices=sorted(PARAM_SETS), default="default", help="heuristic parameter set")
    parser.add_argument("--batch-size", type=int, default=1024, help="rows per BatchHeuristic.act call")
    parser.add_argument(
        "--driver",
        choices=["self", "random"],
        default="self",
        help="who plays the games: the heuristic in every seat, or random legal actions",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(
        f"{args.players} players, {args.rules} rules, heuristic:{args.params}, driver {args.driver}, "
        f"batch {args.batch_size}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs",
        flush=True,
    )
    print(f"{'decisions/s':<28} {'CPU time':>12} {'wall time':>12} {'decisions':>12}")
    decisions, batch, recorded = measure_batch(args)
    flag = "" if decisions / batch.cpu >= TARGET else f"  (below the target, {TARGET:,.0f})"
    print(
        f"{'batch (BatchHeuristic.act)':<28} {decisions / batch.cpu:>12,.0f} {decisions / batch.wall:>12,.0f} "
        f"{decisions:>12,}{flag}",
        flush=True,
    )
    py_decisions, python = measure_python(args, recorded)
    print(
        f"{'python (HeuristicAgent.act)':<28} {py_decisions / python.cpu:>12,.0f} "
        f"{py_decisions / python.wall:>12,.0f} {py_decisions:>12,}"
    )
    print(
        f"{'ratio':<28} {(decisions / batch.cpu) / (py_decisions / python.cpu):>11,.1f}x "
        f"{(decisions / batch.wall) / (py_decisions / python.wall):>11,.1f}x"
    )
    print(f"load average {os.getloadavg()[0]:.2f} at the end (CPU time counts only the time this process ran)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
