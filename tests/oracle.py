"""A naive, readable reference for the trick-play rules of docs/rules.md, written from the text.

This module deliberately shares no logic with ``bourre_env.core``: cards are plain ``int`` ids
(``suit * 13 + rank``, rank 0 = deuce .. 12 = ace; suits C D H S) held in Python sets, and every
rule is spelled out as the text states it. It exists so that tests can compare the compiled core
against an independent reading of the rules.

Three things are provided:

* ``may_pass``: whether a player may pass at a pass-or-play decision (the dealer's obligations, and the
  draw round after a declaration round, where the players who declared play only choose discards).

* ``legal_cards``: the cards a player may play to the current trick (ordinary rules, the
  ``must_trump_when_cannot_win`` and ``lead_trump_honors`` options, and the cinch restrictions
  with the adjacent-trump equivalence).
* ``cinch_exhaustive``: the cinch definition taken literally. Every placement of the cards the
  player has not seen (into the other active players' hands, with their current sizes, or out of
  play) that is consistent with the deal's earlier plays (each opponent's card was legal under the
  ordinary rules from the hand it then held: its placed hand plus the cards it has played since;
  unless reneges are allowed, when a play proves nothing) and every continuation of play that the
  ordinary rules allow to anyone (the player included, without cinch restrictions) is enumerated;
  the player has a cinch when tricks already won plus the minimum, over all of these, of the tricks
  won from now on is at least 3.
  It is exponential and meant for small positions only.
* For positions too large to enumerate, two sound one-sided checks: ``sure_tricks`` (a lower bound:
  at least 3 proves a cinch) and ``refuted_by_random_play`` (a random placement and continuation
  that leaves the player short proves there is none).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

NUM_RANKS = 13
ACE = 12
KING = 11
QUEEN = 10
HONOR_RANKS = (ACE, KING, QUEEN)
CINCH_TRICKS = 3


def suit(card: int) -> int:
    """Suit index (0 = clubs .. 3 = spades) of a card id."""
    return card // NUM_RANKS


def rank(card: int) -> int:
    """Rank index (0 = deuce .. 12 = ace) of a card id."""
    return card % NUM_RANKS


def card_of(rank_index: int, suit_index: int) -> int:
    """Card id of a rank and a suit."""
    return suit_index * NUM_RANKS + rank_index


@dataclass(frozen=True)
class TrickRules:
    """The rule options that matter to trick play."""

    must_trump_when_cannot_win: bool = True
    """Void in the suit led and unable to overtrump: must still play a trump (False: any card)."""
    lead_trump_honors: bool = False
    """A leader holding the A, K or Q of trumps must lead one of them."""
    ranks: tuple[int, ...] = tuple(range(NUM_RANKS))
    """Ranks in the deck; absent ranks do not exist (they never break a run of equivalent trumps)."""


# ------------------------------------------------------------------ pass or play
def may_pass(round_name: str, is_dealer: bool, all_others_passed: bool, dealer_holds_turned_ace: bool) -> bool:
    """Whether a player may pass, as docs/rules.md states it.

    ``round_name``: ``"with_draw"`` (pass, or play with a discard, at one turn), ``"declaration"`` (declare play
    or pass, in turn, two_round_declaration), ``"secret declaration"`` (simultaneous_declaration: no one knows
    the others' choices, so the dealer cannot know that everyone else passed) or ``"draw"`` (the draw round after
    a declaration round: its players declared play, so none passes). "If the turned-up card is an ace, the dealer
    must play" (an ace in the dealer's hand, not a separate card that belongs to no one); "If every player before
    the dealer has passed, the dealer must play".
    """
    if round_name == "draw":
        return False
    if round_name == "secret declaration":
        return not (is_dealer and dealer_holds_turned_ace)
    return not (is_dealer and (dealer_holds_turned_ace or all_others_passed))


def may_come_in(hand: Iterable[int], trump: int, requirement: str, can_pass: bool) -> bool:
    """Whether a player may declare play (or play with a discard) under an entry requirement. four_card: "to play
    a player must hold a trump or a club" (clubs are suit 0); a player who may not pass (a dealer who must play)
    plays whatever the hand."""
    if requirement == "none" or not can_pass:
        return True
    return any(suit(c) in (trump, 0) for c in hand)


def second_pass_order(dealer: int, n: int, playing: Iterable[int]) -> list[int]:
    """The second chance to pass (four_card): the playing seats in turn from the dealer's left."""
    inside = set(playing)
    return [q for q in ((dealer + k) % n for k in range(1, n + 1)) if q in inside]


