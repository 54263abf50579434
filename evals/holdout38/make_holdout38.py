"""Holdout set 38: failures that have only just begun at a scheduled check, each twinned with a healthy run.

Run from the worktree root:
    .venv/bin/python evals/holdout38/make_holdout38.py           # writes runs/ (gitignored) and holdout38.yaml
    .venv/bin/python evals/holdout38/make_holdout38.py --check   # also prints levels, sds and rollback windows

Every run is live, 20-70 % of its plan done, and was checked minutes after its newest write. Most cases come in
pairs with the same setup, format and noise: `pNN-rb-*` / `pNN-stop-*` is the failing run, `pNN-ok-*` its healthy
twin, which a check at the same moment would see as similar. A few singles (`sNN-*`) close the set.

Each case is a noise-free story (level curves per optimiser step: train reward, held-out evals, side signals)
drawn through this set's own noise model and written the way one framework (and version) writes it.

Noise model (this set's own):
  * binary rewards: every case has a prompt pool of 3000 prompts whose difficulties are N(0, spread) on the logit
    scale; a level p is the pool-mean solve rate (the pool is shifted so that mean sigmoid(shift + d) = p). A step
    draws P prompts uniformly from the pool and G Bernoulli rollouts each; batch mean, batch std, group stds and
    the share of zero-spread groups all come from the same draws. Extra per-rollout reward terms (a format check)
    are Bernoulli of their own level. The sd of one batch mean is sqrt((Var q + E q(1-q)/G) / P), exact over the
    pool. A "hard-prompt streak" (used only in healthy twins, and said so) draws the prompts of a few steps with
    weights exp(-lam * z) over the pool's standardised difficulty z: a dataloader accident, not the model;
  * reward-model scores: r = level + u_prompt + e_sample with u ~ N(0, su), e ~ N(0, se);
  * DPO: per-pair implicit-reward margins N(mu, sigma); accuracy, loss (softplus(-m)) and margin from the draws;
  * held-out evals: Binomial(N, p)/N on N single-sample problems, or mean@k on a FIXED set of N problems (the
    problems' own solve rates spread on the logit scale; sampling error sqrt(sum q(1-q)/k)/N). A twin's small
    wobble is a chosen realisation ("luck": the draw at that eval is set to z sampling sds off its level);
  * side signals: log-AR(1) multiplicative noise (phi 0.6) for KL, entropy, lengths, clip fractions; grad norm
    level * exp(0.18 * t3) with rare heavy spikes (and, where a story says so, spikes placed by hand);
  * trainers that average over their logging interval (TRL) log the mean of the steps since the last log;
    OpenRLHF logs the current step; verl, custom loops log every step.

Labels follow DESIGN.md ("What the three decisions mean") and come from the stories, never from a tool. The
rollback window runs from the first logged headline step whose noise-free level is within one sampling sd of
the best level (sd of one logged headline point at the best level) to the newest such step not after onset_step.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import HEALTHY, Case, dump_json, rollback, stop, tb_file, trainer_state, writer

HERE = Path(__file__).resolve().parent
NOW = time.time()
TRAIN = "train"


# ------------------------------------------------------------------------------------------------- level curves

class C:
    """A noise-free level as a function of the optimiser step; + and * compose curves."""

    def __init__(self, f: Callable[[float], float]):
        self.f = f

    def __call__(self, s: float) -> float:
        return float(self.f(s))

    def __add__(self, o):
        o = lift(o)
        return C(lambda s: self.f(s) + o.f(s))

    __radd__ = __add__

    def __sub__(self, o):
        o = lift(o)
        return C(lambda s: self.f(s) - o.f(s))

    def __mul__(self, o):
        o = lift(o)
        return C(lambda s: self.f(s) * o.f(s))

    __rmul__ = __mul__


def lift(o) -> C:
    return o if isinstance(o, C) else C(lambda s, v=float(o): v)


def pw(*pts: tuple[float, float]) -> C:
    xs, ys = zip(*pts, strict=True)
    return C(lambda s: float(np.interp(s, xs, ys)))


def flat(v: float) -> C:
    return lift(v)


def burst(onset: float, tau: float, amp: float) -> C:
    """Exponential onset: 0 up to `onset`, then amp * (exp((s - onset) / tau) - 1)."""
    return C(lambda s: amp * math.expm1((s - onset) / tau) if s > onset else 0.0)


def settle(onset: float, tau: float, amp: float) -> C:
    """Rises by amp * (1 - exp(-(s - onset) / tau)) after `onset`: a step that levels off."""
    return C(lambda s: -amp * math.expm1(-(s - onset) / tau) if s > onset else 0.0)


def warm_const(peak: float, warm: int) -> C:
    return C(lambda s: peak * min(1.0, s / warm))


def warm_cos(peak: float, warm: int, total: int, floor: float = 0.0) -> C:
    def f(s: float) -> float:
        if s < warm:
            return peak * s / warm
        x = (s - warm) / max(1, total - warm)
        return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * min(1.0, x)))
    return C(f)


# ------------------------------------------------------------------------------------------------- noise pieces

def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


class Difficulty:
    """Solve rates of a set of prompts (logit offsets d) shifted so that their mean equals a level p."""

    def __init__(self, d: np.ndarray):
        self.d = d
        self.z = (d - d.mean()) / d.std()
        self._cache: dict[float, float] = {}

    def shift(self, p: float) -> float:
        key = round(min(max(p, 1e-5), 1 - 1e-5), 5)
        if key not in self._cache:
            lo, hi = -30.0, 30.0
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                if sigmoid(mid + self.d).mean() < key:
                    lo = mid
                else:
                    hi = mid
            self._cache[key] = 0.5 * (lo + hi)
        return self._cache[key]

    def q(self, p: float) -> np.ndarray:
        return sigmoid(self.shift(p) + self.d)

    def batch_sd(self, p: float, P: int, G: int) -> float:
        q = self.q(p)
        return math.sqrt((q.var() + (q * (1 - q)).mean() / G) / P)

    def meank_sd(self, p: float, k: int) -> float:
        q = self.q(p)
        return math.sqrt((q * (1 - q)).sum() / k) / len(q)

    def tilted_mean(self, p: float, lam: float) -> float:
        w = np.exp(-lam * self.z)
        return float((self.q(p) * w).sum() / w.sum())


@dataclass
class Sig:
    """A side signal: level curve and noise (mult: log-AR(1); add: AR(1); grad: heavy-tailed; exact)."""

    level: C
    sd: float = 0.04
    kind: str = "mult"
    phi: float = 0.6


@dataclass
class Ev:
    """A held-out eval: level, N problems, k samples each; fixed=True draws mean@k over a fixed problem set."""

    level: C
    n: int
    k: int = 1
    every: int = 50
    at0: bool = True
    fixed: bool = False
    spread: float = 1.8
    luck: dict[int, float] = field(default_factory=dict)

    def steps(self, reached: int) -> list[int]:
        return list(range(0 if self.at0 else self.every, reached + 1, self.every))


@dataclass
class Story:
    reward: C  # binary: pool-mean solve rate; score: mean score; dpo: mean margin
    kind: str = "binary"  # binary | score | dpo
    P: int = 64
    G: int = 8
    spread: float = 1.4
    lo: float = 0.0  # binary reward of a wrong rollout
    hi: float = 1.0  # binary reward of a right rollout
    parts: dict[str, tuple[C, float]] = field(default_factory=dict)  # extra Bernoulli terms: name -> (level, weight)
    su: float = 0.6  # score: prompt-effect sd
    se: float = 1.0  # score: per-sample sd
    dpo_sd: C = field(default_factory=lambda: flat(1.5))  # dpo: sd of the per-pair margins
    sides: dict[str, Sig] = field(default_factory=dict)
    evals: dict[str, Ev] = field(default_factory=dict)
    head: str = TRAIN
    log_every: int = 1
    avg: bool = True  # the logged value is the mean over the logging interval (TRL) or the current step
    streak: tuple[int, int, float] | None = None  # (first, last, lam): hard-prompt streak (dataloader accident)
    spikes: dict[int, float] = field(default_factory=dict)  # grad-norm multipliers placed by hand

    # -------------------------------------------------------------------------- noise-free headline and its sd
    def train_level(self, s: float) -> float:
        if self.kind == "binary":
            return self.lo + (self.hi - self.lo) * self.reward(s) + sum(w * lv(s) for lv, w in self.parts.values())
        return self.reward(s)

    def logged_train_steps(self, reached: int) -> list[int]:
        return list(range(self.log_every, reached + 1, self.log_every))

    def head_steps(self, reached: int) -> list[int]:
        return self.logged_train_steps(reached) if self.head == TRAIN else self.evals[self.head].steps(reached)

    def head_level(self, s: int) -> float:
        if self.head != TRAIN:
            return self.evals[self.head].level(s)
        if self.avg and self.log_every > 1:
            return float(np.mean([self.train_level(t) for t in range(s - self.log_every + 1, s + 1)]))
        return self.train_level(s)

    def head_sd(self, s: int, pool: Difficulty, probs: dict[str, Difficulty]) -> float:
        if self.head != TRAIN:
            ev = self.evals[self.head]
            p = ev.level(s)
            if ev.fixed:
                return probs[self.head].meank_sd(p, ev.k)
            return math.sqrt(p * (1 - p) / ev.n)
        return self.train_sd(s, pool)

    def train_sd(self, s: int, pool: Difficulty) -> float:
        k = self.log_every if self.avg else 1
        if self.kind == "binary":
            return (self.hi - self.lo) * pool.batch_sd(self.reward(s), self.P, self.G) / math.sqrt(k)
        if self.kind == "score":
            return math.sqrt(self.su ** 2 / self.P + self.se ** 2 / (self.P * self.G)) / math.sqrt(k)
        raise ValueError("dpo runs use an eval headline")


def ar_series(rng: np.random.Generator, n: int, phi: float) -> np.ndarray:
    e = np.empty(n)
    x = rng.normal()
    k = math.sqrt(1 - phi * phi)
    for i in range(n):
        x = phi * x + k * rng.normal()
        e[i] = x
    return e


def draw(story: Story, seed: int, reached: int) -> dict:
    """Per-step draws (steps 1..reached) and eval draws, from the noise-free story."""
    rng = np.random.default_rng(seed)
    pool = Difficulty(np.random.default_rng(seed + 7).normal(0, story.spread, 3000))
    probs = {k: Difficulty(np.random.default_rng(seed + 11 + i).normal(0, ev.spread, ev.n))
             for i, (k, ev) in enumerate(story.evals.items()) if ev.fixed}
    noise = {k: ar_series(rng, reached + 1, sg.phi) for k, sg in story.sides.items()}
    steps = []
    for s in range(1, reached + 1):
        v: dict[str, float] = {}
        if story.kind == "binary":
            q_all = pool.q(story.reward(s))
            if story.streak and story.streak[0] <= s <= story.streak[1]:
                w = np.exp(-story.streak[2] * pool.z)
                idx = rng.choice(len(q_all), story.P, p=w / w.sum())
            else:
                idx = rng.integers(0, len(q_all), story.P)
            q = q_all[idx]
            ok = rng.random((story.P, story.G)) < q[:, None]
            r = story.lo + (story.hi - story.lo) * ok
            v["acc"] = float(ok.mean())
            for name, (lv, wt) in story.parts.items():
                part = rng.random((story.P, story.G)) < lv(s)
                v["part:" + name] = float(part.mean())
                r = r + wt * part
        elif story.kind == "score":
            u = rng.normal(0, story.su, story.P)
            if story.streak and story.streak[0] <= s <= story.streak[1]:
                u = u - story.streak[2] * story.su
            r = story.reward(s) + u[:, None] + rng.normal(0, story.se, (story.P, story.G))
        else:  # dpo: one row of P pairs
            m = rng.normal(story.reward(s), story.dpo_sd(s), story.P)
            v.update(acc=float((m > 0).mean()), margin=float(m.mean()),
                     loss=float(np.log1p(np.exp(-m)).mean()))
            r = None
        if r is not None:
            v.update(reward=float(r.mean()), reward_std=float(r.std(ddof=1)), rmax=float(r.max()),
                     rmin=float(r.min()),
                     group_std=float(r.std(axis=1, ddof=1).mean()) if story.G > 1 else 0.0,
                     zero_std=float((r.std(axis=1) == 0).mean()),
                     pct0=float(100 * ((r.std(axis=1) == 0) & (r[:, 0] == r.min())).mean()),
                     pct1=float(100 * ((r.std(axis=1) == 0) & (r[:, 0] == r.max())).mean()))
        for k, sg in story.sides.items():
            lvl = sg.level(s)
            if sg.kind == "exact":
                v[k] = lvl
            elif sg.kind == "add":
                v[k] = lvl + sg.sd * noise[k][s]
            elif sg.kind == "grad":
                g = lvl * math.exp(sg.sd * rng.standard_t(3) / math.sqrt(3))
                if rng.random() < 0.012:
                    g *= min(20.0, 1.5 + abs(rng.standard_cauchy()))
                v[k] = g * story.spikes.get(s, 1.0)
            else:
                v[k] = lvl * math.exp(sg.sd * noise[k][s])
        steps.append({k: float(x) for k, x in v.items()})
    evals: dict[str, list[tuple[int, float]]] = {}
    for k, ev in story.evals.items():
        out = []
        for s in ev.steps(reached):
            p = ev.level(s)
            if ev.fixed:
                q = probs[k].q(p)
                val = rng.binomial(ev.k, q).sum() / (ev.n * ev.k)
                sd = probs[k].meank_sd(p, ev.k)
            else:
                val = rng.binomial(ev.n, p) / ev.n
                sd = math.sqrt(p * (1 - p) / ev.n)
            if s in ev.luck:
                val = round((p + ev.luck[s] * sd) * ev.n * ev.k) / (ev.n * ev.k)
            out.append((s, float(val)))
        evals[k] = out
    return dict(steps=steps, evals=evals, reached=reached, pool=pool, probs=probs)


def logged(run: dict, every: int, avg: bool = True, last_keys: tuple[str, ...] = ("grad", "lr")) -> list[tuple[int, dict]]:
    """Rows at every `every` steps: the mean over the interval (TRL), or the current step (OpenRLHF)."""
    out = []
    steps = run["steps"]
    for s in range(every, run["reached"] + 1, every):
        chunk = steps[s - every:s] if avg else [steps[s - 1]]
        row = {k: float(np.mean([c[k] for c in chunk])) for k in chunk[-1]}
        for k in last_keys:
            if k in chunk[-1]:
                row[k] = chunk[-1][k]
        out.append((s, row))
    return out


def window(story: Story, reached: int, onset: int, pool: Difficulty, probs: dict) -> tuple[int, int, dict]:
    steps = story.head_steps(reached)
    lv = {s: story.head_level(s) for s in steps}
    best_s = max(steps, key=lambda s: lv[s])
    sd = story.head_sd(best_s, pool, probs)
    good = [s for s in steps if lv[s] >= lv[best_s] - sd]
    lo, hi = good[0], max(s for s in good if s <= onset)
    return lo, hi, dict(best=lv[best_s], best_step=best_s, sd=sd, last=lv[steps[-1]], last_step=steps[-1])


# ------------------------------------------------------------------------------------------------- time stamps

class Clock:
    """Wall time of step s: the newest step was written `age_min` minutes ago, `sps` seconds per step."""

    def __init__(self, reached: int, sps: float, age_min: float):
        self.reached, self.sps, self.age = reached, sps, age_min

    def __call__(self, s: float) -> float:
        return NOW - self.age * 60 - (self.reached - s) * self.sps


def stamp(path: Path, t: float) -> None:
    os.utime(path, (t, t))


def stamp_dirs(folder: Path) -> None:
    """Directories take the time of their newest entry (deepest first)."""
    for d in [*sorted([p for p in folder.rglob("*") if p.is_dir()], key=lambda p: -len(p.parts)), folder]:
        kids = list(d.iterdir())
        if kids:
            t = max(k.stat().st_mtime for k in kids)
            stamp(d, t)


def g6(x: float) -> float:
    return float(f"{x:.6g}")


# ------------------------------------------------------------------------------------------------- TRL rows

def trl_grpo_row(v: dict, s: int, cum_tokens: float, spe: int, cap: int, fns: dict[str, str], *, beta: bool,
                 entropy: bool = True, clip: bool = True, zero_std: bool = True) -> dict:
    """One GRPO log_history row (TRL >= 0.20 key set): fns maps the set's reward parts to function names."""
    ln = v.get("len", 500.0)
    tr = min(0.999, v.get("trunc", 0.01))
    row = {"loss": round(0.001 * v.get("pgloss", 0.0), 4), "grad_norm": g6(v.get("grad", 0.2)),
           "learning_rate": v.get("lr", 1e-6), "num_tokens": float(round(cum_tokens)),
           "completions/mean_length": g6(ln), "completions/min_length": float(round(max(8.0, ln * 0.12))),
           "completions/max_length": float(min(cap, round(ln * 2.6))),
           "completions/clipped_ratio": g6(tr),
           "completions/mean_terminated_length": g6(ln * (1 - tr) + 0.0),
           "completions/min_terminated_length": float(round(max(8.0, ln * 0.12))),
           "completions/max_terminated_length": float(min(cap - 1, round(ln * 2.3)))}
    for key, fn in fns.items():
        mean = v["acc"] if key == "acc" else v["part:" + key]
        row[f"rewards/{fn}/mean"] = g6(mean)
        row[f"rewards/{fn}/std"] = g6(math.sqrt(max(0.0, mean * (1 - mean))))
    row.update({"reward": g6(v["reward"]), "reward_std": g6(v["reward_std"])})
    if zero_std:
        row["frac_reward_zero_std"] = g6(v["zero_std"])
    if beta:
        row["kl"] = g6(v.get("kl", 0.0))
    if entropy:
        row["entropy"] = g6(v.get("entropy", 0.4))
    if clip:
        lo_, hi_ = v.get("clip_lo", 0.0), v.get("clip_hi", 0.0)
        row.update({"clip_ratio/low_mean": g6(lo_), "clip_ratio/low_min": 0.0, "clip_ratio/high_mean": g6(hi_),
                    "clip_ratio/high_max": g6(min(1.0, hi_ * 4.5)), "clip_ratio/region_mean": g6(lo_ + hi_)})
    row["epoch"] = round(s / spe, 4)
    row["step"] = s
    return row


