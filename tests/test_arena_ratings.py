"""The arena's ratings kept up to date (``train.arena.ratings.Rater``, read from the database by
``train.arena.records.Book``) are ``rate()`` over everything, every float the same: random matches created at random
times, settling in random orders, some running or queued between looks, all-field tables stored late, reference and
peer matches of 2 to 8 players. And a match that settles after the others costs only its own deals."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa

from train.arena import ratings
from train.arena.ratings import StoredMatch, rate
from train.arena.records import Book, _stored, baselines
from train.arena.storage import Store, games, matches
from train.eval.duplicate import CHIPS

FIELDS = ["random", "heuristic"]
SIZES = [2, 3, 5, 8]
BOTS = ["alice", "bob", "carol", "dave", "erin"]
SETTLED = ("finished", "aborted", "interrupted")


class Arena:
    """A database written the way the servers write it, at random: matches queued, started, played and settled in
    any order, all-field tables stored with their match or after it."""

    def __init__(self, store: Store, rng: np.random.Generator) -> None:
        self.store = store
        self.rng = rng
        self.clock = 1000.0
        self.open: dict[str, dict[str, Any]] = {}  # pending or running: id -> the request
        self.missing: list[tuple[str, int, int, int]] = []  # all-field tables not stored yet
        self.count = 0

    def _write(self, table: sa.Table, values: dict[str, Any]) -> None:
        with self.store.engine.begin() as db:
            db.execute(sa.insert(table), values)

    def create(self, status: str = "running") -> None:
        rng = self.rng
        self.count += 1
        match = f"m{self.count:04d}"
        n = int(rng.integers(2, 9))
        if rng.random() < 0.6:  # a reference match: one bot among copies of a field (some not configured)
            field = str(rng.choice([*FIELDS, "pimc:16"]))
            seats = [field] * n
            seats[int(rng.integers(n))] = f"bot:{rng.choice(BOTS)}"
        else:
            seats = [str(rng.choice([*(f"bot:{b}" for b in BOTS), *FIELDS])) for _ in range(n - 1)]
            seats.append(next(s for s in (f"bot:{rng.choice(BOTS)}", "random") if s != seats[0]))  # two at least
        request: dict[str, Any] = {"seats": seats, "seed": int(rng.integers(1 << 40)), "deals": int(rng.integers(0, 5))}
        if rng.random() < 0.7:
            request["format"] = "single"
        # most as the ladder plays them; an operator's fallback rates no bot (but is tallied)
        request["fallback"] = "random" if rng.random() < 0.8 else "heuristic"
        # creation times mostly increase, but not always (servers' clocks, matches queued long before)
        self.clock += float(rng.exponential(1.0))
        created = self.clock - float(rng.exponential(3.0)) if rng.random() < 0.3 else self.clock
        self._write(matches, {"id": match, "created": created, "request": json.dumps(request), "status": status})
        self.open[match] = request

    def settle(self) -> None:
        rng = self.rng
        match = str(rng.choice(sorted(self.open)))
        request = self.open.pop(match)
        seats, n, seed = request["seats"], len(request["seats"]), request["seed"]
        single = request.get("format") == "single"
        bots = [s for s in seats if s.startswith("bot:")]
        fields = {s for s in seats if not s.startswith("bot:")}
        for k in range(request["deals"]):
            rotations = [k % n] if single else list(range(n))
            if rng.random() < 0.1:  # an aborted match's last deal: a rotation missing
                rotations = rotations[:-1] or []
            for r in rotations:
                outcomes = np.zeros((n, 6), dtype=np.int64)
                outcomes[:, CHIPS] = rng.integers(-20, 21, size=n)
                rows = json.dumps(outcomes.tolist())
                self._write(games, {"match_id": match, "deal": k, "rotation": r, "outcomes": rows, "history": "{}"})
            if len(bots) == 1 and len(fields) == 1:
                key = (next(iter(fields)), n, seed, k)
                if rng.random() < 0.7:
                    self.baseline(key)
                elif rng.random() < 0.7:
                    self.missing.append(key)  # stored later, or never
        status = str(rng.choice(SETTLED))
        results = [
            {
                "entry": i,
                "counts": {
                    "decisions": int(rng.integers(50)),
                    "timeouts": int(rng.integers(2)),
                    "fallbacks": int(rng.integers(2)),
                    "disconnects": int(rng.integers(2)),
                },
            }
            for i, s in enumerate(seats)
            if s.startswith("bot:") and rng.random() < 0.8
        ]
        report = json.dumps({"results": results}) if rng.random() < 0.9 else None
        with self.store.engine.begin() as db:
            db.execute(sa.update(matches).where(matches.c.id == match).values(status=status, report=report))

    def baseline(self, key: tuple[str, int, int, int]) -> None:
        field, n, seed, deal = key
        outcomes = np.zeros((n, 6), dtype=np.int64)
        outcomes[:, CHIPS] = self.rng.integers(-20, 21, size=n)
        self._write(
            baselines,
            {
                "field": field,
                "players": n,
                "seed": seed,
                "deal": deal,
                "outcomes": json.dumps(outcomes.tolist()),
                "history": "{}",
            },
        )

    def late_baseline(self) -> None:
        if self.missing:
            self.baseline(self.missing.pop(int(self.rng.integers(len(self.missing)))))

    def refuse(self) -> None:
        match = str(self.rng.choice(sorted(self.open)))
        del self.open[match]
        with self.store.engine.begin() as db:
            db.execute(sa.update(matches).where(matches.c.id == match).values(status="refused"))


def _everything(store: Store) -> ratings.Standings:
    """``rate()`` over the whole database, read afresh."""
    with store.engine.connect() as db:
        rows: dict[str, list[Any]] = {}
        for match_id, deal, rotation, outcomes in db.execute(
            sa.select(games.c.match_id, games.c.deal, games.c.rotation, games.c.outcomes)
        ):
            rows.setdefault(match_id, []).append((deal, rotation, outcomes))
        stored = [_stored(row, rows.get(row.id, [])) for row in db.execute(sa.select(matches))]
        tables = {
            (str(f), int(n), int(s), int(k)): np.array(json.loads(o), dtype=np.int64)
            for f, n, s, k, o in db.execute(
                sa.select(
                    baselines.c.field, baselines.c.players, baselines.c.seed, baselines.c.deal, baselines.c.outcomes
                )
            )
        }
    settled = [m for m in stored if m.status in SETTLED]
    return rate(settled, tables, FIELDS, SIZES)


@pytest.mark.parametrize("seed", range(4))
def test_the_standings_kept_up_to_date_are_rate_over_everything(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ratings, "CHECKPOINT_SPACING", 4)  # the history's checkpoints too, in a short run
    rng = np.random.default_rng(seed)
    store = Store(tmp_path)
    try:
        arena = Arena(store, rng)
        book = Book(store, FIELDS, SIZES)
        for step in range(120):
            for _ in range(int(rng.integers(1, 4))):
                roll = rng.random()
                if roll < 0.4 or not arena.open:
                    arena.create("pending" if rng.random() < 0.15 else "running")
                elif roll < 0.85:
                    arena.settle()
                elif roll < 0.95:
                    arena.late_baseline()
                else:
                    arena.refuse()
            standings = book.standings()
            assert standings == _everything(store), f"step {step}"
        while arena.open:
            arena.settle()
        while arena.missing:
            arena.late_baseline()
        final = book.standings()
        assert final == _everything(store)
        assert final.matches > 50 and final.references and any(b.cells for b in final.bots)
        # and rerate's way, a Book of its own over the same database
        assert Book(store, FIELDS, SIZES).standings() == final
    finally:
        store.close()


def _match(id_: str, created: float, rng: np.random.Generator, deals: int = 3) -> StoredMatch:
    n = 3
    seats = ("bot:alice", "random", "random") if int(id_[1:]) % 2 else ("bot:alice", "bot:bob", "heuristic")
    outcomes = np.zeros((deals, 1, n, 6), dtype=np.int64)
    outcomes[..., CHIPS] = rng.integers(-20, 21, size=(deals, 1, n))
    rotations = np.array([[k % n] for k in range(deals)], dtype=np.int64).reshape(-1, 1)
    return StoredMatch(id_, created, "finished", seats, 7, tuple(range(deals)), outcomes, (None,) * n, rotations)


def test_a_match_settling_after_the_others_rates_only_its_own_deals(monkeypatch: pytest.MonkeyPatch) -> None:
    from openskill.models import PlackettLuce

    calls: list[int] = []
    rate_deal = PlackettLuce.rate

    def counted(self: Any, teams: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(len(teams))
        return rate_deal(self, teams, *args, **kwargs)

    monkeypatch.setattr(PlackettLuce, "rate", counted)
    rng = np.random.default_rng(3)
    rater = ratings.Rater(["random"], [3])
    old = [_match(f"m{i}", float(i), rng) for i in range(40)]
    rater.add_matches(old)
    rater.standings(running=[(40.0, "m40"), (41.0, "m41")])
    assert len(calls) == 40 * 3
    # m41 settles before m40: OpenSkill's state before it is kept, and m40 is still running
    m41 = _match("m41", 41.0, rng)
    expected = rate([*old, m41], {}, ["random"], [3])
    calls.clear()
    rater.add_matches([m41])
    assert rater.standings(running=[(40.0, "m40")]) == expected
    assert len(calls) == 3
    # m40 settles: it lands before m41, so those two are rated from the state kept before m40, not the 40 before
    m40 = _match("m40", 40.0, rng)
    expected = rate([*old, m40, m41], {}, ["random"], [3])
    calls.clear()
    rater.add_matches([m40])
    assert rater.standings() == expected
    assert len(calls) == 2 * 3
    # nothing new: nothing rated
    calls.clear()
    rater.standings()
    assert not calls
    # a match created before all of them (a server's clock behind) is exact too, rated again from the start
    early = _match("m99", -1.0, rng)
    expected = rate([*old, m40, m41, early], {}, ["random"], [3])
    calls.clear()
    rater.add_matches([early])
    assert rater.standings() == expected
    assert len(calls) == 43 * 3


def test_a_match_of_one_agent_in_every_seat_rates_no_one() -> None:
    """An operator may ask for a match of copies of one agent (a test of the server): OpenSkill refuses a game of one
    team, and that refusal would break every later rating; such a match moves no rating, the others rate as before."""
    outcomes = np.zeros((1, 1, 3, 6), dtype=np.int64)
    outcomes[0, 0, :, CHIPS] = [2, -1, -1]
    rotation = np.zeros((1, 1), dtype=np.int64)
    alone = StoredMatch("a", 1.0, "finished", ("heuristic",) * 3, 0, (0,), outcomes, (None,) * 3, rotation)
    versus = StoredMatch("b", 2.0, "finished", ("bot:x", "random", "random"), 0, (0,), outcomes, (None,) * 3, rotation)
    both = rate([alone, versus], {}, ["random"], [3])
    assert both.references == rate([versus], {}, ["random"], [3]).references
    assert [r.spec for r in both.references if r.deals] == ["random"]
    assert both.bot("x") is not None and both.bot("x").mu > 25


def _reference(name: str, chips: list[int], fallback: str = ratings.RATED_FALLBACK) -> tuple[StoredMatch, dict]:
    """A reference match of bot ``name`` against ``random`` at 2 players, one deal a chip count of the bot's, each
    with its all-field table (0 chips in the bot's seat), so that the bot's replacement advantage per deal is
    ``chips``."""
    deals = len(chips)
    outcomes = np.zeros((deals, 1, 2, 6), dtype=np.int64)
    outcomes[:, 0, 0, CHIPS] = chips
    outcomes[:, 0, 1, CHIPS] = [-c for c in chips]
    rotations = np.zeros((deals, 1), dtype=np.int64)
    match = StoredMatch(
        f"{name}-{fallback}",
        1.0,
        "finished",
        (f"bot:{name}", "random"),
        9,
        tuple(range(deals)),
        outcomes,
        (None, None),
        rotations,
        fallback,
    )
    par = {("random", 2, 9, k): np.zeros((2, 6), dtype=np.int64) for k in range(deals)}
    return match, par


def test_a_match_with_a_bot_and_another_fallback_is_tallied_but_rated_in_neither_rating() -> None:
    """An operator's match played with the heuristic fallback once rated a bot that made no move of its own above
    one playing honestly; only the ladder's fallback, random, rates a bot."""
    rated, par = _reference("x", [3, 1, 2])
    operator, _ = _reference("x", [3, 1, 2], fallback="heuristic")
    standings = rate([operator], par, ["random"], [2])
    bot = standings.bot("x")
    assert bot is not None and bot.matches == 1 and bot.deals == 3  # tallied
    assert bot.rating is None and not bot.cells and bot.mu == 25.0  # rated in neither
    assert (
        rate([rated, operator], par, ["random"], [2]).bot("x").rating
        == rate([rated], par, ["random"], [2]).bot("x").rating
        == pytest.approx(2.0)
    )


def test_bots_are_ranked_on_the_low_end_of_their_interval() -> None:
    """A bot that stopped after a lucky run (a high mean, few deals, a wide interval) ranks below one whose many deals
    show a lower mean surely."""
    lucky, lucky_par = _reference("lucky", [9, -3, 6])
    steady, steady_par = _reference("steady", [1, 2] * 30)
    standings = rate([lucky, steady], {**lucky_par, **steady_par}, ["random"], [2])
    by_name = {b.name: b for b in standings.bots}
    assert by_name["lucky"].rating > by_name["steady"].rating  # the higher mean
    assert by_name["lucky"].rating_ci95[0] < by_name["steady"].rating_ci95[0]
    assert [b.name for b in standings.bots] == ["steady", "lucky"]


def test_a_standing_says_when_its_bots_last_match_started() -> None:
    """A bot that stopped playing keeps its rating: the leaderboard says how old it is."""
    from train.arena.leaderboard import leaderboard_page

    first, par = _reference("x", [1, 2])
    later = dataclasses.replace(first, id="later", created=86400.0 * 365)
    standings = rate([later, first], par, ["random"], [2])
    assert standings.bot("x").last_match == 86400.0 * 365
    assert "<th>last match</th>" in leaderboard_page(standings) and "1971-01-01 00:00" in leaderboard_page(standings)


def test_the_leaderboard_says_the_reference_agents_openskill_is_not_on_the_bots_scale() -> None:
    from train.arena.leaderboard import REFERENCE_SCALE, leaderboard_page
    from train.arena.ratings import ReferenceStanding, Standings

    alone = Standings(fields=["heuristic"], players=[3], matches=0, bots=[], references=[])
    assert "Reference agents" not in leaderboard_page(alone)
    reference = ReferenceStanding("heuristic", 31.5, 1.2, 27.9, 90)
    shown = leaderboard_page(dataclasses.replace(alone, references=[reference]))
    heading = shown.index("<h2>Reference agents (OpenSkill)</h2>")
    assert shown.index(REFERENCE_SCALE) > heading and "Not on the bots' scale" in REFERENCE_SCALE
    assert "31.50 ± 1.20" in shown
