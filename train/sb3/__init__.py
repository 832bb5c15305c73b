"""Self-play MaskablePPO (sb3-contrib) over many tables in one process, ``bourre train --trainer sb3``
(``python -m train.sb3``).

Its modules: ``vec_env`` (``BourreVecEnv``: SB3's ``VecEnv`` over ``bourre_env.BourreVectorEnv``), ``pool`` (the
self-play opponent pool as batched players, ``PoolVecEnv``), ``glue`` (the logger, checkpoint and policy-file
glue to Stable-Baselines3), ``trainer`` (``Args``, ``run``, ``main``). It shares ``train.learning``'s imitation,
opponent pool weights and run start with the other trainers.
"""

__all__: list[str] = []
