"""The observer: what one player may know, as a fixed-size float32 vector built from named pieces.

``FIELDS`` is the single description of the layout: each entry is a name, a shape and its
meaning. Offsets are computed from it, the env docstring's observation table is checked
against it by a test, and ``encode`` (compiled) writes exactly these pieces. Seats are
relative to the observer: relative seat ``k`` is the player ``k`` places to the observer's
left (0 is the observer). The layout is the same for every table size (8 seat slots, 6
trick slots), so one policy can serve 2 to 8 players.

The layout has a version (``VERSION``): version 2 appended the decision round, the seats that
stayed at a second pass and the variant rules to version 1's 1145 entries, which did not
change; ``VERSION_SIZES`` gives each version's size.

Nothing hidden enters the vector: other players' hands, passed hands, the stock and other
players' discards never do; the observer's own discards do (the observer saw them).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from bourre_env import core
from bourre_env.core import MAX_HAND_SIZE, MAX_PLAYERS, NUM_CARDS

S = MAX_PLAYERS
T = MAX_HAND_SIZE


class Field(NamedTuple):
    name: str
    shape: tuple[int, ...]
    meaning: str

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


FIELDS: tuple[Field, ...] = (
    Field("hand", (NUM_CARDS,), "1 for each card id the observer holds"),
    Field("trump", (4,), "trump suit, one-hot (C, D, H, S); 0s until the dealer names it"),
    Field("face_card", (NUM_CARDS,), "the face-up card that set trump, one-hot by card id (0s: none turned)"),
    Field(
        "face_status", (3,), "face-up card: dealer's hand (laid down if the dealer passed) / dead or separate / played"
    ),
    Field("dealer", (S,), "dealer, one-hot by relative seat"),
    Field("to_act", (S,), "seat to act, one-hot by relative seat (all 0 when the deal is over)"),
    Field("seat_present", (S,), "1 for each relative seat that exists at this table"),
    Field("decision", (S, 3), "per relative seat: pending / passed / playing, one-hot"),
    Field(
        "discard_count", (S, T + 1), "per relative seat: announced number of discards 0..6, one-hot (0s if none yet)"
    ),
    Field("tricks_won", (S, T + 1), "per relative seat: tricks won this deal 0..6, one-hot"),
    Field("played_by", (NUM_CARDS, S), "per card id: relative seat that played it to a trick this deal, one-hot"),
    Field("played_in", (NUM_CARDS, T), "per card id: the trick (0..5) it was played to, one-hot"),
    Field("trick_leader", (T, S), "per trick 0..5: relative seat that led it, one-hot (0s if not led yet)"),
    Field("trick_no", (T + 1,), "current trick 0..5 (6: play over or not started), one-hot"),
    Field("led_suit", (4,), "suit led to the current trick, one-hot (0s before the lead)"),
    Field("own_discards", (NUM_CARDS,), "cards the observer discarded this deal"),
    Field("phase", (2,), "decisions (naming trump, declaring, drawing, second pass) / trick play, one-hot (0s: over)"),
    Field("cinch", (1,), "1 if the observer has a cinch (docs/rules.md) now"),
    Field("pot", (2,), "chips in the pot / 100, and log(1 + pot) / log(1000)"),
    Field("pot_limit", (2,), "1 if there is a pot limit; the limit / 100"),
    Field("deal", (2,), "deal number within the episode / 10; deals left after this one / 10"),
    Field("num_players", (MAX_PLAYERS - 1,), "players at the table 2..8, one-hot"),
    Field("hand_size", (1,), "cards per hand / 6"),
    Field("options", (4,), "must_trump_when_cannot_win; lead_trump_honors; tie divides; max_discard / 6"),
    Field("deck_ranks", (13,), "1 for each rank in the deck (2 .. A): small decks lack some"),
    Field("reshuffled", (1,), "1 if the stock ran out this deal and the discards were reshuffled into it"),
    # Version 2 appended the fields below; the 1145 entries above are version 1's layout, unchanged.
    Field("decision_round", (5,), "trump naming / declaration / draw or pass / draw / second pass, one-hot"),
    Field("stayed", (S,), "per relative seat: 1 if it stayed, paying, at the second chance to pass"),
    Field("trump_rule", (4,), "trump card: dealer's / separate / separate, dealer may take / none, one-hot"),
    Field("declare_rule", (3,), "pass or play declared: with the draw / own round / secret round, one-hot"),
    Field("ante_rule", (3,), "play_ante chips; 1 if ante exemptions; 1 if the dealer antes for all"),
    Field("entry_rule", (3,), "1 if playing needs a trump or a club; 1 if a second pass; its chips to stay"),
    Field("penalty_rule", (3,), "1 if an illegal card is a renege; renege multiple of the pot; rake fraction"),
)
VERSION = 2
"""Observation layout version: 1 had the first 1145 entries; 2 appended ``decision_round`` and the rest."""
VERSION_SIZES = {1: 1145, 2: sum(f.size for f in FIELDS)}
"""Vector size of each version; every version's layout is a prefix of the next, so a policy trained on an older
version reads the first ``VERSION_SIZES[v]`` entries of today's vector."""


