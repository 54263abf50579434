"""The recipes: every named pattern (`PATTERNS`), its summary, the formats it can be written in and its builder.

The builders are grouped by the signal they are about (`kl_reward`, `loss`, `length_entropy`,
`learning_signal`, `eval_gpu`, `dpo`); `resumed_duplicates` lives here because it wraps another pattern of the
table.
"""

from __future__ import annotations

from dataclasses import replace

from assessor.errors import ConfigError
from assessor.evals.generate.model import Ctx, Recipe, Scenario
from assessor.evals.generate.recipes.dpo import build_dpo_healthy, build_dpo_logp_collapse, build_dpo_stuck
from assessor.evals.generate.recipes.eval_gpu import (
    build_eval_flat,
    build_eval_peak,
    build_generation_bound,
    default_eval_every,
)
from assessor.evals.generate.recipes.kl_reward import (
    build_early,
    build_finished_plateau,
    build_finished_rising,
    build_healthy,
    build_kl_blowup,
    build_kl_spike_transient,
    build_kl_stable_reward_flat,
    build_kl_stable_reward_up,
    build_kl_up_reward_down,
    build_kl_up_reward_flat,
    build_kl_up_reward_up,
    build_reward_hacking,
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
from assessor.evals.generate.recipes.no_signal import build_correctness_pinned, build_zero_grad, build_zero_reward


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


# Where a pattern cannot be written, and why: the signal its label rests on does not exist in that log.
EVERYWHERE: dict[str, str] = {}
_NO_COMPONENTS = {"verl": "verl's training metrics carry only the summed score (critic/score/*); the parts of the "
                          "reward reach only rollout dumps and val-aux, so the component this pattern is about "
                          "cannot be shown"}
_NO_CLIP_SIDES = {
    "verl": "verl logs one region clip fraction (actor/pg_clipfrac; pg_clipfrac_lower is the dual-clip bound), "
            "never the high and low sides this pattern is about",
    "rfs": "the book's CSV logs no clip fractions",
}
_TRL_DPO = {
    "verl": "verl has no DPO trainer: its logs never carry preference metrics",
    "rfs": "reasoning-from-scratch trains GRPO only: its CSV has no preference columns",
}
_RESUME = {
    "trl_state": "HF restores log_history to the checkpoint on resume, so a trainer_state.json never holds the "
                 "overlap twice",
    "jsonl": "verl's file logger reopens its file with 'wb' on restart, so the overlap cannot be in it twice",
}
_NO_GRAD_NORM = {
    "rfs": "the book's CSV logs no gradient norm: the loss blow-up is the one witness left, and one witness of an "
           "optimisation break is a risk to watch, not a rollback",
}
_FINISHED = {
    "tensorboard:verl": "verl's TensorBoard folder holds no config and no end-of-training record, so it cannot show "
                        "that the run reached its planned steps",
}

PATTERNS: dict[str, Recipe] = {r.name: r for r in (
    Recipe("healthy", "reward still rising through realistic noise", "grpo", EVERYWHERE, build_healthy),
    Recipe("early", "a few percent of the planned steps done", "grpo", EVERYWHERE, build_early, planned_factor=25),
    Recipe("kl_up_reward_up", "KL rising, reward rising (healthy)", "grpo", EVERYWHERE, build_kl_up_reward_up),
    Recipe("kl_stable_reward_up", "KL flat, reward rising (ideal)", "grpo", EVERYWHERE, build_kl_stable_reward_up,
           beta=0.2),
    Recipe("kl_up_reward_flat", "KL rising, reward flat after a rise (run has run its course)", "grpo", EVERYWHERE,
           build_kl_up_reward_flat, planned_factor=1.6),
    Recipe("kl_up_reward_down", "KL rising, reward falling (destructive)", "grpo", EVERYWHERE,
           build_kl_up_reward_down, planned_factor=1.6),
    Recipe("kl_stable_reward_flat", "KL flat, reward flat (converged)", "grpo", EVERYWHERE,
           build_kl_stable_reward_flat, planned_factor=1.5, beta=0.1),
    Recipe("pg_loss_declining", "policy loss stable and slowly declining", "grpo", EVERYWHERE,
           build_pg_loss_declining, beta=0.0),
    Recipe("pg_loss_oscillating", "policy loss oscillating around zero (healthy GRPO)", "grpo", EVERYWHERE,
           build_pg_loss_oscillating, beta=0.0),
    Recipe("pg_loss_sign_reversal", "policy loss turns from positive to negative, run degrading", "grpo",
           EVERYWHERE, build_pg_loss_sign_reversal, planned_factor=1.6, beta=0.0),
    Recipe("pg_loss_blowup", "policy-loss magnitude discontinuity, run degrading", "grpo", _NO_GRAD_NORM,
           build_pg_loss_blowup, planned_factor=1.6, beta=0.0),
    Recipe("reward_saturation", "reward at the ceiling, zero-std groups", "grpo", EVERYWHERE,
           build_reward_saturation, planned_factor=1.5, beta=0.0),
    Recipe("identical_rewards", "identical rewards from the start (setup failure)", "grpo", EVERYWHERE,
           build_identical_rewards, beta=0.0),
    Recipe("component_hacking", "format reward saturates while correctness stalls or falls", "grpo",
           _NO_COMPONENTS, build_component_hacking, planned_factor=1.6, beta=0.0),
    Recipe("entropy_collapse", "entropy collapses towards zero", "grpo", EVERYWHERE, build_entropy_collapse,
           planned_factor=1.6),
    Recipe("entropy_blowup", "entropy blows up towards ln(vocab)", "grpo", EVERYWHERE, build_entropy_blowup,
           planned_factor=1.6),
    Recipe("length_collapse", "completion length collapses to a few tokens", "grpo", EVERYWHERE,
           build_length_collapse, planned_factor=1.6, beta=0.0),
    Recipe("length_explosion", "completion length explodes to the cap", "grpo", EVERYWHERE,
           build_length_explosion, planned_factor=1.6, beta=0.0),
    Recipe("length_bimodal", "bimodal lengths, mean stable", "grpo", EVERYWHERE, build_length_bimodal,
           planned_factor=1.6, beta=0.0),
    Recipe("truncation", "many completions truncated at the cap", "grpo", EVERYWHERE, build_truncation,
           planned_factor=1.6, beta=0.0),
    Recipe("clip_asymmetry", "high-side ratio clipping dominates", "grpo", _NO_CLIP_SIDES, build_clip_asymmetry,
           planned_factor=1.6, beta=0.0, off_policy=True),
    Recipe("kl_spike_transient", "one-step KL outlier that recovers", "grpo", EVERYWHERE, build_kl_spike_transient),
    Recipe("kl_blowup", "KL regime change (blow-up)", "grpo", EVERYWHERE, build_kl_blowup, planned_factor=1.6),
    Recipe("eval_peak", "held-out eval peaks while train reward rises", "grpo", EVERYWHERE, build_eval_peak,
           planned_factor=1.6, beta=0.0, eval_every=default_eval_every),
    Recipe("transient_dip", "reward dips and recovers", "grpo", EVERYWHERE, build_transient_dip),
    Recipe("generation_bound", "healthy, generation dominates the step", "grpo", EVERYWHERE,
           build_generation_bound),
    Recipe("resumed_duplicates", "resumed run, the overlap logged twice", "grpo", _RESUME,
           build_resumed_duplicates, resumes=True),
    Recipe("nan_divergence", "loss and grad norm NaN at the end", "grpo", EVERYWHERE, build_nan_divergence,
           planned_factor=1.6, beta=0.0),
    Recipe("dpo_healthy", "DPO: margins up, accuracy up, loss down from ln 2", "dpo", _TRL_DPO,
           build_dpo_healthy, planned_factor=2.0),
    Recipe("dpo_stuck", "DPO: loss stuck at ln 2", "dpo", _TRL_DPO, build_dpo_stuck, planned_factor=2.0),
    Recipe("dpo_logp_collapse", "DPO: accuracy rising while chosen log-probs collapse below a uniform guess", "dpo",
           _TRL_DPO, build_dpo_logp_collapse, planned_factor=2.0),
    Recipe("zero_reward", "reward exactly 0 on almost every step (nothing to learn from)", "grpo", EVERYWHERE,
           build_zero_reward, beta=0.0),
    Recipe("correctness_pinned", "correctness reward at its floor on every step, only format rewards rise", "grpo",
           _NO_COMPONENTS, build_correctness_pinned, beta=0.0),
    Recipe("zero_grad", "group size 2: loss and grad norm exactly 0 on most steps", "grpo", EVERYWHERE,
           build_zero_grad, beta=0.0, batch=(1, 2)),
    Recipe("finished_plateau", "reached its planned steps after a long plateau, no decline", "grpo", _FINISHED,
           build_finished_plateau, finished=True, beta=0.04),
    Recipe("finished_rising", "reached its planned steps still rising (healthy)", "grpo", _FINISHED,
           build_finished_rising, finished=True),
    Recipe("eval_flat", "train reward rising, held-out eval flat (or identical every time)", "grpo", EVERYWHERE,
           build_eval_flat, beta=0.0, eval_every=default_eval_every),
    Recipe("reward_hacking", "reward-model score jumps, KL multiplies, task accuracy falls", "grpo", EVERYWHERE,
           build_reward_hacking, planned_factor=1.6, eval_every=default_eval_every),
)}
