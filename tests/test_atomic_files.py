"""Files the project writes appear whole or not at all (``bourre_env.atomic_files``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bourre_env import atomic_files


def test_write_text_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    assert atomic_files.write_text(target, "new ünïcode") == target
    assert target.read_text(encoding="utf-8") == "new ünïcode"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary file is left behind
    assert target.stat().st_mode & 0o777 == 0o644


def test_an_error_while_writing_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "model.npz"
    target.write_bytes(b"good")
    with pytest.raises(KeyboardInterrupt), atomic_files.replacing(target, suffix=".npz") as tmp:
        assert tmp.name.endswith(".npz") and tmp.parent == tmp_path
        tmp.write_bytes(b"half")
        raise KeyboardInterrupt
    assert target.read_bytes() == b"good"
    assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]


def test_a_missing_folder_is_an_os_error_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        atomic_files.write_bytes(tmp_path / "no" / "such.json", b"{}")
    assert list(tmp_path.iterdir()) == []
