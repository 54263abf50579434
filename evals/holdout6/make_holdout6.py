#!/usr/bin/env python
"""Holdout set 6: 29 hand-built RL post-training runs in the frameworks' and trackers' own on-disk layouts, with labels.

    .venv/bin/python evals/holdout6/make_holdout6.py      # writes runs/ (gitignored) and holdout6.yaml

Written apart from the assessor (nothing here imports it), its judges and the generators of holdouts 1-5 (only their
case names and tags were read, to avoid repeating shapes). Labels follow DESIGN.md's decision contract.

Curve language: each case gives knots (step, value) per signal; a signal is the linear interpolation of its knots
smoothed by a Gaussian of width `sm` steps (0 keeps jumps). Noise model: the training reward comes from simulated
groups (P prompts x G samples; per-prompt logit offsets around the true success rate; binary rewards), so reward,
reward spread and zero-std groups agree; continuous reward-model scores get Gaussian batch noise; the other signals get
AR(1) noise (multiplicative for positive scales, additive otherwise). Held-out evals are binomial draws over n
problems. Loggers that log every k steps get the mean of the k per-step values (TRL) or the current step (OpenRLHF).
Deterministic: one fixed seed per case, fixed wall clocks, fixed run ids (the W&B SDK stamps its own folder names).

Shapes new here: a KL that rises and plateaus under beta (TRL 0.15 key spelling), a multistep LR decay that flattens
the reward, a verl JSONL overwritten on resume (history only in checkpoints), verl 0.3 spellings with a slow entropy
decline, legacy TRL PPO (<=0.11) with an adaptive KL controller, an MLflow store with duplicated steps after a resume,
a small-eval-set last-point dip, DAPO clip-higher binding steadily, a curriculum that pins the train reward while the
eval rises (Trackio database), a slow fall after a peak, an eval that peaks early as train reward keeps rising, reward 0
on most steps, a format reward rising over a task floor, an eval that never moves, RM over-optimisation with growing
length, entropy blow-up in TF2-style tensor scalars, KL explosion from a train/inference mismatch, a finished run whose
best checkpoint is mid-run, a best checkpoint deleted by save_total_limit, a resume that silently restarted from the
base weights, an LLM judge gamed while exact match falls, pass@k narrowing with a flat pass@1, a 20,000-step slow
decline in W&B panel CSVs, a drifting policy ratio, an LR schedule that reached 0 early, and a reward-server outage.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sqlite3
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import holdout_kit as kit  # noqa: E402
from holdout_kit import HEALTHY, Case, rollback, stop  # noqa: E402

WALL0 = 1_748_000_000.0  # fixed clock (May 2025)


# ------------------------------------------------------------------------------------------------ curves and noise

def curve(knots, T, sm):
    s = np.arange(T + 1, dtype=float)
    xs, ys = zip(*knots, strict=False)
    out = np.empty(T + 1)
    # piecewise linear, allowing a repeated step for a jump
    for i in range(len(knots) - 1):
        a, va, b, vb = xs[i], ys[i], xs[i + 1], ys[i + 1]
        if b == a:
            continue
        m = (s >= a) & (s <= b)
        out[m] = va + (vb - va) * (s[m] - a) / (b - a)
    out[s < xs[0]] = ys[0]
    out[s >= xs[-1]] = ys[-1]
    if sm > 0:
        w = int(3 * sm)
        k = np.exp(-0.5 * (np.arange(-w, w + 1) / sm) ** 2)
        k /= k.sum()
        out = np.convolve(np.pad(out, w, mode="edge"), k, mode="valid")
    return out


def ar1(rng, n, phi, sd):
    e = rng.normal(0, sd * math.sqrt(1 - phi ** 2), n)
    x = np.empty(n)
    x[0] = rng.normal(0, sd)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


def logit(p):
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


DEFAULTS = {  # signal: (knots, noise kind, noise sd, AR phi)
    "kl": ([(0, 0.0), (1, 0.0)], "mul", 0.12, 0.5),
    "ent": ([(0, 0.45), (1, 0.45)], "add", 0.012, 0.6),
    "len": ([(0, 300), (1, 300)], "mul", 0.04, 0.6),
    "trunc": ([(0, 0.01), (1, 0.01)], "add", 0.006, 0.3),
    "gn": ([(0, 0.25), (1, 0.25)], "mul", 0.3, 0.2),
    "lr": ([(0, 1e-6), (1, 1e-6)], None, 0, 0),
    "clip": ([(0, 0.0), (1, 0.0)], "mul", 0.15, 0.3),
}


class Sim:
    """Per-step true curves, noisy per-step metrics (index = step) and held-out evals."""

    def __init__(self, rng, T, spec, planned=None):
        self.T, self.planned, self.spec = T, planned, spec
        sm = spec.get("sm", max(2.0, T / 60))
        n = T + 1
        self.true, self.a = {}, {}
        sigs = dict(DEFAULTS)
        for k, v in spec.items():
            if k in sigs:
                d = sigs[k]
                sigs[k] = (v, d[1], d[2], d[3])
            elif isinstance(v, list) and v and isinstance(v[0], tuple):
                sigs[k] = (v, "add", spec.get("noise", {}).get(k, 0.0), 0.4)
        for k, (kn, kind, sd, phi) in sigs.items():
            sd = spec.get("noise", {}).get(k, sd)
            t = curve(kn, T, spec.get("sm_" + k, sm))
            self.true[k] = t
            if kind == "mul" and sd:
                self.a[k] = t * np.exp(ar1(rng, n, phi, sd))
            elif kind == "add" and sd:
                self.a[k] = t + ar1(rng, n, phi, sd)
            else:
                self.a[k] = t.copy()
        for k in ("ent", "len", "trunc", "gn", "clip", "kl"):
            self.a[k] = np.maximum(self.a[k], 0.0)
        self.a["trunc"] = np.minimum(self.a["trunc"], 1.0)
        if "lenmax" in spec:
            self.a["len"] = np.minimum(self.a["len"], spec["lenmax"])
        P, G, tau = spec.get("P", 32), spec.get("G", 8), spec.get("tau", 1.3)
        self.P, self.G = P, G
        # binary rewards from simulated groups: P prompts x G samples per step
        names = (["acc"] if "acc" in spec else []) + list(spec.get("comps", {}))
        for name in names:
            kn = spec["acc"] if name == "acc" else spec["comps"][name]
            t = curve(kn, T, spec.get("sm_" + name, sm))
            self.true[name] = t
            drift = ar1(rng, n, 0.7, spec.get("batch_sd", 0.15))
            z = rng.normal(0, tau, (n, P))
            p = 1 / (1 + np.exp(-(logit(t)[:, None] + drift[:, None] + z)))
            p[t <= 0] = 0.0
            k = rng.binomial(G, p)
            m = k.sum(1) / (P * G)
            N = P * G
            scale = spec.get("scales", {}).get(name, 1.0)
            self.a[name] = m * scale
            self.a[name + "_std"] = np.sqrt(m * (1 - m) * N / (N - 1)) * scale
            self.a[name + "_zs"] = np.mean((k == 0) | (k == G), axis=1)
        if "score" in spec:  # continuous reward-model score
            t = curve(spec["score"], T, sm)
            self.true["score"] = t
            sd = spec.get("score_sd", 1.0)
            self.a["score"] = t + rng.normal(0, sd / math.sqrt(P * G), n) + ar1(rng, n, 0.6, sd * 0.05)
            self.a["score_std"] = sd * np.exp(ar1(rng, n, 0.5, 0.05))
        self.a["loss"] = rng.normal(0, 0.004, n) + self.a["kl"] * spec.get("beta", 0.0)
        if "zero_loss_from" in spec:
            self.a["loss"][spec["zero_loss_from"]:] = 0.0
        self.ev = {}
        for name, (every, nprob, kn) in spec.get("evals", {}).items():
            t = curve(kn, T, spec.get("sm_" + name, sm))
            self.true[name] = t
            steps = list(range(spec.get("eval0", 0), T + 1, every))
            if steps and steps[0] == 0 and not spec.get("eval_at_0", True):
                steps = steps[1:]
            vals = {}
            for s in steps:
                vals[s] = rng.binomial(nprob, np.clip(t[s], 0, 1)) / nprob
            for s, dv in spec.get("eval_bump", {}).get(name, {}).items():
                vals[s] = round(vals[s] + dv, 6)
            self.ev[name] = vals

    def reward(self):
        """Total training reward per step: sum of components if any, else the task reward or the RM score."""
        if "score" in self.a:
            return self.a["score"]
        if self.spec.get("comps"):
            tot = sum(self.a[c] for c in self.spec["comps"])
            return tot + (self.a["acc"] if "acc" in self.spec else 0)
        return self.a["acc"]

    def reward_std(self):
        if "score" in self.a:
            return self.a["score_std"]
        return self.a["acc_std"] if "acc" in self.a else self.a[next(iter(self.spec["comps"])) + "_std"]

    def zero_std(self):
        if "acc_zs" in self.a:
            return self.a["acc_zs"]
        return self.a[next(iter(self.spec["comps"])) + "_zs"]


def win(arr, s, k):
    """Mean over the logging window (s-k, s] (TRL averages every value since the last log)."""
    lo = max(1, s - k + 1)
    return float(np.mean(arr[lo:s + 1]))


def r6(v):
    return float(f"{v:.6g}") if v is not None and math.isfinite(v) else v


# ----------------------------------------------------------------------------------------------- TRL (HF Trainer)

def ver(v):
    return tuple(int(x) for x in v.split("."))


def trl_row(sim, s, k, v="0.23", beta=0.0, fns=None, steps_per_epoch=1000, extra=None):
    """One TRL GRPO log_history train row in the key spelling of TRL version v."""
    V = ver(v)
    a = sim.a
    row = {"loss": round(win(a["loss"], s, k), 4), "grad_norm": r6(a["gn"][s]), "learning_rate": r6(a["lr"][s])}
    fns = fns or {"accuracy_reward": "acc"}
    if V < (0, 17):
        row["completion_length"] = r6(win(a["len"], s, k))
        for fn, sig in fns.items():
            row[f"rewards/{fn}"] = r6(win(a[sig], s, k))
    else:
        L = win(a["len"], s, k)
        tr = win(a["trunc"], s, k)
        row.update({"completions/mean_length": r6(L), "completions/min_length": r6(L * 0.35),
                    "completions/max_length": r6(min(L * 2.1, sim.spec.get("cap", 1024))),
                    "completions/clipped_ratio": r6(tr),
                    "completions/mean_terminated_length": r6(L * (1 - 0.6 * tr)),
                    "completions/min_terminated_length": r6(L * 0.35),
                    "completions/max_terminated_length": r6(min(L * 2.0, sim.spec.get("cap", 1024)))})
        for fn, sig in fns.items():
            row[f"rewards/{fn}/mean"] = r6(win(a[sig], s, k))
            row[f"rewards/{fn}/std"] = r6(win(a[sig + "_std"], s, k)) if sig + "_std" in a else r6(0.2)
    row["reward"] = r6(win(sim.reward(), s, k))
    row["reward_std"] = r6(win(sim.reward_std(), s, k))
    if V >= (0, 16):
        row["num_tokens"] = float(int(s * sim.P * sim.G * (np.mean(a["len"][1:s + 1]) + 120)))
    if V >= (0, 18):
        row["frac_reward_zero_std"] = r6(win(sim.zero_std(), s, k))
    if V < (0, 16) or beta:
        row["kl"] = r6(win(a["kl"], s, k))
    if V >= (0, 20):
        row["entropy"] = r6(win(a["ent"], s, k))
    if V == (0, 16):
        row["clip_ratio"] = r6(win(a["clip"], s, k))
    elif V >= (0, 17):
        c = win(a["clip"], s, k)
        hi = sim.spec.get("clip_hi_share", 0.5)
        row.update({"clip_ratio/low_mean": r6(c * (1 - hi)), "clip_ratio/low_min": r6(c * (1 - hi) * 0.3),
                    "clip_ratio/high_mean": r6(c * hi), "clip_ratio/high_max": r6(min(1, c * hi * 2.5)),
                    "clip_ratio/region_mean": r6(c)})
    if V >= (0, 26):
        row["step_time"] = r6(8 + win(a["len"], s, k) * 0.02)
    if extra:
        row.update(extra(sim, s, k))
    row["epoch"] = round(s / steps_per_epoch, 4)
    row["step"] = s
    return row


def trl_eval_row(sim, s, v, fns_eval, steps_per_epoch):
    row = {}
    for key, name in fns_eval.items():
        row[key] = sim.ev[name][s]
    row.update({"eval_loss": round(float(sim.a["loss"][s]), 4), "eval_runtime": 61.3, "eval_samples_per_second": 8.16,
                "eval_steps_per_second": 0.26, "epoch": round(s / steps_per_epoch, 4), "step": s})
    return row


def trl_history(sim, k, v, beta=0.0, fns=None, evals=None, spe=1000, upto=None, extra=None, final=False):
    upto = upto or sim.T
    hist = []
    ev_steps = set()
    if evals:
        ev_steps = set(sim.ev[next(iter(evals.values()))])
    for s in range(k, upto + 1, k):
        hist.append(trl_row(sim, s, k, v, beta, fns, spe, extra))
        if s in ev_steps:
            hist.append(trl_eval_row(sim, s, v, evals, spe))
    if final:
        hist.append({"epoch": round(upto / spe, 4), "step": upto, "total_flos": 0.0,
                     "train_loss": round(float(np.mean(sim.a["loss"][1:])), 6),
                     "train_runtime": round(upto * 41.7, 2), "train_samples_per_second": 1.534,
                     "train_steps_per_second": 0.024})
    return hist


def trl_dir(sim, d, *, v, k, max_steps, save_steps, eval_steps=None, beta=0.0, fns=None, evals=None, spe=1000,
            top=True, ckpts=(), extra=None, finished=False):
    """HF Trainer output dir: optional top-level trainer_state.json and checkpoint-N/ with their own state."""
    def state(upto, done):
        h = trl_history(sim, k, v, beta, fns, evals, spe, upto, extra, final=done)
        return kit.trainer_state(h, upto, max_steps, k, save_steps, eval_steps, round(upto / spe, 4),
                                 num_train_epochs=max(1, math.ceil(max_steps / spe)), training_stop=done)
    for c in ckpts:
        cd = d / f"checkpoint-{c}"
        kit.dump_json(cd / "trainer_state.json", state(c, finished and c == sim.T))
        (cd / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 16, "lora_alpha": 32}) + "\n")
    if top:
        kit.dump_json(d / "trainer_state.json", state(sim.T, finished))


def tqdm_bar(i, total, secs):
    pct = int(100 * i / total)
    el = int(i * secs)
    rem = int((total - i) * secs)
    def f(t):
        return f"{t // 3600:02d}:{t % 3600 // 60:02d}:{t % 60:02d}" if t >= 3600 else f"{t // 60:02d}:{t % 60:02d}"
    return f"{pct:3d}%|{'█' * (pct // 10):<10}| {i}/{total} [{f(el)}<{f(rem)}, {secs:.2f}s/it]"


def trl_console(sim, d, *, v, k, total, beta=0.0, fns=None, evals=None, spe=1000, header="", ckpts=(),
                save_steps=None, finished=False, fname="train.log", extra=None):
    """TRL console: tqdm progress (carriage returns) with the Trainer's printed dict lines."""
    lines = [header.rstrip("\n")] if header else []
    hist = trl_history(sim, k, v, beta, fns, evals, spe, sim.T, extra, final=finished)
    bar = []
    by_step = {}
    for row in hist:
        by_step.setdefault(row["step"], []).append(row)
    secs = 41.7
    for s in range(1, sim.T + 1):
        bar.append(tqdm_bar(s, total, secs))
        if s in by_step:
            lines.append("\r".join(bar))
            bar = []
            for row in by_step[s]:
                shown = {kk: vv for kk, vv in row.items() if kk not in ("step", "total_flos")}
                if "eval_loss" in row:
                    lines.append("\r".join(tqdm_bar(i, 32, 1.9) for i in range(1, 33)))
                lines.append(repr(shown))
    if bar:
        lines.append("\r".join(bar))
    d.mkdir(parents=True, exist_ok=True)
    (d / fname).write_text("\n".join(lines) + "\n", encoding="utf-8")
    if ckpts:
        trl_dir(sim, d, v=v, k=k, max_steps=total, save_steps=save_steps, beta=beta, fns=fns, evals=evals, spe=spe,
                top=False, ckpts=ckpts, extra=extra, finished=finished)


