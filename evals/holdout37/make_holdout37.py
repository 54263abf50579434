"""Holdout set 37: blind-labelled RL post-training runs aimed at false alarms and the continue/stop line.

Run from the worktree root:
    .venv/bin/python evals/holdout37/make_holdout37.py           # writes runs/ (gitignored) and holdout37.yaml
    .venv/bin/python evals/holdout37/make_holdout37.py --check   # also prints levels and rollback windows

Written without looking at the assessor. Every case is a story told as noise-free levels per optimiser step (train
reward, held-out evals, side signals), drawn through this set's own noise model and written the way one framework
(and one version of it) writes its logs. About half of the runs are healthy but carry a signal a nervous reader
would act on (a loss that goes negative, a KL that climbs and then holds, an entropy plunge that settles, grad-norm
spikes that recover, lengths that shed rambling, a dip after warm-up, a curriculum reset, stale steps from before a
resume, a small eval wobbling); a quarter converged or saturated; a quarter real failures twinned with the healthy
shapes (the KL that never levels, spikes that stop recovering, the dip that stays, the eval that falls by several
times its sampling error).

Noise model (this set's own):
  * binary rewards: each logged batch has P prompts whose solve rates are logit-normal around the level
    (q = sigmoid(logit(p) + c + tau*Z), c calibrated so that E[q] = p exactly), G Bernoulli rollouts per prompt;
    the batch mean, the batch std, the per-group std and the share of all-same groups come from the same draws.
    Trainers that average every micro-step since the last log (TRL/HF) log the mean of `log_every` batches;
    OpenRLHF and hand loops log the current step.
  * held-out evals: Binomial(N, p) / N at the eval steps.
  * grad norm: level * exp(0.2 Z), times a Pareto(1.2) factor on ~2 % of steps (heavy right tail), plus any
    scripted spikes of the story.
  * side signals: multiplicative log-normal (or additive, for signed ones) white noise plus a slow AR(1) wander;
    DPO pair accuracies are Binomial over the logged pairs.

Labels are decided from the stories, never from a tool. The rollback window runs from the first logged headline
step whose noise-free level is within one sampling sd of the best level (sd of one eval for an eval headline, of
one logged batch mean for a train headline) to the newest such step not after the onset of the breakage.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from scipy.signal import lfilter
from scipy.special import expit, logit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import HEALTHY, Case, converged, dump_json, stop, tb_file, trainer_state, writer

HERE = Path(__file__).resolve().parent
NOW = time.time()
Level = Callable[[float], float]
TRAIN = "@train"


# ------------------------------------------------------------------------------------------------------ level shapes

def pw(*pts: tuple[float, float]) -> Level:
    """Piecewise-linear level through the given (step, value) knots, flat outside them."""
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def const(v: float) -> Level:
    return lambda s: v


def staged(*stages: tuple[int, Level]) -> Level:
    """A level that switches curve at each stage start (curriculum): [(start_step, level), ...]."""
    def f(s: float) -> float:
        cur = stages[0][1]
        for start, lv in stages:
            if s >= start:
                cur = lv
        return cur(s)
    return f


def warmup_cosine(peak: float, warm: int, total: int, floor: float = 0.0) -> Level:
    def f(s: float) -> float:
        if s < warm:
            return peak * s / warm
        t = min(1.0, (s - warm) / max(1, total - warm))
        return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * t))
    return f


def saturating(start: float, top: float, scale: float) -> Level:
    """start + (top - start) * (1 - exp(-s / scale)): fast early gains, slower later, never quite flat."""
    return lambda s: start + (top - start) * (1 - math.exp(-s / scale))


# ------------------------------------------------------------------------------------------------------ noise model

_HX, _HW = np.polynomial.hermite_e.hermegauss(48)
_HW = _HW / _HW.sum()


def _calibrate(p: np.ndarray, tau: float) -> np.ndarray:
    """Shift c per level so that the logit-normal prompt solve rates average exactly p."""
    p = np.clip(p, 1e-4, 1 - 1e-4)
    lo, hi = np.full(p.shape, -15.0), np.full(p.shape, 15.0)
    base = logit(p)[:, None]
    for _ in range(55):
        mid = (lo + hi) / 2
        m = (expit(base + mid[:, None] + tau * _HX[None, :]) * _HW).sum(1)
        lo = np.where(m < p, mid, lo)
        hi = np.where(m < p, hi, mid)
    return (lo + hi) / 2


def binary_sd(p: float, P: int, G: int, tau: float, k: int = 1) -> float:
    """Sampling sd of the mean of k batch means (P prompts x G rollouts) around the level p."""
    p = min(max(p, 1e-4), 1 - 1e-4)
    c = _calibrate(np.array([p]), tau)[0]
    q = expit(logit(p) + c + tau * _HX)
    eq2 = float((q * q * _HW).sum())
    var = (eq2 - p * p) / P + (p - eq2) / (P * G)
    return math.sqrt(max(var, 0.0) / k)


def binary_batches(rng: np.random.Generator, p: np.ndarray, P: int, G: int, tau: float) -> dict[str, np.ndarray]:
    p = np.clip(p, 1e-4, 1 - 1e-4)
    uniq, inv = np.unique(np.round(p, 4), return_inverse=True)
    c = _calibrate(uniq, tau)[inv]
    q = expit(logit(p)[:, None] + c[:, None] + rng.normal(0, tau, (len(p), P)))
    k = rng.binomial(G, q)
    m = k.sum(1) / (P * G)
    n = P * G
    same = (k == 0) | (k == G)
    gstd = np.sqrt(k / G * (1 - k / G) * G / (G - 1)).mean(1)
    return dict(reward=m, reward_std=np.sqrt(m * (1 - m) * n / (n - 1)), zero_std=same.mean(1), group_std=gstd,
                pct0=100 * (k == 0).mean(1), pct1=100 * (k == G).mean(1))


def wander(rng: np.random.Generator, n: int, sd: float, phi: float = 0.95) -> np.ndarray:
    if sd <= 0 or n == 0:
        return np.zeros(n)
    return lfilter([math.sqrt(1 - phi * phi) * sd], [1, -phi], rng.normal(size=n))


@dataclass
class Sig:
    """A side signal: level, white-noise sd (relative for 'mult', absolute for 'add'), AR wander, or binomial."""

    level: Level
    sd: float = 0.04
    kind: str = "mult"  # mult | add | binom | exact | same (a copy of the binary reward: the only reward function)
    ar: float = 0.0
    n: int = 0  # binom: number of trials per logged value


SAME = Sig(lambda s: 0.0, 0.0, "same")


@dataclass
class Story:
    reward: Level | None  # binary train reward level (None for DPO-style runs)
    evals: dict[str, tuple[Level, int]]  # eval key as the framework writes it -> (level, N problems)
    headline: str  # TRAIN or an eval key
    eval_every: int = 0
    eval_at_0: bool = False
    P: int = 64
    G: int = 8
    tau: float = 1.4
    log_every: int = 1
    avg: bool = True  # logged reward = mean of the log_every batches since the last log (TRL/HF)
    first: int = 0  # first logged step (0 = log_every)
    sides: dict[str, Sig] = field(default_factory=dict)
    grad: Level = field(default=const(0.3))
    grad_tail: float = 0.02
    spikes: dict[int, float] = field(default_factory=dict)  # step -> multiplier on the grad norm
    nan_steps: tuple[int, ...] = ()  # steps whose loss / grad norm are non-finite
    stale: tuple[int, int, Level, Level | None] | None = None  # (from, to, reward, eval) of a superseded segment
    fmt_w: float = 0.0  # total reward = correctness + fmt_w * format reward (TRL reward_weights)

    def train_steps(self, reached: int) -> list[int]:
        return list(range(self.first or self.log_every, reached + 1, self.log_every))

    def eval_steps(self, reached: int) -> list[int]:
        if not self.evals:
            return []
        return list(range(0 if self.eval_at_0 else self.eval_every, reached + 1, self.eval_every))

    def _train(self, rng: np.random.Generator, steps: list[int], reward: Level | None) -> list[tuple[int, dict]]:
        n = len(steps)
        cols: dict[str, np.ndarray] = {}
        if reward is not None:
            k = self.log_every if self.avg else 1
            every = np.array([reward(s - j) for s in steps for j in range(k)])
            b = binary_batches(rng, every, self.P, self.G, self.tau)
            cols = {key: v.reshape(n, k).mean(1) for key, v in b.items()}
        for key, sig in self.sides.items():
            lv = np.array([sig.level(s) for s in steps])
            if sig.kind == "same":
                cols[key] = cols["reward"].copy()
            elif sig.kind == "exact":
                cols[key] = lv
            elif sig.kind == "binom":
                cols[key] = rng.binomial(sig.n, np.clip(lv, 0, 1)) / sig.n
            elif sig.kind == "add":
                cols[key] = lv + sig.sd * rng.normal(size=n) + wander(rng, n, sig.ar)
            else:
                cols[key] = lv * np.exp(sig.sd * rng.normal(size=n) + wander(rng, n, sig.ar))
        if self.fmt_w and "fmt" in cols:
            cols["reward"] = cols["reward"] + self.fmt_w * cols["fmt"]
        g = np.array([self.grad(s) for s in steps]) * np.exp(0.2 * rng.normal(size=n))
        tail = rng.random(n) < self.grad_tail
        g = np.where(tail, g * (1 + rng.pareto(1.2, n)), g)
        for i, s in enumerate(steps):
            g[i] *= self.spikes.get(s, 1.0)
        cols["grad_norm"] = g
        rows = []
        for i, s in enumerate(steps):
            row = {key: float(v[i]) for key, v in cols.items()}
            if s in self.nan_steps:
                row["grad_norm"] = float("nan")
                row["loss"] = float("nan")
            rows.append((s, row))
        return rows

    def _evals(self, rng: np.random.Generator, steps: list[int], override: Level | None = None) -> list:
        out = []
        for s in steps:
            row = {}
            for key, (lv, n) in self.evals.items():
                p = override(s) if (override is not None and key == self.headline) else lv(s)
                row[key] = rng.binomial(n, min(max(p, 0.0), 1.0)) / n
            out.append((s, row))
        return out

    def draws(self, rng: np.random.Generator, reached: int) -> dict:
        run = dict(train=self._train(rng, self.train_steps(reached), self.reward),
                   eval=self._evals(rng, self.eval_steps(reached)))
        if self.stale:
            a, b, rlv, elv = self.stale
            run["stale_train"] = self._train(rng, [s for s in self.train_steps(b) if s >= a], rlv)
            run["stale_eval"] = self._evals(rng, [s for s in self.eval_steps(b) if s >= a], elv)
        return run

    # -------------------------------------------------------------------------------------------- label helpers
    def headline_level(self) -> Level:
        return self.reward if self.headline == TRAIN else self.evals[self.headline][0]

    def headline_steps(self, reached: int) -> list[int]:
        return self.train_steps(reached) if self.headline == TRAIN else self.eval_steps(reached)

    def headline_sd(self, p: float) -> float:
        if self.headline == TRAIN:
            return binary_sd(p, self.P, self.G, self.tau, self.log_every if self.avg else 1)
        n = self.evals[self.headline][1]
        return math.sqrt(p * (1 - p) / n)


def window(story: Story, reached: int, onset: int) -> tuple[int, int]:
    lv, steps = story.headline_level(), story.headline_steps(reached)
    best = max(lv(s) for s in steps)
    sd = story.headline_sd(best)
    good = [s for s in steps if lv(s) >= best - sd]
    return good[0], max(s for s in good if s <= onset)


# --------------------------------------------------------------------------------------------------- small helpers

def iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def fnum(x: float) -> float:
    return float(f"{x:.6g}")


def wall(run: dict, step: float) -> float:
    """Wall-clock time at which `step` was logged (the newest log was written `age` seconds ago)."""
    return NOW - run["age"] - (run["reached"] - step) * run["sec"]


def named(row: dict, vocab: dict[str, str]) -> dict:
    return {vocab[k]: v for k, v in row.items() if k in vocab}


def set_times(folder: Path, run: dict) -> None:
    """Give every file the wall time of the step it belongs to: checkpoints their save step, logs the newest write."""
    for p in sorted(folder.rglob("*")):
        step = None
        for part in p.relative_to(folder).parts:
            for tag in ("checkpoint-", "global_step_", "global_step"):
                if part.startswith(tag) and part[len(tag):].isdigit():
                    step = int(part[len(tag):])
        t = wall(run, step) if step is not None else NOW - run["age"]
        if p.is_file() and p.name.startswith("events.out.tfevents."):
            t = p.stat().st_mtime if p.stat().st_mtime < NOW - 1 else t
        os.utime(p, (t, t))


def stub(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


# ------------------------------------------------------------------------------------------------------ vocabularies

TRL_GRPO = {"reward": "reward", "reward_std": "reward_std", "zero_std": "frac_reward_zero_std", "kl": "kl",
            "acc": "rewards/accuracy_reward/mean", "acc_std": "rewards/accuracy_reward/std",
            "fmt": "rewards/format_reward/mean", "entropy": "entropy", "length": "completions/mean_length",
            "maxlen": "completions/max_length", "trunc": "completions/clipped_ratio",
            "clip": "clip_ratio/region_mean", "clip_low": "clip_ratio/low_mean", "clip_high": "clip_ratio/high_mean",
            "grad_norm": "grad_norm", "lr": "learning_rate", "loss": "loss", "step_time": "step_time"}
TRL_DPO = {"loss": "loss", "grad_norm": "grad_norm", "lr": "learning_rate", "chosen": "rewards/chosen",
           "rejected": "rewards/rejected", "pair_acc": "rewards/accuracies", "margins": "rewards/margins",
           "logps_c": "logps/chosen", "logps_r": "logps/rejected", "logits_c": "logits/chosen",
           "logits_r": "logits/rejected"}
VERL = {"reward": "critic/score/mean", "kl": "actor/kl_loss", "kl_coef": "actor/kl_coef", "entropy": "actor/entropy",
        "pg_loss": "actor/pg_loss", "clip": "actor/pg_clipfrac", "ppo_kl": "actor/ppo_kl",
        "grad_norm": "actor/grad_norm", "lr": "actor/lr", "length": "response_length/mean",
        "trunc": "response_length/clip_ratio", "step_time": "timing_s/step", "gen_time": "timing_s/gen"}
OPENRLHF = {"pg_loss": "policy_loss", "kl": "kl", "reward": "reward", "ret": "return", "length": "response_length",
            "total_len": "total_length", "trunc": "truncated", "lr": "actor_lr", "grad_norm": "actor_grad_norm",
            "clip": "ppo_clip_ratio", "ppo_kl": "ppo_kl", "vllm_kl": "vllm_kl", "group_std": "group_reward_std"}
NEMO = {"reward": "train/reward", "loss": "train/loss", "grad_norm": "train/grad_norm", "lr": "train/lr",
        "kl": "train/kl_penalty", "entropy": "train/approx_entropy", "length": "train/mean_gen_tokens_per_sample",
        "trunc": "train/truncation_rate", "tmpe": "train/token_mult_prob_error", "pct0": "train/baseline_reward/pct_0",
        "pct1": "train/baseline_reward/pct_1", "step_time": "timing/train/total_step_time",
        "gen_time": "timing/train/generation"}


# ------------------------------------------------------------------------------------------- TRL / HF Trainer files

def trl_rows(run: dict, vocab: dict, steps_per_epoch: int, completions: int = 0) -> list[dict]:
    """log_history rows: train dicts (HF rounds `loss` to 4 dp), eval dicts right after the train dict of a step."""
    rows: list[dict] = []
    tokens = 0.0
    prev = 0
    for s, v in run["train"]:
        row = {k: fnum(x) for k, x in named(v, vocab).items() if k != "loss"}
        if "loss" in v:
            row["loss"] = round(v["loss"], 4) if math.isfinite(v["loss"]) else v["loss"]
        if completions:  # TRL num_tokens: cumulative prompt + completion tokens
            tokens += (s - prev) * completions * (164 + v.get("length", 400))
            row["num_tokens"] = float(round(tokens))
        prev = s
        row.update(epoch=s / steps_per_epoch, step=s)
        rows.append(row)
    for s, v in run["eval"]:
        row = {k: fnum(x) for k, x in v.items()}
        row.update(eval_runtime=round(140 + 9 * math.sin(s), 4), eval_samples_per_second=3.6,
                   eval_steps_per_second=0.114, epoch=s / steps_per_epoch, step=s)
        rows.append(row)
    rows.sort(key=lambda r: (r["step"], "eval_runtime" in r))
    return rows


def w_trl_ckpts(run: dict, folder: Path, vocab: dict, save_every: int, keep: int, logging_steps: int,
                steps_per_epoch: int, eval_every: int | None, completions: int = 0, finished: bool = False,
                top_state: bool = False, epochs: int = 1, lora: bool = True) -> None:
    """TRL output_dir: checkpoint-N/ with trainer_state.json (history up to N); save_total_limit keeps `keep`."""
    rows = trl_rows(run, vocab, steps_per_epoch, completions)
    reached, planned = run["reached"], run["planned"]
    saves = list(range(save_every, reached + 1, save_every))
    if finished and reached not in saves:
        saves.append(reached)
    kept: list[int] = []
    for n in saves:
        st = trainer_state([r for r in rows if r["step"] <= n], n, planned, logging_steps, save_every, eval_every,
                           n / steps_per_epoch, epochs, training_stop=finished and n == reached)
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        if lora:
            stub(ck / "adapter_config.json", '{"peft_type": "LORA", "r": 32, "lora_alpha": 64}\n')
            stub(ck / "adapter_model.safetensors", "stub")
        else:
            stub(ck / "config.json", '{"architectures": ["Qwen2ForCausalLM"]}\n')
            stub(ck / "model.safetensors", "stub")
        for f in ("training_args.bin", "scheduler.pt", "optimizer.pt", "rng_state.pth"):
            stub(ck / f, "stub")
        kept.append(n)
        while len(kept) > keep:
            old = folder / f"checkpoint-{kept.pop(0)}"
            for p in sorted(old.rglob("*"), reverse=True):
                p.unlink()
            old.rmdir()
    if finished and top_state:
        final = dict(train_runtime=round(reached * run["sec"], 1), train_samples_per_second=0.9,
                     train_steps_per_second=round(1 / run["sec"], 3), total_flos=0.0, train_loss=0.0412,
                     epoch=reached / steps_per_epoch, step=reached)
        st = trainer_state([*rows, final], reached, planned, logging_steps, save_every, eval_every,
                           reached / steps_per_epoch, epochs, training_stop=True)
        dump_json(folder / "trainer_state.json", st)
        dump_json(folder / "train_results.json", {k: final[k] for k in final if k != "step"})
        stub(folder / "adapter_config.json" if lora else folder / "config.json", "{}\n")


def hf_tag(key: str) -> str:
    return "eval/" + key[5:] if key.startswith("eval_") else "train/" + key


def w_hf_tb(run: dict, folder: Path, vocab: dict, steps_per_epoch: int, resume_at: int = 0, host: str = "gpu-node17",
            ckpt: dict | None = None) -> None:
    """HF TensorBoardCallback (train/<key>, eval/<key>) under output_dir/runs/<MonDD_HH-MM-SS>_<host>/.

    With `resume_at`, the first launch also holds the superseded steps resume_at+1.. in run['stale_*'] and then
    crashed; the relaunch from checkpoint-`resume_at` opens a new runs/ folder and logs those steps again.
    """
    def events(train, evals, t_shift=0.0):
        ev = []
        for s, v in train:
            d = {hf_tag(k): x for k, x in named(v, vocab).items()}
            d["train/epoch"] = s / steps_per_epoch
            ev.append((wall(run, s) + t_shift, s, d))
        for s, v in evals:
            d = {hf_tag(k): x for k, x in v.items()}
            d.update({"eval/runtime": 150.0, "eval/epoch": s / steps_per_epoch})
            ev.append((wall(run, s) + 20 + t_shift, s, d))
        return sorted(ev, key=lambda e: (e[0], e[1]))

    def name(t: float) -> str:
        return datetime.fromtimestamp(t).strftime("%b%d_%H-%M-%S") + "_" + host

    if not resume_at:
        ev = events(run["train"], run["eval"])
        d = folder / "runs" / name(ev[0][0] - 60)
        tb_file(d / f"events.out.tfevents.{int(ev[0][0] - 60)}.{host}.31807.0", ev)
    else:
        stale_end = max(s for s, _ in run["stale_train"])
        gap = (stale_end - resume_at) * run["sec"] + 1500.0  # lost work + time to notice and relaunch
        pre = [r for r in run["train"] if r[0] <= resume_at] + run["stale_train"]
        pre_ev = [r for r in run["eval"] if r[0] <= resume_at] + run["stale_eval"]
        e1 = events(pre, pre_ev, -gap)
        d1 = folder / "runs" / name(e1[0][0] - 60)
        f1 = tb_file(d1 / f"events.out.tfevents.{int(e1[0][0] - 60)}.{host}.31807.0", e1)
        e2 = events([r for r in run["train"] if r[0] > resume_at], [r for r in run["eval"] if r[0] > resume_at])
        d2 = folder / "runs" / name(e2[0][0] - 90)
        tb_file(d2 / f"events.out.tfevents.{int(e2[0][0] - 90)}.{host}.4122.0", e2)
        t1 = e1[-1][0]
        os.utime(f1, (t1, t1))
        os.utime(d1, (t1, t1))
    if ckpt:
        w_trl_ckpts(run, folder, vocab, steps_per_epoch=steps_per_epoch, **ckpt)


def trl_bar(s: int, total: int, sec: float) -> str:
    frac = s / total
    filled = int(frac * 10)
    bar = "█" * filled + (" " * (10 - filled))
    el, rem = s * sec, (total - s) * sec

    def hms(x: float) -> str:
        x = int(x)
        return f"{x // 3600}:{x % 3600 // 60:02d}:{x % 60:02d}" if x >= 3600 else f"{x // 60:02d}:{x % 60:02d}"
    return f"{int(100 * frac):3d}%|{bar}| {s}/{total} [{hms(el)}<{hms(rem)}, {sec:.2f}s/it]"


def w_trl_console(run: dict, folder: Path, vocab: dict, steps_per_epoch: int, fname: str = "train.log",
                  eval_batches: int = 19) -> None:
    """A TRL script's stdout+stderr (nohup): tqdm bars redrawn with \\r, and one printed dict per log call."""
    total, sec = run["planned"], run["sec"]
    rows = trl_rows(run, vocab, steps_per_epoch)
    t0 = wall(run, 0) - 240
    out = [f"[{datetime.fromtimestamp(t0).strftime('%Y-%m-%d %H:%M:%S,%f')[:-3]}] [INFO] [real_accelerator.py:254:"
           "get_accelerator] Setting ds_accelerator to cuda (auto detect)",
           f"INFO {datetime.fromtimestamp(t0 + 29).strftime('%m-%d %H:%M:%S')} [__init__.py:244] Automatically "
           "detected platform cuda.",
           "***** Running training *****", f"  Num examples = {steps_per_epoch * 32:,}", "  Num Epochs = 2",
           "  Instantaneous batch size per device = 8", f"  Total optimization steps = {total:,}",
           f"  Number of trainable parameters = {40_370_176:,}"]
    done = 0
    buf = ""
    for r in rows:
        s = r["step"]
        if "eval_runtime" not in r:
            buf += "".join("\r" + trl_bar(k, total, sec) for k in range(done + 1, s + 1))
            done = s
            out.append(buf)
            buf = ""
            d = {k: r[k] for k in r if k != "step"}
            out.append(str(d))
        else:
            out.append("".join("\r" + f"{int(100 * k / eval_batches):3d}%|{'█' * (10 * k // eval_batches):<10}| "
                                       f"{k}/{eval_batches} [00:{5 * k:02d}<00:{5 * (eval_batches - k):02d}, "
                                       "5.02s/it]" for k in range(1, eval_batches + 1)))
            d = {k: r[k] for k in r if k != "step"}
            out.append(str(d))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / fname).write_text("\n".join(out) + "\n" + "\r" + trl_bar(done, total, sec), encoding="utf-8")


