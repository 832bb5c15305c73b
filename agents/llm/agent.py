"""``LLMAgent``: a seat played by a language model behind any chat-completions server.

The spec is ``llm:model=NAME,base_url=URL,key_env=VAR,timeout=S,retries=N,fallback=SPEC`` (every option after
``model`` may be left out). Each move:

1. the seat's view in words (``bourre_env.text.describe_view``) goes into the prompt template (``prompts/v1.txt``);
2. the request is sent through the official ``openai`` client, which speaks to OpenAI and to servers with the same
   API (vLLM, Ollama, llama.cpp's server). A rate limit (429), a server error (5xx), a time-out or a lost connection
   is retried up to ``retries`` times, waiting what the server's ``Retry-After`` asks (a number of seconds or an HTTP
   date, at most ``MAX_WAIT``; any other value is ignored) or else ``backoff`` seconds doubled at each try;
3. the reply is read, at most ``MAX_REPLY_BYTES`` of it, before the library sees it (a longer one, or one slower than
   ``timeout`` to arrive in full, is a fault), and ``read_completion``, the one place that decides what a reply is,
   takes its text: anything but a UTF-8 JSON chat completion (``choices[0].message.content`` a string or null,
   ``usage`` absent or whole numbers) is a ``ReplyError``;
4. the reply's text is parsed strictly (``bourre_env.text.parse_reply``); an invalid one is asked again once, with
   the parser's error;
5. a move the model could not make (the server failing past the retries, an unreadable reply, or two invalid
   replies) is made by the fallback agent (the heuristic by default), and counted in ``stats``. Nothing a server
   sends makes ``act`` raise.

The API key is read from the environment variable that ``key_env`` names (``OPENAI_API_KEY`` by default), never
from a spec or a file; it is never logged, and every text the agent writes (the transcript) has it blanked out in
every form a server may echo it in (raw, JSON- or Python-escaped, URL-encoded, HTML-escaped).
"""

from __future__ import annotations

import email.utils
import html
import json
import math
import os
import re
import sys
import threading
import time
import urllib.parse
import zlib
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from agents.base import Agent, Observation
from bourre_env import text

__all__ = [
    "LLMAgent",
    "LLMOptions",
    "LLMStats",
    "Prompt",
    "load_prompt",
    "parse_spec",
    "make_llm",
    "PROMPT_VERSION",
    "MAX_REPLY_BYTES",
    "MAX_WAIT",
    "ReplyError",
    "Completion",
    "read_completion",
    "retry_after_seconds",
]

PROMPT_VERSION = "v1"
"""The prompt template the agent uses unless told otherwise (``prompt=``): ``agents/llm/prompts/<version>.txt``."""
MAX_WAIT = 60.0
"""The longest wait, in seconds, before a retry, whatever a server's ``Retry-After`` asks."""
MAX_TIMEOUT = 600.0
"""The longest a spec may let one request take, in seconds."""
MAX_TOKENS = 100_000
"""The most tokens a spec may let one reply have."""
MAX_REPLY_BYTES = 1 << 20
"""The most bytes of one reply (error replies included, decompressed) that are read: a longer one is a fault.
``max_tokens`` is only a request; a reply of a move's number is a few hundred bytes."""
MAX_TOKEN_COUNT = 1 << 31
"""The largest token count a reply's ``usage`` may claim."""
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
    # non-finite numbers are refused by name: nan passes every comparison's "not below", and a backoff of nan or a
    # timeout of 1e400 would only fail at the first retry, mid-evaluation
    for name, low, high in (("timeout", 0.0, MAX_TIMEOUT), ("backoff", 0.0, MAX_WAIT), ("temperature", 0.0, 2.0)):
        value = getattr(options, name)
        if not math.isfinite(value) or not low <= value <= high or (name == "timeout" and value == 0):
            raise ValueError(f"llm: option {name}: expected a number in {low:g}..{high:g}, got {value!r}")
    if not 0 <= options.retries <= 20 or not 1 <= options.max_tokens <= MAX_TOKENS:
        raise ValueError(f"llm: expected retries in 0..20 and max_tokens in 1..{MAX_TOKENS}")
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


class ReplyError(Exception):
    """A reply this agent cannot read: its class names the fault in ``stats.errors``, its message (one line) says
    what was wrong. ``retryable``: whether asking again may mend it."""

    retryable = False


