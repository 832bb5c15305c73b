"""Text view of a deal from one player's seat: what that player may see, and the legal moves."""

from __future__ import annotations

import numpy as np

from bourre_env import cards, core
from bourre_env.actions import describe
from bourre_env.rules import Rules

_DECISIONS = ("deciding", "passed", "playing")
_FACE = ("in the dealer's hand", "discarded (dead)", "played")


def _cards_of(mask: int) -> list[int]:
    return [c for c in range(cards.NUM_CARDS) if mask >> c & 1]


def table_text(s: np.ndarray, p: np.ndarray, rules: Rules, viewer: int) -> str:
    """A readable table of the deal as ``viewer`` sees it (no hidden card is shown)."""
    n = rules.num_players
    phase = int(s[core.S_PHASE])
    phase_name = {core.DECLARE: "declare play or pass", core.SECOND_PASS: "second chance to pass",
                  core.NAME_TRUMP: "the dealer names trump",
                  core.DECIDE: "draw or pass" if rules.declaration == "with_draw" else "draw",
                  core.PLAY: f"trick {int(s[core.S_TRICK_NO]) + 1} of {rules.hand_size}",
                  core.DEAL_OVER: "deal over", core.GAME_OVER: "episode over"}[phase]
    lines = [
        f"Deal {int(s[core.S_DEAL_NO]) + 1}/{rules.deals_per_episode}  ·  {phase_name}  ·  pot {int(s[core.S_POT])}"
        + (f" (limit {rules.pot_limit})" if rules.pot_limit is not None else ""),
        _trump_text(s, rules),
        "",
        f"{'seat':<16} {'':<3} {'decision':<9} {'discards':>8} {'tricks':>6}  {'this trick':<10}",
    ]
    t = int(s[core.S_TRICK_NO])
    for q in range(n):
        tags = ("D" if q == s[core.S_DEALER] else "") + ("*" if q == s[core.S_CUR] else "")
        nd = int(s[core.S_NDISCARD + q])
        card = int(s[core.S_TRICK_CARDS + t * core.MAX_PLAYERS + q]) if phase == core.PLAY else -1
        you = " (you)" if q == viewer else ""
        decision = _DECISIONS[int(core.decision_seen(s, p, viewer, q))]  # secret declarations show "deciding"
        lines.append(f"{'player_' + str(q) + you:<16} {tags:<3} {decision:<9} "
                     f"{(str(nd) if nd >= 0 else '-'):>8} {int(s[core.S_TRICKS + q]):>6}  "
                     f"{cards.to_str(card) if card >= 0 else '':<10}")
    hand = _cards_of(int(s[core.S_HAND + viewer]))
    lines += ["", f"player_{viewer} holds: {cards.to_strs(hand) if hand else '(no cards)'}"]
    done = [tt for tt in range(rules.hand_size) if s[core.S_TRICK_WINNER + tt] >= 0]
    for tt in done:
        row = s[core.S_TRICK_CARDS + tt * core.MAX_PLAYERS: S_row_end(tt)]
        plays = " ".join(f"p{q}:{cards.to_str(int(row[q]))}" for q in range(n) if row[q] >= 0)
        lines.append(f"trick {tt + 1}: {plays}  -> player_{int(s[core.S_TRICK_WINNER + tt])}")
    if s[core.S_CUR] == viewer:
        mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
        core.legal_actions(s, p, mask)
        lines.append("legal: " + "; ".join(f"{a}={describe(int(a), hand, phase)}" for a in np.flatnonzero(mask)))
    if phase in (core.DEAL_OVER, core.GAME_OVER):
        lines.append("result: " + ", ".join(f"player_{q} {int(s[core.S_REWARD + q]):+d}" for q in range(n)))
    return "\n".join(lines)


def _trump_text(s: np.ndarray, rules: Rules) -> str:
    if s[core.S_TRUMP] < 0:
        return "Trump: to be named by the dealer (no card turned)"
    if s[core.S_FACE] < 0:
        return f"Trump {cards.SUIT_NAMES[int(s[core.S_TRUMP])]} (named by the dealer, no card turned)"
    return (f"Trump {cards.SUIT_NAMES[int(s[core.S_TRUMP])]} "
            f"(turned {cards.to_str(int(s[core.S_FACE]))}, {_face_text(s, rules)})")


def _face_text(s: np.ndarray, rules: Rules) -> str:
    if rules.trump_card == "separate":
        return "separate, no one's"
    dealer_decision = s[core.S_DECISION + s[core.S_DEALER]]
    if rules.trump_card == "separate_dealer_may_take" and s[core.S_FACE_STATE] != core.FACE_PLAYED:
        if dealer_decision == core.PENDING:
            return "separate, the dealer may take it"
        if dealer_decision == core.PASSED or s[core.S_FACE_STATE] == core.FACE_DEAD:
            return "separate, not taken"
        return "taken by the dealer"
    if s[core.S_FACE_STATE] == core.FACE_IN_HAND and dealer_decision == core.PASSED:
        return "in the dealer's passed hand"
    return _FACE[int(s[core.S_FACE_STATE])]


def S_row_end(trick: int) -> int:  # noqa: N802 - mirrors the core's S_* offsets
    return core.S_TRICK_CARDS + (trick + 1) * core.MAX_PLAYERS
