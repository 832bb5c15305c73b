"""Clairvoyant agents: ``pimc`` searching the true deal instead of sampled worlds. They see hidden cards.

These agents cheat by design: they measure what information is worth (``train.research.value_of_information``,
``docs/measurements.md``). ``clairvoyant`` sees every hand, the order of the stock and the seed of any reshuffle,
so its search plays out the one true world; ``clairvoyant:64,sees=hands`` sees every hand as it is at each of its
decisions but not the stock: its worlds are the true deal with the cards still to come from the stock in a
uniformly random order and a fresh reshuffle seed. Apart from the worlds they are ``pimc``
(``agents.search.pimc.PIMCAgent``): the same candidates, rollouts, gate and options.

A clairvoyant agent plays only where an evaluation hands it the deal. The observation dict an evaluation gives it
carries, beside ``observation`` and ``action_mask``, the key ``PRIVILEGED_KEY`` with a ``PrivilegedView`` (the
deck, the dealer, the reshuffle seed as dealt and every action of the deal so far); only
``train.research.value_of_information`` builds one, and only for the seats whose agent says ``sees_hidden``. An
ordinary evaluation (``bourre eval``, the ladder, ``bourre serve``) never adds it, and there a clairvoyant agent
refuses to act (``ValueError``, naming the one place it plays). They are deliberately not registered with
``agents.make``: a registered name is offered by the web table's page and played by the fair tests of every agent.

Specs (``make_clairvoyant``): ``clairvoyant`` (64 worlds, every hand and the stock), ``clairvoyant:WORLDS``, options
after commas: ``sees`` (``all`` or ``hands``), ``at``, ``keyed``, and ``pimc``'s ``rollout``, ``others``, ``draws``,
``z``, ``phases``, ``sample`` and ``infer``. With ``sees=all`` the worlds are copies of one world; they differ only in
the rollouts' random tie-breaks.

Where it sees (``at``, ``DECISIONS``): ``all`` (the default), ``none``, or decision types joined by ``+``
(``at=pass``, ``at=pass+draw``): ``trump`` (the dealer naming trump), ``pass`` (pass or play: the declaration, the
second pass, and whether to play in a draw-or-pass round), ``draw`` (which cards to discard) and ``cards`` (trick
play). At every other decision it is the fair ``pimc`` of the same options (worlds drawn from what the seat has seen,
weighed by the heuristic with ``infer`` proposals a world, 32 as ``pimc``'s default). Under the default rules the
draw-or-pass round makes both a ``pass`` and a ``draw`` decision in one action, so a view of one of them is two
searches of the same candidates: with ``at=pass`` the fair search picks the draw it would make if it played, and the
seeing search decides between that draw and passing; with ``at=draw`` the fair search decides whether to play, and
the seeing search picks the draw.

``keyed=1``: every search draws its random numbers from a generator keyed by the agent's seed and the decision's
observation, not from one stream over the deal. Two keyed agents of one seed that differ only in ``at`` then make the
same fair decision wherever a deal has come to the same point, so a paired comparison of them
(``train.research.value_of_information --decisions``) differs only in the deals where a seen decision changed an
action.

Every world is built by dealing a deck and replaying the deal's actions through the rules core (``core.step_with``),
in the frame of the searcher (it is seat 0, as in a sampled world), and is checked to give the searcher exactly
the observation it has.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import numpy as np

from agents.base import Observation, legal_actions
from agents.search.pimc import PIMCAgent, parse_options
from bourre_env import core, view
from bourre_env.observation import (
    O_PHASE,
    O_ROUND,
    ROUND_DECLARE,
    ROUND_DRAW,
    ROUND_DRAW_OR_PASS,
    ROUND_NAME_TRUMP,
    ROUND_SECOND_PASS,
)
from bourre_env.sampler import WorldSampler, observer_view

__all__ = [
    "ClairvoyantAgent",
    "DECISIONS",
    "PrivilegedView",
    "PRIVILEGED_KEY",
    "SEES",
    "DEFAULTS",
    "decision_seed",
    "decision_types",
    "is_clairvoyant",
    "make",
    "parse_at",
    "second_reshuffle_exposed",
    "hands_only_world",
    "rebuild",
    "split_draw_or_pass",
    "stock_positions",
]

PRIVILEGED_KEY = "privileged"
"""The observation dict's key that carries a ``PrivilegedView``: set only by a privileged evaluation."""

