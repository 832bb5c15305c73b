"""The ladder's data: a candidate's card (``LadderCard``, its ``Cell`` per field and table size), every reference
agent's (``Leaderboard``) and a card's rank among them (``rank_of``), each to and from JSON. How they are made and
what the rating means: ``train.eval.ladder``, which plays the cards and writes the pages."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "REFERENCE_FILE",
    "Cell",
    "Interval",
    "LadderCard",
    "Leaderboard",
    "Rank",
    "budget",
    "rank_of",
    "rules_words",
]

REFERENCE_FILE = Path(__file__).with_name("ladder_reference.json")
"""The reference agents' cards in single deals, written by ``bourre ladder --write-leaderboard``."""

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
    """Mean replacement advantage of ``cells`` and its conservative interval (``train.eval.ladder``, Rating)."""
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


def _rules_of(data: Mapping[str, Any]) -> dict[str, Any]:
    # files written before house rules have no such field, and were all played under the default rules
    rules = data.get("rules", {})
    if not isinstance(rules, Mapping) or not all(isinstance(k, str) for k in rules):
        raise ValueError(f"rules: expected an object of rule options, got {rules!r}")
    return dict(sorted(rules.items()))


def rules_words(rules: Mapping[str, Any]) -> str:
    """``"no house rules"``, or ``"house rules pot_limit=20"``: the rule options a card was played under."""
    if not rules:
        return "no house rules"
    return "house rules " + ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(rules.items()))


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
    rules: dict[str, Any] = dataclasses.field(default_factory=dict)  # the house rules (rule options) of every game

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
            rules=_rules_of(data),
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
    rules: dict[str, Any] = dataclasses.field(default_factory=dict)  # as ``LadderCard.rules``

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
            rules=_rules_of(data),
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
    reference_rules: dict[str, Any] = dataclasses.field(default_factory=dict)


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
    if card.rules != board.rules:
        hint = "".join(f" --rule {k}={json.dumps(v)}" for k, v in board.rules.items())
        return (
            f"no rank: the reference ratings are of {rules_words(board.rules)}, this card of "
            f"{rules_words(card.rules)} (a house rule changes the game; give{hint or ' no --rule'})"
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
        reference_rules=board.rules,
    )
