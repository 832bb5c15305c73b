"""The batched trainer on sessions (``bourre train --session K``): each rollout table plays K deals with the pot
carried, a seat's trajectory runs through the whole session (rewards credited deal by deal, ``done`` at the session's
end), GAE runs across deals and is cut at the rollout's end, and the run's evaluations are played in sessions."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from run_helpers import bourre_train
from test_batched_train import TINY, TINY_FLAGS, dense_observation

from bourre_env import core
from bourre_env.observation import O_DEAL, O_POT
from train import runs
from train.learning.policy_net import PolicyNet
from train.ppo.rollout import LEARNER, Collector, SeatPool, gae
from train.ppo.trainer import Args, parse_args, resolve_resume, run
from train.ppo.workers import ReceivedBatch, RolloutWorker, WorkerConfig, network_weights

SESSION = 3
SCALE = 0.1


class SessionLog:
    """Steps a collector on sessions and writes down, from the env's own state, what each learner seat's trajectory
    must be: its decisions in order with their deal, the chips of every deal, the chip change over the session."""

    def __init__(self, collector: Collector) -> None:
        self.collector = collector
        self.open: dict[tuple[int, int], dict[str, Any]] = {}  # (game, table) -> the session under way
        self.sessions: list[dict[str, Any]] = []  # finished sessions
        for k, game in enumerate(collector.games):
            for b in range(game.batch_size):
                self._start(k, b)

    def _start(self, k: int, b: int) -> None:
        self.open[k, b] = {
            "owners": self.collector.owners[k][b].copy(),
            "decisions": defaultdict(list),  # seat -> [(decision, deal)]
            "deal_chips": [],  # per deal: the chips of every seat
            "deal": 0,
            "ids_at_start": self.collector.transitions.n,
        }

    def step(self) -> None:
        for k, game in enumerate(self.collector.games):
            chips_before = game.states[:, core.S_CHIPS : core.S_CHIPS + game.num_players].copy()
            rec = self.collector.step_game(k)
            ids = dict(zip(rec.learner_rows.tolist(), rec.learner_ids.tolist(), strict=True))
            for b in range(game.batch_size):
                s = self.open[k, b]
                if b in ids:
                    s["decisions"][int(rec.seats[b])].append((ids[b], s["deal"]))
                if not rec.deal_over[b]:
                    assert not np.any(rec.rewards[b])
                    np.testing.assert_array_equal(self.collector.owners[k][b], s["owners"])
                    continue
                s["deal_chips"].append(rec.rewards[b].copy())
                if rec.done[b]:  # the session's end: its chip change is the chips of its earlier deals plus these
                    s["session_chips"] = chips_before[b] + rec.rewards[b]
                    self.sessions.append(s)
                    self._start(k, b)
                else:  # a deal of the session: the env's running chip count moved by exactly these chips
                    now = game.states[b, core.S_CHIPS : core.S_CHIPS + game.num_players]
                    np.testing.assert_array_equal(now - chips_before[b], rec.rewards[b])
                    np.testing.assert_array_equal(self.collector.owners[k][b], s["owners"])  # the same players
                    s["deal"] += 1


def session_collector(tables: int = 8, seed: int = 3, players: tuple[int, ...] = (3, 5)) -> Collector:
    torch.manual_seed(0)
    return Collector(
        PolicyNet((16,)), players, tables, SeatPool(1.0, 1.0, 0.5, 0.0), seed=seed, reward_scale=SCALE, session=SESSION
    )


def test_a_seats_trajectory_runs_through_the_session() -> None:
    collector = session_collector()
    assert all(g.rules.deals_per_episode == SESSION for g in collector.games)
    log = SessionLog(collector)
    for _ in range(600):
        log.step()
    t = collector.transitions
    assert len(log.sessions) > 10
    crossings = 0
    for s in log.sessions:
        assert len(s["deal_chips"]) <= SESSION
        learner_seats = set(np.flatnonzero(s["owners"] == LEARNER).tolist())
        assert set(s["decisions"]) == learner_seats  # every learner seat acts, only they are recorded
        for seat, decisions in s["decisions"].items():
            ids = [i for i, _ in decisions]
            deals = [d for _, d in decisions]
            assert deals == sorted(deals) and set(deals) == set(range(len(s["deal_chips"])))
            # linked in order across the deals; done only at the session's last decision
            assert t.next[ids[:-1]].tolist() == ids[1:] and t.next[ids[-1]] == -1
            assert t.done[ids].tolist() == [False] * (len(ids) - 1) + [True]
            crossings += sum(a != b for a, b in zip(deals, deals[1:], strict=False))
            # each deal's chips on the seat's last decision of that deal, nothing elsewhere
            expected = np.zeros(len(ids), np.float32)
            for d, chips in enumerate(s["deal_chips"]):
                expected[max(j for j, deal in enumerate(deals) if deal == d)] += np.float32(chips[seat] * SCALE)
            np.testing.assert_allclose(t.rewards[ids], expected, rtol=1e-6, atol=1e-6)
            # and the session's rewards sum to the seat's chip change over the session
            assert t.rewards[ids].sum() == pytest.approx(s["session_chips"][seat] * SCALE, abs=1e-4)
            # the observations see where in the session they stand
            for i, deal in decisions:
                obs = dense_observation(t, i)
                assert obs[O_DEAL : O_DEAL + 2] == pytest.approx([deal / 10, (SESSION - 1 - deal) / 10])
    assert crossings > 0
    # a carried pot reaches the observations: some learner decisions see more than the antes of one table
    pots = np.array([dense_observation(t, i)[O_POT] * 100 for i in range(0, t.n, 7)])
    assert pots.max() > 8
    # the running figures count deals, not sessions
    finished = sum(len(s["deal_chips"]) for s in log.sessions)
    assert collector.stats["deals"] == finished + sum(s["deal"] for s in log.open.values())


def test_single_deal_collectors_are_unchanged() -> None:
    torch.manual_seed(0)
    collector = Collector(PolicyNet((16,)), (5,), 4, SeatPool(), seed=1, reward_scale=SCALE)
    assert collector.session == 1 and collector.games[0].rules.deals_per_episode == 1
    for _ in range(50):
        rec = collector.step_game(0)
        np.testing.assert_array_equal(rec.deal_over, rec.done)
    with pytest.raises(ValueError, match="session"):
        Collector(PolicyNet((16,)), (5,), 4, SeatPool(), seed=1, reward_scale=SCALE, session=0)
    with pytest.raises(ValueError, match="deals_per_episode"):
        Collector(PolicyNet((16,)), (5,), 4, SeatPool(), 1, SCALE, rule_options={"deals_per_episode": 2})


def test_gae_across_deals_is_cut_at_the_rollouts_end() -> None:
    # seat A: 0 -> 2 -> 4 (4: the seat's latest, no successor yet); seat B: 1 -> 3 (done); seat C: 5 (cut by a worker)
    next_ = np.array([2, 3, 4, -1, -1, -1])
    done = np.array([0, 0, 0, 1, 0, 0], bool)
    rewards = np.array([0.0, 0.0, 0.5, -1.0, 0.0, 0.25], np.float32)
    values = np.array([0.5, 0.1, 0.7, -0.2, 1.5, 0.3], np.float32)
    bootstrap = np.array([np.nan] * 5 + [2.0], np.float32)
    gamma, lam = 0.9, 0.8
    # without truncation (single deals) A's decisions wait for their return
    _, _, complete = gae(next_, done, rewards, values, gamma, lam)
    assert complete.tolist() == [False, True, False, True, False, False]
    advantages, returns, complete = gae(next_, done, rewards, values, gamma, lam, truncate=True, bootstrap=bootstrap)
    assert complete.tolist() == [True, True, True, True, False, True]
    cut = rewards[2] + gamma * values[4] - values[2]
    assert advantages[2] == pytest.approx(cut)
    assert advantages[0] == pytest.approx(rewards[0] + gamma * values[2] - values[0] + gamma * lam * cut)
    assert advantages[5] == pytest.approx(rewards[5] + gamma * 2.0 - values[5])
    assert advantages[4] == 0.0
    np.testing.assert_allclose(returns[complete], (advantages + values)[complete], rtol=1e-6)


def test_an_update_uses_all_but_each_seats_latest_decision() -> None:
    collector = session_collector()
    collector.collect(400)
    advantages, _, complete = collector.complete(1.0, 0.95)
    latest = np.concatenate([last[last >= 0] for last in collector.last])
    t = collector.transitions
    assert not complete[latest].any() and complete.sum() == t.n - len(latest)
    new_index = collector.carry_over(complete)
    assert t.n == len(latest) and (new_index[latest] >= 0).all() and t.stale[: t.n].all()
    collector.refresh_stale_values()
    collector.collect(400)  # the kept decisions link on to their seats' next ones
    assert (t.next[: len(latest)] >= 0).all()


def test_a_workers_rollout_gives_the_updates_advantages_of_one_process() -> None:
    """A rollout worker sends the decisions the one-process collector would use, the ones cut at the rollout's end
    with their successors' values: the learner's GAE over them is the collector's."""
    players, tables, seed = (3, 5), 8, 11
    collector = Collector(PolicyNet((16,)), players, tables, SeatPool(1.0, 1.0, 0.5, 0.0), seed, SCALE, session=SESSION)
    config = WorkerConfig(0, (16,), False, players, tables, SeatPool(1.0, 1.0, 0.5, 0.0), seed, SCALE, session=SESSION)
    worker = RolloutWorker(config)
    weights = network_weights(collector.net)
    for _ in range(2):
        sent = worker.rollout(weights, [], 300)
        collector.refresh_stale_values()
        collector.collect(300)
        expected, returns, complete = collector.complete(1.0, 0.95)
        assert sent.bootstrap is not None and np.isfinite(sent.bootstrap).sum() > 0
        batch = ReceivedBatch([sent], hidden_hands=False)
        got, got_returns, got_complete = batch.complete(1.0, 0.95)
        assert got_complete.all() and len(got) == complete.sum()
        np.testing.assert_allclose(got, expected[complete], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got_returns, returns[complete], rtol=1e-5, atol=1e-6)
        collector.carry_over(complete)


