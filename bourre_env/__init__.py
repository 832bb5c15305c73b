"""bourre_env: the rules of Bourré (Booray) as a fast pure core, a PettingZoo AEC environment and a batch API."""

from bourre_env import actions, cards, rules
from bourre_env.rules import Rules

__all__ = ["actions", "cards", "rules", "Rules"]
__version__ = "0.1.0"
