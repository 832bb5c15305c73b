"""The arena's commands as a user runs them, each in a process of its own: ``bourre connect`` plays a match, comes back
after its server restarts or closes it for any reason but its own token, name or version (status 2 for those), and
stops on Ctrl-C (status 130, one line, no traceback), under a flood of messages too; ``bourre arena match`` sends
the operator's token; ``bourre arena serve`` makes an operator token at its first start; ``add-bot`` and
``add-operator`` write a token to a file only its owner may read, and ``connect`` and ``match`` warn of one that
others may. No timing is asserted."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from arena_helpers import WAIT, Server, arena_server, free_port, serve_process  # noqa: F401 (arena_server: the fixture)
from hostile_server import WELCOME, HostileServer, refuses, sends, turn

from bourre_env.observation import OBS_SIZE
from train.arena.storage import Store
from train.cli import main

BOURRE = [sys.executable, "-c", "import sys; from train.cli import main; sys.exit(main())"]
ROOT = Path(__file__).resolve().parent.parent


def _connect(url: str, name: str, token_file: Path) -> subprocess.Popen[str]:
    if not token_file.exists():
        token_file.write_text("token")
        token_file.chmod(0o600)
    return subprocess.Popen(
        [*BOURRE, "connect", "random", "--url", url, "--name", name, "--token-file", str(token_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def _interrupt(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Ctrl-C: its status and what it wrote to stderr."""
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=WAIT)
    return process.returncode, err


class _Stderr:
    """A process's stderr, read as it comes (its progress line is rewritten in place: no line ends to wait for)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        self.process, self.fd = process, process.stderr.fileno()
        self.chunks: list[bytes] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while chunk := os.read(self.fd, 65536):
            self.chunks.append(chunk)

    def text(self) -> str:
        return b"".join(self.chunks).decode(errors="replace")

    def wait_for(self, words: str) -> None:
        deadline = time.monotonic() + WAIT
        while words not in self.text():
            assert time.monotonic() < deadline and self.process.poll() is None, f"{words!r} not in {self.text()!r}"
            time.sleep(0.02)

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C: its status and all it wrote to stderr."""
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(WAIT)
        self.reader.join(WAIT)
        assert self.process.stdout is not None
        self.process.stdout.close()
        return code, self.text()


def _bots(port: int, operator: str) -> list[str]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/bots")
    request.add_header("Authorization", f"Bearer {operator}")
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as answer:
            bots: list[str] = json.loads(answer.read())["bots"]
            return bots
    except OSError:
        return []


def _match(port: int, operator: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/matches",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {operator}"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=WAIT) as answer:
        result: dict[str, Any] = json.loads(answer.read())
    return result


@pytest.mark.parametrize("session", [False, True], ids=["single", "session"])
def test_bourre_connect_plays_a_match_and_stops_cleanly_on_ctrl_c(
    server: Server, tmp_path: Path, session: bool
) -> None:
    """A match of two deals each played once, and a session of two deals with the pot carried."""
    name, token = server.new_bot()
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    process = _connect(server.url, name, token_file)
    stderr = _Stderr(process)
    try:
        server.wait_connected(name)
        body = {"seats": ["heuristic", f"bot:{name}", "random"], "deals": 2}
        status, answer = server.match({**body, "format": "session"} if session else body)
        assert status == 200, answer
        assert answer["report"]["format"] == ("session" if session else "single") and answer["report"]["deals"] == 2
        counts = answer["report"]["results"][1]["counts"]
        assert counts["decisions"] > 0 and counts["fallbacks"] == 0
        # the server answers once the match is over, maybe before the bot has read its last messages: the progress
        # line is brought up to date at the match's end (2 deals, each played once)
        stderr.wait_for(f"{name}: {counts['decisions']} moves, 2 games")
    finally:
        code, err = stderr.interrupt()
    assert code == 130, err
    assert "Traceback" not in err and "bourre connect: stopped" in err


def test_bourre_connect_comes_back_after_its_server_restarts(tmp_path: Path) -> None:
    store = Store(tmp_path)
    token, operator = store.add_bot("alice"), store.add_operator("tests")
    store.close()
    (tmp_path / "token").write_text(token)
    port = free_port()
    server = serve_process(tmp_path, port)
    process = _connect(f"ws://127.0.0.1:{port}/bot", "alice", tmp_path / "token")
    try:
        deadline = time.monotonic() + WAIT
        while "alice" not in _bots(port, operator):
            assert time.monotonic() < deadline and process.poll() is None, "bourre connect did not connect"
            time.sleep(0.05)
        server.kill()
        server.wait(WAIT)
        server = serve_process(tmp_path, port)  # the same port: the bot retries it
        while "alice" not in _bots(port, operator):
            assert time.monotonic() < deadline and process.poll() is None, "bourre connect did not come back"
            time.sleep(0.05)
        answer = _match(port, operator, {"seats": ["bot:alice", "heuristic"], "deals": 1})
        counts = answer["report"]["results"][0]["counts"]
        assert answer["report"]["status"] == "finished" and counts["decisions"] > 0 and counts["fallbacks"] == 0
    finally:
        code, err = _interrupt(process)
        server.kill()
        server.wait(WAIT)
    assert code == 130 and "Traceback" not in err, err
    assert "connection lost" in err  # told once per loss, on its progress line's stream


