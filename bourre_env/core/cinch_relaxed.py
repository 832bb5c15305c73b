"""A sufficient test of the cinch (``bourre_env.core.cinch``): a proof search over a relaxed game, small where the exact
search is large.

Why: the slowest questions of random play at 7 and 8 players (seconds to minutes for the exhaustive search of
``cinch_search``, one in some tens of millions of decisions) are all proofs of the same shape: ``me`` holds several
trumps and a side ace, one opponent trump is still live, and the cinch holds because that trump must come out when
trumps are led (an opponent must follow suit and beat the trick when it can). The exhaustive search proves it by
walking every placement and order of the thirty-odd other unseen cards, none of which can beat a card of ``me``.

The relaxation. A live card (one some opponent may still play) is *relevant* when it can beat a card of ``me``: every
live trump, and every live card of a side suit above ``me``'s lowest card of that suit (the card already in the
trick counted). Every other live card is a *blank*: it never beats a card of ``me``, whatever happens. The relaxed
game keeps the relevant cards exact (placed on the opponents lazily, within what their earlier plays prove they lack)
and gives the opponents more freedom with blanks:

* an opponent with a free slot may play a blank at any turn, of any suit that has a blank, whatever it showed; only on
  a trump lead does a blank say something: that it holds no trump (it would have had to follow with one);
* a trick that no exact card wins (blanks led and followed) may be won by any opponent, who then leads;
* ``me`` plays by the ordinary rules, a blank led counting below every card of ``me`` (which it is).

Every line of the real game maps onto a line of the relaxed one with the same tricks for ``me`` (each real card that
is not relevant played as a blank), so if no relaxed line leaves ``me`` short of ``need``, no real one does: the cinch
holds. A relaxed line that leaves ``me`` short proves nothing (it may use a freedom the real game lacks), and then the
answer is left to the exact search; so is a relaxed search past its node allowance. Either way the answer stays exact:
this test only ever answers "a cinch", and only with a proof.

The search is depth first with an explicit stack (numba does not cache recursive functions), a frame per play and per
choice of a trick's winner; a table at trick starts remembers the positions already proven (every position left is a
proof, since the first relaxed refutation ends the search).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core.bits import (
    _bit,
    _n,
    above_mask,
    face_bit,
    lowest_card,
    popcount,
    suit_mask,
)
from bourre_env.core.cinch_bounds import (
    _all_sure_leads,
    _face_held_by_other,
    trump_lower_bound,
)
from bourre_env.core.cinch_options import next_active_arr
from bourre_env.core.cinch_table import _tt_slot
from bourre_env.core.layout import (
    PLAYING,
    S_CUR,
    S_DEALER,
    S_DECISION,
    S_HAND,
    S_LEADER,
    S_LED,
    S_NPLAYED,
    S_TRICK_CARDS,
    S_TRICK_NO,
    S_TRUMP,
)
from bourre_env.core.rules import (
    MAX_PLAYERS,
    P_HAND_SIZE,
    P_LEAD_HONORS,
    P_MUST_TRUMP,
)
from bourre_env.core.tricks import (
    forbidden_after,
    honors_mask,
    ordinary_plays,
)

RELAXED_NODE_ALLOWANCE = 50_000  # nodes of one relaxed proof before the question is left to the exact search

# the frame's columns
_HAND, _KPOOL, _MINE, _LEADER, _NPLAYED, _CUR, _LED, _BT, _BTO, _BL, _BLO, _MYIN, _CHOOSE = range(13)
_NF = 13
_BLANK_LEAD = 64  # option 64 + suit: a blank led in that suit
_BLANK = 68  # option: a blank played to a trick under way
_WINNER = 80  # option 80 + seat: that opponent won a trick that no exact card won
_TT_SIZE = 1 << 11


@njit(cache=True)
def relevant_cards(hand: int, my_card: int, live: int, trump: int) -> int:
    """The live cards that can beat some card of ``me``: every trump, and in each side suit the cards above ``me``'s
    lowest card of it (``hand`` with ``my_card``, the card already played to the trick, or -1)."""
    mine = hand | (_bit(my_card) if my_card >= 0 else np.int64(0))
    out = live & suit_mask(trump)
    for suit in range(4):
        if suit != trump:
            held = mine & suit_mask(suit)
            if held:
                out |= live & suit_mask(suit) & above_mask(lowest_card(held))
    return int(out)


@njit(cache=True)
def relaxed_cinch_proof(
    s: np.ndarray, p: np.ndarray, me: int, pool: int, need: int, absent: np.ndarray, allowance: int
) -> tuple[bool, int]:
    """(True if the relaxed game proves that ``me`` takes ``need`` more tricks, nodes entered). ``pool``: the cards
    ``me`` has not seen; ``absent``: what each seat's earlier plays prove it lacks (``tricks.proven_absent``)."""
    n = _n(p)
    trump = s[S_TRUMP]
    tmask = suit_mask(trump)
    must_trump = p[P_MUST_TRUMP] == 1
    lead_honors = p[P_LEAD_HONORS] == 1
    row = S_TRICK_CARDS + s[S_TRICK_NO] * MAX_PLAYERS
    active = np.zeros(MAX_PLAYERS, dtype=np.int64)
    for q in range(n):
        if s[S_DECISION + q] == PLAYING:
            active[q] = 1
    nxt = np.zeros(MAX_PLAYERS, dtype=np.int64)
    others = np.zeros(MAX_PLAYERS, dtype=np.int64)
    nothers = 0
    nactive = 0
    for q in range(n):
        if active[q]:
            nactive += 1
            nxt[q] = next_active_arr(active, n, q)
            if q != me:
                others[nothers] = q
                nothers += 1
    face_held = face_bit(s) if _face_held_by_other(s, me) else np.int64(0)
    live = np.int64(face_held)
    for k in range(nothers):
        q = others[k]
        if popcount(s[S_HAND + q]) > 0:
            live |= pool & ~absent[q]
    hand0 = s[S_HAND + me]
    relevant = relevant_cards(hand0, s[row + me], live, trump)
    blank_suits = 0
    blanks = live & ~relevant
    for suit in range(4):
        if blanks & suit_mask(suit):
            blank_suits |= 1 << suit

    depth_max = (p[P_HAND_SIZE] - s[S_TRICK_NO]) * (nactive + 1) + 2
    fs = np.empty((depth_max, _NF), dtype=np.int64)
    cnt = np.zeros((depth_max, MAX_PLAYERS), dtype=np.int64)
    held = np.zeros((depth_max, MAX_PLAYERS), dtype=np.int64)
    forb = np.zeros((depth_max, MAX_PLAYERS), dtype=np.int64)
    opts = np.empty((depth_max, 64), dtype=np.int64)
    nopt = np.zeros(depth_max, dtype=np.int64)
    idx = np.zeros(depth_max, dtype=np.int64)
    stored = np.zeros(depth_max, dtype=np.int64)
    kw = 3 + 2 * nothers
    keys = np.zeros((depth_max, kw), dtype=np.int64)
    tt_keys = np.empty((_TT_SIZE, kw), dtype=np.int64)
    tt_vals = np.full(_TT_SIZE, -1, dtype=np.int64)  # 0: proven; -1: an empty slot
    tt_count = 0

    # the root: the trick under way as it stands, every card in it exact
    fs[0, _HAND] = hand0
    fs[0, _KPOOL] = pool & relevant & live
    fs[0, _MINE] = 0
    fs[0, _LEADER] = s[S_LEADER]
    fs[0, _NPLAYED] = s[S_NPLAYED]
    fs[0, _CUR] = s[S_CUR]
    fs[0, _LED] = s[S_LED]
    fs[0, _BT], fs[0, _BTO], fs[0, _BL], fs[0, _BLO] = -1, -1, -1, -1
    fs[0, _MYIN] = 1 if s[row + me] >= 0 else 0
    fs[0, _CHOOSE] = 0
    mine_all = hand0 | (_bit(s[row + me]) if s[row + me] >= 0 else np.int64(0))
    for q in range(n):
        c = s[row + q]
        if c < 0:
            continue
        suit_held = mine_all & suit_mask(c // 13)
        if q != me and c // 13 != trump and (suit_held == 0 or c < lowest_card(suit_held)):
            # a card no card of ours is below counts as a blank: a blank played after it may have beaten it
            continue
        if c // 13 == s[S_LED] and c > fs[0, _BL]:
            fs[0, _BL], fs[0, _BLO] = c, q
        if c // 13 == trump and c > fs[0, _BT]:
            fs[0, _BT], fs[0, _BTO] = c, q
    for k in range(nothers):
        q = others[k]
        cnt[0, q] = popcount(s[S_HAND + q])
        forb[0, q] = absent[q] & relevant
    if face_held & relevant:
        held[0, s[S_DEALER]] = face_held

    nodes = 0
    d = 0
    entering = True
    while d >= 0:
        if entering:
            entering = False
            nodes += 1
            if nodes > allowance:
                return False, nodes
            code = _enter(fs, cnt, held, d, me, need, nactive, trump, others, nothers)
            if code == 1:
                return False, nodes  # a relaxed line leaves me short: no proof here
            if code == 2:
                d -= 1
                continue
            stored[d] = 0
            if fs[d, _NPLAYED] == 0 and fs[d, _CHOOSE] == 0:
                _key(fs, held, forb, d, others, nothers, keys)
                if tt_vals[_tt_slot(tt_keys, tt_vals, keys, d, kw)] == 0:
                    d -= 1
                    continue
                stored[d] = 1
            nopt[d] = _options(
                fs, cnt, held, forb, d, me, others, nothers, trump, must_trump, lead_honors, blank_suits, opts
            )
            idx[d] = 0
        if idx[d] < nopt[d]:
            o = opts[d, idx[d]]
            idx[d] += 1
            if _apply(fs, cnt, held, forb, d, o, me, nxt, n, trump, tmask, must_trump, lead_honors):
                d += 1
                entering = True
            continue
        if stored[d] == 1 and tt_count < _TT_SIZE // 2:  # every line below failed to refute: proven
            slot = _tt_slot(tt_keys, tt_vals, keys, d, kw)
            if tt_vals[slot] < 0:
                for j in range(kw):
                    tt_keys[slot, j] = keys[d, j]
                tt_vals[slot] = 0
                tt_count += 1
        d -= 1
    return True, nodes


@njit(cache=True)
def _enter(
    fs: np.ndarray,
    cnt: np.ndarray,
    held: np.ndarray,
    d: int,
    me: int,
    need: int,
    nactive: int,
    trump: int,
    others: np.ndarray,
    nothers: int,
) -> int:
    """Resolve a completed trick in frame ``d``; then 1 a relaxed refutation, 2 proven below, 0 search on."""
    if fs[d, _CHOOSE] == 0 and fs[d, _NPLAYED] == nactive:
        winner = fs[d, _BTO] if fs[d, _BT] >= 0 else fs[d, _BLO]
        if winner == me:
            fs[d, _MINE] += 1
        if fs[d, _MINE] >= need:
            return 2
        if fs[d, _HAND] == 0:
            return 1
        fs[d, _NPLAYED] = 0
        fs[d, _LED] = -1
        fs[d, _BT], fs[d, _BTO], fs[d, _BL], fs[d, _BLO] = -1, -1, -1, -1
        fs[d, _MYIN] = 0
        if winner >= 0:
            fs[d, _LEADER] = winner
            fs[d, _CUR] = winner
        else:
            fs[d, _CHOOSE] = 1  # blanks only: any opponent may have won it
    hand = fs[d, _HAND]
    mine = fs[d, _MINE]
    if mine >= need:
        return 2
    if mine + popcount(hand) + fs[d, _MYIN] < need:
        return 1
    if fs[d, _NPLAYED] == 0:
        exact = fs[d, _KPOOL]
        for k in range(nothers):
            exact |= held[d, others[k]]
        # each live trump above one of ours beats at most one of them (blanks beat none of our cards)
        if mine + trump_lower_bound(hand, trump, exact) >= need:
            return 2
        leading = fs[d, _CHOOSE] == 0 and fs[d, _LEADER] == me
        if leading and mine + popcount(hand) >= need and _all_sure_leads(hand, exact, trump):
            return 2
    return 0


@njit(cache=True)
def _key(
    fs: np.ndarray, held: np.ndarray, forb: np.ndarray, d: int, others: np.ndarray, nothers: int, keys: np.ndarray
) -> None:
    """A trick start's key: our hand, the unplaced relevant cards, tricks won and the leader, each opponent's known
    relevant cards and which unplaced ones it may not hold (every hand has as many cards as ours)."""
    keys[d, 0] = fs[d, _HAND]
    keys[d, 1] = fs[d, _KPOOL]
    keys[d, 2] = fs[d, _MINE] * 16 + fs[d, _LEADER]
    for k in range(nothers):
        q = others[k]
        keys[d, 3 + 2 * k] = held[d, q]
        keys[d, 4 + 2 * k] = forb[d, q] & fs[d, _KPOOL]


@njit(cache=True)
def _options(
    fs: np.ndarray,
    cnt: np.ndarray,
    held: np.ndarray,
    forb: np.ndarray,
    d: int,
    me: int,
    others: np.ndarray,
    nothers: int,
    trump: int,
    must_trump: bool,
    lead_honors: bool,
    blank_suits: int,
    opts: np.ndarray,
) -> int:
    m = 0
    if fs[d, _CHOOSE] == 1:
        for k in range(nothers):
            opts[d, m] = _WINNER + others[k]
            m += 1
        return m
    q = fs[d, _CUR]
    leading = fs[d, _NPLAYED] == 0
    if q == me:
        legal = ordinary_plays(
            fs[d, _HAND], leading, fs[d, _LED], fs[d, _BL], fs[d, _BT], trump, must_trump, lead_honors
        )
        while legal:
            opts[d, m] = lowest_card(legal)
            legal &= legal - 1
            m += 1
        return m
    free = cnt[d, q] > popcount(held[d, q])
    exact = held[d, q]
    if free:
        exact |= fs[d, _KPOOL] & ~forb[d, q]
    while exact:
        opts[d, m] = lowest_card(exact)
        exact &= exact - 1
        m += 1
    if free:
        if leading:
            for suit in range(4):
                if (blank_suits >> suit) & 1:
                    opts[d, m] = _BLANK_LEAD + suit
                    m += 1
        elif blank_suits:
            opts[d, m] = _BLANK
            m += 1
    return m


@njit(cache=True)
def _apply(
    fs: np.ndarray,
    cnt: np.ndarray,
    held: np.ndarray,
    forb: np.ndarray,
    d: int,
    o: int,
    me: int,
    nxt: np.ndarray,
    n: int,
    trump: int,
    tmask: int,
    must_trump: bool,
    lead_honors: bool,
) -> bool:
    """Frame ``d + 1``: frame ``d`` after option ``o``; False if the option is inconsistent (the seat holds a card
    that the play proves it lacks)."""
    e = d + 1
    for j in range(_NF):
        fs[e, j] = fs[d, j]
    for q in range(n):
        cnt[e, q] = cnt[d, q]
        held[e, q] = held[d, q]
        forb[e, q] = forb[d, q]
    if o >= _WINNER:
        q = o - _WINNER
        fs[e, _CHOOSE] = 0
        fs[e, _LEADER] = q
        fs[e, _CUR] = q
        return True
    q = fs[d, _CUR]
    leading = fs[d, _NPLAYED] == 0
    if o >= _BLANK_LEAD:
        if leading:
            fs[e, _LED] = o - _BLANK_LEAD
            proven = honors_mask(trump) if lead_honors else np.int64(0)
        else:
            proven = tmask if fs[d, _LED] == trump else np.int64(0)  # it had to follow with a trump
        if held[d, q] & proven:
            return False
        forb[e, q] |= proven
        cnt[e, q] -= 1
    else:
        c = o
        b = _bit(c)
        if q == me:
            fs[e, _HAND] &= ~b
            fs[e, _MYIN] = 1
        else:
            proven = forbidden_after(c, leading, fs[d, _LED], fs[d, _BL], fs[d, _BT], trump, must_trump, lead_honors)
            if held[d, q] & ~b & proven:
                return False
            if held[d, q] & b:
                held[e, q] &= ~b
            else:
                fs[e, _KPOOL] &= ~b
            forb[e, q] |= proven
            cnt[e, q] -= 1
        if leading:
            fs[e, _LED] = c // 13
        if c // 13 == fs[e, _LED] and c > fs[e, _BL]:
            fs[e, _BL], fs[e, _BLO] = c, q
        if c // 13 == trump and c > fs[e, _BT]:
            fs[e, _BT], fs[e, _BTO] = c, q
    fs[e, _NPLAYED] += 1
    fs[e, _CUR] = nxt[q]
    return True
