"""Self-play PPO with batched in-process rollouts, CleanRL-style: one ``Args``, one loop (``bourre train``).

    bourre train --seed 0                                  # or: python -m train.ppo --seed 0
    bourre train --run-dir runs/ppo/seed0 --resume
    bourre train --trainer sb3 ...                         # the MaskablePPO trainer (train.sb3.trainer)

What happens, in order:

1. **Imitation warm start**: the heuristic plays every seat of ``tables`` tables until
   ``imitation_decisions`` decisions of finished deals are recorded; the network's policy is fitted to
   its actions and its value head to each seat's chips for the deal. Skipped with
   ``--imitation-decisions 0``.
2. **PPO** on batched rollouts (``train.ppo.rollout``): one ``BatchGame`` per table size in
   ``players`` with ``tables`` tables in all. One seat of every table is the learner's; every other seat
   is drawn deal by deal from the pool: the learner again (``pool_learner``: self-play, its decisions
   trained on as well), the heuristic, the random agent or one of the last ``max_snapshots`` frozen
   snapshots of the learner (taken every ``snapshot_every`` steps). At each step the acting seat of
   every table is one row: the learner's rows go through one masked forward pass, the other rows to
   their players, one batched call each. Each learner seat's decisions in a deal form a trajectory
   whose reward is the seat's chip change for the deal (times ``reward_scale``), also when the deal
   ends on another seat's move; GAE runs along each trajectory. A rollout adds ``rollout_decisions``
   learner decisions; the update uses those of finished deals, and the decisions of deals still under
   way wait for the next rollout (their log-probabilities stay those of the policy that acted, their
   values are recomputed). ``update_epochs`` passes of minibatches of ``minibatch_size``, clipped
   objective, value loss, entropy bonus, early stop at ``target_kl``.
   With ``--session K`` (K > 1) every table plays sessions of K deals with the pot carried: the seats'
   players are drawn once a session, a learner seat's trajectory runs through the whole session (each
   deal's chips on its last decision of the deal, ``done`` only at the session's end), and since a
   session outlasts many rollouts the update uses every decision whose successor is known, GAE cut at
   the rollout's end and bootstrapped from the value of the seat's latest decision (which waits for the
   next rollout). The imitation warm start still records single deals.
   With ``workers`` >= 2 (``bourre train --workers N``) the tables are shared out among N rollout worker
   processes (or Ray actors, ``--backend ray``) and this process only updates: ``train.ppo.workers`` has the
   scheme (one rollout in flight during each update, a fixed lag of one update, reproducible from the seed and
   worker count) and what happens when a worker fails. A rollout asks for ``rollout_decisions`` or, the last
   one, what is left of ``total_timesteps``; it ends at the table step that reaches it, so a run overshoots its
   budget by less than one step of every table.
3. At the start and every ``eval_every`` steps a duplicate evaluation (``train.eval.duplicate``) against the
   heuristic field (table and replacement advantage, chips, play and bourré rates; with ``--session K``
   in sessions of K deals, ``eval_deals / K`` of them), logged to
   TensorBoard (``tensorboard --logdir runs/ppo``) under ``eval/``, next to ``charts/`` (learner
   steps/s, chips per deal, the time of rollouts and updates) and ``losses/``, and shown in the progress bar.
4. Every ``checkpoint_every`` steps, at the end and on Ctrl-C: ``checkpoint.pt`` (network and optimizer,
   tensors only: read back with torch ``weights_only=True``) and ``state.json`` (step count, snapshots,
   evaluations). ``--resume`` continues from them with the arguments of ``args.json``; arguments given
   again on the command line override the saved ones (for example a larger ``--total-timesteps``), except
   ``--hidden``: the network is the checkpoint's. A checkpoint holding anything but tensors, or one that
   does not fit the network, is refused with ``ValueError``, and so is one holding NaN or infinity; a network
   that turns non-finite during training stops the run before anything is saved from it, so the last good
   checkpoint and model stay. A run stopped before its first checkpoint (Ctrl-C during the imitation warm
   start: nothing was trained) has only its arguments: ``--resume`` starts it afresh from them.
5. At the end, in the run folder: ``model.npz`` (the actor, for ``agents.make("ppo:PATH")``),
   ``report.md`` / ``report.json`` (final evaluation against the random and heuristic fields, the
   command, seed and timings; with ``--session K`` a second one in sessions of K deals,
   ``final_eval_sessions``), ``learning_curve.png`` and the TensorBoard logs in ``tb/``.

A new run needs an empty (or new) run folder: ``--overwrite`` replaces the run in a folder that holds one
(``train.run_dir``), ``--resume`` continues it.

The network
-----------
``hidden`` widths of ReLU layers on one trunk shared by the actor (117 logits, illegal actions masked)
and the critic. The first layer reads only the observation's nonzero entries (``embedding_bag``; its
weights are still the dense ``(hidden[0], 1174)`` matrix that ``agents.ppo`` reads), so the exported
actor is a plain MLP in the existing policy file format. With ``--privileged-critic`` the critic is a second
trunk of the same widths that also reads the other seats' hands (``bourre_env.privileged``), as PerfectDou's
and Suphx's critics do; the actor never reads them. It predicts the deal's chips far better (imitation value
loss 0.007 instead of 0.017 at 3 players) but costs a second trunk per step, and its gain in strength was
within the noise in the comparison of the README, so it is off by default.

Cost per learner step, and the limit it sets (defaults: ``hidden=(256, 128)``, 5 players, about 66
nonzero observation entries of 1174, ``update_epochs=2``). Arithmetic: one forward pass is 66*256
(sparse first layer) + 256*128 + 128*(117 + 1) = 64,768 multiply-adds, 0.13 MFLOP; forward and
backward are about three times that, so the rollout's forward pass and two epochs make 0.13 + 2 *
0.39 = 0.91 MFLOP per learner step, 0.67 of it in the dense products. (One forward pass of the SB3
trainer's separate dense 256-256 actor and critic is 762,368 multiply-adds, 1.5 MFLOP, 601,088 of
them in their 1174-wide first layers.) Bytes: the sparse first layer reads one 1 kB weight row (256
floats) per nonzero entry, and its backward pass one 1 kB gradient row per entry, so 5 passes * 66
kB = 330 kB per learner step, from cache (the weight matrix is 1.2 MB); a stored decision is about
0.55 kB (sparse observation 66 * 6 bytes, mask 117, 21 bytes of action, log-probability, value,
reward and links), read once per epoch; the env writes and scans a dense 4.7 kB observation per
table decision. Measured on one core of this machine, the update runs its matrix products at about
50 GFLOP/s and the sparse layer's row gathers at about 40 GB/s, so the network alone is bounded at
about 0.67 MFLOP / 50 GFLOP/s + 330 kB / 40 GB/s = 13 + 8 = 21 us per learner step (48,000 steps/s).
The loop spends 28-41 us per learner step in the network, depending on the machine's load (the rest
of it: minibatch gathers, the loss, Adam, Python calls; the masked policy's terms are one compiled pass,
``train.learning.fused_cpu``), 3-5 us in the env and about 1.5 us in the opponents' batched calls;
``benchmarks/train_speed.py`` prints the split and the update against the network's own passes timed alone
(docs/training.md, "The update against its floor").

A run is reproducible from its seed on the same machine and thread count. A resumed run continues the
network, the optimizer and the step count but deals new tables, so it is not bit-identical to an
uninterrupted one.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from agents.ppo import load_policy
from bourre_env.atomic_files import write_text
from bourre_env.compile_notice import compile_seconds
from train import runs
from train.eval.duplicate import EvalReport
from train.eval.ray_backend import check_cluster
from train.grouped_cli import grouped_cli
from train.learning import run_start
from train.learning.checkpoint import check_finite, export, load_checkpoint, save_checkpoint
from train.learning.fused_cpu import masked_policy_terms
from train.learning.imitation import summary as imitation_summary
from train.learning.policy_net import PolicyNet, masked_logits
from train.learning.run_start import RunFolder
from train.ppo.args import HELP_GROUPS, Args
from train.ppo.rollout import (
    Collector,
)
from train.ppo.warm_start import imitation_warm_start
from train.ppo.workers import (
    ReceivedBatch,
    WorkerError,
    WorkerPool,
    collector_seed,
    decision_shares,
    network_weights,
    start_workers,
)
from train.run_dir import nothing_trained
from train.runs import CtrlC, RunState, eval_row, evaluate_policy_file, read_json

__all__ = [
    "Args",
    "Training",
    "build_network",
    "claim_run",
    "imitation_warm_start",
    "main",
    "make_optimizer",
    "parse_args",
    "ppo_update",
    "resolve_resume",
    "run",
    "start_network",
]

MODULE = "train.ppo"
RUN_OUTPUTS = (
    "args.json",
    "commands.txt",
    "checkpoint.pt",
    "checkpoint.tmp.pt",
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
RUN_FOLDER = RunFolder(MODULE, Path("runs/ppo"), RUN_OUTPUTS)


# ---------------------------------------------------------------------------- the PPO update
@torch.no_grad()
def refresh_values(
    net: PolicyNet, collector: Collector | ReceivedBatch, device: torch.device, chunk: int = 8192
) -> None:
    """New values for the decisions kept from an earlier rollout (their deals were under way at its update)."""
    t = collector.transitions
    stale = np.flatnonzero(t.stale[: t.n])
    for start in range(0, len(stale), chunk):
        ids = stale[start : start + chunk]
        _, values = net(*t.inputs(ids, device, grad=False))
        t.values[ids] = values.cpu().numpy()
    t.stale[stale] = False


def policy_terms(logits: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row, the log-probability of its action and the entropy of the policy over the legal actions: one compiled
    pass on the CPU (``train.learning.fused_cpu``), torch's operations elsewhere."""
    if logits.device.type == "cpu" and logits.dtype == torch.float32:
        return masked_policy_terms(logits, masks, actions)
    masked = masked_logits(logits, masks)
    logp_all = torch.log_softmax(masked, dim=1)
    # softmax, not logp_all.exp(): exp of the masked entries' -1e9 takes a slow path ten times as long
    entropy = -(torch.softmax(masked, dim=1) * logp_all).sum(dim=1)
    return logp_all.gather(1, actions[:, None]).squeeze(1), entropy


