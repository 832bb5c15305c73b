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
* **session** (Bourré as it is played at a table): the match is one session of its deals, the pot carried from deal
  to deal (the env's ``deals_per_episode``: a bourré payment and a tied pot stay in the pot, bourré and tied players
  skip the next ante), entry ``i`` in seat ``i`` throughout while the deal passes left. The first deal is deal 0 of
  ``make_deals(seed, rules, 1)``; every later deck and reshuffle seed is drawn by the env's generator from that
  deal's reset seed, which no action moves, so the secret fixes every deck of the session before it starts. The
  session ends after its deals, or earlier when a deal leaves more than ``bourre_env.limits.POT_BOUND`` chips in
  the pot (the env ends it). Its *par session* is the same session played by the par agent in every seat (seat
  ``s`` seeded from ``(seed, N, 0, 1 + s)``): the same decks deal by deal whatever either table plays. The pot left
  when a session ends is the table's, shared equally by the seats (``train.arena.sessions``, as ``bourre eval
  --session`` counts it); each deal is stored, and sent in ``deal_end``, as it settles.

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
import logging
import re
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import bourre_env
from bourre_env import limits
from bourre_env.deal_recorder import DealRecorder
from train.arena import protocol, thinking
from train.arena.games import DealHook, ParHook, close_seats, par_env, play_game, play_par_games, public_label
from train.arena.pacing import Pacer
from train.arena.remote import GRACE_SECONDS, MAX_GRACE, FencedError, Registry, RemoteSeat, TurnContext
from train.arena.sessions import play_par_session, play_session, pot_changes
from train.eval.duplicate import SideStats
from train.eval.report import percent, with_ci
from train.eval.statistics import t_interval
from train.schedule import agent_seed, build_agent, by_entry, table_rules
from train.table import CHIPS, make_deals, seated

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

log = logging.getLogger("bourre.arena")

DEFAULT_CLOCK = 2.0
"""Seconds a remote bot has for each move, unless the match says otherwise."""
MAX_DEALS = 1000
"""Deals of one match at most: a match ties up its bots, and its request waits for the report."""
MAX_CLOCK = 60.0
MAX_RULE_OPTIONS = 32
"""House rules a match request may set (``rules``): more than ``Rules`` has fields is no request of ours."""
MAX_MATCHES = 32
"""Matches a server plays at once; one more is refused (429)."""
FORMATS = ("single", "rotations", "session")
"""``single``: each deal once, paired with its par game (every match with a remote seat may play it); ``rotations``:
each deal once per rotation of the seats (``bourre eval``'s duplicate deals; built-in agents only); ``session``: the
deals as one session at one table, the pot carried, paired with its par session."""
SECRET_PATTERN = re.compile(r"[0-9a-f]{64}")
NO_PAR = "none"
"""``par`` of a match that plays no par games (its entries get no par advantage): a benchmark of the server's own
work."""


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
        if self.format == "rotations" or self.par == NO_PAR:
            return None
        if self.par is not None:
            return self.par
        kinds = {s for s in self.seats if not s.startswith("bot:")}
        return next(iter(kinds)) if len(kinds) == 1 else self.fallback

    @property
    def par_key(self) -> str | None:
        """The name the par games are stored under (``train.arena.records.baselines``' field, with the players, the
        seed and the deal): the par agent's spec; for a session, ``session:K:SPEC``, so that the deals of a par
        session are never taken for single deals of the same seed, nor for a session of another length."""
        agent = self.par_agent
        if agent is None or self.format != "session":
            return agent
        return f"session:{self.deals}:{agent}"

    def with_secret(self, secret: str) -> MatchSpec:
        """This match dealt from ``secret`` (``draw_secret``)."""
        if not SECRET_PATTERN.fullmatch(secret):
            raise ValueError("secret: expected 64 lowercase hex digits")
        return dataclasses.replace(self, secret=secret, seed=seed_of(secret))

    def request(self) -> dict[str, Any]:
        """The request stored for the match (``from_request(..., stored=True)`` reads it back)."""
        body: dict[str, Any] = {
            "seats": list(self.seats),
            "players": self.players,
            "deals": self.deals,
            "seed": self.seed,
            "clock": self.clock,
            "grace": self.grace,
            "fallback": self.fallback,
            "format": self.format,
        }
        if self.secret is not None:
            body["secret"] = self.secret
        if self.par is not None:
            body["par"] = self.par
        if self.rule_options:
            body["rules"] = dict(self.rule_options)
        return body

    @classmethod
    def from_request(cls, body: Any, stored: bool = False) -> MatchSpec:
        """From a request's JSON; ``ValueError`` naming the field. ``stored``: a request the server stored itself
        (``request``), which may hold the match's ``secret``; from anyone else, a match with a remote seat may name
        no seed (its deals are the server's secret)."""
        if not isinstance(body, dict):
            raise ValueError("expected a JSON object")
        known = {"seats", "players", "deals", "seed", "clock", "grace", "fallback", "format", "par", "rules"}
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
            if form == "rotations":
                raise ValueError(
                    "format: a match with a remote seat plays each deal once (single, or session): a bot that held a "
                    "hand would know it again in the deal's next rotation"
                )
            if "seed" in body:
                raise ValueError(
                    "seed: the deals of a match with a remote seat are the server's secret (their hash "
                    "is sent at the start, the secret at the end); a seed is for matches of built-in "
                    "agents only"
                )
        options = _rule_options(body.get("rules", {}), values["players"], values["deals"] if form == "session" else 1)
        spec = cls(
            tuple(seats),
            values["players"],
            values["deals"],
            values["seed"],
            float(clock),
            fallback.strip(),
            float(grace),
            options,
            format=form,
            par=None if par is None else par.strip(),
        )
        secret = body.get("secret") if stored else None
        if secret is not None:
            if not isinstance(secret, str):
                raise ValueError("secret: expected 64 lowercase hex digits")
            spec = spec.with_secret(secret)
        return spec


