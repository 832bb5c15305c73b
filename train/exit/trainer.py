"""Expert iteration: a network distilled, round after round, from a search that plays with it (``--trainer exit``).

    bourre train --trainer exit --seed 0 --rounds 3 --deals 300 --workers 2
    bourre train --trainer exit --search pimc:32            # heuristic rollouts instead of the network's
    bourre train --trainer exit --run-dir runs/exit/seed0 --resume --rounds 5

Each round, in order (docs/expert_iteration.md explains the scheme):

1. **Generation** (``train.exit.generation``): ``deals`` self-play deals per table size; in each, the search
   (``search``, a ``pimc`` spec whose ``{policy}`` is the current network's policy file: by default its rollouts
   are played by that network) acts for ``search_seats`` seats and the network plays the others. Every searched
   decision is recorded: observation (sparse), legal mask, the search's value (mean chips) of each candidate
   action, and the seat's chips for the deal. The deals run as jobs through ``train.eval.jobs.run_jobs``
   (``--workers``, ``--backend ray``); they are seeded by the run's seed and the round. The data are kept in
   ``rounds/round_NNN/data.npz``, so a round interrupted after its generation does not search again on
   ``--resume``.
2. **Training**: the network (``train.learning.policy_net.PolicyNet``; round 1 starts from the actor of
   ``init_policy``, the shipped model by default, and a fresh critic) is fitted by minibatch Adam over ``epochs``
   passes of the searched decisions of the last ``replay_rounds`` rounds: cross-entropy of the masked policy to
   the softmax of the search's action values at ``temperature`` over the searched candidates (``search_targets``;
   legal actions the search did not try get zero target), plus ``vf_coef`` times the squared error of the critic
   to the deal's chips times ``value_scale``.
3. **Export and evaluation**: the new actor goes to ``rounds/round_NNN/policy.npz`` (meta: command, seed, round,
   wall time) and ``model.npz``; it is the next round's network and rollout policy. A duplicate evaluation
   (``train.eval.duplicate.evaluate``, ``eval_deals`` deals) against the heuristic field and against the previous
   round's network, with 95% confidence intervals, and one of the round's search (the expert it learned from) on
   ``search_eval_deals`` deals against the heuristic field and the network it searched with, go to ``report.md`` /
   ``report.json`` and TensorBoard (``tb/``: ``charts/``, ``losses/``, ``eval/``). Then ``checkpoint.pt`` (network
   and Adam, tensors only) and ``state.json``.

A new run needs an empty (or new) run folder (``--overwrite`` replaces a run there); ``--resume`` continues
from the last finished round with the arguments of ``args.json``, those given again overriding them (a larger
``--rounds``). Ctrl-C stops the round under way and exits with status 130: the checkpoint of the last finished
round and the data of a finished generation stay, and ``--resume`` goes on from them. A round's data, training
and evaluations depend only on the seed and the round, not on ``--workers``, so a resumed run repeats an
uninterrupted one (on the same machine and thread count).
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

from agents.ppo import load_policy
from bourre_env.atomic_files import write_text
from bourre_env.words import plural
from train import runs
from train.eval.duplicate import EvalReport, agent_seed, evaluate
from train.eval.report import advantage_table, markdown_table
from train.exit.args import Args
from train.exit.generation import RoundData, generate
from train.learning import run_start
from train.learning.checkpoint import check_finite, export, load_checkpoint, save_checkpoint
from train.learning.policy_net import PolicyNet, masked_logits
from train.learning.run_start import RunFolder
from train.run_dir import check_json_fields
from train.runs import CtrlC, eval_row, read_json

__all__ = ["Args", "ExitState", "fit", "main", "parse_args", "resolve_resume", "run", "search_targets"]

MODULE = "train.exit"
RUN_OUTPUTS = (
    "args.json",
    "commands.txt",
    "checkpoint.pt",
    "state.json",
    "model.npz",
    "report.md",
    "report.json",
    "rounds",
    "tb",
)
"""Everything a run writes in its folder (what ``--overwrite`` deletes first)."""
RUN_FOLDER = RunFolder(
    MODULE,
    Path("runs/exit"),
    RUN_OUTPUTS,
    resumable="state.json",
    missing="has no args.json and state.json of an expert-iteration run",
)


@dataclasses.dataclass
class ExitState:
    """Where a run stands, beside its checkpoint: finished rounds, the network of each, and each round's record."""

    round: int = 0
    hidden: list[int] = dataclasses.field(default_factory=list)
    policies: list[str] = dataclasses.field(default_factory=list)  # policies[r]: the network after round r
    rounds: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    start_evals: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # round 0 against the heuristic
    seconds: float = 0.0  # wall time of the finished rounds

    def save(self, path: Path) -> None:
        write_text(path, json.dumps(dataclasses.asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, path: Path) -> ExitState:
        return cls(**check_json_fields(read_json(path, "the run state"), cls, path))


# ---------------------------------------------------------------------------- the training step
def search_targets(values: np.ndarray, temperature: float) -> np.ndarray:
    """Target policies ``(n, actions)``: the softmax of the search's action values (chips; NaN where an action was
    not searched) divided by ``temperature``, over the searched actions only; the others get 0."""
    searched = np.isfinite(values)
    scaled = np.where(searched, values / temperature, -np.inf)
    scaled = scaled - scaled.max(axis=1, keepdims=True)
    weights = np.where(searched, np.exp(scaled), 0.0)
    return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)


