"""The privileged critic of the batched trainer: its features, a policy that never reads them, runs with it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import agents
from agents.ppo import load_policy
from bourre_env import core
from bourre_env.batch import BatchGame
from bourre_env.core import cards
from bourre_env.privileged import HIDDEN_HAND_SIZE, hidden_hand_entries
from train.learning.policy_net import PolicyNet, batch_from_counts, sparse_rows
from train.ppo.rollout import Collector, SeatPool
from train.ppo.trainer import Args, parse_args, resolve_resume, run

TINY = {
    "tables": 16,
    "rollout_decisions": 256,
    "minibatch_size": 128,
    "imitation_decisions": 600,
    "imitation_epochs": 1,
    "hidden": (32, 16),
    "snapshot_every": 512,
    "eval_every": 0,
    "eval_deals": 4,
    "checkpoint_every": 512,
    "final_eval_deals": 4,
    "eval_workers": 1,
    "progress": False,
}


@pytest.mark.parametrize("num_players", range(2, 9))
def test_hidden_hands_are_the_other_seats_hands_in_seat_order(num_players: int) -> None:
    game = BatchGame(24, seed=num_players, num_players=num_players)
    checked = 0
    for _ in range(12):  # positions of every phase: draws, trick play, new deals
        rows = np.flatnonzero(game.current_players() >= 0)
        idx, val, counts = hidden_hand_entries(game.states, rows, num_players)
        assert (val == 1).all() and counts.sum() == len(idx) and idx.max(initial=0) < HIDDEN_HAND_SIZE
        starts = np.concatenate([[0], np.cumsum(counts)])
        for i, row in enumerate(rows):
            seat = int(game.states[row, core.S_CUR])
            got = sorted(int(j) for j in idx[starts[i] : starts[i + 1]])
            want = sorted(
                (r - 1) * cards.NUM_CARDS + c
                for r in range(1, num_players)
                for c in range(cards.NUM_CARDS)
                if int(game.states[row, core.S_HAND + (seat + r) % num_players]) >> c & 1
            )
            assert got == want
            checked += len(want)
        masks = game.legal_masks().astype(bool)
        game.step(np.array([np.flatnonzero(m)[-1] for m in masks]))
    assert checked > 0
    game.states[0, core.S_CUR] = -1
    with pytest.raises(ValueError, match="no seat to act"):
        hidden_hand_entries(game.states, np.array([0]), num_players)
    with pytest.raises(ValueError, match="num_players"):
        hidden_hand_entries(game.states, np.array([1]), 9)


def _batches(num_players: int, seed: int) -> tuple[object, object]:
    game = BatchGame(8, seed=seed, num_players=num_players)
    rows = np.arange(8)
    obs = game.observations()
    return (
        batch_from_counts(*sparse_rows(obs, rows), "cpu"),
        batch_from_counts(*hidden_hand_entries(game.states, rows, num_players), "cpu"),
    )


def test_the_policy_never_reads_the_hidden_hands() -> None:
    torch.manual_seed(0)
    net = PolicyNet((32, 16), privileged_critic=True)
    obs, hands = _batches(5, seed=1)
    _, other_hands = _batches(5, seed=2)  # other deals: other hidden hands
    logits, values = net(obs, hands)  # type: ignore[arg-type]
    logits_other, values_other = net(obs, other_hands)  # type: ignore[arg-type]
    torch.testing.assert_close(logits, logits_other)
    assert not torch.allclose(values, values_other)
    with pytest.raises(ValueError, match="hidden_batch"):
        net(obs)  # type: ignore[arg-type]
    # the value loss trains the critic's trunk only, the policy loss the actor's only
    values.square().mean().backward()
    assert net.first_weight.grad is None and net.actor.weight.grad is None
    assert net.value_net is not None and net.value_net.hand_weight.grad is not None
    net.zero_grad(set_to_none=True)
    logits, _ = net(obs, hands)  # type: ignore[arg-type]
    logits.logsumexp(dim=1).mean().backward()
    assert all(p.grad is None for p in net.value_net.parameters())
    # the exported actor is the plain observation-only network
    exported = net.policy_weights({})
    assert exported.hidden[0][0].shape == (32, net.obs_size)


def test_collector_keeps_each_decisions_hidden_hands_through_carry_over() -> None:
    torch.manual_seed(0)
    net = PolicyNet((32, 16), privileged_critic=True)
    collector = Collector(net, (3, 7), 12, SeatPool(), seed=4, reward_scale=0.1)
    t = collector.transitions
    collector.collect(300)
    assert t.hidden is not None and t.hidden.n == t.n
    before = [tuple(t.hidden.idx[t.hidden.ptr[i] : t.hidden.ptr[i + 1]]) for i in range(t.n)]
    assert sum(map(len, before)) > 0
    _, _, complete = collector.complete(1.0, 0.95)
    new_index = collector.carry_over(complete)
    assert t.hidden.n == t.n == int((~complete).sum()) > 0
    for old, new in enumerate(new_index):
        if new >= 0:
            assert tuple(t.hidden.idx[t.hidden.ptr[new] : t.hidden.ptr[new + 1]]) == before[old]
    collector.collect(300)  # appending after a carry-over
    assert t.hidden.n == t.n


def test_a_run_with_the_privileged_critic_exports_the_usual_actor_and_resumes(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run(Args(run_dir=run_dir, total_timesteps=512, seed=5, privileged_critic=True, **TINY))  # type: ignore[arg-type]
    assert json.loads((run_dir / "args.json").read_text())["privileged_critic"] is True
    saved = torch.load(run_dir / "checkpoint.pt", weights_only=True)
    assert any(key.startswith("value_net.") for key in saved["net"])
    policy = load_policy(run_dir / "model.npz")
    assert [w.shape for w, _ in policy.hidden] == [(32, policy.obs_size), (16, 32)]
    agents.make(f"ppo:{run_dir / 'model.npz'}")
    args, given = parse_args(["--run-dir", str(run_dir), "--resume", "--no-privileged-critic"])
    with pytest.raises(ValueError, match="privileged_critic=True"):
        resolve_resume(args, given)
    args, given = parse_args(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "1024", "--no-progress"])
    run(args, given)
    assert json.loads((run_dir / "state.json").read_text())["num_timesteps"] >= 1024