# ------------------------------------------------------------------ tricks
def trick_winner_index(trick: Sequence[int], trump: int) -> int:
    """Index in ``trick`` (play order) of the winning card: highest trump, else highest of the suit led."""
    trumps = [i for i, c in enumerate(trick) if suit(c) == trump]
    if trumps:
        return max(trumps, key=lambda i: rank(trick[i]))
    led = suit(trick[0])
    same = [i for i, c in enumerate(trick) if suit(c) == led]
    return max(same, key=lambda i: rank(trick[i]))


# ------------------------------------------------------------------ ordinary rules
def ordinary_legal(hand: Iterable[int], trick: Sequence[int], trump: int, rules: TrickRules) -> set[int]:
    """Cards of ``hand`` the ordinary rules allow, ``trick`` being the cards already played to it in order.

    Leader: any card (with ``lead_trump_honors``: one of the A, K, Q of trumps when holding any).
    Follower, in order of priority:
      1. follow suit if able; unless the trick is already won by a trump of another suit than the
         lead, beat the highest card of the suit led if able;
      2. void in the suit led: trump if able, overtrumping the highest trump in the trick if able,
         otherwise any trump (``must_trump_when_cannot_win``) or any card (option off);
      3. otherwise any card.
    """
    hand = set(hand)
    if not trick:
        if rules.lead_trump_honors:
            honors = {c for c in hand if suit(c) == trump and rank(c) in HONOR_RANKS}
            if honors:
                return honors
        return hand

    led = suit(trick[0])
    highest_led_rank = max(rank(c) for c in trick if suit(c) == led)
    trump_ranks_in_trick = [rank(c) for c in trick if suit(c) == trump]

    # 1. follow suit
    of_led_suit = {c for c in hand if suit(c) == led}
    if of_led_suit:
        already_won_by_trump = led != trump and len(trump_ranks_in_trick) > 0
        if not already_won_by_trump:
            beating = {c for c in of_led_suit if rank(c) > highest_led_rank}
            if beating:
                return beating
        return of_led_suit

    # 2. void in the suit led: trump
    my_trumps = {c for c in hand if suit(c) == trump}
    if my_trumps:
        if trump_ranks_in_trick:
            overtrumps = {c for c in my_trumps if rank(c) > max(trump_ranks_in_trick)}
        else:
            overtrumps = set(my_trumps)  # any trump beats a trick with no trump in it
        if overtrumps:
            return overtrumps
        if rules.must_trump_when_cannot_win:
            return my_trumps
        return hand

    # 3. anything
    return hand


# ------------------------------------------------------------------ cinch restrictions
def highest_trump_and_equivalents(
    hand: Iterable[int], trump: int, played: Iterable[int], rules: TrickRules
) -> set[int]:
    """The highest trump of ``hand`` and every trump of ``hand`` equivalent to it.

    A lower trump is equivalent when every trump rank strictly between the two (among the ranks of
    the deck) is in ``hand`` or among the cards already ``played`` this deal. Empty without trumps.
    """
    hand = set(hand)
    played = set(played)
    my_trumps = sorted((c for c in hand if suit(c) == trump), key=rank)
    if not my_trumps:
        return set()
    top = my_trumps[-1]
    result = set()
    for c in my_trumps:
        between = [card_of(r, trump) for r in rules.ranks if rank(c) < r < rank(top)]
        if all(b in hand or b in played for b in between):
            result.add(c)
    return result


def legal_cards(
    hand: Iterable[int],
    trick: Sequence[int],
    trump: int,
    rules: TrickRules,
    *,
    has_cinch: bool,
    is_last: bool,
    played: Iterable[int],
) -> set[int]:
    """Legal cards for a player, cinch restrictions included.

    A player with a cinch who leads must lead the highest trump held; one who plays to another's
    lead and is not last must play the highest trump held whenever the ordinary rules allow a
    trump; a trump equivalent to the highest is equally legal. The restriction narrows the
    ordinary choice (an "equivalent" trump that the ordinary rules forbid, e.g. one that no longer
    beats the trump in the trick, stays illegal). A last player, or a cinch holder without trumps,
    follows the ordinary rules. ``played`` is every card out of play for the equivalence: played to a
    trick this deal (the current trick included) or a dead face-up card (discarded by the dealer, or a
    separate trump card that is no one's).
    """
    hand = set(hand)
    ordinary = ordinary_legal(hand, trick, trump, rules)
    if not has_cinch:
        return ordinary
    leading = len(trick) == 0
    if not leading and is_last:
        return ordinary
    top = highest_trump_and_equivalents(hand, trump, played, rules)
    if not top:
        return ordinary
    if leading:
        return ordinary & top
    if any(suit(c) == trump for c in ordinary):
        return ordinary & top
    return ordinary


