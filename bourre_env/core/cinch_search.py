"""The cinch's exhaustive search of every line of play. ``bourre_env.core.cinch._cinch_search`` asks it after the
single-path probes (``cinch_probe``): a first pass of ``FIRST_PASS_NODES`` nodes, which settles nearly every
question, then searches of sampled worlds (``cinch_worlds``), which find the rare hard refutations, and a proof in a
relaxed game (``cinch_relaxed``), which settles the rare hard cinches of large tables, then the exhaustive search
without a cap.


The question is a single search for one refuting line (docs/rules.md, "Cinch": every placement and every legal
play of everyone, the cinch's player included), so no node has an adversary that answers: a position from which
every line was tried and none refuted the cinch refutes it by no other route either. That makes a transposition
table exact and simple, as in the double-dummy solvers of bridge:

* **A transposition table** at every node remembers the positions whose every line failed, with the fewest
  tricks ``me`` had won there (more tricks won can only help ``me``). Its key is **canonical**: the ranks are
  renumbered within each suit among the cards still live (``me``'s hand, the unseen cards some opponent may still
  draw, a known held face-up card), so a low card played leaves no trace and the positions reached when two
  opponents swap which low card each played are one entry. Only what decides the rest of the deal is kept: each
  opponent's cards left, and which live unseen cards it may still hold; an unseen card no opponent may hold is out
  of play. With ``lead_trump_honors`` the trump suit keeps its ranks (the honours are named ranks).
* **Dominance of equivalent choices**: ``me``'s cards with no live card of anyone else between them are one
  choice (playing either leaves the same canonical position); the opponents' plays are already cut to the two
  ends of each run (``cinch_options._run_representatives``).
* **Bounds on the live cards** (``_node_test``): ``me``'s sure tricks (``cinch_bounds.live_sure_tricks``) are
  counted against the cards an opponent with a free slot may still draw and the known held ones, not against the
  whole unseen pool, and ``me``'s card in the trick counts as won once no opponent yet to play to it may hold a
  card that beats it. Hall's condition decides a refutation when ``me`` cannot reach ``need``.
* **Rounds of limited discrepancy** (1, 3, 9, ..., then none) in the ordering of the probes' policy 1
  (``cinch_options._option_key``): an opponent that does not beat the trick plays its weakest card, trumps last,
  whatever void it shows. Policy 0, the main probe's, plays first what shows the fewest voids, so under a winning
  trump the opponents follow with their low trumps, the cards a refutation keeps to ruff or overtrump ``me`` later.

Why these: ``python benchmarks/cinch_hard.py --depths`` profiled the two 8-player positions that ran past the guard
(``tests/golden/cinch_past_the_guard.json``). Neither re-walked positions (half the nodes hit the table); both
proved, trick after trick, lines that could not fail. One, a cinch, counted as a killer of ``me``'s jack an ace of
trumps that every seat had shown it lacks (the last one by playing under the queen): still searching after 19
million nodes and 30 s before, 243 nodes with the live bounds. The other's refuting line needs two opponents to
throw side cards under the ace of trumps, which policy 0 met only in the ninth round: 9.7 million nodes before, 104
with policy 1 (the exhaustive search alone). Partition search (backing up the ranks that decided a result) and
caching across the questions of a deal were not needed; the node counts per question before and after are in
docs/rules.md ("Cinch").

Keys are stored whole, so a table hit is never a guess; the table grows as needed. A wall-clock guard raises
``RuntimeError`` past ``layout.X_CINCH_LIMIT_US`` of the scratch (default ``CINCH_TIME_LIMIT_S``; read every 4,096
nodes and between rounds): an answer is exact or there is none.
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from bourre_env.core.bits import (
    _bit,
    _n,
    face_bit,
    popcount,
    suit_mask,
)
from bourre_env.core.cards import (
    NUM_CARDS,
)
from bourre_env.core.cinch_bounds import (
    _all_sure_leads,
    _face_held_by_other,
    _gone_for,
    _hands_completable,
    live_sure_tricks,
    unseen_cards,
)
from bourre_env.core.cinch_options import (
    _frame_options,
    next_active_arr,
)
from bourre_env.core.cinch_table import _tt_slot
from bourre_env.core.layout import (
    PLAYING,
    S_CUR,
    S_DEALER,
    S_DECISION,
    S_HAND,
    S_LEADER,
    S_LED,
    S_NACTIVE,
    S_NPLAYED,
    S_TRICK_CARDS,
    S_TRICK_NO,
    S_TRICKS,
    S_TRUMP,
    SCRATCH_SIZE,
    X_CINCH_LIMIT_US,
    X_CINCH_NODES,
)
from bourre_env.core.rules import (
    CINCH_TRICKS,
    MAX_PLAYERS,
    P_HAND_SIZE,
    P_LEAD_HONORS,
    P_MUST_TRUMP,
)
from bourre_env.core.tricks import (
    _beats,
    _bests,
    forbidden_after,
    proven_absent,
    trick_winner,
)

NUM_PROBE_POLICIES = 8  # orderings tried as single-path probes before the exhaustive cinch search
_PROBE_BUDGET = 1 << 40  # the probes' node allowance: a single path never comes near it


@njit(cache=True)
def _exhaustive(
    s: np.ndarray, p: np.ndarray, me: int, pool: int, absent: np.ndarray, need: int, x: np.ndarray, cap: int
) -> tuple[int, int]:
    """``exhaustive_search`` from the position of ``s``: (1 refuted, 0 not, 2 undecided within ``cap`` nodes;
    nodes entered)."""
    line = np.empty((_depth_max(s, p), 2), dtype=np.int64)
    return _exhaustive_into(s, p, me, pool, absent, need, x, line, np.zeros((0, 4), dtype=np.int64), cap)


@njit(cache=True)
def _depth_max(s: np.ndarray, p: np.ndarray) -> int:
    return int((p[P_HAND_SIZE] - s[S_TRICK_NO]) * s[S_NACTIVE] + 2)  # one frame per play left, plus the root


@njit(cache=True)
def refuting_line(s: np.ndarray, p: np.ndarray, seat: int) -> tuple[bool, np.ndarray]:
    """(True, the line) if the exhaustive search alone, without the bounds and the probes of ``has_cinch``, finds a
    line of play that refutes ``seat``'s cinch (rows of seat and card from the position of ``s`` on, possibly
    none: a refutation may need only a consistent completion of the hands); (False, no rows) for a cinch. For
    tests, which check the line against the rules independently."""
    x = np.zeros(SCRATCH_SIZE, dtype=np.int64)
    return traced_refuting_line(s, p, seat, x, np.zeros((0, 4), dtype=np.int64))


@njit(cache=True)
def traced_refuting_line(
    s: np.ndarray, p: np.ndarray, seat: int, x: np.ndarray, trace: np.ndarray
) -> tuple[bool, np.ndarray]:
    """``refuting_line`` with the scratch ``x`` (its time limit; the nodes entered are added to ``X_CINCH_NODES``)
    and, per depth of the search (a row each, as many as ``trace`` has), counters of nodes entered, table hits,
    nodes the bounds settle and table entries stored (``benchmarks/cinch_hard.py``)."""
    need = CINCH_TRICKS - s[S_TRICKS + seat]
    line = np.full((_depth_max(s, p), 2), -1, dtype=np.int64)
    if need <= 0:
        return False, line[:0]
    absent = np.empty(MAX_PLAYERS, dtype=np.int64)
    proven_absent(s, p, absent)
    absent[seat] = 0
    found, nodes = _exhaustive_into(s, p, seat, unseen_cards(s, p, seat), absent, need, x, line, trace, _NO_CAP)
    x[X_CINCH_NODES] += nodes
    if found == 0:
        return False, line[:0]
    k = 0
    while k < line.shape[0] and line[k, 0] >= 0:
        k += 1
    return True, line[:k]


@njit(cache=True)
def _exhaustive_into(
    s: np.ndarray,
    p: np.ndarray,
    me: int,
    pool: int,
    absent: np.ndarray,
    need: int,
    x: np.ndarray,
    line: np.ndarray,
    trace: np.ndarray,
    cap: int,
) -> tuple[int, int]:
    fs0, rows = root_frame(s, p, me, pool, absent)
    return exhaustive_search(p, fs0, rows, _n(p), me, _gone_for(s, p, me), need, line.shape[0], x, line, trace, cap)


@njit(cache=True)
def root_frame(s: np.ndarray, p: np.ndarray, me: int, pool: int, absent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``exhaustive_search``'s root from the position of ``s``: the frame (``_frame_options``'s columns, then trump)
    and the per-seat rows (cards left, forbidden cards, known held cards, active)."""
    n = _n(p)
    rows = np.zeros((4, MAX_PLAYERS), dtype=np.int64)  # count, forbid, known, active
    row = S_TRICK_CARDS + s[S_TRICK_NO] * MAX_PLAYERS
    trick = s[row : row + MAX_PLAYERS]
    for q in range(n):
        rows[1, q] = absent[q] if q != me else 0
        if s[S_DECISION + q] == PLAYING:
            rows[3, q] = 1
            if q != me:
                rows[0, q] = popcount(s[S_HAND + q])
    if _face_held_by_other(s, me):
        rows[2, s[S_DEALER]] = face_bit(s)
    trump = s[S_TRUMP]
    best_led, best_trump = _bests(trick, n, s[S_LED], trump)
    fs0 = np.empty(13, dtype=np.int64)
    fs0[0] = s[S_HAND + me]
    fs0[1] = pool
    fs0[2] = 0
    fs0[3] = s[S_LEADER]
    fs0[4] = s[S_NPLAYED]
    fs0[5] = s[S_CUR]
    fs0[6] = s[S_LED]
    fs0[7] = s[S_TRICK_NO]
    fs0[8] = trick_winner(trick, s[S_LEADER], n, trump) if s[S_NPLAYED] > 0 else -1
    fs0[9] = best_led
    fs0[10] = best_trump
    fs0[11] = trick[me]
    fs0[12] = trump
    return fs0, rows


