"""Worlds a seat cannot rule out: complete hidden states drawn from what one seat has seen (``worlds``).

Its modules, each importing only the ones above it: ``record`` (the public record an observation implies:
``decode``, ``rules_from_observation``), ``plan`` (the events to replay and the size of the search),
``kernels`` (the compiled counting and drawing), ``worlds`` (``WorldSampler``, ``sample_worlds``).
"""

from __future__ import annotations

from bourre_env.sampler.plan import DP_LIMIT, EV_ACTION, EV_DRAW, EV_HIDDEN
from bourre_env.sampler.record import PublicRecord, decode, rules_from_observation
from bourre_env.sampler.worlds import Worlds, WorldSampler, observer_view, sample_worlds

__all__ = [
    "WorldSampler",
    "Worlds",
    "sample_worlds",
    "observer_view",
    "PublicRecord",
    "decode",
    "rules_from_observation",
    "DP_LIMIT",
    "EV_ACTION",
    "EV_DRAW",
    "EV_HIDDEN",
]
