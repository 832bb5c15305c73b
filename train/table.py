"""The table: a deal as a value, who sits where, and the one loop that plays a deal, with its three drivers.

Everything in ``train/`` that seats agents at a deal plays it here: evaluation (``train.eval.duplicate``,
``train.eval.tournament``), ``bourre play`` (``train.terminal_game``), expert iteration's self-play
(``train.exit.generation``) and the research measurements (``train.research``). The module imports only
``bourre_env``, ``agents``, numpy and the standard library, so that every wing of ``train/`` can stand on it.

================================ =====================================================================================
name                             what it is
================================ =====================================================================================
``Deal``                         one deal as a value: rules, deck (dealing order), dealer, env reset seed, pot
``Deals``, ``make_deals``        fixed deals of one table size, drawn in order from ``default_rng([seed, N])``;
                                 ``Deals.deal(k)`` is deal ``k`` as a ``Deal``
``game(env, deal, labels, ...)`` the loop: a generator that yields each ``Decision`` and takes the action back
``play(env, deal, agents, ...)`` the synchronous driver: agents' ``reset()``, ``agents.choose`` at every decision
``drive(loop, decide)``          the synchronous driver of any ``decide(decision) -> action``
``play_async(..., decide)``      the awaitable driver: ``await decide(decision)`` at every decision
``PausedGame(loop)``             the paused form: ``pending`` decision, ``answer(action)``, ``outcome`` once over
``Observer``                     hooks on the loop: ``dealt(env)`` after the reset, ``stepped(...)`` after each action
``seat_outcomes``                the outcome rows of a settled deal (columns ``CHIPS`` ... ``BOURRE``)
``seated(entries, r)``           the entries of a table turned ``r`` places: entry ``i`` in seat ``(i + r) % N``
================================ =====================================================================================

The loop
--------
``game(env, deal, labels, deal_name, observers)`` resets ``env`` to the deal (``env.reset(seed=deal.env_seed,
options=deal.reset_options())``), then walks the env's own ``agent_iter`` (for the package's plain env, the raw env's
seats directly: its order checks add nothing to a loop that keeps the order itself): at each seat to act it yields a
``Decision`` (the seat, the env's agent name, the observation dict with its ``action_mask``, the decision's index in
the game from 1, the label of who sits there and ``where``, the text that names the decision in errors: ``deal 3 of
seed 0 at 4 players, decision 17 (player_2)``), and applies the action it is sent (``generator.send``). An action the
rules refuse (out of range, not an action id, illegal where reneges are not allowed) is not applied: the loop yields
the same decision again with ``refused`` set to the rules' reason, and ``Decision.error()`` is the
``agents.AgentError`` that names the agent, the deal and the decision. When every seat is done the generator returns
the ``seat_outcomes`` rows of the final state. An episode of several deals (``bourre play --deals``) is one game: its
decisions name their deal too (``..., deal 2, decision 40 (player_1)``) and the rows are those of its last deal.

The env is the caller's: one env is reset for every game of a chunk, since building one costs more than a deal. Any
AEC env of the package will do, wrappers included: a ``bourre_env.history.Recording`` env records the hand history
of every game the loop plays in it, whatever drives the loop (``env.history(labels)`` once it is over). The deal's
rules must be the env's (``ValueError`` otherwise).

Drivers
-------
``play(env, deal, agents, labels, deal_name, observers)`` is what evaluation does: every agent's optional ``reset()``
before the deal, then ``agents.choose(agent, observation, repr(label), where)`` at each decision (an agent that
raises, exits or answers something other than an action id is an ``AgentError`` naming it and the decision), and a
refused action raised as ``Decision.error()``; the outcome rows. ``drive(loop, decide)`` is the same loop with any
decision function (expert iteration's searched seats, the clairvoyant seats of ``value_of_information``, a person at
the terminal). ``await play_async(env, deal, decide, labels, deal_name, observers)`` awaits ``decide(decision)`` at
each decision, so that a server's event loop can wait on a remote seat without holding up its other tables; it
resets no agent (the caller knows which of its seats have a ``reset()`` to call, and where it may run).
``PausedGame(game(...))`` holds the loop between requests, for a table that a person plays one request at a time:
``pending`` is the decision waiting for an action (``None`` once over), ``answer(action)`` applies it and moves to the
next decision (or raises the ``AgentError`` of a refused action, the decision still pending), and ``outcome`` holds
the rows once the game is over. The three give the same rows and the same decisions on the same deal
(``tests/test_table.py``).

Observers
---------
An ``Observer`` sees the game without acting in it: ``dealt(env)`` once the env is reset to the deal, and
``stepped(decision, action, before, env)`` after each action the rules accepted, ``before`` being a copy of the
state vector before it (copied only when the game has observers). The variance reduction of evaluation records its
draws this way (``train.eval.variance.DrawRecorder``); ``bourre play`` tells the table what happened after each move.

Deals
-----
``make_deals(seed, rules, count)`` draws deal after deal from ``numpy.random.default_rng([seed, N])``: the deck
(a permutation of the rules' cards), the dealer, and the env's reset seed (which fixes the stock's reshuffle), so
deal ``k`` is the same however many are drawn; ``deals_in_chunks`` draws the same deals a chunk at a time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Generator, Iterator, Sequence
from typing import Any, Protocol

import numpy as np

from agents.base import Agent, AgentError, choose
from bourre_env import bourre_v0
from bourre_env.core.rules import Rules
from bourre_env.view import StateView

__all__ = [
    "BOURRE",
    "CHIPS",
    "NUM_OUTCOMES",
    "PLAYED",
    "TIED",
    "TRICKS",
    "WON",
    "Deal",
    "Deals",
    "Decision",
    "Game",
    "Observer",
    "PausedGame",
    "deals_in_chunks",
    "drive",
    "drive_async",
    "game",
    "label_of",
    "make_deals",
    "play",
    "play_async",
    "reset_agents",
    "seat_outcomes",
    "seated",
]

_PLAIN_ENV = bourre_v0.OrderEnforcing
"""The type of ``bourre_env.env()``: the raw env in PettingZoo's order checks, and nothing else."""

