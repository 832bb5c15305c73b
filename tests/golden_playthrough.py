"""Golden playthroughs: seeded random games recorded in full, replayed by the test suite.

Each record holds the rule options, the seed, every (agent, action) in order, every reward
received, and a SHA-256 of all observations and masks seen, so any change of behaviour shows.
Regenerate deliberately (after a documented rule change) with::

    python tests/golden_playthrough.py --write
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

GOLDEN = Path(__file__).parent / "golden" / "playthroughs.json"
CASES: list[dict[str, Any]] = [
    {"options": {"num_players": 5}, "seed": 1},
    {"options": {"num_players": 2}, "seed": 2},
    {"options": {"num_players": 8}, "seed": 3},
    {"options": {"num_players": 7, "deals_per_episode": 3, "tie": "divide", "pot_limit": 12}, "seed": 4},
    {"options": {"num_players": 4, "must_trump_when_cannot_win": False, "lead_trump_honors": True}, "seed": 5},
    {"options": {"num_players": 3, "ranks": 6, "hand_size": 4, "rake": 0.1}, "seed": 6},
]


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
    return {"options": options, "seed": seed, "moves": moves, "rewards": rewards,
            "observations_sha256": digest.hexdigest()}


def all_playthroughs() -> list[dict[str, Any]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [play(case["options"], case["seed"]) for case in CASES]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="overwrite the golden file with fresh playthroughs")
    args = parser.parse_args()
    records = all_playthroughs()
    if args.write:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(records, indent=1) + "\n")
        print(f"wrote {len(records)} playthroughs to {GOLDEN}")
    else:
        print(json.dumps(records[0], indent=1)[:2000])
