"""Scripted deals in card notation, each asserting the exact outcome of one rule of docs/rules.md.

Every deal is given card by card (``tests/scripted_helpers.build_deck``): the last card written
for the dealer is the face-up trump. Seats are numbered clockwise; the player to the dealer's
left leads. Quotations in the docstrings are from docs/rules.md unless marked "seed 000" (the Louisiana
rules published on pagat, after Nickens).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import bourre_env
from bourre_env import actions, core, observation
from bourre_env.core import cards
from bourre_env.core.rules import Rules
from tests.scripted_helpers import CoreTable, Table, build_deck, cardset, ids, mask_cards, names

HEARTS = cards.SUITS.index("H")


# ====================================================================== trick play: the ordinary rules


def test_follow_suit() -> None:
    """docs/rules.md trick play 1: a player who is not leading "must ... follow suit if able"; an
    unbeatable lead leaves "any card of the suit led"; a card of another suit (trump included) is refused."""
    t = Table({0: "KC 9D 8D 7D 6D", 1: "3C 5C AD 2H 3H", 2: "4C 10S JS QS 4H"}, dealer=2, num_players=3)
    t.decide({0: "", 1: "", 2: ""})
    assert t.trump == "H"
    t.play(0, "KC")
    assert t.legal() == cardset("3C 5C")
    for wrong in ("AD", "2H"):
        with pytest.raises(ValueError, match="illegal action"):
            t.play(1, wrong)
    t.play(1, "5C")
    assert t.legal() == cardset("4C")
    t.play(2, "4C")
    assert t.s[core.S_TRICK_WINNER + 0] == 0


def test_must_beat_highest_card_of_led_suit() -> None:
    """docs/rules.md trick play 1: "play a card that beats the highest card of the led suit so far, if able".
    Seat 1 may not play the 3C under the 9C; the dealer must beat the 10C (the highest so far), so
    neither the 5C nor any other card is allowed, only the JC."""
    t = Table({0: "9C 2D 3D 4D 5D", 1: "3C 10C KC 6D 7D", 2: "5C JC 8D 9D 4H"}, dealer=2, num_players=3)
    t.decide({0: "", 1: "", 2: ""})
    t.play(0, "9C")
    assert t.legal() == cardset("10C KC")
    t.play(1, "10C")
    assert t.legal() == cardset("JC")
    t.play(2, "JC")
    assert t.s[core.S_TRICK_WINNER + 0] == 2


@pytest.mark.parametrize(
    ("second_hand", "second_card", "third_legal", "third_card", "winner"),
    [
        ("4S 6C 7C 8C 9C", "4S", "AD 6D", "6D", 1),  # the trick is trumped: no need to beat the QD
        ("3D 6C 7C 8C 9C", "3D", "AD", "AD", 2),  # "If the second player had played a diamond ... the ace"
    ],
)
def test_no_need_to_beat_once_trumped(
    second_hand: str, second_card: str, third_legal: str, third_card: str, winner: int
) -> None:
    """Seed 000's example: "spades are trumps and the queen of diamonds is led. The second player
    trumps with the four of spades. Playing third, you hold the ace and six of diamonds and some
    spades ... You can and should play your six of diamonds" (docs/rules.md: beat the led suit only "if the
    trick is not already won by a trump"); had the second player played a diamond, the ace is forced."""
    t = Table({0: "QD 2C 3C 4C 5C", 1: second_hand, 2: "AD 6D 7S 9S 10S"}, dealer=2, num_players=3)
    t.decide({0: "", 1: "", 2: ""})
    assert t.trump == "S"
    t.play(0, "QD")
    assert t.legal() == cardset(second_card)
    t.play(1, second_card)
    assert t.legal() == cardset(third_legal)
    t.play(2, third_card)
    assert t.s[core.S_TRICK_WINNER + 0] == winner


def test_trump_lead_must_be_beaten() -> None:
    """docs/rules.md trick play 1: when "the lead is trump", a follower must beat the highest trump so far if able:
    over the 9H seat 1 must play the JH (not the 3H); the dealer, unable to beat the JH, may play any trump."""
    t = Table({0: "9H 2C 3C 4C 5C", 1: "3H JH 2D 3D 4D", 2: "2H 6H 6C 7C 5H"}, dealer=2, num_players=3)
    t.decide({0: "", 1: "", 2: ""})
    t.play(0, "9H")
    assert t.legal() == cardset("JH")
    t.play(1, "JH")
    assert t.legal() == cardset("2H 5H 6H")
    t.play(2, "2H")
    assert t.s[core.S_TRICK_WINNER + 0] == 1


@pytest.mark.parametrize(("option", "legal"), [(False, "QH 2H 2C 3C 4C"), (True, "QH")])
def test_lead_trump_honors_option(option: bool, legal: str) -> None:
    """docs/rules.md [option lead_trump_honors, default false]: "a player holding the A, K or Q of trumps must lead
    one of them"; by default any lead is allowed."""
    t = Table(
        {0: "QH 2H 2C 3C 4C", 1: "8C 9C 10C JC 2D", 2: "3D 4D 5D 6D 3H"},
        dealer=2,
        num_players=3,
        lead_trump_honors=option,
    )
    t.decide({0: "", 1: "", 2: ""})
    assert t.legal() == cardset(legal)


