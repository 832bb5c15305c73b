"""Shared helpers for the tests: random legal play over the core and state inspection; each test leaves Ctrl-C as
it found it; none may close the capture files pytest gives sys.stdout and sys.stderr."""

from __future__ import annotations

import contextlib
import importlib
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from bourre_env import core
from bourre_env.core.rules import Rules


@pytest.fixture(autouse=True)
def _ctrl_c_handler_restored() -> Iterator[None]:
    """Code under test may set this process's Ctrl-C handler (an in-process SB3 environment ignores SIGINT); a
    command a later test starts would inherit an ignored SIGINT and outlive its Ctrl-C. Which tests ran before in
    the same process depends on how pytest-xdist shares them out, so each test restores the handler it found. And
    pytest itself may start with SIGINT ignored: a non-interactive shell starts its background jobs (``cmd &``, as
    a CI script may run the tests) with SIGINT ignored, Python then installs no KeyboardInterrupt handler, and
    the xdist workers and every command they start inherit the ignoring. So each test starts with Ctrl-C at its
    default and unblocked, as an interactive shell starts a command."""
    before = signal.getsignal(signal.SIGINT)
    if before is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    yield
    if before is not None:  # None: a handler not set from Python, which Python cannot set back
        signal.signal(signal.SIGINT, before)


REFUSED_CLOSES: list[str] = []
"""Where code under test tried to close pytest's capture of sys.stdout or sys.stderr, one stack each."""


def _refuse_closing_the_capture_files() -> None:
    """pytest gives ``sys.stdout`` and ``sys.stderr`` its capture files for the whole session of a worker process;
    code under test that closes one (``with sys.stdout:``, a library closing "its" stream) made every later test of
    that worker an error at its setup and teardown (``I/O operation on closed file``), a thousand errors hiding the
    one cause. A close from outside pytest is refused and its stack kept; the test during which it came fails with
    it (``_no_capture_file_closed``). The file's binary buffer is guarded too: a wrapper of its own around
    ``sys.stdout.buffer`` (``io.TextIOWrapper(sys.stdout.buffer)``) closes the buffer when it is closed or
    collected, which closes the capture file as surely."""
    try:
        from _pytest.capture import EncodedFile
    except ImportError:  # another pytest: no guard, and nothing else changes
        return
    close_for_real, init = EncodedFile.close, EncodedFile.__init__

    def refuse() -> None:
        stack = "".join(traceback.format_stack(limit=16)[:-2])
        REFUSED_CLOSES.append(f"in thread {threading.current_thread().name!r}:\n{stack}")

    def close(self: EncodedFile) -> None:
        try:
            caller = sys._getframe(1).f_globals.get("__name__")
        except ValueError:  # no Python frame: the interpreter's exit finalizing it
            caller = "_pytest.capture"
        if self.closed or caller == "_pytest.capture":
            self.closing_for_real = True  # type: ignore[attr-defined]  # its buffer's close, which follows, is pytest's
            close_for_real(self)
            return
        refuse()

    def guard_buffer(file: EncodedFile) -> None:
        buffer, close_buffer = file.buffer, file.buffer.close

        def close_the_buffer() -> None:
            if buffer.closed or getattr(file, "closing_for_real", False):
                close_buffer()
            else:
                refuse()

        with contextlib.suppress(AttributeError):  # a buffer that takes no attribute: the text file's guard alone
            buffer.close = close_the_buffer  # type: ignore[method-assign]

    def guarded_init(self: EncodedFile, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        guard_buffer(self)

    EncodedFile.close = close  # type: ignore[method-assign,assignment]
    EncodedFile.__init__ = guarded_init  # type: ignore[method-assign,assignment]
    for stream in (sys.stdout, sys.stderr):  # pytest's capture began before this file was read
        if isinstance(stream, EncodedFile):
            guard_buffer(stream)


_refuse_closing_the_capture_files()


@pytest.fixture(autouse=True)
def _no_capture_file_closed() -> Iterator[None]:
    yield
    if REFUSED_CLOSES:
        closes = "\n".join(REFUSED_CLOSES)
        REFUSED_CLOSES.clear()
        pytest.fail(f"something closed pytest's capture of sys.stdout or sys.stderr (refused), {closes}")


@pytest.fixture
def import_benchmark(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], ModuleType]:
    """``import_benchmark("benchmarks.NAME")``: a script of ``benchmarks/`` as a module, with that folder on the path,
    where each script finds its preamble (``"NAME"`` for a script that imports its sibling scripts by name)."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent / "benchmarks"))
    return importlib.import_module


def cards_of(mask: int) -> list[int]:
    return [c for c in range(52) if int(mask) >> c & 1]


def card_locations(s: np.ndarray, rules: Rules) -> list[int]:
    """Every card the state holds somewhere, one entry per holding place (a card twice means a bug)."""
    n = rules.num_players
    found: list[int] = []
    for q in range(n):
        found += cards_of(s[core.S_HAND + q])
    found += [int(c) for c in s[core.S_STOCK + s[core.S_STOCK_POS] : core.S_STOCK + s[core.S_STOCK_LEN]]]
    found += [int(c) for c in s[core.S_PILE : core.S_PILE + s[core.S_PILE_LEN]]]
    found += cards_of(s[core.S_PLAYED])
    if s[core.S_FACE_STATE] == core.FACE_DEAD:
        found.append(int(s[core.S_FACE]))
    return found


def random_game(rules: Rules, rng: np.random.Generator, dealer: int | None = None):
    """Yield (state, params) before every decision of one random episode, then play a random legal action."""
    p = rules.params()
    s = core.new_state()
    deck = rng.permutation(np.asarray(rules.deck_cards(), dtype=np.int64))
    core.start_episode(
        s, p, deck, int(rng.integers(rules.num_players)) if dealer is None else dealer, 0, int(rng.integers(2**62))
    )
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    while True:
        phase = s[core.S_PHASE]
        if phase == core.DEAL_OVER:
            core.next_deal(
                s, p, rng.permutation(np.asarray(rules.deck_cards(), dtype=np.int64)), int(rng.integers(2**62))
            )
            continue
        if phase == core.GAME_OVER:
            return
        yield s, p
        core.legal_actions(s, p, mask)
        assert core.step(s, p, int(rng.choice(np.flatnonzero(mask))))
