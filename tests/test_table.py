"""The table's loop (``train.table``): its three drivers play the same games, decision by decision, as the plain AEC
loop that evaluation wrote out before the table existed; errors name the agent, the deal and the decision; and the
modules that play seated deals play them through it."""

from __future__ import annotations

import ast
import asyncio
import hashlib
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import agents
import bourre_env
from agents.base import AgentError, choose
from bourre_env import core
from train import table as tb
from train.eval.duplicate import agent_seed, play_deal, table_rules
from train.eval.variance import ROOT, DrawRecorder, is_draw

ROOT_DIR = Path(__file__).resolve().parent.parent
SIZES = (3, 5, 8)  # 8 players: the stock runs out and is reshuffled
SPECS = ("random", "heuristic")
DEALS = 2

Step = tuple[int, int, str, str, str, int]  # index, seat, agent, where, the observation's digest, the action


def _digest(obs: dict[str, np.ndarray]) -> str:
    return hashlib.sha256(obs["observation"].tobytes() + obs["action_mask"].tobytes()).hexdigest()[:16]


class Trace(tb.Observer):
    """Every decision the loop applied, and the states it was dealt and stepped from."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.dealt_states: list[bytes] = []

    def dealt(self, env: Any) -> None:
        self.dealt_states.append(env.unwrapped.state_vector.tobytes())

    def stepped(self, decision: tb.Decision, action: int, before: np.ndarray, env: Any) -> None:
        d = decision
        self.steps.append((d.index, d.seat, d.agent, d.where, _digest(d.observation), action))


def reference_play(env: Any, table: list[Any], deals: tb.Deals, k: int, labels: list[str], deal_name: str) -> Any:
    """The loop as ``train.eval.duplicate.play_deal`` wrote it out before ``train.table``: the oracle. The rows, the
    decisions and the draws (as ``train.eval.variance`` records them)."""
    env.reset(seed=int(deals.env_seeds[k]), options={"deck": deals.decks[k].tolist(), "dealer": int(deals.dealers[k])})
    for agent in table:
        agent.reset()
    draws = [(env.unwrapped.state_vector.copy(), ROOT)]
    steps: list[Step] = []
    for decision, name in enumerate(env.agent_iter(), 1):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        seat = env.unwrapped.agent_name_mapping[name]
        where = f"{deal_name}, decision {decision} ({name})"
        action = choose(table[seat], obs, repr(labels[seat]), where)
        steps.append((decision, seat, name, where, _digest(obs), action))
        if is_draw(env.unwrapped.state_vector, action):
            draws.append((env.unwrapped.state_vector.copy(), action))
        env.step(action)
    return tb.seat_outcomes(env.unwrapped.state_vector, len(table)), steps, draws


def _table(spec: str, n: int) -> list[Any]:
    """A fresh table of ``spec`` agents, seeded by seat as evaluation seeds them."""
    return [agents.make(spec, agent_seed(0, n, 0, 1 + s)) for s in range(n)]


def _drive_async(env: Any, deal: tb.Deal, table: list[Any], labels: list[str], name: str, trace: Trace) -> Any:
    async def decide(decision: tb.Decision) -> int:
        await asyncio.sleep(0)  # hand the event loop over, as a remote seat's turn would
        return choose(table[decision.seat], decision.observation, repr(labels[decision.seat]), decision.where)

    tb.reset_agents(table)
    return asyncio.run(tb.play_async(env, deal, decide, labels, name, (trace,)))


def _drive_paused(env: Any, deal: tb.Deal, table: list[Any], labels: list[str], name: str, trace: Trace) -> Any:
    paused = tb.PausedGame(tb.game(env, deal, labels, name, (trace,)))
    tb.reset_agents(table)
    while (decision := paused.pending) is not None:
        assert paused.outcome is None and not paused.over
        paused.answer(choose(table[decision.seat], decision.observation, repr(labels[decision.seat]), decision.where))
    assert paused.over
    return paused.outcome


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("n", SIZES)
def test_the_three_drivers_play_the_games_of_the_plain_loop(n: int, spec: str) -> None:
    """Same rows, same decisions (index, seat, observation, action, how an error would name it), same draws."""
    rules = table_rules(n, {})
    deals = tb.make_deals(11, rules, DEALS)
    env = bourre_env.env(num_players=n)
    labels = [f"{spec}#{s}" for s in range(n)]
    tables = {way: _table(spec, n) for way in ("reference", "sync", "async", "paused")}
    for k in range(DEALS):
        name = f"deal {k} of seed 11 at {n} players"
        rows, steps, draws = reference_play(env, tables["reference"], deals, k, labels, name)
        deal = deals.deal(k)
        played = {}
        traces = {way: Trace() for way in ("sync", "async", "paused")}
        recorded: list[Any] = []
        played["sync"] = tb.play(env, deal, tables["sync"], labels, name, (traces["sync"], DrawRecorder(recorded)))
        played["async"] = _drive_async(env, deal, tables["async"], labels, name, traces["async"])
        played["paused"] = _drive_paused(env, deal, tables["paused"], labels, name, traces["paused"])
        for way, got in played.items():
            assert np.array_equal(got, rows), way
            assert traces[way].steps == steps, way
            assert len(traces[way].dealt_states) == 1
        assert len(recorded) == len(draws) and all(
            np.array_equal(a, b) and x == y for (a, x), (b, y) in zip(recorded, draws, strict=True)
        )


def test_play_deal_is_the_sync_driver_on_deal_k() -> None:
    """``play_deal``'s signature, draws included, plays ``train.table.play`` on ``deals.deal(k)``."""
    rules = table_rules(4, {})
    deals = tb.make_deals(3, rules, 3)
    env = bourre_env.env(num_players=4)
    for k in range(3):
        ours: list[Any] = []
        rows = play_deal(env, _table("heuristic", 4), deals, k, ours)
        want, _, draws = reference_play(env, _table("heuristic", 4), deals, k, ["heuristic"] * 4, "x")
        assert np.array_equal(rows, want)
        assert [a for _, a in ours] == [a for _, a in draws] and ours[0][1] == ROOT