def trl_eval_row(evals: dict[str, float], s: int, spe: int, n: int, extra: dict | None = None) -> dict:
    row = {f"eval_{k}": g6(x) for k, x in evals.items()}
    row.update(extra or {})
    rt = 40.0 + n * 0.21
    row.update({"eval_runtime": round(rt, 3), "eval_samples_per_second": round(n / rt, 3),
                "eval_steps_per_second": round(n / rt / 8, 3), "epoch": round(s / spe, 4), "step": s})
    return row


def tb_dirname(t: float, host: str) -> str:
    return time.strftime("%b%d_%H-%M-%S", time.localtime(t)) + "_" + host


def hf_tb(folder: Path, rows: list[dict], clock: Clock, host: str, pid: int) -> Path:
    """HF TensorBoard callback: train/<key>, eval/<key> via rewrite_logs."""
    t0 = clock(0) - 90
    events = []
    for row in rows:
        s = row["step"]
        vals = {}
        for k, x in row.items():
            if k == "step" or x is None:
                continue
            if k.startswith("eval_"):
                vals["eval/" + k[5:]] = x
            else:
                vals["train/" + k] = x
        events.append((clock(s), s, vals))
    name = f"events.out.tfevents.{int(t0)}.{host}.{pid}.0"
    path = folder / "runs" / tb_dirname(t0, host) / name
    tb_file(path, events)
    stamp(path, clock(rows[-1]["step"]))
    return path


def w_trl_ckpt(run: dict, folder: Path, rows_fn: Callable, *, save_every: int, keep: int, logging_steps: int,
               eval_steps: int | None, spe: int, tb: bool = False, host: str = "gpu-node-3",
               model_cfg: dict | None = None) -> None:
    """TRL output_dir: checkpoint-N/{trainer_state.json, config.json} (save_total_limit `keep`), and with
    report_to=tensorboard the event file under runs/ holding every logged row up to now."""
    rows = rows_fn(run)
    clock: Clock = run["clock"]
    planned = run["planned"]
    saves = list(range(save_every, run["reached"] + 1, save_every))[-keep:]
    for c in saves:
        hist = [r for r in rows if r["step"] <= c]
        st = trainer_state(hist, c, planned, logging_steps, save_every, eval_steps, round(c / spe, 4),
                           num_train_epochs=math.ceil(planned / spe))
        d = folder / f"checkpoint-{c}"
        dump_json(d / "trainer_state.json", st)
        dump_json(d / "config.json", model_cfg or {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
                                                  "torch_dtype": "bfloat16", "vocab_size": 151936})
        for p in d.iterdir():
            stamp(p, clock(c))
    if tb:
        hf_tb(folder, rows, clock, host, 48211)


def grpo_rows(cap: int, spe: int, fns: dict[str, str], *, beta: bool = False, entropy: bool = True,
              clip: bool = True, logging_steps: int = 10, eval_n: int = 0, eval_map: dict | None = None,
              prompt_len: int = 180):
    def build(run: dict) -> list[dict]:
        rows, cum = [], 0.0
        story: Story = run["story"]
        ev_at = {k: dict(v) for k, v in run["evals"].items()}
        eval_steps = sorted({s for v in ev_at.values() for s in v})
        def ev_row(s: int) -> dict:
            vals = {n: ev_at[k][s] for k in ev_at if s in ev_at[k] for n in eval_map[k]}
            return trl_eval_row(vals, s, spe, eval_n, extra={"eval_loss": round(0.0004 * (s % 7) - 0.001, 4)})

        if 0 in eval_steps:
            rows.append(ev_row(0))
        for s, v in logged(run, logging_steps):
            cum += logging_steps * story.P * story.G * (prompt_len + v.get("len", 500))
            rows.append(trl_grpo_row(v, s, cum, spe, cap, fns, beta=beta, entropy=entropy, clip=clip))
            if s in eval_steps and s:
                rows.append(ev_row(s))
        return rows
    return build


def ppo_rows(spe: int, beta: float = 0.05):
    """TRL PPOTrainer (0.12-0.25): one log_history row per PPO update, objective/* policy/* loss/* val/* keys."""
    def build(run: dict) -> list[dict]:
        story: Story = run["story"]
        rows = []
        for s, v in logged(run, 1):
            kl = v["kl"]
            nsr = -beta * kl
            ep = s * story.P
            rows.append({"eps": int(ep / (s * 9.5)), "objective/kl": g6(kl), "objective/entropy": g6(v["entropy"]),
                         "objective/non_score_reward": g6(nsr), "objective/rlhf_reward": g6(v["reward"] + nsr),
                         "objective/scores": g6(v["reward"]), "policy/approxkl_avg": g6(v["pkl"]),
                         "policy/clipfrac_avg": g6(v["clip"]), "loss/policy_avg": g6(0.01 * v.get("pgloss", 0.0) - 0.004),
                         "loss/value_avg": g6(v["vloss"]), "val/clipfrac_avg": g6(v["vclip"]),
                         "policy/entropy_avg": g6(v["entropy"] / 140.0), "val/ratio": g6(v["ratio"]),
                         "val/ratio_var": g6(v["ratio_var"]), "val/num_eos_tokens": int(v["eos"]),
                         "lr": v["lr"], "episode": ep, "epoch": round(s / spe, 4), "step": s})
        return rows
    return build


def dpo_rows(spe: int, logging_steps: int, eval_n: int, eval_key: str):
    def build(run: dict) -> list[dict]:
        rows = []
        ev = dict(run["evals"][eval_key])
        for s, v in logged(run, logging_steps):
            ch = v["rew_c"]
            rows.append({"loss": round(v["loss"], 4), "grad_norm": g6(v["grad"]), "learning_rate": v["lr"],
                         "rewards/chosen": g6(ch), "rewards/rejected": g6(ch - v["margin"]),
                         "rewards/accuracies": g6(v["acc"]), "rewards/margins": g6(v["margin"]),
                         "logps/chosen": g6(v["logp_c"]), "logps/rejected": g6(v["logp_r"]),
                         "logits/chosen": g6(v["logit_c"]), "logits/rejected": g6(v["logit_c"] - 0.08),
                         "epoch": round(s / spe, 4), "step": s})
            if s in ev:
                e_acc = ev[s]
                # eval loss / margins track the eval accuracy level (noise from the accuracy draw)
                e_m = 2.2 * math.log(e_acc / (1 - e_acc))
                rows.append(trl_eval_row({}, s, spe, eval_n, extra={
                    "eval_loss": g6(0.693 - 0.55 * (e_acc - 0.5) + 0.01 * max(0.0, s - 250) / 50 * (0.74 - e_acc)),
                    "eval_rewards/chosen": g6(v["rew_c"] * 0.9), "eval_rewards/rejected": g6(v["rew_c"] * 0.9 - e_m / 4),
                    "eval_rewards/accuracies": g6(e_acc), "eval_rewards/margins": g6(e_m / 4),
                    "eval_logps/chosen": g6(v["logp_c"] * 1.04), "eval_logps/rejected": g6(v["logp_r"] * 1.03),
                    "eval_logits/chosen": g6(v["logit_c"]), "eval_logits/rejected": g6(v["logit_c"] - 0.07)}))
        return rows
    return build


# ------------------------------------------------------------------------------------------------- TRL console

