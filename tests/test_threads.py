"""``bourre_env.threads``: how many threads a threaded call runs on, and that the choice changes nothing but speed.

No timing here: the chooser is driven by a fake clock and fake probe times, and the affinity mask by a fake
``os.sched_getaffinity``. The probe's own kernel is run once, for what it returns, not for how long it takes.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator

import numba
import numpy as np
import pytest

from agents.batched_players import make_batched
from bourre_env import BourreVectorEnv, batch, threads
from bourre_env.batch import BatchGame
from bourre_env.threads import PAYS, PROBE_HISTORY, PROBE_SECONDS, ThreadChooser

needs_two = pytest.mark.skipif(batch.max_threads() < 2, reason="numba's pool has one thread (NUMBA_NUM_THREADS)")


class FakeMachine:
    """A clock the test moves, and probe times that give the speed-up the test sets."""

    def __init__(self, speedup: float) -> None:
        self.now = 0.0
        self.speedup = speedup
        self.probes = 0

    def clock(self) -> float:
        return self.now

    def measure(self, n_threads: int, shares: int) -> float:
        self.probes += n_threads == 1
        return 1.0 if n_threads == 1 else 1.0 / self.speedup


def chooser_on(machine: FakeMachine, cores: int = 2, adapt: bool = True) -> ThreadChooser:
    return ThreadChooser(adapt=adapt, clock=machine.clock, measure=machine.measure, cores=lambda: cores)


@pytest.fixture
def swap_chooser(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Lets a test replace the process's chooser; the real one is back after it."""
    monkeypatch.setattr(threads, "_chooser", threads._chooser)
    yield


def test_threads_are_used_while_they_pay() -> None:
    quiet = FakeMachine(speedup=1.8)
    assert chooser_on(quiet).threads_now(2) == 2


def test_one_thread_while_threads_do_not_pay() -> None:
    shared = FakeMachine(speedup=0.4)  # two threads slower than one: another process holds a core
    assert chooser_on(shared).threads_now(2) == 1
    assert chooser_on(FakeMachine(speedup=PAYS - 0.01)).threads_now(2) == 1
    assert chooser_on(FakeMachine(speedup=PAYS)).threads_now(2) == 2
    # a fixed bar: 16 threads that gain 3x on the probe are used (the probe's small work scales less than the calls)
    assert chooser_on(FakeMachine(speedup=3.0), cores=16).threads_now(16) == 16


def test_the_median_of_recent_probes_decides_and_follows_the_machine() -> None:
    machine = FakeMachine(speedup=1.8)
    chooser = chooser_on(machine)
    for _ in range(PROBE_HISTORY - 1):
        machine.now += PROBE_SECONDS
        assert chooser.threads_now(2) == 2
    machine.speedup = 0.3  # one slow probe among good ones does not switch
    machine.now += PROBE_SECONDS
    assert chooser.threads_now(2) == 2
    for _ in range(PROBE_HISTORY // 2 + 1):  # once most recent probes are slow, one thread
        machine.now += PROBE_SECONDS
        chooser.threads_now(2)
    assert chooser.threads_now(2) == 1
    machine.speedup = 1.9  # the other process ended: threads again, once the recent probes say so
    for _ in range(PROBE_HISTORY // 2 + 1):
        machine.now += PROBE_SECONDS
        chooser.threads_now(2)
    assert chooser.threads_now(2) == 2


def test_the_probe_runs_at_most_once_per_interval() -> None:
    machine = FakeMachine(speedup=1.8)
    chooser = chooser_on(machine)
    for _ in range(1000):
        chooser.threads_now(2)
    assert machine.probes == 1
    machine.now += PROBE_SECONDS / 2
    chooser.threads_now(2)
    assert machine.probes == 1
    machine.now += PROBE_SECONDS / 2
    chooser.threads_now(2)
    assert machine.probes == 2


def test_no_more_threads_than_the_affinity_mask_allows() -> None:
    machine = FakeMachine(speedup=1.9)
    assert chooser_on(machine, cores=1).threads_now(2) == 1
    assert chooser_on(machine, cores=1, adapt=False).threads_now(4) == 1
    assert chooser_on(machine, cores=3, adapt=False).threads_now(4) == 3
    assert chooser_on(machine, cores=8, adapt=False).threads_now(4) == 4
    assert machine.probes == 0  # neither one core nor a fixed choice probes
    assert chooser_on(machine).threads_now(1) == 1


def test_usable_cores_and_auto_threads_follow_the_affinity_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {3})
    assert threads.usable_cores() == 1
    assert threads.auto_threads() == 1
    assert BatchGame(4, seed=0, num_players=3, threads="auto").threads == 1
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: set(range(64)))
    assert threads.usable_cores() == 64
    assert threads.auto_threads() == batch.max_threads()  # no more than numba's pool
    assert BourreVectorEnv(4, "random", agent_factory=make_batched, threads="auto").game.threads == batch.max_threads()


