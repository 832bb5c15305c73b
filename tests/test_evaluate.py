"""Duplicate evaluation and tournaments: exact self-play cancellation, reproducibility, worker invariance."""

from __future__ import annotations

import json
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
import bourre_env
from agents.base import Observation, legal_actions
from bourre_env import memory
from bourre_env.core.rules import Rules
from bourre_env.observation import OBS_SIZE
from train.eval import duplicate as ev
from train.eval import tournament as tournament_module
from train.eval.tournament import TournamentTable, draw_lineups, pool_names, tournament


class HashAgent:
    """Deterministic and seat-blind: the action is a hash of the observation, so identical copies of it
    play identically from any seat, and the play still varies from deal to deal."""

    name = "test_hash"

    def act(self, observation: Observation) -> int:
        legal = legal_actions(observation)
        return int(legal[zlib.crc32(observation["observation"].tobytes()) % legal.size])

    def reset(self) -> None:
        pass


# Registered in this process only: tests that use it run with workers=1 (spawned workers would not know it).
agents.register("test_hash", lambda variant, seed: HashAgent())


def test_t_quantile_matches_published_values() -> None:
    for df, expected in (
        (1, 12.706204736),
        (2, 4.302652730),
        (10, 2.228138852),
        (30, 2.042272456),
        (1000, 1.962339081),
    ):
        assert ev.t_quantile(0.975, df) == pytest.approx(expected, abs=1e-8)
    interval = ev.t_interval(np.array([1.0, 2.0, 3.0]))
    assert interval is not None
    lo, hi = interval
    assert (lo + hi) / 2 == pytest.approx(2.0) and hi - lo == pytest.approx(2 * 4.302652730 / np.sqrt(3))
    assert ev.t_interval(np.array([1.0])) is None


def test_self_play_of_a_deterministic_agent_cancels_exactly() -> None:
    """Every seat the same deterministic agent: all rotations replay one game, so the advantage is 0 to the bit."""
    report = ev.evaluate("test_hash", "test_hash", players=(3, 5), deals=30, seed=4, workers=1, progress=False)
    for table in report.tables:
        assert table.advantage == table.replacement_advantage == 0.0
        assert table.advantage_ci95 == table.replacement_advantage_ci95 == (0.0, 0.0)
        assert table.candidate == table.field == table.baseline  # every statistic, not only the chips
        # Not a degenerate deal set: chips move (a single deal is not zero-sum) and the deals differ.
        assert table.candidate.chips != 0.0 and table.candidate.chips_ci95 is not None
        assert table.candidate.chips_ci95[0] < table.candidate.chips_ci95[1]


@pytest.mark.parametrize("spec", ["random", "heuristic"])
def test_a_seeded_agent_against_copies_of_itself_scores_exactly_zero(spec: str) -> None:
    """The candidate is seeded like the field's agent of its seat, so every rotation replays the all-field
    table: both advantages are 0 to the bit although the agents draw from their generators."""
    report = ev.evaluate(spec, spec, players=(3, 5), deals=30, seed=6, workers=1, progress=False)
    for table in report.tables:
        assert table.advantage == table.replacement_advantage == 0.0
        assert table.advantage_ci95 == table.replacement_advantage_ci95 == (0.0, 0.0)
        assert table.candidate == table.field == table.baseline
        assert table.candidate.chips_ci95 is not None and table.candidate.chips_ci95[0] < table.candidate.chips_ci95[1]


def test_candidate_differs_from_field_when_it_should() -> None:
    report = ev.evaluate("test_hash", "random", players=4, deals=20, seed=1, workers=1, progress=False)
    (table,) = report.tables
    assert table.advantage != 0.0 and table.replacement_advantage != 0.0 and table.games == 80
    assert table.replacement_advantage == pytest.approx(table.candidate.chips - table.baseline.chips)
    assert report.field == "random" and report.table(4) is table


def _report_of(chips: list[list[list[int]]], baseline: list[list[int]]) -> ev.TableReport:
    """A ``TableReport`` from chips alone: ``chips[deal][rotation][seat]`` and ``baseline[deal][seat]``."""
    outcomes = np.zeros((*np.shape(chips), ev.NUM_OUTCOMES), dtype=np.int64)
    outcomes[..., ev.CHIPS] = chips
    base = np.zeros((*np.shape(baseline), ev.NUM_OUTCOMES), dtype=np.int64)
    base[..., ev.CHIPS] = baseline
    return ev.TableReport.of(outcomes, base)


