"""Hand histories: a saved history replays every observation, mask and reward exactly, and a bad one is refused
with an error naming its first bad entry."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
import bourre_env
from bourre_env import core, history
from bourre_env.core import cards
from bourre_env.core.rules import presets

CONFIGS = [
    ("standard", 2),
    ("standard", 5),
    ("standard", 8),
    ("double_ante", 4),
    ("dealer_antes_for_all", 3),
    ("wikipedia", 7),
    ("separate_trump_card", 6),
    ("separate_trump_card_dealer_may_take", 5),
    ("two_round_declaration", 5),
    ("simultaneous_declaration", 6),
    ("dealer_picks_trump", 4),
    ("four_card", 5),
    ("four_card", 8),
]


def _trace(env: Any) -> tuple[Any, ...]:
    """Everything an agent or a trainer can read off the env at this point."""
    raw = env.unwrapped
    observations = tuple(
        (a, raw.observe(a)["observation"].tobytes(), raw.observe(a)["action_mask"].tobytes())
        for a in raw.possible_agents
    )
    return (
        observations,
        tuple(raw.agents),
        raw.agent_selection,
        dict(raw.rewards),
        dict(raw._cumulative_rewards),
        dict(raw.terminations),
        dict(raw.truncations),
    )


def _play(env: Any, specs: list[str], seed: int, options: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    """Play one episode with agents of ``specs``; the trace before every decision, and after the last one."""
    bots = [agents.make(spec, seed + q) for q, spec in enumerate(specs)]
    env.reset(seed=seed, options=options)
    traces = []
    ended = False
    for name in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            if not ended:
                traces.append(_trace(env))  # the episode's end, before the agents' closing steps change it
                ended = True
            env.step(None)
            continue
        traces.append(_trace(env))
        env.step(bots[env.unwrapped.agent_name_mapping[name]].act(obs))
    return traces


def _replayed(saved: dict[str, Any]) -> list[tuple[Any, ...]]:
    replay = history.Replay(saved)
    traces = [_trace(step.env) for step in replay]
    traces.append(_trace(replay.env))
    return traces


@pytest.mark.parametrize(("preset", "players"), CONFIGS)
def test_a_saved_history_replays_every_observation_mask_and_reward(preset: str, players: int, tmp_path: Path) -> None:
    specs = ["random", "heuristic"] * 4
    reshuffled = 0
    for episode in range(3):
        env = history.Recording(bourre_env.env(rules=preset, num_players=players), seats=specs[:players])
        played = _play(env, specs[:players], seed=100 * players + episode)
        path = history.write(env.history(), tmp_path / f"{preset}_{players}_{episode}.json")
        saved = history.read(path)
        assert saved["rules"]["preset"] == preset and saved["seats"][1]["agent"] == "heuristic"
        assert _replayed(saved) == played
        deal = saved["deals"][0]
        assert sorted(map(cards.to_id, deal["deck"])) == presets[preset].replace(num_players=players).deck_cards()
        # chips are conserved: what the seats paid in, net, is what the pot and the house gained
        assert deal["pot_before"] - sum(deal["results"]["payments"]) == deal["results"]["pot"] + deal["results"]["rake"]
        reshuffled += env.unwrapped.state_vector[core.S_RESHUFFLES] > 0
    if preset == "standard" and players == 8:
        assert reshuffled  # the reshuffle seed is exercised


def test_a_multi_deal_episode_replays_and_carries_the_pot(tmp_path: Path) -> None:
    env = history.Recording(bourre_env.env(num_players=5, deals_per_episode=6, tie="carry"), seats=["random"] * 5)
    played = _play(env, ["random"] * 5, seed=3, options={"pot": 4})
    saved = history.read(history.write(env.history(), tmp_path / "episode.json"))
    assert [d["deal"] for d in saved["deals"]] == list(range(6))
    assert saved["deals"][0]["pot_before"] == 4
    for before, after in zip(saved["deals"], saved["deals"][1:], strict=False):
        assert after["pot_before"] == before["results"]["pot"]
        assert after["dealer"] == (before["dealer"] + 1) % 5
    assert _replayed(saved) == played


@pytest.mark.parametrize(
    "preset", ["standard", "separate_trump_card", "separate_trump_card_dealer_may_take", "dealer_picks_trump"]
)
def test_a_given_deck_is_recorded_as_given_and_a_drawn_one_deals_the_same_hands(preset: str) -> None:
    rules = presets[preset].replace(num_players=4)
    deck = np.random.default_rng(5).permutation(rules.deck_cards()).tolist()
    env = history.Recording(bourre_env.env(rules=rules))
    _play(env, ["random"] * 4, seed=1, options={"deck": deck, "dealer": 2})
    assert env.history()["deals"][0]["deck"] == [cards.to_str(c) for c in deck]
    # A deck drawn by the env is written as a dealing order that deals the same hands, turned card and stock.
    drawn = bourre_env.raw_env(rules=rules)
    drawn.reset(seed=9)
    written = history.dealing_order(drawn.state_vector, rules)
    again = bourre_env.raw_env(rules=rules)
    again.reset(options={"deck": written, "dealer": int(drawn.state_vector[core.S_DEALER])})
    again.state_vector[core.S_RNG] = drawn.state_vector[core.S_RNG]
    assert np.array_equal(again.state_vector, drawn.state_vector)


def test_an_unfinished_deal_is_not_written() -> None:
    env = history.Recording(bourre_env.env(num_players=3))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="no finished deal"):
        env.history()


def test_an_illegal_action_is_not_recorded() -> None:
    env = history.Recording(bourre_env.env(num_players=3))
    _play(env, ["random"] * 3, seed=4)
    count = len(env.history()["deals"][0]["actions"])
    env.reset(seed=4)
    with pytest.raises(ValueError, match="illegal action"):
        env.step(0)
    assert env.current_actions() == []
    assert count > 3


# ---------------------------------------------------------------------------- bad histories
@pytest.fixture(scope="module")
def good() -> dict[str, Any]:
    env = history.Recording(
        bourre_env.env(num_players=4, deals_per_episode=2), seats=["human", "ppo", "random", "heuristic"]
    )
    _play(env, ["random"] * 4, seed=12)
    return env.history()


def _first_card_play(deal: dict[str, Any]) -> int:
    return next(i for i, a in enumerate(deal["actions"]) if a["phase"] == "trick play")


def _illegal_card(h: dict[str, Any]) -> None:
    deal = h["deals"][0]
    i = _first_card_play(deal)
    held = set(deal["results"]["hands"][deal["actions"][i]["seat"]])
    deal["actions"][i]["action"] = next(c for c in range(52) if cards.to_str(c) not in held)


def _swap_seat(h: dict[str, Any]) -> None:
    act = h["deals"][0]["actions"][1]
    act["seat"] = (act["seat"] + 1) % 4


BAD = {
    "format": (lambda h: h.update(format="poker-history"), "format"),
    "version": (lambda h: h.update(version=2), "version"),
    "preset": (lambda h: h["rules"].update(preset="texas"), "rules.preset"),
    "option": (lambda h: h["rules"]["options"].update(num_players=9), "rules.options"),
    "field": (lambda h: h["rules"]["fields"].update(tie="divide"), "rules.fields.tie"),
    "seats": (lambda h: h["seats"].pop(), "seats"),
    "seed": (lambda h: h.update(seed=12), "seed"),
    "unknown key": (lambda h: h["deals"][0].update(comment="x"), "deals[0].comment"),
    "missing key": (lambda h: h["deals"][0]["actions"][0].pop("phase"), "deals[0].actions[0].phase"),
    "bad card": (lambda h: h["deals"][0]["deck"].__setitem__(3, "1X"), "deals[0].deck[3]"),
    "repeated card": (lambda h: h["deals"][0]["deck"].__setitem__(5, h["deals"][0]["deck"][0]), "deals[0].deck[5]"),
    "dealer range": (lambda h: h["deals"][0].update(dealer=4), "deals[0].dealer"),
    "too many deals": (lambda h: h["deals"].append(copy.deepcopy(h["deals"][1])), "deals[2]"),
    "action range": (lambda h: h["deals"][0]["actions"][0].update(action=117), "deals[0].actions[0].action"),
    "pot past the bound": (lambda h: h["deals"][0].update(pot_before=2**62), "deals[0].pot_before"),
    "lone surrogate": (lambda h: h["seats"][0].update(agent="h\udcffuman"), "seats[0].agent"),
}
BAD_IN_PLAY = {
    "wrong seat": (_swap_seat, "deals[0].actions[1].seat"),
    "wrong phase": (lambda h: h["deals"][0]["actions"][0].update(phase="trick play"), "deals[0].actions[0].phase"),
    "illegal card": (_illegal_card, "deals[0].actions[{first_play}].action"),
    "description": (
        lambda h: h["deals"][0]["actions"][0].update(description="passes loudly"),
        "deals[0].actions[0].description",
    ),
    "public": (lambda h: h["deals"][0]["actions"][0].update(public="play, discard 9"), "deals[0].actions[0].public"),
    "extra action": (
        lambda h: h["deals"][0]["actions"].append(dict(h["deals"][0]["actions"][-1])),
        "deals[0].actions[{n}]",
    ),
    "missing action": (lambda h: h["deals"][0]["actions"].pop(), "deals[0].actions"),
    "payment": (lambda h: h["deals"][0]["results"]["payments"].__setitem__(1, 99), "deals[0].results.payments[1]"),
    "dealer of a later deal": (
        lambda h: h["deals"][1].update(dealer=(h["deals"][1]["dealer"] + 1) % 4),
        "deals[1].dealer",
    ),
    "pot of a later deal": (
        lambda h: h["deals"][1].update(pot_before=h["deals"][1]["pot_before"] + 1),
        "deals[1].pot_before",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_malformed_history_names_its_first_bad_entry(good: dict[str, Any], name: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")

    bad = copy.deepcopy(good)
    spoil, path = BAD[name]
    spoil(bad)
    with pytest.raises(history.HistoryError) as err:
        history.loads(json.dumps(bad))
    assert err.value.path == path, str(err.value)
    assert str(err.value).startswith(path + ": ")
    # the schema cannot hold the rules' values or UTF-8 validity
    if name not in ("option", "field", "seats", "too many deals", "dealer range", "lone surrogate"):
        schema = json.loads(history.SCHEMA_PATH.read_text())
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


@pytest.mark.parametrize("name", sorted(BAD_IN_PLAY))
def test_a_history_that_its_rules_contradict_names_its_first_bad_entry(good: dict[str, Any], name: str) -> None:
    bad = copy.deepcopy(good)
    spoil, path = BAD_IN_PLAY[name]
    spoil(bad)
    path = path.format(first_play=_first_card_play(good["deals"][0]), n=len(good["deals"][0]["actions"]))
    replay = history.Replay(history.loads(json.dumps(bad)))  # well-formed: the replay finds what is wrong
    with pytest.raises(history.HistoryError) as err:
        replay.run()
    assert err.value.path == path, str(err.value)


def test_written_histories_follow_the_json_schema(good: dict[str, Any], tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")

    schema = json.loads(history.SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(json.loads(history.dumps(good)), schema)
    for preset in presets:
        env = history.Recording(bourre_env.env(rules=preset, num_players=3))
        _play(env, ["random"] * 3, seed=0)
        jsonschema.validate(json.loads(history.dumps(env.history())), schema)


def test_read_reports_a_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "deal.json"
    path.write_text('{"format": "bourre-hand-history",')
    with pytest.raises(history.HistoryError, match="not JSON"):
        history.read(path)
    with pytest.raises(history.HistoryError, match="cannot read"):
        history.read(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[" * 8000 + "]" * 8000, "nested too deep"),
        ('{"format": ' + "7" * 5000 + "}", "digits"),
        (b"\xff\xfe{}", "not JSON"),
        ("[1, 2, 3]", "expected a JSON object"),
    ],
)
def test_loads_names_what_is_wrong_with_text_that_is_no_history(text: str | bytes, problem: str) -> None:
    with pytest.raises(history.HistoryError, match=problem):
        history.loads(text)


def test_read_takes_a_path_and_loads_takes_text(good: dict[str, Any], tmp_path: Path) -> None:
    text = history.dumps(good)
    assert history.loads(text) == history.loads(text.encode()) == history.read(history.write(good, tmp_path / "a"))
    with pytest.raises(history.HistoryError, match=r"looks like JSON text: use history.loads"):
        history.read("[1,2,3]")
    with pytest.raises(history.HistoryError, match=r"use history.loads"):
        history.read(text)
    with pytest.raises(TypeError, match="history.loads"):
        history.read(text.encode())  # type: ignore[arg-type]
    (tmp_path / "[1]").write_text(text)  # an existing file is read, whatever its name
    assert history.read(str(tmp_path / "[1]")) == good


def test_write_leaves_the_old_file_or_none_never_a_part(
    good: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unwritable = copy.deepcopy(good)
    unwritable["seats"][0]["agent"] = "h\udcffuman"  # UTF-8 cannot encode it: the write fails part way
    target = tmp_path / "deal.json"
    with pytest.raises(UnicodeEncodeError):
        history.write(unwritable, target)
    assert not target.exists()
    history.write(good, target)

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        history.write(good, target)
    assert history.read(target) == good and [p.name for p in tmp_path.iterdir()] == ["deal.json"]


# ---------------------------------------------------------------------------- the command line
def test_bourre_play_save_writes_the_deals_played(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import io
    import sys

    from train import cli

    path = tmp_path / "game.json"
    # "2" stands pat at each draw and "1" plays the first legal card; a few spare lines for the second deal's draw
    monkeypatch.setattr(sys, "stdin", io.StringIO(("2\n" + "1\n" * 8) * 4))
    assert (
        cli.main(["play", "--seats", "human,heuristic,random", "--seed", "5", "--deals", "2", "--save", str(path)]) == 0
    )
    assert f"wrote {path}" in capsys.readouterr().out
    saved = history.read(path)
    assert [s["agent"] for s in saved["seats"]] == ["human", "heuristic", "random"]
    assert len(saved["deals"]) == 2 and saved["seed"] == "5"
    history.Replay(saved).run()

    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    assert cli.main(["play", "--seats", "human,random", "--save", str(tmp_path / "none.json")]) == 0
    assert "nothing written: no finished deal" in capsys.readouterr().out
    assert not (tmp_path / "none.json").exists()


def test_bourre_play_save_after_ctrl_c_writes_the_finished_deals(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Ctrl-C in the second deal still writes the first, and exits as an interrupted command does (130)."""
    from bourre_env import core
    from train import cli, terminal_game

    draws = []

    def choose_then_interrupt(legal: list[int], hand: list[int], phase: int) -> int:
        if phase in core.DRAW_PHASES:
            draws.append(phase)
            if len(draws) == 2:  # the human's draw of the second deal
                raise KeyboardInterrupt
        return legal[0]

    monkeypatch.setattr(terminal_game, "_choose", choose_then_interrupt)
    path = tmp_path / "game.json"
    assert (
        cli.main(["play", "--seats", "human,heuristic,random", "--seed", "5", "--deals", "3", "--save", str(path)])
        == 130
    )
    captured = capsys.readouterr()
    assert f"wrote {path}" in captured.out and "interrupted" in captured.err
    assert len(history.read(path)["deals"]) == 1


