"""The user's own agents: module:attr and file.py:attr specs, instances and factories in evaluate and tournament,
agents without reset(), the bourre.agents entry points, and untrusted sources that must not load code."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import agents
from train.eval.duplicate import evaluate
from train.eval.tournament import tournament

REPO = Path(__file__).resolve().parent.parent

BOT = textwrap.dedent("""
    import pathlib
    import agents

    # Every import of this file leaves a mark, so a test can tell whether the code ran.
    pathlib.Path(__file__).with_suffix(".imported").touch()


    class HighestIdBot:
        # No reset(), no name: both are optional.
        def __init__(self, seed):
            self.seed = seed
            self.calls = 0

        def act(self, observation):
            self.calls += 1
            return int(agents.legal_actions(observation)[-1])


    class Styled:
        def __init__(self, seed=None, variant=None):
            self.variant = variant

        def act(self, observation):
            return int(agents.legal_actions(observation)[0])


    def make_bot(variant, seed):
        bot = HighestIdBot(seed)
        bot.variant = variant
        return bot
""")


@pytest.fixture()
def bot_file(tmp_path: Path) -> Path:
    path = tmp_path / "mybot.py"
    path.write_text(BOT)
    return path


@pytest.fixture()
def bot_module(bot_file: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The bot importable as ``mybot`` (its folder on sys.path), forgotten afterwards."""
    monkeypatch.syspath_prepend(str(bot_file.parent))
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    return "mybot"


def test_file_and_module_specs_build_classes_and_factories(bot_file: Path, bot_module: str) -> None:
    bot = agents.make(f"{bot_file}:HighestIdBot", seed=7)
    assert isinstance(bot, agents.user_code.UserAgent) and bot.agent.seed == 7
    assert bot.name == f"{bot_file}:HighestIdBot"
    bot.reset()  # supplied: the class has none
    assert agents.make(f"{bot_module}:HighestIdBot", seed=3).agent.seed == 3  # type: ignore[attr-defined]
    assert agents.make(f"{bot_file}:make_bot:aggressive", seed=1).agent.variant == "aggressive"  # type: ignore
    assert agents.make(f"{bot_file}:make_bot", seed=1).agent.variant is None  # type: ignore[attr-defined]
    assert agents.make(f"{bot_module}:Styled:fast").agent.variant == "fast"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="takes no variant"):
        agents.make(f"{bot_file}:HighestIdBot:aggressive")
    # A registered name wins: ppo:PATH is the built-in with a path variant, not a module called ppo.
    assert not agents.is_user_code("ppo:runs/x/model.npz")
    assert agents.is_user_code(f"{bot_module}:HighestIdBot") and agents.is_user_code(f"{bot_file}:HighestIdBot")


def test_errors_say_how_to_add_an_agent(bot_file: Path) -> None:
    with pytest.raises(
        ValueError,
        match=r"unknown agent 'nobot'; known: \[.*\]; to use your own agent, give "
        r"module:Class or path/to/file.py:Class.*agents.register.*docs/agents.md",
    ):
        agents.make("nobot")
    with pytest.raises(ValueError, match=r"mybot.py:ClassName"):
        agents.make(str(bot_file))
    with pytest.raises(ValueError, match="has no 'Nope'"):
        agents.make(f"{bot_file}:Nope")
    with pytest.raises(ValueError, match="no module named 'no_such_module_xyz'"):
        agents.make("no_such_module_xyz:Bot")
    with pytest.raises(ValueError, match="is a module, not an agent class or a factory"):
        agents.make(f"{bot_file}:pathlib")
    with pytest.raises(ValueError, match="goes to evaluate and tournament directly"):
        agents.make(object())  # type: ignore[arg-type]


def test_evaluate_takes_an_instance_without_reset(bot_module: str) -> None:
    import mybot  # type: ignore[import-not-found]

    bot = mybot.HighestIdBot(0)
    report = evaluate(bot, "heuristic", players=3, deals=4, seed=0, progress=False)
    assert report.candidate == "HighestIdBot"
    assert bot.calls > 0  # the instance itself played
    # The class (a factory seed -> agent) and the spec of the same bot give the same result: the bot ignores its
    # seed, and the field's agents are seeded by seat whatever the candidate is.
    by_class = evaluate(mybot.HighestIdBot, "heuristic", players=3, deals=4, seed=0, progress=False)
    by_spec = evaluate(f"{bot_module}:HighestIdBot", "heuristic", players=3, deals=4, seed=0, progress=False)
    assert report.tables == by_class.tables == by_spec.tables
    assert by_spec.candidate == "mybot:HighestIdBot"


