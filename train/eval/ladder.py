"""The ladder: a candidate against fixed reference fields, one card and one rating.

=================== ========================================================================
Import              ``from train.eval.ladder import ladder``
Call                ``ladder("mybot.py:Bot", deals=40, seed=0, workers=2)`` (``session=10, rules={"pot_limit": 20}``)
Command line        ``bourre ladder mybot.py:Bot`` (``bourre ladder --write-leaderboard``: every reference agent)
Result              ``LadderCard`` (``to_dict()`` is JSON-serialisable); ``Leaderboard`` for every reference agent
=================== ========================================================================

Method
------
The ladder of version ``v`` is a fixed list of reference agents, ``LADDERS[v]``, and fixed table sizes
(``PLAYERS``: 3, 5 and 7). The candidate is evaluated against each reference agent as the field, at each table
size, by duplicate evaluation (``train.eval.duplicate.evaluate``: every deal played once with the candidate in
each seat, once at the all-field table) on the deals of ``seed``, ``deals`` per table size. Each of these
``fields x sizes`` *cells* gives a table advantage and a replacement advantage, each with its 95% t-interval.

With ``session=K`` (``bourre ladder --session K``) each of the ``deals`` games of a cell is a session of ``K``
deals at one table with the pot carried (Sessions in ``train.eval.duplicate``): the cells, the rating and its
interval stay in chips per deal, the intervals taking the session as the unit. ``K = 1``, the default, is single
deals, the ladder of ``docs/leaderboard.md``.

Against its own agent (the candidate's spec equal to the field's) a cell is not played: duplicate evaluation
gives exactly 0 on both measures there, to the bit (``train.eval.duplicate``), so the card shows
``+0.000 [+0.000, +0.000]``.

Rating
------
The candidate's *rating* is the mean of its replacement advantages over every cell: how many more chips per deal
a seat makes with the candidate in it than with the reference agent in it, averaged over the reference fields
and the table sizes, all weighted alike. The scale is anchored on the reference agents: each field's own agent
scores exactly 0 in its cell, so the rating is measured against what the reference agents do in their own seats,
in antes per deal. The replacement advantage (not the table advantage) is used because it counts only what the
candidate's own play earns, not what its tablemates lose to the pot.

Its 95% interval is conservative. The fields of one table size share the deals, so their cells are correlated
in an unknown way; the standard error of a mean is at most the mean of the standard errors (whatever the
correlation), so at each size the half-width is the mean of the cells' half-widths. The sizes have independent
deals, so their half-widths combine in quadrature: ``half = sqrt(sum over N of h_N ** 2) / sizes``. The same
form gives a rating per table size (``h_N`` alone).

Why it is stable
----------------
A rating depends only on the candidate's own games against the fixed fields on the fixed deals: rating a new
agent plays no game of another agent, so it never moves another's rating, and an agent rated twice at the same
budget and seed gets the same rating to the bit (the evaluation depends neither on the workers nor on the
backend). Adding a stronger reference agent changes the set of cells, so it makes a new ladder version
(``LADDERS``, ``VERSION``): ratings are compared within one version only, and ``bourre ladder
--write-leaderboard`` rates every reference agent of the new version again.

Rank
----
The card places the candidate among the reference agents by rating, from ``REFERENCE_FILE`` (the JSON beside
this module, which ``bourre ladder --write-leaderboard`` writes with ``docs/leaderboard.md``), or with sessions
from ``REFERENCE_SESSION_FILE`` (``SESSION_DEALS`` sessions of ``SESSION`` deals per cell under the house rules
``SESSION_RULES``, with ``docs/leaderboard_sessions.md``; each page sets the other's ratings beside its own). A
rank needs the same version, table sizes, session length (a session carries the pot, so its chips per deal are
not those of single deals) and house rules (``rules``: ``Rules`` options of every game, as ``bourre eval --rule``,
recorded on the card); a different deal budget or seed rates on other deals of the same kind, so the
rank is given with the reference's budget beside it. A reference agent's own card is left out of the others
when it is the candidate.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from train.eval.jobs import usable_cpus
from train.eval.ladder_cards import (
    REFERENCE_FILE,
    Cell,
    LadderCard,
    Leaderboard,
    Rank,
    budget,
    rank_of,
    rules_words,
)
from train.eval.report import TextTable, markdown_table, with_ci
from train.eval.time_left import Part, TimeLeftBar, duplicate_work

if TYPE_CHECKING:  # the evaluation is imported when it runs: the command line reads the constants at start-up
    from train.eval.duplicate import AgentSource

__all__ = [
    "DEALS",
    "LADDERS",
    "PLAYERS",
    "REFERENCE_FILE",
    "REFERENCE_SESSION_FILE",
    "SEED",
    "SESSION",
    "SESSION_DEALS",
    "SESSION_RULES",
    "VERSION",
    "Cell",
    "LadderCard",
    "Leaderboard",
    "Rank",
    "budget",
    "budget_with_rules",
    "card_table",
    "comparison_table",
    "ladder",
    "leaderboard",
    "leaderboard_markdown",
    "rank_of",
    "rating_table",
    "page_file",
    "reference_file",
    "rules_words",
]

LADDERS: dict[int, tuple[str, ...]] = {
    # pimc:16 rather than the 64 worlds of ``pimc``: as a field it fills every seat but one, and at 64 worlds it
    # costs four times as much, past the leaderboard's budget: evaluate("heuristic", "pimc", players=(3, 5, 7),
    # deals=4, seed=0) took 6.9 s of CPU per deal, with "pimc:16" 1.75 s (2026-11-25, 2 cores, load average 7).
    1: ("random", "heuristic:loose", "heuristic", "heuristic:tight", "pimc:16", "ppo"),
}
"""The reference agents of each ladder version. A new reference agent makes a new version; never edit one."""

VERSION = 1
"""The ladder version that ``bourre ladder`` plays."""

PLAYERS = (3, 5, 7)
"""The table sizes of the ladder."""

DEALS = 40
"""Deals per field and table size of ``docs/leaderboard.md`` and the default of ``bourre ladder``."""

SEED = 0
"""The seed of ``docs/leaderboard.md`` and the default of ``bourre ladder``."""

SESSION = 10
"""Deals per session of the session reference (``REFERENCE_SESSION_FILE``, ``docs/leaderboard_sessions.md``)."""

SESSION_DEALS = 20
"""Sessions per field and table size of the session reference: its budget (``docs/leaderboard_sessions.md``)."""

SESSION_RULES: dict[str, Any] = {"pot_limit": 20}
"""The house rule of the session reference: the pot capped at 20 chips, as many houses play and as the arena's
sessions do (``train.arena.scheduler.SESSION_RULES``); without a cap the pot grows geometrically and its last deals
drown the play (docs/evaluation.md, "Sessions: the game as played")."""

DOCS = Path(__file__).resolve().parents[2] / "docs"
"""Where the leaderboard pages lie (``page_file``)."""

REFERENCE_SESSION_FILE = Path(__file__).with_name("ladder_reference_session.json")
"""The reference agents' cards in sessions of ``SESSION`` deals under ``SESSION_RULES``, written by ``bourre ladder
--write-leaderboard --session 10 --rule pot_limit=20``."""


def reference_file(session: int) -> Path:
    """The shipped reference of a session length: single deals for 1, else the session reference (a rank still
    needs its session length and house rules: ``rank_of``)."""
    return REFERENCE_FILE if session == 1 else REFERENCE_SESSION_FILE


def page_file(session: int) -> Path:
    """The page ``bourre ladder --write-leaderboard`` writes by default: ``leaderboard.md`` for single deals, else
    ``leaderboard_sessions.md``, in ``DOCS``."""
    return DOCS / ("leaderboard.md" if session == 1 else "leaderboard_sessions.md")


# ---------------------------------------------------------------------------- running
def _check(
    deals: int, seed: int, players: Sequence[int], session: int, rules: Mapping[str, Any] | None
) -> tuple[list[int], int, dict[str, Any]]:
    """The table sizes, sorted, the session length as an int (the card's JSON needs one, not numpy's) and the
    house rules, sorted by name, each checked as ``bourre eval --rule`` checks them."""
    from train.schedule import check_session, table_rules

    # before the first cell: a cell against the candidate itself plays nothing, so evaluate would not see it yet
    session = check_session(session)
    options = dict(sorted((rules or {}).items()))
    if "num_players" in options:
        raise ValueError("rules: num_players is the table sizes' (players, --players); no rule option for it")
    sizes = sorted(set(players))
    if not sizes or sizes[0] < 2:
        raise ValueError(f"players: table sizes of at least 2 are needed, got {list(players)}")
    if deals < 1:
        raise ValueError(f"deals: expected at least 1, got {deals}")
    if seed < 0:
        raise ValueError(f"seed: expected an integer >= 0, got {seed}")
    for n in sizes:  # an unknown rule or a bad value fails here, not after the first fields' minutes
        table_rules(n, options, session)
    return sizes, session, options


def _parts(candidate: AgentSource, fields: Sequence[str], sizes: list[int], deals: int) -> list[Part]:
    """The cells of a card as the bar meets them, each weighed by its work (``train.eval.time_left``): a field's
    cost per deal grows with the table and differs by hundreds between fields, so deals alone tell no time left."""
    from train.eval.duplicate import agent_label

    label = agent_label(candidate)
    return [
        Part(field, deals, 0.0 if label == field else deals * duplicate_work(label, field, n))
        for field in fields
        for n in sizes
    ]


def _play(
    candidate: AgentSource,
    fields: Sequence[str],
    sizes: list[int],
    deals: int,
    seed: int,
    workers: int,
    backend: str,
    address: str | None,
    connect_timeout: float,
    bar: Any,
    session: int,
    rules: dict[str, Any],
) -> LadderCard:
    from train.eval.duplicate import agent_label, evaluate

    label = agent_label(candidate)
    cells: list[Cell] = []
    for field in fields:
        bar.set_postfix_str(f"{label} vs {field}")
        if label == field:
            cells += [Cell(field, n, 0.0, (0.0, 0.0), 0.0, (0.0, 0.0), played=False) for n in sizes]
            bar.update(deals * session * len(sizes))  # nothing to play: the agent against itself scores 0
        else:
            report = evaluate(
                candidate,
                field,
                players=sizes,
                deals=deals,
                seed=seed,
                workers=workers,
                progress=False,
                backend=backend,
                address=address,
                connect_timeout=connect_timeout,
                bar=bar,  # moved deal by deal: its time left weighs each deal by its field's work
                session=session,
                rule_options=rules,
            )
            for t in report.tables:
                cells.append(
                    Cell(
                        field,
                        t.players,
                        t.advantage,
                        t.advantage_ci95,
                        t.replacement_advantage,
                        t.replacement_advantage_ci95,
                        played=True,
                    )
                )
    return LadderCard(label, VERSION, list(fields), sizes, deals, seed, cells, session, rules)


def ladder(
    candidate: AgentSource,
    deals: int = DEALS,
    seed: int = SEED,
    players: Sequence[int] = PLAYERS,
    workers: int = 1,
    progress: bool = True,
    backend: str = "local",
    address: str | None = None,
    connect_timeout: float = 60.0,
    session: int = 1,
    rules: Mapping[str, Any] | None = None,
) -> LadderCard:
    """The candidate's card against the reference fields of ``LADDERS[VERSION]`` (see the module docstring).

    The candidate is a spec (``"heuristic"``, ``"mybot.py:Bot"``), or an agent class or factory as in
    ``train.eval.duplicate.evaluate``; ``workers``, ``backend``, ``address`` and ``connect_timeout`` go to it.
    ``session``: each of the ``deals`` games of a cell is a session of that many deals with the pot carried; 1,
    single deals. ``rules``: house rules (``Rules`` options, ``{"pot_limit": 20}``) of every game, recorded on the
    card. The bar counts deals, a session's every deal."""
    sizes, session, rules = _check(deals, seed, players, session, rules)
    fields = LADDERS[VERSION]
    parts = _parts(candidate, fields, sizes, deals * session)
    shared = min(workers, usable_cpus())
    with TimeLeftBar(
        parts, workers=shared, disable=not progress, unit="deal", desc="ladder", dynamic_ncols=True
    ) as bar:
        return _play(
            candidate, fields, sizes, deals, seed, workers, backend, address, connect_timeout, bar, session, rules
        )


