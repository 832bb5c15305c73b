"""How many of numba's threads a threaded call runs on: the cores this process may use, and what a shared machine
gives it now.

The threaded kernels (``bourre_env.batch``, ``bourre_env.vector_env``, ``agents.heuristic.batch``) cut the rows of a
call into one contiguous share per thread, and a call ends when its slowest thread ends (numba's parallel region
joins all its threads). On a quiet machine that is what one wants; on a machine where other processes are busy, one
of the threads is off its core for a scheduler slice (milliseconds) in many calls, and every call waits for it: on
the 2-core machine with one other busy process, two threads ran the vector env at a sixth to a sixteenth of their
quiet speed, where one thread keeps all of its own (docs/vector_env.md, "Shared cores").

A call waits for its slowest thread, and the threads wait for the next call between calls. How they wait is the
threading layer's: numba's default on Linux is OpenMP (GNU libgomp), whose threads, after a call, spin on their cores
for a while (about 300,000 iterations, well under a millisecond) and then sleep until the next one. That brief spin is
what the vector env needs on a quiet machine: its dozens of threaded calls per learner step come microseconds apart,
so a thread that is still spinning takes the next call at once, where one that slept waits for the kernel to wake it.
Forcing threads to sleep at once (``OMP_WAIT_POLICY=PASSIVE``, what this module did until 2026-12) cost a
quarter of the speed quiet (the vector env at 1,024 tables 0.72x, ``BatchGame.step`` 0.73x) and bought nothing under
contention that the thread count below does not already buy (docs/vector_env.md, "Shared cores": with one and two busy
processes beside it the spinning chooser keeps within noise of the sleeping one). So the layer's own brief spin stays on
a quiet machine, and whoever wants another policy sets ``OMP_WAIT_POLICY`` (or ``GOMP_SPINCOUNT``) in the environment
as usual.

One choice is made once, as numba's threads start (the first threaded call of the process): how long they spin. The
brief spin pays on a quiet machine; on a shared one, a spinning thread holds a core that another process (or a working
thread of this one) wants, and beside one busy process on the 2-core machine a short spin
(``GOMP_SPINCOUNT=SHORT_SPIN``, about 10,000 iterations) kept 1.01-1.05x of passive waiting where the default kept
0.89-0.94x (docs/vector_env.md, "Threads on a quiet machine" and "The spin chosen at start"). So the first threaded call
looks at the machine (``busy_elsewhere``: the runnable threads the kernel counts now, less this one, as a share of the
cores this process may use) and starts the threads with the short spin when another process is busy on them
(``SHARED_AT``), with the layer's own spin otherwise. The policy cannot change once the threads run, and the probe below
cannot make this choice (it runs on the threads, so it would start them first); ``start_spin()`` says which was chosen.
An ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` in the environment, or ``BOURRE_THREADS_ADAPT=0``, leaves the choice to the
threading layer, and so does a process that loaded libgomp before its first threaded call: torch loads a copy of its own
at import, whose variables are read then (in the trainers, which import torch first, the layer's spin runs).

What degrades a threaded call on a shared machine is the thread that is off its core, and for that every threaded
call asks ``threads_now(n)`` how many threads to run on:

* at most the cores this process may use (``usable_cores``: its affinity mask, ``os.sched_getaffinity``), which
  may be fewer than numba's pool (``NUMBA_NUM_THREADS``, fixed at import) when the process was pinned after that,
  or the pool was sized by hand;
* and one, while threads do not pay: every ``PROBE_SECONDS`` a short probe (``_probe``: the same arithmetic cut
  into ``n`` shares, timed on ``n`` threads and on one) measures how much faster ``n`` threads are on the machine
  as it is now; while the median of the last ``PROBE_HISTORY`` probes is under ``PAYS`` (1.3x), the calls run on one
  thread. A fixed bar, not one that grows with ``n``: on many cores the probe's small work does not scale as the real
  calls do, and a bar of ``0.65 n`` would send a 16-core machine's calls to one thread.

The thread count changes only the speed: each row is a table with its own random stream, so every count gives the
results of one thread, bit for bit (``tests/test_batch_threads.py``, ``tests/test_vector_env_threads.py``).
``BOURRE_THREADS_ADAPT=0`` in the environment turns the probe off (the counts asked for, capped by the affinity
mask): the code before it, for ``benchmarks/shared_cores.py``.
"""

