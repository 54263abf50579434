"""What each framework logs per step, from the simulated observations.

TRL's keys and its log rows averaged over the logging interval (with `eval_*` rows), verl's per-step metric
dicts, and the reasoning-from-scratch CSV rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from assessor.evals.generate.model import Array, Ctx, Row, batch_shape

_TRL_LAST = frozenset({"grad_norm", "learning_rate", "num_tokens"})


def trl_columns(ctx: Ctx, obs: Mapping[str, Array]) -> dict[str, Array]:
    """Per-step values under TRL's GRPO (or DPO) keys, in the order TRL logs them."""
    if ctx.recipe.kind == "dpo":
        return {
            "loss": obs["loss"], "grad_norm": obs["grad_norm"], "learning_rate": obs["lr"],
            "rewards/chosen": obs["chosen"], "rewards/rejected": obs["rejected"],
            "rewards/accuracies": obs["accuracies"], "rewards/margins": obs["margins"],
            "logps/chosen": obs["logps_chosen"], "logps/rejected": obs["logps_rejected"],
            "logits/chosen": obs["logits_chosen"], "logits/rejected": obs["logits_rejected"],
            "entropy": obs["entropy"], "mean_token_accuracy": obs["token_acc"], "num_tokens": obs["tokens"],
        }
    cols: dict[str, Array] = {
        "loss": obs["pg"] + ctx.beta * obs["kl"],
        "grad_norm": obs["grad_norm"],
        "learning_rate": obs["lr"],
        "num_tokens": np.cumsum(obs["tokens"]),
        "completions/mean_length": obs["len_mean"],
        "completions/min_length": obs["len_min"],
        "completions/max_length": obs["len_max"],
        "completions/clipped_ratio": obs["clipped"],
        "completions/mean_terminated_length": obs["term_mean"],
        "completions/min_terminated_length": obs["term_min"],
        "completions/max_terminated_length": obs["term_max"],
        "rewards/accuracy_reward/mean": obs["acc_mean"],
        "rewards/accuracy_reward/std": obs["acc_std"],
    }
    if "fmt_mean" in obs:
        cols["rewards/format_reward/mean"] = obs["fmt_mean"]
        cols["rewards/format_reward/std"] = obs["fmt_std"]
    cols["reward"] = obs["reward"]
    cols["reward_std"] = obs["reward_std"]
    cols["frac_reward_zero_std"] = obs["zero_std"]
    if ctx.beta > 0:
        cols["kl"] = obs["kl"]
    cols["entropy"] = obs["entropy"]
    cols["clip_ratio/low_mean"] = obs["clip_low"]
    cols["clip_ratio/low_min"] = np.zeros(len(obs["clip_low"]))
    cols["clip_ratio/high_mean"] = obs["clip_high"]
    cols["clip_ratio/high_max"] = obs["clip_high_max"]
    cols["clip_ratio/region_mean"] = obs["clip_low"] + obs["clip_high"]
    cols["step_time"] = obs["step_time"]
    return cols


def _steps_per_epoch(ctx: Ctx) -> float:
    prompts, _ = batch_shape(ctx)
    return max(1.0, int(ctx.opt("dataset_size", 7473)) / max(1, prompts if ctx.recipe.kind == "grpo" else 8))