def test_both_advantages_by_hand() -> None:
    # 2 players, 3 deals; rotation r has the candidate in seat r.
    table = _report_of(
        chips=[[[3, -2], [-1, 1]], [[-1, 2], [2, -1]], [[0, -1], [-1, 2]]], baseline=[[2, -1], [-1, -1], [1, -2]]
    )
    # table:       deal 0 ((3 + 2) + (1 + 1)) / 2 = 3.5, deal 1 (-3 - 3) / 2 = -3, deal 2 (1 + 3) / 2 = 2
    # replacement: deal 0 ((3 - 2) + (1 + 1)) / 2 = 1.5, deal 1 (0 + 0) / 2 = 0,  deal 2 (-1 + 4) / 2 = 1.5
    assert table.advantage == pytest.approx(2.5 / 3)
    assert table.replacement_advantage == 1.0
    assert table.candidate.chips == pytest.approx(2 / 3) and table.baseline.chips == pytest.approx(-1 / 3)
    # t-interval of (1.5, 0, 1.5): standard deviation sqrt(0.75), 2 degrees of freedom
    assert table.replacement_advantage_ci95 == pytest.approx((1 - 4.302652730 / 2, 1 + 4.302652730 / 2))
    assert table.advantage_ci95 == pytest.approx(ev.t_interval(np.array([3.5, -3.0, 2.0])))

    # 3 players, one deal: a candidate that always passes (-1) behind the others at its tables, ahead of the
    # field's agent in its seat at the all-field table, where chips leave into the pot.
    tight = _report_of(chips=[[[-1, 1, 0], [0, -1, 1], [1, 0, -1]]], baseline=[[-3, 1, -2]])
    assert tight.advantage == -1.5  # -1 - (1 + 0) / 2 in every rotation
    assert tight.replacement_advantage == pytest.approx(1 / 3)  # (2 - 2 + 1) / 3
    assert tight.advantage_ci95 is None and tight.replacement_advantage_ci95 is None  # one deal: no interval


def test_replacement_advantage_replays_the_seeding_of_the_docs() -> None:
    """Played again here from the documented seeds, seat s of every table from (seed, N, chunk, 1 + s):
    25 deals are two chunks, the second with fresh agents."""
    n, seed, count = 3, 5, 25
    report = ev.evaluate("test_hash", "random", players=n, deals=count, seed=seed, workers=1, progress=False)
    deals = ev.make_deals(seed, Rules(num_players=n), count)
    env = bourre_env.env(num_players=n)
    candidate_sum, baseline_sum = np.zeros(count, dtype=np.int64), np.zeros(count, dtype=np.int64)
    for chunk, (start, stop) in enumerate(ev.chunk_bounds(count)):
        seeds = [ev.agent_seed(seed, n, chunk, 1 + s) for s in range(n)]
        all_field = [agents.make("random", seeds[s]) for s in range(n)]
        rotations = [[agents.make("test_hash" if s == r else "random", seeds[s]) for s in range(n)] for r in range(n)]
        for k in range(start, stop):
            for r in range(n):
                candidate_sum[k] += ev.play_deal(env, rotations[r], deals, k)[r, ev.CHIPS]
            baseline_sum[k] = ev.play_deal(env, all_field, deals, k)[:, ev.CHIPS].sum()
    (table,) = report.tables
    assert table.replacement_advantage == pytest.approx(((candidate_sum - baseline_sum) / n).mean(), abs=1e-12)
    assert table.baseline.chips == pytest.approx((baseline_sum / n).mean(), abs=1e-12)
    assert table.replacement_advantage_ci95 == pytest.approx(ev.t_interval((candidate_sum - baseline_sum) / n))


def test_same_seed_same_report_other_seed_other_report() -> None:
    a = ev.evaluate("random", "random", players=(2, 4), deals=25, seed=7, workers=1, progress=False)
    b = ev.evaluate("random", "random", players=(2, 4), deals=25, seed=7, workers=1, progress=False)
    c = ev.evaluate("random", "random", players=(2, 4), deals=25, seed=8, workers=1, progress=False)
    assert a.to_dict() == b.to_dict()
    assert a.to_dict() != c.to_dict()
    json.dumps(a.to_dict(), allow_nan=False)  # plain JSON: no numpy scalars, no NaN


