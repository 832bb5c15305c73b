"""A command's results never replace earlier ones silently (``train.outputs``): the files it wrote over are named on
its last line, with when the earlier ones were written, and files it did not touch are not."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from bourre_env import atomic_files
from train import cli
from train.outputs import Earlier


def _age(path: Path, seconds: int = 3600) -> None:
    """Makes ``path`` look written an hour ago, so that a rewrite within the same clock tick still shows."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns - seconds * 10**9, stat.st_mtime_ns - seconds * 10**9))


def test_a_replaced_file_is_named_with_when_it_was_written(tmp_path: Path) -> None:
    replaced, kept = tmp_path / "eval.json", tmp_path / "notes.txt"
    for path in (replaced, kept):
        path.write_text("earlier\n")
        _age(path)
    earlier = Earlier.at(tmp_path, None)
    assert earlier.line() is None  # nothing written yet
    atomic_files.write_text(replaced, "new\n")
    line = earlier.line()
    assert line is not None and line.startswith(f"replaced {replaced} (written 20")
    assert str(kept) not in line


def test_a_file_appended_to_is_not_called_replaced(tmp_path: Path) -> None:
    transcript = tmp_path / "llm_transcript.jsonl"
    transcript.write_text("{}\n")
    earlier = Earlier.at(transcript)
    with transcript.open("a") as handle:
        handle.write("{}\n")
    assert earlier.line() == f"appended to {transcript}"


def test_many_replaced_files_are_counted_under_their_folder(tmp_path: Path) -> None:
    folder = tmp_path / "histories"
    paths = [folder / f"{n}p" / f"deal{i}.json" for n in (3, 5) for i in range(3)]
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("earlier\n")
        _age(path)
    assert Earlier.at(folder).files == {}  # the files lie one level down
    earlier = Earlier.at(folder, depth=1)
    for path in paths[:4]:
        atomic_files.write_text(path, "new\n")
    line = earlier.line()
    assert line is not None and line.startswith(f"replaced 4 files under {folder} (written 20")


def test_an_output_not_there_before_is_not_called_replaced(tmp_path: Path) -> None:
    earlier = Earlier.at(tmp_path / "game.json", tmp_path / "absent")
    atomic_files.write_text(tmp_path / "game.json", "{}\n")
    assert earlier.line() is None


def _eval(out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    args = ["eval", "--candidate", "random", "--field", "random", "--players", "3", "--deals", "2", "--workers", "1"]
    assert cli.main([*args, "--no-progress", "--out", str(out)]) == 0
    return capsys.readouterr().out


def test_eval_names_the_earlier_evaluation_it_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "eval"
    assert "replaced" not in _eval(out, capsys)
    _age(out / "eval.json")
    second = _eval(out, capsys)
    assert f"replaced {out / 'eval.json'} (written 20" in " ".join(second.split())


def test_play_save_names_the_earlier_history_it_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "game.json"
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    for _ in range(2):
        assert cli.main(["play", "--seats", "random,random,random", "--seed", "3", "--save", str(saved)]) == 0
        _age(saved)
    first, second = capsys.readouterr().out.split(f"wrote {saved}")[1:]
    assert "replaced" not in first and f"replaced {saved} (written 20" in second
