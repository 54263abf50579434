"""The recipes: every named pattern (`PATTERNS`), its summary, the formats it can be written in and its builder.

The builders are grouped by the signal they are about (`kl_reward`, `loss`, `length_entropy`,
`learning_signal`, `eval_gpu`, `dpo`); `resumed_duplicates` lives here because it wraps another pattern of the
table.
"""

from __future__ import annotations

from dataclasses import replace

from assessor.errors import ConfigError
from assessor.evals.generate.model import GRPO_FORMATS, Ctx, Format, Recipe, Scenario
from assessor.evals.generate.recipes.dpo import build_dpo_healthy, build_dpo_stuck
from assessor.evals.generate.recipes.eval_gpu import build_eval_peak, build_generation_bound, default_eval_every
from assessor.evals.generate.recipes.kl_reward import (
    build_early,
    build_healthy,
    build_kl_blowup,
    build_kl_spike_transient,
    build_kl_stable_reward_flat,
    build_kl_stable_reward_up,
    build_kl_up_reward_down,
    build_kl_up_reward_flat,
    build_kl_up_reward_up,
    build_transient_dip,
)
from assessor.evals.generate.recipes.learning_signal import (
    build_component_hacking,
    build_identical_rewards,
    build_reward_saturation,
)
from assessor.evals.generate.recipes.length_entropy import (
    build_clip_asymmetry,
    build_entropy_blowup,
    build_entropy_collapse,
    build_length_bimodal,
    build_length_collapse,
    build_length_explosion,
    build_truncation,
)
from assessor.evals.generate.recipes.loss import (
    build_nan_divergence,
    build_pg_loss_blowup,
    build_pg_loss_declining,
    build_pg_loss_oscillating,
    build_pg_loss_sign_reversal,
)


def build_resumed_duplicates(ctx: Ctx) -> Scenario:
    """A resumed run whose log holds the steps between the checkpoint and the crash twice."""
    underlying = str(ctx.opt("underlying", "healthy"))
    if underlying not in PATTERNS or underlying == "resumed_duplicates":
        raise ConfigError(f"resumed_duplicates: unknown underlying pattern {underlying!r}")
    scenario = PATTERNS[underlying].build(ctx)
    resume = ctx.resume()
    assert resume is not None
    note = (f" The run crashed at step {resume[1]} and was resumed from checkpoint {resume[0]}, so steps "
            f"{resume[0] + 1}-{resume[1]} are logged twice; judge the newest record of each step.")
    return Scenario(scenario.latent, replace(scenario.truth, reasoning=scenario.truth.reasoning + note))


_KL_FORMATS: tuple[Format, ...] = GRPO_FORMATS
_COMPONENT_FORMATS: tuple[Format, ...] = ("trl_state", "trl_live", "trl_console", "tensorboard", "csv")
_CLIP_FORMATS: tuple[Format, ...] = ("trl_state", "trl_live", "trl_console", "tensorboard")
_DPO_FORMATS: tuple[Format, ...] = ("trl_state", "trl_console", "tensorboard")
_GPU_FORMATS: tuple[Format, ...] = ("jsonl", "verl_console", "tensorboard", "trl_live")
_RESUME_FORMATS: tuple[Format, ...] = ("tensorboard", "verl_console", "csv", "trl_live", "trl_console")

