"""Baselines at equal compute: every trainer of the project on the same wall-clock budget, rated by the ladder.

Each trainer runs for ``--minutes`` of wall time per run (start-up, compiling and any warm start included), for
each of ``--seeds`` seeds, at ``--players`` (5) players, one run after the other on this machine:

=========  ===========================================================================================================
trainer    what runs
=========  ===========================================================================================================
batched    ``python -m train.ppo`` (``bourre train``): batched self-play PPO with the imitation warm start
sb3        ``python -m train.sb3`` (``bourre train --trainer sb3``): MaskablePPO, imitation warm start
exit       ``python -m train.exit`` (``bourre train --trainer exit``) from a *fresh* network (seeded, exported here):
           its default starts from the shipped network, 80 minutes of earlier training, which is not equal compute;
           the expert is ``--exit-search`` (pimc with heuristic rollouts: a fresh network's rollouts are noise)
dmc        ``python -m train.dmc`` (``bourre train --trainer dmc``): Deep Monte-Carlo, no warm start
cleanrl    ``train/examples/cleanrl_ppo.py``: masked PPO on ``BourreVectorEnv`` against heuristic opponents
rllib      ``train/research/rllib_ppo.py``: RLlib's PPO, self-play on a local Ray instance (needs the ``ray`` extra)
=========  ===========================================================================================================

How a run is stopped at the budget. No trainer has a wall-clock limit, so each gets its own step budget set far
beyond what the budget allows and runs as a subprocess (its own process group) that receives SIGINT, as from
Ctrl-C, when the budget is spent. What each leaves behind on Ctrl-C, and what this script does about it:

* batched, sb3, dmc save ``checkpoint.pt`` and ``state.json``, and the policy so far as ``model.npz``. A run
  stopped before that (in its imitation warm start) has nothing to rate, and its row says so.
* exit keeps the ``model.npz`` of its last finished round (a round's files are written together). A run with no
  finished round has only the fresh round-0 network, and its row says so.
* cleanrl saves its actor on Ctrl-C, but not its step count. The script runs it through :func:`cleanrl_child`,
  which patches the module (not the file) so that SIGINT ends the loop after the current rollout and update, keeps
  the step count, then calls the example's own ``save_actor``.
* rllib saves an RLlib checkpoint on Ctrl-C, which the ladder cannot rate. The script runs it through
  :func:`rllib_child`, which on SIGINT, after the current iteration, converts the shared module's actor (encoder and
  policy head, ReLU layers on the observation vector) to an ``agents.ppo`` policy file, after checking that the
  file's logits equal the module's on the legal actions of sampled observations.

What the table reports per run: *steps*, the decisions the trainer trained on (PPO learner decisions for
batched, sb3 and cleanrl; decisions of finished deals for dmc; searched decisions fitted for exit; env steps
sampled, every seat, for rllib's self-play), the imitation warm start not counted; *steps/s*, steps over the
run's wall time (so start-up, compiling and the warm start count against the trainer, as they do against the
budget); the wall time from start to exit; and the ladder rating (``train.eval.ladder.ladder``: the mean
replacement advantage over the six reference fields at ``--ladder-players``, antes per deal, with its
conservative 95% interval) of the policy file, ``--ladder-deals`` deals per field and table size, seed
``--ladder-seed``. The mean over seeds is the mean of the ratings, its interval the mean of the intervals'
half-widths divided by the square root of the number of seeds (the runs are independent; the ladder's deals
are the same for every run, so this is an approximation that ignores that shared part).

Usage::

    python benchmarks/baselines.py --minutes 2 --seeds 0 1 --ladder-deals 8 --json runs/baselines/baselines.json \\
        --markdown runs/baselines/baselines.md
    python benchmarks/baselines.py --quick            # every trainer for a few seconds, a tiny ladder (the test)
    python benchmarks/baselines.py --trainers batched dmc --minutes 1 --seeds 0

A budget of minutes is tiny next to the project's runs (the shipped network took 80 minutes); the table says
which trainer gets furthest in that time, not which is best given enough.
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import builtins
import dataclasses
import importlib.util
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

TRAINERS = ("batched", "sb3", "exit", "dmc", "cleanrl", "rllib")
HUGE = 1_000_000_000
"""The step budget each trainer is given: far past what a budget of minutes reaches, so that the clock stops it."""
GRACE_SECONDS = 180.0
"""How long a trainer may take to save after SIGINT before its process group is killed."""
SCRIPT = Path(__file__).resolve()


# ---------------------------------------------------------------------------- results and the table
@dataclasses.dataclass
class RunResult:
    """One trainer's run with one seed, and its rating."""

    trainer: str
    seed: int
    steps: int | None = None
    wall_seconds: float | None = None
    model: str | None = None
    rating: float | None = None
    rating_ci95: tuple[float, float] | None = None
    note: str = ""

    @property
    def steps_per_second(self) -> float | None:
        if self.steps is None or not self.wall_seconds:
            return None
        return self.steps / self.wall_seconds