SEES = ("all", "hands")
"""What a clairvoyant agent sees: every hand and the stock (``all``), or every hand but not the stock (``hands``)."""

NAME = "clairvoyant"

DEFAULTS: dict[str, Any] = {
    "worlds": 64,
    "sees": "all",
    "rollout": "heuristic",
    "others": "",
    "draws": 4,
    "z": 0.0,
    "phases": "all",
    "sample": False,
    "infer": 32,
    "at": "all",
    "keyed": False,
}

DECISIONS = ("trump", "pass", "draw", "cards")
"""The decision types a clairvoyant agent may see at (option ``at``, module docstring), in game order."""

# the decision types of each decision round (the observation's ``decision_round`` slot)
_ROUND_TYPES = {
    ROUND_NAME_TRUMP: ("trump",),
    ROUND_DECLARE: ("pass",),
    ROUND_DRAW_OR_PASS: ("pass", "draw"),
    ROUND_DRAW: ("draw",),
    ROUND_SECOND_PASS: ("pass",),
}

# the rounds in which a card may still come from the stock
_BEFORE_THE_DRAW_ENDS = (core.NAME_TRUMP, core.DECLARE, core.DRAW_OR_PASS, core.DRAW)


@dataclasses.dataclass(frozen=True)
class PrivilegedView:
    """The deal as the table knows it, for a clairvoyant agent: ``deck`` in dealing order, ``dealer`` (absolute
    seat), ``rng`` (the reshuffle seed as dealt, ``view.rng_state_of`` of the state after the deal), ``actions``
    (every action of the deal so far, in order) and ``seat`` (the absolute seat of the agent asked to act); the
    deal starts with an empty pot."""

    deck: np.ndarray
    dealer: int
    rng: int
    actions: tuple[int, ...]
    seat: int


def is_clairvoyant(spec: str) -> bool:
    """Whether ``spec`` names a clairvoyant agent (``clairvoyant`` or ``clairvoyant:...``)."""
    return isinstance(spec, str) and spec.strip().partition(":")[0] == NAME


def parse_at(value: str) -> frozenset[str]:
    """The decision types of an ``at`` option: ``all``, ``none``, or types of ``DECISIONS`` joined by ``+``;
    ``ValueError`` naming a bad one."""
    text = value.strip() if isinstance(value, str) else ""
    if text == "all":
        return frozenset(DECISIONS)
    if text == "none":
        return frozenset()
    types = [t.strip() for t in text.split("+")]
    unknown = [t for t in types if t not in DECISIONS]
    if not text or unknown:
        raise ValueError(f"at: expected 'all', 'none' or decision types joined by '+' from {DECISIONS}, got {value!r}")
    return frozenset(types)


def decision_types(vector: np.ndarray) -> tuple[str, ...]:
    """The decision types (``DECISIONS``) that the decision of an observation vector makes: read from its ``phase``
    and ``decision_round`` fields; ``()`` when the deal is over."""
    if vector[O_PHASE + 1] > 0.5:
        return ("cards",)
    rounds = np.flatnonzero(np.asarray(vector[O_ROUND : O_ROUND + len(_ROUND_TYPES)]) > 0.5)
    return _ROUND_TYPES[int(rounds[0])] if rounds.size else ()


def rebuild(view_: PrivilegedView, params: np.ndarray, deck: np.ndarray, rng: int) -> np.ndarray:
    """The deal dealt from ``deck`` with reshuffle seed ``rng`` and replayed through ``view_.actions``, in the frame
    of ``view_.seat`` (it is seat 0, the dealer rotated); ``RuntimeError`` if the rules refuse an action."""
    n = view.num_players_of(params)
    state = np.zeros(core.STATE_SIZE, dtype=np.int64)
    core.start_episode(state, params, np.asarray(deck, dtype=np.int64), (view_.dealer - view_.seat) % n, 0, rng)
    scratch = core.new_scratch()
    for action in view_.actions:
        if not core.step_with(state, params, int(action), scratch):
            raise RuntimeError(f"clairvoyant: action {action} of the deal's record is refused on replay")
    return state


