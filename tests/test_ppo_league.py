"""The trainer's league (train.ppo.league): field tables, prioritised fictitious self-play, the draw left alone."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from run_helpers import bourre_train, tensorboard_tags
from test_batched_train import TINY_FLAGS, Replay

from train.learning.policy_net import PolicyNet
from train.ppo.args import Args
from train.ppo.league import LEAGUE, League, parse_members
from train.ppo.rollout import LEARNER, Collector, SeatPool
from train.ppo.workers import RolloutWorker, WorkerConfig, network_weights


def test_every_field_table_holds_one_learner_and_one_member() -> None:
    league = League(["random", "heuristic"], share=1.0, seed=0)
    owners = SeatPool().draw(np.random.default_rng(0), 500, 5, snapshots=0)
    rows = league.seat(owners, LEARNER)
    assert len(rows) == 500
    assert ((owners == LEARNER).sum(axis=1) == 1).all()
    field = np.where(owners == LEARNER, -1, owners).max(axis=1)
    assert ((owners == LEARNER) | (owners == field[:, None])).all()
    assert set(np.unique(field)) == {LEAGUE, LEAGUE + 1}


def test_a_share_of_the_tables_becomes_field_tables_and_the_rest_is_untouched() -> None:
    league = League(["random"], share=0.3, seed=1)
    owners = SeatPool().draw(np.random.default_rng(0), 4000, 4, snapshots=0)
    before = owners.copy()
    rows = league.seat(owners, LEARNER)
    assert 0.27 < len(rows) / 4000 < 0.33
    others = np.setdiff1d(np.arange(4000), rows)
    np.testing.assert_array_equal(owners[others], before[others])
    assert League(["random"], share=0.0, seed=1).seat(before.copy(), LEARNER).size == 0


def test_pfsp_draws_the_fields_that_beat_the_learner_more_often() -> None:
    league = League(["random", "heuristic"], share=1.0, seed=0, decay=1.0)
    owners = np.array([[LEARNER, LEAGUE, LEAGUE], [LEARNER, LEAGUE + 1, LEAGUE + 1]] * 50)
    chips = np.array([[3.0, -1.0, -2.0], [-2.0, 1.0, 1.0]] * 50)  # beats random's field, loses to the heuristic's
    members, results = league.record(owners, chips, LEARNER)
    np.testing.assert_array_equal(results, [1.0, 0.0] * 50)
    rates, weights = league.win_rates(), league.weights()
    assert rates[0] == pytest.approx(51 / 52) and rates[1] == pytest.approx(1 / 52)
    assert weights[1] > 10 * weights[0] and weights.sum() == pytest.approx(1.0)
    owners = np.zeros((3000, 3), np.int64)
    league.seat(owners, LEARNER)
    met = np.bincount(owners.max(axis=1) - LEAGUE, minlength=2)
    assert met[1] > 5 * met[0] > 0  # drawn by weight, the beaten field still met
    level = League(["random"], share=1.0, seed=0)
    level.record(np.array([[LEAGUE, LEARNER]]), np.array([[1.0, 1.0]]), LEARNER)
    assert level.win_rates()[0] == pytest.approx(0.5)  # a tie counts half
    assert league.summary()["heuristic"]["deals"] == 50


def test_records_decay_so_the_rates_follow_the_learner() -> None:
    owners = np.array([[LEARNER, LEAGUE]] * 200)
    rates = []
    for decay in (0.9, 1.0):
        league = League(["random"], share=1.0, seed=0, decay=decay)
        league.record(owners, np.array([[-1.0, 1.0]] * 200), LEARNER)  # 200 deals lost, then 200 won
        league.record(owners, np.array([[1.0, -1.0]] * 200), LEARNER)
        rates.append(league.win_rates()[0])
    assert rates[0] > 0.9 and rates[1] == pytest.approx(0.5)  # with decay the old losses have faded


def test_bad_members_and_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="named twice"):
        parse_members("random, random")
    with pytest.raises(ValueError, match="comma-separated"):
        parse_members("random,,heuristic")
    with pytest.raises(ValueError, match="share"):
        League(["random"], share=1.5, seed=0)
    with pytest.raises(ValueError, match="league"):
        Args(league=("no-such-agent-xyz",)).validate()
    with pytest.raises(ValueError, match="opponent_policy"):
        Args(league=("random",), opponent_policy=Path("x.npz")).validate()


def test_a_collector_without_a_league_draws_as_one_whose_league_is_never_used() -> None:
    """The league draws from a generator of its own: with share 0 every seat, action and reward is as without."""

    def records(league: League | None) -> list[np.ndarray]:
        collector = Collector(PolicyNet((16,)), (3, 5), 8, SeatPool(), seed=4, reward_scale=0.1, league=league)
        out = []
        for _ in range(60):
            for k in range(len(collector.games)):
                rec = collector.step_game(k)
                out += [rec.owners, rec.actions, rec.rewards]
        return out

    for a, b in zip(records(None), records(League(["random"], share=0.0, seed=9)), strict=True):
        np.testing.assert_array_equal(a, b)


def test_field_tables_are_played_by_their_members_and_recorded() -> None:
    """The learner's transitions at field tables equal an AEC replay of the same deals (legal moves, rewards, links)."""
    league = League(["random", "heuristic"], share=1.0, seed=2)
    collector = Collector(PolicyNet((16,)), (3,), 8, SeatPool(), seed=5, reward_scale=0.1, league=league)
    replay = Replay(collector, 0.1)
    owners_seen: set[int] = set()
    for _ in range(300):
        replay.step(0)
        owners_seen |= {int(o) for o in collector.owners[0].ravel()}
    replay.check()
    assert owners_seen == {LEARNER, LEAGUE, LEAGUE + 1}
    assert league.met.sum() == sum(v for k, v in collector.stats.items() if k.startswith("league_deals:")) > 0


def test_a_tiny_run_trains_against_a_league(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = bourre_train(
        "--run-dir",
        str(run_dir),
        "--total-timesteps",
        "768",
        "--players",
        "3",
        *TINY_FLAGS,
        "--league",
        "random",
        "style:eager-low",
        "--league-share",
        "0.8",
    )
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out
    assert json.loads((run_dir / "args.json").read_text())["league"] == ["random", "style:eager-low"]
    tags = tensorboard_tags(run_dir / "tb")
    assert {"league/random", "league/style:eager-low"} <= tags


def test_a_rollout_worker_plays_its_league_and_reports_its_fields() -> None:
    config = WorkerConfig(
        index=0,
        hidden=(32, 16),
        privileged_critic=False,
        players=(3,),
        tables=8,
        pool=SeatPool(),
        seed=3,
        reward_scale=0.1,
        league=("random", "heuristic"),
        league_share=1.0,
    )
    worker = RolloutWorker(config)
    rollout = worker.rollout(network_weights(PolicyNet((32, 16))), [], 200)
    deals = {k: v for k, v in rollout.stats.items() if k.startswith("league_deals:")}
    assert set(deals) <= {"league_deals:random", "league_deals:heuristic"} and sum(deals.values()) > 0
    assert all(0 <= rollout.stats[k.replace("deals", "wins")] <= v for k, v in deals.items())
