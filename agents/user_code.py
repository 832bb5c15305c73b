"""Agents from the user's own code: ``module:attr`` and ``path/to/file.py:attr`` specs, and the agents that
installed packages declare in the ``bourre.agents`` entry-point group.

``attr`` is an agent class or a factory ``(variant, seed) -> agent``:

* a class is built with the seed: ``cls(seed=seed)`` if it has a ``seed`` parameter, else ``cls(seed)`` if it
  takes a positional argument, else ``cls()`` (an agent with nothing to seed). A variant (``file.py:Cls:fast``)
  goes to a parameter named ``variant`` (``cls(seed=seed, variant="fast")``); a class without one refuses a
  variant with a ``ValueError``, rather than silently building the same agent for every variant;
* anything else callable is a factory, called as ``attr(variant, seed)`` like an ``agents.register`` factory
  (``variant`` is ``None`` without one).

Loading a module or a file runs its code, as ``import`` does: only name code you trust. Untrusted specs (the web
table's page) are refused before anything is loaded (``agents.check_budget``).

Whatever is built needs only ``act(observation) -> int``; ``as_agent`` supplies a missing ``reset()`` (a no-op)
and ``name``, so that callers may rely on the whole ``agents.Agent`` protocol.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.base import Agent, AgentError, Observation
from bourre_env.actions import as_action_id

__all__ = [
    "ENTRY_POINT_GROUP",
    "UserAgent",
    "as_agent",
    "entry_point_names",
    "entry_point_factory",
    "factory_of",
    "looks_like_code",
    "make",
]

ENTRY_POINT_GROUP = "bourre.agents"
"""Installed packages declare agents here (``[project.entry-points."bourre.agents"] name = "module:attr"``)."""

_MODULE_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")

Factory = Callable[[str | None, int | None], Agent]


class UserAgent:
    """An agent that lacks ``reset()`` or ``name``, with both supplied; ``agent`` is the object itself.

    A wrapper rather than a patch of the object: a user's class may use ``__slots__``, and an instance handed
    to ``evaluate`` should come back unchanged."""

    def __init__(self, agent: Any, name: str) -> None:
        self.agent = agent
        own = getattr(agent, "name", None)
        self.name = own if isinstance(own, str) else name

    def act(self, observation: Observation) -> int:
        answer = self.agent.act(observation)
        action = as_action_id(answer)
        if action is None:  # the env's rule: 52.5, "3" or True is no action, however it would convert
            what = f"returned {answer!r:.60}, not an action id (an integer)"
            raise AgentError(f"agent {self.name} {what}", what)
        return action

    def reset(self) -> None:
        reset = getattr(self.agent, "reset", None)
        if callable(reset):
            reset()

    def __repr__(self) -> str:
        return f"UserAgent({self.agent!r})"


def as_agent(obj: Any, label: str) -> Agent:
    """``obj`` itself when it has ``act``, ``reset`` and a ``name``; wrapped in ``UserAgent`` when it has ``act``
    only; ``ValueError`` (naming ``label``, what built it) when it has no ``act``."""
    if not callable(getattr(obj, "act", None)):
        raise ValueError(f"{label} gave {type(obj).__name__} {obj!r:.80}, which has no act(observation) method")
    if callable(getattr(obj, "reset", None)) and isinstance(getattr(obj, "name", None), str):
        return obj  # type: ignore[no-any-return]
    return UserAgent(obj, label)


def _build_class(cls: type, variant: str | None, seed: int | None, label: str) -> Any:
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):  # no signature to read (a class implemented in C): the documented default
        return cls(seed) if variant is None else cls(seed, variant=variant)
    accepts_keywords = any(p.kind is p.VAR_KEYWORD for p in params.values())
    kwargs: dict[str, Any] = {}
    if variant is not None:
        if "variant" not in params and not accepts_keywords:
            raise ValueError(
                f"{label} is a class without a 'variant' parameter, so it takes no variant (got "
                f"{variant!r}); give it a variant parameter, or name a factory (variant, seed) -> agent"
            )
        kwargs["variant"] = variant
    if "seed" in params:
        return cls(seed=seed, **kwargs)
    positional = [
        p
        for p in params.values()
        if p.name != "variant" and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    return cls(seed, **kwargs) if positional else cls(**kwargs)


def factory_of(obj: Any, label: str) -> Factory:
    """A ``(variant, seed) -> Agent`` factory from an agent class or a factory (see the module docstring)."""
    if inspect.isclass(obj):
        return lambda variant, seed: as_agent(_build_class(obj, variant, seed, label), label)
    if callable(obj):
        return lambda variant, seed: as_agent(obj(variant, seed), label)
    raise ValueError(f"{label} is a {type(obj).__name__}, not an agent class or a factory (variant, seed) -> agent")


def looks_like_code(spec: str) -> bool:
    """Whether ``spec``, given that its name is not a registered agent, names the user's code (``module:attr``,
    ``file.py:attr``, or a ``.py`` file without its attribute, which ``make`` refuses with a hint)."""
    target = spec.strip().partition(":")[0]
    return ":" in spec or target.endswith(".py")


def _load_file(path: Path) -> Any:
    """The module of a ``.py`` file, loaded once per process (keyed by its resolved path)."""
    resolved = path.resolve()
    # A stable module name per file: classes defined there pickle and repr sensibly, and a second spec naming the
    # same file finds the module already loaded instead of running the file again.
    name = f"_bourre_user_{resolved.stem}_{hashlib.sha256(str(resolved).encode()).hexdigest()[:12]}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, resolved)
    if module_spec is None or module_spec.loader is None:
        raise ValueError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module  # before running it: dataclasses and pickle look the module up while it loads
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _load_module(name: str, spec: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        # The module named (or a package above it) is missing, not a module that its code imports.
        if err.name is not None and (name == err.name or name.startswith(err.name + ".")):
            raise ValueError(
                f"agent {spec!r}: no module named {name!r} (is its folder on PYTHONPATH, or is it installed?)"
            ) from None
        raise


def make(spec: str, seed: int | None) -> Agent:
    """The agent of a ``module:attr[:variant]`` or ``path/to/file.py:attr[:variant]`` spec (module docstring)."""
    target, _, rest = spec.strip().partition(":")
    attr, _, variant = rest.partition(":")
    is_file = target.endswith(".py") or "/" in target or "\\" in target
    if not attr:
        example = f"{target}:ClassName" if is_file else f"{target}:ClassName (or path/to/{target}.py:ClassName)"
        raise ValueError(f"agent {spec!r}: name the agent class or factory after a colon, e.g. {example}")
    if is_file:
        path = Path(target)
        if path.suffix != ".py" or not path.is_file():
            raise ValueError(f"agent {spec!r}: {target} is not a .py file")
        module = _load_file(path)
    elif _MODULE_NAME.match(target):
        module = _load_module(target, spec)
    else:
        raise ValueError(f"agent {spec!r}: {target!r} is neither a module name nor a path to a .py file")
    obj = module
    for part in attr.split("."):  # Outer.Inner and module-level objects alike
        if not hasattr(obj, part):
            raise ValueError(f"agent {spec!r}: {target} has no {attr!r}")
        obj = getattr(obj, part)
    return factory_of(obj, f"{target}:{attr}")(variant or None, seed)


def entry_point_names() -> list[str]:
    """The agent names that installed packages declare in ``bourre.agents`` (nothing is loaded)."""
    return sorted({ep.name for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP) if ":" not in ep.name})


def entry_point_factory(name: str) -> Factory | None:
    """The factory of the installed agent ``name`` (its entry point loaded now), or ``None`` if none declares it."""
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP, name=name):
        return factory_of(ep.load(), f"{name} (entry point {ep.value})")
    return None
