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
    segment_before: float | None = Field(
        None, description="Median of the stretch since the previous shift (levels that chain from shift to shift; "
        "`before` is the level of the wider split that found the shift).")
    segment_after: float | None = Field(None, description="Median of the stretch up to the next shift.")


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
    start: float = Field(description="Smoothed level at the start (rewards: mean of the first tenth of the run).")
    now: float = Field(description="Smoothed level at the end (rewards: mean of the last tenth).")
    peak: float = Field(description="Highest smoothed level (rewards: best mean of a tenth of the run).")
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
    latest: Stretch | None = Field(
        None, description="Training rewards only: the mean of the last few logged steps, when it stands more than "
        "three noise units from `now` (a stretch mean that still holds the steps before a fast move at the end).")
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


class Stretch(_Model):
    """A run of consecutive logged steps and the mean of a signal over it (a level the sheet prints)."""

    first_step: int
    last_step: int
    mean: float


class RewardDiagnosis(_Model):
    """The reward trajectory, the primary signal: still rising? slowing? peaked and declining?"""

    metric: str | None = Field(None, description="`reward_mean`, or for preference training `pref_margin`.")
    trend: Trend | None = None
    slowing: bool | None = None
    start: float | None = None
    now: float | None = None
    peak: float | None = Field(None, description="The curve's peak as every report quotes it (its signal summary's).")
    peak_step: int | None = None
    drop_from_peak_noise: float | None = None
    plateau_start: int | None = None
    peak_stretch: Stretch | None = Field(
        None, description="When the reward declined from a peak: the best stretch the decline is read from.")
    latest_stretch: Stretch | None = Field(None, description="...and the latest stretch of the same length.")
    fall_step: int | None = Field(
        None, description="When the reward declined: the first step after the peak stretch where the smoothed "
        "reward is halfway down to the latest stretch's level (an eval from before it has not seen the fall).")
    shaped_declined: bool = Field(
        False, description="The KL-penalised reward (score - beta x KL) declined while the score did not.")
    findings: list[Finding] = Field(default_factory=list)


class ConstantComponent(_Model):
    """A reward component stuck at one value."""

    name: str
    value: float
    share: float = Field(description="Share of logged steps at exactly this value.")
    at_floor: bool = Field(description="The value is the component's lowest (a correctness reward that never fires).")


class LearningSignalDiagnosis(_Model):
    """Is there still a learning signal? Reward spread, zero-spread groups, saturation."""

    reward_std_start: float | None = None
    reward_std_now: float | None = None
    zero_std_frac_start: float | None = None
    zero_std_frac_now: float | None = None
    advantage_std_now: float | None = None
    saturated: bool = Field(False, description="Reward at its ceiling with the spread gone.")
    identical_from_start: bool = Field(False, description="No spread from the first steps: a setup failure.")
    zero_reward_share: float | None = Field(None, description="Share of logged steps whose reward is exactly 0.")
    constant_reward_share: float | None = Field(
        None, description="Share of logged steps at the reward's most common exact value (0 or any other).")
    zero_spread_share: float | None = Field(
        None, description="Share of logged steps where every group scored alike (reward std 0, all groups "
        "zero-spread, or advantage spread 0).")
    zero_grad_share: float | None = Field(None, description="Share of logged steps with grad norm exactly 0.")
    zero_loss_share: float | None = Field(None, description="Share of logged steps with loss exactly 0.")
    constant_components: list[ConstantComponent] = Field(
        default_factory=list, description="Reward components that hold one exact value on almost every step.")
    never_learned: bool = Field(False, description="No learning signal over the run: nothing to learn from.")
    updates_stopped_step: int | None = Field(
        None, description="First step of the latest stretch in which the weights cannot change (learning rate or "
        "gradient norm exactly 0 to the end, after being positive): the weights now are those of this step.")
    reward_before_stop: float | None = Field(
        None, description="Mean training reward over the stretch of logged steps just before the updates stopped.")
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
    fallen_task: str | None = Field(
        None, description="The component that matters, when it fell while an easy one saturated (its metric).")
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


