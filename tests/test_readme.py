"""Layer 5: the README is a front page: its Python examples run as written, it stays short, and what it says
about installing, testing and the folders is what CI and the repository do."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAX_LINES = 300  # a front page: what a visitor needs in five minutes; the rest lives under docs/


def _block_after(heading: str, language: str = "") -> str:
    """The first fenced block of ``language`` after ``heading`` in the README."""
    text = README.read_text().split(heading, 1)[1]
    return re.search(rf"```{language}\n(.*?)```", text, re.S).group(1)  # type: ignore[union-attr]


def test_readme_python_blocks_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 3
    result = subprocess.run([sys.executable, "-c", "\n".join(blocks)], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "player_0" in result.stdout


def test_readme_is_a_front_page() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; move the detail to a page under docs/"


def test_readme_links_every_docs_page() -> None:
    text = README.read_text()
    missing = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if f"(docs/{p.name})" not in text]
    assert missing == []


def test_readme_test_command_and_install_line_are_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    ci_commands = [line.strip() for line in ci.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert ci_commands[-1] == "python -m pytest -q"
    ci_extras = re.search(r'pip install -q -e "\.\[([\w,]+)\]"', ci).group(1)  # type: ignore[union-attr]
    tests_line = re.findall(r"```bash\n(.*?)```", README.read_text().split("## Two commands", 1)[1], re.S)[1]
    assert tests_line.strip().endswith("&& python -m pytest -q")
    assert f'pip install -e ".[{ci_extras}]"' in tests_line
    assert f'pip install -e ".[{ci_extras}]"' in _block_after("## Install", "bash")
    assert "```bash\npython -m pytest -q\n```" in README.read_text().split("## Tests", 1)[1]


def test_readme_extras_table_lists_every_extra() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    table = pyproject.split("[project.optional-dependencies]\n", 1)[1].split("\n[", 1)[0]
    extras = re.findall(r"^([\w-]+) = \[", table, re.M)
    assert extras
    section = README.read_text().split("## Install", 1)[1].split("\n## ", 1)[0]
    documented = set(
        re.findall(
            r"`(\w+)`", " ".join(line.split(" | ")[0] for line in section.splitlines() if line.startswith("| `"))
        )
    )
    assert documented == set(extras)


def test_readme_layout_names_every_folder() -> None:
    """Every folder of the repository down to the ones the layout lists is there, and nothing listed is missing."""
    block = _block_after("## Layout")
    listed = set(re.findall(r"^(\S+/) ", block, re.M))
    try:
        tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("the repository's folders are listed with git")
    folders = {str(Path(name).parent) + "/" for name in tracked.splitlines() if "/" in name}
    top = {f.split("/")[0] + "/" for f in folders}
    assert top <= listed, top - listed
    assert all((ROOT / f).is_dir() for f in listed), [f for f in listed if not (ROOT / f).is_dir()]
    second = {"/".join(f.split("/")[:2]) + "/" for f in folders if f.count("/") >= 2}
    assert second <= listed, second - listed


def test_pytest_names_the_slowest_tests_and_the_readme_says_so() -> None:
    pytest_options = (ROOT / "pyproject.toml").read_text().split("[tool.pytest.ini_options]", 1)[1].split("\n[", 1)[0]
    addopts = next(line for line in pytest_options.splitlines() if line.startswith("addopts = "))
    assert "--durations=15" in shlex.split(shlex.split(addopts.removeprefix("addopts = "))[0])
    tests_section = (ROOT / "README.md").read_text().split("## Tests", 1)[1].split("\n## ", 1)[0]
    assert "15 slowest tests" in " ".join(tests_section.split()) and "--durations=15" in tests_section


def test_the_readme_says_which_torch_build_a_stock_pip_gets_and_how_to_get_the_cpu_one() -> None:
    readme = (ROOT / "README.md").read_text()
    install = [line for line in readme.splitlines() if line.startswith("pip install torch==2.13.0")]
    assert len(install) == 1 and "CUDA build" in install[0]
    assert "--index-url https://download.pytorch.org/whl/cpu" in install[0]
    assert "the CPU build, so the extras pull no CUDA" not in readme  # what a stock pip on Linux does not do
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install -q torch==2.13.0\n" in ci and "index-url" not in ci  # CI's install stays as it was
