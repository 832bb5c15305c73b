"""What the benchmark modules share: the timing attributes, the positions every timed call starts from, and the
imports that a commit may lack.

Positions. A benchmark of ``BatchGame`` plays from the same positions at every timed call: ``tables`` tables dealt
from seed 0 and played ``WARM_DECISIONS`` random decisions each, so that the rows stand in every phase of a deal.
They are built once per process (``positions``) and copied back before each call (the rows, their scratch, their
random streams), since asv runs ``setup`` before every timed call of a benchmark that has one. Each sample is then
the very same work, and the spread of the samples is the machine's alone. The two commits of a comparison play the
same games where their rules and random streams agree (the same seed, the same draws).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

TABLES = 1024
"""Tables of every ``BatchGame`` benchmark (a learner's batch; the throughput benchmark's size)."""
WARM_DECISIONS = 37
"""Random decisions per table before the positions are taken: rows in every phase, a few deals in."""


class Suite:
    """The asv attributes of every benchmark class of the suite.

    ``timeout`` covers ``setup`` too, and the first setup of a commit in a fresh asv environment compiles its numba
    kernels (minutes on 2 cores; the numba cache keeps them after). ``rounds``: each benchmark runs in 4 processes
    per commit, which ``asv continuous --interleave-rounds`` alternates between the two commits, so that a shared
    machine's load falls on both alike. ``repeat``: at least 10 samples a round, at most 60, at most 10 s of them;
    each sample is one call, asv's choice when a benchmark has a ``setup``. ``timer``: the process's CPU time, not
    the wall clock: every benchmark runs on one thread, so the two agree on an idle machine, and on a shared one the
    time spent waiting for a core (another job's time slice) is left out. ``tables`` is the suite's own:
    ``tests/test_asv_suite.py`` sets it to a few tables."""

    timeout = 1800.0
    rounds = 4
    repeat = (10, 60, 10.0)
    timer = staticmethod(time.process_time)
    tables = TABLES


def need(*names: str) -> ModuleType:
    """The first of the modules ``names`` that the installed commit has (a module moved between commits: the
    batch heuristic was ``agents.heuristic_batch`` before it was ``agents.heuristic.batch``); ``NotImplementedError``,
    asv's skip, when it has none. An import that fails inside a module that exists is raised as it is."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not name.startswith(exc.name):
                raise
    raise NotImplementedError(f"this commit has none of {', '.join(names)}")


def attribute(owner: Any, name: str) -> Any:
    """``owner.name`` (of a module, a class or an object), or ``NotImplementedError`` (asv's skip) where the installed
    commit lacks it."""
    try:
        return getattr(owner, name)
    except AttributeError:
        label = getattr(owner, "__name__", None) or type(owner).__qualname__
        raise NotImplementedError(f"this commit has no {label}.{name}") from None


class Positions:
    """A ``BatchGame`` and a copy of its rows, to put back before each timed call (``restore``)."""

    SAVED = ("states", "scratch", "_rngs", "truncated")  # the scratch holds each row's cinch memo

    def __init__(self, game: Any) -> None:
        self.game = game
        self._saved = {name: np.copy(getattr(game, name)) for name in self.SAVED if hasattr(game, name)}

    def restore(self) -> None:
        for name, saved in self._saved.items():
            np.copyto(getattr(self.game, name), saved)


_made: dict[tuple[Any, ...], Any] = {}


def once(key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
    """``make()``, made on the first call with ``key`` in this process and kept: asv runs ``setup`` before every
    timed call, and what is slow to make (a policy read from its file, a compilation) is made once."""
    if key not in _made:
        _made[key] = make()
    return _made[key]


_positions: dict[tuple[int, int], Positions] = {}


def positions(players: int, tables: int) -> Positions:
    """The positions of ``tables`` tables at ``players`` players, restored; built (and the random-play kernel
    compiled) on the first call of the process."""
    key = (players, tables)
    if key not in _positions:
        batch = need("bourre_env.batch")
        game = batch.BatchGame(batch_size=tables, seed=0, num_players=players)
        game.random_play(WARM_DECISIONS)
        _positions[key] = Positions(game)
    found = _positions[key]
    found.restore()
    return found
