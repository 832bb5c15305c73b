"""The env's per-game fast paths answer as the code they replaced: the card-mask helper, a given deck checked in one
pass, the generator made on first use, the hand history's rules entry built once, the strict JSON parser."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.utils import seeding

import bourre_env
from bourre_env import history
from bourre_env.card_masks import cards_of
from bourre_env.core import cards


def every_card_bit(mask: int) -> list[int]:
    """The loop over the 52 cards that ``cards_of`` replaced."""
    return [c for c in range(cards.NUM_CARDS) if int(mask) >> c & 1]


def test_cards_of_is_the_loop_over_the_52_cards() -> None:
    rng = np.random.default_rng(0)
    masks: list[Any] = [0, 1, (1 << 52) - 1, 1 << 51, 1 << 52, (1 << 70) | 5, -1, -(1 << 40), np.int64(-3)]
    masks += [int(m) for m in rng.integers(0, 1 << 62, size=200)]
    masks += [np.int64(m) for m in rng.integers(0, 1 << 52, size=50)]
    for mask in masks:
        assert cards_of(mask) == every_card_bit(mask), mask


def dealt_state(deck: Any) -> np.ndarray:
    env = bourre_env.raw_env(num_players=4)
    env.reset(seed=1, options={"deck": deck, "dealer": 2})
    return env.state_vector.copy()


def test_a_deck_of_card_ids_deals_as_the_same_deck_in_card_strings() -> None:
    ids = [int(c) for c in np.random.default_rng(3).permutation(52)]
    expected = dealt_state([cards.to_str(c) for c in ids])
    for deck in (
        ids,
        tuple(ids),
        np.array(ids, dtype=np.int16),
        np.array(ids, dtype=np.uint8),
        [np.int64(c) for c in ids],
    ):
        assert (dealt_state(deck) == expected).all()


@pytest.mark.parametrize(
    ("deck", "problem"),
    [
        ([0, True, *range(2, 52)], "bad deck"),  # sorts as the right deck: a bool is still no card id
        ([0, 0, *range(2, 52)], "got 52 cards, missing 3C, repeated 2C"),
        (np.array([0, 0, *range(2, 52)]), "repeated 2C"),
        ([*range(51), 2**70], "bad card id"),
        ([*range(51), -1], "bad card id"),
        (np.arange(52).reshape(4, 13), "bad deck"),
        (list(range(51)), "got 51 cards, missing AS"),
    ],
)
def test_a_wrong_deck_of_ids_is_refused_as_before(deck: Any, problem: str) -> None:
    with pytest.raises(ValueError, match="reset options: ") as caught:
        dealt_state(deck)
    assert problem in str(caught.value)


def test_np_random_is_made_on_first_use_as_at_construction_before() -> None:
    env = bourre_env.raw_env(num_players=3)
    generator, seed = env.np_random, env.np_random_seed
    assert isinstance(generator, np.random.Generator) and env.np_random is generator
    assert isinstance(seed, int) and seed >= 0 and env.np_random_seed == seed
    env.reset(seed=5)
    assert env.np_random_seed == 5
    fresh, _ = seeding.np_random(5)
    fresh.permutation(52), fresh.integers(env.rules.num_players), fresh.integers(0, 2**62)  # reset's draws, in order
    assert env.np_random.bit_generator.state == fresh.bit_generator.state
    # a generator set by hand is the one later deals draw from, and leaves the seed as it was
    first, second = bourre_env.raw_env(num_players=3), bourre_env.raw_env(num_players=3)
    first.np_random, second.np_random = np.random.default_rng(9), np.random.default_rng(9)
    first.reset()
    second.reset()
    assert (first.state_vector == second.state_vector).all()
    assert isinstance(first.np_random_seed, int)


def test_the_recordings_rules_entry_is_a_fresh_copy_and_follows_its_preset() -> None:
    env = history.Recording(bourre_env.env(num_players=3))
    env.reset(seed=0)
    while env.agents and not env.terminations[env.agent_selection]:
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    rules = env.unwrapped.rules
    first = env.history()
    assert first["rules"] == history.rules_record(rules)
    first["rules"]["fields"]["num_players"] = 99
    assert env.history()["rules"] == history.rules_record(rules)
    env.preset = "wikipedia"
    assert env.history()["rules"] == history.rules_record(rules, "wikipedia")
    env.preset = "no such preset"
    with pytest.raises(ValueError, match="preset: expected one of"):
        env.history()


def test_strict_json_names_the_first_key_given_twice() -> None:
    assert history.strict_json('{"a": 1, "b": {"c": 2}}') == {"a": 1, "b": {"c": 2}}
    with pytest.raises(ValueError, match="the key 'b' is given twice"):
        history.strict_json('{"b": 1, "a": 2, "b": 3, "a": 4}')
    with pytest.raises(ValueError, match="the key 'c' is given twice"):
        history.strict_json('{"a": [{"c": 1, "c": 1}]}')


@pytest.mark.parametrize("text", ['{"a": "\\ud800"}', b'["x\\uDFFF"]', '{"\\udc00": 1}', '["\\ude00\\ud83d"]'])
def test_strict_json_refuses_a_lone_surrogate_and_keeps_a_pair(text: str | bytes) -> None:
    """A lone half of a UTF-16 pair is valid JSON but no text: an answer quoting it could not be written in UTF-8."""
    with pytest.raises(history.NotTextError, match="lone UTF-16 surrogate"):
        history.strict_json(text)
    assert history.strict_json('["\\ud83d\\ude00", "\\\\ud800"]') == ["\U0001f600", "\\ud800"]
    assert history.strict_json(text, text_only=False) is not None
