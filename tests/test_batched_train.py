"""The batched trainer: its transitions against the AEC env, GAE, the sparse network, resume, runs end to end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from run_helpers import bourre_train, tensorboard_tags

import agents
from agents.ppo import load_policy, save_policy
from bourre_env import core
from bourre_env.batch import BatchGame
from bourre_env.bourre_v0 import raw_env
from bourre_env.observation import OBS_SIZE
from train.learning import checkpoint
from train.learning.policy_net import PolicyNet, gather_batch, masked_logits, sample_actions, sparse_rows
from train.ppo import trainer
from train.ppo.rollout import LEARNER, SNAPSHOT, Collector, SeatPool, Transitions, gae
from train.ppo.trainer import Args, parse_args, resolve_resume, run

ROOT = Path(__file__).resolve().parent.parent
TINY = {
    "tables": 16,
    "rollout_decisions": 256,
    "minibatch_size": 128,
    "imitation_decisions": 600,
    "imitation_epochs": 1,
    "hidden": (32, 16),
    "snapshot_every": 512,
    "eval_every": 1024,
    "eval_deals": 4,
    "checkpoint_every": 512,
    "final_eval_deals": 4,
    "eval_workers": 1,
    "progress": False,
}
TINY_FLAGS = [
    "--tables",
    "16",
    "--rollout-decisions",
    "256",
    "--minibatch-size",
    "128",
    "--imitation-decisions",
    "600",
    "--imitation-epochs",
    "1",
    "--hidden",
    "32",
    "16",
    "--snapshot-every",
    "512",
    "--eval-every",
    "1024",
    "--eval-deals",
    "4",
    "--checkpoint-every",
    "512",
    "--final-eval-deals",
    "4",
    "--eval-workers",
    "1",
    "--no-progress",
]


# ---------------------------------------------------------------------------- transitions against the AEC env
def dense_observation(t: Transitions, i: int) -> np.ndarray:
    out = np.zeros(OBS_SIZE, np.float32)
    lo, hi = t.ptr[i], t.ptr[i + 1]
    out[t.idx[lo:hi].astype(np.int64)] = t.val[lo:hi]
    return out


class Replay:
    """Plays every table's moves again in the AEC env, from the state the batch dealt, and works out what the
    learner's transitions must be."""

    def __init__(self, collector: Collector, scale: float) -> None:
        self.collector, self.scale = collector, scale
        self.starts = [[[g.states[b].copy()] for b in range(g.batch_size)] for g in collector.games]
        self.envs: dict[tuple[int, int], Any] = {}
        self.last: dict[tuple[int, int, int], int] = {}  # (game, table, seat) -> the seat's last decision
        self.expected: dict[int, dict[str, Any]] = {}  # decision index -> what it must hold
        self.deals_paid_on_another_seats_move = 0

    def env(self, k: int, b: int) -> Any:
        if (k, b) not in self.envs:
            env = raw_env(num_players=self.collector.games[k].num_players)
            env.reset(seed=0)
            start = self.starts[k][b].pop(0)
            env.state_vector[:] = start  # the very deal the batch dealt (deck, dealer, reshuffle seed)
            env.agent_selection = env.possible_agents[int(start[core.S_CUR])]
            self.envs[k, b] = env
        return self.envs[k, b]

    def step(self, k: int) -> None:
        game = self.collector.games[k]
        rec = self.collector.step_game(k)
        ids = dict(zip(rec.learner_rows.tolist(), rec.learner_ids.tolist(), strict=True))
        t = self.collector.transitions
        for b in range(game.batch_size):
            env = self.env(k, b)
            seat = int(rec.seats[b])
            assert env.state_vector[core.S_CUR] == seat
            agent = env.possible_agents[seat]
            seen = env.observe(agent)
            action = int(rec.actions[b])
            assert seen["action_mask"][action] == 1
            if rec.owners[b] == LEARNER:
                i = ids[b]
                np.testing.assert_array_equal(dense_observation(t, i), seen["observation"])
                np.testing.assert_array_equal(t.masks[i], seen["action_mask"].astype(bool))
                assert t.actions[i] == action
                previous = self.last.get((k, b, seat))
                if previous is not None:
                    self.expected[previous]["next"] = i
                self.expected[i] = {"reward": 0.0, "done": False, "next": -1}
                self.last[k, b, seat] = i
            else:
                assert b not in ids
            env.step(action)
            if rec.done[b]:
                assert env.state_vector[core.S_PHASE] == core.GAME_OVER
                chips = np.array([env.rewards[a] for a in env.possible_agents], np.float32)
                np.testing.assert_array_equal(rec.rewards[b], chips)
                for q in range(game.num_players):
                    last = self.last.pop((k, b, q), None)
                    if last is not None:
                        self.expected[last].update(reward=float(np.float32(chips[q] * self.scale)), done=True)
                        if q != seat:
                            self.deals_paid_on_another_seats_move += 1
                del self.envs[k, b]
                self.starts[k][b].append(game.states[b].copy())
            else:
                assert not np.any(rec.rewards[b])

    def check(self) -> None:
        t = self.collector.transitions
        assert sorted(self.expected) == list(range(t.n))
        for i, e in self.expected.items():
            assert (t.rewards[i], t.done[i], t.next[i]) == (pytest.approx(e["reward"]), e["done"], e["next"]), i

    def renumber(self, new_index: np.ndarray) -> None:
        self.expected = {
            int(new_index[i]): {**e, "next": int(new_index[e["next"]]) if e["next"] >= 0 else -1}
            for i, e in self.expected.items()
            if new_index[i] >= 0
        }
        self.last = {key: int(new_index[i]) for key, i in self.last.items()}
        assert all(i >= 0 for i in self.last.values())


