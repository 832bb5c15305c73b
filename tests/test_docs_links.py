"""The documentation stands on its own: its relative links resolve inside the repository, and nothing points
outside it to the specification the project was written from."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "notebooks").glob("*.ipynb"))]
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
OUTSIDE = ".." + "/shared"  # split so that this file does not mention it
SKIPPED_DIRS = {
    ".git",
    ".venv",
    "venv",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    "runs",
    "build",
    "dist",
    ".ipynb_checkpoints",
}


def _markdown(path: Path) -> str:
    """The Markdown of a document: the file itself, or a notebook's markdown cells; code blocks left out."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        text = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        text = path.read_text()
    return FENCE.sub("", text)


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but ``-`` and ``_`` dropped, spaces as ``-``."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    return {_anchor(m.group(1)) for m in re.finditer(r"^#{1,6} +(.+?) *#*$", _markdown(path), re.M)}


def _relative_links(path: Path) -> list[str]:
    links = LINK.findall(_markdown(path))
    return [t for t in links if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t)]  # no scheme: http:, mailto:


def test_the_documents_have_relative_links() -> None:
    """The check below has something to check: the README and the rule book link to each other."""
    assert any(t.startswith("docs/rules.md") for t in _relative_links(ROOT / "README.md"))
    assert (ROOT / "docs" / "rules.md") in DOCUMENTS


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve_inside_the_repository(document: Path) -> None:
    for target in _relative_links(document):
        file_part, _, anchor = target.partition("#")
        resolved = (document.parent / file_part).resolve() if file_part else document
        assert resolved.is_relative_to(ROOT), f"{target} leaves the repository"
        assert resolved.exists(), f"{target} does not exist"
        if anchor and resolved.suffix in (".md", ".ipynb"):
            assert anchor in _anchors(resolved), f"{target}: no heading with the anchor #{anchor}"


def _repository_files() -> list[Path]:
    """The files of the working tree: the tracked and untracked ones git does not ignore, or every file outside
    caches and environments where git is not available."""
    try:
        listed = (
            subprocess.run(
                ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                cwd=ROOT,
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .split("\0")
        )
        return [ROOT / name for name in listed if name and (ROOT / name).is_file()]
    except (OSError, subprocess.CalledProcessError):
        return [
            p
            for p in ROOT.rglob("*")
            if p.is_file()
            and not SKIPPED_DIRS & set(p.relative_to(ROOT).parts)
            and not any(part.endswith(".egg-info") for part in p.relative_to(ROOT).parts)
        ]


def test_no_file_points_outside_the_repository_to_the_specification() -> None:
    files = _repository_files()
    assert ROOT / "README.md" in files
    offenders = [str(p.relative_to(ROOT)) for p in files if OUTSIDE.encode() in p.read_bytes()]
    assert offenders == []
