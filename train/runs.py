"""What every trainer keeps in its run folder: the run state, Ctrl-C handling, evaluations and the report.

Both trainers (``train.ppo.trainer``, the default of ``bourre train``, and ``train.sb3.trainer``, ``bourre
train --trainer sb3``) write the same files: ``state.json`` (``RunState``), ``report.md`` / ``report.json``
(``write_report``: the final duplicate evaluation against the random and heuristic fields, the command and
timings) and ``learning_curve.png`` (``plot_learning_curve``, from the evaluations during training).
"""

from __future__ import annotations

import dataclasses
import json
import math
import shlex
import signal
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bourre_env.atomic_files import check_readable_file, replacing, write_text
from train.eval.duplicate import EvalReport, evaluate
from train.eval.jobs import JobRunner
from train.eval.report import advantage_table, field_name, markdown_table, session_line
from train.run_dir import check_json_fields

__all__ = [
    "CtrlC",
    "RunState",
    "crossed",
    "eval_row",
    "evaluate_policy_file",
    "fields_given",
    "invocation",
    "plot_learning_curve",
    "read_json",
    "run_from_command_line",
    "write_report",
]


def invocation(module: str) -> str:
    """The command line as a user would type it again (``python -m`` shows the script's path in ``sys.argv[0]``:
    the module's file, or the ``__main__.py`` of a package such as ``train.ppo``)."""
    script = Path(sys.argv[0])
    program = script.name
    name = module.rpartition(".")[2]
    if program == name + ".py" or (program == "__main__.py" and script.parent.name == name):
        return shlex.join(["python", "-m", module, *sys.argv[1:]])
    if program in ("bourre", "cli.py"):
        return shlex.join(["bourre", *sys.argv[1:]])
    return shlex.join(sys.argv)


