"""How well the search's samplers know the hidden cards: Brier score and log-likelihood of the true hands.

    python -m train.research.belief_accuracy --players 5 --deals 80 --seed 41 --json runs/belief_5.json --plot docs

**Positions.** ``--deals`` deals of ``--seed`` at each table size (``train.table.make_deals``: the decks
of a duplicate evaluation) are played by the shipped network (``agents.make("ppo")``, its most probable action) in
every seat. A deal is looked at in trick play, at the first card of each trick: point 0 is *after the draw*
(before the first trick), point ``t`` *after trick t*. The observer of a deal is one of the seats that play it,
drawn at random (seeded): one observer per deal keeps the deals, the unit of the intervals, independent.

**Beliefs.** For an observer, each method draws ``--worlds`` worlds (64, what ``pimc`` draws) from the observer's
observation, as the search agents draw them (``agents.search.pimc.WorldModel``):

* ``uniform``: ``bourre_env.sampler.WorldSampler``, uniform among the consistent worlds;
* ``heuristic``: ``agents.search.inference.model_worlds``, 32 proposals per world (``pimc``'s default model);
* ``ppo``: ``policy_worlds`` with the shipped network (``model=ppo``, ``infer=32``, ``temper=1``);
* ``ppo_t0.1``: the same with ``temper=0.1``, as the guided search draws them;
* ``counting``: no worlds, a reference: each hidden card is in a hand in proportion to the hand's size
  (what a player knows who counts cards and remembers nothing else).

**Hidden cards** of an observer: the cards of the deck that are not in its hand, not played to a trick, not the
turned card and not its own discards (these two count as hidden again after a reshuffle). A hidden card is in
one of the ``n - 1`` other hands or *elsewhere* (stock, discards, passed hands): its *location*.

**Scores**, from the worlds' marginals: ``k[c, l]``, how many of the ``W`` worlds put card ``c`` at location ``l``.

* *Brier score*, per card: ``sum over l of (k[c, l] / W - [l is c's true location])^2`` (0 to 2), averaged over the
  hidden cards; no smoothing needed.
* *Log-likelihood of the true hidden hands*, estimated from the marginals: ``sum over hidden c of log p[c, true l]``
  with ``p[c, l] = (k[c, l] + a) / (W + a L)``, ``a = 0.5`` (``ALPHA``, add-a-half smoothing) over the ``L``
  locations that have room (a hand with cards left, and elsewhere when some hidden card is elsewhere), so a card
  no world put where it is costs ``log(0.5 / (W + 0.5 L))`` instead of minus infinity. This is the log-likelihood
  of the product of the marginals, not of the joint (the marginals ignore that the hands must fit together); the
  tables give it summed over the hidden cards, the JSON per hidden card too. The frequency estimate of the joint,
  the share of worlds with every other hand exactly right (``joint_hits``), is in the JSON: it is zero in almost
  every position before the last tricks.

The tables give the mean over deals with a 95% t-interval (deals are the unit). ``--json`` writes every figure,
``--plot DIR`` one figure per table size.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

import agents
import bourre_env
from agents.search.inference import model_worlds, policy_worlds
from agents.search.policy import PolicyModel
from bourre_env import core, view
from bourre_env.core.rules import Rules
from bourre_env.sampler import WorldSampler, decode, observer_view
from train.eval.duplicate import t_interval
from train.table import PausedGame, game, make_deals

__all__ = [
    "ALPHA",
    "METHODS",
    "Scores",
    "beliefs",
    "hidden_cards",
    "locations",
    "main",
    "positions",
    "score",
    "summarise",
]

ALPHA = 0.5
"""Add-``ALPHA`` smoothing of the marginals before their log is taken."""

METHODS = ("counting", "uniform", "heuristic", "ppo", "ppo_t0.1")
INFER = 32
"""Uniform proposals per world of the weighed methods (``infer``, as ``pimc`` draws them)."""


# ---------------------------------------------------------------------------------------------- the formulas
def hidden_cards(observation: np.ndarray, rules: Rules) -> np.ndarray:
    """The card ids hidden from the observer of ``observation`` (module docstring)."""
    record = decode(observation)
    known = record.hand | record.played
    if not record.reshuffled:
        known |= record.own_discards | ((1 << record.face) if record.face >= 0 else 0)
    return np.array([c for c in rules.deck_cards() if not known >> c & 1], dtype=np.int64)


def locations(states: np.ndarray, num_players: int, cards: np.ndarray) -> np.ndarray:
    """``(len(states), len(cards))``: the location of each card in each state, in the observer's frame (the observer
    is seat 0): ``r`` for seat ``r``'s hand (1..n-1), 0 elsewhere."""
    hands = np.array([[view.hand_of(s, r) for r in range(num_players)] for s in states], dtype=np.int64)
    bits = (hands[:, 1:, None] >> cards[None, None, :]) & 1  # (worlds, n - 1, cards)
    return (bits * np.arange(1, num_players)[None, :, None]).sum(axis=1)


