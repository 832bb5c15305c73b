"""Tournaments in sessions: ``tournament(..., session=K)`` and ``bourre eval --tournament ... --session K`` play each
game as a session of ``K`` deals at one table with the pot carried (``train.eval.tournament``, Sessions)."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
import bourre_env
from agents.base import Observation, legal_actions
from train import cli
from train import schedule as sched
from train.eval import tournament as tm
from train.table import CHIPS, NUM_OUTCOMES, PLAYED

POOL = ["random", "heuristic", "style:eager-low"]


class _HashAgent:
    """Deterministic and seat-blind (the action a hash of the observation): copies of it play alike from any
    seat, whatever their seeds."""

    name = "test_session_hash"

    def act(self, observation: Observation) -> int:
        legal = legal_actions(observation)
        return int(legal[zlib.crc32(observation["observation"].tobytes()) % legal.size])

    def reset(self) -> None:
        pass


# Registered in this process only: the tests that use it run with workers=1.
agents.register("test_session_hash", lambda variant, seed: _HashAgent())


def test_the_pot_left_is_shared_by_the_table_by_hand() -> None:
    """2 players, agents a and b, one session of 10 deals: each seat's session chips are its chip change plus half
    the pot its table left; rates are per seat and deal played."""
    lineups = np.array([[0, 1]])
    outcomes = np.zeros((1, 2, 2, NUM_OUTCOMES), dtype=np.int64)
    outcomes[0, 0, :, CHIPS] = [3, -7]  # rotation 0 (member order) left 4 in the pot
    outcomes[0, 1, :, CHIPS] = [-2, -2]  # rotation 1 left 4
    baseline = np.zeros((1, 2, NUM_OUTCOMES), dtype=np.int64)
    baseline[0, :, CHIPS] = [-1, -1]  # the all-baseline table left 2
    pots = np.array([[4, 4, 2]])
    played = np.array([[10, 7, 10]])  # rotation 1 was cut after 7 deals
    t = tm.TournamentTable.of(["a", "b"], lineups, outcomes, baseline, pots=pots, played=played, session=10)
    result = {r.name: r for r in t.agents}
    # a: (3 + 2) + (-2 + 2) over 2 seats and 10 deals; b: (-7 + 2) + (-2 + 2)
    assert result["a"].chips == 0.25 and result["b"].chips == -0.25
    assert t.baseline_chips == 0.0  # conserved once the pot is shared
    assert result["a"].replacement_advantage == 0.25 and result["b"].replacement_advantage == -0.25
    assert t.margin[0][1] == 0.5 and t.margin[1][0] == -0.5
    assert t.session == 10 and t.sessions_cut == 1 and t.pot_left == pytest.approx(10 / 3)
    outcomes[0, :, 0, PLAYED] = [10, 7]  # a played every deal it sat: 10 in rotation 0, 7 in rotation 1
    again = tm.TournamentTable.of(["a", "b"], lineups, outcomes, baseline, pots=pots, played=played, session=10)
    assert next(r for r in again.agents if r.name == "a").play_rate == 1.0
    # single deals keep the older accounting: the pot left is chips lost
    single = tm.TournamentTable.of(["a", "b"], lineups, outcomes, baseline, pots=pots)
    assert {r.name: r.chips for r in single.agents} == {"a": 0.5, "b": -4.5}
    assert single.session == 1 and single.pot_left is None and single.session_line() is None


def test_a_session_tournament_conserves_chips_once_the_pot_is_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every table of every session sums to zero less its rake, its pot left counted; the report's chips, its
    share of the pot included, sum to the rake lost."""
    games: list[tuple[int, int, int, int]] = []  # (chips, pot left, rake, deals played) of every game played
    play_game = sched.play_game

    def watched(env: Any, *args: Any, **kwargs: Any) -> sched.GameResult:
        result = play_game(env, *args, **kwargs)
        rake = int(env.unwrapped.state_vector[bourre_env.core.S_RAKE_TOTAL])
        games.append((int(result.rows[:, CHIPS].sum()), result.pot_left, rake, result.deals_played))
        return result

    monkeypatch.setattr(tm, "play_game", watched)
    sessions, k, n = 3, 4, 3
    report = tm.tournament(
        POOL, players=n, deals=sessions, seed=3, session=k, progress=False, rule_options={"rake": 0.5}
    )
    (t,) = report.tables
    assert len(games) == sessions * (n + 1) and all(deals == k for *_, deals in games)
    assert all(chips + pot + rake == 0 for chips, pot, rake, _ in games)
    assert sum(pot for _, pot, _, _ in games) > 0 and sum(rake for _, _, rake, _ in games) > 0  # both matter here
    assert t.pot_left == pytest.approx(np.mean([pot for _, pot, _, _ in games]))
    # games go session by session: the N rotations, then the all-baseline table
    rakes = np.array([rake for _, _, rake, _ in games]).reshape(sessions, n + 1)
    # each agent held one slot of every session's lineup: its chips sum with the others' to what the tables lost
    assert sum(r.chips or 0.0 for r in t.agents) == pytest.approx(-rakes[:, :n].sum(axis=1).mean() / (n * k))
    assert t.baseline_chips == pytest.approx(-rakes[:, n].mean() / (n * k))
    assert report.session == t.session == k and t.deals == sessions and t.sessions_cut == 0
    assert all(r.matches == sessions for r in t.agents)


