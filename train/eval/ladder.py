"""The ladder: a candidate against fixed reference fields, one card and one rating.

=================== ========================================================================
Import              ``from train.eval.ladder import ladder``
Call                ``ladder("mybot.py:Bot", deals=40, seed=0, workers=2)`` (``session=20``: sessions of 20 deals)
Command line        ``bourre ladder mybot.py:Bot`` (``bourre ladder --write-leaderboard``: every reference agent)
Result              ``LadderCard`` (``to_dict()`` is JSON-serialisable); ``Leaderboard`` for every reference agent
=================== ========================================================================

Method
------
The ladder of version ``v`` is a fixed list of reference agents, ``LADDERS[v]``, and fixed table sizes
(``PLAYERS``: 3, 5 and 7). The candidate is evaluated against each reference agent as the field, at each table
size, by duplicate evaluation (``train.eval.duplicate.evaluate``: every deal played once with the candidate in
each seat, once at the all-field table) on the deals of ``seed``, ``deals`` per table size. Each of these
``fields x sizes`` *cells* gives a table advantage and a replacement advantage, each with its 95% t-interval.

With ``session=K`` (``bourre ladder --session K``) each of the ``deals`` games of a cell is a session of ``K``
deals at one table with the pot carried (Sessions in ``train.eval.duplicate``): the cells, the rating and its
interval stay in chips per deal, the intervals taking the session as the unit. ``K = 1``, the default, is single
deals, the ladder of ``docs/leaderboard.md``.

Against its own agent (the candidate's spec equal to the field's) a cell is not played: duplicate evaluation
gives exactly 0 on both measures there, to the bit (``train.eval.duplicate``), so the card shows
``+0.000 [+0.000, +0.000]``.

Rating
------
The candidate's *rating* is the mean of its replacement advantages over every cell: how many more chips per deal
a seat makes with the candidate in it than with the reference agent in it, averaged over the reference fields
and the table sizes, all weighted alike. The scale is anchored on the reference agents: each field's own agent
scores exactly 0 in its cell, so the rating is measured against what the reference agents do in their own seats,
in antes per deal. The replacement advantage (not the table advantage) is used because it counts only what the
candidate's own play earns, not what its tablemates lose to the pot.

Its 95% interval is conservative. The fields of one table size share the deals, so their cells are correlated
in an unknown way; the standard error of a mean is at most the mean of the standard errors (whatever the
correlation), so at each size the half-width is the mean of the cells' half-widths. The sizes have independent
deals, so their half-widths combine in quadrature: ``half = sqrt(sum over N of h_N ** 2) / sizes``. The same
form gives a rating per table size (``h_N`` alone).

Why it is stable
----------------
A rating depends only on the candidate's own games against the fixed fields on the fixed deals: rating a new
agent plays no game of another agent, so it never moves another's rating, and an agent rated twice at the same
budget and seed gets the same rating to the bit (the evaluation depends neither on the workers nor on the
backend). Adding a stronger reference agent changes the set of cells, so it makes a new ladder version
(``LADDERS``, ``VERSION``): ratings are compared within one version only, and ``bourre ladder
--write-leaderboard`` rates every reference agent of the new version again.

Rank
----
The card places the candidate among the reference agents by rating, from ``REFERENCE_FILE`` (the JSON beside
this module, which ``bourre ladder --write-leaderboard`` writes with ``docs/leaderboard.md``). A rank needs the
same version, table sizes and session length (a session carries the pot, so its chips per deal are not those
of single deals); a different deal budget or seed rates on other deals of the same kind, so the
rank is given with the reference's budget beside it. A reference agent's own card is left out of the others
when it is the candidate.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from train.eval.jobs import usable_cpus
from train.eval.report import TextTable, markdown_table, with_ci
from train.eval.time_left import Part, TimeLeftBar, duplicate_work

if TYPE_CHECKING:  # the evaluation is imported when it runs: the command line reads the constants at start-up
    from train.eval.duplicate import AgentSource

__all__ = [
    "DEALS",
    "LADDERS",
    "PLAYERS",
    "REFERENCE_FILE",
    "SEED",
    "VERSION",
    "Cell",
    "LadderCard",
    "Leaderboard",
    "Rank",
    "budget",
    "card_table",
    "ladder",
    "leaderboard",
    "leaderboard_markdown",
    "rank_of",
    "rating_table",
]

LADDERS: dict[int, tuple[str, ...]] = {
    # pimc:16 rather than the 64 worlds of ``pimc``: as a field it fills every seat but one, and at 64 worlds it
    # costs four times as much, past the leaderboard's budget: evaluate("heuristic", "pimc", players=(3, 5, 7),
    # deals=4, seed=0) took 6.9 s of CPU per deal, with "pimc:16" 1.75 s (2026-11-25, 2 cores, load average 7).
    1: ("random", "heuristic:loose", "heuristic", "heuristic:tight", "pimc:16", "ppo"),
}
"""The reference agents of each ladder version. A new reference agent makes a new version; never edit one."""

VERSION = 1
"""The ladder version that ``bourre ladder`` plays."""

PLAYERS = (3, 5, 7)
"""The table sizes of the ladder."""

DEALS = 40
"""Deals per field and table size of ``docs/leaderboard.md`` and the default of ``bourre ladder``."""

SEED = 0
"""The seed of ``docs/leaderboard.md`` and the default of ``bourre ladder``."""

REFERENCE_FILE = Path(__file__).with_name("ladder_reference.json")
"""The reference agents' cards, written by ``bourre ladder --write-leaderboard``."""

