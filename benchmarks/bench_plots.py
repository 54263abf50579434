"""Benchmark: `render_plots` on a synthetic 100,000-step, ~40-metric GRPO run (target: under 3 s).

The run is the TRL `trainer_state.json` that `bench_trainer_state.py` writes under benchmarks/_data/
(100,000 logged steps, about 40 metrics per row, eval every 500 steps, a few NaNs); it is written here too
when missing. Loading and diagnosing are timed separately and are not part of the figure budget.

Run from the repo root:

    .venv/bin/python benchmarks/bench_plots.py                 # 100,000 steps
    .venv/bin/python benchmarks/bench_plots.py --steps 10000   # quick run
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_trainer_state import make_state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="renders timed; the median is reported")
    args = parser.parse_args()

    from assessor import load_run
    from assessor.diagnose import diagnose
    from assessor.plots import render_plots

    path = make_state(args.steps)
    started = time.perf_counter()
    run = load_run(path.parent)
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    diagnostics = diagnose(run)
    diagnose_s = time.perf_counter() - started
    metrics = len(run.metric_names("train"))

    seconds = []
    with tempfile.TemporaryDirectory() as out:
        for round_ in range(args.repeat):
            started = time.perf_counter()
            written = render_plots(run, diagnostics, Path(out))
            seconds.append(time.perf_counter() - started)
            print(f"round {round_ + 1}: {seconds[-1]:.2f} s, {len(written)} figures", file=sys.stderr)
    median = statistics.median(seconds)
    print(f"synthetic run: {args.steps:,} steps, {metrics} train metrics, {len(run.metrics):,} values; "
          f"load {load_s:.1f} s, diagnose {diagnose_s:.1f} s (not counted)")
    print()
    print("| measure | seconds | target |")
    print("|---|---|---|")
    print(f"| render_plots (dashboard + kl_reward + gpu), median of {args.repeat} | {median:.2f} s | < 3 s |")
    print()
    print(f"command: python benchmarks/bench_plots.py --steps {args.steps}")


if __name__ == "__main__":
    main()