def test_bourre_arena_match_sends_the_operator_token(server: Server, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{server.port}"
    args = [*BOURRE, "arena", "match", "--seats", "heuristic,random", "--deals", "1", "--url", url]
    token_file = tmp_path / "operator"
    token_file.write_text(server.operator)
    done = subprocess.run(
        [*args, "--token-file", str(token_file), "--fallback", "random"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=WAIT,
    )
    assert done.returncode == 0 and "fallback random (finished)" in done.stdout, done.stderr
    env = {k: v for k, v in os.environ.items() if k != "BOURRE_ARENA_TOKEN"}
    refused = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=WAIT, env=env)
    assert refused.returncode == 2 and "an operator token is needed" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    token_file.write_text("not-a-token")
    wrong = subprocess.run(
        [*args, "--token-file", str(token_file)], capture_output=True, text=True, cwd=ROOT, timeout=WAIT
    )
    assert wrong.returncode == 2 and "unknown operator token" in wrong.stderr, wrong.stderr


def test_the_first_start_of_a_server_makes_an_operator_token(tmp_path: Path) -> None:
    said: list[str] = []
    server = serve_process(tmp_path, free_port(), said)
    server.kill()
    server.wait(WAIT)
    line = next(line for line in said if "the operator token" in line)
    token = line.rsplit(" ", 1)[1].strip()
    store = Store(tmp_path)
    try:
        assert store.operator_of(token) == "operator"
    finally:
        store.close()
    again = serve_process(tmp_path, free_port(), said := [])
    again.kill()
    again.wait(WAIT)
    assert not any("operator token" in line for line in said)  # made once: only its hash is kept


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BOURRE, *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=WAIT)


def _hostile_turn(number: int) -> dict[str, Any]:
    return turn(number, observation=[0.0] * OBS_SIZE)


def test_bourre_connect_comes_back_after_any_closure_that_is_not_about_it(tmp_path: Path) -> None:
    server = HostileServer(
        [
            refuses("rate", "more than 100 messages a second: closed"),
            refuses("connected", "bot 'alice' is connected already"),
            refuses("shutdown", "the server is stopping"),
            refuses(None, "no hello within 5 s"),  # an older server: no reason, and words that are not about the bot
            sends(WELCOME, _hostile_turn(1), then_close=False, read_actions=True),
        ]
    )
    process = _connect(server.url, "alice", tmp_path / "token")
    try:
        assert server.got_action.wait(WAIT), "bourre connect did not come back"
    finally:
        code, err = _interrupt(process)
        server.close()
    assert code == 130 and "Traceback" not in err, err
    assert err.count("closed by the server: ") == 4 and server.connections == 5
    assert [(a["turn"], a["action"] in (52, 53)) for a in server.actions] == [(1, True)]


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("auth", "unknown bot name, or a wrong token"),
        ("version", "protocol version 1 is not spoken here"),
        ("name", "a bad name"),
        (None, "unknown bot name, or a wrong token"),
    ],
)
def test_bourre_connect_stops_for_good_when_refused_for_its_token_name_or_version(
    tmp_path: Path, reason: str | None, message: str
) -> None:
    (tmp_path / "token").write_text("t")
    server = HostileServer([refuses(reason, message), sends(WELCOME, then_close=False)])
    try:
        done = _run("connect", "random", "--url", server.url, "--name", "alice", "--token-file", tmp_path / "token")
    finally:
        server.close()
    assert done.returncode == 2, done
    assert done.stderr.strip().splitlines()[-1] == f"bourre connect: error: refused by the server: {message}"
    assert "Traceback" not in done.stderr and server.connections == 1


def test_ctrl_c_stops_bourre_connect_under_a_flood_of_messages(tmp_path: Path) -> None:
    """The server floods the bot with turns and never reads: Ctrl-C ends it with its one line. (How long that takes
    is measured, not asserted: the close no longer waits 10 s for a close frame the flood hides.)"""

    async def flood(ws: Any, server: HostileServer) -> None:
        await server.receive(ws)
        await ws.send(json.dumps(WELCOME))
        number = 0
        while True:
            number += 1
            await ws.send(json.dumps(_hostile_turn(number)))
            if number == 200:
                server.got_action.set()  # the bot is busy with the flood by now

    server = HostileServer([flood])
    process = _connect(server.url, "alice", tmp_path / "token")
    try:
        assert server.got_action.wait(WAIT)
    finally:
        code, err = _interrupt(process)
        server.close()
    assert code == 130 and "Traceback" not in err and "bourre connect: stopped" in err, err


