"""Layer 5: the training notebook runs top to bottom in a Jupyter kernel: a small batched run, its learning curve,
an evaluation of the agent it made (a tiny budget here)."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "training.ipynb"


def code_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def test_notebook_is_stored_without_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    dirty = [i for i, cell in enumerate(code_cells(nb)) if cell.outputs or cell.execution_count is not None]
    assert not dirty, f"code cells {dirty} hold outputs or execution counts: clear them before committing"


def test_notebook_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # the kernel inherits this process's environment: a tiny budget, and this checkout's packages first
    monkeypatch.setenv("BOURRE_NOTEBOOK_STEPS", "1024")
    monkeypatch.setenv("BOURRE_NOTEBOOK_DEALS", "8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", extra_arguments=["--colors=nocolor"],
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()  # raises CellExecutionError, with the cell's traceback, if any cell fails

    text = "\n".join(output.get("text", "") for cell in code_cells(nb) for output in cell.outputs
                     if output.output_type == "stream")
    assert "PPO steps: 1,024; deals per evaluation: 8" in text
    assert "| heuristic | 5 | 8 |" in text and "model.npz" in text  # the final evaluation and the run folder
    assert text.count("step ") >= 4  # the evaluations during training, one line each
    assert any(output.output_type == "display_data" and "image/png" in output.get("data", {})
               for cell in code_cells(nb) for output in cell.outputs), "the learning curve is drawn"
    for field in ("heuristic", "random"):
        assert f"ppo vs {field}, 5 players, 8 deals: advantage " in text
    assert all(cell.outputs for cell in code_cells(nb)), "every code cell prints something"