CINCH_TIME_LIMIT_S = 10.0  # wall clock one cinch question may take before the search raises (scratch: 0 = this)
FIRST_PASS_NODES = 2_000  # the exhaustive search's first pass: nearly every question is settled within it
_NO_CAP = 1 << 62
_CLOCK_EVERY = 4095  # the clock is read when (nodes & this) == 0: about a microsecond a read
_META = 5  # key words before the opponents': hand, live unseen cards, known held cards, seats, the trick
_TT_START = 1 << 8  # entries of a fresh table; it quadruples at half full
_EXHAUSTED = 1 << 40  # discrepancies left recorded for a subtree searched without a cut
# ``_option_key``'s policy 1: an opponent that does not beat the trick plays its weakest card whatever void it proves
_ORDERING = 1


# CLOCK_MONOTONIC's number in <time.h>; on Windows, which has no clock_gettime, the guard reads a clock that stands
_CLOCK_ID = {"linux": 1, "darwin": 6}.get(sys.platform, 1)


@intrinsic
def _monotonic_ns(typingctx):  # type: ignore[no-untyped-def]
    """Nanoseconds of the C library's monotonic clock (``clock_gettime``), read from compiled code.

    ``time.perf_counter`` is out of nopython mode's reach, and an object-mode block would be compiled again in
    every process (numba does not cache it); a call by symbol name is cached like any other kernel code.
    """

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i64 = cgutils.ir.IntType(64)
        if sys.platform == "win32":
            return cgutils.ir.Constant(i64, 0)
        i32 = cgutils.ir.IntType(32)
        spec = cgutils.alloca_once(builder, cgutils.ir.ArrayType(i64, 2))  # type: ignore[no-untyped-call]  # struct timespec
        fnty = cgutils.ir.FunctionType(i32, [i32, spec.type])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")  # type: ignore[no-untyped-call]
        builder.call(fn, [cgutils.ir.Constant(i32, _CLOCK_ID), spec])
        sec = builder.load(builder.gep(spec, [cgutils.ir.Constant(i32, 0), cgutils.ir.Constant(i32, 0)]))
        nsec = builder.load(builder.gep(spec, [cgutils.ir.Constant(i32, 0), cgutils.ir.Constant(i32, 1)]))
        return builder.add(builder.mul(sec, cgutils.ir.Constant(i64, 1_000_000_000)), nsec)

    return types.int64(), codegen


