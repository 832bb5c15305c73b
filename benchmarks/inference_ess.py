"""How many independent worlds the policy-weighted worlds of the search are worth (``model=ppo``, ``temper``).

At every decision of seat 0 with more than one legal action and an earlier decision of another player, in deals
the shipped network plays in every seat, ``PROPOSALS`` uniform worlds are drawn
(``WorldSampler.sample(until=...)``) and weighed by the policy's probabilities of the other players' recorded
actions (``agents.search.inference._policy_log_weights``, what ``policy_worlds`` does), each weight raised to the
power ``temper``. The effective sample size ``(sum w)^2 / sum w^2`` says how many independent worlds the weighted
proposals stand for: ``pimc:64,model=ppo`` resamples its 64 worlds from them, so below 64 its worlds repeat.

Usage
-----
::

    python benchmarks/inference_ess.py                         # docs/search.md's table: 5 players, 20 deals
    python benchmarks/inference_ess.py --players 3 --deals 5 --proposals 256 --temper 1 0.5
"""

from __future__ import annotations

import argparse
import os
import sys

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO_ROOT not in sys.path:
    sys.path.append(_REPO_ROOT)

import numpy as np  # noqa: E402

import agents  # noqa: E402
import bourre_env  # noqa: E402
from agents.search.inference import _policy_log_weights  # noqa: E402
from agents.search.policy import PolicyModel  # noqa: E402
from bourre_env.observation import O_PHASE  # noqa: E402
from bourre_env.sampler import WorldSampler  # noqa: E402


def effective_sizes(
    players: int, deals: int, proposals: int, tempers: list[float], seed: int
) -> tuple[list[bool], np.ndarray]:
    """For each measured decision, whether it is in trick play, and its effective sample size at each temper."""
    policy = PolicyModel("ppo")
    network = agents.make("ppo")
    env = bourre_env.env(num_players=players)
    rng = np.random.default_rng(seed)
    in_tricks: list[bool] = []
    sizes: list[list[float]] = []
    for deal in range(deals):
        env.reset(seed=seed + deal)
        for name in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            if name == env.possible_agents[0] and obs["action_mask"].sum() > 1:
                sampler = WorldSampler(obs["observation"])
                others = [e for e, (_, seat, _) in enumerate(sampler.events) if seat != 0]
                if others:
                    drawn = sampler.sample(proposals, seed=rng, until=others[0])
                    log_w = _policy_log_weights(
                        np.ascontiguousarray(drawn.states),
                        sampler.params,
                        others[0],
                        sampler.events,
                        drawn.discards,
                        policy,
                        rng,
                        sampler.record.pot,
                        np.asarray(obs["observation"], np.float32),
                    )
                    log_w = log_w[np.isfinite(log_w)]
                    row = []
                    for temper in tempers:
                        w = np.exp(temper * (log_w - log_w.max())) if log_w.size else np.zeros(0)
                        row.append(float(w.sum() ** 2 / (w**2).sum()) if w.size else 0.0)
                    in_tricks.append(bool(obs["observation"][O_PHASE + 1] > 0.5))
                    sizes.append(row)
            env.step(network.act(obs))
    return in_tricks, np.asarray(sizes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--proposals", type=int, default=512, help="uniform worlds drawn per decision")
    parser.add_argument("--temper", type=float, nargs="+", default=[1.0, 0.5, 0.3, 0.1])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.deals < 1 or args.proposals < 2 or not all(0 < t <= 1 for t in args.temper):
        parser.error("expected --deals >= 1, --proposals >= 2 and every --temper in (0, 1]")
    in_tricks, sizes = effective_sizes(args.players, args.deals, args.proposals, args.temper, args.seed)
    if sizes.size == 0:
        parser.error("no decision to measure: play more deals")
    print(
        f"effective worlds of {args.proposals} policy-weighted proposals, {args.players} players, "
        f"{args.deals} deals, seed {args.seed}: median [quartiles] over {len(in_tricks)} decisions of seat 0"
    )
    print("| temper | all decisions | before trick play | trick play |")
    print("|---|---|---|---|")
    tricks = np.asarray(in_tricks)
    for k, temper in enumerate(args.temper):
        cells = []
        for part in (np.ones_like(tricks), ~tricks, tricks):
            values = sizes[part, k]
            if values.size == 0:
                cells.append("-")
                continue
            q1, q2, q3 = np.quantile(values, [0.25, 0.5, 0.75])
            cells.append(f"{q2:.1f} [{q1:.1f}, {q3:.1f}] ({values.size})")
        print(f"| {temper:g} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
