"""The MaskablePPO trainer on sessions (``bourre train --trainer sb3 --session K``): every training table plays K
deals with the pot carried, the learner's episode runs through the session, and the run's evaluations are played in
sessions."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sb3_contrib.common.maskable.utils import get_action_masks

from bourre_env.core import S_DEAL_NO
from bourre_env.observation import O_DEAL, O_POT
from train import runs
from train.learning.opponent_pool import PoolWeights
from train.sb3.pool import PoolVecEnv
from train.sb3.trainer import Args, main, make_vec_env, parse_args, resolve_resume, run
from train.schedule import table_rules

SESSION = 3
SCALE = 0.1
TINY: dict[str, Any] = {
    "num_envs": 2,
    "n_steps": 32,
    "batch_size": 64,
    "n_epochs": 1,
    "hidden": (8,),
    "imitation_decisions": 0,
    "total_timesteps": 128,
    "eval_every": 64,
    "eval_deals": 4,
    "final_eval_deals": 4,
    "eval_workers": 1,
    "progress": False,
}


def test_the_learners_episode_is_a_session_of_deals_with_the_pot_carried() -> None:
    venv = make_vec_env(Args(seed=4, players=(3, 4), num_envs=6, session=SESSION, reward_scale=SCALE))
    try:
        assert [e.rules for e in venv.envs] == [table_rules(n, {}, SESSION) for n in (3, 4)]
        venv.seed(4)
        obs = venv.reset()
        rng = np.random.default_rng(0)
        seen: dict[int, list[tuple[float, float]]] = defaultdict(list)  # table -> (deal, deals left) of each decision
        episodes: list[tuple[list[tuple[float, float]], int]] = []
        paid_within = 0  # rewards paid on a step that does not end the episode: a deal of the session settled
        pots = []
        for _ in range(1500):
            for i in range(venv.num_envs):
                seen[i].append((float(obs[i, O_DEAL]), float(obs[i, O_DEAL + 1])))
            pots.append(obs[:, O_POT].max() * 100)
            masks = get_action_masks(venv)
            obs, rewards, dones, infos = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
            paid_within += int(np.count_nonzero(rewards[~dones]))
            for i in np.flatnonzero(dones):
                assert infos[i]["TimeLimit.truncated"] is False
                episodes.append((seen.pop(i), infos[i]["episode"]["l"]))
        assert len(episodes) >= 6 and paid_within > 0
        expected = [pytest.approx((d / 10, (SESSION - 1 - d) / 10)) for d in range(SESSION)]
        for decisions, length in episodes:
            assert length == len(decisions)  # one episode, every decision of the session
            deals = [d for i, d in enumerate(decisions) if i == 0 or d != decisions[i - 1]]
            assert deals == expected  # the observation walks through the session's deals in order
        assert max(pots) > 4  # a pot carried from a deal: more than the antes of a table of 3 or 4
    finally:
        venv.close()


@pytest.mark.parametrize("session", [1, SESSION])
def test_the_opponents_drawn_at_a_sessions_start_play_all_its_deals(session: int) -> None:
    # snapshots weigh nothing until the first: half the seats draw the heuristic, half the random agent
    venv = PoolVecEnv(32, PoolWeights(0.5, 0.5, 0.0), seed=7, num_players=(3,), session=session)
    try:
        env = venv.env
        venv.seed(7)
        venv.reset()
        rng = np.random.default_rng(1)
        redrawn = deals_ended = 0
        for _ in range(400):
            before, deal = env._drawn.copy(), env.game.states[:, S_DEAL_NO].copy()
            masks = get_action_masks(venv)
            _, _, dones, _ = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
            within = ~dones & (env.game.states[:, S_DEAL_NO] != deal)  # a later deal of the same session began
            np.testing.assert_array_equal(env._drawn[~dones], before[~dones])  # seated for the whole session
            deals_ended += int(within.sum() + dones.sum())
            redrawn += int((env._drawn[dones] != before[dones]).any(axis=1).sum())
        assert deals_ended > 300 and redrawn > 0.4 * int(deals_ended / session)  # each new session draws anew
    finally:
        venv.close()


def test_a_tiny_session_run_evaluates_in_sessions_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []
    real = runs.evaluate

    def recorded(*a: Any, **kw: Any) -> Any:
        seen.append(kw)
        return real(*a, **kw)

    monkeypatch.setattr(runs, "evaluate", recorded)
    run_dir = run(Args(run_dir=tmp_path / "run", seed=2, players=(3,), eval_players=(3,), session=SESSION, **TINY))
    # during training (steps 64, 128) in sessions, the final single-deal ones, then the final ones in sessions
    assert [kw["session"] for kw in seen] == [SESSION, SESSION, 1, 1, SESSION, SESSION]
    assert [kw["deals"] for kw in seen] == [2, 2, 4, 4, 2, 2]  # 4 deals: 2 sessions of 3
    report = json.loads((run_dir / "report.json").read_text())
    sessions = report["final_eval_sessions"]
    assert sessions["session"] == SESSION and [r["field"] for r in sessions["reports"]] == ["random", "heuristic"]
    assert all(t["session"] == SESSION and t["deals"] == 2 for r in sessions["reports"] for t in r["tables"])
    text = (run_dir / "report.md").read_text()
    assert text.index("## Final duplicate evaluation (") < text.index(f"in sessions of {SESSION} deals (seed 4)")
    # a resumed run keeps its session length; an older args.json without the field reads as single deals
    args, given = parse_args(["--run-dir", str(run_dir), "--resume"])
    assert resolve_resume(args, given).session == SESSION
    saved = json.loads((run_dir / "args.json").read_text())
    assert saved["session"] == SESSION
    del saved["session"]
    assert Args.from_json(saved).session == 1


@pytest.mark.parametrize("value", ["0", "10001"])
def test_bad_session_lengths_are_refused_in_one_line(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--run-dir", str(tmp_path / "run"), "--session", value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "session: expected a number of deals in 1..10000" in err, err
    assert not (tmp_path / "run" / "args.json").exists()
