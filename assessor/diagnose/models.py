"""What the numeric stage reports: pydantic records with values and steps as evidence.

Every diagnosis carries `findings`: one-line observations a practitioner would say out loud, each with the
signal it is about, how much it matters, and the steps that show it. Judges read these records; nothing
here decides continue/stop/rollback.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Severity = Literal["info", "watch", "warning", "critical"]
Trend = Literal["rising", "falling", "flat"]
SEVERITY_ORDER: dict[str, int] = {"critical": 0, "warning": 1, "watch": 2, "info": 3}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Finding(_Model):
    """One observation, with its evidence."""

    signal: str = Field(description="Canonical metric (or area, e.g. `kl_reward`) the finding is about.")
    kind: str = Field(description="Stable identifier of the pattern, e.g. `kl_rising_reward_flat`.")
    severity: Severity
    observation: str = Field(description="One sentence with the numbers and steps that show it.")
    steps: list[int] = Field(default_factory=list, description="Steps where it shows (onset first).")


class ChangePoint(_Model):
    """A lasting shift in a signal's level."""

    step: int = Field(description="First step of the new level.")
    direction: Literal["up", "down"]
    before: float = Field(description="Level before the shift.")
    after: float = Field(description="Level after it.")
    size_noise: float = Field(description="Size of the shift in units of the signal's noise.")


class Spike(_Model):
    """A point far from its neighbours' level."""

    step: int
    value: float
    level: float = Field(description="The local level around it.")
    size_noise: float
    kind: Literal["outlier", "regime_change"] = Field(
        description="`outlier`: the next points return to the level; `regime_change`: they stay away."
    )


class Discontinuity(_Model):
    """A sudden doubling or halving of a signal's magnitude."""

    step: int
    before: float
    after: float
    ratio: float = Field(description="after / before, of magnitudes.")


class SignalSummary(_Model):
    """The robust reading of one curve."""

    metric: str
    split: Literal["train", "eval"]
    points: int
    first_step: int
    last_step: int
    start: float = Field(description="Smoothed level at the start.")
    now: float = Field(description="Smoothed level at the end.")
    peak: float = Field(description="Highest smoothed level.")
    peak_step: int
    trough: float = Field(description="Lowest smoothed level.")
    trough_step: int
    noise: float = Field(description="Point-to-point noise (robust standard deviation around the smoothed level).")
    drop_from_peak_noise: float = Field(description="(peak - now) / noise.")
    rise_from_trough_noise: float = Field(description="(now - trough) / noise.")
    trend: Trend = Field(description="Recent direction, tested against noise (Theil-Sen slope, Mann-Kendall test).")
    trend_window_start: int = Field(description="First step of the window the recent trend was measured on.")
    trend_change: float = Field(description="Theil-Sen change across the recent window, in metric units.")
    trend_change_noise: float = Field(description="The same, in noise units.")
    trend_p: float = Field(description="Mann-Kendall p-value, corrected for autocorrelation.")
    slowing: bool | None = Field(
        None, description="Whether the rate of change in the latest third is well below the middle third's."
    )
    plateau_start: int | None = Field(None, description="Step from which the level has stayed within noise.")
    change_points: list[ChangePoint] = Field(default_factory=list)
    discontinuities: list[Discontinuity] = Field(default_factory=list)
    spikes: list[Spike] = Field(default_factory=list)


Quadrant = Literal[
    "kl_up_reward_up", "kl_up_reward_flat", "kl_up_reward_down", "kl_stable_reward_up", "kl_stable_reward_flat",
    "kl_stable_reward_down",
]


class QuadrantSpan(_Model):
    """A stretch of the run spent in one KL/reward quadrant."""

    start_step: int
    end_step: int
    quadrant: Quadrant
    reward_change: float
    kl_change: float


class KlRewardDiagnosis(_Model):
    """How reward moves together with KL (the practitioner's central diagnostic)."""

    kl_measured: bool
    kl_absent_reason: str | None = Field(None, description="Why there is no KL to read, stated, not guessed.")
    quadrant_now: Quadrant | None = None
    timeline: list[QuadrantSpan] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)


class RewardDiagnosis(_Model):
    """The reward trajectory, the primary signal: still rising? slowing? peaked and declining?"""

    metric: str | None = Field(None, description="`reward_mean`, or for preference training `pref_margin`.")
    trend: Trend | None = None
    slowing: bool | None = None
    start: float | None = None
    now: float | None = None
    peak: float | None = None
    peak_step: int | None = None
    drop_from_peak_noise: float | None = None
    plateau_start: int | None = None
    findings: list[Finding] = Field(default_factory=list)


class LearningSignalDiagnosis(_Model):
    """Is there still a learning signal? Reward spread, zero-spread groups, saturation."""

    reward_std_start: float | None = None
    reward_std_now: float | None = None
    zero_std_frac_start: float | None = None
    zero_std_frac_now: float | None = None
    advantage_std_now: float | None = None
    saturated: bool = Field(False, description="Reward at its ceiling with the spread gone.")
    identical_from_start: bool = Field(False, description="No spread from the first steps: a setup failure.")
    findings: list[Finding] = Field(default_factory=list)


class ComponentSummary(_Model):
    """One reward component."""

    name: str
    start: float
    now: float
    trend: Trend
    saturated: bool


class RewardComponentsDiagnosis(_Model):
    """Composite rewards read one by one."""

    components: list[ComponentSummary] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)


