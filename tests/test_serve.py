"""``bourre serve``'s HTTP API through Starlette's test client: play, refusals that change nothing, limits, replays,
and a check over many deals that no response during a deal holds a card its player cannot see."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest

try:
    from starlette.testclient import TestClient
except (ImportError, RuntimeError) as err:  # RuntimeError: Starlette without httpx2 (or httpx) for its client
    pytest.skip(f"the server tests need the serve extra (pip install -e '.[serve]'): {err}", allow_module_level=True)

from bourre_env import core, history  # noqa: E402
from bourre_env.core import cards
from train.serve import app as serve_app  # noqa: E402
from train.serve import replays as serve_replays  # noqa: E402
from train.serve import tables as tb  # noqa: E402

CARD = re.compile(r"\b(?:10|[2-9JQKA])[CDHS]\b")


JSON = {"content-type": "application/json"}


def _client(**kwargs: Any) -> tuple[TestClient, tb.Tables]:
    state = tb.Tables(seed=kwargs.pop("seed", 0), **kwargs)
    # every POST is JSON, as the page sends it
    return TestClient(serve_app.create_app(state), base_url="http://127.0.0.1", headers=JSON), state


def _new(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/tables", json={"preset": "standard", "players": 4, "agents": "random", **body})
    assert response.status_code == 201, response.text
    return response.json()


def _finish(client: TestClient, view: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    while not view["over"]:
        choice = view["legal"][int(rng.integers(len(view["legal"])))]["action"]
        response = client.post(f"/api/tables/{view['table']}/actions", json={"action": choice, "turn": view["turn"]})
        assert response.status_code == 200, response.text
        view = response.json()
    return view


def test_options_list_the_presets_the_agents_and_the_limits() -> None:
    client, _ = _client(max_tables=3)
    options = client.get("/api/options").json()
    assert "four_card" in options["presets"] and options["players"] == list(range(2, 9))
    assert {"heuristic", "ppo", "random", "heuristic:tight"} <= set(options["agents"])
    assert options["limits"]["tables"] == 3
    page = client.get("/")
    assert page.status_code == 200 and "table.js" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert client.get("/static/table.js").status_code == 200


def test_deal_after_deal_against_the_shipped_agents() -> None:
    client, state = _client()
    view = _new(client, players=5, seat=2, agents=["heuristic", "ppo", "random", "heuristic"])
    assert view["agents"] == ["heuristic", "ppo", "human", "random", "heuristic"] and view["seat"] == 2
    rng = np.random.default_rng(1)
    totals = [0] * 5
    for deal in range(1, 4):
        assert view["deal"] == deal and view["result"] is None
        view = _finish(client, view, rng)
        result = view["result"]
        totals = [t + p for t, p in zip(totals, result["payments"], strict=True)]
        assert view["totals"] == totals
        saved = client.get(result["history"])
        assert saved.status_code == 200 and "attachment" in saved.headers["content-disposition"]
        replay = history.Replay(history.loads(saved.content))
        replay.run()
        assert history.loads(saved.content)["deals"][0]["results"]["payments"] == result["payments"]
        assert [s["agent"] for s in history.loads(saved.content)["seats"]] == view["agents"]
        carried = result["pot"]
        view = client.post(f"/api/tables/{view['table']}/deals").json()
        assert view["pot"] == carried + 5  # the pot carries, and everyone antes
    assert len(state) == 1


def _visible(table: tb.Table) -> set[str]:
    """Every card the person's seat may know of now: its hand, its discards, the cards played, the turned card."""
    s = table.env.unwrapped.state_vector
    seen = int(s[core.S_HAND + table.seat]) | int(s[core.S_DISCARDS + table.seat]) | int(s[core.S_PLAYED])
    names = {cards.to_str(c) for c in range(52) if seen >> c & 1}
    if s[core.S_FACE] >= 0:
        names.add(cards.to_str(int(s[core.S_FACE])))
    return names


