"""Decision speed of the agents: ``agent.act`` calls per second, and the time of one decision.

What is measured
----------------
Random deals (``env.reset(seed=...)``) are played through the PettingZoo AEC env
``bourre_env.env(num_players=N)``; only the ``agent.act(observation)`` calls are timed (the
env's own stepping and observation building are not), and the figure is decisions per second
of that time. Two ways of driving the games:

* ``self``: every seat is the agent under test and its actions are played, so the observations
  are those of its own games (a table of heuristics passes often, so fewer play decisions).
* ``random``: uniformly random legal actions drive the game (nearly everyone plays every deal,
  the busiest tables) and the agent under test is asked for a decision at every step; its
  answer is timed, checked to be legal, and discarded.

For every agent the table gives decisions per second (over the time spent in ``act``) and the median
and 95th percentile of the time of one decision, in milliseconds: what a per-decision budget is held
to (the search agents' ``ms`` option, the 20 ms of ``pimc``'s target). Decisions with a single legal
action count too: every agent answers them at once. Each decision is timed twice: by the wall clock,
and by the CPU time of the measuring thread (``time.thread_time``), which is what the decision costs
on one core even when other processes share the machine (the wall clock then also counts the time
the process waited for a core; on an idle machine the two agree).

The agents are built with ``agents.make(spec, seed)``. Every configuration gets an untimed
warm-up first. Single-process, single-thread figures (the thread-count variables of numba and
the BLAS libraries default to 1, as in ``benchmarks/throughput.py``); close other CPU-heavy work
while measuring. This is a benchmark, not a test: the heuristic's target is 20,000 decisions/s.

Usage
-----
::

    python benchmarks/agents_speed.py                         # random and heuristic, 5 and 7 players
    python benchmarks/agents_speed.py --agents heuristic heuristic:tight --players 4 7 --seconds 5
    python benchmarks/agents_speed.py --agents pimc:8 ismcts:48 --players 5 --drivers random --seconds 60
    python benchmarks/agents_speed.py --agents pimc:64,rollout=ppo --players 5 --drivers self --profile 12

``--forward`` times instead the exported policy's forward pass alone (``agents.ppo.PolicyWeights``): the compiled
``logits`` against the dense numpy products ``dense_logits``, microseconds of CPU per row at several batch sizes,
on the observations of seeded deals driven by random legal actions.

``--profile N`` runs each configuration (its warm-up included) under ``cProfile`` and prints its ``N`` functions of most
own time (the profiler's overhead inflates the timings printed beside it; measure without it).
"""

from __future__ import annotations

import os
import sys

# Must run before numpy/numba are imported: they read these at import. Not in a process that already imported
# them (a test importing this module): numba refuses a NUMBA_NUM_THREADS changed after its threads started.
if not {"numba", "numpy"} & set(sys.modules):
    for _name in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_name, "1")

import argparse
import cProfile
import pstats
import time

import numpy as np

# Lets ``python benchmarks/agents_speed.py`` find the checkout's packages when they are not installed.
_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO_ROOT not in sys.path:
    sys.path.append(_REPO_ROOT)

import agents  # noqa: E402 - after the thread settings and the path
import bourre_env  # noqa: E402

TARGET = 20_000.0
"""Decisions per second the heuristic must reach."""
WARMUP_DECISIONS = 500
CLOCKS = ("wall", "cpu", "both")


def measure(
    spec: str, players: int, driver: str, seconds: float, seed: int, warmup: int = WARMUP_DECISIONS, clock: str = "wall"
) -> np.ndarray:
    """Seconds of every timed ``act`` call over random deals until ``seconds`` of wall time pass: by the wall
    clock (``clock="wall"``), or the CPU time of this thread (``"cpu"``), or both as rows ``(wall, cpu)``
    (``"both"``, shape ``(2, decisions)``)."""
    if clock not in CLOCKS:
        raise ValueError(f"clock: expected one of {CLOCKS}, got {clock!r}")
    env = bourre_env.env(num_players=players)
    table = [agents.make(spec, seed + s) for s in range(players)]
    rng = np.random.default_rng(seed)
    times: list[tuple[float, float]] = []
    deadline = time.perf_counter() + seconds
    episode = 0
    while True:
        env.reset(seed=seed + episode)
        episode += 1
        for agent in table:
            agent.reset()
        for name in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            seat = env.unwrapped.agent_name_mapping[name]
            start, start_cpu = time.perf_counter(), time.thread_time()
            action = table[seat].act(obs)
            elapsed = (time.perf_counter() - start, time.thread_time() - start_cpu)
            if not obs["action_mask"][action]:
                raise RuntimeError(f"{spec} chose the illegal action {action}")
            if warmup > 0:
                warmup -= 1  # untimed: first calls pay for imports and caches
            else:
                times.append(elapsed)
            if driver == "random":
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(legal.size)])
            env.step(action)
        if time.perf_counter() >= deadline and times:
            both = np.asarray(times).T
            return both if clock == "both" else both[CLOCKS.index(clock)]


