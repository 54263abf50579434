"""Shared by the benchmarks: one load per fresh process, its time and its own peak memory rise."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "benchmarks" / "_data"
MIB = 2**20


def _status_kib(field: str) -> int:
    with open("/proc/self/status", encoding="utf-8") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status (the benchmarks need Linux)")


def measure_here(load: Callable[[], int]) -> dict[str, Any]:
    """Time `load()` (which returns a count of points) and the rise of this process's peak RSS during it.

    The peak is VmHWM, reset to the current RSS just before the load ("5" > clear_refs). Not ru_maxrss:
    Linux carries the parent's high-water mark across fork+exec, which would hide the child's own peak.
    """
    with open("/proc/self/clear_refs", "w", encoding="utf-8") as clear_refs:
        clear_refs.write("5")
    base_rss = _status_kib("VmRSS")
    started = time.perf_counter()
    points = load()
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "points": points, "peak_rise_bytes": (_status_kib("VmHWM") - base_rss) * 1024}


def in_fresh_process(script: str, kind: str, path: Path) -> dict[str, Any]:
    """Run `script --worker KIND PATH` in a new interpreter and return the JSON it prints last."""
    out = subprocess.run(
        [sys.executable, script, "--worker", kind, str(path)], check=True, capture_output=True, text=True, cwd=REPO
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def cached_file(path: Path, write: Callable[[TextIO], None]) -> Path:
    """`path`, written once by `write(handle)` and reused after: a large generated input costs its time only once.

    Written beside itself and renamed into place, so an interrupted write never leaves half a file to be reused.
    """
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    with partial.open("w", encoding="utf-8") as handle:
        write(handle)
    partial.replace(path)
    return path


def warm_page_cache(path: Path) -> None:
    """Read the file once so that neither side pays for the disk."""
    with path.open("rb") as handle:
        while handle.read(1 << 24):
            pass


def alternate(script: str, kinds: list[str], path: Path, rounds: int) -> dict[str, list[dict[str, Any]]]:
    """Interleave the kinds round by round, so load on a shared machine hits both alike."""
    results: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
    for round_ in range(rounds):
        for kind in kinds:
            result = in_fresh_process(script, kind, path)
            results[kind].append(result)
            print(f"round {round_ + 1}: {kind}: {result['seconds']:.2f} s, {result['points']:,} points, "
                  f"peak +{result['peak_rise_bytes'] / MIB:.0f} MiB", file=sys.stderr)
    return results
