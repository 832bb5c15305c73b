"""Agents for Bourré, all behind one interface (``agents.base.Agent``), built by name with ``make``.

>>> import agents
>>> a = agents.make("random", seed=1)
>>> action = a.act(observation)          # observation: the dict the AEC env gives the acting player
>>> mine = agents.make("mybot.py:HighestIdBot", seed=1)   # the user's own code (agents.user_code)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agents import user_code
from agents.base import Agent, AgentError, Observation, choose, legal_actions
from agents.heuristic import HeuristicAgent, HeuristicParams, make_heuristic
from agents.llm import make_llm
from agents.ppo import PPOAgent, make_ppo
from agents.random_agent import RandomAgent
from agents.search import ISMCTSAgent, PIMCAgent, ismcts, make_ismcts, make_pimc, pimc
from agents.styles import make_style

__all__ = [
    "Agent",
    "AgentError",
    "Observation",
    "choose",
    "legal_actions",
    "make",
    "check_budget",
    "is_user_code",
    "user_code",
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

HOW_TO_ADD = (
    "to use your own agent, give module:Class or path/to/file.py:Class (a class built with the seed, or a "
    "factory (variant, seed) -> agent), or call agents.register(name, factory) (docs/agents.md)"
)


def register(name: str, factory: Callable[[str | None, int | None], Agent]) -> None:
    """Make ``agents.make(name)`` (or ``name:variant``) build ``factory(variant, seed)``."""
    if not name or ":" in name:
        raise ValueError(f"agent name: a non-empty name without ':', got {name!r}")
    _FACTORIES[name] = factory


def registered() -> list[str]:
    """The agent names ``make`` knows: the registered ones and those of the ``bourre.agents`` entry points."""
    return sorted(set(_FACTORIES) | set(user_code.entry_point_names()))


def _factory(name: str) -> Callable[[str | None, int | None], Agent] | None:
    """A registered name's factory, else an installed entry point's (loaded on first use, then kept)."""
    if name not in _FACTORIES:
        factory = user_code.entry_point_factory(name)
        if factory is None:
            return None
        _FACTORIES[name] = factory
    return _FACTORIES[name]


def is_user_code(spec: str) -> bool:
    """Whether ``make(spec)`` would load code that the spec names (``module:attr``, ``path/to/file.py:attr``)
    rather than build a registered or installed agent: never for specs from an untrusted source."""
    name = spec.strip().partition(":")[0]
    return name not in _FACTORIES and name not in user_code.entry_point_names() and user_code.looks_like_code(spec)


def make(spec: str, seed: int | None = 0) -> Agent:
    """An agent from a spec string: ``"random"``, ``"heuristic"``, ``"heuristic:tight"``, ``"ppo"``, ``"ppo:PATH"``,
    ``"pimc"``, ``"pimc:WORLDS"``, ``"ismcts"``, ``"ismcts:ITERATIONS"`` (search options after commas: see
    ``agents.search.pimc`` and ``agents.search.ismcts``), an installed agent's name (``bourre.agents`` entry
    points), or the user's code: ``"module:Class"``, ``"path/to/file.py:Class"``, with ``:VARIANT`` after them
    (``agents.user_code``; this runs the module's code). A registered name wins over a module of the same name.

    Whatever the factory builds is returned as an ``Agent``: one without ``reset()`` or ``name`` is wrapped in
    ``agents.user_code.UserAgent``, which supplies them."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(
            f"agent spec must be a non-empty string, got {spec!r:.80}; known: {registered()} (an agent "
            "object or a factory goes to evaluate and tournament directly, not through agents.make)"
        )
    name, _, variant = spec.strip().partition(":")
    factory = _factory(name)
    if factory is not None:
        return user_code.as_agent(factory(variant or None, seed), f"agent {name!r}")
    if user_code.looks_like_code(spec):
        return user_code.make(spec, seed)
    if spec.strip().endswith(".npz"):  # a policy file named alone: say how to name it
        raise ValueError(f"unknown agent {spec.strip()!r}: a policy file is named ppo:{spec.strip()}")
    raise ValueError(f"unknown agent {name!r}; known: {registered()}; {HOW_TO_ADD}")


_BUDGETS: dict[str, tuple[Mapping[str, Any], Mapping[str, float]]] = {
    "pimc": (pimc.DEFAULTS, pimc.LIMITS),
    "ismcts": (ismcts.DEFAULTS, ismcts.LIMITS),
}


def check_budget(spec: str) -> None:
    """Refuse (``ValueError``) a spec that a source we do not trust (the web table's page) may not name: one that
    loads code (``is_user_code``), or one whose search budget is past the limits for such specs (naming the option
    and its maximum: ``agents.search.pimc.LIMITS``, ``agents.search.ismcts.LIMITS``); other agents have no budget."""
    if is_user_code(spec):
        raise ValueError(
            "names code to load (module:attr or file.py:attr), which is only taken from whoever runs "
            "the program (bourre serve --agent SPEC offers it), never from a page"
        )
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
register("llm", make_llm)
register("style", make_style)
