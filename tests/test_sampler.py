"""The sampler of worlds (``bourre_env.sampler``), held to its definition.

* Every sampled world, rebuilt from its deck, dealer, seed and actions and replayed through ``core.step``
  (the stock order after each reshuffle set through the core's own shuffle), is the state the sampler
  returned and gives the observer exactly the observation it has: over every preset, table sizes 2-8,
  decisions of the acting seat and of the others, reshuffles included. The CI version draws a few thousand
  worlds; ``pytest -m slow tests/test_sampler.py`` draws more than 10^4.
* On small decks the sampled worlds follow the exact count of consistent worlds: an exhaustive enumeration
  (every deck, every discard choice, every reshuffle order and hidden declaration, replayed and compared)
  gives the expected frequencies, and a chi-square test compares them with the sampler's, for the counting
  method and the rejection method alike.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from conftest import card_locations

from bourre_env import core
from bourre_env.core.rules import Rules, presets
from bourre_env.observation import O_DEALER, O_HAND
from bourre_env.sampler import (
    Worlds,
    WorldSampler,
    decode,
    observer_view,
    rules_from_observation,
    sample_worlds,
)


# ---------------------------------------------------------------------------------------------- positions
def decision_points(
    rules: Rules, seed: int, games: int, every_seat: bool = False
) -> Iterator[tuple[np.ndarray, np.ndarray, int, list[int]]]:
    """(state, params, observer, actions of the deal so far) at every decision of random legal games; the
    observer is the seat to act, or (``every_seat``) each seat in turn."""
    rng = np.random.default_rng(seed)
    p = rules.params()
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    for _ in range(games):
        s = core.new_state()
        deck = rng.permutation(np.asarray(rules.deck_cards(), dtype=np.int64))
        core.start_episode(s, p, deck, int(rng.integers(rules.num_players)), 0, int(rng.integers(2**62)))
        history: list[int] = []
        while True:
            phase = s[core.S_PHASE]
            if phase == core.GAME_OVER:
                break
            if phase == core.DEAL_OVER:
                core.next_deal(
                    s, p, rng.permutation(np.asarray(rules.deck_cards(), dtype=np.int64)), int(rng.integers(2**62))
                )
                history = []
                continue
            seats = range(rules.num_players) if every_seat else [int(s[core.S_CUR])]
            for seat in seats:
                yield s.copy(), p, seat, list(history)
            core.legal_actions(s, p, mask)
            action = int(rng.choice(np.flatnonzero(mask)))
            assert core.step(s, p, action)
            history.append(action)


def rebuild(worlds: Worlds, i: int, params: np.ndarray, deal_no: int, pot: int) -> np.ndarray:
    """World ``i`` dealt from its deck and replayed action by action through ``core.step``.

    Before a draw that runs the stock out, the pile is permuted so that the reshuffle deals the recorded
    order: the permutation is read off a copy of the state whose pile holds positions, stepped the same way.
    """
    s = core.new_state()
    core.start_episode(s, params, worlds.decks[i], worlds.dealer, 0, int(worlds.seeds[i]))
    s[core.S_DEAL_NO] = deal_no
    orders = [int(c) for c in worlds.reshuffle_orders[i]]
    for action in worlds.actions[i]:
        if s[core.S_PHASE] not in core.DRAW_PHASES or action < core.STAY_BASE:
            assert core.step(s, params, int(action)), f"action {action} refused in the replay"
            continue
        probe = s.copy()
        k = int(s[core.S_PILE_LEN])
        probe[core.S_PILE : core.S_PILE + k] = np.arange(k)
        assert core.step(probe, params, int(action))
        if probe[core.S_RESHUFFLES] > s[core.S_RESHUFFLES]:
            new_stock = orders[:k]
            del orders[:k]
            for position, slot in enumerate(probe[core.S_STOCK : core.S_STOCK + k]):
                s[core.S_PILE + slot] = new_stock[position]
        assert core.step(s, params, int(action)), f"action {action} refused in the replay"
    assert not orders, "reshuffle orders left over"
    s[core.S_POT] = pot
    return s


def check_worlds(state: np.ndarray, params: np.ndarray, seat: int, count: int, seed: int) -> tuple[int, int]:
    """Sample ``count`` worlds for ``seat`` and hold each to the definition; returns (worlds, reshuffled)."""
    obs = observer_view(state, params, seat)
    sampler = WorldSampler(obs)
    worlds = sampler.sample(count, seed=seed, recipes=True)
    deck = sorted(sampler.rules.deck_cards())
    record = decode(obs)
    reshuffled = 0
    for i in range(count):
        world = worlds.states[i]
        assert np.array_equal(observer_view(world, sampler.params, 0), obs), "the world shows another observation"
        rebuilt = rebuild(worlds, i, sampler.params, record.deal_no, record.pot)
        assert np.array_equal(rebuilt, world), "the world is not what its recipe replays to"
        assert sorted(card_locations(world, sampler.rules)) == deck
        reshuffled += int(world[core.S_RESHUFFLES] > 0)
    return count, reshuffled


CONFIGS: list[tuple[str, dict[str, Any]]] = [
    *((name, {}) for name in presets),
    ("standard", {"illegal_action": "renege"}),
    ("standard", {"lead_trump_honors": True, "must_trump_when_cannot_win": False}),
    ("standard", {"ranks": 7, "hand_size": 3}),
    ("standard", {"deals_per_episode": 3, "pot_limit": 6, "tie": "divide"}),
    ("standard", {"hand_size": 6, "max_discard": 4}),
    ("two_round_declaration", {"second_pass_ante": 2}),
]


def sweep(games: int, per_point: int, sizes: range, every_seat: bool) -> tuple[int, int]:
    total = reshuffled = 0
    for k, (name, options) in enumerate(CONFIGS):
        for n in sizes:
            try:
                rules = Rules.from_options(name, num_players=n, **options)
            except ValueError:
                continue  # a small deck that cannot seat this many players
            for j, (s, p, seat, _) in enumerate(
                decision_points(rules, seed=100 * k + n, games=games, every_seat=every_seat)
            ):
                got, res = check_worlds(s, p, seat, per_point, seed=j)
                total += got
                reshuffled += res
    return total, reshuffled


def test_sampled_worlds_replay_to_the_observation() -> None:
    total, reshuffled = sweep(games=1, per_point=2, sizes=range(2, 9), every_seat=False)
    assert total >= 3000 and reshuffled >= 100, (total, reshuffled)


def test_worlds_of_seats_not_to_act() -> None:
    total, reshuffled = 0, 0
    for n in (3, 8):
        rules = Rules(num_players=n)
        for j, (s, p, seat, _) in enumerate(decision_points(rules, seed=n, games=1, every_seat=True)):
            got, res = check_worlds(s, p, seat, 1, seed=j)
            total += got
            reshuffled += res
    assert total >= 200 and reshuffled > 0


@pytest.mark.slow
def test_sampled_worlds_replay_to_the_observation_long() -> None:
    total, reshuffled = sweep(games=3, per_point=4, sizes=range(2, 9), every_seat=False)
    total2, reshuffled2 = sweep(games=1, per_point=1, sizes=range(2, 9), every_seat=True)
    assert total + total2 >= 10_000 and reshuffled + reshuffled2 >= 1000, (total, total2, reshuffled, reshuffled2)


# ---------------------------------------------------------------------------------------------- exact counts
def world_key(s: np.ndarray, n: int, observer: int) -> tuple:
    """Everything hidden about a world that matters, with seats relative to the observer (the sampler's frame)."""
    seats = [(observer + k) % n for k in range(n)]
    stock = tuple(int(c) for c in s[core.S_STOCK + s[core.S_STOCK_POS] : core.S_STOCK + s[core.S_STOCK_LEN]])
    pile = tuple(sorted(int(c) for c in s[core.S_PILE : core.S_PILE + s[core.S_PILE_LEN]]))
    return (
        tuple(int(s[core.S_HAND + q]) for q in seats),
        tuple(int(s[core.S_DISCARDS + q]) for q in seats),
        tuple(int(s[core.S_DECISION + q]) for q in seats),
        stock,
        pile,
    )


def enumerate_worlds(rules: Rules, true_state: np.ndarray, observer: int, history: list[int]) -> Counter:
    """Every world, counted once: each deal of the cards (hands as sets; the turned card where the rules put it),
    then the deal's actions again, with every choice the observer cannot see tried: an opponent's discards of
    the announced count, the observer's own (kept when the observation agrees), a declaration still secret,
    the order of every reshuffled stock. Returns the count of each ``world_key``."""
    p = rules.params()
    n, h = rules.num_players, rules.hand_size
    obs = observer_view(true_state, p, observer)
    dealer = int(true_state[core.S_DEALER])
    face = int(true_state[core.S_FACE])
    trump_card = int(p[core.P_TRUMP_CARD])
    cards = [c for c in rules.deck_cards() if c != face]
    dealers_card = trump_card == core.TRUMP_DEALERS_CARD
    sizes = [h - (1 if dealers_card and q == dealer else 0) for q in range(n)]
    order = [(dealer + 1 + k) % n for k in range(n)]
    counts: Counter = Counter()
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    secret = int(p[core.P_DECLARATION]) == core.DECLARATION_SIMULTANEOUS

    def hands(pool: list[int], k: int) -> Iterator[list[list[int]]]:
        if k == n:
            yield []
            return
        q = order[k]
        for chosen in itertools.combinations(pool, sizes[q]):
            rest = [c for c in pool if c not in chosen]
            for tail in hands(rest, k + 1):
                yield [list(chosen), *tail]

    def replay(s: np.ndarray, step_no: int) -> None:
        if step_no == len(history):
            s[core.S_POT] = true_state[core.S_POT]
            if np.array_equal(observer_view(s, p, observer), obs):
                counts[world_key(s, n, observer)] += 1
            return
        action = history[step_no]
        phase = s[core.S_PHASE]
        seat = int(s[core.S_CUR])
        options = [action]
        if phase in core.DRAW_PHASES and action >= core.STAY_BASE:
            core.legal_actions(s, p, mask)
            options = [a for a in np.flatnonzero(mask).tolist() if a >= core.STAY_BASE]
        elif phase == core.DECLARE and secret and seat != observer:
            options = [core.PASS, core.DECLARE_PLAY]
        for a in options:
            t = s.copy()
            k = int(t[core.S_PILE_LEN])
            probe = t.copy()
            probe[core.S_PILE : core.S_PILE + k] = np.arange(k)
            if not core.step(probe, p, a):
                continue
            if probe[core.S_RESHUFFLES] > t[core.S_RESHUFFLES]:
                pile = [int(c) for c in t[core.S_PILE : core.S_PILE + k]]
                slots = [int(x) for x in probe[core.S_STOCK : core.S_STOCK + k]]
                for perm in itertools.permutations(pile):
                    u = t.copy()
                    for position, slot in enumerate(slots):
                        u[core.S_PILE + slot] = perm[position]
                    if core.step(u, p, a) and _public_step_agrees(u, true_state, seat):
                        replay(u, step_no + 1)
            elif core.step(t, p, a) and _public_step_agrees(t, true_state, seat):
                replay(t, step_no + 1)

    stock_size = rules.deck_size - n * h - (1 if trump_card in (core.TRUMP_SEPARATE, core.TRUMP_DEALER_MAY_TAKE) else 0)
    for dealt in hands(cards, 0):
        rest = [c for c in cards if all(c not in hand for hand in dealt)]
        by_seat = dict(zip(order, dealt, strict=True))
        for stock in itertools.permutations(rest, stock_size) if len(rest) == stock_size else []:
            deck = []
            for j in range(h):
                for q in order:
                    hand = sorted(by_seat[q])
                    deck.append(face if dealers_card and q == dealer and j == h - 1 else hand[j])
            if face >= 0 and not dealers_card and trump_card != core.TRUMP_NAMED:
                deck.append(face)
            deck += list(stock)
            s = core.new_state()
            core.start_episode(s, p, np.asarray(deck, dtype=np.int64), dealer, 0, 12345)
            replay(s, 0)
    return counts


def _public_step_agrees(s: np.ndarray, true_state: np.ndarray, seat: int) -> bool:
    """After a seat's draw, its announced count is the one the deal announced (an early cut of the search)."""
    announced = int(s[core.S_NDISCARD + seat])
    return announced < 0 or announced == int(true_state[core.S_NDISCARD + seat])


def chi_square_p_value(observed: list[int], expected: list[float]) -> float:
    """Upper tail of the chi-square statistic (Wilson-Hilferty normal approximation, cells merged to E >= 5)."""
    cells: list[tuple[float, float]] = []
    acc_o, acc_e = 0.0, 0.0
    for o, e in sorted(zip(observed, expected, strict=True), key=lambda oe: oe[1]):
        acc_o += o
        acc_e += e
        if acc_e >= 5.0:
            cells.append((acc_o, acc_e))
            acc_o, acc_e = 0.0, 0.0
    if acc_e > 0 and cells:
        o, e = cells[-1]
        cells[-1] = (o + acc_o, e + acc_e)
    dof = len(cells) - 1
    if dof < 1:
        return 1.0
    stat = sum((o - e) ** 2 / e for o, e in cells)
    z = ((stat / dof) ** (1 / 3) - (1 - 2 / (9 * dof))) / math.sqrt(2 / (9 * dof))
    return 0.5 * math.erfc(z / math.sqrt(2))


# small decks (A and K of each suit, or A K Q), three or two players: every deal can be enumerated
SMALL: list[tuple[str, dict[str, Any], int]] = [
    ("standard", {"num_players": 3, "hand_size": 2, "ranks": 2}, 1),
    ("standard", {"num_players": 2, "hand_size": 3, "ranks": 2, "max_discard": 2}, 2),
    ("two_round_declaration", {"num_players": 3, "hand_size": 2, "ranks": 2}, 3),
    ("simultaneous_declaration", {"num_players": 3, "hand_size": 2, "ranks": 2}, 4),
    ("four_card", {"num_players": 3, "hand_size": 2, "ranks": 2, "max_discard": 1}, 5),
    ("separate_trump_card_dealer_may_take", {"num_players": 2, "hand_size": 2, "ranks": 2}, 6),
    (
        "standard",
        {"num_players": 3, "hand_size": 2, "ranks": 2, "lead_trump_honors": True, "must_trump_when_cannot_win": False},
        7,
    ),
    ("dealer_picks_trump", {"num_players": 3, "hand_size": 2, "ranks": 2}, 8),
]


def small_positions(
    name: str, options: dict[str, Any], seed: int, per_kind: int
) -> list[tuple[Rules, np.ndarray, int, list[int]]]:
    """Decisions of the acting seat in random deals, preferring the interesting ones: after a reshuffle, in
    trick play after a trick (proven voids), during a secret declaration round."""
    rules = Rules.from_options(name, **options)
    picked: dict[str, list] = {"reshuffle_draw": [], "reshuffle": [], "play": [], "draw": [], "declare": []}
    for s, _, seat, history in decision_points(rules, seed=seed, games=60):
        if s[core.S_RESHUFFLES] > 0:
            kind = "reshuffle_draw" if s[core.S_PHASE] in core.DRAW_PHASES else "reshuffle"
        elif s[core.S_PHASE] == core.PLAY and s[core.S_TRICK_NO] > 0:
            kind = "play"
        elif s[core.S_PHASE] in core.DRAW_PHASES:
            kind = "draw"
        elif s[core.S_PHASE] == core.DECLARE:
            kind = "declare"
        else:
            continue
        if len(picked[kind]) < per_kind:
            picked[kind].append((rules, s, seat, history))
    return [x for kind in picked.values() for x in kind]


def compare_with_enumeration(
    rules: Rules, s: np.ndarray, seat: int, history: list[int], method: str, seed: int
) -> None:
    counts = enumerate_worlds(rules, s, seat, history)
    assert counts, "the true world itself must be found"
    obs = observer_view(s, rules.params(), seat)
    sampler = WorldSampler(obs, method=method)
    samples = max(2000, 40 * len(counts))
    worlds = sampler.sample(samples, seed=seed)
    seen = Counter(world_key(w, rules.num_players, 0) for w in worlds)
    outside = set(seen) - set(counts)
    assert not outside, f"{len(outside)} sampled worlds the enumeration does not allow"
    total = sum(counts.values())
    keys = list(counts)
    p_value = chi_square_p_value([seen[k] for k in keys], [samples * counts[k] / total for k in keys])
    assert p_value > 1e-4, f"sampled frequencies differ from the exact counts (p = {p_value:.2e}, {len(keys)} worlds)"


@pytest.mark.parametrize(("name", "options", "seed"), SMALL, ids=[f"{c[0]}-{c[2]}" for c in SMALL])
def test_small_decks_match_the_exact_count(name: str, options: dict[str, Any], seed: int) -> None:
    positions = small_positions(name, options, seed, per_kind=1)
    assert positions
    for k, (rules, s, seat, history) in enumerate(positions):
        compare_with_enumeration(rules, s, seat, history, "auto", seed=k)


@pytest.mark.parametrize(("name", "options", "seed"), SMALL[:3], ids=[f"{c[0]}-{c[2]}" for c in SMALL[:3]])
def test_rejection_method_matches_the_exact_count(name: str, options: dict[str, Any], seed: int) -> None:
    for k, (rules, s, seat, history) in enumerate(small_positions(name, options, seed, per_kind=1)):
        compare_with_enumeration(rules, s, seat, history, "rejection", seed=k)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "options", "seed"), SMALL, ids=[f"{c[0]}-{c[2]}" for c in SMALL])