Interval = tuple[float, float] | None


@dataclasses.dataclass(frozen=True)
class Cell:
    """The candidate against one field at one table size, chips per deal."""

    field: str
    players: int
    advantage: float
    advantage_ci95: Interval
    replacement_advantage: float
    replacement_advantage_ci95: Interval
    played: bool  # False: the field's agent is the candidate, 0 by construction


def _half(ci: Interval) -> float:
    return 0.0 if ci is None else (ci[1] - ci[0]) / 2


def _mean_rating(cells: Sequence[Cell], sizes: Sequence[int]) -> tuple[float, Interval]:
    """Mean replacement advantage of ``cells`` and its conservative interval (module docstring)."""
    mean = sum(c.replacement_advantage for c in cells) / len(cells)
    halves = []
    for n in sizes:
        at_n = [c for c in cells if c.players == n]
        if any(c.played and c.replacement_advantage_ci95 is None for c in at_n):
            return mean, None  # a single deal: no interval anywhere
        halves.append(sum(_half(c.replacement_advantage_ci95) for c in at_n) / len(at_n))
    half = math.sqrt(sum(h * h for h in halves)) / len(halves)
    return mean, (mean - half, mean + half)


def _session_of(data: Mapping[str, Any]) -> int:
    # cards and leaderboards written before sessions have no such field, and were all of single deals
    session = int(data.get("session", 1))
    if session < 1:
        raise ValueError(f"session: expected a number of deals of at least 1, got {session}")
    return session


def budget(deals: int, session: int = 1) -> str:
    """``"40 deals"``, or ``"40 sessions of 20 deals"``: the games of one cell."""
    from bourre_env.words import plural

    return plural(deals, "deal") if session == 1 else f"{plural(deals, 'session')} of {session} deals"


def _games(session: int) -> str:
    return "single deals" if session == 1 else f"sessions of {session} deals"


@dataclasses.dataclass(frozen=True)
class LadderCard:
    """A candidate's card: one cell per field and table size (field by field), and its rating."""

    candidate: str
    version: int
    fields: list[str]
    players: list[int]
    deals: int
    seed: int
    cells: list[Cell]
    session: int = 1  # deals per game: 1, single deals; K, sessions of K deals with the pot carried

    @property
    def rating(self) -> float:
        return _mean_rating(self.cells, self.players)[0]

    @property
    def rating_ci95(self) -> Interval:
        return _mean_rating(self.cells, self.players)[1]

    def size_rating(self, players: int) -> tuple[float, Interval]:
        """The rating over the fields at one table size, with its interval."""
        return _mean_rating([c for c in self.cells if c.players == players], [players])

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "rating": self.rating, "rating_ci95": self.rating_ci95}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LadderCard:
        def interval(x: Any) -> Interval:
            return None if x is None else (float(x[0]), float(x[1]))

        cells = [
            Cell(
                field=c["field"],
                players=int(c["players"]),
                advantage=float(c["advantage"]),
                advantage_ci95=interval(c["advantage_ci95"]),
                replacement_advantage=float(c["replacement_advantage"]),
                replacement_advantage_ci95=interval(c["replacement_advantage_ci95"]),
                played=bool(c["played"]),
            )
            for c in data["cells"]
        ]
        return cls(
            candidate=data["candidate"],
            version=int(data["version"]),
            fields=list(data["fields"]),
            players=[int(n) for n in data["players"]],
            deals=int(data["deals"]),
            seed=int(data["seed"]),
            cells=cells,
            session=_session_of(data),
        )


