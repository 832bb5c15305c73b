"""The machinery of the batched trainer (``train.batched_ppo``): network, opponents, rollouts, GAE.

Everything here works on whole batches: one ``BatchGame`` per table size steps thousands of tables
in compiled code, the acting seat of every table is one row, the rows the learner holds go through
one masked forward pass, and the other rows go to their opponents, one batched call per opponent.

``PolicyNet``
    A multilayer perceptron whose first layer reads the observation sparsely. The observation is
    1174 floats of which about 66 are nonzero at 5 players (mostly one-hot), so the first dense
    product ``W x`` is computed as the sum over the nonzero entries ``i`` of ``x_i * W[:, i]``
    (``torch.nn.functional.embedding_bag``, with a backward pass of the same kind: ``_SparseFirst``).
    The weights stay a dense matrix, so the actor exports to the ``agents.ppo`` format unchanged
    (``layers.K.weight`` of shape ``(out, in)``). The trunk is shared by the actor head (117 logits)
    and the critic head (one value), unless the critic is privileged: then ``ValueNet``, a trunk of its
    own, reads the observation and the other seats' hands (``bourre_env.privileged``; training only).
``Transitions``
    The learner's decisions: observations (and, for a privileged critic, the hidden hands) as
    compressed sparse rows (``SparseStore``: int16 column, float32 value),
    legal masks, actions, log-probabilities and values from the rollout policy, and per decision the
    index of the same seat's next decision in the deal (``next``), or ``done`` with the seat's chips
    for the deal as ``reward``. Each learner seat's decisions thus form their own trajectory.
``Collector``
    Steps the tables and fills ``Transitions``. Who plays each seat is drawn deal by deal by a
    ``SeatPool``: one seat of every table is the learner's, every other seat is the learner again
    (self-play, trained on too), the heuristic (``agents.heuristic_batch.BatchHeuristic``, the
    heuristic agent compiled for a batch of rows), the random agent or a frozen snapshot, with the
    pool's weights. When a deal ends (on any seat's move) every learner seat of the table gets its
    own chip change as the reward of its last decision, and the table is dealt anew at once.
``gae``
    Generalised advantage estimation along each seat's trajectory (``next`` links), in compiled code.
    Decisions of deals still under way have no return yet; the trainer keeps them for the next rollout.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, cast

import numpy as np
import torch
from numba import njit
from torch.nn import functional

from agents.heuristic_batch import BatchHeuristic
from agents.ppo import PolicyWeights, load_policy
from bourre_env.batch import BatchGame
from bourre_env.core import NUM_ACTIONS
from bourre_env.observation import OBS_SIZE
from bourre_env.privileged import HIDDEN_HAND_SIZE, hidden_hand_entries
from bourre_env.rules import MAX_HAND_SIZE

__all__ = [
    "LEARNER", "HEURISTIC", "RANDOM", "SNAPSHOT", "MASKED_LOGIT", "BatchRandom", "Collector", "PolicyNet",
    "PolicyOpponent", "SeatPool", "SparseBatch", "SparseStore", "StepRecord", "Transitions", "ValueNet",
    "gae", "gather_batch", "masked_logits", "sample_actions", "sparse_rows",
]

LEARNER, HEURISTIC, RANDOM, SNAPSHOT = 0, 1, 2, 3
"""Seat owner codes; snapshot slot ``j`` is ``SNAPSHOT + j``."""
MASKED_LOGIT = -1e9
"""Logit of an illegal action: its probability is exactly 0 and 0 * logit stays finite in the entropy."""


# ---------------------------------------------------------------------------- sparse observations
@njit(cache=True)
def _sparse_rows(obs: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, width = rows.shape[0], obs.shape[1]
    capacity = n * 128
    idx = np.empty(capacity, np.int16)
    val = np.empty(capacity, np.float32)
    counts = np.zeros(n, np.int64)
    k = 0
    for i in range(n):
        if k + width > capacity:
            capacity = max(2 * capacity, k + width)
            grown_idx = np.empty(capacity, np.int16)
            grown_idx[:k] = idx[:k]
            idx = grown_idx
            grown_val = np.empty(capacity, np.float32)
            grown_val[:k] = val[:k]
            val = grown_val
        r = obs[rows[i]]
        start = k
        for j in range(width):
            # written always, kept only when nonzero: no branch in the scan (twice as fast as testing first)
            x = r[j]
            idx[k] = j
            val[k] = x
            k += x != 0.0
        counts[i] = k - start
    return idx[:k].copy(), val[:k].copy(), counts


def sparse_rows(obs: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nonzero entries of ``obs[rows]`` as (column int16, value float32, count per row int64), row by row."""
    if obs.shape[1] > np.iinfo(np.int16).max:
        raise ValueError(f"observations of {obs.shape[1]} entries do not fit int16 column indices")
    return _sparse_rows(obs, np.ascontiguousarray(rows, dtype=np.int64))


