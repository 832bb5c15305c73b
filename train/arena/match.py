"""A match: seats of built-in agents and remote bots, played as ``bourre eval`` plays its duplicate deals.

The deals are ``train.eval.duplicate.make_deals(seed, rules, deals)``, the very decks, dealers and reset seeds of an
evaluation with the same seed. Each deal is played ``N`` times, the seats rotated one place each time: in rotation
``r`` the ``i``-th entry of the match sits in seat ``(i + r) % N``, so every entry holds every hand of the deal once
and seat and card luck cancel. Each game is played as ``train.eval.duplicate.play_deal`` plays it (the same reset,
agents reset before the deal, one ``choose`` per decision, the same outcome rows; ``tests/test_arena_match.py``
holds a match of built-in agents to it), in a task of the server's event loop: a remote bot's turn is awaited
(``train.arena.remote.RemoteSeat``), a built-in agent thinks in a worker thread, so that no table stops the others.
Built-in agents are seeded by their entry, from ``(seed, N, 0, 1 + i)``, and reset before every deal.

An entry's result (``SeatResult``) is the evaluation's: its chips per deal with a 95% t-interval taking the deal
as the unit (``SideStats``), and its *table advantage*, its chips minus the mean of the other seats at the same
table, averaged over the rotations, with its interval (``train.eval.duplicate``'s definition, computed from integer
sums, so an entry among copies of itself scores exactly 0).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import numpy as np

import bourre_env
from agents.base import AgentError, choose
from bourre_env import history
from bourre_env.core.rules import make_params
from train.arena import protocol
from train.arena.remote import GRACE_SECONDS, MAX_GRACE, Registry, RemoteSeat, TurnContext
from train.eval.duplicate import (
    CHIPS,
    Deals,
    SideStats,
    agent_seed,
    build_agent,
    make_deals,
    seat_outcomes,
    table_rules,
)
from train.eval.report import percent, with_ci
from train.eval.statistics import t_interval

__all__ = ["DEFAULT_CLOCK", "MAX_DEALS", "MatchSpec", "MatchReport", "SeatResult", "play_game", "play_match", "warm_up"]

DEFAULT_CLOCK = 2.0
"""Seconds a remote bot has for each move, unless the match says otherwise."""
MAX_DEALS = 1000
"""Deals of one match at most: a match ties up its bots, and its request waits for the report."""
MAX_CLOCK = 60.0

DealHook = Callable[[int, int, np.ndarray, dict[str, Any]], Awaitable[None]]
"""Awaited as each game ends: ``(deal, rotation, outcome rows, hand history)``; the store commits it there."""


@dataclasses.dataclass(frozen=True)
class MatchSpec:
    """What a match request asks for; ``check`` refuses anything out of bounds."""

    seats: tuple[str, ...]  # one entry per seat: bot:NAME or an agent spec
    players: int
    deals: int = 20
    seed: int = 0
    clock: float = DEFAULT_CLOCK
    fallback: str = "heuristic"
    grace: float = GRACE_SECONDS  # seconds a bot that lost its connection has to come back before it forfeits
    rule_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @classmethod
    def from_request(cls, body: Any) -> MatchSpec:
        """From a request's JSON; ``ValueError`` naming the field."""
        if not isinstance(body, dict):
            raise ValueError("expected a JSON object")
        unknown = set(body) - {"seats", "players", "deals", "seed", "clock", "grace", "fallback"}
        if unknown:
            raise ValueError(f"unknown fields: {sorted(unknown)[:5]}")
        seats = body.get("seats")
        if not isinstance(seats, list) or not all(isinstance(s, str) and len(s) <= 200 for s in seats):
            raise ValueError("seats: expected a list of bot:NAME and agent specs")
        values = {}
        for key, low, high in (("players", 2, 8), ("deals", 1, MAX_DEALS), ("seed", 0, 2**32 - 1)):
            value = body.get(key, cls.__dataclass_fields__[key].default if key != "players" else len(seats))
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"{key}: expected an integer in {low}..{high}, got {value!r}")
            values[key] = value
        clock = body.get("clock", DEFAULT_CLOCK)
        if isinstance(clock, bool) or not isinstance(clock, int | float) or not 0.001 <= clock <= MAX_CLOCK:
            raise ValueError(f"clock: expected seconds in 0.001..{MAX_CLOCK:g}, got {clock!r}")
        grace = body.get("grace", GRACE_SECONDS)
        if isinstance(grace, bool) or not isinstance(grace, int | float) or not 0 <= grace <= MAX_GRACE:
            raise ValueError(f"grace: expected seconds in 0..{MAX_GRACE:g}, got {grace!r}")
        if len(seats) != values["players"]:
            raise ValueError(f"seats: expected one entry per seat ({values['players']}), got {len(seats)}")
        bots = [s[4:] for s in seats if s.startswith("bot:")]
        if len(set(bots)) != len(bots):
            raise ValueError("seats: a bot sits at most once in a match")
        fallback = body.get("fallback", "heuristic")
        if not isinstance(fallback, str) or not fallback.strip() or fallback.startswith("bot:"):
            raise ValueError(f"fallback: expected the spec of a built-in agent, got {fallback!r:.60}")
        return cls(
            tuple(seats), values["players"], values["deals"], values["seed"], float(clock), fallback.strip(),
            float(grace),
        )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class SeatResult:
    entry: int
    label: str
    side: SideStats
    advantage: float
    advantage_ci95: tuple[float, float] | None
    counts: dict[str, int] | None  # a remote bot's timeouts, fallbacks and disconnects


