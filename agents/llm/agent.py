"""``LLMAgent``: a seat played by a language model behind any chat-completions server.

The spec is ``llm:model=NAME,base_url=URL,key_env=VAR,timeout=S,retries=N,fallback=SPEC`` (every option after
``model`` may be left out). Each move:

1. the seat's view in words (``bourre_env.text.describe_view``) goes into the prompt template (``prompts/v1.txt``);
2. the request is sent through the official ``openai`` client, which speaks to OpenAI and to servers with the same
   API (vLLM, Ollama, llama.cpp's server). A rate limit (429), a server error (5xx), a time-out or a lost connection
   is retried up to ``retries`` times, waiting what the server's ``Retry-After`` asks (at most ``MAX_WAIT``) or else
   ``backoff`` seconds doubled at each try;
3. the reply is parsed strictly (``bourre_env.text.parse_reply``); an invalid reply is asked again once, with the
   parser's error;
4. a move the model could not make (the server failing past the retries, or two invalid replies) is made by the
   fallback agent (the heuristic by default), and counted in ``stats``.

The API key is read from the environment variable that ``key_env`` names (``OPENAI_API_KEY`` by default), never
from a spec or a file; it is never logged, and every text the agent writes (the transcript) has it blanked out.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from agents.base import Agent, Observation
from bourre_env import text

__all__ = ["LLMAgent", "LLMOptions", "LLMStats", "Prompt", "load_prompt", "parse_spec", "make_llm", "PROMPT_VERSION"]

PROMPT_VERSION = "v1"
"""The prompt template the agent uses unless told otherwise (``prompt=``): ``agents/llm/prompts/<version>.txt``."""
MAX_WAIT = 60.0
"""The longest wait, in seconds, before a retry, whatever a server's ``Retry-After`` asks."""
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
_REDACTED = "[key]"
_KEY_WORDS = ("key", "api_key", "apikey", "token", "secret", "password")


@dataclass(frozen=True)
class LLMOptions:
    """The options of an ``llm:`` spec."""

    model: str
    base_url: str | None = None
    """The server (``http://127.0.0.1:11434/v1`` for Ollama); ``None``: the ``openai`` library's default (OpenAI)."""
    key_env: str = DEFAULT_KEY_ENV
    """The environment variable that holds the API key; a local server that wants none may leave it unset."""
    timeout: float = 30.0
    """Seconds one request may take before it counts as failed (and is retried)."""
    retries: int = 3
    """Retries of one request after a rate limit, a server error, a time-out or a lost connection."""
    backoff: float = 1.0
    """Seconds before the first retry without a ``Retry-After``, doubled at each retry."""
    fallback: str = "heuristic"
    """The agent (an ``agents.make`` spec without commas) that makes a move the model could not."""
    temperature: float = 0.0
    max_tokens: int = 256
    prompt: str = PROMPT_VERSION
    transcript: str | None = None
    """A JSON-lines file that every decision is appended to (``write_transcript_to`` sets it too)."""


_INTS = {"retries", "max_tokens"}
_FLOATS = {"timeout", "backoff", "temperature"}


def parse_spec(variant: str | None) -> LLMOptions:
    """The options of an ``llm:`` spec's variant (``model=NAME,base_url=URL,...``); ``ValueError`` naming a bad one. A
    key in the spec is refused: the key is only read from the environment variable ``key_env`` names."""
    if not variant or not variant.strip():
        raise ValueError("the llm agent needs a model: llm:model=NAME[,base_url=URL,key_env=VAR,...]")
    names = {f.name for f in LLMOptions.__dataclass_fields__.values()}
    given: dict[str, Any] = {}
    for item in variant.split(","):
        name, eq, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if name.lower() in _KEY_WORDS:
            raise ValueError(
                f"llm: a key is never given in a spec ({name}=...); put it in an environment variable and name the "
                f"variable with key_env=VAR (default {DEFAULT_KEY_ENV})"
            )
        if not eq or name not in names or not value:
            raise ValueError(f"llm: expected name=value with a name among {sorted(names)}, got {item.strip()!r}")
        if name in given:
            raise ValueError(f"llm: option {name} given twice")
        try:
            given[name] = int(value) if name in _INTS else float(value) if name in _FLOATS else value
        except ValueError:
            raise ValueError(f"llm: option {name}: expected a number, got {value!r}") from None
    if "model" not in given:
        raise ValueError("llm: the spec names no model (model=NAME)")
    options = LLMOptions(**given)
    if options.timeout <= 0 or options.backoff < 0 or not 0 <= options.retries <= 20 or options.max_tokens < 1:
        raise ValueError("llm: expected timeout > 0, backoff >= 0, retries in 0..20 and max_tokens >= 1")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", options.key_env):
        raise ValueError(f"llm: key_env names an environment variable, got {options.key_env!r}")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", options.prompt):
        raise ValueError(f"llm: prompt is a template version such as {PROMPT_VERSION}, got {options.prompt!r}")
    return options