def test_a_url_or_name_no_server_takes_is_refused_before_connecting(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("t")
    for option, value in (("--url", "http://127.0.0.1:1/bot"), ("--name", "not a name!")):
        args = ["connect", "random", "--name", "alice", "--url", "ws://127.0.0.1:1/bot", "--token-file"]
        args = [*args, str(tmp_path / "token"), option, value]
        assert main(args) == 2


def test_arena_match_refuses_a_bots_address_before_sending(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "op.token").write_text("t")
    args = ["arena", "match", "--seats", "random,random", "--token-file", str(tmp_path / "op.token")]
    assert main([*args, "--url", "ws://127.0.0.1:1/bot"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "bourre arena: error: --url: expected the server's http://HOST:PORT or https://..., got " + repr(
        "ws://127.0.0.1:1/bot"
    ), err


@pytest.mark.parametrize("what", ["add-bot", "add-operator"])
def test_a_token_file_is_made_for_its_owner_alone(
    tmp_path: Path, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    token_file = tmp_path / "alice.token"
    old_mask = os.umask(0)  # the most open umask: the file must be 600 whatever the user's
    try:
        assert main(["arena", what, "alice", "--data", str(tmp_path), "--token-file", str(token_file)]) == 0
        out, err = capsys.readouterr()
        assert out == "" and f"written to {token_file}, readable by its owner alone (mode 600)" in err
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        token = token_file.read_text().strip()
        store = Store(tmp_path)
        try:
            assert store.check_token("alice", token) if what == "add-bot" else store.operator_of(token) == "alice"
        finally:
            store.close()

        # an existing file: refused in one line, and no token made (the name is still free)
        assert main(["arena", what, "bob", "--data", str(tmp_path), "--token-file", str(token_file)]) == 2
        err = capsys.readouterr().err
        assert err.strip() == f"bourre arena: error: --token-file: {token_file} exists already (--force replaces it)"
        assert token_file.read_text().strip() == token
        # --force replaces it, and a file that was open to all is made anew, for its owner alone
        token_file.chmod(0o666)
        assert main(["arena", what, "bob", "--data", str(tmp_path), "--token-file", str(token_file), "--force"]) == 0
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600 and token_file.read_text().strip() != token
    finally:
        os.umask(old_mask)
    # without the option: printed, as before, and the line on stderr says how to keep it
    assert main(["arena", what, "carol", "--data", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert len(out.strip()) > 20 and "readable by you alone (--token-file FILE writes one, mode 600)" in err


def test_a_token_file_others_may_read_is_warned_of(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("t")
    token_file.chmod(0o644)
    port = free_port()  # nothing listens there: the command fails, after the warning
    done = _run(
        "arena", "match", "--seats", "heuristic,random", "--url", f"http://127.0.0.1:{port}", "--token-file", token_file
    )
    warning = f"warning: --token-file {token_file} is open to others (mode 644): chmod 600 {token_file}"
    assert done.returncode == 2 and done.stderr.splitlines()[0] == warning, done.stderr
    server = HostileServer([refuses("auth", "unknown bot name, or a wrong token")])
    try:
        done = _run("connect", "random", "--url", server.url, "--name", "alice", "--token-file", token_file)
    finally:
        server.close()
    assert done.returncode == 2 and done.stderr.splitlines()[0] == warning, done.stderr
    token_file.chmod(0o600)
    assert (
        main(["arena", "match", "--seats", "a,b", "--url", f"http://127.0.0.1:{port}", "--token-file", str(token_file)])
        == 2
    )
    assert "warning" not in capsys.readouterr().err


def _serve_until_listening(data: Path, *extra: str) -> list[str]:
    """``bourre arena serve --data DATA ...`` as a process, killed once it says it listens: the lines it printed."""
    process = subprocess.Popen(
        [*BOURRE, "arena", "serve", "--data", str(data), "--port", str(free_port()), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    assert process.stdout is not None
    said = []
    try:
        for line in process.stdout:
            said.append(line)
            if "bots connect to" in line:
                break
    finally:
        process.kill()
        process.wait(WAIT)
    return said


def test_serve_writes_the_first_starts_operator_token_to_a_new_private_file(tmp_path: Path) -> None:
    token_file = tmp_path / "operator.token"
    said = _serve_until_listening(tmp_path / "data", "--token-file", str(token_file))
    assert any(f"the operator token is written to {token_file}" in line for line in said), said
    assert not any("the operator token (shown once" in line for line in said)  # not printed
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    store = Store(tmp_path / "data")
    try:
        assert store.operator_of(token_file.read_text().strip()) == "operator"
    finally:
        store.close()
    # an existing file is refused at once, before the server starts
    refused = subprocess.run(
        [*BOURRE, "arena", "serve", "--data", str(tmp_path / "data"), "--token-file", str(token_file)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=WAIT,
    )
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    # a later start makes no token: the new file is removed again, and the first one still holds the token
    again = tmp_path / "again.token"
    said = _serve_until_listening(tmp_path / "data", "--token-file", str(again))
    assert any("no operator token made: this data has one already" in line for line in said), said
    assert not again.exists() and token_file.read_text().strip()
