"""``BourreVectorEnv(threads=N)``: the env of one thread, step for step, with its tables stepped, observed and
played by the heuristic on numba's threads (``bourre_env.batch.row_chunks`` shares of the rows)."""

from __future__ import annotations

import numpy as np
import pytest

from agents.batched_players import make_batched
from agents.heuristic.batch import BatchHeuristic
from bourre_env import BourreVectorEnv, batch, threads, view
from bourre_env.batch import BatchGame


@pytest.fixture(autouse=True)
def two_real_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every threaded call on the threads asked for, whatever the machine's load: these tests check the split."""
    monkeypatch.setattr(threads, "_chooser", threads.ThreadChooser(adapt=False))


needs_two = pytest.mark.skipif(batch.max_threads() < 2, reason="numba's pool has one thread (NUMBA_NUM_THREADS)")


def test_row_chunks_give_each_thread_enough_rows() -> None:
    assert batch.row_chunks(1, 10_000) == 1
    assert batch.row_chunks(4, 2 * batch.ROWS_PER_THREAD) == 2
    assert batch.row_chunks(4, batch.ROWS_PER_THREAD - 1) == 1
    assert batch.row_chunks(2, 0) == 1


@needs_two
@pytest.mark.parametrize(
    "config",
    [
        {"num_players": 5},
        pytest.param(
            {"num_players": 7, "deals_per_episode": 2, "pot_limit": 12, "tie": "divide"}, marks=pytest.mark.slow
        ),
    ],
    ids=["5p", "7p-pot-limit"],
)
def test_threads_give_the_one_thread_env_step_for_step(config: dict) -> None:
    # a pool of the heuristic (decides from the state, on the game's threads) and the random player (given
    # observations the env builds on its threads)
    envs = [
        BourreVectorEnv(
            160,
            ["heuristic", "random"],
            opponent_weights=[0.7, 0.3],
            agent_factory=make_batched,
            opponent_seed=3,
            threads=threads,
            **config,
        )
        for threads in (1, 2)
    ]
    assert envs[1].game.threads == 2
    (obs1, info1), (obs2, info2) = (env.reset(seed=4) for env in envs)
    np.testing.assert_array_equal(obs1, obs2)
    pick = np.random.default_rng(0)
    ended = 0
    for _ in range(120):
        masks = info1["action_mask"]
        np.testing.assert_array_equal(masks, info2["action_mask"])
        k = (pick.random(masks.shape[0]) * masks.sum(axis=1)).astype(np.int64)
        actions = np.argmax(np.cumsum(masks, axis=1) > k[:, None], axis=1)
        (obs1, r1, t1, u1, info1), (obs2, r2, t2, u2, info2) = (env.step(actions) for env in envs)
        np.testing.assert_array_equal(obs1, obs2)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(t1, t2)
        np.testing.assert_array_equal(u1, u2)
        assert info1.keys() == info2.keys()
        if "final_obs" in info1:
            np.testing.assert_array_equal(info1["final_obs"], info2["final_obs"])
            ended += int(info1["_final_obs"].sum())
    assert ended > 50
    with pytest.raises(ValueError, match="illegal action"):  # all or nothing on threads too
        envs[1].step(np.full(160, 116))


@needs_two
def test_the_heuristic_decides_alike_on_threads() -> None:
    game = BatchGame(300, seed=2, num_players=6)
    game.random_play(7)
    rows = np.flatnonzero(game.states[:, view.to_act_column()] >= 0)
    tie_breaks = np.random.default_rng(1).random(rows.shape[0])
    heuristic = BatchHeuristic("default", seed=0)
    one = heuristic.act_at(game.states, game.params, rows, game.scratch, tie_breaks)
    two = heuristic.act_at(game.states, game.params, rows, game.scratch, tie_breaks, threads=2)
    np.testing.assert_array_equal(one, two)


@pytest.mark.parametrize("threads", [0, -1, 1.5, True, batch.max_threads() + 1])
def test_bad_thread_counts_are_named(threads: object) -> None:
    game = BatchGame(4, seed=2, num_players=3)
    rows = np.flatnonzero(game.states[:, view.to_act_column()] >= 0)
    with pytest.raises(ValueError, match="threads: expected an integer in 1.."):
        BatchHeuristic("default", seed=0).act_at(game.states, game.params, rows, game.scratch, threads=threads)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threads: expected an integer in 1.."):
        game.threads = threads  # type: ignore[assignment]
