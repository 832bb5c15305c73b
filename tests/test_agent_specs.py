"""Agent specs (``agents.make``): an option given twice is refused by name, ``sample`` takes 0 or 1 only, and a
policy file named alone suggests ``ppo:PATH``."""

from __future__ import annotations

import pytest

import agents


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ("pimc:64,worlds=8", "worlds"),
        ("pimc:worlds=8,worlds=9", "worlds"),
        ("ismcts:8,iterations=9,iterations=10", "iterations"),
        ("pimc:8,rollout=random,rollout=heuristic", "rollout"),
    ],
)
def test_an_option_given_twice_is_refused_by_name(spec: str, key: str) -> None:
    with pytest.raises(ValueError, match=f"option {key} given twice"):
        agents.make(spec)
    with pytest.raises(ValueError, match=f"option {key} given twice"):
        agents.check_budget(spec)


@pytest.mark.parametrize("value", ["2", "-1", "yes", "0.5", ""])
def test_sample_takes_0_or_1_only(value: str) -> None:
    for name in ("pimc:8", "ismcts:8"):
        with pytest.raises(ValueError, match="option sample: expected 0 or 1"):
            agents.make(f"{name},sample={value}")
    assert agents.make("pimc:8,sample=1").rollout.sample is True  # type: ignore[attr-defined]
    assert agents.make("pimc:8,sample=false").rollout.sample is False  # type: ignore[attr-defined]


def test_a_policy_file_named_alone_suggests_ppo_path() -> None:
    with pytest.raises(ValueError, match="a policy file is named ppo:runs/small/model.npz"):
        agents.make("runs/small/model.npz")
