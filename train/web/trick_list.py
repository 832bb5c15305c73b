"""The tricks of a deal as the seat views show them (``bourre serve``'s page, the arena's turns): who led, who
played what in order, and who won each finished trick. Both views read the same facts from an observation (each
trick's leader, and the trick and the player of each card played) and build the list here, once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bourre_env.core import cards

_CARD = tuple(cards.to_str(c) for c in range(cards.NUM_CARDS))


def trick_list(
    leaders: Mapping[int, int],
    plays: Mapping[int, Sequence[tuple[int, int]]],
    seat: int,
    n: int,
    hand_size: int,
    seats: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """The tricks led so far, seats absolute.

    ``leaders`` maps a trick (from 0) to its leader and ``plays`` a trick to its ``(card id, player)`` pairs in any
    order, players relative to ``seat``; ``seats`` are the view's seat entries (``decision``, ``tricks`` won)."""
    out: list[dict[str, Any]] = []
    for t in range(hand_size):
        leader_rel = leaders.get(t)
        if leader_rel is None:  # not led yet
            break
        order = sorted(plays.get(t, ()), key=lambda cr: (cr[1] - leader_rel) % n)
        out.append(
            {
                "number": t + 1,
                "leader": (leader_rel + seat) % n,
                "cards": [{"seat": (rel + seat) % n, "card": _CARD[c]} for c, rel in order],
                "winner": None,
            }
        )
    for t, trick in enumerate(out[:-1]):
        trick["winner"] = out[t + 1]["leader"]  # the winner of a trick leads the next
    if out:
        # the last trick led: finished when every player has played to it; its winner is the one trick that the
        # leaders of the later tricks do not account for
        playing = sum(1 for q in seats if q["decision"] == "playing")
        last = out[-1]
        if len(last["cards"]) == playing:
            won = [q["tricks"] for q in seats]
            for trick in out[:-1]:
                won[trick["winner"]] -= 1
            last["winner"] = next((q for q in range(n) if won[q] > 0), None)
    return out
