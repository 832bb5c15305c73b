"""The named rule sets of docs/rules.md (its Presets section): the registry, and scripted deals in card notation
showing each rule in which a preset differs from ``standard``, with exact chip counts.

Quotations are from docs/rules.md unless marked with their source (docs/rules.md, Sources): "seed 000" is the
Louisiana rules published on pagat, after Nickens, "seed 001 (Wikipedia)" the Wikipedia article, one of several
rule pages.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import card_locations

import bourre_env
from bourre_env import actions, core, observation
from bourre_env.batch import BatchGame
from bourre_env.core import cards
from bourre_env.core.rules import Rules, presets
from tests.scripted_helpers import CoreTable, Table, build_deck, cardset

PRESET_CHANGES: dict[str, dict[str, Any]] = {
    "standard": {},
    "double_ante": {"play_ante": 1, "ante_exemptions": False},
    "dealer_antes_for_all": {"ante_payer": "dealer", "ante_exemptions": False},
    "wikipedia": {"max_discard_large_table": 3, "must_trump_when_cannot_win": False},
    "separate_trump_card": {"trump_card": "separate"},
    "separate_trump_card_dealer_may_take": {"trump_card": "separate_dealer_may_take"},
    "two_round_declaration": {"play_ante": 1, "ante_exemptions": False, "declaration": "two_rounds"},
    "simultaneous_declaration": {"declaration": "simultaneous"},
    "four_card": {
        "hand_size": 4,
        "max_discard": 3,
        "play_ante": 1,
        "trump_card": "separate",
        "declaration": "two_rounds",
        "entry_requirement": "trump_or_club",
        "second_pass_ante": 1,
        "renege_multiple": 2,
    },
    "dealer_picks_trump": {"trump_card": "named_by_dealer"},
}


# ====================================================================== the registry


def test_presets_are_the_standard_game_with_their_changes() -> None:
    """Each preset is ``Rules()`` with exactly the fields of its variant changed."""
    assert list(presets) == list(PRESET_CHANGES)
    for name, changes in PRESET_CHANGES.items():
        assert presets[name] == Rules(**changes), name
        assert presets[name].changes_from(Rules()) == changes


@pytest.mark.parametrize("name", [n for n in PRESET_CHANGES if n != "standard"])
def test_preset_adjustable_field_by_field(name: str) -> None:
    """A preset is a starting point: ``from_options``, ``bourre_env.env`` and ``BatchGame`` take any field on top."""
    rules = Rules.from_options(name, num_players=7, tie="divide")
    assert rules == presets[name].replace(num_players=7, tie="divide")
    assert rules.changes_from(presets[name]) == {"num_players": 7, "tie": "divide"}
    env = bourre_env.env(rules=name, num_players=7)
    assert env.unwrapped.rules == presets[name].replace(num_players=7)
    assert BatchGame(batch_size=2, rules=name, num_players=3).rules == presets[name].replace(num_players=3)
    assert Rules.from_options(presets[name]) is presets[name]


def test_unknown_preset_lists_the_names() -> None:
    with pytest.raises(ValueError, match="rules: expected a Rules object or one of") as err:
        bourre_env.env(rules="no_such_game")
    for name in presets:
        assert repr(name) in str(err.value)


def test_presets_cannot_be_changed_in_place() -> None:
    with pytest.raises(TypeError):
        presets["mine"] = Rules()  # type: ignore[index]
    with pytest.raises(AttributeError):
        presets["double_ante"].play_ante = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"play_ante": -1}, "play_ante"),
        ({"play_ante": 1.5}, "play_ante"),
        ({"play_ante": True}, "play_ante"),
        ({"ante_exemptions": 0}, "ante_exemptions"),
        ({"ante_payer": "house"}, "ante_payer"),
        ({"trump_card": "joker"}, "trump_card"),
        ({"declaration": "secret"}, "declaration"),
        ({"declaration": None}, "declaration"),
        ({"max_discard_large_table": 6}, "max_discard_large_table"),
        ({"max_discard_large_table": -1}, "max_discard_large_table"),
        ({"max_discard_large_table": 3.0}, "max_discard_large_table"),
        # the separate trump card is one more card out of the stock: 4 hands of 5 + 1 + 4 discards > 24 cards
        ({"trump_card": "separate", "num_players": 4, "ranks": 6, "max_discard": 4}, "ranks.*separate trump card"),
        # a dealer who may take the turned card holds hand_size + 1 cards, and the action space has 6 positions
        ({"trump_card": "separate_dealer_may_take", "hand_size": 6}, "trump_card.*hand_size \\+ 1 cards, at most 6"),
    ],
)
def test_bad_new_fields_raise_value_error_naming_the_field(options: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Rules(**options)
    with pytest.raises(ValueError, match=field):
        bourre_env.env(**options)


def test_error_names_allowed_values() -> None:
    with pytest.raises(ValueError, match="ante_payer: expected 'each' or 'dealer', got 'house'"):
        Rules(ante_payer="house")
    with pytest.raises(
        ValueError,
        match="trump_card: expected 'dealer' or 'separate' or "
        "'separate_dealer_may_take' or 'named_by_dealer', got 'joker'",
    ):
        Rules(trump_card="joker")
    with pytest.raises(ValueError, match="declaration: expected 'with_draw' or 'two_rounds' or 'simultaneous'"):
        Rules(declaration="secret")
    with pytest.raises(ValueError, match="entry_requirement: expected 'none' or 'trump_or_club', got 'club'"):
        Rules(entry_requirement="club")
    with pytest.raises(ValueError, match="second_pass_ante: expected None or an integer >= 0, got -1"):
        Rules(second_pass_ante=-1)
    with pytest.raises(ValueError, match="renege_multiple: expected an integer >= 1, got 0"):
        Rules(renege_multiple=0)
    with pytest.raises(ValueError, match="max_discard: expected None or an integer in 0..hand_size \\(4\\), got 5"):
        presets["four_card"].replace(max_discard=5)


@pytest.mark.parametrize("name", list(PRESET_CHANGES))
def test_env_episodes_conserve_chips(name: str) -> None:
    """Random episodes of several deals through the AEC env: the rewards of all seats add up to minus the pot."""
    env = bourre_env.env(rules=name, num_players=6, deals_per_episode=3)
    rng = np.random.default_rng(1)
    for seed in range(8):
        env.reset(seed=seed)
        total = 0.0
        for _agent in env.agent_iter():
            obs, reward, terminated, truncated, _ = env.last()
            total += reward
            env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        s = env.unwrapped.state_vector
        assert total == -s[core.S_POT] - s[core.S_RAKE_TOTAL]


# ====================================================================== double_ante

# A 3-2-0 deal, dealer seat 2: seat 0 (A-K-Q of trumps) 3 tricks, seat 1 2, the dealer none (bourré).
BOURRE_HANDS = {0: "AH KH QH 2C 3C", 1: "AC KC 2D 3D 4D", 2: "4C 5C 6C 7C 2H"}
BOURRE_TRICKS = ("AH 2D 2H", "KH 3D 4C", "QH 4D 5C", "2C KC 6C", "AC 7C 3C")

# A 2-2-1 deal, dealer seat 0: seat 1 takes 1 trick, seats 2 and 0 take 2 each (a split pot).
TIE_HANDS = {1: "AC 2H 3H 4H 5H", 2: "AH KH 2D 3D 4D", 0: "2C 6H 7H AD 2S"}
TIE_TRICKS = ("AC 2D 2C", "2H KH 6H", "AH 7H 3H", "3D AD 4H", "2S 5H 4D")


def _bourre_deal(**options: Any) -> Table:
    t = Table(BOURRE_HANDS, dealer=2, num_players=3, **options)
    t.decide({0: "", 1: "", 2: ""})
    assert [t.trick(plays) for plays in BOURRE_TRICKS] == [0, 0, 0, 1, 1]
    assert t.tricks() == [3, 2, 0]
    return t


def _tie_deal(**options: Any) -> Table:
    t = Table(TIE_HANDS, dealer=0, num_players=3, **options)
    t.decide({0: "", 1: "", 2: ""})
    assert [t.trick(plays) for plays in TIE_TRICKS] == [1, 2, 2, 0, 0]
    return t


def test_double_ante_second_chip_when_declaring_play() -> None:
    """double_ante: "all ante 1; each player who plays adds a second chip". Pot 10 + 3 antes = 13; each of
    the three adds a chip as it declares play (14, 15, 16). The winner takes the 16; the bourré dealer
    "pays the amount that was in the pot": the pot as it stands when the deal is settled, second antes
    included, 16. (Standard, same deal: 13 won, 13 paid.)"""
    t = Table(BOURRE_HANDS, dealer=2, num_players=3, pot=10, rules="double_ante")
    assert t.pot == 13
    assert t.deal_rewards() == [-1, -1, -1]
    for seat, pot in ((0, 14), (1, 15), (2, 16)):
        t.stay(seat)
        assert t.pot == pot
    assert t.deal_rewards() == [-2, -2, -2]
    assert [t.trick(plays) for plays in BOURRE_TRICKS] == [0, 0, 0, 1, 1]
    assert t.rewards() == [14.0, -2.0, -18.0]
    assert t.pot == 16
    assert sum(t.rewards()) + (t.pot - 10) == 0


def test_double_ante_who_passes_pays_no_second_chip() -> None:
    """Seed 000, Double Ante: "Those who pass do not pay this second ante - they just lose their first ante".
    Seat 0 plays alone (3 antes + 1 = 4) and takes the pot without play: +2; the passers lose 1 each."""
    t = Table({}, dealer=2, num_players=3, rules="double_ante")
    t.stay(0)
    assert t.pot == 4
    t.pass_(1)
    t.pass_(2)
    assert t.pot == 0 and t.tricks() == [5, 0, 0]
    assert t.rewards() == [2.0, -1.0, -1.0]


def test_double_ante_dealer_forced_to_play_pays_the_second_chip() -> None:
    """A dealer who must play (everyone before passed) plays like anyone else, and so adds the second chip.
    The pot is 3 antes + 1; the dealer, alone, takes it: +2."""
    t = Table({}, dealer=2, num_players=3, rules="double_ante")
    t.pass_(0)
    t.pass_(1)
    assert not t.can_pass()
    t.stay(2)
    assert t.rewards() == [-1.0, -1.0, 2.0]


def test_double_ante_bourre_player_antes_next_deal() -> None:
    """double_ante: "every player antes every deal, bourré or tied or not". After the 3-2-0 deal (pot 16, matched
    by the bourré dealer) all three ante for deal 2: 19. (Standard: the bourré dealer skips the ante.)"""
    t = _bourre_deal(pot=10, rules="double_ante", deals_per_episode=2)
    assert t.rewards() == [14.0, -2.0, -18.0]
    assert t.s[core.S_DEAL_NO] == 1
    assert t.pot == 19
    assert t.deal_rewards() == [-1, -1, -1]


def test_double_ante_tied_players_ante_next_deal() -> None:
    """double_ante, a split pot: 4 + 3 antes + 3 second antes = 10 carries, and the tied seats 0 and 2 ante
    with seat 1 for deal 2: 13. (Standard: 4 + 3 = 7 carries and only seat 1 antes: 8.)"""
    t = _tie_deal(pot=4, rules="double_ante", deals_per_episode=2)
    assert t.rewards() == [-2.0, -2.0, -2.0]
    assert t.pot == 13
    assert t.deal_rewards() == [-1, -1, -1]


def test_ante_exemptions_field_alone() -> None:
    """``ante_exemptions=False`` on the standard game: the bourré dealer antes for deal 2 (13 + 3 = 16)."""
    t = _bourre_deal(pot=10, ante_exemptions=False, deals_per_episode=2)
    assert t.rewards() == [12.0, -1.0, -14.0]
    assert t.pot == 16
    assert t.deal_rewards() == [-1, -1, -1]


def test_play_ante_with_pot_limit() -> None:
    """``pot_limit`` caps what the winner takes and the bourré player pays, the pot counted with second antes:
    pot 16 (as above), limit 15: the winner takes 15 (+13), the bourré dealer pays 15 (-17), 16 stays."""
    t = _bourre_deal(pot=10, rules="double_ante", pot_limit=15)
    assert t.rewards() == [13.0, -2.0, -17.0]
    assert t.pot == 16


# ====================================================================== dealer_antes_for_all


def test_dealer_antes_for_every_player() -> None:
    """Seed 001 (Wikipedia): "the dealer of each hand would ante five dollars for a five-person, one-dollar-ante
    game, instead of one dollar"."""
    t = Table({}, dealer=3, num_players=5, rules="dealer_antes_for_all")
    assert t.pot == 5
    assert t.deal_rewards() == [0, 0, 0, -5, 0]


