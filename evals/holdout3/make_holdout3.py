#!/usr/bin/env python
"""Holdout set 3: 30 hand-built RL post-training runs in varied on-disk formats, with labels.

    .venv/bin/python evals/holdout3/make_holdout3.py      # writes runs/ (gitignored) and holdout3.yaml

Written apart from the assessor's generator and judge (nothing here imports the assessor). Deterministic (fixed
seeds). Layout: curve shapes (saturating rises, slow creeps), a simulator that turns true curves into per-step
metrics (AR(1) drift around the true success rate, binomial batch means, per-key noise), the scenario vocabulary
(what goes wrong, or looks wrong but is not), one writer per on-disk format, and the case table. Labels follow the
decision contract in DESIGN.md (see ../holdout_kit.py): what a practitioner should do with each run.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import holdout_kit as kit  # noqa: E402
from holdout_kit import HEALTHY, Case, rollback, stop  # noqa: E402

# ------------------------------------------------------------------------------------------------ curve shapes
# Functions of (s, T): s the steps 1..T. A number is a constant.

def sat(lo, hi, tau):
    """Saturating rise (or fall) from lo to hi with time constant tau."""
    return lambda s, T: lo + (hi - lo) * (1 - np.exp(-s / tau))


def creep(lo, gain, k=1.0):
    """lo + gain * (s/T)^k: a slow learner, a slowly growing KL."""
    return lambda s, T: lo + gain * (s / T) ** k


def cv(spec, s, T):
    return np.asarray(spec(s, T), float) * np.ones(len(s)) if callable(spec) else np.full(len(s), float(spec))


def clip01(x):
    return np.clip(x, 0, 1)


def ar1(rng, n, phi, sd):
    e = rng.normal(0, sd * math.sqrt(1 - phi * phi), n)
    x = np.zeros(n)
    x[0] = rng.normal(0, sd)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


def bmean(rng, p, n):
    return rng.binomial(n, clip01(np.asarray(p, float))) / n


# ------------------------------------------------------------------------------------------------ the simulator

@dataclass
class Sim:
    T: int
    planned: int
    m: dict                                    # neutral per-step arrays (index i = step i+1)
    ev: dict = field(default_factory=dict)     # step -> {eval key (neutral "acc" or a framework key): value}
    rng: np.random.Generator | None = None     # the writers add their framework's own noise keys


def run(p, *, ent=0.5, kl=None, length=300.0, batch=128, group=8, cap=1024, ar=(0.9, 0.03), gn=0.2, gn_sd=0.25,
        lr=1e-6, ev=None, events=()):
    """A policy-gradient run: the true success rate `p` drifts (AR(1)) and each step's reward is a binomial batch
    mean; entropy, KL and length get multiplicative noise. ev = (curve or "p" factor, every, items, first step):
    held-out accuracy sampled binomially. `events` change the true curves first, then the sampled metrics."""
    def make(rng, T, planned):
        s = np.arange(1, T + 1, dtype=float)
        c = {"p": cv(p, s, T), "ent": cv(ent, s, T), "kl": None if kl is None else cv(kl, s, T),
             "length": cv(length, s, T), "gn": np.full(T, 1.0), "clipfrac": np.zeros(T), "pg": np.zeros(T),
             "stress": np.zeros(T)}
        for event in events:
            event("pre", c, s, rng)
        pp = np.clip(c["p"] + ar1(rng, T, *ar), 0.001, 0.999)
        r = bmean(rng, pp, batch)
        L = np.clip(c["length"] * np.exp(rng.normal(0, 0.06, T)), 5, cap)
        m = {"p": c["p"], "pp": pp, "reward": r, "reward_std": np.sqrt(r * (1 - r)) + rng.normal(0, 0.01, T),
             "zero_std": clip01(pp ** group + (1 - pp) ** group + 0.075 * (1 - np.abs(2 * pp - 1)) ** 0.5
                                + rng.normal(0, 0.04, T)),
             "length": L, "cap": cap, "clipped": clip01((L / cap) ** 4 + rng.normal(0, 0.005, T)),
             "grad_norm": np.abs(rng.lognormal(math.log(gn), gn_sd, T)) * c["gn"],
             "lr": lr * np.minimum(1, s / 20), "entropy": c["ent"] * np.exp(rng.normal(0, 0.05, T)),
             "loss": rng.normal(0, 0.004, T) + (c["kl"] * 0.04 if c["kl"] is not None else 0),
             "step_time": 40 + L / 20 + rng.normal(0, 2, T), "clipfrac": c["clipfrac"], "pg": c["pg"],
             "stress": c["stress"], "batch": batch}
        if c["kl"] is not None:
            m["kl"] = np.maximum(c["kl"] * np.exp(rng.normal(0, 0.15, T)), 1e-6)
        sim = Sim(T, planned, m, rng=rng)
        if ev is not None:
            curve, every, items, first = ev
            steps = np.arange(first, T + 1, every)
            truth = c["p"][np.maximum(steps - 1, 0).astype(int)] * curve if isinstance(curve, float) else \
                cv(curve, steps.astype(float), T)
            sim.ev = {int(k): {"acc": float(rng.binomial(items, clip01(a)) / items)} for k, a in zip(steps, truth,
                                                                                                 strict=True)}
        for event in events:
            event("post", sim, s, rng)
        return sim
    return make


# ----------------------------------------------------------------------------------------- scenario vocabulary

def pre(fn):
    return lambda stage, c, s, rng: fn(c, s, rng) if stage == "pre" else None


def post(fn):
    return lambda stage, sim, s, rng: fn(sim, s, rng) if stage == "post" else None


def ramp(s, at, span):
    return np.clip((s - at) / span, 0, 1)


def dip(at, width, size):
    """A transient instability that heals: reward dips, entropy spikes, answers lengthen, grad-norm burst."""
    def fn(c, s, rng):
        g = np.exp(-(((s - at) / width) ** 2))
        c["p"], c["ent"], c["length"] = c["p"] - size * g, c["ent"] + 0.55 * g, c["length"] + 150 * g
        c["gn"], c["clipfrac"], c["kl"] = c["gn"] * (1 + 6 * g), c["clipfrac"] + 0.01 * g, c["kl"] + 0.02 * g
    return pre(fn)


def decline(at, span, size, k=1.2, ent=0.0, length=0.0):
    """A slow slide from `at` over `span` steps: reward by `size`, entropy up, answers longer."""
    def fn(c, s, rng):
        r = ramp(s, at, span)
        c["p"], c["ent"], c["length"] = c["p"] - size * r ** k, c["ent"] + ent * r ** k, c["length"] + length * r ** 1.3
    return pre(fn)


def collapse(at):
    """Sudden collapse at `at`: reward to ~0 within a few steps, entropy ~7.5 (degenerate text), responses at the
    cap, clip fractions, KL and grad norm jump."""
    def fn(c, s, rng):
        k = np.maximum(0, s - at + 1)
        col = np.where(k > 0, 1 - np.exp(-k / 2.5), 0)
        c["p"] = np.maximum(np.where(s >= at, c["p"][int(at) - 2] * np.exp(-(s - at) / 2.0), c["p"]), 0.02)
        c["ent"] = c["ent"] * (1 - col) + 7.5 * col
        c["kl"] = c["kl"] + 2.4 * col
        c["length"] = c["length"] * (1 - col) + 1010 * col
        c["gn"], c["clipfrac"], c["pg"] = c["gn"] * (1 + 60 * col * np.exp(-k / 10)), 0.3 * col, 0.4 * col
    return pre(fn)


def nan_blowup(at):
    """Grad norm escalates x3 -> x80 over the 12 steps before `at`; from `at` loss, grad norm, KL and entropy are
    NaN, reward 0, every completion at the cap."""
    def fn(sim, s, rng):
        m, bad = sim.m, s >= at
        m["grad_norm"][(s >= at - 12) & ~bad] *= np.linspace(3, 80, 12)
        for k in ("loss", "grad_norm", "kl", "entropy"):
            m[k][bad] = np.nan
        m["reward"][bad] = m["reward_std"][bad] = 0.0
        m["zero_std"][bad], m["length"][bad], m["clipped"][bad] = 1.0, float(m["cap"]), 1.0
    return post(fn)


def length_explosion(at, span):
    """From `at` responses grow to the cap within `span` steps, entropy rises and reward falls by ~80%."""
    def fn(c, s, rng):
        blow = ramp(s, at, span)
        c["p"], c["length"], c["ent"] = c["p"] * (1 - 0.78 * blow), 300 + 724 * blow ** 1.5, 0.4 + 1.6 * blow ** 2
        c["stress"] = blow
    return pre(fn)


def entropy_collapse(at):
    """Entropy falls exponentially to ~0.02 from `at`: groups all identical, outputs shorter, KL jumps, reward and
    eval fall back."""
    def fn(c, s, rng):
        c["ent"] = np.where(s < at, c["ent"], 0.5 * np.exp(-(s - at) / 25) + 0.015)
        c["p"] = c["p"] - 0.12 * ramp(s, at + 20, 150)
        c["length"] = c["length"] - 250 * ramp(s, at, 80)
        c["kl"] = c["kl"] + 0.5 * ramp(s, at, 100)
    return pre(fn)


def kl_drift(at):
    """KL to the reference keeps climbing and accelerates after `at`; grad norm and clip ratio grow with it."""
    def fn(c, s, rng):
        c["kl"] = 0.01 + 0.08 * s / 300 + np.where(s > at, 0.08 * (np.exp((s - at) / 210) - 1), 0)
        c["gn"], c["clipfrac"] = 1 + 1.2 * s / len(s), 0.006 + 0.02 * s / len(s)
    return pre(fn)


def components(fmt_curve, acc_key="accuracy_reward", fmt_key="format_reward"):
    """Two reward functions summed: the sampled one is accuracy; format follows its own curve."""
    def fn(sim, s, rng):
        m = sim.m
        fr = bmean(rng, clip01(cv(fmt_curve, s, sim.T) + ar1(rng, sim.T, 0.8, 0.02)), m["batch"])
        m["comps"] = {acc_key: m["reward"], fmt_key: fr}
        m["reward"] = m["reward"] + fr
        m["reward_std"] = np.sqrt(fr * (1 - fr) + m["comps"][acc_key] * (1 - m["comps"][acc_key]))
    return post(fn)


def rename_reward(key):
    """The single reward function's name, as logged (rewards/<key>/mean)."""
    return post(lambda sim, s, rng: sim.m.update(comps={key: sim.m["reward"]}))


