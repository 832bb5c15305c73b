"""What every benchmark does before it imports what it measures: one thread, and the checkout's packages in reach.

Import it first, as a script's first import (``import preamble``, found beside the script, since Python puts
the script's folder on the path):

* The thread-count variables of numba, OpenMP and the BLAS libraries default to 1, so that every figure
  is a single-core figure (scale-out is by running more processes). They are read when those libraries
  are imported, hence first; values already set in the environment are kept, and nothing is set in a
  process that has already imported numba or numpy.
* The repository root is appended to ``sys.path``, so that ``python benchmarks/<script>.py`` finds the
  checkout's ``bourre_env``, ``agents`` and ``train`` when they are not installed; an installed copy
  still takes precedence.
"""

from __future__ import annotations

import os
import sys

THREAD_VARIABLES = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Only before those libraries are loaded: once they are, the variables no longer set anything, and numba refuses
# (RuntimeError at its next compile) a NUMBA_NUM_THREADS that changed after its threads started, as happens when
# a test imports a benchmark into a process that already ran numba's threads.
if not {"numba", "numpy"} & set(sys.modules):
    for _name in THREAD_VARIABLES:
        os.environ.setdefault(_name, "1")
if REPO_ROOT not in sys.path:
    sys.path.append(REPO_ROOT)
