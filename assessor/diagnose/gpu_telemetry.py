"""nvidia-smi telemetry: how the GPUs are used in each phase.

Each device's samples are split into idle (utilisation near zero), generation (the low-power busy cluster:
token-by-token decoding draws noticeably less power than training) and training (the high-power cluster).
The split is a per-device Otsu threshold on power, kept only when the two clusters are clearly apart
(Ashman's D) and alternate in time, so one noisy phase is never cut in two. Per phase: time share, power,
utilisation, memory used and headroom; idle bubbles between busy stretches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from assessor.diagnose.context import finding, num
from assessor.diagnose.models import Finding, PhaseStats
from assessor.diagnose.robust import finite_median
from assessor.run import Run

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
PhaseName = Literal["generation", "training", "idle"]

IDLE_UTIL_PCT = 5.0  # utilisation at or below this is idle
MIN_BUSY_SAMPLES = 50  # fewer busy samples cannot show two clusters reliably
MIN_SEPARATION = 4.0  # Ashman's D between the power clusters (unimodal noise stays under ~3.7)
MIN_GAP = 0.2  # the low cluster's mean at least this far below the high one's, relative
MIN_CLUSTER_SHARE = 0.02
MIN_ALTERNATIONS = 2  # each cluster must occur in at least this many separate stretches
SINGLE_PHASE_POWER = 0.5  # one busy cluster above this share of the power limit reads as training
SINGLE_PHASE_UTIL = 90.0  # ... or, without a power limit, above this utilisation
IDLE_WATCH = 0.10  # idle share between busy stretches worth a watch
MEMORY_TIGHT = 0.05  # headroom below this share of total memory is near capacity
MEMORY_QUANTILE = 0.95  # memory is read at a high quantile: peaks, not the typical sample, cause OOMs
TIME_GAP = 5.0  # a telemetry gap longer than this many sampling intervals splits idle stretches

IDLE, GEN, TRAIN = 0, 1, 2
_PHASE_NAMES: dict[int, PhaseName] = {IDLE: "idle", GEN: "generation", TRAIN: "training"}


@dataclass(frozen=True)
class _Device:
    """One GPU's samples within its busy span, labelled IDLE, GEN or TRAIN."""

    device: int
    time: FloatArray
    labels: IntArray
    util: FloatArray
    power: FloatArray
    memory_used: FloatArray
    memory_total: FloatArray


@dataclass(frozen=True)
class Telemetry:
    """The labelled samples of every GPU that worked, and the GPUs that never did."""

    devices: list[_Device]
    unused: list[int]  # devices never busy while others were


_FIELDS = ("gpu_util_pct", "power_w", "power_limit_w", "memory_used_mib", "memory_total_mib")


def read_telemetry(run: Run) -> Telemetry | None:
    """Each device's samples within its busy span, labelled by phase; None when the log shows no GPU at work."""
    gpu = run.gpu
    if gpu is None or gpu.empty:
        return None
    rows = gpu.loc[gpu["field"].isin(_FIELDS), ["time", "device", "field", "value"]]
    if rows.empty or not (rows["field"] == "gpu_util_pct").any():
        return None
    rows = rows.assign(field=rows["field"].astype(str)).drop_duplicates(["device", "time", "field"], keep="last")
    wide = rows.pivot(index=["device", "time"], columns="field", values="value").reindex(columns=list(_FIELDS))
    prepared: list[tuple[int, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, float | None]] = []
    unused: list[int] = []
    for device, frame in wide.groupby(level="device", sort=True):
        frame = frame[np.isfinite(frame["gpu_util_pct"].to_numpy(dtype=np.float64))]
        if frame.empty:
            continue
        time = frame.index.get_level_values("time").to_numpy(dtype=np.float64)
        order = np.argsort(time, kind="stable")
        util = frame["gpu_util_pct"].to_numpy(dtype=np.float64)[order]
        busy = np.flatnonzero(util > IDLE_UTIL_PCT)
        if len(busy) < 3:
            unused.append(_device_id(device))
            continue
        span = slice(int(busy[0]), int(busy[-1]) + 1)  # idle before the job starts or after it ends is not the run
        limit = finite_median(frame["power_limit_w"].to_numpy(dtype=np.float64))
        prepared.append((
            _device_id(device), time[order][span], util[span],
            frame["power_w"].to_numpy(dtype=np.float64)[order][span],
            frame["memory_used_mib"].to_numpy(dtype=np.float64)[order][span],
            frame["memory_total_mib"].to_numpy(dtype=np.float64)[order][span], limit,
        ))
    if not prepared:
        return None
    return Telemetry(_label_devices(prepared), unused)


def _device_id(key: object) -> int:
    return int(key) if isinstance(key, (int, float, np.integer, np.floating)) else int(str(key))


def _split_variable(util: FloatArray, power: FloatArray, busy: BoolArray) -> FloatArray:
    """Power when it is reported for the busy samples, else utilisation."""
    return power if np.isfinite(power[busy]).mean() >= 0.8 else util


