"""The bounds of people at the table (``train.arena.people``'s docstring): what one visitor, all visitors and one match
may hold. One module holds them, read by the others when they act (``bounds.SEAT_SECONDS``), so that a test or an
operator that changes one changes it everywhere."""

from __future__ import annotations

__all__ = [
    "AGENTS",
    "CLOCK",
    "IDLE_MOVES",
    "MATCH_SECONDS",
    "MAX_BODY",
    "MAX_DEALS",
    "MAX_GAMES",
    "MAX_OPPONENTS",
    "MAX_PENDING",
    "MAX_PEOPLE",
    "MAX_VISITORS",
    "PERSON_PREFIX",
    "REQUEST_BURST",
    "REQUEST_SECONDS",
    "SEAT_SECONDS",
    "STATUSES",
    "WATCH_SECONDS",
]

PERSON_PREFIX = "person:"
"""A person's key at the table (``bot:person:NAME``): no bot's name holds a colon."""
SEAT_SECONDS = 15.0
"""A seat token not used to connect within this long is forgotten (the page says hello at once)."""
MAX_PENDING = 32
"""Seats admitted and not yet claimed, from all visitors; one more is refused (429) until one expires."""
MAX_PEOPLE = 8
"""People's matches under way at once; a request or a claim past it is refused (429, or told to try later)."""
REQUEST_BURST = 4
"""Seat requests a visitor may make at once; then one more each ``REQUEST_SECONDS``."""
REQUEST_SECONDS = 30.0
MAX_VISITORS = 4096
"""Visitors whose recent requests are remembered; past it, the ones back to a full allowance are forgotten, and if
none is, a request from a new visitor is refused (429)."""
MAX_DEALS = 10
"""Deals of a person's match at most (each played once, the seats turning one place a deal)."""
MAX_GAMES = 30
"""Deals x players of a person's match at most: the seats' time it holds (the bots', the person's)."""
MATCH_SECONDS = 1800.0
"""Wall time of a person's match: past it, the person forfeits and the match ends after the deal under way."""
IDLE_MOVES = 3
"""Moves of a person's match lost to the clock: at this many, the person forfeits, as past ``MATCH_SECONDS``."""
WATCH_SECONDS = 0.5
"""How often a person's match is looked at for time, idle moves and a forfeit."""
MAX_OPPONENTS = 7
CLOCK = 60.0
"""Seconds a move at a person's table (the person's, and the bots'): past it the fallback plays the move."""
MAX_BODY = 4096
"""Bytes of a request for a seat."""
STATUSES = ("people-running", "people-finished", "people-aborted", "people-refused")
"""The statuses of a match with a person (the ladder reads none of them)."""
AGENTS = ("heuristic", "heuristic:loose", "heuristic:tight", "random", "ppo")
"""Built-in agents the page suggests (the operator's ``--agent`` specs too); any agent a match may name is taken."""
