"""Layer 5: the quickstart notebook runs top to bottom in a Jupyter kernel, with a tiny evaluation budget."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from bourre_env.observation import OBS_SIZE

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "quickstart.ipynb"
PREFIX_MARK = "kernel sys.prefix: "


def code_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def test_notebook_is_stored_without_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    dirty = [i for i, cell in enumerate(code_cells(nb)) if cell.outputs or cell.execution_count is not None]
    assert not dirty, f"code cells {dirty} hold outputs or execution counts: clear them before committing"


def test_notebook_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOURRE_NOTEBOOK_DEALS", "20")  # the kernel inherits this process's environment
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # One extra cell, not stored in the file: which Python the kernel runs.
    nb.cells.append(nbformat.v4.new_code_cell(f"import sys\nprint({PREFIX_MARK!r} + sys.prefix)"))
    # Run from the notebook's folder, as Jupyter does; a cold numba cache compiles the core in the first cell.
    client = NotebookClient(nb, timeout=600, kernel_name="python3", extra_arguments=["--colors=nocolor"],
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()  # raises CellExecutionError, with the cell's traceback, if any cell fails

    text = "\n".join(output.get("text", "") for cell in code_cells(nb) for output in cell.outputs
                     if output.output_type == "stream")
    assert f"{PREFIX_MARK}{sys.prefix}" in text, "the python3 kernel is not this interpreter's environment"
    assert "deals per evaluation: 20" in text
    assert f"observation: ({OBS_SIZE},) float32" in text
    assert "chips won or lost:" in text
    for pairing in ("heuristic vs random", "ppo vs heuristic", "ppo vs random"):
        assert f"{pairing}, 5 players, 20 deals: advantage " in text, pairing
    assert all(cell.outputs for cell in code_cells(nb)), "every code cell prints something"