def leaderboard(
    deals: int = DEALS,
    seed: int = SEED,
    players: Sequence[int] = PLAYERS,
    workers: int = 1,
    progress: bool = True,
    backend: str = "local",
    address: str | None = None,
    connect_timeout: float = 60.0,
    session: int = 1,
    rules: Mapping[str, Any] | None = None,
) -> Leaderboard:
    """Every reference agent's card (``ladder`` with each as the candidate, ``session`` and ``rules`` too), best
    rated first."""
    import resource

    sizes, session, rules = _check(deals, seed, players, session, rules)
    fields = LADDERS[VERSION]

    def cpu() -> float:
        own, workers_ = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + workers_.ru_utime + workers_.ru_stime

    started = cpu()
    parts = [part for agent in fields for part in _parts(agent, fields, sizes, deals * session)]
    shared = min(workers, usable_cpus())
    with TimeLeftBar(
        parts, workers=shared, disable=not progress, unit="deal", desc="leaderboard", dynamic_ncols=True
    ) as bar:
        cards = [
            _play(agent, fields, sizes, deals, seed, workers, backend, address, connect_timeout, bar, session, rules)
            for agent in fields
        ]
    cards.sort(key=lambda card: -card.rating)
    # CPU time, not wall time: the other jobs of a shared machine do not count
    machine = f"{platform.machine()}, {os.cpu_count() or 1} cores"
    minutes = round((cpu() - started) / 60, 1)
    return Leaderboard(VERSION, list(fields), sizes, deals, seed, cards, minutes, machine, session, rules)


