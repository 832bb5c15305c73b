"""A fair arena: no bot learns a hidden card from anything but the table, and no honest bot is cut off.

Each test stands for one class of leak or cut-off: the deals of a match are a secret committed to at its start and
revealed at its end; a bot plays each deal once and never a deal it played before; ``deal_end`` shows what a player at
the table saw; an answer to a pending turn is never rate-limited; a bot that comes back is brought up to date; every
message the server sends at 2 to 8 players keeps to its schema."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from typing import Any

import jsonschema
import numpy as np
import pytest
from arena_helpers import WAIT, Recorder, Server, arena_server, hello, raw, start  # noqa: F401 (the fixture 'server')
from websockets.exceptions import ConnectionClosed

from agents.base import choose
from bourre_env.core import cards
from train.arena import games as arena_games
from train.arena import match as arena_match
from train.arena import protocol
from train.arena import server as arena_server_module
from train.arena.pacing import Pacer
from train.arena.records import game_history
from train.eval.duplicate import agent_seed, make_deals, table_rules

VALIDATORS = {kind: jsonschema.Draft202012Validator(protocol.schema(kind)) for kind in protocol.SERVER_TYPES}


def _validate(messages: list[dict[str, Any]]) -> None:
    for message in messages:
        VALIDATORS[message["type"]].validate(message)


def _play(server: Server, body: dict[str, Any], bot: Recorder | None = None) -> tuple[Recorder, dict[str, Any]]:
    """``body``'s match with one recording bot in the seat named ``bot:BOT``; the bot and the report."""
    name, token = server.new_bot()
    bot = bot or Recorder()
    thread = start(bot, server, name, token)
    seats = [f"bot:{name}" if seat == "bot:BOT" else seat for seat in body["seats"]]
    status, answer = server.match({**body, "seats": seats})
    assert status == 200, answer
    thread.join(WAIT)
    return bot, answer["report"]


def _first_hands(bot: Recorder) -> dict[int, frozenset[str]]:
    """The bot's hand at its first decision of each game, by game (a deal_start opens a game)."""
    hands: dict[int, frozenset[str]] = {}
    game = -1
    for message in bot.messages:
        if message["type"] == "deal_start":
            game += 1
        elif message["type"] == "turn" and game not in hands:
            hands[game] = frozenset(message["view"]["hand"])
    return hands


def test_the_deals_are_a_secret_committed_at_the_start_and_revealed_at_the_end(server: Server) -> None:
    bot, report = _play(server, {"seats": ["random", "bot:BOT", "random"], "deals": 4})
    _validate(bot.messages)
    start_, end = bot.messages[0], bot.messages[-1]
    assert start_["type"] == "match_start" and end["type"] == "match_end"
    assert "seed" not in start_, "the seed of the deals must not reach a bot before the match is over"
    secret = end["secret"]
    assert hashlib.sha256(bytes.fromhex(secret)).hexdigest() == start_["commitment"]
    assert end["seed"] == arena_match.seed_of(secret) == report["seed"]
    # with the revealed secret, anyone can check the deals: every game's published deck is the seed's
    deals = make_deals(end["seed"], table_rules(3, {}), 4)
    for k in range(4):
        history = game_history(server.store, report["match"], k, k % 3)
        assert history is not None
        assert history["deals"][0]["deck"] == [cards.to_str(int(c)) for c in deals.decks[k]]
        assert history["deals"][0]["dealer"] == int(deals.dealers[k])
    # another match draws another secret
    again, _ = _play(server, {"seats": ["random", "bot:BOT", "random"], "deals": 1})
    assert again.messages[-1]["secret"] != secret


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"seats": ["random", "bot:x"], "seed": 0}, "seed: the deals of a match with a remote seat are the server's"),
        ({"seats": ["random", "bot:x"], "format": "rotations"}, "format: a match with a remote seat plays each deal"),
        ({"seats": ["random", "bot:x"], "secret": "00" * 32}, "unknown fields"),
    ],
)
def test_no_request_chooses_the_deals_of_a_match_with_a_remote_seat(
    server: Server, body: dict[str, Any], expected: str
) -> None:
    status, answer = server.match(body)
    assert status == 400 and expected in answer["error"], answer


