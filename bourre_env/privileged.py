"""What the acting seat cannot see, as sparse features for a critic that learns from it during training only.

A critic that also reads the other seats' hands predicts a deal's chips far better than one that reads the
observation alone, so the advantages it gives the policy are less noisy (the "oracle" or "perfect
information" critic of PerfectDou and Suphx). The policy never reads these features: the batched trainer
(``train.ppo.trainer``, ``--privileged-critic``) feeds them to a separate value network, and the exported
actor is the same observation-only network as always.

Features: ``(MAX_PLAYERS - 1) * 52`` indicators, block ``r - 1`` for the seat ``r`` places after the acting
seat (``r = 1 .. num_players - 1``), card ``c`` of that block set when the seat holds ``c`` now. Seats that
passed hold no cards. Blocks past ``num_players - 1`` stay empty.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env import core

__all__ = ["HIDDEN_HAND_SIZE", "hidden_hand_entries"]

HIDDEN_HAND_SIZE = (core.MAX_PLAYERS - 1) * core.NUM_CARDS
"""Width of the privileged features."""


@njit(cache=True)
def _hidden_hand_entries(states: np.ndarray, rows: np.ndarray, num_players: int) -> tuple[np.ndarray, np.ndarray]:
    total = 0
    for i in range(rows.shape[0]):
        s = states[rows[i]]
        for r in range(1, num_players):
            total += core.popcount(s[core.S_HAND + (s[core.S_CUR] + r) % num_players])
    idx = np.empty(total, np.int16)
    counts = np.zeros(rows.shape[0], np.int64)
    k = 0
    for i in range(rows.shape[0]):
        s = states[rows[i]]
        start = k
        for r in range(1, num_players):
            hand = s[core.S_HAND + (s[core.S_CUR] + r) % num_players]
            for c in range(core.NUM_CARDS):
                if (hand >> c) & 1:
                    idx[k] = (r - 1) * core.NUM_CARDS + c
                    k += 1
        counts[i] = k - start
    return idx, counts


def hidden_hand_entries(
    states: np.ndarray, rows: np.ndarray, num_players: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The other seats' hands at ``states[rows]`` (each row's acting seat must be a seat, not -1), as sparse rows:
    (column int16, value float32 (all 1), count per row int64), in the layout of the module docstring."""
    if not 2 <= num_players <= core.MAX_PLAYERS:
        raise ValueError(f"num_players: between 2 and {core.MAX_PLAYERS}, got {num_players}")
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if rows.size and np.any(states[rows, core.S_CUR] < 0):
        raise ValueError("hidden_hand_entries: a row has no seat to act (its deal is over)")
    idx, counts = _hidden_hand_entries(states, rows, num_players)
    return idx, np.ones(idx.shape[0], np.float32), counts