def ppo_update(
    net: PolicyNet,
    optimizer: torch.optim.Optimizer,
    collector: Collector | ReceivedBatch,
    args: Args,
    rng: np.random.Generator,
    device: torch.device,
) -> dict[str, float]:
    """One PPO update on the decisions of finished deals (with sessions: every decision whose successor is known,
    GAE cut at the rollout's end); the others are kept for the next rollout (the rollout workers'
    ``ReceivedBatch`` holds only decisions to use)."""
    refresh_values(net, collector, device)
    advantages, returns, complete = collector.complete(args.gamma, args.gae_lambda)
    t = collector.transitions
    ids = np.flatnonzero(complete)
    sums: dict[str, float] = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0, "clipfrac": 0.0}
    minibatches = 0
    stopped = False
    for _ in range(args.update_epochs):
        order = rng.permutation(ids)
        for start in range(0, len(order), args.minibatch_size):
            mb = order[start : start + args.minibatch_size]
            logits, values = net(*t.inputs(mb, device, grad=True))
            masks = torch.from_numpy(t.masks[mb]).to(device)
            new_logp, entropy_rows = policy_terms(logits, masks, torch.from_numpy(t.actions[mb]).to(device))
            entropy = entropy_rows.mean()
            log_ratio = new_logp - torch.from_numpy(t.logp[mb]).to(device)
            ratio = log_ratio.exp()
            adv = torch.from_numpy(advantages[mb]).to(device)
            if args.norm_adv and len(mb) > 1:
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
            value_loss = 0.5 * (values - torch.from_numpy(returns[mb]).to(device)).pow(2).mean()
            loss = policy_loss - args.ent_coef * entropy + args.vf_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean().item()  # Schulman's low-variance estimator
                clipfrac = ((ratio - 1).abs() > args.clip_coef).float().mean().item()
            for key, value in (
                ("policy_loss", policy_loss.item()),
                ("value_loss", value_loss.item()),
                ("entropy", entropy.item()),
                ("approx_kl", approx_kl),
                ("clipfrac", clipfrac),
            ):
                sums[key] += value
            minibatches += 1
            if args.target_kl is not None and approx_kl > 1.5 * args.target_kl:
                stopped = True
                break
        if stopped:
            break
    used_values = t.values[ids]
    variance = float(np.var(returns[ids])) if len(ids) else 0.0
    stats = {key: value / max(minibatches, 1) for key, value in sums.items()}
    stats["explained_variance"] = (1.0 - float(np.var(returns[ids] - used_values)) / variance) if variance > 0 else 0.0
    stats["decisions_used"] = float(len(ids))
    stats["decisions_kept"] = float(t.n - len(ids))
    stats["minibatches"] = float(minibatches)
    stats["early_stop"] = float(stopped)
    collector.carry_over(complete)
    return stats


