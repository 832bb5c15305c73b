"""A tournament whose pool fits at one table: every agent plays every deal at every table, so the payoff matrix
would repeat each agent's chips along its row, and the order must follow the chips, not OpenSkill's placings."""

from __future__ import annotations

import numpy as np

from train.eval import duplicate as ev
from train.eval.tournament import TournamentReport, TournamentTable, tournament


def _edges_often_loses_big() -> TournamentTable:
    """Agents ``edger`` (0) and ``winner`` (1) at 3 seats (lineup 0, 1, 0): on 15 deals (all but every fourth)
    the edger takes +1 chip a seat and the winner 0, on 5 deals the edger loses 10 and the winner takes 5. The
    edger places first on most deals; the winner has more chips: +1.25 a deal against -1.75."""
    deals, n = 20, 3
    lineups = np.tile([0, 1, 0], (deals, 1))
    outcomes = np.zeros((deals, n, n, ev.NUM_OUTCOMES), dtype=np.int64)
    edger, winner = (lineups == 0)[:, None, :], (lineups == 1)[:, None, :]
    chips = np.where(np.arange(deals) % 4 != 3, 1, -10)[:, None, None] * edger
    chips = chips + np.where(np.arange(deals) % 4 != 3, 0, 5)[:, None, None] * winner
    outcomes[..., ev.CHIPS] = np.broadcast_to(chips, (deals, n, n))
    baseline = np.zeros((deals, n, ev.NUM_OUTCOMES), dtype=np.int64)
    return TournamentTable.of(["edger", "winner"], lineups, outcomes, baseline)


def test_a_pool_that_fits_at_one_table_is_ranked_by_chips() -> None:
    table = _edges_often_loses_big()
    by_name = {r.name: r for r in table.agents}
    assert by_name["edger"].chips == -1.75 and by_name["winner"].chips == 1.25
    assert by_name["edger"].ordinal > by_name["winner"].ordinal  # OpenSkill counts placings: the edger's
    assert table.every_agent_every_deal and table.ranked_by == "chips"
    assert [r.name for r in table.agents] == ["winner", "edger"]  # the chips decide
    assert "ranked by chips" in table.ranking_note()


def test_the_report_says_why_the_payoff_matrix_is_left_out() -> None:
    table = _edges_often_loses_big()
    assert table.payoff[0] == [table.payoff[0][0]] * 2  # the constant rows that are left out
    report = TournamentReport(["edger", "winner"], "edger", 0, 20, {}, ev.CHUNK_DEALS, [table])
    text = report.to_markdown()
    assert "Payoff:" not in text and "No payoff matrix: every agent met every other on every deal" in text
    assert "Margin:" in text and "ranked by chips per deal" in text


def test_a_pool_larger_than_the_table_keeps_the_payoff_matrix_and_openskill_order() -> None:
    report = tournament(["random", "heuristic", "heuristic:tight"], players=2, deals=4, seed=0, progress=False)
    (table,) = report.tables
    assert not table.every_agent_every_deal and table.ranked_by == "ordinal" and table.payoff_note() is None
    assert [r.ordinal for r in table.agents] == sorted((r.ordinal for r in table.agents), reverse=True)
    assert "Payoff:" in report.to_markdown() and "ranked by OpenSkill" in report.to_markdown()