def test_learner_transitions_equal_an_aec_replay_of_the_same_deals(tmp_path: Path) -> None:
    net = PolicyNet((16,))
    snapshot = save_policy(tmp_path / "snapshot.npz", PolicyNet((8,)).policy_weights({}))
    collector = Collector(net, players=(3, 5), tables=8, pool=SeatPool(1.0, 1.0, 0.5, 1.0), seed=3, reward_scale=0.1)
    collector.set_snapshots([str(snapshot)])
    replay = Replay(collector, 0.1)
    owners_seen: set[int] = set()
    for _ in range(40):
        for k in range(len(collector.games)):
            replay.step(k)
        owners_seen |= {int(o) for o in np.concatenate([o.ravel() for o in collector.owners])}
    replay.check()
    # An update's worth: the decisions of finished deals go, those of deals under way stay, renumbered
    complete = collector.complete(1.0, 0.95)[2]
    assert 0 < complete.sum() < collector.transitions.n
    replay.renumber(collector.carry_over(complete))
    assert collector.transitions.stale[: collector.transitions.n].all()
    replay.check()
    for _ in range(40):
        for k in range(len(collector.games)):
            replay.step(k)
    replay.check()
    assert replay.deals_paid_on_another_seats_move > 0  # rewards that arrive on someone else's move
    assert {LEARNER, 1, 2, SNAPSHOT} <= owners_seen


def test_seat_pool_draws() -> None:
    rng = np.random.default_rng(0)
    owners = SeatPool(0.0, 1.0, 0.0, 1.0).draw(rng, 2000, 5, snapshots=0)
    assert ((owners == LEARNER).sum(axis=1) == 1).all()  # one learner seat per table, the others heuristic
    assert set(np.unique(owners)) == {LEARNER, 1}
    owners = SeatPool(0.0, 0.0, 0.0, 1.0).draw(rng, 2000, 5, snapshots=3)
    assert set(np.unique(owners)) == {LEARNER, SNAPSHOT, SNAPSHOT + 1, SNAPSHOT + 2}
    assert (SeatPool(1.0, 0.0, 0.0, 0.0).draw(rng, 50, 4, snapshots=0) == LEARNER).all()  # pure self-play
    with pytest.raises(ValueError, match="pool weights"):
        SeatPool(-1.0, 1.0, 0.0, 0.0)


def test_snapshot_slots(tmp_path: Path) -> None:
    a, b, c = (str(save_policy(tmp_path / f"{name}.npz", PolicyNet((8,)).policy_weights({}))) for name in "abc")
    collector = Collector(PolicyNet((8,)), players=(4,), tables=3, pool=SeatPool(), seed=0, reward_scale=0.1)
    collector.set_snapshots([a, b])
    collector.owners[0][:] = [[LEARNER, SNAPSHOT, SNAPSHOT + 1, 2]] * 3
    collector.set_snapshots([b, c])  # c takes a's slot: tables that held a play c for the rest of the deal
    assert collector.snapshot_paths == [c, b]
    collector.set_snapshots([c])  # b's slot closes: its seats go to the heuristic, c moves to slot 0
    assert collector.snapshot_paths == [c] and len(collector.snapshots) == 1
    assert collector.owners[0].tolist() == [[LEARNER, SNAPSHOT, 1, 2]] * 3


