"""The batch heuristic and the styles compile each of their functions once: a constant argument is typed by its value
in numba (``f(x, 1)`` and ``f(x, n)`` are two compilations), which made ``_outlook`` (seconds to compile) and others
compile extra copies on first use (docs/architecture.md, "The rules core"). A function's signatures are listed only
where this process compiled it, so the check runs in a process of its own with an empty cache (minutes: slow)."""

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


PLAY_SEARCH_AND_LIST = """
import json
import agents
import bourre_env
from bourre_env import observation
from bourre_env.core import cinch

env = bourre_env.env(num_players=4)
table = [agents.make("pimc:2,rollout=heuristic,infer=2", seed=0)]
table += [agents.make("heuristic", seed=s) for s in (1, 2, 3)]
seat_of = env.unwrapped.agent_name_mapping
for episode in range(2):
    env.reset(seed=episode)
    for agent in table:
        agent.reset()
    for name in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else table[seat_of[name]].act(obs))
print(json.dumps({f.__name__: [str(s) for s in f.signatures] for f in (observation.encode_with, cinch.has_cinch_with)}))
"""


@pytest.mark.slow
def test_the_env_and_the_search_agents_compile_one_observation_encoder(tmp_path: Path) -> None:
    """A search agent with inference (its world filter encodes seat 0's observation in compiled code) beside the env:
    one copy of the encoder and of the cinch check under it, not a second one for a literal seat."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "BOURRE_COMPILE_NOTICE": "0"}
    done = subprocess.run(
        [sys.executable, "-c", PLAY_SEARCH_AND_LIST], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, done.stderr[-3000:]
    compiled = json.loads(done.stdout.strip().splitlines()[-1])
    assert {name: len(sigs) for name, sigs in compiled.items()} == {"encode_with": 1, "has_cinch_with": 1}


PLAY_STYLES_AND_LIST = """
import json
import numpy as np
from numba.core.registry import CPUDispatcher
from agents import batched_styles, styles
from agents.batched_styles import BatchedStylePlayer
from agents.styles import STYLES, StyleAgent
from bourre_env.batch import BatchGame

for players in (3, 6):
    game = BatchGame(32, seed=players, num_players=players)
    rows = np.arange(32)
    for k in range(60):  # every style, per observation, on observations and on state rows
        style = list(STYLES)[k % len(STYLES)]
        obs, masks = game.observations(), game.legal_masks()
        StyleAgent(style).act({"observation": obs[0], "action_mask": masks[0]})
        BatchedStylePlayer(style).act_batch(obs, masks, rows)
        game.step(BatchedStylePlayer(style).act_game(game, rows))
print(json.dumps({
    f"{module.__name__}.{name}": [str(sig) for sig in function.signatures]
    for module in (styles, batched_styles)
    for name, function in vars(module).items()
    if isinstance(function, CPUDispatcher) and function.__module__ == module.__name__
}))
"""


@pytest.mark.slow
def test_every_function_of_the_styles_has_one_signature(tmp_path: Path) -> None:
    """The styles' rules, called by ``StyleAgent`` on one observation and by ``BatchedStylePlayer`` on rows of
    observations and of states: one compilation each (``agents.styles`` passes no constant as an argument)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "BOURRE_COMPILE_NOTICE": "0"}
    done = subprocess.run(
        [sys.executable, "-c", PLAY_STYLES_AND_LIST], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, done.stderr[-3000:]
    compiled = json.loads(done.stdout.strip().splitlines()[-1])
    assert compiled["agents.styles.cheapest_winner"] and compiled["agents.batched_styles.style_actions_at"]
    assert {name: sigs for name, sigs in compiled.items() if len(sigs) > 1} == {}
