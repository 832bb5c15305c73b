"""``ismcts``: single-observer Information Set Monte Carlo Tree Search (Cowling, Powley and Whitehouse 2012).

One tree over the information sets of the acting seat (the observer): a node is what the observer has seen
since the decision (its own actions and what the others' actions showed: a card played, a pass, the number
of cards drawn), an edge at the observer's nodes is one of its actions. Every iteration draws a
determinization, a world the observer cannot rule out (``bourre_env.sampler``, weighed by the rollout policy
as the model of the others' earlier decisions as in ``pimc``, ``agents.search.inference``), and walks it down the
tree:

* at the observer's nodes, among the actions legal in this world, an untried one is tried (expansion), else
  the one with the best upper confidence bound, ``mean + c * sqrt(ln(available) / visits)``, where
  ``available`` counts the visits to the node in which the action was legal (the subset-armed bandit of
  ISMCTS);
* the other players act as the rollout policy would (the same model as in the rollouts), and the walk follows
  the edge of what the observer sees of their action;

then the world is played to the end of the deal with the rollout policy (``agents.search.rollout``) and the chips
the observer made, in pots (the pot at the decision), are added along the path. Iterations run in batches:
the batch's walks share the policy's calls and one batched rollout, and a walk that takes an edge counts its
visit at once, so that the next walks of the batch spread out. The action most visited at the root is played.

The draw offers up to 32 discard sets: as in ``pimc`` only pass and the ``draws`` most promising ones by the
heuristic's order are searched, at the root and deeper.

Specs for ``agents.make``: ``ismcts`` (128 iterations, up to 32 proposals per determinization),
``ismcts:ITERATIONS``, and options after commas:
``ismcts:512,rollout=random,ms=20,c=0.7,batch=16,draws=4,infer=32``; ``rollout``, ``model``, ``temper`` and
``sample`` as in ``pimc`` (``rollout=ppo``: the policy file plays the rollouts and the other seats in the tree).
With ``ms`` iterations stop when the budget is spent (after at least one batch), which makes decisions depend on the
machine's speed; without it the agent is deterministic given its seed. Rules: from the observation, or
``ISMCTSAgent(rules=...)``.

Specs from an untrusted source (the web server's page) are held to ``LIMITS`` by ``agents.check_budget``:
at most 1024 iterations, ``batch`` 64, ``infer`` 32, ``draws`` 8 and ``ms`` 1000. ``agents.make`` itself takes
any budget.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from numba import njit

from agents.base import Observation, legal_actions
from agents.heuristic import HeuristicAgent
from agents.search.inference import public_outcome
from agents.search.pimc import WorldModel, draw_candidates, parse_options
from agents.search.rollout import Rollout
from bourre_env import core, observation, view
from bourre_env.core.rules import Rules
from bourre_env.observation import O_PHASE, OBS_SIZE
from bourre_env.sampler import WorldSampler

__all__ = ["ISMCTSAgent", "make_ismcts", "DEFAULTS", "LIMITS"]

POOL_AHEAD = 64
"""Determinizations drawn at a time under a time budget (without one, all of them are drawn at once)."""


class _Node:
    """An information set of the observer: statistics of its actions and the nodes below."""

    __slots__ = ("visits", "total", "available", "children")

    def __init__(self) -> None:
        self.visits: dict[int, int] = {}
        self.total: dict[int, float] = {}
        self.available: dict[int, int] = {}
        self.children: dict[Any, _Node] = {}

    def child(self, key: Any) -> _Node:
        node = self.children.get(key)
        if node is None:
            node = self.children[key] = _Node()
        return node


@njit(cache=True)
def _settled_for(s: np.ndarray) -> bool:
    """The deal is over for the observer (seat 0): settled, or the observer passed for good."""
    phase = view.phase_of(s)
    if phase == core.DEAL_OVER or phase == core.GAME_OVER:
        return True
    return view.decision_of(s, 0) == core.PASSED and phase != core.DECLARE


class ISMCTSAgent:
    """Single-observer IS-MCTS with UCT at the observer's information sets (module docstring)."""

    def __init__(
        self,
        iterations: int = 128,
        seed: int | None = 0,
        rollout: str = "heuristic",
        c: float = 0.7,
        batch: int = 16,
        draws: int = 4,
        ms: float | None = None,
        infer: int = 32,
        rules: Rules | None = None,
        name: str = "ismcts",
        model: str = "heuristic",
        sample: bool = False,
        temper: float = 1.0,
    ) -> None:
        for key, value in (("iterations", iterations), ("batch", batch), ("draws", draws)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{key}: expected an integer >= 1, got {value!r}")
        if not c >= 0:
            raise ValueError(f"c: expected an exploration constant >= 0, got {c!r}")
        if ms is not None and not ms > 0:
            raise ValueError(f"ms: expected a positive time budget in milliseconds, got {ms!r}")
        self.name = name
        self.iterations = int(iterations)
        self.c = float(c)
        self.batch = int(batch)
        self.draws = int(draws)
        self.ms = ms
        self.rules = rules
        seq = np.random.SeedSequence(0 if seed is None else seed)
        self._rng = np.random.default_rng(seq.spawn(1)[0])
        self.rollout = Rollout(rollout, seed=int(seq.generate_state(1)[0]), sample=sample)
        self.world_model = WorldModel(model, infer, self.rollout, temper)
        self.infer = self.world_model.infer
        self._heuristic = HeuristicAgent(seed=int(seq.generate_state(2)[1]))
        self.last_visits: dict[int, int] = {}  # root visits of the last search (diagnostics)
        self.last_iterations = 0

    def reset(self) -> None:
        """Nothing carries from one deal to the next (each decision grows a fresh tree)."""

    def _options(self, vector: np.ndarray, mask: np.ndarray) -> list[int]:
        """The observer's actions to search at a node: every legal one, the draws pruned as in ``pimc``."""
        legal = np.flatnonzero(mask).tolist()
        stays = [a for a in legal if a >= core.STAY_BASE]
        if vector[O_PHASE] < 0.5 or len(stays) <= self.draws:
            return legal
        preferred = self._heuristic.act({"observation": vector, "action_mask": mask})
        return ([core.PASS] if mask[core.PASS] else []) + draw_candidates(vector, mask, preferred, self.draws)

    def _worlds(self, sampler: WorldSampler, vector: np.ndarray, count: int) -> np.ndarray:
        return self.world_model.draw(sampler, vector, count, self._rng)

    def _select(self, node: _Node, options: list[int]) -> tuple[int, bool]:
        """An untried option at random, else the best upper confidence bound; True when it is a new edge."""
        for a in options:
            node.available[a] = node.available.get(a, 0) + 1
        untried = [a for a in options if node.visits.get(a, 0) == 0]
        if untried:
            return untried[int(self._rng.integers(len(untried)))], True
        best, best_score = options[0], -math.inf
        for a in options:
            n = node.visits[a]
            score = node.total[a] / n + self.c * math.sqrt(math.log(node.available[a]) / n)
            if score > best_score:
                best, best_score = a, score
        return best, False

    def act(self, observation_: Observation) -> int:
        legal = legal_actions(observation_)
        if legal.size == 1:
            return int(legal[0])
        vector = np.asarray(observation_["observation"], dtype=np.float32)
        mask = np.asarray(observation_["action_mask"], dtype=np.int8)
        if vector.shape != (OBS_SIZE,):
            raise ValueError(f"observation: expected {OBS_SIZE} entries, got {vector.shape}")
        start = time.perf_counter()
        root_options = self._options(vector, mask)
        if len(root_options) == 1:
            return int(root_options[0])
        sampler = WorldSampler(vector, rules=self.rules)
        p = sampler.params
        scale = max(1.0, float(sampler.record.pot))
        root = _Node()
        obs_row = np.zeros((1, OBS_SIZE), dtype=np.float32)
        mask_row = np.zeros((1, core.NUM_ACTIONS), dtype=np.int8)
        done = 0
        pool = np.zeros((0, core.STATE_SIZE), dtype=np.int64)
        while done < self.iterations:
            size = min(self.batch, self.iterations - done)
            if pool.shape[0] < size:
                # determinizations come in larger draws than a batch: weighing them costs per draw
                ahead = self.iterations - done if self.ms is None else max(size, POOL_AHEAD)
                pool = np.concatenate([pool, self._worlds(sampler, vector, min(ahead, self.iterations - done))])
            states = np.ascontiguousarray(pool[:size])
            pool = pool[size:]
            base = states[:, view.rewards_column(0)].astype(np.float64)
            scratch = np.zeros((size, core.SCRATCH_SIZE), dtype=np.int64)  # each world's cinch memo
            paths: list[list[tuple[_Node, int]]] = [[] for _ in range(size)]
            nodes = [root] * size
            walking = [True] * size
            while any(walking):
                others = []
                for b in range(size):
                    if not walking[b]:
                        continue
                    s = states[b]
                    if _settled_for(s):
                        walking[b] = False
                        continue
                    if view.to_act(s) != 0:
                        others.append(b)
                        continue
                    observation.observe_with(s, p, 0, obs_row[0], mask_row[0], scratch[b])
                    options = root_options if nodes[b] is root else self._options(obs_row[0], mask_row[0])
                    a, new = self._select(nodes[b], options)
                    node = nodes[b]
                    node.visits[a] = node.visits.get(a, 0) + 1  # counted now: the rest of the batch spreads out
                    node.total.setdefault(a, 0.0)
                    paths[b].append((node, a))
                    if not core.step_with(s, p, a, scratch[b]):
                        raise RuntimeError(f"ismcts: the observer's action {a} is illegal in a sampled world")
                    nodes[b] = node.child(a)
                    if new:
                        walking[b] = False
                if others:
                    rows = np.asarray(others, dtype=np.int64)
                    obs = np.zeros((rows.size, OBS_SIZE), dtype=np.float32)
                    masks = np.zeros((rows.size, core.NUM_ACTIONS), dtype=np.int8)
                    for i, b in enumerate(others):
                        observation.observe_with(states[b], p, view.to_act(states[b]), obs[i], masks[i], scratch[b])
                    answers = self.rollout.actions(obs, masks)
                    for i, b in enumerate(others):
                        s = states[b]
                        seat = view.to_act(s)
                        key = (seat, int(public_outcome(s, p, int(answers[i]))))
                        if not core.step_with(s, p, int(answers[i]), scratch[b]):
                            raise RuntimeError(f"rollout policy chose the illegal action {int(answers[i])}")
                        nodes[b] = nodes[b].child(key)
            self.rollout.run(states, p, me=0)
            gains = (states[:, view.rewards_column(0)] - base) / scale
            for b in range(size):
                for node, a in paths[b]:
                    node.total[a] += gains[b]
            done += size
            if self.ms is not None and (time.perf_counter() - start) * 1000.0 >= self.ms:
                break
        self.last_visits = dict(root.visits)
        self.last_iterations = done
        return int(max(root_options, key=lambda a: (root.visits.get(a, 0), root.total.get(a, 0.0))))


DEFAULTS: dict[str, Any] = {
    "iterations": 128,
    "rollout": "heuristic",
    "ms": None,
    "c": 0.7,
    "batch": 16,
    "draws": 4,
    "infer": 32,
    "model": "heuristic",
    "sample": False,
    "temper": 1.0,
}
LIMITS: dict[str, float] = {"iterations": 1024, "ms": 1000, "batch": 64, "draws": 8, "infer": 32}
"""The largest budgets of a spec from an untrusted source (``agents.check_budget``)."""


def make_ismcts(variant: str | None, seed: int | None) -> ISMCTSAgent:
    """``agents.make`` factory: ``ismcts``, ``ismcts:ITERATIONS``, ``ismcts:ITERATIONS,rollout=KIND,ms=MS,...``."""
    options = parse_options(variant, DEFAULTS)  # typed as the defaults are: the constructor's own keywords
    return ISMCTSAgent(seed=seed, name="ismcts" if not variant else f"ismcts:{variant}", **options)
