"""The style zoo's compiled rules (``agents.styles``) and its batched player (``agents.batched_styles``): the golden
decisions of the Python styles they replaced, the per-observation agent and the batched player equal row by row
with the same seed (on observations and on state rows), legal play under every rule option, and clear errors."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import style_golden

from agents.batched_players import make_batched
from agents.batched_styles import BatchedStylePlayer
from agents.styles import STYLES, StyleAgent
from bourre_env import BourreVectorEnv
from bourre_env.batch import BatchGame
from bourre_env.core.rules import presets

GOLDEN = style_golden.load()
CONFIGS: list[dict[str, Any]] = [
    *({"rules": name, "num_players": n} for name in presets for n in (2, 5, 8)),
    {"num_players": 7, "deals_per_episode": 3, "pot_limit": 12, "tie": "divide"},
    {"num_players": 3, "ranks": 6, "hand_size": 4},
    {"num_players": 6, "hand_size": 6},
    {"num_players": 8, "max_discard": 3},
    {"num_players": 4, "must_trump_when_cannot_win": False, "lead_trump_honors": True},
    {"num_players": 5, "illegal_action": "renege", "deals_per_episode": 2},
    {"num_players": 4, "trump_card": "named_by_dealer", "declaration": "two_rounds", "second_pass_ante": 1},
    {"num_players": 3, "declaration": "simultaneous", "entry_requirement": "trump_or_club"},
]


def _label(config: dict[str, Any]) -> str:
    return "-".join(f"{k}={v}" for k, v in config.items())


def _golden(rule_set: int, style: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The golden decisions of one agent: observations, masks and actions, in the order it made them."""
    rows = np.flatnonzero((GOLDEN["rule_set"] == rule_set) & (GOLDEN["style"] == style))
    return GOLDEN["observations"][rows], GOLDEN["masks"][rows], GOLDEN["action"][rows]


def test_the_golden_file_covers_every_style_and_rule_set() -> None:
    assert tuple(STYLES) == style_golden.STYLE_NAMES
    counts = np.bincount(GOLDEN["rule_set"] * len(STYLES) + GOLDEN["style"], minlength=len(style_golden.RULES) * 6)
    assert counts.min() >= 10 and counts.sum() >= 3000, counts
    assert (GOLDEN["masks"].sum(axis=1) == 1).any()  # forced decisions are in it too


@pytest.mark.parametrize("style", list(STYLES))
def test_the_style_agent_makes_the_golden_decisions(style: str) -> None:
    s = list(STYLES).index(style)
    for r in range(len(style_golden.RULES)):
        obs, masks, actions = _golden(r, s)
        agent = StyleAgent(style, seed=r)
        got = [agent.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks, strict=True)]
        assert got == actions.tolist(), (style, style_golden.RULES[r])


@pytest.mark.parametrize("style", list(STYLES))
def test_the_batched_player_makes_the_golden_decisions_in_batches_of_any_size(style: str) -> None:
    s = list(STYLES).index(style)
    rng = np.random.default_rng(0)
    for r in range(len(style_golden.RULES)):
        obs, masks, actions = _golden(r, s)
        whole = BatchedStylePlayer(style, seed=r).act_batch(obs, masks, np.arange(len(obs)))
        assert whole.tolist() == actions.tolist(), (style, style_golden.RULES[r])
        player, got, at = BatchedStylePlayer(style, seed=r), [], 0
        while at < len(obs):  # batches of 1 to 40 rows, as the vector env's rounds give them
            k = int(rng.integers(1, 41))
            got += player.act(obs[at : at + k], masks[at : at + k]).tolist()
            at += k
        assert got == actions.tolist()


