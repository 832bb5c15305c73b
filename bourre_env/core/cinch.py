"""The cinch (docs/rules.md): whether a seat is certain to take three tricks, worked out exactly.

``has_cinch`` is the one entry point; cheap bounds settle almost every position and an exact search
settles the rest (``_cinch_search`` orders its stages). The rules of trick play it ranges over are
``bourre_env.core.tricks``'s.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core.bits import (
    _n,
    face_bit,
    popcount,
)
from bourre_env.core.cinch_bounds import (
    _face_held_by_other,
    sure_tricks,
    unseen_cards,
)
from bourre_env.core.cinch_probe import _probe
from bourre_env.core.cinch_relaxed import RELAXED_NODE_ALLOWANCE, relaxed_cinch_proof
from bourre_env.core.cinch_search import (
    _NO_CAP,
    _PROBE_BUDGET,
    FIRST_PASS_NODES,
    NUM_PROBE_POLICIES,
    _exhaustive,
)
from bourre_env.core.cinch_worlds import SAMPLED_WORLDS, WORLD_NODE_CAP, sampled_world_refutation
from bourre_env.core.layout import (
    PLAY,
    PLAYING,
    S_DECISION,
    S_HAND,
    S_LEADER,
    S_LED,
    S_MOVES,
    S_PHASE,
    S_PLAYED,
    S_TRICK_CARDS,
    S_TRICK_NO,
    S_TRICKS,
    S_TRUMP,
    SCRATCH_SIZE,
    X_CINCH_HAND,
    X_CINCH_KEY,
    X_CINCH_NODES,
    X_CINCH_PLAYED,
    X_CINCH_SEARCHES,
    X_CINCH_VAL,
)
from bourre_env.core.rules import (
    CINCH_TRICKS,
    MAX_PLAYERS,
)
from bourre_env.core.tricks import (
    proven_absent,
)


@njit(cache=True)
def has_cinch(s: np.ndarray, p: np.ndarray, seat: int) -> bool:
    """``has_cinch_with`` with a fresh scratch array (nothing is remembered between calls)."""
    return has_cinch_with(s, p, seat, np.zeros(SCRATCH_SIZE, dtype=np.int64))


@njit(cache=True)
def has_cinch_with(s: np.ndarray, p: np.ndarray, seat: int, x: np.ndarray) -> bool:
    """The cinch (docs/rules.md): tricks won plus tricks certain to be won from now on is at least 3.

    Certain means: in every placement of the cards ``seat`` has not seen (among the other playing
    seats, respecting their hand sizes and the dealer's kept face-up card, or out of play) that is
    consistent with what the opponents' earlier plays prove (``proven_absent``), and every
    continuation that the ordinary rules of trick play allow to anyone, ``seat`` included. A card
    a reshuffle may have put back into play is unseen (``unseen_cards``). Cheap
    bounds settle almost every position; the rest is an exact search for a continuation in which
    ``seat`` ends with fewer tricks (``_cinch_search``).

    The answer is memoised in the scratch array ``x`` (``layout.X_CINCH_*``), with the search statistics; the
    state is only read.
    """
    if s[S_PHASE] != PLAY or s[S_DECISION + seat] != PLAYING:
        return False
    key = s[S_MOVES] * MAX_PLAYERS + seat + 1
    hand = s[S_HAND + seat]
    if x[X_CINCH_KEY] == key and x[X_CINCH_HAND] == hand and x[X_CINCH_PLAYED] == s[S_PLAYED]:
        return bool(x[X_CINCH_VAL] == 1)
    answer = _cinch_uncached(s, p, seat, x)
    x[X_CINCH_KEY] = key
    x[X_CINCH_HAND] = hand
    x[X_CINCH_PLAYED] = s[S_PLAYED]
    x[X_CINCH_VAL] = 1 if answer else 0
    return answer


@njit(cache=True)
def _cinch_uncached(s: np.ndarray, p: np.ndarray, seat: int, x: np.ndarray) -> bool:
    won = s[S_TRICKS + seat]
    need = CINCH_TRICKS - won
    if need <= 0:
        return True
    n = _n(p)
    hand = s[S_HAND + seat]
    t = s[S_TRICK_NO]
    row = S_TRICK_CARDS + t * MAX_PLAYERS
    played_now = s[row + seat] >= 0
    if popcount(hand) + (1 if played_now else 0) < need:
        return False
    trump = s[S_TRUMP]
    pool = unseen_cards(s, p, seat)
    face_held = face_bit(s) if _face_held_by_other(s, seat) else np.int64(0)
    trick = s[row : row + MAX_PLAYERS]
    # The bound against every unseen card settles most positions; only if it fails is it worth working out what
    # the earlier plays prove (fewer cards the opponents may hold can only add sure tricks).
    if sure_tricks(hand, trick, s[S_LEADER], n, seat, s[S_LED], trump, pool | face_held) >= need:
        return True
    # one allocation: the single paths' scratch (rows 0-4, see ``_probe``), the node budget (row 5) and
    # the cards each seat's earlier plays prove it does not hold (row 6)
    w = np.empty((7, MAX_PLAYERS), dtype=np.int64)
    absent = w[6]
    proven_absent(s, p, absent)
    others = face_held  # the unseen cards that some opponent may hold
    for q in range(n):
        if q != seat and s[S_DECISION + q] == PLAYING:
            others |= pool & ~absent[q]
    if others != pool | face_held and sure_tricks(hand, trick, s[S_LEADER], n, seat, s[S_LED], trump, others) >= need:
        return True
    return not _cinch_search(s, p, seat, pool, need, w, x)


@njit(cache=True)
def _cinch_search(s: np.ndarray, p: np.ndarray, me: int, pool: int, need: int, w: np.ndarray, x: np.ndarray) -> bool:
    """True if some consistent placement and legal continuation leaves ``me`` with fewer than ``need`` more tricks.

    In order, each stage run only when the ones before left the question open: the single-path probes
    (``cinch_probe``), the first pass of the exhaustive search (``cinch_search``, whose docstring says how it walks
    every line), searches of dealt worlds that can only refute (``cinch_worlds``), a proof in a relaxed game that can
    only prove (``cinch_relaxed``), then the exhaustive search without a cap. ``w`` is ``_cinch_uncached``'s
    scratch, its row 6 filled by ``proven_absent``.
    """
    budget = w[5]
    budget[0] = _PROBE_BUDGET
    # A counterexample nearly always lies on the path of the move ordering, so first a few single paths under
    # different orderings: a counterexample is usually plentiful, and one ordering's blind spot (e.g. every
    # opponent spending a trump on our ace) is rarely another's. They are walked in place (``_probe``).
    result = 2
    for policy in range(NUM_PROBE_POLICIES):
        result = _probe(s, p, me, pool, need, policy, w, budget)
        if result != 2:
            break
    nodes = _PROBE_BUDGET - budget[0]
    if result == 2:
        result, more = _exhaustive(s, p, me, pool, w[6], need, x, FIRST_PASS_NODES)
        nodes += more
    if result == 2:
        # past its first pass, the rare hard refutations: dealt out, a world leaves no placement to choose and the
        # first lines of its search refute it (``cinch_worlds``)
        refuted, more = sampled_world_refutation(s, p, me, pool, w[6], need, x, SAMPLED_WORLDS, WORLD_NODE_CAP)
        nodes += more
        if refuted:
            result = 1
    if result == 2:
        # then a proof in the relaxed game (``cinch_relaxed``) settles the hard cinches of large
        # tables in a few thousand nodes; it only ever proves, so the exhaustive search answers the rest, unbounded
        proved, more = relaxed_cinch_proof(s, p, me, pool, need, w[6], RELAXED_NODE_ALLOWANCE)
        nodes += more
        if proved:
            result = 0
        else:
            result, more = _exhaustive(s, p, me, pool, w[6], need, x, _NO_CAP)
            nodes += more
    x[X_CINCH_SEARCHES] += 1
    x[X_CINCH_NODES] += nodes
    return result == 1