def test_void_must_trump_and_void_without_trump_plays_anything() -> None:
    """docs/rules.md trick play 2-3: "if void in the suit led, play a trump if able" (any trump while none
    is in the trick); "otherwise play any card"."""
    t = Table(
        {0: "KC 2S 3S 4S 5S", 1: "2D 3D 2H 5H 6S", 2: "4D 5D 7S 8S 9S", 3: "2C 6D 7D 8D 4H"}, dealer=3, num_players=4
    )
    t.decide({0: "", 1: "", 2: "", 3: ""})
    t.play(0, "KC")
    assert t.legal() == cardset("2H 5H")
    with pytest.raises(ValueError):
        t.play(1, "2D")
    t.play(1, "5H")
    assert t.legal() == cardset("4D 5D 7S 8S 9S")
    t.play(2, "4D")
    assert t.legal() == cardset("2C")
    t.play(3, "2C")
    assert t.s[core.S_TRICK_WINNER + 0] == 1


def test_overtrump_when_able() -> None:
    """docs/rules.md trick play 2: "a trump that beats the highest trump already in the trick if able
    (overtrump)". Over 5H and 9H the dealer's 7H and 3H are refused: only the JH beats the 9H."""
    t = Table(
        {0: "KC 2S 3S 4S 5S", 1: "2D 3D 5H 6S 7S", 2: "4D 5D 9H 8S 9S", 3: "6D 7D 3H 7H JH"}, dealer=3, num_players=4
    )
    t.decide({0: "", 1: "", 2: "", 3: ""})
    t.trick("KC")
    t.play(1, "5H")
    assert t.legal() == cardset("9H")
    t.play(2, "9H")
    assert t.legal() == cardset("JH")
    with pytest.raises(ValueError):
        t.play(3, "7H")
    t.play(3, "JH")
    assert t.s[core.S_TRICK_WINNER + 0] == 3


@pytest.mark.parametrize(("must_trump", "legal"), [(True, "3H 4H"), (False, "4D 5D 3H 4H 8S")])
def test_forced_trump_that_cannot_win(must_trump: bool, legal: str) -> None:
    """docs/rules.md trick play 2: a void player who cannot overtrump plays "otherwise any trump"
    [option ``must_trump_when_cannot_win``, default true]; with ``False``, any card."""
    t = Table(
        {0: "KC 2S 3S 4S 5S", 1: "2D 3D QH 6S 7S", 2: "4D 5D 3H 4H 8S", 3: "2C 6D 7D 8D 5H"},
        dealer=3,
        num_players=4,
        must_trump_when_cannot_win=must_trump,
    )
    t.decide({0: "", 1: "", 2: "", 3: ""})
    t.trick("KC QH")
    assert t.seat == 2
    assert t.legal() == cardset(legal)
    t.trick("4H 2C")
    assert t.s[core.S_TRICK_WINNER + 0] == 1


@pytest.mark.parametrize(
    ("rules", "legal", "dealer_plays"),
    [
        ("standard", "5H", "5H"),
        ("wikipedia", "4D 5D 8S 9S 5H", "8S"),
    ],
)
def test_single_low_trump_under_standard_and_wikipedia(rules: str, legal: str, dealer_plays: str) -> None:
    """Trick play 2 between the presets: clubs led and trumped with the QH; the dealer, void in clubs, holds one
    trump, the 5H (the turned card), which cannot win. Under ``standard`` it must still be played; under
    ``wikipedia`` ("play to win") the dealer may discard a side card instead and keep the trump. Either way
    the QH takes the trick."""
    t = Table({0: "KC 2S 3S 4S 6S", 1: "2D 3D QH 10S JS", 2: "4D 5D 8S 9S 5H"}, dealer=2, num_players=3, rules=rules)
    t.decide({0: "", 1: "", 2: ""})
    t.trick("KC QH")
    assert t.seat == 2
    assert t.legal() == cardset(legal)
    if rules == "standard":
        with pytest.raises(ValueError, match="illegal action"):
            t.play(2, "8S")
    t.play(2, dealer_plays)
    assert t.s[core.S_TRICK_WINNER + 0] == 1
    assert ("5H" in t.hand(2)) == (rules == "wikipedia")


# ====================================================================== draw or pass


@pytest.mark.parametrize(("max_discard", "largest"), [(None, 5), (3, 3)])
def test_max_discard_option(max_discard: int | None, largest: int) -> None:
    """docs/rules.md draw or pass: "A player who plays discards 0 to 5 cards" [option max_discard, default 5]:
    the mask holds pass and every stay discarding at most ``max_discard`` cards; more is refused."""
    t = Table({}, dealer=2, num_players=3, max_discard=max_discard)
    mask = t._mask()
    stays = [a for a in np.flatnonzero(mask) if actions.is_stay(int(a))]
    counts = {bin(int(a) - actions.STAY_BASE).count("1") for a in stays}
    assert counts == set(range(largest + 1))
    assert len(stays) == sum(1 for m in range(32) if bin(m).count("1") <= largest)
    assert mask[actions.PASS] == 1
    if largest < 5:
        with pytest.raises(ValueError):
            t.stay(0, cards.to_strs(t.hand_ids(0)))