def test_a_session_tournament_does_not_depend_on_workers() -> None:
    """Sessions of 7 deals: two a chunk, so 3 sessions at two table sizes make 4 chunks."""
    args: dict[str, Any] = dict(pool=POOL, players=(2, 3), deals=3, seed=1, session=7, progress=False)
    one = tm.tournament(workers=1, **args)
    assert one.to_dict() == tm.tournament(workers=2, **args).to_dict()
    assert one.to_dict() != tm.tournament(workers=1, **{**args, "session": 1}).to_dict()
    # session k has deal k's lineup: the lineups drawn two sessions a chunk are those of one draw
    lineups = list(tm.iter_lineups(1, 3, 3, 5, sched.games_per_chunk(7)))
    assert [len(c) for c in lineups] == [2, 2, 1]
    assert np.array_equal(np.concatenate(lineups), tm.draw_lineups(1, 3, 3, 5))


def test_copies_of_a_deterministic_agent_match_their_par_exactly_in_sessions() -> None:
    report = tm.tournament(["test_session_hash"] * 2, players=3, deals=4, seed=3, session=5, progress=False)
    (t,) = report.tables
    assert t.pot_left is not None and t.pot_left > 0  # the pot share counts
    for r in t.agents:
        assert r.replacement_advantage == 0.0 and r.replacement_advantage_ci95 == (0.0, 0.0)
        assert r.chips == t.baseline_chips
    assert t.baseline_chips == 0.0  # a session's chips are conserved (no rake)
    assert t.margin == [[0.0, 0.0], [0.0, 0.0]]


def test_the_report_says_sessions() -> None:
    report = tm.tournament(POOL[:2], players=3, deals=2, seed=0, session=3, progress=False)
    (t,) = report.tables
    text = report.to_markdown()
    assert "2 sessions of 3 deals per table size" in text and "OpenSkill ranks the seats of each session" in text
    assert "every table of every session" in t.ranking_note() and "Pots: 3 players, 2 sessions of 3 deals:" in text
    assert t.games_text() == "2 sessions of 3 deals" and tm.games_text(1) == "deals"
    data = report.to_dict()
    assert data["session"] == 3 and data["tables"][0]["session"] == 3 and data["tables"][0]["pot_left"] >= 0
    assert "sessions" in tm.rating_table(report, t, compact=True).columns
    with pytest.raises(ValueError, match="session: expected a number of deals"):
        tm.tournament(POOL, players=3, deals=1, session=0, progress=False)


def test_bourre_eval_tournament_in_sessions_writes_its_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(
        [
            "eval",
            "--tournament",
            "random",
            "heuristic",
            "--players",
            "3",
            "--deals",
            "2",
            "--session",
            "3",
            "--workers",
            "1",
            "--no-progress",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "3 players, 2 sessions of 3 deals:" in out and "left in the pot at a session's end" in out
    data = json.loads((tmp_path / "tournament.json").read_text())
    assert data["session"] == 3 and data["tables"][0]["session"] == 3 and data["tables"][0]["deals"] == 2
    assert "2 sessions of 3 deals per table size" in (tmp_path / "tournament.md").read_text()
    assert (tmp_path / "tournament_3p.png").read_bytes()[:4] == b"\x89PNG"
