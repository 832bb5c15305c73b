"""The arena: remote bots, in any language, take seats at duplicate matches over a WebSocket (``docs/arena.md``).

protocol (the messages, ``docs/protocol.md``) <- remote (a bot's seat, its clock and fallback) <- match (a duplicate
match) <- storage (the database) <- server (the Starlette app) <- command (the command line); client (a bot in
Python) needs only ``websockets``.
"""

__all__: list[str] = []
