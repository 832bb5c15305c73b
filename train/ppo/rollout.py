"""The rollouts of the batched trainer (``train.ppo.trainer``): opponents, seat pool, transitions, GAE.

Everything here works on whole batches: one ``BatchGame`` per table size steps thousands of tables
in compiled code, the acting seat of every table is one row, the rows the learner holds go through
one masked forward pass of the network (``train.learning.policy_net``), and the other rows go to their
opponents, one batched call per opponent.

``Transitions``
    The learner's decisions: observations (and, for a privileged critic, the hidden hands) as
    compressed sparse rows (``SparseStore``: int16 column, float32 value),
    legal masks, actions, log-probabilities and values from the rollout policy, and per decision the
    index of the same seat's next decision in the episode (``next``), or ``done`` at its last one, and the
    seat's chips for a deal as the ``reward`` of its last decision in the deal. Each learner seat's
    decisions thus form their own trajectory: one deal, or with sessions (``session`` K > 1: K deals
    at one table, the pot carried) the whole session, ``done`` only at the seat's last decision of it.
``Collector``
    Steps the tables and fills ``Transitions``. Who plays each seat is drawn deal by deal by a
    ``SeatPool``: one seat of every table is the learner's, every other seat is the learner again
    (self-play, trained on too), the heuristic (``agents.heuristic.batch.BatchHeuristic``, the
    heuristic agent compiled for a batch of rows), the random agent or a frozen snapshot, with the
    pool's weights, for the whole episode (a deal or a session). When a deal ends (on any seat's move)
    every learner seat of the table gets its own chip change as the reward of its last decision; the
    table is dealt its next deal (the session goes on: same players, the pot carried) or, at the
    episode's end, a new episode at once, its seats drawn anew.
``gae``
    Generalised advantage estimation along each seat's trajectory (``next`` links), in compiled code.
    With single deals, decisions of deals still under way have no return yet; the trainer keeps them for
    the next rollout. With sessions (``truncate``), whose trajectories outlast many rollouts, every
    decision whose successor is known is used, its advantage truncated at the rollout's end and
    bootstrapped from the value of the seat's latest decision, as PPO cuts its trajectories at the end of
    a rollout; only each seat's latest decision waits for the next rollout.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from numba import njit

from agents.heuristic.batch import BatchHeuristic
from agents.ppo import PolicyWeights, load_policy
from bourre_env.batch import BYTES_PER_ROW as BATCH_ROW_BYTES
from bourre_env.batch import BatchGame
from bourre_env.core import NUM_ACTIONS, S_DEAL_NO
from bourre_env.core.rules import MAX_HAND_SIZE
from bourre_env.observation import OBS_SIZE
from bourre_env.privileged import HIDDEN_HAND_SIZE, hidden_hand_entries
from train.learning.fused_cpu import sample_masked
from train.learning.policy_net import (
    PolicyNet,
    SparseBatch,
    SparseStore,
    batch_from_counts,
    masked_logits,
    sample_actions,
    sparse_rows,
)
from train.ppo.league import LEAGUE, League

__all__ = [
    "LEARNER",
    "HEURISTIC",
    "RANDOM",
    "SNAPSHOT",
    "BatchRandom",
    "Collector",
    "PolicyOpponent",
    "SeatPool",
    "StepRecord",
    "Transitions",
    "gae",
    "rollout_bytes",
]

LEARNER, HEURISTIC, RANDOM, SNAPSHOT = 0, 1, 2, 3
"""Seat owner codes; snapshot slot ``j`` is ``SNAPSHOT + j``."""


# ---------------------------------------------------------------------------- opponents
class BatchRandom:
    """A uniformly random legal action per row, from a seeded numpy generator."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observations: np.ndarray, masks: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        # The largest of independent uniforms over the legal actions is a uniform choice among them.
        keys = self.rng.random(masks.shape, dtype=np.float32)
        keys[masks == 0] = -1.0
        actions = keys.argmax(axis=1)
        if out is None:
            return actions
        out[:] = actions
        return out