def w_trl_console(run: dict, folder: Path, rows_fn: Callable, *, logging_steps: int, fname: str = "train.log",
                  eval_n: int = 0) -> None:
    """TRL script stdout (tee'd): dataset map bars, tqdm progress lines and the Trainer's printed dicts (no step)."""
    rows = rows_fn(run)
    clock: Clock = run["clock"]
    planned = run["planned"]
    lines = ["INFO 05-14 09:12:41 [__init__.py:239] Automatically detected platform cuda.",
             "Map: 100%|██████████| 7473/7473 [00:01<00:00, 5120.33 examples/s]"]
    if eval_n:
        lines.append(f"Map: 100%|██████████| {eval_n}/{eval_n} [00:00<00:00, 4980.10 examples/s]")
    lines.append(f"  0%|          | 0/{planned} [00:00<?, ?it/s]")
    sps = clock.sps
    for row in rows:
        s = row["step"]
        if s and "loss" in row:
            el = int(s * sps)
            rem = int((planned - s) * sps)
            pct = int(100 * s / planned)
            bar = "█" * (pct // 10) + " " * (10 - pct // 10)
            lines.append(f"{pct:3d}%|{bar}| {s}/{planned} [{el // 3600}:{el % 3600 // 60:02d}:{el % 60:02d}<"
                         f"{rem // 3600}:{rem % 3600 // 60:02d}:{rem % 60:02d}, {sps:.2f}s/it]")
        printed = {k: x for k, x in row.items() if k != "step"}
        lines.append(repr(printed))
    path = folder / fname
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stamp(path, clock(run["reached"]))


# ------------------------------------------------------------------------------------------------- verl

def verl_metrics(v: dict, s: int, story: Story, cap: int, *, kl_loss: bool = True, spe: int = 1000) -> dict:
    ln = v["len"]
    tr = min(0.999, v.get("trunc", 0.005))
    gen = 0.012 * ln + 22
    upd = 0.004 * ln + 9
    step_t = gen + upd + 0.003 * ln + 11
    toks = story.P * story.G * (ln + 240)
    m = {"actor/entropy": v["entropy"]}
    if kl_loss:
        m.update({"actor/kl_loss": v["kl"], "actor/kl_coef": 0.001})
    m.update({"actor/pg_loss": 0.002 * v.get("pgloss", 0.0), "actor/pg_clipfrac": v.get("clip", 0.002),
              "actor/ppo_kl": v.get("pkl", 1e-4), "actor/pg_clipfrac_lower": v.get("clip", 0.002) * 0.01,
              "actor/grad_norm": v["grad"], "perf/mfu/actor": 0.31 + 0.02 * math.sin(s),
              "perf/max_memory_allocated_gb": 61.4, "perf/max_memory_reserved_gb": 72.9,
              "perf/cpu_memory_used_gb": 148.2, "actor/lr": v["lr"], "training/global_step": s,
              "training/epoch": s // spe,
              "critic/score/mean": v["reward"], "critic/score/max": v["rmax"], "critic/score/min": v["rmin"],
              "critic/rewards/mean": v["reward"], "critic/rewards/max": v["rmax"], "critic/rewards/min": v["rmin"],
              "critic/advantages/mean": 0.0007 * v.get("pgloss", 1.0), "critic/advantages/max": 2.47,
              "critic/advantages/min": -2.47, "critic/returns/mean": 0.0007 * v.get("pgloss", 1.0),
              "critic/returns/max": 2.47, "critic/returns/min": -2.47,
              "response_length/mean": ln, "response_length/max": float(min(cap, round(ln * 3.1))),
              "response_length/min": float(max(12, round(ln * 0.1))), "response_length/clip_ratio": tr,
              "prompt_length/mean": 212.4, "prompt_length/max": 611.0, "prompt_length/min": 58.0,
              "prompt_length/clip_ratio": 0.0,
              "timing_s/gen": gen, "timing_s/reward": 1.9, "timing_s/old_log_prob": 0.0016 * ln + 4,
              "timing_s/ref": 0.0015 * ln + 4, "timing_s/adv": 0.08, "timing_s/update_actor": upd,
              "timing_s/step": step_t,
              "timing_per_token_ms/gen": 1000 * gen / (story.P * story.G * ln),
              "timing_per_token_ms/update_actor": 1000 * upd / toks, "perf/total_num_tokens": toks,
              "perf/time_per_step": step_t, "perf/throughput": toks / step_t / 8})
    return m


def verl_val(run: dict, s: int, keymap: dict[str, str]) -> dict:
    out = {}
    for k, pts in run["evals"].items():
        d = dict(pts)
        if s in d:
            out[keymap[k]] = d[s]
    return out


def fmt_np2(k: str, x) -> str:
    if isinstance(x, int):
        return f"{k}:{x}" if k.startswith("training/") else f"{k}:np.int64({x})"
    if k.startswith(("timing", "perf/")):
        return f"{k}:{x!r}"
    return f"{k}:np.float64({x!r})"


def w_verl_console(run: dict, folder: Path, *, np2: bool, cap: int, keymap: dict[str, str], val_len: int,
                   train_len: int, fname: str = "train.log", kl_loss: bool = True, exp: str = "grpo") -> None:
    """verl stdout: config echo, dataset sizes, `step:N - key:value` lines (np.float64(...) with NumPy 2), the
    validation-only line at step 0, tqdm 'Training Progress' lines and some Ray noise."""
    story: Story = run["story"]
    clock: Clock = run["clock"]
    planned = run["planned"]
    lines = [f"(TaskRunner pid=2214) dataset len: {train_len}", f"(TaskRunner pid=2214) dataset len: {val_len}",
             f"(TaskRunner pid=2214) Size of train dataloader: {train_len // story.P}, "
             f"Size of val dataloader: 1",
             f"(TaskRunner pid=2214) Total training steps: {planned}",
             "(TaskRunner pid=2214) test_gen_batch meta info: {'eos_token_id': 151645, 'pad_token_id': 151643, "
             "'recompute_log_prob': False, 'do_sample': False, 'validate': True}"]
    val0 = verl_val(run, 0, keymap)
    if val0:
        lines.append("(TaskRunner pid=2214) step:0 - " + " - ".join(
            fmt_np2(k, x) if np2 else f"{k}:{x!r}" for k, x in val0.items()))
    for s, v in enumerate(run["steps"], start=1):
        m = verl_metrics(v, s, story, cap, kl_loss=kl_loss)
        val = verl_val(run, s, keymap)
        if val:
            m["timing_s/testing"] = 61.0 + 0.02 * v["len"]
            m.update(val)
        body = " - ".join(fmt_np2(k, x) if np2 else f"{k}:{x!r}" for k, x in m.items())
        lines.append(f"(TaskRunner pid=2214) step:{s} - {body}")
        if s % 10 == 0:
            pct = int(100 * s / planned)
            lines.append(f"Training Progress: {pct:3d}%|{'█' * (pct // 10):<10}| {s}/{planned} "
                         f"[{int(s * clock.sps) // 60}:{int(s * clock.sps) % 60:02d}, {clock.sps:.2f}s/it]")
        if s % 37 == 0:
            lines.append("(WorkerDict pid=2871) INFO 05-14 11:02:17 [block_pool.py:264] Successfully reset "
                         "prefix cache")
    path = folder / fname
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stamp(path, clock(run["reached"]))
    verl_ckpts(run, folder, exp)


def verl_ckpts(run: dict, folder: Path, exp: str, save_freq: int = 50, project: str = "rl") -> None:
    clock: Clock = run["clock"]
    base = folder / "checkpoints" / project / exp
    saves = list(range(save_freq, run["reached"] + 1, save_freq))
    for c in saves:
        d = base / f"global_step_{c}" / "actor"
        d.mkdir(parents=True, exist_ok=True)
        (d / "huggingface").mkdir(exist_ok=True)
        f = d / "huggingface" / "config.json"
        f.write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}) + "\n")
        stamp(f, clock(c))
    if saves:
        it = base / "latest_checkpointed_iteration.txt"
        it.write_text(str(saves[-1]))
        stamp(it, clock(saves[-1]))


def w_verl_jsonl(run: dict, folder: Path, *, cap: int, keymap: dict[str, str], project: str, exp: str,
                 total_epochs: int, kl_loss: bool = True, val_files: str = "", val_n: int = 0) -> None:
    """verl `file` logger: <project>/<experiment>.jsonl of {"step": N, "data": {...}}, plus the Hydra config."""
    story: Story = run["story"]
    clock: Clock = run["clock"]
    out = []
    val0 = verl_val(run, 0, keymap)
    if val0:
        out.append(json.dumps({"step": 0, "data": val0}))
    for s, v in enumerate(run["steps"], start=1):
        m = verl_metrics(v, s, story, cap, kl_loss=kl_loss)
        val = verl_val(run, s, keymap)
        if val:
            m["timing_s/testing"] = 55.0 + 0.02 * v["len"]
            m.update(val)
        out.append(json.dumps({"step": s, "data": m}))
    path = folder / project / f"{exp}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    stamp(path, clock(run["reached"]))
    cfg = folder / ".hydra" / "config.yaml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(
        "data:\n  train_files: ~/data/dapo-math-17k/train.parquet\n"
        f"  val_files: {val_files}\n  train_batch_size: {story.P}\n  max_response_length: {cap}\n"
        "actor_rollout_ref:\n  actor:\n    optim:\n      lr: 1.0e-06\n    use_kl_loss: "
        f"{'true' if kl_loss else 'false'}\n    clip_ratio_low: 0.2\n    clip_ratio_high: 0.28\n"
        f"  rollout:\n    n: {story.G}\n    val_kwargs:\n      n: {max([ev.k for ev in story.evals.values()] or [1])}\n"
        "algorithm:\n  adv_estimator: grpo\n"
        f"trainer:\n  project_name: {project}\n  experiment_name: {exp}\n  logger: ['console', 'file']\n"
        f"  total_epochs: {total_epochs}\n  total_training_steps: {run['planned']}\n  save_freq: 50\n"
        f"  test_freq: {min([ev.every for ev in story.evals.values()] or [-1])}\n"
        + (f"# validation set: {val_n} problems\n" if val_n else ""), encoding="utf-8")
    stamp(cfg, clock(0) - 120)
    verl_ckpts(run, folder, exp, project=project)


# ------------------------------------------------------------------------------------------------- OpenRLHF

def openrlhf_status(v: dict, s: int, story: Story) -> dict:
    ln = v["len"]
    gen = 0.02 * ln + 30
    mk = 0.006 * ln + 12
    tr_ = 0.005 * ln + 14
    return {"policy_loss": 0.001 * v.get("pgloss", 0.0), "kl": v["kl"], "reward": v["reward"],
            "return": v["reward"] - 0.01 * v["kl"], "response_length": ln, "total_length": ln + 196.0,
            "truncated": min(1.0, v["trunc"]), "ppo_clip_ratio": v["clip"], "ppo_kl": v["pkl"],
            "vllm_kl": v.get("mismatch", 0.0009), "group_reward_std": v["group_std"], "actor_lr": v["lr"],
            "actor_grad_norm": v["grad"], "rollout/reward_mean": v["reward"], "rollout/reward_std": v["reward_std"],
            "rollout/response_length_mean": ln, "rollout/truncated_rate": min(1.0, v["trunc"]),
            "rollout/num_samples": story.P * story.G, "timing/generation": gen, "timing/make_experience": mk,
            "timing/ppo_train": tr_, "timing/broadcast": 2.1, "timing/step_total": gen + mk + tr_ + 2.1}


def w_openrlhf(run: dict, folder: Path, *, eval_name: str, run_name: str, eval_n: int) -> None:
    """OpenRLHF 0.10 stdout (`✨ Global step N: {...}`, `Evaluation completed ... eval_metrics: {...}`, tqdm)
    and its TensorBoard file (<tensorboard_dir>/<run_name>, train/* and eval/* tags)."""
    story: Story = run["story"]
    clock: Clock = run["clock"]
    planned = run["planned"]
    ev = dict(run["evals"][eval_name])
    lines = [f"[2025-05-20 08:01:12,551] [INFO] Loaded {eval_n} eval prompts from math500",
             f"Episode [1/1]:   0%|          | 0/{planned} [00:00<?, ?it/s]"]
    events = []
    ekey = f"eval_{eval_name}_pass1"
    if 0 in ev:
        em = {ekey: ev[0], "eval_response_length_mean": story.sides["len"].level(0) * 0.93,
              "eval_truncated_rate": story.sides["trunc"].level(0), "eval_num_samples": eval_n}
        lines.append(f"Evaluation completed in 84.37s, eval_metrics: {em!r}")
        events.append((clock(0), 0, {f"eval/{k}": x for k, x in em.items()}))
    for s, v in logged(run, 1, avg=False):
        st = {k: g6(x) for k, x in openrlhf_status(v, s, story).items()}
        if s % 5 == 0:
            pct = int(100 * s / planned)
            el = int(s * clock.sps)
            lines.append(f"Episode [1/1]: {pct:3d}%|{'█' * (pct // 10):<10}| {s}/{planned} "
                         f"[{el // 3600}:{el % 3600 // 60:02d}:{el % 60:02d}, "
                         f"{clock.sps:.2f}s/it, act_loss={st['policy_loss']:.4f}, reward={st['reward']:.3f}]")
        lines.append(f"✨ Global step {s}: {st!r}")
        events.append((clock(s), s, {f"train/{k}": x for k, x in st.items()}))
        if s in ev:
            em = {ekey: ev[s], "eval_response_length_mean": g6(v["len"] * 0.93),
                  "eval_truncated_rate": g6(min(1.0, v["trunc"] * 1.1)), "eval_num_samples": eval_n}
            lines.append(f"Evaluation completed in {80 + v['len'] / 40:.2f}s, eval_metrics: {em!r}")
            events.append((clock(s) + 80, s, {f"eval/{k}": x for k, x in em.items()}))
    log = folder / "logs" / "train_rpp.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stamp(log, clock(run["reached"]))
    t0 = clock(0) - 60
    tb = tb_file(folder / "tensorboard" / run_name / f"events.out.tfevents.{int(t0)}.ray-head.3317.0", events)
    stamp(tb, clock(run["reached"]))


# ------------------------------------------------------------------------------------------------- W&B CSV export

def w_wandb_csv(run: dict, folder: Path, *, display: str, panels: dict[str, str], logging_steps: int,
                config: dict) -> None:
    """W&B UI panel exports (one CSV per panel: `train/global_step`, `<run> - <key>`, `__MIN`, `__MAX`) and the
    run's config.yaml as downloaded from the Files tab."""
    clock: Clock = run["clock"]
    rows = logged(run, logging_steps)
    out = folder / "wandb_export"
    out.mkdir(parents=True, exist_ok=True)
    for key, canon in panels.items():
        col = f"{display} - {key}"
        path = out / f"{key.replace('/', '_')}.csv"
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n")
            w.writerow(["train/global_step", col, col + "__MIN", col + "__MAX"])
            for s, v in rows:
                x = g6(v[canon])
                w.writerow([s, x, x, x])
        stamp(path, NOW - 60 * clock.age + 30)
    cfg = folder / "config.yaml"
    text = "_wandb:\n  value:\n    cli_version: 0.19.11\n    python_version: 3.11.9\n"
    for k, x in config.items():
        text += f"{k}:\n  value: {x}\n"
    cfg.write_text(text, encoding="utf-8")
    stamp(cfg, NOW - 60 * clock.age + 40)


# ------------------------------------------------------------------------------------------------- MLflow