# ---------------------------------------------------------------------------- tables
def card_table(card: LadderCard) -> TextTable:
    """One row per field and table size: the two advantages with their intervals."""
    return TextTable(
        ["field", "players", "table advantage [95% CI]", "replacement advantage [95% CI]"],
        [False, True, True, True],
        [
            [
                c.field,
                str(c.players),
                with_ci(c.advantage, c.advantage_ci95),
                with_ci(c.replacement_advantage, c.replacement_advantage_ci95),
            ]
            for c in card.cells
        ],
    )


def rating_table(board: Leaderboard) -> TextTable:
    """The reference agents by rating, with their rating at each table size."""
    return TextTable(
        ["rank", "agent", "rating [95% CI]", *(f"{n} players" for n in board.players)],
        [True, False, True, *(True for _ in board.players)],
        [
            [
                str(i),
                card.candidate,
                with_ci(card.rating, card.rating_ci95),
                *(with_ci(*card.size_rating(n)) for n in board.players),
            ]
            for i, card in enumerate(board.cards, 1)
        ],
    )


def budget_with_rules(deals: int, session: int, rules: Mapping[str, Any]) -> str:
    """``budget`` with the house rules after it when there are some: single deals' words stay as they were."""
    return budget(deals, session) + (f", {rules_words(rules)}" if rules else "")