def _cards_in(response_text: str) -> set[str]:
    payload = json.loads(response_text)
    if isinstance(payload, dict):
        payload.pop("table", None)  # a random id could hold letters that read like a card
    return set(CARD.findall(json.dumps(payload)))


@pytest.mark.parametrize(
    ("preset", "players"),
    [
        ("standard", 5),
        ("standard", 8),
        ("separate_trump_card_dealer_may_take", 4),
        ("simultaneous_declaration", 6),
        ("four_card", 5),
        ("dealer_picks_trump", 3),
        ("two_round_declaration", 7),
        ("wikipedia", 2),
    ],
)
def test_no_response_during_a_deal_holds_a_card_the_player_cannot_see(preset: str, players: int) -> None:
    client, state = _client(seed=players)
    rng = np.random.default_rng(players)
    view = _new(
        client,
        preset=preset,
        players=players,
        seat=int(rng.integers(players)),
        agents=[("heuristic", "ppo", "random")[q % 3] for q in range(players - 1)],
    )
    table = state.get(view["table"])
    base = f"/api/tables/{view['table']}"
    checked = 0

    def check(response: Any, seen: set[str]) -> None:
        nonlocal checked
        seen |= _visible(table)  # what the player knows now, and has known earlier in the deal (a passed hand)
        if response.status_code == 200 and response.json()["over"]:
            return  # the deal is over: every hand is shown
        hidden = _cards_in(response.text) - seen
        assert not hidden, f"{response.request.url}: {sorted(hidden)} in {response.text[:400]}"
        checked += 1

    for _ in range(6):
        seen: set[str] = set()
        check(client.get(base), seen)
        while not table.over:
            legal = [e["action"] for e in table.view()["legal"]]
            check(client.post(f"{base}/actions", json={"action": 116 if 116 not in legal else 0}), seen)
            check(client.get(f"{base}/deals/{table.deal}/history"), seen)
            check(client.post(f"{base}/actions", json={"action": int(rng.choice(legal))}), seen)
        assert client.get(f"{base}/deals/{table.deal}/history").status_code == 200
        check(client.post(f"{base}/deals"), set())
    assert checked > 30


def test_secret_declarations_stay_secret_until_revealed() -> None:
    client, state = _client(seed=5)
    view = _new(client, preset="simultaneous_declaration", players=5, seat=4, agents="heuristic")
    assert view["phase"] == "declaration"
    for seat in view["seats"][:4]:
        assert seat["decision"] == "deciding"  # they have all declared, but no one knows what
    assert [e["text"] for e in view["log"]] == ["declared (revealed when everyone has)"] * len(view["log"])
    table = state.get(view["table"])
    assert {a["public"] for a in table.env.current_actions()} <= {"pass", "declare play"}


