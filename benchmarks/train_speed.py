"""Training speed of PPO self-play: learner steps/s of both trainers' loops, their ratio, and where the time goes.

Both trainers are measured in one run (``--trainer both``, the default): the batched trainer of
``bourre train`` (``train/ppo/trainer.py``) and the MaskablePPO trainer of ``bourre train --trainer
sb3`` (``train/sb3/trainer.py``), each with its own default arguments and a fresh network, on the
same machine one after the other; the last table gives both figures and the ratio.

What is measured (MaskablePPO)
------------------------------
A *learner step* is one decision of the learner seat: one ``step`` of one training env, one row of
the rollout buffer (opponent moves are played inside the env's ``step`` and are not counted).

* **The loop.** The envs and the model are built exactly as the training script builds them
  (``train.sb3.trainer``: ``Args``, ``make_vec_env``, ``build_model``: MaskablePPO over
  ``num_envs`` tables of one ``train.sb3.pool.PoolVecEnv`` in this process, its TensorBoard logger, and its
  ``SelfPlayCallback`` with the periodic snapshots, evaluations and checkpoints switched off).
  A warm-up ``model.learn`` runs first (process and env start-up, the first reset, torch's first
  calls), then ``model.learn(..., reset_num_timesteps=False)`` is timed: learner steps per second
  of wall time. (SB3's own ``time/fps`` counts from the start of a run's first ``learn`` call, env
  start-up and first reset included, so it reads lower than this figure early in a run.) ``learn``
  runs whole rollouts, so the steps timed are ``--steps`` rounded up to a multiple of
  ``num_envs * n_steps``. So that a slow or busy machine still finishes in time, ``learn`` is
  called one rollout at a time (each call is one iteration of the same loop: collect a rollout,
  log, update) and stops after the rollout that passes ``--max-seconds``; ``--max-seconds 0``
  times one ``learn(--steps)`` call instead.
* **The split of that wall time**, from timers placed around the calls of the same run: the vec
  env's ``step_async`` + ``step_wait`` (the batched tables and the opponents' moves, in compiled
  calls); the policy's forward pass in
  the rollouts (sampling the actions, the values); the rest of the rollout (masks, tensors, the
  rollout buffer, the callback, GAE); the PPO update (``model.train()``); and what is left of
  ``learn`` (the logger). A timing ``VecEnvWrapper`` goes around the env the training script
  builds, and ``collect_rollouts``, ``train`` and the policy's ``forward`` are wrapped on the
  instance: nothing of the training code is changed.
* **The raw env, as the ceiling**: ``train.learning.opponent_pool.PoolEnv`` (a ``BourreSingleAgentEnv``
  with the training script's opponent pool) stepped in this process with uniformly random legal
  learner actions for ``--seconds``, resets included: learner steps per second on one core, with
  no policy and no PPO. Printed with the ratio loop / raw env, and loop / (raw env
  times ``min(CPUs, num_envs)``, the ceiling of the subprocess envs the trainer used before ``BourreVecEnv``).

The network is fresh (no imitation warm start): its masked softmax is nearly uniform, like the
random learner of the raw env. Both play (rather than pass) more often than a trained policy, so
they make more decisions per deal: at 5 players about 5.8 learner decisions per deal for random
play, 3.3 for the heuristic, about 1 for a policy that nearly always passes. The env's cost is
mostly per deal (the opponents play out every deal inside ``step``), so learner steps per second
fall with the decisions per deal: a trained policy that passes more trains at fewer steps per
second than these figures. Both tables print the learner steps per deal they saw.
``--snapshot`` adds the fresh policy to the opponent pool as a learner snapshot, the state of a run
after its first ``snapshot_every`` steps (then ``pool_snapshot`` of the opponent seats are numpy
MLPs instead of the heuristic); without it the pool is that of a run's start.

The torch threads of the main process follow the training script (``--torch-threads``, default 1;
0: the number of CPUs, at most 4). Close other CPU-heavy work while measuring: the load average at
the start is printed so that a busy machine can be recognised. On a busy machine more than one
torch thread can make the small forward passes and the update many times slower (the threads wait
for each other); the time per forward call and per update is printed to compare.

What is measured (the batched trainer)
--------------------------------------
A *learner step* is one decision the learner takes, at whichever seat of whichever table (one
row of ``train.ppo.rollout.Transitions``). The network, the optimizer and the ``Collector`` are
built as ``train.ppo.trainer.run`` builds them (its ``Args`` defaults: ``tables``, the seat pool,
``rollout_decisions``, the update); one rollout and update run untimed, then rollouts and
``ppo_update`` calls alternate, timed end to end, until ``--batched-steps`` learner steps or
``--max-seconds``. The split of the wall time comes from the collector's own timers (the env:
observations, masks, stepping and paying finished deals; the learner's forward pass and sampling;
the opponents' batched calls: the compiled ``agents.heuristic.batch.BatchHeuristic``, the random agent,
snapshots) and the update's. ``--pool L H R S`` measures another seat pool (learner, heuristic, random,
snapshot weights); ``--snapshot`` fills one snapshot slot with the fresh network.

Usage
-----
::

    python benchmarks/train_speed.py                # both trainers, 5 players, ~40 s timed each, ~3 min
    python benchmarks/train_speed.py --trainer batched --pool 1 0 0 0   # pure self-play only
    python benchmarks/train_speed.py --trainer batched --update-epochs 1   # the update's cost with one pass
    python benchmarks/train_speed.py --num-envs 4 --n-steps 512 --steps 100000 --snapshot --json speed.json
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import dataclasses
import functools
import json
import os
import platform
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from train.sb3.trainer import Args

_STARTED = time.perf_counter()
NEVER = 10**15
"""Step interval of the periodic snapshots and checkpoints of the callback: never within a benchmark."""
RAW_WARMUP_SECONDS = 0.3
"""Untimed random play before the raw env is timed (first calls, caches)."""


def progress(message: str) -> None:
    """A progress line on stderr, with the seconds since the script started."""
    print(f"[{time.perf_counter() - _STARTED:6.1f} s] {message}", file=sys.stderr, flush=True)


class Stopwatch:
    """Seconds spent inside the calls of the functions it wraps, and how many calls."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1

        return timed

    def clear(self) -> None:
        self.seconds, self.calls = 0.0, 0