# ---------------------------------------------------------------------------- the run
def refuse_sb3_run(run_dir: Path) -> None:
    """``ValueError`` when ``run_dir`` holds a run of the sb3 trainer (which ``--resume`` of this one cannot go on):
    its checkpoint, or (a run stopped before it) its arguments, which only the sb3 trainer's have ``num_envs``."""
    sb3_run = (run_dir / "checkpoint.zip").is_file() and not (run_dir / "checkpoint.pt").is_file()
    if not sb3_run and nothing_trained(run_dir, "checkpoint.pt"):
        data = read_json(run_dir / "args.json", "the run's arguments")
        sb3_run = isinstance(data, dict) and "num_envs" in data
    if sb3_run:
        raise ValueError(
            f"resume: {run_dir} is a run of the sb3 trainer; resume it with bourre train --trainer "
            f"sb3 --run-dir {run_dir} --resume"
        )


def resolve_resume(args: Args, given: set[str]) -> Args:
    """The saved arguments of ``args.run_dir``, with the fields in ``given`` taken from ``args``."""
    if args.run_dir is not None:
        refuse_sb3_run(args.run_dir)
    saved, run_dir = run_start.saved_args(RUN_FOLDER, Args, args.run_dir)
    run_start.refuse_other_hidden(given, args.hidden, saved.hidden, run_dir)
    if "privileged_critic" in given and args.privileged_critic != saved.privileged_critic:
        raise ValueError(
            f"--privileged-critic: the run in {run_dir} was started with privileged_critic="
            f"{saved.privileged_critic}, and a resumed run keeps its network; drop the flag, or start a "
            f"new run"
        )
    return run_start.resumed_args(saved, args, given, run_dir)