@dataclasses.dataclass(frozen=True)
class Leaderboard:
    """Every reference agent's card of one ladder version, best rated first."""

    version: int
    fields: list[str]
    players: list[int]
    deals: int
    seed: int
    cards: list[LadderCard]
    cpu_minutes: float  # the command's CPU time, its workers' included
    machine: str
    session: int = 1  # as ``LadderCard.session``

    def to_dict(self) -> dict[str, Any]:
        return {
            **{f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "cards"},
            "cards": [card.to_dict() for card in self.cards],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Leaderboard:
        return cls(
            version=int(data["version"]),
            fields=list(data["fields"]),
            players=[int(n) for n in data["players"]],
            deals=int(data["deals"]),
            seed=int(data["seed"]),
            cards=[LadderCard.from_dict(c) for c in data["cards"]],
            cpu_minutes=float(data["cpu_minutes"]),
            machine=str(data["machine"]),
            session=_session_of(data),
        )

    @classmethod
    def load(cls, path: str | Path = REFERENCE_FILE) -> Leaderboard:
        """``ValueError`` naming the file if it is missing or not a leaderboard."""
        from bourre_env.atomic_files import check_readable_file  # here: the command line imports this module at start

        try:
            check_readable_file(path, "ladder leaderboard")  # a FIFO would block the read
            return cls.from_dict(json.loads(Path(path).read_text()))
        except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError) as err:
            raise ValueError(f"reference {path}: not a ladder leaderboard ({err})") from None


@dataclasses.dataclass(frozen=True)
class Rank:
    """Where a rating falls among the reference agents: ``position`` of ``total`` (1 is best)."""

    position: int
    total: int
    above: tuple[str, float] | None  # the reference agent just above, and its rating
    below: tuple[str, float] | None
    reference_deals: int
    reference_seed: int
    reference_session: int = 1


def rank_of(card: LadderCard, board: Leaderboard) -> Rank | str:
    """The card's rank among the board's cards (its own spec's card left out), or why there is none."""
    if (card.version, card.fields, card.players) != (board.version, board.fields, board.players):
        return (
            f"no rank: the reference ratings are of ladder v{board.version} at "
            f"{', '.join(map(str, board.players))} players, this card of v{card.version} at "
            f"{', '.join(map(str, card.players))}"
        )
    if card.session != board.session:
        return (
            f"no rank: the reference ratings are of {_games(board.session)}, this card of {_games(card.session)} "
            "(the pot carried from deal to deal changes what a deal is worth)"
        )
    others = sorted(
        ((c.candidate, c.rating) for c in board.cards if c.candidate != card.candidate), key=lambda x: -x[1]
    )
    better = [x for x in others if x[1] > card.rating]
    worse = [x for x in others if x[1] <= card.rating]
    return Rank(
        position=len(better) + 1,
        total=len(others) + 1,
        above=better[-1] if better else None,
        below=worse[0] if worse else None,
        reference_deals=board.deals,
        reference_seed=board.seed,
        reference_session=board.session,
    )


# ---------------------------------------------------------------------------- running
def _check(deals: int, seed: int, players: Sequence[int], session: int) -> tuple[list[int], int]:
    """The table sizes, sorted, and the session length as an int (the card's JSON needs one, not numpy's)."""
    from train.schedule import check_session

    # before the first cell: a cell against the candidate itself plays nothing, so evaluate would not see it yet
    session = check_session(session)
    sizes = sorted(set(players))
    if not sizes or sizes[0] < 2:
        raise ValueError(f"players: table sizes of at least 2 are needed, got {list(players)}")
    if deals < 1:
        raise ValueError(f"deals: expected at least 1, got {deals}")
    if seed < 0:
        raise ValueError(f"seed: expected an integer >= 0, got {seed}")
    return sizes, session


def _parts(candidate: AgentSource, fields: Sequence[str], sizes: list[int], deals: int) -> list[Part]:
    """The cells of a card as the bar meets them, each weighed by its work (``train.eval.time_left``): a field's
    cost per deal grows with the table and differs by hundreds between fields, so deals alone tell no time left."""
    from train.eval.duplicate import agent_label

    label = agent_label(candidate)
    return [
        Part(field, deals, 0.0 if label == field else deals * duplicate_work(label, field, n))
        for field in fields
        for n in sizes
    ]


