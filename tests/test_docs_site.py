"""The documentation site (mkdocs.yml, docs/docs_site.md): the strict build passes, and fails on what it must catch.

The real build runs once, into a temporary folder. The failures are shown on a small site made of the same
configuration and hooks (a README, two pages), so that each costs seconds, not the full build's time.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:  # a dotted name whose parent package is missing
        return True


MISSING = [name for name in ("mkdocs", "material", "mkdocstrings_handlers.python") if _missing(name)]
pytestmark = pytest.mark.skipif(
    bool(MISSING), reason=f"the docs site needs the dev extra (pip install -e '.[dev]'): {', '.join(MISSING)} missing"
)


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
    (root / "tool.py").write_text("print('a file of the repository')\n", encoding="utf-8")
    (root / "docs" / "a.md").write_text("# A\n\n## A heading\n\n[b](b.md#b-heading), [code](../tool.py)\n")
    (root / "docs" / "b.md").write_text("# B\n\n## B heading\n\n[back](a.md#a-heading)\n")
    return root / "mkdocs.yml"


def test_a_small_site_of_the_same_configuration_builds(small_site: Path, tmp_path: Path) -> None:
    result = _strict_build(small_site, tmp_path / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "source" / "tool.py").is_file()
    assert 'href="../source/tool.py"' in (tmp_path / "site" / "a" / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("page_b", "nav", "reported"),
    [
        ("# B\n\n[gone](missing.md)\n", None, "missing.md"),
        ("# B\n\n[no such heading](a.md#no-such-heading)\n", None, "no-such-heading"),
        ("# B\n\n[gone](../missing.py)\n", None, "missing.py"),
        ("# B\n", "  - b.md\n", 'not included in the "nav"'),
    ],
    ids=["broken-link", "broken-anchor", "broken-link-out-of-docs", "page-missing-from-nav"],
)
def test_the_strict_build_fails(small_site: Path, tmp_path: Path, page_b: str, nav: str | None, reported: str) -> None:
    (small_site.parent / "docs" / "b.md").write_text(page_b, encoding="utf-8")
    if nav is not None:
        config = small_site.read_text(encoding="utf-8").replace(nav, "")
        small_site.write_text(config, encoding="utf-8")
    result = _strict_build(small_site, tmp_path / "site")
    assert result.returncode != 0
    assert reported in result.stdout + result.stderr