def _label_devices(
    prepared: list[tuple[int, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, float | None]],
) -> list[_Device]:
    """Idle / generation / training labels, with a threshold per device where its power is bimodal.

    A device whose busy samples form one cluster borrows the threshold of the bimodal devices; failing that,
    the busy samples of all such devices are split together (rollout and trainer GPUs kept apart); failing
    that, the single cluster is training when its power is over half the power limit (or, with no limit
    reported, when utilisation is very high), else generation.
    """
    thresholds: dict[int, float | None] = {}
    by_power: dict[int, bool] = {}
    for device, _, util, power, _, _, _ in prepared:
        busy = util > IDLE_UTIL_PCT
        variable = _split_variable(util, power, busy)
        by_power[device] = variable is power
        order_values = variable[busy]
        thresholds[device] = _two_clusters(order_values[np.isfinite(order_values)])
    found = [v for d, v in thresholds.items() if v is not None and by_power[d]]
    shared = float(np.median(found)) if found else None
    single = [d for d, v in thresholds.items() if v is None]
    pooled: float | None = None
    if shared is None and len(single) > 1 and all(by_power[d] for d in single):
        values = np.concatenate([
            power[(util > IDLE_UTIL_PCT) & np.isfinite(power)] for d, _, util, power, _, _, _ in prepared if d in single
        ])
        pooled = _two_clusters(values, need_alternation=False)
    devices: list[_Device] = []
    for device, time, util, power, used, total, limit in prepared:
        busy = util > IDLE_UTIL_PCT
        variable = _split_variable(util, power, busy)
        threshold = thresholds[device]
        if threshold is None and by_power[device]:
            threshold = shared if shared is not None else pooled
        labels = np.full(len(util), IDLE, dtype=np.int64)
        if threshold is not None:
            labels[busy] = np.where(variable[busy] > threshold, TRAIN, GEN)
        else:
            level = finite_median(power[busy])
            if limit and level is not None:
                training = level >= SINGLE_PHASE_POWER * limit
            else:
                training = float(np.median(util[busy])) >= SINGLE_PHASE_UTIL
            labels[busy] = TRAIN if training else GEN
        devices.append(_Device(device, time, labels, util, power, used, total))
    return devices


def _two_clusters(values: FloatArray, need_alternation: bool = True) -> float | None:
    """Otsu threshold between a low and a high cluster, or None when the values are not clearly bimodal.

    Bimodal means: enough samples, both clusters at least 2% of them, Ashman's D >= 4 (unimodal noise of
    common shapes stays under about 3.7), the low mean at least 20% under the high one, and, in time order,
    each cluster met in at least two separate stretches (a slow drift crosses once).
    """
    n = len(values)
    if n < MIN_BUSY_SAMPLES:
        return None
    ordered = np.sort(values)
    cumsum = np.cumsum(ordered)
    k = np.arange(1, n)
    left_mean = cumsum[k - 1] / k
    right_mean = (cumsum[-1] - cumsum[k - 1]) / (n - k)
    between = k * (n - k) * (left_mean - right_mean) ** 2
    min_size = max(3, int(MIN_CLUSTER_SHARE * n))
    valid = (ordered[k] > ordered[k - 1]) & (k >= min_size) & (n - k >= min_size)
    if not valid.any():
        return None
    split = int(k[int(np.argmax(np.where(valid, between, -1.0)))])
    low, high = ordered[:split], ordered[split:]
    spread = math.sqrt(float(np.var(low)) + float(np.var(high)))
    low_mean, high_mean = float(np.mean(low)), float(np.mean(high))
    separation = math.sqrt(2.0) * (high_mean - low_mean) / spread if spread > 0 else math.inf
    threshold = 0.5 * (float(ordered[split - 1]) + float(ordered[split]))
    if separation < MIN_SEPARATION or high_mean <= 0 or (high_mean - low_mean) / high_mean < MIN_GAP:
        return None
    if need_alternation:
        above = values > threshold
        starts = np.flatnonzero(np.diff(above.astype(np.int8)) != 0) + 1
        runs_above = int(above[0]) + int(np.sum(above[starts]))
        runs_below = int(not above[0]) + int(np.sum(~above[starts]))
        if min(runs_above, runs_below) < MIN_ALTERNATIONS:
            return None
    return threshold


@dataclass
class UsageReading:
    """What nvidia-smi says: per-phase stats, idle / generation / training shares, findings."""

    phases: list[PhaseStats] = field(default_factory=list)
    idle_fraction: float | None = None
    generation_fraction: float | None = None
    training_fraction: float | None = None
    findings: list[Finding] = field(default_factory=list)

    def phase(self, name: str) -> PhaseStats | None:
        """The stats of one phase, None when nvidia-smi never saw it."""
        return next((p for p in self.phases if p.phase == name), None)