class EnvStopwatch(Stopwatch):
    """A ``Stopwatch`` that also counts the episodes that ended (one deal each in training)."""

    def __init__(self) -> None:
        super().__init__()
        self.episodes = 0

    def clear(self) -> None:
        super().clear()
        self.episodes = 0


def timed_vec_env(venv: Any, watch: EnvStopwatch) -> Any:
    """``venv`` behind a ``VecEnvWrapper`` that adds the time of ``step_async`` and ``step_wait`` to ``watch``
    and counts the episodes that end."""
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class TimedVecEnv(VecEnvWrapper):
        def reset(self) -> Any:
            return self.venv.reset()

        def step_async(self, actions: np.ndarray) -> None:
            start = time.perf_counter()
            self.venv.step_async(actions)
            watch.seconds += time.perf_counter() - start

        def step_wait(self) -> Any:
            start = time.perf_counter()
            result = self.venv.step_wait()
            watch.seconds += time.perf_counter() - start
            watch.calls += 1
            watch.episodes += int(np.count_nonzero(result[2]))
            return result

    return TimedVecEnv(venv)


# ---------------------------------------------------------------------------- the raw env
def measure_raw_env(args: Args, players: int, seconds: float, snapshots: list[str]) -> tuple[int, int, float]:
    """``(learner steps, episodes, seconds)`` of one ``PoolEnv`` stepped with random legal learner actions."""
    from train.learning.opponent_pool import PoolEnv

    env = PoolEnv(args.pool_weights(), seed=args.seed * 1000, num_players=players)
    if snapshots:
        env.set_snapshots(snapshots)
    rng = np.random.default_rng(args.seed)

    def play(budget: float) -> tuple[int, int, float]:
        steps = episodes = 0
        start = time.perf_counter()
        deadline = start + budget
        while True:
            legal = np.flatnonzero(env.action_masks())
            _, _, terminated, _, _ = env.step(int(legal[rng.integers(legal.size)]))
            steps += 1
            if terminated:
                episodes += 1
                env.reset()
            now = time.perf_counter()
            if now >= deadline:
                return steps, episodes, now - start

    env.reset(seed=args.seed)
    play(RAW_WARMUP_SECONDS)
    measured = play(seconds)
    env.close()
    return measured


