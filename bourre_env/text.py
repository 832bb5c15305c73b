"""One seat's view of the table in plain English, its legal actions as numbered labels, and a strict reply parser.

Built for players that read text (a language model, a person at a terminal):

>>> obs = env.observe(env.agent_selection)
>>> print(describe_view(obs))                 # the rules in brief, the table, the numbered legal actions
>>> action = parse_reply("2", *decision(obs))  # or "play the Q of hearts", or "QH"

The text is a function of the observation dict alone (``{"observation", "action_mask"}``, what the AEC env gives
the acting seat and what every agent receives), never of the game state. That choice makes the text as honest as the
observation, which ``tests/test_no_leak.py`` holds to the rule that hidden cards never change it, and lets an agent
that has only its observation write the text. Seats are therefore named relative to the observer, as the
observation names them: "you", then "P1" the player on your left, "P2" the one after, and so on clockwise. What the
observation lacks the text lacks too: the chips each player has won or lost over the session are not in it.

Labels: "play the Q of hearts", "pass", "stay, discard 2H 7C", "stay, discard nothing", "declare play", "stay and
pay" (the second chance to pass), "name trump hearts". ``parse_reply`` takes a label, its number in the list or,
for a card to play, the card in notation ("QH", "10h"), and raises a one-line ``ValueError`` listing the choices for
anything else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from bourre_env import core, observation
from bourre_env.actions import discard_cards
from bourre_env.core import cards

__all__ = ["RULES_IN_BRIEF", "Decision", "decision", "action_labels", "parse_reply", "describe_view", "card_name"]

RULES_IN_BRIEF = (
    "Bourré, after the project's rule book (docs/rules.md). Each player holds a hand of cards; one card's suit is "
    "trump. Aces are high: A K Q J 10 9 8 7 6 5 4 3 2. In turn each player passes (out of the deal, risking and "
    "winning nothing more) or stays, discarding some cards face down and drawing as many. Then the players who "
    "stayed play tricks: the first player still in the deal to the dealer's left leads, and the winner of a trick "
    "leads the next. A trick goes to the highest trump in it, else to the highest card of the suit led. You must "
    "follow the suit led if you can, and beat the highest card of that suit so far if you can (unless a trump "
    "already wins the trick); void in the suit led, you must play a trump if you can, beating the highest trump "
    "in the trick if you can; otherwise play any card. A player who is certain of 3 tricks (a cinch) must lead, "
    "or play, the highest trump held. At the end of the deal the player with more tricks than every other player "
    "takes the pot; a tie for most tricks leaves the pot for the next deal. Every player who stayed and took no "
    "trick is bourré and pays the amount of the pot into the next pot. The legal actions listed are exactly what "
    "the rules allow you now."
)
"""The rules of the standard game in a few sentences, consistent with ``docs/rules.md``; ``describe_view`` adds the
house rules of the table that the observation names (hand size, discard limit, play to win, ...)."""

_RANK_WORDS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
_PHASE_WORDS = {
    core.NAME_TRUMP: "the dealer names trump",
    core.DECLARE: "each player declares pass or play",
    core.DRAW_OR_PASS: "each player passes or stays, discarding and drawing",
    core.DRAW: "each declared player discards and draws",
    core.SECOND_PASS: "each player who stayed may still pass, or stay paying",
    core.PLAY: "trick play",
}
_DECISION_WORDS = ("still to decide", "passed", "in the deal")
_FACE_WORDS = ("in the dealer's hand", "out of play (dead)", "played")
_TRUMP_RULES = (
    "the dealer's last card, turned face up, sets trump",
    "a separate card, turned face up and belonging to no one, sets trump",
    "a separate card, turned face up, sets trump, and the dealer, playing, may take it",
    "the dealer names trump after looking at the hand",
)
_DECLARE_RULES = (
    "passing or staying is declared together with the discard",
    "pass or play is declared in a round of its own, before the draw",
    "pass or play is declared in a secret round, revealed when everyone has declared",
)


class Decision(NamedTuple):
    """What labels and parsing need of an observation: the legal action ids, the hand (card ids), the phase code."""

    legal: list[int]
    hand: list[int]
    phase: int


def card_name(card: int) -> str:
    """A card in words: ``"the Q of hearts"``."""
    return f"the {_RANK_WORDS[cards.rank_of(card)]} of {cards.SUIT_NAMES[cards.suit_of(card)]}"


def _ids(one_hot: np.ndarray) -> list[int]:
    return [int(i) for i in np.flatnonzero(one_hot)]


def _index(one_hot: np.ndarray) -> int | None:
    found = _ids(one_hot)
    return found[0] if found else None


def _phase(d: Mapping[str, np.ndarray]) -> int | None:
    """The phase code of an observation split by ``observation.as_dict``; ``None`` when the deal is over."""
    if d["phase"][1]:
        return core.PLAY
    # the decision round's slot is the code of its phase (``core.ROUND_*`` are the phase codes)
    return _index(d["decision_round"])


def decision(obs: Mapping[str, np.ndarray]) -> Decision:
    """The legal actions, hand and phase of an observation dict (``{"observation", "action_mask"}``)."""
    d = observation.as_dict(np.asarray(obs["observation"]))
    phase = _phase(d)
    return Decision(_ids(obs["action_mask"]), _ids(d["hand"]), core.PLAY if phase is None else phase)


def _label(action: int, hand: Sequence[int], phase: int) -> str:
    if 0 <= action < core.NUM_CARDS:
        return f"play {card_name(action)}"
    if action == core.PASS:
        return "pass"
    if phase == core.NAME_TRUMP:
        return f"name trump {cards.SUIT_NAMES[action - core.NAME_TRUMP_BASE]}"
    if phase == core.DECLARE:
        return "declare play"
    if phase == core.SECOND_PASS:
        return "stay and pay"
    dropped = discard_cards(action, list(hand))
    return f"stay, discard {' '.join(cards.to_str(c) for c in dropped)}" if dropped else "stay, discard nothing"


def action_labels(legal: Sequence[int], hand: Sequence[int], phase: int) -> list[str]:
    """One short label per legal action, in the order of ``legal``: "play the Q of hearts", "pass", "stay, discard
    2H 7C", "stay, discard nothing", "declare play", "stay and pay", "name trump hearts". Distinct for distinct
    actions of one decision, so that a label names its action."""
    return [_label(int(a), hand, phase) for a in legal]


def _normal(text: str) -> str:
    # case, runs of spaces, and the quotes, backticks and full stop a chat model wraps an answer in do not matter
    return " ".join(text.strip().strip("`'\"*").strip().rstrip(".").split()).lower()


def _choices(labels: Sequence[str]) -> str:
    return "; ".join(f"{i}. {label}" for i, label in enumerate(labels, 1))


_NUMBERED = re.compile(r"^\(?(\d+)[.):]?\s*(.*)$")


def parse_reply(reply: str, legal: Sequence[int], hand: Sequence[int], phase: int) -> int:
    """The legal action a reply names: a label of ``action_labels`` (case and spacing aside), its number in that list
    (``"3"``, ``"3."``, or ``"3. play the Q of hearts"`` when number and label agree), or, in trick play, a legal
    card in notation (``"QH"``, ``"10h"``). Anything else raises a one-line ``ValueError`` that lists the choices."""
    labels = action_labels(legal, hand, phase)
    if not isinstance(reply, str):
        raise ValueError(f"expected a text reply, got {type(reply).__name__}; choose one of: {_choices(labels)}")
    said = _normal(reply)
    by_label = {label.lower(): int(a) for label, a in zip(labels, legal, strict=True)}
    if said in by_label:
        return by_label[said]
    numbered = _NUMBERED.match(said)
    if numbered:
        number, rest = int(numbered.group(1)), _normal(numbered.group(2))
        if 1 <= number <= len(labels) and (not rest or rest == labels[number - 1].lower()):
            return int(legal[number - 1])
    if phase == core.PLAY and " " not in said:
        try:
            card = cards.parse_card(said)
        except ValueError:
            pass
        else:
            if card in legal:
                return card
            raise ValueError(f"{cards.to_str(card)} is not a legal play now; choose one of: {_choices(labels)}")
    shown = " ".join(reply.split())
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    raise ValueError(
        f"reply {shown!r} names no legal action; answer with a label, its number or (to play a card) the card "
        f"as in QH; choose one of: {_choices(labels)}"
    )


def _who(rel: int) -> str:
    return "you" if rel == 0 else f"P{rel}"


def _house_rules(d: Mapping[str, np.ndarray], n: int, hand_size: int) -> list[str]:
    """The table's rules that the observation names, as sentences."""
    ranks = [_RANK_WORDS[r] for r in _ids(d["deck_ranks"])]
    out = [
        f"{n} players, {hand_size} cards to a hand, so {hand_size} tricks to a deal.",
        "The deck is the full 52 cards." if len(ranks) == 13 else f"The deck holds only the ranks {' '.join(ranks)}.",
    ]
    trump_rule = _index(d["trump_rule"])
    declare_rule = _index(d["declare_rule"])
    out.append(f"Trump: {_TRUMP_RULES[trump_rule or 0]}; {_DECLARE_RULES[declare_rule or 0]}.")
    max_discard = int(round(float(d["options"][3]) * 6))
    if max_discard < hand_size:
        out.append(f"A player discards at most {max_discard} cards.")
    if not d["options"][0]:
        out.append("Play to win: void in the suit led, a player whose trumps cannot win the trick may play any card.")
    if d["options"][1]:
        out.append("A player holding the A, K or Q of trumps must lead one of them.")
    if d["options"][2]:
        out.append("A tie for most tricks divides the pot among the tied players.")
    if d["pot_limit"][0]:
        out.append(f"Pot limit: a winner takes, and a bourré player pays, at most {round(d['pot_limit'][1] * 100)}.")
    if d["ante_rule"][0]:
        out.append(f"A player who declares play adds {round(d['ante_rule'][0])} chips to the pot.")
    if d["entry_rule"][0]:
        out.append("To play, a hand must hold a trump or a club (a dealer who must play plays whatever the hand).")
    if d["entry_rule"][1]:
        out.append(
            f"After the draw, each player who stayed may pass, or stay paying {round(d['entry_rule'][2])} chips."
        )
    if d["penalty_rule"][0]:
        out.append("An illegal card is played as a renege, which costs the pot.")
    return out


