"""Compile numba's kernels ahead of their first use: ``bourre compile [--parts PART ...] [--workers N]``.

The rules core, the batch API, the agents and the trainer's helpers are numba kernels, compiled on their first call
after an install or an update and cached on disk (under ``~/.cache/bourre_env/numba/``, keyed on their sources:
``bourre_env._jit_cache``); a warm cache loads in about a second. A container image, a cluster's workers or a CI
job can pay the compiling once, ahead, by calling each kernel on a small input here, and the later processes only
load them. Each part calls what it names once, on a few tables, and prints its seconds (compiling, or loading what
an earlier run cached). On the project's 2-core machine with an empty cache (2026-11-28) all the parts took 341 s
one after another (``COLD_SECONDS``) and 235 s with ``--workers 2`` (the parts after ``env`` in two processes):

* ``env``: the rules core through the PettingZoo env (a deal with observations), ``BatchGame`` and
  ``BourreVectorEnv`` on one thread;
* ``agents``: the heuristic (as an evaluation plays it, and batched, as the trainer's tables and the vector env play
  it), the styles of the zoo (per observation and batched, the same ways) and the shipped network;
* ``search``: the search agents (``pimc``, ``ismcts``), with the heuristic's, the random and the network's rollouts
  and the worlds' weighing;
* ``training``: the batched PPO trainer's rollouts and one update (the sparse rows, the policy terms, GAE);
* ``threads``: the threaded kernels (``BatchGame``, the vector env and the batched heuristic on 2 threads), which
  numba compiles apart from the one-thread ones (about 20 s each on 2 cores); none where numba's pool has one
  thread (``NUMBA_NUM_THREADS=1``), which never runs them.

Only the speed of a first run changes: the kernels compiled here are those any run would compile.
"""

from __future__ import annotations

import argparse
import textwrap
import time
from collections.abc import Callable, Sequence

import numpy as np

from train import arguments
from train.eval.jobs import run_jobs, usable_cpus

__all__ = ["PARTS", "add_parser", "compile_parts"]

PLAYERS = 5  # table size of the calls: every kernel is compiled once for all table sizes
ROWS = 16  # tables of the batched calls: enough to reach every kernel, small enough to cost nothing once compiled


def _env() -> None:
    import agents
    from agents.batched_players import BatchedRandomPlayer
    from bourre_env import BatchGame, BourreVectorEnv, bourre_v0
    from train import table

    env = bourre_v0.env(num_players=PLAYERS)
    deal = table.make_deals(0, env.unwrapped.rules, 1).deal(0)
    table.play(env, deal, [agents.make("random", seat) for seat in range(PLAYERS)])
    rng = np.random.default_rng(0)
    game = BatchGame(ROWS, seed=0, num_players=PLAYERS)
    game.random_play(ROWS, with_observations=True)
    game.random_play(ROWS)
    for _ in range(3):
        masks, _ = game.legal_masks(), game.observations()
        game.step(np.array([rng.choice(np.flatnonzero(row)) for row in masks]))
    vector = BourreVectorEnv(ROWS, BatchedRandomPlayer(0), num_players=PLAYERS)
    vector.reset()
    for _ in range(3):
        masks = vector.action_masks()
        vector.step(np.array([rng.choice(np.flatnonzero(row)) for row in masks]))
    vector.close()


def _agents() -> None:
    from agents.batched_players import BatchedHeuristicPlayer, BatchedStylePlayer
    from agents.styles import StyleAgent
    from bourre_env import BatchGame
    from train.eval.duplicate import evaluate

    evaluate("ppo", "heuristic", players=PLAYERS, deals=1, seed=0, workers=1, progress=False)
    game, heuristic = BatchGame(ROWS, seed=0, num_players=PLAYERS), BatchedHeuristicPlayer("default", 0)
    rows = np.arange(ROWS)
    for _ in range(3):  # the batched heuristic: on observations (the trainer's tables), on states (the vector env)
        heuristic.act_batch(game.observations(), game.legal_masks(), rows)
        game.step(heuristic.act_game(game, rows))
    # the styles: one observation (an evaluation's), observations and states (a random style compiles every kernel)
    style, agent = BatchedStylePlayer("eager-random", 0), StyleAgent("eager-random", 0)
    for _ in range(3):
        obs, masks = game.observations(), game.legal_masks()
        agent.act({"observation": obs[0], "action_mask": masks[0]})
        style.act_batch(obs, masks, rows)
        game.step(style.act_game(game, rows))


def _search() -> None:
    from train.eval.duplicate import evaluate

    for candidate, field in (
        ("pimc:4", "pimc:4,rollout=random"),
        ("pimc:4,rollout=ppo,model=ppo,infer=8", "ismcts:8"),
    ):
        evaluate(candidate, field, players=PLAYERS, deals=1, seed=0, workers=1, progress=False)


def _training() -> None:
    import torch

    from train.learning.policy_net import PolicyNet
    from train.ppo.args import Args
    from train.ppo.rollout import Collector
    from train.ppo.trainer import make_optimizer, ppo_update

    args = Args(players=(PLAYERS,), tables=ROWS, imitation_decisions=0, minibatch_size=128, progress=False)
    net = PolicyNet(args.hidden)
    collector = Collector(net, args.players, ROWS, args.pool(), seed=0, reward_scale=args.reward_scale)
    collector.collect(512)
    ppo_update(net, make_optimizer(net, args), collector, args, np.random.default_rng(0), torch.device("cpu"))