@pytest.mark.parametrize(("face", "may_pass"), [("AH", False), ("KH", True)])
def test_ace_turned_dealer_must_play(face: str, may_pass: bool) -> None:
    """docs/rules.md draw or pass: "If the turned-up card is an ace, the dealer must play" (PASS leaves the
    mask and is refused), even when another player plays; a king turned leaves the dealer free."""
    t = Table({2: f"2C 3C 4C 5C {face}"}, dealer=2, num_players=3)
    t.stay(0)
    t.pass_(1)
    assert t.can_pass() is may_pass
    if not may_pass:
        with pytest.raises(ValueError, match="illegal action"):
            t.pass_(2)
    t.stay(2)
    assert t.phase == core.PLAY
    assert t.s[core.S_NACTIVE] == 2


def test_dealer_must_play_when_all_others_passed() -> None:
    """docs/rules.md draw or pass: "If every player before the dealer has passed, the dealer must play";
    then the dealer is the lone player and takes the pot without play."""
    t = Table({2: "2C 3C 4C 5C KH"}, dealer=2, num_players=3)
    t.pass_(0)
    assert t.can_pass()  # only the dealer is bound by the rule
    t.pass_(1)
    assert not t.can_pass()
    with pytest.raises(ValueError, match="illegal action"):
        t.pass_(2)
    t.stay(2, "2C 3C")
    assert t.phase == core.GAME_OVER
    assert t.tricks() == [0, 0, 5]
    assert t.rewards() == [-1.0, -1.0, 2.0]


def test_lone_player_wins_all_tricks_without_play() -> None:
    """docs/rules.md draw or pass: "If exactly one player plays, that player wins all five tricks without
    play" and so takes the pot (docs/rules.md payments)."""
    t = Table({}, dealer=2, num_players=3, pot=6)
    t.stay(0, "")
    t.pass_(1)
    assert t.can_pass()  # seat 0 plays and the turned card is no ace
    t.pass_(2)
    assert t.phase == core.GAME_OVER
    assert t.tricks() == [5, 0, 0]
    assert t.s[core.S_PLAYED] == 0  # no card was played
    assert t.rewards() == [8.0, -1.0, -1.0]  # the pot of 6 + 3 antes, less seat 0's own ante
    assert t.pot == 0
    assert all(t.env.terminations.values())


def _pile(t: Table) -> set[int]:
    return {int(c) for c in t.s[core.S_PILE : core.S_PILE + t.s[core.S_PILE_LEN]]}


def _stock(t: Table) -> list[int]:
    return [int(c) for c in t.s[core.S_STOCK + t.s[core.S_STOCK_POS] : core.S_STOCK + t.s[core.S_STOCK_LEN]]]


def _assert_every_card_once(t: Table) -> None:
    """Hands, stock, reshuffle pile, played cards and the dead face card hold each card of the deck once."""
    where: list[int] = [c for q in range(t.n) for c in t.hand_ids(q)] + _stock(t) + sorted(_pile(t))
    where += mask_cards(t.s[core.S_PLAYED])
    if t.s[core.S_FACE_STATE] == core.FACE_DEAD:
        where.append(int(t.s[core.S_FACE]))
    assert sorted(where) == sorted(t.rules.deck_cards())


