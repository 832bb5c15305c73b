"""What a chat-completions server may send the llm agent (``agents.llm``), however malformed, and where its key may
go: every bad reply (any JSON shape, any content type, bytes that are not UTF-8, cut or empty or huge bodies,
compressed bombs, slow drips, a ``Retry-After`` of any value) is a counted fallback, never an exception, and
``bourre eval`` goes on to exit 0; a reply is read up to ``MAX_REPLY_BYTES`` and stored once in the transcript; the
key, of any characters a header can carry, reaches no file or output in any form; and docs/llm.md's demo runs as
written."""

from __future__ import annotations

import gzip
import html
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import urllib.parse
from collections.abc import Callable, Iterator
from email.utils import formatdate
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("openai")

from scripted_chat_server import DEMO_PORT, ScriptedServer, Step  # noqa: E402

import agents  # noqa: E402  (after the skip: the llm extra may be missing)
import bourre_env  # noqa: E402
from agents.llm import LLMAgent, parse_spec  # noqa: E402
from agents.llm import agent as llm_agent  # noqa: E402
from bourre_env import text  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
KEY_ENV = "BOURRE_TEST_LLM_KEY"
GOOD = {
    "id": "chatcmpl-test",
    "object": "chat.completion",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "1"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 100, "completion_tokens": 2, "total_tokens": 102},
}
GOOD_BYTES = json.dumps(GOOD).encode()
BIG = 2 << 20  # twice the cap


def _with(**fields: Any) -> dict[str, Any]:
    return {**GOOD, **fields}


def _message(message: Any) -> dict[str, Any]:
    return _with(choices=[{"index": 0, "message": message, "finish_reason": "stop"}])


def _usage(**counts: Any) -> dict[str, Any]:
    return _with(usage={"prompt_tokens": 100, "completion_tokens": 2} | counts)


# every kind of reply no retry mends; (step, how many times the server sends it): twice for what is retried
MALFORMED: dict[str, Step] = {
    "text/plain body": ("raw", 200, GOOD_BYTES, {"Content-Type": "text/plain"}),
    "text/plain prose": ("raw", 200, b"1", {"Content-Type": "text/plain; charset=utf-8"}),
    "html page": ("raw", 200, b"<html><body>Bad gateway</body></html>", {"Content-Type": "text/html"}),
    "no content type": ("raw", 200, GOOD_BYTES, {"Content-Type": None}),
    "choices a string": ("json", _with(choices="1")),
    "choices null": ("json", _with(choices=None)),
    "choices missing": ("json", {"usage": GOOD["usage"]}),
    "choices empty": ("json", _with(choices=[])),
    "choices of strings": ("json", _with(choices=["1"])),
    "choice without message": ("json", _with(choices=[{"index": 0}])),
    "null message": ("json", _message(None)),
    "message a string": ("json", _message("1")),
    "message a list": ("json", _message([{"content": "1"}])),
    "content a number": ("json", _message({"role": "assistant", "content": 1})),
    "content a list": ("json", _message({"role": "assistant", "content": [{"type": "text", "text": "1"}]})),
    "content an object": ("json", _message({"role": "assistant", "content": {"text": "1"}})),
    "usage of strings": ("json", _usage(prompt_tokens="100", completion_tokens="2")),
    "usage a string": ("json", _with(usage="102 tokens")),
    "usage a list": ("json", _with(usage=[100, 2])),
    "usage negative": ("json", _usage(completion_tokens=-2)),
    "usage a fraction": ("json", _usage(prompt_tokens=1.5)),
    "usage a boolean": ("json", _usage(prompt_tokens=True)),
    "usage huge": ("json", _usage(prompt_tokens=10**30)),
    "usage NaN": ("raw", 200, GOOD_BYTES.replace(b'"prompt_tokens": 100', b'"prompt_tokens": NaN')),
    "usage of 5,000 digits": ("raw", 200, GOOD_BYTES.replace(b": 100", b": " + b"9" * 5000)),
    "a list": ("json", [GOOD]),
    "a string": ("json", "1"),
    "a number": ("json", 1),
    "null": ("json", None),
    "true": ("json", True),
    "an error with status 200": ("json", {"error": {"message": "overloaded", "type": "server_error"}}),
    "not UTF-8": ("raw", 200, b'{"choices": [{"message": {"content": "\xff\xfe1"}}]}'),
    "latin-1 text": ("raw", 200, json.dumps(_message({"content": "d\xe9j\xe0"}), ensure_ascii=False).encode("latin-1")),
    "UTF-16": ("raw", 200, json.dumps(GOOD).encode("utf-16")),
    "UTF-8 with a BOM": ("raw", 200, b"\xef\xbb\xbf" + GOOD_BYTES),
    "a lone surrogate": ("raw", 200, b'{"choices": [{"message": {"content": "\\ud800"}}]}'),
    "cut JSON": ("raw", 200, GOOD_BYTES[:40]),
    "cut body, the connection closed early": ("raw", 200, GOOD_BYTES[:40], {"Content-Length": str(len(GOOD_BYTES))}),
    "cut body without a length": ("raw", 200, GOOD_BYTES[:40], {"Content-Length": None}),
    "empty body": ("raw", 200, b""),
    "empty body without a length": ("raw", 200, b"", {"Content-Length": None}),
    "204 no content": ("raw", 204, b"", {"Content-Length": None}),
    "nested 100,000 deep": ("raw", 200, b"[" * 100_000 + b"]" * 100_000),
    "2 MiB reply": ("json", _message({"role": "assistant", "content": "1" + " " * BIG})),
    "2 MiB reply without a length": ("raw", 200, b" " * BIG + GOOD_BYTES, {"Content-Length": None}),
    "a length of 10**17 bytes": ("raw", 200, GOOD_BYTES, {"Content-Length": str(10**17)}),
    "gzip bomb": ("raw", 200, gzip.compress(b" " * (32 << 20), 9), {"Content-Encoding": "gzip"}),
    "gzip that is not": ("raw", 200, b"not gzip at all", {"Content-Encoding": "gzip"}),
    "gzip cut short": ("raw", 200, gzip.compress(GOOD_BYTES)[:30], {"Content-Encoding": "gzip"}),
    "an encoding not asked for": ("raw", 200, GOOD_BYTES, {"Content-Encoding": "br"}),
    "401 in text": ("raw", 401, b"no", {"Content-Type": "text/plain"}),
    "404 page": ("raw", 404, b"<h1>Not Found</h1>", {"Content-Type": "text/html"}),
    "400 not UTF-8": ("raw", 400, b"\xff\xfe\xfd", {"Content-Type": "text/plain"}),
    "500 of 2 MiB": ("raw", 500, b"x" * BIG, {"Content-Type": "text/plain"}),
    "429 of 2 MiB without a length": ("raw", 429, b"x" * BIG, {"Content-Length": None, "Retry-After": "0"}),
    "a slow drip": ("drip", 0.05, 10_000),
}


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789abcdefSECRET")
    return "sk-test-0123456789abcdefSECRET"


