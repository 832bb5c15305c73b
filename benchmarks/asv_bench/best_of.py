"""The fast end of asv's samples: the ratio of two commits' best times and 10th percentiles, from asv's results.

    python -m benchmarks.asv_bench.best_of 8f09907 HEAD       # after asv continuous 8f09907 HEAD, from the root

``asv continuous`` and ``asv compare`` compare medians. On a machine shared with other jobs the samples of one
benchmark fall in two or more modes (the same call, with a core to itself or with a busy neighbour: 7 ms and 11.5
ms here), and a median moves with the share of samples taken while the neighbour ran, which the two commits do not
get alike: their ratio then swings by 10-25% from one run to the next. The fastest samples are those taken alone,
on both sides, so the ratio of the best times (and of the 10th percentiles, which one lucky sample does not make)
holds still where the medians do not. asv keeps every sample (``asv continuous`` records them); this reads them.

Printed per benchmark and parameters: the samples on each side, the best time of each, and the ratios after/before
of the best times, of the 10th percentiles and of the medians (asv's own ratio). No verdict of significance: that is
asv's, on the medians; run the comparison twice and believe a best-of ratio that both runs agree on.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def commit_hash(rev: str) -> str:
    """The full hash of ``rev`` in the repository."""
    done = subprocess.run(
        ["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"best_of: no commit {rev!r}: {done.stderr.strip()}")
    return done.stdout.strip()


def samples_of(results: Path, commit: str) -> dict[str, np.ndarray]:
    """Every sample asv recorded for ``commit`` under ``results`` (one machine's folder or their parent), by
    ``benchmark(parameters)``."""
    files = sorted(results.glob(f"{commit[:8]}-*.json")) or sorted(results.glob(f"*/{commit[:8]}-*.json"))
    if not files:
        raise SystemExit(f"best_of: no asv results of {commit[:8]} under {results} (run asv continuous first)")
    found: dict[str, np.ndarray] = {}
    for path in files:
        data = json.loads(path.read_text())
        for name, row in data["results"].items():
            entry = dict(zip(data["result_columns"], row, strict=False))  # older results lack columns
            combos = list(itertools.product(*entry["params"])) if entry.get("params") else [()]
            for combo, samples in zip(combos, entry.get("samples") or [], strict=False):  # none: not recorded
                if samples:
                    found[f"{name}({', '.join(combo)})"] = np.asarray(samples, dtype=np.float64)
    return found


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"


def report(before: dict[str, np.ndarray], after: dict[str, np.ndarray]) -> list[str]:
    lines = [
        f"| {'benchmark (parameters)':<56} | samples | best before | best after | best | 10th pct | median |",
        f"|{'-' * 58}|--------:|------------:|-----------:|-----:|---------:|-------:|",
    ]
    for name in sorted(before.keys() & after.keys()):
        x, y = before[name], after[name]
        best = y.min() / x.min()
        tenth = np.percentile(y, 10) / np.percentile(x, 10)
        median = np.median(y) / np.median(x)
        lines.append(
            f"| {name:<56} | {len(x):>3}/{len(y):<3} | {_time(x.min()):>11} | {_time(y.min()):>10} | "
            f"{best:.3f} | {tenth:8.3f} | {median:6.3f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", help="the base commit (asv continuous's first argument)")
    parser.add_argument("after", help="the commit compared with it")
    parser.add_argument("--results", type=Path, default=ROOT / ".asv" / "results", help="asv's results_dir")
    args = parser.parse_args(argv)
    before, after = (samples_of(args.results, commit_hash(rev)) for rev in (args.before, args.after))
    print("\n".join(report(before, after)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