def test_workers_need_specs_or_picklable_factories(bot_module: str) -> None:
    import mybot

    with pytest.raises(ValueError, match="instance cannot be shared by workers=2.*spec.*picklable factory"):
        evaluate(mybot.HighestIdBot(0), "heuristic", players=3, deals=4, workers=2, progress=False)
    with pytest.raises(ValueError, match="workers=2 need a spec or a picklable factory"):
        evaluate(lambda seed: mybot.HighestIdBot(seed), "heuristic", players=3, deals=4, workers=2, progress=False)
    with pytest.raises(ValueError, match="instance cannot be shared by Ray tasks"):
        tournament(["random", mybot.HighestIdBot(0)], players=3, deals=4, backend="ray", progress=False)


def test_tournament_takes_user_specs_and_instances(bot_file: Path, bot_module: str) -> None:
    import mybot

    report = tournament(
        [f"{bot_file}:HighestIdBot", mybot.HighestIdBot(1), "random"], players=3, deals=4, progress=False
    )
    assert report.pool == [f"{bot_file}:HighestIdBot", "HighestIdBot", "random"]
    assert report.baseline == f"{bot_file}:HighestIdBot"
    assert sorted(r.name for r in report.tables[0].agents) == sorted(report.pool)


def test_command_line_evaluates_a_bot_in_a_file(bot_file: Path) -> None:
    # mybot:HighestIdBot is found through PYTHONPATH, the file spec through its path.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(bot_file.parent)])}
    for spec in (f"{bot_file}:HighestIdBot", "mybot:HighestIdBot"):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "train.cli",
                "eval",
                "--candidate",
                spec,
                "--field",
                "heuristic",
                "--players",
                "3",
                "--deals",
                "4",
                "--no-progress",
            ],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert spec in done.stdout
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "train.cli",
            "eval",
            "--candidate",
            "mybot.py",
            "--field",
            "random",
            "--players",
            "3",
            "--deals",
            "2",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
    )
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "mybot.py:ClassName" in bad.stderr + bad.stdout


def test_entry_point_agents_are_registered_and_loaded_lazily(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fancy_bots.py").write_text(
        textwrap.dedent("""
        import agents

        class Fancy:
            def __init__(self, seed):
                self.seed = seed

            def act(self, observation):
                return int(agents.legal_actions(observation)[0])
    """)
    )
    dist = tmp_path / "fancy_bots-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fancy-bots\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[bourre.agents]\nfancy = fancy_bots:Fancy\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fancy_bots", raising=False)
    monkeypatch.setattr(agents, "_FACTORIES", dict(agents._FACTORIES))  # the loaded entry point is cached there

    assert "fancy" in agents.registered()
    assert "fancy_bots" not in sys.modules  # listed, not loaded
    assert not agents.is_user_code("fancy")
    bot = agents.make("fancy", seed=5)
    assert bot.agent.seed == 5  # type: ignore[attr-defined]
    report = evaluate("fancy", "random", players=3, deals=2, progress=False)
    assert report.candidate == "fancy"


def test_untrusted_specs_never_load_code(bot_file: Path, bot_module: str) -> None:
    from train.web.agent_specs import check_agent, check_offered
    from train.web.errors import TableError

    mark = bot_file.with_suffix(".imported")
    for spec in (f"{bot_module}:HighestIdBot", f"{bot_file.name}:HighestIdBot", "os:system"):
        with pytest.raises(ValueError, match="names code to load"):
            agents.check_budget(spec)
        with pytest.raises(TableError, match="names code to load|file paths"):
            check_agent(spec)  # what a page's request goes through
    assert not mark.exists(), "a page's spec ran the bot's code"
    # The operator offers it (bourre serve --agent SPEC): then it is built, once, when the server starts.
    offered = f"{bot_module}:HighestIdBot"
    assert check_offered(offered) == offered
    assert mark.exists()
    assert check_agent(offered, offered=[offered]) == offered
