"""The arena: remote bots, in any language, take seats at duplicate matches over a WebSocket (``docs/arena.md``).

view (a seat's view, built fast) <- protocol (the messages, ``docs/protocol.md``) <- remote (a bot's seat, its clock
and fallback) <- match (a duplicate match, on the event loop) <- storage (the database, one writer thread); ratings
(the ladder rating and OpenSkill, a pure function of the stored games) <- records (the ladder's queries) <- scheduler
(matches that pair themselves) <- leaderboard (its pages); people (a person at a table) <- server (the Starlette app)
<- ladder_cli, command (the command line); client (a bot in Python) needs only ``websockets``.
"""

__all__: list[str] = []