def grad_spikes(count, nan_at=()):
    """Isolated grad-norm spikes of 10-40x after step 50 (and NaN grad norms at `nan_at`); nothing follows them."""
    def fn(sim, s, rng):
        g = sim.m["grad_norm"]
        for i in rng.choice(np.arange(50, sim.T), count, replace=False):
            g[i] *= rng.uniform(10, 40)
        g[[k - 1 for k in nan_at]] = np.nan
    return post(fn)


def eval_rows(fn):
    """Eval rows with framework keys: fn(step, acc, rng) -> dict."""
    return post(lambda sim, s, rng: sim.ev.update({k: fn(k, v["acc"], rng) for k, v in sim.ev.items()}))


def set_eval(values, every):
    """Eval values given outright (a wobble, a plateau someone would recognise), one every `every` steps."""
    return post(lambda sim, s, rng: setattr(sim, "ev", {every * (k + 1): {"acc": v} for k, v in enumerate(values)}))


def dpo(overfit_at=None):
    """TRL DPO. Healthy: loss falls from ln 2, accuracies and margins rise, eval follows. overfit_at: margins keep
    growing and train accuracy -> 1 while eval loss climbs and eval accuracy slips (likelihood displacement)."""
    def make(rng, T, planned):
        s = np.arange(1, T + 1, dtype=float)
        if overfit_at is None:
            acc, margin, chosen = cv(sat(.5, .76, 180), s, T), cv(sat(0, 1.6, 250), s, T), -0.2 * s / T
            m = {"loss": np.log1p(np.exp(-margin)) + rng.normal(0, 0.05, T),
                 "grad_norm": rng.lognormal(math.log(6), 0.4, T), "learning_rate": 5e-7 * np.minimum(1, s / 30),
                 "rewards/chosen": chosen + margin / 2 + rng.normal(0, 0.2, T),
                 "rewards/rejected": chosen - margin / 2 + rng.normal(0, 0.2, T),
                 "rewards/accuracies": clip01(acc + rng.normal(0, 0.08, T)),
                 "logps/chosen": -260 - 15 * s / T + rng.normal(0, 25, T),
                 "logps/rejected": -290 - 40 * s / T + rng.normal(0, 25, T),
                 "logits/chosen": -2.4 + rng.normal(0, 0.2, T), "logits/rejected": -2.5 + rng.normal(0, 0.2, T)}
            ev = {}
            for st in range(100, T + 1, 100):
                mg = 1.6 * (1 - math.exp(-st / 250))
                ev[st] = {"eval_loss": round(math.log1p(math.exp(-mg * 0.85)) + rng.normal(0, 0.006), 4),
                          "eval_rewards/accuracies": round(0.5 + 0.22 * (1 - math.exp(-st / 200))
                                                           + rng.normal(0, 0.01), 4),
                          "eval_rewards/margins": mg * 0.85, "eval_runtime": 88.1}
        else:
            margin = 0.6 + 10 * (s / 300 / 3) ** 1.5
            m = {"loss": np.log1p(np.exp(-margin)) + np.abs(rng.normal(0, 0.02, T)),
                 "grad_norm": rng.lognormal(math.log(4), 0.4, T) * (1.3 - 0.3 * s / T),
                 "learning_rate": 5e-6 * np.maximum(0, 1 - s / T),
                 "rewards/accuracies": clip01(0.62 + 0.38 * (1 - np.exp(-s / 200)) + rng.normal(0, 0.03, T)),
                 "rewards/chosen": -1.5 * (s / T) ** 1.3 + rng.normal(0, 0.3, T)}
            m["rewards/rejected"] = m["rewards/chosen"] - margin + rng.normal(0, 0.3, T)
            m["logps/chosen"] = -180 - 230 * (s / T) ** 1.3 + rng.normal(0, 15, T)
            m["logps/rejected"] = -210 - 520 * (s / T) ** 1.3 + rng.normal(0, 15, T)
            ev = {}
            for st in range(50, T + 1, 50):
                late = max(0, st - overfit_at)
                ev[st] = {"eval_loss": round(0.69 - 0.17 * (1 - math.exp(-st / 120)) + 8.5e-7 * late ** 2
                                             + rng.normal(0, 0.006), 4),
                          "eval_rewards/accuracies": round(0.5 + 0.22 * (1 - math.exp(-st / 120))
                                                           - 0.08 * (late / 600) ** 1.2 + rng.normal(0, 0.008), 4),
                          "eval_rewards/margins": round(0.9 + 1.5 * st / T, 3), "eval_runtime": 41.7}
        m["rewards/margins"] = m["rewards/chosen"] - m["rewards/rejected"]
        return Sim(T, planned, {"dpo": m}, ev, rng)
    return make


# ========================================================================================== on-disk formats

def rnd(v, nd=6):
    if isinstance(v, float) and math.isfinite(v):
        return float(f"{v:.{nd}g}")
    return v


def trl_per_step(sim, kl=True):
    """TRL GRPO per-step metrics (before the logging window averages them)."""
    m = sim.m
    if "dpo" in m:
        return dict(m["dpo"])
    L, c = m["length"], m["clipped"]
    d = {"reward": m["reward"], "reward_std": m["reward_std"], "frac_reward_zero_std": m["zero_std"],
         "completions/mean_length": L, "completions/min_length": L * sim.rng.uniform(0.2, 0.4, sim.T),
         "completions/max_length": np.minimum(m["cap"], L * sim.rng.uniform(2.0, 3.2, sim.T)),
         "completions/clipped_ratio": c, "completions/mean_terminated_length": L * (1 - 0.5 * c),
         "grad_norm": m["grad_norm"], "learning_rate": m["lr"], "loss": m["loss"],
         "clip_ratio/region_mean": np.zeros(sim.T), "clip_ratio/low_mean": np.zeros(sim.T),
         "clip_ratio/high_mean": np.zeros(sim.T), "step_time": m["step_time"], "entropy": m["entropy"]}
    if kl and "kl" in m:
        d["kl"] = m["kl"]
    for name, v in m.get("comps", {"accuracy_reward": m["reward"]}).items():
        d[f"rewards/{name}/mean"], d[f"rewards/{name}/std"] = v, np.sqrt(np.clip(v * (1 - v), 0, None))
    d["num_tokens"] = np.cumsum((L + 180) * m["batch"])
    return d


