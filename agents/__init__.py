"""Agents for Bourré, all behind one interface (``agents.base.Agent``), built by name with ``make``.

>>> import agents
>>> a = agents.make("random", seed=1)
>>> action = a.act(observation)          # observation: the dict the AEC env gives the acting player
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agents.base import Agent, Observation, legal_actions
from agents.heuristic import HeuristicAgent, HeuristicParams, make_heuristic
from agents.ppo import PPOAgent, make_ppo
from agents.random_agent import RandomAgent
from agents.search import ISMCTSAgent, PIMCAgent, ismcts, make_ismcts, make_pimc, pimc

__all__ = [
    "Agent",
    "Observation",
    "legal_actions",
    "make",
    "check_budget",
    "register",
    "registered",
    "RandomAgent",
    "HeuristicAgent",
    "HeuristicParams",
    "PPOAgent",
    "PIMCAgent",
    "ISMCTSAgent",
]

_FACTORIES: dict[str, Callable[[str | None, int | None], Agent]] = {}


def register(name: str, factory: Callable[[str | None, int | None], Agent]) -> None:
    """Make ``agents.make(name)`` (or ``name:variant``) build ``factory(variant, seed)``."""
    _FACTORIES[name] = factory


def registered() -> list[str]:
    return sorted(_FACTORIES)


def make(spec: str, seed: int | None = 0) -> Agent:
    """An agent from a spec string: ``"random"``, ``"heuristic"``, ``"heuristic:tight"``, ``"ppo"``, ``"ppo:PATH"``,
    ``"pimc"``, ``"pimc:WORLDS"``, ``"ismcts"``, ``"ismcts:ITERATIONS"`` (search options after commas: see
    ``agents.search.pimc`` and ``agents.search.ismcts``)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}; known: {registered()}")
    name, _, variant = spec.strip().partition(":")
    if name not in _FACTORIES:
        raise ValueError(f"unknown agent {name!r}; known: {registered()}")
    return _FACTORIES[name](variant or None, seed)


_BUDGETS: dict[str, tuple[Mapping[str, Any], Mapping[str, float]]] = {
    "pimc": (pimc.DEFAULTS, pimc.LIMITS), "ismcts": (ismcts.DEFAULTS, ismcts.LIMITS)}


def check_budget(spec: str) -> None:
    """Refuse (``ValueError`` naming the option and its maximum) a spec whose search budget is past the limits for
    specs from an untrusted source (``agents.search.pimc.LIMITS``, ``agents.search.ismcts.LIMITS``); other agents
    have no budget."""
    name, _, variant = spec.strip().partition(":")
    if name in _BUDGETS:
        defaults, limits = _BUDGETS[name]
        pimc.parse_options(variant or None, dict(defaults), limits)


def _random(variant: str | None, seed: int | None) -> Agent:
    if variant:
        raise ValueError(f"the random agent has no variants, got {variant!r}")
    return RandomAgent(seed)


register("random", _random)
register("heuristic", make_heuristic)
register("ppo", make_ppo)
register("pimc", make_pimc)
register("ismcts", make_ismcts)
