"""The operator's ``--agent`` specs as the people's page names them: by a handle (``offered:1``, ``offered:2``, ...,
or a bare registered name as itself), never by their options (a URL, a key's variable, a file)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

__all__ = ["OFFERED"]

OFFERED = "offered:"
"""The handle of an operator's ``--agent`` spec at the people's page: ``offered:1``, ``offered:2``, ..."""


@functools.lru_cache(maxsize=1)
def _registered() -> frozenset[str]:
    """The registered agents' names, read once (the installed entry points: tens of ms, not for every request)."""
    import agents

    return frozenset(agents.registered())


def _handles(offered: Sequence[str]) -> dict[str, str]:
    """The operator's specs by handle; a bare registered name (``ppo``) is its own handle, it shows nothing more."""
    names = _registered()
    return {(spec if spec in names else f"{OFFERED}{k}"): spec for k, spec in enumerate(offered, 1)}


def _shown(spec: str, offered: Sequence[str]) -> str:
    """A seat as a visitor sees it: an operator's spec by its handle, anything else as it is."""
    for handle, full in _handles(offered).items():
        if full == spec:
            return handle
    return spec


def _agent_name(spec: str) -> str:
    """The registered agent an operator's spec builds, by name, or ``code`` for the operator's own code."""
    name = spec.partition(":")[0]
    return name if name in _registered() else "code"