def aggregate(per_step, every, T, last_keys=("grad_norm", "learning_rate", "num_tokens")):
    """TRL-style logging: mean of the values since the previous log (last value for some keys)."""
    rows = []
    for end in range(every, T + 1, every):
        row = {"step": end}
        for k, v in per_step.items():
            seg = np.asarray(v[end - every:end], float)
            ok = seg[np.isfinite(seg)]
            row[k] = float(seg[-1]) if k in last_keys else (float(ok.mean()) if len(ok) else float("nan"))
        rows.append(row)
    return rows


def trl_eval(sim, step):
    e = sim.ev.get(step)
    if e is None or "acc" not in e:
        return e
    return {"eval_reward": e["acc"], "eval_rewards/accuracy_reward/mean": e["acc"],
            "eval_runtime": round(float(sim.rng.uniform(180, 240)), 2), "eval_samples_per_second": 2.4,
            "eval_steps_per_second": 0.3}


def write_trl_dir(sim, d, every=10, spe=1000, ckpts=(), top_level=True, eval_steps=100, save_steps=100,
                  null_reward_at=(), final=False):
    """A TRL output dir: checkpoint-N/trainer_state.json (+ adapter files), and the top-level one if saved."""
    rows = aggregate(trl_per_step(sim), every, sim.T)
    hist = []
    for row in rows:
        h = {k: rnd(v) for k, v in row.items() if k != "step"}
        if row["step"] in null_reward_at:   # an all-NaN logging window: TRL logs null
            h.update({k: None for k in h if k.startswith(("reward", "rewards/"))})
        if isinstance(h.get("loss"), float) and math.isfinite(h["loss"]):
            h["loss"] = round(h["loss"], 4)
        h["epoch"], h["step"] = round(row["step"] / spe, 4), row["step"]
        hist.append(h)
        if (e := trl_eval(sim, row["step"])) is not None:
            hist.append({**e, "epoch": h["epoch"], "step": row["step"]})
    if final:
        hist.append({"epoch": 1.0, "step": sim.T, "total_flos": 0.0, "train_loss": 0.0021, "train_runtime": 41233.9,
                     "train_samples_per_second": 0.776, "train_steps_per_second": 0.012})

    def state(step, h):
        return kit.trainer_state(h, step, sim.planned, every, save_steps, eval_steps, round(step / spe, 4),
                                 math.ceil(sim.planned / spe), step >= sim.planned)

    for c in ckpts:
        cd = d / f"checkpoint-{c}"
        kit.dump_json(cd / "trainer_state.json", state(c, [x for x in hist if x["step"] <= c and "train_runtime" not in x]))
        (cd / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 16, "lora_alpha": 32}))
        (cd / "adapter_model.safetensors").write_bytes(b"\0" * 64)
        (cd / "training_args.bin").write_bytes(b"\0" * 16)
    if top_level:
        kit.dump_json(d / "trainer_state.json", state(sim.T, hist))


def tqdm_bar(i, T, secs):
    pct, el, rem = int(100 * i / T), int(i * secs), int((T - i) * secs)
    return (f"{pct:3d}%|{'█' * (pct // 10)}{' ' * (10 - pct // 10)}| {i}/{T} [{el // 60:02d}:{el % 60:02d}<"
            f"{rem // 3600}:{(rem // 60) % 60:02d}:{rem % 60:02d}, {secs:.2f}s/it]")


def write_trl_console(sim, d, name, header, every=5, bar_total=500, secs=3.4, spe=934, bars="cr", kl=True,
                      extra=None):
    """A TRL script's stdout: tqdm bars (joined by \\r, or run together) and one repr'd dict per log step."""
    per = trl_per_step(sim, kl=kl)
    per.update(extra(sim) if extra else {})
    lines = list(header)
    for r in aggregate(per, every, sim.T):
        st = r["step"]
        bar = [tqdm_bar(j, bar_total, secs) for j in range(st - every + 1, st + 1)]
        lines.append("\r".join(bar) if bars == "cr" else "".join("  " + b for b in bar))
        out = {k: (rnd(v) if math.isfinite(v) else float("nan")) for k, v in r.items() if k != "step"}
        if math.isfinite(out.get("loss", 0.0)):
            out["loss"] = round(out["loss"], 4)
        lines.append(repr({**out, "epoch": round(st / spe, 2)}))
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text("\n".join(lines) + "\n")


def verl_metrics(sim, i, scale=1.0):
    """One verl step's metrics from the neutral run (critic/score on `scale`: 1 for 0..1, 2 for -1..1)."""
    m, rng, st = sim.m, sim.rng, i + 1
    sc = float(m["reward"][i]) * scale - (scale - 1)
    out = {"actor/entropy": m["entropy"][i], "actor/kl_loss": m["kl"][i] if "kl" in m else None,
           "actor/kl_coef": 0.001 if "kl" in m else None,
           "actor/pg_loss": rng.normal(0, 0.02) + m["pg"][i], "actor/pg_clipfrac": 0.002 + m["clipfrac"][i],
           "actor/ppo_kl": rng.normal(0, 1e-4) + m["pg"][i] / 8, "actor/pg_clipfrac_lower": m["pg"][i] / 20,
           "actor/grad_norm": m["grad_norm"][i], "actor/lr": float(m["lr"][i]), "training/global_step": st,
           "critic/score/mean": sc, "critic/score/max": 1.0, "critic/score/min": 0.0 if scale == 1 else -1.0,
           "critic/rewards/mean": sc, "critic/advantages/mean": rng.normal(0, 0.003),
           "response_length/mean": m["length"][i], "response_length/max": float(m["cap"]),
           "response_length/min": 0.2 * m["length"][i], "prompt_length/mean": 104.3,
           "response_length/clip_ratio": m["clipped"][i], "timing_s/gen": 0.55 * m["step_time"][i],
           "timing_s/step": m["step_time"][i]}
    return {k: (float(v) if isinstance(v, float | np.floating) else v) for k, v in out.items() if v is not None}