def stock_positions(view_: PrivilegedView, params: np.ndarray) -> tuple[np.ndarray, int]:
    """Where in the deck each card of the dealt stock lies, in the order the stock gives them, and the stock's
    position as dealt (``view.stock_position``)."""
    dealt = rebuild(dataclasses.replace(view_, actions=()), params, view_.deck, view_.rng)
    stock = dealt[view.stock_to_come(dealt)]
    where = {int(c): i for i, c in enumerate(np.asarray(view_.deck).tolist())}
    return np.array([where[int(c)] for c in stock], dtype=np.int64), view.stock_position(dealt)


def hands_only_world(
    view_: PrivilegedView,
    params: np.ndarray,
    truth: np.ndarray,
    rng: np.random.Generator,
    positions: tuple[np.ndarray, int] | None = None,
) -> np.ndarray:
    """One world with every hand of ``truth`` (the true deal in the searcher's frame) and the stock's cards still to
    come in a uniformly random order, with a fresh reshuffle seed; after a reshuffle, the rebuilt stock's remaining
    cards are permuted (a second reshuffle in the same deal, which needs the rebuilt stock to run out too, would
    keep its true order: ``second_reshuffle_exposed``). ``positions``: ``stock_positions`` of the deal, if known."""
    if view.reshuffles_of(truth) > 0:
        world = truth.copy()
        columns = view.stock_to_come(world)
        world[columns] = rng.permutation(world[columns])
        return world
    where, start = positions if positions is not None else stock_positions(view_, params)
    drawn = view.stock_position(truth) - start  # the cards already drawn keep their places
    deck = np.asarray(view_.deck, dtype=np.int64).copy()
    rest = where[drawn:]
    deck[rest] = deck[rng.permutation(rest)]
    return rebuild(view_, params, deck, int(rng.integers(0, 2**62)))


class ClairvoyantAgent(PIMCAgent):
    """``pimc`` whose worlds are the true deal at the decisions of ``at`` (module docstring); ``sees_hidden`` marks
    it for the evaluation."""

    sees_hidden = True

    def __init__(
        self,
        worlds: int = 64,
        seed: int | None = 0,
        sees: str = "all",
        name: str = NAME,
        at: str = "all",
        keyed: bool = False,
        infer: int = 32,
        **options: Any,
    ):
        if sees not in SEES:
            raise ValueError(f"sees: expected one of {SEES}, got {sees!r}")
        self.at = parse_at(at)
        if self.at != frozenset(DECISIONS) and options.get("z", 0.0) > 0:
            # a split draw-or-pass decision compares the two searches' means; z's default action has no place there
            raise ValueError("z: a clairvoyant agent that sees at only some decisions takes z=0")
        super().__init__(worlds=worlds, seed=seed, name=name, infer=infer, **options)
        self.sees = sees
        self.keyed = bool(keyed)
        self._seed = 0 if seed is None else int(seed)
        self._options: dict[str, Any] = {"worlds": worlds, "sees": sees, "name": name, "infer": infer, **options}
        self._view: PrivilegedView | None = None
        self._truth: np.ndarray | None = None
        self._acting = False

    def act(self, observation: Observation) -> int:
        privileged = observation.get(PRIVILEGED_KEY) if isinstance(observation, dict) else None
        if not isinstance(privileged, PrivilegedView):
            raise ValueError(
                f"{self.name} sees hidden cards and plays only where an evaluation hands it the deal "
                "(train.research.value_of_information); it is refused everywhere else"
            )
        fair = {"observation": observation["observation"], "action_mask": observation["action_mask"]}
        if legal_actions(fair).size == 1:
            return int(legal_actions(fair)[0])
        vector = np.asarray(fair["observation"], dtype=np.float32)
        types = decision_types(vector)
        seen = [t for t in types if t in self.at]
        key = decision_seed(self._seed, vector, fair["action_mask"]) if self.keyed else None
        if len(seen) == len(types) or not seen:
            return self._search(fair, privileged if seen else None, key)[0]
        # a draw-or-pass decision seen in one of its parts: both searches on the same random numbers
        key = int(self._rng.integers(2**63)) if key is None else key
        fair_action, fair_values = self._search(fair, None, key)
        _, seeing_values = self._search(fair, privileged, key)
        return split_draw_or_pass(seen[0], fair_action, fair_values, seeing_values)

    def _search(self, fair: Observation, shown: PrivilegedView | None, key: int | None) -> tuple[int, dict[int, float]]:
        """``decide`` on the true deal (``shown``) or on fair worlds (``None``), by this agent or, with ``key``, by a
        fresh agent of the same options seeded by ``key``."""
        searcher = self if key is None else ClairvoyantAgent(seed=key, **self._options)
        searcher._view, searcher._truth, searcher._acting = shown, None, True
        try:
            return searcher.decide(fair)
        finally:
            searcher._view, searcher._acting = None, False

    def draw_worlds(self, sampler: WorldSampler, target: np.ndarray, count: int) -> np.ndarray:
        """``count`` copies of the true deal (``sees=all``), or of it with the stock re-ordered (``sees=hands``), each
        checked to give the searcher the observation ``target``; at a decision it does not see, ``pimc``'s worlds."""
        if self._view is None:
            if not self._acting:
                raise RuntimeError("clairvoyant: worlds asked for outside act()")
            return super().draw_worlds(sampler, target, count)  # a decision it does not see: the fair worlds
        params = sampler.params
        if self._truth is None:
            self._truth = rebuild(self._view, params, self._view.deck, self._view.rng)
            _check(self._truth, params, target)
        truth = self._truth
        if self.sees == "all" or view.phase_of(truth) not in _BEFORE_THE_DRAW_ENDS:
            return np.repeat(truth[np.newaxis], count, axis=0)  # no card is left to come from the stock
        positions = stock_positions(self._view, params)
        worlds = np.stack([hands_only_world(self._view, params, truth, self._rng, positions) for _ in range(count)])
        for world in worlds:
            _check(world, params, target)
            for seat in range(view.num_players_of(params)):
                if view.hand_of(world, seat) != view.hand_of(truth, seat):
                    raise RuntimeError("clairvoyant: a re-ordered stock changed a hand")
        return worlds


