"""Write a large verl-style JSON-lines run for the ingest benchmarks (cached under benchmarks/_data/).

One `{"step": N, "data": {...}}` object a line, as verl's file logger writes it: about 35 metrics per
step under verl's slash names, eval rows every 500 steps, a few NaN values (written as null, as verl
does). 300,000 steps come to about 400 MB.

    .venv/bin/python benchmarks/make_jsonl_run.py --steps 300000
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import TextIO

from _measure import DATA, cached_file

VERL_KEYS = [
    "actor/entropy", "actor/kl_loss", "actor/kl_coef", "actor/pg_loss", "actor/pg_clipfrac",
    "actor/pg_clipfrac_lower", "actor/ppo_kl", "actor/grad_norm", "actor/lr", "critic/score/mean",
    "critic/score/max", "critic/score/min", "critic/rewards/mean", "critic/rewards/max", "critic/rewards/min",
    "critic/advantages/mean", "critic/advantages/max", "critic/advantages/min", "critic/returns/mean",
    "critic/returns/max", "critic/returns/min", "response_length/mean", "response_length/max",
    "response_length/min", "response_length/clip_ratio", "prompt_length/mean", "prompt_length/max",
    "prompt_length/min", "timing_s/gen", "timing_s/reward", "timing_s/old_log_prob", "timing_s/update_actor",
    "timing_s/step", "perf/throughput", "perf/max_memory_allocated_gb",
]


def make_jsonl(steps: int) -> Path:
    """The run's `metrics.jsonl` (written once, then reused)."""

    def write(handle: TextIO) -> None:
        rng = random.Random(0)
        for step in range(1, steps + 1):
            data: dict[str, float | None] = {key: rng.random() for key in VERL_KEYS}
            if step % 977 == 0:
                data["actor/grad_norm"] = None  # verl writes NaN as null
            if step % 500 == 0:
                data["val-core/gsm8k/reward/mean@1"] = rng.random()
            handle.write(json.dumps({"step": step, "data": data}) + "\n")

    return cached_file(DATA / f"verl_jsonl_{steps}" / "metrics.jsonl", write)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300_000)
    args = parser.parse_args()
    path = make_jsonl(args.steps)
    print(f"{path}: {path.stat().st_size / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
