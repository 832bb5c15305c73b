"""Deep Monte-Carlo (``bourre train --trainer dmc``, ``train.dmc``): the regression targets of a scripted deal are
its hand-computed payoffs, a tiny run beats the random agent and resumes, and bad input is refused in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.ppo import load_policy
from bourre_env import actions, core
from bourre_env.batch import BatchGame
from bourre_env.core import cards
from bourre_env.view import StateView
from tests.scripted_helpers import build_deck
from train import cli, runs, train_command
from train.dmc import trainer as dmc_trainer
from train.dmc.actors import SelfPlay
from train.dmc.args import Args
from train.dmc.trainer import main, run
from train.eval.duplicate import evaluate
from train.learning.policy_net import PolicyNet

ROOT = Path(__file__).resolve().parent.parent

# tests/test_scripted.py's 3-2-0 deal, dealer seat 2, hearts trumps (the dealer's turned 2H): seat 0 takes three
# tricks, seat 1 two, the dealer none.
HANDS = {0: "AH KH QH 2C 3C", 1: "AC KC 2D 3D 4D", 2: "4C 5C 6C 7C 2H"}
TRICKS = ("AH 2D 2H", "KH 3D 4C", "QH 4D 5C", "2C KC 6C", "AC 7C 3C")
# By hand: everyone antes 1, a pot of 3. Seat 0 takes the pot: 3 - 1 = +2. Seat 1 won tricks but not the pot: its
# ante, -1. Seat 2 played and took no trick, bourré: its ante and the pot's 3 chips, -4.
PAYOFF = {0: 2.0, 1: -1.0, 2: -4.0}


def scripted_actors(reward_scale: float) -> tuple[SelfPlay, BatchGame]:
    game = BatchGame(1, seed=0, num_players=3)
    deck = np.asarray(build_deck(game.rules, 2, HANDS), dtype=np.int64)
    core.start_episode(game.states[0], game.params, deck, 2, 0, 12345)
    game.scratch[0] = 0
    actors = SelfPlay(PolicyNet((8,)), (3,), 1, seed=0, epsilon=0.0, reward_scale=reward_scale, games=[game])
    return actors, game


def test_targets_are_each_seats_final_payoff_of_a_scripted_deal() -> None:
    actors, game = scripted_actors(reward_scale=0.5)
    plays = iter(cards.parse_many(" ".join(TRICKS)))
    made: list[tuple[int, int, int]] = []  # (decision, seat, action)
    while not actors.finished:
        view = StateView(game.states[0], 3)
        seat = view.to_act
        action = next(plays) if view.phase == core.PLAY else actions.stay("", view.hand(seat))
        assert not actors.complete[: actors.n].any()  # no target before the deal ends
        ids = actors.step_game(0, np.array([action]))
        made.append((int(ids[0]), seat, action))
    assert len(made) == 18 == actors.n == actors.finished  # three draws (everyone plays), fifteen cards
    assert [seat for _, seat, _ in made[:3]] == [0, 1, 2]
    for i, seat, action in made:
        assert actors.complete[i]
        assert actors.seats[i] == seat and actors.actions[i] == action
        assert actors.targets[i] == pytest.approx(PAYOFF[seat] * 0.5)
    assert list(actors.finished_rows()) == [i for i, _, _ in made]


def test_decisions_of_a_deal_under_way_keep_their_seats_and_get_their_targets() -> None:
    actors, game = scripted_actors(reward_scale=1.0)
    plays = iter(cards.parse_many(" ".join(TRICKS)))
    while not actors.finished:
        view = StateView(game.states[0], 3)
        act = next(plays) if view.phase == core.PLAY else actions.stay("", view.hand(view.to_act))
        actors.step_game(0, np.array([act]))
    # the row deals anew at once; two greedy decisions of the next deal, then the first deal is forgotten
    seats = [int(game.current_players()[0]), -1]
    actors.step_game(0)
    seats[1] = int(game.current_players()[0])
    actors.step_game(0)
    actors.drop_finished()
    assert actors.n == 2 and actors.finished == 0 and list(actors.seats[:2]) == seats
    while not actors.finished:
        actors.step_game(0)
    rows = actors.finished_rows()
    assert len(rows) == actors.n and rows[0] == 0
    by_seat = {int(s): {float(t) for t in actors.targets[rows][actors.seats[rows] == s]} for s in range(3)}
    assert all(len(targets) <= 1 for targets in by_seat.values())  # one payoff per seat and deal
    assert sum(next(iter(t)) for t in by_seat.values() if t) <= 0  # antes and bourré go to the pot


def tiny_args(run_dir: Path, **changes: object) -> Args:
    fields: dict[str, object] = {
        "seed": 0,
        "run_dir": run_dir,
        "players": (3,),
        "eval_players": (3,),
        "total_decisions": 30_000,
        "tables": 128,
        "hidden": (128, 64),
        "rollout_decisions": 8192,
        "update_epochs": 4,
        "eval_every": 0,
        "final_eval_deals": 30,
        "eval_workers": 1,
        "progress": False,
        **changes,
    }
    return Args(**fields)  # type: ignore[arg-type]


def test_a_tiny_run_beats_the_random_agent_and_resumes(tmp_path: Path) -> None:
    run_dir = run(tiny_args(tmp_path / "run"))
    for name in ("args.json", "checkpoint.pt", "state.json", "model.npz", "report.md", "report.json", "tb"):
        assert (run_dir / name).exists(), name
    state = json.loads((run_dir / "state.json").read_text())
    assert 30_000 <= state["num_timesteps"] < 40_000
    model = run_dir / "model.npz"
    assert load_policy(model).meta["trainer"] == "dmc"  # the ppo: loader reads it
    assert agents.make(f"ppo:{model}").name == f"ppo:{model}"
    report = evaluate(f"ppo:{model}", "random", players=(3,), deals=200, seed=41, workers=1)
    assert report.tables[0].advantage > 0, report.tables[0]
    # a dmc run folder resumes with its trainer, with or without --trainer dmc
    assert train_command.trainer_of(["--run-dir", str(run_dir), "--resume"])[0] == "dmc"
    assert main(["--run-dir", str(run_dir), "--resume", "--total-decisions", "40000", "--no-progress"]) == 0
    assert json.loads((run_dir / "state.json").read_text())["num_timesteps"] >= 40_000
    assert len((run_dir / "commands.txt").read_text().splitlines()) == 2  # the run and its resumption


def test_ctrl_c_leaves_a_checkpoint_and_the_policy_so_far(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class PressedAtOnce(runs.CtrlC):  # Ctrl-C before the first iteration
        def __enter__(self) -> runs.CtrlC:
            super().__enter__()
            self.pressed = True
            return self

    monkeypatch.setattr(dmc_trainer, "CtrlC", PressedAtOnce)
    with pytest.raises(KeyboardInterrupt):
        run(tiny_args(tmp_path / "run"))
    assert (tmp_path / "run" / "checkpoint.pt").is_file() and not (tmp_path / "run" / "report.md").exists()
    meta = load_policy(tmp_path / "run" / "model.npz").meta
    assert meta["interrupted"] is True and meta["trainer"] == "dmc" and meta["num_timesteps"] == 0
    said = capsys.readouterr().err
    assert "the policy so far" in said and "bourre train --trainer dmc --run-dir" in said and "--resume" in said


def test_help_lists_every_flag() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "train.cli", "train", "--trainer", "dmc", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "200", "PATH": ""},
    )
    assert out.returncode == 0, out.stderr
    for name in Args.__dataclass_fields__:
        assert f"--{name.replace('_', '-')}" in out.stdout, name


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--epsilon", "1.5"], "epsilon: expected a share in [0, 1], got 1.5"),
        (["--players", "9"], "players: table sizes between 2 and 8"),
        (["--total-decisions", "0"], "total_decisions: expected at least 1, got 0"),
        (["--learning-rate", "nan"], "learning_rate: expected a finite number > 0"),
        (["--hidden", "0"], "hidden: positive layer widths"),
        (["--hidden", "100000", "100000"], "--hidden 100000 100000"),
        (["--tables", "1", "--players", "3", "5"], "tables: at least one per table size"),
        (["--resume", "--overwrite"], "give one"),
        (["--resume"], "has no checkpoint.pt and args.json to resume from"),
    ],
)
def test_bad_input_is_refused_in_one_line(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--run-dir", str(tmp_path / "run"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("train: error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "run" / "args.json").exists()


def test_a_run_folder_that_is_not_empty_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert cli.main(["train", "--trainer", "dmc", "--run-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not empty" in err and "--overwrite" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_self_play_tables_play_one_deal_per_episode() -> None:
    game = BatchGame(2, seed=0, num_players=3, deals_per_episode=2)
    with pytest.raises(ValueError, match="one deal per episode"):
        SelfPlay(PolicyNet((8,)), (3,), 2, seed=0, epsilon=0.1, reward_scale=1.0, games=[game])


def test_resume_finds_a_dmc_run_by_its_arguments_and_never_opens_a_fifo(tmp_path: Path) -> None:
    import os

    (tmp_path / "args.json").write_text(json.dumps({"epsilon": 0.1, "seed": 0}))
    assert train_command.trainer_of(["--run-dir", str(tmp_path), "--resume"])[0] == "dmc"
    (tmp_path / "args.json").write_text(json.dumps({"seed": 0}))  # another trainer's arguments
    assert train_command.trainer_of(["--run-dir", str(tmp_path), "--resume"])[0] == "batched"
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "args.json")  # opening it to read would block for ever
    assert train_command.trainer_of(["--run-dir", str(fifo), "--resume"])[0] == "batched"
