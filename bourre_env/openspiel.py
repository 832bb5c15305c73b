"""Bourré as an OpenSpiel game: ``pyspiel.load_game("python_bourre", {...})`` after ``import bourre_env.openspiel``.

OpenSpiel (``pip install bourre-rl[openspiel]``) gives imperfect-information research its tools: CFR and its
variants, exact best responses, NashConv. This module registers Bourré with it as a Python game over the same
compiled rules core as ``bourre_v0``; no rule is written twice.

Parameters are the fields of ``bourre_env.core.rules.Rules`` under the same names, with the ``standard`` game's
defaults, plus ``dealer``. OpenSpiel hands a game every parameter, defaults included, so a preset is given field
by field: ``parameters(rules)`` turns any ``Rules`` (a preset adjusted as usual) into them::

    game = pyspiel.load_game("python_bourre", parameters(Rules.from_options("four_card", num_players=3)))

=========================== ================================================================================
parameter                   meaning
=========================== ================================================================================
num_players ... (every      a ``Rules`` field; an integer field that may be ``None`` takes -1 for ``None``
``Rules`` field)            (``max_discard``, ``max_discard_large_table``, ``pot_limit``, ``second_pass_ante``);
                            ``ranks`` is a count of top ranks (3: A K Q)
dealer                      seat of the first deal's dealer; -1 (the default): a chance node draws it uniformly,
                            as ``bourre_v0`` does
=========================== ================================================================================

Chance nodes, all with explicit outcomes (so a small deck can be walked exhaustively):

- the dealer of the first deal (when ``dealer`` is -1): outcome ``seat``;
- the deal, one card per node (outcome: the card id), seat by seat from the dealer's left. A seat's hand is
  dealt as a sorted set: each node picks the next lowest card of the hand with the probability that it is the
  lowest of a uniformly dealt hand, so the game tree holds each hand once and not once per dealing order. The
  card turned for trump is a node of its own (the dealer's turned card before the dealer's other cards; a
  separate trump card after every hand);
- the draw: after a decision that discards ``k`` cards, ``k`` nodes draw the replacements, again as a sorted
  set, from the stock; when the stock runs out, every card left in it is drawn and the rest come from the
  reshuffled discards and passed hands (the rules' reshuffle), a uniform set of them.

The stock order that the core reads is then arranged to match the drawn cards (see ``_arrange_draw``), so the
history of chance outcomes is the whole of the randomness. Every later deal of an episode
(``deals_per_episode``) is dealt the same way. An episode whose pot passes ``bourre_env.limits.POT_BOUND``
ends there, as ``bourre_v0`` truncates it.

Players' actions are the env's 117 actions (``bourre_env.actions``), legal exactly when ``bourre_v0``'s action
mask allows them. Returns are each player's chip change over the episode (the deal, by default); the game is
general-sum (a carried pot leaves the table). Rewards come only at the end.

Observations come from the project's observer (``bourre_env.observation``): the observation tensor is its
vector and the observation string names its non-zero entries. The information state (perfect recall) is, for
every deal so far, the hand the player was dealt (52 card bits) and, for every finished deal, the player's
observation at its end, followed by the current observation. Within a deal the observer keeps the public
history (decisions, discard counts, every card played, by whom and in which trick) and the player's own
discards, so with the dealt hand it recalls everything the player saw and did; the tests check perfect recall
on small games by walking them. Before the first deal is complete the observation is all zeros.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pyspiel

from bourre_env import actions, core, limits, observation
from bourre_env.card_masks import cards_of
from bourre_env.core import cards
from bourre_env.core.rules import Rules

GAME_NAME = "python_bourre"
_NONE_AS = -1  # an optional integer ``Rules`` field given as -1 is ``None``
_OPTIONAL_INTS = ("max_discard", "max_discard_large_table", "pot_limit", "second_pass_ante")
_RESHUFFLE_SEED = 0
# The core reshuffles with a seeded permutation; _arrange_draw undoes whatever permutation it is, so the seed only
# has to be fixed (the same history then gives the same state, for cloning and serialization).

_DEFAULT_RULES = Rules()


def _parameter_specification() -> dict[str, Any]:
    spec: dict[str, Any] = {"dealer": -1}
    for field in dataclasses.fields(Rules):
        value = getattr(_DEFAULT_RULES, field.name)
        if field.name == "ranks":
            spec["ranks"] = len(value)
        elif field.name in _OPTIONAL_INTS:
            spec[field.name] = _NONE_AS if value is None else int(value)
        elif field.name == "rake":
            spec["rake"] = float(value)
        else:
            spec[field.name] = value
    return spec


_PARAMETER_SPEC = _parameter_specification()


def parameters(rules: Rules, dealer: int = -1) -> dict[str, Any]:
    """The game parameters of a rule configuration (``dealer``: the first dealer's seat, -1 for a chance node)."""
    if rules.rake_fraction != Fraction(float(rules.rake_fraction)).limit_denominator(10**6):
        raise ValueError(f"rake: {rules.rake} is not a float parameter that reads back the same")
    out: dict[str, Any] = {"dealer": dealer}
    for field in dataclasses.fields(Rules):
        value = getattr(rules, field.name)
        if field.name == "ranks":
            if value != tuple(range(cards.NUM_RANKS - len(value), cards.NUM_RANKS)):
                raise ValueError(f"ranks: the game takes a count of top ranks, got {cards.to_strs(value)}")
            out["ranks"] = len(value)
        elif field.name in _OPTIONAL_INTS:
            out[field.name] = _NONE_AS if value is None else int(value)
        elif field.name == "rake":
            out["rake"] = float(rules.rake_fraction)
        else:
            out[field.name] = value
    return out


def rules_from_parameters(params: dict[str, Any]) -> Rules:
    """The ``Rules`` of OpenSpiel game parameters: the ``standard`` game with the given fields changed."""
    unknown = set(params) - set(_PARAMETER_SPEC)
    if unknown:
        raise ValueError(f"{GAME_NAME}: unknown parameter(s) {sorted(unknown)}; known: {sorted(_PARAMETER_SPEC)}")
    options: dict[str, Any] = {}
    for name, value in params.items():
        if name == "dealer":
            continue
        if name in _OPTIONAL_INTS:
            options[name] = None if value == _NONE_AS else value
        else:
            options[name] = value
    return Rules.from_options(None, **options)


def _utility_bound(rules: Rules) -> float:
    """Most chips one player can win or lose in an episode that starts with an empty pot (a loose, safe bound)."""
    n = rules.num_players
    extra = rules.play_ante + (rules.second_pass_ante or 0)
    own_stake = n + extra  # a dealer who antes for all pays n
    carried, worst = 0.0, 0.0
    for _ in range(rules.deals_per_episode):
        pot = carried + n * (1 + extra)  # the most in the pot when the deal settles
        worst += own_stake + pot * rules.renege_multiple  # a bourré (or renege) pays the pot
        carried = pot * (1 + n * rules.renege_multiple)  # the pot left if every player pays it
    return float(min(worst, 4.0 * limits.POT_BOUND))


def _max_game_length(rules: Rules) -> int:
    """Most moves in an episode: every chance node (the dealer, the cards dealt and drawn) and every decision."""
    n, h = rules.num_players, rules.hand_size
    per_deal_decisions = 1 + 3 * n + n * h  # naming trump; declare, draw and second pass per seat; tricks
    per_deal_chance = n * h + 1 + n * (h + 1)  # the hands and turned card; at most a hand's worth drawn per seat
    return 1 + rules.deals_per_episode * (per_deal_decisions + per_deal_chance)


def _game_type() -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="Python Bourre",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=8,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_PARAMETER_SPEC,
    )


