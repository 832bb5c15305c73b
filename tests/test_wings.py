"""``train/``'s wings: every trainer imports what the trainers share from ``train.learning``, never another trainer's
package; the shared package imports no trainer; the start of a run is one rule for every trainer; checkpoints saved
before the shared pieces moved still load.
"""

from __future__ import annotations

import ast
import io
import json
import pickletools
import zipfile
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
TRAINERS = ("ppo", "dmc", "exit", "sb3", "examples")
"""The trainer packages of ``train/``: each imports only itself, ``train.learning`` and the floors below."""
RESEARCH = "research"
"""The research tools: experiments that may run a trainer (the exploiter trains a best response with the batched
trainer), through its entry module ``train.<trainer>.trainer`` only, never its internals."""
LEARNING = "learning"
"""The pieces every trainer shares: it imports no trainer and no research tool."""
SAVED_CHECKPOINT = ROOT / "tests" / "checkpoint_23e4a23.pt"
"""``checkpoint.pt`` as the batched trainer saved it at commit 23e4a23, before its network and checkpoint moved to
``train.learning``: ``PolicyNet((4,))`` and its Adam after one step (``save_checkpoint`` of that commit)."""
TENSOR_GLOBALS = {"collections OrderedDict", "torch FloatStorage", "torch._utils _rebuild_tensor_v2"}


def imported_modules(path: Path) -> set[str]:
    """Every module the file at ``path`` imports, anywhere in it (functions included): ``from train.ppo import
    trainer`` imports ``train.ppo`` and ``train.ppo.trainer``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def wing_of(module: str) -> str | None:
    """``train.ppo.trainer`` -> ``ppo``; None for a module outside ``train``'s subpackages."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "train" else None


def imports_by_file(wing: str) -> dict[str, set[str]]:
    folder = ROOT / "train" / wing
    return {str(p.relative_to(ROOT)): imported_modules(p) for p in sorted(folder.rglob("*.py"))}


@pytest.mark.parametrize("wing", TRAINERS)
def test_no_trainer_imports_another_trainer_or_research(wing: str) -> None:
    others = set(TRAINERS) - {wing} | {RESEARCH}
    wrong = {
        path: sorted(m for m in modules if wing_of(m) in others) for path, modules in imports_by_file(wing).items()
    }
    assert not {path: found for path, found in wrong.items() if found}, (
        "a trainer imports another trainer's package: what they share belongs in train.learning"
    )


def test_the_shared_learning_package_imports_no_trainer() -> None:
    assert (ROOT / "train" / LEARNING / "__init__.py").is_file()
    wrong = {
        path: sorted(m for m in modules if wing_of(m) in (*TRAINERS, RESEARCH))
        for path, modules in imports_by_file(LEARNING).items()
    }
    assert not {path: found for path, found in wrong.items() if found}


def test_research_runs_a_trainer_only_through_its_entry_module() -> None:
    """``from train.ppo import trainer`` (``Args``, ``run``) is the research tools' way to a trainer; the network and
    the rest of what trainers share come from ``train.learning``."""
    entries = {f"train.{wing}" for wing in TRAINERS} | {f"train.{wing}.trainer" for wing in TRAINERS}
    wrong = {
        path: sorted(m for m in modules if wing_of(m) in TRAINERS and m not in entries)
        for path, modules in imports_by_file(RESEARCH).items()
    }
    assert not {path: found for path, found in wrong.items() if found}


def test_the_wing_check_sees_an_import_of_another_trainer(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("import os\n\ndef f():\n    from train.ppo.policy_net import PolicyNet\n    import train.dmc\n")
    assert {wing_of(m) for m in imported_modules(module)} == {None, "ppo", "dmc"}


# ---------------------------------------------------------------------------- saved files
def pickled_globals(checkpoint: Path) -> set[str]:
    """The classes and functions the pickle of a ``torch.save`` file names (``module name``)."""
    with zipfile.ZipFile(checkpoint) as archive:
        data = archive.read(next(name for name in archive.namelist() if name.endswith("/data.pkl")))
    return {str(arg) for op, arg, _ in pickletools.genops(io.BytesIO(data)) if op.name in ("GLOBAL", "STACK_GLOBAL")}


def test_a_checkpoint_saved_before_the_move_still_loads() -> None:
    from train.learning.checkpoint import load_checkpoint
    from train.learning.policy_net import PolicyNet

    net = PolicyNet((4,))
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3, eps=1e-5)
    load_checkpoint(net, optimizer, SAVED_CHECKPOINT, torch.device("cpu"))
    saved = torch.load(SAVED_CHECKPOINT, weights_only=True)
    for name, tensor in net.state_dict().items():
        torch.testing.assert_close(tensor, saved["net"][name], rtol=0, atol=0, msg=name)
    assert optimizer.state_dict()["state"], "the optimizer's moments came back"


def test_a_checkpoint_names_no_module_of_the_project(tmp_path: Path) -> None:
    """A checkpoint holds tensors only, so moving the project's modules cannot make one unreadable; the one saved
    before the move and one saved now name the same torch classes and nothing else."""
    from train.learning.checkpoint import save_checkpoint
    from train.learning.policy_net import PolicyNet
    from train.runs import RunState

    net = PolicyNet((4,))
    save_checkpoint(net, torch.optim.Adam(net.parameters()), tmp_path, RunState(), 0)
    assert pickled_globals(SAVED_CHECKPOINT) == TENSOR_GLOBALS
    assert pickled_globals(tmp_path / "checkpoint.pt") <= TENSOR_GLOBALS


# ---------------------------------------------------------------------------- the start of a run
def stopped_start(folder: Path, args_json: dict[str, object]) -> None:
    """A run folder as a start stopped before its first checkpoint leaves it: arguments, command, logs."""
    (folder / "tb").mkdir(parents=True)
    (folder / "args.json").write_text(json.dumps(args_json))
    (folder / "commands.txt").write_text("the first start\n")


@pytest.mark.parametrize("trainer", ["ppo", "exit"])
def test_resume_restarts_a_run_stopped_before_its_first_checkpoint_keeping_its_command(
    trainer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every trainer that restarts such a run keeps its ``args.json`` and ``commands.txt`` and clears the rest."""
    import importlib

    module = importlib.import_module(f"train.{trainer}.trainer")
    folder = tmp_path / "run"
    stopped_start(folder, module.Args(run_dir=folder).to_json())
    args, state = module.claim_run(module.Args(run_dir=folder, resume=True), set())
    assert state is None and args.run_dir == folder
    assert "starting its run afresh" in capsys.readouterr().out
    assert (folder / "commands.txt").read_text() == "the first start\n"
    assert (folder / "args.json").is_file() and not (folder / "tb").exists()


def test_dmc_refuses_to_resume_a_run_stopped_before_its_first_checkpoint(tmp_path: Path) -> None:
    from train.dmc.trainer import Args, claim_run

    folder = tmp_path / "run"
    stopped_start(folder, Args(run_dir=folder).to_json())
    with pytest.raises(ValueError, match="has no checkpoint.pt and args.json to resume from"):
        claim_run(Args(run_dir=folder, resume=True), set())
    assert (folder / "tb").is_dir()