def test_worker_count_does_not_change_the_report() -> None:
    """45 deals = 3 chunks (the last one partial), in 1 or 2 processes; the all-field tables included."""
    args = dict(
        candidate="random", field=["random", "heuristic", "random"], players=3, deals=45, seed=3, progress=False
    )
    one = ev.evaluate(workers=1, **args)  # type: ignore[arg-type]
    two = ev.evaluate(workers=2, **args)  # type: ignore[arg-type]
    assert one.to_dict() == two.to_dict()
    table = one.to_dict()["tables"][0]
    assert table["replacement_advantage"] != 0.0 and table["replacement_advantage_ci95"] is not None
    assert table["baseline"]["chips"] != table["candidate"]["chips"]


def test_deals_are_fixed_by_seed_and_independent_of_the_count() -> None:
    rules = Rules(num_players=4)
    short, long = ev.make_deals(5, rules, 10), ev.make_deals(5, rules, 30)
    assert np.array_equal(short.decks, long.decks[:10]) and np.array_equal(short.dealers, long.dealers[:10])
    assert np.array_equal(short.env_seeds, long.env_seeds[:10])
    assert sorted(short.decks[3].tolist()) == rules.deck_cards()
    assert len({tuple(d) for d in long.decks.tolist()}) == 30


def test_outcomes_obey_the_rules() -> None:
    """Per game: tricks sum to the hand size; at most one pot winner, never beside a tie; bourré = played, no trick."""
    n = 4
    deals = ev.make_deals(0, Rules(num_players=n), 20)
    job = ev._EvalJob("random", ("random",) * n, {"num_players": n}, 0, 0, deals)
    rotations, all_field, pots, played, corrections, corrected, _ = ev._run_eval_job(job)
    assert played.shape == (20, n + 1) and (played == 1).all() and (pots >= 0).all()
    assert corrections is None and corrected == 0  # no variance reduction asked for
    assert rotations.shape == (20, n, n, ev.NUM_OUTCOMES) and all_field.shape == (20, n, ev.NUM_OUTCOMES)
    out = np.concatenate([rotations.reshape(-1, n, ev.NUM_OUTCOMES), all_field])
    assert (out[:, :, ev.TRICKS].sum(axis=1) == 5).all()
    winners, tied = out[:, :, ev.WON].sum(axis=1), out[:, :, ev.TIED].sum(axis=1)
    assert (winners <= 1).all() and ((winners == 0) | (tied == 0)).all() and ((tied == 0) | (tied >= 2)).all()
    bourre = out[:, :, ev.BOURRE] == 1
    assert (bourre == ((out[:, :, ev.PLAYED] == 1) & (out[:, :, ev.TRICKS] == 0))).all()
    assert ((out[:, :, ev.PLAYED] == 1) | (out[:, :, ev.CHIPS] == -1)).all()  # a passed player lost its ante only


def test_field_per_seat_and_bad_arguments() -> None:
    assert ev.field_per_seat("random", 3) == ("random",) * 3
    assert ev.field_per_seat(["a", "b", "c"], 3) == ("a", "b", "c")
    with pytest.raises(ValueError, match="exactly 4 specs"):
        ev.evaluate("random", ["random", "random"], players=4, deals=2, progress=False)
    with pytest.raises(ValueError, match="unknown agent"):
        ev.evaluate("nobody", "random", players=4, deals=2, progress=False)
    with pytest.raises(ValueError, match="deals_per_episode"):
        ev.evaluate("random", players=4, deals=2, progress=False, rule_options={"deals_per_episode": 2})


def test_rule_options_reach_the_table() -> None:
    report = ev.evaluate("random", players=3, deals=10, seed=0, progress=False, rule_options={"tie": "divide"})
    assert report.rule_options == {"tie": "divide"}
    assert report.to_dict() != ev.evaluate("random", players=3, deals=10, seed=0, progress=False).to_dict()


def test_lineups_balance_agents_and_allow_repeats() -> None:
    lineups = draw_lineups(0, 5, 3, 50)  # pool smaller than the table: everyone at every table
    assert all(sorted(np.bincount(row, minlength=3).tolist()) == [1, 2, 2] for row in lineups)
    lineups = draw_lineups(0, 3, 6, 60)  # pool larger: distinct agents
    assert all(len(set(row.tolist())) == 3 for row in lineups)
    assert pool_names(["random", "x", "random"]) == ["random#1", "x", "random#2"]


