"""How often the cinch's exact search runs out of its node budget, and what settling those positions would cost.

The core decides a cinch with cheap bounds, then an exact search of at most ``Rules.params()[P_CINCH_BUDGET]``
nodes (100,000); past it the player is treated as having no cinch (docs/rules.md, "Cinch"). This script plays
seeded deals with a uniformly random legal action at every seat and, at every trick-play decision where the acting
seat's search ran out of budget, asks that seat's cinch again with each larger budget of ``--budgets`` in turn,
until one settles it. Printed per setting: decisions, searches over budget per decision, and for each such
position the nodes its search needed (or "more than" the largest budget), the answer and the CPU time; then the
search's CPU time per node.

Usage
-----
::

    python benchmarks/cinch_budget.py                                    # 3, 5 and 8 players, 2,000 deals each
    python benchmarks/cinch_budget.py --players 3 --ranks 6 --deals 6000 --seed 0 --budgets 1e6 1e7 1e8
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import time
from dataclasses import dataclass

import numpy as np

import bourre_env
from bourre_env import core


@dataclass
class OverBudget:
    """One position whose search ran out of the default budget, asked again with larger ones."""

    deal: int
    seat: int
    nodes: int  # the nodes of the first larger budget that settled it; the largest budget if none did
    settled: bool
    cinch: bool
    seconds: float


@dataclass
class Sweep:
    players: int
    ranks: int
    deals: int
    decisions: int
    over_budget: list[OverBudget]


def settle(state: np.ndarray, params: np.ndarray, seat: int, budgets: list[int]) -> tuple[int, bool, bool, float]:
    """(nodes searched, settled, cinch, CPU seconds) of ``seat``'s cinch with the first of ``budgets`` that
    settles it; a fresh scratch each time, so that no cached answer is read."""
    nodes, cinch, spent = 0, False, 0.0
    for budget in budgets:
        larger = params.copy()
        larger[core.P_CINCH_BUDGET] = budget
        scratch = core.new_scratch()
        start = time.process_time()
        cinch = bool(core.has_cinch_with(state.copy(), larger, seat, scratch))
        spent = time.process_time() - start
        nodes = int(scratch[core.X_CINCH_NODES])
        if scratch[core.X_CINCH_ABORTS] == 0:
            return nodes, True, cinch, spent
    return nodes, False, cinch, spent


def sweep(players: int, ranks: int, deals: int, seed: int, budgets: list[int]) -> Sweep:
    """Random legal play over ``deals`` seeded deals; every acting seat's over-budget search settled again."""
    env = bourre_env.env(num_players=players, ranks=ranks)
    raw = env.unwrapped
    params = raw.rules.params()
    rng = np.random.default_rng(seed)
    decisions = 0
    found: list[OverBudget] = []
    for deal in range(deals):
        env.reset(seed=seed * 1_000_003 + deal)
        state = raw.state_vector
        while state[core.S_PHASE] < core.DEAL_OVER:
            before = raw.cinch_aborts
            legal = raw.legal_actions()
            if raw.cinch_aborts > before and state[core.S_PHASE] == core.PLAY:
                seat = int(state[core.S_CUR])
                default = core.new_scratch()
                core.has_cinch_with(state.copy(), params, seat, default)
                if default[core.X_CINCH_ABORTS]:  # the acting seat's own search (not another seat's)
                    found.append(OverBudget(deal, seat, *settle(state, params, seat, budgets)))
            env.step(int(rng.choice(legal)))
            decisions += 1
    return Sweep(players, ranks, deals, decisions, found)


def node_seconds(found: list[OverBudget]) -> float:
    """CPU seconds per search node, over the last search of each position asked again (settled or not)."""
    nodes = sum(f.nodes for f in found)
    return sum(f.seconds for f in found) / nodes if nodes else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[3, 5, 8], help="table sizes, each swept")
    parser.add_argument("--ranks", type=int, default=13, help="ranks of the deck (6: A K Q J 10 9)")
    parser.add_argument("--deals", type=int, default=2000, help="deals per table size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--budgets", type=float, nargs="+", default=[1e6, 1e7], help="larger node budgets, tried in this order"
    )
    args = parser.parse_args()
    if args.deals < 1 or any(n < 2 or n > 8 for n in args.players):
        parser.error("--deals must be at least 1 and --players between 2 and 8")
    budgets = sorted(int(b) for b in args.budgets)
    if budgets[0] <= 100_000:
        parser.error("--budgets must be larger than the default 100,000 nodes")
    everything: list[OverBudget] = []
    for players in args.players:
        result = sweep(players, args.ranks, args.deals, args.seed, budgets)
        everything += result.over_budget
        rate = len(result.over_budget) / result.decisions
        print(
            f"{players} players, {args.ranks} ranks: {result.deals} deals, {result.decisions} decisions, "
            f"{len(result.over_budget)} acting seats' searches over budget ({rate:.1e} a decision)"
        )
        for f in result.over_budget:
            nodes = f"{f.nodes:,} nodes" if f.settled else f"more than {budgets[-1]:,} nodes"
            answer = ("a cinch" if f.cinch else "no cinch") if f.settled else "unsettled"
            print(f"  deal {f.deal}, seat {f.seat}: {nodes}, {answer}, {f.seconds * 1e3:.0f} ms")
    print(f"search CPU time per node: {node_seconds(everything) * 1e9:.0f} ns (budget 100,000 nodes)")


if __name__ == "__main__":
    main()
