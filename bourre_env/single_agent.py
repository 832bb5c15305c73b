"""Bourré for one learner: a Gymnasium single-agent view over the ``bourre_v0`` AEC environment.

One seat per episode is the *learner*; every other seat is played inside ``reset`` and ``step``
by opponent policies. The learner sees exactly what its seat sees in the AEC env and receives
its own reward only, including a reward that arrives when a deal ends on an opponent's move.

>>> import agents, bourre_env
>>> from bourre_env.single_agent import BourreSingleAgentEnv
>>> env = BourreSingleAgentEnv(opponents="heuristic", agent_factory=agents.make, num_players=4)
>>> obs, info = env.reset(seed=0)
>>> action = int(env.action_masks().nonzero()[0][0])
>>> obs, reward, terminated, truncated, info = env.step(action)

=================== =====================================================================
Observation space   ``Box(0, high, (1174,), float32)``: the AEC ``observation`` vector of the learner
Action space        ``Discrete(117)``: the AEC action table (``bourre_env.bourre_v0``)
Action mask         ``action_masks()``: ``(117,)`` bool, the learner's AEC mask (sb3-contrib convention)
Reward              the learner's chips won or lost since its previous action (0 until a deal ends)
Terminated          when the episode (``deals_per_episode`` deals) ends
Truncated           when a deal leaves more than ``POT_BOUND`` chips in the pot with deals to go
=================== =====================================================================

Truncation is the AEC env's (see "Pot bound" in ``bourre_env.bourre_v0``): the deal's reward is
paid, ``truncated`` is True and ``info`` adds ``"truncation_reason": "pot_bound"`` and ``"pot"``.

Arguments
---------
``opponents``: who plays the other seats. One policy used for every other seat, or a list with
one policy per other seat, in clockwise order from the learner's left (the learner's relative
seats 1, 2, ...). A policy is an object with ``act(obs_dict) -> int`` (an ``agents`` agent), a
callable ``obs_dict -> int`` (for example a frozen learned policy), or an agent spec string
(``"random"``, ``"heuristic:tight"``) built by ``agent_factory(spec, seed)``; ``obs_dict`` is the
dict the AEC env gives the acting seat (``observation`` and ``action_mask``). Opponents with a
``reset()`` method have it called at the start of every deal. One object given for several
seats is shared by them (mind agents with memory). An opponent's action must be an integer
action id (a Python or numpy integer, or a one-element integer array): anything else, a float
such as ``53.9`` or a bool, raises ``ValueError`` naming the seat.
``agent_factory``: builds spec strings, normally ``agents.make``. This module does not import
``agents`` (the environment package sits below the agents in the import graph), so spec
strings need it.
``opponent_seed``: the ``k``-th spec string (``k = 0, 1, ...``) is built with seed ``opponent_seed + k``.
``learner_seat``: ``"rotate"`` (default): seats in turn, one episode each; a seeded ``reset``
restarts the cycle at a seat drawn from the seeded generator, so ``reset(seed=s)`` is
reproducible and a single seed at the start still visits every seat in turn. ``"random"``: a
seat drawn from the env's seeded generator each episode. An int: that seat always.
``render_mode``: ``None`` or ``"ansi"`` (the AEC env's table text, seen by the seat to act).
Every other keyword is a rule option of ``bourre_env.raw_env`` (``num_players=5``,
``deals_per_episode=3``, ``rules="standard"``...).

``reset(seed=None, options=None)``: ``options`` may hold ``"learner_seat"`` (a seat for this
episode only) and the AEC env's ``"deck"``, ``"dealer"`` and ``"pot"``. The AEC env is reset
with the same seed, and the learner-seat draws come from this env's own generator, so a game
here deals exactly the cards of ``bourre_env.raw_env(...).reset(seed=seed)``.
``set_opponents(opponents)``: new opponents from the next ``reset`` on (for opponent pools).
``info``: ``{"learner_seat": seat}``.
``aec``: the AEC env inside. It is privileged (every hand, the stock, the seeded generator: see
"Privileged access" in ``bourre_env.bourre_v0``); a learner reads only what ``reset`` and ``step`` return.

``on_illegal``: what an illegal learner action does. ``"raise"`` (default): ``ValueError``, as in the AEC env,
nothing changed. ``"random"``: a legal action drawn uniformly from this env's seeded generator is played
instead, and ``info["illegal_action"]`` holds the illegal one (what masked environments offer learners that
sample from the whole action space). Gymnasium's ``check_env`` steps with ``action_space.sample()``, which
ignores masks: it passes with ``on_illegal="random"``. An action that is not an integer raises in both modes.

``gymnasium.make("bourre_env/Bourre-v0", opponents="heuristic", num_players=5)`` builds this env (the id is
registered on ``import bourre_env``; ``ENV_ID``); without an ``agent_factory``, spec strings are built by the
factory an installed package declares (``AGENT_FACTORY_GROUP``: ``agents.make`` in this distribution). The
registered default is ``opponents="heuristic"``: every other seat the hand-written heuristic, seeded
``opponent_seed + k``. Deals where the learner passed are played out by the opponents inside ``step``;
with ``deals_per_episode > 1`` the learner decides at least once (draw or pass) in every deal.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from bourre_env import core
from bourre_env.actions import as_action_id
from bourre_env.bourre_v0 import raw_env

ON_ILLEGAL = ("raise", "random")
"""What an illegal learner action does (``on_illegal``): raise ``ValueError``, or play a legal action drawn uniformly
from the env's seeded generator instead, the illegal one reported in ``info["illegal_action"]``."""
AGENT_FACTORY_GROUP = "bourre_env.agent_factory"
"""The entry-point group where an installed package offers the factory of opponent specs (this distribution's
``agents.make``), so that ``gymnasium.make`` builds ``opponents="heuristic"`` without an ``agent_factory``."""
ENV_ID = "bourre_env/Bourre-v0"
"""The Gymnasium id of this env (registered on ``import bourre_env``): ``gymnasium.make(ENV_ID, opponents=...)``."""

