"""Exact NashConv on small Bourré: CFR+ to an approximate equilibrium, and how far the project's agents are from one
(``bourre exploit --exact``).

A game small enough to walk (``CONFIGS``: two or three players, one or two cards each, a deck of two ranks, a
one-card draw or none) is walked once
through ``bourre_env.openspiel`` and written out as an extensive-form game in Gambit's EFG format, which
OpenSpiel loads as a C++ game (``pyspiel.load_efg_game``): every information state of the Python game becomes an
EFG information set, every action keeps its id as its label, every chance node keeps its exact probabilities and
every terminal the players' chips. OpenSpiel's C++ CFR+ and NashConv then run on it at C++ speed; the test suite
checks on the smallest configuration that NashConv on the export equals OpenSpiel's Python NashConv on the
Python game itself.

NashConv of a policy profile is the sum over players of what a best response to the others gains over the
policy: 0 at a Nash equilibrium, in chips per deal. The game is general-sum (a carried pot leaves the table), and
OpenSpiel's NashConv is exact for it.

Agents are wrapped as OpenSpiel policies (``AgentPolicy``) that read the acting player's observation, the same
vector the agents see in ``bourre_v0``: ``random`` (uniform over the legal actions), ``heuristic`` (its action,
exactly: ties between equally scored cards are split evenly, as its seeded tie-break does on average) and
``ppo`` (the shipped network's most probable legal action, as ``agents.make("ppo")`` plays). ``pimc`` is left
out: its play depends on its sampled worlds, not only on the observation, so it is not one fixed policy.

Outputs (``--out``, default ``runs/exact``): ``nashconv.json`` (tree sizes, the CFR+ curve, every agent's
NashConv, the seconds each step took), ``nashconv.md`` (the table) and ``nashconv.png`` (NashConv against CFR+
iterations, log-log, with the agents as horizontal lines).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy
from tqdm.auto import tqdm

from bourre_env import atomic_files
from bourre_env import openspiel as bourre_openspiel
from bourre_env.atomic_files import check_writable_folder
from bourre_env.words import plural

__all__ = [
    "CONFIGS",
    "ExportedGame",
    "AgentPolicy",
    "agent_distribution",
    "export",
    "cfr_curve",
    "agent_nash_conv",
    "main_exact",
]

CONFIGS: dict[str, dict[str, Any]] = {
    "2p-1card-draw1": {"num_players": 2, "hand_size": 1, "ranks": 2, "max_discard": 1, "dealer": 0},
    "2p-2cards": {"num_players": 2, "hand_size": 2, "ranks": 2, "max_discard": 0, "dealer": 0},
    "3p-1card": {"num_players": 3, "hand_size": 1, "ranks": 2, "max_discard": 0, "dealer": 0},
}
"""The small configurations (OpenSpiel game parameters; every other rule is the standard game's, dealer fixed at
seat 0). Their tree sizes are in ``nashconv.json`` and the README."""

DEFAULT_ITERATIONS = {"2p-1card-draw1": 1000, "2p-2cards": 500, "3p-1card": 1000}
AGENTS = ("random", "heuristic", "ppo")
_TIE_GRID = 60  # tie-break points: of k <= 6 equally scored cards each is picked at exactly 60 / k of them


# ---------------------------------------------------------------------------- agents as policies
def _heuristic_distribution(obs: np.ndarray, mask: np.ndarray) -> dict[int, float]:
    from agents.heuristic import HeuristicAgent

    agent = _cached("heuristic", HeuristicAgent)
    first = agent.choose(obs, mask, 0.0)
    if agent.choose(obs, mask, 1.0 - 1e-9) == first:
        return {first: 1.0}
    counts: dict[int, int] = {}
    for i in range(_TIE_GRID):
        action = agent.choose(obs, mask, (i + 0.5) / _TIE_GRID)
        counts[action] = counts.get(action, 0) + 1
    return {a: c / _TIE_GRID for a, c in counts.items()}


_AGENT_CACHE: dict[str, Any] = {}


def _cached(name: str, build: Callable[[], Any]) -> Any:
    if name not in _AGENT_CACHE:
        _AGENT_CACHE[name] = build()
    return _AGENT_CACHE[name]


def agent_distribution(agent: str, obs: np.ndarray, mask: np.ndarray) -> dict[int, float]:
    """The probability of each action ``agent`` takes on this observation and legal-action mask."""
    legal = np.flatnonzero(mask)
    if legal.size == 0:
        raise ValueError("the action mask allows no action: this observation is not a decision")
    if agent == "random":
        return {int(a): 1.0 / legal.size for a in legal}
    if agent == "heuristic":
        return _heuristic_distribution(obs, mask)
    if agent == "ppo" or agent.startswith("ppo:"):
        import agents

        ppo = _cached(agent, lambda: agents.make(agent, seed=0))
        return {int(ppo.act({"observation": obs, "action_mask": mask})): 1.0}
    raise ValueError(
        f"agent {agent!r}: exact NashConv takes random, heuristic, ppo or ppo:PATH (policies of the observation alone)"
    )


class AgentPolicy(os_policy.Policy):
    """An agent of the project as an OpenSpiel policy of ``python_bourre``: every player plays it, from its own
    observation."""

    def __init__(self, game: pyspiel.Game, agent: str) -> None:
        super().__init__(game, list(range(game.num_players())))
        self.agent = agent

    def action_probabilities(self, state: pyspiel.State, player_id: int | None = None) -> dict[int, float]:
        player = state.current_player() if player_id is None else player_id
        mask = np.zeros(self.game.num_distinct_actions(), np.int8)
        mask[state.legal_actions(player)] = 1
        obs = np.asarray(state.observation_tensor(player), np.float32)
        return agent_distribution(self.agent, obs, mask)


# ---------------------------------------------------------------------------- the game as an EFG file
class ExportedGame:
    """A walked ``python_bourre`` game: its EFG text, sizes, and each information set's observation and mask."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.params = dict(params)
        self.game = pyspiel.load_game(bourre_openspiel.GAME_NAME, self.params)
        self.infosets: dict[str, int] = {}  # information state string -> EFG information set number (per player)
        self.views: list[tuple[int, np.ndarray, np.ndarray]] = []  # per information set: player, observation, mask
        self.sizes = {
            "states": 0,
            "decision_states": 0,
            "chance_states": 0,
            "terminal_states": 0,
            "information_states": 0,
        }
        self.efg = ""
        self._efg_game: pyspiel.Game | None = None

    def walk(self, progress: bool = False) -> ExportedGame:
        title = " ".join(f"{k}={v}" for k, v in self.params.items())  # no quotes or braces: the title is a string
        lines = [
            f'EFG 2 R "bourre {title}" {{ ' + " ".join(f'"player {p}"' for p in range(self.game.num_players())) + " }",
            '""',
        ]
        counters = {"chance": 0, "terminal": 0}
        numbers: list[dict[str, int]] = [{} for _ in range(self.game.num_players())]
        bar = tqdm(desc="walk", unit="state", disable=not progress, dynamic_ncols=True)
        stack: list[pyspiel.State] = [self.game.new_initial_state()]
        while stack:  # preorder, children in order: the order EFG lists nodes in
            state = stack.pop()
            self.sizes["states"] += 1
            bar.update()
            if state.is_terminal():
                counters["terminal"] += 1
                self.sizes["terminal_states"] += 1
                payoffs = " ".join(repr(float(r)) for r in state.returns())
                lines.append(f't "" {counters["terminal"]} "" {{ {payoffs} }}')
                continue
            if state.is_chance_node():
                counters["chance"] += 1
                self.sizes["chance_states"] += 1
                outcomes = state.chance_outcomes()
                branches = " ".join(f'"c{a}" {p!r}' for a, p in outcomes)
                lines.append(f'c "" {counters["chance"]} "" {{ {branches} }} 0')
                stack.extend(state.child(a) for a, _ in reversed(outcomes))
                continue
            self.sizes["decision_states"] += 1
            player = state.current_player()
            info = state.information_state_string()
            if info not in self.infosets:
                self.infosets[info] = len(self.views)
                mask = np.zeros(self.game.num_distinct_actions(), np.int8)
                mask[state.legal_actions()] = 1
                self.views.append((player, np.asarray(state.observation_tensor(player), np.float32), mask))
            number = numbers[player].setdefault(info, len(numbers[player]) + 1)
            legal = state.legal_actions()
            labels = " ".join(f'"{a}"' for a in legal)
            lines.append(f'p "" {player + 1} {number} "i{self.infosets[info]}" {{ {labels} }} 0')
            stack.extend(state.child(a) for a in reversed(legal))
        bar.close()
        self.sizes["information_states"] = len(self.views)
        self.efg = "\n".join(lines) + "\n"
        return self

    @property
    def efg_game(self) -> pyspiel.Game:
        if self._efg_game is None:
            self._efg_game = pyspiel.load_efg_game(self.efg)
        return self._efg_game

    def tabular(
        self, distribution: Callable[[int, np.ndarray, np.ndarray], dict[int, float]]
    ) -> dict[str, list[tuple[int, float]]]:
        """A policy of the EFG game, ``distribution(player, observation, mask)`` at each information set, keyed by
        the EFG game's information state strings and action ids."""
        game = self.efg_game
        table: dict[str, list[tuple[int, float]]] = {}
        stack = [game.new_initial_state()]
        while stack:
            state = stack.pop()
            if state.is_terminal():
                continue
            if state.is_chance_node():
                stack.extend(state.child(a) for a, _ in state.chance_outcomes())
                continue
            key = state.information_state_string()
            legal = state.legal_actions()
            if key not in table:
                index = int(key.rsplit("-", 1)[1][1:])  # the information set's name, "i<index>"
                player, obs, mask = self.views[index]
                probs = distribution(player, obs, mask)
                # every legal action listed, the ones the agent never takes at 0
                table[key] = [(a, probs.get(int(state.action_to_string(a)), 0.0)) for a in legal]
            stack.extend(state.child(a) for a in legal)
        return table


