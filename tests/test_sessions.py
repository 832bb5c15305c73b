"""Sessions: games of several deals at one table with the pot carried, played by the duplicate schedule
(``train.schedule``) and evaluated by ``bourre eval --session K`` (``train.eval.duplicate``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import bourre_env
from bourre_env import history, limits, view
from bourre_env.core.rules import Rules
from train import cli
from train import schedule as sched
from train.eval import duplicate as ev
from train.table import CHIPS, TRICKS, Deal, make_deals


def _session_rules(n: int, k: int, **options: object) -> Rules:
    return sched.table_rules(n, options, k)


def _starts(table_specs: list[str], deal: Deal) -> tuple[list[list[int]], list[int], sched.GameResult]:
    """The dealing order and reshuffle state of every deal of ``deal``'s session at a table of ``table_specs``."""
    rules = deal.rules
    env = bourre_env.env(rules=rules)
    table = [sched.build_agent(spec, 7 + s) for s, spec in enumerate(table_specs)]
    tally = sched.SessionTally(rules, keep_starts=True)
    result = sched.play_game(env, deal, table, observers=(tally,))
    decks = [history.dealing_order(s, rules) for s in tally.starts]
    return decks, [view.rng_state_of(s) for s in tally.starts], result


def test_two_tables_that_play_differently_meet_the_same_decks_in_every_deal() -> None:
    rules = _session_rules(4, 12)
    deal = make_deals(3, rules, 1).deal(0)
    eager_decks, eager_rngs, eager = _starts(["style:eager-low"] * 4, deal)
    wary_decks, wary_rngs, wary = _starts(["heuristic:tight", "random", "heuristic", "random"], deal)
    assert eager.deals_played == wary.deals_played == 12
    assert len(eager_decks) == 12
    assert eager_decks == wary_decks and eager_rngs == wary_rngs
    assert len({tuple(d) for d in eager_decks}) == 12  # a new deck every deal
    # the tables did play differently: their chips differ
    assert not np.array_equal(eager.rows[:, CHIPS], wary.rows[:, CHIPS])


def test_a_session_conserves_chips_and_sums_its_deals() -> None:
    rules = _session_rules(5, 8, rake=0.1)
    for k in range(3):
        deal = make_deals(11, rules, 3).deal(k)
        env = bourre_env.env(rules=rules)
        table = [sched.build_agent("random", s) for s in range(5)]
        result = sched.play_game(env, deal, table)
        raw = env.unwrapped
        rake = int(raw.state_vector[bourre_env.core.S_RAKE_TOTAL])
        assert result.deals_played == 8
        assert int(result.rows[:, CHIPS].sum()) + result.pot_left + rake == 0
        assert int(result.rows[:, TRICKS].sum()) == 5 * 8
        # the episode's own chip count agrees with the sum of the deals' rows
        episode = [int(raw.state_vector[bourre_env.core.S_CHIPS + s]) for s in range(5)]
        assert result.rows[:, CHIPS].tolist() == episode


def test_a_session_past_the_pot_bound_is_cut_and_counted() -> None:
    rules = _session_rules(5, 50)
    deal = Deal(rules, dealer=0, env_seed=4, pot=limits.POT_BOUND)
    env = bourre_env.env(rules=rules)
    # never passing: somebody is bourré at once, and the pot passes the bound in the first deals
    result = sched.play_game(env, deal, [sched.build_agent("style:eager-low", s) for s in range(5)])
    assert 1 <= result.deals_played < 50
    assert result.pot_left > limits.POT_BOUND
    outcomes = np.zeros((1, 3, 3, 6), dtype=np.int64)
    played = np.array([[50, 7, 50, 50]])
    report = ev.TableReport.of(
        outcomes, np.zeros((1, 3, 6), dtype=np.int64), pots=np.zeros((1, 4)), played=played, session=50
    )
    assert report.sessions_cut == 1


def test_the_pot_left_is_shared_by_the_table() -> None:
    """Two rotations and the all-field table of a 2-seat session: each seat's session chips are its chip change
    plus half the pot left."""
    outcomes = np.zeros((1, 2, 2, 6), dtype=np.int64)
    outcomes[0, 0, :, CHIPS] = [3, -7]  # rotation 0 left 4 in the pot
    outcomes[0, 1, :, CHIPS] = [-2, -2]  # rotation 1 left 4
    baseline = np.zeros((1, 2, 6), dtype=np.int64)
    baseline[0, :, CHIPS] = [-1, -1]  # the all-field table left 2
    pots = np.array([[4, 4, 2]])
    report = ev.TableReport.of(outcomes, baseline, pots=pots, played=np.full((1, 3), 10), session=10)
    # candidate: seat 0 of rotation 0 (3 + 2) and seat 1 of rotation 1 (-2 + 2), over 10 deals
    assert report.candidate.chips == pytest.approx((5 + 0) / 2 / 10)
    assert report.baseline.chips == 0.0  # conserved: the all-field table's seats sum to zero
    # replacement: (5 - 0) + (0 - 0), over 2 seats and 10 deals; table: (5 - (-5)) and (0 - 0), halved, over 10
    assert report.replacement_advantage == pytest.approx(0.25)
    assert report.advantage == pytest.approx(0.5)
    assert report.pot_left == pytest.approx(10 / 3)
    # single deals keep the older accounting: the pot left is chips lost
    single = ev.TableReport.of(outcomes, baseline, pots=pots)
    assert single.candidate.chips == pytest.approx((3 - 2) / 2) and single.pot_left is None