def test_refusals_are_4xx_with_a_message_and_change_nothing() -> None:
    client, state = _client()
    view = _new(client, seat=0)
    base = f"/api/tables/{view['table']}"
    table = state.get(view["table"])
    before = (json.dumps(table.view()), table.env.unwrapped.state_vector.copy())
    legal = [e["action"] for e in view["legal"]]
    illegal = next(a for a in range(117) if a not in legal)
    refusals = [
        (client.get("/api/tables/" + "A" * 22), 404, "no such table"),
        (client.post("/api/tables/" + "A" * 22 + "/actions", json={"action": legal[0]}), 404, "no such table"),
        (client.post(f"{base}/actions", json={"action": illegal}), 422, "illegal action"),
        (client.post(f"{base}/actions", json={"action": "52"}), 400, "expected an action id"),
        (client.post(f"{base}/actions", json={"action": True}), 400, "expected an action id"),
        (client.post(f"{base}/actions", json={"card": 3}), 400, "expected a JSON object"),
        (client.post(f"{base}/actions", json=[52]), 400, "expected a JSON object"),
        (client.post(f"{base}/actions", json={"action": legal[0], "turn": view["turn"] + 1}), 409, "stale"),
        (
            client.post(f"{base}/actions", content=b'{"action": 5', headers={"content-type": "application/json"}),
            400,
            "malformed JSON",
        ),
        (client.post(f"{base}/actions", content=b'{"action": 52, "pad": "' + b"x" * 20_000 + b'"}'), 413, "too large"),
        (client.post(f"{base}/actions", content=(b"x" * 1000 for _ in range(20))), 413, "too large"),  # no length
        (client.post(f"{base}/deals"), 409, "still being played"),
        (client.get(f"{base}/deals/{table.deal}/history"), 409, "still being played"),
        (client.get(f"{base}/deals/7/history"), 404, "no history of deal 7"),
        (client.put(base), 405, "not allowed"),
        (client.get("/api/nothing"), 404, "no such page"),
    ]
    for response, status, text in refusals:
        assert response.status_code == status, (response.request.url, response.text)
        assert text in response.json()["error"], response.json()
    assert client.get(base, headers={"host": "attacker.example"}).status_code == 400  # a rebound name is refused
    assert json.dumps(table.view()) == before[0]
    assert np.array_equal(table.env.unwrapped.state_vector, before[1])
    # once over, an action is refused too
    view = _finish(client, view, np.random.default_rng(0))
    response = client.post(f"{base}/actions", json={"action": 52, "turn": view["turn"]})
    assert response.status_code == 409 and "is over" in response.json()["error"]


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ({"preset": "poker"}, "preset: expected one of"),
        ({"players": 9}, "players: expected an integer in 2..8"),
        ({"players": "4"}, "players: expected an integer"),
        ({"seat": 4}, "seat: expected your seat"),
        ({"agents": ["random"]}, "agents: one spec for every other seat"),
        ({"agents": "nobody"}, "unknown agent 'nobody'"),
        ({"agents": "human"}, "one seat is the person's"),
        ({"agents": "ppo:/etc/passwd"}, "is not offered by this server"),
        ({"agents": "ppo:model.npz"}, "is not offered by this server"),
        ({"agents": "ppo:model"}, "is not offered by this server"),
        ({"agents": "pimc:8,rollout=ppo:model"}, "option rollout: no file path"),
        ({"agents": "pimc:8,value=model"}, "option value: a page chooses one of ['']"),
        ({"agents": "pimc:1000000"}, "option worlds: at most 256"),
        ({"agents": "pimc:64,ms=100000"}, "option ms: at most 1000"),
        ({"agents": "pimc:64,infer=1000"}, "option infer: at most 32"),
        ({"agents": "pimc:64,draws=32"}, "option draws: at most 8"),
        ({"agents": "ismcts:100000"}, "option iterations: at most 1024"),
        ({"agents": "ismcts:64,batch=5000"}, "option batch: at most 64"),
        ({"agents": "ismcts:64,ms=nan"}, "option ms: at most 1000"),
        ({"preset": ["standard"]}, "preset: expected one of"),
        ({"preset": {}}, "preset: expected one of"),
        ({"colour": "red"}, "unknown field(s) ['colour']"),
        ({"preset": "standard", "players": 8, "agents": "random", "seat": -1}, "seat: expected your seat"),
    ],
)
def test_a_bad_new_table_is_refused(body: dict[str, Any], text: str) -> None:
    client, state = _client()
    response = client.post("/api/tables", json={"players": 4, "agents": "random", **body})
    assert response.status_code == 400 and text in response.json()["error"], response.text
    assert len(state) == 0


