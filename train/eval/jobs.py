"""The project's one mechanism for parallel work: ``run_jobs`` runs a list (or a generator) of jobs in a pool of
spawned processes on this machine, or as Ray tasks on a local instance or a cluster (``train.eval.ray_backend``),
and returns their results in order. Duplicate evaluation, tournaments, the expert-iteration trainer's search and
the batched trainer's final evaluation use it. The batched trainer's rollout workers (``train.ppo.workers``) are
a ``JobRunner`` that ``run_jobs`` hands the jobs to instead, so that its evaluations during training run on them;
they start their processes with the same ``ignore_interrupts``, so that Ctrl-C means the same everywhere: the
parent alone decides, and stops its workers at once.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import FrameType
from typing import Any, Protocol, TypeVar

from tqdm import tqdm

__all__ = [
    "BACKENDS",
    "JobRunner",
    "check_backend",
    "counts_postfix",
    "deal_done",
    "ignore_interrupts",
    "run_jobs",
    "usable_cpus",
    "usable_workers",
]

# Progress within a job: where a finished deal is reported, and the job it belongs to. A job of 20 deals of a search
# agent takes minutes: run here (one worker), the bar moves deal by deal. A pool's workers move it job by job, as
# its result comes back (a queue of per-deal reports from the workers made Ctrl-C hang in CI: not worth the risk).
_report: Callable[[int, int, Mapping[str, Any] | None], None] | None = None
_job_index = -1


def deal_done(count: int = 1, counts: Mapping[str, Any] | None = None) -> None:
    """A job tells ``run_jobs``'s progress bar that ``count`` more of its deals are played (nothing if no bar
    listens: a pool's worker, a Ray task, a trainer's rollout worker, or a direct call), and its candidate's counts
    so far, where it keeps any (``counts_postfix``)."""
    if _report is not None:
        _report(_job_index, count, counts)


def counts_postfix(parts: Iterable[Mapping[str, Any] | None], seconds: float) -> str:
    """The bar's note on what the jobs' candidates counted (an agent's ``stats.as_dict()``: the llm agent's), summed
    over ``parts``: its moves and their rate over ``seconds``, tokens and fallbacks; empty where nothing moved."""
    from bourre_env.words import plural

    kept = [part for part in parts if part]

    def total(key: str) -> int:
        return sum(int(part.get(key) or 0) for part in kept)

    moves = total("decisions")
    if not moves:
        return ""
    words = [f"{plural(moves, 'move')} ({moves / max(seconds, 1e-9):,.1f}/s)"]
    tokens = total("prompt_tokens") + total("completion_tokens")
    if tokens:
        words.append(plural(tokens, "token"))
    if fallbacks := total("fallbacks"):
        words.append(plural(fallbacks, "fallback"))
    return ", ".join(words)


def _run_tracked(fn: Callable[[Any], Any], i: int, job: Any) -> Any:
    global _job_index
    _job_index = i
    return fn(job)


_Job = TypeVar("_Job")
_Result = TypeVar("_Result")


BACKENDS = ("local", "ray")
"""Where chunks run: ``local``, a process pool on this machine; ``ray``, Ray tasks (``train.eval.ray_backend``)."""


class JobRunner(Protocol):
    """Workers that are already running and take jobs between their own work: the batched trainer's rollout
    workers (``train.ppo.workers.WorkerPool``), on which its evaluations run instead of in a pool of their own.
    ``run_jobs(fn, jobs, done)`` returns ``[fn(job) for job in jobs]`` in order and calls ``done(i)`` as job ``i``
    finishes."""

    def run_jobs(self, fn: Callable[[Any], Any], jobs: Sequence[Any], done: Callable[[int], None]) -> list[Any]: ...


def check_backend(backend: str, address: str | None) -> None:
    if backend not in BACKENDS:
        raise ValueError(f"backend: expected one of {BACKENDS}, got {backend!r}")
    if address is not None and backend != "ray":
        raise ValueError(f"address: a Ray cluster's address goes with backend 'ray', got backend {backend!r}")


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system tells it; ``bourre eval`` and ``bourre
    ladder`` start one worker on each by default)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def usable_workers(workers: int, jobs: int | None = None, cpus: int | None = None) -> int:
    """The processes a local pool starts for ``workers`` asked: at most one per job (``jobs``, where known) and one
    per CPU this process may run on (``cpus``, default: the system's figure), with a warning on stderr when the
    CPUs cap it; a worker past them only adds start-up time and memory, and 100,000 of them would never start."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers: expected an integer >= 1, got {workers!r}")
    if cpus is None:
        cpus = usable_cpus()
    count = workers if jobs is None else min(workers, max(jobs, 1))
    if count > cpus:
        print(
            f"warning: workers: {workers:,} asked for, this machine runs {cpus} at once; using {cpus}", file=sys.stderr
        )
        count = cpus
    return count


