"""Second, independent holdout set for the assessor: ~40 synthetic runs in formats the first sets barely touch.

Usage:  python evals/holdout2/make_holdout2.py            (writes runs/ and holdout2.yaml next to this file)

Each run is built from a *shape* (a small function that returns metric curves in framework-neutral units) and a
*writer* (a small function that turns those curves into the files a given framework / tracker really leaves on
disk). The labels in CASES come from how each run was constructed (ground truth), and the reasoning says what a
practitioner would see in the curves.

Writers that need an SDK are optional:
  * W&B offline runs need the `wandb` package in this interpreter (written with WANDB_MODE=offline);
  * MLflow stores need `mlflow`, either importable here or in the interpreter named by $HOLDOUT2_MLFLOW_PYTHON
    (default /tmp/mlvenv/bin/python). MLflow >= 3.7 needs MLFLOW_ALLOW_FILE_STORE=true for a file store; we set it.
Runs whose SDK is missing are skipped (and left out of the yaml); the script says which.
Everything is deterministic from the per-case seed, except names the SDKs choose themselves (W&B folder timestamps,
MLflow run ids).
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
RUNS = HERE / "runs"
T0 = 1763100000.0  # a fixed wall-clock origin (Nov 2025) for every timestamp we write ourselves

# ----------------------------------------------------------------------------------------------------------
# Shapes: each returns a dict of numpy arrays over steps 1..n (index i is step i+1), in neutral units:
#   reward (0..1 before scaling), reward_std, zero_std (fraction of flat groups), kl, entropy, length, trunc,
#   grad_norm, loss, step_time, eval (eval accuracy 0..1, sampled by the writer every eval_every steps),
#   optional: acc/fmt (reward components), value_loss/expl_var/values (critic), DPO keys (see dpo_base).
# ----------------------------------------------------------------------------------------------------------


def _t(n):
    return np.arange(1, n + 1, dtype=float)


def base(
    rng,
    n,
    r0=0.2,
    r1=0.65,
    tau=None,
    noise=0.03,
    batch=None,
    kl_end=0.03,
    ent0=0.55,
    ent_end=0.42,
    len0=320.0,
    len_end=380.0,
    cap=1024,
    group=8,
):
    t = _t(n)
    tau = tau or n / 4
    p = r0 + (r1 - r0) * (1 - np.exp(-t / tau))
    reward = rng.binomial(batch, np.clip(p, 0, 1)) / batch if batch else np.clip(p + rng.normal(0, noise, n), 0, 1)
    length = len0 + (len_end - len0) * t / n + rng.normal(0, 8, n)
    return dict(
        p=p,
        reward=reward,
        reward_std=np.sqrt(np.clip(p * (1 - p), 1e-4, None)) + rng.normal(0, 0.01, n),
        zero_std=np.clip(p**group + (1 - p) ** group + rng.normal(0, 0.03, n), 0, 1),
        kl=np.abs(kl_end * (t / n) ** 1.1 + rng.normal(0, kl_end * 0.04 + 1e-4, n)),
        entropy=ent0 + (ent_end - ent0) * t / n + rng.normal(0, 0.01, n),
        length=length,
        cap=np.full(n, float(cap)),
        trunc=np.clip(0.01 + 0.02 * np.maximum(length - 0.7 * cap, 0) / cap + rng.normal(0, 0.004, n), 0, 1),
        grad_norm=np.exp(rng.normal(np.log(0.25), 0.25, n)),
        loss=rng.normal(0, 0.006, n),
        step_time=np.exp(rng.normal(np.log(40.0), 0.05, n)) * (length / len0),
        eval=np.clip(p - 0.05 + rng.normal(0, 0.008, n), 0, 1),
        value_loss=0.08 + 0.4 * np.exp(-t / (n / 6)) + np.abs(rng.normal(0, 0.01, n)),
        expl_var=np.clip(0.15 + 0.6 * (1 - np.exp(-t / (n / 4))) + rng.normal(0, 0.03, n), -1, 1),
        values=p - 0.1 + rng.normal(0, 0.02, n),
    )


def ramp(n, start, width):
    """0 before `start`, rising smoothly to 1 over `width` steps."""
    x = np.clip((_t(n) - start) / max(width, 1), 0, 1)
    return x * x * (3 - 2 * x)


def shape_healthy(rng, n, **kw):
    return base(rng, n, **kw)


def shape_slow_learner(rng, n, **kw):
    return base(rng, n, r0=0.06, r1=0.3, tau=n * 1.2, batch=32, **kw)


def shape_kl_rises_with_reward(rng, n, **kw):
    c = base(rng, n, r0=0.25, r1=0.8, tau=n / 3, kl_end=0.35, ent_end=0.35, **kw)
    return c


def shape_periodic_spikes(rng, n, every=100, **kw):
    c = base(rng, n, **kw)
    at = (_t(n) % every) == 0
    c["grad_norm"][at] *= 6
    c["step_time"][at] *= 3.5
    c["loss"][at] += 0.05
    return c


def shape_converged(rng, n, **kw):
    return base(rng, n, r0=0.2, r1=0.72, tau=n / 12, **kw)


def shape_nan_burst_transient(rng, n, at=180, width=3, **kw):
    c = base(rng, n, **kw)
    c["grad_norm"][at - 1 : at - 1 + width] = np.nan
    c["loss"][at - 1 : at - 1 + width] = np.nan
    return c


def shape_length_growth(rng, n, **kw):
    c = base(rng, n, r0=0.3, r1=0.7, len0=450, len_end=1500, cap=4096, **kw)
    return c


def shape_noisy_binary(rng, n, **kw):
    return base(rng, n, r0=0.3, r1=0.55, tau=n / 2, batch=16, **kw)


def shape_identical_rewards(rng, n, **kw):
    c = base(rng, n, **kw)
    c["reward"][:] = 0.0
    c["p"][:] = 0.0
    c["reward_std"][:] = 0.0
    c["zero_std"][:] = 1.0
    c["kl"][:] = 0.0
    c["grad_norm"][:] = 0.0
    c["loss"][:] = 0.0
    c["eval"] = np.clip(0.12 + rng.normal(0, 0.005, n), 0, 1)
    c["entropy"] = 0.55 + rng.normal(0, 0.003, n)
    return c


def shape_saturated(rng, n, at=40, **kw):
    c = base(rng, n, r0=0.5, r1=1.0, tau=at / 3, **kw)
    sat = _t(n) >= at
    c["reward"][sat] = 1.0
    c["reward_std"][sat] = 0.0
    c["zero_std"][sat] = 1.0
    c["grad_norm"][sat] = 0.0
    c["loss"][sat] = 0.0
    c["eval"][sat] = np.clip(0.93 + rng.normal(0, 0.005, sat.sum()), 0, 1)
    return c


def shape_kl_up_reward_flat(rng, n, onset=200, **kw):
    c = base(rng, n, r0=0.2, r1=0.45, tau=onset / 3, **kw)
    r = ramp(n, onset, n - onset)
    c["kl"] = c["kl"] * 0.3 + 0.02 + 0.7 * r**1.3 + np.abs(rng.normal(0, 0.01, n))
    c["eval"] = np.clip(0.4 - 0.03 * r + rng.normal(0, 0.008, n), 0, 1)
    return c


def shape_peak_decline(rng, n, peak=300, drop=0.4, **kw):
    c = base(rng, n, r0=0.2, r1=0.7, tau=peak / 3, **kw)
    r = np.clip((_t(n) - peak) / (n - peak), 0, 1)
    c["reward"] = np.clip(c["reward"] - drop * c["p"] * r, 0, 1)
    c["eval"] = np.clip(c["eval"] - drop * 0.8 * c["p"] * r, 0, 1)
    c["kl"] = c["kl"] + 0.15 * r
    return c


def shape_eval_peak_train_up(rng, n, peak=400, **kw):
    c = base(rng, n, r0=0.25, r1=0.85, tau=n / 3, **kw)
    t = _t(n)
    ev = 0.3 + 0.25 * (1 - np.exp(-t / (peak / 3)))
    ev = ev - 0.22 * np.clip((t - peak) / (n - peak), 0, 1)
    c["eval"] = np.clip(ev + rng.normal(0, 0.008, n), 0, 1)
    return c


def shape_entropy_collapse(rng, n, onset=150, **kw):
    c = base(rng, n, r0=0.25, r1=0.55, tau=onset / 2, **kw)
    r = ramp(n, onset, 100)
    c["entropy"] = c["entropy"] * (1 - r) + 0.008 * r + np.abs(rng.normal(0, 0.002, n)) * r
    c["zero_std"] = np.clip(c["zero_std"] * (1 - r) + 0.97 * r, 0, 1)
    c["reward_std"] = c["reward_std"] * (1 - 0.9 * r)
    c["reward"] = np.clip(c["reward"] - 0.08 * r, 0, 1)
    c["eval"] = np.clip(c["eval"] - 0.1 * r, 0, 1)
    c["length"] = c["length"] * (1 - 0.25 * r)
    return c


def shape_entropy_blowup(rng, n, onset=180, **kw):
    c = base(rng, n, **kw)
    r = ramp(n, onset, 40)
    c["entropy"] = c["entropy"] + 6.0 * r + rng.normal(0, 0.3, n) * r
    c["reward"] = np.clip(c["reward"] * (1 - 0.9 * r), 0, 1)
    c["eval"] = np.clip(c["eval"] * (1 - 0.85 * r), 0, 1)
    c["length"] = c["length"] * (1 - r) + c["cap"] * 0.97 * r
    c["trunc"] = np.clip(c["trunc"] + 0.85 * r, 0, 1)
    c["kl"] = c["kl"] + 2.5 * r
    c["grad_norm"] = c["grad_norm"] * (1 + 15 * r)
    return c


def shape_length_explosion(rng, n, onset=250, **kw):
    c = base(rng, n, r0=0.3, r1=0.62, tau=onset / 3, len0=600, len_end=700, cap=4096, **kw)
    r = ramp(n, onset, 120)
    c["length"] = c["length"] * (1 - r) + 4000 * r + rng.normal(0, 20, n) * r
    c["trunc"] = np.clip(c["trunc"] + 0.8 * r, 0, 1)
    c["reward"] = np.clip(c["reward"] - 0.35 * r, 0, 1)
    c["eval"] = np.clip(c["eval"] - 0.3 * r, 0, 1)
    c["step_time"] = c["step_time"] * (1 + 4 * r)
    return c


def shape_length_collapse(rng, n, onset=200, **kw):
    c = base(rng, n, r0=0.2, r1=0.55, tau=onset / 3, len0=250, len_end=260, **kw)
    r = ramp(n, onset, 80)
    c["length"] = c["length"] * (1 - r) + (6 + rng.normal(0, 1, n)) * r
    c["reward"] = np.clip(c["reward"] * (1 - 0.9 * r), 0, 1)
    c["entropy"] = c["entropy"] * (1 - 0.6 * r)
    return c


def shape_truncation_cap(rng, n, onset=300, **kw):
    c = base(rng, n, r0=0.2, r1=0.5, tau=onset / 3, len0=600, len_end=700, cap=1024, **kw)
    r = ramp(n, onset, 150)
    c["length"] = c["length"] * (1 - r) + 1010 * r + rng.normal(0, 4, n) * r
    c["trunc"] = np.clip(c["trunc"] + 0.7 * r + rng.normal(0, 0.02, n) * r, 0, 1)
    c["reward"] = np.clip(c["reward"] - 0.15 * r, 0, 1)
    return c


def shape_reward_hacking(rng, n, onset=1100, **kw):
    c = base(rng, n, r0=0.15, r1=0.6, tau=onset / 3, **kw)
    t = _t(n)
    r = ramp(n, onset, 300)
    acc = np.clip(c["p"] - 0.3 * r + rng.normal(0, 0.03, n), 0, 1)
    fmt = np.clip(0.3 + 0.35 * (1 - np.exp(-t / 400)) + 0.35 * r + rng.normal(0, 0.02, n), 0, 1)
    c["acc"], c["fmt"] = acc, fmt
    c["reward"] = acc + fmt  # the total the trainer logs (weights 1, 1): rises while accuracy falls
    c["eval"] = np.clip(c["p"] - 0.05 - 0.25 * r + rng.normal(0, 0.008, n), 0, 1)
    c["length"] = c["length"] * (1 - 0.5 * r)
    return c


def shape_value_divergence(rng, n, onset=220, **kw):
    c = base(rng, n, r0=0.1, r1=0.55, tau=onset / 3, **kw)
    r = ramp(n, onset, 80)
    c["value_loss"] = c["value_loss"] * (1 + 400 * r**2) + np.abs(rng.normal(0, 2, n)) * r
    c["expl_var"] = c["expl_var"] * (1 - r) - 2.5 * r + rng.normal(0, 0.2, n) * r
    c["values"] = c["values"] + 8 * r * rng.choice([-1, 1], n)
    c["reward"] = np.clip(c["reward"] - 0.3 * r, 0, 1)
    c["eval"] = np.clip(c["eval"] - 0.25 * r, 0, 1)
    c["grad_norm"] = c["grad_norm"] * (1 + 10 * r)
    return c


def shape_nan_divergence(rng, n, onset=320, **kw):
    c = base(rng, n, **kw)
    pre = ramp(n, onset - 15, 15)
    c["grad_norm"] = c["grad_norm"] * (1 + 40 * pre)
    after = _t(n) >= onset
    for k in ("grad_norm", "loss", "kl", "entropy"):
        c[k][after] = np.nan
    c["reward"][after] = np.clip(rng.normal(0.01, 0.01, after.sum()), 0, 1)
    c["length"][after] = c["cap"][after]
    c["trunc"][after] = 1.0
    return c


def shape_late_collapse(rng, n, onset=4300, **kw):
    c = base(rng, n, r0=0.2, r1=0.75, tau=n / 6, **kw)
    r = ramp(n, onset, 30)
    c["reward"] = np.clip(c["reward"] * (1 - 0.88 * r), 0, 1)
    c["eval"] = np.clip(c["eval"] * (1 - 0.85 * r), 0, 1)
    c["entropy"] = c["entropy"] + 2.5 * r
    c["kl"] = c["kl"] + 1.5 * r
    c["length"] = c["length"] * (1 - r) + c["cap"] * 0.9 * r
    c["grad_norm"] = c["grad_norm"] * (1 + 8 * r)
    return c


def shape_kl_explosion(rng, n, onset=1200, **kw):
    c = base(rng, n, r0=0.15, r1=0.5, tau=onset / 3, kl_end=0.06, **kw)
    r = ramp(n, onset, 500)
    c["kl"] = c["kl"] + 5 * r**1.5
    c["reward"] = np.clip(c["reward"] - 0.3 * r, 0, 1)
    c["eval"] = np.clip(c["eval"] - 0.3 * r, 0, 1)
    return c


def dpo_base(rng, n, overfit_at=None, **kw):
    """Offline/online DPO curves: margins, preference accuracy, implicit rewards, log-probs, loss."""
    t = _t(n)
    margin = 2.2 * (1 - np.exp(-t / (n / 4))) + rng.normal(0, 0.12, n)
    acc = np.clip(0.5 + 0.3 * (1 - np.exp(-t / (n / 5))) + rng.normal(0, 0.03, n), 0, 1)
    eacc = 0.5 + 0.22 * (1 - np.exp(-t / (n / 5)))
    eloss = 0.693 - 0.17 * (1 - np.exp(-t / (n / 5)))
    if overfit_at:
        r = np.clip((t - overfit_at) / (n - overfit_at), 0, 1)
        margin = margin + 9 * r**1.2
        acc = np.clip(acc + 0.19 * r, 0, 1)
        eacc = eacc - 0.13 * r
        eloss = eloss + 0.45 * r**1.2
    chosen = -0.4 * margin * 0.3 + rng.normal(0, 0.05, n)
    rejected = chosen - margin
    loss = np.clip(np.log1p(np.exp(-margin)) + rng.normal(0, 0.03, n), 0.001, None)
    return dict(
        margin=margin,
        acc=acc,
        chosen=chosen,
        rejected=rejected,
        loss=loss,
        eval_acc=np.clip(eacc + rng.normal(0, 0.008, n), 0, 1),
        eval_loss=eloss + rng.normal(0, 0.005, n),
        eval_margin=1.4 * (1 - np.exp(-t / (n / 5))) + rng.normal(0, 0.05, n),
        logp_chosen=-180 - 20 * t / n + rng.normal(0, 3, n),
        logp_rejected=-190 - 20 * t / n - 2 * margin,
        grad_norm=np.exp(rng.normal(np.log(6.0), 0.3, n)),
        kl=0.5 * t / n * 10 + rng.normal(0, 0.1, n),
        entropy=60 - 5 * t / n + rng.normal(0, 0.5, n),
        reward=np.clip(0.4 + 0.35 * (1 - np.exp(-t / (n / 4))) + rng.normal(0, 0.03, n), 0, 1),
        length=220 + rng.normal(0, 6, n),
    )


def shape_dpo_healthy(rng, n, **kw):
    return dpo_base(rng, n)


def shape_dpo_overfit(rng, n, at=350, **kw):
    return dpo_base(rng, n, overfit_at=at)


# ----------------------------------------------------------------------------------------------------------
# Row builders: neutral curves -> the raw keys a framework logs. Each returns (train_rows, eval_rows), lists of
# (step, {key: value}). `scale` maps the 0..1 reward to the task's range (e.g. (-1, 1) or (0, 10)).
# ----------------------------------------------------------------------------------------------------------


def _sc(x, scale):
    lo, hi = scale
    return lo + (hi - lo) * x


def _f(x, nd=6):
    x = float(x)
    return x if not math.isfinite(x) else round(x, nd)


def logged_steps(n, every, first=1):
    s = list(range(every, n + 1, every)) if every > 1 else list(range(first, n + 1))
    return s


def rows_trl_grpo(c, n, every=10, eval_every=0, scale=(0, 1), kl=True, version="new", lr=1e-6):
    train, ev = [], []
    for s in logged_steps(n, every):
        i = s - 1
        w = slice(max(0, i - every + 1), i + 1)  # TRL averages every value collected since the last log
        row = {
            "loss": _f(np.nanmean(c["loss"][w]) if not np.isnan(c["loss"][i]) else np.nan, 4),
            "grad_norm": _f(c["grad_norm"][i]),
            "learning_rate": lr * min(1.0, s / 20),
            "num_tokens": float(s * 64 * (c["length"][i] + 150)),
        }
        if version == "new":
            row.update(
                {
                    "completions/mean_length": _f(np.mean(c["length"][w]), 3),
                    "completions/min_length": _f(np.mean(c["length"][w]) * 0.35, 1),
                    "completions/max_length": _f(min(np.mean(c["length"][w]) * 2.1, c["cap"][i]), 1),
                    "completions/clipped_ratio": _f(np.mean(c["trunc"][w]), 4),
                    "completions/mean_terminated_length": _f(np.mean(c["length"][w]) * (1 - np.mean(c["trunc"][w])), 3),
                }
            )
        else:
            row["completion_length"] = _f(np.mean(c["length"][w]), 3)
        if "acc" in c:
            sfx = "/mean" if version == "new" else ""
            row[f"rewards/accuracy_reward{sfx}"] = _f(np.mean(c["acc"][w]))
            row[f"rewards/format_reward{sfx}"] = _f(np.mean(c["fmt"][w]))
            if version == "new":
                row["rewards/accuracy_reward/std"] = _f(
                    np.sqrt(max(np.mean(c["acc"][w]) * (1 - np.mean(c["acc"][w])), 0))
                )
                row["rewards/format_reward/std"] = _f(
                    np.sqrt(max(np.mean(c["fmt"][w]) * (1 - np.mean(c["fmt"][w])), 0))
                )
            row["reward"] = _f(np.mean(c["reward"][w]))
        else:
            row["rewards/correctness_reward" + ("/mean" if version == "new" else "")] = _f(
                _sc(np.mean(c["reward"][w]), scale)
            )
            row["reward"] = _f(_sc(np.mean(c["reward"][w]), scale))
        row["reward_std"] = _f(np.mean(c["reward_std"][w]) * (scale[1] - scale[0]))
        if version == "new":
            row["frac_reward_zero_std"] = _f(np.mean(c["zero_std"][w]), 4)
            row["entropy"] = _f(np.mean(c["entropy"][w])) if not np.isnan(c["entropy"][i]) else None
            row["clip_ratio/region_mean"] = 0.0
            row["clip_ratio/low_mean"] = 0.0
            row["clip_ratio/high_mean"] = 0.0
            row["step_time"] = _f(c["step_time"][i], 3)
        if kl:
            row["kl"] = _f(np.mean(c["kl"][w])) if not np.isnan(c["kl"][i]) else None
        row["epoch"] = round(s / n * 1.0, 4)
        train.append((s, row))
        if eval_every and s % eval_every == 0:
            ev.append(
                (
                    s,
                    {
                        "eval_reward": _f(_sc(c["eval"][i], scale)),
                        "eval_loss": _f(c["loss"][i], 4),
                        "eval_runtime": 88.3,
                        "eval_samples_per_second": 5.66,
                        "eval_steps_per_second": 0.36,
                        "epoch": round(s / n, 4),
                    },
                )
            )
    return train, ev


def rows_trl_rloo(c, n, every=25, eval_every=0, scale=(0, 1)):
    train, ev = rows_trl_grpo(c, n, every, eval_every, scale, kl=True)
    for _, row in train:  # RLOO is sequence-level clipped; keeps GRPO keys since v0.22
        row["clip_ratio/region_mean"] = row["clip_ratio/low_mean"] = row["clip_ratio/high_mean"] = 0.0
    return train, ev


def rows_trl_ppo(c, n, every=1, scale=(0, 10), eval_every=0):
    train = []
    for s in logged_steps(n, every):
        i = s - 1
        score = _sc(c["reward"][i], scale)
        nsr = -0.05 * c["kl"][i] * 10
        train.append(
            (
                s,
                {
                    "eps": 3,
                    "objective/kl": _f(c["kl"][i] * 10),
                    "objective/entropy": _f(c["entropy"][i] * 100),
                    "objective/non_score_reward": _f(nsr),
                    "objective/rlhf_reward": _f(score + nsr),
                    "objective/scores": _f(score),
                    "policy/approxkl_avg": _f(abs(c["loss"][i]) * 0.5 + 0.002),
                    "policy/clipfrac_avg": _f(0.02 + 0.01 * c["grad_norm"][i]),
                    "loss/policy_avg": _f(c["loss"][i] * 3),
                    "loss/value_avg": _f(c["value_loss"][i]),
                    "val/clipfrac_avg": _f(min(0.9, 0.05 + 0.02 * c["value_loss"][i])),
                    "policy/entropy_avg": _f(c["entropy"][i] * 3),
                    "val/ratio": _f(1.0 + c["loss"][i]),
                    "val/ratio_var": _f(1e-4 + abs(c["loss"][i]) * 0.01),
                    "val/num_eos_tokens": int(64 * (1 - c["trunc"][i])),
                    "lr": 3e-6 * (1 - s / (n + 1)),
                    "episode": s * 64,
                    "epoch": round(s * 64 / 20000, 4),
                },
            )
        )
    return train, []


def rows_dpo(c, n, every=10, eval_every=100):
    train, ev = [], []
    for s in logged_steps(n, every):
        i = s - 1
        train.append(
            (
                s,
                {
                    "loss": _f(c["loss"][i], 4),
                    "grad_norm": _f(c["grad_norm"][i]),
                    "learning_rate": 5e-7,
                    "rewards/chosen": _f(c["chosen"][i]),
                    "rewards/rejected": _f(c["rejected"][i]),
                    "rewards/accuracies": _f(c["acc"][i], 4),
                    "rewards/margins": _f(c["margin"][i]),
                    "logps/chosen": _f(c["logp_chosen"][i], 3),
                    "logps/rejected": _f(c["logp_rejected"][i], 3),
                    "logits/chosen": -1.91,
                    "logits/rejected": -1.87,
                    "epoch": round(s / n * 3, 4),
                },
            )
        )
        if eval_every and s % eval_every == 0:
            ev.append(
                (
                    s,
                    {
                        "eval_loss": _f(c["eval_loss"][i]),
                        "eval_rewards/accuracies": _f(c["eval_acc"][i], 4),
                        "eval_rewards/margins": _f(c["eval_margin"][i]),
                        "eval_rewards/chosen": _f(-0.3),
                        "eval_rewards/rejected": _f(-0.3 - c["eval_margin"][i]),
                        "eval_runtime": 41.2,
                        "eval_samples_per_second": 24.3,
                        "eval_steps_per_second": 3.04,
                        "epoch": round(s / n * 3, 4),
                    },
                )
            )
    return train, ev


def rows_online_dpo(c, n, every=10, eval_every=0):
    train = []
    for s in logged_steps(n, every):
        i = s - 1
        train.append(
            (
                s,
                {
                    "loss": _f(c["loss"][i], 4),
                    "grad_norm": _f(c["grad_norm"][i]),
                    "learning_rate": 5e-7,
                    "objective/kl": _f(c["kl"][i]),
                    "objective/entropy": _f(c["entropy"][i]),
                    "objective/non_score_reward": _f(-0.1 * c["kl"][i]),
                    "objective/rlhf_reward": _f(_sc(c["reward"][i], (-4, 6)) - 0.1 * c["kl"][i]),
                    "objective/scores": _f(_sc(c["reward"][i], (-4, 6))),
                    "rewards/chosen": _f(c["chosen"][i]),
                    "rewards/rejected": _f(c["rejected"][i]),
                    "rewards/accuracies": _f(c["acc"][i], 4),
                    "rewards/margins": _f(c["margin"][i]),
                    "logps/chosen": _f(c["logp_chosen"][i], 3),
                    "logps/rejected": _f(c["logp_rejected"][i], 3),
                    "val/contain_eos_token": 0.97,
                    "beta": 0.1,
                    "epoch": round(s / n, 4),
                },
            )
        )
    return train, []


def rows_verl(c, n, every=1, eval_every=0, scale=(0, 1), critic=False, dapo=False, val_key=None):
    train, ev = [], []
    val_key = val_key or ("val-core/math_dapo/acc/mean@16" if dapo else "val-core/openai/gsm8k/reward/mean@1")
    if eval_every:
        train.append((0, {val_key: _f(_sc(c["eval"][0] - 0.05, scale))}))  # val_before_train at step 0
    for s in logged_steps(n, every):
        i = s - 1
        sc = _sc(c["reward"][i], scale)
        row = {
            "actor/entropy": _f(c["entropy"][i]),
            "actor/pg_loss": _f(c["loss"][i]),
            "actor/pg_clipfrac": _f(0.002 + 0.001 * c["grad_norm"][i]),
            "actor/ppo_kl": _f(c["loss"][i] * 0.01),
            "actor/pg_clipfrac_lower": 0.0,
            "actor/grad_norm": _f(c["grad_norm"][i]),
            "actor/lr": 1e-6,
            "critic/score/mean": _f(sc),
            "critic/score/max": _f(scale[1]),
            "critic/score/min": _f(scale[0]),
            "critic/rewards/mean": _f(sc - (0.001 * c["kl"][i] if critic else 0)),
            "critic/advantages/mean": _f(c["loss"][i] * 0.1),
            "critic/advantages/max": 2.3,
            "critic/advantages/min": -2.6,
            "response_length/mean": _f(c["length"][i], 3),
            "response_length/max": _f(min(c["length"][i] * 2.2, c["cap"][i]), 1),
            "response_length/min": _f(c["length"][i] * 0.2, 1),
            "response_length/clip_ratio": _f(c["trunc"][i], 4),
            "prompt_length/mean": 104.2,
            "timing_s/gen": _f(c["step_time"][i] * 0.62, 3),
            "timing_s/update_actor": _f(c["step_time"][i] * 0.2, 3),
            "timing_s/step": _f(c["step_time"][i], 3),
            "perf/total_num_tokens": int(512 * (c["length"][i] + 104)),
            "perf/max_memory_allocated_gb": 61.3,
            "training/global_step": s,
            "training/epoch": 0,
        }
        if critic:
            row.update(
                {
                    "actor/reward_kl_penalty": _f(c["kl"][i]),
                    "actor/reward_kl_penalty_coeff": 0.001,
                    "critic/vf_loss": _f(c["value_loss"][i]),
                    "critic/vf_clipfrac": _f(min(0.95, 0.05 + 0.05 * c["value_loss"][i])),
                    "critic/vpred_mean": _f(c["values"][i]),
                    "critic/grad_norm": _f(c["grad_norm"][i] * 40 * (1 + c["value_loss"][i])),
                    "critic/lr": 1e-5,
                    "critic/values/mean": _f(c["values"][i]),
                    "critic/vf_explained_var": _f(c["expl_var"][i]),
                    "critic/returns/mean": _f(sc * 0.9),
                    "timing_s/values": _f(c["step_time"][i] * 0.05, 3),
                    "timing_s/update_critic": _f(c["step_time"][i] * 0.1, 3),
                }
            )
        else:
            row.update({"actor/kl_loss": _f(c["kl"][i]), "actor/kl_coef": 0.001})
        if dapo:
            row["train/num_gen_batches"] = int(1 + (c["zero_std"][i] > 0.5))
        if eval_every and s % eval_every == 0:
            row[val_key] = _f(_sc(c["eval"][i], scale))
            row["timing_s/testing"] = 55.0
        train.append((s, row))
    return train, ev


def rows_openrlhf(c, n, every=1, eval_every=0, scale=(0, 1), critic=False):
    train, ev = [], []
    for s in logged_steps(n, every):
        i = s - 1
        r = _sc(c["reward"][i], scale)
        row = {
            "policy_loss": _f(c["loss"][i]),
            "actor_lr": 5e-7,
            "actor_grad_norm": _f(c["grad_norm"][i]),
            "entropy_loss": _f(c["entropy"][i]),
            "kl": _f(c["kl"][i]),
            "reward": _f(r),
            "return": _f(r - 0.01 * c["kl"][i]),
            "rollout/reward_mean": _f(r),
            "rollout/reward_std": _f(c["reward_std"][i] * (scale[1] - scale[0])),
            "group_reward_std": _f(c["reward_std"][i] * (1 - c["zero_std"][i]) * (scale[1] - scale[0])),
            "response_length": _f(c["length"][i], 2),
            "total_length": _f(c["length"][i] + 180, 2),
            "truncated": _f(c["trunc"][i], 4),
            "ppo_clip_ratio": _f(0.003 + 0.002 * c["grad_norm"][i]),
            "ppo_kl": _f(c["loss"][i] * 0.01),
            "vllm_kl": 0.0009,
            "timing/generation": _f(c["step_time"][i] * 0.6, 2),
            "timing/make_experience": _f(c["step_time"][i] * 0.15, 2),
            "timing/ppo_train": _f(c["step_time"][i] * 0.2, 2),
            "timing/broadcast": _f(c["step_time"][i] * 0.05, 2),
            "timing/step_total": _f(c["step_time"][i], 2),
            "global_step": s,
        }
        if critic:
            row.update(
                {
                    "critic_loss": _f(c["value_loss"][i]),
                    "values": _f(_sc(c["values"][i], scale)),
                    "critic_lr": 5e-6,
                    "critic_grad_norm": _f(c["grad_norm"][i] * 20 * (1 + c["value_loss"][i])),
                }
            )
        train.append((s, row))
        if eval_every and s % eval_every == 0:
            ev.append(
                (
                    s,
                    {
                        "eval_gsm8k_pass1": _f(_sc(c["eval"][i], scale)),
                        "eval_gsm8k_pass4": _f(_sc(min(1, c["eval"][i] * 1.3), scale)),
                        "eval_response_length_mean": _f(c["length"][i], 2),
                        "eval_truncated_rate": _f(c["trunc"][i], 4),
                        "eval_num_samples": 1319,
                    },
                )
            )
    return train, ev


def rows_nemo(c, n, every=1, eval_every=0, scale=(0, 1)):
    train, ev = [], []
    for s in logged_steps(n, every):
        i = s - 1
        pct1 = 100 * c["zero_std"][i] * c["p"][i]
        pct0 = 100 * c["zero_std"][i] - pct1
        row = {
            "train/reward": _f(_sc(c["reward"][i], scale)),
            "train/loss": _f(c["loss"][i]),
            "train/grad_norm": _f(c["grad_norm"][i]),
            "train/lr": 1e-6,
            "train/wd": 0.01,
            "train/kl_penalty": _f(c["kl"][i]),
            "train/approx_entropy": _f(c["entropy"][i]),
            "train/probs_ratio": _f(1 + c["loss"][i] * 0.1),
            "train/probs_ratio_clamped": _f(1 + c["loss"][i] * 0.05),
            "train/token_mult_prob_error": _f(
                1.003 + (0.02 * max(c["entropy"][i] - 1, 0) if np.isfinite(c["entropy"][i]) else 0)
            ),
            "train/baseline_reward/pct_0": _f(pct0, 3),
            "train/baseline_reward/pct_1": _f(pct1, 3),
            "train/baseline_reward/pct_mixed": _f(100 - pct0 - pct1, 3),
            "train/mean_gen_tokens_per_sample": _f(c["length"][i], 2),
            "train/max_gen_tokens_per_sample": _f(min(c["length"][i] * 2.5, c["cap"][i]), 1),
            "train/truncation_rate": _f(c["trunc"][i], 4),
            "train/natural_termination_rate": _f(1 - c["trunc"][i], 4),
            "train/advantages/mean": _f(c["loss"][i] * 0.01),
            "timing/train/total_step_time": _f(c["step_time"][i], 3),
            "timing/train/generation": _f(c["step_time"][i] * 0.55, 3),
            "timing/train/policy_training": _f(c["step_time"][i] * 0.3, 3),
        }
        train.append((s, row))
        if eval_every and s % eval_every == 0:
            ev.append(
                (
                    s,
                    {
                        "validation/accuracy": _f(_sc(c["eval"][i], scale)),
                        "validation/avg_length": _f(c["length"][i], 2),
                        "validation/pass_k": _f(min(1, c["eval"][i] * 1.25)),
                    },
                )
            )
    return train, ev


def rows_plain(c, n, every=1, eval_every=0, scale=(0, 1)):
    train = []
    for s in logged_steps(n, every):
        i = s - 1
        train.append(
            (
                s,
                {
                    "avg_reward": _f(_sc(c["reward"][i], scale), 4),
                    "reward_std": _f(c["reward_std"][i], 4),
                    "mean_len": _f(c["length"][i], 1),
                    "kl_div": _f(c["kl"][i], 5),
                    "pg_loss": _f(c["loss"][i], 5),
                    "lr": 1e-6,
                },
            )
        )
    return train, []


# ----------------------------------------------------------------------------------------------------------
# Writers: rows -> files on disk.
# ----------------------------------------------------------------------------------------------------------


def hf_tracker_key(k):
    """transformers' rewrite_logs: eval_X -> eval/X, everything else -> train/X."""
    return "eval/" + k[5:] if k.startswith("eval_") else "train/" + k