def run(args: Args, given: set[str] | None = None) -> Path:
    """Train (or resume) as ``args`` says; returns the run folder. ``given``: fields set on the command line."""
    args, saved_state = claim_run(args, given or set())
    run_dir = args.run_dir
    assert run_dir is not None  # claim_run sets it
    command = runs.invocation(MODULE)
    device = torch.device(args.device)
    net, optimizer, state = build_network(args, saved_state, device)
    run_start.record_command(run_dir, command)
    start_network(net, args, state, resumed=saved_state is not None, device=device)
    meta = {"seed": args.seed, "players": list(args.players), "trainer": "batched", "command": command}
    training = Training(args, run_dir, net, optimizer, state, meta, device)
    training.train()
    model_path = export(net, run_dir / "model.npz", {**meta, "num_timesteps": state.num_timesteps})
    reports = runs.write_report(
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
        title="Batched PPO self-play run",
        rule_options=args.rule_options(),
    )
    if args.session > 1:
        reports = runs.add_session_report(
            run_dir,
            model_path,
            seed=args.seed,
            eval_players=args.eval_players,
            sessions=args.eval_games(args.final_eval_deals),
            session=args.session,
            eval_workers=args.eval_workers,
            progress=args.progress,
            rule_options=args.rule_options(),
        )
    warning = passing_warning(reports)
    if warning is not None:
        add_report_warning(run_dir, warning)
    return run_dir


