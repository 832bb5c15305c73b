"""The ladder (``bourre ladder``, ``train.eval.ladder``): the page ``docs/leaderboard.md`` is the shipped data's, in the
command's format; ratings, their intervals and ranks; a user's own agent rated on a tiny budget."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from train import cli
from train.eval import duplicate as ev
from train.eval import ladder
from train.eval.ladder import Cell, LadderCard, Leaderboard

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "leaderboard.md"


def test_the_page_is_the_shipped_data_written_out() -> None:
    board = Leaderboard.load()
    assert PAGE.read_text() == ladder.leaderboard_markdown(board)


def test_the_shipped_data_is_the_ladder_at_its_budget() -> None:
    board = Leaderboard.load()
    fields = list(ladder.LADDERS[ladder.VERSION])
    assert (board.version, board.fields, board.players) == (ladder.VERSION, fields, list(ladder.PLAYERS))
    assert (board.deals, board.seed) == (ladder.DEALS, ladder.SEED)
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
