"""Tournament: a pool of agents at mixed tables over fixed deals: payoffs, replacement advantages, OpenSkill ratings.

=================== ========================================================================
Import              ``from train.eval.tournament import tournament``
Call                ``tournament(["random", "heuristic", "heuristic:tight"], players=(5,), deals=500)``
Command line        ``bourre eval --tournament random heuristic heuristic:tight --players 5``
Result              ``TournamentReport``; ``save(folder)`` writes JSON, Markdown and a PNG per table size
=================== ========================================================================

Method
------
The deals are those of ``train.eval.duplicate.make_deals`` (same seed, same decks). For each deal a
*lineup* of ``N`` agents is drawn from ``default_rng([seed, N, 1])``: ``N`` distinct agents
when the pool has at least ``N``, otherwise every agent ``N // K`` times and ``N % K`` more
distinct ones, in a shuffled order. The deal is then played ``N`` times, the lineup rotated one
seat each time, so every lineup member holds every seat's cards once (each agent sits in each
seat position equally, and seat luck cancels within the deal). Agents are built per chunk of
``CHUNK_DEALS`` deals, seeded from ``(seed, N, chunk, agent, copy)``, and reset before every
deal; chunks run in ``workers`` processes (or as Ray tasks: ``backend="ray"``) and are combined in order.

One deal is one *match*. An agent's *score* in a match is its chips per deal (in antes),
averaged over its seats and the rotations.

Payoff matrices
---------------
``payoff[i][j]`` (``i != j``) is agent ``i``'s mean score over the matches in which agent ``j``
also sat: how ``i`` fares at tables with ``j``; the diagonal is ``i``'s mean score over all its
matches. It reads straight off the mixed tables, but when the pool is no larger than the table
every agent sits at every table and each row is constant (see below).

``margin[i][j]`` is the mean over the same matches of ``i``'s score minus ``j``'s: since both
held the cards of every seat of the deal, this is a duplicate comparison of ``i`` and ``j`` at
one table, and it removes the chips that leave the table (carried and bourré pots make a
single deal lose chips on the whole). It is antisymmetric with a zero diagonal, and it is the
matrix drawn in the heatmap. ``counts[i][j]`` is the number of matches behind both; entries are
``None`` where two agents never met.

Ratings and the order of the agents
-----------------------------------
OpenSkill's Plackett-Luce model (default parameters), one match at a time in deal order, each
agent a team of one, ranked by score (equal scores share a rank). It counts placings, not chips:
an agent that edges the others on most deals and loses heavily on a few is rated above one that
wins more chips in all.

When the pool has more agents than a table has seats, agents meet on different deals and at
different tables, and their chips do not compare directly; they are listed by ``mu - 3 * sigma``
(``ordinal``), a conservative skill estimate (``ranked_by == "ordinal"``).

When the pool has no more agents than seats, every agent sits at every table of every deal
(``every_agent_every_deal``). Their chips per deal then compare directly, on the same deals at the
same tables: a duplicate comparison, and the only one that counts what a deal is worth. Agents are
listed by ``chips`` (``ranked_by == "chips"``), and OpenSkill's columns stay beside them as a
placing count; ``margin[i][j]`` is the difference of two agents' chips. The payoff matrix would
only repeat each agent's chips along its row (every agent met every other on every deal), so the
Markdown report and ``bourre eval`` leave it out and say so; the JSON keeps it.

Replacement advantage
---------------------
Each deal is also played once at an *all-baseline table*: the ``baseline`` agent (the first
agent of the pool unless named; the command line uses the first) in every seat, built per chunk
and seeded from ``(seed, N, chunk, 2, seat)``, apart from the lineup's agents. An agent's
``replacement_advantage`` is the mean over its matches of its score minus the all-baseline
table's chips per seat on the same deal. Each lineup member held every seat of the deal once, so
this is, seat by seat, the agent's chips minus the baseline agent's chips in the same seat on
the same cards, the replacement advantage of ``train.eval.duplicate``; it is computed from integer
chip sums and has a t-interval with the match as the unit.

Why this form: ``train.eval.duplicate`` puts the candidate in one seat of an all-field table, but a
tournament has no field, and its tables are mixed by design. Replacing each lineup member by
the baseline agent at its own table would take ``N`` more games per member, ``N * N`` per deal:
a set of evaluations rather than one tournament (``bourre eval --candidate A --field X`` is that
measurement for one agent). One all-baseline table per deal costs ``1/N`` more games, as in the
evaluation, and gives every deal a par. The measure is then how many more chips per deal an
agent makes at the tournament's tables than the baseline agent makes among copies of itself on
the same cards. The par takes out the luck of the deals an agent happened to sit in (how many
chips leave a table varies from deal to deal), so agents that met on different deals compare
fairly, which their chips alone do not when the pool is larger than the table. Unlike the
evaluation's measure it credits an agent with the tablemates it drew, so the baseline agent
itself does not score 0 in general; it does when the pool is copies of one deterministic agent
that ignores its seed.

Sessions
--------
``tournament(..., session=K)`` (``bourre eval --tournament ... --session K``) makes each of the ``deals`` games a
*session* of ``K`` deals at one table with the pot carried, as ``train.eval.duplicate.evaluate(..., session=K)``
does (its Sessions section; the schedule is ``train.schedule``'s). Session ``k`` has the lineup of deal ``k`` and
starts on deal ``k``'s cards; the lineup keeps its seats for the whole session, each rotation and the all-baseline
table play the session through (agents are reset before each session, not each deal), and every table meets the same
cards deal by deal. A seat's *session chips* are its chip change over the session plus an equal share (``1 / N``) of
the pot left when it ends, so that the seats of every table sum to zero, less the rake (``train.schedule``: the pot
is the table's). Every chip figure stays in chips per deal: an agent's score in a session (its match) is its session
chips over ``K``, averaged over its seats and the rotations, and the payoff and margin matrices, the replacement
advantage and the all-baseline table's chips are taken from those scores; the intervals take the session as the
unit; the rates (pot won, played, bourré) are per seat and deal played. OpenSkill ranks the seats of each session by
their session chips: one placing per session, not per deal. Chunks hold ``train.schedule.games_per_chunk(K)``
sessions (about ``CHUNK_DEALS`` deals), with the agents built and seeded per chunk as above. Each table size reports
the mean pot left at a session's end over every table (``pot_left``) and the sessions that the pot bound cut short
(``sessions_cut``). The accounting is computed in ``N``-ths of a chip from integer sums divided once, so copies of
one deterministic agent still match their par exactly; ``session=1`` (single deals) is the tournament above, figure
for figure.

Duplicate specs in the pool (``["random", "random"]``) are allowed and named ``random#1``,
``random#2``: two copies of one agent show the noise floor of the ratings.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import bourre_env
from agents.base import Agent
from bourre_env import atomic_files
from train.eval.duplicate import (
    BOURRE,
    CHIPS,
    CHUNK_DEALS,
    NUM_OUTCOMES,
    PLAYED,
    WON,
    Deals,
    check_outcomes_fit,
    chunk_count,
    chunk_sizes,
    iter_deals,
    t_interval,
)
from train.eval.jobs import deal_done, run_jobs
from train.eval.report import Column, TextTable, ci_text, half_width, markdown_table, percent, signed, table_of
from train.schedule import (
    AgentSource,
    agent_label,
    agent_seed,
    build_agent,
    check_session,
    check_sources,
    games_per_chunk,
    play_game,
    table_rules,
)
from train.table import seated

__all__ = [
    "AgentResult",
    "TournamentReport",
    "TournamentTable",
    "draw_lineups",
    "games_text",
    "iter_lineups",
    "matrix_table",
    "pool_names",
    "rating_table",
    "tournament",
]


def games_text(session: int) -> str:
    """What a tournament's games are, after their number: ``deals``, or ``sessions of K deals``."""
    return "deals" if session == 1 else f"sessions of {session} deals"