LOW_PLAY_RATE = 0.05
"""A final policy that plays fewer of its deals than this (against the heuristic field) is flagged in the report:
a policy that has learned to pass nearly always loses little and learns little more (the main job's model plays
about 45% of its deals against the heuristic, docs/training.md)."""


def passing_warning(reports: Sequence[EvalReport]) -> str | None:
    """A one-line warning when the final model plays (rather than passes) fewer than ``LOW_PLAY_RATE`` of its deals
    at some table size of the final evaluation against the heuristic (the last report), else None."""
    low = [t for t in reports[-1].tables if t.candidate.play_rate < LOW_PLAY_RATE]
    if not low:
        return None
    rates = ", ".join(f"{t.candidate.play_rate:.1%} of its deals at {t.players} players" for t in low)
    return (
        f"the final model plays (rather than passes) only {rates} against the heuristic: it has learned to avoid "
        f"losses rather than to win chips (docs/training.md, a policy that passes)"
    )


def add_report_warning(run_dir: Path, warning: str) -> None:
    """Print ``warning`` and add it to ``report.md`` (a section after the title) and ``report.json``
    (``warnings``)."""
    print(f"warning: {warning}", file=sys.stderr)
    lines = (run_dir / "report.md").read_text().split("\n")
    write_text(run_dir / "report.md", "\n".join([lines[0], "", f"**Warning:** {warning}", *lines[1:]]))
    data = read_json(run_dir / "report.json", "the run's report")
    data["warnings"] = [*data.get("warnings", []), warning]
    write_text(run_dir / "report.json", json.dumps(data, indent=2) + "\n")


def claim_run(args: Args, given: set[str]) -> tuple[Args, RunState | None]:
    """The arguments of the run (the saved ones on ``--resume``, with ``run_dir`` set) and the state it resumes
    from (None for a new run), once the run folder is claimed (``train.learning.run_start``); everything is read
    before anything is built."""
    return run_start.claim_run(RUN_FOLDER, args, given, resolve_resume, RunState.load, ready=check_ray_cluster)


def check_ray_cluster(args: Args) -> None:
    """The Ray cluster of ``--address``, reached within its connect timeout, before the run folder is touched."""
    if args.backend == "ray" and args.address is not None and args.worker_count() > 1:
        check_cluster(args.address)


def make_optimizer(net: PolicyNet, args: Args) -> torch.optim.Optimizer:
    """The PPO update's Adam. torch's fused step runs one kernel for every parameter instead of several per tensor:
    a few percent of the update on a CPU."""
    return torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5, fused=True)


def build_network(
    args: Args, saved_state: RunState | None, device: torch.device
) -> tuple[PolicyNet, torch.optim.Optimizer, RunState]:
    """The seeded network and its optimizer, and the run state: the checkpoint's where ``saved_state`` is given
    (a checkpoint that does not fit is refused here, before the command is recorded)."""
    run_start.seed_torch(args.torch_threads, args.seed)
    net = PolicyNet(args.hidden, privileged_critic=args.privileged_critic).to(device)
    optimizer = make_optimizer(net, args)
    if saved_state is None:
        return net, optimizer, RunState()
    assert args.run_dir is not None
    load_checkpoint(net, optimizer, args.run_dir / "checkpoint.pt", device)
    return net, optimizer, saved_state


def start_network(net: PolicyNet, args: Args, state: RunState, resumed: bool, device: torch.device) -> None:
    """Where PPO starts from: the checkpoint (already loaded), the actor of ``init_policy``, or the imitation warm
    start (recorded in ``state.imitation``)."""
    if resumed:
        print(f"resuming {args.run_dir} at step {state.num_timesteps:,} of {args.total_timesteps:,}")
    elif args.init_policy is not None:
        net.load_actor(load_policy(args.init_policy))
        print(f"actor from {args.init_policy} (no imitation warm start)")
    elif args.imitation_decisions:
        state.imitation = imitation_warm_start(net, args, device)
        check_finite(net, 0)
        print(imitation_summary(state.imitation))


