"""Report files of ``bourre eval --tournament`` and ``bourre exploit``: each appears whole or not at all.

A writer that fails (or is interrupted) half-way leaves the earlier file, or none, never a piece of a new one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from train.eval.tournament import TournamentReport, tournament
from train.research import exploiter as exploit


def _half_written(path: str | Path) -> None:
    """A plot that dies after writing part of its file."""
    Path(path).write_bytes(b"\x89PNG half")
    raise RuntimeError("killed while plotting")


def test_a_tournament_plot_that_fails_leaves_no_piece_of_a_png(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    report = tournament(["random", "heuristic"], players=3, deals=4, progress=False)
    earlier = tmp_path / "tournament_3p.png"
    earlier.write_bytes(b"the earlier plot")
    monkeypatch.setattr(TournamentReport, "plot", lambda self, table, path: _half_written(path))
    with pytest.raises(RuntimeError):
        report.save(tmp_path)
    assert earlier.read_bytes() == b"the earlier plot"
    assert json.loads((tmp_path / "tournament.json").read_text())["pool"] == ["random", "heuristic"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tournament.json", "tournament.md", "tournament_3p.png"]


def test_an_exploit_curve_that_fails_leaves_no_piece_of_a_png(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    result: dict[str, Any] = {"agent": "heuristic", "players": 3, "curve": []}
    monkeypatch.setattr(exploit, "_plot", lambda curve, agent, players, path: _half_written(path))
    with pytest.raises(RuntimeError):
        exploit.save(result, tmp_path)
    assert json.loads((tmp_path / "exploit.json").read_text()) == result
    assert [p.name for p in tmp_path.iterdir()] == ["exploit.json"]


def test_exact_nashconv_files_are_whole_and_a_bad_out_is_refused_first(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exploitability = pytest.importorskip("train.research.nashconv")
    solved: list[str] = []

    def run_config(name: str, iterations: int, progress: bool = False) -> dict[str, Any]:
        solved.append(name)
        return {
            "config": name,
            "sizes": {"states": 10, "information_states": 4},
            "cfr_plus": [[1, 0.5]],
            "agents": {"random": 0.25},
        }

    monkeypatch.setattr(exploitability, "run_config", run_config)
    assert exploit.main(["--exact", "2p-2cards", "--out", "/proc/forbidden", "--no-progress"]) == 2
    assert "--out: cannot write to the folder /proc/forbidden" in capsys.readouterr().err and not solved
    monkeypatch.setattr(exploitability, "plot", lambda results, path: _half_written(path))
    with pytest.raises(RuntimeError):
        exploitability.main_exact(["2p-2cards"], tmp_path, progress=False)
    assert json.loads((tmp_path / "nashconv.json").read_text())[0]["config"] == "2p-2cards"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nashconv.json", "nashconv.md"]
