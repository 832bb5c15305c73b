"""The transposition tables of the cinch's searches (``cinch_search``, ``cinch_relaxed``): open addressing with
linear probing over whole keys (rows of int64 words), so a hit is never a guess.

A table is ``tt_keys`` (one key a row) and ``tt_vals`` (a value >= 0 a stored entry, -1 an empty slot), its size a
power of two; a caller keeps it at most half full, so a probe always ends.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _hash(keys: np.ndarray, row: int, kw: int) -> int:
    """splitmix64's finaliser over the words of ``keys[row]``."""
    h = np.uint64(0)
    for i in range(kw):
        h = (h ^ np.uint64(keys[row, i])) + np.uint64(0x9E3779B97F4A7C15)
        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return int(np.int64(h >> np.uint64(1)))


@njit(cache=True)
def _tt_slot(tt_keys: np.ndarray, tt_vals: np.ndarray, keys: np.ndarray, row: int, kw: int) -> int:
    """The slot of the table holding the key ``keys[row]``, or the empty slot where it would go (linear probing)."""
    mask = tt_vals.shape[0] - 1
    i = _hash(keys, row, kw) & mask
    while tt_vals[i] >= 0:
        same = True
        for j in range(kw):
            if tt_keys[i, j] != keys[row, j]:
                same = False
                break
        if same:
            return int(i)
        i = (i + 1) & mask
    return int(i)
