"""``bourre serve`` in a real browser: headless Chromium (the Debian package) driven by Selenium plays a whole deal
by clicking, checks the result panel, steps the replay view, and saves a screenshot.

Skips without the serve extra, Selenium or the browser, except under CI (``CI`` set), where ``.ci/run`` installs
them and their absence is a failure. ``BOURRE_SCREENSHOT=DIR`` also writes the screenshots there, ``table.png`` (in
trick play) and ``result.png`` (the deal over): the README's picture is made this way."""

from __future__ import annotations

import importlib
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bourre_env import history


def _need(module: str) -> Any:
    if os.environ.get("CI"):
        return importlib.import_module(module)  # .ci/run installs it: missing, it is a failure
    return pytest.importorskip(module, reason=f"the browser test needs {module}: pip install -e '.[serve,browser]'")


def _binary(*names: str) -> str:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    message = f"the browser test needs {names[0]} (Debian: apt-get install chromium chromium-driver)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def server() -> Iterator[tuple[str, Any]]:
    """The app on 127.0.0.1 at a free port, in a thread that stops when the test ends."""
    uvicorn = _need("uvicorn")
    from train.serve import app, tables

    state = tables.Tables(seed=3)
    config = uvicorn.Config(app.create_app(state), log_level="warning")
    srv = uvicorn.Server(config)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert srv.started, "the server did not start"
    try:
        yield f"http://127.0.0.1:{port}", state
    finally:
        srv.should_exit = True
        thread.join(timeout=15)
        sock.close()


@pytest.fixture
def browser() -> Iterator[Any]:
    webdriver = _need("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    chromium = _binary("chromium", "chromium-browser")
    driver_path = _binary("chromedriver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1180,1100",
    ):
        options.add_argument(flag)
    # The driver path given, Selenium does not look for (or download) a driver of its own.
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _screenshot(browser: Any, path: Path) -> None:
    browser.save_screenshot(str(path))
    if os.environ.get("BOURRE_SCREENSHOT"):  # a folder
        shutil.copy(path, Path(os.environ["BOURRE_SCREENSHOT"]) / path.name)


def test_a_deal_played_by_clicking(server: tuple[str, Any], browser: Any, tmp_path: Path) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    base, state = server
    wait = WebDriverWait(browser, 30)
    browser.get(base + "/")
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#preset option")) > 1)
    Select(browser.find_element(By.ID, "preset")).select_by_value("standard")
    Select(browser.find_element(By.ID, "players")).select_by_value("4")
    specs = ["heuristic", "ppo", "random"]
    for box, spec in zip(browser.find_elements(By.CSS_SELECTOR, "#agents input"), specs, strict=True):
        box.clear()
        box.send_keys(spec)
    browser.find_element(By.ID, "start").click()
    table = wait.until(
        lambda d: d.find_element(By.ID, "table") if d.find_element(By.ID, "table").is_displayed() else None
    )

    clicks = 0
    discarded = False
    while table.get_attribute("data-over") != "1":
        assert clicks < 40, "the deal did not end"
        turn = table.get_attribute("data-turn")
        assert not browser.find_element(By.ID, "message").is_displayed(), browser.find_element(By.ID, "message").text
        if browser.find_elements(By.ID, "discard-button"):
            if not discarded:  # select one card to discard, then play: the draw as selection and one button
                browser.find_elements(By.CSS_SELECTOR, "#hand button.card.selectable")[0].click()
                discarded = True
            button = browser.find_element(By.ID, "discard-button")
            assert button.is_enabled() and "discard 1" in button.text
            button.click()
        elif browser.find_elements(By.CSS_SELECTOR, "#hand button.card.playable"):
            if not (tmp_path / "table.png").exists() and browser.find_elements(By.CSS_SELECTOR, ".seat .played"):
                _screenshot(browser, tmp_path / "table.png")  # in trick play, a card on the table
            browser.find_elements(By.CSS_SELECTOR, "#hand button.card.playable")[0].click()
        else:
            browser.find_elements(By.CSS_SELECTOR, "#actions button.action")[0].click()
        clicks += 1
        wait.until(
            lambda d, turn=turn: table.get_attribute("data-turn") != turn or table.get_attribute("data-over") == "1"
        )

    result = wait.until(
        lambda d: d.find_element(By.ID, "result") if d.find_element(By.ID, "result").is_displayed() else None
    )
    assert "Deal over" in result.text
    rows = browser.find_elements(By.CSS_SELECTOR, "#result-table tr[data-seat]")
    assert [r.find_element(By.CSS_SELECTOR, "td").text for r in rows] == [
        "player_0 (you)",
        "player_1 (heuristic)",
        "player_2 (ppo)",
        "player_3 (random)",
    ]
    (table_state,) = state._tables.values()
    saved = table_state.histories[1]
    payments = saved["deals"][0]["results"]["payments"]
    assert [r.find_elements(By.CSS_SELECTOR, "td")[4].text for r in rows] == [f"{p:+d}" if p else "0" for p in payments]
    for r, hand in zip(rows, saved["deals"][0]["results"]["hands"], strict=True):  # every hand, shown
        assert [c.get_attribute("data-card") for c in r.find_elements(By.CSS_SELECTOR, ".card")] == hand
    human = [a for a in saved["deals"][0]["actions"] if a["seat"] == 0]
    assert len(human) == clicks and human[0]["description"].startswith("play, discard 1")
    link = browser.find_element(By.ID, "history-link").get_attribute("href")
    assert link.endswith(f"/api/tables/{table_state.id}/deals/1/history")
    history.Replay(saved).run()

    _screenshot(browser, tmp_path / "result.png")
    assert (tmp_path / "result.png").stat().st_size > 10_000

    # The replay view of this deal, from the player's seat: forward and back.
    browser.find_element(By.ID, "replay-this").click()
    position = wait.until(
        lambda d: d.find_element(By.ID, "replay-position") if d.find_element(By.ID, "replay-position").text else None
    )
    assert position.text.startswith("deal 1, position 1 of ")
    browser.find_element(By.ID, "replay-next").click()
    assert "position 2 of" in position.text
    browser.find_element(By.ID, "replay-last").click()
    assert browser.find_element(By.ID, "replay-result").is_displayed()
    browser.find_element(By.ID, "replay-prev").click()
    assert not browser.find_element(By.ID, "replay-result").is_displayed()
    assert browser.find_element(By.ID, "replay-next-action").text.startswith("Next: player_")

    # A history file chosen from disk, with every hand open.
    path = history.write(saved, tmp_path / "deal.json")
    browser.find_element(By.ID, "replay-file").send_keys(str(path))
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#replay-seat option")) == 5)
    Select(browser.find_element(By.ID, "replay-seat")).select_by_value("open")
    browser.find_element(By.ID, "replay-load").click()
    wait.until(lambda d: "position 1 of" in d.find_element(By.ID, "replay-position").text)
    dealt = saved["deals"][0]["deck"][:20]

    def board_cards(d: Any) -> list[str] | None:
        seats = d.find_elements(By.CSS_SELECTOR, "#replay-board .seat")
        shown = [
            c.get_attribute("data-card")
            for s in seats
            for c in s.find_elements(By.CSS_SELECTOR, ".card")
            if "small" in (c.find_element(By.XPATH, "..").get_attribute("class") or "")
        ]
        return sorted(shown) if sorted(shown) == sorted(dealt) else None

    # the board may be drawn again while it is read (its elements then go stale): read until it holds every hand
    # as dealt, before the first action
    WebDriverWait(browser, 30, ignored_exceptions=(StaleElementReferenceException,)).until(board_cards)