# ----------------------------------------------------------------------------------------------------------- verl

def verl_rows(run: dict, vocab: dict, kl_coef: float | None) -> dict[int, dict]:
    rows: dict[int, dict] = {}
    for s, v in run["eval"]:
        rows.setdefault(s, {}).update(v)
    for s, v in run["train"]:
        d = named(v, vocab)
        if kl_coef is not None:
            d["actor/kl_coef"] = kl_coef
        d["critic/score/max"] = 1.0
        d["critic/score/min"] = 0.0
        d["critic/advantages/mean"] = 0.0004 * math.sin(s)
        d["timing_s/step"] = run["sec"] * (0.9 + 0.2 * v.get("length", 400) / 800)
        d["timing_s/gen"] = 0.62 * d["timing_s/step"]
        d["training/global_step"] = s
        d["training/epoch"] = (s - 1) // run["steps_per_epoch"]
        rows.setdefault(s, {}).update(d)
    return rows


def verl_fmt(x: float, np2: bool) -> str:
    if isinstance(x, int):
        return f"np.int64({x})" if np2 else str(x)
    r = repr(float(x)) if math.isfinite(x) else "nan"
    return f"np.float64({r})" if np2 else r


def w_verl_console(run: dict, folder: Path, np2: bool, kl_coef: float | None = 0.001, fname: str = "train.log",
                   project: str = "verl_grpo", exp: str = "run", save_freq: int = 100) -> None:
    """verl LocalLogger lines `step:N - key:value - ...` amid Ray / vLLM output."""
    rows = verl_rows(run, VERL, kl_coef)
    total = run["planned"]
    t0 = datetime.fromtimestamp(wall(run, 0) - 400).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]
    lines = [f"{t0}\tINFO worker.py:1888 -- Started a local Ray instance. View the dashboard at "
             "127.0.0.1:8265",
             f"(TaskRunner pid=3391) {{'trainer': {{'project_name': '{project}', 'experiment_name': '{exp}', "
             f"'total_epochs': 15, 'save_freq': {save_freq}, 'test_freq': {run['eval_every']}, "
             "'val_before_train': True, 'logger': ['console', 'wandb']}}",
             f"(TaskRunner pid=3391) Size of train dataloader: {run['steps_per_epoch']}, "
             f"Size of val dataloader: 1",
             f"(TaskRunner pid=3391) Total training steps: {total}"]
    for s in sorted(rows):
        if s and s % 37 == 0:
            lines.append("(WorkerDict pid=3907) INFO 11-27 07:14:02 [block_pool.py:280] Successfully reset prefix "
                         "cache")
        if s and save_freq and s % save_freq == 0:
            lines.append(f"(TaskRunner pid=3391) local_global_step_folder: checkpoints/{project}/{exp}/"
                         f"global_step_{s}")
        d = rows[s]
        body = " - ".join(f"{k}:{verl_fmt(d[k], np2)}" for k in d)
        lines.append(f"(TaskRunner pid=3391) step:{s} - {body}")
    if run["reached"] >= total:
        last = dict(run["eval"][-1][1].items())
        lines.append(f"(TaskRunner pid=3391) (\"Final validation metrics: {last}\")")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / fname).write_text("\n".join(lines) + "\n", encoding="utf-8")
    verl_ckpts(run, folder, project, exp, save_freq)


def verl_ckpts(run: dict, folder: Path, project: str, exp: str, save_freq: int) -> None:
    if not save_freq:
        return
    base = folder / "checkpoints" / project / exp
    saves = list(range(save_freq, run["reached"] + 1, save_freq))
    for n in saves[-2:]:
        stub(base / f"global_step_{n}" / "actor" / "huggingface" / "config.json", "{}\n")
        stub(base / f"global_step_{n}" / "actor" / "model_world_size_8_rank_0.pt", "stub")
    if saves:
        stub(base / "latest_checkpointed_iteration.txt", str(saves[-1]))


def verl_config(folder: Path, run: dict, project: str, exp: str, save_freq: int, extra: str = "") -> None:
    stub(folder / ".hydra" / "config.yaml",
         f"trainer:\n  project_name: {project}\n  experiment_name: {exp}\n  total_epochs: 20\n"
         f"  total_training_steps: {run['planned']}\n  save_freq: {save_freq}\n  test_freq: {run['eval_every']}\n"
         f"  val_before_train: true\n  logger:\n  - console\n  - file\n{extra}")


