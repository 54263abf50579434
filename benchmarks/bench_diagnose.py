"""Benchmark: `diagnose` (and `render_plots`) on a 100,000-step, ~40-metric run, against its own load time.

Uses the trainer_state.json written by bench_trainer_state.py (made here if missing). Each phase is
timed in one fresh process, several rounds; the ratio diagnose / load is what the issue targets (<= 1),
and the plots are reported in seconds (target: under 3 s).

    .venv/bin/python benchmarks/bench_diagnose.py              # 100,000 steps
    .venv/bin/python benchmarks/bench_diagnose.py --steps 10000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _measure import REPO
from bench_trainer_state import make_state


def worker(path: Path) -> dict[str, Any]:
    from assessor import diagnose, load_run

    started = time.perf_counter()
    run = load_run(path.parent)
    loaded = time.perf_counter()
    diagnostics = diagnose(run)
    diagnosed = time.perf_counter()
    plots_s = None
    try:
        from assessor.plots import render_plots
    except ImportError:
        render_plots = None  # type: ignore[assignment]
    if render_plots is not None:
        with tempfile.TemporaryDirectory() as out:
            before = time.perf_counter()
            render_plots(run, diagnostics, Path(out))
            plots_s = time.perf_counter() - before
    return {"load_s": loaded - started, "diagnose_s": diagnosed - loaded, "plots_s": plots_s,
            "signals": len(diagnostics.signals), "findings": len(diagnostics.findings)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(Path(args.worker))))
        return
    path = make_state(args.steps)
    results = []
    for round_ in range(args.rounds):
        out = subprocess.run([sys.executable, __file__, "--worker", str(path)], check=True, capture_output=True,
                             text=True, cwd=REPO)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        results.append(result)
        print(f"round {round_ + 1}: {result}", file=sys.stderr)

    def median(key: str) -> float:
        values = sorted(r[key] for r in results)
        return float(values[len(values) // 2])

    load, diag = median("load_s"), median("diagnose_s")
    print(f"\n{args.steps:,}-step trainer_state.json; {results[0]['signals']} signals read; median of {args.rounds} "
          "fresh processes\n")
    print("| measure | seconds | ratio | target |")
    print("|---|---|---|---|")
    print(f"| load_run (baseline) | {load:.2f} | 1.00 | |")
    print(f"| diagnose | {diag:.2f} | {diag / load:.2f}x load | <= 1x load |")
    if results[0]["plots_s"] is not None:
        plots = median("plots_s")
        print(f"| render_plots | {plots:.2f} | | < 3 s |")
    print(f"\ncommand: python benchmarks/bench_diagnose.py --steps {args.steps}")


if __name__ == "__main__":
    main()
