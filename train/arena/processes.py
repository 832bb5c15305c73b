"""``bourre arena serve --processes N``: N arena servers on one port and one database, so that every core serves.

One server is one event loop under one GIL: it tops out near one core (docs/arena.md, "Speed"). With ``--processes
N`` the command becomes a *supervisor*: it does the start's one-time work itself (the migration, the sweep of the
matches a stopped server left, the operator token of a first start: ``train.arena.server.start``), binds the listening
socket once, and starts N children, each a whole arena server (``server.serve``, its own ``Store`` and server id)
accepting connections from that one socket. It never serves a request itself.

Why one socket bound by the supervisor, and not ``SO_REUSEPORT`` in each child: the port is taken, or refused, once
and before any child starts (a port in use is one line, status 2); no other process of the same user can join the
port and take connections; the connections the kernel has queued but no child has accepted yet stay queued when a
child dies, for the others to accept, where a dead ``SO_REUSEPORT`` socket drops its queue; and it is the same on
every Unix. The kernel hands each new connection to whichever child accepts first, so the load spreads by how busy
each child is (uvicorn's ``--workers`` does the same). A burst does not spread: a child that wakes for a connection
accepts every one queued at that moment (asyncio accepts up to the backlog in one go), and bots that arrive while
the other children are still starting all go to the first one up; so do bots that all reconnect at once after a
restart. Bots that arrive over time spread (``benchmarks/arena_processes.py`` paces them). Children are new
interpreters (``subprocess``, as ``spawn`` would, never ``fork``: the supervisor may hold threads), given the socket's
descriptor (``pass_fds``) and their settings on stdin, never on their command line (a database URL may hold a
password).

=========================== ============================================================================================
Ctrl-C or SIGTERM           the supervisor sends each child one SIGTERM: each stops as one server does (its matches
                            after their game under way, within ``server.STOP_SECONDS``); a child still running after
                            ``STOP_SECONDS`` is killed; the supervisor exits once none is left
a child dies                one line says which and how; its bots reconnect (``bourre connect`` does by itself) to the
                            others, its running matches are marked ``interrupted`` by them within a second or two (the
                            liveness lock, ``train.arena.storage``), as for any dead server; a new child takes its
                            place after ``RESTART_SECONDS``, a pause that doubles (up to ``MAX_RESTART_SECONDS``) while
                            children die within ``STEADY_SECONDS`` of their start, so that a child that cannot start
                            does not spin
the supervisor dies         each child reads its stdin, the supervisor's end of a pipe: at its end (the supervisor is
                            gone, even by SIGKILL) the child stops as at SIGTERM, so no server outlives it
=========================== ============================================================================================

What is shared and what is per process. Shared through the database, safe with N as with N servers (the claims, the
sweeps and the ladder's queue: ``train.arena.scheduler``): the bots, the operators, the matches, the ratings and
the pages. Per child: the bots connected to it (the ladder pairs the bots of one child; ``--ladder-tables`` is per
child), an operator's match (``POST /api/matches``, played by the child that received it, with the bots connected
to that child), the connection limits (``train.web.connections``), the reconnect rate of a bot and the pool of heavy
seats (``train.arena.thinking``). Seats of people (``--people``) live in one process: refused with more than one.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "LOOPS",
    "MAX_PROCESSES",
    "MAX_RESTART_SECONDS",
    "RESTART_SECONDS",
    "STEADY_SECONDS",
    "STOP_SECONDS",
    "Settings",
    "check_processes",
    "listen",
    "most_processes",
    "run",
    "supervise",
]

MAX_PROCESSES = 64
"""The most children, whatever the cores (``most_processes``)."""
STOP_SECONDS = 10.0
"""At Ctrl-C or SIGTERM, the longest the supervisor waits for its children before it kills those still running."""
RESTART_SECONDS = 1.0
"""The pause before a dead child is replaced."""
STEADY_SECONDS = 30.0
"""A child that dies sooner after its start doubles the pause before its replacement."""
MAX_RESTART_SECONDS = 60.0
"""The longest pause before a replacement."""
_BACKLOG = 128  # as train.web.connections.BACKLOG, without importing uvicorn here
LOOPS = ("auto", "asyncio", "uvloop")
"""The event loops a server may run on, as uvicorn names them: ``--loop`` of ``bourre arena serve`` and ``bourre
connect`` (``train.arena.command``), and a child's ``Settings.loop``; auto is uvloop where it is installed, else
asyncio's."""


