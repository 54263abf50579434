"""Benchmark: assessor's TensorBoard reader against TensorBoard's own EventAccumulator.

Writes (once, cached under benchmarks/_data/) an event file with TensorBoard's EventFileWriter, then loads
it in fresh subprocesses, each way, and reports:

* load time: `load_run` on the folder (through to the canonical metrics table) vs
  `EventAccumulator(path, size_guidance={"scalars": 0})`
  `.Reload()` plus pulling every tag's scalars into step/value/wall-time arrays;
* peak memory: the rise of the process's peak RSS (VmHWM) over its RSS after imports, against the file size.

Run from the repo root:

    .venv/bin/python benchmarks/bench_tensorboard.py                  # 2,000,000 events, 40 tags
    .venv/bin/python benchmarks/bench_tensorboard.py --events 200000  # quick run
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from _measure import DATA, REPO, alternate, measure_here, warm_page_cache


def make_event_file(events: int, tags: int) -> Path:
    """The cached benchmark file; written with TensorBoard's own writer, step-major like a trainer logs."""
    folder = DATA / f"tensorboard_{events}x{tags}"
    done = folder / "DONE"
    if done.exists():
        return next(folder.glob("events.out.tfevents.*"))
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    shutil.rmtree(folder, ignore_errors=True)
    names = [f"train/metric_{i:02d}" for i in range(tags)]
    steps = math.ceil(events / tags)
    print(f"writing {steps * tags:,} events to {folder} (once; EventFileWriter is slow) ...", file=sys.stderr)
    started = time.perf_counter()
    writer = EventFileWriter(str(folder), max_queue_size=10_000, flush_secs=600)
    for step in range(steps):
        for i, tag in enumerate(names):
            value = math.sin(step * 1e-3 + i) * (1 + i)
            summary = Summary(value=[Summary.Value(tag=tag, simple_value=value)])
            writer.add_event(Event(wall_time=1.7e9 + step + i * 1e-4, step=step, summary=summary))
    writer.close()
    done.write_text(f"{steps * tags}\n", encoding="utf-8")
    print(f"written in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return next(folder.glob("events.out.tfevents.*"))


def worker(kind: str, path: Path) -> dict[str, Any]:
    """One load in this (fresh) process; everything either way needs is imported before the baseline."""
    import numpy as np

    if kind == "assessor":
        from assessor import load_run

        def load() -> int:
            return len(load_run(path.parent).metrics)  # the whole pipeline, to the canonical table
    else:
        from tensorboard.backend.event_processing import event_file_loader  # noqa: F401  (used by Reload)
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
        from tensorboard.compat import tf  # noqa: F401  (the stub Reload would import lazily)

        def load() -> int:
            accumulator = EventAccumulator(str(path), size_guidance={"scalars": 0})
            accumulator.Reload()
            arrays = {}
            for tag in accumulator.Tags()["scalars"]:
                scalars = accumulator.Scalars(tag)
                arrays[tag] = (
                    np.array([s.step for s in scalars], dtype=np.int64),
                    np.array([s.value for s in scalars], dtype=np.float64),
                    np.array([s.wall_time for s in scalars], dtype=np.float64),
                )
            return sum(len(a[0]) for a in arrays.values())

    return measure_here(load)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=2_000_000, help="scalar events in the file")
    parser.add_argument("--tags", type=int, default=40, help="distinct tags")
    parser.add_argument("--rounds", type=int, default=3, help="loads per reader; the fastest counts")
    parser.add_argument("--worker", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], Path(args.worker[1]))))
        return

    path = make_event_file(args.events, args.tags)
    size = path.stat().st_size
    warm_page_cache(path)
    results = alternate(__file__, ["assessor", "EventAccumulator"], path, args.rounds)
    ours, theirs = results["assessor"], results["EventAccumulator"]
    points = {r["points"] for r in ours + theirs}
    if len(points) != 1:
        sys.exit(f"the readers disagree on the number of points: {sorted(points)}")

    t_ours, t_ea = min(r["seconds"] for r in ours), min(r["seconds"] for r in theirs)
    m_ours, m_ea = max(r["peak_rise_bytes"] for r in ours), max(r["peak_rise_bytes"] for r in theirs)
    mib = 2**20
    print(f"\nEvent file: {path.relative_to(REPO)} ({size / mib:.1f} MiB, {points.pop():,} scalar points, "
          f"{args.tags} tags); best of {args.rounds} fresh-process loads each.\n")
    print("| measure | assessor `load_run` | EventAccumulator (`scalars: 0`) | assessor / EA |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| load time | {t_ours:.2f} s | {t_ea:.2f} s | {t_ours / t_ea:.2f} |")
    print(f"| peak memory rise | {m_ours / mib:.0f} MiB | {m_ea / mib:.0f} MiB | {m_ours / m_ea:.2f} |")
    print(f"| peak memory rise / file size | {m_ours / size:.2f} | {m_ea / size:.2f} | |")
    print(f"\nCommand: {Path(sys.executable)} {' '.join(sys.argv)}")


if __name__ == "__main__":
    main()
