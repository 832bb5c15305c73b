"""Observation version 3's inferred fields (``void``, ``trick_winning``, ``boss``, ``unseen``), recomputed here from
the earlier fields of the same observation (the cards seen, the tricks) and checked against the true hands."""

from __future__ import annotations

import numpy as np
import pytest

from bourre_env import observation
from bourre_env.bourre_v0 import raw_env


def seen_and_tricks(d: dict[str, np.ndarray], n: int) -> tuple[set[int], list[dict[int, int]], list[int]]:
    """The cards the observer has seen, and each trick's cards by relative seat and its leader, from the fields of
    version 2 alone."""
    seen = set(np.flatnonzero(d["hand"])) | set(np.flatnonzero(d["own_discards"]))
    seen |= set(np.flatnonzero(d["face_card"]))
    tricks: list[dict[int, int]] = [{} for _ in range(6)]
    for card, by in zip(*np.nonzero(d["played_by"]), strict=True):
        seen.add(int(card))
        tricks[int(np.flatnonzero(d["played_in"][card])[0])][int(by)] = int(card)
    leaders = [int(np.flatnonzero(row)[0]) if row.any() else -1 for row in d["trick_leader"]]
    return seen, tricks, leaders


def winner(cards: dict[int, int], leader: int, trump: int) -> int:
    led = cards[leader] // 13
    key = {
        seat: (2, c % 13) if c // 13 == trump else (1, c % 13) if c // 13 == led else (0, 0)
        for seat, c in cards.items()
    }
    return max(key, key=lambda seat: key[seat])


@pytest.mark.parametrize("num_players", [3, 5, 7])
def test_inferred_fields_follow_from_what_the_observer_saw(num_players: int) -> None:
    rng = np.random.default_rng(num_players)
    env = raw_env(num_players=num_players)
    checked = {"void": 0, "trick_winning": 0, "boss": 0}
    for deal in range(40):
        env.reset(seed=deal)
        while env.agents:
            for agent in env.agents:
                d = observation.as_dict(env.observe(agent)["observation"])
                me = env.possible_agents.index(agent)
                deck = {13 * suit + r for suit in range(4) for r in np.flatnonzero(d["deck_ranks"])}
                seen, tricks, leaders = seen_and_tricks(d, num_players)
                unseen = deck - seen
                trump = int(np.flatnonzero(d["trump"])[0]) if d["trump"].any() else -1
                counts = [sum(1 for c in unseen if c // 13 == suit) / 13 for suit in range(4)]
                if d["reshuffled"][0]:
                    # the pile went back into the stock: the observer's discards (and a passed dealer's turned card)
                    # may be unseen again, as they were before the draw
                    back = unseen | set(np.flatnonzero(d["own_discards"])) | set(np.flatnonzero(d["face_card"]))
                    most = [sum(1 for c in back if c // 13 == suit) / 13 for suit in range(4)]
                    assert np.all(np.asarray(counts) - 1e-6 <= d["unseen"][:4])
                    assert np.all(d["unseen"][:4] <= np.asarray(most) + 1e-6)
                    unseen = back
                else:
                    np.testing.assert_allclose(d["unseen"][:4], counts, atol=1e-6)
                    assert d["unseen"][4] == pytest.approx(counts[trump] if trump >= 0 else 0.0)
                    hand = np.flatnonzero(d["hand"])
                    boss = {c for c in hand if not any(u // 13 == c // 13 and u > c for u in unseen)}
                    assert set(np.flatnonzero(d["boss"])) == boss
                    checked["boss"] += len(boss)
                # the current trick's winner so far
                current = int(np.flatnonzero(d["trick_no"])[0])
                if d["phase"][1] and current < 6 and tricks[current]:
                    expected = winner(tricks[current], leaders[current], trump)
                    assert np.flatnonzero(d["trick_winning"]).tolist() == [expected]
                    checked["trick_winning"] += 1
                else:
                    assert not d["trick_winning"].any()
                # voids: every failure to follow shows, and none is claimed that the true hand contradicts
                void = d["void"][:num_players]
                assert not void[0].any()
                for t, cards in enumerate(tricks):
                    if leaders[t] >= 0 and leaders[t] in cards:
                        led = cards[leaders[t]] // 13
                        for seat, c in cards.items():
                            if seat and c // 13 != led:
                                assert void[seat][led] == 1, (t, seat, led)
                for rel in range(1, num_players):
                    held = set(env.hand(env.possible_agents[(me + rel) % num_players])) & unseen
                    for suit in np.flatnonzero(void[rel]):
                        assert not any(c // 13 == suit for c in held), (rel, suit)
                        checked["void"] += 1
            acting = env.agent_selection
            if env.terminations[acting] or env.truncations[acting]:
                env.step(None)  # the deal is over: each agent leaves in turn
            else:
                env.step(int(rng.choice(np.flatnonzero(env.observe(acting)["action_mask"]))))
    assert min(checked.values()) > 20, checked  # each field was exercised


def test_older_policies_read_their_prefix() -> None:
    assert observation.VERSION == 3
    assert observation.VERSION_SIZES == {1: 1145, 2: 1174, 3: observation.OBS_SIZE}
    assert observation.OFFSETS["void"] == observation.VERSION_SIZES[2]
