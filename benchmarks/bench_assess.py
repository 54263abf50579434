"""Benchmark: `assessor assess --judge rules --out DIR` on a long verl JSONL run, against `polars.read_ndjson`.

Writes (once, cached under benchmarks/_data/) a verl file-logger JSONL (`{"step": N, "data": {...}}`, NaN as
null, one object a line) with ~35 metrics per step, shaped like a GRPO run: the reward climbs and levels off,
entropy decays, length grows, all with autocorrelated noise and a few spikes, validation every 500 steps. Then,
alternating round by round in fresh processes on the same (page-cached) file:

* `polars`: `polars.read_ndjson(file)` (the baseline: a native columnar JSON reader), when polars is installed;
* `assess`: the installed CLI, `assessor assess RUN --judge rules --out DIR`, its wall time and peak RSS;
* `phases`: the same pipeline in one process, timed phase by phase (load, diagnose, plots, judge), to separate
  the diagnosis and plotting share from the reading share.

Peak RSS is each child's own (`ru_maxrss` from `os.wait4` on that child), and so are its CPU seconds (user + system):
less swayed than wall seconds by other work on a shared machine, though polars' two threads add up in them.

Run from the repo root:

    .venv/bin/python benchmarks/bench_assess.py                    # 300,000 steps
    .venv/bin/python benchmarks/bench_assess.py --steps 1000000 --rounds 1 --skip polars
    .venv/bin/python benchmarks/bench_assess.py --compare /path/to/other/checkout   # before/after in one run
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from _measure import DATA, MIB, REPO, _status_kib, cached_file, warm_page_cache

from assessor.numpy_env import SETTINGS

TRAIN_KEYS = [
    "critic/score/mean", "critic/score/max", "critic/score/min", "critic/rewards/mean", "critic/advantages/mean",
    "critic/advantages/max", "critic/advantages/min", "critic/returns/mean", "response_length/mean",
    "response_length/max", "response_length/min", "response_length/clip_ratio", "prompt_length/mean",
    "actor/pg_loss", "actor/pg_clipfrac", "actor/pg_clipfrac_lower", "actor/ppo_kl", "actor/entropy",
    "actor/kl_loss", "actor/kl_coef", "actor/grad_norm", "actor/lr", "timing_s/step", "timing_s/gen",
    "timing_s/reward", "timing_s/old_log_prob", "timing_s/ref", "timing_s/adv", "timing_s/update_actor",
    "timing_per_token_ms/gen", "perf/total_num_tokens", "perf/throughput", "perf/max_memory_allocated_gb",
    "training/global_step", "training/epoch",
]
VAL_KEY = "val-core/openai/gsm8k/reward/mean@1"
VAL_EVERY = 500


def _ar1(rng: np.random.Generator, n: int, rho: float, scale: float) -> np.ndarray:
    """AR(1) noise with stationary standard deviation `scale`: white noise through the filter sum rho^k e[t-k].

    The filter is cut at 40 taps (rho^40 is negligible for the rho <= 0.6 used here), a short convolution.
    """
    shocks = rng.normal(0.0, scale * np.sqrt(1 - rho**2), n + 40)
    return np.convolve(shocks, rho ** np.arange(40), mode="valid")[:n]


def curves(steps: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    t = np.arange(1, steps + 1, dtype=np.float64)
    progress = 1 - np.exp(-t / (steps / 6))  # climbs over the first third, then levels off
    score = 0.15 + 0.55 * progress + _ar1(rng, steps, 0.3, 0.04)
    entropy = 0.3 + 0.7 * np.exp(-t / (steps / 4)) + _ar1(rng, steps, 0.5, 0.02)
    length = 300 + 500 * progress + _ar1(rng, steps, 0.6, 20)
    kl = 0.001 + 0.02 * progress + np.abs(_ar1(rng, steps, 0.5, 0.002))
    grad = np.abs(0.3 + _ar1(rng, steps, 0.2, 0.05))
    grad[rng.integers(0, steps, max(1, steps // 5000))] *= 20  # a few spikes
    gen = 40 + 5 * progress + np.abs(_ar1(rng, steps, 0.3, 2))
    out = {
        "critic/score/mean": score, "critic/score/max": np.minimum(1.0, score + 0.3),
        "critic/score/min": np.maximum(0.0, score - 0.3), "critic/rewards/mean": score,
        "critic/advantages/mean": _ar1(rng, steps, 0.0, 0.01), "critic/advantages/max": 2 + _ar1(rng, steps, 0, 0.1),
        "critic/advantages/min": -2 + _ar1(rng, steps, 0, 0.1), "critic/returns/mean": _ar1(rng, steps, 0.0, 0.01),
        "response_length/mean": length, "response_length/max": np.minimum(2048, length * 2.5),
        "response_length/min": np.maximum(1, length * 0.2), "prompt_length/mean": 120 + _ar1(rng, steps, 0, 5),
        "response_length/clip_ratio": np.clip(0.01 + 0.02 * progress + _ar1(rng, steps, 0.3, 0.005), 0, 1),
        "actor/pg_loss": _ar1(rng, steps, 0.1, 0.05), "actor/pg_clipfrac": np.abs(0.02 + _ar1(rng, steps, .4, .005)),
        "actor/pg_clipfrac_lower": np.abs(_ar1(rng, steps, 0.1, 1e-4)), "actor/ppo_kl": _ar1(rng, steps, 0.1, 1e-4),
        "actor/entropy": entropy, "actor/kl_loss": kl, "actor/kl_coef": np.full(steps, 0.001), "actor/grad_norm": grad,
        "actor/lr": np.full(steps, 1e-6), "timing_s/step": gen + 25 + np.abs(_ar1(rng, steps, 0.3, 2)),
        "timing_s/gen": gen, "timing_s/reward": 2 + np.abs(_ar1(rng, steps, 0.2, 0.3)),
        "timing_s/old_log_prob": 5 + np.abs(_ar1(rng, steps, 0.2, 0.3)),
        "timing_s/ref": 5 + np.abs(_ar1(rng, steps, 0.2, 0.3)), "timing_s/adv": 0.1 + np.abs(_ar1(rng, steps, 0, .01)),
        "timing_s/update_actor": 12 + np.abs(_ar1(rng, steps, 0.2, 1)),
        "timing_per_token_ms/gen": 0.05 + np.abs(_ar1(rng, steps, 0.2, 0.003)),
        "perf/total_num_tokens": np.round(512 * (length + 120)), "perf/throughput": 1500 + _ar1(rng, steps, 0.3, 50),
        "perf/max_memory_allocated_gb": 60 + _ar1(rng, steps, 0.1, 0.2), "training/global_step": t,
        "training/epoch": np.floor(t / 1000),
    }
    assert sorted(out) == sorted(TRAIN_KEYS)
    return out


def make_jsonl(steps: int) -> Path:
    """A verl file-logger run folder with one `<experiment>.jsonl` of `steps` rows (written once, then reused).

    Its folder is its own (not `make_jsonl_run.py`'s `verl_jsonl_N`): the run is the folder, read whole.
    """
    def write(handle: TextIO) -> None:
        columns = curves(steps)
        val = 0.2 + 0.45 * (1 - np.exp(-np.arange(0, steps + 1, VAL_EVERY) / (steps / 6)))
        rounded = {key: np.round(values, 6).tolist() for key, values in columns.items()}
        handle.write(json.dumps({"step": 0, "data": {VAL_KEY: float(val[0])}}) + "\n")
        for i in range(steps):
            step = i + 1
            data = {key: rounded[key][i] for key in TRAIN_KEYS}
            if step % 977 == 0:
                data["actor/grad_norm"] = None  # orjson writes NaN as null
            if step % VAL_EVERY == 0:
                data[VAL_KEY] = round(float(val[step // VAL_EVERY]), 6)
            handle.write(json.dumps({"step": step, "data": data}, separators=(",", ":")) + "\n")

    return cached_file(DATA / f"verl_grpo_jsonl_{steps}" / "grpo-bench.jsonl", write)


def worker(kind: str, path: Path) -> dict[str, Any]:
    """One measured job in this (fresh) process; prints a JSON line with its seconds."""
    if kind == "polars":
        import polars as pl

        started = time.perf_counter()
        frame = pl.read_ndjson(path)
        return {"seconds": time.perf_counter() - started, "rows": frame.height}
    if kind == "phases":
        from assessor.allocator import keep_freed_memory
        from assessor.diagnose import diagnose
        from assessor.ingest import load_run
        from assessor.judge import JudgeRequest, get_judge
        from assessor.plots import render_plots

        keep_freed_memory()  # as the CLI's `assess` does
        times: dict[str, float] = {}
        started = time.perf_counter()
        run = load_run(path.parent)
        times["load"] = time.perf_counter() - started
        load_peak = _status_kib("VmHWM")  # read before the reset below, which also lowers what wait4 reports
        with open("/proc/self/clear_refs", "w", encoding="utf-8") as clear_refs:
            clear_refs.write("5")  # resets the peak (VmHWM) to the current RSS: what follows is measured alone
        rss_after_load = _status_kib("VmRSS")
        mark = time.perf_counter()
        diagnostics = diagnose(run)
        times["diagnose"] = time.perf_counter() - mark
        with tempfile.TemporaryDirectory() as out:
            mark = time.perf_counter()
            written = render_plots(run, diagnostics, Path(out))
            times["plots"] = time.perf_counter() - mark
            mark = time.perf_counter()
            verdict = get_judge("rules").judge(JudgeRequest(run=run, diagnostics=diagnostics, plots=written)).verdict
            times["judge"] = time.perf_counter() - mark
        rise = (_status_kib("VmHWM") - rss_after_load) * 1024
        return {"seconds": time.perf_counter() - started, **times, "decision": verdict.decision,
                "rss_after_load": rss_after_load * 1024, "diagnose_plots_peak_rise": rise,
                "load_peak": load_peak * 1024}
    raise ValueError(kind)


def _popen_rss(args: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str, float]:
    """Run one child alone: its wall seconds, its own peak RSS in bytes (from wait4), its stdout, its CPU seconds."""
    started = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=env)
    assert process.stdout is not None and process.stderr is not None
    stdout = process.stdout.read().decode()
    stderr = process.stderr.read().decode()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    if process.returncode not in (0, 1, 2, 3, 10, 11):  # assess exits by decision; anything else is a failure
        raise RuntimeError(f"{args} failed ({process.returncode}): {stderr[-2000:]}")
    return seconds, usage.ru_maxrss * 1024, stdout, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip", action="append", default=[], choices=["polars", "assess", "phases"])
    parser.add_argument("--compare", type=Path, metavar="CHECKOUT",
                        help="also time `assess` with the assessor package of another checkout (PYTHONPATH=CHECKOUT), "
                        "alternated with the others: a before/after in one run")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], Path(args.worker[1]))))
        return
    path = make_jsonl(args.steps)
    size = path.stat().st_size
    warm_page_cache(path)
    cli = shutil.which("assessor", path=str(Path(sys.executable).parent)) or "assessor"
    kinds = [k for k in ("polars", "assess", "phases") if k not in args.skip]
    if args.compare is not None:
        kinds.append("assess@compare")
    if "polars" in kinds:
        try:
            import polars  # noqa: F401
        except ImportError:
            print("polars is not installed (pip install polars); the baseline is skipped", file=sys.stderr)
            kinds.remove("polars")
    results: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
    for round_ in range(args.rounds):
        for kind in kinds:
            if kind.startswith("assess"):
                env = None if kind == "assess" else {**os.environ, "PYTHONPATH": str(args.compare.resolve())}
                with tempfile.TemporaryDirectory() as out:
                    seconds, rss, _, cpu = _popen_rss(
                        [cli, "assess", str(path.parent), "--judge", "rules", "--out", out], env)
                result: dict[str, Any] = {"seconds": seconds}
            else:
                # numpy loaded for the phases as the CLI's `assess` loads it (`assessor.numpy_env`)
                env = {**SETTINGS, **os.environ}
                seconds, rss, stdout, cpu = _popen_rss([sys.executable, __file__, "--worker", kind, str(path)],
                                                       env if kind == "phases" else None)
                result = json.loads(stdout.strip().splitlines()[-1])
            result["cpu"] = cpu
            result["peak_rss"] = max(rss, result.get("load_peak", 0))
            results[kind].append(result)
            print(f"round {round_ + 1}: {kind}: {result['seconds']:.2f} s (CPU {cpu:.2f} s), "
                  f"peak RSS {result['peak_rss'] / MIB:.0f} MiB "
                  + " ".join(f"{k}={v:.2f}" for k, v in result.items() if k in ("load", "diagnose", "plots", "judge")),
                  file=sys.stderr)

    def median(kind: str, key: str) -> float:
        values = sorted(float(r[key]) for r in results[kind])
        return values[len(values) // 2]

    print(f"\n{args.steps:,}-step verl JSONL, {len(TRAIN_KEYS)} train metrics + 1 validation metric, "
          f"{size / MIB:.0f} MiB; median of {args.rounds} fresh processes, kinds alternated round by round\n")
    print("| measure | seconds | ratio | CPU seconds | CPU ratio | peak RSS |")
    print("|---|---|---|---|---|---|")
    base = median("polars", "seconds") if "polars" in kinds else None
    base_cpu = median("polars", "cpu") if "polars" in kinds else None
    if base is not None:
        print(f"| polars.read_ndjson (baseline) | {base:.2f} | 1.00 | {base_cpu:.2f} | 1.00 | "
              f"{median('polars', 'peak_rss') / MIB:.0f} MiB |")

    def ratio(seconds: float) -> str:
        return f"{seconds / base:.1f}x" if base else "-"

    def cpu_ratio(seconds: float) -> str:
        return f"{seconds / base_cpu:.1f}x" if base_cpu else "-"

    for kind, label in (("assess", "`assessor assess --judge rules --out DIR`"),
                        ("assess@compare", f"same, with {args.compare}")):
        if kind in kinds:
            seconds, cpu = median(kind, "seconds"), median(kind, "cpu")
            print(f"| {label} | {seconds:.2f} | {ratio(seconds)} | {cpu:.2f} | {cpu_ratio(cpu)} | "
                  f"{median(kind, 'peak_rss') / MIB:.0f} MiB |")
    if "phases" in kinds:
        for phase in ("load", "diagnose", "plots", "judge"):
            seconds = median("phases", phase)
            print(f"| in one process: {phase} | {seconds:.2f} | {ratio(seconds)} | | | |")
        both = median("phases", "diagnose") + median("phases", "plots")
        print(f"| in one process: diagnose + plots | {both:.2f} | {ratio(both)} | | | |")
        print(f"| in one process: all phases | {median('phases', 'seconds'):.2f} | "
              f"{ratio(median('phases', 'seconds'))} | | | {median('phases', 'peak_rss') / MIB:.0f} MiB |")
        print(f"\nmemory in one process: peak {median('phases', 'load_peak') / MIB:.0f} MiB while loading, "
              f"{median('phases', 'rss_after_load') / MIB:.0f} MiB after loading; "
              f"diagnose + plots raise the peak by {median('phases', 'diagnose_plots_peak_rise') / MIB:.0f} MiB")
        print(f"\ndecision: {results['phases'][0]['decision']}")
    compare = f" --compare {args.compare}" if args.compare is not None else ""
    print(f"\ncommand: python benchmarks/bench_assess.py --steps {args.steps} --rounds {args.rounds}{compare}")


if __name__ == "__main__":
    main()
