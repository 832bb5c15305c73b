"""Reliability, round four: saves replace only regular files, every count is bounded before the work, files are
checked as documented, and every agent is held to one contract (docs/evaluation.md, docs/agents.md)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
import bourre_env
from agents.ppo import load_policy, save_policy
from agents.search import value as search_value
from bourre_env.vector_env import BourreVectorEnv
from train import cli
from train.eval import jobs
from train.eval.duplicate import evaluate
from train.ppo import workers as ppo_workers
from train.ppo.args import Args
from train.runs import RunState

ROOT = Path(__file__).resolve().parent.parent


def _one_line_error(capsys: pytest.CaptureFixture[str], code: int, *argv: str) -> str:
    assert cli.main(list(argv)) == code
    err = capsys.readouterr().err
    lines = [line for line in err.strip().splitlines() if not line.startswith("warning: ")]
    assert "Traceback" not in err and len(lines) == 1, err
    return lines[0]


# ---------------------------------------------------------------------------- 1. saves
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_play_save_to_a_full_device_says_so_and_leaves_the_device(capsys: pytest.CaptureFixture[str]) -> None:
    before = os.stat("/dev/full")
    line = _one_line_error(capsys, 1, "play", "--seats", "random,random", "--seed", "1", "--save", "/dev/full")
    assert "--save: nothing written" in line and "No space left" in line
    after = os.stat("/dev/full")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


def test_play_save_through_a_symlink_writes_its_target(tmp_path: Path) -> None:
    target = tmp_path / "histories" / "game.json"
    target.parent.mkdir()
    link = tmp_path / "game.json"
    link.symlink_to(target)
    assert cli.main(["play", "--seats", "random,random", "--seed", "1", "--save", str(link)]) == 0
    assert link.is_symlink() and json.loads(target.read_text())["format"] == "bourre-hand-history"


def test_ladder_json_refuses_a_socket_before_the_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        line = _one_line_error(capsys, 2, "ladder", "random", "--deals", "1", "--json", str(path), "--no-progress")
    assert "--json" in line and "is a socket, not a regular file" in line


# ---------------------------------------------------------------------------- 4. counts
def test_workers_are_capped_at_the_jobs_and_the_cpus(capsys: pytest.CaptureFixture[str]) -> None:
    assert jobs.usable_workers(100_000, jobs=3, cpus=2) == 2
    assert "100,000 asked for" in capsys.readouterr().err
    assert jobs.usable_workers(8, jobs=1, cpus=2) == 1
    assert capsys.readouterr().err == ""  # capped by the jobs alone: nothing to warn of
    assert jobs.usable_workers(2, cpus=16) == 2
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="workers"):
            jobs.usable_workers(bad)  # type: ignore[arg-type]


def test_eval_with_a_huge_worker_count_finishes(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "train.cli", "eval", "--candidate", "random", "--deals", "2", "--players", "3"]
        + ["--workers", "100000", "--no-progress", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "worker(s)" in result.stdout and (tmp_path / "eval.json").is_file()


def test_a_network_too_large_for_memory_is_refused_before_the_run_folder(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = Args(hidden=(100_000, 100_000), run_dir=run_dir, progress=False)
    with pytest.raises(ValueError, match="--hidden 100000 100000 needs about"):
        args.validate()
    code = cli.main(["train", "--hidden", "100000", "100000", "--run-dir", str(run_dir), "--no-progress"])
    assert code == 2
    assert not run_dir.exists() or not any(run_dir.iterdir())


def test_sb3_refuses_a_network_too_large_for_memory() -> None:
    from train.sb3.trainer import Args as SB3Args

    with pytest.raises(ValueError, match="--hidden 100000 100000 needs about"):
        SB3Args(hidden=(100_000, 100_000)).validate()


def test_play_deals_are_bounded(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["play", "--seats", "random,random", "--deals", "1000000000000"])
    assert exit_info.value.code == 2
    assert "expected an integer from 1 to 10,000" in capsys.readouterr().err


class _Process:
    """A worker process that never stops by itself: ``join`` advances a shared fake clock by its timeout."""

    def __init__(self, clock: list[float], log: list[str], dies_on: str) -> None:
        self.clock, self.log, self.dies_on, self.alive = clock, log, dies_on, True

    def is_alive(self) -> bool:
        return self.alive

    def join(self, timeout: float | None = None) -> None:
        self.clock[0] += timeout or 0.0

    def terminate(self) -> None:
        self.log.append("terminate")
        self.alive = self.dies_on == "kill"

    def kill(self) -> None:
        self.log.append("kill")
        self.alive = False


class _Connection:
    def send(self, message: Any) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.mark.parametrize("dies_on", ["terminate", "kill"])
def test_closing_workers_that_do_not_stop_takes_one_deadline_for_all(
    monkeypatch: pytest.MonkeyPatch, dies_on: str
) -> None:
    """Ctrl-C during the warm start: workers still starting up never read "stop"; closing them waits on one
    deadline for all of them (seconds), not 15 s for each one in turn."""
    clock, log = [0.0], []
    monkeypatch.setattr(ppo_workers.time, "monotonic", lambda: clock[0])
    pool = ppo_workers.ProcessWorkers.__new__(ppo_workers.ProcessWorkers)
    pool.processes = [_Process(clock, log, dies_on) for _ in range(8)]
    pool.connections = [_Connection() for _ in range(8)]
    pool.in_flight = pool.jobs_out = False
    pool.close()
    assert clock[0] <= ppo_workers.STOP_SECONDS + ppo_workers.TERMINATE_SECONDS
    assert log.count("terminate") == 8 and log.count("kill") == (8 if dies_on == "kill" else 0)
    assert not any(p.is_alive() for p in pool.processes)


# ---------------------------------------------------------------------------- 5. files
def _policy(tmp_path: Path) -> Path:
    return save_policy(tmp_path / "p.npz", load_policy(agents.ppo.SHIPPED_MODEL))


def _arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {name: data[name] for name in data.files}


def test_float64_weights_past_float32_are_refused(tmp_path: Path) -> None:
    path = _policy(tmp_path)
    arrays = _arrays(path)
    weight = arrays["action.weight"].astype(np.float64)
    weight[0, 0] = 1e300  # finite as float64, infinite as float32
    np.savez(path, **{**arrays, "action.weight": weight})
    with pytest.raises(ValueError, match="action holds non-finite numbers"):
        load_policy(path)


@pytest.mark.parametrize("depth", [50, 100_000])
def test_a_deeply_nested_meta_is_a_one_line_value_error(tmp_path: Path, depth: int) -> None:
    path = _policy(tmp_path)
    arrays = _arrays(path)
    meta = json.loads(str(arrays["meta"]))
    meta["provenance"] = json.loads("[" * min(depth, 500) + "]" * min(depth, 500)) if depth < 1000 else None
    text = json.dumps(meta)
    if depth >= 1000:  # past Python's parser: made as text
        text = text.replace('"provenance": null', '"provenance": ' + "[" * depth + "]" * depth)
    np.savez(path, **{**arrays, "meta": np.array(text)})
    with pytest.raises(ValueError) as err:
        load_policy(path)
    assert "meta" in str(err.value) and "\n" not in str(err.value)


def test_a_file_of_many_entries_is_refused_early_and_briefly(tmp_path: Path) -> None:
    path = tmp_path / "many.npz"
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1, np.float32))
    with zipfile.ZipFile(path, "w") as archive:
        for k in range(20_000):
            with archive.open(f"x{k}.npy", "w") as f:
                np.lib.format.write_array_header_1_0(f, header)
                f.write(np.zeros(1, np.float32).tobytes())
    started = time.process_time()
    with pytest.raises(ValueError) as err:
        load_policy(path)
    assert "20,000 entries" in str(err.value) and len(str(err.value)) < 300
    assert time.process_time() - started < 5  # the refusal reads the archive's directory, no entry


def test_unexpected_entries_are_listed_briefly(tmp_path: Path) -> None:
    path = _policy(tmp_path)
    np.savez(path, **_arrays(path), **{f"extra{k}": np.zeros(1, np.float32) for k in range(50)})
    with pytest.raises(ValueError, match=r"unexpected entries \[.*\] and 45 more") as err:
        load_policy(path)
    assert len(str(err.value)) < 300


def test_a_run_state_with_negative_counters_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"num_timesteps": -5}))
    with pytest.raises(ValueError, match=rf"{path}: num_timesteps is -5, expected an integer >= 0"):
        RunState.load(path)
    path.write_text(json.dumps({"train_seconds": -1.0}))
    with pytest.raises(ValueError, match=rf"{path}: train_seconds is -1.0"):
        RunState.load(path)


def test_a_deeply_nested_args_json_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "args.json").write_text('{"seed": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert cli.main(["train", "--run-dir", str(run_dir), "--resume", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "nested too deep" in err and "Traceback" not in err


def test_paths_that_are_not_regular_files_say_what_they_are(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.npz"
    os.mkfifo(fifo)  # opening it to read would wait for a writer for ever
    with pytest.raises(ValueError, match=r"pipe.npz: a FIFO \(named pipe\), not a policy file"):
        load_policy(fifo)
    with pytest.raises(ValueError, match="/dev/zero: a character device, not a policy file"):
        agents.make("ppo:/dev/zero")
    with pytest.raises(ValueError, match="a folder, not a value file"):
        search_value.load_value(tmp_path)
    with pytest.raises(ValueError, match="a FIFO"):
        RunState.load(fifo)
    with pytest.raises(ValueError, match="no such policy file"):
        load_policy(tmp_path / "missing.npz")


# ---------------------------------------------------------------------------- 6. the agent contract
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


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ("pimc:64,worlds=8", "worlds"),
        ("pimc:worlds=8,worlds=9", "worlds"),
        ("ismcts:8,iterations=9,iterations=10", "iterations"),
        ("pimc:8,rollout=random,rollout=heuristic", "rollout"),
    ],
)
def test_an_option_given_twice_is_refused_by_name(spec: str, key: str) -> None:
    with pytest.raises(ValueError, match=f"option {key} given twice"):
        agents.make(spec)
    with pytest.raises(ValueError, match=f"option {key} given twice"):
        agents.check_budget(spec)


@pytest.mark.parametrize("value", ["2", "-1", "yes", "0.5", ""])
def test_sample_takes_0_or_1_only(value: str) -> None:
    for name in ("pimc:8", "ismcts:8"):
        with pytest.raises(ValueError, match="option sample: expected 0 or 1"):
            agents.make(f"{name},sample={value}")
    assert agents.make("pimc:8,sample=1").rollout.sample is True  # type: ignore[attr-defined]
    assert agents.make("pimc:8,sample=false").rollout.sample is False  # type: ignore[attr-defined]


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


def test_a_terminated_evaluation_stops_its_workers(tmp_path: Path) -> None:
    """SIGTERM (kill, a scheduler, a container's stop) stops the command and its pool workers, as Ctrl-C does."""
    import signal

    command = [sys.executable, "-m", "train.cli", "eval", "--candidate", "heuristic", "--field", "heuristic"]
    command += ["--players", "3", "4", "--deals", "400", "--workers", "2", "--out", str(tmp_path)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    children: list[int] = []
    while time.monotonic() < deadline and len(children) < 2 and process.poll() is None:
        time.sleep(0.5)
        found = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
        children = [int(pid) for pid in found]
    assert len(children) >= 2, "the pool never started"
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 128 + signal.SIGTERM
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{pid}") for pid in children):
        time.sleep(0.2)
    alive = [pid for pid in children if os.path.exists(f"/proc/{pid}") and "Z" not in _state(pid)]
    assert not alive, f"workers {alive} outlived the command"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return "Z"