@dataclass(frozen=True)
class Prompt:
    """A prompt template: the system message, the user message (with ``{view}``) and the re-ask (with ``{error}``)."""

    version: str
    system: str
    user: str
    reask: str


def load_prompt(version: str = PROMPT_VERSION) -> Prompt:
    """The template ``agents/llm/prompts/<version>.txt``: the system text, then ``--- user ---`` and the user text,
    then ``--- re-ask ---`` and the re-ask."""
    path = resources.files("agents.llm") / "prompts" / f"{version}.txt"
    if not path.is_file():
        raise ValueError(f"llm: no prompt template {version!r} (agents/llm/prompts/{version}.txt)")
    whole = path.read_text(encoding="utf-8")
    system, _, rest = whole.partition("\n--- user ---\n")
    user, _, reask = rest.partition("\n--- re-ask ---\n")
    if "{view}" not in user or "{error}" not in reask:
        raise ValueError(
            f"llm: prompt {version}: expected '--- user ---' with {{view}} and '--- re-ask ---' with {{error}}"
        )
    return Prompt(version, system.strip(), user.strip(), reask.strip())


@dataclass
class LLMStats:
    """What the agent counted: decisions, the model's own moves, fallbacks by cause, retries, re-asks, tokens; with the
    model and the prompt's version, which a report names beside them."""

    model: str = ""
    prompt_version: str = ""
    decisions: int = 0
    by_model: int = 0
    fallbacks: int = 0
    fallback_invalid: int = 0
    """Moves made by the fallback after two invalid replies."""
    fallback_error: int = 0
    """Moves made by the fallback after the server failed past the retries."""
    retries: int = 0
    reasks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class _RequestFailedError(Exception):
    """A request that failed past its retries."""