def rating_line(card: LadderCard) -> str:
    """The rating and how it is made, in one sentence."""
    from bourre_env.words import plural

    return (
        f"Rating of {card.candidate}: {with_ci(card.rating, card.rating_ci95)} antes per deal, the mean "
        f"replacement advantage over {plural(len(card.fields), 'field')} x "
        f"{plural(len(card.players), 'table size')} "
        f"(ladder v{card.version}, {budget(card.deals, card.session)} per cell"
        f"{f', {rules_words(card.rules)}' if card.rules else ''}, seed {card.seed})."
    )


def rank_line(card: LadderCard, board: Leaderboard, source: str) -> str:
    """Where the card ranks among the reference agents of ``board``, read from ``source``."""
    rank = rank_of(card, board)
    if isinstance(rank, str):
        return rank
    neighbours = [
        f"{where} {name} ({rating:+.3f})"
        for where, x in (("below", rank.above), ("above", rank.below))
        if x is not None
        for name, rating in [x]
    ]
    their = budget_with_rules(rank.reference_deals, rank.reference_session, rank.reference_rules)
    return (
        f"Rank {rank.position} of {rank.total} among the reference agents: {', '.join(neighbours)} "
        f"(their ratings: {their}, seed {rank.reference_seed}, from {source})."
    )


def _flags(session: int, rules: Mapping[str, Any]) -> str:
    """The options of ``bourre ladder`` that give a card this session length and these house rules."""
    rule_flags = "".join(f" --rule {k}={json.dumps(v)}" for k, v in sorted(rules.items()))
    return (f" --session {session}" if session > 1 else "") + rule_flags


def _other_reference(board: Leaderboard) -> Leaderboard | None:
    """The shipped reference of the other kind (sessions beside single deals and back), if it is there and of the
    same ladder version and table sizes; None otherwise (a page is written without it)."""
    path = REFERENCE_SESSION_FILE if board.session == 1 else REFERENCE_FILE
    if not path.is_file():
        return None
    other = Leaderboard.load(path)
    if (other.version, other.fields, other.players) != (board.version, board.fields, board.players):
        return None
    return other


def comparison_table(singles: Leaderboard, sessions: Leaderboard) -> TextTable:
    """Each reference agent's rating in single deals beside its rating in sessions, in the single-deal order."""
    in_sessions = {card.candidate: card for card in sessions.cards}
    kind = f"sessions of {sessions.session} deals" + (f", {rules_words(sessions.rules)}" if sessions.rules else "")
    return TextTable(
        ["agent", "single deals [95% CI]", f"{kind} [95% CI]"],
        [False, True, True],
        [
            [
                card.candidate,
                with_ci(card.rating, card.rating_ci95),
                with_ci(in_sessions[card.candidate].rating, in_sessions[card.candidate].rating_ci95)
                if card.candidate in in_sessions
                else "",
            ]
            for card in singles.cards
        ],
    )


