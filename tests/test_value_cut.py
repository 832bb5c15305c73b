"""The value file of the search's cut rollouts (``agents.search.value``), the rollouts themselves, ``pimc``'s
``cut``/``value`` options and the fit that makes value files (``train.research.value_fit``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.search.policy import PolicyModel, policy_rollouts
from agents.search.value import INPUT_SIZE, ValueWeights, cut_rollouts, load_value, save_value, value_input
from bourre_env import core, observation, view
from bourre_env.core.rules import Rules
from bourre_env.privileged import hidden_hand_entries
from bourre_env.sampler import WorldSampler
from train.research import value_fit

SPEC = "pimc:8,rollout=ppo,model=ppo,infer=4,z=2,phases=tricks"


def random_value(seed: int = 0, hidden: tuple[int, ...] = (16, 8)) -> ValueWeights:
    rng = np.random.default_rng(seed)
    widths = [INPUT_SIZE, *hidden]
    layers = tuple(
        (rng.normal(0, 0.3, (b, a)).astype(np.float32), rng.normal(0, 0.3, b).astype(np.float32))
        for a, b in zip(widths[:-1], widths[1:], strict=True)
    )
    head = (rng.normal(0, 0.5, (1, widths[-1])).astype(np.float32), np.array([0.25], np.float32))
    return ValueWeights(layers, head, {"note": "random weights for tests"})


@pytest.fixture(scope="module")
def value_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_value(tmp_path_factory.mktemp("value") / "value.npz", random_value())


@pytest.fixture(scope="module")
def trick_positions() -> dict[int, value_fit.Positions]:
    """Positions of trick play from greedy self-play at 3 and at 5 players, with their states."""
    return {n: value_fit.positions("ppo", [n], 12, seed=5, batch=12, progress=False, keep_states=True) for n in (3, 5)}


def test_a_value_file_reads_back_and_its_compiled_pass_is_the_dense_one(value_file: Path) -> None:
    weights = load_value(value_file)
    original = random_value()
    for (w, b), (w0, b0) in zip([*weights.hidden, weights.head], [*original.hidden, original.head], strict=True):
        np.testing.assert_array_equal(w, w0)
        np.testing.assert_array_equal(b, b0)
    rng = np.random.default_rng(1)
    inputs = (rng.random((20, INPUT_SIZE)) < 0.05).astype(np.float32) * rng.normal(1, 0.5, (20, INPUT_SIZE))
    np.testing.assert_allclose(weights.values(inputs), weights.dense_values(inputs), rtol=1e-4, atol=1e-5)
    assert weights.meta["format"] == "bourre-value" and weights.meta["note"] == "random weights for tests"


@pytest.mark.parametrize(
    "spoil, message",
    [
        (lambda a, m: m.update(format="bourre-ppo-policy"), "meta format"),
        (lambda a, m: m.update(obs_size=1000), "made for inputs"),
        (lambda a, m: a.pop("value.bias"), "missing value.weight or value.bias"),
        (lambda a, m: a.__setitem__("value.weight", np.zeros((2, 8), np.float32)), "value has weight"),
        (lambda a, m: a.__setitem__("layers.1.weight", np.zeros((8, 15), np.float32)), "takes 15 inputs"),
        (lambda a, m: a.__setitem__("layers.0.bias", np.full(16, np.nan, np.float32)), "non-finite"),
        (lambda a, m: a.__setitem__("extra", np.zeros(1, np.float32)), "unexpected entries"),
    ],
)
def test_a_bad_value_file_is_refused_with_its_reason(value_file: Path, tmp_path: Path, spoil, message: str) -> None:
    with np.load(value_file, allow_pickle=False) as data:
        arrays = {name: np.asarray(data[name]) for name in data.files}
    meta = json.loads(str(arrays.pop("meta")))
    spoil(arrays, meta)
    bad = tmp_path / "bad.npz"
    np.savez(bad, meta=np.array(json.dumps(meta)), **arrays)
    with pytest.raises(ValueError, match=message):
        load_value(bad)
    with pytest.raises(ValueError, match="no such value file"):
        load_value(tmp_path / "missing.npz")


def test_the_input_is_the_observation_then_the_hands_of_bourre_env_privileged(
    trick_positions: dict[int, value_fit.Positions],
) -> None:
    for n, data in trick_positions.items():
        assert data.states is not None and len(data) > 20
        p = Rules(num_players=n).params()
        for i in range(0, len(data), 5):
            s = data.states[i]
            out = np.zeros(INPUT_SIZE, np.float32)
            mask = np.zeros(core.NUM_ACTIONS, np.int8)
            value_input(s, p, view.to_act(s), out, mask, np.zeros(core.SCRATCH_SIZE, np.int64))
            # the observation part is what the fit trained on, and the hands are bourre_env.privileged's features
            trained = np.zeros(observation.OBS_SIZE, np.float32)
            entries = slice(data.obs_ptr[i], data.obs_ptr[i + 1])
            trained[data.obs_idx[entries]] = data.obs_val[entries]
            np.testing.assert_array_equal(out[: observation.OBS_SIZE], trained)
            hand_idx, _, _ = hidden_hand_entries(data.states, np.array([i]), n)
            hands = np.zeros(INPUT_SIZE - observation.OBS_SIZE, np.float32)
            hands[hand_idx] = 1.0
            np.testing.assert_array_equal(out[observation.OBS_SIZE :], hands)
            assert mask.any()  # the seat is to act


def test_each_target_is_what_a_full_greedy_rollout_from_its_position_makes(
    trick_positions: dict[int, value_fit.Positions],
) -> None:
    for n, data in trick_positions.items():
        assert data.states is not None
        p = Rules(num_players=n).params()
        played = data.states.copy()
        seats = [view.to_act(s) for s in played]
        before = np.array([view.reward_of(s, q) for s, q in zip(played, seats, strict=True)])
        for r, seat in enumerate(seats):
            policy_rollouts(played[r : r + 1], p, PolicyModel("ppo"), me=seat)
        after = np.array([view.reward_of(s, q) for s, q in zip(played, seats, strict=True)])
        np.testing.assert_array_equal(data.targets, (after - before).astype(np.float32))
        assert np.unique(data.deals).size > 3


def _worlds(players: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Worlds of seat 0's first card decision in the first deal from ``seed`` on where the network, playing every
    seat, has seat 0 play its hand (the searcher is seat 0 of a world)."""
    import bourre_env

    env = bourre_env.env(num_players=players)
    model = agents.make("ppo")
    for deal_seed in range(seed, seed + 20):
        env.reset(seed=deal_seed)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            vector = obs["observation"]
            if agent == env.possible_agents[0] and vector[observation.O_PHASE + 1] > 0.5:
                sampler = WorldSampler(vector)
                return sampler.sample(16, seed=deal_seed), sampler.params
            env.step(model.act(obs))
    raise AssertionError("seat 0 never played a card")