_GAME_TYPE = _game_type()


class BourreGame(pyspiel.Game):  # type: ignore[misc]  # untyped base: pyspiel is a C++ extension without stubs
    """Bourré under one ``Rules`` configuration (see the module docstring for the parameters)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        given = dict(params or {})
        self.rules = rules_from_parameters(given)
        limits.check_rules(self.rules)
        self.params = self.rules.params()
        dealer = given.get("dealer", -1)
        n = self.rules.num_players
        if isinstance(dealer, bool) or not isinstance(dealer, int) or not -1 <= dealer < n:
            raise ValueError(
                f"{GAME_NAME}: dealer must be -1 (drawn by chance) or a seat in 0..{n - 1}, got {dealer!r}"
            )
        self.first_dealer = dealer
        self.config_key = json.dumps(given, sort_keys=True)
        bound = _utility_bound(self.rules)
        info = pyspiel.GameInfo(
            num_distinct_actions=core.NUM_ACTIONS,
            max_chance_outcomes=cards.NUM_CARDS,
            num_players=n,
            min_utility=-bound,
            max_utility=bound,
            max_game_length=_max_game_length(self.rules),
        )
        super().__init__(_GAME_TYPE, info, given)

    def new_initial_state(self) -> BourreState:
        return BourreState(self)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict[str, Any] | None = None
    ) -> BourreObserver:
        if params:
            raise ValueError(f"{GAME_NAME}: observation parameters are not supported, got {params}")
        return BourreObserver(self, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False))


@functools.lru_cache(maxsize=64)
def _config(key: str) -> tuple[Rules, np.ndarray]:
    """The rules and the core's parameter vector of a game's parameters given as JSON."""
    rules = rules_from_parameters(json.loads(key))
    return rules, rules.params()


def _sorted_pick_outcomes(pool: list[int], previous: int, remaining: int) -> list[tuple[int, float]]:
    """Chance outcomes for the next lowest card of a uniformly dealt ``remaining``-card set from ``pool``.

    ``previous`` is the set's last (highest) card picked so far, -1 for none: the set's other cards lie above it.
    Card ``c`` is the lowest of the rest with probability C(cards above c, remaining - 1) / C(cards above
    previous, remaining).
    """
    above = [c for c in pool if c > previous]
    total = math.comb(len(above), remaining)
    outcomes = []
    for i, c in enumerate(above):
        ways = math.comb(len(above) - i - 1, remaining - 1)
        if ways:
            outcomes.append((c, ways / total))
    return outcomes


def _mask_cards(mask: int) -> list[int]:
    return cards_of(mask)


# -- accessors of the core state this adapter needs (the offsets stay inside bourre_env) -----------------------
def _phase(s: np.ndarray) -> int:
    return int(s[core.S_PHASE])


def _hand(s: np.ndarray, seat: int) -> int:
    return int(s[core.S_HAND + seat])


def _stock_left(s: np.ndarray) -> list[int]:
    return [int(c) for c in s[core.S_STOCK + s[core.S_STOCK_POS] : core.S_STOCK + s[core.S_STOCK_LEN]]]


def _set_stock_left(s: np.ndarray, order: list[int]) -> None:
    start = core.S_STOCK + int(s[core.S_STOCK_POS])
    s[start : start + len(order)] = order


def _pile(s: np.ndarray) -> list[int]:
    return [int(c) for c in s[core.S_PILE : core.S_PILE + s[core.S_PILE_LEN]]]


def _stock_front(s: np.ndarray, count: int) -> list[int]:
    return [int(c) for c in s[core.S_STOCK : core.S_STOCK + count]]


def _chips(s: np.ndarray, n: int) -> list[float]:
    return [float(v) for v in s[core.S_CHIPS : core.S_CHIPS + n]]


class BourreState(pyspiel.State):  # type: ignore[misc]  # untyped base: pyspiel is a C++ extension without stubs
    """One point of an episode: the core state, plus the chance nodes of a deal or a draw under way."""

    def __init__(self, game: BourreGame) -> None:
        super().__init__(game)
        # The state keeps its rules as a key (the game's parameters as JSON), not as objects: OpenSpiel clones a
        # Python state by deep-copying its attributes, and a deserialized state's game lacks its Python attributes.
        self._config = game.config_key
        self._n = game.rules.num_players
        self._s: np.ndarray | None = None  # the core state, once the first deal is complete
        self._dealer = game.first_dealer
        self._deal_no = 0
        self._dealt_hands: list[list[int]] = []  # per deal: each seat's card mask as dealt
        self._deal_ends: list[list[np.ndarray]] = []  # per finished deal: each seat's observation at its end
        self._terminal = False
        # the deal under way: seats' sorted hand parts, the turned card, the cards not dealt yet
        self._dealing = False
        self._hands: list[list[int]] = []
        self._face = -1
        self._pool: list[int] = []
        # a draw under way: the decision; the cards it draws for sure (the rest of a stock that runs out); the cards
        # the chance nodes pick from, how many, and those picked so far (ascending)
        self._pending = -1
        self._draw_forced: list[int] = []
        self._draw_pool: list[int] = []
        self._draw_need = 0
        self._drawn: list[int] = []
        if self._dealer >= 0:
            self._begin_deal()

    # -- deal ---------------------------------------------------------------------------------------------------
    def _begin_deal(self) -> None:
        self._dealing = True
        self._hands = [[] for _ in range(self._n)]
        self._face = -1
        self._pool = sorted(self._rules.deck_cards())

    def _deal_slot(self) -> tuple[str, int]:
        """What the next deal node picks: ("face", dealer) for a turned card, ("hand", seat) for a hand card, or
        ("done", -1)."""
        rules = self._rules
        h = rules.hand_size
        for k in range(1, self._n + 1):
            seat = (self._dealer + k) % self._n
            if seat == self._dealer and rules.trump_card == "dealer" and self._face < 0:
                return "face", seat
            held = len(self._hands[seat]) + int(seat == self._dealer and rules.trump_card == "dealer")
            if held < h:
                return "hand", seat
        if rules.trump_card in ("separate", "separate_dealer_may_take") and self._face < 0:
            return "face", -1
        return "done", -1

    def _deal_outcomes(self) -> list[tuple[int, float]]:
        kind, seat = self._deal_slot()
        if kind == "face":
            return [(c, 1.0 / len(self._pool)) for c in self._pool]
        own = self._hands[seat]
        size = self._rules.hand_size - int(seat == self._dealer and self._rules.trump_card == "dealer")
        return _sorted_pick_outcomes(self._pool, own[-1] if own else -1, size - len(own))

    def _apply_deal(self, card: int) -> None:
        kind, seat = self._deal_slot()
        if kind == "face":
            self._face = card
        else:
            self._hands[seat].append(card)
        self._pool.remove(card)
        if self._deal_slot()[0] == "done":
            self._start_deal()

    def _deck(self) -> np.ndarray:
        """The core's dealing order for the hands dealt: round the table from the dealer's left, the dealer's turned
        card last of the hands, then a separate trump card, then the stock (arranged at each draw)."""
        rules = self._rules
        n, h = self._n, rules.hand_size
        per_seat = [list(hand) for hand in self._hands]
        if rules.trump_card == "dealer":
            per_seat[self._dealer].append(self._face)
        order = [per_seat[(self._dealer + 1 + i) % n][i // n] for i in range(n * h)]
        if rules.trump_card in ("separate", "separate_dealer_may_take"):
            order.append(self._face)
        return np.asarray(order + self._pool, dtype=np.int64)

    def _start_deal(self) -> None:
        deck = self._deck()
        if self._s is None:
            self._s = core.new_state()
            core.start_episode(self._s, self._params, deck, self._dealer, 0, _RESHUFFLE_SEED)
        else:
            core.next_deal(self._s, self._params, deck, _RESHUFFLE_SEED)
        self._dealing = False
        self._dealt_hands.append([_hand(self._s, q) for q in range(self._n)])

    # -- draw ---------------------------------------------------------------------------------------------------
    def _cards_drawn_by(self, action: int) -> int:
        """How many cards ``action`` draws (0 outside the draw): tried on a copy of the core state."""
        s = self._s
        assert s is not None
        if _phase(s) not in core.DRAW_PHASES:
            return 0
        seat = int(s[core.S_CUR])
        trial = s.copy()
        core.step(trial, self._params, action)
        return core.popcount(_hand(trial, seat) & ~_hand(s, seat))

    def _begin_draw(self, action: int, count: int) -> None:
        """A decision that draws ``count`` cards: from the stock, or, past its end, every card left in it and the
        rest from the reshuffled pile (the chance nodes pick the rest)."""
        s = self._s
        assert s is not None
        stock = _stock_left(s)
        self._pending = action
        if count <= len(stock):
            self._draw_forced, self._draw_pool, self._draw_need = [], stock, count
        else:
            self._draw_forced, self._draw_pool, self._draw_need = stock, _pile(s), count - len(stock)
        self._draw_pool = sorted(self._draw_pool)
        self._drawn = []

    def _draw_outcomes(self) -> list[tuple[int, float]]:
        previous = self._drawn[-1] if self._drawn else -1
        return _sorted_pick_outcomes(self._draw_pool, previous, self._draw_need - len(self._drawn))

    def _apply_draw(self, card: int) -> None:
        self._drawn.append(card)
        if len(self._drawn) < self._draw_need:
            return
        s = self._s
        assert s is not None
        seat = int(s[core.S_CUR])
        before = _hand(s, seat)
        wanted = self._draw_forced + self._drawn
        self._arrange_draw(wanted)
        self._step(self._pending)
        drawn = _hand(s, seat) & ~before
        if drawn != sum(1 << c for c in wanted):
            raise RuntimeError(
                f"{GAME_NAME}: the core drew {cards.to_strs(_mask_cards(drawn))}, expected "
                f"{cards.to_strs(wanted)} (the stock arrangement no longer matches the core)"
            )
        self._pending, self._draw_forced, self._draw_pool, self._draw_need, self._drawn = -1, [], [], 0, []

    def _arrange_draw(self, wanted: list[int]) -> None:
        """Order the stock (and the pile a reshuffle would shuffle) so that the core draws exactly ``wanted``.

        The stock's cards drawn go to its front. When the draw runs past the stock, the core shuffles the pile with
        a permutation that depends on its seed and the pile's length, not on the cards; a trial step on a copy
        shows that permutation, and the pile is laid out so that the permuted pile starts with the cards drawn.
        """
        s = self._s
        assert s is not None
        stock = _stock_left(s)
        from_stock = [c for c in wanted if c in stock]
        _set_stock_left(s, from_stock + [c for c in stock if c not in from_stock])
        if len(from_stock) == len(wanted):
            return
        pile = _pile(s)
        trial = s.copy()
        core.step(trial, self._params, self._pending)
        shuffled = _stock_front(trial, len(pile))  # shuffled[i] == pile[perm[i]]
        perm = [pile.index(c) for c in shuffled]
        from_pile = [c for c in wanted if c not in stock]
        order = from_pile + [c for c in pile if c not in from_pile]
        laid = [0] * len(pile)
        for i, c in enumerate(order):
            laid[perm[i]] = c
        s[core.S_PILE : core.S_PILE + len(pile)] = laid

    # -- moves --------------------------------------------------------------------------------------------------
    def _step(self, action: int) -> None:
        s = self._s
        assert s is not None
        if not core.step(s, self._params, action):
            raise ValueError(f"{GAME_NAME}: illegal action {action} for seat {int(s[core.S_CUR])}")
        phase = _phase(s)
        if phase in (core.DEAL_OVER, core.GAME_OVER):
            self._deal_ends.append([self._observation(q) for q in range(self._n)])
            if phase == core.GAME_OVER or limits.pot_passed_bound(s):
                self._terminal = True
            else:
                self._deal_no += 1
                self._dealer = (self._dealer + 1) % self._n
                self._begin_deal()

    def _observation(self, player: int) -> np.ndarray:
        out = np.zeros(observation.OBS_SIZE, dtype=np.float32)
        if self._s is not None:
            observation.encode(self._s, self._params, player, out)
        return out

    @property
    def _rules(self) -> Rules:
        return _config(self._config)[0]

    @property
    def _params(self) -> np.ndarray:
        return _config(self._config)[1]

    def _is_chance(self) -> bool:
        return self._dealer < 0 or self._dealing or self._pending >= 0

    def current_player(self) -> int:
        if self._terminal:
            return int(pyspiel.PlayerId.TERMINAL)
        if self._is_chance():
            return int(pyspiel.PlayerId.CHANCE)
        assert self._s is not None
        return int(self._s[core.S_CUR])

    def _legal_actions(self, player: int) -> list[int]:
        assert self._s is not None and player == self._s[core.S_CUR]
        mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
        core.legal_actions(self._s, self._params, mask)
        return [int(a) for a in np.flatnonzero(mask)]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        assert self._is_chance()
        if self._dealer < 0:
            return [(seat, 1.0 / self._n) for seat in range(self._n)]
        if self._dealing:
            return self._deal_outcomes()
        return self._draw_outcomes()

    def _apply_action(self, action: int) -> None:
        if self._dealer < 0:
            self._dealer = action
            self._begin_deal()
        elif self._dealing:
            self._apply_deal(action)
        elif self._pending >= 0:
            self._apply_draw(action)
        else:
            draws = self._cards_drawn_by(action)
            if draws:
                self._begin_draw(action, draws)
            else:
                self._step(action)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self._dealer < 0:
                return f"dealer:{action}"
            if self._dealing:
                kind, seat = self._deal_slot()
                return f"turn:{cards.to_str(action)}" if kind == "face" else f"deal:{cards.to_str(action)}>{seat}"
            return f"draw:{cards.to_str(action)}"
        s = self._s
        if s is None:
            return str(action)
        return actions.describe(action, _mask_cards(_hand(s, player)), _phase(s))

    def is_terminal(self) -> bool:
        return self._terminal

    def returns(self) -> list[float]:
        if not self._terminal or self._s is None:
            return [0.0] * self._n
        return _chips(self._s, self._n)

    def __str__(self) -> str:
        """Every hand, the turned card, the stock and the decisions so far: the full state, for debugging."""
        if self._s is None:
            hands = " ".join(f"{q}:{cards.to_strs(h)}" for q, h in enumerate(self._hands))
            return f"dealer {self._dealer}; dealing {hands}"
        s = self._s
        hands = " ".join(f"{q}:{cards.to_strs(_mask_cards(_hand(s, q)))}" for q in range(self._n))
        return (
            f"deal {self._deal_no} dealer {self._dealer} phase {_phase(s)} to act {int(s[core.S_CUR])} "
            f"pot {int(s[core.S_POT])}; hands {hands}; stock {cards.to_strs(_stock_left(s))}"
            + (f"; drawing {cards.to_strs(self._drawn)} for {self._pending}" if self._pending >= 0 else "")
            + (f"; dealing {self._hands}" if self._dealing else "")
        )

    # the observer's views of the state
    def dealt_hands(self, player: int) -> list[int]:
        """The card mask ``player`` was dealt in each deal so far (what the player saw before any decision)."""
        return [hands[player] for hands in self._dealt_hands]

    def deal_end_observations(self, player: int) -> list[np.ndarray]:
        """``player``'s observation at the end of each finished deal."""
        return [ends[player] for ends in self._deal_ends]

    def observation_vector(self, player: int) -> np.ndarray:
        """``player``'s observation now (the project's observer; zeros before the first deal is complete)."""
        return self._observation(player)


