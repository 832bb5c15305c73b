"""The start every trainer shares: the run folder claimed, the arguments resolved and saved, the command recorded,
torch seeded.

A trainer describes its run folder once (``RunFolder``: its ``python -m`` module, the default folder, the files it
writes, its checkpoint) and its ``run`` starts with ``claim_run``:

1. ``--resume`` and ``--overwrite`` together are refused; with ``--resume`` the arguments are the run's saved
   ``args.json`` (``saved_args``, after the trainer's own checks) with the fields given on the command line taking
   over (``resumed_args``); the arguments are then validated;
2. the run folder (``--run-dir``, else ``runs/<trainer>/seed<seed>``) is claimed (``train.run_dir.claim_run_dir``: a
   new run needs an empty folder, ``--overwrite`` deletes the earlier run's files first);
3. a run stopped before its first checkpoint (``train.run_dir.nothing_trained``) is started afresh on ``--resume``,
   its ``args.json`` and ``commands.txt`` kept;
4. a new run's arguments are saved to ``args.json``; a resumed run's state (``state.json``) is read back, so that
   everything is read before anything is built.

The trainer then builds its network (``seed_torch`` first) and, once what it resumes from is known to fit,
``record_command`` adds the command to ``commands.txt``: only a run that was accepted, new or resumed, is recorded.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import torch

from bourre_env.atomic_files import write_text
from train.run_dir import claim_run_dir, nothing_trained
from train.runs import read_json

__all__ = [
    "RunFolder",
    "TrainerArgs",
    "claim_run",
    "record_command",
    "refuse_other_hidden",
    "resumed_args",
    "saved_args",
    "seed_torch",
]

KEPT_ON_RESTART = ("args.json", "commands.txt")
"""What a run stopped before its first checkpoint keeps when ``--resume`` starts it afresh: its arguments, and the
record of the command that started it."""


class TrainerArgs(Protocol):
    """What the start needs of a trainer's arguments dataclass."""

    seed: int
    run_dir: Path | None
    resume: bool
    overwrite: bool

    def validate(self) -> None: ...

    def to_json(self) -> dict[str, Any]: ...

    @classmethod
    def from_json(cls, data: Any, source: Path | str = ...) -> Any: ...


ArgsT = TypeVar("ArgsT", bound=TrainerArgs)
StateT = TypeVar("StateT")


@dataclasses.dataclass(frozen=True)
class RunFolder:
    """What a trainer keeps in its run folder, for the start all trainers share."""

    module: str
    """the trainer's ``python -m`` module, as ``commands.txt`` names it (``train.ppo``)"""
    default_root: Path
    """the run folder is ``default_root / f"seed{seed}"`` when ``--run-dir`` is not given"""
    outputs: tuple[str, ...]
    """everything a run writes in its folder: what ``--overwrite`` deletes first"""
    checkpoint: str = "checkpoint.pt"
    """the checkpoint's file: a run folder without it (nor a run state) holds a run stopped before it"""
    resumable: str = ""
    """the file whose presence beside ``args.json`` makes a run resumable (empty: ``checkpoint``)"""
    missing: str = ""
    """why a folder cannot be resumed, after ``resume: FOLDER`` (empty: it has no checkpoint and args.json)"""
    restart_untrained: bool = True
    """whether ``--resume`` starts a run stopped before its first checkpoint afresh (else it is refused)"""

    def resume_file(self) -> str:
        return self.resumable or self.checkpoint

    def missing_text(self) -> str:
        return self.missing or f"has no {self.checkpoint} and args.json to resume from"


