"""Every agent is held to one contract (docs/agents.md): a failing agent is named with its decision, ``bourre
eval`` of a failing bot exits 2 in one line, user agents and the env refuse the same answers, and the envs refuse
to run after ``close``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
import bourre_env
from bourre_env.vector_env import BourreVectorEnv
from train.eval.duplicate import evaluate

ROOT = Path(__file__).resolve().parent.parent


class _Bad:
    """A user's bot whose first decision goes wrong in the way its variant names."""

    def __init__(self, seed: int | None = None, variant: str | None = None) -> None:
        self.variant = variant
        self.name = "bad"

    def reset(self) -> None:
        pass

    def act(self, observation: Any) -> Any:
        if self.variant == "none":
            return None
        if self.variant == "raise":
            raise ZeroDivisionError("division by zero\nsecond line")
        if self.variant == "exit":
            sys.exit(3)
        if self.variant == "float":
            return float(np.flatnonzero(observation["action_mask"])[0])
        if self.variant == "illegal":
            return int(np.flatnonzero(observation["action_mask"] == 0)[0])
        return int(np.flatnonzero(observation["action_mask"])[0])


BAD_BOT = """
import sys
import numpy as np


class Bad:
    def __init__(self, seed=None, variant=None):
        self.variant = variant

    def act(self, observation):
        if self.variant == "none":
            return None
        if self.variant == "raise":
            raise ZeroDivisionError("division by zero")
        if self.variant == "exit":
            sys.exit(3)
        if self.variant == "string":
            return str(np.flatnonzero(observation["action_mask"])[0])
        if self.variant == "bool":
            return True
        return float(np.flatnonzero(observation["action_mask"])[0]) + 0.5
"""


@pytest.mark.parametrize(
    ("variant", "said"),
    [
        ("none", "returned None, not an action id"),
        ("raise", "raised ZeroDivisionError: division by zero at deal 0 of seed 0 at 3 players, decision "),
        ("exit", "called sys.exit(3)"),
        ("float", "not an action id"),
        ("illegal", "illegal action"),
    ],
)
def test_a_failing_agent_is_named_with_its_decision(variant: str, said: str) -> None:
    with pytest.raises(agents.AgentError) as err:
        evaluate(lambda seed: _Bad(seed, variant), "random", players=3, deals=1, progress=False)
    assert said in str(err.value) and "\n" not in str(err.value)
    assert "'bad'" in str(err.value) or "_Bad" in str(err.value) or "<lambda>" in str(err.value)


@pytest.mark.parametrize("variant", ["none", "raise", "exit", "string", "bool", "float"])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_bourre_eval_of_a_failing_bot_exits_2_in_one_line(tmp_path: Path, variant: str, workers: str) -> None:
    bot = tmp_path / "badbot.py"
    bot.write_text(BAD_BOT)
    spec = f"{bot}:Bad:{variant}"
    result = subprocess.run(
        [sys.executable, "-m", "train.cli", "eval", "--candidate", spec, "--deals", "2", "--players", "3"]
        + ["--workers", workers, "--no-progress", "--out", str(tmp_path / "out")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("warning: ")]
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("bourre eval: error: agent ") and spec in lines[0] and "decision" in lines[0]


@pytest.mark.parametrize("answer", [52.5, 52.0, "3", True, np.float32(3), None, [3]])
def test_user_agents_and_the_env_refuse_the_same_answers(answer: Any) -> None:
    class Lenient:
        def act(self, observation: Any) -> Any:
            return answer

    wrapped = agents.user_code.as_agent(Lenient(), "lenient")
    env = bourre_env.env(num_players=3)
    env.reset(seed=0)
    obs = env.last()[0]
    with pytest.raises(agents.AgentError, match="not an action id"):
        wrapped.act(obs)
    with pytest.raises(ValueError, match="expected an action id"):
        env.step(answer)


@pytest.mark.parametrize("answer", [np.int64(52), np.array(52), 52])
def test_integers_of_every_kind_are_actions_for_both(answer: Any) -> None:
    class Exact:
        def act(self, observation: Any) -> Any:
            return answer

    assert agents.user_code.as_agent(Exact(), "exact").act({}) == 52
    env = bourre_env.env(num_players=3)
    env.reset(seed=0)
    env.step(answer)  # 52: pass, legal in the first draw round


def test_the_aec_env_refuses_to_run_after_close() -> None:
    for env in (bourre_env.env(num_players=3), bourre_env.raw_env(num_players=3)):
        env.reset(seed=0)
        env.close()
        for call in (lambda e=env: e.step(52), lambda e=env: e.last(), lambda e=env: e.reset(seed=1)):
            with pytest.raises(ValueError, match="the env is closed"):
                call()


def test_the_vector_env_refuses_to_run_after_close() -> None:
    import gymnasium

    class FirstLegal:
        def act_batch(self, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
            return np.argmax(masks, axis=1)

    env = BourreVectorEnv(2, FirstLegal(), num_players=3)
    env.reset(seed=0)
    env.close()
    with pytest.raises(gymnasium.error.ClosedEnvironmentError, match="closed"):
        env.step(np.full(2, 52))
    with pytest.raises(gymnasium.error.ClosedEnvironmentError, match="closed"):
        env.reset(seed=0)
