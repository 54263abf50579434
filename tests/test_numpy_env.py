"""One-shot commands load numpy with one BLAS thread and no huge-page advice; see `assessor.numpy_env`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from assessor.numpy_env import SETTINGS, import_numpy_for_one_shot

# Prints what `import_numpy_for_one_shot` returned, OpenBLAS's thread count (-1 when numpy's OpenBLAS is not
# found), whether numpy advises huge pages, and whether any of the variables is left in the environment.
_STATE = """
import ctypes, glob, os, sys
from assessor.numpy_env import SETTINGS, import_numpy_for_one_shot
done = import_numpy_for_one_shot() if sys.argv[1] == "one" else None
import numpy
count = -1
for lib in glob.glob(os.path.join(os.path.dirname(numpy.__file__) + ".libs", "*openblas*")):
    for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_", "openblas_get_num_threads"):
        get = getattr(ctypes.CDLL(lib), name, None)
        if get is not None:
            count = get()
            break
from numpy._core.multiarray import _set_madvise_hugepage
hugepages = _set_madvise_hugepage(False)  # returns the setting it replaces
print(done, count, hugepages, any(name in os.environ for name in SETTINGS))
"""


def _state(mode: str, **variables: str) -> tuple[str, int, str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    env.update(variables)
    done, count, hugepages, left = subprocess.run([sys.executable, "-c", _STATE, mode], capture_output=True,
                                                  text=True, env=env, check=True).stdout.split()
    return done, int(count), hugepages, left


def test_numpy_loads_with_one_blas_thread_no_huge_pages_and_the_environment_is_restored():
    _, default_threads, default_hugepages, _ = _state("default")
    done, count, hugepages, left = _state("one")
    assert (done, hugepages, left) == ("True", "False", "False")
    if default_threads <= 1:
        pytest.skip("numpy's OpenBLAS not found, or one core: one thread anyway")
    assert count == 1
    assert default_hugepages == "True" or not sys.platform.startswith("linux")  # what the setting changes


def test_numpy_already_loaded_is_left_alone():
    import numpy  # noqa: F401

    assert import_numpy_for_one_shot() is False


def test_settings_the_user_made_are_kept():
    _, default_threads, _, _ = _state("default")
    if default_threads <= 1:
        pytest.skip("numpy's OpenBLAS not found, or one core")
    kept = _state("one", OPENBLAS_NUM_THREADS=str(default_threads), NUMPY_MADVISE_HUGEPAGE="1")
    assert kept == ("True", default_threads, "True", "True")


@pytest.mark.parametrize("command", ["assess", "diagnose"])
def test_the_one_shot_commands_call_it(monkeypatch, tmp_path, command):
    from click.testing import CliRunner

    from assessor.cli import cli

    calls = []
    monkeypatch.setattr("assessor.numpy_env.import_numpy_for_one_shot", lambda: calls.append(1) or True)
    CliRunner().invoke(cli, [command, str(tmp_path / "missing")])
    assert calls == [1]
