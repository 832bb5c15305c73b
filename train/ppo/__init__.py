"""Batched in-process PPO, the default trainer of ``bourre train`` (``python -m train.ppo``).

Its modules, each importing only the ones above it: ``policy_net`` (the network and the masked sampling),
``imitation`` (the heuristic warm start), ``opponent_pool`` (the seats' opponents: heuristic, random, snapshots),
``rollout`` (a batch of tables stepped in one call, seat pools, GAE), ``trainer`` (``Args``, ``run``, ``main``).
The modules are imported where they are used (this package imports nothing: torch loads with the trainer).
"""

__all__: list[str] = []