def read_usage(telemetry: Telemetry) -> UsageReading:
    """Per-phase time share, power, utilisation and memory; idle bubbles, tight memory, unused GPUs."""
    out = UsageReading()
    devices = telemetry.devices
    labels = np.concatenate([d.labels for d in devices])
    total = len(labels)
    for code in (GEN, TRAIN, IDLE):
        mask = labels == code
        if not mask.any():
            continue
        power = np.concatenate([d.power[d.labels == code] for d in devices])
        util = np.concatenate([d.util[d.labels == code] for d in devices])
        used, headroom = _tightest_memory(devices, code)
        out.phases.append(PhaseStats(
            phase=_PHASE_NAMES[code],
            time_fraction=float(mask.sum()) / total, power_w=finite_median(power), util_pct=finite_median(util),
            memory_used_mib=used, memory_headroom_mib=headroom,
        ))
    out.idle_fraction = float(np.sum(labels == IDLE)) / total
    out.generation_fraction = float(np.sum(labels == GEN)) / total
    out.training_fraction = float(np.sum(labels == TRAIN)) / total
    if out.generation_fraction == 0.0 and out.training_fraction == 0.0:
        out.generation_fraction = out.training_fraction = None
    per_device = _idle_bubbles(devices)
    bubbles = [b for device in per_device for b in device]
    if out.idle_fraction >= IDLE_WATCH and bubbles:
        durations = np.array(bubbles)
        per_gpu = round(len(bubbles) / sum(1 for d in per_device if d))
        out.findings.append(finding(
            "gpu", "idle_bubbles", "watch",
            f"The GPUs sit idle {out.idle_fraction:.0%} of the time between busy stretches, in about "
            f"{per_gpu} bubbles per GPU (median {num(float(np.median(durations)))} s, "
            f"longest {num(float(durations.max()))} s): they wait on work off the GPU (reward calls, data "
            "loading, a sync between generation and training, a straggler).",
        ))
    out.findings.extend(_memory_findings(out))
    if telemetry.unused:
        listed = ", ".join(str(d) for d in telemetry.unused)
        out.findings.append(finding(
            "gpu", "unused_gpu", "info",
            f"GPU{'s' if len(telemetry.unused) > 1 else ''} {listed} stayed idle throughout while the others worked.",
        ))
    return out


def _tightest_memory(devices: list[_Device], code: int) -> tuple[float | None, float | None]:
    """Memory used and headroom in one phase, on the device with the least headroom (used at its 95th pct)."""
    best: tuple[float, float] | None = None
    for d in devices:
        used = d.memory_used[(d.labels == code) & np.isfinite(d.memory_used)]
        if not len(used):
            continue
        peak = float(np.quantile(used, MEMORY_QUANTILE))
        total = finite_median(d.memory_total)
        headroom = total - peak if total is not None else math.nan
        if best is None or (math.isfinite(headroom) and (not math.isfinite(best[1]) or headroom < best[1])):
            best = (peak, headroom)
    if best is None:
        return None, None
    return best[0], best[1] if math.isfinite(best[1]) else None


def _memory_findings(usage: UsageReading) -> list[Finding]:
    out: list[Finding] = []
    for phase in usage.phases:
        if phase.phase == "idle" or phase.memory_headroom_mib is None or phase.memory_used_mib is None:
            continue
        total = phase.memory_used_mib + phase.memory_headroom_mib
        if total <= 0 or phase.memory_headroom_mib >= MEMORY_TIGHT * total:
            continue
        other = usage.phase("training" if phase.phase == "generation" else "generation")
        note = ""
        if other is not None and other.memory_headroom_mib is not None:
            note = f"; in {other.phase} the headroom is {num(other.memory_headroom_mib)} MiB"
        reserve = (" (a rollout engine such as vLLM reserves a fixed share of memory up front, so check that "
                   "share before reading this as a leak)") if phase.phase == "generation" else ""
        out.append(finding(
            "gpu", "memory_near_capacity", "watch",
            f"Memory is near capacity during {phase.phase}: {num(phase.memory_used_mib)} of {num(total)} MiB "
            f"used (95th percentile), {num(phase.memory_headroom_mib)} MiB headroom{note}{reserve}; "
            "a longer batch or response can run out of memory.",
        ))
    return out


def _idle_bubbles(devices: list[_Device]) -> list[list[float]]:
    """Per device, durations (s) of idle stretches between busy samples; gaps in the log are not bubbles."""
    out: list[list[float]] = []
    for d in devices:
        out.append([])
        if len(d.time) < 3:
            continue
        dt = np.diff(d.time)
        period = float(np.median(dt)) if len(dt) else 0.0
        idle = d.labels == IDLE
        if not idle.any() or period <= 0:
            continue
        # A new stretch starts at every idle sample whose predecessor is busy or lies across a log gap.
        starts = idle & np.r_[True, (~idle[:-1]) | (dt > TIME_GAP * period)]
        ids = np.cumsum(starts)
        counts = np.bincount(ids[idle])[1:]
        out[-1].extend(float(c) * period for c in counts if c > 0)
    return out
