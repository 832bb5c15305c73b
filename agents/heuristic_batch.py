"""The heuristic for a whole batch at once: ``agents.heuristic`` compiled, decision for decision the same.

``BatchHeuristic`` takes the rows that ``BatchGame.observations()`` and ``BatchGame.legal_masks()``
produce (float32 ``(B, OBS_SIZE)`` and int8 ``(B, NUM_ACTIONS)``) and returns one action per row,
computed by one compiled kernel. Like the Python agent it reads nothing but the observation and
the mask.

>>> game = BatchGame(batch_size=1024, seed=0, num_players=5)
>>> bot = BatchHeuristic("tight", seed=0)
>>> actions = bot.act(game.observations(), game.legal_masks())   # int64 (1024,)
>>> rewards, done = game.step(actions)

Relation to ``agents.heuristic``
--------------------------------
``HeuristicAgent`` is the reference: readable, documented, and what ``agents.make("heuristic")``
builds; a change of strategy is made there first, then here. This module ports it to numba:
the same decoding of the observation, the same candidate draws and outlook model, the same card
scores, with the floating-point operations in the same order (and the C library's ``pow`` where
Python computes ``x ** k``), so that every comparison the strategy makes comes out the same.
Where the port is arranged for speed the numbers are still the same ones: the field model's
results and their powers are tabled once per parameter set by the Python agent's own function
and expressions (``params_array``); a card's chance to win now and its worth if kept are found in
one pass over the opponents, each product over the same seats in the same order; powers and
void chances are remembered within a decision. (This is also why the Python agent adds its sums
left to right rather than with ``sum()``, which compensates rounding from Python 3.12 on.)

The only randomness is the tie-break between cards scored exactly alike. Both implementations
take one number ``u`` in [0, 1) per decision and play the ``int(u * k)``-th of ``k`` tied
cards (in card order): ``HeuristicAgent.act`` draws ``u`` from its generator at every decision,
``HeuristicAgent.choose(obs, mask, u)`` takes it given; ``BatchHeuristic.act`` draws one per row
from its own generator (``rng.random(B)``), or takes the caller's ``tie_breaks``. A
``BatchHeuristic`` and a ``HeuristicAgent`` built with the same seed therefore make the same
decisions when the batch is fed one row at a time.

``tests/test_heuristic_batch.py`` holds the two to identical actions on over 10^5 observations
of real play (random and heuristic players mixed, every rule preset, 2 to 8 players, each
observation under the three parameter sets, every decision round, reshuffles and exact ties),
each row with the same ``u``. ``benchmarks/heuristic_speed.py`` measures both.

For compiled callers
--------------------
``heuristic_actions(obs, masks, tie_breaks, params, out)`` is the batch kernel and
``heuristic_action(obs_row, mask_row, tie_break, params, ints, floats)`` one row of it, callable
from other numba code; ``params`` is ``params_array(...)`` (the knobs of ``HeuristicParams`` and
the tables above, as float64) and ``ints``/``floats`` are scratch buffers of ``INT_WORK``/
``FLOAT_WORK`` entries. Neither checks its inputs: ``BatchHeuristic.act`` does. A row whose mask
allows nothing gets -1 and a row that is not a decision observation the heuristic can read (a
hand of more than six cards, no trump in trick play...) gets -2; ``heuristic_actions`` returns
the first such row, or -1.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from numba import njit

from agents.heuristic import PARAM_SETS, SURE_WIN, WIN_GIVEN, HeuristicParams
from agents.heuristic import _field as reference_field
from bourre_env.actions import NUM_ACTIONS, PASS, STAY_BASE
from bourre_env.core import popcount
from bourre_env.observation import (
    O_DEAL,
    O_DEALER,
    O_DECISION,
    O_FACE,
    O_FACE_STATUS,
    O_HAND_SIZE,
    O_LEADER,
    O_NDISCARD,
    O_OPTIONS,
    O_OWN_DISCARDS,
    O_PHASE,
    O_PLAYED_BY,
    O_PLAYED_IN,
    O_POT,
    O_POT_LIMIT,
    O_ROUND,
    O_TRICK_NO,
    O_TRICKS,
    O_TRUMP,
    OBS_SIZE,
    ROUND_NAME_TRUMP,
    ROUND_SECOND_PASS,
)

__all__ = ["BatchHeuristic", "heuristic_action", "heuristic_actions", "params_array", "INT_WORK", "FLOAT_WORK"]

NUM_CARDS = 52
RANKS = 13
ACE = 12
KING = 11
SEATS = 8
TRICKS = 6
FULL_SUIT = (1 << RANKS) - 1
ALL_CARDS = (1 << NUM_CARDS) - 1
DECK_SIZE = 52
PASSED = 1
PLAYING = 2
FACE_IN_HAND = 0
_HALF = (NUM_ACTIONS + 1) // 2  # a mask is read as two bitmasks, of 59 and 58 bits
NO_LEGAL = -1
MALFORMED = -2

# ---------------------------------------------------------------- the parameter vector
_KNOBS = tuple(f.name for f in dataclasses.fields(HeuristicParams))
assert _KNOBS == (
    "margin", "ace_survival", "ruff_credit", "kept_trumps", "pending_trumps", "loose_ace_survival",
    "loose_ruff_credit", "loose_live", "prior_loose", "selective_players", "loose_share", "choose_draw",
    "keep_kings_with_ace", "keep_kings_upto", "lead_bonus", "bourre_bonus", "later_discount",
), "HeuristicParams changed: update the kernel's indices"
(K_MARGIN, K_ACE_SURVIVAL, K_RUFF_CREDIT, K_KEPT_TRUMPS, K_PENDING_TRUMPS, K_LOOSE_ACE_SURVIVAL,
 K_LOOSE_RUFF_CREDIT, K_LOOSE_LIVE, K_PRIOR_LOOSE, K_SELECTIVE_PLAYERS, K_LOOSE_SHARE, K_CHOOSE_DRAW,
 K_KEEP_KINGS_WITH_ACE, K_KEEP_KINGS_UPTO, K_LEAD_BONUS, K_BOURRE_BONUS, K_LATER_DISCOUNT) = range(len(_KNOBS))
# The outlook's tables travel in the vector rather than as globals: numba freezes globals into its
# cached machine code and checks the cache only against this file, so a change of the tables in
# agents/heuristic.py would otherwise go unseen.
P_WIN_GIVEN = len(_KNOBS)  # WIN_GIVEN[h][m][x] at P_WIN_GIVEN + (h * SEATS + m) * (TRICKS + 1) + x
P_SURE_WIN = P_WIN_GIVEN + (TRICKS + 1) * SEATS * (TRICKS + 1)  # SURE_WIN[h][m] at P_SURE_WIN + h * SEATS + m
# What the field model gives for each (players n, came in, passed): the Python agent's own ``_field``
# and the powers it takes of its results, computed once here by the same Python expressions (so
# bit for bit the same numbers) instead of some fifty calls to pow per decision. The block of
# (n, played, passed) starts at P_FIELD + ((n * SEATS + played) * SEATS + passed) * FB_SIZE.
P_FIELD = P_SURE_WIN + (TRICKS + 1) * SEATS
FB_U = 0  # chance that the field is loose
FB_Q_PLAY = 1  # chance that an undecided player plays
FB_Q_POW = 2  # q_play ** j, j = 0..SEATS - 1
FB_NOT_Q_POW = FB_Q_POW + SEATS  # (1 - q_play) ** j
FB_RUFF = FB_NOT_Q_POW + SEATS  # ruff_credit ** (m / 3), m = 0..SEATS
FB_ACE = FB_RUFF + SEATS + 1  # ace_survival ** m
FB_SIZE = FB_ACE + SEATS + 1
PARAMS_SIZE = P_FIELD + (SEATS + 1) * SEATS * SEATS * FB_SIZE

_COMB = np.array([[math.comb(a, b) for b in range(SEATS + 1)] for a in range(SEATS + 1)], dtype=np.float64)


def params_array(params: HeuristicParams | str = "default") -> np.ndarray:
    """The float64 vector the kernel reads: the fields of ``HeuristicParams`` in order, then the tables."""
    prm = _resolve(params)
    out = np.zeros(PARAMS_SIZE, dtype=np.float64)
    for i, name in enumerate(_KNOBS):
        out[i] = float(getattr(prm, name))
    out[P_WIN_GIVEN:P_SURE_WIN] = np.asarray(WIN_GIVEN, dtype=np.float64).reshape(-1)
    out[P_SURE_WIN:P_FIELD] = np.asarray(SURE_WIN, dtype=np.float64).reshape(-1)
    for n in range(2, SEATS + 1):
        for played in range(n):
            for passed in range(n - played):
                at = P_FIELD + ((n * SEATS + played) * SEATS + passed) * FB_SIZE
                u, q_play = reference_field(prm, n, played, passed)
                # the expressions of HeuristicAgent._outlook and _PlayState, in the same order
                ruff_credit = prm.ruff_credit + u * (prm.loose_ruff_credit - prm.ruff_credit)
                ace_survival = prm.ace_survival + u * (prm.loose_ace_survival - prm.ace_survival)
                out[at + FB_U] = u
                out[at + FB_Q_PLAY] = q_play
                for j in range(SEATS):
                    out[at + FB_Q_POW + j] = q_play**j
                    out[at + FB_NOT_Q_POW + j] = (1.0 - q_play) ** j
                for m in range(SEATS + 1):
                    out[at + FB_RUFF + m] = ruff_credit ** (m / 3.0)
                    out[at + FB_ACE + m] = ace_survival**m
    return out


def _resolve(params: HeuristicParams | str) -> HeuristicParams:
    if isinstance(params, HeuristicParams):
        return params
    if isinstance(params, str) and params in PARAM_SETS:
        return PARAM_SETS[params]
    raise ValueError(f"params: expected a HeuristicParams or one of {sorted(PARAM_SETS)}, got {params!r}")


# ---------------------------------------------------------------- scratch buffers
# Fixed places in two flat buffers, indexed directly rather than through views: numba counts the
# references to every view with atomic operations, which in the per-card loops cost more than the sums.
# ints
I_HAND = 0  # hand card ids, ascending
I_DEC = 8  # decision per relative seat
I_DISC = 16  # announced discards per seat (-1: none)
I_LEAD = 24  # leader per trick (-1: not led)
I_TC = 32  # card per trick and seat (-1: none), TRICKS x SEATS
I_CAPS = I_TC + TRICKS * SEATS  # highest rank a seat can still hold, SEATS x 4
I_TPLAY = I_CAPS + SEATS * 4  # trumps played per seat
I_CLEFT = I_TPLAY + SEATS  # cards left per seat
I_ORDER = I_CLEFT + SEATS  # playing seats, ascending; the hand's positions by value in the draw
I_ACTIVE = I_ORDER + SEATS  # opponents in the deal, ascending
I_TRUMPS = I_ACTIVE + SEATS  # ranks of our trumps, descending
I_OPTS = I_TRUMPS + SEATS  # candidate draws: (aces, kings, draws) x 3
I_STAYS = I_OPTS + 9
I_CHOICE = I_STAYS + 3
INT_WORK = I_CHOICE + NUM_CARDS
"""Entries of the int64 scratch buffer of ``heuristic_action``."""
# floats
F_VALUE = 0  # keep value per hand position
F_WT = 8  # per seat: chance that a given unseen trump is in its hand
F_WS = 16  # the same for a side card
F_DIST = 24  # distribution of the number of opponents, 0..SEATS
F_BASE = F_DIST + SEATS + 1  # trick-count distribution of the trumps kept
F_LOW = F_BASE + TRICKS + 1  # the same with an option's other cards
F_WIN = F_LOW + TRICKS + 1
F_BOURRE = F_WIN + 3
F_XPOW = F_BOURRE + 3  # (1 - live) ** k, k = 0..RANKS (NaN until computed)
F_VOID = F_XPOW + RANKS + 1  # void chance per seat and suit (NaN until computed)
F_ANY_TRUMP = F_VOID + SEATS * 4  # chance per seat of holding any trump (NaN until computed)
F_POW = F_ANY_TRUMP + SEATS  # (1 - w) ** k per seat, trump and side weight, k = 0..RANKS (NaN until computed)
FLOAT_WORK = F_POW + SEATS * 2 * (RANKS + 1)
"""Entries of the float64 scratch buffer of ``heuristic_action``."""


# ---------------------------------------------------------------- shared pieces
# The one-hot fields are read as bitmasks, one compare per entry and no branch: a branch per entry
# mispredicts on every one, and decoding would cost more than the decision.
@njit(cache=True, inline="always")
def _bits(x: np.ndarray, start: int, size: int) -> int:
    """Bit ``i`` set where ``x[start + i]`` is nonzero (``size`` at most 63)."""
    m = 0
    for i in range(size):
        if x[start + i] != 0:
            m |= 1 << i
    return m


@njit(cache=True)
def _low(m: int) -> int:
    """Index of the lowest set bit of ``m`` > 0."""
    return popcount((m & -m) - 1)


@njit(cache=True)
def _high(m: int) -> int:
    """Index of the highest set bit of ``m`` > 0 (a one-hot field's last one, as the Python agent reads it)."""
    m |= m >> 1
    m |= m >> 2
    m |= m >> 4
    m |= m >> 8
    m |= m >> 16
    m |= m >> 32
    return popcount(m) - 1


@njit(cache=True)
def _first(obs: np.ndarray, start: int, size: int) -> int:
    """Index of the first nonzero entry of ``obs[start:start + size]``, or -1."""
    m = _bits(obs, start, size)
    return _low(m) if m else -1


@njit(cache=True)
def _round6(x: float) -> int:
    return int(np.round(np.float64(x) * 6.0))


@njit(cache=True)
def _expected_trumps(prm: np.ndarray, u: float, discards: int, h: int, p_trump: float) -> float:
    ordinary = h * p_trump
    selective = prm[K_PENDING_TRUMPS] if discards < 0 else (h - discards) * prm[K_KEPT_TRUMPS] + discards * p_trump
    return selective + u * (ordinary - selective)


@njit(cache=True)
def _cdf(k: int, p: float, at_most: int, q_pow_k: float) -> float:
    """P(Binomial(k, p) <= at_most), with ``q_pow_k`` = (1 - p) ** k (used only when 0 <= at_most < k, p < 1)."""
    if at_most < 0:
        return 0.0
    if at_most >= k:
        return 1.0
    q = 1.0 - p
    if q <= 0.0:
        return 0.0
    term = q_pow_k
    total = term
    ratio = p / q
    for j in range(at_most):
        term *= (k - j) / (j + 1) * ratio
        total += term
    return total


@njit(cache=True, inline="always")
def _pow_cached(fl: np.ndarray, at: int, x: float, k: int) -> float:
    """``x ** k`` (the C library's pow, as Python's float ** int), remembered at ``fl[at]`` (NaN: not yet)."""
    v = fl[at]
    if v != v:
        v = math.pow(x, float(k))
        fl[at] = v
    return v


@njit(cache=True)
def _decode_seats(obs: np.ndarray, iw: np.ndarray) -> int:
    """Decisions and announced discards per seat; returns the number of seats (-1 if malformed)."""
    decided = _bits(obs, O_DECISION, SEATS * 3)
    announced = _bits(obs, O_NDISCARD, SEATS * (TRICKS + 1))
    for q in range(SEATS):
        v = (decided >> (3 * q)) & 7
        iw[I_DEC + q] = _high(v) if v else 0
        v = (announced >> ((TRICKS + 1) * q)) & ((1 << (TRICKS + 1)) - 1)
        iw[I_DISC + q] = _high(v) if v else -1
    n = popcount(decided)
    if n < 2 or n > SEATS:
        return -1
    return n


@njit(cache=True)
def _decode_hand(obs: np.ndarray, iw: np.ndarray) -> tuple[int, int]:
    """(cards in the hand, their bits), the ids written ascending at ``I_HAND``; count -1 if over six."""
    bits = _bits(obs, 0, NUM_CARDS)
    nh = popcount(bits)
    if nh > TRICKS:
        return -1, 0
    rest = bits
    for i in range(nh):
        iw[I_HAND + i] = _low(rest)
        rest &= rest - 1
    return nh, bits


@njit(cache=True)
def _first_legal(mask: np.ndarray) -> int:
    low = _bits(mask, 0, _HALF)
    if low:
        return _low(low)
    high = _bits(mask, _HALF, NUM_ACTIONS - _HALF)
    return _HALF + _low(high) if high else NO_LEGAL


# ---------------------------------------------------------------- naming trump
@njit(cache=True)
def _name_trump(obs: np.ndarray, mask: np.ndarray) -> int:
    s0 = s1 = s2 = s3 = 0.0
    for c in range(NUM_CARDS):
        if obs[c] > 0.5:
            v = 10.0 + c % RANKS
            s = c // RANKS
            if s == 0:
                s0 += v
            elif s == 1:
                s1 += v
            elif s == 2:
                s2 += v
            else:
                s3 += v
    strength = (s0, s1, s2, s3)
    # the strongest suit the mask allows, the lowest suit among equals (a stable sort's first)
    best = -1
    for s in range(4):
        if mask[STAY_BASE + s] and (best < 0 or strength[s] > strength[best]):
            best = s
    if best >= 0:
        return STAY_BASE + best
    return _first_legal(mask)


# ---------------------------------------------------------------- draw or pass
@njit(cache=True)
def _outlook(prm: np.ndarray, n: int, h: int, trump: int, dealer: int, face: int, hand_bits: int, n_trumps: int,
             n_opts: int, iw: np.ndarray, fl: np.ndarray) -> None:
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
    face_rank = face % RANKS if face >= 0 else -1
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
    trump_bits = ((ALL_CARDS & ~seen) >> (RANKS * trump)) & FULL_SUIT
    n_unseen_trumps = popcount(trump_bits)
    unseen_side_aces = 0
    for s in range(4):
        if s != trump and not (seen >> (s * RANKS + ACE)) & 1:
            unseen_side_aces += 1
    p_draw_trump = n_unseen_trumps / unseen_total
    p_draw_ace = unseen_side_aces / unseen_total
    over_face = n_unseen_trumps if face_mine or face < 0 else popcount(trump_bits >> face_rank)

    known_trumps = 0.0
    for q in range(1, n):
        if iw[I_DEC + q] == PLAYING:
            known_trumps += _expected_trumps(prm, u, iw[I_DISC + q], h, p_draw_trump)
    pending_trumps = _expected_trumps(prm, u, -1, h, p_draw_trump)

    for m in range(n + 1):
        fl[F_DIST + m] = 0.0
    for dp in range(2):
        wd = q_dealer if dp else 1.0 - q_dealer
        if wd <= 0.0:
            continue
        for j in range(pending_others + 1):
            fl[F_DIST + playing + j + dp] += (wd * _COMB[pending_others, j] * prm[field + FB_Q_POW + j]
                                              * prm[field + FB_NOT_Q_POW + pending_others - j])

    for k in range(n_opts):
        fl[F_WIN + k] = 0.0
        fl[F_BOURRE + k] = 0.0
    total_w = 0.0
    for m in range(n + 1):
        w = fl[F_DIST + m]
        if w < 0.02:
            continue
        total_w += w
        if m == 0:
            for k in range(n_opts):
                fl[F_WIN + k] += w
            continue
        live = live_scale * (known_trumps + (m - playing) * pending_trumps) / max(n_unseen_trumps, 1)
        if not live < 0.95:
            live = 0.95
        x = 1.0 - live
        for k in range(RANKS + 1):
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
                _add_card(fl, F_LOW, track, ace * 0.5)
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

    aces = 0
    for i in range(nh):
        if iw[I_HAND + i] % RANKS == ACE:
            aces |= 1 << (iw[I_HAND + i] // RANKS)
    kings_kept = n <= prm[K_KEEP_KINGS_UPTO]
    with_ace = prm[K_KEEP_KINGS_WITH_ACE] != 0.0
    for i in range(nh):
        s = iw[I_HAND + i] // RANKS
        r = iw[I_HAND + i] % RANKS
        if s == trump:
            v = 100.0 + r
        elif r == ACE:
            v = 50.0
        elif r == KING and (kings_kept or (with_ace and (aces >> s) & 1 != 0)):
            v = 40.0
        else:
            v = float(r)
        fl[F_VALUE + i] = v
    pot = np.float64(obs[O_POT]) * 100.0
    if obs[O_POT_LIMIT] > 0.5:
        limit = np.float64(obs[O_POT_LIMIT + 1]) * 100.0
        if limit < pot:
            pot = limit
    deals_left = int(np.round(np.float64(obs[O_DEAL + 1]) * 10.0))
    cost = 1.0 - (1.0 / pot if deals_left > 0 and pot >= 1.0 else 0.0)

    if popcount(_bits(mask, 0, _HALF)) + popcount(_bits(mask, _HALF, NUM_ACTIONS - _HALF)) == 1:
        return _first_legal(mask)
    n_trumps = 0
    for i in range(nh - 1, -1, -1):
        if iw[I_HAND + i] // RANKS == trump:
            iw[I_TRUMPS + n_trumps] = iw[I_HAND + i] % RANKS
            n_trumps += 1
    if obs[O_ROUND + ROUND_SECOND_PASS] > 0.5:
        if _sure_trick(hand_bits, trump):
            return STAY_BASE
        side_aces = side_kings = 0
        for i in range(nh):
            c = iw[I_HAND + i]
            if c // RANKS != trump:
                if c % RANKS == ACE:
                    side_aces += 1
                elif c % RANKS == KING:
                    side_kings += 1
        iw[I_OPTS] = side_aces
        iw[I_OPTS + 1] = side_kings
        iw[I_OPTS + 2] = 0
        _outlook(prm, n, h, trump, dealer, face, hand_bits, n_trumps, 1, iw, fl)
        pot1 = pot if pot > 1.0 else 1.0  # Python's max(pot, 1.0)
        return STAY_BASE if fl[F_WIN] - fl[F_BOURRE] * cost > prm[K_MARGIN] + 1.0 / pot1 else PASS

    # the hand's positions by value, ascending, equal values in hand order (a stable sort)
    for i in range(nh):
        j = i
        while j > 0 and fl[F_VALUE + iw[I_ORDER + j - 1]] > fl[F_VALUE + i]:
            iw[I_ORDER + j] = iw[I_ORDER + j - 1]
            j -= 1
        iw[I_ORDER + j] = i
    declaring = iw[I_DEC] == 0 and _bits(mask, STAY_BASE + 1, NUM_ACTIONS - STAY_BASE - 1) == 0  # only 52, 53
    n_opts = 0
    floors = (40.0, 50.0, 100.0)
    for f in range(3 if prm[K_CHOOSE_DRAW] != 0.0 else 1):
        floor = floors[f]
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
            return STAY_BASE if declaring else stay
        iw[I_STAYS + n_opts] = stay
        side_aces = side_kings = 0
        for i in range(nh):
            c = iw[I_HAND + i]
            if (kept >> c) & 1 and c // RANKS != trump:
                if c % RANKS == ACE:
                    side_aces += 1
                elif c % RANKS == KING:
                    side_kings += 1
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
    play = STAY_BASE if declaring else iw[I_STAYS + best]
    if not mask[PASS]:
        return play
    return play if best_gain > prm[K_MARGIN] else PASS


@njit(cache=True)
def _sure_trick(kept: int, trump: int) -> bool:
    """Whether ``kept`` holds the highest trump anyone could hold: the Python agent's test, which
    asks that every trump above our highest be ours, holds exactly when that trump is the ace."""
    return bool((kept >> (trump * RANKS + ACE)) & 1)


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
def _holds_above(fl: np.ndarray, iw: np.ndarray, unseen: tuple[int, int, int, int], trump: int, face_holder: int,
                 face_rank: int, q: int, suit: int, rank: int) -> float:
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
        return 1.0 - _pow_cached(fl, F_POW + 2 * q * (RANKS + 1) + k, 1.0 - fl[F_WT + q], k)
    return 1.0 - _pow_cached(fl, F_POW + (2 * q + 1) * (RANKS + 1) + k, 1.0 - fl[F_WS + q], k)


@njit(cache=True)
def _play(obs: np.ndarray, mask: np.ndarray, tie_break: float, prm: np.ndarray, iw: np.ndarray,
          fl: np.ndarray) -> int:
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
    led_by = _bits(obs, O_LEADER, TRICKS * SEATS)
    for tt in range(TRICKS):
        v = (led_by >> (SEATS * tt)) & ((1 << SEATS) - 1)
        iw[I_LEAD + tt] = _high(v) if v else -1

    must_trump = obs[O_OPTIONS] > 0.5
    n_active = 0
    for q in range(1, n):
        if iw[I_DEC + q] == PLAYING:
            iw[I_ACTIVE + n_active] = q
            n_active += 1
    face_rank = face % RANKS
    face_holder = dealer if face_status == FACE_IN_HAND and dealer != 0 and iw[I_DEC + dealer] == PLAYING else -1
    field = P_FIELD + ((n * SEATS + n_active) * SEATS + n - 1 - n_active) * FB_SIZE
    u = prm[field + FB_U]
    ruff_credit = prm[field + FB_RUFF + n_active]

    # the played cards: by whom and in which trick
    for i in range(TRICKS * SEATS):
        iw[I_TC + i] = -1
    for q in range(SEATS):
        iw[I_TPLAY + q] = 0
    seen = hand_bits
    if face >= 0:
        seen |= 1 << face
    played = 0
    for c in range(NUM_CARDS):
        at = O_PLAYED_IN + TRICKS * c
        if ((obs[at] != 0) | (obs[at + 1] != 0) | (obs[at + 2] != 0) | (obs[at + 3] != 0) | (obs[at + 4] != 0)
                | (obs[at + 5] != 0)):
            played |= 1 << c
    rest = played
    while rest:
        c = _low(rest)
        rest &= rest - 1
        by_bits = _bits(obs, O_PLAYED_BY + SEATS * c, SEATS)
        if by_bits == 0:
            return MALFORMED
        by = _high(by_bits)
        tt = _low(_bits(obs, O_PLAYED_IN + TRICKS * c, TRICKS))
        if tt <= t:
            iw[I_TC + tt * SEATS + by] = c
        if c // RANKS == trump and by != 0 and by < n and iw[I_DEC + by] == PLAYING:
            iw[I_TPLAY + by] += 1
    seen |= played
    if _own_discards_out(n, h, dealer, iw):
        seen |= _bits(obs, O_OWN_DISCARDS, NUM_CARDS)
    unseen_all = ALL_CARDS & ~seen
    unseen = ((unseen_all >> 0) & FULL_SUIT, (unseen_all >> RANKS) & FULL_SUIT,
              (unseen_all >> (2 * RANKS)) & FULL_SUIT, (unseen_all >> (3 * RANKS)) & FULL_SUIT)
    unseen_total = popcount(unseen_all)
    trumps_held = popcount((hand_bits >> (RANKS * trump)) & FULL_SUIT)

    # Inference from the tricks so far: caps is the highest rank each seat can still hold per suit.
    for i in range(SEATS * 4):
        iw[I_CAPS + i] = ACE
    for q in range(SEATS):
        iw[I_CLEFT + q] = h - t
    n_order = 0
    for q in range(n):
        if iw[I_DEC + q] == PLAYING:
            iw[I_ORDER + n_order] = q
            n_order += 1
    leading = True
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
            return MALFORMED
        led = iw[I_TC + tt * SEATS + lead_seat] // RANKS
        bl = bt = -1
        for i in range(n_order):
            q = iw[I_ORDER + (start + i) % n_order]
            c = iw[I_TC + tt * SEATS + q]
            if c < 0:
                break
            s = c // RANKS
            r = c % RANKS
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
            leading = False
            cur_led, best_led, best_trump = led, bl, bt
            for q in range(SEATS):
                if iw[I_TC + t * SEATS + q] >= 0:
                    iw[I_CLEFT + q] -= 1

    # Where the unseen cards are likely to be.
    n_trumps = popcount(unseen[trump])
    n_side = unseen_total - n_trumps
    p_trump = (RANKS - 1) / (DECK_SIZE - h - 1)
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
        for k in range(2 * (RANKS + 1)):
            fl[F_POW + 2 * q * (RANKS + 1) + k] = np.nan
        for s in range(4):
            fl[F_VOID + 4 * q + s] = np.nan
        fl[F_ANY_TRUMP + q] = np.nan

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
        s = c // RANKS
        r = c % RANKS
        led = s if leading else cur_led
        can_win = True
        if not leading:
            if s == trump:
                if r <= best_trump:
                    can_win = False
            elif s != led or best_trump >= 0 or r <= best_led:
                can_win = False
        keep = not (leading and s != trump)
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
                            void = _pow_cached(fl, F_POW + 2 * q * (RANKS + 1) + k, 1.0 - fl[F_WT + q], k)
                        else:
                            void = _pow_cached(fl, F_POW + (2 * q + 1) * (RANKS + 1) + k, 1.0 - fl[F_WS + q], k)
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
        if not keep:
            worth = now * later_discount
        elif s == trump:
            worth = kept + (1.0 - kept) * ruff_credit
        else:
            worth = later_discount * kept
        shed = -0.001 * r
        if s != trump and popcount((hand_bits >> (RANKS * s)) & FULL_SUIT) == 1 and trumps_held > 0:
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


# ---------------------------------------------------------------- entry points
@njit(cache=True)
def heuristic_action(obs: np.ndarray, mask: np.ndarray, tie_break: float, params: np.ndarray, ints: np.ndarray,
                     floats: np.ndarray) -> int:
    """The heuristic's action for one observation row and its mask (see the module docstring)."""
    if obs[O_ROUND + ROUND_NAME_TRUMP] > 0.5:
        action = _name_trump(obs, mask)
    elif obs[O_PHASE] > 0.5:
        action = _decide(obs, mask, params, ints, floats)
    else:
        action = _play(obs, mask, tie_break, params, ints, floats)
    if action >= 0 and mask[action]:
        return action
    # the defensive fallback of the Python agent, and the rows it would refuse
    first = _first_legal(mask)
    if first < 0:
        return NO_LEGAL
    return MALFORMED if action == MALFORMED else first


@njit(cache=True)
def heuristic_actions(obs: np.ndarray, masks: np.ndarray, tie_breaks: np.ndarray, params: np.ndarray,
                      out: np.ndarray) -> int:
    """Every row's action into ``out``; returns the first row that got a negative code, else -1."""
    ints = np.zeros(INT_WORK, dtype=np.int64)
    floats = np.zeros(FLOAT_WORK, dtype=np.float64)
    bad = -1
    for b in range(obs.shape[0]):
        a = heuristic_action(obs[b], masks[b], tie_breaks[b], params, ints, floats)
        out[b] = a
        if a < 0 and bad < 0:
            bad = b
    return bad


# ---------------------------------------------------------------- the agent
def _check(name: str, array: object, dtype: type, shape: tuple[int, ...]) -> None:
    """A ``ValueError`` naming ``name`` unless ``array`` is a C-contiguous numpy array of ``dtype`` and ``shape``."""
    if not isinstance(array, np.ndarray):
        raise ValueError(f"{name}: expected a numpy array, got {type(array).__name__}")
    if array.dtype != dtype:
        raise ValueError(f"{name}: expected dtype {np.dtype(dtype).name}, got {array.dtype.name}")
    if array.shape != shape:
        raise ValueError(f"{name}: expected shape {shape}, got {array.shape}")
    if not array.flags.c_contiguous:
        raise ValueError(f"{name}: expected a C-contiguous array (np.ascontiguousarray makes one)")


class BatchHeuristic:
    """``HeuristicAgent``'s decisions for a batch of observation rows, from one compiled call."""

    def __init__(self, params: HeuristicParams | str = "default", seed: int | None = 0) -> None:
        self.params = _resolve(params)
        key = next((k for k, v in PARAM_SETS.items() if v == self.params), None)
        self.name = "heuristic" if key == "default" else f"heuristic:{key or 'custom'}"
        self.rng = np.random.default_rng(seed)
        self._params = params_array(self.params)
        self._tie_breaks = np.zeros(0, dtype=np.float64)

    def act(self, observations: np.ndarray, masks: np.ndarray, out: np.ndarray | None = None,
            tie_breaks: np.ndarray | None = None) -> np.ndarray:
        """One action per row, int64 ``(B,)`` (into ``out`` when given).

        ``observations``: float32 ``(B, OBS_SIZE)``; ``masks``: int8 ``(B, NUM_ACTIONS)``, each row
        allowing at least one action; ``tie_breaks``: float64 ``(B,)`` in [0, 1), the number each
        row's tie-break uses (drawn from this agent's generator when not given). Every array must
        be C-contiguous; a ``ValueError`` says which is not as expected, or which row is not a
        decision (a mask that allows nothing, an observation the heuristic cannot read).
        """
        if not isinstance(observations, np.ndarray) or observations.ndim != 2:
            raise ValueError(f"observations: expected a 2-d numpy array (B, {OBS_SIZE}), got "
                             f"{getattr(observations, 'shape', type(observations).__name__)}")
        batch = observations.shape[0]
        _check("observations", observations, np.float32, (batch, OBS_SIZE))
        _check("masks", masks, np.int8, (batch, NUM_ACTIONS))
        if out is None:
            out = np.empty(batch, dtype=np.int64)
        else:
            _check("out", out, np.int64, (batch,))
            if not out.flags.writeable:
                raise ValueError("out: the array is read-only")
        if tie_breaks is None:
            if self._tie_breaks.shape[0] != batch:
                self._tie_breaks = np.empty(batch, dtype=np.float64)
            tie_breaks = self.rng.random(out=self._tie_breaks)
        else:
            _check("tie_breaks", tie_breaks, np.float64, (batch,))
            if batch and not (tie_breaks.min() >= 0.0 and tie_breaks.max() < 1.0):
                raise ValueError("tie_breaks: expected numbers in [0, 1)")
        bad = heuristic_actions(observations, masks, tie_breaks, self._params, out)
        if bad >= 0:
            if out[bad] == NO_LEGAL:
                raise ValueError(f"masks: row {bad} allows no action: that observation is not a decision")
            raise ValueError(f"observations: row {bad} is not a decision observation the heuristic can read")
        return out