PATTERNS: dict[str, Recipe] = {r.name: r for r in (
    Recipe("healthy", "reward still rising through realistic noise", "grpo", GRPO_FORMATS, build_healthy),
    Recipe("early", "a few percent of the planned steps done", "grpo", GRPO_FORMATS, build_early, planned_factor=25),
    Recipe("kl_up_reward_up", "KL rising, reward rising (healthy)", "grpo", _KL_FORMATS, build_kl_up_reward_up),
    Recipe("kl_stable_reward_up", "KL flat, reward rising (ideal)", "grpo", _KL_FORMATS, build_kl_stable_reward_up,
           beta=0.2),
    Recipe("kl_up_reward_flat", "KL rising, reward flat after a rise (run has run its course)", "grpo", _KL_FORMATS,
           build_kl_up_reward_flat, planned_factor=1.6),
    Recipe("kl_up_reward_down", "KL rising, reward falling (destructive)", "grpo", _KL_FORMATS,
           build_kl_up_reward_down, planned_factor=1.6),
    Recipe("kl_stable_reward_flat", "KL flat, reward flat (converged)", "grpo", _KL_FORMATS,
           build_kl_stable_reward_flat, planned_factor=1.5, beta=0.1),
    Recipe("pg_loss_declining", "policy loss stable and slowly declining", "grpo", GRPO_FORMATS,
           build_pg_loss_declining, beta=0.0),
    Recipe("pg_loss_oscillating", "policy loss oscillating around zero (healthy GRPO)", "grpo", GRPO_FORMATS,
           build_pg_loss_oscillating, beta=0.0),
    Recipe("pg_loss_sign_reversal", "policy loss turns from positive to negative, run degrading", "grpo",
           GRPO_FORMATS, build_pg_loss_sign_reversal, planned_factor=1.6, beta=0.0),
    Recipe("pg_loss_blowup", "policy-loss magnitude discontinuity, run degrading", "grpo", GRPO_FORMATS,
           build_pg_loss_blowup, planned_factor=1.6, beta=0.0),
    Recipe("reward_saturation", "reward at the ceiling, zero-std groups", "grpo", GRPO_FORMATS,
           build_reward_saturation, planned_factor=1.5, beta=0.0),
    Recipe("identical_rewards", "identical rewards from the start (setup failure)", "grpo", GRPO_FORMATS,
           build_identical_rewards, beta=0.0),
    Recipe("component_hacking", "format reward saturates while correctness stalls or falls", "grpo",
           _COMPONENT_FORMATS, build_component_hacking, planned_factor=1.6, beta=0.0),
    Recipe("entropy_collapse", "entropy collapses towards zero", "grpo", GRPO_FORMATS, build_entropy_collapse,
           planned_factor=1.6),
    Recipe("entropy_blowup", "entropy blows up towards ln(vocab)", "grpo", GRPO_FORMATS, build_entropy_blowup,
           planned_factor=1.6),
    Recipe("length_collapse", "completion length collapses to a few tokens", "grpo", GRPO_FORMATS,
           build_length_collapse, planned_factor=1.6, beta=0.0),
    Recipe("length_explosion", "completion length explodes to the cap", "grpo", GRPO_FORMATS,
           build_length_explosion, planned_factor=1.6, beta=0.0),
    Recipe("length_bimodal", "bimodal lengths, mean stable", "grpo", GRPO_FORMATS, build_length_bimodal,
           planned_factor=1.6, beta=0.0),
    Recipe("truncation", "many completions truncated at the cap", "grpo", GRPO_FORMATS, build_truncation,
           planned_factor=1.6, beta=0.0),
    Recipe("clip_asymmetry", "high-side ratio clipping dominates", "grpo", _CLIP_FORMATS, build_clip_asymmetry,
           planned_factor=1.6, beta=0.0, off_policy=True),
    Recipe("kl_spike_transient", "one-step KL outlier that recovers", "grpo", _KL_FORMATS, build_kl_spike_transient),
    Recipe("kl_blowup", "KL regime change (blow-up)", "grpo", _KL_FORMATS, build_kl_blowup, planned_factor=1.6),
    Recipe("eval_peak", "held-out eval peaks while train reward rises", "grpo", GRPO_FORMATS, build_eval_peak,
           planned_factor=1.6, beta=0.0, eval_every=default_eval_every),
    Recipe("transient_dip", "reward dips and recovers", "grpo", GRPO_FORMATS, build_transient_dip),
    Recipe("generation_bound", "healthy, generation dominates the step", "grpo", _GPU_FORMATS,
           build_generation_bound),
    Recipe("resumed_duplicates", "resumed run, the overlap logged twice", "grpo", _RESUME_FORMATS,
           build_resumed_duplicates, resumes=True),
    Recipe("nan_divergence", "loss and grad norm NaN at the end", "grpo", GRPO_FORMATS, build_nan_divergence,
           planned_factor=1.6, beta=0.0),
    Recipe("dpo_healthy", "DPO: margins up, accuracy up, loss down from ln 2", "dpo", _DPO_FORMATS,
           build_dpo_healthy, planned_factor=2.0),
    Recipe("dpo_stuck", "DPO: loss stuck at ln 2", "dpo", _DPO_FORMATS, build_dpo_stuck, planned_factor=2.0),
)}
