"""The arena's ladder: the pairing rule over many steps with bots that come and go, the ratings as a pure function
of stored games, and a live server that schedules matches by itself for three remote bots, whose ratings
``bourre arena rerate`` rebuilds to the same numbers; the leaderboard's pages escape bot names."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from arena_helpers import WAIT, Recorder

from bourre_env import history
from train.arena.client import play
from train.arena.in_thread import serve_in_thread
from train.arena.leaderboard import bot_page, leaderboard_page
from train.arena.match import MatchSpec
from train.arena.ratings import StoredMatch, rate
from train.arena.records import Book
from train.arena.scheduler import BotStats, LadderConfig, next_match
from train.arena.server import Arena
from train.arena.storage import Store

CONFIG = LadderConfig(fields=("random", "heuristic", "pimc:16"), sizes=(3, 5, 7), tables=2)


def _simulate(steps: int, seed: int, arrivals: dict[int, list[str]]) -> tuple[dict[str, int], int, int]:
    """Scheduling steps with bots that connect at given steps, leave and come back at random, and matches that last
    1 to 5 steps; each bot's matches, the longest wait of an idle bot (in matches scheduled without it), and the
    matches scheduled."""
    rng = np.random.default_rng(seed)
    stats: dict[str, BotStats] = {}
    connected: set[str] = set()
    busy_until: dict[str, int] = {}
    waited: dict[str, int] = {}
    running: list[tuple[int, Any]] = []
    longest = scheduled = 0
    for step in range(steps):
        for name in arrivals.get(step, []):
            stats.setdefault(name, BotStats(name))
            connected.add(name)
        for end, planned in [r for r in running if r[0] <= step]:
            running.remove((end, planned))
            for name in planned.bots:
                s = stats[name]
                reference = dict(s.reference)
                if planned.field is not None:
                    cell = (planned.field, planned.players)
                    reference[cell] = reference.get(cell, 0) + 1
                peers = s.peers + int(planned.field is None)
                sigma = s.sigma * 0.97
                stats[name] = BotStats(name, s.matches + 1, peers, reference, sigma)
                del busy_until[name]
        for name in sorted(connected - set(busy_until)):  # an idle bot leaves, now and then, and comes back later
            if rng.random() < 0.02:
                connected.discard(name)
                waited.pop(name, None)
        for name in sorted(set(stats) - connected):
            if rng.random() < 0.1 and step > min(a for a, names in arrivals.items() if name in names):
                connected.add(name)
        while len(running) < CONFIG.tables:
            idle = [dataclasses_replace(stats[n], waited.get(n, 0)) for n in sorted(connected - set(busy_until))]
            planned = next_match(idle, CONFIG, SECRET)
            if planned is None:
                break
            scheduled += 1
            assert len(set(planned.bots)) == len(planned.bots) and set(planned.bots) <= {b.name for b in idle}
            for b in idle:
                waited[b.name] = 0 if b.name in planned.bots else waited.get(b.name, 0) + 1
                longest = max(longest, waited[b.name])
            for name in planned.bots:
                busy_until[name] = step + int(rng.integers(1, 6))
                waited.pop(name)
            running.append((step + int(rng.integers(1, 6)), planned))
    return {name: s.matches for name, s in stats.items()}, longest, scheduled


def dataclasses_replace(stats: BotStats, waited: int) -> BotStats:
    return BotStats(stats.name, stats.matches, stats.peers, stats.reference, stats.sigma, waited)


def test_every_connected_bot_gets_matches_and_no_bot_waits_long() -> None:
    bots = [f"b{i}" for i in range(7)]
    # two at the start, five newcomers late: least-played first alone would keep the first two waiting while the
    # newcomers catch up (20 matches at a time with this seed, where the overdue rule keeps it to 8)
    arrivals = {0: bots[:2], 1500: bots[2:]}
    played, longest, scheduled = _simulate(3000, 1, arrivals)
    assert scheduled > 500
    assert all(played[name] >= 20 for name in bots), played
    assert longest <= 2 * len(bots), longest


SECRET = "5e" * 32


def test_the_rule_alternates_reference_and_peer_matches_and_covers_every_cell() -> None:
    seen: set[tuple[str, int]] = set()
    alice = BotStats("alice")
    for _ in range(len(CONFIG.fields) * len(CONFIG.sizes)):
        planned = next_match([alice], CONFIG, SECRET)
        assert planned is not None and planned.field is not None and planned.secret == SECRET
        assert planned.seats[0] == "bot:alice" and set(planned.seats[1:]) == {planned.field}
        seen.add((planned.field, planned.players))
        reference = {**alice.reference, (planned.field, planned.players): 1}
        alice = BotStats("alice", alice.matches + 1, 0, reference)
    assert seen == {(f, n) for f in CONFIG.fields for n in CONFIG.sizes}
    # with another bot idle, a bot with more reference than peer matches plays a peer match, least-played first
    idle = [alice, BotStats("bob", 30, 15, {}), BotStats("carol", 2, 0, {("random", 3): 2})]
    planned = next_match(idle, CONFIG, SECRET)
    assert planned is not None and planned.field is None
    assert planned.seats[:3] == ("bot:carol", "bot:alice", "bot:bob") and planned.players == 3
    assert next_match([], CONFIG, SECRET) is None


def test_a_ladder_match_leaves_a_bots_moves_to_random_and_keeps_its_par() -> None:
    """What a bot leaves to the server (timeouts, bad answers, absence) is played at random in a rated match, so
    that a bot answering nothing does not take the heuristic's rating; the par games are unchanged by it."""

    def spec_of(planned: Any) -> MatchSpec:
        return MatchSpec.from_request(planned.request(CONFIG), stored=True)

    reference = next_match([BotStats("alice")], CONFIG, SECRET)
    assert reference is not None and reference.field is not None
    assert spec_of(reference).fallback == "random" and spec_of(reference).par_agent == reference.field
    bots = [BotStats(name, 1, 0, {("random", 3): 1}) for name in ("alice", "bob", "carol")]
    peers = next_match(bots, CONFIG, SECRET)
    assert peers is not None and peers.field is None and len(peers.bots) == peers.players == 3
    assert spec_of(peers).fallback == "random" and spec_of(peers).par_agent == "heuristic"
    filled = next_match(bots[:2], dataclasses.replace(CONFIG, sizes=(5,)), SECRET)
    assert filled is not None and filled.field is None and len(filled.bots) == 2 < filled.players
    filler = {s for s in filled.seats if not s.startswith("bot:")}
    assert len(filler) == 1 and spec_of(filled).par_agent == filler.pop()