def pool_names(pool: Sequence[AgentSource]) -> list[str]:
    """Display names: the spec (``agent_label``), with ``#k`` appended when a name appears more than once."""
    labels = [agent_label(source) for source in pool]
    names = []
    for i, spec in enumerate(labels):
        copies = [j for j, other in enumerate(labels) if other == spec]
        names.append(spec if len(copies) == 1 else f"{spec}#{copies.index(i) + 1}")
    return names


def draw_lineups(seed: int, players: int, pool_size: int, count: int) -> np.ndarray:
    """``(count, players)`` pool indices: one lineup per deal (see the module docstring)."""
    return np.concatenate(list(iter_lineups(seed, players, pool_size, count)))


def iter_lineups(seed: int, players: int, pool_size: int, count: int, per: int = CHUNK_DEALS) -> Iterator[np.ndarray]:
    """The rows of ``draw_lineups``, ``per`` at a time (a chunk's games: ``CHUNK_DEALS`` deals, or
    ``train.schedule.games_per_chunk(K)`` sessions), each chunk drawn when it is asked for; row ``k`` is the same
    whatever ``per`` is."""
    rng = np.random.default_rng([seed, players, 1])
    repeats, extra = divmod(players, pool_size)
    for start in range(0, count, per):
        lineups = np.empty((min(per, count - start), players), dtype=np.int64)
        for k in range(len(lineups)):
            order = rng.permutation(pool_size)
            lineup = (
                np.concatenate([np.tile(np.arange(pool_size), repeats), order[:extra]]) if repeats else order[:players]
            )
            lineups[k] = rng.permutation(lineup)
        yield lineups