def _comparison_section(board: Leaderboard) -> list[str]:
    """The two measures side by side, from this board and the shipped reference of the other kind."""
    other = _other_reference(board)
    if other is None:
        return []
    singles, sessions = (board, other) if board.session == 1 else (other, board)
    page = "leaderboard_sessions.md" if board.session == 1 else "leaderboard.md"
    return [
        "",
        "## Single deals and sessions",
        "",
        "The rating of each reference agent in single deals (from an empty pot, a bourré payment counted as "
        f"chips lost) beside its rating in {budget(sessions.deals, sessions.session)} per cell with the pot "
        f"carried{f' ({rules_words(sessions.rules)})' if sessions.rules else ''}, where a bourré payment stays in "
        f"the pot and is won back; the other page's cards: [{page}]({page}). Single deals rate play of one "
        "deal; sessions rate play at a table, the game as played "
        "([evaluation.md](evaluation.md#the-ladder)).",
        "",
        *markdown_table(comparison_table(singles, sessions)),
    ]


def leaderboard_markdown(board: Leaderboard) -> str:
    """``docs/leaderboard.md`` (single deals) or ``docs/leaderboard_sessions.md`` (sessions): the ratings, the
    other kind's beside them when its shipped reference is there, then every reference agent's card."""
    sizes = ", ".join(map(str, board.players))
    # single deals keep the page's words as they were: the shipped page is this function's output (tests)
    sessions = board.session > 1
    per_cell = budget_with_rules(board.deals, board.session, board.rules) + (
        " (the pot carried from deal to deal, the session the unit of the intervals)" if sessions else ""
    )
    flag = _flags(board.session, board.rules)
    source = "ladder_reference.json" if board.session == 1 else "ladder_reference_session.json"
    lines = [
        "# Leaderboard: the ladder's reference agents" + (" in sessions" if sessions else ""),
        "",
        f"<!-- Written by `bourre ladder --write-leaderboard{flag}` (train/eval/ladder.py) with "
        f"train/eval/{source}; do not edit by hand. -->",
        "",
        f"Ladder v{board.version}: every reference agent ({', '.join(f'`{f}`' for f in board.fields)}) is "
        f"the candidate of a duplicate evaluation against each of them as the field, at {sizes} players, "
        f"{per_cell} per field and table size, seed {board.seed}. `bourre ladder SPEC{flag}` rates any agent "
        "(a user's own `file.py:Class` too) on the same fields and deals and places it in this table; "
        "[evaluation.md](evaluation.md#the-ladder) says how.",
        "",
        "The **rating** is the mean replacement advantage over every field and table size, in antes per deal: "
        "how many more chips a seat makes with the agent in it than with the reference agent in it. Each "
        "reference agent scores exactly 0 against itself, which anchors the scale; a rating depends only on "
        "the agent's own games on fixed deals, so rating a new agent never moves an old one. The 95% "
        "intervals are conservative (the fields of a table size share deals; `train/eval/ladder.py`).",
        "",
        f"Budget: {budget(board.deals, board.session)} per cell, {len(board.fields)} x {len(board.fields)} cells "
        f"per table size less the {len(board.fields)} against themselves (0 by construction, not played); "
        f"{board.cpu_minutes:.1f} minutes of CPU ({board.machine}), most of it the `pimc:16` field. "
        "At this budget the intervals are wide: the order of neighbours whose intervals overlap is not "
        "settled."
        + (
            " The session count per cell was chosen so that the whole page costs about 25 minutes of CPU "
            "([evaluation.md](evaluation.md#the-ladder))."
            if sessions
            else ""
        )
        + " To rerun it:",
        "",
        "```bash",
        f"bourre ladder --write-leaderboard --deals {board.deals} --seed {board.seed} --players "
        f"{' '.join(map(str, board.players))}{flag} --workers 2",
        "```",
        "",
        "## Ratings",
        "",
        *markdown_table(rating_table(board)),
        *_comparison_section(board),
        "",
        "## Cards",
        "",
        "Each agent against each field: the table advantage (its chips minus the other seats' at its "
        "table) and the replacement advantage (its chips minus the field's agent's in the same seat), "
        "chips per deal with 95% intervals. A row against the agent itself is 0 by construction.",
    ]
    for card in board.cards:
        lines += ["", f"### {card.candidate}", "", *markdown_table(card_table(card)), "", rating_line(card)]
    return "\n".join(lines) + "\n"
