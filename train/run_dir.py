"""The run folder of a trainer: a new run never lands silently on top of an earlier one.

A new run needs an empty (or absent) folder. ``--resume`` continues the run already there (the trainer
checks its checkpoint); ``--overwrite`` starts a new run in its place, deleting the files and folders that
the trainer names as its outputs first, so that nothing of the old run (a checkpoint that ``--resume``
would pick up, TensorBoard events, snapshots) mixes with the new one. Anything else in the folder stays.
``check_json_fields`` reads the run's JSON files (arguments, state) back with their types checked.
Shared by the trainers of ``train/``.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import types
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["claim_run_dir", "check_json_fields", "nothing_trained"]


def claim_run_dir(run_dir: Path, *, resume: bool, overwrite: bool, outputs: Iterable[str]) -> None:
    """Check ``run_dir`` for a run about to start, and with ``overwrite`` clear the earlier run's ``outputs``.

    ``outputs``: names of the files and folders the trainer writes in a run folder. ``ValueError`` when a new run
    (neither flag) would start in a folder that is not empty, when both flags are given, or when ``run_dir`` is a
    file, or when the folder cannot be created or written to (checked here, before any work, by creating it). With
    ``resume`` nothing else is checked or changed here: resuming needs the earlier run's files.
    """
    if resume and overwrite:
        raise ValueError("--resume continues the run in the run folder and --overwrite replaces it: give one")
    if run_dir.exists() and not run_dir.is_dir():
        raise ValueError(f"run_dir: {run_dir} is a file, not a folder")
    existed = run_dir.is_dir()
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"run_dir: cannot create {run_dir} ({e.strerror or e}); choose another --run-dir") from None
    if not os.access(run_dir, os.W_OK | os.X_OK):
        raise ValueError(f"run_dir: {run_dir} is not writable; choose another --run-dir")
    if resume or not existed:
        return
    entries = sorted(p.name for p in run_dir.iterdir())
    if not entries:
        return
    if not overwrite:
        shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
        raise ValueError(
            f"run_dir: {run_dir} is not empty ({shown}); continue its run with --resume, replace it "
            f"with --overwrite, or choose another --run-dir"
        )
    for name in outputs:
        path = run_dir / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()


def nothing_trained(run_dir: Path, checkpoint: str) -> bool:
    """Whether ``run_dir`` holds a run stopped before its first checkpoint (Ctrl-C during the imitation warm start):
    its ``args.json``, but neither the trainer's ``checkpoint`` file nor a run state. Nothing was trained, so
    ``--resume`` starts such a run afresh from its arguments (a new run there is refused: the folder is not empty)."""
    return (
        (run_dir / "args.json").is_file()
        and not (run_dir / checkpoint).exists()
        and not (run_dir / "state.json").exists()
    )


def _fits(value: Any, hint: Any) -> bool:
    """Whether a value read from JSON has the type ``hint`` (of a dataclass field) asks for."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, h) for h in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint in (str, Path):
        return isinstance(value, str)
    if origin in (tuple, list):
        item = args[0] if args else Any
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if origin is dict:
        key, item = args if args else (Any, Any)
        return isinstance(value, dict) and all(_fits(k, key) and _fits(v, item) for k, v in value.items())
    return False


def check_json_fields(data: Any, cls: type, source: Path | str) -> dict[str, Any]:
    """``data`` read from the JSON file ``source`` as keyword arguments of the dataclass ``cls``: a dict whose keys
    are fields of ``cls`` and whose values have their types; ``ValueError`` naming ``source`` and the field
    otherwise (a run folder's ``args.json`` or ``state.json`` edited by hand, or from another version)."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a JSON object of {cls.__name__} fields, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    unknown = sorted(set(data) - {f.name for f in dataclasses.fields(cls)})
    if unknown:
        raise ValueError(f"{source}: unknown field(s) {unknown}")
    for name, value in data.items():
        if not _fits(value, hints[name]):
            raise ValueError(f"{source}: {name} is {value!r}, expected {_type_name(hints[name])}")
    return dict(data)


def args_to_json(args: Any) -> dict[str, Any]:
    """A trainer's argument dataclass as JSON values (paths as strings), for its run folder's ``args.json``."""
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in dataclasses.asdict(args).items()}


def args_from_json(cls: type, data: Any, source: Path | str) -> Any:
    """The trainer arguments ``cls`` saved in ``source`` (read as JSON into ``data``): fields checked
    (``check_json_fields``), lists made tuples and strings made paths where the field's type says so, then the
    arguments' own ``validate()``; ``ValueError`` naming ``source`` otherwise."""
    values = check_json_fields(data, cls, source)
    hints = typing.get_type_hints(cls)
    for name, value in values.items():
        kinds = (
            typing.get_args(hints[name]) if typing.get_origin(hints[name]) in (typing.Union, types.UnionType) else ()
        )
        hint = next((h for h in kinds if h is not type(None)), hints[name])
        if value is not None and typing.get_origin(hint) is tuple:
            values[name] = tuple(value)
        elif value is not None and hint is Path:
            values[name] = Path(value)
    args = cls(**values)
    try:
        args.validate()
    except ValueError as e:
        raise ValueError(f"{source}: {e}") from None
    return args


def _type_name(hint: Any) -> str:
    if isinstance(hint, type):
        return hint.__name__
    return str(hint).replace("typing.", "").replace("pathlib.", "").replace("NoneType", "None")
