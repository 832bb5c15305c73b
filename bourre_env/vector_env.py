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
Observation space   ``Box(0, high, (num_envs, 1174), float32)``: each table's learner observation
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

A player may also have ``act_game(game, rows) -> actions``: it is then given the ``BatchGame`` and the rows
where it is to act instead of their observations, and decides for each row's current seat from the state
itself (compiled code that reads only what that seat may know, as ``observation.observe_with`` does). The
env builds no observation for such a player: ``agents.batched_players.BatchedHeuristicPlayer`` takes this
path, one compiled call that observes and decides row by row in a buffer that stays in cache.

Opponent pool
-------------
With ``opponent_weights``, ``opponents`` is a pool rather than one player per seat: at the start of every
deal each other seat of each table draws the member that plays it for that deal, member ``i`` with chance
``opponent_weights[i] / sum(opponent_weights)``, from a generator seeded by ``opponent_seed`` and reseeded
by ``reset(seed=...)``. ``set_opponents(opponents, opponent_weights)`` replaces the pool (or the players) from
the next deal on (deals under way finish with the members they drew); self-play adds snapshots this way.
Each member is still called once per round with every row where it was drawn to act.

Arguments
---------
``num_envs``: tables. ``opponents``: who plays the other seats: one player for every other seat, or a
list with one per other seat in clockwise order from the learner's left, or with ``opponent_weights``
(one weight >= 0 per member, positive sum) a pool the seats draw from when a table's episode begins (every deal when
an episode is one deal; a session's players sit for all of its deals, as at a real table). Each is a batched player, a
spec string built by ``agent_factory(spec, opponent_seed + k)`` (the ``k``-th distinct one), or a
per-seat agent (``act(obs_dict) -> int``, or a callable), which is wrapped to act row by row: one
Python call per row, correct but slow, meant for agents without a batched form (search agents) and
warned about. Pass ``agent_factory=agents.batched_players.make_batched`` to get batched players from
spec strings; ``agents.make`` builds per-seat agents, which work through that slow path.
``learner_seat``: ``"rotate"`` (default: each table's seats in turn, one episode each, starting at a
seat drawn from the seeded generator), ``"random"`` (drawn each episode), or a seat (always that one).
``threads``: numba threads that step the tables and build the observations (``BatchGame(threads=...)``, up
to ``NUMBA_NUM_THREADS``; ``"auto"``: the cores this process may use; default 1), each on a contiguous share of the
rows of a call (of at least ``batch.ROWS_PER_THREAD``); a batched player that decides from the state (the heuristic)
uses the game's threads too. The results are those of one thread, decision for decision. While other busy
processes leave fewer cores than threads, the calls run on one thread (``bourre_env.threads``): the speed falls
with the cores taken, not by the slowest thread of every call.
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
from numba import njit, prange

from bourre_env import batch, core, limits, observation
from bourre_env.batch import BatchGame

__all__ = ["BourreVectorEnv", "BatchedPlayer", "PerRowPlayer"]


@runtime_checkable
class BatchedPlayer(Protocol):
    """Plays every row it is given: ``(k, OBS_SIZE)`` float32 observations, ``(k, NUM_ACTIONS)`` int8 masks and
    the ``k`` table indices; returns ``k`` integer actions."""

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray: ...


def _plays_from_state(player: Any) -> bool:
    """Whether ``player`` decides from the game's state rows (``act_game``), so that no observation is built."""
    return callable(getattr(player, "act_game", None))


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
def _refused_row(states: np.ndarray, p: np.ndarray, rows: np.ndarray, actions: np.ndarray, scratch: np.ndarray) -> int:
    """The index (into ``rows``) of the first action the rules refuse, else -1."""
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    for i in range(rows.shape[0]):
        if not batch._accepts(states[rows[i]], p, actions[i], mask, scratch[rows[i]]):
            return i
    return -1