class LLMAgent:
    """An agent whose moves a chat-completions model makes (see the module's docstring)."""

    def __init__(self, options: LLMOptions, seed: int | None = 0, fallback: Agent | None = None) -> None:
        try:
            import openai
        except ImportError:
            raise ValueError("the llm agent needs the openai library: pip install -e '.[llm]'") from None
        import agents

        self.options = options
        self.seed = seed
        self.prompt = load_prompt(options.prompt)
        self.name = f"llm:{options.model}"
        self._key = os.environ.get(options.key_env) or ""
        if not self._key and options.key_env != DEFAULT_KEY_ENV:
            raise ValueError(f"llm: the environment variable {options.key_env} (key_env) is not set")
        self._openai = openai
        self._omit: Any = getattr(openai, "omit", openai.NOT_GIVEN)  # "send nothing": omit since 2.x, NOT_GIVEN before
        # the library's own retries are off: this agent counts its retries and honours Retry-After itself
        self._client = openai.OpenAI(
            api_key=self._key or "no-key", base_url=options.base_url, timeout=options.timeout, max_retries=0
        )
        self.fallback = fallback if fallback is not None else agents.make(options.fallback, seed)
        self.stats = LLMStats(model=options.model, prompt_version=self.prompt.version)
        self._lock = threading.Lock()
        self._transcript: Path | None = None
        if options.transcript:
            self.write_transcript_to(options.transcript)

    def write_transcript_to(self, path: str | os.PathLike[str]) -> None:
        """Append every later decision to ``path`` as one JSON line (the file's folder is created)."""
        self._transcript = Path(path)
        self._transcript.parent.mkdir(parents=True, exist_ok=True)

    def reset(self) -> None:
        self.fallback.reset()

    # ------------------------------------------------------------------ one request
    def _wait(self, err: Exception, attempt: int) -> float:
        """Seconds to wait before retry ``attempt`` (1 first): the server's Retry-After, else the doubling back-off."""
        response = getattr(err, "response", None)
        header = response.headers.get("retry-after") if response is not None else None
        if header is not None:
            try:
                return min(max(float(header), 0.0), MAX_WAIT)
            except ValueError:
                pass  # an HTTP date: rare from these servers; the back-off below is as good
        return min(self.options.backoff * 2 ** (attempt - 1), MAX_WAIT)

    def _complete(self, messages: list[dict[str, str]], record: dict[str, Any]) -> str:
        """One reply's text, retrying what may pass (rate limits, server errors, time-outs, lost connections)."""
        o = self._openai
        retryable = (o.RateLimitError, o.InternalServerError, o.APITimeoutError, o.APIConnectionError)
        for attempt in range(self.options.retries + 1):
            start = time.monotonic()
            try:
                response = self._client.chat.completions.create(
                    model=self.options.model,
                    messages=messages,  # type: ignore[arg-type]
                    temperature=self.options.temperature,
                    max_tokens=self.options.max_tokens,
                    # the agent's seed, for the servers that sample reproducibly with one; none sent without it
                    seed=self.seed if self.seed is not None else self._omit,
                )
            except retryable as err:
                self._error(record, err, time.monotonic() - start)
                if attempt == self.options.retries:
                    raise _RequestFailedError(type(err).__name__) from None
                with self._lock:
                    self.stats.retries += 1
                time.sleep(self._wait(err, attempt + 1))
                continue
            except Exception as err:  # noqa: BLE001
                # what a retry will not mend (401, 404, a body that is not JSON): the fallback moves, and the cause
                # is counted in stats.errors and written in the transcript, rather than the game stopping
                self._error(record, err, time.monotonic() - start)
                raise _RequestFailedError(type(err).__name__) from None
            latency = time.monotonic() - start
            usage = response.usage
            prompt_tokens = usage.prompt_tokens if usage else 0
            completion_tokens = usage.completion_tokens if usage else 0
            with self._lock:
                self.stats.prompt_tokens += prompt_tokens
                self.stats.completion_tokens += completion_tokens
                self.stats.latency_s += latency
            record["tokens"]["prompt"] += prompt_tokens
            record["tokens"]["completion"] += completion_tokens
            record["latency_s"] += latency
            content = response.choices[0].message.content if response.choices else None
            record["replies"].append(content)
            return content or ""
        raise AssertionError("unreachable")  # the loop returns or raises

    def _error(self, record: dict[str, Any], err: Exception, latency: float) -> None:
        kind = type(err).__name__
        record["errors"].append(f"{kind}: {self._redact(str(err))[:300]}")
        record["latency_s"] += latency
        with self._lock:
            self.stats.errors[kind] = self.stats.errors.get(kind, 0) + 1

    def _redact(self, line: str) -> str:
        return line.replace(self._key, _REDACTED) if len(self._key) >= 4 else line

    # ------------------------------------------------------------------ one move
    def act(self, observation: Observation) -> int:
        legal, hand, phase = text.decision(observation)
        if not legal:
            raise ValueError("the action mask allows no action: this observation is not a decision")
        messages = [
            {"role": "system", "content": self.prompt.system},
            {"role": "user", "content": self.prompt.user.format(view=text.describe_view(observation))},
        ]
        record: dict[str, Any] = {
            "time": time.time(),
            "model": self.options.model,
            "prompt_version": self.prompt.version,
            "messages": messages,
            "replies": [],
            "errors": [],
            "latency_s": 0.0,
            "tokens": {"prompt": 0, "completion": 0},
        }
        action, cause = self._ask(messages, record, legal, hand, phase)
        if action is None:
            action = int(self.fallback.act(observation))
        with self._lock:
            self.stats.decisions += 1
            if cause is None:
                self.stats.by_model += 1
            else:
                self.stats.fallbacks += 1
                if cause == "invalid":
                    self.stats.fallback_invalid += 1
                else:
                    self.stats.fallback_error += 1
        record.update(
            action=action,
            label=text.action_labels([action], hand, phase)[0],
            by="model" if cause is None else "fallback",
        )
        record["fallback"] = cause
        self._write(record)
        return action

    def _ask(
        self, messages: list[dict[str, str]], record: dict[str, Any], legal: list[int], hand: list[int], phase: int
    ) -> tuple[int | None, str | None]:
        """(the model's action, None), or (None, why the fallback moves: "invalid" or "error")."""
        try:
            reply = self._complete(messages, record)
            try:
                return text.parse_reply(reply, legal, hand, phase), None
            except ValueError as err:
                record["parse_errors"] = [str(err)]
            with self._lock:
                self.stats.reasks += 1
            messages = [
                *messages,
                {"role": "assistant", "content": reply},
                {"role": "user", "content": self.prompt.reask.format(error=record["parse_errors"][0])},
            ]
            record["messages"] = messages
            reply = self._complete(messages, record)
            try:
                return text.parse_reply(reply, legal, hand, phase), None
            except ValueError as err:
                record["parse_errors"].append(str(err))
                return None, "invalid"
        except _RequestFailedError:
            return None, "error"

    def _write(self, record: dict[str, Any]) -> None:
        if self._transcript is None:
            return
        line = (self._redact(json.dumps(record, ensure_ascii=False)) + "\n").encode("utf-8")
        # one write() of the whole line to a file opened for appending: the lines of several agents, threads or
        # worker processes sharing the file (bourre eval --workers) do not interleave on a local file system
        with self._lock:
            fd = os.open(self._transcript, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)


def make_llm(variant: str | None, seed: int | None) -> Agent:
    """The ``agents.register`` factory of ``llm:model=NAME,...`` (see ``parse_spec``)."""
    return LLMAgent(parse_spec(variant), seed)