def w_verl_jsonl(run: dict, folder: Path, project: str, exp: str, kl_coef: float | None = 0.001,
                 save_freq: int = 100) -> None:
    """verl FileLogger: <project>/<experiment>.jsonl, one {"step": N, "data": {...}} per line, NaN as null."""
    rows = verl_rows(run, VERL, kl_coef)
    lines = []
    for s in sorted(rows):
        data = {k: (v if (isinstance(v, int) or math.isfinite(v)) else None) for k, v in rows[s].items()}
        lines.append(json.dumps({"step": s, "data": data}))
    p = folder / project / f"{exp}.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines) + "\n")
    verl_config(folder, run, project, exp, save_freq)
    verl_ckpts(run, folder, project, exp, save_freq)


def w_verl_tb(run: dict, folder: Path, project: str, exp: str, kl_coef: float | None = None,
              save_freq: int = 100) -> None:
    rows = verl_rows(run, VERL, kl_coef)
    ev = [(wall(run, s) + (15 if s in dict(run["eval"]) else 0), s, rows[s]) for s in sorted(rows)]
    d = folder / "tensorboard_log" / project / exp
    tb_file(d / f"events.out.tfevents.{int(ev[0][0] - 120)}.h100-07.2291.0", ev)
    verl_config(folder, run, project, exp, save_freq)
    verl_ckpts(run, folder, project, exp, save_freq)


# -------------------------------------------------------------------------------------------------------- OpenRLHF

def orl_status(s: int, v: dict) -> dict:
    d = named(v, OPENRLHF)
    if "length" in v:
        d["total_length"] = v["length"] + 180.0
    return {k: fnum(x) for k, x in d.items()}


def w_openrlhf_console(run: dict, folder: Path, fname: str = "train_grpo.log") -> None:
    """OpenRLHF logging: `✨ Global step N: {dict}` per step, eval lines, an episode tqdm bar every 10 steps."""
    total, sec = run["planned"], run["sec"]
    evals = dict(run["eval"])
    t0 = datetime.fromtimestamp(wall(run, 0) - 500).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]
    lines = [f"[{t0}] [INFO] [launch.py:256:main] process 88211 spawned with command",
             f"(PPOTrainer pid=88390) Total steps: {total}, num_episodes: 1"]
    for s, v in run["train"]:
        t = datetime.fromtimestamp(wall(run, s)).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]
        d = orl_status(s, v)
        lines.append(f"[{t}] [INFO] [ppo_trainer.py:412:fit] ✨ Global step {s}: {d}")
        if s in evals:
            e = {k: fnum(x) for k, x in evals[s].items()}
            e["eval_response_length_mean"] = fnum(v.get("length", 600) * 1.05)
            e["eval_num_samples"] = 500
            lines.append(f"[{t}] [INFO] [ppo_trainer.py:498:evaluate] Evaluation completed in 71.43 seconds, "
                         f"global_step {s}, eval_metrics: {e}")
        if s % 10 == 0:
            lines.append(f"Episode [1/1]:  {int(100 * s / total):2d}%|{trl_bar(s, total, sec).split('|')[1]}| "
                         f"{s}/{total} [{int(s * sec // 3600)}:{int(s * sec % 3600 // 60):02d}:00, {sec:.2f}s/it, "
                         f"act_loss={d.get('policy_loss', 0):.3f}, reward={d.get('reward', 0):.3f}]")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / fname).write_text("\n".join(lines) + "\n", encoding="utf-8")
    ck = folder / "ckpt" / "checkpoints_grpo"
    last = run["reached"] // 100 * 100
    for n in (last - 100, last):
        if n > 0:
            stub(ck / f"global_step{n}" / "mp_rank_00_model_states.pt", "stub")
    stub(ck / "latest", f"global_step{last}")


def w_openrlhf_tb(run: dict, folder: Path, run_name: str) -> None:
    ev = []
    for s, v in run["train"]:
        ev.append((wall(run, s), s, {"train/" + k: x for k, x in orl_status(s, v).items()}))
    for s, v in run["eval"]:
        ev.append((wall(run, s) + 40, s, {"eval/" + k: x for k, x in v.items()}))
    ev.sort(key=lambda e: (e[0], e[1]))
    d = folder / "logs" / "tensorboard" / run_name
    tb_file(d / f"events.out.tfevents.{int(ev[0][0] - 200)}.a100-node3.55120.0", ev)


# ------------------------------------------------------------------------------------------------------ W&B export

def w_wandb_csv(run: dict, folder: Path, run_name: str, panels: dict[str, str], x: str = "Step",
                budget: int = 1000) -> None:
    """W&B panel "Export → CSV", one file per panel: x column, then `<run> - <key>`, `__MIN`, `__MAX` (bucketed)."""
    folder.mkdir(parents=True, exist_ok=True)
    evals = dict(run["eval"])
    for i, (key, wkey) in enumerate(panels.items()):
        pts = [(s, v[key]) for s, v in run["train"] if key in v] or [(s, evals[s][key]) for s in evals]
        pts = [(s, y) for s, y in pts if math.isfinite(y)]
        size = max(1, math.ceil(len(pts) / budget))
        out = []
        for j in range(0, len(pts), size):
            chunk = pts[j:j + size]
            ys = [y for _, y in chunk]
            out.append((chunk[-1][0], float(np.mean(ys)), min(ys), max(ys)))
        stamp = datetime.fromtimestamp(NOW - run["age"] + 30 + i).strftime("%Y-%m-%dT%H_%M_%S.%f")[:-3]
        with (folder / f"wandb_export_{stamp}+01_00.csv").open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow([x, f"{run_name} - {wkey}", f"{run_name} - {wkey}__MIN", f"{run_name} - {wkey}__MAX"])
            for s, m, lo, hi in out:
                w.writerow([s, f"{m:.6g}", f"{lo:.6g}", f"{hi:.6g}"])


# ---------------------------------------------------------------------------------------------------------- MLflow

def mlflow_points(run: dict, vocab: dict) -> dict[str, list[tuple[int, int, float]]]:
    pts: dict[str, list] = {}
    for s, v in run["train"]:
        for k, x in named(v, vocab).items():
            pts.setdefault(k, []).append((int(wall(run, s) * 1000), s, x))
        pts.setdefault("epoch", []).append((int(wall(run, s) * 1000), s, s / run["steps_per_epoch"]))
    for s, v in run["eval"]:
        for k, x in v.items():
            pts.setdefault(k, []).append((int(wall(run, s) * 1000) + 25000, s, x))
    return pts


def w_mlflow_files(run: dict, folder: Path, vocab: dict, params: dict, run_name: str, finished: bool = False) -> None:
    """./mlruns file store: metrics/<key> (nested dirs for '/') with `<ts_ms> <value> <step>` lines."""
    exp = folder / "mlruns" / "742911093482117621"
    rid = hashlib.md5(run_name.encode()).hexdigest()
    rd = exp / rid
    t0 = int(wall(run, 0) * 1000)
    stub(exp / "meta.yaml", f"artifact_location: file:///home/ml/rl/mlruns/742911093482117621\ncreation_time: {t0}\n"
         f"experiment_id: '742911093482117621'\nlast_update_time: {t0}\nlifecycle_stage: active\nname: grpo-math\n")
    end = int((NOW - run["age"]) * 1000)
    stub(rd / "meta.yaml", f"artifact_uri: file:///home/ml/rl/mlruns/742911093482117621/{rid}/artifacts\n"
         f"end_time: {end if finished else 'null'}\nentry_point_name: ''\nexperiment_id: '742911093482117621'\n"
         f"lifecycle_stage: active\nrun_id: {rid}\nrun_name: {run_name}\nrun_uuid: {rid}\nsource_name: ''\n"
         f"source_type: 4\nsource_version: ''\nstart_time: {t0}\nstatus: {3 if finished else 1}\ntags: []\n"
         "user_id: ml\n")
    for k, v in params.items():
        stub(rd / "params" / k, str(v))
    stub(rd / "tags" / "mlflow.runName", run_name)
    stub(rd / "tags" / "mlflow.user", "ml")
    (rd / "artifacts").mkdir(parents=True, exist_ok=True)
    for k, pts in mlflow_points(run, vocab).items():
        text = "".join(f"{ts} {repr(float(x)) if math.isfinite(x) else 'nan'} {s}\n" for ts, s, x in pts)
        stub(rd / "metrics" / k, text)


def w_mlflow_db(run: dict, folder: Path, vocab: dict, params: dict, run_name: str, finished: bool = False) -> None:
    """MLflow SQL store (sqlite:///mlflow.db): metrics / latest_metrics / runs / params / tags / experiments."""
    folder.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(folder / "mlflow.db")
    db.executescript("""
    CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL, PRIMARY KEY (version_num));
    CREATE TABLE experiments (experiment_id INTEGER NOT NULL, name VARCHAR(256) NOT NULL,
        artifact_location VARCHAR(256), lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT,
        PRIMARY KEY (experiment_id), UNIQUE (name));
    CREATE TABLE runs (run_uuid VARCHAR(32) NOT NULL, name VARCHAR(250), source_type VARCHAR(20),
        source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9),
        start_time BIGINT, end_time BIGINT, deleted_time BIGINT, source_version VARCHAR(50),
        lifecycle_stage VARCHAR(20), artifact_uri VARCHAR(200), experiment_id INTEGER,
        PRIMARY KEY (run_uuid), FOREIGN KEY(experiment_id) REFERENCES experiments (experiment_id));
    CREATE TABLE metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT NOT NULL,
        run_uuid VARCHAR(32) NOT NULL, step BIGINT DEFAULT '0' NOT NULL, is_nan BOOLEAN DEFAULT '0' NOT NULL,
        PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan), FOREIGN KEY(run_uuid) REFERENCES runs (run_uuid));
    CREATE TABLE latest_metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT,
        step BIGINT NOT NULL, is_nan BOOLEAN NOT NULL, run_uuid VARCHAR(32) NOT NULL,
        PRIMARY KEY (key, run_uuid), FOREIGN KEY(run_uuid) REFERENCES runs (run_uuid));
    CREATE TABLE params (key VARCHAR(250) NOT NULL, value VARCHAR(8000) NOT NULL, run_uuid VARCHAR(32) NOT NULL,
        PRIMARY KEY (key, run_uuid), FOREIGN KEY(run_uuid) REFERENCES runs (run_uuid));
    CREATE TABLE tags (key VARCHAR(250) NOT NULL, value VARCHAR(8000), run_uuid VARCHAR(32) NOT NULL,
        PRIMARY KEY (key, run_uuid), FOREIGN KEY(run_uuid) REFERENCES runs (run_uuid));
    """)
    rid = hashlib.md5(run_name.encode()).hexdigest()
    t0 = int(wall(run, 0) * 1000)
    end = int((NOW - run["age"]) * 1000)
    db.execute("INSERT INTO alembic_version VALUES ('6953534de441')")
    db.execute("INSERT INTO experiments VALUES (0, 'Default', 'mlflow-artifacts:/0', 'active', ?, ?)", (t0, t0))
    db.execute("INSERT INTO experiments VALUES (1, 'rl-posttrain', 'mlflow-artifacts:/1', 'active', ?, ?)", (t0, t0))
    db.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
               (rid, run_name, "UNKNOWN", "", "", "ml", "FINISHED" if finished else "RUNNING", t0,
                end if finished else None, None, "", "active", f"mlflow-artifacts:/1/{rid}/artifacts", 1))
    db.executemany("INSERT INTO params VALUES (?,?,?)", [(k, str(v), rid) for k, v in params.items()])
    db.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (run_name, rid))
    rows, latest = [], {}
    for k, pts in mlflow_points(run, vocab).items():
        for ts, s, x in pts:
            nan = not math.isfinite(x)
            rows.append((k, 0.0 if nan else float(x), ts, rid, s, int(nan)))
            latest[k] = (k, 0.0 if nan else float(x), ts, s, int(nan), rid)
    db.executemany("INSERT INTO metrics VALUES (?,?,?,?,?,?)", rows)
    db.executemany("INSERT INTO latest_metrics VALUES (?,?,?,?,?,?)", list(latest.values()))
    db.commit()
    db.close()


# ---------------------------------------------------------------------------------------------------------- Trackio

def w_trackio(run: dict, folder: Path, project: str, run_name: str, vocab: dict, config: dict) -> None:
    """Trackio <project>.db: metrics(id, run_id, timestamp, run_name, step, metrics JSON), configs; HF keys train/…"""
    folder.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(folder / f"{project}.db")
    db.executescript("""
    CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT NOT NULL,
        run_name TEXT NOT NULL, step INTEGER NOT NULL, metrics TEXT NOT NULL);
    CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, run_name TEXT NOT NULL,
        config TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT NOT NULL,
        run_name TEXT NOT NULL, metrics TEXT NOT NULL);
    """)
    rid = hashlib.md5((project + run_name).encode()).hexdigest()[:16]

    def ts(t: float) -> str:
        return datetime.fromtimestamp(t, tz=UTC).isoformat()

    db.execute("INSERT INTO configs (run_id, run_name, config, created_at) VALUES (?,?,?,?)",
               (rid, run_name, json.dumps(config), ts(wall(run, 0))))
    rows = []
    spe = run["steps_per_epoch"]
    for s, v in run["train"]:
        d = {hf_tag(k): (x if math.isfinite(x) else "NaN") for k, x in named(v, vocab).items()}
        d.update({"train/epoch": s / spe, "train/global_step": s})
        rows.append((wall(run, s), s, d))
    for s, v in run["eval"]:
        d = {hf_tag(k): x for k, x in v.items()}
        d.update({"eval/runtime": 120.4, "train/epoch": s / spe, "train/global_step": s})
        rows.append((wall(run, s) + 30, s, d))
    rows.sort(key=lambda r: r[0])
    db.executemany("INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?,?,?,?,?)",
                   [(rid, ts(t), run_name, s, json.dumps(d)) for t, s, d in rows])
    db.commit()
    db.close()


# --------------------------------------------------------------------------------------------- hand-written loops