def forward_speed(players: int, seconds: float, seed: int) -> list[tuple[int, float, float]]:
    """``(batch, compiled us/row, dense us/row)`` of the shipped policy's forward pass: CPU time of this thread,
    each over about ``seconds`` per batch size and kind, on observations of 30 seeded deals at ``players``."""
    from agents.ppo import SHIPPED_MODEL, load_policy

    weights = load_policy(SHIPPED_MODEL)
    env = bourre_env.env(num_players=players)
    rng = np.random.default_rng(seed)
    rows = []
    for episode in range(30):
        env.reset(seed=seed + episode)
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            rows.append(obs["observation"])
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
    observations = np.asarray(rows, dtype=np.float32)
    nonzero = (observations != 0).sum(axis=1)
    print(
        f"{observations.shape[0]} observations, {np.mean(observations != 0) * 100:.1f}% nonzero entries "
        f"({nonzero.mean():.1f} a row on average, {nonzero.max()} at most)"
    )
    x = observations[:, : weights.obs_size]
    for k, (weight, bias) in enumerate(weights.hidden):
        x = np.maximum(x @ weight.T + bias, 0.0) if weights.activation == "relu" else np.tanh(x @ weight.T + bias)
        print(f"hidden layer {k}: {np.mean(x != 0) * 100:.1f}% nonzero after the activation")
    out = []
    for batch in (1, 16, 256, 1024):
        x = np.resize(observations, (batch, observations.shape[1]))
        per_row = []
        for forward in (weights.logits, weights.dense_logits):
            forward(x)
            calls, start = 0, time.thread_time()
            while time.thread_time() - start < seconds:
                forward(x)
                calls += 1
            per_row.append((time.thread_time() - start) / calls / batch * 1e6)
        out.append((batch, per_row[0], per_row[1]))
    return out


def load_average() -> str:
    """The load averages over 1, 5 and 15 minutes (timings on a shared machine are read beside them)."""
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unavailable"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", nargs="+", default=["random", "heuristic"], help="agent specs (agents.make)")
    parser.add_argument("--players", nargs="+", type=int, default=[5, 7], help="table sizes")
    parser.add_argument(
        "--drivers",
        nargs="+",
        choices=["self", "random"],
        default=["self", "random"],
        help="who drives the games: the agent under test, or random legal actions",
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="wall time per configuration")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--warmup", type=int, default=WARMUP_DECISIONS, help="untimed decisions first (fewer for slow agents)"
    )
    parser.add_argument("--forward", action="store_true", help="time the policy's forward pass alone")
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N", help="profile each configuration: its N costliest functions"
    )
    args = parser.parse_args(argv)
    for spec in args.agents:
        try:  # an unknown spec is a usage error, said before any measurement
            agents.make(spec, args.seed)
        except ValueError as err:
            parser.error(f"--agents: {err}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print(f"uptime: {load_average()}")
    if args.forward:
        for players in args.players:
            print(f"{'players':>7} {'batch':>6} {'compiled us/row':>16} {'dense us/row':>13}")
            for batch, compiled, dense in forward_speed(players, args.seconds, args.seed):
                print(f"{players:>7} {batch:>6} {compiled:>16.2f} {dense:>13.2f}", flush=True)
        print(f"uptime: {load_average()}")
        return 0
    print(
        f"{'agent':<34} {'players':>7} {'driver':>7} {'decisions':>10} {'decisions/s':>12} {'median ms':>10} "
        f"{'p95 ms':>8} {'cpu median ms':>14} {'cpu p95 ms':>11}"
    )
    for spec in args.agents:
        for players in args.players:
            for driver in args.drivers:
                profiler = cProfile.Profile() if args.profile > 0 else None
                if profiler is not None:
                    profiler.enable()
                wall, cpu = measure(spec, players, driver, args.seconds, args.seed, args.warmup, clock="both")
                if profiler is not None:
                    profiler.disable()
                rate = wall.size / wall.sum()
                median, p95, cpu_median, cpu_p95 = (
                    float(np.percentile(t, q)) * 1000.0 for t in (wall, cpu) for q in (50, 95)
                )
                flag = "" if not spec.startswith("heuristic") or rate >= TARGET else f"  (below {TARGET:,.0f})"
                print(
                    f"{spec:<34} {players:>7} {driver:>7} {wall.size:>10,} {rate:>12,.0f} {median:>10.3f} "
                    f"{p95:>8.2f} {cpu_median:>14.3f} {cpu_p95:>11.2f}{flag}",
                    flush=True,
                )
                if profiler is not None:
                    pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)
    print(f"uptime: {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
