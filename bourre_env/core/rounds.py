"""The rules core's decision rounds, one legal-actions and one step function each, and the two dispatchers.

The rules core is numba-compiled functions over one ``int64`` state vector, split by topic; each module
imports only the ones above it in this list:

* ``bourre_env.core.rules``: the configuration (``Rules``), its parameter vector (``make_params``, ``P_*``);
* ``bourre_env.core.layout``: the state vector's offsets (``S_*``), action ids, phase and other codes;
* ``bourre_env.core.bits``: card masks and bit counts, seats;
* ``bourre_env.core.tricks``: trick winner, ordinary legality, trump equivalents, what a play proves;
* ``bourre_env.core.cinch``: the cinch, worked out exactly (``has_cinch``);
* ``bourre_env.core.settlement``: outcomes and payments at the end of a deal;
* ``bourre_env.core.deal``: antes, dealing, the stock;
* ``bourre_env.core.play``: trick play (phase ``PLAY``);
* this module: the decision phases in game order, and ``legal_actions`` and ``step``, which switch on the
  phase as OpenSpiel's games do.

Why numba: the rules must be exact (a naive Python oracle in ``tests/`` checks
them) and the same code must serve the PettingZoo env one decision at a time
and a batch of thousands of games at millions of decisions per second. A
compiled kernel over a flat array gives both without a second copy of any rule;
numpy vectorisation across a batch would need one (trick play branches per game).
The compiled functions call one another across these modules; numba compiles them together.

Phases, in game order (``layout``: one phase per decision round, its code the round's slot in the observation):
``NAME_TRUMP`` (only with ``Rules.trump_card="named_by_dealer"``: no card is turned, the dealer names the trump suit
first), ``DECLARE`` (only with ``Rules.declaration`` "two_rounds" or "simultaneous": each player in turn declares play
or pass, before anyone draws; simultaneous declarations stay hidden until the last is made), ``DRAW_OR_PASS`` (without
a declaration round: each player in turn passes or plays with a discard), ``DRAW`` (after a declaration round: the
playing players in turn choose their discards, no pass), ``SECOND_PASS`` (only with ``Rules.second_pass_ante``: after
the draw each playing player in turn stays, paying, or passes), ``PLAY`` (tricks), ``DEAL_OVER`` (a deal is settled
and the episode goes on: call ``next_deal``), ``GAME_OVER`` (the episode is over). Each decision phase has one
legal-actions function (``*_mask``) and one step function (``_step_*``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core.bits import (
    ACE,
    _bit,
    _n,
    face_bit,
    popcount,
    positions_to_cards,
    suit_mask,
)
from bourre_env.core.deal import (
    _open_decisions,
    _to_pile,
    draw_card,
)
from bourre_env.core.layout import (
    DECLARE,
    DECLARE_PLAY,
    DRAW,
    DRAW_OR_PASS,
    FACE_DEAD,
    FACE_IN_HAND,
    NAME_TRUMP,
    NAME_TRUMP_BASE,
    NUM_ACTIONS,
    PASS,
    PASSED,
    PENDING,
    PLAY,
    PLAYING,
    S_CUR,
    S_DEALER,
    S_DECISION,
    S_DISCARDS,
    S_FACE,
    S_FACE_STATE,
    S_HAND,
    S_KNOWN_OUT,
    S_MOVES,
    S_NDISCARD,
    S_PHASE,
    S_POT,
    S_REWARD,
    S_STAYED,
    S_TRUMP,
    SCRATCH_SIZE,
    SECOND_PASS,
    SECOND_STAY,
    STAY_BASE,
)
from bourre_env.core.play import _start_play, _step_play, play_mask
from bourre_env.core.rules import (
    CLUBS,
    DECLARATION_SIMULTANEOUS,
    ENTRY_NONE,
    P_DECLARATION,
    P_ENTRY,
    P_HAND_SIZE,
    P_MAX_DISCARD,
    P_PLAY_ANTE,
    P_SECOND_PASS,
)


# ---------------- naming trump (NAME_TRUMP, dealer_picks_trump)
@njit(cache=True)
def name_trump_mask(s: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """Legal actions of ``NAME_TRUMP``: any of the four suits."""
    for suit in range(4):
        out[NAME_TRUMP_BASE + suit] = 1


@njit(cache=True)
def _step_name_trump(s: np.ndarray, p: np.ndarray, action: int) -> bool:
    if action < NAME_TRUMP_BASE or action >= NAME_TRUMP_BASE + 4:
        return False
    s[S_MOVES] += 1
    _apply_name_trump(s, p, action)
    return True


@njit(cache=True)
def _apply_name_trump(s: np.ndarray, p: np.ndarray, action: int) -> None:
    """dealer_picks_trump (docs/rules.md): the dealer, having seen the whole hand, names the trump suit before
    anyone decides to play or pass."""
    s[S_TRUMP] = action - NAME_TRUMP_BASE
    _open_decisions(s, p)


# ---------------- who may pass, who may play (the declaration and draw-or-pass rounds)
@njit(cache=True)
def dealer_must_play(s: np.ndarray, p: np.ndarray) -> bool:
    """The dealer may not pass: the turned card is an ace in the dealer's hand, or everyone before the dealer passed.

    The ace rule's reason (the ace of trumps always wins a trick, says the Louisiana text) holds only for a dealer who
    holds it: a separate trump card that belongs to no one does not bind the dealer.
    """
    if s[S_FACE] % 13 == ACE and s[S_FACE_STATE] == FACE_IN_HAND:
        return True
    if s[S_PHASE] == DECLARE and p[P_DECLARATION] == DECLARATION_SIMULTANEOUS:
        return False  # the dealer cannot see the others' declarations: held to play at the reveal (_reveal)
    n = _n(p)
    for q in range(n):
        if q != s[S_DEALER] and s[S_DECISION + q] != PASSED:
            return False
    return True


@njit(cache=True)
def may_pass(s: np.ndarray, p: np.ndarray) -> bool:
    """Whether the seat to act may pass in a round where passing is possible (declaration, draw or pass): always
    but a dealer who must play. (The draw round after a declaration round has no pass at all.)"""
    return not (s[S_CUR] == s[S_DEALER] and dealer_must_play(s, p))


@njit(cache=True)
def meets_entry(s: np.ndarray, p: np.ndarray, seat: int) -> bool:
    """Whether the hand of ``seat`` may come in under ``Rules.entry_requirement`` (four_card: "Players must have at
    least one trump or at least one club (a 'dirty club') to play"), judged on the hand held when declaring."""
    if p[P_ENTRY] == ENTRY_NONE:
        return True
    return bool((s[S_HAND + seat] & (suit_mask(s[S_TRUMP]) | suit_mask(CLUBS))) != 0)


@njit(cache=True)
def may_play(s: np.ndarray, p: np.ndarray) -> bool:
    """Whether the seat to act may come in (declare play, or play with a discard): its hand meets the entry
    requirement, or it may not pass (a dealer who must play plays whatever the hand). (In the draw round after a
    declaration round its players are in already.)"""
    return meets_entry(s, p, s[S_CUR]) or not may_pass(s, p)


@njit(cache=True)
def _lay_down(s: np.ndarray, seat: int) -> None:
    """A pass: the hand is laid face down, out of the deal (a pile card for a reshuffle)."""
    s[S_DECISION + seat] = PASSED
    _to_pile(s, s[S_HAND + seat])
    s[S_HAND + seat] = 0


@njit(cache=True)
def _declare_play(s: np.ndarray, p: np.ndarray, seat: int) -> None:
    """A player comes in, paying ``play_ante`` (double_ante: each player who plays adds a second chip
    at the moment of declaring play; two_round_declaration: the second ante is paid with the declaration)."""
    s[S_DECISION + seat] = PLAYING
    s[S_POT] += p[P_PLAY_ANTE]
    s[S_REWARD + seat] -= p[P_PLAY_ANTE]


# ---------------- declaring play or pass (DECLARE)
@njit(cache=True)
def declare_mask(s: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """Legal actions of the seat to act in ``DECLARE``: PASS (unless the dealer must play) and DECLARE_PLAY (unless
    the hand fails the entry requirement)."""
    if may_pass(s, p):
        out[PASS] = 1
    if may_play(s, p):
        out[DECLARE_PLAY] = 1


@njit(cache=True)
def _step_declare(s: np.ndarray, p: np.ndarray, action: int) -> bool:
    if not (action == DECLARE_PLAY and may_play(s, p)) and not (action == PASS and may_pass(s, p)):
        return False
    s[S_MOVES] += 1
    _apply_declare(s, p, action)
    return True


@njit(cache=True)
def _apply_declare(s: np.ndarray, p: np.ndarray, action: int) -> None:
    """One declaration (``DECLARE``); after the dealer's, the draw round, or a lone player's win."""
    seat = s[S_CUR]
    simultaneous = p[P_DECLARATION] == DECLARATION_SIMULTANEOUS
    if simultaneous:
        # a closed fist: recorded, hidden from the others (decision_seen), acted on at the reveal
        s[S_DECISION + seat] = PASSED if action == PASS else PLAYING
    elif action == PASS:
        _lay_down(s, seat)
    else:
        _declare_play(s, p, seat)
    if seat != s[S_DEALER]:
        s[S_CUR] = (seat + 1) % _n(p)
        return
    if simultaneous:
        _reveal(s, p)
    playing = 0
    for q in range(_n(p)):
        if s[S_DECISION + q] == PLAYING:
            playing += 1
    if playing == 1:
        _start_play(s, p)  # a lone player wins every trick without play, and without drawing
        return
    s[S_PHASE] = DRAW
    s[S_CUR] = next_to_draw(s, p)


@njit(cache=True)
def _reveal(s: np.ndarray, p: np.ndarray) -> None:
    """Simultaneous declarations revealed together: the passed hands are laid down and the players who play pay
    ``play_ante``; if everyone passed, the dealer plays (docs/rules.md: a deal always has a player)."""
    n = _n(p)
    dealer = s[S_DEALER]
    anyone = False
    for q in range(n):
        if s[S_DECISION + q] == PLAYING:
            anyone = True
    if not anyone:
        s[S_DECISION + dealer] = PLAYING
    for k in range(1, n + 1):
        q = (dealer + k) % n
        if s[S_DECISION + q] == PASSED:
            _lay_down(s, q)
        else:
            _declare_play(s, p, q)


@njit(cache=True)
def decision_seen(s: np.ndarray, p: np.ndarray, viewer: int, seat: int) -> int:
    """The decision of ``seat`` as ``viewer`` knows it: during a simultaneous declaration round another seat's
    declaration shows PENDING until all are revealed."""
    if seat != viewer and s[S_PHASE] == DECLARE and p[P_DECLARATION] == DECLARATION_SIMULTANEOUS:
        return PENDING
    return int(s[S_DECISION + seat])


# ---------------- discarding and drawing (both draw rounds)
@njit(cache=True)
def surplus_position(s: np.ndarray, p: np.ndarray, seat: int) -> int:
    """Bit of the hand position of the turned card that a dealer may take (a hand above ``hand_size``), else 0.

    Such a dealer must discard down to ``hand_size``: the turned card, or one more card of the hand.
    """
    hand = s[S_HAND + seat]
    if popcount(hand) <= p[P_HAND_SIZE]:
        return 0
    return int(np.int64(1) << popcount(hand & (_bit(s[S_FACE]) - 1)))


@njit(cache=True)
def stay_allowed(s: np.ndarray, p: np.ndarray, seat: int, positions: int) -> bool:
    """Whether ``seat`` may play discarding the hand ``positions`` (a bitmask): at most ``max_discard`` cards of
    the hand, and a dealer holding the turned card as a sixth card leaves with ``hand_size`` (docs/rules.md)."""
    held = popcount(s[S_HAND + seat])
    if positions < 0 or positions >= (1 << held):
        return False
    surplus = surplus_position(s, p, seat)
    if surplus and positions == 0:
        return False
    return bool(popcount(positions & ~surplus) <= p[P_MAX_DISCARD])


@njit(cache=True)
def _stay_mask(s: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """The stays (play, discarding a set of hand positions) the seat to act may choose."""
    seat = s[S_CUR]
    held = popcount(s[S_HAND + seat])
    for m in range(1 << held):
        if stay_allowed(s, p, seat, m):
            out[STAY_BASE + m] = 1


@njit(cache=True)
def _draw(s: np.ndarray, p: np.ndarray, seat: int, positions: int) -> None:
    """A playing seat discards the hand ``positions`` (announcing how many) and is dealt replacements."""
    hand = s[S_HAND + seat]
    surplus = surplus_position(s, p, seat)
    discard = positions_to_cards(hand, positions)
    # the turned card a dealer may take is no card of the hand: it counts neither as a discard nor as a draw
    draws = popcount(discard) - (1 if surplus else 0)
    s[S_NDISCARD + seat] = popcount(positions & ~surplus)
    s[S_DISCARDS + seat] = discard
    hand &= ~discard
    for _ in range(draws):
        hand |= _bit(draw_card(s))
    s[S_HAND + seat] = hand
    face_discarded = seat == s[S_DEALER] and (discard & face_bit(s)) != 0
    if face_discarded:
        s[S_FACE_STATE] = FACE_DEAD
        discard &= ~_bit(s[S_FACE])
    _to_pile(s, discard)
    s[S_KNOWN_OUT + seat] = discard


@njit(cache=True)
def next_to_draw(s: np.ndarray, p: np.ndarray) -> int:
    """After a declaration round: the first playing seat from the dealer's left that has not drawn yet, else -1."""
    n = _n(p)
    for k in range(1, n + 1):
        q = (s[S_DEALER] + k) % n
        if s[S_DECISION + q] == PLAYING and s[S_NDISCARD + q] < 0:
            return int(q)
    return -1


@njit(cache=True)
def _after_draw(s: np.ndarray, p: np.ndarray) -> None:
    """The draw is over: the second chance to pass (``second_pass_ante`` set, two players or more), else play."""
    s[S_STAYED] = 0
    if p[P_SECOND_PASS] >= 0:
        s[S_PHASE] = SECOND_PASS
        _next_second_pass(s, p)
    else:
        _start_play(s, p)


# ---------------- draw or pass (DRAW_OR_PASS, without a declaration round)
@njit(cache=True)
def draw_or_pass_mask(s: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """Legal actions of ``DRAW_OR_PASS``: PASS, and the stays."""
    if may_pass(s, p):
        out[PASS] = 1
    if may_play(s, p):
        _stay_mask(s, p, out)


@njit(cache=True)
def _step_draw_or_pass(s: np.ndarray, p: np.ndarray, action: int) -> bool:
    """The draw-or-pass round: the seat to act passes, or comes in (paying ``play_ante``) and draws; the dealer
    acts last. False, changing nothing, for an illegal action."""
    if action < PASS or action >= NUM_ACTIONS:
        return False
    seat = s[S_CUR]
    if action == PASS:
        if not may_pass(s, p):
            return False
    elif not (may_play(s, p) and stay_allowed(s, p, seat, action - STAY_BASE)):
        return False
    s[S_MOVES] += 1
    if action == PASS:
        _lay_down(s, seat)
    else:
        _declare_play(s, p, seat)
        _draw(s, p, seat, action - STAY_BASE)
    if seat == s[S_DEALER]:
        _after_draw(s, p)
    else:
        s[S_CUR] = (seat + 1) % _n(p)
    return True


# ---------------- the draw after a declaration round (DRAW)
@njit(cache=True)
def draw_mask(s: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """Legal actions of ``DRAW``, the draw round after a declaration round: the stays, no pass."""
    _stay_mask(s, p, out)


@njit(cache=True)
def _step_draw(s: np.ndarray, p: np.ndarray, action: int) -> bool:
    """The draw round after a declaration round: each playing seat in turn from the dealer's left discards and
    draws (no pass). False, changing nothing, for an illegal action."""
    if action < STAY_BASE or action >= NUM_ACTIONS or not stay_allowed(s, p, s[S_CUR], action - STAY_BASE):
        return False
    s[S_MOVES] += 1
    _draw(s, p, s[S_CUR], action - STAY_BASE)
    nxt = next_to_draw(s, p)
    if nxt < 0:
        _after_draw(s, p)
    else:
        s[S_CUR] = nxt
    return True


# ---------------- the second chance to pass (SECOND_PASS)
@njit(cache=True)
def second_pass_mask(s: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """Legal actions in ``SECOND_PASS``: PASS (drop out) and SECOND_STAY (stay, paying ``second_pass_ante``)."""
    out[PASS] = 1
    out[SECOND_STAY] = 1


@njit(cache=True)
def _step_second_pass(s: np.ndarray, p: np.ndarray, action: int) -> bool:
    if action != PASS and action != SECOND_STAY:
        return False
    s[S_MOVES] += 1
    _apply_second_pass(s, p, action)
    return True


@njit(cache=True)
def _apply_second_pass(s: np.ndarray, p: np.ndarray, action: int) -> None:
    """four_card (docs/rules.md): after the draw a second chance to pass; those who stay pay one more chip. A player who
    passes now lays the hand down and is out of the deal (no bourré, the chips paid stay in the pot)."""
    seat = s[S_CUR]
    if action == PASS:
        _lay_down(s, seat)
    else:
        s[S_STAYED] |= np.int64(1) << seat
        s[S_POT] += p[P_SECOND_PASS]
        s[S_REWARD + seat] -= p[P_SECOND_PASS]
    _next_second_pass(s, p)


@njit(cache=True)
def _next_second_pass(s: np.ndarray, p: np.ndarray) -> None:
    """The next playing seat from the dealer's left that has not stayed yet; play starts when there is none, or
    when one player is left (who wins every trick without play, paying no stay chip: no one is left to stay
    against)."""
    n = _n(p)
    playing = 0
    for q in range(n):
        if s[S_DECISION + q] == PLAYING:
            playing += 1
    if playing > 1:
        for k in range(1, n + 1):
            q = (s[S_DEALER] + k) % n
            if s[S_DECISION + q] == PLAYING and not (s[S_STAYED] >> q) & 1:
                s[S_CUR] = q
                return
    _start_play(s, p)


# ---------------- one decision: the dispatchers
@njit(cache=True)
def decision_round(s: np.ndarray, p: np.ndarray) -> int:
    """The decision round under way (``ROUND_*``, the code of its phase), or -1 in trick play and after the deal."""
    phase = s[S_PHASE]
    return phase if phase < PLAY else -1


@njit(cache=True)
def legal_actions(s: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """``legal_actions_with`` with a fresh scratch array (nothing is remembered between calls)."""
    legal_actions_with(s, p, out, np.zeros(SCRATCH_SIZE, dtype=np.int64))


@njit(cache=True)
def legal_actions_with(s: np.ndarray, p: np.ndarray, out: np.ndarray, x: np.ndarray) -> None:
    """Fill ``out`` (int8, NUM_ACTIONS) with the legal-action mask of the seat to act. The state is only read;
    the cinch memo and search statistics go to the game's scratch array ``x`` (``layout.new_scratch``)."""
    out[:] = 0
    phase = s[S_PHASE]
    if phase == NAME_TRUMP:
        name_trump_mask(s, p, out)
    elif phase == DECLARE:
        declare_mask(s, p, out)
    elif phase == DRAW_OR_PASS:
        draw_or_pass_mask(s, p, out)
    elif phase == DRAW:
        draw_mask(s, p, out)
    elif phase == SECOND_PASS:
        second_pass_mask(s, p, out)
    elif phase == PLAY:
        play_mask(s, p, out, x)


@njit(cache=True)
def step(s: np.ndarray, p: np.ndarray, action: int) -> bool:
    """``step_with`` with a fresh scratch array (nothing is remembered between calls)."""
    return step_with(s, p, action, np.zeros(SCRATCH_SIZE, dtype=np.int64))


@njit(cache=True)
def step_with(s: np.ndarray, p: np.ndarray, action: int, x: np.ndarray) -> bool:
    """Apply the action of the seat to act. Returns False, changing no game state, if the action is illegal.

    With ``illegal_action="renege"`` a card of the hand that the rules forbid is played as a renege. ``x`` is the
    game's scratch array (the cinch memo and search statistics).
    """
    phase = s[S_PHASE]
    if phase == NAME_TRUMP:
        return _step_name_trump(s, p, action)
    if phase == DECLARE:
        return _step_declare(s, p, action)
    if phase == DRAW_OR_PASS:
        return _step_draw_or_pass(s, p, action)
    if phase == DRAW:
        return _step_draw(s, p, action)
    if phase == SECOND_PASS:
        return _step_second_pass(s, p, action)
    if phase == PLAY:
        return _step_play(s, p, action, x)
    return False
