"""``bourre train``: which trainer a command line names, and the hand-off of its arguments to that trainer.

``bourre train [--trainer batched|sb3|exit|dmc] ARGS`` runs ``train.ppo.trainer`` (the default),
``train.sb3.trainer``, ``train.exit.trainer`` or ``train.dmc.trainer`` with ``ARGS`` untouched: each trainer parses
its own. The command line (``train.cli``) lists this command for ``--help`` and hands its arguments here unparsed;
no trainer is imported before it is chosen.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

__all__ = ["TRAINERS", "add_parser", "main", "trainer_of"]


def add_parser(commands: Any) -> None:
    """``bourre train`` in ``bourre --help``, under ``commands``; its arguments go to ``main`` unparsed."""
    train = commands.add_parser(
        "train",
        help="self-play training: batched PPO, or --trainer sb3|exit|dmc (bourre train --help for its arguments)",
        add_help=False,
    )
    train.set_defaults(unparsed=main)


def main(argv: list[str]) -> int:
    """The chosen trainer's ``main`` on the rest of ``argv`` (``--trainer`` taken out); 2 for an unknown trainer."""
    trainer, rest = trainer_of(argv)
    if trainer is None:
        return 2
    if trainer == "sb3":
        from train.sb3.trainer import main as train_main
    elif trainer == "exit":
        from train.exit.trainer import main as train_main
    elif trainer == "dmc":
        from train.dmc.trainer import main as train_main
    else:
        from train.ppo.trainer import main as train_main
    return train_main(rest)


TRAINERS = ("batched", "sb3", "exit", "dmc")
"""``bourre train --trainer``: the batched trainer (``train.ppo.trainer``, the default), MaskablePPO
(``train.sb3.trainer``), expert iteration (``train.exit.trainer``) or Deep Monte-Carlo (``train.dmc.trainer``)."""


def trainer_of(argv: list[str]) -> tuple[str | None, list[str]]:
    """``--trainer NAME`` (or ``--trainer=NAME``) taken out of the train arguments; None after printing an error.
    Without it, ``--resume`` of a run folder that holds only the sb3 trainer's checkpoint goes to that trainer."""
    trainer, rest, i = _resumed_trainer(argv) or TRAINERS[0], [], 0
    while i < len(argv):
        token = argv[i]
        if token == "--trainer" or token.startswith("--trainer="):
            if "=" in token:
                trainer = token.partition("=")[2]
            elif i + 1 < len(argv):
                trainer, i = argv[i + 1], i + 1
            else:
                trainer = ""
        else:
            rest.append(token)
        i += 1
    if trainer not in TRAINERS:
        print(
            f"bourre train: error: --trainer: expected one of {', '.join(TRAINERS)}, got {trainer!r}", file=sys.stderr
        )
        return None, rest
    return trainer, rest


def _resumed_trainer(argv: list[str]) -> str | None:
    """``sb3`` when ``argv`` resumes (``--resume``) a run folder (``--run-dir``) with ``checkpoint.zip`` and no
    ``checkpoint.pt``; ``exit`` when the folder holds an expert-iteration run (its ``rounds/``); ``dmc`` when its
    ``args.json`` is a Deep Monte-Carlo run's (it has ``epsilon``)."""
    if "--resume" not in argv:
        return None
    for i, token in enumerate(argv):
        if token.startswith("--run-dir="):
            folder = Path(token.partition("=")[2])
        elif token == "--run-dir" and i + 1 < len(argv):
            folder = Path(argv[i + 1])
        else:
            continue
        if (folder / "checkpoint.zip").is_file() and not (folder / "checkpoint.pt").exists():
            return "sb3"
        if (folder / "rounds" / "round_000").is_dir():
            return "exit"
        if _is_dmc_run(folder):
            return "dmc"
    return None


def _is_dmc_run(folder: Path) -> bool:
    """Whether ``folder``'s ``args.json`` holds the arguments of a Deep Monte-Carlo run (only they have ``epsilon``);
    an unreadable one is left to the trainer, which names what is wrong with it."""
    from train.runs import read_json  # local: the command line imports no trainer before it is chosen

    try:
        saved = read_json(folder / "args.json", "a run's arguments")  # a FIFO there is never opened
    except ValueError:
        return False
    return isinstance(saved, dict) and "epsilon" in saved