def test_dealer_antes_for_all_over_two_deals() -> None:
    """dealer_antes_for_all: the dealer pays 1 chip per seat every deal, the seat of last deal's bourré player
    included. Deal 1 (dealer 2): pot 10 + 3 = 13, won by seat 0 (+13), matched by the bourré dealer (-3 - 13).
    Deal 2 (dealer 0): seat 0 antes 3 for everyone: 16."""
    t = _bourre_deal(pot=10, rules="dealer_antes_for_all", deals_per_episode=2)
    assert t.rewards() == [13.0, 0.0, -16.0]
    assert t.s[core.S_DEALER] == 0
    assert t.pot == 16
    assert t.deal_rewards() == [-3, 0, 0]


def test_dealer_antes_for_all_with_exemptions_kept() -> None:
    """Adjusted with ``ante_exemptions=True``, the dealer antes only for the players who owe an ante: deal 2's
    dealer (seat 0) pays 2, not for the bourré seat 2: 13 + 2 = 15."""
    t = _bourre_deal(pot=10, rules="dealer_antes_for_all", ante_exemptions=True, deals_per_episode=2)
    assert t.pot == 15
    assert t.deal_rewards() == [-2, 0, 0]


def test_dealer_antes_for_all_with_a_play_ante() -> None:
    """The dealer covers the ante before the deal; a ``play_ante`` stays each playing player's own. Dealer 2
    antes 3; seat 0 plays alone (pays 1) and takes the 4: +3."""
    t = Table({}, dealer=2, num_players=3, rules="dealer_antes_for_all", play_ante=1)
    t.decide({0: ""})
    assert t.rewards() == [3.0, 0.0, -3.0]


