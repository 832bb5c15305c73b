"""``train.research.belief_accuracy``: the Brier score and log-likelihood formulas by hand, the uniform sampler's
marginals and joint frequency against the exact posterior counted by enumeration on small decks, and the command
on a tiny budget."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from bourre_env import core, view
from bourre_env.core.rules import Rules
from bourre_env.sampler import WorldSampler, observer_view
from tests.test_sampler import enumerate_worlds, small_positions, world_key
from train.research import belief_accuracy as ba


def test_formulas_by_hand() -> None:
    # two hidden cards, three locations (0 elsewhere, seats 1 and 2), four worlds
    worlds = np.array([[1, 0], [1, 2], [2, 0], [1, 0]])
    truth = np.array([1, 0])
    room = np.array([True, True, True])
    s = ba.score_worlds(worlds, truth, room)
    # card 0: frequencies (0, 3/4, 1/4), truly at 1: 0 + (1/4)^2 + (1/4)^2; card 1: (3/4, 0, 1/4), truly at 0: the same
    assert s.brier == pytest.approx(0.125)
    # smoothed: (3 + 1/2) / (4 + 3/2) for each card's true location
    assert s.log_likelihood == pytest.approx(2 * math.log(3.5 / 5.5))
    assert s.log_likelihood_per_card == pytest.approx(math.log(3.5 / 5.5))
    assert s.joint_hits == pytest.approx(0.5)  # worlds 0 and 3 have both cards right
    assert s.hidden == 2
    # a location without room gets no smoothing mass; a card no world put where it is costs log(a / (W + a L))
    s = ba.score_worlds(np.array([[2], [2]]), np.array([1]), np.array([False, True, True]))
    assert s.log_likelihood == pytest.approx(math.log(0.5 / 3.0))
    assert s.brier == pytest.approx(2.0)
    # exact marginals are scored as they are
    exact = ba.score(np.array([[0.2, 0.8, 0.0]]), np.array([1]))
    assert exact.brier == pytest.approx(0.2**2 + 0.2**2)
    assert exact.log_likelihood == pytest.approx(math.log(0.8))


def _exact(rules: Rules, s: np.ndarray, seat: int, history: list[int], cards: np.ndarray) -> tuple[np.ndarray, Counter]:
    """The exact marginals ``(cards, n)`` of the uniform posterior, and the count of each hand assignment."""
    n = rules.num_players
    counts = enumerate_worlds(rules, s, seat, history)
    hands: Counter = Counter()
    for key, count in counts.items():
        hands[key[0]] += count
    total = sum(hands.values())
    marginals = np.zeros((cards.shape[0], n))
    for key, count in hands.items():
        for i, c in enumerate(cards.tolist()):
            where = [r for r in range(1, n) if key[r] >> c & 1]
            marginals[i, where[0] if where else 0] += count / total
    return marginals, hands


@pytest.mark.parametrize("kind", ["play", "draw"])
def test_uniform_sampler_against_the_exact_posterior(kind: str) -> None:
    positions = small_positions("standard", {"num_players": 3, "hand_size": 2, "ranks": 2}, 1, per_kind=1)
    picked = [x for x in positions if (view.phase_of(x[1]) == core.PLAY) == (kind == "play")]
    assert picked
    rules, s, seat, history = picked[0]
    n = rules.num_players
    obs = observer_view(s, rules.params(), seat)
    cards = ba.hidden_cards(obs, rules)
    assert cards.size >= 2
    marginals, hands = _exact(rules, s, seat, history, cards)
    truth = np.zeros(cards.shape[0], dtype=np.int64)
    true_hands = tuple(view.hand_of(s, (seat + r) % n) for r in range(n))
    for r in range(1, n):
        truth[(true_hands[r] >> cards) & 1 == 1] = r
    # every card outside the hidden set is in no other hand, in every consistent world
    outside = [c for c in rules.deck_cards() if c not in cards.tolist()]
    assert all(not key[r] >> c & 1 for key in hands for r in range(1, n) for c in outside)
    # the formulas on the exact marginals, by a loop
    exact = ba.score(marginals, truth)
    assert exact.log_likelihood == pytest.approx(sum(math.log(marginals[i, truth[i]]) for i in range(cards.size)))
    brier = np.mean([sum((marginals[i, j] - (j == truth[i])) ** 2 for j in range(n)) for i in range(cards.size)])
    assert exact.brier == pytest.approx(brier)
    # the sampler's frequencies against the exact marginals and the exact probability of the true hands
    draws = 4000
    worlds = WorldSampler(obs).sample(draws, seed=3)
    located = ba.locations(worlds, n, cards)
    freq = np.stack([(located == loc).mean(axis=0) for loc in range(n)], axis=1)
    assert np.abs(freq - marginals).max() < 5 * math.sqrt(0.25 / draws)
    sampled = ba.score_worlds(located, truth, np.ones(n, dtype=bool))
    assert sampled.brier == pytest.approx(exact.brier, abs=0.03)
    assert sampled.log_likelihood == pytest.approx(exact.log_likelihood, abs=0.05 * cards.size)
    joint = hands[true_hands] / sum(hands.values())
    assert sampled.joint_hits == pytest.approx(joint, abs=5 * math.sqrt(joint * (1 - joint) / draws) + 1e-9)
    # the same worlds in the sampler's frame: hand keys as the enumeration writes them
    assert {world_key(w, n, 0)[0] for w in worlds[:200]} <= set(hands)


def test_command_on_a_tiny_budget(tmp_path: Path) -> None:
    out = tmp_path / "belief.json"
    args = ["--players", "3", "--deals", "2", "--worlds", "8", "--seed", "3", "--json", str(out)]
    assert ba.main([*args, "--plot", str(tmp_path), "--methods", "counting", "uniform", "ppo", "--no-progress"]) == 0
    data = json.loads(out.read_text())
    assert data["summary"] and {e["method"] for e in data["summary"]} == {"counting", "uniform", "ppo"}
    assert all(0.0 <= e["brier"] <= 2.0 and e["log_likelihood"] <= 0.0 for e in data["summary"])
    assert {e["point"] for e in data["summary"]} >= {0}
    assert (tmp_path / "belief_accuracy_3p.png").is_file()
    # the counting reference has no worlds: its joint frequency is not defined
    assert all(math.isnan(r["counting"]["joint_hits"]) for r in data["rows"])
