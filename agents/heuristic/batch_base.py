"""The compiled heuristic's groundwork: its parameter vector, scratch-buffer layout, decoding and naming trump.

Part of ``agents.heuristic.batch`` (its docstring explains the port); the decision rounds are in
``agents.heuristic.batch_decide`` and trick play in ``agents.heuristic.batch_play``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from numba import njit

from agents.heuristic.odds import (
    NAME_TRUMP_CARD,
    NUM_CARDS,
    NUM_RANKS,
    PARAM_SETS,
    SEATS,
    SURE_WIN,
    TRICKS,
    WIN_GIVEN,
    HeuristicParams,
)
from agents.heuristic.odds import _field as reference_field
from bourre_env.actions import NAME_TRUMP_BASE, NUM_ACTIONS

# the index of the lowest / highest set bit of a mask > 0 (of an observation field read as bits, not only of cards;
# ``_high``: a one-hot field's last one, as the Python agent reads it)
from bourre_env.core import highest_card as _high
from bourre_env.core import lowest_card as _low
from bourre_env.core import popcount
from bourre_env.observation import (
    O_DECISION,
    O_NDISCARD,
)

_HALF = (NUM_ACTIONS + 1) // 2  # a mask is read as two bitmasks, of 59 and 58 bits
NO_LEGAL = -1
MALFORMED = -2

# ---------------------------------------------------------------- the parameter vector
_KNOBS = tuple(f.name for f in dataclasses.fields(HeuristicParams))
assert _KNOBS == (
    "margin",
    "ace_survival",
    "ruff_credit",
    "kept_trumps",
    "pending_trumps",
    "loose_ace_survival",
    "loose_ruff_credit",
    "loose_live",
    "prior_loose",
    "selective_players",
    "loose_share",
    "choose_draw",
    "keep_kings_with_ace",
    "keep_kings_upto",
    "lead_bonus",
    "bourre_bonus",
    "later_discount",
), "HeuristicParams changed: update the kernel's indices"
(
    K_MARGIN,
    K_ACE_SURVIVAL,
    K_RUFF_CREDIT,
    K_KEPT_TRUMPS,
    K_PENDING_TRUMPS,
    K_LOOSE_ACE_SURVIVAL,
    K_LOOSE_RUFF_CREDIT,
    K_LOOSE_LIVE,
    K_PRIOR_LOOSE,
    K_SELECTIVE_PLAYERS,
    K_LOOSE_SHARE,
    K_CHOOSE_DRAW,
    K_KEEP_KINGS_WITH_ACE,
    K_KEEP_KINGS_UPTO,
    K_LEAD_BONUS,
    K_BOURRE_BONUS,
    K_LATER_DISCOUNT,
) = range(len(_KNOBS))
# The outlook's tables travel in the vector rather than as globals: numba freezes globals into its
# cached machine code and checks the cache only against the file that defines a function, so a change of the
# tables in agents/heuristic/odds.py would otherwise go unseen.
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
F_XPOW = F_BOURRE + 3  # (1 - live) ** k, k = 0..NUM_RANKS (NaN until computed)
F_VOID = F_XPOW + NUM_RANKS + 1  # void chance per seat and suit (NaN until computed)
F_ANY_TRUMP = F_VOID + SEATS * 4  # chance per seat of holding any trump (NaN until computed)
F_POW = F_ANY_TRUMP + SEATS  # (1 - w) ** k per seat, trump and side weight, k = 0..NUM_RANKS (NaN until computed)
FLOAT_WORK = F_POW + SEATS * 2 * (NUM_RANKS + 1)
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


# inlined: called with constants, it would be compiled once per pair of them (numba specialises on literals)
@njit(cache=True, inline="always")
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
            v = NAME_TRUMP_CARD + c % NUM_RANKS
            s = c // NUM_RANKS
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
        if mask[NAME_TRUMP_BASE + s] and (best < 0 or strength[s] > strength[best]):
            best = s
    if best >= 0:
        return NAME_TRUMP_BASE + best
    return _first_legal(mask)