@njit(cache=True)
def _clock() -> float:
    """Seconds of a monotonic clock."""
    return _monotonic_ns() * 1e-9  # type: ignore[call-arg]  # numba passes the typing context


@njit(cache=True)
def _limit_seconds(x: np.ndarray) -> float:
    """The wall-clock limit of this question: the scratch's, in microseconds, or ``CINCH_TIME_LIMIT_S``."""
    us = x[X_CINCH_LIMIT_US]
    return CINCH_TIME_LIMIT_S if us <= 0 else us * 1e-6


@njit(cache=True)
def _canonical_key(
    fs: np.ndarray,
    count: np.ndarray,
    forbid: np.ndarray,
    known: np.ndarray,
    d: int,
    others: np.ndarray,
    nothers: int,
    trump: int,
    keep_trump_ranks: bool,
    keys: np.ndarray,
) -> None:
    """The canonical key of frame ``d``'s position into ``keys[d]`` (``_META + nothers`` words, see above)."""
    hand = fs[d, 0]
    pool = fs[d, 1]
    meta = fs[d, 3]
    known_all = np.int64(0)
    live_pool = np.int64(0)
    for i in range(nothers):
        q = others[i]
        kn = known[d, q]
        meta |= count[d, q] << (4 + 3 * i)
        known_all |= kn
        # an opponent with no free slot draws nothing: what it may hold no longer matters
        allow = pool & ~forbid[d, q] if count[d, q] > popcount(kn) else np.int64(0)
        keys[d, _META + i] = allow
        live_pool |= allow
    live = hand | live_pool | known_all
    keys[d, 0] = _squeeze(hand, live, trump, keep_trump_ranks)
    keys[d, 1] = _squeeze(live_pool, live, trump, keep_trump_ranks)
    keys[d, 2] = _squeeze(known_all, live, trump, keep_trump_ranks)
    keys[d, 3] = meta
    # the trick under way: how many played, the suit led, who is winning it, and its best cards of the suit led
    # and of trumps, each as the number of live cards of its suit below it (all a live card is compared to)
    trick = 0
    if fs[d, 4] > 0:
        trick = fs[d, 4] | fs[d, 6] << 4 | fs[d, 8] << 7
        trick |= _threshold(fs[d, 9], live, trump, keep_trump_ranks) << 11
        trick |= _threshold(fs[d, 10], live, trump, keep_trump_ranks) << 18
    keys[d, 4] = trick
    for i in range(nothers):
        if keys[d, _META + i]:
            keys[d, _META + i] = _squeeze(keys[d, _META + i], live, trump, keep_trump_ranks)