@dataclasses.dataclass(frozen=True)
class MatchReport:
    match: str
    status: str  # finished, or aborted
    players: int
    deals: int
    seed: int
    clock: float
    results: list[SeatResult]
    grace: float = GRACE_SECONDS
    fallback: str = "heuristic"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def text(self) -> str:
        """The report as ``bourre arena match`` prints it."""
        head = f"match {self.match}: {self.players} players, {self.deals} deals x {self.players} rotations, seed "
        lines = [
            head + f"{self.seed}, clock {self.clock:g} s, grace {self.grace:g} s, fallback {self.fallback} "
            f"({self.status})"
        ]
        rows = [["seat", "chips/deal [95% CI]", "table advantage [95% CI]", "pot won", "played", "remote"]]
        for r in self.results:
            counts = r.counts
            remote = (
                "-"
                if counts is None
                else f"{counts['decisions']} moves, {counts['fallbacks']} fallbacks ({counts['timeouts']} timeouts, "
                f"{counts['illegal']} illegal, {counts['malformed']} malformed, {counts['absent']} absent), "
                f"{counts['disconnects']} disconnects"
                + (f", forfeited its seat ({counts['forfeited']} moves after it)" if counts["forfeits"] else "")
            )
            rows.append(
                [
                    r.label,
                    with_ci(r.side.chips, r.side.chips_ci95),
                    with_ci(r.advantage, r.advantage_ci95),
                    percent(r.side.pot_win_rate),
                    percent(r.side.play_rate),
                    remote,
                ]
            )
        widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
        for row in rows:
            lines.append("  ".join(cell.ljust(w) if c in (0, 5) else cell.rjust(w) for c, (cell, w) in
                                   enumerate(zip(row, widths, strict=True))).rstrip())  # fmt: skip
        return "\n".join(lines)


def results_of(
    labels: Sequence[str], outcomes: np.ndarray, counts: Sequence[dict[str, int] | None]
) -> list[SeatResult]:
    """From outcomes ``(deals, rotation, seat, 6)`` with entry ``i`` in seat ``(i + r) % N`` of rotation ``r``."""
    n = outcomes.shape[1]
    table_sum = outcomes[..., CHIPS].sum(axis=2).sum(axis=1)  # (deals,)
    results = []
    for i, label in enumerate(labels):
        rows = np.stack([outcomes[:, r, (i + r) % n] for r in range(n)], axis=1)  # (deals, n, 6)
        own = rows[..., CHIPS].sum(axis=1)
        advantage = ((n - 1) * own - (table_sum - own)) / (n * (n - 1))
        results.append(
            SeatResult(i, label, SideStats.of(rows, own / n), float(advantage.mean()), t_interval(advantage), counts[i])
        )
    return results


def warm_up() -> None:
    """Play one game of built-in agents, so that the compiled game code is loaded (numba's cache: seconds, once per
    process) before the first match: a match runs on the server's event loop, which must keep answering the bots."""
    rules = table_rules(3, {})
    env = history.Recording(bourre_env.env(num_players=3))
    table = [build_agent("random", seed) for seed in range(3)]
    asyncio.run(play_game(env, table, make_deals(0, rules, 1), 0, ["random"] * 3, "warm-up"))
    env.history(["random"] * 3)


