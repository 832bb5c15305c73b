"""The imitation warm start's progress (``train.learning.imitation``): its bar counts the decisions asked for,
epoch by epoch, and its summary is one readable line."""

from __future__ import annotations

import pytest


def test_the_imitation_bar_counts_the_decisions_asked_for_epoch_by_epoch(capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    from train.learning.policy_net import PolicyNet
    from train.ppo.args import Args
    from train.ppo.warm_start import imitation_warm_start

    args = Args(tables=16, imitation_decisions=600, imitation_epochs=3, hidden=(32, 16), progress=True)
    stats = imitation_warm_start(PolicyNet(args.hidden), args, torch.device("cpu"))
    err = capsys.readouterr().err
    assert stats["decisions"] == 600
    assert "600/600" in err and "1800" not in err  # not epochs x decisions
    assert "imitate, epoch 1/3" in err and "imitate, epoch 3/3: 100%" in err


def test_the_imitation_summary_is_one_readable_line() -> None:
    from train.learning.imitation import summary

    stats = {
        "policy_loss": 1.0241,
        "value_loss": 0.0372,
        "accuracy": 0.6681,
        "decisions": 300000.0,
        "compile_seconds": 76.9,
        "seconds": 5.98,
    }
    assert summary(stats) == (
        "imitation warm start: 300,000 decisions, accuracy 0.668, policy loss 1.024, value loss 0.037, "
        "6 s (and 77 s of numba compiling)"
    )
    assert summary({"accuracy": 0.5, "policy_loss": 1.0, "value_loss": 0.1}) == (
        "imitation warm start: accuracy 0.500, policy loss 1.000, value loss 0.100"
    )
