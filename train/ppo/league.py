"""A league of opponents for the batched trainer: fields of fixed players, each drawn by how well it does against the
learner (prioritised fictitious self-play).

Self-play and the heuristic teach the learner one way of playing; a table of people plays many. A ``League`` holds a
population of batched players named by agent specs (``"style:eager-low"``, ``"heuristic:loose"``, ``"ppo:PATH"``
for a past agent or an exploiter of the learner, anything ``agents.batched_players.make_batched`` builds) and turns
a share of the rollout tables into *field tables*: the learner in one seat, one member of the league in every other,
for the whole episode (a deal or a session), as the evaluations' fields sit (``bourre eval --field``).

Which member fills a field table is drawn by prioritised fictitious self-play (PFSP, as AlphaStar's league draws its
opponents): member ``m`` with weight ``(1 - x_m) ** power + floor``, where ``x_m`` is the learner's recent rate of
beating that field, a deal counting 1 when the learner's chips beat the field's mean, 0.5 when level, 0 below. A field
the learner already beats is met less, one that beats it more, and the floor keeps every member in the draw so that a
beaten field cannot come back unseen. The rate is a running one (each record decays by ``decay`` a deal recorded, so
it follows the learner as it changes), with one pseudo-deal of each result as its prior.

The league draws with a generator of its own, so a trainer without one draws its seats exactly as before. Its
priorities start afresh when a run resumes (they follow the learner within some thousands of deals).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agents.batched_players import make_batched

__all__ = ["LEAGUE", "League", "parse_members"]

LEAGUE = 1 << 10
"""Owner code of league member ``m`` at a seat: ``LEAGUE + m`` (below it: the seat pool's codes)."""


def parse_members(text: str | Sequence[str]) -> tuple[str, ...]:
    """Member specs from a comma-separated string or a sequence; duplicates and empty names refused."""
    items = [s.strip() for s in text.split(",")] if isinstance(text, str) else [str(s).strip() for s in text]
    if not items or any(not s for s in items):
        raise ValueError(f"league: expected comma-separated agent specs, got {text!r:.200}")
    if len(set(items)) != len(items):
        raise ValueError(f"league: a member is named twice in {text!r:.200}")
    if len(items) > 64:
        raise ValueError(f"league: at most 64 members, got {len(items)}")
    return tuple(items)


class League:
    """Field tables for a share of the rollout's episodes, their members drawn by PFSP (see the module docstring).

    ``members``: agent specs; ``share``: the chance that a table's new episode is a field table; ``seed``: the
    league's own generator (the members' seeds derive from it); ``factory``: builds a member from its spec and seed
    (default ``make_batched``)."""

    def __init__(
        self,
        members: Sequence[str],
        share: float,
        seed: int,
        power: float = 2.0,
        floor: float = 0.05,
        decay: float = 0.999,
        factory: Callable[[str, int], Any] = make_batched,
    ) -> None:
        self.members = parse_members(members)
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"league share: expected a chance in [0, 1], got {share!r}")
        if not power >= 0.0 or not floor > 0.0 or not 0.0 < decay <= 1.0:
            raise ValueError(f"league: expected power >= 0, floor > 0, 0 < decay <= 1, got {power}, {floor}, {decay}")
        self.share, self.power, self.floor, self.decay = float(share), float(power), float(floor), float(decay)
        seeds = np.random.SeedSequence([seed, 29]).generate_state(len(self.members) + 1)
        self.rng = np.random.default_rng(seeds[-1])
        self.players = [factory(spec, int(s)) for spec, s in zip(self.members, seeds, strict=False)]
        self.wins = np.zeros(len(self.members))  # decayed sums of the learner's results against each field
        self.deals = np.zeros(len(self.members))
        self.met = np.zeros(len(self.members), np.int64)  # deals recorded, not decayed (what the logs show)

    def win_rates(self) -> np.ndarray:
        """The learner's running rate of beating each member's field, with one deal won and one lost as prior."""
        return (self.wins + 1.0) / (self.deals + 2.0)

    def weights(self) -> np.ndarray:
        """PFSP's chance of drawing each member for a field table."""
        w = (1.0 - self.win_rates()) ** self.power + self.floor
        return w / w.sum()

    def seat(self, owners: np.ndarray, learner: int) -> np.ndarray:
        """Turn a ``share`` of these new episodes' seat owners ``(tables, num_players)`` into field tables, in place:
        the learner (owner code ``learner``) in one seat drawn uniformly, one member everywhere else; returns the
        rows made field tables."""
        tables, num_players = owners.shape
        rows = np.flatnonzero(self.rng.random(tables) < self.share)
        if rows.size:
            members = self.rng.choice(len(self.members), size=rows.size, p=self.weights())
            owners[rows] = (LEAGUE + members)[:, None]
            owners[rows, self.rng.integers(num_players, size=rows.size)] = learner
        return rows

    def act(self, code: int, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The actions of member ``code - LEAGUE`` at ``rows``' tables (their observations and masks)."""
        return np.asarray(self.players[code - LEAGUE].act_batch(observations, masks, rows), np.int64)

    def record(self, owners: np.ndarray, chips: np.ndarray, learner: int) -> tuple[np.ndarray, np.ndarray]:
        """Record the deals that ended at these tables (owners and chips ``(tables, num_players)``): at each field
        table, whether the learner's chips beat the mean of the field's. Returns the field tables' members and
        results (1, 0.5 or 0)."""
        field = owners.max(axis=1) >= LEAGUE
        if not field.any():
            return np.zeros(0, np.int64), np.zeros(0)
        owners, chips = owners[field], chips[field].astype(np.float64)
        is_learner = owners == learner
        mine = (chips * is_learner).sum(axis=1)
        theirs = (chips * ~is_learner).sum(axis=1) / np.maximum(1, (~is_learner).sum(axis=1))
        result = np.where(mine > theirs, 1.0, np.where(mine == theirs, 0.5, 0.0))
        member = owners.max(axis=1) - LEAGUE
        # one deal after another: each record decays by ``decay`` for every deal recorded after it
        age = self.decay ** np.arange(len(result) - 1, -1, -1, dtype=np.float64)
        self.wins *= self.decay ** len(result)
        self.deals *= self.decay ** len(result)
        np.add.at(self.wins, member, result * age)
        np.add.at(self.deals, member, age)
        np.add.at(self.met, member, 1)
        return member, result

    def summary(self) -> dict[str, dict[str, float]]:
        """Per member: deals met, the learner's running rate of beating it, its PFSP weight (for logs and reports)."""
        rates, weights = self.win_rates(), self.weights()
        return {
            spec: {"deals": int(self.met[m]), "learner_beats": float(rates[m]), "weight": float(weights[m])}
            for m, spec in enumerate(self.members)
        }
