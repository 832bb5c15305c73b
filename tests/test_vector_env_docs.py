"""``docs/vector_env.md`` against the code: its tables of arguments and info keys, the files it points to, and the
benchmark commands its figures come from."""

from __future__ import annotations

import dataclasses
import inspect
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np

from agents.batched_players import BatchedRandomPlayer
from bourre_env import core, limits
from bourre_env.core.rules import Rules, presets
from bourre_env.vector_env import BourreVectorEnv
from train.sb3.vec_env import BourreVecEnv

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "vector_env.md").read_text()


def table(first_header: str) -> list[list[str]]:
    """The rows (cells stripped) of the doc's table whose header row starts with ``| first_header |``."""
    lines = DOC.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    assert rows, f"the table under '| {first_header} |' is empty"
    return rows


def code_name(cell: str) -> str:
    match = re.fullmatch(r"`([^`]+)`", cell)
    assert match, f"expected one `name` in {cell!r}"
    return match.group(1)


def test_the_arguments_table_is_the_constructor() -> None:
    rows = table("argument")
    assert rows[-1][0] == "rule options"
    documented = [(code_name(name), default) for name, default, _ in rows[:-1]]
    params = [p for p in inspect.signature(BourreVectorEnv.__init__).parameters.values() if p.name != "self"]
    assert params[-1].kind is inspect.Parameter.VAR_KEYWORD  # the rule options
    assert [name for name, _ in documented] == [p.name for p in params[:-1]]
    for (name, default), param in zip(documented, params[:-1], strict=True):
        if param.default is inspect.Parameter.empty:
            assert default == "(required)", name
        else:
            assert default.startswith(f"`{param.default!r}`".replace("'", '"')), (name, default, param.default)
    # the rule options quoted with their defaults are Rules' defaults
    defaults = {f.name: f.default for f in dataclasses.fields(Rules)}
    quoted = re.findall(r"`(\w+)=([^`]+)`", rows[-1][2])
    assert quoted
    for name, value in quoted:
        if name == "rules":
            assert value.strip('"') in presets
        else:
            assert defaults[name] == type(defaults[name])(value), name


def _infos_seen() -> tuple[set[str], set[str], set[str]]:
    """Keys of the vector env's infos, of its final_info, and of BourreVecEnv's ended-table infos, over steps that
    end episodes both ways (a pot at the bound truncates)."""
    venv = BourreVectorEnv(32, BatchedRandomPlayer(0), num_players=4, deals_per_episode=3)
    _, infos = venv.reset(seed=0)
    keys, final = set(infos), set()
    venv.game.states[:, core.S_POT] += limits.POT_BOUND
    learner = BatchedRandomPlayer(1)
    for _ in range(80):
        masks = venv.action_masks().astype(np.int8)
        _, _, _, _, infos = venv.step(learner.act_batch(masks, masks, np.arange(32)))
        keys |= set(infos)
        final |= set(infos.get("final_info", {}))
    sb3 = BourreVecEnv(16, num_players=3, opponents=BatchedRandomPlayer(2))
    sb3.reset()
    ended: set[str] = set()
    for _ in range(40):
        _, _, dones, sb3_infos = sb3.step(sb3.action_masks().argmax(axis=1))
        for i in np.flatnonzero(dones):
            ended |= set(sb3_infos[i])
    return keys, final, ended


def test_the_info_tables_are_what_the_envs_return() -> None:
    keys, final, ended = _infos_seen()
    assert {code_name(row[0]) for row in table("info key")} == keys
    final_row = next(row for row in table("info key") if row[0] == "`final_info`")
    assert set(re.findall(r"`(\w+)`", final_row[2])) == {k for k in final if not k.startswith("_")}
    assert {f"_{k}" for k in final if not k.startswith("_")} == {k for k in final if k.startswith("_")}
    assert {code_name(row[0]) for row in table("SB3 info key")} == ended


def test_the_files_it_points_to_exist_and_the_benchmark_commands_parse(
    import_benchmark: Callable[[str], ModuleType],
) -> None:
    make_parser = import_benchmark("benchmarks.vector_env_speed").make_parser
    for row in table("door"):
        for path in re.findall(r"`([\w/]+\.py)`", row[1]):
            assert (ROOT / path).is_file(), path
    commands = re.findall(r"`?python benchmarks/vector_env_speed\.py([^`\n]*)`?", DOC)
    assert commands
    for command in commands:
        make_parser().parse_args(shlex.split(command))