def run_jobs(
    fn: Callable[[_Job], _Result],
    jobs: Iterable[_Job],
    sizes: Iterable[int],
    workers: int,
    progress: bool,
    desc: str,
    backend: str = "local",
    address: str | None = None,
    total: int | None = None,
    connect_timeout: float = 60.0,
    runner: JobRunner | None = None,
    bar: Any = None,
    counts_of: Callable[[_Result], Mapping[str, Any] | None] | None = None,
) -> list[_Result]:
    """``[fn(job) for job in jobs]``, in ``workers`` processes, with a progress bar counting ``sizes`` (one per
    job; ``total`` is their sum, needed when ``sizes`` is not a sequence); with ``backend="ray"``, as Ray tasks
    on a local instance of ``workers`` CPUs or the cluster at ``address`` (given up, with a ``ValueError``, if it
    does not answer within ``connect_timeout`` seconds).

    ``jobs`` may be a generator: it is drawn a few jobs ahead of the workers, so that the jobs of a long run
    are never all in memory. On Ctrl-C (``KeyboardInterrupt``) the workers are stopped at once, before the
    interrupt goes on. With a ``runner`` (``JobRunner``) the jobs go to its workers instead, and ``workers``,
    ``backend`` and ``address`` are not used. ``bar``: a tqdm bar of the caller's to move, by deals, instead of a
    bar of its own (``progress`` and ``desc`` are then not used): the ladder's, over all its evaluations.
    ``counts_of``: a finished job's candidate counts, in its result (``counts_postfix`` shows them on the bar, with
    the counts a job here reports deal by deal)."""
    check_backend(backend, address)
    if runner is not None:
        job_list, size_list = list(jobs), list(sizes)
        with tqdm(total=sum(size_list), disable=not progress, unit="deal", desc=desc, dynamic_ncols=True) as bar:
            return runner.run_jobs(fn, job_list, lambda i: bar.update(size_list[i]))
    if backend == "ray":
        from train.eval.ray_backend import run_jobs_ray  # local: Ray is an optional extra

        job_list, size_list = list(jobs), list(sizes)
        results = run_jobs_ray(
            fn, job_list, size_list, workers, progress and bar is None, desc, address, connect_timeout
        )
        if bar is not None:  # the caller's bar moves once the tasks are back
            bar.update(sum(size_list))
        return results
    if isinstance(sizes, Sequence) or total is None:
        sizes = list(sizes)
        total = sum(sizes)
        workers = usable_workers(workers, len(sizes))
    else:
        workers = usable_workers(workers)
    desc = desc if len(desc) <= 48 else desc[:47] + "…"  # a long spec (a file's path, an llm's) would fill the bar
    own = tqdm(total=total, disable=not progress, unit="deal", desc=desc, dynamic_ncols=True) if bar is None else None
    with contextlib.nullcontext(bar) if own is None else own as moved:
        counted = _CountsNote(moved, counts_of)
        if workers <= 1 or (isinstance(jobs, Sequence) and len(jobs) <= 1):
            return _run_here(fn, jobs, sizes, moved, counted)
        return _run_in_pool(fn, jobs, sizes, workers, moved, counted)


class _CountsNote:
    """The bar's note of the candidates' counts (``counts_postfix``): each job's latest, over the time since the
    start."""

    def __init__(self, bar: Any, counts_of: Callable[[Any], Mapping[str, Any] | None] | None) -> None:
        self.bar = bar
        self.counts_of = counts_of
        self.started = time.perf_counter()
        self.by_job: dict[int, Mapping[str, Any]] = {}

    def job_counts(self, i: int, counts: Mapping[str, Any] | None) -> None:
        if counts:
            self.by_job[i] = counts
            note = counts_postfix(self.by_job.values(), time.perf_counter() - self.started)
            if note and hasattr(self.bar, "set_postfix_str"):
                self.bar.set_postfix_str(note, refresh=False)

    def job_result(self, i: int, result: Any) -> None:
        if self.counts_of is not None:
            self.job_counts(i, self.counts_of(result))


def _run_here(
    fn: Callable[[_Job], _Result], jobs: Iterable[_Job], sizes: Iterable[int], bar: Any, counted: _CountsNote
) -> list[_Result]:
    """The jobs one after another in this process, the bar moved by each deal a job reports (``deal_done``)."""
    global _report
    reported = [0]

    def report(i: int, count: int, counts: Mapping[str, Any] | None) -> None:
        reported[0] += count
        counted.job_counts(i, counts)
        bar.update(count)

    results: list[_Result] = []
    before, _report = _report, report
    try:
        for i, (job, size) in enumerate(zip(jobs, sizes, strict=True)):
            reported[0] = 0
            results.append(_run_tracked(fn, i, job))
            counted.job_result(i, results[-1])
            bar.update(size - reported[0])  # what the job did not report itself
    finally:
        _report = before
    return results