@pytest.fixture
def serve() -> Iterator[Callable[..., ScriptedServer]]:
    started: list[ScriptedServer] = []

    def start(script: list[Step] | None = None, policy: Callable[[str], str] | None = None) -> ScriptedServer:
        started.append(ScriptedServer(script, policy))
        return started[-1]

    yield start
    for server in started:
        server.close()


def _spec(server: ScriptedServer, tmp_path: Path, **extra: Any) -> str:
    options = {"model": "scripted", "base_url": server.url, "key_env": KEY_ENV, "timeout": 0.5, "retries": 1}
    options |= {"backoff": 0.01, "transcript": str(tmp_path / "transcript.jsonl")} | extra
    return ",".join(f"{k}={v}" for k, v in options.items())


def _agent(server: ScriptedServer, tmp_path: Path, **extra: Any) -> LLMAgent:
    return LLMAgent(parse_spec(_spec(server, tmp_path, **extra)), seed=1)


def _observation(seed: int = 0) -> dict[str, np.ndarray]:
    env = bourre_env.env(num_players=3)
    env.reset(seed=seed)
    obs, *_ = env.last()
    return obs  # type: ignore[no-any-return]


def _lines(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / "transcript.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("name", list(MALFORMED))
def test_every_malformed_reply_is_a_counted_fallback(
    name: str, serve: Callable[..., ScriptedServer], key: str, tmp_path: Path
) -> None:
    obs = _observation()
    server = serve([MALFORMED[name]] * 2)  # the first try and its one retry, for what is retried
    agent = _agent(server, tmp_path)
    assert agent.act(obs) == agents.make("heuristic", 1).act(obs)
    s = agent.stats
    assert (s.decisions, s.by_model, s.fallbacks, s.fallback_error) == (1, 0, 1, 1), s
    assert s.prompt_tokens == 0  # nothing is taken from a reply that is not read whole
    if "2 MiB" in name or "bomb" in name or "10**17" in name:
        assert set(s.errors) == {"ReplyTooLargeError"}  # read no further than the cap
    if "drip" in name:
        assert s.errors == {"SlowReplyError": 2}  # cut at the time-out in all, and retried once
    (line,) = _lines(tmp_path)
    assert line["by"] == "fallback" and line["fallback"] == "error" and line["replies"] == []
    assert line["errors"] and all(len(error) <= 400 and "\n" not in error for error in line["errors"])
    assert len(json.dumps(line)) < 64 << 10  # a huge reply leaves no trace of its size in the transcript


def test_a_compressed_reply_under_the_cap_is_read(
    serve: Callable[..., ScriptedServer], key: str, tmp_path: Path
) -> None:
    """A server may compress a reply though asked for none: read, decompressed, up to the cap."""
    obs = _observation()
    legal, *_ = text.decision(obs)
    server = serve([("raw", 200, gzip.compress(GOOD_BYTES), {"Content-Encoding": "gzip"})])
    agent = _agent(server, tmp_path)
    assert agent.act(obs) == legal[0] and agent.stats.by_model == 1
    assert server.requests[0]["headers"]["accept-encoding"] == "identity"


def test_a_reply_just_under_the_cap_is_played(serve: Callable[..., ScriptedServer], key: str, tmp_path: Path) -> None:
    obs = _observation()
    legal, *_ = text.decision(obs)
    padded = _message({"role": "assistant", "content": "1"})
    padded["padding"] = " " * (llm_agent.MAX_REPLY_BYTES - len(json.dumps(padded)) - 20)
    server = serve([("json", padded)])
    assert _agent(server, tmp_path).act(obs) == legal[0]


@pytest.mark.parametrize(
    "retry_after",
    [
        "nan",
        "NaN",
        "inf",
        "-inf",
        "-5",
        "1e400",
        "99999999999999999999",
        "0x10",
        "soon",
        "",
        "1, 2",
        "5 s",
        "Wed, 21 Oct 2015 07:28:00 GMT",
        "Fri, 31 Dec 9999 23:59:59 GMT",
        "Wed, 21 Oct 2015 07:28:00",
        "Mon, 99 Foo",
    ],
)
def test_any_retry_after_is_waited_within_bounds_then_retried(
    retry_after: str, serve: Callable[..., ScriptedServer], key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(llm_agent, "MAX_WAIT", 0.05)  # the longest wait, in this test: a far date waits this
    obs = _observation()
    legal, *_ = text.decision(obs)
    server = serve([("429", retry_after), ("answer", "1")])
    agent = _agent(server, tmp_path)
    assert agent.act(obs) == legal[0]
    assert agent.stats.retries == 1 and agent.stats.by_model == 1 and agent.stats.errors == {"RateLimitError": 1}


NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (None, None),
        ("5", 5.0),
        (" 2.5 ", 2.5),
        ("0", 0.0),
        ("120", 60.0),
        ("999999999", 60.0),
        (formatdate(NOW + 30, usegmt=True), 30.0),
        (formatdate(NOW - 3600, usegmt=True), 0.0),
        ("Fri, 31 Dec 9999 23:59:59 GMT", 60.0),
        ("nan", None),
        ("inf", None),
        ("-1", None),
        ("1e400", None),
        ("1" * 40, None),
        ("\u0661\u0662", None),  # digits, but not ASCII ones
        ("soon", None),
        ("", None),
        ("Wed, 21 Oct 2015 07:28:00", None),  # a date in no zone
    ],
)
def test_retry_after_seconds(value: str | None, seconds: float | None) -> None:
    assert llm_agent.retry_after_seconds(value, now=NOW) == seconds


