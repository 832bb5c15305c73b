"""``BatchGame(threads=N)``: the same games, rewards, observations and masks as one thread, for the same seed.

Each row draws from its own random stream, so cutting the rows into chunks that threads step side by side must
change nothing but the speed. The public API needs numba's pool to hold 2 threads (``NUMBA_NUM_THREADS``); the
chunked kernels are also checked directly with more chunks than threads, which needs no second core.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from bourre_env import batch, core, observation, threads
from bourre_env.batch import BatchGame
from bourre_env.core.rules import Rules, presets


@pytest.fixture(autouse=True)
def two_real_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every threaded call on the threads asked for, whatever the machine's load: these tests check the split."""
    monkeypatch.setattr(threads, "_chooser", threads.ThreadChooser(adapt=False))


SETTINGS = [
    Rules(num_players=5, deals_per_episode=2),
    Rules(num_players=7, deals_per_episode=3, pot_limit=15, tie="divide"),
    Rules(num_players=4, deals_per_episode=3, illegal_action="renege"),
    presets["separate_trump_card_dealer_may_take"].replace(num_players=3, ranks=6, hand_size=4),
]

needs_two = pytest.mark.skipif(batch.max_threads() < 2, reason="numba's pool has one thread (NUMBA_NUM_THREADS)")


def _same_game(a: BatchGame, b: BatchGame) -> None:
    assert np.array_equal(a.states, b.states)
    assert np.array_equal(a._rngs, b._rngs)
    assert np.array_equal(a.scratch, b.scratch)


@pytest.mark.slow  # every setting's game on two threads; the chunked kernels and the tests below run in CI
@needs_two
@pytest.mark.parametrize("rules", SETTINGS, ids=repr)
@pytest.mark.parametrize("batch_size", [1, 2, 37])
def test_step_and_queries_match_one_thread(rules: Rules, batch_size: int) -> None:
    one = BatchGame(batch_size, seed=11, rules=rules)
    two = BatchGame(batch_size, seed=11, rules=rules, threads=2)
    pick = np.random.default_rng(5)
    ended = 0
    for _ in range(400):
        masks = one.legal_masks()
        assert np.array_equal(masks, two.legal_masks())
        assert np.array_equal(one.observations(), two.observations())
        # a random legal action per row, so that every phase and option is reached
        actions = np.array([pick.choice(np.flatnonzero(m)) for m in masks], dtype=np.int64)
        r1, d1 = one.step(actions)
        r2, d2 = two.step(actions)
        assert np.array_equal(r1, r2) and np.array_equal(d1, d2)
        assert np.array_equal(one.truncated, two.truncated)
        ended += int(d1.sum())
    _same_game(one, two)
    assert ended > 0  # the restart of a finished episode ran in the threads too


@pytest.mark.slow  # as above
@needs_two
@pytest.mark.parametrize("rules", SETTINGS, ids=repr)
@pytest.mark.parametrize("with_observations", [False, True])
def test_random_play_matches_one_thread(rules: Rules, with_observations: bool) -> None:
    one = BatchGame(33, seed=3, rules=rules)
    two = BatchGame(33, seed=3, rules=rules, threads=2)
    for decisions in (1, 57, 200):
        assert one.random_play(decisions, with_observations) == two.random_play(decisions, with_observations)
        assert np.array_equal(one.last_random_chips, two.last_random_chips)
        _same_game(one, two)


@needs_two
def test_an_illegal_action_steps_no_row_and_names_the_lowest() -> None:
    g = BatchGame(10, seed=0, threads=2)
    states, rngs, scratch = g.states.copy(), g._rngs.copy(), g.scratch.copy()
    actions = g.legal_masks().argmax(axis=1)
    actions[[3, 8]] = 0  # a card in the draw phase: one illegal row in each thread's chunk
    with pytest.raises(ValueError, match=r"illegal action 0 in row 3 \(no row was stepped\)"):
        g.step(actions)
    actions[3] = core.PASS
    with pytest.raises(ValueError, match=r"illegal action 0 in row 8 \(no row was stepped\)"):
        g.step(actions)
    assert np.array_equal(g.states, states) and np.array_equal(g._rngs, rngs)
    assert np.array_equal(g.scratch, scratch)
    actions[8] = core.PASS
    g.step(actions)
    assert not np.array_equal(g.states, states)