def test_a_bot_plays_each_deal_once_and_never_a_deal_it_has_played(server: Server) -> None:
    """Five deals at 3 players: five games, the bot's seat turning one place a deal; its hands never repeat, in this
    match or the next (a repeat among 10 random hands of 52 cards is all but impossible unless a deal repeats)."""
    first, report = _play(server, {"seats": ["bot:BOT", "random", "random"], "deals": 5})
    starts = [m for m in first.messages if m["type"] == "deal_start"]
    assert [m["deal"] for m in starts] == [0, 1, 2, 3, 4]
    assert [m["seat"] for m in starts] == [k % 3 for k in range(5)]
    assert report["format"] == "single" and report["results"][0]["par_advantage"] is not None
    second, _ = _play(server, {"seats": ["bot:BOT", "random", "random"], "deals": 5})
    hands = list(_first_hands(first).values()) + list(_first_hands(second).values())
    assert len(hands) == 10 and len(set(hands)) == 10


def test_deal_end_shows_only_what_a_player_at_the_table_saw(server: Server) -> None:
    """Against the stored hand history (every hidden card): a passed hand shows nothing, another seat shows only the
    cards it played to the tricks, the bot's own seat its hand."""
    # a fixed secret: the deals must include a passed hand, which the operating system's draw may not give
    drawn, server.arena.draw_secret = server.arena.draw_secret, lambda: hashlib.sha256(b"deal_end1").hexdigest()
    try:
        bot, report = _play(server, {"seats": ["bot:BOT", "heuristic", "heuristic:loose", "random"], "deals": 6})
    finally:
        server.arena.draw_secret = drawn
    ends = [m for m in bot.messages if m["type"] == "deal_end"]
    assert len(ends) == 6
    passed_seen = 0
    for end in ends:
        history = game_history(server.store, report["match"], end["deal"], end["rotation"])
        assert history is not None
        record = history["deals"][0]
        played = [set() for _ in range(4)]
        for act in record["actions"]:
            if act["phase"] == "trick play":
                played[act["seat"]].add(cards.to_str(act["action"]))
        me = end["seat"]
        shown = end["results"]["hands"]
        assert shown[me] == record["results"]["hands"][me]
        for q in range(4):
            if q == me:
                continue
            assert set(shown[q]) <= played[q], f"seat {q} showed a card it never played"
            if record["results"]["decisions"][q] == "passed":
                assert shown[q] == []
                passed_seen += 1
    assert passed_seen > 0  # the check above met a passed hand