def test_tournament_is_reproducible_and_consistent(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pool = ["random", "test_hash", "random"]
    a = tournament(pool, players=(2, 4), deals=30, seed=2, workers=1, progress=False)
    b = tournament(pool, players=(2, 4), deals=30, seed=2, workers=1, progress=False)
    assert a.to_dict() == b.to_dict()
    assert a.baseline == "random"  # the first of the pool
    for table in a.tables:
        k = len(pool)
        assert sorted(r.name for r in table.agents) == sorted(table.names) == ["random#1", "random#2", "test_hash"]
        if table.players >= k:  # everyone at every table: the par is the same for all, over all the deals
            for r in table.agents:
                assert r.replacement_advantage == pytest.approx(r.chips - table.baseline_chips)  # type: ignore[operator]
        order = [r.chips if table.every_agent_every_deal else r.ordinal for r in table.agents]
        assert order == sorted(order, reverse=True)  # type: ignore[type-var]
        for i in range(k):
            assert table.margin[i][i] == 0.0
            for j in range(k):
                if table.margin[i][j] is not None:
                    assert table.margin[i][j] == pytest.approx(-table.margin[j][i])  # type: ignore[operator]
                    assert table.counts[i][j] == table.counts[j][i] > 0
        for r in table.agents:
            assert r.ordinal == pytest.approx(r.mu - 3 * r.sigma)
    paths = a.save(tmp_path)
    assert {p.name for p in paths} == {"tournament.json", "tournament.md", "tournament_2p.png", "tournament_4p.png"}
    assert json.loads((tmp_path / "tournament.json").read_text())["pool"] == pool
    assert (tmp_path / "tournament_2p.png").read_bytes()[:4] == b"\x89PNG"
    assert "| rank | agent |" in (tmp_path / "tournament.md").read_text()
    assert "| replacement vs all-random |" in (tmp_path / "tournament.md").read_text()


def test_tournament_replacement_advantage_by_hand() -> None:
    """2 players, agents 0 and 1, two deals with the lineup swapped; chips[deal][rotation][member]."""
    lineups = np.array([[0, 1], [1, 0]])
    outcomes = np.zeros((2, 2, 2, ev.NUM_OUTCOMES), dtype=np.int64)
    outcomes[..., ev.CHIPS] = [[[2, -1], [1, -2]], [[0, 1], [-1, -1]]]
    baseline = np.zeros((2, 2, ev.NUM_OUTCOMES), dtype=np.int64)
    baseline[..., ev.CHIPS] = [[0, -2], [1, 1]]  # par: -1 and +1 chips per seat
    table = TournamentTable.of(["a", "b"], lineups, outcomes, baseline)
    result = {r.name: r for r in table.agents}
    # a: deal 0 (2 + 1) / 2 - (-1) = 2.5, deal 1 (1 - 1) / 2 - 1 = -1; b: -1.5 + 1 = -0.5, then -0.5 - 1 = -1.5
    assert result["a"].replacement_advantage == 0.75 and result["b"].replacement_advantage == -1.0
    assert result["a"].replacement_advantage_ci95 == pytest.approx(ev.t_interval(np.array([2.5, -1.0])))
    assert table.baseline_chips == 0.0 and result["a"].chips == 0.75 and result["b"].chips == -1.0


def test_tournament_of_copies_of_a_deterministic_agent_matches_its_par_exactly() -> None:
    report = tournament(["test_hash", "test_hash"], players=3, deals=25, seed=3, workers=1, progress=False)
    (table,) = report.tables
    assert table.baseline_chips != 0.0
    for r in table.agents:
        assert r.replacement_advantage == 0.0 and r.replacement_advantage_ci95 == (0.0, 0.0)


def test_tournament_worker_count_does_not_change_results() -> None:
    args = dict(pool=["random", "random", "random", "random"], players=3, deals=45, seed=1, progress=False)
    assert (
        tournament(workers=1, **args).to_dict()  # type: ignore[arg-type]
        == tournament(workers=2, **args).to_dict()
    )  # type: ignore[arg-type]


def test_deals_drawn_chunk_by_chunk_are_the_deals_of_make_deals() -> None:
    rules = Rules(num_players=5)
    whole = ev.make_deals(7, rules, 45)
    chunks = list(ev.iter_deals(7, rules, 45))
    assert [len(c) for c in chunks] == [ev.CHUNK_DEALS, ev.CHUNK_DEALS, 5]
    for name in ("decks", "dealers", "env_seeds"):
        assert np.array_equal(np.concatenate([getattr(c, name) for c in chunks]), getattr(whole, name))


@pytest.mark.parametrize("run", ["evaluate", "tournament"])
def test_a_run_too_large_for_memory_is_refused_before_it_starts(run: str) -> None:
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"--deals 2000000000 \(at 5 players\) needs about .* TiB of memory"):
        if run == "evaluate":
            ev.evaluate("test_hash", "test_hash", players=5, deals=2_000_000_000, progress=False)
        else:
            tournament(["test_hash", "random"], players=5, deals=2_000_000_000, progress=False)
    assert time.perf_counter() - started < 5.0