@needs_two
def test_the_callers_thread_count_is_restored() -> None:
    g = BatchGame(8, seed=0, threads=2)
    numba.set_num_threads(1)
    try:
        g.random_play(3)
        g.step(g.legal_masks().argmax(axis=1))
        g.observations()
        assert numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(batch.max_threads())


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2", None])
def test_threads_is_checked(bad: object) -> None:
    with pytest.raises(ValueError, match="threads"):
        BatchGame(4, threads=bad)  # type: ignore[arg-type]
    g = BatchGame(4)
    with pytest.raises(ValueError, match="threads"):
        g.threads = bad  # type: ignore[assignment]
    assert g.threads == 1


def test_threads_past_the_pool_are_refused() -> None:
    with pytest.raises(ValueError, match="NUMBA_NUM_THREADS"):
        BatchGame(4, threads=batch.max_threads() + 1)


def test_threads_is_settable_and_keeps_the_games() -> None:
    a = BatchGame(9, seed=2, num_players=6)
    b = BatchGame(9, seed=2, num_players=6)
    b.threads = batch.max_threads()
    for _ in range(3):
        assert a.random_play(40) == b.random_play(40)
        _same_game(a, b)
    assert b.threads == batch.max_threads()


@pytest.mark.parametrize("chunks", [2, 3, 7])
def test_chunked_kernels_match_the_one_thread_kernels(chunks: int) -> None:
    """The chunk arithmetic on its own: more chunks than threads, odd shares, a chunk of one row."""
    a = BatchGame(7, seed=9, num_players=5, deals_per_episode=2)
    b = BatchGame(7, seed=9, num_players=5, deals_per_episode=2)
    chips = np.zeros(5, dtype=np.float64)
    assert a.random_play(80, True) == batch._random_play_threads(
        b.states, b.params, b._rngs, b._template, 80, True, chips, b.scratch, chunks
    )
    assert np.array_equal(a.last_random_chips, chips)
    _same_game(a, b)
    masks = np.zeros((7, core.NUM_ACTIONS), dtype=np.int8)
    obs = np.zeros((7, observation.OBS_SIZE), dtype=np.float32)
    for _ in range(60):
        batch._masks_threads(b.states, b.params, masks, b.scratch, chunks)
        batch._observations_threads(b.states, b.params, obs, b.scratch, chunks)
        assert np.array_equal(masks, a.legal_masks()) and np.array_equal(obs, a.observations())
        actions = masks.argmax(axis=1)
        rewards = np.zeros((7, 5), dtype=np.float32)
        done = np.zeros(7, dtype=np.bool_)
        truncated = np.zeros(7, dtype=np.bool_)
        assert (
            batch._step_all_threads(
                b.states, b.params, b._rngs, b._template, actions, rewards, done, truncated, b.scratch, chunks
            )
            == -1
        )
        r, d = a.step(actions)
        assert np.array_equal(r, rewards) and np.array_equal(d, done) and np.array_equal(a.truncated, truncated)
    _same_game(a, b)
    actions = a.legal_masks().argmax(axis=1)
    actions[[2, 6]] = core.NUM_ACTIONS  # out of range: refused wherever the chunks fall
    assert (
        batch._step_all_threads(
            b.states, b.params, b._rngs, b._template, actions, rewards, done, truncated, b.scratch, chunks
        )
        == 2
    )
    _same_game(a, b)


def test_random_move_is_public_and_uniform_over_the_legal_actions() -> None:
    """``batch.random_move`` (shared with the search rollouts): every legal action comes up, and only those."""
    g = BatchGame(1, seed=4, num_players=5)
    after = {}
    for a in np.flatnonzero(g.legal_masks()[0]).tolist():
        s = g.states[0].copy()
        assert core.step(s, g.params, a)
        after[a] = s
    seen = dict.fromkeys(after, 0)
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    rng = np.array([123], dtype=np.int64)
    draws = 3000
    for _ in range(draws):
        s, x = g.states[0].copy(), g.scratch[0].copy()
        batch.random_move(s, g.params, rng, mask, x)
        moved = [a for a, t in after.items() if np.array_equal(t, s)]
        assert len(moved) == 1
        seen[moved[0]] += 1
    assert min(seen.values()) > draws / len(after) / 2, seen