def _match(id_: str, created: float, seats: tuple[str, ...], outcomes: np.ndarray, seed: int = 5) -> StoredMatch:
    deals = tuple(range(outcomes.shape[0]))
    return StoredMatch(id_, created, "finished", seats, seed, deals, outcomes, tuple(None for _ in seats))


def test_ratings_are_the_ladders_replacement_advantage_and_openskill() -> None:
    rng = np.random.default_rng(3)
    outcomes = rng.integers(-3, 4, size=(4, 3, 3, 6)).astype(np.int64)
    par = {("random", 3, 5, k): rng.integers(-3, 4, size=(3, 6)).astype(np.int64) for k in range(4)}
    ref = _match("m1", 1.0, ("bot:a", "random", "random"), outcomes)
    peer = _match("m2", 2.0, ("bot:b", "bot:a", "random"), outcomes[::-1].copy())
    running = dataclasses_running(_match("m3", 3.0, ("bot:c", "random", "random"), outcomes))
    standings = rate([peer, running, ref], par, ["random"], [3])
    a = standings.bot("a")
    assert a is not None and standings.bot("c") is None and standings.matches == 2
    own = sum(outcomes[:, r, r % 3, 0] for r in range(3))  # entry 0 in seat r of rotation r
    expected = (own - np.array([par[("random", 3, 5, k)][:, 0].sum() for k in range(4)])) / 3
    assert a.rating == pytest.approx(expected.mean()) and a.complete and a.cells[0].deals == 4
    assert a.matches == 2 and a.reference_matches == 1 and a.deals == 8
    b = standings.bot("b")
    assert b is not None and b.rating is None and not b.complete and b.deals == 4
    assert {r.spec for r in standings.references} == {"random"}
    # the same matches in another order rate the same: the order is the matches' creation
    assert rate([ref, peer], par, ["random"], [3]) == rate([peer, ref], par, ["random"], [3])


