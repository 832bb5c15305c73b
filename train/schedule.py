"""The duplicate schedule: who sits where, seeded how, for a deal or a session played from every seat.

Evaluation (``train.eval.duplicate``), the tournament (``train.eval.tournament``), the ladder (through evaluation),
expert iteration's self-play, the research measurements and the arena's matches seat agents the same way; this
module is that way, written once. It stands on ``train.table`` (the deal as a value and the loop that plays it) and
imports nothing else of ``train``.

================================== ===================================================================================
name                               what it is
================================== ===================================================================================
``AgentSource``                    an ``agents.make`` spec, an agent instance, or a factory ``seed -> agent``
``build_agent(source, seed)``      the agent of a source; ``agent_label(source)``, the name a report gives it
``check_sources``                  each source built once before any worker starts (and checked to reach workers)
``agent_seed(*key)``               a 32-bit agent seed from integers (evaluation seed, table size, chunk, seat ...)
``seat_seeds(seed, N, chunk)``     the agent seed of every seat of a chunk: seat ``s`` from ``(seed, N, chunk, 1 + s)``
``field_per_seat(field, N)``       a field given as one source or one per seat, one per seat
``by_entry(by_seat, r)``           a table's per-seat values in entry order, where ``train.table.seated(entries, r)``
                                   seated entry ``i`` in seat ``(i + r) % N``
``table_rules(N, options, K)``     the rules of one table size, single deals (``K = 1``) or sessions of ``K`` deals
``games_per_chunk(K)``             games (deals or sessions) per work unit: about ``CHUNK_DEALS`` deals
``play_game(env, deal, table)``    one game, a deal or a session: a ``GameResult`` (rows summed over its deals, the pot
                                   left, the deals played)
``SessionTally``                   the observer that sums a session's rows deal by deal
``duplicate_tables``               the ``N`` rotation tables and the all-field table of a candidate and a field
``play_duplicate``                 one game played at every rotation table, then at the all-field table
``advantages``                     the table and replacement advantages of one game's ``N + 1`` results
================================== ===================================================================================

Deals and sessions
------------------
A *game* is what one reset of the env plays: a single deal (``deals_per_episode == 1``) or a *session* of ``K``
deals at one table with the pot carried (``deals_per_episode == K``: the deal passes left, bourré payments and tied
pots stay in the pot, bourré and tied players skip the next ante). A game is a ``train.table.Deal``: its rules, the
first deal's deck and dealer, and the env's reset seed. The decks of the session's later deals, and every deal's
reshuffle seed, are drawn by the env's generator from that reset seed, two draws a deal, whatever happens at the
table: no action of any player moves the generator. So every rotation of a duplicate session meets the same cards
deal by deal however its players play (``tests/test_sessions.py`` holds it with tables that play differently); a
session that is cut short (below) meets a prefix of them.

A session ends after ``K`` deals, or earlier when a deal leaves more than ``bourre_env.limits.POT_BOUND`` chips in
the pot (the env truncates it: without a pot limit the pot can grow geometrically). ``GameResult.deals_played``
says which; reports count the sessions cut.

The pot left when a session ends
--------------------------------
Chips that are still in the pot when the table breaks up belong to the table, not to whoever paid them in: a
bourré payment is a stake in the next pot, and at a real table the deal goes on until someone takes it. A fixed
schedule of ``K`` deals cannot play on (the rotations would play different numbers of deals), so the pot left is
shared equally among the ``N`` seats, as a table that breaks up splits what is on it. A seat's *session chips* are
its chip change over the session plus ``pot_left / N``: chips are conserved (the seats' session chips sum to zero,
less the rake), the share is the same for every seat of a table so the table advantage does not depend on it, and
it is computed in ``N``-ths of a chip (integers) so that a candidate equal to the field still scores exactly 0. A
single deal keeps the project's older accounting: the pot it leaves is chips lost, as every single-deal figure in
the docs counts it.

Seats and seeds
---------------
Every agent is seeded by its seat: whoever sits in seat ``s`` of a chunk, the candidate or the field's agent, is
seeded from ``(seed, N, chunk, 1 + s)``. The candidate thus draws the random stream that the field's agent of its
seat draws at every other table, and a candidate that is the field's agent replays the all-field table exactly in
every rotation. Rotation ``r`` puts the candidate in seat ``r``; the all-field table has the field's agent of seat
``s`` in every seat ``s``. That is ``N + 1`` games per deal or session.

Advantages
----------
With ``c[r][s]`` the session chips of seat ``s`` in rotation ``r`` and ``b[s]`` those at the all-field table, a
game's table advantage is ``mean over r of (c[r][r] - mean over s != r of c[r][s])`` and its replacement advantage
``mean over r of (c[r][r] - b[r])``; divided by the deals of the game (``K``), both are chips per deal
(``advantages``). They come from integer sums divided once.
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import agents
from agents.base import Agent
from bourre_env import core
from bourre_env.core.rules import Rules
from bourre_env.view import StateView
from train.table import NUM_OUTCOMES, Deal, Observer, play, seat_outcomes

__all__ = [
    "CHUNK_DEALS",
    "AgentSource",
    "GameResult",
    "SessionTally",
    "advantages",
    "agent_label",
    "agent_seed",
    "build_agent",
    "by_entry",
    "check_session",
    "check_sources",
    "duplicate_tables",
    "field_per_seat",
    "games_per_chunk",
    "play_duplicate",
    "play_game",
    "seat_seeds",
    "table_rules",
]

CHUNK_DEALS = 20
"""Deals per work unit (a session of ``K`` deals counts ``K``). Part of the definition of a result: agents are built
and seeded once per chunk."""

MAX_SESSION = 10_000
"""The longest session the schedule plays: a session's hand history and its agents' memory grow with it."""

AgentSource = str | Agent | Callable[[int], Any]
"""An ``agents.make`` spec, an agent instance (used as it is), or a factory ``seed -> agent`` (an agent class)."""


# ---------------------------------------------------------------------------- agents
def _is_instance(source: object) -> bool:
    return not isinstance(source, str | type) and callable(getattr(source, "act", None))


def agent_label(source: AgentSource) -> str:
    """The name a report gives an agent source: the spec itself, else the agent's ``name`` or its class name."""
    if isinstance(source, str):
        return source
    name = getattr(source, "name", None) if _is_instance(source) else None
    if isinstance(name, str):
        return name
    return getattr(source, "__qualname__", None) or type(source).__name__