@dataclasses.dataclass
class RunState:
    """What a checkpoint adds to the network: where the run stands."""

    num_timesteps: int = 0
    snapshots: list[str] = dataclasses.field(default_factory=list)
    evals: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    imitation: dict[str, float] = dataclasses.field(default_factory=dict)
    train_seconds: float = 0.0
    compile_seconds: float = 0.0  # numba compiling the kernels on a first run, apart from the training time

    def save(self, path: Path) -> None:
        write_text(path, json.dumps(dataclasses.asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> RunState:
        """The state saved in ``path``; ``ValueError`` naming the file if it cannot be read or a field is wrong (of
        the wrong type, or a count or time below 0 or not finite)."""
        state = cls(**check_json_fields(read_json(path, "the run state"), cls, path))
        if state.num_timesteps < 0:
            raise ValueError(f"{path}: num_timesteps is {state.num_timesteps}, expected an integer >= 0")
        if not (math.isfinite(state.train_seconds) and state.train_seconds >= 0):
            raise ValueError(f"{path}: train_seconds is {state.train_seconds!r}, expected a finite number >= 0")
        return state


def read_json(path: Path, what: str) -> Any:
    """The JSON in ``path``; ``ValueError`` naming the file and ``what`` it should hold if it cannot be read (also
    when it is not a regular file, or nests too deep for Python's parser)."""
    check_readable_file(path, f"file of {what}")
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: cannot read {what} ({e})") from None
    except RecursionError:
        raise ValueError(f"{path}: cannot read {what} (lists or objects nested too deep)") from None


class CtrlC:
    """While active, Ctrl-C only records that it was pressed (a second press interrupts at once).

    A KeyboardInterrupt raised anywhere in a training loop can land in the middle of reading a subprocess's
    reply, which leaves the pipe unreadable, or of writing a checkpoint; the trainers check ``pressed`` between
    steps and save first instead."""

    def __init__(self) -> None:
        self.pressed = False

    def _handle(self, signum: int, frame: Any) -> None:
        self.pressed = True
        signal.signal(signal.SIGINT, self._previous)

    def __enter__(self) -> CtrlC:
        self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self._previous)


def say_interrupted(steps: str, model: Path, resume: str) -> None:
    """What a trainer stopped by Ctrl-C says, on stderr: where it stopped (``steps``: "step 12,345"), that its
    checkpoint is saved, where the policy so far is (``model``: usable at once, ``bourre eval --candidate
    ppo:PATH``, before the run is finished and reported), and the command that goes on (``resume``)."""
    print(
        f"\ninterrupted at {steps}: checkpoint saved, and the policy so far in {model} (rate it with bourre eval "
        f"--candidate ppo:{shlex.quote(str(model))}; the report comes when the run ends); continue with\n  {resume}",
        file=sys.stderr,
    )


def evaluate_policy_file(
    path: Path,
    field: str,
    players: tuple[int, ...],
    deals: int,
    seed: int,
    workers: int,
    progress: bool,
    runner: JobRunner | None = None,
    rule_options: Mapping[str, Any] | None = None,
    session: int = 1,
) -> EvalReport:
    """The duplicate evaluation of the policy file ``path`` against ``field``: on ``workers`` processes, or on the
    workers of ``runner`` (a trainer's rollout workers) when given; ``rule_options``: ``Rules`` fields of every
    table (the standard game's by default); ``session``: each of the ``deals`` games a session of that many deals."""
    return evaluate(
        f"ppo:{path}",
        field,
        players=players,
        deals=deals,
        seed=seed,
        workers=workers,
        progress=progress,
        runner=runner,
        rule_options=rule_options,
        session=session,
    )


def eval_row(step: int, report: EvalReport) -> dict[str, Any]:
    """One evaluation during training as a row of ``RunState.evals`` (what the learning curve plots)."""
    row: dict[str, Any] = {"step": step}
    for t in report.tables:
        row[f"advantage_{t.players}p"] = t.advantage
        row[f"advantage_ci95_{t.players}p"] = list(t.advantage_ci95) if t.advantage_ci95 else None
        row[f"replacement_advantage_{t.players}p"] = t.replacement_advantage
        ci = t.replacement_advantage_ci95
        row[f"replacement_advantage_ci95_{t.players}p"] = list(ci) if ci else None
        row[f"chips_{t.players}p"] = t.candidate.chips
        row[f"play_rate_{t.players}p"] = t.candidate.play_rate
    return row


def plot_learning_curve(
    state: RunState, players: tuple[int, ...], path: Path, xlabel: str = "PPO steps (learner decisions)"
) -> Path | None:
    if not state.evals:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for n in players:
        # a resumed run may evaluate sizes its earlier evaluations did not: each size from its first evaluation on
        rows = [row for row in state.evals if f"replacement_advantage_{n}p" in row]
        if not rows:
            continue
        steps = [row["step"] for row in rows]
        mean = [float(row[f"replacement_advantage_{n}p"]) for row in rows]
        ci = [row.get(f"replacement_advantage_ci95_{n}p") or (m, m) for row, m in zip(rows, mean, strict=True)]
        ax.plot(steps, mean, marker="o", label=f"{n} players")
        ax.fill_between(steps, [float(c[0]) for c in ci], [float(c[1]) for c in ci], alpha=0.2)
    ax.axhline(0.0, color="grey", linewidth=1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("replacement advantage vs heuristic (chips/deal)")
    ax.set_title("Duplicate evaluation during training (95% CI)")
    ax.legend()
    fig.tight_layout()
    with replacing(path, suffix=path.suffix) as tmp:
        fig.savefig(tmp, dpi=120)
    plt.close(fig)
    return path


def write_report(
    run_dir: Path,
    state: RunState,
    model_path: Path,
    command: str,
    args_json: dict[str, Any],
    *,
    seed: int,
    eval_players: tuple[int, ...],
    final_eval_deals: int,
    eval_workers: int,
    progress: bool,
    title: str = "PPO self-play run",
    rule_options: Mapping[str, Any] | None = None,
) -> list[EvalReport]:
    """Evaluate the final model against the random and heuristic fields (seed ``seed + 2``; ``rule_options``, the
    run's rules), write ``report.md``, ``report.json`` and ``learning_curve.png``, print the table; returns the two
    evaluations."""
    started = time.perf_counter()
    reports = [
        evaluate_policy_file(
            model_path, field, eval_players, final_eval_deals, seed + 2, eval_workers, progress, None, rule_options
        )
        for field in ("random", "heuristic")
    ]
    eval_seconds = time.perf_counter() - started
    compiling = state.compile_seconds + state.imitation.get("compile_seconds", 0.0)
    curve = plot_learning_curve(state, eval_players, run_dir / "learning_curve.png")
    table = "\n".join(markdown_table(advantage_table(reports)))
    text = [
        f"# {title} `{run_dir}`",
        "",
        f"Command: `{command}`  ",
        f"Seed: {seed}  ",
        f"PPO steps: {state.num_timesteps:,}; training time {state.train_seconds / 60:.1f} min "
        f"(imitation {state.imitation.get('seconds', 0.0) / 60:.1f} min), "
        f"final evaluation {eval_seconds:.0f} s"
        + (f"; numba compiling {compiling / 60:.1f} min (once after an install)" if compiling >= 1 else ""),
        "",
        f'Model: `{model_path}` (play it with `agents.make("ppo:{model_path}")`)',
        "",
        f"## Final duplicate evaluation (candidate: this model; seed {seed + 2})",
        "",
        table,
        "",
    ]
    if curve:
        text += ["## Learning curve", "", f"![learning curve]({curve.name})", ""]
    write_text(run_dir / "report.md", "\n".join(text))
    write_text(
        run_dir / "report.json",
        json.dumps(
            {
                "command": command,
                "args": args_json,
                "state": dataclasses.asdict(state),
                "model": str(model_path),
                "final_eval": [r.to_dict() for r in reports],
                "final_eval_seconds": eval_seconds,
            },
            indent=2,
        )
        + "\n",
    )
    print()
    print(table)
    print(f"\nreport: {run_dir / 'report.md'}; model: {model_path}")
    return reports


def with_section(report: str, section: list[str]) -> str:
    """``report`` (Markdown) with ``section``'s lines before its learning curve, or at its end where it has none,
    a blank line on each side: a heading right under a table would be read as one more row."""
    lines = report.rstrip("\n").split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("## Learning curve")), len(lines))
    head = lines[:at]
    if head and head[-1].strip():
        head.append("")
    return "\n".join([*head, *section, "", *lines[at:]]).rstrip("\n") + "\n"


