"""``style:NAME``: simple players of one habit each, a zoo of fields unlike the agents that trained together.

Self-play, the reference agents and the ladder share a way of playing; a table of people does not. Each style
exaggerates one habit that real players have, so that an agent can be rated against fields it never met
(``bourre eval --candidate ppo --field style:eager-low``; ``python -m train.research.style_zoo`` rates agents
against every style). They read only their own observation and play only legal actions, under every rule option.

================  =====================================  ===================================================
style             enters the deal                        plays a card
================  =====================================  ===================================================
``eager-random``  always                                 a uniformly random legal card
``eager-high``    always                                 its strongest legal card
``eager-low``     always                                 its weakest legal card
``station``       with a trump in hand                   the cheapest card that beats the trick so far, else
                                                         its weakest
``rock``          with two trumps or the ace of trumps   as ``station``
``coin-flip``     at one deal in two, whatever it holds  its strongest legal card
================  =====================================  ===================================================

Every style draws alike: it keeps its trumps and aces and discards the rest (or, where a rule limits the
discards, the legal draw that discards most of them and nothing else). Where the rules ask more of a player it
answers plainly: named trump is the suit it holds most of; a declaration or a second chance to pass follows
whether it enters. A card's strength is its rank, a trump's its rank above every other suit's; a card "beats the
trick so far" when the rules core's ``trick_winner`` would give it the trick if no one played after it.

The rules are small numba-compiled functions over the observation vector and its mask (``decision_kind``,
``strength``, ``trick_so_far``, ``beats``, ``cheapest_winner``, ``keep_trumps_and_aces``, ``named_trump``,
``enters``, ``style_action``), so that one implementation serves ``StyleAgent`` (one observation) and
``agents.batched_styles.BatchedStylePlayer`` (many rows of ``bourre_env.BourreVectorEnv`` in one compiled call).
A style is a pair of codes (``STYLES``): its rule for entering a deal and its rule for playing a card.

Chance. Two styles draw random numbers, each of one kind and only where its habit needs one (``chance_needed``):
``eager-random`` an index among its legal cards at each card it plays (``rng.integers(k)``), ``coin-flip`` a coin
at each decision where it may either pass or enter (``rng.random() < 0.5``). The caller draws from its seeded
generator and hands the result to ``style_action`` as ``chance``; the compiled code draws nothing. The batched
player draws for all its rows at once, in row order, and numpy's vector draws give the numbers that one draw per
row gives: a ``BatchedStylePlayer`` and a ``StyleAgent`` of the same seed fed the same observations in the same
order (in one batch, or in batches of any sizes) make the same decisions.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.base import Observation, legal_actions
from bourre_env.core import NAME_TRUMP_BASE, NUM_ACTIONS, PASS, STAY_BASE, popcount, trick_winner
from bourre_env.core.bits import ACE
from bourre_env.core.cards import NUM_CARDS, NUM_RANKS
from bourre_env.observation import (
    O_HAND,
    O_LEADER,
    O_LED,
    O_PHASE,
    O_PLAYED_BY,
    O_PLAYED_IN,
    O_ROUND,
    O_TRICK_NO,
    O_TRUMP,
    OBS_SIZE,
    ROUND_NAME_TRUMP,
    S,
    T,
)

__all__ = [
    "COIN",
    "ENTERS",
    "KINDS",
    "NO_LEGAL",
    "PLAYS",
    "STYLES",
    "StyleAgent",
    "beats",
    "chance_needed",
    "cheapest_winner",
    "decision_kind",
    "draw_chance",
    "enters",
    "keep_trumps_and_aces",
    "make_style",
    "named_trump",
    "strength",
    "style_action",
    "trick_so_far",
    "trump_suit",
]

# ---------------------------------------------------------------- the codes
ALWAYS, WITH_A_TRUMP, WITH_TWO_TRUMPS_OR_THE_ACE, HALF_THE_TIME = range(4)
ENTERS = ("always", "with a trump", "with two trumps or the ace of trumps", "at one deal in two")
"""The rules for entering a deal, by code."""
RANDOM_CARD, STRONGEST, WEAKEST, CHEAPEST_WINNER = range(4)
PLAYS = ("a random legal card", "its strongest legal card", "its weakest legal card", "the cheapest winner")
"""The rules for playing a card, by code."""

STYLES: dict[str, tuple[int, int]] = {
    "eager-random": (ALWAYS, RANDOM_CARD),
    "eager-high": (ALWAYS, STRONGEST),
    "eager-low": (ALWAYS, WEAKEST),
    "station": (WITH_A_TRUMP, CHEAPEST_WINNER),
    "rock": (WITH_TWO_TRUMPS_OR_THE_ACE, CHEAPEST_WINNER),
    "coin-flip": (HALF_THE_TIME, STRONGEST),
}
"""Each style's rule for entering a deal and for playing a card (codes of ``ENTERS`` and ``PLAYS``: the module's
table)."""

CARD, NAME_TRUMP, ENTER, STAY, ONLY_PASS = range(5)
KINDS = ("card", "name trump", "enter or pass", "stay (draw)", "only pass")
"""The decisions a style tells apart (``decision_kind``), by code."""
NO_LEGAL = -1  # the kind and the action of a mask that allows nothing
COIN = -1  # chance_needed: a coin (rng.random() < 0.5), 1 for heads
_NO_TRICK = T  # trick_no's last entry: play over or not started


# ---------------------------------------------------------------- reading the observation
@njit(cache=True)
def trump_suit(obs: np.ndarray) -> int:
    """The trump suit, -1 until it is named."""
    best = 0
    for suit in range(1, 4):
        if obs[O_TRUMP + suit] > obs[O_TRUMP + best]:
            best = suit
    return best if obs[O_TRUMP + best] > 0.5 else -1


@njit(cache=True)
def hand_bits(obs: np.ndarray) -> int:
    """The seat's hand as a card mask (bit ``c`` for card ``c``)."""
    bits = 0
    for card in range(NUM_CARDS):
        if obs[O_HAND + card] > 0.5:
            bits |= 1 << card
    return bits