# ------------------------------------------------------------------ cinch by exhaustive search
@dataclass(frozen=True)
class CinchView:
    """What one player knows of a deal in trick play, as the cinch definition needs it.

    ``active`` lists the playing seats in clockwise order; ``trick`` is the current trick as
    ``(seat, card)`` pairs in play order (led by ``leader``); ``hand_sizes`` gives every active
    seat's current number of cards; ``played`` is every card played to a trick this deal, the
    current trick included; ``known_out`` are cards the player knows to be out of play (own
    discards that were not reshuffled into the stock, the dealer's discarded face-up card, a
    passed dealer's face-up card that no reshuffle put back into the stock, a separate trump card that
    belongs to no one); ``known_held`` maps a seat to cards the player knows it holds (the face-up card
    the dealer kept). ``history`` holds the deal's completed tricks as ``(seat, card)`` pairs in play
    order; with ``plays_prove`` (no reneges allowed) a placement must be consistent with them and with
    the current trick.
    """

    seat: int
    hand: frozenset[int]
    trump: int
    active: tuple[int, ...]
    leader: int
    trick: tuple[tuple[int, int], ...]
    hand_sizes: Mapping[int, int]
    tricks_won: int
    played: frozenset[int]
    deck: frozenset[int]
    known_out: frozenset[int] = frozenset()
    known_held: Mapping[int, frozenset[int]] = field(default_factory=dict)
    rules: TrickRules = TrickRules()
    history: tuple[tuple[tuple[int, int], ...], ...] = ()
    plays_prove: bool = True

    def unseen(self) -> frozenset[int]:
        """Cards whose place the player does not know."""
        held = set().union(*self.known_held.values()) if self.known_held else set()
        return frozenset(self.deck - self.hand - self.played - self.known_out - held)


def consistent_with_plays(view: CinchView, hands: Mapping[int, frozenset[int]]) -> bool:
    """Whether every earlier play of an opponent was legal, under the ordinary rules, from the hand it held then.

    The hand an opponent held at a play is its hand in ``hands`` plus every card it played from that trick on.
    Always true when plays prove nothing (reneges allowed).
    """
    if not view.plays_prove:
        return True
    tricks = [*view.history, view.trick] if view.trick else list(view.history)
    for i, trick in enumerate(tricks):
        before: list[int] = []
        for seat, card in trick:
            if seat != view.seat:
                held_then = set(hands[seat]) | {c for later in tricks[i:] for q, c in later if q == seat}
                if card not in ordinary_legal(held_then, before, view.trump, view.rules):
                    return False
            before.append(card)
    return True


def placements(view: CinchView) -> Iterable[dict[int, frozenset[int]]]:
    """Every way to give the other active seats hands of their sizes from the unseen cards (rest out of play)."""
    others = [q for q in view.active if q != view.seat]
    unseen = sorted(view.unseen())

    def place(i: int, pool: list[int], acc: dict[int, frozenset[int]]) -> Iterable[dict[int, frozenset[int]]]:
        if i == len(others):
            yield dict(acc)
            return
        q = others[i]
        known = view.known_held.get(q, frozenset())
        need = view.hand_sizes[q] - len(known)
        if need < 0:
            return
        for chosen in combinations(pool, need):
            rest = [c for c in pool if c not in chosen]
            acc[q] = frozenset(chosen) | known
            yield from place(i + 1, rest, acc)
        acc.pop(q, None)

    yield from place(0, unseen, {})


def count_placements(view: CinchView) -> int:
    """Number of placements ``placements`` would enumerate (for sizing test positions)."""
    from math import comb

    others = [q for q in view.active if q != view.seat]
    pool = len(view.unseen())
    total = 1
    for q in others:
        need = view.hand_sizes[q] - len(view.known_held.get(q, frozenset()))
        if need < 0 or need > pool:
            return 0
        total *= comb(pool, need)
        pool -= need
    return total


def min_tricks_from_now(view: CinchView, hands: Mapping[int, frozenset[int]]) -> int:
    """Fewest tricks ``view.seat`` wins from now on over every ordinary-legal continuation (all hands known).

    The current trick, if started, counts as a trick from now on. Plain recursion over every legal
    card of every player in turn, memoised on the position.
    """
    order_of: dict[int, tuple[int, ...]] = {}
    for leader in view.active:
        i = view.active.index(leader)
        order_of[leader] = view.active[i:] + view.active[:i]
    rules = view.rules
    trump = view.trump
    me = view.seat
    memo: dict[tuple[tuple[frozenset[int], ...], int, tuple[int, ...]], int] = {}

    def search(hand_tuple: tuple[frozenset[int], ...], leader: int, trick: tuple[int, ...]) -> int:
        key = (hand_tuple, leader, trick)
        if key in memo:
            return memo[key]
        order = order_of[leader]
        if len(trick) == len(order):
            win_seat = order[trick_winner_index(trick, trump)]
            mine = 1 if win_seat == me else 0
            deal_over = all(len(h) == 0 for h in hand_tuple)
            result = mine if deal_over else mine + search(hand_tuple, win_seat, ())
        else:
            seat = order[len(trick)]
            k = view.active.index(seat)
            best = None
            for c in ordinary_legal(hand_tuple[k], trick, trump, rules):
                new_hands = hand_tuple[:k] + (hand_tuple[k] - {c},) + hand_tuple[k + 1 :]
                value = search(new_hands, leader, trick + (c,))
                if best is None or value < best:
                    best = value
            assert best is not None, "a player to play has no card"
            result = best
        memo[key] = result
        return result

    start_hands = tuple(frozenset(hands[q]) for q in view.active)
    return search(start_hands, view.leader, tuple(c for _, c in view.trick))


