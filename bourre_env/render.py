"""Text view of a deal from one player's seat: what that player may see, and the legal moves."""

from __future__ import annotations

import numpy as np

from bourre_env import core
from bourre_env.actions import describe
from bourre_env.core import cards
from bourre_env.core.rules import Rules
from bourre_env.view import StateView

_DECISIONS = ("deciding", "passed", "playing")
_FACE = ("in the dealer's hand", "discarded (dead)", "played")


def table_text(s: np.ndarray, p: np.ndarray, rules: Rules, viewer: int) -> str:
    """A readable table of the deal as ``viewer`` sees it (no hidden card is shown)."""
    n = rules.num_players
    v = StateView(s, n)
    phase = v.phase
    phase_name = {
        core.DECLARE: "declare play or pass",
        core.SECOND_PASS: "second chance to pass",
        core.NAME_TRUMP: "the dealer names trump",
        core.DRAW_OR_PASS: "draw or pass",
        core.DRAW: "draw",
        core.PLAY: f"trick {v.trick_no + 1} of {rules.hand_size}",
        core.DEAL_OVER: "deal over",
        core.GAME_OVER: "episode over",
    }[phase]
    lines = [
        f"Deal {v.deal_no + 1}/{rules.deals_per_episode}  ·  {phase_name}  ·  pot {v.pot}"
        + (f" (limit {rules.pot_limit})" if rules.pot_limit is not None else ""),
        _trump_text(v, rules),
        "",
        f"{'seat':<16} {'':<3} {'decision':<9} {'discards':>8} {'tricks':>6}  {'this trick':<10}",
    ]
    current = v.trick_cards(v.trick_no) if phase == core.PLAY else [-1] * n
    for q in range(n):
        tags = ("D" if q == v.dealer else "") + ("*" if q == v.to_act else "")
        nd = v.discards_announced(q)
        card = current[q]
        you = " (you)" if q == viewer else ""
        decision = _DECISIONS[int(core.decision_seen(s, p, viewer, q))]  # secret declarations show "deciding"
        lines.append(
            f"{'player_' + str(q) + you:<16} {tags:<3} {decision:<9} "
            f"{(str(nd) if nd >= 0 else '-'):>8} {v.tricks(q):>6}  "
            f"{cards.to_str(card) if card >= 0 else '':<10}"
        )
    hand = v.hand(viewer)
    lines += ["", f"player_{viewer} holds: {cards.to_strs(hand) if hand else '(no cards)'}"]
    for tt in range(rules.hand_size):
        if v.trick_winner(tt) < 0:
            continue
        row = v.trick_cards(tt)
        plays = " ".join(f"p{q}:{cards.to_str(row[q])}" for q in range(n) if row[q] >= 0)
        lines.append(f"trick {tt + 1}: {plays}  -> player_{v.trick_winner(tt)}")
    if v.to_act == viewer:
        mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
        core.legal_actions_with(s, p, mask, core.new_scratch())  # a view: the state is only read
        lines.append("legal: " + "; ".join(f"{a}={describe(int(a), hand, phase)}" for a in np.flatnonzero(mask)))
    if phase in (core.DEAL_OVER, core.GAME_OVER):
        lines.append("result: " + ", ".join(f"player_{q} {v.reward(q):+d}" for q in range(n)))
    return "\n".join(lines)


def _trump_text(v: StateView, rules: Rules) -> str:
    if v.trump < 0:
        return "Trump: to be named by the dealer (no card turned)"
    if v.face < 0:
        return f"Trump {cards.SUIT_NAMES[v.trump]} (named by the dealer, no card turned)"
    return f"Trump {cards.SUIT_NAMES[v.trump]} (turned {cards.to_str(v.face)}, {_face_text(v, rules)})"


def _face_text(v: StateView, rules: Rules) -> str:
    if rules.trump_card == "separate":
        return "separate, no one's"
    dealer_decision = v.decision(v.dealer)
    if rules.trump_card == "separate_dealer_may_take" and v.face_state != core.FACE_PLAYED:
        if dealer_decision == core.PENDING:
            return "separate, the dealer may take it"
        if dealer_decision == core.PASSED or v.face_state == core.FACE_DEAD:
            return "separate, not taken"
        return "taken by the dealer"
    if v.face_state == core.FACE_IN_HAND and dealer_decision == core.PASSED:
        return "in the dealer's passed hand"
    return _FACE[v.face_state]