def _offsets() -> dict[str, int]:
    out, at = {}, 0
    for f in FIELDS:
        out[f.name] = at
        at += f.size
    return out


OFFSETS = _offsets()
OBS_SIZE = sum(f.size for f in FIELDS)

O_HAND = OFFSETS["hand"]
O_TRUMP = OFFSETS["trump"]
O_FACE = OFFSETS["face_card"]
O_FACE_STATUS = OFFSETS["face_status"]
O_DEALER = OFFSETS["dealer"]
O_TO_ACT = OFFSETS["to_act"]
O_PRESENT = OFFSETS["seat_present"]
O_DECISION = OFFSETS["decision"]
O_NDISCARD = OFFSETS["discard_count"]
O_TRICKS = OFFSETS["tricks_won"]
O_PLAYED_BY = OFFSETS["played_by"]
O_PLAYED_IN = OFFSETS["played_in"]
O_LEADER = OFFSETS["trick_leader"]
O_TRICK_NO = OFFSETS["trick_no"]
O_LED = OFFSETS["led_suit"]
O_OWN_DISCARDS = OFFSETS["own_discards"]
O_PHASE = OFFSETS["phase"]
O_CINCH = OFFSETS["cinch"]
O_POT = OFFSETS["pot"]
O_POT_LIMIT = OFFSETS["pot_limit"]
O_DEAL = OFFSETS["deal"]
O_NUM_PLAYERS = OFFSETS["num_players"]
O_HAND_SIZE = OFFSETS["hand_size"]
O_OPTIONS = OFFSETS["options"]
O_DECK_RANKS = OFFSETS["deck_ranks"]
O_RESHUFFLED = OFFSETS["reshuffled"]
O_ROUND = OFFSETS["decision_round"]
O_STAYED = OFFSETS["stayed"]
O_TRUMP_RULE = OFFSETS["trump_rule"]
O_DECLARE_RULE = OFFSETS["declare_rule"]
O_ANTE_RULE = OFFSETS["ante_rule"]
O_ENTRY_RULE = OFFSETS["entry_rule"]
O_PENALTY_RULE = OFFSETS["penalty_rule"]

# The ``decision_round`` slots are the rules core's decision rounds (``core.decision_round``), in game order.
ROUND_NAME_TRUMP = core.ROUND_NAME_TRUMP
ROUND_DECLARE = core.ROUND_DECLARE
ROUND_DRAW_OR_PASS = core.ROUND_DRAW_OR_PASS
ROUND_DRAW = core.ROUND_DRAW
ROUND_SECOND_PASS = core.ROUND_SECOND_PASS
ROUND_NAMES = core.ROUND_NAMES
decision_round = core.decision_round


@njit(cache=True)
def encode(s: np.ndarray, p: np.ndarray, seat: int, out: np.ndarray) -> None:
    """``encode_with`` with a fresh scratch array (nothing is remembered between calls)."""
    encode_with(s, p, seat, out, np.zeros(core.SCRATCH_SIZE, dtype=np.int64))


