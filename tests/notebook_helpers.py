"""Shared by the notebook tests: a notebook is stored without outputs, and runs top to bottom in a kernel."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient


def code_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def assert_stored_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = [i for i, cell in enumerate(code_cells(nb)) if cell.outputs or cell.execution_count is not None]
    assert not dirty, f"code cells {dirty} hold outputs or execution counts: clear them before committing"


def execute(nb: nbformat.NotebookNode, folder: Path) -> str:
    """Run ``nb`` in a python3 kernel from ``folder``, as Jupyter does (the kernel inherits this process's
    environment); raises CellExecutionError, with the cell's traceback, if a cell fails. Returns the text the
    cells printed."""
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        extra_arguments=["--colors=nocolor"],
        resources={"metadata": {"path": str(folder)}},
    )
    client.execute()
    return "\n".join(
        output.get("text", "") for cell in code_cells(nb) for output in cell.outputs if output.output_type == "stream"
    )


def draws_an_image(nb: nbformat.NotebookNode) -> bool:
    return any(
        output.output_type == "display_data" and "image/png" in output.get("data", {})
        for cell in code_cells(nb)
        for output in cell.outputs
    )