@pytest.mark.parametrize(("passers", "expected_reshuffles"), [((), 3), ((4,), 2), ((4, 6), 1)])
def test_stock_exhaustion_and_reshuffle(passers: tuple[int, ...], expected_reshuffles: int) -> None:
    """docs/rules.md draw or pass: "If the stock runs out while serving a player, the discards and passed
    hands of the players who have already acted (not the discards of the player being served) are
    shuffled to form a new stock, and serving continues." Eight players, all who play discarding five
    (the dealer the face-up card too, which is dead and never comes back): a model of stock and pile
    predicts every draw; each card stays exactly once in play and nobody gets back their own discards."""
    rules = Rules(num_players=8)
    deck = [int(c) for c in np.random.default_rng(2024).permutation(rules.deck_cards())]
    dealer = 3
    t = Table(
        {q: cards.to_strs(deck[k * 8 + (q - dealer - 1) % 8] for k in range(5)) for q in range(8)},
        dealer=dealer,
        num_players=8,
        stock=cards.to_strs(deck[40:]),
    )
    assert t.deck == deck
    face = deck[39]
    model_stock: list[int] = deck[40:]
    model_pile: set[int] = set()
    reshuffles = 0
    while t.phase == core.DRAW_OR_PASS:
        seat = t.seat
        before = set(t.hand_ids(seat))
        if seat in passers:
            t.pass_(seat)
            model_pile |= before
        else:
            t.stay(seat, cards.to_strs(sorted(before)))
            after = set(t.hand_ids(seat))
            assert len(after) == 5
            assert not after & before, "a player was served their own discards"
            if len(model_stock) >= 5:
                assert after == set(model_stock[:5])  # drawn from the front of the stock
                model_stock = model_stock[5:]
            else:
                reshuffles += 1
                assert set(model_stock) <= after  # the old stock is used up first
                from_pile = after - set(model_stock)
                assert from_pile <= model_pile and len(from_pile) == 5 - len(model_stock)
                assert set(_stock(t)) == model_pile - from_pile
                model_stock = _stock(t)  # the shuffled order, now known
                model_pile = set()
            model_pile |= before - ({face} if seat == dealer else set())
        assert _pile(t) == model_pile
        assert set(_stock(t)) == set(model_stock)
        _assert_every_card_once(t)
    assert reshuffles == expected_reshuffles
    assert t.phase == core.PLAY
    assert t.s[core.S_FACE_STATE] == core.FACE_DEAD
    assert t.trump == cards.SUITS[cards.suit_of(face)]
    for q in range(8):
        assert len(t.hand_ids(q)) == (0 if q in passers else 5)
    assert face not in set(_stock(t)) | _pile(t) | {c for q in range(8) for c in t.hand_ids(q)}


def test_dealer_discards_face_up_trump() -> None:
    """docs/rules.md draw or pass: "The dealer may discard the face-up trump card; it then becomes a public,
    dead card, and its suit stays trump." It goes to no pile or stock (it is never dealt again); a
    low heart still wins the first trick by trumping."""
    t = Table({0: "AC 2S 3S 4S 5S", 1: "2D 3D 3H 6S 7S", 2: "2C 3C 4C 5C 2H"}, dealer=2, num_players=3, stock="6C 9D")
    t.decide({0: "", 1: "", 2: "2H 2C"})
    assert t.hand(2) == cardset("3C 4C 5C 6C 9D")  # served from the front of the stock
    assert t.s[core.S_FACE_STATE] == core.FACE_DEAD
    assert t.trump == "H"
    assert cards.parse_card("2H") not in _pile(t) | set(_stock(t))
    assert _pile(t) == {cards.parse_card("2C")}
    obs = t.env.observe("player_0")["observation"]
    assert list(obs[observation.O_FACE_STATUS : observation.O_FACE_STATUS + 3]) == [0.0, 1.0, 0.0]
    assert obs[observation.O_TRUMP + HEARTS] == 1.0
    _assert_every_card_once(t)
    assert t.trick("AC 3H 3C") == 1


# ====================================================================== cinch


def test_cinch_leader_must_lead_highest_trump() -> None:
    """docs/rules.md cinch: a player with a cinch "who leads must lead the highest trump held"; A-K-Q of trumps
    is a cinch, and the K and Q are equivalent to the A (every trump between is in the hand). The 9H
    (J and 10 unseen) and the clubs are refused."""
    t = Table({0: "AH KH QH 9H 2C", 1: "8C 9C 10C JC QC", 2: "4C 5C 6C 7C 3H"}, dealer=2, num_players=3)
    t.decide({0: "", 1: "", 2: ""})
    assert t.cinch(0)
    assert t.legal() == cardset("AH KH QH")
    with pytest.raises(ValueError):
        t.play(0, "9H")
    assert t.trick("KH 8C 3H") == 0


def test_cinch_follower_not_last_plays_highest_trump() -> None:
    """docs/rules.md cinch: a player with a cinch "who plays to a trick led by another player, and is not the
    last to play to it, must play the highest trump held whenever the rules above allow a trump". A-K-J-10
    of trumps is a cinch (the unseen Q takes at most one of J, 10); void in clubs, seat 1 may play the A
    or the equivalent K, not the J or 10 (the Q separates them)."""
    t = Table({0: "2C 8C 9C 10C JC", 1: "AH KH JH 10H 2D", 2: "4C 5C 6C 7C 3H"}, dealer=2, num_players=3)
    t.decide({0: "", 1: "", 2: ""})
    t.play(0, "2C")
    assert t.cinch(1)
    assert t.legal() == cardset("AH KH")
    with pytest.raises(ValueError):
        t.play(1, "JH")
    t.play(1, "KH")


def test_cinch_last_to_play_follows_ordinary_rules() -> None:
    """docs/rules.md cinch: a player with a cinch "who plays last to a trick follows the ordinary rules":
    the same A-K-J-10 trump holding, void in the suit led and last to play, may play any trump."""
    t = Table({2: "2C 8C 9C 10C JC", 0: "3C 4S 5S 6S 7S", 1: "AH KH JH 2D 10H"}, dealer=1, num_players=3)
    t.decide({0: "", 1: "", 2: ""})
    t.play(2, "2C")
    t.play(0, "3C")
    assert t.cinch(1)
    assert t.legal() == cardset("AH KH JH 10H")
    t.play(1, "10H")
    assert t.s[core.S_TRICK_WINNER + 0] == 1


