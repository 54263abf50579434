"""Figures drawn in a forked child while this process draws another (the one-shot `assess`, on a spare core).

Matplotlib holds Python's lock while it lays out and renders, so figures drawn in threads would take turns; a
child forked once matplotlib is imported and the diagnosis known draws the figures after the first (`gpu.png`,
`kl_reward.png`) while this process draws the dashboard, and sends back the paths it wrote.

Fork safety: the process has finished polars' parse by then, so polars' idle worker threads exist and are not
copied into the child; the child never calls polars (it draws from the pandas table and numpy arrays already in
memory), glibc's malloc, jemalloc and OpenBLAS prepare themselves for a fork, and the child leaves with
`os._exit`, so nothing of this process is flushed or torn down twice. A child that fails in any way (an exception,
a crash, no fork at all) is answered by drawing its figures here, as without it.

The child's pages are shared copy-on-write with this process, so both pay a page fault for each page they write
after the fork (0.2-0.5 CPU-seconds on a 300,000-step run): it is only worth it when a core is free, which
`spare_core` judges from the load average.
"""

from __future__ import annotations

import os
import pickle
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_CHUNK = 1 << 16


def spare_core() -> bool:
    """Whether a core is likely free for a child: more than one core, and fewer tasks wanting one than cores.

    Judged from the last minute's load average, which counts this process too (and, in a benchmark, the ones before
    it): below the number of cores, some core was idle part of the time; at or above it, every core was busy and a
    child would only add its copy-on-write faults.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    if cores < 2 or not hasattr(os, "fork"):
        return False
    try:
        return os.getloadavg()[0] < cores
    except OSError:  # no load average on this system
        return True


@dataclass
class Child:
    """A forked child drawing figures: its pid and the pipe its paths come back on."""

    pid: int
    answers: int

    def paths(self) -> list[Path] | None:
        """Wait for the child; the paths it wrote, or None when it failed (then draw those figures here)."""
        chunks = []
        while chunk := os.read(self.answers, _CHUNK):
            chunks.append(chunk)
        os.close(self.answers)
        _, status = os.waitpid(self.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0 or not chunks:
            return None
        return [Path(p) for p in pickle.loads(b"".join(chunks))]


def start(draw: Callable[[], list[Path]]) -> Child | None:
    """Fork a child running `draw` (which returns the paths it wrote); None when no child could be made."""
    answers, answer = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns on any fork of a process with threads (polars' idle pool here); the child only draws,
        # as the module docstring says, so the warning does not apply.
        warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks", category=DeprecationWarning)
        try:
            pid = os.fork()
        except OSError:  # too many processes, or no memory for the page tables: drawn here
            pid = -1
    if pid < 0:
        os.close(answers)
        os.close(answer)
        return None
    if pid == 0:
        code = 1
        try:
            os.close(answers)
            written = draw()
            data = memoryview(pickle.dumps([str(p) for p in written]))
            while data:
                data = data[os.write(answer, data[:_CHUNK]):]
            code = 0
        except BaseException:  # any failure: the parent draws these figures itself
            code = 1
        finally:
            os._exit(code)
    os.close(answer)
    return Child(pid, answers)
