"""The ``--database`` value: the URL the arena's store opens, and the one way a URL is shown (its password masked)."""

from __future__ import annotations

import sqlalchemy as sa

__all__ = ["database_url", "masked"]


def database_url(url: str) -> sa.URL:
    """The SQLAlchemy URL of a ``--database`` value: ``postgresql://`` (or ``postgres://``) goes through psycopg 3,
    ``postgresql+psycopg://``; ``sqlite:///FILE`` as it is. ``ValueError`` for anything else, its password masked."""
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        raise ValueError(
            "database: not a URL (expected sqlite:///FILE or postgresql://USER:PASSWORD@HOST:PORT/DB)"
        ) from None
    backend, _, driver = parsed.drivername.partition("+")
    if backend in ("postgresql", "postgres"):
        if driver not in ("", "psycopg"):
            raise ValueError(
                f"database {masked(parsed)}: the arena reaches PostgreSQL through psycopg 3 only: "
                "postgresql://... or postgresql+psycopg://..."
            )
        return parsed.set(drivername="postgresql+psycopg")
    if backend == "sqlite":
        return parsed
    raise ValueError(f"database {masked(parsed)}: expected sqlite:///FILE or postgresql://USER:PASSWORD@HOST:PORT/DB")


def masked(url: str | sa.URL) -> str:
    """``url`` as text with its password (in the address or as a ``password=`` query argument) shown as ``***``: the
    one way a database URL is shown, in every message and log line."""
    if isinstance(url, str):
        try:
            url = sa.make_url(url)
        except sa.exc.ArgumentError:
            return "(a database URL that does not parse)"
    if "password" in url.query:
        url = url.update_query_dict({"password": "***"})
    return url.render_as_string(hide_password=True)
