"""What the heuristic knows: the deal decoded from its observation, and where unseen cards can be in trick play.

Part of ``agents.heuristic``; nothing here reads anything but the observation vector.
"""

from __future__ import annotations

import numpy as np

from agents.heuristic.odds import (
    _BOUNDS,
    _DECODED,
    _END,
    ACE,
    ALL_CARDS,
    DECK_SIZE,
    FACE_IN_HAND,
    FULL_SUIT,
    NUM_RANKS,
    PASSED,
    PLAYING,
    SEATS,
    TRICKS,
    HeuristicParams,
    _expected_trumps,
    _field,
)
from bourre_env.observation import (
    O_DEALER,
    O_DECISION,
    O_FACE,
    O_FACE_STATUS,
    O_HAND_SIZE,
    O_LEADER,
    O_LED,
    O_NDISCARD,
    O_OPTIONS,
    O_OWN_DISCARDS,
    O_PLAYED_BY,
    O_PLAYED_IN,
    O_TRICK_NO,
    O_TRICKS,
    O_TRUMP,
)


class _Table:
    """The public state of the deal, decoded once per decision from the observation vector."""

    __slots__ = (
        "hand",
        "trump",
        "face",
        "face_status",
        "dealer",
        "n",
        "decision",
        "discards",
        "tricks",
        "played",
        "trick_no",
        "leaders",
        "led",
        "own_discards",
        "h",
        "max_discard",
    )

    def __init__(self, obs: np.ndarray) -> None:
        ones = np.flatnonzero(obs[:_END])
        cuts = [0, *np.searchsorted(ones, _BOUNDS).tolist(), len(ones)]
        ones_list = ones.tolist()
        (
            hand,
            trump,
            face,
            face_status,
            dealer,
            _to_act,
            _present,
            decision,
            discards,
            tricks,
            played_by,
            played_in,
            leaders,
            trick_no,
            led,
            own,
        ) = [ones_list[cuts[k] : cuts[k + 1]] for k in range(len(_DECODED))]
        self.hand: list[int] = hand
        self.trump: int = trump[0] - O_TRUMP
        self.face: int = face[0] - O_FACE if face else -1  # -1: no card turned (the dealer named trump)
        self.face_status: int = face_status[0] - O_FACE_STATUS if face_status else -1
        self.dealer: int = dealer[0] - O_DEALER
        # every seat at the table has exactly one decision one-hot (pending / passed / playing)
        self.n = len(decision)
        self.decision = [0] * self.n
        for i in decision:
            j = i - O_DECISION
            self.decision[j // 3] = j % 3
        self.discards = [-1] * SEATS
        for i in discards:
            j = i - O_NDISCARD
            self.discards[j // (TRICKS + 1)] = j % (TRICKS + 1)
        self.tricks = [0] * SEATS
        for i in tricks:
            j = i - O_TRICKS
            self.tricks[j // (TRICKS + 1)] = j % (TRICKS + 1)
        # played cards as (card, seat, trick): each played card has one one-hot in both fields,
        # and both list the cards in increasing order, so they pair up
        self.played = [
            ((i - O_PLAYED_BY) // SEATS, (i - O_PLAYED_BY) % SEATS, (j - O_PLAYED_IN) % TRICKS)
            for i, j in zip(played_by, played_in, strict=True)
        ]
        self.trick_no: int = trick_no[0] - O_TRICK_NO if trick_no else TRICKS
        self.leaders = [-1] * TRICKS
        for i in leaders:
            j = i - O_LEADER
            self.leaders[j // SEATS] = j % SEATS
        self.led: int = led[0] - O_LED if led else -1
        self.own_discards = [i - O_OWN_DISCARDS for i in own]
        self.h = round(float(obs[O_HAND_SIZE]) * 6)
        self.max_discard = round(float(obs[O_OPTIONS + 3]) * 6)


class _PlayState:
    """What the agent knows during trick play: the trick on the table and where the unseen cards can be."""

    __slots__ = (
        "trump",
        "later",
        "active",
        "leading",
        "led",
        "best_led",
        "best_trump",
        "caps",
        "unseen",
        "face_holder",
        "face_rank",
        "my_tricks",
        "hand_suits",
        "w_trump",
        "w_side",
        "ruff_credit",
    )

    def __init__(self, tb: _Table, obs: np.ndarray, prm: HeuristicParams) -> None:
        n, h, trump, dealer = tb.n, tb.h, tb.trump, tb.dealer
        self.trump = trump
        must_trump = obs[O_OPTIONS] > 0.5
        playing = [d == PLAYING for d in tb.decision]
        active = [q for q in range(1, n) if playing[q]]
        self.active = active
        self.my_tricks = tb.tricks[0]
        self.face_rank = tb.face % NUM_RANKS
        # the turned card is known to be in the dealer's hand while the dealer plays and holds it
        self.face_holder = dealer if tb.face_status == FACE_IN_HAND and dealer != 0 and playing[dealer] else -1
        # how loose the field is: the share of the other players who came in this deal
        u, _ = _field(prm, n, len(active), n - 1 - len(active))
        self.ruff_credit = (prm.ruff_credit + u * (prm.loose_ruff_credit - prm.ruff_credit)) ** (len(active) / 3.0)
        t = tb.trick_no

        seen = 1 << tb.face if tb.face >= 0 else 0
        for c in tb.hand:
            seen |= 1 << c
        for c, _q, _t in tb.played:
            seen |= 1 << c
        if _own_discards_out(tb):
            for c in tb.own_discards:
                seen |= 1 << c
        unseen_all = ALL_CARDS & ~seen
        self.unseen = [(unseen_all >> (NUM_RANKS * s)) & FULL_SUIT for s in range(4)]
        unseen_total = unseen_all.bit_count()
        self.hand_suits = [0, 0, 0, 0]
        for c in tb.hand:
            self.hand_suits[c // NUM_RANKS] += 1

        # Inference from the tricks so far: caps[q][s] is the highest rank q can still hold in s.
        caps = {q: [ACE, ACE, ACE, ACE] for q in active}
        per_trick: list[dict[int, int]] = [{} for _ in range(t + 1)]
        trumps_played = dict.fromkeys(active, 0)
        for c, q, tt in tb.played:
            if tt <= t:
                per_trick[tt][q] = c
            if c // NUM_RANKS == trump and q in trumps_played:
                trumps_played[q] += 1
        cards_left = dict.fromkeys(active, h - t)
        self.leading = True
        self.led = self.best_led = self.best_trump = -1
        order_all = [q for q in range(n) if playing[q]]
        for tt in range(t + 1):
            cards_in = per_trick[tt]
            lead_seat = tb.leaders[tt]
            if not cards_in or lead_seat not in cards_in:
                continue
            start = order_all.index(lead_seat)
            led = cards_in[lead_seat] // NUM_RANKS
            best_led = best_trump = -1
            for q in order_all[start:] + order_all[:start]:
                if q not in cards_in:
                    break
                s, r = divmod(cards_in[q], NUM_RANKS)
                if q != 0 and q != lead_seat:
                    cap = caps[q]
                    if s == led:
                        if (led == trump or best_trump < 0) and r < best_led:
                            cap[led] = min(cap[led], best_led - 1)  # could not beat the card that stood
                    else:
                        cap[led] = -1  # did not follow: void
                        if s == trump:
                            if best_trump > r:
                                cap[trump] = min(cap[trump], best_trump - 1)  # could not overtrump
                        elif must_trump or best_trump < 0:
                            cap[trump] = -1  # did not trump: no trump
                        else:
                            cap[trump] = min(cap[trump], best_trump - 1)  # could not overtrump
                if s == led and r > best_led:
                    best_led = r
                if s == trump and r > best_trump:
                    best_trump = r
            if tt == t:
                self.leading = False
                self.led, self.best_led, self.best_trump = led, best_led, best_trump
                for q in cards_in:
                    if q in cards_left:
                        cards_left[q] -= 1
        self.caps = caps
        self.later = [q for q in active if q not in per_trick[t]] if not self.leading else active

        # Where the unseen cards are likely to be: each opponent's expected trumps (from its
        # announced discards, less the trumps it has played), the rest of its hand side cards.
        n_trumps = self.unseen[trump].bit_count()
        n_side = unseen_total - n_trumps
        p_trump = (NUM_RANKS - 1) / (DECK_SIZE - h - 1)
        self.w_trump: dict[int, float] = {}
        self.w_side: dict[int, float] = {}
        for q in active:
            face_held = 1 if q == self.face_holder else 0
            hidden = cards_left[q] - face_held  # cards of q's hand that we have not seen
            rem = _expected_trumps(prm, u, tb.discards[q], h, p_trump) - trumps_played[q] - face_held
            rem = 0.0 if caps[q][trump] < 0 else min(max(rem, 0.0), hidden)
            self.w_trump[q] = min(rem / max(n_trumps, 1), 1.0)
            self.w_side[q] = min((hidden - rem) / max(n_side, 1), 1.0)

    def holds_above(self, q: int, suit: int, rank: int) -> float:
        """Chance that ``q`` holds a card of ``suit`` above ``rank``."""
        if q == self.face_holder and suit == self.trump and self.face_rank > rank:
            return 1.0
        cap = self.caps[q][suit]
        if cap <= rank:
            return 0.0
        k = ((self.unseen[suit] >> (rank + 1)) & ((1 << (cap - rank)) - 1)).bit_count()
        if k == 0:
            return 0.0
        return 1.0 - (1.0 - (self.w_trump[q] if suit == self.trump else self.w_side[q])) ** k

    def void(self, q: int, suit: int) -> float:
        """Chance that ``q`` holds no card of ``suit``."""
        cap = self.caps[q][suit]
        if cap < 0:
            return 1.0
        if q == self.face_holder and suit == self.trump:
            return 0.0
        k = (self.unseen[suit] & ((1 << (cap + 1)) - 1)).bit_count()
        return (1.0 - (self.w_trump[q] if suit == self.trump else self.w_side[q])) ** k

    def beaten_by(self, q: int, card: int, led: int) -> float:
        """Chance that ``q``, playing after us, beats ``card`` (then the best card of the trick)."""
        s, r = divmod(card, NUM_RANKS)
        trump = self.trump
        if s == trump:
            if led == trump:
                return self.holds_above(q, trump, r)
            return self.void(q, led) * self.holds_above(q, trump, r)
        return min(1.0, self.holds_above(q, s, r) + self.void(q, s) * self.holds_above(q, trump, -1))

    def win_now(self, card: int) -> float:
        """Chance that ``card`` wins the current trick."""
        s, r = divmod(card, NUM_RANKS)
        if self.leading:
            led = s
        else:
            led = self.led
            if s == self.trump:
                if r <= self.best_trump:
                    return 0.0
            elif s != led or self.best_trump >= 0 or r <= self.best_led:
                return 0.0
        p = 1.0
        for q in self.later:
            p *= 1.0 - self.beaten_by(q, card, led)
        return p

    def keep_worth(self, card: int, prm: HeuristicParams) -> float:
        """What ``card`` is worth if kept for a later trick."""
        s, r = divmod(card, NUM_RANKS)
        p = 1.0
        if s == self.trump:
            for q in self.active:
                p *= 1.0 - self.holds_above(q, s, r)
            return p + (1.0 - p) * self.ruff_credit
        for q in self.active:
            p *= 1.0 - self.beaten_by(q, card, s)
        return prm.later_discount * p

    def shed_tiebreak(self, card: int) -> float:
        """Small preferences among otherwise equal cards: lower ranks first, and a singleton side
        card first when we hold trumps (the void lets us ruff later)."""
        s, r = divmod(card, NUM_RANKS)
        out = -0.001 * r
        if s != self.trump and self.hand_suits[s] == 1 and self.hand_suits[self.trump] > 0:
            out += 0.002
        return out


def _own_discards_out(tb: _Table) -> bool:
    """Whether our discards are still out of play: a reshuffle after our draw brings them back.

    Replays the draw with the announced counts: the stock holds what the deal left; when it runs
    out, the discards and passed hands of the players already served become the stock.
    """
    n, h = tb.n, tb.h
    stock = DECK_SIZE - n * h
    pile = 0
    ours_in_pile = False
    for i in range(n):
        q = (tb.dealer + 1 + i) % n
        if tb.decision[q] == PASSED:
            pile += h
            continue
        d = max(tb.discards[q], 0)
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