def build_agent(source: AgentSource, seed: int) -> Agent:
    """The agent of a spec, a factory called with ``seed``, or the instance itself (``UserAgent``-wrapped when it
    lacks ``reset()`` or ``name``)."""
    if isinstance(source, str):
        return agents.make(source, seed)
    label = agent_label(source)
    if _is_instance(source):
        return agents.user_code.as_agent(source, label)
    if not callable(source):
        raise ValueError(f"agent: expected an agents.make spec, an agent or a factory seed -> agent, got {source!r}")
    return agents.user_code.as_agent(source(seed), f"factory {label}")


def check_sources(sources: Sequence[AgentSource], workers: int, backend: str) -> None:
    """Build each agent once here, so that a bad spec or factory fails before any worker starts; ``ValueError``
    for a source that cannot reach worker processes (``workers > 1`` or Ray): an instance, or a factory that
    does not pickle."""
    parallel = workers > 1 or backend != "local"
    seen: set[int] = set()
    for source in sources:
        if id(source) in seen:
            continue
        seen.add(id(source))
        if parallel and not isinstance(source, str):
            where = "Ray tasks" if backend != "local" else f"workers={workers}"
            if _is_instance(source):
                raise ValueError(
                    f"agent {agent_label(source)}: an agent instance cannot be shared by {where}; give "
                    "a spec (module:Class, path/to/file.py:Class) or a picklable factory such as the "
                    "class itself, or run with workers=1"
                )
            try:
                pickle.dumps(source)
            except Exception as err:  # pickle raises several types (PicklingError, AttributeError, TypeError)
                raise ValueError(
                    f"agent {agent_label(source)}: {where} need a spec or a picklable factory (a "
                    f"module-level class or function, not a lambda or a local one): {err}"
                ) from None
        build_agent(source, 0)


def agent_seed(*key: int) -> int:
    """A 32-bit agent seed derived from integers (evaluation seed, table size, chunk, role, ...)."""
    return int(np.random.SeedSequence(list(key)).generate_state(1)[0])


