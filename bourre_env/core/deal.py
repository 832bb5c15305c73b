"""The deal: antes, dealing the hands and the card turned for trump, and the stock the draw takes from.

Nothing here draws random numbers on its own: the deck of a deal is an argument, and the one reshuffle
the rules allow (the stock running out during the draw) uses a 64-bit seed that is also an argument of
the deal.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core.bits import _bit, _n, lowest_card, splitmix64
from bourre_env.core.layout import (
    DECLARE,
    DRAW_OR_PASS,
    FACE_DEAD,
    FACE_IN_HAND,
    FACE_NONE,
    NAME_TRUMP,
    PENDING,
    S_ABSENT,
    S_CUR,
    S_DEAL_NO,
    S_DEALER,
    S_DECISION,
    S_DISCARDS,
    S_EXEMPT,
    S_FACE,
    S_FACE_RESHUFFLED,
    S_FACE_STATE,
    S_HAND,
    S_KNOWN_OUT,
    S_LEADER,
    S_LED,
    S_NACTIVE,
    S_NDISCARD,
    S_NPLAYED,
    S_OUTCOME,
    S_PHASE,
    S_PILE,
    S_PILE_LEN,
    S_PLAYED,
    S_POT,
    S_RENEGED,
    S_RESHUFFLES,
    S_REWARD,
    S_RNG,
    S_STAYED,
    S_STOCK,
    S_STOCK_LEN,
    S_STOCK_POS,
    S_TRICK_CARDS,
    S_TRICK_LEADER,
    S_TRICK_NO,
    S_TRICK_WINNER,
    S_TRICKS,
    S_TRUMP,
)
from bourre_env.core.rules import (
    DECLARATION_WITH_DRAW,
    MAX_HAND_SIZE,
    MAX_PLAYERS,
    P_ANTE_EXEMPTIONS,
    P_DEALER_ANTES,
    P_DECK_SIZE,
    P_DECLARATION,
    P_HAND_SIZE,
    P_TRUMP_CARD,
    TRUMP_DEALER_MAY_TAKE,
    TRUMP_NAMED,
    TRUMP_SEPARATE,
)


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
    s[S_PHASE] = DRAW_OR_PASS if p[P_DECLARATION] == DECLARATION_WITH_DRAW else DECLARE
    s[S_CUR] = (s[S_DEALER] + 1) % _n(p)


@njit(cache=True)
def draw_card(s: np.ndarray) -> int:
    if s[S_STOCK_POS] == s[S_STOCK_LEN]:
        # docs/rules.md: the acted players' discards and passed hands, shuffled, become the stock.
        k = s[S_PILE_LEN]
        rng = np.empty(1, dtype=np.int64)
        rng[0] = s[S_RNG]
        for i in range(k - 1, 0, -1):
            j = splitmix64(rng) % (i + 1)
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
    return int(c)


@njit(cache=True)
def _to_pile(s: np.ndarray, mask: int) -> None:
    while mask:
        c = lowest_card(mask)
        mask &= mask - 1
        s[S_PILE + s[S_PILE_LEN]] = c
        s[S_PILE_LEN] += 1


@njit(cache=True)
def set_pot(s: np.ndarray, pot: int) -> None:
    """Put ``pot`` chips in the pot of a dealt state (a world that rebuilds a pot it cannot deal itself)."""
    s[S_POT] = pot
