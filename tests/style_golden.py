"""The style zoo's golden decisions (``tests/golden/styles.npz``): every style's observations, masks and actions in
real play under several rule options, as ``StyleAgent`` decided them before its rules were compiled (commit 7bdc2d7).

Each (rule set, style) pair has one agent, seeded by the rule set's index, that plays every seat given to that style
(seat ``s`` of episode ``e`` plays ``STYLES[(e + s) % 6]``): its decisions are stored in the order it made them, so
that a fresh agent of the same seed, fed them in that order, must draw the same random numbers and answer the same.
Observations are stored sparse (most entries are 0), masks as bits.

    python tests/style_golden.py     # records the file anew (only after a change of the styles' habits)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

PATH = Path(__file__).resolve().parent / "golden" / "styles.npz"
STYLE_NAMES = ("eager-random", "eager-high", "eager-low", "station", "rock", "coin-flip")
RULES: list[dict[str, Any]] = [
    {"num_players": 2},
    {"num_players": 8, "max_discard": 2},
    {"num_players": 4, "trump_card": "named_by_dealer"},
    {"num_players": 5, "declaration": "two_rounds", "play_ante": 1},
    {"num_players": 3, "declaration": "simultaneous", "entry_requirement": "trump_or_club"},
    {"num_players": 6, "second_pass_ante": 1, "trump_card": "separate_dealer_may_take"},
    {"num_players": 3, "ranks": 6, "hand_size": 4, "deals_per_episode": 3},
    {"num_players": 7, "trump_card": "named_by_dealer", "max_discard": 3},
]
EPISODES = 16


def record() -> dict[str, np.ndarray]:
    """Play the episodes and return the arrays of the file."""
    import bourre_env
    from agents.styles import StyleAgent

    rows: list[tuple[int, int, np.ndarray, np.ndarray, int]] = []  # (rule set, style, observation, mask, action)
    for r, config in enumerate(RULES):
        table = {s: StyleAgent(name, seed=r) for s, name in enumerate(STYLE_NAMES)}
        env = bourre_env.env(**config)
        for episode in range(EPISODES):
            env.reset(seed=1000 * r + episode)
            seat_of = env.unwrapped.agent_name_mapping
            for name in env.agent_iter():
                obs, _, terminated, truncated, _ = env.last()
                if terminated or truncated:
                    env.step(None)
                    continue
                style = (episode + seat_of[name]) % len(STYLE_NAMES)
                action = table[style].act(obs)
                rows.append((r, style, obs["observation"].copy(), obs["action_mask"].copy(), action))
                env.step(action)
    return encode(rows)


def encode(rows: list[tuple[int, int, np.ndarray, np.ndarray, int]]) -> dict[str, np.ndarray]:
    obs = np.stack([row[2] for row in rows]).astype(np.float32)
    counts = (obs != 0).sum(axis=1)
    where = np.nonzero(obs)
    return {
        "rule_set": np.array([row[0] for row in rows], np.int8),
        "style": np.array([row[1] for row in rows], np.int8),
        "action": np.array([row[4] for row in rows], np.int16),
        "obs_size": np.array(obs.shape[1], np.int64),
        "obs_ptr": np.concatenate([[0], np.cumsum(counts)]).astype(np.int32),
        "obs_idx": where[1].astype(np.int16),
        "obs_val": obs[where].astype(np.float32),
        "mask_bits": np.packbits(np.stack([row[3] for row in rows]).astype(bool), axis=1),
        "mask_size": np.array(rows[0][3].shape[0], np.int64),
    }


def load(path: Path = PATH) -> dict[str, np.ndarray]:
    """The file's decisions: ``rule_set``, ``style`` (index into ``STYLE_NAMES``), ``action``, and the dense float32
    ``observations`` and int8 ``masks``."""
    with np.load(path) as data:
        stored = {key: data[key] for key in data.files}
    n = stored["action"].shape[0]
    obs = np.zeros((n, int(stored["obs_size"])), np.float32)
    ptr = stored["obs_ptr"]
    rows = np.repeat(np.arange(n), np.diff(ptr))
    obs[rows, stored["obs_idx"].astype(np.int64)] = stored["obs_val"]
    masks = np.unpackbits(stored["mask_bits"], axis=1, count=int(stored["mask_size"])).astype(np.int8)
    return {
        "rule_set": stored["rule_set"].astype(np.int64),
        "style": stored["style"].astype(np.int64),
        "action": stored["action"].astype(np.int64),
        "observations": obs,
        "masks": masks,
    }


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    arrays = record()
    np.savez_compressed(PATH, **arrays)
    print(f"{PATH}: {arrays['action'].shape[0]} decisions, {PATH.stat().st_size} bytes")