def seat_seeds(seed: int, players: int, chunk: int) -> list[int]:
    """The agent seed of each seat of a chunk: seat ``s`` from ``(seed, N, chunk, 1 + s)``, whoever sits there."""
    return [agent_seed(seed, players, chunk, 1 + s) for s in range(players)]


def by_entry(by_seat: np.ndarray, rotation: int) -> np.ndarray:
    """Values of a table turned ``rotation`` places (``train.table.seated``), one per seat, in entry order: entry
    ``i``'s from seat ``(i + rotation) % N``."""
    by_seat = np.asarray(by_seat)
    return by_seat[(np.arange(by_seat.shape[0]) + rotation) % by_seat.shape[0]]


def field_per_seat(field: AgentSource | Sequence[AgentSource], players: int) -> tuple[AgentSource, ...]:
    """The field's agent for each seat of a table of ``players``."""
    if isinstance(field, str) or not isinstance(field, Sequence):
        return (field,) * players
    specs = tuple(field)
    if len(specs) == 1:
        return specs * players
    if len(specs) != players:
        raise ValueError(
            f"field: one spec for every seat, or exactly {players} specs (one per seat) for "
            f"{players} players, got {len(specs)}: {list(specs)}"
        )
    return specs


# ---------------------------------------------------------------------------- rules and chunks
def check_session(session: int) -> int:
    """``session`` (deals per game) as an int, or ``ValueError`` naming ``session``."""
    if isinstance(session, bool) or not isinstance(session, int | np.integer) or not 1 <= session <= MAX_SESSION:
        raise ValueError(f"session: expected a number of deals in 1..{MAX_SESSION}, got {session!r}")
    return int(session)


def table_rules(players: int, rule_options: Mapping[str, Any], session: int = 1) -> Rules:
    """The rules of one table size, each game a single deal (``session=1``) or a session of ``session`` deals with
    the pot carried. ``deals_per_episode`` is the schedule's to set: a rule option naming it is refused."""
    session = check_session(session)
    if "deals_per_episode" in rule_options:
        raise ValueError(
            f"deals_per_episode={rule_options['deals_per_episode']!r}: the length of a game is the session's "
            "(bourre eval --session K, session=K): no rule option for it"
        )
    return Rules.from_options(**{**rule_options, "num_players": players, "deals_per_episode": session})