@pytest.mark.parametrize("run", ["evaluate", "tournament"])
def test_a_long_run_starts_at_once_and_stops_on_ctrl_c(monkeypatch: pytest.MonkeyPatch, run: str) -> None:
    """Two billion deals, on a machine said to hold their outcomes: the first chunks run at once (no deck or
    lineup of the later ones is drawn up front), and a Ctrl-C in the third one ends the run."""
    monkeypatch.setattr(memory, "available_bytes", lambda: 1 << 60)
    module: Any = ev if run == "evaluate" else tournament_module
    name = "_run_eval_job" if run == "evaluate" else "_run_job"
    chunks: list[int] = []
    play_chunk = getattr(module, name)

    def interrupted_in_the_third(job: Any) -> tuple[np.ndarray, np.ndarray]:
        chunks.append(job.chunk)
        if len(chunks) == 3:
            raise KeyboardInterrupt
        return play_chunk(job)  # type: ignore[no-any-return]

    monkeypatch.setattr(module, name, interrupted_in_the_third)
    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        if run == "evaluate":
            ev.evaluate("test_hash", "test_hash", players=3, deals=2_000_000_000, progress=False)
        else:
            tournament(["test_hash", "random"], players=3, deals=2_000_000_000, progress=False)
    assert chunks == [0, 1, 2] and time.perf_counter() - started < 10.0


def test_lineups_drawn_chunk_by_chunk_are_those_of_one_draw() -> None:
    """Against the one-draw definition of the module docstring, written out here as the oracle."""
    rng = np.random.default_rng([4, 5, 1])
    expected = np.empty((45, 5), dtype=np.int64)
    for k in range(45):
        order = rng.permutation(3)
        expected[k] = rng.permutation(np.concatenate([np.tile(np.arange(3), 1), order[:2]]))
    chunks = list(tournament_module.iter_lineups(4, 5, 3, 45))
    assert [len(c) for c in chunks] == [20, 20, 5]
    assert np.array_equal(np.concatenate(chunks), expected)
    assert np.array_equal(draw_lineups(4, 5, 3, 45), expected)


def test_a_policy_file_is_read_once_per_evaluation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Agents are built per chunk and per rotation; the policy file behind them is read and checked once, and the
    report is the one of agents that each read it."""
    import agents.ppo as ppo_module

    rng = np.random.default_rng(0)
    width, actions = 8, bourre_env.core.NUM_ACTIONS
    hidden = ((rng.normal(size=(width, OBS_SIZE)).astype(np.float32), np.zeros(width, np.float32)),)
    action = (rng.normal(size=(actions, width)).astype(np.float32), np.zeros(actions, np.float32))
    path = ppo_module.save_policy(tmp_path / "p.npz", ppo_module.PolicyWeights(hidden, action, "relu", {}))
    loads: list[object] = []
    load = ppo_module.load_policy
    monkeypatch.setattr(ppo_module, "load_policy", lambda p: loads.append(p) or load(p))

    def report(**reads: object) -> dict[str, object]:
        loads.clear()
        with monkeypatch.context() as m:
            for name, value in reads.items():
                m.setattr(ppo_module, name, value)
            result = ev.evaluate(
                f"ppo:{path}", "random", players=3, deals=2 * ev.CHUNK_DEALS + 5, seed=2, workers=1, progress=False
            )
        return result.to_dict()

    each_agent_reads = report(cached_policy=ppo_module.load_policy)
    assert len(loads) == 1 + 3 * 3  # the spec checked, then three chunks of three rotations
    ppo_module._cache.clear()
    assert report() == each_agent_reads
    assert len(loads) == 1
