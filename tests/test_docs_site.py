"""The documentation site (mkdocs.yml, docs/docs_site.md): the strict build passes, and fails on what it must catch.

The real build runs once, into a temporary folder. The failures are shown on a small site made of the same
configuration and hooks (a README, two pages), so that each costs seconds, not the full build's time.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
# a module docstring with a simple table as the env's are written: a header, a row continued on the next line
TABLE_DOCSTRING = '''"""A tool.

===== ==========
name  meaning
===== ==========
alpha the first
      letter
beta  the second
===== ==========
"""
'''


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:  # a dotted name whose parent package is missing
        return True


MISSING = [name for name in ("mkdocs", "material", "mkdocstrings_handlers.python") if _missing(name)]
pytestmark = pytest.mark.skipif(
    bool(MISSING), reason=f"the docs site needs the dev extra (pip install -e '.[dev]'): {', '.join(MISSING)} missing"
)


def _hook(name: str) -> ModuleType:
    """A module of docs/hooks/, which is the site's code, not a package."""
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", REPO / "docs" / "hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _unrendered(html: str) -> list[str]:
    borders: list[str] = _hook("site").unrendered_tables(html)
    return borders


def _strict_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    result = _strict_build(REPO / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    site = tmp_path / "site"
    home = (site / "index.html").read_text(encoding="utf-8")
    # the README is the home: its links to docs/ lead to the pages, its link to a notebook to the published copy
    assert 'href="rules/"' in home
    assert (site / "source" / "notebooks" / "quickstart.ipynb").is_file()
    for page in ("bourre_env", "agents", "messages"):
        assert (site / "reference" / page / "index.html").is_file()
    reference = (site / "reference" / "bourre_env" / "index.html").read_text(encoding="utf-8")
    for name in ("bourre_env.bourre_v0", "bourre_env.core.step", "bourre_env.batch.BatchGame", "BourreVectorEnv"):
        assert name in reference
    # the docstrings' reStructuredText tables are the site's tables: the summary, presets, phases, actions, layout
    assert not [border for page in site.glob("**/*.html") for border in _unrendered(page.read_text("utf-8"))]
    for header in ("<th>name</th>\n<th>start</th>\n<th>size</th>", "<th>phase</th>", "<th>id</th>"):
        assert header in reference, header
    assert "<td>Observation shape</td>" in reference and "<th></th>" not in reference
    assert 'id="agents.make"' in (site / "reference" / "agents" / "index.html").read_text(encoding="utf-8")
    messages = (site / "reference" / "messages" / "index.html").read_text(encoding="utf-8")
    for schema in (REPO / "train" / "arena" / "schemas").glob("*.json"):
        assert f'id="{schema.stem}"' in messages, schema.stem


@pytest.fixture
def small_site(tmp_path: Path) -> Path:
    """A copy of the site's configuration and hooks with a README and two pages; returns its mkdocs.yml."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "docs" / "hooks", root / "docs" / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    config = config[: config.index("\nnav:")] + "\nnav:\n  - index.md\n  - a.md\n  - b.md\n"
    (root / "mkdocs.yml").write_text(config, encoding="utf-8")
    (root / "README.md").write_text("# Home\n\nSee [a page](docs/a.md) and [the code](tool.py).\n", encoding="utf-8")
    (root / "train" / "arena" / "schemas").mkdir(parents=True)  # mkdocs.yml watches it
    (root / "tool.py").write_text(TABLE_DOCSTRING + "print('a file of the repository')\n", encoding="utf-8")
    (root / "docs" / "a.md").write_text("# A\n\n## A heading\n\n[b](b.md#b-heading), [code](../tool.py)\n\n::: tool\n")
    (root / "docs" / "b.md").write_text("# B\n\n## B heading\n\n[back](a.md#a-heading)\n")
    return root / "mkdocs.yml"


def test_a_small_site_of_the_same_configuration_builds(small_site: Path, tmp_path: Path) -> None:
    result = _strict_build(small_site, tmp_path / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "source" / "tool.py").is_file()
    page_a = (tmp_path / "site" / "a" / "index.html").read_text(encoding="utf-8")
    assert 'href="../source/tool.py"' in page_a
    assert "<th>name</th>" in page_a and "<td>the first letter</td>" in page_a  # the docstring's table, rendered


@pytest.mark.parametrize(
    ("page_b", "nav", "reported"),
    [
        ("# B\n\n[gone](missing.md)\n", None, "missing.md"),
        ("# B\n\n[no such heading](a.md#no-such-heading)\n", None, "no-such-heading"),
        ("# B\n\n[gone](../missing.py)\n", None, "missing.py"),
        ("# B\n", "  - b.md\n", 'not included in the "nav"'),
        ("# B\n\n=== ===\nab  cd\n=== ===\n", None, "reStructuredText table border(s) printed as text"),
        ("# B\n\n::: gap\n", None, "reStructuredText table border(s) printed as text"),
    ],
    ids=[
        "broken-link",
        "broken-anchor",
        "broken-link-out-of-docs",
        "page-missing-from-nav",
        "table-on-a-page",
        "docstring-table-with-text-in-a-gap",
    ],
)
def test_the_strict_build_fails(small_site: Path, tmp_path: Path, page_b: str, nav: str | None, reported: str) -> None:
    (small_site.parent / "docs" / "b.md").write_text(page_b, encoding="utf-8")
    # a table the extension cannot read: a cell's text runs into the gap between two columns
    (small_site.parent / "gap.py").write_text(TABLE_DOCSTRING.replace("alpha the first", "alphabet first"))
    if nav is not None:
        config = small_site.read_text(encoding="utf-8").replace(nav, "")
        small_site.write_text(config, encoding="utf-8")
    result = _strict_build(small_site, tmp_path / "site")
    assert result.returncode != 0
    assert reported in result.stdout + result.stderr


def test_a_simple_table_becomes_a_markdown_table() -> None:
    convert = _hook("rst_tables").tables_to_markdown
    docstring = TABLE_DOCSTRING.strip('"\n')
    assert convert(docstring).split("\n") == [
        "A tool.",
        "",
        "| name | meaning |",
        "| --- | --- |",
        "| alpha | the first letter |",
        "| beta | the second |",
    ]
    # no header row: the table gets an empty one (the site's hook drops it); a "|" in a cell is escaped
    assert convert("  === ===\n  a   b|c\n  === ===\n\nafter") == "  |  |  |\n  | --- | --- |\n  | a | b\\|c |\n\nafter"


def test_a_table_that_is_not_a_simple_table_is_left_as_it_is() -> None:
    convert = _hook("rst_tables").tables_to_markdown
    in_a_gap = "===== ===\nalphabet x\n===== ==="
    unclosed = "=== ===\na   b\n\nmore text"
    for text in (in_a_gap, unclosed):
        assert convert(text) == text


def test_every_docstring_table_of_the_packages_reaches_the_site_as_a_table() -> None:
    """Each reStructuredText table in a docstring of the packages (dedented, as griffe hands it to the renderer)
    becomes a Markdown table, so none would be printed as text if its module joined the API reference."""
    hook = _hook("rst_tables")
    unread = []
    for path in sorted(p for package in ("bourre_env", "agents", "train") for p in (REPO / package).glob("**/*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            docstring = ast.get_docstring(node) or ""
            if any(hook.BORDER.match(line) for line in hook.tables_to_markdown(docstring).split("\n")):
                unread.append(f"{path.relative_to(REPO)}:{getattr(node, 'name', '<module>')}")
    assert not unread