# ---------------------------------------------------------------------------- GAE
def test_gae_along_hand_made_trajectories() -> None:
    # Three seats' trajectories interleaved: A = 0 -> 2 -> 4 (done, +2), B = 1 -> 3 (done, -1), C = 5 -> 6 (under way)
    next_ = np.array([2, 3, 4, -1, -1, 6, -1])
    done = np.array([0, 0, 0, 1, 1, 0, 0], bool)
    rewards = np.array([0, 0, 0, -1, 2, 0, 0], np.float32)
    values = np.array([0.5, 0.1, 0.7, -0.2, 1.5, 0.3, 0.4], np.float32)
    gamma, lam = 0.9, 0.8
    advantages, returns, complete = gae(next_, done, rewards, values, gamma, lam)

    def by_hand(trajectory: list[int]) -> list[float]:
        """A_t = sum_k (gamma lam)^k delta_{t+k}, delta_t = r_t + gamma V_{t+1} - V_t (V after the last is 0)."""
        v = [float(values[i]) for i in trajectory] + [0.0]
        deltas = [float(rewards[i]) + gamma * v[k + 1] - v[k] for k, i in enumerate(trajectory)]
        return [sum((gamma * lam) ** j * d for j, d in enumerate(deltas[k:])) for k in range(len(trajectory))]

    for trajectory in ([0, 2, 4], [1, 3]):
        np.testing.assert_allclose(advantages[trajectory], by_hand(trajectory), rtol=1e-6)
    assert complete.tolist() == [True] * 5 + [False] * 2
    assert advantages[5] == advantages[6] == 0.0
    np.testing.assert_allclose(returns[:5], advantages[:5] + values[:5], rtol=1e-6)
    # gamma = lam = 1: every advantage is the trajectory's reward minus the decision's value (Monte Carlo)
    advantages, returns, _ = gae(next_, done, rewards, values, 1.0, 1.0)
    np.testing.assert_allclose(advantages[:5], np.array([2, -1, 2, -1, 2]) - values[:5], rtol=1e-6)
    np.testing.assert_allclose(returns[:5], [2, -1, 2, -1, 2], rtol=1e-6)


