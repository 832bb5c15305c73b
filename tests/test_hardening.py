"""Adversarial probes of the public API: each check here was a crash, a silent wrong answer or a traceback once."""

from __future__ import annotations

import io
import json
import math
import pathlib
import re
import sys
import zipfile
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import random_game

import agents
import bourre_env
from agents.ppo import load_policy, save_policy
from bourre_env import batch, core, limits, observation
from bourre_env import bourre_v0 as env_module
from bourre_env.batch import BatchGame
from bourre_env.core.rules import Rules, presets
from bourre_env.single_agent import BourreSingleAgentEnv
from train import cli
from train.run_dir import claim_run_dir

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------- caller's buffers
@pytest.mark.parametrize("method", ["legal_masks", "observations"])
def test_batch_out_buffers_are_checked_before_compiled_code_writes(method: str) -> None:
    g = BatchGame(4, seed=0)
    width, dtype = (core.NUM_ACTIONS, np.int8) if method == "legal_masks" else (observation.OBS_SIZE, np.float32)
    fill = getattr(g, method)
    bad = {
        "too few rows": np.zeros((1, width), dtype),
        "too narrow": np.zeros((4, width - 1), dtype),
        "flat": np.zeros(4 * width, dtype),
        "wrong dtype": np.zeros((4, width), np.float64 if dtype == np.int8 else np.int8),
        "not contiguous": np.zeros((4, width), dtype, order="F"),
        "a strided view": np.zeros((8, width), dtype)[::2],
        "not an array": [[0] * width] * 4,
    }
    for out in bad.values():
        with pytest.raises(ValueError, match=method):
            fill(out=out)
    frozen = np.zeros((4, width), dtype)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        fill(out=frozen)
    out = np.full((4, width), 7, dtype)
    assert fill(out=out) is out
    assert np.array_equal(out, fill())


# ---------------------------------------------------------------------------- the pot bound
def test_reset_refuses_a_pot_above_the_bound() -> None:
    env = bourre_env.raw_env(num_players=4)
    env.reset(seed=0, options={"pot": limits.POT_BOUND})
    assert env.state_vector[core.S_POT] == limits.POT_BOUND + 4  # the antes come on top
    for pot in (limits.POT_BOUND + 1, 2**63 - 1, -1, 1.0, True):
        with pytest.raises(ValueError, match="pot must be an integer in 0..1048576"):
            env.reset(seed=0, options={"pot": pot})


