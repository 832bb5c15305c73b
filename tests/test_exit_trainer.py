"""The expert-iteration trainer (``bourre train --trainer exit``): its targets, a two-round run end to end, resume
that repeats an uninterrupted run, one-line errors, and the search's action values it learns from."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from run_helpers import tensorboard_tags

import agents
from agents.ppo import load_policy
from agents.search.pimc import PIMCAgent
from bourre_env.bourre_v0 import raw_env
from train import cli
from train.exit.args import Args
from train.exit.trainer import ExitState, claim_run, run, search_targets

TINY = {
    "players": (3,),
    "deals": 3,
    "search": "pimc:4,rollout=ppo:{policy}",
    "eval_deals": 2,
    "search_eval_deals": 2,
    "eval_players": (3,),
    "epochs": 2,
    "minibatch_size": 16,
    "progress": False,
}


@pytest.fixture(scope="module")
def two_rounds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run(Args(run_dir=tmp_path_factory.mktemp("exit") / "run", rounds=2, **TINY))  # type: ignore[arg-type]


def test_targets_are_the_softmax_of_the_searched_values() -> None:
    values = np.full((3, 6), np.nan, np.float32)
    values[0, [1, 4]] = [1.0, 0.0]  # two candidates, one chip apart
    values[1, [0, 2, 5]] = [-2.0, -2.0, -2.0]  # a three-way tie
    values[2, 3] = 5.0  # one candidate
    targets = search_targets(values, temperature=1.0)
    e = math.e
    np.testing.assert_allclose(targets[0], [0, e / (1 + e), 0, 0, 1 / (1 + e), 0], rtol=1e-6)
    np.testing.assert_allclose(targets[1], [1 / 3, 0, 1 / 3, 0, 0, 1 / 3], rtol=1e-6)
    np.testing.assert_allclose(targets[2], [0, 0, 0, 1, 0, 0])
    colder = search_targets(values, temperature=0.5)  # one chip at temperature 0.5 is a factor e**2
    np.testing.assert_allclose(colder[0, [1, 4]], [e**2 / (1 + e**2), 1 / (1 + e**2)], rtol=1e-6)


def test_two_rounds_write_a_run_folder_a_playable_policy_and_a_report(two_rounds: Path) -> None:
    state = ExitState.load(two_rounds / "state.json")
    assert state.round == 2 and len(state.policies) == 3 and len(state.rounds) == 2
    for name in ("args.json", "commands.txt", "checkpoint.pt", "model.npz", "report.md", "report.json"):
        assert (two_rounds / name).is_file(), name
    for r in (1, 2):
        folder = two_rounds / "rounds" / f"round_{r:03d}"
        assert (folder / "data.npz").is_file() and (folder / "policy.npz").is_file()
        meta = load_policy(folder / "policy.npz").meta
        assert meta["round"] == r and meta["seed"] == 0 and "command" in meta and "wall_seconds" in meta
        row = state.rounds[r - 1]
        assert row["searched_decisions"] > 0 and np.isfinite(row["policy_loss"])
        fields = [e["field"] for e in row["evals"]]
        assert fields == ["heuristic", f"ppo:{state.policies[r - 1]}"]
        assert all(len(e["replacement_advantage_ci95_3p"]) == 2 for e in row["evals"])
        # the round's expert: the search on the network the round started from, in two fields
        assert [e["field"] for e in row["search_evals"]] == ["heuristic", f"ppo:{state.policies[r - 1]}"]
    assert [e["field"] for e in state.start_evals] == ["heuristic"]
    report = (two_rounds / "report.md").read_text()
    assert "| 0 (start) |" in report and "| 1 |" in report and "| 2 |" in report and "search vs network" in report
    search_eval = json.loads((two_rounds / "rounds" / "round_001" / "eval.json").read_text())[2]
    assert search_eval["candidate"].startswith("pimc:4,rollout=ppo:") and search_eval["deals"] == 2
    agent = agents.make(f"ppo:{two_rounds / 'model.npz'}", 0)
    env = raw_env(num_players=3)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent.act(obs)]
    tags = tensorboard_tags(two_rounds / "tb")
    assert {
        "losses/policy_loss",
        "eval/replacement_advantage_vs_heuristic_3p",
        "eval/search_replacement_advantage_vs_network_3p",
        "charts/searched_decisions",
    } <= tags


def test_resume_continues_from_the_saved_round_as_an_uninterrupted_run(two_rounds: Path, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    claim_run(Args(run_dir=folder, rounds=1, **TINY), set())  # type: ignore[arg-type]  # a run stopped at once
    assert not (folder / "state.json").exists()
    run(Args(run_dir=folder, resume=True), set())  # starts it afresh from its args.json
    assert ExitState.load(folder / "state.json").round == 1
    data = folder / "rounds" / "round_001" / "data.npz"
    written = data.stat().st_mtime_ns
    # what bourre train --trainer exit --run-dir DIR --resume --rounds 2 does
    assert cli.main(["train", "--run-dir", str(folder), "--resume", "--rounds", "2", "--no-progress"]) == 0
    state = ExitState.load(folder / "state.json")
    assert state.round == 2 and data.stat().st_mtime_ns == written
    assert len((folder / "commands.txt").read_text().splitlines()) == 2  # the afresh start and the resume
    resumed = load_policy(folder / "rounds" / "round_002" / "policy.npz")
    straight = load_policy(two_rounds / "rounds" / "round_002" / "policy.npz")
    for name, array in straight.arrays().items():
        np.testing.assert_array_equal(resumed.arrays()[name], array, err_msg=name)
    assert json.loads((folder / "args.json").read_text())["rounds"] == 1  # the saved arguments stay as they were


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--search", "ismcts:10"], "search"),
        (["--search", "pimc:4,rollout=bogus"], "search"),
        (["--search-share", "0"], "search_share"),
        (["--temperature", "nan"], "temperature"),
        (["--search-seats", "9"], "search_seats"),
        (["--init-policy", "missing.npz"], "init_policy"),
    ],
)
def test_a_bad_argument_is_a_one_line_error(
    flags: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["train", "--trainer", "exit", "--run-dir", str(tmp_path / "run"), *flags]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and named in err, err
    assert not (tmp_path / "run").exists()  # refused before the run folder is made


def test_action_values_are_what_act_maximises() -> None:
    env = raw_env(num_players=4)
    env.reset(seed=3)
    searched = 0
    while env.agents and searched < 4:
        obs = env.observe(env.agent_selection)
        values = PIMCAgent(worlds=4, seed=5, infer=0).action_values(obs)
        action = PIMCAgent(worlds=4, seed=5, infer=0).act(obs)
        if values:
            searched += 1
            assert values[action] == max(values.values())
            assert all(obs["action_mask"][a] for a in values)
        env.step(action)
    assert searched


def test_a_round_with_its_evaluations_switched_off_is_logged(tmp_path: Path) -> None:
    """``--eval-deals 0 --search-eval-deals 0``: no report to log, and the round ends as any other."""
    tiny = {**TINY, "eval_deals": 0, "search_eval_deals": 0}
    run_dir = run(Args(run_dir=tmp_path / "run", rounds=1, **tiny))  # type: ignore[arg-type]
    state = ExitState.load(run_dir / "state.json")
    assert state.round == 1 and state.rounds[0]["evals"] == [] and state.rounds[0]["search_evals"] == []