@njit(cache=True)
def _squeeze(mask: int, live: int, trump: int, keep_trump_ranks: bool) -> int:
    """``mask`` (a subset of ``live``) with the ranks of each suit renumbered among the ``live`` cards: the i-th
    lowest live card of a suit becomes its rank i (a parallel bit extract, suit by suit)."""
    out = np.int64(0)
    for suit in range(4):
        sm = suit_mask(suit)
        m = mask & sm
        if m == 0:
            continue
        if keep_trump_ranks and suit == trump:
            out |= m
            continue
        lv = live & sm
        base = 13 * suit
        while m:
            low = m & -m
            m ^= low
            out |= np.int64(1) << (base + popcount(lv & (low - 1)))
    return int(out)


@njit(cache=True)
def _threshold(best: int, live: int, trump: int, keep_trump_ranks: bool) -> int:
    """``best`` (a card of the trick, or -1) renumbered as the live cards are: 1 + its suit's base + the live cards
    of its suit below it; 0 for none."""
    if best < 0:
        return 0
    suit = best // 13
    if keep_trump_ranks and suit == trump:
        return best + 1
    return 13 * suit + popcount(live & suit_mask(suit) & ((np.int64(1) << best) - 1)) + 1


@njit(cache=True)
def _tt_grown(
    tt_keys: np.ndarray, tt_vals: np.ndarray, tt_rems: np.ndarray, kw: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The table moved into one four times larger."""
    cap = tt_vals.shape[0] * 4
    new_keys = np.empty((cap, tt_keys.shape[1]), dtype=np.int64)
    new_vals = np.full(cap, -1, dtype=np.int64)
    new_rems = np.zeros(cap, dtype=np.int64)
    for i in range(tt_vals.shape[0]):
        if tt_vals[i] >= 0:
            j = _tt_slot(new_keys, new_vals, tt_keys, i, kw)
            for k in range(kw):
                new_keys[j, k] = tt_keys[i, k]
            new_vals[j] = tt_vals[i]
            new_rems[j] = tt_rems[i]
    return new_keys, new_vals, new_rems


@njit(cache=True)
def _node_test(
    fs: np.ndarray,
    count: np.ndarray,
    forbid: np.ndarray,
    known: np.ndarray,
    nxt: np.ndarray,
    d: int,
    n: int,
    me: int,
    nactive: int,
    trump: int,
    h: int,
    need: int,
) -> int:
    """What entering frame ``d`` settles: 1 a refutation, 2 nothing to refute below (``me`` is sure of ``need``),
    0 search on. A completed trick is resolved in the frame first."""
    if fs[d, 4] == nactive:
        winner = fs[d, 8]
        if winner == me:
            fs[d, 2] += 1
        if fs[d, 2] >= need:
            return 2
        if fs[d, 7] + 1 == h:
            return 1
        fs[d, 3] = winner
        fs[d, 4] = 0
        fs[d, 5] = winner
        fs[d, 7] += 1
        for k in range(6, 12):
            if k != 7:
                fs[d, k] = -1
    hand = fs[d, 0]
    mine = fs[d, 2]
    my_card = fs[d, 11]
    in_trick = 1 if my_card >= 0 else 0
    # a refutation: even every trick left cannot reach ``need``, and the hands can be completed
    if mine + popcount(hand) + in_trick < need and _hands_completable(fs[d, 1], count[d], forbid[d], known[d], n, me):
        return 1
    if mine + popcount(hand & suit_mask(trump)) + in_trick < need and not (fs[d, 4] == 0 and fs[d, 5] == me):
        return 0  # the bounds below count no more than our trumps and our card in the trick, or every lead
    # The cards that can still beat ours: what an opponent with a free slot may still draw, and its known cards; an
    # unseen card that no such opponent may hold lies out of play. Those the opponents yet to play to this trick may
    # hold can also beat our card in it (``live_sure_tricks``).
    live = np.int64(0)
    later = np.int64(0)
    seat = fs[d, 5]
    for k in range(nactive):
        if seat != me:
            mays = known[d, seat]
            if count[d, seat] > popcount(mays):
                mays |= fs[d, 1] & ~forbid[d, seat]
            live |= mays
            if k < nactive - fs[d, 4]:
                later |= mays
        seat = nxt[seat]
    if (mine + live_sure_tricks(hand, my_card, fs[d, 8] == me, fs[d, 10], trump, live, later) >= need) or (
        fs[d, 4] == 0 and fs[d, 5] == me and mine + popcount(hand) >= need and _all_sure_leads(hand, live, trump)
    ):
        return 2
    return 0


@njit(cache=True)
def exhaustive_search(
    p: np.ndarray,
    fs0: np.ndarray,
    rows0: np.ndarray,
    n: int,
    me: int,
    gone: int,
    need: int,
    depth_max: int,
    x: np.ndarray,
    line: np.ndarray,
    trace: np.ndarray,
    cap: int,
) -> tuple[int, int]:
    """(1 if a refuting line exists, 0 if none, 2 if undecided within ``cap`` nodes; nodes entered) from the root
    frame ``fs0`` (``_frame_options``'s columns, then trump) and its per-seat rows ``rows0`` (count, forbid, known,
    active). A refuting line is written to ``line`` (rows of seat and card, in play order; the rest left as they
    are).

    Rounds of limited discrepancy (a refutation is usually near the move ordering's first path), the last one
    without a limit, all sharing one table: a subtree searched without a cut is remembered as exhausted for
    every later round, one cut at ``r`` discrepancies left only for revisits with at most ``r`` left. Raises
    ``RuntimeError`` past the wall-clock limit. The frames are whole arrays indexed by depth, never row views:
    a view costs a reference count, which took 45% of the time at 8 players.
    """
    active = rows0[3]
    trump = fs0[12]
    h = p[P_HAND_SIZE]
    must_trump = p[P_MUST_TRUMP] == 1
    lead_honors = p[P_LEAD_HONORS] == 1
    nactive = 0
    others = np.zeros(MAX_PLAYERS, dtype=np.int64)
    nothers = 0
    nxt = np.zeros(MAX_PLAYERS, dtype=np.int64)
    for q in range(n):
        if active[q]:
            nactive += 1
            nxt[q] = next_active_arr(active, n, q)
            if q != me:
                others[nothers] = q
                nothers += 1
    kw = _META + nothers
    fs = np.empty((depth_max, 12), dtype=np.int64)
    count = np.empty((depth_max, MAX_PLAYERS), dtype=np.int64)
    forbid = np.empty((depth_max, MAX_PLAYERS), dtype=np.int64)
    known = np.empty((depth_max, MAX_PLAYERS), dtype=np.int64)
    opts = np.empty((depth_max, NUM_CARDS), dtype=np.int64)
    # per frame: options, next option, options entered, discrepancies so far, a cut below, key to store on exit
    ints = np.empty((6, depth_max), dtype=np.int64)
    nopt, idx, tried, disc, cut, stored = ints[0], ints[1], ints[2], ints[3], ints[4], ints[5]
    keys = np.zeros((depth_max, _META + MAX_PLAYERS), dtype=np.int64)
    sort_keys = np.empty(NUM_CARDS, dtype=np.int64)
    tt_keys = np.empty((_TT_START, _META + MAX_PLAYERS), dtype=np.int64)
    tt_vals = np.full(_TT_START, -1, dtype=np.int64)  # tricks won at the entry; -1: an empty slot
    tt_rems = np.zeros(_TT_START, dtype=np.int64)  # discrepancies that were left there
    tt_used = 0
    start = _clock()
    limit = _limit_seconds(x)
    nodes = 0
    max_disc = 1
    while True:  # one round per pass
        if max_disc > 1 and _clock() - start > limit:  # also between rounds: a short search is guarded too
            raise RuntimeError("cinch search over its wall-clock limit (layout.X_CINCH_LIMIT_US)")
        for k in range(12):
            fs[0, k] = fs0[k]
        for q in range(MAX_PLAYERS):
            count[0, q] = rows0[0, q]
            forbid[0, q] = rows0[1, q]
            known[0, q] = rows0[2, q]
        disc[0] = 0
        d = 0
        entering = True
        while d >= 0:
            if entering:
                entering = False
                nodes += 1
                if (nodes & _CLOCK_EVERY) == 0 and _clock() - start > limit:
                    raise RuntimeError("cinch search over its wall-clock limit (layout.X_CINCH_LIMIT_US)")
                if nodes > cap:
                    return 2, nodes
                cut[d] = 0
                stored[d] = 0
                code = _node_test(fs, count, forbid, known, nxt, d, n, me, nactive, trump, h, need)
                if d < trace.shape[0]:
                    trace[d, 0] += 1
                    trace[d, 2] += code == 2
                if code == 1:
                    for k in range(d):
                        line[k, 0] = fs[k, 5]
                        line[k, 1] = opts[k, idx[k] - 1]
                    return 1, nodes
                if code == 0:
                    _canonical_key(fs, count, forbid, known, d, others, nothers, trump, lead_honors, keys)
                    slot = _tt_slot(tt_keys, tt_vals, keys, d, kw)
                    if tt_vals[slot] >= 0 and tt_vals[slot] <= fs[d, 2] and tt_rems[slot] >= max_disc - disc[d]:
                        code = 2
                        if d < trace.shape[0]:
                            trace[d, 1] += 1
                        if tt_rems[slot] < _EXHAUSTED and d > 0:
                            cut[d - 1] = 1  # searched only so far: the parent is not exhausted
                    else:
                        stored[d] = 1
                if code == 2:
                    d -= 1
                    continue
                nopt[d] = _frame_options(
                    fs, forbid, count, known, d, me, gone, trump, must_trump, lead_honors, opts, sort_keys, _ORDERING
                )
                idx[d] = 0
                tried[d] = 0
            if idx[d] == nopt[d]:
                if stored[d]:
                    rem = _EXHAUSTED if cut[d] == 0 else max_disc - disc[d]
                    slot = _tt_slot(tt_keys, tt_vals, keys, d, kw)
                    if tt_vals[slot] < 0:
                        for k in range(kw):
                            tt_keys[slot, k] = keys[d, k]
                        tt_vals[slot] = fs[d, 2]
                        tt_rems[slot] = rem
                        tt_used += 1
                        if d < trace.shape[0]:
                            trace[d, 3] += 1
                        if 2 * tt_used > tt_vals.shape[0]:
                            tt_keys, tt_vals, tt_rems = _tt_grown(tt_keys, tt_vals, tt_rems, kw)
                    elif rem > tt_rems[slot] or (rem == tt_rems[slot] and fs[d, 2] < tt_vals[slot]):
                        tt_vals[slot] = fs[d, 2]
                        tt_rems[slot] = rem
                if cut[d] and d > 0:
                    cut[d - 1] = 1
                d -= 1
                continue
            c = opts[d, idx[d]]
            idx[d] += 1
            if not _child(fs, count, forbid, known, nxt, d, c, me, trump, must_trump, lead_honors):
                continue
            if tried[d] > 0 and disc[d] >= max_disc:
                cut[d] = 1
                idx[d] = nopt[d]  # later options only deviate more
                continue
            disc[d + 1] = disc[d] + (1 if tried[d] > 0 else 0)
            tried[d] += 1
            d += 1
            entering = True
        if cut[0] == 0:
            return 0, nodes
        max_disc *= 3


@njit(cache=True)
def _child(
    fs: np.ndarray,
    count: np.ndarray,
    forbid: np.ndarray,
    known: np.ndarray,
    nxt: np.ndarray,
    d: int,
    c: int,
    me: int,
    trump: int,
    must_trump: bool,
    lead_honors: bool,
) -> bool:
    """Frame ``d + 1`` as frame ``d`` after the play of ``c``; False if an opponent could not have played it (its
    known cards, or too few cards left that it may hold)."""
    seat = fs[d, 5]
    leading = fs[d, 4] == 0
    led = c // 13 if leading else fs[d, 6]
    best_led = fs[d, 9]
    best_trump = fs[d, 10]
    for k in range(12):
        fs[d + 1, k] = fs[d, k]
    for k in range(MAX_PLAYERS):
        count[d + 1, k] = count[d, k]
        forbid[d + 1, k] = forbid[d, k]
        known[d + 1, k] = known[d, k]
    if seat == me:
        fs[d + 1, 0] = fs[d, 0] & ~_bit(c)
        fs[d + 1, 11] = c
    else:
        extra = forbidden_after(c, leading, fs[d, 6], best_led, best_trump, trump, must_trump, lead_honors)
        kn = known[d, seat]
        if (kn & ~_bit(c)) & extra:
            return False
        free_after = count[d, seat] - popcount(kn) - (0 if (kn >> c) & 1 else 1)
        new_pool = fs[d, 1] & ~_bit(c)
        new_forbid = forbid[d, seat] | extra
        if popcount(new_pool & ~new_forbid) < free_after:
            return False
        fs[d + 1, 1] = new_pool
        forbid[d + 1, seat] = new_forbid
        known[d + 1, seat] = kn & ~_bit(c)
        count[d + 1, seat] -= 1
    # the trick so far, as ``_bests`` and ``trick_winner`` would find it
    if leading or _beats(c, led, best_led, best_trump, trump):
        fs[d + 1, 8] = seat
    if c // 13 == led and c > best_led:
        fs[d + 1, 9] = c
    if c // 13 == trump and c > best_trump:
        fs[d + 1, 10] = c
    fs[d + 1, 4] += 1
    fs[d + 1, 5] = nxt[seat]
    fs[d + 1, 6] = led
    return True
