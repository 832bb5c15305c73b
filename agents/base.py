"""The agent interface: seeded at construction, ``act(observation) -> action id``, optional ``reset()``.

``observation`` is exactly the dict the AEC env gives the acting player: ``{"observation":
float32 vector, "action_mask": int8 vector}``. An agent never sees anything else.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

Observation = dict[str, np.ndarray]


@runtime_checkable
class Agent(Protocol):
    """What every agent provides."""

    name: str

    def act(self, observation: Observation) -> int:
        """A legal action id for this observation."""
        ...

    def reset(self) -> None:
        """Called at the start of every deal (agents with memory clear it here)."""
        ...


def legal_actions(observation: Observation) -> np.ndarray:
    """Legal action ids of an observation's mask; ``ValueError`` when there is none (nothing to decide)."""
    legal = np.flatnonzero(observation["action_mask"])
    if legal.size == 0:
        raise ValueError("the action mask allows no action: this observation is not a decision")
    return legal
