"""The relaxed proof of the cinch (``bourre_env.core.cinch_relaxed``): it only ever proves a cinch that holds, and it
settles the slowest questions of random play at 8 players.

Soundness is checked against the literal definition (``tests/oracle.py``) on small decks and against the exhaustive
search of ``cinch_search`` on full ones: wherever the relaxed game proves a cinch, no refuting line exists.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

import bourre_env
from bourre_env import core
from bourre_env.core import cinch_search
from bourre_env.core.cinch_bounds import unseen_cards
from bourre_env.core.cinch_relaxed import relaxed_cinch_proof, relevant_cards
from bourre_env.core.rules import CINCH_TRICKS, Rules
from tests import oracle
from tests.test_cinch_exact import trick_play_positions, view_of

TAIL = json.loads((Path(__file__).parent / "golden" / "cinch_random_play_tail.json").read_text())
TAIL_PARAMS = bourre_env.BatchGame(1, seed=0, rules=Rules.from_options(**TAIL["rules"])).params


def _relaxed(s: np.ndarray, p: np.ndarray, seat: int, allowance: int = 200_000) -> tuple[bool, int] | None:
    """The relaxed proof of ``seat``'s cinch, as ``cinch_search`` asks it; None when the seat has its tricks."""
    need = CINCH_TRICKS - int(s[core.S_TRICKS + seat])
    if need <= 0:
        return None
    absent = np.zeros(core.MAX_PLAYERS, dtype=np.int64)
    core.proven_absent(s, p, absent)
    proved, nodes = relaxed_cinch_proof(s, p, seat, unseen_cards(s, p, seat), need, absent, allowance)
    return bool(proved), int(nodes)


SMALL = [
    Rules(num_players=2, ranks=5, hand_size=4, lead_trump_honors=True),
    Rules(num_players=3, ranks=5, hand_size=4),
    Rules(num_players=3, ranks=5, hand_size=4, must_trump_when_cannot_win=False),
    Rules(num_players=3, ranks=5, hand_size=4, lead_trump_honors=True),
]


@pytest.mark.parametrize("rules", SMALL, ids=repr)
def test_a_relaxed_proof_is_a_cinch_by_the_definition_on_small_decks(rules: Rules) -> None:
    proofs = 0
    for s, p, seat in trick_play_positions(rules, deals=40, seed=21):
        answer = _relaxed(s, p, seat)
        if answer is None or not answer[0]:
            continue
        view = view_of(s, p, seat, rules)
        if oracle.count_placements(view) > 3000:
            continue
        assert oracle.cinch_exhaustive(view), (rules, seat, view)
        proofs += 1
    assert proofs >= 20  # the relaxation proves something on these decks, so the check has teeth


@pytest.mark.parametrize(("players", "ranks"), [(8, 13), (5, 13), (3, 6)])
def test_a_relaxed_proof_is_never_refuted_by_the_exhaustive_search(players: int, ranks: int) -> None:
    proofs = 0
    for s, p, seat in trick_play_positions(Rules(num_players=players, ranks=ranks), deals=25, seed=31):
        answer = _relaxed(s, p, seat)
        if answer is None or not answer[0]:
            continue
        found, _ = cinch_search.refuting_line(s, p, seat)
        assert not found, (players, ranks, seat, s.tolist())
        proofs += 1
    assert proofs >= 10


def test_a_refuted_cinch_is_never_proved() -> None:
    """Positions that the exhaustive search refutes (the corpus of ``tests/test_cinch_exact.py``): no relaxed proof."""
    from tests.test_cinch_exact import CORPUS, replay

    refuted = [c for c in CORPUS if not c[4]]
    assert len(refuted) > 10
    for players, ranks, seed, seat, _, actions in refuted:
        s, p, _ = replay(players, ranks, seed, actions)
        answer = _relaxed(s, p, seat)
        assert answer is not None and not answer[0], (players, ranks, seed, seat)


def test_relevant_cards_are_those_that_can_beat_a_card_of_ours() -> None:
    trump = 2  # hearts
    hand = (1 << 13 + 5) | (1 << 26 + 2) | (1 << 39 + 12)  # 7D, 4H, AS
    live = (1 << 13 + 3) | (1 << 13 + 9) | (1 << 26 + 0) | (1 << 0 + 11) | (1 << 39 + 4)  # 5D, JD, 2H, KC, 6S
    # JD beats our 7D, 2H ruffs any side card of ours; 5D is below our only diamond, KC is a suit we lack, the 6S is
    # below the AS
    assert relevant_cards(hand, -1, live, trump) == (1 << 13 + 9) | (1 << 26 + 0)
    # our card already in the trick counts: with the 3D played, the 5D can beat it
    assert relevant_cards(hand, 13 + 1, live, trump) == (1 << 13 + 3) | (1 << 13 + 9) | (1 << 26 + 0)


@pytest.mark.parametrize("index", range(len(TAIL["positions"])))
def test_the_slowest_questions_of_random_play_are_answered_fast(index: int) -> None:
    """Cinches of random play at 8 players that took the exhaustive search alone 5 to 53 s: settled now by the
    relaxed proof, within a few thousand nodes and a tenth of a second (the guard raises past it)."""
    position = TAIL["positions"][index]
    s = np.array(position["state"], dtype=np.int64)
    seat = int(position["seat"])
    x = core.new_scratch()
    x[core.X_CINCH_LIMIT_US] = 100_000
    assert core.has_cinch_with(s, TAIL_PARAMS, seat, x)
    assert x[core.X_CINCH_NODES] < 10_000
    answer = _relaxed(s, TAIL_PARAMS, seat, allowance=10_000)
    assert answer is not None and answer[0]


@pytest.mark.slow  # the exhaustive search alone: 5 to 53 s a position
@pytest.mark.parametrize("index", range(len(TAIL["positions"])))
def test_the_exhaustive_search_alone_agrees_on_the_slowest_questions(index: int) -> None:
    position = TAIL["positions"][index]
    s = np.array(position["state"], dtype=np.int64)
    x = core.new_scratch()
    x[core.X_CINCH_LIMIT_US] = 300_000_000
    start = time.perf_counter()
    found, _ = cinch_search.traced_refuting_line(s, TAIL_PARAMS, int(position["seat"]), x, np.zeros((0, 4), np.int64))
    assert not found, f"refuted after {time.perf_counter() - start:.1f} s"
