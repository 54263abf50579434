"""Holdout set 28: blind-labelled RL post-training runs aimed at noise and timing, independent of the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout28/make_holdout28.py           # writes runs/ (gitignored) and holdout28.yaml
    .venv/bin/python evals/holdout28/make_holdout28.py --check   # also prints levels, draws and rollback windows

Every case is a story told as noise-free levels per optimiser step (train reward, held-out evals, KL, entropy,
lengths, truncation, grad norm, learning rate, ...), drawn through this set's noise model and written the way one
framework and version writes it. The set leans on the cases where the call depends on noise and timing: small or
coarse evals, slow slides of a few sampling sd, plateaus that still creep, early dips, runs judged early / mid /
late in their plan (one story is written at three points of its life), and finished or stalled runs.

Noise model (this set's own):
  * binary rewards: each step samples P prompts whose solve rates are logit-normal around the level
    (q = sigmoid(a + s*z), z ~ N(0, 1), a chosen so that E[q] equals the level, s = prompt-difficulty spread);
    G rollouts per prompt are Bernoulli(q). Batch mean, batch std, the share of all-same groups (all solved / none
    solved) and the mean within-group std all come from the same draws. Loggers that average over their logging
    interval (HF/TRL) log the mean of the interval's batches;
  * reward-model scores: batch mean of per-sample normal scores with a per-prompt offset;
  * preference accuracy (DPO): Binomial(pairs, p)/pairs per step;
  * held-out evals: Binomial(N, p)/N on N problems;
  * side signals (KL, entropy, lengths, clip and truncation rates, step time): the level times exp of an AR(1)
    series (rho 0.8), so they wander slowly as real ones do; signed ones get additive AR(1) noise;
  * grad norm: level * lognormal(0.22), and on ~2 % of steps times (1 + Pareto(1.3)) (a heavy right tail).

Labels follow DESIGN.md ("What the three decisions mean"), read from each story's noise-free levels, never from a
tool. The rollback window runs from the first logged headline step whose noise-free level is within one sampling
sd of the best level (the sd of one eval for an eval headline, of one logged batch mean for a train headline) to
the newest such step not after onset_step. Windows are computed from the story by `window()` and `--check`
prints them with the levels and the drawn values.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import pprint
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
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
Level = Callable[[float], float]
TRAIN = "@train"


def pw(*pts: tuple[float, float]) -> Level:
    """Piecewise-linear level through (step, value) knots, flat outside."""
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def const(v: float) -> Level:
    return lambda s: v


def steps_from(first: int, every: int, last: int) -> list[int]:
    return list(range(first, last + 1, every))


# --------------------------------------------------------------------------------------------------- noise model

GH_X, GH_W = np.polynomial.hermite_e.hermegauss(48)
GH_W = GH_W / GH_W.sum()


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


@cache
def _shift_table(spread: float) -> tuple[np.ndarray, np.ndarray]:
    """Map a target mean solve rate p to the logit shift a with E[sigmoid(a + spread*z)] = p."""
    a = np.linspace(-12, 12, 2401)
    means = (_sig(a[:, None] + spread * GH_X[None, :]) * GH_W).sum(1)
    return means, a


def shift(p: np.ndarray, spread: float) -> np.ndarray:
    means, a = _shift_table(spread)
    return np.interp(np.clip(p, 1e-4, 1 - 1e-4), means, a)


def batch_mean_sd(p: float, P: int, G: int, spread: float) -> float:
    """sd of one batch mean of P prompts x G Bernoulli rollouts under the logit-normal difficulty model."""
    a = float(shift(np.array([p]), spread)[0])
    q = _sig(a + spread * GH_X)
    e_q, e_q2 = (q * GH_W).sum(), (q * q * GH_W).sum()
    var = (e_q2 - e_q ** 2) / P + (e_q - e_q2) / (P * G)
    return math.sqrt(max(var, 0.0))


def ar1(rng: np.random.Generator, n: int, rho: float = 0.8) -> np.ndarray:
    e = rng.normal(size=n)
    out = np.empty(n)
    x = e[0]
    k = math.sqrt(1 - rho * rho)
    for i in range(n):
        x = rho * x + k * e[i] if i else e[0]
        out[i] = x
    return out


SIDE_SD = dict(kl=0.10, entropy=0.03, len=0.035, trunc=0.15, clip=0.12, step_time=0.05)
SIDE_DEFAULT = dict(kl=0.0, entropy=0.45, len=450.0, trunc=0.01, clip=0.0, grad_norm=0.25, lr=1e-6, loss=0.0,
                    step_time=40.0)


@dataclass
class Story:
    """Noise-free levels of one run, and how they are sampled."""

    reward: Level
    evals: dict[str, tuple[Level, int]] = field(default_factory=dict)  # exact eval key -> (level, N problems)
    eval_steps: list[int] = field(default_factory=list)
    headline: str = TRAIN
    kind: str = "binary"  # binary | score | pref
    P: int = 64
    G: int = 8
    spread: float = 1.5
    score_sd: float = 1.0
    prompt_sd: float = 0.5
    log_every: int = 1  # batches averaged into one logged row
    side: dict[str, Level] = field(default_factory=dict)  # canonical: kl entropy len trunc clip grad_norm lr ...
    extra: dict[str, tuple[Level, float, str]] = field(default_factory=dict)  # exact key -> (level, sd, mul|add)
    eval_extra: dict[str, tuple[Level, float, str]] = field(default_factory=dict)
    sec_per_step: float = 40.0
    age_min: float = 3.0  # minutes since the newest write

    def lv(self, key: str) -> Level:
        if key in self.side:
            return self.side[key]
        return const(SIDE_DEFAULT[key])

    # ---- drawing

    def draw(self, seed: int, reached: int, planned: int) -> dict:
        """All randomness is drawn over the whole plan, then cut at `reached`: one story judged at several points
        of its life gives the same history up to each point."""
        T = max(planned, reached)
        s_all = np.arange(1, T + 1)
        p = np.array([self.reward(s) for s in s_all])
        rt = np.random.default_rng([seed, 1])
        per = {}
        if self.kind == "binary":
            a = shift(p, self.spread)
            z = rt.normal(size=(T, self.P))
            q = _sig(a[:, None] + self.spread * z)
            k = rt.binomial(self.G, q)
            n = self.P * self.G
            mean = k.sum(1) / n
            per["reward"] = mean
            per["reward_std"] = np.sqrt(np.maximum(mean * (1 - mean), 0) * n / (n - 1))
            same0, same1 = (k == 0), (k == self.G)
            per["zero_std"] = (same0 | same1).mean(1)
            per["pct0"], per["pct1"] = 100 * same0.mean(1), 100 * same1.mean(1)
            frac = k / self.G
            per["group_std"] = (np.sqrt(frac * (1 - frac) * self.G / (self.G - 1))).mean(1)
        elif self.kind == "score":
            sd = math.sqrt(self.prompt_sd ** 2 / self.P + self.score_sd ** 2 / (self.P * self.G))
            per["reward"] = p + sd * rt.normal(size=T)
            tot = math.sqrt(self.prompt_sd ** 2 + self.score_sd ** 2)
            per["reward_std"] = tot * np.exp(0.05 * rt.normal(size=T))
            per["zero_std"] = np.zeros(T)
        else:  # pref: P pairs per step
            per["reward"] = rt.binomial(self.P, np.clip(p, 0, 1)) / self.P
        rs = np.random.default_rng([seed, 3])
        for key in ("kl", "entropy", "len", "trunc", "clip", "step_time"):
            lvl = np.array([self.lv(key)(s) for s in s_all])
            per[key] = lvl * np.exp(SIDE_SD[key] * ar1(rs, T))
        per["trunc"] = np.clip(per["trunc"], 0, 1)
        per["clip"] = np.clip(per["clip"], 0, 1)
        per["lr"] = np.array([self.lv("lr")(s) for s in s_all])
        per["loss"] = np.array([self.lv("loss")(s) for s in s_all]) + 0.012 * ar1(rs, T, 0.3)
        g = np.array([self.lv("grad_norm")(s) for s in s_all]) * np.exp(0.22 * rs.normal(size=T))
        spikes = rs.random(T) < 0.02
        g[spikes] *= 1 + np.minimum(rs.pareto(1.3, size=int(spikes.sum())), 40)
        per["grad_norm"] = g
        for key, (lvl_fn, sd, mode) in self.extra.items():
            lvl = np.array([lvl_fn(s) for s in s_all])
            noise = ar1(rs, T, 0.6)
            per[key] = lvl * np.exp(sd * noise) if mode == "mul" else lvl + sd * noise
        # logged rows: the mean of the interval's batches (grad norm and lr: the last step's value)
        train = []
        for s in range(self.log_every, reached + 1, self.log_every):
            lo, hi = s - self.log_every, s
            row = {k: float(v[lo:hi].mean()) for k, v in per.items() if k not in ("grad_norm", "lr")}
            row["grad_norm"] = float(per["grad_norm"][hi - 1])
            row["lr"] = float(per["lr"][hi - 1])
            train.append((s, row))
        re_ = np.random.default_rng([seed, 2])
        ev = []
        for s in self.eval_steps:
            row = {k: float(re_.binomial(n, min(max(f(s), 0.0), 1.0)) / n) for k, (f, n) in self.evals.items()}
            for k, (f, sd, mode) in self.eval_extra.items():
                x = re_.normal()
                row[k] = f(s) * math.exp(sd * x) if mode == "mul" else f(s) + sd * x
            if s <= reached:
                ev.append((s, row))
        return dict(train=train, eval=ev, reached=reached, planned=planned)

    # ---- the headline and its window

    def headline_steps(self, reached: int) -> list[int]:
        if self.headline == TRAIN:
            return list(range(self.log_every, reached + 1, self.log_every))
        return [s for s in self.eval_steps if s <= reached]

    def headline_level(self, s: int) -> float:
        if self.headline == TRAIN:
            return float(np.mean([self.reward(s - j) for j in range(self.log_every)]))
        return self.evals[self.headline][0](s)

    def headline_sd(self, p: float) -> float:
        if self.headline != TRAIN:
            return math.sqrt(p * (1 - p) / self.evals[self.headline][1])
        if self.kind == "binary":
            return batch_mean_sd(p, self.P, self.G, self.spread) / math.sqrt(self.log_every)
        if self.kind == "score":
            return math.sqrt(self.prompt_sd ** 2 / self.P + self.score_sd ** 2 / (self.P * self.G) / self.log_every)
        return math.sqrt(p * (1 - p) / (self.P * self.log_every))


def window(story: Story, reached: int, onset: int) -> tuple[int, int]:
    steps = story.headline_steps(reached)
    best = max(story.headline_level(s) for s in steps)
    sd = story.headline_sd(best)
    good = [s for s in steps if story.headline_level(s) >= best - sd]
    return good[0], max(s for s in good if s <= onset)


# ------------------------------------------------------------------------------------------------- run timing

class Clock:
    """Wall time of each step: the newest step was written `age_min` minutes ago."""

    def __init__(self, story: Story, reached: int):
        self.end = NOW - story.age_min * 60
        self.sps = story.sec_per_step
        self.reached = reached

    def __call__(self, s: float) -> float:
        return self.end - (self.reached - s) * self.sps


CKPT = re.compile(r"(?:checkpoint-|global_step_?)(\d+)$")


def stamp(folder: Path, clock: Clock, explicit: dict[Path, float]) -> None:
    """Set mtimes: files in a checkpoint folder when that step was saved, named files as given, the rest at the
    newest write."""
    for p in sorted(folder.rglob("*"), key=lambda x: -len(x.parts)):
        t = explicit.get(p)
        if t is None:
            for part in reversed(p.relative_to(folder).parts):
                m = CKPT.search(part)
                if m:
                    t = clock(int(m.group(1))) + 25
                    break
        if t is None:
            t = clock.end
        os.utime(p, (t, t))


def r6(x: float) -> float:
    return float(f"{x:.6g}")


def tstr(t: float, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    return time.strftime(fmt, time.localtime(t))


# ------------------------------------------------------------------------------------------------ TRL vocabulary

def trl_grpo_row(v: dict, version: tuple[int, int], beta: float, fns: dict[str, str], cap: int,
                 tokens: float, prefix: str = "") -> dict:
    """One GRPO log dict the way TRL `version` names its keys. `fns` maps reward-function name -> canonical or
    extra key holding its mean."""
    out: dict[str, float] = {}
    ln = v["len"]
    if version >= (0, 17):
        out.update({"num_tokens": tokens,
                    "completions/mean_length": ln, "completions/min_length": max(8.0, ln * 0.18),
                    "completions/max_length": min(cap, ln * 2.6),
                    "completions/clipped_ratio": v["trunc"],
                    "completions/mean_terminated_length": ln * (1 - 0.8 * v["trunc"]),
                    "completions/min_terminated_length": max(8.0, ln * 0.18),
                    "completions/max_terminated_length": min(cap - 1, ln * 2.4)})
        for fn, key in fns.items():
            m = v[key]
            out[f"rewards/{fn}/mean"] = m
            out[f"rewards/{fn}/std"] = math.sqrt(max(m * (1 - m), 0.0)) if 0 <= m <= 1 else 0.3
    else:
        out["num_tokens"] = tokens
        out["completion_length"] = ln
        for fn, key in fns.items():
            out[f"rewards/{fn}"] = v[key]
    out["reward"] = sum(v[key] for key in fns.values())
    out["reward_std"] = v["reward_std"]
    if version >= (0, 18):
        out["frac_reward_zero_std"] = v["zero_std"]
    if beta:
        out["kl"] = v["kl"]
    if version >= (0, 20):
        out["entropy"] = v["entropy"]
    if version >= (0, 17):
        c = v["clip"]
        out.update({"clip_ratio/low_mean": c * 0.4, "clip_ratio/low_min": 0.0, "clip_ratio/high_mean": c * 0.6,
                    "clip_ratio/high_max": min(1.0, c * 3), "clip_ratio/region_mean": c})
    elif version >= (0, 16):
        out["clip_ratio"] = v["clip"]
    if version >= (0, 26):
        out["step_time"] = v["step_time"]
    return {prefix + k: r6(x) for k, x in out.items()}


def trl_train_rows(run: dict, *, kind: str, version: tuple[int, int], beta: float, fns: dict[str, str],
                   cap: int, steps_per_epoch: int) -> list[dict]:
    rows, tokens = [], 0.0
    for s, v in run["train"]:
        logs = {"loss": round(v["loss"], 4), "grad_norm": r6(v["grad_norm"]), "learning_rate": v["lr"]}
        if kind == "grpo":
            tokens += v["len"] * 512 * run["log_every"] + 180 * 512 * run["log_every"]
            logs.update(trl_grpo_row(v, version, beta, fns, cap, float(int(tokens))))
        else:  # dpo
            logs["loss"] = round(v["loss_dpo"], 4)
            for k in ("rewards/chosen", "rewards/rejected"):
                logs[k] = r6(v[k])
            logs["rewards/accuracies"] = r6(v["reward"])
            logs["rewards/margins"] = r6(v["rewards/chosen"] - v["rewards/rejected"])
            for k in ("logps/chosen", "logps/rejected", "logits/chosen", "logits/rejected"):
                logs[k] = r6(v[k])
        logs["epoch"] = s / steps_per_epoch
        logs["step"] = s
        rows.append(logs)
    return rows


def trl_eval_rows(run: dict, *, kind: str, steps_per_epoch: int, n_eval: int,
                  version: tuple[int, int] = (0, 21)) -> list[dict]:
    rows = []
    train_at = dict(run["train"])
    for s, v in run["eval"]:
        t = train_at.get(s) or run["train"][-1][1]
        logs: dict[str, float] = {}
        if kind == "grpo":
            acc = next(x for k, x in v.items() if k.startswith("eval_rewards/"))
            logs["eval_loss"] = round(0.003 * math.sin(s), 4)
            logs.update({"eval_runtime": round(n_eval * 0.9 + 7 * math.cos(s), 3),
                         "eval_samples_per_second": round(1 / 0.9, 3), "eval_steps_per_second": 0.139})
            if version >= (0, 17):
                logs["eval_completions/mean_length"] = r6(t["len"] * 0.97)
                logs["eval_completions/clipped_ratio"] = r6(t["trunc"])
            else:
                logs["eval_completion_length"] = r6(t["len"] * 0.97)
            for k, x in v.items():
                logs[k] = r6(x)
            logs["eval_reward"] = r6(acc + sum(x for k, x in v.items() if k.startswith("eval_rewards/format")))
            logs["eval_reward_std"] = r6(math.sqrt(max(acc * (1 - acc), 0.0)))
        else:
            logs.update({k: r6(x) for k, x in v.items()})
            logs.update({"eval_runtime": 61.2 + round(math.cos(s), 3), "eval_samples_per_second": 3.268,
                         "eval_steps_per_second": 0.409})
        logs["epoch"] = s / steps_per_epoch
        logs["step"] = s
        rows.append(logs)
    return rows


def merge_history(train: list[dict], ev: list[dict]) -> list[dict]:
    rows = [(r["step"], 0, r) for r in train] + [(r["step"], 1, r) for r in ev]
    return [r for _, _, r in sorted(rows, key=lambda x: (x[0], x[1]))]


def hf_tb_tag(k: str) -> str:
    if k.startswith("eval_"):
        return "eval/" + k[5:]
    return "train/" + k


# --------------------------------------------------------------------------------------------------- the writers

def w_trl(run: dict, folder: Path, clock: Clock, mt: dict, *, kind: str = "grpo", version=(0, 21), beta=0.0,
          fns: dict | None = None, cap: int = 1024, logging_steps: int = 10, eval_steps: int = 100,
          save_steps: int = 100, limit: int | None = None, steps_per_epoch: int = 0, epochs: int = 1,
          finished: bool = False, top_level: bool = False, tb: bool = False, host: str = "gpu-node-07",
          resume: tuple[int, int] | None = None, n_eval: int = 200, adapter: bool = True) -> None:
    """TRL output_dir: checkpoint-N/trainer_state.json (save_total_limit rotation), optional top-level state at the
    end, optional HF TensorBoard logs under runs/<date>_<host>/ (a relaunch opens a second folder).

    resume=(from_ckpt, died_at): the first launch died at `died_at` and the run went on from checkpoint-from_ckpt;
    only TensorBoard keeps the steps the first launch logged after that checkpoint."""
    fns = fns or {"accuracy_reward": "reward"}
    planned, reached = run["planned"], run["reached"]
    spe = steps_per_epoch or planned
    hist_train = trl_train_rows(run, kind=kind, version=version, beta=beta, fns=fns, cap=cap, steps_per_epoch=spe)
    hist_eval = trl_eval_rows(run, kind=kind, steps_per_epoch=spe, n_eval=n_eval, version=version)
    rows = merge_history(hist_train, hist_eval)
    saves = list(range(save_steps, reached + 1, save_steps))
    kept: list[int] = []
    for n in saves:
        st = trainer_state([r for r in rows if r["step"] <= n], n, planned, logging_steps, save_steps, eval_steps,
                           n / spe, epochs, training_stop=finished and n == reached)
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        if adapter:
            (ck / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 32, "lora_alpha": 64,
                                                                "target_modules": "all-linear"}) + "\n")
            (ck / "adapter_model.safetensors").write_bytes(b"\x00" * 64)
        else:
            (ck / "config.json").write_text('{"architectures": ["Qwen2ForCausalLM"], "torch_dtype": "bfloat16"}\n')
            (ck / "model.safetensors").write_bytes(b"\x00" * 64)
        (ck / "training_args.bin").write_bytes(b"\x80\x04" + b"\x00" * 30)
        (ck / "optimizer.pt").write_bytes(b"\x00" * 32)
        (ck / "scheduler.pt").write_bytes(b"\x00" * 16)
        (ck / "rng_state.pth").write_bytes(b"\x00" * 16)
        if resume is not None and n <= resume[0]:  # saved by the first launch, before its death and the gap
            t_saved = clock(n) + 25 - (resume[1] - resume[0]) * clock.sps - 35 * 60
            for p in [ck, *ck.rglob("*")]:
                mt[p] = t_saved
        kept.append(n)
        if limit:
            while len(kept) > limit:
                old = kept.pop(0)
                for p in sorted((folder / f"checkpoint-{old}").rglob("*"), reverse=True):
                    p.unlink()
                (folder / f"checkpoint-{old}").rmdir()
    if finished:
        final = dict(epoch=reached / spe, step=reached, total_flos=0.0, train_loss=round(
            float(np.mean([r["loss"] for r in hist_train])), 6), train_runtime=round(reached * clock.sps, 2),
            train_samples_per_second=round(64 / clock.sps, 3), train_steps_per_second=round(1 / clock.sps, 4))
        if top_level:
            st = trainer_state([*rows, final], reached, planned, logging_steps, save_steps, eval_steps,
                               reached / spe, epochs, training_stop=True)
            dump_json(folder / "trainer_state.json", st)
            (folder / "adapter_config.json" if adapter else folder / "config.json").write_text("{}\n")
            (folder / "README.md").write_text("---\nlibrary_name: transformers\ntags:\n- trl\n---\n")
        rows = [*rows, final]
    if tb:
        t0 = clock(0)
        events_all = [(clock(r["step"]) + (20 if any(k.startswith("eval_") for k in r) else 0), r["step"],
                       {hf_tb_tag(k): x for k, x in r.items() if k not in ("step",) and isinstance(x, float)})
                      for r in rows]
        if resume is None:
            d = folder / "runs" / f"{tstr(t0, '%b%d_%H-%M-%S')}_{host}"
            p = tb_file(d / f"events.out.tfevents.{int(t0)}.{host}.{4000 + len(host)}.0", events_all)
            mt[p] = clock.end
        else:
            frm, died = resume
            gap = 35 * 60  # the first launch died; the relaunch started 35 minutes later
            first = [(w - (died - frm) * clock.sps - gap, s, d) for w, s, d in events_all if s <= frm]
            # the steps the dead launch logged after the checkpoint: it was still on the old settings, so its
            # values continue the pre-checkpoint trend (earlier rows re-drawn with fresh noise)
            jit = np.random.default_rng(int(died))
            back = {s: d for _, s, d in events_all if s <= frm}
            lag = -(-(died - frm) // logging_steps) * logging_steps
            lost = []
            for w, s, d in events_all:
                if frm < s <= died and not any(k.startswith("eval/") for k in d) and (s - lag) in back:
                    src = back[s - lag]
                    dd = {k: (x * math.exp(0.04 * jit.normal()) if k.startswith("train/") and k not in
                              ("train/learning_rate", "train/epoch", "train/num_tokens") else x)
                          for k, x in src.items()}
                    dd["train/epoch"] = d.get("train/epoch", dd.get("train/epoch"))
                    lost.append((w - (died - frm) * clock.sps - gap, s, dd))
            t_first = first[0][0]
            d1 = folder / "runs" / f"{tstr(t_first, '%b%d_%H-%M-%S')}_{host}"
            p1 = tb_file(d1 / f"events.out.tfevents.{int(t_first)}.{host}.3311.0", first + lost)
            mt[p1] = (first + lost)[-1][0]
            second = [(w, s, d) for w, s, d in events_all if s > frm]
            t2 = second[0][0] - 90
            d2 = folder / "runs" / f"{tstr(t2, '%b%d_%H-%M-%S')}_{host}"
            p2 = tb_file(d2 / f"events.out.tfevents.{int(t2)}.{host}.8742.0", second)
            mt[p2] = clock.end


def tq_time(sec: float) -> str:
    sec = int(sec)
    h, m, s = sec // 3600, sec // 60 % 60, sec % 60
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def tq_bar(n: int, total: int, sps: float, desc: str = "", width: int = 10) -> str:
    frac = n / total
    full = int(frac * width)
    part = " ▏▎▍▌▋▊▉"[int((frac * width - full) * 8)] if full < width else ""
    bar = ("█" * full + part).ljust(width)
    head = f"{desc}: " if desc else ""
    rate = f"{sps:.2f}s/it" if sps >= 1 else f"{1 / sps:.2f}it/s"
    return f"{head}{int(frac * 100):3d}%|{bar}| {n}/{total} [{tq_time(n * sps)}<{tq_time((total - n) * sps)}, {rate}]"


def w_trl_console(run: dict, folder: Path, clock: Clock, mt: dict, *, version=(0, 20), beta=0.0,
                  fns: dict | None = None, cap: int = 1024, logging_steps: int = 10, eval_every: int = 100,
                  n_eval: int = 200, finished: bool = False, name: str = "train.log", examples: int = 7473,
                  model: str = "Qwen/Qwen2.5-1.5B-Instruct") -> None:
    """`python train_grpo.py 2>&1 | tee train.log`: HF's startup block, tqdm redraws joined by carriage returns,
    and the ProgressCallback's dict of each log call (no step key; epoch rounded to 2 places)."""
    fns = fns or {"accuracy_reward": "reward"}
    planned, reached = run["planned"], run["reached"]
    spe = planned
    tr = trl_train_rows(run, kind="grpo", version=version, beta=beta, fns=fns, cap=cap, steps_per_epoch=spe)
    ev = trl_eval_rows(run, kind="grpo", steps_per_epoch=spe, n_eval=n_eval, version=version)
    rows = merge_history(tr, ev)
    t0 = clock(0) - 60
    hf = f"[INFO|trainer.py:2414] {tstr(t0)},{int(t0 * 1000) % 1000:03d} >> "
    out = [f"{tstr(clock(0) - 240)} - INFO - __main__ - Loading {model}",
           hf + "***** Running training *****", hf + f"  Num examples = {examples:,}", hf + "  Num Epochs = 1",
           hf + "  Instantaneous batch size per device = 8",
           hf + "  Total train batch size (w. parallel, distributed & accumulation) = 512",
           hf + "  Gradient Accumulation steps = 8", hf + f"  Total optimization steps = {planned:,}"]
    bar = [f"  0%|          | 0/{planned} [00:00<?, ?it/s]"]
    last = 0
    for r in rows:
        s = r["step"]
        if s > last:
            for n in sorted({*range(last + 1, s + 1, max(1, (s - last) // 3)), s}):
                bar.append(tq_bar(n, planned, clock.sps))
            last = s
        shown = {k: x for k, x in r.items() if k != "step"}
        shown["epoch"] = round(shown["epoch"], 2)
        out.append("\r".join(bar))
        out.append(str(shown))
        bar = [tq_bar(s, planned, clock.sps)]
    if finished:
        final = {"train_runtime": round(reached * clock.sps, 4), "train_samples_per_second": round(512 / clock.sps, 3),
                 "train_steps_per_second": round(1 / clock.sps, 3),
                 "train_loss": round(float(np.mean([r["loss"] for r in tr])), 6), "epoch": 1.0}
        out.append("\r".join(bar))
        out.append(str(final))
        out.append(tq_bar(reached, planned, clock.sps))
        out.append(f"{tstr(clock.end)} - INFO - __main__ - Saving model checkpoint to outputs/final")
    else:
        out.append("\r".join([*bar, tq_bar(reached, planned, clock.sps)]))
    (folder / name).write_text("\n".join(out) + ("\n" if finished else ""), encoding="utf-8")


VERL_NAMES = {"reward": "critic/score/mean", "kl": "actor/kl_loss", "entropy": "actor/entropy",
              "len": "response_length/mean", "trunc": "response_length/clip_ratio", "grad_norm": "actor/grad_norm",
              "lr": "actor/lr", "clip": "actor/pg_clipfrac", "loss": "actor/pg_loss"}


def verl_row(s: int, v: dict, cap: int, epoch: int, kl: bool = True, extras: bool = True) -> dict:
    """One verl metrics dict in the order ray_trainer.fit() fills it (val metrics are merged in by the caller)."""
    d: dict[str, float] = {"training/global_step": s, "training/epoch": epoch}
    d["actor/entropy"] = v["entropy"]
    if kl:
        d["actor/kl_loss"] = v["kl"]
        d["actor/kl_coef"] = 0.001
    d.update({"actor/pg_loss": v["loss"], "actor/pg_clipfrac": v["clip"], "actor/ppo_kl": v["clip"] * 0.004,
              "actor/pg_clipfrac_lower": 0.0, "actor/grad_norm": v["grad_norm"], "perf/mfu/actor": 0.31,
              "perf/max_memory_allocated_gb": 61.7, "actor/lr": v["lr"]})
    sc = v["reward"]
    d.update({"critic/score/mean": sc, "critic/score/max": 1.0, "critic/score/min": 0.0,
              "critic/rewards/mean": sc, "critic/rewards/max": 1.0, "critic/rewards/min": 0.0,
              "critic/advantages/mean": 0.0021 * math.sin(s), "critic/advantages/max": 2.47,
              "critic/advantages/min": -2.47, "critic/returns/mean": 0.0021 * math.sin(s),
              "response_length/mean": v["len"], "response_length/max": float(min(cap, int(v["len"] * 3.1))),
              "response_length/min": float(max(6, int(v["len"] * 0.12))), "response_length/clip_ratio": v["trunc"],
              "prompt_length/mean": 118.4, "prompt_length/max": 402.0, "prompt_length/min": 41.0,
              "prompt_length/clip_ratio": 0.0})
    gen = v["step_time"] * 0.64
    d.update({"timing_s/gen": gen, "timing_s/reward": 0.9, "timing_s/old_log_prob": v["step_time"] * 0.08,
              "timing_s/ref": v["step_time"] * 0.07, "timing_s/adv": 0.12,
              "timing_s/update_actor": v["step_time"] * 0.19, "timing_s/step": v["step_time"],
              "perf/total_num_tokens": float(int(512 * (118 + v["len"]))),
              "perf/time_per_step": v["step_time"], "perf/throughput": 512 * (118 + v["len"]) / v["step_time"] / 8})
    if extras:
        d.update({k: x for k, x in v.items() if "/" in k})
    return d


def fmt_np(x, np2: bool) -> str:
    if isinstance(x, int):
        return str(x)
    return f"np.float64({x!r})" if np2 else repr(x)


def verl_rows(run: dict, cap: int, steps_per_epoch: int, kl: bool, val_at_0: bool) -> dict[int, dict]:
    rows: dict[int, dict] = {}
    evs = dict(run["eval"])
    if val_at_0 and 0 in evs:
        rows[0] = dict(evs[0])
    for s, v in run["train"]:
        row = dict(evs.get(s, {}))
        row.update(verl_row(s, v, cap, (s - 1) // steps_per_epoch, kl))
        if s in evs:
            row["timing_s/testing"] = 41.0 + 3 * math.sin(s)
        rows[s] = row
    return rows


def w_verl_console(run: dict, folder: Path, clock: Clock, mt: dict, *, np2: bool = True, cap: int = 2048,
                   steps_per_epoch: int = 10**9, save_freq: int = 50, kl: bool = True, finished: bool = False,
                   project: str = "verl_grpo_math", exp: str = "qwen25_math_1p5b", name: str = "train.log") -> None:
    """verl stdout captured by `| tee`: Ray banners, 'Total training steps', LocalLogger lines behind the Ray
    task prefix, checkpoint saves, tqdm 'Training Progress' redraws; the end prints 'Final validation metrics'."""
    planned, reached = run["planned"], run["reached"]
    rows = verl_rows(run, cap, steps_per_epoch, kl, val_at_0=True)
    pre = "(TaskRunner pid=48211) "
    out = [f"{tstr(clock(0) - 300, '%Y-%m-%d %H:%M:%S')},114\tINFO worker.py:1832 -- Started a local Ray instance. "
           "View the dashboard at 127.0.0.1:8265 ",
           f"{pre}Using dataset class: RLHFDataset", f"{pre}dataset len: {min(planned, steps_per_epoch) * 512}",
           f"{pre}Size of train dataloader: {min(planned, steps_per_epoch)}, Size of val dataloader: 1",
           f"{pre}Total training steps: {planned}",
           f"{pre}colocated worker base class <class 'verl.single_controller.base.worker.Worker'>",
           f"{pre}Checkpoint tracker file does not exist: /data/ckpt/{project}/{exp}/latest_checkpointed_iteration.txt",
           f"{pre}Training from scratch"]
    for s in sorted(rows):
        body = " - ".join(f"{k}:{fmt_np(x, np2)}" for k, x in rows[s].items())
        if s == 0:
            out.append(f"{pre}step:0 - {body}")
            out.append(f"{pre}Training Progress:   0%|          | 0/{planned} [00:00<?, ?it/s]")
            continue
        out.append(f"{pre}step:{s} - {body}")
        if s % save_freq == 0 or (finished and s == reached):
            out.append(f"{pre}local_global_step_folder: /data/ckpt/{project}/{exp}/global_step_{s}")
        out.append(pre + tq_bar(s, planned, clock.sps, "Training Progress"))
    if finished:
        last = {k: x for k, x in rows[reached].items() if k.startswith("val-")}
        text = pprint.pformat("Final validation metrics: " + repr(
            {k: (np.float64(x) if np2 else x) for k, x in last.items()}))
        out.append(pre + text.replace("\n", "\n" + pre))
    (folder / name).write_text("\n".join(out) + "\n", encoding="utf-8")
    ck = folder / "checkpoints" / project / exp
    saves = list(range(save_freq, reached + 1, save_freq))
    if finished and reached not in saves:
        saves.append(reached)
    for s in saves[-2:]:
        (ck / f"global_step_{s}" / "actor").mkdir(parents=True, exist_ok=True)
        (ck / f"global_step_{s}" / "actor" / "model_world_size_8_rank_0.pt").write_bytes(b"\x00" * 32)
        (ck / f"global_step_{s}" / "data.pt").write_bytes(b"\x00" * 16)
    if saves:
        (ck / "latest_checkpointed_iteration.txt").write_text(str(saves[-1]))
        mt[ck / "latest_checkpointed_iteration.txt"] = clock(saves[-1]) + 30


def w_verl_jsonl(run: dict, folder: Path, clock: Clock, mt: dict, *, project: str, exp: str, cap: int = 4096,
                 steps_per_epoch: int = 10**9, total_epochs: int | None = None, total_steps: int | None = None,
                 kl: bool = True, test_freq: int = 10, save_freq: int = 100, torn_tail: bool = False) -> None:
    """verl FileLogger ({"step": N, "data": {...}} per line; NaN as null) plus Hydra's saved config."""
    rows = verl_rows(run, cap, steps_per_epoch, kl, val_at_0=True)
    path = folder / project / f"{exp}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for s in sorted(rows):
        data = {k: (None if isinstance(x, float) and not math.isfinite(x) else x) for k, x in rows[s].items()}
        lines.append(json.dumps({"step": s, "data": data}, separators=(",", ":")))
    text = "\n".join(lines) + "\n"
    if torn_tail:
        text = text[: len(text) - len(lines[-1]) // 2 - 1]
    path.write_text(text)
    day = tstr(clock(0) - 400, "%Y-%m-%d")
    hh = tstr(clock(0) - 400, "%H-%M-%S")
    hyd = folder / "outputs" / day / hh / ".hydra"
    hyd.mkdir(parents=True)
    (hyd / "config.yaml").write_text(
        f"data:\n  train_batch_size: 512\n  max_prompt_length: 1024\n  max_response_length: {cap}\n"
        f"actor_rollout_ref:\n  actor:\n    optim:\n      lr: 1.0e-06\n      lr_warmup_steps_ratio: 0.0\n"
        f"    use_kl_loss: {'true' if kl else 'false'}\n    kl_loss_coef: 0.001\n  rollout:\n    n: 8\n"
        f"    temperature: 1.0\nalgorithm:\n  adv_estimator: grpo\ntrainer:\n  logger:\n  - console\n  - file\n"
        f"  project_name: {project}\n  experiment_name: {exp}\n  nnodes: 1\n  n_gpus_per_node: 8\n"
        f"  save_freq: {save_freq}\n  test_freq: {test_freq}\n  total_epochs: {total_epochs or 1}\n"
        f"  total_training_steps: {total_steps if total_steps is not None else 'null'}\n  val_before_train: true\n")
    mt[hyd / "config.yaml"] = clock(0) - 380
    mt[hyd] = clock(0) - 380


def w_verl_tb(run: dict, folder: Path, clock: Clock, mt: dict, *, project: str, exp: str, cap: int = 3072,
              kl: bool = True) -> None:
    """verl's TensorBoard backend: raw keys under tensorboard_log/<project>/<experiment>."""
    rows = verl_rows(run, cap, 10**9, kl, val_at_0=True)
    events = [(clock(s) + (5 if s else -600), s, {k: float(x) for k, x in r.items()}) for s, r in sorted(rows.items())]
    d = folder / "tensorboard_log" / project / exp
    p = tb_file(d / f"events.out.tfevents.{int(clock(0) - 600)}.dsw-318822-7f9c6.61742.0", events)
    mt[p] = clock.end


def w_openrlhf_tb(run: dict, folder: Path, clock: Clock, mt: dict, *, run_name: str, ds: str = "math500",
                  progress: bool = False, episodes: int = 1) -> None:
    """OpenRLHF (v0.10) TensorBoard: train/<status key> every step, eval/<key> on eval steps; optional launcher
    stdout with the tqdm bar over the episode."""
    planned, reached = run["planned"], run["reached"]
    events = []
    for s, v in run["train"]:
        d = {"train/policy_loss": v["loss"], "train/actor_lr": v["lr"], "train/actor_grad_norm": v["grad_norm"],
             "train/kl": v["kl"], "train/reward": v["reward"], "train/return": v["reward"] - 0.001 * v["kl"],
             "train/response_length": v["len"], "train/total_length": v["len"] + 142.0, "train/truncated": v["trunc"],
             "train/ppo_clip_ratio": v["clip"], "train/ppo_kl": v["clip"] * 0.003, "train/vllm_kl": 0.0011,
             "train/group_reward_std": v.get("group_std", 0.0), "train/rollout/reward_mean": v["reward"],
             "train/rollout/reward_std": v["reward_std"], "train/rollout/response_length_mean": v["len"],
             "train/rollout/truncated_rate": v["trunc"], "train/rollout/num_samples": 1024.0,
             "train/timing/generation": v["step_time"] * 0.7, "train/timing/make_experience": v["step_time"] * 0.12,
             "train/timing/ppo_train": v["step_time"] * 0.16, "train/timing/broadcast": v["step_time"] * 0.02,
             "train/timing/step_total": v["step_time"], "train/global_step": float(s)}
        d.update({"train/" + k: x for k, x in v.items() if k.startswith("x/")})
        events.append((clock(s), s, d))
    for s, v in run["eval"]:
        d = {f"eval/eval_{ds}_pass1" if k == "pass1" else f"eval/{k}": x for k, x in v.items()}
        d[f"eval/eval_{ds}_response_length_mean"] = dict(run["train"]).get(s, run["train"][-1][1])["len"]
        d["eval/eval_num_samples"] = 500.0
        events.append((clock(s) + 40, s, d))
    events.sort(key=lambda e: (e[1], e[0]))
    d = folder / "tensorboard" / run_name
    p = tb_file(d / f"events.out.tfevents.{int(clock(0) - 200)}.ray-head-0.18821.0", events)
    mt[p] = clock.end
    if progress:
        segs = [tq_bar(s, planned, clock.sps, f"Episode [1/{episodes}]") for s in range(0, reached + 1, 5)]
        (folder / "ppo_launch.log").write_text(
            f"[{tstr(clock(0) - 250)}] [INFO] [openrlhf] Using DeepSpeed ZeRO-3\n"
            + "\r".join(segs))


def w_nemo(run: dict, folder: Path, clock: Clock, mt: dict, *, exp_no: int = 3) -> None:
    """NeMo-RL log_dir/exp_NNN/tensorboard (validation at step 0, training from 1) and the stdout step banners."""
    planned = run["planned"]
    events = []
    for s, v in run["train"]:
        d = {"train/loss": v["loss"], "train/reward": v["reward"], "train/grad_norm": v["grad_norm"],
             "train/lr": v["lr"], "train/wd": 0.01, "train/kl_penalty": v["kl"],
             "train/approx_entropy": v["entropy"], "train/probs_ratio": 1.0 + 0.3 * v["clip"],
             "train/probs_ratio_clamped": 1.0 + 0.2 * v["clip"], "train/token_mult_prob_error": 1.0 + 0.004 * v["clip"] + 0.006,
             "train/baseline_reward/pct_0": v["pct0"], "train/baseline_reward/pct_1": v["pct1"],
             "train/baseline_reward/pct_mixed": 100 - v["pct0"] - v["pct1"],
             "train/mean_gen_tokens_per_sample": v["len"], "train/truncation_rate": v["trunc"],
             "train/natural_termination_rate": 1 - v["trunc"],
             "timing/train/total_step_time": v["step_time"], "timing/train/generation": v["step_time"] * 0.58,
             "timing/train/policy_training": v["step_time"] * 0.27}
        d.update({k: x for k, x in v.items() if k.startswith("train/")})
        events.append((clock(s), s, d))
    for s, v in run["eval"]:
        d = dict(v)
        d["validation/avg_length"] = dict(run["train"]).get(s, run["train"][0][1])["len"] * 1.02
        events.append((clock(s) + 30 if s else clock(0) - 120, s, d))
    events.sort(key=lambda e: (e[1], e[0]))
    root = folder / "logs" / f"exp_{exp_no:03d}"
    p = tb_file(root / "tensorboard" / f"events.out.tfevents.{int(clock(0) - 300)}.nemo-rl-0.2271.0", events)
    mt[p] = clock.end
    out = ["Loaded train dataset", "▶ Setting up compute cluster...", "▶ Running validation at start..."]
    for s, _ in run["train"]:
        out.append(f"\n{'=' * 25} Step {s}/{planned} {'=' * 25}")
        out.append("▶ Preparing batch...\n▶ Generating responses for batch of size 512...\n▶ Training policy...")
    (folder / "logs" / f"exp_{exp_no:03d}" / "stdout.log").write_text("\n".join(out) + "\n")


def w_wandb_csv(run: dict, folder: Path, clock: Clock, mt: dict, *, run_name: str,
                panels: dict[str, tuple[str, str]]) -> None:
    """W&B panel exports ('Export panel data -> CSV'): x column train/global_step, then '<run> - <key>' with
    __MIN / __MAX band columns; one file per panel, empty cells where the run has no value."""
    exported = clock.end
    for i, (fname, key) in enumerate(panels.items()):
        key, src = key
        if key.startswith("eval/"):
            pts = [(s, v[src]) for s, v in run["eval"] if src in v]
        else:
            pts = [(s, v[src]) for s, v in run["train"] if src in v]
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        col = f"{run_name} - {key}"
        w.writerow(["train/global_step", col, col + "__MIN", col + "__MAX"])
        for s, x in pts:
            w.writerow([s, repr(r6(x)), repr(r6(x)), repr(r6(x))])
        t = exported + 40 * i
        path = folder / f"wandb_export_{tstr(t, '%Y-%m-%dT%H_%M_%S')}.{137 + 71 * i:03d}+01_00_{fname}.csv"
        path.write_text(buf.getvalue())
        mt[path] = t


def w_rasbt(run: dict, folder: Path, clock: Clock, mt: dict, *, script: str = "7_5_plus_kl") -> None:
    """reasoning-from-scratch ch07 script CSV: one row per step (one prompt, several rollouts), eval_acc as a
    fraction on checkpoint steps only, plus the human-readable txt log."""
    planned = run["planned"]
    evs = dict(run["eval"])
    logs = folder / "logs"
    logs.mkdir(parents=True)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["step", "total_steps", "loss", "kl_loss", "policy_ratio", "reward_avg", "tokens_per_sec",
                "avg_response_len", "adv_avg", "adv_std", "entropy_avg", "eval_acc"])
    txt = []
    for s, v in run["train"]:
        flat = v["reward_std"] < 1e-9
        loss = 0.0 if flat else v["x_pg"] + v["kl"] * 0.02
        ratio = "" if flat else f"{1 + 0.01 * v['clip']:.4f}"
        adv_std = 0.0 if flat else 0.9354
        ev = evs.get(s)
        w.writerow([s, planned, f"{loss:.4f}", f"{v['kl'] * 0.02:.4f}", ratio, f"{v['reward']:.3f}",
                    f"{v['x_tps']:.1f}", f"{v['len']:.1f}", "0.0000", f"{adv_std:.4f}", f"{v['entropy']:.4f}",
                    f"{ev['eval_acc']:.6f}" if ev else ""])
        txt.append(f"[Step {s}/{planned}] loss={loss:.4f} reward_avg={v['reward']:.3f} "
                   f"avg_resp_len={v['len']:.1f}" + (f" eval_acc={ev['eval_acc']:.4f}" if ev else ""))
    (logs / f"{script}_metrics.csv").write_text(buf.getvalue())
    (logs / f"{script}_metrics.txt").write_text("\n".join(txt) + "\n")


def w_custom_csv(run: dict, folder: Path, clock: Clock, mt: dict, *, eval_key: str, config: dict) -> None:
    """A hand-written GRPO loop: metrics.csv with an eval column empty except on eval steps, and its config."""
    evs = dict(run["eval"])
    cols = ["step", "wall_time", "reward_mean", "reward_std", "frac_all_correct", "frac_all_wrong", "kl_ref",
            "entropy", "resp_len_mean", "resp_truncated", "grad_norm", "lr", eval_key]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for s, v in run["train"]:
        ev = evs.get(s)
        w.writerow([s, f"{clock(s):.1f}", f"{v['reward']:.4f}", f"{v['reward_std']:.4f}", f"{v['pct1'] / 100:.4f}",
                    f"{v['pct0'] / 100:.4f}", f"{v['kl']:.5f}", f"{v['entropy']:.4f}", f"{v['len']:.1f}",
                    f"{v['trunc']:.4f}", f"{v['grad_norm']:.4f}", f"{v['lr']:.3e}",
                    f"{ev[eval_key]:.4f}" if ev else ""])
    (folder / "metrics.csv").write_text(buf.getvalue())
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    mt[folder / "config.json"] = clock(0) - 60


def w_custom_jsonl(run: dict, folder: Path, clock: Clock, mt: dict, *, config: str, eval_file: str | None = None,
                   log_tail: list[str] | None = None, names: dict | None = None) -> None:
    """A hand-written loop: one JSON object per step in logs/metrics.jsonl, evals in their own file, the config
    and the process log."""
    names = names or {"reward": "reward/mean", "reward_std": "reward/std", "kl": "kl", "entropy": "entropy",
                      "len": "len/mean", "trunc": "len/clipped_frac", "grad_norm": "grad_norm", "lr": "lr"}
    logs = folder / "logs"
    logs.mkdir(parents=True)
    lines = []
    for s, v in run["train"]:
        obj = {"step": s, "time": round(clock(s), 2)}
        obj.update({n: r6(v[k]) for k, n in names.items()})
        lines.append(json.dumps(obj))
    (logs / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    if eval_file:
        ev = [json.dumps({"step": s, **{k: r6(x) for k, x in v.items()}, "time": round(clock(s) + 50, 2)})
              for s, v in run["eval"]]
        (logs / eval_file).write_text("\n".join(ev) + "\n")
        if run["eval"]:
            mt[logs / eval_file] = clock(run["eval"][-1][0]) + 50
    (folder / "config.yaml").write_text(config)
    mt[folder / "config.yaml"] = clock(0) - 120
    log = [f"{tstr(clock(0) - 100)} | INFO | starting run, world_size=8", f"{tstr(clock(0) - 90)} | INFO | "
           "vLLM engine ready (tp=1, gpu_memory_utilization=0.45)"]
    for s, v in run["train"]:
        if s % 50 == 0:
            log.append(f"{tstr(clock(s))} | INFO | step {s} reward={v['reward']:.3f} kl={v['kl']:.4f} "
                       f"len={v['len']:.0f}")
        if s % 100 == 0:
            log.append(f"{tstr(clock(s) + 20)} | INFO | saved ckpt/step_{s:06d}")
    log += log_tail or []
    (logs / "run.log").write_text("\n".join(log) + "\n")


def w_mlflow(run: dict, folder: Path, clock: Clock, mt: dict, *, run_name: str, eval_key: str) -> None:
    """MLflow file store as the HF MLflow callback fills it (raw TRL keys, '/' -> nested folders)."""
    exp_id, rid = "712093386420533591", "c41d7a0e95b84f0fa2b6e1d3a9c07f18"
    exp = folder / "mlruns" / exp_id
    rd = exp / rid
    for sub in ("metrics", "params", "tags", "artifacts"):
        (rd / sub).mkdir(parents=True)
    start = int(clock(0) * 1000)
    (exp / "meta.yaml").write_text(f"artifact_location: file:///home/rl/mlruns/{exp_id}\ncreation_time: {start}\n"
                                   f"experiment_id: '{exp_id}'\nlast_update_time: {start}\nlifecycle_stage: active\n"
                                   f"name: rloo-gsm8k\n")
    (rd / "meta.yaml").write_text(f"artifact_uri: file:///home/rl/mlruns/{exp_id}/{rid}/artifacts\nend_time: null\n"
                                  f"entry_point_name: ''\nexperiment_id: '{exp_id}'\nlifecycle_stage: active\n"
                                  f"run_id: {rid}\nrun_name: {run_name}\nrun_uuid: {rid}\nsource_name: ''\n"
                                  f"source_type: 4\nsource_version: ''\nstart_time: {start}\nstatus: 1\ntags: []\n"
                                  f"user_id: rl\n")
    for k, x in dict(max_steps=run["planned"], logging_steps=10, eval_steps=100, learning_rate="1e-06", beta=0.05,
                     num_generations=2, per_device_train_batch_size=16, save_steps=100).items():
        (rd / "params" / k).write_text(str(x))
    (rd / "tags" / "mlflow.runName").write_text(run_name)
    (rd / "tags" / "mlflow.user").write_text("rl")
    rows = trl_train_rows(run, kind="grpo", version=(0, 24), beta=0.05, fns={"correctness_reward": "reward"},
                          cap=512, steps_per_epoch=run["planned"])
    lines: dict[str, list[str]] = {}
    for r in rows:
        s = r["step"]
        for k, x in r.items():
            if k != "step":
                lines.setdefault(k, []).append(f"{int(clock(s) * 1000)} {x!r} {s}")
    for s, v in run["eval"]:
        acc = v[eval_key]
        for k, x in {eval_key: acc, "eval_reward": acc, "eval_runtime": 188.4, "eval_loss": 0.0}.items():
            lines.setdefault(k, []).append(f"{int((clock(s) + 190) * 1000)} {x!r} {s}")
    for k, ls in lines.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")


# ------------------------------------------------------------------------------------------------------ the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable  # (run, folder, clock, mtimes) -> None
    seed: int
    reached: int
    planned: int
    label: str  # ok | stop | conv | rb | sor
    onset: int | None
    tags: str
    why: str
    hooks: dict = field(default_factory=dict)  # extra run entries (e.g. lr_before for a relaunch)

    def labels(self) -> dict:
        if self.label == "ok":
            return HEALTHY
        if self.label == "conv":
            return converged()
        if self.label == "stop":
            return stop(self.onset)
        lo, hi = window(self.story, self.reached, self.onset)
        return (rollback if self.label == "rb" else stop_or_rollback)(lo, hi, self.onset)

    def reasoning(self) -> str:
        st = self.story
        steps = st.headline_steps(self.reached)
        best = max(steps, key=st.headline_level)
        fill = dict(best=best, bestv=st.headline_level(best), sd=st.headline_sd(st.headline_level(best)))
        if self.label in ("rb", "sor"):
            fill["lo"], fill["hi"] = window(st, self.reached, self.onset)
        return self.why.format(**fill)

    def case(self) -> Case:
        return Case(self.name, self.story.draw, self.write, self.seed, (self.reached, self.planned), self.labels(),
                    self.tags, self.reasoning())


def W(fn: Callable, **kw) -> Callable:
    return lambda run, folder, clock, mt: fn(run, folder, clock, mt, **kw)


MATH500 = "val-core/HuggingFaceH4/MATH-500/acc/mean@1"
GSM8K = "val-core/openai/gsm8k/reward/mean@1"


SPECS: list[Spec] = []


def add(*specs: Spec) -> None:
    SPECS.extend(specs)


# ---- story A: an early dip while responses lengthen, judged at its bottom and just after it recovers (verl console)

A = Story(
    reward=pw((0, .300), (20, .292), (55, .250), (100, .300), (160, .345), (300, .420), (600, .49)),
    evals={MATH500: (pw((0, .310), (30, .300), (60, .290), (90, .306), (120, .330), (160, .352), (300, .44),
                         (600, .49)), 500)},
    eval_steps=steps_from(0, 10, 600), headline=MATH500, P=128, G=8, spread=1.7,
    side=dict(len=pw((0, 420), (60, 790), (120, 720), (600, 660)), entropy=pw((0, .55), (55, .71), (150, .50),
              (600, .40)), trunc=pw((0, .008), (55, .085), (120, .028), (600, .02)), kl=pw((0, 0), (600, .004)),
              clip=const(.0025), grad_norm=pw((0, .32), (55, .45), (120, .30)), lr=const(1e-6),
              step_time=pw((0, 70), (60, 118), (600, 104))),
    sec_per_step=95, age_min=2)
add(
    Spec("ok-early-dip-judged-at-bottom-lengths-double-score-turning-up-verl-console-np2-step-90-of-600", A,
         W(w_verl_console, np2=True, cap=1024, save_freq=50, project="verl_grpo_math",
           exp="qwen25_math_1p5b_grpo_n8"), 2801, 90, 600, "ok", None,
         "healthy verl console np2 early-dip lengths-double live early",
         "verl GRPO, Qwen2.5-Math-1.5B, 600 planned steps, judged live at step 90 (15 %). In the first 55 steps "
         "responses nearly double (420 -> 790 tokens), truncation climbs to ~8 % and the train score sags from "
         "0.30 to 0.25, then turns up (0.29 at step 90: +0.04 over 35 steps; one batch mean has sd ~0.025, so it "
         "shows in a 10-step average). MATH-500 "
         "val (N=500, sd 0.021) barely moved: 0.31 -> 0.29 at the bottom (1 sd) and back to ~0.31. This is the "
         "usual length-growth transition of a math GRPO run, not a breakage: truncation is easing, grad norm and "
         "entropy are settling, and there is no earlier model worth restoring (step 0 is the base model). "
         "Continue."),
    Spec("ok-early-dip-recovered-val-above-start-2sd-verl-console-np2-step-160-of-600", A,
         W(w_verl_console, np2=True, cap=1024, save_freq=50, project="verl_grpo_math",
           exp="qwen25_math_1p5b_grpo_n8"), 2801, 160, 600, "ok", None,
         "healthy verl console np2 early-dip-recovered live early",
         "The same verl GRPO run judged later, at step 160 of 600. The early dip (train score 0.30 -> 0.25 around "
         "step 55 while responses lengthened 420 -> 790 tokens) is over: score 0.345 and rising, truncation back "
         "to ~3 %, MATH-500 val (N=500, sd 0.021) 0.31 -> 0.35, two sd above where it started and still rising. "
         "The old minimum is history, not a reason to stop or roll back. Continue."),
)

# ---- story B: rise, creep, then a slow slide; TRL checkpoints only, judged at three points of a 3000-step plan

B = Story(
    reward=pw((0, .33), (300, .43), (600, .50), (1100, .55), (1300, .58), (2100, .60), (3000, .61)),
    evals={"eval_rewards/accuracy_reward/mean": (
        pw((0, .35), (300, .42), (600, .47), (900, .49), (1100, .50), (1300, .505), (1500, .49), (1700, .465),
           (1900, .44), (2100, .41), (3000, .39)), 256)},
    eval_steps=steps_from(100, 100, 3000), headline="eval_rewards/accuracy_reward/mean", log_every=10,
    side=dict(kl=pw((0, 0), (1300, .020), (2100, .062)), entropy=pw((0, .45), (1300, .32), (2100, .17)),
              len=pw((0, 380), (1300, 450), (2100, 530)), trunc=pw((0, .01), (1300, .015), (2100, .05)),
              grad_norm=const(.18), lr=const(1e-6), clip=const(0.0)),
    sec_per_step=45)
B_WRITE = dict(kind="grpo", version=(0, 19), beta=0.01, logging_steps=10, eval_steps=100, save_steps=100, limit=3,
               n_eval=256)
B700 = Story(**{**B.__dict__, "age_min": 14})
B1300 = Story(**{**B.__dict__, "age_min": 31})
B2100 = Story(**{**B.__dict__, "age_min": 9})
add(
    Spec("ok-trl019-ckpts-only-limit3-eval-256-rising-700-of-3000", B700, W(w_trl, **B_WRITE), 2802, 700, 3000,
         "ok", None, "healthy trl-state checkpoints-only live early eval-small",
         "TRL 0.19 GRPO (beta 0.01) writing trainer_state.json only in checkpoint folders (save every 100, "
         "save_total_limit 3), judged at checkpoint-700 of 3000. Held-out accuracy on 256 prompts (sd ~0.031) "
         "climbs 0.37 -> 0.48 from step 100 to 700, train reward 0.33 -> 0.52, KL 0.01, entropy easing 0.45 -> "
         "0.39. Clearly still learning with 77 % of the budget left. Continue."),
    Spec("ok-trl019-ckpts-only-near-plateau-still-creeping-1300-of-3000", B1300, W(w_trl, **B_WRITE), 2802, 1300,
         3000, "ok", None, "healthy trl-state checkpoints-only live mid near-plateau creeping",
         "The same TRL 0.19 GRPO run judged at checkpoint-1300 of 3000 (the newest write is half an hour old, "
         "within one save interval of ~75 min). Held-out accuracy (N=256, sd 0.031) is flattening but has not "
         "stopped: noise-free 0.47 (600) -> 0.49 (900) -> 0.50 (1100) -> 0.505 (1300); train reward still rising "
         "0.50 -> 0.58; KL 0.02 and entropy 0.32 move slowly and steadily. Nothing has broken and 57 % of the "
         "budget is left: holding and still creeping up is continue, not stop."),
    Spec("rb-trl019-ckpts-only-slow-slide-3sd-over-800-steps-best-ckpt-rotated-out-2100-of-3000", B2100, W(w_trl, **B_WRITE),
         2802, 2100, 3000, "rb", 1300, "rollback trl-state checkpoints-only live mid slow-slide eval-small",
         "The same TRL 0.19 GRPO run judged at checkpoint-2100 of 3000. Held-out accuracy (N=256, sd {sd:.3f}) "
         "peaked at {bestv:.3f} around step {best} and slid slowly over 800 steps to 0.41 (3 sd below the "
         "peak, only ~0.5 sd per eval interval and hidden in the eval noise), while train reward kept inching up 0.58 -> "
         "0.60, KL tripled 0.020 -> 0.062 and entropy fell 0.32 -> 0.17: the policy is narrowing onto the "
         "training prompts. A better model lies behind. save_total_limit=3 has already deleted every checkpoint "
         "before 1900, so the target has to come from elsewhere, but the verdict stands: roll back to "
         "[{lo}, {hi}] (newest as-good step {hi})."),
)

# ---- single stories

add(Spec(
    "ok-trl021-ckpts-plus-hf-tb-eval-120-every-150-last-eval-drops-0.12-level-rising-940-of-2000",
    Story(reward=pw((0, .26), (300, .36), (600, .42), (940, .47), (2000, .55)),
          evals={"eval_rewards/accuracy_reward/mean": (pw((0, .26), (150, .29), (300, .33), (450, .36), (600, .38),
                                                           (750, .40), (900, .42), (2000, .50)), 120)},
          eval_steps=steps_from(150, 150, 2000), headline="eval_rewards/accuracy_reward/mean", log_every=10,
          side=dict(entropy=pw((0, .50), (940, .38)), len=pw((0, 310), (940, 380)), trunc=const(.006),
                    grad_norm=const(.22), lr=pw((0, 0), (50, 2e-6), (2000, 2e-6)), kl=const(0.0)),
          sec_per_step=38, age_min=1.5),
    W(w_trl, kind="grpo", version=(0, 21), beta=0.0, logging_steps=10, eval_steps=150, save_steps=100, limit=2,
      tb=True, n_eval=120, host="a100-pod-3"), 3867, 940, 2000, "ok", None,
    "healthy trl-state hf-tensorboard live mid eval-small noisy-last-point",
    "TRL 0.21 GRPO (beta 0, so no kl key), checkpoints every 100 (limit 2) plus the HF TensorBoard log, which is "
    "newer than the last checkpoint (step 940 vs checkpoint-900). Held-out accuracy on only 120 prompts every 150 "
    "steps (sd ~0.045). The last eval, at 900, reads 0.32 against 0.44 at 750 (a drop of 2.8 single-eval sd, "
    "the lowest since step 150), but the noise-free level is still rising (0.40 -> 0.42) and so is the train reward, smoothly (0.42 -> 0.47 over the last 340 steps, "
    "logged means of 10 batches). A single low draw on 120 problems is noise. 53 % of the budget left: continue."))

add(Spec(
    "ok-trl023-resumed-at-600-with-temperature-1.0-train-reward-drops-0.1-greedy-eval-keeps-rising-hf-tb",
    Story(reward=lambda s: (pw((0, .35), (300, .52), (600, .60))(s) if s <= 600 else
                            pw((600, .50), (1100, .585), (1600, .62))(s)),
          evals={"eval_rewards/accuracy_reward/mean": (pw((0, .30), (100, .33), (600, .47), (1100, .52),
                                                           (1600, .55)), 500)},
          eval_steps=steps_from(100, 100, 1600), headline="eval_rewards/accuracy_reward/mean", log_every=10,
          side=dict(entropy=lambda s: pw((0, .40), (600, .22))(s) if s <= 600 else pw((600, .41), (1100, .33))(s),
                    len=lambda s: pw((0, 330), (600, 410))(s) if s <= 600 else pw((600, 455), (1100, 470))(s),
                    trunc=const(.01), grad_norm=const(.2), lr=const(1e-6)),
          sec_per_step=42, age_min=3),
    W(w_trl, kind="grpo", version=(0, 23), beta=0.0, logging_steps=10, eval_steps=100, save_steps=200, limit=3,
      tb=True, resume=(600, 600), n_eval=500, host="h100-node-12"), 2816, 1100, 1600, "ok", None,
    "healthy trl-state hf-tensorboard resume headline-looks-bad temperature live",
    "TRL 0.23 GRPO. At checkpoint-600 the operator stopped the run because entropy had fallen 0.40 -> 0.22 and "
    "relaunched it with sampling temperature 0.7 -> 1.0 (a second runs/ folder). Sampled train reward drops "
    "at once from 0.60 to 0.50 and entropy jumps back to 0.41; since then train reward has climbed back to "
    "0.585. The held-out eval (greedy, N=500, sd 0.022) never noticed the change: 0.47 at 600 -> 0.52 at 1100, "
    "rising steadily. The train-reward cliff is the sampling temperature, not a worse model. Live, 500 steps "
    "left: continue."))

add(Spec(
    "ok-verl-jsonl-val-creeps-2sd-over-550-steps-looks-flat-constant-lr-1050-of-1500",
    Story(reward=pw((0, .45), (300, .60), (500, .63), (1050, .665), (1500, .69)),
          evals={MATH500: (pw((0, .40), (150, .52), (300, .58), (500, .612), (1050, .655), (1500, .69)), 500)},
          eval_steps=steps_from(0, 50, 1500), headline=MATH500, P=64, G=8,
          side=dict(kl=pw((0, .0005), (1050, .0041)), entropy=pw((0, .50), (500, .41), (1050, .38)),
                    len=pw((0, 640), (500, 720), (1050, 760)), trunc=const(.012), grad_norm=const(.16),
                    lr=const(1e-6), clip=const(.003), step_time=const(88)),
          sec_per_step=88, age_min=3),
    W(w_verl_jsonl, project="math_grpo", exp="qwen3_4b_base_grpo", cap=4096, total_epochs=None, total_steps=1500,
      test_freq=50, save_freq=100), 2817, 1050, 1500, "ok", None,
    "healthy verl jsonl hydra-config live late near-plateau creeping",
    "verl GRPO file logger (JSONL) with the Hydra config (total_training_steps 1500), judged live at step 1050 "
    "(70 %). After the fast early rise, MATH-500 val (N=500, sd 0.021) creeps from 0.612 at step 500 to 0.655 "
    "at 1050: 2 sd over 550 steps, invisible between neighbouring evals but clear across the eleven of them; "
    "train score creeps the same way (0.63 -> 0.665), KL small (0.004), entropy steady, constant LR. Still "
    "improving at ~0.008 per 100 steps with 450 steps left: continue."))

add(Spec(
    "ok-openrlhf-tb-reinforcepp-step-60-of-1200-warmup-just-done-reward-barely-moved-grad-norm-settling",
    Story(reward=pw((0, .310), (30, .318), (60, .352), (1200, .60)),
          evals={"pass1": (pw((0, .30), (50, .33), (1200, .55)), 500)}, eval_steps=[50],
          headline="pass1", P=128, G=4, spread=1.6,
          side=dict(kl=pw((0, 0), (60, .0009)), len=pw((0, 980), (60, 1010)), trunc=const(.02),
                    grad_norm=pw((0, .9), (30, .35), (60, .3)), lr=pw((0, 0), (30, 5e-7), (1200, 5e-7)),
                    clip=pw((0, .06), (30, .015)), step_time=const(140)),
          sec_per_step=140, age_min=1),
    W(w_openrlhf_tb, run_name="qwen25_7b_rpp_math_1201", ds="math500", progress=True), 2818, 60, 1200, "ok",
    None, "healthy openrlhf tensorboard live very-early warmup",
    "OpenRLHF REINFORCE++ (TensorBoard plus the launcher log with the tqdm bar, 60/1200). LR warm-up over the "
    "first 30 steps; the train reward (128 prompts x 4, batch sd ~0.029) has moved only 0.31 -> 0.35 and "
    "the one eval so far (step 50, N=500, sd 0.021) reads 0.30, no visible gain yet; grad norm settles from "
    "~0.9 to 0.3 after warm-up, KL 0.001. Five percent into the plan nothing is wrong and nothing can be "
    "judged converged. Continue."))

add(Spec(
    "ok-trl017-console-finished-800-of-800-eval-still-rising-extend",
    Story(reward=pw((0, .30), (400, .43), (800, .53)),
          evals={"eval_rewards/accuracy_reward/mean": (pw((0, .28), (400, .40), (800, .475)), 200)},
          eval_steps=steps_from(100, 100, 800), headline="eval_rewards/accuracy_reward/mean", log_every=10,
          side=dict(entropy=pw((0, .42), (800, .33)), len=pw((0, 260), (800, 300)), grad_norm=const(.2),
                    lr=pw((0, 1e-6), (800, 1e-6)), clip=const(.0), kl=pw((0, 0), (800, .012))),
          sec_per_step=30, age_min=55),
    W(w_trl_console, version=(0, 17), beta=0.04, logging_steps=10, n_eval=200, finished=True, examples=7473,
      model="Qwen/Qwen2.5-0.5B-Instruct"), 2842, 800, 800, "ok", None,
    "healthy trl-console finished still-rising extend",
    "TRL 0.17 GRPO console log (dicts per log call, tqdm 800/800 and the train_runtime summary): the run "
    "finished its planned 800 steps an hour ago. Held-out accuracy (N=200, sd ~0.035) was still rising at the "
    "end: noise-free 0.40 at 400 -> 0.475 at 800, about +0.02 per 100 steps with no sign of bending; train "
    "reward rising 0.43 -> 0.53 over the same span, KL 0.012, entropy easing gently, constant LR. The final "
    "weights are the best so far and more steps would very likely pay: continue (extend the run)."))

add(Spec(
    "ok-rasbt-7_5-csv-one-prompt-per-step-eval-100-problems-two-low-evals-level-rising-420-of-600",
    Story(reward=pw((0, .20), (420, .40), (600, .45)),
          evals={"eval_acc": (pw((0, .22), (150, .29), (300, .34), (420, .37), (600, .41)), 100)},
          eval_steps=steps_from(50, 50, 600), headline="eval_acc", P=1, G=8, spread=1.8,
          side=dict(kl=pw((0, .2), (420, 2.4)), entropy=pw((0, .62), (420, .49)), len=pw((0, 380), (420, 520)),
                    clip=const(.5)),
          extra={"x_pg": (const(0.0), 35.0, "add"), "x_tps": (const(410.0), .05, "mul")},
          sec_per_step=24, age_min=2),
    W(w_rasbt, script="7_5_plus_kl"), 2841, 420, 600, "ok", None,
    "healthy rasbt csv tiny-batch eval-small noisy-last-points live late",
    "reasoning-from-scratch ch07 script (7_5_plus_kl CSV): one prompt x 8 rollouts per step, so reward_avg "
    "jumps between 0 and 1 and adv_std is 0 on many steps; eval_acc every 50 steps on a 100-problem MATH-500 "
    "slice (sd ~0.047). The last two evals draw low (0.30 and 0.31 after 0.42 at step 300), but the noise-free "
    "accuracy is still climbing (0.34 at 300 -> 0.36 at 400) and the 50-step mean of reward_avg rises with it "
    "(~0.34 -> 0.40). With N=100 a swing of "
    "0.05-0.08 is one to two sd. Live at 70 % of 600 steps: continue."))

add(Spec(
    "ok-nemo-tb-epoch-refilter-sawtooth-train-reward-validation-rising-640-of-900",
    Story(reward=lambda s: (pw((0, .36), (300, .56))(s) if s <= 300 else
                            pw((300, .40), (600, .58))(s) if s <= 600 else pw((600, .42), (900, .58))(s)),
          evals={"validation/accuracy": (pw((0, .30), (300, .40), (600, .46), (900, .50)), 500)},
          eval_steps=steps_from(0, 30, 900), headline="validation/accuracy", P=64, G=16, spread=1.4,
          side=dict(kl=pw((0, 0), (640, .006)), entropy=pw((0, .48), (640, .36)), len=pw((0, 520), (640, 600)),
                    trunc=const(.012), grad_norm=const(.11), lr=const(2e-6), clip=const(.02),
                    step_time=const(66)),
          sec_per_step=66, age_min=2),
    W(w_nemo, exp_no=4), 2820, 640, 900, "ok", None,
    "healthy nemo tensorboard live late sawtooth headline-looks-bad curriculum",
    "NeMo-RL GRPO with a curriculum that re-filters the prompt pool at each epoch (every 300 steps): prompts "
    "the policy already solves are dropped, so the train reward saws 0.56 -> 0.40 at step 300 and 0.58 -> 0.42 "
    "at 600, and baseline_reward/pct_1 collapses at each boundary. Validation accuracy (N=500 every 30 steps, "
    "sd 0.022) ignores the sawtooth and rises steadily 0.30 -> 0.47 by 640. The train drops are the data "
    "changing, not the model getting worse. 260 steps left: continue."))

add(Spec(
    "rb-openrlhf-tb-grader-hot-reload-accepts-any-boxed-at-640-reward-0.46-to-0.85-eval-falls-6sd",
    Story(reward=pw((0, .30), (640, .46), (670, .80), (800, .86)),
          evals={"pass1": (pw((0, .27), (320, .40), (560, .455), (640, .47), (680, .42), (760, .35), (800, .33)),
                           500)},
          eval_steps=steps_from(40, 40, 800), headline="pass1", P=128, G=8,
          side=dict(kl=pw((0, 0), (640, .011), (800, .09)), len=pw((0, 900), (640, 950), (690, 270), (800, 250)),
                    trunc=pw((0, .03), (640, .03), (690, .0)), grad_norm=pw((0, .3), (640, .3), (680, .8), (800, .5)),
                    lr=const(5e-7), clip=const(.03), step_time=pw((0, 150), (640, 150), (700, 60))),
          sec_per_step=120, age_min=4),
    W(w_openrlhf_tb, run_name="qwen25_7b_grpo_remote_rm"), 2821, 800, 1200, "rb", 640,
    "rollback openrlhf tensorboard reward-hacking grader-change eval-falls live",
    "OpenRLHF GRPO with a remote verifier. At step 640 the reward server was hot-reloaded with a regex that "
    "accepts any \\boxed{{}} answer: train reward jumps 0.46 -> 0.80 in 30 steps and on to 0.86, responses "
    "collapse 950 -> 270 tokens, KL climbs 0.011 -> 0.09. The held-out MATH-500 pass@1 (local grader, N=500, "
    "sd {sd:.3f}) peaked at {bestv:.3f} (step {best}) and is 0.33 at 800, over 6 sd down. The model now learns "
    "to game the grader. Roll back to [{lo}, {hi}] (before the reload) and fix the reward."))

add(Spec(
    "rb-trl016-relaunched-from-1200-with-lr-1e-5-typo-kl-0.35-eval-falls-7sd-two-tb-folders",
    Story(reward=lambda s: pw((0, .32), (600, .52), (1000, .57), (1200, .585), (1300, .55), (1500, .38))(s),
          evals={"eval_rewards/accuracy_reward": (pw((0, .28), (100, .30), (600, .50), (1000, .555), (1100, .58),
                                                      (1200, .585), (1300, .55), (1400, .47), (1500, .41)), 400)},
          eval_steps=steps_from(100, 100, 2000), headline="eval_rewards/accuracy_reward", log_every=10,
          side=dict(kl=pw((0, 0), (1200, .012), (1300, .09), (1500, .35)),
                    len=pw((0, 240), (1200, 300), (1500, 520)), grad_norm=pw((0, .2), (1200, .2), (1260, 1.4),
                                                                             (1500, 1.6)),
                    lr=lambda s: 1e-6 if s <= 1200 else min(1e-5, 1e-5 * (s - 1200) / 20),
                    clip=pw((0, .002), (1200, .002), (1300, .05))),
          sec_per_step=36, age_min=2),
    W(w_trl, kind="grpo", version=(0, 16), beta=0.04, logging_steps=10, eval_steps=100, save_steps=200, limit=3,
      tb=True, resume=(1200, 1237), n_eval=400, host="gpu-b200-4"), 2822, 1500, 2000, "rb", 1200,
    "rollback trl-state hf-tensorboard resume lr-misconfig kl-explosion live", (
        "TRL 0.16 GRPO (beta 0.04; keys rewards/accuracy_reward, completion_length, clip_ratio). The first launch "
        "died at step 1237 and was relaunched from checkpoint-1200 with learning_rate 1e-5 instead of 1e-6 (TB "
        "holds both launches in two runs/ folders, steps 1201-1237 twice; learning_rate shows the 10x jump). "
        "From there KL goes 0.012 -> 0.35, grad norm 0.2 -> 1.5, completions lengthen 300 -> 520, and held-out "
        "accuracy (N=400, sd {sd:.3f}) falls from {bestv:.3f} at {best} to 0.41 at 1500 (7 sd). The newest "
        "checkpoint on disk is 1400; checkpoint-1200 is still kept. Roll back to [{lo}, {hi}] and relaunch with "
        "the right LR.")),
    )

add(Spec(
    "stop-mlflow-files-trl-rloo-gsm8k-saturated-0.93-zero-std-0.9-eval-flat-420-of-1500",
    Story(reward=pw((0, .925), (100, .935), (1500, .945)),
          evals={"eval_rewards/correctness_reward/mean": (pw((0, .905), (100, .909), (1500, .912)), 1319)},
          eval_steps=steps_from(100, 100, 1500), headline="eval_rewards/correctness_reward/mean", log_every=10,
          P=32, G=2, spread=2.2,
          side=dict(kl=pw((0, 0), (420, .0028)), entropy=pw((0, .21), (420, .19)), len=const(210),
                    trunc=const(.002), grad_norm=const(.04), lr=const(1e-6), clip=const(.0)),
          sec_per_step=25, age_min=4),
    W(w_mlflow, run_name="rloo-qwen25-14b-gsm8k", eval_key="eval_rewards/correctness_reward/mean"), 2823, 420,
    1500, "stop", 100, "stop mlflow-files trl-rloo saturated no-signal live",
    "TRL RLOO (>=0.22 keys, beta 0.05) logged to an MLflow file store, 420 of 1500 steps. A 14B model on GSM8K "
    "starts saturated: train reward 0.925 -> 0.94, frac_reward_zero_std ~0.9 (with 2 generations per prompt "
    "almost every pair agrees, so almost no sample carries an advantage), grad norm ~0.04. Held-out GSM8K "
    "(N=1319, sd 0.008) sits at 0.905-0.91 on every eval since step 100. There is no learning signal left to "
    "exploit, and the weights are as good as any earlier ones. Stop (fix the data or the task before spending "
    "the remaining 1080 steps)."))

add(Spec(
    "rb-verl-jsonl-entropy-blowup-at-935-gibberish-to-length-cap-score-0.05-live-990-of-1200",
    Story(reward=pw((0, .30), (600, .51), (900, .55), (935, .55), (960, .06), (990, .04)),
          evals={MATH500: (pw((0, .28), (600, .50), (900, .54), (930, .545), (935, .545), (960, .08), (990, .03)),
                           500)},
          eval_steps=steps_from(0, 30, 1200), headline=MATH500, P=64, G=8,
          side=dict(kl=pw((0, 0), (935, .006), (990, .8)), entropy=pw((0, .40), (935, .33), (960, 3.4), (990, 3.9)),
                    len=pw((0, 700), (935, 820), (960, 3900), (990, 4096)),
                    trunc=pw((0, .01), (935, .015), (960, .9), (990, .97)),
                    grad_norm=pw((0, .2), (935, .2), (950, 4.0), (990, 2.5)), lr=const(1e-6),
                    clip=pw((0, .003), (935, .003), (960, .2)), step_time=pw((0, 95), (935, 100), (970, 260))),
          sec_per_step=110, age_min=2),
    W(w_verl_jsonl, project="dapo_math", exp="qwen3_8b_grpo_t1", cap=4096, total_steps=1200, test_freq=30,
      save_freq=100), 2824, 990, 1200, "rb", 935, "rollback verl jsonl entropy-explosion collapse live late",
    "verl GRPO JSONL, 990 of 1200 steps. Healthy until ~935 (MATH-500 val 0.28 -> {bestv:.3f}, N=500, sd "
    "{sd:.3f}); then within 25 steps entropy blows up 0.33 -> 3.4, responses run to the 4096 cap "
    "(clip_ratio 0.015 -> 0.97), grad norm spikes x20, score falls 0.55 -> 0.05 and val to 0.03. The model "
    "emits gibberish. Roll back to [{lo}, {hi}] (the last val before the blow-up is {hi}; with save_freq 100, "
    "global_step_900 is the newest save inside the window)."))

add(Spec(
    "rb-trl-dpo-finished-3-epochs-eval-pref-acc-peaks-900-slides-3sd-eval-every-300-limit2",
    Story(reward=pw((0, .55), (600, .78), (1200, .90), (1800, .97)), kind="pref", P=64, log_every=10,
          evals={"eval_rewards/accuracies": (pw((0, .60), (300, .70), (600, .735), (900, .74), (1200, .70),
                                              (1500, .67), (1800, .64)), 200)},
          eval_steps=steps_from(300, 300, 1800), headline="eval_rewards/accuracies",
          side=dict(grad_norm=pw((0, 6.0), (1800, 3.5)), lr=pw((0, 5e-7), (1800, 0.0))),
          extra={"loss_dpo": (pw((0, .69), (600, .45), (1200, .30), (1800, .18)), .05, "mul"),
                 "rewards/chosen": (pw((0, 0), (900, -.6), (1800, -1.9)), .08, "add"),
                 "rewards/rejected": (pw((0, 0), (900, -2.3), (1800, -5.6)), .1, "add"),
                 "logps/chosen": (pw((0, -310), (900, -330), (1800, -372)), .02, "mul"),
                 "logps/rejected": (pw((0, -335), (900, -390), (1800, -470)), .02, "mul"),
                 "logits/chosen": (pw((0, -1.1), (1800, -1.5)), .03, "add"),
                 "logits/rejected": (pw((0, -1.0), (1800, -1.35)), .03, "add")},
          eval_extra={"eval_loss": (pw((0, .66), (900, .55), (1800, .71)), .015, "mul"),
                      "eval_rewards/margins": (pw((0, .05), (900, 1.2), (1800, 1.4)), .04, "mul"),
                      "eval_rewards/chosen": (pw((0, 0), (900, -.7), (1800, -2.2)), .03, "add"),
                      "eval_rewards/rejected": (pw((0, 0), (900, -1.9), (1800, -3.6)), .03, "add")},
          sec_per_step=20, age_min=190),
    W(w_trl, kind="dpo", version=(0, 24), logging_steps=10, eval_steps=300, save_steps=300, limit=2,
      steps_per_epoch=600, epochs=3, finished=True, top_level=True, adapter=False), 2825, 1800, 1800, "rb", 900,
    "rollback trl-state dpo finished overfit eval-coarse top-level-state",
    "TRL DPO, 3 epochs (1800 steps), finished three hours ago: top-level trainer_state.json with the final "
    "summary row; save_total_limit 2 kept only checkpoint-1500 and -1800. Train preference accuracy climbs to "
    "0.97 and train loss to 0.18 (memorising the pairs by epoch 3), while eval preference accuracy on 200 "
    "held-out pairs, evaluated only every 300 steps (sd {sd:.3f}), peaked at {bestv:.2f} around {best} and fell "
    "to 0.64 by 1800 (3.2 sd), with eval_loss turning up from 0.55 to 0.71. The final weights are worse than "
    "the epoch-1.5 ones. Roll back to [{lo}, {hi}] (retrain or re-save that point; it is not on disk)."))

add(Spec(
    "rb-custom-jsonl-repetition-collapse-at-760-then-nccl-hang-stalled-6h-no-eval",
    Story(reward=pw((0, .18), (400, .40), (700, .50), (760, .505), (800, .05), (812, .04)), P=32, G=8,
          side=dict(kl=pw((0, 0), (760, .03), (812, .6)), entropy=pw((0, .55), (760, .30), (800, .04)),
                    len=pw((0, 500), (760, 560), (800, 2048)), trunc=pw((0, .01), (760, .02), (800, .96)),
                    grad_norm=pw((0, .3), (760, .3), (790, 2.2), (812, 1.5)), lr=const(1e-6)),
          sec_per_step=55, age_min=6 * 60),
    W(w_custom_jsonl, config="model: Qwen/Qwen2.5-3B-Instruct\nalgo: grpo\ntotal_steps: 1500\nlr: 1.0e-6\n"
                             "group_size: 8\nprompts_per_step: 32\nmax_new_tokens: 2048\nsave_every: 100\n",
      log_tail=["[rank3]:[E ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: "
                "WorkNCCL(SeqNum=48113, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for "
                "1800121 milliseconds before timing out."]),
    2826, 812, 1500, "rb", 760, "rollback custom jsonl stalled repetition-collapse no-eval",
    "Hand-written GRPO loop (logs/metrics.jsonl, one row per step, 32 prompts x 8; no held-out eval) that has "
    "written nothing for 6 hours: run.log ends in an NCCL watchdog timeout at step 812 of 1500. Before the hang "
    "the run broke: from ~760 entropy collapses 0.30 -> 0.04, responses run to the 2048-token cap (clipped "
    "fraction 0.02 -> 0.96: repetition loops) and the train reward falls from {bestv:.3f} to 0.04. The headline "
    "is the train reward (per-step sd {sd:.3f}). Do not just resume from the latest save: roll back to "
    "[{lo}, {hi}] (ckpt/step_000700 is the newest save in it)."))

add(Spec(
    "rb-wandb-csv-trl-rloo-code-sandbox-timeouts-scored-as-pass-from-1500-heldout-pass1-falls-4sd",
    Story(reward=pw((0, .30), (750, .44), (1500, .49), (1600, .70), (2250, .78)),
          evals={"eval/rewards/unit_test_reward/mean": (pw((0, .30), (750, .45), (1250, .50), (1500, .52),
                                                           (1750, .46), (2000, .40), (2250, .36)), 164)},
          eval_steps=steps_from(0, 250, 2250), headline="eval/rewards/unit_test_reward/mean", log_every=10,
          side=dict(len=pw((0, 600), (1500, 640), (1700, 1300), (2250, 1500)), kl=pw((0, 0), (1500, .02),
                                                                                    (2250, .09))),
          sec_per_step=50, age_min=30),
    W(w_wandb_csv, run_name="rloo-qwen25-coder-7b-sandbox",
      panels={"reward": ("train/reward", "reward"),
              "unit_tests": ("train/rewards/unit_test_reward/mean", "reward"),
              "heldout": ("eval/rewards/unit_test_reward/mean", "eval/rewards/unit_test_reward/mean"),
              "length": ("train/completions/mean_length", "len"), "kl": ("train/kl", "kl")}),
    2827, 2250, 3000, "rb", 1500, "rollback wandb-csv trl-rloo reward-hacking eval-coarse eval-small",
    "W&B panel exports (one CSV per panel, x = train/global_step) of a TRL RLOO code run. From ~1500 the "
    "sandbox was moved to a pool whose timeouts were counted as passes: train unit-test reward jumps 0.49 -> "
    "0.78 while completions balloon 640 -> 1500 tokens (loops that time out). The held-out pass rate (164 "
    "problems, strict sandbox, every 250 steps, sd {sd:.3f}) peaked at {bestv:.2f} at {best} and reads ~0.36 "
    "at 2250 (4 sd down). Roll back to [{lo}, {hi}] and fix the sandbox."))

add(Spec(
    "rb-trl020-console-truncation-runaway-from-560-clipped-ratio-0.7-eval-every-50-falls-680-of-1200",
    Story(reward=pw((0, .30), (500, .54), (560, .55), (620, .40), (680, .22)),
          evals={"eval_rewards/accuracy_reward/mean": (pw((0, .25), (50, .25), (250, .40), (400, .48), (500, .52),
                                                           (550, .53), (560, .53), (600, .45), (650, .24),
                                                           (680, .20)), 200)},
          eval_steps=steps_from(50, 50, 1200), headline="eval_rewards/accuracy_reward/mean", log_every=5,
          side=dict(len=pw((0, 520), (560, 610), (680, 1000)), trunc=pw((0, .02), (560, .03), (680, .70)),
                    entropy=pw((0, .36), (560, .30), (680, .90)), grad_norm=pw((0, .25), (560, .25), (680, .9)),
                    lr=const(1e-6)),
          sec_per_step=33, age_min=1),
    W(w_trl_console, version=(0, 20), beta=0.0, logging_steps=5, n_eval=200, cap=1024,
      model="meta-llama/Llama-3.2-3B-Instruct"), 2829, 680, 1200, "rb", 560,
    "rollback trl-console truncation-runaway collapse live",
    "TRL 0.20 GRPO console log, live at 680 of 1200. From ~560 completions run into the 1024-token cap "
    "(completions/clipped_ratio 0.03 -> 0.70, mean length 610 -> 1000), entropy triples and the reward "
    "falls 0.55 -> 0.22 (truncated answers score 0). Held-out accuracy (N=200 every 50, sd {sd:.3f}) peaked at "
    "{bestv:.2f} ({best}) and is ~0.20 at 650-680. Roll back to [{lo}, {hi}]."))

add(Spec(
    "rb-verl-tb-val-every-250-on-300-slides-3.1sd-over-1000-steps-train-score-holds-2250",
    Story(reward=pw((0, .40), (1000, .61), (1250, .62), (2250, .625)),
          evals={MATH500: (pw((0, .40), (500, .50), (1000, .545), (1250, .555), (1500, .53), (1750, .50),
                               (2000, .485), (2250, .465)), 300)},
          eval_steps=steps_from(0, 250, 3000), headline=MATH500, P=128, G=8,
          side=dict(kl=pw((0, 0), (1250, .005), (2250, .028)), entropy=pw((0, .38), (1250, .28), (2250, .12)),
                    len=pw((0, 900), (1250, 820), (2250, 610)), trunc=const(.01), grad_norm=const(.14),
                    lr=const(1e-6), clip=const(.004), step_time=const(160)),
          sec_per_step=160, age_min=4),
    W(w_verl_tb, project="grpo_math", exp="qwen3_1p7b_lr1e-6"), 2830, 2250, 3000, "rb", 1250,
    "rollback verl tensorboard slow-slide eval-coarse headline-train-looks-fine live",
    "verl GRPO on TensorBoard only (raw keys). Validation runs every 250 steps on a 300-problem set (sd "
    "{sd:.3f}): noise-free {bestv:.3f} at {best}, then 0.53, 0.50, 0.485, 0.465 by 2250 (3.1 sd in 1000 steps; "
    "no single step between evals is alarming). Train score holds at ~0.62 the whole time, so the train curve "
    "looks fine; what moves is entropy 0.28 -> 0.12, KL 0.005 -> 0.028 and response length 820 -> 610: the "
    "policy narrows and generalises worse. Roll back to [{lo}, {hi}]."))

add(Spec(
    "sor-custom-csv-eval-150-eases-1.8sd-since-800-live-1400-of-1500",
    Story(reward=pw((0, .42), (600, .58), (800, .60), (1400, .62), (1500, .62)),
          evals={"heldout_acc": (pw((0, .45), (600, .60), (800, .62), (1100, .60), (1400, .549), (1500, .54)),
                                 150)},
          eval_steps=steps_from(100, 100, 1500), headline="heldout_acc", P=48, G=8,
          side=dict(kl=pw((0, 0), (800, .011), (1400, .024)), entropy=pw((0, .44), (800, .33), (1400, .27)),
                    len=pw((0, 350), (1400, 330)), trunc=const(.004), grad_norm=const(.2),
                    lr=pw((0, 1e-6), (1500, 1e-7))),
          sec_per_step=30, age_min=2),
    W(w_custom_csv, eval_key="heldout_acc",
      config={"model": "microsoft/Phi-4-mini-instruct", "total_steps": 1500, "eval_every": 100, "eval_size": 150,
              "group_size": 8, "prompts_per_step": 48, "lr": 1e-6, "schedule": "linear_to_0.1"}),
    2831, 1400, 1500, "sor", 800, "stop-or-rollback custom csv slow-ease eval-small live late",
    "Hand-written GRPO loop (metrics.csv, eval column filled every 100 steps; config.json says 1500 steps), "
    "live at 1400. Held-out accuracy on 150 problems (sd {sd:.3f}) peaked at {bestv:.2f} around {best} and has "
    "eased to ~0.55 by 1400: 1.8 sd, spread over six evals each within noise of the last; train reward flat "
    "~0.61, KL creeping 0.011 -> 0.024. Nothing to gain from the last 100 steps. Whether the ease is real "
    "cannot be told from noise at N=150: stopping is right, going back to [{lo}, {hi}] is as good."))

add(Spec(
    "conv-verl-console-np2-val-flat-0.63-since-1200-cosine-lr-at-floor-1850-of-2000",
    Story(reward=pw((0, .42), (600, .62), (1200, .68), (2000, .685)),
          evals={GSM8K: (pw((0, .45), (600, .59), (1200, .630), (2000, .632)), 500)},
          eval_steps=steps_from(0, 50, 2000), headline=GSM8K, P=64, G=8,
          side=dict(kl=pw((0, 0), (1200, .004), (1850, .0052)), entropy=pw((0, .35), (1200, .24), (1850, .22)),
                    len=pw((0, 210), (1200, 190), (1850, 188)), trunc=const(.001), grad_norm=const(.09),
                    lr=lambda s: 1e-7 + 0.5 * (1e-6 - 1e-7) * (1 + math.cos(math.pi * min(s, 2000) / 2000)),
                    clip=const(.002), step_time=const(52)),
          sec_per_step=52, age_min=2),
    W(w_verl_console, np2=True, cap=1024, save_freq=100, project="gsm8k_grpo", exp="llama31_8b_cosine"), 2832,
    1850, 2000, "conv", 1200, "converged verl console np2 plateau lr-floor live late",
    "verl GRPO console (np.float64 values), live at 1850 of 2000. GSM8K val (N=500, sd 0.022) has been flat at "
    "~0.63 since step 1200 (13 evals within noise), train score flat ~0.68, KL and entropy barely moving, and the "
    "cosine LR is almost at its 1e-7 floor. Converged a little before its planned end: stopping now or letting "
    "the last 150 steps run are both fine."))

add(Spec(
    "stop-custom-jsonl-eval-flat-800-steps-kl-x5-entropy-halves-train-creeps-1320-of-2400",
    Story(reward=pw((0, .40), (500, .60), (1320, .665), (2400, .70)),
          evals={"heldout_acc": (pw((0, .38), (250, .49), (500, .548), (620, .551), (1320, .552), (2400, .55)),
                                 400)},
          eval_steps=steps_from(120, 120, 2400), headline="heldout_acc", P=32, G=16,
          side=dict(kl=pw((0, 0), (500, .018), (1320, .092)), entropy=pw((0, .52), (500, .40), (1320, .20)),
                    len=pw((0, 430), (500, 470), (1320, 400)), trunc=const(.006), grad_norm=const(.21),
                    lr=const(1e-6)),
          sec_per_step=35, age_min=3),
    W(w_custom_jsonl, config="model: google/gemma-3-4b-it\nalgo: grpo\nmax_steps: 2400\nlr: 1.0e-6\n"
                             "kl_coef: 0.0\ngroup_size: 16\nprompts_per_step: 32\neval_every: 120\n"
                             "eval_set: heldout_400\n", eval_file="eval.jsonl"),
    2833, 1320, 2400, "stop", 620, "stop custom jsonl drift-without-decline plateau live mid",
    "Hand-written GRPO loop (logs/metrics.jsonl and logs/eval.jsonl), max_steps 2400, live at 1320 (55 %). The "
    "held-out accuracy (N=400, sd 0.025) rose to ~0.55 by step 500 and has stayed there for 800 steps (seven "
    "evals within noise). Meanwhile the policy keeps moving without paying: KL to the reference 0.018 -> 0.092 "
    "(x5, no KL penalty), entropy 0.40 -> 0.20, and the train reward creeps 0.60 -> 0.665 on prompts it has "
    "now seen several times. Drifting without a decline: the current weights are as good as any, and the "
    "remaining 1080 steps are unlikely to help. Stop."))

add(Spec(
    "rb-trl026-console-break-after-last-eval-at-1400-entropy-and-clipping-run-away-1520-of-2000",
    Story(reward=pw((0, .35), (1000, .56), (1440, .60), (1450, .60), (1490, .42), (1520, .21)),
          evals={"eval_rewards/accuracy_reward/mean": (pw((0, .28), (200, .30), (1000, .50), (1400, .55),
                                                           (1450, .55), (1520, .25), (2000, .25)), 300)},
          eval_steps=steps_from(200, 200, 2000), headline="eval_rewards/accuracy_reward/mean", log_every=10,
          side=dict(entropy=pw((0, .42), (1450, .35), (1520, 1.6)), len=pw((0, 480), (1450, 560), (1520, 980)),
                    trunc=pw((0, .02), (1450, .03), (1520, .60)),
                    grad_norm=pw((0, .25), (1450, .25), (1490, 2.0), (1520, 1.4)), lr=const(1e-6),
                    clip=const(0.0), step_time=pw((0, 44), (1450, 46), (1520, 80))),
          sec_per_step=46, age_min=1),
    W(w_trl_console, version=(0, 26), beta=0.0, logging_steps=10, n_eval=300, cap=1024,
      model="Qwen/Qwen3-4B"), 2834, 1520, 2000, "rb", 1450,
    "rollback trl-console break-after-last-eval headline-looks-fine eval-coarse live",
    "TRL 0.26 GRPO console log, live at 1520 of 2000, eval every 200 steps (N=300, sd {sd:.3f}). The last eval, "
    "at {best}, is the best so far ({bestv:.2f}), so the headline looks fine. But the train log after it shows "
    "the run breaking from ~1450: entropy 0.35 -> 1.6, clipped_ratio 0.03 -> 0.60, grad-norm spikes, step_time "
    "nearly doubling, reward 0.60 -> 0.21 in 70 steps. The next eval (1600) would show it; no need to wait. Roll "
    "back to [{lo}, {hi}] (the newest save at or before {hi})."))

add(Spec(
    "stop-verl-console-finished-700-val-plateau-since-350-last-val-draws-low",
    Story(reward=pw((0, .38), (350, .56), (700, .575)),
          evals={GSM8K: (pw((0, .35), (175, .46), (350, .520), (500, .522), (700, .521)), 300)},
          eval_steps=steps_from(0, 50, 700), headline=GSM8K, P=32, G=8,
          side=dict(kl=pw((0, 0), (350, .004), (700, .007)), entropy=pw((0, .46), (350, .36), (700, .33)),
                    len=pw((0, 260), (700, 240)), trunc=const(.003), grad_norm=const(.12), lr=const(1e-6),
                    clip=const(.002), step_time=const(31)),
          sec_per_step=31, age_min=9 * 60),
    W(w_verl_console, np2=False, cap=1024, save_freq=140, steps_per_epoch=140, finished=True,
      project="gsm8k_grpo", exp="qwen25_1p5b_5ep"), 2837, 700, 700, "stop", 350,
    "stop verl console finished plateau noisy-last-point eval-small",
    "verl GRPO console (plain floats, numpy < 2), 5 epochs x 140 = 700 steps, finished nine hours ago ('Final "
    "validation metrics' printed). GSM8K val on 300 problems (sd 0.029) has been flat at ~0.52 since step 350; "
    "the highest single val (0.58 at step 500) is a high draw and the final one (0.52) sits on the plateau "
    "level, so the final weights only look worse by noise. Train score is flat too. No earlier weights "
    "are really better, and the run did not end while still improving. Stop: keep the final weights."))

add(Spec(
    "rb-nemo-tb-early-lr-too-high-collapse-from-125-validation-every-30-judged-at-180-of-1200",
    Story(reward=pw((0, .30), (60, .41), (120, .48), (125, .48), (150, .42), (180, .36)), P=64, G=16,
          evals={"validation/accuracy": (pw((0, .30), (60, .40), (120, .45), (125, .45), (150, .38), (180, .33),
                                         (1200, .33)), 300)},
          eval_steps=steps_from(0, 30, 1200), headline="validation/accuracy", spread=1.5,
          side=dict(kl=pw((0, 0), (120, .004), (180, .06)), entropy=pw((0, .50), (125, .42), (180, .06)),
                    len=pw((0, 650), (125, 600), (180, 300)), trunc=const(.01),
                    grad_norm=pw((0, .5), (125, .6), (150, 2.2), (180, 1.6)), lr=const(3e-6), clip=const(.04),
                    step_time=const(70)),
          sec_per_step=70, age_min=3),
    W(w_nemo, exp_no=2), 2836, 180, 1200, "rb", 125, "rollback nemo tensorboard entropy-collapse live early",
    "NeMo-RL GRPO with LR 3e-6, judged early (step 180 of 1200). The run learned fast (validation 0.30 -> "
    "{bestv:.2f} by {best}, N=300 every 30 steps, sd {sd:.3f}) and then, from ~125, entropy collapses 0.42 -> "
    "0.06, KL jumps 0.004 -> 0.06, responses halve 600 -> 300 tokens, grad norm x3; train reward 0.48 -> 0.36 "
    "and validation 0.33 (4 sd below the peak). Early in the plan but already past its best: continuing "
    "at this LR will not bring it back. Roll back to [{lo}, {hi}] (and lower the LR)."))


CASES = [s.case() for s in SPECS]
BY_NAME = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    spec = BY_NAME[case.name]
    run = spec.story.draw(case.seed, case.reached, case.planned or case.reached)
    run["log_every"] = spec.story.log_every
    run.update(spec.hooks)
    folder.mkdir(parents=True, exist_ok=True)
    clock = Clock(spec.story, case.reached)
    mt: dict[Path, float] = {}
    case.write(run, folder, clock, mt)
    stamp(folder, clock, mt)


def check(cases: list[Case]) -> None:
    for c in cases:
        spec = BY_NAME[c.name]
        st = spec.story
        steps = st.headline_steps(c.reached)
        best = max(steps, key=st.headline_level)
        bl = st.headline_level(best)
        sd = st.headline_sd(bl)
        last = steps[-1]
        lab = c.labels
        print(f"{c.name}")
        print(f"    {lab.get('preferred')} accept={lab.get('accept')} window={lab.get('rollback_window')} "
              f"onset={lab.get('onset_step')} reached={c.reached}/{c.planned} age={st.age_min:.0f}min")
        print(f"    headline {st.headline}: best {bl:.3f}@{best} last {st.headline_level(last):.3f}@{last} "
              f"sd {sd:.4f} ({(bl - st.headline_level(last)) / sd:.1f} sd below best)")
        run = st.draw(c.seed, c.reached, c.planned or c.reached)
        pts = run["eval"] if st.headline != TRAIN else [(s, {TRAIN: v["reward"]}) for s, v in run["train"]]
        pts = [(s, v[st.headline]) for s, v in pts]
        step = max(1, len(pts) // 14)
        print("    drawn " + " ".join(f"{s}:{x:.3f}" for s, x in pts[::step]) + f" | last {pts[-1][0]}:{pts[-1][1]:.3f}")


HEADER = """# Holdout set 28: hand-built runs written by make_holdout28.py, independent of the assessor, its judges and the
# generators of the other holdout sets. Aimed at noise and timing: small or coarse evals, slow slides of a few
# sampling sd, plateaus that still creep, early dips, runs judged early / mid / late in their plan.
# Labels: what a careful practitioner should do under DESIGN.md's decision contract, read from each story's
# noise-free levels. rollback_window is inclusive: from the first logged headline step whose level is within one
# sampling sd of the best level to the newest such step not after onset_step, in the run's own logged steps.
# Run `.venv/bin/python evals/holdout28/make_holdout28.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout28.py", "holdout28.yaml", "h28-", "holdout28", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