def test_each_built_in_move_at_a_table_with_a_bot_is_paced(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """A built-in agent's thinking time would tell the bots how many legal moves it had (a search answers at once
    with one): at a table with a remote seat every built-in move goes through the match's pacer
    (``train.arena.pacing``), one pace per seat; with no par game, every move ``choose`` makes is one of them."""
    paced: list[int] = []
    chosen: list[int] = []

    class RecordingPacer(Pacer):
        async def paced(self, seat: int, move: Any) -> Any:
            paced.append(seat)
            return await super().paced(seat, move)

    def counted_choose(*args: Any, **kwargs: Any) -> Any:
        chosen.append(1)
        return choose(*args, **kwargs)

    monkeypatch.setattr(arena_match, "Pacer", RecordingPacer)
    monkeypatch.setattr(arena_games, "choose", counted_choose)
    _, report = _play(server, {"seats": ["bot:BOT", "random", "heuristic"], "deals": 3, "par": "none"})
    assert report["results"][0]["counts"]["decisions"] > 0
    assert len(paced) == len(chosen) > 0 and len(set(paced)) == 2


def test_a_built_in_seat_at_a_table_with_a_bot_has_a_seed_no_bot_can_search_for(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 32-bit seed could be found by trying each against the moves a bot sees, and would then foretell that seat's
    moves and what they say of its hand: at a table dealt from a secret, every built-in seat and the bot's fallback
    are seeded with 63 bits from the match's key; a match of built-in agents keeps evaluation's seeds."""
    built: list[tuple[str, int]] = []
    fallbacks: list[int] = []
    build_seat, remote_seat = arena_match.thinking.build_seat, arena_match.RemoteSeat

    def recording_build_seat(spec: str, seed: int) -> Any:
        built.append((spec, seed))
        return build_seat(spec, seed)

    class RecordingRemoteSeat(remote_seat):  # type: ignore[misc,valid-type]  # the class of the module, patched
        def __init__(self, slot: Any, context: Any, fallback: str, seed: int) -> None:
            fallbacks.append(seed)
            super().__init__(slot, context, fallback, seed)

    monkeypatch.setattr(arena_match.thinking, "build_seat", recording_build_seat)
    monkeypatch.setattr(arena_match, "RemoteSeat", RecordingRemoteSeat)
    _, report = _play(server, {"seats": ["random", "bot:BOT", "heuristic"], "deals": 2, "par": "none"})
    seeds = [seed for _, seed in built] + fallbacks
    assert [spec for spec, _ in built] == ["random", "heuristic"] and len(fallbacks) == 1
    assert len(set(seeds)) == 3 and all(0 <= seed < 2**63 for seed in seeds)
    assert max(seed.bit_length() for seed in seeds) > 32
    key_seed = report["seed"]
    for entry, seed in zip((0, 2, 1), seeds, strict=True):
        assert seed == int(np.random.SeedSequence([key_seed, 3, 0, 1 + entry]).generate_state(1, np.uint64)[0] >> 1)
        assert seed != agent_seed(key_seed, 3, 0, 1 + entry)
    # no secret, no bot: the seeds of evaluation, so that a match of built-in agents replays `bourre eval`'s games
    plain = arena_match.MatchSpec(("random", "heuristic"), 2, 1, seed=5)
    assert [arena_match.seat_seed(plain, i) for i in range(2)] == [agent_seed(5, 2, 0, 1), agent_seed(5, 2, 0, 2)]


def test_the_pacer_holds_a_seats_move_back_to_its_slowest_so_far() -> None:
    """Lower bounds only: a move is never given sooner than the seat's slowest earlier move after its first (at most
    the cap)."""

    async def moves() -> list[float]:
        pacer = Pacer(cap=0.12)
        took = []
        for seat, seconds in [(0, 0.2), (0, 0.06), (0, 0.0), (1, 0.3), (1, 0.0), (0, 0.01), (0, 0.3), (0, 0.0)]:
            start = time.monotonic()
            assert await pacer.paced(seat, asyncio.sleep(seconds, result=seat)) == seat
            took.append(time.monotonic() - start)
        # the cap; seats paced apart; a seat's first move (seat 1's 0.3 s) sets no pace
        assert pacer.slowest[0] == 0.12 and pacer.slowest[1] < 0.06
        return took

    took = asyncio.run(moves())
    assert took[2] >= 0.06 and took[5] >= 0.06 and took[7] >= 0.12
    with pytest.raises(ValueError, match="pace cap"):
        Pacer(cap=-1.0)


def test_an_answer_to_a_pending_turn_is_never_rate_limited(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a limit of 2 messages a second, a bot answering every turn of a fast table is never cut off; made-up
    actions past the limit still close the connection, with the reason ``rate``."""
    monkeypatch.setattr(arena_server_module, "MAX_RATE", 2.0)
    bot, report = _play(server, {"seats": ["bot:BOT", "random"], "deals": 20})
    counts = report["results"][0]["counts"]
    assert counts["decisions"] > 10 and counts["fallbacks"] == 0 and counts["disconnects"] == 0
    assert not [m for m in bot.messages if m["type"] == "error"]
    name, token = server.new_bot()
    ws = raw(server, hello(name, token))
    assert json.loads(ws.recv(WAIT))["type"] == "welcome"
    closed = None
    for turn in range(1, 20):
        try:
            ws.send(json.dumps({"type": "action", "turn": turn, "action": 0}))
        except Exception:
            break
    deadline = time.monotonic() + WAIT
    while closed is None and time.monotonic() < deadline:
        message = json.loads(ws.recv(WAIT))
        if message.get("fatal"):
            closed = message
    assert closed is not None and closed["reason"] == "rate", closed
    VALIDATORS["error"].validate(closed)
    with pytest.raises(ConnectionClosed) as ended:  # then the close of a fatal error
        while True:
            ws.recv(WAIT)
    assert ended.value.rcvd is not None and ended.value.rcvd.code == 1008
    ws.close()


def test_a_bot_that_reconnects_in_a_loop_is_slowed_down_not_shut_out() -> None:
    arrivals = arena_server_module.Arrivals()
    burst = int(arena_server_module.RECONNECT_BURST)
    assert [arrivals.wait("alice") for _ in range(burst)] == [0.0] * burst
    waits = [arrivals.wait("alice") for _ in range(200)]
    assert 0 < waits[0] <= waits[-1] <= arena_server_module.RECONNECT_WAIT
    assert arrivals.wait("bob") == 0.0  # one bot's loop slows no other


def test_every_fatal_error_names_its_reason(server: Server) -> None:
    name, token = server.new_bot()
    for body, reason in (
        (hello(name, "wrong"), "auth"),
        (hello("nobody", token), "auth"),
        (hello(name, token, version=2), "version"),
        ({**hello(name, token), "name": "bad name!"}, "name"),
        ({**hello(name, token), "token": "x" * 129}, "auth"),
        ({**hello(name, token), "protocol": "one"}, "version"),
        ({"type": "action", "turn": 1, "action": 0}, "hello"),
    ):
        ws = raw(server, body)
        message = json.loads(ws.recv(WAIT))
        ws.close()
        VALIDATORS["error"].validate(message)
        assert message["fatal"] and message["reason"] == reason, (body, message)


def test_a_bot_that_comes_back_is_brought_up_to_date(server: Server) -> None:
    """Gone in the middle of a turn and back within the grace period: after its welcome it is sent the match and
    the game under way before its next turn. Gone until the match ended: it is sent the match_end it missed."""
    name, token = server.new_bot()
    other, other_token = server.new_bot()
    back_in = threading.Event()

    def hold(turn: dict[str, Any]) -> int:
        back_in.wait(1.5)  # the match cannot end before the first bot is back
        return int(turn["legal"][0]["action"])

    holder = start(Recorder(hold), server, other, other_token)
    ws = raw(server, hello(name, token))
    assert json.loads(ws.recv(WAIT))["type"] == "welcome"
    server.wait_connected(name)
    result: dict[str, Any] = {}
    body = {"seats": [f"bot:{name}", f"bot:{other}"], "deals": 3, "clock": 2.0, "grace": 30}
    thread = threading.Thread(target=lambda: result.update(answer=server.match(body)), daemon=True)
    thread.start()
    seen = []
    while (message := json.loads(ws.recv(WAIT)))["type"] != "turn":
        seen.append(message)
    ws.close()
    while name in server.arena.registry.connected():
        time.sleep(0.01)
    again = raw(server, hello(name, token))
    assert json.loads(again.recv(WAIT))["type"] == "welcome"
    caught_up = [json.loads(again.recv(WAIT)) for _ in range(2)]
    again.close()
    assert caught_up[0] == seen[0] and caught_up[0]["type"] == "match_start"
    assert caught_up[1]["type"] == "deal_start" and caught_up[1]["match"] == seen[0]["match"]
    # away until the match is over: the match_end it missed comes right after its welcome
    while name in server.arena.registry.connected():
        time.sleep(0.01)
    back_in.set()
    thread.join(WAIT)
    holder.join(WAIT)
    assert result["answer"][0] == 200
    last = raw(server, hello(name, token))
    assert json.loads(last.recv(WAIT))["type"] == "welcome"
    missed = json.loads(last.recv(WAIT))
    last.close()
    assert missed["type"] == "match_end" and missed["match"] == seen[0]["match"]


@pytest.mark.parametrize("players", range(2, 9))
def test_every_message_keeps_to_its_schema_at_every_table_size(server: Server, players: int) -> None:
    bot = Recorder(observation=True)
    bot.words = True
    bot, report = _play(server, {"seats": ["bot:BOT"] + ["random"] * (players - 1), "deals": 2}, bot)
    _validate(bot.messages)
    assert report["players"] == players
    texts = [m["text"] for m in bot.messages if m["type"] == "turn"]
    games = [m for m in bot.messages if m["type"] == "deal_start"]
    assert len(games) == 2 and texts
    # the view in words numbers the game in the match, not the env's one deal
    assert all("Deal 1 of 1" not in t for t in texts) and any("of 2 of this match" in t for t in texts)
