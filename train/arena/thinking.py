"""Heavy built-in seats think in worker processes, so that no table stalls the others' round trips.

The arena plays every table on one event loop (``train.arena.match``), and a built-in agent's move is chosen in a
thread of that process. For ``random`` and ``heuristic`` that is cheap; a search agent (``pimc``, ``ismcts``) holds
the GIL in its compiled kernels (none releases it) and in the Python between them for milliseconds at a time, so
every other table's turns wait behind it (``benchmarks/arena_heavy_seat.py`` measures it). Here such a seat is a
``SeatProxy``: its agent lives in a worker process, built once with the seat's spec and seed, and every ``reset`` and
move goes there, so that the same seed and the same observations give the same actions as the agent built in place.

* ``build_seat(spec, seed)``: ``train.schedule.build_agent(spec, seed)`` for a cheap spec, a ``SeatProxy`` for a
  heavy one (``is_heavy``: the name before the first colon is one of ``HEAVY``, the search agents of
  ``agents.search``; an operator's user code is not: it may not pickle its way into a worker, and it is the
  operator's to make fast).
* ``SeatProxy``: ``reset()`` (before each deal, as agents have it; sent with the next move, not a round trip of its
  own), ``await act_async(observation)`` on the event loop, ``act(observation)`` for a caller that runs agents in a
  thread (it waits on the worker without the GIL), ``close()`` to free the agent in its worker (also done when the
  proxy is collected).
* The workers: ``workers()`` of them, one per core this process may use, less one for the event loop (at least one),
  started lazily at the first heavy seat, with the ``forkserver`` start method (``spawn`` where there is none: the
  server has threads, which ``fork`` does not copy safely). Each worker is a ``ProcessPoolExecutor`` of one process,
  so that a seat's moves always reach the worker that holds its agent (a shared pool may hand a task to any of its
  processes); a new seat goes to the worker with the fewest seats. Each worker first plays one game of every heavy
  agent, so that the compiled code is loaded before a table waits on it.
* A worker that dies (killed, out of memory) fails the moves of its seats with one line, ``AgentError`` naming the
  agent, the decision and the worker's end, and is replaced for the seats built after; no table waits on it forever.
* ``shutdown()``: at the server's exit, ends the workers (the moves still queued are dropped).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import multiprocessing
import os
import threading
import weakref
from collections.abc import Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import numpy as np

from agents.base import AgentError, choose

__all__ = ["HEAVY", "SeatProxy", "build_seat", "is_heavy", "shutdown", "workers"]

HEAVY = frozenset({"pimc", "ismcts"})
"""Registered agents whose moves think for milliseconds to seconds in compiled searches: their seats go to workers."""
WARM_TABLE = ("pimc:2", "ismcts:8", "heuristic")
"""The table of the game each worker plays first (small budgets: only the compiled code's loading matters)."""
MAX_WORKERS = 32
"""Worker processes at most, however many cores there are."""

# ---------------------------------------------------------------------------------------------- in a worker process
_agents: dict[str, Any] = {}  # seat id -> its agent, in the worker that holds the seat


def _warm() -> None:
    """Play one game with every heavy agent at a small budget: numba's cached code is loaded here, once (compiled
    first after an install, with the compile lines on stderr, this process named: the server's own say nothing of
    its workers' compiling)."""
    import bourre_env
    from bourre_env import compile_notice

    compile_notice.show_lines(f"search worker {os.getpid()}: ")
    from train.eval.duplicate import make_deals, play_deal
    from train.schedule import build_agent, table_rules

    table = [build_agent(spec, seed) for seed, spec in enumerate(WARM_TABLE)]
    play_deal(bourre_env.env(num_players=len(table)), table, make_deals(0, table_rules(len(table), {}), 1), 0)


def _act(seat: str, spec: str, seed: int, resets: int, observation: dict[str, np.ndarray], where: str) -> int:
    agent = _agents.get(seat)
    if agent is None:
        from train.schedule import build_agent

        agent = _agents[seat] = build_agent(spec, seed)
    reset = getattr(agent, "reset", None)
    for _ in range(resets):
        if callable(reset):
            reset()
    return choose(agent, observation, repr(spec), where)


def _close(seat: str) -> None:
    _agents.pop(seat, None)


# ---------------------------------------------------------------------------------------------- in the arena process
class _Worker:
    """One worker process (a one-process executor) and the seats it holds."""

    def __init__(self) -> None:
        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        self.executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context(method))
        self.seats = 0
        self.broken = False
        self.executor.submit(_warm)  # before any move: the first table does not wait on the compiler's cache

    def exit_code(self) -> int | None:
        processes = getattr(self.executor, "_processes", None) or {}
        for process in list(processes.values()):
            return process.exitcode  # type: ignore[no-any-return]
        return None