def test_a_single_format_match_pairs_each_game_with_the_all_field_table_in_the_bots_seat() -> None:
    """Each deal played once, the bot in seat ``(entry + k) % N``: its replacement advantage on a deal is its chips
    minus the all-field table's in that seat (the rotations format's mean over the seats, for one seat)."""
    rng = np.random.default_rng(4)
    deals, n = 6, 3
    outcomes = rng.integers(-3, 4, size=(deals, 1, n, 6)).astype(np.int64)
    rotations = (np.arange(deals) % n).reshape(deals, 1)
    par = {("random", n, 5, k): rng.integers(-3, 4, size=(n, 6)).astype(np.int64) for k in range(deals)}
    seats = ("random", "bot:a", "random")  # the bot is entry 1
    single = StoredMatch("m1", 1.0, "finished", seats, 5, tuple(range(deals)), outcomes, (None, None, None), rotations)
    a = rate([single], par, ["random"], [n]).bot("a")
    assert a is not None and a.cells[0].deals == deals
    seat = (1 + np.arange(deals)) % n
    mine = outcomes[np.arange(deals), 0, seat, 0]
    expected = mine - np.array([par[("random", n, 5, k)][seat[k], 0] for k in range(deals)])
    assert a.rating == pytest.approx(expected.mean())
    others = outcomes[:, 0, :, 0].sum(axis=1) - mine
    assert a.cells[0].advantage == pytest.approx(((n - 1) * mine - others).mean() / (n - 1))


def dataclasses_running(match: StoredMatch) -> StoredMatch:
    import dataclasses

    return dataclasses.replace(match, status="running")


def test_the_pages_escape_bot_names() -> None:
    outcomes = np.ones((2, 3, 3, 6), dtype=np.int64)
    name = '<script>alert("x")</script>'
    standings = rate([_match("m1", 1.0, (f"bot:{name}", "random", "random"), outcomes)], {}, ["random"], [3])
    for page in (
        leaderboard_page(standings),
        bot_page(
            name,
            standings.bot(name),
            [
                {
                    "match": "m1",
                    "created": 1.0,
                    "status": "finished",
                    "seats": [f"bot:{name}", "random", "random"],
                    "games": 6,
                }
            ],
        ),
    ):
        assert "<script>" not in page and "&lt;script&gt;" in page


def _get(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=WAIT) as answer:
        body = answer.read()
        return json.loads(body) if answer.headers.get("content-type", "").startswith("application/json") else body


