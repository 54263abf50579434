"""Benchmark: the CSV reader, columnar (polars) against the csv module's row-by-row path, on a long step log.

Writes (once, cached under benchmarks/_data/) a 300,000-step CSV step log with ~35 metric columns (the verl
metric names of `make_jsonl_run.py`, an eval column filled every 500 steps, a few `nan` cells), then times in
fresh processes, alternated round by round on the same (page-cached) file:

* `polars.read_csv`: the baseline, a native CSV reader (types inferred);
* `pyarrow.csv.read_csv`: the other candidate library (when pyarrow is installed; not a dependency);
* `reader, csv module`: `CsvReader.read` with the columnar path switched off (what the reader did before);
* `reader, columnar`: `CsvReader.read` as shipped (polars reads plain step logs into columns).

Run from the repo root:

    .venv/bin/python benchmarks/bench_csv.py                  # 300,000 steps, 3 rounds
    .venv/bin/python benchmarks/bench_csv.py --steps 30000 --rounds 1
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path
from typing import Any, TextIO

from _measure import DATA, MIB, alternate, cached_file, measure_here, warm_page_cache
from make_jsonl_run import VERL_KEYS

VAL_KEY = "val-core/gsm8k/reward/mean@1"


def make_csv(steps: int) -> Path:
    """The run's `metrics.csv` (written once, then reused)."""

    def write(handle: TextIO) -> None:
        rng = random.Random(0)
        handle.write(",".join(["step", *VERL_KEYS, VAL_KEY]) + "\n")
        for step in range(1, steps + 1):
            cells = [f"{rng.random():.6g}" for _ in VERL_KEYS]
            if step % 977 == 0:
                cells[7] = "nan"
            handle.write(",".join([str(step), *cells, f"{rng.random():.6g}" if step % 500 == 0 else ""]) + "\n")

    return cached_file(DATA / f"csv_{steps}" / "metrics.csv", write)


def worker(kind: str, path: Path) -> dict[str, Any]:
    """One read in this (fresh) process; what each side imports is imported before the clock starts."""
    import polars as pl

    from assessor.ingest import csv_log

    if kind == "polars.read_csv":
        return measure_here(lambda: pl.read_csv(path).height)
    if kind == "pyarrow.csv.read_csv":
        import pyarrow.csv

        return measure_here(lambda: pyarrow.csv.read_csv(path).num_rows)
    if kind == "reader, csv module":
        csv_log._COLUMNAR_BYTES = 1 << 62  # the columnar path off: every file goes to the csv module
    return measure_here(lambda: len(csv_log.READER.read(path).frame))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        import json

        print(json.dumps(worker(args.worker[0], Path(args.worker[1]))))
        return
    path = make_csv(args.steps)
    warm_page_cache(path)
    kinds = ["polars.read_csv", "pyarrow.csv.read_csv", "reader, csv module", "reader, columnar"]
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        kinds.remove("pyarrow.csv.read_csv")
        print("pyarrow is not installed; its row is skipped", file=sys.stderr)
    results = alternate(__file__, kinds, path, args.rounds)
    base = statistics.median(r["seconds"] for r in results["polars.read_csv"])
    print(f"\n{args.steps:,}-step CSV step log, {len(VERL_KEYS) + 1} metric columns, "
          f"{path.stat().st_size / MIB:.0f} MiB; median of {args.rounds} fresh processes, kinds alternated "
          "round by round\n")
    print("| measure | seconds | ratio | peak memory rise |")
    print("|---|---|---|---|")
    for kind in kinds:
        seconds = statistics.median(r["seconds"] for r in results[kind])
        rise = statistics.median(r["peak_rise_bytes"] for r in results[kind]) / MIB
        print(f"| {kind}{' (baseline)' if kind == 'polars.read_csv' else ''} | {seconds:.2f} | {seconds / base:.1f}x "
              f"| {rise:.0f} MiB |")
    print(f"\ncommand: python benchmarks/bench_csv.py --steps {args.steps} --rounds {args.rounds}")


if __name__ == "__main__":
    main()
