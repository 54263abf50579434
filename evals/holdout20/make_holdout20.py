"""Holdout set 20: blind-labelled RL post-training runs in unusual log shapes and messy data.

Run from the worktree root:
    .venv/bin/python evals/holdout20/make_holdout20.py           # writes runs/ (gitignored) and holdout20.yaml
    .venv/bin/python evals/holdout20/make_holdout20.py --check   # also prints levels and rollback windows

Written without reading the assessor. Each case is a story told as noise-free levels per optimiser step (train
reward, held-out evals, KL, entropy, lengths, truncation, clip fractions, grad norm, learning rate ...), drawn
through this set's noise model and written the way one framework and version writes them. Noise model:
  * binary rewards: each logged batch has P prompts whose solve rates are logit-normal (logit sd `spread`, the
    mean solved so that the expected solve rate is exactly the level), G rollouts each; the batch mean, the
    sample std and the share of prompts whose rollouts all agree come from the same draws. Extra binary reward
    functions (format, tags) are drawn the same way and summed into the total. TRL averages the batches since the
    last log; OpenRLHF logs the current step only;
  * score rewards (reward models, judges): batch mean of P*G normal scores around the level;
  * held-out evals: Binomial(N, p)/N on N graded samples (judge scores: mean of N normal scores);
  * side signals: the level times exp(AR(1) noise) (multiplicative) or plus AR(1) noise (signed ones);
  * grad norm: level times a log-normal factor, and on about 3 % of steps an extra Pareto(1.6) factor.
Messy data on top: runs resumed from a checkpoint whose replayed steps are written twice (the second copy is the
one that counts), files still being written (a torn last line or record), NaN / inf / null values, several
TensorBoard event files, evals in their own file, metric names with capitals and odd separators, tracebacks.

Labels follow DESIGN.md ("What the three decisions mean"), read from each story's noise-free levels, never from a
tool. The rollback window runs from the first logged headline step whose level is within one sampling sd (of one
eval, or of one logged train value) of the best level, to the newest such step not after onset_step.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import (
    HEALTHY,
    Case,
    converged,
    dump_json,
    rollback,
    stop,
    stop_or_rollback,
    tb_file,
    trainer_state,
)

HERE = Path(__file__).resolve().parent
NOW = time.time()
TRAIN = "@train"
Level = Callable[[float], float]


# ------------------------------------------------------------------------------------------------ level helpers

def pw(*pts: tuple[float, float]) -> Level:
    """Piecewise linear through the given (step, level) points, flat outside."""
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def const(v: float) -> Level:
    return lambda s: v


def sat(v0: float, v1: float, tau: float, t0: float = 0.0) -> Level:
    """Saturating rise (or fall) from v0 toward v1 with time constant tau, starting at t0."""
    return lambda s: v0 if s <= t0 else v1 + (v0 - v1) * math.exp(-(s - t0) / tau)


def loglin(v0: float, slope: float, s0: float = 1.0) -> Level:
    """v0 + slope * log10(1 + s / s0): a slow climb that never quite stops."""
    return lambda s: v0 + slope * math.log10(1.0 + s / s0)


def glue(first: Level, at: float, second: Level) -> Level:
    """first up to step `at`, second after it (continuous if second(at) == first(at))."""
    return lambda s: first(s) if s <= at else second(s)


def cosine_lr(peak: float, warm: int, total: int, floor: float = 0.0) -> Level:
    def f(s: float) -> float:
        if s < warm:
            return peak * (s + 1) / warm
        x = min(1.0, (s - warm) / max(1, total - warm))
        return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * x))
    return f


# ------------------------------------------------------------------------------------------------ noise model

_Z, _W = np.polynomial.hermite_e.hermegauss(48)
_W = _W / _W.sum()


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


@cache
def logit_moments(p: float, spread: float) -> tuple[float, float]:
    """Logit mean mu with E[sigmoid(mu + spread*Z)] = p, and E[q^2] under it."""
    p = min(max(p, 1e-5), 1 - 1e-5)
    lo, hi = -20.0, 20.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if float(_W @ _sig(mid + spread * _Z)) < p:
            lo = mid
        else:
            hi = mid
    mu = 0.5 * (lo + hi)
    return mu, float(_W @ _sig(mu + spread * _Z) ** 2)


def binary_batches(rng: np.random.Generator, p: float, P: int, G: int, spread: float, n: int) -> dict:
    """n batches of P prompts x G rollouts; returns per-batch means averaged over the n batches."""
    mu, _ = logit_moments(round(p, 4), spread)
    q = _sig(mu + spread * rng.standard_normal((n, P)))
    x = rng.binomial(G, q)
    m = x.sum(axis=1) / (P * G)
    agree = ((x == 0) | (x == G)).mean(axis=1)
    return dict(mean=float(m.mean()), std=float(np.sqrt(np.clip(m * (1 - m), 0, None)).mean()),
                zero_std=float(agree.mean()), group_std=float(np.sqrt((x / G) * (1 - x / G)).mean()))


def train_sd(p: float, P: int, G: int, spread: float, n: int) -> float:
    _, eq2 = logit_moments(round(p, 4), spread)
    var = (eq2 - p * p) / P + max(p - eq2, 0.0) / (P * G)
    return math.sqrt(var / n)


# ------------------------------------------------------------------------------------------------ the stories

@dataclass
class Story:
    reward: Level                                   # train success rate (binary) or mean score
    headline: str                                   # an eval key, or TRAIN
    evals: dict = field(default_factory=dict)       # key -> (level, N) binomial, or (level, N, sd) mean of N scores
    eval_every: int = 0
    eval_at0: bool = False
    kind: str = "binary"                            # binary | score
    score_sd: float = 1.0
    P: int = 64
    G: int = 8
    spread: float = 1.3
    comps: dict = field(default_factory=dict)       # extra binary reward functions: name -> level (summed)
    acc_name: str = "accuracy_reward"
    log_every: int = 1
    averaged: bool = True                           # the logger averages the batches since the last log
    side: dict = field(default_factory=dict)        # canonical key -> (level, sd, "mul" | "add")
    grad: Level = field(default=lambda s: 0.25)
    spike_p: float = 0.03
    lr: Level = field(default=lambda s: 1e-6)
    cap: int = 4096                                 # max response length
    nan: dict = field(default_factory=dict)         # step -> {canonical key: float('nan') / inf / None}
    sps: float = 20.0                               # wall seconds per step
    age_min: float = 5.0                            # minutes since the newest row was written
    resume: tuple[int, int] | None = None           # (restored step, step the first attempt reached)
    stale: Story | None = None                      # levels of the first attempt after the restored step

    def headline_level(self) -> Level:
        return self.reward if self.headline == TRAIN else self.evals[self.headline][0]

    def headline_sd(self, p: float) -> float:
        if self.headline == TRAIN:
            n = self.log_every if self.averaged else 1
            if self.kind == "score":
                return self.score_sd / math.sqrt(self.P * self.G * n)
            return train_sd(p, self.P, self.G, self.spread, n)
        ent = self.evals[self.headline]
        N = ent[1]
        if len(ent) > 2:
            return ent[2] / math.sqrt(N)
        return math.sqrt(max(p * (1 - p), 1e-6) / N)

    def eval_steps(self, reached: int) -> list[int]:
        if not self.evals:
            return []
        first = 0 if self.eval_at0 else self.eval_every
        return list(range(first, reached + 1, self.eval_every))

    def headline_steps(self, reached: int) -> list[int]:
        if self.headline == TRAIN:
            return list(range(self.log_every, reached + 1, self.log_every))
        return self.eval_steps(reached)


class AR:
    """AR(1) noise per key, so side signals wander a little instead of being white."""

    def __init__(self, rng: np.random.Generator):
        self.rng, self.state = rng, {}

    def __call__(self, key: str, sd: float) -> float:
        e = 0.6 * self.state.get(key, 0.0) + sd * 0.8 * self.rng.standard_normal()
        self.state[key] = e
        return e


def train_row(st: Story, rng: np.random.Generator, ar: AR, s: int) -> dict:
    n = st.log_every if st.averaged else 1
    row: dict = {"step": s}
    if st.kind == "score":
        x = rng.normal(st.reward(s), st.score_sd / math.sqrt(st.P * st.G * n))
        row.update(reward=float(x), reward_std=st.score_sd * math.exp(0.05 * rng.standard_normal()), zero_std=0.0)
        row["acc"] = row["reward"]
    else:
        b = binary_batches(rng, st.reward(s), st.P, st.G, st.spread, n)
        row.update(acc=b["mean"], acc_std=b["std"], zero_std=b["zero_std"], group_std=b["group_std"])
        total, var = b["mean"], b["std"] ** 2
        comps = {st.acc_name: (b["mean"], b["std"])}
        for name, lvl in st.comps.items():
            c = binary_batches(rng, lvl(s), st.P, st.G, 0.6, n)
            comps[name] = (c["mean"], c["std"])
            total += c["mean"]
            var += c["std"] ** 2
        row.update(reward=total, reward_std=math.sqrt(var), comps=comps)
    for k, (lvl, sd, mode) in st.side.items():
        v = lvl(s)
        row[k] = v * math.exp(ar(k, sd)) if mode == "mul" else v + ar(k, sd)
    if "trunc" in row:
        row["trunc"] = float(min(1.0, max(0.0, row["trunc"])))
    if "len" in row:
        row["len"] = min(row["len"], st.cap * 0.995)
        row["len_max"] = float(st.cap if row.get("trunc", 0) > 0.004 else min(st.cap, row["len"] * rng.uniform(1.8, 2.6)))
        row["len_min"] = float(max(3, row["len"] * rng.uniform(0.08, 0.25)))
    g = st.grad(s) * math.exp(0.3 * rng.standard_normal())
    if rng.random() < st.spike_p:
        g *= 1 + rng.pareto(1.6)
    row["grad_norm"] = float(g)
    row["lr"] = float(st.lr(s))
    row["loss"] = float(rng.normal(0.0, 0.01))
    row.update(st.nan.get(s, {}))
    return row


def eval_row(st: Story, rng: np.random.Generator, s: int) -> dict:
    row: dict = {"step": s}
    for key, ent in st.evals.items():
        p, N = ent[0](s), ent[1]
        row[key] = float(rng.normal(p, ent[2] / math.sqrt(N)) if len(ent) > 2
                         else rng.binomial(N, min(max(p, 0.0), 1.0)) / N)
    return row


def draw(st: Story, seed: int, reached: int) -> dict:
    """All rows in the order they were written, each with its wall time `t` and `attempt` (0 before a resume)."""
    rng = np.random.default_rng(seed)
    ar = AR(rng)
    start = NOW - st.age_min * 60 - reached * st.sps
    T = lambda s: start + s * st.sps  # noqa: E731
    train, evals = [], []
    if st.resume:
        back, hit = st.resume
        shift = (hit - back) * st.sps + 900.0
        old = st.stale or st
        for s in range(st.log_every, hit + 1, st.log_every):
            src = old if s > back else st
            train.append(dict(train_row(src, rng, ar, s), t=T(s) - shift, attempt=0))
        for s in st.eval_steps(hit):
            src = old if s > back else st
            evals.append(dict(eval_row(src, rng, s), t=T(s) - shift + 5, attempt=0))
        first = back + st.log_every
        ev_from = back + 1
    else:
        first, ev_from = st.log_every, 0
    for s in range(first, reached + 1, st.log_every):
        train.append(dict(train_row(st, rng, ar, s), t=T(s), attempt=1))
    for s in st.eval_steps(reached):
        if s >= ev_from:
            evals.append(dict(eval_row(st, rng, s), t=T(s) + 5, attempt=1))
    return dict(train=train, evals=evals, T=T, reached=reached, story=st)


def final(rows: list[dict]) -> list[dict]:
    """What a reader should keep: the last copy of each step, in step order."""
    keep = {}
    for r in rows:
        keep[r["step"]] = r
    return [keep[s] for s in sorted(keep)]


def nz(v):
    """None stays None, floats pass through (NaN and inf kept)."""
    return None if v is None else float(v)


# ------------------------------------------------------------------------------------------------ vocabularies

def v_trl_grpo(ver: str, beta: float = 0.0, tokens_per_step: int = 70_000) -> Callable[[dict], dict]:
    """TRL GRPO/RLOO train keys: '016' (v0.16), '1x' (v0.2x-1.x)."""
    seen: dict[int, float] = {0: 0.0}  # cumulative tokens after each step; a resume restores the old count

    def f(r: dict) -> dict:
        d: dict = {"loss": round(r["loss"], 4), "grad_norm": nz(r["grad_norm"]), "learning_rate": r["lr"]}
        prev = max(k for k in seen if k < r["step"])
        seen[r["step"]] = seen[prev] + tokens_per_step * (r["step"] - prev) * r.get("len", 500) / 500
        for k in [k for k in seen if k > r["step"]]:
            del seen[k]
        d["num_tokens"] = float(int(seen[r["step"]]))
        d["reward"], d["reward_std"] = nz(r["reward"]), r["reward_std"]
        for fn, (m, sd) in r.get("comps", {}).items():
            if ver == "016":
                d[f"rewards/{fn}"] = m
            else:
                d[f"rewards/{fn}/mean"], d[f"rewards/{fn}/std"] = m, sd
        if ver == "016":
            d["completion_length"] = r.get("len", 500.0)
            d["clip_ratio"] = 0.0
        else:
            ln = r.get("len", 500.0)
            tr = r.get("trunc", 0.0)
            d.update({"completions/mean_length": ln, "completions/min_length": r.get("len_min", 40.0),
                      "completions/max_length": r.get("len_max", 1200.0),
                      "completions/mean_terminated_length": ln * (1 - tr) / max(1e-6, 1 - tr * 0.999) * (1 - 0.4 * tr),
                      "completions/min_terminated_length": r.get("len_min", 40.0),
                      "completions/max_terminated_length": min(r.get("len_max", 1200.0), 0.97 * r.get("len_max", 1200.0)),
                      "completions/clipped_ratio": tr,
                      "frac_reward_zero_std": r["zero_std"]})
            if "entropy" in r:
                d["entropy"] = r["entropy"]
            for k in ("low_mean", "low_min", "high_mean", "high_max", "region_mean"):
                d[f"clip_ratio/{k}"] = r.get("clipfrac", 0.0) * (0.5 if "mean" in k and k != "region_mean" else 1.0)
            d["step_time"] = r.get("step_time", 30.0)
        if beta:
            d["kl"] = nz(r.get("kl", 0.0))
        return d
    return f


def v_trl_dpo(r: dict) -> dict:
    return {"loss": nz(r["dpo_loss"]), "grad_norm": nz(r["grad_norm"]), "learning_rate": r["lr"],
            "rewards/chosen": r["chosen"], "rewards/rejected": r["chosen"] - r["margin"],
            "rewards/accuracies": r["acc"], "rewards/margins": r["margin"],
            "logps/chosen": r["logp_c"], "logps/rejected": r["logp_c"] - 10 * r["margin"] - 25,
            "logits/chosen": -1.2 + 0.1 * r["margin"], "logits/rejected": -1.15 + 0.05 * r["margin"]}


def v_trl_ppo(r: dict) -> dict:
    non = -0.05 * r["kl"]
    return {"eps": int(r.get("eps", 11)), "objective/kl": r["kl"], "objective/entropy": r["entropy"],
            "objective/non_score_reward": non, "objective/rlhf_reward": r["reward"] + non,
            "objective/scores": r["reward"], "policy/approxkl_avg": r.get("approxkl", 0.004),
            "policy/clipfrac_avg": r.get("clipfrac", 0.03), "loss/policy_avg": r["loss"] - 0.02,
            "loss/value_avg": r.get("vloss", 0.08), "val/clipfrac_avg": 0.01, "policy/entropy_avg": r["entropy"] * 0.02,
            "val/ratio": 1.0 + r["loss"] * 0.2, "val/ratio_var": 4e-4, "val/num_eos_tokens": r.get("eos", 60),
            "lr": r["lr"], "episode": r["step"] * 64}


def v_verl(kl: bool = True, ver: str = "0.6") -> Callable[[dict], dict]:
    def f(r: dict) -> dict:
        ln = r.get("len", 800.0)
        gen = 40 + ln * 0.05
        d = {"actor/entropy": r.get("entropy"), "actor/grad_norm": nz(r["grad_norm"]), "actor/lr": r["lr"],
             "actor/pg_loss": r["loss"], "actor/pg_clipfrac": r.get("clipfrac", 0.002),
             "actor/pg_clipfrac_lower": 0.0, "actor/ppo_kl": r["loss"] * 0.01,
             "critic/score/mean": nz(r["reward"]), "critic/score/max": 1.0, "critic/score/min": 0.0,
             "critic/rewards/mean": nz(r["reward"]), "critic/rewards/max": 1.0, "critic/rewards/min": 0.0,
             "critic/advantages/mean": r["loss"] * 0.1, "critic/advantages/max": 2.47, "critic/advantages/min": -2.47,
             "critic/returns/mean": r["loss"] * 0.1, "critic/returns/max": 2.47, "critic/returns/min": -2.47,
             "response_length/mean": ln, "response_length/max": r.get("len_max", 2000.0),
             "response_length/min": r.get("len_min", 60.0), "response_length/clip_ratio": r.get("trunc", 0.0),
             "prompt_length/mean": 141.3, "prompt_length/max": 412.0, "prompt_length/min": 48.0,
             "prompt_length/clip_ratio": 0.0,
             "timing_s/gen": gen, "timing_s/reward": 2.1, "timing_s/old_log_prob": gen * 0.18,
             "timing_s/ref": gen * 0.17, "timing_s/adv": 0.08, "timing_s/update_actor": gen * 0.55,
             "timing_s/step": gen * 1.95, "perf/total_num_tokens": int(512 * (141 + ln)),
             "perf/time_per_step": gen * 1.95, "perf/throughput": 512 * (141 + ln) / (gen * 1.95 * 8),
             "perf/max_memory_allocated_gb": 61.2, "perf/max_memory_reserved_gb": 70.4,
             "training/global_step": r["step"], "training/epoch": r["step"] // 400}
        if ver >= "0.7":
            d["response/aborted_ratio"] = 0.0
        if kl:
            d["actor/kl_loss"] = nz(r.get("kl", 0.001))
            d["actor/kl_coef"] = 0.001
        return d
    return f


def v_openrlhf(r: dict) -> dict:
    ln = r.get("len", 700.0)
    tr = r.get("trunc", 0.0)
    gen = 60 + ln * 0.04
    return {"policy_loss": r["loss"], "actor_lr": r["lr"], "actor_grad_norm": nz(r["grad_norm"]),
            "kl": nz(r.get("kl", 0.0)), "reward": nz(r["reward"]), "return": nz(r["reward"]) if r["reward"] is not None
            else None, "response_length": ln, "total_length": ln + 180.0, "truncated": tr,
            "ppo_clip_ratio": r.get("clipfrac", 0.004), "ppo_kl": r["loss"] * 0.002, "vllm_kl": 0.0008,
            "group_reward_std": r.get("group_std", 0.3), "rollout/reward_mean": nz(r["reward"]),
            "rollout/reward_std": r["reward_std"], "rollout/response_length_mean": ln, "rollout/truncated_rate": tr,
            "rollout/num_samples": 1024, "timing/generation": gen, "timing/make_experience": gen * 0.3,
            "timing/ppo_train": gen * 0.6, "timing/broadcast": 3.2, "timing/step_total": gen * 1.9 + 3.2}


# ------------------------------------------------------------------------------------------------ file helpers

def touch(p: Path, t: float) -> None:
    os.utime(p, (t, t))


def fmt(v) -> str:
    return repr(round(v, 6)) if isinstance(v, float) and math.isfinite(v) else repr(v)


# ------------------------------------------------------------------------------------------------ writers

def w_trl_state(run: dict, folder: Path, vocab: Callable, save_every: int, planned: int, keep: int | None = None,
                top: bool = False, finished: bool = False, steps_per_epoch: int = 1000, logging_steps: int = 10,
                eval_steps: int | None = None, extras: Callable | None = None) -> None:
    """HF/TRL output dir: checkpoint-N/trainer_state.json (history up to N); top-level state at the end."""
    st, T = run["story"], run["T"]
    hist = []
    ev = {r["step"]: r for r in final(run["evals"])}
    for r in final(run["train"]):
        row = vocab(r)
        row.update(epoch=round(r["step"] / steps_per_epoch, 4), step=r["step"])
        hist.append(row)
        if r["step"] in ev:
            e = ev.pop(r["step"])
            erow = {k: v for k, v in e.items() if k not in ("step", "t", "attempt")}
            erow.update(eval_runtime=round(41.0 + 3 * math.sin(r["step"]), 3), eval_samples_per_second=6.1,
                        eval_steps_per_second=0.39, epoch=round(r["step"] / steps_per_epoch, 4), step=r["step"])
            hist.append(erow)
    reached = run["reached"]
    saves = list(range(save_every, reached + 1, save_every))
    if finished and reached not in saves:
        saves.append(reached)
    if keep:
        saves = saves[-keep:]
    for s in saves:
        d = folder / f"checkpoint-{s}"
        h = [row for row in hist if row["step"] <= s]
        dump_json(d / "trainer_state.json", trainer_state(h, s, planned, logging_steps, save_every, eval_steps,
                                                          round(s / steps_per_epoch, 4)))
        (d / "config.json").write_text('{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}\n')
        (d / "model.safetensors").write_bytes(b"\0" * 64)
        (d / "training_args.bin").write_bytes(b"\x80\x04" + b"\0" * 30)
        for p in d.iterdir():
            touch(p, T(s) + 30)
        touch(d, T(s) + 30)
    if top:
        h = list(hist)
        if finished:
            h.append({"epoch": round(reached / steps_per_epoch, 4), "step": reached, "total_flos": 0.0,
                      "train_loss": 0.0041, "train_runtime": round(reached * st.sps, 1),
                      "train_samples_per_second": 1.73, "train_steps_per_second": round(1 / st.sps, 4)})
        dump_json(folder / "trainer_state.json", trainer_state(h, reached, planned, logging_steps, save_every,
                                                               eval_steps, round(reached / steps_per_epoch, 4),
                                                               training_stop=finished))
        touch(folder / "trainer_state.json", T(reached) + 60)
    if extras:
        extras(run, folder)


def tqdm_bar(i: int, n: int, sps: float) -> str:
    frac = i / n
    full = int(frac * 10)
    bar = "█" * full + ("▌" if frac * 10 - full >= 0.5 else " ") + " " * (9 - full)
    bar = bar[:10]
    el, rem = int(i * sps), int((n - i) * sps)
    hms = lambda x: f"{x // 3600}:{x % 3600 // 60:02d}:{x % 60:02d}"  # noqa: E731
    return f"{int(frac * 100):3d}%|{bar}| {i}/{n} [{hms(el)}<{hms(rem)}, {sps:5.2f}s/it]"


def w_trl_console(run: dict, folder: Path, vocab: Callable, planned: int, steps_per_epoch: int = 1000,
                  crash: str | None = None, name: str = "train.log", resume_note: bool = True,
                  head: str = "") -> None:
    """transformers' console: tqdm bar updates and printed dicts (no step key, epoch rounded to 2 dp)."""
    st = run["story"]
    out = io.StringIO()
    out.write(head)
    rows = sorted([("t", r) for r in run["train"]] + [("e", r) for r in run["evals"]],
                  key=lambda x: (x[1]["attempt"], x[1]["step"], x[0] == "e"))
    cur = None
    for kind, r in rows:
        if cur is not None and r["attempt"] != cur:
            out.write("\n" + (crash or "") + "\n")
            if resume_note:
                out.write(f"[INFO|trainer.py:2412] Continuing training from checkpoint, will skip to saved "
                          f"global_step\n[INFO|trainer.py:2413]   Continuing training from epoch 0\n"
                          f"[INFO|trainer.py:2414]   Continuing training from global step {st.resume[0]}\n")
        cur = r["attempt"]
        s = r["step"]
        if kind == "t":
            for j in range(max(1, s - st.log_every + 1), s + 1, max(1, st.log_every // 3)):
                out.write("\r" + tqdm_bar(j, planned, st.sps))
            out.write("\r" + tqdm_bar(s, planned, st.sps))
            d = vocab(r)
            d["epoch"] = round(s / steps_per_epoch, 2)
            out.write("\n" + str(d) + "\n")
        else:
            d = {k: v for k, v in r.items() if k not in ("step", "t", "attempt")}
            d.update(eval_runtime=38.7, eval_samples_per_second=6.6, eval_steps_per_second=0.41,
                     epoch=round(s / steps_per_epoch, 2))
            out.write("\n" + str(d) + "\n")
    if crash and run["story"].resume is None:
        out.write("\n" + crash + "\n")
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(out.getvalue(), encoding="utf-8")
    touch(p, max(r["t"] for r in run["train"]) + 40)


def w_tb(run: dict, folder: Path, vocab: Callable, sub: str, train_prefix: str = "train/", eval_prefix: str = "eval/",
         strip_eval: str = "", splits: tuple[int, ...] = (), truncate: int = 0, host: str = "gpu-node-07",
         extra_files: Callable | None = None) -> None:
    """One event file per attempt (and per extra restart in `splits`), written as the framework names tags."""
    groups: dict[int, list] = {}
    for r in run["train"]:
        g = r["attempt"] * 100 + sum(r["step"] > s for s in splits)
        groups.setdefault(g, []).append((r["t"], r["step"], {train_prefix + k: v for k, v in vocab(r).items()
                                                             if v is not None and not isinstance(v, str)}))
    for r in run["evals"]:
        g = r["attempt"] * 100 + sum(r["step"] > s for s in splits)
        vals = {eval_prefix + (k[len(strip_eval):] if strip_eval and k.startswith(strip_eval) else k): v
                for k, v in r.items() if k not in ("step", "t", "attempt")}
        groups.setdefault(g, []).append((r["t"], r["step"], vals))
    keys = sorted(groups)
    for i, g in enumerate(keys):
        ev = sorted(groups[g], key=lambda x: x[0])
        t0 = ev[0][0] - 30
        path = folder / sub / f"events.out.tfevents.{int(t0)}.{host}.{31000 + 17 * i}.0"
        tb_file(path, ev, truncate=truncate if i == len(keys) - 1 else 0)
        touch(path, ev[-1][0] + 1)
    if extra_files:
        extra_files(run, folder)


def np2(v) -> str:
    if v is None:
        return "None"
    if isinstance(v, int):
        return f"np.int64({v})"
    return f"np.float64({float(v)!r})"


def w_verl_console(run: dict, folder: Path, vocab: Callable, planned: int, evkeys: dict | None = None,
                   numpy2: bool = True, ray: bool = True, crash: str | None = None, finished: bool = False,
                   name: str = "train.log", save_freq: int = 100) -> None:
    """verl LocalLogger lines `step:N - key:value - ...` mixed with Ray/vLLM chatter."""
    out = io.StringIO()
    pre = "(TaskRunner pid=48213) " if ray else ""
    out.write(f"{pre}Using dataset class: RLHFDataset\n{pre}dataset len: 40315\n")
    out.write(f"{pre}Size of train dataloader: {planned // 2}, Size of val dataloader: 1\n")
    out.write(f"{pre}Total training steps: {planned}\n")
    out.write(f"{pre}\x1b[36m(WorkerDict pid=48977)\x1b[0m INFO 06-11 09:14:22 [model_runner.py:1110] Loading model "
              f"weights took 2.8713 GB\n")
    ev = {r["step"]: r for r in run["evals"]}

    def val(r):
        return {k: v for k, v in r.items() if k not in ("step", "t", "attempt")}
    if 0 in ev:
        out.write(f"{pre}step:0 - " + " - ".join(f"{k}:{np2(v) if numpy2 else repr(v)}"
                                                 for k, v in val(ev[0]).items()) + "\n")
    last_val = val(ev[0]) if 0 in ev else {}
    for r in run["train"]:
        s = r["step"]
        d = vocab(r)
        if s in ev:
            d.update(val(ev[s]))
            last_val = val(ev[s])
            d["timing_s/testing"] = 95.0
        if s % save_freq == 0:
            d["timing_s/save_checkpoint"] = 41.0
        parts = []
        for k, v in d.items():
            if v is None:
                continue
            if numpy2 and not k.startswith(("timing_s/", "perf/")):
                parts.append(f"{k}:{np2(v)}")
            else:
                parts.append(f"{k}:{v!r}")
        out.write(f"{pre}step:{s} - " + " - ".join(parts) + "\n")
        if s % 37 == 0:
            out.write(f"{pre}\x1b[36m(WorkerDict pid=48977)\x1b[0m INFO 06-11 [executor_base.py:208] It took "
                      f"0.41 seconds to fall asleep.\n")
    if crash:
        out.write(crash + "\n")
    if finished:
        out.write(f"{pre}Final validation metrics: {last_val!r}\n")
    p = folder / name
    p.write_text(out.getvalue(), encoding="utf-8")
    touch(p, run["train"][-1]["t"] + (60 if crash or finished else 2))


def w_verl_jsonl(run: dict, folder: Path, vocab: Callable, project: str, exp: str, torn: bool = False) -> None:
    """FileLogger: {"step": N, "data": {...}} per line, orjson-style compact, NaN -> null."""
    ev = {r["step"]: r for r in run["evals"]}
    lines = []
    if 0 in ev:
        lines.append({"step": 0, "data": {k: v for k, v in ev[0].items() if k not in ("step", "t", "attempt")}})
    for r in run["train"]:
        d = vocab(r)
        if r["step"] in ev:
            d.update({k: v for k, v in ev[r["step"]].items() if k not in ("step", "t", "attempt")})
        lines.append({"step": r["step"], "data": d})

    def clean(v):
        return None if isinstance(v, float) and not math.isfinite(v) else v
    text = "".join(json.dumps({"step": x["step"], "data": {k: clean(v) for k, v in x["data"].items()}},
                              separators=(",", ":")) + "\n" for x in lines)
    if torn:
        text = text[: len(text) - len(text.splitlines()[-1]) // 2 - 1]
    p = folder / project / f"{exp}.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    touch(p, run["train"][-1]["t"] + 1)


def w_openrlhf_console(run: dict, folder: Path, planned: int, name: str = "train.log") -> None:
    T = run["T"]
    out = io.StringIO()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(T(0) - 300))
    out.write(f"[{stamp},118] [INFO] [real_accelerator.py:222:get_accelerator] Setting ds_accelerator "
              "to cuda (auto detect)\n")
    ev = {r["step"]: r for r in run["evals"]}
    for r in run["train"]:
        s = r["step"]
        out.write(f"\rEpisode [1/1]:  {tqdm_bar(s, planned, run['story'].sps)}")
        d = {k: (float(f"{v:.6g}") if isinstance(v, float) else v) for k, v in v_openrlhf(r).items()}
        out.write(f"\n✨ Global step {s}: {d}\n")
        if s in ev:
            e = {k: v for k, v in ev[s].items() if k not in ("step", "t", "attempt")}
            e.update(eval_response_length_mean=round(r.get("len", 700.0) * 0.97, 2), eval_num_samples=500)
            out.write(f"Evaluation completed in 52.31 seconds, global_step {s}, eval_metrics: {e}\n")
    p = folder / name
    p.write_text(out.getvalue(), encoding="utf-8")
    touch(p, run["train"][-1]["t"] + 3)


def w_wandb_history_csv(run: dict, folder: Path, vocab: Callable, config: dict, name: str = "history.csv") -> None:
    """`run.history()`/`scan_history()` exported to CSV: one row per log call, `_step` keeps counting across resume."""
    T = run["T"]
    rows = []
    recs = sorted([(r["t"], "t", r) for r in run["train"]] + [(r["t"], "e", r) for r in run["evals"]],
                  key=lambda x: x[0])
    t0 = recs[0][0] - 45
    for i, (t, kind, r) in enumerate(recs):
        if kind == "t":
            d = {f"train/{k}": v for k, v in vocab(r).items()}
        else:
            d = {f"eval/{k[5:] if k.startswith('eval_') else k}": v for k, v in r.items()
                 if k not in ("step", "t", "attempt")}
            d.update({"eval/runtime": 40.2, "eval/samples_per_second": 6.3})
        d.update({"_step": i, "_runtime": round(t - t0, 3),
                  "_timestamp": round(t, 3), "train/global_step": r["step"],
                  "train/epoch": round(r["step"] / config.get("steps_per_epoch", 1000), 4)})
        rows.append(d)
    cols = sorted({k for d in rows for k in d}, key=lambda k: (not k.startswith("_"), k))
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(cols)
    for d in rows:
        w.writerow(["" if d.get(k) is None else ("NaN" if isinstance(d[k], float) and math.isnan(d[k]) else d[k])
                    for k in cols])
    p = folder / name
    p.write_text(buf.getvalue(), encoding="utf-8")
    touch(p, recs[-1][0] + 20)
    cfg = folder / "config.yaml"
    cfg.write_text("_wandb:\n  value:\n    cli_version: 0.19.11\n    python_version: 3.11.9\n    t:\n      1: [1, 11, 41, 49, 51, 55, 71, 84, 98, 105]\n"
                   + "".join(f"{k}:\n  value: {v}\n" for k, v in config.items()), encoding="utf-8")
    touch(cfg, T(0))


def w_mlflow_files(run: dict, folder: Path, vocab: Callable, params: dict, finished: bool = False,
                   run_name: str = "rl-run", exp_id: str = "412395501847115123") -> None:
    """MLflow file store as HF's MLflowCallback leaves it: raw keys, `/` as nested dirs, `ts value step` lines."""
    rid = "9f2c61d0b7a54e0f8d3c2b1a0e9f8d7c"
    base = folder / "mlruns" / exp_id
    rd = base / rid
    series: dict[str, list[str]] = {}
    recs = sorted([(r["t"], r, vocab(r)) for r in run["train"]]
                  + [(r["t"], r, {k: v for k, v in r.items() if k not in ("step", "t", "attempt")})
                     for r in run["evals"]], key=lambda x: x[0])
    for t, r, d in recs:
        for k, v in d.items():
            if v is None:
                continue
            sv = "nan" if isinstance(v, float) and math.isnan(v) else repr(float(v))
            series.setdefault(k, []).append(f"{int(t * 1000)} {sv} {r['step']}")
    for k, lines in series.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(lines) + "\n")
    (rd / "params").mkdir(parents=True, exist_ok=True)
    for k, v in params.items():
        (rd / "params" / k).write_text(str(v))
    (rd / "tags").mkdir(parents=True, exist_ok=True)
    (rd / "tags" / "mlflow.runName").write_text(run_name)
    (rd / "tags" / "mlflow.user").write_text("root")
    (rd / "artifacts").mkdir(parents=True, exist_ok=True)
    start_ms = int(recs[0][0] * 1000) - 60000
    end = int(recs[-1][0] * 1000) + 30000 if finished else None
    (base / "meta.yaml").write_text(f"artifact_location: file://{base}\ncreation_time: {start_ms}\nexperiment_id: "
                                    f"'{exp_id}'\nlast_update_time: {start_ms}\nlifecycle_stage: active\n"
                                    f"name: grpo-math\n")
    (rd / "meta.yaml").write_text(
        f"artifact_uri: file://{rd}/artifacts\nend_time: {end if end else 'null'}\nentry_point_name: ''\n"
        f"experiment_id: '{exp_id}'\nlifecycle_stage: active\nrun_id: {rid}\nrun_name: {run_name}\nrun_uuid: {rid}\n"
        f"source_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: {start_ms}\n"
        f"status: {3 if finished else 1}\ntags: []\nuser_id: root\n")
    last = recs[-1][0] + (30 if finished else 2)
    for p in rd.rglob("*"):
        touch(p, last)


def w_custom_csv(run: dict, folder: Path, names: dict, eval_names: dict, name: str = "metrics.csv",
                 crlf: bool = False, config: dict | None = None, eval_file: str | None = None, pct: bool = False,
                 tail_log: str | None = None) -> None:
    """A hand-written loop's CSV: its own column names; evals either in sparse columns or in their own file."""
    T = run["T"]
    ev = {r["step"]: r for r in final(run["evals"])}
    cols = list(names.values()) + ([] if eval_file else list(eval_names.values()))
    nl = "\r\n" if crlf else "\n"
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator=nl)
    w.writerow(cols)
    for r in run["train"]:
        vals = []
        for k in names:
            v = r["step"] if k == "step" else (r["t"] if k == "t" else r.get(k))
            vals.append("" if v is None else (f"{v:.1f}" if k == "t" else f"{v:.6g}" if isinstance(v, float) else v))
        if not eval_file:
            e = ev.get(r["step"])
            vals += ["" if e is None else (f"{100 * e[k]:.1f}" if pct else f"{e[k]:.4f}") for k in eval_names]
        w.writerow(vals)
    p = folder / name
    p.write_text(buf.getvalue(), encoding="utf-8", newline="")
    touch(p, run["train"][-1]["t"] + 1)
    if eval_file:
        q = folder / eval_file
        q.write_text("".join(json.dumps({"step": s, **{eval_names[k]: e[k] for k in eval_names},
                                         "time": round(e["t"], 1)}) + "\n" for s, e in sorted(ev.items())))
        touch(q, max(e["t"] for e in ev.values()) + 1)
    if config:
        c = folder / "config.json"
        c.write_text(json.dumps(config, indent=2) + "\n")
        touch(c, T(0))
    if tail_log:
        q = folder / "run.log"
        q.write_text(tail_log)
        touch(q, run["train"][-1]["t"] + 50)