# ---------------------------------------------------------------------------- the network
def test_sparse_network_equals_its_dense_form_and_the_exported_policy(tmp_path: Path) -> None:
    torch.manual_seed(0)
    net = PolicyNet((24, 12))
    game = BatchGame(64, seed=1, num_players=6)
    obs, masks = game.observations(), game.legal_masks()
    idx, val, counts = sparse_rows(obs, np.arange(64))
    ptr = np.concatenate([[0], np.cumsum(counts)])
    logits, values = net(gather_batch(ptr, idx, val, np.arange(64), "cpu", grad=True))
    weights = torch.randn_like(logits)
    (logits * weights).sum().add(values.sum()).backward()
    sparse_grad = net.first_weight.grad.clone()

    net.zero_grad()
    x = torch.from_numpy(obs)
    h = torch.relu(x @ net.first_weight + net.first_bias)
    for layer in net.layers:
        h = torch.relu(layer(h))
    dense_logits, dense_values = net.actor(h), net.critic(h).squeeze(-1)
    (dense_logits * weights).sum().add(dense_values.sum()).backward()
    torch.testing.assert_close(logits, dense_logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(sparse_grad, net.first_weight.grad, rtol=1e-5, atol=1e-6)

    path = save_policy(tmp_path / "p.npz", net.policy_weights({"test": True}))
    policy = load_policy(path)
    np.testing.assert_allclose(policy.logits(obs), logits.detach().numpy(), rtol=1e-4, atol=1e-5)
    player = agents.make(f"ppo:{path}")
    legal = masks[0].astype(bool)
    assert legal[player.act({"observation": obs[0], "action_mask": masks[0]})]
    again = PolicyNet.from_policy_weights(policy)
    torch.testing.assert_close(
        again(gather_batch(ptr, idx, val, np.arange(64), "cpu", grad=False))[0], logits, rtol=1e-5, atol=1e-5
    )


def test_sampled_actions_follow_the_masked_softmax() -> None:
    generator = torch.Generator()
    generator.manual_seed(0)
    logits = torch.tensor([[0.5, 2.0, -1.0, 0.0, 1.0], [3.0, 0.0, 0.0, 0.0, 9.0]]).repeat(20000, 1)
    legal = torch.tensor([[True, False, True, True, False], [False, False, False, True, False]]).repeat(20000, 1)
    actions = sample_actions(masked_logits(logits, legal), legal, generator)
    assert legal[torch.arange(len(actions)), actions].all()
    first = torch.bincount(actions[0::2], minlength=5).double() / 20000
    expected = torch.softmax(torch.tensor([0.5, -1.0, 0.0], dtype=torch.float64), 0)
    torch.testing.assert_close(first[[0, 2, 3]], expected, atol=0.015, rtol=0)
    assert (actions[1::2] == 3).all()  # a single legal action, however low its logit


# ---------------------------------------------------------------------------- runs
def test_resume_continues_the_step_count_and_the_optimizer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    run(Args(run_dir=run_dir, total_timesteps=512, seed=3, **TINY))  # type: ignore[arg-type]
    saved_steps = json.loads((run_dir / "state.json").read_text())["num_timesteps"]
    assert 512 <= saved_steps < 512 + 256 + 64
    saved = torch.load(run_dir / "checkpoint.pt", weights_only=True)
    saved_adam_steps = {int(s["step"]) for s in saved["optimizer"]["state"].values()}
    assert len(saved_adam_steps) == 1 and saved_adam_steps.pop() > 0

    seen: dict[str, Any] = {}
    update = trainer.ppo_update

    def first_update(net: Any, optimizer: Any, *rest: Any) -> Any:
        if not seen:
            seen["adam_steps"] = {int(s["step"]) for s in optimizer.state_dict()["state"].values()}
            seen["first_weight"] = net.first_weight.detach().clone()
        return update(net, optimizer, *rest)

    monkeypatch.setattr(trainer, "ppo_update", first_update)
    args, given = parse_args(
        ["--run-dir", str(run_dir), "--resume", "--total-timesteps", str(saved_steps + 256), "--no-progress"]
    )
    run(args, given)
    assert f"resuming {run_dir} at step {saved_steps:,}" in capsys.readouterr().out
    assert seen["adam_steps"] == {int(s["step"]) for s in saved["optimizer"]["state"].values()}
    torch.testing.assert_close(seen["first_weight"], saved["net"]["first_weight"])
    final = json.loads((run_dir / "state.json").read_text())["num_timesteps"]
    assert saved_steps + 256 <= final < saved_steps + 2 * 256 + 64
    assert json.loads((run_dir / "args.json").read_text())["total_timesteps"] == 512  # the saved arguments stay


def test_resume_and_arguments_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no checkpoint.pt"):
        resolve_resume(Args(run_dir=tmp_path, resume=True), set())
    (tmp_path / "checkpoint.zip").write_bytes(b"")
    with pytest.raises(ValueError, match="--trainer sb3"):
        resolve_resume(Args(run_dir=tmp_path, resume=True), set())
    with pytest.raises(ValueError, match="not empty"):
        run(Args(run_dir=tmp_path, **TINY))  # type: ignore[arg-type]
    for field, value, message in [
        ("total_timesteps", 0, "total_timesteps"),
        ("players", (9,), "players"),
        ("hidden", (), "hidden"),
        ("pool_random", -1.0, "pool weights"),
        ("gamma", 0.0, "gamma"),
        ("tables", 1, "tables"),
        ("device", "cuda:7", "device"),
        ("device", "gpu", "not a torch device"),
    ]:
        if field == "device" and torch.cuda.device_count() > 7:
            continue
        args = Args(**{field: value, **({"players": (3, 5)} if field == "tables" else {})})  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=message):
            args.validate()


def test_rule_options_reach_the_tables_the_workers_and_args_json() -> None:
    """--rule KEY=VALUE (bourre exploit --exact's small games): the collector's tables, every worker's, args.json."""
    from train.ppo.workers import worker_configs

    args = Args(players=(3,), rule=("hand_size=1", "ranks=2", "max_discard=0"))
    args.validate()
    assert args.rule_options() == {"hand_size": 1, "ranks": 2, "max_discard": 0}
    collector = Collector(PolicyNet((8,)), (3,), 2, SeatPool(), 0, 0.1, rule_options=args.rule_options())
    rules = collector.games[0].rules
    assert (rules.num_players, rules.hand_size, len(rules.deck_cards()), rules.max_discard) == (3, 1, 8, 0)
    assert [c.rule_options for c in worker_configs(args, 0, 2)] == [args.rule_options()] * 2
    assert Args.from_json(json.loads(json.dumps(args.to_json()))).rule == args.rule
    assert parse_args(["--rule", "hand_size=1", "--rule", "ranks=2"]) == (
        Args(rule=("hand_size=1", "ranks=2")),
        {"rule"},
    )  # repeated, not the last one only
    for rule, message in [
        (("hand_size",), "expected KEY=VALUE"),
        (("num_players=3",), "set by --players"),
        (("colour=red",), "not a rule option"),
        (("hand_size=9",), "at 3 players"),
        (("deals_per_episode=2",), "give --session instead"),
    ]:
        with pytest.raises(ValueError, match=message):
            Args(players=(3,), rule=rule).validate()


