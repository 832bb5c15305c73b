"""Layer 3: invariants over many random games (cards, chips, masks) through the core and the batch API."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from conftest import card_locations, random_game

import bourre_env
from bourre_env import core, observation
from bourre_env.batch import BatchGame
from bourre_env.core.rules import Rules, presets

SETTINGS = [
    Rules(num_players=2),
    Rules(num_players=5),
    Rules(num_players=8),
    Rules(num_players=7, deals_per_episode=4, pot_limit=15, tie="divide"),
    Rules(num_players=8, deals_per_episode=3, rake=0.1),
    Rules(num_players=3, ranks=6, hand_size=4),
    Rules(num_players=4, deals_per_episode=3, illegal_action="renege"),
    presets["double_ante"].replace(num_players=6, deals_per_episode=4),
    presets["double_ante"].replace(num_players=3, deals_per_episode=3, pot_limit=6, tie="divide"),
    presets["dealer_antes_for_all"].replace(num_players=5, deals_per_episode=4),
    presets["dealer_antes_for_all"].replace(num_players=4, deals_per_episode=3, play_ante=1, ante_exemptions=True),
    presets["wikipedia"].replace(num_players=7, deals_per_episode=2),
    presets["wikipedia"].replace(num_players=8, ranks=11),
    presets["separate_trump_card"].replace(num_players=8, deals_per_episode=2),
    presets["separate_trump_card"].replace(num_players=3, ranks=6, hand_size=4),
    presets["separate_trump_card_dealer_may_take"].replace(num_players=8, deals_per_episode=2),
    presets["separate_trump_card_dealer_may_take"].replace(num_players=4, max_discard=2, deals_per_episode=3),
    presets["two_round_declaration"].replace(num_players=8, deals_per_episode=3),
    presets["two_round_declaration"].replace(num_players=3, deals_per_episode=3, ranks=6, hand_size=4),
    Rules(num_players=6, declaration="two_rounds", trump_card="separate_dealer_may_take", deals_per_episode=2),
    presets["simultaneous_declaration"].replace(num_players=5, deals_per_episode=3),
    presets["simultaneous_declaration"].replace(num_players=2, deals_per_episode=4, play_ante=1),
    presets["four_card"].replace(num_players=8, deals_per_episode=3),
    presets["four_card"].replace(num_players=3, deals_per_episode=4, illegal_action="renege"),
    Rules(num_players=5, second_pass_ante=2, entry_requirement="trump_or_club", deals_per_episode=2),
    presets["dealer_picks_trump"].replace(num_players=8, deals_per_episode=3),
    presets["dealer_picks_trump"].replace(num_players=3, deals_per_episode=3, ranks=6, declaration="simultaneous"),
]


@pytest.mark.parametrize("rules", SETTINGS, ids=repr)
def test_random_games_keep_every_invariant(rules: Rules) -> None:
    rng = np.random.default_rng(11)
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    deck = sorted(rules.deck_cards())
    for _ in range(40):
        scratch = core.new_scratch()  # the game's cinch memo and search statistics
        for s, p in random_game(rules, rng):
            assert sorted(card_locations(s, rules)) == deck, Counter(card_locations(s, rules))
            core.legal_actions_with(s, p, mask, scratch)
            assert mask.any(), "a player must act but has no legal action"
            if s[core.S_PHASE] == core.PLAY:
                seat = s[core.S_CUR]
                assert popcount_hand(s, seat) == rules.hand_size - s[core.S_TRICK_NO]
        n = rules.num_players
        # chips: the players' changes plus the pot plus the house's rake add up to nothing
        assert s[core.S_CHIPS : core.S_CHIPS + n].sum() + s[core.S_POT] + s[core.S_RAKE_TOTAL] == 0
        assert scratch[core.X_CINCH_ABORTS] == 0


def popcount_hand(s: np.ndarray, seat: int) -> int:
    return bin(int(s[core.S_HAND + seat])).count("1")


@pytest.mark.parametrize("preset", list(presets))
def test_batch_rows_match_single_games(preset: str) -> None:
    """The batch API steps each row with the same rules: replaying a row's actions on a single state agrees."""
    g = BatchGame(batch_size=8, seed=5, rules=preset, num_players=6)
    starts = g.states.copy()
    rng = np.random.default_rng(0)
    actions_taken = []
    for _ in range(40):
        masks = g.legal_masks()
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        actions_taken.append(acts)
        _, done = g.step(acts)
        if done.any():
            break
    p = g.params
    for b in range(8):
        s = starts[b].copy()
        for acts in actions_taken:
            assert core.step(s, p, int(acts[b]))
            if s[core.S_PHASE] in (core.DEAL_OVER, core.GAME_OVER):
                break
        if s[core.S_PHASE] not in (core.DEAL_OVER, core.GAME_OVER):
            assert np.array_equal(s, g.states[b])


