"""Bourré (Booray): PettingZoo AEC environment ``bourre_v0``.

This docstring is the environment's documentation page. The tables below are checked
against the code by ``tests/test_docs_tables.py``.

=================== =====================================================================
Import              ``import bourre_env; env = bourre_env.env(num_players=5)``
Actions             ``Discrete(117)``, one flat space for the draw decision and trick play
Parallel API        no (turn-based)
Agents              ``player_0`` .. ``player_{n-1}``, seats in clockwise order, 2 to 8
Observation shape   ``(1174,)`` float32, plus ``action_mask`` ``(117,)`` int8
Observation values  [0, 1] except the pot fields (chips / 100) and the rules' chip counts
Observation space   ``Box(0, high)``: ``high`` from the rules, ``limits.observation_bounds``
=================== =====================================================================

The rules are those of ``docs/rules.md``, the project's rule book (the ``standard`` game), with
every option a keyword: ``bourre_env.env(num_players=7, tie="divide", pot_limit=20)``, or one of
its presets by name, adjustable in the same way: ``bourre_env.env(rules="double_ante",
num_players=7)``. See ``docs/rules.md`` and ``bourre_env.core.rules.Rules`` for the fields, their values
and defaults, and the README for a summary.

Arguments
---------
``render_mode``: ``None``, ``"ansi"`` (``render()`` returns text) or ``"human"`` (prints it).
``rules``: a ``Rules`` object or a preset name (below; default ``"standard"``); every other
keyword is a field of ``Rules`` and overrides it.

``reset(seed=None, options=None)``; ``options`` may hold ``"deck"`` (every card of the deck in
dealing order, as card strings or ids: ``deck[0]`` goes to the dealer's left, one card at a
time round the table; with a separate trump card (either ``separate`` value of ``trump_card``)
the next card is the one turned for trump; the cards after them are the stock, drawn from the front),
``"dealer"`` (seat index; default: drawn from the seeded generator) and ``"pot"`` (chips in the
pot before this deal's antes, at most ``POT_BOUND``; default 0). The generator also seeds the reshuffle used when the
stock runs out and the decks of later deals of an episode.

Rule presets
------------
``bourre_env.core.rules.presets``; each is the ``standard`` game with these fields changed.
A row with an empty first column continues the row above.

=================================== ========================================================
name                                fields that differ from ``standard``
=================================== ========================================================
standard                            (none)
double_ante                         play_ante=1, ante_exemptions=False
dealer_antes_for_all                ante_exemptions=False, ante_payer='dealer'
wikipedia                           max_discard_large_table=3,
                                    must_trump_when_cannot_win=False
separate_trump_card                 trump_card='separate'
separate_trump_card_dealer_may_take trump_card='separate_dealer_may_take'
two_round_declaration               play_ante=1, ante_exemptions=False, declaration='two_rounds'
simultaneous_declaration            declaration='simultaneous'
dealer_picks_trump                  trump_card='named_by_dealer'
four_card                           hand_size=4, max_discard=3, play_ante=1, trump_card='separate',
                                    declaration='two_rounds', entry_requirement='trump_or_club',
                                    second_pass_ante=1, renege_multiple=2
=================================== ========================================================

What each preset changes, where it is published and its rules in full are in ``docs/rules.md``
(Presets); ``bourre_env.core.rules.preset_descriptions`` has a line on each. What the env adds: with a
separate trump card the ``deck`` given to ``reset`` holds it right after the hands; with
``separate_trump_card_dealer_may_take`` the dealer decides holding it as a sixth card (in the
dealer's ``hand``, face status "dealer's hand"), and the announced discard count is of the hand's
cards; with ``simultaneous_declaration`` each observation shows every other seat pending (the pot
unchanged: a ``play_ante``, if set, is paid at the reveal) until the dealer, last, has declared;
with ``dealer_picks_trump`` the deal opens with the dealer naming trump (53 + suit: 53 clubs, 54
diamonds, 55 hearts, 56 spades), ``face_card`` and ``face_status`` are 0s and ``trump`` is 0s until
named. All use the same action space and observation.

Phases
------
One decision at a time, by the seat in ``to_act``; the observation's ``phase`` field (decisions /
trick play) and its ``decision_round`` field name the phase.

================ ============== ========================================================
phase            round          decision, legal actions
================ ============== ========================================================
trump naming     trump naming   (``named_by_dealer``) the dealer, first, with ``trump`` all 0s:
                                name trump (53..56: clubs, diamonds, hearts, spades)
declaration      declaration    (``two_rounds``, ``simultaneous``) the seat to act is pending: pass (52) or
                                declare play (53); a declared seat shows playing with no count
                                (``simultaneous``: other seats show pending until the reveal)
draw or pass     draw or pass   the seat to act is pending: pass (52) or stay (53..116)
draw             draw           (after a declaration round) the seat to act is playing with no
                                discard count yet: stay (53..116), no pass
second pass      second pass    (``second_pass_ante``) after the draw, the seat to act is playing
                                with its discard count announced: pass (52) or stay paying (53);
                                ``stayed`` marks the seats that stayed
trick play       (0s)           a card (0..51)
================ ============== ========================================================

Actions
-------
======== ========================================================================
id       meaning
======== ========================================================================
0..51    play the card with this id (``bourre_env.core.cards``: suit * 13 + rank, 2 = 0 .. A = 12)
52       pass: lay the hand down and sit out the deal
53..116  stay: play the deal discarding the hand positions in the bitmask ``id - 53``;
         in a declaration round only 53, "declare play" (the discards come in the draw round);
         at the second chance to pass only 53, "stay" (paying ``second_pass_ante``);
         when the dealer names trump only 53..56, "name trump" clubs, diamonds, hearts, spades
======== ========================================================================

Hand position ``i`` is the ``i``-th lowest card id of the hand, so ``53`` stands pat and ``53 +
0b101`` discards the lowest and third-lowest cards. ``bourre_env.actions.stay(discard, hand)``
builds the id and ``bourre_env.actions.describe(action, hand, phase)`` reads it. In the draw phase the
mask allows pass (unless the dealer must play) and every stay that discards at most
``max_discard`` cards of the hand (a dealer holding a separate trump card as a sixth card must
discard at least one card; with an ``entry_requirement`` a hand that fails it has only pass, unless
the dealer must play); in trick play it allows exactly the cards the rules allow, cinch
included. An action outside the mask raises ``ValueError`` that lists the legal actions; with
``illegal_action="renege"`` a card of the hand that the rules forbid is played as a renege.

Observation
-----------
``observation`` is built by ``bourre_env.observation`` for the observing player; seats are
relative to the observer (relative seat ``k`` sits ``k`` places to its left; 0 is the
observer). ``action_mask`` is the legal-action mask of the player to act (all zeros for
the others).

=============== ====== ==== ============================================================
name            start  size meaning
=============== ====== ==== ============================================================
hand                 0   52 1 for each card id the observer holds
trump               52    4 trump suit, one-hot (C, D, H, S); 0s until the dealer names it
face_card           56   52 the face-up card that set trump, one-hot by card id (0s: none turned)
face_status        108    3 face-up card: dealer's hand (laid down if the dealer passed) / dead or separate / played
dealer             111    8 dealer, one-hot by relative seat
to_act             119    8 seat to act, one-hot by relative seat (all 0 when the deal is over)
seat_present       127    8 1 for each relative seat that exists at this table
decision           135   24 per relative seat: pending / passed / playing, one-hot
discard_count      159   56 per relative seat: announced number of discards 0..6, one-hot (0s if none yet)
tricks_won         215   56 per relative seat: tricks won this deal 0..6, one-hot
played_by          271  416 per card id: relative seat that played it to a trick this deal, one-hot
played_in          687  312 per card id: the trick (0..5) it was played to, one-hot
trick_leader       999   48 per trick 0..5: relative seat that led it, one-hot (0s if not led yet)
trick_no          1047    7 current trick 0..5 (6: play over or not started), one-hot
led_suit          1054    4 suit led to the current trick, one-hot (0s before the lead)
own_discards      1058   52 cards the observer discarded this deal
phase             1110    2 decisions (naming trump, declaring, drawing, second pass) / trick play, one-hot (0s: over)
cinch             1112    1 1 if the observer has a cinch (docs/rules.md) now
pot               1113    2 chips in the pot / 100, and log(1 + pot) / log(1000)
pot_limit         1115    2 1 if there is a pot limit; the limit / 100
deal              1117    2 deal number within the episode / 10; deals left after this one / 10
num_players       1119    7 players at the table 2..8, one-hot
hand_size         1126    1 cards per hand / 6
options           1127    4 must_trump_when_cannot_win; lead_trump_honors; tie divides; max_discard / 6
deck_ranks        1131   13 1 for each rank in the deck (2 .. A): small decks lack some
reshuffled        1144    1 1 if the stock ran out this deal and the discards were reshuffled into it
decision_round    1145    5 trump naming / declaration / draw or pass / draw / second pass, one-hot
stayed            1150    8 per relative seat: 1 if it stayed, paying, at the second chance to pass
trump_rule        1158    4 trump card: dealer's / separate / separate, dealer may take / none, one-hot
declare_rule      1162    3 pass or play declared: with the draw / own round / secret round, one-hot
ante_rule         1165    3 play_ante chips; 1 if ante exemptions; 1 if the dealer antes for all
entry_rule        1168    3 1 if playing needs a trump or a club; 1 if a second pass; its chips to stay
penalty_rule      1171    3 1 if an illegal card is a renege; renege multiple of the pot; rake fraction
=============== ====== ==== ============================================================

Rewards
-------
At the end of each deal every player receives its chip change for that deal, in chips
(= antes): minus the ante it paid (the antes of every seat, for a dealer who antes for all; plus
``play_ante`` for playing), plus what it took from the pot, minus its bourré (or renege) payment.
With ``deals_per_episode > 1`` the next deal starts at once (the deal passes
left; pot and ante exemptions carry) and rewards accumulate as usual in AEC environments.
The episode ends (all agents terminated) after the last deal. ``infos`` are empty (nothing
in them could leak hidden cards) except at a truncation.

Pot bound
---------
With no ``pot_limit`` each bourré player pays the whole pot into the next deal, so over many deals
the pot grows geometrically (random play at 5 players about doubles it every deal). So that chip
counts stay exact, in the observation's float32 ``pot`` entry, in the rewards and in the core's
64-bit integers, an episode with deals to go ends *truncated* (every agent's ``truncations`` True,
the deal's rewards paid as usual) when a deal settles with more than ``POT_BOUND`` = 2**20 =
1,048,576 chips in the pot; ``infos`` then hold ``{"truncation_reason": "pot_bound", "pot": chips}``.
``reset`` refuses a larger ``"pot"``, and rules under which one deal from the bound could leave exact
integers (huge ``play_ante`` or ``renege_multiple``, or a rake such as the float 1/3 whose fraction
has a 16-digit numerator: give ``fractions.Fraction(1, 3)``) raise ``ValueError``. The reasons for
this bound are in ``bourre_env.limits``; the batch API and the single-agent view apply it too.

Privileged access
-----------------
Agents receive observations, which hold nothing hidden. The env object itself holds everything:
``hand(agent)`` returns any seat's cards, ``state_vector`` holds every hand, the stock order and the
discards, and ``np_random`` (the seeded generator) can be copied to predict the decks of later deals
and reshuffles. These are privileged views for rendering, debugging, tests, oracles and critics
meant to see the whole table; code that plays a seat must not read them.

Version history
---------------
* v0: first release. Rule presets added without changing the action space or the standard game.
  Episodes truncated at the pot bound (before, the pot of a long episode could overflow).
  Observation version 2 (``bourre_env.observation.VERSION``) appended ``decision_round``,
  ``stayed`` and the rule fields after the 1145 entries of version 1, which are unchanged: a
  policy trained on version 1 reads the first 1145 entries (``agents.ppo`` does this itself).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from bourre_env import core, limits, observation, render
from bourre_env.actions import as_action_id, describe
from bourre_env.card_masks import cards_of
from bourre_env.core import cards
from bourre_env.core.rules import Rules

ENV_NAME = "bourre_v0"


def env(**kwargs: Any) -> AECEnv:
    """The ``bourre_v0`` AEC environment with PettingZoo's order-enforcing checks."""
    return OrderEnforcing(raw_env(**kwargs))


