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

Bots are ranked on the low end of that interval (those that played every cell first).

**OpenSkill** (Plackett-Luce, ``train.eval.tournament``'s, without its dynamics: ``SKILL_TAU``): every match,
whoever asked for it, deal by deal in the order the matches were created (then by id). The participants of a deal
are the distinct entries of the match, a bot or a built-in agent with all its copies (their chips pooled), each a
team of one, ranked by chips per seat over the deal's games (equal chips share a rank). A deal counts once all its
games are stored; a match with one participant in every seat (copies of one agent) rates no one. A session (the
session format: the deals one game, the pot carried) is rated once, by the chips of all its deals, when it is
finished; it is no reference match, since the ladder's cells are single deals.
Matches still running, and refused ones, count in neither rating; nor does a match with a bot played with another
fallback than ``RATED_FALLBACK`` (an operator's, ``bourre arena match --fallback``): no bot is rated as better than
it played; nor a match in which a bot's every move was the fallback's (its seat was never live: a dead connection,
seated before its socket was known closed). Such a match is tallied (matches, deals, timeouts) all the same.

``rate()`` is the definition (``bourre arena rerate``); ``Rater`` is the same function kept up to date as matches
settle (``records.Book``, after every match of the ladder), every float equal, at the cost of what changed.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left, insort
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from train.eval.duplicate import CHIPS
from train.eval.ladder import Cell, LadderCard
from train.eval.statistics import t_interval

__all__ = [
    "CHECKPOINT_SPACING",
    "RATED_FALLBACK",
    "SKILL_TAU",
    "BaselineKey",
    "BotStanding",
    "CellResult",
    "Rater",
    "ReferenceStanding",
    "Standings",
    "StoredMatch",
    "rate",
]

Interval = tuple[float, float] | None
BaselineKey = tuple[str, int, int, int]
"""An all-field table: (field spec, players, seed, deal)."""
RATED_FALLBACK = "random"
"""The one fallback under which a match's deals are rated: a bot's missing moves played at random, never better."""
SKILL_TAU = 0.0
"""OpenSkill's dynamics: none. A bot's code is taken to stay what it is under its name (a new version, a new name),
so every deal it played counts alike; OpenSkill's default (25/300 of uncertainty added before every deal) keeps
sigma from falling below about 1.5, and the mu of two copies of one agent walked 2.2 apart over 700 deals."""


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
    fallback: str = RATED_FALLBACK  # the agent that played a seat's moves its bot did not make
    session: bool = False  # the session format: the deals are one session, the pot carried (rotation 0 throughout)

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
        """(the bot's entry, the field) when this is a reference match: one bot among copies of one agent. A session
        is none: the ladder's cells are single deals, each against its all-field table."""
        if self.session:
            return None
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
    last_match: float = 0.0  # when its latest match was created (seconds since the epoch): a rating may be old


@dataclasses.dataclass(frozen=True)
class ReferenceStanding:
    spec: str
    mu: float
    sigma: float
    ordinal: float
    deals: int


@dataclasses.dataclass(frozen=True)
class Standings:
    """Every bot ranked: first those with every cell played, by the low end of the ladder rating's interval; then
    those with some, by that of their rating so far; then by OpenSkill's ordinal (``mu - 3 sigma``); then by name."""

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
    last_match: float = 0.0


def _entry_chips(match: StoredMatch) -> np.ndarray:
    """``(deals, entries)``: each entry's chips summed over the deal's games."""
    chips = match.outcomes[..., CHIPS]  # (deals, games, seat)
    deals, games = np.ogrid[: chips.shape[0], : chips.shape[1]]
    return np.stack([chips[deals, games, match.seats_of(i)].sum(axis=1) for i in range(match.players)], axis=1)


def _reference_deals(
    match: StoredMatch, baselines: Mapping[BaselineKey, np.ndarray]
) -> tuple[tuple[str, str, int], bool, list[float], list[float], bool] | None:
    """A reference match's part of its cell: (bot, field, players), whether a deal of it counts, the table and
    replacement advantage of each deal that counts (those whose all-field table is in ``baselines``), and whether
    a deal of it still waits for its all-field table; None for any other match."""
    reference = match.field()
    if reference is None or not len(match.deals) or not _moves_rated(match):
        return None
    entry, field = reference
    n = match.players
    games = match.outcomes.shape[1]
    own = _entry_chips(match)  # (deals, entries)
    table = own.sum(axis=1)
    seats = match.seats_of(entry)  # (deals, games)
    advantages: list[float] = []
    replacements: list[float] = []
    waiting = False
    for row, k in enumerate(match.deals):
        par = baselines.get((field, n, match.seed, k))
        if par is None:
            waiting = True
            continue
        mine = int(own[row, entry])
        # integer numerators over one division, as train.eval.duplicate computes them; the all-field table's
        # chips in the seats the bot held (all of them, in the rotations format)
        advantages.append(((n - 1) * mine - (int(table[row]) - mine)) / (games * (n - 1)))
        replacements.append((mine - int(par[seats[row], CHIPS].sum())) / games)
    return (match.seats[entry][4:], field, n), bool(replacements), advantages, replacements, waiting


def _cells(
    matches: Sequence[StoredMatch], baselines: Mapping[BaselineKey, np.ndarray]
) -> dict[tuple[str, str, int], tuple[int, list[float], list[float]]]:
    """Per (bot, field, players): matches, and per counted deal the table and replacement advantages."""
    found: dict[tuple[str, str, int], tuple[int, list[float], list[float]]] = {}
    for match in matches:
        part = _reference_deals(match, baselines)
        if part is None:
            continue
        key, used, advantages, replacements, _ = part
        count, all_advantages, all_replacements = found.get(key, (0, [], []))
        all_advantages.extend(advantages)
        all_replacements.extend(replacements)
        found[key] = (count + int(used), all_advantages, all_replacements)
    return found


def _cell_result(
    field: str, players: int, count: int, advantages: np.ndarray, replacements: np.ndarray
) -> CellResult | None:
    """A cell's result from its matches counted and its deals' advantages in the order of the matches; None
    before any deal counts."""
    if not len(replacements):
        return None
    return CellResult(
        field,
        players,
        count,
        len(replacements),
        float(advantages.mean()),
        t_interval(advantages),
        float(replacements.mean()),
        t_interval(replacements),
    )


def _skill_model() -> Any:
    from openskill.models import PlackettLuce  # the eval extra's; local: only the ratings need it

    return PlackettLuce(tau=SKILL_TAU)


def _rate_deals(model: Any, ratings: dict[str, Any], deals: dict[str, int], match: StoredMatch) -> None:
    """OpenSkill after one more match: its deals rated in order, ``ratings`` and ``deals`` (keyed by seat label)
    updated in place. ``model.rate`` returns new rating objects and leaves those it was given as they were, so a
    shallow copy of ``ratings`` keeps a state apart from what is rated after."""
    labels = sorted(set(match.seats))
    # one participant in every seat (an operator's test match): no one to be ranked against, so no rating moves
    # (OpenSkill refuses a game of one team)
    if not _moves_rated(match) or not len(match.deals) or len(labels) < 2:
        return
    copies = [match.seats.count(label) for label in labels]
    own = _entry_chips(match)
    if match.session:
        # one game: ranked once by the chips of the whole session (each seat's share of the pot left is the same,
        # so it changes no rank), and only once it is finished: a session cut short is not the game
        if match.status != "finished":
            return
        own = own.sum(axis=0, keepdims=True)
    for row in range(len(own)):
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
            deals[label] = deals.get(label, 0) + (len(match.deals) if match.session else 1)


def _openskill(matches: Sequence[StoredMatch]) -> tuple[dict[str, Any], dict[str, int], Any]:
    """Every participant's OpenSkill rating (keyed by seat label), its deals counted, and the rating of a
    participant without any deal."""
    model = _skill_model()
    ratings: dict[str, Any] = {}
    deals: dict[str, int] = {}
    for match in matches:
        _rate_deals(model, ratings, deals, match)
    return ratings, deals, model.rating()


def _tally(tallies: dict[str, _Tally], match: StoredMatch) -> None:
    """Count one more match in its bots' tallies."""
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
        tally.last_match = max(tally.last_match, match.created)


def _rated(match: StoredMatch) -> bool:
    return match.status not in ("running", "refused")


def _moves_rated(match: StoredMatch) -> bool:
    """Whether the ratings count the match's deals: where a bot sits, only if its missing moves were played at
    random (the ladder's own matches), so that no bot is rated as better than it plays. An operator's match with a
    bot and another fallback (``bourre arena match`` takes the heuristic by default) is tallied, never rated; so is a
    match where a bot made no move of its own (``_was_live``)."""
    if not any(seat.startswith("bot:") for seat in match.seats):
        return True
    return match.fallback == RATED_FALLBACK and all(_was_live(c) for c in match.counts)


def _was_live(counts: Mapping[str, int] | None) -> bool:
    """Whether a seat's bot made a move of its own in the match (a built-in seat, or a match without a report, has no
    counts: nothing says otherwise). A seat whose every move the fallback played was never live: a connection that
    died unseen (its socket not yet known closed) would otherwise be seated and rated on the fallback's moves."""
    if counts is None:
        return True
    decisions = int(counts.get("decisions", 0))
    return decisions == 0 or int(counts.get("fallbacks", 0)) < decisions


def _order(match: StoredMatch) -> tuple[float, str]:
    return match.created, match.id


def rate(
    matches: Sequence[StoredMatch],
    baselines: Mapping[BaselineKey, np.ndarray],
    fields: Sequence[str],
    sizes: Sequence[int],
) -> Standings:
    """The standings from the stored matches (any order: they are sorted by creation, then id) and the all-field
    tables; ``fields`` and ``sizes`` are the ladder's cells (the server's ``--ladder-fields`` and
    ``--ladder-players``)."""
    matches = sorted((m for m in matches if _rated(m)), key=_order)
    skills, skill_deals, unrated = _openskill(matches)
    cells = _cells(matches, baselines)
    tallies: dict[str, _Tally] = {}
    for match in matches:
        _tally(tallies, match)

    def cell(name: str, field: str, n: int) -> CellResult | None:
        count, advantages, replacements = cells.get((name, field, n), (0, [], []))
        return _cell_result(field, n, count, np.array(advantages), np.array(replacements))

    return _standings(fields, sizes, len(matches), tallies, cell, skills, skill_deals, unrated)


def _standings(
    fields: Sequence[str],
    sizes: Sequence[int],
    rated: int,
    tallies: Mapping[str, _Tally],
    cell: Callable[[str, str, int], CellResult | None],
    skills: Mapping[str, Any],
    skill_deals: Mapping[str, int],
    unrated: Any,
) -> Standings:
    """The standings from the tallies, each bot's cells (``cell(bot, field, players)``) and OpenSkill's state."""
    configured = [(f, n) for f in fields for n in sizes]
    standings = []
    for name, tally in tallies.items():
        results = [c for c in (cell(name, field, n) for field, n in configured) if c is not None]
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
                ],
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
                tally.last_match,
            )
        )
    # ranked on the low end of the interval, as OpenSkill's ordinal is mu - 3 sigma: a bot ranks high when its deals
    # show it is good, not when it stopped playing after a lucky run (no interval yet: below those with one)
    standings.sort(
        key=lambda b: (
            not b.complete,
            b.rating is None,
            b.rating_ci95 is None,
            -(b.rating_ci95[0] if b.rating_ci95 else 0.0),
            -(b.rating or 0.0),
            -b.ordinal,
            b.name,
        )
    )
    ranked = [dataclasses.replace(b, rank=i) for i, b in enumerate(standings, 1)]
    references = sorted(
        (
            ReferenceStanding(label, float(r.mu), float(r.sigma), float(r.ordinal()), skill_deals[label])
            for label, r in skills.items()
            if not label.startswith("bot:")
        ),
        key=lambda r: (-r.ordinal, r.spec),
    )
    return Standings(list(fields), list(sizes), rated, ranked, references)