def _drive(config: dict[str, Any], steps: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The observations and masks of 24 tables of ``config`` at each of ``steps`` decisions, played by the styles
    in turn and random moves."""
    game, rng = BatchGame(24, seed=seed, **config), np.random.default_rng(seed)
    players = [BatchedStylePlayer(style, seed=seed) for style in STYLES]
    seen = []
    for step in range(steps):
        obs, masks = game.observations().copy(), game.legal_masks().copy()
        seen.append((obs, masks))
        chosen = players[step % len(players)].act(obs, masks)
        rnd = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        game.step(np.where(rng.random(len(masks)) < 0.3, rnd, chosen))
    return seen


@pytest.mark.parametrize("config", CONFIGS[::3], ids=_label)
def test_row_by_row_the_batched_player_is_the_style_agent_with_the_same_seed(config: dict[str, Any]) -> None:
    for style in STYLES:
        agent, player = StyleAgent(style, seed=7), BatchedStylePlayer(style, seed=7)
        for obs, masks in _drive(config, 25, seed=len(config)):
            expected = [agent.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks, strict=True)]
            assert player.act_batch(obs, masks, np.arange(len(obs))).tolist() == expected, style
        assert agent.rng.random() == player.rng.random()  # the same numbers drawn, no more


@pytest.mark.parametrize("config", CONFIGS, ids=_label)
def test_every_style_plays_only_legal_actions_and_decides_alike_from_state_rows(config: dict[str, Any]) -> None:
    """Each style in every seat of a game, from its state rows (``act_game``), against the same style deciding
    from the observations (``act_batch``) with the same seed: the same legal actions, until deals have ended."""
    for style in STYLES:
        game = BatchGame(16, seed=3, **config)
        from_state, from_obs = BatchedStylePlayer(style, seed=1), BatchedStylePlayer(style, seed=1)
        ended = 0
        for _ in range(60 * config.get("deals_per_episode", 1)):
            obs, masks = game.observations(), game.legal_masks()
            rows = np.arange(16)
            chosen = from_state.act_game(game, rows)
            assert chosen.tolist() == from_obs.act_batch(obs, masks, rows).tolist(), style
            assert masks[rows, chosen].all(), style
            _, done = game.step(chosen)
            ended += int(done.sum())
        assert ended > 0, (style, config)


def test_a_mask_with_one_legal_action_gets_that_action() -> None:
    obs, masks = GOLDEN["observations"], GOLDEN["masks"].copy()
    rng = np.random.default_rng(1)
    for b in range(len(masks)):  # every golden position with one of its legal actions left alone
        legal = np.flatnonzero(masks[b])
        masks[b] = 0
        masks[b, legal[rng.integers(legal.size)]] = 1
    for style in STYLES:
        player = BatchedStylePlayer(style, seed=0)
        assert player.act(obs, masks).tolist() == np.argmax(masks, axis=1).tolist(), style
        agent = StyleAgent(style, seed=0)
        assert [
            agent.act({"observation": o, "action_mask": m}) for o, m in zip(obs[:200], masks[:200], strict=True)
        ] == np.argmax(masks[:200], axis=1).tolist()
        assert player.rng.random() == np.random.default_rng(0).random()  # a choice of one draws nothing


def test_a_random_style_replays_with_its_seed_and_another_seed_plays_otherwise() -> None:
    obs, masks = GOLDEN["observations"], GOLDEN["masks"]
    for style in ("eager-random", "coin-flip"):
        runs = [BatchedStylePlayer(style, seed=seed).act(obs, masks).tolist() for seed in (4, 4, 5)]
        assert runs[0] == runs[1] and runs[0] != runs[2], style
    assert make_batched("style:eager-random", 4).act_batch(obs, masks, np.arange(len(obs))).tolist() == (
        BatchedStylePlayer("eager-random", 4).act(obs, masks).tolist()
    )


def test_a_bad_style_spec_is_an_error_that_lists_the_styles() -> None:
    known = "eager-random, eager-high, eager-low, station, rock, coin-flip"
    for spec, said in (("style", "no style named"), ("style:", "no style named"), ("style:reckless", "'reckless'")):
        with pytest.raises(ValueError, match=f"{said}.*style:NAME with NAME one of {known}"):
            make_batched(spec, 0)
    with pytest.raises(ValueError, match=f"unknown style 'reckless'; known: {known}"):
        BatchedStylePlayer("reckless")
    assert isinstance(make_batched("style:rock", 0), BatchedStylePlayer) and make_batched("style:rock").name == (
        "style:rock"
    )


def test_bad_arrays_and_rows_that_are_not_decisions_are_refused() -> None:
    obs, masks = GOLDEN["observations"][:8], GOLDEN["masks"][:8].copy()
    player = BatchedStylePlayer("station", seed=0)
    with pytest.raises(ValueError, match="observations: expected dtype float32"):
        player.act(obs.astype(np.float64), masks)
    with pytest.raises(ValueError, match="masks: expected shape"):
        player.act(obs, masks[:, :-1].copy())
    with pytest.raises(ValueError, match="C-contiguous"):
        player.act(obs, np.asfortranarray(masks))
    masks[5] = 0
    with pytest.raises(ValueError, match="masks: row 5 allows no action"):
        player.act(obs, masks)
    with pytest.raises(ValueError, match="allows no action"):
        StyleAgent("station").act({"observation": obs[5], "action_mask": masks[5]})
    game = BatchGame(4, seed=0, num_players=3)
    with pytest.raises(ValueError, match="rows: expected row indices in 0..3"):
        player.act_game(game, np.array([4]))


def test_the_vector_env_plays_a_style_from_its_spec() -> None:
    env = BourreVectorEnv(32, "style:eager-random", num_players=4, agent_factory=make_batched)
    try:
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        for _ in range(40):
            masks = env.action_masks()
            env.step(np.array([rng.choice(np.flatnonzero(row)) for row in masks]))
    finally:
        env.close()


def test_the_speed_benchmark_prints_each_styles_figures(
    import_benchmark: Callable[[str], ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    bench = import_benchmark("benchmarks.style_speed")
    argv = ["--styles", "rock", "eager-random", "--players", "3", "--batch-size", "16", "--seconds", "0.02"]
    assert bench.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("| style | batched rows/s | from states rows/s | per row rows/s")
    assert [line.split(" | ")[0] for line in lines[3:5]] == ["| rock", "| eager-random"]
    assert all(line.endswith("x |") for line in lines[3:5])