def _threads() -> None:
    from agents.batched_players import BatchedHeuristicPlayer
    from bourre_env import BatchGame, BourreVectorEnv
    from bourre_env.batch import ROWS_PER_THREAD, max_threads

    threads = min(2, max_threads())  # numba's pool of one thread (NUMBA_NUM_THREADS=1) never runs a threaded kernel
    rng = np.random.default_rng(0)
    tables = 2 * ROWS_PER_THREAD * PLAYERS  # the vector env's calls on the rows to act are threaded from 2 shares
    game = BatchGame(ROWS, seed=0, num_players=PLAYERS, threads=threads)
    game.random_play(ROWS, with_observations=True)
    game.random_play(ROWS)
    masks, _ = game.legal_masks(), game.observations()
    game.step(np.array([rng.choice(np.flatnonzero(row)) for row in masks]))
    vector = BourreVectorEnv(tables, BatchedHeuristicPlayer("default", 0), num_players=PLAYERS, threads=threads)
    vector.reset()
    for _ in range(3):
        masks = vector.action_masks()
        vector.step(np.array([rng.choice(np.flatnonzero(row)) for row in masks]))
    vector.close()


PARTS: dict[str, tuple[str, Callable[[], None]]] = {
    "env": ("the rules core: the PettingZoo env, BatchGame, BourreVectorEnv", _env),
    "agents": ("the heuristic, the styles of the zoo and the shipped network", _agents),
    "search": ("the search agents: pimc and ismcts, their rollouts and the worlds' weighing", _search),
    "training": ("the batched trainer: rollouts and an update", _training),
    "threads": ("the threaded kernels: BatchGame, BourreVectorEnv, the batched heuristic on 2 threads", _threads),
}
"""``bourre compile --parts``: name -> (what it compiles, the calls)."""

COLD_SECONDS = {"env": 110, "agents": 35, "search": 68, "training": 11, "threads": 118}
"""Each part's seconds alone on an empty cache, in ``PARTS``' order, on the project's 2-core machine (2026-11-28,
``bourre compile``): the order the processes of ``--workers`` take them in, the longest first."""


def _say(line: str) -> None:
    print(line, flush=True)  # before numba's own lines on stderr


def compile_parts(parts: Sequence[str], say: Callable[[str], None] = _say, workers: int = 1) -> dict[str, float]:
    """Call the kernels of ``parts`` (names of ``PARTS``, in ``PARTS``' order) once; returns each part's seconds.

    With ``workers`` > 1 the parts after ``env`` run in that many processes at once (``train.eval.jobs.run_jobs``),
    once ``env`` is done here: every part calls the rules core, and processes that compiled it side by side would
    each compile it whole."""
    from bourre_env.words import plural

    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise ValueError(f"parts: expected names among {', '.join(PARTS)}, got {', '.join(map(repr, unknown))}")
    chosen = [name for name in PARTS if name in parts]
    here = chosen if workers <= 1 or len(chosen) <= 1 else [name for name in chosen if name == "env"]
    seconds: dict[str, float] = {}
    for name in here:
        say(f"{name}: {PARTS[name][0]}")
        seconds[name] = _compile_part(name)
        say(f"{name}: {seconds[name]:.1f} s")
    # the longest first, so that the processes end together (cold seconds of each part alone, 2-core machine)
    rest = sorted((name for name in chosen if name not in here), key=lambda name: -COLD_SECONDS[name])
    if rest:
        say(f"{', '.join(rest)}: in {plural(min(workers, len(rest)), 'process', 'processes')}")
        for name, spent in zip(rest, run_jobs(_compile_part, rest, [1] * len(rest), workers, False, ""), strict=True):
            seconds[name] = spent
            say(f"{name}: {spent:.1f} s")
    return {name: seconds[name] for name in chosen}


def _compile_part(name: str) -> float:
    start = time.perf_counter()
    PARTS[name][1]()
    return time.perf_counter() - start


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]  # argparse's private type
    """``bourre compile``: its parser, under ``bourre``'s subcommands."""
    parser = commands.add_parser(
        "compile",
        help="compile numba's kernels now, into the cache the later runs load from (a container image, a cluster)",
        description=textwrap.fill(
            "Compile numba's kernels now, into the cache that later runs load them from (under "
            "~/.cache/bourre_env/numba/), for a container image, a cluster's workers or CI. A cold cache costs "
            "minutes on 2 cores; a warm one loads in about a second. Each part prints its seconds.",
            width=79,
        ),
        epilog="parts:\n" + "\n".join(f"  {name:9s} {what}" for name, (what, _) in PARTS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=list(PARTS),
        default=list(PARTS),
        metavar="PART",
        help=f"what to compile, among {', '.join(PARTS)} (default: all)",
    )
    parser.add_argument(
        "--workers",
        type=arguments.positive,
        default=1,
        help=f"processes: the parts after env side by side (default: 1; this machine has {usable_cpus()} CPUs); more "
        "than those parts is no error: one process a part is the most that runs",
    )
    parser.set_defaults(func=_cmd_compile)


def _cmd_compile(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    seconds = compile_parts(args.parts, workers=args.workers)
    print(f"compiled or loaded {', '.join(seconds)} in {time.perf_counter() - start:.1f} s")
    return 0
