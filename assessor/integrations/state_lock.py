"""An advisory lock that serialises the read-check-write of one watch state file across processes.

Two `watch --once` from overlapping cron jobs (or a bot's watch and a cron job on one run) must not both read
the same state, both decide the verdict is news, and both notify. The lock is `fcntl.flock` on a file beside
the state (`<state>.lock`; the state itself is replaced on every save, so it cannot carry the lock). The
kernel drops it when its holder exits, however it exits, so there are no stale locks to clean up. Where
`fcntl` does not exist (Windows) checks are not serialised.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from assessor.errors import AssessorError

LOCK_WAIT_S = 60.0  # a check with an LLM judge can take this long; cron intervals are minutes
_POLL_S = 0.05


class StateLockedError(AssessorError):
    """Another check of the same run held the state file's lock for longer than we waited (exit code 2)."""


def lock_path(state_path: Path) -> Path:
    """The lock file of a state file: `<state>.lock`, beside it."""
    return state_path.with_name(state_path.name + ".lock")


@contextmanager
def state_lock(state_path: Path, wait: float | None = None) -> Iterator[None]:
    """Hold the state file's lock for the block, waiting up to `wait` seconds (`LOCK_WAIT_S`) for another holder.

    Raises:
        StateLockedError: another process (or thread) still holds it after `wait` seconds.
    """
    if sys.platform == "win32":  # pragma: no cover - no flock there
        yield
        return
    import fcntl

    wait = LOCK_WAIT_S if wait is None else wait
    path = lock_path(state_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StateLockedError(
                        f"{state_path}: another check of this run has held its lock ({path.name}) for over "
                        f"{wait:.0f} s, so this check was skipped; the next scheduled check will run as usual"
                    ) from None
                time.sleep(_POLL_S)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