def cinch_exhaustive(view: CinchView) -> bool:
    """docs/rules.md's cinch, literally: won + min over placements and continuations of tricks from now >= 3.

    Stops at the first placement whose worst continuation leaves the player short (that already
    decides the minimum is too small).
    """
    need = CINCH_TRICKS - view.tricks_won
    if need <= 0:
        return True
    for others in placements(view):
        hands = dict(others)
        hands[view.seat] = view.hand
        if not consistent_with_plays(view, hands):
            continue
        if min_tricks_from_now(view, hands) < need:
            return False
    return True


# ------------------------------------------------------------------ cheap sound checks for large positions
def sure_tricks(view: CinchView) -> int:
    """Tricks won plus tricks certain by a simple sufficient argument: a lower bound of the cinch count.

    A trump of the hand is "top" when every higher trump of the deck is in the hand, already played or known
    out of play: it wins any later trick it is played to. Counted as certain:
    * the player's card in the current trick, when it is a trump that beats every card in the trick and no card
      outside the hand, the cards played before this trick and the cards known out could beat it;
    * each top trump of the hand; but when the current trick is under way without the player, one of them may
      have to be spent in it (e.g. following a higher trump), so one fewer.
    """
    in_trick = {c for _, c in view.trick}
    safe_now = set(view.hand) | (set(view.played) - in_trick) | set(view.known_out)
    safe_later = set(view.hand) | set(view.played) | set(view.known_out)
    deck_trumps = [card_of(r, view.trump) for r in view.rules.ranks]

    def unbeatable(c: int, safe: set[int]) -> bool:
        return all(t in safe for t in deck_trumps if rank(t) > rank(c))

    total = view.tricks_won
    mine_in_trick = [c for q, c in view.trick if q == view.seat]
    if mine_in_trick and suit(mine_in_trick[0]) == view.trump and unbeatable(mine_in_trick[0], safe_now):
        total += 1
    top = sum(1 for c in view.hand if suit(c) == view.trump and unbeatable(c, safe_later))
    if view.trick and not mine_in_trick:
        top = max(0, top - 1)
    return total + top


def random_placement(view: CinchView, rng: random.Random, tries: int = 200) -> dict[int, frozenset[int]] | None:
    """One placement of the unseen cards consistent with the earlier plays, uniformly at random among those (the
    known held cards stay with their holders), by rejection; ``None`` if ``tries`` draws found none."""
    for _ in range(tries):
        hands = _any_placement(view, rng)
        if consistent_with_plays(view, hands):
            return hands
    return None


def _any_placement(view: CinchView, rng: random.Random) -> dict[int, frozenset[int]]:
    pool = sorted(view.unseen())
    rng.shuffle(pool)
    hands: dict[int, frozenset[int]] = {view.seat: view.hand}
    for q in view.active:
        if q == view.seat:
            continue
        known = view.known_held.get(q, frozenset())
        need = view.hand_sizes[q] - len(known)
        hands[q] = frozenset(pool[:need]) | known
        pool = pool[need:]
    return hands


def random_playout(view: CinchView, hands: Mapping[int, frozenset[int]], rng: random.Random) -> int:
    """Tricks ``view.seat`` takes from now in one random continuation that the ordinary rules allow."""
    held = {q: set(h) for q, h in hands.items()}
    leader = view.leader
    trick = [c for _, c in view.trick]
    won = 0
    while True:
        i = view.active.index(leader)
        order = view.active[i:] + view.active[:i]
        while len(trick) < len(order):
            q = order[len(trick)]
            c = rng.choice(sorted(ordinary_legal(held[q], trick, view.trump, view.rules)))
            held[q].discard(c)
            trick.append(c)
        winner = order[trick_winner_index(trick, view.trump)]
        won += winner == view.seat
        if not held[view.seat]:
            return won
        leader, trick = winner, []


def refuted_by_random_play(view: CinchView, rng: random.Random, tries: int) -> bool:
    """True if some random placement and random legal continuation leaves the player short of a cinch."""
    need = CINCH_TRICKS - view.tricks_won
    if need <= 0:
        return False
    for _ in range(tries):
        hands = random_placement(view, rng)
        if hands is not None and random_playout(view, hands, rng) < need:
            return True
    return False
