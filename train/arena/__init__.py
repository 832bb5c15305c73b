"""The arena: remote bots, in any language, take seats at duplicate matches over a WebSocket (``docs/arena.md``).

The modules, from the wire up:

=================== ==================================================================================================
module              what it holds
=================== ==================================================================================================
``view``            a seat's view for a ``turn``, built fast from its observation
``protocol``        every message, built and parsed (``docs/protocol.md``; the JSON Schemas are in ``schemas/``)
``json_text``       compact JSON text of the messages and the stored records
``bot_socket``      the WebSocket protocol over a leaner transport
``remote``          a bot's seat: its connection, its clock and the fallback agent
``pacing``          the pace of the built-in seats at a table with a remote seat
``thinking``        heavy built-in seats that think in worker processes
``games``           one game of a match on the table's loop, and the single format's par games
``sessions``        the session format: each deal of a session as it settles, and the par session
``match``           a match (its request, formats, report and results) on the event loop
``schema``          the database's tables (SQLAlchemy Core) and their Alembic migrations (``migrations/``)
``database_urls``   the ``--database`` URL, checked, and shown only with its password masked
``storage``         the store: bots, operators, matches and games, written through one writer thread
``liveness``        which servers of a database are alive (a lock, a heartbeat); the matches of those gone
``holds``           which server process holds each bot's one live connection
``ratings``         the ladder rating and OpenSkill, a pure function of the stored games
``records``         the ladder's queries of the database
``histories``       a settled match's hand histories, a page at a time
``scheduler``       the ladder: matches that pair themselves
``leaderboard``     the leaderboard's and the bot pages (``static/`` holds the people's page)
``people``          a person at a table (a package: admission, seats, pages, routes)
``operator_api``    the operator's routes: a match asked for (``POST /api/matches``), the bots connected
``server``          the Starlette app (``/bot``, ``/api/matches``, the pages)
``processes``       ``bourre arena serve --processes N``
``in_thread``       a server in a thread, for the tests and the benchmarks
``ladder_cli``      the ladder's options and ``bourre arena rerate``
``command``         the command line: ``bourre arena serve|match|add-bot|add-operator`` and ``bourre connect``
``client``          a bot in Python (needs only ``websockets``); ``examples/`` holds one in JavaScript
=================== ==================================================================================================
"""

__all__: list[str] = []