@njit(cache=True)
def encode_with(s: np.ndarray, p: np.ndarray, seat: int, out: np.ndarray, x: np.ndarray) -> None:
    """Write the observation of ``seat`` into ``out`` (float32, ``OBS_SIZE``)."""
    out[:] = 0.0
    n = p[core.P_NUM_PLAYERS]
    hand = s[core.S_HAND + seat]
    for c in range(NUM_CARDS):
        if (hand >> c) & 1:
            out[O_HAND + c] = 1.0
        if (s[core.S_DISCARDS + seat] >> c) & 1:
            out[O_OWN_DISCARDS + c] = 1.0
    if s[core.S_TRUMP] >= 0:  # 0s while the dealer has yet to name it (dealer_picks_trump)
        out[O_TRUMP + s[core.S_TRUMP]] = 1.0
    if s[core.S_FACE] >= 0:  # 0s when no card is turned (dealer_picks_trump)
        out[O_FACE + s[core.S_FACE]] = 1.0
        out[O_FACE_STATUS + s[core.S_FACE_STATE]] = 1.0
    out[O_DEALER + (s[core.S_DEALER] - seat) % n] = 1.0
    cur = s[core.S_CUR]
    if cur >= 0:
        out[O_TO_ACT + (cur - seat) % n] = 1.0
    for q in range(n):
        rel = (q - seat) % n
        out[O_PRESENT + rel] = 1.0
        out[O_DECISION + 3 * rel + core.decision_seen(s, p, seat, q)] = 1.0
        nd = s[core.S_NDISCARD + q]
        if nd >= 0:
            out[O_NDISCARD + (T + 1) * rel + nd] = 1.0
        out[O_TRICKS + (T + 1) * rel + s[core.S_TRICKS + q]] = 1.0
    for t in range(T):
        leader = s[core.S_TRICK_LEADER + t]
        if leader >= 0:
            out[O_LEADER + S * t + (leader - seat) % n] = 1.0
        for q in range(n):
            c = s[core.S_TRICK_CARDS + t * MAX_PLAYERS + q]
            if c >= 0:
                out[O_PLAYED_BY + S * c + (q - seat) % n] = 1.0
                out[O_PLAYED_IN + T * c + t] = 1.0
    round_ = decision_round(s, p)
    if s[core.S_PHASE] == core.PLAY:
        out[O_TRICK_NO + s[core.S_TRICK_NO]] = 1.0
        out[O_PHASE + 1] = 1.0
        if s[core.S_LED] >= 0:
            out[O_LED + s[core.S_LED]] = 1.0
        if core.has_cinch_with(s, p, seat, x):
            out[O_CINCH] = 1.0
    else:
        out[O_TRICK_NO + T] = 1.0
        if round_ >= 0:
            out[O_PHASE] = 1.0
            out[O_ROUND + round_] = 1.0
    pot = s[core.S_POT]
    out[O_POT] = pot / 100.0
    out[O_POT + 1] = np.log1p(pot) / np.log(1000.0)
    if p[core.P_POT_LIMIT] >= 0:
        out[O_POT_LIMIT] = 1.0
        out[O_POT_LIMIT + 1] = p[core.P_POT_LIMIT] / 100.0
    out[O_DEAL] = s[core.S_DEAL_NO] / 10.0
    out[O_DEAL + 1] = (p[core.P_DEALS] - 1 - s[core.S_DEAL_NO]) / 10.0
    out[O_NUM_PLAYERS + n - 2] = 1.0
    out[O_HAND_SIZE] = p[core.P_HAND_SIZE] / 6.0
    out[O_OPTIONS] = p[core.P_MUST_TRUMP]
    out[O_OPTIONS + 1] = p[core.P_LEAD_HONORS]
    out[O_OPTIONS + 2] = p[core.P_TIE_DIVIDE]
    out[O_OPTIONS + 3] = p[core.P_MAX_DISCARD] / 6.0
    for r in range(13):
        if (p[core.P_DECK_MASK] >> r) & 1:  # every suit holds the same ranks: read them off clubs
            out[O_DECK_RANKS + r] = 1.0
    if s[core.S_RESHUFFLES] > 0:
        out[O_RESHUFFLED] = 1.0
    for q in range(n):
        if (s[core.S_STAYED] >> q) & 1:
            out[O_STAYED + (q - seat) % n] = 1.0
    out[O_TRUMP_RULE + p[core.P_TRUMP_CARD]] = 1.0
    out[O_DECLARE_RULE + p[core.P_DECLARATION]] = 1.0
    out[O_ANTE_RULE] = p[core.P_PLAY_ANTE]
    out[O_ANTE_RULE + 1] = p[core.P_ANTE_EXEMPTIONS]
    out[O_ANTE_RULE + 2] = p[core.P_DEALER_ANTES]
    out[O_ENTRY_RULE] = 1.0 if p[core.P_ENTRY] == core.ENTRY_TRUMP_OR_CLUB else 0.0
    if p[core.P_SECOND_PASS] >= 0:
        out[O_ENTRY_RULE + 1] = 1.0
        out[O_ENTRY_RULE + 2] = p[core.P_SECOND_PASS]
    out[O_PENALTY_RULE] = p[core.P_RENEGE]
    out[O_PENALTY_RULE + 1] = p[core.P_RENEGE_MULT]
    out[O_PENALTY_RULE + 2] = p[core.P_RAKE_NUM] / p[core.P_RAKE_DEN]


@njit(cache=True)
def observe(s: np.ndarray, p: np.ndarray, seat: int, obs: np.ndarray, mask: np.ndarray) -> None:
    """``observe_with`` with a fresh scratch array (nothing is remembered between calls)."""
    observe_with(s, p, seat, obs, mask, np.zeros(core.SCRATCH_SIZE, dtype=np.int64))


@njit(cache=True)
def observe_with(s: np.ndarray, p: np.ndarray, seat: int, obs: np.ndarray, mask: np.ndarray, x: np.ndarray) -> None:
    """Observation of ``seat`` and, if ``seat`` is to act, its legal-action mask (else all zeros); the state is
    only read, the cinch memo goes to the game's scratch array ``x``."""
    encode_with(s, p, seat, obs, x)
    if s[core.S_CUR] == seat:
        core.legal_actions_with(s, p, mask, x)
    else:
        mask[:] = 0


def as_dict(vector: np.ndarray) -> dict[str, np.ndarray]:
    """The observation vector split into its named pieces (for reading, debugging and tests)."""
    return {f.name: vector[OFFSETS[f.name] : OFFSETS[f.name] + f.size].reshape(f.shape) for f in FIELDS}


def table_rows() -> list[tuple[str, int, int, str]]:
    """(name, first index, size, meaning) for every piece, in order: the documented table."""
    return [(f.name, OFFSETS[f.name], f.size, f.meaning) for f in FIELDS]
