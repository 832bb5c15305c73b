"""Refutations of the cinch found in sampled worlds: the unseen cards dealt out, then the exhaustive search of
``cinch_search`` in that one deal.

The exhaustive search places an opponent's card only when the opponent plays it, so it ranges over every placement
at once. Where the unseen cards exactly fill the opponents' hands (the stock run out, nothing else out of play) and
the refuting line needs the opponents to keep their trumps, its move ordering leads it through millions of lines in
which the opponents throw side cards and prove voids, each line failing only deep in the deal when no placement is
left that fits them (two 8-player positions of the sampler's long test, with four discards allowed, took 9 and 48 s:
``tests/golden/cinch_sampled_refutations.json``). Dealt out, the same position has no placement left to choose:
each opponent plays only the cards it holds, and the first lines of the search refute it, in 33 to 41 nodes in
every world tried.

So, after the exhaustive search's first pass, ``sampled_world_refutation`` deals ``SAMPLED_WORLDS`` worlds and
searches each for ``WORLD_NODE_CAP`` nodes. A world is a placement the definition counts (each opponent's cards
drawn from the unseen cards its plays do not rule out, its known held cards kept, as many as it holds, the rest out
of play), and a line of play in it is a line of the exhaustive search, so a refutation found there is one of the
position: this test only ever refutes, and every answer stays exact. The worlds are drawn by a hash of the
position (no hidden randomness: the same position deals the same worlds).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core.bits import _bit, _n, lowest_card, popcount
from bourre_env.core.cinch_bounds import _gone_for, _hands_completable
from bourre_env.core.cinch_options import _mix
from bourre_env.core.cinch_search import exhaustive_search, root_frame
from bourre_env.core.layout import S_HAND, S_MOVES, S_NACTIVE, S_PLAYED, S_TRICK_NO
from bourre_env.core.rules import MAX_PLAYERS, P_HAND_SIZE

SAMPLED_WORLDS = 16  # worlds dealt for a question the exhaustive search's first pass left open
WORLD_NODE_CAP = 256  # nodes of the exhaustive search in one world before the next world is dealt


@njit(cache=True)
def deal_world(
    pool: int, count: np.ndarray, forbid: np.ndarray, known: np.ndarray, n: int, me: int, seed: int, out: np.ndarray
) -> bool:
    """Deal the unseen cards ``pool`` to fill every opponent's hand, at random: ``out[q]`` is ``known[q]`` and
    ``count[q] - popcount(known[q])`` cards of ``pool & ~forbid[q]``, no card dealt twice. Each card is kept only if
    the slots still empty can be filled (Hall's condition, ``_hands_completable``), so a dealing fails only where no
    placement exists. Returns False then; ``me``'s row is left 0."""
    left = np.int64(pool)
    state = np.int64(seed)
    for q in range(n):
        out[q] = known[q] if q != me else 0
    for q in range(n):
        if q == me:
            continue
        while count[q] > popcount(out[q]):
            cand = left & ~forbid[q]
            placed = False
            while cand:
                state = _mix(state + 1)
                k = state % popcount(cand)
                c = _kth_card(cand, k)
                out[q] |= _bit(c)
                left &= ~_bit(c)
                if _hands_completable(left, count, forbid, out, n, me):
                    placed = True
                    break
                out[q] &= ~_bit(c)
                left |= _bit(c)
                cand &= ~_bit(c)
            if not placed:
                return False
    return True


@njit(cache=True)
def _kth_card(cards: int, k: int) -> int:
    """The ``k``-th lowest card of the mask ``cards`` (0-based)."""
    for _ in range(k):
        cards &= cards - 1
    return lowest_card(cards)


@njit(cache=True)
def sampled_world_refutation(
    s: np.ndarray,
    p: np.ndarray,
    me: int,
    pool: int,
    absent: np.ndarray,
    need: int,
    x: np.ndarray,
    worlds: int,
    cap: int,
) -> tuple[bool, int]:
    """(True if a refuting line was found in one of ``worlds`` dealt worlds, nodes entered): the exhaustive search
    of each world, ``cap`` nodes at most. False proves nothing."""
    n = _n(p)
    fs0, rows0 = root_frame(s, p, me, pool, absent)
    gone = _gone_for(s, p, me)
    depth_max = int((p[P_HAND_SIZE] - s[S_TRICK_NO]) * s[S_NACTIVE] + 2)
    line = np.empty((depth_max, 2), dtype=np.int64)
    trace = np.zeros((0, 4), dtype=np.int64)
    fs = fs0.copy()
    rows = rows0.copy()
    hands = np.zeros(MAX_PLAYERS, dtype=np.int64)
    seed = _mix(pool ^ _mix(s[S_HAND + me] ^ _mix(s[S_PLAYED] ^ _mix(s[S_MOVES] * MAX_PLAYERS + me))))
    nodes = 0
    for world in range(worlds):
        if not deal_world(pool, rows0[0], rows0[1], rows0[2], n, me, _mix(seed + world), hands):
            break  # no placement at all: the exhaustive search settles it at its root
        dealt = np.int64(0)
        for q in range(n):
            rows[2, q] = hands[q]
            dealt |= hands[q] & pool
        fs[:] = fs0
        fs[1] = dealt  # every other unseen card is out of play in this world
        result, more = exhaustive_search(p, fs, rows, n, me, gone, need, depth_max, x, line, trace, cap)
        nodes += more
        if result == 1:
            return True, nodes
    return False, nodes