def trl_rows(
    ctx: Ctx, cols: Mapping[str, Array], logging_steps: int, first: int = 1, last: int | None = None,
) -> list[Row]:
    """HF/TRL log rows, one every `logging_steps` steps.

    Each value is averaged over the steps since the previous log (NaN-aware); grad norm, learning rate and
    the token count are the last step's; loss turns NaN when any step's loss was NaN, as HF's running sum does.
    """
    n = len(next(iter(cols.values())))
    last = n if last is None else last
    rows: list[Row] = []
    per_epoch = _steps_per_epoch(ctx)
    start = ((first - 1) // logging_steps + 1) * logging_steps
    for step in range(start, last + 1, logging_steps):
        lo, hi = step - logging_steps, step
        row: Row = {}
        for key, values in cols.items():
            window = values[lo:hi]
            if key in _TRL_LAST:
                value = float(window[-1])
            elif key == "loss":
                value = round(float(window.mean()), 4)
            else:
                finite = window[np.isfinite(window)]
                value = float(finite.mean()) if len(finite) else math.nan
            row[key] = None if (math.isnan(value) and key not in ("loss", "grad_norm")) else value
        row["epoch"] = round(step / per_epoch, 4)
        row["step"] = step
        rows.append(row)
    return rows


def trl_eval_rows(ctx: Ctx, evals: Mapping[int, float], first: int = 1, last: int | None = None) -> list[Row]:
    """`eval_*` rows at the evaluation steps (separate dicts sharing the step with a training row).

    `eval_loss` is GRPO's surrogate on the eval batches: near zero and no measure of quality, so it wobbles at
    the training loss's scale without following the held-out accuracy.
    """
    rows: list[Row] = []
    per_epoch = _steps_per_epoch(ctx)
    for step, value in sorted(evals.items()):
        if step < first or (last is not None and step > last):
            continue
        rows.append({
            "eval_loss": round(float(np.random.default_rng([ctx.spec.seed, step, 6]).normal(0.0, 0.005)), 4),
            "eval_reward": value,
            "eval_rewards/accuracy_reward/mean": value, "eval_runtime": round(38.0 + 4 * value, 3),
            "eval_samples_per_second": round(500 / (38.0 + 4 * value), 3), "eval_steps_per_second": 0.421,
            "epoch": round(step / per_epoch, 4), "step": step,
        })
    return rows


def trl_summary_row(ctx: Ctx, obs: Mapping[str, Array]) -> Row | None:
    """The summary HF's `Trainer.train()` logs once training has reached `max_steps`, or None for a live run.

    `{train_runtime, train_samples_per_second, train_steps_per_second, total_flos, train_loss, epoch, step}`:
    the end-of-training marker of every TRL log (the trainer state, the TensorBoard events as `train/...`, the
    console, where the progress callback leaves `total_flos` out).
    """
    if not ctx.finished:
        return None
    n = ctx.n
    runtime = float(np.sum(obs["step_time"])) if "step_time" in obs else 4.0 * n
    prompts, group = batch_shape(ctx)
    samples = n * (prompts * group if ctx.recipe.kind == "grpo" else int(ctx.opt("pairs", 8)))
    loss = obs["pg"] + ctx.beta * obs["kl"] if "pg" in obs else obs["loss"]
    finite = loss[np.isfinite(loss)]
    return {
        "train_runtime": round(runtime, 4), "train_samples_per_second": round(samples / runtime, 3),
        "train_steps_per_second": round(n / runtime, 3), "total_flos": 0.0,
        "train_loss": float(finite.mean()) if len(finite) else math.nan,
        "epoch": round(n / _steps_per_epoch(ctx), 4), "step": n,
    }


def merge_rows(train: list[Row], evals: list[Row]) -> list[Row]:
    """Training rows with the eval rows inserted before the first later step (HF logs eval after train)."""
    out = list(train)
    for row in evals:
        index = next((i for i, r in enumerate(out) if r["step"] > row["step"]), len(out))
        out.insert(index, row)
    return out


def verl_rows(ctx: Ctx, obs: Mapping[str, Array], evals: Mapping[int, float], first: int = 1,
              last: int | None = None) -> list[tuple[int, Row]]:
    """The per-step metric dicts verl logs (step, {key: value}), validation inside the test steps' rows."""
    n = len(obs["reward"])
    last = n if last is None else last
    prompts, group = batch_shape(ctx)
    use_kl = ctx.beta > 0
    saves = set(ctx.all_saves)
    rows: list[tuple[int, Row]] = []
    if first <= 1 and 0 in evals:
        rows.append((0, {"val-core/openai/gsm8k/acc/mean@1": evals[0]}))
    for i in range(first - 1, last):
        step = i + 1
        gen, rest = float(obs["time_gen"][i]), float(obs["time_rest"][i])
        row: Row = {
            "training/global_step": step, "training/epoch": int(step // _steps_per_epoch(ctx)),
            "actor/entropy": obs["entropy"][i],
        }
        if use_kl:
            row["actor/kl_loss"] = obs["kl"][i]
            row["actor/kl_coef"] = ctx.beta / 40
        row.update({
            "actor/pg_loss": obs["pg"][i], "actor/pg_clipfrac": obs["clip_low"][i] + obs["clip_high"][i],
            "actor/ppo_kl": obs["ppo_kl"][i], "actor/pg_clipfrac_lower": 0.0, "actor/grad_norm": obs["grad_norm"][i],
            "perf/mfu/actor": 0.21 + 0.01 * math.sin(step), "perf/max_memory_allocated_gb": 61.3,
            "perf/max_memory_reserved_gb": 72.4, "perf/cpu_memory_used_gb": 98.2, "actor/lr": obs["lr"][i],
            "critic/score/mean": obs["reward"][i], "critic/score/max": obs["reward_max"][i],
            "critic/score/min": obs["reward_min"][i], "critic/rewards/mean": obs["reward"][i],
            "critic/rewards/max": obs["reward_max"][i], "critic/rewards/min": obs["reward_min"][i],
            "critic/advantages/mean": 0.0, "critic/advantages/max": 1.7886 if obs["reward_std"][i] > 0 else 0.0,
            "critic/advantages/min": -1.7886 if obs["reward_std"][i] > 0 else 0.0,
            "critic/returns/mean": 0.0, "critic/returns/max": 1.7886 if obs["reward_std"][i] > 0 else 0.0,
            "critic/returns/min": -1.7886 if obs["reward_std"][i] > 0 else 0.0,
            "response_length/mean": obs["len_mean"][i], "response_length/max": obs["len_max"][i],
            "response_length/min": obs["len_min"][i], "response_length/clip_ratio": obs["clipped"][i],
            "prompt_length/mean": 104.3, "prompt_length/max": 201.0, "prompt_length/min": 66.0,
            "prompt_length/clip_ratio": 0.0,
            "timing_s/gen": gen, "timing_s/reward": 0.04 * rest, "timing_s/old_log_prob": 0.18 * rest,
            "timing_s/ref": 0.17 * rest, "timing_s/adv": 0.002 * rest, "timing_s/update_actor": 0.6 * rest,
        })
        if step in evals:
            row["val-core/openai/gsm8k/acc/mean@1"] = evals[step]
            row["timing_s/testing"] = 36.0 + 4 * math.cos(step)
        if step in saves:
            row["timing_s/save_checkpoint"] = 61.0 + 3 * math.sin(step)
        phases = sum(float(v) for k, v in row.items() if k.startswith("timing_s/"))
        row["timing_s/step"] = phases + 0.35
        tokens = float(obs["tokens"][i])
        row["timing_per_token_ms/gen"] = 1000 * gen / max(1.0, float(obs["len_mean"][i]) * prompts * group)
        row["perf/total_num_tokens"] = tokens
        row["perf/time_per_step"] = row["timing_s/step"]
        row["perf/throughput"] = tokens / row["timing_s/step"] / 8
        rows.append((step, {k: (float(v) if not isinstance(v, int) else v) for k, v in row.items()}))
    return rows


def rfs_rows(ctx: Ctx, obs: Mapping[str, Array], evals: Mapping[int, float], first: int = 1,
             last: int | None = None) -> tuple[list[str], list[list[str]]]:
    """reasoning-from-scratch CSV header and rows (`%.6f`, eval_acc in percent, empty when not evaluated)."""
    n = len(obs["reward"])
    last = n if last is None else last
    with_kl = ctx.beta > 0 or ctx.recipe.off_policy
    header = ["step", "total_steps", "loss"]
    if with_kl:
        header += ["kl_loss", "policy_ratio"]
    header.append("reward_avg")
    if "fmt_mean" in obs:
        header.append("format_reward_avg")
    header += ["tokens_per_sec", "avg_response_len", "adv_avg", "adv_std", "entropy_avg", "eval_acc"]
    rows: list[list[str]] = []
    for i in range(first - 1, last):
        step = i + 1
        spread = float(obs["adv_std"][i])
        kl_loss = ctx.beta / 40 * float(obs["kl"][i]) * float(obs["len_mean"][i])
        loss = (float(obs["pg"][i]) * 40.0 if spread > 0 else 0.0) + kl_loss
        values: dict[str, str] = {
            "step": str(step), "total_steps": str(ctx.planned), "loss": f"{loss:.6f}",
            "kl_loss": f"{kl_loss:.6f}", "policy_ratio": f"{1.0 + 0.01 * float(obs['ppo_kl'][i]):.6f}",
            "reward_avg": f"{float(obs['reward'][i]):.6f}",
            "tokens_per_sec": f"{float(obs['len_mean'][i]) * 8 / float(obs['step_time'][i]) / 10:.6f}",
            "avg_response_len": f"{float(obs['len_mean'][i]):.6f}", "adv_avg": f"{0.0:.6f}",
            "adv_std": f"{spread:.6f}", "entropy_avg": f"{float(obs['entropy'][i]):.6f}",
            "eval_acc": f"{100 * evals[step]:.1f}" if step in evals else "",
        }
        if "fmt_mean" in obs:
            values["format_reward_avg"] = f"{float(obs['fmt_mean'][i]):.6f}"
        rows.append([values[h] for h in header])
    return header, rows