def w_custom_jsonl(run: dict, folder: Path, names: dict, eval_names: dict, name: str = "train_log.jsonl",
                   eval_file: str = "eval_log.jsonl", torn: bool = False, config: dict | None = None,
                   crash: str | None = None) -> None:
    T = run["T"]
    lines = []
    for r in run["train"]:
        d = {}
        for k, col in names.items():
            v = r["step"] if k == "step" else (round(r["t"], 2) if k == "t" else r.get(k))
            d[col] = round(v, 6) if isinstance(v, float) and math.isfinite(v) else v
        lines.append(json.dumps(d))
    text = "\n".join(lines) + "\n"
    if torn:
        text = text[: len(text) - len(lines[-1]) // 2 - 1]
    p = folder / name
    p.write_text(text, encoding="utf-8")
    touch(p, run["train"][-1]["t"] + 1)
    if run["evals"]:
        q = folder / eval_file
        q.write_text("".join(json.dumps({"step": e["step"], **{v: round(e[k], 5) for k, v in eval_names.items()}})
                             + "\n" for e in run["evals"]))
        touch(q, run["evals"][-1]["t"] + 1)
    if config:
        c = folder / "config.json"
        c.write_text(json.dumps(config, indent=2) + "\n")
        touch(c, T(0))
    if crash:
        c = folder / "stderr.log"
        c.write_text(crash + "\n")
        touch(c, run["train"][-1]["t"] + 25)


# ------------------------------------------------------------------------------------------------ tracebacks

OOM = """Traceback (most recent call last):
  File "/opt/verl/verl/trainer/main_ppo.py", line 312, in <module>
    main()
  File "/opt/verl/verl/trainer/ppo/ray_trainer.py", line 1187, in fit
    actor_output = self.actor_rollout_wg.update_actor(batch)
ray.exceptions.RayTaskError(OutOfMemoryError): \x1b[36mray::WorkerDict.actor_rollout_update_actor()\x1b[39m
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.42 GiB. GPU 3 has a total capacity of 79.19 GiB of \
which 3.12 GiB is free."""

NAN_TB = """Traceback (most recent call last):
  File "/home/rl/grpo_loop/train.py", line 388, in <module>
    main(cfg)
  File "/home/rl/grpo_loop/train.py", line 341, in main
    raise FloatingPointError(f"non-finite loss at step {step} for 30 consecutive steps, aborting")
FloatingPointError: non-finite loss at step 2240 for 30 consecutive steps, aborting"""

NCCL = """Traceback (most recent call last):
  File "/workspace/open-r1/src/open_r1/grpo.py", line 276, in <module>
    main(script_args, training_args, model_args)
  File "/workspace/open-r1/src/open_r1/grpo.py", line 231, in main
    train_result = trainer.train(resume_from_checkpoint=checkpoint)
  File "/usr/local/lib/python3.11/site-packages/transformers/trainer.py", line 2240, in train
    return inner_training_loop(
RuntimeError: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88231, OpType=ALLREDUCE) ran \
for 1800042 milliseconds before timing out.
[rank3]:[E ProcessGroupNCCL.cpp:1537] Some NCCL operations have failed or timed out. To avoid data inconsistency, \
we are taking the entire process down."""


# ------------------------------------------------------------------------------------------------ the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable  # (run, folder) -> None
    seed: int
    steps: int | tuple[int, int]  # reached, or (reached, planned)
    kind: str  # ok | conv | stop | rb | sor
    tags: str
    why: str
    onset: int | None = None

    def case(self) -> Case:
        reached = self.steps[0] if isinstance(self.steps, tuple) else self.steps
        if self.kind == "ok":
            labels = dict(HEALTHY)
        elif self.kind == "conv":
            labels = converged()
            labels["onset_step"] = self.onset
        elif self.kind == "stop":
            labels = stop(self.onset)
        else:
            lo, hi = window(self.story, reached, self.onset)
            labels = (rollback if self.kind == "rb" else stop_or_rollback)(lo, hi, self.onset)
        return Case(self.name, lambda *_: None, self.write, self.seed, self.steps, labels, self.tags, self.why)


def window(st: Story, reached: int, onset: int) -> tuple[int, int]:
    lv = st.headline_level()
    steps = st.headline_steps(reached)
    best = max(lv(s) for s in steps if s <= onset)
    sd = st.headline_sd(best)
    good = [s for s in steps if lv(s) >= best - sd]
    return good[0], max(s for s in good if s <= onset)


ACC = "eval_rewards/accuracy_reward/mean"
M = lambda lvl, sd: (lvl, sd, "mul")  # noqa: E731
A = lambda lvl, sd: (lvl, sd, "add")  # noqa: E731


def collapse_after(base: Level, at: float, *pts: tuple[float, float]) -> Level:
    """base up to `at`, then piecewise linear from base(at) through pts."""
    tail = pw((at, base(at)), *pts)
    return glue(base, at, tail)


# ---- healthy look-alikes
_a = Story(sat(0.22, 0.55, 600), ACC, evals={ACC: (sat(0.20, 0.52, 650), 512)}, eval_every=100, P=16, G=8,
           log_every=10, comps={"format_reward": sat(0.30, 0.97, 80), "tag_count_reward": sat(0.55, 0.92, 150)},
           side={"entropy": M(pw((0, 0.62), (700, 0.48)), 0.04), "len": M(pw((0, 620), (700, 780)), 0.04),
                 "trunc": M(const(0.015), 0.2), "step_time": M(const(27.0), 0.05)},
           lr=cosine_lr(1e-6, 50, 2000), sps=28, age_min=6)

_b = Story(sat(0.28, 0.56, 1400), "val-core/deepscaler/acc/mean@8",
           evals={"val-core/deepscaler/acc/mean@8": (sat(0.24, 0.42, 1500), 4000),
                  "val-core/deepscaler/acc/best@8/mean": (sat(0.52, 0.66, 1500), 500),
                  "val-aux/deepscaler/reward/mean@8": (sat(0.24, 0.42, 1500), 4000)},
           eval_every=50, eval_at0=True, P=128, G=8,
           side={"entropy": M(sat(0.55, 0.33, 500), 0.04), "kl": M(pw((0, 0.0), (1300, 0.012)), 0.05),
                 "len": M(sat(900, 1900, 900), 0.03), "trunc": M(pw((0, 0.004), (1300, 0.02)), 0.15),
                 "clipfrac": M(const(0.0015), 0.1)},
           grad=const(0.18), lr=const(1e-6), sps=95, age_min=3,
           nan={211: {"grad_norm": float("nan")}, 212: {"grad_norm": float("nan")},
                640: {"grad_norm": float("inf")}, 1033: {"grad_norm": float("nan")}})

_c = Story(loglin(0.15, 0.16, 300), "eval_math500_pass1", evals={"eval_math500_pass1": (loglin(0.26, 0.14, 400), 500)},
           eval_every=500, P=128, G=4, log_every=4, averaged=False,
           side={"kl": M(pw((0, 0.0), (12000, 0.09)), 0.05), "len": M(loglin(450, 200, 1000), 0.03),
                 "trunc": M(const(0.01), 0.2), "clipfrac": M(const(0.006), 0.1)},
           grad=const(0.12), lr=const(5e-7), sps=14, age_min=4, resume=(7600, 7720))

_d = Story(loglin(-0.8, 0.9, 800), "winrate", kind="score", score_sd=1.6, P=32, G=4, log_every=16, averaged=False,
           evals={"winrate": (loglin(0.35, 0.16, 2000), 800), "rm": (loglin(-0.9, 0.85, 800), 800, 1.6)},
           eval_every=4000,
           side={"kl": M(loglin(0.0, 0.05, 500), 0.05), "entropy": M(pw((0, 1.9), (48000, 1.6)), 0.03),
                 "len": M(loglin(210, 60, 2000), 0.04)},
           grad=const(0.9), lr=const(5e-7), sps=3.5, age_min=2)

_e = Story(sat(0.15, 0.60, 700), TRAIN, P=16, G=8, log_every=10, comps={"format_reward": sat(0.2, 0.95, 100)},
           side={"kl": M(pw((0, 0.0), (900, 0.06)), 0.05), "len": M(pw((0, 480), (900, 610)), 0.04)},
           grad=const(0.3), lr=cosine_lr(1e-6, 30, 1500), sps=25, age_min=3, resume=(600, 680))
_e.stale = replace(_e, reward=collapse_after(_e.reward, 600, (640, 0.30), (680, 0.04)),
                   comps={"format_reward": collapse_after(_e.comps["format_reward"], 610, (680, 0.10))},
                   side={"kl": M(pw((0, 0.0), (600, 0.04), (640, 0.6), (680, 2.5)), 0.05),
                         "len": M(pw((0, 480), (600, 590), (650, 1900), (680, 2048)), 0.04)},
                   grad=pw((0, 0.3), (605, 0.3), (630, 9.0), (680, 40.0)), resume=None,
                   nan={670: {"loss": float("nan"), "grad_norm": float("nan")},
                        680: {"loss": float("nan"), "grad_norm": float("nan")}})

_f = Story(sat(0.12, 0.55, 350), "eval_reward", evals={"eval_reward": (sat(0.14, 0.50, 400), 400)}, eval_every=40,
           P=128, G=2, log_every=10, comps={},
           acc_name="correctness", side={"kl": M(pw((0, 0.0), (20, 0.004), (240, 0.09)), 0.06),
                                         "entropy": M(pw((0, 0.58), (240, 0.50)), 0.03),
                                         "len": M(pw((0, 350), (240, 410)), 0.04)},
           grad=const(0.4), lr=const(1e-6), sps=40, age_min=8)

_g = Story(sat(0.35, 0.72, 300), "val-core/math_lighteval/acc/mean@1",
           evals={"val-core/math_lighteval/acc/mean@1": (sat(0.42, 0.62, 250), 5000)}, eval_every=20, eval_at0=True,
           P=256, G=8, side={"entropy": M(pw((0, 0.95), (80, 0.40), (420, 0.36)), 0.03),
                             "kl": M(pw((0, 0.0), (420, 0.02)), 0.05), "len": M(pw((0, 620), (80, 540), (420, 700)), 0.03),
                             "trunc": M(const(0.006), 0.2), "clipfrac": M(const(0.002), 0.1)},
           grad=pw((0, 0.6), (80, 0.25), (420, 0.2)), lr=const(1e-6), sps=70, age_min=1.5)

_h = Story(sat(0.50, 0.78, 300), "eval_rewards/accuracies",
           evals={"eval_rewards/accuracies": (sat(0.52, 0.74, 450), 1000),
                  "eval_loss": (sat(0.693, 0.55, 450), 1000, 0.6), "eval_rewards/margins": (sat(0.0, 1.3, 450), 1000, 2.0)},
           eval_every=125, P=64, G=1, spread=0.8, log_every=10,
           side={"margin": A(sat(0.0, 1.6, 400), 0.05), "chosen": A(pw((0, 0.0), (750, -0.4)), 0.05),
                 "logp_c": A(pw((0, -310), (750, -340)), 3.0), "dpo_loss": M(sat(0.693, 0.45, 350), 0.05)},
           grad=const(9.0), lr=cosine_lr(5e-7, 100, 1860), sps=12, age_min=20,
           nan={130: {"grad_norm": float("nan")}, 340: {"grad_norm": float("inf")},
                520: {"grad_norm": float("nan"), "dpo_loss": float("nan")}})

_i = Story(sat(0.30, 0.62, 900), ACC, evals={ACC: (sat(0.28, 0.55, 1000), 1000)}, eval_every=100, P=32, G=8,
           log_every=10, comps={"format_reward": sat(0.5, 0.98, 60)}, cap=4096,
           side={"len": M(pw((0, 900), (1100, 2600)), 0.03), "trunc": M(pw((0, 0.005), (1100, 0.06)), 0.1),
                 "entropy": M(pw((0, 0.70), (1100, 0.62)), 0.03), "step_time": M(pw((0, 30), (1100, 75)), 0.05)},
           grad=const(0.22), lr=const(1e-6), sps=40, age_min=4, resume=(800, 860))

# ---- stop / converged
_j = Story(pw((0, 0.30), (800, 0.66), (1500, 0.68)), ACC, evals={ACC: (pw((0, 0.30), (800, 0.56), (1500, 0.56)), 500)},
           eval_every=100, P=16, G=8, log_every=10, comps={"format_reward": sat(0.4, 0.99, 80)},
           side={"entropy": M(pw((0, 0.55), (800, 0.30), (1500, 0.27)), 0.04), "len": M(pw((0, 700), (1500, 560)), 0.04),
                 "trunc": M(const(0.01), 0.2)},
           lr=cosine_lr(1e-6, 50, 1500), sps=30, age_min=1500)

_k = Story(sat(0.55, 0.975, 120), "val-core/openai/gsm8k/acc/mean@1",
           evals={"val-core/openai/gsm8k/acc/mean@1": (pw((0, 0.62), (400, 0.84), (950, 0.84)), 1319)},
           eval_every=25, eval_at0=True, P=64, G=8, spread=1.0,
           side={"entropy": M(sat(0.6, 0.06, 150), 0.05), "kl": M(pw((0, 0.0), (400, 0.02), (950, 0.03)), 0.05),
                 "len": M(sat(320, 190, 200), 0.03), "trunc": M(const(0.001), 0.3)},
           grad=sat(0.5, 0.05, 200), lr=const(1e-6), sps=40, age_min=3)

_l = Story(pw((0, 0.20), (1200, 0.52), (1850, 0.52)), "eval_math_pass1",
           evals={"eval_math_pass1": (pw((0, 0.35), (1200, 0.55), (1850, 0.55)), 500)}, eval_every=50,
           P=64, G=8, averaged=False,
           side={"kl": M(pw((0, 0.0), (1200, 0.05), (1850, 0.06)), 0.05), "len": M(pw((0, 800), (1850, 950)), 0.03),
                 "trunc": M(const(0.01), 0.2), "group_std": M(const(0.3), 0.05)},
           grad=const(0.15), lr=cosine_lr(1e-6, 50, 2000), sps=45, age_min=2)

_m = Story(const(0.025), TRAIN, P=32, G=16, spread=2.0,
           side={"kl": M(pw((0, 0.0), (20, 0.0008), (520, 0.004)), 0.1), "entropy": M(const(0.50), 0.03),
                 "len": M(const(1400), 0.04)},
           grad=const(0.04), lr=const(1e-6), sps=50, age_min=420)

_n = Story(pw((0, 0.55), (600, 0.85), (1200, 0.92)), "eval_rewards/accuracies",
           evals={"eval_rewards/accuracies": (pw((0, 0.55), (600, 0.74), (1200, 0.745)), 1500),
                  "eval_loss": (pw((0, 0.693), (600, 0.55), (1200, 0.548)), 1500, 0.6)},
           eval_every=100, P=64, G=1, spread=0.8, log_every=10,
           side={"margin": A(pw((0, 0.0), (600, 1.5), (1200, 2.4)), 0.05), "chosen": A(pw((0, 0.0), (1200, -0.6)), 0.05),
                 "logp_c": A(pw((0, -280), (1200, -320)), 3.0), "dpo_loss": M(pw((0, 0.693), (600, 0.45), (1200, 0.33)), 0.05)},
           grad=const(7.0), lr=cosine_lr(5e-7, 100, 1200), sps=10, age_min=600)

_o = Story(pw((0, 0.25), (500, 0.58), (1130, 0.60)), "val-core/math500/acc/mean@4",
           evals={"val-core/math500/acc/mean@4": (pw((0, 0.40), (500, 0.61), (1130, 0.61)), 2000)},
           eval_every=50, eval_at0=True, P=64, G=8, cap=8192,
           side={"len": M(pw((0, 1100), (1130, 2900)), 0.03), "trunc": M(pw((0, 0.002), (1130, 0.012)), 0.2),
                 "entropy": M(pw((0, 0.5), (500, 0.38), (1130, 0.36)), 0.03), "kl": M(pw((0, 0.0), (1130, 0.015)), 0.05)},
           grad=const(0.2), lr=const(1e-6), sps=80, age_min=50)

_p = Story(pw((0, 0.30), (300, 0.55), (1400, 0.55)), "eval_reward",
           evals={"eval_reward": (pw((0, 0.32), (300, 0.52), (1400, 0.52)), 800)}, eval_every=100, P=128, G=2,
           log_every=10, acc_name="math_verify",
           side={"kl": M(pw((0, 0.0), (300, 0.03), (1400, 0.25)), 0.05), "entropy": M(pw((0, 0.5), (1400, 0.30)), 0.03),
                 "len": M(pw((0, 500), (1400, 470)), 0.03)},
           grad=const(0.3), lr=const(1e-6), sps=25, age_min=5)

_ab = Story(pw((0, -0.4), (250, 1.6), (600, 1.65)), TRAIN, kind="score", score_sd=2.0, P=64, G=1,
            side={"kl": M(pw((0, 0.1), (250, 3.0), (600, 4.0)), 0.05), "entropy": M(pw((0, 45), (600, 38)), 0.03),
                  "clipfrac": M(const(0.03), 0.1), "vloss": M(sat(0.6, 0.08, 100), 0.1), "eos": M(const(61), 0.02)},
            grad=const(1.0), lr=pw((0, 3e-6), (600, 0.0)), sps=22, age_min=2900)

# ---- clear failures
_r = Story(collapse_after(sat(0.20, 0.62, 500), 1560, (1650, 0.30), (1740, 0.18)), ACC,
           evals={ACC: (collapse_after(sat(0.22, 0.58, 450), 1560, (1700, 0.30), (1740, 0.28)), 800)},
           eval_every=100, P=16, G=8, log_every=10, comps={"format_reward": sat(0.5, 0.97, 80)},
           side={"entropy": M(pw((0, 0.55), (1560, 0.42), (1620, 0.04), (1740, 0.02)), 0.05),
                 "len": M(pw((0, 700), (1560, 820), (1650, 260), (1740, 240)), 0.04),
                 "trunc": M(pw((0, 0.01), (1560, 0.01), (1650, 0.0005)), 0.2)},
           grad=pw((0, 0.2), (1540, 0.2), (1580, 2.5), (1740, 0.6)), lr=const(1e-6), sps=32, age_min=2)

_s = Story(collapse_after(sat(0.25, 0.63, 400), 950, (1050, 0.35), (1150, 0.08)), "eval_math_pass1",
           evals={"eval_math_pass1": (collapse_after(sat(0.30, 0.52, 400), 950, (1150, 0.12)), 500)},
           eval_every=50, P=64, G=8, averaged=False,
           side={"kl": M(pw((0, 0.0), (950, 0.03), (1000, 0.4), (1150, 3.0)), 0.08),
                 "len": M(pw((0, 600), (950, 720), (1150, 1600)), 0.04), "trunc": M(pw((0, 0.01), (950, 0.01), (1150, 0.2)), 0.1),
                 "clipfrac": M(pw((0, 0.004), (950, 0.005), (1150, 0.15)), 0.1)},
           grad=pw((0, 0.15), (930, 0.15), (960, 3.0), (1150, 8.0)), spike_p=0.06, lr=const(1e-6), sps=50, age_min=3)

_t = Story(pw((0, 0.35), (720, 0.58), (1300, 0.80)), ACC, evals={ACC: (pw((0, 0.33), (550, 0.51), (720, 0.52), (1300, 0.40)), 1000)},
           eval_every=100, P=32, G=8, log_every=10, comps={"format_reward": sat(0.6, 0.99, 50)},
           side={"len": M(pw((0, 640), (720, 560), (1300, 180)), 0.04), "entropy": M(pw((0, 0.6), (720, 0.45), (1300, 0.2)), 0.04),
                 "trunc": M(pw((0, 0.01), (1300, 0.0)), 0.2)},
           grad=const(0.25), lr=const(1e-6), sps=30, age_min=6)

_u = Story(collapse_after(sat(0.10, 0.55, 900), 2205, (2215, 0.0), (2240, 0.0)), TRAIN, P=32, G=8, log_every=5,
           averaged=False, side={"kl": M(pw((0, 0.0), (2240, 0.05)), 0.05), "entropy": M(pw((0, 0.7), (2240, 0.5)), 0.03),
                                 "len": M(pw((0, 300), (2240, 520)), 0.04)},
           grad=pw((0, 0.5), (2150, 0.5), (2200, 4.0)), lr=const(2e-6), sps=35, age_min=40,
           nan={s: {"loss": float("nan"), "grad_norm": float("nan"), "kl": float("nan"), "entropy": float("nan")}
                for s in range(2210, 2241, 5)})

_v = Story(collapse_after(sat(0.15, 0.48, 1500), 4100, (4400, 0.20), (4800, 0.05)), "val-core/aime25/acc/mean@32",
           evals={"val-core/aime25/acc/mean@32": (collapse_after(sat(0.12, 0.36, 1600), 4100, (4800, 0.06)), 960)},
           eval_every=100, eval_at0=True, P=32, G=16, cap=20480,
           side={"entropy": M(pw((0, 0.45), (4100, 0.38), (4250, 1.8), (4800, 3.5)), 0.04),
                 "len": M(pw((0, 2500), (4100, 5200), (4400, 15000), (4800, 19000)), 0.03),
                 "trunc": M(pw((0, 0.01), (4100, 0.03), (4400, 0.5), (4800, 0.85)), 0.05),
                 "kl": M(pw((0, 0.0), (4100, 0.02), (4800, 0.6)), 0.05), "clipfrac": M(pw((0, 0.002), (4100, 0.003), (4800, 0.05)), 0.1)},
           grad=pw((0, 0.12), (4100, 0.12), (4300, 1.5), (4800, 3.0)), lr=const(1e-6), sps=60, age_min=5)

_ac = Story(collapse_after(sat(0.30, 0.62, 300), 520, (900, 0.25)), "eval_math_pass1",
            evals={"eval_math_pass1": (collapse_after(sat(0.35, 0.55, 300), 520, (900, 0.28)), 500)}, eval_every=40,
            P=64, G=8, averaged=False, cap=8192,
            side={"len": M(pw((0, 900), (520, 1600), (700, 5500), (900, 7900)), 0.03),
                  "trunc": M(pw((0, 0.01), (520, 0.03), (700, 0.35), (900, 0.72)), 0.05),
                  "kl": M(pw((0, 0.0), (520, 0.04), (900, 0.2)), 0.05), "group_std": M(const(0.3), 0.05)},
            grad=const(0.2), lr=const(1e-6), sps=55, age_min=2)

# ---- subtle failures
_w = Story(sat(0.30, 0.70, 700), "val-core/olympiad_bench/acc/mean@4",
           evals={"val-core/olympiad_bench/acc/mean@4": (pw((0, 0.22), (450, 0.36), (620, 0.37), (1250, 0.32)), 2700),
                  "val-aux/olympiad_bench/acc/best@4/mean": (pw((0, 0.34), (450, 0.48), (620, 0.49), (1250, 0.43)), 675)},
           eval_every=50, eval_at0=True, P=128, G=8,
           side={"entropy": M(pw((0, 0.5), (1250, 0.36)), 0.03), "kl": M(pw((0, 0.0), (1250, 0.03)), 0.05),
                 "len": M(pw((0, 1500), (620, 1650), (1250, 1500)), 0.03), "trunc": M(const(0.01), 0.2),
                 "clipfrac": M(const(0.002), 0.1)},
           grad=const(0.15), lr=const(1e-6), sps=90, age_min=4)

_x = Story(pw((0, 0.35), (700, 0.60), (1600, 0.61)), ACC,
           evals={ACC: (pw((0, 0.30), (700, 0.50), (1000, 0.50), (1600, 0.478)), 600)}, eval_every=100, P=32, G=8,
           log_every=10, side={"kl": M(pw((0, 0.0), (700, 0.02), (1600, 0.09)), 0.05),
                               "entropy": M(pw((0, 0.5), (1600, 0.38)), 0.03), "len": M(pw((0, 600), (1600, 640)), 0.03),
                               "trunc": M(const(0.008), 0.2)},
           grad=const(0.25), lr=const(1e-6), sps=30, age_min=5, resume=(1000, 1060))

_y = Story(sat(0.20, 0.68, 400), "eval_acc", evals={"eval_acc": (pw((0, 0.22), (450, 0.41), (800, 0.33)), 500)},
           eval_every=50, P=32, G=8,
           side={"kl": M(pw((0, 0.0), (800, 0.04)), 0.05), "entropy": M(pw((0, 0.62), (800, 0.41)), 0.03),
                 "len": M(pw((0, 410), (450, 380), (800, 300)), 0.04)},
           grad=const(0.6), lr=const(1e-6), sps=45, age_min=300)

_z = Story(collapse_after(sat(0.28, 0.62, 400), 900, (1320, 0.50)), ACC,
           evals={ACC: (collapse_after(sat(0.30, 0.56, 400), 900, (1320, 0.45)), 500)}, eval_every=100, P=16, G=8,
           log_every=10, cap=4096, comps={"format_reward": sat(0.5, 0.98, 60)},
           side={"len": M(pw((0, 1100), (900, 1800), (1320, 3700)), 0.03), "trunc": M(pw((0, 0.02), (900, 0.05), (1320, 0.45)), 0.05),
                 "entropy": M(pw((0, 0.55), (900, 0.48), (1320, 0.62)), 0.03)},
           grad=const(0.25), lr=cosine_lr(1e-6, 60, 3000), sps=35, age_min=180)

_aa = Story(collapse_after(sat(0.25, 0.60, 300), 600, (1000, 0.45)), "eval_reward",
            evals={"eval_reward": (collapse_after(sat(0.25, 0.56, 250), 600, (1000, 0.44)), 800)}, eval_every=50,
            P=16, G=8, log_every=10, acc_name="accuracy",
            side={"entropy": M(pw((0, 0.5), (600, 0.40), (1000, 0.55)), 0.03), "len": M(pw((0, 600), (1000, 640)), 0.03),
                  "trunc": M(const(0.01), 0.2)},
            grad=pw((0, 0.2), (600, 0.2), (650, 0.7), (1000, 0.6)),
            lr=glue(cosine_lr(1e-6, 30, 2000), 600, pw((600, 0.0), (630, 3e-6), (1000, 3e-6))), sps=30, age_min=6,
            resume=(600, 700))
_aa.stale = replace(_aa, reward=sat(0.25, 0.60, 300), evals={"eval_reward": (sat(0.25, 0.56, 250), 800)},
                    grad=const(0.2), lr=cosine_lr(1e-6, 30, 2000), resume=None,
                    side={"entropy": M(pw((0, 0.5), (700, 0.39)), 0.03), "len": M(pw((0, 600), (1000, 640)), 0.03),
                          "trunc": M(const(0.01), 0.2)})


def with_epoch(vocab: Callable, steps_per_epoch: int) -> Callable:
    return lambda r: {**vocab(r), "epoch": round(r["step"] / steps_per_epoch, 4)}


Y_TAIL = ("[12:02:11] step 800/800 | eval written to metrics.csv\n"
          "[12:03:40] training complete: 800 steps in 10h00m; final weights saved to out/final/\n")

SPECS: list[Spec] = [
    # ------------------------------------------------------------------------------------------------ healthy
    Spec("ok-trl1x-grpo-three-reward-fns-checkpoint-folders-only-save-limit-3", _a,
         lambda run, f: w_trl_state(run, f, v_trl_grpo("1x"), 100, 2000, keep=3, eval_steps=100,
                                    steps_per_epoch=1870),
         2001, (700, 2000), "ok", "healthy trl trl1x grpo trainer-state checkpoints-only multi-reward live",
         "TRL 1.x GRPO with three reward functions (accuracy, format, tag count); no top-level trainer_state.json, "
         "only checkpoint-500/600/700 (save_total_limit 3), the newest written 6 minutes ago, max_steps 2000. "
         "Format saturates near 0.97 within ~150 steps, as it should; the accuracy reward keeps climbing "
         "(0.22 -> ~0.45 at 700) and held-out accuracy rises 0.20 -> ~0.41 (N=512, sd 0.022) with no sign of "
         "levelling; entropy declines slowly 0.62 -> 0.48, lengths drift up mildly, clip ratios are exactly 0 "
         "(on-policy). Healthy at 35% of budget: continue."),
    Spec("ok-verl-jsonl-file-logger-torn-tail-null-grad-norm-val-core-mean-at-8-rising", _b,
         lambda run, f: w_verl_jsonl(run, f, v_verl(kl=True, ver="0.7"), "deepscaler_grpo",
                                     "qwen2.5-7b-dsr-n8-lr1e-6", torn=True),
         2002, 1300, "ok", "healthy verl verl-jsonl torn-tail null-values val-core live",
         "verl FileLogger JSONL, 1300 steps, still being written (the last line is cut in half, written 3 "
         "minutes ago). grad_norm is null (NaN/inf through orjson) on four isolated steps, ordinary fp hiccups "
         "with no effect on the curves. Train score rises 0.28 -> ~0.45, val-core/deepscaler/acc/mean@8 rises "
         "0.24 -> ~0.34 and is still gaining (~0.03 per 500 steps, sd 0.0075 on 4000 graded samples), best@8 "
         "rises too. Entropy settles from 0.55 toward 0.33, KL small (0.012), lengths grow 900 -> ~1700 with "
         "truncation at 2%. Healthy: continue."),
    Spec("ok-openrlhf-tb-12k-steps-three-event-files-preempted-twice-replayed-overlap", _c,
         lambda run, f: w_tb(run, f, v_openrlhf, "tensorboard/reinforce_pp_qwen2.5_7b_math", splits=(3800,),
                             host="dgx-a12"),
         2003, 12000, "ok", "healthy openrlhf tensorboard several-event-files resume-duplicates long",
         "OpenRLHF REINFORCE++ run, 12000 steps logged every 4 (current-step values, not averages), three event "
         "files: one preemption at 3800 resumed cleanly, a second at 7720 resumed from the step-7600 checkpoint "
         "so steps 7604-7720 are in two files (same story, fresh draws; the later copy counts). Log-linear slow "
         "climb: train reward ~0.36 at 6000 -> ~0.41 at 12000; eval_math500_pass1 (N=500, sd 0.022) ~0.43 at "
         "6000 -> ~0.47 at 12000, every 500 steps. KL grows smoothly to 0.09, lengths creep up, truncation 1%. "
         "Slow but real gains with no planned end visible: continue."),
    Spec("ok-custom-jsonl-48k-steps-rm-score-log-climb-eval-in-own-file", _d,
         lambda run, f: w_custom_jsonl(run, f, {"step": "it", "t": "wall", "reward": "rm_score", "kl": "kl_to_ref",
                                                "entropy": "ent", "grad_norm": "gnorm", "lr": "lr",
                                                "len": "resp_tokens"},
                                       {"winrate": "heldout_winrate_vs_sft", "rm": "heldout_rm_mean"},
                                       config={"algo": "reinforce-baseline", "total_steps": 100000,
                                               "log_every": 16, "eval_every": 4000, "policy": "llama-3.1-8b-sft",
                                               "reward_model": "skywork-rm-8b"}),
         2004, (48000, 100000), "ok", "healthy custom-jsonl eval-separate-file long reward-model",
         "Hand-written REINFORCE loop against a reward model: train_log.jsonl every 16 iterations to 48000 "
         "(3000 lines, written 2 minutes ago), evals in eval_log.jsonl every 4000, config says 100000 steps. "
         "The RM score climbs log-linearly (-0.8 -> ~0.54 at 24k -> ~0.81 at 48k; per-batch sd ~0.14); the "
         "held-out win rate vs the SFT model (N=800, sd 0.018) rises ~0.53 at 24k -> ~0.57 at 48k, i.e. the "
         "held-out signal agrees with the RM. KL to the reference grows slowly to ~0.09. Still improving at "
         "48% of budget: continue."),
    Spec("ok-trl016-console-first-attempt-blew-up-resumed-from-600-second-copy-rising", _e,
         lambda run, f: w_trl_console(run, f, v_trl_grpo("016", beta=0.04), 1500, steps_per_epoch=1250,
                                      crash=NCCL),
         2005, (900, 1500), "ok", "healthy trl trl016 console resume-duplicates traceback-in-log live",
         "TRL 0.16 GRPO console log (tee -a): printed dicts with rewards/<fn> and completion_length keys, "
         "no step key (steps from the tqdm bar, logging every 10). The first attempt diverged after step 600: "
         "grad norm 9 -> 40, KL 0.04 -> 2.5, accuracy 0.41 -> 0.04, NaN loss, then an NCCL watchdog traceback. "
         "The operator resumed from checkpoint-600; the second copy of steps 610-900 is healthy: accuracy "
         "0.41 at 600 -> ~0.48 at 900, KL ~0.06, grad norm ~0.3. The collapse belongs to a superseded attempt; "
         "the live run (written 3 minutes ago, 900 of 1500) is improving: continue."),
    Spec("ok-mlflow-files-trl1x-rloo-24-points-kl-climbs-with-reward", _f,
         lambda run, f: w_mlflow_files(run, f, with_epoch(v_trl_grpo("1x", beta=0.05), 1000),
                                       {"max_steps": 1000, "beta": 0.05, "num_generations": 2, "logging_steps": 10,
                                        "learning_rate": 1e-06, "eval_steps": 40},
                                       run_name="rloo-qwen3-1.7b-countdown"),
         2006, (240, 1000), "ok", "healthy mlflow mlflow-files trl rloo short kl-rises",
         "TRL RLOO (1.x keys, beta 0.05 so kl is logged) through the HF MLflow callback into a file store: raw "
         "keys as nested metric folders, only 24 train points (240 of 1000 steps) and 6 evals. Reward "
         "0.12 -> ~0.33, eval_reward (N=400, sd ~0.023) ~0.17 at 40 -> ~0.30 at 240, KL rising 0 -> 0.09 "
         "together with the reward, as a KL-regularised run should. Run status RUNNING, written 8 minutes "
         "ago. Early and improving: continue."),
    Spec("ok-verl-console-np2-entropy-halves-in-80-steps-then-holds-val-rising", _g,
         lambda run, f: w_verl_console(run, f, v_verl(kl=True), 1200, numpy2=True),
         2007, (420, 1200), "ok", "healthy verl verl-console numpy2 ray-prefix entropy-drop live",
         "verl console (np.float64(...) values, Ray TaskRunner prefixes, vLLM chatter, ANSI codes), total "
         "training steps 1200, at 420. Entropy falls fast 0.95 -> 0.40 in the first 80 steps (format lock-in) "
         "and then holds at ~0.37 instead of continuing toward 0; train score 0.35 -> ~0.63, val-core "
         "math_lighteval acc 0.42 -> ~0.58 (N=5000, sd 0.007) still rising ~0.02 per 100 steps. The early "
         "entropy drop is not a collapse: continue."),
    Spec("ok-trl-dpo-checkpoints-nan-inf-grad-norm-rows-eval-acc-rising", _h,
         lambda run, f: w_trl_state(run, f, v_trl_dpo, 250, 1860, eval_steps=125, steps_per_epoch=1860),
         2008, (750, 1860), "ok", "healthy trl dpo trainer-state checkpoints-only nan-values",
         "TRL DPO, checkpoint-250/500/750 only (newest 20 minutes ago), max_steps 1860. grad_norm is NaN at "
         "130 and 520 and Infinity at 340 (bare tokens in the JSON; the loss is NaN at 520 too), isolated "
         "overflow steps that leave the curves unchanged. Preference accuracy 0.5 -> ~0.75, margins grow, "
         "eval_rewards/accuracies (N=1000, sd ~0.015) 0.52 -> ~0.70 at 750 and still rising; eval_loss falls. "
         "Healthy at 40%: continue."),
    Spec("ok-wandb-history-csv-trl1x-lengths-grow-clipped-6pct-resumed-step-keeps-counting", _i,
         lambda run, f: w_wandb_history_csv(run, f, v_trl_grpo("1x"),
                                            {"max_steps": 2500, "num_generations": 8, "max_completion_length": 4096,
                                             "logging_steps": 10, "steps_per_epoch": 2500}),
         2009, (1100, 2500), "ok", "healthy wandb wandb-history-csv trl1x resume-duplicates length-growth",
         "W&B run history exported to CSV (_step, _runtime, _timestamp, train/*, eval/*) with config.yaml "
         "(max_steps 2500). Resumed from checkpoint-800 after a crash at 860: _step keeps counting while "
         "train/global_step repeats 810-860 (second copy counts, same story). Completions grow 900 -> 2600 "
         "tokens toward the 4096 cap and clipped_ratio rises 0.5% -> 6%, but held-out accuracy keeps rising "
         "(0.28 -> ~0.46 at 1100, N=1000, sd 0.016) and the accuracy reward too. Longer reasoning that pays; "
         "truncation still low: continue."),
    # ------------------------------------------------------------------------------------ stop / converged
    Spec("stop-finished-trl1x-grpo-1500-of-1500-eval-flat-since-800-top-level-state", _j,
         lambda run, f: w_trl_state(run, f, v_trl_grpo("1x"), 500, 1500, top=True, finished=True, eval_steps=100,
                                    steps_per_epoch=1500),
         2010, (1500, 1500), "stop", "stop finished trl trl1x grpo trainer-state plateau",
         "TRL 1.x GRPO finished: top-level trainer_state.json with the final train_runtime row, "
         "global_step = max_steps = 1500, cosine LR at 0, checkpoints 500/1000/1500, written a day ago. "
         "Held-out accuracy rose 0.30 -> 0.56 by 800 and is flat at 0.56 since (N=500, sd 0.022); train "
         "reward creeps 0.66 -> 0.68. The final weights are as good as any: stop (keep the final checkpoint).",
         onset=800),
    Spec("stop-verl-tb-score-saturated-097-val-flat-since-400-two-event-files", _k,
         lambda run, f: w_tb(run, f, v_verl(kl=True), "tensorboard_log/gsm8k_grpo/qwen2.5-3b-n8", train_prefix="",
                             eval_prefix="", splits=(350,), host="a100-04"),
         2011, 950, "stop", "stop verl tensorboard several-event-files saturated zero-std",
         "verl TensorBoard (raw keys), two event files (a restart at 350). Train score saturates at ~0.97 by "
         "step 300, most groups all-correct (no advantage), entropy down to ~0.06, grad norm fading; "
         "val-core/openai/gsm8k/acc/mean@1 rose 0.62 -> 0.84 by 400 and is flat at 0.84 since (N=1319, sd "
         "0.010). Live, but no learning signal left and nothing gained for 550 steps: stop.", onset=400),
    Spec("conv-openrlhf-console-plateau-since-1200-at-1850-of-2000", _l,
         lambda run, f: w_openrlhf_console(run, f, 2000),
         2012, (1850, 2000), "conv", "converged openrlhf openrlhf-console plateau near-end",
         "OpenRLHF console (✨ Global step lines, eval_metrics lines, tqdm 1850/2000). Train reward and "
         "eval_math_pass1 (N=500, sd 0.022) both rose until ~1200 (0.52 / 0.55) and are flat since; cosine LR "
         "nearly 0. 150 steps left of a flat run: stopping now or letting it finish are both fine.",
         onset=1200),
    Spec("stop-stalled-7h-custom-csv-odd-headers-reward-near-zero-never-learns", _m,
         lambda run, f: w_custom_csv(run, f, {"step": "Step", "reward": "Train.Reward", "reward_std": "Train.Reward-Std",
                                             "zero_std": "Frac ZeroStd", "kl": "KL_Div", "entropy": "Policy Entropy",
                                             "grad_norm": "Grad-Norm", "lr": "LR", "len": "Resp.Len",
                                             "t": "Wall Time"}, {},
                                     config={"total_steps": 2000, "group_size": 16, "prompts_per_step": 32,
                                             "task": "putnam-style proofs, binary verifier"}),
         2013, (520, 2000), "stop", "stop custom-csv odd-names stalled never-learns",
         "Hand-written GRPO loop, CSV with capitalised, dotted and spaced column names; 520 of 2000 steps, "
         "last row written 7 hours ago (stalled). Reward ~0.025 from the first step to the last, ~95% of "
         "groups all-zero (no advantage), grad norm tiny, entropy and length unchanged: the task is out of "
         "reach and nothing was learned. No better model behind, nothing to gain: stop."),
    Spec("stop-finished-mlflow-files-dpo-eval-acc-flat-since-600-best-at-end", _n,
         lambda run, f: w_mlflow_files(run, f, with_epoch(v_trl_dpo, 600),
                                       {"max_steps": 1200, "num_train_epochs": 2, "beta": 0.1, "logging_steps": 10,
                                        "eval_steps": 100}, finished=True, run_name="dpo-uf-llama3-8b",
                                       exp_id="7"),
         2014, (1200, 1200), "stop", "stop finished mlflow mlflow-files dpo plateau",
         "TRL DPO (2 epochs) logged by the HF MLflow callback to a file store, status FINISHED, 1200 of 1200. "
         "Train preference accuracy keeps rising into epoch 2 (0.85 -> 0.92, margins 1.5 -> 2.4), but "
         "eval_rewards/accuracies rose 0.55 -> 0.74 by 600 and then only 0.74 -> 0.745 (N=1500, sd 0.011), "
         "eval_loss flat at ~0.55: no held-out decline, best at the end. Keep the final weights: stop.",
         onset=600),
    Spec("stop-crashed-oom-traceback-at-1130-of-2000-val-flat-since-500-verl-console", _o,
         lambda run, f: w_verl_console(run, f, v_verl(kl=True), 2000, numpy2=False, crash=OOM),
         2015, (1130, 2000), "stop", "stop verl verl-console crashed traceback plateau",
         "verl console (numpy 1.x plain floats), total training steps 2000; the log ends at step 1130 with a "
         "CUDA OOM traceback (Ray worker), 50 minutes ago. val-core/math500/acc/mean@4 rose 0.40 -> 0.61 by "
         "500 and is flat at 0.61 for the 630 steps since (N=2000, sd 0.011); train score 0.58 -> 0.60; "
         "lengths grew 1100 -> 2900 (the OOM). Nothing gained in the second half and nothing lost: "
         "restarting is not worth it; keep the latest checkpoint: stop.", onset=500),
    Spec("stop-wandb-history-csv-trl1x-rloo-kl-drifts-to-0.25-reward-and-eval-flat-since-300", _p,
         lambda run, f: w_wandb_history_csv(run, f, v_trl_grpo("1x", beta=0.05),
                                            {"max_steps": 3000, "beta": 0.05, "num_generations": 2,
                                             "trainer": "RLOOTrainer", "logging_steps": 10,
                                             "steps_per_epoch": 3000}),
         2016, (1400, 3000), "stop", "stop wandb wandb-history-csv trl rloo kl-drift plateau",
         "TRL RLOO exported from W&B history (CSV + config.yaml, max_steps 3000), at 1400, written 5 minutes "
         "ago. Reward and eval_reward (N=800, sd 0.018) both flat since 300 (0.55 / 0.52) while KL to the "
         "reference keeps climbing 0.03 -> 0.25 and entropy drifts down: the policy moves without gaining "
         "anything, and the held-out score has not declined. Drifting without a decline: stop.", onset=300),
    Spec("stop-finished-trl-ppo-checkpoints-scores-plateau-since-250-best-at-end", _ab,
         lambda run, f: w_trl_state(run, f, v_trl_ppo, 100, 600, finished=True, logging_steps=1,
                                    steps_per_epoch=600),
         2017, (600, 600), "stop", "stop finished trl ppo trainer-state checkpoints-only reward-model plateau",
         "TRL PPOTrainer (objective/*, policy/*, loss/*, val/* keys, lr not learning_rate, every update), "
         "checkpoint-100..600, global_step = max_steps = 600, written two days ago. objective/scores rose "
         "-0.4 -> 1.6 by 250 and then only to 1.65 (batch sd ~0.25); rlhf_reward flat; KL 3 -> 4; LR decayed "
         "linearly to 0; value loss settled. Finished at its best level: stop.", onset=250),
    # -------------------------------------------------------------------------------------- clear failures
    Spec("bad-trl1x-grpo-entropy-collapse-after-last-save-only-tensorboard-shows-it", _r,
         lambda run, f: (w_trl_state(run, f, v_trl_grpo("1x"), 500, 3000, keep=2, eval_steps=100,
                                     steps_per_epoch=3000),
                         w_tb(run, f, v_trl_grpo("1x"), "runs/Jun11_09-14-02_gpu-node-03", strip_eval="eval_",
                              host="gpu-node-03")),
         2018, (1740, 3000), "rb", "rollback trl trl1x grpo trainer-state tensorboard entropy-collapse live",
         "TRL 1.x GRPO output dir: checkpoint-1000 and checkpoint-1500 (trainer_state up to 1500) plus the HF "
         "TensorBoard file (train/*, eval/*) that runs on to 1740, written 2 minutes ago. From ~1560 grad norm "
         "spikes, entropy collapses 0.42 -> 0.02, completions shrink 820 -> 240 tokens, train accuracy falls "
         "0.60 -> 0.18 and held-out accuracy 0.57 -> ~0.29 (N=800, sd 0.018). The collapse is only visible "
         "in the event file. Held-out accuracy was within one sd of its best (0.568 at 1500) from 1200: roll "
         "back to checkpoint-1500.", onset=1560),
    Spec("bad-openrlhf-tb-grad-spikes-from-950-kl-blowup-reward-collapse-two-event-files", _s,
         lambda run, f: w_tb(run, f, v_openrlhf, "tb_logs/reinforce_pp_qwen7b_0611", splits=(420,), host="h100-2",
                             truncate=11),
         2019, 1150, "rb", "rollback openrlhf tensorboard several-event-files grad-spikes kl-blowup",
         "OpenRLHF TensorBoard, two event files (restart at 420). Healthy to ~950 (reward ~0.60, "
         "eval_math_pass1 ~0.50, N=500, sd 0.022); then actor_grad_norm jumps 0.15 -> 3 -> 8, KL 0.03 -> 3, "
         "clip ratio and lengths climb, reward collapses to ~0.08 and eval to ~0.12 by 1150. A better model "
         "lies behind: roll back to the last eval before the spikes (window from 700, within one sd of the "
         "best, to 950).", onset=950),
    Spec("bad-wandb-history-csv-trl1x-train-reward-up-answers-shrink-heldout-falls-from-720", _t,
         lambda run, f: w_wandb_history_csv(run, f, v_trl_grpo("1x"),
                                            {"max_steps": 2000, "num_generations": 8, "logging_steps": 10,
                                             "steps_per_epoch": 2000}),
         2020, (1300, 2000), "rb", "rollback wandb wandb-history-csv trl1x reward-hacking length-collapse",
         "TRL 1.x GRPO in a W&B history CSV. The accuracy reward on training prompts keeps rising "
         "0.58 -> 0.80 after ~720 while completions shrink 560 -> 180 tokens and entropy drops to 0.2: the "
         "policy learned the training set's answer pattern. Held-out accuracy peaked at 0.52 (~720; N=1000, "
         "sd 0.016) and has fallen to ~0.40 at 1300 (7 sd). Reward hacking: roll back to the held-out peak "
         "(600-700).", onset=720),
    Spec("bad-custom-jsonl-loss-goes-nan-at-2210-reward-to-zero-crash-traceback", _u,
         lambda run, f: w_custom_jsonl(run, f, {"step": "iter", "t": "time", "loss": "loss", "reward": "reward_mean",
                                                "reward_std": "reward_sd", "grad_norm": "gnorm", "lr": "lr", "kl": "kl",
                                                "entropy": "entropy", "len": "gen_len"}, {},
                                       config={"total_iters": 6000, "log_every": 5, "group_size": 8,
                                               "prompts_per_iter": 32, "save_every": 250}, crash=NAN_TB),
         2021, (2240, 6000), "rb", "rollback custom-jsonl nan crashed traceback",
         "Hand-written GRPO loop, JSONL every 5 iterations (bare NaN tokens), config 6000 iterations, save "
         "every 250. Reward climbs to ~0.51 by 2205 (per-log sd ~0.05), grad norm creeps up from 2150, then "
         "loss, gnorm, KL and entropy are NaN from 2210 and the reward drops to 0; stderr.log ends with "
         "'non-finite loss ... aborting' (crashed 40 minutes ago). The weights after 2210 are NaN: roll back "
         "to the last finite stretch (upper end 2205; the newest save at or before it is 2000).", onset=2210),
    Spec("bad-verl-tb-4800-steps-entropy-blowup-from-4100-lengths-hit-cap-val-falls", _v,
         lambda run, f: w_tb(run, f, v_verl(kl=True), "tensorboard_log/dapo_qwen3_8b/run3-clip-higher",
                             train_prefix="", eval_prefix="", host="gpu-b07"),
         2022, 4800, "rb", "rollback verl tensorboard long entropy-blowup length-explosion",
         "verl TensorBoard, 4800 steps logged every step. Slow healthy climb to ~4100 (train score ~0.46, "
         "val-core/aime25/acc/mean@32 ~0.34, N=960, sd 0.015); then entropy blows up 0.38 -> 3.5, response "
         "length runs 5200 -> 19000 into the 20480 cap (clip_ratio 0.85), KL and grad norm climb, score falls "
         "to 0.05 and AIME to ~0.06. Roll back to before 4100 (window 3200-4100).", onset=4100),
    Spec("bad-openrlhf-console-lengths-run-into-8k-cap-truncated-70pct-reward-and-eval-fall", _ac,
         lambda run, f: w_openrlhf_console(run, f, 1600),
         2023, (900, 1600), "rb", "rollback openrlhf openrlhf-console length-explosion truncation",
         "OpenRLHF console, 900 of 1600. Healthy to ~520 (reward ~0.56, eval_math_pass1 ~0.52, N=500, sd "
         "0.022); then response_length climbs 1600 -> 7900 into the 8192 cap, truncated 0.03 -> 0.72, reward "
         "falls to ~0.25 and eval to ~0.28. Roll back to ~520 (window 400-520).", onset=520),
    # ------------------------------------------------------------------------------------- subtle failures
    Spec("bad-verl-jsonl-val-erodes-5sd-from-620-train-score-still-rising-quiet-side-signals", _w,
         lambda run, f: w_verl_jsonl(run, f, v_verl(kl=True), "olympiad_grpo", "qwen2.5-math-7b-olymp-n8"),
         2024, 1250, "rb", "rollback verl verl-jsonl val-aux eval-decline train-rises",
         "verl FileLogger JSONL with val-core and val-aux keys. Train score keeps rising 0.30 -> ~0.68, "
         "entropy/KL/length/clip side signals are quiet; but val-core/olympiad_bench/acc/mean@4 peaked at "
         "0.37 around 600 and slid to ~0.32 by 1250 (2700 graded samples, sd 0.009: >5 sd), best@4 slides "
         "too. Overfitting to the train distribution: roll back to 450-600.", onset=620),
    Spec("sor-hf-tb-two-files-resume-overlap-eval-eases-1.1sd-kl-creeps", _x,
         lambda run, f: w_tb(run, f, v_trl_grpo("1x", beta=0.02), "runs/Jun09_22-41-17_node-11", strip_eval="eval_",
                             host="node-11"),
         2025, 1600, "sor", "stop-or-rollback trl trl1x tensorboard resume-duplicates kl-drift slow-drift",
         "TRL 1.x GRPO via the HF TensorBoard callback, resumed from checkpoint-1000 after a crash at 1060: "
         "two event files, steps 1010-1060 in both (the later copy counts). Held-out accuracy reached 0.50 "
         "by 700, held to 1000, then eases to ~0.478 by 1600 (N=600, sd 0.020: 1.1 sd) while train reward is "
         "flat at 0.61 and KL creeps 0.02 -> 0.09. The loss is within noise of one eval: stopping is right; "
         "going back to 700-1000 is as good.", onset=1000),
    Spec("bad-finished-custom-csv-crlf-eval-pct-column-every-50-peak-450-of-800", _y,
         lambda run, f: w_custom_csv(run, f, {"step": "global_step", "reward": "Reward(mean)",
                                             "reward_std": "Reward(std)", "kl": "KL", "entropy": "Entropy",
                                             "grad_norm": "GradNorm", "lr": "LearningRate", "len": "MeanRespLen"},
                                     {"eval_acc": "HeldOutAcc[%]"}, crlf=True, pct=True,
                                     config={"total_steps": 800, "eval_every": 50, "eval_set": "math500"},
                                     tail_log=Y_TAIL),
         2026, (800, 800), "rb", "rollback finished custom-csv crlf odd-names percent-eval eval-decline",
         "Hand-written loop, CRLF CSV with parenthesised/bracketed column names; the held-out accuracy column "
         "is in percent and filled only every 50 steps. Finished (800 of 800, run.log says training "
         "complete). Train reward rises all the way (0.20 -> ~0.65), but held-out accuracy peaked at 41% "
         "(450) and ended at 33% (N=500, sd 2.2 points: 3.6 sd). A better model lies at 400-450: rollback.",
         onset=450),
    Spec("bad-stalled-3h-trl-console-dicts-clipped-ratio-climbs-eval-falls-from-900", _z,
         lambda run, f: w_trl_console(run, f, v_trl_grpo("1x"), 3000, steps_per_epoch=3000),
         2027, (1320, 3000), "rb", "rollback trl trl1x console stalled truncation eval-decline",
         "TRL 1.x GRPO console (printed dicts, tqdm 1320/3000), nothing written for 3 hours (stalled). Up "
         "to ~900 healthy (held-out 0.53, N=500, sd 0.022). Then completions grow 1800 -> 3700 tokens into "
         "the 4096 cap, completions/clipped_ratio 0.05 -> 0.45, entropy rises, train accuracy slips 0.59 -> "
         "0.50 and held-out accuracy falls to ~0.45 (3.6 sd). Roll back to 700-900 (and fix the length "
         "budget) rather than restart from the stall.", onset=900),
    Spec("bad-mlflow-files-resumed-at-600-duplicate-steps-second-copy-declines", _aa,
         lambda run, f: w_mlflow_files(run, f, with_epoch(v_trl_grpo("1x"), 2000),
                                       {"max_steps": 2000, "logging_steps": 10, "eval_steps": 50,
                                        "learning_rate": 1e-06, "resume_from_checkpoint": "out/checkpoint-600"},
                                       run_name="grpo-qwen2.5-3b-math"),
         2028, (1000, 2000), "rb", "rollback mlflow mlflow-files trl1x resume-duplicates eval-decline lr-misconfig",
         "TRL 1.x GRPO via the HF MLflow callback to a file store. The first attempt reached 700 (eval_reward "
         "~0.55 at 700, still rising), crashed, and was resumed from checkpoint-600, so metric files hold steps "
         "610-700 twice; the later lines are the ones that count. After the resume the scheduler re-warmed to "
         "3e-6 (3x the peak) and the second copy declines: eval_reward 0.53 at 600 -> ~0.44 at 1000 (N=800, "
         "sd 0.018: 5 sd), train reward 0.55 -> 0.45, grad norm up. The best surviving point is 600 (the "
         "first copy's 650/700 were overwritten by the resumed run): roll back to 500-600.", onset=600),
]

CASES = [s.case() for s in SPECS]
STORY = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    spec = STORY[case.name]
    run = draw(spec.story, case.seed, case.reached)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)


