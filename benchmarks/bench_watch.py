"""Benchmark: a watch's re-check with `IngestCache` against a fresh `load_run`, on a large live run.

A run is grown the way a trainer grows it (a block of new steps between two checks), and after each
growth both are timed in this one process on the same bytes:

* fresh: `load_run(run)`, what `assessor assess` (or a watch without the cache) does at every check;
* cached: `load_run(run, cache=cache)`, with the cache warmed by the previous checks; it reads only the
  appended bytes and re-normalizes only the files that changed;
* nothing new: a cached re-check when nothing was written (every file is reused).

For scale it also times the rest of a check (diagnosis and the rules judge), which the cache does not touch.

Two runs: a JSONL log (verl-style, written to a temporary folder) and the TensorBoard event
file of `bench_tensorboard.py` (its 200,000-event file, grown record block by record block).

Run from the repo root:

    .venv/bin/python benchmarks/bench_watch.py                 # 100,000 steps x 24 keys JSONL + TB
    .venv/bin/python benchmarks/bench_watch.py --steps 20000   # quick run
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _measure import DATA, REPO

sys.path.insert(0, str(REPO))

from assessor.ingest import load_run
from assessor.ingest.cache import IngestCache
from assessor.pipeline import assess_run

KEYS = ["critic/score/mean", "critic/score/std", "actor/kl_loss", "actor/entropy", "actor/pg_loss",
        "actor/pg_clipfrac", "actor/grad_norm", "response_length/mean", "response_length/clip_ratio",
        "timing_s/gen", "timing_s/update_actor", "timing_s/step"]


def jsonl_lines(steps: int, keys: int) -> list[str]:
    names = (KEYS + [f"extra/metric_{i:02d}" for i in range(max(0, keys - len(KEYS)))])[:keys]
    return [json.dumps({"step": s, "data": {n: math.sin(s * 1e-3 + i) * (1 + i) for i, n in enumerate(names)}})
            for s in range(1, steps + 1)]


def timed(load: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        load()
        times.append(time.perf_counter() - started)
    return min(times)


def grow_and_compare(run: Path, grow: Callable[[int], None], checks: int) -> dict[str, float]:
    """Warm the cache, then `checks` times: grow the run, time a cached and a fresh load on the same bytes."""
    cache = IngestCache()
    load_run(run, cache=cache)
    cached, fresh, idle = [], [], []
    for check in range(checks):
        grow(check)
        started = time.perf_counter()
        cached_run = load_run(run, cache=cache)
        cached.append(time.perf_counter() - started)
        assert cache.stats.appended >= 1, cache.stats
        idle.append(timed(lambda: load_run(run, cache=cache)))
        fresh_run = None

        def load_fresh() -> None:
            nonlocal fresh_run
            fresh_run = load_run(run)

        fresh.append(timed(load_fresh, repeat=1))
        assert fresh_run is not None and cached_run.metrics.equals(fresh_run.metrics)  # same table
    # For scale: what the rest of a check (diagnosis and the rules judge) costs on the same run.
    judged = timed(lambda: assess_run(cached_run, "rules", plots=False), repeat=1)
    return {"fresh_s": statistics.median(fresh), "cached_s": statistics.median(cached),
            "nothing_new_s": statistics.median(idle), "diagnose_and_judge_s": judged}


def bench_jsonl(steps: int, keys: int, block: int, checks: int) -> dict[str, float]:
    lines = jsonl_lines(steps, keys)
    head = steps - block * checks
    with tempfile.TemporaryDirectory(prefix="bench-watch-") as scratch:
        run = Path(scratch)
        log = run / "metrics.jsonl"
        log.write_text("\n".join(lines[:head]) + "\n", encoding="utf-8")

        def grow(check: int) -> None:
            start = head + check * block
            with log.open("a", encoding="utf-8") as handle:
                handle.write("\n".join(lines[start:start + block]) + "\n")

        result = grow_and_compare(run, grow, checks)
        result["file_mib"] = log.stat().st_size / 2**20
    return result


def bench_tensorboard(block_fraction: float, checks: int) -> dict[str, float] | None:
    source = DATA / "tensorboard_200000x40"
    files = list(source.glob("events.out.tfevents.*"))
    if not files:
        print("no TensorBoard file: run benchmarks/bench_tensorboard.py --events 200000 once", file=sys.stderr)
        return None
    data = files[0].read_bytes()
    block = int(len(data) * block_fraction)
    head = len(data) - block * checks
    with tempfile.TemporaryDirectory(prefix="bench-watch-") as scratch:
        target = Path(scratch) / files[0].name
        target.write_bytes(data[:head])  # cut anywhere: a partial record is what a live writer leaves

        def grow(check: int) -> None:
            start = head + check * block
            with target.open("ab") as handle:
                handle.write(data[start:start + block])

        result = grow_and_compare(Path(scratch), grow, checks)
        result["file_mib"] = len(data) / 2**20
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--keys", type=int, default=24)
    parser.add_argument("--block", type=int, default=100, help="steps appended between two checks")
    parser.add_argument("--checks", type=int, default=5)
    args = parser.parse_args()
    results = {"jsonl": bench_jsonl(args.steps, args.keys, args.block, args.checks)}
    tensorboard = bench_tensorboard(0.002, args.checks)
    if tensorboard is not None:
        results["tensorboard"] = tensorboard
    for name, result in results.items():
        ratio = result["cached_s"] / result["fresh_s"]
        print(f"{name}: {result['file_mib']:.0f} MiB; fresh load {result['fresh_s']:.3f} s, cached re-check "
              f"{result['cached_s']:.3f} s (ratio {ratio:.3f}, {1 / ratio:.0f}x faster), nothing new "
              f"{result['nothing_new_s']:.4f} s; diagnosis + rules judge {result['diagnose_and_judge_s']:.2f} s")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
