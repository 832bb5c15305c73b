"""``train.arena.record.HandRecorder`` writes ``bourre_env.history.Recording``'s record, entry for entry."""

from __future__ import annotations

import numpy as np
import pytest

import bourre_env
from bourre_env import history
from train.arena.record import HandRecorder
from train.eval.duplicate import table_rules
from train.table import drive, game, make_deals


@pytest.mark.parametrize("players", [3, 5, 7])
def test_the_recorders_history_is_the_recording_envs(players: int) -> None:
    rules = table_rules(players, {})
    deals = make_deals(11, rules, 40)
    labels = [f"seat {s}" for s in range(players)]
    recording = history.Recording(bourre_env.env(num_players=players), preset="standard")
    plain = bourre_env.env(num_players=players)
    recorder = HandRecorder(plain.unwrapped.rules, "standard")
    for k in range(len(deals)):
        deal = deals.deal(k)
        choices = np.random.default_rng([k, players])  # random legal moves: draws, passes and tricks

        def decide(decision, rng=choices) -> int:  # type: ignore[no-untyped-def]
            return int(rng.choice(np.flatnonzero(decision.mask)))

        expected_rows = drive(game(recording, deal, labels), decide)
        recorder.deal = deal
        choices = np.random.default_rng([k, players])
        rows = drive(game(plain, deal, labels, observers=(recorder,)), lambda d, rng=choices: int(
            rng.choice(np.flatnonzero(d.mask))))  # fmt: skip
        assert (rows == expected_rows).all()
        assert recorder.history(labels) == recording.history(labels), f"deal {k}"
