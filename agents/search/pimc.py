"""``pimc``: Perfect Information Monte Carlo, the determinized search of Skat and Bridge programs.

At each decision the agent draws worlds it cannot rule out (``bourre_env.sampler.WorldSampler``: complete
hidden states consistent with its observation, uniformly), and for each candidate action plays every world
to the end of the deal with a rollout policy for every seat (``agents.search.rollout``), itself included. It takes
the action with the best mean chip result for itself. Every candidate is played out on the same worlds
(common random numbers), so the comparison between actions is not blurred by the luck of the worlds.

Candidates: every legal card in trick play; pass and every legal draw when there are few, else pass and the
``draws`` most promising draws by the heuristic's order of what to keep (trumps, then side aces, then
kings, then the rest by rank): discarding the ``j`` least valuable cards for each ``j``, nearest the
heuristic's own choice first, which is always among them. Passing needs no rollout: a player who passes
pays nothing more in the deal.

Rules: read from the observation's rule fields (``rules_from_observation``); ``PIMCAgent(rules=...)``
overrides them (the only field the observation rounds is an exotic rake).

Specs for ``agents.make``: ``pimc`` (64 worlds, 32 proposals per world), ``pimc:WORLDS``, and options after commas
(``pimc:64,rollout=random,ms=20,draws=4,infer=8``):

* ``rollout``: a kind of ``agents.search.rollout`` (the compiled heuristic by default, ``random``, or ``ppo`` /
  ``ppo:PATH``: a policy file for every seat, greedy, or drawn from its softmax with ``sample=1``);
* ``others``: ``heuristic`` to have the heuristic play the other seats of the rollouts while the searcher's own
  seat plays the ``rollout`` policy file (greedy): for a field known, or assumed, to play the heuristic; pair it
  with ``model=heuristic``. Empty (the default): the rollout policy plays every seat;
* ``model``: the model of the others' earlier decisions that weighs the worlds (``heuristic`` by default, or
  ``ppo`` / ``ppo:PATH``: the product of the policy's probabilities of their actions, raised to the power
  ``temper``, 1 by default); ``infer``: how many uniform worlds are drawn per world kept by it
  (``agents.search.inference``; 0 or 1: uniform worlds);
* ``z`` (0 by default): the rollout policy's own action is the default, replaced only by a candidate whose
  paired mean gain over it exceeds ``z`` standard errors (``PIMCAgent.decide``);
* ``phases`` (``PHASES``): search only trick play (``tricks``) or only the decisions before it
  (``decisions``); the rollout policy acts elsewhere;
* ``cut`` and ``value`` (off by default): with ``rollout=ppo``, a rollout stops when the searcher is to play a card
  ``cut`` tricks after the searched one, and the value file ``value`` (``ppo:PATH``, a file of
  ``agents.search.value``) estimates the chips it makes from there (``agents.search.value.cut_rollouts``);
* ``ms``: caps the time of a decision: worlds are played in chunks until the budget is spent (at least one
  chunk), which makes decisions depend on the machine's speed; without it the agent is deterministic given its
  seed.

Specs from an untrusted source (the web server's page) are held to ``LIMITS`` by ``agents.check_budget``:
at most 256 worlds, ``infer`` 32, ``draws`` 8 and ``ms`` 1000. ``agents.make`` itself takes any budget.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

from agents.base import Observation, legal_actions
from agents.heuristic import HeuristicAgent
from agents.heuristic.odds import KEEP_SIDE_ACE, KEEP_SIDE_KING, KEEP_TRUMP
from agents.search.inference import MODELS, model_worlds, policy_worlds
from agents.search.policy import PolicyModel
from agents.search.rollout import Rollout
from agents.search.value import ValueWeights, cut_rollouts, load_value
from bourre_env import core, view
from bourre_env.core import ACE, KING
from bourre_env.core.cards import NUM_RANKS
from bourre_env.core.rules import Rules
from bourre_env.observation import O_HAND, O_PHASE, O_TRUMP, OBS_SIZE
from bourre_env.sampler import WorldSampler

__all__ = ["PIMCAgent", "make_pimc", "parse_options", "draw_candidates", "WorldModel", "DEFAULTS", "LIMITS", "choose"]

PHASES = ("all", "tricks", "decisions")
"""Where the search searches (option ``phases``): everywhere, in trick play only, or only in the decisions before it
(naming trump, pass or play, the draw); elsewhere the rollout policy acts."""

CHUNK_WORLDS = 8
"""Worlds played per chunk under a time budget."""


@njit(cache=True)
def _apply(states: np.ndarray, p: np.ndarray, actions: np.ndarray, per: int) -> None:
    """Row ``r`` takes action ``actions[r // per]`` (the rows of one candidate are contiguous)."""
    x = np.zeros(core.SCRATCH_SIZE, dtype=np.int64)
    for r in range(states.shape[0]):
        x[:] = 0
        if not core.step_with(states[r], p, actions[r // per], x):
            raise ValueError("a candidate action is illegal in a sampled world")


def keep_values(hand: list[int], trump: int) -> list[float]:
    """The heuristic's order of what to keep at the draw (its values ``KEEP_TRUMP``, ``KEEP_SIDE_ACE``,
    ``KEEP_SIDE_KING``): trumps, side aces, side kings, then the rest by rank. Unlike the heuristic's own draw,
    every side king ranks as a king here, with or without its ace: this only orders the draws the search
    tries, and the search judges each one by its rollouts."""
    out = []
    for c in hand:
        suit, rank = divmod(c, NUM_RANKS)
        if suit == trump:
            out.append(KEEP_TRUMP + rank)
        else:
            out.append(KEEP_SIDE_ACE if rank == ACE else KEEP_SIDE_KING if rank == KING else float(rank))
    return out


def draw_candidates(vector: np.ndarray, mask: np.ndarray, preferred: int, limit: int) -> list[int]:
    """The legal draws worth searching: all when at most ``limit``, else the ``limit`` prefixes of the hand sorted by
    ``keep_values`` (discard the ``j`` least valuable cards) nearest ``preferred`` in size, ``preferred`` first."""
    stays = [a for a in np.flatnonzero(mask).tolist() if a >= core.STAY_BASE]
    if len(stays) <= limit:
        return stays
    hand = np.flatnonzero(vector[O_HAND : O_HAND + 52] > 0.5).tolist()
    trump = int(np.argmax(vector[O_TRUMP : O_TRUMP + 4]))
    values = keep_values(hand, trump)
    order = sorted(range(len(hand)), key=lambda i: (values[i], hand[i]))
    prefixes = []
    positions = 0
    for j in range(len(hand) + 1):
        if j:
            positions |= 1 << order[j - 1]
        a = core.STAY_BASE + positions
        if mask[a]:
            prefixes.append((j, a))
    size = bin(preferred - core.STAY_BASE).count("1") if preferred >= core.STAY_BASE else len(hand) // 2
    prefixes.sort(key=lambda ja: abs(ja[0] - size))
    chosen = [preferred] if preferred in stays else []
    for _, a in prefixes:
        if a not in chosen:
            chosen.append(a)
    return chosen[: max(limit, 1)]


def parse_options(
    variant: str | None, defaults: dict[str, Any], limits: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """``"64"`` or ``"64,rollout=random,ms=20"`` or ``"worlds=64"`` into options; ``ValueError`` naming a bad one,
    and one given twice (``"64,worlds=8"`` names ``worlds`` twice: the first option is the first key's). An option
    whose default is a bool takes ``0``, ``1``, ``false`` or ``true`` only.

    ``limits``: the largest value each named option may take (a budget from an untrusted spec); past it,
    ``ValueError`` names the option and its maximum."""
    options = dict(defaults)
    if not variant:
        return options
    first_key = next(iter(defaults))
    given: set[str] = set()
    for k, item in enumerate(variant.split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            if k > 0:
                raise ValueError(f"expected KEY=VALUE after the first option, got {item!r}")
            key, value = first_key, item
        key = key.strip()
        if key not in defaults:
            raise ValueError(f"unknown option {key!r}; options: {sorted(defaults)}")
        if key in given:
            raise ValueError(f"option {key} given twice in {variant!r}")
        given.add(key)
        kind = type(defaults[key]) if defaults[key] is not None else float
        if kind is bool:
            flags = {"0": False, "1": True, "false": False, "true": True}
            if value.strip().lower() not in flags:
                raise ValueError(f"option {key}: expected 0 or 1 (false or true), got {value!r}")
            options[key] = flags[value.strip().lower()]
            continue
        try:
            options[key] = kind(value.strip())
        except ValueError:
            wanted = "an integer" if kind is int else "a number" if kind is float else "a string"
            raise ValueError(f"option {key}: expected {wanted}, got {value!r}") from None
    for key, most in (limits or {}).items():
        budget: Any = options.get(key)
        # NaN compares false both ways: a NaN budget is refused along with a large one
        if budget is not None and not budget <= most:
            raise ValueError(f"option {key}: at most {most:g} in a spec from an untrusted source, got {budget!r}")
    if limits is not None:
        for key, value in options.items():
            # a policy file named by an untrusted spec would have the server read any path it can reach
            if isinstance(value, str) and ":" in value:
                raise ValueError(f"option {key}: no file path ({value!r}) in a spec from an untrusted source")
    return options


class WorldModel:
    """How a search agent draws its worlds: uniformly, weighed by the heuristic (``model_worlds``) or by a policy
    file (``policy_worlds``, its weights raised to the power ``temper``), ``infer`` uniform proposals per world kept
    (``agents.search.inference``)."""

    def __init__(self, model: str, infer: int, rollout: Rollout, temper: float = 1.0) -> None:
        if isinstance(infer, bool) or not isinstance(infer, (int, np.integer)) or infer < 0:
            raise ValueError(f"infer: expected an integer >= 0 (0: uniform worlds), got {infer!r}")
        if not (isinstance(temper, (int, float, np.integer, np.floating)) and 0.0 < float(temper) <= 1.0):
            raise ValueError(f"temper: expected a number in (0, 1] (1: the policy's exact posterior), got {temper!r}")
        if model.partition(":")[0] not in MODELS or (model != "heuristic" and not model.startswith("ppo")):
            raise ValueError(f"model: expected one of {MODELS} or 'ppo:PATH', got {model!r}")
        self.model = model
        self.infer = int(infer)
        self.temper = float(temper)
        self.policy = PolicyModel(model) if model != "heuristic" else None
        # random rollouts model nobody: their worlds stay uniform, as before policy models existed
        self.uniform = self.infer <= 1 or (self.policy is None and rollout.kind == "random")

    def draw(self, sampler: WorldSampler, target: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
        """``count`` worlds of ``sampler`` for the observation vector ``target``."""
        if self.uniform:
            return sampler.sample(count, seed=rng)
        if self.policy is not None:
            return policy_worlds(sampler, target, count, rng, self.policy, oversample=self.infer, temper=self.temper)
        return model_worlds(sampler, target, count, rng, oversample=self.infer)


class PIMCAgent:
    """Determinized Monte Carlo search over sampled worlds (module docstring)."""

    def __init__(
        self,
        worlds: int = 64,
        seed: int | None = 0,
        rollout: str = "heuristic",
        draws: int = 4,
        ms: float | None = None,
        infer: int = 32,
        rules: Rules | None = None,
        name: str = "pimc",
        model: str = "heuristic",
        sample: bool = False,
        z: float = 0.0,
        temper: float = 1.0,
        phases: str = "all",
        others: str = "",
        cut: int = 0,
        value: str = "",
    ) -> None:
        if isinstance(worlds, bool) or not isinstance(worlds, (int, np.integer)) or worlds < 1:
            raise ValueError(f"worlds: expected an integer >= 1, got {worlds!r}")
        if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 1:
            raise ValueError(f"draws: expected an integer >= 1, got {draws!r}")
        if ms is not None and not ms > 0:
            raise ValueError(f"ms: expected a positive time budget in milliseconds, got {ms!r}")
        if not (isinstance(z, (int, float, np.integer, np.floating)) and 0.0 <= float(z) < math.inf):
            raise ValueError(f"z: expected a finite number >= 0 (0: the best mean), got {z!r}")
        if phases not in PHASES:
            raise ValueError(f"phases: expected one of {PHASES}, got {phases!r}")
        if isinstance(cut, bool) or not isinstance(cut, (int, np.integer)) or cut < 0:
            raise ValueError(f"cut: expected an integer >= 0 (0: rollouts to the end of the deal), got {cut!r}")
        if bool(cut) != bool(value):
            raise ValueError("cut and value go together: cut=TRICKS,value=ppo:PATH (a value file)")
        self.name = name
        self.z = float(z)
        self.phases = phases
        self.worlds = int(worlds)
        self.draws = int(draws)
        self.ms = ms
        self.rules = rules
        seq = np.random.SeedSequence(0 if seed is None else seed)
        self._rng = np.random.default_rng(seq.spawn(1)[0])
        self.rollout = Rollout(rollout, seed=int(seq.generate_state(1)[0]), sample=sample, others=others or None)
        self.world_model = WorldModel(model, infer, self.rollout, temper)
        self.cut = int(cut)
        self.value: ValueWeights | None = None
        if value:
            if self.rollout.policy is None or self.rollout.sample or self.rollout.others is not None:
                raise ValueError(
                    "cut rollouts play a greedy policy file for every seat: rollout=ppo, no sample, no others"
                )
            self.value = load_value(value_path(value))
        self.infer = self.world_model.infer
        self._heuristic = HeuristicAgent(seed=int(seq.generate_state(2)[1]))
        self.last_values: dict[int, float] = {}  # mean chips of each candidate at the last search (diagnostics)
        self.last_worlds = 0

    def reset(self) -> None:
        """Nothing carries from one deal to the next."""

    def candidates(self, vector: np.ndarray, mask: np.ndarray, default: int | None = None) -> list[int]:
        """The actions to search: every legal one, unless the draw offers more than ``draws`` discard sets (then
        pass, the heuristic's draw and its neighbours, and ``default``, the rollout policy's own choice, if given)."""
        legal = np.flatnonzero(mask).tolist()
        stays = [a for a in legal if a >= core.STAY_BASE]
        if vector[O_PHASE] < 0.5 or len(stays) <= self.draws:
            return legal
        preferred = self._heuristic.act({"observation": vector, "action_mask": mask})
        chosen = ([core.PASS] if mask[core.PASS] else []) + draw_candidates(vector, mask, preferred, self.draws)
        if default is not None and default not in chosen:
            chosen.append(default)
        return chosen

    def draw_worlds(self, sampler: WorldSampler, target: np.ndarray, count: int) -> np.ndarray:
        """``count`` worlds: uniform (``infer`` 0 or 1, or random rollouts with the heuristic model), else weighed by
        the model of the other players' earlier decisions (``WorldModel``, ``infer`` times oversampled)."""
        return self.world_model.draw(sampler, target, count, self._rng)

    def act(self, observation: Observation) -> int:
        return self.decide(observation)[0]

    def action_values(self, observation: Observation) -> dict[int, float]:
        """The search's mean chips for each candidate action of this decision, in candidate order; ``{}`` when there
        is nothing to search: one legal action, or one candidate. Searching draws from the agent's generators
        exactly as ``act`` does (also kept in ``last_values``)."""
        return self.decide(observation)[1]

    def decide(self, observation: Observation) -> tuple[int, dict[int, float]]:
        """The action ``act`` plays and the candidates' mean chips (``action_values``) of one search.

        With ``z == 0`` the action is the first candidate of best mean. With ``z > 0`` the rollout policy's own
        action is the default, and another candidate replaces it only when its mean gain over the default, paired
        world by world, is more than ``z`` standard errors above zero: the best two candidates of a decision are
        often a few hundredths of a chip apart, far inside the noise of 64 worlds, and an argmax over noise plays
        worse than the policy the rollouts already follow."""
        legal = legal_actions(observation)
        if legal.size == 1:
            return int(legal[0]), {}
        vector = np.asarray(observation["observation"], dtype=np.float32)
        mask = np.asarray(observation["action_mask"], dtype=np.int8)
        if vector.shape != (OBS_SIZE,):
            raise ValueError(f"observation: expected {OBS_SIZE} entries, got {vector.shape}")
        start = time.perf_counter()
        in_tricks = vector[O_PHASE + 1] > 0.5
        if self.phases != "all" and in_tricks != (self.phases == "tricks"):
            return int(self.rollout.actions(vector[np.newaxis], mask[np.newaxis])[0]), {}
        default = int(self.rollout.actions(vector[np.newaxis], mask[np.newaxis])[0]) if self.z > 0 else None
        cands = self.candidates(vector, mask, default)
        if len(cands) == 1:
            return int(cands[0]), {}
        sampler = WorldSampler(vector, rules=self.rules)
        params = sampler.params
        # rows where we pass stop at once (the rollout ends when our chips for the deal are final)
        rolled = cands
        gains_of_chunks: list[np.ndarray] = []
        worlds_of_chunks: list[np.ndarray] = []
        played = 0
        while played < self.worlds:
            chunk = self.worlds - played if self.ms is None else min(CHUNK_WORLDS, self.worlds - played)
            worlds = self.draw_worlds(sampler, vector, chunk)
            worlds_of_chunks.append(worlds)
            base = worlds[:, view.rewards_column(0)].astype(np.float64)
            rows = np.repeat(worlds[np.newaxis], len(rolled), axis=0).reshape(-1, core.STATE_SIZE)
            rows = np.ascontiguousarray(rows)
            _apply(rows, params, np.asarray(rolled, dtype=np.int64), chunk)
            if self.value is not None and self.rollout.policy is not None:
                estimates, taken = cut_rollouts(rows, params, self.rollout.policy, self.value, 0, self.cut)
                self.rollout.decisions += taken
            else:
                self.rollout.run(rows, params, me=0)
                estimates = np.zeros(rows.shape[0])
            gains = (rows[:, view.rewards_column(0)] + estimates).reshape(len(rolled), chunk) - base[np.newaxis]
            gains_of_chunks.append(gains)
            played += chunk
            if self.ms is not None and (time.perf_counter() - start) * 1000.0 >= self.ms:
                break
        gains = np.concatenate(gains_of_chunks, axis=1)
        means = gains.mean(axis=1)
        values = {int(a): float(means[i]) for i, a in enumerate(rolled)}
        self.last_values = values
        self.last_worlds = played
        if default is None:
            return choose(rolled, gains, None, 0.0), dict(values)
        distinct = int(np.unique(np.concatenate(worlds_of_chunks), axis=0).shape[0])
        return choose(rolled, gains, rolled.index(default), self.z, distinct), dict(values)


def choose(candidates: list[int], gains: np.ndarray, default: int | None, z: float, distinct: int | None = None) -> int:
    """The candidate to play from ``gains`` (``(candidates, worlds)``, the same worlds for every row): the first of
    best mean; with a ``default`` row, that candidate unless the best one's paired mean gain over it exceeds ``z``
    standard errors (``PIMCAgent.decide``). ``distinct``: how many of the worlds differ (weighed worlds are drawn
    with repeats, which are no independent evidence); the standard error counts those, all worlds by default."""
    means = gains.mean(axis=1)
    best = int(np.flatnonzero(means >= means.max() - 1e-12)[0])
    if default is None or best == default:
        return int(candidates[best])
    diff = gains[best] - gains[default]
    worlds = diff.size if distinct is None else min(distinct, diff.size)
    if worlds < 2:
        return int(candidates[default])  # one world is no evidence against the policy
    spread = float(diff.std(ddof=1)) / math.sqrt(worlds)
    margin = float(diff.mean())
    # the same gain in every world is sure (as sure as the worlds); no gain at all is a tie, which goes to the default
    confident = margin > z * spread if spread > 0 else margin > 1e-12
    return int(candidates[best if confident else default])


DEFAULTS: dict[str, Any] = {
    "worlds": 64,
    "rollout": "heuristic",
    "ms": None,
    "draws": 4,
    "infer": 32,
    "model": "heuristic",
    "sample": False,
    "z": 0.0,
    "temper": 1.0,
    "phases": "all",
    "others": "",
    "cut": 0,
    "value": "",
}
LIMITS: dict[str, float] = {"worlds": 256, "ms": 1000, "draws": 8, "infer": 32}
"""The largest budgets of a spec from an untrusted source (``agents.check_budget``): about 0.3 s a decision."""


def value_path(spec: str) -> str:
    """The file of a ``value`` option: ``ppo:PATH`` (the value file fitted to a policy, ``agents.search.value``)."""
    name, sep, rest = spec.partition(":")
    if name != "ppo" or not sep or not rest:
        raise ValueError(f"value: expected 'ppo:PATH' (a value file of agents.search.value), got {spec!r}")
    return rest


def make_pimc(variant: str | None, seed: int | None) -> PIMCAgent:
    """``agents.make`` factory: ``pimc``, ``pimc:WORLDS``, ``pimc:WORLDS,rollout=KIND,ms=MS,draws=K``."""
    options = parse_options(variant, DEFAULTS)  # typed as the defaults are: the constructor's own keywords
    return PIMCAgent(seed=seed, name="pimc" if not variant else f"pimc:{variant}", **options)