@torch.no_grad()
def agreement(net: PolicyNet, data: RoundData, targets: np.ndarray, chunk: int = 4096) -> float:
    """Share of the decisions where the network's most probable action is the search's best."""
    store = data.store()
    same = 0
    for start in range(0, len(data), chunk):
        rows = np.arange(start, min(start + chunk, len(data)))
        logits, _ = net(store.batch(rows, "cpu", grad=False))
        chosen = masked_logits(logits, torch.from_numpy(data.masks[rows])).argmax(dim=1).numpy()
        same += int((chosen == targets[rows].argmax(axis=1)).sum())
    return same / max(len(data), 1)


def fit(
    net: PolicyNet, optimizer: torch.optim.Optimizer, data: RoundData, args: Args, rng: np.random.Generator
) -> dict[str, float]:
    """``epochs`` passes of minibatch Adam on ``data`` (module docstring, step 2); the last pass's mean losses, the
    targets' entropy and the network's agreement with the search before and after."""
    targets = search_targets(data.values, args.temperature)
    store = data.store()
    returns = torch.from_numpy(data.chips * np.float32(args.value_scale))
    masks = torch.from_numpy(data.masks)
    target_t = torch.from_numpy(targets)
    stats = {"agreement_before": agreement(net, data, targets)}
    with tqdm(
        total=args.epochs * len(data), disable=not args.progress, unit="decision", desc="fit", dynamic_ncols=True
    ) as bar:
        for _ in range(args.epochs):
            totals = np.zeros(2)
            order = rng.permutation(len(data))
            for start in range(0, len(data), args.minibatch_size):
                mb = order[start : start + args.minibatch_size]
                logits, values = net(store.batch(mb, "cpu", grad=True))
                logp = torch.log_softmax(masked_logits(logits, masks[mb]), dim=1)
                policy_loss = -(target_t[mb] * logp).sum(dim=1).mean()
                value_loss = 0.5 * (values - returns[mb]).pow(2).mean()
                loss = policy_loss + args.vf_coef * value_loss
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                optimizer.step()
                totals += (policy_loss.item() * len(mb), value_loss.item() * len(mb))
                bar.update(len(mb))
            stats["policy_loss"], stats["value_loss"] = totals / len(data)
            bar.set_postfix(policy_loss=f"{stats['policy_loss']:.3f}", value_loss=f"{stats['value_loss']:.3f}")
    safe = np.where(targets > 0, targets, 1.0)
    stats["target_entropy"] = float(-(targets * np.log(safe)).sum(axis=1).mean())
    stats["kl_to_target"] = stats["policy_loss"] - stats["target_entropy"]
    stats["agreement_after"] = agreement(net, data, targets)
    stats["target_top_probability"] = float(targets.max(axis=1).mean())
    ranked = -np.sort(-np.where(np.isfinite(data.values), data.values, -np.inf), axis=1)
    stats["value_gap_median"] = float(np.median(ranked[:, 0] - ranked[:, 1]))  # chips between the best two
    return stats


# ---------------------------------------------------------------------------- the run
def resolve_resume(args: Args, given: set[str]) -> Args:
    """The saved arguments of ``args.run_dir``, with the fields in ``given`` taken from ``args``."""
    saved, run_dir = run_start.saved_args(RUN_FOLDER, Args, args.run_dir)
    return run_start.resumed_args(saved, args, given, run_dir)


