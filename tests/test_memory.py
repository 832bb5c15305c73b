"""``bourre_env.memory``: a size that cannot fit is refused in one line before anything is allocated."""

from __future__ import annotations

import pytest

from bourre_env import memory


def test_available_memory_is_read_from_the_system() -> None:
    free = memory.available_bytes()
    assert free is None or free > 0


def test_a_size_over_the_share_of_available_memory_is_refused_naming_the_option() -> None:
    memory.check_fits(0.5 * 2**30, "--tables 10", available=2**30)
    with pytest.raises(ValueError, match=r"--tables 20000000 needs about 42\.3 GiB .*1\.0 GiB available"):
        memory.check_fits(42.3 * 2**30, "--tables 20000000", available=2**30)


def test_bytes_are_described_in_binary_units() -> None:
    assert [memory.describe_bytes(n) for n in (12, 2048, 5 * 2**20, 775 * 2**30)] == [
        "12 B",
        "2.0 KiB",
        "5.0 MiB",
        "775.0 GiB",
    ]
