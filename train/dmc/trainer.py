"""Deep Monte-Carlo, as DouZero trains it (Zha et al. 2021), on Bourré's batched env (``--trainer dmc``).

    bourre train --trainer dmc --seed 0                         # or: python -m train.dmc --seed 0
    bourre train --trainer dmc --players 3 --total-decisions 300000 --run-dir runs/dmc/try
    bourre train --trainer dmc --run-dir runs/dmc/seed0 --resume --total-decisions 4000000

What happens, in order:

1. **Actors** (``train.dmc.actors.SelfPlay``): one ``BatchGame`` per table size in ``players``, ``tables`` tables
   in all, every seat played by the current Q-network, epsilon-greedily (``epsilon``: a uniformly random legal
   action, else the legal action of highest Q). Every decision is recorded with its Monte-Carlo target: the deal's
   final payoff to the seat that made it, in chips times ``reward_scale``, undiscounted (a deal pays only at its
   end); with ``--session K`` (K deals at each table, the pot carried) the seat's chips from the decision's deal to
   the session's end. An iteration gathers ``rollout_decisions`` decisions of finished deals (sessions); those of
   deals (sessions) still under way wait for the next one.
2. **Learner**: ``update_epochs`` passes of minibatch Adam over them, the mean squared error between
   ``Q(observation, action taken)`` and the target (DouZero's loss), gradients clipped at ``max_grad_norm``. The
   actors then play with the new weights (DouZero's actors lag its learner by a few batches; here by none).
3. At the start and every ``eval_every`` decisions a duplicate evaluation against the heuristic field (with
   ``--session K`` in sessions of K deals, ``eval_deals / K`` of them), logged to
   TensorBoard (``tb/``: ``eval/``, ``charts/``, ``losses/``) and shown in the progress bar.
4. Every ``checkpoint_every`` decisions, at the end and on Ctrl-C: ``checkpoint.pt`` (network and Adam, tensors
   only) and ``state.json``. ``--resume`` continues from them with the arguments of ``args.json``, those given
   again on the command line overriding them (a larger ``--total-decisions``), except ``--hidden``.
5. At the end, in the run folder: ``model.npz``, ``report.md`` / ``report.json`` (a final duplicate evaluation
   against the random and heuristic fields, the command, seed and timings; with ``--session K`` a second one in
   sessions of K deals, ``final_eval_sessions``) and ``learning_curve.png``.

The network and the policy file
-------------------------------
DouZero's Q-network reads the observation and the action's features and gives one value. Here the action
features are the one-hot of the flat action id (117 of them), and they meet the observation's features at the
output layer: ``Q(o, a) = onehot(a) . (W h(o) + b)``, with ``h`` the ReLU layers of ``hidden`` over the observation
(the first read sparsely, as the batched PPO trainer's: ``train.learning.policy_net.PolicyNet``, whose 117 outputs
are the Q-values; its critic head is not used). With one-hot action features this is the same regression as
concatenating them to the observation, except that the action enters after the hidden layers rather than before
them; in exchange the Q-values of every legal action come from one forward pass, and the greedy policy (the
legal action of highest Q) *is* a policy file of ``agents.ppo``: ``PPOAgent`` plays the legal action of highest
output. So ``model.npz`` is rated as any trained policy: ``bourre eval --candidate ppo:runs/dmc/seed0/model.npz``,
``bourre ladder ppo:runs/dmc/seed0/model.npz``. (Q-values are chips times ``reward_scale``; the file's meta says
``"trainer": "dmc"``.)

A run is reproducible from its seed on the same machine and thread count; a resumed run deals new tables.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import tyro
from tqdm.auto import tqdm

from bourre_env.atomic_files import write_text
from bourre_env.compile_notice import compile_seconds
from train import runs
from train.dmc.actors import SelfPlay
from train.dmc.args import Args
from train.eval.duplicate import EvalReport
from train.eval.report import advantage_table, markdown_table
from train.learning import run_start
from train.learning.checkpoint import check_finite, export, load_checkpoint, save_checkpoint
from train.learning.policy_net import PolicyNet
from train.learning.run_start import RunFolder
from train.runs import CtrlC, RunState, eval_row, evaluate_policy_file

__all__ = ["Args", "Learner", "main", "mc_regression", "parse_args", "run"]

MODULE = "train.dmc"
RUN_OUTPUTS = (
    "args.json",
    "commands.txt",
    "checkpoint.pt",
    "state.json",
    "model.npz",
    "eval_policy.npz",
    "report.md",
    "report.json",
    "learning_curve.png",
    "tb",
)
"""Everything a run writes in its folder (what ``--overwrite`` deletes first)."""
RUN_FOLDER = RunFolder(MODULE, Path("runs/dmc"), RUN_OUTPUTS, restart_untrained=False)


# ---------------------------------------------------------------------------- the learner's step
def mc_regression(
    net: PolicyNet, optimizer: torch.optim.Optimizer, actors: SelfPlay, args: Args, rng: np.random.Generator
) -> dict[str, float]:
    """``update_epochs`` passes of minibatch Adam over the complete decisions of ``actors``: the mean squared error
    of ``Q(observation, action)`` to the decision's Monte-Carlo target. Returns the last pass's mean loss, the mean
    Q and target, and the share of the targets' variance the Q-values explain."""
    rows = actors.finished_rows()
    actions = torch.from_numpy(actors.actions[rows])
    targets = torch.from_numpy(actors.targets[rows])
    q_taken = torch.zeros(len(rows))
    loss_sum = 0.0
    for _ in range(args.update_epochs):
        loss_sum, order = 0.0, rng.permutation(len(rows))
        for start in range(0, len(rows), args.minibatch_size):
            mb = order[start : start + args.minibatch_size]
            q, _ = net(actors.batch(rows[mb], grad=True))
            taken = q.gather(1, actions[mb, None]).squeeze(1)
            loss = torch.nn.functional.mse_loss(taken, targets[mb])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
            loss_sum += float(loss.detach()) * len(mb)
            q_taken[mb] = taken.detach()
    variance = float(targets.var()) if len(rows) > 1 else 0.0
    residual = float((targets - q_taken).var()) if len(rows) > 1 else 0.0
    return {
        "mse": loss_sum / max(len(rows), 1),
        "q_taken_mean": float(q_taken.mean()),
        "target_mean": float(targets.mean()),
        "explained_variance": 1.0 - residual / variance if variance > 0 else 0.0,
    }


