"""The batch heuristic compiles each of its functions once: a constant argument is typed by its value in numba
(``f(x, 1)`` and ``f(x, n)`` are two compilations), which made ``_outlook`` (seconds to compile) and others compile
extra copies on first use (docs/architecture.md, "The rules core"). A function's signatures are listed only where
this process compiled it, so the check runs in a process of its own with an empty cache (minutes: slow)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PLAY_AND_LIST = """
import json
import numpy as np
from numba.core.registry import CPUDispatcher
from agents.heuristic import batch_base, batch_decide, batch_play
from agents.heuristic.batch import BatchHeuristic
from bourre_env.batch import BatchGame

bot = BatchHeuristic("default")
rng = np.random.default_rng(0)
for players in (3, 5, 7):
    game = BatchGame(64, seed=players, num_players=players)
    for _ in range(40):  # draws and trick play, at every table size
        game.step(bot.act(game.observations(), game.legal_masks(), tie_breaks=rng.random(64)))
print(json.dumps({
    f"{module.__name__}.{name}": [str(sig) for sig in function.signatures]
    for module in (batch_base, batch_decide, batch_play)
    for name, function in vars(module).items()
    if isinstance(function, CPUDispatcher) and function.__module__ == module.__name__
}))
"""


@pytest.mark.slow
def test_every_function_of_the_batch_heuristic_has_one_signature(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "BOURRE_COMPILE_NOTICE": "0"}
    done = subprocess.run(
        [sys.executable, "-c", PLAY_AND_LIST], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, done.stderr[-3000:]
    compiled = json.loads(done.stdout.strip().splitlines()[-1])
    assert compiled["agents.heuristic.batch_decide._outlook"], "the draw was never decided: the test plays too little"
    assert {name: sigs for name, sigs in compiled.items() if len(sigs) > 1} == {}