def w_mlflow_files(run: dict, folder: Path, *, keys: dict[str, str], eval_keys: dict[str, str],
                   params: dict[str, str], run_name: str) -> None:
    """MLflow file store ./mlruns/<exp>/<run>/ written by a hand-written loop: metrics/<key> lines
    `<ts_ms> <value> <step>` (`/` makes folders), params/, tags/, meta.yaml with status RUNNING."""
    clock: Clock = run["clock"]
    exp_id, run_id = "412873019264556318", "c3f1a9e0b27d4e6f8a51d2c0b9e7f311"
    base = folder / "mlruns" / exp_id / run_id
    (folder / "mlruns" / exp_id).mkdir(parents=True, exist_ok=True)
    (folder / "mlruns" / exp_id / "meta.yaml").write_text(
        f"artifact_location: file:///home/rl/mlruns/{exp_id}\ncreation_time: {int((clock(0) - 3600) * 1000)}\n"
        f"experiment_id: '{exp_id}'\nlast_update_time: {int((clock(0) - 3600) * 1000)}\nlifecycle_stage: active\n"
        "name: grpo-handloop\n")
    stamp(folder / "mlruns" / exp_id / "meta.yaml", clock(0) - 3600)
    for key, canon in keys.items():
        p = base / "metrics" / key
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(f"{int(clock(s) * 1000)} {v[canon]!r} {s}\n"
                             for s, v in enumerate(run["steps"], start=1)))
        stamp(p, clock(run["reached"]))
    for key, ek in eval_keys.items():
        p = base / "metrics" / key
        p.parent.mkdir(parents=True, exist_ok=True)
        pts = run["evals"][ek]
        p.write_text("".join(f"{int(clock(s) * 1000) + 45000} {x!r} {s}\n" for s, x in pts))
        stamp(p, clock(pts[-1][0]) + 45)
    for k, x in params.items():
        p = base / "params" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(str(x))
        stamp(p, clock(0) - 60)
    for k, x in {"mlflow.runName": run_name, "mlflow.source.name": "train_grpo.py", "mlflow.user": "rl"}.items():
        p = base / "tags" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(x)
        stamp(p, clock(0) - 60)
    (base / "artifacts").mkdir(parents=True, exist_ok=True)
    meta = base / "meta.yaml"
    meta.write_text(
        f"artifact_uri: file:///home/rl/mlruns/{exp_id}/{run_id}/artifacts\nend_time: null\nentry_point_name: ''\n"
        f"experiment_id: '{exp_id}'\nlifecycle_stage: active\nrun_id: {run_id}\nrun_name: {run_name}\n"
        f"run_uuid: {run_id}\nsource_name: ''\nsource_type: 4\nsource_version: ''\n"
        f"start_time: {int((clock(0) - 60) * 1000)}\nstatus: 1\ntags: []\nuser_id: rl\n")
    stamp(meta, clock(0) - 60)


def w_mlflow_db(run: dict, folder: Path, *, keys: dict[str, str], params: dict[str, str], run_name: str) -> None:
    """MLflow SQL store mlflow.db (default since 3.7) written by verl's mlflow logger: metrics(key, value,
    timestamp, step, is_nan, run_uuid), latest_metrics, params (flattened config), runs with status RUNNING."""
    clock: Clock = run["clock"]
    path = folder / "mlflow.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    con = sqlite3.connect(path)
    cur = con.cursor()
    cur.executescript("""
        CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY);
        CREATE TABLE experiments (experiment_id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(256) NOT NULL UNIQUE,
            artifact_location VARCHAR(256), lifecycle_stage VARCHAR(32), creation_time BIGINT,
            last_update_time BIGINT);
        CREATE TABLE runs (run_uuid VARCHAR(32) NOT NULL PRIMARY KEY, name VARCHAR(250), source_type VARCHAR(20),
            source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9),
            start_time BIGINT, end_time BIGINT, deleted_time BIGINT, source_version VARCHAR(50),
            lifecycle_stage VARCHAR(20), artifact_uri VARCHAR(200), experiment_id INTEGER);
        CREATE TABLE metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT NOT NULL,
            run_uuid VARCHAR(32) NOT NULL, step BIGINT NOT NULL DEFAULT 0, is_nan BOOLEAN NOT NULL DEFAULT 0,
            PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
        CREATE TABLE latest_metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT,
            step BIGINT NOT NULL, is_nan BOOLEAN NOT NULL, run_uuid VARCHAR(32) NOT NULL,
            PRIMARY KEY (key, run_uuid));
        CREATE TABLE params (key VARCHAR(250) NOT NULL, value VARCHAR(8000) NOT NULL, run_uuid VARCHAR(32) NOT NULL,
            PRIMARY KEY (key, run_uuid));
        CREATE TABLE tags (key VARCHAR(250) NOT NULL, value VARCHAR(8000), run_uuid VARCHAR(32) NOT NULL,
            PRIMARY KEY (key, run_uuid));
    """)
    rid = "5d0e77a4c1b24f0f9e6a3b8d21c4f590"
    t0 = int((clock(0) - 300) * 1000)
    cur.execute("INSERT INTO alembic_version VALUES ('6953534de441')")
    cur.execute("INSERT INTO experiments VALUES (0, 'Default', 'mlflow-artifacts:/0', 'active', ?, ?)", (t0, t0))
    cur.execute("INSERT INTO experiments VALUES (1, 'verl_grpo_math', 'mlflow-artifacts:/1', 'active', ?, ?)",
                (t0, t0))
    cur.execute("INSERT INTO runs VALUES (?, ?, 'LOCAL', 'main_ppo.py', '', 'rl', 'RUNNING', ?, NULL, NULL, '', "
                "'active', ?, 1)", (rid, run_name, t0, f"mlflow-artifacts:/1/{rid}/artifacts"))
    story: Story = run["story"]
    rows = []
    for s, v in enumerate(run["steps"], start=1):
        m = verl_metrics(v, s, story, 4096)
        ts = int(clock(s) * 1000)
        for k, canon in keys.items():
            x = m[canon] if canon in m else v[canon]
            rows.append((k, float(x), ts, rid, s, 0))
    cur.executemany("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)", rows)
    last = {}
    for k, x, ts, r, s, n in rows:
        last[k] = (k, x, ts, s, n, r)
    cur.executemany("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, ?, ?)", list(last.values()))
    cur.executemany("INSERT INTO params VALUES (?, ?, ?)", [(k, str(x), rid) for k, x in params.items()])
    cur.executemany("INSERT INTO tags VALUES (?, ?, ?)", [("mlflow.runName", run_name, rid),
                                                         ("mlflow.user", "rl", rid)])
    con.commit()
    con.close()
    stamp(path, clock(run["reached"]))


# ------------------------------------------------------------------------------------------------- custom loops

def w_custom_jsonl(run: dict, folder: Path, *, fname: str, total: int) -> None:
    """A hand-written PyTorch GRPO loop: one JSON object per step, appended and flushed."""
    clock: Clock = run["clock"]
    lines = []
    for s, v in enumerate(run["steps"], start=1):
        lines.append(json.dumps({"step": s, "total_steps": total, "reward_mean": round(v["reward"], 5),
                                 "reward_std": round(v["reward_std"], 5), "frac_groups_no_signal": round(v["zero_std"], 4),
                                 "loss": round(0.01 * v.get("pgloss", 0.0), 5), "kl": round(v["kl"], 6),
                                 "entropy": round(v["entropy"], 5), "grad_norm": round(v["grad"], 5),
                                 "grad_clip": 1.0, "lr": v["lr"], "resp_len_mean": round(v["len"], 1),
                                 "wall_s": round(clock(s) - clock(0), 1)}))
    path = folder / fname
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stamp(path, clock(run["reached"]))


def w_rasbt_csv(run: dict, folder: Path, *, script: str, eval_key: str) -> None:
    """reasoning-from-scratch 7_6 (format reward) CSV: CRLF, one row per step, eval_acc (fraction, 6 dp) only on
    checkpoint steps (every 50 and step 1); plus the human-readable metrics .txt."""
    clock: Clock = run["clock"]
    planned = run["planned"]
    ev = dict(run["evals"][eval_key])
    head = ["step", "total_steps", "loss", "kl_loss", "policy_ratio", "reward_avg", "format_reward_avg",
            "tokens_per_sec", "avg_response_len", "adv_avg", "adv_std", "entropy_avg", "eval_acc"]
    csv_path = folder / "logs" / f"{script}_metrics.csv"
    txt_path = folder / "logs" / f"{script}_metrics.txt"
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    txt = []
    with csv_path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)  # default dialect: CRLF
        w.writerow(head)
        for s, v in enumerate(run["steps"], start=1):
            flat_group = v["zero_std"] >= 1.0
            adv_std = 0.0 if flat_group else 0.9354
            loss = 0.0 if flat_group else v.get("pgloss", 0.0) * 3.0
            ratio = "" if flat_group else f"{v['ratio']:.4f}"
            e = ev.get(s, ev.get(s - 1) if s == 1 else None)
            w.writerow([s, planned, f"{loss:.4f}", f"{v['kl']:.4f}", ratio, f"{v['reward']:.3f}",
                        f"{v['part:format']:.3f}", f"{v['tps']:.1f}", f"{v['len']:.1f}", "0.0000",
                        f"{adv_std:.4f}", f"{v['entropy']:.4f}", "" if e is None else f"{e:.6f}"])
            txt.append(f"[Step {s}/{planned}] loss={loss:.4f} reward_avg={v['reward']:.3f} "
                       f"format_reward_avg={v['part:format']:.3f} avg_resp_len={v['len']:.1f}"
                       + ("" if e is None else f" eval_acc={e:.6f}"))
    txt_path.write_text("\n".join(txt) + "\n", encoding="utf-8")
    for p in (csv_path, txt_path):
        stamp(p, clock(run["reached"]))


# ================================================================================================= the cases

def sides(**over) -> dict[str, Sig]:
    base = dict(entropy=Sig(flat(0.40)), kl=Sig(flat(0.0)), len=Sig(flat(500.0), 0.03), trunc=Sig(flat(0.01), 0.08),
                clip_lo=Sig(flat(0.0)), clip_hi=Sig(flat(0.0)), clip=Sig(flat(0.002), 0.08),
                pkl=Sig(flat(1e-4), 0.15), grad=Sig(flat(0.2), 0.18, "grad"), lr=Sig(flat(1e-6), kind="exact"),
                pgloss=Sig(flat(0.0), 1.0, "add", 0.0))
    for k, x in over.items():
        base[k] = x if isinstance(x, Sig) else Sig(lift(x))
    return base


@dataclass
class Spec:
    name: str
    story: Story
    write: Callable
    seed: int
    steps: tuple[int, int]  # (reached, planned)
    verdict: str  # ok | rb | stop
    tags: str
    why: str  # may use {lo} {hi} {best} {best_step} {sd} {last} {last_step} {drop} {onset} {pct}
    onset: int | None = None
    sps: float = 60.0
    age_min: float = 4.0

    def __post_init__(self) -> None:
        self.dip = self.story.streak[2] if self.story.streak else 0.0
        streak_lam(self.story, self.seed)

    def pools(self) -> tuple[Difficulty, dict]:
        return draw_pools(self.story, self.seed)

    def facts(self) -> dict:
        st = self.story
        R, S = self.steps
        pool, probs = self.pools()
        steps = st.head_steps(R)
        lv = {s: st.head_level(s) for s in steps}
        best_s = max(steps, key=lambda s: lv[s])
        sd = st.head_sd(best_s, pool, probs)
        f = dict(best=lv[best_s], best_step=best_s, sd=sd, last=lv[steps[-1]], last_step=steps[-1],
                 drop=(lv[best_s] - lv[steps[-1]]) / sd, onset=self.onset, pct=round(100 * R / S), R=R, S=S)
        if self.dip:
            f.update(dip=self.dip, dip_se=self.dip / st.train_sd(R, pool))
        luck = [z for ev in st.evals.values() for z in ev.luck.values()]
        if luck:
            f.update(luck=-luck[0])
        if self.verdict == "rb":
            lo, hi, _ = window(st, R, self.onset, pool, probs)
            f.update(lo=lo, hi=hi)
        return f

    def labels(self) -> dict:
        if self.verdict == "ok":
            return HEALTHY
        if self.verdict == "stop":
            return stop(self.onset)
        f = self.facts()
        return rollback(f["lo"], f["hi"], self.onset)

    def case(self) -> Case:
        return Case(self.name, lambda *a: None, self.write, self.seed, self.steps, self.labels(),
                    f"{self.verdict} {self.tags}", self.why.format(**self.facts()))


def draw_pools(story: Story, seed: int) -> tuple[Difficulty, dict]:
    pool = Difficulty(np.random.default_rng(seed + 7).normal(0, story.spread, 3000))
    probs = {k: Difficulty(np.random.default_rng(seed + 11 + i).normal(0, ev.spread, ev.n))
             for i, (k, ev) in enumerate(story.evals.items()) if ev.fixed}
    return pool, probs


def streak_lam(story: Story, seed: int) -> Story:
    """Turn a streak given as (first, last, drop) into the prompt tilt that lowers the expected batch mean by
    `drop` (binary; in reward units) at the streak's middle step; score runs shift prompts by drop/su."""
    if not story.streak:
        return story
    a, b, drop = story.streak
    if story.kind == "score":
        story.streak = (a, b, drop / story.su)
        return story
    pool, _ = draw_pools(story, seed)
    p = story.reward((a + b) / 2)
    target = drop / (story.hi - story.lo)
    lo, hi = 0.0, 6.0
    for _ in range(50):
        mid = (lo + hi) / 2
        if p - pool.tilted_mean(p, mid) < target:
            lo = mid
        else:
            hi = mid
    story.streak = (a, b, (lo + hi) / 2)
    return story


# ---- shared setups of the pairs ------------------------------------------------------------------------------------

TRL021_FNS = {"acc": "accuracy_reward"}


def p01(bad: bool) -> Story:
    """TRL 0.21 GRPO (num_iterations=2, beta=0), logging_steps 5, no eval: train reward is the headline."""
    if bad:
        reward = pw((0, .20), (150, .42), (350, .55), (470, .585), (520, .53))
        sd_ = sides(entropy=Sig(pw((0, .42), (470, .33)) + burst(470, 18, .03)),
                    clip_hi=Sig(flat(.0016) + burst(470, 18, .0006), .1),
                    clip_lo=Sig(flat(.0009) + burst(470, 25, .0002), .1),
                    grad=Sig(flat(.2) + burst(470, 25, .03), .18, "grad"))
        streak = None
    else:
        reward = pw((0, .20), (150, .42), (350, .55), (520, .60))
        sd_ = sides(entropy=Sig(pw((0, .42), (520, .32))), clip_hi=Sig(flat(.0016), .1),
                    clip_lo=Sig(flat(.0009), .1), grad=Sig(flat(.2), .18, "grad"))
        streak = (506, 520, .05)
    sd_.update(len=Sig(pw((0, 380), (520, 640)), .03), trunc=Sig(flat(.012), .1),
               lr=Sig(warm_const(1e-6, 30), kind="exact"))
    return Story(reward, P=64, G=8, log_every=5, sides=sd_, streak=streak)