def export(params: dict[str, Any], progress: bool = False) -> ExportedGame:
    """Walk the game of ``params`` and write it as EFG (see ``ExportedGame``)."""
    return ExportedGame(params).walk(progress)


def cfr_curve(exported: ExportedGame, iterations: int, progress: bool = False) -> list[tuple[int, float]]:
    """NashConv of CFR+'s average policy at iterations 1, 2, 5, 10, 20, 50, ... up to ``iterations``."""
    solver = pyspiel.CFRPlusSolver(exported.efg_game)
    marks = sorted({m * 10**e for e in range(8) for m in (1, 2, 5) if m * 10**e <= iterations} | {iterations})
    curve = []
    for i in tqdm(range(1, iterations + 1), desc="cfr+", disable=not progress, dynamic_ncols=True):
        solver.evaluate_and_update_policy()
        if i in marks:
            curve.append((i, float(pyspiel.nash_conv(exported.efg_game, solver.average_policy()))))
    return curve


def agent_nash_conv(exported: ExportedGame, agent: str) -> float:
    """Exact NashConv of every player playing ``agent``."""
    table = exported.tabular(lambda player, obs, mask: agent_distribution(agent, obs, mask))
    return float(pyspiel.nash_conv(exported.efg_game, table))


# ---------------------------------------------------------------------------- the command
def run_config(name: str, iterations: int, agents: Sequence[str] = AGENTS, progress: bool = False) -> dict[str, Any]:
    started = time.perf_counter()
    exported = export(CONFIGS[name], progress)
    walk_seconds = time.perf_counter() - started
    started = time.perf_counter()
    curve = cfr_curve(exported, iterations, progress)
    cfr_seconds = time.perf_counter() - started
    agent_values: dict[str, float | str] = {}
    for agent in agents:
        try:
            agent_values[agent] = agent_nash_conv(exported, agent)
        except ValueError as err:  # an agent that cannot read this configuration: reported, not fatal
            agent_values[agent] = f"not applicable: {err}"
    return {
        "config": name,
        "params": CONFIGS[name],
        "sizes": exported.sizes,
        "walk_seconds": round(walk_seconds, 1),
        "cfr_seconds": round(cfr_seconds, 1),
        "cfr_plus": curve,
        "agents": agent_values,
    }