# ====================================================================== wikipedia


def _stay_sizes(t: Table) -> set[int]:
    return {bin(int(a) - actions.STAY_BASE).count("1") for a in np.flatnonzero(t._mask()) if actions.is_stay(int(a))}


@pytest.mark.parametrize(("num_players", "largest"), [(2, 5), (6, 5), (7, 3), (8, 3)])
def test_wikipedia_three_discards_with_seven_or_eight(num_players: int, largest: int) -> None:
    """wikipedia: "at most 3 discards with 7 or 8 players" (seed 001: "Only three cards may be discarded when
    there are seven players"); up to 6 players the whole hand. A fourth discard is refused."""
    t = Table({}, dealer=0, num_players=num_players, rules="wikipedia")
    assert _stay_sizes(t) == set(range(largest + 1))
    obs = t.env.observe(t.env.agent_selection)["observation"]
    assert obs[observation.O_OPTIONS + 3] == np.float32(largest / 6)
    if largest < 5:
        with pytest.raises(ValueError, match="illegal action"):
            t.stay(1, cards.to_strs(t.hand_ids(1)[:4]))
        t.stay(1, cards.to_strs(t.hand_ids(1)[:3]))


@pytest.mark.parametrize(
    ("options", "limit"),
    [
        ({"rules": "wikipedia", "num_players": 8, "max_discard_large_table": 4}, 4),
        ({"rules": "wikipedia", "num_players": 5, "max_discard": 2}, 2),
        ({"rules": "wikipedia", "num_players": 7, "max_discard": 2}, 3),  # the large-table limit replaces it
        ({"num_players": 8, "max_discard_large_table": 3}, 3),
        ({"num_players": 8}, 5),
    ],
)
def test_max_discard_large_table_field(options: dict[str, Any], limit: int) -> None:
    rules = Rules.from_options(**options)
    assert rules.discard_limit == limit
    assert rules.params()[core.P_MAX_DISCARD] == limit


def test_large_table_limit_sizes_the_deck_check() -> None:
    """The deck must serve the largest draw at this table size: 8 hands of 5 + 3 discards fit 44 cards (11
    ranks), which 8 hands + 5 discards do not."""
    assert Rules.from_options("wikipedia", num_players=8, ranks=11).deck_size == 44
    with pytest.raises(ValueError, match="ranks"):
        Rules(num_players=8, ranks=11)


@pytest.mark.parametrize(
    ("options", "legal"),
    [
        ({"rules": "standard"}, "3H 4H"),
        ({"rules": "wikipedia"}, "4D 5D 3H 4H 8S"),
        ({"rules": "wikipedia", "must_trump_when_cannot_win": True}, "3H 4H"),  # the groups that force the trump
    ],
)
def test_wikipedia_void_player_need_not_trump_to_lose(options: dict[str, Any], legal: str) -> None:
    """wikipedia: "play to win" (the Wikipedia article: "If you are unable to 'play to win,' it is not necessary
    to play a trump card that will not be able to win the trick"), ``must_trump_when_cannot_win=False``. Clubs
    led, trumped with the QH; seat 2, void in clubs with the 3H and 4H, may play any card under the preset, and
    must play a trump with the option set back to the standard game's."""
    t = Table(
        {0: "KC 2S 3S 4S 5S", 1: "2D 3D QH 6S 7S", 2: "4D 5D 3H 4H 8S", 3: "2C 6D 7D 8D 5H"},
        dealer=3,
        num_players=4,
        **options,
    )
    t.decide({0: "", 1: "", 2: "", 3: ""})
    t.trick("KC QH")
    assert t.legal() == cardset(legal)


@pytest.mark.parametrize("options", [{"rules": "wikipedia"}, {"must_trump_when_cannot_win": False}])
def test_play_to_win_still_overtrumps_when_able(options: dict[str, Any]) -> None:
    """Play to win frees only a player who cannot win: a void player who can overtrump must (the Wikipedia
    article: "you must play a trump and 'play to win'"). Clubs led, trumped with the 5H; seat 2 holds the 9H and
    must play it."""
    t = Table(
        {0: "KC 2S 3S 4S 5S", 1: "2D 3D 5H 6S 7S", 2: "4D 5D 3H 9H 8S", 3: "2C 6D 7D 8D 6H"},
        dealer=3,
        num_players=4,
        **options,
    )
    t.decide({0: "", 1: "", 2: "", 3: ""})
    t.trick("KC 5H")
    assert t.legal() == cardset("9H")


# ====================================================================== separate_trump_card

# Dealer seat 2; the ace of hearts is turned after the hands and belongs to no one.
SEPARATE_HANDS = {0: "KH QH JH 2C 3C", 1: "AC KC 2D 3D 4D", 2: "4C 5C 6C 7C 8C"}


def test_separate_trump_card_is_dealt_after_the_hands() -> None:
    """separate_trump_card (a): "five cards each, then one extra card turned for trump ... it belongs to no one".
    The dealer holds five cards of its own; the stock starts after the turned card."""
    t = Table(SEPARATE_HANDS, dealer=2, num_players=3, stock="9D", turned="AH", rules="separate_trump_card")
    assert t.trump == "H"
    assert t.s[core.S_FACE] == cards.parse_card("AH")
    assert t.s[core.S_FACE_STATE] == core.FACE_DEAD
    assert t.hand(2) == cardset("4C 5C 6C 7C 8C")
    assert int(t.s[core.S_STOCK + t.s[core.S_STOCK_POS]]) == cards.parse_card("9D")
    assert t.s[core.S_STOCK_LEN] == 52 - 16
    assert sorted(card_locations(t.s, t.rules)) == list(range(52))


def test_separate_trump_card_deck_order_through_reset() -> None:
    """env.py's ``deck`` option: with a separate trump card, ``deck[n * hand_size]`` is the turned card."""
    env = bourre_env.raw_env(rules="separate_trump_card", num_players=4)
    env.reset(options={"deck": list(range(52)), "dealer": 2})
    s = env.state_vector
    assert env.hand("player_2") == [3, 7, 11, 15, 19]
    assert s[core.S_FACE] == 20 and s[core.S_TRUMP] == 1
    assert list(s[core.S_STOCK : core.S_STOCK + 2]) == [21, 22]


