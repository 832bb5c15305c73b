"""Many games at once through the same compiled rules: the batch API used for training and benchmarks.

``BatchGame`` keeps ``batch_size`` independent episodes as rows of one ``int64`` array and steps
them all with one call into compiled code that runs ``core.step`` on each row: the rules are
the very functions the AEC env uses. Each row has its own splitmix64 random stream, seeded from
``seed``, that shuffles its decks and draws its dealers; an episode that ends is replaced at
once by a new one, so every row always has a player to act.

>>> g = BatchGame(batch_size=4, seed=0, num_players=5)
>>> masks = g.legal_masks()                      # (4, 117) int8, for the player to act in each row
>>> obs = g.observations()                       # (4, 1174) float32, that player's observation
>>> rewards, done = g.step(masks.argmax(axis=1))  # rewards: (4, 5) chips of the deals that ended
>>> g.truncated                                  # (4,) bool: which of the ended episodes were truncated

An episode ends *terminated* after its last deal, or *truncated* when a deal leaves more than
``bourre_env.limits.POT_BOUND`` chips in the pot (``done`` is True either way; ``truncated`` tells
them apart, for a learner that bootstraps the value of a cut-off episode). The rewards are float32
chips: exact while a payment stays below 2**24 chips, which the pot bound guarantees for every rule
set with ``renege_multiple`` up to 15.

``BatchGame(..., threads=N)`` steps the rows on ``N`` of numba's threads (up to ``NUMBA_NUM_THREADS``; ``"auto"``:
the cores this process may use), one contiguous share each, with the same results as one thread: rows share nothing
and draw from their own streams. Worth it only with cores to spare (docs/benchmarks.md); on a machine shared with
other busy processes the calls fall back to one thread while threads would be slower (``bourre_env.threads``). The
first call compiles the parallel kernels.

``states`` (and each row's random stream) is privileged: it holds every hand and the stock order.
Give learners ``observations()`` and ``legal_masks()``; read ``states`` for debugging, oracles and
critics that are meant to see everything.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import numba
import numpy as np
from numba import njit, prange

from bourre_env import core, limits, observation
from bourre_env.core.rules import Rules
from bourre_env.memory import check_fits
from bourre_env.threads import auto_threads
from bourre_env.threads import on_threads as _on_threads


@njit(cache=True)
def _shuffled_deck(template: np.ndarray, rng: np.ndarray) -> np.ndarray:
    deck = np.copy(template)  # np.copy, not .copy(): numpy's stubs type the method's result as Any
    for i in range(deck.shape[0] - 1, 0, -1):
        j = core.splitmix64(rng) % (i + 1)
        a = deck[i]
        deck[i] = deck[j]
        deck[j] = a
    return deck


@njit(cache=True)
def _new_episode(s: np.ndarray, p: np.ndarray, rng: np.ndarray, template: np.ndarray, x: np.ndarray) -> None:
    deck = _shuffled_deck(template, rng)
    dealer = core.splitmix64(rng) % p[core.P_NUM_PLAYERS]
    core.start_episode(s, p, deck, dealer, 0, core.splitmix64(rng))
    x[:] = 0  # a new game: the row's cinch memo and statistics start afresh, as the state does


@njit(cache=True)
def _reset_all(states: np.ndarray, p: np.ndarray, rngs: np.ndarray, template: np.ndarray, scratch: np.ndarray) -> None:
    for b in range(states.shape[0]):
        _new_episode(states[b], p, rngs[b], template, scratch[b])


# how a row's episode stands after a move (``_after_move``)
BYTES_PER_ROW = 8 * (core.STATE_SIZE + core.SCRATCH_SIZE + 2) + 1
"""Memory of one row of a ``BatchGame``: its state, its scratch, its random stream and seed, its truncation flag."""

_GOING_ON = 0
_TERMINATED = 1  # its last deal ended
_TRUNCATED = 2  # a deal left more than limits.POT_BOUND chips in the pot


@njit(cache=True)
def _after_move(
    s: np.ndarray, p: np.ndarray, rng: np.ndarray, template: np.ndarray, rewards: np.ndarray, x: np.ndarray
) -> int:
    """Collect a finished deal's rewards and deal on; an episode that ended (``_TERMINATED``, ``_TRUNCATED``) is
    restarted at once."""
    phase = s[core.S_PHASE]
    if phase == core.DEAL_OVER or phase == core.GAME_OVER:
        for q in range(p[core.P_NUM_PLAYERS]):
            rewards[q] += s[core.S_REWARD + q]
        if phase == core.GAME_OVER:
            _new_episode(s, p, rng, template, x)
            return _TERMINATED
        if limits.pot_passed_bound(s):
            _new_episode(s, p, rng, template, x)
            return _TRUNCATED
        core.next_deal(s, p, _shuffled_deck(template, rng), core.splitmix64(rng))
    return _GOING_ON


@njit(cache=True)
def _accepts(s: np.ndarray, p: np.ndarray, action: int, mask: np.ndarray, x: np.ndarray) -> bool:
    """Whether ``core.step`` would take ``action``: the legal mask's answer, and with ``illegal_action="renege"``
    any card of the hand in trick play (a forbidden one is played as a renege)."""
    if action < 0 or action >= core.NUM_ACTIONS:
        return False
    if s[core.S_PHASE] == core.PLAY and p[core.P_RENEGE]:
        return bool(action < core.NUM_CARDS and (s[core.S_HAND + s[core.S_CUR]] >> action) & 1 == 1)
    core.legal_actions_with(s, p, mask, x)
    return bool(mask[action] == 1)


@njit(cache=True)
def _step_all(
    states: np.ndarray,
    p: np.ndarray,
    rngs: np.ndarray,
    template: np.ndarray,
    actions: np.ndarray,
    rewards: np.ndarray,
    done: np.ndarray,
    truncated: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """Step every row, all or nothing: returns the first row whose action is illegal, having changed no row,
    else -1 with every row stepped."""
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    for b in range(states.shape[0]):
        if not _accepts(states[b], p, actions[b], mask, scratch[b]):
            return b
    for b in range(states.shape[0]):
        rewards[b, :] = 0.0
        if not core.step_with(states[b], p, actions[b], scratch[b]):
            return -2 - b  # cannot happen: _accepts said yes; reported as an internal error
        outcome = _after_move(states[b], p, rngs[b], template, rewards[b], scratch[b])
        done[b] = outcome != _GOING_ON
        truncated[b] = outcome == _TRUNCATED
    return -1


@njit(cache=True)
def _masks_all(states: np.ndarray, p: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> None:
    for b in range(states.shape[0]):
        core.legal_actions_with(states[b], p, out[b], scratch[b])


@njit(cache=True)
def _observations_all(states: np.ndarray, p: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> None:
    for b in range(states.shape[0]):
        observation.encode_with(states[b], p, states[b, core.S_CUR], out[b], scratch[b])


@njit(cache=True)
def random_move(s: np.ndarray, p: np.ndarray, rng: np.ndarray, mask: np.ndarray, x: np.ndarray) -> None:
    """Play a uniformly random legal action of the player to act in state ``s``, in compiled code.

    ``p``: the rules' parameters (``Rules.params()``); ``rng``: a one-element int64 splitmix64 stream, advanced
    by one draw; ``mask``: an int8 buffer of ``core.NUM_ACTIONS`` to work in; ``x``: the row's scratch
    (``core.SCRATCH_SIZE``, its cinch memo). In trick play the card is drawn from the legal-card bitmask
    without building the action mask (the common case, and the fast one); both draws are uniform over the
    legal actions. A finished deal is left as it is: dealing on is the caller's business (``after_move``).
    """
    if s[core.S_PHASE] == core.PLAY:
        legal = core.play_legal_with(s, p, s[core.S_CUR], True, x)
        pick = legal
        for _ in range(core.splitmix64(rng) % core.popcount(legal)):
            pick &= pick - 1
        core.play_card(s, p, core.lowest_card(pick), legal)
        return
    core.legal_actions_with(s, p, mask, x)
    count = 0
    for a in range(mask.shape[0]):
        count += mask[a]
    k = core.splitmix64(rng) % count
    for a in range(mask.shape[0]):
        if mask[a]:
            if k == 0:
                core.step_with(s, p, a, x)
                return
            k -= 1


@njit(cache=True)
def _random_play(
    states: np.ndarray,
    p: np.ndarray,
    rngs: np.ndarray,
    template: np.ndarray,
    decisions: int,
    with_observations: bool,
    obs: np.ndarray,
    chips: np.ndarray,
    scratch: np.ndarray,
) -> int:
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    rewards = np.zeros(p[core.P_NUM_PLAYERS], dtype=np.float64)
    total = 0
    for b in range(states.shape[0]):
        s = states[b]
        x = scratch[b]
        for _ in range(decisions):
            if with_observations:
                observation.encode_with(s, p, s[core.S_CUR], obs, x)
            random_move(s, p, rngs[b], mask, x)
            total += 1
            rewards[:] = 0.0
            _after_move(s, p, rngs[b], template, rewards, x)
            chips[:] += rewards
    return total


# tests/test_cinch_speed.py imports the old private name
_random_move = random_move


# ---------------------------------------------------------------------------------------------------- threads
# With ``threads`` > 1 the tables are cut into one contiguous chunk per thread and each chunk runs the one-thread
# kernel above (or its two halves, for step): rows share nothing but the read-only params and deck template, and
# each row draws from its own random stream, so the results are those of one thread, bit for bit. The one-thread
# path never enters these kernels: they compile (slowly: parallel=True) on the first call that uses threads.


@njit(cache=True)
def chunk_bounds(c: int, chunks: int, rows: int) -> tuple[int, int]:
    """The rows ``[lo, hi)`` of share ``c`` when ``rows`` rows are cut into ``chunks`` contiguous shares (compiled:
    called inside parallel kernels, here and in ``agents.heuristic.batch``)."""
    return c * rows // chunks, (c + 1) * rows // chunks


@njit(cache=True)
def _first_refused(states: np.ndarray, p: np.ndarray, actions: np.ndarray, scratch: np.ndarray) -> int:
    """The first row whose action ``_accepts`` refuses, else -1 (the check half of ``_step_all``)."""
    mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
    for b in range(states.shape[0]):
        if not _accepts(states[b], p, actions[b], mask, scratch[b]):
            return b
    return -1


@njit(cache=True)
def _step_accepted(
    states: np.ndarray,
    p: np.ndarray,
    rngs: np.ndarray,
    template: np.ndarray,
    actions: np.ndarray,
    rewards: np.ndarray,
    done: np.ndarray,
    truncated: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """The stepping half of ``_step_all``, on rows whose actions were accepted: -1, or ``-2 - b`` if ``core.step``
    refused row ``b`` after all. (``_step_all`` keeps its own copy of this loop: its speed is left untouched.)"""
    for b in range(states.shape[0]):
        rewards[b, :] = 0.0
        if not core.step_with(states[b], p, actions[b], scratch[b]):
            return -2 - b
        outcome = _after_move(states[b], p, rngs[b], template, rewards[b], scratch[b])
        done[b] = outcome != _GOING_ON
        truncated[b] = outcome == _TRUNCATED
    return -1


@njit(cache=True, parallel=True)
def _step_all_threads(
    states: np.ndarray,
    p: np.ndarray,
    rngs: np.ndarray,
    template: np.ndarray,
    actions: np.ndarray,
    rewards: np.ndarray,
    done: np.ndarray,
    truncated: np.ndarray,
    scratch: np.ndarray,
    chunks: int,
) -> int:
    """``_step_all`` on ``chunks`` threads, all or nothing as well: every chunk is checked before any is stepped."""
    rows = states.shape[0]
    found = np.full(chunks, -1, dtype=np.int64)
    for c in prange(chunks):
        lo, hi = chunk_bounds(c, chunks, rows)
        r = _first_refused(states[lo:hi], p, actions[lo:hi], scratch[lo:hi])
        if r >= 0:
            found[c] = lo + r
    for c in range(chunks):  # the lowest refused row, as one thread would report it
        if found[c] >= 0:
            return int(found[c])
    for c in prange(chunks):
        lo, hi = chunk_bounds(c, chunks, rows)
        r = _step_accepted(
            states[lo:hi],
            p,
            rngs[lo:hi],
            template,
            actions[lo:hi],
            rewards[lo:hi],
            done[lo:hi],
            truncated[lo:hi],
            scratch[lo:hi],
        )
        if r < -1:
            found[c] = -2 - (lo + (-2 - r))
    for c in range(chunks):
        if found[c] < -1:
            return int(found[c])
    return -1


@njit(cache=True, parallel=True)
def _masks_threads(states: np.ndarray, p: np.ndarray, out: np.ndarray, scratch: np.ndarray, chunks: int) -> None:
    for c in prange(chunks):
        lo, hi = chunk_bounds(c, chunks, states.shape[0])
        _masks_all(states[lo:hi], p, out[lo:hi], scratch[lo:hi])


@njit(cache=True, parallel=True)
def _observations_threads(states: np.ndarray, p: np.ndarray, out: np.ndarray, scratch: np.ndarray, chunks: int) -> None:
    for c in prange(chunks):
        lo, hi = chunk_bounds(c, chunks, states.shape[0])
        _observations_all(states[lo:hi], p, out[lo:hi], scratch[lo:hi])


@njit(cache=True, parallel=True)
def _random_play_threads(
    states: np.ndarray,
    p: np.ndarray,
    rngs: np.ndarray,
    template: np.ndarray,
    decisions: int,
    with_observations: bool,
    chips: np.ndarray,
    scratch: np.ndarray,
    chunks: int,
) -> int:
    """``_random_play`` on ``chunks`` threads; the chips are whole numbers, so their sum is exact in any order."""
    rows = states.shape[0]
    totals = np.zeros(chunks, dtype=np.int64)
    # each chunk adds to its own chips at every decision: rows 128 bytes apart or more, never on one cache line
    chunk_chips = np.zeros((chunks, chips.shape[0] + 16), dtype=np.float64)
    for c in prange(chunks):
        lo, hi = chunk_bounds(c, chunks, rows)
        obs = np.zeros(observation.OBS_SIZE, dtype=np.float32)  # each thread's own encoding buffer
        totals[c] = _random_play(
            states[lo:hi],
            p,
            rngs[lo:hi],
            template,
            decisions,
            with_observations,
            obs,
            chunk_chips[c, : chips.shape[0]],
            scratch[lo:hi],
        )
    for c in range(chunks):
        chips[:] += chunk_chips[c, : chips.shape[0]]
    return int(totals.sum())


def max_threads() -> int:
    """The most threads a ``BatchGame`` may use: numba's pool size (``NUMBA_NUM_THREADS``, by default the CPUs)."""
    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]  # numba sets its config at import


