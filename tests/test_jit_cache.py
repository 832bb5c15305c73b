"""The numba cache folder is keyed on exactly the sources compiled code can be made of (``bourre_env._jit_cache``):
every file that defines a compiled function, and everything such a file imports, directly or not."""

from __future__ import annotations

import ast
from pathlib import Path

from bourre_env import _jit_cache

ROOT = Path(__file__).resolve().parent.parent


def _texts(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for name in _jit_cache.PACKAGES for p in sorted((root / name).rglob("*.py"))}


def _ast_imports(root: Path, path: Path, known: set[Path]) -> set[Path]:
    """The oracle: the package files ``path`` imports, found by parsing it (any statement, at any depth)."""

    def file_of(module: str) -> Path | None:
        base = root.joinpath(*module.split("."))
        return next((c for c in (base / "__init__.py", base.with_suffix(".py")) if c in known), None)

    here = path.relative_to(root).with_suffix("").parts[:-1]
    found: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {f for alias in node.names if (f := file_of(alias.name))}
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = ".".join([*here[: len(here) - node.level + 1], *filter(None, [module])])
            for alias in node.names:
                target = file_of(f"{module}.{alias.name}") or file_of(module)
                if target is not None and module.split(".")[0] in _jit_cache.PACKAGES:
                    found.add(target)
    return found


def test_the_key_holds_every_kernel_file_and_all_it_imports() -> None:
    texts = _texts(ROOT)
    key = set(_jit_cache.kernel_sources(ROOT, texts))
    for path in key:
        missing = _ast_imports(ROOT, path, set(texts)) - key
        assert not missing, f"{path} imports {sorted(map(str, missing))}, which the key leaves out"
    kernels = {p for p, t in texts.items() if b"@njit" in t}
    assert kernels <= key and len(kernels) > 20
    relative = {p.relative_to(ROOT).as_posix() for p in key}
    assert {"bourre_env/core/rounds.py", "bourre_env/batch.py", "agents/heuristic/batch.py"} <= relative
    # the env adapters and the rest of the plumbing compile nothing: editing them recompiles nothing
    assert not {"bourre_env/bourre_v0.py", "bourre_env/single_agent.py", "bourre_env/history.py"} & relative


def test_the_key_follows_imports_from_the_compiled_files_only(tmp_path: Path) -> None:
    (tmp_path / "bourre_env" / "core").mkdir(parents=True)
    (tmp_path / "agents").mkdir()
    files = {
        "bourre_env/__init__.py": "from bourre_env import env\n",
        "bourre_env/core/__init__.py": "",
        "bourre_env/core/constants.py": "LIMIT = 3\n",
        "bourre_env/core/kernel.py": (
            "from numba import njit\n\nfrom bourre_env.core.constants import (\n    LIMIT,\n)\n\n\n"
            "@njit(cache=True)\ndef capped(x):\n    return min(x, LIMIT)\n"
        ),
        "bourre_env/env.py": "from bourre_env.core import kernel\n",
        "agents/__init__.py": "",
        "agents/bot.py": "from bourre_env import env\nimport bourre_env.core.kernel as k\n",
        "agents/fast.py": "from numba import njit\n\nfrom . import bot\n\n\n@njit\ndef f():\n    return 1\n",
        "agents/slow.py": "import agents.bot\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    key = {p.relative_to(tmp_path).as_posix() for p in _jit_cache.kernel_sources(tmp_path, _texts(tmp_path))}
    # fast.py compiles and imports bot.py, which imports env.py: all three are in; slow.py and the package's
    # __init__ (which names env, but no compiled code reads it) are not
    assert key == {
        "bourre_env/core/kernel.py",
        "bourre_env/core/constants.py",
        "agents/fast.py",
        "agents/bot.py",
        "bourre_env/env.py",
    }
