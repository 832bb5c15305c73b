"""The ladder (``bourre ladder``, ``train.eval.ladder``): the page ``docs/leaderboard.md`` is the shipped data's, in the
command's format; ratings, their intervals and ranks; a user's own agent rated on a tiny budget."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from train import cli
from train import schedule as sched
from train.eval import duplicate as ev
from train.eval import ladder
from train.eval.ladder import Cell, LadderCard, Leaderboard
from train.eval.time_left import Part

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "leaderboard.md"


def test_the_page_is_the_shipped_data_written_out() -> None:
    board = Leaderboard.load()
    assert PAGE.read_text() == ladder.leaderboard_markdown(board)


def test_the_shipped_data_is_the_ladder_at_its_budget() -> None:
    board = Leaderboard.load()
    fields = list(ladder.LADDERS[ladder.VERSION])
    assert (board.version, board.fields, board.players) == (ladder.VERSION, fields, list(ladder.PLAYERS))
    assert (board.deals, board.seed, board.session) == (ladder.DEALS, ladder.SEED, 1)
    assert sorted(card.candidate for card in board.cards) == sorted(fields)
    assert [card.rating for card in board.cards] == sorted((card.rating for card in board.cards), reverse=True)
    for card in board.cards:
        assert [(c.field, c.players) for c in card.cells] == [(f, n) for f in fields for n in ladder.PLAYERS]
        for c in card.cells:  # against itself: 0 by construction, not played; every other cell played
            assert c.played == (c.field != card.candidate)
            if not c.played:
                assert (c.replacement_advantage, c.replacement_advantage_ci95) == (0.0, (0.0, 0.0))


def _fake_evaluate(candidate: Any, field: Any, players: Any, deals: int, seed: int, **_: Any) -> ev.EvalReport:
    """Outcomes drawn at random (from the names, so each pairing differs): the statistics and the page are the
    real ones, the games are skipped."""
    rng = np.random.default_rng([seed, len(candidate), len(field)])
    tables = []
    for n in players:
        outcomes = np.zeros((deals, n, n, ev.NUM_OUTCOMES), dtype=np.int64)
        outcomes[..., ev.CHIPS] = rng.integers(-3, 4, size=(deals, n, n))
        baseline = np.zeros((deals, n, ev.NUM_OUTCOMES), dtype=np.int64)
        baseline[..., ev.CHIPS] = rng.integers(-3, 4, size=(deals, n))
        tables.append(ev.TableReport.of(outcomes, baseline))
    return ev.EvalReport(candidate, field, seed, deals, {}, ev.CHUNK_DEALS, tables)


def _shape(text: str, board: Leaderboard) -> list[str]:
    """The page with its agents' names and every number taken out: its format."""
    text = text.replace(board.machine, "MACHINE")
    for name in sorted(board.fields, key=len, reverse=True):
        text = text.replace(name, "AGENT")
    return re.sub(r"[+-]?\d+(?:\.\d+)?", "#", text).splitlines()