def test_cinch_adjacent_trump_equivalence_after_queen_played() -> None:
    """docs/rules.md cinch: "any trump of the player's that is equivalent to it is equally legal: every trump
    ranking between the two is in the player's hand or can never be played again, having been played to a
    trick", as "the Jack from King-Jack once the Queen has been played". Seat 0 wins the first trick with the
    AH, which draws the QH; with one trick won and K-J of trumps on top it has a cinch and leads the K or the J,
    not the 9 (the 10 is unseen)."""
    t = Table({0: "AH KH JH 9H 2C", 1: "QH 3C 4C 5C 6C", 2: "7C 8C 9C 10C 3H"}, dealer=2, num_players=3)
    t.decide({0: "", 1: "", 2: ""})
    assert t.trick("AH QH 3H") == 0
    assert t.cinch(0)
    assert t.legal() == cardset("KH JH")
    t.play(0, "JH")


# ====================================================================== payments

# A 2-2-1 deal, dealer seat 0: seat 1 (left of the dealer) takes 1 trick, seats 2 and 0 take 2 each.
TIE_HANDS = {1: "AC 2H 3H 4H 5H", 2: "AH KH 2D 3D 4D", 0: "2C 6H 7H AD 2S"}
TIE_TRICKS = ("AC 2D 2C", "2H KH 6H", "AH 7H 3H", "3D AD 4H", "2S 5H 4D")
TIE_WINNERS = [1, 2, 2, 0, 0]


def _play_tie_deal(**options: Any) -> Table:
    t = Table(TIE_HANDS, dealer=0, num_players=3, **options)
    t.decide({0: "", 1: "", 2: ""})
    assert [t.trick(plays) for plays in TIE_TRICKS] == TIE_WINNERS
    return t


def test_tie_carries_pot_and_exempts_tied_players() -> None:
    """docs/rules.md payments: "A tie for most tricks (2-2-1 ...) is a split pot: by default no one takes it and
    it carries over to the next deal", and "in a carried split pot, a tied player, does not ante for the
    next deal". Pot 4 + 3 antes = 7 carries; only seat 1 antes for deal 2 (pot 8)."""
    t = _play_tie_deal(pot=4, deals_per_episode=2)
    assert t.rewards() == [-1.0, -1.0, -1.0]
    assert t.s[core.S_DEAL_NO] == 1  # the env has started deal 2
    assert t.s[core.S_DEALER] == 1  # the deal passed left
    assert t.pot == 8
    assert t.deal_rewards() == [0, -1, 0]


def test_tie_divide_odd_chip_to_first_tied_left_of_dealer() -> None:
    """docs/rules.md payments [option tie="divide"]: "divide equally among the tied players, odd chips to the
    first tied player left of the dealer". Pot 7 between seats 0 (dealer) and 2: seat 2 is first left of
    the dealer (before seat 0 in the clockwise order from seat 1) and gets 4, seat 0 gets 3. The pot is
    not carried, so nobody is exempt: all three ante for deal 2."""
    t = _play_tie_deal(pot=4, tie="divide", deals_per_episode=2)
    assert t.rewards() == [2.0, -1.0, 3.0]
    assert t.pot == 3
    assert t.deal_rewards() == [-1, -1, -1]


def test_tie_divide_reneger_cannot_win_a_share() -> None:
    """docs/rules.md reneging: a reneging player "pays the pot as if bourré ... and cannot win the pot". In the 2-2-1
    deal the dealer (seat 0) reneges on the first trick (AD on the AC lead, holding the 2C) and still ties
    seat 2 at two tricks; with tie="divide" it must not receive any of the pot: ante 1 + renege 7 = -8,
    whatever becomes of its share."""
    t = Table(TIE_HANDS, dealer=0, num_players=3, pot=4, tie="divide", illegal_action="renege")
    t.decide({0: "", 1: "", 2: ""})
    winners = [t.trick(plays) for plays in ("AC 2D AD", "2H KH 6H", "AH 7H 3H", "3D 2S 4H", "2C 5H 4D")]
    assert winners == [1, 2, 2, 0, 0]
    assert t.s[core.S_RENEGED + 0] == 1
    assert t.rewards()[0] == -8.0


# A 3-2-0 deal, dealer seat 2: seat 0 (A-K-Q of trumps, a cinch) 3 tricks, seat 1 2, the dealer none.
BOURRE_HANDS = {0: "AH KH QH 2C 3C", 1: "AC KC 2D 3D 4D", 2: "4C 5C 6C 7C 2H"}
BOURRE_TRICKS = ("AH 2D 2H", "KH 3D 4C", "QH 4D 5C", "2C KC 6C", "AC 7C 3C")


def _play_bourre_deal(**options: Any) -> Table:
    t = Table(BOURRE_HANDS, dealer=2, num_players=3, **options)
    t.decide({0: "", 1: "", 2: ""})
    assert [t.trick(plays) for plays in BOURRE_TRICKS] == [0, 0, 0, 1, 1]
    assert t.tricks() == [3, 2, 0]
    return t