def test_separate_ace_does_not_bind_the_dealer() -> None:
    """docs/rules.md: "If the turned-up card is an ace, the dealer must play" because "the ace of trumps always wins a
    trick" (seed 000); a turned ace that belongs to no one gives the dealer no such trick, so the dealer may
    pass. The dealer must still play when everyone before has passed."""
    t = Table(SEPARATE_HANDS, dealer=2, num_players=3, turned="AH", rules="separate_trump_card")
    t.stay(0)
    t.pass_(1)
    assert t.can_pass()
    u = Table(SEPARATE_HANDS, dealer=2, num_players=3, turned="AH", rules="separate_trump_card")
    u.pass_(0)
    u.pass_(1)
    assert not u.can_pass()


def test_separate_trump_card_is_out_of_play_for_the_cinch() -> None:
    """The turned card can never be played, so it is seen and out of play: with the AH turned, K-Q-J of hearts are
    the three highest trumps in play, a cinch, and seat 0 must lead one of them. Nobody ever holds the AH.
    Seat 0 takes three tricks, seat 1 two, the dealer none: 3 antes won, matched by the bourré dealer."""
    t = Table(SEPARATE_HANDS, dealer=2, num_players=3, turned="AH", rules="separate_trump_card")
    t.decide({0: "", 1: "", 2: ""})
    assert t.cinch(0)
    assert t.legal() == cardset("KH QH JH")
    ace = cards.parse_card("AH")
    for plays in ("KH 2D 4C", "QH 3D 5C", "JH 4D 6C", "2C KC 7C", "AC 8C 3C"):
        assert all(ace not in t.hand_ids(q) for q in range(3))
        t.trick(plays)
    assert t.tricks() == [3, 2, 0]
    assert t.rewards() == [2.0, -1.0, -4.0]
    assert t.s[core.S_FACE_STATE] == core.FACE_DEAD


def test_standard_dealer_holding_the_ace_denies_that_cinch() -> None:
    """The same hands in the standard game, the AH being the dealer's turned card: K-Q-J is no cinch while the
    dealer plays (the dealer holds the ace)."""
    t = Table({0: "KH QH JH 2C 3C", 1: "AC KC 2D 3D 4D", 2: "4C 5C 6C 7C AH"}, dealer=2, num_players=3)
    t.decide({0: "", 1: "", 2: ""})
    assert not t.cinch(0)


def test_separate_trump_card_in_every_observation() -> None:
    """The turned card is public from the first decision: every seat sees it as the face card, out of play
    (``face_status`` "dead or separate"), and no seat's hand holds it."""
    t = Table(SEPARATE_HANDS, dealer=2, num_players=3, turned="AH", rules="separate_trump_card")
    for q in range(3):
        obs = observation.as_dict(t.env.observe(f"player_{q}")["observation"])
        assert np.flatnonzero(obs["face_card"]).tolist() == [cards.parse_card("AH")]
        assert obs["face_status"].tolist() == [0.0, 1.0, 0.0]
        assert obs["trump"].tolist() == [0.0, 0.0, 1.0, 0.0]
        assert obs["hand"].sum() == 5 and obs["hand"][cards.parse_card("AH")] == 0
    t.raw.render_mode = "ansi"
    assert "(turned AH, separate, no one's)" in str(t.raw.render())


def test_separate_trump_card_never_reshuffled_into_the_stock() -> None:
    """Eight players all discarding five run the stock out twice; the turned card is in no hand, stock or pile,
    and every card of the deck is in exactly one place throughout."""
    rules = presets["separate_trump_card"].replace(num_players=8)
    t = CoreTable(rules, {}, dealer=0, turned="AS")
    face = cards.parse_card("AS")
    while t.phase == core.DRAW_OR_PASS:
        t.stay(t.seat, cards.to_strs(t.hand_ids(t.seat)))
        assert sorted(card_locations(t.s, rules)) == list(range(52))
        assert all(face not in t.hand_ids(q) for q in range(8))
    assert t.s[core.S_RESHUFFLES] == 3  # 11 cards of stock, then 10 discards at a time
    assert t.phase == core.PLAY and t.s[core.S_FACE] == face and t.trump == "S"


def test_build_deck_places_the_separate_trump_card() -> None:
    rules = presets["separate_trump_card"].replace(num_players=3)
    deck = build_deck(rules, 1, {0: "2C 3C 4C 5C 6C"}, stock="KS", turned="AS")
    assert deck[15] == cards.parse_card("AS") and deck[16] == cards.parse_card("KS")
    with pytest.raises(ValueError, match="turned"):
        build_deck(rules, 1, {})
    with pytest.raises(ValueError, match="turned"):
        build_deck(Rules(num_players=3), 1, {}, turned="AS")


# ====================================================================== separate_trump_card_dealer_may_take

TAKE = "separate_trump_card_dealer_may_take"
STOCK = "9S 10S JS QS KS"


def _take_table(turned: str = "AH", **options: Any) -> Table:
    return Table(SEPARATE_HANDS, dealer=2, num_players=3, stock=STOCK, turned=turned, rules=TAKE, **options)


def test_dealer_decides_holding_six_cards() -> None:
    """separate_trump_card (b), seed 000: "The dealer effectively has six cards". The turned card is dealt after
    the hands; the dealer's hand shows it as a sixth card (face status "dealer's hand"), every seat sees it
    turned."""
    t = _take_table()
    assert t.hand(2) == cardset("4C 5C 6C 7C 8C AH")
    assert t.s[core.S_FACE_STATE] == core.FACE_IN_HAND and t.trump == "H"
    assert sorted(card_locations(t.s, t.rules)) == list(range(52))
    for q, size in ((0, 5), (2, 6)):
        obs = observation.as_dict(t.env.observe(f"player_{q}")["observation"])
        assert obs["hand"].sum() == size
        assert np.flatnonzero(obs["face_card"]).tolist() == [cards.parse_card("AH")]
        assert obs["face_status"].tolist() == [1.0, 0.0, 0.0]
    t.raw.render_mode = "ansi"
    assert "(turned AH, separate, the dealer may take it)" in str(t.raw.render())


def test_dealer_takes_the_card_discarding_four_draws_three() -> None:
    """Seed 000: "if for example the dealer discards four cards and elects to use the turned up trump, three
    replacement cards will be dealt to make up the dealer's five-card hand". The announced count is 4; the dealer
    then holds the AH, known to all, so K-Q-J of hearts is no cinch for seat 0."""
    t = _take_table()
    t.decide({0: "", 1: "", 2: "4C 5C 6C 7C"})
    assert t.hand(2) == cardset("8C AH 9S 10S JS")
    assert t.s[core.S_NDISCARD + 2] == 4
    assert t.s[core.S_STOCK_POS] == 3
    assert t.s[core.S_FACE_STATE] == core.FACE_IN_HAND
    assert not t.cinch(0)
    assert sorted(card_locations(t.s, t.rules)) == list(range(52))
    t.raw.render_mode = "ansi"
    assert "(turned AH, taken by the dealer)" in str(t.raw.render())
    t.play(0, "KH")
    assert t.legal() == cardset("AC KC 2D 3D 4D")  # void in hearts, no trump: any card
    t.play(1, "2D")
    assert t.legal() == cardset("AH")  # the dealer must overtrump with the card taken
    t.play(2, "AH")
    assert t.s[core.S_TRICK_WINNER + 0] == 2