def test_each_reply_is_stored_once(serve: Callable[..., ScriptedServer], key: str, tmp_path: Path) -> None:
    """A re-asked decision's transcript line holds each reply once: the replies, not the conversation that repeats
    them (the marks lie past the 80 characters that the parser's error quotes)."""
    first, second = "x" * 100 + "FIRST-REPLY-MARK", "y" * 100 + "SECOND-REPLY-MARK"
    big = "z" * 700_000  # invalid: asked again, and stored once
    server = serve([("answer", first), ("answer", second), ("answer", big), ("answer", "1")])
    agent = _agent(server, tmp_path)
    agent.act(_observation())
    agent.act(_observation())
    assert agent.stats.fallback_invalid == 1 and agent.stats.reasks == 2 and agent.stats.by_model == 1
    assert server.requests[1]["body"]["messages"][2] == {"role": "assistant", "content": first}  # it was sent back
    written = (tmp_path / "transcript.jsonl").read_text()
    assert written.count("FIRST-REPLY-MARK") == 1 and written.count("SECOND-REPLY-MARK") == 1
    assert big in written and len(written) < len(big) + 64_000
    first_line, second_line = _lines(tmp_path)
    assert first_line["replies"] == [first, second] and len(first_line["parse_errors"]) == 2
    assert [m["role"] for m in first_line["messages"]] == ["system", "user"]  # the first request's messages


