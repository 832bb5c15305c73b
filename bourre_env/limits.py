"""The pot bound: the largest pot an episode may carry into a deal, and why it is this one.

With no ``pot_limit`` every bourré player pays the whole pot into the next deal, so the pot of an
episode of many deals grows geometrically: random play at 5 players roughly doubles it every deal,
and the core's ``int64`` state would wrap round near deal 64 (negative pots, garbage rewards, a NaN
in the observation). The environments therefore stop such an episode first. When a deal settles
with more than ``POT_BOUND`` chips in the pot and the episode has deals to go, it ends *truncated*
(PettingZoo ``truncations``, Gymnasium ``truncated``, ``BatchGame.truncated``), the reason in
``infos`` as ``{"truncation_reason": "pot_bound", "pot": chips}``; ``reset`` refuses a larger
starting pot. The check lives in the env layers (``bourre_env.bourre_v0``, ``bourre_env.batch``),
after each settlement; the rules core knows nothing of it.

``POT_BOUND = 2**20 = 1,048,576`` chips, because below it every chip count is exact where agents and
trainers read it:

* The observation's ``pot`` entry is chips / 100 in float32: below the bound that is under 2**14,
  where float32 values lie 2**-10 apart, finer than the 0.01 step of one chip, so no two pots look
  alike. (2**24, the float32 limit of exact integers, would not do: there the step is 2**-6.)
* A deal starting at the bound adds one deal's antes; any single payment out of that pot, a renege
  at ``renege_multiple`` up to 15 included, stays below 2**24, so ``BatchGame``'s float32 rewards are
  exact. The AEC env's rewards are Python floats, exact to 2**53.
* The integers never come near overflow: a settlement can at most multiply the pot by
  ``1 + num_players * renege_multiple`` (every playing seat reneged or bourré), and
  ``check_rules`` refuses rules under which one deal from the bound could pass 2**53, or under which
  the rake's product ``stake * numerator`` (``core.rake``) could pass 2**62.

The pot of the last settlement may exceed the bound (that is what ends the episode); it is still
exact, and the observation of a truncated episode's last position is finite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit

from bourre_env import core

if TYPE_CHECKING:
    from bourre_env.core.rules import Rules

POT_BOUND = 2**20
"""The largest pot (chips) a deal may start with; a settlement that leaves more ends the episode, truncated."""
TRUNCATION_REASON = "pot_bound"
"""``infos[agent]["truncation_reason"]`` of an episode truncated at the pot bound."""
_EXACT = 2**53  # integers up to here are exact in float64
_RAKE_PRODUCT_LIMIT = 2**62


@njit(cache=True)
def pot_passed_bound(s: np.ndarray) -> bool:
    """Whether the pot of state ``s`` is above ``POT_BOUND`` (checked after a deal settles)."""
    return bool(s[core.S_POT] > POT_BOUND)


def truncation_info(s: np.ndarray) -> dict[str, Any]:
    """The ``infos`` entry of an episode truncated at the pot bound (the pot is public)."""
    return {"truncation_reason": TRUNCATION_REASON, "pot": int(s[core.S_POT])}


def check_pot(pot: Any, where: str) -> int:
    """A starting pot: an integer in ``0..POT_BOUND``, else ``ValueError`` naming ``where``."""
    if isinstance(pot, (bool, np.bool_)) or not isinstance(pot, (int, np.integer)) or not 0 <= pot <= POT_BOUND:
        raise ValueError(
            f"{where}: pot must be an integer in 0..{POT_BOUND} (POT_BOUND, bourre_env.limits), got {pot!r}"
        )
    return int(pot)


def check_rules(rules: Rules) -> None:
    """``ValueError`` if one deal that starts at ``POT_BOUND`` could leave exact integer arithmetic under ``rules``.

    Every published rule set passes with room to spare; what fails are extreme stakes (a ``play_ante`` or
    ``renege_multiple`` in the billions) and a rake whose fraction has a huge numerator, such as the float
    ``1/3`` (``0.3333333333333333`` is 3333333333333333/10**16; ``fractions.Fraction(1, 3)`` is fine).
    """
    n = rules.num_players
    antes = n * (1 + rules.play_ante + (rules.second_pass_ante or 0))
    stake = POT_BOUND + antes  # the most a deal starting at the bound can have in the pot at its settlement
    multiple = rules.renege_multiple if rules.illegal_action == "renege" else 1
    worst = stake * (1 + n * multiple)
    if worst > _EXACT:
        raise ValueError(
            f"play_ante={rules.play_ante}, second_pass_ante={rules.second_pass_ante}, renege_multiple="
            f"{rules.renege_multiple}: one deal from a pot at POT_BOUND ({POT_BOUND:,} chips) could "
            f"reach {worst:,} chips, past 2**53 (exact integers); use smaller stakes"
        )
    rake = rules.rake_fraction
    if stake * rake.numerator > _RAKE_PRODUCT_LIMIT:
        raise ValueError(
            f"rake: {rules.rake!r} is the fraction {rake.numerator}/{rake.denominator}, too fine for "
            f"pots up to POT_BOUND ({POT_BOUND:,} chips) in 64-bit integers; give a fraction with a "
            f"numerator of at most {_RAKE_PRODUCT_LIMIT // stake:,}, e.g. fractions.Fraction(1, 3)"
        )