# --------------------------------------------------------------------------------------------------------- verl

def verl_metrics(sim, s, *, old=False, ppo=False, rm=False, kl_loss=True, val=None):
    a = sim.a
    sc = sim.reward()[s]
    L = a["len"][s]
    cap = sim.spec.get("cap", 1024)
    m = {}
    if ppo:
        m.update({"critic/vf_loss": r6(0.05 + 0.3 * np.exp(-s / 60) + abs(np.random.default_rng(s).normal(0, .01))),
                  "critic/vf_clipfrac": r6(0.02), "critic/vpred_mean": r6(sc * 0.8),
                  "critic/grad_norm": r6(a["gn"][s] * 3), "critic/lr": 1e-5,
                  "critic/values/mean": r6(sc * 0.8), "critic/values/max": r6(sc * 0.8 + 2),
                  "critic/values/min": r6(sc * 0.8 - 2),
                  "critic/vf_explained_var": r6(float(np.clip(a["ev_var"][s], -1, 1)) if "ev_var" in a else 0.5)})
    ent_key = "actor/entropy_loss" if old else "actor/entropy"
    m.update({"actor/pg_loss": r6(a["loss"][s] * 3), "actor/pg_clipfrac": r6(a["clip"][s]),
              "actor/ppo_kl": r6(a["clip"][s] * 0.01), ent_key: r6(a["ent"][s]),
              "actor/grad_norm": r6(a["gn"][s]), "actor/lr": r6(a["lr"][s])})
    if not old:
        m["actor/pg_clipfrac_lower"] = 0.0
    if kl_loss:
        m["actor/kl_loss"] = r6(a["kl"][s])
        m["actor/kl_coef"] = sim.spec.get("beta", 0.001)
    if rm:
        m["actor/reward_kl_penalty"] = r6(a["kl"][s])
        m["actor/reward_kl_penalty_coeff"] = sim.spec.get("beta", 0.001)
    rew = sc - (sim.spec.get("beta", 0.0) * a["kl"][s] if rm else 0)
    smax = 1.0 if not rm else sc + 3.1
    smin = 0.0 if not rm else sc - 3.4
    m.update({"critic/score/mean": r6(sc), "critic/score/max": r6(smax), "critic/score/min": r6(smin),
              "critic/rewards/mean": r6(rew), "critic/rewards/max": r6(smax), "critic/rewards/min": r6(smin),
              "critic/advantages/mean": r6(0.0003), "critic/advantages/max": 2.47, "critic/advantages/min": -2.47,
              "critic/returns/mean": r6(rew * (0.9 if ppo else 0.0) + 0.0004), "critic/returns/max": 2.47,
              "critic/returns/min": -2.47,
              "response_length/mean": r6(L), "response_length/max": float(min(cap, int(L * 2.6))),
              "response_length/min": float(int(L * 0.3)), "response_length/clip_ratio": r6(a["trunc"][s]),
              "prompt_length/mean": 104.3, "prompt_length/max": 211.0, "prompt_length/min": 61.0,
              "prompt_length/clip_ratio": 0.0})
    gen = 20 + L * 0.045
    step = gen + 14 + L * 0.01
    if old:
        m.update({"timing_s/gen": r6(gen), "timing_s/ref": 4.1, "timing_s/adv": 0.09, "timing_s/update_actor": r6(11 + L * .01),
                  "timing_s/step": r6(step)})
    else:
        m.update({"timing_s/gen": r6(gen), "timing_s/reward": 0.6, "timing_s/old_log_prob": 3.2, "timing_s/ref": 3.3,
                  "timing_s/adv": 0.08, "timing_s/update_actor": r6(7 + L * 0.01), "timing_s/step": r6(step),
                  "timing_per_token_ms/gen": r6(gen * 1000 / (L * 512)),
                  "perf/total_num_tokens": int((L + 104) * 512), "perf/time_per_step": r6(step),
                  "perf/throughput": r6((L + 104) * 512 / step / 8), "perf/max_memory_allocated_gb": 61.2,
                  "perf/max_memory_reserved_gb": 70.4, "perf/cpu_memory_used_gb": 96.3})
        if ppo:
            m["timing_s/values"] = 3.4
            m["timing_s/update_critic"] = 6.2
        m["training/global_step"] = s
        m["training/epoch"] = 0
    if val:
        m.update(val)
    return m


def verl_val(sim, s, keys):
    """keys: {verl key: eval name}; returns the row's validation entries if s is an eval step."""
    out = {}
    for key, name in keys.items():
        if s in sim.ev[name]:
            out[key] = sim.ev[name][s]
    return out


def np_repr(v):
    if isinstance(v, int):
        return f"np.int64({v})"
    return f"np.float64({v!r})"