def test_dealer_takes_the_card_with_one_discard_draws_nothing() -> None:
    """Keeping the turned card, the dealer discards one card of the hand and draws none."""
    t = _take_table()
    t.decide({0: "", 1: "", 2: "8C"})
    assert t.hand(2) == cardset("4C 5C 6C 7C AH")
    assert t.s[core.S_NDISCARD + 2] == 1 and t.s[core.S_STOCK_POS] == 0


def test_dealer_leaves_the_card_which_is_then_dead() -> None:
    """Leaving the turned card (discarding it) the dealer draws one card for each card of the hand discarded; the
    card is then public and out of play, so K-Q-J of hearts is a cinch for seat 0 (led from the top)."""
    t = _take_table()
    t.decide({0: "", 1: "", 2: "AH 4C 5C"})
    assert t.hand(2) == cardset("6C 7C 8C 9S 10S")
    assert t.s[core.S_NDISCARD + 2] == 2 and t.s[core.S_STOCK_POS] == 2
    assert t.s[core.S_FACE_STATE] == core.FACE_DEAD
    assert t.cinch(0)
    assert t.legal() == cardset("KH QH JH")
    assert sorted(card_locations(t.s, t.rules)) == list(range(52))
    obs = observation.as_dict(t.env.observe("player_0")["observation"])
    assert obs["face_status"].tolist() == [0.0, 1.0, 0.0]
    assert obs["discard_count"][2].tolist() == [0, 0, 1, 0, 0, 0, 0]  # the dealer sits 2 places to seat 0's left


@pytest.mark.parametrize(("max_discard", "stays"), [(None, 63), (3, 51)])
def test_dealer_holding_six_must_discard_one(max_discard: int | None, stays: int) -> None:
    """To make up a five-card hand the dealer must discard at least one of the six: standing pat is refused. At most
    ``max_discard`` cards of the hand go: every non-empty set of the six positions (63), or with a limit of 3 those
    with at most 3 of the hand's five (2 * 26 - 1 = 51)."""
    t = _take_table(max_discard=max_discard)
    t.stay(0)
    t.stay(1)
    assert _stay_sizes(t) == set(range(1, 7 if max_discard is None else 5))
    assert sum(1 for a in np.flatnonzero(t._mask()) if actions.is_stay(int(a))) == stays
    with pytest.raises(ValueError, match="illegal action"):
        t.stay(2, "")
    if max_discard is not None:
        with pytest.raises(ValueError, match="illegal action"):
            t.stay(2, "4C 5C 6C 7C")  # four of the hand, keeping the AH
        t.stay(2, "AH 4C 5C 6C")  # three of the hand, and the turned card left


def test_dealer_may_take_a_turned_ace_so_must_play() -> None:
    """A turned ace the dealer may take is a sure trick for the dealer: "If the turned-up card is an ace, the dealer
    must play" applies (unlike a card that belongs to no one)."""
    t = _take_table()
    t.stay(0)
    t.pass_(1)
    assert not t.can_pass()


def test_dealer_passes_and_the_turned_card_is_out_of_play() -> None:
    """A dealer who passes does not take the card: it is out of play. Seat 0's A-K-J of hearts, the QH turned and
    not taken, are the three highest trumps in play: a cinch, led with the A or the equivalent K (the QH, out of
    play but never played, does not join the J to the run)."""
    t = Table(
        {0: "AH KH JH 2C 3C", 1: "AC KC 2D 3D 4D", 2: "4C 5C 6C 7C 8C"},
        dealer=2,
        num_players=3,
        turned="QH",
        rules=TAKE,
    )
    t.decide({0: "", 1: ""})
    assert t.phase == core.PLAY and t.s[core.S_DECISION + 2] == core.PASSED
    assert t.cinch(0)
    assert t.legal() == cardset("AH KH")
    t.raw.render_mode = "ansi"
    assert "(turned QH, separate, not taken)" in str(t.raw.render())


# ====================================================================== two_round_declaration

TWO = "two_round_declaration"


def _relative(obs_seat: int, seat: int, n: int) -> int:
    return (seat - obs_seat) % n


def test_two_rounds_declare_then_draw_in_turn() -> None:
    """two_round_declaration: "first everyone declares play (paying the second ante) or pass in turn; then the
    players who play discard and draw in turn". Antes 10 + 3 = 13; seat 0 declares play (14), seat 1 passes and
    lays its hand down, the dealer declares (15). Only then does seat 0 draw (two cards of the stock), and then the
    dealer; seat 1 is skipped. The draw round has no pass."""
    t = Table(BOURRE_HANDS, dealer=2, num_players=3, pot=10, stock="9S 10S JS", rules=TWO)
    assert t.phase == core.DECLARE and t.pot == 13 and t.seat == 0
    assert np.flatnonzero(t._mask()).tolist() == [actions.PASS, actions.DECLARE_PLAY]
    assert actions.describe(actions.DECLARE_PLAY, phase=core.DECLARE) == "declare play"
    assert actions.describe(actions.DECLARE_PLAY) == "play, stand pat"
    t.raw.render_mode = "ansi"
    text = str(t.raw.render())
    assert "declare play or pass" in text and "53=declare play" in text
    with pytest.raises(ValueError, match="53 \\(declare play\\)"):
        t.act(0, actions.stay("2C", t.hand_ids(0)))  # no discard while declaring
    t.declare(0)
    assert t.pot == 14 and t.hand(0) == cardset(BOURRE_HANDS[0])
    seen = observation.as_dict(t.env.observe("player_1")["observation"])
    assert seen["phase"].tolist() == [1.0, 0.0]
    assert seen["decision"][_relative(1, 0, 3)].tolist() == [0.0, 0.0, 1.0]  # declared: playing...
    assert not seen["discard_count"][_relative(1, 0, 3)].any()  # ...with no discard count yet
    assert seen["decision"][0].tolist() == [1.0, 0.0, 0.0] and seen["to_act"][0] == 1.0
    t.pass_(1)
    assert t.hand(1) == set() and t.pot == 14
    t.declare(2)
    assert t.phase == core.DRAW and t.pot == 15 and t.seat == 0
    assert not t.can_pass()
    assert _stay_sizes(t) == set(range(6))
    with pytest.raises(ValueError, match="illegal action"):
        t.pass_(0)
    assert "·  draw  ·" in str(t.raw.render())
    t.stay(0, "2C 3C")
    assert t.hand(0) == cardset("AH KH QH 9S 10S") and t.s[core.S_NDISCARD] == 2
    assert t.seat == 2  # the passed seat 1 does not draw
    t.stay(2, "4C")
    assert t.hand(2) == cardset("5C 6C 7C 2H JS")
    assert t.phase == core.PLAY and t.seat == 0 and t.pot == 15


