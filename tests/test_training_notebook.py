"""Layer 5: the training notebook runs top to bottom in a Jupyter kernel: a small batched run, its learning curve,
an evaluation of the agent it made (a tiny budget here)."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from notebook_helpers import assert_stored_without_outputs, code_cells, draws_an_image, execute

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "training.ipynb"


def test_notebook_is_stored_without_outputs() -> None:
    assert_stored_without_outputs(NOTEBOOK)


def test_notebook_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # the kernel inherits this process's environment: a tiny budget, and this checkout's packages first
    monkeypatch.setenv("BOURRE_NOTEBOOK_STEPS", "1024")
    monkeypatch.setenv("BOURRE_NOTEBOOK_DEALS", "8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    text = execute(nb, NOTEBOOK.parent)
    assert "PPO steps: 1,024; deals per evaluation: 8" in text
    assert "| heuristic | 5 | 8 |" in text and "model.npz" in text  # the final evaluation and the run folder
    assert text.count("step ") >= 4  # the evaluations during training, one line each
    assert draws_an_image(nb), "the learning curve is drawn"
    for field in ("heuristic", "random"):
        assert f"ppo vs {field}, 5 players, 8 deals: advantage " in text
    assert all(cell.outputs for cell in code_cells(nb)), "every code cell prints something"


def test_notebook_states_the_measured_time_of_the_main_job() -> None:
    """The notebook's time for a default ``bourre train`` brackets the measurements of docs/training.md's main job."""
    import re

    page = (ROOT / "docs" / "training.md").read_text()
    main_job = page.split("## The main job", 1)[1].split("\n\n")[1]  # its first paragraph: the measurements
    measured = [int(m) + int(s) / 60 for m, s in re.findall(r"(\d+) min (\d+) s", main_job)]
    assert measured, "docs/training.md's main job gives no time"
    text = "".join(cell.source for cell in nbformat.read(NOTEBOOK, as_version=4).cells)
    claim = re.search(r"`bourre train` with no arguments is the full run \((\d+) to (\d+) minutes", text)
    assert claim is not None, "the notebook states how long a default bourre train takes"
    low, high = int(claim[1]), int(claim[2])
    assert all(low - 0.5 <= minutes <= high + 0.5 for minutes in measured), (claim[0], measured)