# Columns of the per-seat outcome rows returned by ``seat_outcomes``.
CHIPS, PLAYED, TRICKS, WON, TIED, BOURRE = range(6)
NUM_OUTCOMES = 6


# ---------------------------------------------------------------------------- deals
@dataclasses.dataclass(frozen=True)
class Deal:
    """One deal: the rules it is played under, the deck in dealing order (``None``: the env shuffles one from its
    seed), the dealer's seat (``None``: drawn by the env), the env's reset seed and the chips already in the pot
    (``None``: an empty pot)."""

    rules: Rules
    deck: tuple[int, ...] | None = None
    dealer: int | None = None
    env_seed: int | None = None
    pot: int | None = None

    def reset_options(self) -> dict[str, Any] | None:
        """The ``options`` of ``env.reset`` that deal it (``None`` when the env draws everything from its seed)."""
        options: dict[str, Any] = {}
        if self.deck is not None:
            options["deck"] = list(self.deck)
        if self.dealer is not None:
            options["dealer"] = self.dealer
        if self.pot is not None:
            options["pot"] = self.pot
        return options or None


@dataclasses.dataclass(frozen=True)
class Deals:
    """Fixed deals for one table size: row ``k`` of each array is deal ``k``; ``rules``, those they are dealt for
    (``make_deals`` fills it in)."""

    decks: np.ndarray  # (deals, deck size) card ids in dealing order
    dealers: np.ndarray  # (deals,)
    env_seeds: np.ndarray  # (deals,) seeds for env.reset: they fix the stock reshuffle
    rules: Rules | None = None

    def __len__(self) -> int:
        return len(self.dealers)

    def slice(self, start: int, stop: int) -> Deals:
        return Deals(self.decks[start:stop], self.dealers[start:stop], self.env_seeds[start:stop], self.rules)

    def deal(self, k: int, rules: Rules | None = None) -> Deal:
        """Deal ``k`` as a ``Deal``, under ``rules`` (default: the deals' own)."""
        under = rules if rules is not None else self.rules
        if under is None:
            raise ValueError("Deals.deal: these deals name no rules; give the rules to play them under")
        return Deal(under, tuple(self.decks[k].tolist()), int(self.dealers[k]), int(self.env_seeds[k]))


