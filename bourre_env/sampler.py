"""Worlds a seat cannot rule out: complete hidden states drawn from what one seat has seen.

Search agents (``agents.pimc``, ``agents.ismcts``) need full game states that agree with everything an
acting seat knows. ``WorldSampler(observation)`` reads the observation vector of one seat
(``bourre_env.observation``) and draws such worlds in batches: each is a core state
(``core.STATE_SIZE``) that holds every hand, every discard and passed hand, the stock in order and a
reshuffle seed, placed in the observer's frame: the observer is seat 0 and seat ``k`` is the player
``k`` places to its left (the observation's relative seats).

>>> sampler = WorldSampler(obs["observation"])          # the acting seat's observation vector
>>> worlds = sampler.sample(64, seed=0)                 # (64, core.STATE_SIZE) int64, ready to step
>>> sampler.params                                      # the rule parameters the worlds are stepped with

What a world is
---------------
A deal is fixed by the order of the deck, the cards each player chose to discard, and the order of the
stock after each reshuffle (plus, during a simultaneous declaration round, the declarations not yet
revealed). A world is one choice of these. It is *consistent* when dealing it and replaying the deal's
public record (the trump named, every pass, declaration and announced discard count, every card played
to a trick, in the order the rules impose) through ``core.step`` succeeds at every step and gives the
observer exactly the observation it has. The public record is rebuilt from the observation alone; the
rule configuration is read from its rule fields (``rules_from_observation``) unless one is given.

Consistency uses everything that is public or proven: the observer's hand, its discards and its plays;
the turned card and where it is; the counts each player announced; every card played and by whom; what
each earlier play proves under the rules (``core.proven_absent``: a void in the suit led, no card that
could have beaten, trumped or overtrumped when the rules required it, no trump honour behind another
lead; nothing with ``illegal_action="renege"``); and what the replay itself checks: a play that an
opponent's cinch would have forbidden, a declaration an entry requirement forbids.

Uniformity
----------
Worlds are drawn uniformly among the consistent ones (decks, discard choices and reshuffle orders each
counted once). The sampler works on *bins*: the sets of cards whose size the public record fixes (each
player's kept cards, discards, draws from each stock, passed hands, the stock left, the turned card).
Any dealing order of a hand and any order of the cards drawn together give the same state, and each
bin assignment stands for the same number of decks, so uniform bin assignments give uniform worlds.
A reshuffle is handled by the identity that a uniform deal followed by a uniform reshuffle is a uniform
placement of the cards at their *final* places (drawn after the reshuffle, or left in the new stock)
together with a uniform choice of which reshuffled card had been in which discard or passed hand: the
final places are sampled, then the reshuffled cards are put back where the record requires (the
observer's own discards into its discard pile) and the rest at random.

The final places are filled by an exact method. Cards are grouped into *types* (cards that may go to
the same bins: unknown cards by which opponents' hands their plays exclude them from, each opponent's
played cards, reshuffled cards of the observer) and bins into *groups* with the same allowed cards.
Counting the ways to complete an assignment type by type (a dynamic programme over the capacities the
groups have left) gives each type's split among the groups with the right probability; every card of a
type is then placed uniformly. When the table of counts would be too large (many opponents with
different proven voids at 7-8 players) an exact rejection method is used instead: groups take their
cards one at a time from what is left to them, and a proposal is kept with the probability that makes
every assignment equally likely. Constraints that only the replay checks (an opponent's cinch, an entry
requirement, a hidden declaration) reject the whole world, which keeps uniformity. The test that defines
the sampler (``tests/test_sampler.py``) replays every sampled world from its deck and compares
observations, and compares the sampler with an exhaustive count of the worlds of small decks.

Reshuffles
----------
When the stock runs out during the draw, the rules rebuild it from the discards and passed hands of the
players already served, shuffled with a seed (``core._draw_card``). The order is hidden, so the world
chooses it: before the draw that runs the stock out, the replay permutes the pile so that the core's
own shuffle, with the world's seed, deals the cards in the order the world chose. The seed left in the
state then shuffles any later reshuffle of a rollout at random.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import numpy as np
from numba import njit

from bourre_env import core
from bourre_env.core import MAX_HAND_SIZE, MAX_PLAYERS, NUM_CARDS
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
    ROUND_DECLARE,
    ROUND_NAME_TRUMP,
)
from bourre_env.rules import (
    DECLARATION_VALUES,
    TRUMP_CARD_VALUES,
    Rules,
)

__all__ = ["PublicRecord", "WorldSampler", "decode", "rules_from_observation", "sample_worlds", "DP_LIMIT"]

S = MAX_PLAYERS
T = MAX_HAND_SIZE
DP_LIMIT = 200_000
"""Most splits the exact counting programme visits; beyond it the exact rejection method runs instead (only
observations of 7-8 players with many different proven voids and reshuffled cards come near it)."""
MAX_ATTEMPTS_PER_WORLD = 2_000
"""Proposals tried per requested world before ``sample`` gives up with ``RuntimeError``: a consistent world
is nearly always found within a few, so reaching this means the observation admits almost none."""

_FACTORIALS = np.array([float(np.prod(np.arange(1, i + 1, dtype=np.float64))) for i in range(NUM_CARDS + 1)])

# bin kinds: sets of cards whose sizes the public record fixes
B_INIT = 0  # a hand as dealt, not yet played with (pending, or declared and waiting for the draw)
B_KEPT = 1  # the cards of the dealt hand kept at the draw
B_DISC = 2  # the cards discarded at the draw that went to the pile (a dead turned card is not among them)
B_PASSED = 3  # a dealt hand laid down by a pass before the draw
B_DRAWN = 4  # the cards dealt to one seat at the draw from one stock (stage 0: the deal's; r: the r-th reshuffle's)
B_STOCK = 5  # the cards left in the last stock
B_FACE = 6  # the turned card's place

# replay event kinds
EV_ACTION = 0  # a fixed action id
EV_DRAW = 1  # the seat draws, discarding the world's discards of that seat
EV_HIDDEN = 2  # a simultaneous declaration not yet revealed: the world chooses pass or play


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
    block = vec[start:start + rows * size].reshape(rows, size)
    ones = block > 0.5
    if not np.all((block == 0.0) | (block == 1.0)) or np.any(ones.sum(axis=1) > 1):
        raise ValueError(f"observation field {field}: expected one-hot blocks")
    return np.where(ones.any(axis=1), ones.argmax(axis=1), -1)


def _one_hot(vec: np.ndarray, start: int, size: int, field: str) -> int:
    return int(_one_hots(vec, start, 1, size, field)[0])


_CARD_BITS = np.left_shift(np.int64(1), np.arange(NUM_CARDS, dtype=np.int64))


def _mask(vec: np.ndarray, start: int) -> int:
    """Card mask of a 52-entry block."""
    return int(_CARD_BITS[vec[start:start + NUM_CARDS] > 0.5].sum())


def _check_vector(observation: Any) -> np.ndarray:
    obs = np.asarray(observation)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"observation: expected a vector of {OBS_SIZE} entries (observation version 2), "
                         f"got shape {obs.shape}")
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
        num_players=n, hand_size=h, dealer=dealer, to_act=to_act, decisions=tuple(decisions.tolist()),
        ndiscard=tuple(ndiscard.tolist()), trick_cards=tuple(tuple(r) for r in rows), trick_leaders=leaders,
        in_play=phase == 1, decision_round=_one_hot(obs, O_ROUND, 5, "decision_round"),
        hand=_mask(obs, O_HAND), own_discards=_mask(obs, O_OWN_DISCARDS), face=face,
        face_status=status if face >= 0 else core.FACE_NONE, trump=_one_hot(obs, O_TRUMP, 4, "trump"),
        reshuffled=bool(obs[O_RESHUFFLED] > 0.5), stayed=stayed, pot=round(float(obs[O_POT]) * 100),
        deal_no=round(float(obs[O_DEAL]) * 10), deals_left=round(float(obs[O_DEAL + 1]) * 10))


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
        num_players=rec.num_players, hand_size=rec.hand_size, ranks=ranks,
        max_discard=round(float(obs[O_OPTIONS + 3]) * 6),
        must_trump_when_cannot_win=bool(obs[O_OPTIONS] > 0.5), lead_trump_honors=bool(obs[O_OPTIONS + 1] > 0.5),
        pot_limit=round(float(obs[O_POT_LIMIT + 1]) * 100) if obs[O_POT_LIMIT] > 0.5 else None,
        tie="divide" if obs[O_OPTIONS + 2] > 0.5 else "carry",
        rake=_fraction_of(float(obs[O_PENALTY_RULE + 2])),
        illegal_action="renege" if obs[O_PENALTY_RULE] > 0.5 else "error",
        deals_per_episode=rec.deal_no + 1 + rec.deals_left,
        play_ante=round(float(obs[O_ANTE_RULE])), ante_exemptions=bool(obs[O_ANTE_RULE + 1] > 0.5),
        ante_payer="dealer" if obs[O_ANTE_RULE + 2] > 0.5 else "each",
        trump_card=TRUMP_CARD_VALUES[trump_rule], declaration=DECLARATION_VALUES[declare_rule],
        entry_requirement="trump_or_club" if obs[O_ENTRY_RULE] > 0.5 else "none",
        second_pass_ante=round(float(obs[O_ENTRY_RULE + 2])) if obs[O_ENTRY_RULE + 1] > 0.5 else None,
        renege_multiple=round(float(obs[O_PENALTY_RULE + 1])),
    )
    return Rules(**options)


# ---------------------------------------------------------------------------------------------- the plan
def _proven_absent(rec: PublicRecord, params: np.ndarray) -> list[int]:
    """What each seat's plays to the tricks prove it does not hold: the core's ``_forbidden_after`` of every play,
    in play order (what ``core._apply_play`` gathers into ``S_ABSENT``); nothing with reneges allowed."""
    out = [0] * MAX_PLAYERS
    if params[core.P_RENEGE] == 1:
        return out
    n = rec.num_players
    must_trump = bool(params[core.P_MUST_TRUMP] == 1)
    lead_honors = bool(params[core.P_LEAD_HONORS] == 1)
    for t in range(T):
        leader = rec.trick_leaders[t]
        if leader < 0:
            break
        led, best_led, best_trump = -1, -1, -1
        for k in range(n):
            q = (leader + k) % n
            c = rec.trick_cards[t][q]
            if c < 0:
                continue
            out[q] |= int(core._forbidden_after(c, led < 0, led, best_led, best_trump, rec.trump, must_trump,
                                                lead_honors))
            if led < 0:
                led = c // 13
            if c // 13 == led and c > best_led:
                best_led = c
            if c // 13 == rec.trump and c > best_trump:
                best_trump = c
    return out


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class _Plan:
    """Bins, the replay events and the reshuffle stages of one observation (built once, used for every world)."""

    def __init__(self, rec: PublicRecord, rules: Rules, params: np.ndarray) -> None:
        n, h, d = rec.num_players, rec.hand_size, rec.dealer
        self.n, self.h, self.dealer = n, h, d
        trump_card = int(params[core.P_TRUMP_CARD])
        declaration = int(params[core.P_DECLARATION])
        face = rec.face
        dealers_card = trump_card == core.TRUMP_DEALERS_CARD
        takes = trump_card == core.TRUMP_DEALER_MAY_TAKE
        if (face >= 0) == (trump_card == core.TRUMP_NAMED):
            raise ValueError("observation: the turned card does not fit the trump_card rule")
        secret_round = declaration == core.DECLARATION_SIMULTANEOUS and rec.decision_round == ROUND_DECLARE
        if not rec.in_play and rec.decision_round < 0:
            raise ValueError("observation: the deal is over; there is no hidden state left to sample")

        self.bin_kind: list[int] = []
        self.bin_seat: list[int] = []
        self.bin_stage: list[int] = []
        self.bin_size: list[int] = []

        def new_bin(kind: int, seat: int, size: int, stage: int = 0) -> int:
            if size < 0:
                raise ValueError("observation: announced counts do not fit the hands")
            self.bin_kind.append(kind)
            self.bin_seat.append(seat)
            self.bin_stage.append(stage)
            self.bin_size.append(size)
            return len(self.bin_size) - 1

        face_bin = new_bin(B_FACE, d, 1) if face >= 0 else -1
        face_dead = face >= 0 and rec.face_status == core.FACE_DEAD
        # cards of a dealt hand, less the turned card where it is the dealer's last card (held in face_bin)
        dealt = [h - (1 if dealers_card and q == d else 0) for q in range(n)]

        # who did what: laid down before the draw, drew, or still holds the hand as dealt
        drew = [rec.ndiscard[q] >= 0 for q in range(n)]
        laid_early = [rec.decisions[q] == core.PASSED and not drew[q] and not secret_round for q in range(n)]
        seat_order = [(d + k) % n for k in range(1, n + 1)]

        # the public actions in order, and the pile's history (lay-downs and draws) for the stock stages
        events: list[tuple[int, int, int]] = []
        timeline: list[tuple[str, int]] = []
        if trump_card == core.TRUMP_NAMED and rec.decision_round != ROUND_NAME_TRUMP:
            if rec.trump < 0:
                raise ValueError("observation: trump is not named after the naming round")
            events.append((EV_ACTION, d, core.NAME_TRUMP_BASE + rec.trump))
        if rec.decision_round != ROUND_NAME_TRUMP:
            if declaration == core.DECLARATION_WITH_DRAW:
                for q in seat_order:
                    if rec.decisions[q] == core.PENDING:
                        break
                    if laid_early[q]:
                        events.append((EV_ACTION, q, core.PASS))
                        timeline.append(("lay", q))
                    elif drew[q]:
                        events.append((EV_DRAW, q, 0))
                        timeline.append(("draw", q))
                    else:
                        raise ValueError(f"observation: seat {q} plays without an announced discard count")
            else:
                for q in seat_order:
                    if secret_round and q == rec.to_act:
                        break
                    if secret_round:
                        if q == 0:
                            events.append((EV_ACTION, q, core.PASS if rec.decisions[0] == core.PASSED
                                           else core.DECLARE_PLAY))
                        else:
                            events.append((EV_HIDDEN, q, 0))
                        continue
                    if rec.decisions[q] == core.PENDING:
                        break
                    events.append((EV_ACTION, q, core.PASS if laid_early[q] else core.DECLARE_PLAY))
                if not secret_round:
                    timeline += [("lay", q) for q in seat_order if laid_early[q]]
                    for q in seat_order:
                        if drew[q]:
                            events.append((EV_DRAW, q, 0))
                            timeline.append(("draw", q))
            if params[core.P_SECOND_PASS] >= 0:
                for q in seat_order:
                    if not drew[q]:
                        continue
                    if (rec.stayed >> q) & 1:
                        events.append((EV_ACTION, q, core.SECOND_STAY))
                    elif rec.decisions[q] == core.PASSED:
                        events.append((EV_ACTION, q, core.PASS))
                    else:
                        break
        if rec.in_play:
            playing = [q for q in range(n) if rec.decisions[q] == core.PLAYING]
            for t in range(T):
                leader = rec.trick_leaders[t]
                if leader < 0:
                    break
                k0 = playing.index(leader)
                for k in range(len(playing)):
                    q = playing[(k0 + k) % len(playing)]
                    c = rec.trick_cards[t][q]
                    if c < 0:
                        break
                    events.append((EV_ACTION, q, c))
        self.events = events

        # bins of every seat, and the stock stages
        hand_bins: list[list[int]] = [[] for _ in range(n)]  # bins of the hand held now (or laid down late)
        init_bins: list[list[int]] = [[] for _ in range(n)]  # bins of the hand as dealt
        disc_bin = [-1] * n
        self.face_dead_by_dealer = face_dead and trump_card in (core.TRUMP_DEALERS_CARD, core.TRUMP_DEALER_MAY_TAKE)
        face_kept = face >= 0 and not face_dead and trump_card != core.TRUMP_SEPARATE
        for q in range(n):
            if laid_early[q]:
                b = new_bin(B_PASSED, q, dealt[q])
                init_bins[q].append(b)
            elif not drew[q]:
                b = new_bin(B_INIT, q, dealt[q])
                init_bins[q].append(b)
                hand_bins[q].append(b)
        stock_left = rules.deck_size - n * h - (1 if trump_card in (core.TRUMP_SEPARATE, core.TRUMP_DEALER_MAY_TAKE)
                                                  else 0)
        stage = 0
        stage_order: list[list[int]] = [[]]
        pf: list[list[int]] = [[]]  # pf[r]: the bins reshuffled into stage r's stock (pf[0] unused)
        pile: list[int] = []
        for what, q in timeline:
            if what == "lay":
                pile.append(init_bins[q][0])
                if q == d and face >= 0 and (dealers_card or takes):
                    pile.append(face_bin)  # the turned card is laid down with the dealer's hand
                continue
            k = rec.ndiscard[q]
            draws = k
            kept = h - k
            disc = k
            if q == d and dealers_card:
                if face_dead:
                    disc = k - 1  # the dead turned card is one of the announced discards, not a pile card
                else:
                    kept = h - 1 - k
            elif q == d and takes and face_kept:
                draws = k - 1  # keeping the turned card, the dealer draws one card fewer
            kb = new_bin(B_KEPT, q, kept)
            db = new_bin(B_DISC, q, disc)
            init_bins[q] += [kb, db]
            hand_bins[q].append(kb)
            disc_bin[q] = db
            if draws < 0:
                raise ValueError("observation: the dealer kept the turned card and discarded nothing")
            take = min(draws, stock_left)
            if take > 0:
                b = new_bin(B_DRAWN, q, take, stage)
                stage_order[stage].append(b)
                hand_bins[q].append(b)
                stock_left -= take
            rest = draws - take
            if rest > 0:
                stage += 1
                pf.append(pile)
                stage_order.append([])
                stock_left = sum(self.bin_size[b] for b in pile)
                pile = []
                if stock_left < rest:
                    raise ValueError("observation: the stock cannot serve the announced draws")
                b = new_bin(B_DRAWN, q, rest, stage)
                stage_order[stage].append(b)
                hand_bins[q].append(b)
                stock_left -= rest
            pile.append(db)
        stock_bin = new_bin(B_STOCK, -1, stock_left, stage)
        stage_order[stage].append(stock_bin)
        if rec.reshuffled != (stage > 0):
            raise ValueError("observation: the reshuffled flag disagrees with the announced draws")
        self.stages = stage
        self.stage_order = stage_order
        self.pf = pf
        self.init_bins = init_bins
        self.hand_bins = hand_bins
        self.disc_bin = disc_bin
        self.face_bin = face_bin
        self.face = face
        pf_of = {b: r for r in range(1, stage + 1) for b in pf[r]}
        final = [b for b in range(len(self.bin_size)) if b not in pf_of]

        # what the observer knows of its own cards
        own_played = rec.played_by(0)
        face_bit = (1 << face) if face >= 0 else 0
        face_reshuffled = face >= 0 and face_bin in pf_of
        known_hand = not laid_early[0] and not (drew[0] and rec.decisions[0] == core.PASSED)
        pinned: list[tuple[int, list[int]]] = []  # (card mask, bins whose free places it fills), in this order
        fully_pinned: set[int] = set()
        card_pf_bin = [-1] * NUM_CARDS
        if face_reshuffled:
            card_pf_bin[face] = face_bin  # a passed dealer's turned card, reshuffled: it lay in that hand before
        if known_hand:
            a_o = rec.hand | own_played
            if not face_reshuffled:
                a_o &= ~face_bit
            if bin(a_o).count("1") != sum(self.bin_size[b] for b in hand_bins[0]):
                raise ValueError("observation: the observer's cards do not fit its hand")
            if a_o & face_bit:
                # the reshuffled turned card came to the observer from that stock
                stage_bins = [b for b in hand_bins[0] if self.bin_kind[b] == B_DRAWN
                              and self.bin_stage[b] == pf_of[face_bin]]
                if not stage_bins:
                    raise ValueError("observation: the observer holds a turned card it cannot have drawn")
                pinned.append((face_bit, stage_bins))
            pinned.append((a_o & ~(a_o & face_bit), hand_bins[0]))
            fully_pinned.update(hand_bins[0])
        else:
            a_o = 0
        d_o = rec.own_discards & ~face_bit
        if drew[0]:
            if bin(d_o).count("1") != self.bin_size[disc_bin[0]]:
                raise ValueError("observation: the observer's discards do not fit its announced count")
            if disc_bin[0] in pf_of:
                for c in _bits(d_o):
                    card_pf_bin[c] = disc_bin[0]
            else:
                pinned.append((d_o, [disc_bin[0]]))
                fully_pinned.add(disc_bin[0])
        elif d_o:
            raise ValueError("observation: own discards without an announced count")
        if face >= 0 and not face_reshuffled:
            pinned.append((face_bit, [face_bin]))
            fully_pinned.add(face_bin)
        self.pinned = pinned
        self.card_pf_bin = card_pf_bin

        # the cards left to place, each with the bins it may go to
        deck_mask = int(params[core.P_DECK_MASK])
        placed = a_o | (0 if face_reshuffled else face_bit)
        if drew[0] and disc_bin[0] not in pf_of:
            placed |= d_o
        pool = deck_mask & ~placed
        if (a_o | d_o) & ~deck_mask:
            raise ValueError("observation: cards outside the deck")
        absent = np.zeros(MAX_PLAYERS, dtype=np.int64)
        if rec.in_play:
            absent[:] = _proven_absent(rec, params)
        played_by = [rec.played_by(q) for q in range(n)]
        candidates = [b for b in final if b not in fully_pinned and self.bin_size[b] > 0]
        stage_final = {r: [b for b in final if self.bin_stage[b] == r and self.bin_kind[b] in (B_DRAWN, B_STOCK)]
                       for r in range(1, stage + 1)}
        self.stage_final = stage_final
        hand_set = [set(hand_bins[q]) for q in range(n)]
        restricted = [q for q in range(1, n) if rec.in_play and rec.decisions[q] == core.PLAYING]
        column = {b: 0 for b in candidates}
        for c in _bits(pool):
            owner = next((q for q in range(1, n) if (played_by[q] >> c) & 1), -1)
            allowed = list(candidates)
            if owner >= 0:
                allowed = [b for b in allowed if b in hand_set[owner]]
            if card_pf_bin[c] >= 0:
                # a reshuffled card of the observer's (or the turned card): it went through that stock
                allowed = [b for b in allowed if b in stage_final[pf_of[card_pf_bin[c]]]]
            for q in restricted:
                if q != owner and (int(absent[q]) >> c) & 1:
                    allowed = [b for b in allowed if b not in hand_set[q]]
            if not allowed:
                raise ValueError(f"observation: no world is consistent with it (card {c} has no place)")
            for b in allowed:
                column[b] |= 1 << c
        # groups: bins that allow the same cards; types: cards allowed in the same groups
        groups: dict[int, list[int]] = {}
        for b in candidates:
            groups.setdefault(column[b], []).append(b)
        group_cols = list(groups)
        caps = [sum(self.bin_size[b] for b in groups[col]) for col in group_cols]
        if sum(caps) != bin(pool).count("1"):
            raise ValueError("observation: the hidden cards do not fill the hidden places")
        # a card that only one group allows (an opponent's played card) is placed there before anything else
        forced_mask = [0] * len(group_cols)
        free = pool
        for c in _bits(pool):
            holders = [g for g, col in enumerate(group_cols) if (col >> c) & 1]
            if len(holders) == 1:
                forced_mask[holders[0]] |= 1 << c
                free &= ~(1 << c)
        caps = [cap - bin(f).count("1") for cap, f in zip(caps, forced_mask, strict=True)]
        if min(caps, default=0) < 0:
            raise ValueError("observation: no world is consistent with it (a seat played more cards than it holds)")
        # Groups that differ only in their forced cards allow the same free cards: they are one group for the
        # counting (its free cards are then shared among them uniformly, around their forced cards).
        merged: dict[int, list[int]] = {}
        for g, col in enumerate(group_cols):
            merged.setdefault(col & free, []).append(g)
        free_cols = list(merged)
        free_caps = [sum(caps[g] for g in merged[col]) for col in free_cols]
        # the largest group goes last: its capacity is implied in the counting, which keeps the table small
        order = sorted(range(len(free_cols)), key=lambda k: (free_caps[k], bin(free_cols[k]).count("1")))
        self.sub_groups = [merged[free_cols[k]] for k in order]  # [counting group] -> groups
        self.group_bins = [groups[col] for col in group_cols]
        self.group_caps = caps  # free cards each group takes
        self.forced = [_bits(f) for f in forced_mask]
        group_cols = [free_cols[k] for k in order]
        caps = [free_caps[k] for k in order]
        self.caps = caps
        types: dict[int, int] = {}
        for c in _bits(free):
            key = sum(1 << g for g, col in enumerate(group_cols) if (col >> c) & 1)
            types[key] = types.get(key, 0) | (1 << c)
        # the most constrained types first (fewest places): the rejection method places them first
        type_keys = sorted(types, key=lambda k: (sum(caps[g] for g in range(len(caps)) if (k >> g) & 1), k))
        self.type_cards = [_bits(types[k]) for k in type_keys]
        self.allowed = np.array([[(k >> g) & 1 for g in range(len(group_cols))] for k in type_keys],
                                dtype=np.int8).reshape(len(type_keys), len(group_cols))
        self.below = np.array([[int(u & ~k == 0) for u in type_keys] for k in type_keys],
                              dtype=np.int8).reshape(len(type_keys), len(type_keys))


def _flat(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    start = np.zeros(len(lists) + 1, dtype=np.int64)
    for i, part in enumerate(lists):
        start[i + 1] = start[i] + len(part)
    flat = np.array([x for part in lists for x in part], dtype=np.int64)
    return flat, start


# ---------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def _uniform(rng: np.ndarray) -> float:
    return (core._splitmix64(rng) >> 10) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _below(rng: np.ndarray, k: int) -> int:
    return core._splitmix64(rng) % k


@njit(cache=True)
def _shuffle(a: np.ndarray, lo: int, hi: int, rng: np.ndarray) -> None:
    for i in range(hi - 1, lo, -1):
        j = lo + _below(rng, i - lo + 1)
        x = a[i]
        a[i] = a[j]
        a[j] = x


@njit(cache=True)
def _walk(mode: int, key: int, t: int, counts: np.ndarray, caps: np.ndarray, allowed: np.ndarray, stride: np.ndarray,
          remaining: np.ndarray, later: np.ndarray, next_keys: np.ndarray, next_f: np.ndarray, u: float,
          buf: np.ndarray, split: np.ndarray) -> tuple[float, int]:
    """Visit every split of type ``t``'s cards among the groups that fits the capacities left (``key``).

    ``key`` holds the capacities left in every group but the last, in mixed radix (``stride``); the last
    group's is implied by the cards left. A split ``x`` weighs ``1 / prod(x_g!)`` (the ways to choose which
    cards go where, up to a constant per type). ``mode`` 0 writes the child keys into ``buf`` (up to its size;
    the number of splits is returned), 1 returns the weighted sum of ``next_f`` over the children (found in
    the sorted ``next_keys``), 2 picks the split at which the running weight passes ``u`` into ``split[t]``.
    Only splits that can still be completed are visited: each group's share is bounded below by what the
    later groups cannot absorb, and by the room the later types cannot fill there (``later[t, g]``: the cards
    of types after ``t`` that group ``g`` allows).
    """
    ng = caps.shape[0]
    nt = counts[t]
    digits = np.zeros(ng, dtype=np.int64)
    dsum = 0
    for g in range(ng - 1):
        digits[g] = (key // stride[g]) % (caps[g] + 1)
        dsum += digits[g]
    rem_last = remaining[t] - dsum
    if rem_last < 0:
        return 0.0, 0
    last_room = rem_last if allowed[t, ng - 1] == 1 else 0
    # the least each group must take now, since the later types cannot fill it
    low = np.zeros(ng, dtype=np.int64)
    for g in range(ng):
        room = digits[g] if g < ng - 1 else rem_last
        short = room - later[t, g]
        if short > 0:
            if allowed[t, g] == 0:
                return 0.0, 0
            low[g] = short
    after = np.zeros(ng, dtype=np.int64)  # what groups g+1.. can take
    need = np.zeros(ng, dtype=np.int64)  # what groups g+1.. must take
    acc = last_room
    acc_need = low[ng - 1]
    for g in range(ng - 2, -1, -1):
        after[g] = acc
        need[g] = acc_need
        if allowed[t, g] == 1:
            acc += digits[g]
        acc_need += low[g]
    if acc < nt or acc_need > nt:
        return 0.0, 0
    total = 0.0
    leaves = 0
    x = np.zeros(ng, dtype=np.int64)
    r = np.zeros(ng + 1, dtype=np.int64)
    fact = _FACTORIALS
    if ng == 1:
        if nt > last_room or nt < low[0]:
            return 0.0, 0
        g = -1
        leaf = True
    else:
        g = 0
        r[0] = nt
        x[0] = max(low[0], nt - after[0]) - 1
        leaf = False
    while True:
        if not leaf:
            if g < 0:
                break
            x[g] += 1
            top = min(r[g] - need[g], digits[g]) if allowed[t, g] == 1 else 0
            if x[g] > top:
                g -= 1
                continue
            if g < ng - 2:
                r[g + 1] = r[g] - x[g]
                g += 1
                x[g] = max(low[g], r[g] - after[g]) - 1
                continue
        # a complete split: the last group takes what is left
        x_last = (r[g] - x[g]) if g >= 0 else nt
        child = key
        w = 1.0 / fact[x_last]
        for j in range(ng - 1):
            child -= x[j] * stride[j]
            w /= fact[x[j]]
        leaves += 1
        if mode == 0:
            if leaves <= buf.shape[0]:
                buf[leaves - 1] = child
        elif mode == 1:
            i = np.searchsorted(next_keys, child)
            if i < next_keys.shape[0] and next_keys[i] == child:
                total += w * next_f[i]
        else:
            i = np.searchsorted(next_keys, child)
            if i < next_keys.shape[0] and next_keys[i] == child and next_f[i] > 0.0:
                v = w * next_f[i]
                for j in range(ng - 1):
                    split[t, j] = x[j]
                split[t, ng - 1] = x_last
                if u < v:
                    return v, leaves
                u -= v
        if g < 0:
            break
        leaf = False
    return total, leaves


@njit(cache=True)
def _totals(counts: np.ndarray, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cards of types ``t..`` (``remaining[t]``), and cards of types after ``t`` that group ``g`` allows
    (``later[t, g]``)."""
    ntypes, ng = allowed.shape
    remaining = np.zeros(ntypes + 1, dtype=np.int64)
    later = np.zeros((ntypes, ng), dtype=np.int64)
    for t in range(ntypes - 1, -1, -1):
        remaining[t] = remaining[t + 1] + counts[t]
        if t + 1 < ntypes:
            for g in range(ng):
                later[t, g] = later[t + 1, g] + counts[t + 1] * allowed[t + 1, g]
    return remaining, later


