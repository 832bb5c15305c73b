"""How close does self-play get to equilibrium? Exact NashConv of PPO (and of OpenSpiel's NFSP) against training
steps on the small configurations of ``bourre exploit --exact``, beside CFR+'s curve.

    python -m train.research.selfplay_nashconv --steps 600000 --snapshot-every 100000 --seed 0

For each configuration (``train.research.nashconv.CONFIGS``, and ``2p-1card``, the test suite's 429-state game):

1. the game is walked and exported once (``nashconv.export``); CFR+'s average policy is solved as
   ``bourre exploit --exact`` solves it (``nashconv.cfr_curve``: NashConv at 1, 2, 5, 10, ... iterations), and the
   uniform random policy's NashConv is the reference every learner starts near;
2. the project's batched PPO (``train.ppo``, ``bourre train``) trains on the configuration's rules
   (``--rule hand_size=... --rule ranks=... --rule max_discard=...``; the dealer is drawn per deal, which the
   observation sees by relative seat, so the policy is one of the fixed-dealer game too), once per recipe:

   * ``selfplay``: PPO from a fresh network with every other seat the learner itself (no imitation, no pool);
   * ``shipped``: the recipe of the shipped network, the trainer's defaults: the imitation warm start on the
     heuristic's decisions, then PPO against the pool (the learner 0.5, the heuristic 0.3, random 0.05, its own
     snapshots 0.15);

   the trainer saves a snapshot in the ``agents.ppo`` format every ``--snapshot-every`` steps (and ``model.npz`` at
   the end), and each is scored twice, every player playing it: as the network's masked softmax, the policy PPO
   learned (``sampled``), and as its most probable legal action, as ``agents.make("ppo:PATH")`` plays it
   (``greedy``: ``nashconv.agent_nash_conv(exported, "ppo:PATH")``);
3. with ``--nfsp-episodes N`` (the ``openspiel`` extra's PyTorch NFSP), one NFSP agent per player trains on
   ``python_bourre`` through ``open_spiel.python.rl_environment`` with the observation tensor (the vector the PPO
   network reads), and its average policy's NashConv is taken at ``--nfsp-points`` points.

NashConv is exact (OpenSpiel's C++ ``nash_conv`` on the exported game), in chips per deal, 0 at an equilibrium.
The x axis of a learner is its decisions: PPO's learner steps as ``bourre train`` counts them, NFSP's decisions of
all players. Outputs (``--out``, default ``runs/selfplay_nashconv``): ``selfplay_nashconv.json`` (every curve, the
seconds each part took, the command), ``selfplay_nashconv.md`` (the table) and ``selfplay_nashconv.png`` (per
configuration: the learners' NashConv against steps, and CFR+'s against iterations), and each PPO run's folder
under ``runs/<config>/<recipe>``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import operator
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bourre_env import atomic_files

__all__ = [
    "CONFIGS",
    "RECIPES",
    "Args",
    "main",
    "nfsp_curve",
    "ppo_curve",
    "rule_options",
    "run",
    "sampled_nash_conv",
]

TINY = {"num_players": 2, "hand_size": 1, "ranks": 2, "max_discard": 0, "dealer": 0}


def _configs() -> dict[str, dict[str, Any]]:
    from train.research import nashconv

    return {"2p-1card": TINY, **nashconv.CONFIGS}


CONFIGS = ("2p-1card", "2p-1card-draw1", "2p-2cards", "3p-1card")
"""The configurations this command takes: ``nashconv.CONFIGS`` and the 429-state ``2p-1card`` (one card each, no
draw, two players: the smallest, which the tests use)."""

RECIPES: dict[str, dict[str, Any]] = {
    "selfplay": {
        "imitation_decisions": 0,
        "pool_learner": 1.0,
        "pool_heuristic": 0.0,
        "pool_random": 0.0,
        "pool_snapshot": 0.0,
    },
    "shipped": {},  # the trainer's defaults (imitation_decisions is this command's --imitation-decisions)
}
"""The trainer's arguments of each recipe, over this command's (see the module docstring)."""


@dataclasses.dataclass
class Args:
    configs: tuple[str, ...] = ("2p-1card-draw1", "2p-2cards", "3p-1card")
    """configurations (2p-1card, 2p-1card-draw1, 2p-2cards, 3p-1card)"""
    recipes: tuple[str, ...] = ("selfplay", "shipped")
    """PPO recipes: selfplay (a fresh network against itself) and shipped (the trainer's defaults: imitation warm
    start, then the opponent pool)"""
    steps: int = 600_000
    """PPO learner steps per configuration and recipe"""
    snapshot_every: int = 100_000
    """steps between the snapshots whose NashConv is measured (at least --rollout-decisions)"""
    tables: int = 256
    """tables stepped together in each PPO run"""
    rollout_decisions: int = 8192
    """learner decisions per PPO update"""
    imitation_decisions: int = 50_000
    """heuristic decisions of the shipped recipe's imitation warm start"""
    cfr_iterations: int | None = None
    """CFR+ iterations (default: bourre exploit --exact's per configuration)"""
    nfsp_episodes: int = 0
    """NFSP episodes per configuration (0: no NFSP)"""
    nfsp_points: int = 6
    """NFSP's NashConv points, evenly spaced in episodes"""
    nfsp_hidden: int = 64
    """width of NFSP's one hidden layer (both its networks)"""
    seed: int = 0
    """seed of the PPO runs (the trainer's --seed) and of NFSP"""
    out: Path = Path("runs/selfplay_nashconv")
    """output folder: the JSON, the table, the plot and the PPO run folders"""
    progress: bool = True
    """progress bars"""

    def validate(self) -> None:
        unknown = [c for c in self.configs if c not in CONFIGS]
        if unknown or not self.configs:
            raise ValueError(f"configs: from {list(CONFIGS)}, got {list(self.configs)}")
        bad = [r for r in self.recipes if r not in RECIPES]
        if bad:
            raise ValueError(f"recipes: from {list(RECIPES)}, got {list(self.recipes)}")
        for name in ("steps", "tables", "rollout_decisions", "nfsp_points", "nfsp_hidden"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected at least 1, got {getattr(self, name)}")
        if not self.rollout_decisions <= self.snapshot_every <= self.steps:
            raise ValueError(
                f"snapshot_every: between --rollout-decisions ({self.rollout_decisions}) and --steps ({self.steps}), "
                f"got {self.snapshot_every} (a rollout crosses at most one mark)"
            )
        for name in ("imitation_decisions", "nfsp_episodes", "seed"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: expected >= 0, got {getattr(self, name)}")
        if self.cfr_iterations is not None and self.cfr_iterations < 1:
            raise ValueError(f"cfr_iterations: expected at least 1, got {self.cfr_iterations}")


def rule_options(params: dict[str, Any]) -> tuple[str, ...]:
    """The trainer's ``--rule`` options of an OpenSpiel configuration (``num_players`` is ``--players``; the dealer
    is drawn per deal)."""
    return tuple(f"{k}={json.dumps(v)}" for k, v in params.items() if k not in ("num_players", "dealer"))


# ---------------------------------------------------------------------------- NashConv of a policy file
def sampled_nash_conv(exported: Any, path: Path) -> float:
    """Exact NashConv of every player playing the policy file's masked softmax (the policy PPO trains)."""
    import pyspiel

    from agents.ppo import load_policy

    weights = load_policy(path)

    def softmax(player: int, obs: np.ndarray, mask: np.ndarray) -> dict[int, float]:
        legal = np.flatnonzero(mask)
        logits = weights.logits(obs)[legal].astype(np.float64)
        p = np.exp(logits - logits.max())
        return {int(a): float(q) for a, q in zip(legal, p / p.sum(), strict=True)}

    return float(pyspiel.nash_conv(exported.efg_game, exported.tabular(softmax)))


def _step_of(path: Path) -> int:
    from agents.ppo import load_policy

    return int(load_policy(path).meta["num_timesteps"])


def ppo_curve(exported: Any, config: str, recipe: str, args: Args, run_dir: Path) -> dict[str, Any]:
    """Train PPO on ``config`` with ``recipe`` into ``run_dir``; NashConv (sampled and greedy) of every snapshot."""
    from train.ppo import trainer
    from train.research.nashconv import agent_nash_conv

    params = _configs()[config]
    train_args = trainer.Args(
        **{
            "seed": args.seed,
            "run_dir": run_dir,
            "overwrite": True,
            "players": (params["num_players"],),
            "rule": rule_options(params),
            "tables": args.tables,
            "workers": "1",
            "total_timesteps": args.steps,
            "rollout_decisions": args.rollout_decisions,
            "minibatch_size": min(2048, args.rollout_decisions),
            "imitation_decisions": args.imitation_decisions,
            "snapshot_every": args.snapshot_every,
            "checkpoint_every": args.steps,
            "eval_every": 0,
            "eval_players": (params["num_players"],),
            "final_eval_deals": 200,
            "eval_workers": 1,
            "progress": args.progress,
            **RECIPES[recipe],
        }
    )
    started = time.perf_counter()
    trainer.run(train_args)
    train_seconds = time.perf_counter() - started
    started = time.perf_counter()
    points = []
    files = sorted((run_dir / "snapshots").glob("step_*.npz"))
    if not files or _step_of(files[-1]) < _step_of(run_dir / "model.npz"):  # the run went on past its last mark
        files.append(run_dir / "model.npz")
    for path in files:
        points.append(
            {
                "step": _step_of(path),
                "sampled": sampled_nash_conv(exported, path),
                "greedy": agent_nash_conv(exported, f"ppo:{path}"),
                "policy": str(path),
            }
        )
    state = json.loads((run_dir / "state.json").read_text())
    return {
        "recipe": recipe,
        "run_dir": str(run_dir),
        "rule": list(train_args.rule),
        "steps": int(state["num_timesteps"]),
        "train_seconds": round(train_seconds, 1),
        "nashconv_seconds": round(time.perf_counter() - started, 1),
        "curve": points,
    }


# ---------------------------------------------------------------------------- NFSP
def nfsp_curve(exported: Any, args: Args) -> dict[str, Any]:
    """OpenSpiel's PyTorch NFSP on the exported configuration's ``python_bourre`` game; NashConv of its average
    policy at ``args.nfsp_points`` points. ``{"error": ...}`` where NFSP cannot be imported."""
    try:
        import torch
        from open_spiel.python import rl_environment
        from open_spiel.python.pytorch import nfsp
    except ImportError as err:  # an OpenSpiel without its PyTorch algorithms
        return {"error": f"open_spiel.python.pytorch.nfsp: {err}"}
    import pyspiel

    torch.set_num_threads(1)
    game = exported.game
    env = rl_environment.Environment(
        game,
        chance_event_sampler=rl_environment.ChanceEventSampler(seed=args.seed),
        observation_type=rl_environment.ObservationType.OBSERVATION,
    )
    size, actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
    nfsp.set_seed(args.seed)
    learners = [
        nfsp.NFSP(
            p,
            size,
            actions,
            [args.nfsp_hidden],
            reservoir_buffer_capacity=200_000,
            anticipatory_param=0.1,
            replay_buffer_capacity=50_000,
            batch_size=128,
            rl_learning_rate=0.01,
            sl_learning_rate=0.01,
            min_buffer_size_to_learn=1000,
            learn_every=64,
            epsilon_start=0.06,
            epsilon_end=0.001,
            epsilon_decay_duration=max(args.nfsp_episodes, 1),
            seed=args.seed + p,
        )
        for p in range(game.num_players())
    ]

    def average_policy(player: int, obs: np.ndarray, mask: np.ndarray) -> dict[int, float]:
        with torch.no_grad():
            logits = learners[player]._avg_network(torch.from_numpy(obs)[None])[0].double().numpy()
        legal = np.flatnonzero(mask)
        p = np.exp(logits[legal] - logits[legal].max())
        return {int(a): float(q) for a, q in zip(legal, p / p.sum(), strict=True)}

    marks = {round(args.nfsp_episodes * (k + 1) / args.nfsp_points) for k in range(args.nfsp_points)}
    points, decisions, train_seconds, started = [], 0, 0.0, time.perf_counter()
    from tqdm.auto import tqdm

    for episode in tqdm(range(1, args.nfsp_episodes + 1), desc="nfsp", disable=not args.progress, dynamic_ncols=True):
        step = env.reset()
        while not step.last():
            out = learners[step.observations["current_player"]].step(step)
            decisions += 1
            step = env.step([out.action])
        for learner in learners:
            learner.step(step)
        if episode in marks:
            train_seconds += time.perf_counter() - started
            value = float(pyspiel.nash_conv(exported.efg_game, exported.tabular(average_policy)))
            points.append({"episode": episode, "step": decisions, "average_policy": value})
            started = time.perf_counter()
    return {"episodes": args.nfsp_episodes, "train_seconds": round(train_seconds, 1), "curve": points}


# ---------------------------------------------------------------------------- one configuration
def run_config(config: str, args: Args) -> dict[str, Any]:
    from train.research.nashconv import DEFAULT_ITERATIONS, agent_nash_conv, cfr_curve, export

    params = _configs()[config]
    started = time.perf_counter()
    exported = export(params, args.progress)
    walk_seconds = time.perf_counter() - started
    started = time.perf_counter()
    curve = cfr_curve(exported, args.cfr_iterations or DEFAULT_ITERATIONS.get(config, 100), args.progress)
    result: dict[str, Any] = {
        "config": config,
        "params": params,
        "sizes": exported.sizes,
        "walk_seconds": round(walk_seconds, 1),
        "cfr_seconds": round(time.perf_counter() - started, 1),
        "cfr_plus": curve,
        "random": agent_nash_conv(exported, "random"),
        "ppo": [ppo_curve(exported, config, r, args, args.out / "runs" / config / r) for r in args.recipes],
    }
    if args.nfsp_episodes:
        result["nfsp"] = nfsp_curve(exported, args)
    return result


def _progress_line(r: dict[str, Any]) -> str:
    parts = [f"CFR+ {r['cfr_plus'][-1][1]:.1e}", f"random {r['random']:.4f}"]
    for p in r["ppo"]:
        last = p["curve"][-1]
        parts.append(f"ppo {p['recipe']} {last['sampled']:.4f} (greedy {last['greedy']:.4f}) at {p['steps']:,}")
    if "nfsp" in r and r["nfsp"].get("curve"):
        parts.append(f"nfsp {r['nfsp']['curve'][-1]['average_policy']:.4f}")
    return ", ".join(parts)


# ---------------------------------------------------------------------------- outputs
def _cell(value: float) -> str:
    return f"{value:.4f}" if value >= 1e-3 else f"{value:.1e}"


def markdown(results: list[dict[str, Any]]) -> str:
    """One row per configuration and learner: NashConv at the first and last points, and the lowest one."""
    lines = [
        "| configuration | policy | steps (iterations) | first point | last point | lowest (at step) |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        name = r["config"]
        cfr = r["cfr_plus"]
        lines.append(
            f"| {name} | CFR+ average policy | ({cfr[-1][0]:,}) | {_cell(cfr[0][1])} | {_cell(cfr[-1][1])} | "
            f"{_cell(min(v for _, v in cfr))} |"
        )
        lines.append(f"| {name} | uniform random | | {_cell(r['random'])} | | |")
        for p in r["ppo"]:
            for kind in ("sampled", "greedy"):
                curve = p["curve"]
                low = min(curve, key=operator.itemgetter(kind))
                lines.append(
                    f"| {name} | PPO {p['recipe']}, {kind} | {p['steps']:,} | {_cell(curve[0][kind])} "
                    f"(at {curve[0]['step']:,}) | {_cell(curve[-1][kind])} | {_cell(low[kind])} ({low['step']:,}) |"
                )
        nfsp = r.get("nfsp")
        if nfsp and nfsp.get("curve"):
            curve = nfsp["curve"]
            low = min(curve, key=lambda point: point["average_policy"])
            lines.append(
                f"| {name} | NFSP average policy | {curve[-1]['step']:,} ({nfsp['episodes']:,} episodes) | "
                f"{_cell(curve[0]['average_policy'])} (at {curve[0]['step']:,}) | "
                f"{_cell(curve[-1]['average_policy'])} | {_cell(low['average_policy'])} ({low['step']:,}) |"
            )
        elif nfsp:
            lines.append(f"| {name} | NFSP | not run: {nfsp['error']} | | | |")
    return "\n".join(lines) + "\n"


def plot(results: list[dict[str, Any]], path: Path) -> None:
    """Per configuration, a row: the learners' NashConv against steps; CFR+'s against iterations (log-log)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(results), 2, figsize=(10, 3.3 * len(results)), squeeze=False, sharey="row")
    colours = {"selfplay": "tab:blue", "shipped": "tab:orange"}
    for (left, right), r in zip(axes, results, strict=True):
        for p in r["ppo"]:
            steps = [point["step"] for point in p["curve"]]
            colour = colours.get(p["recipe"], "tab:green")
            left.plot(steps, [pt["sampled"] for pt in p["curve"]], marker="o", color=colour, label=f"PPO {p['recipe']}")
            left.plot(
                steps, [pt["greedy"] for pt in p["curve"]], linestyle="--", marker=".", color=colour, label="  greedy"
            )
        nfsp = r.get("nfsp", {})
        if nfsp.get("curve"):
            curve = nfsp["curve"]
            left.plot(
                [c["step"] for c in curve], [c["average_policy"] for c in curve], "s-", color="tab:green", label="NFSP"
            )
        for ax in (left, right):
            ax.axhline(r["random"], linestyle=":", color="grey", label=f"random ({r['random']:.3f})")
            ax.set_yscale("log")
            ax.set_ylabel("NashConv (chips/deal)")
        left.set_xscale("log")
        left.set_xlabel("training decisions")
        left.set_title(f"{r['config']}: learners")
        left.legend(fontsize=7)
        its, values = zip(*r["cfr_plus"], strict=True)
        right.loglog(its, values, marker="o", color="black", label="CFR+ average policy")
        right.set_xlabel("CFR+ iterations")
        right.set_title(f"{r['config']}: CFR+")
        right.legend(fontsize=7)
    fig.tight_layout()
    with atomic_files.replacing(path, ".png") as tmp:
        fig.savefig(tmp, dpi=100)
    plt.close(fig)


def run(args: Args, command: str = "") -> list[dict[str, Any]]:
    """Every configuration of ``args``, written to ``args.out``; returns the results."""
    args.validate()
    atomic_files.check_writable_folder(args.out, "--out")
    started = time.perf_counter()
    results = []
    for config in args.configs:
        result = run_config(config, args)
        results.append(result)
        print(f"{config}: {_progress_line(result)}", flush=True)
    for r in results:
        values = [r["random"], *(v for _, v in r["cfr_plus"])]
        values += [pt[k] for p in r["ppo"] for pt in p["curve"] for k in ("sampled", "greedy")]
        values += [pt["average_policy"] for pt in r.get("nfsp", {}).get("curve", [])]
        if not all(math.isfinite(v) and v >= -1e-9 for v in values):
            raise RuntimeError(f"{r['config']}: a NashConv is negative or not finite: {values}")
    summary = {
        "command": command,
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in dataclasses.asdict(args).items()},
        "seconds": round(time.perf_counter() - started, 1),
        "results": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_files.write_text(args.out / "selfplay_nashconv.json", json.dumps(summary, indent=2) + "\n")
    atomic_files.write_text(args.out / "selfplay_nashconv.md", markdown(results))
    plot(results, args.out / "selfplay_nashconv.png")
    print(markdown(results))
    return results


def main(argv: list[str] | None = None) -> int:
    import tyro

    argv = list(sys.argv[1:] if argv is None else argv)
    args = tyro.cli(Args, args=argv, description=(__doc__ or "").split("\n\n")[0])
    command = "python -m train.research.selfplay_nashconv " + shlex.join(argv)
    try:
        run(args, command)
    except ValueError as err:
        print(f"selfplay_nashconv: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
