"""Self-play MaskablePPO over subprocess envs (sb3-contrib), ``bourre train --trainer sb3`` (``python -m train.sb3``).

Its modules: ``glue`` (the env, logger and checkpoint glue to Stable-Baselines3), ``trainer`` (``Args``, ``run``,
``main``). It shares ``train.ppo.imitation`` and ``train.ppo.opponent_pool`` with the batched trainer.
"""

__all__: list[str] = []
