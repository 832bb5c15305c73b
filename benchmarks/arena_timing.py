"""What a remote bot can read from the clock: the gap between its action and its next turn, against the number of
legal moves the built-in seat that moved in between had (hidden: it says something of that seat's hand).

What is measured
----------------
The server runs in this process (``train.arena.in_thread.serve_in_thread``, a temporary data folder, deals from
secrets drawn from ``--seed``); one remote bot (``train.arena.client.Bot`` on its own thread: it stays in every deal
and plays a random legal card, seeded) plays ``--deals`` deals against ``--opponent`` in every other seat, with no
par game (so that nothing else runs on the server meanwhile). The bot notes when each turn arrives and when it
answered. After the match its hand histories (``GET /api/matches/ID/histories``) are replayed to find, for each gap,
the decisions of the other seats in between and how many legal moves each had.

The gaps kept are those with exactly one opponent decision in between, in trick play, by a seat holding two cards or
more (with one card its one legal move says nothing). For them: the median gap by the opponent's legal moves, and the
best threshold on the gap for telling "exactly one legal move" from more, as an accuracy beside the base rate (always
guessing the commoner case), and a permutation test of it (``p``: the share of random relabellings of the same gaps
whose best threshold does as well; the threshold is fitted to the gaps, so the accuracy alone flatters it). An
accuracy at the base rate, or a large ``p``: the clock says nothing of it.

The same match is played twice in one run: with the arena's pacing (``train.arena.pacing``, the code as shipped) and
without it (every built-in move given as soon as it is chosen, as before the pacing), so the two are measured beside
each other on the same deals.

Usage
-----
::

    python benchmarks/arena_timing.py                                   # pimc:16 at 2 players, 30 deals, seed 0
    python benchmarks/arena_timing.py --opponent heuristic --deals 60
    python benchmarks/arena_timing.py --players 3 --json timing.json
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Sequence
from typing import Any

import numpy as np
from machine import machine_info, machine_line


class TimingBot:
    """Stays when it may, else a random legal move; notes each turn's arrival and its answer's time (monotonic)."""

    observation = False
    words = False
    in_thread = False

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.turns: list[tuple[int, float, float]] = []  # (deal, arrival, answered)
        self.deal_started: dict[int, float] = {}
        self.done = threading.Event()

    def act(self, turn: dict[str, Any]) -> int:
        arrived = time.monotonic()
        legal = turn["legal"]
        staying = [entry for entry in legal if entry["text"].startswith("play")]
        drawing = turn["view"]["phase"] in ("draw or pass", "draw")
        action = int(self.rng.choice(staying if drawing and staying else legal)["action"])
        self.turns.append((int(turn["deal"]), arrived, time.monotonic()))
        return action

    def on_message(self, message: dict[str, Any]) -> None:
        if message["type"] == "deal_start":
            self.deal_started[int(message["deal"])] = time.monotonic()
        elif message["type"] == "match_end":
            self.done.set()


def get_json(url: str, body: dict[str, Any] | None = None, token: str | None = None) -> Any:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=1800) as answer:
        return json.loads(answer.read())


def gaps_by_legal_count(bot: TimingBot, games: list[dict[str, Any]]) -> list[tuple[float, int]]:
    """(gap in ms, the opponent's legal moves) for each gap with one opponent decision of trick play in between,
    by a seat holding two cards or more."""
    from bourre_env import core
    from bourre_env.history import Replay

    rows = []
    for game in games:
        deal = int(game["deal"])
        mine = [(arrived, answered) for d, arrived, answered in bot.turns if d == deal]
        seat = next(s["seat"] for s in game["history"]["seats"] if str(s["agent"]).startswith("bot:"))
        last_answer, between, k = None, [], 0
        for step in Replay(game["history"]):
            hand = int(step.env.state_vector[core.S_HAND + step.seat])
            entry = (len(step.env.legal_actions()), step.record["phase"], bin(hand).count("1"))
            if k < len(mine) and step.seat == seat:
                arrived, answered = mine[k]
                if last_answer is not None and len(between) == 1:
                    legal, phase, cards = between[0]
                    if phase == "trick play" and cards >= 2:
                        rows.append(((arrived - last_answer) * 1000, legal))
                last_answer, between, k = answered, [], k + 1
            else:
                between.append(entry)
    return rows


def best_accuracy(gaps: np.ndarray, one: np.ndarray) -> float:
    """The best accuracy of "one legal move when the gap is under a threshold" (or its reverse), over thresholds."""
    ones = one[np.argsort(gaps, kind="stable")].astype(np.int64)
    before_one = np.concatenate([[0], np.cumsum(ones)])  # one-legal gaps under each cut
    before_more = np.arange(ones.size + 1) - before_one
    right = before_one + (ones.size - ones.sum() - before_more)
    return float(max(right.max(), ones.size - right.min()) / ones.size)


def summary(rows: list[tuple[float, int]], shuffles: int, seed: int) -> dict[str, Any]:
    """The figures of one run; ``p_value``: the share of ``shuffles`` random relabellings of the gaps whose best
    threshold does as well (the best threshold is chosen on the same gaps, so the accuracy alone flatters it)."""
    gaps = np.array([gap for gap, _ in rows])
    one = np.array([legal == 1 for _, legal in rows])
    observed = best_accuracy(gaps, one)
    rng = np.random.default_rng(seed)
    as_good = sum(best_accuracy(gaps, rng.permutation(one)) >= observed for _ in range(shuffles))
    by_count = {c: statistics.median([g for g, legal in rows if legal == c]) for c in sorted({c for _, c in rows})}
    return {
        "gaps": len(rows),
        "one_legal": int(one.sum()),
        "base_rate": max(one.mean(), 1 - one.mean()),
        "best_threshold_accuracy": observed,
        "p_value": (1 + as_good) / (1 + shuffles),
        "median_ms_by_legal_moves": by_count,
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--opponent", default="pimc:16", help="the built-in agent in every other seat")
    parser.add_argument("--players", type=int, default=2, choices=range(2, 9), metavar="N")
    parser.add_argument("--deals", type=int, default=30, help="deals of each match (default 30)")
    parser.add_argument("--seed", type=int, default=0, help="the matches' secrets and the bot's moves")
    parser.add_argument("--shuffles", type=int, default=2000, help="relabellings of the permutation test")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if not 1 <= args.deals <= 1000:
        parser.error(f"--deals: 1 to 1000, got {args.deals}")
    if not 1 <= args.shuffles <= 100_000:
        parser.error(f"--shuffles: 1 to 100000, got {args.shuffles}")
    return args


def play_match(args: argparse.Namespace, paced: bool) -> dict[str, Any]:
    from arena_bots import seeded_secrets

    from train.arena import match as arena_match
    from train.arena import pacing
    from train.arena.client import play
    from train.arena.in_thread import serve_in_thread
    from train.arena.server import Arena
    from train.arena.storage import Store

    arena_match.Pacer = pacing.Pacer if paced else (lambda: pacing.Pacer(cap=0.0))  # type: ignore[assignment,misc]
    with tempfile.TemporaryDirectory(prefix="arena-timing-") as data:
        store = Store(data)
        operator = store.add_operator("benchmark")
        token = store.add_bot("timer")
        arena = Arena(store)
        arena.draw_secret = seeded_secrets(args.seed)  # the same deals, paced or not
        server, port = serve_in_thread(arena)
        bot = TimingBot(args.seed)
        url = f"ws://127.0.0.1:{port}/bot"
        until = {"until": lambda _message: bot.done.is_set()}
        thread = threading.Thread(target=play, args=(bot, url, "timer", token), kwargs=until, daemon=True)
        thread.start()
        try:
            deadline = time.monotonic() + 30
            while "timer" not in arena.registry.connected() and time.monotonic() < deadline:
                time.sleep(0.05)
            body = {
                "seats": ["bot:timer"] + [args.opponent] * (args.players - 1),
                "deals": args.deals,
                "clock": 10,
                "par": "none",
            }
            report = get_json(f"http://127.0.0.1:{port}/api/matches", body, operator)["report"]
            games = get_json(f"http://127.0.0.1:{port}/api/matches/{report['match']}/histories")["games"]
            thread.join(30)
        finally:
            server.stop()
            store.close()
    return {"paced": paced, **summary(gaps_by_legal_count(bot, games), args.shuffles, args.seed)}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    machine = machine_info()
    print(
        f"{machine_line(machine)}; {args.opponent} in {args.players - 1} seat(s), one timing bot, {args.deals} "
        f"deals, seed {args.seed}, no par game",
        flush=True,
    )
    results = [play_match(args, paced) for paced in (False, True)]
    print(
        f"{'pacing':>7} {'gaps':>5} {'one legal':>9} {'base rate':>9} {'best threshold':>14} {'p':>6}  median ms by "
        "legal moves"
    )
    for r in results:
        medians = "  ".join(f"{c}: {m:.1f}" for c, m in r["median_ms_by_legal_moves"].items())
        print(
            f"{'on' if r['paced'] else 'off':>7} {r['gaps']:>5} {r['one_legal']:>9} {r['base_rate']:>9.3f} "
            f"{r['best_threshold_accuracy']:>14.3f} {r['p_value']:>6.4f}  {medians}"
        )
    if args.json:
        from bourre_env import atomic_files

        payload = {"config": vars(args), "machine": machine, "results": results}
        atomic_files.write_text(args.json, json.dumps(payload, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