def test_the_page_has_the_format_of_the_commands_output(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(ev, "evaluate", _fake_evaluate)
    page, data = tmp_path / "leaderboard.md", tmp_path / "reference.json"
    argv = ["ladder", "--write-leaderboard", "--deals", "3", "--json", str(data), "--markdown", str(page)]
    assert cli.main([*argv, "--no-progress"]) == 0
    written = Leaderboard.load(data)
    assert (written.deals, written.players) == (3, list(ladder.PLAYERS))
    assert page.read_text() == ladder.leaderboard_markdown(written)
    assert _shape(page.read_text(), written) == _shape(PAGE.read_text(), Leaderboard.load())


def _card(name: str, values: dict[tuple[str, int], tuple[float, float]], fields: list[str]) -> LadderCard:
    """A card of replacement advantages ``values[field, players] = (mean, half-width)``."""
    cells = [
        Cell(f, n, 0.0, None, mean, (mean - half, mean + half), played=f != name)
        for (f, n), (mean, half) in values.items()
    ]
    return LadderCard(name, ladder.VERSION, fields, sorted({n for _, n in values}), 100, 0, cells)


def test_the_rating_is_the_mean_replacement_advantage_with_a_conservative_interval() -> None:
    fields = ["a", "b"]
    card = _card("x", {("a", 3): (0.2, 0.1), ("b", 3): (0.4, 0.3), ("a", 5): (-0.2, 0.2), ("b", 5): (0.0, 0.4)}, fields)
    assert card.rating == pytest.approx(0.1)
    # per size: the mean of the half-widths (0.2 at 3, 0.3 at 5), then in quadrature over the independent sizes
    half = np.hypot(0.2, 0.3) / 2
    assert card.rating_ci95 == pytest.approx((0.1 - half, 0.1 + half))
    mean, ci = card.size_rating(3)
    assert mean == pytest.approx(0.3) and ci == pytest.approx((0.1, 0.5))


def test_a_rank_places_the_card_among_the_others_and_never_moves_them() -> None:
    fields = ["a", "b"]
    a = _card("a", {("a", 3): (0.0, 0.0), ("b", 3): (0.4, 0.1)}, fields)
    b = _card("b", {("a", 3): (-0.4, 0.1), ("b", 3): (0.0, 0.0)}, fields)
    board = Leaderboard(ladder.VERSION, fields, [3], 100, 0, [a, b], 1.0, "test")
    before = [(card.candidate, card.rating, card.rating_ci95) for card in board.cards]
    middle = ladder.rank_of(_card("new", {("a", 3): (0.1, 0.1), ("b", 3): (0.0, 0.1)}, fields), board)
    assert isinstance(middle, ladder.Rank) and (middle.position, middle.total) == (2, 3)
    assert middle.above == ("a", 0.2) and middle.below == ("b", -0.2)
    assert [(card.candidate, card.rating, card.rating_ci95) for card in board.cards] == before
    own = ladder.rank_of(a, board)  # a reference agent is not counted twice
    assert isinstance(own, ladder.Rank) and (own.position, own.total, own.above) == (1, 2, None)
    other_sizes = _card("new", {("a", 5): (0.1, 0.1), ("b", 5): (0.0, 0.1)}, fields)
    assert "no rank" in str(ladder.rank_of(other_sizes, board))


BOT = """
import numpy as np


class FirstLegal:
    def __init__(self, seed=None):
        pass

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])
"""


def test_a_users_own_agent_on_a_tiny_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(BOT)
    spec = f"{bot}:FirstLegal"
    out = tmp_path / "card.json"
    argv = ["ladder", spec, "--players", "3", "--deals", "2", "--json", str(out), "--no-progress"]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert f"Rating of {spec}:" in printed.replace("\n", "")
    assert "no rank: the reference ratings are of ladder v1 at 3, 5, 7 players" in printed.replace("\n", " ")
    card = LadderCard.from_dict(json.loads(out.read_text()))
    assert card.candidate == spec and card.players == [3] and card.deals == 2
    assert [c.field for c in card.cells] == list(ladder.LADDERS[ladder.VERSION]) and all(c.played for c in card.cells)
    direct = ev.evaluate(spec, "heuristic", players=3, deals=2, seed=ladder.SEED, progress=False).table(3)
    cell = next(c for c in card.cells if c.field == "heuristic")
    assert (cell.advantage, cell.replacement_advantage) == (direct.advantage, direct.replacement_advantage)


def test_bad_arguments_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ladder", "nobody", "--players", "3", "--deals", "1", "--no-progress"]) == 2
    assert "unknown agent 'nobody'" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert cli.main(["ladder", "random", "--reference", str(bad), "--no-progress"]) == 2
    assert f"reference {bad}: not a ladder leaderboard" in capsys.readouterr().err
    assert cli.main(["ladder", "random", "--markdown", str(tmp_path / "x.md")]) == 2
    assert "--markdown: only with --write-leaderboard" in capsys.readouterr().err


# ---------------------------------------------------------------------------- sessions
CHEAP = ("random", "heuristic")  # fields of a session ladder that plays in seconds


class _Bar:
    """A progress bar that keeps its total and every move."""

    def __init__(self, total: int, **_: Any) -> None:
        self.total, self.moved = total, 0

    def __enter__(self) -> _Bar:
        return self

    def __exit__(self, *_: Any) -> None:
        pass

    def update(self, n: int = 1) -> None:
        self.moved += n

    def set_postfix_str(self, *_: Any, **__: Any) -> None:
        pass


def test_a_session_ladder_is_evaluate_with_sessions_cell_by_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ladder.LADDERS, ladder.VERSION, CHEAP)
    bars: list[_Bar] = []

    def bar(parts: list[Part], **kw: Any) -> _Bar:
        bars.append(_Bar(total=sum(part.deals for part in parts), **kw))
        return bars[-1]

    monkeypatch.setattr(ladder, "TimeLeftBar", bar)
    card = ladder.ladder("heuristic", deals=2, seed=3, players=(3,), session=3)
    assert (card.session, card.deals, card.players) == (3, 2, [3])
    mine = next(c for c in card.cells if c.field == "heuristic")  # the candidate itself: 0, not played
    assert not mine.played and mine.replacement_advantage == 0.0
    cell = next(c for c in card.cells if c.field == "random")
    table = ev.evaluate("heuristic", "random", players=3, deals=2, seed=3, progress=False, session=3).table(3)
    assert table.session == 3
    assert (cell.advantage, cell.advantage_ci95) == (table.advantage, table.advantage_ci95)
    assert (cell.replacement_advantage, cell.replacement_advantage_ci95) == (
        table.replacement_advantage,
        table.replacement_advantage_ci95,
    )
    single = ev.evaluate("heuristic", "random", players=3, deals=2, seed=3, progress=False).table(3)
    assert cell.replacement_advantage != single.replacement_advantage  # the sessions were played, not single deals
    # the bar counts deals: 2 fields x 1 size x 2 sessions x 3 deals, every one of them moved
    assert (bars[0].total, bars[0].moved) == (12, 12)
    assert "2 sessions of 3 deals per cell" in ladder.rating_line(card)


