"""The arena on uvloop and without it: ``--loop`` of ``bourre arena serve`` and ``bourre connect`` takes uvloop where
it is installed (the arena extra, on Linux and macOS) and asyncio's own loop elsewhere, and a match tells its bots the
same on either loop (the in-thread server on the loop it is given: ``serve_in_thread``'s ``loop``). Where uvloop is
installed, its absence is had by making its import fail, as on a platform without its wheels; the tests that need it
skip where it is missing."""

from __future__ import annotations

import asyncio
import functools
import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("websockets", reason="the arena extra: pip install -e '.[arena]'")
pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")
pytest.importorskip("uvicorn", reason="the serve extra: pip install -e '.[serve]'")

import arena_helpers  # noqa: E402
from arena_helpers import WAIT, Recorder, Server, start  # noqa: E402

from train import cli  # noqa: E402
from train.arena import command, in_thread  # noqa: E402


def uvloop_installed() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


needs_uvloop = pytest.mark.skipif(not uvloop_installed(), reason="uvloop is not installed (the arena extra)")


@pytest.fixture(name="no_uvloop")
def without_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    """uvloop's import fails, as where it has no wheels (a ``None`` entry of ``sys.modules`` makes it raise)."""
    monkeypatch.setitem(sys.modules, "uvloop", None)


@pytest.mark.usefixtures("no_uvloop")
def test_without_uvloop_auto_is_asyncio_and_uvloop_is_refused_in_one_line() -> None:
    assert command.event_loop("auto") == "asyncio"
    assert command.event_loop("asyncio") == "asyncio"
    with pytest.raises(ValueError, match=r"^--loop uvloop: uvloop is not installed \(pip install uvloop") as err:
        command.event_loop("uvloop")
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="--loop: expected one of auto, asyncio, uvloop"):
        command.event_loop("trio")


@needs_uvloop
def test_with_uvloop_auto_is_uvloop() -> None:
    assert command.event_loop("auto") == "uvloop"
    assert command.event_loop("uvloop") == "uvloop"
    assert command.event_loop("asyncio") == "asyncio"


def loop_class_name(loop: str) -> str:
    """The class of the loop ``command.run_on`` runs a coroutine on."""
    seen: list[str] = []

    async def main() -> None:
        running = type(asyncio.get_running_loop())
        seen.append(f"{running.__module__}.{running.__qualname__}")

    command.run_on(main(), loop)
    return seen[0]


def test_run_on_asyncio_runs_on_the_standard_librarys_loop() -> None:
    assert loop_class_name("asyncio").startswith("asyncio.")


@needs_uvloop
def test_run_on_uvloop_runs_on_uvloops_loop() -> None:
    assert loop_class_name("uvloop") == "uvloop.Loop"


@pytest.mark.usefixtures("no_uvloop")
@pytest.mark.parametrize(
    "argv",
    [
        ["arena", "serve", "--loop", "uvloop"],
        ["connect", "random", "--name", "alice", "--token-file", "missing", "--loop", "uvloop"],
    ],
    ids=["serve", "connect"],
)
def test_the_commands_refuse_a_missing_uvloop_before_they_start(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # serve would make its data folder here, had it started
    assert cli.main(argv) == 2
    assert "--loop uvloop: uvloop is not installed" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def served_on(loop: str, folder: Path, monkeypatch: pytest.MonkeyPatch, uvloop_missing: bool = False) -> Server:
    """An in-thread arena on the event loop ``loop`` (``serve_in_thread``'s ``loop``); ``uvloop_missing``: on
    uvicorn's auto choice instead, with uvloop's import made to fail, as where it has no wheels."""
    with monkeypatch.context() as patch:
        if uvloop_missing:
            patch.setitem(sys.modules, "uvloop", None)
        else:
            patch.setattr(arena_helpers, "serve_in_thread", functools.partial(in_thread.serve_in_thread, loop=loop))
        server = Server(folder)  # uvicorn has chosen its loop once the server listens
    running = type(server.uvicorn.servers[0].get_loop())
    assert running.__module__.startswith(loop), running
    return server


def told(server: Server) -> list[str]:
    """What two bots are told in a 3-deal match with a built-in seat, the match's id replaced."""
    bots = []
    for name in ("alice", "bob"):
        token = server.store.add_bot(name)
        bot = Recorder()
        bots.append((bot, start(bot, server, name, token)))
    server.wait_connected("alice", "bob")
    server.arena.draw_secret = lambda: "cd" * 32  # the same deals on every server
    status, answer = server.match({"seats": ["bot:alice", "heuristic", "bot:bob"], "deals": 3})
    assert status == 200, answer
    for _, thread in bots:
        thread.join(WAIT)
    messages: list[dict[str, Any]] = [m for bot, _ in bots for m in bot.messages if "match" in m]
    return [json.dumps(m, sort_keys=True).replace(m["match"], "M") for m in messages]


@needs_uvloop
def test_a_match_tells_its_bots_the_same_on_uvloop_and_on_asyncios_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = []
    for loop in ("asyncio", "uvloop"):
        server = served_on(loop, tmp_path / loop, monkeypatch)
        try:
            seen.append(told(server))
        finally:
            server.close()
    on_asyncio, on_uvloop = seen
    assert len(on_asyncio) > 20
    assert on_asyncio == on_uvloop


def test_a_match_is_played_on_asyncios_loop_where_uvloop_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = served_on("asyncio", tmp_path, monkeypatch, uvloop_missing=True)
    try:
        messages = told(server)
    finally:
        server.close()
    assert sum('"type": "match_end"' in m for m in messages) == 2