# ---------------------------------------------------------------------------- the run
class Learner:
    """The act-regress loop and what it does as the decision count passes its marks (evaluations, checkpoints);
    the TensorBoard logs and the progress bar."""

    def __init__(
        self,
        args: Args,
        net: PolicyNet,
        optimizer: torch.optim.Optimizer,
        state: RunState,
        meta: dict[str, Any],
    ) -> None:
        assert args.run_dir is not None
        self.args, self.run_dir, self.net, self.optimizer, self.state = args, args.run_dir, net, optimizer, state
        self.meta = meta
        # seeded by the decision count too: a resumed run deals new tables
        self.actors = SelfPlay(
            net,
            args.players,
            args.tables,
            args.seed + 7919 * state.num_timesteps,
            args.epsilon,
            args.reward_scale,
            session=args.session,
        )
        self.rng = np.random.default_rng([args.seed, state.num_timesteps, 5])
        self.writer = runs.summary_writer(self.run_dir / "tb")
        self.last_eval = ""
        self.started, self.compiled = time.perf_counter(), compile_seconds()

    def train(self) -> None:
        """Act and regress until ``total_decisions``; a checkpoint at the end, and on Ctrl-C (then
        ``KeyboardInterrupt``)."""
        args, state = self.args, self.state
        self.started, self.compiled = time.perf_counter(), compile_seconds()
        bar = tqdm(
            total=args.total_decisions,
            initial=min(state.num_timesteps, args.total_decisions),
            unit="decision",
            desc="dmc",
            disable=not args.progress,
            dynamic_ncols=True,
        )
        try:
            with CtrlC() as ctrl_c:
                if args.eval_every and not state.evals:
                    self.evaluate()
                while state.num_timesteps < args.total_decisions and not ctrl_c.pressed:
                    before = state.num_timesteps
                    stats = self.iteration()
                    self.on_schedule(before, state.num_timesteps)
                    bar.update(min(state.num_timesteps, args.total_decisions) - bar.n)
                    bar.set_postfix_str(f"mse {stats['mse']:.4f}{self.last_eval}", refresh=False)
                self.checkpoint()
                if ctrl_c.pressed:
                    bar.close()
                    meta = {**self.meta, "num_timesteps": state.num_timesteps, "interrupted": True}
                    runs.say_interrupted(
                        f"decision {state.num_timesteps:,}",
                        export(self.net, self.run_dir / "model.npz", meta),
                        f"bourre train --trainer dmc --run-dir {shlex.quote(str(self.run_dir))} --resume",
                    )
                    raise KeyboardInterrupt
        finally:
            bar.close()
            self.writer.close()

    def iteration(self) -> dict[str, float]:
        """Gather ``rollout_decisions`` decisions of finished deals (fewer at the end of the budget), regress on them,
        log; returns the regression's figures."""
        args, state, actors = self.args, self.state, self.actors
        t0 = time.perf_counter()
        actors.collect(min(args.rollout_decisions, args.total_decisions - state.num_timesteps))
        t1 = time.perf_counter()
        stats = mc_regression(self.net, self.optimizer, actors, args, self.rng)
        t2 = time.perf_counter()
        steps = actors.finished
        actors.drop_finished()
        state.num_timesteps += steps
        check_finite(self.net, state.num_timesteps)
        now = state.num_timesteps
        for key, value in stats.items():
            self.writer.add_scalar(f"losses/{key}", value, now)
        for key, value in (
            ("decisions_per_second", steps / (t2 - t0)),
            ("rollout_seconds", t1 - t0),
            ("update_seconds", t2 - t1),
            ("explored_share", actors.stats["explored"] / max(actors.stats["decisions"], 1)),
        ):
            self.writer.add_scalar(f"charts/{key}", value, now)
        return stats

    def on_schedule(self, before: int, now: int) -> None:
        if runs.crossed(before, now, self.args.eval_every):
            self.evaluate()
        if runs.crossed(before, now, self.args.checkpoint_every):
            self.checkpoint()

    def evaluate(self) -> None:
        """The greedy policy against the heuristic field, kept in ``state.evals`` and logged under ``eval/``."""
        args, now = self.args, self.state.num_timesteps
        path = export(self.net, self.run_dir / "eval_policy.npz", {**self.meta, "num_timesteps": now})
        # with sessions, in sessions of the run's length: the game it trains on
        games = args.eval_games(args.eval_deals)
        report = evaluate_policy_file(
            path, "heuristic", args.eval_players, games, args.seed + 1, 1, False, session=args.session
        )
        self.state.evals.append(eval_row(now, report))
        for t in report.tables:
            for key, value in (
                (f"advantage_vs_heuristic_{t.players}p", t.advantage),
                (f"replacement_advantage_vs_heuristic_{t.players}p", t.replacement_advantage),
                (f"play_rate_{t.players}p", t.candidate.play_rate),
            ):
                self.writer.add_scalar(f"eval/{key}", value, now)
        first = report.tables[0]
        self.last_eval = f", vs heuristic {first.players}p {first.advantage:+.3f}"

    def checkpoint(self) -> None:
        """``checkpoint.pt`` and ``state.json``, the training time since the last one added."""
        compiling = compile_seconds() - self.compiled
        # a compilation that began before this window counts whole in it: at most the window is not training
        self.state.train_seconds += max(0.0, time.perf_counter() - self.started - compiling)
        self.state.compile_seconds += compiling
        self.started, self.compiled = time.perf_counter(), compile_seconds()
        save_checkpoint(self.net, self.optimizer, self.run_dir, self.state, self.state.num_timesteps)


