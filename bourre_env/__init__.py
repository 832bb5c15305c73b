"""bourre_env: the rules of Bourré (Booray) as a fast pure core, a PettingZoo AEC environment and a batch API."""

from bourre_env import _jit_cache, compile_notice

_jit_cache.configure()
compile_notice.install()

from bourre_env import (  # noqa: E402 - after the compile cache is configured
    actions,
    bourre_v0,
    core,
)
from bourre_env.batch import BatchGame  # noqa: E402
from bourre_env.bourre_v0 import env, raw_env  # noqa: E402
from bourre_env.core import cards  # noqa: E402 - card notation, for fixed decks and hands: bourre_env.cards
from bourre_env.core.rules import Rules, presets  # noqa: E402
from bourre_env.single_agent import BourreSingleAgentEnv  # noqa: E402
from bourre_env.vector_env import BourreVectorEnv  # noqa: E402


def _register_gymnasium_env() -> None:
    import gymnasium

    from bourre_env.single_agent import ENV_ID

    if ENV_ID not in gymnasium.registry:  # a second import of the package must not warn of a re-registration
        gymnasium.register(
            id=ENV_ID, entry_point="bourre_env.single_agent:BourreSingleAgentEnv", kwargs={"opponents": "heuristic"}
        )


_register_gymnasium_env()

__all__ = [
    "actions",
    "bourre_v0",
    "cards",
    "core",
    "Rules",
    "presets",
    "env",
    "raw_env",
    "BourreSingleAgentEnv",
    "BatchGame",
    "BourreVectorEnv",
]
__version__ = "0.1.0"