def _tricks(d: Mapping[str, np.ndarray], n: int, hand_size: int, playing: int) -> list[str]:
    """The tricks led so far, one line each: the cards in the order played, and the winner of each finished one."""
    rows: list[tuple[int, list[tuple[int, int]]]] = []
    for t in range(hand_size):
        found = _index(d["trick_leader"][t])
        if found is None:
            break
        first: int = found
        played = [(int(c), _index(d["played_by"][c]) or 0) for c in np.flatnonzero(d["played_in"][:, t])]
        rows.append((first, sorted(played, key=lambda cr: (cr[1] - first) % n)))
    won = [_index(d["tricks_won"][q]) or 0 for q in range(n)]
    lines = []
    for t, (leader, played) in enumerate(rows):
        if t + 1 < len(rows):
            winner: int | None = rows[t + 1][0]  # the winner of a trick leads the next
        elif len(played) == playing:  # the last trick led is finished: its winner is the trick not yet accounted
            left = list(won)
            for later in rows[1:]:
                left[later[0]] -= 1
            winner = next((q for q in range(n) if left[q] > 0), None)
        else:
            winner = None
        cards_text = ", ".join(f"{_who(rel)} {cards.to_str(c)}" for c, rel in played) or "nothing yet"
        end = f"; won by {_who(winner)}" if winner is not None else "; under way"
        lines.append(f"Trick {t + 1}, led by {_who(leader)}: {cards_text}{end}.")
    return lines


