"""One Gymnasium for the user and for CI (README, Install): the main job's install (``.[train]``) and CI's (every
extra) must resolve to the same version. RLlib (the ``ray`` extra) pins Gymnasium exactly, so the base requirement
pins the same version: with a looser one, ``.[train]`` alone got the newest Gymnasium while CI tested RLlib's.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def _base_gymnasium() -> Requirement:
    # the dependencies list of [project], read as text: tomllib is not in Python 3.10's standard library
    text = PYPROJECT.read_text(encoding="utf-8")
    dependencies = text.split("\ndependencies = [", 1)[1].split("\n]", 1)[0]
    found = re.findall(r'^\s*"(gymnasium[^"]*)"', dependencies, flags=re.MULTILINE)
    assert len(found) == 1, f"one gymnasium requirement in [project] dependencies, found {found}"
    return Requirement(found[0])


def _exact_version(requirement: Requirement) -> str:
    pins = [spec.version for spec in requirement.specifier if spec.operator == "=="]
    assert len(pins) == 1 and len(requirement.specifier) == 1, f"{requirement} is not one exact version"
    return pins[0]


def test_the_base_requirement_pins_one_gymnasium_the_installed_one() -> None:
    pinned = _exact_version(_base_gymnasium())
    assert metadata.version("gymnasium") == pinned


def test_the_pin_is_rllibs() -> None:
    try:
        ray_requirements = metadata.requires("ray") or []
    except metadata.PackageNotFoundError:
        pytest.skip("Ray is not installed (the ray extra): its RLlib pin cannot be compared")
    rllib_pins = [
        Requirement(line)
        for line in ray_requirements
        if line.startswith("gymnasium") and Requirement(line).marker is not None and 'extra == "rllib"' in line
    ]
    assert len(rllib_pins) == 1, f"Ray's rllib extra names one gymnasium: {rllib_pins}"
    assert _exact_version(rllib_pins[0]) == _exact_version(_base_gymnasium())
