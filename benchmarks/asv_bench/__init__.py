"""The hot paths under airspeed velocity (asv): ``asv continuous main HEAD`` times them on two commits, one machine.

The suite's configuration is ``asv.conf.json`` at the repository root; docs/benchmarks.md ("Regressions: asv") gives
the commands and how to read their ratios, and ``tests/test_asv_suite.py`` runs every benchmark once on a few tables.

Every figure is a single-thread figure, as in the other benchmarks, except those of ``bench_threads`` (the threaded
paths, on the wall clock): the thread-count variables of OpenMP and the BLAS libraries default to 1 here, before
anything imports numpy or numba, and numba's pool to the cores this process may use, which only ``bench_threads``
asks for (every other benchmark runs its games and players with ``threads=1``, their default). Values already set
are kept; in a process that has already loaded them, as under pytest, nothing is set. asv imports this package
first.

These modules import nothing of the project at import time: asv imports them to discover the benchmarks, and the
project's modules are imported in each benchmark's ``setup``, which compiles or loads the numba kernels there,
untimed. A benchmark whose API a commit lacks (the vector env before it existed) raises ``NotImplementedError`` in
its setup, which asv reports as skipped (``n/a``) for that commit.
"""

from __future__ import annotations

import os
import sys

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")

if not {"numba", "numpy"} & set(sys.modules):
    for _name in THREAD_VARIABLES:
        os.environ.setdefault(_name, "1")
    _cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    os.environ.setdefault("NUMBA_NUM_THREADS", str(_cores))