@dataclasses.dataclass(frozen=True)
class Scores:
    """One observer's scores: mean Brier per hidden card, log-likelihood (all hidden cards, and per card), the
    share of worlds with every other hand right (``nan`` for a method without worlds) and the hidden cards."""

    brier: float
    log_likelihood: float
    log_likelihood_per_card: float
    joint_hits: float
    hidden: int


def score(marginals: np.ndarray, truth: np.ndarray, joint_hits: float = float("nan")) -> Scores:
    """Scores of ``marginals`` (``(cards, n)``: the probability of each location of each hidden card, exact or
    already smoothed) against the true locations ``truth`` (``(cards,)``), as they are: no smoothing here."""
    cards = truth.shape[0]
    onehot = np.zeros_like(marginals)
    onehot[np.arange(cards), truth] = 1.0
    brier = float(((marginals - onehot) ** 2).sum(axis=1).mean())
    with np.errstate(divide="ignore"):  # a frequency of 0 gives -inf: score_worlds smooths before the log it keeps
        ll = np.log(marginals[np.arange(cards), truth])
    return Scores(brier, float(ll.sum()), float(ll.mean()), joint_hits, cards)


def score_worlds(worlds_locations: np.ndarray, truth: np.ndarray, room: np.ndarray) -> Scores:
    """Scores of sampled worlds (``locations`` of the hidden cards in each): frequencies for the Brier score, add-
    ``ALPHA`` smoothed frequencies over ``room`` for the log-likelihood (module docstring)."""
    w, n = worlds_locations.shape[0], room.shape[0]
    counts = np.zeros((truth.shape[0], n))
    for loc in range(n):
        counts[:, loc] = (worlds_locations == loc).sum(axis=0)
    brier = score(counts / w, truth).brier
    smoothed = np.where(room[None, :], counts + ALPHA, 0.0) / (w + ALPHA * room.sum())
    hits = float(np.all(worlds_locations == truth[None, :], axis=1).mean())
    return dataclasses.replace(score(smoothed, truth, hits), brier=brier)


# ---------------------------------------------------------------------------------------------- positions
def positions(players: int, deals: int, seed: int, policy: str = "ppo") -> Iterator[tuple[int, int, int, np.ndarray]]:
    """``(deal, point, observer, state)`` at the first card of every trick of the deals (module docstring), the
    network playing every seat; the observer of a deal is one of the seats that play it, drawn from
    ``default_rng([seed, players, deal])``."""
    rules = Rules.from_options(num_players=players)
    table = make_deals(seed, rules, deals)
    env = bourre_env.env(num_players=players)
    seats = [agents.make(policy, seed=s) for s in range(players)]
    labels = [policy] * players
    for k in range(deals):
        seen: set[int] = set()
        observer = -1
        paused = PausedGame(game(env, table.deal(k, env.unwrapped.rules), labels, f"deal {k} of seed {seed}"))
        while (decision := paused.pending) is not None:
            state = env.unwrapped.state_vector
            v = view.StateView(state, players)
            if v.phase == core.PLAY and v.trick_no not in seen:
                seen.add(v.trick_no)
                if observer < 0:
                    playing = [q for q in range(players) if v.decision(q) == core.PLAYING]
                    observer = int(np.random.default_rng([seed, players, k]).choice(playing))
                if v.hand_mask(observer):
                    yield k, v.trick_no, observer, state.copy()
            paused.answer(seats[decision.seat].act(decision.observation))


