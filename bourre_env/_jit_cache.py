"""Where numba keeps compiled code: a folder named after a hash of this package's sources.

numba checks a cached function only against the file that defines it, not against the
functions it compiled in from other modules; an edited ``core/rounds.py`` would leave the batch
kernels running stale code. Keying the folder on every source file of the package, subpackages included, makes
any change, or a different installed version, compile afresh. The compiled agents of the
repository (``agents/``, beside this package when run from a checkout) call one another's
kernels across files too, so their sources are part of the key. A ``NUMBA_CACHE_DIR`` set by
the user is left alone.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_folder: str | None = None


def folder() -> str | None:
    """The folder compiled code is cached in (``NUMBA_CACHE_DIR`` where the user set it); None before ``configure``
    or where no folder could be made."""
    return os.environ.get("NUMBA_CACHE_DIR") or _folder


def configure() -> None:
    global _folder
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    import numba

    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    sources = sorted(package.rglob("*.py")) + sorted((package.parent / "agents").rglob("*.py"))
    for source in sources:
        digest.update(source.relative_to(package.parent).as_posix().encode())
        digest.update(source.read_bytes())
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = base / "bourre_env" / "numba" / digest.hexdigest()[:16]
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return  # unwritable home: numba falls back to its own locations
    numba.config.CACHE_DIR = str(cache)  # type: ignore[attr-defined]
    _folder = str(cache)