@pytest.mark.parametrize("spec", ["random", "heuristic"])
def test_a_seeded_agent_against_copies_of_itself_scores_exactly_zero_in_sessions(spec: str) -> None:
    report = ev.evaluate(spec, spec, players=3, deals=3, seed=2, progress=False, session=6)
    t = report.table(3)
    assert (t.advantage, t.replacement_advantage) == (0.0, 0.0)
    assert t.session == 6 and report.session == 6
    assert t.candidate.chips == t.baseline.chips


def test_sessions_depend_neither_on_workers_nor_on_the_chunking_of_the_run() -> None:
    one = ev.evaluate("heuristic", "random", players=(3, 4), deals=5, seed=1, progress=False, session=7)
    two = ev.evaluate("heuristic", "random", players=(3, 4), deals=5, seed=1, progress=False, session=7, workers=2)
    assert one.to_dict() == two.to_dict()
    # session k's first deal is deal k of the single-deal evaluation's schedule
    first = make_deals(1, _session_rules(3, 7), 5)
    single = make_deals(1, Rules(num_players=3), 5)
    assert np.array_equal(first.decks, single.decks) and np.array_equal(first.env_seeds, single.env_seeds)


def test_a_session_is_not_a_series_of_fresh_deals() -> None:
    """Bourré payments stay in the pot and are won back: a session's figures are not the single deals'."""
    sessions = ev.evaluate("style:eager-low", "heuristic", players=3, deals=4, seed=5, progress=False, session=10)
    single = ev.evaluate("style:eager-low", "heuristic", players=3, deals=40, seed=5, progress=False)
    s, d = sessions.table(3), single.table(3)
    assert s.deals == 4 and s.games == 12 and s.session == 10 and d.session == 1
    assert s.candidate.chips != d.candidate.chips
    # every seat sat 10 deals a session: rates are per seat and deal played
    assert 0 < s.candidate.play_rate <= 1 and s.candidate.mean_tricks <= 5


def test_session_histories_replay(tmp_path: Path) -> None:
    ev.evaluate("heuristic", "random", players=3, deals=2, seed=0, progress=False, session=4, histories=tmp_path)
    files = sorted(p.name for p in (tmp_path / "3p").iterdir())
    assert files == [f"session{k:05d}_{t}.json" for k in range(2) for t in ("field", "seat0", "seat1", "seat2")]
    record = history.read(tmp_path / "3p" / "session00001_seat2.json")
    assert len(record["deals"]) == 4
    steps = list(history.Replay(record))
    assert steps and steps[-1].deal == 3


def test_session_rules_and_bad_lengths_are_refused() -> None:
    assert sched.table_rules(4, {}, 9).deals_per_episode == 9
    for bad in (0, -1, sched.MAX_SESSION + 1, True, 2.5):
        with pytest.raises(ValueError, match="session: expected a number of deals"):
            sched.table_rules(4, {}, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="deals_per_episode=3: the length of a game is the session's"):
        sched.table_rules(4, {"deals_per_episode": 3})
    with pytest.raises(ValueError, match="not with sessions"):
        from train.eval.variance import VarianceReduction

        ev.evaluate("heuristic", players=3, deals=1, progress=False, session=2, variance_reduction=VarianceReduction())
    assert sched.games_per_chunk(1) == sched.CHUNK_DEALS and sched.games_per_chunk(20) == 1
    assert sched.games_per_chunk(7) == 2 and sched.games_per_chunk(500) == 1


def test_the_command_line_takes_sessions_up_to_the_schedules_limit(capsys: pytest.CaptureFixture[str]) -> None:
    parser = cli.build_parser()
    args = parser.parse_args(["eval", "--candidate", "random", "--session", str(sched.MAX_SESSION)])
    assert args.session == sched.MAX_SESSION
    with pytest.raises(SystemExit):
        parser.parse_args(["eval", "--candidate", "random", "--session", str(sched.MAX_SESSION + 1)])
    assert "expected an integer from 1 to 10,000" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--aivat"], "--aivat: not with --session"),
        (["--rule", "deals_per_episode=3"], "--rule deals_per_episode: the length of a game is --session K's"),
    ],
)
def test_bourre_eval_refuses_what_sessions_cannot_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert cli.main(["eval", "--candidate", "random", "--session", "3", "--out", str(tmp_path), *extra]) == 2
    assert message in capsys.readouterr().err


def test_bourre_eval_session_writes_the_sessions_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        [
            "eval",
            "--candidate",
            "heuristic",
            "--field",
            "random",
            "--players",
            "3",
            "--deals",
            "2",
            "--session",
            "5",
            "--workers",
            "1",
            "--no-progress",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "2 sessions of 5 deals x 3 seats" in out and "left in the pot at a session's end" in out
    data = json.loads((tmp_path / "eval.json").read_text())
    assert data["session"] == 5 and data["tables"][0]["session"] == 5
    assert data["tables"][0]["sessions_cut"] == 0 and data["tables"][0]["pot_left"] >= 0