def check_threads(n: Any) -> int:
    """``n`` as a thread count for the compiled kernels, or ``ValueError``: an integer in 1..``max_threads()``, or
    ``"auto"``: the cores this process may use (its affinity mask), up to numba's pool
    (``bourre_env.threads.auto_threads``)."""
    if isinstance(n, str) and n == "auto":
        return auto_threads()
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= max_threads():
        raise ValueError(
            f"threads: expected an integer in 1..{max_threads()} (numba's NUMBA_NUM_THREADS) or 'auto', got {n!r}"
        )
    return int(n)


ROWS_PER_THREAD = 32
"""The fewest rows worth a thread of their own in calls on a subset of rows (``row_chunks``): below it, waking a
thread costs more than it saves."""


def row_chunks(threads: int, rows: int) -> int:
    """How many shares a call on ``rows`` rows cuts them into on ``threads`` threads: one per thread, each of at
    least ``ROWS_PER_THREAD`` rows; 1 means the one-thread kernels (the vector env's and the heuristic's calls on
    the rows where someone is to act)."""
    return max(1, min(threads, rows // ROWS_PER_THREAD))


def on_threads(n: int) -> AbstractContextManager[int]:
    """Run the parallel kernels inside on ``n`` of numba's threads, or fewer where the machine gives fewer cores
    now (``bourre_env.threads.on_threads``: the affinity mask, and one thread while threads do not pay); the
    setting is per calling thread, and the caller's own is restored after."""
    return _on_threads(n)


def _check_buffer(out: Any, shape: tuple[int, ...], dtype: type, name: str) -> np.ndarray:
    """``out`` if compiled code may write a ``shape`` array of ``dtype`` into it, else ``ValueError``.

    The kernels write by index without bounds checks, so a smaller or differently typed buffer would be
    written past its end; nothing is converted or reshaped, as the caller expects its own array filled."""
    if not isinstance(out, np.ndarray):
        raise ValueError(
            f"{name}: out must be a numpy array of shape {shape} and dtype {np.dtype(dtype).name}, "
            f"got {type(out).__name__}"
        )
    if out.shape != shape or out.dtype != dtype:
        raise ValueError(
            f"{name}: out must have shape {shape} and dtype {np.dtype(dtype).name}, got shape "
            f"{out.shape} and dtype {out.dtype.name}"
        )
    if not out.flags.c_contiguous:
        raise ValueError(f"{name}: out must be C-contiguous (np.ascontiguousarray, or a fresh np.zeros)")
    if not out.flags.writeable:
        raise ValueError(f"{name}: out is read-only")
    return out


class BatchGame:
    """``batch_size`` Bourré episodes stepped together (see the module docstring)."""

    def __init__(
        self,
        batch_size: int,
        seed: int = 0,
        rules: Rules | str | None = None,
        *,
        threads: int | str = 1,
        **options: Any,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size: expected an integer >= 1, got {batch_size!r}")
        self.threads = threads
        check_fits(int(batch_size) * BYTES_PER_ROW, f"batch_size {batch_size}")
        self.rules = Rules.from_options(rules, **options)
        limits.check_rules(self.rules)
        self.params = self.rules.params()
        self.batch_size = int(batch_size)
        self.num_players = self.rules.num_players
        self._template = np.asarray(self.rules.deck_cards(), dtype=np.int64)
        self.states = np.zeros((self.batch_size, core.STATE_SIZE), dtype=np.int64)
        # each row's cinch memo and search statistics (core.X_CINCH_*): no part of the game, so the queries
        # (legal_masks, observations) leave the states as they are
        self.scratch = np.zeros((self.batch_size, core.SCRATCH_SIZE), dtype=np.int64)
        # rows whose episode the last step ended truncated at the pot bound (a subset of its done)
        self.truncated = np.zeros(self.batch_size, dtype=np.bool_)
        self.seed(seed)

    @property
    def threads(self) -> int:
        """Threads that ``step``, ``random_play``, ``legal_masks`` and ``observations`` run on (default 1); settable,
        also to ``"auto"`` (the cores this process may use, up to numba's pool).

        Each gets a contiguous share of the rows. The results are the same for any number (each row has its own
        random stream): only the speed changes, up to the machine's cores. A call runs on fewer threads while the
        machine gives fewer cores (``bourre_env.threads``: the affinity mask, and one thread while other busy
        processes make threads slower than one)."""
        return self._threads

    @threads.setter
    def threads(self, n: int | str) -> None:
        self._threads = check_threads(n)

    def _chunks(self) -> int:
        """How many shares to cut the rows into: one per thread, at most one per row; 1 keeps the one-thread path."""
        return min(self._threads, self.batch_size)

    def seed(self, seed: int) -> None:
        """Reseed every row's random stream from ``seed`` and start new episodes."""
        seeds = np.random.SeedSequence(seed).generate_state(self.batch_size, dtype=np.uint64)
        self._rngs = (seeds >> np.uint64(1)).astype(np.int64).reshape(self.batch_size, 1)
        self.reset()

    def reset(self) -> None:
        """New episodes in every row (continuing each row's random stream)."""
        _reset_all(self.states, self.params, self._rngs, self._template, self.scratch)
        self.truncated[:] = False

    def current_players(self) -> np.ndarray:
        """Seat to act in each row, ``(batch_size,)``."""
        return np.copy(self.states[:, core.S_CUR])

    def legal_masks(self, out: np.ndarray | None = None) -> np.ndarray:
        """Legal-action masks of the player to act, ``(batch_size, NUM_ACTIONS)`` int8.

        ``out``: an array of exactly that shape and dtype, C-contiguous and writeable, to fill instead of a new
        one (``ValueError`` otherwise)."""
        shape = (self.batch_size, core.NUM_ACTIONS)
        out = np.zeros(shape, dtype=np.int8) if out is None else _check_buffer(out, shape, np.int8, "legal_masks")
        chunks = self._chunks()
        if chunks == 1:
            _masks_all(self.states, self.params, out, self.scratch)
        else:
            with on_threads(chunks):
                _masks_threads(self.states, self.params, out, self.scratch, chunks)
        return out

    def observations(self, out: np.ndarray | None = None) -> np.ndarray:
        """Observation of the player to act in each row, ``(batch_size, OBS_SIZE)`` float32.

        ``out``: an array of exactly that shape and dtype, C-contiguous and writeable, to fill instead of a new
        one (``ValueError`` otherwise)."""
        shape = (self.batch_size, observation.OBS_SIZE)
        out = (
            np.zeros(shape, dtype=np.float32) if out is None else _check_buffer(out, shape, np.float32, "observations")
        )
        chunks = self._chunks()
        if chunks == 1:
            _observations_all(self.states, self.params, out, self.scratch)
        else:
            with on_threads(chunks):
                _observations_threads(self.states, self.params, out, self.scratch, chunks)
        return out

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Apply one action per row, all or nothing. Returns ``(rewards, done)``.

        ``actions``: ``(batch_size,)`` integers (any integer dtype; a list of ints will do). Floats, bools and
        other shapes raise ``ValueError``, as does an illegal action in any row; then no row is stepped.
        ``rewards[b, seat]`` (float32) holds the chips of any deal that ended with this step in row ``b``;
        ``done[b]`` is True where an episode ended (the row already holds a new one), and ``self.truncated[b]``
        where it ended truncated at the pot bound rather than after its last deal.
        """
        acts = np.asarray(actions)
        if acts.shape != (self.batch_size,):
            raise ValueError(
                f"actions: expected {self.batch_size} actions, an array of shape ({self.batch_size},); "
                f"got shape {acts.shape}"
            )
        if acts.dtype == np.bool_ or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions: expected integer action ids, got dtype {acts.dtype}")
        acts = acts.astype(np.int64, copy=False)  # a uint64 id past 2**63 turns negative: illegal all the same
        rewards = np.zeros((self.batch_size, self.num_players), dtype=np.float32)
        done = np.zeros(self.batch_size, dtype=np.bool_)
        truncated = np.zeros(self.batch_size, dtype=np.bool_)
        chunks = self._chunks()
        if chunks == 1:
            bad = _step_all(
                self.states, self.params, self._rngs, self._template, acts, rewards, done, truncated, self.scratch
            )
        else:
            with on_threads(chunks):
                bad = _step_all_threads(
                    self.states,
                    self.params,
                    self._rngs,
                    self._template,
                    acts,
                    rewards,
                    done,
                    truncated,
                    self.scratch,
                    chunks,
                )
        if bad >= 0:
            mask = np.zeros(core.NUM_ACTIONS, dtype=np.int8)
            core.legal_actions_with(self.states[bad], self.params, mask, self.scratch[bad])
            raise ValueError(
                f"illegal action {int(acts[bad])} in row {bad} (no row was stepped); "
                f"legal: {np.flatnonzero(mask).tolist()}"
            )
        if bad < -1:
            raise RuntimeError(f"row {-2 - bad}: core.step refused an action the legality check accepted")
        self.truncated = truncated
        return rewards, done

    def random_play(self, decisions_per_game: int, with_observations: bool = False) -> int:
        """Play uniformly random legal actions in every row, in compiled code; returns the decisions taken.

        With ``with_observations`` the observation of every decision is encoded too (the cost a
        learner pays). Finished deals and episodes are dealt anew as in ``step`` (truncated ones too).
        """
        self.last_random_chips = np.zeros(self.num_players, dtype=np.float64)
        chunks = self._chunks()
        if chunks == 1:
            obs = np.zeros(observation.OBS_SIZE, dtype=np.float32)
            return int(
                _random_play(
                    self.states,
                    self.params,
                    self._rngs,
                    self._template,
                    int(decisions_per_game),
                    bool(with_observations),
                    obs,
                    self.last_random_chips,
                    self.scratch,
                )
            )
        with on_threads(chunks):
            return int(
                _random_play_threads(
                    self.states,
                    self.params,
                    self._rngs,
                    self._template,
                    int(decisions_per_game),
                    bool(with_observations),
                    self.last_random_chips,
                    self.scratch,
                    chunks,
                )
            )
