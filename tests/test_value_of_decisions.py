"""A clairvoyant agent that sees only at some decision types (``agents.clairvoyant``, option ``at``) and
``value_of_information --decisions``: the decision type is read from the observation, the agent plays the fair search
wherever it does not see and the full clairvoyant's search where it does, a draw-or-pass decision seen in one part
splits as documented, and the command builds its candidates and refuses a bad value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
import bourre_env
from agents import clairvoyant
from agents.search.pimc import PIMCAgent
from bourre_env import core, view
from bourre_env.core.rules import Rules
from train.eval.duplicate import make_deals
from train.research import value_of_information as voi

SEED = 11
WORLDS = 8

# the decision types of each phase of the rules core, for the observation's reading to be held to
TYPES_OF_PHASE = {
    core.NAME_TRUMP: ("trump",),
    core.DECLARE: ("pass",),
    core.DRAW_OR_PASS: ("pass", "draw"),
    core.DRAW: ("draw",),
    core.SECOND_PASS: ("pass",),
    core.PLAY: ("cards",),
}


class Recorder:
    """A seat that is handed the deal (``sees_hidden``), keeps every observation dict it is given with the phase of
    the true state, and plays the heuristic."""

    sees_hidden = True
    name = "recorder"

    def __init__(self, env: Any, seed: int) -> None:
        self.env = env
        self.heuristic = agents.make("heuristic", seed)
        self.seen: list[tuple[dict[str, Any], int]] = []

    def reset(self) -> None:
        pass

    def act(self, observation: dict[str, Any]) -> int:
        self.seen.append((observation, view.phase_of(self.env.unwrapped.state_vector)))
        return int(self.heuristic.act({k: observation[k] for k in ("observation", "action_mask")}))


def recorded_decisions(base: str | None, players: int, deals: int, **options: Any) -> list[tuple[dict[str, Any], int]]:
    """Every decision with more than one legal action of ``deals`` deals of heuristic play under the rules ``base``
    (a preset) with ``options``, each with its phase."""
    rules = Rules.from_options(base, num_players=players, **options)
    env = bourre_env.env(rules=rules)
    seats = [Recorder(env, s) for s in range(players)]
    dealt = make_deals(SEED, rules, deals)
    for k in range(deals):
        voi.play_privileged_deal(env, list(seats), ["recorder"] * players, dealt, k, f"deal {k}")
    return [(obs, phase) for seat in seats for obs, phase in seat.seen if obs["action_mask"].sum() > 1]


def keyed(at: str, sees: str = "all") -> clairvoyant.ClairvoyantAgent:
    return clairvoyant.make(f"{WORLDS},sees={sees},at={at},keyed=1", SEED)


def fair_part(observation: dict[str, Any]) -> dict[str, Any]:
    return {"observation": observation["observation"], "action_mask": observation["action_mask"]}


def searches(observation: dict[str, Any], sees: str) -> tuple[dict[int, float], dict[int, float]]:
    """The mean chips per candidate of the fair search and of the seeing search that a keyed agent runs at this
    decision: ``pimc`` and a clairvoyant agent handed the deal, both seeded by ``decision_seed``."""
    fair = fair_part(observation)
    key = clairvoyant.decision_seed(SEED, fair["observation"], fair["action_mask"])
    seer = clairvoyant.ClairvoyantAgent(worlds=WORLDS, seed=key, sees=sees)
    seer._view = observation[clairvoyant.PRIVILEGED_KEY]
    return PIMCAgent(worlds=WORLDS, seed=key).action_values(fair), seer.action_values(fair)


def first_best(values: dict[int, float], actions: list[int]) -> int:
    best = max(values[a] for a in actions)
    return next(a for a in actions if values[a] >= best - 1e-12)


@pytest.mark.parametrize(
    ("base", "options", "phase"),
    [
        (None, {}, core.DRAW_OR_PASS),
        ("two_round_declaration", {}, core.DECLARE),
        ("dealer_picks_trump", {}, core.NAME_TRUMP),
        (None, {"second_pass_ante": 1}, core.SECOND_PASS),
    ],
)
def test_the_decision_type_is_read_from_the_observation(base: str | None, options: dict[str, int], phase: int) -> None:
    decisions = recorded_decisions(base, 4, 4, **options)
    assert phase in {p for _, p in decisions}
    for obs, p in decisions:
        assert clairvoyant.decision_types(obs["observation"]) == TYPES_OF_PHASE[p]


def test_an_at_value_is_parsed_and_a_bad_one_is_named() -> None:
    assert clairvoyant.parse_at("all") == frozenset(clairvoyant.DECISIONS)
    assert clairvoyant.parse_at("none") == frozenset()
    assert clairvoyant.parse_at("pass+draw") == {"pass", "draw"}
    for bad in ("drw", "", "pass+", "pass,draw"):
        with pytest.raises(ValueError, match="at: expected"):
            clairvoyant.parse_at(bad)
    with pytest.raises(ValueError, match="at: expected"):
        clairvoyant.make("4,at=play", 0)
    with pytest.raises(ValueError, match="z=0"):
        clairvoyant.make("4,at=pass,z=1", 0)


def test_the_keyed_agent_that_sees_nowhere_is_pimc_seeded_by_the_decision() -> None:
    for obs, _ in recorded_decisions(None, 3, 2)[::3]:
        fair = fair_part(obs)
        key = clairvoyant.decision_seed(SEED, fair["observation"], fair["action_mask"])
        assert keyed("none").act(obs) == PIMCAgent(worlds=WORLDS, seed=key).act(fair)


def test_a_pass_or_play_view_is_the_full_clairvoyant_at_the_declaration_and_fair_elsewhere() -> None:
    decisions = recorded_decisions("two_round_declaration", 3, 4)
    phases = {phase for _, phase in decisions}
    assert {core.DECLARE, core.DRAW, core.PLAY} <= phases
    for obs, phase in decisions:
        sees_pass = keyed("pass", "hands").act(obs)
        if phase == core.DECLARE:
            assert sees_pass == keyed("all", "hands").act(obs)
        else:
            assert sees_pass == keyed("none").act(obs)


@pytest.mark.parametrize("at", ["draw", "cards"])
def test_a_draw_or_a_card_play_view_sees_there_only(at: str) -> None:
    decisions = recorded_decisions("two_round_declaration", 3, 3)
    for obs, phase in decisions:
        seen = TYPES_OF_PHASE[phase] == (at,)
        assert keyed(at, "hands").act(obs) == keyed("all" if seen else "none", "hands").act(obs)


@pytest.mark.parametrize("sees", clairvoyant.SEES)
def test_a_draw_or_pass_decision_seen_in_one_part_splits_between_the_two_searches(sees: str) -> None:
    decisions = [(obs, phase) for obs, phase in recorded_decisions(None, 5, 3) if phase == core.DRAW_OR_PASS]
    split = 0
    for obs, _ in decisions:
        fair_values, seeing_values = searches(obs, sees)
        stays = [a for a in fair_values if a >= core.STAY_BASE]
        sees_pass, sees_draw = keyed("pass", sees).act(obs), keyed("draw", sees).act(obs)
        sees_both = keyed("pass+draw", sees).act(obs)
        assert sees_both == keyed("all", sees).act(obs) == first_best(seeing_values, list(seeing_values))
        fair_action = first_best(fair_values, list(fair_values))
        assert keyed("cards", sees).act(obs) == fair_action
        # pass or play: the seeing search weighs passing against the draw the fair search would make
        fair_draw = first_best(fair_values, stays)
        passes = core.PASS in seeing_values and seeing_values[core.PASS] >= seeing_values[fair_draw] - 1e-12
        assert sees_pass == (core.PASS if passes else fair_draw)
        # the draw: the fair search decides whether to play, the seeing search what to discard
        assert sees_draw == (core.PASS if fair_action == core.PASS else first_best(seeing_values, stays))
        split += sees_pass != sees_draw
    assert split, "no decision where the two views differ: the test deals prove nothing"


def test_an_unkeyed_view_of_one_part_still_plays_a_candidate_of_both_searches() -> None:
    agent = clairvoyant.make(f"{WORLDS},at=pass", SEED)
    for obs, _ in recorded_decisions(None, 3, 2):
        action = agent.act(obs)
        assert obs["action_mask"][action]


def test_decision_candidates_list_each_view_once_after_the_reference() -> None:
    specs = voi.decision_candidates(4, ["pass", "cards", "all"], ["hands", "all"])
    assert specs == [
        "clairvoyant:4,at=none,keyed=1",
        "clairvoyant:4,sees=hands,at=pass,keyed=1",
        "clairvoyant:4,sees=hands,at=cards,keyed=1",
        "clairvoyant:4,sees=hands,at=all,keyed=1",
        "clairvoyant:4,sees=all,at=pass,keyed=1",
        "clairvoyant:4,sees=all,at=all,keyed=1",
    ]
    assert voi.decision_candidates(4, ["draw"], ["hands"]) == [
        "clairvoyant:4,at=none,keyed=1",
        "clairvoyant:4,sees=hands,at=draw,keyed=1",
        "clairvoyant:4,sees=all,at=all,keyed=1",
    ]
    for spec in specs:
        voi.build(spec, 0)
    with pytest.raises(ValueError, match="reference"):
        voi.decision_candidates(4, ["none"], ["hands"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--decisions", "pass", "drw"], "--decisions: at: expected"),
        (["--decisions", "pass", "--candidates", "pimc:2"], "not both"),
        (["--decisions", "pass", "--sees", "stock"], "invalid choice"),
    ],
)
def test_the_command_refuses_a_bad_decision_value(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        voi.main([*args, "--players", "3", "--deals", "1"])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_the_command_measures_the_decisions_on_a_tiny_budget(tmp_path: Path) -> None:
    out = tmp_path / "decisions.json"
    args = ["--players", "3", "--fields", "random", "--worlds", "2", "--deals", "2", "--seed", "3"]
    assert voi.main([*args, "--decisions", "pass", "draw", "--json", str(out), "--no-progress"]) == 0
    cells = json.loads(out.read_text())["cells"]
    assert [c["candidate"] for c in cells] == voi.decision_candidates(2, ["pass", "draw"], ["hands"])
    assert cells[0]["gain_over_reference_ci95"] is None
    assert all(np.isfinite(c["gain_over_reference"]) for c in cells)