# ---------------------------------------------------------------------------- the loop
def measure(opts: argparse.Namespace) -> dict[str, Any]:
    """Build the training envs and model, time the raw env and the loop; the figures as a dict."""
    import torch

    from train.sb3.trainer import RunState, SelfPlayCallback, build_model, export_policy, make_vec_env

    args = Args(
        seed=opts.seed,
        players=tuple(opts.players),
        num_envs=opts.num_envs,
        n_steps=opts.n_steps,
        torch_threads=opts.torch_threads,
        progress=False,
        imitation_decisions=0,
        eval_every=0,
        snapshot_every=NEVER,
        checkpoint_every=NEVER,
    )
    args.validate()
    threads = args.torch_threads or min(4, os.cpu_count() or 1)  # the training script's rule
    torch.set_num_threads(threads)
    rollout_size = args.num_envs * args.n_steps
    warmup = opts.warmup_steps if opts.warmup_steps is not None else rollout_size

    env_watch = EnvStopwatch()
    forward_watch, rollout_watch, train_watch = Stopwatch(), Stopwatch(), Stopwatch()
    used = {k: v for k, v in dataclasses.asdict(args).items() if k != "run_dir"}
    figures: dict[str, Any] = {"torch_threads": threads, "rollout_size": rollout_size, "training_args": used}
    with tempfile.TemporaryDirectory(prefix="train_speed_") as tmp:
        run_dir = Path(tmp)
        progress(f"building {args.num_envs} tables and the model (torch threads {threads})")
        start = time.perf_counter()
        env = timed_vec_env(make_vec_env(args), env_watch)
        try:
            model = build_model(args, env, run_dir)
            figures["startup_seconds"] = time.perf_counter() - start
            snapshots: list[str] = []
            if opts.snapshot:
                snapshots = [str(export_policy(model, run_dir / "snapshot.npz", {"seed": args.seed}))]
                env.env_method("set_snapshots", snapshots)

            # The raw env first, while the idle workers wait on their pipes.
            progress(f"raw env: {opts.seconds:g} s per table size")
            raw = {n: measure_raw_env(args, n, opts.seconds, snapshots) for n in sorted(set(args.players))}
            figures["raw"] = {
                str(n): {
                    "steps": s,
                    "episodes": e,
                    "seconds": t,
                    "steps_per_second": s / t,
                    "steps_per_episode": s / max(e, 1),
                }
                for n, (s, e, t) in raw.items()
            }
            # In lockstep, one vec step costs each worker one env step: the ceiling per step is the mean time.
            per_step = np.mean(
                [raw[n][2] / raw[n][0] for n in (args.players[k % len(args.players)] for k in range(args.num_envs))]
            )
            figures["raw_steps_per_second"] = float(1.0 / per_step)

            model.collect_rollouts = rollout_watch.wrap(model.collect_rollouts)
            model.train = train_watch.wrap(model.train)
            model.policy.forward = forward_watch.wrap(model.policy.forward)
            callback = SelfPlayCallback(args, run_dir, RunState())

            progress(f"warm-up learn: {warmup:,} steps")
            start = time.perf_counter()
            model.learn(warmup, callback=callback)
            figures["warmup_steps"] = int(model.num_timesteps)
            figures["warmup_seconds"] = time.perf_counter() - start

            for watch in (env_watch, forward_watch, rollout_watch, train_watch):
                watch.clear()
            updates_before, steps_before = model._n_updates, model.num_timesteps
            limit = f", at most {opts.max_seconds:g} s" if opts.max_seconds else ""
            progress(f"timed learn: {opts.steps:,} steps{limit}")
            start = time.perf_counter()
            if opts.max_seconds:
                deadline = start + opts.max_seconds
                while model.num_timesteps - steps_before < opts.steps and time.perf_counter() < deadline:
                    model.learn(rollout_size, callback=callback, reset_num_timesteps=False)
                    done = model.num_timesteps - steps_before
                    progress(f"  {done:,} steps, {done / (time.perf_counter() - start):,.0f} steps/s")
            else:
                model.learn(opts.steps, callback=callback, reset_num_timesteps=False)
            total = time.perf_counter() - start
        finally:
            env.close()

    steps = int(model.num_timesteps - steps_before)
    rollout_other = rollout_watch.seconds - env_watch.seconds - forward_watch.seconds
    parts = {
        "env_step": env_watch.seconds,
        "policy_forward": forward_watch.seconds,
        "rollout_other": rollout_other,
        "ppo_update": train_watch.seconds,
        "learn_other": total - rollout_watch.seconds - train_watch.seconds,
    }
    figures.update(
        {
            "steps": steps,
            "seconds": total,
            "steps_per_second": steps / total,
            "rollouts": rollout_watch.calls,
            "stopped_by_max_seconds": bool(opts.max_seconds) and steps < opts.steps,
            "forward_calls": forward_watch.calls,
            "episodes": env_watch.episodes,
            "steps_per_episode": steps / max(env_watch.episodes, 1),
            "ppo_epochs_run": int(model._n_updates - updates_before),
            "ppo_epochs_scheduled": train_watch.calls * args.n_epochs,
            "parts_seconds": parts,
            "env_share": parts["env_step"] / total,
            "policy_share": (parts["policy_forward"] + parts["ppo_update"]) / total,
        }
    )
    figures["loop_over_raw"] = figures["steps_per_second"] / figures["raw_steps_per_second"]
    workers = min(os.cpu_count() or 1, args.num_envs)
    figures["cores_for_workers"] = workers
    figures["loop_over_raw_times_cores"] = figures["loop_over_raw"] / workers
    return figures


# ---------------------------------------------------------------------------- the batched trainer
def _batched_overrides(opts: argparse.Namespace) -> dict[str, int]:
    """The batched trainer's arguments given on the command line (0: its training default)."""
    given = {"tables": opts.tables, "update_epochs": opts.update_epochs, "minibatch_size": opts.minibatch_size}
    return {name: value for name, value in given.items() if value}