def _clean(v):
    return None if v is None else float(v)


def w_jsonl(path, rows, partial_tail=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        for s, row in rows:
            fh.write(json.dumps({"step": s, **row}) + "\n")
        if partial_tail:
            fh.write(json.dumps({"step": rows[-1][0] + rows[1][0] - rows[0][0], **rows[-1][1]})[:57])


def w_csv(path, rows, crlf=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = ["step", *list(rows[0][1].keys())]
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\r\n" if crlf else "\n")
        w.writerow(cols)
        for s, row in rows:
            w.writerow([s] + [row[k] for k in cols[1:]])


def w_trainer_state(
    path, train, ev, global_step, max_steps, logging_steps, eval_steps=500, save_steps=500, final=False
):
    hist = sorted(
        [dict(r, step=s) for s, r in train if s <= global_step] + [dict(r, step=s) for s, r in ev if s <= global_step],
        key=lambda d: (d["step"], "eval_loss" in d or "eval_reward" in d),
    )
    if final:
        hist.append(
            {
                "epoch": hist[-1]["epoch"],
                "step": global_step,
                "total_flos": 0.0,
                "train_loss": 0.0123,
                "train_runtime": 40211.7,
                "train_samples_per_second": 1.2,
                "train_steps_per_second": 0.02,
            }
        )
    state = {
        "best_global_step": None,
        "best_metric": None,
        "best_model_checkpoint": None,
        "epoch": hist[-1].get("epoch", 0),
        "eval_steps": eval_steps,
        "global_step": global_step,
        "is_hyper_param_search": False,
        "is_local_process_zero": True,
        "is_world_process_zero": True,
        "log_history": hist,
        "logging_steps": logging_steps,
        "max_steps": max_steps,
        "num_input_tokens_seen": 0,
        "num_train_epochs": 1,
        "save_steps": save_steps,
        "stateful_callbacks": {
            "TrainerControl": {
                "args": {
                    "should_epoch_stop": False,
                    "should_evaluate": False,
                    "should_log": False,
                    "should_save": True,
                    "should_training_stop": final,
                },
                "attributes": {},
            }
        },
        "total_flos": 0.0,
        "train_batch_size": 8,
        "trial_name": None,
        "trial_params": None,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state, indent=2, sort_keys=True))  # Python json: NaN stays a bare NaN token


def w_hf_checkpoints(out, train, ev, every, last, max_steps, logging_steps):
    for k in range(every, last + 1, every):
        ck = out / f"checkpoint-{k}"
        w_trainer_state(ck / "trainer_state.json", train, ev, k, max_steps, logging_steps, save_steps=every)
        (ck / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 16, "lora_alpha": 32}))
        for f in ("adapter_model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth", "training_args.bin"):
            (ck / f).write_bytes(b"\0" * 16)


