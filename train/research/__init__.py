"""Research tools: ``exploiter`` (a trained best response to a fixed agent, ``bourre exploit``), ``nashconv``
(exact NashConv of small Bourré via OpenSpiel, ``bourre exploit --exact``), ``rllib_ppo`` (the RLlib example,
``python -m train.research.rllib_ppo``), ``value_fit`` (the search's value file), ``belief_accuracy`` (how well the
samplers know the hidden cards), ``value_of_information`` (search that sees the hands: docs/measurements.md) and
``selfplay_nashconv`` (NashConv of PPO's snapshots on the small games, beside CFR+).
"""

__all__: list[str] = []
