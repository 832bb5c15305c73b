"""A match: seats of built-in agents and remote bots at a table, and the deals they play.

Two formats (``MatchSpec.format``):

* **single** (every match with a remote seat): each deal is played once. Deal ``k`` seats the ``i``-th entry of the
  match in seat ``(i + k) % N`` (rotation ``k % N``), so the seats rotate across deals, and each game is paired
  with its *par game*: the same deal played by the match's par agent in every seat (``MatchSpec.par_agent``),
  which the server plays itself and no bot ever sees before the match is over. An entry's *par advantage* on a
  deal is its chips minus the par agent's chips in the same seat of the par game: seat by seat, the entry against
  the par agent on the same cards. A bot plays a deal once because a bot that remembers a hand it held would know
  it again in the deal's next rotation: its own hand, the stock, and the other seats' cards it saw at the end.
* **rotations** (matches of built-in agents only, as ``bourre eval`` plays them): each deal is played ``N`` times,
  the seats rotated one place each time: in rotation ``r`` entry ``i`` sits in seat ``(i + r) % N``.

The deals of a match with a remote seat are secret: they come from a 32-byte *secret* the server draws
(``draw_secret``, the operating system's randomness) and keeps until the match is over. ``match_start`` carries its
SHA-256 (``commitment``) and ``match_end`` the secret itself and the seed derived from it (``seed_of``), so that a
bot can check, once the match is over, that the deals were fixed before it started; a new secret is drawn for every
match, so no deal is dealt to a bot twice. A match of built-in agents may name a seed (``bourre eval``'s deals).

The deals are ``train.table.make_deals(seed, rules, deals)``. Each game is played on the table's loop, as evaluation
plays it (``train.table``: the same reset, agents reset before the deal, one ``choose`` per decision, the same
outcome rows; ``tests/test_arena_match.py`` holds a match of built-in agents to it), by its awaitable driver in a
task of the server's event loop: a remote bot's turn is awaited (``train.arena.remote.RemoteSeat``), a built-in agent
thinks in a worker thread, so that no table stops the others. Built-in agents (and a remote seat's fallback) are
seeded by their entry, from ``(seed, N, 0, 1 + i)``, and reset before every deal (``seat_seed``: 63 bits in a match
dealt from a secret, which no bot can search through, as it could the 32 bits of an evaluation's agent seeds from the
moves it sees); the par game's agents by the deal and seat, from ``(seed, N, k, 1 + s)`` (the ladder's all-field
table, ``train.arena.scheduler``), seen only once the match is over.

An entry's result (``SeatResult``) is the evaluation's: its chips per deal with a 95% t-interval taking the deal
as the unit (``SideStats``); its *table advantage*, its chips minus the mean of the other seats at the same table
(``train.eval.duplicate``'s definition, from integer sums, so an entry among copies of itself scores exactly 0);
and in the single format its par advantage, with their intervals.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import re
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import numpy as np

import bourre_env
from agents.base import choose
from bourre_env import history
from bourre_env.core.rules import make_params
from bourre_env.deal_recorder import DealRecorder
from train.arena import protocol, thinking
from train.arena.pacing import Pacer
from train.arena.remote import GRACE_SECONDS, MAX_GRACE, Registry, RemoteSeat, TurnContext
from train.eval.duplicate import SideStats
from train.eval.report import percent, with_ci
from train.eval.statistics import t_interval
from train.schedule import agent_seed, build_agent, table_rules
from train.table import CHIPS, Deals, Decision, make_deals, play_async, reset_agents

__all__ = [
    "DEFAULT_CLOCK",
    "FORMATS",
    "MAX_DEALS",
    "MAX_MATCHES",
    "MatchReport",
    "MatchSpec",
    "SeatResult",
    "commitment",
    "draw_secret",
    "play_game",
    "play_match",
    "seat_seed",
    "seed_of",
    "warm_up",
]

DEFAULT_CLOCK = 2.0
"""Seconds a remote bot has for each move, unless the match says otherwise."""
MAX_DEALS = 1000
"""Deals of one match at most: a match ties up its bots, and its request waits for the report."""
MAX_CLOCK = 60.0
MAX_MATCHES = 32
"""Matches a server plays at once; one more is refused (429)."""
FORMATS = ("single", "rotations")
"""``single``: each deal once, paired with its par game (every match with a remote seat); ``rotations``: each
deal once per rotation of the seats (``bourre eval``'s duplicate deals; built-in agents only)."""
SECRET_PATTERN = re.compile(r"[0-9a-f]{64}")
NO_PAR = "none"
"""``par`` of a match that plays no par games (its entries get no par advantage): a benchmark of the server's own
work."""

DealHook = Callable[[int, int, np.ndarray, dict[str, Any]], Awaitable[None]]
"""Awaited as each game ends: ``(deal, rotation, outcome rows, hand history)``; the store commits it there."""
ParHook = Callable[[int, np.ndarray, dict[str, Any]], Awaitable[None]]
"""Awaited as each par game ends: ``(deal, outcome rows, hand history)``."""


def public_label(seat: str) -> str:
    """What the bots and the published hand histories are told of a seat: ``bot:NAME``, or an agent spec; a spec
    with options or a path (an operator's ``--agent``: a server address, a file) by its agent's name alone, which is
    all a table shows of a player."""
    if seat.startswith("bot:") or not any(c in seat for c in "=/\\"):
        return seat
    return seat.split(":", 1)[0]


def draw_secret() -> str:
    """A match's secret: 32 bytes of the operating system's randomness, as 64 hex digits."""
    return secrets.token_hex(32)


def commitment(secret: str) -> str:
    """What ``match_start`` shows of the secret: the SHA-256 of its 32 bytes, as hex. The secret is random, so its
    hash tells nothing of the deals; once the secret is revealed, anyone can check it against the hash."""
    return hashlib.sha256(bytes.fromhex(secret)).hexdigest()


def seat_seed(spec: MatchSpec, entry: int) -> int:
    """The seed of entry ``entry``'s agent (or of a remote seat's fallback): ``agent_seed(seed, N, 0, 1 + entry)``, as
    evaluation seeds it, in a match of built-in agents; in a match dealt from a secret, 63 bits from the same key, so
    that a bot cannot find a built-in seat's seed by trying every 32-bit one against the moves it has seen and then
    foresee that seat's play and read its hand from it."""
    key = [spec.seed, spec.players, 0, 1 + entry]
    if spec.secret is None:
        return agent_seed(*key)
    return int(np.random.SeedSequence(key).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def seed_of(secret: str) -> int:
    """The deals' seed of a secret: the first 8 bytes of SHA-256(``b"bourre-arena deals "`` + the secret's bytes),
    big-endian, shifted right one bit (63 bits: it fits the database's integers)."""
    digest = hashlib.sha256(b"bourre-arena deals " + bytes.fromhex(secret)).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclasses.dataclass(frozen=True)
class MatchSpec:
    """What a match request asks for; ``from_request`` refuses anything out of bounds. ``secret``: of a match with
    a remote seat (``with_secret``), from which ``seed`` is derived; ``par``: the agent of the par game (None: the
    one ``par_agent`` chooses)."""

    seats: tuple[str, ...]  # one entry per seat: bot:NAME or an agent spec
    players: int
    deals: int = 20
    seed: int = 0
    clock: float = DEFAULT_CLOCK
    fallback: str = "heuristic"
    grace: float = GRACE_SECONDS  # seconds a bot that lost its connection has to come back before it forfeits
    rule_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    format: str = "single"
    secret: str | None = None
    par: str | None = None

    @property
    def remote(self) -> bool:
        """Whether a remote bot (or a person) sits at the table."""
        return any(s.startswith("bot:") for s in self.seats)

    @property
    def par_agent(self) -> str | None:
        """The par game's agent: ``par`` if the match names one (``none``: no par game), else the built-in agent of
        the match when it seats one kind (a ladder's reference agent), else the fallback; None in the rotations
        format, which needs none."""
        if self.format != "single" or self.par == NO_PAR:
            return None
        if self.par is not None:
            return self.par
        kinds = {s for s in self.seats if not s.startswith("bot:")}
        return next(iter(kinds)) if len(kinds) == 1 else self.fallback

    def with_secret(self, secret: str) -> MatchSpec:
        """This match dealt from ``secret`` (``draw_secret``)."""
        if not SECRET_PATTERN.fullmatch(secret):
            raise ValueError("secret: expected 64 lowercase hex digits")
        return dataclasses.replace(self, secret=secret, seed=seed_of(secret))

    def request(self) -> dict[str, Any]:
        """The request stored for the match (``from_request(..., stored=True)`` reads it back)."""
        body: dict[str, Any] = {"seats": list(self.seats), "players": self.players, "deals": self.deals,
                                "seed": self.seed, "clock": self.clock, "grace": self.grace,
                                "fallback": self.fallback, "format": self.format}  # fmt: skip
        if self.secret is not None:
            body["secret"] = self.secret
        if self.par is not None:
            body["par"] = self.par
        return body

    @classmethod
    def from_request(cls, body: Any, stored: bool = False) -> MatchSpec:
        """From a request's JSON; ``ValueError`` naming the field. ``stored``: a request the server stored itself
        (``request``), which may hold the match's ``secret``; from anyone else, a match with a remote seat may name
        no seed (its deals are the server's secret)."""
        if not isinstance(body, dict):
            raise ValueError("expected a JSON object")
        known = {"seats", "players", "deals", "seed", "clock", "grace", "fallback", "format", "par"}
        unknown = set(body) - known - ({"secret", "people"} if stored else set())
        if unknown:
            raise ValueError(f"unknown fields: {sorted(unknown)[:5]}")
        seats = body.get("seats")
        if not isinstance(seats, list) or not all(isinstance(s, str) and len(s) <= 200 for s in seats):
            raise ValueError("seats: expected a list of bot:NAME and agent specs")
        values = {}
        for key, low, high in (("players", 2, 8), ("deals", 1, MAX_DEALS), ("seed", 0, 2**63 - 1)):
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
        par = body.get("par")
        if par is not None and (not isinstance(par, str) or not par.strip() or par.startswith("bot:")):
            raise ValueError(f"par: expected the spec of a built-in agent, got {par!r:.60}")
        # a stored request of an earlier version has no format: it was played in rotations
        form = body.get("format", ("single" if bots else "rotations") if not stored else "rotations")
        if form not in FORMATS:
            raise ValueError(f"format: expected one of {', '.join(FORMATS)}, got {form!r:.40}")
        if bots and not stored:
            if form != "single":
                raise ValueError("format: a match with a remote seat plays each deal once (single): a bot that "
                                 "held a hand would know it again in the deal's next rotation")  # fmt: skip
            if "seed" in body:
                raise ValueError("seed: the deals of a match with a remote seat are the server's secret (their hash "
                                 "is sent at the start, the secret at the end); a seed is for matches of built-in "
                                 "agents only")  # fmt: skip
        spec = cls(
            tuple(seats), values["players"], values["deals"], values["seed"], float(clock), fallback.strip(),
            float(grace), format=form, par=None if par is None else par.strip(),
        )  # fmt: skip
        secret = body.get("secret") if stored else None
        if secret is not None:
            if not isinstance(secret, str):
                raise ValueError("secret: expected 64 lowercase hex digits")
            spec = spec.with_secret(secret)
        return spec


@dataclasses.dataclass(frozen=True)
class SeatResult:
    entry: int
    label: str
    side: SideStats
    advantage: float
    advantage_ci95: tuple[float, float] | None
    counts: dict[str, int] | None  # a remote bot's timeouts, fallbacks and disconnects
    par_advantage: float | None = None  # the single format's: chips minus the par game's in the same seat
    par_advantage_ci95: tuple[float, float] | None = None


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
    format: str = "rotations"
    par: str | None = None  # the par game's agent (the single format)
    secret: str | None = None  # revealed once the match is over

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def text(self) -> str:
        """The report as ``bourre arena match`` prints it."""
        if self.format != "single":
            games = f"x {self.players} rotations"
        else:
            games = "played once each" + ("" if self.par is None else f", paired with the par game of {self.par}")
        lines = [
            f"match {self.match}: {self.players} players, {self.deals} deals {games}, seed {self.seed}, clock "
            f"{self.clock:g} s, grace {self.grace:g} s, fallback {self.fallback} ({self.status})"
        ]
        paired = self.par is not None
        rows = [["seat", "chips/deal [95% CI]", "table advantage [95% CI]"]
                + (["par advantage [95% CI]"] if paired else []) + ["pot won", "played", "remote"]]  # fmt: skip
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
                [r.label, with_ci(r.side.chips, r.side.chips_ci95), with_ci(r.advantage, r.advantage_ci95)]
                + ([with_ci(r.par_advantage or 0.0, r.par_advantage_ci95)] if paired else [])
                + [percent(r.side.pot_win_rate), percent(r.side.play_rate), remote]
            )
        widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
        last = len(rows[0]) - 1
        for row in rows:
            lines.append("  ".join(cell.ljust(w) if c in (0, last) else cell.rjust(w) for c, (cell, w) in
                                   enumerate(zip(row, widths, strict=True))).rstrip())  # fmt: skip
        return "\n".join(lines)


def results_of(
    labels: Sequence[str],
    outcomes: np.ndarray,
    rotations: np.ndarray,
    counts: Sequence[dict[str, int] | None],
    par: np.ndarray | None = None,
) -> list[SeatResult]:
    """From outcomes ``(deals, games, seat, 6)``, game ``j`` of deal ``k`` played in rotation ``rotations[k, j]``
    (entry ``i`` in seat ``(i + r) % N``); ``par``: the par games' rows ``(deals, seat, 6)``, if any."""
    n = outcomes.shape[2]
    games = outcomes.shape[1]
    deals = np.arange(outcomes.shape[0])[:, None]
    table_sum = outcomes[..., CHIPS].sum(axis=(1, 2))  # (deals,)
    results = []
    for i, label in enumerate(labels):
        seats = (i + rotations) % n  # (deals, games)
        rows = outcomes[deals, np.arange(games)[None, :], seats]  # (deals, games, 6)
        own = rows[..., CHIPS].sum(axis=1)
        advantage = ((n - 1) * own - (table_sum - own)) / (games * (n - 1))
        par_advantage, par_ci = None, None
        if par is not None:
            versus = (own - par[deals, seats, CHIPS].sum(axis=1)) / games
            par_advantage, par_ci = float(versus.mean()), t_interval(versus)
        results.append(
            SeatResult(
                i,
                label,
                SideStats.of(rows, own / games),
                float(advantage.mean()),
                t_interval(advantage),
                counts[i],
                par_advantage,
                par_ci,
            )  # fmt: skip
        )
    return results


def warm_up() -> None:
    """Play one game of built-in agents, so that the compiled game code is loaded (numba's cache: seconds, once per
    process) before the first match: a match runs on the server's event loop, which must keep answering the bots."""
    rules = table_rules(3, {})
    recorder = DealRecorder(rules)
    table = [build_agent("random", seed) for seed in range(3)]
    asyncio.run(play_game(bourre_env.env(num_players=3), table, make_deals(0, rules, 1), 0, ["random"] * 3, "warm-up",
                          recorder))  # fmt: skip
    recorder.history(["random"] * 3)


async def play_game(
    env: Any,
    table: Sequence[Any],
    deals: Deals,
    k: int,
    labels: Sequence[str],
    deal_name: str,
    recorder: DealRecorder | None = None,
    pacer: Pacer | None = None,
) -> np.ndarray:
    """Deal ``k`` of ``deals`` on the table's loop (``train.table.play_async``), agents reset first as evaluation
    resets them: a remote seat's turn awaited, a search's move awaited from its worker process and a built-in
    agent's move chosen in a worker thread, so that no table holds up the others; the ``seat_outcomes`` rows.
    ``recorder``: writes the game's hand history (``recorder.history(labels)`` once it is over). ``pacer``: holds
    back the built-in seats' moves (``train.arena.pacing``; a match with a remote seat)."""
    reset_agents(table)
    deal = deals.deal(k, env.unwrapped.rules)
    if recorder is not None:
        recorder.next_game(deal.deck, deal.env_seed)

    async def decide(decision: Decision) -> Any:
        agent = table[decision.seat]
        if isinstance(agent, RemoteSeat):
            return await agent.act(decision.observation)
        move: Awaitable[Any]
        if isinstance(agent, thinking.SeatProxy):
            move = agent.act_async(decision.observation, where=decision.where)
        else:
            move = asyncio.to_thread(choose, agent, decision.observation, repr(decision.label), decision.where)
        return await (move if pacer is None else pacer.paced(id(agent), move))

    return await play_async(env, deal, decide, labels, deal_name, () if recorder is None else (recorder,))


def _build_all(spec: str, seeds: Sequence[int]) -> list[Any]:
    return [thinking.build_seat(spec, seed) for seed in seeds]


def close_seats(table: Sequence[Any]) -> None:
    """Free the agents that think in worker processes (``thinking.SeatProxy``)."""
    for agent in table:
        if isinstance(agent, thinking.SeatProxy):
            agent.close()


def par_env(spec: MatchSpec, rules: Any) -> tuple[Any, DealRecorder]:
    """The env a par game (or the ladder's all-field table) is played in, and the recorder of its hand histories:
    the plain env, whose games ``DealRecorder`` records as ``bourre_env.history.Recording`` would, for less."""
    env = bourre_env.env(**{**spec.rule_options, "num_players": spec.players})
    return env, DealRecorder(env.unwrapped.rules, history.rules_record(rules)["preset"])


async def play_par_games(
    agent: str,
    seed: int,
    rules: Any,
    deals: Deals,
    dealt: asyncio.Queue[int | None],
    played_in: tuple[Any, DealRecorder],
    on_par: ParHook,
) -> None:
    """The par games, one per deal number taken from ``dealt`` (None: no more): ``agent`` in every seat, seat
    ``s`` seeded from ``(seed, N, k, 1 + s)`` as the ladder's all-field table is, so a deal's par game is the same
    whenever it is played."""
    n = rules.num_players
    labels = [agent] * n
    env, recorder = played_in
    while (k := await dealt.get()) is not None:
        seeds = [agent_seed(seed, n, k, 1 + s) for s in range(n)]
        table = await asyncio.to_thread(_build_all, agent, seeds)
        try:
            rows = await play_game(env, table, deals, k, labels, f"par game of deal {k}", recorder)
        finally:
            close_seats(table)
        await on_par(k, rows, recorder.history(labels))


async def play_match(
    spec: MatchSpec,
    match: str,
    registry: Registry,
    on_game: DealHook | None = None,
    stop: Callable[[], bool] = lambda: False,
    on_par: ParHook | None = None,
) -> MatchReport:
    """Play ``spec`` (its bots claimed from ``registry``, released at the end) on the running event loop;
    ``ValueError`` before any deal for a bot that is not connected or busy, a bad agent spec, or a match with a
    remote seat that is not dealt from a secret or not in the single format. ``on_par``: awaited with each par game
    (the single format)."""
    if spec.remote and (spec.secret is None or spec.format != "single"):
        raise ValueError("a match with a remote seat is dealt from a secret (MatchSpec.with_secret) in the single "
                         "format")  # fmt: skip
    n = spec.players
    rules = table_rules(n, spec.rule_options)
    deals = make_deals(spec.seed, rules, spec.deals)
    single = spec.format == "single"
    env, recorder = par_env(spec, rules)
    clock_ms = int(round(spec.clock * 1000))
    totals = [0] * n
    context = TurnContext(match, env, make_params(rules), rules, spec.clock, games=spec.deals * (1 if single else n))
    names = [s[4:] for s in spec.seats if s.startswith("bot:")]
    slots = {slot.name: slot for slot in registry.seat(names, match, spec.grace)}
    dealt: asyncio.Queue[int | None] = asyncio.Queue()
    par_rows = np.zeros((spec.deals, n, 6), dtype=np.int64)
    par_task: asyncio.Task[None] | None = None
    entries: list[Any] = []
    pacer = Pacer() if spec.remote else None
    try:
        for i, seat in enumerate(spec.seats):
            seed = seat_seed(spec, i)
            entries.append(
                RemoteSeat(slots[seat[4:]], context, spec.fallback, seed)
                if seat.startswith("bot:")
                else thinking.build_seat(seat, seed)
            )
        par_agent = spec.par_agent
        if par_agent is not None:

            async def keep_par(k: int, rows: np.ndarray, saved: dict[str, Any]) -> None:
                par_rows[k] = rows
                if on_par is not None:
                    await on_par(k, rows, saved)

            par_task = asyncio.create_task(
                play_par_games(par_agent, spec.seed, rules, deals, dealt, par_env(spec, rules), keep_par)
            )
        remotes = [(i, e) for i, e in enumerate(entries) if isinstance(e, RemoteSeat)]
        start = protocol.match_start(
            match, n, [public_label(s) for s in spec.seats], spec.deals,
            commitment(spec.secret) if spec.secret else None, clock_ms, rules,
            spec.grace, spec.fallback, spec.format, par_agent,
        )  # fmt: skip
        for _, remote in remotes:
            remote.send(start)
        games = 1 if single else n
        outcomes = np.zeros((spec.deals, games, n, 6), dtype=np.int64)
        rotations = np.zeros((spec.deals, games), dtype=np.int64)
        played = 0
        for k in range(spec.deals):
            if stop():
                break
            if par_task is not None:
                dealt.put_nowait(k)
            for j, r in enumerate([k % n] if single else range(n)):
                table = [entries[(s - r) % n] for s in range(n)]
                labels = [public_label(spec.seats[(s - r) % n]) for s in range(n)]
                context.deal = k
                context.game += 1
                context.chips = lambda r=r: [totals[(s - r) % n] for s in range(n)]  # type: ignore[misc]
                dealer = int(deals.dealers[k])
                for i, remote in remotes:
                    remote.send(protocol.deal_start(match, k, r, (i + r) % n, dealer, labels))
                rows = await play_game(env, table, deals, k, labels, f"deal {k}, rotation {r}", recorder, pacer)
                outcomes[k, j] = rows
                rotations[k, j] = r
                saved = recorder.history(labels)
                for s in range(n):
                    totals[(s - r) % n] += int(rows[s, CHIPS])
                if on_game is not None:  # stored before the bots hear of it: what they were told is kept
                    await on_game(k, r, rows, saved)
                record = saved["deals"][0]
                for i, remote in remotes:
                    remote.send(protocol.deal_end(match, k, r, (i + r) % n, record))
            played = k + 1
        if par_task is not None:
            dealt.put_nowait(None)
            await par_task
            par_task = None
        registry.check_forfeits(list(slots.values()))
        counts = [e.slot.counts.to_dict() if isinstance(e, RemoteSeat) and e.slot.counts else None for e in entries]
        status = "finished" if played == spec.deals else "aborted"
        results = (
            results_of(
                spec.seats, outcomes[:played], rotations[:played], counts, par_rows[:played] if par_agent else None
            )
            if played
            else []
        )
        report = MatchReport(
            match, status, n, played, spec.seed, spec.clock, results, spec.grace, spec.fallback, spec.format,
            par_agent, spec.secret,
        )  # fmt: skip
        summary = [
            {"seat": public_label(r.label), "chips": r.side.chips, "advantage": r.advantage,
             "par_advantage": r.par_advantage, "counts": r.counts}
            for r in report.results
        ]  # fmt: skip
        end = protocol.match_end(match, status, summary, spec.secret, spec.seed if spec.secret else None)
        for _, remote in remotes:
            remote.send(end)
        return report
    finally:
        if par_task is not None:
            par_task.cancel()
        close_seats(entries)
        registry.release(list(slots.values()))