def test_the_scheduler_plays_matches_by_itself_and_rerate_rebuilds_its_ratings(tmp_path: Path) -> None:
    store = Store(tmp_path)
    config = LadderConfig(fields=("random", "heuristic"), sizes=(3,), deals=2, tables=2, clock=5.0, poll=0.05)
    arena = Arena(store, ladder=config)
    assert arena.ladder is not None
    server, port = serve_in_thread(arena)
    stop = threading.Event()
    names = ["alice", "bob", "carol"]
    bots = {name: Recorder() for name in names}

    def bot_plays(name: str, token: str) -> None:
        with contextlib.suppress(Exception):  # the server stops under it at the end
            play(bots[name], f"ws://127.0.0.1:{port}/bot", name, token, reconnect=False, until=lambda m: stop.is_set())

    try:
        for name in names:
            threading.Thread(target=bot_plays, args=(name, store.add_bot(name)), daemon=True).start()
        deadline = time.monotonic() + WAIT
        while True:  # no POST /api/matches: the ladder seats them
            standings = arena.book.standings()
            done = [standings.bot(name) for name in names]
            if all(b is not None and b.matches >= 3 and b.cells_played == 2 for b in done):
                break
            assert time.monotonic() < deadline, standings
            time.sleep(0.1)
        arena.ladder.paused = True
        while arena.ladder.tasks or arena.ladder.scheduling:  # a look under way may start one more match
            assert time.monotonic() < deadline
            time.sleep(0.05)
        live = _get(port, "/api/leaderboard")
        alice = _get(port, "/api/leaderboard/alice")
        page = _get(port, "/leaderboard").decode()
        bot = _get(port, "/bots/alice").decode()
        match = alice["matches"][0]
        histories = _get(port, f"/api/matches/{match['match']}/histories")
        game = _get(port, f"/api/matches/{match['match']}/games/1/1")  # deal 1: rotation 1 (deal k: k % N)
    finally:
        stop.set()
        server.stop()
    assert {b["name"] for b in live["bots"]} == set(names) and live["matches"] >= 5
    for b in live["bots"]:
        assert b["rating"] is not None and b["complete"] and b["deals"] >= 6 and b["timeouts"] == 0
        assert b["decisions"] > 0 and b["fallbacks"] == 0
        assert b["matches"] > b["reference_matches"] >= 2  # peer matches too
    assert [r["spec"] for r in live["references"]] and all(r["deals"] > 0 for r in live["references"])
    assert alice["standing"]["name"] == "alice" and all("bot:alice" in m["seats"] for m in alice["matches"])
    assert all(name in page for name in names) and "/bots/alice" in page
    assert f"/api/matches/{match['match']}/games/0/0" in bot
    assert len(histories["games"]) == match["games"] == 2  # each deal played once
    assert histories["all_field"] == [] or len(histories["all_field"]) == 2
    history.read(game)  # a hand history, as bourre serve's replay view opens it
    store.close()
    # every rating again, from the database alone: the same numbers
    again = Store(tmp_path)
    rebuilt = Book(again, config.fields, config.sizes).standings().to_dict()
    again.close()
    assert json.loads(json.dumps(rebuilt)) == live
    # and by the command
    from train import cli

    out = tmp_path / "rerate.json"
    assert (
        cli.main(
            [
                "arena",
                "rerate",
                "--data",
                str(tmp_path),
                "--ladder-fields",
                "random,heuristic",
                "--ladder-players",
                "3",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    assert json.loads(out.read_text()) == live


def test_a_stopped_ladder_leaves_no_task() -> None:
    """The lifespan cancels the scheduler with the app (no socket: the loop alone)."""
    from train.arena.scheduler import lifespan

    class Idle:
        def __init__(self) -> None:
            self.tasks: set[asyncio.Task[None]] = set()
            self.runs = 0

        async def run(self) -> None:
            self.runs += 1
            await asyncio.sleep(3600)

    class Fake:
        ladder = Idle()

    async def main() -> None:
        async with lifespan(Fake())(None):
            await asyncio.sleep(0.01)

    asyncio.run(main())
    assert Fake.ladder.runs == 1


def _ladder_of(argv: list[str]) -> LadderConfig:
    """The ``LadderConfig`` of ``bourre arena serve``'s ladder options ``argv``."""
    import argparse

    from train.arena import ladder_cli

    parser = argparse.ArgumentParser()
    ladder_cli.add_options(parser)
    config = ladder_cli.config(parser.parse_args(argv))
    assert isinstance(config, LadderConfig)
    return config


def test_peers_only_schedules_no_reference_match_and_a_lone_bot_waits() -> None:
    peers = dataclasses.replace(CONFIG, peers_only=True)
    alice = BotStats("alice", 4, 0, {("random", 3): 4})
    assert next_match([alice], CONFIG, SECRET) is not None  # alone: a reference match by default
    assert next_match([alice], peers, SECRET) is None  # peers only: she waits for another bot
    bob = BotStats("bob", 9, 9, {("random", 3): 9})
    for peer_matches in range(4):  # as many peer matches as reference ones, or more: still a peer match
        alice = BotStats("alice", 4 + peer_matches, 4 + peer_matches, {("random", 3): 4})
        planned = next_match([alice, bob], peers, SECRET)
        assert planned is not None and planned.field is None and planned.bots == ["alice", "bob"]
        default = next_match([alice, bob], CONFIG, SECRET)
        assert default is not None and default.field is not None  # where the default rule plays a reference one
    assert _ladder_of(["--ladder", "--ladder-peers-only"]).peers_only
    assert not _ladder_of(["--ladder"]).peers_only


def test_an_operators_match_waits_for_a_bot_the_ladder_plays_and_holds_it(tmp_path: Path) -> None:
    store = Store(tmp_path)
    operator = store.add_operator("tests")
    config = LadderConfig(fields=("random",), sizes=(3,), deals=2, tables=1, clock=60.0, poll=0.05)
    arena = Arena(store, ladder=config)
    assert arena.ladder is not None
    server, port = serve_in_thread(arena)
    stop, go = threading.Event(), threading.Event()

    def choose(turn: dict[str, Any]) -> int:
        go.wait(WAIT)  # the first turns wait: the bot is surely in the ladder's match meanwhile
        return int(turn["legal"][0]["action"])

    def ask(wait: Any) -> tuple[int, dict[str, Any]]:
        body = {"seats": ["random", "bot:alice", "random"], "deals": 1, "wait": wait}
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/matches",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {operator}"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=WAIT) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def bot_plays(token: str) -> None:
        with contextlib.suppress(Exception):  # the server stops under it at the end
            play(
                Recorder(choose),
                f"ws://127.0.0.1:{port}/bot",
                "alice",
                token,
                reconnect=False,
                until=lambda m: stop.is_set(),
            )

    answers: list[tuple[int, dict[str, Any]]] = []
    try:
        threading.Thread(target=bot_plays, args=(store.add_bot("alice"),), daemon=True).start()
        deadline = time.monotonic() + WAIT
        while (slot := arena.registry.slots.get("alice")) is None or slot.match is None:  # the ladder seats it
            assert time.monotonic() < deadline
            time.sleep(0.02)
        ladder_match = slot.match
        status, refused = ask(0)
        assert status == 409 and f"bot:alice is playing match {ladder_match}" in refused["error"]
        for bad in (-1, 601, "soon", True):
            status, refused = ask(bad)
            assert status == 400 and refused["error"].startswith("wait: expected seconds in 0..600"), refused
        waiting = threading.Thread(target=lambda: answers.append(ask(WAIT)), daemon=True)
        waiting.start()
        while arena.wanted["alice"] == 0:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        go.set()
        waiting.join(WAIT)
        arena.ladder.paused = True
        while arena.ladder.tasks or arena.ladder.scheduling or slot.match is not None:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert [b.name for b in arena.ladder.idle(arena.book.standings())] == ["alice"]
        arena.wanted["alice"] += 1
        assert arena.ladder.idle(arena.book.standings()) == []  # held: the ladder starts no match for it
        arena.wanted["alice"] -= 1
    finally:
        stop.set()
        go.set()
        server.stop()
    assert len(answers) == 1 and answers[0][0] == 200, answers
    report = answers[0][1]["report"]
    assert report["status"] == "finished" and report["match"] != ladder_match and report["deals"] == 1
    assert "bot:alice" in [r["label"] for r in report["results"]]
    assert arena.wanted["alice"] == 0  # let go once its match is over
    store.close()