class Training:
    """The rollout-update loop and what it does as the step count passes its marks: snapshots for the opponent
    pool, evaluations, checkpoints; the TensorBoard logs and the progress bar."""

    def __init__(
        self,
        args: Args,
        run_dir: Path,
        net: PolicyNet,
        optimizer: torch.optim.Optimizer,
        state: RunState,
        meta: dict[str, Any],
        device: torch.device,
    ) -> None:
        self.args, self.run_dir, self.net, self.optimizer, self.state = args, run_dir, net, optimizer, state
        self.meta, self.device = meta, device
        self.workers = args.worker_count()
        self.pool: WorkerPool | None = None  # the rollout workers, started by train() (workers >= 2)
        self.in_flight = False  # a rollout of the workers is under way
        self.started_at = state.num_timesteps  # seeds the tables: a resumed run deals new ones
        self.collector: Collector | None = None  # the tables of this process (workers == 1)
        if self.workers == 1:
            self.collector = Collector(
                net,
                args.players,
                args.tables,
                args.pool(),
                seed=collector_seed(args.seed, state.num_timesteps),
                reward_scale=args.reward_scale,
                device=device,
                rule_options=args.rule_options(),
                session=args.session,
                league=args.make_league(collector_seed(args.seed, state.num_timesteps)),
            )
            self.collector.set_snapshots(self.pool_snapshots())
        self.rng = np.random.default_rng([args.seed, state.num_timesteps, 5])
        self.writer = runs.summary_writer(run_dir / "tb")
        self.last_eval = ""  # the progress bar's summary of the last evaluation
        self.timings: dict[str, float] = {}  # of the last iteration (benchmarks/train_speed.py reads them)
        self.started = time.perf_counter()  # since the training time was last added to state.train_seconds
        self.compiled = compile_seconds()  # numba's compile time by then: not training time

    def train(self) -> None:
        """Roll out and update until ``total_timesteps``; a checkpoint at the end, and on Ctrl-C (then
        ``KeyboardInterrupt``)."""
        args, state = self.args, self.state
        self.started, self.compiled = time.perf_counter(), compile_seconds()
        bar = tqdm(
            total=args.total_timesteps,
            initial=min(state.num_timesteps, args.total_timesteps),
            unit="step",
            desc="ppo",
            disable=not args.progress,
            dynamic_ncols=True,
        )
        failure: WorkerError | None = None
        try:
            with CtrlC() as ctrl_c:
                try:
                    if self.workers > 1:
                        self.pool = start_workers(args, self.started_at, self.workers)
                    if args.eval_every and not state.evals:  # where PPO starts: the curve's first point
                        self.evaluate()
                    while state.num_timesteps < args.total_timesteps and not ctrl_c.pressed:
                        before = state.num_timesteps
                        chips = self.iteration(lambda: ctrl_c.pressed)
                        if chips is None:  # Ctrl-C while the workers played
                            break
                        self.on_schedule(before, state.num_timesteps)
                        bar.update(min(state.num_timesteps, args.total_timesteps) - bar.n)
                        bar.set_postfix_str(f"chips/deal {chips:+.2f}{self.last_eval}", refresh=False)
                except WorkerError as e:
                    failure = e
                finally:
                    if self.pool is not None:
                        self.pool.close()  # a rollout in flight is abandoned
                        self.pool = None
                self.checkpoint()
                if failure is not None:
                    bar.close()
                    raise WorkerError(
                        f"{failure}; checkpoint saved at step {state.num_timesteps:,}: continue with "
                        f"bourre train --run-dir {shlex.quote(str(self.run_dir))} --resume"
                    ) from None
                if ctrl_c.pressed:
                    bar.close()
                    meta = {**self.meta, "num_timesteps": state.num_timesteps, "interrupted": True}
                    runs.say_interrupted(
                        f"step {state.num_timesteps:,}",
                        export(self.net, self.run_dir / "model.npz", meta),
                        f"bourre train --run-dir {shlex.quote(str(self.run_dir))} --resume",
                    )
                    raise KeyboardInterrupt
        finally:
            bar.close()
            self.writer.close()

    def pool_snapshots(self) -> list[str]:
        """The snapshot files of the opponent pool: the learner's, or the one ``opponent_policy``."""
        return [str(self.args.opponent_policy)] if self.args.opponent_policy is not None else self.state.snapshots

    def rollout_size(self, done: int) -> int:
        """Learner decisions to ask of the next rollout with ``done`` steps counted: ``rollout_decisions``, or what
        is left of ``total_timesteps`` (a rollout ends at the table step that reaches it: the run overshoots by
        less than one step of every table)."""
        return min(self.args.rollout_decisions, self.args.total_timesteps - done)

    def iteration(self, stop: Callable[[], bool] = lambda: False) -> float | None:
        """One rollout and one update, logged; returns the learner's chips per deal in the rollout (None: ``stop()``
        turned true while the workers played, and nothing was updated)."""
        args, state, optimizer = self.args, self.state, self.optimizer
        if args.anneal_lr:
            for group in optimizer.param_groups:
                group["lr"] = args.learning_rate * max(0.0, 1.0 - state.num_timesteps / args.total_timesteps)
        t0 = time.perf_counter()
        data: Collector | ReceivedBatch
        if self.pool is None:
            assert self.collector is not None
            data = self.collector
            data.reset_stats()
            steps = data.collect(self.rollout_size(state.num_timesteps))
        else:
            if not self.in_flight:  # the first rollout of the run
                self.start_rollout(self.rollout_size(state.num_timesteps))
            rollouts = self.pool.receive(stop)
            if rollouts is None:
                return None
            self.in_flight = False
            data = ReceivedBatch(rollouts, hidden_hands=self.net.value_net is not None)
            steps = data.steps
            # the next rollout is played with these weights while they are updated: one update of lag
            if state.num_timesteps + steps < args.total_timesteps:
                self.start_rollout(self.rollout_size(state.num_timesteps + steps))
        t1 = time.perf_counter()
        stats = ppo_update(self.net, optimizer, data, args, self.rng, self.device)
        t2 = time.perf_counter()
        state.num_timesteps += steps
        self.timings = {
            "steps": float(steps),
            "rollout_seconds": t1 - t0,  # with workers: the learner's wait for them
            "update_seconds": t2 - t1,
            "worker_seconds": sum(data.seconds.values()) if self.pool is not None else 0.0,
        }
        check_finite(self.net, state.num_timesteps)
        now, s = state.num_timesteps, data.stats
        chips = s["learner_chips"] / max(s["learner_deals"], 1)
        for key, value in stats.items():
            self.writer.add_scalar(f"losses/{key}", value, now)
        for key, value in (
            ("learner_steps_per_second", steps / (t2 - t0)),
            ("rollout_seconds", t1 - t0),
            ("update_seconds", t2 - t1),
            ("chips_per_deal", chips),
            ("learner_share_of_decisions", s["learner_decisions"] / max(s["decisions"], 1)),
            ("learning_rate", optimizer.param_groups[0]["lr"]),
        ):
            self.writer.add_scalar(f"charts/{key}", value, now)
        for key, value in s.items():  # the learner's rate of beating each field of the league in this rollout
            if key.startswith("league_deals:") and value:
                member = key.partition(":")[2]
                self.writer.add_scalar(f"league/{member}", s[f"league_wins:{member}"] / value, now)
        return chips

    def start_rollout(self, decisions: int) -> None:
        """Send the current weights and the pool's snapshots to the workers, with their shares of ``decisions``."""
        assert self.pool is not None
        self.pool.start(network_weights(self.net), self.pool_snapshots(), decision_shares(decisions, self.workers))
        self.in_flight = True

    def on_schedule(self, before: int, now: int) -> None:
        """The snapshot, evaluation and checkpoint whose marks the step count passed going from ``before`` to
        ``now``."""
        if runs.crossed(before, now, self.args.snapshot_every):
            self.snapshot()
        if runs.crossed(before, now, self.args.eval_every):
            self.evaluate()
        if runs.crossed(before, now, self.args.checkpoint_every):
            self.checkpoint()

    def snapshot(self) -> None:
        """A frozen copy of the learner, joining the opponent pool (not when ``opponent_policy`` holds it)."""
        state = self.state
        path = export(
            self.net,
            self.run_dir / "snapshots" / f"step_{state.num_timesteps:010d}.npz",
            {**self.meta, "num_timesteps": state.num_timesteps},
        )
        state.snapshots = [*state.snapshots, str(path)][-self.args.max_snapshots :]
        if self.args.opponent_policy is None and self.collector is not None:  # workers get them with each rollout
            self.collector.set_snapshots(state.snapshots)
        self.writer.add_scalar("charts/pool_snapshots", len(state.snapshots), state.num_timesteps)

    def evaluate(self) -> None:
        """A duplicate evaluation against the heuristic field, kept in ``state.evals`` and logged under ``eval/``."""
        args, now = self.args, self.state.num_timesteps
        path = export(self.net, self.run_dir / "eval_policy.npz", {**self.meta, "num_timesteps": now})
        # with rollout workers, on them, after the rollout they are playing (the result does not depend on where
        # the chunks run): not on the learner's core, and no pool of its own to start
        rules = args.rule_options()
        if args.session == 1:
            report = evaluate_policy_file(
                path, "heuristic", args.eval_players, args.eval_deals, args.seed + 1, 1, False, self.pool, rules
            )
        else:  # in sessions of the run's length: the game it trains on
            deals = args.eval_games(args.eval_deals)
            report = evaluate_policy_file(
                path, "heuristic", args.eval_players, deals, args.seed + 1, 1, False, self.pool, rules, args.session
            )
        self.state.evals.append(eval_row(now, report))
        for t in report.tables:
            for key, value in (
                (f"advantage_vs_heuristic_{t.players}p", t.advantage),
                (f"replacement_advantage_vs_heuristic_{t.players}p", t.replacement_advantage),
                (f"chips_vs_heuristic_{t.players}p", t.candidate.chips),
                (f"play_rate_{t.players}p", t.candidate.play_rate),
                (f"bourre_rate_{t.players}p", t.candidate.bourre_rate_dealt),
            ):
                self.writer.add_scalar(f"eval/{key}", value, now)
        first = report.tables[0]
        self.last_eval = (
            f", vs heuristic {first.players}p {first.advantage:+.3f} (replacement {first.replacement_advantage:+.3f})"
        )

    def checkpoint(self) -> None:
        """``checkpoint.pt`` and ``state.json``, the training time since the last one added."""
        compiling = compile_seconds() - self.compiled
        # a compilation that began before this window counts whole in it: at most the window is not training
        self.state.train_seconds += max(0.0, time.perf_counter() - self.started - compiling)
        self.state.compile_seconds += compiling
        self.started, self.compiled = time.perf_counter(), compile_seconds()
        save_checkpoint(self.net, self.optimizer, self.run_dir, self.state, self.state.num_timesteps)


