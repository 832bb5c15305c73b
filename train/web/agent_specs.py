"""The agent specs a client of either web server may name: the browser table's page (``bourre serve``), and the
arena's match requests and people's seats (``bourre arena serve``). The rule is one, so both servers hold it here.

A client chooses by name among the agents the server offers: a registered agent's bare name (``ppo`` is the shipped
model), a heuristic variant, a search with budget options within ``agents.check_budget``'s limits and the words of
``SEARCH_WORDS`` for its text options, or exactly a spec the operator offers (``--agent``, checked once at the start
by ``check_offered``). It never names a file or code: only the spec's text is looked at before anything is opened.
A refusal is a ``TableError`` 400 naming what is wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import agents
from agents.search import inference, ismcts, pimc, rollout
from train.web.errors import TableError

__all__ = ["HUMAN", "PAGE_NEVER", "SEARCH_WORDS", "agent_options", "check_agent", "check_offered"]

HUMAN = "human"
"""The spec of the person's own seat at a browser table: never an agent's."""
PAGE_NEVER = ("llm",)
"""Registered agents a page may never name, only the operator (``--agent``): a language model's server, model and
key variable are the operator's choice."""


def agent_options() -> list[str]:
    """Agent specs the page suggests: every registered agent a page may name, the heuristic's variants and the
    styles (``style`` has no bare form)."""
    from agents.heuristic import PARAM_SETS
    from agents.styles import STYLES

    specs = {s for s in agents.registered() if s not in PAGE_NEVER and s != "style"}
    specs |= {f"heuristic:{v}" for v in PARAM_SETS if v != "default"} | {f"style:{v}" for v in STYLES}
    return sorted(specs)


_SEARCHES = {"pimc": pimc.DEFAULTS, "ismcts": ismcts.DEFAULTS}
SEARCH_WORDS: dict[str, tuple[str, ...]] = {
    "rollout": rollout.ROLLOUT_KINDS,
    "model": inference.MODELS,
    "others": ("", *rollout.OTHERS),
    "phases": pimc.PHASES,
}
"""The words a page may give a search agent's text options; any other text option keeps its default (``value``: a
file). ``ppo`` here is the shipped model: a ``ppo:PATH`` is a file, never taken from a page."""


def _not_offered(spec: str) -> TableError:
    # One message for every spec that could name a file, built from the spec alone: whether a file of that name
    # exists, or can be read, never changes the answer (nothing is opened to find out).
    return TableError(
        400,
        f"agent {spec!r} is not offered by this server: a page chooses by name among the agents it offers "
        f"(GET /api/options), a heuristic variant or a search with budget options (pimc:64,ms=500), and never "
        f"names a file; start the server with --agent {spec} to offer it",
    )


def _check_page_spec(spec: str) -> None:
    """Refuse a spec from the page that is none of: a registered agent's bare name (``ppo`` is the shipped model), a
    heuristic variant of ``PARAM_SETS`` or a style of ``agents.styles``, or a search (``pimc``, ``ismcts``) with
    budgets within their limits and words of ``SEARCH_WORDS`` for its text options. Only the spec's text is looked
    at: nothing here reaches a file."""
    from agents.heuristic import PARAM_SETS

    name, colon, variant = spec.partition(":")
    if name in PAGE_NEVER:
        raise TableError(
            400,
            f"agent {spec!r}: a language model's server and key are the operator's choice, never a page's; start the "
            f"server with --agent {spec} to offer it",
        )
    if name not in agents.registered():
        if agents.user_code.looks_like_code(spec):
            raise TableError(
                400,
                f"agent {spec!r} names code to load, a page may not; start the server with --agent {spec} to offer it",
            )
        raise TableError(
            400, f"unknown agent {name!r}; a page chooses among {agent_options()} and the agents the server offers"
        )
    # a style's name is all it reads (agents.make refuses an unknown one, naming the styles)
    if not colon or (name == "heuristic" and variant in PARAM_SETS) or name == "style":
        return
    if name not in _SEARCHES:  # ppo:ANYTHING (a file), or a variant of an agent that takes none from a page
        raise _not_offered(spec)
    try:
        agents.check_budget(spec)  # budgets past the limits, and a text option that names a file (ppo:PATH)
        options = pimc.parse_options(variant, dict(_SEARCHES[name]))
    except ValueError as err:
        raise TableError(400, f"agent {spec!r}: {err}") from None
    for key, value in options.items():
        words = SEARCH_WORDS.get(key, (_SEARCHES[name][key],))
        if isinstance(value, str) and value not in words:
            raise TableError(400, f"agent {spec!r}: option {key}: a page chooses one of {list(words)}, got {value!r}")


def check_agent(spec: Any, offered: Sequence[str] = ()) -> str:
    """A spec that a page may name (stripped): one the server offers (``offered``, checked when it started:
    ``check_offered``), or one that ``_check_page_spec`` allows and ``agents.make`` builds. A page chooses by name
    among the agents the operator offers; it never reaches a path or code, whatever the files on the server."""
    if not isinstance(spec, str) or not spec.strip() or len(spec) > 200:
        raise TableError(400, f"agent: expected an agents.make spec such as 'heuristic', got {spec!r}")
    spec = spec.strip()
    if spec == HUMAN:
        raise TableError(400, "agent: one seat is the person's; the others are agents")
    if spec in offered:
        return spec
    _check_page_spec(spec)
    try:
        agents.make(spec, 0)
    except (ValueError, OSError) as err:
        raise TableError(400, f"agent {spec!r}: {err}") from None
    return spec


def check_offered(spec: str) -> str:
    """An operator's ``--agent`` spec (stripped), built once to check it: it may name files and code, and take any
    budget; ``ValueError`` naming what is wrong."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"expected an agents.make spec such as 'ppo:path/to/policy.npz', got {spec!r}")
    spec = spec.strip()
    if spec == HUMAN:
        raise ValueError("one seat is the person's; offer agents")
    try:
        agents.make(spec, 0)
    except OSError as err:
        raise ValueError(f"{spec}: {err}") from None
    return spec
