"""An nvidia-smi CSV log beside the run, following the generation / training phases."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path

import numpy as np

from assessor.evals.generate.model import RUN_START, Array, Ctx


def write_nvidia_smi(ctx: Ctx, path: Path, obs: Mapping[str, Array]) -> None:
    """An `nvidia-smi --query-gpu=... --format=csv -lms 2000` log of two GPUs: generation draws less power."""
    rng = np.random.default_rng([ctx.spec.seed, 99])
    header = ("timestamp, index, name, utilization.gpu [%], utilization.memory [%], memory.used [MiB], "
              "memory.total [MiB], power.draw [W], power.limit [W], temperature.gpu, clocks.sm [MHz]")
    step_time = obs["step_time"]
    gen = obs["time_gen"]
    interval = 2.0
    limit = min(len(step_time), int(ctx.opt("smi_steps", 400)))
    ends = np.cumsum(step_time[:limit])
    times = np.arange(0.0, float(ends[-1]), interval)
    index = np.searchsorted(ends, times, side="right")
    index = np.minimum(index, limit - 1)
    into = times - (ends[index] - step_time[index])
    generating = into < gen[index]
    lines = [header]
    start = RUN_START + timedelta(hours=ctx.spec.seed % 7)
    for k, when in enumerate(times):
        stamp = (start + timedelta(seconds=float(when))).strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]
        for gpu in (0, 1):
            if generating[k]:
                util, mem, power, temp = rng.normal(72, 7), rng.normal(36, 5), rng.normal(290, 25), rng.normal(63, 1.2)
            else:
                util, mem, power, temp = rng.normal(97, 2), rng.normal(62, 5), rng.normal(650, 22), rng.normal(72, 1.2)
            lines.append(
                f"{stamp}, {gpu}, NVIDIA H100 80GB HBM3, {min(100, max(0, round(util)))} %, "
                f"{min(100, max(0, round(mem)))} %, "
                f"{int(rng.normal(71200, 300))} MiB, 81559 MiB, {power:.2f} W, 700.00 W, {round(temp)}, 1980 MHz")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
