"""Benchmark: `load_run` on a large TRL `trainer_state.json` against `json.load` of the same file.

Writes (once, cached under benchmarks/_data/) a trainer_state.json with 100,000 logged steps and about 40
GRPO metrics per row, written exactly as transformers does (`indent=2, sort_keys=True`), with eval rows
every 500 steps and a few NaN values. Then, in fresh subprocesses:

* load time: `assessor.load_run(dir)` (the whole pipeline to the canonical table) vs `json.load(file)`;
* peak memory: the rise of the process's peak RSS (VmHWM) over its RSS after imports, against the file size.

Run from the repo root:

    .venv/bin/python benchmarks/bench_trainer_state.py                 # 100,000 steps
    .venv/bin/python benchmarks/bench_trainer_state.py --steps 10000   # quick run
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path
from typing import Any

from _measure import DATA, alternate, measure_here, warm_page_cache

GRPO_KEYS = [
    "clip_ratio/high_max", "clip_ratio/high_mean", "clip_ratio/low_mean", "clip_ratio/low_min",
    "clip_ratio/region_mean", "completions/clipped_ratio", "completions/max_length",
    "completions/max_terminated_length", "completions/mean_length", "completions/mean_terminated_length",
    "completions/min_length", "completions/min_terminated_length", "entropy", "frac_reward_zero_std", "grad_norm",
    "kl", "learning_rate", "loss", "num_tokens", "reward", "reward_std", "rewards/accuracy_reward/mean",
    "rewards/accuracy_reward/std", "rewards/format_reward/mean", "rewards/format_reward/std",
    "rewards/length_penalty/mean", "rewards/length_penalty/std", "sampling/importance_sampling_ratio/max",
    "sampling/importance_sampling_ratio/mean", "sampling/importance_sampling_ratio/min",
    "sampling/sampling_logp_difference/max", "sampling/sampling_logp_difference/mean", "step_time",
    "tools/call_frequency", "tools/failure_frequency", "aux_loss", "entropy_coef", "policy_loss",
]


def make_state(steps: int) -> Path:
    folder = DATA / f"trainer_state_{steps}"
    path = folder / "trainer_state.json"
    if path.exists():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    history: list[dict[str, Any]] = []
    for step in range(1, steps + 1):
        row: dict[str, Any] = {key: rng.random() for key in GRPO_KEYS}
        row.update(step=step, epoch=step / steps * 3)
        if step % 977 == 0:
            row["grad_norm"] = math.nan
        history.append(row)
        if step % 500 == 0:
            history.append({"step": step, "epoch": row["epoch"], "eval_reward": rng.random(), "eval_loss": rng.random(),
                            "eval_runtime": 12.5, "eval_samples_per_second": 3.1, "eval_steps_per_second": 0.4})
    history.append({"step": steps, "epoch": 3.0, "train_runtime": 1e5, "train_loss": 0.01, "total_flos": 0.0,
                    "train_samples_per_second": 1.0, "train_steps_per_second": 0.1})
    state = {"global_step": steps, "max_steps": steps, "logging_steps": 1, "log_history": history,
             "best_metric": None, "best_model_checkpoint": None, "epoch": 3.0}
    path.write_text(json.dumps(state, indent=2, sort_keys=True), encoding="utf-8")
    return path


def worker(kind: str, path: Path) -> dict[str, Any]:
    """One load in this (fresh) process; everything either way needs is imported before the baseline."""
    if kind == "assessor":
        from assessor import load_run

        def load() -> int:
            return len(load_run(path.parent).metrics)
    else:

        def load() -> int:
            with path.open("rb") as handle:
                return len(json.load(handle)["log_history"])

    return measure_here(load)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="alternating runs of each; the median is reported")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], Path(args.worker[1]))))
        return
    path = make_state(args.steps)
    size = path.stat().st_size
    warm_page_cache(path)
    results = alternate(__file__, ["json.load", "assessor"], path, args.repeat)

    def median(kind: str, field: str) -> float:
        values = sorted(r[field] for r in results[kind])
        return float(values[len(values) // 2])

    base_s, ours_s = median("json.load", "seconds"), median("assessor", "seconds")
    base_m, ours_m = median("json.load", "peak_rise_bytes"), median("assessor", "peak_rise_bytes")
    print(f"trainer_state.json: {args.steps:,} logged steps, {len(GRPO_KEYS)} metrics, {size / 2**20:.0f} MiB; "
          f"{results['assessor'][0]['points']:,} values in the canonical table; median of {args.repeat}")
    print()
    print("| measure | json.load (baseline) | assessor load_run | ratio | target |")
    print("|---|---|---|---|---|")
    print(f"| load time | {base_s:.2f} s | {ours_s:.2f} s | {ours_s / base_s:.2f}x | <= 2x |")
    print(f"| peak memory rise | {base_m / 2**20:.0f} MiB ({base_m / size:.2f}x file) | {ours_m / 2**20:.0f} MiB "
          f"| {ours_m / size:.2f}x file size | <= 3x file size |")
    print()
    print(f"command: python benchmarks/bench_trainer_state.py --steps {args.steps}")


if __name__ == "__main__":
    main()
