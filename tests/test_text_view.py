"""The seat's view in words (``bourre_env.text``): every legal action's label, number and card notation parse back to
it, junk is refused with the choices listed, and relabelling the cards a seat cannot see never changes its text."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_game
from test_no_leak import _relabel_hidden

from bourre_env import core, observation, text
from bourre_env.core import cards
from bourre_env.core.rules import MAX_PLAYERS, MIN_PLAYERS, Rules, presets


def _observe(s: np.ndarray, p: np.ndarray, seat: int) -> dict[str, np.ndarray]:
    obs = np.empty(observation.OBS_SIZE, dtype=np.float32)
    mask = np.empty(core.NUM_ACTIONS, dtype=np.int8)
    observation.observe_with(s, p, seat, obs, mask, core.new_scratch())
    return {"observation": obs, "action_mask": mask}


def _rules(preset: str, n: int) -> Rules | None:
    try:
        return presets[preset].replace(num_players=n)
    except ValueError:  # a preset that cannot be dealt at this table size (the deck too small)
        return None


CONFIGS = [(preset, n) for preset in presets for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)]


@pytest.mark.parametrize(("preset", "n"), CONFIGS)
def test_every_legal_action_round_trips(preset: str, n: int) -> None:
    rules = _rules(preset, n)
    if rules is None:
        pytest.skip(f"{preset} cannot be dealt to {n} players")
    rng = np.random.default_rng(n * 100 + list(presets).index(preset))
    seen_phases: set[int] = set()
    checked = 0
    for game in range(40):  # at least 4 games, and on until one reaches trick play (a lone player does not play)
        if game >= 4 and core.PLAY in seen_phases:
            break
        for s, p in random_game(rules, rng):
            obs = _observe(s, p, int(s[core.S_CUR]))
            legal, hand, phase = text.decision(obs)
            assert legal, "the seat to act has a legal action"
            seen_phases.add(phase)
            labels = text.action_labels(legal, hand, phase)
            assert len(set(labels)) == len(labels), labels
            for number, (action, label) in enumerate(zip(legal, labels, strict=True), 1):
                assert text.parse_reply(label, legal, hand, phase) == action
                assert text.parse_reply(f"  {label.upper()}.  ", legal, hand, phase) == action
                assert text.parse_reply(str(number), legal, hand, phase) == action
                assert text.parse_reply(f"{number}. {label}", legal, hand, phase) == action
                if phase == core.PLAY:
                    assert text.parse_reply(cards.to_str(action), legal, hand, phase) == action
                checked += 1
            view = text.describe_view(obs)
            assert "\n".join(f"{i}. {label}" for i, label in enumerate(labels, 1)) in view
    assert core.PLAY in seen_phases
    assert checked > 50


def test_labels_read_as_the_issue_says() -> None:
    hand = [cards.parse_card(c) for c in ("2H", "7C", "QH", "AS", "10D")]
    assert text.action_labels([cards.parse_card("QH")], hand, core.PLAY) == ["play the Q of hearts"]
    stay = core.STAY_BASE + (1 << sorted(hand).index(cards.parse_card("2H"))) + (1 << sorted(hand).index(0 + 5))
    assert text.action_labels([core.PASS, stay, core.STAY_BASE], hand, core.DRAW_OR_PASS) == [
        "pass",
        "stay, discard 7C 2H",
        "stay, discard nothing",
    ]
    assert text.action_labels([53, 56], [], core.NAME_TRUMP) == ["name trump clubs", "name trump spades"]
    assert text.action_labels([52, 53], hand, core.SECOND_PASS) == ["pass", "stay and pay"]
    assert text.action_labels([52, 53], hand, core.DECLARE) == ["pass", "declare play"]


@pytest.mark.parametrize(
    "reply",
    ["", "  ", "0", "4", "-1", "play", "QS", "the queen", "1 2", "2. pass", "I choose 1", "stay, discard", None],
)
def test_junk_is_refused_with_the_choices_listed(reply: object) -> None:
    hand = [cards.parse_card(c) for c in ("QH", "KH", "2C")]
    legal = [cards.parse_card("QH"), cards.parse_card("KH"), cards.parse_card("2C")]
    with pytest.raises(ValueError) as err:
        text.parse_reply(reply, legal, hand, core.PLAY)  # type: ignore[arg-type]
    message = str(err.value)
    assert "\n" not in message
    assert "1. play the Q of hearts; 2. play the K of hearts; 3. play the 2 of clubs" in message


def test_an_illegal_card_is_named_as_such() -> None:
    hand = [cards.parse_card(c) for c in ("QH", "2C")]
    with pytest.raises(ValueError, match="2C is not a legal play now; choose one of: 1. play the Q of hearts$"):
        text.parse_reply("2c", [cards.parse_card("QH")], hand, core.PLAY)


def test_card_notation_is_only_for_trick_play() -> None:
    hand = [cards.parse_card(c) for c in ("QH", "2C")]
    with pytest.raises(ValueError, match="names no legal action"):
        text.parse_reply("QH", [core.PASS, core.STAY_BASE], hand, core.DRAW_OR_PASS)


@pytest.mark.parametrize(
    ("preset", "n"),
    [
        ("standard", 2),
        ("standard", 5),
        ("standard", 8),
        ("wikipedia", 7),
        ("separate_trump_card_dealer_may_take", 6),
        ("simultaneous_declaration", 6),
        ("four_card", 5),
        ("dealer_picks_trump", 4),
    ],
)
def test_hidden_cards_never_change_the_text(preset: str, n: int) -> None:
    rules = presets[preset].replace(num_players=n)
    rng = np.random.default_rng(7 + n)
    checked = 0
    for _ in range(15):
        for s, p in random_game(rules, rng):
            viewer = int(rng.integers(n)) if rng.random() < 0.5 else int(s[core.S_CUR])
            other = _relabel_hidden(s, rules, viewer, rng)
            assert text.describe_view(_observe(s, p, viewer)) == text.describe_view(_observe(other, p, viewer))
            checked += 1
    assert checked > 100


def test_the_view_names_what_the_seat_knows() -> None:
    rules = Rules(num_players=4)
    rng = np.random.default_rng(3)
    for s, p in random_game(rules, rng):
        if s[core.S_PHASE] == core.PLAY and s[core.S_TRICK_NO] >= 1:
            seat = int(s[core.S_CUR])
            view = text.describe_view(_observe(s, p, seat))
            hand = " ".join(cards.to_str(c) for c in range(52) if int(s[core.S_HAND + seat]) >> c & 1)
            assert f"Your hand: {hand}." in view
            assert f"Pot: {int(s[core.S_POT])} chips." in view
            assert f"Trump: {cards.SUIT_NAMES[int(s[core.S_TRUMP])]}." in view
            assert "Trick 1, led by" in view and "won by" in view
            assert "You are to act. Your legal actions:\n1. play the" in view
            assert text.RULES_IN_BRIEF in view
            assert text.RULES_IN_BRIEF not in text.describe_view(_observe(s, p, seat), rules_in_brief=False)
            return
    pytest.fail("no second trick in the game")
