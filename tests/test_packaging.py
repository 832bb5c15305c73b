"""The package builds without deprecation warnings, and the wheel carries its data files."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("wheel")
    # no build isolation: the installed setuptools builds it, so the test needs no download
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", str(ROOT), "-w", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    wheels = list(out.glob("bourre_rl-*.whl"))
    assert len(wheels) == 1
    return wheels[0], result.stdout + result.stderr


def test_the_build_prints_no_deprecation_warning(wheel_build: tuple[Path, str]) -> None:
    _, log = wheel_build
    warnings = [line for line in log.splitlines() if "deprecat" in line.lower()]
    assert not warnings, "\n".join(warnings)


def test_the_wheel_carries_the_model_the_schema_and_the_web_page(wheel_build: tuple[Path, str]) -> None:
    wheel, _ = wheel_build
    names = zipfile.ZipFile(wheel).namelist()
    for suffix in (
        "agents/models/ppo.npz",
        "hand_history.schema.json",
        "serve/static/index.html",
        "eval/ladder_reference.json",
        "eval/ladder_reference_session.json",
        "py.typed",
    ):
        assert any(name.endswith(suffix) for name in names), f"the wheel lacks {suffix}"
    metadata = next(name for name in names if name.endswith(".dist-info/METADATA"))
    assert "License-Expression: MIT" in zipfile.ZipFile(wheel).read(metadata).decode()


def test_ci_runs_the_linters_of_the_pre_commit_hooks_before_the_tests() -> None:
    """The pre-commit hooks and CI run the same checks, and CI runs them before the README's test command."""
    hooks = (ROOT / ".pre-commit-config.yaml").read_text()
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    commands = [line.strip() for line in ci if line.strip() and not line.lstrip().startswith("#")]
    tests = commands.index("python -m pytest -q")
    for linter in ("ruff check .", "ruff format --check .", "mypy"):
        assert linter in commands[:tests], f".ci/run does not run {linter!r} before the tests"
        assert f"entry: {linter.removesuffix(' .')}" in hooks, f"the pre-commit hooks do not run {linter!r}"


def test_the_linters_are_pinned_so_ci_checks_the_same_rules_every_run() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    dev = next(line for line in pyproject.splitlines() if line.startswith("dev = "))
    assert '"ruff==' in dev and '"mypy==' in dev
