"""The heuristic's numbers: its tunable parameters and the odds tables it weighs decisions with.

Part of ``agents.heuristic`` (its ``HeuristicAgent`` docstring describes the strategy); shared with
``agents.heuristic.batch``, which must weigh decisions with the same tables.
"""

from __future__ import annotations

import dataclasses
from math import factorial

import numpy as np

from bourre_env.core import ACE, ALL_CARDS, FACE_IN_HAND, KING, MAX_HAND_SIZE, MAX_PLAYERS, NUM_CARDS, PASSED, PLAYING
from bourre_env.core.cards import NUM_RANKS
from bourre_env.observation import (
    O_OWN_DISCARDS,
    OFFSETS,
)

__all__ = [
    "ACE",
    "ALL_CARDS",
    "DECK_SIZE",
    "FACE_IN_HAND",
    "FULL_SUIT",
    "KING",
    "NUM_CARDS",
    "NUM_RANKS",
    "PASSED",
    "PLAYING",
    "SEATS",
    "TRICKS",
    "HeuristicParams",
    "PARAM_SETS",
    "WIN_GIVEN",
    "SURE_WIN",
    "NAME_TRUMP_CARD",
    "KEEP_TRUMP",
    "KEEP_SIDE_ACE",
    "KEEP_SIDE_KING",
    "DRAW_FLOORS",
    "MIN_COUNT_WEIGHT",
    "MAX_LIVE",
    "KING_PER_ACE",
]

# The constants of the heuristic and of its compiled port (which imports them from here: numba reads module globals
# as compile-time constants), with the core's that they read re-exported, so that both name each the same way.
SEATS = MAX_PLAYERS  # seat slots of the observation (relative seats 0..7; 0 is us)
TRICKS = MAX_HAND_SIZE  # trick slots of the observation
FULL_SUIT = (1 << NUM_RANKS) - 1  # the rank bits of one suit
DECK_SIZE = NUM_CARDS  # the observation does not carry the deck size: a small deck is read as a full one

# The fixed numbers of the strategy (the tunable ones are in HeuristicParams), read by both implementations.
NAME_TRUMP_CARD = 10.0  # a card's worth to its suit when naming trump, plus its rank: most cards first, then ranks
# Keep values at the draw: a card stays when its value reaches the floor of the candidate draw; any other card is
# worth its rank (below every floor), so that max_discard keeps the best of them
KEEP_TRUMP = 100.0  # plus the rank
KEEP_SIDE_ACE = 50.0
KEEP_SIDE_KING = 40.0  # kept beside its ace, or at a small table
DRAW_FLOORS = (KEEP_SIDE_KING, KEEP_SIDE_ACE, KEEP_TRUMP)  # keep honours; let kings go; let aces go too
MIN_COUNT_WEIGHT = 0.02  # opponent counts less likely than this are left out of the outlook
MAX_LIVE = 0.95  # cap on the chance that an opponent's trump beats ours
KING_PER_ACE = 0.5  # a side king's chance of a trick, against a side ace's

# The one-hot fields from ``hand`` to ``own_discards`` are decoded from a single ``flatnonzero``:
# the positions of the ones, split at the field offsets (the layout is ``bourre_env.observation``'s).
_DECODED = (
    "hand",
    "trump",
    "face_card",
    "face_status",
    "dealer",
    "to_act",
    "seat_present",
    "decision",
    "discard_count",
    "tricks_won",
    "played_by",
    "played_in",
    "trick_leader",
    "trick_no",
    "led_suit",
    "own_discards",
)
_BOUNDS = np.array([OFFSETS[name] for name in _DECODED[1:]], dtype=np.int64)
_END = O_OWN_DISCARDS + NUM_CARDS
assert all(OFFSETS[a] < OFFSETS[b] for a, b in zip(_DECODED, _DECODED[1:], strict=False)), "field order changed"
assert OFFSETS["phase"] == _END, "own_discards must end where phase starts"


@dataclasses.dataclass(frozen=True)
class HeuristicParams:
    """The knobs of the heuristic (see ``HeuristicAgent``); ``PARAM_SETS`` names the tuned sets."""

    margin: float = -0.06
    """Play when P(win pot) - P(bourré) * cost exceeds this (in pots); > 0 is tighter, < 0 looser.
    Tuned by duplicate evaluation: the model is a little pessimistic against loose fields."""
    ace_survival: float = 0.55
    """Chance, per other player in the deal, that a side ace is neither ruffed nor stranded."""
    ruff_credit: float = 0.2
    """Chance that a trump that is not sure still takes a trick (ruffing a side suit, or after the top
    falls), against three opponents; against ``m`` it is ``ruff_credit ** (m / 3)``."""
    kept_trumps: float = 0.75
    """Share of trumps among the cards a player of a selective field keeps (it keeps trumps and aces)."""
    pending_trumps: float = 2.0
    """Trumps expected in the hand of an undecided player of a selective field, should it play."""
    loose_ace_survival: float = 0.7
    """``ace_survival`` against a loose field (nearly everyone plays: ordinary hands, careless play)."""
    loose_ruff_credit: float = 0.7
    """``ruff_credit`` against a loose field."""
    loose_live: float = 0.7
    """Factor on the chance that an opponent's trump beats ours, against a loose field (careless players
    spend their high trumps early)."""
    prior_loose: float = 0.6
    """Prior chance that the field is loose, before seeing anyone decide this deal."""
    selective_players: float = 2.8
    """Players (us included) who come in, on average, in a selective field: each plays with chance
    ``selective_players / n`` (at most 0.85)."""
    loose_share: float = 0.97
    """Chance that a player of a loose field plays (a uniformly random player passes 1 time in 33)."""
    choose_draw: bool = True
    """Weigh drawing to the side aces and kings against letting them go, and take the better draw."""
    keep_kings_with_ace: bool = True
    """Keep a side king together with the ace of its suit (it is the top card once the ace is cashed)."""
    keep_kings_upto: int = 3
    """Keep every side king when at most this many players sit at the table (few ruffers)."""
    lead_bonus: float = 0.15
    """Extra worth of winning a trick now: the winner leads next and keeps control (and pulls trumps)."""
    bourre_bonus: float = 0.0
    """Extra worth of a trick taken now while we have none (one trick avoids paying the pot). 0: measured,
    0.1 and 0.3 did not help; the bourré risk is weighed where it can be avoided, at draw or pass."""
    later_discount: float = 0.7
    """Worth of a side card kept for later, against its chance now (voids and ruffs grow as play goes on)."""