@njit(cache=True)
def _step_accepted_rows(
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
    dealt: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """Step each of ``rows`` by its action (accepted by ``_refused_row``), adding the learner's chips to ``rewards``
    and setting ``dealt`` where a new deal (of the episode, or of a new one) begins. Returns -1, or ``-2 - i`` when
    row ``rows[i]`` ended a second episode within one step (which the rules rule out: the learner decides in every
    deal)."""
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
            dealt[b] = True
        settled[:] = 0.0
        outcome = batch._after_move(s, p, rngs[b], template, settled, scratch[b])
        rewards[b] += settled[seats[b]]
        if outcome != batch._GOING_ON:
            if ended[b]:
                return -2 - i
            ended[b] = True
            truncated[b] = outcome == batch._TRUNCATED
    return -1


# With threads, the rows are cut into one contiguous share per thread and each share runs the one-thread kernel:
# the rows are distinct tables, which share nothing but the read-only params and deck template, and each draws
# from its own random stream, so the results are those of one thread (as in ``bourre_env.batch``).
@njit(cache=True, parallel=True)
def _step_rows_threads(
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
    dealt: np.ndarray,
    scratch: np.ndarray,
    chunks: int,
) -> int:
    """``_refused_row`` then ``_step_accepted_rows`` on ``chunks`` threads, all or nothing as one thread: every share
    is checked before any steps; the first refused index (into ``rows``), else the stepping's code."""
    n = rows.shape[0]
    found = np.full(chunks, -1, dtype=np.int64)
    for c in prange(chunks):
        lo, hi = batch.chunk_bounds(c, chunks, n)
        r = _refused_row(states, p, rows[lo:hi], actions[lo:hi], scratch)
        if r >= 0:
            found[c] = lo + r
    for c in range(chunks):  # the first refused row, as one thread would report it
        if found[c] >= 0:
            return int(found[c])
    for c in prange(chunks):
        lo, hi = batch.chunk_bounds(c, chunks, n)
        r = _step_accepted_rows(
            states,
            p,
            rngs,
            template,
            rows[lo:hi],
            actions[lo:hi],
            seats,
            rewards,
            ended,
            truncated,
            final_obs,
            final_pot,
            dealt,
            scratch,
        )
        if r < -1:
            found[c] = -2 - (lo + (-2 - r))
    for c in range(chunks):
        if found[c] < -1:
            return int(found[c])
    return -1


@njit(cache=True, parallel=True)
def _observe_rows_threads(
    states: np.ndarray,
    p: np.ndarray,
    rows: np.ndarray,
    obs: np.ndarray,
    masks: np.ndarray,
    scratch: np.ndarray,
    chunks: int,
) -> None:
    for c in prange(chunks):
        lo, hi = batch.chunk_bounds(c, chunks, rows.shape[0])
        _observe_rows(states, p, rows[lo:hi], obs[lo:hi], masks[lo:hi], scratch)


class BourreVectorEnv(gymnasium.vector.VectorEnv[np.ndarray, np.ndarray, np.ndarray]):
    """``num_envs`` tables of Bourré with one learner seat each, over one ``BatchGame`` (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        num_envs: int,
        opponents: Any = None,
        *,
        opponent_weights: Sequence[float] | None = None,
        learner_seat: str | int = "rotate",
        agent_factory: Callable[[str, int | None], Any] | None = None,
        opponent_seed: int = 0,
        threads: int | str = 1,
        **rule_options: Any,
    ) -> None:
        self.game = BatchGame(num_envs, seed=0, threads=threads, **rule_options)
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
        self._draw_rng = np.random.default_rng([self._opponent_seed, 2])
        # who plays each relative seat (1, 2, ...) of each table in its current deal: an index into self._members
        self._drawn = np.zeros((self.num_envs, self.num_players), dtype=np.int64)
        self._members: list[BatchedPlayer] = []
        self._started = False
        self.set_opponents(opponents, opponent_weights)
        self.single_observation_space = spaces.Box(*limits.observation_bounds(self.rules), dtype=np.float32)
        self.single_action_space = spaces.Discrete(core.NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        b = self.num_envs
        self.seats = np.zeros(b, dtype=np.int64)
        self._rotation = np.zeros(b, dtype=np.int64)
        self._masks = np.zeros((b, core.NUM_ACTIONS), dtype=np.int8)
        self._final_obs = np.zeros((b, observation.OBS_SIZE), dtype=np.float32)
        self._final_pot = np.zeros(b, dtype=np.int64)
        self._dealt = np.zeros(b, dtype=np.bool_)
        self._all_rows = np.arange(b, dtype=np.int64)

    # ------------------------------------------------------------------ opponents
    def _is_seat(self, seat: Any) -> bool:
        return isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and bool(0 <= seat < self.num_players)

    def set_opponents(self, opponents: Any, opponent_weights: Sequence[float] | None = None) -> None:
        """The players of the other seats from each table's next episode on (its next deal, when an episode is one
        deal): one per seat, or a pool drawn from with ``opponent_weights`` (see the module docstring); the episodes
        under way keep the players they have."""
        if opponents is None:
            raise ValueError("opponents: give a batched player, a spec string, or a list of them")
        given = list(opponents) if isinstance(opponents, Sequence) and not isinstance(opponents, str) else [opponents]
        n_other = self.num_players - 1
        if opponent_weights is None:
            if len(given) == 1:
                given = given * n_other
            if len(given) != n_other:
                raise ValueError(f"opponents: expected 1 or {n_other} players (one per other seat), got {len(given)}")
            weights = None
        else:
            weights = np.asarray(opponent_weights, dtype=np.float64)
            if weights.shape != (len(given),) or not np.isfinite(weights).all():
                raise ValueError(
                    f"opponent_weights: expected one finite weight per pool member ({len(given)}), "
                    f"got {list(opponent_weights)!r}"
                )
            if (weights < 0).any() or weights.sum() <= 0:
                raise ValueError(f"opponent_weights: expected weights >= 0 with a positive sum, got {weights.tolist()}")
        old = self._members if self._started else []
        built = {id(p): p for p in old}  # a player kept from the earlier opponents is not built again
        players: list[BatchedPlayer] = []
        for p in given:
            if id(p) not in built:
                built[id(p)] = self._build(p, len(built))
            players.append(built[id(p)])
        members = list({id(p): p for p in players}.values())  # one call per distinct player
        if old:  # the episodes under way keep the players they drew: those stay members until the episodes end
            in_play = (old[i] for i in np.unique(self._drawn[:, 1:]))
            members += [p for p in in_play if all(p is not m for m in members)]
            index = {id(m): i for i, m in enumerate(members)}
            self._drawn = np.asarray([index.get(id(p), 0) for p in old], dtype=np.int64)[self._drawn]
        index = {id(m): i for i, m in enumerate(members)}
        self.opponents = players
        self._members = members
        self._player_index = np.asarray([index[id(p)] for p in players], dtype=np.int64)
        self._pool_cdf = None if weights is None else np.cumsum(weights / weights.sum())

    def _draw(self, rows: np.ndarray) -> None:
        """Who plays each other seat of ``rows``, just dealt: drawn for the tables whose episode begins, kept for
        the later deals of a session."""
        rows = rows[self.game.states[rows, core.S_DEAL_NO] == 0]
        if self._pool_cdf is None:  # one player per seat, from the learner's left: relative seats 1, 2, ...
            self._drawn[rows, 1:] = self._player_index
            return
        u = self._draw_rng.random((rows.shape[0], self.num_players - 1))
        picks = np.minimum(np.searchsorted(self._pool_cdf, u, side="right"), self._pool_cdf.shape[0] - 1)
        self._drawn[rows, 1:] = self._player_index[picks]

    def _build(self, player: Any, k: int) -> BatchedPlayer:
        if isinstance(player, str):
            if self._agent_factory is None:
                raise ValueError(f"opponent spec {player!r} needs agent_factory (agents.batched_players.make_batched)")
            player = self._agent_factory(player, self._opponent_seed + k)
        if callable(getattr(player, "act_batch", None)) or _plays_from_state(player):
            return player  # type: ignore[no-any-return]
        warnings.warn(
            f"opponent {player!r} has no act_batch: it is called once per row (slow); "
            f"agents.batched_players.make_batched builds batched players",
            stacklevel=3,
        )
        return PerRowPlayer(player)

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
        if self.closed:
            raise gymnasium.error.ClosedEnvironmentError("reset: the vector env is closed; make a new one")
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
            self._draw_rng = np.random.default_rng([int(seed), self._opponent_seed, 2])
        else:
            self.game.reset()
        self._new_seats(self._all_rows, None if seat is None else int(seat))
        self._draw(self._all_rows)
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        ended = np.zeros(self.num_envs, dtype=np.bool_)
        self._play_opponents(rewards, ended, np.zeros(self.num_envs, dtype=np.bool_))
        if ended.any() or rewards.any():  # cannot happen: the learner decides in every deal's draw phase
            raise RuntimeError("an episode went on without the learner's first decision")
        self._started = True
        obs = self._observe()
        return obs, self._infos()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self.closed:
            raise gymnasium.error.ClosedEnvironmentError("step: the vector env is closed; make a new one")
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
        arrays = (
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
            self._dealt,
            g.scratch,
        )
        chunks = batch.row_chunks(g.threads, rows.shape[0])
        if chunks > 1:
            with batch.on_threads(chunks):
                bad = _step_rows_threads(*arrays, chunks)
        else:  # all or nothing: every action checked before any table moves
            bad = _refused_row(g.states, g.params, rows, actions, g.scratch)
            if bad < 0:
                bad = _step_accepted_rows(*arrays)
        if bad >= 0:
            row = int(rows[bad])
            legal = np.flatnonzero(g.legal_masks()[row]).tolist()
            raise ValueError(
                f"illegal action {int(actions[bad])} from the {who} at table {row} (seat "
                f"{int(g.states[row, core.S_CUR])}); legal: {legal}"
            )
        if bad < -1:
            raise RuntimeError(f"table {int(rows[-2 - bad])}: two episodes ended within one step")
        if self._dealt.any():
            dealt = np.flatnonzero(self._dealt)
            self._dealt[dealt] = False
            self._draw(dealt)

    def _play_opponents(self, rewards: np.ndarray, ended: np.ndarray, truncated: np.ndarray) -> None:
        """Opponents act, one call per kind of player per round, until the learner is to act at every table."""
        g = self.game
        n = self.num_players
        pending = np.flatnonzero(g.states[:, core.S_CUR] != self.seats)
        while pending.size:
            k = pending.shape[0]
            if len(self._members) == 1:  # every seat one player: no gather
                actions = self._act(self._members[0], pending)
            else:
                who = self._drawn[pending, (g.states[pending, core.S_CUR] - self.seats[pending]) % n]
                actions = np.empty(k, dtype=np.int64)
                for m, player in enumerate(self._members):
                    sel = np.flatnonzero(who == m)
                    if sel.size:
                        actions[sel] = self._act(player, pending[sel])
            # a new episode's learner seat is only known once its table was dealt anew, inside _step
            was_ended = ended[pending]
            self._step(pending, actions, rewards, ended, truncated, "opponent")
            newly = pending[ended[pending] & ~was_ended]
            if newly.size:
                self._new_seats(newly)
            pending = pending[g.states[pending, core.S_CUR] != self.seats[pending]]

    def _act(self, player: BatchedPlayer, rows: np.ndarray) -> np.ndarray:
        """``player``'s actions at ``rows``: from the state rows, or from their observations built here."""
        g = self.game
        if _plays_from_state(player):
            return self._checked(player, player.act_game(g, rows), rows.shape[0])  # type: ignore[attr-defined]
        k = rows.shape[0]
        obs = np.empty((k, observation.OBS_SIZE), dtype=np.float32)
        masks = np.empty((k, core.NUM_ACTIONS), dtype=np.int8)
        self._observe_into(rows, obs, masks)
        return self._checked(player, player.act_batch(obs, masks, rows), k)

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
        self._observe_into(self._all_rows, obs, self._masks)
        return obs

    def _observe_into(self, rows: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> None:
        """The observations and masks of the seats to act at ``rows``, on the game's threads."""
        g = self.game
        chunks = batch.row_chunks(g.threads, rows.shape[0])
        if chunks > 1:
            with batch.on_threads(chunks):
                _observe_rows_threads(g.states, g.params, rows, obs, masks, g.scratch, chunks)
        else:
            _observe_rows(g.states, g.params, rows, obs, masks, g.scratch)

    def _infos(self) -> dict[str, Any]:
        return {"action_mask": self._masks.astype(np.bool_), "learner_seat": self.seats.copy()}

    def action_masks(self) -> np.ndarray:
        """Each table's learner mask for its next decision, ``(num_envs, NUM_ACTIONS)`` bool."""
        return self._masks.astype(np.bool_)

    def close_extras(self, **kwargs: Any) -> None:
        pass