def test_a_tiny_session_run_trains_evaluates_in_sessions_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, Any]] = []
    real = runs.evaluate

    def recorded(*a: Any, **kw: Any) -> Any:
        seen.append(kw)
        return real(*a, **kw)

    monkeypatch.setattr(runs, "evaluate", recorded)
    run_dir = tmp_path / "run"
    run(Args(run_dir=run_dir, total_timesteps=1024, seed=3, session=SESSION, **TINY))  # type: ignore[arg-type]
    # the evaluations during training (step 0, 1024) and the final ones in sessions (random, heuristic), beside
    # the final single-deal ones of every run's report
    assert [kw["session"] for kw in seen] == [SESSION, SESSION, 1, 1, SESSION, SESSION]
    assert [kw["deals"] for kw in seen if kw["session"] == SESSION] == [2, 2, 2, 2]  # 4 deals: 2 sessions of 3
    state = json.loads((run_dir / "state.json").read_text())
    assert 1024 <= state["num_timesteps"] < 1024 + 256 + 64 and len(state["evals"]) == 2
    assert json.loads((run_dir / "args.json").read_text())["session"] == SESSION
    report = json.loads((run_dir / "report.json").read_text())
    sessions = report["final_eval_sessions"]
    assert sessions["session"] == SESSION and [r["field"] for r in sessions["reports"]] == ["random", "heuristic"]
    assert all(t["session"] == SESSION and t["deals"] == 2 for r in sessions["reports"] for t in r["tables"])
    text = (run_dir / "report.md").read_text()
    assert f"## Final duplicate evaluation in sessions of {SESSION} deals (seed 5)" in text
    assert "chips left in the pot at a session's end" in text
    assert text.index("## Final duplicate evaluation (") < text.index("in sessions of") < text.index("## Learning")
    # a resumed run keeps its session length; an older args.json without the field reads as single deals
    args, given = parse_args(["--run-dir", str(run_dir), "--resume"])
    assert resolve_resume(args, given).session == SESSION
    saved = json.loads((run_dir / "args.json").read_text())
    del saved["session"]
    assert Args.from_json(saved).session == 1


