"""`assessor inspect`: what was read from a run, as a pydantic record (the `inspect --format json` contract)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from assessor.ingest.aliases import is_phase_timing
from assessor.run import Checkpoint, Run, RunFacts, SourceInfo


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MetricInfo(_Model):
    """One canonical metric as found in the run."""

    split: Literal["train", "eval"]
    source_key: str = Field(description="The key as the framework logged it.")
    source: str = Field(description="File it was read from, relative to the run directory.")
    points: int = Field(description="Finite values.")
    first_step: int
    last_step: int
    nonfinite: int = Field(0, description="NaN/inf/null values, left out of `points`.")


class GpuInfo(_Model):
    """nvidia-smi telemetry found in the run."""

    devices: int
    names: list[str]
    samples: int = Field(description="Timestamps sampled (per device rows are counted once).")
    fields: list[str]
    duration_s: float


class RunInspection(_Model):
    """Everything `inspect` reports. Keys of `metrics` are the canonical name, prefixed `eval/` for eval."""

    path: str
    name: str
    framework: str | None
    algorithm: str | None
    last_step: int | None = Field(description="Highest optimizer step with training metrics.")
    sources: list[SourceInfo]
    metrics: dict[str, MetricInfo]
    phase_timings: list[str] = Field(description="Canonical per-step phase timing metrics (`time_*_s`).")
    checkpoints: list[Checkpoint]
    gpu: GpuInfo | None
    facts: RunFacts
    warnings: list[str]
    ignored: list[str] = Field(description="Text files that held no metrics, with the reason.")


def inspect_run(run: Run) -> RunInspection:
    """Summarise what was read from a run."""
    metrics: dict[str, MetricInfo] = {}
    nonfinite_counts = (
        run.nonfinite.groupby(["metric", "split"]).size().to_dict() if len(run.nonfinite) else {}
    )
    grouped = run.metrics.groupby(["split", "metric"], observed=True, sort=False)
    for (split, metric), rows in grouped:
        key = str(metric) if split == "train" else f"eval/{metric}"
        steps = rows["step"].to_numpy()
        metrics[key] = MetricInfo(
            split=str(split),
            source_key=str(rows["source_key"].iloc[0]),
            source=str(rows["source"].iloc[0]),
            points=len(rows),
            first_step=int(steps.min()),
            last_step=int(steps.max()),
            nonfinite=int(nonfinite_counts.get((str(metric), str(split)), 0)),
        )
    metrics = dict(sorted(metrics.items(), key=lambda item: (item[1].split != "train", item[0])))
    return RunInspection(
        path=run.where,
        name=run.name,
        framework=run.facts.framework,
        algorithm=run.facts.algorithm,
        last_step=run.last_step,
        sources=run.sources,
        metrics=metrics,
        phase_timings=[m for m in run.metric_names("train") if is_phase_timing(m)],
        checkpoints=run.checkpoints,
        gpu=_gpu_info(run),
        facts=run.facts,
        warnings=run.warnings,
        ignored=run.ignored,
    )


def _gpu_info(run: Run) -> GpuInfo | None:
    gpu = run.gpu
    if gpu is None or gpu.empty:
        return None
    devices = sorted(int(d) for d in gpu["device"].unique())
    times = gpu["time"].to_numpy()
    return GpuInfo(
        devices=len(devices),
        names=[run.gpu_devices.get(d, "?") for d in devices],
        samples=int(pd.unique(times).size),
        fields=sorted(str(f) for f in gpu["field"].unique()),
        duration_s=float(np.max(times) - np.min(times)),
    )