def ignore_interrupts() -> None:
    """Worker start-up: Ctrl-C reaches every process of the terminal's group, and only the parent decides what
    it means; a terminate from the parent unwinds the worker (``SystemExit``), so that a file it is writing
    through ``atomic_files`` leaves no temporary behind."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def unwind(signum: int, frame: FrameType | None) -> None:
        # one unwinding only: a second terminate (the pool's exit sends one too) must not cut short the clean-up
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, unwind)


def _run_in_pool(
    fn: Callable[[_Job], _Result],
    jobs: Iterable[_Job],
    sizes: Iterable[int],
    workers: int,
    bar: Any,
    counted: _CountsNote,
) -> list[_Result]:
    # spawn, not fork: the parent may hold threads (tqdm's monitor, BLAS), and forking a threaded process can
    # deadlock; a spawned worker reloads the cached compiled core in about a second.
    context = multiprocessing.get_context("spawn")
    done: queue.Queue[tuple[int, Any, BaseException | None]] = queue.Queue()
    results: list[Any] = []
    sizes_of: list[int] = []
    started_before = set(multiprocessing.active_children())
    try:
        pool = context.Pool(processes=workers, initializer=ignore_interrupts)
    except BaseException:
        # a terminate or Ctrl-C while the pool starts: Pool ends its workers only on an Exception
        _end_processes(set(multiprocessing.active_children()) - started_before)
        raise
    try:
        pending = 0
        for job, size in zip(jobs, sizes, strict=True):
            i = len(results)
            results.append(None)
            sizes_of.append(size)
            pool.apply_async(
                fn,
                (job,),
                callback=functools.partial(_finished, done, i),
                error_callback=functools.partial(_failed, done, i),
            )
            pending += 1
            # Two jobs per worker in flight: enough to keep them busy, few enough to draw jobs as they are needed.
            while pending >= 2 * workers:
                pending -= _collect(done, results, sizes_of, bar, counted)
        while pending:
            pending -= _collect(done, results, sizes_of, bar, counted)
        pool.close()
    except BaseException:
        _stop_workers(pool)  # at once: the jobs in flight are abandoned, queued ones never start
        raise
    pool.join()
    return results


STOP_GRACE_SECONDS = 5.0
"""A pool told to stop has this long to end its workers (SIGTERM) before the stragglers are killed (SIGKILL)."""


def _stop_workers(pool: Any) -> None:
    """``Pool.terminate`` with a deadline. It can wait forever: it takes the task queue's lock, then joins workers
    it sent SIGTERM; an idle worker blocked on that lock never wakes when the signal lands on another of its threads
    (OpenMP's, torch's), so it never unwinds. So the pool terminates in a thread of its own, and workers still alive
    after ``STOP_GRACE_SECONDS`` are killed, which ends its joins."""
    stopper = threading.Thread(target=pool.terminate, name="pool-terminate", daemon=True)
    stopper.start()
    stopper.join(STOP_GRACE_SECONDS)
    if not stopper.is_alive():
        return
    for worker in list(getattr(pool, "_pool", ())):  # the worker processes; private, so read defensively
        if worker.exitcode is None:
            worker.kill()
    stopper.join(STOP_GRACE_SECONDS)


def _end_processes(processes: Iterable[multiprocessing.process.BaseProcess]) -> None:
    """SIGTERM, ``STOP_GRACE_SECONDS`` to unwind, then SIGKILL."""
    processes = list(processes)
    for process in processes:
        process.terminate()
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.exitcode is None:
            process.kill()
            process.join(STOP_GRACE_SECONDS)


def _finished(done: queue.Queue[tuple[int, Any, BaseException | None]], i: int, result: Any) -> None:
    done.put((i, result, None))


def _failed(done: queue.Queue[tuple[int, Any, BaseException | None]], i: int, error: BaseException) -> None:
    done.put((i, None, error))


def _collect(
    done: queue.Queue[tuple[int, Any, BaseException | None]],
    results: list[Any],
    sizes: list[int],
    bar: Any,
    counted: _CountsNote,
) -> int:
    """Wait for one finished job, store its result (or raise its error); returns 1."""
    i, result, error = done.get()
    if error is not None:
        raise error
    results[i] = result
    counted.job_result(i, result)
    bar.update(sizes[i])
    return 1