def test_two_rounds_chips_as_double_ante() -> None:
    """The same 3-2-0 deal as double_ante: 13 + three second chips = 16, won by seat 0 (+14), matched by the
    bourré dealer (-18); everyone antes the next deal: 16 + 3 = 19, which starts with a declaration round."""
    t = _bourre_deal(pot=10, rules=TWO, deals_per_episode=2)
    assert t.rewards() == [14.0, -2.0, -18.0]
    assert t.pot == 19 and t.deal_rewards() == [-1, -1, -1]
    assert t.phase == core.DECLARE and t.seat == 1  # the deal passed to seat 0


def test_two_rounds_lone_player_wins_without_drawing() -> None:
    """A lone player "wins all five tricks without play", so nobody draws: the stock is untouched. Pot 3 + 1."""
    t = Table({}, dealer=2, num_players=3, rules=TWO)
    t.declare(0)
    t.pass_(1)
    assert t.can_pass()  # one player before the dealer came in
    t.pass_(2)
    assert t.tricks() == [5, 0, 0] and t.s[core.S_STOCK_POS] == 0 and t.s[core.S_NDISCARD] == -1
    assert t.rewards() == [2.0, -1.0, -1.0]


def test_two_rounds_dealer_must_declare_play() -> None:
    """The dealer declares last, and must play when everyone before passed (then wins alone: +2) or when the turned
    card is an ace."""
    t = Table({}, dealer=2, num_players=3, rules=TWO)
    t.pass_(0)
    t.pass_(1)
    assert not t.can_pass()
    assert np.flatnonzero(t._mask()).tolist() == [actions.DECLARE_PLAY]
    t.declare(2)
    assert t.rewards() == [-1.0, -1.0, 2.0]
    u = Table({2: "4C 5C 6C 7C AH"}, dealer=2, num_players=3, rules=TWO)
    u.declare(0)
    u.declare(1)
    assert not u.can_pass()
    u.declare(2)
    assert u.phase == core.DRAW and u.seat == 0


def test_two_rounds_in_the_batch_api() -> None:
    """``BatchGame`` runs the declaration round with the same rules: every row starts declaring (pass or 53); after
    five declarations of play the rows are in the draw round (no pass), each pot 5 antes + 5 second chips."""
    g = BatchGame(batch_size=4, seed=0, rules=TWO, num_players=5)
    assert (g.states[:, core.S_PHASE] == core.DECLARE).all()
    for _ in range(5):
        masks = g.legal_masks()
        assert (np.flatnonzero(masks.any(axis=0)) == [actions.PASS, actions.DECLARE_PLAY]).all()
        g.step(np.full(4, actions.DECLARE_PLAY))
    assert (g.states[:, core.S_PHASE] == core.DRAW).all() and (g.states[:, core.S_POT] == 10).all()
    masks = g.legal_masks()
    assert not masks[:, actions.PASS].any() and masks[:, actions.STAY_BASE : actions.STAY_BASE + 32].all()


# ====================================================================== simultaneous_declaration

SIM = "simultaneous_declaration"


def _decisions(t: Table, viewer: int) -> list[int]:
    """Each seat's decision (0 pending, 1 passed, 2 playing) as ``viewer``'s observation shows it."""
    obs = observation.as_dict(t.env.observe(f"player_{viewer}")["observation"])
    return [int(np.argmax(obs["decision"][_relative(viewer, q, t.n)])) for q in range(t.n)]


def test_simultaneous_declarations_are_secret_until_revealed_together() -> None:
    """simultaneous_declaration: "the play/pass decisions are made without seeing anyone else's, and revealed
    together; discards then follow in turn". Seat 0 declares play, seat 1 passes: each sees only its own choice,
    the dealer (last) sees both pending, and the pot is still the antes. The dealer's declaration reveals all:
    seat 1's hand is laid down and seat 0 draws first."""
    t = Table(BOURRE_HANDS, dealer=2, num_players=3, pot=10, stock="9S 10S", rules=SIM)
    assert t.phase == core.DECLARE and t.pot == 13
    t.declare(0)
    t.pass_(1)
    assert _decisions(t, 0) == [2, 0, 0]
    assert _decisions(t, 1) == [0, 1, 0]
    assert _decisions(t, 2) == [0, 0, 0]
    assert t.pot == 13 and np.flatnonzero(t._mask()).tolist() == [actions.PASS, actions.DECLARE_PLAY]
    t.raw.render_mode = "ansi"
    text = str(t.raw.render())
    assert "passed" not in text and "playing" not in text
    t.declare(2)
    for viewer in range(3):
        assert _decisions(t, viewer) == [2, 1, 2]
    assert t.hand(1) == set() and t.phase == core.DRAW and t.seat == 0 and not t.can_pass()
    t.stay(0, "2C 3C")
    assert t.hand(0) == cardset("AH KH QH 9S 10S")
    t.stay(2, "")
    assert t.phase == core.PLAY and t.pot == 13


def test_simultaneous_chips_as_standard() -> None:
    """The chip held in a closed fist is a token: the standard antes and payments. The 3-2-0 deal: pot 13 won by
    seat 0 (+12), matched by the bourré dealer (-14), who skips the next ante: 13 + 2 = 15."""
    t = _bourre_deal(pot=10, rules=SIM, deals_per_episode=2)
    assert t.rewards() == [12.0, -1.0, -14.0]
    assert t.pot == 15 and t.deal_rewards() == [-1, -1, 0]


def test_simultaneous_play_ante_is_paid_at_the_reveal() -> None:
    """With a ``play_ante`` the chips go in at the reveal, so that the pot does not tell the declarations: 13 until
    the dealer declares, then 16."""
    t = Table(BOURRE_HANDS, dealer=2, num_players=3, pot=10, rules=SIM, play_ante=1)
    t.declare(0)
    t.declare(1)
    assert t.pot == 13
    t.declare(2)
    assert t.pot == 16 and t.deal_rewards() == [-2, -2, -2]


def test_simultaneous_dealer_may_pass_and_plays_if_everyone_passed() -> None:
    """The dealer cannot see that everyone else passed, so may pass; if everyone passed the dealer plays after all
    ("a deal always has a player"), alone, and takes the 3 antes: +2. A turned ace still binds the dealer."""
    t = Table({}, dealer=2, num_players=3, rules=SIM)
    t.pass_(0)
    t.pass_(1)
    assert t.can_pass()
    t.pass_(2)
    assert t.tricks() == [0, 0, 5] and t.rewards() == [-1.0, -1.0, 2.0]
    u = Table({2: "4C 5C 6C 7C AH"}, dealer=2, num_players=3, rules=SIM)
    u.pass_(0)
    u.pass_(1)
    assert not u.can_pass()


