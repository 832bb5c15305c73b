"""Layer 4: recorded playthroughs replay exactly (actions, rewards and a hash of every observation)."""

from __future__ import annotations

import json

import pytest
from golden_playthrough import CASES, GOLDEN, play

RECORDS = json.loads(GOLDEN.read_text())


def test_golden_file_covers_every_case() -> None:
    assert [(r["options"], r["seed"]) for r in RECORDS] == [(c["options"], c["seed"]) for c in CASES]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: f"seed{r['seed']}")
def test_playthrough_replays_exactly(record: dict) -> None:
    fresh = play(record["options"], record["seed"])
    assert fresh["moves"] == record["moves"]
    assert fresh["rewards"] == record["rewards"]
    assert fresh["observations_sha256"] == record["observations_sha256"]
