"""Benchmark: the ingest half of issue 13, as ratios against a baseline timed in the same run.

* `jsonl`: `load_run` of a 300,000-step, 35-metric verl JSONL run (~425 MB, `make_jsonl_run.py`) against
  `polars.read_ndjson` of the same file, each in fresh processes, alternated; also `assess` (load, diagnose,
  rules judge; no plots) for scale.
* `recheck`: `assessor watch --once` on a 100,000-step JSONL run, first check (empty caches) against a
  re-check in a new process after 50 more steps were appended (immaterial: it holds the first check's verdict,
  `assessor.integrations.hold`), and against a `--full` re-check after 50 more (what a material append costs:
  the whole diagnosis, the on-disk ingest cache warm).

Writes benchmarks/results/ingest.json and prints a markdown table. Run from the repo root:

    .venv/bin/python benchmarks/bench_ingest.py                          # both, full size
    .venv/bin/python benchmarks/bench_ingest.py --steps 30000 --recheck-steps 10000   # quick run
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _measure import MIB, REPO, alternate, measure_here, warm_page_cache
from make_jsonl_run import make_jsonl

RESULTS = REPO / "benchmarks" / "results"


def worker(kind: str, path: Path) -> dict[str, Any]:
    """One load in this (fresh) process; what either side imports is imported before the clock starts."""
    import polars as pl

    from assessor import load_run
    from assessor.pipeline import assess_run

    if kind == "polars.read_ndjson":
        return measure_here(lambda: pl.read_ndjson(path).height)
    if kind == "assessor load_run":
        return measure_here(lambda: len(load_run(path.parent).metrics))
    return measure_here(lambda: len(assess_run(load_run(path.parent), "rules", plots=False).diagnostics.signals))


def bench_jsonl(steps: int, rounds: int) -> dict[str, Any]:
    path = make_jsonl(steps)
    warm_page_cache(path)
    kinds = ["polars.read_ndjson", "assessor load_run", "assessor assess (no plots)"]
    results = alternate(__file__, kinds, path, rounds)
    out: dict[str, Any] = {"steps": steps, "file_mib": path.stat().st_size / MIB, "rounds": rounds}
    for kind in kinds:
        out[kind] = {"seconds": statistics.median(r["seconds"] for r in results[kind]),
                     "peak_rise_mib": statistics.median(r["peak_rise_bytes"] for r in results[kind]) / MIB}
    base = out["polars.read_ndjson"]["seconds"]
    for kind in kinds[1:]:
        out[kind]["ratio_to_polars"] = out[kind]["seconds"] / base
    return out


def watch_once(run: Path, state: Path, env: dict[str, str], *extra: str) -> tuple[float, str]:
    """One `watch --once` in a new process: its wall seconds and its stderr (what the check did)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "assessor", "watch", str(run), "--once", "--state", str(state),
                           "--idle-timeout", "30d", *extra], capture_output=True, text=True, env=env, cwd=REPO)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 10, 11):
        raise RuntimeError(f"watch --once failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds, done.stderr


def bench_recheck(steps: int, rounds: int, block: int = 50) -> dict[str, Any]:
    """First check, then a re-check after `block` new steps (held when they are immaterial), then one more
    `block` re-checked with `--full` (what any material append costs: the whole diagnosis, from the disk cache)."""
    source = make_jsonl(steps + 2 * block)
    lines = source.read_bytes().splitlines(keepends=True)
    firsts, rechecks, fulls, held = [], [], [], []
    for round_ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="bench-recheck-") as scratch:
            root = Path(scratch)
            run, state = root / "run", root / "state.json"
            run.mkdir()
            env = {**os.environ, "XDG_CACHE_HOME": str(root / "cache"), "XDG_STATE_HOME": str(root / "state")}
            log = run / "metrics.jsonl"
            log.write_bytes(b"".join(lines[:steps]))
            firsts.append(watch_once(run, state, env)[0])
            with log.open("ab") as handle:
                handle.write(b"".join(lines[steps:steps + block]))
            seconds, said = watch_once(run, state, env)
            rechecks.append(seconds)
            held.append("verdict held" in said)
            with log.open("ab") as handle:
                handle.write(b"".join(lines[steps + block:steps + 2 * block]))
            fulls.append(watch_once(run, state, env, "--full")[0])
        print(f"round {round_ + 1}: first check {firsts[-1]:.2f} s, re-check after {block} steps {rechecks[-1]:.2f} s "
              f"({'held' if held[-1] else 'full'}), full re-check {fulls[-1]:.2f} s", file=sys.stderr)
    first = statistics.median(firsts)
    return {"steps": steps, "appended": block, "rounds": rounds, "first_check_s": first,
            "recheck_s": statistics.median(rechecks), "ratio": statistics.median(rechecks) / first,
            "held": all(held), "full_recheck_s": statistics.median(fulls),
            "full_ratio": statistics.median(fulls) / first}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300_000)
    parser.add_argument("--recheck-steps", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=["jsonl", "recheck"])
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], Path(args.worker[1]))))
        return
    results: dict[str, Any] = {}
    if args.only in (None, "jsonl"):
        results["jsonl"] = bench_jsonl(args.steps, args.rounds)
    if args.only in (None, "recheck"):
        results["recheck"] = bench_recheck(args.recheck_steps, args.rounds)
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "ingest.json" if args.only is None else f"ingest_{args.only}.json"
    (RESULTS / name).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print("| measure | seconds | ratio | target |")
    print("|---|---|---|---|")
    if "jsonl" in results:
        jsonl = results["jsonl"]
        base = jsonl["polars.read_ndjson"]
        print(f"| polars.read_ndjson, {jsonl['steps']:,} steps, {jsonl['file_mib']:.0f} MiB (baseline) | "
              f"{base['seconds']:.2f} | 1.00 | |")
        for kind in ("assessor load_run", "assessor assess (no plots)"):
            print(f"| {kind} | {jsonl[kind]['seconds']:.2f} | {jsonl[kind]['ratio_to_polars']:.2f}x | "
                  f"{'<= 3x (whole assess)' if 'assess ' in kind else ''} |")
    if "recheck" in results:
        recheck = results["recheck"]
        print(f"| watch --once, first check, {recheck['steps']:,} steps (baseline) | {recheck['first_check_s']:.2f} "
              "| 1.00 | |")
        how = "verdict held" if recheck["held"] else "NOT held: diagnosed in full"
        print(f"| watch --once re-check after {recheck['appended']} new steps ({how}) | {recheck['recheck_s']:.2f} | "
              f"{recheck['ratio']:.2f}x | <= 0.2x |")
        print(f"| watch --once --full re-check after {recheck['appended']} more (any material append) | "
              f"{recheck['full_recheck_s']:.2f} | {recheck['full_ratio']:.2f}x | |")
    print(f"\ncommand: python benchmarks/bench_ingest.py --steps {args.steps} --recheck-steps {args.recheck_steps} "
          f"--rounds {args.rounds}")


if __name__ == "__main__":
    main()
