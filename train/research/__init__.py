"""Research tools: ``exploiter`` (a trained best response to a fixed agent, ``bourre exploit``), ``nashconv``
(exact NashConv of small Bourré via OpenSpiel, ``bourre exploit --exact``), ``rllib_ppo`` (the RLlib example,
``python -m train.research.rllib_ppo``).
"""

__all__: list[str] = []
