"""The compiled forward pass of an exported policy (``agents.ppo.forward_row``, which skips zero inputs) against the
dense products it replaces, and the compiled search paths built on it against their step-by-step definitions."""

from __future__ import annotations

import numpy as np
import pytest

import agents
import bourre_env
from agents.heuristic.batch import BatchHeuristic
from agents.ppo import SHIPPED_MODEL, PolicyWeights, load_policy
from agents.search.inference import _add_log_probs
from agents.search.policy import PolicyModel, _step_rows, observe_rows, policy_rollouts
from agents.search.rollout import Rollout, _uniform
from bourre_env import core, observation
from bourre_env.core.rules import Rules


def _seeded_observations(num_players: int, deals: int) -> tuple[np.ndarray, np.ndarray]:
    """Every observation and legal mask of ``deals`` seeded deals driven by seeded random legal actions."""
    env = bourre_env.env(num_players=num_players)
    rng = np.random.default_rng(num_players)
    obs, masks = [], []
    for seed in range(deals):
        env.reset(seed=seed)
        for _ in env.agent_iter():
            o, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            obs.append(o["observation"])
            masks.append(o["action_mask"])
            legal = np.flatnonzero(o["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
    return np.asarray(obs, dtype=np.float32), np.asarray(masks, dtype=np.int8)


def _assert_close(fast: np.ndarray, dense: np.ndarray) -> None:
    # float32 sums in another order: equal within 1e-4 of the row's largest logit
    scale = np.abs(dense).max(axis=-1, keepdims=True)
    assert np.all(np.abs(fast - dense) <= 1e-4 * scale), np.abs(fast - dense).max()


@pytest.mark.parametrize("num_players", [3, 5, 7])
def test_shipped_policy_logits_and_choices_equal_the_dense_pass(num_players: int) -> None:
    weights = load_policy(SHIPPED_MODEL)
    obs, masks = _seeded_observations(num_players, 8)
    fast, dense = weights.logits(obs), weights.dense_logits(obs)
    assert fast.dtype == np.float32 and fast.shape == dense.shape == (obs.shape[0], core.NUM_ACTIONS)
    _assert_close(fast, dense)
    legal_fast = np.where(masks == 1, fast, -np.inf).argmax(axis=1)
    legal_dense = np.where(masks == 1, dense, -np.inf).argmax(axis=1)
    assert np.array_equal(legal_fast, legal_dense)
    # a row's logits are the same alone and in any batch, to the bit
    single = np.stack([weights.logits(row) for row in obs[:40]])
    assert np.array_equal(single, fast[:40])
    assert np.array_equal(weights.logits(obs[5:9]), fast[5:9])


def test_other_shapes_activations_and_older_observation_versions() -> None:
    rng = np.random.default_rng(0)
    size = observation.VERSION_SIZES[1]  # a version-1 policy reads the first 1145 entries of today's vector
    widths = [size, 64, 48, 32, core.NUM_ACTIONS]
    layers = [
        (rng.normal(size=(n_out, n_in)).astype(np.float32) / np.sqrt(n_in), rng.normal(size=n_out).astype(np.float32))
        for n_in, n_out in zip(widths[:-1], widths[1:], strict=True)
    ]
    obs, _ = _seeded_observations(4, 3)
    obs[:, :50] += rng.normal(size=(obs.shape[0], 50)).astype(np.float32)  # inputs that are not 0 or 1
    for activation in ("relu", "tanh"):
        weights = PolicyWeights(tuple(layers[:-1]), layers[-1], activation, {})
        _assert_close(weights.logits(obs), weights.dense_logits(obs))
        _assert_close(weights.logits(obs[3]), weights.dense_logits(obs[3]))
    no_hidden = PolicyWeights((), layers[-1], "relu", {})
    assert no_hidden.obs_size == 32
    _assert_close(no_hidden.logits(obs[:, :32]), no_hidden.dense_logits(obs[:, :32]))
    with pytest.raises(ValueError, match="at least 1145 entries"):
        PolicyWeights(tuple(layers[:-1]), layers[-1], "relu", {}).logits(obs[:, :100])


def _starts(num_players: int, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rules = Rules.from_options("standard", num_players=num_players)
    p = rules.params()
    rng = np.random.default_rng(seed)
    states = np.zeros((count, core.STATE_SIZE), dtype=np.int64)
    for b in range(count):
        deck = rng.permutation(np.asarray(rules.deck_cards(), dtype=np.int64))
        core.start_episode(states[b], p, deck, int(rng.integers(num_players)), 0, int(rng.integers(2**62)))
    return states, p


def test_compiled_greedy_rollouts_equal_step_by_step_play() -> None:
    model = PolicyModel("ppo")
    for num_players, me in ((5, -1), (5, 2), (3, 0), (7, -1)):
        states, p = _starts(num_players, 48, num_players)
        fast = states.copy()
        taken = policy_rollouts(fast, p, model, me=me)
        # the definition: every row still playing takes one step of the dense greedy policy at a time
        slow = states.copy()
        scratch = np.zeros((slow.shape[0], core.SCRATCH_SIZE), dtype=np.int64)
        obs = np.zeros((slow.shape[0], observation.OBS_SIZE), dtype=np.float32)
        masks = np.zeros((slow.shape[0], core.NUM_ACTIONS), dtype=np.int8)
        steps = 0
        while True:
            rows = np.flatnonzero([not agents.search.policy.deal_over(s, me) for s in slow])
            if rows.size == 0:
                break
            observe_rows(slow, p, rows, obs[: rows.size], masks[: rows.size], scratch)
            dense = model.weights.dense_logits(obs[: rows.size])
            actions = np.where(masks[: rows.size] == 1, dense, -np.inf).argmax(axis=1).astype(np.int64)
            assert _step_rows(slow, p, rows, actions, scratch) == -1
            steps += rows.size
        assert np.array_equal(fast, slow) and taken == steps > 0


def test_compiled_log_probabilities_equal_the_models() -> None:
    model = PolicyModel("ppo")
    packed = model.weights.packed
    states, p = _starts(5, 40, 1)
    rows = np.arange(0, 40, 2, dtype=np.int64)
    scratch = np.zeros((40, core.SCRATCH_SIZE), dtype=np.int64)
    obs = np.zeros((rows.size, observation.OBS_SIZE), dtype=np.float32)
    masks = np.zeros((rows.size, core.NUM_ACTIONS), dtype=np.int8)
    observe_rows(states, p, rows, obs, masks, scratch)
    rng = np.random.default_rng(0)
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks], dtype=np.int64)
    actions[0] = int(np.flatnonzero(masks[0] == 0)[0])  # an action the seat may not take: probability 0
    log_w = np.full(40, 0.5)
    hidden, nonzero = packed.scratch()
    weights, biases = packed.weights, packed.biases
    _add_log_probs(states, p, rows, actions, scratch, weights, biases, packed.tanh, hidden, nonzero, log_w)
    expected = 0.5 + model.log_probs(obs, masks)[np.arange(rows.size), actions]
    assert log_w[rows[0]] == -np.inf and expected[0] == -np.inf
    np.testing.assert_allclose(log_w[rows[1:]], expected[1:], rtol=0, atol=1e-4)
    assert np.all(log_w[1::2] == 0.5)  # rows not listed are left alone


def test_mixed_rollouts_play_the_policy_at_my_seat_and_the_heuristic_elsewhere() -> None:
    model = PolicyModel("ppo")
    heuristic = BatchHeuristic("default")
    for num_players, me in ((5, 0), (3, 2), (7, 4)):
        states, p = _starts(num_players, 32, num_players + 1)
        rollout = Rollout("ppo", seed=9, others="heuristic")
        rng = rollout._rng.copy()  # the tie-break numbers the kernel will draw, in its order: row by row
        fast = states.copy()
        rollout.run(fast, p, me=me)
        # the definition, one row and one decision at a time: the dense greedy policy at seat `me`, the heuristic
        # (given the kernel's tie-break number) at the others
        slow = states.copy()
        scratch = np.zeros((1, core.SCRATCH_SIZE), dtype=np.int64)
        obs = np.zeros((1, observation.OBS_SIZE), dtype=np.float32)
        mask = np.zeros((1, core.NUM_ACTIONS), dtype=np.int8)
        mine = theirs = 0
        for b in range(slow.shape[0]):
            scratch[:] = 0
            while not agents.search.policy.deal_over(slow[b], me):
                seat = int(slow[b, core.S_CUR])
                observe_rows(slow[b : b + 1], p, np.zeros(1, np.int64), obs, mask, scratch)
                if seat == me:
                    dense = model.weights.dense_logits(obs)
                    action = int(np.where(mask == 1, dense, -np.inf).argmax())
                    mine += 1
                else:
                    action = int(heuristic.act(obs, mask, tie_breaks=np.asarray([_uniform(rng)]))[0])
                    theirs += 1
                assert core.step_with(slow[b], p, action, scratch[0])
        assert np.array_equal(fast, slow) and mine > 0 and theirs > 0
        assert rollout.decisions == mine + theirs
    with pytest.raises(ValueError, match="others"):
        Rollout("heuristic", others="heuristic")
    with pytest.raises(ValueError, match="others"):
        Rollout("ppo", others="random")
    with pytest.raises(ValueError, match="me >= 0"):
        Rollout("ppo", others="heuristic").run(states.copy(), p)


def test_pimc_with_the_heuristic_for_the_others_plays_legal_actions() -> None:
    agent = agents.make("pimc:8,rollout=ppo,others=heuristic,model=heuristic,z=2", seed=3)
    env = bourre_env.env(num_players=4)
    env.reset(seed=5)
    for _ in env.agent_iter():
        o, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = agent.act(o)
        assert o["action_mask"][action]
        env.step(action)
    with pytest.raises(ValueError, match="others"):
        agents.make("pimc:8,others=heuristic")  # the heuristic's rollouts have no other policy to give
    with pytest.raises(ValueError, match="unknown option 'others'"):
        agents.make("ismcts:16,rollout=ppo,others=heuristic")