def w_tensorboard(logdir, rows, host="gpu-node-07", pid=40213, wall0=T0, sec_per_step=30.0, truncate=0, suffix=""):
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    logdir.mkdir(parents=True, exist_ok=True)
    path = logdir / f"events.out.tfevents.{int(wall0)}.{host}.{pid}.0{suffix}"
    with path.open("wb") as fh:
        rw = RecordWriter(fh)
        rw.write(event_pb2.Event(wall_time=wall0, file_version="brain.Event:2").SerializeToString())
        for s, row in rows:
            vals = [summary_pb2.Summary.Value(tag=k, simple_value=float(v)) for k, v in row.items() if v is not None]
            ev = event_pb2.Event(wall_time=wall0 + s * sec_per_step, step=s, summary=summary_pb2.Summary(value=vals))
            rw.write(ev.SerializeToString())
        rw.flush()
    if truncate:
        data = path.read_bytes()
        path.write_bytes(data[:-truncate])
    return path


def _have_wandb():
    try:
        import wandb  # noqa: F401

        return True
    except Exception:
        return False


def w_wandb(rundir, project, name, config, log_calls, step_metric=None, truncate=0):
    """Write a W&B offline run with the real SDK. log_calls: list of (step or None, dict)."""
    import wandb

    rundir.mkdir(parents=True, exist_ok=True)
    os.environ["WANDB_MODE"] = "offline"
    os.environ["WANDB_SILENT"] = "true"
    rid = hashlib.sha1(name.encode()).hexdigest()[:8]
    run = wandb.init(
        project=project,
        name=name,
        id=rid,
        dir=str(rundir),
        config=config,
        settings=wandb.Settings(x_disable_stats=True, silent=True, console="off"),
    )
    if step_metric:
        for sm, glob in step_metric:
            run.define_metric(sm)
            run.define_metric(glob, step_metric=sm, step_sync=True)
    for step, data in log_calls:
        data = {k: v for k, v in data.items() if v is not None}
        if step is None:
            run.log(data)
        else:
            run.log(data, step=step)
    run.finish()
    # Make sure wandb-core has flushed and closed the .wandb file before we touch it.
    with contextlib.suppress(Exception):
        wandb.teardown()
    wdir = rundir / "wandb"
    found = sorted(wdir.glob("offline-run-*"))
    if found:  # give the folder a fixed timestamp so reruns look alike
        fixed = wdir / f"offline-run-20251114_061500-{rid}"
        if found[-1] != fixed:
            if fixed.exists():
                shutil.rmtree(fixed)
            found[-1].rename(fixed)
        link = wdir / "latest-run"
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(fixed.name)
        if truncate:
            f = fixed / f"run-{rid}.wandb"
            size = -1
            while size != f.stat().st_size:  # wait until the file stops growing
                size = f.stat().st_size
                time.sleep(0.5)
            data = f.read_bytes()
            f.write_bytes(data[:-truncate])


