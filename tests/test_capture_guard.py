"""The guard of tests/conftest.py: code under test that closes pytest's capture of sys.stdout, or its buffer (a
wrapper of its own around ``sys.stdout.buffer``, collected), is refused, the stream keeps working for the tests after
it, and the stack of the close is kept for the failure that names it."""

from __future__ import annotations

import gc
import io
import sys
import threading
from typing import Any

import pytest
from conftest import REFUSED_CLOSES


def _capture_file() -> Any:
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


def test_a_wrapper_of_the_capture_files_buffer_does_not_close_it_when_collected() -> None:
    stream = _capture_file()
    # unguarded, what follows would close the capture file for the rest of this worker's tests: fail instead
    assert "close" in vars(sys.stdout.buffer), "tests/conftest.py did not guard the capture file's buffer"
    wrapper = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", write_through=True)
    wrapper.write("through a wrapper of its own\n")
    del wrapper  # collected: its finalizer closes the buffer it wraps
    gc.collect()
    try:
        assert len(REFUSED_CLOSES) == 1, REFUSED_CLOSES
    finally:
        REFUSED_CLOSES.clear()
    assert sys.stdout is stream and not sys.stdout.closed and not sys.stdout.buffer.closed
    print("still written")