_FIELD_NAMES = [f.name for f in observation.FIELDS]
_FIELD_STARTS_LIST = [observation.OFFSETS[f.name] for f in observation.FIELDS]
_FIELD_STARTS = np.asarray(_FIELD_STARTS_LIST)


def observation_text(vector: np.ndarray) -> str:
    """The non-zero entries of an observation vector by field, as indices within the field: ``hand=3,16`` where
    they are all 1, ``pot=0:0.05,1:0.2`` otherwise."""
    nonzero = np.flatnonzero(vector)
    fields = (np.searchsorted(_FIELD_STARTS, nonzero, side="right") - 1).tolist()
    values = vector[nonzero].tolist()
    grouped: dict[int, list[tuple[int, float]]] = {}
    for f, at, value in zip(fields, nonzero.tolist(), values, strict=False):
        grouped.setdefault(f, []).append((at - _FIELD_STARTS_LIST[f], value))
    parts = []
    for f, entries in grouped.items():
        if all(value == 1.0 for _, value in entries):
            parts.append(f"{_FIELD_NAMES[f]}={','.join(str(i) for i, _ in entries)}")
        else:
            parts.append(f"{_FIELD_NAMES[f]}={','.join(f'{i}:{value:.6g}' for i, value in entries)}")
    return " ".join(parts)