def p02(bad: bool) -> Story:
    """verl 0.5 GRPO, console with NumPy 2, MATH-500 val every 20 steps (N=500, one sample): val is the headline."""
    if bad:
        val = pw((0, .44), (100, .53), (180, .565), (200, .57), (240, .505))
        reward = pw((0, .38), (120, .55), (200, .59), (240, .585))
        extra = dict(clip=Sig(flat(.0021) + burst(200, 14, .0012), .08),
                     pkl=Sig(flat(.00015) + burst(200, 14, .0001), .15),
                     grad=Sig(flat(.16) + burst(200, 20, .02), .18, "grad"))
        luck = {}
    else:
        val = pw((0, .44), (100, .53), (180, .565), (240, .58))
        reward = pw((0, .38), (120, .55), (240, .61))
        extra = dict(clip=Sig(flat(.0021), .08), pkl=Sig(flat(.00015), .15), grad=Sig(flat(.16), .18, "grad"))
        luck = {240: -1.3}
    sd_ = sides(entropy=Sig(pw((0, .41), (240, .36))), kl=Sig(pw((0, 0), (240, .006))),
                len=Sig(pw((0, 700), (240, 980)), .03), trunc=Sig(flat(.008), .1),
                lr=Sig(warm_const(1e-6, 10), kind="exact"), **extra)
    return Story(reward, P=64, G=8, sides=sd_, evals={"math500": Ev(val, 500, every=20, luck=luck)},
                 head="math500")


def p03(bad: bool) -> Story:
    """verl DAPO (score -1/+1, no KL loss, clip-higher 0.28), JSONL file logger, no validation: train score."""
    if bad:
        reward = pw((0, .28), (60, .37), (90, .40), (140, .395))
        ent = pw((0, .55), (95, .52)) + burst(95, 13, .03)
        extra = dict(trunc=Sig(flat(.012) + burst(95, 16, .002), .1), clip=Sig(flat(.004) + burst(95, 15, .0008), .08),
                     len=Sig(pw((0, 1900), (140, 2300)) + burst(95, 16, 40), .03))
    else:
        reward = pw((0, .28), (60, .37), (90, .40), (140, .42))
        ent = pw((0, .55), (95, .52)) + settle(95, 15, .12)
        extra = dict(trunc=Sig(flat(.012), .1), clip=Sig(flat(.004), .08), len=Sig(pw((0, 1900), (140, 2300)), .03))
    sd_ = sides(entropy=Sig(ent), grad=Sig(flat(.11), .18, "grad"), pkl=Sig(flat(3e-4), .15),
                lr=Sig(warm_const(1e-6, 10), kind="exact"), **extra)
    return Story(reward, P=32, G=16, lo=-1.0, hi=1.0, sides=sd_)


def p04(bad: bool) -> Story:
    """OpenRLHF 0.10 REINFORCE++-baseline, logs every step (current step), math500 eval every 25: eval headline."""
    if bad:
        reward = pw((0, .30), (262, .60), (300, .50))
        ev = pw((0, .31), (200, .57), (262, .59), (300, .52))
        extra = dict(len=Sig(pw((0, 620), (262, 930)) + burst(262, 11, 40), .03),
                     trunc=Sig(flat(.02) + burst(262, 11, .006), .1),
                     kl=Sig(pw((0, 0), (300, .02)) + burst(262, 15, .002), .05),
                     clip=Sig(flat(.012) + burst(262, 12, .002), .08),
                     grad=Sig(flat(.3) + burst(262, 14, .02), .18, "grad"))
        streak = None
    else:
        reward = pw((0, .30), (300, .62))
        ev = pw((0, .31), (300, .61))
        extra = dict(len=Sig(pw((0, 620), (300, 1010)), .03), trunc=Sig(pw((0, .02), (300, .028)), .1),
                     kl=Sig(pw((0, 0), (300, .021)), .05), clip=Sig(flat(.012), .08), grad=Sig(flat(.3), .18, "grad"))
        streak = (290, 300, .10)
    sd_ = sides(pkl=Sig(flat(5e-4), .15), mismatch=Sig(flat(9e-4), .1), lr=Sig(warm_const(5e-7, 5), kind="exact"),
                **extra)
    return Story(reward, P=64, G=8, avg=False, sides=sd_, streak=streak,
                 evals={"math500": Ev(ev, 500, every=25)}, head="math500")


def p05(bad: bool) -> Story:
    """Hand-written GRPO loop logging to an MLflow file store; held-out set of 60 problems every 50 steps."""
    if bad:
        ev, luck = pw((0, .35), (350, .59), (395, .60), (450, .42)), {}
        reward = pw((0, .30), (395, .62), (450, .55))
        extra = dict(kl=Sig(pw((0, 0), (395, .045)) + burst(395, 14, .004), .05),
                     grad=Sig(flat(.35) + burst(395, 18, .05), .18, "grad"))
    else:
        ev, luck = pw((0, .35), (450, .62)), {450: -1.5}
        reward = pw((0, .30), (450, .64))
        extra = dict(kl=Sig(pw((0, 0), (450, .05)), .05), grad=Sig(flat(.35), .18, "grad"))
    sd_ = sides(entropy=Sig(pw((0, .36), (450, .31))), len=Sig(pw((0, 410), (450, 520)), .03),
                lr=Sig(warm_const(2e-6, 20), kind="exact"), **extra)
    return Story(reward, P=16, G=8, sides=sd_, evals={"heldout60": Ev(ev, 60, every=50, luck=luck)}, head="heldout60")


def p06(bad: bool) -> Story:
    """verl GRPO console (NumPy 1 floats), AIME-2024 val (30 problems, mean@16) every 10 steps: val headline."""
    if bad:
        ev, luck = pw((0, .16), (120, .29), (140, .30), (160, .255)), {}
        extra = dict(trunc=Sig(flat(.03) + burst(140, 7, .004), .08),
                     len=Sig(pw((0, 3200), (140, 4400)) + burst(140, 7, 60), .03))
    else:
        ev, luck = pw((0, .16), (120, .29), (160, .31)), {160: -1.2}
        extra = dict(trunc=Sig(flat(.03), .08), len=Sig(pw((0, 3200), (160, 4700)), .03))
    sd_ = sides(entropy=Sig(pw((0, .48), (160, .41))), kl=Sig(pw((0, 0), (160, .004))), clip=Sig(flat(.0012), .08),
                grad=Sig(flat(.09), .18, "grad"), lr=Sig(flat(1e-6), kind="exact"), **extra)
    return Story(pw((0, .25), (160, .50)), P=32, G=16, sides=sd_,
                 evals={"aime24": Ev(ev, 30, k=16, every=10, fixed=True, spread=2.2, luck=luck)}, head="aime24")


def p07(bad: bool) -> Story:
    """Hand-written GRPO loop (bf16, grad clip 1.0) writing JSONL every step; no eval: train reward headline."""
    if bad:
        reward = pw((0, .25), (250, .45), (310, .48), (340, .38))
        extra = dict(grad=Sig(flat(.22) + burst(310, 10, .02), .18, "grad"),
                     kl=Sig(pw((0, 0), (310, .03)) + burst(310, 12, .003), .05))
        streak, spikes = None, {}
    else:
        reward = pw((0, .25), (250, .45), (340, .49))
        extra = dict(grad=Sig(flat(.22), .18, "grad"), kl=Sig(pw((0, 0), (340, .033)), .05))
        streak, spikes = (334, 340, .09), {318: 4.5, 331: 3.0, 337: 5.5}
    sd_ = sides(entropy=Sig(pw((0, .52), (340, .44))), len=Sig(pw((0, 300), (340, 380)), .03),
                lr=Sig(warm_cos(1e-6, 20, 1000, 1e-7), kind="exact"), **extra)
    return Story(reward, P=64, G=8, sides=sd_, streak=streak, spikes=spikes)


def p08(bad: bool) -> Story:
    """TRL 0.20 GRPO console (dicts), logging_steps 10, on-policy (clip ratios 0), beta 0, eval every 100 on a
    300-prompt held-out set with 8 generations each: eval_rewards/accuracy_reward/mean is the headline."""
    if bad:
        reward = pw((0, .35), (640, .64), (700, .59))
        ev = pw((0, .36), (450, .61), (640, .625), (700, .595))
        extra = dict(len=Sig(pw((0, 820), (640, 760)) - burst(640, 15.4, 9), .03),
                     trunc=Sig(pw((0, .03), (640, .02), (700, .001)), .1),
                     entropy=Sig(pw((0, .45), (640, .38)) - burst(640, 20, .01)))
        streak = None
    else:
        reward = pw((0, .35), (700, .655))
        ev = pw((0, .36), (700, .64))
        extra = dict(len=Sig(pw((0, 820), (640, 760)) - settle(640, 20, 90), .03),
                     trunc=Sig(pw((0, .03), (700, .018)), .1), entropy=Sig(pw((0, .45), (700, .37))))
        streak = (681, 700, .05)
    sd_ = sides(grad=Sig(flat(.14), .18, "grad"), lr=Sig(warm_const(1e-6, 50), kind="exact"), **extra)
    return Story(reward, P=32, G=8, log_every=10, sides=sd_, streak=streak,
                 evals={"acc": Ev(ev, 300, k=8, every=100, at0=False, fixed=True, spread=1.6)}, head="acc")


def p09(bad: bool) -> Story:
    """TRL 0.19 GRPO on competition problems, W&B panel CSV exports, logging_steps 10, G=8."""
    reward = flat(.004) if bad else pw((0, .02), (375, .055))
    sd_ = sides(entropy=Sig(flat(.62)), len=Sig(pw((0, 880), (375, 905)), .03), trunc=Sig(flat(.38), .05),
                grad=Sig(flat(.012 if bad else .06), .25, "grad"), lr=Sig(warm_const(1e-6, 50), kind="exact"))
    return Story(reward, P=32, G=8, spread=1.6, log_every=10, sides=sd_)


def p10(bad: bool) -> Story:
    """reasoning-from-scratch 7_6 script (correctness + format reward, 1 prompt x 8 rollouts per step), MATH-500
    eval (N=500) every 50 steps."""
    reward = flat(.002) if bad else pw((0, .02), (150, .075))
    ev = flat(.002) if bad else pw((0, .018), (150, .055))
    sd_ = sides(kl=Sig(pw((0, 0), (150, .018)), .002, "add"), ratio=Sig(flat(1.0), .01, "add"),
                tps=Sig(flat(410.0), .05), len=Sig(pw((0, 380), (150, 262)), .06),
                entropy=Sig(pw((0, .92), (150, .71)), .05))
    return Story(reward, P=1, G=8, spread=1.8, parts={"format": (pw((0, .3), (40, .97), (150, .99)), 1.0)},
                 sides=sd_, evals={"math500": Ev(ev, 500, every=50)}, head=TRAIN)


def p11(bad: bool) -> Story:
    """TRL 0.14 PPOTrainer with a reward model (one log row per PPO update), checkpoint folders only."""
    lr = C(lambda s: 3e-6 * (1 - s / 1000))
    if bad:
        reward = pw((0, -.4), (340, 1.6), (375, 1.08))
        extra = dict(pkl=Sig(flat(.0045) + burst(340, 9, .001), .12), clip=Sig(flat(.035) + burst(340, 10, .006), .08),
                     ratio=Sig(flat(1.0) + burst(340, 10, .01), .004, "add"),
                     ratio_var=Sig(flat(.002) + burst(340, 9, .003), .1),
                     kl=Sig(pw((0, 0), (340, 6.5)) + burst(340, 10, .5), .04),
                     vloss=Sig(flat(.12) + burst(340, 12, .02), .08))
        streak = None
    else:
        reward = pw((0, -.4), (375, 1.75))
        extra = dict(pkl=Sig(flat(.0045), .12), clip=Sig(flat(.035), .08), ratio=Sig(flat(1.0), .004, "add"),
                     ratio_var=Sig(flat(.002), .1), kl=Sig(pw((0, 0), (375, 7.2)), .04), vloss=Sig(flat(.12), .08))
        streak = (369, 375, .5)
    sd_ = sides(entropy=Sig(pw((0, 48.0), (375, 39.0))), vclip=Sig(flat(.08), .08), eos=Sig(flat(61.0), .02),
                lr=Sig(lr, kind="exact"), **extra)
    return Story(reward, kind="score", P=64, G=1, su=.8, se=1.0, sides=sd_, streak=streak)


def p12(bad: bool) -> Story:
    """TRL 0.19 DPOTrainer, logging_steps 10, eval every 50 on 500 held-out pairs, TensorBoard + checkpoints."""
    if bad:
        mu = pw((0, 0), (350, 1.6)) + burst(350, 40, .3)
        ev, luck = pw((0, .55), (300, .73), (350, .735), (450, .655)), {}
        extra = dict(logp_c=Sig(pw((0, -185), (350, -200)) - burst(350, 30, 6), .02, "add"),
                     logp_r=Sig(pw((0, -210), (350, -245)) - burst(350, 28, 9), .02, "add"),
                     rew_c=Sig(pw((0, 0), (350, -.3)) - burst(350, 30, .05), .04, "add"),
                     grad=Sig(flat(9.0) + burst(350, 35, 1.5), .2, "grad"))
    else:
        mu = pw((0, 0), (450, 2.2))
        ev, luck = pw((0, .55), (300, .73), (450, .75)), {450: -1.0}
        extra = dict(logp_c=Sig(pw((0, -185), (450, -212)), .02, "add"), logp_r=Sig(pw((0, -210), (450, -262)), .02, "add"),
                     rew_c=Sig(pw((0, 0), (450, -.4)), .04, "add"), grad=Sig(flat(9.0), .2, "grad"))
    for k in ("logp_c", "logp_r"):  # noise on log-probs is a few nats, additive
        extra[k].sd = 3.0
    sd_ = sides(logit_c=Sig(flat(-1.9), .03, "add"), lr=Sig(warm_cos(5e-7, 75, 1500), kind="exact"), **extra)
    return Story(mu, kind="dpo", P=32, dpo_sd=pw((0, .3), (450, 2.4)), log_every=10, sides=sd_,
                 evals={"pref": Ev(ev, 500, every=50, at0=False, luck=luck)}, head="pref")