def test_evaluate_saves_every_game_as_a_history(tmp_path: Path) -> None:
    from train.eval.duplicate import evaluate

    report = evaluate("random", "heuristic", players=3, deals=2, seed=0, progress=False, histories=tmp_path)
    files = sorted(p.name for p in (tmp_path / "3p").iterdir())
    assert files == [f"deal0000{k}_{t}.json" for k in range(2) for t in ("field", "seat0", "seat1", "seat2")]
    chips = 0
    for k in range(2):
        decks = set()
        for table in ("field", "seat0", "seat1", "seat2"):
            saved = history.read(tmp_path / "3p" / f"deal0000{k}_{table}.json")
            history.Replay(saved).run()
            decks.add(tuple(saved["deals"][0]["deck"]))
            agents_ = [s["agent"] for s in saved["seats"]]
            if table == "field":
                assert agents_ == ["heuristic"] * 3
            else:
                r = int(table[-1])
                assert agents_ == ["random" if s == r else "heuristic" for s in range(3)]
                chips += saved["deals"][0]["results"]["payments"][r]
        assert len(decks) == 1  # duplicate: every table of a deal plays the same cards
    assert chips / 6 == pytest.approx(report.table(3).candidate.chips)


def test_bourre_eval_save_histories(tmp_path: Path) -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "train.cli",
            "eval",
            "--candidate",
            "random",
            "--players",
            "2",
            "--deals",
            "1",
            "--no-progress",
            "--out",
            "out",
            "--save-histories",
            "h",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(p.name for p in (tmp_path / "h" / "2p").iterdir()) == [
        "deal00000_field.json",
        "deal00000_seat0.json",
        "deal00000_seat1.json",
    ]


def test_bourre_eval_save_histories_is_for_a_candidate(capsys: pytest.CaptureFixture[str]) -> None:
    from train import cli

    assert cli.main(["eval", "--tournament", "random", "random", "--save-histories", "h", "--deals", "1"]) == 2
    assert "--save-histories: only with --candidate" in capsys.readouterr().err