class EvalCurve(_Model):
    """One held-out series read on its own: peak to now, and against the training reward over the same steps."""

    metric: str = Field(description="`eval/<name>`.")
    points: int
    start: float
    peak: float
    peak_step: int
    new_high_noise: float = Field(
        0.0, description="How far the best of the last two evaluations tops every earlier one, in noise units.")
    recent_rise_noise: float = Field(
        0.0, description="How far the latest quarter of the evaluations averages above the quarter before it, in "
        "standard errors of that difference (0 with fewer than 8 evaluations).")
    late_rise: bool = Field(
        False, description="Over the latest half of the evaluations (five or more) the Theil-Sen slope's 90% lower "
        "bound is above 0 and the latest evaluation is within its noise of the best: a climb the data rule in.")
    climbed: bool = Field(
        False, description="Over all the evaluations (five or more) the Theil-Sen slope's 90% lower bound is above 0: "
        "the eval rose over the run, however noisy any one evaluation; and the latest evaluation is within its "
        "noise of the best.")
    now: float = Field(description="Mean of the last two evaluations.")
    now_step: int
    noise: float = Field(description="Eval-to-eval noise (robust, from differences).")
    decline_noise: float = Field(description="(peak - now) / noise; positive is worse for lower-is-better too.")
    moved: bool = Field(description="Ever rose more than twice its noise above where it started.")
    slowing: bool = Field(
        False, description="Its latest third gains at under half the rate of what came before (diminishing returns).")
    train_change_noise: float | None = Field(
        None, description="How far training reward moved over the same steps, in its standard errors.")
    set_size: int | None = Field(
        None, description="Problems in the eval set, read off the scores (None when it does not show).")


class EvalDiagnosis(_Model):
    """Held-out evaluation: where it peaked and whether it is falling."""

    metric: str | None = None
    points: int = 0
    peak_step: int | None = None
    peak: float | None = None
    now: float | None = Field(None, description="The latest evaluation.")
    now_step: int | None = None
    decline_from_peak_noise: float | None = None
    diverging_from_train: bool = Field(False, description="Train reward up while eval goes down.")
    curves: list[EvalCurve] = Field(default_factory=list, description="Every held-out series, the primary first.")
    findings: list[Finding] = Field(default_factory=list)


class CriticDiagnosis(_Model):
    """The value model of PPO-style runs: how much of the returns' variance it explains."""

    explained_var_start: float | None = None
    explained_var_best: float | None = Field(None, description="Best stretch mean of the explained variance.")
    explained_var_now: float | None = Field(None, description="Mean over the latest third of the run.")
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


class OveroptimizationDiagnosis(_Model):
    """Reward bought at a price the task does not pay: proxy up, task down, KL multiplying, likelihood collapse."""

    reward_per_kl_early: float | None = Field(None, description="Reward gained per unit of KL, early in the run.")
    reward_per_kl_recent: float | None = Field(None, description="The same over the latest stretch.")
    task_metric: str | None = Field(None, description="A task metric read beside the proxy reward, if logged.")
    findings: list[Finding] = Field(default_factory=list)


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


BandKind = Literal["standard_error", "sampling_error", "typical_sampling_error", "eval_difference", "eval_noise"]


