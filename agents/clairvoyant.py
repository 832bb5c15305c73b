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
after commas: ``sees`` (``all`` or ``hands``), and ``pimc``'s ``rollout``, ``others``, ``draws``, ``z``,
``phases`` and ``sample``. With ``sees=all`` the worlds are copies of one world; they differ only in the rollouts'
random tie-breaks.

Every world is built by dealing a deck and replaying the deal's actions through the rules core (``core.step_with``),
in the frame of the searcher (it is seat 0, as in a sampled world), and is checked to give the searcher exactly
the observation it has.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from agents.base import Observation
from agents.search.pimc import PIMCAgent, parse_options
from bourre_env import core, view
from bourre_env.sampler import WorldSampler, observer_view

__all__ = [
    "ClairvoyantAgent",
    "PrivilegedView",
    "PRIVILEGED_KEY",
    "SEES",
    "DEFAULTS",
    "is_clairvoyant",
    "make",
    "second_reshuffle_exposed",
    "hands_only_world",
    "rebuild",
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
    """``pimc`` whose worlds are the true deal (module docstring); ``sees_hidden`` marks it for the evaluation."""

    sees_hidden = True

    def __init__(self, worlds: int = 64, seed: int | None = 0, sees: str = "all", name: str = NAME, **options: Any):
        if sees not in SEES:
            raise ValueError(f"sees: expected one of {SEES}, got {sees!r}")
        # the world model is never asked (draw_worlds is replaced): uniform, so that no policy file is loaded
        super().__init__(worlds=worlds, seed=seed, name=name, infer=0, **options)
        self.sees = sees
        self._view: PrivilegedView | None = None
        self._truth: np.ndarray | None = None

    def act(self, observation: Observation) -> int:
        privileged = observation.get(PRIVILEGED_KEY) if isinstance(observation, dict) else None
        if not isinstance(privileged, PrivilegedView):
            raise ValueError(
                f"{self.name} sees hidden cards and plays only where an evaluation hands it the deal "
                "(train.research.value_of_information); it is refused everywhere else"
            )
        self._view = privileged
        self._truth = None
        fair = {"observation": observation["observation"], "action_mask": observation["action_mask"]}
        try:
            return self.decide(fair)[0]
        finally:
            self._view = None

    def draw_worlds(self, sampler: WorldSampler, target: np.ndarray, count: int) -> np.ndarray:
        """``count`` copies of the true deal (``sees=all``), or of it with the stock re-ordered (``sees=hands``), each
        checked to give the searcher the observation ``target``."""
        if self._view is None:
            raise RuntimeError("clairvoyant: worlds asked for outside act()")
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


def second_reshuffle_exposed(state: np.ndarray) -> bool:
    """Whether a settled deal reshuffled its stock twice (the case ``sees=hands`` leaves in its true order)."""
    return view.reshuffles_of(state) > 1


def make(variant: str | None, seed: int | None) -> ClairvoyantAgent:
    """``clairvoyant``, ``clairvoyant:WORLDS``, ``clairvoyant:WORLDS,sees=hands,rollout=ppo,...`` (module docstring)."""
    options = parse_options(variant, DEFAULTS)
    return ClairvoyantAgent(seed=seed, name=NAME if not variant else f"{NAME}:{variant}", **options)
