"""``bourre compile``: each part calls the kernels it names (a fresh process holds them compiled after it), and a bad
part name is a clear error."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from train import cli
from train.compile_ahead import COLD_SECONDS, PARTS, compile_parts

# Per part, kernels a run of that part alone must leave compiled: the heavy ones its description promises.
KERNELS = {
    "env": [
        "bourre_env.observation:observe_with",
        "bourre_env.core.rounds:step_with",
        "bourre_env.batch:_step_all",
        "bourre_env.batch:_random_play",
        "bourre_env.vector_env:_step_accepted_rows",
    ],
    "agents": [
        "agents.heuristic.batch:heuristic_actions",
        "agents.heuristic.batch:heuristic_actions_at",
        "agents.styles:style_action",
        "agents.batched_styles:style_actions",
        "agents.batched_styles:style_actions_at",
        "agents.ppo:forward_rows",
    ],
    "search": [
        "bourre_env.sampler.kernels:_sample_kernel",
        "agents.search.pimc:_apply",
        "agents.search.rollout:_heuristic_rollouts",
        "agents.search.rollout:_random_rollouts",
        "agents.search.inference:_replay_with_model",
    ],
    "training": [
        "train.learning.policy_net:_gather",
        "train.learning.fused_cpu:_policy_terms_forward",
        "train.ppo.rollout:_gae",
    ],
    "threads": [
        "bourre_env.batch:_step_all_threads",
        "bourre_env.batch:_random_play_threads",
        "bourre_env.vector_env:_step_rows_threads",
        "agents.heuristic.batch:heuristic_actions_at_threads",
    ],
}

_PROBE = """
import importlib, json, sys
from train.compile_ahead import compile_parts
parts, kernels = json.loads(sys.argv[1])
compile_parts(parts, say=lambda line: None)
found = {}
for name in kernels:
    module, _, function = name.partition(":")
    found[name] = len(getattr(importlib.import_module(module), function).signatures)
print(json.dumps(found))
"""


def test_the_tables_name_every_part() -> None:
    assert set(KERNELS) == set(PARTS)
    assert list(COLD_SECONDS) == list(PARTS)


@pytest.mark.parametrize("part", list(PARTS))
def test_a_part_leaves_its_kernels_compiled_in_a_fresh_process(part: str) -> None:
    # a fresh process: the kernels it holds compiled are those the part called (loaded from the suite's cache)
    probe = [sys.executable, "-c", _PROBE, json.dumps([[part], KERNELS[part]])]
    done = subprocess.run(probe, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {name: found[name] for name in KERNELS[part]}
    assert all(count >= 1 for count in found.values()), found


def test_an_unknown_part_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="expected names among env, agents, search, training, threads, got 'gpu'"):
        compile_parts(["env", "gpu"])
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["compile", "--parts", "gpu"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'gpu'" in capsys.readouterr().err


def test_with_workers_the_parts_after_env_run_in_processes() -> None:
    lines: list[str] = []
    seconds = compile_parts(["training", "env", "agents"], say=lines.append, workers=2)
    assert list(seconds) == ["env", "agents", "training"]  # PARTS' order, whatever order they ended in
    assert all(s > 0 for s in seconds.values())
    assert lines[:2] == [f"env: {PARTS['env'][0]}", lines[1]] and lines[1].startswith("env: ")
    assert lines[2] == "agents, training: in 2 processes"  # the longest first (COLD_SECONDS)


def test_the_threads_part_passes_where_numba_has_one_thread() -> None:
    # the threaded kernels never run on a pool of one thread: nothing to compile there, and no error
    probe = [sys.executable, "-c", "from train.compile_ahead import compile_parts; compile_parts(['threads'])"]
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    done = subprocess.run(probe, capture_output=True, text=True, timeout=600, check=False, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "threads: " in done.stdout
