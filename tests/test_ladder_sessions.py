"""The ladder in sessions (issue 59): house rules on the card (``bourre ladder --rule``), the shipped session
reference and its page, ranks that need the same session length and house rules."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from train import cli
from train.eval import duplicate as ev
from train.eval import ladder
from train.eval.ladder import Cell, LadderCard, Leaderboard
from train.eval.report import with_ci

ROOT = Path(__file__).resolve().parent.parent
SINGLE_PAGE = ROOT / "docs" / "leaderboard.md"
SESSION_PAGE = ROOT / "docs" / "leaderboard_sessions.md"
CHEAP = ("random", "heuristic")  # fields of a ladder that plays in seconds


def _card(name: str, values: dict[tuple[str, int], float], fields: list[str], **kw: Any) -> LadderCard:
    """A card of replacement advantages ``values[field, players]``, each with a half-width of 0.1."""
    cells = [Cell(f, n, 0.0, None, mean, (mean - 0.1, mean + 0.1), played=f != name) for (f, n), mean in values.items()]
    return LadderCard(name, ladder.VERSION, fields, sorted({n for _, n in values}), 100, 0, cells, **kw)


def _board(**kw: Any) -> Leaderboard:
    fields = ["a", "b"]
    a = _card("a", {("a", 3): 0.0, ("b", 3): 0.4}, fields, **kw)
    b = _card("b", {("a", 3): -0.4, ("b", 3): 0.0}, fields, **kw)
    return Leaderboard(ladder.VERSION, fields, [3], 100, 0, [a, b], 1.0, "test", **kw)


def _fake_evaluate(candidate: Any, field: Any, players: Any, deals: int, seed: int, **_: Any) -> ev.EvalReport:
    """Outcomes drawn from the names (each pairing differs): the statistics are the real ones, no game is played."""
    rng = np.random.default_rng([seed, len(candidate), len(field)])
    tables = []
    for n in players:
        outcomes = np.zeros((deals, n, n, ev.NUM_OUTCOMES), dtype=np.int64)
        outcomes[..., ev.CHIPS] = rng.integers(-3, 4, size=(deals, n, n))
        baseline = np.zeros((deals, n, ev.NUM_OUTCOMES), dtype=np.int64)
        baseline[..., ev.CHIPS] = rng.integers(-3, 4, size=(deals, n))
        tables.append(ev.TableReport.of(outcomes, baseline))
    return ev.EvalReport(candidate, field, seed, deals, {}, ev.CHUNK_DEALS, tables)


# ---------------------------------------------------------------------------- house rules on the card
def test_house_rules_round_trip_and_files_without_them_read_as_none() -> None:
    board = _board(session=10, rules={"pot_limit": 20})
    assert Leaderboard.from_dict(json.loads(json.dumps(board.to_dict()))) == board
    assert LadderCard.from_dict(json.loads(json.dumps(board.cards[0].to_dict()))).rules == {"pot_limit": 20}
    old = board.to_dict()
    del old["rules"], old["cards"][0]["rules"]
    loaded = Leaderboard.from_dict(old)
    assert loaded.rules == {} and loaded.cards[0].rules == {}
    assert "rules" not in json.loads(ladder.REFERENCE_FILE.read_text())  # the single-deal file predates them
    assert Leaderboard.load().rules == {}
    with pytest.raises(ValueError, match="rules: expected an object of rule options"):
        Leaderboard.from_dict({**board.to_dict(), "rules": [1, 2]})


def test_a_rank_needs_the_same_house_rules() -> None:
    board = _board(session=10, rules={"pot_limit": 20})
    new = _card("new", {("a", 3): 0.1, ("b", 3): 0.0}, ["a", "b"], session=10, rules={"pot_limit": 20})
    rank = ladder.rank_of(new, board)
    assert isinstance(rank, ladder.Rank) and (rank.position, rank.total) == (2, 3)
    assert rank.reference_rules == {"pot_limit": 20}
    assert "their ratings: 100 sessions of 10 deals, house rules pot_limit=20, seed 0" in ladder.rank_line(
        new, board, "x.json"
    )
    refused = ladder.rank_of(dataclasses.replace(new, rules={}), board)
    assert refused == (
        "no rank: the reference ratings are of house rules pot_limit=20, this card of no house rules "
        "(a house rule changes the game; give --rule pot_limit=20)"
    )
    other = ladder.rank_of(dataclasses.replace(new, rules={"pot_limit": 40}), board)
    assert "this card of house rules pot_limit=40" in str(other)
    single = _board()
    assert "give no --rule" in str(ladder.rank_of(_card("new", {("a", 3): 0.1}, ["a", "b"], rules={"tie": 1}), single))


def test_house_rules_reach_every_cell_and_the_card(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ladder.LADDERS, ladder.VERSION, CHEAP)
    card = ladder.ladder("heuristic", deals=2, seed=3, players=(3,), session=3, rules={"pot_limit": 2}, progress=False)
    assert card.rules == {"pot_limit": 2}
    cell = next(c for c in card.cells if c.field == "random")
    capped = ev.evaluate(
        "heuristic", "random", players=3, deals=2, seed=3, progress=False, session=3, rule_options={"pot_limit": 2}
    ).table(3)
    assert (cell.replacement_advantage, cell.replacement_advantage_ci95) == (
        capped.replacement_advantage,
        capped.replacement_advantage_ci95,
    )
    assert "house rules pot_limit=2, seed 3" in ladder.rating_line(card)
    seen: list[Any] = []

    def spy(*args: Any, rule_options: Any = None, **kw: Any) -> ev.EvalReport:
        seen.append(rule_options)
        return _fake_evaluate(*args, **kw)

    monkeypatch.setattr(ev, "evaluate", spy)
    board = ladder.leaderboard(deals=2, players=(3,), session=2, rules={"pot_limit": 20}, progress=False)
    assert board.rules == {"pot_limit": 20} and all(card.rules == {"pot_limit": 20} for card in board.cards)
    assert seen and all(options == {"pot_limit": 20} for options in seen)


def test_bad_house_rules_are_refused_before_any_game(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*_: Any, **__: Any) -> None:
        raise AssertionError("a game was played")

    monkeypatch.setattr(ev, "evaluate", never)
    with pytest.raises(ValueError, match="num_players is the table sizes'"):
        ladder.ladder("random", deals=1, players=(3,), rules={"num_players": 3}, progress=False)
    with pytest.raises(ValueError, match="deals_per_episode"):
        ladder.ladder("random", deals=1, players=(3,), rules={"deals_per_episode": 5}, progress=False)
    with pytest.raises(ValueError):
        ladder.leaderboard(deals=1, players=(3,), rules={"no_such_rule": 1}, progress=False)


def test_house_rules_on_the_command_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(ev, "evaluate", _fake_evaluate)
    out = tmp_path / "card.json"
    argv = ["ladder", "heuristic", "--session", str(ladder.SESSION), "--deals", "2", "--no-progress"]
    assert cli.main([*argv, "--rule", "pot_limit=20", "--json", str(out)]) == 0
    printed = capsys.readouterr().out.replace("\n", " ")
    assert f"2 sessions of {ladder.SESSION} deals per cell, house rules pot_limit=20, seed 0" in printed
    # the shipped session reference is the default with --session, and ranks a card of its length and rules
    assert "Rank " in printed and f"house rules pot_limit=20, seed {ladder.SEED}, from " in printed
    assert "ladder_reference_session.json" in printed
    assert LadderCard.from_dict(json.loads(out.read_text())).rules == {"pot_limit": 20}
    assert cli.main(argv) == 0  # without the house rule: a card, and no rank
    assert "no rank: the reference ratings are of house rules pot_limit=20, this card of no house rules" in (
        capsys.readouterr().out.replace("\n", " ")
    )
    for rule, says in (
        ("deals_per_episode=5", "--rule deals_per_episode: the length of a game is --session K's"),
        ("num_players=3", "--rule num_players: --players sets the table sizes"),
    ):
        assert cli.main([*argv, "--rule", rule]) == 2
        assert says in capsys.readouterr().err


# ---------------------------------------------------------------------------- the shipped session reference
def test_the_shipped_session_reference_is_the_ladder_in_sessions_at_its_budget() -> None:
    board = Leaderboard.load(ladder.REFERENCE_SESSION_FILE)
    fields = list(ladder.LADDERS[ladder.VERSION])
    assert (board.version, board.fields, board.players) == (ladder.VERSION, fields, list(ladder.PLAYERS))
    assert (board.deals, board.seed, board.session) == (ladder.SESSION_DEALS, ladder.SEED, ladder.SESSION)
    assert board.rules == ladder.SESSION_RULES == {"pot_limit": 20}
    assert sorted(card.candidate for card in board.cards) == sorted(fields)
    assert [card.rating for card in board.cards] == sorted((card.rating for card in board.cards), reverse=True)
    for card in board.cards:
        assert (card.session, card.rules) == (board.session, board.rules)
        assert [(c.field, c.players) for c in card.cells] == [(f, n) for f in fields for n in ladder.PLAYERS]
        assert all(c.played == (c.field != card.candidate) for c in card.cells)


def test_the_session_page_is_its_shipped_data_written_out_beside_the_single_deals() -> None:
    sessions, singles = Leaderboard.load(ladder.REFERENCE_SESSION_FILE), Leaderboard.load()
    text = SESSION_PAGE.read_text()
    assert text == ladder.leaderboard_markdown(sessions)
    assert f"--write-leaderboard --deals {ladder.SESSION_DEALS} --seed 0 --players 3 5 7 --session 10" in text
    assert "--rule pot_limit=20 --workers 2" in text
    for page, other in ((SINGLE_PAGE, "leaderboard_sessions.md"), (SESSION_PAGE, "leaderboard.md")):
        body = page.read_text()
        assert "## Single deals and sessions" in body and f"]({other})" in body
    # each agent's two ratings, one row each, on both pages
    for card in singles.cards:
        mine = next(c for c in sessions.cards if c.candidate == card.candidate)
        row = f"| {card.candidate} | {with_ci(card.rating, card.rating_ci95)} | "
        row += f"{with_ci(mine.rating, mine.rating_ci95)} |"
        assert row in SINGLE_PAGE.read_text() and row in text


def test_writing_a_shipped_reference_rewrites_the_other_page(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(ev, "evaluate", _fake_evaluate)
    single_json, session_json = tmp_path / "single.json", tmp_path / "session.json"
    single_json.write_text(ladder.REFERENCE_FILE.read_text())
    monkeypatch.setattr(ladder, "REFERENCE_FILE", single_json)
    monkeypatch.setattr(ladder, "REFERENCE_SESSION_FILE", session_json)
    monkeypatch.setattr(ladder, "DOCS", tmp_path)
    argv = ["ladder", "--write-leaderboard", "--deals", "2", "--session", "4", "--rule", "pot_limit=20"]
    assert cli.main([*argv, "--no-progress"]) == 0
    written = Leaderboard.load(session_json)
    assert (written.session, written.rules) == (4, {"pot_limit": 20})
    assert (tmp_path / "leaderboard_sessions.md").read_text() == ladder.leaderboard_markdown(written)
    # the single-deal page, from the single-deal reference, now sets the new session ratings beside its own
    single_page = (tmp_path / "leaderboard.md").read_text()
    assert single_page == ladder.leaderboard_markdown(Leaderboard.load(single_json))
    assert "sessions of 4 deals, house rules pot_limit=20 [95% CI]" in single_page