def verl_console(sim, d, *, old=False, np2=True, val_keys=None, ckpt_every=None, proj="verl_grpo", exp="exp",
                 ppo=False, rm=False, kl_loss=True, noise_lines=True):
    lines = ["(TaskRunner pid=41877) Using dataset class: RLHFDataset",
             "(TaskRunner pid=41877) Size of train dataloader: 233, Size of val dataloader: 1",
             f"(TaskRunner pid=41877) Total training steps: {sim.planned or sim.T}"]
    val_keys = val_keys or {}
    fmt = np_repr if np2 else repr
    v0 = verl_val(sim, 0, val_keys)
    if v0:
        lines.append("(TaskRunner pid=41877) step:0 - " + " - ".join(f"{k}:{fmt(v)}" for k, v in v0.items()))
    for s in range(1, sim.T + 1):
        m = verl_metrics(sim, s, old=old, ppo=ppo, rm=rm, kl_loss=kl_loss, val=verl_val(sim, s, val_keys))
        if noise_lines and s % 37 == 0:
            lines.append("(WorkerDict pid=42210) INFO 05-23 10:11:12 [block_pool.py:321] Successfully reset prefix cache")
        lines.append(f"(TaskRunner pid=41877) step:{s} - " + " - ".join(f"{k}:{fmt(v)}" for k, v in m.items()))
    d.mkdir(parents=True, exist_ok=True)
    (d / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if ckpt_every:
        verl_ckpts(d, proj, exp, list(range(ckpt_every, sim.T + 1, ckpt_every)))


def verl_ckpts(d, proj, exp, steps):
    root = d / "checkpoints" / proj / exp
    for s in steps:
        (root / f"global_step_{s}" / "actor").mkdir(parents=True, exist_ok=True)
        (root / f"global_step_{s}" / "actor" / "huggingface").mkdir(exist_ok=True)
        (root / f"global_step_{s}" / "actor" / "huggingface" / "config.json").write_text('{"model_type": "qwen2"}\n')
    if steps:
        (root / "latest_checkpointed_iteration.txt").write_text(str(steps[-1]))


def verl_jsonl(sim, d, *, val_keys, start=1, ckpt_every=None, proj="gsm8k_grpo", exp="qwen25_7b_grpo"):
    """verl FileLogger: {"step": N, "data": {...}}, NaN written as null; opened "wb", so a restart overwrites it."""
    rows = []
    if start > 1:  # resumed at start-1: val_before_train logs validation at the resume step
        rows.append({"step": start - 1, "data": verl_val(sim, start - 1, val_keys)})
    else:
        rows.append({"step": 0, "data": verl_val(sim, 0, val_keys)})
    for s in range(start, sim.T + 1):
        rows.append({"step": s, "data": verl_metrics(sim, s, val=verl_val(sim, s, val_keys))})
    p = d / proj / f"{exp}.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    def clean(v):
        return None if isinstance(v, float) and not math.isfinite(v) else v
    p.write_text("".join(json.dumps({"step": r["step"], "data": {k: clean(v) for k, v in r["data"].items()}},
                                    separators=(",", ":")) + "\n" for r in rows))
    if ckpt_every:
        verl_ckpts(d, proj, exp, list(range(ckpt_every, sim.T + 1, ckpt_every)))


# ------------------------------------------------------------------------------------------------------ OpenRLHF

def openrlhf_status(sim, s, V="0.9"):
    a = sim.a
    Vt = ver(V)
    rew = float(sim.reward()[s])
    st = {"policy_loss": r6(a["loss"][s] * 5), "actor_lr": r6(a["lr"][s]), "reward": r6(rew),
          "return": r6(rew - sim.spec.get("beta", 0.0) * a["kl"][s]), "response_length": r6(a["len"][s]),
          "total_length": r6(a["len"][s] + 142)}
    if sim.spec.get("beta", 0.0) or sim.spec.get("log_kl"):
        st["kl"] = r6(a["kl"][s])
    if sim.spec.get("entropy_coef"):
        st["entropy_loss"] = r6(a["ent"][s])
    st["truncated"] = r6(a["trunc"][s])
    if Vt >= (0, 9):
        st.update({"ppo_clip_ratio": r6(a["clip"][s]), "ppo_kl": r6(a["clip"][s] * 0.004),
                   "vllm_kl": r6(0.0011), "group_reward_std": r6(sim.reward_std()[s] * 0.8)})
    if Vt >= (0, 10):
        st.update({"rollout/reward_mean": r6(rew), "rollout/reward_std": r6(sim.reward_std()[s]),
                   "rollout/response_length_mean": r6(a["len"][s]), "rollout/truncated_rate": r6(a["trunc"][s]),
                   "rollout/num_samples": float(sim.P * sim.G),
                   "timing/generation": r6(30 + a["len"][s] * 0.05), "timing/make_experience": 9.1,
                   "timing/ppo_train": 14.2, "timing/broadcast": 1.3})
        st["timing/step_total"] = r6(st["timing/generation"] + 9.1 + 14.2 + 1.3)
    st["actor_grad_norm"] = r6(a["gn"][s])
    return st


def openrlhf_console(sim, d, *, V="0.9", every=1, header=""):
    lines = [header.rstrip("\n")] if header else []
    for s in range(every, sim.T + 1, every):
        lines.append(f"✨ Global step {s}: {openrlhf_status(sim, s, V)!r}")
        if s % 50 == 0:
            lines.append(f"Train step of episode 1: {tqdm_bar(s, sim.planned or sim.T, 52.4)}")
    d.mkdir(parents=True, exist_ok=True)
    (d / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")


# -------------------------------------------------------------------------------------------------- TensorBoard

def tb_events(rows, secs=40.0, wall0=WALL0):
    """rows: [(step, {tag: value})] -> (wall, step, values) for kit.tb_file."""
    return [(wall0 + st * secs, st, vals) for st, vals in rows]


def tb_newstyle(path, events):
    """Event file with TF2-style scalars: a rank-0 DT_FLOAT tensor, plugin 'scalars' metadata on each tag's first value."""
    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, types_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    path.parent.mkdir(parents=True, exist_ok=True)
    seen = set()
    with path.open("wb") as fh:
        w = RecordWriter(fh)
        w.write(event_pb2.Event(wall_time=events[0][0], file_version="brain.Event:2").SerializeToString())
        for wall, step, vals in events:
            vs = []
            for tag, v in vals.items():
                if v is None:
                    continue
                t = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[float(v)])
                meta = None
                if tag not in seen:
                    meta = summary_pb2.SummaryMetadata(
                        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars", content=b""),
                        data_class=summary_pb2.DATA_CLASS_SCALAR)
                    seen.add(tag)
                vs.append(summary_pb2.Summary.Value(tag=tag, tensor=t, metadata=meta))
            w.write(event_pb2.Event(wall_time=wall, step=int(step), summary=summary_pb2.Summary(value=vs))
                    .SerializeToString())
        w.flush()


def hf_tb_rows(sim, k, v, beta=0.0, fns=None, evals=None, spe=1000, lo=0, hi=None):
    """HF TensorBoardCallback: rewrite_logs names (train/<key>, eval/<key>)."""
    rows = []
    for row in trl_history(sim, k, v, beta, fns, evals, spe, hi or sim.T):
        if row["step"] <= lo:
            continue
        out = {}
        for kk, vv in row.items():
            if kk == "step" or vv is None:
                continue
            out[("eval/" + kk[5:]) if kk.startswith("eval_") else "train/" + kk] = vv
        rows.append((row["step"], out))
    return rows


# -------------------------------------------------------------------------------------------- W&B, MLflow, Trackio

def wandb_offline(d, project, name, rid, config, calls, step_metric=None):
    """A W&B offline run written by the real SDK. calls: [(step or None, {key: value})]."""
    try:
        import wandb
    except Exception as e:  # pragma: no cover
        raise kit.Skip(f"wandb SDK unavailable: {e}") from e
    d.mkdir(parents=True, exist_ok=True)
    os.environ.update({"WANDB_SILENT": "true", "WANDB_MODE": "offline", "WANDB_DISABLE_GIT": "true",
                       "WANDB_CONSOLE": "off"})
    run = wandb.init(project=project, name=name, id=rid, dir=str(d), config=config, mode="offline",
                     settings=wandb.Settings(x_disable_stats=True, console="off", save_code=False))
    if step_metric:
        run.define_metric(step_metric)
        run.define_metric("*", step_metric=step_metric)
    for step, vals in calls:
        if step is None:
            run.log(vals)
        else:
            run.log(vals, step=step)
    run.finish()


def mlflow_store(d, exp_name, run_id, run_name, metrics, params, start_ms, status=1):
    """MLflow file store: mlruns/<exp>/<run>/{meta.yaml, metrics/<key>, params/, tags/}; '/' in a key nests dirs.
    metrics: {key: [(ts_ms, value, step)]} in logging order."""
    exp = d / "mlruns" / "1"
    exp.mkdir(parents=True, exist_ok=True)
    (d / "mlruns" / "0").mkdir(exist_ok=True)
    (d / "mlruns" / "0" / "meta.yaml").write_text(
        "artifact_location: file:///workspace/mlruns/0\ncreation_time: 1747990000000\nexperiment_id: '0'\n"
        "last_update_time: 1747990000000\nlifecycle_stage: active\nname: Default\n")
    (exp / "meta.yaml").write_text(
        f"artifact_location: file:///workspace/mlruns/1\ncreation_time: {start_ms - 5000}\nexperiment_id: '1'\n"
        f"last_update_time: {start_ms - 5000}\nlifecycle_stage: active\nname: {exp_name}\n")
    rd = exp / run_id
    (rd / "artifacts").mkdir(parents=True, exist_ok=True)
    (rd / "meta.yaml").write_text(
        f"artifact_uri: file:///workspace/mlruns/1/{run_id}/artifacts\nend_time: null\nentry_point_name: ''\n"
        f"experiment_id: '1'\nlifecycle_stage: active\nrun_id: {run_id}\nrun_name: {run_name}\nrun_uuid: {run_id}\n"
        f"source_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: {start_ms}\nstatus: {status}\n"
        f"tags: []\nuser_id: trainer\n")
    for k, v in params.items():
        p = rd / "params" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(str(v))
    for k, v in {"mlflow.runName": run_name, "mlflow.user": "trainer", "mlflow.source.type": "LOCAL"}.items():
        p = rd / "tags" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(v)
    for key, pts in metrics.items():
        p = rd / "metrics" / key
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(f"{ts} {float(v)!r} {st}\n" for ts, v, st in pts))


def trackio_db(path, project, run_name, config, rows, sysrows=()):
    """Trackio 0.36 project database: metrics(id, run_id, timestamp, run_name, step, metrics JSON), configs, ..."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT NOT NULL,
                              run_name TEXT NOT NULL, step INTEGER NOT NULL, metrics TEXT NOT NULL);
        CREATE INDEX idx_metrics_run_step ON metrics(run_name, step);
        CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, run_name TEXT NOT NULL,
                              config TEXT NOT NULL, created_at TEXT NOT NULL);
        CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT NOT NULL,
                                     run_name TEXT NOT NULL, metrics TEXT NOT NULL);
        CREATE TABLE project_metadata (key TEXT PRIMARY KEY, value TEXT);
    """)
    rid = "r-" + run_name
    con.execute("INSERT INTO configs (run_id, run_name, config, created_at) VALUES (?,?,?,?)",
                (rid, run_name, json.dumps(config), "2025-05-23T10:00:00"))
    import datetime as dt
    for st, wall, m in rows:
        ts = dt.datetime.fromtimestamp(wall, dt.UTC).isoformat()
        con.execute("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?,?,?,?,?)",
                    (rid, ts, run_name, st, json.dumps(m)))
    for wall, m in sysrows:
        ts = dt.datetime.fromtimestamp(wall, dt.UTC).isoformat()
        con.execute("INSERT INTO system_metrics (run_id, timestamp, run_name, metrics) VALUES (?,?,?,?)",
                    (rid, ts, run_name, json.dumps(m)))
    con.commit()
    con.close()


def wandb_panel_csvs(d, run_name, xkey, series, bucket):
    """W&B UI 'Export panel data' CSVs: one file per panel, x column, then '<run> - <key>', __MIN, __MAX (bucketed)."""
    d.mkdir(parents=True, exist_ok=True)
    for i, (key, pts) in enumerate(series.items()):
        rows = []
        for j in range(0, len(pts), bucket):
            b = pts[j:j + bucket]
            xs = [p[0] for p in b]
            vs = [p[1] for p in b]
            rows.append([xs[-1], f"{np.mean(vs):.6g}", f"{min(vs):.6g}", f"{max(vs):.6g}"])
        name = d / f"wandb_export_2025-06-1{i % 10}T09_{14 + i:02d}_02.113-07_00.csv"
        with name.open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow([xkey, f"{run_name} - {key}", f"{run_name} - {key}__MIN", f"{run_name} - {key}__MAX"])
            w.writerows(rows)


# ------------------------------------------------------------------------------------------------- the writers

def w_trl_state(sim, d, v, k, max_steps, save_steps, eval_steps=None, beta=0.0, fns=None, evals=None, spe=1000,
                top=True, keep=None, finished=False, extra=None):
    ck = list(range(save_steps, sim.T + 1, save_steps)) if save_steps else []
    if keep:
        ck = ck[-keep:]
    trl_dir(sim, d, v=v, k=k, max_steps=max_steps, save_steps=save_steps or 500, eval_steps=eval_steps, beta=beta,
            fns=fns, evals=evals, spe=spe, top=top, ckpts=ck, extra=extra, finished=finished)


def w_trl_console(sim, d, v, k, total, beta=0.0, fns=None, evals=None, spe=1000, save_steps=None, finished=False,
                  header="", extra=None):
    ck = list(range(save_steps, sim.T + 1, save_steps)) if save_steps else []
    trl_console(sim, d, v=v, k=k, total=total, beta=beta, fns=fns, evals=evals, spe=spe, header=header, ckpts=ck,
                save_steps=save_steps, finished=finished, extra=extra)