@pytest.mark.parametrize(
    ("pot_limit", "rewards", "pot_after"),
    [
        (None, [12.0, -1.0, -14.0], 13),  # pot 10 + 3 antes: won by seat 0, matched by the bourré dealer
        (5, [4.0, -1.0, -6.0], 13),  # the winner takes 5 of the 13; the bourré player pays 5
        (13, [12.0, -1.0, -14.0], 13),  # a limit equal to the pot changes nothing
    ],
)
def test_bourre_pays_the_pot_and_pot_limit_caps(pot_limit: int | None, rewards: list[float], pot_after: int) -> None:
    """docs/rules.md payments: "Every player who played and took no trick is bourré and pays the amount that was
    in the pot (capped at pot_limit) into the next deal's pot"; "with a limit L, the winner takes at most L
    chips and the rest stays in the pot". Seat 1, with 2 tricks, neither wins nor pays."""
    t = _play_bourre_deal(pot=10, pot_limit=pot_limit)
    assert t.rewards() == rewards
    assert t.pot == pot_after
    assert sum(rewards) + (t.pot - 10) == 0  # chips conserved


def test_pot_limit_with_two_bourre_players() -> None:
    """docs/rules.md payments with ``pot_limit``: the winner takes L and each bourré player pays L. Seat 0 takes
    all five tricks with the five top hearts; pot 20 + 3 antes = 23, limit 5: 23 - 5 + 5 + 5 = 28."""
    t = Table(
        {0: "AH KH QH JH 10H", 1: "AC KC QC JC 10C", 2: "AD KD QD JD 2H"}, dealer=2, num_players=3, pot=20, pot_limit=5
    )
    t.decide({0: "", 1: "", 2: ""})
    for plays in ("AH AC 2H", "KH KC AD", "QH QC KD", "JH JC QD", "10H 10C JD"):
        assert t.trick(plays) == 0
    assert t.rewards() == [4.0, -6.0, -6.0]
    assert t.pot == 28


def test_ante_exemption_on_next_deal() -> None:
    """docs/rules.md ante: "every player pays 1 chip into the pot, except players who were bourré in the
    previous deal". After the 3-2-0 deal (pot 13, matched by the bourré dealer: 13), deal 2 takes antes
    from seats 0 and 1 only: 15."""
    t = _play_bourre_deal(pot=10, deals_per_episode=2)
    assert t.rewards() == [12.0, -1.0, -14.0]
    assert t.s[core.S_DEAL_NO] == 1
    assert t.pot == 15
    assert t.deal_rewards() == [-1, -1, 0]


def test_rake_rounded_down() -> None:
    """docs/rules.md payments [option rake]: "a fraction of a pot taken by the house when a pot is won ...
    Rounded down." 15% of 13 is 1.95: the house keeps 1, the winner gets 12 (reward 11)."""
    t = _play_bourre_deal(pot=10, rake=0.15)
    assert t.rewards() == [11.0, -1.0, -14.0]
    assert t.s[core.S_RAKE_TOTAL] == 1
    assert t.pot == 13
    assert sum(t.rewards()) + (t.pot - 10) + t.s[core.S_RAKE_TOTAL] == 0


# ====================================================================== reneging

# Dealer seat 2, trumps hearts. At trick 2 seat 0 must follow the AC with its 3C; reneging with the AH,
# it wins that trick and three in all, but may not win the pot.
RENEGE_HANDS = {0: "AH KH 10H 2C 3C", 1: "AC KC 2D 3D 4D", 2: "4C 5C 6C 7C 2H"}


def test_renege_error_by_default() -> None:
    """docs/rules.md reneging: "The environment never lets an illegal card be played by default (the action
    mask forbids it, and an unmasked illegal action is an error)". The state is unchanged after the error."""
    t = Table(RENEGE_HANDS, dealer=2, num_players=3)
    t.decide({0: "", 1: "", 2: ""})
    assert t.trick("2C KC 4C") == 1
    t.trick("AC 5C")
    assert t.legal() == cardset("3C")
    before = t.s.copy()
    with pytest.raises(ValueError, match="illegal action"):
        t.play(0, "AH")
    assert np.array_equal(t.s, before)


def test_renege_option_plays_card_and_penalises() -> None:
    """docs/rules.md reneging [option illegal_action="renege"]: "an illegal card is played and the player pays the
    pot as if bourré at the end of the deal and cannot win the pot". Seat 0 reneges (AH on the AC lead
    while holding the 3C) and takes 3 tricks: nobody wins the pot of 13, seat 0 pays 13 into it."""
    t = Table(RENEGE_HANDS, dealer=2, num_players=3, pot=10, illegal_action="renege")
    t.decide({0: "", 1: "", 2: ""})
    assert t.trick("2C KC 4C") == 1
    t.trick("AC 5C")
    assert t.legal() == cardset("3C")  # the mask still shows only the legal card
    with pytest.raises(ValueError):
        t.play(0, "QS")  # a card not held is still an error
    assert t.s[core.S_RENEGED + 0] == 0
    assert t.trick("AH") == 0  # the renege is played and wins the trick
    assert t.s[core.S_RENEGED + 0] == 1
    assert t.trick("KH 2D 2H") == 0
    assert t.trick("10H 3D 6C") == 0
    assert t.trick("3C 4D 7C") == 2
    assert t.tricks() == [3, 1, 1]
    assert t.rewards() == [-14.0, -1.0, -1.0]
    assert t.pot == 26