def _check(world: np.ndarray, params: np.ndarray, target: np.ndarray) -> None:
    if not np.array_equal(observer_view(world, params, 0), np.asarray(target, dtype=np.float32)):
        raise RuntimeError("clairvoyant: the rebuilt deal does not give the searcher its observation")


def split_draw_or_pass(
    seen: str, fair_action: int, fair_values: dict[int, float], seeing_values: dict[int, float]
) -> int:
    """The action of a draw-or-pass decision seen only in its ``pass`` or its ``draw`` part, from the fair search's
    action and both searches' mean chips per candidate (the same candidates, in the same order): with ``pass`` seen,
    the fair search's best draw unless the seeing search values passing at least as much; with ``draw`` seen, pass if
    the fair search passes, else the seeing search's best draw. Ties go to the first candidate, as ``pimc``'s."""
    if not fair_values:
        return fair_action  # one candidate: nothing was searched
    stays = [a for a in fair_values if a >= core.STAY_BASE]
    if seen == "pass":
        draw = _first_best(fair_values, stays)
        if core.PASS in seeing_values and seeing_values[core.PASS] >= seeing_values[draw] - 1e-12:
            return core.PASS
        return draw
    if fair_action == core.PASS:
        return core.PASS
    return _first_best(seeing_values, stays)


def _first_best(values: dict[int, float], actions: list[int]) -> int:
    best = max(values[a] for a in actions)
    return next(a for a in actions if values[a] >= best - 1e-12)


def decision_seed(seed: int, vector: np.ndarray, mask: np.ndarray) -> int:
    """The seed of a keyed agent's search (``keyed=1``): a hash of the agent's seed and the decision's observation
    vector and mask, so that the same point of the same deal draws the same random numbers."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(int(seed).to_bytes(16, "little", signed=True))
    digest.update(np.ascontiguousarray(vector, dtype=np.float32).tobytes())
    digest.update(np.ascontiguousarray(mask, dtype=np.int8).tobytes())
    return int.from_bytes(digest.digest(), "little")


def second_reshuffle_exposed(state: np.ndarray) -> bool:
    """Whether a settled deal reshuffled its stock twice (the case ``sees=hands`` leaves in its true order)."""
    return view.reshuffles_of(state) > 1


def make(variant: str | None, seed: int | None) -> ClairvoyantAgent:
    """``clairvoyant``, ``clairvoyant:WORLDS``, ``clairvoyant:WORLDS,sees=hands,rollout=ppo,...`` (module docstring)."""
    options = parse_options(variant, DEFAULTS)
    return ClairvoyantAgent(seed=seed, name=NAME if not variant else f"{NAME}:{variant}", **options)