def test_aec_episode_is_truncated_when_the_pot_passes_the_bound() -> None:
    """Many deals of random play at 5 players: once wrapped negative near deal 64 (NaN in the observation). Now the
    episode ends truncated after the settlement that takes the pot past the bound, with the deal's rewards paid."""
    env = bourre_env.env(num_players=5, deals_per_episode=10_000)
    env.reset(seed=1)
    raw = env.unwrapped
    space = env.observation_space("player_0")["observation"]
    rng = np.random.default_rng(0)
    totals = dict.fromkeys(raw.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        assert space.contains(obs["observation"])
        totals[agent] += reward
        if terminated or truncated:
            assert not terminated and truncated
            assert info == {"truncation_reason": "pot_bound", "pot": int(raw.state_vector[core.S_POT])}
            env.step(None)
            continue
        assert 0 <= raw.state_vector[core.S_POT] <= limits.POT_BOUND + 5  # no deal starts above the bound
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    s = raw.state_vector
    assert s[core.S_POT] > limits.POT_BOUND and s[core.S_DEALS_DONE] < 10_000
    assert s[core.S_CHIPS : core.S_CHIPS + 5].sum() + s[core.S_POT] == 0  # chips conserved, nothing wrapped
    assert [totals[a] for a in raw.possible_agents] == s[core.S_CHIPS : core.S_CHIPS + 5].tolist()


def test_single_agent_view_reports_the_truncation() -> None:
    env = BourreSingleAgentEnv(opponents="random", agent_factory=agents.make, num_players=5, deals_per_episode=10_000)
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(1)
    terminated = truncated = False
    while not (terminated or truncated):
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        assert env.observation_space.contains(obs) and math.isfinite(reward)
    assert truncated and not terminated
    assert info["truncation_reason"] == limits.TRUNCATION_REASON and info["pot"] > limits.POT_BOUND
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_batch_rows_are_truncated_and_restarted() -> None:
    g = BatchGame(32, seed=2, num_players=5, deals_per_episode=10_000)
    rng = np.random.default_rng(3)
    seen = 0
    while seen < 3:
        rewards, done = g.step(np.array([rng.choice(np.flatnonzero(m)) for m in g.legal_masks()]))
        assert not (g.truncated & ~done).any()
        for b in np.flatnonzero(g.truncated):
            seen += 1
            assert g.states[b, core.S_DEALS_DONE] == 0 and g.states[b, core.S_POT] <= 5  # a new episode
            assert rewards[b].sum() != 0 and np.array_equal(rewards[b], np.round(rewards[b]))
        assert (g.states[:, core.S_POT] >= 0).all()


def test_batch_random_play_of_many_deals_never_overflows() -> None:
    """About 250 deals per row of compiled random play at 5 players: every pot stays in range, every observation
    finite (this is where the pot used to wrap round, near deal 64)."""
    g = BatchGame(16, seed=4, num_players=5, deals_per_episode=10**9)
    g.random_play(8_000)
    assert g.states[:, core.S_DEALS_DONE].max() < 100  # every row was truncated and restarted on the way
    pots = g.states[:, core.S_POT]
    assert (pots >= 0).all() and (pots <= limits.POT_BOUND + 5).all()
    assert np.isfinite(g.observations()).all()


def test_rules_that_could_leave_exact_integers_are_refused() -> None:
    refused = [
        ({"rake": Fraction(10**17 - 1, 10**17)}, "rake: .* is the fraction 99999999999999999/10"),
        ({"play_ante": 10**15}, "play_ante=1000000000000000"),
        ({"illegal_action": "renege", "renege_multiple": 10**12}, "renege_multiple=1000000000000"),
    ]
    for options, message in refused:
        for build in (bourre_env.env, lambda **o: BatchGame(1, **o), lambda **o: BourreSingleAgentEnv("random", **o)):
            with pytest.raises(ValueError, match=message):
                build(**options)
    bourre_env.env(rake=Fraction(1, 3))  # the exact third is fine
    assert Rules(rake=1 / 3).rake_fraction == Fraction(1, 3)  # and so is the float, read as the nearest simple fraction
    bourre_env.env(rake=1 / 3)
    bourre_env.env(rake=0.15, illegal_action="renege", renege_multiple=2)


@pytest.mark.parametrize("name", list(presets))
def test_the_bound_keeps_every_preset_exact(name: str) -> None:
    """What bourre_env.limits promises, for every published rule set at the largest table with reneges: one deal
    from a pot at the bound stays far from int64 overflow, and any single payment is exact in float32."""
    rules = presets[name].replace(num_players=8, illegal_action="renege")
    limits.check_rules(rules)
    antes = 8 * (1 + rules.play_ante + (rules.second_pass_ante or 0))
    stake = limits.POT_BOUND + antes
    assert stake * (1 + 8 * rules.renege_multiple) < 2**63 // 2**10
    assert 15 * stake + antes < 2**24  # a payment at renege_multiple 15: below the float32 limit of exact integers
    pot_entry = np.float32(np.arange(limits.POT_BOUND - 1000, limits.POT_BOUND + 1) / 100.0)
    assert len(np.unique(pot_entry)) == 1001  # every pot below the bound has its own observation value


def test_the_pot_bound_is_documented_with_its_value() -> None:
    doc = env_module.__doc__ or ""
    assert f"``POT_BOUND`` = 2**20 = {limits.POT_BOUND:,}" in " ".join(doc.split())
    assert limits.POT_BOUND == 2**20
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"{limits.POT_BOUND:,} chips" in readme


# ---------------------------------------------------------------------------- BatchGame.step
def test_batch_step_is_all_or_nothing() -> None:
    g = BatchGame(4, seed=0)
    states, rngs = g.states.copy(), g._rngs.copy()
    actions = g.legal_masks().argmax(axis=1)
    actions[2] = 0  # a card in the draw phase
    with pytest.raises(ValueError, match=r"illegal action 0 in row 2 \(no row was stepped\)"):
        g.step(actions)
    assert np.array_equal(g.states, states) and np.array_equal(g._rngs, rngs)
    actions[2] = core.PASS
    g.step(actions)
    assert not np.array_equal(g.states, states)


@pytest.mark.parametrize(
    "actions",
    [
        np.full(4, 52.0),
        np.full(4, 52.9),
        np.ones(4, dtype=bool),
        np.full((4, 1), 52),
        np.full(3, 52),
        np.full(5, 52),
        [52.0] * 4,
        np.array(["52"] * 4),
        52,
    ],
)
def test_batch_step_refuses_actions_of_the_wrong_shape_or_type(actions: Any) -> None:
    g = BatchGame(4, seed=0)
    states = g.states.copy()
    with pytest.raises(ValueError, match="actions"):
        g.step(actions)
    assert np.array_equal(g.states, states)


def test_batch_step_takes_any_integer_array() -> None:
    for dtype in (np.int8, np.uint16, np.int32, np.uint64):
        g = BatchGame(3, seed=1)
        g.step(g.legal_masks().argmax(axis=1).astype(dtype))
    g = BatchGame(3, seed=1)
    g.step([int(a) for a in g.legal_masks().argmax(axis=1)])


@pytest.mark.parametrize(
    "rules",
    [
        Rules(num_players=5),
        Rules(num_players=4, illegal_action="renege"),
        presets["four_card"].replace(num_players=3, illegal_action="renege"),
        presets["dealer_picks_trump"],
        presets["simultaneous_declaration"],
        presets["separate_trump_card_dealer_may_take"],
    ],
)
def test_batch_legality_check_agrees_with_core_step(rules: Rules) -> None:
    """The all-or-nothing pass asks ``batch._accepts`` before stepping; it must accept exactly what ``core.step``
    takes, reneges included, for every action id and a few outside the range."""
    rng = np.random.default_rng(5)
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    for k, (s, p) in enumerate(random_game(rules.replace(deals_per_episode=3), rng)):
        if k % 3:
            continue
        for action in range(-1, core.NUM_ACTIONS + 1):
            scratch = core.new_scratch()
            assert batch._accepts(s, p, action, mask, scratch) == core.step(s.copy(), p, action), (
                action,
                s[core.S_PHASE],
            )


# ---------------------------------------------------------------------------- run folders
def test_a_new_run_needs_an_empty_run_folder(tmp_path: Path) -> None:
    outputs = ("model.npz", "tb")
    claim_run_dir(tmp_path / "new" / "run", resume=False, overwrite=False, outputs=outputs)  # absent: made
    assert (tmp_path / "new" / "run").is_dir()
    (tmp_path / "new" / "run").rmdir()
    (tmp_path / "new").rmdir()
    claim_run_dir(tmp_path, resume=False, overwrite=False, outputs=outputs)  # empty: fine
    (tmp_path / "model.npz").write_text("old")
    (tmp_path / "tb").mkdir()
    (tmp_path / "tb" / "events").write_text("old")
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not empty .*--overwrite"):
        claim_run_dir(tmp_path, resume=False, overwrite=False, outputs=outputs)
    claim_run_dir(tmp_path, resume=True, overwrite=False, outputs=outputs)  # resuming needs the old files
    assert (tmp_path / "model.npz").exists()
    with pytest.raises(ValueError, match="give one"):
        claim_run_dir(tmp_path, resume=True, overwrite=True, outputs=outputs)
    claim_run_dir(tmp_path, resume=False, overwrite=True, outputs=outputs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # the run's outputs only
    with pytest.raises(ValueError, match="is a file"):
        claim_run_dir(tmp_path / "notes.txt", resume=False, overwrite=False, outputs=outputs)


def test_bourre_train_refuses_a_finished_run_without_its_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from train.sb3 import trainer as sb3_trainer

    (tmp_path / "model.npz").write_text("the earlier run's model")
    (tmp_path / "args.json").write_text("{}")
    assert cli.main(["train", "--run-dir", str(tmp_path), "--no-progress"]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert (tmp_path / "model.npz").read_text() == "the earlier run's model"
    args, given = sb3_trainer.parse_args(["--overwrite", "--seed", "1"])
    assert args.overwrite and given == {"seed"}
    assert {"model.npz", "args.json", "report.md", "checkpoint.zip", "tb"} <= set(sb3_trainer.RUN_OUTPUTS)


# ---------------------------------------------------------------------------- policy files
def _policy(tmp_path: Path) -> Path:
    return save_policy(tmp_path / "p.npz", load_policy(agents.ppo.SHIPPED_MODEL))


def _rewrite(path: Path, **changes: Any) -> None:
    with np.load(path, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    np.savez(path, **{**arrays, **changes})


def test_policy_weights_of_a_wrong_dtype_are_a_value_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _policy(tmp_path)
    with np.load(path) as data:
        weight = data["action.weight"]
    for bad in (weight.astype(np.int32), weight.astype(str), weight.astype(np.complex64), weight > 0):
        _rewrite(path, **{"action.weight": bad})
        with pytest.raises(ValueError, match="action has weight of dtype"):
            load_policy(path)
    assert (
        cli.main(
            ["eval", "--candidate", f"ppo:{path}", "--deals", "1", "--no-progress", "--out", str(tmp_path / "out")]
        )
        == 2
    )
    assert "floating-point" in capsys.readouterr().err


def test_a_tiny_policy_file_claiming_a_huge_array_is_refused_before_allocating(tmp_path: Path) -> None:
    path = tmp_path / "forged.npz"
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (2**40, 2**10)})
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("layers.0.weight.npy", header.getvalue())  # the header (magic included), no data
    assert path.stat().st_size < 1000
    with pytest.raises(ValueError, match="claims .* but holds 0 bytes"):
        load_policy(path)


def test_policy_files_larger_than_the_cap_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _policy(tmp_path)
    monkeypatch.setattr(agents.ppo, "MAX_POLICY_BYTES", 10_000)
    with pytest.raises(ValueError, match="MAX_POLICY_BYTES"):
        load_policy(path)


# ---------------------------------------------------------------------------- resuming a run
TINY = {
    "num_envs": 1,
    "n_steps": 64,
    "batch_size": 64,
    "n_epochs": 1,
    "hidden": [8],
    "imitation_decisions": 0,
    "eval_every": 0,
    "total_timesteps": 128,
    "final_eval_deals": 2,
    "eval_workers": 1,
    "progress": False,
}


def _run_folder(tmp_path: Path, checkpoint: bytes | None = None, **changes: Any) -> Path:
    from train.sb3.trainer import Args, RunState

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    args = {**Args(run_dir=run_dir).to_json(), **TINY, **changes}
    (run_dir / "args.json").write_text(json.dumps(args))
    RunState(num_timesteps=64).save(run_dir / "state.json")
    (run_dir / "checkpoint.zip").write_bytes(checkpoint or b"")
    return run_dir


def _checkpoint_holding(obj: Any, tmp_path: Path) -> bytes:
    import torch

    buffer = io.BytesIO()
    torch.save({"weights": obj}, buffer)
    path = tmp_path / "forged.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("policy.pth", buffer.getvalue())
    return path.read_bytes()


def test_resume_refuses_a_checkpoint_holding_objects(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = _run_folder(tmp_path, _checkpoint_holding(pathlib.PurePosixPath("x"), tmp_path))
    assert cli.main(["train", "--run-dir", str(run_dir), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "checkpoint.zip: holds objects other than tensors" in err
    assert "weights_only" not in err and "Traceback" not in err


def test_resume_refuses_a_checkpoint_of_another_network(tmp_path: Path) -> None:
    from train.sb3.trainer import Args, build_model, make_vec_env, run

    run_dir = _run_folder(tmp_path)
    args = Args.from_json({**json.loads((run_dir / "args.json").read_text()), "hidden": [16]})
    env = make_vec_env(args)
    build_model(args, env, tmp_path / "other").save(run_dir / "checkpoint.zip")
    env.close()
    with pytest.raises(ValueError, match="checkpoint.zip: does not fit the network of args.json"):
        run(Args(run_dir=run_dir, resume=True), set())


def test_resume_keeps_the_network_of_the_run(tmp_path: Path) -> None:
    from train.sb3.trainer import Args, resolve_resume

    run_dir = _run_folder(tmp_path)
    with pytest.raises(ValueError, match="--hidden 32 32: the run in .* has hidden layers 8"):
        resolve_resume(Args(run_dir=run_dir, resume=True, hidden=(32, 32)), {"hidden"})
    assert resolve_resume(Args(run_dir=run_dir, resume=True), set()).hidden == (8,)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"seed": "zero"}', "seed is 'zero', expected int"),
        ('{"hidden": 5}', "hidden is 5"),
        ('{"learning_rate": true}', "learning_rate is True"),
        ('{"run_dir": 3}', "run_dir is 3"),
        ('{"total_timesteps": 0}', "total_timesteps: expected at least 1"),
        ('{"layers": 3}', "unknown field(s) ['layers']"),
        ("[1, 2]", "expected a JSON object"),
        ("{not json", "cannot read the run's arguments"),
    ],
)
def test_bad_args_json_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str) -> None:
    run_dir = _run_folder(tmp_path)
    (run_dir / "args.json").write_text(text)
    assert cli.main(["train", "--run-dir", str(run_dir), "--resume"]) == 2
    err = capsys.readouterr().err
    assert f"{run_dir / 'args.json'}: " in err and message in err, err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"num_timesteps": "64"}', "num_timesteps is '64'"),
        ('{"snapshots": "a.npz"}', "snapshots is 'a.npz'"),
        ('{"evals": [1]}', "evals is [1]"),
        ('{"imitation": {"accuracy": "high"}}', "imitation is"),
        ('{"steps": 1}', "unknown field"),
        ("", "cannot read the run state"),
    ],
)
def test_bad_state_json_is_named(tmp_path: Path, text: str, message: str) -> None:
    from train.sb3.trainer import Args, run

    run_dir = _run_folder(tmp_path)
    (run_dir / "state.json").write_text(text)
    with pytest.raises(ValueError, match=f"state.json: .*{re.escape(message)}"):
        run(Args(run_dir=run_dir, resume=True), set())