class BestCheckpoint(_Model):
    """The run's one best point, and what is on disk near it.

    The best point is the newest step whose level is within noise of the best level reached before anything
    broke: every step given up by a rollback is compute thrown away, so among equally good points the latest
    one wins, and a point inside or after a broken stretch never does. Findings, text, plots, JSON and the
    rollback target all use this one point.
    """

    basis: Literal["eval", "task", "reward", "none"]
    metric: str | None = Field(None, description="The curve the best point is read on (`eval/accuracy`, ...).")
    best_step: int | None = Field(None, description="The best point: newest step within noise of the best level.")
    level: float | None = Field(None, description="The curve's level at the best point (see `smoothed`).")
    best_level: float | None = Field(None, description="The best level reached before any breakage.")
    best_level_step: int | None = None
    now_level: float | None = Field(None, description="The level over the latest stretch.")
    band: float | None = Field(None, description="\"Within noise\": the standard error of a level.")
    band_kind: BandKind | None = Field(
        None, description="What `band` is: the standard error of a stretch mean (reward), the sampling error of one "
        "evaluation of a pass rate (its set size read off the scores), that of a pass rate on a typical "
        "1,000-problem set (set size hidden), sqrt(2) x the eval-to-eval noise (the error of a difference of two "
        "evaluations), or the eval-to-eval noise itself.")
    eval_set_size: int | None = Field(
        None, description="Problems in the eval set, read off the scores, when `band` is their sampling error.")
    eval_set_named: bool = Field(
        False, description="`eval_set_size` is the benchmark's own size, from its name (`math500`), not the finer "
        "grid its scores move on (several samples per problem: mean@4 moves in 1/2000ths).")
    smoothed: bool = Field(False, description="Levels are stretch means (reward), not single evaluations.")
    passed_over: list[int] = Field(
        default_factory=list, description="Steps of later evaluations within `band` of the best on their own but "
        "not with their neighbours (the median of the three): lucky draws on a slide, not targets.")
    best_level_median: bool = Field(
        False, description="`best_level` is the best median of three consecutive evaluations: the top evaluation "
        "stood alone above its neighbours (a lucky draw), so it is not the level to be within noise of.")
    loss_bound_step: int | None = Field(
        None, description="Preference training: the newest evaluation still as good as the best on the held-out "
        "loss, which rose since; the best point is no later than this (the loss shows overfitting first).")
    reward_changed_step: int | None = Field(
        None, description="Step where the training reward jumped in one update with the policy's own measures "
        "unbroken (re-scored, not re-learnt) and the held-out eval declined after it: the best point is before it.")
    band_is_own_spread: bool = Field(
        False, description="`band` is the evaluations' own spread, finer than the eval-to-eval noise the eval findings "
        "quote (with few evaluations those read a pass rate no finer than its sampling error).")
    reward_peak_step: int | None = Field(
        None, description="The training reward's own best point (newest stretch within one standard error of its best) "
        "before its decline, which the held-out eval shares: the best point is no later (evaluations after it within "
        "the band are draws on the way down). One eval interval later when the eval only eased; where the reward's "
        "fall is dated (halfway down) when no evaluation within the band came before its best point.")
    reward_peak_reason: str | None = Field(
        None, description="What `reward_peak_step` is, of those three, in words.")
    decline_start_step: int | None = Field(
        None, description="Where an established decline with no breakage to date it began: the last point of the level "
        "stretch in a level-then-falling fit from the first point as good as the best (a fall in one step when that "
        "step exceeds twice the band, else a steady slide). The best point is no later: levels after it within the "
        "band are the slide's first steps. Not applied where it would leave no checkpoint on disk in the good stretch.")
    behind: bool = Field(False, description="Now is worse than the best point by more than noise.")
    decline_t: float | None = Field(None, description="(best level - now) in standard errors of the difference.")
    breakage_step: int | None = Field(None, description="First step of a broken stretch, when one was found.")
    breakage: str | None = Field(None, description="What broke there.")
    breakage_overruled: str | None = Field(
        None, description="A breakage the held-out eval rose through (it got better after it): not a breakage of "
        "the model, so it holds no point back.")
    checkpoint_step: int | None = Field(None, description="Newest checkpoint on disk at or before the best step.")
    checkpoint_path: str | None = None
    save_steps: int | None = Field(None, description="The config's save interval, when it gives one.")
    expected_checkpoint_step: int | None = Field(
        None, description="The newest step at or before the best point the save interval would have saved.")
    reason: str


RunState = Literal["live", "finished", "stalled", "crashed"]


class ComputeAccounting(_Model):
    """What continuing has cost, so a stop or a rollback carries its price."""

    steps_since_best: int | None = Field(None, description="Optimizer steps after the best point.")
    zero_signal_steps: int | None = Field(None, description="Steps on which no completion carried a gradient.")
    step_time_s: float | None = Field(None, description="Median wall time of one step, when it is logged.")
    gpus: int | None = Field(None, description="GPUs seen in telemetry, when known.")
    hours_since_best: float | None = Field(None, description="Wall-clock hours spent after the best point.")
    gpu_hours_since_best: float | None = None
    hours_on_zero_signal: float | None = None


class RunHeader(_Model):
    """The run as a whole."""

    name: str
    framework: str | None
    algorithm: str | None
    last_step: int | None
    planned_total_steps: int | None
    progress: float | None = Field(None, description="last_step / planned_total_steps.")
    logging_interval: int | None
    state: RunState = Field("live", description="live, finished (planned end or end summary), stalled (no write "
                            "for long), crashed (diverged to NaN/inf at the end).")
    state_reason: str = ""


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
    overoptimization: OveroptimizationDiagnosis = Field(default_factory=lambda: OveroptimizationDiagnosis())
    critic: CriticDiagnosis = Field(default_factory=lambda: CriticDiagnosis())
    compute: ComputeAccounting = Field(default_factory=lambda: ComputeAccounting())
    rescaled_series: list[str] = Field(
        default_factory=list, description="Series read from a reward rescale on (`reward_rescaled`): training names, "
        "held-out ones as `eval/<name>`.")
    absent: list[str] = Field(default_factory=list, description="Signals the run does not log, and what that hides.")
    findings: list[Finding] = Field(default_factory=list, description="All findings, most severe first.")