def hf_wandb_calls(train, ev, resume=None):
    """HF WandbCallback: train/… and eval/… keys, train/global_step as the step metric (_step keeps counting)."""
    calls = []
    merged = sorted([(s, 0, r) for s, r in train] + [(s, 1, r) for s, r in ev], key=lambda x: (x[0], x[1]))
    for s, _, r in merged:
        calls.append(
            (
                None,
                {
                    **{hf_tracker_key(k): v for k, v in r.items() if k != "epoch"},
                    "train/epoch": r.get("epoch"),
                    "train/global_step": s,
                },
            )
        )
    if resume:  # crash at `crash`, resume from checkpoint `ckpt`: steps ckpt+1..crash are logged a second time
        _ckpt, crash, redo = resume
        first = [c for c in calls if c[1]["train/global_step"] <= crash]
        return first + redo
    return calls


def _mlflow_python():
    cand = [os.environ.get("HOLDOUT2_MLFLOW_PYTHON"), sys.executable, "/tmp/mlvenv/bin/python"]
    for py in cand:
        if py and Path(py).exists():
            ok = subprocess.run([py, "-c", "import mlflow"], capture_output=True).returncode == 0
            if ok:
                return py
    return None


MLFLOW_SCRIPT = r"""
import json, os, sys
from mlflow.tracking import MlflowClient
from mlflow.entities import Metric, Param, RunTag
p = json.load(open(sys.argv[1]))
c = MlflowClient(tracking_uri=p["uri"])
e = c.get_experiment_by_name(p["experiment"])
eid = e.experiment_id if e else c.create_experiment(p["experiment"])
r = c.create_run(eid, run_name=p["run_name"], start_time=p["start_ms"])
rid = r.info.run_id
c.log_batch(rid, params=[Param(k, str(v)) for k, v in p["params"].items()])
ms = [Metric(k, float("nan") if v is None else v, ts, s) for k, v, ts, s in p["metrics"]]
for i in range(0, len(ms), 1000):
    c.log_batch(rid, metrics=ms[i:i + 1000])
if p["status"] != "RUNNING":
    c.set_terminated(rid, p["status"], end_time=p["end_ms"])
"""