def _rule_options(options: Any, players: int, session: int) -> dict[str, Any]:
    """A request's ``rules`` (house rules by ``Rules`` field, JSON scalars), checked by building the rules of the
    match; ``ValueError`` naming the field otherwise."""
    if not isinstance(options, dict) or len(options) > MAX_RULE_OPTIONS:
        raise ValueError(f"rules: expected an object of at most {MAX_RULE_OPTIONS} house rules, KEY: VALUE")
    if "deals_per_episode" in options:
        raise ValueError("rules.deals_per_episode: a session's deals are the match's (format session, deals K)")
    for key, value in options.items():
        if key == "num_players" or not (value is None or isinstance(value, bool | int | float | str)):
            raise ValueError(f"rules.{key:.40}: expected a house rule and a number, text, true, false or null")
    try:
        limits.check_rules(table_rules(players, options, session))
    except ValueError as err:
        raise ValueError(f"rules: {err}") from None
    return dict(options)


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
    par: str | None = None  # the par game's agent (the single and session formats)
    secret: str | None = None  # revealed once the match is over
    pot_left: int | None = None  # the session format's: the chips in the pot when the session ended

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def text(self) -> str:
        """The report as ``bourre arena match`` prints it."""
        if self.format == "rotations":
            games = f"x {self.players} rotations"
        elif self.format == "session":
            games = f"as one session, the pot carried ({self.pot_left} left in the pot, shared by the table)" + (
                "" if self.par is None else f", paired with the par session of {self.par}"
            )
        else:
            games = "played once each" + ("" if self.par is None else f", paired with the par game of {self.par}")
        lines = [
            f"match {self.match}: {self.players} players, {self.deals} deals {games}, seed {self.seed}, clock "
            f"{self.clock:g} s, grace {self.grace:g} s, fallback {self.fallback} ({self.status})"
        ]
        paired = self.par is not None
        rows = [
            ["seat", "chips/deal [95% CI]", "table advantage [95% CI]"]
            + (["par advantage [95% CI]"] if paired else [])
            + ["pot won", "played", "remote"]
        ]
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
            lines.append(
                "  ".join(
                    cell.ljust(w) if c in (0, last) else cell.rjust(w)
                    for c, (cell, w) in enumerate(zip(row, widths, strict=True))
                ).rstrip()
            )
        return "\n".join(lines)