@njit(cache=True)
def _count_levels(counts: np.ndarray, caps: np.ndarray, allowed: np.ndarray, limit: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
    """The counting programme over the reachable capacity states, type by type.

    Level ``t`` lists (sorted) the capacity keys reachable after placing types ``0..t-1``; ``f`` at a key of
    level ``t`` is the weighted number of ways to place the types ``t..`` from there. Returns the keys, the
    weights, the level starts, the mixed-radix strides and whether the work stayed within ``limit``.
    """
    ntypes = counts.shape[0]
    ng = caps.shape[0]
    stride = np.ones(max(ng, 1), dtype=np.int64)
    for g in range(1, ng):
        stride[g] = stride[g - 1] * (caps[g - 1] + 1)
    full = 0
    for g in range(ng - 1):
        full += caps[g] * stride[g]
    remaining, later = _totals(counts, allowed)
    empty_f = np.zeros(1, dtype=np.float64)
    starts = np.zeros(ntypes + 2, dtype=np.int64)
    keys = np.zeros(1, dtype=np.int64)
    keys[0] = full
    starts[1] = 1
    work = 0
    buf = np.zeros(64, dtype=np.int64)
    for t in range(ntypes):
        level = keys[starts[t]:starts[t + 1]]
        children = np.zeros(64, dtype=np.int64)
        m = 0
        for key in level:
            while True:
                _, k = _walk(0, key, t, counts, caps, allowed, stride, remaining, later, keys, empty_f, 0.0, buf,
                             np.zeros((1, 1), dtype=np.int64))
                if k <= buf.shape[0]:
                    break
                buf = np.zeros(2 * k, dtype=np.int64)
            work += k
            if work > limit:
                return keys, empty_f, starts, stride, False
            while m + k > children.shape[0]:
                grown = np.zeros(2 * children.shape[0], dtype=np.int64)
                grown[:m] = children[:m]
                children = grown
            children[m:m + k] = buf[:k]
            m += k
        nxt = np.unique(children[:m])
        grown = np.zeros(starts[t + 1] + nxt.shape[0], dtype=np.int64)
        grown[:starts[t + 1]] = keys[:starts[t + 1]]
        grown[starts[t + 1]:] = nxt
        keys = grown
        starts[t + 2] = keys.shape[0]
    f = np.zeros(keys.shape[0], dtype=np.float64)
    for i in range(starts[ntypes], starts[ntypes + 1]):
        f[i] = 1.0 if keys[i] == 0 else 0.0
    for t in range(ntypes - 1, -1, -1):
        nk = keys[starts[t + 1]:starts[t + 2]]
        nf = f[starts[t + 1]:starts[t + 2]]
        for i in range(starts[t], starts[t + 1]):
            f[i], _ = _walk(1, keys[i], t, counts, caps, allowed, stride, remaining, later, nk, nf, 0.0, buf,
                            np.zeros((1, 1), dtype=np.int64))
    return keys, f, starts, stride, True


@njit(cache=True)
def _dp_assign(counts: np.ndarray, caps: np.ndarray, allowed: np.ndarray, keys: np.ndarray, f: np.ndarray,
               starts: np.ndarray, stride: np.ndarray, split: np.ndarray, rng: np.ndarray) -> bool:
    """Draw how many cards of each type go to each group (``split[t, g]``), exactly in proportion to the
    number of card assignments; False when there is none."""
    ntypes = counts.shape[0]
    if f[0] <= 0.0:
        return False
    remaining, later = _totals(counts, allowed)
    ng = caps.shape[0]
    key = keys[0]
    total = f[0]
    buf = np.zeros(1, dtype=np.int64)
    for t in range(ntypes):
        nk = keys[starts[t + 1]:starts[t + 2]]
        nf = f[starts[t + 1]:starts[t + 2]]
        _walk(2, key, t, counts, caps, allowed, stride, remaining, later, nk, nf, _uniform(rng) * total, buf,
              split)
        for j in range(ng - 1):
            key -= split[t, j] * stride[j]
        i = np.searchsorted(nk, key)
        total = nf[i]
    return True


@njit(cache=True)
def _rejection_assign(counts: np.ndarray, caps: np.ndarray, allowed: np.ndarray, below: np.ndarray,
                      split: np.ndarray, rng: np.ndarray) -> bool:
    """Exact rejection sampling of ``split[t, g]``, for tables too large to count.

    Cards are placed one at a time, the types in order (most constrained first): each takes a free place
    chosen uniformly among those its type allows. A complete placement has probability ``prod 1 / f_i``
    (``f_i``: the free places open to the ``i``-th card), so it is kept with probability ``prod f_i / U_i``,
    where ``U_i`` bounds ``f_i`` for every placement: the places the type allows less the earlier cards that
    must have taken one of them (those of types allowed only there, ``below[t, u]``, or those the places
    outside cannot hold), less the type's own earlier cards. Every complete placement is then kept with
    probability ``1 / prod U_i``: uniform.
    """
    ntypes = counts.shape[0]
    ng = caps.shape[0]
    free = caps.copy()
    keep = 1.0
    for t in range(ntypes):
        for g in range(ng):
            split[t, g] = 0
    placed = 0
    for t in range(ntypes):
        places = 0
        outside = 0
        for g in range(ng):
            if allowed[t, g] == 1:
                places += caps[g]
            else:
                outside += caps[g]
        # earlier cards that must sit among this type's places: those of types allowed nowhere else, and every
        # card beyond what the places outside can hold
        inside = 0
        for u in range(t):
            if below[t, u] == 1:
                inside += counts[u]
        inside = max(inside, placed - outside)
        for i in range(counts[t]):
            f = 0
            for g in range(ng):
                if allowed[t, g] == 1:
                    f += free[g]
            if f == 0:
                return False
            keep *= f / (places - inside - i)
            k = _below(rng, f)
            for g in range(ng):
                if allowed[t, g] == 1:
                    if k < free[g]:
                        free[g] -= 1
                        split[t, g] += 1
                        break
                    k -= free[g]
        placed += counts[t]
    return _uniform(rng) < keep


@njit(cache=True)
def _positions(hand: int, cards: int) -> int:
    """The hand positions (i-th lowest card id = bit i) of ``cards``."""
    out = np.int64(0)
    k = 0
    for c in range(NUM_CARDS):
        if (hand >> c) & 1:
            if (cards >> c) & 1:
                out |= np.int64(1) << k
            k += 1
    return out


@njit(cache=True)
def _order_pile(s: np.ndarray, p: np.ndarray, desired: np.ndarray) -> None:
    """Permute the pile so that the core's reshuffle, with the state's seed, deals ``desired`` in order.

    The permutation is read off the core's own shuffle: a scratch copy whose pile holds positions runs it.
    """
    k = s[core.S_PILE_LEN]
    scratch = s.copy()
    for i in range(k):
        scratch[core.S_PILE + i] = i
    scratch[core.S_STOCK_POS] = scratch[core.S_STOCK_LEN]
    core._draw_card(scratch)
    for i in range(k):
        s[core.S_PILE + scratch[core.S_STOCK + i]] = desired[i]


@njit(cache=True)
def _sample_kernel(p: np.ndarray, n: int, h: int, dealer: int, deck_size: int, dealt: int, face: int,
                   face_last_of_dealer: bool, face_separate: bool, face_dead_by_dealer: bool,
                   bin_size: np.ndarray, bin_off: np.ndarray,
                   pin_cards: np.ndarray, pin_card_start: np.ndarray, pin_bins: np.ndarray, pin_bin_start: np.ndarray,
                   type_cards: np.ndarray, type_start: np.ndarray, caps: np.ndarray, allowed: np.ndarray,
                   sub_groups: np.ndarray, sub_start: np.ndarray, group_caps: np.ndarray,
                   group_bins: np.ndarray, group_start: np.ndarray, forced: np.ndarray, forced_start: np.ndarray,
                   use_dp: bool, keys: np.ndarray, weights: np.ndarray, starts: np.ndarray, stride: np.ndarray,
                   below: np.ndarray,
                   stage_final: np.ndarray, stage_final_start: np.ndarray, pf_bins: np.ndarray, pf_start: np.ndarray,
                   card_pf_bin: np.ndarray, order_bins: np.ndarray, order_start: np.ndarray,
                   init_bins: np.ndarray, init_start: np.ndarray, disc_bin: np.ndarray,
                   ev_kind: np.ndarray, ev_seat: np.ndarray, ev_arg: np.ndarray, pot: int, deal_no: int,
                   count: int, max_attempts: int, rng: np.ndarray,
                   out: np.ndarray, decks: np.ndarray, seeds: np.ndarray, actions: np.ndarray,
                   orders: np.ndarray, snap_events: np.ndarray, snaps: np.ndarray, until: int,
                   discards: np.ndarray) -> tuple[int, int, int]:
    """Draw ``count`` consistent worlds into ``out``; returns (worlds drawn, proposals made, proposals the
    replay rejected). With ``until >= 0`` the replay stops before event ``until``."""
    ntypes = type_start.shape[0] - 1
    ng = caps.shape[0]
    nbins = bin_size.shape[0]
    nstages = order_start.shape[0] - 1
    counts = np.zeros(max(ntypes, 1), dtype=np.int64)
    for t in range(ntypes):
        counts[t] = type_start[t + 1] - type_start[t]
    split = np.zeros((max(ntypes, 1), max(ng, 1)), dtype=np.int64)
    content = np.zeros(bin_off[nbins], dtype=np.int64)
    fill = np.zeros(nbins, dtype=np.int64)
    tcards = type_cards.copy()
    gcards = np.zeros(NUM_CARDS, dtype=np.int64)
    hand_pool = np.zeros(NUM_CARDS, dtype=np.int64)
    places = np.zeros(NUM_CARDS + 1, dtype=np.int64)
    gpos = np.zeros(max(ng, 1) + 1, dtype=np.int64)
    hand_cards = np.zeros(MAX_HAND_SIZE + 1, dtype=np.int64)
    deck = np.zeros(deck_size, dtype=np.int64)
    stage_cards = np.zeros(NUM_CARDS, dtype=np.int64)
    desired = np.zeros(NUM_CARDS, dtype=np.int64)
    order_len = np.zeros(max(nstages, 1), dtype=np.int64)
    disc_mask = np.zeros(MAX_PLAYERS, dtype=np.int64)
    s = np.zeros(core.STATE_SIZE, dtype=np.int64)
    made = 0
    tries = 0
    refused = 0
    while made < count and tries < max_attempts:
        tries += 1
        fill[:] = 0
        # the observer's cards, its discards and the turned card, each spread at random over the free places of
        # the bins that hold them
        for j in range(pin_card_start.shape[0] - 1):
            lo = pin_card_start[j]
            hi = pin_card_start[j + 1]
            m = 0
            for bi in range(pin_bin_start[j], pin_bin_start[j + 1]):
                b = pin_bins[bi]
                for _ in range(bin_size[b] - fill[b]):
                    places[m] = b
                    m += 1
            _shuffle(places, 0, m, rng)
            for k in range(hi - lo):
                b = places[k]
                content[bin_off[b] + fill[b]] = pin_cards[lo + k]
                fill[b] += 1
        # the other cards: how many of each type go to each group, then which ones, then which bin
        if ntypes > 0:
            ok = (_dp_assign(counts, caps, allowed, keys, weights, starts, stride, split, rng) if use_dp
                  else _rejection_assign(counts, caps, allowed, below, split, rng))
            if not ok:
                continue
        # each counting group's free cards, shuffled, shared among its groups; each group adds its forced cards
        gpos[0] = 0
        for g in range(ng):
            gpos[g + 1] = gpos[g]
            for t in range(ntypes):
                gpos[g + 1] += split[t, g]
        for t in range(ntypes):
            _shuffle(tcards, type_start[t], type_start[t + 1], rng)
        cursor = gpos[:ng].copy()
        for t in range(ntypes):
            k = type_start[t]
            for g in range(ng):
                for _ in range(split[t, g]):
                    gcards[cursor[g]] = tcards[k]
                    cursor[g] += 1
                    k += 1
        for g in range(ng):
            _shuffle(gcards, gpos[g], gpos[g + 1], rng)
            k = gpos[g]
            for si in range(sub_start[g], sub_start[g + 1]):
                sg = sub_groups[si]
                m = 0
                for i in range(forced_start[sg], forced_start[sg + 1]):
                    hand_pool[m] = forced[i]
                    m += 1
                for _ in range(group_caps[sg]):
                    hand_pool[m] = gcards[k]
                    m += 1
                    k += 1
                _shuffle(hand_pool, 0, m, rng)
                m = 0
                for bi in range(group_start[sg], group_start[sg + 1]):
                    b = group_bins[bi]
                    for _ in range(bin_size[b]):
                        content[bin_off[b] + fill[b]] = hand_pool[m]
                        fill[b] += 1
                        m += 1
        # reshuffled cards back where they lay before the reshuffle: pinned ones first, the rest at random
        for r in range(pf_start.shape[0] - 1):
            m = 0
            for bi in range(stage_final_start[r], stage_final_start[r + 1]):
                b = stage_final[bi]
                for i in range(bin_size[b]):
                    c = content[bin_off[b] + i]
                    if card_pf_bin[c] >= 0:
                        pb = card_pf_bin[c]
                        content[bin_off[pb] + fill[pb]] = c
                        fill[pb] += 1
                    else:
                        stage_cards[m] = c
                        m += 1
            _shuffle(stage_cards, 0, m, rng)
            k = 0
            for bi in range(pf_start[r], pf_start[r + 1]):
                b = pf_bins[bi]
                while fill[b] < bin_size[b]:
                    content[bin_off[b] + fill[b]] = stage_cards[k]
                    fill[b] += 1
                    k += 1
        # the deck: each seat's dealt hand in dealing order (the turned card last for the dealer), then the stock
        for q in range(n):
            m = 0
            for bi in range(init_start[q], init_start[q + 1]):
                b = init_bins[bi]
                for i in range(bin_size[b]):
                    hand_cards[m] = content[bin_off[b] + i]
                    m += 1
            _shuffle(hand_cards, 0, m, rng)
            if face_last_of_dealer and q == dealer:
                hand_cards[m] = face
                m += 1
            k = (q - dealer - 1) % n
            for j in range(h):
                deck[k + j * n] = hand_cards[j]
        pos = n * h
        if face_separate:
            deck[pos] = face
            pos += 1
        ol = 0
        for r in range(nstages):
            order_len[r] = 0
            for bi in range(order_start[r], order_start[r + 1]):
                b = order_bins[bi]
                lo = bin_off[b]
                _shuffle(content, lo, lo + bin_size[b], rng)
                for i in range(bin_size[b]):
                    if r == 0:
                        deck[pos] = content[lo + i]
                        pos += 1
                    else:
                        orders[made, ol] = content[lo + i]
                        ol += 1
                        order_len[r] += 1
        for q in range(n):
            disc_mask[q] = 0
            b = disc_bin[q]
            if b >= 0:
                for i in range(bin_size[b]):
                    disc_mask[q] |= np.int64(1) << content[bin_off[b] + i]
        if face_dead_by_dealer:
            disc_mask[dealer] |= np.int64(1) << face
        for q in range(n):
            discards[made, q] = disc_mask[q]
        # replay the public record through the rules
        seed = core._splitmix64(rng)
        core.start_episode(s, p, deck, dealer, 0, seed)
        s[core.S_DEAL_NO] = deal_no
        good = True
        ol = 0
        js = 0
        for e in range(ev_kind.shape[0]):
            if e == until:
                break
            if js < snap_events.shape[0] and snap_events[js] == e:
                snaps[made, js, :] = s
                js += 1
            q = ev_seat[e]
            kind = ev_kind[e]
            if kind == EV_ACTION:
                a = ev_arg[e]
            elif kind == EV_HIDDEN:
                a = core.PASS if _below(rng, 2) == 0 else core.DECLARE_PLAY
            else:
                hand = s[core.S_HAND + q]
                a = core.STAY_BASE + _positions(hand, disc_mask[q])
                surplus = core._surplus_position(s, p, q)
                draws = core.popcount(disc_mask[q]) - (1 if surplus != 0 else 0)
                if s[core.S_STOCK_POS] + draws > s[core.S_STOCK_LEN]:
                    r = s[core.S_RESHUFFLES] + 1
                    k = s[core.S_PILE_LEN]
                    if r >= nstages or k != order_len[r]:
                        good = False
                        break
                    for i in range(k):
                        desired[i] = orders[made, ol + i]
                    ol += k
                    _order_pile(s, p, desired)
            actions[made, e] = a
            if not core.step(s, p, a):
                good = False
                break
        if not good:
            refused += 1
            continue
        s[core.S_POT] = pot
        out[made, :] = s
        decks[made, :] = deck
        seeds[made] = seed
        made += 1
    return made, tries, refused


# ---------------------------------------------------------------------------------------------- the sampler
def _seed_state(seed: int | np.random.Generator | None) -> np.ndarray:
    if isinstance(seed, np.random.Generator):
        value = int(seed.integers(0, 2**63 - 1))
    elif seed is None:
        value = int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
    elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        value = int(np.random.SeedSequence(int(seed)).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
    else:
        raise ValueError(f"seed: expected an integer, a numpy Generator or None, got {seed!r}")
    return np.array([value], dtype=np.int64)


@dataclasses.dataclass
class Worlds:
    """Sampled worlds with what rebuilds each from scratch (``sample(..., recipes=True)``).

    ``states[i]`` is world ``i`` at the observer's decision; it is what dealing ``decks[i]`` with the
    plan's dealer and ``seeds[i]`` (``core.start_episode``) and stepping ``actions[i]`` gives, the pile
    being permuted before each draw that runs the stock out so that the stock it becomes reads
    ``reshuffle_orders[i]`` (the new stocks one after another), and the pot set to the observation's.
    ``discards[i, q]``: the cards seat ``q`` discards in world ``i`` (a card mask; the observer's are its own).
    ``snapshots[i, j]``: world ``i`` just before event ``snapshot_events[j]`` (``sample(snapshots=...)``).
    With ``sample(until=e)`` the states are the worlds just before event ``e`` and ``actions`` stop there.
    """

    states: np.ndarray
    decks: np.ndarray
    seeds: np.ndarray
    actions: np.ndarray
    reshuffle_orders: np.ndarray
    dealer: int
    proposals: int
    discards: np.ndarray | None = None
    snapshots: np.ndarray | None = None
    snapshot_events: np.ndarray | None = None


class WorldSampler:
    """Draws worlds consistent with one seat's observation (module docstring: what, and how).

    ``observation`` is the seat's observation vector (``OBS_SIZE`` float32, the ``"observation"`` entry of
    the env's dict). ``rules``: the rule configuration, by default read from the observation's rule fields.
    Construction does the per-observation work (the public record, the bins, the counting tables);
    ``sample`` is compiled and draws a batch. ``ValueError`` when the vector is malformed, belongs to a
    finished deal, or admits no world.
    """

    def __init__(self, observation: np.ndarray, rules: Rules | None = None, method: str = "auto") -> None:
        obs = _check_vector(observation)
        if method not in ("auto", "dp", "rejection"):
            raise ValueError(f"method: expected 'auto', 'dp' or 'rejection', got {method!r}")
        self.record = decode(obs)
        self.rules = rules if rules is not None else rules_from_observation(obs, self.record)
        if not isinstance(self.rules, Rules):
            raise ValueError(f"rules: expected a Rules object, got {self.rules!r}")
        if self.rules.num_players != self.record.num_players or self.rules.hand_size != self.record.hand_size:
            raise ValueError("rules: the table size or hand size differs from the observation's")
        self.params = self.rules.params()
        # the observation's own deal number and episode length decide whether the deal ends the episode
        self.params[core.P_DEALS] = self.record.deal_no + 1 + self.record.deals_left
        plan = _Plan(self.record, self.rules, self.params)
        self.plan = plan
        self.method = method
        self._build_arrays()

    @classmethod
    def from_state(cls, state: np.ndarray, rules: Rules, seat: int, method: str = "auto") -> WorldSampler:
        """The sampler of what ``seat`` sees in a core state (its observation, encoded here), for tests and tools
        that hold the full state; an agent has only its observation and uses the constructor."""
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < rules.num_players:
            raise ValueError(f"seat: expected a seat in 0..{rules.num_players - 1}, got {seat!r}")
        return cls(observer_view(np.asarray(state, dtype=np.int64), rules.params(), int(seat)), rules, method)

    def _build_arrays(self) -> None:
        plan = self.plan
        sizes = np.array(plan.bin_size, dtype=np.int64)
        self._bin_size = sizes
        self._bin_off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self._pin_cards, self._pin_card_start = _flat([_bits(mask) for mask, _ in plan.pinned])
        self._pin_bins, self._pin_bin_start = _flat([bins for _, bins in plan.pinned])
        self._type_cards, self._type_start = _flat(plan.type_cards)
        self._caps = np.array(plan.caps, dtype=np.int64)
        self._allowed = np.ascontiguousarray(plan.allowed)
        self._below = np.ascontiguousarray(plan.below)
        self._group_bins, self._group_start = _flat(plan.group_bins)
        self._forced, self._forced_start = _flat(plan.forced)
        self._sub_groups, self._sub_start = _flat(plan.sub_groups)
        self._group_caps = np.array(plan.group_caps, dtype=np.int64)
        counts = np.diff(self._type_start)
        self._keys = np.zeros(1, dtype=np.int64)
        self._weights = np.zeros(1, dtype=np.float64)
        self._starts = np.zeros(2, dtype=np.int64)
        self._stride = np.ones(1, dtype=np.int64)
        if len(plan.type_cards) == 0:
            self.method = "dp"  # nothing to count: every hidden card is placed already
        elif self.method != "rejection":
            keys, weights, starts, stride, done = _count_levels(counts, self._caps, self._allowed, DP_LIMIT)
            if done:
                if weights[0] <= 0.0:
                    raise ValueError("observation: no world is consistent with it (the hidden cards cannot be placed)")
                self._keys, self._weights, self._starts, self._stride = keys, weights, starts, stride
                self.method = "dp"
            elif self.method == "dp":
                raise ValueError(f"method 'dp': the counting needs more than {DP_LIMIT} steps for this observation")
            else:
                self.method = "rejection"
        stages = list(range(1, plan.stages + 1))
        self._stage_final, self._stage_final_start = _flat([plan.stage_final[r] for r in stages])
        self._pf_bins, self._pf_start = _flat([plan.pf[r] for r in stages])
        self._card_pf_bin = np.array(plan.card_pf_bin, dtype=np.int64)
        self._order_bins, self._order_start = _flat(plan.stage_order)
        self._init_bins, self._init_start = _flat(plan.init_bins)
        self._disc_bin = np.array(plan.disc_bin, dtype=np.int64)
        ev = plan.events
        self._ev_kind = np.array([e[0] for e in ev], dtype=np.int64)
        self._ev_seat = np.array([e[1] for e in ev], dtype=np.int64)
        self._ev_arg = np.array([e[2] for e in ev], dtype=np.int64)
        self._reshuffled_cards = sum(int(sizes[b]) for r in stages for b in plan.pf[r])

    @property
    def events(self) -> list[tuple[int, int, int]]:
        """The public record replayed into every world: ``(kind, seat, action)`` per decision, in order (``EV_*``
        kinds; the action of a draw or a secret declaration is the world's own)."""
        return list(self.plan.events)

    def sample(self, count: int, seed: int | np.random.Generator | None = 0, recipes: bool = False,
               max_attempts: int | None = None, snapshots: list[int] | None = None, until: int | None = None) -> Any:
        """``count`` worlds as a ``(count, core.STATE_SIZE)`` int64 array (the observer is seat 0), or a
        ``Worlds`` with what rebuilds them when ``recipes`` is set. Seeded: the same seed gives the same worlds.

        ``snapshots``: indices into ``events``; the ``Worlds`` (implied) then holds in ``snapshots[i, j]`` world
        ``i`` just before its event ``snapshots[j]``, for instance to ask what a model of the other players
        would have done there.

        ``until``: an event index; each world is then returned just before that event, its replay cut there.
        Such a world agrees with the record up to that event only (a later play may prove it wrong): for a
        caller that replays the rest itself and compares observations, as ``agents.inference`` does.

        ``RuntimeError`` if ``max_attempts`` proposals (default ``MAX_ATTEMPTS_PER_WORLD * count``) do not
        give ``count`` consistent worlds.
        """
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise ValueError(f"count: expected an integer >= 1, got {count!r}")
        count = int(count)
        rng = _seed_state(seed)
        plan = self.plan
        rules = self.rules
        trump_card = int(self.params[core.P_TRUMP_CARD])
        out = np.zeros((count, core.STATE_SIZE), dtype=np.int64)
        decks = np.zeros((count, rules.deck_size), dtype=np.int64)
        seeds = np.zeros(count, dtype=np.int64)
        actions = np.zeros((count, max(len(plan.events), 1)), dtype=np.int64)
        orders = np.zeros((count, max(self._reshuffled_cards, 1)), dtype=np.int64)
        limit = MAX_ATTEMPTS_PER_WORLD * count if max_attempts is None else int(max_attempts)
        if until is not None and not (isinstance(until, (int, np.integer)) and 0 <= until <= len(plan.events)):
            raise ValueError(f"until: expected an event index in 0..{len(plan.events)}, got {until!r}")
        snap_events = np.asarray(sorted(snapshots or []), dtype=np.int64)
        if snap_events.size and (snap_events[0] < 0 or snap_events[-1] >= len(plan.events)
                                 or np.any(np.diff(snap_events) == 0)):
            raise ValueError(f"snapshots: expected distinct event indices in 0..{len(plan.events) - 1}")
        snaps = np.zeros((count, snap_events.size, core.STATE_SIZE) if snap_events.size else (1, 1, 1),
                         dtype=np.int64)
        discards = np.zeros((count, plan.n), dtype=np.int64)
        dealt = plan.n * plan.h + (1 if trump_card in (core.TRUMP_SEPARATE, core.TRUMP_DEALER_MAY_TAKE) else 0)
        made, tries, refused = _sample_kernel(
            self.params, plan.n, plan.h, plan.dealer, rules.deck_size, dealt, plan.face,
            trump_card == core.TRUMP_DEALERS_CARD, trump_card in (core.TRUMP_SEPARATE, core.TRUMP_DEALER_MAY_TAKE),
            plan.face_dead_by_dealer, self._bin_size, self._bin_off,
            self._pin_cards, self._pin_card_start, self._pin_bins, self._pin_bin_start,
            self._type_cards, self._type_start, self._caps, self._allowed, self._sub_groups, self._sub_start,
            self._group_caps, self._group_bins, self._group_start, self._forced, self._forced_start,
            self.method == "dp", self._keys, self._weights, self._starts, self._stride, self._below,
            self._stage_final, self._stage_final_start, self._pf_bins, self._pf_start, self._card_pf_bin,
            self._order_bins, self._order_start, self._init_bins, self._init_start, self._disc_bin,
            self._ev_kind, self._ev_seat, self._ev_arg, self.record.pot, self.record.deal_no,
            count, limit, rng, out, decks, seeds, actions, orders, snap_events, snaps, -1 if until is None else until,
            discards)
        self.last_proposals = tries
        self.last_refused = refused
        if made < count:
            raise RuntimeError(f"only {made} consistent worlds in {tries} proposals ({refused} refused by the replay): "
                               "the observation admits almost none (or it was not produced by the rules)")
        if not recipes and snapshots is None and until is None:
            return out
        return Worlds(out, decks, seeds, actions[:, :len(plan.events)], orders[:, :self._reshuffled_cards],
                      plan.dealer, tries, discards, snaps if snap_events.size else None, snap_events)


def sample_worlds(observation: np.ndarray, count: int, seed: int | np.random.Generator | None = 0,
                  rules: Rules | None = None) -> np.ndarray:
    """``WorldSampler(observation, rules).sample(count, seed)``: worlds as core states, the observer in seat 0."""
    return WorldSampler(observation, rules).sample(count, seed)


def observer_view(state: np.ndarray, params: np.ndarray, seat: int) -> np.ndarray:
    """The observation vector of ``seat`` in a core state (a copy of the state is encoded: the cinch cache
    of the original is left alone)."""
    from bourre_env import observation as _observation

    out = np.zeros(OBS_SIZE, dtype=np.float32)
    _observation.encode(state.copy(), params, seat, out)
    return out