@pytest.mark.parametrize("bad", ["all", "", 2.0, None])
def test_bad_thread_names_are_one_line(bad: object) -> None:
    with pytest.raises(ValueError, match=r"threads: expected an integer in 1\.\.\d+ .* or 'auto', got"):
        BatchGame(4, seed=0, num_players=3, threads=bad)  # type: ignore[arg-type]


@needs_two
def test_a_call_runs_on_the_threads_the_machine_gives(monkeypatch: pytest.MonkeyPatch, swap_chooser: None) -> None:
    # what the kernels' calls see inside batch.on_threads: one thread where the probe says threads do not pay, or
    # where the affinity mask allows one core, whatever count was asked for
    threads._chooser = chooser_on(FakeMachine(speedup=0.5))
    with batch.on_threads(2):
        assert numba.get_num_threads() == 1
    threads._chooser = chooser_on(FakeMachine(speedup=1.9))
    with batch.on_threads(2):
        assert numba.get_num_threads() == 2
    threads._chooser = ThreadChooser(adapt=False)
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {0})
    with batch.on_threads(2):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == batch.max_threads()  # the caller's setting is back


def test_the_probe_kernel_does_the_same_work_on_any_share_count() -> None:
    work = 1000
    one = threads._probe(work, 1)
    assert threads._probe(work, 2) == pytest.approx(one, rel=1e-9)
    assert threads._probe(work, 7) == pytest.approx(one, rel=1e-9)
    assert threads._timed_probe(1, 2) > 0.0


@needs_two
@pytest.mark.parametrize("speedup", [0.3, 1.9], ids=["falls-back", "threads"])
def test_the_env_is_the_one_thread_env_whatever_the_chooser_decides(speedup: float, swap_chooser: None) -> None:
    machine = FakeMachine(speedup)
    threads._chooser = chooser_on(machine)
    envs = [
        BourreVectorEnv(160, "heuristic", agent_factory=make_batched, num_players=5, threads=t) for t in (1, 2, "auto")
    ]
    first = [env.reset(seed=9) for env in envs]
    for obs, _ in first[1:]:
        np.testing.assert_array_equal(first[0][0], obs)
    pick = np.random.default_rng(1)
    for step in range(60):
        if step == 30:  # the machine changes mid-run: the chooser switches, the games do not
            machine.speedup = 1.9 if speedup < 1 else 0.3
            machine.now += PROBE_SECONDS * (PROBE_HISTORY + 1)
        masks = envs[0].action_masks()
        k = (pick.random(masks.shape[0]) * masks.sum(axis=1)).astype(np.int64)
        actions = np.argmax(np.cumsum(masks, axis=1) > k[:, None], axis=1)
        results = [env.step(actions) for env in envs]
        for obs, reward, terminated, truncated, _ in results[1:]:
            np.testing.assert_array_equal(results[0][0], obs)
            np.testing.assert_array_equal(results[0][1], reward)
            np.testing.assert_array_equal(results[0][2], terminated)
            np.testing.assert_array_equal(results[0][3], truncated)
    assert machine.probes > 0


