"""``bourre arena serve --processes N`` (``train.arena.processes``): bad counts refused in one line; two server
processes on one port and one SQLite file, the first start's operator token written once to ``--token-file``,
stopped by one SIGTERM with no child left, and none left either when the
supervisor itself is killed with SIGKILL; and (slow) bots on both
children playing ladder matches, one child killed with SIGKILL mid-match: its match is marked ``interrupted`` by the
other, its bots reconnect and play new matches, a new child takes its place, every game its bots were told of is
stored once."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena_helpers import WAIT, Recorder, free_port, wait_listening
from postgres_helpers import postgres_database  # noqa: F401 (the fixture)
from sqlalchemy import select

from train import cli
from train.arena import processes
from train.arena.client import play
from train.arena.match import warm_up
from train.arena.processes import Settings, most_processes
from train.arena.scheduler import LadderConfig
from train.arena.storage import Store, matches

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc (Linux)")


@pytest.mark.parametrize("count", ["0", "-3", str(most_processes() + 1)])
def test_a_bad_count_is_refused_in_one_line(count: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli.main(["arena", "serve", "--data", str(tmp_path), "--processes", count]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--processes: expected 1 to {most_processes()}" in err and count in err
    assert not list(tmp_path.iterdir())  # refused before the database is opened


def test_people_need_one_process(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli.main(["arena", "serve", "--data", str(tmp_path), "--processes", "2", "--people"]) == 2
    assert "--people: with --processes 1 only" in capsys.readouterr().err


def test_a_port_in_use_is_said_in_one_line_before_any_child_starts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        assert cli.main(["arena", "serve", "--data", str(tmp_path), "--processes", "2", "--port", port]) == 2
    err = capsys.readouterr().err
    assert f"bourre arena: error: cannot listen on 127.0.0.1:{port}: " in err and err.count("\n") == 2  # and the token


def test_the_settings_reach_a_child_whole() -> None:
    ladder = LadderConfig(fields=("random", "heuristic"), sizes=(3, 4), deals=3, tables=1, clock=1.5)
    settings = Settings("data", "sqlite:///x", "::1", ("random",), ladder, per_address=8, loop="asyncio")
    assert Settings.from_json(settings.to_json()) == settings
    assert Settings.from_json(Settings("d", None, "h", (), None).to_json()).ladder is None


def test_settings_without_a_loop_take_auto_and_an_unknown_loop_is_refused_in_one_line() -> None:
    older = json.loads(Settings("d", None, "h", (), None).to_json())
    del older["loop"]  # as a supervisor of an earlier version wrote them
    assert Settings.from_json(json.dumps(older)).loop == "auto"
    for bad in ("trio", None, ["uvloop"]):
        with pytest.raises(ValueError, match=r"^loop: expected one of auto, asyncio, uvloop, got ") as err:
            Settings.from_json(json.dumps({**older, "loop": bad}))
        assert "\n" not in str(err.value)


def test_a_child_given_an_unknown_loop_says_so_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as sock:
        settings = json.loads(Settings(str(tmp_path), None, "127.0.0.1", (), None).to_json())
        child = subprocess.run(
            [sys.executable, "-m", "train.arena.processes", str(sock.fileno())],
            input=json.dumps({**settings, "loop": "trio"}) + "\n",
            pass_fds=(sock.fileno(),),
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
    assert child.returncode == 1
    said = "bourre arena: a server process's settings: loop: expected one of auto, asyncio, uvloop, got 'trio'\n"
    assert child.stderr == said


def test_serve_hands_its_loop_to_every_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asked: dict[str, Any] = {}
    monkeypatch.setattr(processes, "run", lambda *args, **options: asked.update(options))
    assert cli.main(["arena", "serve", "--data", str(tmp_path), "--processes", "2", "--loop", "asyncio"]) == 0
    assert asked["loop"] == "asyncio"


def _uvloop_installed() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize(
    "loop",
    ["asyncio", pytest.param("uvloop", marks=pytest.mark.skipif(not _uvloop_installed(), reason="no uvloop"))],
)
def test_a_child_serves_on_the_loop_of_its_settings(loop: str, tmp_path: Path) -> None:
    """A child given ``Settings.loop`` answers a request on that loop: uvloop's library is loaded in it only when
    it was asked for (``/proc/PID/maps`` lists what a process has loaded)."""
    # compiled here first (numba's cache), so that the child's start, awaited within WAIT, loads the code and does
    # not compile it beside the other tests after a change of the rules core
    warm_up()
    sock = processes.listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    fd = sock.fileno()
    child = subprocess.Popen(
        [sys.executable, "-m", "train.arena.processes", str(fd)], stdin=subprocess.PIPE, pass_fds=(fd,)
    )
    try:
        assert child.stdin is not None
        child.stdin.write(Settings(str(tmp_path), None, "127.0.0.1", (), None, loop=loop).to_json().encode() + b"\n")
        child.stdin.flush()
        sock.close()
        _wait(lambda: _answers(port), "the child answers")  # its loop runs
        loaded = Path(f"/proc/{child.pid}/maps").read_text()
        assert ("uvloop" in loaded) == (loop == "uvloop")
    finally:
        child.stdin.close()  # type: ignore[union-attr]  # the supervisor gone: it stops
        assert child.wait(WAIT) == 128 + signal.SIGTERM


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/bots", timeout=1):
            return True
    except urllib.error.HTTPError:  # refused without a token: answered all the same
        return True
    except OSError:
        return False


# ---------------------------------------------------------------------------- the processes, seen from /proc
def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                # the parent pid is the 2nd field after the command's closing parenthesis
                if int((entry / "stat").read_text().rpartition(")")[2].split()[1]) == pid:
                    found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def _connections(pid: int, port: int) -> int:
    """Established TCP connections to ``port`` that process ``pid`` holds (its accepted sockets)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if int(fields[1].rpartition(":")[2], 16) == port and fields[3] == "01":
                    inodes.add(f"socket:[{fields[9]}]")
    held = 0
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                held += os.readlink(fd) in inodes
    return held