def test_batch_rejects_illegal_actions_and_bad_sizes() -> None:
    g = BatchGame(batch_size=3, seed=0, num_players=4)
    with pytest.raises(ValueError, match="expected 3 actions"):
        g.step(np.zeros(2))
    with pytest.raises(ValueError, match="illegal action 0 in row 0"):
        g.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="batch_size"):
        BatchGame(batch_size=0)


@pytest.mark.parametrize("preset", list(presets))
def test_batch_chips_conserved_in_every_row(preset: str) -> None:
    """Every row, at every step: the episode's settled chips, the current deal's chip changes (antes so far), the
    pot and the rake add up to nothing; the rewards ``step`` returns are the settled chip changes. (Random play at
    7 players can take a pot past the bound within 400 steps: such a row starts a new episode, counted afresh.)"""
    g = BatchGame(batch_size=16, seed=3, rules=preset, num_players=7, deals_per_episode=1000)
    rng = np.random.default_rng(2)
    returned = np.zeros((16, 7))
    deals_in_ended_episodes = np.zeros(16, dtype=np.int64)
    n = 7
    for _ in range(400):
        masks = g.legal_masks()
        before = g.states[:, core.S_DEALS_DONE].copy()
        rewards, done = g.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        assert np.array_equal(done, g.truncated)  # 1000 deals never end here: only the pot bound does
        returned += rewards
        returned[done] = 0.0
        deals_in_ended_episodes[done] += before[done] + 1
        s = g.states
        total = (
            s[:, core.S_CHIPS : core.S_CHIPS + n].sum(axis=1)
            + s[:, core.S_REWARD : core.S_REWARD + n].sum(axis=1)
            + s[:, core.S_POT]
            + s[:, core.S_RAKE_TOTAL]
        )
        assert not total.any()
    assert np.array_equal(returned, g.states[:, core.S_CHIPS : core.S_CHIPS + n])
    assert (g.states[:, core.S_DEALS_DONE] + deals_in_ended_episodes).min() >= 5


def test_batch_random_play_conserves_chips() -> None:
    g = BatchGame(batch_size=64, seed=1, num_players=7)
    decisions = g.random_play(300, with_observations=True)
    assert decisions == 64 * 300
    deck = sorted(g.rules.deck_cards())
    for b in range(64):
        assert sorted(card_locations(g.states[b], g.rules)) == deck
    # over whole episodes the chips paid equal what the pots still hold at the end of each row's episode
    assert g.scratch[:, core.X_CINCH_ABORTS].sum() == 0


@pytest.mark.parametrize("rules", SETTINGS, ids=repr)
def test_settled_outcomes_agree_with_tricks_and_chips(rules: Rules) -> None:
    """``S_OUTCOME``: the seat alone with the most tricks takes the pot (unless it reneged), seats tied for the
    most are marked tied, a playing seat without a trick is bourré; a bourré or reneging seat loses chips in the
    deal."""
    rng = np.random.default_rng(12)
    p = rules.params()
    n = rules.num_players
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    seen = 0
    for _ in range(30):
        s = core.new_state()
        core.start_episode(
            s,
            p,
            rng.permutation(np.asarray(rules.deck_cards(), dtype=np.int64)),
            int(rng.integers(n)),
            0,
            int(rng.integers(2**62)),
        )
        while s[core.S_PHASE] != core.GAME_OVER:
            if s[core.S_PHASE] == core.DEAL_OVER:
                core.next_deal(
                    s, p, rng.permutation(np.asarray(rules.deck_cards(), dtype=np.int64)), int(rng.integers(2**62))
                )
            core.legal_actions(s, p, mask)
            assert core.step(s, p, int(rng.choice(np.flatnonzero(mask))))
            if s[core.S_PHASE] not in (core.DEAL_OVER, core.GAME_OVER):
                continue
            seen += 1
            playing = [q for q in range(n) if s[core.S_DECISION + q] == core.PLAYING]
            tricks = {q: int(s[core.S_TRICKS + q]) for q in playing}
            top = [q for q in playing if tricks[q] == max(tricks.values())]
            for q in range(n):
                outcome = int(s[core.S_OUTCOME + q])
                reneged = bool(s[core.S_RENEGED + q])
                if q not in playing:
                    assert outcome == 0
                    continue
                assert bool(outcome & core.OUTCOME_WON) == (top == [q] and not reneged)
                assert bool(outcome & core.OUTCOME_TIED) == (q in top and len(top) > 1)
                assert bool(outcome & core.OUTCOME_BOURRE) == (tricks[q] == 0)
                assert bool(outcome & core.OUTCOME_RENEGED) == reneged
                if outcome & (core.OUTCOME_BOURRE | core.OUTCOME_RENEGED):
                    assert s[core.S_REWARD + q] < 0
    assert seen >= 30


