"""Duplicate evaluation: a candidate agent against a field, every deal played once from every seat.

This docstring is the page that documents the evaluation.

=================== ========================================================================
Import              ``from train.eval.duplicate import evaluate``
Call                ``evaluate("heuristic", "random", players=(4, 7), deals=500, seed=0, workers=2)``
Command line        ``bourre eval --candidate heuristic --field random --players 4 7 --deals 500``
Result              ``EvalReport`` (a dataclass; ``to_dict()`` is JSON-serialisable)
=================== ========================================================================

Method
------
For each table size ``N`` the seed fixes ``deals`` deals: a shuffled deck, a dealer and an env
reset seed (which fixes the stock reshuffle), drawn in order from
``numpy.random.default_rng([seed, N])``; deal ``k`` is the same whatever ``deals`` is, and the
same decks are used by ``train.eval.tournament``. Each deal is played ``N`` times. In rotation ``r``
the candidate sits in seat ``r``; every other seat ``s`` holds the field's agent for seat ``s``
(``field`` is one spec for every seat, or a list of ``N`` specs, one per seat, of which the one
at the candidate's seat sits out). Deck, dealer and reset seed are identical in the ``N``
rotations, so the candidate holds every hand of the deal once and seat and card luck cancel.
Each deal is then played once more at the *all-field table*, the field's agent for seat ``s``
in every seat ``s``: what the field makes of the deal without the candidate, the reference of
the replacement advantage. That is ``N + 1`` games per deal, ``1/N`` more than the rotations
alone (a quarter more at 4 players, a seventh at 7).

Every deal starts with an empty pot, everyone antes 1 chip, and the deal is settled on its own. Chips are in antes.

Sessions
--------
``evaluate(..., session=K)`` (``bourre eval --session K``) makes each of the ``deals`` games a *session*: ``K``
deals at one table, the deal passing left, the pot carried (bourré payments and tied pots stay in it, bourré and
tied players skip the next ante), as Bourré is played. The schedule is the same (``train.schedule``): the first
deal of session ``k`` is deal ``k`` of the single-deal schedule, the later decks and every reshuffle come from the
env's generator seeded by the session's reset seed, so that every rotation meets the same cards deal by deal
whatever its players do. Each seat's *session chips* are its chip change over the session plus an equal share of
the pot left when it ends (the pot is the table's; ``train.schedule`` says why). Every figure stays in chips per
deal (session chips over ``K``), the 95% intervals take the session as the unit, and each table size reports the
mean pot left (``pot_left``) and the sessions that the pot bound cut short (``sessions_cut``: the env truncates a
session whose pot passes ``bourre_env.limits.POT_BOUND``). The rates (pot won, played, bourré, ties, tricks) are per
seat and deal played. A chunk holds ``train.schedule.games_per_chunk(K)`` sessions (about ``CHUNK_DEALS`` deals);
the variance-reduced advantage (``variance_reduction``) values single deals and is refused with sessions. Hand
histories are one file per session and table, ``session{k}_seat{r}.json`` and ``session{k}_field.json``, each
with its ``K`` deals; they replay like any history.

Agents are built with ``agents.make(spec, seed)`` and ``reset()`` (when they have one) before every deal. The
candidate and the field may also be given as Python objects (``AgentSource``): a factory ``seed -> agent`` (an
agent class is one) is called where a spec would be built; an agent instance is used as it is in every seat it
fills, at every table, so it must keep no per-seat state across seats (give its class or a factory otherwise).
Processes and Ray tasks need a spec or a picklable factory: an instance, or a lambda, is refused there. Deals are
processed in fixed chunks of ``CHUNK_DEALS``; each chunk builds one table of agents per rotation
and one all-field table, and seeds every agent by its seat: whoever sits in seat ``s``, the
candidate or the field's agent, is seeded from ``(seed, N, chunk, 1 + s)``. The candidate thus
draws the random stream that the field's agent of its seat draws at every other table, and a
candidate that is the field's agent replays the all-field table exactly in every rotation, seeded
agents (the random agent, the heuristic's tie-breaks) included. Chunks run in ``workers``
processes (or as Ray tasks: ``backend="ray"``, ``train.eval.ray_backend``) and are combined in order, so the
report depends neither on the number of workers nor on the backend.
Each chunk's deals are drawn when its job is handed out, so the decks of a long evaluation are
never all in memory; the outcome rows are (``(N + 1) * N`` rows per deal), and a run whose rows
cannot fit is refused before it starts (``check_outcomes_fit``). Ctrl-C stops the workers at once.
Workers are *spawned* (fresh interpreters: forking a process that holds threads can deadlock),
so they know only the agents that ``import agents`` registers, and a script that calls
``evaluate(workers=2)`` needs the usual ``if __name__ == "__main__":`` guard.

Statistics (``TableReport``, one per table size)
-----------------------------------------------
Three sides, each a ``SideStats``: ``candidate`` pools the candidate's ``N`` seats (one per
rotation); ``field`` pools the other ``N - 1`` seats of every rotation; ``baseline`` pools the
``N`` seats of the all-field table.

========================== ==================================================================
field                      meaning
========================== ==================================================================
``chips``                  chips per deal: mean over deals of the mean over the deal's seats
``chips_ci95``             95% t-interval of ``chips`` with the deal as the unit (``None`` if 1 deal)
``pot_win_rate``           share of seats that took the pot (strictly most tricks, no renege)
``play_rate``              share of seats that played rather than passed
``bourre_rate_played``     share of played seats that took no trick (``None`` if none played)
``bourre_rate_dealt``      share of all seats that were bourré
``tie_rate``               share of seats tied for most tricks (a split pot)
``mean_tricks``            tricks per seat and deal
========================== ==================================================================

Two measures of advantage
-------------------------
With ``c[r][s]`` the chips of seat ``s`` in rotation ``r`` and ``b[s]`` those of seat ``s`` at
the all-field table, each deal gives

=================================== ==============================================================
``advantage`` (table advantage)     ``mean over r of (c[r][r] - mean over s != r of c[r][s])``
``replacement_advantage``           ``mean over r of (c[r][r] - b[r])``
=================================== ==============================================================

and ``TableReport`` holds the mean over deals, in chips per deal, with a 95% t-interval that
takes the deal as the unit (``advantage_ci95``, ``replacement_advantage_ci95``). Both come from
integer chip sums divided once, so a candidate that is the field's agent scores exactly 0 on
both, to the bit. Since the candidate sits in every seat once, the replacement advantage is also
``candidate.chips - baseline.chips``, deal by deal.

The **table advantage** is the candidate's chips minus the other seats' chips at the same
table: who comes out ahead of whom. It grows with the candidate's own gain, and also with
whatever the others lose, wherever those chips go: to the candidate, or into a pot that carries
over (a tied pot, a bourré player's payment), since a single deal is not zero-sum.

The **replacement advantage** is the duplicate measure of bridge: how many more chips the seat
makes with the candidate in it than with the field's own agent in it, on the same cards at a
table of the same agents. It counts the candidate's own gain only (what its play earns,
including what it makes the others give it), not what the others lose elsewhere, and it answers
"is this agent a better player to put in a seat of this field?".

The two can disagree. At 3 players a tight candidate that passes hands the field would play
keeps the chips the field's agent loses when bourré, and so wins on the replacement advantage,
while the two others at its table, with fewer players in the pot, take more than it does, and it
loses on the table advantage: ``evaluate("heuristic:tight", "heuristic", players=3, deals=2000,
seed=1)`` gives a table advantage of -0.056 [-0.084, -0.028] and a replacement advantage of
+0.084 [+0.064, +0.104].

``evaluate(..., variance_reduction=VarianceReduction())`` (``bourre eval --aivat``) also reports a variance-reduced
replacement advantage, control variates at the draws (``TableReport.variance_reduced``, ``train.eval.variance``):
the same expectation, a narrower interval, at the cost of rollouts at every draw.

Hand histories
--------------
``evaluate(..., histories=DIR)`` (``bourre eval --save-histories DIR``) writes every game it plays
as a hand history (``docs/hand_history.md``): ``DIR/{N}p/deal{k}_seat{r}.json`` for deal ``k``
(five digits) with the candidate in seat ``r``, and ``DIR/{N}p/deal{k}_field.json`` for the
all-field table; each file's ``seats`` name the agent in every seat. ``N + 1`` files per deal.

Every game is played by the duplicate schedule (``train.schedule``: who sits where, seeded how, the rotation
tables and the all-field table) on the table's loop (``train.table``: the deals, ``Deal``, ``make_deals``, and
``play``, of which ``play_deal`` is a thin call), and its outcome rows are ``train.table.seat_outcomes``, read from
the env's state after each deal (each seat's decision, tricks, reward and outcome bits).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import bourre_env
from agents.base import Agent
from bourre_env import history, memory
from bourre_env.core.rules import Rules
from train.eval.jobs import BACKENDS, JobRunner, check_backend, deal_done, run_jobs
from train.eval.statistics import agent_counts, sum_counts, t_interval, t_quantile
from train.eval.variance import Draw, DrawCorrector, DrawRecorder, VarianceReduced, VarianceReduction
from train.schedule import (
    CHUNK_DEALS,
    AgentSource,
    advantages,
    agent_label,
    agent_seed,
    build_agent,
    check_session,
    check_sources,
    duplicate_tables,
    field_per_seat,
    games_per_chunk,
    play_duplicate,
    seat_seeds,
    table_rules,
)
from train.table import (
    BOURRE,
    CHIPS,
    NUM_OUTCOMES,
    PLAYED,
    TIED,
    TRICKS,
    WON,
    Deals,
    deals_in_chunks,
    make_deals,
    seat_outcomes,
)
from train.table import play as table_play

__all__ = [
    "AgentSource",
    "agent_label",
    "agent_seed",
    "build_agent",
    "check_sources",
    "BACKENDS",
    "CHUNK_DEALS",
    "Deals",
    "EvalReport",
    "SideStats",
    "TableReport",
    "check_outcomes_fit",
    "evaluate",
    "field_per_seat",
    "iter_deals",
    "make_deals",
    "play_deal",
    "run_jobs",
    "seat_outcomes",
    "t_interval",
    "t_quantile",
    "table_rules",
]


# ---------------------------------------------------------------------------- deals and play
def iter_deals(seed: int, rules: Rules, count: int) -> Iterator[Deals]:
    """The games of ``make_deals(seed, rules, count)`` (deals, or sessions when ``rules`` play several deals a game),
    a chunk at a time (``train.schedule.games_per_chunk``: ``CHUNK_DEALS`` deals' worth), each chunk drawn when it is
    asked for: an evaluation of many deals never holds all their decks at once."""
    return deals_in_chunks(seed, rules, count, games_per_chunk(rules.deals_per_episode))


def check_outcomes_fit(deals: int, sizes: Sequence[int], extra_per_deal: int = 0) -> None:
    """``ValueError`` (naming ``--deals``) before a run whose outcome arrays cannot fit in memory.

    Every game's outcome rows are kept until the statistics are taken: ``(N + 1) * N`` rows of ``NUM_OUTCOMES``
    int64 per deal (or session) at ``N`` players, plus ``extra_per_deal`` bytes; the largest table size's arrays are
    copied twice more on the way (concatenated, then split into the candidate's and the field's seats)."""
    per_size = [deals * ((n + 1) * n * NUM_OUTCOMES * 8 + extra_per_deal) for n in sizes]
    memory.check_fits(
        sum(per_size) + 2 * max(per_size, default=0), f"--deals {deals} (at {', '.join(map(str, sizes))} players)"
    )


def play_deal(
    env: Any,
    table: Sequence[Agent],
    deals: Deals,
    k: int,
    draws: list[Draw] | None = None,
    labels: Sequence[str] | None = None,
    deal_name: str | None = None,
) -> np.ndarray:
    """Play deal ``k`` of ``deals`` with ``table[s]`` in seat ``s``; the ``seat_outcomes`` rows (``train.table.play``
    on ``deals.deal(k)``). ``draws``, if given, receives the state as dealt (with the action ``ROOT``), then the state
    before every stay of a draw round and its action (``train.eval.variance.DrawRecorder``).

    An agent that raises, exits or answers something other than an action id, or an action the rules refuse, is an
    ``agents.AgentError`` naming it (``labels[s]``, else its ``name``), the deal (``deal_name``, else ``deal k``)
    and the decision."""
    observers = () if draws is None else (DrawRecorder(draws),)
    deal = deals.deal(k, env.unwrapped.rules)
    return table_play(env, deal, table, labels, deal_name or f"deal {k}", observers)


def chunk_bounds(count: int, session: int = 1) -> Iterator[tuple[int, int]]:
    """The ``(start, stop)`` game indices of each chunk of ``count`` games of ``session`` deals, drawn as they are
    needed."""
    per = games_per_chunk(session)
    return ((start, min(start + per, count)) for start in range(0, count, per))


def chunk_count(count: int, session: int = 1) -> int:
    """How many chunks ``count`` games of ``session`` deals make."""
    return -(-count // games_per_chunk(session))


def chunk_sizes(count: int, repeats: int = 1, session: int = 1) -> Iterator[int]:
    """Deals in each chunk of ``count`` games of ``session`` deals, for ``repeats`` table sizes in turn, drawn as
    they are needed."""
    for _ in range(repeats):
        for start, stop in chunk_bounds(count, session):
            yield (stop - start) * session


@dataclasses.dataclass(frozen=True)
class _EvalJob:
    candidate: AgentSource
    field: tuple[AgentSource, ...]  # one per seat
    rule_options: dict[str, Any]  # num_players and deals_per_episode included
    seed: int
    chunk: int
    deals: Deals
    histories: str | None = None  # folder for one hand history per game, or None
    variance: VarianceReduction | None = None  # the draws' corrections too (train.eval.variance), or None
    transcript: str | None = None  # where a candidate that keeps one (an llm agent) appends its transcript


# outcomes summed over each game's deals, the all-field table's, the pots left (games, N + 1) and the deals played
# (games, N + 1) at the rotations then the all-field table, the draws' corrections, the draws corrected, the
# candidate's own counts (an agent with ``stats.as_dict()``: the llm agent's moves, fallbacks, retries and tokens),
# summed over its seats
_EvalResult = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, int, dict[str, Any] | None]


def _run_eval_job(job: _EvalJob) -> _EvalResult:
    """Outcomes of one chunk of games (deals or sessions): the rotations ``(games, rotation, seat, 6)``, rotation
    ``r`` with the candidate in seat ``r``, and the all-field table ``(games, seat, 6)``, each summed over the game's
    deals; the pots left and the deals played ``(games, N + 1)``; with ``job.variance``, the draws' corrections
    ``(games, table, seat)`` (tables: the rotations, then the all-field table) and the distinct draws corrected,
    else ``None`` and 0."""
    n = len(job.field)
    env = bourre_env.env(**job.rule_options)
    rules = env.unwrapped.rules
    session = rules.deals_per_episode
    if job.histories is not None:
        env = history.Recording(env)
    tables, baseline_table = duplicate_tables(job.candidate, job.field, seat_seeds(job.seed, n, job.chunk))
    if job.transcript is not None:
        for r in range(n):
            keep = getattr(tables[r][r], "write_transcript_to", None)
            if callable(keep):
                keep(job.transcript)
    names = [agent_label(source) for source in job.field]
    labels = [[agent_label(job.candidate) if s == r else names[s] for s in range(n)] for r in range(n)] + [names]
    games = len(job.deals)
    out = np.empty((games, n, n, NUM_OUTCOMES), dtype=np.int64)
    baseline = np.empty((games, n, NUM_OUTCOMES), dtype=np.int64)
    pots = np.empty((games, n + 1), dtype=np.int64)
    played = np.empty((games, n + 1), dtype=np.int64)
    corrector = None
    if job.variance is not None:
        # its own seed: the draws it makes change neither the games nor the agents' streams
        corrector = DrawCorrector(job.variance, rules, (job.seed, n, job.chunk, 0))
    corrections = None if corrector is None else np.zeros((games, n + 1, n))
    first = job.chunk * games_per_chunk(session)
    kind = "deal" if session == 1 else "session"
    for k in range(games):
        draws: list[list[Draw]] = [[] for _ in range(n + 1)]
        deal_name = f"{kind} {first + k} of seed {job.seed} at {n} players"

        def observers_of(t: int, draws: list[list[Draw]] = draws) -> tuple[DrawRecorder, ...]:
            return () if corrector is None else (DrawRecorder(draws[t]),)

        def after(t: int, index: int = first + k) -> None:
            _save_history(env, job, index, f"seat{t}" if t < n else "field", labels[t], kind)

        results = play_duplicate(
            env, job.deals.deal(k, rules), [*tables, baseline_table], labels, deal_name, observers_of, after
        )
        for r in range(n):
            out[k, r] = results[r].rows
        baseline[k] = results[n].rows
        pots[k] = [result.pot_left for result in results]
        played[k] = [result.deals_played for result in results]
        if corrector is not None and corrections is not None:
            corrections[k] = corrector.corrections(draws, [*range(n), -1])
        deal_done(session, agent_counts([tables[r][r] for r in range(n)]))
    candidates = [tables[r][r] for r in range(n)]
    count = 0 if corrector is None else corrector.corrected
    return out, baseline, pots, played, corrections, count, agent_counts(candidates)


def _save_history(env: Any, job: _EvalJob, index: int, table: str, seats: list[str], kind: str) -> None:
    """``{histories}/{N}p/{kind}{index}_{table}.json``: ``kind`` is ``deal`` or ``session``, ``table`` is
    ``seat{r}`` (the candidate in seat ``r``) or ``field`` (the all-field table)."""
    if job.histories is not None:
        folder = Path(job.histories) / f"{len(seats)}p"
        folder.mkdir(parents=True, exist_ok=True)
        history.write(env.history(seats), folder / f"{kind}{index:05d}_{table}.json")


# ---------------------------------------------------------------------------- reports
def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@dataclasses.dataclass(frozen=True)
class SideStats:
    """One side's statistics (the candidate's seats, or the field's); see the module docstring."""

    chips: float
    chips_ci95: tuple[float, float] | None
    pot_win_rate: float
    play_rate: float
    bourre_rate_played: float | None
    bourre_rate_dealt: float
    tie_rate: float
    mean_tricks: float

    @classmethod
    def of(cls, rows: np.ndarray, per_deal_chips: np.ndarray, seat_deals: int | None = None) -> SideStats:
        """From outcome rows ``(games, seats, 6)`` (each summed over its game's deals), the side's chips per deal
        for each game, and ``seat_deals``, the seats times the deals they sat (default: one deal a game)."""
        seats = rows.shape[0] * rows.shape[1] if seat_deals is None else seat_deals
        played = int(rows[..., PLAYED].sum())
        return cls(
            chips=float(per_deal_chips.mean()),
            chips_ci95=t_interval(per_deal_chips),
            pot_win_rate=int(rows[..., WON].sum()) / seats,
            play_rate=played / seats,
            bourre_rate_played=_ratio(int(rows[..., BOURRE].sum()), played),
            bourre_rate_dealt=int(rows[..., BOURRE].sum()) / seats,
            tie_rate=int(rows[..., TIED].sum()) / seats,
            mean_tricks=int(rows[..., TRICKS].sum()) / seats,
        )


@dataclasses.dataclass(frozen=True)
class TableReport:
    """Results at one table size; the two advantages are defined in the module docstring. With sessions
    (``session > 1``) ``deals`` counts the sessions, every figure is still in chips per deal (a session's chips,
    its share of the pot left included, over its ``session`` deals) and the intervals take the session as the
    unit."""

    players: int
    deals: int  # games: deals, or sessions of ``session`` deals
    games: int  # deals * players: every game once per rotation (the all-field table not counted)
    candidate: SideStats
    field: SideStats  # the field's seats at the candidate's tables
    advantage: float  # table advantage: candidate minus the other seats, chips per deal
    advantage_ci95: tuple[float, float] | None
    baseline: SideStats  # the all-field table: every seat the field's own agent
    replacement_advantage: float  # candidate minus the field's agent in the same seat, chips per deal
    replacement_advantage_ci95: tuple[float, float] | None
    variance_reduced: VarianceReduced | None = None  # the corrected replacement advantage, if asked for
    agent_stats: dict[str, Any] | None = None  # the candidate's own counts (an llm agent's fallbacks...), if it has
    session: int = 1  # deals per game: 1, single deals; K, sessions of K deals with the pot carried
    sessions_cut: int = 0  # sessions (of the N + 1 tables' games) that the pot bound ended early
    pot_left: float | None = None  # with sessions: chips left in the pot at a session's end, mean over every table

    @classmethod
    def of(
        cls,
        outcomes: np.ndarray,
        baseline: np.ndarray,
        corrections: np.ndarray | None = None,
        variance: VarianceReduction | None = None,
        draws_corrected: int = 0,
        agent_stats: dict[str, Any] | None = None,
        pots: np.ndarray | None = None,
        played: np.ndarray | None = None,
        session: int = 1,
    ) -> TableReport:
        """From outcomes ``(games, rotation, seat, 6)`` with the candidate in seat ``rotation``, and the all-field
        table's ``(games, seat, 6)``, each summed over its game's deals; with sessions (``session > 1``), the pots
        left and the deals played ``(games, N + 1)`` (the rotations, then the all-field table: the pot left is
        shared by the table, ``train.schedule``); with ``variance``, also from the draws' corrections ``(games,
        table, seat)`` (``_run_eval_job``)."""
        d, n = outcomes.shape[0], outcomes.shape[1]
        sessions = session > 1
        if not sessions or pots is None:
            pots = np.zeros((d, n + 1), dtype=np.int64)  # a single deal's pot left is chips lost (train.schedule)
        if played is None:
            played = np.ones((d, n + 1), dtype=np.int64)
        own = np.eye(n, dtype=bool)
        candidate = outcomes[:, own]  # (games, n): seat r of rotation r
        field = outcomes[:, ~own]  # (games, n * (n - 1))
        chips, base_chips = outcomes[..., CHIPS], baseline[..., CHIPS]
        advantage, replacement = advantages(chips, pots[:, :n], base_chips, pots[:, n], session)
        # chips per deal of each side, in N-ths of a chip over one division (each seat's share of the pot is pot / N)
        rotation_pots = pots[:, :n].sum(axis=1)
        candidate_chips = (n * candidate[..., CHIPS].sum(axis=1) + rotation_pots) / (n * n * session)
        field_chips = (n * field[..., CHIPS].sum(axis=1) + (n - 1) * rotation_pots) / (n * n * (n - 1) * session)
        baseline_chips = (n * baseline[..., CHIPS].sum(axis=1) + n * pots[:, n]) / (n * n * session)
        rotation_deals = int(played[:, :n].sum())
        reduced = None
        if variance is not None and corrections is not None:
            own_corrections = corrections[:, :n][:, own]  # (deals, n): seat r of rotation r
            reduced = VarianceReduced.of(variance, replacement, own_corrections, corrections[:, n], draws_corrected)
        return cls(
            players=n,
            deals=d,
            games=d * n,
            candidate=SideStats.of(candidate, candidate_chips, rotation_deals),
            field=SideStats.of(field, field_chips, rotation_deals * (n - 1)),
            advantage=float(advantage.mean()),
            advantage_ci95=t_interval(advantage),
            baseline=SideStats.of(baseline, baseline_chips, int(played[:, n].sum()) * n),
            replacement_advantage=float(replacement.mean()),
            replacement_advantage_ci95=t_interval(replacement),
            variance_reduced=reduced,
            agent_stats=agent_stats,
            session=session,
            sessions_cut=int((played < session).sum()) if sessions else 0,
            pot_left=float(pots.mean()) if sessions else None,
        )


@dataclasses.dataclass(frozen=True)
class EvalReport:
    """A duplicate evaluation: the settings and one ``TableReport`` per table size. ``deals`` counts games:
    single deals, or sessions of ``session`` deals."""

    candidate: str
    field: str | list[str]
    seed: int
    deals: int
    rule_options: dict[str, Any]
    chunk_deals: int
    tables: list[TableReport]
    session: int = 1

    def table(self, players: int) -> TableReport:
        for t in self.tables:
            if t.players == players:
                return t
        raise KeyError(f"no table of {players} players; have {[t.players for t in self.tables]}")

    def to_dict(self) -> dict[str, Any]:
        """Plain types only (tuples become lists in JSON), for ``json.dump``; a table has ``variance_reduced``
        only when it was asked for."""
        out = dataclasses.asdict(self)
        for table in out["tables"]:
            if table["variance_reduced"] is None:
                del table["variance_reduced"]
        return out


# ---------------------------------------------------------------------------- entry point
def evaluate(
    candidate: AgentSource,
    field: AgentSource | Sequence[AgentSource] = "random",
    players: int | Sequence[int] = (5,),
    deals: int = 500,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    rule_options: Mapping[str, Any] | None = None,
    histories: str | Path | None = None,
    backend: str = "local",
    address: str | None = None,
    connect_timeout: float = 60.0,
    variance_reduction: VarianceReduction | None = None,
    runner: JobRunner | None = None,
    bar: Any = None,
    transcript: str | Path | None = None,
    session: int = 1,
) -> EvalReport:
    """Duplicate evaluation of ``candidate`` against ``field`` at each table size (see the module docstring).

    Each agent is a spec (``"heuristic"``, ``"mybot.py:HighestIdBot"``), a factory ``seed -> agent`` (an agent
    class), or an agent instance (used as it is in every seat it fills; ``workers=1`` only).
    ``rule_options`` are ``Rules`` fields (``{"tie": "divide"}``) applied at every table size; ``histories``, a
    folder for one hand history per game (``bourre_env.history``; see Hand histories in the module docstring);
    ``backend``, ``"local"`` (processes) or ``"ray"`` (Ray tasks, on the cluster at ``address`` if given:
    ``train.eval.ray_backend``; given up after ``connect_timeout`` seconds without an answer), which does not
    change the report; ``variance_reduction``, the settings of a variance-reduced replacement advantage reported
    beside the plain one (``TableReport.variance_reduced``, ``train.eval.variance``: it costs rollouts at every
    draw); ``runner``, workers already running that take the chunks instead (``train.eval.jobs.JobRunner``: the
    batched trainer's rollout workers), in place of ``workers`` and ``backend``; ``bar``, a progress bar of the
    caller's that the deals move (in place of ``progress``'s own); ``transcript``, a file where a candidate that
    keeps a transcript (the llm agent) appends every decision, from every worker. A candidate that keeps counts
    (``stats.as_dict()``: the llm agent's moves, fallbacks, retries and tokens) has them summed into each table's
    ``agent_stats``. ``session``: each of the ``deals`` games is a session of that many deals at one table with
    the pot carried (Sessions in the module docstring); 1, single deals."""
    check_backend(backend, address)
    session = check_session(session)
    if session > 1 and variance_reduction is not None:
        raise ValueError(
            "variance_reduction (--aivat): not with sessions; its control variates value a single deal's draws "
            "from an empty pot"
        )
    if runner is not None and (backend != "local" or histories is not None):
        raise ValueError("runner: its own workers run the chunks; not with backend 'ray' or histories")
    if histories is not None and backend != "local":
        raise ValueError("histories: only with backend 'local' (Ray workers would write them on their own disks)")
    sizes = [players] if isinstance(players, int) else list(players)
    if not sizes:
        raise ValueError("players: at least one table size is needed")
    if deals < 1:
        raise ValueError(f"deals: expected at least 1, got {deals}")
    if seed < 0:
        raise ValueError(f"seed: expected an integer >= 0, got {seed}")
    options = dict(rule_options or {})
    rules = [table_rules(n, options, session) for n in sizes]
    per_seat = [field_per_seat(field, n) for n in sizes]
    # a runner's workers are other processes: the agents must reach them as specs, as they reach a pool's
    check_sources(
        [candidate, *(source for specs in per_seat for source in specs)], workers if runner is None else 2, backend
    )
    # the corrections: (N + 1) * N float64 per deal
    check_outcomes_fit(deals, sizes, 0 if variance_reduction is None else (max(sizes) + 1) * max(sizes) * 8)
    history_folder = None if histories is None else str(histories)

    def jobs() -> Iterator[_EvalJob]:
        for n, table_rule, specs in zip(sizes, rules, per_seat, strict=True):
            for chunk, chunk_deals in enumerate(iter_deals(seed, table_rule, deals)):
                yield _EvalJob(
                    candidate,
                    specs,
                    {**options, "num_players": n, "deals_per_episode": session},
                    seed,
                    chunk,
                    chunk_deals,
                    history_folder,
                    variance_reduction,
                    None if transcript is None else str(transcript),
                )

    chunks = chunk_count(deals, session)
    results = run_jobs(
        _run_eval_job,
        jobs(),
        chunk_sizes(deals, len(sizes), session),
        min(workers, chunks * len(sizes)),  # a worker past the chunks would start and wait
        progress,
        f"eval {agent_label(candidate)}",
        backend,
        address,
        total=deals * session * len(sizes),
        connect_timeout=connect_timeout,
        runner=runner,
        bar=bar,
        counts_of=lambda result: result[6],
    )
    tables = []
    for i in range(len(sizes)):
        mine = results[i * chunks : (i + 1) * chunks]  # jobs go table size by table size, chunk by chunk
        corrections = None if variance_reduction is None else np.concatenate([r[4] for r in mine])
        tables.append(
            TableReport.of(
                np.concatenate([r[0] for r in mine]),
                np.concatenate([r[1] for r in mine]),
                corrections,
                variance_reduction,
                sum(r[5] for r in mine),
                sum_counts([r[6] for r in mine]),
                pots=np.concatenate([r[2] for r in mine]),
                played=np.concatenate([r[3] for r in mine]),
                session=session,
            )
        )
    field_label = (
        agent_label(field)
        if isinstance(field, str) or not isinstance(field, Sequence)
        else [agent_label(source) for source in field]
    )
    return EvalReport(
        candidate=agent_label(candidate),
        field=field_label,
        seed=seed,
        deals=deals,
        rule_options=options,
        chunk_deals=CHUNK_DEALS,
        tables=tables,
        session=session,
    )
