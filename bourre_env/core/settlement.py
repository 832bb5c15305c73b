"""Settlement: the outcome of each playing seat when a deal ends, and the payments that follow from it."""

from __future__ import annotations

import numpy as np
from numba import njit

from bourre_env.core.bits import _n
from bourre_env.core.layout import (
    DEAL_OVER,
    GAME_OVER,
    OUTCOME_BOURRE,
    OUTCOME_RENEGED,
    OUTCOME_TIED,
    OUTCOME_WON,
    PLAYING,
    S_CHIPS,
    S_CUR,
    S_DEAL_NO,
    S_DEALER,
    S_DEALS_DONE,
    S_DECISION,
    S_EXEMPT,
    S_OUTCOME,
    S_PHASE,
    S_POT,
    S_RAKE_TOTAL,
    S_RENEGED,
    S_REWARD,
    S_TRICKS,
)
from bourre_env.core.rules import P_DEALS, P_POT_LIMIT, P_RAKE_DEN, P_RAKE_NUM, P_RENEGE_MULT, P_TIE_DIVIDE


@njit(cache=True)
def rake(p: np.ndarray, amount: int) -> int:
    return int((amount * p[P_RAKE_NUM]) // p[P_RAKE_DEN])


@njit(cache=True)
def _settle(s: np.ndarray, p: np.ndarray) -> None:
    n = _n(p)
    pot = s[S_POT]
    limit = p[P_POT_LIMIT]
    stake = pot if limit < 0 else min(pot, limit)
    most = -1
    for q in range(n):
        if s[S_DECISION + q] == PLAYING and s[S_TRICKS + q] > most:
            most = s[S_TRICKS + q]
    n_most = 0
    for q in range(n):
        if s[S_DECISION + q] == PLAYING and s[S_TRICKS + q] == most:
            n_most += 1
    for q in range(n):
        if s[S_DECISION + q] == PLAYING:
            outcome = OUTCOME_BOURRE if s[S_TRICKS + q] == 0 else 0
            if s[S_RENEGED + q] == 1:
                outcome |= OUTCOME_RENEGED
            if s[S_TRICKS + q] == most:
                # a reneging top scorer forfeits the pot, which then stays
                outcome |= OUTCOME_TIED if n_most > 1 else (0 if s[S_RENEGED + q] == 1 else OUTCOME_WON)
            s[S_OUTCOME + q] = outcome
    # the payments follow from the outcomes alone
    sharers = 0  # a reneging tied player cannot take a share of the pot
    for q in range(n):
        if s[S_OUTCOME + q] & (OUTCOME_WON | OUTCOME_TIED) and not s[S_OUTCOME + q] & OUTCOME_RENEGED:
            sharers += 1
    if n_most == 1 or p[P_TIE_DIVIDE]:
        if sharers > 0:
            cut = rake(p, stake)
            share_total = stake - cut
            share = share_total // sharers
            odd = share_total - share * sharers  # to the first sharer left of the dealer
            s[S_POT] -= stake
            s[S_RAKE_TOTAL] += cut
            first = True
            for k in range(1, n + 1):
                q = (s[S_DEALER] + k) % n
                if s[S_OUTCOME + q] & (OUTCOME_WON | OUTCOME_TIED) and not s[S_OUTCOME + q] & OUTCOME_RENEGED:
                    s[S_REWARD + q] += share + (odd if first else 0)
                    first = False
    else:
        for q in range(n):
            if s[S_OUTCOME + q] & OUTCOME_TIED:
                s[S_EXEMPT + q] = 1
    for q in range(n):
        if s[S_OUTCOME + q] & (OUTCOME_BOURRE | OUTCOME_RENEGED):
            # a renege costs renege_multiple times the pot (four_card: "twice the pot"), instead of the bourré
            penalty = stake * (p[P_RENEGE_MULT] if s[S_OUTCOME + q] & OUTCOME_RENEGED else 1)
            s[S_REWARD + q] -= penalty
            s[S_POT] += penalty
            s[S_EXEMPT + q] = 1
    for q in range(n):
        s[S_CHIPS + q] += s[S_REWARD + q]
    s[S_DEALS_DONE] += 1
    s[S_CUR] = -1
    s[S_PHASE] = GAME_OVER if s[S_DEAL_NO] + 1 >= p[P_DEALS] else DEAL_OVER