def measure_batched(opts: argparse.Namespace) -> dict[str, Any]:
    """Time the batched trainer's rollouts and updates (see the module docstring); the figures as a dict."""
    import torch

    from agents.ppo import save_policy
    from train.learning.policy_net import PolicyNet
    from train.ppo.rollout import Collector
    from train.ppo.trainer import Args as BatchedArgs
    from train.ppo.trainer import make_optimizer, ppo_update

    pool = dict(zip(("pool_learner", "pool_heuristic", "pool_random", "pool_snapshot"), opts.pool or (), strict=False))
    args = BatchedArgs(
        seed=opts.seed,
        players=tuple(opts.players),
        torch_threads=opts.torch_threads,
        progress=False,
        imitation_decisions=0,
        device=opts.device,
        **_batched_overrides(opts),
        **pool,
    )
    args.validate()
    threads = args.torch_threads or min(4, os.cpu_count() or 1)
    torch.set_num_threads(threads)
    torch.manual_seed(args.seed)
    progress(f"batched: {args.tables} tables, pool {args.pool()}")
    start = time.perf_counter()
    device = torch.device(args.device)
    net = PolicyNet(args.hidden).to(device)
    optimizer = make_optimizer(net, args)
    collector = Collector(
        net, args.players, args.tables, args.pool(), seed=args.seed, reward_scale=args.reward_scale, device=device
    )
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory(prefix="train_speed_") as tmp:
        if opts.snapshot:
            collector.set_snapshots([str(save_policy(Path(tmp) / "snapshot.npz", net.policy_weights({})))])
        figures: dict[str, Any] = {
            "torch_threads": threads,
            "device": str(device),
            "heuristic": type(collector.heuristic).__name__,
            "training_args": {k: v for k, v in dataclasses.asdict(args).items() if k != "run_dir"},
        }
        progress(f"batched warm-up: one rollout of {args.rollout_decisions:,} and its update")
        collector.collect(args.rollout_decisions)
        ppo_update(net, optimizer, collector, args, rng, device)
        figures["warmup_seconds"] = time.perf_counter() - start
        collector.seconds = dict.fromkeys(collector.seconds, 0.0)
        collector.reset_stats()
        limit = f", at most {opts.max_seconds:g} s" if opts.max_seconds else ""
        progress(f"batched timed: {opts.batched_steps:,} learner steps{limit}")
        steps, rollout_seconds, update_seconds, updates, minibatches = 0, 0.0, 0.0, 0, 0
        update_cpu = 0.0
        start = time.perf_counter()
        while steps < opts.batched_steps and not (opts.max_seconds and time.perf_counter() - start > opts.max_seconds):
            t0 = time.perf_counter()
            steps += collector.collect(args.rollout_decisions)
            t1, c1 = time.perf_counter(), time.process_time()
            minibatches += int(ppo_update(net, optimizer, collector, args, rng, device)["minibatches"])
            t2, c2 = time.perf_counter(), time.process_time()
            rollout_seconds += t1 - t0
            update_seconds += t2 - t1
            update_cpu += c2 - c1
            updates += 1
            progress(f"  {steps:,} steps, {steps / (t2 - start):,.0f} steps/s")
        total = time.perf_counter() - start
        if device.type == "cpu":
            progress("batched: the update's floor (the network's own passes on one minibatch, timed alone)")
            figures["update_floor"] = update_floor(net, collector, args, device)
            figures["update_floor"]["update_cpu_ms_per_minibatch"] = 1e3 * update_cpu / max(minibatches, 1)
    s, c = collector.stats, collector.seconds
    parts = {
        "env": c["env"],
        "learner": c["learner"],
        "opponents": c["opponents"],
        "rollout_other": rollout_seconds - sum(c.values()),
        "ppo_update": update_seconds,
        "loop_other": total - rollout_seconds - update_seconds,
    }
    figures.update(
        {
            "steps": steps,
            "seconds": total,
            "steps_per_second": steps / total,
            "updates": updates,
            "minibatches": minibatches,
            "update_cpu_seconds": update_cpu,
            "table_decisions": s["decisions"],
            "learner_share": s["learner_decisions"] / max(s["decisions"], 1),
            "learner_steps_per_seat_deal": s["learner_decisions"] / max(s["learner_deals"], 1),
            "parts_seconds": parts,
            "stopped_by_max_seconds": steps < opts.batched_steps,
        }
    )
    return figures


def update_floor(net: Any, collector: Any, args: Any, device: Any, repeats: int = 12) -> dict[str, Any]:
    """What one minibatch of the update costs at least with torch's kernels on this core: the network's forward and
    backward passes on one gathered minibatch of the collector's decisions (a plain sum for a loss), and within
    them the dense matrix products (each layer's product forward and its two backward) and the sparse first layer
    (forward and backward), each timed alone; the smallest CPU time of ``repeats``, in ms. The update spends the
    rest on gathering the rows, the policy's terms and the loss, the optimizer and Python."""
    import torch

    from train.learning.policy_net import sparse_first_layer

    t = collector.transitions
    rows = np.arange(min(args.minibatch_size, t.n))
    batch, hidden_batch = t.inputs(rows, device, grad=True)

    def least(call: Callable[[], object]) -> float:
        best = float("inf")
        for _ in range(repeats):
            c0 = time.process_time()
            call()
            best = min(best, time.process_time() - c0)
        return 1e3 * best

    def network() -> None:
        net.zero_grad()
        logits, values = net(batch, hidden_batch)
        (logits.sum() + values.sum()).backward()

    widths = [*net.hidden_sizes, net.actor.out_features + 1]  # the actor and critic heads as one product
    n = len(rows)
    inputs = [torch.randn(n, a) for a in widths[:-1]]
    weights = [torch.randn(a, b) for a, b in zip(widths[:-1], widths[1:], strict=True)]
    grads = [torch.randn(n, b) for b in widths[1:]]

    def dense() -> None:
        for x, w, g in zip(inputs, weights, grads, strict=True):
            x @ w  # forward
            g @ w.t()  # backward: the input's gradient
            x.t() @ g  # and the weight's

    first = net.first_weight.detach().clone().requires_grad_()
    upstream = torch.randn(n, first.shape[1])

    def sparse() -> None:
        first.grad = None
        (sparse_first_layer(first, batch) * upstream).sum().backward()

    network()
    macs = n * sum(a * b for a, b in zip(widths[:-1], widths[1:], strict=True))
    dense_ms = least(dense)
    return {
        "rows": n,
        "nonzero_per_row": float(batch.idx.shape[0]) / max(n, 1),
        "network_ms": least(network),
        "dense_ms": dense_ms,
        "sparse_ms": least(sparse),
        "dense_gflops": 3 * 2 * macs / (dense_ms * 1e-3) / 1e9 if dense_ms > 0 else float("nan"),
        "update_epochs": args.update_epochs,
    }