def test_the_drivers_of_a_game_on_an_event_loop_interleave() -> None:
    """Two games awaited at once on one event loop, each in its own env, give the rows each gives alone."""
    rules = table_rules(3, {})
    deals = tb.make_deals(5, rules, 2)
    labels = ["random"] * 3
    alone = [tb.play(bourre_env.env(num_players=3), deals.deal(k), _table("random", 3), labels) for k in range(2)]

    async def both() -> list[Any]:
        games = []
        for k in range(2):
            table = _table("random", 3)
            tb.reset_agents(table)

            async def decide(d: tb.Decision, table: list[Any] = table) -> int:
                await asyncio.sleep(0)
                return choose(table[d.seat], d.observation, repr(d.label), d.where)

            games.append(tb.play_async(bourre_env.env(num_players=3), deals.deal(k), decide, labels))
        return list(await asyncio.gather(*games))

    for got, want in zip(asyncio.run(both()), alone, strict=True):
        assert np.array_equal(got, want)


class _Raises:
    name = "bad"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        raise ZeroDivisionError("division by zero")


class _OutOfRange:
    name = "wild"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return core.NUM_ACTIONS


def test_an_agent_error_names_the_agent_the_deal_and_the_decision() -> None:
    rules = table_rules(3, {})
    deals = tb.make_deals(0, rules, 1)
    env = bourre_env.env(num_players=3)
    for bad, said in ((_Raises(), "raised ZeroDivisionError: division by zero"), (_OutOfRange(), "action: expected")):
        table = [bad] + _table("random", 3)[1:]
        with pytest.raises(AgentError) as err:
            play_deal(env, table, deals, 0, None, ["bad one", "random", "random"], "deal 0 of seed 0 at 3 players")
        text = str(err.value)
        assert said in text and "agent 'bad one'" in text and "\n" not in text
        assert re.search(r"at deal 0 of seed 0 at 3 players, decision \d+ \(player_0\)", text), text
        with pytest.raises(AgentError, match=r"agent 'wild' at deal 0, decision|agent 'bad' raised"):
            play_deal(env, table, deals, 0)  # unlabelled: the agent's name, the deal by its index


def test_a_paused_game_refuses_an_action_and_keeps_the_decision() -> None:
    """A refused action changes nothing: the decision is still pending (its ``refused`` says why), a legal answer
    goes on, and the game ends as the sync driver's."""
    rules = table_rules(4, {})
    deal = tb.make_deals(9, rules, 1).deal(0)
    env = bourre_env.env(num_players=4)
    want = tb.play(env, deal, _table("heuristic", 4))
    table = _table("heuristic", 4)
    paused = tb.PausedGame(tb.game(env, deal, ["heuristic"] * 4, "the deal"))
    tb.reset_agents(table)
    first = paused.pending
    assert first is not None and first.index == 1 and first.refused is None
    state = env.unwrapped.state_vector.copy()
    with pytest.raises(AgentError, match=r"agent 'heuristic' at the deal, decision 1 \(player_\d\): action: expected"):
        paused.answer(core.NUM_ACTIONS)
    again = paused.pending
    assert again is not None and again.index == 1 and again.seat == first.seat and again.refused
    assert np.array_equal(env.unwrapped.state_vector, state)
    while (decision := paused.pending) is not None:
        paused.answer(table[decision.seat].act(decision.observation))
    assert paused.outcome is not None and np.array_equal(paused.outcome, want)
    with pytest.raises(ValueError, match="no decision is pending"):
        paused.answer(0)