def test_cut_rollouts_past_the_deal_play_what_full_rollouts_play() -> None:
    worlds, p = _worlds(5, seed=3)
    full, cut = worlds.copy(), worlds.copy()
    policy_rollouts(full, p, PolicyModel("ppo"), me=0)
    estimates, taken = cut_rollouts(cut, p, PolicyModel("ppo"), random_value(), 0, depth=6)
    np.testing.assert_array_equal(cut, full)
    assert np.all(estimates == 0.0) and taken > 0


def test_cut_rollouts_stop_at_the_searchers_card_a_trick_later_with_the_values_estimate() -> None:
    worlds, p = _worlds(5, seed=4)
    value = random_value(2)
    start = [sum(view.tricks_of(s, q) for q in range(5)) for s in worlds]
    cut = worlds.copy()
    estimates, _ = cut_rollouts(cut, p, PolicyModel("ppo"), value, 0, depth=1)
    stopped = 0
    for s, before, estimate in zip(cut, start, estimates, strict=True):
        if view.phase_of(s) in (core.DEAL_OVER, core.GAME_OVER) or view.decision_of(s, 0) == core.PASSED:
            assert estimate == 0.0
            continue
        stopped += 1
        assert view.to_act(s) == 0 and view.phase_of(s) == core.PLAY
        assert sum(view.tricks_of(s, q) for q in range(5)) == before + 1
        inputs = np.zeros(INPUT_SIZE, np.float32)
        value_input(s, p, 0, inputs, np.zeros(core.NUM_ACTIONS, np.int8), np.zeros(core.SCRATCH_SIZE, np.int64))
        assert estimate == pytest.approx(float(value.dense_values(inputs)[0]), rel=1e-4, abs=1e-5)
    assert stopped > 0
    # the rows stopped are the greedy play of the full rollouts, up to the cut
    full = worlds.copy()
    policy_rollouts(full, p, PolicyModel("ppo"), me=0)
    for s, f in zip(cut, full, strict=True):
        for trick in range(5):
            for q in range(5):
                played = view.trick_card(s, trick, q)
                assert played < 0 or played == view.trick_card(f, trick, q)


def test_pimc_with_a_cut_plays_legal_cards_and_refuses_bad_options(value_file: Path) -> None:
    import bourre_env

    agent = agents.make(f"{SPEC},cut=1,value=ppo:{value_file}", seed=0)
    env = bourre_env.env(num_players=4)
    env.reset(seed=8)
    searched = 0
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action, values = agent.decide(obs)
        assert obs["action_mask"][action] == 1
        searched += bool(values)
        env.step(action)
    assert searched > 0
    with pytest.raises(ValueError, match="cut and value go together"):
        agents.make(f"{SPEC},cut=1")
    with pytest.raises(ValueError, match="cut and value go together"):
        agents.make(f"{SPEC},value=ppo:{value_file}")
    with pytest.raises(ValueError, match="greedy policy file for every seat"):
        agents.make(f"pimc:8,cut=1,value=ppo:{value_file}")
    with pytest.raises(ValueError, match="expected 'ppo:PATH'"):
        agents.make(f"{SPEC},cut=1,value={value_file}")
    with pytest.raises(ValueError, match="no file path"):
        agents.check_budget(f"{SPEC},cut=1,value=ppo:{value_file}")


def test_the_fit_writes_a_value_file_with_its_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "v.npz"
    args = ["--players", "3", "--deals", "60", "--epochs", "2", "--hidden", "8", "--seed", "2", "--no-progress"]
    assert value_fit.main([*args, "--out", str(out)]) == 0
    weights = load_value(out)
    assert weights.meta["positions_trained"] > 0 and weights.meta["positions_held_out"] > 0
    assert weights.meta["held_out_rmse"] > 0 and weights.meta["command"].endswith(f"--out {out}")
    assert "held-out error" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        value_fit.main(["--deals", "0", "--out", str(out)])
    assert "--deals: between 1 and" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        value_fit.main(["--players", "9", "--out", str(out)])