@njit(cache=True)
def _gather(ptr: np.ndarray, idx: np.ndarray, val: np.ndarray, rows: np.ndarray, num_features: int,
            transpose: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n = rows.shape[0]
    offsets = np.empty(n, np.int64)
    total = 0
    for i in range(n):
        offsets[i] = total
        total += ptr[rows[i] + 1] - ptr[rows[i]]
    out_idx = np.empty(total, np.int64)
    out_val = np.empty(total, np.float32)
    k = 0
    for i in range(n):
        for q in range(ptr[rows[i]], ptr[rows[i] + 1]):
            out_idx[k] = idx[q]
            out_val[k] = val[q]
            k += 1
    if not transpose:
        empty = np.empty(0, np.int64)
        return out_idx, out_val, offsets, empty, np.empty(0, np.float32), empty
    # The same entries by column (a counting sort): the first layer's weight gradient is then a weighted sum of
    # rows of the output gradient per column, which embedding_bag computes as fast as the forward pass.
    t_off = np.zeros(num_features + 1, np.int64)
    for k in range(total):
        t_off[out_idx[k] + 1] += 1
    for j in range(num_features):
        t_off[j + 1] += t_off[j]
    fill = t_off[:num_features].copy()
    t_rows = np.empty(total, np.int64)
    t_val = np.empty(total, np.float32)
    for i in range(n):
        end = offsets[i + 1] if i + 1 < n else total
        for k in range(offsets[i], end):
            j = out_idx[k]
            t_rows[fill[j]] = i
            t_val[fill[j]] = out_val[k]
            fill[j] += 1
    return out_idx, out_val, offsets, t_rows, t_val, t_off[:num_features].copy()


class SparseBatch(NamedTuple):
    """A batch of observations as bags of (column, value) entries, for ``PolicyNet``."""

    idx: torch.Tensor  # (nnz,) int64 columns, row after row
    val: torch.Tensor  # (nnz,) float32 values
    offsets: torch.Tensor  # (rows,) int64 start of each row in idx
    t_rows: torch.Tensor | None  # the same entries by column, for the backward pass (None: no gradient needed)
    t_val: torch.Tensor | None
    t_offsets: torch.Tensor | None

    @property
    def rows(self) -> int:
        return int(self.offsets.shape[0])


def gather_batch(ptr: np.ndarray, idx: np.ndarray, val: np.ndarray, rows: np.ndarray, device: torch.device | str,
                 grad: bool, num_features: int = OBS_SIZE) -> SparseBatch:
    """Rows ``rows`` of a CSR store (``ptr``, ``idx``, ``val``) as a ``SparseBatch`` on ``device``; with ``grad``
    also by column, for the backward pass of the first layer."""
    parts = _gather(ptr, idx, val, np.ascontiguousarray(rows, dtype=np.int64), num_features, grad)
    idx_t, val_t, off_t, t_rows, t_val, t_off = (torch.from_numpy(a).to(device) for a in parts)
    if not grad:
        return SparseBatch(idx_t, val_t, off_t, None, None, None)
    return SparseBatch(idx_t, val_t, off_t, t_rows, t_val, t_off)


def batch_from_counts(idx: np.ndarray, val: np.ndarray, counts: np.ndarray, device: torch.device | str) -> SparseBatch:
    """A ``SparseBatch`` (no gradient) from ``sparse_rows``' output."""
    offsets = np.zeros(len(counts), np.int64)
    np.cumsum(counts[:-1], out=offsets[1:])
    return SparseBatch(torch.from_numpy(idx.astype(np.int64)).to(device), torch.from_numpy(val).to(device),
                       torch.from_numpy(offsets).to(device), None, None, None)


# ---------------------------------------------------------------------------- the network
class _SparseFirst(torch.autograd.Function):
    """``x @ W`` for sparse ``x`` given as bags; ``weight`` is ``W`` as (features, width)."""

    @staticmethod
    def forward(ctx: Any, weight: torch.Tensor, batch_idx: torch.Tensor, batch_val: torch.Tensor,
                offsets: torch.Tensor, t_rows: torch.Tensor, t_val: torch.Tensor,
                t_offsets: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(t_rows, t_val, t_offsets)
        return functional.embedding_bag(batch_idx, weight, offsets, mode="sum", per_sample_weights=batch_val)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        # torch's own embedding_bag backward sorts the indices on every call and costs as much as the rest of
        # the network; the batch arrives sorted by column already (SparseBatch.t_*).
        t_rows, t_val, t_offsets = ctx.saved_tensors
        weight_grad = functional.embedding_bag(t_rows, grad, t_offsets, mode="sum", per_sample_weights=t_val)
        return weight_grad, None, None, None, None, None, None


def _first_layer(inputs: int, width: int) -> tuple[torch.nn.Parameter, torch.nn.Parameter]:
    """Weight ``(inputs, width)`` and bias of a sparse first layer, initialised as torch's dense layer would be."""
    first = torch.nn.Linear(inputs, width)
    return (torch.nn.Parameter(first.weight.detach().t().contiguous()),
            torch.nn.Parameter(first.bias.detach().clone()))


def sparse_first_layer(weight: torch.Tensor, batch: SparseBatch) -> torch.Tensor:
    """``x @ weight`` for the sparse rows ``x`` of ``batch`` (no bias)."""
    if batch.t_rows is not None and torch.is_grad_enabled():
        return cast(torch.Tensor, _SparseFirst.apply(weight, batch.idx, batch.val, batch.offsets, batch.t_rows,
                                                     batch.t_val, batch.t_offsets))
    return functional.embedding_bag(batch.idx, weight, batch.offsets, mode="sum", per_sample_weights=batch.val)


class ValueNet(torch.nn.Module):
    """The privileged critic: its own trunk over the observation and the other seats' hands
    (``bourre_env.privileged``), for training only; the policy never reads it (``PolicyNet.value_net``)."""

    def __init__(self, hidden: Sequence[int], obs_size: int = OBS_SIZE, hidden_hand_size: int = HIDDEN_HAND_SIZE):
        super().__init__()
        weight, self.first_bias = _first_layer(obs_size + hidden_hand_size, hidden[0])  # one (obs + hands)-wide layer
        self.obs_weight = torch.nn.Parameter(weight.detach()[:obs_size].clone())
        self.hand_weight = torch.nn.Parameter(weight.detach()[obs_size:].clone())
        self.layers = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(hidden[:-1], hidden[1:], strict=True))
        self.head = torch.nn.Linear(hidden[-1], 1)

    def forward(self, batch: SparseBatch, hidden_batch: SparseBatch) -> torch.Tensor:
        if hidden_batch.rows != batch.rows:
            raise ValueError(f"{batch.rows} observation rows but {hidden_batch.rows} hidden-hand rows")
        h = functional.relu(sparse_first_layer(self.obs_weight, batch)
                            + sparse_first_layer(self.hand_weight, hidden_batch) + self.first_bias)
        for layer in self.layers:
            h = functional.relu(layer(h))
        return cast(torch.Tensor, self.head(h).squeeze(-1))


class PolicyNet(torch.nn.Module):
    """Actor and critic on one trunk: a sparse first layer then dense ReLU layers (see the module docstring)."""

    def __init__(self, hidden: Sequence[int], obs_size: int = OBS_SIZE, num_actions: int = NUM_ACTIONS,
                 privileged_critic: bool = False) -> None:
        super().__init__()
        if not hidden or any(w < 1 for w in hidden):
            raise ValueError(f"hidden: positive layer widths, got {tuple(hidden)}")
        self.hidden_sizes = tuple(int(w) for w in hidden)
        self.first_weight, self.first_bias = _first_layer(obs_size, hidden[0])
        self.layers = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(hidden[:-1], hidden[1:], strict=True))
        self.actor = torch.nn.Linear(hidden[-1], num_actions)
        self.critic = torch.nn.Linear(hidden[-1], 1)
        self.value_net = ValueNet(hidden, obs_size) if privileged_critic else None
        with torch.no_grad():  # a near-uniform first policy (CleanRL's small actor head)
            self.actor.weight.mul_(0.01)
            self.actor.bias.zero_()

    @property
    def obs_size(self) -> int:
        return int(self.first_weight.shape[0])

    @property
    def dense_layers(self) -> list[torch.nn.Linear]:
        """The hidden layers after the first, in order."""
        return [cast(torch.nn.Linear, layer) for layer in self.layers]

    def features(self, batch: SparseBatch) -> torch.Tensor:
        h = functional.relu(sparse_first_layer(self.first_weight, batch) + self.first_bias)
        for layer in self.layers:
            h = functional.relu(layer(h))
        return h

    def forward(self, batch: SparseBatch,
                hidden_batch: SparseBatch | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Unmasked action logits ``(rows, actions)`` and values ``(rows,)``. With a privileged critic
        (``value_net``) the values come from it and need ``hidden_batch``, the rows' hidden-hand features; the
        logits never depend on them."""
        h = self.features(batch)
        if self.value_net is None:
            return self.actor(h), self.critic(h).squeeze(-1)
        if hidden_batch is None:
            raise ValueError("this network's critic reads the hidden hands: pass hidden_batch")
        return self.actor(h), self.value_net(batch, hidden_batch)

    def policy_weights(self, meta: dict[str, Any]) -> PolicyWeights:
        """The actor as ``agents.ppo.PolicyWeights`` (dense layers, ``(out, in)`` weights)."""

        def numpy(t: torch.Tensor) -> np.ndarray:
            return t.detach().cpu().numpy().astype(np.float32, copy=True)

        hidden = [(numpy(self.first_weight.t()), numpy(self.first_bias))]
        hidden += [(numpy(layer.weight), numpy(layer.bias)) for layer in self.dense_layers]
        return PolicyWeights(tuple(hidden), (numpy(self.actor.weight), numpy(self.actor.bias)), "relu", meta)

    @classmethod
    def from_policy_weights(cls, weights: PolicyWeights) -> PolicyNet:
        """A network playing an exported actor (its critic is left at its initial weights, unused)."""
        if weights.activation != "relu" or not weights.hidden:
            raise ValueError(f"a snapshot must be a ReLU network with hidden layers, got {weights.activation!r} "
                             f"with {len(weights.hidden)} hidden layers")
        net = cls([w.shape[0] for w, _ in weights.hidden], obs_size=weights.obs_size)
        with torch.no_grad():
            net.first_weight.copy_(torch.from_numpy(weights.hidden[0][0].T.copy()))
            net.first_bias.copy_(torch.from_numpy(weights.hidden[0][1]))
            for layer, (w, b) in zip(net.dense_layers, weights.hidden[1:], strict=True):
                layer.weight.copy_(torch.from_numpy(w))
                layer.bias.copy_(torch.from_numpy(b))
            net.actor.weight.copy_(torch.from_numpy(weights.action[0]))
            net.actor.bias.copy_(torch.from_numpy(weights.action[1]))
        return net


def masked_logits(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    return logits.masked_fill(~masks, MASKED_LOGIT)


def sample_actions(masked: torch.Tensor, legal: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One action per row from the softmax of ``masked`` logits, by inverting the cumulative distribution with one
    uniform per row (four times faster than Gumbel noise on every logit). An illegal action has probability 0, a
    step of 0 in the cumulative sum, so it is never the first entry above the uniform."""
    cumulative = torch.softmax(masked, dim=1).cumsum(dim=1)
    u = torch.rand((masked.shape[0], 1), generator=generator, device=masked.device) * cumulative[:, -1:]
    actions = torch.searchsorted(cumulative, u, right=True).squeeze(1)
    # u can round up to the total: then the last legal action, not the index past the end
    last_legal = legal.shape[1] - 1 - legal.flip(1).to(torch.uint8).argmax(dim=1)
    return torch.minimum(actions, last_legal)


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

    def __init__(self, weights: PolicyWeights | str | Path, device: torch.device | str = "cpu",
                 name: str = "snapshot") -> None:
        policy = weights if isinstance(weights, PolicyWeights) else load_policy(weights)
        self.net = PolicyNet.from_policy_weights(policy).to(device).eval()
        self.device = device
        self.name = name

    @torch.no_grad()
    def act(self, observations: np.ndarray, masks: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        idx, val, counts = sparse_rows(observations[:, :self.net.obs_size], np.arange(len(observations)))
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
        chances = np.array([self.learner, self.heuristic + (0.0 if snapshots else self.snapshot), self.random,
                            self.snapshot if snapshots else 0.0])
        owners = rng.choice(4, size=(tables, num_players), p=chances / chances.sum()).astype(np.int64)
        snap = owners == SNAPSHOT
        if snapshots:
            owners[snap] += rng.integers(snapshots, size=int(snap.sum()))
        owners[np.arange(tables), rng.integers(num_players, size=tables)] = LEARNER
        return owners


# ---------------------------------------------------------------------------- the learner's decisions
class SparseStore:
    """Rows of sparse features as compressed sparse rows (int16 column, float32 value): row ``i`` is entries
    ``ptr[i]:ptr[i + 1]``. Arrays grow as needed; ``n`` rows are held."""

    def __init__(self, num_features: int, capacity: int = 1 << 14, nnz_per_row: int = 80) -> None:
        if num_features > np.iinfo(np.int16).max:
            raise ValueError(f"{num_features} features do not fit int16 column indices")
        self.num_features = num_features
        self.n = 0
        self.ptr = np.zeros(capacity + 1, np.int64)
        self.idx = np.zeros(capacity * nnz_per_row, np.int16)
        self.val = np.zeros(capacity * nnz_per_row, np.float32)

    def append(self, idx: np.ndarray, val: np.ndarray, counts: np.ndarray) -> None:
        """Add ``len(counts)`` rows, given as ``sparse_rows`` gives them."""
        rows, end = len(counts), int(self.ptr[self.n])
        if self.n + rows + 1 > len(self.ptr):
            ptr = np.zeros(max(2 * len(self.ptr), self.n + rows + 1), np.int64)
            ptr[:self.n + 1] = self.ptr[:self.n + 1]
            self.ptr = ptr
        if end + len(idx) > len(self.idx):
            size = max(2 * len(self.idx), end + len(idx))
            for name in ("idx", "val"):
                old = getattr(self, name)
                new = np.zeros(size, old.dtype)
                new[:end] = old[:end]
                setattr(self, name, new)
        self.idx[end:end + len(idx)] = idx
        self.val[end:end + len(idx)] = val
        np.cumsum(counts, out=self.ptr[self.n + 1:self.n + rows + 1])
        self.ptr[self.n + 1:self.n + rows + 1] += end
        self.n += rows

    def keep(self, kept: np.ndarray) -> None:
        """Keep only rows ``kept`` (increasing indices), in order."""
        counts = self.ptr[kept + 1] - self.ptr[kept]
        entries = np.repeat(self.ptr[kept] - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(
            counts.sum())
        self.idx[:len(entries)] = self.idx[entries]
        self.val[:len(entries)] = self.val[entries]
        self.ptr[0] = 0
        np.cumsum(counts, out=self.ptr[1:len(kept) + 1])
        self.n = len(kept)

    def batch(self, rows: np.ndarray, device: torch.device | str, grad: bool) -> SparseBatch:
        return gather_batch(self.ptr, self.idx, self.val, rows, device, grad, self.num_features)


class Transitions:
    """The learner's decisions, each linked to the same seat's next decision in the deal (see the module
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
        self.done = np.zeros(capacity, np.bool_)  # the seat's last decision of its deal
        self.next = np.full(capacity, -1, np.int64)  # the seat's next decision in the deal, -1: none yet or done
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
                new[:self.n] = old[:self.n]
                setattr(self, name, new)

    def append(self, idx: np.ndarray, val: np.ndarray, counts: np.ndarray, masks: np.ndarray, actions: np.ndarray,
               logp: np.ndarray, values: np.ndarray,
               hidden: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> np.ndarray:
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
        self.masks[lo:lo + rows] = masks
        self.actions[lo:lo + rows] = actions
        self.logp[lo:lo + rows] = logp
        self.values[lo:lo + rows] = values
        self.rewards[lo:lo + rows] = 0.0
        self.done[lo:lo + rows] = False
        self.next[lo:lo + rows] = -1
        self.stale[lo:lo + rows] = False
        self.n += rows
        return np.arange(lo, lo + rows)

    def batch(self, rows: np.ndarray, device: torch.device | str, grad: bool) -> SparseBatch:
        return self.obs.batch(rows, device, grad)

    def hidden_batch(self, rows: np.ndarray, device: torch.device | str, grad: bool) -> SparseBatch | None:
        """The hidden hands of decisions ``rows`` (None when the transitions do not keep them)."""
        return None if self.hidden is None else self.hidden.batch(rows, device, grad)

    def inputs(self, rows: np.ndarray, device: torch.device | str,
               grad: bool) -> tuple[SparseBatch, SparseBatch | None]:
        """What ``PolicyNet`` reads for decisions ``rows``: ``net(*transitions.inputs(rows, ...))``."""
        return self.batch(rows, device, grad), self.hidden_batch(rows, device, grad)

    def keep(self, which: np.ndarray) -> np.ndarray:
        """Keep only the decisions where ``which`` (bool, ``n``) holds, in order, marked stale; returns the new index
        of every old one (-1 if dropped). A kept decision's ``next`` must be kept too."""
        which = np.asarray(which[:self.n], dtype=np.bool_)
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
def _gae(next_: np.ndarray, done: np.ndarray, rewards: np.ndarray, values: np.ndarray, gamma: float, lam: float,
         advantages: np.ndarray, complete: np.ndarray) -> None:
    for i in range(next_.shape[0] - 1, -1, -1):
        if done[i]:
            advantages[i] = rewards[i] - values[i]
            complete[i] = True
            continue
        j = next_[i]
        if j < 0 or not complete[j]:  # the deal is still under way: no return yet
            advantages[i] = 0.0
            complete[i] = False
            continue
        if j <= i:
            raise ValueError("a decision's next decision must come after it")
        delta = rewards[i] + gamma * values[j] - values[i]
        advantages[i] = delta + gamma * lam * advantages[j]
        complete[i] = True


def gae(next_: np.ndarray, done: np.ndarray, rewards: np.ndarray, values: np.ndarray, gamma: float,
        lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Advantages, returns (advantages + values) and ``complete`` flags of decisions linked into trajectories by
    ``next_`` (-1: none) and ``done`` (the trajectory's last decision, whose successor value is 0).

    A decision is complete when its trajectory reaches a ``done`` decision; incomplete ones get 0."""
    n = len(next_)
    advantages = np.zeros(n, np.float32)
    complete = np.zeros(n, np.bool_)
    _gae(np.ascontiguousarray(next_, np.int64), np.ascontiguousarray(done, np.bool_),
         np.ascontiguousarray(rewards, np.float32), np.ascontiguousarray(values, np.float32), float(gamma),
         float(lam), advantages, complete)
    return advantages, advantages + np.where(complete, values, 0.0).astype(np.float32), complete


# ---------------------------------------------------------------------------- the rollout
class StepRecord(NamedTuple):
    """One step of one table size: what the tests replay through the AEC env."""

    seats: np.ndarray  # (tables,) the acting seat of every table
    owners: np.ndarray  # (tables,) who held it (LEARNER, HEURISTIC, RANDOM, SNAPSHOT + slot)
    actions: np.ndarray  # (tables,)
    rewards: np.ndarray  # (tables, num_players) chips of the deals that ended
    done: np.ndarray  # (tables,) the deal ended (the table already holds a new one)
    learner_rows: np.ndarray  # tables where the learner acted
    learner_ids: np.ndarray  # their decisions' indices in Transitions


class Collector:
    """Tables of every size in ``players``, stepped in turn, the learner's decisions written to ``transitions``.

    ``heuristic``: the player of the heuristic's seats (default: ``BatchHeuristic``); ``teacher``: a player with
    the same ``act(observations, masks)`` call that plays the learner's seats instead of the network (the
    imitation warm start records it; log-probabilities and values are then 0)."""

    def __init__(self, net: PolicyNet, players: Sequence[int], tables: int, pool: SeatPool, seed: int,
                 reward_scale: float, device: torch.device | str = "cpu", heuristic: Any = None,
                 teacher: Any = None) -> None:
        sizes = sorted(set(players))
        if tables < len(sizes):
            raise ValueError(f"tables: at least one per table size ({len(sizes)}), got {tables}")
        share = np.array([list(players).count(n) for n in sizes], dtype=np.float64)
        counts = np.maximum(1, np.floor(tables * share / share.sum()).astype(np.int64))
        counts[-1] += tables - counts.sum()
        seeds = np.random.SeedSequence([seed, 17]).generate_state(len(sizes) + 4)
        self.games = [BatchGame(int(b), seed=int(s), num_players=n)
                      for n, b, s in zip(sizes, counts, seeds[:len(sizes)], strict=True)]
        self.net, self.device, self.pool, self.reward_scale = net, device, pool, reward_scale
        self.rng = np.random.default_rng(seeds[-1])
        self.torch_rng = torch.Generator(device=device)
        self.torch_rng.manual_seed(int(seeds[-2]))
        self.random = BatchRandom(int(seeds[-3]))
        self.heuristic = heuristic if heuristic is not None else BatchHeuristic("default", int(seeds[-4]))
        self.teacher = teacher
        self.snapshots: list[PolicyOpponent] = []
        self.snapshot_paths: list[str] = []
        self.owners = [self.pool.draw(self.rng, g.batch_size, g.num_players, 0) for g in self.games]
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
        a freed slot (a table that held the old one plays the new one for the rest of that deal)."""
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
            new_code = np.array([LEARNER, HEURISTIC, RANDOM]
                                + [SNAPSHOT + kept.index(j) if j in kept else HEURISTIC
                                   for j in range(len(self.snapshots))])
            self.snapshot_paths = [self.snapshot_paths[j] for j in kept]
            self.snapshots = [self.snapshots[j] for j in kept]
            self.owners = [new_code[owners] for owners in self.owners]

    # ------------------------------------------------------------------ one step of one table size
    @torch.no_grad()
    def _learner_act(self, obs: np.ndarray, masks: np.ndarray, rows: np.ndarray,
                     hidden: tuple[np.ndarray, np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
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
        masked = masked_logits(logits, legal)
        actions_t = sample_actions(masked, legal, self.torch_rng)
        logp = torch.log_softmax(masked, dim=1).gather(1, actions_t[:, None]).squeeze(1)
        actions = actions_t.cpu().numpy()
        ids = self.transitions.append(idx, val, counts, mask_rows, actions, logp.cpu().numpy(),
                                      values.cpu().numpy(), hidden)
        return actions, ids

    def step_game(self, k: int) -> StepRecord:
        """One decision at every table of ``games[k]``: the learner's rows in one forward pass, each opponent's
        rows in one call; finished deals pay every learner seat and are dealt anew."""
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
            hidden = (hidden_hand_entries(game.states, learner_rows, game.num_players)
                      if self.transitions.hidden is not None else None)
            actions[learner_rows], learner_ids = self._learner_act(obs, masks, learner_rows, hidden)
            # link each seat's decisions into its trajectory
            previous = last[learner_rows, seats[learner_rows]]
            linked = previous >= 0
            self.transitions.next[previous[linked]] = learner_ids[linked]
            last[learner_rows, seats[learner_rows]] = learner_ids
        t2 = time.perf_counter()
        for code in np.unique(who[who != LEARNER]):
            rows = np.flatnonzero(who == code)
            player = (self.heuristic if code == HEURISTIC else self.random if code == RANDOM
                      else self.snapshots[code - SNAPSHOT])
            actions[rows] = player.act(obs[rows], masks[rows])
        t3 = time.perf_counter()
        rewards, done = game.step(actions)
        ended = np.flatnonzero(done)
        if ended.size:
            self._end_deals(k, ended, rewards[ended])
        t4 = time.perf_counter()
        self.seconds["env"] += (t1 - t0) + (t4 - t3)
        self.seconds["learner"] += t2 - t1
        self.seconds["opponents"] += t3 - t2
        self.stats["decisions"] += game.batch_size
        self.stats["learner_decisions"] += learner_rows.size
        return StepRecord(seats, who, actions, rewards, done, learner_rows, learner_ids)

    def _end_deals(self, k: int, ended: np.ndarray, chips: np.ndarray) -> None:
        """Pay the deals that ended at tables ``ended``: each learner seat's chips go to its last decision."""
        last, owners = self.last[k], self.owners[k]
        t = self.transitions
        final = last[ended]  # (ended, num_players)
        paid = final >= 0
        t.rewards[final[paid]] += chips[paid] * self.reward_scale
        t.done[final[paid]] = True
        learner = owners[ended] == LEARNER
        self.stats["learner_deals"] += int(learner.sum())
        self.stats["learner_chips"] += float(chips[learner].sum())
        self.stats["deals"] += len(ended)
        last[ended] = -1
        owners[ended] = self.pool.draw(self.rng, len(ended), owners.shape[1], len(self.snapshots))

    def collect(self, decisions: int) -> int:
        """Step every table size in turn until at least ``decisions`` learner decisions were added; returns how many."""
        start = self.transitions.n
        while self.transitions.n - start < decisions:
            for k in range(len(self.games)):
                self.step_game(k)
        return self.transitions.n - start

    def complete(self, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """GAE over the decisions held: (advantages, returns, complete flags)."""
        t = self.transitions
        n = t.n
        return gae(t.next[:n], t.done[:n], t.rewards[:n], t.values[:n], gamma, lam)

    def carry_over(self, complete: np.ndarray) -> np.ndarray:
        """Drop the decisions used (complete), keep those of deals under way for the next rollout; returns the new
        index of every old decision (-1: dropped)."""
        new_index = self.transitions.keep(~complete)
        for last in self.last:
            held = last >= 0
            last[held] = new_index[last[held]]
            if np.any(last[held] < 0):
                raise ValueError("carry_over: a seat's last decision was dropped while its deal is under way")
        return new_index