def test_simultaneous_no_observation_reveals_another_declaration() -> None:
    """Every combination of declarations of seats 0..2 (dealer 3, with a ``play_ante`` so that a pot could tell):
    until the dealer has declared, what each seat observes (and its mask) depends on its own declaration only."""
    seen: dict[tuple[int, int, int], bytes] = {}
    for pattern in range(8):
        choices = [actions.DECLARE_PLAY if pattern >> q & 1 else actions.PASS for q in range(3)]
        t = Table({}, dealer=3, num_players=4, rules=SIM, play_ante=1)
        for j in range(4):
            for viewer in range(4):
                obs = t.env.observe(f"player_{viewer}")
                own = pattern >> viewer & 1 if viewer < j else -1
                key = (j, viewer, own)
                view = obs["observation"].tobytes() + obs["action_mask"].tobytes()
                assert seen.setdefault(key, view) == view, f"seat {viewer} sees others' declarations: {key}"
            if j < 3:
                t.act(j, choices[j])
    assert len(seen) == 4 + 5 + 6 + 7  # after j declarations: j seats with two possible views, the rest one


def test_simultaneous_in_the_batch_api() -> None:
    """``BatchGame``: after four secret declarations of play, the observation of the dealer (to act) in each row
    shows every other seat pending; after the fifth, all playing and the draw round."""
    g = BatchGame(batch_size=3, seed=1, rules=SIM, num_players=5)
    for _ in range(4):
        g.step(np.full(3, actions.DECLARE_PLAY))
    obs = g.observations()
    at = observation.O_DECISION
    assert (obs[:, at : at + 15].reshape(3, 5, 3)[:, 1:, 0] == 1).all()
    g.step(np.full(3, actions.DECLARE_PLAY))
    assert (g.states[:, core.S_PHASE] == core.DRAW).all()
    assert (g.states[:, core.S_DECISION : core.S_DECISION + 5] == core.PLAYING).all()


# ====================================================================== four_card

FOUR = "four_card"
# Dealer seat 2, a separate 2H turns hearts: seat 0 holds trumps, seat 1 neither a trump nor a club, the dealer
# clubs (a "dirty club") and a spade.
FOUR_HANDS = {0: "AH KH QH 2S", 1: "2D 3D 4D 5D", 2: "4C 5C 6C 7S"}


def _four_to_second_pass(**options: Any) -> Table:
    """Seat 0 and the dealer declare play (1 chip each), seat 1 may only pass; seat 0 draws 3S for its 2S, the
    dealer stands pat. Pot 10 + 3 antes + 2 = 15."""
    t = Table(FOUR_HANDS, dealer=2, num_players=3, pot=10, stock="3S 4S", turned="2H", rules=FOUR, **options)
    assert t.phase == core.DECLARE and t.pot == 13 and t.trump == "H"
    assert np.flatnonzero(t._mask()).tolist() == [actions.PASS, actions.DECLARE_PLAY]
    t.declare(0)
    assert np.flatnonzero(t._mask()).tolist() == [actions.PASS]  # no trump, no club: pass only
    with pytest.raises(ValueError):
        t.declare(1)
    t.pass_(1)
    t.declare(2)
    assert t.pot == 15 and t.phase == core.DRAW and t.seat == 0
    stays = np.flatnonzero(t._mask())
    assert len(stays) == 15 and stays.max() == actions.STAY_BASE + 0b0111 + 0b1000 - 1  # up to 3 of the 4
    assert not t._mask()[actions.STAY_BASE + 0b1111] and not t.can_pass()
    t.stay(0, "2S")
    t.stay(2, "")
    assert t.hand(0) == cardset("AH KH QH 3S")
    assert t.phase == core.SECOND_PASS and t.seat == 0 and t.pot == 15
    return t


def test_four_card_entry_draw_and_second_pass() -> None:
    """four_card: "four cards each, a separate trump card belonging to no one; to play a player must hold a trump or
    a club; up to 3 of the 4 cards may be discarded; after the draw a second chance to pass, those who stay pay one
    more chip". Both stay (pot 17); seat 0 takes 3 tricks and the pot: 17 - 3 = +14; the dealer, with one trick
    (7S over 3S), is not bourré: -3; seat 1 lost its ante."""
    t = _four_to_second_pass()
    assert np.flatnonzero(t._mask()).tolist() == [actions.PASS, actions.SECOND_STAY]
    assert actions.describe(actions.SECOND_STAY, phase=core.SECOND_PASS) == "stay (pay to play on)"
    assert actions.describe(actions.PASS, phase=core.SECOND_PASS) == "pass (drop out)"
    obs = observation.as_dict(t.env.observe("player_0")["observation"])
    assert obs["phase"].tolist() == [1, 0]
    t.act(0, actions.SECOND_STAY)
    assert t.pot == 16 and t.seat == 2
    t.act(2, actions.SECOND_STAY)
    assert t.phase == core.PLAY and t.pot == 17
    assert [t.trick(plays) for plays in ("AH 4C", "KH 5C", "QH 6C", "3S 7S")] == [0, 0, 0, 2]
    assert t.tricks() == [3, 0, 1] and t.rewards() == [14.0, -1.0, -3.0]


def test_four_card_second_pass_drop_out_leaves_a_lone_winner() -> None:
    """A player who passes after the draw is out of the deal: not bourré, the chips paid stay in the pot. Seat 0
    stays (16), the dealer passes (-2): seat 0 alone wins every trick without play, 16 - 3 = +13; everyone antes the
    next deal (3). If seat 0 passes first instead, the dealer is left alone and wins without paying to stay: +13."""
    t = _four_to_second_pass(deals_per_episode=2)
    t.act(0, actions.SECOND_STAY)
    t.act(2, actions.PASS)
    assert t.tricks() == [4, 0, 0] and t.s[core.S_CHIPS : core.S_CHIPS + 3].tolist() == [13, -1, -2]
    assert t.pot == 3 and t.deal_rewards() == [-1, -1, -1] and t.phase == core.DECLARE
    u = _four_to_second_pass()
    u.act(0, actions.PASS)
    assert u.hand(0) == set()
    assert u.tricks() == [0, 0, 4] and u.rewards() == [-2.0, -1.0, 13.0]


def test_four_card_dealer_must_play_without_a_trump_or_club() -> None:
    """The entry requirement yields to "a deal always has a player": everyone before the dealer passed, so the
    dealer plays (and, alone, takes 3 antes + 1 chip: +2) though holding neither a trump nor a club."""
    t = Table({0: "2D 3D 4D 5D", 1: "6D 7D 8D 9D", 2: "2S 3S 4S 5S"}, dealer=2, num_players=3, turned="2H", rules=FOUR)
    t.pass_(0)
    t.pass_(1)
    assert np.flatnonzero(t._mask()).tolist() == [actions.DECLARE_PLAY]
    t.declare(2)
    assert t.tricks() == [0, 0, 4] and t.rewards() == [-1.0, -1.0, 2.0]