@dataclasses.dataclass(frozen=True)
class _Job:
    pool: tuple[AgentSource, ...]
    baseline: AgentSource
    rule_options: dict[str, Any]  # num_players and deals_per_episode included
    seed: int
    chunk: int
    deals: Deals  # games: deals, or sessions
    lineups: np.ndarray  # (games, N)


def _run_job(job: _Job) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Outcomes of one chunk of games (deals or sessions), each summed over its game's deals: ``(games, rotation,
    member, 6)``, in rotation ``r`` lineup member ``j`` in seat ``(j + r) % N``, and the all-baseline table's
    ``(games, seat, 6)``; the pots left and the deals played ``(games, N + 1)``, the rotations then the all-baseline
    table."""
    n = job.lineups.shape[1]
    env = bourre_env.env(**job.rule_options)
    rules = env.unwrapped.rules
    session = rules.deals_per_episode
    instances: dict[tuple[int, int], Agent] = {}  # (pool index, copy within the lineup), built on first use

    def instance(agent: int, copy: int) -> Agent:
        if (agent, copy) not in instances:
            instances[agent, copy] = build_agent(job.pool[agent], agent_seed(job.seed, n, job.chunk, 1, agent, copy))
        return instances[agent, copy]

    # Its own instances, so that the mixed tables play as they would without it.
    baseline_table = [build_agent(job.baseline, agent_seed(job.seed, n, job.chunk, 2, s)) for s in range(n)]
    games = len(job.deals)
    out = np.empty((games, n, n, NUM_OUTCOMES), dtype=np.int64)
    baseline = np.empty((games, n, NUM_OUTCOMES), dtype=np.int64)
    pots = np.empty((games, n + 1), dtype=np.int64)
    played = np.empty((games, n + 1), dtype=np.int64)
    first = job.chunk * games_per_chunk(session)
    kind = "deal" if session == 1 else "session"
    for k, lineup in enumerate(job.lineups):
        members = [instance(int(a), int(np.count_nonzero(lineup[:j] == a))) for j, a in enumerate(lineup)]
        deal_name = f"{kind} {first + k} of seed {job.seed} at {n} players"
        labels = [agent_label(job.pool[int(a)]) for a in lineup]
        game = job.deals.deal(k, rules)
        for r in range(n):
            result = play_game(env, game, seated(members, r), seated(labels, r), deal_name)
            out[k, r] = result.rows[(np.arange(n) + r) % n]  # back to member order
            pots[k, r], played[k, r] = result.pot_left, result.deals_played
        result = play_game(env, game, baseline_table, [agent_label(job.baseline)] * n, deal_name)
        baseline[k] = result.rows
        pots[k, n], played[k, n] = result.pot_left, result.deals_played
        deal_done(session)
    return out, baseline, pots, played


@dataclasses.dataclass(frozen=True)
class AgentResult:
    """One agent at one table size."""

    name: str
    spec: str
    matches: int
    chips: float | None  # mean score per match: chips per deal (None if the agent never sat)
    chips_ci95: tuple[float, float] | None
    pot_win_rate: float
    play_rate: float
    bourre_rate_dealt: float
    replacement_advantage: float | None  # score minus the all-baseline table's chips per seat, same deals
    replacement_advantage_ci95: tuple[float, float] | None
    mu: float
    sigma: float
    ordinal: float  # mu - 3 sigma


@dataclasses.dataclass(frozen=True)
class TournamentTable:
    """Results at one table size; ``agents`` sorted by ``ordinal``, matrices in pool order. With sessions
    (``session > 1``) ``deals`` and the agents' ``matches`` count sessions, and every chip figure is still in chips
    per deal (a seat's session chips, its share of the pot left included, over ``session``)."""

    players: int
    deals: int  # games: deals, or sessions of ``session`` deals
    agents: list[AgentResult]
    names: list[str]  # pool order: the rows and columns of the matrices
    payoff: list[list[float | None]]  # row agent's chips per deal at tables with the column agent
    margin: list[list[float | None]]  # row minus column agent's chips per deal, at the same tables
    counts: list[list[int]]
    baseline_chips: float  # the all-baseline table: chips per seat and deal
    baseline_chips_ci95: tuple[float, float] | None
    every_agent_every_deal: bool  # the pool fits at one table: every agent played every deal at every table
    ranked_by: str  # "chips" (every agent every deal) or "ordinal" (OpenSkill mu - 3 sigma): the order of agents
    session: int = 1  # deals per game: 1, single deals; K, sessions of K deals with the pot carried
    sessions_cut: int = 0  # sessions (of the N + 1 tables' games) that the pot bound ended early
    pot_left: float | None = None  # with sessions: chips left in the pot at a session's end, mean over every table

    @property
    def game(self) -> str:
        """What one match is: ``deal``, or ``session``."""
        return "deal" if self.session == 1 else "session"

    def games_text(self) -> str:
        """The games played, for titles: ``500 deals``, or ``100 sessions of 5 deals``."""
        return f"{self.deals} {games_text(self.session)}"

    def ranking_note(self) -> str:
        """What the order of the agents and the ratings mean, in one sentence for the reader."""
        if self.ranked_by == "chips":
            return (
                f"every agent sat at every table of every {self.game}, so agents are ranked by chips per deal (a "
                f"duplicate comparison); OpenSkill counts placings per {self.game}, not chips, and may order them "
                "otherwise"
            )
        return (
            f"ranked by OpenSkill mu - 3 sigma (Plackett-Luce over each {self.game}'s placings by chips: how often an "
            "agent places above another, not by how much)"
        )

    def payoff_note(self) -> str | None:
        """Why the payoff matrix is left out, or None where it is shown."""
        if not self.every_agent_every_deal:
            return None
        return (
            f"No payoff matrix: every agent met every other on every {self.game}, so each of its rows would repeat "
            "the agent's chips per deal; the margin below compares them."
        )

    def session_line(self) -> str | None:
        """With sessions, what became of the pots at this table size (the mean pot left, shared by the table, and
        the sessions the pot bound cut), in one line; None for single deals."""
        if self.session == 1 or self.pot_left is None:
            return None
        return (
            f"{self.players} players, {self.games_text()}: {self.pot_left:,.1f} chips left in the pot at a "
            "session's end on average, shared equally by the table's seats; "
            f"{self.sessions_cut} of {self.deals * (self.players + 1)} sessions cut short at the pot bound"
        )

    @classmethod
    def of(
        cls,
        pool: Sequence[str],
        lineups: np.ndarray,
        outcomes: np.ndarray,
        baseline: np.ndarray,
        pots: np.ndarray | None = None,
        played: np.ndarray | None = None,
        session: int = 1,
    ) -> TournamentTable:
        """From the lineups, the outcomes ``(games, rotation, member, 6)`` and the all-baseline table's ``(games,
        seat, 6)``, each summed over its game's deals; with sessions (``session > 1``), the pots left and the deals
        played ``(games, N + 1)`` (the rotations, then the all-baseline table: the pot left is shared by the table's
        seats, ``train.schedule``)."""
        from openskill.models import PlackettLuce  # local: only the tournament needs it

        k, (d, n) = len(pool), lineups.shape
        sessions = session > 1
        if not sessions or pots is None:
            pots = np.zeros((d, n + 1), dtype=np.int64)  # a single deal's pot left is chips lost (train.schedule)
        if played is None:
            played = np.full((d, n + 1), session, dtype=np.int64)
        names = pool_names(pool)
        present = np.zeros((d, k), dtype=bool)
        score = np.zeros((d, k))
        replacement = np.zeros((d, k))
        par_sum = baseline[..., CHIPS].sum(axis=1)  # (d,) chips of the all-baseline table
        base_pot = pots[:, n]  # (d,) what it left in the pot
        rotation_pots = pots[:, :n].sum(axis=1)  # (d,) each slot's share of these, in N-ths: one per rotation
        # In N-ths of a chip (a seat's share of the pot is pot / N): integers up to one division, so that a
        # single deal's figures are exactly the older chips / (slots * N) and copies of one agent match their par.
        par = n * (par_sum + base_pot)  # the whole all-baseline table's session chips
        seat_deals = np.zeros(k, dtype=np.int64)  # each agent's seats times the deals they sat
        for a in range(k):
            seated = lineups == a  # (d, n) members that are agent a
            present[:, a] = seated.any(axis=1)
            chips = (outcomes[..., CHIPS] * seated[:, None, :]).sum(axis=(1, 2))
            slots = seated.sum(axis=1)
            shares = n * chips + slots * rotation_pots
            per = np.maximum(n * slots * n * session, 1)
            score[:, a] = np.where(present[:, a], shares / per, 0.0)
            # Each slot held every seat once: its par is the whole all-baseline table.
            replacement[:, a] = np.where(present[:, a], (shares - slots * par) / per, 0.0)
            seat_deals[a] = int((slots * played[:, :n].sum(axis=1)).sum())
        payoff: list[list[float | None]] = [[None] * k for _ in range(k)]
        margin: list[list[float | None]] = [[None] * k for _ in range(k)]
        counts = [[0] * k for _ in range(k)]
        for i in range(k):
            for j in range(k):
                together = present[:, i] & present[:, j]
                counts[i][j] = int(together.sum())
                if counts[i][j]:
                    payoff[i][j] = float(score[together, i].mean())
                    margin[i][j] = float((score[together, i] - score[together, j]).mean())

        model = PlackettLuce()
        ratings = [model.rating(name=name) for name in names]
        for m in range(d):
            seated = [a for a in range(k) if present[m, a]]
            # Rank 1 is best; equal scores share a rank.
            ranks = [1.0 + sum(float(score[m, b] > score[m, a]) for b in seated) for a in seated]
            for a, (new,) in zip(seated, model.rate([[ratings[a]] for a in seated], ranks=ranks), strict=True):
                ratings[a] = new

        results = []
        for a in range(k):
            rows = outcomes.transpose(0, 2, 1, 3)[lineups == a]  # (member slots, rotations, 6)
            slots = max(int(seat_deals[a]), 1)  # rates per seat and deal played
            sat = present[:, a]
            results.append(
                AgentResult(
                    name=names[a],
                    spec=pool[a],
                    matches=int(sat.sum()),
                    chips=float(score[sat, a].mean()) if sat.any() else None,
                    chips_ci95=t_interval(score[sat, a]),
                    pot_win_rate=int(rows[..., WON].sum()) / slots,
                    play_rate=int(rows[..., PLAYED].sum()) / slots,
                    bourre_rate_dealt=int(rows[..., BOURRE].sum()) / slots,
                    replacement_advantage=float(replacement[sat, a].mean()) if sat.any() else None,
                    replacement_advantage_ci95=t_interval(replacement[sat, a]),
                    mu=float(ratings[a].mu),
                    sigma=float(ratings[a].sigma),
                    ordinal=float(ratings[a].ordinal()),
                )
            )
        base_chips = (par_sum + base_pot) / (n * session)  # the all-baseline table: chips per seat and deal
        # The pool fits at one table: chips compare directly (module docstring), and the order follows them.
        every_deal = bool(present.all())
        results.sort(key=(lambda r: -(r.chips or 0.0)) if every_deal else (lambda r: -r.ordinal))
        return cls(
            players=n,
            deals=d,
            agents=results,
            names=names,
            payoff=payoff,
            margin=margin,
            counts=counts,
            baseline_chips=float(base_chips.mean()),
            baseline_chips_ci95=t_interval(base_chips),
            every_agent_every_deal=every_deal,
            ranked_by="chips" if every_deal else "ordinal",
            session=session,
            sessions_cut=int((played < session).sum()) if sessions else 0,
            pot_left=float(pots.mean()) if sessions else None,
        )


@dataclasses.dataclass(frozen=True)
class TournamentReport:
    """A tournament: the settings and one ``TournamentTable`` per table size. ``deals`` counts games: single
    deals, or sessions of ``session`` deals."""

    pool: list[str]
    baseline: str  # the agent of the all-baseline table
    seed: int
    deals: int
    rule_options: dict[str, Any]
    chunk_deals: int
    tables: list[TournamentTable]
    session: int = 1  # deals per game: 1, single deals; K, sessions of K deals with the pot carried

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_markdown(self) -> str:
        games = "deals" if self.session == 1 else "sessions"
        lines = [
            f"# Tournament: {', '.join(self.pool)}",
            "",
            f"{self.deals} {games_text(self.session)} per table size, each played once per seat rotation and once "
            f"at a table of {self.baseline} only; seed {self.seed}"
            + (f"; rules {self.rule_options}" if self.rule_options else "")
            + ".",
            "",
        ]
        if self.session > 1:
            lines += [
                f"Each session is {self.session} deals at one table, the pot carried from deal to deal. Chips per "
                "deal are a seat's chips over its session, its equal share of the pot left at the session's end "
                f"included, over {self.session}; intervals take the session as the unit, rates are per seat and "
                "deal played, and OpenSkill ranks the seats of each session by their session chips.",
                "",
            ]
        for t in self.tables:
            lines += [f"## {t.players} players", "", *markdown_table(rating_table(self, t))]
            note = t.ranking_note()
            lines += [
                "",
                f"Order: {note}.",
                "",
                f"Replacement: the agent's chips per deal minus {self.baseline}'s in the same seat at a "
                f"table of {self.baseline} only, on the same {games} ({t.baseline_chips:+.3f} chips per "
                "seat and deal there).",
            ]
            session_line = t.session_line()
            if session_line is not None:
                lines += ["", f"Pots: {session_line}."]
            payoff_note = t.payoff_note()
            matrices = [
                (
                    f"Margin: chips per deal of the row agent minus the column agent's, on the same {games} at the "
                    "same tables.",
                    t.margin,
                )
            ]
            if payoff_note is None:
                title = (
                    "Payoff: chips per deal of the row agent at tables with the column agent "
                    "(diagonal: over all its tables)."
                )
                matrices.insert(0, (title, t.payoff))
            else:
                lines += ["", payoff_note]
            for title, matrix in matrices:
                lines += ["", title, "", *markdown_table(matrix_table(t, matrix))]
            lines.append("")
        return "\n".join(lines)

    def plot(self, table: TournamentTable, path: str | Path) -> None:
        """A heatmap of one table size's ``margin`` matrix, written as PNG."""
        import matplotlib

        matplotlib.use("Agg")  # files only: no display on servers and in workers
        import matplotlib.pyplot as plt

        values = np.array([[np.nan if v is None else v for v in row] for row in table.margin], dtype=float)
        k = len(table.names)
        # Symmetric limits: the matrix is antisymmetric, so white means even.
        limit = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.0
        limit = limit if limit > 0 else 1.0
        fig, ax = plt.subplots(figsize=(2.2 + 1.1 * k, 1.6 + 0.9 * k))
        image = ax.imshow(values, cmap="RdBu", vmin=-limit, vmax=limit)
        ax.set_xticks(range(k), table.names, rotation=30, ha="right")
        ax.set_yticks(range(k), table.names)
        ax.set_xlabel("minus chips of")
        ax.set_ylabel("chips of")
        ax.set_title(f"{table.players} players, {table.games_text()}: chips per deal, row minus column")
        for i in range(k):
            for j in range(k):
                if np.isfinite(values[i, j]):
                    ax.text(
                        j,
                        i,
                        f"{values[i, j]:+.2f}",
                        ha="center",
                        va="center",
                        fontsize=9,
                        color="white" if abs(values[i, j]) > 0.6 * limit else "black",
                    )
        fig.colorbar(image, ax=ax, label="chips per deal (antes)")
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)

    def save(self, folder: str | Path) -> list[Path]:
        """Write ``tournament.json``, ``tournament.md`` and ``tournament_{N}p.png``; the paths written. ``ValueError``
        if ``folder`` is a file."""
        out = Path(folder)
        if out.exists() and not out.is_dir():
            raise ValueError(f"{out} is a file; give a folder (the results are written into it)")
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "tournament.json", out / "tournament.md"]
        atomic_files.write_text(paths[0], json.dumps(self.to_dict(), indent=2) + "\n")
        atomic_files.write_text(paths[1], self.to_markdown())
        for t in self.tables:
            paths.append(out / f"tournament_{t.players}p.png")
            with atomic_files.replacing(paths[-1], ".png") as tmp:
                self.plot(t, tmp)
        return paths


