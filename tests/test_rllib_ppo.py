"""The RLlib example (train/research/rllib_ppo.py): the masking module, two training iterations on a local Ray instance,
and the legality check that closes every run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason='the RLlib example needs the ray extra: pip install "bourre-rl[ray]"')
torch = pytest.importorskip("torch", reason='the RLlib example needs torch: pip install "bourre-rl[ray]"')

import ray  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec  # noqa: E402

import bourre_env  # noqa: E402
from train.research import rllib_ppo  # noqa: E402


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False)
    yield
    ray.shutdown()


def _observation_batch(players: int, deals: int) -> dict[str, Any]:
    """Observations and masks of every decision of ``deals`` deals played with the first legal action."""
    env = bourre_env.env(num_players=players)
    rows, masks = [], []
    for deal in range(deals):
        env.reset(seed=deal)
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            rows.append(obs["observation"])
            masks.append(obs["action_mask"])
            env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    return {
        Columns.OBS: {"observation": torch.as_tensor(np.stack(rows)), "action_mask": torch.as_tensor(np.stack(masks))}
    }


def test_module_gives_illegal_actions_no_probability() -> None:
    env = rllib_ppo.make_env({"players": 4})
    module = RLModuleSpec(
        module_class=rllib_ppo.MaskedPPOModule,
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config={"fcnet_hiddens": [16]},
    ).build()
    batch = _observation_batch(4, 2)
    illegal = ~batch[Columns.OBS]["action_mask"].bool()
    assert illegal.any() and (~illegal).any(dim=1).all()
    for forward in (module.forward_inference, module.forward_exploration, module.forward_train):
        probs = torch.softmax(forward(batch)[Columns.ACTION_DIST_INPUTS].detach(), dim=-1)
        assert float(probs[illegal].max()) == 0.0
        assert torch.allclose(probs.sum(dim=-1), torch.ones(len(probs)))
    assert module.compute_values(batch).shape == (len(illegal),)
    assert isinstance(batch[Columns.OBS], dict)  # the module reads the batch, it does not rewrite it


def test_two_iterations_train_and_pick_only_legal_actions(ray_instance: None, tmp_path: Path) -> None:
    args = rllib_ppo.Args(
        players=3,
        iterations=2,
        env_runners=1,
        envs_per_runner=1,
        batch_size=200,
        minibatch_size=64,
        epochs=1,
        hidden=(32,),
        run_dir=tmp_path / "run",
        check_deals=5,
        progress=False,
    )
    summary = rllib_ppo.train(args)
    # The env raises on an illegal action, so sampling 400 steps already proves the runner's choices were legal;
    # the check then samples the trained module in every seat of fresh deals.
    assert summary["env_steps"] >= 2 * args.batch_size
    assert summary["check_decisions"] >= 5 * 3 and summary["check_illegal"] == 0
    # The trained module alone, as the module docstring says to load it, plays legally too.
    module = RLModule.from_checkpoint(tmp_path / "run" / "learner_group" / "learner" / "rl_module" / rllib_ppo.POLICY)
    assert isinstance(module, rllib_ppo.MaskedPPOModule)
    decisions, illegal = rllib_ppo.legal_action_check(module, players=3, preset="standard", deals=3, seed=1)
    assert decisions > 0 and illegal == 0


class _Unmasked:
    """Equal logits for every action, legal or not: what a module that forgot the mask would give."""

    def forward_exploration(self, batch: dict[str, Any]) -> dict[str, Any]:
        rows = batch[Columns.OBS]["action_mask"].shape[0]
        return {Columns.ACTION_DIST_INPUTS: torch.zeros(rows, bourre_env.actions.NUM_ACTIONS)}


def test_legality_check_catches_a_module_without_the_mask() -> None:
    decisions, illegal = rllib_ppo.legal_action_check(_Unmasked(), players=3, preset="standard", deals=3, seed=0)
    assert decisions > 0 and illegal > 0


def test_bad_arguments_are_refused() -> None:
    for bad in (
        dict(preset="no_such_preset"),
        dict(players=9),
        dict(iterations=0),
        dict(batch_size=64, minibatch_size=128),
        dict(hidden=()),
    ):
        with pytest.raises(ValueError):
            rllib_ppo.Args(**bad).check()