@pytest.mark.parametrize(("multiple", "dealer_pays"), [(2, -21.0), (1, -12.0)])
def test_four_card_renege_costs_twice_the_pot(multiple: int, dealer_pays: float) -> None:
    """Seed 000: "The penalty for a renege is twice the pot" (with ``illegal_action="renege"``). Pot 3 antes
    + 3 + 3 = 9. The dealer plays 6C on the 2S lead holding 3S (a renege); seat 0 takes every trick and the 9
    chips (+6), seat 1 is bourré (9: -12), the reneging dealer pays 2 x 9 = 18 (-21), or the pot once with
    ``renege_multiple=1``."""
    t = Table(
        {0: "AH KH 2S 3D", 1: "2C 3C 4C 5C", 2: "6C 7C 8C 3S"},
        dealer=2,
        num_players=3,
        turned="2H",
        rules=FOUR,
        illegal_action="renege",
        renege_multiple=multiple,
    )
    t.decide({0: "", 1: "", 2: ""})
    for seat in (0, 1, 2):
        t.act(seat, actions.SECOND_STAY)
    assert t.pot == 9
    assert [t.trick(plays) for plays in ("2S 2C 6C", "AH 3C 3S", "KH 4C 7C", "3D 5C 8C")] == [0, 0, 0, 0]
    assert t.s[core.S_RENEGED + 2] == 1
    assert t.rewards() == [6.0, -12.0, dealer_pays]


def test_four_card_in_the_batch_api() -> None:
    """``BatchGame``: declaring play where the entry requirement allows it (else pass), standing pat, every row with
    two players or more reaches the second chance to pass, whose mask is exactly pass and 53."""
    g = BatchGame(batch_size=6, seed=3, rules=FOUR, num_players=4)
    seen = 0
    for _ in range(12):
        masks = g.legal_masks()
        phases = g.states[:, core.S_PHASE].copy()
        seen += int((phases == core.SECOND_PASS).sum())
        for b in np.flatnonzero(phases == core.SECOND_PASS):
            assert np.flatnonzero(masks[b]).tolist() == [actions.PASS, actions.SECOND_STAY]
        acts = np.where(masks[:, actions.STAY_BASE] == 1, actions.STAY_BASE, np.argmax(masks, axis=1))
        g.step(acts)
    assert seen > 0


# ====================================================================== dealer_picks_trump

PICK = "dealer_picks_trump"


def test_dealer_names_trump_before_anyone_decides() -> None:
    """dealer_picks_trump: "no card is turned; after looking at all five cards, the dealer names the trump suit
    before anyone decides to play or pass. The dealer's cards all stay hidden." The deal opens with the dealer
    (seat 2), whose only actions are 53..56; no observation shows a trump or a face card until then, and none
    shows a face card after: the dealer's 2H is no one's business. Naming hearts (55) opens the decisions at seat 0.
    """
    t = Table(BOURRE_HANDS, dealer=2, num_players=3, pot=10, rules=PICK)
    assert t.phase == core.NAME_TRUMP and t.seat == 2 and t.pot == 13
    assert np.flatnonzero(t._mask()).tolist() == [actions.NAME_TRUMP_BASE + suit for suit in range(4)]
    assert actions.describe(55, phase=core.NAME_TRUMP) == "name trump hearts"
    for viewer in range(3):
        obs = observation.as_dict(t.env.observe(f"player_{viewer}")["observation"])
        assert not obs["trump"].any() and not obs["face_card"].any() and not obs["face_status"].any()
        assert obs["phase"].tolist() == [1, 0]
    with pytest.raises(ValueError):
        t.act(2, actions.PASS)
    t.act(2, actions.NAME_TRUMP_BASE + 2)
    assert t.trump == "H" and t.phase == core.DRAW_OR_PASS and t.seat == 0
    for viewer in range(3):
        obs = observation.as_dict(t.env.observe(f"player_{viewer}")["observation"])
        assert obs["trump"].tolist() == [0, 0, 1, 0] and not obs["face_card"].any()
    t.raw.render_mode = "ansi"
    assert "named by the dealer, no card turned" in str(t.raw.render())


def test_dealer_picks_trump_chips_as_standard() -> None:
    """Naming hearts, the 3-2-0 deal of double_ante is played out with the standard payments: pot 13 won by seat 0
    (+12), matched by the bourré dealer (-14)."""
    t = Table(BOURRE_HANDS, dealer=2, num_players=3, pot=10, rules=PICK)
    t.act(2, actions.NAME_TRUMP_BASE + 2)
    t.decide({0: "", 1: "", 2: ""})
    assert [t.trick(plays) for plays in BOURRE_TRICKS] == [0, 0, 0, 1, 1]
    assert t.rewards() == [12.0, -1.0, -14.0]


def test_dealer_picks_trump_the_named_suit_decides_the_tricks() -> None:
    """The same hands with clubs named (53) instead: clubs are trumps. Seat 0 leads AH; seat 1, void in hearts, must
    trump (AC or KC); the dealer must follow suit with its only heart, the 2H, which in the standard game was the
    turned trump."""
    t = Table(BOURRE_HANDS, dealer=2, num_players=3, pot=10, rules=PICK)
    t.act(2, actions.NAME_TRUMP_BASE + 0)
    assert t.trump == "C"
    t.decide({0: "", 1: "", 2: ""})
    t.play(0, "AH")
    assert t.legal() == cardset("AC KC")
    t.play(1, "AC")
    assert t.legal() == cardset("2H")


def test_dealer_picks_trump_dealer_may_pass_unless_everyone_passed() -> None:
    """With no turned card there is no ace rule: a dealer holding the ace of the named suit may pass (seat 0, alone,
    takes the 3 antes: +2). The dealer must play when everyone before passed."""
    t = Table({2: "4C 5C 6C 7C AH"}, dealer=2, num_players=3, rules=PICK)
    t.act(2, actions.NAME_TRUMP_BASE + 2)
    t.stay(0, "")
    t.pass_(1)
    assert t.can_pass()
    t.pass_(2)
    assert t.tricks() == [5, 0, 0] and t.rewards() == [2.0, -1.0, -1.0]
    u = Table({}, dealer=2, num_players=3, rules=PICK)
    u.act(2, actions.NAME_TRUMP_BASE + 3)
    u.pass_(0)
    u.pass_(1)
    assert not u.can_pass()


def test_dealer_picks_trump_in_the_batch_api() -> None:
    """``BatchGame``: every row opens with its dealer naming trump (53..56 only); naming spades in every row opens
    the decisions at the dealer's left with spades trump."""
    g = BatchGame(batch_size=4, seed=2, rules=PICK, num_players=5)
    assert (g.states[:, core.S_PHASE] == core.NAME_TRUMP).all()
    assert (g.states[:, core.S_CUR] == g.states[:, core.S_DEALER]).all()
    masks = g.legal_masks()
    assert (masks.sum(axis=1) == 4).all() and masks[:, actions.NAME_TRUMP_BASE : actions.NAME_TRUMP_BASE + 4].all()
    g.step(np.full(4, actions.NAME_TRUMP_BASE + 3))
    assert (g.states[:, core.S_PHASE] == core.DRAW_OR_PASS).all() and (g.states[:, core.S_TRUMP] == 3).all()
    assert (g.states[:, core.S_CUR] == (g.states[:, core.S_DEALER] + 1) % 5).all()
