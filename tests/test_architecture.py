"""The shape of the code: imports run one way, between the top-level packages (bourre_env <- agents <- train),
inside ``bourre_env``, between train/'s wings (``TRAIN_FLOORS``), and between the two web servers (``train.arena``
and ``train.serve`` import only their shared helpers, ``train.web``, never each other), no module of the product is
in an import cycle, state offsets stay inside ``bourre_env``, and no module uses the private names of another folder.

``docs/architecture.md`` draws the module graph these tests hold the code to.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "bourre_env"
PRODUCT_FOLDERS = ("bourre_env", "agents", "train")  # lowest first: each imports only itself and those before it
# The rules core's modules (bourre_env/core/), lowest first: each may import only modules before it in this list,
# never the facade ``bourre_env.core`` (its ``__init__``) and nothing else of ``bourre_env``.
CORE_ORDER = [
    "cards",
    "rules",
    "layout",
    "bits",
    "tricks",
    "cinch_bounds",
    "cinch_options",
    "cinch_probe",
    "cinch_table",
    "cinch_relaxed",
    "cinch_search",
    "cinch_worlds",
    "cinch",
    "settlement",
    "deal",
    "play",
    "rounds",
]
MAX_MODULE_LINES = 700
LONG_MODULES: set[str] = set()  # every product module is under the limit
# Modules over the limit that are being split separately; remove one from this set once it is under the limit.
LONG_MODULES_PENDING: set[str] = set()
# Agents that still read ``core.S_`` offsets; they are converted to ``bourre_env.view`` accessors separately.
# Remove a file from this set once it no longer reads an offset: the test then holds it to that.
OFFSET_READERS_PENDING: set[str] = set()


def dotted_name(path: Path, root: Path = ROOT) -> str:
    """``bourre_env/core/bits.py`` -> ``bourre_env.core.bits``; a package's ``__init__.py`` -> the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_file(dotted: str, root: Path = ROOT) -> Path | None:
    """The file of the module or package ``dotted`` in the repository, or None (the standard library, a dependency)."""
    base = root.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def package_modules() -> dict[str, Path]:
    """Every module of ``bourre_env``, subpackages included, by its name inside the package (``core.bits``,
    ``core`` for the facade, ``observation``); the package's own ``__init__`` is left out."""
    found = {dotted_name(p).removeprefix("bourre_env").removeprefix("."): p for p in PACKAGE.rglob("*.py")}
    found.pop("", None)
    return found


def package_imports(path: Path) -> set[str]:
    """Modules of ``bourre_env`` (named as in ``package_modules``) that the module at ``path`` imports, anywhere in it
    (functions included). ``from bourre_env.core import cards`` imports ``core.cards``; ``from bourre_env.core import
    step`` imports the facade ``core``."""
    tree = ast.parse(path.read_text())
    modules = package_modules()
    found: set[str] = set()

    def add(dotted: str, names: list[str]) -> None:
        rel = dotted.removeprefix("bourre_env").removeprefix(".")
        for name in names:
            sub = f"{rel}.{name}" if rel else name
            if sub in modules:
                found.add(sub)
            elif rel:
                found.add(rel)

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "bourre_env" or node.module.startswith("bourre_env."):
                add(node.module, [alias.name for alias in node.names])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("bourre_env."):
                    add(alias.name.rpartition(".")[0], [alias.name.rpartition(".")[2]])
    own = dotted_name(path).removeprefix("bourre_env").removeprefix(".")
    return (found & set(modules)) - {own}