def w_mlflow(rundir, kind, experiment, run_name, rows, params, status="RUNNING", key_fix=None, sec_per_step=30.0):
    py = _mlflow_python()
    if py is None:
        raise RuntimeError("mlflow not importable")
    rundir.mkdir(parents=True, exist_ok=True)
    uri = f"file:{(rundir / 'mlruns').resolve()}" if kind == "file" else f"sqlite:///{(rundir / 'mlflow.db').resolve()}"
    start = int(T0 * 1000)
    metrics = []
    for s, row in rows:
        for k, v in row.items():
            if v is None:
                continue
            metrics.append(
                [key_fix(k) if key_fix else k, v if math.isfinite(v) else None, start + int(s * sec_per_step * 1000), s]
            )
    payload = dict(
        uri=uri,
        experiment=experiment,
        run_name=run_name,
        params=params,
        metrics=metrics,
        status=status,
        start_ms=start,
        end_ms=start + int(rows[-1][0] * sec_per_step * 1000),
    )
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(payload, fh)
    env = dict(os.environ, MLFLOW_ALLOW_FILE_STORE="true")
    res = subprocess.run([py, "-c", MLFLOW_SCRIPT, fh.name], cwd=rundir, env=env, capture_output=True, text=True)
    os.unlink(fh.name)
    if res.returncode != 0:
        raise RuntimeError(res.stderr[-2000:])


def verl_mlflow_key(k):
    return k.replace("@", "_at_")


def _np_repr(v):
    if isinstance(v, int):
        return f"np.int64({v})"
    return f"np.float64({v})" if math.isfinite(v) else "np.float64(nan)"


def w_verl_console(path, rows, ray_prefix="(TaskRunner pid=91822) ", np2=True, noise_every=37):
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "2025-11-14 06:15:02,118\tINFO worker.py:1832 -- Started a local Ray instance.",
        f"{ray_prefix}Using dataset class: RLHFDataset",
        f"{ray_prefix}Size of train dataloader: 467, Size of val dataloader: 1",
    ]
    for j, (s, row) in enumerate(rows):
        body = " - ".join(f"{k}:{_np_repr(v) if np2 else v}" for k, v in row.items() if v is not None)
        lines.append(f"{ray_prefix}step:{s} - {body}")
        if j % noise_every == 5:
            lines.append(
                f"(WorkerDict pid=92011) INFO 11-14 07:{j % 60:02d}:11 [block_pool.py:321] Successfully reset prefix cache"
            )
    path.write_text("\n".join(lines) + "\n")