def most_processes() -> int:
    """The most ``--processes``: 4 per core this process may use, at most ``MAX_PROCESSES``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return min(MAX_PROCESSES, 4 * cores)


def check_processes(count: int) -> int:
    """``count``, or ``ValueError`` (one line) unless it is from 1 to ``most_processes()``."""
    most = most_processes()
    if not 1 <= count <= most:
        raise ValueError(
            f"--processes: expected 1 to {most} (4 per core of this machine, at most {MAX_PROCESSES}), got {count}"
        )
    return count


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port``, which children inherit; ``ValueError`` (one line) if it cannot
    be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(_BACKLOG)
    except OSError as err:
        sock.close()
        raise ValueError(f"cannot listen on {host}:{port}: {err.strerror}") from None
    sock.set_inheritable(True)
    return sock


@dataclasses.dataclass(frozen=True)
class Settings:
    """What a child serves: ``server.serve``'s arguments, less the socket (``offered`` checked already)."""

    data: str
    database: str | None
    host: str
    offered: Sequence[str]
    ladder: Any  # a train.arena.scheduler.LadderConfig, or None
    per_address: int | None = None  # --max-connections-per-address (None: the guard's default)
    loop: str = "auto"  # one of LOOPS: --loop as command.event_loop answers it; auto in a supervisor's older settings

    def to_json(self) -> str:
        ladder = None if self.ladder is None else dataclasses.asdict(self.ladder)
        return json.dumps(
            {
                "data": self.data,
                "database": self.database,
                "host": self.host,
                "offered": list(self.offered),
                "ladder": ladder,
                "per_address": self.per_address,
                "loop": self.loop,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> Settings:
        """The settings ``to_json`` wrote; ``ValueError`` in one line for a loop not in ``LOOPS`` (uvicorn would
        take any other name for the import path of a loop of its own, and fail in the child's log)."""
        from train.arena.scheduler import LadderConfig

        raw = json.loads(text)
        ladder = raw["ladder"]
        if ladder is not None:
            fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in ladder.items()}
            ladder = LadderConfig(**fields)
        loop = raw.get("loop", "auto")
        if loop not in LOOPS:
            raise ValueError(f"loop: expected one of {', '.join(LOOPS)}, got {loop!r:.40}")
        return cls(
            data=raw["data"],
            database=raw["database"],
            host=raw["host"],
            offered=tuple(raw["offered"]),
            ladder=ladder,
            per_address=raw.get("per_address"),
            loop=loop,
        )


@dataclasses.dataclass
class _Slot:
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    pause: float = RESTART_SECONDS
    due: float = 0.0  # when a dead child's replacement starts


def _describe(status: int) -> str:
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"


class _Supervisor:
    def __init__(self, sock: socket.socket, count: int, settings: Settings) -> None:
        self.sock = sock
        self.settings = settings.to_json()
        self.slots = [_Slot() for _ in range(count)]
        self.stop = threading.Event()

    def start(self, slot: _Slot) -> int:
        """Start a child in ``slot``; its pid."""
        fd = self.sock.fileno()
        # a session of its own: Ctrl-C reaches the supervisor alone, which stops each child once
        process = subprocess.Popen(
            [sys.executable, "-m", "train.arena.processes", str(fd)],
            stdin=subprocess.PIPE,
            pass_fds=(fd,),
            start_new_session=True,
        )
        assert process.stdin is not None
        process.stdin.write(self.settings.encode() + b"\n")
        process.stdin.flush()  # kept open: its end tells the child that the supervisor is gone
        slot.process, slot.started = process, time.monotonic()
        return process.pid

    def watch(self) -> None:
        """Until ``stop``: report each child that dies and replace it when its pause is over."""
        while not self.stop.wait(0.2):
            now = time.monotonic()
            for number, slot in enumerate(self.slots):
                if slot.process is None:
                    if now >= slot.due:
                        pid = self.start(slot)
                        print(
                            f"bourre arena: server process {pid} started in place of the dead one (process "
                            f"{number + 1} of {len(self.slots)})",
                            flush=True,
                        )
                    continue
                status = slot.process.poll()
                if status is None:
                    continue
                _close_stdin(slot.process)
                lived = now - slot.started
                slot.pause = RESTART_SECONDS if lived >= STEADY_SECONDS else min(MAX_RESTART_SECONDS, 2 * slot.pause)
                slot.due = now + slot.pause
                print(
                    f"bourre arena: server process {slot.process.pid} died ({_describe(status)}): its bots "
                    f"reconnect to the others, which mark its running matches interrupted; a new one starts in "
                    f"{slot.pause:g} s",
                    file=sys.stderr,
                    flush=True,
                )
                slot.process = None

    def stop_all(self) -> None:
        """SIGTERM to every child once, then wait ``STOP_SECONDS`` for them, then kill those left."""
        running = [slot.process for slot in self.slots if slot.process is not None]
        for process in running:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        for process in running:
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                print(
                    f"bourre arena: server process {process.pid} did not stop within {STOP_SECONDS:g} s: killed",
                    file=sys.stderr,
                    flush=True,
                )
                process.kill()
                process.wait()
            _close_stdin(process)


def _close_stdin(process: subprocess.Popen[bytes]) -> None:
    try:
        if process.stdin is not None:
            process.stdin.close()
    except OSError:  # the child is gone: its end of the pipe with it
        pass


def run(
    data: str,
    host: str,
    port: int,
    offered: Sequence[str],
    database: str | None,
    ladder: Any,
    people: bool,
    count: int,
    keep_token: Callable[[str | None], None] | None = None,
    per_address: int | None = None,
    loop: str = "auto",
) -> None:
    """``bourre arena serve --processes COUNT`` (``server.run``'s arguments): the start's one-time work here, once
    (``server.start``), the port bound, then ``count`` servers supervised until Ctrl-C or SIGTERM. ``loop``: each
    server's event loop (one of ``LOOPS``)."""
    from train.arena import server
    from train.web.agent_specs import check_offered

    if people:
        raise ValueError("--people: with --processes 1 only (a person's seat lives in the process that gave it)")
    checked = [check_offered(spec) for spec in offered]
    store = server.start(data, database, keep_token)  # migrated here: no two children migrate at once
    try:
        sock = listen(host, port)  # a port in use is said before any child starts
        server.announce(store, data, database, host, port, ladder, people, each=" in each process")
    finally:
        store.close()
    settings = Settings(
        data=data, database=database, host=host, offered=checked, ladder=ladder, per_address=per_address, loop=loop
    )
    supervise(sock, count, settings)


def supervise(sock: socket.socket, count: int, settings: Settings) -> None:
    """Run ``count`` arena servers on the listening ``sock`` until Ctrl-C or SIGTERM, then stop them all."""
    supervisor = _Supervisor(sock, count, settings)

    caught: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        caught.append(signum)
        supervisor.stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for slot in supervisor.slots:
            supervisor.start(slot)
        pids = ", ".join(str(slot.process.pid) for slot in supervisor.slots if slot.process is not None)
        print(f"bourre arena: {count} server processes share the port: {pids}", flush=True)
        supervisor.watch()
    finally:
        supervisor.stop_all()
        sock.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
    if caught:  # raised again once all is stopped, as uvicorn does: the command ends as one server's would
        signal.raise_signal(caught[0])


def _watch_parent() -> None:
    """Read stdin to its end (the supervisor gone), then stop this server as SIGTERM does."""
    try:  # the descriptor, not sys.stdin: a buffered reader's lock held at the interpreter's exit is a fatal error
        while os.read(0, 4096):
            pass
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGTERM)


