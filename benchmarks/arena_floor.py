"""The arena server's own work per remote decision, one piece at a time, against the rules core's floor.

No server, no socket: one thread plays ``--deals`` fixed deals (``train.table.make_deals(--seed, ...)``) at
``--players`` seats, every seat answering its first legal action as the bots of ``benchmarks/arena_speed.py`` do,
and times with ``time.process_time`` (CPU of this process), per decision:

* floor: the rules core alone, ``core.start_episode`` per deal, then ``observation.observe_with`` (observation and
  legal mask) and ``core.step_with`` per decision, in a loop over the state vector;
* game, as the arena played it before issue 48 point 2: the table's loop on a ``bourre_env.history.Recording`` env,
  and its ``history()`` per game;
* game, as the arena plays it now: the loop on the plain env, ``bourre_env.deal_recorder.DealRecorder`` as its observer;
* turn: ``protocol.turn_from_view`` (the seat's view and legal actions, from the decision's observation, as the
  arena builds them) and ``protocol.encode`` (its JSON), per decision.

What the server spends beyond these (``arena_speed.py``'s server CPU per decision) is the WebSocket stack, the event
loop, the other messages of a game, the store and the match reports.

Usage: ``python benchmarks/arena_floor.py [--players 5] [--deals 400] [--seed 0] [--repeat 3]``: the best of
``--repeat`` runs of each piece.
"""

from __future__ import annotations

# First: one thread, and the checkout on the path (benchmarks/preamble.py).
import preamble  # noqa: F401

# isort: split
import argparse
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np
from machine import machine_info, machine_line

import bourre_env
from bourre_env import core, history, observation
from bourre_env.deal_recorder import DealRecorder
from train.arena import protocol
from train.eval.duplicate import table_rules
from train.table import Deals, Decision, drive, game, make_deals


def floor(deals: Deals) -> int:
    rules = deals.rules
    assert rules is not None
    params = rules.params()
    s, x = core.new_state(), core.new_scratch()
    obs = np.empty(observation.OBS_SIZE, dtype=np.float32)
    mask = np.empty(core.NUM_ACTIONS, dtype=np.int8)
    decisions = 0
    for k in range(len(deals)):
        core.start_episode(s, params, deals.decks[k], int(deals.dealers[k]), 0, int(deals.env_seeds[k]))
        x[:] = 0
        while s[core.S_PHASE] != core.DEAL_OVER and s[core.S_PHASE] != core.GAME_OVER:
            observation.observe_with(s, params, int(s[core.S_CUR]), obs, mask, x)
            core.step_with(s, params, int(np.flatnonzero(mask)[0]), x)
            decisions += 1
    return decisions


def _first_legal(decision: Decision) -> int:
    return int(np.flatnonzero(decision.mask)[0])


def game_recording(deals: Deals) -> int:
    rules = deals.rules
    assert rules is not None
    labels = ["first"] * rules.num_players
    env = history.Recording(bourre_env.env(rules=rules))
    decisions = 0
    for k in range(len(deals)):
        drive(game(env, deals.deal(k), labels), _first_legal)
        decisions += sum(len(d["actions"]) for d in env.history(labels)["deals"])
    return decisions


def game_recorder(deals: Deals) -> int:
    rules = deals.rules
    assert rules is not None
    labels = ["first"] * rules.num_players
    env = bourre_env.env(rules=rules)
    recorder = DealRecorder(env.unwrapped.rules)
    decisions = 0
    for k in range(len(deals)):
        deal = deals.deal(k)
        recorder.next_game(deal.deck, deal.env_seed)
        drive(game(env, deal, labels, observers=(recorder,)), _first_legal)
        decisions += sum(len(d["actions"]) for d in recorder.history(labels)["deals"])
    return decisions


def turns(deals: Deals) -> tuple[int, float]:
    """Decisions, and the CPU seconds of building and encoding their turns alone."""
    rules = deals.rules
    assert rules is not None
    n = rules.num_players
    env = bourre_env.env(rules=rules)
    spent = 0.0
    decisions = 0

    def decide(decision: Decision) -> int:
        nonlocal spent, decisions
        seen = (decision.observation["observation"], decision.mask)
        start = time.process_time()
        message = protocol.turn_from_view(
            seen,
            match="m",
            number=1,
            deal=0,
            rules=rules,
            seat=decision.seat,
            clock_ms=2000,
            chips=[0] * n,
            with_observation=False,
        )
        protocol.encode(message)
        spent += time.process_time() - start
        decisions += 1
        return _first_legal(decision)

    for k in range(len(deals)):
        drive(game(env, deals.deal(k), ["first"] * n), decide)
    return decisions, spent


def best_us(run: Callable[[Deals], int], deals: Deals, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        decisions = run(deals)
        best = min(best, (time.process_time() - start) / decisions)
    return best * 1e6


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--players", type=int, default=5, help="seats (default 5)")
    parser.add_argument("--deals", type=int, default=400, help="deals of each run (default 400)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals (default 0)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each piece; the best is shown (default 3)")
    args = parser.parse_args(argv)
    if not 2 <= args.players <= 8 or not 1 <= args.deals <= 100_000 or not 1 <= args.repeat <= 100:
        parser.error("expected --players 2..8, --deals 1..100000, --repeat 1..100")
    deals = make_deals(args.seed, table_rules(args.players, {}), args.deals)
    print(
        f"{machine_line(machine_info())}; {args.players} seats, {args.deals} deals of seed {args.seed}, "
        f"first legal action at every seat; CPU us per decision, best of {args.repeat}"
    )
    floor(deals.slice(0, 1))  # the compiled code loaded before any timing
    print(f"floor (rules core: step, observation, legal mask)  {best_us(floor, deals, args.repeat):8.1f}")
    print(f"game on a Recording env, history() per game       {best_us(game_recording, deals, args.repeat):8.1f}")
    print(f"game on the plain env, DealRecorder (the arena)   {best_us(game_recorder, deals, args.repeat):8.1f}")
    best_turn = min(spent / decisions for decisions, spent in (turns(deals) for _ in range(args.repeat)))
    print(f"turn: protocol.turn_from_view + protocol.encode    {best_turn * 1e6:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
