"""Bad command lines: ``bourre`` says what is wrong in one line and exits 2, before any of the work."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from train import cli
from train.bench import BENCHMARKS
from train.eval import duplicate as evaluate
from train.eval import tournament

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """An evaluation or tournament that starts fails the test: the checks must come first."""

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("the work started before the command line was checked")

    monkeypatch.setattr(evaluate, "evaluate", started)
    monkeypatch.setattr(tournament, "tournament", started)


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one-line message of a command that must exit 2."""
    assert cli.main(list(argv)) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


@pytest.fixture
def afile(tmp_path: Path) -> Path:
    path = tmp_path / "afile"
    path.write_text("not a folder\n")
    return path


@pytest.mark.usefixtures("no_work")
@pytest.mark.parametrize("what", [["--candidate", "heuristic"], ["--tournament", "random", "heuristic"]])
def test_eval_refuses_an_output_folder_it_cannot_write(
    capsys: pytest.CaptureFixture[str], afile: Path, what: list[str]
) -> None:
    assert "--out: cannot write to the folder /proc/forbidden" in _error(
        capsys, "eval", *what, "--out", "/proc/forbidden"
    )
    assert f"--out: {afile} is a file, not a folder" in _error(capsys, "eval", *what, "--out", str(afile / "sub"))
    assert f"--out: {afile} is a file, not a folder" in _error(capsys, "eval", *what, "--out", str(afile))


@pytest.mark.usefixtures("no_work")
def test_eval_refuses_a_history_folder_it_cannot_write(
    capsys: pytest.CaptureFixture[str], afile: Path, tmp_path: Path
) -> None:
    head = ["eval", "--candidate", "heuristic", "--out", str(tmp_path / "out")]
    assert f"--save-histories: {afile} is a file" in _error(capsys, *head, "--save-histories", str(afile))
    assert "--save-histories: cannot write to the folder /proc/forbidden" in _error(
        capsys, *head, "--save-histories", "/proc/forbidden"
    )


@pytest.mark.usefixtures("no_work")
def test_eval_refuses_a_num_players_rule_that_contradicts_players(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    err = _error(
        capsys, "eval", "--candidate", "heuristic", "--players", "5", "--rule", "num_players=3", "--out", str(tmp_path)
    )
    assert "--rule num_players=3 contradicts --players" in err


def test_eval_refuses_deals_that_cannot_fit_in_memory_at_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    started = time.perf_counter()
    err = _error(
        capsys, "eval", "--candidate", "heuristic", "--deals", "2000000000", "--out", str(tmp_path), "--no-progress"
    )
    assert "--deals 2000000000 (at 5 players) needs about" in err
    assert time.perf_counter() - started < 10.0


@pytest.mark.parametrize("save", ["/proc/forbidden/x.json", "afile/x.json", "."])
def test_play_refuses_a_save_file_it_cannot_write_before_the_game(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, afile: Path, save: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("builtins.input", lambda prompt="": pytest.fail("the game started"))
    err = _error(capsys, "play", "--seats", "human,random", "--seed", "1", "--save", save)
    assert err.startswith("bourre play: error: --save: ")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--port", "70000"),
        ("--port", "0"),
        ("--idle-minutes", "-1"),
        ("--idle-minutes", "0"),
        ("--idle-minutes", "nan"),
        ("--idle-minutes", "inf"),
        ("--idle-minutes", "soon"),
    ],
)
def test_serve_refuses_ports_and_idle_times_out_of_range(
    capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.build_parser().parse_args(["serve", option, value])
    assert exit_.value.code == 2
    assert f"argument {option}: expected" in capsys.readouterr().err


def test_serve_accepts_ports_and_idle_times_in_range() -> None:
    args = cli.build_parser().parse_args(["serve", "--port", "65535", "--idle-minutes", "0.5"])
    assert (args.port, args.idle_minutes) == (65535, 0.5)


def test_serve_passes_the_per_client_table_limit_to_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    import train.serve

    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(train.serve, "run", lambda *args: calls.append(args))
    assert cli.main(["serve", "--max-tables", "20", "--max-tables-per-client", "3"]) == 0
    assert calls and calls[0][2] == 20 and calls[0][6] == 3


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "train.cli", "bench", *args], capture_output=True, text=True, env=env, timeout=300
    )


@pytest.mark.parametrize("benchmark", sorted(BENCHMARKS))
def test_every_benchmark_runs_through_bourre_bench(benchmark: str) -> None:
    result = _bench(benchmark, "--help")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("usage:")


def test_bench_agents_refuses_an_unknown_agent() -> None:
    result = _bench("agents", "--agents", "nosuch", "--seconds", "0.1")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--agents: unknown agent 'nosuch'" in result.stderr


@pytest.mark.parametrize("script", sorted(BENCHMARKS.values()))
def test_every_benchmark_runs_as_a_script_from_anywhere(script: str, tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}  # the script finds the checkout
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script), "--help"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("usage:")


def _extras_of_distributions() -> dict[str, set[str]]:
    """Each distribution the project's extras install, with the extras that list it (the installed metadata)."""
    from importlib import metadata

    from packaging.requirements import Requirement

    found: dict[str, set[str]] = {}
    for text in metadata.requires("bourre-rl") or []:
        requirement = Requirement(text)
        marker = str(requirement.marker or "")
        if "extra ==" in marker:
            extra = marker.split("extra ==", 1)[1].strip().strip("'\"")
            found.setdefault(requirement.name.lower().replace("-", "_"), set()).add(extra)
    return found


IMPORT_NAME_OF = {"open_spiel": "pyspiel"}
"""The distributions whose import name is not their name (with - as _)."""


def test_every_optional_module_a_command_names_is_installed_by_its_extra() -> None:
    by_module = {IMPORT_NAME_OF.get(name, name): extras for name, extras in _extras_of_distributions().items()}
    for module, extra in cli.EXTRA_OF_MODULE.items():
        assert extra in by_module.get(module, set()), f"{module}: pyproject.toml's {extra} extra does not install it"
    assert cli._missing_extra("connect", "starlette") == "arena"  # the arena needs its extra whole
    assert cli._missing_extra("serve", "starlette.routing") == "serve"
    assert cli._missing_extra("eval", "openskill") == "eval"
    assert cli._missing_extra("eval", "numpy") is None  # a core dependency missing is a broken install: traceback


def test_an_arena_command_without_its_extra_says_which_to_install(tmp_path: Path) -> None:
    # orjson is one of the arena extra's modules; None in sys.modules makes its import fail as an absent one does
    code = (
        "import sys; sys.modules['orjson'] = None; from train.cli import main; "
        f"raise SystemExit(main(['arena', 'add-bot', 'alice', '--data', {str(tmp_path)!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "orjson" in done.stderr and "pip install -e '.[arena]'" in done.stderr
