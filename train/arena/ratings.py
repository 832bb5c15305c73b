"""The arena's ratings, a pure function of the stored games: ``rate(matches, baselines, fields, sizes)``.

Two ratings, both rebuilt from the database by ``bourre arena rerate`` to the same numbers (``docs/arena.md``, "The
ladder"):

**The ladder rating** is ``bourre ladder``'s (``train.eval.ladder``): the mean over the *cells* (a reference field
``F`` at a table size ``N``) of the bot's replacement advantage, with the ladder's conservative 95% interval
(``LadderCard.rating_ci95``). A cell's games are the bot's *reference matches*: a bot alone among ``N - 1`` copies
of ``F`` (seats ``bot:NAME, F, ..., F`` in any order); a deal counts once its games (one in the single format, one
per rotation in the rotations format of earlier versions, ``train.arena.match``) and its *all-field table* (``F``
in every seat on the same deal, the match's par game, ``train.arena.records.baselines``) are stored. Per deal the
replacement advantage is the bot's chips minus the all-field table's chips in the seats the bot held, divided by the
number of its games: seat by seat, the bot against the field's agent in the same seat on the same cards, as
``train.eval.duplicate`` defines it. A cell pools the deals of all its matches (the deal the unit of its
t-interval). The rating is over the configured cells the bot has played; ``complete`` says whether that is every
one of them.

**OpenSkill** (Plackett-Luce, default parameters, as ``train.eval.tournament``): every match, whoever asked for
it, deal by deal in the order the matches were created (then by id). The participants of a deal are the distinct
entries of the match, a bot or a built-in agent with all its copies (their chips pooled), each a team of one, ranked
by chips per seat over the deal's games (equal chips share a rank). A deal counts once all its games are stored.
Matches still running, and refused ones, count in neither rating.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from train.eval.duplicate import CHIPS
from train.eval.ladder import Cell, LadderCard
from train.eval.statistics import t_interval

__all__ = ["BaselineKey", "BotStanding", "CellResult", "ReferenceStanding", "Standings", "StoredMatch", "rate"]

Interval = tuple[float, float] | None
BaselineKey = tuple[str, int, int, int]
"""An all-field table: (field spec, players, seed, deal)."""


@dataclasses.dataclass(frozen=True)
class StoredMatch:
    """A match as stored: its complete deals' outcomes ``(deals, games, seat, 6)``, game ``j`` of a deal played
    in rotation ``rotations[k, j]`` (entry ``i`` in seat ``(i + r) % N``: every rotation of the deal in the
    rotations format, rotation ``deal % N`` alone in the single one, ``train.arena.match``), and each entry's counts
    from its report (``None``: a built-in agent, or no report)."""

    id: str
    created: float
    status: str
    seats: tuple[str, ...]
    seed: int
    deals: tuple[int, ...]  # the deal numbers of the complete deals, in order
    outcomes: np.ndarray
    counts: tuple[dict[str, int] | None, ...]
    rotations: np.ndarray | None = None  # (deals, games); None: every rotation in order (the rotations format)

    def seats_of(self, entry: int) -> np.ndarray:
        """``(deals, games)``: the seat ``entry`` held in each game."""
        rotations = self.rotations
        if rotations is None:
            rotations = np.broadcast_to(np.arange(self.outcomes.shape[1]), self.outcomes.shape[:2])
        return (entry + rotations) % self.players

    @property
    def players(self) -> int:
        return len(self.seats)

    def field(self) -> tuple[int, str] | None:
        """(the bot's entry, the field) when this is a reference match: one bot among copies of one agent."""
        bots = [i for i, s in enumerate(self.seats) if s.startswith("bot:")]
        others = {s for s in self.seats if not s.startswith("bot:")}
        if len(bots) == 1 and len(others) == 1 and self.players >= 2:
            return bots[0], next(iter(others))
        return None


@dataclasses.dataclass(frozen=True)
class CellResult:
    field: str
    players: int
    matches: int
    deals: int
    advantage: float
    advantage_ci95: Interval
    replacement_advantage: float
    replacement_advantage_ci95: Interval


@dataclasses.dataclass(frozen=True)
class BotStanding:
    rank: int
    name: str
    rating: float | None  # the ladder rating over the cells played; None before any
    rating_ci95: Interval
    complete: bool  # every configured cell played
    cells_played: int
    cells_total: int
    mu: float
    sigma: float
    ordinal: float
    matches: int
    reference_matches: int
    deals: int
    decisions: int
    timeouts: int
    fallbacks: int
    disconnects: int
    cells: list[CellResult]


@dataclasses.dataclass(frozen=True)
class ReferenceStanding:
    spec: str
    mu: float
    sigma: float
    ordinal: float
    deals: int


@dataclasses.dataclass(frozen=True)
class Standings:
    """Every bot ranked: first those with every cell played, by ladder rating; then those with some, by their
    rating so far; then by OpenSkill's ordinal (``mu - 3 sigma``); then by name."""

    fields: list[str]
    players: list[int]
    matches: int
    bots: list[BotStanding]
    references: list[ReferenceStanding]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def bot(self, name: str) -> BotStanding | None:
        return next((b for b in self.bots if b.name == name), None)


@dataclasses.dataclass
class _Tally:
    matches: int = 0
    reference: int = 0
    deals: int = 0
    decisions: int = 0
    timeouts: int = 0
    fallbacks: int = 0
    disconnects: int = 0


def _entry_chips(match: StoredMatch) -> np.ndarray:
    """``(deals, entries)``: each entry's chips summed over the deal's games."""
    chips = match.outcomes[..., CHIPS]  # (deals, games, seat)
    deals, games = np.ogrid[: chips.shape[0], : chips.shape[1]]
    return np.stack([chips[deals, games, match.seats_of(i)].sum(axis=1) for i in range(match.players)], axis=1)


def _cells(
    matches: Sequence[StoredMatch], baselines: Mapping[BaselineKey, np.ndarray]
) -> dict[tuple[str, str, int], tuple[int, list[float], list[float]]]:
    """Per (bot, field, players): matches, and per counted deal the table and replacement advantages."""
    found: dict[tuple[str, str, int], tuple[int, list[float], list[float]]] = {}
    for match in matches:
        reference = match.field()
        if reference is None or not len(match.deals):
            continue
        entry, field = reference
        n = match.players
        games = match.outcomes.shape[1]
        own = _entry_chips(match)  # (deals, entries)
        table = own.sum(axis=1)
        seats = match.seats_of(entry)  # (deals, games)
        count, advantages, replacements = found.get((match.seats[entry][4:], field, n), (0, [], []))
        used = False
        for row, k in enumerate(match.deals):
            par = baselines.get((field, n, match.seed, k))
            if par is None:
                continue
            mine = int(own[row, entry])
            # integer numerators over one division, as train.eval.duplicate computes them; the all-field table's
            # chips in the seats the bot held (all of them, in the rotations format)
            advantages.append(((n - 1) * mine - (int(table[row]) - mine)) / (games * (n - 1)))
            replacements.append((mine - int(par[seats[row], CHIPS].sum())) / games)
            used = True
        found[(match.seats[entry][4:], field, n)] = (count + int(used), advantages, replacements)
    return found


def _openskill(matches: Sequence[StoredMatch]) -> tuple[dict[str, Any], dict[str, int], Any]:
    """Every participant's OpenSkill rating (keyed by seat label), its deals counted, and the rating of a
    participant without any deal."""
    from openskill.models import PlackettLuce  # the eval extra's; local: only the ratings need it

    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    deals: dict[str, int] = {}
    for match in matches:
        if not len(match.deals):
            continue
        labels = sorted(set(match.seats))
        copies = [match.seats.count(label) for label in labels]
        own = _entry_chips(match)
        for row in range(len(match.deals)):
            # chips per seat of each participant over the deal's rotations (copies pooled): the same denominator
            # n * copies for every seat it held, compared as fractions by cross-multiplying integers
            totals = [sum(int(own[row, i]) for i, s in enumerate(match.seats) if s == label) for label in labels]
            ranks = [
                1.0 + sum(totals[b] * copies[a] > totals[a] * copies[b] for b in range(len(labels)))
                for a in range(len(labels))
            ]
            teams = [[ratings.get(label) or model.rating(name=label)] for label in labels]
            for label, (new,) in zip(labels, model.rate(teams, ranks=ranks), strict=True):
                ratings[label] = new
                deals[label] = deals.get(label, 0) + 1
    return ratings, deals, model.rating()


def rate(
    matches: Sequence[StoredMatch],
    baselines: Mapping[BaselineKey, np.ndarray],
    fields: Sequence[str],
    sizes: Sequence[int],
) -> Standings:
    """The standings from the stored matches (any order: they are sorted by creation, then id) and the all-field
    tables; ``fields`` and ``sizes`` are the ladder's cells (the server's ``--ladder-fields`` and
    ``--ladder-players``)."""
    matches = sorted((m for m in matches if m.status not in ("running", "refused")), key=lambda m: (m.created, m.id))
    skills, skill_deals, unrated = _openskill(matches)
    cells = _cells(matches, baselines)
    tallies: dict[str, _Tally] = {}
    for match in matches:
        reference = match.field()
        for i, seat in enumerate(match.seats):
            if not seat.startswith("bot:"):
                continue
            tally = tallies.setdefault(seat[4:], _Tally())
            tally.matches += 1
            tally.reference += int(reference is not None)
            tally.deals += len(match.deals)
            counts = match.counts[i] or {}
            tally.decisions += int(counts.get("decisions", 0))
            tally.timeouts += int(counts.get("timeouts", 0))
            tally.fallbacks += int(counts.get("fallbacks", 0))
            tally.disconnects += int(counts.get("disconnects", 0))
    configured = [(f, n) for f in fields for n in sizes]
    standings = []
    for name, tally in tallies.items():
        results = []
        for field, n in configured:
            count, advantages, replacements = cells.get((name, field, n), (0, [], []))
            if replacements:
                a, rep = np.array(advantages), np.array(replacements)
                results.append(CellResult(field, n, count, len(rep), float(a.mean()), t_interval(a),
                                          float(rep.mean()), t_interval(rep)))  # fmt: skip
        rating: float | None = None
        interval: Interval = None
        if results:
            card = LadderCard(
                candidate=name,
                version=0,
                fields=list(fields),
                players=sorted({c.players for c in results}),
                deals=min(c.deals for c in results),
                seed=0,
                cells=[
                    Cell(
                        c.field,
                        c.players,
                        c.advantage,
                        c.advantage_ci95,
                        c.replacement_advantage,
                        c.replacement_advantage_ci95,
                        played=True,
                    )
                    for c in results
                ],  # fmt: skip
            )
            rating, interval = card.rating, card.rating_ci95
        skill = skills.get(f"bot:{name}", unrated)
        standings.append(
            BotStanding(
                0,
                name,
                rating,
                interval,
                len(results) == len(configured),
                len(results),
                len(configured),
                float(skill.mu),
                float(skill.sigma),
                float(skill.ordinal()),
                tally.matches,
                tally.reference,
                tally.deals,
                tally.decisions,
                tally.timeouts,
                tally.fallbacks,
                tally.disconnects,
                results,
            )  # fmt: skip
        )
    standings.sort(key=lambda b: (not b.complete, b.rating is None, -(b.rating or 0.0), -b.ordinal, b.name))
    ranked = [dataclasses.replace(b, rank=i) for i, b in enumerate(standings, 1)]
    references = sorted(
        (
            ReferenceStanding(label, float(r.mu), float(r.sigma), float(r.ordinal()), skill_deals[label])
            for label, r in skills.items()
            if not label.startswith("bot:")
        ),
        key=lambda r: (-r.ordinal, r.spec),
    )
    return Standings(list(fields), list(sizes), len(matches), ranked, references)