# ====================================================================== configuration errors


def _full_deck_strs(rules: Rules) -> list[str]:
    return [cards.to_str(c) for c in rules.deck_cards()]


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"deck": _full_deck_strs(Rules())[1:]}, "deck"),  # a card missing
        ({"deck": _full_deck_strs(Rules())[:-1] + ["2C"]}, "deck"),  # a card repeated
        ({"deck": ["ZZ"] + _full_deck_strs(Rules())[1:]}, "deck"),  # not a card
        ({"deck": 7}, "deck"),  # not a sequence
        ({"dealer": 3}, "dealer"),
        ({"dealer": -1}, "dealer"),
        ({"dealer": "0"}, "dealer"),
        ({"dealer": True}, "dealer"),
        ({"pot": -1}, "pot"),
        ({"pot": 2.5}, "pot"),
        ({"pot": "3"}, "pot"),
    ],
)
def test_bad_reset_options_raise_value_error_naming_the_field(options: dict[str, Any], field: str) -> None:
    """env.py: ``reset`` validates ``deck`` (every card of the deck exactly once), ``dealer`` (a seat index)
    and ``pot`` (an integer >= 0); a bad value raises ValueError naming the option, the same every time."""
    env = bourre_env.env(num_players=3)
    messages = []
    for _ in range(2):
        with pytest.raises(ValueError, match=field) as err:
            env.reset(seed=0, options=options)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_small_deck_rejects_cards_outside_it() -> None:
    """docs/rules.md small decks [option ranks]: a deck of fewer ranks; a given deck of 52 cards for a 24-card
    game names the cards not in this deck."""
    env = bourre_env.env(num_players=3, ranks=6)
    with pytest.raises(ValueError, match="deck.*not in this deck"):
        env.reset(options={"deck": _full_deck_strs(Rules())})
    env.reset(seed=0, options={"deck": _full_deck_strs(Rules.from_options(num_players=3, ranks=6)), "dealer": 0})


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"num_players": 9}, "num_players"),
        ({"num_players": 1}, "num_players"),
        ({"num_players": 4.0}, "num_players"),
        ({"hand_size": 0}, "hand_size"),
        ({"hand_size": 7}, "hand_size"),
        ({"max_discard": 6}, "max_discard"),
        ({"max_discard": -1}, "max_discard"),
        ({"must_trump_when_cannot_win": 1}, "must_trump_when_cannot_win"),
        ({"lead_trump_honors": "no"}, "lead_trump_honors"),
        ({"pot_limit": 0}, "pot_limit"),
        ({"tie": "split"}, "tie"),
        ({"rake": 1.0}, "rake"),
        ({"rake": -0.1}, "rake"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"deals_per_episode": 0}, "deals_per_episode"),
        ({"ranks": 0}, "ranks"),
        ({"ranks": "A K X"}, "ranks|rank"),
        ({"num_players": 4, "ranks": 6}, "ranks"),  # 24 cards < 4 hands of 5 + 5 discards
        ({"num_players": 8, "ranks": 11}, "ranks"),  # 44 cards < 8 hands of 5 + 5 discards
    ],
)
def test_bad_rule_options_raise_value_error_naming_the_field(options: dict[str, Any], field: str) -> None:
    """rules.py: "Invalid values and combinations raise ValueError naming the field"; docs/rules.md small decks:
    "the hand size and number of players must then fit the deck". Through ``Rules`` and ``bourre_env.env``."""
    with pytest.raises(ValueError, match=field):
        Rules(**options)
    with pytest.raises(ValueError, match=field):
        bourre_env.env(**options)


def test_unknown_rule_option_is_named() -> None:
    """rules.py ``Rules.replace``: an unknown option raises ValueError naming it."""
    with pytest.raises(ValueError, match="colour"):
        bourre_env.env(colour="red")


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 8, "ranks": 12},  # 48 cards >= 8 * 5 + 5
        {"num_players": 4, "ranks": 6, "max_discard": 4},  # 24 cards >= 4 * 5 + 4
        {"num_players": 8},
    ],
)
def test_fitting_small_decks_are_accepted(options: dict[str, Any]) -> None:
    """docs/rules.md small decks: configurations whose deck fits the hands and the largest draw are valid."""
    rules = Rules(**options)
    env = bourre_env.env(**options)
    env.reset(seed=0, options={"deck": _full_deck_strs(rules), "dealer": 0})