def _child(argv: Sequence[str]) -> int:
    """A child: ``python -m train.arena.processes FD``, its ``Settings`` as one JSON line on stdin."""
    from train.arena import server
    from train.arena.storage import Store

    sock = socket.socket(fileno=int(argv[0]))
    line = b""
    while not line.endswith(b"\n"):  # unbuffered, so that nothing past the line is read: see _watch_parent
        chunk = os.read(0, 1)
        if not chunk:
            raise SystemExit("bourre arena: a server process is started by bourre arena serve --processes N")
        line += chunk
    try:
        settings = Settings.from_json(line.decode())
    except ValueError as err:  # a supervisor of another version, say: one line, not a traceback
        raise SystemExit(f"bourre arena: a server process's settings: {err}") from None
    from bourre_env import compile_notice

    compile_notice.show_lines(f"server process {os.getpid()}: ")  # each child compiles for itself after an install
    if settings.per_address is not None:
        from train.web import connections

        connections.set_default_per_address(settings.per_address)
    store = Store(settings.data, url=settings.database)

    def unwind(signum: int, _frame: Any) -> None:  # uvicorn raises the SIGTERM it caught again once it stopped
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, unwind)  # so the store closes, as in bourre's own process (train.cli)
    threading.Thread(target=_watch_parent, daemon=True, name="supervisor watch").start()
    server.serve(
        store, settings.host, settings.offered, settings.ladder, people=False, sockets=[sock], loop=settings.loop
    )
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
