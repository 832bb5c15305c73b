"""Strength of the search agents against their budget: the plot ``docs/search_strength.png``.

For each budget, ``pimc:WORLDS``, ``ismcts:ITERATIONS``, the guided ``pimc:WORLDS,rollout=ppo`` (the network's
rollouts, ``--guided``) and the mixed ``pimc:WORLDS,rollout=ppo,others=heuristic,model=heuristic,z=2`` (the network
for the searcher's seat, the heuristic for the others, ``--mixed``) are evaluated against the heuristic field by
duplicate
evaluation (``train.eval.duplicate``, replacement advantage with its 95% interval, chips per deal), and their time per
decision is measured as ``benchmarks/agents_speed.py`` does (``act`` calls in their own games, one process, by the
wall clock and by the CPU time of the thread: the cost on one core, which other processes on a shared machine do not
inflate). The figures go to a JSON file and the plot to a PNG: advantage against budget on the left, against the
median CPU time of a decision on the right (what a budget costs on one core of this machine). ``--ppo`` adds the
network itself as one point (one forward pass a decision); ``--keep`` keeps the rows of the earlier JSON file that
this run does not measure again, so one family can be added without re-running the others.

Usage
-----
::

    python benchmarks/search_strength.py                              # docs/search.md's plot (150 deals a point)
    python benchmarks/search_strength.py --pimc 4 16 --ismcts 32 --deals 50 --out /tmp/strength
    python benchmarks/search_strength.py --pimc --ismcts --guided 16 64 --ppo --keep   # add the guided agents
    python benchmarks/search_strength.py --pimc --ismcts --mixed 16 64 --keep --workers 2   # and the mixed ones
"""

from __future__ import annotations

import os
import sys

# one thread, as in the other benchmarks: figures per core; not in a process that already imported numba or numpy
# (a test importing this module): numba refuses a NUMBA_NUM_THREADS changed after its threads started
if not {"numba", "numpy"} & set(sys.modules):
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
from pathlib import Path

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO_ROOT not in sys.path:
    sys.path.append(_REPO_ROOT)

import numpy as np  # noqa: E402 - after the thread settings

from benchmarks.agents_speed import measure  # noqa: E402 - after the thread settings and the path
from train.eval.duplicate import evaluate  # noqa: E402

MIXED_OPTIONS = "rollout=ppo,others=heuristic,model=heuristic,z=2"
"""The options of ``--mixed``: docs/search.md's "the network for me, the heuristic for them"."""


def run(
    specs: list[tuple[str, str, int]], players: int, deals: int, seed: int, workers: int, seconds: float
) -> list[dict]:
    rows = []
    for family, spec, budget in specs:
        report = evaluate(spec, "heuristic", players=players, deals=deals, seed=seed, workers=workers, progress=True)
        table = report.tables[0]
        wall, cpu = measure(spec, players, "self", seconds, seed, warmup=20, clock="both")
        row = {
            "family": family,
            "spec": spec,
            "budget": budget,
            "players": players,
            "deals": deals,
            "seed": seed,
            "replacement_advantage": table.replacement_advantage,
            "replacement_advantage_ci95": list(table.replacement_advantage_ci95 or (None, None)),
            "advantage": table.advantage,
            "advantage_ci95": list(table.advantage_ci95 or (None, None)),
            "median_ms": float(np.percentile(wall, 50) * 1000),
            "p95_ms": float(np.percentile(wall, 95) * 1000),
            "cpu_median_ms": float(np.percentile(cpu, 50) * 1000),
            "cpu_p95_ms": float(np.percentile(cpu, 95) * 1000),
            "decisions_timed": int(wall.size),
            "load_average": list(os.getloadavg()),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.8), sharey=True)
    labels = {
        "pimc": "pimc (worlds)",
        "ismcts": "ismcts (iterations)",
        "guided": "pimc,rollout=ppo (worlds)",
        "mixed": "pimc,rollout=ppo,others=heuristic (worlds)",
    }
    colors = {"pimc": "tab:blue", "ismcts": "tab:orange", "guided": "tab:green", "mixed": "tab:red", "ppo": "k"}
    for family, color in colors.items():
        part = [r for r in rows if r["family"] == family]
        if not part:
            continue
        adv = [r["replacement_advantage"] for r in part]
        err = [
            [r["replacement_advantage"] - r["replacement_advantage_ci95"][0] for r in part],
            [r["replacement_advantage_ci95"][1] - r["replacement_advantage"] for r in part],
        ]
        label = labels.get(family, family)
        axes[0].errorbar([r["budget"] for r in part], adv, yerr=err, marker="o", capsize=3, color=color, label=label)
        axes[1].errorbar(
            [r["cpu_median_ms"] for r in part], adv, yerr=err, marker="o", capsize=3, color=color, label=family
        )
    for ax in axes:
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_xscale("log", base=2)
    handles, names = axes[0].get_legend_handles_labels()  # one legend for both, below them: no point hidden
    fig.legend(handles, names, loc="lower center", ncol=3, fontsize="small")
    axes[0].set_xlabel("budget: worlds (pimc) or iterations (ismcts); ppo at 1")
    axes[1].set_xlabel("median CPU time of a decision, ms (one core of this machine)")
    axes[0].set_ylabel("replacement advantage over the heuristic\n(chips per deal, 95% CI)")
    players, deals = rows[0]["players"], rows[0]["deals"]
    fig.suptitle(f"Search agents against the heuristic field: {players} players, {deals} deals a point")
    fig.tight_layout(rect=(0.0, 0.1, 1.0, 1.0))
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pimc", nargs="*", type=int, default=[4, 16, 64, 256], help="worlds")
    parser.add_argument("--ismcts", nargs="*", type=int, default=[16, 48, 100, 400], help="iterations")
    parser.add_argument("--guided", nargs="*", type=int, default=[], help="worlds of pimc:WORLDS,rollout=ppo")
    parser.add_argument("--mixed", nargs="*", type=int, default=[], help=f"worlds of pimc:WORLDS,{MIXED_OPTIONS}")
    parser.add_argument("--ppo", action="store_true", help="add the shipped network as a point")
    parser.add_argument("--keep", action="store_true", help="keep the earlier JSON's rows of the specs not re-run")
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--deals", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=20.0, help="wall time of each timing")
    parser.add_argument("--out", type=Path, default=Path(_REPO_ROOT) / "docs" / "search_strength")
    args = parser.parse_args(argv)
    specs = [("pimc", f"pimc:{w}", w) for w in args.pimc] + [("ismcts", f"ismcts:{i}", i) for i in args.ismcts]
    specs += [("guided", f"pimc:{w},rollout=ppo", w) for w in args.guided]
    specs += [("mixed", f"pimc:{w},{MIXED_OPTIONS}", w) for w in args.mixed] + ([("ppo", "ppo", 1)] if args.ppo else [])
    if not specs:
        parser.error("nothing to measure: give budgets to --pimc, --ismcts, --guided or --mixed, or --ppo")
    earlier = args.out.with_suffix(".json")
    kept: list[dict] = []
    if args.keep and earlier.is_file():
        measured = {spec for _, spec, _ in specs}
        kept = [r for r in json.loads(earlier.read_text()) if r["spec"] not in measured]
        if any(r["players"] != args.players or r["deals"] != args.deals or r["seed"] != args.seed for r in kept):
            parser.error(f"--keep: {earlier} holds rows of another table size, deal count or seed")
    rows = kept + run(specs, args.players, args.deals, args.seed, args.workers, args.seconds)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")
    plot(rows, args.out.with_suffix(".png"))
    print(f"wrote {args.out.with_suffix('.json')} and {args.out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