def w_hf_tb(sim, d, v, k, beta=0.0, fns=None, evals=None, spe=1000, host="node7"):
    rows = hf_tb_rows(sim, k, v, beta, fns, evals, spe)
    kit.tb_file(d / "runs" / f"May23_10-00-00_{host}" / f"events.out.tfevents.1748000000.{host}.3311.0",
                tb_events(rows))


def w_verl_tb(sim, d, val_keys, ppo=False, rm=False, proj="verl_ppo", exp="run"):
    rows = []
    v0 = verl_val(sim, 0, val_keys)
    if v0:
        rows.append((0, v0))
    for s in range(1, sim.T + 1):
        rows.append((s, verl_metrics(sim, s, ppo=ppo, rm=rm, kl_loss=not rm, val=verl_val(sim, s, val_keys))))
    kit.tb_file(d / "tensorboard_log" / proj / exp / "events.out.tfevents.1748000000.gpu-node-3.51221.0",
                tb_events(rows, secs=95.0))


# ------------------------------------------------------------------------------------------- per-case builders
# Each builder: (sim, folder) -> None. Scenario specs are in the CASES table below.

def b_trl015_state(sim, d):
    w_trl_state(sim, d, "0.15.2", 10, 1000, 100, 100, beta=0.04,
                fns={"accuracy_reward": "acc", "format_reward": "fmt"},
                evals={"eval_reward": "ev", "eval_rewards/accuracy_reward": "ev"}, spe=400)


def b_openrlhf_lr_step(sim, d):
    hdr = ("[2025-05-23 10:00:01] Namespace(pretrain='Qwen/Qwen2.5-1.5B-Instruct', advantage_estimator='group_norm', "
           "n_samples_per_prompt=8, rollout_batch_size=64, actor_learning_rate=1e-06, lr_scheduler='multistep', "
           "lr_milestones=[600], lr_gamma=0.1, init_kl_coef=0.001, use_kl_loss=True, num_episodes=1, "
           "max_steps=1500, logging_steps=1)")
    openrlhf_console(sim, d, V="0.9", every=1, header=hdr)


def b_verl_jsonl_resume(sim, d):
    verl_jsonl(sim, d, val_keys={"val-core/openai/gsm8k/acc/mean@1": "ev"}, start=401, ckpt_every=100)


def b_verl03_console(sim, d):
    verl_console(sim, d, old=True, np2=False, val_keys={"val/test_score/openai/gsm8k": "ev"}, kl_loss=True)


def b_nemo_tb(sim, d):
    a = sim.a
    rows = []
    for s in range(1, sim.T + 1):
        L = a["len"][s]
        zs = a["acc_zs"][s]
        p1 = min(zs, a["acc"][s]) * 100 * 0.6
        vals = {"train/reward": a["acc"][s], "train/loss": a["loss"][s], "train/grad_norm": a["gn"][s],
                "train/lr": a["lr"][s], "train/kl_penalty": a["kl"][s], "train/approx_entropy": a["ent"][s],
                "train/probs_ratio": 1.0 + a["clip"][s] * 0.01, "train/mean_gen_tokens_per_sample": L,
                "train/max_gen_tokens_per_sample": min(8192, L * 3.1), "train/truncation_rate": a["trunc"][s],
                "train/natural_termination_rate": 1 - a["trunc"][s], "train/token_mult_prob_error": 1.006,
                "train/baseline_reward/pct_0": zs * 100 - p1, "train/baseline_reward/pct_1": p1,
                "train/baseline_reward/pct_mixed": 100 - zs * 100,
                "timing/train/generation": 40 + L * 0.05, "timing/train/total_step_time": 65 + L * 0.06}
        if s in sim.ev.get("ev", {}):
            vals["validation/accuracy"] = sim.ev["ev"][s]
            vals["validation/avg_length"] = L * 0.95
        rows.append((s, vals))
    kit.tb_file(d / "logs" / "exp_001" / "tensorboard" / "events.out.tfevents.1748000000.nemo-0.771.0",
                tb_events(rows, secs=110.0))


def b_mlflow_hf(sim, d):
    hist = trl_history(sim, 10, "0.21.0", 0.0, {"accuracy_reward": "acc"}, {"eval_reward": "ev",
                       "eval_rewards/accuracy_reward/mean": "ev"}, 500)
    start = 1_748_000_000_000
    metrics = {}
    for row in hist:
        for k, v in row.items():
            if k in ("step",) or v is None:
                continue
            metrics.setdefault(k, []).append((start + row["step"] * 38_000, v, row["step"]))
    mlflow_store(d, "grpo-math", "7c1d0e5a9b2f4c11a0d3e8f6b5a4c3d2", "qwen25-3b-grpo-math-small-eval", metrics,
                 {"max_steps": 2000, "logging_steps": 10, "eval_steps": 50, "learning_rate": 1e-06,
                  "num_generations": 8, "beta": 0.0, "per_device_eval_batch_size": 16}, start)


def b_legacy_ppo_tb(sim, d):
    a = sim.a
    rows = []
    for s in range(sim.T):
        sc = a["score"][s]
        kl = a["kl"][s]
        coef = a["kl_coef"][s]
        rows.append((s, {"env/reward_mean": sc, "env/reward_std": a["score_std"][s], "env/reward_dist": sc,
                         "objective/kl": kl, "objective/kl_dist": kl, "objective/kl_coef": coef,
                         "objective/entropy": a["ent"][s], "objective/logprobs": -a["ent"][s] * 20,
                         "objective/ref_logprobs": -a["ent"][s] * 20 - kl,
                         "ppo/mean_scores": sc, "ppo/std_scores": a["score_std"][s],
                         "ppo/mean_non_score_reward": -coef * kl,
                         "ppo/learning_rate": a["lr"][s], "ppo/loss/policy": a["loss"][s] - 0.02,
                         "ppo/loss/value": 0.08 + 0.5 * math.exp(-s / 40), "ppo/loss/total": a["loss"][s] + 0.01,
                         "ppo/policy/entropy": a["ent"][s] * 0.9, "ppo/policy/approxkl": a["clip"][s] * 0.05,
                         "ppo/policy/policykl": a["clip"][s] * 0.04, "ppo/policy/clipfrac": a["clip"][s],
                         "ppo/policy/advantages_mean": 0.0, "ppo/returns/mean": sc * 0.5,
                         "ppo/val/var_explained": 0.2 + 0.5 * (1 - math.exp(-s / 80)),
                         "tokens/queries_len_mean": 11.8, "tokens/responses_len_mean": a["len"][s],
                         "time/ppo/total": 3.1}))
    kit.tb_file(d / "logs" / "trl" / "events.out.tfevents.1748000000.a100-1.2231.0", tb_events(rows, secs=14.0))


def b_trl016_console(sim, d):
    hdr = ("==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1\n"
           "   \\\\   /|    Num examples = 7,473 | Num Epochs = 1 | Total steps = 250\n"
           "O^O/ \\_/ \\    Batch size per device = 8 | Gradient accumulation steps = 1\n"
           "\\        /    Data Parallel GPUs = 1 | Total batch size (8 x 1 x 1) = 8\n"
           " \"-____-\"     Trainable parameters = 29,933,568/3,000,000,000 (1.00% trained)")
    w_trl_console(sim, d, "0.16.0", 1, 250, beta=0.04,
                  fns={"xmlcount_reward_func": "xml", "soft_format_reward_func": "fmt",
                       "correctness_reward_func": "acc"}, spe=934, header=hdr)


def b_wandb_rloo(sim, d):
    calls = []
    for row in trl_history(sim, 10, "0.23.0", 0.05, {"accuracy_reward": "acc"}, None, 4000):
        vals = {("train/" + k): v for k, v in row.items() if k != "step" and v is not None}
        vals["train/global_step"] = row["step"]
        calls.append((None, vals))
    wandb_offline(d, "rloo-math", "rloo-qwen25-7b-math-8k", "h6rloo8k",
                  {"learning_rate": 5e-7, "max_steps": 12000, "num_generations": 4, "beta": 0.05,
                   "logging_steps": 10, "_name_or_path": "Qwen/Qwen2.5-7B"}, calls, step_metric="train/global_step")


def b_hf_tb_cliphigh(sim, d):
    w_hf_tb(sim, d, "0.24.0", 10, 0.0, {"accuracy_reward": "acc"}, {"eval_rewards/accuracy_reward/mean": "ev"}, 1200)


def b_mlflow_verl_resume(sim, d):
    """verl MLflow adapter ('@' -> '_at_'); crashed at 460, resumed from global_step_400: 401-460 logged twice."""
    start = 1_748_000_000_000
    metrics = {}

    def log(s, m, t):
        for k, v in m.items():
            k = k.replace("@", "_at_")
            metrics.setdefault(k, []).append((t, v, s))
    val = {"val-core/openai/gsm8k/acc/mean@1": "ev"}
    t = start
    log(0, verl_val(sim, 0, val), t)
    dict(sim.a)
    rng = np.random.default_rng(77)
    for s in range(1, 461):  # first attempt (its 401-460 values are lost weights, slightly different noise)
        t += 60_000
        m = verl_metrics(sim, s, val=verl_val(sim, s, val))
        if s > 400:
            m["critic/score/mean"] = r6(m["critic/score/mean"] + rng.normal(0, 0.02))
        log(s, m, t)
    t += 900_000
    log(400, verl_val(sim, 400, val), t)
    for s in range(401, sim.T + 1):
        t += 60_000
        log(s, verl_metrics(sim, s, val=verl_val(sim, s, val)), t)
    mlflow_store(d, "gsm8k_grpo", "4e0b9f2c1a7d4b3e8c6f5a2d1e0c9b8a", "qwen25_3b_grpo_resume", metrics,
                 {"trainer.total_training_steps": 1500, "trainer.save_freq": 100, "trainer.test_freq": 50,
                  "actor_rollout_ref.actor.optim.lr": 1e-6, "algorithm.adv_estimator": "grpo"}, start)
    verl_ckpts(d, "gsm8k_grpo", "qwen25_3b_grpo_resume", list(range(100, sim.T + 1, 100)))


def b_trackio_curriculum(sim, d):
    rows = []
    for row in trl_history(sim, 10, "0.25.0", 0.0, {"accuracy_reward": "acc"},
                           {"eval_rewards/accuracy_reward/mean": "ev"}, 2500):
        m = {}
        for k, v in row.items():
            if k == "step" or v is None:
                continue
            m[("eval/" + k[5:]) if k.startswith("eval_") else "train/" + k] = v
        rows.append((row["step"], WALL0 + row["step"] * 30, m))
    sysrows = [(WALL0 + i * 600, {"gpu/0/utilization": 91.0 + (i % 5), "gpu/0/allocated_memory": 61.3,
                                  "gpu/mean_utilization": 90.0 + (i % 4)}) for i in range(0, 51)]
    trackio_db(d / "trackio" / "grpo-curriculum.db", "grpo-curriculum", "qwen3-1.7b-adaptive-difficulty",
               {"max_steps": 2500, "learning_rate": 1e-6, "num_generations": 8,
                "dataset": "deepscaler-adaptive (pass-rate filter 0.3-0.7)"}, rows, sysrows)


def b_trl020_console_evals(sim, d):
    w_trl_console(sim, d, "0.20.0", 10, 2000, 0.0, {"accuracy_reward": "acc", "format_reward": "fmt"},
                  {"eval_reward": "ev", "eval_rewards/accuracy_reward/mean": "ev"}, spe=1870)


def b_verl5_console_ckpts(sim, d):
    verl_console(sim, d, val_keys={"val-core/openai/gsm8k/acc/mean@1": "ev"}, ckpt_every=50,
                 proj="gsm8k_grpo", exp="qwen2.5-3b-grpo")