ObsDict = dict[str, np.ndarray]


def installed_agent_factory() -> Callable[[str, int | None], Policy] | None:
    """The factory of opponent specs an installed package declares (``AGENT_FACTORY_GROUP``), loaded on demand;
    None where there is none. Looked up by name, not imported: this package sits below the agents."""
    for entry in importlib.metadata.entry_points(group=AGENT_FACTORY_GROUP):
        factory: Callable[[str, int | None], Policy] = entry.load()
        return factory
    return None


Policy = Any  # an object with act(obs_dict) -> int, or a callable obs_dict -> int
OpponentsArg = Any  # a policy, a spec string, or a sequence of them (one per other seat)


class BourreSingleAgentEnv(gymnasium.Env[np.ndarray, np.int64]):
    """One learner seat of Bourré, the other seats played by opponent policies (see the module docstring)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        opponents: OpponentsArg = None,
        *,
        learner_seat: str | int = "rotate",
        agent_factory: Callable[[str, int | None], Policy] | None = None,
        opponent_seed: int = 0,
        render_mode: str | None = None,
        on_illegal: str = "raise",
        **rule_options: Any,
    ) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode: expected None or 'ansi', got {render_mode!r}")
        if on_illegal not in ON_ILLEGAL:
            raise ValueError(f"on_illegal: expected one of {ON_ILLEGAL}, got {on_illegal!r}")
        self.on_illegal = on_illegal
        self.render_mode = render_mode
        self.aec = raw_env(render_mode=render_mode, **rule_options)
        self.num_players = self.aec.rules.num_players
        if learner_seat not in ("rotate", "random") and not self._is_seat(learner_seat):
            raise ValueError(
                f"learner_seat: expected 'rotate', 'random' or a seat in 0..{self.num_players - 1}, "
                f"got {learner_seat!r}"
            )
        self.learner_seat_mode = learner_seat
        self.observation_space = self.aec.observation_spaces[self.aec.possible_agents[0]]["observation"]
        self.action_space = spaces.Discrete(core.NUM_ACTIONS)
        self._agent_factory = agent_factory
        if isinstance(opponent_seed, bool) or not isinstance(opponent_seed, (int, np.integer)) or opponent_seed < 0:
            raise ValueError(f"opponent_seed: expected an integer >= 0, got {opponent_seed!r}")
        # a numpy integer would keep its width in opponent_seed + k (np.int8(127) + 1 overflows)
        self._opponent_seed = int(opponent_seed)
        self._opponents: list[Policy] = []
        self._pending_opponents: list[Policy] | None = None
        self.set_opponents(opponents)
        self._opponents = self._pending_opponents or []
        self._pending_opponents = None
        self.seat = 0
        self._rotation = 0
        self._deals_done = -1
        self._done = True
        self._truncated = False

    # ------------------------------------------------------------------ opponents
    def _is_seat(self, seat: Any) -> bool:
        return isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and bool(0 <= seat < self.num_players)

    def set_opponents(self, opponents: OpponentsArg) -> None:
        """Opponents for the episodes from the next ``reset`` on: one policy for all other seats, or one per seat."""
        n_other = self.num_players - 1
        if opponents is None:
            raise ValueError("opponents: give a policy (act(obs) or callable), a spec string, or a list of them")
        given = list(opponents) if isinstance(opponents, Sequence) and not isinstance(opponents, str) else [opponents]
        if len(given) == 1:
            given = given * n_other
        if len(given) != n_other:
            raise ValueError(f"opponents: expected 1 or {n_other} policies (one per other seat), got {len(given)}")
        built: dict[int, Policy] = {}  # one object per distinct argument: a shared spec builds one agent
        policies: list[Policy] = []
        for p in given:
            if id(p) not in built:
                built[id(p)] = self._build(p, len(built))
            policies.append(built[id(p)])
        self._pending_opponents = policies

    def _build(self, policy: Policy, k: int) -> Policy:
        if isinstance(policy, str):
            if self._agent_factory is None:
                self._agent_factory = installed_agent_factory()
            if self._agent_factory is None:
                raise ValueError(f"opponent spec {policy!r} needs agent_factory (for example agents.make)")
            policy = self._agent_factory(policy, self._opponent_seed + k)
        if not callable(getattr(policy, "act", None)) and not callable(policy):
            raise TypeError(f"opponent {policy!r}: expected an object with act(obs) -> int or a callable obs -> int")
        return policy

    @property
    def opponents(self) -> list[Policy]:
        """The opponents of the current episode, for the learner's relative seats 1, 2, ... in order."""
        return list(self._opponents)

    def _opponent_for(self, seat: int) -> Policy:
        return self._opponents[(seat - self.seat) % self.num_players - 1]

    def _opponent_act(self, seat: int, obs: ObsDict) -> int:
        policy = self._opponent_for(seat)
        act = getattr(policy, "act", None)
        answer = act(obs) if callable(act) else policy(obs)
        action = as_action_id(answer)
        if action is None:
            raise ValueError(f"opponent at seat {seat} ({policy!r}) returned {answer!r}; expected an integer action id")
        return action

    def _reset_opponents_if_new_deal(self) -> None:
        deals_done = int(self.aec.state_vector[core.S_DEALS_DONE])
        if deals_done != self._deals_done:
            self._deals_done = deals_done
            seen: set[int] = set()
            for p in self._opponents:
                reset = getattr(p, "reset", None)
                if id(p) not in seen and callable(reset):
                    seen.add(id(p))
                    reset()

    # ------------------------------------------------------------------ episode
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        if self._pending_opponents is not None:
            self._opponents, self._pending_opponents = self._pending_opponents, None
        n = self.num_players
        seat = options.pop("learner_seat", None)
        if seed is not None:
            self._rotation = int(self.np_random.integers(n))
        if seat is not None:
            if not self._is_seat(seat):
                raise ValueError(f"reset options: learner_seat must be a seat in 0..{n - 1}, got {seat!r}")
        elif self.learner_seat_mode == "rotate":
            seat = self._rotation
            self._rotation = (self._rotation + 1) % n
        elif self.learner_seat_mode == "random":
            seat = int(self.np_random.integers(n))
        else:
            seat = self.learner_seat_mode
        self.seat = int(seat)
        self.learner = self.aec.possible_agents[self.seat]
        self.aec.reset(seed=seed, options=options or None)
        self._deals_done = -1
        self._done = False
        self._truncated = False
        reward = self._play_opponents()
        if self._done or reward != 0.0:  # cannot happen: the learner decides in every deal's draw phase
            raise RuntimeError("the episode went on without the learner's first decision")
        return self._observe(), {"learner_seat": self.seat}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("step() after the episode ended: call reset()")
        given = action
        action = as_action_id(given)
        if action is None:
            raise ValueError(f"action must be an action id (an integer), got {given!r}")
        info: dict[str, Any] = {"learner_seat": self.seat}
        if self.on_illegal == "random" and not (0 <= action < core.NUM_ACTIONS and self.action_masks()[action]):
            info["illegal_action"] = action
            action = int(self.np_random.choice(np.flatnonzero(self.action_masks())))
        self.aec.step(action)  # raises ValueError for an illegal action, nothing changed
        reward = float(self.aec.rewards[self.learner]) + self._play_opponents()
        if self._truncated:
            info.update(self.aec.infos[self.learner])
        return self._observe(), reward, self._done and not self._truncated, self._truncated, info

    def _play_opponents(self) -> float:
        """Opponents act until the learner must act or the episode ends; the learner's reward meanwhile."""
        aec = self.aec
        s = aec.state_vector
        reward = 0.0
        while True:
            if aec.terminations[self.learner] or aec.truncations[self.learner]:
                self._done = True
                self._truncated = bool(aec.truncations[self.learner])
                return reward
            self._reset_opponents_if_new_deal()
            cur = int(s[core.S_CUR])
            if cur == self.seat:
                return reward
            agent = aec.possible_agents[cur]
            aec.step(self._opponent_act(cur, aec.observe(agent)))
            reward += float(aec.rewards[self.learner])

    # ------------------------------------------------------------------ views
    def _observe(self) -> np.ndarray:
        return self.aec.observe(self.learner)["observation"]

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a ``(117,)`` bool array (all ``False`` once the episode is over)."""
        return self.aec.observe(self.learner)["action_mask"].astype(bool)

    def render(self) -> str | None:  # type: ignore[override]
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()
