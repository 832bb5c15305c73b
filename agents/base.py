"""The agent interface: seeded at construction, ``act(observation) -> action id``, optional ``reset()``.

``observation`` is exactly the dict the AEC env gives the acting player: ``{"observation":
float32 vector, "action_mask": int8 vector}``. An agent never sees anything else.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from bourre_env.actions import as_action_id

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


class AgentError(ValueError):
    """An agent failed at a decision: it raised, called ``sys.exit``, or answered with something that is not an
    action (``choose``), or with an action the rules refuse (the evaluation's ``step``). The message is one line
    that names the agent and the decision; a ``ValueError``, so that every command prints it as its other errors.
    ``what``, when given, is what the agent did, for a caller that names the agent otherwise."""

    def __init__(self, message: str, what: str | None = None) -> None:
        super().__init__(message)
        self.what = what

    def __reduce__(self) -> tuple[type, tuple[str, str | None]]:  # through a pool's pipe, both parts
        return AgentError, (str(self), self.what)


def choose(agent: Any, observation: Observation, label: str, where: str) -> int:
    """``agent.act(observation)`` as an action id, by the env's one rule (``bourre_env.actions.as_action_id``: an
    integer, never a float, a string or a bool however they would convert); ``AgentError`` naming ``label`` (the
    agent's spec) and ``where`` (the decision) if the agent raises, exits or answers something else. Legality is
    left to the env, whose rules may accept an illegal card as a renege."""
    try:
        answer = agent.act(observation)
    except AgentError as err:  # a wrapper's own check (agents.user_code.UserAgent): the spec and decision added
        what = getattr(err, "what", None)
        raise AgentError(f"agent {label} {what} at {where}" if what else f"{err} at {where}") from None
    except SystemExit as err:  # a pool worker that let it through would die, and its job would never finish
        if isinstance(err.code, int) and err.code > 128:
            # a signal's unwinding (128 + its number: a terminate reaching a pool worker or a command), not the
            # agent's: it must go on, or the worker would play on with the signal ignored and never stop
            raise
        raise AgentError(f"agent {label} called sys.exit({err.code!r}) at {where}") from None
    except Exception as err:
        said = str(err).strip().splitlines()
        raise AgentError(
            f"agent {label} raised {type(err).__name__}{': ' + said[0][:200] if said else ''} at {where}"
        ) from err
    action = as_action_id(answer)
    if action is None:
        raise AgentError(f"agent {label} returned {answer!r:.60}, not an action id (an integer), at {where}")
    return action


def check_batch_array(name: str, array: object, dtype: type, shape: tuple[int, ...]) -> None:
    """A ``ValueError`` naming ``name`` unless ``array`` is a C-contiguous numpy array of ``dtype`` and ``shape``."""
    if not isinstance(array, np.ndarray):
        raise ValueError(f"{name}: expected a numpy array, got {type(array).__name__}")
    if array.dtype != dtype:
        raise ValueError(f"{name}: expected dtype {np.dtype(dtype).name}, got {array.dtype.name}")
    if array.shape != shape:
        raise ValueError(f"{name}: expected shape {shape}, got {array.shape}")
    if not array.flags.c_contiguous:
        raise ValueError(f"{name}: expected a C-contiguous array (np.ascontiguousarray makes one)")
