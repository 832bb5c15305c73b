"""``bourre_env.deal_recorder.DealRecorder`` writes ``bourre_env.history.Recording``'s record, entry for entry."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import bourre_env
from bourre_env import history
from bourre_env.deal_recorder import DealRecorder
from train.eval.duplicate import table_rules
from train.table import Deal, Decision, drive, game, make_deals


def random_legal(seed: int) -> Callable[[Decision], int]:
    """Random legal moves from ``seed``: games with draws, passes and tricks."""
    rng = np.random.default_rng(seed)
    return lambda decision: int(rng.choice(np.flatnonzero(decision.mask)))


def check_same_record(
    recording: history.Recording, plain: object, recorder: DealRecorder, deal: Deal, seed: int, labels: list[str]
) -> None:
    expected_rows = drive(game(recording, deal, labels), random_legal(seed))
    recorder.next_game(deal.deck, deal.env_seed)
    rows = drive(game(plain, deal, labels, observers=(recorder,)), random_legal(seed))
    assert (rows == expected_rows).all()
    assert recorder.history(labels) == recording.history(labels)


@pytest.mark.parametrize("players", [3, 5, 7])
def test_the_recorders_history_is_the_recording_envs(players: int) -> None:
    rules = table_rules(players, {})
    labels = [f"seat {s}" for s in range(players)]
    recording = history.Recording(bourre_env.env(num_players=players), preset="standard")
    plain = bourre_env.env(num_players=players)
    recorder = DealRecorder(plain.unwrapped.rules, "standard")
    deals = make_deals(11, rules, 40)
    for k in range(len(deals)):
        check_same_record(recording, plain, recorder, deals.deal(k), k, labels)


def test_an_episode_of_several_deals_is_recorded_deal_by_deal_as_recording_does() -> None:
    plain = bourre_env.env(num_players=4, deals_per_episode=3)
    recording = history.Recording(bourre_env.env(num_players=4, deals_per_episode=3))
    recorder = DealRecorder(plain.unwrapped.rules)
    deals = make_deals(5, plain.unwrapped.rules, 6)
    for k in range(len(deals)):
        check_same_record(recording, plain, recorder, deals.deal(k), k, ["a", "b", "c", "d"])


def test_a_history_before_any_deal_is_over_is_refused() -> None:
    recorder = DealRecorder(table_rules(3, {}))
    with pytest.raises(ValueError, match="no finished deal"):
        recorder.history(["a", "b", "c"])
