"""benchmarks/train_speed.py's floor of the update (the network's own passes timed alone) on a tiny collector: its
figures are measured and positive, the parts lie within the whole, and its table reads them; the update's arguments
it takes reach the trainer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import torch

from train.learning.policy_net import PolicyNet
from train.ppo.rollout import Collector
from train.ppo.trainer import Args

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def bench(import_benchmark: Callable[[str], ModuleType]) -> ModuleType:
    return import_benchmark("benchmarks.train_speed")


def test_the_floor_times_the_networks_passes_and_its_table_reads_them(bench: ModuleType) -> None:
    args = Args(players=(3,), tables=8, minibatch_size=64, imitation_decisions=0, progress=False)
    torch.manual_seed(0)
    net = PolicyNet((16, 8))
    collector = Collector(net, args.players, args.tables, args.pool(), seed=0, reward_scale=args.reward_scale)
    collector.collect(200)
    floor = bench.update_floor(net, collector, args, torch.device("cpu"), repeats=2)
    assert floor["rows"] == 64 and 1 < floor["nonzero_per_row"] < 200
    for key in ("network_ms", "dense_ms", "sparse_ms", "dense_gflops"):
        assert np.isfinite(floor[key]) and floor[key] > 0, key
    floor["update_cpu_ms_per_minibatch"] = 2 * floor["network_ms"]
    rows = bench.floor_rows({"update_floor": floor, "minibatches": 10, "steps": 1000})
    assert [r[0].split(" (")[0] for r in rows] == [
        "the update, CPU time per minibatch",
        "the network's forward and backward alone",
        "  of which dense products",
        "  of which the sparse first layer",
        "the rest: gathering rows, policy terms, loss, optimizer",
    ]
    assert rows[0][2] == "100%" and rows[1][2] == "50%"
    assert float(rows[1][3]) == pytest.approx(1e3 * floor["network_ms"] * 10 / 1000, abs=0.06)


def test_the_update_arguments_reach_the_batched_trainer_and_bad_ones_are_refused(bench: ModuleType) -> None:
    assert bench._batched_overrides(bench.parse_args(["--trainer", "batched"])) == {}
    opts = bench.parse_args(["--trainer", "batched", "--update-epochs", "1", "--minibatch-size", "1024"])
    overrides = bench._batched_overrides(opts)
    assert overrides == {"update_epochs": 1, "minibatch_size": 1024}
    args = Args(imitation_decisions=0, progress=False, **overrides)
    args.validate()
    assert (args.update_epochs, args.minibatch_size) == (1, 1024)
    with pytest.raises(SystemExit):
        bench.parse_args(["--update-epochs", "-1"])
