"""The rules core: every rule of the game, once, as numba-compiled functions over one int64 array.

A game's whole state is one ``int64`` vector of ``STATE_SIZE`` (offsets below); a
batch of games is a 2-D array with one row per game, stepped by the same
functions (``bourre_env.batch``). The rule configuration reaches the compiled
code as an ``int64`` parameter vector (``make_params``). Nothing here draws
random numbers on its own: the deck of a deal is an argument, and the one
reshuffle the rules allow (the stock running out during the draw) uses a
64-bit seed that is also an argument of the deal.

Why numba: the rules must be exact (a naive Python oracle in ``tests/`` checks
them) and the same code must serve the PettingZoo env one decision at a time
and a batch of thousands of games at millions of decisions per second. A
compiled kernel over a flat array gives both without a second copy of any rule;
numpy vectorisation across a batch would need one (trick play branches per game).

Cards in a hand are bitmasks over card ids (bit ``c`` set when card ``c`` is
held), so "cards of the suit led that beat the 10" is one AND.

Phases: ``NAME_TRUMP`` (only with ``Rules.trump_card="named_by_dealer"``: no card is
turned, the dealer names the trump suit first), ``DECLARE`` (only with ``Rules.declaration``
"two_rounds" or "simultaneous": each player in turn declares play or pass, before anyone draws; simultaneous
declarations stay hidden until the last is made), ``DECIDE`` (each player in turn
passes or plays with a discard; after a declaration round, the playing players in
turn choose their discards), ``SECOND_PASS`` (only with ``Rules.second_pass_ante``:
after the draw each playing player in turn stays, paying, or passes), ``PLAY`` (tricks),
``DEAL_OVER`` (a deal is settled and the episode goes on: call ``next_deal``), ``GAME_OVER`` (the episode is over).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from bourre_env import cards as _cards
from bourre_env.rules import CINCH_TRICKS, MAX_HAND_SIZE, MAX_PLAYERS

if TYPE_CHECKING:
    from bourre_env.rules import Rules

# ---------------------------------------------------------------- action ids
NUM_CARDS = _cards.NUM_CARDS
PASS = NUM_CARDS  # 52
STAY_BASE = NUM_CARDS + 1  # 53: stay(discard positions bitmask m) is STAY_BASE + m
NUM_DISCARD_SETS = 1 << MAX_HAND_SIZE  # 64
NUM_ACTIONS = STAY_BASE + NUM_DISCARD_SETS  # 117
DECLARE_PLAY = STAY_BASE  # 53 in the DECLARE phase: declare play (the discards are chosen in the draw round)
SECOND_STAY = STAY_BASE  # 53 in the SECOND_PASS phase: stay in the deal, paying ``second_pass_ante``
NAME_TRUMP_BASE = STAY_BASE  # 53 + suit (clubs, diamonds, hearts, spades) in the NAME_TRUMP phase: name trump

# ---------------------------------------------------------------- phases
DECIDE = 0
PLAY = 1
DEAL_OVER = 2
GAME_OVER = 3
DECLARE = 4  # the declaration round before the draw (``Rules.declaration`` other than "with_draw")
SECOND_PASS = 5  # the second chance to pass after the draw (``Rules.second_pass_ante`` set)
NAME_TRUMP = 6  # the dealer names the trump suit before any decision (``Rules.trump_card="named_by_dealer"``)

# decisions
PENDING = 0
PASSED = 1
PLAYING = 2

# face-up card whereabouts
FACE_IN_HAND = 0  # in the dealer's hand (a sixth card while a dealer who may take it decides; laid down
#                   with the hand if the dealer passes)
FACE_DEAD = 1  # public and out of play: discarded by the dealer, or a separate trump card that is no one's
FACE_PLAYED = 2
FACE_NONE = 3  # no card is turned (the dealer names trump); ``S_FACE`` is then -1

# how a playing seat's deal ended (bits of ``S_OUTCOME``, written by the settlement)
OUTCOME_WON = 1  # alone with the most tricks, and took the pot (a reneging top scorer forfeits it)
OUTCOME_TIED = 2  # tied for the most tricks: the pot was divided or carried
OUTCOME_BOURRE = 4  # played and took no trick
OUTCOME_RENEGED = 8

# ---------------------------------------------------------------- params layout
P_NUM_PLAYERS = 0
P_HAND_SIZE = 1
P_MAX_DISCARD = 2
P_MUST_TRUMP = 3
P_LEAD_HONORS = 4
P_POT_LIMIT = 5  # -1 for no limit
P_TIE_DIVIDE = 6
P_RAKE_NUM = 7
P_RAKE_DEN = 8
P_RENEGE = 9
P_DEALS = 10
P_DECK_MASK = 11  # bitmask of the card ids in the deck
P_DECK_SIZE = 12
P_CINCH_BUDGET = 13  # node budget of one exact cinch search
P_PLAY_ANTE = 14  # chips a player adds to the pot on declaring play
P_ANTE_EXEMPTIONS = 15  # 1: bourré and tied (carried pot) players skip the next ante
P_DEALER_ANTES = 16  # 1: the dealer pays every player's ante
P_TRUMP_CARD = 17  # TRUMP_* below: where the card turned for trump comes from and whose it is
P_DECLARATION = 18  # DECLARATION_* below: how pass or play is declared
P_ENTRY = 19  # ENTRY_* below: what a hand must hold for its player to play
P_SECOND_PASS = 20  # chips a player pays to stay at the second chance to pass after the draw; -1: no second pass
P_RENEGE_MULT = 21  # a player who reneged pays this many times the pot
NUM_PARAMS = 22

# what a hand must hold for its player to play (``Rules.entry_requirement``)
ENTRY_NONE = 0
ENTRY_TRUMP_OR_CLUB = 1  # four_card: "at least one trump or at least one club (a 'dirty club')"
_ENTRY_CODES = {"none": ENTRY_NONE, "trump_or_club": ENTRY_TRUMP_OR_CLUB}
CLUBS = 0

# how pass or play is declared (``Rules.declaration``)
DECLARATION_WITH_DRAW = 0  # one decision per player: pass, or play with a discard
DECLARATION_TWO_ROUNDS = 1  # a declaration round in turn (DECLARE), then the draw round of the players who play
DECLARATION_SIMULTANEOUS = 2  # the same, the declarations hidden from one another and revealed together
_DECLARATION_CODES = {"with_draw": DECLARATION_WITH_DRAW, "two_rounds": DECLARATION_TWO_ROUNDS,
                      "simultaneous": DECLARATION_SIMULTANEOUS}

# the card turned for trump (``Rules.trump_card``)
TRUMP_DEALERS_CARD = 0  # the dealer's last card, part of the dealer's hand
TRUMP_SEPARATE = 1  # an extra card after the hands, no one's
TRUMP_DEALER_MAY_TAKE = 2  # an extra card after the hands that the dealer, playing, may take into hand
TRUMP_NAMED = 3  # no card turned: the dealer names the trump suit after looking at the hand (dealer_picks_trump)
_TRUMP_CARD_CODES = {"dealer": TRUMP_DEALERS_CARD, "separate": TRUMP_SEPARATE,
                     "separate_dealer_may_take": TRUMP_DEALER_MAY_TAKE, "named_by_dealer": TRUMP_NAMED}

# ---------------------------------------------------------------- state layout
S_PHASE = 0
S_DEALER = 1
S_CUR = 2  # seat to act, -1 when none
S_TRUMP = 3
S_FACE = 4
S_FACE_STATE = 5
S_DEAL_NO = 6
S_POT = 7
S_STOCK_POS = 8
S_STOCK_LEN = 9
S_PILE_LEN = 10
S_RNG = 11
S_TRICK_NO = 12
S_LEADER = 13
S_NPLAYED = 14
S_LED = 15  # suit led to the current trick, -1 before the lead
S_NACTIVE = 16
S_STAYED = 17  # bitmask of the seats that stayed at the second chance to pass (SECOND_PASS)
S_RAKE_TOTAL = 18
S_PLAYED = 19  # bitmask of every card played to a trick this deal, current trick included
S_DEALS_DONE = 20
S_CINCH_ABORTS = 21  # exact cinch searches that hit the node budget (rare; counted for tests and reports)
S_MOVES = 22  # decisions taken this episode (keys the cinch cache)
S_CINCH_KEY = 23  # (S_MOVES * MAX_PLAYERS + seat + 1) of the cached cinch answer
S_HAND = 24  # [MAX_PLAYERS] card bitmasks
S_DECISION = S_HAND + MAX_PLAYERS  # [MAX_PLAYERS] PENDING / PASSED / PLAYING
S_NDISCARD = S_DECISION + MAX_PLAYERS  # [MAX_PLAYERS] announced discard count, -1 until announced
S_TRICKS = S_NDISCARD + MAX_PLAYERS  # [MAX_PLAYERS] tricks won this deal
S_EXEMPT = S_TRICKS + MAX_PLAYERS  # [MAX_PLAYERS] 1 if the player antes nothing for the next deal
S_RENEGED = S_EXEMPT + MAX_PLAYERS  # [MAX_PLAYERS]
S_REWARD = S_RENEGED + MAX_PLAYERS  # [MAX_PLAYERS] chip change of the current deal
S_CHIPS = S_REWARD + MAX_PLAYERS  # [MAX_PLAYERS] chip change over the episode
S_DISCARDS = S_CHIPS + MAX_PLAYERS  # [MAX_PLAYERS] bitmask of the cards each player discarded
S_TRICK_CARDS = S_DISCARDS + MAX_PLAYERS  # [MAX_HAND_SIZE][MAX_PLAYERS] card each seat played, -1 none
S_TRICK_LEADER = S_TRICK_CARDS + MAX_HAND_SIZE * MAX_PLAYERS  # [MAX_HAND_SIZE]
S_TRICK_WINNER = S_TRICK_LEADER + MAX_HAND_SIZE  # [MAX_HAND_SIZE]
S_STOCK = S_TRICK_WINNER + MAX_HAND_SIZE  # [52]
S_PILE = S_STOCK + NUM_CARDS  # [52] discards and passed hands that a reshuffle would use
S_CINCH_VAL = S_PILE + NUM_CARDS  # the cached cinch answer, 0 or 1
S_CINCH_SEARCHES = S_CINCH_VAL + 1  # searches run this episode (statistics)
S_CINCH_NODES = S_CINCH_SEARCHES + 1  # search nodes visited this episode (statistics)
S_KNOWN_OUT = S_CINCH_NODES + 1  # [MAX_PLAYERS] own discards each player knows are out of play (not reshuffled)
S_RESHUFFLES = S_KNOWN_OUT + MAX_PLAYERS  # times the stock ran out and was rebuilt this deal (public)
S_OUTCOME = S_RESHUFFLES + 1  # [MAX_PLAYERS] OUTCOME_* bits of each seat, set when the deal is settled
S_FACE_RESHUFFLED = S_OUTCOME + MAX_PLAYERS  # 1 once a passed dealer's turned card went back into the stock (public)
S_ABSENT = S_FACE_RESHUFFLED + 1  # [MAX_PLAYERS] cards each seat's plays this deal prove it does not hold (public)
STATE_SIZE = S_ABSENT + MAX_PLAYERS

ACE = 12
KING = 11
QUEEN = 10
SUIT_MASK0 = (1 << 13) - 1  # clubs; shift by 13 * suit
ALL_CARDS = (1 << NUM_CARDS) - 1
_NOT_TOP_RANK = ALL_CARDS & ~sum(1 << (13 * suit + 12) for suit in range(4))  # every card but the aces
_NOT_BOTTOM_RANK = ALL_CARDS & ~sum(1 << (13 * suit) for suit in range(4))  # every card but the twos
NUM_PROBE_POLICIES = 8  # orderings tried as single-path probes before the exhaustive cinch search


def make_params(rules: Rules) -> np.ndarray:
    """The int64 parameter vector of a rule configuration."""
    p = np.zeros(NUM_PARAMS, dtype=np.int64)
    p[P_NUM_PLAYERS] = rules.num_players
    p[P_HAND_SIZE] = rules.hand_size
    p[P_MAX_DISCARD] = rules.discard_limit
    p[P_MUST_TRUMP] = int(rules.must_trump_when_cannot_win)
    p[P_LEAD_HONORS] = int(rules.lead_trump_honors)
    p[P_POT_LIMIT] = -1 if rules.pot_limit is None else rules.pot_limit
    p[P_TIE_DIVIDE] = int(rules.tie == "divide")
    rake = rules.rake_fraction
    p[P_RAKE_NUM] = rake.numerator
    p[P_RAKE_DEN] = rake.denominator
    p[P_RENEGE] = int(rules.illegal_action == "renege")
    p[P_DEALS] = rules.deals_per_episode
    mask = 0
    for c in rules.deck_cards():
        mask |= 1 << c
    p[P_DECK_MASK] = mask
    p[P_DECK_SIZE] = rules.deck_size
    p[P_CINCH_BUDGET] = 100_000
    p[P_PLAY_ANTE] = rules.play_ante
    p[P_ANTE_EXEMPTIONS] = int(rules.ante_exemptions)
    p[P_DEALER_ANTES] = int(rules.ante_payer == "dealer")
    p[P_TRUMP_CARD] = _TRUMP_CARD_CODES[rules.trump_card]
    p[P_DECLARATION] = _DECLARATION_CODES[rules.declaration]
    p[P_ENTRY] = _ENTRY_CODES[rules.entry_requirement]
    p[P_SECOND_PASS] = -1 if rules.second_pass_ante is None else rules.second_pass_ante
    p[P_RENEGE_MULT] = rules.renege_multiple
    return p


def new_state() -> np.ndarray:
    return np.zeros(STATE_SIZE, dtype=np.int64)


# ================================================================ bit helpers
@njit(cache=True)
def _bit(c: int) -> int:
    return np.int64(1) << c


@njit(cache=True)
def suit_mask(suit: int) -> int:
    return np.int64(SUIT_MASK0) << (13 * suit)


@njit(cache=True)
def above_mask(card: int) -> int:
    """Cards of ``card``'s suit ranked above it."""
    suit_top = np.int64(1) << (13 * (card // 13 + 1))
    return suit_top - (np.int64(1) << (card + 1))


@njit(cache=True)
def popcount(x: int) -> int:
    """Number of set bits (SWAR: constant time, no loop over the bits)."""
    v = np.uint64(x)
    v = v - ((v >> np.uint64(1)) & np.uint64(0x5555555555555555))
    v = (v & np.uint64(0x3333333333333333)) + ((v >> np.uint64(2)) & np.uint64(0x3333333333333333))
    v = (v + (v >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((v * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True)
def lowest_card(x: int) -> int:
    """Lowest card id in a non-empty mask."""
    return popcount((x & -x) - 1)


@njit(cache=True)
def highest_card(x: int) -> int:
    """Highest card id in a non-empty mask (card masks use bits 0..51 only)."""
    x |= x >> 1
    x |= x >> 2
    x |= x >> 4
    x |= x >> 8
    x |= x >> 16
    x |= x >> 32
    return popcount(x) - 1


@njit(cache=True)
def positions_to_cards(hand: int, positions: int) -> int:
    """Card mask of the hand positions set in ``positions`` (position i = i-th lowest card id)."""
    out = np.int64(0)
    k = 0
    for c in range(NUM_CARDS):
        if (hand >> c) & 1:
            if (positions >> k) & 1:
                out |= _bit(c)
            k += 1
    return out


@njit(cache=True)
def _splitmix64(state: np.ndarray) -> int:
    """Next 63-bit value of a splitmix64 stream kept in ``state[0]``."""
    state[0] += np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15 as int64
    z = np.uint64(state[0])
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(z >> np.uint64(1))


# ================================================================ seats
@njit(cache=True)
def _n(p: np.ndarray) -> int:
    return p[P_NUM_PLAYERS]


@njit(cache=True)
def next_active(s: np.ndarray, n: int, seat: int) -> int:
    """The next playing seat clockwise after ``seat``."""
    for k in range(1, n + 1):
        q = (seat + k) % n
        if s[S_DECISION + q] == PLAYING:
            return q
    return -1


# ================================================================ deal
@njit(cache=True)
def start_episode(s: np.ndarray, p: np.ndarray, deck: np.ndarray, dealer: int, pot: int, rng: int) -> None:
    """First deal of an episode: everyone owes the ante; ``pot`` chips were already in the pot.

    ``deck`` is the dealing order: ``num_players * hand_size`` cards dealt one at a time from the
    dealer's left, then (a separate trump card) the card turned for trump, then the stock.
    """
    s[:] = 0
    s[S_POT] = pot
    s[S_DEALER] = dealer
    _deal(s, p, deck, rng)


@njit(cache=True)
def next_deal(s: np.ndarray, p: np.ndarray, deck: np.ndarray, rng: int) -> None:
    """The next deal of an episode, after ``DEAL_OVER``: the deal passes left; pot and exemptions carry."""
    s[S_DEALER] = (s[S_DEALER] + 1) % _n(p)
    s[S_DEAL_NO] += 1
    _deal(s, p, deck, rng)


@njit(cache=True)
def _collect_antes(s: np.ndarray, p: np.ndarray) -> None:
    """The ante of 1 chip per player before a deal (docs/rules.md), paid by the player or, with ``ante_payer="dealer"``,
    by the dealer; with ``ante_exemptions`` a player bourré or tied in a carried pot last deal owes none."""
    n = _n(p)
    for q in range(n):
        if s[S_EXEMPT + q] == 0 or p[P_ANTE_EXEMPTIONS] == 0:
            payer = s[S_DEALER] if p[P_DEALER_ANTES] else q
            s[S_POT] += 1
            s[S_REWARD + payer] -= 1
        s[S_EXEMPT + q] = 0


@njit(cache=True)
def _deal(s: np.ndarray, p: np.ndarray, deck: np.ndarray, rng: int) -> None:
    n = _n(p)
    h = p[P_HAND_SIZE]
    dealer = s[S_DEALER]
    for q in range(MAX_PLAYERS):
        s[S_HAND + q] = 0
        s[S_DECISION + q] = PENDING
        s[S_NDISCARD + q] = -1
        s[S_TRICKS + q] = 0
        s[S_RENEGED + q] = 0
        s[S_REWARD + q] = 0
        s[S_DISCARDS + q] = 0
        s[S_KNOWN_OUT + q] = 0
        s[S_OUTCOME + q] = 0
        s[S_ABSENT + q] = 0
    _collect_antes(s, p)
    for i in range(n * h):
        q = (dealer + 1 + i) % n
        s[S_HAND + q] |= _bit(deck[i])
    if p[P_TRUMP_CARD] == TRUMP_SEPARATE:
        # separate_trump_card (docs/rules.md): the card turned after the hands belongs to no one, public and out of play
        face = deck[n * h]
        s[S_FACE_STATE] = FACE_DEAD
        dealt = n * h + 1
    elif p[P_TRUMP_CARD] == TRUMP_DEALER_MAY_TAKE:
        # separate_trump_card_dealer_may_take: the dealer holds six cards until the dealer's decision
        face = deck[n * h]
        s[S_HAND + dealer] |= _bit(face)
        s[S_FACE_STATE] = FACE_IN_HAND
        dealt = n * h + 1
    elif p[P_TRUMP_CARD] == TRUMP_NAMED:
        face = -1  # dealer_picks_trump: no card is turned; the dealer's cards all stay hidden
        s[S_FACE_STATE] = FACE_NONE
        dealt = n * h
    else:
        face = deck[n * h - 1]  # the dealer's last card
        s[S_FACE_STATE] = FACE_IN_HAND
        dealt = n * h
    s[S_FACE] = face
    s[S_TRUMP] = face // 13 if face >= 0 else -1  # named by the dealer in NAME_TRUMP
    stock_len = p[P_DECK_SIZE] - dealt
    for i in range(stock_len):
        s[S_STOCK + i] = deck[dealt + i]
    s[S_STOCK_POS] = 0
    s[S_STOCK_LEN] = stock_len
    s[S_PILE_LEN] = 0
    s[S_RESHUFFLES] = 0
    s[S_FACE_RESHUFFLED] = 0
    s[S_RNG] = rng
    s[S_TRICK_NO] = 0
    s[S_NPLAYED] = 0
    s[S_LED] = -1
    s[S_LEADER] = -1
    s[S_NACTIVE] = 0
    s[S_PLAYED] = 0
    s[S_STAYED] = 0
    for i in range(MAX_HAND_SIZE * MAX_PLAYERS):
        s[S_TRICK_CARDS + i] = -1
    for i in range(MAX_HAND_SIZE):
        s[S_TRICK_LEADER + i] = -1
        s[S_TRICK_WINNER + i] = -1
    if p[P_TRUMP_CARD] == TRUMP_NAMED:
        s[S_PHASE] = NAME_TRUMP
        s[S_CUR] = dealer
    else:
        _open_decisions(s, p)


@njit(cache=True)
def _open_decisions(s: np.ndarray, p: np.ndarray) -> None:
    """The pass-or-play decisions begin at the dealer's left (a declaration round, or draw-or-pass)."""
    s[S_PHASE] = DECIDE if p[P_DECLARATION] == DECLARATION_WITH_DRAW else DECLARE
    s[S_CUR] = (s[S_DEALER] + 1) % _n(p)


@njit(cache=True)
def _apply_name_trump(s: np.ndarray, p: np.ndarray, action: int) -> None:
    """dealer_picks_trump (docs/rules.md): the dealer, having seen the whole hand, names the trump suit before
    anyone decides to play or pass."""
    s[S_TRUMP] = action - NAME_TRUMP_BASE
    _open_decisions(s, p)


@njit(cache=True)
def face_bit(s: np.ndarray) -> int:
    """Bit of the card turned for trump, 0 when no card is turned."""
    return _bit(s[S_FACE]) if s[S_FACE] >= 0 else np.int64(0)


# ================================================================ draw-or-pass phase
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
def _surplus_position(s: np.ndarray, p: np.ndarray, seat: int) -> int:
    """Bit of the hand position of the turned card that a dealer may take (a hand above ``hand_size``), else 0.

    Such a dealer must discard down to ``hand_size``: the turned card, or one more card of the hand.
    """
    hand = s[S_HAND + seat]
    if popcount(hand) <= p[P_HAND_SIZE]:
        return 0
    return np.int64(1) << popcount(hand & (_bit(s[S_FACE]) - 1))


@njit(cache=True)
def stay_allowed(s: np.ndarray, p: np.ndarray, seat: int, positions: int) -> bool:
    """Whether ``seat`` may play discarding the hand ``positions`` (a bitmask): at most ``max_discard`` cards of
    the hand, and a dealer holding the turned card as a sixth card leaves with ``hand_size`` (docs/rules.md)."""
    held = popcount(s[S_HAND + seat])
    if positions < 0 or positions >= (1 << held):
        return False
    surplus = _surplus_position(s, p, seat)
    if surplus and positions == 0:
        return False
    return popcount(positions & ~surplus) <= p[P_MAX_DISCARD]


@njit(cache=True)
def may_pass(s: np.ndarray, p: np.ndarray) -> bool:
    """Whether the seat to act may pass: in ``DECLARE``, or in ``DECIDE`` when there is no declaration round;
    never a dealer who must play. The draw round after a declaration round has no pass."""
    if s[S_PHASE] == DECIDE and p[P_DECLARATION] != DECLARATION_WITH_DRAW:
        return False
    return not (s[S_CUR] == s[S_DEALER] and dealer_must_play(s, p))


@njit(cache=True)
def meets_entry(s: np.ndarray, p: np.ndarray, seat: int) -> bool:
    """Whether the hand of ``seat`` may come in under ``Rules.entry_requirement`` (four_card: "Players must have at
    least one trump or at least one club (a 'dirty club') to play"), judged on the hand held when declaring."""
    if p[P_ENTRY] == ENTRY_NONE:
        return True
    return (s[S_HAND + seat] & (suit_mask(s[S_TRUMP]) | suit_mask(CLUBS))) != 0


@njit(cache=True)
def may_play(s: np.ndarray, p: np.ndarray) -> bool:
    """Whether the seat to act may come in (declare play, or play with a discard): its hand meets the entry
    requirement, or it may not pass (a dealer who must play plays whatever the hand). In the draw round after a
    declaration round its players are in already."""
    if s[S_PHASE] == DECIDE and p[P_DECLARATION] != DECLARATION_WITH_DRAW:
        return True
    return meets_entry(s, p, s[S_CUR]) or not may_pass(s, p)


@njit(cache=True)
def decide_mask(s: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """Legal PASS / stay actions of the seat to act in ``DECIDE`` (``out`` is zeroed by the caller)."""
    seat = s[S_CUR]
    if may_pass(s, p):
        out[PASS] = 1
    if not may_play(s, p):
        return
    held = popcount(s[S_HAND + seat])
    for m in range(1 << held):
        if stay_allowed(s, p, seat, m):
            out[STAY_BASE + m] = 1


@njit(cache=True)
def _draw_card(s: np.ndarray) -> int:
    if s[S_STOCK_POS] == s[S_STOCK_LEN]:
        # docs/rules.md: the acted players' discards and passed hands, shuffled, become the stock.
        k = s[S_PILE_LEN]
        rng = np.empty(1, dtype=np.int64)
        rng[0] = s[S_RNG]
        for i in range(k - 1, 0, -1):
            j = _splitmix64(rng) % (i + 1)
            a = s[S_PILE + i]
            s[S_PILE + i] = s[S_PILE + j]
            s[S_PILE + j] = a
        s[S_RNG] = rng[0]
        for i in range(k):
            s[S_STOCK + i] = s[S_PILE + i]
        s[S_STOCK_POS] = 0
        s[S_STOCK_LEN] = k
        s[S_PILE_LEN] = 0
        # the acted players' discards are back in play: no one knows where they are any more
        for q in range(MAX_PLAYERS):
            s[S_KNOWN_OUT + q] = 0
        # and so is the turned card of a dealer who passed (laid down with the hand): it can be dealt to anyone
        for i in range(k):
            if s[S_STOCK + i] == s[S_FACE]:
                s[S_FACE_RESHUFFLED] = 1
        s[S_RESHUFFLES] += 1
    c = s[S_STOCK + s[S_STOCK_POS]]
    s[S_STOCK_POS] += 1
    return c


@njit(cache=True)
def _to_pile(s: np.ndarray, mask: int) -> None:
    while mask:
        c = lowest_card(mask)
        mask &= mask - 1
        s[S_PILE + s[S_PILE_LEN]] = c
        s[S_PILE_LEN] += 1


@njit(cache=True)
def declare_mask(s: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """Legal actions of the seat to act in ``DECLARE``: PASS (unless the dealer must play) and DECLARE_PLAY (unless
    the hand fails the entry requirement)."""
    if may_pass(s, p):
        out[PASS] = 1
    if may_play(s, p):
        out[DECLARE_PLAY] = 1


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


@njit(cache=True)
def _draw(s: np.ndarray, p: np.ndarray, seat: int, positions: int) -> None:
    """A playing seat discards the hand ``positions`` (announcing how many) and is dealt replacements."""
    hand = s[S_HAND + seat]
    surplus = _surplus_position(s, p, seat)
    discard = positions_to_cards(hand, positions)
    # the turned card a dealer may take is no card of the hand: it counts neither as a discard nor as a draw
    draws = popcount(discard) - (1 if surplus else 0)
    s[S_NDISCARD + seat] = popcount(positions & ~surplus)
    s[S_DISCARDS + seat] = discard
    hand &= ~discard
    for _ in range(draws):
        hand |= _bit(_draw_card(s))
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
            return q
    return -1


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
    s[S_PHASE] = DECIDE
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
    if (seat != viewer and s[S_PHASE] == DECLARE and p[P_DECLARATION] == DECLARATION_SIMULTANEOUS):
        return PENDING
    return s[S_DECISION + seat]


@njit(cache=True)
def _apply_decide(s: np.ndarray, p: np.ndarray, action: int) -> None:
    seat = s[S_CUR]
    if action == PASS:
        _lay_down(s, seat)
    else:
        if p[P_DECLARATION] == DECLARATION_WITH_DRAW:
            _declare_play(s, p, seat)
        _draw(s, p, seat, action - STAY_BASE)
    if p[P_DECLARATION] != DECLARATION_WITH_DRAW:
        nxt = next_to_draw(s, p)
        if nxt < 0:
            _after_draw(s, p)
        else:
            s[S_CUR] = nxt
    elif seat == s[S_DEALER]:
        _after_draw(s, p)
    else:
        s[S_CUR] = (seat + 1) % _n(p)


@njit(cache=True)
def _after_draw(s: np.ndarray, p: np.ndarray) -> None:
    """The draw is over: the second chance to pass (``second_pass_ante`` set, two players or more), else play."""
    s[S_STAYED] = 0
    if p[P_SECOND_PASS] >= 0:
        s[S_PHASE] = SECOND_PASS
        _next_second_pass(s, p)
    else:
        _start_play(s, p)


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


@njit(cache=True)
def second_pass_mask(s: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """Legal actions in ``SECOND_PASS``: PASS (drop out) and SECOND_STAY (stay, paying ``second_pass_ante``)."""
    out[PASS] = 1
    out[SECOND_STAY] = 1


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
def _start_play(s: np.ndarray, p: np.ndarray) -> None:
    n = _n(p)
    active = 0
    lone = -1
    for q in range(n):
        if s[S_DECISION + q] == PLAYING:
            active += 1
            lone = q
    s[S_NACTIVE] = active
    if active == 1:
        # docs/rules.md: a lone player wins every trick without play.
        s[S_TRICKS + lone] = p[P_HAND_SIZE]
        _settle(s, p)
        return
    s[S_PHASE] = PLAY
    leader = next_active(s, n, s[S_DEALER])
    s[S_LEADER] = leader
    s[S_TRICK_LEADER] = leader
    s[S_CUR] = leader


# ================================================================ trick play
@njit(cache=True)
def trick_winner(cards_in_trick: np.ndarray, leader: int, n: int, trump: int) -> int:
    """Seat that wins a trick: highest trump, else highest card of the suit led. ``-1`` entries sit out."""
    led = cards_in_trick[leader] // 13
    best = -1
    best_key = -1
    for q in range(n):
        c = cards_in_trick[q]
        if c < 0:
            continue
        suit = c // 13
        if suit == trump:
            key = 100 + c % 13
        elif suit == led:
            key = c % 13
        else:
            key = -1
        if key > best_key:
            best_key = key
            best = q
    return best


@njit(cache=True)
def ordinary_legal(hand: int, led: int, trick_best_led: int, trick_best_trump: int, trump: int,
                   must_trump: bool) -> int:
    """Cards of ``hand`` the ordinary rules of trick play allow (docs/rules.md, priorities 1-3), when following.

    ``trick_best_led`` / ``trick_best_trump``: highest card of the led suit / of trumps in the trick, -1 if none.
    """
    follow = hand & suit_mask(led)
    trumps = hand & suit_mask(trump)
    if follow:
        if led == trump or trick_best_trump < 0:
            beat = follow & above_mask(trick_best_led)
            return beat if beat else follow
        return follow
    if trumps:
        over = trumps & above_mask(trick_best_trump) if trick_best_trump >= 0 else trumps
        if over:
            return over
        return trumps if must_trump else hand
    return hand


@njit(cache=True)
def ordinary_plays(hand: int, leading: bool, led: int, trick_best_led: int, trick_best_trump: int, trump: int,
                   must_trump: bool, lead_honors: bool) -> int:
    """Cards of ``hand`` the ordinary rules allow, leading (any card; with ``lead_trump_honors`` a held A, K or Q
    of trumps) or following (``ordinary_legal``): the rules without the cinch's, which the cinch's definition
    ranges over."""
    if leading:
        honors = hand & honors_mask(trump) if lead_honors else np.int64(0)
        return honors if honors else hand
    return ordinary_legal(hand, led, trick_best_led, trick_best_trump, trump, must_trump)


@njit(cache=True)
def honors_mask(trump: int) -> int:
    base = 13 * trump
    return _bit(base + ACE) | _bit(base + KING) | _bit(base + QUEEN)


@njit(cache=True)
def highest_trump_equivalents(hand: int, trump: int, played: int) -> int:
    """The highest trump of ``hand`` and every trump of ``hand`` equivalent to it (docs/rules.md, cinch).

    A lower trump is equivalent when every trump between the two is in the hand or out of play: ``played``
    holds the cards played to a trick and a dead face-up card, and also the cards absent from a small deck
    (they do not exist, so they separate nothing).
    """
    trumps = hand & suit_mask(trump)
    if trumps == 0:
        return 0
    out = np.int64(0)
    gone = hand | played
    c = highest_card(trumps)
    low = 13 * trump
    while c >= low:
        if (trumps >> c) & 1:
            out |= _bit(c)
        elif (gone >> c) & 1:
            pass
        else:
            break
        c -= 1
    return out


@njit(cache=True)
def play_legal(s: np.ndarray, p: np.ndarray, seat: int, with_cinch: bool) -> int:
    """Card mask the seat to act may play, by the ordinary rules and (``with_cinch``) the cinch rules."""
    hand = s[S_HAND + seat]
    trump = s[S_TRUMP]
    tmask = suit_mask(trump)
    leading = s[S_NPLAYED] == 0
    best_led, best_trump = -1, -1
    if not leading:
        row = S_TRICK_CARDS + s[S_TRICK_NO] * MAX_PLAYERS
        best_led, best_trump = _bests(s[row: row + MAX_PLAYERS], _n(p), s[S_LED], trump)
    legal = ordinary_plays(hand, leading, s[S_LED], best_led, best_trump, trump, p[P_MUST_TRUMP] == 1,
                           p[P_LEAD_HONORS] == 1)
    if not with_cinch or (legal & tmask) == 0:
        return legal
    last = s[S_NPLAYED] == s[S_NACTIVE] - 1
    if last and not leading:
        return legal
    # ranks missing from a small deck do not exist, so they count as gone; a dead face-up card is out of play
    gone = s[S_PLAYED] | ~p[P_DECK_MASK]
    if s[S_FACE_STATE] == FACE_DEAD:
        gone |= face_bit(s)
    equiv = highest_trump_equivalents(hand, trump, gone)
    if (legal & ~equiv) == 0:
        return legal  # the cinch could not narrow the choice: no need to search for it
    if has_cinch(s, p, seat):
        narrowed = legal & equiv
        if narrowed:
            return narrowed
    return legal


@njit(cache=True)
def _apply_play(s: np.ndarray, p: np.ndarray, card: int, legal: int) -> None:
    n = _n(p)
    seat = s[S_CUR]
    if not (legal >> card) & 1:
        s[S_RENEGED + seat] = 1
    s[S_HAND + seat] &= ~_bit(card)
    if card == s[S_FACE] and s[S_FACE_STATE] == FACE_IN_HAND:
        s[S_FACE_STATE] = FACE_PLAYED
    t = s[S_TRICK_NO]
    row = S_TRICK_CARDS + t * MAX_PLAYERS
    # what this play proves the player does not hold, kept for the cinch (``proven_absent``); a lead proves
    # something only under lead_trump_honors, so the trick's best cards are looked up for the other plays alone
    if s[S_NPLAYED] > 0:
        best_led, best_trump = _bests(s[row: row + MAX_PLAYERS], n, s[S_LED], s[S_TRUMP])
        s[S_ABSENT + seat] |= _forbidden_after(card, False, s[S_LED], best_led, best_trump, s[S_TRUMP],
                                               p[P_MUST_TRUMP] == 1, p[P_LEAD_HONORS] == 1)
    elif p[P_LEAD_HONORS] == 1:
        s[S_ABSENT + seat] |= _forbidden_after(card, True, -1, -1, -1, s[S_TRUMP], p[P_MUST_TRUMP] == 1, True)
    s[row + seat] = card
    s[S_PLAYED] |= _bit(card)
    if s[S_NPLAYED] == 0:
        s[S_LED] = card // 13
    s[S_NPLAYED] += 1
    if s[S_NPLAYED] < s[S_NACTIVE]:
        s[S_CUR] = next_active(s, n, seat)
        return
    winner = trick_winner(s[row: row + MAX_PLAYERS], s[S_LEADER], n, s[S_TRUMP])
    s[S_TRICK_WINNER + t] = winner
    s[S_TRICKS + winner] += 1
    s[S_TRICK_NO] = t + 1
    s[S_NPLAYED] = 0
    s[S_LED] = -1
    if t + 1 == p[P_HAND_SIZE]:
        _settle(s, p)
        return
    s[S_LEADER] = winner
    s[S_TRICK_LEADER + t + 1] = winner
    s[S_CUR] = winner


# ================================================================ payments
@njit(cache=True)
def _rake(p: np.ndarray, amount: int) -> int:
    return (amount * p[P_RAKE_NUM]) // p[P_RAKE_DEN]


@njit(cache=True)
def _settle(s: np.ndarray, p: np.ndarray) -> None:
    n = _n(p)
    pot = s[S_POT]
    limit = p[P_POT_LIMIT]
    stake = pot if limit < 0 else min(pot, limit)
    most = -1
    for q in range(n):
        if s[S_DECISION + q] == PLAYING and s[S_TRICKS + q] > most:
            most = s[S_TRICKS + q]
    n_most = 0
    for q in range(n):
        if s[S_DECISION + q] == PLAYING and s[S_TRICKS + q] == most:
            n_most += 1
    for q in range(n):
        if s[S_DECISION + q] == PLAYING:
            outcome = OUTCOME_BOURRE if s[S_TRICKS + q] == 0 else 0
            if s[S_RENEGED + q] == 1:
                outcome |= OUTCOME_RENEGED
            if s[S_TRICKS + q] == most:
                # a reneging top scorer forfeits the pot, which then stays
                outcome |= OUTCOME_TIED if n_most > 1 else (0 if s[S_RENEGED + q] == 1 else OUTCOME_WON)
            s[S_OUTCOME + q] = outcome
    # the payments follow from the outcomes alone
    sharers = 0  # a reneging tied player cannot take a share of the pot
    for q in range(n):
        if s[S_OUTCOME + q] & (OUTCOME_WON | OUTCOME_TIED) and not s[S_OUTCOME + q] & OUTCOME_RENEGED:
            sharers += 1
    if n_most == 1 or p[P_TIE_DIVIDE]:
        if sharers > 0:
            cut = _rake(p, stake)
            share_total = stake - cut
            share = share_total // sharers
            odd = share_total - share * sharers  # to the first sharer left of the dealer
            s[S_POT] -= stake
            s[S_RAKE_TOTAL] += cut
            first = True
            for k in range(1, n + 1):
                q = (s[S_DEALER] + k) % n
                if s[S_OUTCOME + q] & (OUTCOME_WON | OUTCOME_TIED) and not s[S_OUTCOME + q] & OUTCOME_RENEGED:
                    s[S_REWARD + q] += share + (odd if first else 0)
                    first = False
    else:
        for q in range(n):
            if s[S_OUTCOME + q] & OUTCOME_TIED:
                s[S_EXEMPT + q] = 1
    for q in range(n):
        if s[S_OUTCOME + q] & (OUTCOME_BOURRE | OUTCOME_RENEGED):
            # a renege costs renege_multiple times the pot (four_card: "twice the pot"), instead of the bourré
            penalty = stake * (p[P_RENEGE_MULT] if s[S_OUTCOME + q] & OUTCOME_RENEGED else 1)
            s[S_REWARD + q] -= penalty
            s[S_POT] += penalty
            s[S_EXEMPT + q] = 1
    for q in range(n):
        s[S_CHIPS + q] += s[S_REWARD + q]
    s[S_DEALS_DONE] += 1
    s[S_CUR] = -1
    s[S_PHASE] = GAME_OVER if s[S_DEAL_NO] + 1 >= p[P_DEALS] else DEAL_OVER


# ================================================================ one decision
@njit(cache=True)
def legal_actions(s: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """Fill ``out`` (int8, NUM_ACTIONS) with the legal-action mask of the seat to act."""
    out[:] = 0
    phase = s[S_PHASE]
    if phase == DECIDE:
        decide_mask(s, p, out)
    elif phase == DECLARE:
        declare_mask(s, p, out)
    elif phase == SECOND_PASS:
        second_pass_mask(s, p, out)
    elif phase == NAME_TRUMP:
        for suit in range(4):
            out[NAME_TRUMP_BASE + suit] = 1
    elif phase == PLAY:
        legal = play_legal(s, p, s[S_CUR], True)
        while legal:
            c = lowest_card(legal)
            legal &= legal - 1
            out[c] = 1


@njit(cache=True)
def step(s: np.ndarray, p: np.ndarray, action: int) -> bool:
    """Apply the action of the seat to act. Returns False, changing nothing, if the action is illegal.

    With ``illegal_action="renege"`` a card of the hand that the rules forbid is played as a renege.
    """
    phase = s[S_PHASE]
    if phase == DECIDE:
        if action < PASS or action >= NUM_ACTIONS:
            return False
        seat = s[S_CUR]
        if action == PASS:
            if not may_pass(s, p):
                return False
        elif not (may_play(s, p) and stay_allowed(s, p, seat, action - STAY_BASE)):
            return False
        s[S_MOVES] += 1
        _apply_decide(s, p, action)
        return True
    if phase == DECLARE:
        if not (action == DECLARE_PLAY and may_play(s, p)) and not (action == PASS and may_pass(s, p)):
            return False
        s[S_MOVES] += 1
        _apply_declare(s, p, action)
        return True
    if phase == NAME_TRUMP:
        if action < NAME_TRUMP_BASE or action >= NAME_TRUMP_BASE + 4:
            return False
        s[S_MOVES] += 1
        _apply_name_trump(s, p, action)
        return True
    if phase == SECOND_PASS:
        if action != PASS and action != SECOND_STAY:
            return False
        s[S_MOVES] += 1
        _apply_second_pass(s, p, action)
        return True
    if phase == PLAY:
        if action < 0 or action >= NUM_CARDS:
            return False
        seat = s[S_CUR]
        if not (s[S_HAND + seat] >> action) & 1:
            return False
        legal = play_legal(s, p, seat, True)
        if not (legal >> action) & 1 and not p[P_RENEGE]:
            return False
        play_card(s, p, action, legal)
        return True
    return False


@njit(cache=True)
def play_card(s: np.ndarray, p: np.ndarray, card: int, legal: int) -> None:
    """Trick play without the checks of ``step``: the seat to act plays ``card`` of its hand, ``legal`` being
    its ``play_legal`` mask (a card outside it is a renege). For callers that drew ``card`` from ``legal``
    themselves (the batch API's random play), so that the legal cards are not worked out twice."""
    s[S_MOVES] += 1
    _apply_play(s, p, card, legal)


# ================================================================ cinch
@njit(cache=True)
def unseen_cards(s: np.ndarray, p: np.ndarray, seat: int) -> int:
    """Cards of the deck whose place ``seat`` does not know (opponents' hands, stock, passed hands, discards).

    The turned card is seen (in the dealer's hand, dead, played, or laid down with a passed dealer's hand)
    until a reshuffle puts a passed dealer's turned card back into the stock.
    """
    known = s[S_HAND + seat] | s[S_PLAYED] | s[S_KNOWN_OUT + seat]
    if s[S_FACE_RESHUFFLED] == 0:
        known |= face_bit(s)
    return p[P_DECK_MASK] & ~known


@njit(cache=True)
def proven_absent(s: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """Fill ``out[q]`` with the cards that seat ``q``'s plays to tricks this deal prove it does not hold.

    A legal play proves that the player held none of the cards the ordinary rules would have required
    instead (``_forbidden_after``: a void in the suit led, no card that beats, trumps or overtrumps when
    one was due, no honour behind a non-honour lead with ``lead_trump_honors``). A hand only loses
    cards during trick play, so what was absent then is absent now. ``_apply_play`` gathers this play
    by play (``S_ABSENT``). With ``illegal_action="renege"`` a play may have been a renege and proves
    nothing.
    """
    renege = p[P_RENEGE] == 1
    for q in range(MAX_PLAYERS):
        out[q] = 0 if renege else s[S_ABSENT + q]


@njit(cache=True)
def trump_lower_bound(hand: int, trump: int, killers: int) -> int:
    """Tricks the hand's trumps win whatever happens: each killer (higher trump) can beat at most one of them.

    The sets of killers above each of our trumps are nested, so a greedy matching from the top is maximum.
    """
    trumps = hand & suit_mask(trump)
    m = 0
    beaten = 0
    while trumps:
        c = highest_card(trumps)
        trumps &= ~_bit(c)
        m += 1
        if popcount(killers & above_mask(c)) > beaten:
            beaten += 1
    return m - beaten


@njit(cache=True)
def has_cinch(s: np.ndarray, p: np.ndarray, seat: int) -> bool:
    """The cinch (docs/rules.md): tricks won plus tricks certain to be won from now on is at least 3.

    Certain means: in every placement of the cards ``seat`` has not seen (among the other playing
    seats, respecting their hand sizes and the dealer's kept face-up card, or out of play) that is
    consistent with what the opponents' earlier plays prove (``proven_absent``), and every
    continuation that the ordinary rules of trick play allow to anyone, ``seat`` included. A card
    a reshuffle may have put back into play is unseen (``unseen_cards``). Cheap
    bounds settle almost every position; the rest is an exact search for a continuation in which
    ``seat`` ends with fewer tricks (``_cinch_search``).
    """
    if s[S_PHASE] != PLAY or s[S_DECISION + seat] != PLAYING:
        return False
    key = s[S_MOVES] * MAX_PLAYERS + seat + 1
    if s[S_CINCH_KEY] == key:
        return s[S_CINCH_VAL] == 1
    answer = _cinch_uncached(s, p, seat)
    s[S_CINCH_KEY] = key
    s[S_CINCH_VAL] = 1 if answer else 0
    return answer


@njit(cache=True)
def _cinch_uncached(s: np.ndarray, p: np.ndarray, seat: int) -> bool:
    won = s[S_TRICKS + seat]
    need = CINCH_TRICKS - won
    if need <= 0:
        return True
    n = _n(p)
    hand = s[S_HAND + seat]
    t = s[S_TRICK_NO]
    row = S_TRICK_CARDS + t * MAX_PLAYERS
    played_now = s[row + seat] >= 0
    if popcount(hand) + (1 if played_now else 0) < need:
        return False
    trump = s[S_TRUMP]
    pool = unseen_cards(s, p, seat)
    face_held = face_bit(s) if _face_held_by_other(s, seat) else np.int64(0)
    trick = s[row: row + MAX_PLAYERS]
    # The bound against every unseen card settles most positions; only if it fails is it worth working out what
    # the earlier plays prove (fewer cards the opponents may hold can only add sure tricks).
    if sure_tricks(hand, trick, s[S_LEADER], n, seat, s[S_LED], trump, pool | face_held) >= need:
        return True
    # one allocation: the single paths' scratch (rows 0-4, see ``_probe``), the node budget (row 5) and
    # the cards each seat's earlier plays prove it does not hold (row 6)
    w = np.empty((7, MAX_PLAYERS), dtype=np.int64)
    absent = w[6]
    proven_absent(s, p, absent)
    others = face_held  # the unseen cards that some opponent may hold
    for q in range(n):
        if q != seat and s[S_DECISION + q] == PLAYING:
            others |= pool & ~absent[q]
    if others != pool | face_held and sure_tricks(hand, trick, s[S_LEADER], n, seat, s[S_LED], trump,
                                                  others) >= need:
        return True
    return not _cinch_search(s, p, seat, pool, need, w)


@njit(cache=True)
def _face_held_by_other(s: np.ndarray, seat: int) -> bool:
    """The turned card is known to be in another playing seat's hand (a passed dealer laid it down)."""
    dealer = s[S_DEALER]
    return s[S_FACE_STATE] == FACE_IN_HAND and dealer != seat and s[S_DECISION + dealer] == PLAYING


@njit(cache=True)
def sure_tricks(hand: int, trick: np.ndarray, leader: int, n: int, me: int, led: int, trump: int, others: int) -> int:
    """A lower bound on the tricks ``me`` takes from now on, whatever the others hold (within ``others``).

    Our trumps are matched against the higher trumps that could beat them; a trick under way adds
    its best trump as one more possible killer of the card we have yet to play to it, or, when we
    already played to it, our card counts if it is winning and nothing the others may hold beats it.
    """
    mine = trick[me]
    best_trump = -1
    for q in range(n):
        c = trick[q]
        if c >= 0 and c // 13 == trump and c > best_trump:
            best_trump = c
    if mine < 0:
        killers = others | (_bit(best_trump) if best_trump >= 0 else np.int64(0))
        return trump_lower_bound(hand, trump, killers)
    bound = trump_lower_bound(hand, trump, others)
    if trick_winner(trick, leader, n, trump) == me:
        tmask = suit_mask(trump)
        if mine // 13 == trump:
            safe = (others & tmask & above_mask(mine)) == 0
        else:
            safe = (others & tmask) == 0 and (others & above_mask(mine)) == 0
        if safe:
            bound += 1
    return bound


# ---------------------------------------------------------------- single-path rounds
# ``_cinch_search`` first runs ``NUM_PROBE_POLICIES`` rounds without discrepancy, one path each, and
# nearly always stops in the first: a counterexample lies on the path its move ordering takes first
# (about 98% of searches at 5 players, 93% at 7). The generic machinery of ``_search_round`` (a frame
# per play, full option lists sorted at each node) made these paths cost most of the time of a random
# decision, so ``_probe`` walks the same path in place: the same node tests in the same order, the
# play the sorted option list would put first, the same consistency checks. Such a round enters only
# the nodes of its path: after the first child of a node fails, the next option would be one
# discrepancy, so it is cut if there is one, and the round backtracks without entering another node.
# So its outcome (found, exhausted where no node on the path had a second option, else cut) and the
# budget it spends (one per node entered) follow from the path alone, and ``_probe`` returns both
# exactly as ``_search_round(max_disc=0, policy)`` would. ``tests/test_cinch_speed.py`` holds both to
# the search as it was, round by round, on every searched position of its sweeps.


@njit(cache=True)
def _probe(s: np.ndarray, p: np.ndarray, me: int, pool: int, need: int, policy: int, w: np.ndarray,
           budget: np.ndarray) -> int:
    """``_search_round(max_disc=0, policy)`` from the root, in place: 1 found, 0 exhausted, 2 cut, 3 out of budget.

    Mirrors ``_search_round`` step for step (node tests, then the play ``_options`` would sort first,
    then the consistency checks), spending ``budget`` as it does. What the search recomputes from the
    trick at every node (its best cards, who is winning it) is kept up to date play by play instead.
    ``w`` is scratch with at least 5 rows of MAX_PLAYERS, and row 6 holds what earlier plays proved
    (``proven_absent``).
    """
    n = _n(p)
    trick = w[0]
    count = w[1]
    forbid = w[2]
    known = w[3]
    nxt = w[4]  # the next playing seat after each playing seat
    absent = w[6]
    t = s[S_TRICK_NO]
    row = S_TRICK_CARDS + t * MAX_PLAYERS
    nactive = 0
    for q in range(MAX_PLAYERS):
        trick[q] = s[row + q] if q < n else -1
        count[q] = 0
        forbid[q] = absent[q] if q != me else 0
        known[q] = 0
    for q in range(n):
        if s[S_DECISION + q] == PLAYING:
            nactive += 1
            nxt[q] = next_active(s, n, q)
            if q != me:
                count[q] = popcount(s[S_HAND + q])
    known_all = np.int64(0)  # the union of ``known``
    if _face_held_by_other(s, me):
        known_all = face_bit(s)
        known[s[S_DEALER]] = known_all
    gone = _gone_for(s, p, me)
    hand = s[S_HAND + me]
    mine = 0
    leader = s[S_LEADER]
    nplayed = s[S_NPLAYED]
    seat = s[S_CUR]
    led = s[S_LED]
    trump = s[S_TRUMP]
    h = p[P_HAND_SIZE]
    must_trump = p[P_MUST_TRUMP] == 1
    lead_honors = p[P_LEAD_HONORS] == 1
    best_led, best_trump = _bests(trick, n, led, trump)
    winning = trick_winner(trick, leader, n, trump) if nplayed > 0 else -1  # the seat winning the trick so far
    depth = 0
    cut = False  # a node on the path had a second option: the round would cut it
    while True:
        budget[0] -= 1
        if budget[0] <= 0:
            return 3
        if nplayed == nactive:
            if winning == me:
                mine += 1
            if mine >= need:
                return 2 if cut else 0
            if t + 1 == h:
                return 1
            trick[:] = -1
            leader = winning
            nplayed = 0
            seat = winning
            led = -1
            best_led = -1
            best_trump = -1
            winning = -1
            t += 1
        in_trick = 1 if trick[me] >= 0 else 0
        if mine + popcount(hand) + in_trick < need and _hands_completable(pool, count, forbid, known, n, me):
            return 1
        # the search's sound prune; ``sure_tricks`` counts at most our trumps and our card in this trick,
        # so it is skipped when those cannot reach ``need``
        leading = nplayed == 0
        if (mine + popcount(hand & suit_mask(trump)) + in_trick >= need
                and mine + sure_tricks(hand, trick, leader, n, me, led, trump, pool | known_all) >= need) or (
                leading and seat == me and mine + popcount(hand) >= need
                and _all_sure_leads(hand, pool | known_all, trump)):
            return 2 if cut else 0
        if seat == me:
            options = ordinary_plays(hand, leading, led, best_led, best_trump, trump, must_trump, lead_honors)
            cut = cut or popcount(options) > 1
            c = _strongest(options, trump)
            hand &= ~_bit(c)
        else:
            kn = known[seat]
            free = count[seat] - popcount(kn)
            allowed = pool & ~forbid[seat] if free > 0 else np.int64(0)
            cand = kn | _run_representatives(allowed, pool | gone | kn, hand)
            mine_winning = in_trick == 1 and not leading and winning == me
            c = _first_option(cand, pool, in_trick == 1, mine_winning, leading, led, best_led, best_trump, trump,
                              must_trump, lead_honors, policy, depth)
            cut = cut or popcount(cand) > 1
            if c < 0:
                return 2 if cut else 0
            extra = _forbidden_after(c, leading, led, best_led, best_trump, trump, must_trump, lead_honors)
            if (kn & ~_bit(c)) & extra:
                return 2 if cut else 0
            free_after = count[seat] - popcount(kn) - (0 if (kn >> c) & 1 else 1)
            new_pool = pool & ~_bit(c)
            new_forbid = forbid[seat] | extra
            if popcount(new_pool & ~new_forbid) < free_after:
                return 2 if cut else 0
            pool = new_pool
            forbid[seat] = new_forbid
            known[seat] = kn & ~_bit(c)
            known_all &= ~_bit(c)
            count[seat] -= 1
        # the trick so far, as ``_bests`` and ``trick_winner`` would find it
        if leading:
            led = c // 13
            winning = seat
        elif _beats(c, led, best_led, best_trump, trump):
            winning = seat
        if c // 13 == led and c > best_led:
            best_led = c
        if c // 13 == trump and c > best_trump:
            best_trump = c
        trick[seat] = c
        nplayed += 1
        seat = nxt[seat]
        depth += 1


@njit(cache=True)
def _strongest(options: int, trump: int) -> int:
    """The play ``_options`` sorts first for ``me``: greatest ``_strength``, the lowest card id among equals."""
    trumps = options & suit_mask(trump)
    if trumps:
        return highest_card(trumps)
    best = -1
    for suit in range(4):
        x = options & suit_mask(suit)
        if x:
            c = highest_card(x)
            if best < 0 or c % 13 > best % 13:
                best = c
    return best


@njit(cache=True)
def _first_option(cand: int, pool: int, mine_played: bool, mine_winning: bool, leading: bool, led: int,
                  best_led: int, best_trump: int, trump: int, must_trump: bool, lead_honors: bool, policy: int,
                  depth: int) -> int:
    """The opponent's play ``_options`` sorts first (least key, the lowest card id among equals); -1 if none.

    The keys are ``_options``'s. Policies 0 and 1 key a card by the constraints its play adds and
    its beating the trick, both the same for every card of one suit on one side of a cut (the card
    to beat, or the trump honours on a lead), plus or minus its strength: so the least key of such
    a part is at its highest or its lowest card, and only those two need a key (``_part_champion``).
    Two cases need fewer: a lead beats and, but for honours still unseen under ``lead_honors``, adds
    no constraint that counts, so every key is minus the strength; and when following, policy 0
    keys any card off the suit led at least 64 per unseen card of that suit it proves absent, less
    the greatest strength (and 100000 where ours is winning), so those suits are skipped when the
    suit led already gave a smaller key. The shuffled policies key every card.
    """
    best = -1
    best_key = 0
    if policy >= 2:
        while cand:
            c = lowest_card(cand)
            cand &= cand - 1
            key = _option_key(c, pool, mine_played, mine_winning, leading, led, best_led, best_trump, trump,
                              must_trump, lead_honors, policy, depth)
            if best < 0 or key < best_key:
                best = c
                best_key = key
        return best
    if leading and (not lead_honors or (pool & honors_mask(trump)) == 0):
        return _strongest(cand, trump) if cand else -1
    for i in range(4):
        suit = i if leading else (led + i) % 4  # when following, the suit led first
        if i == 1 and not leading and policy == 0 and best >= 0:
            # the least key a card off the suit led can have
            floor = 64 * popcount(pool & suit_mask(led)) - _strength(13 * trump + ACE, trump)
            if mine_winning:
                floor -= 100000
            if best_key < floor:
                return best
        x = cand & suit_mask(suit)
        if x == 0:
            continue
        split = -1  # the card above which this suit's extra constraints and beating may change
        if leading:
            if suit == trump:
                split = 13 * trump + QUEEN - 1  # above it: the honours (Q, K, A)
        elif suit == led and (led == trump or best_trump < 0):
            split = best_led
        elif suit == trump:
            split = best_trump
        hi = x & above_mask(split) if split >= 0 else x
        for part in (hi, x & ~hi):
            if part == 0:
                continue
            c = _part_champion(part, mine_played, leading, led, best_led, best_trump, trump)
            key = _option_key(c, pool, mine_played, mine_winning, leading, led, best_led, best_trump, trump,
                              must_trump, lead_honors, policy, depth)
            if best < 0 or key < best_key or (key == best_key and c < best):
                best = c
                best_key = key
    return best


@njit(cache=True)
def _part_champion(part: int, mine_played: bool, leading: bool, led: int, best_led: int, best_trump: int,
                   trump: int) -> int:
    """The card of ``part`` (one suit, cards alike in constraints and in beating) with the least key under
    policies 0 and 1: the strongest where the key subtracts strength (a card that beats, before ours), else
    the weakest."""
    c = lowest_card(part)
    if not mine_played and (leading or _beats(c, led, best_led, best_trump, trump)):
        return highest_card(part)
    return c


@njit(cache=True)
def _option_key(c: int, pool: int, mine_played: bool, mine_winning: bool, leading: bool, led: int, best_led: int,
                best_trump: int, trump: int, must_trump: bool, lead_honors: bool, policy: int, depth: int) -> int:
    """The search's sort key of an opponent's play ``c`` (the least is tried first)."""
    extra = _forbidden_after(c, leading, led, best_led, best_trump, trump, must_trump, lead_honors)
    # Fewest new constraints first. Before our card, play high (we may have to play under it);
    # after it, beat it as cheaply as possible, or else play low and keep the high cards.
    beats = leading or _beats(c, led, best_led, best_trump, trump)
    key = 64 * popcount(extra & pool) if policy != 1 or beats else 0
    if not mine_played and beats:
        key -= _strength(c, trump)
    else:
        key += _strength(c, trump)
        if mine_winning and beats:
            key -= 100000
    if policy >= 2:
        key = _mix(policy * 1000003 + depth * 101 + c) % 4096
        if mine_winning and beats:
            key -= 100000
    return key


@njit(cache=True)
def _gone_for(s: np.ndarray, p: np.ndarray, me: int) -> int:
    """Cards ``me`` knows are out of every hand: played, absent from the deck, own known discards, a dead face card,
    a passed dealer's turned card that no reshuffle has put back into the stock."""
    gone = s[S_PLAYED] | ~p[P_DECK_MASK] | s[S_KNOWN_OUT + me]
    if s[S_FACE_STATE] == FACE_DEAD or (s[S_FACE_STATE] == FACE_IN_HAND and s[S_DECISION + s[S_DEALER]] == PASSED
                                        and s[S_FACE_RESHUFFLED] == 0):
        gone |= face_bit(s)
    return gone


@njit(cache=True)
def _cinch_search(s: np.ndarray, p: np.ndarray, me: int, pool: int, need: int, w: np.ndarray) -> bool:
    """True if some consistent placement and legal continuation leaves ``me`` with fewer than ``need`` more tricks.

    Depth-first over every play from now to the end of the deal. ``me``'s cards are known; an
    opponent's hand is the cards it will play, so each opponent card is drawn from the unseen pool
    when played, and everything its play proves it did not hold (a void, no higher card of the
    suit, no trump) is forbidden for its later plays. A branch that reaches the end of the deal is
    therefore a complete, consistent deal. Iterative with an explicit stack (numba cannot cache
    recursive functions). ``w`` is ``_cinch_uncached``'s scratch, its row 6 filled by ``proven_absent``.
    """
    budget = w[5]
    budget[0] = p[P_CINCH_BUDGET]
    # Limited discrepancy search: the move ordering is usually right, so first try the paths that
    # leave it at most ``k`` times, then ``k + 1``... A round that cut no branch was exhaustive.
    # After the first single path, a few more under other orderings: a counterexample is usually
    # plentiful, and one ordering's blind spot (e.g. every opponent spending a trump on our ace) is
    # rarely another's. The single paths are walked in place (``_probe``, see above).
    result = 2
    for policy in range(NUM_PROBE_POLICIES):
        result = _probe(s, p, me, pool, need, policy, w, budget)
        if result != 2:
            break
    if result == 2:
        result = _discrepancy_rounds(s, p, me, pool, need, budget, w[6])
    s[S_CINCH_SEARCHES] += 1
    s[S_CINCH_NODES] += p[P_CINCH_BUDGET] - budget[0]
    if result == 3:
        # Out of budget: no proof either way. Report a counterexample, i.e. no cinch, so that an
        # unproven cinch never forces a player's hand (documented in the README; counted for tests).
        s[S_CINCH_ABORTS] += 1
        return True
    return result == 1


@njit(cache=True)
def _discrepancy_rounds(s: np.ndarray, p: np.ndarray, me: int, pool: int, need: int, budget: np.ndarray,
                        absent: np.ndarray) -> int:
    """The rounds of ``_cinch_search`` after its single paths: ``_search_round`` with at most 1, then 2
    discrepancies, then without limit, until one is not cut. Returns that round's code."""
    n = _n(p)
    # one frame per play left in the deal, plus the root
    depth_max = (p[P_HAND_SIZE] - s[S_TRICK_NO]) * s[S_NACTIVE] + 2
    # One allocation for the whole search: frames of scalars (hand, pool, mine, leader, nplayed,
    # seat, led, t), per-seat arrays and option lists, plus scratch for sorting the options.
    m8 = depth_max * MAX_PLAYERS
    ws = np.empty(5 * m8 + depth_max * NUM_CARDS + 3 * depth_max + MAX_PLAYERS + 2 * NUM_CARDS, dtype=np.int64)
    fs = ws[0:m8].reshape((depth_max, 8))
    trick = ws[m8:2 * m8].reshape((depth_max, MAX_PLAYERS))
    count = ws[2 * m8:3 * m8].reshape((depth_max, MAX_PLAYERS))
    forbid = ws[3 * m8:4 * m8].reshape((depth_max, MAX_PLAYERS))
    known = ws[4 * m8:5 * m8].reshape((depth_max, MAX_PLAYERS))
    at = 5 * m8
    opts = ws[at:at + depth_max * NUM_CARDS].reshape((depth_max, NUM_CARDS))
    at += depth_max * NUM_CARDS
    nopt = ws[at:at + depth_max]
    idx = ws[at + depth_max:at + 2 * depth_max]
    disc = ws[at + 2 * depth_max:at + 3 * depth_max]
    at += 3 * depth_max
    active = ws[at:at + MAX_PLAYERS]
    scratch = ws[at + MAX_PLAYERS:].reshape((2, NUM_CARDS))
    trick[0, :] = -1
    count[0, :] = 0
    for q in range(MAX_PLAYERS):
        forbid[0, q] = absent[q] if q != me else 0
    known[0, :] = 0
    active[:] = 0
    disc[0] = 0
    t0 = s[S_TRICK_NO]
    row = S_TRICK_CARDS + t0 * MAX_PLAYERS
    nactive = 0
    for q in range(n):
        trick[0, q] = s[row + q]
        if s[S_DECISION + q] == PLAYING:
            active[q] = 1
            nactive += 1
            if q != me:
                count[0, q] = popcount(s[S_HAND + q])
    if _face_held_by_other(s, me):
        known[0, s[S_DEALER]] = face_bit(s)
    gone = _gone_for(s, p, me)
    fs[0, 0] = s[S_HAND + me]
    fs[0, 1] = pool
    fs[0, 2] = 0
    fs[0, 3] = s[S_LEADER]
    fs[0, 4] = s[S_NPLAYED]
    fs[0, 5] = s[S_CUR]
    fs[0, 6] = s[S_LED]
    fs[0, 7] = t0
    trump = s[S_TRUMP]
    h = p[P_HAND_SIZE]
    must_trump = p[P_MUST_TRUMP] == 1
    lead_honors = p[P_LEAD_HONORS] == 1
    # Two rounds of growing discrepancy, then one exhaustive round: a cinch can only be proven
    # by exhausting the tree, and each further round would re-explore all the previous ones.
    result = 2
    k = 1
    while result == 2:
        result = _search_round(fs, trick, count, forbid, known, opts, nopt, idx, disc, active, nactive, p, n, me,
                               gone, trump, h, need, must_trump, lead_honors, k, 0, budget, scratch)
        k = k + 1 if k < 2 else 1 << 30
    return result


@njit(cache=True)
def _search_round(fs: np.ndarray, trick: np.ndarray, count: np.ndarray, forbid: np.ndarray, known: np.ndarray,
                  opts: np.ndarray, nopt: np.ndarray, idx: np.ndarray, disc: np.ndarray, active: np.ndarray,
                  nactive: int, p: np.ndarray, n: int, me: int, gone: int, trump: int, h: int, need: int,
                  must_trump: bool, lead_honors: bool, max_disc: int, policy: int, budget: np.ndarray,
                  scratch: np.ndarray) -> int:
    """One round of the search from frame 0. Returns 1 found, 0 exhausted, 2 cut by ``max_disc``, 3 out of budget."""
    d = 0
    cut = False
    entering = True
    while True:
        if entering:
            entering = False
            budget[0] -= 1
            if budget[0] <= 0:
                return 3
            # a completed trick resolves without a choice
            if fs[d, 4] == nactive:
                winner = trick_winner(trick[d], fs[d, 3], n, trump)
                if winner == me:
                    fs[d, 2] += 1
                if fs[d, 2] >= need:
                    d -= 1
                    if d < 0:
                        return 2 if cut else 0
                    continue
                if fs[d, 7] + 1 == h:
                    return 1
                trick[d, :] = -1
                fs[d, 3] = winner
                fs[d, 4] = 0
                fs[d, 5] = winner
                fs[d, 6] = -1
                fs[d, 7] += 1
            # Early success: even winning every trick left cannot reach ``need``, and the opponents' hands
            # can still be completed from the cards each may hold (then every completion can be played out).
            if fs[d, 2] + popcount(fs[d, 0]) + (1 if trick[d, me] >= 0 else 0) < need and _hands_completable(
                    fs[d, 1], count[d], forbid[d], known[d], n, me):
                return 1
            # sound prune: the tricks we are sure of already reach ``need`` against every card still unseen
            # (``sure_tricks`` counts at most our trumps and our card in this trick: skipped when those cannot)
            others = fs[d, 1]
            for q in range(n):
                others |= known[d, q]
            in_trick = 1 if trick[d, me] >= 0 else 0
            mine = fs[d, 2]
            if (mine + popcount(fs[d, 0] & suit_mask(trump)) + in_trick >= need
                    and mine + sure_tricks(fs[d, 0], trick[d], fs[d, 3], n, me, fs[d, 6], trump, others) >= need) or (
                    fs[d, 4] == 0 and fs[d, 5] == me and fs[d, 2] + popcount(fs[d, 0]) >= need
                    and _all_sure_leads(fs[d, 0], others, trump)):
                d -= 1
                if d < 0:
                    return 2 if cut else 0
                continue
            nopt[d] = _options(p, n, me, fs[d], trick[d], count[d], forbid[d], known[d], gone, trump,
                               must_trump, lead_honors, policy, d, opts[d], scratch)
            idx[d] = 0
        if idx[d] == nopt[d]:
            d -= 1
            if d < 0:
                return 2 if cut else 0
            continue
        c = opts[d, idx[d]]
        child_disc = disc[d] + (1 if idx[d] > 0 else 0)
        idx[d] += 1
        if child_disc > max_disc:
            cut = True
            idx[d] = nopt[d]  # later options only deviate more
            continue
        seat = fs[d, 5]
        leading = fs[d, 4] == 0
        led = c // 13 if leading else fs[d, 6]
        for k in range(8):  # the child's frame starts as a copy (element by element: no views)
            fs[d + 1, k] = fs[d, k]
        for k in range(MAX_PLAYERS):
            trick[d + 1, k] = trick[d, k]
            count[d + 1, k] = count[d, k]
            forbid[d + 1, k] = forbid[d, k]
            known[d + 1, k] = known[d, k]
        if seat == me:
            fs[d + 1, 0] = fs[d, 0] & ~_bit(c)
        else:
            best_led, best_trump = _bests(trick[d], n, fs[d, 6], trump)
            extra = _forbidden_after(c, leading, fs[d, 6], best_led, best_trump, trump, must_trump, lead_honors)
            kn = known[d, seat]
            if (kn & ~_bit(c)) & extra:
                continue
            free_after = count[d, seat] - popcount(kn) - (0 if (kn >> c) & 1 else 1)
            new_pool = fs[d, 1] & ~_bit(c)
            new_forbid = forbid[d, seat] | extra
            if popcount(new_pool & ~new_forbid) < free_after:
                continue
            fs[d + 1, 1] = new_pool
            forbid[d + 1, seat] = new_forbid
            known[d + 1, seat] = kn & ~_bit(c)
            count[d + 1, seat] -= 1
        trick[d + 1, seat] = c
        fs[d + 1, 4] += 1
        fs[d + 1, 5] = next_active_arr(active, n, seat)
        fs[d + 1, 6] = led
        disc[d + 1] = child_disc
        d += 1
        entering = True


@njit(cache=True)
def _hands_completable(pool: int, count: np.ndarray, forbid: np.ndarray, known: np.ndarray, n: int, me: int) -> bool:
    """Hall's condition: every set of opponents can fill its free slots from the unseen cards it may hold."""
    seats = 0  # the opponents with free slots
    total = 0
    narrowest = NUM_CARDS
    for q in range(n):
        free = count[q] - popcount(known[q])
        if q != me and free > 0:
            seats |= 1 << q
            total += free
            narrowest = min(narrowest, popcount(pool & ~forbid[q]))
    # Shortcuts that return True only with a proof that the condition holds: every set's union holds
    # at least any one member's cards, so if even the fewest cards an opponent may hold cover all the
    # free slots together, no set can fail; and a completion found greedily proves it (Hall's theorem:
    # the condition is necessary for a completion). Otherwise every set is checked.
    if narrowest >= total or _greedy_completion(pool, count, forbid, known, seats, n):
        return True
    subset = seats
    while subset:  # every non-empty subset of ``seats``
        union = np.int64(0)
        slots = 0
        for q in range(n):
            if (subset >> q) & 1:
                union |= pool & ~forbid[q]
                slots += count[q] - popcount(known[q])
        if popcount(union) < slots:
            return False
        subset = (subset - 1) & seats
    return True


@njit(cache=True)
def _greedy_completion(pool: int, count: np.ndarray, forbid: np.ndarray, known: np.ndarray, seats: int,
                       n: int) -> bool:
    """True if dealing the free slots of ``seats`` in seat order succeeds, each seat taking first the cards that
    no later seat may hold (a sufficient test for ``_hands_completable``; False proves nothing)."""
    used = np.int64(0)
    for q in range(n):
        if not (seats >> q) & 1:
            continue
        avail = pool & ~forbid[q] & ~used
        free = count[q] - popcount(known[q])
        if popcount(avail) < free:
            return False
        later = np.int64(0)
        for r in range(q + 1, n):
            if (seats >> r) & 1:
                later |= pool & ~forbid[r]
        take = _lowest_cards(avail & ~later, free)
        used |= take | _lowest_cards(avail & ~take, free - popcount(take))
    return True


@njit(cache=True)
def _lowest_cards(mask: int, k: int) -> int:
    """The ``k`` lowest cards of ``mask`` (all of them if it holds fewer)."""
    out = np.int64(0)
    for _ in range(k):
        if mask == 0:
            break
        low = mask & -mask
        out |= low
        mask &= ~low
    return out


@njit(cache=True)
def _all_sure_leads(hand: int, others: int, trump: int) -> bool:
    """Every card of ``hand`` wins when led against the cards ``others`` may hold; on lead, we then keep it."""
    trumps_out = (others & suit_mask(trump)) != 0
    x = hand
    while x:
        c = lowest_card(x)
        x &= x - 1
        if others & above_mask(c):
            return False
        if c // 13 != trump and trumps_out:
            return False
    return True


@njit(cache=True)
def _bests(trick: np.ndarray, n: int, led: int, trump: int) -> tuple[int, int]:
    best_led = -1
    best_trump = -1
    for q in range(n):
        c = trick[q]
        if c >= 0:
            if c // 13 == led and c > best_led:
                best_led = c
            if c // 13 == trump and c > best_trump:
                best_trump = c
    return best_led, best_trump


@njit(cache=True)
def _options(p: np.ndarray, n: int, me: int, fs: np.ndarray, trick: np.ndarray, count: np.ndarray,
             forbid: np.ndarray, known: np.ndarray, gone: int, trump: int, must_trump: bool,
             lead_honors: bool, policy: int, depth: int, out: np.ndarray, scratch: np.ndarray) -> int:
    """The plays to try at a search node, most promising for the adversary first; returns how many.

    ``policy`` 0 is the main ordering; 1 lets opponents that cannot take the trick go void rather than
    spend a useful card; 2 and up shuffle the order with a hash of the policy, depth and card.
    """
    seat = fs[5]
    leading = fs[4] == 0
    led = fs[6]
    best_led, best_trump = _bests(trick, n, led, trump)
    if seat == me:
        options = ordinary_plays(fs[0], leading, led, best_led, best_trump, trump, must_trump, lead_honors)
        k = 0
        keys = scratch[0]
        while options:
            c = lowest_card(options)
            options &= options - 1
            out[k] = c
            # Our strongest cards first, while the opponents still hold every card that could beat them.
            keys[k] = -_strength(c, trump)
            k += 1
    else:
        kn = known[seat]
        free = count[seat] - popcount(kn)
        allowed = fs[1] & ~forbid[seat] if free > 0 else np.int64(0)
        cand = kn | _run_representatives(allowed, fs[1] | gone | kn, fs[0])
        my_card = trick[me]
        mine_winning = False
        if my_card >= 0 and not leading:
            mine_winning = trick_winner(trick, fs[3], n, trump) == me
        k = 0
        keys = scratch[0]
        while cand:
            c = lowest_card(cand)
            cand &= cand - 1
            out[k] = c
            keys[k] = _option_key(c, fs[1], my_card >= 0, mine_winning, leading, led, best_led, best_trump, trump,
                                  must_trump, lead_honors, policy, depth)
            k += 1
    # stable insertion sort by key: lists are short
    for i in range(1, k):
        key = keys[i]
        c = out[i]
        j = i - 1
        while j >= 0 and keys[j] > key:
            keys[j + 1] = keys[j]
            out[j + 1] = out[j]
            j -= 1
        keys[j + 1] = key
        out[j + 1] = c
    return k


@njit(cache=True)
def _mix(x: int) -> int:
    """A cheap deterministic integer hash (for the shuffled probe orderings)."""
    z = np.uint64(x) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(29))) * np.uint64(0xBF58476D1CE4E5B9)
    return np.int64((z ^ (z >> np.uint64(32))) >> np.uint64(1))


@njit(cache=True)
def _beats(c: int, led: int, best_led: int, best_trump: int, trump: int) -> bool:
    """Whether ``c`` would become the winning card of a trick with these best cards."""
    if c // 13 == trump:
        return c > best_trump
    return best_trump < 0 and c // 13 == led and c > best_led


@njit(cache=True)
def _forbidden_after(card: int, leading: bool, led: int, best_led: int, best_trump: int,
                     trump: int, must_trump: bool, lead_honors: bool) -> int:
    """Cards a player cannot hold if playing ``card`` was legal (the cards that would have been required instead)."""
    csuit = card // 13
    tmask = suit_mask(trump)
    if leading:
        if lead_honors and not (honors_mask(trump) >> card) & 1:
            return honors_mask(trump)
        return 0
    lmask = suit_mask(led)
    if csuit == led:
        if led == trump or best_trump < 0:
            beat = lmask & above_mask(best_led)
            if (beat >> card) & 1:
                return 0
            return beat
        return 0
    over = tmask & above_mask(best_trump) if best_trump >= 0 else tmask
    if csuit == trump:
        if (over >> card) & 1:
            return lmask
        return lmask | over
    if must_trump:
        return lmask | tmask
    return lmask | over


@njit(cache=True)
def next_active_arr(active: np.ndarray, n: int, seat: int) -> int:
    for k in range(1, n + 1):
        q = (seat + k) % n
        if active[q]:
            return q
    return -1


@njit(cache=True)
def _run_representatives(allowed: int, passable: int, my_hand: int) -> int:
    """The highest and lowest card of each run of ``allowed`` cards in a suit.

    Cards of one run have no card between them that anyone still holds apart from pool cards this player
    may draw, so they compare alike with every card that matters; their order among themselves only
    decides which of two unseen cards wins, and the two ends of the run cover both outcomes.
    ``passable`` holds the cards that may lie between run members (the allowed pool and cards gone from play).

    Bit-parallel: a card of a run is its highest unless an allowed card lies above it across passable
    cards only, in the same suit; filling down from the allowed cards through the passable ones marks
    every card that has one (the lowest, filling up). ``tests/test_cinch_speed.py`` holds this to the
    rank-by-rank scan it replaced on every arrangement of a suit.
    """
    allowed &= ALL_CARDS
    skip = passable & ~my_hand & ~allowed & ALL_CARDS  # cards a run passes over
    # cards with an allowed card of their run above them / below them (never across a suit's edge)
    has_higher = (_fill_down(allowed, skip & _NOT_TOP_RANK) >> 1) & _NOT_TOP_RANK
    has_lower = (_fill_up(allowed, skip & _NOT_BOTTOM_RANK) << 1) & _NOT_BOTTOM_RANK
    return allowed & ~(has_higher & has_lower)


@njit(cache=True)
def _fill_down(gen: int, pro: int) -> int:
    """``gen`` and every card reached from it going down one rank at a time through ``pro`` (Kogge-Stone fill).

    ``pro`` must not hold a suit's top rank, so that no fill crosses from one suit into the next.
    """
    gen |= pro & (gen >> 1)
    pro &= pro >> 1
    gen |= pro & (gen >> 2)
    pro &= pro >> 2
    gen |= pro & (gen >> 4)
    pro &= pro >> 4
    gen |= pro & (gen >> 8)
    return gen


@njit(cache=True)
def _fill_up(gen: int, pro: int) -> int:
    """``_fill_down`` going up; ``pro`` must not hold a suit's bottom rank."""
    gen |= pro & (gen << 1)
    pro &= pro << 1
    gen |= pro & (gen << 2)
    pro &= pro << 2
    gen |= pro & (gen << 4)
    pro &= pro << 4
    gen |= pro & (gen << 8)
    return gen


@njit(cache=True)
def _strength(c: int, trump: int) -> int:
    return (100 if c // 13 == trump else 0) + c % 13