def beliefs(
    method: str, observation: np.ndarray, worlds: int, rng: np.random.Generator, policy: PolicyModel | None
) -> np.ndarray:
    """``worlds`` worlds of one method (module docstring) for an observation; states, the observer in seat 0."""
    sampler = WorldSampler(observation)
    if method == "uniform":
        return np.asarray(sampler.sample(worlds, seed=rng))
    if method == "heuristic":
        return model_worlds(sampler, observation, worlds, rng, oversample=INFER)
    if method in ("ppo", "ppo_t0.1") and policy is not None:
        temper = 1.0 if method == "ppo" else 0.1
        return policy_worlds(sampler, observation, worlds, rng, policy, oversample=INFER, temper=temper)
    raise ValueError(f"method: expected one of {METHODS[1:]}, got {method!r}")


def _observer_scores(
    state: np.ndarray, players: int, observer: int, methods: list[str], worlds: int, seed_key: list[int], policy: Any
) -> dict[str, Scores]:
    rules = Rules.from_options(num_players=players)
    params = rules.params()
    obs = observer_view(state, params, observer)
    cards = hidden_cards(obs, rules)
    truth = np.zeros(cards.shape[0], dtype=np.int64)
    sizes = np.zeros(players, dtype=np.int64)
    for r in range(1, players):
        hand = view.hand_of(state, (observer + r) % players)
        truth[(hand >> cards) & 1 == 1] = r
        sizes[r] = bin(hand).count("1")
    sizes[0] = cards.shape[0] - sizes[1:].sum()
    room = sizes > 0
    out: dict[str, Scores] = {}
    for i, method in enumerate(methods):
        if method == "counting":
            out[method] = score(np.tile(sizes / cards.shape[0], (cards.shape[0], 1)), truth)
            continue
        rng = np.random.default_rng([*seed_key, i])
        drawn = beliefs(method, obs, worlds, rng, policy)
        out[method] = score_worlds(locations(drawn, players, cards), truth, room)
    return out


def summarise(rows: list[dict[str, Any]], methods: list[str]) -> list[dict[str, Any]]:
    """Mean over deals per table size, method and point, with 95% t-intervals; with ``uniform`` among the methods,
    also each method's difference from it, paired by deal (``brier_vs_uniform``, ``log_likelihood_vs_uniform``)."""
    out = []
    keys = sorted({(r["players"], r["point"]) for r in rows})
    for players, point in keys:
        here = [r for r in rows if r["players"] == players and r["point"] == point]
        deals = sorted({r["deal"] for r in here})
        for method in methods:
            entry: dict[str, Any] = {"players": players, "point": point, "method": method, "deals": len(deals)}
            for metric in ("brier", "log_likelihood", "log_likelihood_per_card", "joint_hits", "hidden"):
                per_deal = np.array([np.mean([r[method][metric] for r in here if r["deal"] == d]) for d in deals])
                entry[metric] = float(per_deal.mean())
                entry[f"{metric}_ci95"] = t_interval(per_deal) if not np.isnan(per_deal).any() else None
                if metric in ("brier", "log_likelihood") and "uniform" in here[0]:
                    # paired by deal: the same observer and position, another method
                    base = np.array([np.mean([r["uniform"][metric] for r in here if r["deal"] == d]) for d in deals])
                    entry[f"{metric}_vs_uniform"] = float((per_deal - base).mean())
                    entry[f"{metric}_vs_uniform_ci95"] = t_interval(per_deal - base)
            out.append(entry)
    return out


def measure(
    players: list[int], deals: int, seed: int, methods: list[str], worlds: int, progress: bool = True
) -> list[dict[str, Any]]:
    """One row per (table size, deal, point, observer): the scores of every method (module docstring)."""
    policy = PolicyModel("ppo") if any(m.startswith("ppo") for m in methods) else None
    rows: list[dict[str, Any]] = []
    with tqdm(total=deals * len(players), unit="deal", desc="beliefs", disable=not progress) as bar:
        for n in players:
            last = -1
            for k, point, observer, state in positions(n, deals, seed):
                scores = _observer_scores(state, n, observer, methods, worlds, [seed, n, k, point, observer], policy)
                row: dict[str, Any] = {"players": n, "deal": k, "point": point, "observer": observer}
                row.update({m: dataclasses.asdict(s) for m, s in scores.items()})
                rows.append(row)
                bar.update(k - last)
                last = k
            bar.update(deals - 1 - last)
    return rows


