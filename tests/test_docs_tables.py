"""The env docstring's tables are the documentation; these tests hold them, and the figures that the README and
the pages under ``docs/`` quote from them, to the code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
import bourre_env
from bourre_env import bourre_v0 as env_module
from bourre_env import core, limits, observation
from bourre_env.core import rules

ROOT = Path(__file__).resolve().parent.parent


def _doc_rows(section: str) -> list[str]:
    doc = env_module.__doc__ or ""
    body = doc.split(section + "\n" + "-" * len(section), 1)[1]
    return body.splitlines()


def test_observation_table_matches_fields() -> None:
    rows = []
    for line in _doc_rows("Observation"):
        m = re.match(r"^(\w+)\s+(\d+)\s+(\d+) (.+)$", line)
        if m:
            rows.append((m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)))
    assert rows == observation.table_rows()
    assert rows[-1][1] + rows[-1][2] == observation.OBS_SIZE


def test_summary_table_matches_spaces() -> None:
    doc = env_module.__doc__ or ""
    e = bourre_env.env(num_players=5)
    e.reset(seed=0)
    agent = e.agents[0]
    assert f"``Discrete({e.action_space(agent).n})``" in doc
    assert f"``({observation.OBS_SIZE},)`` float32" in doc
    assert f"``action_mask`` ``({core.NUM_ACTIONS},)``" in doc
    assert e.metadata["name"] in doc


def test_preset_table_matches_presets() -> None:
    """Every preset of ``bourre_env.core.rules.presets`` is documented, with exactly the fields it changes."""
    rows: dict[str, str] = {}
    last = ""
    lines = _doc_rows("Rule presets")
    rules_at = [i for i, line in enumerate(lines) if line.startswith("====")]
    for line in lines[rules_at[1] + 1 : rules_at[2]]:  # the table's body, between its second and last rule
        m = re.match(r"^([a-z_]+)\s+(.+)$", line)
        if m:
            last = m.group(1)
            rows[last] = m.group(2).strip()
        elif last and line.startswith(" ") and line.strip():
            rows[last] += " " + line.strip()  # a continuation line (empty first column)
    expected = {}
    for name, preset in rules.presets.items():
        changes = preset.changes_from(rules.Rules())
        expected[name] = ", ".join(f"{k}={v!r}" for k, v in changes.items()) if changes else "(none)"
    assert rows == expected


def test_action_table_matches_constants() -> None:
    rows = [line for line in _doc_rows("Actions") if re.match(r"^\d", line)]
    assert rows[0].startswith(f"0..{core.NUM_CARDS - 1} ")
    assert rows[1].startswith(f"{core.PASS} ")
    assert rows[2].startswith(f"{core.STAY_BASE}..{core.NUM_ACTIONS - 1} ")


def test_encoder_writes_each_documented_field() -> None:
    """A known position: each named piece of the vector holds what the table says."""
    deck = list(range(52))
    e = bourre_env.raw_env(num_players=4)
    e.reset(options={"deck": deck, "dealer": 0, "pot": 7})
    obs = observation.as_dict(e.observe("player_1")["observation"])
    assert np.flatnonzero(obs["hand"]).tolist() == [0, 4, 8, 12, 16]
    assert obs["trump"].tolist() == [0, 1, 0, 0]  # dealer's last card is 19 = 8D
    assert np.flatnonzero(obs["face_card"]).tolist() == [19]
    assert obs["face_status"].tolist() == [1, 0, 0]
    assert np.flatnonzero(obs["dealer"]).tolist() == [3]  # dealer seat 0 is 3 places left of seat 1
    assert np.flatnonzero(obs["to_act"]).tolist() == [0]
    assert obs["seat_present"].tolist() == [1, 1, 1, 1, 0, 0, 0, 0]
    assert obs["decision"][:4, 0].tolist() == [1, 1, 1, 1]
    assert obs["phase"].tolist() == [1, 0]
    assert obs["pot"][0] == np.float32(0.11)  # 7 carried + 4 antes
    assert np.flatnonzero(obs["num_players"]).tolist() == [2]
    e.step(53 + 0b00011)  # player_1 discards its two lowest cards
    obs = observation.as_dict(e.observe("player_1")["observation"])
    assert np.flatnonzero(obs["own_discards"]).tolist() == [0, 4]
    assert obs["discard_count"][0].tolist() == [0, 0, 1, 0, 0, 0, 0]
    assert obs["decision"][0].tolist() == [0, 0, 1]
    seen_by_2 = observation.as_dict(e.observe("player_2")["observation"])
    assert seen_by_2["discard_count"][3].tolist() == [0, 0, 1, 0, 0, 0, 0]  # player_1 is 3 places left of 2
    assert not seen_by_2["own_discards"].any()


def test_phase_table_names_the_actions_of_each_phase() -> None:
    """The Phases table lists every decision phase with the action ids its mask allows."""
    lines = _doc_rows("Phases")
    body = " ".join(line.strip() for line in lines[: lines.index("Actions")] if not line.startswith("="))
    assert f"pass ({core.PASS}) or declare play ({core.DECLARE_PLAY})" in body
    assert f"pass ({core.PASS}) or stay ({core.STAY_BASE}..{core.NUM_ACTIONS - 1})" in body
    assert f"stay ({core.STAY_BASE}..{core.NUM_ACTIONS - 1}), no pass" in body
    assert f"a card (0..{core.NUM_CARDS - 1})" in body
    assert f"pass ({core.PASS}) or stay paying ({core.SECOND_STAY})" in body
    assert f"name trump ({core.NAME_TRUMP_BASE}..{core.NAME_TRUMP_BASE + 3}: clubs, diamonds, hearts, spades)" in body


def _phase_rounds() -> dict[str, str]:
    """Phase name -> the ``decision_round`` slot the Phases table gives it ("(0s)" for none)."""
    lines = _doc_rows("Phases")
    lines = lines[: lines.index("Actions")]
    borders = [i for i, line in enumerate(lines) if line.startswith("=")]
    lines = lines[borders[0] : borders[-1]]  # the table, header included
    border = lines[0]
    first_width, second_width = (len(column) + 1 for column in border.split()[:2])
    rows = {}
    for line in lines:
        if line[:1].strip() and not line.startswith("=") and not line.startswith("phase "):
            rows[line[:first_width].strip()] = line[first_width : first_width + second_width].strip()
    return rows


def test_phase_table_rounds_are_the_encoder_slots() -> None:
    rounds = _phase_rounds()
    assert [r for r in rounds.values() if r != "(0s)"] == list(observation.ROUND_NAMES)
    assert rounds["trick play"] == "(0s)"


def _round_name(fields: dict[str, np.ndarray]) -> str:
    slots = np.flatnonzero(fields["decision_round"]).tolist()
    assert len(slots) <= 1
    return observation.ROUND_NAMES[slots[0]] if slots else "trick play"


def _round_consistent_with_mask(
    round_name: str, mask: np.ndarray, decision: np.ndarray, discard_count: np.ndarray
) -> bool:
    """What the Phases table says of a round: who acts (the acting seat's decision and count) and its actions."""
    legal = set(np.flatnonzero(mask).tolist())
    pending, playing, counted = decision[0] == 1, decision[2] == 1, discard_count.any()
    if round_name == "trump naming":
        return legal == set(range(core.NAME_TRUMP_BASE, core.NAME_TRUMP_BASE + 4))
    if round_name == "declaration":
        return pending and legal <= {core.PASS, core.DECLARE_PLAY}
    if round_name == "draw or pass":
        return pending and legal <= set(range(core.PASS, core.NUM_ACTIONS))
    if round_name == "draw":
        return playing and not counted and legal <= set(range(core.STAY_BASE, core.NUM_ACTIONS))
    if round_name == "second pass":
        return playing and bool(counted) and legal == {core.PASS, core.SECOND_STAY}
    return legal <= set(range(core.NUM_CARDS))  # trick play


@pytest.mark.parametrize("name", sorted(rules.presets))
def test_decision_round_matches_each_decision(name: str) -> None:
    """In random games of every preset, the acting seat's ``decision_round`` is the documented round."""
    seen = set()
    for seed in range(6):
        e = bourre_env.raw_env(rules=name, num_players=3 + seed % 4)
        e.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            fields = observation.as_dict(obs["observation"])
            round_name = _round_name(fields)
            assert (fields["phase"].tolist() == [0, 1]) == (round_name == "trick play")
            assert _round_consistent_with_mask(
                round_name, obs["action_mask"], fields["decision"][0], fields["discard_count"][0]
            ), (name, round_name)
            seen.add(round_name)
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    expected = {"trick play", "draw or pass" if rules.presets[name].declaration == "with_draw" else "declaration"}
    assert expected <= seen


def test_rule_fields_encode_each_preset() -> None:
    for name, preset in rules.presets.items():
        e = bourre_env.raw_env(rules=name, num_players=5)
        e.reset(seed=0)
        obs = observation.as_dict(e.observe("player_0")["observation"])
        trump_cards = ["dealer", "separate", "separate_dealer_may_take", "named_by_dealer"]
        assert np.flatnonzero(obs["trump_rule"]).tolist() == [trump_cards.index(preset.trump_card)], name
        declarations = ["with_draw", "two_rounds", "simultaneous"]
        assert np.flatnonzero(obs["declare_rule"]).tolist() == [declarations.index(preset.declaration)], name
        assert obs["ante_rule"].tolist() == [preset.play_ante, preset.ante_exemptions, preset.ante_payer == "dealer"]
        second = preset.second_pass_ante
        assert obs["entry_rule"].tolist() == [
            preset.entry_requirement == "trump_or_club",
            second is not None,
            second or 0,
        ], name
        assert obs["penalty_rule"].tolist() == [0, preset.renege_multiple, 0], name
    e = bourre_env.raw_env(illegal_action="renege", rake=0.25)
    e.reset(seed=0)
    assert observation.as_dict(e.observe("player_0")["observation"])["penalty_rule"].tolist() == [1, 1, 0.25]


def test_stayed_marks_the_seats_that_paid_to_stay() -> None:
    e = bourre_env.raw_env(rules="four_card", num_players=4)
    for seed in range(40):
        e.reset(seed=seed, options={"dealer": 3})
        rng = np.random.default_rng(seed)
        stayed: list[int] = []
        while e.agents:
            agent = e.agent_selection
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            fields = observation.as_dict(obs["observation"])
            seat = int(agent.split("_")[1])
            assert sorted((seat + k) % 4 for k in np.flatnonzero(fields["stayed"])) == sorted(stayed)
            if _round_name(fields) == "second pass":
                action = core.SECOND_STAY
                stayed.append(seat)
            else:
                action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            e.step(action)
        if len(stayed) >= 2:
            return
    raise AssertionError("no four_card deal with two players staying at the second pass in 40 seeds")


def test_readme_and_environment_page_quote_the_spaces() -> None:
    """The README's table of contents and docs/environment.md give the action space, the observation size and the
    layout version as the code has them."""
    readme = (ROOT / "README.md").read_text()
    page = " ".join((ROOT / "docs" / "environment.md").read_text().split())
    for text in (readme, page):
        assert f"`Discrete({core.NUM_ACTIONS})`" in text
        assert f"{observation.OBS_SIZE}-float" in text
    assert f"`0..{core.NUM_CARDS - 1}` play that card, `{core.PASS}` pass, `{core.STAY_BASE} + m`" in page
    assert f"(`bourre_env.observation.VERSION`, now {observation.VERSION})" in page
    assert f"after the {observation.VERSION_SIZES[1]} entries of version 1" in page
    assert f"`POT_BOUND` = 2**20 = {limits.POT_BOUND:,} chips" in page


def test_agents_page_lists_every_registered_agent() -> None:
    """docs/agents.md's table of specs names every agent ``agents.make`` builds, and only those."""
    page = (ROOT / "docs" / "agents.md").read_text()
    table = page.split("\n## The specs\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    names = {spec.split(":")[0] for row in rows for spec in re.findall(r"`([^`]+)`", row.split(" | ")[0])}
    # the agents the package registers itself (other test modules register agents of their own at import)
    shipped = subprocess.run(
        [sys.executable, "-c", "import agents; print(' '.join(agents.registered()))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout.split()
    assert names == set(shipped)
    for row in rows:
        for spec in re.findall(r"`([^`]+)`", row.split(" | ")[0]):
            if spec.split(":")[1:] in ([], ["tight"], ["loose"]):
                assert agents.make(spec, 0).act  # the plain names and the named variants build
