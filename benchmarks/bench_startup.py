"""Benchmark: `assessor --version` and `assessor --help` in a fresh process, against `python -c pass`.

Each command is run `--rounds` times, alternating, and the median wall time is reported with its ratio to an
empty interpreter's start (target: both under 0.3 s).

    .venv/bin/python benchmarks/bench_startup.py
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    cli = shutil.which("assessor", path=str(Path(sys.executable).parent)) or "assessor"
    commands = {"python -c pass (baseline)": [sys.executable, "-c", "pass"], "assessor --version": [cli, "--version"],
                "assessor --help": [cli, "--help"]}
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, command in commands.items():
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            times[name].append(time.perf_counter() - started)
    base = statistics.median(times["python -c pass (baseline)"])
    print(f"median of {args.rounds} fresh processes, alternating\n")
    print("| command | seconds | ratio | target |")
    print("|---|---|---|---|")
    for name, values in times.items():
        target = "" if name.startswith("python") else "<= 0.3 s"
        print(f"| `{name}` | {statistics.median(values):.3f} | {statistics.median(values) / base:.2f}x | {target} |")
    print("\ncommand: python benchmarks/bench_startup.py")


if __name__ == "__main__":
    main()
