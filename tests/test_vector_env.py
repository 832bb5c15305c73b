"""``BourreVectorEnv``: the learner's view equals ``BourreSingleAgentEnv``'s on the same decks; autoreset, truncation,
the batched players and Gymnasium's vector checks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import agents
from agents.batched_players import BatchedPolicyPlayer, BatchedRandomPlayer, make_batched
from agents.heuristic import HeuristicAgent
from agents.heuristic.batch import BatchHeuristic
from bourre_env import batch, core, limits
from bourre_env.single_agent import BourreSingleAgentEnv
from bourre_env.vector_env import BourreVectorEnv, PerRowPlayer


class TieZeroHeuristic:
    """The batched heuristic with every tie broken by u = 0: deterministic, like ``choose(obs, mask, 0.0)``."""

    def __init__(self) -> None:
        self.bot = BatchHeuristic("default", seed=0)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return self.bot.act(observations, masks, tie_breaks=np.zeros(rows.shape[0]))


class FirstLegal:
    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return np.argmax(masks, axis=1)


class RowStream:
    """A ``BatchGame`` row's random stream replayed: its decks, dealers and reshuffle seeds in the order drawn."""

    def __init__(self, rng: np.ndarray, template: np.ndarray) -> None:
        self.rng, self.template = rng.copy(), template

    def deck(self) -> np.ndarray:
        return batch._shuffled_deck(self.template, self.rng)

    def draw(self) -> int:
        return int(core.splitmix64(self.rng))


def _row_streams(env: BourreVectorEnv, seed: int) -> list[RowStream]:
    seeds = np.random.SeedSequence(seed).generate_state(env.num_envs, dtype=np.uint64)  # as BatchGame.seed
    rngs = (seeds >> np.uint64(1)).astype(np.int64).reshape(env.num_envs, 1)
    return [RowStream(rngs[b], env.game._template) for b in range(env.num_envs)]


def _single_env(stream: RowStream, opponents: list, **options: object) -> BourreSingleAgentEnv:
    """A single-agent env whose AEC env draws its decks and reshuffle seeds from ``stream``."""
    env = BourreSingleAgentEnv(opponents=opponents, **options)
    original = env.aec._deck
    env.aec._deck = lambda given: stream.deck() if given is None else original(given)  # type: ignore[method-assign]
    env.aec._reshuffle_seed = stream.draw  # type: ignore[method-assign]
    return env


def _reset_single(env: BourreSingleAgentEnv, stream: RowStream, seat: int) -> np.ndarray:
    deck = [int(c) for c in stream.deck()]
    dealer = stream.draw() % env.num_players
    obs, info = env.reset(options={"learner_seat": seat, "deck": deck, "dealer": dealer})
    assert info["learner_seat"] == seat
    return obs


def _heuristic_seat(obs: dict) -> int:
    return _REFERENCE.choose(obs["observation"], obs["action_mask"], 0.0)


_REFERENCE = HeuristicAgent(seed=0)


@pytest.mark.parametrize("num_players, deals, mixed", [(5, 1, False), (3, 3, True), (4, 2, False)])
def test_learner_sees_what_the_single_agent_env_shows(num_players: int, deals: int, mixed: bool) -> None:
    tables, seed = 6, 11
    heuristic = TieZeroHeuristic()
    if mixed:  # two kinds of player: one call each per round
        vec_opp: object = [heuristic, FirstLegal()]
        single_opp: list = [_heuristic_seat, lambda o: int(np.argmax(o["action_mask"]))]
    else:
        vec_opp, single_opp = heuristic, [_heuristic_seat]
    options = {"num_players": num_players, "deals_per_episode": deals}
    venv = BourreVectorEnv(tables, vec_opp, **options)
    obs, infos = venv.reset(seed=seed)
    streams = _row_streams(venv, seed)
    singles = [_single_env(streams[b], single_opp, **options) for b in range(tables)]
    for b in range(tables):
        np.testing.assert_array_equal(_reset_single(singles[b], streams[b], int(infos["learner_seat"][b])), obs[b])
    rng = np.random.default_rng(0)
    endings = 0
    for _ in range(120):
        masks = venv.action_masks()
        np.testing.assert_array_equal(masks, infos["action_mask"])
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, terminated, truncated, infos = venv.step(actions)
        for b in range(tables):
            np.testing.assert_array_equal(singles[b].action_masks(), masks[b])
            s_obs, s_rew, s_term, s_trunc, _ = singles[b].step(int(actions[b]))
            assert (s_rew, s_term, s_trunc) == (rewards[b], terminated[b], truncated[b])
            if s_term or s_trunc:
                endings += 1
                assert infos["_final_obs"][b] and infos["final_info"]["learner_seat"][b] == singles[b].seat
                np.testing.assert_array_equal(infos["final_obs"][b], s_obs)
                s_obs = _reset_single(singles[b], streams[b], int(infos["learner_seat"][b]))
            else:
                assert "_final_obs" not in infos or not infos["_final_obs"][b]
            np.testing.assert_array_equal(s_obs, obs[b])
    assert endings >= tables  # autoreset was exercised at every table, most of them several times