def b_openrlhf_zero(sim, d):
    hdr = ("[2025-05-23 09:58:12] args: --pretrain meta-llama/Llama-3.2-3B --advantage_estimator group_norm "
           "--n_samples_per_prompt 8 --rollout_batch_size 32 --max_samples 40000 --generate_max_len 1024 "
           "--remote_rm_url http://rm:5000/get_reward --logging_steps 1 --num_episodes 1")
    openrlhf_console(sim, d, V="0.10.1", every=1, header=hdr)


def b_rasbt76(sim, d):
    a = sim.a
    rng = np.random.default_rng(7)
    lines = ["step,total_steps,loss,kl_loss,policy_ratio,reward_avg,format_reward_avg,tokens_per_sec,"
             "avg_response_len,adv_avg,adv_std,entropy_avg,eval_acc"]
    for s in range(1, sim.T + 1):
        k = rng.binomial(8, np.clip(sim.true["fmt"][s], 0, 1))
        fmt = k / 8
        corr = 0.0
        same = k in (0, 8)
        adv_std = 0.0 if same else 0.935414
        loss = 0.0 if same else rng.normal(0, 40)
        kl = 0.0 if same else rng.normal(0.002, 0.004) * (1 + s / 100)
        pr = "" if same else f"{1 + rng.normal(0, 0.01):.6f}"
        ev = ""
        if s == 1 or s % 50 == 0:
            ev = f"{sim.ev['ev'].get(s, 0.0):.6f}"
        lines.append(f"{s},500,{loss:.6f},{kl:.6f},{pr},{corr + fmt:.6f},{fmt:.6f},{rng.normal(41, 2):.2f},"
                     f"{a['len'][s]:.2f},{0.0:.6f},{adv_std:.6f},{a['ent'][s]:.6f},{ev}")
    p = d / "logs" / "7_6_plus_format_reward_metrics.csv"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines) + "\n")


def b_openrlhf_tb_evalflat(sim, d):
    rows = []
    for s in range(1, sim.T + 1):
        st = openrlhf_status(sim, s, "0.10.0")
        rows.append((s, {"train/" + k: v for k, v in st.items()} | {"train/global_step": s}))
    evs = []
    for s, v in sim.ev["ev"].items():
        if s == 0:
            continue
        evs.append((s, {"eval/eval_math500_pass1": v, "eval/eval_math500_pass4": min(1, v + 0.17),
                        "eval/eval_response_length_mean": sim.a["len"][s] * 1.05, "eval/eval_truncated_rate": 0.01}))
    ev = dict(evs)
    merged = []
    for st, vals in rows:  # one SummaryWriter: eval scalars follow the train scalars of the same step
        merged.append((WALL0 + st * 70.0, st, vals))
        if st in ev:
            merged.append((WALL0 + st * 70.0 + 45.0, st, ev[st]))
    kit.tb_file(d / "tensorboard" / "qwen25_7b_reinforce_math" / "events.out.tfevents.1748000000.gpu-0.9911.0", merged)
    for s in (200, 400, 600):
        (d / "ckpt" / "_actor" / f"global_step{s}").mkdir(parents=True, exist_ok=True)
        (d / "ckpt" / "_actor" / f"global_step{s}" / "client_state.json").write_text(
            json.dumps({"global_step": s, "episode": 0, "total_consumed_prompts": s * 64}) + "\n")


def b_verl_ppo_rm_tb(sim, d):
    w_verl_tb(sim, d, {"val-core/ifeval/acc/mean@1": "ev"}, ppo=True, rm=True, proj="helpful_ppo",
              exp="qwen25_7b_rm_ppo")
    verl_ckpts(d, "helpful_ppo", "qwen25_7b_rm_ppo", list(range(50, sim.T + 1, 50)))


def b_newstyle_tb(sim, d):
    a = sim.a
    rows = []
    for s in range(1, sim.T + 1):
        vals = {"reward/mean": a["acc"][s], "reward/std": a["acc_std"][s], "reward/frac_zero_std": a["acc_zs"][s],
                "policy/entropy": a["ent"][s], "policy/kl_ref": a["kl"][s], "gen/length_mean": a["len"][s],
                "gen/truncated_frac": a["trunc"][s], "optim/grad_norm": a["gn"][s], "optim/lr": a["lr"][s],
                "loss/total": a["loss"][s]}
        if s in sim.ev["ev"]:
            vals["eval/accuracy"] = sim.ev["ev"][s]
        rows.append((s, vals))
    tb_newstyle(d / "tb" / "events.out.tfevents.1748000000.h100-2.6120.0.v2", tb_events(rows, secs=55.0))


def b_nemo_wandb_kl(sim, d):
    a = sim.a
    calls = []
    for s in range(1, sim.T + 1):
        zs = a["acc_zs"][s]
        vals = {"train/reward": a["acc"][s], "train/loss": a["loss"][s], "train/grad_norm": a["gn"][s],
                "train/lr": a["lr"][s], "train/kl_penalty": a["kl"][s], "train/approx_entropy": a["ent"][s],
                "train/probs_ratio": 1 + (a["tmpe"][s] - 1) * 0.5, "train/probs_ratio_max": 1 + (a["tmpe"][s] - 1) * 40,
                "train/token_mult_prob_error": a["tmpe"][s], "train/mean_gen_tokens_per_sample": a["len"][s],
                "train/truncation_rate": a["trunc"][s], "train/baseline_reward/pct_mixed": 100 - zs * 100,
                "timing/train/total_step_time": 88.0 + a["len"][s] * 0.03, "timing/train/generation": 51.0}
        if s in sim.ev["ev"]:
            vals["validation/accuracy"] = sim.ev["ev"][s]
        calls.append((s, vals))
    wandb_offline(d / "logs" / "exp_003", "nemo-grpo-math", "grpo-llama3.1-8b-math", "h6nemokl",
                  {"grpo": {"max_num_steps": 600, "num_generations_per_prompt": 16}, "loss_fn": {"reference_policy_kl_penalty": 0.01},
                   "policy": {"model_name": "meta-llama/Llama-3.1-8B-Instruct"}}, calls)


def b_trl019_console_finished(sim, d):
    w_trl_console(sim, d, "0.19.1", 10, 2000, 0.0, {"accuracy_reward": "acc"},
                  {"eval_rewards/accuracy_reward/mean": "ev", "eval_reward": "ev"}, spe=2000, save_steps=250,
                  finished=True)


def b_trl_ckpt_limit(sim, d):
    w_trl_state(sim, d, "0.22.2", 10, 3000, 100, None, 0.0, {"accuracy_reward": "acc"}, None, 1500, top=False, keep=2)


def b_trl_state_judge(sim, d):
    w_trl_state(sim, d, "0.24.0", 10, 1200, 100, 100, 0.0, {"judge_reward": "judge", "exact_match_reward": "acc"},
                {"eval_rewards/exact_match_reward/mean": "ev", "eval_rewards/judge_reward/mean": "evj"}, 1200)


def b_verl_tb_passk(sim, d):
    w_verl_tb(sim, d, {"val-core/math/acc/mean@16": "ev", "val-core/math/acc/best@16/mean": "evk",
                       "val-core/math/acc/maj@16/mean": "evm"}, proj="math_grpo", exp="qwen25_math_7b")


def b_wandb_csv_20k(sim, d):
    series = {}
    for row in trl_history(sim, 10, "0.21.0", 0.02, {"accuracy_reward": "acc"}, None, 7000):
        s = row["step"]
        for k in ("reward", "kl", "entropy", "completions/mean_length", "frac_reward_zero_std"):
            series.setdefault("train/" + k, []).append((s, row[k]))
    series["eval/rewards/accuracy_reward/mean"] = [(s, v) for s, v in sim.ev["ev"].items() if s > 0]
    buck = {k: (2 if k.startswith("train/") else 1) for k in series}
    for k, pts in series.items():
        wandb_panel_csvs(d / k.replace("/", "_"), "grpo-qwen25-14b-long", "train/global_step", {k: pts}, buck[k])


def b_rasbt74(sim, d):
    a = sim.a
    rng = np.random.default_rng(9)
    lines = ["step,total_steps,loss,reward_avg,tokens_per_sec,avg_response_len,adv_avg,adv_std,entropy_avg,"
             "policy_ratio,eval_acc"]
    for s in range(1, sim.T + 1):
        k = rng.binomial(8, np.clip(sim.true["acc"][s] + rng.normal(0, 0.15), 0, 1))
        same = k in (0, 8)
        pr = "" if same else f"{a['ratio'][s] * math.exp(rng.normal(0, 0.05 + 0.1 * (a['ratio'][s] - 1))):.6f}"
        e = 0 if s == 1 else s
        ev = f"{100 * sim.ev['ev'][e]:.1f}" if e in sim.ev["ev"] else ""
        lines.append(f"{s},500,{0.0 if same else rng.normal(0, 60):.4f},{k / 8:.4f},{rng.normal(38, 2.5):.2f},"
                     f"{a['len'][s]:.1f},0.0000,{0.0 if same else 0.9354:.4f},{a['ent'][s]:.4f},{pr},{ev}")
    p = d / "logs" / "7_4_plus_clip_ratio_metrics.csv"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\r\n".join(lines) + "\r\n")


def b_plain_lr_zero(sim, d):
    a = sim.a
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps(
        {"model": "Qwen/Qwen2.5-1.5B-Instruct", "algo": "grpo", "total_steps": 1500, "lr": 2e-6,
         "lr_schedule": {"type": "cosine", "warmup_steps": 20, "decay_steps": 500, "min_lr": 0.0},
         "group_size": 8, "prompts_per_step": 32, "kl_coef": 0.02}, indent=2) + "\n")
    with (d / "metrics.jsonl").open("w") as fh:
        for s in range(1, sim.T + 1):
            fh.write(json.dumps({"step": s, "lr": r6(a["lr"][s]), "reward_mean": r6(a["acc"][s]),
                                 "reward_std": r6(a["acc_std"][s]), "kl": r6(a["kl"][s]), "entropy": r6(a["ent"][s]),
                                 "resp_len": r6(a["len"][s]), "grad_norm": r6(a["gn"][s]),
                                 "loss": r6(a["loss"][s])}) + "\n")


def b_trl023_console_outage(sim, d):
    hdr = "[2025-05-23 10:00:00] INFO reward server: http://judge-svc:8000/score (timeout 30s, fallback 0.0)"
    w_trl_console(sim, d, "0.23.0", 10, 1500, 0.0, {"math_verify_remote": "acc"}, None, spe=1500, header=hdr)


# --------------------------------------------------------------------------------------------- special scenario

class TwoSegments:
    """A run resumed at `at` whose second segment started from the base weights by mistake (KL reset, reward reset)."""

    def __init__(self, rng, T, spec, planned=None):
        self.T, self.planned, self.spec = T, planned, spec
        self.first = Sim(rng, spec["crash"], spec["seg1"], planned)
        self.second = Sim(rng, T, spec["seg2"], planned)


def b_resume_from_base(run, d):
    s1, s2, at, crash = run.first, run.second, run.spec["at"], run.spec["crash"]
    fns = {"accuracy_reward": "acc"}
    r1 = hf_tb_rows(s1, 10, "0.20.1", 0.04, fns, None, 1000, hi=crash)
    r2 = hf_tb_rows(s2, 10, "0.20.1", 0.04, fns, None, 1000, lo=at)
    kit.tb_file(d / "runs" / "May23_10-00-00_node2" / "events.out.tfevents.1748000000.node2.4410.0",
                tb_events(r1, secs=40.0))
    w2 = WALL0 + crash * 40.0 + 3600
    kit.tb_file(d / "runs" / "May24_05-27-41_node2" / "events.out.tfevents.1748064461.node2.9182.0",
                [(w2 + (st - at) * 40.0, st, vals) for st, vals in r2])
    # checkpoints: 200/400/600 from segment 1; 800 from segment 2 with the restored log history up to 600
    for c in (200, 400, 600):
        trl_dir(s1, d, v="0.20.1", k=10, max_steps=2000, save_steps=200, beta=0.04, fns=fns, top=False, ckpts=[c])
    h = trl_history(s1, 10, "0.20.1", 0.04, fns, None, 1000, at) + \
        [r for r in trl_history(s2, 10, "0.20.1", 0.04, fns, None, 1000, 800) if r["step"] > at]
    st = kit.trainer_state(h, 800, 2000, 10, 200, None, 0.8)
    kit.dump_json(d / "checkpoint-800" / "trainer_state.json", st)