def markdown(results: list[dict[str, Any]]) -> str:
    head = (
        "| configuration | states | information states | CFR+ iterations | CFR+ NashConv | "
        + " | ".join(f"{a} NashConv" for a in AGENTS)
        + " |"
    )
    lines = [head, "|" + "---|" * (5 + len(AGENTS))]
    for r in results:
        s = r["sizes"]
        last_i, last_v = r["cfr_plus"][-1]
        values = [r["agents"].get(a) for a in AGENTS]
        cells = [f"{v:.4f}" if isinstance(v, float) else "n/a" for v in values]
        lines.append(
            f"| {r['config']} | {s['states']:,} | {s['information_states']:,} | {last_i} | {last_v:.1e} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines) + "\n"


def plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 3.6), squeeze=False)
    for ax, r in zip(axes[0], results, strict=True):
        its, values = zip(*r["cfr_plus"], strict=False)
        ax.loglog(its, values, marker="o", label="CFR+ average policy")
        for agent, style in zip(AGENTS, (":", "--", "-."), strict=True):
            v = r["agents"].get(agent)
            if isinstance(v, float):
                ax.axhline(v, linestyle=style, color="grey", label=f"{agent} ({v:.3f})")
        ax.set_title(r["config"])
        ax.set_xlabel("iterations")
        ax.set_ylabel("NashConv (chips/deal)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _progress_line(result: dict[str, Any]) -> str:
    """One configuration's result in words, while the others are solved (the table comes at the end)."""
    sizes = result["sizes"]
    iterations, value = result["cfr_plus"][-1]
    agents = ", ".join(
        f"{agent} {v:.4f}" if isinstance(v, float) else f"{agent} n/a" for agent, v in result["agents"].items()
    )
    return (
        f"{sizes['states']:,} states, {sizes['information_states']:,} information states; CFR+ NashConv {value:.1e} "
        f"after {plural(iterations, 'iteration')}; NashConv of {agents}"
    )


def main_exact(names: Sequence[str], out: Path, iterations: int | None = None, progress: bool = True) -> list[dict]:
    """``bourre exploit --exact [CONFIG ...]``: every named configuration (default: all), written to ``out``."""
    names = list(names) or list(CONFIGS)
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        raise ValueError(f"--exact: unknown configuration(s) {unknown}; known: {list(CONFIGS)}")
    if iterations is not None and iterations < 1:
        raise ValueError(f"--iterations: expected at least 1, got {iterations}")
    check_writable_folder(out, "--out")  # before the solving, which can take minutes
    results = []
    for name in names:
        result = run_config(name, iterations or DEFAULT_ITERATIONS[name], progress=progress)
        results.append(result)
        print(f"{name}: solved ({_progress_line(result)})", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    atomic_files.write_text(out / "nashconv.json", json.dumps(results, indent=2) + "\n")
    atomic_files.write_text(out / "nashconv.md", markdown(results))
    with atomic_files.replacing(out / "nashconv.png", ".png") as tmp:
        plot(results, tmp)
    print(markdown(results))
    return results
