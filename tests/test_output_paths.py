"""Where commands write: a save replaces only a regular file (a device, a socket or a FIFO is refused before
the work, a symlink is followed to its target), and a path that is not a regular file says what it is."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

import agents
from agents.ppo import load_policy
from agents.search import value as search_value
from train import cli
from train.runs import RunState


def _one_line_error(capsys: pytest.CaptureFixture[str], code: int, *argv: str) -> str:
    assert cli.main(list(argv)) == code
    err = capsys.readouterr().err
    lines = [line for line in err.strip().splitlines() if not line.startswith("warning: ")]
    assert "Traceback" not in err and len(lines) == 1, err
    return lines[0]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_play_save_to_a_full_device_says_so_and_leaves_the_device(capsys: pytest.CaptureFixture[str]) -> None:
    before = os.stat("/dev/full")
    line = _one_line_error(capsys, 1, "play", "--seats", "random,random", "--seed", "1", "--save", "/dev/full")
    assert "--save: nothing written" in line and "No space left" in line
    after = os.stat("/dev/full")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


def test_play_save_through_a_symlink_writes_its_target(tmp_path: Path) -> None:
    target = tmp_path / "histories" / "game.json"
    target.parent.mkdir()
    link = tmp_path / "game.json"
    link.symlink_to(target)
    assert cli.main(["play", "--seats", "random,random", "--seed", "1", "--save", str(link)]) == 0
    assert link.is_symlink() and json.loads(target.read_text())["format"] == "bourre-hand-history"


def test_ladder_json_refuses_a_socket_before_the_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        line = _one_line_error(capsys, 2, "ladder", "random", "--deals", "1", "--json", str(path), "--no-progress")
    assert "--json" in line and "is a socket, not a regular file" in line


def test_paths_that_are_not_regular_files_say_what_they_are(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.npz"
    os.mkfifo(fifo)  # opening it to read would wait for a writer for ever
    with pytest.raises(ValueError, match=r"pipe.npz: a FIFO \(named pipe\), not a policy file"):
        load_policy(fifo)
    with pytest.raises(ValueError, match="/dev/zero: a character device, not a policy file"):
        agents.make("ppo:/dev/zero")
    with pytest.raises(ValueError, match="a folder, not a value file"):
        search_value.load_value(tmp_path)
    with pytest.raises(ValueError, match="a FIFO"):
        RunState.load(fifo)
    with pytest.raises(ValueError, match="no such policy file"):
        load_policy(tmp_path / "missing.npz")
