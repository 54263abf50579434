"""The numeric stage: `diagnose(run) -> Diagnostics`. Pure functions, pydantic records out, no I/O.

Each area of the practitioner's reading lives in its own module with one `diagnose_*` function taking a
`Context` (the run plus a cache of per-signal readings) and returning its record with findings.
"""

from __future__ import annotations

from assessor.diagnose.checkpoint import best_checkpoint
from assessor.diagnose.clipping import diagnose_clipping
from assessor.diagnose.components import diagnose_components
from assessor.diagnose.compute import compute_accounting
from assessor.diagnose.context import Context
from assessor.diagnose.critic import diagnose_critic
from assessor.diagnose.entropy import diagnose_entropy
from assessor.diagnose.evaluation import diagnose_eval, eval_noise_without_signal
from assessor.diagnose.gpu import diagnose_gpu
from assessor.diagnose.instability import diagnose_instability
from assessor.diagnose.kl_reward import diagnose_kl_reward, primary_reward
from assessor.diagnose.learning_signal import diagnose_learning_signal
from assessor.diagnose.length import diagnose_length
from assessor.diagnose.loss import PREFERENCE_ALGORITHMS, diagnose_loss
from assessor.diagnose.models import SEVERITY_ORDER, Diagnostics, Finding, RunHeader
from assessor.diagnose.overoptimization import diagnose_overoptimization
from assessor.diagnose.rescale import (
    from_rescale,
    policy_reset,
    rescale_finding,
    reward_rescale,
    reward_stepped_up,
    reward_steps,
)
from assessor.diagnose.reward import diagnose_reward
from assessor.diagnose.run_state import run_state
from assessor.diagnose.turn import diagnose_turn
from assessor.run import Run

# Signals whose reading every report carries, when the run logs them.
CORE_SIGNALS = (
    "reward_mean", "reward_std", "reward_zero_std_frac", "kl", "entropy", "response_length_mean",
    "response_length_clip_ratio", "clip_ratio_region", "clip_ratio_low", "clip_ratio_high", "loss", "pg_loss",
    "grad_norm", "lr", "advantage_std", "time_step_s", "pref_margin", "pref_accuracy", "value_loss",
    "value_explained_var",
)

__all__ = ["Diagnostics", "diagnose"]


def diagnose(run: Run, now: float | None = None) -> Diagnostics:
    """Everything the numeric stage sees in a run (see `assessor.diagnose.models`).

    `now` (seconds since the epoch) lets a run that has stopped writing be called stalled; without it, the
    reading depends on the run alone (as evals and replays need).
    """
    scan = reward_steps(run)  # one scan of the reward serves both one-update-step tests
    rescale = reward_rescale(run, scan)
    if rescale is not None:
        run = from_rescale(run, rescale)
        scan = reward_steps(run)
    state, state_reason = run_state(run, now)
    ctx = Context(run, state=state)
    for metric in CORE_SIGNALS:
        ctx.book.get(metric)
    for metric in run.metric_names("eval"):
        ctx.book.get(metric, "eval")
    reward = diagnose_reward(ctx)
    kl_reward = diagnose_kl_reward(ctx)
    learning_signal = diagnose_learning_signal(ctx)
    components = diagnose_components(ctx)
    entropy = diagnose_entropy(ctx)
    length = diagnose_length(ctx)
    clipping = diagnose_clipping(ctx)
    loss = diagnose_loss(ctx)
    evaluation = diagnose_eval(ctx)
    if any(f.kind == "no_learning_signal" for f in learning_signal.findings):
        evaluation = eval_noise_without_signal(evaluation)
    instability = diagnose_instability(ctx)
    gpu = diagnose_gpu(ctx)
    overoptimization = diagnose_overoptimization(ctx)
    critic = diagnose_critic(ctx)
    findings: list[Finding] = [
        f for section in (reward, kl_reward, learning_signal, components, entropy, length, clipping, loss, evaluation,
                          instability, overoptimization, critic)
        for f in section.findings
    ]
    findings.extend(diagnose_turn(ctx, evaluation))
    if gpu is not None:
        findings.extend(gpu.findings)
    if rescale is not None:
        findings.append(rescale_finding(rescale))
    reset = policy_reset(run, scan)
    if reset is not None:
        findings.append(reset)
    stepped_up = reward_stepped_up(run, scan)
    if stepped_up is not None:
        findings.append(stepped_up)
    findings.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.steps[0] if f.steps else 0))
    checkpoint = best_checkpoint(ctx, reward, evaluation, components, findings, learning_signal,
                                 hacked_task=overoptimization.task_metric)
    facts = run.facts
    last = run.last_step
    return Diagnostics(
        run=RunHeader(
            name=run.name, framework=facts.framework, algorithm=facts.algorithm, last_step=last,
            planned_total_steps=facts.planned_total_steps,
            progress=last / facts.planned_total_steps if last is not None and facts.planned_total_steps else None,
            logging_interval=facts.logging_interval, state=state, state_reason=state_reason,
        ),
        signals=ctx.book.all_summaries(),
        reward=reward, kl_reward=kl_reward, learning_signal=learning_signal, reward_components=components,
        entropy=entropy, length=length, clipping=clipping, loss=loss, eval=evaluation, instability=instability, gpu=gpu,
        best_checkpoint=checkpoint, overoptimization=overoptimization, critic=critic,
        compute=compute_accounting(ctx, checkpoint, learning_signal),
        absent=_absent(ctx, kl_reward.kl_absent_reason), findings=findings,
        rescaled_series=[] if rescale is None else [
            "reward_mean", *rescale.train, *(f"eval/{name}" for name in rescale.evals)],
    )