# ====================================================================== seed 000: the 7-player example

A, B, C, D, E, F, G = range(7)


def test_seed_000_seven_player_payment_example() -> None:
    """Seed 000's payment example, reproduced exactly (pots 7, 13, 30, 65). Deal 1 (dealer A): B, C, E and G
    play; E wins 3 tricks, B and G one each, C is bourré and pays 7. Deal 2 (dealer B): A, B, E and F play;
    A and F take 2 tricks each, B one, E none: a split pot, E pays 13, only B, C, D and G ante. Deal 3
    (dealer C): C, D and E play and D wins all five; C and E each pay 30; all but C and E ante."""
    rules = Rules(num_players=7, deals_per_episode=4)
    # Deal 1, spades trump (A's face 2S). E has A-K-Q of trumps (a cinch).
    t = CoreTable(
        rules,
        {A: "6D 7D 8D 9C 2S", B: "AC 2D 3D 4D 5D", C: "2C 3C 4H 5H 6H", E: "AS KS QS 7C 8H", G: "4C AH 9D 10D JD"},
        dealer=A,
    )
    assert t.pot == 7
    t.decide({B: "", C: "", E: "", G: ""})
    assert t.seat == B
    assert t.trick("AC 2C 7C 4C") == B
    assert t.trick("2D 3C AS 9D") == E
    assert t.trick("KS 10D 3D 4H") == E
    assert t.trick("QS JD 4D 5H") == E
    assert t.trick("8H AH 5D 6H") == G
    assert t.tricks() == [0, 1, 0, 0, 3, 0, 1]
    assert t.deal_rewards() == [-1, -1, -8, -1, 6, -1, -1]
    assert t.pot == 7

    # Deal 2 (dealer B), hearts trump (B's face 2H).
    t.next_deal({E: "2C 3C 2D 3D 2S", F: "AC KC 4S 5S 6S", A: "AD KD 7S 8S 9S", B: "4C 5C 4D 5D 2H"})
    assert t.pot == 13
    assert t.deal_rewards() == [-1, -1, 0, -1, -1, -1, -1]
    t.decide({A: "", B: "", E: "", F: ""})
    assert t.seat == E
    assert t.trick("2C KC 7S 4C") == F
    assert t.trick("AC 8S 5C 3C") == F
    assert t.trick("4S 9S 2H 2S") == B
    assert t.trick("4D 2D 5S KD") == A
    assert t.trick("AD 5D 3D 6S") == A
    assert t.tricks() == [2, 1, 0, 0, 0, 2, 0]
    assert t.deal_rewards() == [-1, -1, 0, -1, -14, -1, -1]
    assert t.pot == 26

    # Deal 3 (dealer C), spades trump (C's face 2S).
    t.next_deal({D: "AS KS QS JS 10S", E: "2C 3C 4C 5C 6C", C: "2D 3D 4D 5D 2S"})
    assert t.pot == 30
    assert t.deal_rewards() == [0, -1, -1, -1, 0, 0, -1]
    t.decide({C: "", D: "", E: ""})
    assert t.seat == D
    assert t.trick("AS 2C 2S") == D
    for plays in ("KS 3C 2D", "QS 4C 3D", "JS 5C 4D", "10S 6C 5D"):
        assert t.trick(plays) == D
    assert t.tricks() == [0, 0, 0, 5, 0, 0, 0]
    assert t.deal_rewards() == [0, -1, -31, 29, -30, 0, -1]
    assert t.pot == 60
    chips = [int(t.s[core.S_CHIPS + q]) for q in range(7)]
    assert chips == [-2, -3, -39, 27, -38, -2, -3]
    assert sum(chips) + t.pot == 0  # chips conserved over the three deals

    # Deal 4 (dealer D): everyone but C and E antes.
    t.next_deal({})
    assert t.pot == 65
    assert t.deal_rewards() == [-1, -1, 0, -1, 0, -1, -1]


# ====================================================================== the helpers themselves


def test_build_deck_places_hands_and_face_card() -> None:
    """The deck helper follows env.py's dealing order: deck[0] to the dealer's left, one card at a time;
    the dealer's last card (deck[n * hand_size - 1]) is the face-up trump."""
    rules = Rules(num_players=3)
    deck = build_deck(rules, 1, {2: "AS KS QS JS 10S", 0: "2C 3C 4C 5C 6C", 1: "2D 3D 4D 5D 7H"}, stock="AH")
    assert sorted(deck) == sorted(rules.deck_cards())
    assert cards.to_strs(deck[:6]) == "AS 2C 2D KS 3C 3D"
    assert deck[14] == cards.parse_card("7H") and deck[15] == cards.parse_card("AH")
    t = Table({2: "AS KS QS JS 10S", 0: "2C 3C 4C 5C 6C", 1: "2D 3D 4D 5D 7H"}, dealer=1, num_players=3)
    assert t.hand(2) == cardset("AS KS QS JS 10S") and t.trump == "H"
    assert names(ids("th")) == {"10H"}
