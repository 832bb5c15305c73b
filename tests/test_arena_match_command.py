"""``bourre arena match --url`` is checked before anything is sent: a host with a space, a port that is no number or
out of range, a broken IPv6 address each answer one line (they once printed a 30-line traceback)."""

from __future__ import annotations

import pytest

from train.cli import main


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://a b:8765", "no spaces"),
        ("http://127.0.0.1:abc", "Port could not be cast"),
        ("http://127.0.0.1:99999", "Port out of range"),
        ("http://[::1", "Invalid IPv6 URL"),
        ("http://:80", "with a host"),
        ("ws://127.0.0.1:8765/bot", "expected the server's http://HOST:PORT"),
    ],
)
def test_a_bad_server_address_is_one_line(
    url: str, words: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOURRE_ARENA_TOKEN", "x")
    code = main(["arena", "match", "--seats", "heuristic,heuristic", "--url", url])
    err = capsys.readouterr().err.strip()
    assert code == 2 and words in err and len(err.splitlines()) == 1 and "Traceback" not in err
