"""A person's seat (``Seat``), whom a request comes from (``visitor``), and what the people's seats use of the arena's
server (``Arena``)."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import ipaddress
from collections.abc import Callable
from typing import Protocol

from train.arena.people import bounds
from train.arena.remote import Registry
from train.arena.storage import Store

__all__ = ["Arena", "Seat", "digest", "visitor"]


class Arena(Protocol):
    """What the people's seats use of the server's ``train.arena.server.Arena`` (named here, not imported: the server
    imports this package)."""

    store: Store
    registry: Registry
    offered: tuple[str, ...]
    running: int
    stopping: bool
    draw_secret: Callable[[], str]

    @property
    def ladder(self) -> object | None:
        """The ladder's scheduler where the server runs one (its bots are not seated for people)."""

    def check_agent(self, spec: str) -> None: ...


def visitor(address: str | None) -> str:
    """Whom a request comes from: its client address, an IPv6 one by its /64 (an IPv4 one mapped in IPv6 as IPv4)."""
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return (address or "?")[:64]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def digest(token: str) -> str:
    """What is kept of a seat token: its SHA-256."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclasses.dataclass
class Seat:
    """A person's seat: admitted, then (once the page has said hello) playing its match."""

    name: str
    digest: str
    opponents: tuple[str, ...]
    deals: int
    expires: float
    visitor: str = "?"
    task: asyncio.Task[None] | None = None
    match: str | None = None  # its id, once stored
    ended: str | None = None  # why the person forfeited: the match ends after the deal under way

    @property
    def key(self) -> str:
        return bounds.PERSON_PREFIX + self.name

    @property
    def label(self) -> str:
        return "bot:" + self.key
