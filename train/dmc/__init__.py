"""Deep Monte-Carlo as DouZero trains it, ``bourre train --trainer dmc`` (``python -m train.dmc``): a Q-network
regressed on the deals' final payoffs, played epsilon-greedily by every seat of batched self-play tables.

Its modules, each importing only the ones above it: ``args`` (``Args``), ``actors`` (the epsilon-greedy actors on
``BatchGame`` tables and the Monte-Carlo targets of their decisions), ``trainer`` (the regression, evaluations,
checkpoints and the report; ``run``, ``main``). This package imports nothing: torch loads with the trainer.
"""

__all__: list[str] = []
