"""A policy file inside the search: rollouts that play exactly what the env plays with ``agents.make("ppo")`` in
every seat, and worlds weighed by the policy's probabilities of the others' actions, held to the posterior
counted exhaustively on small decks."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from typing import Any

import numpy as np
import pytest

import agents
import bourre_env
from agents.search.inference import _policy_log_weights, policy_worlds
from agents.search.pimc import parse_options
from agents.search.policy import PolicyModel
from agents.search.rollout import Rollout
from bourre_env import core
from bourre_env.core.rules import Rules
from bourre_env.sampler import WorldSampler, observer_view
from tests.test_sampler import SMALL, chi_square_p_value, small_positions, world_key


@pytest.mark.parametrize("num_players", [3, 5, 7])
def test_policy_rollouts_play_what_the_env_plays_with_the_policy(num_players: int) -> None:
    env = bourre_env.env(num_players=num_players)
    policy = agents.make("ppo")
    rollout = Rollout("ppo")
    p = env.unwrapped.rules.params()
    starts, ends, rewards = [], [], []
    for seed in range(6):
        env.reset(seed=seed)
        start = env.unwrapped.state_vector.copy()
        replayed = start.copy()
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            assert not (terminated or truncated)
            action = policy.act(obs)
            assert core.step(replayed, p, action)
            env.step(action)
            if replayed[core.S_PHASE] in (core.DEAL_OVER, core.GAME_OVER):
                break
        starts.append(start)
        ends.append(replayed)
        rewards.append([env.rewards[a] for a in env.possible_agents])
    rows = np.ascontiguousarray(starts)  # all deals in one batch: the rows finish at different steps
    rollout.run(rows, p)
    for b in range(rows.shape[0]):
        assert np.array_equal(rows[b], ends[b]), f"deal {b}: the rollout's play differs from the env's"
        assert [float(rows[b, core.S_REWARD + q]) for q in range(num_players)] == rewards[b]


def test_sampled_policy_rollouts_are_seeded_and_differ_from_greedy_play() -> None:
    rules = Rules.from_options("standard", num_players=5)
    p = rules.params()
    rng = np.random.default_rng(3)
    starts = np.zeros((64, core.STATE_SIZE), dtype=np.int64)
    for b in range(starts.shape[0]):
        core.start_episode(
            starts[b],
            p,
            rng.permutation(np.asarray(rules.deck_cards(), dtype=np.int64)),
            int(rng.integers(5)),
            0,
            int(rng.integers(2**62)),
        )
    runs = []
    for kind, seed, sample in (("ppo", 1, True), ("ppo", 1, True), ("ppo", 2, True), ("ppo", 1, False)):
        rows = starts.copy()
        Rollout(kind, seed=seed, sample=sample).run(rows, p)
        assert all(r[core.S_PHASE] in (core.DEAL_OVER, core.GAME_OVER) for r in rows)
        runs.append(rows)
    assert np.array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2]) and not np.array_equal(runs[0], runs[3])


def test_policy_specs() -> None:
    shipped = agents.ppo.SHIPPED_MODEL
    for spec in (
        "pimc:2,rollout=ppo,infer=0",
        "pimc:2,model=ppo,infer=2",
        "ismcts:4,rollout=ppo,batch=2,infer=0",
        "ismcts:4,model=ppo,infer=2,sample=1,rollout=ppo,batch=2",
        f"pimc:2,rollout=ppo:{shipped}",
    ):
        agent: Any = agents.make(spec, seed=0)
        env = bourre_env.env(num_players=4)
        env.reset(seed=1)
        for name in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                break
            action = agent.act(obs) if name == "player_0" else int(np.flatnonzero(obs["action_mask"])[-1])
            assert obs["action_mask"][action]
            env.step(action)
    with pytest.raises(ValueError, match="ppo:PATH"):
        agents.make("pimc:2,rollout=ppo:")
    with pytest.raises(ValueError, match="no such policy file"):
        agents.make("pimc:2,model=ppo:/nonexistent.npz")
    with pytest.raises(ValueError, match="model"):
        agents.make("pimc:2,model=heuristic:tight")
    with pytest.raises(ValueError, match="no file path"):
        agents.check_budget("pimc:2,rollout=ppo:/etc/passwd")
    agents.check_budget("pimc:2,rollout=ppo,model=ppo")
    assert parse_options("2,rollout=ppo:a.npz", {"worlds": 1, "rollout": ""})["rollout"] == "ppo:a.npz"


# ------------------------------------------------------------------------------ the posterior under the policy
def policy_posterior(
    rules: Rules,
    true_state: np.ndarray,
    observer: int,
    history: list[int],
    model: PolicyModel,
    tempers: tuple[float, ...] = (1.0,),
) -> dict[float, dict[tuple, float]]:
    """Every world the observer cannot rule out (as ``tests.test_sampler.enumerate_worlds`` counts them: deals,
    discards, secret declarations, reshuffled stocks), each weighed by the product of the policy's
    probabilities of the other seats' actions in it, raised to the power of each temper; for each temper, the
    weight of each ``world_key``, summed. One enumeration serves every temper: it is the costly part."""
    p = rules.params()
    n, h = rules.num_players, rules.hand_size
    obs = observer_view(true_state, p, observer)
    dealer, face = int(true_state[core.S_DEALER]), int(true_state[core.S_FACE])
    trump_card = int(p[core.P_TRUMP_CARD])
    dealers_card = trump_card == core.TRUMP_DEALERS_CARD
    cards = [c for c in rules.deck_cards() if c != face]
    sizes = [h - (1 if dealers_card and q == dealer else 0) for q in range(n)]
    order = [(dealer + 1 + k) % n for k in range(n)]
    secret = int(p[core.P_DECLARATION]) == core.DECLARATION_SIMULTANEOUS
    weights: dict[float, dict[tuple, float]] = {t: defaultdict(float) for t in tempers}
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)

    def probability(s: np.ndarray, seat: int, action: int) -> float:
        core.legal_actions(s, p, mask)
        return float(np.exp(model.log_probs(observer_view(s, p, seat)[None], mask[None])[0, action]))

    def replay(s: np.ndarray, step_no: int, log_w: float) -> None:
        if step_no == len(history):
            if np.array_equal(observer_view(s, p, observer), obs):
                key = world_key(s, n, observer)
                for t in tempers:
                    weights[t][key] += float(np.exp(t * log_w))
            return
        action, phase, seat = history[step_no], s[core.S_PHASE], int(s[core.S_CUR])
        options = [action]
        if phase in core.DRAW_PHASES and action >= core.STAY_BASE:
            core.legal_actions(s, p, mask)
            options = [a for a in np.flatnonzero(mask).tolist() if a >= core.STAY_BASE]
        elif phase == core.DECLARE and secret and seat != observer:
            options = [core.PASS, core.DECLARE_PLAY]
        for a in options:
            factor = probability(s, seat, a) if seat != observer else 1.0
            if factor == 0.0:
                continue
            log_factor = float(np.log(factor))
            k = int(s[core.S_PILE_LEN])
            probe = s.copy()
            probe[core.S_PILE : core.S_PILE + k] = np.arange(k)
            if not core.step(probe, p, a):
                continue
            if probe[core.S_RESHUFFLES] > s[core.S_RESHUFFLES]:
                slots = [int(x) for x in probe[core.S_STOCK : core.S_STOCK + k]]
                for perm in itertools.permutations(int(c) for c in s[core.S_PILE : core.S_PILE + k]):
                    u = s.copy()
                    for position, slot in enumerate(slots):
                        u[core.S_PILE + slot] = perm[position]
                    if core.step(u, p, a):
                        replay(u, step_no + 1, log_w + log_factor)
            else:
                t = s.copy()
                if core.step(t, p, a):
                    replay(t, step_no + 1, log_w + log_factor)

    def hands(pool: list[int], k: int) -> Any:
        if k == n:
            yield []
            return
        for chosen in itertools.combinations(pool, sizes[order[k]]):
            for tail in hands([c for c in pool if c not in chosen], k + 1):
                yield [list(chosen), *tail]

    stock_size = rules.deck_size - n * h - (1 if trump_card in (core.TRUMP_SEPARATE, core.TRUMP_DEALER_MAY_TAKE) else 0)
    for dealt in hands(cards, 0):
        rest = [c for c in cards if all(c not in hand for hand in dealt)]
        by_seat = dict(zip(order, dealt, strict=True))
        for stock in itertools.permutations(rest, stock_size) if len(rest) == stock_size else []:
            deck = [
                face if dealers_card and q == dealer and j == h - 1 else sorted(by_seat[q])[j]
                for j in range(h)
                for q in order
            ]
            if face >= 0 and not dealers_card and trump_card != core.TRUMP_NAMED:
                deck.append(face)
            s = core.new_state()
            core.start_episode(s, p, np.asarray(deck + list(stock), dtype=np.int64), dealer, 0, 12345)
            # the others saw the deal's number and pot, as the sampler's worlds show them
            s[core.S_POT], s[core.S_DEAL_NO] = true_state[core.S_POT], true_state[core.S_DEAL_NO]
            replay(s, 0, 0.0)
    return {t: dict(w) for t, w in weights.items()}


# two small decks of tests/test_sampler.py (each enumeration takes about a minute on the shared machine), and the
# first again with the weights tempered (the posterior of the policy's probabilities raised to the power 0.5)
POSTERIOR_CASES = [(*case, 1.0) for case in SMALL[:2]] + [(*SMALL[0], 0.5)]
# the enumerations, each done once for every temper its case is tested at
_POSTERIORS: dict[tuple[str, int, int], dict[float, dict[tuple, float]]] = {}


def cached_posterior(
    name: str, seed: int, k: int, rules: Rules, s: np.ndarray, seat: int, history: list[int], model: PolicyModel
) -> dict[float, dict[tuple, float]]:
    if (name, seed, k) not in _POSTERIORS:
        tempers = tuple(sorted({c[3] for c in POSTERIOR_CASES if c[0] == name and c[2] == seed}))
        _POSTERIORS[name, seed, k] = policy_posterior(rules, s, seat, history, model, tempers)
    return _POSTERIORS[name, seed, k]


@pytest.mark.parametrize(
    ("name", "options", "seed", "temper"), POSTERIOR_CASES, ids=[f"{c[0]}-{c[2]}-temper{c[3]}" for c in POSTERIOR_CASES]
)
def test_policy_weighted_worlds_follow_the_posterior(
    name: str, options: dict[str, Any], seed: int, temper: float
) -> None:
    model = PolicyModel("ppo")
    checked = 0
    for k, (rules, s, seat, history) in enumerate(small_positions(name, options, seed, per_kind=1)):
        obs = observer_view(s, rules.params(), seat)
        sampler = WorldSampler(obs)
        decisions = [e for e, (_, q, _) in enumerate(sampler.events) if q != 0]
        if not decisions:
            continue  # nobody else has decided: the worlds stay uniform (tests/test_sampler.py)
        posterior = cached_posterior(name, seed, k, rules, s, seat, history, model)[temper]
        total = sum(posterior.values())
        # a surviving proposal is one history of its world: its weight is at most the world's (the sum over them)
        rng = np.random.default_rng(k)
        drawn = sampler.sample(400, seed=rng, until=decisions[0])
        states = np.ascontiguousarray(drawn.states)
        log_w = _policy_log_weights(
            states, sampler.params, decisions[0], sampler.events, drawn.discards, model, rng, sampler.record.pot, obs
        )
        assert np.isfinite(log_w).any(), "some proposals must survive"
        for w, lw in zip(states, log_w, strict=True):
            if np.isfinite(lw):
                assert temper * lw <= np.log(posterior[world_key(w, rules.num_players, 0)]) + 1e-4  # float32 logits
        # the resampled worlds follow the posterior: 5 independent draws of 400
        seen: Counter = Counter()
        for r in range(5):
            rng = np.random.default_rng(100 * k + r)
            worlds = policy_worlds(sampler, obs, 400, rng, model, oversample=32, temper=temper)
            seen.update(world_key(w, rules.num_players, 0) for w in worlds)
        assert set(seen) <= set(posterior)
        keys = [key for key in posterior if posterior[key] / total * 2000 >= 1e-9]
        p_value = chi_square_p_value([seen[key] for key in keys], [2000 * posterior[key] / total for key in keys])
        assert p_value > 1e-4, f"weighted worlds differ from the posterior (p = {p_value:.2e}, {len(keys)} worlds)"
        checked += 1
    assert checked