def test_small_decks_match_the_exact_count_long(name: str, options: dict[str, Any], seed: int) -> None:
    for k, (rules, s, seat, history) in enumerate(small_positions(name, options, seed + 50, per_kind=4)):
        for method in ("dp", "rejection"):
            compare_with_enumeration(rules, s, seat, history, method, seed=k)


def test_a_wrong_count_would_be_caught() -> None:
    """The comparison can fail: dropping one consistent world's share from the expected counts is detected."""
    rules, s, seat, history = small_positions(*SMALL[0][:2], SMALL[0][2], per_kind=1)[-1]
    counts = enumerate_worlds(rules, s, seat, history)
    sampler = WorldSampler(observer_view(s, rules.params(), seat))
    worlds = sampler.sample(4000, seed=0)
    seen = Counter(world_key(w, rules.num_players, 0) for w in worlds)
    keys = list(counts)
    skewed = {k: counts[k] * (3 if i == 0 else 1) for i, k in enumerate(keys)}
    total = sum(skewed.values())
    assert len(keys) > 1
    assert chi_square_p_value([seen[k] for k in keys], [4000 * skewed[k] / total for k in keys]) < 1e-4


# ---------------------------------------------------------------------------------------------- API
@pytest.mark.parametrize("name", list(presets))
def test_rules_come_back_from_the_observation(name: str) -> None:
    for n in (2, 5, 8):
        options: dict[str, Any] = {"num_players": n}
        if name == "standard":
            options.update(pot_limit=40, tie="divide", rake=0.05, deals_per_episode=4, ranks=8 if n < 6 else 13)
        try:
            rules = Rules.from_options(name, **options)
        except ValueError:
            continue
        s, p, seat, _ = next(decision_points(rules, seed=n, games=1))
        back = rules_from_observation(observer_view(s, p, seat))
        assert np.array_equal(back.params(), p), (rules, back)