def fmt_np(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "np.float64(nan)"
    return f"np.int64({int(v)})" if isinstance(v, int | np.integer) else f"np.float64({float(v)!r})"


def verl_line(step, metrics, np_style=True, prefix="(TaskRunner pid=2713457) "):
    parts = [f"step:{step}"] + [f"{k}:{fmt_np(v)}" if np_style else
                                f"{k}:{'nan' if v is None or not math.isfinite(v) else f'{v:.3f}'}"
                                for k, v in metrics.items()]
    return prefix + " - ".join(parts)


def write_verl_console(sim, d, name="train.log", val="val-core/openai/gsm8k/reward/mean@1", scale=1.0,
                       np_style=True, resume=None, ckpt_every=None, ckpt_dir="gsm8k/grpo", header=(), dapo=False):
    """verl's console (Ray prefixes, np.float64(...) or %.3f values); resume=(crash, restart): the run died at
    `crash`, a second process restored `restart` and logged restart+1.. again; checkpoints global_step_N."""
    key = val

    def val(st):
        return {key: sim.ev[st]["acc"], "timing_s/testing": 35.2} if st in sim.ev else {}

    def extra():
        return {"train/num_gen_batches": int(sim.rng.integers(1, 4))} if dapo else {}

    def block(lo, hi, pid):
        out = [verl_line(lo - 1, val(lo - 1), np_style, f"(TaskRunner pid={pid}) ")] if lo - 1 in sim.ev else []
        for st in range(lo, hi + 1):
            out.append(verl_line(st, {**verl_metrics(sim, st - 1, scale), **extra(), **val(st)}, np_style,
                                 f"(TaskRunner pid={pid}) "))
            if st % 233 == 0:
                out.append(f"(TaskRunner pid={pid}) Training Progress:  {100 * st // sim.planned}%|██        | "
                           f"{st}/{sim.planned} [..]")
        return out

    lines = ["2025-06-11 09:12:03,118 INFO worker.py:1843 -- Started a local Ray instance.", *header,
             f"(TaskRunner pid=2713457) Total training steps: {sim.planned}"]
    if resume:
        crash, restart = resume
        lines += [
            *block(1, crash, 51234),
            "(raylet) [2025-07-02 03:14:55] node 10.0.0.4 died: OOM killer", "Traceback (most recent call last):",
            "  ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
            "+ python3 -m verl.trainer.main_ppo ... trainer.resume_mode=auto",
            f"(TaskRunner pid=80111) Load from checkpoint folder: checkpoints/{ckpt_dir}/global_step_{restart}",
            f"(TaskRunner pid=80111) Setting global step to {restart}", *block(restart + 1, sim.T, 80111)]
    else:
        lines += block(1, sim.T, 2713457)
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text("\n".join(lines) + "\n")
    if ckpt_every:
        base = d / "checkpoints" / ckpt_dir
        for c in range(ckpt_every, sim.T + 1, ckpt_every):
            (base / f"global_step_{c}" / "actor").mkdir(parents=True)
            (base / f"global_step_{c}" / "actor" / "model_world_size_8_rank_0.pt").write_bytes(b"\0" * 32)
        (base / "latest_checkpointed_iteration.txt").write_text(str(sim.T - sim.T % ckpt_every))


def write_verl_jsonl(sim, d, null_grad_at=()):
    """verl's file logger: {"step": N, "data": {...}} per line, NaN written as null (orjson)."""
    key = "val-core/openai/gsm8k/reward/mean@4"
    out = [json.dumps({"step": 0, "data": {key: sim.ev[0]["acc"], key.replace("mean@4", "best@4/mean"): 0.55}})]
    for i in range(sim.T):
        st = i + 1
        m = {**verl_metrics(sim, i), "critic/score/min": -1.0, "train/num_gen_batches": int(sim.rng.integers(1, 3))}
        if st in null_grad_at:
            m["actor/grad_norm"] = None
        if st in sim.ev:
            m[key] = sim.ev[st]["acc"]
            m[key.replace("mean@4", "best@4/mean")] = min(1.0, sim.ev[st]["acc"] + 0.2)
        out.append(json.dumps({"step": st, "data": m}))
    (d / "gsm8k_dapo").mkdir(parents=True, exist_ok=True)
    (d / "gsm8k_dapo" / "dapo_q7b_bs1024.jsonl").write_text("\n".join(out) + "\n")


def write_tb(sim, d, flavour, logdir, wall0, secs, host="node-7", every=10, resume=None, ckpts=(),
             eval_key="eval/eval_math_pass1", epochs=None, val="val-core/openai/gsm8k/acc/mean@1"):
    """TensorBoard scalars as each framework names them. flavour: trl (train/ + eval/ tags, logging window),
    verl (raw keys), openrlhf (train/ keys, eval/eval_*_pass1), nemo (train/ + validation/, logged at step+1).
    resume=(crash, restart): a second event file re-logs restart+1..crash."""
    m, rng, T = sim.m, sim.rng, sim.T
    by_step: dict[int, dict] = {}
    if flavour == "trl":
        for r in aggregate(trl_per_step(sim), every, T):
            by_step[r["step"]] = {"train/" + k: v for k, v in r.items() if k != "step"}
            if epochs:
                by_step[r["step"]].update({"train/epoch": r["step"] / epochs, "train/global_step": r["step"]})
        for st, e in sim.ev.items():
            by_step.setdefault(st, {}).update({"eval/reward": e["acc"], **({"eval/runtime": 410.0} if epochs else {})})
    for i in range(T) if flavour != "trl" else ():
        st = i + 1
        if flavour == "verl":
            row = {"critic/score/mean": m["reward"][i], "critic/rewards/mean": m["reward"][i],
                   "critic/score/max": 1.0, "critic/score/min": 0.0, "actor/entropy": m["entropy"][i],
                   "actor/kl_loss": m["kl"][i], "actor/pg_loss": rng.normal(0, 0.01),
                   "actor/grad_norm": m["grad_norm"][i], "actor/pg_clipfrac": abs(rng.normal(0.002, 0.001)),
                   "actor/ppo_kl": rng.normal(0, 2e-4), "actor/lr": m["lr"][i],
                   "response_length/mean": m["length"][i], "response_length/clip_ratio": m["clipped"][i],
                   "timing_s/step": m["step_time"][i], "timing_s/gen": 0.6 * m["step_time"][i]}
            key = val
        elif flavour == "openrlhf":
            row = {"train/reward": m["reward"][i], "train/return": m["reward"][i] - 0.05 * m["kl"][i],
                   "train/kl": m["kl"][i], "train/policy_loss": rng.normal(0, 0.03),
                   "train/response_length": m["length"][i], "train/total_length": m["length"][i] + 180,
                   "train/entropy_loss": m["entropy"][i], "train/actor_grad_norm": m["grad_norm"][i],
                   "train/ppo_clip_ratio": abs(rng.normal(0.004 + m["clipfrac"][i], 0.003)),
                   "train/actor_lr": m["lr"][i], "train/group_reward_std": m["reward_std"][i] * 0.5,
                   "train/global_step": st}
            key = eval_key
        else:
            pct0 = np.clip(100 * (1 - m["pp"][i]) ** 16 * 1.9 + rng.normal(0, 2), 0, 100)
            row = {"train/reward": m["reward"][i], "train/loss": rng.normal(0, 0.01),
                   "train/grad_norm": m["grad_norm"][i], "train/lr": m["lr"][i], "train/kl_penalty": m["kl"][i],
                   "train/approx_entropy": m["entropy"][i], "train/baseline_reward/pct_0": pct0,
                   "train/baseline_reward/pct_1": 0.4, "train/baseline_reward/pct_mixed": 100 - pct0 - 0.4,
                   "train/mean_gen_tokens_per_sample": m["length"][i], "train/truncation_rate": m["clipped"][i],
                   "train/token_mult_prob_error": 1.004 + abs(rng.normal(0, 0.001)),
                   "timing/train/total_step_time": m["step_time"][i], "timing/train/generation": 0.7 * m["step_time"][i]}
            key, st = "validation/accuracy", st + 1     # NeMo-RL logs at total_steps + 1
        by_step[st] = row
        if i + 1 in sim.ev:
            by_step[st][key] = sim.ev[i + 1]["acc"]
    if 0 in sim.ev and flavour != "trl":
        by_step[0] = {val: sim.ev[0]["acc"]}
    events = [(wall0 + st * secs, st, v) for st, v in sorted(by_step.items())]
    name = f"events.out.tfevents.{int(wall0)}.{host}.{1000 + int(wall0) % 9000}.0"
    if resume:
        crash, restart = resume
        wall1 = wall0 + crash * secs + 900 - restart * secs
        kit.tb_file(d / logdir / name, [e for e in events if e[1] <= crash])
        kit.tb_file(d / logdir / f"events.out.tfevents.{int(wall1)}.{host}.{1000 + int(wall1) % 9000}.0",
                    [(wall1 + st * secs, st, v) for _, st, v in events if st > restart])
    else:
        kit.tb_file(d / logdir / name, events)
    for c in ckpts:
        (d / c).mkdir(parents=True, exist_ok=True)
        step = int(c.rsplit("step", 1)[-1].rsplit("-", 1)[-1])
        (d / c / ("client_state.json" if "global_step" in c else "config.json")).write_text(
            json.dumps({"global_step": step, "episode": step * 256}) if "global_step" in c else "{}")


def write_csv(sim, d, name, kl_cols=False, evals=None):
    """reasoning-from-scratch ch07 CSV: 8 rollouts per step, eval_acc (%) at step 1 and on the 50-step checkpoints."""
    m, rng = sim.m, sim.rng
    evals = evals or {1: 15.6, **{k: round(100 * e["acc"], 1) for k, e in sim.ev.items()}}
    hdr = ["step", "total_steps", "loss", *(["kl_loss", "policy_ratio"] if kl_cols else []), "reward_avg",
           "tokens_per_sec", "avg_response_len", "adv_avg", "adv_std", "entropy_avg", "eval_acc"]
    lines = [",".join(hdr)]
    for i in range(sim.T):
        st, r = i + 1, float(m["reward"][i])
        adv_std = 0.0 if r in (0.0, 1.0) else 0.9997
        row = {"step": st, "total_steps": sim.planned,
               "loss": 0.0 if adv_std == 0 else float(rng.normal(0, 0.6) - 40 * m["stress"][i] * rng.random()),
               "kl_loss": float(0.02 * st / sim.T + rng.normal(0, 0.02)),
               "policy_ratio": None if adv_std == 0 else float(rng.lognormal(0, 0.15)), "reward_avg": r,
               "tokens_per_sec": float(24 - 6 * m["stress"][i] + rng.normal(0, 1.5)),
               "avg_response_len": float(min(1024, max(30, m["length"][i]))), "adv_avg": 0.0, "adv_std": adv_std,
               "entropy_avg": float(m["entropy"][i]), "eval_acc": evals.get(st)}
        lines.append(",".join("" if row[h] is None else (f"{row[h]:.6f}" if isinstance(row[h], float) else
                                                         str(row[h])) for h in hdr))
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text("\r\n".join(lines) + "\r\n")


def write_plain_jsonl(sim, d):
    """A home-made loop with its own names (it, avg_reward, kl_div, ent, heldout_pass@1) every 10 iterations."""
    m, out = sim.m, []
    for it in range(10, sim.T + 1, 10):
        i = it - 1
        rec = {"it": it, "avg_reward": round(float(m["reward"][i]), 4), "kl_div": round(float(m["kl"][i]), 5),
               "ent": round(float(m["entropy"][i]), 4), "resp_len": round(float(m["length"][i])), "lr": 3e-7,
               "gnorm": round(float(m["grad_norm"][i]), 4), "wall": round(1_700_000_000 + it * 31.4, 1)}
        if it in sim.ev:
            rec["heldout_pass@1"] = sim.ev[it]["acc"]
        out.append(json.dumps(rec))
    d.mkdir(parents=True, exist_ok=True)
    (d / "metrics.jsonl").write_text("\n".join(out) + "\n")
    (d / "notes.txt").write_text("reinforce++ baseline, Llama-3.1-8B-Instruct, code tasks, custom loop; lr 3e-7; "
                                 f"planned {sim.planned} iterations\n")


def write_mlflow_file(sim, d, every=10):
    """An MLflow file store written by hand (HF callback raw keys; nested dirs for completions/ and rewards/)."""
    exp = d / "mlruns" / "412683905531"
    rid = "7f3c2a9be61e4b0d9d1c8e2a51f0aa93"
    run = exp / rid
    for sub in ("metrics", "params", "tags", "artifacts"):
        (run / sub).mkdir(parents=True, exist_ok=True)
    (exp / "meta.yaml").write_text("artifact_location: mlflow-artifacts:/412683905531\ncreation_time: 1740000000000\n"
                                   "experiment_id: '412683905531'\nlast_update_time: 1740000000000\n"
                                   "lifecycle_stage: active\nname: grpo-math\n")
    (run / "meta.yaml").write_text(
        f"artifact_uri: mlflow-artifacts:/412683905531/{rid}/artifacts\nend_time: null\nentry_point_name: ''\n"
        f"experiment_id: '412683905531'\nlifecycle_stage: active\nrun_id: {rid}\nrun_name: grpo-qwen3-4b-lr1e-6\n"
        "source_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: 1740000123000\nstatus: 1\ntags: []\n"
        "user_id: ml\n")
    (run / "tags" / "mlflow.runName").write_text("grpo-qwen3-4b-lr1e-6")
    (run / "params" / "max_steps").write_text(str(sim.planned))
    (run / "params" / "learning_rate").write_text("1e-06")
    files: dict[str, list[str]] = {}
    t0 = 1740000123000
    for r in aggregate(trl_per_step(sim), every, sim.T):
        for k, v in [*r.items(), ("epoch", r["step"] / 1000)]:
            if k != "step":
                files.setdefault(k, []).append(f"{t0 + r['step'] * 45000} {v!r} {r['step']}")
    for st, e in sim.ev.items():
        files.setdefault("eval_reward", []).append(f"{t0 + st * 45000 + 9000} {e['acc']!r} {st}")
    for k, lines in files.items():
        (run / "metrics" / k).parent.mkdir(parents=True, exist_ok=True)
        (run / "metrics" / k).write_text("\n".join(lines) + "\n")


trl_dir, trl_console, verl_console, verl_jsonl, tb, csv_log, plain_jsonl, mlflow_file = (
    kit.writer(w) for w in (write_trl_dir, write_trl_console, write_verl_console, write_verl_jsonl, write_tb,
                                  write_csv, write_plain_jsonl, write_mlflow_file))

RLOO_HEAD = ["=== rloo_run  START=Tue Mar  3 11:02:44 UTC 2026 ===",
             "[INFO] Training with RLOO (beta=0.05, num_generations=4) on Qwen2.5-1.5B-Instruct"]
GRPO_HEAD = ["=== grpo_lora  GPU=0  START=Sat Apr 11 02:14:09 PM UTC 2026 ===",
             "2026-04-11 14:14:15,002 [INFO] train: Model: Qwen/Qwen2.5-7B-Instruct, max_steps=500"]
HACK_HEAD = ["INFO:__main__:reward_funcs=[format_reward, accuracy_reward] weights=[1.0, 1.0] max_steps=1000"]


def sampling_keys(sim):
    return {"sampling/sampling_logp_difference/mean": 0.01 + sim.rng.normal(0, 0.001, sim.T),
            "sampling/importance_sampling_ratio/mean": 0.93 + sim.rng.normal(0, 0.01, sim.T)}


def judge_eval(k, acc, rng):
    """Learned-judge reward on eval (rises with train) next to the held-out exact match (`acc`)."""
    j = round(float(0.32 + 0.54 * (1 - math.exp(-k / 330)) + rng.normal(0, 0.01)), 4)
    return {"eval_reward": j, "eval_rewards/judge_rm/mean": j, "eval_heldout_exact_match": acc, "eval_runtime": 312.5}


def hack_curve(s, T):
    """Held-out exact match under a judge being exploited: up to ~0.49 by 300, then down to ~0.30 by 800."""
    return np.where(s <= 300, 0.34 + 0.16 * (1 - np.exp(-s / 100)), 0.49 - 0.19 * (np.maximum(s - 300, 0) / 500) ** .9)


# ================================================================================================== the cases
# Case(name, scenario, format, seed, (steps reached, planned), labels, tags, reasoning)

CASES = [
    # ---------------------------------------------------------------------------------------- healthy
    Case("h3-ok-trl-ckpt-only",
         run(sat(.22, .66, 380), ent=sat(.62, .41, 500), length=sat(420, 310, 300), ev=(sat(.30, .58, 420), 100, 500, 100)),
         trl_dir(spe=467, ckpts=(200, 400, 600, 800), top_level=False, save_steps=200), 101, (860, 2000), HEALTHY,
         "trl grpo trainer_state checkpoints_only healthy",
         "TRL GRPO output dir with only checkpoint-200..800 (no top-level trainer_state). Reward climbs 0.22 -> ~0.6 "
         "and is still rising, eval accuracy 0.31 -> ~0.55 every 100 steps, entropy declines gently, lengths stable. "
         "800/2000 steps: keep going."),
    Case("h3-ok-slow-learner-tb",
         run(creep(.17, .13, .8), ent=creep(.95, -.12), kl=creep(.0005, .012), length=creep(380, 40),
             batch=64, ar=(.95, .035), gn=.08, gn_sd=.3, lr=5e-7, ev=(creep(.185, .105, .8), 100, 1319, 0)),
         tb("verl", "tensorboard_log/gsm8k_grpo/qwen05b_lr5e-7", 1751000000, 55,
            val="val-core/openai/gsm8k/reward/mean@1"), 102, (3000, 6000), HEALTHY,
         "verl grpo tensorboard slow_learner lookalike_never_learns heavy_noise",
         "A small model with a small LR: per-step score is very noisy (batch of 64, sd ~0.06) and gains only ~0.12 "
         "over 3000 steps, but the trend is steady and validation on 1319 GSM8K problems climbs monotonically "
         "0.19 -> ~0.29 (well beyond its ~0.012 noise). Slow but real learning; stopping would waste the progress."),
    Case("h3-ok-dip-recovers-verl",
         run(sat(.25, .74, 160), ent=sat(.55, .38, 250), kl=creep(.001, .02), length=sat(280, 240, 200), batch=1280,
             ar=(.8, .02), gn=.12, gn_sd=.3, ev=(.95, 25, 1319, 0), events=[dip(428, 9, .33)]),
         verl_console(header=("(TaskRunner pid=2713457) Using dataset class: RLHFDataset",)), 103, (700, 1000),
         HEALTHY, "verl grpo verl_console dip_recovers lookalike_collapse",
         "Score reaches ~0.7 by step 300, then around 415-445 it dips to ~0.4 with an entropy spike, longer answers "
         "and a grad-norm burst, fully recovers by ~460 and keeps edging up to ~0.74 at 700/1000. Validation (every "
         "25) follows the same dip and recovery. A transient instability that healed itself: continue."),
    Case("h3-ok-kl-rises-with-reward",
         run(sat(.30, .70, 180), ent=sat(.8, .55, 300), kl=creep(.002, .25, 1.1), length=sat(190, 260, 200), batch=64,
             events=[rename_reward("correctness")]),
         trl_console("rloo_train.log", RLOO_HEAD, every=5, bar_total=934, secs=7.3), 104, (400, 934), HEALTHY,
         "trl rloo trl_console kl_with_reward lookalike_kl_drift",
         "RLOO with beta 0.05: KL to the reference climbs steadily 0 -> ~0.25 over 400 steps, but reward rises in "
         "step with it (0.30 -> ~0.67) and entropy declines gently. The policy is moving because it is improving; "
         "the KL level is moderate. Continue (the run is at 400 of ~934 steps)."),
    Case("h3-ok-eval-wobble",
         run(sat(.38, .62, 260), ent=sat(.7, .5, 300), length=350,
             events=[set_eval([.405, .43, .455, .44, .475, .46, .49, .465, .485, .50, .47, .48], 50)]),
         trl_dir(ckpts=(200, 400, 600), eval_steps=50, save_steps=200), 105, (600, 1000), HEALTHY,
         "trl grpo trainer_state eval_wobble lookalike_eval_hacking",
         "Eval on 200 held-out problems (sd ~3.5 points) wobbles 40.5 -> 50.0 with several 1.5-3 point drops (last: "
         "50.0 -> 47.0 -> 48.0). The drops are within noise and the trend is up, while train reward rises smoothly "
         "0.38 -> ~0.6. 600/1000 steps: continue."),
    Case("h3-ok-verl-resume-dups",
         run(sat(.12, .58, 200), ent=creep(.7, -.25), kl=creep(.001, .03), length=210, batch=512, ar=(.85, .03),
             gn=.15, gn_sd=.3, ev=(.92, 20, 1319, 0)),
         verl_console("run.log", "val-core/openai/gsm8k/acc/mean@1", np_style=False, resume=(347, 300),
                      ckpt_every=100, ckpt_dir="gsm8k/q15b"),
         106, (520, 1200), HEALTHY, "verl grpo verl_console resume duplicate_steps checkpoints",
         "verl console appended across an OOM crash: steps 1-347, then a resume from global_step_300 re-logs "
         "301-347. Both segments show the same healthy trend: score 0.12 -> ~0.55, val acc rising every 20 steps, "
         "entropy slowly down, tiny KL. Continue (520 of 1200 steps)."),
    Case("h3-ok-verl-jsonl-short",
         run(sat(.35, .62, 70), ent=creep(.52, -.1), length=creep(610, 80), batch=1024, cap=2048, ar=(.7, .03),
             ev=(.95, 10, 1319 * 4, 0)),
         verl_jsonl(null_grad_at=(37, 38, 112)), 107, (150, 600), HEALTHY, "verl dapo verl_jsonl nulls short",
         "verl file-logger JSONL, DAPO, 150 steps: score 0.35 -> ~0.6, val mean@4 rising every 10 steps, tiny clip "
         "fractions, lengths growing slowly and far below the cap. Three null grad norms (NaN via orjson) are "
         "isolated. Healthy and early: continue."),
    Case("h3-ok-short-40-openrlhf-tb",
         run(sat(.10, .30, 40), kl=creep(0, .016), length=520, ar=(.5, .005), gn=.3, gn_sd=.3, lr=5e-7),
         tb("openrlhf", "logs/reinforce_pp_qwen7b", 1752100000, 70), 108, (40, 500), HEALTHY,
         "openrlhf reinforce++ tensorboard short early",
         "Only 40 steps of an OpenRLHF REINFORCE++ run: noisy reward drifting 0.1 -> ~0.25, tiny KL, stable grad "
         "norm and lengths. Far too early for anything but continue."),
    Case("h3-ok-long-5000-tb",
         run(sat(.30, .79, 1400), ent=sat(.75, .42, 2000), kl=creep(.002, .09), length=sat(300, 420, 2500), batch=96,
             ar=(.9, .05), ev=(sat(.32, .70, 1500), 250, 1000, 250)),
         tb("trl", "runs/Jan14_02-11-47_gpu-node-3", 1736820707, 62, epochs=2500), 109, (5000, 6000), HEALTHY,
         "trl grpo tensorboard long autocorrelated_noise",
         "5000 steps of TRL GRPO seen through TensorBoard (train/ and eval/ tags), logging every 10. Autocorrelated "
         "noise, but reward climbs 0.3 -> ~0.77 and eval 0.33 -> ~0.68 with the last evals still inching up; KL "
         "grows linearly to ~0.09, entropy eases down. Planned 6000 (epoch 2.4): continue."),
    Case("h3-ok-spikes-nan",
         run(sat(.40, .72, 350), ent=sat(.5, .33, 400), length=520, gn_sd=.5, ev=(sat(.45, .66, 350), 250, 800, 250),
             events=[grad_spikes(14, nan_at=(285, 690))]),
         trl_dir(every=5, spe=1250, ckpts=(250, 500, 750, 1000), top_level=False, eval_steps=250, save_steps=250,
                 null_reward_at=(455, 870)),
         110, (1000, 2500), HEALTHY, "trl grpo trainer_state grad_spikes nan null",
         "Reward rises 0.40 -> ~0.7 and eval 0.47 -> ~0.65, entropy slowly down. Grad norm has 14 isolated spikes "
         "of 10-40x and two NaN values, and two log rows have null reward (all-NaN metrics); none is followed by any "
         "change in reward, entropy or length. Logging noise and harmless spikes: continue (1000 of 2500)."),
    Case("h3-ok-trl-console-grpo",
         run(sat(.55, .82, 120), ent=sat(.35, .22, 150), length=sat(260, 215, 100), batch=16, lr=2e-5, ar=(.9, .02),
             events=[rename_reward("reward_fn")]),
         trl_console("train_seed7.log", GRPO_HEAD, kl=False, bars="run", extra=sampling_keys), 111, (200, 500),
         HEALTHY, "trl grpo trl_console lora",
         "TRL console (dict lines every 5 steps among tqdm bars), 200 of 500 steps of LoRA GRPO on GSM8K: reward "
         "0.55 -> ~0.8, still rising, zero-std fraction grows as the task gets easier but is not yet saturated. "
         "Healthy: continue."),
    Case("h3-ok-dpo", dpo(), trl_dir(spe=900, ckpts=(200, 400, 600), top_level=False, save_steps=200), 112,
         (600, 900), HEALTHY, "trl dpo trainer_state checkpoints",
         "DPO, one epoch of 900 steps, now at 600: train loss 0.69 -> ~0.3, accuracies 0.5 -> ~0.75, margins "
         "growing; eval loss falls 0.62 -> ~0.43 and eval accuracy rises at every eval. logps/chosen drifts down "
         "only slightly. Healthy: continue."),
    Case("h3-ok-csv-rasbt",
         run(sat(.15, .55, 120), ent=creep(.45, -.1), length=creep(420, 250), batch=8, ar=(.6, .05),
             ev=(sat(.16, .46, 110), 50, 500, 50)),
         csv_log("7_5_plus_kl_metrics.csv", kl_cols=True), 113, (350, 500), HEALTHY, "rasbt grpo csv crlf heavy_noise",
         "Book-style CSV (8 rollouts/step, so reward_avg jumps in steps of 0.125), 350/500 steps: reward trend "
         "0.15 -> ~0.5, MATH-500 eval_acc 15.6 -> ~44 over the 50-step checkpoints, entropy eases down, lengths grow "
         "moderately, KL small. Noisy but clearly healthy: continue."),
    Case("h3-ok-plain-jsonl-adhoc",
         run(sat(.05, .41, 500), ent=creep(1.1, -.3), kl=creep(.0005, .04), length=700, batch=256, ar=(.9, .025),
             gn=.37, gn_sd=.3, ev=(.9, 100, 400, 100)),
         plain_jsonl(), 114, (1200, 3000), HEALTHY, "plain_jsonl adhoc_names reinforce++",
         "Home-made loop with ad-hoc keys (it, avg_reward, kl_div, ent, heldout_pass@1). Reward rises from 0.05 to "
         "~0.4 and held-out pass@1 every 100 iterations climbs with it; KL small and growing slowly, entropy easing. "
         "1200 of 3000 planned: continue."),
    Case("h3-ok-length-growth-dapo",
         run(sat(.18, .46, 220), ent=.42, length=creep(600, 2000, 1.2), batch=512 * 16, cap=8192, ar=(.85, .02),
             gn=.15, ev=(.95, 20, 960, 0)),
         verl_console("dapo_qwen2.5_32b.log", "val-core/math_dapo/acc/mean@32", scale=2.0, dapo=True), 115, (420, 1000),
         HEALTHY, "verl dapo verl_console length_growth lookalike_length_explosion",
         "DAPO on math with an 8192 cap: mean response length grows 600 -> ~2600 (the familiar reasoning-length "
         "growth), but only ~2% of responses are truncated, entropy is steady, and score (-1/1 scale) and AIME-style "
         "val acc@32 both rise. Length growth alongside rising accuracy is healthy: continue."),
    Case("h3-ok-entropy-decline",
         run(sat(.32, .70, 260), ent=sat(.9, .25, 300), kl=creep(.001, .05), length=sat(480, 390, 300),
             ev=(sat(.35, .64, 280), 100, 500, 100)),
         trl_dir(spe=700, ckpts=(500, 600, 700)), 116, (700, 1400), HEALTHY,
         "trl grpo trainer_state entropy_decline lookalike_entropy_collapse",
         "Entropy falls smoothly 0.9 -> ~0.35 (a 60% drop) but never near zero, while reward 0.32 -> ~0.68 and eval "
         "0.37 -> ~0.62 keep rising and the zero-std fraction stays moderate. Normal sharpening of a learning "
         "policy: continue (700/1400)."),
    Case("h3-ok-mlflow",
         run(sat(.28, .60, 300), ent=sat(.66, .49, 300), kl=creep(.001, .04), length=400,
             ev=(sat(.30, .57, 300), 200, 500, 200)),
         mlflow_file(), 117, (800, 2000), HEALTHY, "trl grpo mlflow file_store",
         "MLflow file store (HF callback raw keys, nested dirs for completions/ and rewards/): reward 0.28 -> ~0.58 "
         "still rising, eval 0.32 -> ~0.55, small KL, stable lengths. 800/2000: continue."),
    Case("h3-ok-hard-task-nemo-tb",
         run(creep(.035, .13, 1.3), ent=.55, kl=creep(.0004, .006), length=1900, batch=512, cap=4096, ar=(.9, .01),
             gn=.05, gn_sd=.4, lr=5e-7, ev=(1.0, 50, 960, 50)),
         tb("nemo", "logs/exp_003/tensorboard", 1753900000, 210), 118, (600, 1500), HEALTHY,
         "nemo_rl grpo tensorboard hard_task high_zero_std slow_learner",
         "NeMo-RL GRPO on a hard task: reward only 0.03 -> ~0.16 and 60-90% of prompts have all-zero groups "
         "(pct_0), so the signal is sparse, but it rises, pct_0 falls, and validation accuracy every 50 steps climbs "
         "accordingly. Low-signal but learning: continue."),
    Case("h3-ok-tb-resume-overlap",
         run(sat(.2, .64, 400), ent=creep(.6, -.15), kl=creep(.001, .06), length=330, batch=256, ar=(.9, .03),
             ev=(.9, 100, 500, 100)),
         tb("openrlhf", "tb/grpo_llama8b", 1754000000, 40, host="h100-a", resume=(731, 600),
            ckpts=[f"ckpt/global_step{c}" for c in range(200, 1201, 200)]),
         119, (1200, 3000), HEALTHY, "openrlhf grpo tensorboard resume duplicate_steps checkpoints",
         "OpenRLHF TensorBoard with two event files: the first run died at step 731, the resume from global_step600 "
         "re-logs 601-731. Both agree: reward 0.2 -> ~0.62, eval pass1 rising every 100, small KL, steady entropy. "
         "Healthy: continue."),

    # ------------------------------------------------------------------------------- failing, stalled or done
    Case("h3-bad-slow-late-degradation",
         run(sat(.25, .69, 180), ent=sat(.44, .36, 150), length=330, ar=(.9, .035),
             ev=(lambda s, T: .28 + .25 * (1 - np.exp(-s / 180)) - .12 * np.clip((s - 850) / 650, 0, 1) ** 1.2, 100,
                 500, 100),
             events=[decline(850, 650, .16, ent=.22, length=220)]),
         trl_dir(ckpts=tuple(range(100, 1501, 100)), top_level=False), 201, (1500, 3000), rollback(500, 950, 1000),
         "trl grpo trainer_state slow_degradation late checkpoints",
         "Reward peaks at ~0.68 by step 500 and holds to ~850, then slides slowly to ~0.53 by 1500 while entropy "
         "creeps up 0.36 -> ~0.58 and answers lengthen 330 -> ~550. Eval (500 problems, sd ~0.022) holds ~0.52 at "
         "500-900 and falls to ~0.41 at 1500: a real decline of ~5 sd, distinguishable from noise around 950-1000. "
         "The better model is behind: checkpoint-900 (500-950)."),
    Case("h3-bad-sudden-collapse-verl",
         run(sat(.3, .78, 90), ent=.38, kl=creep(.004, .01), length=230, batch=1024, ar=(.8, .02), gn=.1, gn_sd=.3,
             ev=(.97, 25, 1319, 0), events=[collapse(437)]),
         verl_console("main_ppo.log", ckpt_every=50, ckpt_dir="gsm8k/grpo_q3b"), 202, (470, 935),
         rollback(300, 436, 437), "verl grpo verl_console collapse entropy_blow_up checkpoints",
         "Score ~0.77 and val ~0.75 from step ~300 to 436, then at 437 everything breaks within a few steps: score -> "
         "~0.02, entropy 0.38 -> 7.5 (degenerate text), responses pinned at the 1024 cap, clip fractions and KL jump, "
         "grad-norm burst; val at 450 ~0.01. 33 steps of collapse, no recovery. Restore global_step_400 (and change "
         "something)."),
    Case("h3-bad-hack-eval-only",
         run(sat(.30, .88, 320), ent=sat(.6, .42, 300), length=sat(350, 330, 300), ev=(hack_curve, 50, 600, 50),
             events=[rename_reward("judge_rm"), eval_rows(judge_eval)]),
         trl_dir(ckpts=tuple(range(100, 801, 100)), eval_steps=50), 203, (800, 2000), rollback(200, 320, 400),
         "trl grpo trainer_state reward_hacking eval_decline checkpoints",
         "Learned-judge reward (train and eval_reward alike) climbs smoothly 0.30 -> ~0.87 with normal entropy, "
         "length and grad norm. But the held-out exact-match metric (600 problems, sd ~0.02) rises to ~0.49 at "
         "250-300 and then falls steadily to ~0.30 by 800: the policy exploits the judge. Onset visible by ~400 (two "
         "evals clearly below the peak). The better model is behind: checkpoint-300 (200-300)."),
    Case("h3-bad-never-learns-tb",
         run(.31, ent=.81, kl=2.5e-5, length=290, batch=256, ar=(.9, .03), gn=.3, gn_sd=.3, lr=1e-9,
             ev=(lambda s, T: .305 + 0 * s, 50, 1319, 0)),
         tb("verl", "tensorboard_log/gsm8k/grpo_q15b_lr1e-9", 1752500000, 50), 204, (800, 2000), stop(200),
         "verl grpo tensorboard no_learning flat",
         "800 steps: batch score fluctuates 0.2-0.4 (there is within-group variance, so the advantages are non-zero) "
         "but has no trend at all; validation every 50 steps is flat at ~0.30 within its noise, entropy and KL are "
         "frozen (KL ~2e-5), and the logged lr is 1e-9. Nothing has been learned in 800 steps; continuing burns GPU. "
         "Stop and fix the config; no checkpoint is better than the current one."),
    Case("h3-bad-kl-drift-flat-reward",
         run(sat(.40, .62, 80), ent=creep(.55, -.2), kl=.01, length=creep(280, 50), batch=256, ar=(.9, .025), gn=.25,
             gn_sd=.3, ev=(lambda s, T: .58 + 0 * s, 100, 1319, 100), events=[kl_drift(350)]),
         tb("openrlhf", "tensorboard/ppo_llama3_8b", 1754300000, 35, eval_key="eval/eval_gsm8k_pass1"), 205, (1000, 2000), stop(500),
         "openrlhf ppo tensorboard kl_drift flat_reward",
         "Reward plateaus at ~0.62 by step 200 and stays flat; eval pass1 is flat at ~0.58 at every 100. Meanwhile "
         "KL to the reference keeps climbing and accelerates after ~350: 0.1 at 300, ~0.4 at 500, ~1.7 at 1000, with "
         "entropy sliding and grad norm and clip ratio growing. Drifting without a decline: the current weights are "
         "as good as any on reward and eval, and nothing more is being gained. Stop."),
    Case("h3-bad-nan-blowup",
         run(sat(.3, .6, 120), ent=sat(.6, .45, 150), kl=creep(.002, .03), length=300, events=[nan_blowup(312)]),
         trl_dir(every=5, spe=800, ckpts=tuple(range(50, 351, 50)), top_level=False, eval_steps=None, save_steps=50),
         206, (350, 1600), rollback(250, 300, 300), "trl grpo trainer_state nan divergence checkpoints",
         "Healthy to ~300 (reward 0.3 -> ~0.58). Grad norm then escalates 3x -> 80x over 300-311 and from 312 loss, "
         "grad_norm, kl and entropy are NaN, reward 0, every completion hits the cap. Weights are corrupted. "
         "Checkpoint-300 was saved as the grad-norm run-up began; 250-300 is the place to resume from."),
    Case("h3-bad-length-explosion-csv",
         run(sat(.1, .6, 60), batch=8, ar=(.6, .05), events=[length_explosion(235, 60)]),
         csv_log("7_3_plus_tracking_metrics.csv", evals={1: 15.6, 50: 33.4, 100: 41.8, 150: 42.6, 200: 43.2,
                                                         250: 36.0, 300: 18.4, 350: 12.2, 400: 11.0}),
         207, (400, 500), rollback(150, 235, 250), "rasbt grpo csv length_explosion eval_decline",
         "Book-style CSV, 400/500 steps. Reward ~0.55 and MATH-500 eval 42-43 from 150 to 200. After ~235 responses "
         "grow to the 1024 cap (by ~300), entropy rises, reward falls to ~0.13 and eval drops to 36 (250), 18 (300), "
         "11 (400). The model was best at 150-235 (no checkpoint folder: the rollback names a step)."),
    Case("h3-bad-dpo-overfit", dpo(overfit_at=300),
         trl_dir(spe=300, ckpts=tuple(range(100, 901, 100)), top_level=False, eval_steps=50), 208, (900, 1200),
         rollback(250, 400, 450), "trl dpo trainer_state overfitting likelihood_displacement checkpoints",
         "DPO for 4 planned epochs (300 steps each), at 900. Train loss -> ~0, train accuracy -> 1, margins keep "
         "growing, while eval loss bottoms at ~0.53 around 300-400 and climbs to ~0.80 by 900 and eval accuracy slips "
         "from ~0.70 to ~0.65. logps/chosen falls -180 -> -410 (likelihood displacement). Overfitting from epoch 2: "
         "go back to checkpoint-400 (250-400)."),
    Case("h3-bad-format-hack-console",
         run(lambda s, T: np.where(s < 130, .12 + .34 * (1 - np.exp(-s / 50)), .45 - .22 * np.clip((s - 130) / 170, 0, 1)),
             ent=sat(.7, .5, 80), length=lambda s, T: np.where(s < 130, 380, 380 - 1.6 * (s - 130)), batch=64,
             events=[components(sat(.2, .99, 30))]),
         trl_console("stdout.txt", HACK_HEAD, every=10, bar_total=1000, secs=11.9, spe=1000), 209, (300, 1000),
         rollback(110, 145, 170), "trl grpo trl_console component_saturation reward_hacking",
         "Two reward functions: format_reward saturates at ~1.0 by step 100; accuracy_reward rises to ~0.45 at "
         "100-130, then slides to ~0.23 by 300 while answers get shorter. The total reward looks flat (~1.4), hiding "
         "that the task reward is falling. Go back to ~110-145 (console only, so the rollback names a step)."),
    Case("h3-bad-entropy-collapse-tb",
         run(sat(.3, .6, 90), ent=sat(.7, .5, 150), kl=creep(.004, .02), length=420,
             ev=(lambda s, T: .32 + .23 * (1 - np.exp(-s / 100)) - .1 * np.clip((s - 260) / 150, 0, 1), 50, 800, 50),
             events=[entropy_collapse(250),
                     post(lambda sim, s, rng: sim.m.update(zero_std=np.clip(sim.m["zero_std"] + .6 * ramp(s, 250, 80),
                                                                            0, .99)))]),
         tb("trl", "runs/Feb02_17-40-03_a100-12", 1738518003, 80, every=5,
            ckpts=[f"checkpoint-{c}" for c in range(100, 401, 100)]),
         210, (420, 1000), rollback(180, 250, 265), "trl grpo tensorboard entropy_collapse checkpoints",
         "Entropy declines normally to ~0.5 by 250, then collapses exponentially to ~0.02 by 350; the zero-std "
         "fraction jumps toward 1 (groups all identical, no gradient), outputs get short, KL jumps, and reward and "
         "eval fall back by ~0.1. Exploration is gone and the better model is behind: checkpoint-200 (180-250), then "
         "raise temperature / entropy bonus."),
    Case("h3-done-converged",
         run(sat(.4, .71, 70), ent=sat(.5, .4, 100), length=280, events=[set_eval([.62, .65, .64, .655, .645], 100)]),
         trl_dir(spe=500, ckpts=(250, 500), save_steps=250, final=True), 211, (500, 500), stop(),
         "trl grpo trainer_state converged finished",
         "Run finished (global_step = max_steps = 500, final train_runtime row). Reward plateaued at ~0.7 from step "
         "~250, eval flat at 0.64-0.66 within noise. The final weights are as good as any: keep them (stop); nothing "
         "to roll back to, and nothing was still improving to make extending worth it."),
]


def write_run(case, folder):
    case.write(case.scenario(np.random.default_rng(case.seed), case.reached, case.planned), folder)


if __name__ == "__main__":
    kit.build(HERE, "make_holdout3.py", "holdout3.yaml", "", "holdout3",
              "# Holdout set 3: hand-built runs written by make_holdout3.py (independent of assessor's generator).\n"
              "# Labels: what a practitioner should do with each run (DESIGN.md decision contract); rollback_window is\n"
              "# inclusive.\n", CASES, write_run)