class PolicyOpponent:
    """A frozen policy (a snapshot of the learner) playing its most probable legal action, a batch at a time."""

    def __init__(
        self, weights: PolicyWeights | str | Path, device: torch.device | str = "cpu", name: str = "snapshot"
    ) -> None:
        policy = weights if isinstance(weights, PolicyWeights) else load_policy(weights)
        self.net = PolicyNet.from_policy_weights(policy).to(device).eval()
        self.device = device
        self.name = name

    @torch.no_grad()
    def act(self, observations: np.ndarray, masks: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        idx, val, counts = sparse_rows(observations[:, : self.net.obs_size], np.arange(len(observations)))
        logits, _ = self.net(batch_from_counts(idx, val, counts, self.device))
        mask_t = torch.from_numpy(masks.view(np.bool_)).to(self.device)
        actions = masked_logits(logits, mask_t).argmax(dim=1).cpu().numpy()
        if out is None:
            return actions
        out[:] = actions
        return out


# ---------------------------------------------------------------------------- who plays each seat
@dataclasses.dataclass(frozen=True)
class SeatPool:
    """Relative chances of each kind of player in a table's seats other than the one the learner always holds."""

    learner: float = 0.5
    heuristic: float = 0.3
    random: float = 0.05
    snapshot: float = 0.15

    def __post_init__(self) -> None:
        values = dataclasses.astuple(self)
        if min(values) < 0 or sum(values) <= 0:
            raise ValueError(f"pool weights must be >= 0 with a positive sum, got {self}")

    def draw(self, rng: np.random.Generator, tables: int, num_players: int, snapshots: int) -> np.ndarray:
        """Owner codes ``(tables, num_players)``: one seat per table is the learner's, the others drawn by weight;
        a snapshot is one of the ``snapshots`` slots, uniformly (with none yet, its weight goes to the heuristic)."""
        chances = np.array(
            [
                self.learner,
                self.heuristic + (0.0 if snapshots else self.snapshot),
                self.random,
                self.snapshot if snapshots else 0.0,
            ]
        )
        owners = rng.choice(4, size=(tables, num_players), p=chances / chances.sum()).astype(np.int64)
        snap = owners == SNAPSHOT
        if snapshots:
            owners[snap] += rng.integers(snapshots, size=int(snap.sum()))
        owners[np.arange(tables), rng.integers(num_players, size=tables)] = LEARNER
        return owners


# ---------------------------------------------------------------------------- the learner's decisions
class Transitions:
    """The learner's decisions, each linked to the same seat's next decision in the episode (see the module
    docstring). Arrays grow as needed; ``n`` decisions are held. With ``hidden_hands`` each decision also keeps
    the other seats' hands (``bourre_env.privileged``) for a privileged critic."""

    def __init__(self, capacity: int = 1 << 14, nnz_per_row: int = 80, hidden_hands: bool = False) -> None:
        self.n = 0
        self.obs = SparseStore(OBS_SIZE, capacity, nnz_per_row)
        self.hidden = SparseStore(HIDDEN_HAND_SIZE, capacity, 4 * MAX_HAND_SIZE) if hidden_hands else None
        self.masks = np.zeros((capacity, NUM_ACTIONS), np.bool_)
        self.actions = np.zeros(capacity, np.int64)
        self.logp = np.zeros(capacity, np.float32)  # log-probability of the action under the rollout policy
        self.values = np.zeros(capacity, np.float32)
        self.rewards = np.zeros(capacity, np.float32)
        self.done = np.zeros(capacity, np.bool_)  # the seat's last decision of its episode (deal or session)
        self.next = np.full(capacity, -1, np.int64)  # the seat's next decision in the episode, -1: none yet or done
        self.stale = np.zeros(capacity, np.bool_)  # kept from an earlier rollout: its value is an older critic's

    @property
    def ptr(self) -> np.ndarray:
        """Observation of decision ``i``: entries ``ptr[i]:ptr[i + 1]`` of ``idx`` and ``val``."""
        return self.obs.ptr

    @property
    def idx(self) -> np.ndarray:
        return self.obs.idx

    @property
    def val(self) -> np.ndarray:
        return self.obs.val

    @property
    def capacity(self) -> int:
        return int(self.actions.shape[0])

    def _grow(self, rows: int) -> None:
        if self.n + rows > self.capacity:
            size = max(2 * self.capacity, self.n + rows)
            for name in ("masks", "actions", "logp", "values", "rewards", "done", "next", "stale"):
                old = getattr(self, name)
                new = np.full((size, *old.shape[1:]), -1 if name == "next" else 0, old.dtype)
                new[: self.n] = old[: self.n]
                setattr(self, name, new)

    def append(
        self,
        idx: np.ndarray,
        val: np.ndarray,
        counts: np.ndarray,
        masks: np.ndarray,
        actions: np.ndarray,
        logp: np.ndarray,
        values: np.ndarray,
        hidden: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    ) -> np.ndarray:
        """Add decisions (observations, and with ``hidden_hands`` the hidden hands, as ``sparse_rows`` gives
        them); returns their indices."""
        if (hidden is None) != (self.hidden is None):
            raise ValueError("the hidden hands are given exactly when the transitions keep them")
        rows = len(counts)
        self._grow(rows)
        lo = self.n
        self.obs.append(idx, val, counts)
        if self.hidden is not None and hidden is not None:
            self.hidden.append(*hidden)
        self.masks[lo : lo + rows] = masks
        self.actions[lo : lo + rows] = actions
        self.logp[lo : lo + rows] = logp
        self.values[lo : lo + rows] = values
        self.rewards[lo : lo + rows] = 0.0
        self.done[lo : lo + rows] = False
        self.next[lo : lo + rows] = -1
        self.stale[lo : lo + rows] = False
        self.n += rows
        return np.arange(lo, lo + rows)

    def batch(self, rows: np.ndarray, device: torch.device | str, grad: bool) -> SparseBatch:
        return self.obs.batch(rows, device, grad)

    def hidden_batch(self, rows: np.ndarray, device: torch.device | str, grad: bool) -> SparseBatch | None:
        """The hidden hands of decisions ``rows`` (None when the transitions do not keep them)."""
        return None if self.hidden is None else self.hidden.batch(rows, device, grad)

    def inputs(
        self, rows: np.ndarray, device: torch.device | str, grad: bool
    ) -> tuple[SparseBatch, SparseBatch | None]:
        """What ``PolicyNet`` reads for decisions ``rows``: ``net(*transitions.inputs(rows, ...))``."""
        return self.batch(rows, device, grad), self.hidden_batch(rows, device, grad)

    def keep(self, which: np.ndarray) -> np.ndarray:
        """Keep only the decisions where ``which`` (bool, ``n``) holds, in order, marked stale; returns the new index
        of every old one (-1 if dropped). A kept decision's ``next`` must be kept too."""
        which = np.asarray(which[: self.n], dtype=np.bool_)
        new_index = np.where(which, np.cumsum(which) - 1, -1)
        kept = np.flatnonzero(which)
        m = len(kept)
        self.obs.keep(kept)
        if self.hidden is not None:
            self.hidden.keep(kept)
        for name in ("masks", "actions", "logp", "values", "rewards", "done"):
            arr = getattr(self, name)
            arr[:m] = arr[kept]
        nxt = self.next[kept]
        if np.any(nxt >= 0) and np.any(new_index[nxt[nxt >= 0]] < 0):
            raise ValueError("keep: a kept decision's next decision was dropped")
        self.next[:m] = np.where(nxt >= 0, new_index[np.maximum(nxt, 0)], -1)
        self.stale[:m] = True
        self.n = m
        return new_index


@njit(cache=True)
def _gae(
    next_: np.ndarray,
    done: np.ndarray,
    rewards: np.ndarray,
    values: np.ndarray,
    bootstrap: np.ndarray,
    gamma: float,
    lam: float,
    truncate: bool,
    advantages: np.ndarray,
    complete: np.ndarray,
) -> None:
    for i in range(next_.shape[0] - 1, -1, -1):
        if done[i]:
            advantages[i] = rewards[i] - values[i]
            complete[i] = True
            continue
        j = next_[i]
        if j < 0 and not np.isnan(bootstrap[i]):  # cut by the sender: its successor's value came with it
            advantages[i] = rewards[i] + gamma * bootstrap[i] - values[i]
            complete[i] = True
            continue
        if truncate and j > i and not complete[j]:  # cut at the rollout's end: bootstrapped from the successor
            advantages[i] = rewards[i] + gamma * values[j] - values[i]
            complete[i] = True
            continue
        if j < 0 or not complete[j]:  # the deal is still under way: no return yet
            advantages[i] = 0.0
            complete[i] = False
            continue
        if j <= i:
            raise ValueError("a decision's next decision must come after it")
        delta = rewards[i] + gamma * values[j] - values[i]
        advantages[i] = delta + gamma * lam * advantages[j]
        complete[i] = True


def gae(
    next_: np.ndarray,
    done: np.ndarray,
    rewards: np.ndarray,
    values: np.ndarray,
    gamma: float,
    lam: float,
    truncate: bool = False,
    bootstrap: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Advantages, returns (advantages + values) and ``complete`` flags of decisions linked into trajectories by
    ``next_`` (-1: none) and ``done`` (the trajectory's last decision, whose successor value is 0).

    A decision is complete when its trajectory reaches a ``done`` decision; incomplete ones get 0. With
    ``truncate`` (sessions) a decision whose next decision is known but not complete is complete too: its
    advantage is cut there, ``reward + gamma * value of the next - value``, and the ones before it build on it as
    GAE does. ``bootstrap`` (NaN: none): for a decision with no next one, the value of a successor that is not
    among these decisions (a rollout worker's ``Rollout`` sends the cut decisions so), making it complete."""
    n = len(next_)
    advantages = np.zeros(n, np.float32)
    complete = np.zeros(n, np.bool_)
    _gae(
        np.ascontiguousarray(next_, np.int64),
        np.ascontiguousarray(done, np.bool_),
        np.ascontiguousarray(rewards, np.float32),
        np.ascontiguousarray(values, np.float32),
        np.full(n, np.nan, np.float32) if bootstrap is None else np.ascontiguousarray(bootstrap, np.float32),
        float(gamma),
        float(lam),
        bool(truncate),
        advantages,
        complete,
    )
    return advantages, advantages + np.where(complete, values, 0.0).astype(np.float32), complete


# ---------------------------------------------------------------------------- the rollout
class StepRecord(NamedTuple):
    """One step of one table size: what the tests replay through the AEC env."""

    seats: np.ndarray  # (tables,) the acting seat of every table
    owners: np.ndarray  # (tables,) who held it (LEARNER, HEURISTIC, RANDOM, SNAPSHOT + slot)
    actions: np.ndarray  # (tables,)
    rewards: np.ndarray  # (tables, num_players) chips of the deals that ended
    done: np.ndarray  # (tables,) the episode (deal or session) ended (the table already holds a new one)
    learner_rows: np.ndarray  # tables where the learner acted
    learner_ids: np.ndarray  # their decisions' indices in Transitions
    deal_over: np.ndarray  # (tables,) a deal ended: the episode's last (done) or, in a session, one before it


# Arrays per table: its game row, seat owners and last decisions (8 seats at most), the observation and mask buffers
# with their torch copies and the logits of a forward pass; arrays per decision held: the sparse observation of
# Transitions (capacity doubles as it grows, hence the 2), its mask and scalars.
TABLE_BYTES = BATCH_ROW_BYTES + 2 * 8 * 8 + 2 * 4 * OBS_SIZE + NUM_ACTIONS * (1 + 1 + 4)
DECISION_BYTES = 2 * (80 * (2 + 4) + 8 + NUM_ACTIONS + 8 + 4 * 4 + 2 + 8)


def rollout_bytes(tables: int, decisions: int) -> int:
    """About the memory a ``Collector`` of ``tables`` tables takes to hold ``decisions`` decisions."""
    return tables * TABLE_BYTES + decisions * DECISION_BYTES


class Collector:
    """Tables of every size in ``players``, stepped in turn, the learner's decisions written to ``transitions``.

    ``heuristic``: the player of the heuristic's seats (default: ``BatchHeuristic``); ``teacher``: a player with
    the same ``act(observations, masks)`` call that plays the learner's seats instead of the network (the
    imitation warm start records it; log-probabilities and values are then 0); ``rule_options``: ``Rules`` fields
    of every table (``num_players`` comes from ``players``); ``session``: deals per episode at every table (1:
    single deals; K: sessions of K deals with the pot carried, each seat's trajectory running through the session,
    the seats' players drawn once a session)."""

    def __init__(
        self,
        net: PolicyNet,
        players: Sequence[int],
        tables: int,
        pool: SeatPool,
        seed: int,
        reward_scale: float,
        device: torch.device | str = "cpu",
        heuristic: Any = None,
        teacher: Any = None,
        rule_options: Mapping[str, Any] | None = None,
        session: int = 1,
        league: League | None = None,
    ) -> None:
        if "deals_per_episode" in (rule_options or {}):
            raise ValueError("rule_options: deals_per_episode is the collector's session, not a rule option")
        if isinstance(session, bool) or not isinstance(session, int | np.integer) or session < 1:
            raise ValueError(f"session: expected a number of deals >= 1, got {session!r}")
        self.session = int(session)
        episode = {"deals_per_episode": self.session} if self.session > 1 else {}
        sizes = sorted(set(players))
        if tables < len(sizes):
            raise ValueError(f"tables: at least one per table size ({len(sizes)}), got {tables}")
        share = np.array([list(players).count(n) for n in sizes], dtype=np.float64)
        counts = np.maximum(1, np.floor(tables * share / share.sum()).astype(np.int64))
        counts[-1] += tables - counts.sum()
        seeds = np.random.SeedSequence([seed, 17]).generate_state(len(sizes) + 4)
        self.games = [
            BatchGame(int(b), seed=int(s), **{**(rule_options or {}), **episode, "num_players": n})
            for n, b, s in zip(sizes, counts, seeds[: len(sizes)], strict=True)
        ]
        self.net, self.device, self.pool, self.reward_scale = net, device, pool, reward_scale
        self.rng = np.random.default_rng(seeds[-1])
        self.torch_rng = torch.Generator(device=device)
        self.torch_rng.manual_seed(int(seeds[-2]))
        self.random = BatchRandom(int(seeds[-3]))
        self.heuristic = heuristic if heuristic is not None else BatchHeuristic("default", int(seeds[-4]))
        self.teacher = teacher
        self.snapshots: list[PolicyOpponent] = []
        self.snapshot_paths: list[str] = []
        self.league = league
        self.owners = [self._draw_owners(g.batch_size, g.num_players) for g in self.games]
        self.last = [np.full((g.batch_size, g.num_players), -1, np.int64) for g in self.games]
        self._obs = [np.zeros((g.batch_size, OBS_SIZE), np.float32) for g in self.games]
        self._masks = [np.zeros((g.batch_size, NUM_ACTIONS), np.int8) for g in self.games]
        self.transitions = Transitions(hidden_hands=net.value_net is not None)
        self.seconds = {"env": 0.0, "learner": 0.0, "opponents": 0.0}
        self.reset_stats()

    @property
    def tables(self) -> int:
        return sum(g.batch_size for g in self.games)

    def reset_stats(self) -> None:
        """Start new running figures (learner chips per deal, decisions)."""
        self.stats = {"learner_deals": 0, "learner_chips": 0.0, "decisions": 0, "learner_decisions": 0, "deals": 0}

    def set_snapshots(self, paths: Sequence[str]) -> None:
        """Keep exactly these snapshot files in the pool. A snapshot keeps its slot while it stays; a new one takes
        a freed slot (a table that held the old one plays the new one for the rest of that deal or session)."""
        paths = [str(p) for p in paths]
        loaded = dict(zip(self.snapshot_paths, self.snapshots, strict=True))
        free = [j for j, p in enumerate(self.snapshot_paths) if p not in paths]
        for path in paths:
            if path in loaded:
                continue
            opponent = PolicyOpponent(path, self.device, name=f"snapshot:{path}")
            if free:
                j = free.pop(0)
                self.snapshot_paths[j], self.snapshots[j] = path, opponent
            else:
                self.snapshot_paths.append(path)
                self.snapshots.append(opponent)
        if free:  # fewer snapshots than before: the slots close up; seats of a dropped one go to the heuristic
            kept = [j for j in range(len(self.snapshots)) if j not in free]
            new_code = np.array(
                [LEARNER, HEURISTIC, RANDOM]
                + [SNAPSHOT + kept.index(j) if j in kept else HEURISTIC for j in range(len(self.snapshots))]
            )
            self.snapshot_paths = [self.snapshot_paths[j] for j in kept]
            self.snapshots = [self.snapshots[j] for j in kept]
            self.owners = [np.where(owners >= LEAGUE, owners, new_code[owners % LEAGUE]) for owners in self.owners]

    # ------------------------------------------------------------------ one step of one table size
    @torch.no_grad()
    def _learner_act(
        self,
        obs: np.ndarray,
        masks: np.ndarray,
        rows: np.ndarray,
        hidden: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Sample the learner's actions for ``rows``; record the decisions (with the hidden hands ``hidden`` where
        the critic reads them); returns (actions, decision indices)."""
        idx, val, counts = sparse_rows(obs, rows)
        mask_rows = masks[rows].view(np.bool_)
        if self.teacher is not None:
            actions = self.teacher.act(obs[rows], masks[rows])
            zeros = np.zeros(len(rows), np.float32)
            return actions, self.transitions.append(idx, val, counts, mask_rows, actions, zeros, zeros, hidden)
        hidden_batch = None if hidden is None else batch_from_counts(*hidden, self.device)
        logits, values = self.net(batch_from_counts(idx, val, counts, self.device), hidden_batch)
        legal = torch.from_numpy(mask_rows).to(self.device)
        if logits.device.type == "cpu":
            # one compiled pass over each row's legal actions, with the uniforms sample_actions would draw
            uniforms = torch.rand((len(rows), 1), generator=self.torch_rng)
            actions, logp = sample_masked(logits, legal, uniforms[:, 0])
        else:
            masked = masked_logits(logits, legal)
            actions_t = sample_actions(masked, legal, self.torch_rng)
            logp = torch.log_softmax(masked, dim=1).gather(1, actions_t[:, None]).squeeze(1).cpu().numpy()
            actions = actions_t.cpu().numpy()
        ids = self.transitions.append(idx, val, counts, mask_rows, actions, logp, values.cpu().numpy(), hidden)
        return actions, ids

    def step_game(self, k: int) -> StepRecord:
        """One decision at every table of ``games[k]``: the learner's rows in one forward pass, each opponent's
        rows in one call; finished deals pay every learner seat, and finished episodes are dealt anew."""
        game, owners, last = self.games[k], self.owners[k], self.last[k]
        t0 = time.perf_counter()
        obs = game.observations(out=self._obs[k])
        masks = game.legal_masks(out=self._masks[k])
        seats = game.current_players()
        tables = np.arange(game.batch_size)
        who = owners[tables, seats]
        actions = np.empty(game.batch_size, np.int64)
        t1 = time.perf_counter()
        learner_rows = np.flatnonzero(who == LEARNER)
        learner_ids = np.empty(0, np.int64)
        if learner_rows.size:
            hidden = (
                hidden_hand_entries(game.states, learner_rows, game.num_players)
                if self.transitions.hidden is not None
                else None
            )
            actions[learner_rows], learner_ids = self._learner_act(obs, masks, learner_rows, hidden)
            # link each seat's decisions into its trajectory
            previous = last[learner_rows, seats[learner_rows]]
            linked = previous >= 0
            self.transitions.next[previous[linked]] = learner_ids[linked]
            last[learner_rows, seats[learner_rows]] = learner_ids
        t2 = time.perf_counter()
        for code in np.unique(who[who != LEARNER]):
            rows = np.flatnonzero(who == code)
            if code >= LEAGUE:
                assert self.league is not None
                actions[rows] = self.league.act(int(code), obs[rows], masks[rows], rows)
                continue
            player = (
                self.heuristic
                if code == HEURISTIC
                else self.random
                if code == RANDOM
                else self.snapshots[code - SNAPSHOT]
            )
            actions[rows] = player.act(obs[rows], masks[rows])
        t3 = time.perf_counter()
        if self.session == 1:
            rewards, done = game.step(actions)
            deal_over = done
            ended = np.flatnonzero(done)
            if ended.size:
                self._end_deals(k, ended, rewards[ended])
        else:  # a deal ended where the deal number moved on (the session goes on) or the session ended
            deal_no = game.states[:, S_DEAL_NO].copy()
            rewards, done = game.step(actions)
            deal_over = done | (game.states[:, S_DEAL_NO] != deal_no)
            ended = np.flatnonzero(deal_over)
            if ended.size:
                self._end_deals(k, ended, rewards[ended], done[ended])
        t4 = time.perf_counter()
        self.seconds["env"] += (t1 - t0) + (t4 - t3)
        self.seconds["learner"] += t2 - t1
        self.seconds["opponents"] += t3 - t2
        self.stats["decisions"] += game.batch_size
        self.stats["learner_decisions"] += learner_rows.size
        return StepRecord(seats, who, actions, rewards, done, learner_rows, learner_ids, deal_over)

    def _end_deals(self, k: int, ended: np.ndarray, chips: np.ndarray, over: np.ndarray | None = None) -> None:
        """Pay the deals that ended at tables ``ended``: each learner seat's chips go to its last decision. ``over``
        (default: all): the tables whose episode ended with the deal, where that decision is the seat's last
        (``done``) and the seats are drawn anew; at the others the session goes on, and so do the trajectories."""
        last, owners = self.last[k], self.owners[k]
        t = self.transitions
        final = last[ended]  # (ended, num_players)
        paid = final >= 0
        t.rewards[final[paid]] += chips[paid] * self.reward_scale
        if self.league is not None:
            member, result = self.league.record(owners[ended], chips, LEARNER)
            for m in np.unique(member):
                deals, wins = f"league_deals:{self.league.members[m]}", f"league_wins:{self.league.members[m]}"
                self.stats[deals] = self.stats.get(deals, 0) + int((member == m).sum())
                self.stats[wins] = self.stats.get(wins, 0) + float(result[member == m].sum())
        learner = owners[ended] == LEARNER
        self.stats["learner_deals"] += int(learner.sum())
        self.stats["learner_chips"] += float(chips[learner].sum())
        self.stats["deals"] += len(ended)
        if over is not None:
            final, ended = final[over], ended[over]
            paid = final >= 0
        t.done[final[paid]] = True
        last[ended] = -1
        owners[ended] = self._draw_owners(len(ended), owners.shape[1])

    def _draw_owners(self, tables: int, num_players: int) -> np.ndarray:
        """The players of new episodes at ``tables`` tables: the seat pool's draw, then the league's field tables."""
        owners = self.pool.draw(self.rng, tables, num_players, len(self.snapshots))
        if self.league is not None:
            self.league.seat(owners, LEARNER)
        return owners

    @torch.no_grad()
    def refresh_stale_values(self, chunk: int = 8192) -> None:
        """New values, from the network as it is now, for the decisions kept from an earlier rollout (their deals
        were under way at its update)."""
        t = self.transitions
        stale = np.flatnonzero(t.stale[: t.n])
        for start in range(0, len(stale), chunk):
            ids = stale[start : start + chunk]
            _, values = self.net(*t.inputs(ids, self.device, grad=False))
            t.values[ids] = values.cpu().numpy()
        t.stale[stale] = False

    def collect(self, decisions: int) -> int:
        """Step every table size in turn until at least ``decisions`` learner decisions were added; returns how many."""
        start = self.transitions.n
        while self.transitions.n - start < decisions:
            for k in range(len(self.games)):
                self.step_game(k)
        return self.transitions.n - start

    def complete(self, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """GAE over the decisions held: (advantages, returns, complete flags); with sessions cut at the rollout's end
        (``gae``'s ``truncate``)."""
        t = self.transitions
        n = t.n
        return gae(t.next[:n], t.done[:n], t.rewards[:n], t.values[:n], gamma, lam, truncate=self.session > 1)

    def carry_over(self, complete: np.ndarray) -> np.ndarray:
        """Drop the decisions used (complete), keep those of deals under way (with sessions: each seat's latest
        decision) for the next rollout; returns the new index of every old decision (-1: dropped)."""
        new_index = self.transitions.keep(~complete)
        for last in self.last:
            held = last >= 0
            last[held] = new_index[last[held]]
            if np.any(last[held] < 0):
                raise ValueError("carry_over: a seat's last decision was dropped while its deal is under way")
        return new_index