class EntropyDiagnosis(_Model):
    """Token entropy: gradual decline, collapse, or blow-up towards ln(vocabulary)."""

    pattern: Literal["gradual_decline", "stable", "rising", "collapse", "blow_up", "absent"]
    start: float | None = None
    now: float | None = None
    ln_vocab: float | None = Field(None, description="ln(vocabulary size) when known: the entropy of uniform noise.")
    findings: list[Finding] = Field(default_factory=list)


class LengthDiagnosis(_Model):
    """Response length: trend, collapse, explosion to the cap, truncation."""

    start: float | None = None
    now: float | None = None
    trend: Trend | None = None
    cap: int | None = Field(None, description="Completion token cap (from the config, else from pinned maxima).")
    at_cap_fraction: float | None = Field(None, description="Share of recent steps whose mean length sits at the cap.")
    clipped_ratio_now: float | None = None
    length_reward_correlation: float | None = Field(None, description="Spearman correlation of length and reward.")
    findings: list[Finding] = Field(default_factory=list)


class ClippingDiagnosis(_Model):
    """Ratio clipping: level, low/high asymmetry, trend."""

    level_now: float | None = None
    low_now: float | None = None
    high_now: float | None = None
    trend: Trend | None = None
    exactly_zero: bool = Field(False, description="Always zero: normal when fully on-policy.")
    findings: list[Finding] = Field(default_factory=list)


class LossDiagnosis(_Model):
    """Policy loss patterns (never read as progress in GRPO)."""

    metric: str | None = Field(None, description="`pg_loss` when logged, else `loss`.")
    pattern: Literal[
        "stable", "declining", "rising", "oscillating_around_zero", "sign_reversal", "discontinuity", "blow_up",
        "absent",
    ] = "absent"
    findings: list[Finding] = Field(default_factory=list)


class EvalDiagnosis(_Model):
    """Held-out evaluation: where it peaked and whether it is falling."""

    metric: str | None = None
    points: int = 0
    peak_step: int | None = None
    peak: float | None = None
    now: float | None = None
    now_step: int | None = None
    decline_from_peak_noise: float | None = None
    diverging_from_train: bool = Field(False, description="Train reward up while eval goes down.")
    findings: list[Finding] = Field(default_factory=list)


class InstabilityDiagnosis(_Model):
    """Spikes and NaNs in KL, grad norm, loss."""

    spikes: dict[str, list[Spike]] = Field(default_factory=dict)
    nonfinite_steps: dict[str, list[int]] = Field(default_factory=dict)
    findings: list[Finding] = Field(default_factory=list)


class PhaseStats(_Model):
    """GPU readings during one phase of the step (from nvidia-smi)."""

    phase: Literal["generation", "training", "idle"]
    time_fraction: float
    power_w: float | None = None
    util_pct: float | None = None
    memory_used_mib: float | None = None
    memory_headroom_mib: float | None = None


class StepTimeJump(_Model):
    """A lasting change or a one-off stall in step time."""

    step: int
    before_s: float
    after_s: float
    kind: Literal["jump", "stall"]


class GpuDiagnosis(_Model):
    """Where step time goes, and how the GPUs are used in each phase."""

    source: Literal["phase_timings", "nvidia_smi", "both"]
    generation_fraction: float | None = Field(None, description="Share of step time spent generating.")
    training_fraction: float | None = None
    step_time_s: float | None = Field(None, description="Recent median step time.")
    step_time_drift: float | None = Field(None, description="Relative change of step time, start to now.")
    jumps: list[StepTimeJump] = Field(default_factory=list)
    phases: list[PhaseStats] = Field(default_factory=list)
    idle_fraction: float | None = Field(None, description="Share of telemetry samples with the GPUs idle.")
    findings: list[Finding] = Field(default_factory=list)


class BestCheckpoint(_Model):
    """Where the best version of the model is, and what is on disk near it."""

    basis: Literal["eval", "reward", "none"]
    best_step: int | None = Field(None, description="Step of the best point by the basis signal.")
    checkpoint_step: int | None = Field(None, description="Newest checkpoint on disk at or before the best step.")
    checkpoint_path: str | None = None
    reason: str


class RunHeader(_Model):
    """The run as a whole."""

    name: str
    framework: str | None
    algorithm: str | None
    last_step: int | None
    planned_total_steps: int | None
    progress: float | None = Field(None, description="last_step / planned_total_steps.")
    logging_interval: int | None


class Diagnostics(_Model):
    """Everything the numeric stage saw in a run."""

    run: RunHeader
    signals: dict[str, SignalSummary] = Field(description="Keyed by metric, eval ones as `eval/<metric>`.")
    reward: RewardDiagnosis
    kl_reward: KlRewardDiagnosis
    learning_signal: LearningSignalDiagnosis
    reward_components: RewardComponentsDiagnosis
    entropy: EntropyDiagnosis
    length: LengthDiagnosis
    clipping: ClippingDiagnosis
    loss: LossDiagnosis
    eval: EvalDiagnosis
    instability: InstabilityDiagnosis
    gpu: GpuDiagnosis | None
    best_checkpoint: BestCheckpoint
    absent: list[str] = Field(default_factory=list, description="Signals the run does not log, and what that hides.")
    findings: list[Finding] = Field(default_factory=list, description="All findings, most severe first.")