def _draw_deals(rng: np.random.Generator, rules: Rules, deck_cards: np.ndarray, count: int) -> Deals:
    """The next ``count`` deals of ``rng``, one at a time, so that deal k does not depend on how many are drawn."""
    players = rules.num_players
    decks = np.empty((count, len(deck_cards)), dtype=np.int64)
    dealers = np.empty(count, dtype=np.int64)
    env_seeds = np.empty(count, dtype=np.int64)
    for k in range(count):
        decks[k] = rng.permutation(deck_cards)
        dealers[k] = rng.integers(players)
        env_seeds[k] = rng.integers(2**62)
    return Deals(decks, dealers, env_seeds, rules)


def make_deals(seed: int, rules: Rules, count: int) -> Deals:
    """``count`` deals for ``rules.num_players`` players, drawn in order from ``default_rng([seed, N])``."""
    rng = np.random.default_rng([seed, rules.num_players])
    return _draw_deals(rng, rules, np.asarray(rules.deck_cards(), dtype=np.int64), count)


def deals_in_chunks(seed: int, rules: Rules, count: int, chunk: int) -> Iterator[Deals]:
    """The deals of ``make_deals(seed, rules, count)``, ``chunk`` at a time, each chunk drawn when it is asked for:
    a run of many deals never holds all their decks at once."""
    if chunk < 1:
        raise ValueError(f"chunk: expected at least 1 deal, got {chunk}")
    rng = np.random.default_rng([seed, rules.num_players])
    deck_cards = np.asarray(rules.deck_cards(), dtype=np.int64)
    for start in range(0, count, chunk):
        yield _draw_deals(rng, rules, deck_cards, min(chunk, count - start))


def seat_outcomes(state: np.ndarray, num_players: int) -> np.ndarray:
    """``(N, 6)`` int64 rows (chips, played, tricks, won pot, tied for most, bourré) of a settled deal."""
    v = StateView(state, num_players)
    return np.array(
        [[v.reward(q), v.playing(q), v.tricks(q), v.won(q), v.tied(q), v.bourre(q)] for q in range(num_players)],
        dtype=np.int64,
    ).reshape(num_players, 6)


# ---------------------------------------------------------------------------- seating
def seated(entries: Sequence[Any], rotation: int) -> list[Any]:
    """The entries of a table turned ``rotation`` places: entry ``i`` sits in seat ``(i + rotation) % N``."""
    n = len(entries)
    return [entries[(s - rotation) % n] for s in range(n)]


def label_of(agent: Any) -> str:
    """What an error calls an agent that was given no label: its ``name``, else its class name."""
    return str(getattr(agent, "name", type(agent).__name__))


def reset_agents(table: Sequence[Any]) -> None:
    """Every agent's ``reset()``, before a deal; an agent without memory need not have one."""
    for agent in table:
        reset = getattr(agent, "reset", None)
        if callable(reset):
            reset()