# ---------------------------------------------------------------------------- command line
HELP_GUIDE = """\
--trainer {batched,sb3,exit,dmc}: batched, this trainer (the default); sb3, MaskablePPO over the vector env; exit,
expert iteration from a search; dmc, Deep Monte-Carlo (DouZero). Each takes --help: bourre train --trainer sb3 --help.

A short run: bourre train --total-timesteps 200000 --imitation-decisions 50000 --final-eval-deals 200 --run-dir
runs/try. The flags a short run sets come first ("run options"); every flag follows in its group, with its
default."""


def parse_args(argv: list[str] | None = None) -> tuple[Args, set[str]]:
    """``Args`` from the command line (tyro; ``--help`` lists every field with its docstring, in
    ``HELP_GROUPS``) and the names of the fields the command line sets (for ``--resume``, which keeps the saved
    value of every other field)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    description = (__doc__ or "").split("\n\n")[0] + "\n\n" + HELP_GUIDE
    args = grouped_cli(Args, HELP_GROUPS, args=argv, prog="bourre train", description=description)
    return args, runs.fields_given(Args, argv)


def main(argv: list[str] | None = None) -> int:
    try:
        return runs.run_from_command_line(run, *parse_args(argv))
    except WorkerError as e:  # the checkpoint is saved; the message says how to go on
        print(f"train: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
