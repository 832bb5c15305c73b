"""Rollout workers of the batched trainer (``bourre train --workers N [--backend ray [--address A]]``).

With ``--workers 1`` the trainer steps its tables in its own process (``train.ppo.rollout.Collector``)
and nothing here is used. With N >= 2 the tables are shared out among N *rollout workers*, each a
process (spawned, as ``train.eval.duplicate`` spawns its pool; or a Ray actor with ``--backend ray``)
with its own ``Collector``: its ``BatchGame`` tables, its opponents, its snapshots of the pool and a
CPU copy of the network. The learner (the trainer's process, on ``--device``) never steps a table.

The scheme: one rollout in flight while the learner updates
-----------------------------------------------------------
The learner sends the current weights (and the pool's snapshot files) to every worker, and while the
workers play their share of the next rollout with them, it runs the PPO update on the rollout it has
just received. So the rollout of update k+1 is played by the weights from before update k: the
policy that acts lags the one that learns by exactly one update. The learner's probability ratios are
taken against the log-probabilities of the weights that really acted, so PPO's clipping and KL stop see
that lag as they see the drift of an update's own epochs. The lag is fixed, never a matter of which
process is faster, so a run is reproducible from its seed and worker count (the workers' tables are
seeded by the run's seed, the step count where it (re)started and the worker's index).

Why not fully synchronous rollouts (learner and workers in turn, no lag)? The update is most of a
step's cost on the CPU (``docs/training.md``: about two thirds), and synchronous workers only share
out the rest: their speed-up is at most (R + U) / (R / N + U) for rollout and update costs R and U
per step, 1.2x here whatever N. Overlapping them makes it (R + U) / max(U, R / N): the learner never
waits once N >= R / U.

What a worker sends back is the decisions of its deals that ended (``Rollout``): observations, masks,
actions, the acting policy's log-probabilities and values, rewards and trajectory links, exactly the
rows a one-process ``Collector`` would have used in its update. Decisions of deals still under way stay
with the worker (their values are recomputed with the next weights it receives, as the one-process
trainer recomputes them) and go out with the rollout in which their deal ends. With sessions
(``--session K``) a worker sends every decision whose successor is known, as the one-process collector
uses them (``train.ppo.rollout.gae``'s ``truncate``): one cut at the rollout's end goes with the value of
its successor, the seat's latest decision, which stays with the worker (``Rollout.bootstrap``).

Jobs between rollouts: the pools are also a ``train.eval.jobs.JobRunner`` (``run_jobs``), so that the
trainer's evaluations run on the workers, each taking its share of the chunks after the rollout it is playing;
a rollout that comes back while the learner waits for the jobs is kept for ``receive``.

Faults: a worker that raises sends its error back; one that dies (killed, out of memory) is seen by its
process sentinel (or by Ray as a dead actor). Either way the trainer gets a ``WorkerError`` naming the
worker and the reason, stops the others, saves its checkpoint (its network is the last good update's)
and exits with a one-line message. Workers ignore Ctrl-C: the trainer decides, stops them and saves.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import multiprocessing
import multiprocessing.connection
import os
import time
import traceback
from collections.abc import Callable, Sequence
from contextlib import ExitStack, suppress
from typing import Any

import numpy as np
import torch

from train.learning.policy_net import PolicyNet
from train.ppo.league import League
from train.ppo.rollout import Collector, SeatPool, Transitions, gae

__all__ = [
    "Rollout",
    "RolloutWorker",
    "WorkerConfig",
    "WorkerError",
    "WorkerPool",
    "auto_workers",
    "collector_seed",
    "ReceivedBatch",
    "decision_shares",
    "network_weights",
    "start_workers",
    "table_shares",
]


class WorkerError(RuntimeError):
    """A rollout worker raised or died; the message names it and says why (one line)."""


def auto_workers(cpus: int | None = None, gpu_learner: bool = False) -> int:
    """The worker count of ``--workers auto`` (see ``docs/training.md``, the cost model): 1 (the tables in the
    learner's process) on 2 CPUs or fewer, where a measured 2-worker run was not faster; else 2 with a CPU learner,
    whose update costs about twice a rollout, so that one worker already keeps it busy and a second covers the
    pipes and the machine's other work; with a GPU learner the CPUs less one, at most 8."""
    cpus = cpus if cpus is not None else (os.cpu_count() or 1)
    if cpus <= 2:
        return 1
    return min(8, cpus - 1) if gpu_learner else 2


def collector_seed(seed: int, num_timesteps: int, worker: int | None = None) -> int:
    """The seed of the tables of the one-process collector (``worker`` None) or of rollout worker ``worker``; a
    resumed run deals new tables, seeded by where it stands."""
    base = seed * 1_000_003 + num_timesteps
    return base if worker is None else base * 64 + 1 + worker


def table_shares(tables: int, workers: int) -> list[int]:
    """The tables of each worker: as equal as can be, the first ones one more."""
    return [tables // workers + (1 if i < tables % workers else 0) for i in range(workers)]


@dataclasses.dataclass(frozen=True)
class WorkerConfig:
    """What a rollout worker needs to build its collector (picklable: it goes to a spawned process or Ray actor)."""

    index: int
    hidden: tuple[int, ...]
    privileged_critic: bool
    players: tuple[int, ...]
    tables: int
    pool: SeatPool
    seed: int
    reward_scale: float
    torch_threads: int = 1
    rule_options: dict[str, Any] = dataclasses.field(default_factory=dict)
    session: int = 1
    league: tuple[str, ...] = ()  # the league's member specs, its share and power (train.ppo.league)
    league_share: float = 0.5
    league_power: float = 2.0


@dataclasses.dataclass
class Rollout:
    """The decisions of a worker's finished deals (all complete: each trajectory ends in a ``done`` decision),
    with ``next`` indexing into these rows; ``steps``: the decisions the worker added in this rollout (what the
    step count counts, as in one process); ``stats`` and ``seconds``: the collector's figures for it;
    ``bootstrap``: with sessions, for a decision cut at the rollout's end (``next`` -1, not ``done``) the value of
    its successor, which the worker keeps; NaN elsewhere (always with single deals)."""

    obs_ptr: np.ndarray
    obs_idx: np.ndarray
    obs_val: np.ndarray
    hidden: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    masks: np.ndarray
    actions: np.ndarray
    logp: np.ndarray
    values: np.ndarray
    rewards: np.ndarray
    done: np.ndarray
    next: np.ndarray
    steps: int
    stats: dict[str, float]
    seconds: dict[str, float]
    bootstrap: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.actions)

    def hidden_counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The hidden hands as ``Transitions.append`` takes them (idx, val, counts)."""
        if self.hidden is None:
            return None
        ptr, idx, val = self.hidden
        return idx, val, np.diff(ptr)


def _sparse_rows_of(store: Any, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``rows`` of a ``SparseStore`` as (ptr, idx, val) of their own."""
    starts, ends = store.ptr[rows], store.ptr[rows + 1]
    counts = ends - starts
    ptr = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    entries = np.repeat(starts - ptr[:-1], counts) + np.arange(ptr[-1])
    return ptr, store.idx[entries].copy(), store.val[entries].copy()


def take_finished(transitions: Transitions, complete: np.ndarray, steps: int, stats: Any, seconds: Any) -> Rollout:
    """The complete decisions of ``transitions`` as a ``Rollout`` (``next`` renumbered among them; a decision whose
    next one is not complete, cut at the rollout's end, gets -1 and that one's value as its ``bootstrap``)."""
    rows = np.flatnonzero(complete)
    new_index = np.cumsum(complete) - 1
    nxt = transitions.next[rows]
    cut = (nxt >= 0) & ~complete[np.maximum(nxt, 0)]
    bootstrap = np.where(cut, transitions.values[np.maximum(nxt, 0)], np.nan).astype(np.float32)
    nxt = np.where(cut, -1, nxt)
    obs = _sparse_rows_of(transitions.obs, rows)
    hidden = None if transitions.hidden is None else _sparse_rows_of(transitions.hidden, rows)
    return Rollout(
        *obs,
        hidden,
        transitions.masks[rows].copy(),
        transitions.actions[rows].copy(),
        transitions.logp[rows].copy(),
        transitions.values[rows].copy(),
        transitions.rewards[rows].copy(),
        transitions.done[rows].copy(),
        np.where(nxt >= 0, new_index[np.maximum(nxt, 0)], -1).astype(np.int64),
        steps,
        dict(stats),
        dict(seconds),
        bootstrap,
    )


class RolloutWorker:
    """One worker's tables and network: ``rollout(weights, snapshots, decisions)`` plays at least ``decisions``
    learner decisions with those weights and returns the finished deals' decisions. The same object runs in a
    spawned process, as a Ray actor, or in the caller's process (the tests)."""

    def __init__(self, config: WorkerConfig) -> None:
        torch.set_num_threads(config.torch_threads)
        self.config = config
        self.net = PolicyNet(config.hidden, privileged_critic=config.privileged_critic)
        self.collector = Collector(
            self.net,
            config.players,
            config.tables,
            config.pool,
            seed=config.seed,
            reward_scale=config.reward_scale,
            rule_options=config.rule_options,
            session=config.session,
            league=(
                League(config.league, config.league_share, config.seed, power=config.league_power)
                if config.league
                else None
            ),
        )

    def rollout(self, weights: dict[str, np.ndarray], snapshots: Sequence[str], decisions: int) -> Rollout:
        self.net.load_state_dict({name: torch.from_numpy(np.asarray(value)) for name, value in weights.items()})
        collector = self.collector
        collector.set_snapshots(snapshots)
        collector.refresh_stale_values()
        collector.reset_stats()
        collector.seconds = dict.fromkeys(collector.seconds, 0.0)
        steps = collector.collect(decisions)
        t = collector.transitions
        zeros = np.zeros(t.n, np.float32)
        _, _, complete = gae(t.next[: t.n], t.done[: t.n], t.rewards[: t.n], zeros, 1.0, 1.0, collector.session > 1)
        rollout = take_finished(t, complete, steps, collector.stats, collector.seconds)
        collector.carry_over(complete)
        return rollout

    def run_job(self, fn: Callable[[Any], Any], job: Any) -> Any:
        """``fn(job)``: a job of the learner's between rollouts (a chunk of its evaluations)."""
        return fn(job)


def network_weights(net: PolicyNet) -> dict[str, np.ndarray]:
    """The network's parameters and buffers as CPU numpy arrays (what goes to the workers)."""
    return {name: value.detach().cpu().numpy().copy() for name, value in net.state_dict().items()}


class ReceivedBatch:
    """The workers' rollouts joined into one ``Transitions``, with the calls ``ppo_update`` makes of a collector:
    every decision is complete (those cut at a rollout's end with their ``bootstrap`` values), so nothing is
    carried over."""

    def __init__(self, rollouts: Sequence[Rollout], hidden_hands: bool) -> None:
        self.transitions = t = Transitions(capacity=max(1, sum(len(r) for r in rollouts)), hidden_hands=hidden_hands)
        self.bootstrap = np.full(t.capacity, np.nan, np.float32)
        self.steps = sum(r.steps for r in rollouts)
        self.stats: dict[str, float] = {}
        self.seconds: dict[str, float] = {}
        for r in rollouts:
            for source, target in ((r.stats, self.stats), (r.seconds, self.seconds)):
                for key, value in source.items():
                    target[key] = target.get(key, 0) + value
            lo = t.n
            t.append(r.obs_idx, r.obs_val, np.diff(r.obs_ptr), r.masks, r.actions, r.logp, r.values, r.hidden_counts())
            t.rewards[lo : t.n] = r.rewards
            t.done[lo : t.n] = r.done
            t.next[lo : t.n] = np.where(r.next >= 0, r.next + lo, -1)
            if r.bootstrap is not None:
                self.bootstrap[lo : t.n] = r.bootstrap

    def complete(self, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        t = self.transitions
        n = t.n
        return gae(t.next[:n], t.done[:n], t.rewards[:n], t.values[:n], gamma, lam, bootstrap=self.bootstrap[:n])

    def carry_over(self, complete: np.ndarray) -> np.ndarray:
        if not np.all(complete[: self.transitions.n]):
            raise ValueError("a worker sent a decision of a deal still under way")
        return np.full(self.transitions.n, -1, np.int64)


# ---------------------------------------------------------------------------- the pools of workers
class WorkerPool:
    """N rollout workers: ``start`` sends the weights and each worker's share of decisions, ``receive`` waits for
    their rollouts (in worker order), ``close`` stops them. At most one rollout is in flight."""

    workers: int

    def start(self, weights: dict[str, np.ndarray], snapshots: Sequence[str], decisions: Sequence[int]) -> None:
        raise NotImplementedError

    def receive(self, stop: Callable[[], bool]) -> list[Rollout] | None:
        """The rollouts of the last ``start``; None if ``stop()`` turned true while waiting (Ctrl-C)."""
        raise NotImplementedError

    def run_jobs(self, fn: Callable[[Any], Any], jobs: Sequence[Any], done: Callable[[int], None]) -> list[Any]:
        """``[fn(job) for job in jobs]`` on the workers (``train.eval.jobs.JobRunner``), each worker taking its jobs
        after the rollout it is playing; ``done(i)`` as job ``i`` finishes. A job that raises stops its worker,
        as a rollout that raises does (``WorkerError``)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _worker_main(conn: multiprocessing.connection.Connection, config: WorkerConfig) -> None:
    """A spawned worker: rollouts on request until told to stop; an error goes back as one line and a traceback."""
    from train.eval.jobs import ignore_interrupts

    ignore_interrupts()
    try:
        worker = RolloutWorker(config)
        while True:
            message = conn.recv()
            if message[0] == "stop":
                return
            if message[0] == "job":
                conn.send(("job", message[1], worker.run_job(*message[2:])))
            else:
                conn.send(("rollout", worker.rollout(*message[1:])))
    except (EOFError, OSError):  # the learner went away: nothing to tell it
        return
    except Exception as e:
        conn.send(("error", f"{type(e).__name__}: {e}", traceback.format_exc()))


class ProcessWorkers(WorkerPool):
    """Spawned processes, one pipe each (``--backend local``)."""

    def __init__(self, configs: Sequence[WorkerConfig]) -> None:
        # spawn, not fork: the learner holds threads (torch, tqdm's monitor), and forking a threaded process can
        # deadlock; a spawned worker loads the cached compiled env in a second or two.
        context = multiprocessing.get_context("spawn")
        self.workers = len(configs)
        self.connections: list[multiprocessing.connection.Connection] = []
        self.processes: list[Any] = []
        self.in_flight = False  # a rollout started and not yet received
        self.jobs_out = False  # jobs sent and not all answered (run_jobs raised)
        self.received: dict[int, Rollout] = {}  # rollouts that came while run_jobs waited for jobs
        for config in configs:
            mine, theirs = context.Pipe()
            process = context.Process(
                target=_worker_main, args=(theirs, config), name=f"rollout-worker-{config.index}", daemon=True
            )
            process.start()
            theirs.close()
            self.connections.append(mine)
            self.processes.append(process)

    def _died(self, i: int) -> WorkerError:
        process = self.processes[i]
        process.join(timeout=5)
        code = process.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        return WorkerError(f"rollout worker {i} died ({how})")

    def start(self, weights: dict[str, np.ndarray], snapshots: Sequence[str], decisions: Sequence[int]) -> None:
        for i, (conn, share) in enumerate(zip(self.connections, decisions, strict=True)):
            try:
                conn.send(("rollout", weights, list(snapshots), int(share)))
            except (BrokenPipeError, EOFError, OSError):
                raise self._died(i) from None
        self.in_flight = True

    def _next_message(self, waiting: set[int]) -> tuple[int, tuple[Any, ...]] | None:
        """A message from one of the workers ``waiting``, as (worker, message); None after half a second without
        one. ``WorkerError`` for a worker that died or sent an error."""
        handles = {self.connections[i]: i for i in waiting} | {self.processes[i].sentinel: i for i in waiting}
        for handle in multiprocessing.connection.wait(list(handles), timeout=0.5):
            i = handles[handle]
            conn = self.connections[i]
            if not conn.poll():  # the sentinel: the process ended without a reply
                raise self._died(i)
            try:
                message = conn.recv()
            except (EOFError, OSError):
                raise self._died(i) from None
            if message[0] == "error":
                raise WorkerError(f"rollout worker {i} failed: {message[1]}")
            return i, message
        return None

    def receive(self, stop: Callable[[], bool]) -> list[Rollout] | None:
        results: list[Rollout | None] = [None] * self.workers
        for i, rollout in self.received.items():
            results[i] = rollout
        self.received = {}
        waiting = {i for i in range(self.workers) if results[i] is None}
        while waiting:
            if stop():
                return None
            got = self._next_message(waiting)
            if got is not None:  # a rollout: run_jobs answers all its jobs before it returns
                results[got[0]] = got[1][1]
                waiting.discard(got[0])
        self.in_flight = False
        return [r for r in results if r is not None]

    def run_jobs(self, fn: Callable[[Any], Any], jobs: Sequence[Any], done: Callable[[int], None]) -> list[Any]:
        results: list[Any] = [None] * len(jobs)
        sent = [0] * self.workers  # jobs sent to each worker and not yet answered
        queued = collections.deque(range(len(jobs)))

        def send(i: int) -> None:
            j = queued.popleft()
            try:
                self.connections[i].send(("job", j, fn, jobs[j]))
            except (BrokenPipeError, EOFError, OSError):
                raise self._died(i) from None
            sent[i] += 1

        self.jobs_out = True
        # two jobs per worker at a time: the second is there when the first ends
        for _ in range(2):
            for i in range(self.workers):
                if queued:
                    send(i)
        while any(sent):
            got = self._next_message({i for i in range(self.workers) if sent[i]})
            if got is None:
                continue
            i, message = got
            if message[0] == "rollout":  # the rollout it was playing when the jobs came: kept for receive
                self.received[i] = message[1]
                continue
            results[message[1]] = message[2]
            sent[i] -= 1
            done(message[1])
            if queued:
                send(i)
        self.jobs_out = False
        return results

    def close(self) -> None:
        """Stop every worker within ``STOP_SECONDS + TERMINATE_SECONDS`` in all, whatever each is doing: an idle one
        is asked to stop; one still starting (importing torch, loading compiled code) or mid-rollout is terminated,
        then killed. The waits run against one deadline for all the workers, not one after another, so that
        Ctrl-C during the warm start ends the run in seconds."""
        busy = self.in_flight or self.jobs_out
        for conn, process in zip(self.connections, self.processes, strict=True):
            if process.is_alive() and not busy:
                with suppress(BrokenPipeError, OSError):
                    conn.send(("stop",))
        _join_until(self.processes, 0.0 if busy else STOP_SECONDS)
        for process in self.processes:
            if process.is_alive():
                process.terminate()  # a worker mid-rollout: its rollout is abandoned
        _join_until(self.processes, TERMINATE_SECONDS)
        for process in self.processes:
            if process.is_alive():
                process.kill()
                process.join()
        for conn in self.connections:
            conn.close()


STOP_SECONDS = 2.0
"""How long ``ProcessWorkers.close`` waits for idle workers to stop when asked, in all."""
TERMINATE_SECONDS = 3.0
"""How long it then waits for terminated workers to unwind (their files written whole), in all, before killing."""


def _join_until(processes: Sequence[Any], seconds: float) -> None:
    """Join ``processes`` until each has ended or ``seconds`` have passed since the call, whichever comes first."""
    deadline = time.monotonic() + seconds
    for process in processes:
        if process.is_alive():
            process.join(timeout=max(0.0, deadline - time.monotonic()))


class RayWorkers(WorkerPool):
    """Ray actors on a local instance of ``workers`` CPUs, or on the cluster at ``address``
    (``train.eval.ray_backend.ray_instance``); the weights go once per rollout through the object store. The
    snapshot files are named by path: workers on other machines need the run folder on a shared file system."""

    def __init__(self, configs: Sequence[WorkerConfig], address: str | None) -> None:
        from train.eval.ray_backend import ray_instance

        self.workers = len(configs)
        self._stack = ExitStack()
        self.ray = ray = self._stack.enter_context(ray_instance(address, num_cpus=len(configs)))
        try:
            actor = ray.remote(num_cpus=1, max_restarts=0)(RolloutWorker)
            self.actors = [actor.remote(config) for config in configs]
        except BaseException:
            self._stack.close()
            raise
        self.pending: list[Any] = []

    def start(self, weights: dict[str, np.ndarray], snapshots: Sequence[str], decisions: Sequence[int]) -> None:
        shared = self.ray.put(weights)
        self.pending = [
            actor.rollout.remote(shared, list(snapshots), int(share))
            for actor, share in zip(self.actors, decisions, strict=True)
        ]

    def _get(self, ref: Any, i: int) -> Any:
        """The result of actor ``i``'s call ``ref``; ``WorkerError`` if the actor died or the call raised."""
        from ray.exceptions import RayActorError, RayTaskError

        try:
            return self.ray.get(ref)
        except RayActorError as e:
            reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise WorkerError(f"rollout worker {i} (Ray actor) died: {reason}") from None
        except RayTaskError as e:
            cause = e.cause if getattr(e, "cause", None) is not None else e
            raise WorkerError(f"rollout worker {i} (Ray actor) failed: {type(cause).__name__}: {cause}") from None

    def receive(self, stop: Callable[[], bool]) -> list[Rollout] | None:
        ray, waiting = self.ray, list(self.pending)
        while waiting:
            if stop():
                return None
            _, waiting = ray.wait(waiting, num_returns=len(waiting), timeout=0.5)
        results = [self._get(ref, i) for i, ref in enumerate(self.pending)]
        self.pending = []
        return results

    def run_jobs(self, fn: Callable[[Any], Any], jobs: Sequence[Any], done: Callable[[int], None]) -> list[Any]:
        # an actor runs its calls one at a time, in the order they came: the jobs wait for its rollout
        calls = {self.actors[j % self.workers].run_job.remote(fn, job): j for j, job in enumerate(jobs)}
        results: list[Any] = [None] * len(jobs)
        waiting = list(calls)
        while waiting:
            ready, waiting = self.ray.wait(waiting, num_returns=1)
            for ref in ready:
                j = calls[ref]
                results[j] = self._get(ref, j % self.workers)
                done(j)
        return results

    def close(self) -> None:
        for actor in getattr(self, "actors", []):
            self.ray.kill(actor)
        self.actors = []
        self._stack.close()


def worker_configs(args: Any, num_timesteps: int, workers: int) -> list[WorkerConfig]:
    """The configurations of ``workers`` rollout workers for the trainer's ``Args``."""
    return [
        WorkerConfig(
            index=i,
            hidden=tuple(args.hidden),
            privileged_critic=args.privileged_critic,
            players=tuple(args.players),
            tables=share,
            pool=args.pool(),
            seed=collector_seed(args.seed, num_timesteps, i),
            reward_scale=args.reward_scale,
            rule_options=args.rule_options(),
            session=args.session,
            league=tuple(args.league),
            league_share=args.league_share,
            league_power=args.league_power,
        )
        for i, share in enumerate(table_shares(args.tables, workers))
    ]


def start_workers(args: Any, num_timesteps: int, workers: int) -> WorkerPool:
    """The rollout workers of a run at step ``num_timesteps``: spawned processes, or Ray actors with
    ``args.backend == "ray"``."""
    configs = worker_configs(args, num_timesteps, workers)
    if args.backend == "ray":
        return RayWorkers(configs, args.address)
    return ProcessWorkers(configs)


def decision_shares(decisions: int, workers: int) -> list[int]:
    """Each worker's share of a rollout's ``decisions`` (rounded up: a rollout adds at least ``decisions``)."""
    return [math.ceil(decisions / workers)] * workers
