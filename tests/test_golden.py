"""Layer 4: recorded playthroughs replay exactly (actions, rewards and a hash of every observation), per preset."""

from __future__ import annotations

import json

import pytest
from golden_playthrough import CASES, golden_path, play

from bourre_env.core.rules import presets

RECORDS = {preset: json.loads(golden_path(preset).read_text()) for preset in CASES}


def test_every_preset_has_a_golden_file() -> None:
    assert list(CASES) == list(presets)


@pytest.mark.parametrize("preset", list(CASES))
def test_golden_file_covers_every_case(preset: str) -> None:
    assert [(r["options"], r["seed"]) for r in RECORDS[preset]] == [(c["options"], c["seed"]) for c in CASES[preset]]
    for case in CASES[preset]:
        assert case["options"].get("rules", "standard") == preset


@pytest.mark.parametrize(
    "record",
    [r for preset in CASES for r in RECORDS[preset]],
    ids=lambda r: f"{r['options'].get('rules', 'standard')}-seed{r['seed']}",
)
def test_playthrough_replays_exactly(record: dict) -> None:
    fresh = play(record["options"], record["seed"])
    assert fresh["moves"] == record["moves"]
    assert fresh["rewards"] == record["rewards"]
    assert fresh["observations_sha256"] == record["observations_sha256"]
