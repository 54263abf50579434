"""One-shot commands load numpy with one BLAS thread; see `assessor.blas`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from assessor.blas import one_blas_thread

# Prints what `one_blas_thread` returned, OpenBLAS's thread count (or -1 when numpy's OpenBLAS is not found) and
# whether the variable is left in the environment.
_THREADS = """
import ctypes, glob, os, sys
from assessor.blas import one_blas_thread
done = one_blas_thread() if sys.argv[1] == "one" else None
import numpy
count = -1
for lib in glob.glob(os.path.join(os.path.dirname(numpy.__file__) + ".libs", "*openblas*")):
    for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_", "openblas_get_num_threads"):
        get = getattr(ctypes.CDLL(lib), name, None)
        if get is not None:
            count = get()
            break
print(done, count, "OPENBLAS_NUM_THREADS" in os.environ)
"""


def _threads(mode: str, **variables: str) -> tuple[str, int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    env.update(variables)
    done, count, left = subprocess.run([sys.executable, "-c", _THREADS, mode], capture_output=True, text=True,
                                       env=env, check=True).stdout.split()
    return done, int(count), left


def test_numpy_loads_with_one_blas_thread_and_the_environment_is_restored():
    _, default, _ = _threads("default")
    if default <= 1:
        pytest.skip("numpy's OpenBLAS not found, or one core: one thread anyway")
    done, count, left = _threads("one")
    assert (done, count, left) == ("True", 1, "False")


def test_numpy_already_loaded_is_left_alone():
    import numpy  # noqa: F401

    assert one_blas_thread() is False


def test_a_thread_count_the_user_set_is_kept():
    _, default, _ = _threads("default")
    if default <= 1:
        pytest.skip("numpy's OpenBLAS not found, or one core")
    assert _threads("one", OPENBLAS_NUM_THREADS=str(default)) == ("True", default, "True")


@pytest.mark.parametrize("command", ["assess", "diagnose"])
def test_the_one_shot_commands_call_it(monkeypatch, tmp_path, command):
    from click.testing import CliRunner

    from assessor.cli import cli

    calls = []
    monkeypatch.setattr("assessor.blas.one_blas_thread", lambda: calls.append(1) or True)
    CliRunner().invoke(cli, [command, str(tmp_path / "missing")])
    assert calls == [1]