def test_a_checkpoint_is_read_as_tensors_only(tmp_path: Path) -> None:
    net = PolicyNet((8,))
    optimizer = torch.optim.Adam(net.parameters())
    path = tmp_path / "checkpoint.pt"
    torch.save({"net": net.state_dict(), "optimizer": optimizer.state_dict(), "note": Path("not a tensor")}, path)
    with pytest.raises(ValueError, match="objects other than tensors") as raised:
        checkpoint.load_checkpoint(net, optimizer, path, torch.device("cpu"))
    assert "weights_only=False" not in str(raised.value)  # torch's advice to unpickle is not passed on
    other = PolicyNet((16,))
    torch.save({"net": other.state_dict(), "optimizer": torch.optim.Adam(other.parameters()).state_dict()}, path)
    with pytest.raises(ValueError, match="does not fit the network"):
        checkpoint.load_checkpoint(net, optimizer, path, torch.device("cpu"))
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="damaged"):
        checkpoint.load_checkpoint(net, optimizer, path, torch.device("cpu"))


def test_tiny_run_end_to_end_is_the_default_trainer(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = bourre_train(
        "--run-dir", str(run_dir), "--total-timesteps", "1024", "--seed", "3", "--players", "5", "3", *TINY_FLAGS
    )
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out
    state = json.loads((run_dir / "state.json").read_text())
    assert 1024 <= state["num_timesteps"] < 1024 + 256 + 64
    assert state["imitation"]["accuracy"] > 0 and state["imitation"]["decisions"] >= 600
    assert [row["step"] // 1024 for row in state["evals"]] == [0, 1]  # the warm start, then every 1024 steps
    assert all(isinstance(row["replacement_advantage_5p"], float) for row in state["evals"])
    assert len(state["snapshots"]) == 2 and all(Path(p).is_file() for p in state["snapshots"])
    player = agents.make(f"ppo:{run_dir / 'model.npz'}")  # the exported policy plays
    assert load_policy(run_dir / "model.npz").meta["trainer"] == "batched" and player.name.startswith("ppo:")
    report = (run_dir / "report.md").read_text()
    assert "| random | 5 | 4 |" in report and "| heuristic | 5 | 4 |" in report and "--seed 3" in report
    assert "| table advantage (chips/deal) [95% CI] | replacement advantage [95% CI] |" in report
    assert (run_dir / "learning_curve.png").stat().st_size > 0
    assert "| heuristic | 5 | 4 |" in out
    tags = tensorboard_tags(run_dir / "tb")
    assert {
        "charts/learner_steps_per_second",
        "charts/chips_per_deal",
        "losses/value_loss",
        "losses/entropy",
        "losses/approx_kl",
        "eval/advantage_vs_heuristic_5p",
        "eval/replacement_advantage_vs_heuristic_5p",
    } <= tags


def test_ctrl_c_saves_and_resume_goes_on(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = bourre_train(
        "--run-dir", str(run_dir), "--total-timesteps", "100000000", *TINY_FLAGS, start_new_session=True
    )
    state_file = run_dir / "state.json"
    deadline = time.monotonic() + 600
    while not state_file.exists():  # the first checkpoint: training is under way
        assert proc.poll() is None, proc.communicate()[0]
        assert time.monotonic() < deadline, "no checkpoint within the time limit"
        time.sleep(0.2)
    time.sleep(1.0)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground process group
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 130, out
    assert "checkpoint saved" in out and "--resume" in out
    saved = json.loads(state_file.read_text())["num_timesteps"]
    assert saved >= 512
    interrupted = load_policy(run_dir / "model.npz").meta  # the policy so far, usable before the run ends
    assert interrupted["interrupted"] is True and interrupted["num_timesteps"] == saved
    assert "the policy so far" in out and f"ppo:{run_dir / 'model.npz'}" in out
    proc = bourre_train(
        "--run-dir",
        str(run_dir),
        "--resume",
        "--total-timesteps",
        str(saved + 256),
        "--no-progress",
        "--final-eval-deals",
        "2",
    )
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out
    assert f"resuming {run_dir} at step {saved:,}" in out
    assert json.loads(state_file.read_text())["num_timesteps"] >= saved + 256
    assert (run_dir / "model.npz").is_file()


def test_cli_chooses_the_trainer(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "train.cli", "train", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0 and "--rollout-decisions" in out.stdout and "--trainer sb3" in out.stdout
    out = subprocess.run(
        [sys.executable, "-m", "train.cli", "train", "--trainer", "sb3", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and "--num-envs" in out.stdout and "--rollout-decisions" not in out.stdout
    out = subprocess.run(
        [sys.executable, "-m", "train.cli", "train", "--trainer", "nonsense"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 2 and "--trainer" in out.stderr and "batched" in out.stderr


def test_resuming_a_run_of_the_sb3_trainer_goes_to_it(tmp_path: Path) -> None:
    from train import train_command

    assert train_command.trainer_of(["--run-dir", str(tmp_path), "--resume"])[0] == "batched"
    (tmp_path / "checkpoint.zip").write_bytes(b"")
    assert train_command.trainer_of(["--run-dir", str(tmp_path), "--resume"]) == (
        "sb3",
        ["--run-dir", str(tmp_path), "--resume"],
    )
    assert train_command.trainer_of([f"--run-dir={tmp_path}", "--resume", "--trainer", "batched"])[0] == "batched"
    assert (
        train_command.trainer_of(["--run-dir", str(tmp_path)])[0] == "batched"
    )  # a new run: the guard of the run folder
    (tmp_path / "checkpoint.pt").write_bytes(b"")
    assert train_command.trainer_of(["--run-dir", str(tmp_path), "--resume"])[0] == "batched"


def test_learning_curve_of_a_run_resumed_with_more_table_sizes(tmp_path: Path) -> None:
    from train.runs import RunState, plot_learning_curve

    first = {"step": 0, "replacement_advantage_5p": 0.1, "replacement_advantage_ci95_5p": [0.0, 0.2]}
    later = {**first, "step": 10, "replacement_advantage_2p": 0.01, "replacement_advantage_ci95_2p": [-0.1, 0.1]}
    state = RunState(evals=[first, later])
    path = plot_learning_curve(state, (2, 5), tmp_path / "curve.png")  # 2 players from the second evaluation on
    assert path is not None and path.stat().st_size > 0


def test_init_policy_starts_the_run_from_a_saved_actor(tmp_path: Path) -> None:
    """``init_policy`` copies a saved actor into the network in place of the imitation warm start: with a learning
    rate too small to move it, the run's model is that actor."""
    torch.manual_seed(5)
    source = PolicyNet((32, 16))
    with torch.no_grad():
        source.actor.weight.normal_()  # far from a fresh network's near-uniform head
    path = save_policy(tmp_path / "start.npz", source.policy_weights({}))
    run_dir = tmp_path / "run"
    run(
        Args(
            run_dir=run_dir,
            total_timesteps=256,
            init_policy=path,
            learning_rate=1e-12,  # type: ignore[arg-type]
            **TINY,
        )
    )
    start, trained = load_policy(path), load_policy(run_dir / "model.npz")
    for (w0, b0), (w1, b1) in zip(start.hidden, trained.hidden, strict=True):
        assert np.allclose(w0, w1, atol=1e-6) and np.allclose(b0, b1, atol=1e-6)
    assert np.allclose(start.action[0], trained.action[0], atol=1e-6)
    assert (
        "imitation" not in json.loads((run_dir / "state.json").read_text())
        or not json.loads((run_dir / "state.json").read_text())["imitation"]
    )


def test_load_actor_refuses_other_widths(tmp_path: Path) -> None:
    weights = load_policy(save_policy(tmp_path / "p.npz", PolicyNet((32, 16)).policy_weights({})))
    with pytest.raises(ValueError, match=r"layers \(32, 16\).*this network has \(32, 8\)"):
        PolicyNet((32, 8)).load_actor(weights)
    with pytest.raises(ValueError, match="init_policy: .*no such policy file"):
        Args(init_policy=tmp_path / "missing.npz").validate()  # type: ignore[arg-type]