# ---------------------------------------------------------------------------- the loop
class Decision:
    """A seat to act: ``seat``, ``agent`` (the env's name for it, ``player_2``), ``observation`` (the env's dict, with
    its ``action_mask``), ``index`` (from 1 in the game), ``label`` (who sits there), ``deal_name``; ``refused``, the
    rules' reason when the action last sent for this decision was refused, else ``None``."""

    __slots__ = ("agent", "deal_name", "index", "label", "observation", "refused", "seat")

    def __init__(
        self,
        seat: int,
        agent: str,
        observation: dict[str, np.ndarray],
        index: int,
        label: str,
        deal_name: str,
        refused: str | None = None,
    ) -> None:
        self.seat = seat
        self.agent = agent
        self.observation = observation
        self.index = index
        self.label = label
        self.deal_name = deal_name
        self.refused = refused

    @property
    def where(self) -> str:
        """The decision as errors name it: ``deal 3 of seed 0 at 4 players, decision 17 (player_2)``."""
        return f"{self.deal_name}, decision {self.index} ({self.agent})"

    @property
    def mask(self) -> np.ndarray:
        return self.observation["action_mask"]

    def error(self) -> AgentError:
        """The ``AgentError`` of the refused action: the agent, the decision, the rules' reason."""
        return AgentError(f"agent {self.label!r} at {self.where}: {self.refused}")

    def __repr__(self) -> str:
        return f"Decision({self.where}, seat {self.seat}, {self.label!r}{', refused' if self.refused else ''})"


class Observer(Protocol):
    """Hooks on the loop (module docstring). Any object with the two methods is one; a subclass of this class
    inherits hooks that do nothing and overrides those it needs."""

    def dealt(self, env: Any) -> None:
        """The env has just been reset to the deal."""
        return None

    def stepped(self, decision: Decision, action: int, before: np.ndarray, env: Any) -> None:
        """``action`` was applied at ``decision``; ``before`` is a copy of the state vector before it."""
        return None


Game = Generator[Decision, Any, np.ndarray]
"""The loop: yields each ``Decision``, is sent its action, returns the outcome rows."""


def game(
    env: Any,
    deal: Deal,
    labels: Sequence[str],
    deal_name: str = "the deal",
    observers: Sequence[Observer] = (),
) -> Game:
    """Play ``deal`` in ``env`` (module docstring): yield each decision, apply the action sent back; the outcome rows.
    ``labels[s]`` names who sits in seat ``s``; ``deal_name`` names the deal in errors."""
    raw = env.unwrapped
    rules = raw.rules
    if deal.rules is not rules and deal.rules != rules:
        raise ValueError("game: the deal's rules are not the env's; play it in an env of its rules")
    n = rules.num_players
    if len(labels) != n:
        raise ValueError(f"game: {n} labels expected, one per seat, got {len(labels)}")
    env.reset(seed=deal.env_seed, options=deal.reset_options())
    for observer in observers:
        observer.dealt(env)
    seat_of = raw.agent_name_mapping
    view = StateView(raw.state_vector, n) if rules.deals_per_episode > 1 else None
    # The package's own env adds nothing to a game once reset but PettingZoo's order checks, which the loop keeps by
    # construction: it is stepped and observed directly (the same calls the wrapper makes, a layer fewer a move).
    # Any other wrapper (a recorder, a user's) is stepped as it is.
    stepper = raw if type(env) is _PLAIN_ENV else env
    names = _seats_to_act(raw) if stepper is raw else env.agent_iter()
    for index, name in enumerate(names, 1):
        if raw.terminations[name] or raw.truncations[name]:
            stepper.step(None)  # every seat is done: the env walks each one out (no observation is needed for that)
            continue
        obs = raw.observe(name) if stepper is raw else env.last()[0]
        seat = seat_of[name]
        named = deal_name if view is None else f"{deal_name}, deal {view.deal_no + 1}"
        decision = Decision(seat, name, obs, index, labels[seat], named)
        while True:
            action = yield decision
            before = raw.state_vector.copy() if observers else None
            try:
                stepper.step(action)
            except ValueError as err:  # the rules refuse it: nothing is applied, and the decision is asked again
                decision = Decision(seat, name, obs, index, labels[seat], named, str(err))
                continue
            break
        if before is not None:
            for observer in observers:
                observer.stepped(decision, action, before, env)
    rows: np.ndarray = seat_outcomes(raw.state_vector, n)
    return rows