from __future__ import annotations

import os
import statistics
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numba
import numpy as np
from numba import njit, prange

__all__ = [
    "ThreadChooser",
    "auto_threads",
    "busy_elsewhere",
    "chooser",
    "on_threads",
    "start_spin",
    "threads_now",
    "usable_cores",
]

PROBE_SECONDS = 0.25
"""How often (wall seconds, at most) the probe measures what threads gain on the machine as it is now."""

PROBE_HISTORY = 5
"""Probes whose median decides: one probe that a scheduler slice happened to hit does not switch the threads."""

PAYS = 1.3
"""Threads are used while the probe's speed-up on ``n`` threads is at least ``PAYS`` (on 2 threads: at a
probe's speed-up near 1.0 the real calls, shorter and many more, are slower on two threads than on one); under that,
one thread."""

PROBE_WORK = 100_000
"""Iterations of the probe's arithmetic in all (a millisecond or less on one core of the 2-core machine): short
enough to cost under a percent every ``PROBE_SECONDS``, long enough that a sleeping thread's wake-up and the join
are a small part of it."""


SHORT_SPIN = 10_000
"""``GOMP_SPINCOUNT`` of threads started on a shared machine (libgomp's own is about 300,000 iterations)."""

SHARED_AT = 0.5
"""Other runnable threads per usable core at which the machine counts as shared when the threads start: on 2 cores,
one other busy process."""

START_SAMPLES = 10
"""Readings of the kernel's runnable count, a millisecond apart, whose median ``busy_elsewhere`` takes: one reading
can catch a short-lived process, or this one's other threads, at the wrong moment."""


def usable_cores() -> int:
    """The CPUs this process may run on: its affinity mask (``taskset``, a container's cpuset), else the machine's."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity masks on this platform
        return max(1, os.cpu_count() or 1)


def pool_size() -> int:
    """Numba's pool: ``NUMBA_NUM_THREADS`` (by default the CPUs of the affinity mask at import)."""
    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]  # numba sets its config at import


def auto_threads() -> int:
    """The thread count ``threads="auto"`` stands for: the cores this process may use, up to numba's pool."""
    return max(1, min(pool_size(), usable_cores()))