@dataclasses.dataclass
class Skipped:
    """A trainer that did not run, and why."""

    trainer: str
    reason: str


COLUMNS = ("trainer", "seed", "steps", "learner steps/s", "wall time (s)", "ladder rating [95% CI]", "note")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _fmt_rating(rating: float | None, ci: tuple[float, float] | None) -> str:
    if rating is None:
        return "not rated"
    if ci is None:
        return f"{rating:+.3f}"
    return f"{rating:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]"


def _fmt_int(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def _fmt_seconds(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"


def mean_row(trainer: str, runs: Sequence[RunResult]) -> dict[str, Any]:
    """The mean over a trainer's seeds: of the steps, steps/s and wall time over the runs that report them, of
    the rating over the rated runs (interval: mean half-width / sqrt(runs); module docstring)."""
    steps = [r.steps for r in runs if r.steps is not None]
    sps = [s for s in (r.steps_per_second for r in runs) if s is not None]
    walls = [r.wall_seconds for r in runs if r.wall_seconds is not None]
    rated = [r for r in runs if r.rating is not None]
    rating = _mean([r.rating for r in rated if r.rating is not None]) if rated else None
    ci: tuple[float, float] | None = None
    if rating is not None and rated and all(r.rating_ci95 is not None for r in rated):
        half = _mean([(r.rating_ci95[1] - r.rating_ci95[0]) / 2 for r in rated if r.rating_ci95 is not None])
        half /= math.sqrt(len(rated))
        ci = (rating - half, rating + half)
    return {
        "trainer": trainer,
        "seeds": [r.seed for r in runs],
        "rated_runs": len(rated),
        "steps": _mean(steps) if steps else None,
        "steps_per_second": _mean(sps) if sps else None,
        "wall_seconds": _mean(walls) if walls else None,
        "rating": rating,
        "rating_ci95": ci,
    }


def table_rows(results: Sequence[RunResult], skipped: Sequence[Skipped] = ()) -> list[tuple[str, ...]]:
    """The table: each run, then per trainer (in the order of their first run) its mean over seeds; then one row
    per skipped trainer."""
    rows: list[tuple[str, ...]] = []
    order = list(dict.fromkeys(r.trainer for r in results))
    for trainer in order:
        runs = [r for r in results if r.trainer == trainer]
        for r in runs:
            rows.append(
                (
                    trainer,
                    str(r.seed),
                    _fmt_int(r.steps),
                    _fmt_int(r.steps_per_second),
                    _fmt_seconds(r.wall_seconds),
                    _fmt_rating(r.rating, r.rating_ci95),
                    r.note,
                )
            )
        m = mean_row(trainer, runs)
        rows.append(
            (
                f"**{trainer}: mean**",
                f"{len(runs)} seeds" if len(runs) != 1 else "1 seed",
                _fmt_int(m["steps"]),
                _fmt_int(m["steps_per_second"]),
                _fmt_seconds(m["wall_seconds"]),
                _fmt_rating(m["rating"], m["rating_ci95"]),
                f"{m['rated_runs']} of {len(runs)} rated" if m["rated_runs"] != len(runs) else "",
            )
        )
    for s in skipped:
        rows.append((s.trainer, "-", "-", "-", "-", "not run", s.reason))
    return rows


def markdown_table(rows: Sequence[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|---|---:|---:|---:|---:|---:|---|"]
    lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def plain_table(rows: Sequence[tuple[str, ...]]) -> str:
    cells = [COLUMNS, *(tuple(c.replace("**", "") for c in row) for row in rows)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(COLUMNS))]
    out = []
    for k, row in enumerate(cells):
        out.append(
            "  ".join(
                c.ljust(w) if i in (0, 6) else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in out) + "\n"


def payload(
    results: Sequence[RunResult], skipped: Sequence[Skipped], config: dict[str, Any], command: str
) -> dict[str, Any]:
    """What ``--json`` writes: the command, the configuration, the machine, each run, the means, the skipped."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    order = list(dict.fromkeys(r.trainer for r in results))
    return {
        "command": command,
        "config": config,
        "machine": {
            "cpu_count": os.cpu_count(),
            "load_average_at_end": list(load),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "runs": [{**dataclasses.asdict(r), "steps_per_second": r.steps_per_second} for r in results],
        "means": [mean_row(t, [r for r in results if r.trainer == t]) for t in order],
        "skipped": [dataclasses.asdict(s) for s in skipped],
        "columns": list(COLUMNS),
        "rows": [list(row) for row in table_rows(results, skipped)],
    }


# ---------------------------------------------------------------------------- running a trainer to the budget
@dataclasses.dataclass(frozen=True)
class Plan:
    """What a run needs: the options of the comparison that bear these names."""

    players: int
    minutes: float
    imitation_decisions: int
    exit_search: str
    exit_deals: int
    rllib_batch: int
    quick: bool


def _flags(**options: object) -> list[str]:
    """Command-line options from keywords, in their order: ``total_timesteps=5`` is ``--total-timesteps 5``."""
    return [word for name, value in options.items() for word in (f"--{name.replace('_', '-')}", str(value))]


def _if(condition: bool, **options: object) -> dict[str, object]:
    """``options`` where ``condition`` holds (a quick run's smaller batches), else none."""
    return options if condition else {}


def trainer_command(trainer: str, run_dir: Path, seed: int, plan: Plan) -> list[str]:
    """The command line of one run (its step budget far past what the clock allows)."""
    n = plan.players
    init = run_dir.parent / f"exit_init_seed{seed}.npz"
    common = _flags(seed=seed, run_dir=run_dir, players=n) + ["--no-progress"]
    evals = _flags(eval_every=0, final_eval_deals=1, eval_players=n)
    warm = _flags(total_timesteps=HUGE, imitation_decisions=plan.imitation_decisions)
    if trainer == "batched":
        workers = _flags(workers=1, **_if(plan.quick, tables=64))
        return [sys.executable, "-m", "train.ppo", *common, *warm, *evals, *workers]
    if trainer == "sb3":
        return [sys.executable, "-m", "train.sb3", *common, *warm, *evals]
    if trainer == "dmc":
        small = _if(plan.quick, tables=64, rollout_decisions=2048)
        return [sys.executable, "-m", "train.dmc", *common, *_flags(total_decisions=HUGE), *evals, *_flags(**small)]
    if trainer == "exit":
        rounds = _flags(rounds=HUGE, deals=plan.exit_deals, search=plan.exit_search, init_policy=init)
        evals = _flags(eval_deals=1, search_eval_deals=1, eval_players=n)
        return [sys.executable, "-m", "train.exit", *common, *rounds, *evals]
    if trainer == "cleanrl":
        model = _flags(model_path=run_dir / "model.npz", **_if(plan.quick, num_envs=32))
        budget = _flags(seed=seed, num_players=n, total_timesteps=HUGE)
        return [sys.executable, str(SCRIPT), "--child", "cleanrl", *budget, *model]
    if trainer == "rllib":
        batch = _flags(batch_size=plan.rllib_batch, minibatch_size=min(256, plan.rllib_batch), check_deals=1)
        runs = _flags(players=n, seed=seed, iterations=HUGE, env_runners=1, num_cpus=2)
        rest = [*batch, *_flags(run_dir=run_dir / "rllib"), "--no-progress"]
        return [sys.executable, str(SCRIPT), "--child", "rllib", *runs, *rest]
    raise ValueError(f"unknown trainer {trainer!r}")


def missing_extra(trainer: str) -> str | None:
    """Why ``trainer`` cannot run here, or None."""
    needs = {"sb3": ("sb3_contrib", "train"), "rllib": ("ray", "ray"), "cleanrl": ("tyro", "train")}
    if trainer not in needs:
        return None
    module, extra = needs[trainer]
    if importlib.util.find_spec(module) is None:
        return f"{module} is not installed (pip install -e '.[{extra}]')"
    return None


def run_to_budget(command: list[str], seconds: float, log: Path) -> tuple[float, int]:
    """Run ``command`` in its own process group; SIGINT to the group at ``seconds``; returns (wall, exit status)."""
    started = time.perf_counter()
    with log.open("w") as out:
        # SIGINT as a terminal gives it: a script started in the background (``cmd &``, nohup) runs with SIGINT
        # ignored, which its children inherit, and a trainer that relies on Python's KeyboardInterrupt would then
        # run on until the grace period's SIGKILL
        proc = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return time.perf_counter() - started, proc.returncode


def _json(path: Path) -> Any:
    return json.loads(path.read_text()) if path.exists() else None


def steps_of(trainer: str, run_dir: Path) -> int | None:
    """The decisions trained on, from what the run left (module docstring)."""
    if trainer in ("batched", "sb3", "dmc"):
        state = _json(run_dir / "state.json")
        return None if state is None else int(state["num_timesteps"])
    if trainer == "exit":
        state = _json(run_dir / "state.json")
        return None if state is None else sum(int(r["trained_decisions"]) for r in state.get("rounds", []))
    summary = _json(run_dir / "child.json")
    return None if summary is None or summary.get("steps") is None else int(summary["steps"])


def fresh_policy(path: Path, seed: int) -> None:
    """A seeded, untrained network of the batched trainer's widths, as exit's first policy."""
    import torch

    from train.learning.checkpoint import export
    from train.learning.policy_net import PolicyNet
    from train.ppo.args import Args as PPOArgs

    torch.manual_seed(seed)
    hidden = list(PPOArgs().hidden)
    export(PolicyNet(hidden), path, {"trainer": "baselines fresh network", "seed": seed, "hidden": hidden})


def train_one(trainer: str, seed: int, plan: Plan, root: Path) -> RunResult:
    """One run to the budget, then what it takes for a policy file the ladder can rate."""
    base = root / trainer / f"seed{seed}"  # the logs; the trainer's own run folder is base/run
    if base.exists():
        shutil.rmtree(base)
    run_dir = base / "run"
    base.mkdir(parents=True)
    if trainer in ("cleanrl", "rllib"):
        run_dir.mkdir()
    if trainer == "exit":
        fresh_policy(base / f"exit_init_seed{seed}.npz", seed)
    wall, status = run_to_budget(trainer_command(trainer, run_dir, seed, plan), plan.minutes * 60, base / "log.txt")
    result = RunResult(trainer, seed, wall_seconds=wall)
    notes = []
    result.steps = steps_of(trainer, run_dir)
    model = run_dir / "model.npz"
    if trainer in ("batched", "sb3", "dmc") and not model.exists():
        notes.append("stopped before its first checkpoint (warm start unfinished): nothing to rate")
    if trainer == "exit":
        state = _json(run_dir / "state.json") or {}
        finished = int(state.get("round", 0))
        notes.append(f"{finished} round(s) finished")
        if not model.exists():
            notes.append("no round finished: nothing trained to rate")
    if trainer in ("cleanrl", "rllib"):
        summary = _json(run_dir / "child.json") or {}
        if summary.get("error"):
            notes.append(str(summary["error"]))
        if trainer == "rllib" and summary.get("checked_rows"):
            notes.append(f"converted from RLlib's module (logits equal on {summary['checked_rows']} observations)")
    if model.exists():
        result.model = str(model)
    elif not notes:
        notes.append(f"no model.npz (exit status {status}; {base / 'log.txt'})")
    result.note = "; ".join(notes)
    return result


def rate(result: RunResult, deals: int, seed: int, players: Sequence[int], workers: int) -> None:
    """The ladder's rating of the run's policy file, in place."""
    if result.model is None:
        return
    from train.eval.ladder import ladder

    card = ladder(f"ppo:{result.model}", deals=deals, seed=seed, players=players, workers=workers, progress=False)
    result.rating, result.rating_ci95 = card.rating, card.rating_ci95


# ---------------------------------------------------------------------------- the children (cleanrl, rllib)
class _StopTrainingError(Exception):
    """Raised in a child after SIGINT, at the end of an iteration, to leave the trainer's loop."""


def _on_sigint(flag: dict[str, Any]) -> None:
    signal.signal(signal.SIGINT, lambda *_: flag.__setitem__("stop", True))


def _write_summary(path: Path, summary: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2) + "\n")


def cleanrl_child(argv: list[str]) -> int:
    """``train.examples.cleanrl_ppo`` that stops after the iteration in which SIGINT came and saves its actor.

    The module is patched in this process, not edited: its ``Agent`` records the instance, and its ``print``
    (called once per iteration, after the update) leaves the loop once SIGINT has come."""
    import tyro

    from train.examples import cleanrl_ppo as module

    args = tyro.cli(module.Args, args=argv)
    summary_path = Path(args.model_path).parent / "child.json"
    flag: dict[str, Any] = {"stop": False, "agent": None, "steps": 0}
    _on_sigint(flag)
    base = module.Agent

    class Recorded(base):  # type: ignore[misc, valid-type]
        def __init__(self, *a: Any, **k: Any) -> None:
            super().__init__(*a, **k)
            flag["agent"] = self

    def printing(*a: Any, **k: Any) -> None:
        builtins.print(*a, **k)
        found = re.match(r"iteration \d+/\d+ step ([\d,]+)", str(a[0])) if a else None
        if found:
            flag["steps"] = int(found.group(1).replace(",", ""))
            if flag["stop"]:
                raise _StopTrainingError

    module.Agent = Recorded  # type: ignore[misc]
    module.print = printing  # type: ignore[attr-defined]
    try:
        module.train(args)
    except _StopTrainingError:
        path = module.save_actor(flag["agent"], args)
        builtins.print(f"stopped by SIGINT at step {flag['steps']:,}; wrote {path}")
    _write_summary(summary_path, {"steps": flag["steps"]})
    return 0


def rllib_child(argv: list[str]) -> int:
    """``train.research.rllib_ppo`` that, after the iteration in which SIGINT came, writes the shared module's actor
    as an ``agents.ppo`` policy file (checked against the module's logits) and stops."""
    import numpy as np
    import torch
    import tyro
    from torch import nn

    from agents.ppo import PolicyWeights, save_policy
    from train.research import rllib_ppo as module

    args = tyro.cli(module.Args, args=argv)
    run_dir = Path(args.run_dir).parent if args.run_dir is not None else Path("runs/rllib")
    flag: dict[str, Any] = {"stop": False, "algo": None, "result": {}}
    _on_sigint(flag)
    summary: dict[str, Any] = {"steps": None}

    def steps() -> int | None:
        found = module._metric(flag["result"], module.ENV_RUNNER_RESULTS, module.NUM_ENV_STEPS_SAMPLED_LIFETIME)
        return None if found is None else int(found)

    def export() -> None:
        rl_module = flag["algo"].get_module(module.POLICY)
        encoder = rl_module.encoder
        actor = getattr(encoder, "actor_encoder", None) or getattr(encoder, "encoder", encoder)
        linear = [m for m in actor.modules() if isinstance(m, nn.Linear)]
        linear += [m for m in rl_module.pi.modules() if isinstance(m, nn.Linear)]
        layers = [(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy()) for m in linear]
        meta = {"trainer": "train.research.rllib_ppo (converted by benchmarks/baselines.py)", "steps": steps()}
        weights = PolicyWeights(tuple(layers[:-1]), layers[-1], "relu", meta)
        # the check: the file's ReLU network against the module's masked logits, on observations of real deals
        import bourre_env

        env = bourre_env.env(num_players=args.players)
        env.reset(seed=args.seed)
        rng = np.random.default_rng(args.seed)
        rows = 0
        for _ in range(64):
            agent = env.agent_selection
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                if not env.agents:
                    env.reset(seed=int(rng.integers(1 << 30)))
                continue
            vec, mask = obs["observation"].astype(np.float32), obs["action_mask"].astype(bool)
            with torch.no_grad():
                inputs = {"observation": torch.from_numpy(vec[None]), "action_mask": torch.from_numpy(mask[None])}
                batch = {"obs": inputs}
                theirs = rl_module._forward_inference(batch)["action_dist_inputs"][0].numpy()
            h = vec
            for w, b in weights.hidden:
                h = np.maximum(w @ h + b, 0.0)
            ours = weights.action[0] @ h + weights.action[1]
            if not np.allclose(ours[mask], theirs[mask], atol=1e-3):
                raise RuntimeError(f"converted logits differ from RLlib's module at seat {agent}")
            rows += 1
            env.step(int(np.flatnonzero(mask)[rng.integers(mask.sum())]))
            if not env.agents:
                env.reset(seed=int(rng.integers(1 << 30)))
        path = save_policy(run_dir / "model.npz", weights)
        summary.update(steps=steps(), checked_rows=rows, model=str(path))

    build_config = module.build_config

    def recording_config(a: Any) -> Any:
        config = build_config(a)
        build = config.build_algo

        def build_algo(*x: Any, **k: Any) -> Any:
            algo = build(*x, **k)
            flag["algo"] = algo
            train = algo.train

            def train_once() -> Any:
                flag["result"] = train()
                if flag["stop"]:
                    try:
                        export()
                    except Exception as e:  # noqa: BLE001 (reported in the table, not fatal to the benchmark)
                        summary.update(steps=steps(), error=f"not rated: conversion failed ({e})")
                    raise _StopTrainingError
                return flag["result"]

            algo.train = train_once
            return algo

        config.build_algo = build_algo
        return config

    setattr(module, "build_config", recording_config)  # noqa: B010 (mypy: the patched function takes Any)

    class OwnSigint:  # in place of the example's Ctrl-C handling: this child's handler converts before the run saves
        pressed = False

        def __enter__(self) -> OwnSigint:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    setattr(module, "CtrlC", OwnSigint)  # noqa: B010
    try:
        module.train(args)
    except _StopTrainingError:
        builtins.print(f"stopped by SIGINT after {summary.get('steps')} env steps")
    except KeyboardInterrupt:
        summary.update(error="not rated: SIGINT came before the first iteration ended")
    _write_summary(run_dir / "child.json", summary)
    return 0


# ---------------------------------------------------------------------------- entry point
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trainers", nargs="+", choices=TRAINERS, default=list(TRAINERS), help="(default: all)")
    parser.add_argument("--minutes", type=float, default=2.0, help="wall-clock budget of each run (default: 2)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="training seeds (default: 0 1)")
    parser.add_argument("--players", type=int, default=5, help="table size trained at (default: 5)")
    parser.add_argument(
        "--imitation-decisions",
        type=int,
        default=100_000,
        help="batched and sb3: heuristic decisions of the warm start (default: 100000; their own default, 300000, "
        "takes most of a budget of 2 minutes on a shared 2-core machine)",
    )
    parser.add_argument(
        "--exit-search",
        default="pimc:16",
        help="exit: the expert (default: pimc:16, heuristic rollouts)",
    )
    parser.add_argument("--exit-deals", type=int, default=40, help="exit: self-play deals per round (default: 40)")
    parser.add_argument("--rllib-batch", type=int, default=2000, help="rllib: decisions per iteration (default: 2000)")
    parser.add_argument("--rllib-seeds", type=int, nargs="+", help="rllib: its seeds, if not --seeds (it is slow)")
    parser.add_argument("--ladder-deals", type=int, default=8, help="deals per field and table size (default: 8)")
    parser.add_argument("--ladder-seed", type=int, default=0, help="seed of the ladder's deals (default: 0)")
    parser.add_argument(
        "--ladder-players", type=int, nargs="+", default=[3, 5, 7], help="ladder table sizes (default: 3 5 7)"
    )
    parser.add_argument("--workers", type=int, default=2, help="processes of the ladder (default: 2)")
    parser.add_argument("--run-root", default="runs/baselines", help="where the runs go (default: runs/baselines)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: 12 s per run, one seed, tiny warm starts and rounds, a 1-deal ladder at 5 players",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the table and every figure as JSON")
    parser.add_argument("--markdown", metavar="PATH", help="also write the table as Markdown")
    opts = parser.parse_args(argv)
    if opts.quick:
        opts.minutes, opts.seeds, opts.imitation_decisions = 0.2, opts.seeds[:1], 1000
        opts.exit_deals, opts.exit_search, opts.rllib_batch = 2, "pimc:2", 200
        opts.ladder_deals, opts.ladder_players, opts.workers = 1, [5], 1
    if opts.minutes <= 0 or opts.ladder_deals < 1 or opts.exit_deals < 1 or opts.workers < 1:
        parser.error("--minutes must be positive; --ladder-deals, --exit-deals and --workers at least 1")
    return opts


def main(argv: list[str] | None = None) -> int:
    raw = sys.argv[1:] if argv is None else argv
    if raw[:1] == ["--child"]:
        children: dict[str, Callable[[list[str]], int]] = {"cleanrl": cleanrl_child, "rllib": rllib_child}
        return children[raw[1]](raw[2:])
    opts = parse_args(argv)
    command = shlex.join(["python", "benchmarks/baselines.py", *raw])
    plan = Plan(**{field.name: getattr(opts, field.name) for field in dataclasses.fields(Plan)})
    root = Path(opts.run_root)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"Command: {command}", flush=True)
    print(
        f"{os.cpu_count()} CPUs; load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; budget "
        f"{opts.minutes * 60:.0f} s per run; {opts.players} players; ladder {opts.ladder_deals} deals x "
        f"{opts.ladder_players} players, seed {opts.ladder_seed}",
        flush=True,
    )
    results: list[RunResult] = []
    skipped: list[Skipped] = []
    for trainer in opts.trainers:
        reason = missing_extra(trainer)
        if reason is not None:
            print(f"skipping {trainer}: {reason}", flush=True)
            skipped.append(Skipped(trainer, reason))
            continue
        seeds = opts.rllib_seeds if trainer == "rllib" and opts.rllib_seeds else opts.seeds
        for seed in seeds:
            r = train_one(trainer, seed, plan, root)
            print(
                f"{trainer} seed {seed}: {_fmt_int(r.steps)} steps in {r.wall_seconds:.0f} s"
                + (f"; {r.note}" if r.note else ""),
                flush=True,
            )
            results.append(r)
    for r in results:
        started = time.perf_counter()
        rate(r, opts.ladder_deals, opts.ladder_seed, opts.ladder_players, opts.workers)
        print(
            f"ladder {r.trainer} seed {r.seed}: {_fmt_rating(r.rating, r.rating_ci95)} "
            f"({time.perf_counter() - started:.0f} s)",
            flush=True,
        )
    rows = table_rows(results, skipped)
    print()
    print(plain_table(rows))
    from bourre_env import atomic_files

    if opts.markdown:
        atomic_files.write_text(opts.markdown, markdown_table(rows))
    if opts.json:
        data = payload(results, skipped, vars(opts), command)
        atomic_files.write_text(opts.json, json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