def _play(
    candidate: AgentSource,
    fields: Sequence[str],
    sizes: list[int],
    deals: int,
    seed: int,
    workers: int,
    backend: str,
    address: str | None,
    connect_timeout: float,
    bar: Any,
    session: int,
) -> LadderCard:
    from train.eval.duplicate import agent_label, evaluate

    label = agent_label(candidate)
    cells: list[Cell] = []
    for field in fields:
        bar.set_postfix_str(f"{label} vs {field}")
        if label == field:
            cells += [Cell(field, n, 0.0, (0.0, 0.0), 0.0, (0.0, 0.0), played=False) for n in sizes]
            bar.update(deals * session * len(sizes))  # nothing to play: the agent against itself scores 0
        else:
            report = evaluate(
                candidate,
                field,
                players=sizes,
                deals=deals,
                seed=seed,
                workers=workers,
                progress=False,
                backend=backend,
                address=address,
                connect_timeout=connect_timeout,
                bar=bar,  # moved deal by deal: its time left weighs each deal by its field's work
                session=session,
            )
            for t in report.tables:
                cells.append(
                    Cell(
                        field,
                        t.players,
                        t.advantage,
                        t.advantage_ci95,
                        t.replacement_advantage,
                        t.replacement_advantage_ci95,
                        played=True,
                    )
                )
    return LadderCard(label, VERSION, list(fields), sizes, deals, seed, cells, session)


def ladder(
    candidate: AgentSource,
    deals: int = DEALS,
    seed: int = SEED,
    players: Sequence[int] = PLAYERS,
    workers: int = 1,
    progress: bool = True,
    backend: str = "local",
    address: str | None = None,
    connect_timeout: float = 60.0,
    session: int = 1,
) -> LadderCard:
    """The candidate's card against the reference fields of ``LADDERS[VERSION]`` (see the module docstring).

    The candidate is a spec (``"heuristic"``, ``"mybot.py:Bot"``), or an agent class or factory as in
    ``train.eval.duplicate.evaluate``; ``workers``, ``backend``, ``address`` and ``connect_timeout`` go to it.
    ``session``: each of the ``deals`` games of a cell is a session of that many deals with the pot carried; 1,
    single deals. The bar counts deals, a session's every deal."""
    sizes, session = _check(deals, seed, players, session)
    fields = LADDERS[VERSION]
    parts = _parts(candidate, fields, sizes, deals * session)
    shared = min(workers, usable_cpus())
    with TimeLeftBar(
        parts, workers=shared, disable=not progress, unit="deal", desc="ladder", dynamic_ncols=True
    ) as bar:
        return _play(candidate, fields, sizes, deals, seed, workers, backend, address, connect_timeout, bar, session)


def leaderboard(
    deals: int = DEALS,
    seed: int = SEED,
    players: Sequence[int] = PLAYERS,
    workers: int = 1,
    progress: bool = True,
    backend: str = "local",
    address: str | None = None,
    connect_timeout: float = 60.0,
    session: int = 1,
) -> Leaderboard:
    """Every reference agent's card (``ladder`` with each as the candidate, ``session`` too), best rated first."""
    import resource

    sizes, session = _check(deals, seed, players, session)
    fields = LADDERS[VERSION]

    def cpu() -> float:
        own, workers_ = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + workers_.ru_utime + workers_.ru_stime

    started = cpu()
    parts = [part for agent in fields for part in _parts(agent, fields, sizes, deals * session)]
    shared = min(workers, usable_cpus())
    with TimeLeftBar(
        parts, workers=shared, disable=not progress, unit="deal", desc="leaderboard", dynamic_ncols=True
    ) as bar:
        cards = [
            _play(agent, fields, sizes, deals, seed, workers, backend, address, connect_timeout, bar, session)
            for agent in fields
        ]
    cards.sort(key=lambda card: -card.rating)
    # CPU time, not wall time: the other jobs of a shared machine do not count
    machine = f"{platform.machine()}, {os.cpu_count() or 1} cores"
    minutes = round((cpu() - started) / 60, 1)
    return Leaderboard(VERSION, list(fields), sizes, deals, seed, cards, minutes, machine, session)


# ---------------------------------------------------------------------------- tables
def card_table(card: LadderCard) -> TextTable:
    """One row per field and table size: the two advantages with their intervals."""
    return TextTable(
        ["field", "players", "table advantage [95% CI]", "replacement advantage [95% CI]"],
        [False, True, True, True],
        [
            [
                c.field,
                str(c.players),
                with_ci(c.advantage, c.advantage_ci95),
                with_ci(c.replacement_advantage, c.replacement_advantage_ci95),
            ]
            for c in card.cells
        ],
    )


