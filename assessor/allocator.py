"""Allocator tuning for a one-shot command such as `assess`: big freed blocks are reused, not handed back.

glibc's malloc serves each large block (from 128 KiB; the bar rises to at most 32 MiB as blocks are freed) with its
own `mmap` and unmaps it on `free`, so every big numpy array (a column of a long run's metrics table is tens of MiB)
comes back as fresh pages the kernel must fault in and zero 4 KiB at a time: about 263,000 faults and up to two
CPU-seconds of system time for a 300,000-step run (`benchmarks/results/issue13-assess.md`). Taking every block from
the heap and never trimming it lets a freed column's pages serve the next one (146,000 faults, 0.6-0.8 CPU-seconds
less). The process exits soon after, so keeping its peak resident is no cost; a long-running process (`watch`, a
host program using the library) should not call this, which is why only the CLI does.
"""

from __future__ import annotations

import ctypes
import sys

# mallopt parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_NEVER_TRIM = 2**31 - 1  # bytes free at the top of the heap before it is trimmed: in effect, never


def keep_freed_memory() -> bool:
    """Make malloc reuse freed blocks instead of unmapping them; True when the C library took the settings.

    Only glibc on Linux is tuned; anywhere else (macOS, musl, Windows) this does nothing.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, _NEVER_TRIM))
