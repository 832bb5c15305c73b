"""How close self-play gets to equilibrium (``train.research.selfplay_nashconv``): the command on a tiny budget, on
the 429-state two-player game, and its checks of the arguments."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytest.importorskip("pyspiel", reason="OpenSpiel is an optional extra: pip install -e '.[openspiel]'")

from train.research import nashconv  # noqa: E402
from train.research import selfplay_nashconv as snc  # noqa: E402

TINY_RUN = [
    "--configs",
    "2p-1card",
    "--steps",
    "12000",
    "--snapshot-every",
    "4096",
    "--rollout-decisions",
    "2048",
    "--tables",
    "64",
    "--imitation-decisions",
    "2000",
    "--cfr-iterations",
    "20",
    "--nfsp-episodes",
    "200",
    "--nfsp-points",
    "2",
    "--no-progress",
]


def _finite(value: float) -> bool:
    return math.isfinite(value) and value >= 0.0


def test_the_command_on_a_tiny_budget(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert snc.main([*TINY_RUN, "--out", str(out)]) == 0
    summary = json.loads((out / "selfplay_nashconv.json").read_text())
    assert summary["command"].startswith("python -m train.research.selfplay_nashconv --configs 2p-1card")
    (result,) = summary["results"]
    assert result["config"] == "2p-1card" and result["sizes"]["states"] == 429
    assert math.isclose(result["random"], 0.75)  # tests/test_exploitability.py: random play's known NashConv
    assert [i for i, _ in result["cfr_plus"]] == [1, 2, 5, 10, 20]
    assert math.isclose(result["cfr_plus"][0][1], result["random"])  # CFR+'s first iterate is uniform
    assert [p["recipe"] for p in result["ppo"]] == ["selfplay", "shipped"]
    for ppo in result["ppo"]:
        steps = [point["step"] for point in ppo["curve"]]
        assert len(steps) >= 2 and steps == sorted(steps) and steps[-1] == ppo["steps"] >= 12000
        assert ppo["rule"] == ["hand_size=1", "ranks=2", "max_discard=0"]
        for point in ppo["curve"]:
            assert _finite(point["sampled"]) and _finite(point["greedy"])
            assert Path(point["policy"]).is_file()
        saved = json.loads((Path(ppo["run_dir"]) / "args.json").read_text())
        assert saved["rule"] == ["hand_size=1", "ranks=2", "max_discard=0"] and saved["players"] == [2]
    nfsp = result["nfsp"]
    assert [p["episode"] for p in nfsp["curve"]] == [100, 200]
    assert all(_finite(p["average_policy"]) for p in nfsp["curve"])
    assert all(_finite(v) for _, v in result["cfr_plus"])
    table = (out / "selfplay_nashconv.md").read_text()
    assert "| 2p-1card | PPO selfplay, sampled |" in table and "| 2p-1card | NFSP average policy |" in table
    assert (out / "selfplay_nashconv.png").read_bytes()[:4] == b"\x89PNG"


def test_a_snapshot_is_scored_as_its_softmax_and_as_its_greedy_play(tmp_path: Path) -> None:
    """The shipped network's greedy NashConv equals nashconv's ``ppo`` row; its softmax is another policy."""
    from agents.ppo import SHIPPED_MODEL

    exported = nashconv.export(snc.TINY)
    greedy = nashconv.agent_nash_conv(exported, f"ppo:{SHIPPED_MODEL}")
    assert math.isclose(greedy, nashconv.agent_nash_conv(exported, "ppo"))
    sampled = snc.sampled_nash_conv(exported, SHIPPED_MODEL)
    assert _finite(sampled) and not math.isclose(sampled, greedy)


def test_rule_options_of_the_configurations() -> None:
    assert snc.rule_options(nashconv.CONFIGS["2p-1card-draw1"]) == ("hand_size=1", "ranks=2", "max_discard=1")
    assert snc.rule_options(nashconv.CONFIGS["3p-1card"]) == ("hand_size=1", "ranks=2", "max_discard=0")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--configs", "9p-9cards"], "configs: from"),
        (["--recipes", "magic"], "recipes: from"),
        (["--snapshot-every", "100", "--rollout-decisions", "2048"], "snapshot_every: between"),
        (["--nfsp-episodes", "-1"], "nfsp_episodes: expected >= 0"),
    ],
)
def test_bad_arguments_are_refused(argv: list[str], message: str, tmp_path: Path, capsys) -> None:
    assert snc.main([*argv, "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