# -------------------------------------------------------------------------------------------------------- cases

def S(**kw):
    return kw


def C(name, build, seed, steps, spec, labels, tags, why, kind=Sim):
    return Case(name, (lambda rng, T, planned, _s=spec, _k=kind: _k(rng, T, _s, planned)), build, seed, steps, labels,
                tags, why)


def two_sided(lo, hi, onset, preferred="rollback"):
    return dict(accept=["rollback", "stop"], preferred=preferred, rollback_window=[lo, hi], onset_step=onset)


CASES = [
    # ------------------------------------------------------------------ healthy runs that look alarming
    C("ok-kl-plateau-beta-trl015-state", b_trl015_state, 6101, (600, 1000),
      S(acc=[(0, .32), (150, .46), (350, .55), (600, .615)], comps={"fmt": [(0, .55), (60, .92), (600, .97)]},
        kl=[(0, 0), (120, .07), (250, .112), (400, .121), (600, .125)], len=[(0, 210), (600, 265)],
        gn=[(0, .4), (600, .3)], lr=[(0, 0), (20, 1e-6), (600, 1e-6)], beta=0.04,
        evals={"ev": (100, 500, [(0, .30), (200, .47), (600, .58)])}),
      HEALTHY, "trl grpo trainer_state trl_0.15 old_keys kl_plateau beta checkpoints",
      """TRL 0.15 trainer_state (rewards/<fn> without /mean, completion_length, kl always logged, beta 0.04) at step
      600 of max_steps 1000, checkpoints every 100. KL climbs to ~0.11 by step 250 and then holds at 0.11-0.13 under
      the beta penalty: a plateau at a moderate level, not a runaway. The accuracy reward keeps rising (0.32 -> ~0.6,
      slope easing but positive) and the eval every 100 steps rises with it, so the drift is buying reward: continue."""),

    C("ok-lr-step-decay-flattens-openrlhf-console", b_openrlhf_lr_step, 6102, (900, 1500),
      S(acc=[(0, .2), (300, .43), (600, .535), (900, .585)], sm_acc=25, P=64,
        kl=[(0, 0), (600, .03), (900, .034)], lr=[(0, 1e-6), (600, 1e-6), (600, 1e-7), (900, 1e-7)], sm_lr=0,
        clip=[(0, .02), (600, .02), (600, .004), (900, .004)], sm_clip=0, log_kl=True,
        gn=[(0, .3), (900, .25)], len=[(0, 420), (900, 470)]),
      HEALTHY, "openrlhf grpo openrlhf_console openrlhf_0.9 logging_every_step lr_step_decay multistep "
               "lookalike_plateau",
      """OpenRLHF 0.9 console (one '✨ Global step' dict per step), step 900 of max_steps 1500. The multistep schedule
      cuts actor_lr tenfold at step 600, after which the reward rises more slowly and the clip ratio drops, which reads
      like a plateau at a glance. Over the last 300 steps the reward still gains ~0.05 with KL flat near 0.03 and
      lengths steady: the low-LR phase is still paying and has 600 steps of budget, so continue."""),

    C("ok-verl-jsonl-overwritten-on-resume", b_verl_jsonl_resume, 6103, 700,
      S(acc=[(0, .3), (300, .57), (700, .7)], kl=[(0, 0), (700, .004)], ent=[(0, .52), (700, .41)],
        len=[(0, 240), (700, 215)], gn=[(0, .2), (700, .15)], beta=0.001,
        evals={"ev": (50, 1319, [(0, .32), (300, .6), (700, .72)])}),
      HEALTHY, "verl grpo verl_jsonl file_logger resume overwritten_log starts_mid_run checkpoints",
      """verl 'file' logger JSONL, which is opened in 'wb' mode: the run was restarted from global_step_400, so the file
      holds only the validation row at step 400 and steps 401-700, while checkpoints global_step_100..700 show the
      history before it. Score mean climbs ~0.6 -> ~0.65 over the visible part, val-core gsm8k acc rises every 50
      steps (~0.61 -> ~0.72), entropy eases slowly, KL tiny. A live run still improving: continue."""),

    C("ok-entropy-slow-decline-verl03-console", b_verl03_console, 6104, 1400,
      S(acc=[(0, .25), (500, .54), (1400, .69)], ent=[(0, 1.1), (700, .68), (1400, .36)], noise={"ent": .02},
        kl=[(0, 0), (1400, .012)], len=[(0, 330), (1400, 300)], gn=[(0, .5), (1400, .3)], beta=0.001,
        evals={"ev": (100, 1319, [(0, .29), (500, .56), (1400, .705)])}),
      HEALTHY, "verl grpo verl_console verl_0.3 old_keys entropy_loss val_test_score entropy_decline "
               "lookalike_entropy_collapse",
      """verl 0.3 console (plain floats, actor/entropy_loss and val/test_score/openai/gsm8k spellings), 1400 steps.
      Entropy falls steadily from ~1.1 to ~0.36, a two-thirds drop that looks like collapse, but it is gradual, never
      near 0, and the validation score rises at every test (~0.29 -> ~0.70) with train score rising too. Narrowing that
      buys accuracy is normal: continue."""),

    C("ok-length-grows-with-accuracy-nemo-tb", b_nemo_tb, 6105, (450, 1000),
      S(acc=[(0, .27), (200, .42), (450, .545)], len=[(0, 620), (450, 2400)], cap=8192,
        trunc=[(0, .01), (450, .055)], kl=[(0, 0), (450, .004)], ent=[(0, .62), (450, .55)],
        gn=[(0, .12), (450, .1)], lr=[(0, 3e-7), (450, 3e-7)], P=64, G=16,
        evals={"ev": (20, 500, [(0, .3), (450, .53)])}, eval0=20),
      HEALTHY, "nemo_rl grpo tensorboard exp_dirs length_growth reasoning truncation_low "
               "lookalike_length_explosion",
      """NeMo-RL TensorBoard (logs/exp_001), 450 steps. Mean generated tokens quadruple (~620 -> ~2400) and step time
      grows with them, which alarms at first, but the truncation rate stays around 5% of an 8192-token cap and
      validation accuracy (every 20 steps) rises ~0.28 -> ~0.5 together with train reward: longer reasoning that pays,
      as expected on a math task. Continue."""),

    C("ok-small-eval-last-point-low-mlflow", b_mlflow_hf, 6106, (800, 2000),
      S(acc=[(0, .38), (400, .5), (800, .56)], ent=[(0, .5), (800, .42)], len=[(0, 380), (800, 420)],
        gn=[(0, .3), (800, .25)], evals={"ev": (50, 64, [(0, .40), (800, .53)])},
        eval_bump={"ev": {800: -6 / 64}}),
      HEALTHY, "trl grpo mlflow_file hf_callback raw_keys small_eval noisy_eval last_eval_low lookalike_eval_decline",
      """MLflow file store written by the HF callback (raw TRL keys, nested metric dirs), step 800 of max_steps 2000,
      eval every 50 steps on only 64 problems (binomial noise ~±0.06). The newest eval is clearly the lowest in a
      while, but one point from so small a set is within noise; the eval trend over 16 points is up and the train
      reward, entropy and lengths are healthy. Wait for the next evals: continue."""),

    C("ok-legacy-ppo-adaptive-kl-tb", b_legacy_ppo_tb, 6107, 300,
      S(score=[(0, .25), (120, 1.55), (300, 2.25)], score_sd=1.6, P=16,
        kl=[(0, 0), (100, 5.2), (150, 6.3), (300, 6.05)], noise={"kl": .08, "ent": .5},
        kl_coef=[(0, .2), (90, .19), (160, .235), (300, .22)], ent=[(0, 42), (300, 36)],
        len=[(0, 24), (300, 24)], clip=[(0, .06), (300, .05)], lr=[(0, 1.41e-5), (1, 1.41e-5)], sm=8),
      HEALTHY, "trl ppo legacy_ppo trl_0.11 tensorboard accelerate_tracker adaptive_kl kl_plateau reward_model",
      """Legacy TRL PPOTrainer (<=0.11) logging through accelerate's TensorBoard tracker (env/reward_mean,
      objective/kl, objective/kl_coef, ppo/* tags), 300 PPO steps of sentiment tuning. objective/kl rises to ~6 and
      then hovers there while the adaptive controller nudges kl_coef: that is the KL target doing its job. The RM score
      keeps rising (0.25 -> ~2.2, flattening but still up) and the value head's explained variance improves: continue."""),

    C("ok-short-50-steps-trl016-console", b_trl016_console, 6108, (50, 250),
      S(acc=[(0, .1), (50, .27)], comps={"xml": [(0, .4), (50, .68)], "fmt": [(0, .04), (50, .24)]},
        scales={"xml": 0.5, "fmt": 0.5, "acc": 2.0}, P=1, G=8, tau=1.0,
        kl=[(0, 0), (50, .0008)], len=[(0, 190), (50, 170)], lr=[(0, 0), (5, 5e-6), (50, 5e-6)], sm=3,
        gn=[(0, .9), (50, .7)], beta=0.04),
      HEALTHY, "trl grpo trl_console trl_0.16 unsloth logging_every_step short_run early tiny_batch multi_reward",
      """TRL 0.16 console from an Unsloth notebook (logging_steps=1, rewards/<fn> without /mean, completion_length,
      single clip_ratio), only 50 of 250 steps with one prompt x 8 generations per step, so every reward is very noisy.
      The correctness and format rewards trend up through the noise, KL is tiny and lengths steady. Far too early to
      judge anything else: continue."""),

    C("ok-rloo-long-8k-wandb-offline", b_wandb_rloo, 6109, (8000, 12000),
      S(acc=[(0, .2), (2000, .37), (5000, .47), (8000, .535)], G=4, P=64, kl=[(0, 0), (3000, .035), (8000, .06)],
        ent=[(0, .48), (8000, .37)], len=[(0, 520), (8000, 610)], gn=[(0, .2), (8000, .15)],
        lr=[(0, 5e-7), (1, 5e-7)], beta=0.05, sm=120),
      HEALTHY, "trl rloo trl_0.23 wandb_sdk wandb_offline long_run kl_rising slow_learner",
      """TRL RLOO (0.22+ GRPO-style keys, beta 0.05 so kl is logged) in a W&B offline run written by the SDK
      (train/global_step as step metric), step 8000 of 12000. The reward climbs slowly but steadily (~0.28 -> ~0.52),
      still gaining ~0.04 over the last 3000 steps; KL grows gently to ~0.06 alongside it and entropy declines
      slowly. A long slow learner with budget left: continue."""),

    C("ok-clip-high-binding-dapo-hf-tb", b_hf_tb_cliphigh, 6110, (700, 1500),
      S(acc=[(0, .33), (300, .5), (700, .6)], clip=[(0, .12), (700, .15)], clip_hi_share=0.85,
        ent=[(0, .46), (700, .36)], len=[(0, 450), (700, 520)], gn=[(0, .35), (700, .3)],
        evals={"ev": (100, 500, [(0, .31), (700, .575)])}),
      HEALTHY, "trl grpo dapo_loss tensorboard hf_callback num_iterations_2 clip_higher clip_ratio_high "
               "lookalike_large_updates",
      """HF TensorBoard (train/ and eval/ tags) from TRL 0.24 GRPO with num_iterations=2 and epsilon_high=0.28, step
      700 of 1500. clip_ratio/region_mean sits at 0.12-0.15 for the whole run, mostly on the high side: that is the
      DAPO clip-higher bound doing work on a slightly off-policy second pass, not updates running away (it is steady,
      KL is not logged but entropy eases slowly and grad norms are flat). Reward and eval accuracy both rise:
      continue."""),

    C("ok-resume-dup-steps-verl-mlflow", b_mlflow_verl_resume, 6111, 900,
      S(acc=[(0, .31), (400, .6), (900, .7)], ent=[(0, .55), (900, .43)], kl=[(0, 0), (900, .005)],
        len=[(0, 260), (900, 240)], beta=0.001, evals={"ev": (50, 1319, [(0, .33), (400, .62), (900, .72)])}),
      HEALTHY, "verl grpo mlflow_file at_key_rewrite resume duplicate_steps checkpoints",
      """verl logging to an MLflow file store (val-core/openai/gsm8k/acc/mean_at_1). The job crashed at step 460 and
      resumed from global_step_400, so steps 400-460 appear twice in each metric file, in logging order, with the
      resumed values last; checkpoints every 100. Taking the latest value per step, score and validation accuracy
      keep rising through step 900 with entropy and KL calm: continue."""),

    C("ok-train-flat-eval-rising-curriculum-trackio", b_trackio_curriculum, 6112, (1000, 2500),
      S(acc=[(0, .47), (1000, .49)], ent=[(0, .5), (1000, .45)], len=[(0, 700), (1000, 820)],
        gn=[(0, .25), (1000, .22)], evals={"ev": (100, 500, [(0, .31), (500, .4), (1000, .465)])}),
      HEALTHY, "trl grpo trackio sqlite curriculum adaptive_difficulty train_reward_flat eval_rising "
               "lookalike_no_learning",
      """Trackio project database (TRL 0.25 via report_to=trackio), step 1000 of 2500. The training reward sits near
      0.48 for the whole run, which looks like nothing is being learned, but the sampler keeps only prompts the
      current policy solves 30-70% of the time, so the on-policy reward is held near 0.5 by design. The held-out eval
      rises steadily (~0.34 -> ~0.5 over 10 evals) and entropy/lengths are calm: the model is improving. Continue."""),

    # ------------------------------------------------------------------------------------- failures and stops
    C("bad-slow-fall-after-peak-trl020-console", b_trl020_console_evals, 6113, (1200, 2000),
      S(acc=[(0, .3), (250, .55), (480, .66), (540, .662), (1200, .54)], comps={"fmt": [(0, .8), (80, .98), (1200, .99)]},
        ent=[(0, .42), (480, .33), (1200, .52)], len=[(0, 280), (480, 320), (1200, 440)],
        trunc=[(0, .01), (500, .02), (1200, .09)], sm=30,
        evals={"ev": (100, 500, [(0, .28), (250, .52), (500, .625), (1200, .515)])}),
      rollback(450, 700, 800),
      "trl grpo trl_console trl_0.20 peak_then_decline slow_decline entropy_rise length_growth no_checkpoints",
      """TRL 0.20 console log, step 1200 of 2000, eval every 100. The accuracy reward (the format reward is saturated) tops
      out around steps 450-700 and then slides slowly (~0.01 per 100 steps, hidden in per-log noise for a while); the
      eval falls from ~0.62 at 600-700 to ~0.51 by 1100-1200 while entropy, length and truncation creep up. A better
      model lies around steps 450-700; roll back there (no checkpoint in the folder: restore the newest saved one in that
      range)."""),

    C("bad-eval-peaks-early-train-rises-verl-console", b_verl5_console_ckpts, 6114, 500,
      S(acc=[(0, .45), (150, .74), (500, .93)], ent=[(0, .55), (150, .3), (500, .07)], noise={"ent": .006},
        len=[(0, 310), (150, 262), (500, 190)], kl=[(0, 0), (500, .02)], beta=0.001, sm=12,
        evals={"ev": (25, 1319, [(0, .48), (150, .745), (185, .745), (500, .64)])}),
      rollback(150, 225, 300),
      "verl grpo verl_console numpy2_repr eval_decline overfitting train_eval_divergence entropy_collapse checkpoints",
      """verl console (NumPy 2 reprs) with checkpoints every 50 steps. The train score keeps climbing to ~0.93, but
      the gsm8k validation accuracy (every 25 steps, 1319 problems) peaks around steps 175-200 at ~0.75-0.76 and then
      declines step by step to ~0.65 while entropy collapses toward 0.07 and responses shorten: memorising the
      training prompts at the cost of held-out accuracy. Roll back to the eval peak (global_step_150 or 200 are on
      disk)."""),

    C("stop-reward-zero-most-steps-openrlhf-console", b_openrlhf_zero, 6115, 400,
      S(acc=[(0, .0005), (400, .0006)], P=32, G=8, tau=0.6, batch_sd=0.05, len=[(0, 880), (400, 900)],
        trunc=[(0, .52), (400, .55)], kl=[(0, 0), (400, .0004)], log_kl=True, zero_loss_from=0, gn=[(0, .02), (400, .02)],
        clip=[(0, 0), (1, 0)]),
      stop(1), "openrlhf grpo openrlhf_console openrlhf_0.10 no_learning zero_reward zero_std truncation setup_failure",
      """OpenRLHF 0.10 console, 400 steps logged every step. The reward is exactly 0 on almost 9 steps in 10 and never
      above ~0.01 otherwise; rollout reward std and group reward std are ~0, half the responses hit the 1024-token cap,
      grad norms and KL are negligible. With no correct samples the group-normalised advantages carry no signal, so
      nothing has been or will be learned: stop and fix the setup (prompt/answer format, generation length)."""),

    C("stop-task-floor-format-rises-rasbt76-csv", b_rasbt76, 6116, 260,
      S(fmt=[(0, .05), (60, .5), (120, .97), (260, 1.0)], noise={"fmt": 0.0}, len=[(0, 520), (120, 300), (260, 290)],
        ent=[(0, .9), (120, .55), (260, .5)], sm=10, evals={"ev": (50, 500, [(0, 0.0), (260, 0.0)])},
        eval_at_0=False),
      stop(100), "rasbt grpo csv plain_script format_reward task_floor reward_components component_saturation no_learning",
      """reasoning-from-scratch 7_6 CSV (reward_avg = correctness + format_reward_avg), 260 of 500 steps. The format
      reward climbs to 1.0 by step ~120, so reward_avg rises and looks like learning, but it is entirely format: the
      correctness part stays at 0 and MATH-500 eval_acc is 0.0 at every checkpoint. Once every rollout gets the same
      format score adv_std is 0 and updates stop. No better model behind, nothing to gain: stop."""),

    C("stop-eval-never-moves-openrlhf-tb", b_openrlhf_tb_evalflat, 6117, 700,
      S(acc=[(0, .42), (350, .54), (700, .62)], kl=[(0, 0), (700, .03)], log_kl=True, len=[(0, 560), (700, 520)],
        gn=[(0, .3), (700, .25)], clip=[(0, .01), (1, .01)],
        evals={"ev": (50, 500, [(0, .305), (700, .305)])}),
      stop(200), "openrlhf reinforce_pp openrlhf_0.10 tensorboard eval_flat no_generalisation train_memorisation checkpoints",
      """OpenRLHF 0.10 TensorBoard (train/* and eval/eval_math500_pass1 every 50 steps), checkpoints at global_step200/
      400/600. The training reward rises steadily (~0.42 -> ~0.62), but MATH-500 pass@1 sits at ~0.30 at every one of
      14 evals (pass@4 flat too): the gains do not transfer, the policy is fitting its training prompts. No weights are
      better than the current ones on the held-out task and more steps will not change that: stop."""),

    C("bad-rm-hacking-length-verl-ppo-tb", b_verl_ppo_rm_tb, 6118, 480,
      S(score=[(0, -.4), (240, 1.3), (480, 2.6)], score_sd=2.0, beta=0.05, P=32,
        kl=[(0, 0), (240, 2.5), (480, 7.0)], len=[(0, 260), (200, 330), (480, 760)], cap=2048,
        trunc=[(0, 0), (300, .005), (480, .03)], ent=[(0, .62), (480, .5)], ev_var=[(0, .1), (100, .6), (480, .72)],
        evals={"ev": (20, 541, [(0, .52), (220, .628), (265, .63), (480, .48)])}, sm=10),
      rollback(220, 280, 320),
      "verl ppo critic tensorboard reward_model reward_hacking length_growth eval_decline over_optimisation checkpoints",
      """verl PPO with a GAE critic and a reward model, TensorBoard raw keys, checkpoints every 50 steps. The RM score
      (critic/score/mean) rises all the way while responses grow from ~260 to ~760 tokens (no truncation yet) and the
      in-reward KL penalty climbs, but the held-out IFEval accuracy (rule-checked, every 20 steps) peaks ~0.65 at
      steps 240-260 and falls to ~0.45-0.5: the policy is exploiting the RM. Roll back to ~250 (global_step_250 is on
      disk)."""),

    C("bad-entropy-blowup-plain-tb-newstyle", b_newstyle_tb, 6119, (660, 1000),
      S(acc=[(0, .3), (350, .58), (600, .6), (615, .55), (640, .12), (660, .05)],
        ent=[(0, .4), (540, .34), (600, .42), (615, .7), (640, 2.8), (660, 3.4)],
        len=[(0, 350), (600, 380), (620, 600), (640, 1024), (660, 1024)], lenmax=1024, cap=1024,
        trunc=[(0, .02), (600, .02), (640, .9), (660, .95)], kl=[(0, 0), (600, .05), (640, 1.5), (660, 2.4)],
        gn=[(0, .3), (600, .35), (630, 4.0), (660, 6.0)], sm=3, beta=0.02,
        evals={"ev": (50, 500, [(0, .29), (350, .55), (600, .58), (650, .08)])}),
      rollback(450, 600, 612),
      "plain_script grpo tensorboard tensor_scalars new_style own_names entropy_blow_up collapse truncation gibberish",
      """A custom GRPO loop's TensorBoard file with TF2-style tensor scalars and its own tag names, step 660 of 1000.
      After holding ~0.6 reward, entropy starts creeping up at ~550 and then explodes past 3 from ~610, lengths jump to
      the 1024 cap, grad norm and KL spike, and reward and eval accuracy crash to ~0.05-0.08: degenerate output.
      Roll back to the last healthy stretch, up to ~600 before the blow-up."""),

    C("bad-kl-explosion-weight-sync-nemo-wandb", b_nemo_wandb_kl, 6120, (320, 600),
      S(acc=[(0, .35), (260, .66), (280, .665), (300, .5), (320, .3)],
        kl=[(0, 0), (270, .02), (285, .6), (300, 3.5), (320, 6.0)], noise={"kl": .15},
        tmpe=[(0, 1.008), (240, 1.012), (270, 1.03), (290, 1.25), (320, 1.4)],
        ent=[(0, .55), (270, .47), (300, .9), (320, 1.2)], gn=[(0, .15), (270, .2), (290, 2.5), (320, 4.0)],
        len=[(0, 800), (320, 900)], sm=4, lr=[(0, 1e-6), (1, 1e-6)], P=64, G=16,
        evals={"ev": (25, 500, [(0, .36), (275, .655), (300, .5)])}, eval0=25),
      rollback(220, 275, 283),
      "nemo_rl grpo wandb_sdk wandb_offline kl_blow_up token_mult_prob_error weight_sync divergence no_checkpoints",
      """NeMo-RL logging to a W&B offline run (logs/exp_003), step 320 of 600. Training was healthy to ~0.66 reward
      until ~270; then train/token_mult_prob_error climbs past 1.03 toward 1.4 (train/inference mismatch), kl_penalty
      explodes from ~0.02 to >3, grad norms spike, and reward and validation accuracy fall (0.655 at 275 -> 0.50 at
      300). Roll back to the good stretch before ~275 (and fix the weight sync)."""),

    C("bad-finished-best-midrun-trl019-console-ckpts", b_trl019_console_finished, 6121, (2000, 2000),
      S(acc=[(0, .3), (900, .6), (1250, .615), (2000, .585)], len=[(0, 300), (1200, 340), (2000, 420)],
        trunc=[(0, .01), (1200, .02), (2000, .07)], ent=[(0, .45), (1200, .36), (2000, .41)],
        lr=[(0, 0), (50, 1e-6), (2000, 0)], sm=40, P=48,
        evals={"ev": (250, 500, [(0, .28), (1000, .59), (1250, .603), (2000, .545)])}),
      rollback(1000, 1300, 1500),
      "trl grpo trl_console trl_0.19 finished best_midrun eval_decline linear_lr checkpoints",
      """Finished TRL 0.19 run (console at 2000/2000 with the final train_runtime line; checkpoint-250..2000 on
      disk, each with its trainer_state.json), linear LR decay to 0. Train accuracy peaks ~0.615 around 1250 and
      eval accuracy (every 250) peaks ~0.62 at 1250, then both slide (eval ~0.53-0.58 after it) while length and
      truncation grow. Keep the mid-run weights: checkpoint-1250 (1000 is as good)."""),

    C("bad-best-ckpt-deleted-save-limit-trl", b_trl_ckpt_limit, 6122, (1000, 3000),
      S(acc=[(0, .25), (450, .55), (600, .572), (680, .57), (1000, .44)], len=[(0, 420), (600, 400), (1000, 210)],
        ent=[(0, .48), (600, .38), (1000, .14)], gn=[(0, .3), (700, .3), (1000, .6)], sm=25),
      rollback(500, 660, 750),
      "trl grpo trainer_state checkpoints_only save_total_limit best_checkpoint_deleted peak_then_decline "
      "length_collapse entropy_collapse",
      """TRL 0.22, no top-level trainer_state; save_total_limit=2 left only checkpoint-900 and checkpoint-1000, whose
      trainer_state.json carries the history. Reward peaks ~0.56 around 500-660, then falls to ~0.44 as responses
      halve (~400 -> ~210 tokens) and entropy drops: a real decline. The better model is around 500-660 even though no
      checkpoint from then is left in the folder: roll back (restore from wherever else checkpoints were kept), do not
      stop on the current weights."""),

    C("bad-resume-restarted-from-base-hf-tb", b_resume_from_base, 6123, (900, 2000),
      S(crash=640, at=600,
        seg1=S(acc=[(0, .22), (400, .55), (600, .61), (640, .615)], kl=[(0, 0), (600, .09), (640, .092)],
               ent=[(0, .5), (640, .36)], len=[(0, 300), (640, 350)], beta=0.04, sm=15),
        seg2=S(acc=[(0, .22), (600, .22), (900, .47)], kl=[(0, 0), (600, 0), (900, .05)], ent=[(0, .5), (600, .5), (900, .41)],
               len=[(0, 300), (600, 300), (900, 330)], beta=0.04, sm=15)),
      rollback(500, 600, 610),
      "trl grpo tensorboard hf_callback resume duplicate_steps resume_from_base level_reset kl_reset checkpoints",
      """HF TensorBoard with two event files: the first run logged to step 640 (reward ~0.61, KL ~0.09), crashed, and
      the resume from checkpoint-600 wrote a second file starting at 610. In the second file reward drops back to the
      starting ~0.22, KL resets to ~0 and entropy to its initial 0.5: the trainer state was restored but the weights
      were the base model. It is relearning (0.47 at 900) but is still far below checkpoint-600: roll back to 600.""", kind=TwoSegments),

    C("bad-judge-up-exact-match-down-trl-state", b_trl_state_judge, 6124, (700, 1200),
      S(acc=[(0, .3), (300, .47), (360, .475), (700, .32)], comps={"judge": [(0, .45), (700, .88)]}, sm=20,
        len=[(0, 240), (300, 300), (700, 620)], ent=[(0, .4), (700, .47)], trunc=[(0, .0), (700, .02)],
        evals={"ev": (100, 400, [(0, .29), (300, .46), (380, .457), (700, .31)]),
               "evj": (100, 400, [(0, .44), (700, .86)])}),
      rollback(250, 400, 450),
      "trl grpo trainer_state reward_components llm_judge reward_hacking proxy_up task_down length_growth checkpoints",
      """TRL 0.24 trainer_state with checkpoints every 100. The total reward keeps rising because the LLM-judge
      component climbs (~0.48 -> ~0.8), but the exact-match component peaks ~0.48 around 300-400 and falls to ~0.38, the
      eval exact match follows (0.44 -> 0.32), and responses double in length: the judge is being gamed. Roll back to
      the task peak (checkpoint-300 or -400)."""),

    C("mixed-pass-at-k-narrowing-verl-tb", b_verl_tb_passk, 6125, 900,
      S(acc=[(0, .35), (300, .55), (900, .63)], ent=[(0, .6), (300, .28), (900, .06)], noise={"ent": .005},
        kl=[(0, 0), (900, .03)], beta=0.001, len=[(0, 600), (900, 520)], sm=20,
        evals={"ev": (50, 500 * 16, [(0, .38), (300, .5), (900, .505)]),
               "evk": (50, 500, [(0, .78), (250, .84), (350, .838), (900, .70)]),
               "evm": (50, 500, [(0, .45), (300, .56), (900, .55)])}),
      two_sided(300, 450, 550),
      "verl grpo tensorboard pass_at_k mean_at_16 best_at_16 entropy_collapse diversity_loss eval_plateau",
      """verl TensorBoard with MATH validation every 50 steps as mean@16 (pass@1), best@16 (pass@16) and maj@16.
      Train score still rises, but mean@16 has been flat at ~0.50 since step 300 while best@16 falls from ~0.81-0.83 (steps
      350-450) to ~0.72 and entropy collapses to ~0.06: the policy is narrowing, trading coverage for nothing. Weights
      around steps 300-450 are as good on pass@1 and clearly better on pass@k, so rolling back is preferred; stopping is defensible
      if only pass@1 matters."""),

    C("bad-long-20k-slow-fall-wandb-panel-csv", b_wandb_csv_20k, 6126, 20000,
      S(acc=[(0, .2), (4000, .45), (9000, .52), (10500, .522), (20000, .47)], sm=500, P=64,
        kl=[(0, 0), (10000, .05), (20000, .11)], ent=[(0, .5), (10000, .36), (20000, .44)],
        len=[(0, 500), (10000, 560), (20000, 700)], beta=0.02,
        evals={"ev": (500, 800, [(0, .18), (4000, .43), (9500, .50), (10500, .50), (20000, .445)])}),
      rollback(8000, 11000, 13500),
      "trl grpo csv_export wandb_panel_csv downsampled long_run slow_decline eval_decline kl_drift no_checkpoints",
      """W&B panel CSV exports (one file per panel, train/global_step x-axis, __MIN/__MAX bands, downsampled 2:1),
      a 20,000-step run. Reward and eval rise to ~0.52/~0.50 around 9,000-11,000, then decline slowly (reward ~0.48,
      eval ~0.445 by 20,000) while KL keeps growing and entropy and lengths creep up. Over 9,000 steps the decline is
      unmistakable: roll back to ~9,000-11,000."""),

    C("bad-ratio-drift-rasbt74-csv", b_rasbt74, 6127, (350, 500),
      S(acc=[(0, .15), (150, .36), (200, .37), (350, .2)], ratio=[(0, 1.0), (180, 1.02), (230, 1.4), (350, 2.4)],
        noise={"ratio": 0.0}, ent=[(0, .5), (200, .45), (350, 1.3)], len=[(0, 420), (200, 400), (350, 520)],
        sm=8, evals={"ev": (50, 500, [(0, .14), (150, .33), (200, .34), (250, .30), (350, .20)])}, eval0=0),
      rollback(150, 210, 240),
      "rasbt grpo csv plain_script crlf clip_ratio policy_ratio_drift eval_decline entropy_rise percent_eval",
      """reasoning-from-scratch 7_4 CSV (CRLF; eval_acc in percent every 50 steps), 350 of 500 steps. Until ~200
      reward and MATH-500 accuracy rise (eval ~36% at 200) with policy_ratio ~1; then the mean ratio drifts to 2+,
      entropy more than doubles, reward falls to ~0.28 and eval to ~17%: updates too large, the policy is degrading.
      Roll back to ~150-210."""),

    C("stop-lr-schedule-hit-zero-plain-jsonl", b_plain_lr_zero, 6128, (800, 1500),
      S(acc=[(0, .2), (300, .47), (500, .52), (800, .52)], lr=[(0, 0), (20, 2e-6), (100, 1.95e-6), (200, 1.6e-6),
        (300, 1.0e-6), (400, .35e-6), (450, .1e-6), (500, 0), (800, 0)],
        kl=[(0, 0), (500, .041), (800, .041)], noise={"kl": .03}, ent=[(0, .5), (500, .39), (800, .39)],
        len=[(0, 300), (500, 340), (800, 340)], gn=[(0, .3), (800, .25)], sm=15, sm_lr=0),
      stop(500),
      "plain_script grpo jsonl own_names lr_zero schedule_misconfigured frozen_weights plateau",
      """A custom GRPO loop's metrics.jsonl (own key names) with config.json: total_steps 1500 but the cosine
      schedule decays over 500 steps, so lr is exactly 0 from step 500 on. Since then reward, KL, entropy and length are
      flat: the weights are not changing, generation is burning compute for nothing. The current weights equal the
      step-500 ones (the best), so stop (fix the schedule before any further training)."""),

    C("stop-reward-server-outage-trl023-console", b_trl023_console_outage, 6129, (900, 1500),
      S(acc=[(0, .3), (400, .55), (600, .6), (600, 0.0), (900, 0.0)], sm_acc=0, sm=20,
        ent=[(0, .45), (600, .37), (900, .37)], len=[(0, 330), (600, 360), (900, 360)], gn=[(0, .3), (600, .3), (600, 0.0), (900, 0.0)],
        sm_gn=0, noise={"gn": 0.0}, zero_loss_from=600),
      stop(600),
      "trl grpo trl_console trl_0.23 reward_outage zero_reward zero_std no_learning_signal frozen_weights",
      """TRL 0.23 console, step 900 of 1500, beta 0. The remote math-verify reward rises to ~0.6, then from step 600
      every completion scores exactly 0 (the header says the server falls back to 0.0 on timeout): reward_std and
      grad_norm are 0 and frac_reward_zero_std is 1, so no update has happened since step 600. The weights are those of
      step 600, the best point, and the run is burning compute: stop (fix the reward service, then resume)."""),
]


def write_run(case, folder):
    rng = np.random.default_rng(case.seed)
    run = case.scenario(rng, case.reached, case.planned)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)


HEADER = """# Holdout set 6: hand-built runs written by make_holdout6.py (independent of the assessor, its judges and the
# generators of holdouts 1-5). Labels: what a practitioner should do with each run (DESIGN.md decision contract);
# rollback_window is inclusive; onset_step is where the problem becomes visible.
"""


def main():
    kit.build(HERE, "make_holdout6.py", "holdout6.yaml", "h6-", "holdout6", HEADER, CASES, write_run)


if __name__ == "__main__":
    main()
