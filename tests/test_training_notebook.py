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
