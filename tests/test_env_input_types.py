"""Values of the wrong type given to the envs from outside: a deck card that is a float, a bool or a bad string,
and an opponent's action that is not an integer id."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import bourre_env
from bourre_env.single_agent import BourreSingleAgentEnv


@pytest.mark.parametrize("first", [True, 0.0, np.float64(0), np.bool_(False), 0.5, "XX"])
def test_deck_cards_must_be_integer_ids_or_card_strings(first: Any) -> None:
    env = bourre_env.raw_env(num_players=4)
    with pytest.raises(ValueError, match="bad deck"):
        env.reset(options={"deck": [first, *range(1, 52)]})
    env.reset(options={"deck": np.arange(52, dtype=np.int16)})  # numpy integers are ids
    with pytest.raises(ValueError, match="bad deck"):
        env.reset(options={"deck": np.arange(52, dtype=np.float64)})


def test_single_agent_refuses_opponent_actions_that_are_not_integers() -> None:
    def stays_pat(obs: dict[str, np.ndarray]) -> Any:
        return np.int64(int(np.flatnonzero(obs["action_mask"])[-1]))

    # dealer 2 is the learner: seat 0, an opponent, decides first
    for bad in (53.9, 53.0, True, "53", np.array([53.0])):
        env = BourreSingleAgentEnv(lambda obs, bad=bad: bad, num_players=3, learner_seat=2)
        with pytest.raises(ValueError, match=r"opponent at seat 0 .* expected an integer action id"):
            env.reset(seed=0, options={"dealer": 2})
    for good in (stays_pat, lambda obs: np.array([stays_pat(obs)]), lambda obs: int(stays_pat(obs))):
        BourreSingleAgentEnv(good, num_players=3, learner_seat=2).reset(seed=0, options={"dealer": 2})