PARAM_SETS: dict[str, HeuristicParams] = {
    "default": HeuristicParams(),
    # plays only clearer edges, and expects a selective field until shown otherwise
    "tight": HeuristicParams(margin=0.02, prior_loose=0.4),
    # gambles on thinner edges, and expects a loose field until shown otherwise
    "loose": HeuristicParams(margin=-0.14, prior_loose=0.8),
}


def _win_given_tricks() -> list[list[list[float]]]:
    """``table[h][m][x]``: chance that ``x`` of ``h`` tricks beat each of ``m`` opponents.

    The other ``h - x`` tricks are spread uniformly at random among the ``m`` opponents (crude but
    symmetric); we take the pot when each opponent ends with fewer than ``x``. Counted exactly:
    assignments of ``r`` labelled tricks to ``m`` seats, at most ``c`` each, number
    ``r! [t^r] (sum_{j<=c} t^j / j!)^m``.
    """
    table = [[[0.0] * (TRICKS + 1) for _ in range(SEATS)] for _ in range(TRICKS + 1)]
    for h in range(1, TRICKS + 1):
        for m in range(SEATS):
            for x in range(h + 1):
                if m == 0:
                    table[h][m][x] = 1.0
                    continue
                r, c = h - x, x - 1
                if c < 0:
                    continue
                poly = [1.0]
                term = [1.0 / factorial(j) for j in range(c + 1)]
                for _ in range(m):
                    out = [0.0] * (len(poly) + c)
                    for i, a in enumerate(poly):
                        for j, b in enumerate(term):
                            out[i + j] += a * b
                    poly = out
                ways = poly[r] * factorial(r) if r < len(poly) else 0.0
                table[h][m][x] = ways / m**r
    return table


WIN_GIVEN = _win_given_tricks()
# SURE_WIN[h][m]: the fewest tricks that always take the pot (at least 1: no trick never does)
SURE_WIN = [
    [
        max(1, min(x for x in range(h + 1) if all(v >= 1.0 - 1e-12 for v in WIN_GIVEN[h][m][x : h + 1]))) if h else 1
        for m in range(SEATS)
    ]
    for h in range(TRICKS + 1)
]


def _cdf(k: int, p: float, at_most: int) -> float:
    """P(Binomial(k, p) <= at_most)."""
    if at_most < 0:
        return 0.0
    if at_most >= k:
        return 1.0
    q = 1.0 - p
    if q <= 0.0:
        return 0.0
    term = q**k
    total = term
    ratio = p / q
    for j in range(at_most):
        term *= (k - j) / (j + 1) * ratio
        total += term
    return total


def _add_card(low: list[float], p: float) -> list[float]:
    """``low[x]`` = P(exactly ``x`` tricks) for ``x < len(low)``, after one more card that takes a
    trick with chance ``p`` (only the counts that can fail to win the pot are tracked)."""
    q = 1.0 - p
    return [low[0] * q] + [low[x] * q + low[x - 1] * p for x in range(1, len(low))]


def _field(prm: HeuristicParams, n: int, played: int, passed: int) -> tuple[float, float]:
    """(chance that the field is loose, chance that an undecided player plays), given that
    ``played`` players came in and ``passed`` passed so far this deal.

    Two hypotheses, weighed by Bayes' rule: a selective field (players come in on good hands
    only: they hold hands chosen for their trumps, and play them well) or a loose one (nearly
    everyone plays, as a random player does: ordinary hands, careless play, so our trumps, aces
    and ruffs stand more often). A pass is strong evidence of a selective field. The estimates
    that depend on the field are interpolated with the chance that it is loose.
    """
    sel = min(prm.selective_players / n, 0.85)
    loose = prm.loose_share
    like_loose = prm.prior_loose * loose**played * (1.0 - loose) ** passed
    like_sel = (1.0 - prm.prior_loose) * sel**played * (1.0 - sel) ** passed
    u = like_loose / (like_loose + like_sel)
    return u, u * loose + (1.0 - u) * sel


def _expected_trumps(prm: HeuristicParams, u: float, discards: int, h: int, p_trump: float) -> float:
    """Trumps expected in a playing opponent's hand after the draw.

    ``discards``: the count it announced (-1 while undecided). A selective player keeps trumps
    and aces and draws the rest, so its kept count tells its trumps; a loose player's hand is
    ordinary, with ``p_trump`` (the share of trumps among the cards we have not seen) per card.
    """
    ordinary = h * p_trump
    selective = prm.pending_trumps if discards < 0 else (h - discards) * prm.kept_trumps + discards * p_trump
    return selective + u * (ordinary - selective)
