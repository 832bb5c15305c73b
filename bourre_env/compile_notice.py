"""Say when numba compiles, so that a first run's minutes are never silent.

The compiled functions of the rules core, the batch API and the agents are compiled on their first call after an
install or an update (the sources key the cache folder: ``bourre_env._jit_cache``), then loaded from the cache in
well under a second. numba announces every compilation it starts after a cache miss (its ``numba:compile``
event); this module listens for them. The first compilation of a burst logs one line at WARNING on the
``bourre_env`` logger (shown on stderr by default, through Python's last-resort handler): what is happening,
that it happens once, where the result is kept. While the burst lasts, an INFO line every ``PROGRESS_SECONDS``
counts the functions compiled so far, and a last INFO line gives the total; ``bourre`` commands show the INFO
lines too. ``compile_seconds()`` is the wall time spent compiling in this process, for reports that must not
count it as the work around it.

A line never runs into a progress bar: while tqdm's bars are on the screen (a training's ``record heuristic``, an
evaluation's deals), each line is written with the bars cleared and redrawn below it (tqdm's
``external_write_mode``; tqdm is looked up only if the program imported it, never imported here).

Set ``BOURRE_COMPILE_NOTICE=0`` to silence the lines (the worker processes of a command set it: their parent
speaks for them).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from typing import Any

from bourre_env.words import plural

__all__ = ["PROGRESS_SECONDS", "compile_seconds", "install", "logger", "show_lines"]

PROGRESS_SECONDS = 15.0
"""Seconds between the progress lines of a long compilation."""
_QUIET_SECONDS = 1.0  # a burst ends when nothing was compiled for this long

logger = logging.getLogger("bourre_env")


class _Bursts:
    """The state of the compilations seen: the running burst, and the total time spent compiling."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0  # compilations under way: a function's callees compile inside it
        self.total = 0.0  # seconds spent compiling in this process, bursts summed
        self.burst_start: float | None = None
        self.last_event = 0.0
        self.functions = 0
        self.last_said = 0.0
        self.watcher: threading.Thread | None = None

    def start(self, name: str) -> None:
        with self.lock:
            now = time.perf_counter()
            self.last_event = now
            self.depth += 1
            if self.burst_start is not None:
                return
            self.burst_start, self.last_said, self.functions = now, now, 0
            if self.watcher is None or not self.watcher.is_alive():
                self.watcher = threading.Thread(target=self._watch, name="bourre-compile-notice", daemon=True)
                self.watcher.start()
        if _enabled():
            from bourre_env import _jit_cache

            _say(
                logging.WARNING,
                "compiling %s and what it calls with numba: once after an install or an update (a minute or more "
                "on 2 cores), then loaded from the cache in %s",
                name,
                _jit_cache.folder() or "numba's own cache folder",
            )

    def end(self) -> None:
        with self.lock:
            self.last_event = time.perf_counter()
            self.depth = max(0, self.depth - 1)
            self.functions += 1

    def _watch(self) -> None:
        while True:
            time.sleep(0.25)
            with self.lock:
                if self.burst_start is None:
                    return
                now = time.perf_counter()
                elapsed = now - self.burst_start
                if self.depth == 0 and now - self.last_event >= _QUIET_SECONDS:
                    busy = self.last_event - self.burst_start
                    self.total += busy
                    self.burst_start = None
                    line = ("compiled %s in %.0f s; cached for later runs", plural(self.functions, "function"), busy)
                elif now - self.last_said >= PROGRESS_SECONDS:
                    self.last_said = now
                    line = ("still compiling: %s so far, %.0f s", plural(self.functions, "function"), elapsed)
                else:
                    continue
            if _enabled():
                _say(logging.INFO, *line)

    def seconds(self) -> float:
        with self.lock:
            running = 0.0 if self.burst_start is None else self.last_event - self.burst_start
            return self.total + running


_bursts = _Bursts()
_installed = False


def _say(level: int, message: str, *args: object) -> None:
    """Log one line of the notice, on a line of its own below any progress bar of tqdm's on the screen."""
    bars = sys.modules.get("tqdm.std")  # tqdm.auto's and tqdm.asyncio's bars are tqdm.std's subclasses
    clear = bars.tqdm.external_write_mode(file=sys.stderr) if bars is not None else contextlib.nullcontext()
    with clear:
        logger.log(level, message, *args)


def _enabled() -> bool:
    return os.environ.get("BOURRE_COMPILE_NOTICE", "1") != "0"


def compile_seconds() -> float:
    """Wall seconds this process has spent compiling numba functions (since ``install``)."""
    return _bursts.seconds()


def show_lines(prefix: str = "") -> None:
    """Show every line of the notice on stderr, the progress and the closing ``compiled`` line included (Python's
    last-resort handler shows only the first, a WARNING). The ``bourre`` command calls it; so does each process it
    starts that compiles for itself (the arena's search workers), with ``prefix`` saying which process speaks. A
    program that set up the ``bourre_env`` logger itself keeps its own handlers."""
    if logger.handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(prefix.replace("%", "%%") + "%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


def install() -> None:
    """Listen for numba's compilations (once per process; ``bourre_env`` calls it on import)."""
    global _installed
    if _installed:
        return
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            dispatcher = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
            function = getattr(dispatcher, "py_func", None)
            name = f"{function.__module__}.{function.__qualname__}" if function is not None else "a function"
            _bursts.start(name)

        def on_end(self, ev: Any) -> None:
            _bursts.end()

    event.register("numba:compile", Listener())  # type: ignore[no-untyped-call]  # numba is untyped
    _installed = True
