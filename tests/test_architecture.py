"""The shape of the code: imports inside ``bourre_env`` run one way, and state offsets stay inside ``bourre_env``.

``docs/architecture.md`` draws the module graph these tests hold the code to.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "bourre_env"
# The rules core's modules, lowest first: each may import only modules before it in this list.
CORE_ORDER = ["cards", "rules", "layout", "bits", "tricks", "cinch", "settlement", "deal", "play", "core"]
MAX_MODULE_LINES = 700
LONG_MODULES = {"bourre_env/cinch.py"}  # the cinch solver reads better whole
# Modules over the limit that are being split separately; remove one from this set once it is under the limit.
LONG_MODULES_PENDING: set[str] = set()
# Agents that still read ``core.S_`` offsets; they are converted to ``bourre_env.view`` accessors separately.
# Remove a file from this set once it no longer reads an offset: the test then holds it to that.
OFFSET_READERS_PENDING: set[str] = set()


def package_imports(path: Path) -> set[str]:
    """Modules of ``bourre_env`` that the module at ``path`` imports, anywhere in it (functions included)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "bourre_env":
                found.update(alias.name for alias in node.names)
            elif node.module.startswith("bourre_env."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("bourre_env."):
                    found.add(alias.name.split(".")[1])
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    return (found & modules) - {path.stem}


def import_graph() -> dict[str, set[str]]:
    return {p.stem: package_imports(p) for p in sorted(PACKAGE.glob("*.py")) if p.stem != "__init__"}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph as a list of nodes (first repeated last), or None (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_find_cycle_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_in_bourre_env() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, f"import cycle in bourre_env: {' -> '.join(cycle or [])}"


@pytest.mark.parametrize("module", CORE_ORDER)
def test_rules_core_imports_only_lower_modules(module: str) -> None:
    imported = package_imports(PACKAGE / f"{module}.py")
    allowed = set(CORE_ORDER[:CORE_ORDER.index(module)])
    assert imported <= allowed, f"bourre_env.{module} imports {sorted(imported - allowed)}, above it in {CORE_ORDER}"


def product_modules() -> list[Path]:
    return sorted(p for folder in ("bourre_env", "agents", "train") for p in (ROOT / folder).rglob("*.py"))


def test_no_product_module_is_over_the_line_limit() -> None:
    long = {str(p.relative_to(ROOT)): n for p in product_modules()
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert set(long) <= LONG_MODULES | LONG_MODULES_PENDING, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_train_and_agents_read_no_state_offset() -> None:
    pattern = re.compile(r"\bcore\.[SP]_[A-Z]")
    readers = {str(p.relative_to(ROOT)) for folder in ("train", "agents") for p in (ROOT / folder).rglob("*.py")
               if pattern.search(p.read_text())}
    assert readers <= OFFSET_READERS_PENDING, (
        f"{sorted(readers - OFFSET_READERS_PENDING)} read state offsets: use bourre_env.view instead")
