"""Expert iteration, ``bourre train --trainer exit`` (``python -m train.exit``): a network distilled round after
round from a search that plays with it.

Its modules: ``args`` (``Args``), ``generation`` (self-play deals with the search acting, the searched decisions
recorded), ``trainer`` (the rounds: generation, training, export, evaluation; ``run``, ``main``). This package
imports nothing: torch loads with the trainer.
"""

__all__: list[str] = []
