"""Bourré for one learner at many tables: a Gymnasium 1.x ``VectorEnv`` over one ``BatchGame``.

``num_envs`` tables are rows of one ``BatchGame``. At each table one seat is the *learner*; the other seats
are played inside ``reset`` and ``step`` by *batched players*: each kind of player is called once per round
of opponent moves with every row where it is to act, never once per seat. The learner sees what
``BourreSingleAgentEnv`` shows it (its seat's observation and mask) and receives its own reward, including
a deal that ends on another seat's move; ``tests/test_vector_env.py`` holds the two to the same
observations, masks and rewards on the same decks.

>>> import agents.batched_players, bourre_env
>>> env = bourre_env.BourreVectorEnv(num_envs=1024, num_players=5, opponents="heuristic",
...                                  agent_factory=agents.batched_players.make_batched)
>>> obs, infos = env.reset(seed=0)                     # obs: (1024, 1174) float32
>>> masks = env.action_masks()                         # (1024, 117) bool, also infos["action_mask"]
>>> obs, rewards, terminated, truncated, infos = env.step(masks.argmax(axis=1))

=================== =====================================================================
Observation space   ``Box(-1, inf, (num_envs, 1174), float32)``: each table's learner observation
Action space        ``MultiDiscrete([117] * num_envs)``: the AEC action table (``bourre_env.bourre_v0``)
Action mask         ``action_masks()`` and ``infos["action_mask"]``: ``(num_envs, 117)`` bool
Reward              each learner's chips won or lost since its previous action (0 until a deal ends)
Terminated          a table's episode (``deals_per_episode`` deals) ended with this step
Truncated           a deal left more than ``POT_BOUND`` chips in the pot with deals to go
Autoreset           ``AutoresetMode.SAME_STEP`` (``metadata["autoreset_mode"]``)
=================== =====================================================================

Autoreset
---------
A table whose episode ends is dealt anew within the same ``step`` (``BatchGame`` restarts a row at
once): the returned observation and mask are the new episode's first learner decision, while the
reward, ``terminated`` and ``truncated`` are the ended episode's. ``infos["final_obs"]`` holds the
learner's observation of the ended episode's last state (rows where ``infos["_final_obs"]``);
``infos["final_info"]`` holds ``learner_seat`` for those rows, and ``pot`` where truncated. Every
action given to ``step`` is therefore a real decision: there is no reset step to skip.

Batched players
---------------
A batched player is any object with ``act_batch(observations, masks, rows) -> actions``
(``BatchedPlayer``): ``observations`` float32 ``(k, OBS_SIZE)`` and ``masks`` int8 ``(k, NUM_ACTIONS)``
of the ``k`` rows where it is to act, ``rows`` int64 ``(k,)`` the tables they belong to (for a player
that keeps per-table state); it returns ``k`` integer actions. ``agents.batched_players`` holds the
heuristic, random and policy-file players, and ``make_batched(spec, seed)`` builds them from spec strings.

Arguments
---------
``num_envs``: tables. ``opponents``: who plays the other seats: one player for every other seat, or a
list with one per other seat in clockwise order from the learner's left. Each is a batched player, a
spec string built by ``agent_factory(spec, opponent_seed + k)`` (the ``k``-th distinct one), or a
per-seat agent (``act(obs_dict) -> int``, or a callable), which is wrapped to act row by row: one
Python call per row, correct but slow, meant for agents without a batched form (search agents) and
warned about. Pass ``agent_factory=agents.batched_players.make_batched`` to get batched players from
spec strings; ``agents.make`` builds per-seat agents, which work through that slow path.
``learner_seat``: ``"rotate"`` (default: each table's seats in turn, one episode each, starting at a
seat drawn from the seeded generator), ``"random"`` (drawn each episode), or a seat (always that one).
Every other keyword is a rule option (``num_players=5``, ``deals_per_episode=3``, ``rules="standard"``...).
``reset(seed=None)``: a seed reseeds every table's deck stream and the learner-seat draws; ``None``
continues them. ``options`` may hold ``"learner_seat"`` (a seat for every table's next episode).

Illegal learner or player actions raise ``ValueError``; the learner's are checked before any table moves.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from numba import njit

from bourre_env import batch, core, observation
from bourre_env.batch import BatchGame

__all__ = ["BourreVectorEnv", "BatchedPlayer", "PerRowPlayer"]


@runtime_checkable
class BatchedPlayer(Protocol):
    """Plays every row it is given: ``(k, OBS_SIZE)`` float32 observations, ``(k, NUM_ACTIONS)`` int8 masks and
    the ``k`` table indices; returns ``k`` integer actions."""

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray: ...


class PerRowPlayer:
    """A per-seat agent (``act(obs_dict) -> int`` or a callable) as a batched player: one Python call per row."""

    def __init__(self, agent: Any) -> None:
        act = getattr(agent, "act", None)
        if not callable(act) and not callable(agent):
            raise TypeError(
                f"opponent {agent!r}: expected act_batch(observations, masks, rows), act(obs) -> int "
                f"or a callable obs -> int"
            )
        self.agent = agent
        self._act: Callable[[dict[str, np.ndarray]], Any] = act if callable(act) else agent

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
        out = np.empty(rows.shape[0], dtype=np.int64)
        for i in range(rows.shape[0]):
            a = self._act({"observation": observations[i], "action_mask": masks[i]})
            if isinstance(a, np.ndarray) and a.size == 1 and a.dtype.kind in "iu":
                a = a.reshape(()).item()
            if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
                raise ValueError(f"opponent {self.agent!r} returned {a!r}; expected an integer action id")
            out[i] = a
        return out

    def __repr__(self) -> str:
        return f"PerRowPlayer({self.agent!r})"


@njit(cache=True)
def _observe_rows(
    states: np.ndarray, p: np.ndarray, rows: np.ndarray, obs: np.ndarray, masks: np.ndarray, scratch: np.ndarray
) -> None:
    for i in range(rows.shape[0]):
        b = rows[i]
        observation.observe_with(states[b], p, states[b, core.S_CUR], obs[i], masks[i], scratch[b])


@njit(cache=True)
def _step_rows(
    states: np.ndarray,
    p: np.ndarray,
    rngs: np.ndarray,
    template: np.ndarray,
    rows: np.ndarray,
    actions: np.ndarray,
    seats: np.ndarray,
    rewards: np.ndarray,
    ended: np.ndarray,
    truncated: np.ndarray,
    final_obs: np.ndarray,
    final_pot: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """``BatchGame.step`` for the given rows only, all or nothing, adding the learner's chips to ``rewards``.

    Returns the index (into ``rows``) of the first illegal action, having changed nothing, -1 when every row
    stepped, or ``-2 - i`` when row ``rows[i]`` ended a second episode within one step (which the rules rule out:
    the learner decides in every deal)."""
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    for i in range(rows.shape[0]):
        if not batch._accepts(states[rows[i]], p, actions[i], mask, scratch[rows[i]]):
            return i
    settled = np.zeros(p[core.P_NUM_PLAYERS], dtype=np.float32)
    for i in range(rows.shape[0]):
        b = rows[i]
        s = states[b]
        core.step_with(s, p, actions[i], scratch[b])
        phase = s[core.S_PHASE]
        if phase == core.DEAL_OVER or phase == core.GAME_OVER:
            # the learner's last view in case the episode ends here: _after_move deals the row anew at once
            observation.encode_with(s, p, seats[b], final_obs[b], scratch[b])
            final_pot[b] = s[core.S_POT]
        settled[:] = 0.0
        outcome = batch._after_move(s, p, rngs[b], template, settled, scratch[b])
        rewards[b] += settled[seats[b]]
        if outcome != batch._GOING_ON:
            if ended[b]:
                return -2 - i
            ended[b] = True
            truncated[b] = outcome == batch._TRUNCATED
    return -1


class BourreVectorEnv(gymnasium.vector.VectorEnv[np.ndarray, np.ndarray, np.ndarray]):
    """``num_envs`` tables of Bourré with one learner seat each, over one ``BatchGame`` (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        num_envs: int,
        opponents: Any = None,
        *,
        learner_seat: str | int = "rotate",
        agent_factory: Callable[[str, int | None], Any] | None = None,
        opponent_seed: int = 0,
        **rule_options: Any,
    ) -> None:
        self.game = BatchGame(num_envs, seed=0, **rule_options)
        self.num_envs = self.game.batch_size
        self.rules = self.game.rules
        self.num_players = self.game.num_players
        if learner_seat not in ("rotate", "random") and not self._is_seat(learner_seat):
            raise ValueError(
                f"learner_seat: expected 'rotate', 'random' or a seat in 0..{self.num_players - 1}, "
                f"got {learner_seat!r}"
            )
        self.learner_seat_mode = learner_seat
        if isinstance(opponent_seed, bool) or not isinstance(opponent_seed, (int, np.integer)) or opponent_seed < 0:
            raise ValueError(f"opponent_seed: expected an integer >= 0, got {opponent_seed!r}")
        self._agent_factory = agent_factory
        self._opponent_seed = int(opponent_seed)
        self.opponents = self._build_opponents(opponents)
        self.single_observation_space = spaces.Box(
            low=-1.0, high=np.inf, shape=(observation.OBS_SIZE,), dtype=np.float32
        )
        self.single_action_space = spaces.Discrete(core.NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        b = self.num_envs
        self.seats = np.zeros(b, dtype=np.int64)
        self._rotation = np.zeros(b, dtype=np.int64)
        self._masks = np.zeros((b, core.NUM_ACTIONS), dtype=np.int8)
        self._final_obs = np.zeros((b, observation.OBS_SIZE), dtype=np.float32)
        self._final_pot = np.zeros(b, dtype=np.int64)
        self._all_rows = np.arange(b, dtype=np.int64)
        self._started = False

    # ------------------------------------------------------------------ opponents
    def _is_seat(self, seat: Any) -> bool:
        return isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and bool(0 <= seat < self.num_players)

    def _build_opponents(self, opponents: Any) -> list[BatchedPlayer]:
        n_other = self.num_players - 1
        if opponents is None:
            raise ValueError("opponents: give a batched player, a spec string, or a list of them")
        given = list(opponents) if isinstance(opponents, Sequence) and not isinstance(opponents, str) else [opponents]
        if len(given) == 1:
            given = given * n_other
        if len(given) != n_other:
            raise ValueError(f"opponents: expected 1 or {n_other} players (one per other seat), got {len(given)}")
        built: dict[int, BatchedPlayer] = {}  # one object per distinct argument: one call per kind of player
        players = []
        for p in given:
            if id(p) not in built:
                built[id(p)] = self._build(p, len(built))
            players.append(built[id(p)])
        return players

    def _build(self, player: Any, k: int) -> BatchedPlayer:
        if isinstance(player, str):
            if self._agent_factory is None:
                raise ValueError(f"opponent spec {player!r} needs agent_factory (agents.batched_players.make_batched)")
            player = self._agent_factory(player, self._opponent_seed + k)
        if callable(getattr(player, "act_batch", None)):
            return player  # type: ignore[no-any-return]
        warnings.warn(
            f"opponent {player!r} has no act_batch: it is called once per row (slow); "
            f"agents.batched_players.make_batched builds batched players",
            stacklevel=3,
        )
        return PerRowPlayer(player)

    def _groups(self) -> list[tuple[BatchedPlayer, np.ndarray]]:
        """Each distinct player with the relative seats (1, 2, ...) it plays."""
        out: dict[int, tuple[BatchedPlayer, list[int]]] = {}
        for rel, p in enumerate(self.opponents, start=1):
            out.setdefault(id(p), (p, []))[1].append(rel)
        return [(p, np.asarray(rels, dtype=np.int64)) for p, rels in out.values()]

    # ------------------------------------------------------------------ episodes
    def _new_seats(self, rows: np.ndarray, seat: int | None = None) -> None:
        if seat is not None:
            self.seats[rows] = seat
        elif self.learner_seat_mode == "rotate":
            self.seats[rows] = self._rotation[rows]
            self._rotation[rows] = (self._rotation[rows] + 1) % self.num_players
        elif self.learner_seat_mode == "random":
            self.seats[rows] = self.np_random.integers(self.num_players, size=rows.shape[0])
        else:
            self.seats[rows] = int(self.learner_seat_mode)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise ValueError(f"seed: one integer seeds every table (their streams derive from it), got {seed!r}")
        options = dict(options or {})
        seat = options.pop("learner_seat", None)
        if options:
            raise ValueError(f"reset options: unknown key(s) {sorted(options)}; known: 'learner_seat'")
        if seat is not None and not self._is_seat(seat):
            raise ValueError(f"reset options: learner_seat must be a seat in 0..{self.num_players - 1}, got {seat!r}")
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(int(seed))
            self.game.seed(int(seed))
            self._rotation[:] = self.np_random.integers(self.num_players, size=self.num_envs)
        else:
            self.game.reset()
        self._new_seats(self._all_rows, None if seat is None else int(seat))
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        ended = np.zeros(self.num_envs, dtype=np.bool_)
        self._play_opponents(rewards, ended, np.zeros(self.num_envs, dtype=np.bool_))
        if ended.any() or rewards.any():  # cannot happen: the learner decides in every deal's draw phase
            raise RuntimeError("an episode went on without the learner's first decision")
        self._started = True
        obs = self._observe()
        return obs, self._infos()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._started:
            raise RuntimeError("step() before reset()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype == np.bool_ or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(
                f"actions: expected {self.num_envs} integer action ids, got shape {acts.shape} and dtype {acts.dtype}"
            )
        acts = acts.astype(np.int64, copy=False)
        b = self.num_envs
        rewards = np.zeros(b, dtype=np.float32)
        ended = np.zeros(b, dtype=np.bool_)
        truncated = np.zeros(b, dtype=np.bool_)
        old_seats = self.seats.copy()
        self._final_obs = np.zeros((b, observation.OBS_SIZE), dtype=np.float32)  # handed out in infos: fresh each step
        self._step(self._all_rows, acts, rewards, ended, truncated, "learner")
        if ended.any():
            self._new_seats(np.flatnonzero(ended))
        self._play_opponents(rewards, ended, truncated)
        obs = self._observe()
        infos = self._infos()
        if ended.any():
            infos["final_obs"] = self._final_obs
            infos["_final_obs"] = ended.copy()
            infos["final_info"] = {
                "learner_seat": old_seats,
                "_learner_seat": ended.copy(),
                "pot": np.where(truncated, self._final_pot, 0),
                "_pot": truncated.copy(),
            }
            infos["_final_info"] = ended.copy()
        return obs, rewards, ended & ~truncated, truncated, infos

    def _step(
        self,
        rows: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        ended: np.ndarray,
        truncated: np.ndarray,
        who: str,
    ) -> None:
        g = self.game
        bad = _step_rows(
            g.states,
            g.params,
            g._rngs,
            g._template,
            rows,
            actions,
            self.seats,
            rewards,
            ended,
            truncated,
            self._final_obs,
            self._final_pot,
            g.scratch,
        )
        if bad >= 0:
            row = int(rows[bad])
            legal = np.flatnonzero(g.legal_masks()[row]).tolist()
            raise ValueError(
                f"illegal action {int(actions[bad])} from the {who} at table {row} (seat "
                f"{int(g.states[row, core.S_CUR])}); legal: {legal}"
            )
        if bad < -1:
            raise RuntimeError(f"table {int(rows[-2 - bad])}: two episodes ended within one step")

    def _play_opponents(self, rewards: np.ndarray, ended: np.ndarray, truncated: np.ndarray) -> None:
        """Opponents act, one call per kind of player per round, until the learner is to act at every table."""
        g = self.game
        n = self.num_players
        groups = self._groups()
        pending = np.flatnonzero(g.states[:, core.S_CUR] != self.seats)
        while pending.size:
            k = pending.shape[0]
            obs = np.empty((k, observation.OBS_SIZE), dtype=np.float32)
            masks = np.empty((k, core.NUM_ACTIONS), dtype=np.int8)
            _observe_rows(g.states, g.params, pending, obs, masks, g.scratch)
            rel = (g.states[pending, core.S_CUR] - self.seats[pending]) % n
            actions = np.empty(k, dtype=np.int64)
            for player, rels in groups:
                if len(groups) == 1:  # every seat one player: no gather, no copy
                    actions[:] = self._checked(player, player.act_batch(obs, masks, pending), k)
                    continue
                sel = np.flatnonzero(np.isin(rel, rels))
                if sel.size:
                    actions[sel] = self._checked(player, player.act_batch(obs[sel], masks[sel], pending[sel]), sel.size)
            was_ended = ended.copy()
            self._step(pending, actions, rewards, ended, truncated, "opponent")
            newly = np.flatnonzero(ended & ~was_ended)
            if newly.size:
                self._new_seats(newly)
            pending = pending[g.states[pending, core.S_CUR] != self.seats[pending]]

    @staticmethod
    def _checked(player: BatchedPlayer, given: Any, k: int) -> np.ndarray:
        chosen = np.asarray(given)
        if chosen.shape != (k,) or chosen.dtype == np.bool_ or not np.issubdtype(chosen.dtype, np.integer):
            raise ValueError(
                f"opponent {player!r} returned shape {chosen.shape} and dtype {chosen.dtype}; "
                f"expected {k} integer action ids"
            )
        return chosen

    # ------------------------------------------------------------------ views
    def _observe(self) -> np.ndarray:
        obs = np.empty((self.num_envs, observation.OBS_SIZE), dtype=np.float32)  # handed out: a fresh array each step
        _observe_rows(self.game.states, self.game.params, self._all_rows, obs, self._masks, self.game.scratch)
        return obs

    def _infos(self) -> dict[str, Any]:
        return {"action_mask": self._masks.astype(np.bool_), "learner_seat": self.seats.copy()}

    def action_masks(self) -> np.ndarray:
        """Each table's learner mask for its next decision, ``(num_envs, NUM_ACTIONS)`` bool."""
        return self._masks.astype(np.bool_)

    def close_extras(self, **kwargs: Any) -> None:
        pass