def test_a_session_card_and_board_round_trip_and_old_files_are_single_deals() -> None:
    fields = ["a", "b"]
    card = dataclasses.replace(_card("a", {("a", 3): (0.0, 0.0), ("b", 3): (0.4, 0.1)}, fields), session=20)
    assert LadderCard.from_dict(json.loads(json.dumps(card.to_dict()))) == card
    board = Leaderboard(ladder.VERSION, fields, [3], 100, 0, [card], 1.0, "test", session=20)
    assert Leaderboard.from_dict(json.loads(json.dumps(board.to_dict()))) == board
    old = board.to_dict()
    del old["session"], old["cards"][0]["session"]
    loaded = Leaderboard.from_dict(old)
    assert loaded.session == 1 and loaded.cards[0].session == 1
    shipped = Leaderboard.load()  # written before sessions: no such field in the file
    assert "session" not in json.loads(ladder.REFERENCE_FILE.read_text())
    assert shipped.session == 1 and all(c.session == 1 for c in shipped.cards)
    bad = {**board.to_dict(), "session": 0}
    with pytest.raises(ValueError, match="session"):
        Leaderboard.from_dict(bad)


def test_a_rank_needs_the_same_session_length() -> None:
    fields = ["a", "b"]
    a = _card("a", {("a", 3): (0.0, 0.0), ("b", 3): (0.4, 0.1)}, fields)
    b = _card("b", {("a", 3): (-0.4, 0.1), ("b", 3): (0.0, 0.0)}, fields)
    board = Leaderboard(ladder.VERSION, fields, [3], 100, 0, [a, b], 1.0, "test")
    new = _card("new", {("a", 3): (0.1, 0.1), ("b", 3): (0.0, 0.1)}, fields)
    assert isinstance(ladder.rank_of(new, board), ladder.Rank)
    refused = ladder.rank_of(dataclasses.replace(new, session=20), board)
    assert refused == (
        "no rank: the reference ratings are of single deals, this card of sessions of 20 deals "
        "(the pot carried from deal to deal changes what a deal is worth)"
    )
    sessions = dataclasses.replace(board, session=20, cards=[dataclasses.replace(c, session=20) for c in (a, b)])
    rank = ladder.rank_of(dataclasses.replace(new, session=20), sessions)
    assert isinstance(rank, ladder.Rank) and rank.reference_session == 20
    assert "their ratings: 100 sessions of 20 deals, seed 0" in ladder.rank_line(
        dataclasses.replace(new, session=20), sessions, "x.json"
    )
    assert "no rank: the reference ratings are of sessions of 20 deals, this card of single deals" in str(
        ladder.rank_of(new, sessions)
    )


def test_session_lengths_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    parser = cli.build_parser()
    assert parser.parse_args(["ladder", "random"]).session == 1
    assert parser.parse_args(["ladder", "random", "--session", str(sched.MAX_SESSION)]).session == sched.MAX_SESSION
    for bad in ("0", str(sched.MAX_SESSION + 1)):
        with pytest.raises(SystemExit):
            parser.parse_args(["ladder", "random", "--session", bad])
        assert "expected an integer from 1 to 10,000" in capsys.readouterr().err
    with pytest.raises(ValueError, match="session: expected a number of deals"):
        ladder.ladder("random", deals=1, players=(3,), session=0, progress=False)


def test_a_session_card_on_the_command_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(ladder.LADDERS, ladder.VERSION, CHEAP)
    out = tmp_path / "card.json"
    argv = ["ladder", "heuristic:tight", "--players", "3", "--deals", "2", "--session", "3", "--seed", "3"]
    assert cli.main([*argv, "--workers", "1", "--json", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out.replace("\n", " ")
    assert "heuristic:tight, 2 sessions of 3 deals per cell, seed 3" in printed
    assert "(ladder v1, 2 sessions of 3 deals per cell, seed 3)" in printed
    assert "no rank: the reference ratings are of ladder v1 at 3, 5, 7 players" in printed
    card = LadderCard.from_dict(json.loads(out.read_text()))
    assert (card.session, card.deals) == (3, 2)
    direct = ev.evaluate("heuristic:tight", "heuristic", players=3, deals=2, seed=3, progress=False, session=3)
    cell = next(c for c in card.cells if c.field == "heuristic")
    assert cell.replacement_advantage == direct.table(3).replacement_advantage


def test_a_session_leaderboard_names_its_session_length(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(ev, "evaluate", _fake_evaluate)
    page, data = tmp_path / "leaderboard.md", tmp_path / "reference.json"
    argv = ["ladder", "--write-leaderboard", "--deals", "3", "--session", "20", "--json", str(data)]
    assert cli.main([*argv, "--markdown", str(page), "--no-progress"]) == 0
    written = Leaderboard.load(data)
    assert written.session == 20 and all(card.session == 20 for card in written.cards)
    text = page.read_text()
    assert text == ladder.leaderboard_markdown(written)
    assert "3 sessions of 20 deals (the pot carried from deal to deal" in text
    assert "Budget: 3 sessions of 20 deals per cell" in text
    assert "`bourre ladder SPEC --session 20`" in text and " --session 20 --workers 2" in text
    assert "(ladder v1, 3 sessions of 20 deals per cell, seed 0)" in text
