"""The hot paths under airspeed velocity (asv): ``asv continuous main HEAD`` times them on two commits, one machine.

The suite's configuration is ``asv.conf.json`` at the repository root; docs/benchmarks.md ("Regressions: asv") gives
the commands and how to read their ratios, and ``tests/test_asv_suite.py`` runs every benchmark once on a few tables.

Every figure is a single-thread figure, as in the other benchmarks: the thread-count variables of numba, OpenMP and
the BLAS libraries default to 1 here, before anything imports numpy or numba (values already set are kept; in a
process that has already loaded them, as under pytest, nothing is set). asv imports this package first.

These modules import nothing of the project at import time: asv imports them to discover the benchmarks, and the
project's modules are imported in each benchmark's ``setup``, which compiles or loads the numba kernels there,
untimed. A benchmark whose API a commit lacks (the vector env before it existed) raises ``NotImplementedError`` in
its setup, which asv reports as skipped (``n/a``) for that commit.
"""

from __future__ import annotations

import os
import sys

THREAD_VARIABLES = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")

if not {"numba", "numpy"} & set(sys.modules):
    for _name in THREAD_VARIABLES:
        os.environ.setdefault(_name, "1")
