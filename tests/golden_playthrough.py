"""Golden playthroughs: seeded random games recorded in full, replayed by the test suite.

Each record holds the rule options, the seed, every (agent, action) in order, every reward
received, and a SHA-256 of all observations and masks seen, so any change of behaviour shows.
One file per rule preset (``bourre_env.core.rules.presets``): ``golden/playthroughs.json`` for
``standard``, ``golden/playthroughs_<preset>.json`` for the others. Regenerate deliberately
(after a documented rule change), all files or one preset's, with::

    python tests/golden_playthrough.py --write [--preset NAME]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import bourre_env

GOLDEN_DIR = Path(__file__).parent / "golden"
CASES: dict[str, list[dict[str, Any]]] = {
    "standard": [
        {"options": {"num_players": 5}, "seed": 1},
        {"options": {"num_players": 2}, "seed": 2},
        {"options": {"num_players": 8}, "seed": 3},
        {"options": {"num_players": 7, "deals_per_episode": 3, "tie": "divide", "pot_limit": 12}, "seed": 4},
        {"options": {"num_players": 4, "must_trump_when_cannot_win": False, "lead_trump_honors": True}, "seed": 5},
        {"options": {"num_players": 3, "ranks": 6, "hand_size": 4, "rake": 0.1}, "seed": 6},
    ],
    "double_ante": [
        {"options": {"rules": "double_ante", "num_players": 5, "deals_per_episode": 4}, "seed": 11},
        {"options": {"rules": "double_ante", "num_players": 8, "deals_per_episode": 2}, "seed": 12},
        {"options": {"rules": "double_ante", "num_players": 3, "deals_per_episode": 3, "pot_limit": 8}, "seed": 13},
    ],
    "dealer_antes_for_all": [
        {"options": {"rules": "dealer_antes_for_all", "num_players": 6, "deals_per_episode": 4}, "seed": 21},
        {"options": {"rules": "dealer_antes_for_all", "num_players": 2, "deals_per_episode": 3}, "seed": 22},
        {
            "options": {"rules": "dealer_antes_for_all", "num_players": 4, "deals_per_episode": 3, "tie": "divide"},
            "seed": 23,
        },
    ],
    "wikipedia": [
        {"options": {"rules": "wikipedia", "num_players": 7, "deals_per_episode": 2}, "seed": 31},
        {"options": {"rules": "wikipedia", "num_players": 8}, "seed": 32},
        {"options": {"rules": "wikipedia", "num_players": 4, "deals_per_episode": 2}, "seed": 33},
    ],
    "separate_trump_card": [
        {"options": {"rules": "separate_trump_card", "num_players": 5, "deals_per_episode": 3}, "seed": 41},
        {"options": {"rules": "separate_trump_card", "num_players": 8, "deals_per_episode": 2}, "seed": 42},
        {"options": {"rules": "separate_trump_card", "num_players": 3, "ranks": 6, "hand_size": 4}, "seed": 43},
    ],
    "separate_trump_card_dealer_may_take": [
        {
            "options": {"rules": "separate_trump_card_dealer_may_take", "num_players": 5, "deals_per_episode": 3},
            "seed": 51,
        },
        {
            "options": {"rules": "separate_trump_card_dealer_may_take", "num_players": 8, "deals_per_episode": 2},
            "seed": 52,
        },
        {
            "options": {
                "rules": "separate_trump_card_dealer_may_take",
                "num_players": 3,
                "ranks": 6,
                "hand_size": 4,
                "max_discard": 2,
            },
            "seed": 53,
        },
    ],
    "two_round_declaration": [
        {"options": {"rules": "two_round_declaration", "num_players": 5, "deals_per_episode": 3}, "seed": 61},
        {"options": {"rules": "two_round_declaration", "num_players": 8, "deals_per_episode": 2}, "seed": 62},
        {"options": {"rules": "two_round_declaration", "num_players": 3, "ranks": 6, "hand_size": 4}, "seed": 63},
    ],
    "simultaneous_declaration": [
        {"options": {"rules": "simultaneous_declaration", "num_players": 5, "deals_per_episode": 3}, "seed": 71},
        {"options": {"rules": "simultaneous_declaration", "num_players": 8, "deals_per_episode": 2}, "seed": 72},
        {
            "options": {"rules": "simultaneous_declaration", "num_players": 2, "deals_per_episode": 3, "play_ante": 1},
            "seed": 73,
        },
    ],
    "four_card": [
        {"options": {"rules": "four_card", "num_players": 5, "deals_per_episode": 3}, "seed": 81},
        {"options": {"rules": "four_card", "num_players": 8, "deals_per_episode": 2}, "seed": 82},
        {
            "options": {"rules": "four_card", "num_players": 3, "deals_per_episode": 3, "illegal_action": "renege"},
            "seed": 83,
        },
    ],
    "dealer_picks_trump": [
        {"options": {"rules": "dealer_picks_trump", "num_players": 5, "deals_per_episode": 3}, "seed": 91},
        {"options": {"rules": "dealer_picks_trump", "num_players": 8, "deals_per_episode": 2}, "seed": 92},
        {"options": {"rules": "dealer_picks_trump", "num_players": 3, "ranks": 6, "hand_size": 4}, "seed": 93},
    ],
}


def golden_path(preset: str) -> Path:
    """The golden file of one preset (``standard`` keeps the project's first file name)."""
    return GOLDEN_DIR / ("playthroughs.json" if preset == "standard" else f"playthroughs_{preset}.json")


def play(options: dict[str, Any], seed: int) -> dict[str, Any]:
    env = bourre_env.env(**options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    digest = hashlib.sha256()
    moves: list[list[Any]] = []
    rewards: list[list[Any]] = []
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        digest.update(obs["observation"].tobytes())
        digest.update(obs["action_mask"].tobytes())
        if reward:
            rewards.append([agent, reward])
        if terminated or truncated:
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        moves.append([agent, action])
        env.step(action)
    return {
        "options": options,
        "seed": seed,
        "moves": moves,
        "rewards": rewards,
        "observations_sha256": digest.hexdigest(),
    }


def playthroughs(preset: str) -> list[dict[str, Any]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [play(case["options"], case["seed"]) for case in CASES[preset]]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="overwrite the golden files with fresh playthroughs")
    parser.add_argument("--preset", choices=sorted(CASES), help="only this preset's file (default: every preset)")
    args = parser.parse_args()
    for preset in [args.preset] if args.preset else list(CASES):
        records = playthroughs(preset)
        path = golden_path(preset)
        if args.write:
            path.parent.mkdir(exist_ok=True)
            path.write_text(json.dumps(records, indent=1) + "\n")
            print(f"wrote {len(records)} playthroughs to {path}")
        else:
            print(f"{preset}: " + json.dumps(records[0], indent=1)[:2000])
