"""Generation: self-play deals where the search acts for some seats, recording what it found at each decision.

A job is one chunk of fixed deals (``train.eval.duplicate.iter_deals``) at one table size, played by the table's
loop (``train.table.drive``). In deal ``k`` of chunk ``c`` the search holds ``search_seats`` consecutive seats from seat
``(c * CHUNK_DEALS + k) % N``, so every seat takes its turn; the network (``agents.ppo``, greedy) plays every
other decision. At a search seat each decision with more than one legal action is searched with probability
``search_share``: the search's value of every candidate (``PIMCAgent.action_values``) is recorded with the
observation (sparse), the legal mask, and, once the deal is over, the seat's chips for the deal; the search then
plays its best candidate, as ``PIMCAgent.act`` would. Every agent is seeded from the run's seed, the round, the
table size, the chunk and the seat, so a round's data do not depend on the number of workers.
"""

from __future__ import annotations

import dataclasses
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

import agents
import bourre_env
from agents.base import legal_actions
from agents.ppo import PPOAgent, cached_policy
from agents.search.pimc import PIMCAgent
from bourre_env import core
from bourre_env.atomic_files import replacing
from bourre_env.observation import OBS_SIZE
from train.eval.duplicate import CHUNK_DEALS, Deals, iter_deals
from train.eval.jobs import run_jobs
from train.learning.policy_net import SparseStore, sparse_rows
from train.schedule import agent_seed, table_rules
from train.table import CHIPS, Decision, drive, game

__all__ = ["GenerationJob", "RoundData", "generate", "play_chunk", "searched_action"]


@dataclasses.dataclass
class RoundData:
    """Searched decisions: sparse observations (CSR rows), legal masks, the search's value of each candidate action
    (NaN for the actions it did not search), and the searching seat's chips for the deal."""

    ptr: np.ndarray  # (n + 1,) int64
    idx: np.ndarray  # (nnz,) int16 observation columns
    val: np.ndarray  # (nnz,) float32
    masks: np.ndarray  # (n, NUM_ACTIONS) bool
    values: np.ndarray  # (n, NUM_ACTIONS) float32, NaN where not a candidate
    chips: np.ndarray  # (n,) float32
    players: np.ndarray  # (n,) int8 table size of each decision
    deals: int = 0  # deals played

    def __len__(self) -> int:
        return len(self.chips)

    @classmethod
    def concatenate(cls, parts: list[RoundData]) -> RoundData:
        ends = np.cumsum([0] + [int(p.ptr[-1]) for p in parts])
        ptr = np.concatenate([np.zeros(1, np.int64)] + [p.ptr[1:] + end for p, end in zip(parts, ends, strict=False)])
        return cls(
            ptr,
            np.concatenate([p.idx for p in parts]),
            np.concatenate([p.val for p in parts]),
            np.concatenate([p.masks for p in parts]),
            np.concatenate([p.values for p in parts]),
            np.concatenate([p.chips for p in parts]),
            np.concatenate([p.players for p in parts]),
            sum(p.deals for p in parts),
        )

    def store(self) -> SparseStore:
        """The observations as the batched trainer's ``SparseStore``, for ``PolicyNet`` batches."""
        out = SparseStore(OBS_SIZE, capacity=max(len(self), 1))
        out.append(self.idx, self.val, np.diff(self.ptr))
        return out

    def save(self, path: Path, key: str) -> None:
        """Written atomically, with ``key`` (what generated it) for ``load`` to check."""
        arrays = {f.name: np.asarray(getattr(self, f.name)) for f in dataclasses.fields(self)}
        with replacing(path, suffix=".npz") as tmp:
            np.savez_compressed(tmp, key=np.array(key), **arrays)  # type: ignore[arg-type]  # numpy's stub

    @classmethod
    def load(cls, path: Path, key: str | None = None) -> RoundData | None:
        """The data saved at ``path`` (by the generation ``key``, when given), else None (absent, damaged or
        another generation's)."""
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                if key is not None and str(data["key"]) != key:
                    return None
                a = {f.name: np.asarray(data[f.name]) for f in dataclasses.fields(cls)}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            return None
        return cls(a["ptr"], a["idx"], a["val"], a["masks"], a["values"], a["chips"], a["players"], int(a["deals"]))


@dataclasses.dataclass(frozen=True)
class GenerationJob:
    search: str  # the expert's spec, policy file filled in
    policy: str  # the network's policy file
    players: int
    seed: int  # the round's seed
    chunk: int
    deals: Deals
    search_seats: int
    search_share: float