async def play_game(
    env: Any, table: Sequence[Any], deals: Deals, k: int, labels: Sequence[str], deal_name: str
) -> np.ndarray:
    """``train.eval.duplicate.play_deal(env, table, deals, k, labels=labels, deal_name=deal_name)``, with a remote
    seat's turn awaited and a built-in agent's move chosen in a worker thread; the ``seat_outcomes`` rows."""
    env.reset(seed=int(deals.env_seeds[k]), options={"deck": deals.decks[k].tolist(), "dealer": int(deals.dealers[k])})
    for agent in table:
        reset = getattr(agent, "reset", None)
        if callable(reset):
            reset()
    seat_of = env.unwrapped.agent_name_mapping
    for decision, name in enumerate(env.agent_iter(), 1):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        seat = seat_of[name]
        where = f"{deal_name}, decision {decision} ({name})"
        agent = table[seat]
        if isinstance(agent, RemoteSeat):
            action = await agent.act(obs)
        else:
            action = await asyncio.to_thread(choose, agent, obs, repr(labels[seat]), where)
        try:
            env.step(action)
        except ValueError as err:  # the rules refuse it: out of range, or illegal where reneges are not allowed
            raise AgentError(f"agent {labels[seat]!r} at {where}: {err}") from None
    return seat_outcomes(env.unwrapped.state_vector, len(table))


async def play_match(
    spec: MatchSpec,
    match: str,
    registry: Registry,
    on_game: DealHook | None = None,
    stop: Callable[[], bool] = lambda: False,
) -> MatchReport:
    """Play ``spec`` (its bots claimed from ``registry``, released at the end) on the running event loop;
    ``ValueError`` before any deal for a bot that is not connected or busy, or a bad agent spec."""
    n = spec.players
    rules = table_rules(n, spec.rule_options)
    deals = make_deals(spec.seed, rules, spec.deals)
    # the preset the histories are written against, found once (history.rules_record's default, for every game)
    preset = history.rules_record(rules)["preset"]
    env = history.Recording(bourre_env.env(**{**spec.rule_options, "num_players": n}), preset=preset)
    clock_ms = int(round(spec.clock * 1000))
    totals = [0] * n
    context = TurnContext(match, env, make_params(rules), rules, spec.clock)
    names = [s[4:] for s in spec.seats if s.startswith("bot:")]
    slots = {slot.name: slot for slot in registry.seat(names, match, spec.grace)}
    try:
        entries: list[Any] = []
        for i, seat in enumerate(spec.seats):
            seed = agent_seed(spec.seed, n, 0, 1 + i)
            entries.append(
                RemoteSeat(slots[seat[4:]], context, spec.fallback, seed)
                if seat.startswith("bot:")
                else build_agent(seat, seed)
            )
        remotes = [(i, e) for i, e in enumerate(entries) if isinstance(e, RemoteSeat)]
        for _, remote in remotes:
            remote.send(
                protocol.match_start(
                    match, n, spec.seats, spec.deals, spec.seed, clock_ms, rules, spec.grace, spec.fallback
                )
            )
        outcomes = np.zeros((spec.deals, n, n, 6), dtype=np.int64)
        played = 0
        for k in range(spec.deals):
            if stop():
                break
            for r in range(n):
                table = [entries[(s - r) % n] for s in range(n)]
                labels = [spec.seats[(s - r) % n] for s in range(n)]
                context.deal = k
                context.chips = lambda r=r: [totals[(s - r) % n] for s in range(n)]  # type: ignore[misc]
                dealer = int(deals.dealers[k])
                for i, remote in remotes:
                    remote.send(protocol.deal_start(match, k, r, (i + r) % n, dealer, labels))
                rows = await play_game(env, table, deals, k, labels, f"deal {k}, rotation {r}")
                outcomes[k, r] = rows
                saved = env.history(labels)
                for s in range(n):
                    totals[(s - r) % n] += int(rows[s, CHIPS])
                if on_game is not None:  # stored before the bots hear of it: what they were told is kept
                    await on_game(k, r, rows, saved)
                for i, remote in remotes:
                    remote.send(protocol.deal_end(match, k, r, (i + r) % n, saved["deals"][0]["results"]))
            played = k + 1
        registry.check_forfeits(list(slots.values()))
        counts = [e.slot.counts.to_dict() if isinstance(e, RemoteSeat) and e.slot.counts else None for e in entries]
        status = "finished" if played == spec.deals else "aborted"
        report = MatchReport(
            match, status, n, played, spec.seed, spec.clock,
            results_of(spec.seats, outcomes[:played], counts) if played else [], spec.grace, spec.fallback,
        )  # fmt: skip
        summary = [
            {"seat": r.label, "chips": r.side.chips, "advantage": r.advantage, "counts": r.counts}
            for r in report.results
        ]
        for _, remote in remotes:
            remote.send(protocol.match_end(match, status, summary))
        return report
    finally:
        registry.release(list(slots.values()))
