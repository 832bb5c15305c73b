"""The asv suite (benchmarks/asv_bench, asv.conf.json) cannot rot: every benchmark's setup and body run once here,
on a few tables, against the checkout, without asv (the modules do not import it) and without timing anything.

Every benchmark must run on the checkout: the ``NotImplementedError`` with which a benchmark skips a commit that
lacks its API is a failure here."""

from __future__ import annotations

import importlib
import inspect
import itertools
import json
import os
import pkgutil
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import numba
import pytest

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "benchmarks" / "asv_bench"
TINY_TABLES = 4


def _modules() -> list[ModuleType]:
    # benchmarks/ is no package: benchmarks.asv_bench is imported as a namespace package's subpackage, from the root
    names = sorted(info.name for info in pkgutil.iter_modules([str(SUITE)]))
    return [importlib.import_module(f"benchmarks.asv_bench.{name}") for name in names]


def _benchmarks() -> list[tuple[str, type, str, tuple[Any, ...]]]:
    """(id, class, method, parameters) of every timed method and every combination of its class's parameters."""
    found = []
    for module in _modules():
        for class_name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            params = getattr(cls, "params", [])
            grid = list(itertools.product(*params)) if isinstance(params, tuple) else [(p,) for p in params] or [()]
            for method in sorted(m for m in vars(cls) if m.startswith(("time_", "track_", "mem_", "peakmem_"))):
                for combo in grid:
                    name = f"{module.__name__.rsplit('.', 1)[1]}.{class_name}.{method}{list(combo)}"
                    found.append((name, cls, method, combo))
    return found


BENCHMARKS = _benchmarks()


def test_the_suite_has_every_hot_path() -> None:
    names = {name.split("[")[0] for name, *_ in BENCHMARKS}
    assert {
        "bench_batch.RandomPlay.time_random_play",
        "bench_batch.Step.time_step",
        "bench_batch.Queries.time_legal_masks",
        "bench_batch.Queries.time_observations",
        "bench_env.AECLoop.time_reset_and_play",
        "bench_env.VectorEnvStep.time_step",
        "bench_agents.HeuristicAct.time_act",
        "bench_agents.PolicyForwardRows.time_forward_rows",
        "bench_threads.VectorEnvThreads.time_step",
        "bench_threads.RandomPlayThreads.time_random_play",
        "bench_threads.StepThreads.time_step",
    } <= names


def test_the_modules_import_neither_asv_nor_the_project_at_import() -> None:
    """asv imports the modules to discover the benchmarks, before a commit's kernels are compiled; the project is
    imported in each setup, where a commit that lacks a module is skipped."""
    for path in SUITE.glob("*.py"):
        imports = re.findall(r"^(?:from|import) +([\w.]+)", path.read_text(), re.M)
        assert not [m for m in imports if m.split(".")[0] in ("asv", "asv_runner", "bourre_env", "agents")], path


def test_the_configuration_names_the_suite() -> None:
    text = (ROOT / "asv.conf.json").read_text()
    conf = json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M))  # asv allows // comment lines
    assert (ROOT / conf["benchmark_dir"] / "__init__.py").is_file()
    assert conf["environment_type"] == "virtualenv"
    assert all(conf[key].startswith(".asv/") for key in ("env_dir", "results_dir", "html_dir"))


def test_a_missing_module_or_attribute_is_asvs_skip() -> None:
    """What an older commit lacks raises ``NotImplementedError`` in setup, which asv reports as ``n/a``; a module that
    exists but fails to import is an error."""
    common = importlib.import_module("benchmarks.asv_bench._common")
    assert common.need("no_such_module_of_bourre", "json") is json
    with pytest.raises(NotImplementedError, match="no_such_module_of_bourre"):
        common.need("no_such_module_of_bourre")
    with pytest.raises(NotImplementedError, match="no json.no_such_function"):
        common.attribute(json, "no_such_function")
    with pytest.raises(NotImplementedError, match="no object.no_such_method"):
        common.attribute(object(), "no_such_method")


@pytest.mark.parametrize(("name", "cls", "method", "params"), BENCHMARKS, ids=[b[0] for b in BENCHMARKS])
def test_the_benchmark_runs_once(name: str, cls: type, method: str, params: tuple[Any, ...]) -> None:
    if name.startswith("bench_threads.") and min(len(os.sched_getaffinity(0)), numba.config.NUMBA_NUM_THREADS) < 2:
        pytest.skip("the threaded benchmarks need two usable cores and a numba pool of two (NUMBA_NUM_THREADS)")
    bench = cls()
    bench.tables = TINY_TABLES  # type: ignore[attr-defined]
    if hasattr(bench, "setup"):
        bench.setup(*params)
    getattr(bench, method)(*params)
    if hasattr(bench, "teardown"):
        bench.teardown(*params)


def test_best_of_reads_asvs_samples(tmp_path: Path) -> None:
    """``best_of`` finds a commit's results by the first 8 characters of its hash, the samples of each parameter
    combination, and prints the ratios of the best times, 10th percentiles and medians."""
    best_of = importlib.import_module("benchmarks.asv_bench.best_of")
    columns = ["result", "params", "samples"]
    for commit, scale in (("aaaaaaaa11", 1.0), ("bbbbbbbb22", 1.25)):
        samples = [[scale * t for t in (1.0, 2.0, 3.0)], [scale * t for t in (4.0, 5.0)]]
        results = {"bench.Class.time_it": [[2.0, 4.5], [["5", "7"]], samples]}
        folder = tmp_path / "machine"
        folder.mkdir(exist_ok=True)
        (folder / f"{commit[:8]}-virtualenv-py3.11.json").write_text(
            json.dumps({"result_columns": columns, "results": results})
        )
    before, after = (best_of.samples_of(tmp_path, c) for c in ("aaaaaaaa11", "bbbbbbbb22"))
    assert sorted(before) == ["bench.Class.time_it(5)", "bench.Class.time_it(7)"]
    lines = best_of.report(before, after)
    assert len(lines) == 4 and all("| 1.250 |" in line for line in lines[2:])
    with pytest.raises(SystemExit, match="no asv results of cccccccc"):
        best_of.samples_of(tmp_path, "cccccccc33")