def test_bourre_train_session_end_to_end(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = bourre_train(
        "--run-dir", str(run_dir), "--total-timesteps", "512", "--seed", "4", "--session", "3", *TINY_FLAGS
    )
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out
    assert json.loads((run_dir / "args.json").read_text())["session"] == 3
    assert (run_dir / "model.npz").is_file() and (run_dir / "checkpoint.pt").is_file()
    assert "sessions of 3 deals" in (run_dir / "report.md").read_text()
    assert "chips left in the pot at a session's end" in out


@pytest.mark.parametrize("value", [0, -2, 10_001])
def test_bad_session_lengths_are_refused(value: int, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^session: expected a number of deals in 1\.\.10000"):
        Args(session=value).validate()
    saved = {**json.loads(json.dumps(Args(run_dir=tmp_path).to_json())), "session": value}
    with pytest.raises(ValueError, match="args.json: session"):
        Args.from_json(saved)


def test_the_rule_deals_per_episode_points_at_session() -> None:
    with pytest.raises(ValueError, match=r"^rule: deals_per_episode: .*give --session instead"):
        Args(rule=("deals_per_episode=3",)).validate()
    assert parse_args(["--session", "20"]) == (Args(session=20), {"session"})


def test_the_session_section_is_set_apart_from_the_table_above_it() -> None:
    from train.runs import with_section

    section = ["## Final duplicate evaluation in sessions of 3 deals (seed 2)", "", "| a |", "|---|"]
    without_curve = with_section("# Report\n\n| field | x |\n|---|---|\n| heuristic | 1 |\n", section)
    assert "| heuristic | 1 |\n\n## Final duplicate evaluation in sessions" in without_curve
    with_curve = with_section("# Report\n\n| t |\n|---|\n\n## Learning curve\n\nrows\n", section)
    assert with_curve.index("## Final duplicate") < with_curve.index("## Learning curve")
    assert "|---|\n\n## Final duplicate" in with_curve and "|---|\n\n## Learning curve" in with_curve