def test_bourre_eval_against_a_server_of_malformed_replies_exits_0(
    serve: Callable[..., ScriptedServer], key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from train import cli

    quick = [step for name, step in MALFORMED.items() if step[0] != "drip" and "2 MiB" not in name]
    server = serve(quick * 20)
    out = tmp_path / "out"
    code = cli.main(
        ["eval", "--candidate", "llm:" + _spec(server, tmp_path), "--field", "heuristic", "--players", "3"]
        + ["--deals", "1", "--workers", "1", "--no-progress", "--out", str(out)]
    )
    assert code == 0, capsys.readouterr()
    stats = json.loads((out / "eval.json").read_text())["tables"][0]["agent_stats"]
    assert stats["decisions"] == stats["fallbacks"] == stats["fallback_error"] > 0 and stats["by_model"] == 0


# ---------------------------------------------------------------------------------------------------- the key
KEYS = {
    "double quotes": 'sk-"quoted"-0123456789',
    "backslashes": "sk-back\\slash\\0123456789",
    "single quotes": "sk-'single'-0123456789",
    "spaces": "sk with inner spaces 0123",
    "tabs": "sk\twith\ttabs-0123",
    "percent": "sk-100%25%-0123%2",
    "plus": "sk+plus+0123456789",
    "slashes and equals": "sk/slash/0123456789==",
    "markup": "sk-<b>&amp;-0123456789",
    "all at once": "a\"b\\c'd %e+f/g=h\ti<j>&k",
    "an escape sequence's look": "sk-\\u0041\\n\\x41-0123",
}


def _key_forms(key: str) -> list[str]:
    """The forms a key may be written in, derived here apart from the agent's own list."""
    forms = [key, json.dumps(key)[1:-1], repr(key)[1:-1], repr(key.encode())[2:-1], repr(key + "'\"")[1:-4]]
    forms += [urllib.parse.quote(key, safe=""), urllib.parse.quote(key), urllib.parse.quote_plus(key)]
    forms += [html.escape(key), html.escape(key, quote=False), json.dumps(json.dumps(key))[3:-3]]
    return forms


def _no_key_form_in(key: str, written: str, where: str) -> None:
    for form in _key_forms(key):
        assert form not in written, f"the key, as {form!r}, is written in {where}"


def _key_in_nothing_written(key: str, root: Path, *outputs: str) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            written = path.read_bytes().decode("utf-8", "replace")
            _no_key_form_in(key, written, str(path))
            if path.suffix in (".jsonl", ".json"):
                lines = written.splitlines() if path.suffix == ".jsonl" else [written]
                decoded = [json.loads(line) for line in lines if line.strip()]
                _no_key_form_in(key, repr(decoded), f"the JSON of {path}, decoded")
    for output in outputs:
        _no_key_form_in(key, output, "the output")


def _echoes(key: str) -> list[Step]:
    """A server that repeats the key in every way it may: in its errors' JSON and text, and in the model's replies,
    raw and encoded, whole and past the parser's 80 characters."""
    encoded = f"{urllib.parse.quote(key, safe='')} {urllib.parse.quote_plus(key)} {json.dumps(key)} {html.escape(key)}"
    return [
        ("raw", 401, json.dumps({"error": {"message": f"Incorrect API key provided: {key}"}}).encode()),
        ("raw", 400, f"bad key {key} {encoded}".encode(), {"Content-Type": "text/plain"}),
        ("answer", f"my key is {key}"),
        ("answer", encoded),
        ("answer", "x" * 70 + key),
        ("answer", repr({"key": key})),
        ("raw", 500, f"<p>{html.escape(key)}</p>".encode(), {"Content-Type": "text/html"}),
        ("raw", 500, f"{key}".encode(), {"Content-Type": "text/plain"}),
    ]


@pytest.mark.parametrize("name", list(KEYS))
def test_a_key_of_any_characters_is_sent_and_blanked_in_every_form(
    name: str, serve: Callable[..., ScriptedServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = KEYS[name]
    monkeypatch.setenv(KEY_ENV, key)
    server = serve(_echoes(key))
    agent = _agent(server, tmp_path)
    for _ in range(5):
        agent.act(_observation())
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {key}"  # the key goes to the server as it is
    assert agent.stats.fallbacks == 5 and "[key]" in (tmp_path / "transcript.jsonl").read_text()
    _key_in_nothing_written(key, tmp_path)


def test_bourre_eval_writes_the_key_nowhere(
    serve: Callable[..., ScriptedServer],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from train import cli

    key = KEYS["all at once"]
    monkeypatch.setenv(KEY_ENV, key)
    server = serve(_echoes(key) * 3, policy=lambda _prompt: f"1 {key}")
    out = tmp_path / "out"
    code = cli.main(
        ["eval", "--candidate", "llm:" + _spec(server, tmp_path, transcript=str(out / "t.jsonl")), "--field"]
        + ["heuristic", "--players", "3", "--deals", "1", "--workers", "1", "--no-progress", "--out", str(out)]
    )
    printed = capsys.readouterr()
    assert code == 0, printed
    assert (out / "t.jsonl").stat().st_size > 0
    _key_in_nothing_written(key, tmp_path, printed.out, printed.err)


@pytest.mark.parametrize(
    "key",
    [
        "sk-caf\u00e9-0123456789",
        "sk-\u2603-0123456789",
        "sk-line\n-0123456789",
        "sk-cr\r-0123456789",
        "sk-bell\x07-0123456789",
        "sk-del\x7f-0123456789",
        " sk-leading-space-0123",
        "sk-trailing-tab-0123\t",
    ],
)
def test_a_key_no_header_can_carry_is_refused_in_one_line(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, key)  # (an environment variable cannot hold NUL, so no key holds one)
    with pytest.raises(ValueError) as refused:
        LLMAgent(parse_spec(f"model=m,base_url=http://127.0.0.1:9/v1,key_env={KEY_ENV}"), seed=0)
    message = str(refused.value)
    assert "cannot be sent in an HTTP header" in message and KEY_ENV in message and "\n" not in message
    _no_key_form_in(key, message, "the error")


# ---------------------------------------------------------------------------------------------------- the demo
def _demo_commands() -> tuple[str, str]:
    """docs/llm.md's demo: the server's command and the evaluation's (a bash block, lines joined)."""
    page = (ROOT / "docs" / "llm.md").read_text()
    section = page.split("## The scripted test server", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "docs/llm.md's demo has no bash block"
    lines = block.group(1).replace("\\\n", " ").splitlines()
    server = next(line for line in lines if "scripted_chat_server.py" in line)
    evaluation = "\n".join(line for line in lines if "scripted_chat_server.py" not in line)
    return server.split("#", 1)[0].strip().rstrip("&").strip(), evaluation


def test_the_demo_server_and_the_arena_take_different_ports() -> None:
    from train.arena.command import DEFAULT_PORT

    server, evaluation = _demo_commands()
    assert DEMO_PORT != DEFAULT_PORT
    assert f"http://127.0.0.1:{DEMO_PORT}/v1" in evaluation and "--port" not in server


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_docs_demo_runs_as_written(tmp_path: Path) -> None:
    """docs/llm.md's demo, its commands as the page writes them (but for a free port and a fresh folder), in an
    environment where no key variable is set: the page's commands set what they need."""
    server_command, evaluation = _demo_commands()
    port = _free_port()
    evaluation = evaluation.replace(f":{DEMO_PORT}/", f":{port}/").replace("/tmp/llm_demo", str(tmp_path / "demo"))
    bin_dir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if k not in ("DEMO_KEY", "OPENAI_API_KEY")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    if shutil.which("bourre", path=env["PATH"]) is None:  # the package not installed: its module is the command
        evaluation = re.sub(r"(^|\s)bourre ", rf"\1{sys.executable} -m train.cli ", evaluation)
    argv = shlex.split(server_command)
    assert argv[0] == "python", server_command
    server = subprocess.Popen(
        [sys.executable, *argv[1:], "--port", str(port)], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None and "serving chat completions" in server.stdout.readline()
        done = subprocess.run(
            ["bash", "-ec", evaluation], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "candidate's own counts at 3 players" in done.stdout and "fallbacks 0" in done.stdout
    transcript = (tmp_path / "demo" / "transcript.jsonl").read_text().splitlines()
    assert len(transcript) == 24 and (tmp_path / "demo" / "out" / "eval.json").is_file()
