"""What cutting the search's rollouts with a learned value (``pimc``'s ``cut``/``value``) saves and changes.

At every card decision of seat 0 with more than one legal card, in deals the shipped network plays in every
seat, the search without a cut and the same search with ``cut=D,value=ppo:FILE`` decide the same observation
from the same seed. Printed: thread CPU time per searched decision (median, 95th percentile) of each, how often
they choose the same card, how far apart their candidates' values are (mean absolute difference of the values
of the same candidate) and the rollout decisions each took.

Usage
-----
::

    python benchmarks/value_cut.py --value runs/value/ppo_value.npz                   # 5 players, 30 deals
    python benchmarks/value_cut.py --value V.npz --players 3 7 --deals 20 --cut 1 2 --seed 13
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import time

import numpy as np

import agents
import bourre_env
from agents.base import legal_actions
from bourre_env.observation import O_PHASE

BASE = "pimc:64,rollout=ppo,model=ppo,infer=32,temper=0.1,z=2"


def compare(base: str, value: str, cuts: list[int], players: int, deals: int, seed: int) -> dict[str, object]:
    """Both searches at every searched card decision of seat 0; the figures of the module docstring."""
    specs = {"no cut": base} | {f"cut={d}": f"{base},cut={d},value=ppo:{value}" for d in cuts}
    searchers = {name: agents.make(spec, seed=seed) for name, spec in specs.items()}
    network = agents.make("ppo")
    times: dict[str, list[float]] = {name: [] for name in specs}
    same: dict[str, int] = dict.fromkeys(specs, 0)
    apart: dict[str, list[float]] = {name: [] for name in specs}
    env = bourre_env.env(num_players=players)
    searched = 0
    for deal in range(deals):
        env.reset(seed=seed * 100_000 + deal)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            in_tricks = obs["observation"][O_PHASE + 1] > 0.5
            if agent == env.possible_agents[0] and in_tricks and legal_actions(obs).size > 1:
                searched += 1
                choices = {}
                values = {}
                for name, searcher in searchers.items():
                    start = time.thread_time()
                    choices[name], values[name] = searcher.decide(obs)
                    times[name].append((time.thread_time() - start) * 1000.0)
                for name in specs:
                    same[name] += choices[name] == choices["no cut"]
                    apart[name] += [abs(values[name][a] - values["no cut"][a]) for a in values["no cut"]]
            env.step(network.act(obs))
    return {
        "players": players,
        "searched": searched,
        "rows": {
            name: {
                "cpu_ms_median": float(np.median(times[name])) if times[name] else float("nan"),
                "cpu_ms_p95": float(np.percentile(times[name], 95)) if times[name] else float("nan"),
                "same_choice": same[name] / max(searched, 1),
                "value_gap": float(np.mean(apart[name])) if apart[name] else 0.0,
                "rollout_decisions": int(searchers[name].rollout.decisions),
            }
            for name in specs
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--value", required=True, help="the value file (python -m train.research.value_fit)")
    parser.add_argument("--base", default=BASE, help="the search without a cut (a pimc spec with rollout=ppo)")
    parser.add_argument("--cut", type=int, nargs="+", default=[1], help="cut depths in tricks")
    parser.add_argument("--players", type=int, nargs="+", default=[5])
    parser.add_argument("--deals", type=int, default=30)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    print(f"base: {args.base}; value file: {args.value}; seed {args.seed}, {args.deals} deals per table size")
    print(
        "| players | search | searched decisions | CPU ms median | CPU ms p95 | same card as no cut | value gap "
        "| rollout decisions |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for players in args.players:
        result = compare(args.base, args.value, args.cut, players, args.deals, args.seed)
        for name, row in result["rows"].items():  # type: ignore[attr-defined]
            print(
                f"| {players} | {name} | {result['searched']} | {row['cpu_ms_median']:.1f} | {row['cpu_ms_p95']:.1f} | "
                f"{row['same_choice']:.1%} | {row['value_gap']:.3f} | {row['rollout_decisions']:,} |"
            )


if __name__ == "__main__":
    main()
