"""Self-play training of a Bourré policy with MaskablePPO (sb3-contrib), CleanRL-style: one file, one ``Args``.

    python -m train.sb3 --seed 0                 # or: bourre train --seed 0
    python -m train.sb3 --run-dir runs/ppo/seed0 --resume

What happens, in order:

1. **Imitation warm start** (``train.learning.imitation``): the heuristic plays ``imitation_decisions``
   decisions in self-play; the policy is fitted to its actions and the value head to its deal
   results. Skipped with ``--imitation-decisions 0``.
2. **PPO** over ``num_envs`` tables in this process (``train.sb3.pool.PoolVecEnv``: ``BourreVecEnv``, one
   compiled ``BatchGame`` per table size, table ``k`` at ``players[k % len(players)]``): each episode is
   one deal, or with ``--session K`` a session of K deals with the pot carried, with the learner in a
   rotating seat; every other seat draws its player for the episode (seated for the whole session) from the
   pool: the heuristic, the random agent, and frozen snapshots of the learner taken every
   ``snapshot_every`` steps (the last ``max_snapshots`` are kept), with the weights ``pool_*``; each
   kind plays all its tables in one batched call. The reward is the learner's chip change for each deal
   (times ``reward_scale``), on its last decision of the deal; MaskablePPO's GAE runs across the deals of a
   session and is cut, bootstrapped, at the rollout's end.
3. Every ``eval_every`` steps, a duplicate evaluation (``train.eval.duplicate``) against the heuristic
   field at the ``eval_players`` table sizes (table and replacement advantage, chips, play and
   bourré rates; with ``--session K`` in sessions of K deals), logged to TensorBoard under ``eval/`` and shown in
   the progress bar; SB3's own figures are logged as ``charts/`` (rollout and time) and
   ``losses/`` (the PPO update).
4. Every ``checkpoint_every`` steps, and on Ctrl-C, a checkpoint: ``checkpoint.zip`` (network and
   optimizer) and ``state.json`` (step count, snapshots, evaluation history). ``--resume`` rebuilds
   the run from ``args.json`` and continues from the checkpoint's step count; arguments given again
   on the command line with a value other than their default override the saved ones (for
   example a larger ``--total-timesteps``), except ``--hidden`` and ``--trunk``: the network is the checkpoint's.
   Loading a checkpoint reads tensors only (torch ``weights_only=True``), never pickled objects; a
   checkpoint that holds anything else, or does not fit the network, is refused with ``ValueError``.
5. At the end, in the run folder: ``model.npz`` (the policy, for ``agents.make("ppo:PATH")``),
   ``report.md`` / ``report.json`` (final evaluation against the random and heuristic fields, the
   exact command, seed and timings; with ``--session K`` a second one in sessions of K deals,
   ``final_eval_sessions``), ``learning_curve.png``, and the TensorBoard logs in ``tb/``.

A new run needs an empty (or new) run folder: ``--overwrite`` replaces the run in a folder that holds one
(``train.run_dir``), ``--resume`` continues it.

A run is reproducible from its seed on the same machine and thread count: the deals, the opponent
draws, the network initialisation and the evaluation deals all derive from ``seed``. (Floating-point
reductions in torch can differ across machines and thread counts, so runs there may drift apart.)
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import tyro
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from tqdm.auto import tqdm

from bourre_env.memory import check_fits
from train import runs
from train.learning import run_start
from train.learning.imitation import fit_policy, record_decisions
from train.learning.imitation import summary as imitation_summary
from train.learning.opponent_pool import PoolWeights
from train.learning.policy_net import network_bytes
from train.learning.run_start import RunFolder
from train.run_dir import args_from_json, args_to_json
from train.runs import (
    CtrlC,
    RunState,
    crossed,
    eval_row,
    evaluate_policy_file,
    fields_given,
    run_from_command_line,
)
from train.sb3.glue import (
    ACTIVATION,
    ACTIVATIONS,
    export_policy,
    load_checkpoint,
    make_logger,
    policy_weights,
    save_checkpoint,
)
from train.sb3.pool import PoolVecEnv
from train.sb3.trunk import TRUNKS, policy_kwargs
from train.schedule import check_session

__all__ = ["Args", "main", "run", "policy_weights"]

RUN_OUTPUTS = (
    "args.json",
    "commands.txt",
    "checkpoint.zip",
    "checkpoint.tmp.zip",
    "state.json",
    "state.tmp",
    "model.npz",
    "model.npz.tmp.npz",
    "eval_policy.npz",
    "eval_policy.npz.tmp.npz",
    "report.md",
    "report.json",
    "learning_curve.png",
    "snapshots",
    "tb",
)
"""Everything a run writes in its folder (what ``--overwrite`` deletes first)."""
MODULE = "train.sb3"
RUN_FOLDER = RunFolder(MODULE, Path("runs/ppo"), RUN_OUTPUTS, checkpoint="checkpoint.zip")


@dataclasses.dataclass
class Args:
    seed: int = 0
    """seed of the deals, the opponent draws, the network initialisation and the evaluations"""
    run_dir: Path | None = None
    """run folder (default: runs/ppo/seed{seed}); it holds checkpoints, logs, snapshots and the report"""
    resume: bool = False
    """continue the run in run_dir from its last checkpoint (see the module docstring)"""
    overwrite: bool = False
    """start a new run in a run_dir that holds one, deleting the earlier run's files first (else a run_dir that is
    not empty is refused)"""
    players: tuple[int, ...] = (5,)
    """table sizes trained on: env k plays players[k % len(players)]; the imitation data cycles through them"""
    session: int = 1
    """deals per episode at every training table: 1, single deals; K, a session of K deals at one table with the
    pot carried (bourré payments and tied pots stay in it, bourré and tied players skip the next ante), the
    learner's episode running through the session and the evaluations played in sessions of K deals
    (docs/training.md: sessions with the other trainers)"""
    total_timesteps: int = 450_000
    """PPO learner decisions to train for (the imitation warm start is not counted)"""
    num_envs: int = 64
    """tables played at once, all in this process (one compiled batch per table size)"""
    torch_threads: int = 1
    """torch threads (0: the number of CPU cores, at most 4); the network is small, and its minibatches gain
    little from threads that wait on each other"""
    device: str = "cpu"
    """torch device of the policy; the network is small, and "cpu" is usually fastest"""
    progress: bool = True
    """show progress bars"""

    imitation_decisions: int = 300_000
    """heuristic decisions recorded for the imitation warm start (0: start PPO from a random network)"""
    imitation_players: tuple[int, ...] = ()
    """table sizes of the imitation data, taken in turn deal by deal (empty: the sizes of players)"""
    imitation_epochs: int = 4
    """passes over the recorded decisions"""
    imitation_learning_rate: float = 1e-3
    """Adam learning rate of the warm start"""

    hidden: tuple[int, ...] = (256, 256)
    """hidden layer widths (ReLU): of the trunk the actor and the critic share, or of each of their networks with
    --trunk separate"""
    trunk: str = "shared"
    """shared: one trunk for the actor and the critic, its first layer reading the observation sparsely
    (train.sb3.trunk); separate: SB3's two dense networks, as runs made before 2026-11-26 have"""
    learning_rate: float = 1e-4
    """Adam learning rate of PPO (small: the warm-started policy should be refined, not overwritten)"""
    n_steps: int = 32
    """steps per table per rollout; a rollout is num_envs * n_steps decisions"""
    batch_size: int = 512
    """minibatch size of the PPO update"""
    n_epochs: int = 4
    """passes over each rollout"""
    gamma: float = 1.0
    """discount; a deal is short and only its end pays, so there is nothing to discount"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_range: float = 0.1
    """PPO clip range of the probability ratio"""
    ent_coef: float = 0.003
    """entropy bonus"""
    vf_coef: float = 0.5
    """weight of the value loss"""
    max_grad_norm: float = 0.5
    """gradient clipping"""
    target_kl: float | None = 0.03
    """stop an update's epochs early when the KL divergence from the rollout policy passes this"""
    reward_scale: float = 0.1
    """rewards (chips) are multiplied by this before PPO sees them"""

    pool_heuristic: float = 0.5
    """weight of the heuristic in each opponent seat's draw"""
    pool_random: float = 0.1
    """weight of the random agent"""
    pool_snapshot: float = 0.4
    """weight of a snapshot of the learner (goes to the heuristic until the first snapshot)"""
    snapshot_every: int = 100_000
    """steps between snapshots of the learner added to the opponent pool"""
    max_snapshots: int = 8
    """snapshots kept in the pool (the most recent)"""

    eval_every: int = 150_000
    """steps between evaluations against the heuristic field (0: none during training)"""
    eval_deals: int = 300
    """deals per table size of each evaluation during training (with --session K: eval_deals / K sessions, rounded
    up)"""
    eval_players: tuple[int, ...] = (5,)
    """table sizes of the evaluations"""
    final_eval_deals: int = 1000
    """deals per table size and field of the final evaluation (fields: random and heuristic; with --session K, a
    second one in final_eval_deals / K sessions, rounded up)"""
    eval_workers: int = 2
    """processes of the final evaluation (the results do not depend on it)"""
    checkpoint_every: int = 100_000
    """steps between checkpoints (a checkpoint is also written at the end and on Ctrl-C)"""

    def validate(self) -> None:
        positive = (
            "total_timesteps",
            "num_envs",
            "n_steps",
            "batch_size",
            "n_epochs",
            "snapshot_every",
            "max_snapshots",
            "eval_deals",
            "final_eval_deals",
            "eval_workers",
            "checkpoint_every",
            "imitation_epochs",
        )
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected at least 1, got {getattr(self, name)}")
        check_session(self.session)  # a ValueError naming session
        for name in ("imitation_decisions", "eval_every", "torch_threads", "seed"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: expected >= 0, got {getattr(self, name)}")
        if not self.players or any(not 2 <= n <= 8 for n in self.players):
            raise ValueError(f"players: table sizes between 2 and 8, got {self.players}")
        if len(self.players) > self.num_envs:
            raise ValueError(f"num_envs: at least one table per size of players {self.players}, got {self.num_envs}")
        if any(not 2 <= n <= 8 for n in self.imitation_players):
            raise ValueError(f"imitation_players: table sizes between 2 and 8, got {self.imitation_players}")
        if not self.eval_players or any(not 2 <= n <= 8 for n in self.eval_players):
            raise ValueError(f"eval_players: table sizes between 2 and 8, got {self.eval_players}")
        if not self.hidden or any(w < 1 for w in self.hidden):
            raise ValueError(f"hidden: positive layer widths, got {self.hidden}")
        if self.trunk not in TRUNKS:
            raise ValueError(f"trunk: one of {', '.join(TRUNKS)}, got {self.trunk!r}")
        # before anything is written or allocated: huge widths are a one-line error, not a failed allocation
        check_fits(
            network_bytes(self.hidden, self.trunk == "separate", self.max_snapshots),
            f"--hidden {' '.join(map(str, self.hidden))}",
        )
        if not 0 < self.gamma <= 1 or not 0 <= self.gae_lambda <= 1:
            raise ValueError(f"gamma in (0, 1] and gae_lambda in [0, 1], got {self.gamma}, {self.gae_lambda}")
        if self.reward_scale <= 0 or self.learning_rate <= 0 or self.clip_range <= 0:
            raise ValueError("reward_scale, learning_rate and clip_range must be > 0")
        self.pool_weights()  # raises on bad weights

    def pool_weights(self) -> PoolWeights:
        return PoolWeights(self.pool_heuristic, self.pool_random, self.pool_snapshot)

    def eval_games(self, deals: int) -> int:
        """The games of an evaluation of ``deals`` deals (eval_deals, final_eval_deals): the deals themselves, or
        with sessions as many sessions of ``session`` deals as make at least ``deals`` deals."""
        return -(-deals // self.session)

    def to_json(self) -> dict[str, Any]:
        return args_to_json(self)

    @classmethod
    def from_json(cls, data: Any, source: Path | str = "args.json") -> Args:
        """The arguments saved in ``source`` (read as JSON into ``data``); ``ValueError`` naming ``source`` if a field
        is unknown, of the wrong type or invalid."""
        if isinstance(data, dict) and "trunk" not in data:
            data = {**data, "trunk": "separate"}  # a run made before the shared trunk keeps its network
        args: Args = args_from_json(cls, data, source)
        return args


# ---------------------------------------------------------------------------- environments
def make_vec_env(args: Args) -> PoolVecEnv:
    """The training tables: ``num_envs`` of them, each episode a deal or a session of ``session`` deals, with the
    opponent pool, the scaled reward PPO sees and the raw chips in each ended episode's info
    (``charts/ep_rew_mean``). MaskablePPO seeds them (``seed``)."""
    return PoolVecEnv(args.num_envs, args.pool_weights(), args.seed, args.players, args.reward_scale, args.session)


# ---------------------------------------------------------------------------- the callback
class SelfPlayCallback(BaseCallback):
    """Snapshots, evaluations, checkpoints and the progress bar, driven by the step count; stops ``learn`` when
    ``ctrl_c`` was pressed."""

    def __init__(self, args: Args, run_dir: Path, state: RunState) -> None:
        super().__init__()
        self.args, self.run_dir, self.state = args, run_dir, state
        self.ctrl_c: CtrlC | None = None
        self.bar: Any = None
        self.started = time.perf_counter()
        self.last_eval = ""

    def _on_training_start(self) -> None:
        self.bar = tqdm(
            total=self.args.total_timesteps,
            initial=self.num_timesteps,
            unit="step",
            desc="ppo",
            disable=not self.args.progress,
            dynamic_ncols=True,
        )

    def _on_step(self) -> bool:
        before = self.num_timesteps - self.training_env.num_envs
        now = self.num_timesteps
        a = self.args
        if crossed(before, now, a.snapshot_every):
            self.snapshot()
        if crossed(before, now, a.eval_every):
            self.evaluate()
        if crossed(before, now, a.checkpoint_every):
            self.checkpoint()
        if self.bar is not None:
            self.bar.update(now - self.bar.n)
        return self.ctrl_c is None or not self.ctrl_c.pressed

    def _on_rollout_end(self) -> None:
        if self.bar is not None:  # once a rollout: the mean over the last deals is no per-step work
            buf = self.model.ep_info_buffer
            chips = f"{np.mean([e['r'] for e in buf]):+.2f}" if buf else "-"
            per = "deal" if self.args.session == 1 else "session"
            self.bar.set_postfix_str(f"chips/{per} {chips}{self.last_eval}", refresh=False)

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def meta(self) -> dict[str, Any]:
        return {"seed": self.args.seed, "players": list(self.args.players), "command": invocation()}

    def snapshot(self) -> None:
        folder = self.run_dir / "snapshots"
        path = export_policy(self.model, folder / f"step_{self.num_timesteps:010d}.npz", self.meta())
        self.state.snapshots = [*self.state.snapshots, str(path)][-self.args.max_snapshots :]
        self.training_env.env_method("set_snapshots", self.state.snapshots)
        self.logger.record("charts/pool_snapshots", len(self.state.snapshots))

    def evaluate(self) -> None:
        a = self.args
        path = export_policy(self.model, self.run_dir / "eval_policy.npz", self.meta())
        # with sessions, in sessions of the run's length: the game it trains on
        games = a.eval_games(a.eval_deals)
        report = evaluate_policy_file(path, "heuristic", a.eval_players, games, a.seed + 1, 1, False, session=a.session)
        row = eval_row(self.num_timesteps, report)
        self.state.evals.append(row)
        for t in report.tables:
            self.logger.record(f"eval/advantage_vs_heuristic_{t.players}p", t.advantage)
            self.logger.record(f"eval/replacement_advantage_vs_heuristic_{t.players}p", t.replacement_advantage)
            self.logger.record(f"eval/chips_vs_heuristic_{t.players}p", t.candidate.chips)
            self.logger.record(f"eval/play_rate_{t.players}p", t.candidate.play_rate)
            self.logger.record(f"eval/bourre_rate_{t.players}p", t.candidate.bourre_rate_dealt)
        self.logger.dump(self.num_timesteps)
        first = report.tables[0]
        self.last_eval = (
            f", vs heuristic {first.players}p {first.advantage:+.3f} (replacement {first.replacement_advantage:+.3f})"
        )

    def checkpoint(self) -> None:
        save_checkpoint(self.model, self.run_dir, self.state, time.perf_counter() - self.started)
        self.started = time.perf_counter()


# ---------------------------------------------------------------------------- the run
def resolve_resume(args: Args, given: set[str]) -> Args:
    """The saved arguments of ``args.run_dir``, with the fields in ``given`` taken from ``args``."""
    saved, run_dir = run_start.saved_args(RUN_FOLDER, Args, args.run_dir)
    run_start.refuse_other_hidden(given, args.hidden, saved.hidden, run_dir)
    if "trunk" in given and args.trunk != saved.trunk:
        raise ValueError(
            f"--trunk {args.trunk}: the run in {run_dir} has a {saved.trunk} trunk, and a resumed run keeps its "
            f"network; drop --trunk, or start a new run"
        )
    return run_start.resumed_args(saved, args, given, run_dir)


def build_model(args: Args, env: Any, run_dir: Path) -> MaskablePPO:
    model = MaskablePPO(
        "MlpPolicy",
        env,
        learning_rate=args.learning_rate,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        clip_range=args.clip_range,
        ent_coef=args.ent_coef,
        vf_coef=args.vf_coef,
        max_grad_norm=args.max_grad_norm,
        target_kl=args.target_kl,
        policy_kwargs=policy_kwargs(args.trunk, args.hidden, ACTIVATIONS[ACTIVATION]),
        seed=args.seed,
        device=args.device,
        verbose=0,
    )
    model.set_logger(make_logger(run_dir / "tb"))
    return model


def run(args: Args, given: set[str] | None = None) -> Path:
    """Train (or resume) as ``args`` says; returns the run folder. ``given``: fields set on the command line."""
    args, saved_state = run_start.claim_run(RUN_FOLDER, args, given or set(), resolve_resume, RunState.load)
    run_dir = args.run_dir
    assert run_dir is not None  # claim_run sets it
    run_start.seed_torch(args.torch_threads)  # MaskablePPO seeds torch itself (its seed)
    # The masks already guarantee valid distributions; checking every one costs about a fifth of the update.
    torch.distributions.Distribution.set_default_validate_args(False)
    command = invocation()

    env = make_vec_env(args)
    try:
        model = build_model(args, env, run_dir)
        if saved_state is not None:
            state = saved_state
            load_checkpoint(model, run_dir / "checkpoint.zip", args.device)
            model.num_timesteps = state.num_timesteps
            env.set_snapshots(state.snapshots)
            run_start.record_command(run_dir, command)
            print(f"resuming {run_dir} at step {state.num_timesteps:,} of {args.total_timesteps:,}")
        else:
            run_start.record_command(run_dir, command)
            state = RunState()
            if args.imitation_decisions:
                started = time.perf_counter()
                data = record_decisions(
                    "heuristic",
                    args.imitation_players or args.players,
                    args.imitation_decisions,
                    args.seed,
                    args.progress,
                )
                state.imitation = fit_policy(
                    model.policy,
                    data,
                    args.imitation_epochs,
                    args.batch_size,
                    args.imitation_learning_rate,
                    args.reward_scale,
                    args.vf_coef,
                    args.seed,
                    args.progress,
                )
                state.imitation["seconds"] = time.perf_counter() - started
                del data
                print(imitation_summary(state.imitation))
        callback = SelfPlayCallback(args, run_dir, state)
        remaining = args.total_timesteps - state.num_timesteps
        if remaining > 0:
            with CtrlC() as ctrl_c:
                callback.ctrl_c = ctrl_c
                model.learn(remaining, callback=callback, reset_num_timesteps=not args.resume)
            if ctrl_c.pressed:
                save_checkpoint(model, run_dir, state, time.perf_counter() - callback.started)
                runs.say_interrupted(
                    f"step {model.num_timesteps:,}",
                    export_policy(model, run_dir / "model.npz", {**callback.meta(), "interrupted": True}),
                    f"bourre train --run-dir {shlex.quote(str(run_dir))} --resume",
                )
                raise KeyboardInterrupt
        save_checkpoint(model, run_dir, state, time.perf_counter() - callback.started)
        model_path = export_policy(model, run_dir / "model.npz", callback.meta())
    finally:
        env.close()
    write_report(args, run_dir, state, model_path, command)
    return run_dir


# ---------------------------------------------------------------------------- the report
def write_report(args: Args, run_dir: Path, state: RunState, model_path: Path, command: str) -> None:
    runs.write_report(
        run_dir,
        state,
        model_path,
        command,
        args.to_json(),
        seed=args.seed,
        eval_players=args.eval_players,
        final_eval_deals=args.final_eval_deals,
        eval_workers=args.eval_workers,
        progress=args.progress,
    )
    if args.session > 1:
        runs.add_session_report(
            run_dir,
            model_path,
            seed=args.seed,
            eval_players=args.eval_players,
            sessions=args.eval_games(args.final_eval_deals),
            session=args.session,
            eval_workers=args.eval_workers,
            progress=args.progress,
        )


def invocation() -> str:
    return runs.invocation(MODULE)


# ---------------------------------------------------------------------------- command line
def parse_args(argv: list[str] | None = None) -> tuple[Args, set[str]]:
    """``Args`` from the command line (tyro; ``--help`` lists every field with its docstring) and the names of
    the fields the command line sets (for ``--resume``, which keeps the saved value of every other field)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return (
        tyro.cli(Args, args=argv, prog="bourre train --trainer sb3", description=__doc__.split("\n\n")[0]),
        fields_given(Args, argv),
    )


def main(argv: list[str] | None = None) -> int:
    return run_from_command_line(run, *parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
