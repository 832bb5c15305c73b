"""Layer 5: the quickstart notebook runs top to bottom in a Jupyter kernel, with a tiny evaluation budget."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from notebook_helpers import assert_stored_without_outputs, code_cells, execute

from bourre_env.observation import OBS_SIZE

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "quickstart.ipynb"
PREFIX_MARK = "kernel sys.prefix: "


def test_notebook_is_stored_without_outputs() -> None:
    assert_stored_without_outputs(NOTEBOOK)


def test_notebook_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOURRE_NOTEBOOK_DEALS", "20")  # the kernel inherits this process's environment
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # One extra cell, not stored in the file: which Python the kernel runs.
    nb.cells.append(nbformat.v4.new_code_cell(f"import sys\nprint({PREFIX_MARK!r} + sys.prefix)"))
    # Run from the notebook's folder, as Jupyter does; a cold numba cache compiles the core in the first cell.
    text = execute(nb, NOTEBOOK.parent)
    assert f"{PREFIX_MARK}{sys.prefix}" in text, "the python3 kernel is not this interpreter's environment"
    assert "deals per evaluation: 20" in text
    assert f"observation: ({OBS_SIZE},) float32" in text
    assert "chips won or lost:" in text
    for pairing in ("heuristic vs random", "ppo vs heuristic", "ppo vs random"):
        assert f"{pairing}, 5 players, 20 deals: advantage " in text, pairing
    assert all(cell.outputs for cell in code_cells(nb)), "every code cell prints something"


def test_notebook_names_the_trainer_of_the_shipped_model() -> None:
    """The shipped policy's metadata says which trainer made it; the notebook points there, and every module and
    file it names exists (it once named a training script that had been removed)."""
    import importlib.util
    import json
    import re

    import numpy as np

    root = NOTEBOOK.parent.parent
    meta = json.loads(str(np.load(root / "agents" / "models" / "ppo.npz")["meta"]))
    trainers = {"batched": "train/ppo/trainer.py", "sb3": "train/sb3/trainer.py"}
    text = "".join(cell.source for cell in nbformat.read(NOTEBOOK, as_version=4).cells)
    assert meta["command"].startswith("bourre train") and "bourre train" in text
    assert trainers[meta["trainer"]] in text
    assert not [other for name, other in trainers.items() if name != meta["trainer"] and other in text]
    for path in re.findall(r"`((?:train|agents|bourre_env|docs)/[\w/.]+\.(?:py|npz|md))`", text):
        assert (root / path).is_file(), path
    for module in re.findall(r"python -m ([\w.]+)", text):
        assert importlib.util.find_spec(module) is not None, module