@njit(cache=True, parallel=True)
def _probe(work: int, shares: int) -> float:
    """``work`` iterations of arithmetic cut into ``shares`` shares, run on numba's threads as the kernels' shares
    are; returns a sum so that nothing is optimized away."""
    sums = np.zeros(shares)
    for c in prange(shares):
        x = 0.0
        for i in range(c * work // shares, (c + 1) * work // shares):
            x += (i * 1.000001) % 7.0
        sums[c] = x
    return float(sums.sum())


def _timed_probe(threads: int, shares: int) -> float:
    """Seconds of one probe on ``threads`` threads."""
    saved = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        start = time.perf_counter()
        _probe(PROBE_WORK, shares)
        return time.perf_counter() - start
    finally:
        numba.set_num_threads(saved)


class ThreadChooser:
    """Decides the threads of each threaded call (``threads_now``); see the module docstring.

    ``clock`` and ``measure`` (seconds of a probe on ``threads`` threads, given the share count) are parameters so
    that the tests can drive the decision without timing anything."""

    def __init__(
        self,
        *,
        adapt: bool = True,
        clock: Callable[[], float] = time.monotonic,
        measure: Callable[[int, int], float] = _timed_probe,
        cores: Callable[[], int] = usable_cores,
    ) -> None:
        self.adapt = adapt
        self._clock = clock
        self._measure = measure
        self._cores = cores
        # per thread count asked for: the last probes' speed-ups, and when the last was taken
        self._speedups: dict[int, deque[float]] = {}
        self._probed_at: dict[int, float] = {}

    def threads_now(self, n: int) -> int:
        """How many threads a call cut into ``n`` shares runs on now: ``n``, fewer where the affinity mask allows
        fewer cores, or 1 while the probe says threads do not pay."""
        n = min(n, self._cores())
        if n <= 1 or not self.adapt:
            return max(1, n)
        now = self._clock()
        if now - self._probed_at.get(n, -np.inf) >= PROBE_SECONDS:
            self._probed_at[n] = now
            one, many = self._measure(1, n), self._measure(n, n)
            history = self._speedups.setdefault(n, deque(maxlen=PROBE_HISTORY))
            history.append(one / max(many, 1e-9))
        return n if self.speedup(n) >= PAYS else 1

    def speedup(self, n: int) -> float:
        """The median speed-up of ``n`` threads over one in the last probes (``n`` before any probe)."""
        history = self._speedups.get(n)
        return statistics.median(history) if history else float(n)


_chooser = ThreadChooser(adapt=os.environ.get("BOURRE_THREADS_ADAPT", "1") != "0")


def chooser() -> ThreadChooser:
    """The process's ``ThreadChooser``, shared by every game and player (they share numba's one pool)."""
    return _chooser


def threads_now(n: int) -> int:
    """``chooser().threads_now(n)``, numba's threads started first (``start_spin``)."""
    _launch()
    return _chooser.threads_now(n)


def _runnable_now() -> int | None:
    """The threads the kernel counts as runnable now, on the whole machine (``/proc/loadavg``'s fourth field, this
    one included); None where there is no such file."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return None


def busy_elsewhere(read: Callable[[], int | None] | None = None, samples: int = START_SAMPLES) -> float:
    """Other runnable threads per core this process may use, now: the median of ``samples`` readings of the
    machine's runnable count, less this thread, scaled to the share of the machine's CPUs that the affinity mask
    gives (a pinned process sees the machine's count); 0.0 where the count cannot be read. ``read``: the count's
    source (``/proc/loadavg``)."""
    read = read or _runnable_now
    counts = []
    for i in range(samples):
        if i:
            time.sleep(0.001)
        count = read()
        if count is None:
            return 0.0
        counts.append(count)
    others = max(0.0, statistics.median(counts) - 1)
    machine = max(1, os.cpu_count() or 1)
    return others * min(1.0, usable_cores() / machine) / usable_cores()


_start_spin: str | None = None


def start_spin() -> str | None:
    """How numba's threads were started by this module: ``"short"`` (``GOMP_SPINCOUNT=SHORT_SPIN``, a shared
    machine), ``"default"`` (the threading layer's own), ``"environment"`` (a policy set there, or the probe off),
    ``"started elsewhere"`` (other code started them first); None before the first threaded call."""
    return _start_spin


def _launch() -> None:
    """Start numba's threads once, with the short spin if the machine is shared now (module docstring); the
    environment is left as it was."""
    global _start_spin
    if _start_spin is not None:
        return
    from numba.np.ufunc import parallel

    if parallel._is_initialized or _gomp_loaded():
        _start_spin = "started elsewhere"  # libgomp reads its variables once, as it loads: too late to choose
        return
    if not _chooser.adapt or "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        _start_spin = "environment"
        return
    shared = busy_elsewhere() >= SHARED_AT
    _start_spin = "short" if shared else "default"
    if shared:
        os.environ["GOMP_SPINCOUNT"] = str(SHORT_SPIN)  # libgomp reads it as numba loads it, below
    try:
        parallel._launch_threads()  # type: ignore[no-untyped-call]
    finally:
        if shared:
            del os.environ["GOMP_SPINCOUNT"]


def _gomp_loaded() -> bool:
    """Whether a libgomp is loaded in this process already (torch loads its own copy at import, and numba's
    threads then run on it, with the variables it read then)."""
    try:
        with open("/proc/self/maps") as f:
            return any("libgomp" in line for line in f)
    except OSError:
        return False


@contextmanager
def on_threads(n: int) -> Iterator[int]:
    """Run the parallel kernels inside on the threads ``threads_now(n)`` chooses (the kernel still cuts its rows into
    ``n`` shares: fewer threads take several shares each); yields that count. The setting is per calling thread, and
    the caller's own is restored after."""
    threads = threads_now(n)
    saved = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield threads
    finally:
        numba.set_num_threads(saved)
