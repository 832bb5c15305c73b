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


def _stake(rules: Rules) -> int:
    """The most a deal starting at the bound can have in the pot at its settlement."""
    return POT_BOUND + rules.num_players * (1 + rules.play_ante + (rules.second_pass_ante or 0))


def worst_pot(rules: Rules) -> int:
    """The largest pot a state can hold under ``rules``: a deal that starts at ``POT_BOUND`` and settles with every
    playing seat bourré or reneged (the pot that ends an episode, truncated, is at most this)."""
    multiple = rules.renege_multiple if rules.illegal_action == "renege" else 1
    return _stake(rules) * (1 + rules.num_players * multiple)


def observation_bounds(rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """The least and greatest value of every entry of the observation vector under ``rules`` (the observation
    space's ``low`` and ``high``): 0 and 1 for the one-hot and yes/no entries; the pot's two entries up to those of
    ``worst_pot``; the entries that copy a rule (a limit, the antes, the renege multiple) up to that rule's value, and
    at least 1; the deal numbers up to the episode's last."""
    from bourre_env import observation as obs  # the encoding below this module's users: imported where needed

    p = rules.params()
    low = np.zeros(obs.OBS_SIZE, dtype=np.float32)
    high = np.ones(obs.OBS_SIZE, dtype=np.float32)
    worst = worst_pot(rules)
    high[obs.O_POT] = worst / 100.0
    high[obs.O_POT + 1] = max(1.0, float(np.log1p(worst) / np.log(1000.0)))
    high[obs.O_POT_LIMIT + 1] = max(1.0, p[core.P_POT_LIMIT] / 100.0)
    high[obs.O_DEAL] = high[obs.O_DEAL + 1] = max(1.0, (p[core.P_DEALS] - 1) / 10.0)
    high[obs.O_ANTE_RULE] = max(1.0, float(p[core.P_PLAY_ANTE]))
    high[obs.O_ENTRY_RULE + 2] = max(1.0, float(p[core.P_SECOND_PASS]))
    high[obs.O_PENALTY_RULE + 1] = max(1.0, float(p[core.P_RENEGE_MULT]))
    # the encoder and these bounds round the same float64 quotients to float32, and rounding keeps the order
    return low, high


def check_rules(rules: Rules) -> None:
    """``ValueError`` if one deal that starts at ``POT_BOUND`` could leave exact integer arithmetic under ``rules``.

    Every published rule set passes with room to spare; what fails are extreme stakes (a ``play_ante`` or
    ``renege_multiple`` in the billions) and a rake whose fraction has a huge numerator, such as the float
    ``1/3`` (``0.3333333333333333`` is 3333333333333333/10**16; ``fractions.Fraction(1, 3)`` is fine).
    """
    worst = worst_pot(rules)
    if worst > _EXACT:
        raise ValueError(
            f"play_ante={rules.play_ante}, second_pass_ante={rules.second_pass_ante}, renege_multiple="
            f"{rules.renege_multiple}: one deal from a pot at POT_BOUND ({POT_BOUND:,} chips) could "
            f"reach {worst:,} chips, past 2**53 (exact integers); use smaller stakes"
        )
    rake = rules.rake_fraction
    stake = _stake(rules)
    if stake * rake.numerator > _RAKE_PRODUCT_LIMIT:
        raise ValueError(
            f"rake: {rules.rake!r} is the fraction {rake.numerator}/{rake.denominator}, too fine for "
            f"pots up to POT_BOUND ({POT_BOUND:,} chips) in 64-bit integers; give a fraction with a "
            f"numerator of at most {_RAKE_PRODUCT_LIMIT // stake:,}, e.g. fractions.Fraction(1, 3)"
        )