def w_openrlhf_console(path, train, ev, total, partial_tail=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "[2025-11-14 06:15:01,002] [INFO] [real_accelerator.py:222:get_accelerator] Setting ds_accelerator to cuda (auto detect)",
        "[2025-11-14 06:16:40,551] [INFO] [logging.py:107:log_dist] [Rank 0] DeepSpeed info: version=0.16.8",
    ]
    evd = dict(ev)
    for s, row in train:
        lines.append(
            f"Episode [1/1]:  {100 * s // total}%|█▉        | {s}/{total} [{s * 41 // 60:02d}:{s * 41 % 60:02d}<??:??, 41.2s/it, "
            f"act_loss={row['policy_loss']:.3f}, reward={row['reward']:.3f}, kl={row['kl'] if row['kl'] is not None else 'nan'}]"
        )
        lines.append(
            f"[2025-11-14 06:{(s // 60) % 60:02d}:{s % 60:02d},100] [INFO] [ppo_trainer.py:512] ✨ Global step {s}: {row!r}"
        )
        if s in evd:
            lines.append(
                f"[2025-11-14 06:{(s // 60) % 60:02d}:{s % 60:02d},900] [INFO] [ppo_trainer.py:471] Evaluation completed in 63.41 seconds, "
                f"global_step {s}, eval_metrics: {evd[s]!r}"
            )
    text = "\n".join(lines) + "\n"
    if partial_tail:
        text += lines[-1][: len(lines[-1]) // 2]
    path.write_text(text.replace("nan,", "nan,"))


def w_trl_console(path, train, ev, total):
    path.parent.mkdir(parents=True, exist_ok=True)
    merged = sorted([(s, 0, r) for s, r in train] + [(s, 1, r) for s, r in ev], key=lambda x: (x[0], x[1]))
    lines = [
        "2025-11-14 06:15:11,442 [INFO] train_grpo: Model: Qwen/Qwen2.5-3B-Instruct",
        "2025-11-14 06:15:16,344 [INFO] train_grpo: Using vLLM for generation (colocate mode)",
    ]
    for s, _, r in merged:
        lines.append(f"  {100 * s // total}%|▏         | {s}/{total} [{s // 60:02d}:{s % 60:02d}<9:59:59, 31.8s/it]")
        lines.append(repr({k: (float("nan") if v is None else v) for k, v in r.items()}))
    path.write_text("\n".join(lines) + "\n")


def w_verl_ckpts(root, project, exp, every, last):
    d = root / "checkpoints" / project / exp
    for k in range(every, last + 1, every):
        (d / f"global_step_{k}" / "actor").mkdir(parents=True, exist_ok=True)
        (d / f"global_step_{k}" / "actor" / "model_world_size_8_rank_0.pt").write_bytes(b"\0" * 16)
    if last >= every:
        (d / "latest_checkpointed_iteration.txt").write_text(str(last - last % every))


def w_openrlhf_ckpts(root, every, last):
    d = root / "ckpt" / "_actor"
    for k in range(every, last + 1, every):
        (d / f"global_step{k}").mkdir(parents=True, exist_ok=True)
        (d / f"global_step{k}" / "mp_rank_00_model_states.pt").write_bytes(b"\0" * 16)
    (d / "latest").write_text(f"global_step{last - last % every}")


# ----------------------------------------------------------------------------------------------------------
# Run builders: one per (framework, on-disk format) combination. Each takes (dir, curves, case) and writes.
# ----------------------------------------------------------------------------------------------------------


def make_wandb_trl(d, c, k):
    algo = k.get("algo", "grpo")
    builder = {"grpo": rows_trl_grpo, "rloo": rows_trl_rloo, "online_dpo": rows_online_dpo, "dpo": rows_dpo}[algo]
    kw = dict(every=k["every"], eval_every=k.get("eval_every", 0))
    if algo in ("grpo", "rloo"):
        kw["scale"] = k.get("scale", (0, 1))
    if algo == "grpo":
        kw["kl"] = k.get("kl", False)
    train, ev = builder(c, k["n"], **kw)
    resume = None
    if k.get("resume"):
        ckpt, crash = k["resume"]
        rng = np.random.RandomState(k["seed"] + 1)
        redo = []
        for s, r in train:
            if ckpt < s:
                r2 = dict(r)
                if s <= crash:
                    r2["reward"] = _f(r["reward"] + rng.normal(0, 0.02))
                redo.append(
                    (
                        None,
                        {
                            **{hf_tracker_key(x): v for x, v in r2.items() if x != "epoch"},
                            "train/epoch": r2["epoch"],
                            "train/global_step": s,
                        },
                    )
                )
        train = [(s, r) for s, r in train if s <= crash]
        resume = (ckpt, crash, redo)
    calls = hf_wandb_calls(train, ev, resume)
    w_wandb(
        d,
        "trl-" + algo,
        k["name"],
        {
            "learning_rate": 1e-6,
            "num_generations": 8,
            "logging_steps": k["every"],
            "max_steps": k.get("max_steps", 2 * k["n"]),
            "beta": 0.04 if k.get("kl") else 0.0,
        },
        calls,
        step_metric=[("train/global_step", "*")],
        truncate=k.get("truncate", 0),
    )


def make_wandb_verl(d, c, k):
    train, _ = rows_verl(
        c, k["n"], k.get("every", 1), k.get("eval_every", 0), k.get("scale", (0, 1)), critic=k.get("critic", False)
    )
    w_wandb(
        d,
        "verl_grpo_gsm8k",
        k["name"],
        {"algorithm": {"adv_estimator": "grpo"}, "trainer": {"total_training_steps": k.get("max_steps", 2 * k["n"])}},
        [(s, r) for s, r in train],
        truncate=k.get("truncate", 0),
    )


def make_wandb_openrlhf(d, c, k):
    train, ev = rows_openrlhf(
        c, k["n"], k.get("every", 1), k.get("eval_every", 0), k.get("scale", (0, 1)), k.get("critic", False)
    )
    calls = []
    evd = dict(ev)
    for s, r in train:
        calls.append((None, {**{"train/" + x: v for x, v in r.items()}, "train/global_step": s}))
        if s in evd:
            calls.append((None, {**{"eval/" + x: v for x, v in evd[s].items()}, "eval/global_step": s}))
    w_wandb(
        d,
        "openrlhf_train_ppo",
        k["name"],
        {"advantage_estimator": k.get("estimator", "reinforce_baseline")},
        calls,
        step_metric=[("train/global_step", "train/*"), ("eval/global_step", "eval/*")],
        truncate=k.get("truncate", 0),
    )


def make_wandb_nemo(d, c, k):
    train, ev = rows_nemo(c, k["n"], 1, k.get("eval_every", 0), k.get("scale", (0, 1)))
    evd = dict(ev)
    calls = [(s, {**r, **evd.get(s, {})}) for s, r in train]
    w_wandb(
        d / "logs" / "exp_001",
        "grpo-dev",
        k["name"],
        {"grpo": {"max_num_steps": k.get("max_steps", 2 * k["n"])}},
        calls,
        truncate=k.get("truncate", 0),
    )


def make_tb_openrlhf(d, c, k):
    train, ev = rows_openrlhf(
        c, k["n"], k.get("every", 1), k.get("eval_every", 0), k.get("scale", (0, 1)), k.get("critic", False)
    )
    rows = [(s, {"train/" + x: v for x, v in r.items()}) for s, r in train]
    evrows = [(s, {"eval/" + x: v for x, v in r.items()}) for s, r in ev]
    allrows = sorted(rows + evrows, key=lambda x: x[0])
    logdir = d / "tensorboard" / k["name"]
    if k.get("resume"):
        ckpt, crash = k["resume"]
        w_tensorboard(logdir, [(s, r) for s, r in allrows if s <= crash], wall0=T0)
        rng = np.random.RandomState(k["seed"] + 7)
        redo = [
            (s, {x: (v + rng.normal(0, 0.01) if x == "train/reward" else v) for x, v in r.items()})
            for s, r in allrows
            if s > ckpt
        ]
        w_tensorboard(logdir, redo, wall0=T0 + crash * 30 + 600, pid=51877)
        w_openrlhf_ckpts(d, k["ckpt_every"], crash)
    else:
        w_tensorboard(logdir, allrows, wall0=T0, truncate=k.get("truncate", 0))


def make_tb_nemo(d, c, k):
    train, ev = rows_nemo(c, k["n"], 1, k.get("eval_every", 0), k.get("scale", (0, 1)))
    rows = sorted(train + ev, key=lambda x: x[0])
    w_tensorboard(d / "logs" / "exp_003" / "tensorboard", rows, host="dgx-a100-12", truncate=k.get("truncate", 0))


def make_console_openrlhf(d, c, k):
    train, ev = rows_openrlhf(
        c, k["n"], k.get("every", 1), k.get("eval_every", 0), k.get("scale", (0, 1)), k.get("critic", False)
    )
    w_openrlhf_console(
        d / "train_reinforce_pp.log", train, ev, k.get("max_steps", 2 * k["n"]), partial_tail=k.get("partial", False)
    )


def make_console_verl(d, c, k):
    train, _ = rows_verl(c, k["n"], 1, k.get("eval_every", 0), k.get("scale", (0, 1)), critic=k.get("critic", False))
    w_verl_console(d / "verl_ppo_gsm8k.log", train)
    if k.get("ckpt_every"):
        w_verl_ckpts(d, "verl_ppo_gsm8k", "qwen2.5-1.5b-ppo", k["ckpt_every"], k["n"])


def make_mlflow_hf(d, c, k, kind="file"):
    algo = k.get("algo", "grpo")
    builder = rows_trl_rloo if algo == "rloo" else rows_trl_grpo
    train, ev = builder(c, k["n"], k["every"], k.get("eval_every", 0), k.get("scale", (0, 1)))
    rows = sorted(train + ev, key=lambda x: x[0])  # HF's MLflow callback logs the raw keys, no prefix
    w_mlflow(
        d,
        kind,
        "trl-" + algo,
        k["name"],
        rows,
        {
            "learning_rate": "1e-06",
            "logging_steps": k["every"],
            "max_steps": k.get("max_steps", 2 * k["n"]),
            "num_generations": 8,
        },
        status=k.get("status", "RUNNING"),
    )


def make_mlflow_verl(d, c, k, kind="file"):
    train, _ = rows_verl(c, k["n"], 1, k.get("eval_every", 0), k.get("scale", (0, 1)), dapo=k.get("dapo", False))
    w_mlflow(
        d,
        kind,
        "verl_dapo_math" if k.get("dapo") else "verl_grpo",
        k["name"],
        train,
        {
            "algorithm.adv_estimator": k.get("estimator", "grpo"),
            "trainer.total_training_steps": k.get("max_steps", 2 * k["n"]),
        },
        key_fix=verl_mlflow_key,
        sec_per_step=60.0,
    )


def make_trainer_state(d, c, k):
    algo = k.get("algo", "grpo")
    if algo == "ppo":
        train, ev = rows_trl_ppo(c, k["n"], 1, k.get("scale", (0, 10)))
    elif algo == "rloo":
        train, ev = rows_trl_rloo(c, k["n"], k["every"], k.get("eval_every", 0), k.get("scale", (0, 1)))
    elif algo == "dpo":
        train, ev = rows_dpo(c, k["n"], k["every"], k.get("eval_every", 0))
    elif algo == "online_dpo":
        train, ev = rows_online_dpo(c, k["n"], k["every"])
    final = k.get("final", False)
    w_trainer_state(
        d / "trainer_state.json",
        train,
        ev,
        k["n"],
        k.get("max_steps", 2 * k["n"]),
        k.get("every", 1),
        eval_steps=k.get("eval_every") or 500,
        final=final,
    )


def make_mix_trl(d, c, k):
    """A TRL GRPO output dir as it looks mid-run: checkpoint-N/trainer_state.json every `ckpt_every` steps,
    TensorBoard under runs/, and the console log of the same run (which is ahead of the last checkpoint)."""
    train, ev = rows_trl_grpo(c, k["n"], k["every"], k.get("eval_every", 0), k.get("scale", (0, 1)), kl=False)
    out = d / "outputs" / "qwen2.5-3b-grpo"
    w_hf_checkpoints(out, train, ev, k["ckpt_every"], k["n"], k.get("max_steps", 2 * k["n"]), k["every"])
    tb = sorted(
        [(s, {hf_tracker_key(x): v for x, v in r.items() if x != "epoch"}) for s, r in train + ev], key=lambda x: x[0]
    )
    w_tensorboard(out / "runs" / "Nov14_06-15-02_gpu-node-03", tb, host="gpu-node-03")
    w_trl_console(d / "train.log", train, ev, k.get("max_steps", 2 * k["n"]))


def make_plain_jsonl(d, c, k):
    train, _ = rows_plain(c, k["n"], k.get("every", 1), scale=k.get("scale", (0, 1)))
    w_jsonl(d / "metrics.jsonl", train, partial_tail=k.get("partial", False))


def make_plain_csv(d, c, k):
    train, _ = rows_plain(c, k["n"], k.get("every", 1), scale=k.get("scale", (0, 1)))
    w_csv(d / "train_log.csv", train, crlf=k.get("crlf", False))


WRITERS = {
    "wandb_trl": (make_wandb_trl, "wandb"),
    "wandb_verl": (make_wandb_verl, "wandb"),
    "wandb_openrlhf": (make_wandb_openrlhf, "wandb"),
    "wandb_nemo": (make_wandb_nemo, "wandb"),
    "tb_openrlhf": (make_tb_openrlhf, None),
    "tb_nemo": (make_tb_nemo, None),
    "console_openrlhf": (make_console_openrlhf, None),
    "console_verl": (make_console_verl, None),
    "mlflow_file_hf": (lambda d, c, k: make_mlflow_hf(d, c, k, "file"), "mlflow"),
    "mlflow_db_hf": (lambda d, c, k: make_mlflow_hf(d, c, k, "sqlite"), "mlflow"),
    "mlflow_file_verl": (lambda d, c, k: make_mlflow_verl(d, c, k, "file"), "mlflow"),
    "mlflow_db_verl": (lambda d, c, k: make_mlflow_verl(d, c, k, "sqlite"), "mlflow"),
    "trainer_state": (make_trainer_state, None),
    "mix_trl": (make_mix_trl, None),
    "plain_jsonl": (make_plain_jsonl, None),
    "plain_csv": (make_plain_csv, None),
}

SHAPES = {
    f.__name__[6:]: f
    for f in [
        shape_healthy,
        shape_slow_learner,
        shape_kl_rises_with_reward,
        shape_periodic_spikes,
        shape_converged,
        shape_nan_burst_transient,
        shape_length_growth,
        shape_noisy_binary,
        shape_identical_rewards,
        shape_saturated,
        shape_kl_up_reward_flat,
        shape_peak_decline,
        shape_eval_peak_train_up,
        shape_entropy_collapse,
        shape_entropy_blowup,
        shape_length_explosion,
        shape_length_collapse,
        shape_truncation_cap,
        shape_reward_hacking,
        shape_value_divergence,
        shape_nan_divergence,
        shape_late_collapse,
        shape_kl_explosion,
        shape_dpo_healthy,
        shape_dpo_overfit,
    ]
}

# ----------------------------------------------------------------------------------------------------------
# The case table. w = writer, s = shape (+ sk = shape kwargs), n = steps reached, k = writer options.
# Labels: accept / preferred / window (rollback_window) / onset / healthy / tags / why (reasoning).
# ----------------------------------------------------------------------------------------------------------

C = dict  # short alias for readability of the table

CASES = [
    # ---------------- healthy -------------------------------------------------------------------------
    C(
        name="trl-grpo-wandb-slow-binary",
        w="wandb_trl",
        s="slow_learner",
        n=600,
        k=dict(every=10, max_steps=2000),
        accept=["continue"],
        healthy=True,
        tags=["grpo", "trl", "wandb_sdk", "slow_learner", "binary_reward"],
        why="Binary 0/1 accuracy reward averaged over 32 samples climbs slowly from ~0.06 to ~0.2 over 600 of 2000 steps; "
        "noisy but the trend is clearly up, entropy drifts down slowly, lengths stable, no truncation. Keep going.",
    ),
    C(
        name="trl-grpo-wandb-kl-rises-with-reward",
        w="wandb_trl",
        s="kl_rises_with_reward",
        n=500,
        k=dict(every=5, kl=True, max_steps=1000),
        accept=["continue"],
        healthy=True,
        tags=["grpo", "trl", "wandb_sdk", "kl_rising", "beta"],
        why="beta=0.04 so kl is logged; it grows steadily to ~0.35 while reward rises from 0.25 to ~0.75 and entropy "
        "declines gently. KL rising with reward rising is the model changing and improving - healthy.",
    ),
    C(
        name="trl-grpo-wandb-nan-burst-recovers",
        w="wandb_trl",
        s="nan_burst_transient",
        n=400,
        sk=dict(at=181, width=3),
        k=dict(every=1, max_steps=1000),
        accept=["continue"],
        healthy=True,
        tags=["grpo", "trl", "wandb_sdk", "nan_burst", "transient"],
        why="loss and grad_norm are NaN on steps 181-183 only (overflow steps skipped), then finite again; reward keeps "
        "rising through and after the burst, entropy/length unaffected. A transient, recovered blip: continue and watch.",
    ),
    C(
        name="trl-grpo-wandb-resume-overlap",
        w="wandb_trl",
        s="healthy",
        n=700,
        k=dict(every=10, resume=(500, 600), max_steps=1500),
        accept=["continue"],
        healthy=True,
        tags=["grpo", "trl", "wandb_sdk", "resume", "duplicate_steps"],
        why="Crashed at 600 and resumed from checkpoint-500: train/global_step 510-600 appears twice in the same W&B run "
        "(_step keeps counting). Both passes show the same rising reward (0.2 -> ~0.6); nothing is wrong with training.",
    ),
    C(
        name="verl-grpo-wandb-still-writing",
        w="wandb_verl",
        s="healthy",
        n=260,
        k=dict(eval_every=20, truncate=23, max_steps=500),
        accept=["continue"],
        healthy=True,
        tags=["grpo", "verl", "wandb_sdk", "live", "truncated_tail"],
        why="verl GRPO at step 260 of 500, written by the W&B SDK with step=; the .wandb ends mid-record (still writing). "
        "critic/score/mean rises 0.2 -> 0.55, val-core rises every 20 steps, kl_loss small and growing slowly.",
    ),
    C(
        name="openrlhf-reinforce-console-signed-reward",
        w="console_openrlhf",
        s="healthy",
        n=250,
        k=dict(every=1, eval_every=25, scale=(-1, 1), max_steps=600, partial=True),
        accept=["continue"],
        healthy=True,
        tags=["reinforce++", "openrlhf", "console", "reward_-1_1", "truncated_tail"],
        why="OpenRLHF REINFORCE++ console, reward in -1..1 rising from about -0.6 to +0.2, eval pass1 rising every 25 steps, "
        "kl slow growth, truncation ~1%. The last line is half-written (run live). Healthy early run.",
    ),
    C(
        name="openrlhf-ppo-tb-resume-log10",
        w="tb_openrlhf",
        s="healthy",
        n=1500,
        k=dict(every=10, eval_every=100, critic=True, resume=(1000, 1100), ckpt_every=500, max_steps=3000),
        accept=["continue"],
        healthy=True,
        tags=["ppo", "openrlhf", "tensorboard", "resume", "critic", "logging_10"],
        why="OpenRLHF PPO with a critic, logged every 10 steps. Crash at 1100, resume from global_step1000: two event files "
        "overlap on steps 1010-1100. Reward rises and plateaus gently, critic_loss falls, eval improves. Healthy.",
    ),
    C(
        name="openrlhf-grpo-wandb-length-growth",
        w="wandb_openrlhf",
        s="length_growth",
        n=400,
        k=dict(every=1, eval_every=50, estimator="group_norm"),
        accept=["continue"],
        healthy=True,
        tags=["grpo", "openrlhf", "wandb_sdk", "length_growth", "reasoning"],
        why="Reasoning GRPO: response length grows 450 -> 1500 tokens (cap 4096, truncation stays ~1-2%) while reward "
        "rises 0.3 -> 0.65 and eval follows. Longer chains of thought with better reward are the expected behaviour.",
    ),
    C(
        name="nemo-grpo-tb-validation",
        w="tb_nemo",
        s="healthy",
        n=300,
        k=dict(eval_every=10, truncate=9),
        accept=["continue"],
        healthy=True,
        tags=["grpo", "nemo-rl", "tensorboard", "truncated_tail"],
        why="NeMo-RL GRPO: train/reward 0.2 -> 0.6, validation/accuracy every 10 steps rising, kl_penalty small, "
        "approx_entropy slow decline, token_mult_prob_error ~1.003. Event file ends in a partial record (live).",
    ),
    C(
        name="nemo-grpo-wandb-noisy-binary",
        w="wandb_nemo",
        s="noisy_binary",
        n=200,
        k=dict(eval_every=20, max_steps=500),
        accept=["continue"],
        healthy=True,
        tags=["grpo", "nemo-rl", "wandb_sdk", "binary_reward", "noisy"],
        why="Binary reward averaged over 16 samples per step: very noisy (steps jump by +-0.15) but the mean climbs 0.3 -> "
        "~0.45, validation accuracy rises. Noise is not a failure.",
    ),
    C(
        name="mlflow-file-trl-grpo-ckpt-spikes",
        w="mlflow_file_hf",
        s="periodic_spikes",
        sk=dict(every=100),
        n=1000,
        k=dict(every=10, eval_every=100, max_steps=2000),
        accept=["continue"],
        healthy=True,
        tags=["grpo", "trl", "mlflow_file", "periodic_spikes", "eval_every"],
        why="HF MLflow callback (raw keys) in a file store. grad_norm, step_time and loss spike every 100 steps (eval + "
        "checkpoint save share the step) and come straight back; reward and eval_reward rise steadily. Healthy.",
    ),
    C(
        name="mlflow-db-verl-dapo-long",
        w="mlflow_db_verl",
        s="healthy",
        sk=dict(r0=0.1, r1=0.42, tau=1200),
        n=3000,
        k=dict(eval_every=100, dapo=True, max_steps=5000),
        accept=["continue"],
        healthy=True,
        tags=["dapo", "verl", "mlflow_db", "long_run", "at_key_rewrite"],
        why="verl DAPO in mlflow.db (val-core/…/mean@16 stored as mean_at_16). Accuracy reward rises slowly 0.1 -> 0.4 "
        "over 3000 steps, validation follows, entropy and length stable. A slow but healthy long run.",
    ),
    C(
        name="mlflow-db-trl-rloo-signed-reward",
        w="mlflow_db_hf",
        s="healthy",
        n=800,
        k=dict(every=10, algo="rloo", scale=(-1, 1)),
        accept=["continue"],
        healthy=True,
        tags=["rloo", "trl", "mlflow_db", "reward_-1_1", "kl_present"],
        why="TRL RLOO (GRPO-style keys, beta=0.05 so kl is logged) with a reward in -1..1: climbs from -0.6 to +0.3, "
        "kl grows slowly to ~0.03. Healthy.",
    ),
    C(
        name="trl-ppo-state-score-0-10",
        w="trainer_state",
        s="kl_rises_with_reward",
        n=300,
        k=dict(algo="ppo", scale=(0, 10)),
        accept=["continue"],
        healthy=True,
        tags=["ppo", "trl", "trainer_state", "reward_0_10", "critic"],
        why="TRL PPO (objective/* keys, lr not learning_rate) with a reward-model score on 0..10: objective/scores rises "
        "2.5 -> ~7.5, objective/kl grows moderately, loss/value_avg falls. Healthy RLHF run.",
    ),
    C(
        name="trl-rloo-state-log25-long",
        w="trainer_state",
        s="noisy_binary",
        sk=dict(),
        n=2500,
        k=dict(algo="rloo", every=25, max_steps=5000),
        accept=["continue"],
        healthy=True,
        tags=["rloo", "trl", "trainer_state", "logging_25", "binary_reward"],
        why="RLOO logged every 25 steps, binary reward over small groups (noisy). The average climbs from 0.3 to ~0.5; "
        "kl, entropy and length behave. Healthy and unfinished.",
    ),
    C(
        name="trl-online-dpo-state",
        w="trainer_state",
        s="dpo_healthy",
        n=400,
        k=dict(algo="online_dpo", every=10, max_steps=1000),
        accept=["continue"],
        healthy=True,
        tags=["online_dpo", "trl", "trainer_state"],
        why="Online DPO: judge/RM scores (objective/scores) rise, margins and preference accuracy rise, kl grows "
        "moderately. Nothing wrong.",
    ),
    C(
        name="trl-dpo-state-eval",
        w="trainer_state",
        s="dpo_healthy",
        n=600,
        k=dict(algo="dpo", every=10, eval_every=100, max_steps=1200),
        accept=["continue"],
        healthy=True,
        tags=["dpo", "trl", "trainer_state", "eval_every"],
        why="Offline DPO: loss falls from 0.69, rewards/margins rise to ~2, train accuracy ~0.8, eval accuracy rises to "
        "~0.7 and eval_loss falls at every eval. Healthy, half-way.",
    ),
    C(
        name="verl-ppo-console-critic",
        w="console_verl",
        s="healthy",
        sk=dict(r0=0.1, r1=0.6),
        n=300,
        k=dict(eval_every=25, critic=True, ckpt_every=100),
        accept=["continue"],
        healthy=True,
        tags=["ppo", "verl", "console", "critic", "numpy2_repr", "checkpoints"],
        why="verl PPO (GAE) console with np.float64(...) values and Ray prefixes: score rises 0.1 -> 0.55, "
        "vf_explained_var rises to ~0.7, vf_loss falls, val-core rises. Healthy.",
    ),
    C(
        name="plain-jsonl-long-12k",
        w="plain_jsonl",
        s="healthy",
        sk=dict(r0=0.1, r1=0.5, tau=5000, kl_end=0.08),
        n=12000,
        k=dict(every=10),
        accept=["continue"],
        healthy=True,
        tags=["plain_script", "jsonl", "long_run", "own_names"],
        why="Home-made loop logging avg_reward / mean_len / kl_div every 10 steps for 12k steps: reward still climbing "
        "slowly (0.1 -> ~0.43), kl_div modest. Healthy.",
    ),
    C(
        name="plain-csv-short-30",
        w="plain_csv",
        s="healthy",
        sk=dict(r0=0.3, r1=0.5, noise=0.06),
        n=30,
        k=dict(crlf=True),
        accept=["continue"],
        healthy=True,
        tags=["plain_script", "csv", "short_run", "own_names", "crlf"],
        why="Only 30 steps in (of a planned 60+): avg_reward rises from ~0.3 to ~0.5 in the first ~15 steps and is noisy-flat "
        "since; kl_div grows from 0.01 to ~0.03, tiny in absolute terms. Far too early to call a plateau or drift.",
    ),
    C(
        name="mix-trl-ckpt-tb-console",
        w="mix_trl",
        s="healthy",
        sk=dict(tau=400),
        n=1250,
        k=dict(every=10, eval_every=250, ckpt_every=500, max_steps=3000),
        accept=["continue"],
        healthy=True,
        tags=["grpo", "trl", "mix", "trainer_state", "tensorboard", "console", "checkpoints_500"],
        why="One TRL run seen three ways: checkpoint-500/1000 trainer_state (history stops at 1000), TensorBoard and the "
        "console up to 1250. Reward 0.2 -> 0.62 and still rising slowly; eval_reward rises. Healthy.",
    ),
    C(
        name="verl-reinforcepp-mlflow-file",
        w="mlflow_file_verl",
        s="healthy",
        sk=dict(r0=0.15, r1=0.55),
        n=400,
        k=dict(eval_every=20, estimator="reinforce_plus_plus"),
        accept=["continue"],
        healthy=True,
        tags=["reinforce++", "verl", "mlflow_file", "at_key_rewrite"],
        why="verl REINFORCE++ in an MLflow file store (nested metric dirs): score rises 0.15 -> 0.5, validation every 20 "
        "steps rising, entropy and kl_loss well behaved.",
    ),
    C(
        name="verl-grpo-wandb-converged",
        w="wandb_verl",
        s="converged",
        n=480,
        k=dict(eval_every=40, max_steps=500),
        accept=["continue", "stop"],
        preferred="continue",
        healthy=False,
        tags=["grpo", "verl", "wandb_sdk", "converged"],
        why="Reward and validation reached ~0.72 by step ~150 and have been flat since, 480 of 500 steps; nothing is "
        "degrading. Letting it finish or stopping now are both fine; a rollback is not called for.",
    ),
    # ---------------- failing -------------------------------------------------------------------------
    C(
        name="trl-grpo-wandb-kl-up-reward-flat",
        w="wandb_trl",
        s="kl_up_reward_flat",
        sk=dict(onset=200),
        n=900,
        k=dict(every=10, kl=True, eval_every=100, max_steps=2000),
        accept=["stop", "rollback"],
        preferred="stop",
        window=(100, 300),
        onset=300,
        tags=["grpo", "trl", "wandb_sdk", "kl_drift", "reward_plateau"],
        why="Reward plateaus at ~0.45 by step ~200 and stays flat for 700 steps while kl climbs from 0.02 to ~0.7 and "
        "eval drifts down slightly. The policy moves away from the reference for nothing: stop (or go back to ~200).",
    ),
    C(
        name="verl-grpo-wandb-peak-decline",
        w="wandb_verl",
        s="peak_decline",
        sk=dict(peak=300),
        n=700,
        k=dict(eval_every=50),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(250, 350),
        onset=380,
        tags=["grpo", "verl", "wandb_sdk", "peak_then_decline"],
        why="Score peaks at ~0.68 around step 300 and declines slowly to ~0.45 by 700; validation peaks at 300 too and "
        "follows down. The model was best around 300: roll back there.",
    ),
    C(
        name="mlflow-file-trl-grpo-eval-peak",
        w="mlflow_file_hf",
        s="eval_peak_train_up",
        sk=dict(peak=400),
        n=800,
        k=dict(every=10, eval_every=50, max_steps=1500),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(350, 450),
        onset=500,
        tags=["grpo", "trl", "mlflow_file", "eval_decline", "overfitting"],
        why="Train reward keeps rising to ~0.8 but eval_reward peaks at ~0.53 at step 400 and falls to ~0.33 by 800: the "
        "policy overfits the training prompts. Roll back to the eval peak (~400).",
    ),
    C(
        name="openrlhf-console-entropy-collapse",
        w="console_openrlhf",
        s="entropy_collapse",
        sk=dict(onset=150),
        n=400,
        k=dict(every=1, eval_every=50),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(100, 160),
        onset=170,
        tags=["grpo", "openrlhf", "console", "entropy_collapse"],
        why="entropy_loss falls from ~0.5 to ~0.01 between steps 150 and 250; group_reward_std goes to ~0, reward stops "
        "improving and drifts down, eval falls. The policy became deterministic: go back to before 150.",
    ),
    C(
        name="nemo-tb-entropy-blowup",
        w="tb_nemo",
        s="entropy_blowup",
        sk=dict(onset=180),
        n=300,
        k=dict(eval_every=10),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(120, 180),
        onset=185,
        tags=["grpo", "nemo-rl", "tensorboard", "entropy_blow_up", "collapse"],
        why="approx_entropy jumps from ~0.45 to ~6.5 from step 180, reward and validation accuracy collapse, generations "
        "hit the cap (truncation_rate ~0.9), kl_penalty explodes. Degenerate output; restore a pre-180 checkpoint.",
    ),
    C(
        name="mlflow-db-verl-length-explosion",
        w="mlflow_db_verl",
        s="length_explosion",
        sk=dict(onset=250),
        n=500,
        k=dict(eval_every=25),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(180, 250),
        onset=270,
        tags=["grpo", "verl", "mlflow_db", "length_explosion", "truncation"],
        why="response_length/mean grows from ~650 to ~4000 (cap 4096) after 250, clip_ratio rises to ~0.8, score and "
        "validation fall, step time x5. Roll back to before 250.",
    ),
    C(
        name="plain-csv-length-collapse",
        w="plain_csv",
        s="length_collapse",
        sk=dict(onset=200),
        n=400,
        k=dict(),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(120, 200),
        onset=215,
        tags=["plain_script", "csv", "own_names", "length_collapse"],
        why="mean_len collapses from ~250 to ~6 tokens between 200 and 280 and avg_reward falls from ~0.55 to ~0.05: the "
        "model learned to answer nearly nothing. Go back to before 200.",
    ),
    C(
        name="trl-grpo-wandb-truncation-cap",
        w="wandb_trl",
        s="truncation_cap",
        sk=dict(onset=300),
        n=600,
        k=dict(every=10),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(200, 300),
        onset=340,
        tags=["grpo", "trl", "wandb_sdk", "truncation", "length_cap"],
        why="completions/mean_length climbs to ~1010 against max_completion_length 1024 and clipped_ratio rises from 1% "
        "to ~70% after step 300 while reward drops. Truncated answers get no reward: roll back and raise the cap or "
        "penalise length.",
    ),
    C(
        name="mix-trl-reward-hacking-format",
        w="mix_trl",
        s="reward_hacking",
        sk=dict(onset=1100),
        n=2000,
        k=dict(every=10, eval_every=250, ckpt_every=500, max_steps=3000),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(500, 1100),
        onset=1200,
        tags=["grpo", "trl", "mix", "reward_hacking", "component", "checkpoints_500"],
        why="Total reward keeps rising, but only through rewards/format_reward (-> 1.0); rewards/accuracy_reward falls from "
        "~0.6 to ~0.3 after step 1100 and eval_reward falls with it. Hacking the format term: roll back to "
        "checkpoint-1000 (or 500).",
    ),
    C(
        name="verl-ppo-console-value-divergence",
        w="console_verl",
        s="value_divergence",
        sk=dict(onset=220),
        n=400,
        k=dict(eval_every=25, critic=True, ckpt_every=100),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(150, 220),
        onset=240,
        tags=["ppo", "verl", "console", "critic", "value_divergence", "checkpoints"],
        why="critic/vf_loss goes from ~0.1 to ~40, critic/vf_explained_var drops from ~0.7 to about -2.5 from step 220, "
        "critic grad norm explodes and score/validation decline: the value function diverged. Roll back to "
        "global_step_200.",
    ),
    C(
        name="trl-ppo-state-value-divergence",
        w="trainer_state",
        s="value_divergence",
        sk=dict(onset=300),
        n=500,
        k=dict(algo="ppo", scale=(0, 10)),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(200, 300),
        onset=320,
        tags=["ppo", "trl", "trainer_state", "value_divergence", "reward_0_10"],
        why="loss/value_avg explodes (0.1 -> ~40) and val/clipfrac_avg saturates after step 300, then objective/scores "
        "falls from ~5.5 to ~2.5. Critic diverged; go back to before 300.",
    ),
    C(
        name="trl-dpo-state-overfit",
        w="trainer_state",
        s="dpo_overfit",
        sk=dict(at=350),
        n=1000,
        k=dict(algo="dpo", every=10, eval_every=50),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(250, 400),
        onset=450,
        tags=["dpo", "trl", "trainer_state", "overfitting", "eval_decline"],
        why="Train rewards/margins keep growing (to ~11) and train accuracy -> ~1.0, while eval_rewards/accuracies peaks "
        "~0.7 around 300-350 then drops to ~0.58 and eval_loss rises above its start. Classic DPO overfitting: take "
        "the eval peak.",
    ),
    C(
        name="openrlhf-wandb-nan-divergence",
        w="wandb_openrlhf",
        s="nan_divergence",
        sk=dict(onset=320),
        n=500,
        k=dict(every=1, eval_every=50),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(250, 310),
        onset=305,
        tags=["grpo", "openrlhf", "wandb_sdk", "nan", "divergence"],
        why="actor_grad_norm grows 40x over steps 305-319, then policy_loss, grad norm, kl and entropy are NaN from 320 "
        "on, reward drops to ~0.01 and every response hits the cap. The run is dead: roll back to before 305.",
    ),
    C(
        name="nemo-tb-identical-rewards",
        w="tb_nemo",
        s="identical_rewards",
        n=60,
        k=dict(eval_every=10),
        accept=["stop"],
        preferred="stop",
        onset=1,
        tags=["grpo", "nemo-rl", "tensorboard", "setup_failure", "no_signal"],
        why="train/reward is exactly 0.0 on every step from step 1, baseline_reward/pct_0 = 100, loss and grad_norm 0, "
        "kl 0: the reward function never fires (setup bug). Nothing to learn from; stop and fix it.",
    ),
    C(
        name="trl-rloo-state-saturated",
        w="trainer_state",
        s="saturated",
        sk=dict(at=40),
        n=400,
        k=dict(algo="rloo", every=10),
        accept=["stop"],
        preferred="stop",
        onset=40,
        tags=["rloo", "trl", "trainer_state", "saturation", "no_signal"],
        why="Reward hits 1.0 by step ~40 and stays exactly 1.0 with reward_std 0 and frac_reward_zero_std 1.0 for 360 "
        "steps; gradients are zero. The task is too easy - nothing left to learn. Stop.",
    ),
    C(
        name="mlflow-db-trl-grpo-late-collapse",
        w="mlflow_db_hf",
        s="late_collapse",
        sk=dict(onset=4300),
        n=5000,
        k=dict(every=10, eval_every=250, max_steps=6000),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(3500, 4290),
        onset=4310,
        tags=["grpo", "trl", "mlflow_db", "late_collapse", "long_run"],
        why="Healthy for 4300 steps (reward ~0.75, eval ~0.7), then reward falls to ~0.1 within ~30 steps with an "
        "entropy and kl jump and lengths at the cap. Sudden late collapse: roll back to just before 4300.",
    ),
    C(
        name="plain-jsonl-kl-explosion-log25",
        w="plain_jsonl",
        s="kl_explosion",
        sk=dict(onset=1200),
        n=2000,
        k=dict(every=25),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(900, 1200),
        onset=1350,
        tags=["plain_script", "jsonl", "own_names", "kl_blow_up", "logging_25"],
        why="kl_div climbs from ~0.05 to ~5 after step 1200 while avg_reward falls from ~0.5 to ~0.2. Drift without "
        "reward: roll back to before 1200.",
    ),
    C(
        name="verl-dapo-mlflow-file-entropy-collapse",
        w="mlflow_file_verl",
        s="entropy_collapse",
        sk=dict(onset=250),
        n=600,
        k=dict(eval_every=50, dapo=True),
        accept=["rollback", "stop"],
        preferred="rollback",
        window=(180, 260),
        onset=270,
        tags=["dapo", "verl", "mlflow_file", "entropy_collapse"],
        why="actor/entropy collapses to ~0.01 after step 250, more batches have zero-std groups (num_gen_batches rises), "
        "score drifts down and validation drops. Go back to before 250.",
    ),
]


def to_case(spec, relpath):
    case = {"name": "holdout2-" + spec["name"], "path": relpath, "accept": spec["accept"]}
    if spec.get("preferred"):
        case["preferred"] = spec["preferred"]
    elif len(spec["accept"]) == 1:
        case["preferred"] = spec["accept"][0]
    if spec.get("window"):
        case["rollback_window"] = list(spec["window"])
    if spec.get("onset") is not None:
        case["onset_step"] = spec["onset"]
    case["healthy"] = spec.get("healthy", False)
    case["tags"] = ["holdout2"] + spec["tags"]
    case["reasoning"] = spec["why"]
    return case


def main():
    RUNS.mkdir(parents=True, exist_ok=True)
    (RUNS / ".gitignore").write_text("*\n!.gitignore\n")
    have = {"wandb": _have_wandb(), "mlflow": _mlflow_python() is not None}
    cases, skipped = [], []
    for seed, spec in enumerate(CASES):
        fn, needs = WRITERS[spec["w"]]
        if needs and not have[needs]:
            skipped.append((spec["name"], needs))
            continue
        d = RUNS / spec["name"]
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        rng = np.random.RandomState(1000 + seed)
        curves = SHAPES[spec["s"]](rng, spec["n"], **spec.get("sk", {}))
        k = dict(spec.get("k", {}), n=spec["n"], name=spec["name"], seed=1000 + seed)
        try:
            fn(d, curves, k)
        except Exception as err:  # an SDK that is present but broken: skip the run, keep going
            skipped.append(
                (spec["name"], f"{needs or 'writer'} failed: {str(err).splitlines()[-1] if str(err) else err!r}")
            )
            shutil.rmtree(d, ignore_errors=True)
            continue
        cases.append(to_case(spec, f"runs/{spec['name']}"))
        print(f"wrote {spec['name']:45s} ({spec['w']})")
    header = (
        "# Second independent holdout: runs written by evals/holdout2/make_holdout2.py (regenerate with it).\n"
        "# Labels are ground truth from how each run was constructed; see each case's reasoning.\n"
    )
    (HERE / "holdout2.yaml").write_text(
        header + yaml.safe_dump({"cases": cases}, sort_keys=False, width=120, allow_unicode=True)
    )
    healthy = sum(c["healthy"] for c in cases)
    print(f"\n{len(cases)} cases written ({healthy} healthy) to {HERE / 'holdout2.yaml'}")
    for name, why in skipped:
        print(f"SKIPPED {name}: needs {why}")


if __name__ == "__main__":
    main()