def saved_args(folder: RunFolder, cls: type[ArgsT], run_dir: Path | None) -> tuple[ArgsT, Path]:
    """The arguments saved in the run folder ``run_dir`` that ``--resume`` continues, read as ``cls``, and the folder;
    ``ValueError`` when no folder is given or it holds no run of this trainer to resume."""
    if run_dir is None:
        raise ValueError("resume: give the run folder with --run-dir")
    saved_path = run_dir / "args.json"
    untrained = folder.restart_untrained and nothing_trained(run_dir, folder.checkpoint)
    if not saved_path.is_file() or not ((run_dir / folder.resume_file()).is_file() or untrained):
        raise ValueError(f"resume: {run_dir} {folder.missing_text()}")
    saved: ArgsT = cls.from_json(read_json(saved_path, "the run's arguments"), saved_path)
    return saved, run_dir


def refuse_other_hidden(given: set[str], hidden: tuple[int, ...], saved: tuple[int, ...], run_dir: Path) -> None:
    """``ValueError`` when ``--hidden`` is given on ``--resume`` with other widths than the run's network has."""
    if "hidden" in given and tuple(hidden) != tuple(saved):
        raise ValueError(
            f"--hidden {' '.join(map(str, hidden))}: the run in {run_dir} has hidden layers "
            f"{' '.join(map(str, saved))}, and a resumed run keeps its network; drop --hidden, "
            f"or start a new run"
        )


def resumed_args(saved: ArgsT, args: ArgsT, given: set[str], run_dir: Path) -> ArgsT:
    """The saved arguments with the fields in ``given`` taken from ``args``: the arguments of a resumed run."""
    resumed: ArgsT = dataclasses.replace(
        saved,  # type: ignore[type-var]  # a trainer's arguments are a dataclass; the protocol cannot say so
        **{name: getattr(args, name) for name in given},
        run_dir=run_dir,
        resume=True,
        overwrite=False,
    )
    return resumed


def claim_run(
    folder: RunFolder,
    args: ArgsT,
    given: set[str],
    resolve: Callable[[ArgsT, set[str]], ArgsT],
    load_state: Callable[[Path], StateT],
    ready: Callable[[ArgsT], None] | None = None,
) -> tuple[ArgsT, StateT | None]:
    """The arguments of the run (``resolve(args, given)``'s on ``--resume``, with ``run_dir`` set) and the state it
    resumes from (``load_state`` of its ``state.json``; None for a new run), once the run folder is claimed (module
    docstring). ``ready``: the trainer's last check of valid arguments, before the folder is touched."""
    if args.resume and args.overwrite:
        raise ValueError("--resume continues the run in the run folder and --overwrite replaces it: give one")
    if args.resume:
        args = resolve(args, given)
    args.validate()
    if ready is not None:
        ready(args)
    run_dir = args.run_dir or folder.default_root / f"seed{args.seed}"
    args = dataclasses.replace(args, run_dir=run_dir)  # type: ignore[type-var]  # as in resumed_args
    claim_run_dir(run_dir, resume=args.resume, overwrite=args.overwrite, outputs=folder.outputs)
    afresh = args.resume and nothing_trained(run_dir, folder.checkpoint)
    if afresh:  # nothing to resume: whatever the stopped start left beside its arguments goes
        print(f"{run_dir} stopped before its first checkpoint: starting its run afresh")
        outputs = [name for name in folder.outputs if name not in KEPT_ON_RESTART]
        claim_run_dir(run_dir, resume=False, overwrite=True, outputs=outputs)
    state = load_state(run_dir / "state.json") if args.resume and not afresh else None
    if state is None:
        write_text(run_dir / "args.json", json.dumps(args.to_json(), indent=2) + "\n")
    return args, state


def seed_torch(threads: int, seed: int | None = None) -> None:
    """torch's threads (``threads``; 0: the CPU cores, at most 4) and, given a ``seed``, its generator: before a
    trainer builds its network."""
    torch.set_num_threads(threads or min(4, os.cpu_count() or 1))
    if seed is not None:
        torch.manual_seed(seed)


def record_command(run_dir: Path, command: str) -> None:
    """``command`` added to the run's ``commands.txt``: called once the run is accepted, new or resumed."""
    with (run_dir / "commands.txt").open("a") as f:
        f.write(command + "\n")
