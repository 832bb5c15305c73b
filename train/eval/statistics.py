"""Student-t confidence intervals for per-deal results, with no dependency beyond the standard library and numpy;
and the sums of the counts a candidate keeps of its own play (``agent_counts``, ``sum_counts``).

The quantile comes from the regularized incomplete beta function (a continued fraction), so the intervals of
``bourre eval`` need no SciPy.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["agent_counts", "sum_counts", "t_interval", "t_quantile"]


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz; Numerical Recipes 6.4)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for aa in (
            m * (b - m) * x / ((a - 1.0 + 2 * m) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1.0 + 2 * m)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


@functools.lru_cache(maxsize=1024)
def t_quantile(q: float, df: int) -> float:
    """Quantile ``q`` (0.5 < q < 1) of Student's t with ``df`` degrees of freedom.

    Written here (bisection on the t tail) so that evaluation needs no scipy; remembered, since the intervals of a
    report (and the arena's reports, after every match) ask for the same few again and again (a bisection of about
    40 incomplete beta functions each)."""
    if not 0.5 < q < 1.0 or df < 1:
        raise ValueError(f"t_quantile: need 0.5 < q < 1 and df >= 1, got q={q}, df={df}")
    tail = 1.0 - q

    def upper_tail(t: float) -> float:
        return 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))

    lo, hi = 0.0, 1.0
    while upper_tail(hi) > tail:
        lo, hi = hi, hi * 2.0
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if upper_tail(mid) > tail else (lo, mid)
    return 0.5 * (lo + hi)


def t_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float] | None:
    """Two-sided t confidence interval of the mean of ``values``; ``None`` with fewer than two values."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return None
    mean = float(values.mean())
    half = t_quantile(0.5 + level / 2.0, values.size - 1) * float(values.std(ddof=1)) / math.sqrt(values.size)
    return (mean - half, mean + half)


def agent_counts(candidates: Sequence[Any]) -> dict[str, Any] | None:
    """The counts of candidates that keep them (``stats.as_dict()``), numbers summed, the rest (a model's name, a
    prompt's version) taken from the first; None where none keeps any."""
    kept = [c.stats.as_dict() for c in candidates if callable(getattr(getattr(c, "stats", None), "as_dict", None))]
    return sum_counts(kept)


def sum_counts(parts: Sequence[dict[str, Any] | None]) -> dict[str, Any] | None:
    kept = [p for p in parts if p]
    if not kept:
        return None
    total = dict(kept[0])
    for part in kept[1:]:
        for key, value in part.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
            elif isinstance(value, dict):
                merged = dict(total.get(key) or {})
                for k, v in value.items():
                    merged[k] = merged.get(k, 0) + v
                total[key] = merged
    return total
