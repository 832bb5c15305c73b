"""``bourre_env.view``: the read-only state view agrees with the state it reads, and cannot write it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_game

from bourre_env import core, view
from bourre_env.core.rules import Rules
from bourre_env.view import StateView


def test_view_reads_what_the_state_holds() -> None:
    rules = Rules(num_players=4, deals_per_episode=2)
    rng = np.random.default_rng(0)
    checked = 0
    for s, p in random_game(rules, rng):
        v = StateView(s, rules.num_players)
        assert view.num_players_of(p) == rules.num_players
        assert (v.phase, v.dealer, v.to_act, v.pot) == (s[core.S_PHASE], s[core.S_DEALER], s[core.S_CUR], s[core.S_POT])
        assert (view.phase_of(s), view.to_act(s), view.dealer_of(s), view.pot_of(s)) == (
            v.phase,
            v.to_act,
            v.dealer,
            v.pot,
        )
        assert v.played == [c for c in range(52) if s[core.S_PLAYED] >> c & 1]
        assert view.played_cards(s) == s[core.S_PLAYED]
        for q in range(rules.num_players):
            assert v.hand_mask(q) == view.hand_of(s, q) == s[core.S_HAND + q]
            assert sum(1 << c for c in v.hand(q)) == v.hand_mask(q)
            assert v.decision(q) == view.decision_of(s, q) == s[core.S_DECISION + q]
            assert v.tricks(q) == view.tricks_of(s, q) == s[core.S_TRICKS + q]
            assert v.reward(q) == view.reward_of(s, q) == s[core.S_REWARD + q]
            assert v.discards_announced(q) == s[core.S_NDISCARD + q]
            for t in range(rules.hand_size):
                assert v.trick_cards(t)[q] == view.trick_card(s, t, q) == s[core.S_TRICK_CARDS + t * 8 + q]
        assert list(v.rewards) == [v.reward(q) for q in range(rules.num_players)]
        checked += 1
    assert checked > 20


def test_view_is_read_only_and_checks_its_input() -> None:
    s = core.new_state()
    v = StateView(s, 5)
    with pytest.raises(ValueError, match="read-only"):
        v._s[core.S_POT] = 3
    s[core.S_POT] = 7
    assert v.pot == 7  # a view, not a copy
    with pytest.raises(ValueError, match="int64 vector"):
        StateView(s.astype(np.int32), 5)
    with pytest.raises(ValueError, match="num_players"):
        StateView(s, 9)
    with pytest.raises(ValueError, match="seat"):
        v.hand(5)
    with pytest.raises(ValueError, match="trick"):
        v.trick_winner(6)
    assert view.rewards_column(2) == core.S_REWARD + 2


def test_the_column_and_stock_accessors_read_what_the_state_holds() -> None:
    rules = Rules(num_players=5)
    rng = np.random.default_rng(3)
    states = []
    for s, _p in random_game(rules, rng):
        states.append(s.copy())
        to_come = s[view.stock_to_come(s)]
        # the stock still to come is the dealt stock's tail, and holds no card of any hand
        assert len(to_come) == s[core.S_STOCK_LEN] - s[core.S_STOCK_POS] == s[core.S_STOCK_LEN] - view.stock_position(s)
        held = 0
        for q in range(rules.num_players):
            held |= view.hand_of(s, q)
        assert not any(held >> int(c) & 1 for c in to_come)
        assert (view.reshuffles_of(s), view.rng_state_of(s)) == (s[core.S_RESHUFFLES], s[core.S_RNG])
    table = np.stack(states)
    seats = np.arange(len(table)) % rules.num_players
    assert (table[:, view.phase_column()] == [view.phase_of(s) for s in states]).all()
    assert (table[:, view.to_act_column()] == [view.to_act(s) for s in states]).all()
    decisions = table[np.arange(len(table)), view.decision_column() + seats]
    assert (decisions == [view.decision_of(s, int(q)) for s, q in zip(states, seats, strict=True)]).all()
    with pytest.raises(ValueError, match="seat"):
        view.decision_column(8)
