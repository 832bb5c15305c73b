"""Research tools: ``exploiter`` (a trained best response to a fixed agent, ``bourre exploit``), ``nashconv``
(exact NashConv of small Bourré via OpenSpiel, ``bourre exploit --exact``), ``rllib_ppo`` (the RLlib example,
``python -m train.research.rllib_ppo``), ``value_fit`` (the search's value file), ``belief_accuracy`` (how well the
samplers know the hidden cards), ``value_of_information`` (search that sees the hands: docs/measurements.md) and
``selfplay_nashconv`` (NashConv of PPO's snapshots on the small games, beside CFR+), ``ceiling`` (a best response's
gain in each field beside the shipped agent's: the capture ratio) and ``field_training`` (the trainer against a style
of the zoo).
"""

__all__: list[str] = []