def results_of(
    labels: Sequence[str],
    outcomes: np.ndarray,
    rotations: np.ndarray,
    counts: Sequence[dict[str, int] | None],
    par: np.ndarray | None = None,
    pots: np.ndarray | None = None,
    par_pots: np.ndarray | None = None,
) -> list[SeatResult]:
    """From outcomes ``(deals, games, seat, 6)``, game ``j`` of deal ``k`` played in rotation ``rotations[k, j]``
    (entry ``i`` in seat ``(i + r) % N``); ``par``: the par games' rows ``(deals, seat, 6)``, if any. ``pots`` and
    ``par_pots``: in a session, the change of the pot over each deal at the table and in the par session
    (``train.arena.sessions.pot_changes``): each seat's share, an ``N``-th, counts in its chips."""
    n = outcomes.shape[2]
    games = outcomes.shape[1]
    deals = np.arange(outcomes.shape[0])[:, None]
    table_sum = outcomes[..., CHIPS].sum(axis=(1, 2))  # (deals,)
    share = np.zeros(outcomes.shape[0]) if pots is None else pots / n
    par_share = np.zeros(outcomes.shape[0]) if par_pots is None else par_pots / n
    results = []
    for i, label in enumerate(labels):
        seats = (i + rotations) % n  # (deals, games)
        rows = outcomes[deals, np.arange(games)[None, :], seats]  # (deals, games, 6)
        own = rows[..., CHIPS].sum(axis=1)
        advantage = ((n - 1) * own - (table_sum - own)) / (games * (n - 1))
        par_advantage, par_ci = None, None
        if par is not None:
            versus = (own - par[deals, seats, CHIPS].sum(axis=1)) / games + (share - par_share)
            par_advantage, par_ci = float(versus.mean()), t_interval(versus)
        results.append(
            SeatResult(
                i,
                label,
                SideStats.of(rows, own / games + share),
                float(advantage.mean()),
                t_interval(advantage),
                counts[i],
                par_advantage,
                par_ci,
            )
        )
    return results


def warm_up() -> None:
    """Play one game of built-in agents, so that the compiled game code is loaded (numba's cache: seconds, once per
    process) before the first match: a match runs on the server's event loop, which must keep answering the bots."""
    rules = table_rules(3, {})
    recorder = DealRecorder(rules)
    table = [build_agent("random", seed) for seed in range(3)]
    asyncio.run(
        play_game(bourre_env.env(num_players=3), table, make_deals(0, rules, 1), 0, ["random"] * 3, "warm-up", recorder)
    )
    recorder.history(["random"] * 3)


