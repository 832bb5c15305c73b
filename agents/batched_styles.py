"""The style zoo (``agents.styles``) for many rows at once: ``BatchedStylePlayer``, a batched player of
``bourre_env.BourreVectorEnv`` and an opponent of the batched trainer.

Its rules are the styles' own compiled functions (``agents.styles.style_action``), looped over the rows in one
compiled call, so the per-observation ``StyleAgent`` and this player cannot disagree. ``act_batch(observations,
masks, rows)`` decides from the rows' observations (the vector env's protocol), ``act(observations, masks)`` is the
same call as the trainer's collector makes of its opponents, and ``act_game(game, rows)`` decides from a
``BatchGame``'s state rows, observing each row in a buffer that stays in cache:

>>> env = BourreVectorEnv(num_envs=1024, num_players=5, opponents="style:rock", agent_factory=make_batched)
>>> player = BatchedStylePlayer("eager-low", seed=0)      # or make_batched("style:eager-low", 0)

Chance: the random styles (``eager-random``, ``coin-flip``) draw from the player's seeded generator, for all the
rows that need a number at once, in row order (``agents.styles.draw_chance``'s draws, as numpy's vector draws).
A ``BatchedStylePlayer`` and a ``StyleAgent`` of the same seed therefore make the same decisions on the same
observations given in the same order, in one batch or in many; ``act_game`` draws as ``act_batch`` would on the
rows' observations. ``tests/test_batched_styles.py`` holds it to that, and to the per-observation agent's golden
decisions; ``benchmarks/style_speed.py`` measures both.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.base import check_batch_array
from agents.styles import (
    COIN,
    HALF_THE_TIME,
    RANDOM_CARD,
    STYLES,
    chance_needed,
    style_action,
)
from bourre_env import observation, view
from bourre_env.actions import NUM_ACTIONS
from bourre_env.batch import BatchGame
from bourre_env.observation import OBS_SIZE

__all__ = ["BatchedStylePlayer", "style_actions", "style_actions_at", "style_chances", "style_chances_at"]

_NO_ONE = -3  # style_actions_at: no one is to act at the row


# ---------------------------------------------------------------- the kernels
@njit(cache=True)
def style_chances(obs: np.ndarray, masks: np.ndarray, enter_rule: int, play_rule: int, out: np.ndarray) -> None:
    """Each row's ``chance_needed`` into ``out``."""
    for b in range(obs.shape[0]):
        out[b] = chance_needed(obs[b], masks[b], enter_rule, play_rule)


@njit(cache=True)
def style_actions(
    obs: np.ndarray, masks: np.ndarray, enter_rule: int, play_rule: int, chances: np.ndarray, out: np.ndarray
) -> int:
    """Each row's ``style_action`` into ``out``; returns the first row whose mask allows nothing, else -1."""
    bad = -1
    for b in range(obs.shape[0]):
        a = style_action(obs[b], masks[b], enter_rule, play_rule, chances[b])
        out[b] = a
        if a < 0 and bad < 0:
            bad = b
    return bad


@njit(cache=True)
def style_chances_at(
    states: np.ndarray,
    p: np.ndarray,
    rows: np.ndarray,
    scratch: np.ndarray,
    enter_rule: int,
    play_rule: int,
    out: np.ndarray,
) -> None:
    """``style_chances`` for the seat to act at each ``states[rows[i]]``, from its observation (0 where no one is
    to act)."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    for i in range(rows.shape[0]):
        b = rows[i]
        seat = view.to_act(states[b])
        out[i] = 0
        if seat >= 0:
            observation.observe_with(states[b], p, seat, obs, mask, scratch[b])
            out[i] = chance_needed(obs, mask, enter_rule, play_rule)


@njit(cache=True)
def style_actions_at(
    states: np.ndarray,
    p: np.ndarray,
    rows: np.ndarray,
    scratch: np.ndarray,
    enter_rule: int,
    play_rule: int,
    chances: np.ndarray,
    out: np.ndarray,
) -> int:
    """``style_actions`` for the seat to act at each ``states[rows[i]]``, from its observation and mask built by
    ``observation.observe_with`` into one buffer; returns the first ``i`` where no one is to act or nothing is
    allowed, else -1."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    bad = -1
    for i in range(rows.shape[0]):
        b = rows[i]
        seat = view.to_act(states[b])
        if seat < 0:
            out[i] = _NO_ONE
        else:
            observation.observe_with(states[b], p, seat, obs, mask, scratch[b])
            out[i] = style_action(obs, mask, enter_rule, play_rule, chances[i])
        if out[i] < 0 and bad < 0:
            bad = i
    return bad


