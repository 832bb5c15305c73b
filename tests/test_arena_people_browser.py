"""A person at the arena in a real browser: headless Chromium (the Debian package) driven by Selenium opens ``/play``,
takes a seat against two remote bots, plays three deals (each once) by clicking the labelled moves, and finds
the result on the people's page and not on the bots' leaderboard.

Skips without Selenium or the browser, except under CI (``CI`` set), where their absence is a failure (as
``tests/test_serve_browser.py``, whose browser fixture this uses)."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.arena_helpers import WAIT, Recorder, Server, served, start
from tests.test_serve_browser import browser  # noqa: F401 (the fixture: headless Chromium, or a skip)


@pytest.fixture(name="arena")
def people_arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from served(tmp_path_factory, people=True)


def test_a_person_plays_a_deal_against_two_remote_bots(
    arena: Server,
    browser: Any,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    bots = [arena.new_bot() for _ in range(2)]
    threads = [start(Recorder(), arena, name, token) for name, token in bots]
    base = f"http://127.0.0.1:{arena.port}"
    wait = WebDriverWait(browser, 30)
    browser.get(base + "/play")
    # the options are loaded: the connected bots are offered
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#opponent-specs option")) >= 2)
    browser.find_element(By.ID, "name").send_keys("carol")
    browser.find_element(By.ID, "opponents").send_keys(", ".join(f"bot:{name}" for name, _ in bots))
    deals = browser.find_element(By.ID, "deals")
    deals.clear()
    deals.send_keys("3")  # three deals, each played once: the person's seat turns round the table
    browser.find_element(By.ID, "join-button").click()
    table = wait.until(
        lambda d: d.find_element(By.ID, "table") if d.find_element(By.ID, "table").is_displayed() else None
    )

    clicked: set[str] = set()
    labels: list[str] = []
    deadline = time.monotonic() + WAIT
    while not browser.find_element(By.ID, "match-end").is_displayed():
        assert time.monotonic() < deadline, "the match did not end"
        message = browser.find_element(By.ID, "message")
        assert not message.is_displayed(), message.text
        turn = table.get_attribute("data-turn") or ""
        buttons = browser.find_elements(By.CSS_SELECTOR, "#hand button[data-action], #actions button[data-action]")
        if turn in clicked or not buttons:
            time.sleep(0.05)
            continue
        try:
            labels.append(buttons[0].get_attribute("title") or buttons[0].text)
            if not (tmp_path / "person.png").exists():
                browser.save_screenshot(str(tmp_path / "person.png"))
            buttons[0].click()
        except StaleElementReferenceException:  # the next message redrew the table meanwhile
            continue
        clicked.add(turn)
    assert len(clicked) >= 3, "a person's seat decides at least once in each of the 3 deals"
    # the words view's labels name the moves ("pass", "stay, discard ...", "play the Q of hearts")
    assert all(label and not label.startswith("play, ") for label in labels), labels
    rows = browser.find_elements(By.CSS_SELECTOR, "#match-table tr")
    assert len(rows) == 4 and "carol (you)" in rows[1].text
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive()

    browser.get(base + "/people")
    wait.until(lambda d: "carol" in d.find_element(By.TAG_NAME, "table").text)
    assert "finished" in browser.find_element(By.TAG_NAME, "table").text
    with urllib.request.urlopen(base + "/api/leaderboard", timeout=WAIT) as answer:
        board = json.loads(answer.read())
    assert board["matches"] == 0 and "carol" not in json.dumps(board)
