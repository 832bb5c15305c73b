"""The batched heuristic against the Python agent it ports: identical actions, and its buffer checks.

``agents.heuristic.batch`` must make exactly ``agents.heuristic``'s decisions. The observations
come from real play through ``BatchGame``: every rule preset at every table size from 2 to 8
(and a few rule options that reach other branches: pot limits over several deals, a small deck,
six cards, optional trumping, reneging), with tables of heuristic players of the three parameter
sets and uniformly random players mixed seat by seat, so that every decision round, passes and
full tables, reshuffled discards and exact ties all occur. On every observation both
implementations are asked with each of the three parameter sets and the same tie-break number.
The default run compares over 5 x 10^4 observations; ``-m slow`` runs twenty times as many.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

import bourre_env
from agents.heuristic import PARAM_SETS, HeuristicAgent
from agents.heuristic.batch import FLOAT_WORK, INT_WORK, BatchHeuristic, heuristic_action, params_array
from agents.heuristic.knowledge import _own_discards_out, _Table
from bourre_env.actions import NUM_ACTIONS
from bourre_env.batch import BatchGame
from bourre_env.core.rules import presets
from bourre_env.observation import (
    O_FACE,
    O_PHASE,
    O_RESHUFFLED,
    O_ROUND,
    OBS_SIZE,
    ROUND_DECLARE,
    ROUND_DRAW,
    ROUND_DRAW_OR_PASS,
    ROUND_NAME_TRUMP,
    ROUND_SECOND_PASS,
)

KEYS = list(PARAM_SETS)
CONFIGS: list[dict[str, Any]] = [
    *({"rules": name, "num_players": n} for name in presets for n in range(2, 9)),
    {"num_players": 7, "deals_per_episode": 3, "pot_limit": 12, "tie": "divide"},
    {"num_players": 3, "deals_per_episode": 4, "pot_limit": 5},
    {"num_players": 3, "ranks": 6, "hand_size": 4},
    {"num_players": 6, "hand_size": 6},
    {"num_players": 8, "max_discard": 3},
    {"num_players": 4, "must_trump_when_cannot_win": False, "lead_trump_honors": True},
    {"num_players": 5, "illegal_action": "renege", "deals_per_episode": 2},
]


def compare_on_play(config: dict[str, Any], rows: int, steps: int, seed: int, seen: Counter[str]) -> int:
    """Drive ``rows`` games of ``config`` for ``steps`` decisions each; assert that both implementations
    agree on every observation under every parameter set. Returns the observations compared."""
    game = BatchGame(rows, seed=seed, **config)
    n = game.num_players
    rng = np.random.default_rng(seed)
    # seat by seat: a heuristic of one of the parameter sets, or a random player (-1); each row
    # has its own share of random players, from none to all
    share = rng.choice([0.0, 0.0, 0.3, 0.6, 1.0], size=(rows, 1))
    seats = np.where(rng.random((rows, n)) < share, -1, rng.integers(len(KEYS), size=(rows, n)))
    python = {key: HeuristicAgent(0, PARAM_SETS[key]) for key in KEYS}
    batch = {key: BatchHeuristic(key) for key in KEYS}
    for _ in range(steps):
        obs = game.observations()
        masks = game.legal_masks()
        u = rng.random(rows)
        expected = {key: [python[key].choose(obs[b], masks[b], float(u[b])) for b in range(rows)] for key in KEYS}
        for key in KEYS:
            got = batch[key].act(obs, masks, tie_breaks=u)
            wrong = np.flatnonzero(got != np.asarray(expected[key]))
            assert wrong.size == 0, (
                f"{config} {key}: row {wrong[0]} batch {got[wrong[0]]} python "
                f"{expected[key][wrong[0]]}; observation {obs[wrong[0]].tolist()}, "
                f"mask {np.flatnonzero(masks[wrong[0]]).tolist()}, tie-break {u[wrong[0]]!r}"
            )
            # the rows whose choice hangs on the tie-break: the lowest and the highest number differ
            low = batch[key].act(obs, masks, tie_breaks=np.zeros(rows))
            high = batch[key].act(obs, masks, tie_breaks=np.full(rows, np.nextafter(1.0, 0.0)))
            seen["tie"] += int((low != high).sum())
        count_situations(obs, seen)
        cur = game.current_players()
        kinds = seats[np.arange(rows), cur]
        actions = np.empty(rows, dtype=np.int64)
        for b in range(rows):
            legal = np.flatnonzero(masks[b])
            actions[b] = legal[rng.integers(legal.size)] if kinds[b] < 0 else expected[KEYS[kinds[b]]][b]
        game.step(actions)
    return rows * steps


def count_situations(obs: np.ndarray, seen: Counter[str]) -> None:
    """Tally the kinds of decision, so that the test fails if the play stops reaching one."""
    play = obs[:, O_PHASE + 1] > 0.5
    seen["play"] += int(play.sum())
    for name, slot in (
        ("name trump", ROUND_NAME_TRUMP),
        ("declare", ROUND_DECLARE),
        ("second pass", ROUND_SECOND_PASS),
        ("draw or pass", ROUND_DRAW_OR_PASS),
        ("draw", ROUND_DRAW),
    ):
        seen[name] += int((obs[:, O_ROUND + slot] > 0.5).sum())
    seen["no card turned"] += int(((obs[:, O_FACE : O_FACE + 52] == 0).all(axis=1) & ~play).sum())
    for b in np.flatnonzero(play & (obs[:, O_RESHUFFLED] > 0.5)):
        seen["reshuffled"] += 1
        if not _own_discards_out(_Table(obs[b])):
            seen["own discards back"] += 1


def check_coverage(seen: Counter[str], observations: int) -> None:
    for name in (
        "play",
        "name trump",
        "declare",
        "second pass",
        "draw or pass",
        "draw",
        "no card turned",
        "reshuffled",
        "own discards back",
    ):
        assert seen[name] > 0, f"no {name} decision in {observations} observations: {dict(seen)}"
    assert seen["tie"] >= 100, f"too few tie-breaks exercised: {dict(seen)}"


def test_same_actions_as_the_python_agent() -> None:
    seen: Counter[str] = Counter()
    total = 0
    for i, config in enumerate(CONFIGS):
        total += compare_on_play(config, rows=16, steps=41, seed=i, seen=seen)
    assert total >= 50_000
    check_coverage(seen, total)


@pytest.mark.slow
def test_same_actions_as_the_python_agent_slow() -> None:
    seen: Counter[str] = Counter()
    total = 0
    for i, config in enumerate(CONFIGS):
        total += compare_on_play(config, rows=64, steps=230, seed=1000 + i, seen=seen)
    assert total >= 1_000_000
    check_coverage(seen, total)


def test_one_row_at_a_time_it_is_the_python_agent_with_the_same_seed() -> None:
    """Fed one observation per call, a seeded BatchHeuristic draws its tie-breaks as HeuristicAgent.act does."""
    env = bourre_env.env(num_players=5)
    for episode in range(4):
        taken = []
        for make in (lambda s: HeuristicAgent(s), lambda s: BatchHeuristic("default", seed=s)):
            table = [make(10 * episode + s) for s in range(5)]
            env.reset(seed=episode)
            actions = []
            for name in env.agent_iter():
                obs, _, terminated, truncated, _ = env.last()
                if terminated or truncated:
                    env.step(None)
                    continue
                agent = table[env.unwrapped.agent_name_mapping[name]]
                if isinstance(agent, BatchHeuristic):
                    action = int(agent.act(obs["observation"][None], obs["action_mask"][None])[0])
                else:
                    action = agent.act(obs)
                actions.append(action)
                env.step(action)
            taken.append(actions)
        assert taken[0] == taken[1]


def test_the_compiled_row_function_matches_the_batch() -> None:
    game = BatchGame(16, seed=3, num_players=6)
    obs, masks = game.observations(), game.legal_masks()
    u = np.linspace(0.0, 0.99, 16)
    prm = params_array("tight")
    ints, floats = np.zeros(INT_WORK, dtype=np.int64), np.zeros(FLOAT_WORK)
    rows = [heuristic_action(obs[b], masks[b], u[b], prm, ints, floats) for b in range(16)]
    assert rows == BatchHeuristic("tight").act(obs, masks, tie_breaks=u).tolist()


# ---------------------------------------------------------------------- the caller's buffers
def batch_rows(rows: int = 4) -> tuple[np.ndarray, np.ndarray]:
    game = BatchGame(rows, seed=0, num_players=4)
    return game.observations(), game.legal_masks()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda o, m: (o.astype(np.float64), m), "observations: expected dtype float32, got float64"),
        (lambda o, m: (o[:, :-1].copy(), m), rf"observations: expected shape \(4, {OBS_SIZE}\)"),
        (lambda o, m: (o[0], m), "observations: expected a 2-d numpy array"),
        (lambda o, m: (o.tolist(), m), "observations: expected a 2-d numpy array"),
        (lambda o, m: (np.asfortranarray(o), m), "observations: expected a C-contiguous array"),
        (lambda o, m: (np.repeat(o, 2, axis=0)[::2], m), "observations: expected a C-contiguous array"),
        (lambda o, m: (o, m.astype(bool)), "masks: expected dtype int8, got bool"),
        (lambda o, m: (o, m[:3]), rf"masks: expected shape \(4, {NUM_ACTIONS}\), got \(3, {NUM_ACTIONS}\)"),
        (lambda o, m: (o, np.asfortranarray(m)), "masks: expected a C-contiguous array"),
    ],
)
def test_observation_and_mask_buffers_are_checked(change: Any, message: str) -> None:
    obs, masks = change(*batch_rows())
    with pytest.raises(ValueError, match=message):
        BatchHeuristic().act(obs, masks)


def test_out_and_tie_break_buffers_are_checked() -> None:
    obs, masks = batch_rows()
    bot = BatchHeuristic()
    for out, message in (
        (np.zeros(4, dtype=np.int32), "out: expected dtype int64"),
        (np.zeros(5, dtype=np.int64), r"out: expected shape \(4,\)"),
        (np.zeros(8, dtype=np.int64)[::2], "out: expected a C-contiguous"),
        (np.zeros((4, 1), dtype=np.int64), r"out: expected shape \(4,\)"),
    ):
        with pytest.raises(ValueError, match=message):
            bot.act(obs, masks, out=out)
    frozen = np.zeros(4, dtype=np.int64)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="out: the array is read-only"):
        bot.act(obs, masks, out=frozen)
    for u, message in (
        (np.zeros(4, dtype=np.float32), "tie_breaks: expected dtype float64"),
        (np.zeros(3), r"tie_breaks: expected shape \(4,\)"),
        (np.array([0.0, 0.5, 1.0, 0.2]), r"tie_breaks: expected numbers in \[0, 1\)"),
        (np.array([0.0, -0.1, 0.3, 0.2]), r"tie_breaks: expected numbers in \[0, 1\)"),
        (np.array([0.0, np.nan, 0.3, 0.2]), r"tie_breaks: expected numbers in \[0, 1\)"),
    ):
        with pytest.raises(ValueError, match=message):
            bot.act(obs, masks, tie_breaks=u)
    out = np.full(4, -7, dtype=np.int64)
    assert bot.act(obs, masks, out=out) is out
    assert (out >= 0).all() and masks[np.arange(4), out].all()
    assert bot.act(obs[:0], masks[:0]).shape == (0,)


def test_rows_that_are_not_decisions_are_refused() -> None:
    obs, masks = batch_rows()
    idle = masks.copy()
    idle[2] = 0
    with pytest.raises(ValueError, match="masks: row 2 allows no action"):
        BatchHeuristic().act(obs, idle)
    seven = obs.copy()
    seven[1, :7] = 1.0  # a hand of seven cards: no observation of the game looks like this
    seven[1, 7:52] = 0.0
    with pytest.raises(ValueError, match="observations: row 1 is not a decision observation"):
        BatchHeuristic().act(seven, masks)


def test_parameter_sets_are_named_or_given() -> None:
    assert BatchHeuristic().name == "heuristic"
    assert BatchHeuristic("loose").name == "heuristic:loose"
    assert BatchHeuristic(PARAM_SETS["tight"]).params == PARAM_SETS["tight"]
    with pytest.raises(ValueError, match="params: expected a HeuristicParams or one of"):
        BatchHeuristic("reckless")