def tournament(
    pool: Sequence[AgentSource],
    players: int | Sequence[int] = (5,),
    deals: int = 500,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    rule_options: Mapping[str, Any] | None = None,
    baseline: AgentSource | None = None,
    backend: str = "local",
    address: str | None = None,
    connect_timeout: float = 60.0,
    session: int = 1,
) -> TournamentReport:
    """Mixed tables of ``pool`` agents over fixed deals at each table size (see the module docstring).

    Agents are specs, factories ``seed -> agent`` (agent classes) or instances, as in
    ``train.eval.duplicate.evaluate`` (an instance plays every copy of itself at a table: ``workers=1`` only).
    ``baseline`` is the agent of the all-baseline table behind the replacement advantage (default: ``pool[0]``);
    ``backend``, ``address`` and ``connect_timeout`` choose where chunks run, as in
    ``train.eval.duplicate.evaluate``. ``session``: each of the ``deals`` games is a session of that many deals at
    one table with the pot carried (Sessions in the module docstring: chips stay per deal, OpenSkill ranks the seats
    of each session by their session chips); 1, single deals."""
    pool = list(pool)
    if len(pool) < 2:
        raise ValueError(f"pool: a tournament needs at least 2 agents, got {pool}")
    sizes = [players] if isinstance(players, int) else list(players)
    if not sizes or deals < 1 or seed < 0:
        raise ValueError(f"need at least one table size, deals >= 1 and seed >= 0; got {sizes}, {deals}, {seed}")
    session = check_session(session)
    reference = pool[0] if baseline is None else baseline
    check_sources([*pool, reference], workers, backend)
    options = dict(rule_options or {})
    rules = [table_rules(n, options, session) for n in sizes]
    # The lineups are kept for the statistics, one row of N pool indices per game, and the pots left and deals
    # played, N + 1 of each.
    check_outcomes_fit(deals, sizes, extra_per_deal=8 * max(sizes) + 16 * (max(sizes) + 1))
    lineup_chunks: list[list[np.ndarray]] = [[] for _ in sizes]
    per_chunk = games_per_chunk(session)

    def jobs() -> Iterator[_Job]:
        for i, (n, table_rule) in enumerate(zip(sizes, rules, strict=True)):
            chunk_lineups = iter_lineups(seed, n, len(pool), deals, per_chunk)
            for chunk, (chunk_deals, lineups) in enumerate(
                zip(iter_deals(seed, table_rule, deals), chunk_lineups, strict=True)
            ):
                lineup_chunks[i].append(lineups)
                job_options = {**options, "num_players": n, "deals_per_episode": session}
                yield _Job(tuple(pool), reference, job_options, seed, chunk, chunk_deals, lineups)

    chunks = chunk_count(deals, session)
    labels = [agent_label(source) for source in pool]
    results = run_jobs(
        _run_job,
        jobs(),
        chunk_sizes(deals, len(sizes), session),
        workers,
        progress,
        "tournament",
        backend,
        address,
        total=deals * session * len(sizes),
        connect_timeout=connect_timeout,
    )
    tables = []
    for i in range(len(sizes)):
        mine = results[i * chunks : (i + 1) * chunks]  # jobs go table size by table size, chunk by chunk
        tables.append(
            TournamentTable.of(
                labels,
                np.concatenate(lineup_chunks[i]),
                np.concatenate([r[0] for r in mine]),
                np.concatenate([r[1] for r in mine]),
                pots=np.concatenate([r[2] for r in mine]),
                played=np.concatenate([r[3] for r in mine]),
                session=session,
            )
        )
    return TournamentReport(
        pool=labels,
        baseline=agent_label(reference),
        seed=seed,
        deals=deals,
        rule_options=options,
        chunk_deals=CHUNK_DEALS,
        tables=tables,
        session=session,
    )