def rating_table(board: Leaderboard) -> TextTable:
    """The reference agents by rating, with their rating at each table size."""
    return TextTable(
        ["rank", "agent", "rating [95% CI]", *(f"{n} players" for n in board.players)],
        [True, False, True, *(True for _ in board.players)],
        [
            [
                str(i),
                card.candidate,
                with_ci(card.rating, card.rating_ci95),
                *(with_ci(*card.size_rating(n)) for n in board.players),
            ]
            for i, card in enumerate(board.cards, 1)
        ],
    )


def rating_line(card: LadderCard) -> str:
    """The rating and how it is made, in one sentence."""
    from bourre_env.words import plural

    return (
        f"Rating of {card.candidate}: {with_ci(card.rating, card.rating_ci95)} antes per deal, the mean "
        f"replacement advantage over {plural(len(card.fields), 'field')} x "
        f"{plural(len(card.players), 'table size')} "
        f"(ladder v{card.version}, {budget(card.deals, card.session)} per cell, seed {card.seed})."
    )


def rank_line(card: LadderCard, board: Leaderboard, source: str) -> str:
    """Where the card ranks among the reference agents of ``board``, read from ``source``."""
    rank = rank_of(card, board)
    if isinstance(rank, str):
        return rank
    neighbours = [
        f"{where} {name} ({rating:+.3f})"
        for where, x in (("below", rank.above), ("above", rank.below))
        if x is not None
        for name, rating in [x]
    ]
    return (
        f"Rank {rank.position} of {rank.total} among the reference agents: {', '.join(neighbours)} "
        f"(their ratings: {budget(rank.reference_deals, rank.reference_session)}, seed {rank.reference_seed}, "
        f"from {source})."
    )


def leaderboard_markdown(board: Leaderboard) -> str:
    """``docs/leaderboard.md``: the ratings, then every reference agent's card."""
    sizes = ", ".join(map(str, board.players))
    # single deals keep the page's words as they were: the shipped page is this function's output (tests)
    sessions = board.session > 1
    per_cell = budget(board.deals, board.session) + (
        " (the pot carried from deal to deal, the session the unit of the intervals)" if sessions else ""
    )
    flag = f" --session {board.session}" if sessions else ""
    lines = [
        "# Leaderboard: the ladder's reference agents",
        "",
        "<!-- Written by `bourre ladder --write-leaderboard` (train/eval/ladder.py) with "
        "train/eval/ladder_reference.json; do not edit by hand. -->",
        "",
        f"Ladder v{board.version}: every reference agent ({', '.join(f'`{f}`' for f in board.fields)}) is "
        f"the candidate of a duplicate evaluation against each of them as the field, at {sizes} players, "
        f"{per_cell} per field and table size, seed {board.seed}. `bourre ladder SPEC{flag}` rates any agent "
        "(a user's own `file.py:Class` too) on the same fields and deals and places it in this table; "
        "[evaluation.md](evaluation.md#the-ladder) says how.",
        "",
        "The **rating** is the mean replacement advantage over every field and table size, in antes per deal: "
        "how many more chips a seat makes with the agent in it than with the reference agent in it. Each "
        "reference agent scores exactly 0 against itself, which anchors the scale; a rating depends only on "
        "the agent's own games on fixed deals, so rating a new agent never moves an old one. The 95% "
        "intervals are conservative (the fields of a table size share deals; `train/eval/ladder.py`).",
        "",
        f"Budget: {budget(board.deals, board.session)} per cell, {len(board.fields)} x {len(board.fields)} cells "
        f"per table size less the {len(board.fields)} against themselves (0 by construction, not played); "
        f"{board.cpu_minutes:.1f} minutes of CPU ({board.machine}), most of it the `pimc:16` field. "
        "At this budget the intervals are wide: the order of neighbours whose intervals overlap is not "
        "settled. To rerun it:",
        "",
        "```bash",
        f"bourre ladder --write-leaderboard --deals {board.deals} --seed {board.seed} --players "
        f"{' '.join(map(str, board.players))}{flag} --workers 2",
        "```",
        "",
        "## Ratings",
        "",
        *markdown_table(rating_table(board)),
        "",
        "## Cards",
        "",
        "Each agent against each field: the table advantage (its chips minus the other seats' at its "
        "table) and the replacement advantage (its chips minus the field's agent's in the same seat), "
        "chips per deal with 95% intervals. A row against the agent itself is 0 by construction.",
    ]
    for card in board.cards:
        lines += ["", f"### {card.candidate}", "", *markdown_table(card_table(card)), "", rating_line(card)]
    return "\n".join(lines) + "\n"