def resolve_resume(args: Args, given: set[str]) -> Args:
    """The saved arguments of ``args.run_dir``, with the fields in ``given`` taken from ``args``."""
    saved, run_dir = run_start.saved_args(RUN_FOLDER, Args, args.run_dir)
    run_start.refuse_other_hidden(given, args.hidden, saved.hidden, run_dir)
    return run_start.resumed_args(saved, args, given, run_dir)


def claim_run(args: Args, given: set[str]) -> tuple[Args, RunState | None]:
    """The arguments of the run (the saved ones on ``--resume``) and the state it resumes from (None for a new run),
    once the run folder is claimed (``train.learning.run_start``); everything is checked before anything is
    built."""
    return run_start.claim_run(RUN_FOLDER, args, given, resolve_resume, RunState.load)


def build_network(args: Args, saved: RunState | None) -> tuple[PolicyNet, torch.optim.Optimizer, RunState]:
    """The seeded Q-network and Adam; the checkpoint's on ``--resume`` (one that does not fit is refused here)."""
    assert args.run_dir is not None
    run_start.seed_torch(args.torch_threads, args.seed)
    net = PolicyNet(args.hidden)
    # torch's fused step: one kernel for every parameter instead of several per tensor
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, fused=True)
    if saved is None:
        return net, optimizer, RunState()
    load_checkpoint(net, optimizer, args.run_dir / "checkpoint.pt", torch.device("cpu"))
    for group in optimizer.param_groups:  # a learning rate given again on --resume holds from now on
        group["lr"] = args.learning_rate
    return net, optimizer, saved