@pytest.mark.parametrize("preset", ["standard", "four_card", "simultaneous_declaration", "dealer_picks_trump"])
def test_queries_leave_the_state_unchanged(preset: str) -> None:
    """The queries only read the state: ``legal_actions_with``, ``encode_with`` and ``observe_with`` put the cinch
    memo and the search statistics in the scratch array (which they do use: the memo is written), and the
    functions without one (``legal_actions``, ``has_cinch``, ``play_legal``, ``encode``, ``observe``) in a fresh
    one."""
    rules = presets[preset].replace(num_players=5, deals_per_episode=2)
    rng = np.random.default_rng(3)
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    obs = np.zeros(observation.OBS_SIZE, dtype=np.float32)
    memo_written = 0
    for _ in range(12):
        scratch = core.new_scratch()
        for s, p in random_game(rules, rng):
            before = s.copy()
            for seat in range(rules.num_players):
                observation.encode_with(s, p, seat, obs, scratch)
                observation.observe_with(s, p, seat, obs, mask, scratch)
            core.legal_actions_with(s, p, mask, scratch)
            core.legal_actions(s, p, mask)
            for seat in range(rules.num_players):
                core.has_cinch(s, p, seat)
                observation.encode(s, p, seat, obs)
                observation.observe(s, p, seat, obs, mask)
            if s[core.S_PHASE] == core.PLAY:
                core.play_legal(s, p, int(s[core.S_CUR]), True)
            assert np.array_equal(s, before), "a query changed the state"
            memo_written += int(scratch[core.X_CINCH_KEY] != 0)
    assert memo_written > 0


def test_env_and_batch_queries_leave_their_states_unchanged() -> None:
    env = bourre_env.raw_env(num_players=4, deals_per_episode=2)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    while env.agents:
        before = env.state_vector.copy()
        for agent in env.possible_agents:
            env.observe(agent)
        legal = env.legal_actions() if env.state_vector[core.S_CUR] >= 0 else []
        assert np.array_equal(env.state_vector, before)
        if not legal:
            break
        env.step(int(rng.choice(legal)))
    g = BatchGame(batch_size=16, seed=2, num_players=5)
    for _ in range(60):
        before = g.states.copy()
        masks = g.legal_masks()
        g.observations()
        assert np.array_equal(g.states, before)
        g.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))


@pytest.mark.parametrize("preset", sorted(presets))
def test_phases_come_in_the_order_of_their_codes(preset: str) -> None:
    """One phase per round, numbered in game order: within a deal the stored phase never goes back, each decision
    phase is the observation's ``decision_round`` slot, and every decision round of the preset is met."""
    rules = presets[preset].replace(num_players=4)
    rng = np.random.default_rng(8)
    obs = np.zeros(observation.OBS_SIZE, dtype=np.float32)
    seen: set[int] = set()
    for _ in range(30):
        last = -1
        for s, p in random_game(rules, rng):
            phase = int(s[core.S_PHASE])
            assert phase >= last, f"{core.PHASE_NAMES[phase]} after {core.PHASE_NAMES[last]}"
            last = phase
            seen.add(phase)
            observation.encode(s, p, int(s[core.S_CUR]), obs)
            slots = np.flatnonzero(observation.as_dict(obs)["decision_round"]).tolist()
            assert slots == ([phase] if phase < core.PLAY else [])
    expected = {core.PLAY, *((core.DECLARE, core.DRAW) if rules.declaration != "with_draw" else (core.DRAW_OR_PASS,))}
    expected |= {core.NAME_TRUMP} if rules.trump_card == "named_by_dealer" else set()
    expected |= {core.SECOND_PASS} if rules.second_pass_ante is not None else set()
    assert seen == expected
