"""``bourre play``'s answers to what a person types (train/terminal_game.py)."""

from __future__ import annotations

import io
import sys

import pytest

from bourre_env import actions, core
from bourre_env.core import cards
from train.terminal_game import _choose, _refusal

HAND = cards.parse_many("5C JD 6H 4S 7S")
FOLLOW_CLUBS = [actions.play("5C")]


def test_a_card_not_in_the_hand_is_named_with_the_hand() -> None:
    said = _refusal("AS", FOLLOW_CLUBS, HAND, core.PLAY)
    assert said.startswith("AS is not in your hand (you hold 5C JD 6H 4S 7S)")
    assert "enter a number from 1 to 1" in said


def test_cards_not_in_the_hand_are_all_named() -> None:
    said = _refusal("AS, 5C, KH", FOLLOW_CLUBS, HAND, core.PLAY)
    assert said.startswith("AS KH are not in your hand")


def test_a_held_card_that_may_not_be_played_is_named_with_the_legal_cards() -> None:
    said = _refusal("jd", FOLLOW_CLUBS, HAND, core.PLAY)
    assert said.startswith("JD is not legal now (you may play 5C)")


def test_two_cards_in_trick_play_ask_for_one() -> None:
    assert _refusal("5C 6H", FOLLOW_CLUBS, HAND, core.PLAY).startswith("play one card at a time")


def test_a_discard_that_is_not_allowed_is_named() -> None:
    legal = [core.PASS, *range(core.STAY_BASE, core.STAY_BASE + 31)]  # every discard but all five
    said = _refusal("5C JD 6H 4S 7S", legal, HAND, core.DRAW_OR_PASS)
    assert said.startswith("discarding 5C JD 6H 4S 7S is not one of the choices")


def test_words_that_are_not_cards_ask_for_a_number() -> None:
    assert _refusal("hello", FOLLOW_CLUBS, HAND, core.PLAY) == (
        "'hello' is not one of the choices; enter a number from 1 to 1"
    )


def test_a_card_typed_outside_trick_play_says_when_cards_are_played() -> None:
    said = _refusal("5C", [core.PASS, core.SECOND_STAY], HAND, core.DECLARE)
    assert "cards are played in trick play" in said


def test_the_prompt_explains_a_wrong_card_then_takes_a_right_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("AS\nJD\n5c\n"))
    assert _choose(FOLLOW_CLUBS, HAND, core.PLAY) == actions.play("5C")
    out = capsys.readouterr().out
    assert "AS is not in your hand (you hold 5C JD 6H 4S 7S)" in out
    assert "JD is not legal now (you may play 5C)" in out


def test_a_person_types_discards_a_pass_or_a_card() -> None:
    from bourre_env import actions, core
    from bourre_env.core import cards
    from train.terminal_game import _typed

    hand = cards.parse_many("5C JD 6H 4S 7S")
    legal = [core.PASS, *range(core.STAY_BASE, core.STAY_BASE + 31)]  # every discard but all five
    assert _typed("p", legal, hand, core.DRAW_OR_PASS) == core.PASS
    assert _typed("s", legal, hand, core.DRAW_OR_PASS) == actions.stay([], hand)
    assert _typed("5c, 7S", legal, hand, core.DRAW_OR_PASS) == actions.stay(["5C", "7S"], hand)
    assert _typed("AS", legal, hand, core.DRAW_OR_PASS) is None  # not in the hand
    assert _typed("p", [actions.stay([], hand)], hand, core.DRAW) is None  # no pass in a draw after a declaration
    assert _typed("5C JD 6H 4S 7S", legal, hand, core.DRAW_OR_PASS) is None  # five discards: not among legal
    assert _typed("QH", [actions.play("QH"), actions.play("2H")], hand, core.PLAY) == actions.play("QH")
    assert _typed("QH", [actions.play("2H")], hand, core.PLAY) is None
    assert _typed("hello", legal, hand, core.DRAW_OR_PASS) is None