def p13(bad: bool) -> Story:
    """verl GRPO logging to an MLflow SQL store (mlflow.db), no validation: critic/score/mean headline."""
    if bad:
        reward = pw((0, .18), (320, .50), (360, .41))  # P=64: 2.4 sd
        extra = dict(kl=Sig(flat(.001) + pw((0, 0), (320, .012)) + burst(320, 9, .0015), .05),
                     grad=Sig(flat(.25) + burst(320, 12, .03), .18, "grad"),
                     clip=Sig(flat(.003) + burst(320, 12, .0008), .08))
        streak = None
    else:
        reward = pw((0, .18), (360, .52))
        extra = dict(kl=Sig(pw((0, .001), (360, .015)), .05), grad=Sig(flat(.25), .18, "grad"),
                     clip=Sig(flat(.003), .08))
        streak = (352, 360, .09)
    sd_ = sides(entropy=Sig(pw((0, .38), (360, .33))), len=Sig(pw((0, 520), (360, 700)), .03),
                trunc=Sig(flat(.006), .1), lr=Sig(warm_const(1e-6, 10), kind="exact"), **extra)
    return Story(reward, P=64, G=8, sides=sd_, streak=streak)


def s01() -> Story:
    """TRL 0.23 RLOO (k=2, beta 0.05), logging 10, eval every 100 on GSM8K test (1319 problems x 2 generations)."""
    ev = pw((0, .62), (300, .745), (500, .755), (530, .757), (600, .727))
    sd_ = sides(kl=Sig(pw((0, 0), (600, .09)), .05), entropy=Sig(pw((0, .33), (600, .29))),
                len=Sig(pw((0, 260), (600, 235)), .03), trunc=Sig(flat(.004), .1), clip=Sig(flat(.01), .08),
                clip_lo=Sig(flat(.004), .1), clip_hi=Sig(flat(.006), .1), grad=Sig(flat(.3), .18, "grad"),
                lr=Sig(warm_const(1e-6, 30), kind="exact"))
    return Story(pw((0, .55), (300, .70), (600, .735)), P=32, G=2, log_every=10, sides=sd_,
                 evals={"gsm8k": Ev(ev, 1319, k=2, every=100, at0=False, fixed=True, spread=1.8)}, head="gsm8k")


def s02() -> Story:
    """verl GRPO JSONL with two validation sets every 25 steps: MATH-500 (500) and AIME-2024 (30, one sample)."""
    sd_ = sides(entropy=Sig(pw((0, .44), (300, .38))), kl=Sig(pw((0, 0), (300, .008))),
                len=Sig(pw((0, 900), (300, 1250)), .03), trunc=Sig(flat(.01), .1), clip=Sig(flat(.002), .08),
                grad=Sig(flat(.17), .18, "grad"), lr=Sig(warm_const(1e-6, 10), kind="exact"))
    return Story(pw((0, .35), (300, .55)), P=64, G=8, sides=sd_,
                 evals={"math500": Ev(pw((0, .45), (300, .60)), 500, every=25),
                        "aime24": Ev(pw((0, .10), (300, .17)), 30, every=25, fixed=True, spread=2.2,
                                     luck={300: -1.8})},
                 head="math500")


# ================================================================================================= the table

GRPO_TRL021 = writer(w_trl_ckpt)(grpo_rows(2048, 234, TRL021_FNS, logging_steps=5), save_every=50, keep=3,
                                 logging_steps=5, eval_steps=None, spe=234, tb=True)
VERL_MATH = {"math500": "val-core/HuggingFaceH4/MATH-500/acc/mean@1"}
P02W = writer(w_verl_console)(np2=True, cap=3072, keymap=VERL_MATH, val_len=500, train_len=40315,
                              exp="qwen3-4b-grpo-deepscaler")
P03W = writer(w_verl_jsonl)(cap=8192, keymap={}, project="dapo", exp="qwen2.5-7b-dapo-cliphigher", total_epochs=1,
                            kl_loss=False, val_files="~/data/aime24/test.parquet")
P04W = writer(w_openrlhf)(eval_name="math500", run_name="qwen2.5-3b-rpp-math", eval_n=500)
P05W = writer(w_mlflow_files)(
    keys={"train/reward": "reward", "train/reward_std": "reward_std", "train/kl": "kl", "train/entropy": "entropy",
          "train/grad_norm": "grad", "train/response_length": "len", "train/lr": "lr"},
    eval_keys={"eval/heldout60_acc": "heldout60"},
    params={"total_steps": 1000, "eval_every": 50, "eval_problems": 60, "prompts_per_step": 16, "group_size": 8,
            "lr": 2e-6, "kl_beta": 0.02, "model": "Qwen2.5-1.5B-Instruct"}, run_name="handloop-grpo-gsm-hard")
P06W = writer(w_verl_console)(np2=False, cap=8192, keymap={"aime24": "val-core/aime24/acc/mean@16"}, val_len=30,
                              train_len=17398, exp="qwen2.5-7b-grpo-aime-watch")
P07W = writer(w_custom_jsonl)(fname="logs/metrics.jsonl", total=1000)
P08W = writer(w_trl_console)(grpo_rows(1024, 469, TRL021_FNS, logging_steps=10, eval_n=300,
                                       eval_map={"acc": ["reward", "rewards/accuracy_reward/mean"]}),
                             logging_steps=10, eval_n=300)
P09W = writer(w_wandb_csv)(display="qwen2.5-1.5b-grpo-olympiad", logging_steps=10, panels={
    "train/reward": "reward", "train/reward_std": "reward_std", "train/frac_reward_zero_std": "zero_std",
    "train/rewards/accuracy_reward/mean": "acc", "train/completions/mean_length": "len",
    "train/completions/clipped_ratio": "trunc", "train/grad_norm": "grad",  # TRL 0.19: no entropy key yet
    "train/learning_rate": "lr"}, config={"max_steps": 1500, "num_generations": 8, "logging_steps": 10,
                                           "beta": 0.0, "learning_rate": 1.0e-06, "max_completion_length": 1024,
                                           "per_device_train_batch_size": 32, "gradient_accumulation_steps": 8})
