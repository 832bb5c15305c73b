"""The actors of Deep Monte-Carlo (``train.dmc.trainer``): epsilon-greedy self-play on batched tables, and the
Monte-Carlo target of every decision.

``SelfPlay`` keeps one ``BatchGame`` per table size; every seat of every table is the learner, as every position is
in DouZero. At each step the acting seat of every table is one row: the rows go through one forward pass of the
Q-network (``train.learning.policy_net.PolicyNet``, whose 117 outputs are read as ``Q(observation, action)``),
each row plays its legal action of highest Q, or, with probability ``epsilon``, a uniformly random legal action.
Each decision is recorded: the observation (sparse), the action, the seat. A deal pays only at its end, so the
Monte-Carlo return of a decision, undiscounted, is the deal's final payoff to the seat that made it: when a deal
ends (on any seat's move), every decision of that table's deal gets its seat's chips for the deal, times
``reward_scale``, as its target. Decisions of deals still under way wait, kept for the next iteration
(``drop_finished``).

With sessions (``session`` K > 1: every table plays K deals with the pot carried, ``train.schedule.table_rules``)
the episode is the session and the return of a decision runs to the session's end: when a deal of the session ends,
its chips for each seat are added to the target of every decision that seat made so far in the session (that deal's
and the earlier ones'), and the decisions are complete when the session ends. A decision's target is thus its
seat's chips from its deal through the last deal of the session; chips still in the pot when the session ends count
as lost to whoever paid them in (as the batched trainer's returns count them). A session the pot bound cuts short
ends there, its targets the chips of the deals it played.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import torch

from bourre_env.batch import BYTES_PER_ROW as BATCH_ROW_BYTES
from bourre_env.batch import BatchGame
from bourre_env.core import NUM_ACTIONS, S_DEAL_NO
from bourre_env.observation import OBS_SIZE
from train.learning.policy_net import (
    PolicyNet,
    SparseBatch,
    SparseStore,
    batch_from_counts,
    gather_batch,
    masked_logits,
    sparse_rows,
)
from train.schedule import check_session, table_rules

__all__ = ["DEAL_DECISIONS", "DECISION_BYTES", "TABLE_BYTES", "SelfPlay", "selfplay_bytes"]

# per table: its game row, the observation and mask buffers, the decisions of the deal under way; per decision held:
# the sparse observation (about 80 entries of 6 bytes; capacity doubles as it grows, hence the 2) and its scalars
TABLE_BYTES = BATCH_ROW_BYTES + 4 * OBS_SIZE + NUM_ACTIONS + 8 * 64
DECISION_BYTES = 2 * (80 * (2 + 4) + 8 + 8 + 8 + 4 + 1)
DEAL_DECISIONS = 64
"""About the most decisions of one deal (8 seats: pass or play, a draw and 5 cards each, and the dealer's), for the
decisions a table holds until its session ends."""


def selfplay_bytes(tables: int, decisions: int, session: int = 1) -> int:
    """About the memory ``SelfPlay`` takes with ``tables`` tables holding ``decisions`` decisions (twice over: the
    decisions of deals under way are carried to the next iteration), and with sessions of ``session`` deals the
    decisions of each table's session under way, held until it ends."""
    held = tables * (session - 1) * DEAL_DECISIONS
    return tables * TABLE_BYTES + 2 * (decisions + held) * DECISION_BYTES


class SelfPlay:
    """Epsilon-greedy self-play on ``tables`` tables of the sizes in ``players`` (module docstring), each episode a
    deal (``session=1``) or a session of ``session`` deals with the pot carried.

    ``games``: tables to play instead of new ones (one ``BatchGame`` per entry, ``session`` deals per episode), for a
    caller that sets up its deals itself."""

    def __init__(
        self,
        net: PolicyNet,
        players: Sequence[int],
        tables: int,
        seed: int,
        epsilon: float,
        reward_scale: float,
        games: Sequence[BatchGame] | None = None,
        session: int = 1,
    ) -> None:
        self.session = check_session(session)
        seeds = np.random.SeedSequence([seed, 23]).generate_state(len(players) + 2)
        if games is None:
            sizes = sorted(set(players))
            if tables < len(sizes):
                raise ValueError(f"tables: at least one per table size ({len(sizes)}), got {tables}")
            share = np.array([list(players).count(n) for n in sizes], dtype=np.float64)
            counts = np.maximum(1, np.floor(tables * share / share.sum()).astype(np.int64))
            counts[-1] += tables - counts.sum()
            games = [
                BatchGame(int(b), seed=int(s), rules=table_rules(n, {}, self.session))
                for n, b, s in zip(sizes, counts, seeds, strict=False)
            ]
        length = "one deal" if self.session == 1 else f"{self.session} deals"
        for game in games:
            if game.rules.deals_per_episode != self.session:
                raise ValueError(
                    f"self-play tables play {length} per episode (session={self.session}), got "
                    f"deals_per_episode={game.rules.deals_per_episode}"
                )
        self.games = list(games)
        self.net, self.epsilon, self.reward_scale = net, float(epsilon), float(reward_scale)
        self.rng = np.random.default_rng(seeds[-1])
        self._obs = [np.zeros((g.batch_size, OBS_SIZE), np.float32) for g in self.games]
        self._masks = [np.zeros((g.batch_size, NUM_ACTIONS), np.int8) for g in self.games]
        # the decisions of each table's deal (with sessions: session) under way: pending[k][b, :opened[k][b]]
        self.pending = [np.full((g.batch_size, 16), -1, np.int64) for g in self.games]
        self.opened = [np.zeros(g.batch_size, np.int64) for g in self.games]
        self.n = 0
        self.obs = SparseStore(OBS_SIZE)
        capacity = 1 << 14
        self.actions = np.zeros(capacity, np.int64)
        self.seats = np.zeros(capacity, np.int64)
        self.targets = np.zeros(capacity, np.float32)  # the seat's chips to the episode's end, times reward_scale
        self.complete = np.zeros(capacity, np.bool_)  # the decision's episode has ended: its target is known
        self.finished = 0  # complete decisions held
        self.seconds = {"env": 0.0, "actors": 0.0}
        self.stats = {"decisions": 0, "deals": 0, "explored": 0}

    # ------------------------------------------------------------------ acting
    @torch.no_grad()
    def q_values(self, batch: SparseBatch) -> torch.Tensor:
        """The network's ``Q(observation, action)`` of every action id, ``(rows, NUM_ACTIONS)``."""
        q, _ = self.net(batch)
        return q

    def choose(self, idx: np.ndarray, val: np.ndarray, counts: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Each row's legal action of highest Q, or with probability ``epsilon`` a uniformly random legal one."""
        q = self.q_values(batch_from_counts(idx, val, counts, "cpu"))
        actions = masked_logits(q, torch.from_numpy(masks.view(np.bool_))).argmax(dim=1).numpy()
        explore = np.flatnonzero(self.rng.random(len(actions)) < self.epsilon)
        if explore.size:
            # the largest of independent uniforms over the legal actions is a uniform choice among them
            keys = self.rng.random((explore.size, masks.shape[1]), dtype=np.float32)
            keys[masks[explore] == 0] = -1.0
            actions[explore] = keys.argmax(axis=1)
            self.stats["explored"] += int(explore.size)
        return actions

    def step_game(self, k: int, actions: np.ndarray | None = None) -> np.ndarray:
        """One decision at every table of ``games[k]`` (``actions``: the ones to play instead of the actors' choice);
        every decision is recorded, each deal that ends adds its chips to the targets of its table's decisions, and
        the episodes that end complete them. Returns the decisions' indices, one per table."""
        game = self.games[k]
        t0 = time.perf_counter()
        obs = game.observations(out=self._obs[k])
        masks = game.legal_masks(out=self._masks[k])
        seats = game.current_players()
        idx, val, counts = sparse_rows(obs, np.arange(game.batch_size))
        t1 = time.perf_counter()
        if actions is None:
            actions = self.choose(idx, val, counts, masks)
        ids = self._record(idx, val, counts, np.asarray(actions, np.int64), seats)
        self._open(k, ids)
        t2 = time.perf_counter()
        deal_no = game.states[:, S_DEAL_NO].copy()
        rewards, done = game.step(actions)
        # a deal ended where the episode did or, in a session, where the deal number moved on
        ended = np.flatnonzero(done | (game.states[:, S_DEAL_NO] != deal_no))
        if ended.size:
            self._credit(k, ended, rewards[ended])
            self._settle(k, np.flatnonzero(done))
        self.seconds["env"] += (t1 - t0) + (time.perf_counter() - t2)
        self.seconds["actors"] += t2 - t1
        self.stats["decisions"] += game.batch_size
        return ids

    def collect(self, decisions: int) -> int:
        """Step every table size in turn until at least ``decisions`` more decisions are complete; returns how many."""
        start = self.finished
        while self.finished - start < decisions:
            for k in range(len(self.games)):
                self.step_game(k)
        return self.finished - start

    # ------------------------------------------------------------------ the decisions and their targets
    def _record(
        self, idx: np.ndarray, val: np.ndarray, counts: np.ndarray, actions: np.ndarray, seats: np.ndarray
    ) -> np.ndarray:
        rows = len(counts)
        if self.n + rows > len(self.actions):
            size = max(2 * len(self.actions), self.n + rows)
            for name in ("actions", "seats", "targets", "complete"):
                old = getattr(self, name)
                new = np.zeros(size, old.dtype)
                new[: self.n] = old[: self.n]
                setattr(self, name, new)
        lo = self.n
        self.obs.append(idx, val, counts)
        self.actions[lo : lo + rows] = actions
        self.seats[lo : lo + rows] = seats
        self.targets[lo : lo + rows] = 0.0
        self.complete[lo : lo + rows] = False
        self.n += rows
        return np.arange(lo, lo + rows)

    def _open(self, k: int, ids: np.ndarray) -> None:
        """Add decision ``ids[b]`` to the deal under way at table ``b`` of ``games[k]``."""
        pending, opened = self.pending[k], self.opened[k]
        if opened.max() >= pending.shape[1]:
            grown = np.full((pending.shape[0], 2 * pending.shape[1]), -1, np.int64)
            grown[:, : pending.shape[1]] = pending
            self.pending[k] = pending = grown
        tables = np.arange(len(ids))
        pending[tables, opened] = ids
        opened += 1

    def _held(self, k: int, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The decisions of the episodes under way at ``tables`` of ``games[k]``, table after table, and for each
        the position in ``tables`` of its table."""
        opened = self.opened[k][tables]
        width = int(opened.max()) if len(tables) else 0
        held = np.arange(width)[None, :] < opened[:, None]
        return self.pending[k][tables, :width][held], np.repeat(np.arange(len(tables)), opened)

    def _credit(self, k: int, ended: np.ndarray, chips: np.ndarray) -> None:
        """The deals that ended at tables ``ended`` (``chips``: each seat's chips for the deal, ``(ended, players)``):
        each decision of their episodes so far gets its seat's chips, times ``reward_scale``, added to its target
        (with single deals, the deal's own decisions: the target is the deal's chips)."""
        ids, table = self._held(k, ended)
        self.targets[ids] += chips[table, self.seats[ids]] * np.float32(self.reward_scale)
        self.stats["deals"] += len(ended)

    def _settle(self, k: int, over: np.ndarray) -> None:
        """The episodes that ended at tables ``over``: their decisions' targets are complete."""
        if not over.size:
            return
        ids, _ = self._held(k, over)
        self.complete[ids] = True
        self.finished += len(ids)
        self.opened[k][over] = 0

    def finished_rows(self) -> np.ndarray:
        """Indices of the complete decisions held, in the order they were made."""
        return np.flatnonzero(self.complete[: self.n])

    def batch(self, rows: np.ndarray, grad: bool) -> SparseBatch:
        """The observations of decisions ``rows`` as a batch for the network."""
        return gather_batch(self.obs.ptr, self.obs.idx, self.obs.val, rows, "cpu", grad, OBS_SIZE)

    def drop_finished(self) -> None:
        """Forget the complete decisions (regressed on); keep those of episodes under way, renumbered in order."""
        keep = ~self.complete[: self.n]
        kept = np.flatnonzero(keep)
        new_index = np.where(keep, np.cumsum(keep) - 1, -1)
        self.obs.keep(kept)
        m = len(kept)
        for name in ("actions", "seats", "targets", "complete"):
            array = getattr(self, name)
            array[:m] = array[kept]
        for pending, opened in zip(self.pending, self.opened, strict=True):
            held = np.arange(pending.shape[1])[None, :] < opened[:, None]
            pending[held] = new_index[pending[held]]
            if np.any(pending[held] < 0):
                raise ValueError("drop_finished: a decision of an episode under way was dropped")
        self.n, self.finished = m, 0
