"""Search agents: they sample the worlds a seat cannot rule out (``bourre_env.sampler``) and play them out.

Its modules, each importing only the ones above it: ``policy`` (an exported policy network asked for batches of
worlds), ``rollout`` (playouts of a batch of worlds by the compiled heuristic, a policy file or at random),
``inference`` (weighting worlds by how the other players' decisions fit them),
``pimc`` (``PIMCAgent``: perfect-information Monte Carlo), ``ismcts`` (``ISMCTSAgent``: information-set MCTS).
"""

from __future__ import annotations

from agents.search.inference import MODELS, model_worlds, policy_worlds, public_outcome
from agents.search.ismcts import ISMCTSAgent, make_ismcts
from agents.search.pimc import PIMCAgent, WorldModel, draw_candidates, make_pimc, parse_options
from agents.search.policy import PolicyModel, policy_rollouts
from agents.search.rollout import ROLLOUT_KINDS, Rollout

__all__ = [
    "PIMCAgent",
    "make_pimc",
    "ISMCTSAgent",
    "make_ismcts",
    "Rollout",
    "ROLLOUT_KINDS",
    "model_worlds",
    "public_outcome",
    "draw_candidates",
    "parse_options",
    "policy_worlds",
    "MODELS",
    "WorldModel",
    "PolicyModel",
    "policy_rollouts",
]