def test_live_tables_and_their_idle_lifetime_are_bounded() -> None:
    now = [0.0]
    client, state = _client(max_tables=2, idle_seconds=60, clock=lambda: now[0])
    first, second = _new(client), _new(client)
    response = client.post("/api/tables", json={"players": 3})
    assert response.status_code == 429 and "limit" in response.json()["error"]
    assert client.delete(f"/api/tables/{first['table']}").status_code == 204
    third = _new(client)
    now[0] = 45.0
    assert client.get(f"/api/tables/{third['table']}").status_code == 200  # a request keeps a table alive
    now[0] = 90.0
    assert client.get(f"/api/tables/{second['table']}").status_code == 404  # idle 90 s: closed
    assert client.get(f"/api/tables/{third['table']}").status_code == 200
    assert len(state) == 1
    assert first["table"] != second["table"] and len(first["table"]) >= 22  # 128 random bits


def test_the_replay_view_steps_through_a_history() -> None:
    client, _ = _client()
    view = _finish(client, _new(client, seat=1), np.random.default_rng(2))
    text = client.get(view["result"]["history"]).content
    saved = history.loads(text)
    actions = saved["deals"][0]["actions"]
    seat_view = client.post("/api/replays", content=text).json()
    assert seat_view["seat"] == 1 and len(seat_view["frames"]) == len(actions) + 1
    assert seat_view["frames"][-1]["result"]["payments"] == view["result"]["payments"]
    assert "hands" not in seat_view["frames"][0]
    for frame, act in zip(seat_view["frames"], actions, strict=False):  # the others' draws as counts only
        assert frame["next"]["text"] == (act["description"] if act["seat"] == 1 else act["public"])
    opened = client.post("/api/replays?open=1&seat=0", content=text).json()
    assert len(opened["frames"][0]["hands"]) == 4 and opened["frames"][0]["next"]["text"] == actions[0]["description"]
    bad = json.loads(text)
    bad["deals"][0]["actions"][0]["action"] = 0
    response = client.post("/api/replays", content=json.dumps(bad))
    assert response.status_code == 422 and "deals[0].actions[0].action" in response.json()["error"]
    assert client.post("/api/replays", content=b"{}").status_code == 422
    assert client.post("/api/replays?seat=9", content=text).status_code == 400
    assert client.post("/api/replays?seat=x", content=text).status_code == 400
    arabic_three = client.post("/api/replays?seat=\u0663", content=text)  # str.isdigit takes it for 3
    assert arabic_three.status_code == 400 and "seat" in arabic_three.json()["error"]
    too_long = json.loads(text)
    too_long["deals"] = too_long["deals"] * 2
    assert client.post("/api/replays", content=json.dumps(too_long)).status_code == 422  # more deals than the rules


def test_the_replay_view_refuses_long_histories() -> None:
    import bourre_env

    client, _ = _client()
    deals = tb.MAX_REPLAY_DEALS + 1
    env = history.Recording(bourre_env.env(num_players=2, deals_per_episode=deals))
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    response = client.post("/api/replays", content=history.dumps(env.history()))
    assert response.status_code == 413 and f"this one has {deals}" in response.json()["error"]
    big = client.post("/api/replays", content=b" " * (serve_app.MAX_UPLOAD + 1))
    assert big.status_code == 413


def test_the_answer_to_a_replay_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    client, _ = _client()
    view = _finish(client, _new(client, seat=1), np.random.default_rng(4))
    text = client.get(view["result"]["history"]).content
    size = len(client.post("/api/replays?open=1", content=text).content)
    monkeypatch.setattr(serve_app, "MAX_REPLAY_BYTES", size - 1)
    response = client.post("/api/replays?open=1", content=text)
    assert response.status_code == 413, response.text
    assert response.json()["error"] == (
        f"the replay of this history would be {size} bytes, past the limit of {size - 1}: replay fewer deals"
    )
    assert client.post("/api/replays", content=text).status_code == 200  # from a seat: smaller


@pytest.fixture(scope="module")
def saved_text() -> str:
    """The hand history of a deal played to its end at a table."""
    client, _ = _client()
    view = _finish(client, _new(client, seat=1), np.random.default_rng(3))
    return client.get(view["result"]["history"]).text