def import_graph() -> dict[str, set[str]]:
    return {name: package_imports(path) for name, path in sorted(package_modules().items())}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph as a list of nodes (first repeated last), or None (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
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


def product_module_names() -> tuple[dict[str, Path], set[str]]:
    """Every module of the product's packages by its dotted name, and the names that are packages (their
    ``__init__``)."""
    found: dict[str, Path] = {}
    packages: set[str] = set()
    for top in PRODUCT_FOLDERS:
        for path in (ROOT / top).rglob("*.py"):
            name = dotted_name(path)
            found[name] = path
            if path.name == "__init__.py":
                packages.add(name)
    return found, packages


def product_imports(path: Path, modules: dict[str, Path], root: Path = ROOT) -> set[str]:
    """The product's modules that the module at ``path`` imports, anywhere in it (functions included):
    ``from train.arena import match`` imports ``train.arena.match``, ``from train.arena.match import X`` the
    module ``train.arena.match``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in modules else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return (found & set(modules)) - {dotted_name(path, root)}


def test_the_top_level_packages_import_one_way() -> None:
    """bourre_env imports neither agents nor train; agents does not import train (README: imports flow one way)."""
    modules, _ = product_module_names()
    upward = []
    for name, path in sorted(modules.items()):
        rank = PRODUCT_FOLDERS.index(name.split(".")[0])
        upward += [
            f"{name} -> {other}"
            for other in sorted(product_imports(path, modules))
            if PRODUCT_FOLDERS.index(other.split(".")[0]) > rank
        ]
    assert not upward, "imports against the packages' order: " + "; ".join(upward[:10])


def defines_names(path: Path) -> bool:
    """Whether a package's ``__init__`` defines something of its own (a constant, a function, a class) besides its
    ``__all__`` and the names it gathers from its modules by import."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return True
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(not (isinstance(target, ast.Name) and target.id == "__all__") for target in targets):
            return True
    return False


def test_no_import_cycle_in_the_product() -> None:
    """No module of bourre_env, agents or train imports, through others, itself. A package's ``__init__`` that only
    gathers its modules' names (a facade) is left out, since its modules may import a sibling through it; one that
    defines names of its own is a module like any other (train/arena/people's once held the package's bounds, which
    its modules read through it: a circle this test did not see)."""
    modules, packages = product_module_names()
    faces = {name for name in packages if not defines_names(modules[name])}
    graph = {name: product_imports(path, modules) - faces for name, path in modules.items() if name not in faces}
    cycle = find_cycle(graph)
    assert cycle is None, f"import cycle: {' -> '.join(cycle or [])}"


def test_a_package_face_that_defines_names_is_seen_in_a_cycle(tmp_path: Path) -> None:
    """The cycle check sees through a facade but not through a package ``__init__`` that defines names."""
    package = tmp_path / "train" / "wing"
    package.mkdir(parents=True)
    (tmp_path / "train" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("from train.wing.a import A\n\nLIMIT = 3\n")
    (package / "a.py").write_text("from train import wing\n\nA = wing.LIMIT\n")
    init, a = package / "__init__.py", package / "a.py"
    assert defines_names(init) and not defines_names(tmp_path / "train" / "__init__.py")
    modules = {"train": tmp_path / "train" / "__init__.py", "train.wing": init, "train.wing.a": a}
    graph = {name: product_imports(path, modules, tmp_path) for name, path in modules.items() if name != "train"}
    assert find_cycle(graph) is not None


WEB_SERVERS = ("train.arena", "train.serve")  # the two web servers: neither imports the other
WEB_HELPERS = "train.web"  # what both use, below both: it imports nothing of train but itself


def _in(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def web_imports_against_the_order(modules: dict[str, Path], root: Path = ROOT) -> list[str]:
    """Imports that break the web servers' order: one server importing the other, or ``train.web`` importing
    anything of ``train`` outside itself (either server included)."""
    found = []
    for name, path in sorted(modules.items()):
        imported = sorted(product_imports(path, modules, root))
        for server in WEB_SERVERS:
            if _in(name, server):
                found += [
                    f"{name} -> {other}" for other in imported if any(_in(other, s) for s in WEB_SERVERS if s != server)
                ]
        if _in(name, WEB_HELPERS):
            found += [f"{name} -> {other}" for other in imported if _in(other, "train") and not _in(other, WEB_HELPERS)]
    return found


def _made_tree(root: Path, sources: dict[str, str]) -> dict[str, Path]:
    """The files ``sources`` (path: source) written under ``root``; its modules by dotted name."""
    for where, source in sources.items():
        (root / where).parent.mkdir(parents=True, exist_ok=True)
        (root / where).write_text(source)
    return {dotted_name(p, root): p for p in root.rglob("*.py")}


def test_web_imports_against_the_order_finds_them(tmp_path: Path) -> None:
    sources = {
        "train/arena/a.py": "from train.serve import b\nfrom train.web import c\n",  # only the first is against it
        "train/serve/b.py": "import train.arena.a\n",
        "train/web/c.py": "from train.serve.b import x\n",
        "train/web/d.py": "from train import runs\nfrom train.web import c\nimport agents\n",
        "train/runs.py": "",
        "agents/__init__.py": "",
    }
    modules = _made_tree(tmp_path, sources)
    assert web_imports_against_the_order(modules, tmp_path) == [
        "train.arena.a -> train.serve.b",
        "train.serve.b -> train.arena.a",
        "train.web.c -> train.serve.b",
        "train.web.d -> train.runs",
    ]


def test_the_web_servers_import_each_other_nothing_and_their_helpers_are_below_both() -> None:
    """``train.arena`` imports nothing of ``train.serve`` and ``train.serve`` nothing of ``train.arena``: the web
    helpers both use are in ``train.web``, which imports neither (nor anything else of ``train``)."""
    modules, _ = product_module_names()
    assert any(_in(name, WEB_HELPERS) for name in modules), f"no {WEB_HELPERS} package"
    found = web_imports_against_the_order(modules)
    assert not found, "imports against the web servers' order: " + "; ".join(found[:10])


# train/'s wings (a subpackage, or a module at train/'s top), lowest floor first: a wing imports only itself and wings
# of lower floors, never a wing of its own floor (two trainers, the two web servers) nor one above.
TRAIN_FLOORS: list[set[str]] = [
    {"table", "web", "arguments", "run_dir", "outputs", "grouped_cli"},  # table, web helpers, argument and file tools
    {"schedule"},  # the duplicate schedule: who sits where, seeded how, for a deal or a session
    {"eval"},  # evaluation: deals played on the table
    {"runs", "console"},  # run folders read back, the console's reports
    {"learning"},  # what the trainers share
    {"ppo", "dmc", "exit", "sb3", "examples"},  # the trainers
    {"research"},  # measurements that may run a trainer
    {
        "serve",
        "arena",
        "terminal_game",
        "bench",
        "compile_ahead",
        "ladder_command",
        "eval_command",
        "train_command",
    },  # where people and bots play; the tools' runners and the commands' own parsers
    {"cli"},  # the command line, at the top
]


def train_wing(name: str) -> str | None:
    """``train.arena.match`` -> ``arena``, ``train.cli`` -> ``cli``; None outside ``train`` and for ``train`` itself."""
    parts = name.split(".")
    return parts[1] if parts[0] == "train" and len(parts) > 1 else None


def wing_imports_against_the_floors(modules: dict[str, Path], root: Path = ROOT) -> list[str]:
    """Imports between train/'s wings that do not go to a lower floor; a wing on no floor is named too."""
    floor = {wing: i for i, wings in enumerate(TRAIN_FLOORS) for wing in wings}
    found = []
    for name, path in sorted(modules.items()):
        wing = train_wing(name)
        if wing is None:
            continue
        if wing not in floor:
            found.append(f"{name}: its wing {wing!r} is on no floor of TRAIN_FLOORS")
            continue
        for other in sorted(product_imports(path, modules, root)):
            other_wing = train_wing(other)
            if other_wing is None or other_wing == wing:
                continue
            if floor.get(other_wing, len(TRAIN_FLOORS)) >= floor[wing]:
                found.append(f"{name} -> {other}")
    return found


def test_wing_imports_against_the_floors_finds_them(tmp_path: Path) -> None:
    sources = {
        "train/eval/a.py": "from train.table import Deal\nfrom train.arena import b\n",  # only the second is against it
        "train/arena/b.py": "from train.serve import c\nfrom train import eval\n",  # a wing of its own floor
        "train/serve/c.py": "",
        "train/table.py": "",
        "train/eval/__init__.py": "",
        "train/newwing/d.py": "",
    }
    modules = _made_tree(tmp_path, sources)
    assert wing_imports_against_the_floors(modules, tmp_path) == [
        "train.arena.b -> train.serve.c",
        "train.eval.a -> train.arena.b",
        "train.newwing.d: its wing 'newwing' is on no floor of TRAIN_FLOORS",
    ]


def test_train_wings_import_only_lower_floors() -> None:
    """README and docs/architecture.md: train/ is built in floors, from the table up to the command line."""
    modules, _ = product_module_names()
    found = wing_imports_against_the_floors(modules)
    assert not found, "imports against train/'s floors: " + "; ".join(found[:10])


def test_core_order_lists_every_module_of_the_core() -> None:
    assert {p.stem for p in (PACKAGE / "core").glob("*.py")} == {*CORE_ORDER, "__init__"}


@pytest.mark.parametrize("module", CORE_ORDER)
def test_rules_core_imports_only_lower_modules(module: str) -> None:
    imported = package_imports(PACKAGE / "core" / f"{module}.py")
    allowed = {f"core.{m}" for m in CORE_ORDER[: CORE_ORDER.index(module)]}
    assert imported <= allowed, (
        f"bourre_env.core.{module} imports {sorted(imported - allowed)}: only modules "
        f"below it in {CORE_ORDER}, never the facade bourre_env.core"
    )


def product_modules() -> list[Path]:
    return sorted(p for folder in PRODUCT_FOLDERS for p in (ROOT / folder).rglob("*.py"))


def test_no_product_module_is_over_the_line_limit() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in product_modules()
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert set(long) <= LONG_MODULES | LONG_MODULES_PENDING, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_train_and_agents_read_no_state_offset() -> None:
    pattern = re.compile(r"\bcore\.[SP]_[A-Z]")
    readers = {
        str(p.relative_to(ROOT))
        for folder in ("train", "agents")
        for p in (ROOT / folder).rglob("*.py")
        if pattern.search(p.read_text())
    }
    assert readers <= OFFSET_READERS_PENDING, (
        f"{sorted(readers - OFFSET_READERS_PENDING)} read state offsets: use bourre_env.view instead"
    )


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def foreign_private_names(path: Path, source: str | None = None, root: Path = ROOT) -> list[str]:
    """Private names (``_name``) of a module in another folder that the module at ``path`` uses: imported
    (``from bourre_env.core.bits import _bit``) or read as an attribute of an imported module (``core._bit``,
    ``bourre_env.core.bits._bit``). A package's private names belong to its own folder and its subfolders' modules
    to theirs; ``source`` stands in for the file's text (to test this checker)."""
    tree = ast.parse(path.read_text() if source is None else source)
    here = path.parent
    bound: dict[str, str] = {}  # local name -> dotted module it is bound to
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if module_file(alias.name, root):
                    local = alias.asname or alias.name.partition(".")[0]
                    bound[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            home = module_file(node.module, root)
            if home is None:
                continue
            for alias in node.names:
                if module_file(f"{node.module}.{alias.name}", root):
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                if _private(alias.name) and home.parent != here:
                    found.append(f"line {node.lineno}: from {node.module} import {alias.name}")
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        attrs: list[ast.Attribute] = []
        base: ast.expr = node
        while isinstance(base, ast.Attribute):
            attrs.insert(0, base)
            base = base.value
        if not isinstance(base, ast.Name) or base.id not in bound:
            continue
        dotted = bound[base.id]
        for attr in attrs:
            if module_file(f"{dotted}.{attr.attr}", root):
                dotted = f"{dotted}.{attr.attr}"
                continue
            home = module_file(dotted, root)
            use = f"line {attr.lineno}: {dotted}.{attr.attr}"
            if _private(attr.attr) and home is not None and home.parent != here and use not in found:
                found.append(use)
            break
    return found


def test_foreign_private_names_finds_them() -> None:
    source = """
import bourre_env.core.bits
from bourre_env import core
from bourre_env.core import rounds as r
from bourre_env.core.bits import _bit, popcount
from agents.heuristic.odds import _field
core._bit
core.bits._n.real
r._step_draw(1)
bourre_env.core.cinch._probe
core.step
self._x
"""
    found = foreign_private_names(ROOT / "train" / "example.py", source)
    assert sorted(use.partition(": ")[2] for use in found) == sorted(
        [
            "from bourre_env.core.bits import _bit",
            "from agents.heuristic.odds import _field",
            "bourre_env.core._bit",
            "bourre_env.core.bits._n",
            "bourre_env.core.rounds._step_draw",
            "bourre_env.core.cinch._probe",
        ]
    ), found
    # at home: a module of the same folder may use its neighbours' private names
    assert foreign_private_names(ROOT / "bourre_env" / "core" / "example.py", source) == [
        "line 6: from agents.heuristic.odds import _field"
    ]


def test_no_module_uses_another_folders_private_names() -> None:
    found = {str(p.relative_to(ROOT)): uses for p in product_modules() if (uses := foreign_private_names(p))}
    assert not found, f"private names of another folder (make what is shared public in its home module): {found}"


def compiled_functions(path: Path) -> set[str]:
    """Names of the module's functions compiled by numba (decorated ``njit``, ``jit``, ``numba.njit(...)``...)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if name in ("njit", "jit"):
                    names.add(node.name)
    return names


def referenced_names(path: Path) -> set[str]:
    """Every name the module reads, imports or takes as an attribute, less the functions it defines itself (a
    kernel of the same name in another file is its own)."""
    found = set()
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            found.update(alias.name for alias in node.names)
    return found - {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}


def test_compiled_functions_finds_them() -> None:
    assert {"_sparse_rows", "_by_column"} <= compiled_functions(ROOT / "train" / "learning" / "policy_net.py")
    assert "sparse_rows" not in compiled_functions(ROOT / "train" / "learning" / "policy_net.py")


def test_compiled_kernels_of_train_stay_in_their_own_file() -> None:
    """numba checks a cached kernel only against its own file, and ``bourre_env._jit_cache`` keys the cache folder on
    the sources of ``bourre_env`` and ``agents`` alone: a kernel of ``train`` compiled into a kernel of another file
    would run stale code after an edit. Call it through a Python function of its own file, or move both into one."""
    files = sorted((ROOT / "train").rglob("*.py"))
    kernels = {path: compiled_functions(path) for path in files}
    references = {path: referenced_names(path) for path in files}
    crossing = [
        f"{other.relative_to(ROOT)} uses {name} of {path.relative_to(ROOT)}"
        for path, names in kernels.items()
        for other in files
        if other != path
        for name in sorted(names & references[other])
    ]
    assert not crossing, crossing
