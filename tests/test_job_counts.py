"""The progress bar's note of what a candidate counted (``train.eval.jobs.counts_postfix``): deal by deal for jobs
run here, job by job from a pool's results."""

from __future__ import annotations

from typing import Any

import pytest
from tqdm import tqdm

from train.eval.jobs import counts_postfix, deal_done, run_jobs


def test_the_note_sums_the_jobs_and_gives_the_rate() -> None:
    parts = [
        {"decisions": 30, "prompt_tokens": 1000, "completion_tokens": 20, "fallbacks": 2, "model": "m"},
        None,
        {"decisions": 10, "prompt_tokens": 500, "completion_tokens": 0, "fallbacks": 0},
    ]
    assert counts_postfix(parts, 8.0) == "40 moves (5.0/s), 1,520 tokens, 2 fallbacks"
    assert counts_postfix([{"decisions": 3}], 2.0) == "3 moves (1.5/s)"  # no tokens, no fallbacks: not named
    assert counts_postfix([None, {}, {"decisions": 0}], 1.0) == ""


def _job(decisions: int) -> tuple[int, dict[str, Any]]:
    for k in range(1, 3):  # two deals, each reporting the job's counts so far
        deal_done(1, {"decisions": decisions * k, "prompt_tokens": 7 * k})
    return decisions, {"decisions": decisions * 2, "prompt_tokens": 14}


class _Bar(tqdm):  # type: ignore[type-arg]  # tqdm is generic in its stubs only
    notes: list[str]

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self.notes.append(s)


@pytest.mark.parametrize("workers", [1, 2])
def test_the_bar_notes_each_jobs_latest_counts(workers: int) -> None:
    with _Bar(total=6, disable=True) as bar:
        bar.notes = []
        results = run_jobs(_job, [1, 2, 3], [2, 2, 2], workers, False, "t", bar=bar, counts_of=lambda r: r[1])
    assert [r[0] for r in results] == [1, 2, 3]
    # here: a note per deal, and one per finished job; in a pool: one per finished job
    assert len(bar.notes) == (9 if workers == 1 else 3)
    assert bar.notes[-1].startswith("12 moves (") and bar.notes[-1].endswith("/s), 42 tokens")
