"""What the cinch's exact search costs per question, and whether it ever gives up.

The core decides a cinch with cheap bounds, then an exact search (docs/rules.md, "Cinch"). This script plays
seeded deals with a uniformly random legal action at every seat and, at every trick-play decision, asks the
acting seat's cinch once more with a fresh scratch (so that no memoised answer is read), timing it. Printed per
setting: decisions, the questions that reached the search, their node counts (p50 / p99 / max), the slowest
question's wall-clock time, and the searches that gave up (``X_CINCH_ABORTS``: 0 since the search is exact
without a budget). ``--corpus`` writes the positions of the slowest questions (``--keep`` per setting, and every
search that gave up) to an ``.npz`` file: state, rule parameters and seat, one row each.

Usage
-----
::

    python benchmarks/cinch_budget.py                                    # 3, 5 and 8 players, 2,000 deals each
    python benchmarks/cinch_budget.py --players 3 --ranks 6 --deals 6000 --seed 0
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import time
from dataclasses import dataclass, field

import numpy as np

import bourre_env
from bourre_env import core


@dataclass
class Question:
    """One searched cinch question: where it was asked, what the search spent, and its answer."""

    deal: int
    seat: int
    nodes: int
    seconds: float  # wall clock of the whole question (bounds and search)
    cinch: bool
    gave_up: bool
    state: np.ndarray = field(repr=False)
    env_seed: int = 0
    actions: tuple[int, ...] = ()  # the deal's actions before the question, from ``reset(seed=env_seed)``


@dataclass
class Sweep:
    players: int
    ranks: int
    deals: int
    decisions: int
    searched: list[Question]
    slowest: float  # wall-clock seconds of the slowest question, searched or not
    params: np.ndarray = field(repr=False)

    @property
    def gave_up(self) -> list[Question]:
        return [q for q in self.searched if q.gave_up]


def ask(state: np.ndarray, params: np.ndarray, seat: int) -> tuple[bool, int, int, int, float]:
    """(cinch, searches, nodes, searches given up, wall seconds) of ``seat``'s cinch, with a fresh scratch."""
    scratch = core.new_scratch()
    copy = state.copy()
    start = time.perf_counter()
    cinch = bool(core.has_cinch_with(copy, params, seat, scratch))
    spent = time.perf_counter() - start
    return (
        cinch,
        int(scratch[core.X_CINCH_SEARCHES]),
        int(scratch[core.X_CINCH_NODES]),
        int(scratch[core.X_CINCH_ABORTS]),
        spent,
    )


def sweep(players: int, ranks: int, deals: int, seed: int) -> Sweep:
    """Random legal play over ``deals`` seeded deals; the acting seat's cinch asked afresh at every trick-play
    decision."""
    env = bourre_env.env(num_players=players, ranks=ranks)
    raw = env.unwrapped
    params = raw.rules.params()
    rng = np.random.default_rng(seed)
    decisions = 0
    searched: list[Question] = []
    slowest = 0.0
    env.reset(seed=seed)
    ask(raw.state_vector, params, 0)  # loads the compiled kernel before anything is timed
    for deal in range(deals):
        env_seed = seed * 1_000_003 + deal
        env.reset(seed=env_seed)
        state = raw.state_vector
        actions: list[int] = []
        while state[core.S_PHASE] < core.DEAL_OVER:
            if state[core.S_PHASE] == core.PLAY:
                seat = int(state[core.S_CUR])
                cinch, searches, nodes, aborts, spent = ask(state, params, seat)
                slowest = max(slowest, spent)
                if searches:
                    question = Question(deal, seat, nodes, spent, cinch, aborts > 0, state.copy(), env_seed)
                    question.actions = tuple(actions)
                    searched.append(question)
            legal = raw.legal_actions()
            actions.append(int(rng.choice(legal)))
            env.step(actions[-1])
            decisions += 1
    return Sweep(players, ranks, deals, decisions, searched, slowest, params)


def percentiles(values: list[int]) -> tuple[float, float, int]:
    """(p50, p99, max) of ``values`` (zeros when empty)."""
    if not values:
        return 0.0, 0.0, 0
    a = np.asarray(values)
    return float(np.percentile(a, 50)), float(np.percentile(a, 99)), int(a.max())


def write_corpus(path: str, sweeps: list[Sweep], keep: int) -> int:
    """The ``keep`` slowest searched questions of each sweep and every one that gave up, to ``path``; returns how
    many."""
    states, params, seats, lines = [], [], [], []
    for result in sweeps:
        chosen = sorted(result.searched, key=lambda q: -q.seconds)[:keep]
        chosen += [q for q in result.gave_up if q not in chosen]
        for q in chosen:
            states.append(q.state)
            params.append(result.params)
            seats.append(q.seat)
            actions = " ".join(map(str, q.actions))
            lines.append(f'({result.players}, {result.ranks}, {q.env_seed}, {q.seat}, {q.cinch}, "{actions}"),')
    np.savez_compressed(path, states=np.array(states), params=np.array(params), seats=np.array(seats))
    with open(path + ".txt", "w") as out:  # replayable: players, ranks, reset seed, seat, cinch, the actions
        out.write("\n".join(lines) + "\n")
    return len(seats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[3, 5, 8], help="table sizes, each swept")
    parser.add_argument("--ranks", type=int, default=13, help="ranks of the deck (6: A K Q J 10 9)")
    parser.add_argument("--deals", type=int, default=2000, help="deals per table size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpus", help="write the slowest positions to this .npz file")
    parser.add_argument("--keep", type=int, default=20, help="slowest positions per setting kept by --corpus")
    args = parser.parse_args()
    if args.deals < 1 or any(n < 2 or n > 8 for n in args.players):
        parser.error("--deals must be at least 1 and --players between 2 and 8")
    if args.keep < 0:
        parser.error("--keep must be at least 0")
    results = []
    for players in args.players:
        result = sweep(players, args.ranks, args.deals, args.seed)
        results.append(result)
        p50, p99, top = percentiles([q.nodes for q in result.searched])
        print(
            f"{players} players, {args.ranks} ranks: {result.deals} deals, {result.decisions} decisions, "
            f"{len(result.searched)} searched; nodes per search p50 {p50:,.0f}, p99 {p99:,.0f}, max {top:,}; "
            f"slowest question {result.slowest * 1e3:.2f} ms; {len(result.gave_up)} searches gave up"
        )
        for q in sorted(result.searched, key=lambda q: -q.seconds)[:3]:
            answer = "a cinch" if q.cinch else "no cinch"
            flag = ", gave up" if q.gave_up else ""
            print(f"  deal {q.deal}, seat {q.seat}: {q.nodes:,} nodes, {answer}{flag}, {q.seconds * 1e3:.2f} ms")
    if args.corpus:
        print(f"corpus: {write_corpus(args.corpus, results, args.keep)} positions written to {args.corpus}")


if __name__ == "__main__":
    main()
