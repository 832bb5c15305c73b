"""Batched in-process PPO, the default trainer of ``bourre train`` (``python -m train.ppo``).

Its modules, each importing only the ones above it and ``train.learning`` (the network, checkpoint, imitation and
run start every trainer shares): ``rollout`` (a batch of tables stepped in one call, seat pools, GAE), ``workers``
(the rollout workers), ``args`` (``Args``), ``warm_start`` (the imitation warm start on the batched tables),
``trainer`` (the PPO update, ``run``, ``main``). The modules are imported where they are used (this package
imports nothing: torch loads with the trainer).
"""

__all__: list[str] = []