async def play_match(
    spec: MatchSpec,
    match: str,
    registry: Registry,
    on_game: DealHook | None = None,
    stop: Callable[[], bool] = lambda: False,
    on_par: ParHook | None = None,
    fenced: Callable[[], bool] = lambda: False,
) -> MatchReport:
    """Play ``spec`` (its bots claimed from ``registry``, released at the end) on the running event loop;
    ``ValueError`` before any deal for a bot that is not connected or busy, a bad agent spec, or a match with a
    remote seat that is not dealt from a secret or in the rotations format. ``on_par``: awaited with each par game
    (each deal of the par session). ``fenced``: whether the server was judged gone by another server of its database
    meanwhile (``train.arena.storage``), which stops the match before its next remote turn or deal."""
    if spec.remote and (spec.secret is None or spec.format == "rotations"):
        raise ValueError(
            "a match with a remote seat is dealt from a secret (MatchSpec.with_secret) in the single or session format"
        )
    n = spec.players
    session = spec.format == "session"
    rules = table_rules(n, spec.rule_options, spec.deals if session else 1)
    deals = make_deals(spec.seed, rules, 1 if session else spec.deals)
    single = spec.format != "rotations"
    env, recorder = par_env(rules)
    clock_ms = int(round(spec.clock * 1000))
    totals = [0] * n
    context = TurnContext(match, rules, spec.clock, games=spec.deals * (1 if single else n), fenced=fenced)

    def halted() -> bool:
        return stop() or fenced()

    names = [s[4:] for s in spec.seats if s.startswith("bot:")]
    slots = {slot.name: slot for slot in registry.seat(names, match, spec.grace)}
    dealt: asyncio.Queue[int | None] = asyncio.Queue()
    par_rows = np.zeros((spec.deals, n, 6), dtype=np.int64)
    par_task: asyncio.Task[Any] | None = None
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
                play_par_session(par_agent, spec.seed, rules, deals, par_env(rules), on_par)
                if session
                else play_par_games(par_agent, spec.seed, rules, deals, dealt, par_env(rules), keep_par)
            )
        remotes = [(i, e) for i, e in enumerate(entries) if isinstance(e, RemoteSeat)]
        public = [public_label(s) for s in spec.seats]
        start = protocol.match_start(
            match,
            n,
            public,
            spec.deals,
            commitment(spec.secret) if spec.secret else None,
            clock_ms,
            rules,
            spec.grace,
            spec.fallback,
            spec.format,
            par_agent,
        )
        for _, remote in remotes:
            remote.send(start)
        games = 1 if single else n
        outcomes = np.zeros((spec.deals, games, n, 6), dtype=np.int64)
        rotations = np.zeros((spec.deals, games), dtype=np.int64)
        pots = np.zeros(spec.deals, dtype=np.int64)  # a session's: the pot each deal left
        played = 0
        stopped = False
        if session:
            played, stopped = await play_session(
                match=match,
                labels=public,
                env=env,
                recorder=recorder,
                pacer=pacer,
                deals=deals,
                entries=entries,
                remotes=remotes,
                context=context,
                totals=totals,
                on_game=on_game,
                stop=halted,
                outcomes=outcomes,
                pots=pots,
            )
        try:  # a fenced match (its server judged gone) stops at its next remote turn: the deals played count
            for k in range(0 if session else spec.deals):
                if halted():
                    break
                if par_task is not None:
                    dealt.put_nowait(k)
                for j, r in enumerate([k % n] if single else range(n)):
                    table = seated(entries, r)
                    labels = seated(public, r)
                    context.deal = k
                    context.game += 1
                    context.chips = lambda r=r: seated(totals, r)  # type: ignore[misc]
                    dealer = int(deals.dealers[k])
                    for i, remote in remotes:
                        remote.send(protocol.deal_start(match, k, r, (i + r) % n, dealer, labels))
                    rows = await play_game(env, table, deals, k, labels, f"deal {k}, rotation {r}", recorder, pacer)
                    outcomes[k, j] = rows
                    rotations[k, j] = r
                    saved = recorder.history(labels)
                    for i, chips in enumerate(by_entry(rows[:, CHIPS], r)):
                        totals[i] += int(chips)
                    if on_game is not None:  # stored before the bots hear of it: what they were told is kept
                        await on_game(k, r, rows, saved)
                    record = saved["deals"][0]
                    for i, remote in remotes:
                        remote.send(protocol.deal_end(match, k, r, (i + r) % n, record))
                played = k + 1
        except FencedError:
            log.warning("match %s stopped: this server was judged gone by another server of its database", match)
        par_pots = None
        if par_task is not None:
            dealt.put_nowait(None)
            if session:
                par_rows, par_pots = await par_task
            else:
                await par_task
            par_task = None
        registry.check_forfeits(list(slots.values()))
        counts = [e.slot.counts.to_dict() if isinstance(e, RemoteSeat) and e.slot.counts else None for e in entries]
        status = "finished" if played == spec.deals or (session and played and not stopped) else "aborted"
        results = (
            results_of(
                spec.seats,
                outcomes[:played],
                rotations[:played],
                counts,
                par_rows[:played] if par_agent else None,
                pot_changes(pots[:played]) if session else None,
                None if par_pots is None else pot_changes(par_pots[:played]),
            )
            if played
            else []
        )
        report = MatchReport(
            match,
            status,
            n,
            played,
            spec.seed,
            spec.clock,
            results,
            spec.grace,
            spec.fallback,
            spec.format,
            par_agent,
            spec.secret,
            int(pots[played - 1]) if session and played else None,
        )
        summary = [
            {
                "seat": public_label(r.label),
                "chips": r.side.chips,
                "advantage": r.advantage,
                "par_advantage": r.par_advantage,
                "counts": r.counts,
            }
            for r in report.results
        ]
        end = protocol.match_end(match, status, summary, spec.secret, spec.seed if spec.secret else None)
        for _, remote in remotes:
            remote.send(end)
        return report
    finally:
        if par_task is not None:
            par_task.cancel()
        close_seats(entries)
        registry.release(list(slots.values()))