def measure_workers(opts: argparse.Namespace, workers: int) -> dict[str, Any]:
    """Time ``train.ppo.trainer.Training.iteration`` (the loop of ``bourre train``) with ``workers`` rollout workers:
    one untimed iteration (worker start-up, first rollout), then iterations until ``--batched-steps`` or
    ``--max-seconds``; the figures as a dict, with the learner's and the workers' time per step."""
    import torch

    from train.ppo.trainer import Args as BatchedArgs
    from train.ppo.trainer import Training, build_network
    from train.ppo.workers import start_workers
    from train.runs import RunState

    pool = dict(zip(("pool_learner", "pool_heuristic", "pool_random", "pool_snapshot"), opts.pool or (), strict=False))
    args = BatchedArgs(
        seed=opts.seed,
        players=tuple(opts.players),
        torch_threads=opts.torch_threads,
        progress=False,
        imitation_decisions=0,
        device=opts.device,
        workers=str(workers),
        backend=opts.backend,
        total_timesteps=10**12,  # no end of the run, no learning rate decay within the benchmark
        snapshot_every=10**12,
        eval_every=0,
        checkpoint_every=10**12,
        **_batched_overrides(opts),
        **pool,
    )
    args.validate()
    progress(f"workers {workers}: {args.tables} tables, pool {args.pool()}")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="train_speed_") as tmp:
        net, optimizer, state = build_network(args, None, torch.device(args.device))
        training = Training(args, Path(tmp), net, optimizer, RunState(), {}, torch.device(args.device))
        try:
            if workers > 1:
                training.pool = start_workers(args, 0, workers)
            training.iteration()
            warmup = time.perf_counter() - start
            limit = f", at most {opts.max_seconds:g} s" if opts.max_seconds else ""
            progress(f"workers {workers} timed: {opts.batched_steps:,} learner steps{limit}")
            sums = dict.fromkeys(("steps", "rollout_seconds", "update_seconds", "worker_seconds"), 0.0)
            updates = 0
            start = time.perf_counter()
            while sums["steps"] < opts.batched_steps and not (
                opts.max_seconds and time.perf_counter() - start > opts.max_seconds
            ):
                training.iteration()
                for key in sums:
                    sums[key] += training.timings[key]
                updates += 1
                progress(f"  {sums['steps']:,.0f} steps, {sums['steps'] / (time.perf_counter() - start):,.0f} steps/s")
            total = time.perf_counter() - start
        finally:
            if training.pool is not None:
                training.pool.close()
            training.writer.close()
    steps = sums["steps"]
    return {
        "workers": workers,
        "backend": opts.backend,
        "tables": args.tables,
        "steps": int(steps),
        "updates": updates,
        "seconds": total,
        "warmup_seconds": warmup,
        "steps_per_second": steps / total,
        "learner_update_us_per_step": 1e6 * sums["update_seconds"] / steps,
        # one process: the rollout itself; with workers: what the learner waits for them
        "rollout_or_wait_us_per_step": 1e6 * sums["rollout_seconds"] / steps,
        # the workers' own timers (env, forward passes, opponents), summed over workers: CPU time per step
        "worker_us_per_step": 1e6 * sums["worker_seconds"] / steps if workers > 1 else None,
    }


def workers_tables(results: list[dict[str, Any]]) -> list[Table]:
    rows: Rows = []
    for f in results:
        n = f["workers"]
        rows += [
            (
                f"{n} worker(s): learner steps/s",
                f"{f['steps_per_second']:,.0f} ({f['steps']:,} steps, {f['seconds']:.1f} s)",
            ),
            (f"{n} worker(s): learner update, us/step", f"{f['learner_update_us_per_step']:.1f}"),
            (
                f"{n} worker(s): "
                + ("rollout in this process" if n == 1 else "learner waiting for the workers")
                + ", us/step",
                f"{f['rollout_or_wait_us_per_step']:.1f}",
            ),
        ]
        if f["worker_us_per_step"] is not None:
            rows.append(
                (f"{n} worker(s): workers' rollout time (all workers), us/step", f"{f['worker_us_per_step']:.1f}")
            )
    if len(results) > 1:
        base = results[0]
        for f in results[1:]:
            rows.append(
                (
                    f"ratio {f['workers']} workers / {base['workers']}",
                    f"{f['steps_per_second'] / base['steps_per_second']:.2f}x",
                )
            )
    return [("Rollout workers (bourre train --workers N)", MEASURE, rows)]