def test_a_sampler_from_a_state_is_the_sampler_of_its_observation() -> None:
    rules = Rules(num_players=6)
    s, p, seat, _ = list(decision_points(rules, seed=5, games=1))[-3]
    a = WorldSampler.from_state(s, rules, seat).sample(4, seed=2)
    b = WorldSampler(observer_view(s, p, seat), rules).sample(4, seed=2)
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="seat"):
        WorldSampler.from_state(s, rules, 6)


def test_sampling_is_seeded() -> None:
    rules = Rules(num_players=5)
    points = list(decision_points(rules, seed=3, games=1))
    s, p, seat, _ = points[len(points) // 2]
    obs = observer_view(s, p, seat)
    a = sample_worlds(obs, 8, seed=11)
    b = sample_worlds(obs, 8, seed=11)
    c = sample_worlds(obs, 8, seed=12)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_bad_input_is_refused() -> None:
    rules = Rules(num_players=4)
    points = list(decision_points(rules, seed=0, games=1))
    s, p, seat, _ = points[0]
    obs = observer_view(s, p, seat)
    with pytest.raises(ValueError, match="expected a vector"):
        WorldSampler(obs[:-1])
    bad = obs.copy()
    bad[O_DEALER : O_DEALER + 8] = 0.5
    with pytest.raises(ValueError, match="dealer"):
        WorldSampler(bad)
    with pytest.raises(ValueError, match="count"):
        WorldSampler(obs).sample(0)
    with pytest.raises(ValueError, match="method"):
        WorldSampler(obs, method="magic")
    with pytest.raises(ValueError, match="seed"):
        WorldSampler(obs).sample(2, seed="x")  # type: ignore[arg-type]
    # a deal that is over has nothing left to sample
    done = s.copy()
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    while done[core.S_PHASE] not in (core.DEAL_OVER, core.GAME_OVER):
        core.legal_actions(done, p, mask)
        core.step(done, p, int(np.flatnonzero(mask)[0]))
    with pytest.raises(ValueError, match="over"):
        WorldSampler(observer_view(done, p, 0))
    # an observation no deal produces: the observer also holds a card that was played
    s, p, seat, _ = next(x for x in points if x[0][core.S_PHASE] == core.PLAY and x[0][core.S_TRICK_NO] > 0)
    wrong = observer_view(s, p, seat)
    played = int(s[core.S_PLAYED]) & ~int(s[core.S_HAND + seat])
    wrong[O_HAND + (played & -played).bit_length() - 1] = 1.0
    with pytest.raises(ValueError):
        WorldSampler(wrong)