def _seats_to_act(raw: Any) -> Iterator[str]:
    """``agent_iter`` of the raw env, without PettingZoo's iterator object: the agent to act, while any is left."""
    while raw.agents:
        yield raw.agent_selection


# ---------------------------------------------------------------------------- drivers
def drive(loop: Game, decide: Callable[[Decision], Any]) -> np.ndarray:
    """Run ``loop`` to its end, ``decide(decision)`` answering each decision; the outcome rows. A refused action is
    raised as its ``AgentError``."""
    try:
        decision = next(loop)
    except StopIteration as end:
        rows: np.ndarray = end.value
        return rows
    while True:
        if decision.refused is not None:
            loop.close()
            raise decision.error()
        action = decide(decision)  # outside the try: a StopIteration of decide's is no end of the game
        try:
            decision = loop.send(action)
        except StopIteration as end:
            rows = end.value
            return rows


def play(
    env: Any,
    deal: Deal,
    table: Sequence[Agent],
    labels: Sequence[str] | None = None,
    deal_name: str = "the deal",
    observers: Sequence[Observer] = (),
) -> np.ndarray:
    """The synchronous driver: ``table[s]`` in seat ``s`` (``labels[s]`` names it, else ``label_of``), every agent's
    ``reset()`` before the deal, ``agents.choose`` at every decision; the outcome rows. An agent that raises, exits
    or answers something other than an action id, or an action the rules refuse, is an ``AgentError`` naming it,
    the deal and the decision."""
    names = list(labels) if labels is not None else [label_of(agent) for agent in table]
    quoted = [repr(name) for name in names]
    loop = game(env, deal, names, deal_name, observers)
    reset_agents(table)
    return drive(loop, lambda d: choose(table[d.seat], d.observation, quoted[d.seat], d.where))


async def drive_async(loop: Game, decide: Callable[[Decision], Awaitable[Any]]) -> np.ndarray:
    """``drive`` with ``await decide(decision)`` at each decision."""
    try:
        decision = next(loop)
    except StopIteration as end:
        rows: np.ndarray = end.value
        return rows
    while True:
        if decision.refused is not None:
            loop.close()
            raise decision.error()
        action = await decide(decision)
        try:
            decision = loop.send(action)
        except StopIteration as end:
            rows = end.value
            return rows


async def play_async(
    env: Any,
    deal: Deal,
    decide: Callable[[Decision], Awaitable[Any]],
    labels: Sequence[str],
    deal_name: str = "the deal",
    observers: Sequence[Observer] = (),
) -> np.ndarray:
    """The awaitable driver: ``await decide(decision)`` at every decision of ``deal``; the outcome rows. It resets
    no agent (module docstring); a refused action is raised as its ``AgentError``."""
    return await drive_async(game(env, deal, labels, deal_name, observers), decide)


class PausedGame:
    """The paused form of a game (module docstring): the loop held between requests."""

    def __init__(self, loop: Game) -> None:
        self._loop = loop
        self.pending: Decision | None = None
        self.outcome: np.ndarray | None = None
        try:
            self.pending = next(loop)
        except StopIteration as end:
            self.outcome = end.value

    @property
    def over(self) -> bool:
        return self.pending is None

    def answer(self, action: Any) -> Decision | None:
        """Apply ``action`` at the pending decision; the next one (``None`` once the game is over). ``AgentError``
        when the rules refuse it: nothing is applied and the decision is still pending (its ``refused`` says why);
        ``ValueError`` when no decision is pending."""
        if self.pending is None:
            raise ValueError("answer: the game is over, no decision is pending")
        try:
            self.pending = self._loop.send(action)
        except StopIteration as end:
            self.pending = None
            self.outcome = end.value
            return None
        if self.pending.refused is not None:
            raise self.pending.error()
        return self.pending