BATCHED_PART_LABELS = {
    "env": "env (observations, masks, step, paying deals)",
    "learner": "learner forward pass and sampling",
    "opponents": "opponents (batched calls)",
    "rollout_other": "rest of the rollouts (buffer, Python)",
    "ppo_update": "PPO update (GAE, epochs, carry-over)",
    "loop_other": "rest of the loop",
}


def batched_rows(f: dict[str, Any]) -> tuple[Rows, Rows]:
    a = f["training_args"]
    loop: Rows = [
        (
            "learner steps timed",
            f"{f['steps']:,} ({f['updates']} rollouts of {a['rollout_decisions']:,})"
            + (", stopped by --max-seconds" if f["stopped_by_max_seconds"] else ""),
        ),
        ("wall seconds", f"{f['seconds']:.1f}"),
        ("learner steps/s", f"{f['steps_per_second']:,.0f}"),
        ("table decisions/s (all seats)", f"{f['table_decisions'] / f['seconds']:,.0f}"),
        ("learner share of the decisions", f"{f['learner_share']:.0%}"),
        ("learner steps per seat and deal", f"{f['learner_steps_per_seat_deal']:.2f}"),
        ("heuristic opponent", f["heuristic"]),
        ("network device", f.get("device", "cpu")),
        ("start-up and warm-up (not timed)", f"{f['warmup_seconds']:.1f} s"),
    ]
    split: Rows = [
        (BATCHED_PART_LABELS[k], f"{v:.2f}", f"{v / f['seconds']:.1%}", f"{1e6 * v / f['steps']:.1f}")
        for k, v in f["parts_seconds"].items()
    ]
    split.append(("total", f"{f['seconds']:.2f}", "100.0%", f"{1e6 * f['seconds'] / f['steps']:.1f}"))
    return loop, split


# ---------------------------------------------------------------------------- reporting
PART_LABELS = {
    "env_step": "env step (step_async + step_wait)",
    "policy_forward": "policy forward in rollouts",
    "rollout_other": "rest of the rollouts (buffer, masks, GAE)",
    "ppo_update": "PPO update (train)",
    "learn_other": "rest of learn (logger)",
}


Rows = list[tuple[str, ...]]


def report_rows(f: dict[str, Any]) -> tuple[Rows, Rows, Rows]:
    """The rows of the three tables: the loop, the split of its wall time, the raw env and the ratios."""
    parts = f["parts_seconds"]
    loop: Rows = [
        (
            "learner steps timed",
            f"{f['steps']:,} ({f['rollouts']} rollouts of {f['rollout_size']:,})"
            + (", stopped by --max-seconds" if f["stopped_by_max_seconds"] else ""),
        ),
        ("wall seconds", f"{f['seconds']:.1f}"),
        ("learner steps per deal", f"{f['steps_per_episode']:.2f}"),
        ("learner steps/s", f"{f['steps_per_second']:,.0f}"),
        ("env share of wall time", f"{f['env_share']:.0%}"),
        ("policy share (forward + update)", f"{f['policy_share']:.0%}"),
        ("policy forward per call (rollouts)", f"{1e3 * parts['policy_forward'] / max(f['forward_calls'], 1):.2f} ms"),
        ("PPO update per rollout", f"{parts['ppo_update'] / max(f['rollouts'], 1):.2f} s"),
        ("PPO epochs run / scheduled (target_kl)", f"{f['ppo_epochs_run']} / {f['ppo_epochs_scheduled']}"),
        (
            "start-up; warm-up learn",
            f"{f['startup_seconds']:.1f} s; {f['warmup_steps']:,} steps in {f['warmup_seconds']:.1f} s (not timed)",
        ),
    ]
    split: Rows = [
        (PART_LABELS[k], f"{v:.2f}", f"{v / f['seconds']:.1%}", f"{1e6 * v / f['steps']:.0f}")
        for k, v in f["parts_seconds"].items()
    ]
    split.append(("total (timed learn)", f"{f['seconds']:.2f}", "100.0%", f"{1e6 * f['seconds'] / f['steps']:.0f}"))
    raw: Rows = [
        (
            f"raw PoolEnv {n}p, 1 process, random learner",
            f"{r['steps_per_second']:,.0f} steps/s, {r['steps_per_episode']:.2f} steps/deal",
        )
        for n, r in f["raw"].items()
    ]
    if len(f["raw"]) > 1:
        raw.append(("raw env, table sizes as the workers have them", f"{f['raw_steps_per_second']:,.0f} steps/s"))
    raw += [
        ("loop / raw env", f"{f['loop_over_raw']:.2f}x"),
        (f"loop / (raw env x {f['cores_for_workers']} cores)", f"{f['loop_over_raw_times_cores']:.2f}x"),
    ]
    return loop, split, raw


Table = tuple[str, tuple[str, ...], Rows]
"""A table to print: title, column titles, rows."""
MEASURE = ("Measure", "Value")
SPLIT = ("Part", "Seconds", "Share", "us/step")


