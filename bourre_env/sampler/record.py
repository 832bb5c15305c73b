"""The public record of a deal, read back from one seat's observation vector, and the rules it was played under.

Part of the world sampler (``bourre_env.sampler`` explains the method): ``decode`` turns an observation into a
``PublicRecord``, ``rules_from_observation`` into the ``Rules`` its rule fields describe.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import numpy as np

from bourre_env import core
from bourre_env.core import MAX_HAND_SIZE, MAX_PLAYERS, NUM_CARDS
from bourre_env.core.rules import DECLARATION_VALUES, TRUMP_CARD_VALUES, Rules
from bourre_env.observation import (
    O_ANTE_RULE,
    O_DEAL,
    O_DEALER,
    O_DECISION,
    O_DECK_RANKS,
    O_DECLARE_RULE,
    O_ENTRY_RULE,
    O_FACE,
    O_FACE_STATUS,
    O_HAND,
    O_HAND_SIZE,
    O_LEADER,
    O_NDISCARD,
    O_NUM_PLAYERS,
    O_OPTIONS,
    O_OWN_DISCARDS,
    O_PENALTY_RULE,
    O_PHASE,
    O_PLAYED_BY,
    O_PLAYED_IN,
    O_POT,
    O_POT_LIMIT,
    O_RESHUFFLED,
    O_ROUND,
    O_STAYED,
    O_TO_ACT,
    O_TRUMP,
    O_TRUMP_RULE,
    OBS_SIZE,
)

S = MAX_PLAYERS
T = MAX_HAND_SIZE


# ---------------------------------------------------------------------------------------------- decoding
@dataclasses.dataclass(frozen=True)
class PublicRecord:
    """What the observation says about the deal, in the observer's frame (the observer is seat 0)."""

    num_players: int
    hand_size: int
    dealer: int
    to_act: int  # -1 when no one is to act
    decisions: tuple[int, ...]  # core.PENDING / PASSED / PLAYING as the observer sees them
    ndiscard: tuple[int, ...]  # announced discard counts, -1 where none
    trick_cards: tuple[tuple[int, ...], ...]  # [trick][seat] card id or -1
    trick_leaders: tuple[int, ...]  # [trick] seat or -1
    in_play: bool  # trick play under way
    decision_round: int  # observation.ROUND_*, -1 in trick play or after the deal
    hand: int  # card mask
    own_discards: int  # card mask
    face: int  # the turned card, -1 when none
    face_status: int  # core.FACE_* (FACE_NONE when none)
    trump: int  # -1 until named
    reshuffled: bool
    stayed: int  # seat mask
    pot: int
    deal_no: int
    deals_left: int

    def played_by(self, seat: int) -> int:
        """Card mask of the cards ``seat`` played to tricks."""
        out = 0
        for row in self.trick_cards:
            if row[seat] >= 0:
                out |= 1 << row[seat]
        return out

    @property
    def played(self) -> int:
        return sum(self.played_by(q) for q in range(self.num_players))


def _one_hots(vec: np.ndarray, start: int, rows: int, size: int, field: str) -> np.ndarray:
    """Index of the single 1 in each of ``rows`` blocks of ``size`` entries (-1 for an all-0 block)."""
    block = vec[start : start + rows * size].reshape(rows, size)
    ones = block > 0.5
    if not np.all((block == 0.0) | (block == 1.0)) or np.any(ones.sum(axis=1) > 1):
        raise ValueError(f"observation field {field}: expected one-hot blocks")
    return np.where(ones.any(axis=1), ones.argmax(axis=1), -1)


def _one_hot(vec: np.ndarray, start: int, size: int, field: str) -> int:
    return int(_one_hots(vec, start, 1, size, field)[0])


_CARD_BITS = np.left_shift(np.int64(1), np.arange(NUM_CARDS, dtype=np.int64))


def _mask(vec: np.ndarray, start: int) -> int:
    """Card mask of a 52-entry block."""
    return int(_CARD_BITS[vec[start : start + NUM_CARDS] > 0.5].sum())


def _check_vector(observation: Any) -> np.ndarray:
    obs = np.asarray(observation)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(
            f"observation: expected a vector of {OBS_SIZE} entries (observation version 2), got shape {obs.shape}"
        )
    if not np.all(np.isfinite(obs)):
        raise ValueError("observation: holds non-finite entries")
    return obs.astype(np.float32, copy=False)


