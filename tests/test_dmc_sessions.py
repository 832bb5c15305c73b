"""Deep Monte-Carlo on sessions (``bourre train --trainer dmc --session K``): the self-play tables play K deals with
the pot carried, a decision's target is its seat's chips from its deal to the session's end, and the run's
evaluations are played in sessions."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from bourre_env import core, memory
from bourre_env.batch import BatchGame
from bourre_env.observation import O_DEAL, O_POT, OBS_SIZE
from train import runs
from train.dmc.actors import SelfPlay
from train.dmc.args import Args
from train.dmc.trainer import main, run
from train.learning.policy_net import PolicyNet
from train.schedule import table_rules

SESSION = 3
SCALE = 0.5


def dense(actors: SelfPlay, i: int) -> np.ndarray:
    out = np.zeros(OBS_SIZE, np.float32)
    lo, hi = actors.obs.ptr[i], actors.obs.ptr[i + 1]
    out[actors.obs.idx[lo:hi].astype(np.int64)] = actors.obs.val[lo:hi]
    return out


class StepLog:
    """Wraps a ``BatchGame``'s ``step`` to keep what the env itself said of the last step: each seat's chips for a
    deal that ended, and where an episode (a session) ended."""

    def __init__(self, game: BatchGame) -> None:
        self.real = game.step
        self.rewards = np.zeros((game.batch_size, game.num_players), np.float32)
        self.done = np.zeros(game.batch_size, np.bool_)
        game.step = self  # type: ignore[method-assign]

    def __call__(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rewards, done = self.real(actions)
        self.rewards, self.done = rewards.copy(), done.copy()
        return rewards, done


def test_a_decisions_target_is_its_seats_chips_to_the_sessions_end() -> None:
    torch.manual_seed(0)
    actors = SelfPlay(PolicyNet((16,)), (3,), 6, seed=2, epsilon=0.3, reward_scale=SCALE, session=SESSION)
    game = actors.games[0]
    assert game.rules == table_rules(3, {}, SESSION)
    log = StepLog(game)
    # per table, the session under way: its decisions (id, seat, deal) and the chips of each of its deals
    open_: dict[int, dict[str, list[Any]]] = defaultdict(lambda: {"decisions": [], "chips": []})
    sessions: list[dict[str, list[Any]]] = []
    for _ in range(500):
        deal_no = game.states[:, core.S_DEAL_NO].copy()
        seats = game.current_players()
        ids = actors.step_game(0)
        for b in range(game.batch_size):
            s = open_[b]
            s["decisions"].append((int(ids[b]), int(seats[b]), int(deal_no[b])))
            if log.done[b] or game.states[b, core.S_DEAL_NO] != deal_no[b]:
                s["chips"].append(log.rewards[b].copy())
            if log.done[b]:
                sessions.append(open_.pop(b))
    assert len(sessions) >= 6
    for s in sessions:
        assert sorted({d for _, _, d in s["decisions"]}) == list(range(len(s["chips"])))  # its deals, in order
        for i, seat, deal in s["decisions"]:
            assert actors.complete[i]
            to_the_end = sum(float(chips[seat]) for chips in s["chips"][deal:])
            assert actors.targets[i] == pytest.approx(to_the_end * SCALE, abs=1e-5)
            # the observation sees where in the session the decision stands
            assert dense(actors, i)[O_DEAL : O_DEAL + 2] == pytest.approx([deal / 10, (SESSION - 1 - deal) / 10])
    for s in open_.values():  # the decisions of sessions under way wait for their end
        assert not actors.complete[[i for i, _, _ in s["decisions"]]].any()
    assert actors.finished == sum(len(s["decisions"]) for s in sessions)
    # sessions ran their three deals, and a pot carried from a deal reached an observation (3 antes: a pot of 3)
    assert max(len(s["chips"]) for s in sessions) == SESSION
    assert max(dense(actors, i)[O_POT] * 100 for s in sessions for i, _, _ in s["decisions"]) > 3
    assert actors.stats["deals"] == sum(len(s["chips"]) for s in [*sessions, *open_.values()])
    # later deals paid something: the targets checked above are a session's, not each deal's own chips
    assert any(len(s["chips"]) > 1 and np.any(s["chips"][1] != 0) for s in sessions)


def tiny_args(run_dir: Path, **changes: object) -> Args:
    fields: dict[str, object] = {
        "seed": 1,
        "run_dir": run_dir,
        "players": (3,),
        "eval_players": (3,),
        "total_decisions": 1000,
        "tables": 16,
        "hidden": (16,),
        "rollout_decisions": 512,
        "eval_every": 1000,
        "eval_deals": 4,
        "final_eval_deals": 4,
        "eval_workers": 1,
        "progress": False,
        "session": SESSION,
        **changes,
    }
    return Args(**fields)  # type: ignore[arg-type]


def test_a_tiny_session_run_evaluates_in_sessions_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []
    real = runs.evaluate

    def recorded(*a: Any, **kw: Any) -> Any:
        seen.append(kw)
        return real(*a, **kw)

    monkeypatch.setattr(runs, "evaluate", recorded)
    run_dir = run(tiny_args(tmp_path / "run"))
    # during training (decision 0 and past 1000) in sessions, the final single-deal ones, then the final sessions
    assert [kw["session"] for kw in seen] == [SESSION, SESSION, 1, 1, SESSION, SESSION]
    assert [kw["deals"] for kw in seen] == [2, 2, 4, 4, 2, 2]  # 4 deals: 2 sessions of 3
    assert json.loads((run_dir / "args.json").read_text())["session"] == SESSION
    report = json.loads((run_dir / "report.json").read_text())
    sessions = report["final_eval_sessions"]
    assert sessions["session"] == SESSION and [r["field"] for r in sessions["reports"]] == ["random", "heuristic"]
    assert all(t["session"] == SESSION and t["deals"] == 2 for r in sessions["reports"] for t in r["tables"])
    text = (run_dir / "report.md").read_text()
    assert f"sessions of {SESSION} deals; training" in text
    assert text.index("## Final duplicate evaluation (") < text.index(f"in sessions of {SESSION} deals (seed 3)")
    # a resumed run keeps its session length; an older args.json without the field reads as single deals
    assert main(["--run-dir", str(run_dir), "--resume", "--total-decisions", "1500", "--no-progress"]) == 0
    assert json.loads((run_dir / "args.json").read_text())["session"] == SESSION
    saved = json.loads((run_dir / "args.json").read_text())
    del saved["session"]
    assert Args.from_json(saved).session == 1


def test_self_play_tables_must_play_the_session_asked_for() -> None:
    single = BatchGame(2, seed=0, num_players=3)
    with pytest.raises(ValueError, match=r"play 3 deals per episode \(session=3\), got deals_per_episode=1"):
        SelfPlay(PolicyNet((8,)), (3,), 2, seed=0, epsilon=0.1, reward_scale=1.0, games=[single], session=SESSION)
    with pytest.raises(ValueError, match=r"^session: expected a number of deals in 1\.\.10000"):
        SelfPlay(PolicyNet((8,)), (3,), 2, seed=0, epsilon=0.1, reward_scale=1.0, session=0)


def test_a_session_too_long_to_hold_in_memory_is_named_with_the_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory, "available_bytes", lambda: 8 << 30)  # a machine of 8 GiB free
    Args(session=20).validate()  # 256 tables holding sessions of 20 deals fit
    # 256 tables holding a session of 10,000 deals each: hundreds of gigabytes of decisions waiting for their targets
    assert main(["--run-dir", str(tmp_path / "run"), "--session", "10000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--tables 256 --session 10000 needs about" in err, err


@pytest.mark.parametrize("value", ["0", "10001"])
def test_bad_session_lengths_are_refused_in_one_line(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--run-dir", str(tmp_path / "run"), "--session", value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "session: expected a number of deals in 1..10000" in err, err
    assert not (tmp_path / "run" / "args.json").exists()