def w_custom_jsonl(run: dict, folder: Path, vocab: dict, fname: str, config: dict, extra: Callable | None = None,
                   eval_vocab: dict | None = None) -> None:
    lines = []
    evals = dict(run["eval"])
    for s, v in run["train"]:
        d = {"step": s, "time": round(wall(run, s), 1)}
        d.update({k: (round(x, 6) if math.isfinite(x) else None) for k, x in named(v, vocab).items()})
        if extra:
            d.update(extra(s))
        lines.append(json.dumps(d))
        if s in evals:
            e = {"step": s, "time": round(wall(run, s) + 50, 1)}
            e.update({(eval_vocab or {}).get(k, k): x for k, x in evals[s].items()})
            lines.append(json.dumps(e))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / fname).write_text("\n".join(lines) + "\n")
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")


def w_custom_csv(run: dict, folder: Path, vocab: dict, fname: str, total_col: bool = True,
                 eval_vocab: dict | None = None, config: dict | None = None) -> None:
    evals = dict(run["eval"])
    ecols = list((eval_vocab or {}).values())
    cols = ["step"] + (["total_steps"] if total_col else []) + list(vocab.values()) + ecols + ["wall_s"]
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / fname).open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        t0 = wall(run, 0)
        for s, v in run["train"]:
            d = named(v, vocab)
            row = [s] + ([run["planned"]] if total_col else [])
            row += [("nan" if not math.isfinite(d[c]) else f"{d[c]:.6g}") if c in d else "" for c in vocab.values()]
            e = evals.get(s, {})
            row += [f"{e[k]:.4f}" if k in e else "" for k in (eval_vocab or {})]
            row.append(f"{wall(run, s) - t0:.1f}")
            w.writerow(row)
    if config:
        (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")


def w_hand_tb(run: dict, folder: Path, vocab: dict, sub: str, config: str) -> None:
    """A plain PyTorch loop's torch SummaryWriter: its own tag names, one event per step (several tags)."""
    ev = []
    for s, v in run["train"]:
        ev.append((wall(run, s), s, {vocab[k]: x for k, x in v.items() if k in vocab}))
    for s, v in run["eval"]:
        ev.append((wall(run, s) + 45, s, v))
    ev.sort(key=lambda e: (e[0], e[1]))
    d = folder / sub
    tb_file(d / f"events.out.tfevents.{int(ev[0][0] - 30)}.dgx-b200-02.1907.0", ev)
    stub(folder / "config.yaml", config)
    stub(folder / "ckpt" / f"step_{run['reached'] // 1000 * 1000:06d}.pt", "stub")


def w_nemo_tb(run: dict, folder: Path, exp: str, config: str) -> None:
    ev = []
    for s, v in run["train"]:
        d = named(v, NEMO)
        d["timing/train/generation"] = 0.58 * d.get("timing/train/total_step_time", 60.0)
        ev.append((wall(run, s), s, d))
    for s, v in run["eval"]:
        ev.append((wall(run, s) + 35, s, v))
    ev.sort(key=lambda e: (e[0], e[1]))
    d = folder / "logs" / exp / "tensorboard"
    tb_file(d / f"events.out.tfevents.{int(ev[0][0] - 300)}.nemo-h100-0.812.0", ev)
    stub(folder / "logs" / exp / "config.yaml", config)


# ------------------------------------------------------------------------------------------------------- the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable
    seed: int
    steps: tuple[int, int]  # (reached, planned)
    label: dict | tuple  # a holdout_kit label, or ("rollback", onset)
    tags: str
    why: str
    age_min: float = 6.0
    sec: float = 60.0  # wall seconds per optimiser step
    steps_per_epoch: int = 0  # 0: one epoch = the planned steps

    def labels(self) -> dict:
        if isinstance(self.label, tuple):
            _kind, onset = self.label
            lo, hi = window(self.story, self.steps[0], onset)
            return holdout_kit.rollback(lo, hi, onset)
        return self.label

    def case(self) -> Case:
        lab = self.labels()
        why = self.why
        if "rollback_window" in lab:
            why = why.replace("{lo}", str(lab["rollback_window"][0])).replace("{hi}", str(lab["rollback_window"][1]))
        return Case(self.name, self.story.draws, self.write, self.seed, self.steps, lab, self.tags, why)


GSM = "val-core/openai/gsm8k/acc/mean@1"
M500 = "val-core/math500/acc/mean@1"
AMC = "val-core/amc80/acc/mean@1"

# Twin pair A: a GRPO loss that swings and turns negative (healthy) -- TRL checkpoints
A_OK = Story(
    pw((0, .28), (300, .40), (600, .47), (900, .52)), {"eval_reward": (pw((0, .26), (300, .37), (600, .43),
                                                                          (900, .475)), 512)},
    "eval_reward", eval_every=100, P=16, G=8, log_every=10,
    sides={"loss": Sig(pw((0, .04), (500, .02), (700, -.08), (900, -.12)), .16, "add", .05),
           "acc": SAME,
           "entropy": Sig(pw((0, .62), (150, .48), (900, .41)), .04, ar=.03),
           "length": Sig(pw((0, 610), (900, 700)), .05, ar=.03), "maxlen": Sig(const(2048), 0, "exact"),
           "trunc": Sig(const(.012), .3), "clip": Sig(pw((0, .018), (900, .026)), .15),
           "clip_low": Sig(pw((0, .007), (900, .010)), .2), "clip_high": Sig(pw((0, .011), (900, .016)), .2),
           "lr": Sig(warmup_cosine(1e-6, 50, 2400, 1e-7), 0, "exact"), "step_time": Sig(const(41.0), .05)},
    grad=pw((0, .18), (900, .12)))

# Twin pair B: entropy plunge that settles (healthy) -- verl console np2
B_OK = Story(
    pw((0, .42), (40, .52), (150, .64), (360, .74)), {GSM: (pw((0, .45), (40, .53), (200, .67), (360, .72)), 1319)},
    GSM, eval_every=20, eval_at_0=True, P=256, G=5, tau=1.6,
    sides={"entropy": Sig(pw((0, 1.21), (20, .62), (40, .36), (80, .33), (360, .31)), .03, ar=.02),
           "kl": Sig(pw((0, 0.0001), (40, .006), (360, .019)), .06),
           "pg_loss": Sig(const(0.0), .004, "add"), "clip": Sig(const(.0012), .3), "ppo_kl": Sig(const(0.0), 1e-4, "add"),
           "length": Sig(pw((0, 318), (40, 262), (360, 240)), .03), "trunc": Sig(const(.001), .5),
           "lr": Sig(const(1e-6), 0, "exact")},
    grad=pw((0, .9), (40, .35), (360, .25)))

# Twin pair C: grad-norm spikes (healthy: isolated, recover) -- OpenRLHF console
C_SPIKES = {118: 14.0, 119: 3.1, 120: 1.4, 233: 19.0, 234: 2.6, 379: 11.0, 380: 2.2, 381: 1.3,
            456: 16.0, 457: 3.5, 458: 1.5, 588: 12.0, 589: 1.9}
C_OK = Story(
    saturating(.30, .66, 700), {"eval_math500_pass1": (saturating(.31, .60, 760), 500)}, "eval_math500_pass1",
    eval_every=40, P=32, G=8, avg=False,
    sides={"pg_loss": Sig(const(0.0), .02, "add"), "kl": Sig(pw((0, 0.0), (640, .021)), .05),
           "ret": Sig(const(0.0), .01, "add"), "length": Sig(pw((0, 880), (640, 1030)), .04),
           "trunc": Sig(const(.015), .3), "lr": Sig(const(5e-7), 0, "exact"), "clip": Sig(const(.004), .3),
           "ppo_kl": Sig(const(0.0), 2e-5, "add"), "vllm_kl": Sig(const(.0011), .1),
           "group_std": Sig(pw((0, .33), (640, .36)), .05)},
    grad=const(.24), spikes=C_SPIKES)

# Twin pair D: completion lengths shrink early (healthy: rambling shed, settles) -- TRL console dicts
D_OK = Story(
    pw((0, .18), (150, .36), (440, .50)), {"eval_reward": (pw((0, .20), (150, .33), (440, .45)), 300)},
    "eval_reward", eval_every=40, P=16, G=8, log_every=10,
    sides={"length": Sig(pw((0, 1500), (150, 560), (440, 520)), .04, ar=.02), "maxlen": Sig(const(2048), 0, "exact"),
           "trunc": Sig(pw((0, .31), (150, .02), (440, .01)), .15),
           "acc": SAME, "fmt": Sig(pw((0, .62), (100, .97), (440, .99)), .01),
           "kl": Sig(pw((0, 0.0), (150, .012), (440, .03)), .05), "loss": Sig(pw((0, 0.0), (440, .001)), .004, "add"),
           "lr": Sig(warmup_cosine(2e-6, 20, 1200), 0, "exact"), "clip": Sig(const(0.0), 0, "exact")},
    grad=pw((0, .40), (150, .22), (440, .2)), fmt_w=0.25)

# Twin pair E: reward dip right after the lr warm-up ends (healthy: recovers) -- MLflow file store
E_OK = Story(
    pw((0, .35), (100, .45), (112, .39), (125, .38), (170, .465), (230, .49)),
    {"eval_reward": (pw((0, .33), (100, .42), (125, .40), (170, .44), (230, .465)), 400)}, "eval_reward",
    eval_every=50, eval_at_0=True, P=32, G=8, log_every=5,
    sides={"lr": Sig(warmup_cosine(1e-6, 100, 1500), 0, "exact"),
           "entropy": Sig(pw((0, .41), (100, .39), (118, .47), (170, .40), (230, .38)), .03),
           "length": Sig(pw((0, 540), (230, 580)), .04), "loss": Sig(const(0.0), .006, "add"),
           "acc": SAME},
    grad=pw((0, .3), (100, .28), (115, .55), (160, .3), (230, .27)))

# F: curriculum with a logged stage column (healthy) -- custom JSONL
F_REWARD = staged((0, pw((0, .22), (600, .74))), (600, pw((600, .36), (1200, .61))),
                  (1200, pw((1200, .24), (1450, .37))))
F_OK = Story(
    F_REWARD, {"eval/heldout_mixed_acc": (pw((0, .18), (600, .31), (1200, .41), (1450, .45)), 400)},
    "eval/heldout_mixed_acc", eval_every=50, eval_at_0=False, P=32, G=8, avg=False,
    sides={"kl": Sig(pw((0, 0.0), (600, .018), (1450, .034)), .06), "entropy": Sig(pw((0, .55), (1450, .43)), .04),
           "length": Sig(staged((0, pw((0, 310), (600, 350))), (600, pw((600, 520), (1200, 560))),
                                (1200, pw((1200, 780), (1450, 820)))), .04),
           "lr": Sig(const(1e-6), 0, "exact"), "loss": Sig(const(0.0), .01, "add")},
    grad=const(.35))

# Twin pair G: a resume whose superseded pre-crash steps logged low values (healthy) -- HF TensorBoard + ckpts
G_REWARD = saturating(.30, .68, 900)
G_EVAL = saturating(.28, .62, 950)
G_OK = Story(
    G_REWARD, {"eval_reward": (G_EVAL, 500)}, "eval_reward", eval_every=100, P=16, G=8, log_every=10,
    sides={"kl": Sig(pw((0, 0.0), (600, .03), (1720, .045)), .05), "entropy": Sig(pw((0, .5), (1720, .36)), .04),
           "length": Sig(const(690), .04), "lr": Sig(const(1e-6), 0, "exact"), "loss": Sig(const(.0016), .004, "add")},
    grad=const(.2),
    stale=(1401, 1530, pw((0, .60), (1400, .60), (1420, .52), (1530, .40)), pw((0, .54), (1400, .54), (1500, .44))))

# Twin pair H: a small eval wobbling / drifting within its noise against a big one (healthy) -- verl JSONL
H_OK = Story(
    pw((0, .38), (520, .60)), {M500: (pw((0, .42), (520, .55)), 500), AMC: (pw((0, .30), (520, .28)), 80)}, M500,
    eval_every=20, eval_at_0=True, P=128, G=8,
    sides={"kl": Sig(pw((0, 0.0), (520, .012)), .05), "entropy": Sig(pw((0, .48), (520, .39)), .03),
           "length": Sig(pw((0, 1450), (520, 1700)), .03), "trunc": Sig(const(.02), .2),
           "pg_loss": Sig(const(0.0), .003, "add"), "clip": Sig(const(.0015), .3), "lr": Sig(const(1e-6), 0, "exact")},
    grad=const(.28))

# I: a long hand-written loop, every step, heavy-tailed grad norm and skipped non-finite steps (healthy) -- TB
I_OK = Story(
    lambda s: .10 + .245 * math.log1p(s / 1500) / math.log1p(16000 / 1500) + .01 * s / 16000,
    {"eval/pass_at_1": (lambda s: .09 + .24 * math.log1p(s / 1700) / math.log1p(16000 / 1700), 500)},
    "eval/pass_at_1", eval_every=500, P=16, G=4, tau=1.8,
    sides={"kl": Sig(lambda s: .004 + .03 * s / 16000, .06, ar=.04), "entropy": Sig(lambda s: .52 - .1 * s / 16000, .03),
           "length": Sig(lambda s: 420 + 120 * s / 16000, .06), "lr": Sig(const(3e-7), 0, "exact"),
           "loss": Sig(const(0.0), .02, "add")},
    grad=const(.7), grad_tail=.03, nan_steps=(1733, 4410, 4411, 8297, 10052, 12906, 14118, 15503))

# J: a long OpenRLHF run, train-only headline, exported from W&B panels (healthy)
J_OK = Story(
    lambda s: .36 + .20 * (1 - math.exp(-s / 3000)) + .12 * s / 9000, {}, TRAIN, P=64, G=8, avg=False,
    sides={"kl": Sig(lambda s: .06 * (1 - math.exp(-s / 2500)), .05, ar=.03), "length": Sig(const(410), .04),
           "lr": Sig(const(5e-7), 0, "exact"), "group_std": Sig(const(.31), .05)},
    grad=const(.3), grad_tail=.025)

# Twin pair K: KL climbs then levels well inside budget (healthy) -- Trackio, TRL RLOO
K_OK = Story(
    pw((0, .35), (300, .50), (600, .575), (900, .62)), {"eval_reward": (pw((0, .33), (300, .45), (600, .52),
                                                                            (900, .57)), 500)},
    "eval_reward", eval_every=100, P=32, G=4, log_every=10,
    sides={"kl": Sig(pw((0, 0.001), (150, .07), (300, .11), (600, .118), (900, .115)), .05, ar=.04),
           "entropy": Sig(pw((0, .47), (300, .38), (900, .36)), .03), "length": Sig(const(480), .04),
           "acc": SAME, "zero_std": Sig(const(.31), .1),
           "clip": Sig(const(0.0), 0, "exact"), "lr": Sig(const(1e-6), 0, "exact"), "loss": Sig(const(.003), .004, "add")},
    grad=const(.45))

# L: DPO whose train loss dives and implicit rewards both go negative (healthy) -- TRL DPO checkpoints
L_OK = Story(
    None, {"eval_rewards/accuracies": (pw((0, .50), (200, .64), (400, .68), (600, .70), (700, .705)), 1000)},
    "eval_rewards/accuracies", eval_every=200, log_every=10,
    sides={"loss": Sig(pw((0, .693), (200, .45), (500, .31), (520, .24), (700, .18)), .05),
           "pair_acc": Sig(pw((0, .5), (200, .70), (500, .76), (520, .82), (700, .87)), 0, "binom", n=640),
           "chosen": Sig(pw((0, 0.0), (700, -1.25)), .08, "add"), "rejected": Sig(pw((0, 0.0), (700, -4.6)), .15, "add"),
           "margins": Sig(pw((0, 0.0), (700, 3.35)), .12, "add"),
           "logps_c": Sig(pw((0, -312), (700, -347)), 3.0, "add"), "logps_r": Sig(pw((0, -335), (700, -392)), 3.0, "add"),
           "logits_c": Sig(const(-1.32), .03, "add"), "logits_r": Sig(const(-1.29), .03, "add"),
           "lr": Sig(warmup_cosine(5e-7, 50, 1500), 0, "exact")},
    grad=pw((0, 14.0), (700, 22.0)), grad_tail=.015)
L_EVAL_EXTRA = {"eval_loss": pw((0, .693), (200, .62), (400, .595), (600, .58), (700, .575))}

# Twin pair M: reward and a 1000-problem eval still creeping up (healthy) -- MLflow SQL
M_OK = Story(
    pw((0, .30), (800, .58), (1000, .61), (2000, .655)),
    {"eval_reward": (pw((0, .28), (800, .53), (1000, .555), (2000, .595)), 1000)}, "eval_reward", eval_every=200,
    P=32, G=8, log_every=10,
    sides={"kl": Sig(pw((0, 0.0), (800, .02), (2000, .031)), .05), "entropy": Sig(pw((0, .5), (800, .38), (2000, .35)), .03),
           "length": Sig(const(520), .04), "lr": Sig(const(1e-6), 0, "exact"), "loss": Sig(const(.001), .004, "add"),
           "acc": SAME},
    grad=const(.22), nan_steps=(1370,))

# N: PPO-style multi-epoch updates keep pg_clipfrac at 0.16 (healthy) -- verl TensorBoard
N_OK = Story(
    pw((0, .25), (480, .49)), {"val-core/math/acc/mean@1": (pw((0, .26), (480, .47)), 500)},
    "val-core/math/acc/mean@1", eval_every=30, eval_at_0=True, P=64, G=8,
    sides={"clip": Sig(pw((0, .05), (30, .15), (480, .162)), .08), "ppo_kl": Sig(const(.0031), .15),
           "kl": Sig(pw((0, 0.0), (480, .028)), .05), "entropy": Sig(pw((0, .52), (480, .44)), .03),
           "pg_loss": Sig(const(-.004), .01, "add"), "length": Sig(pw((0, 720), (480, 840)), .03),
           "trunc": Sig(const(.01), .3), "lr": Sig(const(1e-6), 0, "exact")},
    grad=const(.5))

# O: grad norm decays tenfold as the policy sharpens while mixed groups remain (healthy) -- NeMo-RL TB
O_OK = Story(
    pw((0, .31), (250, .47), (700, .60)), {"validation/accuracy": (pw((0, .33), (250, .45), (700, .56)), 500)},
    "validation/accuracy", eval_every=25, eval_at_0=False, P=64, G=16, tau=1.3, first=1,
    sides={"kl": Sig(pw((0, 0.0), (700, .017)), .05), "entropy": Sig(pw((0, .55), (700, .29)), .03),
           "length": Sig(const(950), .03), "trunc": Sig(const(.012), .3), "tmpe": Sig(const(1.009), .001),
           "lr": Sig(const(1e-6), 0, "exact"), "loss": Sig(const(0.0), .01, "add"), "step_time": Sig(const(96.0), .05)},
    grad=pw((0, .45), (200, .14), (700, .05)))

# ---- stop / converged
S_FLAT = Story(
    pw((0, .38), (700, .71), (1300, .712)), {GSM: (pw((0, .40), (700, .66), (1300, .662)), 1319)}, GSM,
    eval_every=50, eval_at_0=True, P=128, G=8,
    sides={"entropy": Sig(pw((0, .55), (700, .22), (1300, .20)), .03), "kl": Sig(pw((0, 0.0), (700, .03), (1300, .036)), .05),
           "length": Sig(pw((0, 290), (700, 210), (1300, 205)), .03), "trunc": Sig(const(.001), .5),
           "pg_loss": Sig(const(0.0), .003, "add"), "clip": Sig(const(.0014), .3), "lr": Sig(const(1e-6), 0, "exact")},
    grad=pw((0, .3), (700, .16), (1300, .15)))

S_CONV = Story(
    pw((0, .30), (700, .55), (1150, .62), (1880, .622)),
    {"eval_reward": (pw((0, .29), (700, .52), (1150, .58), (1880, .581)), 500)}, "eval_reward", eval_every=100,
    P=16, G=8, log_every=10,
    sides={"lr": Sig(warmup_cosine(1e-6, 60, 2000), 0, "exact"), "entropy": Sig(pw((0, .5), (1150, .33), (1880, .32)), .03),
           "length": Sig(const(610), .04), "trunc": Sig(const(.01), .3), "zero_std": Sig(pw((0, .35), (1880, .52)), .06),
           "acc": SAME, "loss": Sig(const(0.0), .01, "add"),
           "clip": Sig(const(0.0), 0, "exact")},
    grad=pw((0, .25), (1880, .12)))

S_SAT = Story(
    pw((0, .71), (400, .965), (820, .972)), {"eval_gsm8k_pass1": (pw((0, .72), (400, .91), (820, .912)), 1319)},
    "eval_gsm8k_pass1", eval_every=20, eval_at_0=False, P=64, G=8, tau=1.6, avg=False,
    sides={"group_std": Sig(pw((0, .31), (400, .05), (820, .03)), .1), "kl": Sig(pw((0, 0.0), (400, .02), (820, .026)), .05),
           "length": Sig(pw((0, 300), (820, 255)), .03), "lr": Sig(const(5e-7), 0, "exact"),
           "pg_loss": Sig(const(0.0), .004, "add"), "trunc": Sig(const(.0), 0, "exact")},
    grad=pw((0, .3), (400, .07), (820, .05)))

S_FIN = Story(
    pw((0, .33), (900, .55), (1500, .553)), {"eval_reward": (pw((0, .31), (900, .47), (1500, .471)), 800)},
    "eval_reward", eval_every=100, P=32, G=8, log_every=10,
    sides={"lr": Sig(warmup_cosine(1e-6, 50, 1500, 1e-7), 0, "exact"), "entropy": Sig(pw((0, .5), (900, .34), (1500, .33)), .03),
           "length": Sig(const(700), .04), "loss": Sig(const(0.0), .01, "add"),
           "acc": SAME},
    grad=const(.2))

S_KL = Story(
    pw((0, .30), (700, .52), (1400, .522)), {"eval_reward": (pw((0, .29), (700, .50), (1400, .497)), 600)},
    "eval_reward", eval_every=100, P=32, G=8, log_every=10,
    sides={"kl": Sig(pw((0, 0.0), (700, .03), (1400, .26)), .05, ar=.02), "entropy": Sig(pw((0, .5), (700, .37), (1400, .31)), .03)},
    grad=const(.3))

S_TRAINONLY = Story(
    pw((0, .40), (600, .66), (1500, .712)), {"heldout_acc": (pw((0, .30), (600, .44), (1500, .441)), 800)},
    "heldout_acc", eval_every=100, P=32, G=8, avg=False,
    sides={"kl": Sig(pw((0, 0.0), (600, .02), (1500, .05)), .05), "entropy": Sig(pw((0, .45), (600, .31), (1500, .24)), .03),
           "length": Sig(pw((0, 350), (1500, 330)), .04), "lr": Sig(const(1e-6), 0, "exact"),
           "loss": Sig(const(0.0), .02, "add")},
    grad=const(.25))

S_DPO = Story(
    None, {"eval_rewards/accuracies": (pw((0, .50), (300, .72), (700, .78), (1600, .782)), 1500)},
    "eval_rewards/accuracies", eval_every=100, log_every=10,
    sides={"loss": Sig(pw((0, .693), (300, .42), (800, .22), (1600, .09)), .06),
           "pair_acc": Sig(pw((0, .5), (300, .78), (800, .91), (1600, .97)), 0, "binom", n=640),
           "chosen": Sig(pw((0, 0.0), (1600, -.9)), .08, "add"), "rejected": Sig(pw((0, 0.0), (1600, -6.8)), .2, "add"),
           "margins": Sig(pw((0, 0.0), (1600, 5.9)), .2, "add"),
           "logps_c": Sig(pw((0, -280), (1600, -296)), 3.0, "add"), "logps_r": Sig(pw((0, -301), (1600, -362)), 3.0, "add"),
           "logits_c": Sig(const(-1.1), .03, "add"), "logits_r": Sig(const(-1.08), .03, "add"),
           "lr": Sig(warmup_cosine(5e-7, 80, 1600), 0, "exact")},
    grad=pw((0, 12.0), (1600, 8.0)), grad_tail=.015)
S_DPO_EVAL_EXTRA = {"eval_loss": pw((0, .693), (300, .56), (700, .52), (1600, .525))}

# ---- rollback twins
R_KL = Story(
    pw((0, .35), (600, .55), (1100, .63)), {"eval_reward": (pw((0, .33), (550, .515), (650, .52), (1100, .44)), 500)},
    "eval_reward", eval_every=50, P=32, G=4, log_every=10,
    sides={"kl": Sig(pw((0, 0.001), (300, .08), (600, .16), (800, .26), (1100, .48)), .05, ar=.03),
           "entropy": Sig(pw((0, .47), (600, .36), (1100, .25)), .03), "length": Sig(pw((0, 480), (600, 470), (1100, 350)), .04),
           "acc": SAME, "zero_std": Sig(pw((0, .3), (1100, .45)), .1),
           "clip": Sig(const(0.0), 0, "exact"), "lr": Sig(const(1e-6), 0, "exact"), "loss": Sig(pw((0, .003), (1100, .02)), .004, "add")},
    grad=pw((0, .45), (600, .5), (1100, .8)))

R_SPIKES = dict(C_SPIKES)
R_SPIKES.update({702: 9.0, 703: 4.0, 704: 3.1, 721: 13.0, 722: 6.0, 723: 4.2, 739: 8.0,
                                   740: 5.5, 752: 17.0, 753: 7.0, 768: 11.0, 769: 6.4, 781: 21.0, 782: 9.0,
                                   797: 12.0, 811: 25.0, 812: 8.0, 826: 14.0, 840: 19.0, 853: 30.0,
                                   866: 16.0, 880: 22.0, 893: 27.0, 906: 18.0, 919: 33.0, 931: 24.0})
R_GRAD = Story(
    pw((0, .30), (700, .56), (940, .43)),
    {"eval_math500_pass1": (pw((0, .31), (700, .50), (940, .41)), 500)}, "eval_math500_pass1",
    eval_every=40, P=32, G=8, avg=False,
    sides={"pg_loss": Sig(const(0.0), .02, "add"), "kl": Sig(pw((0, 0.0), (700, .022), (940, .09)), .05),
           "ret": Sig(const(0.0), .01, "add"), "length": Sig(pw((0, 880), (700, 1040), (940, 1400)), .04),
           "trunc": Sig(pw((0, .015), (700, .02), (940, .09)), .2), "lr": Sig(const(5e-7), 0, "exact"),
           "clip": Sig(pw((0, .004), (700, .005), (940, .03)), .3), "ppo_kl": Sig(const(0.0), 2e-5, "add"),
           "vllm_kl": Sig(const(.0011), .1), "group_std": Sig(pw((0, .33), (700, .36), (940, .38)), .05)},
    grad=pw((0, .24), (700, .25), (940, .9)), spikes=R_SPIKES)

R_DIP = Story(
    pw((0, .35), (100, .45), (140, .38), (300, .30)),
    {"eval_reward": (pw((0, .33), (100, .42), (150, .37), (300, .30)), 400)}, "eval_reward",
    eval_every=50, eval_at_0=True, P=32, G=8, log_every=5,
    sides={"lr": Sig(warmup_cosine(5e-6, 100, 1500), 0, "exact"),
           "entropy": Sig(pw((0, .41), (100, .40), (130, .55), (300, .88)), .03),
           "length": Sig(pw((0, 540), (100, 560), (300, 820)), .04), "loss": Sig(const(0.0), .01, "add"),
           "acc": SAME},
    grad=pw((0, .3), (100, .3), (120, .8), (300, 1.1)))

R_M500 = Story(
    pw((0, .38), (440, .60), (760, .62)),
    {M500: (pw((0, .42), (400, .55), (440, .552), (760, .47)), 500), AMC: (pw((0, .30), (440, .31), (760, .28)), 80)},
    M500, eval_every=20, eval_at_0=True, P=128, G=8,
    sides={"kl": Sig(pw((0, 0.0), (440, .011), (760, .05)), .05), "entropy": Sig(pw((0, .48), (440, .39), (760, .13)), .03),
           "length": Sig(pw((0, 1450), (440, 1650), (760, 1500)), .03), "trunc": Sig(const(.02), .2),
           "pg_loss": Sig(const(0.0), .003, "add"), "clip": Sig(const(.0015), .3), "lr": Sig(const(1e-6), 0, "exact")},
    grad=const(.28))

R_LEN = Story(
    pw((0, .18), (150, .36), (330, .47), (700, .48)),
    {"eval_reward": (pw((0, .20), (150, .33), (330, .44), (700, .33)), 300)}, "eval_reward", eval_every=40,
    P=16, G=8, log_every=10,
    sides={"length": Sig(pw((0, 1500), (150, 560), (330, 500), (700, 190)), .04, ar=.02), "maxlen": Sig(pw((0, 2048), (330, 1900), (700, 640)), .03),
           "trunc": Sig(pw((0, .31), (150, .02), (700, .0)), .15),
           "acc": SAME, "fmt": Sig(pw((0, .62), (100, .97), (700, 1.0)), .005),
           "kl": Sig(pw((0, 0.0), (150, .012), (330, .03), (700, .14)), .05), "loss": Sig(const(0.0), .004, "add"),
           "lr": Sig(warmup_cosine(2e-6, 20, 1200), 0, "exact"), "clip": Sig(const(0.0), 0, "exact")},
    grad=pw((0, .40), (150, .22), (700, .2)), fmt_w=0.25)

R_RESUME_REWARD = pw((0, .30), (1000, .60), (1250, .62), (1300, .62), (1720, .50))
R_RESUME_EVAL = pw((0, .28), (1000, .56), (1250, .58), (1300, .58), (1720, .47))
R_RESUME = Story(
    R_RESUME_REWARD, {"eval_reward": (R_RESUME_EVAL, 500)}, "eval_reward",
    eval_every=100, P=16, G=8, log_every=10,
    sides={"kl": Sig(pw((0, 0.0), (600, .03), (1300, .045), (1720, .16)), .05),
           "entropy": Sig(pw((0, .5), (1300, .37), (1720, .62)), .04), "length": Sig(pw((0, 690), (1300, 700), (1720, 1150)), .04),
           "lr": Sig(const(1e-6), 0, "exact"), "loss": Sig(const(.0016), .004, "add")},
    grad=pw((0, .2), (1300, .2), (1720, .55)),
    stale=(1401, 1530, R_RESUME_REWARD, R_RESUME_EVAL))

R_ERODE = Story(
    pw((0, .30), (800, .58), (1200, .61), (2200, .63)),
    {"eval_reward": (pw((0, .28), (800, .56), (1200, .585), (2200, .535)), 1000)}, "eval_reward", eval_every=200,
    P=32, G=8, log_every=10,
    sides={"kl": Sig(pw((0, 0.0), (800, .02), (1200, .028), (2200, .07)), .05),
           "entropy": Sig(pw((0, .5), (800, .38), (1200, .35), (2200, .26)), .03), "length": Sig(pw((0, 520), (1200, 520), (2200, 430)), .04),
           "lr": Sig(const(1e-6), 0, "exact"), "loss": Sig(const(.001), .004, "add"),
           "acc": SAME},
    grad=const(.22), nan_steps=(1370, 1960))


def add_eval_extra(extra: dict[str, Level]) -> Callable:
    """Wrap a writer so that eval rows also carry deterministic-looking extra eval keys (eval_loss of DPO)."""
    def wrap(w: Callable) -> Callable:
        def inner(run: dict, folder: Path) -> None:
            rng = np.random.default_rng(len(run["eval"]))
            for s, row in run["eval"]:
                for k, lv in extra.items():
                    row[k] = lv(s) * math.exp(.01 * rng.normal())
            w(run, folder)
        return inner
    return wrap


TRL_PARAMS = dict(learning_rate="1e-06", per_device_train_batch_size=8, gradient_accumulation_steps=4,
                  num_generations=8, beta=0.0, logging_steps=10, save_steps=200, eval_steps=200, warmup_ratio=0.0,
                  lr_scheduler_type="constant", report_to="['mlflow']", bf16=True)

SPECS: list[Spec] = [
    # ============================================================================================== healthy (15)
    Spec("ok-grpo-loss-turns-negative-swings-0.4-clip-ratio-nonzero-num-iter-2-eval-rising-trl-ckpts-live-900-of-2400",
         A_OK, writer(w_trl_ckpts)(TRL_GRPO, 100, 3, 10, 1200, 100, 16 * 8), 3701, (900, 2400), HEALTHY,
         "healthy trl trainer-state checkpoints grpo-loss-negative clip-ratio",
         "TRL 0.26 GRPO (beta=0, num_iterations=2, loss_type dapo), checkpoint-N/trainer_state.json every 100 steps, "
         "keep 3, at step 900 of 2400, written minutes ago. The logged loss swings between about -0.37 and +0.37 "
         "from one log to the next and its level has drifted from +0.02 to below zero (about -0.1) since step 600; clip_ratio/"
         "region_mean is ~0.02 (not 0, because every generation batch is reused for two updates). Neither is a "
         "quality signal: the GRPO surrogate is an advantage-weighted ratio that hovers around zero and turns negative "
         "whenever the batch's positive-advantage tokens are short. What matters is rising: train reward 0.28 -> 0.52 "
         "and eval_reward on 512 problems every 100 steps 0.30 (step 100) -> 0.475 (sd 0.022; +0.045 over the last 300 steps), "
         "entropy steady at ~0.41, grad norm ~0.15. Still improving with 60% of the budget left: continue.",
         age_min=5, sec=41, steps_per_epoch=1200),
    Spec("ok-entropy-plunges-1.2-to-0.36-in-40-steps-then-holds-0.31-gsm8k-val-rising-verl-console-np2-live-360-of-1000",
         B_OK, writer(w_verl_console)(True, 0.001, "main_ppo.log", "verl_grpo_gsm8k", "qwen25_3b_grpo_n5", 60), 3702,
         (360, 1000), HEALTHY, "healthy verl console numpy2 entropy-early-drop",
         "verl GRPO (Qwen2.5-3B, n=5, kl_loss 0.001) console log with NumPy-2 values, live at step 360 of 1000. "
         "actor/entropy falls from 1.21 to 0.36 in the first 40 steps (the instruct model drops its hedging "
         "preamble; response_length/mean 318 -> 262 at the same time) and then settles: 0.33 at 80, 0.31 at 360, no "
         "further slide. Grad norm relaxes 0.9 -> 0.25 over the same stretch, KL stays tiny (0.019). The fast early "
         "drop looks like entropy collapse but it levelled off 300 steps ago while critic/score/mean keeps rising "
         "0.42 -> 0.74 and GSM8K val acc (N=1319, every 20, sd 0.013) 0.45 -> 0.72, still +0.05 over the last 160 "
         "steps. Healthy and improving: continue.", age_min=4, sec=52, steps_per_epoch=58),
    Spec("ok-grad-norm-spikes-x11-to-x19-five-times-each-back-to-0.24-in-3-steps-reward-unbroken-openrlhf-console-live-640-of-1600",
         C_OK, writer(w_openrlhf_console)("train_grpo_math.log"), 3703, (640, 1600), HEALTHY,
         "healthy openrlhf console grad-norm-spikes heavy-tail",
         "OpenRLHF 0.9 GRPO console log (`✨ Global step N` dicts every step, eval every 40 on MATH-500), live at "
         "640 of 1600. actor_grad_norm sits at ~0.24 with a heavy tail, and five times (steps 118, 233, 379, 456, "
         "588) it jumps to 1.4-5.9 (6-25x the median); each time it is back under 2x within two or three steps, the spikes do not get more "
         "frequent (one per ~120 steps) and the baseline does not ratchet up. Reward does not react: it rises "
         "0.30 -> 0.52 (P=32 x 8, one step per point, sd ~0.045) and eval_math500_pass1 (N=500, sd 0.022) 0.33 "
         "(step 40) -> 0.475, +0.04 over the last 200 steps. KL small (0.02), truncation 1.5%. Occasional clipped spikes are normal: continue.",
         age_min=3, sec=38),
    Spec("ok-lengths-shed-1500-to-560-tokens-truncation-31pct-to-1pct-then-steady-eval-rising-trl-console-dicts-live-440-of-1200",
         D_OK, writer(w_trl_console)(TRL_GRPO, 600, "nohup.out"), 7704, (440, 1200), HEALTHY,
         "healthy trl console-dicts length-shrink truncation",
         "TRL 0.19 GRPO stdout (printed log dicts between tqdm bars), live at 440 of 1200, logging every 10 steps, "
         "eval every 40 on 300 problems. completions/mean_length falls 1500 -> 560 tokens in the first 150 steps "
         "and completions/clipped_ratio 0.31 -> 0.02: the SFT model rambled into the 2048 cap and truncated answers "
         "scored 0, so dropping the ramble is itself a gain. Since step 150 length is steady at ~520-560 tokens, "
         "format reward saturated at 0.99 and accuracy reward keeps rising 0.36 -> 0.50 (total reward, format "
         "weighted 0.25, 0.33 -> 0.75). eval_reward 0.24 (step 40) -> 0.45 (sd 0.029), its level still rising. Not a length collapse: lengths settled while accuracy "
         "rose. Continue.", age_min=7, sec=33, steps_per_epoch=600),
    Spec("ok-reward-dips-0.07-right-after-warmup-ends-at-100-back-above-by-170-mlflow-files-live-230-of-1500",
         E_OK, writer(w_mlflow_files)({**TRL_GRPO}, dict(TRL_PARAMS, warmup_steps=100, lr_scheduler_type="cosine",
                                                          logging_steps=5, max_steps=1500, eval_steps=50,
                                                          save_steps=100, eval_on_start=True), "grpo-qwen3-4b-warmup100"),
         4705, (230, 1500), HEALTHY, "healthy mlflow file-store warmup-dip early",
         "HF/TRL GRPO logging raw keys to an MLflow file store (logging every 5 steps, eval every 50 on 400 "
         "problems), live at 230 of 1500. The linear warm-up ends at step 100 at lr 1e-6; right after, reward falls "
         "0.45 -> 0.38 for about 25 steps while entropy bumps 0.39 -> 0.47 and grad norm doubles to ~0.55, then "
         "everything comes back: reward 0.465 by 170 and 0.49 at 230 (new highs), entropy back to ~0.39, grad norm "
         "~0.28. The eval barely registers it (0.42 at 100, 0.42 at 150, 0.45 at 200; sd 0.025). A short dip at "
         "the end of warm-up that recovered to new highs early in the run: continue.", age_min=4, sec=45),
    Spec("ok-curriculum-stage-column-resets-reward-at-600-and-1200-heldout-mixed-set-climbs-custom-jsonl-live-1450-of-2400",
         F_OK, writer(w_custom_jsonl)({"reward": "reward/mean", "zero_std": "reward/frac_all_same", "kl": "kl",
                                        "entropy": "entropy", "length": "gen_len", "lr": "lr", "grad_norm": "grad_norm",
                                        "loss": "loss"}, "metrics.jsonl",
                                       {"total_steps": 2400, "batch_prompts": 32, "group_size": 8,
                                        "curriculum": [{"stage": 1, "difficulty": "easy", "until_step": 600},
                                                       {"stage": 2, "difficulty": "medium", "until_step": 1200},
                                                       {"stage": 3, "difficulty": "hard", "until_step": 2400}],
                                        "eval": {"set": "heldout_mixed", "n": 400, "every": 50}},
                                       lambda s: {"stage": 1 if s < 600 else 2 if s < 1200 else 3,
                                                  "difficulty": "easy" if s < 600 else "medium" if s < 1200 else "hard"}),
         3706, (1450, 2400), HEALTHY, "healthy custom jsonl curriculum stage-column",
         "A hand-written GRPO loop writing metrics.jsonl (one line per step with `stage` and `difficulty` columns; "
         "config.json lists stage boundaries at 600 and 1200 of 2400), live at 1450. The train reward climbs "
         "0.22 -> 0.74 on easy problems, drops to ~0.36 at step 600 when the medium stage starts, climbs to 0.61, "
         "drops to ~0.24 at 1200 for the hard stage and is at 0.37 and climbing now. Lengths step up at each stage "
         "(~330 -> ~540 -> ~800 tokens). The fixed held-out mixed set (N=400, every 50, sd 0.025) rises through both "
         "resets: 0.18 -> 0.31 (600) -> 0.41 (1200) -> 0.45. Planned resets, improving model: continue.",
         age_min=9, sec=24),
    Spec("ok-resumed-from-1400-pre-crash-steps-1401-1530-logged-low-on-bad-node-superseded-hf-tb-two-dirs-live-1720-of-3000",
         G_OK, writer(w_hf_tb)(TRL_GRPO, 1500, 1400, "gpu-node17",
                               dict(save_every=100, keep=2, logging_steps=10, eval_every=100, completions=16 * 8)),
         3707, (1720, 3000), HEALTHY, "healthy hf tensorboard resume overlap stale-steps trl checkpoints",
         "TRL GRPO with report_to tensorboard: output_dir holds checkpoint-1600/1700 and two runs/ folders. The first "
         "launch ran to step 1530, but from ~1405 one GPU had ECC errors and produced garbage rollouts: its event "
         "file shows reward 0.60 -> 0.40 and an eval of ~0.44 at 1500 before the NCCL crash. The relaunch "
         "resumed from checkpoint-1400 in a new runs/ folder and logged steps 1410-1720 again (later wall times), "
         "healthy: reward 0.60 -> 0.624, eval_reward (N=500, sd 0.022) 0.54 at 1400, then 0.55, 0.557, 0.563 at "
         "1500-1700 on a saturating curve; the newest checkpoint's trainer_state has only the resumed history. The drop belongs to superseded steps "
         "(older wall time); the live run is slowly improving at 1720 of 3000: continue.", age_min=6, sec=48,
         steps_per_epoch=1500),
    Spec("ok-amc-80-problem-val-drifts-0.30-to-0.28-inside-its-0.05-sd-math500-val-rising-verl-jsonl-live-520-of-1000",
         H_OK, writer(w_verl_jsonl)("verl_math", "qwen3_8b_grpo_dual_val", 0.001, 100), 3708, (520, 1000), HEALTHY,
         "healthy verl jsonl two-evals small-eval-noise",
         "verl GRPO with the file logger (JSONL), val at step 0 and every 20, live at 520 of 1000. Two validation "
         "sets: MATH-500 (N=500, sd 0.022) rises 0.42 -> 0.55; AMC-80 (N=80, sd ~0.05) jumps by up to +-0.1 "
         "between evals and its level eases from 0.30 to 0.28, a 0.4-sd drift that an 80-problem set cannot "
         "resolve. A reader tracking the small set sees it falling while the large one climbs; the large one and the "
         "train score (0.38 -> 0.60) carry the signal. KL 0.012, entropy 0.48 -> 0.39, lengths 1450 -> 1700 with 2% "
         "truncation. Improving: continue.", age_min=5, sec=95, steps_per_epoch=100),
    Spec("ok-hand-loop-16k-steps-every-step-heavy-tail-grad-eight-nan-skips-log-slow-climb-tb-live-16000-of-30000",
         I_OK, writer(w_hand_tb)({"reward": "reward/mean", "zero_std": "reward/frac_flat_groups", "kl": "kl",
                                  "entropy": "entropy", "length": "gen_tokens", "lr": "lr", "grad_norm": "grad_norm",
                                  "loss": "loss"}, "tb/qwen05b-countdown-g4",
                                 "run_name: qwen05b-countdown-g4\ntotal_steps: 30000\nprompts_per_step: 16\n"
                                 "group_size: 4\nlr: 3.0e-7\nclip_grad_norm: 1.0\neval_every: 500\neval_n: 500\n"
                                 "skip_nonfinite_updates: true\n"),
         7709, (16000, 30000), HEALTHY, "healthy tensorboard hand-loop long nan heavy-tail",
         "A plain PyTorch GRPO loop (torch SummaryWriter, its own tag names) logging every step: 16000 of 30000 "
         "steps, written a few minutes ago. Only 16 prompts x 4 rollouts per step, so reward/mean jumps by +-0.1 "
         "step to step; grad_norm is heavy-tailed (~3% of steps 2-20x the ~0.7 median) and eight steps logged NaN "
         "loss and grad norm (the loop skips non-finite updates and carries on). The level climbs like a log curve: "
         "0.10 -> 0.19 by 2000, 0.26 by 6000, 0.33 by 12000, 0.355 at 16000 (+0.03 over the last 4000 steps, "
         "clear in a 4000-point regression though each step is +-0.06); eval/pass_at_1 every 500 on 500 problems "
         "(sd 0.021) 0.12 (500) -> 0.33, +0.026 over the last 4000 steps; on a log curve the remaining 14000 "
         "steps should add another ~0.05. Slow but steady, "
         "half the budget left: continue.", age_min=4, sec=7.5),
    Spec("ok-openrlhf-9000-steps-no-eval-set-train-reward-0.36-to-0.67-still-rising-wandb-panel-csvs-live-9000-of-12000",
         J_OK, writer(w_wandb_csv)("grpo-7b-mixmath-s3", {"reward": "train/reward", "kl": "train/kl",
                                                           "grad_norm": "train/actor_grad_norm",
                                                           "length": "train/response_length"},
                                   "train/global_step", 1000),
         3710, (9000, 12000), HEALTHY, "healthy wandb csv-export long downsampled train-only",
         "OpenRLHF GRPO exported from four W&B panels (x axis train/global_step, 9000 steps bucketed to 1000 rows "
         "with __MIN/__MAX bands), no held-out eval configured, live at 9000 of 12000 (run_state from the export "
         "time). Train reward (64 prompts x 8, one step per point with sd ~0.035, bucket mean of 9 with sd ~0.012) "
         "climbs 0.36 -> 0.53 by 3000, 0.63 by 7000 and 0.67 at 9000: +0.036 over the last 2000 steps, steady "
         "over ~220 buckets. "
         "KL levels at ~0.06, grad-norm band has wide __MAX spikes but the mean is flat at ~0.3. The min/max bands "
         "look alarming only because each bucket spans 9 noisy steps. Still improving: continue.",
         age_min=8, sec=20),
    Spec("ok-rloo-kl-rises-to-0.11-by-300-then-holds-0.11-0.12-for-600-steps-eval-rising-trackio-live-900-of-2000",
         K_OK, writer(w_trackio)("rloo-math", "rloo-qwen3-1.7b-k4",
                                 dict(TRL_GRPO.items()), {"max_steps": 2000, "beta": 0.05, "num_generations": 4,
                                                                       "logging_steps": 10, "eval_steps": 100,
                                                                       "learning_rate": 1e-6, "trainer": "RLOOTrainer"}),
         6711, (900, 2000), HEALTHY, "healthy trackio trl-rloo kl-levels",
         "TRL RLOO (beta 0.05, k=4) logging to a local Trackio database, live at 900 of 2000. train/kl climbs fast "
         "from 0 to 0.07 by 150 and 0.11 by 300, which looks like drift, but then holds at 0.11-0.12 for 600 steps: "
         "the KL penalty found its balance well inside any budget. Meanwhile reward keeps rising 0.35 -> 0.50 "
         "(300) -> 0.62 (900) and eval/reward (N=500, every 100, sd 0.022) 0.33 -> 0.45 -> 0.57, +0.05 over the "
         "last 300 steps. Entropy ~0.36 steady. KL rising with reward, then levelling while reward still rises: "
         "continue.", age_min=6, sec=36),
    Spec("ok-dpo-epoch-1.4-of-3-train-loss-0.18-both-implicit-rewards-negative-logps-chosen-falls-eval-acc-rising-trl-ckpts",
         L_OK, add_eval_extra(L_EVAL_EXTRA)(writer(w_trl_ckpts)(TRL_DPO, 100, 2, 10, 500, 200, 0, False, False, 3)),
         3712, (700, 1500), HEALTHY, "healthy trl dpo trainer-state checkpoints second-epoch",
         "TRL DPO (beta 0.1, 3 epochs of 500 steps), checkpoint-600 and -700 with trainer_state, live at 700 "
         "(epoch 1.4). Alarming-looking: the train loss dives from 0.31 to 0.18 right after the epoch boundary (pairs "
         "seen a second time), train rewards/accuracies 0.76 -> 0.87, rewards/chosen goes negative to -1.25 (with "
         "rejected at -4.6) and logps/chosen falls -312 -> -347. The held-out signal is still improving: "
         "eval_rewards/accuracies on 1000 pairs (sd 0.015) 0.64 (200) -> 0.68 (400) -> 0.70 (600) and eval_loss "
         "0.62 -> 0.58, each eval better than the last. Not overfitting yet: continue.", age_min=10, sec=22,
         steps_per_epoch=500),
    Spec("ok-reward-creeps-0.61-to-0.655-and-1000-problem-eval-0.555-to-0.595-over-last-1000-steps-mlflow-db-live-2000-of-3000",
         M_OK, writer(w_mlflow_db)(TRL_GRPO, dict(TRL_PARAMS, max_steps=3000), "grpo-olmo-7b-const-lr"),
         5713, (2000, 3000), HEALTHY, "healthy mlflow sqlite slow-creep constant-lr",
         "HF/TRL GRPO in an MLflow SQL store (raw keys, logged every 10, eval every 200 on 1000 problems), live at "
         "2000 of 3000 with a constant lr. The fast phase ended at ~1000; since then reward creeps 0.61 -> 0.655 "
         "and eval_reward 0.555 -> 0.595, a steady slope of +0.008 per 200 steps, i.e. +0.04 = 2.6 eval sds over "
         "the last 1000 steps, with every eval level above the previous one. One NaN grad-norm row at 1370 "
         "(is_nan) is a skipped step. It looks flat on a full-run plot but it is still paying: continue.",
         age_min=7, sec=30),
    Spec("ok-ppo-epochs-4-pg-clipfrac-steady-0.16-ppo-kl-0.003-math-val-rising-verl-tb-live-480-of-1200",
         N_OK, writer(w_verl_tb)("verl_math_ppo_epochs", "qwen25_7b_grpo_ppoep4", 0.001, 100), 3714, (480, 1200),
         HEALTHY, "healthy verl tensorboard clipfrac-high off-policy",
         "verl GRPO with ppo_epochs=4 and mini-batches (each rollout batch is reused for several updates), raw "
         "keys in TensorBoard, live at 480 of 1200. actor/pg_clipfrac rises to 0.15 in the first 30 steps and stays "
         "at 0.15-0.17 throughout, with actor/ppo_kl ~0.003 and no trend; 'sustained high clip fraction' looks like "
         "too-large updates, but with four passes over the batch this level is expected, and it is not growing. "
         "critic/score/mean 0.25 -> 0.49 and val-core/math/acc/mean@1 (N=500, every 30, sd 0.022) 0.26 -> 0.47, "
         "still rising; entropy 0.52 -> 0.44, KL 0.028. Continue.", age_min=5, sec=80),
    Spec("ok-grad-norm-decays-0.45-to-0.05-as-policy-sharpens-mixed-groups-remain-validation-rising-nemo-tb-live-700-of-1500",
         O_OK, writer(w_nemo_tb)("exp_004", "grpo:\n  max_num_steps: 1500\n  num_prompts_per_step: 64\n"
                                             "  num_generations_per_prompt: 16\n  val_period: 25\n"
                                             "policy:\n  optimizer:\n    kwargs:\n      lr: 1.0e-6\n"),
         3715, (700, 1500), HEALTHY, "healthy nemo-rl tensorboard grad-norm-decay",
         "NeMo-RL GRPO (64 prompts x 16), TensorBoard under logs/exp_004, live at 700 of 1500. train/grad_norm "
         "decays tenfold, 0.45 -> 0.14 by step 200 and 0.05 now, which can read as a vanishing learning signal. It "
         "is not: over 90% of prompts still get mixed outcomes (baseline_reward pct_0 + pct_1 ~7%), "
         "entropy eases 0.55 -> 0.29 as the policy sharpens (smaller token-level gradients), lr is constant, "
         "token_mult_prob_error ~1.01. train/reward 0.31 -> 0.60 and validation/accuracy (N=500, every 25, sd "
         "0.022) 0.33 -> 0.56, +0.05 over the last 200 steps. Continue.", age_min=6, sec=96),
    # ============================================================================================== stop (7)
    Spec("stop-score-flat-0.71-and-gsm8k-val-flat-0.66-for-600-steps-budget-half-left-verl-console-plain-live-1300-of-2600",
         S_FLAT, writer(w_verl_console)(False, 0.001, "train.log", "verl_grpo_gsm8k", "qwen25_1.5b_grpo_long", 100), 5716,
         (1300, 2600), stop(700), "stop verl console plain-floats plateau budget-left",
         "verl GRPO console log (plain floats), live at step 1300 of 2600. critic/score/mean rose 0.38 -> 0.71 by "
         "step 700 and has been flat at 0.71 since; GSM8K val acc (N=1319, every 50, sd 0.013) rose 0.40 -> 0.66 "
         "by 700 and is 0.66 at every level since (change +0.002 in 600 steps). Entropy sits at its floor ~0.20, KL "
         "flat ~0.035, lengths flat ~205, grad norm flat. Half the budget is left but nothing in 600 steps suggests "
         "more to gain, and the current weights are as good as any: stop (onset ~700).", age_min=3, sec=40,
         steps_per_epoch=117),
    Spec("conv-reward-and-eval-flat-since-1150-cosine-lr-at-2pct-checkpoint-every-40-trl-ckpts-live-1880-of-2000",
         S_CONV, writer(w_trl_ckpts)(TRL_GRPO, 40, 3, 10, 2000, 100, 16 * 8), 3717, (1880, 2000), converged(),
         "converged trl trainer-state checkpoints cosine-tail near-end",
         "TRL GRPO with a cosine schedule, checkpoint every 40 (keep 3), live at 1880 of 2000 with lr down to ~2% "
         "of peak. Reward 0.30 -> 0.62 by 1150 and flat since (0.622 now); eval_reward (N=500, every 100, sd 0.022) "
         "0.29 -> 0.58 by 1150 and flat at 0.58 since; frac_reward_zero_std drifting up to ~0.5. Converged with "
         "120 steps and almost no learning rate left: stopping now or letting it finish are both fine; stop is "
         "preferred.", age_min=4, sec=40, steps_per_epoch=2000),
    Spec("stop-saturated-reward-0.97-group-std-0.03-gsm8k-pass1-flat-0.91-since-400-openrlhf-tb-live-820-of-2000",
         S_SAT, writer(w_openrlhf_tb)("qwen25-7b-gsm8k-grpo"), 5718, (820, 2000), stop(400),
         "stop openrlhf tensorboard saturated zero-signal",
         "OpenRLHF GRPO in TensorBoard, live at 820 (of a 2000-step plan). Reward rose 0.71 -> 0.965 by step 400 "
         "and sits at 0.97 since; train/group_reward_std has fallen 0.31 -> 0.03 (almost every group is all-correct "
         "so advantages are zero) and grad norm 0.3 -> 0.05. eval/eval_gsm8k_pass1 (N=1319, every 20, sd 0.008) "
         "went 0.72 -> 0.91 by 400 and stays at 0.91 for 420 steps. The task is saturated and there is no learning "
         "signal left; weights now are as good as any: stop (onset ~400).", age_min=5, sec=30),
    Spec("stop-finished-1500-of-1500-eval-plateau-0.47-since-900-final-at-best-mlflow-files-status-finished",
         S_FIN, writer(w_mlflow_files)(TRL_GRPO, dict(TRL_PARAMS, max_steps=1500, lr_scheduler_type="cosine",
                                                     warmup_steps=50, eval_steps=100), "grpo-llama31-8b-final",
                                       True),
         4719, (1500, 1500), stop(900), "stop mlflow file-store finished plateau best-at-end",
         "HF/TRL GRPO in an MLflow file store, finished: run meta.yaml status FINISHED with end_time, last step "
         "1500 of 1500, cosine lr at its floor. Reward 0.33 -> 0.55 by 900 then flat; eval_reward (N=800, every "
         "100, sd 0.018) 0.31 -> 0.47 by 900 and 0.47 at every level after. Nothing was still improving at the "
         "end and no earlier point is better than the final weights: keep the final weights (stop); not worth "
         "extending.", age_min=150, sec=45),
    Spec("stop-kl-climbs-linearly-0.03-to-0.26-reward-flat-0.52-eval-flat-0.50-for-700-steps-wandb-panel-csvs-live-1400-of-2500",
         S_KL, writer(w_wandb_csv)("grpo-beta002-r1distill", {"reward": "train/reward", "kl": "train/kl",
                                                              "entropy": "train/entropy",
                                                              "eval_reward": "eval/reward"}, "train/global_step"),
         3720, (1400, 2500), stop(700), "stop wandb csv-export kl-drift reward-flat",
         "TRL GRPO (beta 0.02) exported as four W&B panel CSVs, live at 1400 of 2500. Twin of the healthy KL-"
         "plateau run, except that here the KL never levels: 0.03 at step 700 and then a straight climb to 0.26, "
         "while train/reward is flat at 0.52 since 700 and eval/reward (N=600, every 100, sd 0.020) is flat at "
         "0.50 (level 0.497 now, 0.15 sd below its best, i.e. no decline). The policy keeps moving away from the "
         "reference without getting better: nothing to gain, and no earlier weights are measurably better, so stop "
         "(onset ~700) rather than roll back.", age_min=11, sec=50),
    Spec("stop-train-reward-creeps-0.66-to-0.71-but-heldout-flat-0.44-for-900-steps-custom-csv-live-1500-of-3000",
         S_TRAINONLY, writer(w_custom_csv)({"reward": "train_reward", "zero_std": "frac_zero_adv", "kl": "kl",
                                             "entropy": "entropy", "length": "mean_len", "lr": "lr",
                                             "grad_norm": "grad_norm", "loss": "loss"}, "train_log.csv", True,
                                            {"heldout_acc": "heldout_acc"}),
         3721, (1500, 3000), stop(600), "stop custom csv train-creeps heldout-flat",
         "A hand-written GRPO loop writing train_log.csv every step (total_steps column 3000; heldout_acc filled "
         "every 100 steps), live at 1500. Twin of the healthy slow-creep run, but only the train side creeps: "
         "train_reward 0.66 at 600 -> 0.71 at 1500 (real: the per-step sd is ~0.045, but 900 steps of it leave no doubt), while "
         "heldout_acc on 800 problems (sd 0.018) has been flat at 0.44 since step 600 (+0.001 in 900 steps). "
         "Entropy 0.31 -> 0.24, KL 0.02 -> 0.05: the policy is fitting the training prompts without generalising. "
         "Nothing more to gain on held-out and no decline to undo: stop (onset ~600).", age_min=8, sec=28),
    Spec("stop-finished-dpo-2-epochs-of-800-eval-pref-acc-flat-0.78-since-700-final-at-best-trl-top-state",
         S_DPO, add_eval_extra(S_DPO_EVAL_EXTRA)(writer(w_trl_ckpts)(TRL_DPO, 400, 2, 10, 800, 100, 0, True, True, 2)),
         9722, (1600, 1600), stop(700), "stop trl dpo trainer-state top-level finished plateau",
         "TRL DPO, 2 epochs of 800 steps, finished: top-level trainer_state.json with the train_runtime row and "
         "should_training_stop, checkpoint-1200 and -1600 kept. Train loss keeps falling to 0.09 and train pair "
         "accuracy reaches 0.97 (the second epoch), but eval_rewards/accuracies on 1500 pairs (sd 0.011) went "
         "0.50 -> 0.72 (300) -> 0.78 (700) and stayed at 0.78 to the end; eval_loss flat ~0.52. The final weights "
         "are as good as any earlier ones and more training would not help: keep the final model (stop).",
         age_min=300, sec=20, steps_per_epoch=800),
    # ============================================================================================= rollback (7)
    Spec("rb-rloo-kl-never-levels-0.16-to-0.48-reward-still-rising-eval-peaks-550-650-falls-3.6sd-trl-ckpts-live-1100-of-2000",
         R_KL, writer(w_trl_ckpts)(TRL_GRPO, 50, 3, 10, 2000, 50, 32 * 4), 3723, (1100, 2000), ("rollback", 650),
         "rollback trl trainer-state checkpoints rloo kl-runaway",
         "TRL RLOO (beta 0.05), checkpoint every 50 (keep 3), eval every 50 on 500 problems, live at 1100 of "
         "2000. Twin of the healthy KL-plateau run: KL rises as fast early (0.08 at 300, 0.16 at 600) but never "
         "levels, accelerating to 0.26 at 800 and 0.48 at 1100, entropy 0.36 -> 0.25, lengths 470 -> 350. The "
         "train reward keeps rising 0.55 -> 0.63, so a glance says fine, but eval_reward peaked at 0.52 "
         "(550-650) and is 0.44 at 1100 (sd 0.022; 3.6 sd): the policy is exploiting the grader. Only checkpoints "
         "1000-1100 are on disk. Roll back to the step-{lo}..{hi} weights (newest good: {hi}).",
         age_min=5, sec=40, steps_per_epoch=2000),
    Spec("rb-grad-spikes-every-15-steps-from-700-baseline-climbs-0.25-to-0.9-reward-and-math500-slide-openrlhf-console-live-940-of-1600",
         R_GRAD, writer(w_openrlhf_console)("train_grpo_math.log"), 3724, (940, 1600), ("rollback", 700),
         "rollback openrlhf console grad-spikes instability",
         "OpenRLHF GRPO console log, live at 940 of 1600. Until 700 it looks like the healthy spiky run: a few "
         "isolated grad-norm spikes (to ~3-5 against a 0.25 median) that recover. From 702 the spikes come every "
         "~15 steps and grow (to 12-26 by steps 850-930), and the run does not recover between them: the baseline grad norm ratchets 0.25 -> 0.9, KL 0.022 -> 0.09, lengths "
         "1040 -> 1400 with truncation 2% -> 9%. Reward slides 0.56 -> 0.43 and eval_math500_pass1 (N=500, every "
         "40, sd 0.022) peaked at ~0.50 around step 700 (0.495 at the 680 eval) and is ~0.42 at 920 (3.5 sd). Roll "
         "back to about {hi} (window {lo}-{hi}), before the instability began; ckpt/ holds only global_step800/900.", age_min=2, sec=38),
    Spec("rb-dip-after-warmup-to-5e-6-never-recovers-entropy-0.40-to-0.88-eval-0.42-to-0.30-mlflow-files-live-300-of-1500",
         R_DIP, writer(w_mlflow_files)(TRL_GRPO, dict(TRL_PARAMS, warmup_steps=100, lr_scheduler_type="cosine",
                                                     logging_steps=5, max_steps=1500, eval_steps=50,
                                                     learning_rate="5e-06", eval_on_start=True, save_steps=100), "grpo-qwen3-4b-warmup100-lr5e6"),
         3725, (300, 1500), ("rollback", 100), "rollback mlflow file-store warmup-dip lr-too-high",
         "Twin of the healthy warm-up dip, same MLflow file-store layout, live at 300 of 1500, but the peak lr is "
         "5e-6 (params: learning_rate 5e-06). Warm-up ends at step 100 with reward 0.45 and eval 0.42; the dip "
         "that follows never turns: reward 0.38 by 140 and 0.30 at 300, entropy 0.40 -> 0.88, lengths 560 -> 820, "
         "grad norm 0.3 -> 1.1. eval_reward (N=400, every 50, sd 0.025) 0.42 (100) -> 0.37 (150) -> 0.30 (300), "
         "4.9 sd below the end of warm-up. Two hundred steps without a recovery is not a warm-up transient: roll "
         "back to step {hi} (checkpoint-100 is the natural target) and lower the lr.", age_min=4, sec=45),
    Spec("rb-math500-falls-0.552-to-0.47-3.7sd-after-440-amc-80-wobbles-score-flat-verl-jsonl-live-760-of-1000",
         R_M500, writer(w_verl_jsonl)("verl_math", "qwen3_8b_grpo_dual_val_b", 0.001, 100), 3726, (760, 1000),
         ("rollback", 440), "rollback verl jsonl two-evals entropy-collapse",
         "Twin of the healthy dual-validation verl run (JSONL, val every 20), live at 760 of 1000. The small AMC-80 "
         "set again just wobbles (0.31 -> 0.28, inside its 0.05 sd), but this time the large one falls: MATH-500 "
         "(N=500, sd 0.022) peaked at 0.552 around step 440 and is 0.47 at 760 (3.7 sd). critic/score/mean looks "
         "fine (0.60 -> 0.62) while entropy collapses 0.39 -> 0.13 and KL rises 0.011 -> 0.05: the policy narrows "
         "onto the training distribution. Roll back to the peak region, steps {lo}-{hi} (checkpoint "
         "global_step_400 on a 100-step save interval).", age_min=6, sec=95, steps_per_epoch=100),
    Spec("rb-length-shedding-overshoots-560-to-190-tokens-after-330-train-reward-holds-eval-falls-trl-console-dicts-live-700-of-1200",
         R_LEN, writer(w_trl_console)(TRL_GRPO, 600, "nohup.out"), 4727, (700, 1200), ("rollback", 330),
         "rollback trl console-dicts length-collapse",
         "Twin of the healthy length-shedding TRL console run: lengths fall 1500 -> 560 by step 150 and truncation "
         "disappears, which was good. But after ~330 they keep falling, 500 -> 190 tokens by 700, and max length "
         "shrinks 1900 -> 640: the policy stops reasoning. On the easy training prompts the accuracy reward holds "
         "at ~0.48, so the train curve looks fine; eval_reward on the harder held-out set (N=300, every 40, sd "
         "0.029) peaked at ~0.44 around step 330 (0.434 at the 320 eval) and is 0.34 at 680 (3.4 sd). KL 0.03 -> 0.14. Roll back to about "
         "step {hi} (window {lo}-{hi}).", age_min=6, sec=33, steps_per_epoch=600),
    Spec("rb-decline-began-at-1300-before-crash-and-continues-after-resume-from-1400-hf-tb-two-dirs-live-1720-of-3000",
         R_RESUME, writer(w_hf_tb)(TRL_GRPO, 1500, 1400, "gpu-node09",
                                   dict(save_every=100, keep=2, logging_steps=10, eval_every=100, completions=16 * 8)),
         3728, (1720, 3000), ("rollback", 1300), "rollback hf tensorboard resume overlap real-decline",
         "Twin of the healthy resumed run (two runs/ folders, checkpoint-1600/1700, live at 1720 of 3000), but "
         "here the decline is real: it starts at ~1300, before the crash at 1530, and the relaunch from "
         "checkpoint-1400 carries on down. Pre-crash and resumed copies of 1401-1530 agree (both lower than 1300), "
         "and after that reward keeps falling 0.62 -> 0.50 by 1720, entropy 0.37 -> 0.62, lengths 700 -> 1150, KL "
         "0.045 -> 0.16. eval_reward (N=500, every 100, sd 0.022) 0.58 at 1200-1300, 0.47 at 1700 (5 sd). The "
         "resume did not cause it and does not hide it. Roll back to ~{hi} (window {lo}-{hi}); no checkpoint that "
         "old is left in output_dir, so restore it from wherever saves were archived.", age_min=6, sec=48,
         steps_per_epoch=1500),
    Spec("rb-creep-turns-to-erosion-eval-1000-problems-0.585-at-1200-to-0.535-at-2200-3.2sd-train-still-creeps-mlflow-db-live-2200-of-3000",
         R_ERODE, writer(w_mlflow_db)(TRL_GRPO, dict(TRL_PARAMS, max_steps=3000), "grpo-olmo-7b-const-lr-b"),
         5729, (2200, 3000), ("rollback", 1200), "rollback mlflow sqlite slow-erosion train-creeps",
         "Twin of the healthy slow-creep MLflow SQL run (raw keys, eval every 200 on 1000 problems), live at 2200 "
         "of 3000. The train reward still creeps up 0.61 -> 0.63 after step 1200, so the dashboard looks like the "
         "healthy one, but eval_reward turns: 0.585 at 1200, then 0.575, 0.565, 0.555, 0.545, 0.535 at 2200, a "
         "steady erosion of 0.05 = 3.2 eval sds (sd 0.016) with KL 0.028 -> 0.07 and entropy 0.35 -> 0.26. The "
         "better model is 1000 steps back: roll back to step {hi} (window {lo}-{hi}).", age_min=7, sec=30),
]

CASES = [s.case() for s in SPECS]
SPEC = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    spec = SPEC[case.name]
    rng = np.random.default_rng(case.seed)
    run = spec.story.draws(rng, case.reached)
    run.update(planned=case.planned or case.reached, reached=case.reached, eval_every=spec.story.eval_every,
               age=spec.age_min * 60, sec=spec.sec, steps_per_epoch=spec.steps_per_epoch or case.planned or case.reached)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    set_times(folder, run)


def check(cases: list[Case]) -> None:
    for c in cases:
        spec = SPEC[c.name]
        st = spec.story
        lv, steps = st.headline_level(), st.headline_steps(c.reached)
        best_s = max(steps, key=lv)
        sd = st.headline_sd(lv(best_s))
        print(f"{c.name}\n    {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')} "
              f"reached={c.reached} planned={c.planned} age={spec.age_min}min")
        print(f"    headline {st.headline}: first {lv(steps[0]):.3f}@{steps[0]} best {lv(best_s):.3f}@{best_s} "
              f"last {lv(steps[-1]):.3f}@{steps[-1]} sd {sd:.4f} ({(lv(best_s) - lv(steps[-1])) / sd:.1f} sd below best)")
        run = st.draws(np.random.default_rng(c.seed), c.reached)
        if st.headline == TRAIN:
            ev = [(s, v["reward"]) for s, v in run["train"]]
        else:
            ev = [(s, v[st.headline]) for s, v in run["eval"]]
        pick = ev[:: max(1, len(ev) // 12)]
        print("    drawn " + " ".join(f"{s}:{v:.3f}" for s, v in pick) + f" | last {ev[-1][0]}:{ev[-1][1]:.3f}")


HEADER = """# Holdout set 37: blind-labelled runs written by make_holdout37.py, independent of the assessor, its judges and
# the generators of the other holdout sets. Aimed at false alarms and the line between continue and stop: about
# half healthy runs with an alarming-looking signal, a quarter converged or saturated, a quarter real failures
# twinned with the healthy shapes. Labels follow DESIGN.md's decision contract and come from the noise-free story
# of each run. rollback_window is inclusive: from the first logged headline step whose level is within one
# sampling sd of the best level to the newest such step not after onset_step, in the run's own step units.
# Run `.venv/bin/python evals/holdout37/make_holdout37.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout37.py", "holdout37.yaml", "h37-", "holdout37", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