def run(args: Args, given: set[str] | None = None) -> Path:
    """Train (or resume) as ``args`` says; returns the run folder. ``given``: fields set on the command line."""
    args, saved = claim_run(args, given or set())
    run_dir = args.run_dir
    assert run_dir is not None
    command = runs.invocation(MODULE)
    net, optimizer, state = build_network(args, saved)
    run_start.record_command(run_dir, command)
    if saved is not None:
        print(f"resuming {run_dir} at decision {state.num_timesteps:,} of {args.total_decisions:,}")
    meta = {"seed": args.seed, "players": list(args.players), "trainer": "dmc", "command": command}
    Learner(args, net, optimizer, state, meta).train()
    model = export(net, run_dir / "model.npz", {**meta, "num_timesteps": state.num_timesteps})
    write_report(run_dir, state, model, command, args)
    if args.session > 1:
        runs.add_session_report(
            run_dir,
            model,
            seed=args.seed,
            eval_players=args.eval_players,
            sessions=args.eval_games(args.final_eval_deals),
            session=args.session,
            eval_workers=args.eval_workers,
            progress=args.progress,
        )
    return run_dir


def write_report(run_dir: Path, state: RunState, model: Path, command: str, args: Args) -> list[EvalReport]:
    """The final evaluation of ``model`` against the random and heuristic fields (seed ``seed + 2``); ``report.md``,
    ``report.json`` and ``learning_curve.png``; the table printed. Returns the two evaluations."""
    started = time.perf_counter()
    reports = [
        evaluate_policy_file(
            model, field, args.eval_players, args.final_eval_deals, args.seed + 2, args.eval_workers, args.progress
        )
        for field in ("random", "heuristic")
    ]
    eval_seconds = time.perf_counter() - started
    curve = runs.plot_learning_curve(state, args.eval_players, run_dir / "learning_curve.png", "DMC decisions")
    table = "\n".join(markdown_table(advantage_table(reports)))
    text = [
        f"# Deep Monte-Carlo self-play run `{run_dir}`",
        "",
        f"Command: `{command}`  ",
        f"Seed: {args.seed}  ",
        f"Decisions regressed on: {state.num_timesteps:,} at {', '.join(map(str, args.players))} players"
        f"{'' if args.session == 1 else f', sessions of {args.session} deals'}; training "
        f"time {state.train_seconds / 60:.1f} min, final evaluation {eval_seconds:.0f} s",
        "",
        f'Model: `{model}` (the greedy policy: `agents.make("ppo:{model}")`, `bourre ladder ppo:{model}`)',
        "",
        f"## Final duplicate evaluation (candidate: this model; seed {args.seed + 2})",
        "",
        table,
        "",
    ]
    if curve:
        text += ["## Learning curve", "", f"![learning curve]({curve.name})", ""]
    write_text(run_dir / "report.md", "\n".join(text))
    record = {
        "command": command,
        "args": args.to_json(),
        "state": dataclasses.asdict(state),
        "model": str(model),
        "final_eval": [r.to_dict() for r in reports],
        "final_eval_seconds": eval_seconds,
    }
    write_text(run_dir / "report.json", json.dumps(record, indent=2) + "\n")
    print()
    print(table)
    print(f"\nreport: {run_dir / 'report.md'}; model: {model}")
    return reports


# ---------------------------------------------------------------------------- command line
def parse_args(argv: list[str] | None = None) -> tuple[Args, set[str]]:
    """``Args`` from the command line (tyro; ``--help`` lists every field with its docstring) and the names of the
    fields it sets (kept over the saved ones on ``--resume``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    description = (__doc__ or "").split("\n\n")[0]
    return (
        tyro.cli(Args, args=argv, prog="bourre train --trainer dmc", description=description),
        runs.fields_given(Args, argv),
    )


def main(argv: list[str] | None = None) -> int:
    return runs.run_from_command_line(run, *parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