CHECKPOINT_SPACING = 256
"""``Rater`` keeps OpenSkill's state after every this many matches (and where a match is running): a match that
settles far back in the order (created before others that settled already) costs at most this many more matches
rated again, besides those after it."""


@dataclasses.dataclass(frozen=True)
class _Checkpoint:
    """OpenSkill's state after the first ``index`` rated matches in order, the last of them ``last``."""

    index: int
    last: tuple[float, str] | None
    ratings: dict[str, Any]  # never changed once kept: a replay starts from copies
    deals: dict[str, int]


@dataclasses.dataclass
class _Cell:
    """A configured cell's reference matches (bot, field, players): each one's part, and the result of them all."""

    order: list[tuple[float, str]] = dataclasses.field(default_factory=list)  # its matches, in the rating's order
    parts: dict[str, tuple[bool, np.ndarray, np.ndarray]] = dataclasses.field(default_factory=dict)
    result: CellResult | None = None
    changed: bool = True


class Rater:
    """``rate()`` kept up to date as matches and all-field tables are added, at the cost of what changed: equal to
    ``rate(every match added, every baseline added, fields, sizes)``, every float the same (``tests/
    test_arena_ratings.py`` holds it).

    - OpenSkill is sequential over the matches in order (created, id), and matches settle out of that order. The
      state after a prefix of the order is kept (a *checkpoint*): at the end, just before each running match (where
      it will land when it settles), and every ``CHECKPOINT_SPACING`` matches. A match added after a checkpoint's
      last match leaves it exact; one added before drops it. ``standings()`` rates, on copies, only the matches after
      the last checkpoint left: those settled after the first running one, and any added since. One added behind
      every checkpoint but the first (the empty state) is the full computation again, exact as ever.
    - A reference match's part of its cell (``_reference_deals``) is kept per match; a cell's result is computed
      again (numpy, over its deals) only when one of its matches is added or a deal of one gets its all-field table.
    - The tallies are sums, added to.

    Only the configured cells' matches are kept (no other cell is shown). Not thread-safe: ``records.Book`` locks."""

    def __init__(self, fields: Sequence[str], sizes: Sequence[int]) -> None:
        self.fields = list(fields)
        self.sizes = list(sizes)
        self._configured = {(f, n) for f in self.fields for n in self.sizes}
        self.baselines: dict[BaselineKey, np.ndarray] = {}
        self._model = _skill_model()
        self._matches: dict[str, StoredMatch] = {}
        self._order: list[tuple[float, str]] = []
        self._tallies: dict[str, _Tally] = {}
        self._cells: dict[tuple[str, str, int], _Cell] = {}
        self._waiting: dict[tuple[str, int, int], set[str]] = {}  # (field, players, seed): matches with a deal unpaired
        self._checkpoints = [_Checkpoint(0, None, {}, {})]
        self._standings: Standings | None = None

    def __contains__(self, match: str) -> bool:
        return match in self._matches

    def __len__(self) -> int:
        return len(self._matches)

    def latest(self) -> float | None:
        """The creation time of the last match in order, None before any."""
        return self._order[-1][0] if self._order else None

    def needs(self, match: StoredMatch) -> tuple[str, int, int] | None:
        """The (field, players, seed) of the all-field tables a match's cell pairs its deals with, if it is a
        reference match of a configured cell."""
        reference = match.field()
        if reference is None or (reference[1], match.players) not in self._configured:
            return None
        return reference[1], match.players, match.seed

    def waiting(self) -> list[tuple[str, int, int]]:
        """The (field, players, seed) of the matches added with a deal whose all-field table is not added yet."""
        return list(self._waiting)

    def add_matches(self, matches: Iterable[StoredMatch]) -> None:
        """Add stored matches (running and refused ones are not rated; one added already is left as it was)."""
        for match in matches:
            if not _rated(match) or match.id in self._matches:
                continue
            key = _order(match)
            self._matches[match.id] = match
            insort(self._order, key)
            _tally(self._tallies, match)
            self._add_part(match)
            while (last := self._checkpoints[-1].last) is not None and last > key:
                self._checkpoints.pop()  # that prefix of the order now holds this match too
            self._standings = None

    def add_baselines(self, baselines: Mapping[BaselineKey, np.ndarray]) -> None:
        """Add all-field tables (one added already is left as it was)."""
        paired: set[str] = set()
        for key, outcomes in baselines.items():
            if key in self.baselines:
                continue
            self.baselines[key] = outcomes
            field, players, seed, deal = key
            paired.update(m for m in self._waiting.get((field, players, seed), ()) if deal in self._matches[m].deals)
        for match in paired:
            self._add_part(self._matches[match])

    def _add_part(self, match: StoredMatch) -> None:
        group = self.needs(match)
        part = None if group is None else _reference_deals(match, self.baselines)
        if group is None or part is None:
            return
        key, used, advantages, replacements, waiting = part
        cell = self._cells.setdefault(key, _Cell())
        if match.id not in cell.parts:
            insort(cell.order, _order(match))
        cell.parts[match.id] = (used, np.array(advantages), np.array(replacements))
        cell.changed = True
        self._standings = None
        if waiting:
            self._waiting.setdefault(group, set()).add(match.id)
        elif match.id in self._waiting.get(group, ()):
            self._waiting[group].discard(match.id)
            if not self._waiting[group]:
                del self._waiting[group]

    def standings(self, running: Iterable[tuple[float, str]] = ()) -> Standings:
        """``rate()`` of everything added. ``running``: the (created, id) of matches not settled yet, where
        OpenSkill's state is kept for when they settle (only what it costs depends on it)."""
        if self._standings is not None:
            return self._standings
        order = self._order
        before_running = {bisect_left(order, key) for key in running}
        start = self._checkpoints[-1]
        if start.index < len(order):
            ratings, deals = dict(start.ratings), dict(start.deals)
            for index in range(start.index, len(order)):
                _rate_deals(self._model, ratings, deals, self._matches[order[index][1]])
                done = index + 1
                if done == len(order):
                    self._checkpoints.append(_Checkpoint(done, order[index], ratings, deals))
                elif done in before_running or done % CHECKPOINT_SPACING == 0:
                    self._checkpoints.append(_Checkpoint(done, order[index], ratings, deals))
                    ratings, deals = dict(ratings), dict(deals)
            self._prune(before_running)
        for (_, field, n), cell in self._cells.items():
            if cell.changed:
                parts = [cell.parts[m] for _, m in cell.order]
                count = sum(used for used, _, _ in parts)
                advantages = np.concatenate([a for _, a, _ in parts])
                replacements = np.concatenate([r for _, _, r in parts])
                cell.result = _cell_result(field, n, count, advantages, replacements)
                cell.changed = False

        def cell_result(name: str, field: str, n: int) -> CellResult | None:
            cell = self._cells.get((name, field, n))
            return None if cell is None else cell.result

        end = self._checkpoints[-1]
        self._standings = _standings(
            self.fields,
            self.sizes,
            len(order),
            self._tallies,
            cell_result,
            end.ratings,
            end.deals,
            self._model.rating(),
        )
        return self._standings

    def _prune(self, before_running: set[int]) -> None:
        """Keep the empty state, the end, the states before running matches, and the first of each spacing."""
        kept: list[_Checkpoint] = []
        for checkpoint in self._checkpoints[:-1]:
            if (
                checkpoint.index in before_running
                or not kept
                or checkpoint.index // CHECKPOINT_SPACING != kept[-1].index // CHECKPOINT_SPACING
            ):
                kept.append(checkpoint)
        self._checkpoints = [*kept, self._checkpoints[-1]]