def claim_run(args: Args, given: set[str]) -> tuple[Args, ExitState | None]:
    """The run's arguments (the saved ones on ``--resume``) and the state it resumes from (None for a new run),
    once the run folder is claimed (``train.learning.run_start``)."""
    return run_start.claim_run(RUN_FOLDER, args, given, resolve_resume, ExitState.load)


def round_folder(run_dir: Path, r: int) -> Path:
    return run_dir / "rounds" / f"round_{r:03d}"


def generation_key(args: Args, r: int, policy: str) -> str:
    """What a round's data depend on: reused on ``--resume`` only when all of it is the same."""
    fields = ("seed", "players", "deals", "search", "search_seats", "search_share")
    return json.dumps({"round": r, "policy": policy, **{name: getattr(args, name) for name in fields}}, default=str)


class ExpertIteration:
    """The rounds of a run (module docstring) and what they write."""

    def __init__(self, args: Args, net: PolicyNet, optimizer: torch.optim.Optimizer, state: ExitState, command: str):
        assert args.run_dir is not None
        self.args, self.run_dir, self.net, self.optimizer, self.state = args, args.run_dir, net, optimizer, state
        self.command = command
        self.writer = runs.summary_writer(self.run_dir / "tb")

    def train(self) -> None:
        """Rounds until ``rounds``; on Ctrl-C, ``KeyboardInterrupt`` after saying how to resume."""
        try:
            if self.args.eval_deals and self.state.round == 0 and not self.state.start_evals:
                self.evaluate_start()
            while self.state.round < self.args.rounds:
                self.one_round()
        except KeyboardInterrupt:
            print(
                f"\ninterrupted in round {self.state.round + 1}: the run keeps its "
                f"{plural(self.state.round, 'finished round')}; continue with\n  bourre train --trainer exit --run-dir "
                f"{shlex.quote(str(self.run_dir))} --resume",
                file=sys.stderr,
            )
            raise
        finally:
            self.writer.close()

    def one_round(self) -> None:
        args, state, r = self.args, self.state, self.state.round + 1
        started = time.perf_counter()
        folder = round_folder(self.run_dir, r)
        folder.mkdir(parents=True, exist_ok=True)
        policy = state.policies[-1]
        key = generation_key(args, r, policy)
        data = RoundData.load(folder / "data.npz", key)
        generation_seconds = 0.0
        if data is None:
            data = generate(
                args.search_spec(policy),
                Path(policy),
                args.players,
                args.deals,
                agent_seed(args.seed, r),
                args.search_seats,
                args.search_share,
                args.workers,
                args.backend,
                args.address,
                args.progress,
                f"round {r}/{args.rounds}: search",
            )
            generation_seconds = time.perf_counter() - started
            data.save(folder / "data.npz", key)
        if not len(data):
            raise ValueError(f"round {r}: the search made no decision to learn from; give more --deals")
        training = self.replay(r, data)
        t0 = time.perf_counter()
        stats = fit(self.net, self.optimizer, training, args, np.random.default_rng([args.seed, r, 3]))
        train_seconds = time.perf_counter() - t0
        check_finite(self.net, r)
        meta = {
            "trainer": "exit",
            "command": self.command,
            "seed": args.seed,
            "round": r,
            "players": list(args.players),
            "search": args.search,
            "wall_seconds": round(state.seconds + time.perf_counter() - started, 1),
        }
        new_policy = export(self.net, folder / "policy.npz", meta)
        t0 = time.perf_counter()
        reports = self.evaluate(new_policy, Path(policy))
        search_reports = self.evaluate_search(Path(policy))
        eval_seconds = time.perf_counter() - t0
        write_text(
            folder / "eval.json", json.dumps([report.to_dict() for report in reports + search_reports], indent=2) + "\n"
        )
        row: dict[str, Any] = {
            "round": r,
            "deals": data.deals,
            "searched_decisions": len(data),
            "trained_decisions": len(training),
            "generation_seconds": generation_seconds,
            "train_seconds": train_seconds,
            "eval_seconds": eval_seconds,
            **stats,
            "evals": [{"field": rep.field, **eval_row(r, rep)} for rep in reports],
            "search_evals": [{"field": rep.field, **eval_row(r, rep)} for rep in search_reports],
        }
        with CtrlC() as ctrl_c:  # the round's files are written together, never half of them
            export(self.net, self.run_dir / "model.npz", meta)
            state.round = r
            state.policies.append(str(new_policy))
            state.rounds.append(row)
            state.seconds += time.perf_counter() - started
            save_checkpoint(self.net, self.optimizer, self.run_dir, state, state.round)
            write_report(self.run_dir, state, args, self.command, reports + search_reports)
        self.log(row, reports, search_reports)
        if ctrl_c.pressed:
            raise KeyboardInterrupt

    def replay(self, r: int, data: RoundData) -> RoundData:
        """The round's data and those of the ``replay_rounds - 1`` rounds before it that are still on disk."""
        parts = [data]
        for earlier in range(r - 1, max(0, r - self.args.replay_rounds), -1):
            path = round_folder(self.run_dir, earlier) / "data.npz"
            old = RoundData.load(path)
            if old is not None:
                parts.append(old)
        return RoundData.concatenate(parts) if len(parts) > 1 else data

    def evaluate(self, policy: Path, previous: Path) -> list[EvalReport]:
        """The new network against the heuristic field and against the previous round's network."""
        if not self.args.eval_deals:
            return []
        return [self.evaluate_against(f"ppo:{policy}", field) for field in ("heuristic", f"ppo:{previous}")]

    def evaluate_search(self, previous: Path) -> list[EvalReport]:
        """The round's search (built on the previous round's network, the expert the round learned from) against the
        heuristic field and against that network: whether there was anything to learn."""
        if not self.args.search_eval_deals:
            return []
        spec, deals = self.args.search_spec(previous), self.args.search_eval_deals
        return [self.evaluate_against(spec, field, deals) for field in ("heuristic", f"ppo:{previous}")]

    def evaluate_against(self, candidate: str, field: str, deals: int | None = None) -> EvalReport:
        args = self.args
        return evaluate(
            candidate,
            field,
            players=args.eval_players,
            deals=args.eval_deals if deals is None else deals,
            seed=args.seed + 1,
            workers=args.workers,
            progress=args.progress,
            backend=args.backend,
            address=args.address,
        )

    def evaluate_start(self) -> None:
        """Round 0's network against the heuristic field, on the deals of every round's evaluation: the baseline."""
        report = self.evaluate_against(f"ppo:{self.state.policies[0]}", "heuristic")
        self.state.start_evals = [{"field": report.field, **eval_row(0, report)}]
        self.state.save(self.run_dir / "state.json")
        for t in report.tables:
            self.writer.add_scalar(f"eval/replacement_advantage_vs_heuristic_{t.players}p", t.replacement_advantage, 0)

    def log(self, row: dict[str, Any], reports: list[EvalReport], search_reports: list[EvalReport]) -> None:
        r = row["round"]
        for key in (
            "policy_loss",
            "value_loss",
            "target_entropy",
            "kl_to_target",
            "agreement_before",
            "agreement_after",
            "target_top_probability",
            "value_gap_median",
        ):
            self.writer.add_scalar(f"losses/{key}", row[key], r)
        for key in ("searched_decisions", "generation_seconds", "train_seconds", "eval_seconds"):
            self.writer.add_scalar(f"charts/{key}", row[key], r)
        # either list is empty when its evaluation is switched off (--eval-deals 0, --search-eval-deals 0)
        for report, name in zip(reports, ("heuristic", "previous")[: len(reports)], strict=True):
            for t in report.tables:
                self.writer.add_scalar(f"eval/advantage_vs_{name}_{t.players}p", t.advantage, r)
                self.writer.add_scalar(f"eval/replacement_advantage_vs_{name}_{t.players}p", t.replacement_advantage, r)
        for report, name in zip(search_reports, ("heuristic", "network")[: len(search_reports)], strict=True):
            for t in report.tables:
                key = f"eval/search_replacement_advantage_vs_{name}_{t.players}p"
                self.writer.add_scalar(key, t.replacement_advantage, r)
        self.writer.flush()