def test_learner_seat_rotates_per_table_and_can_be_fixed() -> None:
    venv = BourreVectorEnv(4, FirstLegal(), num_players=3)
    _, infos = venv.reset(seed=3)
    seen = [[int(s)] for s in infos["learner_seat"]]
    for _ in range(200):
        _, _, term, trunc, infos = venv.step(venv.action_masks().argmax(axis=1))
        for b in np.flatnonzero(term | trunc):
            seen[b].append(int(infos["learner_seat"][b]))
    for seats in seen:
        assert len(seats) > 3 and all((b - a) % 3 == 1 for a, b in zip(seats, seats[1:], strict=False))
    fixed = BourreVectorEnv(4, FirstLegal(), num_players=3, learner_seat=2)
    _, infos = fixed.reset(seed=0)
    assert (infos["learner_seat"] == 2).all()
    _, infos = fixed.reset(options={"learner_seat": 1})
    assert (infos["learner_seat"] == 1).all()
    with pytest.raises(ValueError, match="learner_seat"):
        BourreVectorEnv(2, FirstLegal(), num_players=3, learner_seat=3)


def test_truncation_at_the_pot_bound() -> None:
    venv = BourreVectorEnv(64, BatchedRandomPlayer(0), num_players=4, deals_per_episode=5)
    venv.reset(seed=0)
    venv.game.states[:, core.S_POT] += limits.POT_BOUND  # privileged: every table's pot at the bound
    learner = BatchedRandomPlayer(1)
    truncations = 0
    for _ in range(60):
        masks = venv.action_masks().astype(np.int8)
        _, rewards, term, trunc, infos = venv.step(learner.act_batch(masks.astype(np.float32), masks, np.arange(64)))
        assert not (term & trunc).any()
        if trunc.any():
            truncations += int(trunc.sum())
            assert (infos["final_info"]["_pot"] == trunc).all()
            assert (infos["final_info"]["pot"][trunc] > limits.POT_BOUND).all()
            assert infos["_final_obs"][trunc].all()
    assert truncations > 0
    assert (venv.game.states[:, core.S_POT] <= limits.POT_BOUND + 5).all()  # truncated tables were dealt anew