def _spoiled(text: str, spoil: Any) -> bytes:
    saved = json.loads(text)
    spoil(saved)
    return json.dumps(saved).encode()  # ensure_ascii: a lone surrogate travels as an escape, as a page can send it


@pytest.mark.parametrize(
    ("route", "body", "status", "text"),
    [
        ("actions", b'{"action": ' + b"[" * 8000 + b"]" * 8000 + b"}", 400, "nested too deep"),
        ("actions", b'{"action": ' + b"7" * 5000 + b"}", 400, "malformed JSON body"),
        ("replays", b"[" * 8000 + b"]" * 8000, 422, "nested too deep"),
        ("replays", b'{"format": ' + b"7" * 5000 + b"}", 422, "not JSON"),
        ("replays", lambda h: h["deals"][0].update(pot_before=2**62), 422, "deals[0].pot_before"),
        ("replays", lambda h: h["seats"][0].update(agent="h\udcffuman"), 422, "seats[0].agent"),
        ("replays", lambda h: h.update({"\ud800": 1}), 422, "\\ud800: unknown entry"),  # a 500 once
        ("replays", lambda h: h["deals"][0]["results"].update({"\ud800": 1}), 422, "results.\\ud800: unknown"),
        ("actions", b'{"action": 7, "turn": "\\ud800"}', 400, "lone UTF-16 surrogate"),
    ],
)
def test_bodies_that_broke_the_server_are_refused_naming_the_problem(
    saved_text: str, route: str, body: Any, status: int, text: str
) -> None:
    client, _ = _client()
    view = _new(client)
    data = _spoiled(saved_text, body) if callable(body) else body
    path = f"/api/tables/{view['table']}/actions" if route == "actions" else "/api/replays"
    response = client.post(path, content=data)
    assert response.status_code == status and text in response.json()["error"], response.text[:300]
    assert client.get(f"/api/tables/{view['table']}").json()["turn"] == view["turn"]  # nothing changed
    huge_deal = client.get(f"/api/tables/{view['table']}/deals/{'9' * 5000}/history")
    assert huge_deal.status_code == 404


def test_an_unexpected_error_is_a_500_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, saved_text: str, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: Any) -> None:
        raise RuntimeError("a secret detail of the server")

    monkeypatch.setattr(serve_replays, "replay_frames", broken)
    client, _ = _client()
    response = client.post("/api/replays", content=saved_text)
    assert response.status_code == 500 and response.json() == {"error": "internal error"}
    assert "secret" not in response.text
    assert "a secret detail of the server" in caplog.text  # the operator sees it in the log


def test_posts_are_json_from_this_origin_only() -> None:
    client, state = _client()
    body = json.dumps({"players": 3, "agents": "random"})
    for kind in ("text/plain", "application/x-www-form-urlencoded", ""):  # what a page elsewhere sends unasked
        response = client.post("/api/tables", content=body, headers={"content-type": kind})
        assert response.status_code == 415 and "Content-Type" in response.json()["error"], kind
    for origin in ("http://evil.example", "null", "http://127.0.0.1.evil.example", "https://127.0.0.1:8000"):
        response = client.post("/api/tables", content=body, headers={"origin": origin})
        assert response.status_code == 403 and "Origin" in response.json()["error"], origin
    assert len(state) == 0
    own = client.post(
        "/api/tables",
        content=body,
        headers={"origin": "http://127.0.0.1", "content-type": "application/json; charset=utf-8"},
    )
    assert own.status_code == 201, own.text
    table = own.json()["table"]
    assert client.delete(f"/api/tables/{table}", headers={"origin": "http://evil.example"}).status_code == 403
    assert client.get(f"/api/tables/{table}").status_code == 200
    assert '"Content-Type": "application/json"' in (serve_app.STATIC / "table.js").read_text()