def describe_view(obs: Mapping[str, np.ndarray], rules_in_brief: bool = True) -> str:
    """The observing seat's view in plain English, from its observation dict alone: the rules in brief (with
    ``rules_in_brief``), the table's house rules, the deal so far, and, when the seat is to act, its legal actions as
    a numbered list of ``action_labels``."""
    d = observation.as_dict(np.asarray(obs["observation"]))
    n = int(np.flatnonzero(d["num_players"])[0]) + 2
    hand_size = int(round(float(d["hand_size"][0]) * 6))
    legal, hand, phase = decision(obs)
    lines = [RULES_IN_BRIEF] if rules_in_brief else []
    lines.append("This table: " + " ".join(_house_rules(d, n, hand_size)))
    lines.append(
        "Seats: you, then P1 on your left, P2 after P1, and so on clockwise"
        + (f" to P{n - 1}." if n > 2 else ".")
        + " Play goes clockwise."
    )
    deal_no = int(round(float(d["deal"][0]) * 10))
    deals_left = int(round(float(d["deal"][1]) * 10))
    where = _PHASE_WORDS.get(phase, "the deal is over") if d["phase"].any() else "the deal is over"
    lines.append(f"Deal {deal_no + 1} of {deal_no + deals_left + 1}; now: {where}.")
    dealer = _index(d["dealer"]) or 0
    lines.append(f"Dealer: {_who(dealer)}. Pot: {int(round(float(d['pot'][0]) * 100))} chips.")
    trump = _index(d["trump"])
    lines.append(f"Trump: {cards.SUIT_NAMES[trump]}." if trump is not None else "Trump: not named yet.")
    face = _index(d["face_card"])
    if face is not None:
        lines.append(f"Turned card: {cards.to_str(face)}, {_FACE_WORDS[_index(d['face_status']) or 0]}.")
    lines.append(f"Your hand: {' '.join(cards.to_str(c) for c in _ids(d['hand'])) or 'no cards'}.")
    own = _ids(d["own_discards"])
    if own:
        lines.append(f"You discarded: {' '.join(cards.to_str(c) for c in own)}.")
    for q in range(n):
        state = _DECISION_WORDS[_index(d["decision"][q]) or 0]
        count = _index(d["discard_count"][q])
        parts = [f"{_who(q)}: {state}"]
        if count is not None:
            parts.append(f"discarded {count}")
        if d["stayed"][q]:
            parts.append("stayed at the second pass")
        won = _index(d["tricks_won"][q]) or 0
        parts.append(f"{won} trick{'' if won == 1 else 's'} won")
        lines.append(", ".join(parts) + ".")
    if d["reshuffled"][0]:
        lines.append("The stock ran out this deal and the discards were shuffled into a new stock.")
    playing = sum(1 for q in range(n) if _index(d["decision"][q]) == core.PLAYING)
    lines += _tricks(d, n, hand_size, playing)
    led = _index(d["led_suit"])
    if led is not None:
        lines.append(f"Suit led to this trick: {cards.SUIT_NAMES[led]}.")
    if d["cinch"][0]:
        lines.append("You have a cinch: you are certain of 3 tricks, so you must play your highest trump.")
    to_act = _index(d["to_act"])
    if not legal:
        lines.append("Nobody is to act." if to_act is None else f"{_who(to_act)} is to act; not you.")
        return "\n".join(lines)
    lines.append("You are to act. Your legal actions:")
    lines += [f"{i}. {label}" for i, label in enumerate(action_labels(legal, hand, phase), 1)]
    return "\n".join(lines)