class MalformedReplyError(ReplyError):
    """A reply that is not a UTF-8 JSON chat completion of the expected shape."""


class ReplyTooLargeError(ReplyError):
    """A reply over ``MAX_REPLY_BYTES``."""


class SlowReplyError(ReplyError):
    """A reply whose body took longer than the request's time-out to arrive in full (a slow drip)."""

    retryable = True


class Completion(NamedTuple):
    """What the agent takes from a chat completion: the reply's text and the tokens the server counted."""

    content: str
    prompt_tokens: int
    completion_tokens: int


def read_completion(content_type: str | None, body: bytes) -> Completion:
    """The text and token counts of a chat-completions reply: ``body`` must be UTF-8 JSON (``content_type``
    ``application/json``) holding an object whose ``choices[0].message.content`` is a string or null (null reads as
    an empty reply) and whose ``usage``, if any, holds whole token counts. Any other reply raises
    ``MalformedReplyError`` naming the first thing wrong: the one place where the shape of a reply is decided."""
    media = (content_type or "").partition(";")[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        raise MalformedReplyError(f"the reply's content type is {_shown(content_type or 'missing')}, not JSON")
    try:
        payload = json.loads(body.decode("utf-8"))  # RFC 8259: JSON between systems is UTF-8
    except UnicodeDecodeError:
        raise MalformedReplyError("the reply is not UTF-8") from None
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser goes
        raise MalformedReplyError(f"the reply is not JSON ({len(body):,} bytes)") from None
    if not isinstance(payload, dict):
        raise MalformedReplyError(f"the reply is a JSON {_json_type(payload)}, not an object")
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        raise MalformedReplyError(f"the reply's choices is {_json_type(choices)}, not a list of one or more")
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise MalformedReplyError(f"the reply's choices[0].message is {_json_type(message)}, not an object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise MalformedReplyError(f"the reply's message content is {_json_type(content)}, not a string")
    try:
        (content or "").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate escaped in the JSON (\ud800): no text can hold it
        raise MalformedReplyError("the reply's message content is not valid Unicode") from None
    usage = payload.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise MalformedReplyError(f"the reply's usage is {_json_type(usage)}, not an object")
    counts = []
    for name in ("prompt_tokens", "completion_tokens"):
        count = (usage or {}).get(name)
        if count is None:
            count = 0  # servers that count no tokens leave them out
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_TOKEN_COUNT:
            raise MalformedReplyError(f"the reply's usage.{name} is {_json_type(count)}, not a token count")
        counts.append(count)
    return Completion(content or "", counts[0], counts[1])


def _json_type(value: object) -> str:
    """What a parsed JSON value is, in a fault's message (never its text: a reply is the server's, of any size)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number" if not isinstance(value, int) or abs(value) <= MAX_TOKEN_COUNT else "a huge number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list" if value else "an empty list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _shown(text: str, width: int = 60) -> str:
    """A server's short text (a header), quoted and cut, for a fault's message."""
    return repr(text if len(text) <= width else text[: width - 3] + "...")


_HTTP_SECONDS = re.compile(r"[0-9]{1,9}(\.[0-9]{1,6})?")


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """The seconds a ``Retry-After`` header asks to wait, within ``[0, MAX_WAIT]``: a number of seconds (a fraction
    allowed) or an HTTP date (``now``, the Unix time, defaults to the clock's). ``None`` for a header that is absent or
    asks for nothing sane (negative, not finite, absurdly long, garbage): the caller's back-off then applies."""
    if value is None:
        return None
    value = value.strip()
    if _HTTP_SECONDS.fullmatch(value):
        seconds = float(value)
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
            seconds = when.timestamp() - (time.time() if now is None else now)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if not math.isfinite(seconds) or when.tzinfo is None:  # an HTTP date is in GMT; one without a zone is not
            return None
    return min(max(seconds, 0.0), MAX_WAIT)


def _key_forms(key: str) -> list[str]:
    """Every form the key may take in a text: raw, JSON-escaped, escaped as a Python literal (as a server's error
    appears in the client's message), URL-encoded and HTML-escaped; longest first, so that a longer form is blanked
    before a form inside it. A key under 4 characters is not blanked: it would blank ordinary words."""
    if len(key) < 4:
        return []
    forms = {key, json.dumps(key)[1:-1], json.dumps(key, ensure_ascii=False)[1:-1], html.escape(key, quote=False)}
    forms.add(html.escape(key, quote=True))
    for quote in ("", "'", '"'):
        forms.add("".join("\\" + ch if ch == quote else repr(ch)[1:-1] for ch in key))
    for encode in (urllib.parse.quote, urllib.parse.quote_plus):
        for safe in ("", "/"):
            encoded = encode(key, safe=safe)
            forms |= {encoded, re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)}
    return sorted(forms, key=len, reverse=True)


_HEADER_SAFE_KEY = re.compile(r"[\x21-\x7e]+(?:[ \t]+[\x21-\x7e]+)*")
"""What an HTTP header (RFC 9110's field-content) carries as it is: visible ASCII, with spaces or tabs between."""


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
        if self._key and not _HEADER_SAFE_KEY.fullmatch(self._key):
            # the key goes in the Authorization header, which carries these only; the message never shows the key
            raise ValueError(
                f"llm: the key in {options.key_env} cannot be sent in an HTTP header: it may hold visible ASCII "
                "characters, with spaces or tabs between them, and nothing else (no accents, line breaks or other "
                "control characters, no space at either end)"
            )
        self._key_forms = _key_forms(self._key)
        self._openai = openai
        self._omit: Any = getattr(openai, "omit", openai.NOT_GIVEN)  # "send nothing": omit since 2.x, NOT_GIVEN before
        # the library's own retries are off: this agent counts its retries and honours Retry-After itself. The http
        # client reads every reply through _bound_reply, before the library reads it, and asks for it uncompressed
        http_client = openai.DefaultHttpxClient(
            headers={"Accept-Encoding": "identity"}, event_hooks={"response": [self._bound_reply]}
        )
        self._client = openai.OpenAI(
            api_key=self._key or "no-key",
            base_url=options.base_url,
            timeout=options.timeout,
            max_retries=0,
            http_client=http_client,
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
    def _bound_reply(self, response: Any) -> None:
        """The http client's response hook, run once a reply's headers are in and before its body is read: reads the
        body here, at most ``MAX_REPLY_BYTES`` of it (decompressed, should a server compress it unasked) and within
        the time-out in all, and hands the library the bytes read. A fault raises ``ReplyError``."""
        declared = response.headers.get("content-length", "").strip()
        if declared.isdigit() and (len(declared) > 12 or int(declared) > MAX_REPLY_BYTES):
            size_said = f"{int(declared):,} bytes" if len(declared) <= 12 else "a number of bytes of 13 digits or more"
            raise ReplyTooLargeError(f"the reply says it is {size_said}, over the {MAX_REPLY_BYTES:,}-byte cap")
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
            raise MalformedReplyError(f"the reply is in the {_shown(encoding)} encoding, which was not asked for")
        # wbits 47: a gzip or zlib stream, told apart by its header; max_length below bounds what a bomb yields
        inflate = zlib.decompressobj(zlib.MAX_WBITS | 32) if encoding not in ("", "identity") else None
        deadline = time.monotonic() + self.options.timeout
        parts: list[bytes] = []
        size = 0
        for chunk in response.stream:
            if inflate is not None:
                try:
                    chunk = inflate.decompress(chunk, MAX_REPLY_BYTES - size + 1)
                except zlib.error:
                    raise MalformedReplyError(f"the reply is not valid {encoding}") from None
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise ReplyTooLargeError(f"the reply passed the {MAX_REPLY_BYTES:,}-byte cap")
            parts.append(chunk)
            if time.monotonic() > deadline:
                raise SlowReplyError(f"the reply took over {self.options.timeout:g} s to arrive in full")
        if inflate is not None and not inflate.eof:
            raise MalformedReplyError(f"the reply's {encoding} data ends early")
        response.stream.close()  # all read: the connection goes back to the pool
        if inflate is not None:
            del response.headers["content-encoding"]
        # the http library's own in-memory stream (httpx's or httpx2's, whichever the openai library uses)
        http = sys.modules[type(response).__module__.partition(".")[0]]
        response.stream = http.ByteStream(b"".join(parts))

    def _wait(self, err: Exception, attempt: int) -> float:
        """Seconds to wait before retry ``attempt`` (1 first): the server's Retry-After, else the doubling back-off."""
        response = getattr(err, "response", None)
        headers = getattr(response, "headers", None)
        asked = retry_after_seconds(headers.get("retry-after") if headers is not None else None)
        return asked if asked is not None else min(self.options.backoff * 2 ** (attempt - 1), MAX_WAIT)

    def _complete(self, messages: list[dict[str, str]], record: dict[str, Any]) -> str:
        """One reply's text, retrying what may pass (rate limits, server errors, time-outs, lost connections)."""
        o = self._openai
        retryable = (o.RateLimitError, o.InternalServerError, o.APITimeoutError, o.APIConnectionError)
        for attempt in range(self.options.retries + 1):
            start = time.monotonic()
            try:
                raw = self._client.chat.completions.with_raw_response.create(
                    model=self.options.model,
                    messages=messages,  # type: ignore[arg-type]
                    temperature=self.options.temperature,
                    max_tokens=self.options.max_tokens,
                    # the agent's seed, for the servers that sample reproducibly with one; none sent without it
                    seed=self.seed if self.seed is not None else self._omit,
                )
                reply = read_completion(raw.http_response.headers.get("content-type"), raw.http_response.content)
            except Exception as err:  # noqa: BLE001
                # whatever went wrong is counted in stats.errors and written in the transcript, and is retried if a
                # retry may mend it (rate limits, server errors, time-outs, lost connections); else the fallback
                # moves (a 401, a 404, an unreadable reply), rather than the game stopping
                fault = _fault_in(err)
                self._error(record, fault or err, time.monotonic() - start)
                may_pass = fault.retryable if fault is not None else isinstance(err, retryable)
                if not may_pass or attempt == self.options.retries:
                    raise _RequestFailedError(type(fault or err).__name__) from None
                with self._lock:
                    self.stats.retries += 1
                time.sleep(self._wait(err, attempt + 1))
                continue
            latency = time.monotonic() - start
            with self._lock:
                self.stats.prompt_tokens += reply.prompt_tokens
                self.stats.completion_tokens += reply.completion_tokens
                self.stats.latency_s += latency
            record["tokens"]["prompt"] += reply.prompt_tokens
            record["tokens"]["completion"] += reply.completion_tokens
            record["latency_s"] += latency
            # blanked before anything reads it, so that neither the transcript nor the parser's error (which quotes
            # the reply's start) holds a key the model was made to repeat, whole or cut
            text_reply = self._redact(reply.content)
            record["replies"].append(text_reply)
            return text_reply
        raise AssertionError("unreachable")  # the loop returns or raises

    def _error(self, record: dict[str, Any], err: Exception, latency: float) -> None:
        kind = type(err).__name__
        # blanked before it is cut, so that no part of the key is left at the cut
        record["errors"].append(f"{kind}: {self._redact(str(err))[:300]}")
        record["latency_s"] += latency
        with self._lock:
            self.stats.errors[kind] = self.stats.errors.get(kind, 0) + 1

    def _redact(self, line: str) -> str:
        """``line`` with the key, in each of its forms (``_key_forms``), blanked."""
        for form in self._key_forms:
            line = line.replace(form, _REDACTED)
        return line

    def _redacted(self, value: Any) -> Any:
        """A transcript record with the key blanked in every text it holds, before it is encoded: so that no
        escaping the encoder does can hide the key from the blanking."""
        if isinstance(value, str):
            return self._redact(value)
        if isinstance(value, dict):
            return {k: self._redacted(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._redacted(v) for v in value]
        return value

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
        line = (json.dumps(self._redacted(record), ensure_ascii=False) + "\n").encode("utf-8")
        # one write() of the whole line to a file opened for appending: the lines of several agents, threads or
        # worker processes sharing the file (bourre eval --workers) do not interleave on a local file system
        with self._lock:
            fd = os.open(self._transcript, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)


def _fault_in(err: BaseException) -> ReplyError | None:
    """The ``ReplyError`` that ``err`` is or was raised from: the openai library passes one raised while a reply is
    read on as it is (3.x) or as the cause of its ``APIConnectionError`` (1.x)."""
    seen: BaseException | None = err
    for _ in range(8):  # a chain is short; the bound guards against a cycle
        if seen is None or isinstance(seen, ReplyError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def make_llm(variant: str | None, seed: int | None) -> Agent:
    """The ``agents.register`` factory of ``llm:model=NAME,...`` (see ``parse_spec``)."""
    return LLMAgent(parse_spec(variant), seed)