def test_tables_are_bounded_per_client_as_well_as_in_all() -> None:
    state = tb.Tables(seed=0, max_tables=3, per_client=2)
    app = serve_app.create_app(state)
    first, second = (
        TestClient(app, base_url="http://127.0.0.1", headers=JSON, client=(f"10.0.0.{k}", 5000)) for k in (1, 2)
    )
    mine = [_new(first), _new(first)]
    refused = first.post("/api/tables", json={"players": 3})
    assert refused.status_code == 429 and "limit for one client" in refused.json()["error"]
    _new(second)
    full = second.post("/api/tables", json={"players": 3})
    assert full.status_code == 429 and "the server has 3 tables open" in full.json()["error"]
    assert first.delete(f"/api/tables/{mine[0]['table']}").status_code == 204
    _new(first)


def test_search_agents_are_capped_in_time_but_offered_specs_are_trusted() -> None:
    state = tb.Tables(seed=0, offered=["pimc:300,infer=0"])
    table = state.create(
        {"players": 4, "agents": ["pimc:8,infer=0", "pimc:8,infer=0,ms=50", "pimc:300,infer=0"]}, client="10.0.0.1"
    )
    assert [bot.ms for _, bot in sorted(table.bots.items())] == [tb.MOVE_MS, 50, None]  # type: ignore[attr-defined]
    assert tb.check_agent("pimc:300,infer=0", state.offered) == "pimc:300,infer=0"
    with pytest.raises(tb.TableError, match="option worlds: at most 256"):
        tb.check_agent("pimc:300,infer=0")


def test_a_busy_table_is_refused_at_once() -> None:
    client, state = _client()
    view = _new(client)
    table = state.get(view["table"])
    with table.lock:  # as if its agents were thinking
        response = client.get(f"/api/tables/{view['table']}")
        assert response.status_code == 409 and "busy" in response.json()["error"]
        assert client.get("/api/options").status_code == 200
    assert client.get(f"/api/tables/{view['table']}").status_code == 200


@pytest.mark.parametrize("idle", [-1.0, 0.0, float("nan"), float("inf")])
def test_the_idle_lifetime_must_be_finite_and_positive(idle: float) -> None:
    with pytest.raises(ValueError, match="idle_minutes"):
        tb.Tables(idle_seconds=idle)


@pytest.mark.parametrize("port", [0, -1, 65536, True])
def test_run_refuses_a_port_outside_1_to_65535(port: int) -> None:
    from train import serve

    with pytest.raises(ValueError, match="port"):
        serve.run(port=port)


def test_the_documented_limits_are_the_servers() -> None:
    import agents
    from train import serve

    doc = " ".join((serve.__doc__ or "").split())
    for name, value in (
        ("tables.MAX_TABLES", tb.MAX_TABLES),
        ("tables.MAX_TABLES_PER_CLIENT", tb.MAX_TABLES_PER_CLIENT),
        ("tables.IDLE_SECONDS", f"{tb.IDLE_SECONDS // 60} minutes"),
        ("app.MAX_BODY", f"{serve_app.MAX_BODY // 1024} KiB"),
        ("app.MAX_UPLOAD", f"{serve_app.MAX_UPLOAD // 1024 // 1024} MiB"),
        ("tables.MAX_REPLAY_DEALS", tb.MAX_REPLAY_DEALS),
        ("app.TABLE_THREADS", serve_app.TABLE_THREADS),
        ("tables.MOVE_MS", f"{tb.MOVE_MS // 1000} s"),
        ("tables.MOVE_SECONDS", f"{tb.MOVE_SECONDS:g} s"),
        ("app.MAX_REPLAYS", serve_app.MAX_REPLAYS),
        ("app.MAX_REPLAYS_PER_CLIENT", serve_app.MAX_REPLAYS_PER_CLIENT),
        ("app.MAX_REPLAY_BYTES", f"{serve_app.MAX_REPLAY_BYTES // 1024 // 1024} MiB"),
        ("STOP_SECONDS", f"{serve.STOP_SECONDS:g} s"),
    ):
        assert f"``{name}`` ({value}" in doc, name
    pimc, ismcts = agents.search.pimc.LIMITS, agents.search.ismcts.LIMITS
    assert (
        f"(at most {pimc['worlds']:g} worlds, ``infer`` {pimc['infer']:g}, ``draws`` {pimc['draws']:g}, "
        f"``ms`` {pimc['ms']:g})"
    ) in doc
    assert (
        f"({ismcts['iterations']:g} iterations, ``batch`` {ismcts['batch']:g}, ``infer`` {ismcts['infer']:g}, "
        f"``draws`` {ismcts['draws']:g}, ``ms`` {ismcts['ms']:g})"
    ) in doc


