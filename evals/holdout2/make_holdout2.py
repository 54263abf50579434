#!/usr/bin/env python
"""Second, independent holdout set: 41 synthetic runs in formats the first set barely touches.

    .venv/bin/python evals/holdout2/make_holdout2.py      # writes runs/ (gitignored) and holdout2.yaml

Each run is a *scenario* (framework-neutral curves: a healthy base plus what goes wrong) written by a *writer* (the
files a framework or tracker really leaves on disk). Nothing here imports the assessor. Labels follow the decision
contract in DESIGN.md (see ../holdout_kit.py): what a practitioner should do with the run.

Writers that need an SDK are optional:
  * W&B offline runs need the `wandb` package in this interpreter (written with WANDB_MODE=offline);
  * MLflow stores need `mlflow`, importable here or in the interpreter named by $HOLDOUT2_MLFLOW_PYTHON.
    MLflow >= 3.7 needs MLFLOW_ALLOW_FILE_STORE=true for a file store; we set it.
Runs whose SDK is missing are skipped (and left out of the yaml); the script says which. Everything is
deterministic from the per-case seed, except names the SDKs choose themselves (MLflow run ids).
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import holdout_kit as kit  # noqa: E402
from holdout_kit import HEALTHY, Case, converged, rollback, stop  # noqa: E402

T0 = 1763100000.0  # a fixed wall-clock origin (Nov 2025) for every timestamp we write ourselves


# ----------------------------------------------------------------------------------------- the healthy base
# Curves over steps 1..n (index i is step i+1), in neutral units: reward (0..1 before scaling), reward_std, zero_std
# (fraction of flat groups), kl, entropy, length, trunc, grad_norm, loss, step_time, eval (0..1, sampled by the
# writer), critic (value_loss, expl_var, values); optional acc/fmt (reward components), DPO keys (see dpo).

def _t(n):
    return np.arange(1, n + 1, dtype=float)


def base(rng, n, r0=0.2, r1=0.65, tau=None, noise=0.03, batch=None, kl_end=0.03, ent0=0.55, ent_end=0.42,
         len0=320.0, len_end=380.0, cap=1024, group=8):
    """Reward approaches r1 from r0 with time constant tau (default n/4); per-step noise, or a binomial mean over
    `batch` samples; KL grows to kl_end, entropy and length drift linearly."""
    t = _t(n)
    tau = tau or n / 4
    p = r0 + (r1 - r0) * (1 - np.exp(-t / tau))
    reward = rng.binomial(batch, np.clip(p, 0, 1)) / batch if batch else np.clip(p + rng.normal(0, noise, n), 0, 1)
    length = len0 + (len_end - len0) * t / n + rng.normal(0, 8, n)
    return dict(
        p=p, reward=reward, reward_std=np.sqrt(np.clip(p * (1 - p), 1e-4, None)) + rng.normal(0, 0.01, n),
        zero_std=np.clip(p ** group + (1 - p) ** group + rng.normal(0, 0.03, n), 0, 1),
        kl=np.abs(kl_end * (t / n) ** 1.1 + rng.normal(0, kl_end * 0.04 + 1e-4, n)),
        entropy=ent0 + (ent_end - ent0) * t / n + rng.normal(0, 0.01, n), length=length, cap=np.full(n, float(cap)),
        trunc=np.clip(0.01 + 0.02 * np.maximum(length - 0.7 * cap, 0) / cap + rng.normal(0, 0.004, n), 0, 1),
        grad_norm=np.exp(rng.normal(np.log(0.25), 0.25, n)), loss=rng.normal(0, 0.006, n),
        step_time=np.exp(rng.normal(np.log(40.0), 0.05, n)) * (length / len0),
        eval=np.clip(p - 0.05 + rng.normal(0, 0.008, n), 0, 1),
        value_loss=0.08 + 0.4 * np.exp(-t / (n / 6)) + np.abs(rng.normal(0, 0.01, n)),
        expl_var=np.clip(0.15 + 0.6 * (1 - np.exp(-t / (n / 4))) + rng.normal(0, 0.03, n), -1, 1),
        values=p - 0.1 + rng.normal(0, 0.02, n))


def ramp(n, start, width):
    """0 before `start`, rising smoothly (smoothstep) to 1 over `width` steps."""
    x = np.clip((_t(n) - start) / max(width, 1), 0, 1)
    return x * x * (3 - 2 * x)


def scenario(event=None, **base_kw):
    """A healthy base (with `base_kw`; a tau given as a function of n is resolved here), then `event`."""
    def make(rng, n, planned):
        kw = {k: (v(n) if callable(v) else v) for k, v in base_kw.items()}
        c = base(rng, n, **kw)
        if event:
            event(c, n, rng)
        c.update(n=n, planned=planned)
        return c
    return make


# ------------------------------------------------------------------------------------------------ vocabulary
# Each returns a scenario (a function of rng, n, planned) whose curves a writer turns into files.

def healthy(**kw):
    return scenario(**kw)


def slow_learner():
    return scenario(r0=0.06, r1=0.3, tau=lambda n: n * 1.2, batch=32)


def kl_with_reward():
    """beta > 0: KL grows to ~0.35 while reward rises 0.25 -> 0.8."""
    return scenario(r0=0.25, r1=0.8, tau=lambda n: n / 3, kl_end=0.35, ent_end=0.35)


def converged_early():
    return scenario(r0=0.2, r1=0.72, tau=lambda n: n / 12)


def noisy_binary():
    return scenario(r0=0.3, r1=0.55, tau=lambda n: n / 2, batch=16)


def length_growth():
    """Reasoning gets longer (450 -> 1500 tokens under a 4096 cap) while reward rises."""
    return scenario(r0=0.3, r1=0.7, len0=450, len_end=1500, cap=4096)


def periodic_spikes(every):
    """grad norm, step time and loss spike on every `every`-th step (eval + checkpoint save) and come back."""
    def event(c, n, rng):
        at = (_t(n) % every) == 0
        c["grad_norm"][at] *= 6
        c["step_time"][at] *= 3.5
        c["loss"][at] += 0.05
    return scenario(event)


def nan_burst(at, width):
    """loss and grad norm NaN for `width` steps from `at`, then finite again (overflow steps skipped)."""
    def event(c, n, rng):
        c["grad_norm"][at - 1:at - 1 + width] = np.nan
        c["loss"][at - 1:at - 1 + width] = np.nan
    return scenario(event)


def no_signal():
    """The reward never fires: exactly 0 from step 1, no spread, no gradient."""
    def event(c, n, rng):
        for k, v in {"reward": 0.0, "p": 0.0, "reward_std": 0.0, "zero_std": 1.0, "kl": 0.0, "grad_norm": 0.0,
                     "loss": 0.0}.items():
            c[k][:] = v
        c["eval"] = np.clip(0.12 + rng.normal(0, 0.005, n), 0, 1)
        c["entropy"] = 0.55 + rng.normal(0, 0.003, n)
    return scenario(event)


def saturated(at):
    """Every completion right from `at`: reward exactly 1, no spread, zero gradient; eval ~0.93."""
    def event(c, n, rng):
        sat = _t(n) >= at
        for k, v in {"reward": 1.0, "reward_std": 0.0, "zero_std": 1.0, "grad_norm": 0.0, "loss": 0.0}.items():
            c[k][sat] = v
        c["eval"][sat] = np.clip(0.93 + rng.normal(0, 0.005, sat.sum()), 0, 1)
    return scenario(event, r0=0.5, r1=1.0, tau=at / 3)


def kl_drift(onset):
    """Reward plateaus by `onset` while KL climbs to ~0.7; eval slips by 0.03."""
    def event(c, n, rng):
        r = ramp(n, onset, n - onset)
        c["kl"] = c["kl"] * 0.3 + 0.02 + 0.7 * r ** 1.3 + np.abs(rng.normal(0, 0.01, n))
        c["eval"] = np.clip(0.4 - 0.03 * r + rng.normal(0, 0.008, n), 0, 1)
    return scenario(event, r0=0.2, r1=0.45, tau=onset / 3)


def peak_decline(peak, drop=0.4):
    """Reward peaks at `peak`, then loses `drop` of its level linearly to the end; eval follows, KL grows."""
    def event(c, n, rng):
        r = np.clip((_t(n) - peak) / (n - peak), 0, 1)
        c["reward"] = np.clip(c["reward"] - drop * c["p"] * r, 0, 1)
        c["eval"] = np.clip(c["eval"] - drop * 0.8 * c["p"] * r, 0, 1)
        c["kl"] = c["kl"] + 0.15 * r
    return scenario(event, r0=0.2, r1=0.7, tau=peak / 3)


def eval_peak(peak):
    """Train reward keeps rising; held-out accuracy peaks at `peak` and falls by 0.22 to the end."""
    def event(c, n, rng):
        t = _t(n)
        ev = 0.3 + 0.25 * (1 - np.exp(-t / (peak / 3))) - 0.22 * np.clip((t - peak) / (n - peak), 0, 1)
        c["eval"] = np.clip(ev + rng.normal(0, 0.008, n), 0, 1)
    return scenario(event, r0=0.25, r1=0.85, tau=lambda n: n / 3)


def entropy_collapse(onset):
    """Entropy falls to ~0.01 over 100 steps from `onset`: groups stop disagreeing, reward and eval slip."""
    def event(c, n, rng):
        r = ramp(n, onset, 100)
        c["entropy"] = c["entropy"] * (1 - r) + 0.008 * r + np.abs(rng.normal(0, 0.002, n)) * r
        c["zero_std"] = np.clip(c["zero_std"] * (1 - r) + 0.97 * r, 0, 1)
        c["reward_std"] = c["reward_std"] * (1 - 0.9 * r)
        c["reward"] = np.clip(c["reward"] - 0.08 * r, 0, 1)
        c["eval"] = np.clip(c["eval"] - 0.1 * r, 0, 1)
        c["length"] = c["length"] * (1 - 0.25 * r)
    return scenario(event, r0=0.25, r1=0.55, tau=onset / 2)


def entropy_blowup(onset):
    """Entropy +6 within 40 steps of `onset`: reward and eval collapse, generations hit the cap, KL explodes."""
    def event(c, n, rng):
        r = ramp(n, onset, 40)
        c["entropy"] = c["entropy"] + 6.0 * r + rng.normal(0, 0.3, n) * r
        c["reward"] = np.clip(c["reward"] * (1 - 0.9 * r), 0, 1)
        c["eval"] = np.clip(c["eval"] * (1 - 0.85 * r), 0, 1)
        c["length"] = c["length"] * (1 - r) + c["cap"] * 0.97 * r
        c["trunc"] = np.clip(c["trunc"] + 0.85 * r, 0, 1)
        c["kl"] = c["kl"] + 2.5 * r
        c["grad_norm"] = c["grad_norm"] * (1 + 15 * r)
    return scenario(event)


def length_explosion(onset):
    """Responses grow from ~650 to ~4000 tokens (cap 4096) over 120 steps from `onset`; reward and eval fall."""
    def event(c, n, rng):
        r = ramp(n, onset, 120)
        c["length"] = c["length"] * (1 - r) + 4000 * r + rng.normal(0, 20, n) * r
        c["trunc"] = np.clip(c["trunc"] + 0.8 * r, 0, 1)
        c["reward"] = np.clip(c["reward"] - 0.35 * r, 0, 1)
        c["eval"] = np.clip(c["eval"] - 0.3 * r, 0, 1)
        c["step_time"] = c["step_time"] * (1 + 4 * r)
    return scenario(event, r0=0.3, r1=0.62, tau=onset / 3, len0=600, len_end=700, cap=4096)


def length_collapse(onset):
    """Answers shrink from ~250 to ~6 tokens over 80 steps from `onset`; reward falls by 90%."""
    def event(c, n, rng):
        r = ramp(n, onset, 80)
        c["length"] = c["length"] * (1 - r) + (6 + rng.normal(0, 1, n)) * r
        c["reward"] = np.clip(c["reward"] * (1 - 0.9 * r), 0, 1)
        c["entropy"] = c["entropy"] * (1 - 0.6 * r)
    return scenario(event, r0=0.2, r1=0.55, tau=onset / 3, len0=250, len_end=260)


def truncation(onset):
    """Lengths climb to ~1010 against a 1024 cap over 150 steps from `onset`; 70% truncated, reward drops."""
    def event(c, n, rng):
        r = ramp(n, onset, 150)
        c["length"] = c["length"] * (1 - r) + 1010 * r + rng.normal(0, 4, n) * r
        c["trunc"] = np.clip(c["trunc"] + 0.7 * r + rng.normal(0, 0.02, n) * r, 0, 1)
        c["reward"] = np.clip(c["reward"] - 0.15 * r, 0, 1)
    return scenario(event, r0=0.2, r1=0.5, tau=onset / 3, len0=600, len_end=700, cap=1024)


def format_hack(onset):
    """Two rewards summed: format -> 1.0 while accuracy (and eval) fall from `onset`; the total keeps rising."""
    def event(c, n, rng):
        t, r = _t(n), ramp(n, onset, 300)
        c["acc"] = np.clip(c["p"] - 0.3 * r + rng.normal(0, 0.03, n), 0, 1)
        c["fmt"] = np.clip(0.3 + 0.35 * (1 - np.exp(-t / 400)) + 0.35 * r + rng.normal(0, 0.02, n), 0, 1)
        c["reward"] = c["acc"] + c["fmt"]
        c["eval"] = np.clip(c["p"] - 0.05 - 0.25 * r + rng.normal(0, 0.008, n), 0, 1)
        c["length"] = c["length"] * (1 - 0.5 * r)
    return scenario(event, r0=0.15, r1=0.6, tau=onset / 3)


def value_divergence(onset):
    """The critic diverges from `onset` (value loss x400, explained variance to -2.5); reward and eval fall."""
    def event(c, n, rng):
        r = ramp(n, onset, 80)
        c["value_loss"] = c["value_loss"] * (1 + 400 * r ** 2) + np.abs(rng.normal(0, 2, n)) * r
        c["expl_var"] = c["expl_var"] * (1 - r) - 2.5 * r + rng.normal(0, 0.2, n) * r
        c["values"] = c["values"] + 8 * r * rng.choice([-1, 1], n)
        c["reward"] = np.clip(c["reward"] - 0.3 * r, 0, 1)
        c["eval"] = np.clip(c["eval"] - 0.25 * r, 0, 1)
        c["grad_norm"] = c["grad_norm"] * (1 + 10 * r)
    return scenario(event, r0=0.1, r1=0.55, tau=onset / 3)


def nan_divergence(onset):
    """Grad norm x40 over the 15 steps before `onset`; then NaN losses, reward ~0, every response at the cap."""
    def event(c, n, rng):
        c["grad_norm"] = c["grad_norm"] * (1 + 40 * ramp(n, onset - 15, 15))
        after = _t(n) >= onset
        for k in ("grad_norm", "loss", "kl", "entropy"):
            c[k][after] = np.nan
        c["reward"][after] = np.clip(rng.normal(0.01, 0.01, after.sum()), 0, 1)
        c["length"][after], c["trunc"][after] = c["cap"][after], 1.0
    return scenario(event)


def late_collapse(onset):
    """Healthy for a long time, then within ~30 steps of `onset` reward and eval collapse, entropy and KL jump."""
    def event(c, n, rng):
        r = ramp(n, onset, 30)
        c["reward"] = np.clip(c["reward"] * (1 - 0.88 * r), 0, 1)
        c["eval"] = np.clip(c["eval"] * (1 - 0.85 * r), 0, 1)
        c["entropy"] = c["entropy"] + 2.5 * r
        c["kl"] = c["kl"] + 1.5 * r
        c["length"] = c["length"] * (1 - r) + c["cap"] * 0.9 * r
        c["grad_norm"] = c["grad_norm"] * (1 + 8 * r)
    return scenario(event, r0=0.2, r1=0.75, tau=lambda n: n / 6)


def kl_explosion(onset):
    """KL climbs from ~0.05 to ~5 over 500 steps from `onset` while reward and eval fall by 0.3."""
    def event(c, n, rng):
        r = ramp(n, onset, 500)
        c["kl"] = c["kl"] + 5 * r ** 1.5
        c["reward"] = np.clip(c["reward"] - 0.3 * r, 0, 1)
        c["eval"] = np.clip(c["eval"] - 0.3 * r, 0, 1)
    return scenario(event, r0=0.15, r1=0.5, tau=onset / 3, kl_end=0.06)


def dpo(overfit_at=None):
    """Offline/online DPO: margins, preference accuracy, implicit rewards, log-probs, loss. overfit_at: from there
    margins and train accuracy keep growing while eval accuracy falls and eval loss rises."""
    def make(rng, n, planned):
        t = _t(n)
        margin = 2.2 * (1 - np.exp(-t / (n / 4))) + rng.normal(0, 0.12, n)
        acc = np.clip(0.5 + 0.3 * (1 - np.exp(-t / (n / 5))) + rng.normal(0, 0.03, n), 0, 1)
        eacc, eloss = 0.5 + 0.22 * (1 - np.exp(-t / (n / 5))), 0.693 - 0.17 * (1 - np.exp(-t / (n / 5)))
        if overfit_at:
            r = np.clip((t - overfit_at) / (n - overfit_at), 0, 1)
            margin, acc = margin + 9 * r ** 1.2, np.clip(acc + 0.19 * r, 0, 1)
            eacc, eloss = eacc - 0.13 * r, eloss + 0.45 * r ** 1.2
        chosen = -0.4 * margin * 0.3 + rng.normal(0, 0.05, n)
        return dict(
            margin=margin, acc=acc, chosen=chosen, rejected=chosen - margin,
            loss=np.clip(np.log1p(np.exp(-margin)) + rng.normal(0, 0.03, n), 0.001, None),
            eval_acc=np.clip(eacc + rng.normal(0, 0.008, n), 0, 1), eval_loss=eloss + rng.normal(0, 0.005, n),
            eval_margin=1.4 * (1 - np.exp(-t / (n / 5))) + rng.normal(0, 0.05, n),
            logp_chosen=-180 - 20 * t / n + rng.normal(0, 3, n), logp_rejected=-190 - 20 * t / n - 2 * margin,
            grad_norm=np.exp(rng.normal(np.log(6.0), 0.3, n)), kl=0.5 * t / n * 10 + rng.normal(0, 0.1, n),
            entropy=60 - 5 * t / n + rng.normal(0, 0.5, n),
            reward=np.clip(0.4 + 0.35 * (1 - np.exp(-t / (n / 4))) + rng.normal(0, 0.03, n), 0, 1),
            length=220 + rng.normal(0, 6, n), n=n, planned=planned)
    return make


# ================================================================================================ row builders
# Neutral curves -> the raw keys a framework logs: lists of (step, {key: value}). `scale` maps the 0..1 reward to
# the task's range (e.g. (-1, 1) or (0, 10)).

def _sc(x, scale):
    return scale[0] + (scale[1] - scale[0]) * x


def _f(x, nd=6):
    x = float(x)
    return round(x, nd) if math.isfinite(x) else x


def steps(n, every):
    return list(range(every, n + 1, every))


def rows_trl_grpo(c, every=10, eval_every=0, scale=(0, 1), kl=True, lr=1e-6):
    """TRL GRPO: every value averaged over the logging window (grad_norm: the last), eval rows apart."""
    train, ev = [], []
    for s in steps(c["n"], every):
        i, w = s - 1, slice(max(0, s - every), s)
        L, tr = np.mean(c["length"][w]), np.mean(c["trunc"][w])
        row = {"loss": _f(np.nanmean(c["loss"][w]) if not np.isnan(c["loss"][i]) else np.nan, 4),
               "grad_norm": _f(c["grad_norm"][i]), "learning_rate": lr * min(1.0, s / 20),
               "num_tokens": float(s * 64 * (c["length"][i] + 150)), "completions/mean_length": _f(L, 3),
               "completions/min_length": _f(L * 0.35, 1), "completions/max_length": _f(min(L * 2.1, c["cap"][i]), 1),
               "completions/clipped_ratio": _f(tr, 4), "completions/mean_terminated_length": _f(L * (1 - tr), 3)}
        if "acc" in c:
            for name in ("acc", "fmt"):
                v = np.mean(c[name][w])
                key = "accuracy_reward" if name == "acc" else "format_reward"
                row[f"rewards/{key}/mean"], row[f"rewards/{key}/std"] = _f(v), _f(np.sqrt(max(v * (1 - v), 0)))
            row["reward"] = _f(np.mean(c["reward"][w]))
        else:
            row["rewards/correctness_reward/mean"] = row["reward"] = _f(_sc(np.mean(c["reward"][w]), scale))
        row.update({"reward_std": _f(np.mean(c["reward_std"][w]) * (scale[1] - scale[0])),
                    "frac_reward_zero_std": _f(np.mean(c["zero_std"][w]), 4),
                    "entropy": _f(np.mean(c["entropy"][w])) if not np.isnan(c["entropy"][i]) else None,
                    "clip_ratio/region_mean": 0.0, "clip_ratio/low_mean": 0.0, "clip_ratio/high_mean": 0.0,
                    "step_time": _f(c["step_time"][i], 3)})
        if kl:
            row["kl"] = _f(np.mean(c["kl"][w])) if not np.isnan(c["kl"][i]) else None
        row["epoch"] = round(s / c["n"], 4)
        train.append((s, row))
        if eval_every and s % eval_every == 0:
            ev.append((s, {"eval_reward": _f(_sc(c["eval"][i], scale)), "eval_loss": _f(c["loss"][i], 4),
                           "eval_runtime": 88.3, "eval_samples_per_second": 5.66, "eval_steps_per_second": 0.36,
                           "epoch": round(s / c["n"], 4)}))
    return train, ev


def rows_trl_ppo(c, scale=(0, 10), **_):
    """TRL PPOTrainer (objective/*, policy/*, loss/*, val/*; lr, not learning_rate), every step."""
    train = []
    for s in steps(c["n"], 1):
        i = s - 1
        score, nsr = _sc(c["reward"][i], scale), -0.05 * c["kl"][i] * 10
        train.append((s, {
            "eps": 3, "objective/kl": _f(c["kl"][i] * 10), "objective/entropy": _f(c["entropy"][i] * 100),
            "objective/non_score_reward": _f(nsr), "objective/rlhf_reward": _f(score + nsr),
            "objective/scores": _f(score), "policy/approxkl_avg": _f(abs(c["loss"][i]) * 0.5 + 0.002),
            "policy/clipfrac_avg": _f(0.02 + 0.01 * c["grad_norm"][i]), "loss/policy_avg": _f(c["loss"][i] * 3),
            "loss/value_avg": _f(c["value_loss"][i]), "val/clipfrac_avg": _f(min(0.9, 0.05 + 0.02 * c["value_loss"][i])),
            "policy/entropy_avg": _f(c["entropy"][i] * 3), "val/ratio": _f(1.0 + c["loss"][i]),
            "val/ratio_var": _f(1e-4 + abs(c["loss"][i]) * 0.01), "val/num_eos_tokens": int(64 * (1 - c["trunc"][i])),
            "lr": 3e-6 * (1 - s / (c["n"] + 1)), "episode": s * 64, "epoch": round(s * 64 / 20000, 4)}))
    return train, []


def rows_dpo(c, every=10, eval_every=100, online=False, **_):
    """TRL DPO (and online DPO, which adds judge scores and KL): rewards/*, logps/*, eval_rewards/*."""
    train, ev = [], []
    for s in steps(c["n"], every):
        i = s - 1
        row = {"loss": _f(c["loss"][i], 4), "grad_norm": _f(c["grad_norm"][i]), "learning_rate": 5e-7,
               "rewards/chosen": _f(c["chosen"][i]), "rewards/rejected": _f(c["rejected"][i]),
               "rewards/accuracies": _f(c["acc"][i], 4), "rewards/margins": _f(c["margin"][i]),
               "logps/chosen": _f(c["logp_chosen"][i], 3), "logps/rejected": _f(c["logp_rejected"][i], 3)}
        if online:
            row.update({"objective/kl": _f(c["kl"][i]), "objective/entropy": _f(c["entropy"][i]),
                        "objective/non_score_reward": _f(-0.1 * c["kl"][i]),
                        "objective/rlhf_reward": _f(_sc(c["reward"][i], (-4, 6)) - 0.1 * c["kl"][i]),
                        "objective/scores": _f(_sc(c["reward"][i], (-4, 6))), "val/contain_eos_token": 0.97,
                        "beta": 0.1, "epoch": round(s / c["n"], 4)})
        else:
            row.update({"logits/chosen": -1.91, "logits/rejected": -1.87, "epoch": round(s / c["n"] * 3, 4)})
        train.append((s, row))
        if eval_every and s % eval_every == 0 and not online:
            ev.append((s, {"eval_loss": _f(c["eval_loss"][i]), "eval_rewards/accuracies": _f(c["eval_acc"][i], 4),
                           "eval_rewards/margins": _f(c["eval_margin"][i]), "eval_rewards/chosen": -0.3,
                           "eval_rewards/rejected": _f(-0.3 - c["eval_margin"][i]), "eval_runtime": 41.2,
                           "eval_samples_per_second": 24.3, "eval_steps_per_second": 3.04,
                           "epoch": round(s / c["n"] * 3, 4)}))
    return train, ev


def rows_verl(c, eval_every=0, scale=(0, 1), critic=False, dapo=False, **_):
    """verl: one row per step (actor/*, critic/*, response_length/*, timing_s/*), validation in the same row, plus
    the validation before training at step 0."""
    train = []
    val_key = "val-core/math_dapo/acc/mean@16" if dapo else "val-core/openai/gsm8k/reward/mean@1"
    if eval_every:
        train.append((0, {val_key: _f(_sc(c["eval"][0] - 0.05, scale))}))
    for s in steps(c["n"], 1):
        i = s - 1
        sc = _sc(c["reward"][i], scale)
        row = {"actor/entropy": _f(c["entropy"][i]), "actor/pg_loss": _f(c["loss"][i]),
               "actor/pg_clipfrac": _f(0.002 + 0.001 * c["grad_norm"][i]), "actor/ppo_kl": _f(c["loss"][i] * 0.01),
               "actor/pg_clipfrac_lower": 0.0, "actor/grad_norm": _f(c["grad_norm"][i]), "actor/lr": 1e-6,
               "critic/score/mean": _f(sc), "critic/score/max": _f(scale[1]), "critic/score/min": _f(scale[0]),
               "critic/rewards/mean": _f(sc - (0.001 * c["kl"][i] if critic else 0)),
               "critic/advantages/mean": _f(c["loss"][i] * 0.1), "critic/advantages/max": 2.3,
               "critic/advantages/min": -2.6, "response_length/mean": _f(c["length"][i], 3),
               "response_length/max": _f(min(c["length"][i] * 2.2, c["cap"][i]), 1),
               "response_length/min": _f(c["length"][i] * 0.2, 1), "response_length/clip_ratio": _f(c["trunc"][i], 4),
               "prompt_length/mean": 104.2, "timing_s/gen": _f(c["step_time"][i] * 0.62, 3),
               "timing_s/update_actor": _f(c["step_time"][i] * 0.2, 3), "timing_s/step": _f(c["step_time"][i], 3),
               "perf/total_num_tokens": int(512 * (c["length"][i] + 104)), "perf/max_memory_allocated_gb": 61.3,
               "training/global_step": s, "training/epoch": 0}
        if critic:
            row.update({"actor/reward_kl_penalty": _f(c["kl"][i]), "actor/reward_kl_penalty_coeff": 0.001,
                        "critic/vf_loss": _f(c["value_loss"][i]),
                        "critic/vf_clipfrac": _f(min(0.95, 0.05 + 0.05 * c["value_loss"][i])),
                        "critic/vpred_mean": _f(c["values"][i]),
                        "critic/grad_norm": _f(c["grad_norm"][i] * 40 * (1 + c["value_loss"][i])), "critic/lr": 1e-5,
                        "critic/values/mean": _f(c["values"][i]), "critic/vf_explained_var": _f(c["expl_var"][i]),
                        "critic/returns/mean": _f(sc * 0.9), "timing_s/values": _f(c["step_time"][i] * 0.05, 3),
                        "timing_s/update_critic": _f(c["step_time"][i] * 0.1, 3)})
        else:
            row.update({"actor/kl_loss": _f(c["kl"][i]), "actor/kl_coef": 0.001})
        if dapo:
            row["train/num_gen_batches"] = int(1 + (c["zero_std"][i] > 0.5))
        if eval_every and s % eval_every == 0:
            row.update({val_key: _f(_sc(c["eval"][i], scale)), "timing_s/testing": 55.0})
        train.append((s, row))
    return train, []


def rows_openrlhf(c, every=1, eval_every=0, scale=(0, 1), critic=False, **_):
    """OpenRLHF: the flat keys of its logs_dict (policy_loss, actor_grad_norm, ...) and eval_* metrics."""
    train, ev = [], []
    for s in steps(c["n"], every):
        i = s - 1
        r, std = _sc(c["reward"][i], scale), c["reward_std"][i] * (scale[1] - scale[0])
        row = {"policy_loss": _f(c["loss"][i]), "actor_lr": 5e-7, "actor_grad_norm": _f(c["grad_norm"][i]),
               "entropy_loss": _f(c["entropy"][i]), "kl": _f(c["kl"][i]), "reward": _f(r),
               "return": _f(r - 0.01 * c["kl"][i]), "rollout/reward_mean": _f(r), "rollout/reward_std": _f(std),
               "group_reward_std": _f(std * (1 - c["zero_std"][i])), "response_length": _f(c["length"][i], 2),
               "total_length": _f(c["length"][i] + 180, 2), "truncated": _f(c["trunc"][i], 4),
               "ppo_clip_ratio": _f(0.003 + 0.002 * c["grad_norm"][i]), "ppo_kl": _f(c["loss"][i] * 0.01),
               "vllm_kl": 0.0009, "timing/generation": _f(c["step_time"][i] * 0.6, 2),
               "timing/make_experience": _f(c["step_time"][i] * 0.15, 2),
               "timing/ppo_train": _f(c["step_time"][i] * 0.2, 2), "timing/broadcast": _f(c["step_time"][i] * 0.05, 2),
               "timing/step_total": _f(c["step_time"][i], 2), "global_step": s}
        if critic:
            row.update({"critic_loss": _f(c["value_loss"][i]), "values": _f(_sc(c["values"][i], scale)),
                        "critic_lr": 5e-6, "critic_grad_norm": _f(c["grad_norm"][i] * 20 * (1 + c["value_loss"][i]))})
        train.append((s, row))
        if eval_every and s % eval_every == 0:
            ev.append((s, {"eval_gsm8k_pass1": _f(_sc(c["eval"][i], scale)),
                           "eval_gsm8k_pass4": _f(_sc(min(1, c["eval"][i] * 1.3), scale)),
                           "eval_response_length_mean": _f(c["length"][i], 2),
                           "eval_truncated_rate": _f(c["trunc"][i], 4), "eval_num_samples": 1319}))
    return train, ev


def rows_nemo(c, eval_every=0, scale=(0, 1), **_):
    """NeMo-RL GRPO: train/* (baseline_reward/pct_0|1|mixed, token_mult_prob_error, ...) and validation/*."""
    train, ev = [], []
    for s in steps(c["n"], 1):
        i = s - 1
        pct1 = 100 * c["zero_std"][i] * c["p"][i]
        pct0 = 100 * c["zero_std"][i] - pct1
        ent = c["entropy"][i]
        train.append((s, {
            "train/reward": _f(_sc(c["reward"][i], scale)), "train/loss": _f(c["loss"][i]),
            "train/grad_norm": _f(c["grad_norm"][i]), "train/lr": 1e-6, "train/wd": 0.01,
            "train/kl_penalty": _f(c["kl"][i]), "train/approx_entropy": _f(ent),
            "train/probs_ratio": _f(1 + c["loss"][i] * 0.1), "train/probs_ratio_clamped": _f(1 + c["loss"][i] * 0.05),
            "train/token_mult_prob_error": _f(1.003 + (0.02 * max(ent - 1, 0) if np.isfinite(ent) else 0)),
            "train/baseline_reward/pct_0": _f(pct0, 3), "train/baseline_reward/pct_1": _f(pct1, 3),
            "train/baseline_reward/pct_mixed": _f(100 - pct0 - pct1, 3),
            "train/mean_gen_tokens_per_sample": _f(c["length"][i], 2),
            "train/max_gen_tokens_per_sample": _f(min(c["length"][i] * 2.5, c["cap"][i]), 1),
            "train/truncation_rate": _f(c["trunc"][i], 4), "train/natural_termination_rate": _f(1 - c["trunc"][i], 4),
            "train/advantages/mean": _f(c["loss"][i] * 0.01), "timing/train/total_step_time": _f(c["step_time"][i], 3),
            "timing/train/generation": _f(c["step_time"][i] * 0.55, 3),
            "timing/train/policy_training": _f(c["step_time"][i] * 0.3, 3)}))
        if eval_every and s % eval_every == 0:
            ev.append((s, {"validation/accuracy": _f(_sc(c["eval"][i], scale)),
                           "validation/avg_length": _f(c["length"][i], 2),
                           "validation/pass_k": _f(min(1, c["eval"][i] * 1.25))}))
    return train, ev


def rows_plain(c, every=1, scale=(0, 1), **_):
    """A home-made loop with its own names."""
    return [(s, {"avg_reward": _f(_sc(c["reward"][s - 1], scale), 4), "reward_std": _f(c["reward_std"][s - 1], 4),
                 "mean_len": _f(c["length"][s - 1], 1), "kl_div": _f(c["kl"][s - 1], 5),
                 "pg_loss": _f(c["loss"][s - 1], 5), "lr": 1e-6}) for s in steps(c["n"], every)], []


ROWS = {"grpo": rows_trl_grpo, "rloo": rows_trl_grpo, "ppo": rows_trl_ppo, "dpo": rows_dpo,
        "online_dpo": lambda c, **k: rows_dpo(c, online=True, **k)}


# ====================================================================================================== writers

def tracker_key(k):
    """transformers' rewrite_logs: eval_X -> eval/X, everything else -> train/X."""
    return "eval/" + k[5:] if k.startswith("eval_") else "train/" + k


def hf_history(train, ev, upto):
    return sorted([dict(r, step=s) for s, r in train if s <= upto] + [dict(r, step=s) for s, r in ev if s <= upto],
                  key=lambda d: (d["step"], "eval_loss" in d or "eval_reward" in d))


def trainer_state_json(path, train, ev, global_step, max_steps, logging_steps, eval_steps=500, save_steps=500,
                       final=False):
    hist = hf_history(train, ev, global_step)
    if final:
        hist.append({"epoch": hist[-1]["epoch"], "step": global_step, "total_flos": 0.0, "train_loss": 0.0123,
                     "train_runtime": 40211.7, "train_samples_per_second": 1.2, "train_steps_per_second": 0.02})
    state = kit.trainer_state(hist, global_step, max_steps, logging_steps, save_steps, eval_steps,
                              hist[-1].get("epoch", 0), 1, final)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state, indent=2, sort_keys=True))  # Python json: NaN stays a bare NaN token


def tb_rows(path, rows, sec_per_step=30.0, wall0=T0, truncate=0):
    kit.tb_file(path, [(wall0 + s * sec_per_step, s, r) for s, r in rows], truncate)


def have_wandb():
    try:
        import wandb  # noqa: F401
    except Exception:
        return False
    return True


def wandb_run(rundir, project, name, config, calls, step_metric=None, truncate=0):
    """A W&B offline run written with the real SDK. calls: (step or None, {key: value})."""
    if not have_wandb():
        raise kit.Skip("needs the wandb package")
    import wandb

    rundir.mkdir(parents=True, exist_ok=True)
    os.environ["WANDB_MODE"], os.environ["WANDB_SILENT"] = "offline", "true"
    rid = hashlib.sha1(name.encode()).hexdigest()[:8]
    try:
        run = wandb.init(project=project, name=name, id=rid, dir=str(rundir), config=config,
                         settings=wandb.Settings(x_disable_stats=True, silent=True, console="off"))
        for sm, glob in step_metric or ():
            run.define_metric(sm)
            run.define_metric(glob, step_metric=sm, step_sync=True)
        for step, data in calls:
            data = {k: v for k, v in data.items() if v is not None}
            run.log(data) if step is None else run.log(data, step=step)
        run.finish()
    except Exception as err:  # an SDK that is present but broken: skip the run, keep going
        raise kit.Skip(f"wandb failed: {err}") from err
    with contextlib.suppress(Exception):  # make sure wandb-core has flushed and closed the .wandb file
        wandb.teardown()
    wdir = rundir / "wandb"
    found = sorted(wdir.glob("offline-run-*"))
    if found:  # a fixed timestamp in the folder name, so reruns look alike
        fixed = wdir / f"offline-run-20251114_061500-{rid}"
        if found[-1] != fixed:
            shutil.rmtree(fixed, ignore_errors=True)
            found[-1].rename(fixed)
        link = wdir / "latest-run"
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(fixed.name)
        if truncate:  # the run is still writing: the last record is cut short
            f, size = fixed / f"run-{rid}.wandb", -1
            while size != f.stat().st_size:
                size = f.stat().st_size
                time.sleep(0.5)
            f.write_bytes(f.read_bytes()[:-truncate])


def mlflow_python():
    for py in (os.environ.get("HOLDOUT2_MLFLOW_PYTHON"), sys.executable):
        if py and Path(py).exists() and subprocess.run([py, "-c", "import mlflow"], capture_output=True).returncode == 0:
            return py
    return None


MLFLOW_SCRIPT = r"""
import json, sys
from mlflow.tracking import MlflowClient
from mlflow.entities import Metric, Param
p = json.load(open(sys.argv[1]))
c = MlflowClient(tracking_uri=p["uri"])
e = c.get_experiment_by_name(p["experiment"])
eid = e.experiment_id if e else c.create_experiment(p["experiment"])
rid = c.create_run(eid, run_name=p["run_name"], start_time=p["start_ms"]).info.run_id
c.log_batch(rid, params=[Param(k, str(v)) for k, v in p["params"].items()])
ms = [Metric(k, float("nan") if v is None else v, ts, s) for k, v, ts, s in p["metrics"]]
for i in range(0, len(ms), 1000):
    c.log_batch(rid, metrics=ms[i:i + 1000])
if p["status"] != "RUNNING":
    c.set_terminated(rid, p["status"], end_time=p["end_ms"])
"""


def mlflow_run(rundir, kind, experiment, run_name, rows, params, status="RUNNING", key_fix=None, sec_per_step=30.0):
    """An MLflow file store (mlruns/) or SQL store (mlflow.db) written by the real SDK, in a subprocess."""
    py = mlflow_python()
    if py is None:
        raise kit.Skip("needs the mlflow package (here or in $HOLDOUT2_MLFLOW_PYTHON)")
    rundir.mkdir(parents=True, exist_ok=True)
    uri = f"file:{(rundir / 'mlruns').resolve()}" if kind == "file" else f"sqlite:///{(rundir / 'mlflow.db').resolve()}"
    start = int(T0 * 1000)
    metrics = [[key_fix(k) if key_fix else k, v if math.isfinite(v) else None, start + int(s * sec_per_step * 1000),
                s] for s, row in rows for k, v in row.items() if v is not None]
    payload = dict(uri=uri, experiment=experiment, run_name=run_name, params=params, metrics=metrics, status=status,
                   start_ms=start, end_ms=start + int(rows[-1][0] * sec_per_step * 1000))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(payload, fh)
    res = subprocess.run([py, "-c", MLFLOW_SCRIPT, fh.name], cwd=rundir, capture_output=True, text=True,
                         env=dict(os.environ, MLFLOW_ALLOW_FILE_STORE="true"))
    os.unlink(fh.name)
    if res.returncode != 0:
        raise kit.Skip(f"mlflow failed: {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else '?'}")


def verl_console_log(path, rows, prefix="(TaskRunner pid=91822) ", noise_every=37):
    def np_repr(v):
        if isinstance(v, int):
            return f"np.int64({v})"
        return f"np.float64({v})" if math.isfinite(v) else "np.float64(nan)"

    lines = ["2025-11-14 06:15:02,118\tINFO worker.py:1832 -- Started a local Ray instance.",
             f"{prefix}Using dataset class: RLHFDataset", f"{prefix}Size of train dataloader: 467, Size of val dataloader: 1"]
    for j, (s, row) in enumerate(rows):
        lines.append(f"{prefix}step:{s} - " + " - ".join(f"{k}:{np_repr(v)}" for k, v in row.items() if v is not None))
        if j % noise_every == 5:
            lines.append(f"(WorkerDict pid=92011) INFO 11-14 07:{j % 60:02d}:11 [block_pool.py:321] "
                         "Successfully reset prefix cache")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def openrlhf_console_log(path, train, ev, total, partial_tail=False):
    lines = ["[2025-11-14 06:15:01,002] [INFO] [real_accelerator.py:222:get_accelerator] Setting ds_accelerator to cuda "
             "(auto detect)",
             "[2025-11-14 06:16:40,551] [INFO] [logging.py:107:log_dist] [Rank 0] DeepSpeed info: version=0.16.8"]
    evd = dict(ev)
    for s, row in train:
        stamp = f"[2025-11-14 06:{(s // 60) % 60:02d}:{s % 60:02d}"
        kl = row["kl"] if row["kl"] is not None else "nan"
        lines += [f"Episode [1/1]:  {100 * s // total}%|█▉        | {s}/{total} [{s * 41 // 60:02d}:{s * 41 % 60:02d}<??:??, "
                  f"41.2s/it, act_loss={row['policy_loss']:.3f}, reward={row['reward']:.3f}, kl={kl}]",
                  f"{stamp},100] [INFO] [ppo_trainer.py:512] ✨ Global step {s}: {row!r}"]
        if s in evd:
            lines.append(f"{stamp},900] [INFO] [ppo_trainer.py:471] Evaluation completed in 63.41 seconds, "
                         f"global_step {s}, eval_metrics: {evd[s]!r}")
    text = "\n".join(lines) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + (lines[-1][: len(lines[-1]) // 2] if partial_tail else ""))


def trl_console_log(path, train, ev, total):
    lines = ["2025-11-14 06:15:11,442 [INFO] train_grpo: Model: Qwen/Qwen2.5-3B-Instruct",
             "2025-11-14 06:15:16,344 [INFO] train_grpo: Using vLLM for generation (colocate mode)"]
    for s, _, r in sorted([(s, 0, r) for s, r in train] + [(s, 1, r) for s, r in ev], key=lambda x: (x[0], x[1])):
        lines += [f"  {100 * s // total}%|▏         | {s}/{total} [{s // 60:02d}:{s % 60:02d}<9:59:59, 31.8s/it]",
                  repr({k: (float("nan") if v is None else v) for k, v in r.items()})]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


# -------------------------------------------------------------------------------- one writer per on-disk format
# Each takes (curves, folder, **options); the folder's name is the run's name.

def w_wandb_trl(c, d, algo="grpo", every=10, eval_every=0, scale=(0, 1), kl=False, resume=None, truncate=0):
    """HF WandbCallback: train/... and eval/... keys, train/global_step as the step metric. resume=(ckpt, crash):
    the run crashed at `crash` and resumed from `ckpt`, so ckpt+1..crash are logged twice (_step keeps counting)."""
    opts = dict(every=every, eval_every=eval_every) if algo in ("dpo", "online_dpo") else \
        dict(every=every, eval_every=eval_every, scale=scale, kl=kl or algo == "rloo")
    train, ev = ROWS[algo](c, **opts)

    def call(s, r):
        return None, {**{tracker_key(x): v for x, v in r.items() if x != "epoch"}, "train/epoch": r.get("epoch"),
                      "train/global_step": s}

    calls = [call(s, r) for s, _, r in sorted([(s, 0, r) for s, r in train] + [(s, 1, r) for s, r in ev],
                                              key=lambda x: (x[0], x[1]))]
    if resume:
        ckpt, crash = resume
        noise = np.random.RandomState(c["seed"] + 1)
        calls = [x for x in calls if x[1]["train/global_step"] <= crash] + [
            call(s, dict(r, reward=_f(r["reward"] + noise.normal(0, 0.02)) if s <= crash else r["reward"]))
            for s, r in train if s > ckpt]
    wandb_run(d, "trl-" + algo, d.name, {"learning_rate": 1e-6, "num_generations": 8, "logging_steps": every,
                                         "max_steps": c["planned"], "beta": 0.04 if kl else 0.0},
              calls, step_metric=[("train/global_step", "*")], truncate=truncate)


def w_wandb_verl(c, d, eval_every=0, truncate=0):
    train, _ = rows_verl(c, eval_every)
    wandb_run(d, "verl_grpo_gsm8k", d.name, {"algorithm": {"adv_estimator": "grpo"},
                                             "trainer": {"total_training_steps": c["planned"]}},
              list(train), truncate=truncate)


def w_wandb_openrlhf(c, d, eval_every=0, estimator="reinforce_baseline"):
    train, ev = rows_openrlhf(c, 1, eval_every)
    evd, calls = dict(ev), []
    for s, r in train:
        calls.append((None, {**{"train/" + x: v for x, v in r.items()}, "train/global_step": s}))
        if s in evd:
            calls.append((None, {**{"eval/" + x: v for x, v in evd[s].items()}, "eval/global_step": s}))
    wandb_run(d, "openrlhf_train_ppo", d.name, {"advantage_estimator": estimator}, calls,
              step_metric=[("train/global_step", "train/*"), ("eval/global_step", "eval/*")])


def w_wandb_nemo(c, d, eval_every=0):
    train, ev = rows_nemo(c, eval_every)
    evd = dict(ev)
    wandb_run(d / "logs" / "exp_001", "grpo-dev", d.name, {"grpo": {"max_num_steps": c["planned"]}},
              [(s, {**r, **evd.get(s, {})}) for s, r in train])


def w_tb_openrlhf(c, d, every=1, eval_every=0, critic=False, resume=None, ckpt_every=None):
    """OpenRLHF TensorBoard (train/ and eval/ tags). resume=(ckpt, crash): a second event file from the restarted
    process re-logs ckpt+1..crash; checkpoints ckpt/_actor/global_stepN."""
    train, ev = rows_openrlhf(c, every, eval_every, critic=critic)
    rows = sorted([(s, {"train/" + x: v for x, v in r.items()}) for s, r in train] +
                  [(s, {"eval/" + x: v for x, v in r.items()}) for s, r in ev], key=lambda x: x[0])
    logdir = d / "tensorboard" / d.name
    if not resume:
        tb_rows(logdir / f"events.out.tfevents.{int(T0)}.gpu-node-07.40213.0", rows)
        return
    ckpt, crash = resume
    tb_rows(logdir / f"events.out.tfevents.{int(T0)}.gpu-node-07.40213.0", [x for x in rows if x[0] <= crash])
    noise = np.random.RandomState(c["seed"] + 7)
    redo = [(s, {x: (v + noise.normal(0, 0.01) if x == "train/reward" else v) for x, v in r.items()})
            for s, r in rows if s > ckpt]
    wall = T0 + crash * 30 + 600
    tb_rows(logdir / f"events.out.tfevents.{int(wall)}.gpu-node-07.51877.0", redo, wall0=wall)
    ck = d / "ckpt" / "_actor"
    for k in range(ckpt_every, crash + 1, ckpt_every):
        (ck / f"global_step{k}").mkdir(parents=True, exist_ok=True)
        (ck / f"global_step{k}" / "mp_rank_00_model_states.pt").write_bytes(b"\0" * 16)
    (ck / "latest").write_text(f"global_step{crash - crash % ckpt_every}")


def w_tb_nemo(c, d, eval_every=0, truncate=0):
    train, ev = rows_nemo(c, eval_every)
    tb_rows(d / "logs" / "exp_003" / "tensorboard" / f"events.out.tfevents.{int(T0)}.dgx-a100-12.40213.0",
            sorted(train + ev, key=lambda x: x[0]), truncate=truncate)


def w_console_openrlhf(c, d, eval_every=0, scale=(0, 1), partial=False):
    train, ev = rows_openrlhf(c, 1, eval_every, scale)
    openrlhf_console_log(d / "train_reinforce_pp.log", train, ev, c["planned"], partial_tail=partial)


def w_console_verl(c, d, eval_every=0, critic=False, ckpt_every=None):
    """verl's console (np.float64 reprs, Ray prefixes) and global_step_N checkpoints."""
    train, _ = rows_verl(c, eval_every, critic=critic)
    verl_console_log(d / "verl_ppo_gsm8k.log", train)
    base_dir, n = d / "checkpoints" / "verl_ppo_gsm8k" / "qwen2.5-1.5b-ppo", c["n"]
    for k in range(ckpt_every, n + 1, ckpt_every) if ckpt_every else ():
        (base_dir / f"global_step_{k}" / "actor").mkdir(parents=True, exist_ok=True)
        (base_dir / f"global_step_{k}" / "actor" / "model_world_size_8_rank_0.pt").write_bytes(b"\0" * 16)
    if ckpt_every and n >= ckpt_every:
        (base_dir / "latest_checkpointed_iteration.txt").write_text(str(n - n % ckpt_every))


def w_mlflow_hf(c, d, kind="file", algo="grpo", every=10, eval_every=0, scale=(0, 1)):
    """HF's MLflow callback logs the raw keys, no prefix."""
    train, ev = rows_trl_grpo(c, every, eval_every, scale)
    mlflow_run(d, kind, "trl-" + algo, d.name, sorted(train + ev, key=lambda x: x[0]),
               {"learning_rate": "1e-06", "logging_steps": every, "max_steps": c["planned"], "num_generations": 8})


def w_mlflow_verl(c, d, kind="file", eval_every=0, dapo=False, estimator="grpo"):
    """verl's MLflow logger: '@' is not allowed in MLflow keys, so val-core/.../mean@16 becomes mean_at_16."""
    train, _ = rows_verl(c, eval_every, dapo=dapo)
    mlflow_run(d, kind, "verl_dapo_math" if dapo else "verl_grpo", d.name, train,
               {"algorithm.adv_estimator": estimator, "trainer.total_training_steps": c["planned"]},
               key_fix=lambda k: k.replace("@", "_at_"), sec_per_step=60.0)


def w_trainer_state(c, d, algo="grpo", every=1, eval_every=0, scale=(0, 10)):
    """A top-level trainer_state.json (TRL PPO / RLOO / DPO / online DPO)."""
    opts = {"ppo": dict(scale=scale), "rloo": dict(every=every, eval_every=eval_every, scale=(0, 1)),
            "dpo": dict(every=every, eval_every=eval_every), "online_dpo": dict(every=every)}[algo]
    train, ev = ROWS[algo](c, **opts)
    trainer_state_json(d / "trainer_state.json", train, ev, c["n"], c["planned"], every, eval_steps=eval_every or 500)


def w_mix_trl(c, d, every=10, eval_every=0, ckpt_every=500):
    """One TRL GRPO run as it looks mid-run: checkpoint-N/trainer_state.json every `ckpt_every` steps, TensorBoard
    under runs/, and the console log of the same run (which is ahead of the last checkpoint)."""
    train, ev = rows_trl_grpo(c, every, eval_every, kl=False)
    out = d / "outputs" / "qwen2.5-3b-grpo"
    for k in range(ckpt_every, c["n"] + 1, ckpt_every):
        ck = out / f"checkpoint-{k}"
        trainer_state_json(ck / "trainer_state.json", train, ev, k, c["planned"], every, save_steps=ckpt_every)
        (ck / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 16, "lora_alpha": 32}))
        for f in ("adapter_model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth", "training_args.bin"):
            (ck / f).write_bytes(b"\0" * 16)
    tb = sorted([(s, {tracker_key(x): v for x, v in r.items() if x != "epoch"}) for s, r in train + ev],
                key=lambda x: x[0])
    tb_rows(out / "runs" / "Nov14_06-15-02_gpu-node-03" / f"events.out.tfevents.{int(T0)}.gpu-node-03.40213.0", tb)
    trl_console_log(d / "train.log", train, ev, c["planned"])


def w_plain_jsonl(c, d, every=1, partial=False):
    train, _ = rows_plain(c, every)
    d.mkdir(parents=True, exist_ok=True)
    with (d / "metrics.jsonl").open("w") as fh:
        for s, row in train:
            fh.write(json.dumps({"step": s, **row}) + "\n")
        if partial:  # the loop is writing its next record
            fh.write(json.dumps({"step": train[-1][0] + every, **train[-1][1]})[:57])


def w_plain_csv(c, d, crlf=False):
    train, _ = rows_plain(c)
    d.mkdir(parents=True, exist_ok=True)
    with (d / "train_log.csv").open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\r\n" if crlf else "\n")
        w.writerow(["step", *train[0][1]])
        w.writerows([s, *row.values()] for s, row in train)


(wandb_trl, wandb_verl, wandb_openrlhf, wandb_nemo, tb_openrlhf, tb_nemo, console_openrlhf, console_verl, mlflow_hf,
 mlflow_verl, trainer_state, mix_trl, plain_jsonl, plain_csv) = (kit.writer(w) for w in (
    w_wandb_trl, w_wandb_verl, w_wandb_openrlhf, w_wandb_nemo, w_tb_openrlhf, w_tb_nemo, w_console_openrlhf,
    w_console_verl, w_mlflow_hf, w_mlflow_verl, w_trainer_state, w_mix_trl, w_plain_jsonl, w_plain_csv))


# ================================================================================================== the cases
# Case(name, scenario, format, seed, (steps reached, planned), labels, tags, reasoning)

CASES = [
    # ---------------- healthy: must not be stopped ---------------------------------------------------------------
    Case("trl-grpo-wandb-slow-binary", slow_learner(), wandb_trl(every=10), 1000, (600, 2000), HEALTHY,
         "grpo trl wandb_sdk slow_learner binary_reward",
         "Binary 0/1 accuracy reward averaged over 32 samples climbs slowly from ~0.06 to ~0.2 over 600 of 2000 "
         "steps; noisy but the trend is clearly up, entropy drifts down slowly, lengths stable, no truncation."),
    Case("trl-grpo-wandb-kl-rises-with-reward", kl_with_reward(), wandb_trl(every=5, kl=True), 1001, (500, 1000),
         HEALTHY, "grpo trl wandb_sdk kl_rising beta",
         "beta=0.04 so kl is logged; it grows steadily to ~0.35 while reward rises from 0.25 to ~0.75 and entropy "
         "declines gently. KL rising with reward rising is the model changing and improving - healthy."),
    Case("trl-grpo-wandb-nan-burst-recovers", nan_burst(181, 3), wandb_trl(every=1), 1002, (400, 1000), HEALTHY,
         "grpo trl wandb_sdk nan_burst transient",
         "loss and grad_norm are NaN on steps 181-183 only (overflow steps skipped), then finite again; reward keeps "
         "rising through and after the burst, entropy/length unaffected. A transient, recovered blip."),
    Case("trl-grpo-wandb-resume-overlap", healthy(), wandb_trl(every=10, resume=(500, 600)), 1003, (700, 1500),
         HEALTHY, "grpo trl wandb_sdk resume duplicate_steps",
         "Crashed at 600 and resumed from checkpoint-500: train/global_step 510-600 appears twice in the same W&B run "
         "(_step keeps counting). Both passes show the same rising reward (0.2 -> ~0.6); training is fine."),
    Case("verl-grpo-wandb-still-writing", healthy(), wandb_verl(eval_every=20, truncate=23), 1004, (260, 500),
         HEALTHY, "grpo verl wandb_sdk live truncated_tail",
         "verl GRPO at step 260 of 500, written by the W&B SDK with step=; the .wandb ends mid-record (still "
         "writing). critic/score/mean rises 0.2 -> 0.55, val-core rises every 20 steps, kl_loss small."),
    Case("openrlhf-reinforce-console-signed-reward", healthy(),
         console_openrlhf(eval_every=25, scale=(-1, 1), partial=True), 1005, (250, 600), HEALTHY,
         "reinforce++ openrlhf console reward_-1_1 truncated_tail",
         "OpenRLHF REINFORCE++ console, reward in -1..1 rising from about -0.6 to +0.2, eval pass1 rising every 25 "
         "steps, kl slow growth, truncation ~1%. The last line is half-written (run live). Healthy early run."),
    Case("openrlhf-ppo-tb-resume-log10", healthy(),
         tb_openrlhf(every=10, eval_every=100, critic=True, resume=(1000, 1100), ckpt_every=500), 1006, (1500, 3000),
         HEALTHY, "ppo openrlhf tensorboard resume critic logging_10",
         "OpenRLHF PPO with a critic, logged every 10 steps. Crash at 1100, resume from global_step1000: two event "
         "files overlap on steps 1010-1100. Reward rises and plateaus gently, critic_loss falls, eval improves."),
    Case("openrlhf-grpo-wandb-length-growth", length_growth(), wandb_openrlhf(eval_every=50, estimator="group_norm"),
         1007, (400, 800), HEALTHY, "grpo openrlhf wandb_sdk length_growth reasoning",
         "Reasoning GRPO: response length grows 450 -> 1500 tokens (cap 4096, truncation stays ~1-2%) while reward "
         "rises 0.3 -> 0.65 and eval follows. Longer chains of thought with better reward are expected."),
    Case("nemo-grpo-tb-validation", healthy(), tb_nemo(eval_every=10, truncate=9), 1008, (300, 600), HEALTHY,
         "grpo nemo-rl tensorboard truncated_tail",
         "NeMo-RL GRPO: train/reward 0.2 -> 0.6, validation/accuracy every 10 steps rising, kl_penalty small, "
         "approx_entropy slow decline, token_mult_prob_error ~1.003. Event file ends in a partial record (live)."),
    Case("nemo-grpo-wandb-noisy-binary", noisy_binary(), wandb_nemo(eval_every=20), 1009, (200, 500), HEALTHY,
         "grpo nemo-rl wandb_sdk binary_reward noisy",
         "Binary reward averaged over 16 samples per step: very noisy (steps jump by +-0.15) but the mean climbs "
         "0.3 -> ~0.45, validation accuracy rises. Noise is not a failure."),
    Case("mlflow-file-trl-grpo-ckpt-spikes", periodic_spikes(100), mlflow_hf(every=10, eval_every=100), 1010,
         (1000, 2000), HEALTHY, "grpo trl mlflow_file periodic_spikes eval_every",
         "HF MLflow callback (raw keys) in a file store. grad_norm, step_time and loss spike every 100 steps (eval + "
         "checkpoint save share the step) and come straight back; reward and eval_reward rise steadily."),
    Case("mlflow-db-verl-dapo-long", healthy(r0=0.1, r1=0.42, tau=1200),
         mlflow_verl(kind="sqlite", eval_every=100, dapo=True), 1011, (3000, 5000), HEALTHY,
         "dapo verl mlflow_db long_run at_key_rewrite",
         "verl DAPO in mlflow.db (val-core/.../mean@16 stored as mean_at_16). Accuracy reward rises slowly "
         "0.1 -> 0.4 over 3000 steps, validation follows, entropy and length stable. Slow but healthy."),
    Case("mlflow-db-trl-rloo-signed-reward", healthy(), mlflow_hf(kind="sqlite", algo="rloo", scale=(-1, 1)), 1012,
         (800, 1600), HEALTHY, "rloo trl mlflow_db reward_-1_1 kl_present",
         "TRL RLOO (GRPO-style keys, beta=0.05 so kl is logged) with a reward in -1..1: climbs from -0.6 to +0.3, "
         "kl grows slowly to ~0.03."),
    Case("trl-ppo-state-score-0-10", kl_with_reward(), trainer_state(algo="ppo"), 1013, (300, 600), HEALTHY,
         "ppo trl trainer_state reward_0_10 critic",
         "TRL PPO (objective/* keys, lr not learning_rate) with a reward-model score on 0..10: objective/scores "
         "rises 2.5 -> ~7.5, objective/kl grows moderately, loss/value_avg falls."),
    Case("trl-rloo-state-log25-long", noisy_binary(), trainer_state(algo="rloo", every=25), 1014, (2500, 5000),
         HEALTHY, "rloo trl trainer_state logging_25 binary_reward",
         "RLOO logged every 25 steps, binary reward over small groups (noisy). The average climbs from 0.3 to ~0.5; "
         "kl, entropy and length behave. Healthy and unfinished."),
    Case("trl-online-dpo-state", dpo(), trainer_state(algo="online_dpo", every=10), 1015, (400, 1000), HEALTHY,
         "online_dpo trl trainer_state",
         "Online DPO: judge/RM scores (objective/scores) rise, margins and preference accuracy rise, kl grows "
         "moderately. Nothing wrong."),
    Case("trl-dpo-state-eval", dpo(), trainer_state(algo="dpo", every=10, eval_every=100), 1016, (600, 1200),
         HEALTHY, "dpo trl trainer_state eval_every",
         "Offline DPO: loss falls from 0.69, rewards/margins rise to ~2, train accuracy ~0.8, eval accuracy rises "
         "to ~0.7 and eval_loss falls at every eval. Healthy, half-way."),
    Case("verl-ppo-console-critic", healthy(r0=0.1, r1=0.6), console_verl(eval_every=25, critic=True, ckpt_every=100),
         1017, (300, 600), HEALTHY, "ppo verl console critic numpy2_repr checkpoints",
         "verl PPO (GAE) console with np.float64(...) values and Ray prefixes: score rises 0.1 -> 0.55, "
         "vf_explained_var rises to ~0.7, vf_loss falls, val-core rises."),
    Case("plain-jsonl-long-12k", healthy(r0=0.1, r1=0.5, tau=5000, kl_end=0.08), plain_jsonl(every=10), 1018,
         (12000, 24000), HEALTHY, "plain_script jsonl long_run own_names",
         "Home-made loop logging avg_reward / mean_len / kl_div every 10 steps for 12k steps: reward still climbing "
         "slowly (0.1 -> ~0.43), kl_div modest."),
    Case("plain-csv-short-30", healthy(r0=0.3, r1=0.5, noise=0.06), plain_csv(crlf=True), 1019, (30, 60), HEALTHY,
         "plain_script csv short_run own_names crlf",
         "Only 30 steps in (of a planned 60+): avg_reward rises from ~0.3 to ~0.5 in the first ~15 steps and is "
         "noisy-flat since; kl_div grows from 0.01 to ~0.03, tiny. Far too early to call a plateau or drift."),
    Case("mix-trl-ckpt-tb-console", healthy(tau=400), mix_trl(every=10, eval_every=250, ckpt_every=500), 1020,
         (1250, 3000), HEALTHY, "grpo trl mix trainer_state tensorboard console checkpoints_500",
         "One TRL run seen three ways: checkpoint-500/1000 trainer_state (history stops at 1000), TensorBoard and "
         "the console up to 1250. Reward 0.2 -> 0.62 and still rising slowly; eval_reward rises."),
    Case("verl-reinforcepp-mlflow-file", healthy(r0=0.15, r1=0.55),
         mlflow_verl(eval_every=20, estimator="reinforce_plus_plus"), 1021, (400, 800), HEALTHY,
         "reinforce++ verl mlflow_file at_key_rewrite",
         "verl REINFORCE++ in an MLflow file store (nested metric dirs): score rises 0.15 -> 0.5, validation every "
         "20 steps rising, entropy and kl_loss well behaved."),
    Case("verl-grpo-wandb-converged", converged_early(), wandb_verl(eval_every=40), 1022, (480, 500), converged(),
         "grpo verl wandb_sdk converged",
         "Reward and validation reached ~0.72 by step ~150 and have been flat since, 480 of 500 steps; nothing is "
         "degrading. The weights now are as good as any (stop); letting it finish is harmless; no rollback."),

    # ---------------- failing, stalled or done -------------------------------------------------------------------
    Case("trl-grpo-wandb-kl-up-reward-flat", kl_drift(200), wandb_trl(every=10, kl=True, eval_every=100), 1023,
         (900, 2000), rollback(200, 500, 300), "grpo trl wandb_sdk kl_drift reward_plateau eval_decline",
         "Reward plateaus at ~0.45 by step ~200 and stays flat for 700 steps while kl climbs from 0.02 to ~0.7. The "
         "held-out eval (sd ~0.008) does not stay flat: ~0.40 from 200 to 500, then down to ~0.37 by 900. Not a "
         "harmless drift: a better model is behind, go back to 200-500 (no checkpoints here: name a step)."),
    Case("verl-grpo-wandb-peak-decline", peak_decline(300), wandb_verl(eval_every=50), 1024, (700, 1400),
         rollback(250, 320, 380), "grpo verl wandb_sdk peak_then_decline",
         "Score peaks at ~0.68 around step 300 and declines slowly to ~0.45 by 700; validation peaks at 300 too and "
         "follows down. The model was best at ~250-320: roll back there (no checkpoints in the folder)."),
    Case("mlflow-file-trl-grpo-eval-peak", eval_peak(400), mlflow_hf(every=10, eval_every=50), 1025, (800, 1500),
         rollback(350, 420, 500), "grpo trl mlflow_file eval_decline overfitting",
         "Train reward keeps rising to ~0.8 but eval_reward peaks at ~0.53 at step 400 and falls to ~0.33 by 800: "
         "the policy overfits the training prompts. Roll back to the eval peak (~350-420)."),
    Case("openrlhf-console-entropy-collapse", entropy_collapse(150), console_openrlhf(eval_every=50), 1026,
         (400, 800), rollback(130, 170, 170), "grpo openrlhf console entropy_collapse",
         "entropy_loss falls from ~0.5 to ~0.01 between steps 150 and 250; group_reward_std goes to ~0, reward stops "
         "improving and drifts down, eval falls. The policy became deterministic: go back to ~130-170."),
    Case("nemo-tb-entropy-blowup", entropy_blowup(180), tb_nemo(eval_every=10), 1027, (300, 600),
         rollback(150, 180, 185), "grpo nemo-rl tensorboard entropy_blow_up collapse",
         "approx_entropy jumps from ~0.45 to ~6.5 from step 180, reward and validation accuracy collapse, "
         "generations hit the cap (truncation_rate ~0.9), kl_penalty explodes. Degenerate output; restore a step in "
         "150-180."),
    Case("mlflow-db-verl-length-explosion", length_explosion(250), mlflow_verl(kind="sqlite", eval_every=25), 1028,
         (500, 1000), rollback(200, 260, 270), "grpo verl mlflow_db length_explosion truncation",
         "response_length/mean grows from ~650 to ~4000 (cap 4096) after 250, clip_ratio rises to ~0.8, score and "
         "validation fall, step time x5. Roll back to 200-260, before the lengths took off."),
    Case("plain-csv-length-collapse", length_collapse(200), plain_csv(), 1029, (400, 800), rollback(150, 210, 215),
         "plain_script csv own_names length_collapse",
         "mean_len collapses from ~250 to ~6 tokens between 200 and 280 and avg_reward falls from ~0.55 to ~0.05: "
         "the model learned to answer nearly nothing. Go back to 150-210."),
    Case("trl-grpo-wandb-truncation-cap", truncation(300), wandb_trl(every=10), 1030, (600, 1200),
         rollback(250, 320, 340), "grpo trl wandb_sdk truncation length_cap",
         "completions/mean_length climbs to ~1010 against max_completion_length 1024 and clipped_ratio rises from 1% "
         "to ~70% after step 300 while reward drops. Truncated answers get no reward: roll back to 250-320 and raise "
         "the cap or penalise length."),
    Case("mix-trl-reward-hacking-format", format_hack(1100), mix_trl(every=10, eval_every=250, ckpt_every=500), 1031,
         (2000, 3000), rollback(900, 1120, 1200), "grpo trl mix reward_hacking component checkpoints_500",
         "Total reward keeps rising, but only through rewards/format_reward (-> 1.0); rewards/accuracy_reward falls "
         "from ~0.58 to ~0.3 after step 1100 and eval_reward falls with it. Hacking the format term: roll back to "
         "checkpoint-1000 (accuracy at its best from ~900 to ~1120)."),
    Case("verl-ppo-console-value-divergence", value_divergence(220),
         console_verl(eval_every=25, critic=True, ckpt_every=100), 1032, (400, 800), rollback(180, 225, 240),
         "ppo verl console critic value_divergence checkpoints",
         "critic/vf_loss goes from ~0.1 to ~40, critic/vf_explained_var drops from ~0.7 to about -2.5 from step 220, "
         "critic grad norm explodes and score/validation decline: the value function diverged. Roll back to "
         "global_step_200."),
    Case("trl-ppo-state-value-divergence", value_divergence(300), trainer_state(algo="ppo"), 1033, (500, 1000),
         rollback(250, 305, 320), "ppo trl trainer_state value_divergence reward_0_10",
         "loss/value_avg explodes (0.1 -> ~40) and val/clipfrac_avg saturates after step 300, then objective/scores "
         "falls from ~5.5 to ~2.5. Critic diverged; go back to 250-300."),
    Case("trl-dpo-state-overfit", dpo(overfit_at=350), trainer_state(algo="dpo", every=10, eval_every=50), 1034,
         (1000, 2000), rollback(300, 400, 450), "dpo trl trainer_state overfitting eval_decline",
         "Train rewards/margins keep growing (to ~11) and train accuracy -> ~1.0, while eval_rewards/accuracies peaks "
         "~0.7 around 300-400 then drops to ~0.58 and eval_loss rises above its start. Classic DPO overfitting: take "
         "the eval peak."),
    Case("openrlhf-wandb-nan-divergence", nan_divergence(320), wandb_openrlhf(eval_every=50), 1035, (500, 1000),
         rollback(260, 305, 305), "grpo openrlhf wandb_sdk nan divergence",
         "actor_grad_norm grows 40x over steps 305-319, then policy_loss, grad norm, kl and entropy are NaN from 320 "
         "on, reward drops to ~0.01 and every response hits the cap. The run is dead: roll back to 260-305."),
    Case("nemo-tb-identical-rewards", no_signal(), tb_nemo(eval_every=10), 1036, (60, 120), stop(1),
         "grpo nemo-rl tensorboard setup_failure no_signal",
         "train/reward is exactly 0.0 on every step from step 1, baseline_reward/pct_0 = 100, loss and grad_norm 0, "
         "kl 0: the reward function never fires (setup bug). Nothing to learn from; stop and fix it."),
    Case("trl-rloo-state-saturated", saturated(40), trainer_state(algo="rloo", every=10), 1037, (400, 800), stop(40),
         "rloo trl trainer_state saturation no_signal",
         "Reward hits 1.0 by step ~40 and stays exactly 1.0 with reward_std 0 and frac_reward_zero_std 1.0 for 360 "
         "steps; gradients are zero. The task is too easy - nothing left to learn. Stop."),
    Case("mlflow-db-trl-grpo-late-collapse", late_collapse(4300), mlflow_hf(kind="sqlite", every=10, eval_every=250),
         1038, (5000, 6000), rollback(3500, 4290, 4310), "grpo trl mlflow_db late_collapse long_run",
         "Healthy for 4300 steps (reward ~0.75, eval ~0.7), then reward falls to ~0.1 within ~30 steps with an "
         "entropy and kl jump and lengths at the cap. Sudden late collapse: roll back to just before 4300."),
    Case("plain-jsonl-kl-explosion-log25", kl_explosion(1200), plain_jsonl(every=25), 1039, (2000, 4000),
         rollback(1000, 1250, 1350), "plain_script jsonl own_names kl_blow_up logging_25",
         "kl_div climbs from ~0.05 to ~5 after step 1200 while avg_reward falls from ~0.5 to ~0.2. Drift that costs "
         "reward: roll back to 1000-1250."),
    Case("verl-dapo-mlflow-file-entropy-collapse", entropy_collapse(250), mlflow_verl(eval_every=50, dapo=True), 1040,
         (600, 1200), rollback(200, 265, 270), "dapo verl mlflow_file entropy_collapse",
         "actor/entropy collapses to ~0.01 after step 250, more batches have zero-std groups (num_gen_batches "
         "rises), score drifts down and validation drops. Go back to 200-265."),
]


def write_run(case, folder):
    curves = case.scenario(np.random.RandomState(case.seed), case.reached, case.planned)
    curves["seed"] = case.seed
    folder.mkdir(parents=True, exist_ok=True)
    case.write(curves, folder)
    print(f"wrote {case.name}")


if __name__ == "__main__":
    kit.build(HERE, "make_holdout2.py", "holdout2.yaml", "holdout2-", "holdout2",
              "# Second independent holdout: runs written by evals/holdout2/make_holdout2.py (regenerate with it).\n"
              "# Labels: what a practitioner should do with each run (DESIGN.md decision contract).\n",
              CASES, write_run)
