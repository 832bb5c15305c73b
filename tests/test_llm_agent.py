"""The llm agent (``agents.llm``) through the real ``openai`` client against a scripted chat-completions server on
127.0.0.1: retries on 429 (honouring Retry-After) and 500, time-outs, an invalid reply then the re-ask, the fallback
and its counts, the transcript's lines, and the key, set in an environment variable, in no file written."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("openai")

from scripted_chat_server import ScriptedServer, Step  # noqa: E402

import agents  # noqa: E402  (after the skip: the llm extra may be missing)
import bourre_env  # noqa: E402
from agents.llm import LLMAgent, load_prompt, make_llm, parse_spec  # noqa: E402
from bourre_env import text  # noqa: E402

KEY = "sk-test-0123456789abcdefSECRET"
KEY_ENV = "BOURRE_TEST_LLM_KEY"


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


@pytest.fixture
def serve() -> Iterator[Callable[..., ScriptedServer]]:
    started: list[ScriptedServer] = []

    def start(script: list[Step] | None = None, policy: Callable[[str], str] | None = None) -> ScriptedServer:
        started.append(ScriptedServer(script, policy))
        return started[-1]

    yield start
    for server in started:
        server.close()


def _agent(server: ScriptedServer, tmp_path: Path, **extra: Any) -> LLMAgent:
    options = {"model": "scripted", "base_url": server.url, "key_env": KEY_ENV, "timeout": 2, "retries": 2}
    options |= {"backoff": 0.01, "transcript": str(tmp_path / "transcript.jsonl")} | extra
    return LLMAgent(parse_spec(",".join(f"{k}={v}" for k, v in options.items())), seed=1)


def _observation(seed: int = 0, num_players: int = 3) -> dict[str, np.ndarray]:
    env = bourre_env.env(num_players=num_players)
    env.reset(seed=seed)
    obs, *_ = env.last()
    return obs  # type: ignore[no-any-return]


def _lines(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / "transcript.jsonl").read_text().splitlines()]


def _key_in_no_file(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), f"the key is written in {path}"


def test_a_good_reply_is_played_and_transcribed(serve: Callable[..., ScriptedServer], key: str, tmp_path: Path) -> None:
    obs = _observation()
    legal, hand, phase = text.decision(obs)
    server = serve([("answer", "2")])
    agent = _agent(server, tmp_path)
    assert agent.act(obs) == legal[1]
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == f"Bearer {key}"  # the key goes to the server, and nowhere else
    assert request["body"]["model"] == "scripted" and request["body"]["seed"] == 1
    assert text.describe_view(obs) in request["body"]["messages"][1]["content"]
    assert agent.stats.decisions == agent.stats.by_model == 1 and agent.stats.fallbacks == 0
    assert (agent.stats.prompt_tokens, agent.stats.completion_tokens) == (100, 2)
    assert agent.stats.as_dict()["prompt_version"] == "v1" and agent.stats.model == "scripted"
    (line,) = _lines(tmp_path)
    assert line["action"] == legal[1] and line["label"] == text.action_labels(legal, hand, phase)[1]
    assert line["by"] == "model" and line["fallback"] is None and line["replies"] == ["2"]
    assert line["prompt_version"] == "v1" and line["tokens"] == {"prompt": 100, "completion": 2}
    assert line["latency_s"] > 0 and line["messages"][0]["role"] == "system"
    _key_in_no_file(tmp_path)


def test_429_with_retry_after_and_500_are_retried(
    serve: Callable[..., ScriptedServer], key: str, tmp_path: Path
) -> None:
    obs = _observation()
    legal, *_ = text.decision(obs)
    server = serve([("429", 1), ("500",), ("answer", "1")])
    agent = _agent(server, tmp_path)
    start = time.monotonic()
    assert agent.act(obs) == legal[0]
    assert time.monotonic() - start >= 1.0  # the Retry-After was waited out (the back-off alone is 0.01 s)
    assert len(server.requests) == 3
    assert agent.stats.retries == 2 and agent.stats.fallbacks == 0
    assert agent.stats.errors == {"RateLimitError": 1, "InternalServerError": 1}
    (line,) = _lines(tmp_path)
    assert [e.split(":")[0] for e in line["errors"]] == ["RateLimitError", "InternalServerError"]
    _key_in_no_file(tmp_path)


def test_a_slow_reply_times_out_and_is_retried(serve: Callable[..., ScriptedServer], key: str, tmp_path: Path) -> None:
    obs = _observation()
    legal, *_ = text.decision(obs)
    server = serve([("slow", 1.5, "2"), ("answer", "1")])
    agent = _agent(server, tmp_path, timeout=0.3)
    assert agent.act(obs) == legal[0]
    assert agent.stats.errors == {"APITimeoutError": 1} and agent.stats.retries == 1


def test_an_invalid_reply_is_asked_again_with_the_parsers_error(
    serve: Callable[..., ScriptedServer], key: str, tmp_path: Path
) -> None:
    obs = _observation()
    legal, hand, phase = text.decision(obs)
    server = serve([("answer", "I would like to pass, I think"), ("answer", "pass")])
    agent = _agent(server, tmp_path)
    assert agent.act(obs) == 52 and 52 in legal
    reask = server.requests[1]["body"]["messages"]
    assert [m["role"] for m in reask] == ["system", "user", "assistant", "user"]
    assert reask[2]["content"] == "I would like to pass, I think"
    assert "names no legal action" in reask[3]["content"] and "1. pass" in reask[3]["content"]
    assert agent.stats.reasks == 1 and agent.stats.by_model == 1 and agent.stats.fallbacks == 0
    (line,) = _lines(tmp_path)
    assert line["replies"] == ["I would like to pass, I think", "pass"] and len(line["parse_errors"]) == 1
    assert line["label"] == text.action_labels([52], hand, phase)[0] == "pass"


def test_two_invalid_replies_and_a_dead_server_fall_back_and_are_counted(
    serve: Callable[..., ScriptedServer], key: str, tmp_path: Path
) -> None:
    obs = _observation()
    heuristic = agents.make("heuristic", 1).act(obs)
    server = serve([("answer", "banana"), ("answer", "99"), ("500",), ("500",), ("500",), ("garbage",)])
    agent = _agent(server, tmp_path)
    assert agent.act(obs) == heuristic  # two invalid replies
    assert agent.act(obs) == heuristic  # three 500s: the first try and two retries
    assert agent.act(obs) == heuristic  # a reply that is not JSON: not retried, the fallback moves
    s = agent.stats
    assert (s.decisions, s.by_model, s.fallbacks, s.fallback_invalid, s.fallback_error) == (3, 0, 3, 1, 2)
    assert s.retries == 2 and s.reasks == 1
    lines = _lines(tmp_path)
    assert [line["fallback"] for line in lines] == ["invalid", "error", "error"]
    assert all(line["by"] == "fallback" for line in lines)
    _key_in_no_file(tmp_path)


def test_a_whole_deal_is_played_through_the_server(
    serve: Callable[..., ScriptedServer], key: str, tmp_path: Path
) -> None:
    """Every seat an llm agent whose server answers the last legal action by its label."""

    def last_label(prompt: str) -> str:
        return [line for line in prompt.splitlines() if line[:1].isdigit()][-1].split(". ", 1)[1]

    server = serve(policy=last_label)
    env = bourre_env.env(num_players=3)
    env.reset(seed=5)
    table = [_agent(server, tmp_path) for _ in range(3)]
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else table[int(name.split("_")[1])].act(obs))
    assert sum(a.stats.by_model for a in table) == len(_lines(tmp_path)) >= 3
    assert sum(a.stats.fallbacks for a in table) == 0
    _key_in_no_file(tmp_path)


def test_the_error_of_a_401_never_carries_the_key(
    serve: Callable[..., ScriptedServer], key: str, tmp_path: Path
) -> None:
    """A server may echo the key in its error (OpenAI's 401 does, in part): the transcript blanks it."""

    server = serve([("answer", f"Incorrect API key provided: {KEY}"), ("answer", KEY)])
    agent = _agent(server, tmp_path)
    agent.act(_observation())
    assert agent.stats.fallback_invalid == 1
    assert "[key]" in (tmp_path / "transcript.jsonl").read_text()
    _key_in_no_file(tmp_path)


@pytest.mark.parametrize(
    ("variant", "message"),
    [
        (None, "needs a model"),
        ("base_url=http://x", "names no model"),
        ("model=m,key=sk-1", "a key is never given in a spec"),
        ("model=m,api_key=sk-1", "a key is never given in a spec"),
        ("model=m,colour=red", "expected name=value"),
        ("model=m,timeout=soon", "expected a number"),
        ("model=m,retries=99", "retries in 0..20"),
        ("model=m,backoff=nan", "backoff: expected a number in 0..60"),
        ("model=m,timeout=nan", "timeout: expected a number in 0..600"),
        ("model=m,timeout=1e400", "timeout: expected a number"),
        ("model=m,timeout=0", "timeout: expected a number"),
        ("model=m,temperature=nan", "temperature: expected a number in 0..2"),
        ("model=m,temperature=-1", "temperature"),
        ("model=m,max_tokens=0", "max_tokens in 1..100000"),
        ("model=m,key_env=$(echo)", "names an environment variable"),
        ("model=m,prompt=../../etc/passwd", "template version"),
        ("model=m,prompt=v9", "no prompt template"),
    ],
)
def test_bad_specs_are_refused(variant: str | None, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(agents._FACTORIES, "llm", make_llm)
    with pytest.raises(ValueError, match=message):
        agents.make("llm" if variant is None else f"llm:{variant}", 0)


def test_a_named_key_variable_must_be_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BOURRE_UNSET_KEY", raising=False)
    with pytest.raises(ValueError, match="BOURRE_UNSET_KEY .* is not set"):
        make_llm("model=m,key_env=BOURRE_UNSET_KEY", 0)


def test_the_prompt_template_is_versioned() -> None:
    prompt = load_prompt()
    assert prompt.version == "v1" and "{view}" in prompt.user and "{error}" in prompt.reask


def test_bourre_eval_of_an_llm_prints_its_counts_and_writes_its_transcript(
    serve: Callable[..., ScriptedServer], key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``bourre eval --candidate llm:...`` against the scripted server: a normal evaluation, the model's counts with
    its fallbacks (every other reply is junk, so some moves fall to the heuristic), the transcript beside eval.json,
    and the key in no file."""
    from train import cli

    replies = iter(range(10**6))
    server = serve(policy=lambda prompt: "1" if next(replies) % 3 else "no idea")
    spec = f"llm:model=scripted,base_url={server.url},key_env={KEY_ENV},timeout=2,retries=1,backoff=0.01"
    out = tmp_path / "out"
    code = cli.main(
        ["eval", "--candidate", spec, "--field", "heuristic", "--players", "3", "--deals", "2"]
        + ["--workers", "1", "--no-progress", "--out", str(out)]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "Advantage of llm:" in printed.replace("\n", " ") or "llm:model=scripted" in printed
    counts = next(line for line in printed.splitlines() if line.startswith("candidate's own counts at 3 players"))
    assert "model scripted" in counts and "fallbacks" in counts and "prompt tokens" in counts and "reasks" in counts
    report = json.loads((out / "eval.json").read_text())
    stats = report["tables"][0]["agent_stats"]
    assert stats["decisions"] == stats["by_model"] + stats["fallbacks"] > 0
    transcript = (out / "llm_transcript.jsonl").read_text().splitlines()
    assert len(transcript) >= stats["decisions"] - stats["fallback_error"]
    _key_in_no_file(tmp_path)


def test_the_evaluations_bar_shows_moves_per_second_tokens_and_fallbacks(
    serve: Callable[..., ScriptedServer], key: str, tmp_path: Path
) -> None:
    """The bar of ``bourre eval --candidate llm:...`` notes the model's moves, their rate, its tokens and
    fallbacks as the deals go (here on a bar of the test's own, which ``evaluate`` moves)."""
    from tqdm import tqdm

    from train.eval.duplicate import evaluate

    replies = iter(range(10**6))
    server = serve(policy=lambda prompt: "1" if next(replies) % 3 else "no idea")
    spec = f"llm:model=scripted,base_url={server.url},key_env={KEY_ENV},timeout=2,retries=1,backoff=0.01"
    notes: list[str] = []

    class Bar(tqdm):  # type: ignore[type-arg]  # tqdm is generic in its stubs only
        def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
            notes.append(s)
            super().set_postfix_str(s, refresh)

    with Bar(total=2, disable=True) as bar:
        report = evaluate(spec, "heuristic", players=3, deals=2, seed=0, workers=1, bar=bar)
    stats = report.tables[0].agent_stats
    assert stats is not None and len(notes) == 3  # one per deal, and the job's result
    moves, tokens = stats["decisions"], stats["prompt_tokens"] + stats["completion_tokens"]
    assert notes[-1].startswith(f"{moves:,} moves (") and "/s)" in notes[-1]
    assert f"{tokens:,} tokens" in notes[-1]
    assert ("fallbacks" in notes[-1]) == (stats["fallbacks"] > 0)


def test_the_transcript_goes_where_the_spec_says_else_beside_the_output(tmp_path: Path) -> None:
    from train.eval_command import llm_transcript

    named = tmp_path / "mine.jsonl"
    assert llm_transcript(f"llm:model=m,transcript={named}", tmp_path / "out") == named
    assert llm_transcript("llm:model=m", tmp_path / "out") == tmp_path / "out" / "llm_transcript.jsonl"
    assert llm_transcript("heuristic", tmp_path / "out") is None
