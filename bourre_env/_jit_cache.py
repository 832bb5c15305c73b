"""Where numba keeps compiled code: a folder named after a hash of the sources compiled code is made of.

numba checks a cached function only against the file that defines it, not against the functions it compiled in
from other modules; an edited ``core/rounds.py`` would leave the batch kernels running stale code. So the folder
is keyed on every source that compiled code can be made of, and any change to one of them, or a different
installed version, compiles afresh. Those sources are the files of this package and of the repository's agents
(``agents/``, beside this package when run from a checkout, whose kernels call one another's across files) that
define compiled functions, and every file of either that they import, directly or not: a compiled function can
only call compiled functions, and read the globals of its own module, which come from that module or from what
it imports. The other files (the AEC env, the Gymnasium wrappers, hand histories, rendering, the agent factory)
are out of the key, so editing them compiles nothing. ``kernel_sources`` lists the key's files. A
``NUMBA_CACHE_DIR`` set by the user is left alone.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

PACKAGES = ("bourre_env", "agents")
_KERNEL = re.compile(rb"@(?:numba\.)?(?:njit|jit|vectorize|guvectorize|stencil|register_jitable)\b|\bnjit\(")
_FROM = re.compile(r"from\s+(\.*[\w.]*)\s+import\s+(.*)", re.S)

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

    root = Path(__file__).resolve().parent.parent
    texts = {path: path.read_bytes() for name in PACKAGES for path in sorted((root / name).rglob("*.py"))}
    digest = hashlib.sha256()
    for source in kernel_sources(root, texts):
        digest.update(source.relative_to(root).as_posix().encode())
        digest.update(texts[source])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = base / "bourre_env" / "numba" / digest.hexdigest()[:16]
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return  # unwritable home: numba falls back to its own locations
    numba.config.CACHE_DIR = str(cache)  # type: ignore[attr-defined]
    _folder = str(cache)


def kernel_sources(root: Path, texts: dict[Path, bytes]) -> list[Path]:
    """The files of ``texts`` (the sources of ``PACKAGES`` under ``root``) that compiled code can be made of: those
    that define compiled functions, and every file they import from ``PACKAGES``, directly or not; sorted."""
    kernels = [path for path, text in texts.items() if _KERNEL.search(text)]
    seen: set[Path] = set()
    stack = list(kernels)
    while stack:
        path = stack.pop()
        if path not in seen:
            seen.add(path)
            stack.extend(_imported(root, path, texts) - seen)
    return sorted(seen)


def _module_file(root: Path, module: str, known: dict[Path, bytes]) -> Path | None:
    base = root.joinpath(*module.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate in known:
            return candidate
    return None


def _statements(text: str) -> list[str]:
    """The import statements of a source, a parenthesised one joined into one line (enough for this code base's
    imports, which ruff formats: one statement a line, or a parenthesised list)."""
    out: list[str] = []
    lines = iter(text.splitlines())
    for line in lines:
        stripped = line.strip()
        if not stripped.startswith(("from ", "import ")):
            continue
        while "(" in stripped and ")" not in stripped:
            stripped += " " + next(lines, ")").strip()
        out.append(stripped.split("#")[0])
    return out


def _imported(root: Path, path: Path, texts: dict[Path, bytes]) -> set[Path]:
    """The files of ``PACKAGES`` that ``path`` imports: for ``from M import N``, M's submodule N where there is one,
    else M itself (N is a name defined in M)."""
    here = path.relative_to(root).with_suffix("").parts
    package = here[:-1] if path.name != "__init__.py" else here[:-1]
    found: set[Path] = set()
    for statement in _statements(texts[path].decode("utf-8", "replace")):
        match = _FROM.match(statement)
        if match is None:  # import A.B, C as D
            names = [part.split(" as ")[0].strip() for part in statement[len("import ") :].split(",")]
            found |= {f for name in names if name.split(".")[0] in PACKAGES and (f := _module_file(root, name, texts))}
            continue
        module, names_text = match.groups()
        if module.startswith("."):  # relative: one dot is this file's package
            level = len(module) - len(module.lstrip("."))
            module = ".".join([*package[: len(package) - level + 1], *filter(None, [module.lstrip(".")])])
        if module.split(".")[0] not in PACKAGES:
            continue
        for name in names_text.strip("() ").split(","):
            name = name.split(" as ")[0].strip()
            if not name or name == "*":
                continue
            target = _module_file(root, f"{module}.{name}", texts) or _module_file(root, module, texts)
            if target is not None:
                found.add(target)
    return found
