"""Evaluation of agents: ``duplicate`` (``evaluate``: a candidate against a field, seat-rotated deals),
``tournament`` (several agents, ratings and the payoff matrix), ``ray_backend`` (the same games as Ray tasks).

The modules are imported where they are used (``from train.eval.duplicate import evaluate``).
"""

__all__: list[str] = []