def test_illegal_actions_and_bad_players_raise() -> None:
    venv = BourreVectorEnv(3, FirstLegal(), num_players=3)
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.zeros(3, dtype=np.int64))
    venv.reset(seed=0)
    illegal = np.where(venv.action_masks(), -1, np.arange(117)).max(axis=1)
    state = venv.game.states.copy()
    with pytest.raises(ValueError, match="illegal action .* learner at table 0"):
        venv.step(illegal)
    np.testing.assert_array_equal(venv.game.states, state)  # all or nothing
    for bad in (np.zeros(2, dtype=np.int64), np.zeros(3), np.zeros(3, dtype=bool)):
        with pytest.raises(ValueError, match="actions"):
            venv.step(bad)

    class Floats:
        def act_batch(self, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
            return np.argmax(masks, axis=1).astype(np.float64)

    with pytest.raises(ValueError, match="integer action ids"):
        BourreVectorEnv(3, Floats(), num_players=3).reset(seed=0)
    with pytest.raises(ValueError, match="agent_factory"):
        BourreVectorEnv(3, "heuristic", num_players=3)
    with pytest.raises(ValueError, match="1 or 2"):
        BourreVectorEnv(3, [FirstLegal()] * 3, num_players=3)


def test_agent_specs_build_batched_players_and_per_seat_agents_still_work() -> None:
    venv = BourreVectorEnv(num_envs=32, num_players=5, opponents="heuristic", agent_factory=make_batched)
    assert len({id(p) for p in venv.opponents}) == 1 and hasattr(venv.opponents[0], "act_batch")
    with pytest.warns(UserWarning, match="once per row"):
        slow = BourreVectorEnv(num_envs=4, num_players=5, opponents="heuristic", agent_factory=agents.make)
    assert isinstance(slow.opponents[0], PerRowPlayer)
    for env in (venv, slow):
        env.reset(seed=1)
        for _ in range(30):
            env.step(env.action_masks().argmax(axis=1))
    assert isinstance(make_batched("random", 0), BatchedRandomPlayer)
    assert isinstance(make_batched("ppo", 0), BatchedPolicyPlayer)
    with pytest.raises(ValueError):
        make_batched("nonsense")


def test_batched_players_play_legal_actions_like_their_per_seat_agents() -> None:
    venv = BourreVectorEnv(16, FirstLegal(), num_players=4)
    obs, infos = venv.reset(seed=2)
    masks = infos["action_mask"].astype(np.int8)
    rows = np.arange(16)
    picks = BatchedRandomPlayer(0).act_batch(obs, masks, rows)
    assert masks[rows, picks].all()
    many = np.repeat(masks, 3000, axis=0)  # the random player reads the masks only
    draws = BatchedRandomPlayer(1).act_batch(np.zeros((many.shape[0], 1), np.float32), many, np.arange(many.shape[0]))
    draws = draws.reshape(16, 3000).T
    for b in rows:  # every legal action turns up, and nothing else
        assert set(draws[:, b]) == set(np.flatnonzero(masks[b]))
    ppo = make_batched("ppo", 0)
    reference = agents.make("ppo", 0)
    expected = [reference.act({"observation": obs[b], "action_mask": masks[b]}) for b in rows]
    np.testing.assert_array_equal(ppo.act_batch(obs, masks, rows), expected)
    sampled = BatchedPolicyPlayer(ppo.policy, seed=0, sample=True).act_batch(obs, masks, rows)
    assert masks[rows, sampled].all()


def test_gymnasium_vector_conventions() -> None:
    from gymnasium.vector import AutoresetMode

    venv = BourreVectorEnv(8, FirstLegal(), num_players=5)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, infos = venv.reset(seed=5)
    assert obs in venv.observation_space and venv.action_space.shape == (8,)
    again, _ = BourreVectorEnv(8, FirstLegal(), num_players=5).reset(seed=5)
    np.testing.assert_array_equal(obs, again)  # seeded
    obs, rewards, term, trunc, infos = venv.step(venv.action_masks().argmax(axis=1))
    assert obs in venv.observation_space
    assert rewards.dtype == np.float32 and term.dtype == trunc.dtype == np.bool_ and rewards.shape == (8,)
    venv.close()


def test_cleanrl_example_runs_in_a_subprocess() -> None:
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    import bourre_env

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    model = Path(tempfile.mkdtemp()) / "model.npz"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "train.examples.cleanrl_ppo",
            "--num-envs",
            "16",
            "--num-steps",
            "8",
            "--hidden",
            "16",
            "--total-timesteps",
            "250",  # not a whole number of rollouts: rounded up to 256
            "--model-path",
            str(model),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "iteration 2/2 step 256" in done.stdout and "losses/value_loss" in done.stdout
    assert "requires_grad" not in done.stderr
    assert f"bourre eval --candidate ppo:{model}" in done.stdout
    played = agents.make(f"ppo:{model}")  # the saved actor plays: the evaluation takes it
    obs = bourre_env.env(num_players=5)
    obs.reset(seed=0)
    first = obs.last()[0]
    assert first["action_mask"][played.act(first)] == 1


def test_cleanrl_example_saves_its_actor_on_ctrl_c(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    model = tmp_path / "model.npz"
    command = [sys.executable, "-m", "train.examples.cleanrl_ppo", "--num-envs", "16", "--num-steps", "8"]
    command += ["--hidden", "16", "--total-timesteps", "100000000", "--model-path", str(model)]
    proc = subprocess.Popen(
        command,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root), "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # trains: its first iteration is done
        if line.startswith("iteration 1/"):
            break
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out[-2000:]
    assert "interrupted at step" in out and f"wrote {model}" in out
    assert agents.make(f"ppo:{model}").name == f"ppo:{model}"


class ObservationPathHeuristic:
    """A ``BatchedHeuristicPlayer`` made to take the observation path (``act_batch``) only."""

    def __init__(self, seed: int) -> None:
        self.player = make_batched("heuristic", seed)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return self.player.act_batch(observations, masks, rows)


@pytest.mark.parametrize(
    "config", [{"num_players": 5}, {"num_players": 3, "deals_per_episode": 3, "rules": "dealer_picks_trump"}]
)
def test_the_heuristic_state_path_decides_as_its_observation_path(config: dict) -> None:
    """``act_game`` (observe and decide in one compiled call) against ``act_batch`` on the env's observations:
    the same tables, step for step, with the same tie-break numbers."""
    fast = BourreVectorEnv(48, make_batched("heuristic", 4), **config)
    slow = BourreVectorEnv(48, ObservationPathHeuristic(4), **config)
    assert hasattr(fast.opponents[0], "act_game") and not hasattr(slow.opponents[0], "act_game")
    obs, _ = fast.reset(seed=9)
    np.testing.assert_array_equal(slow.reset(seed=9)[0], obs)
    learner = BatchedRandomPlayer(2)
    for _ in range(80):
        masks = fast.action_masks().astype(np.int8)
        actions = learner.act_batch(obs, masks, np.arange(48))
        obs, rewards, term, trunc, _ = fast.step(actions)
        s_obs, s_rewards, s_term, s_trunc, _ = slow.step(actions)
        np.testing.assert_array_equal(obs, s_obs)
        np.testing.assert_array_equal(rewards, s_rewards)
        assert (term == s_term).all() and (trunc == s_trunc).all()
        np.testing.assert_array_equal(fast.game.states, slow.game.states)


def test_compiled_state_path_matches_the_batch_on_many_positions() -> None:
    """``BatchHeuristic.act_at`` on ``BatchGame`` rows equals ``act`` on their observations, tie-breaks given."""
    for config in (
        {"num_players": 2},
        {"num_players": 6, "rules": "two_round_declaration"},
        {"num_players": 8, "deals_per_episode": 2},
    ):
        game = batch.BatchGame(256, seed=1, **config)
        bot = BatchHeuristic("tight", seed=0)
        rng = np.random.default_rng(0)
        for _ in range(40):
            rows = np.flatnonzero(rng.random(256) < 0.7)
            u = rng.random(rows.shape[0])
            expected = bot.act(game.observations()[rows], game.legal_masks()[rows], tie_breaks=u)
            np.testing.assert_array_equal(bot.act_at(game.states, game.params, rows, game.scratch, u), expected)
            game.step(bot.act(game.observations(), game.legal_masks()))
    with pytest.raises(ValueError, match="rows"):
        bot.act_at(game.states, game.params, np.array([256]), game.scratch)


class Recorder:
    """Plays the first legal action and records, per call, the rows it was given and their seats to act."""

    def __init__(self, env_ref: list) -> None:
        self.env_ref, self.calls = env_ref, []

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
        g = self.env_ref[0].game
        self.calls.append((rows.copy(), g.states[rows, core.S_CUR].copy()))
        return np.argmax(masks, axis=1)


def test_opponent_pool_draws_per_seat_and_deal_and_can_be_replaced() -> None:
    ref: list = []
    members = [Recorder(ref) for _ in range(3)]
    venv = BourreVectorEnv(64, members, opponent_weights=[0.6, 0.3, 0.1], num_players=5)
    ref.append(venv)
    venv.reset(seed=0)
    decisions = np.zeros(3)
    for _ in range(150):
        before = venv._drawn.copy()
        for m in members:
            m.calls.clear()
        _, _, term, trunc, _ = venv.step(venv.action_masks().argmax(axis=1))
        kept = ~(term | trunc)  # one deal per episode: no deal began at these tables during the step
        np.testing.assert_array_equal(venv._drawn[kept], before[kept])
        for i, m in enumerate(members):
            for rows, cur in m.calls:
                assert len(set(rows.tolist())) == len(rows)  # one call per round: each table once
                ended_rows = ~kept[rows]
                rel = (cur - venv.seats[rows]) % 5
                assert (before[rows[~ended_rows], rel[~ended_rows]] == i).all()
                decisions[i] += len(rows)
    shares = decisions / decisions.sum()
    np.testing.assert_allclose(shares, [0.6, 0.3, 0.1], atol=0.05)
    # a new pool from the next deals on: the deals under way finish with the members they drew
    newcomer = Recorder(ref)
    venv.set_opponents([newcomer], opponent_weights=[1.0])
    assert newcomer in venv._members and len(venv._members) > 1
    under_way = np.ones(64, dtype=bool)
    for _ in range(60):
        _, _, term, trunc, _ = venv.step(venv.action_masks().argmax(axis=1))
        under_way &= ~(term | trunc)
    assert not under_way.any()
    assert (venv._drawn[:, 1:] == venv._members.index(newcomer)).all()
    for m in members:
        m.calls.clear()
    for _ in range(5):
        venv.step(venv.action_masks().argmax(axis=1))
    assert newcomer.calls and not any(m.calls for m in members)
    with pytest.raises(ValueError, match="opponent_weights"):
        venv.set_opponents([newcomer], opponent_weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="opponent_weights"):
        venv.set_opponents([newcomer, FirstLegal()], opponent_weights=[0.0, 0.0])


def test_a_pool_of_one_weighted_member_is_that_player_at_every_seat() -> None:
    one = BourreVectorEnv(16, FirstLegal(), num_players=4)
    pool = BourreVectorEnv(16, [FirstLegal(), BatchedRandomPlayer(0)], opponent_weights=[1.0, 0.0], num_players=4)
    a, _ = one.reset(seed=3)
    np.testing.assert_array_equal(pool.reset(seed=3)[0], a)
    for _ in range(40):
        actions = one.action_masks().argmax(axis=1)
        a, r, *_ = one.step(actions)
        b, s, *_ = pool.step(actions)
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(r, s)


@pytest.mark.parametrize("weights", [None, [0.5, 0.5]], ids=["one per seat", "pool"])
def test_a_sessions_players_sit_for_all_its_deals_and_a_new_session_draws_again(weights: list[float] | None) -> None:
    members = [FirstLegal(), BatchedRandomPlayer(0)]
    venv = BourreVectorEnv(
        32, members if weights else members[0], opponent_weights=weights, num_players=4, deals_per_episode=3
    )
    venv.reset(seed=5)
    changed_within = changed_across = 0
    for step in range(400):
        if step == 200:
            venv.set_opponents(members[1], opponent_weights=None)  # from each table's next session on
        before, deal = venv._drawn.copy(), venv.game.states[:, core.S_DEAL_NO].copy()
        _, _, term, trunc, _ = venv.step(venv.action_masks().argmax(axis=1))
        ended = term | trunc
        within = ~ended & (venv.game.states[:, core.S_DEAL_NO] != deal)  # a later deal of the same session began
        np.testing.assert_array_equal(venv._drawn[~ended], before[~ended])  # nobody leaves a session under way
        changed_within += int(within.sum())
        changed_across += int((ended & (venv._drawn != before).any(axis=1)).sum())
    assert changed_within > 0 and changed_across > 0  # both kinds of new deal happened, and new sessions redrew
    assert (venv._drawn[:, 1:] == venv._members.index(venv.opponents[0])).all()  # every table in a new session now