_lock = threading.Lock()
_workers: list[_Worker] = []
_ids = itertools.count()
_checked: set[str] = set()  # heavy specs built once here: they build


def workers() -> int:
    """Worker processes to run: the cores this process may use, less one for the event loop; 1 to ``MAX_WORKERS``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores - 1))


def _assign() -> _Worker:
    with _lock:
        _workers[:] = [w for w in _workers if not w.broken or w.seats > 0]
        live = [w for w in _workers if not w.broken]
        if len(live) < workers():
            worker = _Worker()
            _workers.append(worker)
        else:
            worker = min(live, key=lambda w: w.seats)
        worker.seats += 1
        return worker


def _release(worker: _Worker, seat: str) -> None:
    with _lock:
        worker.seats -= 1
    if not worker.broken:
        with contextlib.suppress(RuntimeError, BrokenProcessPool):  # shut down, or dead: its agents went with it
            worker.executor.submit(_close, seat)


class SeatProxy:
    """A heavy built-in seat whose agent lives in a worker process (module docstring)."""

    def __init__(self, spec: str, seed: int) -> None:
        self.spec = spec.strip()
        self.seed = int(seed)
        self.name = self.spec
        self.id = f"{os.getpid()}:{next(_ids)}"
        self._worker = _assign()
        self._resets = 0
        self._moves = 0
        self._finalizer = weakref.finalize(self, _release, self._worker, self.id)

    def reset(self) -> None:
        """Before each deal, as ``Agent.reset``: carried to the worker with the next move."""
        self._resets += 1

    def _submit(self, observation: Mapping[str, np.ndarray], where: str | None) -> Future[int]:
        if not self._finalizer.alive:
            raise AgentError(f"agent {self.spec!r}: its seat was closed")
        self._moves += 1
        where = where or f"move {self._moves} of its seat"
        resets, self._resets = self._resets, 0
        try:
            return self._worker.executor.submit(_act, self.id, self.spec, self.seed, resets, dict(observation), where)
        except (RuntimeError, BrokenProcessPool) as err:
            raise self._died(err) from None

    def _died(self, err: BaseException) -> AgentError:
        self._worker.broken = True
        code = self._worker.exit_code()
        end = f"exit code {code}" if code is not None else type(err).__name__
        return AgentError(f"agent {self.spec!r}: its worker process ended ({end}) at move {self._moves} of its seat")

    async def act_async(self, observation: Mapping[str, np.ndarray], where: str | None = None) -> int:
        """The agent's action for ``observation``, chosen in its worker while the event loop goes on; ``where``:
        the decision, as ``agents.base.choose`` names it in an ``AgentError`` (else the seat's move number)."""
        future = self._submit(observation, where)
        try:
            return await asyncio.wrap_future(future)
        except BrokenProcessPool as err:
            raise self._died(err) from None

    def act(self, observation: Mapping[str, np.ndarray]) -> int:
        """As ``act_async``, for a caller in a thread: it waits on the worker, the GIL free meanwhile."""
        future = self._submit(observation, None)
        try:
            return future.result()
        except BrokenProcessPool as err:
            raise self._died(err) from None

    def close(self) -> None:
        """Free the agent in its worker; the seat answers no move after."""
        self._finalizer()


def is_heavy(spec: Any) -> bool:
    """Whether a seat of ``spec`` thinks in a worker: a registered search agent (``HEAVY``), any budget."""
    return isinstance(spec, str) and spec.strip().partition(":")[0] in HEAVY


def build_seat(spec: Any, seed: int) -> Any:
    """A seat's agent: ``SeatProxy(spec, seed)`` for a heavy spec, else ``build_agent(spec, seed)``. A heavy spec is
    built here as well the first time (and dropped), so that a bad one fails before any worker is asked
    (``ValueError``)."""
    from train.schedule import build_agent

    if not is_heavy(spec):
        return build_agent(spec, seed)
    if spec not in _checked:
        build_agent(spec, seed)
        _checked.add(spec)
    return SeatProxy(spec, seed)


def shutdown() -> None:
    """End every worker (at the server's exit); a later heavy seat starts new ones."""
    with _lock:
        ending, _workers[:] = list(_workers), []
    for worker in ending:
        worker.broken = True
        worker.executor.shutdown(wait=False, cancel_futures=True)