class BourreObserver:
    """OpenSpiel's observer interface: ``tensor`` and ``dict`` set by ``set_from``, text by ``string_from``.

    ``perfect_recall=False``: the project's observation vector. ``perfect_recall=True`` (the information state):
    ``dealt_hands`` (deals_per_episode x 52, the hand dealt in each deal so far), ``past_deals`` ((deals_per_episode
    - 1) x observation, the observation at the end of each finished deal) and ``observation`` (now).
    """

    def __init__(self, game: BourreGame, iig_obs_type: pyspiel.IIGObservationType) -> None:
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(
                f"{GAME_NAME}: only the player's own view is provided (private_info=SINGLE_PLAYER, "
                f"public_info=True), got {iig_obs_type}"
            )
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        deals = game.rules.deals_per_episode
        pieces: list[tuple[str, tuple[int, ...]]] = []
        if self.perfect_recall:
            pieces.append(("dealt_hands", (deals, cards.NUM_CARDS)))
            if deals > 1:
                pieces.append(("past_deals", (deals - 1, observation.OBS_SIZE)))
        pieces.append(("observation", (observation.OBS_SIZE,)))
        self.tensor = np.zeros(sum(int(np.prod(shape)) for _, shape in pieces), np.float32)
        self.dict: dict[str, np.ndarray] = {}
        at = 0
        for name, shape in pieces:
            size = int(np.prod(shape))
            self.dict[name] = self.tensor[at : at + size].reshape(shape)
            at += size

    def set_from(self, state: BourreState, player: int) -> None:
        self.tensor.fill(0.0)
        if self.perfect_recall:
            for d, mask in enumerate(state.dealt_hands(player)):
                self.dict["dealt_hands"][d, _mask_cards(mask)] = 1.0
            if "past_deals" in self.dict:
                for d, vector in enumerate(state.deal_end_observations(player)[: self.dict["past_deals"].shape[0]]):
                    self.dict["past_deals"][d] = vector
        self.dict["observation"][:] = state.observation_vector(player)

    def string_from(self, state: BourreState, player: int) -> str:
        now = observation_text(state.observation_vector(player))
        if not self.perfect_recall:
            return now
        parts = [f"p{player}"]
        ends = state.deal_end_observations(player)
        for d, mask in enumerate(state.dealt_hands(player)):
            parts.append(f"deal{d} dealt {cards.to_strs(_mask_cards(mask))}")
            if d < len(ends):
                parts.append(f"end{d} {observation_text(ends[d])}")
        parts.append(f"now {now}")
        return " | ".join(parts)


pyspiel.register_game(_GAME_TYPE, BourreGame)