@njit(cache=True)
def strength(card: int, trump: int) -> int:
    """A card's rank, 13 more for a trump."""
    return card % NUM_RANKS + (NUM_RANKS if card // NUM_RANKS == trump else 0)


@njit(cache=True)
def decision_kind(obs: np.ndarray, mask: np.ndarray) -> int:
    """What the decision asks (``KINDS``): a card, trump to name, to enter or pass, to stay (the draw, or a
    declaration with no pass), or nothing but a pass; ``NO_LEGAL`` where the mask allows nothing."""
    others = False
    for a in range(mask.shape[0]):
        if mask[a] and a != PASS:
            others = True
            break
    if not others and not mask[PASS]:
        return NO_LEGAL
    if obs[O_PHASE + 1] > 0.5:  # trick play
        return CARD
    if obs[O_ROUND + ROUND_NAME_TRUMP] > 0.5:
        return NAME_TRUMP
    if mask[PASS]:
        return ENTER if others else ONLY_PASS
    return STAY


@njit(cache=True)
def trick_so_far(obs: np.ndarray, cards: np.ndarray) -> int:
    """The trick under way as the rules core reads one: each relative seat's card into ``cards`` (``S`` entries,
    -1: none yet); returns the leader's relative seat, or -1 when the seat leads (``cards`` then untouched)."""
    trick = 0
    for t in range(1, T + 1):
        if obs[O_TRICK_NO + t] > obs[O_TRICK_NO + trick]:
            trick = t
    led = obs[O_LED]
    for suit in range(1, 4):
        led = max(led, obs[O_LED + suit])
    if trick == _NO_TRICK or led < 0.5:
        return -1
    cards[:] = -1
    for card in range(NUM_CARDS):
        if obs[O_PLAYED_IN + T * card + trick] > 0.5:
            at = O_PLAYED_BY + S * card
            seat = 0
            for q in range(1, S):
                if obs[at + q] > obs[at + seat]:
                    seat = q
            cards[seat] = card
    at = O_LEADER + S * trick
    leader = 0
    for q in range(1, S):
        if obs[at + q] > obs[at + leader]:
            leader = q
    return leader


@njit(cache=True)
def beats(cards: np.ndarray, leader: int, card: int, trump: int) -> bool:
    """Whether ``card``, played by this seat (relative seat 0) into the trick ``cards`` led by ``leader``, would win
    it if no one played after it (the core's ``trick_winner``); leaves ``cards[0]`` set to ``card``."""
    cards[0] = card
    return bool(trick_winner(cards, leader, cards.shape[0], trump) == 0)


# ---------------------------------------------------------------- the rules
@njit(cache=True)
def _strongest(mask: np.ndarray, trump: int) -> int:
    """The first legal action of the greatest strength."""
    best, most = -1, -1
    for a in range(mask.shape[0]):
        if mask[a] and strength(a, trump) > most:
            best, most = a, strength(a, trump)
    return best


@njit(cache=True)
def _weakest(mask: np.ndarray, trump: int) -> int:
    """The first legal action of the least strength."""
    best, least = -1, 2 * NUM_RANKS
    for a in range(mask.shape[0]):
        if mask[a] and strength(a, trump) < least:
            best, least = a, strength(a, trump)
    return best


@njit(cache=True)
def cheapest_winner(obs: np.ndarray, mask: np.ndarray, trump: int) -> int:
    """The cheapest legal card that would win the trick if no one played after it, else the weakest; on lead the
    strongest (the first in card order among equals)."""
    cards = np.empty(S, dtype=np.int64)
    leader = trick_so_far(obs, cards)
    if leader < 0:
        return _strongest(mask, trump)
    best, least = -1, 2 * NUM_RANKS
    for a in range(mask.shape[0]):
        if mask[a] and beats(cards, leader, a, trump) and strength(a, trump) < least:
            best, least = a, strength(a, trump)
    return best if best >= 0 else _weakest(mask, trump)


@njit(cache=True)
def keep_trumps_and_aces(obs: np.ndarray, mask: np.ndarray, trump: int) -> int:
    """The draw that discards every card but trumps and aces, or the legal one that discards most of those and
    nothing else (standing pat at least; the greatest discard mask among equals), or the first legal action other
    than a pass."""
    hand = hand_bits(obs)
    wanted = 0  # bit i: the i-th card of the hand (in card order) is to go
    i = 0
    for card in range(NUM_CARDS):
        if hand >> card & 1:
            if card // NUM_RANKS != trump and card % NUM_RANKS != ACE:
                wanted |= 1 << i
            i += 1
    best, best_count = -1, -1
    for a in range(STAY_BASE, mask.shape[0]):
        discard = a - STAY_BASE
        if mask[a] and discard & ~wanted == 0 and popcount(discard) >= best_count:  # a greater mask wins a tie
            best, best_count = a, popcount(discard)
    if best >= 0:
        return best
    for a in range(mask.shape[0]):
        if mask[a] and a != PASS:
            return a
    return NO_LEGAL


@njit(cache=True)
def named_trump(obs: np.ndarray, mask: np.ndarray) -> int:
    """The suit it holds most cards of (the higher of its best cards on a tie)."""
    hand = hand_bits(obs)
    best, best_count, best_top = -1, -1, -2
    for a in range(mask.shape[0]):
        if not mask[a]:
            continue
        suit, count, top = a - NAME_TRUMP_BASE, 0, -1
        for card in range(NUM_CARDS):
            if hand >> card & 1 and card // NUM_RANKS == suit:
                count += 1
                top = card
        if count > best_count or (count == best_count and top > best_top):
            best, best_count, best_top = a, count, top
    return best


@njit(cache=True)
def enters(obs: np.ndarray, rule: int, chance: int, trump: int) -> bool:
    """Whether a style of entering ``rule`` (``ENTERS``) plays the deal; ``chance``: the coin of ``HALF_THE_TIME``
    (1: enter)."""
    if rule == ALWAYS:
        return True
    if rule == HALF_THE_TIME:
        return chance == 1
    hand = hand_bits(obs)
    trumps, ace = 0, False
    for card in range(NUM_CARDS):
        if hand >> card & 1 and card // NUM_RANKS == trump:
            trumps += 1
            ace = ace or card % NUM_RANKS == ACE
    if rule == WITH_A_TRUMP:
        return trumps > 0
    return trumps >= 2 or ace


@njit(cache=True)
def _card(obs: np.ndarray, mask: np.ndarray, rule: int, chance: int, trump: int) -> int:
    """The card of a style of playing ``rule`` (``PLAYS``); ``chance``: the index among the legal cards that
    ``RANDOM_CARD`` plays."""
    if rule == RANDOM_CARD:
        k = 0
        for a in range(mask.shape[0]):
            if mask[a]:
                if k == chance:
                    return a
                k += 1
        return NO_LEGAL
    if rule == STRONGEST:
        return _strongest(mask, trump)
    if rule == WEAKEST:
        return _weakest(mask, trump)
    return cheapest_winner(obs, mask, trump)


@njit(cache=True)
def chance_needed(obs: np.ndarray, mask: np.ndarray, enter_rule: int, play_rule: int) -> int:
    """What chance this decision asks of the style: 0 none, ``COIN`` a coin, ``k`` > 0 an index among its ``k``
    legal cards."""
    kind = decision_kind(obs, mask)
    if kind == CARD and play_rule == RANDOM_CARD:
        k = 0
        for a in range(mask.shape[0]):
            if mask[a]:
                k += 1
        return k
    if kind == ENTER and enter_rule == HALF_THE_TIME:
        return COIN
    return 0


@njit(cache=True)
def style_action(obs: np.ndarray, mask: np.ndarray, enter_rule: int, play_rule: int, chance: int) -> int:
    """The action of the style (``enter_rule``, ``play_rule``) for one observation and its mask, ``chance`` being
    what ``chance_needed`` asked for (anything where it asked nothing); ``NO_LEGAL`` where the mask allows
    nothing."""
    kind = decision_kind(obs, mask)
    if kind == NO_LEGAL:
        return NO_LEGAL
    trump = trump_suit(obs)
    if kind == CARD:
        return _card(obs, mask, play_rule, chance, trump)
    if kind == NAME_TRUMP:
        return named_trump(obs, mask)
    if kind == ONLY_PASS or (kind == ENTER and not enters(obs, enter_rule, chance, trump)):
        return PASS
    return keep_trumps_and_aces(obs, mask, trump)


def draw_chance(rng: np.random.Generator, need: int) -> int:
    """The chance ``chance_needed`` asked for, drawn from ``rng``: a coin (1: heads, at ``rng.random() < 0.5``), an
    index ``rng.integers(need)``, or 0 (nothing drawn)."""
    if need == COIN:
        return int(rng.random() < 0.5)
    return int(rng.integers(need)) if need > 0 else 0


def _kernel_row(array: np.ndarray, dtype: type) -> np.ndarray:
    """``array`` as the compiled rules take a row: C-contiguous, writeable, of ``dtype`` (so that numba compiles
    them once)."""
    row: np.ndarray = np.ascontiguousarray(array, dtype=dtype)
    return row if row.flags.writeable else row.copy()


# ---------------------------------------------------------------- the agent
class StyleAgent:
    """A player of one style (``STYLES``): ``style_action`` on each observation, with the chance it asks drawn from
    the agent's seeded generator."""

    def __init__(self, style: str, seed: int | None = 0) -> None:
        if style not in STYLES:
            raise ValueError(f"unknown style {style!r}; known: {', '.join(STYLES)}")
        self.name = f"style:{style}"
        self.enter_rule, self.play_rule = STYLES[style]
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        pass

    def act(self, observation: Observation) -> int:
        legal_actions(observation)  # a ValueError where the mask allows nothing
        vector = _kernel_row(observation["observation"], np.float32)
        mask = _kernel_row(observation["action_mask"], np.int8)
        if vector.shape != (OBS_SIZE,) or mask.shape != (NUM_ACTIONS,):
            raise ValueError(
                f"observation: expected {OBS_SIZE} entries and a mask of {NUM_ACTIONS}, got shapes {vector.shape} "
                f"and {mask.shape}"
            )
        chance = draw_chance(self.rng, chance_needed(vector, mask, self.enter_rule, self.play_rule))
        return int(style_action(vector, mask, self.enter_rule, self.play_rule, chance))


def make_style(variant: str | None, seed: int | None) -> StyleAgent:
    """``agents.make("style:NAME")``'s factory."""
    if not variant:
        raise ValueError(f"style: name one, style:NAME with NAME one of {', '.join(STYLES)}")
    return StyleAgent(variant, seed)
