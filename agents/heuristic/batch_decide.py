"""The compiled heuristic's draw-or-pass decisions (``HeuristicAgent._decide`` ported to numba).

Part of ``agents.heuristic.batch``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.heuristic.batch_base import (
    _COMB,
    _HALF,
    F_BASE,
    F_BOURRE,
    F_DIST,
    F_LOW,
    F_VALUE,
    F_WIN,
    F_XPOW,
    FB_ACE,
    FB_NOT_Q_POW,
    FB_Q_PLAY,
    FB_Q_POW,
    FB_RUFF,
    FB_SIZE,
    FB_U,
    I_DEC,
    I_DISC,
    I_HAND,
    I_OPTS,
    I_ORDER,
    I_STAYS,
    I_TRUMPS,
    K_CHOOSE_DRAW,
    K_KEEP_KINGS_UPTO,
    K_KEEP_KINGS_WITH_ACE,
    K_LOOSE_LIVE,
    K_MARGIN,
    MALFORMED,
    P_FIELD,
    P_SURE_WIN,
    P_WIN_GIVEN,
    _bits,
    _cdf,
    _decode_hand,
    _decode_seats,
    _expected_trumps,
    _first,
    _first_legal,
    _pow_cached,
    _round6,
)
from agents.heuristic.odds import (
    ACE,
    ALL_CARDS,
    DECK_SIZE,
    DRAW_FLOORS,
    FULL_SUIT,
    KEEP_SIDE_ACE,
    KEEP_SIDE_KING,
    KEEP_TRUMP,
    KING,
    KING_PER_ACE,
    MAX_LIVE,
    MIN_COUNT_WEIGHT,
    NUM_CARDS,
    NUM_RANKS,
    PLAYING,
    SEATS,
    TRICKS,
)
from bourre_env.actions import DECLARE_PLAY, NUM_ACTIONS, PASS, SECOND_STAY, STAY_BASE
from bourre_env.core import popcount
from bourre_env.observation import (
    O_DEAL,
    O_DEALER,
    O_FACE,
    O_HAND_SIZE,
    O_OPTIONS,
    O_POT,
    O_POT_LIMIT,
    O_ROUND,
    O_TRUMP,
    ROUND_SECOND_PASS,
)


# ---------------------------------------------------------------- draw or pass
@njit(cache=True)
def _outlook(
    prm: np.ndarray,
    n: int,
    h: int,
    trump: int,
    dealer: int,
    face: int,
    hand_bits: int,
    n_trumps: int,
    n_opts: int,
    iw: np.ndarray,
    fl: np.ndarray,
) -> None:
    """(P(win), P(bourré)) of each candidate draw (``I_OPTS``), into ``F_WIN + k`` and ``F_BOURRE + k``."""
    playing = acted = pending_others = 0
    for q in range(1, n):
        d = iw[I_DEC + q]
        if d == 0:
            if q != dealer:
                pending_others += 1
        else:
            acted += 1
            if d == PLAYING:
                playing += 1
    field = P_FIELD + ((n * SEATS + playing) * SEATS + acted - playing) * FB_SIZE
    u = prm[field + FB_U]
    q_play = prm[field + FB_Q_PLAY]
    live_scale = 1.0 + u * (prm[K_LOOSE_LIVE] - 1.0)
    face_mine = dealer == 0
    face_rank = face % NUM_RANKS if face >= 0 else -1
    if face_mine:
        q_dealer = 0.0
    elif face_rank == ACE:
        q_dealer = 1.0
    else:
        q_dealer = 0.5 if q_play < 0.5 else q_play

    seen = hand_bits
    if face >= 0:
        seen |= 1 << face
    unseen_total = max(DECK_SIZE - popcount(seen), 1)
    trump_bits = ((ALL_CARDS & ~seen) >> (NUM_RANKS * trump)) & FULL_SUIT
    n_unseen_trumps = popcount(trump_bits)
    unseen_side_aces = 0
    for s in range(4):
        if s != trump and not (seen >> (s * NUM_RANKS + ACE)) & 1:
            unseen_side_aces += 1
    p_draw_trump = n_unseen_trumps / unseen_total
    p_draw_ace = unseen_side_aces / unseen_total
    over_face = n_unseen_trumps if face_mine or face < 0 else popcount(trump_bits >> face_rank)

    known_trumps = 0.0
    for q in range(1, n):
        if iw[I_DEC + q] == PLAYING:
            known_trumps += _expected_trumps(prm, u, iw[I_DISC + q], h, p_draw_trump)
    # np.int64, not the literal: numba would compile a second copy specialised on the constant's value
    pending_trumps = _expected_trumps(prm, u, np.int64(-1), h, p_draw_trump)

    for m in range(n + 1):
        fl[F_DIST + m] = 0.0
    for dp in range(2):
        wd = q_dealer if dp else 1.0 - q_dealer
        if wd <= 0.0:
            continue
        for j in range(pending_others + 1):
            fl[F_DIST + playing + j + dp] += (
                wd
                * _COMB[pending_others, j]
                * prm[field + FB_Q_POW + j]
                * prm[field + FB_NOT_Q_POW + pending_others - j]
            )

    for k in range(n_opts):
        fl[F_WIN + k] = 0.0
        fl[F_BOURRE + k] = 0.0
    total_w = 0.0
    for m in range(n + 1):
        w = fl[F_DIST + m]
        if w < MIN_COUNT_WEIGHT:
            continue
        total_w += w
        if m == 0:
            for k in range(n_opts):
                fl[F_WIN + k] += w
            continue
        live = live_scale * (known_trumps + (m - playing) * pending_trumps) / max(n_unseen_trumps, 1)
        if not live < MAX_LIVE:
            live = MAX_LIVE
        x = 1.0 - live
        for k in range(NUM_RANKS + 1):
            fl[F_XPOW + k] = np.nan
        ruff = prm[field + FB_RUFF + m]
        mm = min(m, SEATS - 1)
        row = P_WIN_GIVEN + (h * SEATS + mm) * (TRICKS + 1)
        track = int(prm[P_SURE_WIN + h * SEATS + mm])
        fl[F_BASE] = 1.0
        for i in range(1, track):
            fl[F_BASE + i] = 0.0
        for i in range(n_trumps):
            r = iw[I_TRUMPS + i]
            above = popcount(trump_bits >> (r + 1))
            x_pow = _pow_cached(fl, F_XPOW + above, x, above) if i - 1 < above and x > 0.0 else 0.0
            if not face_mine and face_rank > r:
                sure = (1.0 - q_dealer) * _cdf(above, live, i, x_pow) + q_dealer * _cdf(above, live, i - 1, x_pow)
            else:
                sure = _cdf(above, live, i, x_pow)
            _add_card(fl, F_BASE, track, sure + (1.0 - sure) * ruff)
        ace = prm[field + FB_ACE + m]
        draw = p_draw_ace * ace
        if n_unseen_trumps:
            xa = _pow_cached(fl, F_XPOW + over_face, x, over_face)
            over = (1.0 - xa) / live if live > 0.0 else float(over_face)
            if live > 0.0:
                under = (xa - _pow_cached(fl, F_XPOW + n_unseen_trumps, x, n_unseen_trumps)) / live
            else:
                under = float(n_unseen_trumps - over_face)
            stand = (over + (1.0 - q_dealer) * under) / n_unseen_trumps
            draw += p_draw_trump * (stand + (1.0 - stand) * ruff)
        for k in range(n_opts):
            for i in range(track):
                fl[F_LOW + i] = fl[F_BASE + i]
            for _ in range(iw[I_OPTS + 3 * k]):
                _add_card(fl, F_LOW, track, ace)
            for _ in range(iw[I_OPTS + 3 * k + 1]):
                _add_card(fl, F_LOW, track, ace * KING_PER_ACE)
            for _ in range(iw[I_OPTS + 3 * k + 2]):
                _add_card(fl, F_LOW, track, draw)
            lose = 0.0
            for i in range(track):
                lose += fl[F_LOW + i] * (1.0 - prm[row + i])
            fl[F_WIN + k] += w * (1.0 - lose)
            fl[F_BOURRE + k] += w * fl[F_LOW]
    for k in range(n_opts):
        fl[F_WIN + k] = fl[F_WIN + k] / total_w
        fl[F_BOURRE + k] = fl[F_BOURRE + k] / total_w


@njit(cache=True, inline="always")
def _add_card(fl: np.ndarray, at: int, size: int, p: float) -> None:
    """One more card, taking a trick with chance ``p``, into the trick-count distribution at ``fl[at:at + size]``."""
    q = 1.0 - p
    for x in range(size - 1, 0, -1):
        fl[at + x] = fl[at + x] * q + fl[at + x - 1] * p
    fl[at] = fl[at] * q


@njit(cache=True)
def _keep_values(prm: np.ndarray, n: int, nh: int, trump: int, iw: np.ndarray, fl: np.ndarray) -> None:
    """What to keep at the draw, as a value per hand position at ``F_VALUE`` (``HeuristicAgent._decide``'s)."""
    aces = 0
    for i in range(nh):
        if iw[I_HAND + i] % NUM_RANKS == ACE:
            aces |= 1 << (iw[I_HAND + i] // NUM_RANKS)
    kings_kept = n <= prm[K_KEEP_KINGS_UPTO]
    with_ace = prm[K_KEEP_KINGS_WITH_ACE] != 0.0
    for i in range(nh):
        s = iw[I_HAND + i] // NUM_RANKS
        r = iw[I_HAND + i] % NUM_RANKS
        if s == trump:
            v = KEEP_TRUMP + r
        elif r == ACE:
            v = KEEP_SIDE_ACE
        elif r == KING and (kings_kept or (with_ace and (aces >> s) & 1 != 0)):
            v = KEEP_SIDE_KING
        else:
            v = float(r)
        fl[F_VALUE + i] = v


@njit(cache=True)
def _pot_and_cost(obs: np.ndarray) -> tuple[float, float]:
    """(the pot in chips, capped by the pot limit; the bourré payment in pots: a bourré player skips the next ante if
    another deal follows)."""
    pot = np.float64(obs[O_POT]) * 100.0
    if obs[O_POT_LIMIT] > 0.5:
        limit = np.float64(obs[O_POT_LIMIT + 1]) * 100.0
        if limit < pot:
            pot = limit
    deals_left = int(np.round(np.float64(obs[O_DEAL + 1]) * 10.0))
    cost = 1.0 - (1.0 / pot if deals_left > 0 and pot >= 1.0 else 0.0)
    return pot, cost


@njit(cache=True)
def _side_honours(nh: int, kept: int, trump: int, iw: np.ndarray) -> tuple[int, int]:
    """(side aces, side kings) among the hand's cards in ``kept``."""
    side_aces = side_kings = 0
    for i in range(nh):
        c = iw[I_HAND + i]
        if (kept >> c) & 1 and c // NUM_RANKS != trump:
            if c % NUM_RANKS == ACE:
                side_aces += 1
            elif c % NUM_RANKS == KING:
                side_kings += 1
    return side_aces, side_kings


@njit(cache=True)
def _order_by_value(nh: int, iw: np.ndarray, fl: np.ndarray) -> None:
    """The hand's positions by value at ``I_ORDER``, ascending, equal values in hand order (a stable sort)."""
    for i in range(nh):
        j = i
        while j > 0 and fl[F_VALUE + iw[I_ORDER + j - 1]] > fl[F_VALUE + i]:
            iw[I_ORDER + j] = iw[I_ORDER + j - 1]
            j -= 1
        iw[I_ORDER + j] = i


@njit(cache=True)
def _decide(obs: np.ndarray, mask: np.ndarray, prm: np.ndarray, iw: np.ndarray, fl: np.ndarray) -> int:
    nh, hand_bits = _decode_hand(obs, iw)
    n = _decode_seats(obs, iw)
    trump = _first(obs, O_TRUMP, 4)
    face = _first(obs, O_FACE, NUM_CARDS)
    dealer = _first(obs, O_DEALER, SEATS)
    h = _round6(obs[O_HAND_SIZE])
    max_discard = _round6(obs[O_OPTIONS + 3])
    if nh < 0 or n < 0 or trump < 0 or not 0 <= dealer < n or not 1 <= h <= TRICKS or max_discard < 0:
        return MALFORMED

    _keep_values(prm, n, nh, trump, iw, fl)
    pot, cost = _pot_and_cost(obs)

    if popcount(_bits(mask, 0, _HALF)) + popcount(_bits(mask, _HALF, NUM_ACTIONS - _HALF)) == 1:
        return _first_legal(mask)
    n_trumps = np.int64(0)  # not the literal: numba typed a copy of _outlook on n_trumps == 0 (docs/architecture.md)
    for i in range(nh - 1, -1, -1):
        if iw[I_HAND + i] // NUM_RANKS == trump:
            iw[I_TRUMPS + n_trumps] = iw[I_HAND + i] % NUM_RANKS
            n_trumps += 1
    if obs[O_ROUND + ROUND_SECOND_PASS] > 0.5:
        if _sure_trick(hand_bits, trump):
            return SECOND_STAY
        side_aces, side_kings = _side_honours(nh, hand_bits, trump, iw)
        iw[I_OPTS] = side_aces
        iw[I_OPTS + 1] = side_kings
        iw[I_OPTS + 2] = 0
        one = np.int64(1)  # not the literal 1: numba would compile a second _outlook specialised on it
        _outlook(prm, n, h, trump, dealer, face, hand_bits, n_trumps, one, iw, fl)
        pot1 = pot if pot > 1.0 else 1.0  # Python's max(pot, 1.0)
        return SECOND_STAY if fl[F_WIN] - fl[F_BOURRE] * cost > prm[K_MARGIN] + 1.0 / pot1 else PASS

    _order_by_value(nh, iw, fl)
    # only PASS and DECLARE_PLAY allowed: a declaration round
    declaring = iw[I_DEC] == 0 and _bits(mask, STAY_BASE + 1, NUM_ACTIONS - STAY_BASE - 1) == 0
    n_opts = np.int64(0)  # as n_trumps: a literal 0 typed a copy of _outlook
    for f in range(3 if prm[K_CHOOSE_DRAW] != 0.0 else 1):
        floor = DRAW_FLOORS[f]
        # the values below the floor are a prefix of the order
        below = 0
        while below < nh and fl[F_VALUE + iw[I_ORDER + below]] < floor:
            below += 1
        n_drop = min(below, max_discard)
        drop_bits = 0
        kept = hand_bits
        for i in range(n_drop):
            drop_bits |= 1 << iw[I_ORDER + i]
            kept &= ~(1 << iw[I_HAND + iw[I_ORDER + i]])
        stay = STAY_BASE + drop_bits
        seen_before = False
        for k in range(n_opts):
            if iw[I_STAYS + k] == stay:
                seen_before = True
        if seen_before or (mask[stay] == 0 and not declaring):
            continue
        if _sure_trick(kept, trump):
            return DECLARE_PLAY if declaring else stay
        iw[I_STAYS + n_opts] = stay
        side_aces, side_kings = _side_honours(nh, kept, trump, iw)
        iw[I_OPTS + 3 * n_opts] = side_aces
        iw[I_OPTS + 3 * n_opts + 1] = side_kings
        iw[I_OPTS + 3 * n_opts + 2] = n_drop
        n_opts += 1
    if n_opts == 0:
        for a in range(NUM_ACTIONS - 1, -1, -1):
            if mask[a]:
                return a
    _outlook(prm, n, h, trump, dealer, face, hand_bits, n_trumps, n_opts, iw, fl)
    best = 0
    best_gain = fl[F_WIN] - fl[F_BOURRE] * cost
    for k in range(1, n_opts):
        gain = fl[F_WIN + k] - fl[F_BOURRE + k] * cost
        if gain > best_gain:
            best = k
            best_gain = gain
    play = DECLARE_PLAY if declaring else iw[I_STAYS + best]
    if not mask[PASS]:
        return play
    return play if best_gain > prm[K_MARGIN] else PASS


@njit(cache=True)
def _sure_trick(kept: int, trump: int) -> bool:
    """Whether ``kept`` holds the highest trump anyone could hold: the Python agent's test, which
    asks that every trump above our highest be ours, holds exactly when that trump is the ace."""
    return bool((kept >> (trump * NUM_RANKS + ACE)) & 1)
