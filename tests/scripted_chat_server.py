"""A chat-completions server (``POST /v1/chat/completions``) that answers from a script: the test server of
``tests/test_llm_agent.py``, and a demo one can run for ``bourre eval --candidate llm:...`` (docs/llm.md)::

    python tests/scripted_chat_server.py     # port 8766 (the arena has 8765); then base_url=http://127.0.0.1:8766/v1

Run as a command, its "model" answers ``1`` to every prompt but one in five, which it answers with prose, after a
429 and a 500 on its first two requests; it takes any key.
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# A step of the script: ("answer", text), ("429", retry_after or None), ("500",), ("slow", seconds, text),
# ("garbage",) (a body that is not JSON), ("json", value) (any JSON value as a 200's body), ("raw", status, body,
# headers) (any bytes: a Content-Type of application/json and the body's Content-Length unless headers name others, a
# header given as None left out, the connection closed after the body), ("drip", seconds, byte_count) (a JSON 200 that
# sends a byte every so many seconds). Past the script's end the server answers "1".
Step = tuple[Any, ...]
DEMO_PORT = 8766
"""The demo's port: not the arena's 8765 (docs/arena.md), so that both can run at once."""


class ScriptedServer:
    """A chat-completions endpoint (``POST /v1/chat/completions``) that answers from a script, or from ``policy``
    (the last user message -> the reply's text) once the script is spent; ``requests`` records what came in."""

    def __init__(
        self, script: list[Step] | None = None, policy: Callable[[str], str] | None = None, port: int = 0
    ) -> None:
        self.script = list(script or [])
        self.policy = policy or (lambda _prompt: "1")
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet: the test output stays readable
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(
                        {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
                    )
                    step = server.script.pop(0) if server.script else ("answer", None)
                kind = step[0]
                if kind == "429":
                    headers: dict[str, str | None] = {"Retry-After": str(step[1])} if step[1] is not None else {}
                    return self._send(429, {"error": {"message": "rate limited", "type": "rate_limit"}}, headers)
                if kind == "500":
                    return self._send(500, {"error": {"message": "boom", "type": "server_error"}})
                if kind == "garbage":
                    return self._raw(200, b"this is not json")
                if kind == "json":
                    return self._raw(200, json.dumps(step[1]).encode())
                if kind == "raw":
                    return self._raw(step[1], step[2], step[3] if len(step) > 3 else None)
                if kind == "drip":
                    return self._drip(step[1], step[2])
                if kind == "slow":
                    time.sleep(step[1])
                content = step[-1]
                if content is None:
                    content = server.policy(body["messages"][-1]["content"])
                self._send(
                    200,
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                        ],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 2, "total_tokens": 102},
                    },
                )

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str | None] | None = None) -> None:
                self._raw(status, json.dumps(payload).encode(), headers)

            def _raw(self, status: int, data: bytes, headers: dict[str, str | None] | None = None) -> None:
                sent = {"Content-Type": "application/json", "Content-Length": str(len(data))} | (headers or {})
                try:
                    self.send_response(status)
                    for name, value in sent.items():
                        if value is not None:
                            self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (its time-out, its cap)
                    pass

            def _drip(self, seconds: float, count: int) -> None:
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(count))
                    self.end_headers()
                    for _ in range(count):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(seconds)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=DEMO_PORT, help=f"port on 127.0.0.1 (default: {DEMO_PORT})")
    args = parser.parse_args()
    replies = itertools.count()
    server = ScriptedServer(
        [("429", 1), ("500",)],
        policy=lambda _prompt: "I would rather not say." if next(replies) % 5 == 4 else "1",
        port=args.port,
    )
    print(f"serving chat completions at {server.url} (Ctrl-C stops)", flush=True)
    try:
        server.thread.join()
    except KeyboardInterrupt:
        server.close()


if __name__ == "__main__":
    main()