def sb3_tables(f: dict[str, Any]) -> list[Table]:
    loop, split, raw = report_rows(f)
    return [
        ("MaskablePPO self-play loop (bourre train --trainer sb3)", MEASURE, loop),
        ("Where the timed wall time goes (MaskablePPO)", SPLIT, split),
        ("Raw env (the ceiling)", MEASURE, raw),
    ]


def floor_rows(f: dict[str, Any]) -> Rows:
    """The update's CPU time per minibatch against the network's own passes (``update_floor``)."""
    u = f["update_floor"]
    per_step = f["minibatches"] / max(f["steps"], 1)  # minibatches per learner step

    def row(label: str, ms: float) -> tuple[str, ...]:
        return (label, f"{ms:.2f}", f"{ms / u['update_cpu_ms_per_minibatch']:.0%}", f"{1e3 * ms * per_step:.1f}")

    network = u["network_ms"]

    return [
        row("the update, CPU time per minibatch (the timed loop)", u["update_cpu_ms_per_minibatch"]),
        row("the network's forward and backward alone (floor)", u["network_ms"]),
        row(f"  of which dense products ({u['dense_gflops']:.0f} GFLOP/s)", u["dense_ms"]),
        row(f"  of which the sparse first layer ({u['nonzero_per_row']:.0f} nonzero a row)", u["sparse_ms"]),
        row("the rest: gathering rows, policy terms, loss, optimizer", u["update_cpu_ms_per_minibatch"] - network),
    ]


FLOOR = ("Part", "ms/minibatch", "Share", "us/step")


def batched_tables(f: dict[str, Any]) -> list[Table]:
    loop, split = batched_rows(f)
    tables: list[Table] = [
        ("Batched PPO loop (bourre train)", MEASURE, loop),
        ("Where the timed wall time goes (batched)", SPLIT, split),
    ]
    if "update_floor" in f:
        title = f"The update against its floor ({f['update_floor']['rows']:,}-row minibatches, CPU time)"
        tables.append((title, FLOOR, floor_rows(f)))
    return tables


def print_tables(tables: list[Table], header: list[str]) -> None:
    try:
        from rich.console import Console
        from rich.table import Table as RichTable
        from rich.text import Text
    except ImportError:
        _print_plain(tables, header)
        return
    console = Console(width=None if sys.stdout.isatty() else 120)
    for line in header:
        console.print(line, markup=False, highlight=False)
    for title, titles, rows in tables:
        table = RichTable(title=title)
        for i, name in enumerate(titles):
            table.add_column(
                name,
                justify="left" if i == 0 else "right",
                no_wrap=i == 0,
                style="bold" if titles == MEASURE and i == 1 else None,
            )
        for cells in rows:
            table.add_row(*(Text(c) for c in cells))
        console.print(table)


def _print_plain(tables: list[Table], header: list[str]) -> None:
    print("\n".join(header), end="\n\n")
    for title, titles, rows in tables:
        print(title)
        widths = [max(len(t), *(len(r[i]) for r in rows)) for i, t in enumerate(titles)]
        for cells in (titles, tuple("-" * w for w in widths), *rows):
            print(
                "  ".join(
                    c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
                )
            )
        print()