# ---------------------------------------------------------------------------- bourre eval and play
@pytest.mark.parametrize("what", [["--candidate", "random"], ["--tournament", "random", "random"]])
def test_eval_out_on_an_existing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], what: list[str]) -> None:
    target = tmp_path / "results"
    target.write_text("keep me")
    assert cli.main(["eval", *what, "--deals", "1", "--no-progress", "--out", str(target)]) == 2
    assert "is a file" in capsys.readouterr().err and target.read_text() == "keep me"


def test_play_refuses_rules_that_contradict_its_own_options(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert cli.main(["play", "--seats", "human,random,random", "--rule", "num_players=5"]) == 2
    assert "--rule num_players=5 contradicts --seats" in capsys.readouterr().err
    assert cli.main(["play", "--seats", "human,random", "--deals", "2", "--rule", "deals_per_episode=3"]) == 2
    assert "contradicts --deals" in capsys.readouterr().err
    assert cli.main(["play", "--seats", "human,random,random", "--rule", "num_players=3", "--seed", "0"]) == 0


# ---------------------------------------------------------------------------- minor input checks
@pytest.mark.parametrize("first", [True, 0.0, np.float64(0), np.bool_(False), 0.5, "XX"])
def test_deck_cards_must_be_integer_ids_or_card_strings(first: Any) -> None:
    env = bourre_env.raw_env(num_players=4)
    with pytest.raises(ValueError, match="bad deck"):
        env.reset(options={"deck": [first, *range(1, 52)]})
    env.reset(options={"deck": np.arange(52, dtype=np.int16)})  # numpy integers are ids
    with pytest.raises(ValueError, match="bad deck"):
        env.reset(options={"deck": np.arange(52, dtype=np.float64)})


def test_single_agent_refuses_opponent_actions_that_are_not_integers() -> None:
    def stays_pat(obs: dict[str, np.ndarray]) -> Any:
        return np.int64(int(np.flatnonzero(obs["action_mask"])[-1]))

    # dealer 2 is the learner: seat 0, an opponent, decides first
    for bad in (53.9, 53.0, True, "53", np.array([53.0])):
        env = BourreSingleAgentEnv(lambda obs, bad=bad: bad, num_players=3, learner_seat=2)
        with pytest.raises(ValueError, match=r"opponent at seat 0 .* expected an integer action id"):
            env.reset(seed=0, options={"dealer": 2})
    for good in (stays_pat, lambda obs: np.array([stays_pat(obs)]), lambda obs: int(stays_pat(obs))):
        BourreSingleAgentEnv(good, num_players=3, learner_seat=2).reset(seed=0, options={"dealer": 2})


# ---------------------------------------------------------------------------- privileged views
def test_privileged_views_are_documented_as_such() -> None:
    doc = " ".join((env_module.__doc__ or "").split())
    section = doc.split("Privileged access -----------------", 1)[1]
    for name in ("hand(agent)", "state_vector", "np_random"):
        assert f"``{name}``" in section
    assert "Privileged" in (bourre_env.raw_env.hand.__doc__ or "")
    assert "privileged" in (batch.__doc__ or "") and "privileged" in (bourre_env.single_agent.__doc__ or "")
    readme = (ROOT / "README.md").read_text()
    assert "Privileged access" in readme and "`state_vector`" in readme and "`np_random`" in readme