# ---------------------------------------------------------------------------- tables
def rating_table(report: TournamentReport, t: TournamentTable, compact: bool = False) -> TextTable:
    """The agents of one table size, best rated first; ``compact``: intervals as half-widths."""
    interval: Callable[[Sequence[float] | None], str] = half_width if compact else (lambda ci: ci_text(ci, "-"))
    vs = f"all-{report.baseline}"
    columns: list[Column[tuple[int, AgentResult]]] = [
        Column("rank", "#", lambda r: str(r[0])),
        Column("agent", "agent", lambda r: r[1].name, right=False),
        Column("mu", "mu", lambda r: f"{r[1].mu:.2f}"),
        Column("sigma", "sigma", lambda r: f"{r[1].sigma:.2f}"),
        Column("mu - 3 sigma", "mu-3sig", lambda r: f"{r[1].ordinal:.2f}"),
        Column("chips/deal", "chips", lambda r: signed(r[1].chips)),
        Column("95% CI", "+-95%", lambda r: interval(r[1].chips_ci95)),
        Column(f"replacement vs {vs}", f"vs {vs}", lambda r: signed(r[1].replacement_advantage)),
        Column("95% CI", "+-95%", lambda r: interval(r[1].replacement_advantage_ci95)),
        Column("matches", "deals" if t.session == 1 else "sessions", lambda r: str(r[1].matches)),
        Column("pot won", "pot won", lambda r: percent(r[1].pot_win_rate)),
        Column("played", "played", lambda r: percent(r[1].play_rate)),
    ]
    return table_of(columns, list(enumerate(t.agents, 1)), compact)


def matrix_table(t: TournamentTable, matrix: list[list[float | None]]) -> TextTable:
    """A matrix of one table size (``t.payoff`` or ``t.margin``): rows and columns in pool order."""
    return TextTable(
        ["", *t.names],
        [False] + [True] * len(t.names),
        [[name, *(signed(v) for v in row)] for name, row in zip(t.names, matrix, strict=True)],
    )
