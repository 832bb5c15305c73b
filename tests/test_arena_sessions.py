"""The arena's session format: a match that is one session at one table, the pot carried, paired with its par
session; played as ``bourre eval --session`` plays a session, its deals told to the bots one by one, stored one by
one, rated once."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from typing import Any

import jsonschema
import numpy as np
import pytest
from arena_helpers import WAIT, Recorder, Server, arena_server, start  # noqa: F401 (arena_server: the fixture 'server')

import bourre_env
from bourre_env import history
from train.arena import protocol
from train.arena.client import AgentBot
from train.arena.match import MatchSpec, play_match
from train.arena.ratings import StoredMatch, rate
from train.arena.remote import Registry
from train.schedule import agent_seed, build_agent, play_game, table_rules
from train.table import make_deals

VALIDATORS = {kind: jsonschema.Draft202012Validator(protocol.schema(kind)) for kind in protocol.SERVER_TYPES}
SEATS = ("heuristic", "random", "heuristic")


def _play(spec: MatchSpec) -> tuple[Any, list[Any], list[Any]]:
    stored: list[tuple[int, int, np.ndarray, dict[str, Any]]] = []
    par: list[tuple[int, np.ndarray, dict[str, Any]]] = []

    async def keep(k: int, r: int, rows: np.ndarray, saved: dict[str, Any]) -> None:
        stored.append((k, r, rows.copy(), saved))

    async def keep_par(k: int, rows: np.ndarray, saved: dict[str, Any]) -> None:
        par.append((k, rows.copy(), saved))

    report = asyncio.run(play_match(spec, "0" * 16, Registry(), keep, on_par=keep_par))
    return report, stored, par


def _joined(games: list[dict[str, Any]]) -> dict[str, Any]:
    return {**games[0], "deals": [deal for game in games for deal in game["deals"]]}


def test_a_session_match_plays_the_evaluations_session_and_its_deals_join_into_a_history_that_replays() -> None:
    spec = MatchSpec.from_request({"seats": list(SEATS), "deals": 12, "seed": 3, "format": "session", "par": "none"})
    report, stored, _ = _play(spec)
    n, k = spec.players, spec.deals
    rules = table_rules(n, {}, k)
    table = [build_agent(seat, agent_seed(spec.seed, n, 0, 1 + i)) for i, seat in enumerate(SEATS)]
    expected = play_game(bourre_env.env(rules=rules), make_deals(spec.seed, rules, 1).deal(0, rules), table)
    assert report.status == "finished" and report.format == "session"
    assert report.deals == expected.deals_played == len(stored)
    assert [(deal, rotation) for deal, rotation, _, _ in stored] == [(d, 0) for d in range(len(stored))]
    assert np.array_equal(sum(rows for _, _, rows, _ in stored), expected.rows)
    assert report.pot_left == expected.pot_left
    session = _joined([saved for _, _, _, saved in stored])
    history.Replay(session).run()  # the session's deals, joined in order, replay as one game of K deals
    assert len(session["deals"]) == report.deals
    # chips per deal: the chip change plus the seat's share of the pot left, over the deals; conserved
    for i, result in enumerate(report.results):
        share = (int(expected.rows[i, 0]) + expected.pot_left / n) / report.deals
        assert result.side.chips == pytest.approx(share)
    assert sum(r.side.chips for r in report.results) == pytest.approx(0.0)


def test_the_par_session_meets_the_same_decks_and_a_table_of_the_par_agent_scores_zero_against_it() -> None:
    seats = ["heuristic"] * 3
    spec = MatchSpec.from_request({"seats": seats, "deals": 10, "seed": 8, "format": "session"})
    report, stored, par = _play(spec)
    assert spec.par_agent == "heuristic" and spec.par_key == "session:10:heuristic"
    assert [k for k, _, _ in par] == [k for k, _, _, _ in stored]
    for (_, _, rows, saved), (_, par_rows, par_saved) in zip(stored, par, strict=True):
        assert saved["deals"][0]["deck"] == par_saved["deals"][0]["deck"]
        assert np.array_equal(rows, par_rows)  # the same agents with the same seeds: the same session
    assert all(r.par_advantage == 0.0 for r in report.results)
    # a table that plays otherwise meets the same decks deal by deal
    other, other_stored, _ = _play(
        MatchSpec.from_request({"seats": ["random"] * 3, "deals": 10, "seed": 8, "format": "session", "par": "none"})
    )
    decks = [saved["deals"][0]["deck"] for _, _, _, saved in stored]
    other_decks = [saved["deals"][0]["deck"] for _, _, _, saved in other_stored]
    played = min(len(decks), len(other_decks))
    assert played >= 2 and decks[:played] == other_decks[:played]


def test_a_session_request_is_checked_and_a_remote_seat_may_play_a_session_but_no_rotations() -> None:
    remote = MatchSpec.from_request({"seats": ["bot:a", "heuristic"], "deals": 5, "format": "session"})
    assert remote.format == "session" and remote.par_agent == "heuristic"
    assert MatchSpec.from_request(remote.request(), stored=True).format == "session"
    with pytest.raises(ValueError, match="single, or session"):
        MatchSpec.from_request({"seats": ["bot:a", "heuristic"], "format": "rotations"})
    with pytest.raises(ValueError, match="format: expected one of single, rotations, session"):
        MatchSpec.from_request({"seats": ["heuristic", "heuristic"], "format": "sessions"})


def _stored_session(status: str, chips: list[list[int]]) -> StoredMatch:
    outcomes = np.zeros((len(chips), 1, 3, 6), dtype=np.int64)
    outcomes[:, 0, :, 0] = chips
    return StoredMatch(
        status,
        0.0,
        status,
        ("bot:a", "bot:b", "heuristic"),
        1,
        tuple(range(len(chips))),
        outcomes,
        (None, None, None),
        np.zeros((len(chips), 1), dtype=np.int64),
        "random",
        session=True,
    )


def test_a_session_is_rated_once_by_its_whole_chips_and_only_once_finished() -> None:
    pytest.importorskip("openskill", reason="the eval extra: pip install -e '.[eval]'")
    # bot a loses the first deal and wins the session: ranked first, once
    chips = [[-5, 5, 0], [3, -2, -1], [4, -2, -2]]
    standings = rate([_stored_session("finished", chips)], {}, ["heuristic"], [3])
    a, b = standings.bot("a"), standings.bot("b")
    assert a is not None and b is not None and a.mu > b.mu and a.rating is None
    assert standings.references[0].deals == 3  # the session's deals, rated as one game
    cut = rate([_stored_session("interrupted", chips)], {}, ["heuristic"], [3])
    cut_a, cut_b = cut.bot("a"), cut.bot("b")
    assert cut_a is not None and cut_b is not None and cut_a.mu == cut_b.mu and cut_a.deals == 3


def _get(server: Server, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=WAIT) as answer:
        return json.loads(answer.read())


def test_bots_play_a_session_match_told_deal_by_deal_and_its_histories_replay_once_it_is_over(
    server: Server,
) -> None:
    (a, ta), (b, tb) = server.new_bot(), server.new_bot()
    first, agent = Recorder(), AgentBot("heuristic")
    resets: list[int] = []
    agent.agent.reset = lambda: resets.append(1)  # type: ignore[method-assign]
    threads = [start(first, server, a, ta), start(agent, server, b, tb)]
    deals = 6
    status, answer = server.match({"seats": [f"bot:{a}", "heuristic", f"bot:{b}"], "deals": deals, "format": "session"})
    assert status == 200, answer
    for thread in threads:
        thread.join(WAIT)
    report = answer["report"]
    assert report["format"] == "session" and report["status"] == "finished" and report["par"] == "heuristic"
    played = report["deals"]
    assert resets == [1]  # bourre connect's agent is reset once, before the session
    messages = first.messages
    for message in messages:
        VALIDATORS[message["type"]].validate(message)
    assert messages[0]["type"] == "match_start" and messages[0]["format"] == "session"
    assert messages[0]["rules"]["deals_per_episode"] == deals
    starts = [m for m in messages if m["type"] == "deal_start"]
    ends = [m for m in messages if m["type"] == "deal_end"]
    assert [m["deal"] for m in starts] == [m["deal"] for m in ends] == list(range(played))
    assert {(m["rotation"], m["seat"]) for m in starts + ends} == {(0, 0)}  # one seat for the whole session
    turns = [m for m in messages if m["type"] == "turn"]
    assert turns and all(t["view"]["deals_left"] == deals - 1 - t["deal"] for t in turns)
    # the pot a deal leaves is the pot the next one starts from (its antes added)
    for end, later in zip(ends, starts[1:], strict=False):
        first_turn = next(t for t in turns if t["deal"] == later["deal"])
        assert first_turn["view"]["pot"] >= end["results"]["pot"]
    assert messages[-1]["type"] == "match_end"
    mine = messages[-1]["results"][0]
    assert mine["chips"] == pytest.approx(report["results"][0]["side"]["chips"])
    page = _get(server, f"/api/matches/{report['match']}/histories")
    assert [(g["deal"], g["rotation"]) for g in page["games"]] == [(d, 0) for d in range(played)]
    history.Replay(_joined([g["history"] for g in page["games"]])).run()
    assert [g["deal"] for g in page["all_field"]] == list(range(played))
    par = _joined([g["history"] for g in page["all_field"]])
    history.Replay(par).run()
    for game, par_game in zip(page["games"], page["all_field"], strict=True):
        assert game["history"]["deals"][0]["deck"] == par_game["history"]["deals"][0]["deck"]
    # the bot's page names the format and links each stored deal of the session
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/bots/{a}", timeout=WAIT) as answer:
        html = answer.read().decode()
    assert "session (pot carried)" in html
    for deal in range(played):
        assert f"/api/matches/{report['match']}/games/{deal}/0" in html


def test_a_match_request_sets_house_rules_that_are_checked_and_stored() -> None:
    spec = MatchSpec.from_request({"seats": list(SEATS), "deals": 4, "format": "session", "rules": {"pot_limit": 20}})
    assert spec.rule_options == {"pot_limit": 20}
    assert MatchSpec.from_request(spec.request(), stored=True).rule_options == {"pot_limit": 20}
    for rules, problem in (
        ({"deals_per_episode": 3}, "a session's deals are the match's"),
        ({"nope": 1}, "unknown rule option"),
        ({"hand_size": 99}, "hand_size"),
        ({"pot_limit": [1]}, "rules.pot_limit"),
        ([1], "expected an object"),
    ):
        with pytest.raises(ValueError, match=problem):
            MatchSpec.from_request({"seats": list(SEATS), "rules": rules})


def test_the_ladder_plays_peer_matches_as_capped_sessions_when_asked_and_reference_matches_as_single_deals() -> None:
    from train.arena.scheduler import SESSION_RULES, LadderConfig, Planned

    secret = "ab" * 32
    peer = Planned(("bot:a", "bot:b", "heuristic"), secret, None)
    reference = Planned(("bot:a", "heuristic", "heuristic"), secret, "heuristic")
    asked = LadderConfig(peer_sessions=True)
    spec = MatchSpec.from_request(peer.request(asked), stored=True)
    assert spec.format == "session" and spec.rule_options == SESSION_RULES == {"pot_limit": 20}
    assert MatchSpec.from_request(reference.request(asked), stored=True).format == "single"
    assert MatchSpec.from_request(peer.request(LadderConfig()), stored=True).format == "single"