# ---------------------------------------------------------------- the player
class BatchedStylePlayer:
    """``agents.make("style:NAME")`` for many rows: the styles' compiled rules in one call (see the module
    docstring for the seeded draws)."""

    def __init__(self, style: str, seed: int | None = 0) -> None:
        if style not in STYLES:
            raise ValueError(f"unknown style {style!r}; known: {', '.join(STYLES)}")
        self.style = style
        self.name = f"style:{style}"
        self.enter_rule, self.play_rule = STYLES[style]
        # each style draws one kind of number at most, so drawing every row's at once keeps the rows' order
        assert not (self.enter_rule == HALF_THE_TIME and self.play_rule == RANDOM_CARD)
        self.draws = self.enter_rule == HALF_THE_TIME or self.play_rule == RANDOM_CARD
        self.rng = np.random.default_rng(seed)

    def act(self, observations: np.ndarray, masks: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """One action per row, int64 ``(B,)`` (into ``out`` when given): ``observations`` float32 ``(B, OBS_SIZE)``
        and ``masks`` int8 ``(B, NUM_ACTIONS)``, C-contiguous, each mask allowing an action (a ``ValueError`` says
        which array or row is not as expected)."""
        if not isinstance(observations, np.ndarray) or observations.ndim != 2:
            raise ValueError(
                f"observations: expected a 2-d numpy array (B, {OBS_SIZE}), got "
                f"{getattr(observations, 'shape', type(observations).__name__)}"
            )
        batch = observations.shape[0]
        check_batch_array("observations", observations, np.float32, (batch, OBS_SIZE))
        check_batch_array("masks", masks, np.int8, (batch, NUM_ACTIONS))
        if out is None:
            out = np.empty(batch, dtype=np.int64)
        else:
            check_batch_array("out", out, np.int64, (batch,))
        needs = np.zeros(batch, dtype=np.int64)
        if self.draws:
            style_chances(observations, masks, self.enter_rule, self.play_rule, needs)
        bad = style_actions(observations, masks, self.enter_rule, self.play_rule, self._chances(needs), out)
        if bad >= 0:
            raise ValueError(f"masks: row {bad} allows no action: that observation is not a decision")
        return out

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The vector env's call (``BatchedPlayer``): ``act`` on the rows' observations and masks."""
        return self.act(np.ascontiguousarray(observations), np.ascontiguousarray(masks))

    def act_game(self, game: BatchGame, rows: np.ndarray) -> np.ndarray:
        """The vector env's fast path: the decisions (and draws) of ``act_batch`` on the rows' observations, observed
        and decided in compiled calls without building them (the random styles observe each row twice: once to
        know what to draw, once to decide)."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        states = game.states
        if rows.ndim != 1 or (rows.size and not (rows.min() >= 0 and rows.max() < states.shape[0])):
            raise ValueError(f"rows: expected row indices in 0..{states.shape[0] - 1}")
        needs = np.zeros(rows.shape[0], dtype=np.int64)
        if self.draws:
            style_chances_at(states, game.params, rows, game.scratch, self.enter_rule, self.play_rule, needs)
        out = np.empty(rows.shape[0], dtype=np.int64)
        chances = self._chances(needs)
        bad = style_actions_at(states, game.params, rows, game.scratch, self.enter_rule, self.play_rule, chances, out)
        if bad >= 0:
            what = "no one is to act" if out[bad] == _NO_ONE else "nothing is allowed"
            raise ValueError(f"rows: {what} at row {int(rows[bad])}")
        return out

    def _chances(self, needs: np.ndarray) -> np.ndarray:
        """The chance each row asked for (``agents.styles.chance_needed``), drawn in row order as
        ``agents.styles.draw_chance`` draws one: coins as ``rng.random() < 0.5``, indices as ``rng.integers(k)``."""
        chances = np.zeros(needs.shape[0], dtype=np.int64)
        if not self.draws:
            return chances
        coins = np.flatnonzero(needs == COIN)
        if coins.size:
            chances[coins] = self.rng.random(coins.size) < 0.5
        picks = np.flatnonzero(needs > 0)
        if picks.size:
            chances[picks] = self.rng.integers(0, needs[picks])
        return chances

    def __repr__(self) -> str:
        return f"BatchedStylePlayer({self.style!r})"
