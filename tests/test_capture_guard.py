"""The guard of tests/conftest.py: code under test that closes pytest's capture of sys.stdout is refused, the stream
keeps working for the tests after it, and the stack of the close is kept for the failure that names it."""

from __future__ import annotations

import sys
import threading

import pytest
from conftest import REFUSED_CLOSES


def _capture_file() -> object:
    from _pytest.capture import EncodedFile

    if not isinstance(sys.stdout, EncodedFile):
        pytest.skip("sys.stdout is not pytest's capture file (run without -s)")
    return sys.stdout


def test_a_close_of_the_capture_file_is_refused_and_its_stack_kept() -> None:
    stream = _capture_file()
    sys.stdout.close()
    assert sys.stdout is stream and not sys.stdout.closed
    print("still written")
    try:
        assert len(REFUSED_CLOSES) == 1 and "test_a_close_of_the_capture_file" in REFUSED_CLOSES[0]
    finally:
        REFUSED_CLOSES.clear()  # else this test fails at its teardown, as it should for any other test


def test_a_close_from_another_thread_names_the_thread() -> None:
    _capture_file()
    closer = threading.Thread(target=sys.stdout.close, name="closer")
    closer.start()
    closer.join()
    try:
        assert len(REFUSED_CLOSES) == 1 and "'closer'" in REFUSED_CLOSES[0]
    finally:
        REFUSED_CLOSES.clear()
    assert not sys.stdout.closed
