"""numpy loaded for a one-shot command such as `assess`: BLAS on the calling thread, no huge-page advice.

Both settings are read by numpy (and the OpenBLAS it loads) once, at import, so `import_numpy_for_one_shot` must
run before anything imports numpy; the environment is restored afterwards, so programs the command starts are not
affected. A variable the user set is left alone. A host program using the library is not touched: only the CLI
calls this.

* **One BLAS thread.** numpy's OpenBLAS splits a dot product of more than 10,000 numbers across its worker threads,
  one per core. The diagnosis takes a few dozen such products of a long run's curves (the autocorrelation in
  `robust.noise_level`), each a fraction of a millisecond of work; waking the workers costs more than that, and on a
  machine whose cores are busy (another job, or the figures' forked child on the second core) a product waits for a
  worker to be scheduled: 3-8 ms each, 0.6-0.7 s of a 300,000-step run's diagnosis on a loaded 2-core machine,
  against 0.02 ms each on one thread. Nothing here multiplies matrices big enough to gain from more threads.
* **No huge-page advice.** numpy asks the kernel for transparent huge pages on every array of 4 MiB or more
  (`madvise`). With the kernel's usual `defrag=madvise`, each first touch of such an array then waits for the
  kernel to find (compact, if need be) and zero a 2 MiB page; on the development VM the long table's columns (300
  MiB for a 300,000-step run) cost 0.24-0.34 s of system time that way, against 0.04-0.05 s in 4 KiB pages, and
  the whole `assess` 0.3 s more (`benchmarks/results/issue13-assess.md`). A one-shot command touches most of its
  memory once; what huge pages save in TLB misses did not show in its user time.
"""

from __future__ import annotations

import os
import sys

# What OpenBLAS (numpy's wheels) and MKL (some conda builds) read when they load, and numpy's own switch.
SETTINGS = {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMPY_MADVISE_HUGEPAGE": "0"}


def import_numpy_for_one_shot() -> bool:
    """Import numpy with `SETTINGS`; False (nothing done) when numpy is imported already."""
    if "numpy" in sys.modules:
        return False
    saved = {name: os.environ.get(name) for name in SETTINGS}
    for name, value in SETTINGS.items():
        os.environ.setdefault(name, value)
    try:
        import numpy  # noqa: F401  (numpy and its OpenBLAS read the variables now)
    finally:
        for name, previous in saved.items():
            if previous is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = previous
    return True