def test_bourre_serve_starts_on_this_machine_and_answers(tmp_path: Any) -> None:
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as sock:  # a free port on 127.0.0.1
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "train.cli", "serve", "--port", str(port), "--seed", "1"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/options", timeout=5) as response:
                    options = json.loads(response.read())
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "bourre serve did not start"
                time.sleep(0.5)
        assert "standard" in options["presets"]
    finally:
        server.terminate()
        out, _ = server.communicate(timeout=30)
    assert f"http://127.0.0.1:{port}/" in out


# The browser test's fixtures (a live server, headless Chromium): they skip where the browser is missing, as there.
browser_fixtures = pytest.importorskip("test_serve_browser")
server, browser = browser_fixtures.server, browser_fixtures.browser


def test_the_replay_view_from_a_seat_shows_that_seats_hand(server: Any, browser: Any, tmp_path: Any) -> None:
    """The server sends the seat's hand in every frame of a replay from that seat; the page shows it, position by
    position, and hides it with every hand open (the board shows them all there)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    base, _ = server
    client, _ = _client()
    view = _finish(client, _new(client, seat=1), np.random.default_rng(5))
    text = client.get(view["result"]["history"]).content
    frames = client.post("/api/replays?seat=2", content=text).json()["frames"]
    path = tmp_path / "deal.json"
    path.write_bytes(text)

    wait = WebDriverWait(browser, 30)
    browser.get(base + "/")
    browser.find_element(By.ID, "tab-replay").click()
    browser.find_element(By.ID, "replay-file").send_keys(str(path))
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#replay-seat option")) == 5)
    Select(browser.find_element(By.ID, "replay-seat")).select_by_value("2")
    browser.find_element(By.ID, "replay-load").click()
    wait.until(lambda d: "position 1 of" in d.find_element(By.ID, "replay-position").text)

    def shown() -> list[str]:
        return [c.get_attribute("data-card") for c in browser.find_elements(By.CSS_SELECTOR, "#replay-hand .card")]

    assert browser.find_element(By.ID, "replay-hand-area").is_displayed()
    assert browser.find_element(By.ID, "replay-hand-title").text == "Hand of player_2 (random)"
    assert shown() == frames[0]["hand"] and len(shown()) == 5
    browser.find_element(By.ID, "replay-last").click()
    assert shown() == frames[-1]["hand"]
    changed = next(i for i, f in enumerate(frames) if f["hand"] != frames[0]["hand"])  # a draw or a card played
    browser.find_element(By.ID, "replay-first").click()
    for _ in range(changed):
        browser.find_element(By.ID, "replay-next").click()
    assert shown() == frames[changed]["hand"] != frames[0]["hand"]
    Select(browser.find_element(By.ID, "replay-seat")).select_by_value("open")
    wait.until(lambda d: not d.find_element(By.ID, "replay-hand-area").is_displayed())


def test_a_key_given_twice_is_refused_in_a_request_and_in_a_history() -> None:
    client, state = _client()
    response = client.post("/api/tables", content=b'{"preset": "standard", "players": 3, "players": 8}')
    assert response.status_code == 400 and "'players' is given twice" in response.json()["error"]
    assert len(state) == 0  # nothing was made
    with pytest.raises(history.HistoryError, match="'format' is given twice"):
        history.loads('{"format": "bourre-hand-history", "format": "x"}')