def add_session_report(
    run_dir: Path,
    model_path: Path,
    *,
    seed: int,
    eval_players: tuple[int, ...],
    sessions: int,
    session: int,
    eval_workers: int,
    progress: bool,
    rule_options: Mapping[str, Any] | None = None,
) -> list[EvalReport]:
    """The final evaluation of a run on sessions, in ``sessions`` sessions of its length ``session``, against the
    random and heuristic fields (seed ``seed + 2``, as the single-deal one that ``write_report`` has already
    written): added to ``report.md`` (a section after that one) and ``report.json`` (``final_eval_sessions``), and
    printed; returns the two evaluations."""
    started = time.perf_counter()
    reports = [
        evaluate_policy_file(
            model_path, field, eval_players, sessions, seed + 2, eval_workers, progress, None, rule_options, session
        )
        for field in ("random", "heuristic")
    ]
    seconds = time.perf_counter() - started
    table = markdown_table(advantage_table(reports))
    notes = [f"{field_name(r)}: {session_line(t)}" for r in reports for t in r.tables]
    section = [
        f"## Final duplicate evaluation in sessions of {session} deals (seed {seed + 2})",
        "",
        f"The game the run trained on: the deals column counts sessions of {session} deals at one table, the "
        f"pot carried; the figures are chips per deal, the intervals over sessions; {seconds:.0f} s.",
        "",
        *table,
        "",
        *(f"{line}  " for line in notes),
    ]
    write_text(run_dir / "report.md", with_section((run_dir / "report.md").read_text(), section))
    data = json.loads((run_dir / "report.json").read_text())
    data["final_eval_sessions"] = {"session": session, "seconds": seconds, "reports": [r.to_dict() for r in reports]}
    write_text(run_dir / "report.json", json.dumps(data, indent=2) + "\n")
    print()
    print("\n".join(table))
    for line in notes:
        print(line)
    return reports


# ---------------------------------------------------------------------------- both trainers' command lines
def crossed(before: int, now: int, every: int) -> bool:
    """Whether a step count going from ``before`` to ``now`` passed a multiple of ``every`` (0: never)."""
    return every > 0 and now // every > before // every


def fields_given(cls: type, argv: list[str]) -> set[str]:
    """The fields of the arguments dataclass ``cls`` that ``argv`` sets (``--name``, or ``--no-name`` for a flag),
    for ``--resume``, which keeps the saved value of every other field; the run-folder fields are not counted."""
    flags = {token.split("=", 1)[0] for token in argv if token.startswith("--")}
    given = set()
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        if flag in flags or (f.type in ("bool", bool) and f"--no-{flag[2:]}" in flags):
            given.add(f.name)
    return given - {"resume", "run_dir", "overwrite"}


def run_from_command_line(run: Callable[[Any, set[str]], Any], args: Any, given: set[str]) -> int:
    """``run(args, given)`` as a command: exit status 2 with the message on bad input, 130 on Ctrl-C."""
    try:
        run(args, given)
    except ValueError as e:
        print(f"train: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


def summary_writer(folder: Path) -> Any:
    """A TensorBoard writer into ``folder`` (made if missing): every trainer's ``tb/``."""
    from torch.utils.tensorboard import SummaryWriter  # local: tensorboard loads slowly, and only training needs it

    folder.mkdir(parents=True, exist_ok=True)
    return SummaryWriter(str(folder))
