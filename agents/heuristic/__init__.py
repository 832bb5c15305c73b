"""The rule-based agent: one decision at a time (``agent``), or a batch of tables in one compiled call (``batch``).

Its modules, each importing only the ones above it: ``odds`` (probabilities and the parameter sets),
``knowledge`` (what the seat knows of the table), ``agent`` (``HeuristicAgent``); ``batch_base`` (the compiled
tables and work buffers), ``batch_decide`` (the decision rounds), ``batch_play`` (trick play), ``batch``
(``BatchHeuristic``, ``heuristic_action``: the same choices as ``HeuristicAgent``, compiled).
"""

from __future__ import annotations

from agents.heuristic.agent import HeuristicAgent, make_heuristic
from agents.heuristic.batch import (
    FLOAT_WORK,
    INT_WORK,
    BatchHeuristic,
    heuristic_action,
    heuristic_actions,
    params_array,
)
from agents.heuristic.odds import PARAM_SETS, HeuristicParams

__all__ = [
    "HeuristicAgent",
    "HeuristicParams",
    "PARAM_SETS",
    "make_heuristic",
    "BatchHeuristic",
    "heuristic_action",
    "heuristic_actions",
    "params_array",
    "INT_WORK",
    "FLOAT_WORK",
]