# ---------------------------------------------------------------------------- entry point
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    default = Args()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--players",
        type=int,
        nargs="+",
        default=[5],
        help="table sizes; env k plays players[k %% len(players)] (default: 5)",
    )
    parser.add_argument(
        "--num-envs",
        type=int,
        default=default.num_envs,
        help=f"MaskablePPO: tables of the vector env (default: {default.num_envs}, as in training)",
    )
    parser.add_argument(
        "--steps", type=int, default=40_960, help="learner steps to time, rounded up to whole rollouts (default: 40960)"
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=40.0,
        help="stop timing after the rollout that passes this many seconds (0: no limit; default: 40)",
    )
    parser.add_argument(
        "--warmup-steps",
        type=int,
        default=None,
        help="untimed learner steps first (default: one rollout, num_envs * n_steps)",
    )
    parser.add_argument(
        "--n-steps",
        type=int,
        default=default.n_steps,
        help=f"steps per env per rollout (default: {default.n_steps}, as in training)",
    )
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=default.torch_threads,
        help="torch threads of the main process (default: 1, as in training; 0: the CPUs, at most 4)",
    )
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="timed seconds of the raw env per table size (default: 3)"
    )
    parser.add_argument(
        "--snapshot",
        action="store_true",
        help="put a snapshot of the (fresh) learner in the opponent pool, as after the first snapshot",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed (default: 0)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    parser.add_argument(
        "--trainer",
        choices=("both", "sb3", "batched", "workers"),
        default="both",
        help="which trainers to measure (default: both, then their ratio); workers: the batched trainer's loop "
        "with each count of --workers-counts, then their ratio",
    )
    parser.add_argument(
        "--workers-counts",
        type=int,
        nargs="+",
        default=[1, 2],
        help="--trainer workers: the rollout worker counts to measure, in this order (default: 1 2)",
    )
    parser.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="--trainer workers: where the rollout workers run (default: local processes)",
    )
    parser.add_argument(
        "--batched-steps",
        type=int,
        default=1_000_000,
        help="batched trainer: learner steps to time, rounded up to whole rollouts (default: 1000000; "
        "--max-seconds stops it first on most machines)",
    )
    parser.add_argument("--tables", type=int, default=0, help="batched trainer: tables (default: its training default)")
    parser.add_argument(
        "--update-epochs",
        type=int,
        default=0,
        help="batched trainer: passes over each rollout's decisions (default: its training default)",
    )
    parser.add_argument(
        "--minibatch-size",
        type=int,
        default=0,
        help="batched trainer: decisions per minibatch of the update (default: its training default)",
    )
    parser.add_argument(
        "--device",
        default="cpu",
        help="batched trainer: torch device of the network, e.g. cuda (default: cpu); the rollouts and "
        "opponents stay on the CPU",
    )
    parser.add_argument(
        "--pool",
        type=float,
        nargs=4,
        metavar=("L", "H", "R", "S"),
        default=None,
        help="batched trainer: seat pool weights learner, heuristic, random, snapshot (default: its training default)",
    )
    opts = parser.parse_args(argv)
    if any(n < 1 for n in opts.workers_counts):
        parser.error("--workers-counts must be at least 1")
    for name in ("num_envs", "steps", "n_steps", "batched_steps"):
        if getattr(opts, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if opts.warmup_steps is not None and opts.warmup_steps < 1:
        parser.error("--warmup-steps must be at least 1 (the first reset and start-up must not be timed)")
    if opts.seconds <= 0 or opts.max_seconds < 0 or opts.torch_threads < 0 or opts.seed < 0:
        parser.error("--seconds must be positive; --max-seconds, --torch-threads and --seed at least 0")
    if min(opts.tables, opts.update_epochs, opts.minibatch_size) < 0:
        parser.error("--tables, --update-epochs and --minibatch-size must be at least 0 (0: the training default)")
    return opts


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    command = shlex.join(["python", *sys.argv]) if argv is None else shlex.join(["train_speed", *argv])
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    header = [
        f"Command: {command}",
        f"Seed {opts.seed}; {os.cpu_count()} CPUs; load average at start {load[0]:.2f} {load[1]:.2f} "
        f"{load[2]:.2f}; Python {platform.python_version()}; torch threads {opts.torch_threads or 'auto'}",
    ]
    tables: list[Table] = []
    results: dict[str, Any] = {}
    try:
        if opts.trainer in ("both", "sb3"):
            results["sb3"] = f = measure(opts)
            a = f["training_args"]
            header.append(
                f"MaskablePPO: {opts.num_envs} tables of BourreVecEnv, players {opts.players}, n_steps {opts.n_steps}, "
                f"batch_size {a['batch_size']}, n_epochs {a['n_epochs']}, hidden {list(a['hidden'])}; fresh network; "
                f"opponent pool heuristic/random/snapshot {a['pool_heuristic']}/{a['pool_random']}/"
                f"{a['pool_snapshot']}, {'one snapshot' if opts.snapshot else 'no snapshot yet'}"
            )
            tables += sb3_tables(f)
        if opts.trainer in ("both", "batched"):
            results["batched"] = f = measure_batched(opts)
            a = f["training_args"]
            header.append(
                f"Batched: {a['tables']} tables, players {list(a['players'])}, rollout_decisions "
                f"{a['rollout_decisions']:,}, minibatch_size {a['minibatch_size']}, update_epochs "
                f"{a['update_epochs']}, hidden {list(a['hidden'])}; fresh network; seat pool learner/heuristic/random/"
                f"snapshot {a['pool_learner']}/{a['pool_heuristic']}/{a['pool_random']}/{a['pool_snapshot']}, "
                f"{'one snapshot' if opts.snapshot else 'no snapshot yet'}; heuristic opponent {f['heuristic']}"
            )
            tables += batched_tables(f)
        if opts.trainer == "workers":
            results["workers"] = found = [measure_workers(opts, n) for n in opts.workers_counts]
            header.append(
                f"Workers: players {opts.players}, tables {found[0]['tables']}, backend {opts.backend}, the training "
                f"defaults otherwise; fresh network; the learner's torch threads {opts.torch_threads or 'auto'}, "
                f"one per worker"
            )
            tables += workers_tables(found)
    except ValueError as e:
        print(f"train_speed: error: {e}", file=sys.stderr)
        return 2
    if len(results) == 2:
        ratio = results["batched"]["steps_per_second"] / results["sb3"]["steps_per_second"]
        results["ratio"] = ratio
        tables.append(
            (
                "Both trainers",
                MEASURE,
                [
                    ("bourre train --trainer sb3: learner steps/s", f"{results['sb3']['steps_per_second']:,.0f}"),
                    ("bourre train (batched): learner steps/s", f"{results['batched']['steps_per_second']:,.0f}"),
                    ("ratio batched / sb3", f"{ratio:.1f}x"),
                ],
            )
        )
    print_tables(tables, header)
    if opts.json:
        machine = {
            "cpu_count": os.cpu_count(),
            "load_average_at_start": list(load),
            "python": platform.python_version(),
            "platform": platform.platform(),
        }
        payload = {"command": command, "config": vars(opts), "machine": machine, "figures": results}
        from bourre_env import atomic_files

        atomic_files.write_text(opts.json, json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
