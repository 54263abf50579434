"""`assess` makes malloc reuse freed big blocks (fewer page faults); see `assessor.allocator`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from assessor.allocator import keep_freed_memory

# Frees a 64 MiB array, allocates another, prints the minor page faults the second one cost. numpy's own huge-page
# advice is off so that an unmapped-and-remapped block costs one fault per 4 KiB page, as on most machines.
_SECOND_BLOCK_FAULTS = """
import resource, sys
import numpy as np
from assessor.allocator import keep_freed_memory
tuned = keep_freed_memory() if sys.argv[1] == "tuned" else None
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
first = np.ones(8_000_000)
del first
before = faults()
second = np.ones(8_000_000)
print(tuned, faults() - before)
"""


def _second_block_faults(mode: str) -> tuple[str, int]:
    env = {**os.environ, "NUMPY_MADVISE_HUGEPAGE": "0"}
    out = subprocess.run([sys.executable, "-c", _SECOND_BLOCK_FAULTS, mode], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    return out[0], int(out[1])


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
                    reason="tunes glibc's malloc only")
def test_a_freed_column_is_reused_instead_of_faulted_in_again():
    tuned, faults = _second_block_faults("tuned")
    _, untuned_faults = _second_block_faults("untuned")
    assert tuned == "True"
    assert untuned_faults > 10_000  # 64 MiB in 4 KiB pages: what every big array costs without the setting
    assert faults < 1_000


def test_elsewhere_it_does_nothing(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert keep_freed_memory() is False


def test_assess_sets_it(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from assessor.cli import cli

    calls = []
    monkeypatch.setattr("assessor.allocator.keep_freed_memory", lambda: calls.append(1) or True)
    CliRunner().invoke(cli, ["assess", str(tmp_path / "missing"), "--judge", "rules"])
    assert calls == [1]