def _fmt(value: float, ci: Any, digits: int = 3) -> str:
    if ci is None:
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def markdown(summary: list[dict[str, Any]], methods: list[str], metric: str) -> list[str]:
    """One table per table size: a row per point, a column per method, ``metric`` with its interval."""
    lines: list[str] = []
    for n in sorted({e["players"] for e in summary}):
        lines += [f"{n} players, {metric}:", ""]
        lines += ["| point | deals | hidden cards | " + " | ".join(f"`{m}`" for m in methods) + " |"]
        lines += ["|---|---|---|" + "---|" * len(methods)]
        for point in sorted({e["point"] for e in summary if e["players"] == n}):
            cells = {e["method"]: e for e in summary if e["players"] == n and e["point"] == point}
            first = cells[methods[0]]
            label = "after the draw" if point == 0 else f"after trick {point}"
            values = " | ".join(
                _fmt(cells[m][metric], cells[m][f"{metric}_ci95"]) if metric in cells[m] else "" for m in methods
            )
            lines.append(f"| {label} | {first['deals']} | {first['hidden']:.1f} | {values} |")
        lines.append("")
    return lines


def plot(summary: list[dict[str, Any]], methods: list[str], folder: Path, stem: str = "belief_accuracy") -> list[Path]:
    """One PNG per table size (``folder/{stem}_{n}p.png``): Brier score and log-likelihood by point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    folder.mkdir(parents=True, exist_ok=True)
    for n in sorted({e["players"] for e in summary}):
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
        for metric, ax, title in (
            ("brier", axes[0], "Brier score per hidden card (lower is better)"),
            ("log_likelihood", axes[1], "log-likelihood of the true hidden hands (higher is better)"),
        ):
            for m in methods:
                es = sorted((e for e in summary if e["players"] == n and e["method"] == m), key=lambda e: e["point"])
                xs = [e["point"] for e in es]
                ys = [e[metric] for e in es]
                err = [
                    [y - (e[f"{metric}_ci95"] or (y, y))[0] for y, e in zip(ys, es, strict=True)],
                    [(e[f"{metric}_ci95"] or (y, y))[1] - y for y, e in zip(ys, es, strict=True)],
                ]
                ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=m)
            ax.set_xlabel("tricks played (0: after the draw)")
            ax.set_title(title, fontsize=9)
            ax.grid(alpha=0.3)
        axes[0].legend(fontsize=8)
        fig.suptitle(f"{n} players: how well each sampler knows the hidden cards (deals played by the network)")
        fig.tight_layout()
        path = folder / f"{stem}_{n}p.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m train.research.belief_accuracy", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--players", type=int, nargs="+", default=[3, 5, 7], help="table sizes")
    parser.add_argument("--deals", type=int, default=40, help="deals per table size")
    parser.add_argument("--seed", type=int, default=41, help="the deals' seed (make_deals) and the samplers'")
    parser.add_argument("--worlds", type=int, default=64, help="worlds per observer and method")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--json", type=Path, help="write every row and the summary here")
    parser.add_argument("--plot", type=Path, help="a folder: one PNG per table size")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.deals < 1 or args.worlds < 1:
        parser.error("--deals and --worlds take positive integers")
    if any(not 2 <= n <= core.MAX_PLAYERS for n in args.players):
        parser.error(f"--players: table sizes between 2 and {core.MAX_PLAYERS}, got {args.players}")
    command = "python -m train.research.belief_accuracy " + shlex.join(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    rows = measure(args.players, args.deals, args.seed, args.methods, args.worlds, not args.no_progress)
    seconds = time.perf_counter() - started
    summary = summarise(rows, args.methods)
    for metric in ("brier", "log_likelihood", "log_likelihood_vs_uniform"):
        print("\n".join(markdown(summary, args.methods, metric)))
    print(f"{len(rows)} observer positions, {seconds / 60:.1f} min of wall time")
    if args.plot is not None:
        for path in plot(summary, args.methods, args.plot):
            print(f"plot: {path}")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"command": command, "seconds": round(seconds, 1), "alpha": ALPHA, "summary": summary, "rows": rows}
        args.json.write_text(json.dumps(payload, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
