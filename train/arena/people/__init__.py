"""People at the table: a person in a browser takes a seat at a match with bots, over the bots' own protocol.

The page (``GET /play``: ``train/arena/static/people.html``, drawn with the browser table's ``table.js`` and
``table.css`` of ``train/serve/static``) asks for a seat, then speaks ``docs/protocol.md`` on ``/bot`` as a remote bot
does, with ``words: true`` for the labels of the legal moves. The admission rule (``docs/arena.md``, "People at the
table"):

1. Only where the operator started the server with ``--people`` (``People.enabled``); else 403.
2. ``POST /api/people/seats`` (JSON, from this server's own page: another ``Origin`` is refused) names the person,
   the opponents (each ``bot:NAME`` of a bot connected now, or a built-in agent the server offers, as a match of the
   operator may name: the operator's ``--agent`` specs by their handles ``offered:K``, never by their options) and
   the deals (1 to ``MAX_DEALS``, and deals x players at most ``MAX_GAMES``: the seats' time a match holds). The
   name follows a bot's pattern, is no registered bot's name and no name seated now. On a server that runs the
   ladder a person's table seats built-in agents only (409 for a bot): a visitor needs no token, and must not be able
   to hold the ladder's bots out of it.
3. The answer holds a seat token (32 random bytes; only its SHA-256 is kept, in memory): the page says hello with it
   within ``SEAT_SECONDS``, and the match starts then. It serves to reconnect until the match ends, then it is
   forgotten.

What visitors hold is bounded, a visitor being a client address (an IPv6 one by its /64, which one host commonly
holds; behind a proxy, the address uvicorn's ``--forwarded-allow-ips`` lets it read):

* one visitor: ``REQUEST_BURST`` seat requests, then one per ``REQUEST_SECONDS`` (429 with the wait); one seat
  admitted and not yet claimed (a new request replaces it, its token void) and no request while its match is
  under way (429);
* all visitors: ``MAX_PENDING`` seats admitted and not claimed, each forgotten after ``SEAT_SECONDS``, and
  ``MAX_PEOPLE`` matches under way (429 past either, and a claim past ``MAX_PEOPLE`` is told to try later);
* one match: ``MAX_GAMES`` deals x players, ``MATCH_SECONDS`` of wall time, and ``IDLE_MOVES`` moves lost to the clock
  (``CLOCK`` each). Past the time or the idle moves, or away past the grace period, the person forfeits: the
  fallback plays the seat at once and the match ends (``aborted``) after the deal under way, its bots released.

``GET /api/people/options`` is refused (403) without ``--people``; with it, it shows what the page needs: the names
of the bots connected now (none on a server that runs the ladder; any of them may be asked for, and a refusal would
say whether it is connected), the registered agents the page suggests, each ``--agent`` spec of the operator as a
handle with its agent's registered name (``offered``; never its options: a URL, a key's variable, a file), and the
bounds above.

A person's connection sits in a registry of its own (``People.registry``), never in the arena's: the ladder's
scheduler, ``GET /api/bots`` and a bot's name never meet it. At the table the person is ``bot:person:NAME``
(``PERSON_PREFIX``: a colon no bot name may hold). The match is stored like any other, its request flagged with
``people``, under the statuses ``people-running``, ``people-finished``, ``people-aborted``, ``people-refused``
(``STATUSES``), which the ladder's ratings, OpenSkill and the bots' pages do not read (``train.arena.records`` reads
``finished``, ``aborted`` and ``interrupted`` only). ``GET /people`` (and ``GET /api/people``) shows them apart.

The package, by what may change in each module:

* ``bounds``: the bounds above (``SEAT_SECONDS``, ``MAX_GAMES`` ...), read by the others when they act, so that one
  place holds them; this package's face gathers them with the rest;
* ``seats``: a person's seat (``Seat``), whom a request comes from (``visitor``), what the seats use of the server;
* ``handles``: the operator's ``--agent`` specs as the page shows them (``offered:K``), never their options;
* ``admission``: the admission rule and the seats admitted (``People``);
* ``matchmaking``: a person's match, from the claim to its settling, and the watch that makes the person forfeit;
* ``storage``: the SQL of the people's matches (kept apart from the ladder's by their statuses);
* ``pages``: the people's results as HTML;
* ``routes``: the HTTP routes of the page, its options, the seat requests and the results.
"""

from __future__ import annotations

from train.arena.people.admission import People
from train.arena.people.bounds import (
    AGENTS,
    CLOCK,
    IDLE_MOVES,
    MATCH_SECONDS,
    MAX_BODY,
    MAX_DEALS,
    MAX_GAMES,
    MAX_OPPONENTS,
    MAX_PENDING,
    MAX_PEOPLE,
    MAX_VISITORS,
    PERSON_PREFIX,
    REQUEST_BURST,
    REQUEST_SECONDS,
    SEAT_SECONDS,
    STATUSES,
    WATCH_SECONDS,
)
from train.arena.people.handles import _shown as _shown  # the seat as a visitor sees it (the tests')
from train.arena.people.pages import people_page
from train.arena.people.seats import Seat, visitor
from train.arena.people.storage import people_matches

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
    "REQUEST_BURST",
    "REQUEST_SECONDS",
    "PERSON_PREFIX",
    "SEAT_SECONDS",
    "STATUSES",
    "WATCH_SECONDS",
    "People",
    "Seat",
    "people_matches",
    "people_page",
    "visitor",
]