def games_per_chunk(session: int) -> int:
    """Games (deals, or sessions of ``session`` deals) per work unit: ``CHUNK_DEALS`` deals' worth, at least one."""
    return max(1, CHUNK_DEALS // check_session(session))


# ---------------------------------------------------------------------------- one game
@dataclasses.dataclass(frozen=True)
class GameResult:
    """One game (a deal or a session) at one table: ``rows``, the ``train.table.seat_outcomes`` rows summed over
    its deals (the ``CHIPS`` column is each seat's chip change over the game), ``pot_left`` (the chips in the pot
    when it ended), ``deals_played`` (fewer than the session's when the pot bound cut it)."""

    rows: np.ndarray  # (N, NUM_OUTCOMES) int64
    pot_left: int
    deals_played: int


class SessionTally(Observer):
    """Sums the outcome rows of each deal of a game as it settles: in a session the env deals the next deal inside
    the step that settles one, so the settled deal is read off a copy of the state before that step, stepped by the
    rules core (as the hand-history recorders read it). ``starts`` keeps each deal's state as dealt when
    ``keep_starts`` is set (the tests compare the decks of two tables)."""

    def __init__(self, rules: Rules, keep_starts: bool = False) -> None:
        self.rules = rules
        self.params = rules.params()
        self.keep_starts = keep_starts
        self.rows = np.zeros((rules.num_players, NUM_OUTCOMES), dtype=np.int64)
        self.deals_played = 0
        self.starts: list[np.ndarray] = []

    def dealt(self, env: Any) -> None:
        self.rows[:] = 0
        self.deals_played = 0
        self.starts = [env.unwrapped.state_vector.copy()] if self.keep_starts else []

    def stepped(self, decision: Any, action: int, before: np.ndarray, env: Any) -> None:
        n = self.rules.num_players
        s = env.unwrapped.state_vector
        if StateView(s, n).deals_done == StateView(before, n).deals_done:
            return
        settled = before.copy()
        core.step(settled, self.params, int(action))
        self.rows += seat_outcomes(settled, n)
        self.deals_played += 1
        if self.keep_starts and env.unwrapped.agents and StateView(s, n).phase not in (core.DEAL_OVER, core.GAME_OVER):
            self.starts.append(s.copy())


def play_game(
    env: Any,
    deal: Deal,
    table: Sequence[Agent],
    labels: Sequence[str] | None = None,
    deal_name: str = "the deal",
    observers: Sequence[Observer] = (),
) -> GameResult:
    """Play one game (a deal, or a session when the deal's rules play several) with ``table[s]`` in seat ``s``
    (``train.table.play``: agents reset once before it, errors naming the agent and the decision)."""
    if deal.rules.deals_per_episode == 1:
        rows = play(env, deal, table, labels, deal_name, observers)
        return GameResult(rows, _pot(env), 1)
    tally = SessionTally(deal.rules)
    play(env, deal, table, labels, deal_name, (*observers, tally))
    return GameResult(tally.rows.copy(), _pot(env), tally.deals_played)


def _pot(env: Any) -> int:
    raw = env.unwrapped
    return StateView(raw.state_vector, raw.rules.num_players).pot


# ---------------------------------------------------------------------------- the duplicate schedule
def duplicate_tables(
    candidate: AgentSource,
    field: Sequence[AgentSource],
    seeds: Sequence[int],
    build: Callable[[Any, int], Agent] = build_agent,
) -> tuple[list[list[Agent]], list[Agent]]:
    """The ``N`` rotation tables (rotation ``r``: the candidate in seat ``r``, the field's agent of seat ``s`` in
    every other seat ``s``) and the all-field table, each agent seeded by its seat (``seeds[s]``) and made by
    ``build`` (``build_agent``; the research tools pass one that knows agents no ordinary table seats). One table
    per rotation, so that each table's agents see only their own games."""
    n = len(field)
    tables = [[build(candidate if s == r else field[s], seeds[s]) for s in range(n)] for r in range(n)]
    return tables, [build(field[s], seeds[s]) for s in range(n)]


def play_duplicate(
    env: Any,
    deal: Deal,
    tables: Sequence[Sequence[Agent]],
    labels: Sequence[Sequence[str]],
    deal_name: str,
    observers_of: Callable[[int], Sequence[Observer]] = lambda table: (),
    after: Callable[[int], None] = lambda table: None,
) -> list[GameResult]:
    """Play ``deal`` (a deal or a session) at each of ``tables`` in turn (the rotations, then the all-field table),
    ``labels[t]`` naming table ``t``'s seats; ``observers_of(t)`` watch table ``t``'s game, ``after(t)`` runs once
    it is over (a hand history written). The results, table by table."""
    results = []
    for t, table in enumerate(tables):
        results.append(play_game(env, deal, table, labels[t], deal_name, observers_of(t)))
        after(t)
    return results


def advantages(
    rotations: np.ndarray, pots: np.ndarray, baseline: np.ndarray, base_pots: np.ndarray, deals: int
) -> tuple[np.ndarray, np.ndarray]:
    """The table and replacement advantages of each game, in chips per deal (module docstring): ``rotations``
    ``(games, rotation, seat)`` chips, ``pots`` ``(games, rotation)`` the pot each rotation left, ``baseline``
    ``(games, seat)`` and ``base_pots`` ``(games,)`` those of the all-field table; ``deals`` per game. With
    ``pots`` and ``base_pots`` zero (single deals) these are the single-deal measures."""
    n = rotations.shape[1]
    own = np.eye(n, dtype=bool)
    # session chips in N-ths of a chip: N * chips + the pot left (each seat's share is pot / N)
    shares = n * rotations + pots[:, :, None]
    base = n * baseline + base_pots[:, None]
    candidate = shares[:, own]  # (games, n): seat r of rotation r
    others = shares[:, ~own].sum(axis=1)
    table = ((n - 1) * candidate.sum(axis=1) - others) / (n * (n - 1) * n * deals)
    replacement = (candidate - base).sum(axis=1) / (n * n * deals)
    return table, replacement