def _wait(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


class _Supervisor:
    """``bourre arena serve --processes 2`` in a process of its own; what it prints is kept in ``said``."""

    def __init__(self, data: Path, *options: str, database: str | None = None) -> None:
        self.port = free_port()
        command = [
            sys.executable,
            "-m",
            "train.cli",
            "arena",
            "serve",
            "--data",
            str(data),
            "--port",
            str(self.port),
            "--processes",
            "2",
            *options,
        ]
        env = {**os.environ, "BOURRE_ARENA_DATABASE": database or ""}  # a URL's password never on a command line
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.said: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        _wait(lambda: len(_children(self.process.pid)) == 2, "two children")
        self.seen = _children(self.process.pid)
        wait_listening(self.port)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.said.append(line)

    def children(self) -> set[int]:
        now = _children(self.process.pid)
        self.seen |= now
        return now

    def stop(self) -> None:
        """SIGTERM, once: it exits, and none of its children is left."""
        self.children()
        self.process.send_signal(signal.SIGTERM)
        # the status of one server stopped so (train.cli ends a SIGTERM as SystemExit(128 + 15))
        assert self.process.wait(WAIT) == 128 + signal.SIGTERM, "".join(self.said)
        assert not [pid for pid in self.seen if _alive(pid)]


@pytest.fixture(name="supervised")
def supervised_server(tmp_path: Path) -> Iterator[list[_Supervisor]]:
    started: list[_Supervisor] = []
    yield started
    for supervisor in started:
        if supervisor.process.poll() is None:
            supervisor.process.kill()
            supervisor.process.wait()
        for pid in supervisor.seen:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_two_processes_serve_one_port_and_stop_at_one_sigterm(supervised: list[_Supervisor], tmp_path: Path) -> None:
    token_file = tmp_path / "operator.token"
    supervisor = _Supervisor(tmp_path / "data", "--token-file", str(token_file))
    supervised.append(supervisor)
    # printed once both children are started, which may come after they are seen and the port answers
    _wait(lambda: "2 server processes share the port" in "".join(supervisor.said), "the supervisor's line")
    said = "".join(supervisor.said)
    assert "bots connect to" in said
    assert said.count("the operator token") == 1  # the first start's work, done once, by the supervisor
    assert f"written to {token_file}" in said and stat.S_IMODE(token_file.stat().st_mode) == 0o600
    supervisor.stop()
    store = Store(tmp_path / "data")
    try:
        assert store.operator_of(token_file.read_text().strip()) == "operator"
    finally:
        store.close()


def test_no_child_outlives_a_killed_supervisor(supervised: list[_Supervisor], tmp_path: Path) -> None:
    supervisor = _Supervisor(tmp_path)
    supervised.append(supervisor)
    children = supervisor.children()
    supervisor.process.kill()  # SIGKILL: it stops nothing itself; each child sees its pipe close
    supervisor.process.wait(WAIT)
    _wait(lambda: not [pid for pid in children if _alive(pid)], "the children stop")


# ---------------------------------------------------------------------------- a child killed mid-match
LADDER = [
    "--ladder",
    "--ladder-fields",
    "random",
    "--ladder-players",
    "3",
    "--ladder-deals",
    "200",
    "--ladder-tables",
    "2",
    "--ladder-clock",
    "5",
]


def _told(bot: Recorder) -> list[tuple[str, int, int]]:
    return [(m["match"], m["deal"], m["rotation"]) for m in bot.messages if m["type"] == "deal_end"]


def _rows(store: Store) -> list[dict[str, Any]]:
    with store.engine.connect() as db:
        return [dict(r) for r in db.execute(select(matches).order_by(matches.c.created)).mappings()]


def _slowly(turn: dict[str, Any]) -> int:
    time.sleep(0.01)  # a match lasts long enough to be killed under way
    return int(turn["legal"][0]["action"])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_killed_child_is_replaced_and_its_bots_play_on(
    kind: str, supervised: list[_Supervisor], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """On the data folder's SQLite file, and on PostgreSQL (skipped without a server: tests/postgres_helpers.py)."""
    database = None if kind == "sqlite" else str(request.getfixturevalue("postgres"))
    store = Store(tmp_path, url=database)
    tokens = {f"b{k}": store.add_bot(f"b{k}") for k in range(4)}
    supervisor = _Supervisor(tmp_path, *LADDER, database=database)
    supervised.append(supervisor)
    first, second = sorted(supervisor.children())
    stop = threading.Event()
    bots = {name: Recorder(choose=_slowly) for name in tokens}
    url = f"ws://127.0.0.1:{supervisor.port}/bot"

    def connect(name: str) -> None:
        def plays() -> None:
            with contextlib.suppress(Exception):  # stopped under it at the end
                play(bots[name], url, name, tokens[name], until=lambda _m: stop.is_set())

        threading.Thread(target=plays, daemon=True).start()

    # two bots on each child: the other one stopped while they connect, so that the one running accepts them
    home: dict[int, list[str]] = {first: ["b0", "b1"], second: ["b2", "b3"]}
    for pid, names in home.items():
        other = second if pid == first else first
        os.kill(other, signal.SIGSTOP)
        try:
            for k, name in enumerate(names):
                connect(name)
                _wait(lambda k=k, pid=pid: _connections(pid, supervisor.port) > k, f"{name} accepted by process {pid}")
        finally:
            os.kill(other, signal.SIGCONT)
    try:
        _check_the_kill(supervisor, store, bots, home, first)
    finally:
        stop.set()
    supervisor.stop()
    store.close()


def _check_the_kill(
    supervisor: _Supervisor, store: Store, bots: dict[str, Recorder], home: dict[int, list[str]], killed: int
) -> None:
    _wait(lambda: all(len(_told(bot)) >= 2 for bot in bots.values()), "every bot plays on its process")
    assert {r["server"].split("-")[-2] for r in _rows(store)} == {str(pid) for pid in home}  # both processes play
    victims = home[killed]
    _wait(lambda: all(len(_told(bots[n])) >= 4 for n in victims), "the killed process's matches under way")
    os.kill(killed, signal.SIGKILL)
    told = {name: set(_told(bots[name])) for name in victims}
    running = {r["id"] for r in _rows(store) if r["status"] == "running" and f"-{killed}-" in r["server"]}
    assert running and running <= {m for name in victims for m, _, _ in told[name]}
    _wait(lambda: all(store.match(m)["status"] == "interrupted" for m in running), "the survivor sweeps")  # type: ignore[index]
    for match in running:
        keys = [(g["deal"], g["rotation"]) for g in store.games(match)]
        assert keys == [(k, k % 3) for k in range(len(keys))]  # each game once, in order
        assert {(match, k, s) for k, s in keys} >= {t for name in victims for t in told[name] if t[0] == match}
    # its bots come back through the shared port and play new matches there
    before = {m for name in victims for m, _, _ in told[name]}
    _wait(lambda: all({m for m, _, _ in _told(bots[n])} - before for n in victims), "its bots play new matches")
    _wait(lambda: len(supervisor.children()) == 2 and killed not in supervisor.children(), "a new process")
    said = "".join(supervisor.said)
    assert f"server process {killed} died (killed by SIGKILL)" in said and "started in place of the dead one" in said
    assert {r["status"] for r in _rows(store) if r["id"] not in running} <= {"running", "finished", "pending"}
