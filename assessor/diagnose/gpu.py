"""Where step time goes, and how the GPUs are used in each phase: `diagnose_gpu`.

Two sources, read separately and then combined here:

* **Phase timings** (`time_*_s`, `assessor.diagnose.gpu_timings`): generation and training shares of the
  step, the step-time level and its drift, lasting jumps and one-off stalls.
* **nvidia-smi telemetry** (`assessor.diagnose.gpu_telemetry`): each device's samples split into idle,
  generation (the low-power busy cluster) and training (the high-power one); per phase: time share, power,
  utilisation, memory; idle bubbles between busy stretches.

The timings' shares win over the telemetry's when both exist. Generation being a large share of the step is
reported as the bottleneck to optimise, not as a training-health problem. Noise alone produces no finding:
shifts must be significant against the noise *and* large in relative terms, stalls far above the local
level, clusters clearly separated.
"""

from __future__ import annotations

from typing import Literal

from assessor.diagnose.context import Context, finding, num
from assessor.diagnose.gpu_telemetry import UsageReading, read_telemetry, read_usage
from assessor.diagnose.gpu_timings import GENERATION, StepTimeReading, read_step_times, read_timings
from assessor.diagnose.models import Finding, GpuDiagnosis, Severity

Source = Literal["phase_timings", "nvidia_smi", "both"]

GENERATION_BOUND = 0.6  # generation share above which it is the bottleneck to optimise
GENERATION_DOMINANT = 0.8


def diagnose_gpu(ctx: Context) -> GpuDiagnosis | None:
    """Where step time goes (phase timings) and how the GPUs behave in each phase (nvidia-smi).

    Args:
        ctx: The run and its readings.

    Returns:
        The diagnosis, or None when the run has neither phase timings nor nvidia-smi telemetry.
    """
    run = ctx.run
    timings = read_timings(run)
    telemetry = read_telemetry(run)
    if timings is None and telemetry is None:
        return None
    findings: list[Finding] = []
    timing = read_step_times(run, timings) if timings is not None else None
    usage = read_usage(telemetry) if telemetry is not None else None
    if timing is not None:
        findings.extend(timing.findings)
    if usage is not None:
        findings.extend(usage.findings)

    generation_fraction = training_fraction = None
    fraction_source = ""
    if timing is not None and timing.generation_fraction is not None:
        generation_fraction, fraction_source = timing.generation_fraction, "timings"
    elif usage is not None and usage.generation_fraction is not None:
        generation_fraction, fraction_source = usage.generation_fraction, "telemetry"
    if timing is not None and timing.training_fraction is not None:
        training_fraction = timing.training_fraction
    elif usage is not None:
        training_fraction = usage.training_fraction
    if generation_fraction is not None:
        bound = _generation_bound(generation_fraction, training_fraction, fraction_source, timing, usage)
        if bound is not None:
            findings.append(bound)

    source: Source = "both" if timings is not None and telemetry is not None else (
        "phase_timings" if timings is not None else "nvidia_smi")
    return GpuDiagnosis(
        source=source,
        generation_fraction=generation_fraction, training_fraction=training_fraction,
        step_time_s=timing.step_time_s if timing else None, step_time_drift=timing.drift if timing else None,
        jumps=timing.jumps if timing else [], phases=usage.phases if usage else [],
        idle_fraction=usage.idle_fraction if usage else None, findings=findings,
    )


def _generation_bound(
    fraction: float, training: float | None, source: str, timing: StepTimeReading | None,
    usage: UsageReading | None,
) -> Finding | None:
    if fraction <= GENERATION_BOUND:
        return None
    parts = [f"training {num(training)}"] if training is not None else []
    if source == "timings" and timing is not None and timing.generation_fraction_run is not None:
        parts.insert(0, f"{num(timing.generation_fraction_run)} over the whole run")
    if usage is not None and usage.generation_fraction is not None and source == "timings":
        parts.append(f"GPU telemetry says {num(usage.generation_fraction)}")
    if source == "telemetry" and usage is not None:
        gen, train = usage.phase("generation"), usage.phase("training")
        if gen is not None and train is not None and gen.power_w is not None and train.power_w is not None:
            parts.append(f"at {num(gen.power_w)} W against {num(train.power_w)} W in training")
    where = "of step time recently" if source == "timings" else "of the busy GPU time, from nvidia-smi power"
    severity: Severity = "watch" if fraction >= GENERATION_DOMINANT else "info"
    detail = f" ({'; '.join(parts)})" if parts else ""
    return finding(
        GENERATION if source == "timings" else "gpu", "generation_bound", severity,
        f"Generation takes {num(fraction)} {where}{detail}: generation is the bottleneck to optimise (rollout "
        "engine settings, batch size, response length), not a training-health problem.",
    )