NO_TIMINGS = "GPU telemetry and phase timings"
NO_SAMPLES = "completion samples"
# What a missing instrument hides. The JSON's `absent` says it per entry; the evidence sheet names the missing ones
# and its legend (in the cached system prompt) says what each would show.
UNSEEN_WITHOUT = {
    "reward_std": "reward spread (how much learning signal each batch carries)",
    "entropy": "token entropy (collapse or blow-up of the sampling distribution)",
    "response_length_mean": "response length (length hacking, truncation)",
    "grad_norm": "gradient norm (optimisation spikes, divergence)",
    "ratio clipping": "clipped share of tokens (strain on the trust region)",
    "loss": "training loss (NaN/inf, blow-ups)",
    NO_TIMINGS: "generation vs training time",
    NO_SAMPLES: "the text itself (coherence, repetition, language, format, hacks the scores cannot see)",
}


# Named among what a run does not show, but no instruments a verdict leans on: no judge lowers its confidence for them.
SECONDARY_INSTRUMENTS = ("grad_norm", "ratio clipping", "loss")


def unseen_entry(name: str) -> str:
    """The `absent` entry of a missing instrument of `UNSEEN_WITHOUT`, in the one wording the sheet recognises."""
    return f"{name}: {'none' if name == NO_TIMINGS else 'not logged'}, so {UNSEEN_WITHOUT[name]} cannot be read"


def _absent(ctx: Context, kl_reason: str | None) -> list[str]:
    """What the run does not let us see, and what that hides."""
    run = ctx.run
    out = []
    if kl_reason:
        out.append(f"kl: {kl_reason}")
    # Preference training (DPO and kin) samples nothing: there are no groups, no reward spread, no generated lengths.
    preference = run.facts.algorithm in PREFERENCE_ALGORITHMS
    for metric in () if preference else ("reward_std", "entropy", "response_length_mean"):
        if not run.has(metric) and not (metric == "reward_std" and (
                run.has("advantage_std") or run.has("reward_group_std_mean"))):
            out.append(unseen_entry(metric))
    if not run.has("grad_norm"):
        out.append(unseen_entry("grad_norm"))
    if not preference and not any(run.has(m) for m in ("clip_ratio_region", "clip_ratio_low", "clip_ratio_high")):
        out.append(unseen_entry("ratio clipping"))
    if not any(run.has(m) for m in ("loss", "pg_loss")):
        out.append(unseen_entry("loss"))
    if not run.metric_names("eval"):
        judged_by = primary_reward(ctx) if preference else "training reward"
        out.append(f"held-out eval: none logged, so the best checkpoint is judged from {judged_by or 'training'} "
                   "alone")
    if run.gpu is None and not any(m.startswith("time_") for m in run.metric_names("train")):
        out.append(f"{NO_TIMINGS}: none, so where the training time goes cannot be read" if preference
                   else unseen_entry(NO_TIMINGS))
    return out