def decode(observation: np.ndarray) -> PublicRecord:
    """The public record of the deal as the observation shows it (``ValueError`` on a malformed vector)."""
    obs = _check_vector(observation)
    n = _one_hot(obs, O_NUM_PLAYERS, S - 1, "num_players") + 2
    if n < 2:
        raise ValueError("observation field num_players: no table size is set")
    h = round(float(obs[O_HAND_SIZE]) * 6)
    if not 1 <= h <= T:
        raise ValueError(f"observation field hand_size: {float(obs[O_HAND_SIZE])} is not a hand size / 6")
    dealer = _one_hot(obs, O_DEALER, S, "dealer")
    to_act = _one_hot(obs, O_TO_ACT, S, "to_act")
    decisions = _one_hots(obs, O_DECISION, S, 3, "decision")[:n]
    if np.any(decisions < 0):
        raise ValueError("observation field decision: a seat of the table has none")
    ndiscard = _one_hots(obs, O_NDISCARD, S, T + 1, "discard_count")[:n]
    by = _one_hots(obs, O_PLAYED_BY, NUM_CARDS, S, "played_by")
    inn = _one_hots(obs, O_PLAYED_IN, NUM_CARDS, T, "played_in")
    if np.any((by < 0) != (inn < 0)) or np.any(by >= n):
        raise ValueError("observation fields played_by / played_in disagree")
    rows = [[-1] * n for _ in range(T)]
    for c in np.flatnonzero(by >= 0).tolist():
        if rows[inn[c]][by[c]] >= 0:
            raise ValueError(f"observation: seat {by[c]} played two cards to trick {inn[c]}")
        rows[inn[c]][by[c]] = c
    leaders = tuple(_one_hots(obs, O_LEADER, T, S, "trick_leader").tolist())
    phase = _one_hot(obs, O_PHASE, 2, "phase")
    face = _one_hot(obs, O_FACE, NUM_CARDS, "face_card")
    status = _one_hot(obs, O_FACE_STATUS, 3, "face_status")
    stayed = sum(1 << q for q in range(n) if obs[O_STAYED + q] > 0.5)
    if dealer < 0 or dealer >= n:
        raise ValueError("observation field dealer: no seat of the table is the dealer")
    return PublicRecord(
        num_players=n,
        hand_size=h,
        dealer=dealer,
        to_act=to_act,
        decisions=tuple(decisions.tolist()),
        ndiscard=tuple(ndiscard.tolist()),
        trick_cards=tuple(tuple(r) for r in rows),
        trick_leaders=leaders,
        in_play=phase == 1,
        decision_round=_one_hot(obs, O_ROUND, 5, "decision_round"),
        hand=_mask(obs, O_HAND),
        own_discards=_mask(obs, O_OWN_DISCARDS),
        face=face,
        face_status=status if face >= 0 else core.FACE_NONE,
        trump=_one_hot(obs, O_TRUMP, 4, "trump"),
        reshuffled=bool(obs[O_RESHUFFLED] > 0.5),
        stayed=stayed,
        pot=round(float(obs[O_POT]) * 100),
        deal_no=round(float(obs[O_DEAL]) * 10),
        deals_left=round(float(obs[O_DEAL + 1]) * 10),
    )


def _fraction_of(value: float) -> Fraction:
    """The simplest fraction that the observation's float32 entry could have been written from."""
    target = np.float32(value)
    for limit in (10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000):
        f = Fraction(float(value)).limit_denominator(limit)
        if np.float32(f.numerator / f.denominator) == target:
            return f
    return Fraction(float(value))


def rules_from_observation(observation: np.ndarray, record: PublicRecord | None = None) -> Rules:
    """The rule configuration written into an observation's rule fields.

    Every field that changes play is there: table size, hand size, the deck's ranks, the discard limit of
    this table (``max_discard``; a preset's large-table limit comes back as the plain limit it sets), the
    trick-play options, pot limit, tie rule, payments and the variant fields of observation version 2.
    Deals per episode are the deal number plus the deals left. The rake comes back as the simplest fraction
    with the same float32 value (an exotic rake may round payments differently by a chip).
    """
    obs = _check_vector(observation)
    rec = decode(obs) if record is None else record
    ranks = tuple(r for r in range(13) if obs[O_DECK_RANKS + r] > 0.5)
    trump_rule = _one_hot(obs, O_TRUMP_RULE, 4, "trump_rule")
    declare_rule = _one_hot(obs, O_DECLARE_RULE, 3, "declare_rule")
    if trump_rule < 0 or declare_rule < 0 or not ranks:
        raise ValueError("observation: the rule fields are empty (not an observation of version 2?)")
    options: dict[str, Any] = dict(
        num_players=rec.num_players,
        hand_size=rec.hand_size,
        ranks=ranks,
        max_discard=round(float(obs[O_OPTIONS + 3]) * 6),
        must_trump_when_cannot_win=bool(obs[O_OPTIONS] > 0.5),
        lead_trump_honors=bool(obs[O_OPTIONS + 1] > 0.5),
        pot_limit=round(float(obs[O_POT_LIMIT + 1]) * 100) if obs[O_POT_LIMIT] > 0.5 else None,
        tie="divide" if obs[O_OPTIONS + 2] > 0.5 else "carry",
        rake=_fraction_of(float(obs[O_PENALTY_RULE + 2])),
        illegal_action="renege" if obs[O_PENALTY_RULE] > 0.5 else "error",
        deals_per_episode=rec.deal_no + 1 + rec.deals_left,
        play_ante=round(float(obs[O_ANTE_RULE])),
        ante_exemptions=bool(obs[O_ANTE_RULE + 1] > 0.5),
        ante_payer="dealer" if obs[O_ANTE_RULE + 2] > 0.5 else "each",
        trump_card=TRUMP_CARD_VALUES[trump_rule],
        declaration=DECLARATION_VALUES[declare_rule],
        entry_requirement="trump_or_club" if obs[O_ENTRY_RULE] > 0.5 else "none",
        second_pass_ante=round(float(obs[O_ENTRY_RULE + 2])) if obs[O_ENTRY_RULE + 1] > 0.5 else None,
        renege_multiple=round(float(obs[O_PENALTY_RULE + 1])),
    )
    return Rules(**options)