def check(cases: list[Case]) -> None:
    for c in cases:
        st = STORY[c.name].story
        lv, steps = st.headline_level(), st.headline_steps(c.reached)
        best_s = max(steps, key=lv)
        sd = st.headline_sd(lv(best_s))
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')}")
        print(f"    headline {st.headline}: first {lv(steps[0]):.3f}@{steps[0]} best {lv(best_s):.3f}@{best_s} "
              f"last {lv(steps[-1]):.3f}@{steps[-1]} sd {sd:.4f} ({(lv(best_s) - lv(steps[-1])) / sd:.1f} sd "
              f"below best); train {st.reward(0):.3f}->{st.reward(c.reached):.3f}")
        run = draw(st, c.seed, c.reached)
        if st.headline == TRAIN:
            pts = [(r["step"], r["reward"] if st.kind == "score" or not st.comps else r["acc"]) for r in final(run["train"])]
        else:
            pts = [(r["step"], r[st.headline]) for r in final(run["evals"])]
        k = max(1, len(pts) // 12)
        print("    drawn " + " ".join(f"{s}:{v:.3f}" for s, v in pts[::k]) + f" | last {pts[-1][0]}:{pts[-1][1]:.3f}")


HEADER = """# Holdout set 20: blind-labelled runs written by make_holdout20.py, independent of the assessor, its judges and
# the generators of the other holdout sets. Unusual log shapes and messy data (resumes with replayed steps, torn
# tails, NaN/inf/null, several event files, evals in their own file, odd column names, tracebacks, stalls) over
# ordinary stories. Labels: what a careful practitioner should do under DESIGN.md's decision contract, read from
# each story's noise-free levels. rollback_window is inclusive: from the first logged headline step whose level is
# within one sampling sd of the best level to the newest such step not after onset_step (run's own step units).
# Run `.venv/bin/python evals/holdout20/make_holdout20.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout20.py", "holdout20.yaml", "h20-", "holdout20", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
