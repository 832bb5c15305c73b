"""The variance-reduced replacement advantage (train.eval.variance): unbiased, zero without draws, reproducible."""

from __future__ import annotations

import dataclasses
import itertools
import json
import zlib
from pathlib import Path

import numpy as np
import pytest

import bourre_env
from agents.base import Observation, legal_actions
from bourre_env import core
from bourre_env.core.rules import Rules
from train import cli
from train.eval import duplicate as ev
from train.eval.report import advantage_table
from train.eval.variance import DrawCorrector, VarianceReduction, is_draw


class _HashAgent:
    """Deterministic: the action is a hash of the observation and a salt, so the agent's play depends on what it
    sees and on nothing carried from deal to deal (what the exact enumeration below needs)."""

    salt = b""

    def __init__(self, seed: int = 0) -> None:
        self.name = type(self).__name__

    def act(self, observation: Observation) -> int:
        legal = legal_actions(observation)
        return int(legal[zlib.crc32(self.salt + observation["observation"].tobytes()) % legal.size])

    def reset(self) -> None:
        pass


class HashCandidate(_HashAgent):
    salt = b"candidate"


class HashField(_HashAgent):
    salt = b"field"


def hand_strength(states: np.ndarray, params: np.ndarray) -> np.ndarray:
    """A deterministic value of every seat: the ranks it holds, trumps counting 13 more (changes with each draw)."""
    n = SMALL["num_players"]
    out = np.zeros((len(states), n))
    for b, s in enumerate(states):
        for q in range(n):
            hand = int(s[core.S_HAND + q])
            for c in range(52):
                if hand >> c & 1:
                    out[b, q] += c % 13 + (13 if c // 13 == s[core.S_TRUMP] else 0)
    return out


SMALL = {"num_players": 2, "hand_size": 2, "ranks": (11, 12)}  # 8 cards: 4 dealt, a stock of 4


def _report(job: ev._EvalJob) -> ev.TableReport:
    out, baseline, _, _, corrections, corrected, _ = ev._run_eval_job(job)
    return ev.TableReport.of(out, baseline, corrections, job.variance, corrected)


def test_the_corrected_mean_is_the_plain_mean_exactly_over_every_order_of_the_stock() -> None:
    """Given the hands, every order of the stock is equally likely; over all of them (and with every order taken
    by the resampling: 4! <= resamples) the corrections sum to 0, so the two estimates have the same mean."""
    rules = Rules.from_options(**SMALL)
    cards = list(rules.deck_cards())
    assert len(cards) == 8
    options = VarianceReduction(value=hand_strength, resamples=24)
    checked = 0
    for hands in ([cards[0], cards[5], cards[2], cards[7]], [cards[6], cards[1], cards[3], cards[4]]):
        stock = [c for c in cards if c not in hands]
        decks = np.array([hands + list(order) for order in itertools.permutations(stock)], dtype=np.int64)
        deals = ev.Deals(decks, np.zeros(len(decks), dtype=np.int64), np.full(len(decks), 7, dtype=np.int64))
        job = ev._EvalJob(HashCandidate, (HashField, HashField), SMALL, 0, 0, deals, None, options)
        t = _report(job)
        reduced = t.variance_reduced
        assert reduced is not None and reduced.draws_corrected > 0
        assert reduced.replacement_advantage == pytest.approx(t.replacement_advantage, abs=1e-12)
        # the corrections did change the deals' values (the test could fail)
        assert reduced.replacement_advantage_ci95 != pytest.approx(t.replacement_advantage_ci95)
        checked += 1
    assert checked == 2


def _mean_correction(options: VarianceReduction, candidate: str, deals: int, n: int = 3) -> np.ndarray:
    """Per deal, the plain replacement advantage minus the corrected one: the corrections' share."""
    all_deals = ev.make_deals(5, ev.table_rules(n, {}), deals)
    differences = []
    for chunk, (start, stop) in enumerate(ev.chunk_bounds(deals)):
        job = ev._EvalJob(
            candidate, ("heuristic",) * n, {"num_players": n}, 5, chunk, all_deals.slice(start, stop), None, options
        )
        _, _, _, _, corrections, _, _ = ev._run_eval_job(job)
        assert corrections is not None
        own = corrections[:, :n][:, np.eye(n, dtype=bool)]
        differences.append((own - corrections[:, n]).sum(axis=1) / n)
    return np.concatenate(differences)


@pytest.mark.parametrize(
    "options",
    [
        VarianceReduction("heuristic", resamples=4),
        VarianceReduction("heuristic", resamples=4, candidate_value="heuristic"),
    ],
    ids=["draws", "deal and draws, candidate's model"],
)
def test_the_corrections_have_mean_zero_on_seeded_deals(options: VarianceReduction) -> None:
    """With rollouts and sampled orders: the mean of (plain - corrected) per deal is within a few standard errors of
    0 on 100 seeded deals (the candidate is the random agent; any model of it keeps the mean, a poor one only
    corrects less)."""
    d = _mean_correction(options, "random", 100)
    assert np.count_nonzero(d) > 50
    assert abs(d.mean()) < 4 * d.std(ddof=1) / np.sqrt(d.size)


def test_nothing_drawn_nothing_corrected() -> None:
    """With max_discard=0 no one draws: the corrected estimate is the plain one, interval included."""
    r = ev.evaluate(
        "random",
        "heuristic",
        players=3,
        deals=20,
        seed=2,
        progress=False,
        rule_options={"max_discard": 0},
        variance_reduction=VarianceReduction(resamples=2),
    )
    t = r.tables[0]
    assert t.variance_reduced is not None and t.variance_reduced.draws_corrected == 0
    assert t.variance_reduced.replacement_advantage == t.replacement_advantage
    assert t.variance_reduced.replacement_advantage_ci95 == t.replacement_advantage_ci95
    assert t.variance_reduced.deals_ratio == 1.0


def test_a_stay_that_discards_nothing_is_no_correction() -> None:
    env = bourre_env.env(num_players=3)
    env.reset(seed=3)
    state = env.unwrapped.state_vector.copy()
    assert is_draw(state, core.STAY_BASE) and not is_draw(state, core.PASS)
    corrector = DrawCorrector(VarianceReduction(resamples=3), env.unwrapped.rules, (0,))
    assert np.array_equal(corrector.corrections([[(state, core.STAY_BASE)], []], [0, -1]), np.zeros((2, 3)))
    assert corrector.corrected == 0
    drawn = corrector.corrections([[(state, core.STAY_BASE + 1)]], [-1])  # discards the first card: a draw
    assert corrector.corrected == 1 and drawn.shape == (1, 3)


def test_reproducible_and_exactly_zero_against_itself() -> None:
    options = VarianceReduction(resamples=3)
    runs = [
        ev.evaluate("random", "heuristic", players=4, deals=25, seed=1, progress=False, variance_reduction=options)
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    other = ev.evaluate("random", "heuristic", players=4, deals=25, seed=2, progress=False, variance_reduction=options)
    assert other.tables[0].variance_reduced != runs[0].tables[0].variance_reduced
    same = ev.evaluate(
        "heuristic", "heuristic", players=4, deals=25, seed=1, progress=False, variance_reduction=options
    )
    reduced = same.tables[0].variance_reduced
    assert reduced is not None and reduced.draws_corrected > 0
    assert reduced.replacement_advantage == 0.0


def test_the_plain_report_is_unchanged_and_shown_beside() -> None:
    plain = ev.evaluate("random", "heuristic", players=3, deals=20, seed=4, progress=False)
    both = ev.evaluate(
        "random", "heuristic", players=3, deals=20, seed=4, progress=False, variance_reduction=VarianceReduction()
    )
    assert dataclasses.replace(both.tables[0], variance_reduced=None) == plain.tables[0]
    assert "variance_reduced" not in plain.to_dict()["tables"][0]
    assert both.to_dict()["tables"][0]["variance_reduced"]["resamples"] == 32
    assert "variance-reduced (AIVAT)" in advantage_table([both], compact=True).columns
    assert all("variance" not in c for c in advantage_table([plain]).columns)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="value"):
        VarianceReduction("nope")
    with pytest.raises(ValueError, match="resamples"):
        VarianceReduction(resamples=0)
    with pytest.raises(ValueError, match="candidate_value"):
        VarianceReduction(hand_strength, candidate_value="ppo")


def test_the_command_line_reports_it_beside_the_plain_estimate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = ["eval", "--candidate", "random", "--field", "heuristic", "--players", "3", "--deals", "20", "--no-progress"]
    assert cli.main([*head, "--aivat", "--aivat-resamples", "2", "--out", str(tmp_path)]) == 0
    assert "variance-reduced (AIVAT)" in capsys.readouterr().out
    table = json.loads((tmp_path / "eval.json").read_text())["tables"][0]
    assert table["variance_reduced"]["value"] == "heuristic" and table["variance_reduced"]["resamples"] == 2
    for bad, message in (
        (["--aivat", "nope"], "--aivat: value: expected one of"),
        (["--aivat", "ppo:missing.npz"], "no such policy file"),
        (["--aivat-candidate", "ppo"], "--aivat-candidate: only with --aivat"),
    ):
        assert cli.main([*head, *bad, "--out", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
