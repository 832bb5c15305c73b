"""Adversarial probes of the public API: each check here was a crash, a silent wrong answer or a traceback once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import bourre_env

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------- minor input checks
@pytest.mark.parametrize("first", [True, 0.0, np.float64(0), np.bool_(False), 0.5, "XX"])
def test_deck_cards_must_be_integer_ids_or_card_strings(first: Any) -> None:
    env = bourre_env.raw_env(num_players=4)
    with pytest.raises(ValueError, match="bad deck"):
        env.reset(options={"deck": [first, *range(1, 52)]})
    env.reset(options={"deck": np.arange(52, dtype=np.int16)})  # numpy integers are ids
    with pytest.raises(ValueError, match="bad deck"):
        env.reset(options={"deck": np.arange(52, dtype=np.float64)})