class OrderEnforcing(wrappers.OrderEnforcingWrapper):  # type: ignore[misc]  # untyped base: PettingZoo has no py.typed
    """PettingZoo's order-enforcing wrapper with the per-decision calls delegated directly: the type of ``env()``
    (a caller may recognise the plain env by it, as ``train.table`` does to step the raw env itself).

    The stock wrapper runs ``last()`` on itself, so every attribute it reads passes through two
    ``__getattr__`` layers; that was a third of the cost of a decision. Once reset, nothing
    here is out of order, so these go straight to the env; before reset they raise as before.
    """

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        last: tuple[Any, float, bool, bool, dict[str, Any]] = self.env.last(observe)
        return last

    def step(self, action: Any) -> None:
        if self._has_reset and self.env.agents:
            self._has_updated = True
            self.env.step(action)
        else:
            super().step(action)  # the stock checks: step before reset, or after the episode

    @property
    def agent_selection(self) -> str:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return str(self.env.agent_selection)

    @property
    def agents(self) -> list[str]:
        if not self._has_reset:
            raise AttributeError("agents cannot be accessed before reset")
        agents: list[str] = self.env.agents
        return agents


class raw_env(AECEnv):  # type: ignore[misc]  # noqa: N801 - AECEnv is untyped (PettingZoo has no py.typed); PettingZoo's naming
    """Bourré as a PettingZoo AEC environment over the compiled rules core (see the module docstring).

    ``state_vector`` (the whole game state, every hand and the stock order included), ``hand(agent)`` for
    any seat and ``np_random`` (which decides future decks) are privileged: see "Privileged access" in
    the module docstring.
    """

    metadata = {"render_modes": ["human", "ansi"], "name": ENV_NAME, "is_parallelizable": False, "render_fps": 1}

    def __init__(self, render_mode: str | None = None, rules: Rules | str | None = None, **options: Any) -> None:
        super().__init__()
        if render_mode not in (None, "human", "ansi"):
            raise ValueError(f"render_mode: expected None, 'human' or 'ansi', got {render_mode!r}")
        self.render_mode = render_mode
        self.rules = Rules.from_options(rules, **options)
        limits.check_rules(self.rules)
        self._params = self.rules.params()
        n = self.rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(*limits.observation_bounds(self.rules), dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(core.NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces: dict[str, spaces.Space[Any]] = {
            a: spaces.Discrete(core.NUM_ACTIONS) for a in self.possible_agents
        }
        self.state_vector = core.new_state()
        # the cinch memo and search statistics: no part of the game, so queries (observe, legal_actions) leave
        # state_vector as it is (cinch_aborts reads the statistics)
        self.scratch = core.new_scratch()
        # the deck's cards, in the rules' order (what a shuffle permutes) and sorted (what a given deck must match)
        self._deck_cards = np.asarray(self.rules.deck_cards(), dtype=np.int64)
        self._sorted_deck = sorted(self._deck_cards.tolist())
        # np_random and its seed: made on first use (Gymnasium's Env does the same), since a reset with a seed makes
        # its own and one drawn from the operating system at construction would go unused
        self._np_random: np.random.Generator | None = None
        self._np_random_seed: int | None = None
        self._mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
        self._started = False  # state_vector is a blank state until reset, whose "player to act" means nothing
        self._closed = False

    @property
    def np_random(self) -> np.random.Generator:
        """The env's generator (privileged, module docstring): reseeded by ``reset(seed)``, from the operating
        system's entropy if used before any."""
        if self._np_random is None:
            self._unseeded_generator()
        assert self._np_random is not None
        return self._np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self._np_random = value

    @property
    def np_random_seed(self) -> int:
        """The seed of ``np_random`` (Gymnasium's ``np_random`` gives it): the last reset's, or the entropy drawn."""
        if self._np_random_seed is None:
            self._unseeded_generator()
        assert self._np_random_seed is not None
        return self._np_random_seed

    @np_random_seed.setter
    def np_random_seed(self, value: int) -> None:
        self._np_random_seed = value

    def _unseeded_generator(self) -> None:
        # what the env made at construction before it made it lazily: a generator from the operating system's
        # entropy, and that entropy as the seed (kept even where np_random was set meanwhile)
        generator, seed = seeding.np_random(None)
        if self._np_random is None:
            self._np_random = generator
        if self._np_random_seed is None:
            self._np_random_seed = seed

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._check_open("reset")
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
        options = dict(options or {})
        unknown = set(options) - {"deck", "dealer", "pot"}
        if unknown:
            # A warning, not an error: PettingZoo's api_test resets with options of its own.
            warnings.warn(
                f"reset options: ignoring unknown key(s) {sorted(unknown)}; known: 'deck', 'dealer', 'pot'",
                stacklevel=2,
            )
        n = self.rules.num_players
        deck = self._deck(options.get("deck"))
        dealer = options.get("dealer")
        if dealer is None:
            dealer = int(self.np_random.integers(n))
        elif isinstance(dealer, bool) or not isinstance(dealer, (int, np.integer)) or not 0 <= dealer < n:
            raise ValueError(f"reset options: dealer must be a seat index in 0..{n - 1}, got {dealer!r}")
        pot = limits.check_pot(options.get("pot", 0), "reset options")
        core.start_episode(self.state_vector, self._params, deck, int(dealer), pot, self._reshuffle_seed())
        self.scratch[:] = 0
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._rewards_pending = False
        self._started = True
        self._after_step()

    def _reshuffle_seed(self) -> int:
        return int(self.np_random.integers(0, 2**62))

    def _deck(self, given: Any) -> np.ndarray:
        if given is None:
            return self.np_random.permutation(self._deck_cards)
        # The common case, a right deck of card ids (Python or numpy integers), checked in one pass; anything else
        # goes card by card below, which says what is wrong.
        ids = given.tolist() if isinstance(given, np.ndarray) and given.dtype.kind in "iu" else given
        if type(ids) in (list, tuple) and set(map(type, ids)) == {int} and sorted(ids) == self._sorted_deck:
            return np.array(ids, dtype=np.int64)
        expected = self._deck_cards.tolist()
        if isinstance(given, str):
            given = given.replace(",", " ").split()
        try:
            ids = [cards.to_id(c) for c in given]
        except (TypeError, ValueError) as err:
            raise ValueError(f"reset options: bad deck: {err}") from None
        if sorted(ids) != sorted(expected):
            missing = sorted(set(expected) - set(ids))
            extra = sorted(set(ids) - set(expected))
            repeated = sorted({c for c in ids if ids.count(c) > 1})
            raise ValueError(
                f"reset options: deck must hold each of the {len(expected)} cards of this deck exactly once; "
                f"got {len(ids)} cards"
                + (f", missing {cards.to_strs(missing)}" if missing else "")
                + (f", not in this deck {cards.to_strs(extra)}" if extra else "")
                + (f", repeated {cards.to_strs(repeated)}" if repeated else "")
            )
        return np.asarray(ids, dtype=np.int64)

    # ------------------------------------------------------------------ observe / step
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = np.empty(observation.OBS_SIZE, dtype=np.float32)
        mask = np.empty(core.NUM_ACTIONS, dtype=np.int8)
        observation.observe_with(
            self.state_vector, self._params, self.agent_name_mapping[agent], obs, mask, self.scratch
        )
        return {"observation": obs, "action_mask": mask}

    def legal_actions(self) -> list[int]:
        """Legal action ids of the player to act (empty when nobody is to act); ``ValueError`` before ``reset``."""
        if not self._started:
            raise ValueError("legal_actions: no game yet; call reset() first")
        if self.state_vector[core.S_CUR] < 0:
            return []
        core.legal_actions_with(self.state_vector, self._params, self._mask, self.scratch)
        actions: list[int] = np.flatnonzero(self._mask).tolist()
        return actions

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last``; ``ValueError`` once the episode is over (every agent is gone), where PettingZoo's
        own would raise a bare ``KeyError`` for the last agent's name."""
        if self._closed or not self._started or not self.agents:
            self._check_episode_running("last")
        # AECEnv.last's tuple, built here: one call less per decision of the AEC loop
        agent = self.agent_selection
        return (
            self.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def _check_open(self, call: str) -> None:
        if self._closed:
            raise ValueError(f"{call}: the env is closed; make a new one (bourre_env.env())")

    def _check_episode_running(self, call: str) -> None:
        self._check_open(call)
        if not self._started:
            raise ValueError(f"{call}: no game yet; call reset() first")
        if not self.agents:
            raise ValueError(f"{call}: the episode is over (every agent is done); call reset() to start a new one")

    def step(self, action: int | None) -> None:
        if self._closed or not self._started or not self.agents:
            self._check_episode_running("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        given = action
        if type(action) is not int:  # the common case needs no conversion
            action = as_action_id(given)
        if action is None:
            raise ValueError(
                f"{agent} must act: expected an action id (an integer), got {given!r:.80}; legal: {self._legal_text()}"
            )
        if not 0 <= action < core.NUM_ACTIONS:  # before the compiled core, which takes int64 only
            raise ValueError(
                f"action: expected an action id in 0..{core.NUM_ACTIONS - 1} for {agent}, got {action!r}; "
                f"legal: {self._legal_text()}"
            )
        if not core.step_with(self.state_vector, self._params, int(action), self.scratch):
            raise ValueError(f"illegal action {action!r} for {agent}; legal: {self._legal_text()}")
        self._cumulative_rewards[agent] = 0.0
        s = self.state_vector
        phase = s[core.S_PHASE]
        ended = False
        if phase == core.DEAL_OVER or phase == core.GAME_OVER:
            self.rewards = {a: float(s[core.S_REWARD + i]) for i, a in enumerate(self.possible_agents)}
            self._rewards_pending = True
            ended = True
            if phase == core.GAME_OVER:
                self.terminations = {a: True for a in self.agents}
            elif limits.pot_passed_bound(s):
                self.truncations = {a: True for a in self.agents}
                self.infos = {a: limits.truncation_info(s) for a in self.agents}
            else:
                core.next_deal(s, self._params, self._deck(None), self._reshuffle_seed())
                ended = False
        elif self._rewards_pending:
            self.rewards = {a: 0.0 for a in self.agents}
            self._rewards_pending = False
        self._after_step()
        if self._rewards_pending:  # zero rewards add nothing: skip the per-agent loop
            self._accumulate_rewards()
        if ended:
            self._deads_step_first()
        if self.render_mode == "human":
            self.render()

    def _after_step(self) -> None:
        cur = self.state_vector[core.S_CUR]
        if cur >= 0:
            self.agent_selection = self.possible_agents[cur]

    def _legal_text(self) -> str:
        hand = self.hand(self.agent_selection)
        phase = int(self.state_vector[core.S_PHASE])
        return ", ".join(f"{a} ({describe(a, hand, phase)})" for a in self.legal_actions())

    # ------------------------------------------------------------------ views
    @property
    def cinch_aborts(self) -> int:
        """Exact cinch searches of this episode that gave up: always 0, the search has no budget (kept for reports that
        read it; a question past the wall-clock guard raises instead)."""
        return int(self.scratch[core.X_CINCH_ABORTS])

    def hand(self, agent: str) -> list[int]:
        """Card ids ``agent`` holds now. Privileged: it answers for any seat, whoever asks; a seat's own hand is
        its own knowledge, another's is not (for rendering, the terminal game's human seat, tests and oracles)."""
        return cards_of(self.state_vector[core.S_HAND + self.agent_name_mapping[agent]])

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        cur = self.state_vector[core.S_CUR]
        viewer = int(cur) if cur >= 0 else 0
        text = render.table_text(self.state_vector, self._params, self.rules, viewer)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Ends the env: ``reset``, ``step`` and ``last`` refuse to run after it (a closed env holds no game)."""
        self._closed = True