@needs_two
def test_batch_game_is_the_one_thread_game_when_falling_back(swap_chooser: None) -> None:
    threads._chooser = chooser_on(FakeMachine(speedup=0.3))
    one, two = BatchGame(200, seed=3, num_players=6), BatchGame(200, seed=3, num_players=6, threads=2)
    assert one.random_play(40, with_observations=True) == two.random_play(40, with_observations=True)
    np.testing.assert_array_equal(one.last_random_chips, two.last_random_chips)
    np.testing.assert_array_equal(one.states, two.states)
    np.testing.assert_array_equal(one.observations(), two.observations())
    np.testing.assert_array_equal(one.legal_masks(), two.legal_masks())


LAUNCH_PROBE = """
import os
from numba.np.ufunc import parallel

seen = []
launch = parallel._launch_threads


def watched_launch():
    seen.append(os.environ.get("OMP_WAIT_POLICY"))
    return launch()


parallel._launch_threads = watched_launch
from bourre_env.batch import BatchGame

BatchGame(64, seed=0, num_players=5, threads=2).random_play(4)
print(repr(seen))
"""


def test_numba_threads_start_on_the_threading_layers_own_wait_policy() -> None:
    # Waiting threads forced asleep at once (OMP_WAIT_POLICY=PASSIVE) cost a quarter of the vector env's speed on a
    # quiet machine (docs/vector_env.md, "Threads on a quiet machine"); the layer's brief spin is kept. A process of
    # its own: numba's threads start once per process, and this one's may have started already.
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env["NUMBA_NUM_THREADS"] = "2"
    done = subprocess.run([sys.executable, "-c", LAUNCH_PROBE], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert seen, "numba's threads never started: the test saw nothing"
    assert set(seen) == {None}, seen


def test_busy_elsewhere_counts_the_other_runnable_threads_per_usable_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 2)
    readings = iter([3, 1, 3, 3, 9])  # the median, 3: two other threads beside this one
    assert threads.busy_elsewhere(lambda: next(readings), samples=5) == 1.0
    assert threads.busy_elsewhere(lambda: 1, samples=3) == 0.0  # only this thread runs
    assert threads.busy_elsewhere(lambda: None, samples=3) == 0.0  # no count to read: the machine counts as quiet
    # a process pinned to 2 of 16 CPUs sees the machine's count: its cores get their share of the others
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 16)
    assert threads.busy_elsewhere(lambda: 17, samples=1) == pytest.approx(16 * (2 / 16) / 2)


START_PROBE = """
import os
from numba.np.ufunc import parallel
from bourre_env import threads

seen = []
launch = parallel._launch_threads


def watched_launch():
    seen.append(os.environ.get("GOMP_SPINCOUNT"))
    return launch()


parallel._launch_threads = watched_launch
threads._runnable_now = lambda: RUNNABLE
from bourre_env.batch import BatchGame

BatchGame(64, seed=0, num_players=5, threads=2).random_play(4)
print(repr((seen, threads.start_spin(), os.environ.get("GOMP_SPINCOUNT"))))
"""


@pytest.mark.parametrize(
    ("runnable", "spin", "spincount"), [("1", "default", None), ("1 + 2 * (os.cpu_count() or 1)", "short", "10000")]
)
def test_numba_threads_start_with_a_short_spin_on_a_shared_machine(runnable: str, spin: str, spincount: str) -> None:
    # A process of its own: numba's threads start once per process. The kernel's runnable count is faked: with only
    # this thread runnable the layer's own spin, with two others per CPU the short spin, and the environment as it
    # was afterwards (child processes choose for themselves).
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env["NUMBA_NUM_THREADS"] = "2"
    script = START_PROBE.replace("RUNNABLE", runnable)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    seen, chosen, after = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert seen, "numba's threads never started: the test saw nothing"
    assert seen[0] == spincount, seen  # numba calls the launch before every parallel call; the first one starts them
    assert chosen == spin
    assert after is None
