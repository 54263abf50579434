"""One BLAS thread for a one-shot command such as `assess`: numpy's vector products run on the calling thread.

numpy's OpenBLAS splits a dot product of more than 10,000 numbers across its worker threads, one per core. The
diagnosis takes a few dozen such products of a long run's curves (the autocorrelation in `robust.noise_level`),
each a fraction of a millisecond of work; waking the workers costs more than that, and on a machine whose cores
are busy (another job, or the figures' forked child on the second core) a product waits for a worker to be
scheduled: 3-8 ms each, 0.6-0.7 s of a 300,000-step run's diagnosis on a loaded 2-core machine, against 0.02 ms
each on one thread (`benchmarks/results/issue13-assess.md`). Nothing here multiplies matrices big enough to gain
from more threads.

OpenBLAS reads its thread count once, when numpy loads it, so this must run before numpy is imported; the
environment is restored afterwards, so programs the command starts are not affected. A variable the user set
is left alone. A host program using the library is not touched: only the CLI calls this.
"""

from __future__ import annotations

import os
import sys

# What OpenBLAS (numpy's wheels) and MKL (some conda builds) read when they load.
_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread() -> bool:
    """Import numpy with its BLAS on one thread; False (nothing done) when numpy is imported already."""
    if "numpy" in sys.modules:
        return False
    saved = {name: os.environ.get(name) for name in _THREAD_VARIABLES}
    for name in _THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    try:
        import numpy  # noqa: F401  (loads OpenBLAS, which reads the variables now)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return True