def test_the_sync_driver_raises_a_refused_action() -> None:
    deal = tb.make_deals(1, table_rules(3, {}), 1).deal(0)
    loop = tb.game(bourre_env.env(num_players=3), deal, ["a", "b", "c"], "deal 7")
    with pytest.raises(AgentError, match=r"^agent '[abc]' at deal 7, decision 1 \(player_\d\): action: expected"):
        tb.drive(loop, lambda d: core.NUM_ACTIONS)


def test_an_episode_of_several_deals_is_one_game_whose_decisions_name_their_deal() -> None:
    rules = table_rules(3, {}).replace(deals_per_episode=3)
    env = bourre_env.env(rules=rules)
    trace = Trace()
    tb.play(env, tb.Deal(rules, env_seed=4), _table("heuristic", 3), None, "seed 4", (trace,))
    wheres = [step[3] for step in trace.steps]
    assert wheres[0].startswith("seed 4, deal 1, decision 1 (")
    assert any(", deal 3, decision " in w for w in wheres)
    assert [step[0] for step in trace.steps] == list(range(1, len(wheres) + 1))


def test_deals() -> None:
    rules = table_rules(4, {})
    whole = tb.make_deals(7, rules, 45)
    chunks = list(tb.deals_in_chunks(7, rules, 45, 20))
    assert [len(c) for c in chunks] == [20, 20, 5]
    assert np.array_equal(np.concatenate([c.decks for c in chunks]), whole.decks)
    deal = whole.deal(21)
    assert deal == chunks[1].deal(1) == whole.slice(20, 30).deal(1)
    assert deal.rules is rules and deal.deck == tuple(whole.decks[21].tolist())
    assert deal.reset_options() == {"deck": list(deal.deck or ()), "dealer": int(whole.dealers[21])}
    assert tb.Deal(rules, env_seed=3).reset_options() is None
    assert tb.Deal(rules, dealer=1, pot=6).reset_options() == {"dealer": 1, "pot": 6}
    with pytest.raises(ValueError, match="name no rules"):
        tb.Deals(whole.decks, whole.dealers, whole.env_seeds).deal(0)
    with pytest.raises(ValueError, match="the deal's rules are not the env's"):
        tb.play(bourre_env.env(num_players=4, tie="divide"), deal, _table("random", 4))
    assert tb.seated(["a", "b", "c"], 1) == ["c", "a", "b"]  # entry i in seat (i + 1) % 3


# ---------------------------------------------------------------------------------------------- the source
TABLE = ROOT_DIR / "train" / "table.py"
PLAYS_A_DEAL = re.compile(r"\.agent_iter\(|\.reset\(\s*seed\s*=")
"""What a module that plays a deal itself writes: the AEC loop, or the reset of an env to a deal."""
NOT_A_SEATED_DEAL = {
    "train/sb3/vec_env.py": "resets Gymnasium single-agent envs, one learner seat each",
    "train/examples/cleanrl_ppo.py": "resets a Gymnasium vector env",
}
PORTED = [
    "train/eval/duplicate.py",
    "train/eval/tournament.py",
    "train/terminal_game.py",
    "train/exit/generation.py",
    "train/research/value_of_information.py",
    "train/research/belief_accuracy.py",
    "train/learning/imitation.py",
    "train/arena/match.py",
    "train/serve/tables.py",
    "train/research/rllib_ppo.py",
]


def test_only_the_table_plays_a_seated_deal() -> None:
    """No module of ``train/`` but ``train/table.py`` walks the AEC loop or resets an env to a deal, except those that
    play no seated deal, each for its stated reason; an allowance that no longer applies is an error."""
    found = {
        path.relative_to(ROOT_DIR).as_posix()
        for path in (ROOT_DIR / "train").rglob("*.py")
        if path != TABLE and PLAYS_A_DEAL.search(path.read_text())
    }
    allowed = set(NOT_A_SEATED_DEAL)
    assert found <= allowed, f"plays a deal outside train/table.py: {sorted(found - allowed)}"
    assert found == allowed, f"allowed but no longer playing a deal itself (remove from the list): {allowed - found}"
    assert not set(PORTED) & found
    for name in PORTED:  # each ported module does play its deals through the table
        assert "train.table" in (ROOT_DIR / name).read_text() or "play_deal" in (ROOT_DIR / name).read_text(), name
    assert PLAYS_A_DEAL.search(TABLE.read_text())


def test_the_table_stands_on_the_ground_floor() -> None:
    """``train/table.py`` imports only ``bourre_env``, ``agents``, numpy and the standard library."""
    tree = ast.parse(TABLE.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module.split(".")[0])
    import sys

    outside = {name for name in imported if name not in sys.stdlib_module_names}
    assert outside <= {"bourre_env", "agents", "numpy"}, outside