def write_report(run_dir: Path, state: ExitState, args: Args, command: str, last: list[EvalReport]) -> None:
    """``report.md`` (a table of the rounds, then the last round's evaluations) and ``report.json`` (every round)."""
    lines = [
        f"# Expert iteration run `{run_dir}`",
        "",
        f"Command: `{command}`  ",
        f"Seed: {args.seed}; search `{args.search}` on {plural(args.search_seats, 'seat')} of each deal, "
        f"{plural(args.deals, 'deal')} per table size and round at {', '.join(map(str, args.players))} players; "
        f"{state.round} of {plural(args.rounds, 'round')} in {state.seconds / 60:.1f} min",
        "",
        f'Model: `{run_dir / "model.npz"}` (`agents.make("ppo:{run_dir / "model.npz"}")`)',
        "",
        "## Rounds",
        "",
        "Advantages in chips per deal, 95% CI; evaluations of "
        f"{args.eval_deals} duplicate deals (seed {args.seed + 1}).",
        "",
        f"The round's search (the expert it learned from: `{args.search}` on the network the round started from) "
        f"on the first {args.search_eval_deals} of those deals, against the heuristic field and against that "
        "network.",
        "",
        "| round | searched decisions | search min | policy loss | KL to target | agreement before / after "
        "| vs heuristic (replacement) | vs previous round (replacement) | search vs heuristic | search vs network |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for start in state.start_evals:
        lines.append(f"| 0 (start) | | | | | | {_advantage_text(start, args.eval_players[0])} | | | |")
    for row in state.rounds:
        evals = [_advantage_text(e, args.eval_players[0]) for e in row["evals"]] or ["-", "-"]
        evals += [_advantage_text(e, args.eval_players[0]) for e in row.get("search_evals", [])] or ["-", "-"]
        lines.append(
            f"| {row['round']} | {row['searched_decisions']:,} | {row['generation_seconds'] / 60:.1f} "
            f"| {row['policy_loss']:.3f} | {row['kl_to_target']:.3f} "
            f"| {row['agreement_before']:.3f} / {row['agreement_after']:.3f} | {' | '.join(evals)} |"
        )
    if last:
        lines += ["", f"## Round {state.round}: duplicate evaluations", ""]
        lines += markdown_table(advantage_table(last))
    write_text(run_dir / "report.md", "\n".join(lines) + "\n")
    write_text(
        run_dir / "report.json",
        json.dumps({"command": command, "args": args.to_json(), "state": dataclasses.asdict(state)}, indent=2) + "\n",
    )


def _advantage_text(row: dict[str, Any], players: int) -> str:
    ci = row.get(f"replacement_advantage_ci95_{players}p")
    value = row[f"replacement_advantage_{players}p"]
    return f"{value:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else f"{value:+.3f}"


def build_network(args: Args, state: ExitState | None) -> tuple[PolicyNet, torch.optim.Optimizer, ExitState]:
    """The network and Adam: from the checkpoint on ``--resume``, else the actor of ``init_policy`` and a seeded
    fresh critic, exported as round 0's policy."""
    assert args.run_dir is not None
    run_start.seed_torch(args.torch_threads, args.seed)
    if state is not None:
        net = PolicyNet(state.hidden)
        optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate)
        load_checkpoint(net, optimizer, args.run_dir / "checkpoint.pt", torch.device("cpu"))
        for group in optimizer.param_groups:  # a learning rate given again on --resume holds from now on
            group["lr"] = args.learning_rate
        return net, optimizer, state
    weights = load_policy(args.init_policy)
    net = PolicyNet([int(w.shape[0]) for w, _ in weights.hidden])
    net.load_actor(weights)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate)
    start = export(
        net,
        round_folder(args.run_dir, 0) / "policy.npz",
        {"trainer": "exit", "seed": args.seed, "round": 0, "from": str(args.init_policy)},
    )
    state = ExitState(hidden=list(net.hidden_sizes), policies=[str(start)])
    save_checkpoint(net, optimizer, args.run_dir, state, state.round)
    return net, optimizer, state


def run(args: Args, given: set[str] | None = None) -> Path:
    """Run (or resume) expert iteration as ``args`` says; returns the run folder."""
    args, saved = claim_run(args, given or set())
    assert args.run_dir is not None
    command = runs.invocation(MODULE)
    net, optimizer, state = build_network(args, saved)
    run_start.record_command(args.run_dir, command)
    if saved is not None:
        print(f"resuming {args.run_dir} after round {state.round} of {args.rounds}")
    ExpertIteration(args, net, optimizer, state, command).train()
    print(f"report: {args.run_dir / 'report.md'}; model: {args.run_dir / 'model.npz'}")
    return args.run_dir


# ---------------------------------------------------------------------------- command line
def parse_args(argv: list[str] | None = None) -> tuple[Args, set[str]]:
    """``Args`` from the command line and the names of the fields it sets (kept over the saved ones on
    ``--resume``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    description = (__doc__ or "").split("\n\n")[0]
    return (
        tyro.cli(Args, args=argv, prog="bourre train --trainer exit", description=description),
        runs.fields_given(Args, argv),
    )


def main(argv: list[str] | None = None) -> int:
    return runs.run_from_command_line(run, *parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
