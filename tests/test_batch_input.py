"""What ``BatchGame`` takes from its caller: ``out=`` buffers checked before compiled code writes into them, and
``step``'s actions checked (shape, type, legality) for every row before any row is stepped."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import random_game

from bourre_env import batch, core, observation
from bourre_env.batch import BatchGame
from bourre_env.core.rules import Rules, presets


@pytest.mark.parametrize("method", ["legal_masks", "observations"])
def test_batch_out_buffers_are_checked_before_compiled_code_writes(method: str) -> None:
    g = BatchGame(4, seed=0)
    width, dtype = (core.NUM_ACTIONS, np.int8) if method == "legal_masks" else (observation.OBS_SIZE, np.float32)
    fill = getattr(g, method)
    bad = {
        "too few rows": np.zeros((1, width), dtype),
        "too narrow": np.zeros((4, width - 1), dtype),
        "flat": np.zeros(4 * width, dtype),
        "wrong dtype": np.zeros((4, width), np.float64 if dtype == np.int8 else np.int8),
        "not contiguous": np.zeros((4, width), dtype, order="F"),
        "a strided view": np.zeros((8, width), dtype)[::2],
        "not an array": [[0] * width] * 4,
    }
    for out in bad.values():
        with pytest.raises(ValueError, match=method):
            fill(out=out)
    frozen = np.zeros((4, width), dtype)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        fill(out=frozen)
    out = np.full((4, width), 7, dtype)
    assert fill(out=out) is out
    assert np.array_equal(out, fill())


def test_batch_step_is_all_or_nothing() -> None:
    g = BatchGame(4, seed=0)
    states, rngs = g.states.copy(), g._rngs.copy()
    actions = g.legal_masks().argmax(axis=1)
    actions[2] = 0  # a card in the draw phase
    with pytest.raises(ValueError, match=r"illegal action 0 in row 2 \(no row was stepped\)"):
        g.step(actions)
    assert np.array_equal(g.states, states) and np.array_equal(g._rngs, rngs)
    actions[2] = core.PASS
    g.step(actions)
    assert not np.array_equal(g.states, states)


@pytest.mark.parametrize(
    "actions",
    [
        np.full(4, 52.0),
        np.full(4, 52.9),
        np.ones(4, dtype=bool),
        np.full((4, 1), 52),
        np.full(3, 52),
        np.full(5, 52),
        [52.0] * 4,
        np.array(["52"] * 4),
        52,
    ],
)
def test_batch_step_refuses_actions_of_the_wrong_shape_or_type(actions: Any) -> None:
    g = BatchGame(4, seed=0)
    states = g.states.copy()
    with pytest.raises(ValueError, match="actions"):
        g.step(actions)
    assert np.array_equal(g.states, states)


def test_batch_step_takes_any_integer_array() -> None:
    for dtype in (np.int8, np.uint16, np.int32, np.uint64):
        g = BatchGame(3, seed=1)
        g.step(g.legal_masks().argmax(axis=1).astype(dtype))
    g = BatchGame(3, seed=1)
    g.step([int(a) for a in g.legal_masks().argmax(axis=1)])


@pytest.mark.parametrize(
    "rules",
    [
        Rules(num_players=5),
        Rules(num_players=4, illegal_action="renege"),
        presets["four_card"].replace(num_players=3, illegal_action="renege"),
        presets["dealer_picks_trump"],
        presets["simultaneous_declaration"],
        presets["separate_trump_card_dealer_may_take"],
    ],
)
def test_batch_legality_check_agrees_with_core_step(rules: Rules) -> None:
    """The all-or-nothing pass asks ``batch._accepts`` before stepping; it must accept exactly what ``core.step``
    takes, reneges included, for every action id and a few outside the range."""
    rng = np.random.default_rng(5)
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    for k, (s, p) in enumerate(random_game(rules.replace(deals_per_episode=3), rng)):
        if k % 3:
            continue
        for action in range(-1, core.NUM_ACTIONS + 1):
            scratch = core.new_scratch()
            assert batch._accepts(s, p, action, mask, scratch) == core.step(s.copy(), p, action), (
                action,
                s[core.S_PHASE],
            )
