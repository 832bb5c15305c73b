"""The privileged views of the env (``hand(agent)``, ``state_vector``, ``np_random``) are documented as such in
the module docstrings and the README."""

from __future__ import annotations

from pathlib import Path

import bourre_env
from bourre_env import batch
from bourre_env import bourre_v0 as env_module

ROOT = Path(__file__).resolve().parent.parent


def test_privileged_views_are_documented_as_such() -> None:
    doc = " ".join((env_module.__doc__ or "").split())
    section = doc.split("Privileged access -----------------", 1)[1]
    for name in ("hand(agent)", "state_vector", "np_random"):
        assert f"``{name}``" in section
    assert "Privileged" in (bourre_env.raw_env.hand.__doc__ or "")
    assert "privileged" in (batch.__doc__ or "") and "privileged" in (bourre_env.single_agent.__doc__ or "")
    readme = (ROOT / "README.md").read_text()
    assert "Privileged access" in readme and "`state_vector`" in readme and "`np_random`" in readme