P10W = writer(w_rasbt_csv)(script="7_6_plus_format_reward", eval_key="math500")
P11W = writer(w_trl_ckpt)(ppo_rows(1000), save_every=25, keep=4, logging_steps=10, eval_steps=None, spe=1000,
                          model_cfg={"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                                     "torch_dtype": "bfloat16", "vocab_size": 128256})
P12W = writer(w_trl_ckpt)(dpo_rows(750, 10, 500, "pref"), save_every=100, keep=2, logging_steps=10, eval_steps=50,
                          spe=750, tb=True, host="dgx-07")
P13W = writer(w_mlflow_db)(keys={k: k for k in (
    "critic/score/mean", "critic/score/max", "critic/score/min", "critic/rewards/mean", "actor/kl_loss",
    "actor/kl_coef", "actor/entropy", "actor/grad_norm", "actor/pg_clipfrac", "actor/ppo_kl", "actor/pg_loss",
    "actor/lr", "response_length/mean", "response_length/clip_ratio", "timing_s/step", "timing_s/gen",
    "perf/throughput")}, params={
    "trainer.total_training_steps": 800, "trainer.total_epochs": 3, "trainer.project_name": "verl_grpo_math",
    "trainer.experiment_name": "qwen2.5-3b-grpo-lr2e-6", "data.train_batch_size": 64,
    "actor_rollout_ref.rollout.n": 8, "actor_rollout_ref.actor.use_kl_loss": True,
    "actor_rollout_ref.actor.kl_loss_coef": 0.001, "actor_rollout_ref.actor.optim.lr": 1e-6,
    "trainer.test_freq": -1, "trainer.save_freq": 100}, run_name="qwen2.5-3b-grpo-lr2e-6")
S01W = writer(w_trl_ckpt)(grpo_rows(512, 234, {"acc": "gsm8k_accuracy"}, beta=True, logging_steps=10, eval_n=1319,
                                    eval_map={"gsm8k": ["reward", "rewards/gsm8k_accuracy/mean"]}),
                          save_every=100, keep=3, logging_steps=10, eval_steps=100, spe=234)
S02W = writer(w_verl_jsonl)(cap=4096, keymap={**VERL_MATH, "aime24": "val-core/aime24/acc/mean@1"}, project="verl_math",
                            exp="qwen3-1.7b-grpo-two-vals", total_epochs=5,
                            val_files="[~/data/math500/test.parquet, ~/data/aime24/test.parquet]")

SPECS: list[Spec] = [
    # ---- pair 01: train reward slips with entropy / clip-high turning vs the same dip from a hard-prompt streak
    Spec("p01-rb-trl021-ckpts-tb-reward-0.585-slips-3sd-in-last-50-steps-entropy-0.33-to-0.78-clip-high-x7-520-of-1200",
         p01(True), GRPO_TRL021, 3801, (520, 1200), "rb",
         "pair01 failing trl-state tensorboard grpo reward-decline entropy-blowup clip-ratio live",
         "TRL 0.21 GRPO (num_iterations=2 so clip ratios are non-zero; beta=0 so no kl key), logging_steps 5, "
         "checkpoints every 50 with save_total_limit 3 (400, 450, 500 on disk) and TensorBoard under runs/ through "
         "step 520 of max_steps 1200 ({pct}%), newest write 3 minutes ago. No eval, so the accuracy reward is the "
         "headline. It climbed 0.20 -> 0.585 by step 470, then slipped to {last:.3f} at 520: {drop:.1f} sds of a "
         "logged 5-step mean (sd {sd:.3f}) over the last 10% of the run. At the same step the policy turned: entropy, "
         "which had drifted down 0.42 -> 0.33, grows exponentially (0.46 at 500, 0.78 at 520), "
         "clip_ratio/high_mean 0.0016 -> 0.011 and grad norm 0.20 -> 0.39. A dip with entropy and clip ratio "
         "running away together is the start of a collapse, not noise: the model around 470 is better than the "
         "current one. Roll back: window {lo}-{hi} (steps within one sd of the peak, up to the onset at 470); "
         "checkpoint-450 is on disk.", onset=470, sps=42, age_min=3),
    Spec("p01-ok-trl021-ckpts-tb-same-dip-at-last-3-logs-hard-prompt-streak-entropy-clip-steady-520-of-1200",
         p01(False), GRPO_TRL021, 3801, (520, 1200), "ok",
         "pair01 healthy-twin trl-state tensorboard grpo reward-dip-noise live",
         "Twin of p01-rb: same TRL 0.21 GRPO setup, files and noise. The accuracy reward is still rising slowly "
         "(0.55 at 350 -> 0.60 at 520, {pct}% of 1200). Its last three logs (steps 506-520) read about {dip:.2f} "
         "low ({dip_se:.1f} sds of a logged mean) because the dataloader served a run of hard prompts; the model "
         "did not change: entropy drifts down smoothly 0.42 -> 0.32, clip_ratio/high_mean stays ~0.0016, grad "
         "norm ~0.20, lengths grow steadily. A dip of this size with every side signal steady is noise; the trend "
         "is up and 57% of the budget is left: continue."),
    # ---- pair 02: held-out drop at the last two evals with policy-shift signals climbing vs a 1.3-sd wobble
    Spec("p02-rb-verl-console-np2-math500-0.57-drops-2.9sd-over-last-2-evals-pg-clipfrac-x10-ppo-kl-x12-240-of-600",
         p02(True), P02W, 3802, (240, 600), "rb",
         "pair02 failing verl console numpy2 eval-decline clip-ratio ppo-kl live",
         "verl GRPO (Qwen3-4B, DeepScaleR prompts, 64 x 8 rollouts, kl loss 0.001), console log written with "
         "NumPy 2 (np.float64(...)), validation on MATH-500 (N=500, one sample: "
         "val-core/HuggingFaceH4/MATH-500/acc/mean@1) every 20 steps; step 240 of 600 ({pct}%), last line 5 "
         "minutes ago. Val rose 0.44 -> 0.57 by step 200; the last two evals are at level 0.537 (220) and "
         "{last:.3f} (240), {drop:.1f} sds (sd {sd:.3f}) below the peak. From step 200 the updates grow: "
         "actor/pg_clipfrac 0.002 -> 0.022, actor/ppo_kl 0.00015 -> 0.0018, grad norm 0.16 -> 0.29, while "
         "critic/score/mean holds ~0.59 (the train reward does not show it yet). A held-out drop this size with "
         "the policy-shift signals climbing from the same step is a real decline: roll back to {lo}-{hi} "
         "(global_step_200 is on disk) and lower the step size.", onset=200, sps=95, age_min=5),
    Spec("p02-ok-verl-console-np2-math500-last-eval-1.3sd-low-clipfrac-ppo-kl-steady-240-of-600",
         p02(False), P02W, 3802, (240, 600), "ok",
         "pair02 healthy-twin verl console numpy2 eval-wobble live",
         "Twin of p02-rb: same verl setup, format and noise. MATH-500 val (N=500, sd {sd:.3f}) keeps rising "
         "0.44 -> 0.58 (level); the last eval drew {luck:.1f} sds below its level, two points under the previous "
         "one: an ordinary wobble. actor/pg_clipfrac ~0.002, actor/ppo_kl ~0.00015 and grad norm ~0.16 are "
         "steady and the train score still rises 0.55 -> 0.61. Healthy at {pct}% of plan: continue."),
    # ---- pair 03: entropy blow-up 45 steps old, reward not yet hurt vs entropy that rises a little and levels off
    Spec("p03-rb-verl-jsonl-dapo-entropy-blowup-from-95-0.52-to-1.45-in-45-steps-score-not-yet-hurt-140-of-500",
         p03(True), P03W, 3803, (140, 500), "rb",
         "pair03 failing verl jsonl dapo entropy-blowup early-onset live",
         "verl DAPO recipe (clip-higher 0.28, no KL loss, score -1/+1, 32 prompts x 16) with the file logger "
         "(dapo/<experiment>.jsonl) and its Hydra config (total_training_steps 500); no validation "
         "(test_freq -1), so critic/score/mean is the headline; step 140 ({pct}%), written 6 minutes ago. Entropy "
         "had eased 0.55 -> 0.52 by step 95 and then took off exponentially (its excess doubling every ~9 steps): "
         "0.70 at 120, 1.45 at 140. Truncation (response_length/clip_ratio 0.012 -> 0.043), mean length "
         "(2170 -> 2930) and actor/pg_clipfrac (0.004 -> 0.019) ride with it. The score has not fallen yet (best "
         "level {best:.3f}, {last:.3f} now; sd of one step {sd:.3f}), but an exponential entropy runaway does not "
         "turn back by itself: the policy is heading for gibberish, and the weights before step 95 score as well "
         "and are sound. Roll back to {lo}-{hi} (the newest checkpoint at or before it is global_step_50) and "
         "retune, rather than train on.", onset=95, sps=240, age_min=6),
    Spec("p03-ok-verl-jsonl-dapo-entropy-rises-0.52-to-0.64-and-levels-off-score-rising-140-of-500",
         p03(False), P03W, 3803, (140, 500), "ok",
         "pair03 healthy-twin verl jsonl dapo entropy-rise-saturates live",
         "Twin of p03-rb: same DAPO setup, files and noise. Entropy rises from 0.52 at step 95 by ~0.12 and "
         "levels off (0.62 at 120, 0.63 at 140), as clip-higher runs do when the high clip starts binding; "
         "lengths, truncation (~0.012) and actor/pg_clipfrac (~0.004) stay put, and the score keeps rising "
         "(accuracy level 0.40 -> 0.42, score -0.20 -> -0.16). A rise that saturates is exploration, not a "
         "blow-up: continue at {pct}% of plan."),
    # ---- pair 04: length runaway to the cap vs healthy linear length growth
    Spec("p04-rb-openrlhf-console-tb-lengths-run-away-930-to-2150-truncated-0.02-to-0.20-math500-3sd-down-300-of-800",
         p04(True), P04W, 3804, (300, 800), "rb",
         "pair04 failing openrlhf console tensorboard length-runaway truncation eval-decline live",
         "OpenRLHF 0.10 REINFORCE++-baseline (Qwen2.5-3B, 64 prompts x 8, logging every step), stdout log with "
         "`Global step` dicts, eval lines and tqdm, plus TensorBoard; MATH-500 eval (N=500) every 25 steps; step "
         "300 of 800 ({pct}%), 2 minutes ago. Until 262 the response length grew normally (620 -> 930 tokens). "
         "From 262 it runs away exponentially toward the 4096 cap: 1095 at 280, 2150 at 300; "
         "rollout/truncated_rate 0.02 -> 0.20, kl and ppo_clip_ratio climb with it. The train reward, 0.60 at "
         "262, falls to 0.50 at 300 (2.7 sds of one step) and eval pass@1 from {best:.3f} (250) to {last:.3f} "
         "at 300 ({drop:.1f} sds, sd {sd:.3f}). A better model lies behind: roll back to {lo}-{hi}, the newest "
         "eval before the runaway (checkpoints are saved outside this folder).", onset=262, sps=130, age_min=2),
    Spec("p04-ok-openrlhf-console-tb-lengths-grow-linearly-reward-dip-hard-streak-math500-rising-300-of-800",
         p04(False), P04W, 3804, (300, 800), "ok",
         "pair04 healthy-twin openrlhf console tensorboard length-growth reward-dip-noise live",
         "Twin of p04-rb: same OpenRLHF setup, files and noise. Lengths grow steadily 620 -> 1010 tokens "
         "(reasoning getting longer), truncated_rate stays 0.02-0.03, kl grows linearly to 0.021. The last 11 "
         "steps (290-300) drew a run of hard prompts, so the logged reward sits ~{dip:.2f} ({dip_se:.1f} sds of "
         "one step) under its rising level of 0.62, while eval pass@1 keeps climbing to ~0.61 (N=500). Noise on "
         "the reward with every side signal steady and the held-out score up: continue."),
    # ---- pair 05: a 60-problem held-out set: large drop with KL runaway vs a 1.5-sd wobble
    Spec("p05-rb-mlflow-files-handloop-heldout60-0.59-to-0.42-2.7sd-kl-and-grad-norm-run-away-from-395-450-of-1000",
         p05(True), P05W, 3805, (450, 1000), "rb",
         "pair05 failing mlflow files custom small-eval eval-decline kl-blowup live",
         "Hand-written GRPO loop (Qwen2.5-1.5B-Instruct, 16 prompts x 8, beta 0.02) logging to an MLflow file "
         "store (run RUNNING; params total_steps 1000, eval_problems 60); step 450 ({pct}%), 4 minutes ago. The "
         "held-out accuracy is measured on only 60 problems every 50 steps, so one eval has sd ~{sd:.3f} and "
         "swings of 0.06-0.1 are routine. It rose 0.35 -> 0.59 by 350 (level); at 450 the level is {last:.3f}, "
         "{drop:.1f} sds below the peak, and the train side says why: train/kl, 0.045 at 395, runs away "
         "exponentially (0.09 at 430, 0.24 at 450), grad norm 0.35 -> 1.36, and train/reward slips "
         "0.62 -> 0.55 (a 128-rollout batch has sd ~0.07, so about 1 sd). A big drop on a noisy eval would not be "
         "enough alone, but with KL and grad norm exploding from the same step it is a real decline. Roll back "
         "to {lo}-{hi} (the evals within one sd of the best, up to the KL onset at 395).",
         onset=395, sps=35, age_min=4),
    Spec("p05-ok-mlflow-files-handloop-heldout60-last-eval-1.5sd-low-kl-steady-450-of-1000",
         p05(False), P05W, 3805, (450, 1000), "ok",
         "pair05 healthy-twin mlflow files custom small-eval eval-wobble live",
         "Twin of p05-rb: same loop, MLflow file store and noise. The 60-problem held-out accuracy (sd "
         "~{sd:.3f}) rises 0.35 -> 0.62 (level); its last eval drew {luck:.1f} sds low (0.53 after 0.62 at 400), "
         "five problems, which this eval does by chance. train/kl grows linearly to 0.05, grad norm ~0.35, "
         "entropy and lengths steady, train reward still rising to 0.64. Healthy: continue."),
    # ---- pair 06: AIME mean@16 on 30 problems: drop as lengths hit the cap vs a 1.2-sd wobble
    Spec("p06-rb-verl-console-aime24-mean-at-16-peak-0.30-down-2.8sd-as-lengths-hit-8k-cap-train-rising-160-of-400",
         p06(True), P06W, 3806, (160, 400), "rb",
         "pair06 failing verl console small-eval mean-at-k truncation eval-decline live",
         "verl GRPO (Qwen2.5-7B, DAPO-17k prompts, 32 x 16, 8192-token cap) console log with plain floats; "
         "validation on AIME-2024, only 30 problems ('dataset len: 30') with 16 samples each "
         "(val-core/aime24/acc/mean@16), every 10 steps; step 160 of 400 ({pct}%), 7 minutes ago. Because the "
         "same 30 problems are re-sampled 16 times, the sampling sd of one eval is {sd:.3f}, not the ~0.08 of a "
         "single pass. AIME mean@16 rose 0.16 -> 0.30 by step 140. From 140 responses start hitting the cap "
         "exponentially (response_length/clip_ratio 0.03 -> 0.096, mean length 4400 -> 5390) and the eval falls "
         "to {last:.3f} at 160 ({drop:.1f} sds), while critic/score/mean on the shorter training prompts still "
         "rises to 0.50. Truncated AIME answers score 0: the model at 140 is better. Roll back to {lo}-{hi} (the "
         "newest checkpoint at or before it is global_step_100).", onset=140, sps=410, age_min=7),
    Spec("p06-ok-verl-console-aime24-mean-at-16-last-eval-1.2sd-low-truncation-flat-160-of-400",
         p06(False), P06W, 3806, (160, 400), "ok",
         "pair06 healthy-twin verl console small-eval mean-at-k eval-wobble live",
         "Twin of p06-rb: same verl setup and noise, AIME-2024 (30 problems, mean@16, sd {sd:.3f}) every 10 "
         "steps. The eval level keeps rising to 0.31; the last eval drew {luck:.1f} sds under it. Truncation "
         "stays ~0.03, lengths grow steadily 3200 -> 4700, train score rising. A wobble of that size on a "
         "30-problem set is noise: continue."),
    # ---- pair 07: grad-norm median climbing with clustered spikes vs isolated heavy-tail spikes
    Spec("p07-rb-custom-jsonl-grad-norm-median-0.22-to-0.6-from-310-kl-accelerates-reward-0.48-to-0.38-340-of-1000",
         p07(True), P07W, 3807, (340, 1000), "rb",
         "pair07 failing custom jsonl grad-norm-growth reward-decline live",
         "Hand-written PyTorch GRPO loop (bf16, 64 prompts x 8, grad clip 1.0; the logged grad_norm is "
         "pre-clip) writing logs/metrics.jsonl every step with total_steps 1000; step 340 ({pct}%), 2 minutes "
         "ago; no eval, so reward_mean is the headline (sd of one step {sd:.3f}). Reward rose 0.25 -> 0.48 by "
         "step 310. From 310 the grad norm's median climbs exponentially (0.22 -> 0.25 at 320 -> 0.60 at 340) "
         "with spikes coming ever closer, kl accelerates (0.03 -> 0.064), and reward falls to {last:.3f} "
         "({drop:.1f} sds below the peak) over the last 9% of steps. An optimisation instability under way: roll "
         "back to {lo}-{hi} (no checkpoints in this folder; restore the newest saved at or before 310) and lower "
         "the lr.", onset=310, sps=28, age_min=2),
    Spec("p07-ok-custom-jsonl-three-isolated-grad-spikes-reward-dip-hard-streak-median-steady-340-of-1000",
         p07(False), P07W, 3807, (340, 1000), "ok",
         "pair07 healthy-twin custom jsonl grad-norm-spikes reward-dip-noise live",
         "Twin of p07-rb: same loop, file and noise. Three isolated grad-norm spikes (x4.5 at 318, x3 at 331, "
         "x5.5 at 337) sit on a steady median of 0.22, the heavy tail every bf16 run has, and the last 7 steps "
         "drew a run of hard prompts, so reward_mean reads ~{dip:.2f} ({dip_se:.1f} sds) under its level of "
         "0.49, which is still rising. kl grows linearly (0.033), entropy and lengths steady. Nothing says the "
         "policy changed: continue."),
    # ---- pair 08: length collapse (stops reasoning) vs lengths that ease and level off
    Spec("p08-rb-trl020-console-lengths-collapse-760-to-330-from-640-eval-acc-3.3sd-down-reward-slips-700-of-2000",
         p08(True), P08W, 3808, (700, 2000), "rb",
         "pair08 failing trl console grpo length-collapse entropy-collapse eval-decline live",
         "TRL 0.20 GRPO console log (printed dicts, tqdm 700/2000 = {pct}%; on-policy so clip_ratio/* are exactly "
         "0; beta 0 so no kl), logging_steps 10, eval every 100 on a 300-prompt held-out set with 8 generations "
         "each (eval_rewards/accuracy_reward/mean, sampling sd {sd:.4f}). The eval rose 0.36 -> 0.62 by 600. "
         "From step 640 completions collapse exponentially (completions/mean_length 760 -> 650 at 680 -> 330 "
         "at 700, entropy 0.38 -> 0.19, clipped_ratio to ~0): the policy stops reasoning. The train reward "
         "falls 0.64 -> 0.59 (3 sds of a 10-step mean) and the eval at 700 is {last:.3f}, {drop:.1f} sds below "
         "the {best:.3f} at 600. Roll back to {lo}-{hi}.", onset=640, sps=31, age_min=3),
    Spec("p08-ok-trl020-console-lengths-ease-760-to-675-and-level-off-reward-dip-hard-streak-eval-rising-700-of-2000",
         p08(False), P08W, 3808, (700, 2000), "ok",
         "pair08 healthy-twin trl console grpo length-decline-saturates reward-dip-noise live",
         "Twin of p08-rb: same TRL 0.20 setup, console format and noise. Completion lengths ease 760 -> 675 from "
         "step 640 and level off (a model getting more concise), entropy drifts 0.45 -> 0.37; the last two logs "
         "(681-700) drew a hard-prompt streak, so the logged reward sits ~{dip:.2f} ({dip_se:.1f} sds of a "
         "10-step mean) below its rising level of 0.655, while the 300-prompt eval keeps rising (0.60 -> 0.64 "
         "level). Continue."),
    # ---- pair 09: never learned, no group spread vs slow starter with spread
    Spec("p09-stop-wandb-csv-trl019-olympiad-reward-0.004-zero-std-0.97-grad-norm-0.01-never-learned-375-of-1500",
         p09(True), P09W, 3809, (375, 1500), "stop",
         "pair09 failing wandb csv grpo never-learned no-signal live",
         "TRL 0.19 GRPO on olympiad problems (Qwen2.5-1.5B, 8 generations, 1024-token cap), exported as W&B "
         "panel CSVs plus config.yaml (max_steps 1500); logged through step 370 of a run at 375 ({pct}%). The "
         "accuracy reward has sat at 0.004 since step 10 and never risen; train/frac_reward_zero_std is "
         "0.96-0.99 on every log (almost every group of 8 is all wrong, so it carries zero advantage), "
         "reward_std ~0.06, grad_norm ~0.01, 38% of completions hit the cap. Without group spread there is no "
         "learning signal, and 1125 more steps will not create it. Nothing is lost by stopping (the weights are "
         "still the base model's): stop, and make the task easier or the model stronger."),
    Spec("p09-ok-wandb-csv-trl019-slow-starter-reward-0.02-to-0.055-zero-std-0.9-to-0.75-375-of-1500",
         p09(False), P09W, 3809, (375, 1500), "ok",
         "pair09 healthy-twin wandb csv grpo slow-starter live",
         "Twin of p09-stop: same TRL 0.19 setup and W&B export format. The reward is low but moving: 0.02 at the "
         "start -> 0.055 now (sd of a logged mean ~{sd:.4f}, so the rise is ~5 sds), frac_reward_zero_std falls "
         "from ~0.9 to ~0.75 and grad_norm ~0.07: groups with a right answer exist and carry gradient. A slow "
         "starter at {pct}% of plan: continue."),
    # ---- pair 10: format reward saturated, correctness term all zero vs correctness creeping
    Spec("p10-stop-rasbt-7_6-csv-format-saturated-correctness-0-adv-std-0-eval-0.00-150-of-500",
         p10(True), P10W, 3810, (150, 500), "stop",
         "pair10 failing custom csv rasbt format-reward no-signal never-learned live",
         "reasoning-from-scratch 7_6 script (total reward = correctness + format, 1 prompt x 8 rollouts per "
         "step) writing its CRLF metrics CSV (total_steps 500) and .txt; step 150 ({pct}%), 2 minutes ago; "
         "MATH-500 eval_acc (N=500) at steps 1, 50, 100, 150. reward_avg 'rose' 0.3 -> 1.0, but all of it is the "
         "format term (format_reward_avg 0.97-1.0 from step 40): correctness is 0 on every rollout, so every "
         "group scores exactly 1.0, adv_std and loss are 0.0000 (update skipped) on almost every step since "
         "~100, and eval_acc is 0.002-0.008. The task part has never started and the groups carry no signal to "
         "start it. Stop: the weights are no worse than any earlier ones and more steps buy nothing."),
    Spec("p10-ok-rasbt-7_6-csv-format-saturated-correctness-creeping-adv-std-live-eval-0.02-to-0.06-150-of-500",
         p10(False), P10W, 3810, (150, 500), "ok",
         "pair10 healthy-twin custom csv rasbt format-reward slow-starter live",
         "Twin of p10-stop: same script, CSV and noise. Format saturates the same way, but correctness is "
         "alive: reward_avg goes above 1.0 on many steps (1.125-1.875 when some of the 8 rollouts are right), "
         "adv_std is non-zero on about half the steps, and eval_acc on MATH-500 reads 0.020, 0.050, 0.052, 0.060 "
         "(level 0.018 -> 0.055; sd ~0.01). Early learning on a hard task: continue."),
    # ---- pair 11: PPO with a reward model: score falls as approxkl / clipfrac / ratio run away vs batch noise
    Spec("p11-rb-trl014-ppo-ckpts-rm-score-1.6-down-3.2sd-approxkl-x12-clipfrac-0.035-to-0.23-ratio-1.32-375-of-1000",
         p11(True), P11W, 3811, (375, 1000), "rb",
         "pair11 failing trl-state ppo reward-model ratio-blowup clip-ratio reward-decline live",
         "TRL 0.14 PPOTrainer (Llama, reward model, 64 rollouts per update, one log_history row per update) with "
         "checkpoint folders only (every 25 updates, save_total_limit 4: 300-375 on disk, the newest written 3 "
         "minutes ago at update 375 of 1000, {pct}%). objective/scores rose -0.4 -> 1.6 by update 340; since "
         "then the updates run away: policy/approxkl_avg 0.0045 -> 0.052, policy/clipfrac_avg 0.035 -> 0.23, "
         "val/ratio 1.00 -> 1.32, objective/kl leaves its trend (6.5 -> 22.6), and the score falls to "
         "{last:.2f} ({drop:.1f} sds of one update's batch mean, sd {sd:.2f}) over the last 9% of updates. A "
         "policy breaking under oversized updates: roll back to {lo}-{hi} (checkpoint-325 is on disk).",
         onset=340, sps=20, age_min=3),
    Spec("p11-ok-trl014-ppo-ckpts-rm-score-dips-3sd-last-7-updates-hard-prompts-approxkl-clipfrac-steady-375-of-1000",
         p11(False), P11W, 3811, (375, 1000), "ok",
         "pair11 healthy-twin trl-state ppo reward-model reward-dip-noise live",
         "Twin of p11-rb: same PPO setup, checkpoint folders and noise. objective/scores rises -0.4 -> 1.75; the "
         "last 7 updates drew prompts the reward model scores low, so they read ~{dip:.2f} ({dip_se:.1f} sds) "
         "under that level. policy/approxkl_avg ~0.0045, policy/clipfrac_avg ~0.035, val/ratio ~1.00 and "
         "objective/kl's linear growth (to 7.2) are unchanged. Batch noise, not a break: continue."),
    # ---- pair 12: DPO over-optimisation (likelihood displacement) vs the usual slow drift
    Spec("p12-rb-trl019-dpo-tb-eval-pref-acc-0.735-to-0.655-4sd-logps-chosen-plunge-from-350-450-of-1500",
         p12(True), P12W, 3812, (450, 1500), "rb",
         "pair12 failing trl-state tensorboard dpo likelihood-displacement eval-decline live",
         "TRL 0.19 DPOTrainer (logging_steps 10, eval every 50 on 500 held-out pairs, sigmoid loss), "
         "TensorBoard events under runs/ through step 450 and checkpoints every 100 (save_total_limit 2: 300 "
         "and 400 on disk); max_steps 1500 ({pct}%), 4 minutes ago. eval_rewards/accuracies rose 0.55 -> 0.735 "
         "by step 350 (sd {sd:.3f} on 500 pairs). From 350 the chosen log-probs plunge exponentially "
         "(logps/chosen -200 -> -280 at 430 -> -360 at 450; rejected faster still), train rewards/accuracies "
         "races above 0.9 and margins balloon: over-optimisation of the preference loss. The held-out accuracy "
         "falls to 0.695 (400) and {last:.3f} (450) in the story, {drop:.1f} sds below the peak. Roll back to "
         "{lo}-{hi}; checkpoint-300 is on disk.", onset=350, sps=14, age_min=4),
    Spec("p12-ok-trl019-dpo-tb-eval-pref-acc-last-eval-1sd-low-logps-chosen-drift-slowly-450-of-1500",
         p12(False), P12W, 3812, (450, 1500), "ok",
         "pair12 healthy-twin trl-state tensorboard dpo eval-wobble live",
         "Twin of p12-rb: same DPO setup, TensorBoard + checkpoints and noise. Held-out preference accuracy "
         "(500 pairs, sd {sd:.3f}) rises 0.55 -> 0.75 (level); the last eval drew {luck:.1f} sd below it. "
         "logps/chosen drifts down slowly and linearly (-185 -> -212), margins grow steadily, train accuracy "
         "~0.8. The usual DPO picture at {pct}% of plan: continue."),
    # ---- pair 13: KL-loss runaway with the score slipping vs linear KL and a hard-prompt streak
    Spec("p13-rb-mlflow-db-verl-kl-loss-runaway-0.013-to-0.14-score-0.50-to-0.41-in-last-40-steps-360-of-800",
         p13(True), P13W, 3813, (360, 800), "rb",
         "pair13 failing mlflow db verl kl-blowup grad-norm-growth reward-decline live",
         "verl GRPO (Qwen2.5-3B, 64 prompts x 8, kl loss coef 0.001, no validation) logging to an MLflow SQL "
         "store (mlflow.db, run RUNNING, params trainer.total_training_steps 800); step 360 ({pct}%), 5 minutes "
         "ago. critic/score/mean rose 0.18 -> 0.50 by step 320 (sd of a step {sd:.3f}). From 320 actor/kl_loss "
         "runs away exponentially (0.013 -> 0.025 at 340 -> 0.14 at 360), actor/grad_norm 0.25 -> 1.06, "
         "actor/pg_clipfrac 0.003 -> 0.025, and the score slips to {last:.3f} ({drop:.1f} sds) over the last 11% "
         "of steps. Roll back to {lo}-{hi}, before the drift took off (save_freq 100: the newest checkpoint at "
         "or before it is step 300, saved outside this folder).", onset=320, sps=70, age_min=5),
    Spec("p13-ok-mlflow-db-verl-kl-linear-score-dip-hard-streak-last-9-steps-360-of-800",
         p13(False), P13W, 3813, (360, 800), "ok",
         "pair13 healthy-twin mlflow db verl reward-dip-noise live",
         "Twin of p13-rb: same verl setup, mlflow.db and noise. actor/kl_loss grows linearly to 0.015, grad "
         "norm ~0.25 and clip fraction ~0.003 hold; the last 9 steps drew a streak of hard prompts, so "
         "critic/score/mean reads ~{dip:.2f} ({dip_se:.1f} sds) under its level of 0.52, which is still rising. "
         "Continue."),
    # ---- singles
    Spec("s01-rb-trl023-rloo-ckpts-gsm8k-eval-0.755-to-0.727-4sd-at-latest-eval-only-train-reward-holds-600-of-1500",
         s01(), S01W, 3821, (600, 1500), "rb",
         "single trl-state rloo eval-decline eval-only live",
         "TRL 0.23 RLOOTrainer (k=2, beta 0.05 so kl is logged), logging_steps 10, eval every 100 on GSM8K test "
         "(1319 problems x 2 generations: eval_reward and eval_rewards/gsm8k_accuracy/mean; sampling sd "
         "{sd:.4f}), checkpoints every 100 with save_total_limit 3 (400, 500, 600; the newest written 6 minutes "
         "ago at step 600 of 1500, {pct}%). The eval rose 0.62 -> 0.755 by 500. Around step 530 a new prompt "
         "shard entered the mix whose reference answers are often wrong; the policy learns them, so the "
         "training reward holds (0.735) and kl, entropy, lengths and clip ratios show nothing, but the latest "
         "eval is {last:.3f}, {drop:.1f} sds under the best. Only one eval, but a 4-sd drop on 2638 samples is "
         "not noise: a better model lies behind. Roll back to {lo}-{hi} (checkpoint-500, on disk, is the "
         "target).", onset=530, sps=26, age_min=6),
    Spec("s02-ok-verl-jsonl-two-vals-aime24-30-problems-1.8sd-low-math500-rising-300-of-700",
         s02(), S02W, 3822, (300, 700), "ok",
         "single verl jsonl small-eval eval-wobble two-evals live",
         "verl GRPO (Qwen3-1.7B, 64 x 8) file logger and Hydra config (total_training_steps 700), two "
         "validation sets every 25 steps: MATH-500 (N=500, mean@1, sd {sd:.3f}) and AIME-2024 (30 problems, one "
         "sample each, sd ~0.05); step 300 ({pct}%), 9 minutes ago. AIME swings between 0.03 and 0.20 from eval "
         "to eval and its last value drew 1.8 sds under its level (0.067 against ~0.17), while MATH-500 keeps "
         "rising 0.45 -> 0.60 and the train score 0.35 -> 0.55 with every side signal steady. A few problems on "
         "a 30-problem set are noise; the 500-problem set is the one to read. Continue."),
]

STORY = {s.name: s for s in SPECS}
CASES = [s.case() for s in SPECS]


def write_run(case: Case, folder: Path) -> None:
    spec = STORY[case.name]
    R, S = spec.steps
    run = draw(spec.story, spec.seed, R)
    run.update(planned=S, story=spec.story, clock=Clock(R, spec.sps, spec.age_min))
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    stamp_dirs(folder)


def check(cases: list[Case]) -> None:
    for c in cases:
        spec = STORY[c.name]
        st, (R, S) = spec.story, spec.steps
        f = spec.facts()
        run = draw(st, spec.seed, R)
        pool = run["pool"]
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')}  [{R}/{S} = {f['pct']}%]")
        print(f"    headline {st.head}: best {f['best']:.4f}@{f['best_step']} last {f['last']:.4f}@{f['last_step']} "
              f"sd {f['sd']:.4f} -> last is {f['drop']:.1f} sd below best"
              + (f"; streak dip {f['dip']:.3f} = {f['dip_se']:.1f} train sd" if 'dip' in f else ""))
        if st.head == TRAIN:
            rows = logged(run, st.log_every, st.avg)
            pts = [(s, v["reward"], st.head_level(s)) for s, v in rows]
        else:
            pts = [(s, x, st.evals[st.head].level(s)) for s, x in run["evals"][st.head]]
        tail = pts[-8:]
        sd = f["sd"]
        print("    drawn(level) z: " + " ".join(f"{s}:{x:.3f}({lv:.3f},{(x - lv) / sd:+.1f})" for s, x, lv in tail))
        if st.head != TRAIN and st.kind != "dpo":
            rows = logged(run, st.log_every, st.avg)
            tsd = st.train_sd(R, pool)
            print(f"    train tail (sd {tsd:.4f}): " + " ".join(
                f"{s}:{v['reward']:.3f}({st.head_level(s) if False else st.train_level(s):.3f})" for s, v in rows[-6:]))
        marks = [x for x in (spec.onset, R - 20, R) if x]
        for k in ("entropy", "kl", "len", "trunc", "clip", "clip_hi", "pkl", "grad", "logp_c", "ratio"):
            if k in st.sides:
                lv = st.sides[k].level
                vals = [lv(m) for m in marks]
                if max(abs(x) for x in vals) and (max(vals) - min(vals)) > 1e-3 * max(abs(x) for x in vals):
                    print(f"    {k}: " + " ".join(f"{m}:{x:.4g}" for m, x in zip(marks, vals, strict=True)))
        if st.kind == "binary":
            zs = [v["zero_std"] for v in run["steps"][-20:]]
            print(f"    zero-std frac (last 20 steps) {np.mean(zs):.3f}; train sd at end {st.train_sd(R, pool):.4f}")


HEADER = """# Holdout set 38: failures that have only just begun at a scheduled check, each twinned with a healthy run a
# check at the same moment would see as similar. Written by make_holdout38.py, independent of the assessor, its
# judges and the other holdout generators. Labels: what a careful practitioner should do under DESIGN.md's decision
# contract, read from the noise-free levels of each story. rollback_window is inclusive: from the first logged
# headline step whose level is within one sampling sd of the best level to the newest such step not after
# onset_step. Steps are in each run's own logged units. Every run is live (newest write minutes ago).
# Run `.venv/bin/python evals/holdout38/make_holdout38.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout38.py", "holdout38.yaml", "h38-", "holdout38", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
