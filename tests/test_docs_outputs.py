"""The commands the README and docs/ show leave the checkout clean: each file they write lies where .gitignore
covers it (a user who copies a command sees no new untracked file in ``git status``)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# an option that names a file or folder the command writes, and its value as the pages write it
OUTPUT_OPTION = re.compile(r"--(?:json|markdown|save|token-file)[ =]([^\s`|\\)]+)")
NBCONVERT = re.compile(r"jupyter nbconvert [^`\n]*--execute [^`\n]*")


def _is_example_path(value: str) -> bool:
    """A path the reader would type as it is, not a placeholder (``PATH``, ``DIR``) or a path outside the checkout."""
    return not (value.isupper() or value.startswith(("/", "$", "~", "<", "-")) or "{" in value)


def _written_paths(text: str) -> list[str]:
    """The checkout paths that the commands of a page write, as their options name them."""
    paths = [value for value in OUTPUT_OPTION.findall(text) if _is_example_path(value)]
    for command in NBCONVERT.findall(text):
        notebook = next(word for word in command.split() if word.endswith(".ipynb"))
        folder = re.search(r"--output-dir[ =](\S+)", command)
        name = Path(notebook).with_suffix(".nbconvert.ipynb").name
        paths.append(str(Path(folder.group(1) if folder else Path(notebook).parent) / name))
    return paths


def test_written_paths_reads_the_options_and_nbconvert() -> None:
    text = (
        "`bourre arena rerate --json ratings.json` and `--json PATH`, "
        "`jupyter nbconvert --to notebook --execute notebooks/a.ipynb`, "
        "`jupyter nbconvert --execute notebooks/a.ipynb --output-dir runs/nb`, `--save /tmp/x.json`"
    )
    assert _written_paths(text) == ["ratings.json", "notebooks/a.nbconvert.ipynb", "runs/nb/a.nbconvert.ipynb"]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs a git checkout")
def test_every_file_a_documented_command_writes_is_ignored() -> None:
    written = {
        (path.relative_to(ROOT).as_posix(), target) for path in DOCUMENTS for target in _written_paths(path.read_text())
    }
    assert len(written) >= 5  # the scan still finds the commands (the notebook, rerate, play --save, ...)
    result = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        input="\n".join(target for _, target in sorted(written)),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    ignored = set(result.stdout.split())
    assert not sorted((page, target) for page, target in written if target not in ignored)
