"""The compiled heuristic's trick play (``HeuristicAgent._play`` ported to numba).

Part of ``agents.heuristic.batch``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.heuristic.batch_base import (
    F_ANY_TRUMP,
    F_POW,
    F_VOID,
    F_WS,
    F_WT,
    FB_RUFF,
    FB_SIZE,
    FB_U,
    I_ACTIVE,
    I_CAPS,
    I_CHOICE,
    I_CLEFT,
    I_DEC,
    I_DISC,
    I_LEAD,
    I_ORDER,
    I_TC,
    I_TPLAY,
    K_BOURRE_BONUS,
    K_LATER_DISCOUNT,
    K_LEAD_BONUS,
    MALFORMED,
    P_FIELD,
    _bits,
    _decode_hand,
    _decode_seats,
    _expected_trumps,
    _first,
    _first_legal,
    _high,
    _low,
    _pow_cached,
    _round6,
)
from agents.heuristic.odds import (
    ACE,
    ALL_CARDS,
    DECK_SIZE,
    FACE_IN_HAND,
    FULL_SUIT,
    NUM_CARDS,
    NUM_RANKS,
    PASSED,
    PLAYING,
    SEATS,
    TRICKS,
)
from bourre_env.core import popcount
from bourre_env.observation import (
    O_DEALER,
    O_FACE,
    O_FACE_STATUS,
    O_HAND_SIZE,
    O_LEADER,
    O_OPTIONS,
    O_OWN_DISCARDS,
    O_PLAYED_BY,
    O_PLAYED_IN,
    O_TRICK_NO,
    O_TRICKS,
    O_TRUMP,
)


# ---------------------------------------------------------------- trick play
@njit(cache=True)
def _own_discards_out(n: int, h: int, dealer: int, iw: np.ndarray) -> bool:
    stock = DECK_SIZE - n * h
    pile = 0
    ours_in_pile = False
    for i in range(n):
        q = (dealer + 1 + i) % n
        if iw[I_DEC + q] == PASSED:
            pile += h
            continue
        d = max(iw[I_DISC + q], 0)
        if d > stock:
            if ours_in_pile:
                return False
            stock, pile = stock + pile - d, 0
        else:
            stock -= d
        pile += d
        if q == 0:
            ours_in_pile = True
    return True


@njit(cache=True, inline="always")
def _holds_above(
    fl: np.ndarray,
    iw: np.ndarray,
    unseen: tuple[int, int, int, int],
    trump: int,
    face_holder: int,
    face_rank: int,
    q: int,
    suit: int,
    rank: int,
) -> float:
    """Chance that ``q`` holds a card of ``suit`` above ``rank``."""
    if q == face_holder and suit == trump and face_rank > rank:
        return 1.0
    cap = iw[I_CAPS + 4 * q + suit]
    if cap <= rank:
        return 0.0
    k = popcount((unseen[suit] >> (rank + 1)) & ((1 << (cap - rank)) - 1))
    if k == 0:
        return 0.0
    if suit == trump:
        return 1.0 - _pow_cached(fl, F_POW + 2 * q * (NUM_RANKS + 1) + k, 1.0 - fl[F_WT + q], k)
    return 1.0 - _pow_cached(fl, F_POW + (2 * q + 1) * (NUM_RANKS + 1) + k, 1.0 - fl[F_WS + q], k)


@njit(cache=True)
def _decode_leaders_and_opponents(obs: np.ndarray, n: int, iw: np.ndarray) -> int:
    """Each trick's leader (at ``I_LEAD``, -1: not led) and the opponents in the deal (at ``I_ACTIVE``, ascending);
    returns how many opponents."""
    led_by = _bits(obs, O_LEADER, TRICKS * SEATS)
    for tt in range(TRICKS):
        v = (led_by >> (SEATS * tt)) & ((1 << SEATS) - 1)
        iw[I_LEAD + tt] = _high(v) if v else -1
    n_active = 0
    for q in range(1, n):
        if iw[I_DEC + q] == PLAYING:
            iw[I_ACTIVE + n_active] = q
            n_active += 1
    return n_active


@njit(cache=True, inline="always")
def _beats_trick(s: int, r: int, led: int, trump: int, best_led: int, best_trump: int) -> bool:
    """Whether card (``s``, ``r``) beats the trick so far (a trick already led)."""
    if s == trump:
        return r > best_trump
    return s == led and best_trump < 0 and r > best_led


@njit(cache=True)
def _decode_played(obs: np.ndarray, n: int, t: int, trump: int, iw: np.ndarray) -> int:
    """The played cards: by whom and in which trick (at ``I_TC``), the trumps each playing seat has played (at
    ``I_TPLAY``); returns their mask, -1 if malformed."""
    for i in range(TRICKS * SEATS):
        iw[I_TC + i] = -1
    for q in range(SEATS):
        iw[I_TPLAY + q] = 0
    played = 0
    for c in range(NUM_CARDS):
        at = O_PLAYED_IN + TRICKS * c
        if (
            (obs[at] != 0)
            | (obs[at + 1] != 0)
            | (obs[at + 2] != 0)
            | (obs[at + 3] != 0)
            | (obs[at + 4] != 0)
            | (obs[at + 5] != 0)
        ):
            played |= 1 << c
    rest = played
    while rest:
        c = _low(rest)
        rest &= rest - 1
        by_bits = _bits(obs, O_PLAYED_BY + SEATS * c, SEATS)
        if by_bits == 0:
            return -1
        by = _high(by_bits)
        tt = _low(_bits(obs, O_PLAYED_IN + TRICKS * c, TRICKS))
        if tt <= t:
            iw[I_TC + tt * SEATS + by] = c
        if c // NUM_RANKS == trump and by != 0 and by < n and iw[I_DEC + by] == PLAYING:
            iw[I_TPLAY + by] += 1
    return played


@njit(cache=True)
def _infer_caps(n: int, h: int, t: int, trump: int, must_trump: bool, iw: np.ndarray) -> tuple[int, int, int, int]:
    """Inference from the tricks so far: the highest rank each seat can still hold per suit (at ``I_CAPS``), the
    cards each has left (``I_CLEFT``). Returns (1 if the current trick is led, else 0, -1 if malformed; the suit
    led, the best rank of that suit and the best trump rank in the current trick)."""
    for i in range(SEATS * 4):
        iw[I_CAPS + i] = ACE
    for q in range(SEATS):
        iw[I_CLEFT + q] = h - t
    n_order = 0
    for q in range(n):
        if iw[I_DEC + q] == PLAYING:
            iw[I_ORDER + n_order] = q
            n_order += 1
    found = 0
    cur_led = best_led = best_trump = -1
    for tt in range(t + 1):
        lead_seat = iw[I_LEAD + tt]
        if lead_seat < 0 or iw[I_TC + tt * SEATS + lead_seat] < 0:
            continue
        start = -1
        for i in range(n_order):
            if iw[I_ORDER + i] == lead_seat:
                start = i
        if start < 0:
            return -1, cur_led, best_led, best_trump
        led = iw[I_TC + tt * SEATS + lead_seat] // NUM_RANKS
        bl = bt = -1
        for i in range(n_order):
            q = iw[I_ORDER + (start + i) % n_order]
            c = iw[I_TC + tt * SEATS + q]
            if c < 0:
                break
            s = c // NUM_RANKS
            r = c % NUM_RANKS
            if q != 0 and q != lead_seat:
                at = I_CAPS + 4 * q
                if s == led:
                    if (led == trump or bt < 0) and r < bl:
                        iw[at + led] = min(iw[at + led], bl - 1)  # could not beat the card that stood
                else:
                    iw[at + led] = -1  # did not follow: void
                    if s == trump:
                        if bt > r:
                            iw[at + trump] = min(iw[at + trump], bt - 1)  # could not overtrump
                    elif must_trump or bt < 0:
                        iw[at + trump] = -1  # did not trump: no trump
                    else:
                        iw[at + trump] = min(iw[at + trump], bt - 1)  # could not overtrump
            if s == led and r > bl:
                bl = r
            if s == trump and r > bt:
                bt = r
        if tt == t:
            found = 1
            cur_led, best_led, best_trump = led, bl, bt
            for q in range(SEATS):
                if iw[I_TC + t * SEATS + q] >= 0:
                    iw[I_CLEFT + q] -= 1
    return found, cur_led, best_led, best_trump


@njit(cache=True)
def _seat_weights(
    prm: np.ndarray,
    u: float,
    h: int,
    trump: int,
    n_trumps: int,
    n_side: int,
    face_holder: int,
    n_active: int,
    iw: np.ndarray,
    fl: np.ndarray,
) -> None:
    """Where the unseen cards are likely to be: per opponent, the chance that a given unseen trump (``F_WT``) or
    side card (``F_WS``) is in its hand; its cached powers and void chances reset."""
    p_trump = (NUM_RANKS - 1) / (DECK_SIZE - h - 1)
    for i in range(n_active):
        q = iw[I_ACTIVE + i]
        face_held = 1 if q == face_holder else 0
        hidden = iw[I_CLEFT + q] - face_held
        rem = _expected_trumps(prm, u, iw[I_DISC + q], h, p_trump) - iw[I_TPLAY + q] - face_held
        if iw[I_CAPS + 4 * q + trump] < 0:
            rem = 0.0
        else:
            if rem < 0.0:
                rem = 0.0
            if hidden < rem:
                rem = float(hidden)
        wt = rem / max(n_trumps, 1)
        fl[F_WT + q] = wt if wt < 1.0 else 1.0
        ws = (hidden - rem) / max(n_side, 1)
        fl[F_WS + q] = ws if ws < 1.0 else 1.0
        for k in range(2 * (NUM_RANKS + 1)):
            fl[F_POW + 2 * q * (NUM_RANKS + 1) + k] = np.nan
        for s in range(4):
            fl[F_VOID + 4 * q + s] = np.nan
        fl[F_ANY_TRUMP + q] = np.nan


@njit(cache=True)
def _card_chances(
    fl: np.ndarray,
    iw: np.ndarray,
    unseen: tuple[int, int, int, int],
    trump: int,
    face_holder: int,
    face_rank: int,
    n_active: int,
    t: int,
    s: int,
    r: int,
    led: int,
    leading: bool,
    can_win: bool,
    keep: bool,
) -> tuple[float, float]:
    """(chance that card (``s``, ``r``) wins the trick now, chance that it would stand if kept), with one pass over
    the opponents (HeuristicAgent's win_now and keep_worth, whose products run over the same seats in the same
    order)."""
    now = 1.0 if can_win else 0.0
    kept = 1.0
    for i in range(n_active):
        q = iw[I_ACTIVE + i]
        later = can_win and (leading or iw[I_TC + t * SEATS + q] < 0)  # plays after us in this trick
        if not (later or keep):
            continue
        above = _holds_above(fl, iw, unseen, trump, face_holder, face_rank, q, s, r)
        void = 0.0
        void_suit = led if s == trump else s
        if s != trump or (later and led != trump):
            # a trump is beaten when q is void in the suit led (and holds a higher trump); a side card
            # when q holds a higher one, or is void in its suit and holds a trump
            at = F_VOID + 4 * q + void_suit
            void = fl[at]
            if void != void:
                cap = iw[I_CAPS + 4 * q + void_suit]
                if cap < 0:
                    void = 1.0
                elif q == face_holder and void_suit == trump:
                    void = 0.0
                else:
                    k = popcount(unseen[void_suit] & ((1 << (cap + 1)) - 1))
                    if void_suit == trump:
                        void = _pow_cached(fl, F_POW + 2 * q * (NUM_RANKS + 1) + k, 1.0 - fl[F_WT + q], k)
                    else:
                        void = _pow_cached(fl, F_POW + (2 * q + 1) * (NUM_RANKS + 1) + k, 1.0 - fl[F_WS + q], k)
                fl[at] = void
        if s == trump:
            if later:
                now *= 1.0 - (above if led == trump else void * above)
            if keep:
                kept *= 1.0 - above
        else:
            any_trump = fl[F_ANY_TRUMP + q]
            if any_trump != any_trump:
                any_trump = _holds_above(fl, iw, unseen, trump, face_holder, face_rank, q, trump, -1)
                fl[F_ANY_TRUMP + q] = any_trump
            beaten = above + void * any_trump
            if not beaten < 1.0:
                beaten = 1.0
            if later:
                now *= 1.0 - beaten
            if keep:
                kept *= 1.0 - beaten
    return now, kept


@njit(cache=True)
def _play(obs: np.ndarray, mask: np.ndarray, tie_break: float, prm: np.ndarray, iw: np.ndarray, fl: np.ndarray) -> int:
    legal_bits = _bits(mask, 0, NUM_CARDS)
    if legal_bits & (legal_bits - 1) == 0:
        return _low(legal_bits) if legal_bits else _first_legal(mask)

    nh, hand_bits = _decode_hand(obs, iw)
    n = _decode_seats(obs, iw)
    trump = _first(obs, O_TRUMP, 4)
    face = _first(obs, O_FACE, NUM_CARDS)
    face_status = _first(obs, O_FACE_STATUS, 3)
    dealer = _first(obs, O_DEALER, SEATS)
    h = _round6(obs[O_HAND_SIZE])
    t = _first(obs, O_TRICK_NO, TRICKS + 1)
    if nh < 0 or n < 0 or trump < 0 or not 0 <= dealer < n or not 1 <= h <= TRICKS or not 0 <= t < TRICKS:
        return MALFORMED
    won = _bits(obs, O_TRICKS, TRICKS + 1)
    my_tricks = _high(won) if won else 0
    n_active = _decode_leaders_and_opponents(obs, n, iw)
    must_trump = obs[O_OPTIONS] > 0.5
    face_rank = face % NUM_RANKS
    face_holder = dealer if face_status == FACE_IN_HAND and dealer != 0 and iw[I_DEC + dealer] == PLAYING else -1
    field = P_FIELD + ((n * SEATS + n_active) * SEATS + n - 1 - n_active) * FB_SIZE
    u = prm[field + FB_U]
    ruff_credit = prm[field + FB_RUFF + n_active]

    played = _decode_played(obs, n, t, trump, iw)
    if played < 0:
        return MALFORMED
    seen = hand_bits | played
    if face >= 0:
        seen |= 1 << face
    if _own_discards_out(n, h, dealer, iw):
        seen |= _bits(obs, O_OWN_DISCARDS, NUM_CARDS)
    unseen_all = ALL_CARDS & ~seen
    unseen = (
        (unseen_all >> 0) & FULL_SUIT,
        (unseen_all >> NUM_RANKS) & FULL_SUIT,
        (unseen_all >> (2 * NUM_RANKS)) & FULL_SUIT,
        (unseen_all >> (3 * NUM_RANKS)) & FULL_SUIT,
    )
    unseen_total = popcount(unseen_all)
    trumps_held = popcount((hand_bits >> (NUM_RANKS * trump)) & FULL_SUIT)

    found, cur_led, best_led, best_trump = _infer_caps(n, h, t, trump, must_trump, iw)
    if found < 0:
        return MALFORMED
    leading = found == 0
    n_trumps = popcount(unseen[trump])
    _seat_weights(prm, u, h, trump, n_trumps, unseen_total - n_trumps, face_holder, n_active, iw, fl)

    # Score every legal card: its chance to win now and its worth if kept, with one pass over the
    # opponents per card (HeuristicAgent's win_now and keep_worth, whose products run over the same
    # seats in the same order).
    bonus = 1.0 + prm[K_LEAD_BONUS] + (prm[K_BOURRE_BONUS] if my_tricks == 0 else 0.0)
    later_discount = prm[K_LATER_DISCOUNT]
    best = -1e9
    n_choice = 0
    rest = legal_bits
    while rest:
        c = _low(rest)
        rest &= rest - 1
        s = c // NUM_RANKS
        r = c % NUM_RANKS
        led = s if leading else cur_led
        can_win = leading or _beats_trick(s, r, led, trump, best_led, best_trump)
        keep = not (leading and s != trump)
        now, kept = _card_chances(
            fl, iw, unseen, trump, face_holder, face_rank, n_active, t, s, r, led, leading, can_win, keep
        )
        if not keep:
            worth = now * later_discount
        elif s == trump:
            worth = kept + (1.0 - kept) * ruff_credit
        else:
            worth = later_discount * kept
        shed = -0.001 * r
        if s != trump and popcount((hand_bits >> (NUM_RANKS * s)) & FULL_SUIT) == 1 and trumps_held > 0:
            shed += 0.002
        score = now * bonus - worth + shed
        if score > best + 1e-9:
            best = score
            iw[I_CHOICE] = c
            n_choice = 1
        elif score > best - 1e-9:
            iw[I_CHOICE + n_choice] = c
            n_choice += 1
    if n_choice == 1:
        return iw[I_CHOICE]
    return iw[I_CHOICE + min(int(tie_break * n_choice), n_choice - 1)]
