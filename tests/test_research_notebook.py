"""Layer 5: the research notebook runs top to bottom in a Jupyter kernel with tiny budgets: the OpenSpiel game,
CFR+ and the agents' exact NashConv on a small configuration, a short exploiter run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("pyspiel", reason="OpenSpiel is an optional extra: pip install -e '.[openspiel]'")
nbformat = pytest.importorskip("nbformat", reason="the notebook test needs the dev extra")
from notebook_helpers import assert_stored_without_outputs, draws_an_image, execute  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "research.ipynb"


def test_notebook_is_stored_without_outputs() -> None:
    assert_stored_without_outputs(NOTEBOOK)


def test_notebook_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOURRE_NOTEBOOK_CFR_ITERATIONS", "50")
    monkeypatch.setenv("BOURRE_NOTEBOOK_EXPLOIT_STEPS", "1024")
    monkeypatch.setenv("BOURRE_NOTEBOOK_EXPLOIT_DEALS", "8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    text = execute(nb, NOTEBOOK.parent)
    assert "CFR+ iterations: 50; exploiter steps: 1,024; deals: 8" in text
    assert "returns (chips):" in text
    assert "'states': 429" in text and "CFR+ iteration    50: NashConv" in text
    for agent in ("random", "heuristic", "ppo"):
        assert f"{agent:>9}: NashConv " in text
    assert "exploiter of heuristic at 5 players, 1,024 steps" in text
    assert draws_an_image(nb), "the NashConv curve is drawn"