def searched_action(expert: PIMCAgent, obs: dict[str, np.ndarray], rows: list[tuple[np.ndarray, ...]]) -> int:
    """The search's action at a decision; its observation, mask and candidate values go to ``rows`` (not when it
    has only one candidate: nothing to learn there)."""
    action, found = expert.decide(obs)
    if found:  # else one candidate: no search
        values = np.full(core.NUM_ACTIONS, np.nan, np.float32)
        values[list(found)] = list(found.values())
        rows.append((np.asarray(obs["observation"], np.float32), np.asarray(obs["action_mask"], bool), values))
    return action  # what PIMCAgent.act plays: the first best, or with z > 0 the gated choice


class _Players:
    """Who answers each decision of a chunk's deals: the search at its seats (sometimes, recording what it found into
    ``rows``, the seat into ``seats_of_rows``), the network elsewhere."""

    def __init__(self, job: GenerationJob, network: PPOAgent, experts: list[PIMCAgent]) -> None:
        self.job = job
        self.network = network
        self.experts = experts
        self.draws = np.random.default_rng([job.seed, job.players, job.chunk, 0])
        self.rows: list[tuple[np.ndarray, ...]] = []
        self.searching: set[int] = set()  # the search's seats in the deal under way
        self.seats_of_rows: list[int] = []  # the seat of each row of the deal under way

    def __call__(self, decision: Decision) -> int:
        obs, seat = decision.observation, decision.seat
        if seat in self.searching and legal_actions(obs).size > 1 and self.draws.random() < self.job.search_share:
            before = len(self.rows)
            action = searched_action(self.experts[seat], obs, self.rows)
            self.seats_of_rows += [seat] * (len(self.rows) - before)
        else:
            action = self.network.act(obs)
        return int(action)


def play_chunk(job: GenerationJob) -> RoundData:
    """Play one chunk of deals (module docstring); the searched decisions."""
    n = job.players
    env = bourre_env.env(num_players=n)
    network = PPOAgent(cached_policy(job.policy), seed=0)
    experts: list[PIMCAgent] = []
    for seat in range(n):
        expert = agents.make(job.search, agent_seed(job.seed, n, job.chunk, 1 + seat))
        assert isinstance(expert, PIMCAgent)  # Args.validate checks the spec
        experts.append(expert)
    players = _Players(job, network, experts)
    rows = players.rows
    chips: list[float] = []
    rules = env.unwrapped.rules
    for k in range(len(job.deals)):
        first = (job.chunk * CHUNK_DEALS + k) % n
        players.searching = {(first + j) % n for j in range(job.search_seats)}
        players.seats_of_rows = []
        labels = [job.search if seat in players.searching else f"ppo:{job.policy}" for seat in range(n)]
        deal_name = f"deal {job.chunk * CHUNK_DEALS + k} of seed {job.seed} at {n} players"
        outcome = drive(game(env, job.deals.deal(k, rules), labels, deal_name), players)
        chips += [float(outcome[s, CHIPS]) for s in players.seats_of_rows]
    count = len(rows)
    dense = np.stack([r[0] for r in rows]) if count else np.zeros((0, OBS_SIZE), np.float32)
    idx, val, counts = sparse_rows(dense, np.arange(count))
    ptr = np.zeros(count + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    return RoundData(
        ptr,
        idx,
        val,
        np.stack([r[1] for r in rows]) if count else np.zeros((0, core.NUM_ACTIONS), bool),
        np.stack([r[2] for r in rows]) if count else np.zeros((0, core.NUM_ACTIONS), np.float32),
        np.asarray(chips, np.float32),
        np.full(count, n, np.int8),
        len(job.deals),
    )


def generate(
    search: str,
    policy: Path,
    players: tuple[int, ...],
    deals: int,
    seed: int,
    search_seats: int,
    search_share: float,
    workers: int,
    backend: str,
    address: str | None,
    progress: bool,
    desc: str,
) -> RoundData:
    """``deals`` deals at each table size of ``players``, as jobs of ``CHUNK_DEALS`` deals through ``run_jobs``."""

    def jobs() -> Iterator[GenerationJob]:
        for n in players:
            for chunk, chunk_deals in enumerate(iter_deals(seed, table_rules(n, {}), deals)):
                yield GenerationJob(search, str(policy), n, seed, chunk, chunk_deals, search_seats, search_share)

    sizes = [min(CHUNK_DEALS, deals - start) for _ in players for start in range(0, deals, CHUNK_DEALS)]
    parts = run_jobs(play_chunk, jobs(), sizes, workers, progress, desc, backend, address, total=sum(sizes))
    return RoundData.concatenate(parts)
