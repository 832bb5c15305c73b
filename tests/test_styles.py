"""The style zoo (``agents.styles``): legal play under every rule that asks a player something new, each style's
habit as its table says, seeds that replay, and errors that name the styles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
import bourre_env
from agents.styles import STYLES, strength
from bourre_env import actions
from bourre_env.core import PASS, STAY_BASE
from bourre_env.core.cards import NUM_RANKS
from bourre_env.observation import O_HAND, O_PHASE, O_TRUMP
from train.eval.duplicate import evaluate

RULES: list[dict[str, Any]] = [
    {"num_players": 2},
    {"num_players": 8, "max_discard": 2},
    {"num_players": 4, "trump_card": "named_by_dealer"},
    {"num_players": 5, "declaration": "two_rounds", "play_ante": 1},
    {"num_players": 3, "declaration": "simultaneous", "entry_requirement": "trump_or_club"},
    {"num_players": 6, "second_pass_ante": 1, "trump_card": "separate_dealer_may_take"},
    {"num_players": 3, "ranks": 6, "hand_size": 4, "deals_per_episode": 3},
]


def _episodes(config: dict[str, Any], specs: list[str], episodes: int) -> list[tuple[str, dict[str, Any], int]]:
    """Every decision of ``episodes`` episodes with ``specs`` seated in turn: (spec, observation, action)."""
    env = bourre_env.env(**config)
    n = config["num_players"]
    seen = []
    for episode in range(episodes):
        table = [agents.make(specs[(episode + s) % len(specs)], seed=10 * episode + s) for s in range(n)]
        env.reset(seed=episode)
        seat_of = env.unwrapped.agent_name_mapping
        for name in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            seat = seat_of[name]
            action = table[seat].act(obs)
            assert isinstance(action, int) and obs["action_mask"][action], (config, table[seat].name, action)
            seen.append((table[seat].name, obs, action))
            env.step(action)
    return seen


@pytest.mark.parametrize("config", RULES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_every_style_plays_only_legal_actions(config: dict[str, Any]) -> None:
    seen = _episodes(config, [f"style:{s}" for s in STYLES], 24)
    assert {name for name, _, _ in seen} == {f"style:{s}" for s in STYLES}


def _hand(obs: dict[str, Any]) -> list[int]:
    return [int(c) for c in np.flatnonzero(obs["observation"][O_HAND : O_HAND + 52] > 0.5)]


def _trump(obs: dict[str, Any]) -> int:
    return int(np.argmax(obs["observation"][O_TRUMP : O_TRUMP + 4]))


def test_each_style_keeps_its_habit() -> None:
    seen = _episodes({"num_players": 5}, [f"style:{s}" for s in STYLES], 60)
    checked = {"pass": 0, "draw": 0, "card": 0}
    for name, obs, action in seen:
        style, legal = name.split(":")[1], np.flatnonzero(obs["action_mask"])
        hand, trump = _hand(obs), _trump(obs)
        trumps = [c for c in hand if c // NUM_RANKS == trump]
        if obs["observation"][O_PHASE + 1] > 0.5:  # a card
            checked["card"] += 1
            values = {int(c): strength(int(c), trump) for c in legal}
            if style == "eager-high":
                assert values[action] == max(values.values())
            if style == "eager-low":
                assert values[action] == min(values.values())
            continue
        if PASS in legal and len(legal) > 1:
            checked["pass"] += 1
            enters = {"station": bool(trumps), "rock": len(trumps) >= 2 or any(c % NUM_RANKS == 12 for c in trumps)}
            if style.startswith("eager") or style in enters:
                assert (action != PASS) == enters.get(style, True), (style, hand, trump)
        if action >= STAY_BASE:  # the draw: every card but trumps and aces (no discard limit here)
            checked["draw"] += 1
            kept = set(hand) - set(actions.discard_cards(action, hand))
            assert kept == {c for c in hand if c // NUM_RANKS == trump or c % NUM_RANKS == 12}
    assert min(checked.values()) > 50, checked
    passes = [a == PASS for name, obs, a in seen if name == "style:coin-flip" and obs["action_mask"][PASS]]
    assert 0.3 < np.mean(passes) < 0.7


def test_a_random_style_replays_with_its_seed() -> None:
    runs = [
        [a for _, _, a in _episodes({"num_players": 4}, ["style:eager-random", "style:coin-flip"], 6)] for _ in range(2)
    ]
    assert runs[0] == runs[1]


def test_a_style_must_be_named_and_known() -> None:
    with pytest.raises(ValueError, match="style:NAME with NAME one of eager-random, eager-high"):
        agents.make("style")
    with pytest.raises(ValueError, match="unknown style 'reckless'; known: eager-random"):
        agents.make("style:reckless")
    assert agents.make("style:rock", seed=1).name == "style:rock"


def test_the_zoo_rates_each_candidate_against_each_style(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from train.research import style_zoo

    out = tmp_path / "zoo.json"
    argv = ["--candidates", "heuristic", "random", "--styles", "eager-low", "rock", "--players", "3", "5"]
    argv += ["--deals", "6", "--workers", "1", "--no-progress", "--json", str(out)]
    assert style_zoo.main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("| candidate | field | players | deals | table advantage [95%]")
    cells = json.loads(out.read_text())["cells"]
    assert [(c["candidate"], c["style"], c["players"]) for c in cells] == [
        (candidate, style, n)
        for candidate in ("heuristic", "random")
        for style in ("eager-low", "rock")
        for n in (3, 5)
    ]
    # each cell is the evaluation's own table
    report = evaluate("random", "style:rock", (5,), 6, 0, 1, progress=False).table(5)
    assert cells[-1]["advantage"] == report.advantage and cells[-1]["deals"] == 6
    assert any(line.startswith("random's weakest cell: style:") for line in printed)
    for bad in (["--styles", "reckless"], ["--players", "9"], ["--deals", "0"]):
        with pytest.raises(SystemExit) as refused:
            style_zoo.main(bad)
        assert refused.value.code == 2
    assert "unknown reckless; known: eager-random" in capsys.readouterr().err
    assert style_zoo.main(["--candidates", "nobody", "--deals", "1", "--workers", "1", "--no-progress"]) == 2
    assert "style_zoo: error: unknown agent 'nobody'" in capsys.readouterr().err


def test_the_zoo_rates_in_sessions_too(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from train.research import style_zoo

    out = tmp_path / "zoo.json"
    argv = [
        "--candidates",
        "heuristic",
        "--styles",
        "eager-low",
        "--players",
        "3",
        "--deals",
        "2",
        "--session",
        "4",
        "--workers",
        "1",
        "--no-progress",
        "--json",
        str(out),
    ]
    assert style_zoo.main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("| candidate | field | players | sessions x deals |") and "| 2 x 4 |" in printed[2]
    payload = json.loads(out.read_text())
    assert payload["session"] == 4 and payload["cells"][0]["session"] == 4
    report = evaluate("heuristic", "style:eager-low", (3,), 2, 0, 1, progress=False, session=4).table(3)
    assert payload["cells"][0]["advantage"] == report.advantage
