"""Holdout set 34: blind-labelled RL post-training runs that learn nothing, or learn and then lose it.

Run from the worktree root:
    .venv/bin/python evals/holdout34/make_holdout34.py           # writes runs/ (gitignored) and holdout34.yaml
    .venv/bin/python evals/holdout34/make_holdout34.py --check   # also prints levels and rollback windows

Every case is a noise-free story (piecewise-linear levels per optimizer step for the reward functions, held-out
evals and side signals) drawn through this set's noise model and written the way one framework and version
writes it. Nothing here reads or runs the assessor; the labels come from the stories.

Noise model (this set's own):
  * prompt difficulty is logit-normal: a step's P prompts get solve rates sigmoid(mu + s*z), z ~ N(0, 1), with mu
    chosen so that the mean solve rate equals the story's level; each prompt gets G Bernoulli rollouts. The batch
    mean, the batch std, the per-group std and the share of groups whose G rewards agree all come from the same
    draws, so a hard task shows exact zeros and 1/G-sized blips, and an easy one shows zero-std groups;
  * continuous reward terms (length / brevity scores) are a per-prompt offset plus per-rollout normal noise,
    clipped to [0, 1]; a reward summed over functions is the weighted sum of the per-rollout terms;
  * trainers that log every k steps log the mean of the k batches (TRL) or the current step (OpenRLHF);
  * held-out evals are Binomial(N, p)/N on a fixed set of N problems;
  * grad norm: level * exp(0.3 z), and on ~5 % of steps times (1 + Pareto(1.5)) (a heavy right tail); exactly
    0.0 on steps where every group had zero reward spread and no KL term exists (TRL: the loss is 0);
  * KL, entropy, lengths, clip fractions, timings: AR(1) log-noise (phi 0.7), so neighbouring steps wander
    together instead of jittering independently; truncation rates are Binomial over the batch.

Labels follow DESIGN.md ("What the three decisions mean"). The rollback window runs from the first logged
headline step whose noise-free level is within one sampling sd of the best level (the sd of one eval for an
eval headline, of one logged batch mean for a train headline, from the difficulty model above) to the newest
such step not after onset_step; `--check` prints them.
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


def pw(*pts: tuple[float, float]) -> Level:
    """Piecewise-linear level through (step, value) knots, flat beyond the ends."""
    xs = [float(p[0]) for p in pts]
    ys = [float(p[1]) for p in pts]
    return lambda s: float(np.interp(s, xs, ys))


def flat(v: float) -> Level:
    return lambda s: v


def f32(x: float) -> float:
    """What a float32 tensor's .item() turns into."""
    return float(np.float32(x))


# ------------------------------------------------------------------------------------------- the difficulty model

_GX, _GW = np.polynomial.hermite_e.hermegauss(60)
_GW = _GW / _GW.sum()


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


@cache
def centre(p: float, spread: float) -> float:
    """Logit centre mu with E[sigmoid(mu + spread * z)] = p."""
    lo, hi = -25.0, 25.0
    for _ in range(70):
        mid = (lo + hi) / 2
        if float((_GW * _sig(mid + spread * _GX)).sum()) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clamp(p: float) -> float:
    return min(max(p, 1e-6), 1 - 1e-6)


def batch_sd(p: float, spread: float, P: int, G: int, k: int = 1) -> float:
    """sd of one logged batch mean of binary rewards (k batches averaged)."""
    p = clamp(p)
    q = _sig(centre(round(p, 7), spread) + spread * _GX)
    eq2 = float((_GW * q * q).sum())
    return math.sqrt(((eq2 - p * p) + (p - eq2) / G) / P / k)


# ---------------------------------------------------------------------------------------------------- the stories

@dataclass
class Term:
    """One reward function: binary (solve rate per prompt) or continuous (score in [0, 1])."""

    level: Level
    kind: str = "binary"
    weight: float = 1.0
    spread: float = 1.5  # logit sd of prompt difficulty (binary)
    sd: float = 0.12  # per-rollout sd (continuous)


@dataclass
class Story:
    terms: dict[str, Term] = field(default_factory=dict)  # reward functions; the reward is their weighted sum
    evals: dict[str, tuple[Level, int]] = field(default_factory=dict)  # eval key as written -> (level, N)
    eval_every: int = 0
    eval_at_zero: bool = False
    eval_list: list[int] | None = None
    headline: str = "train"  # "train" or an eval key
    P: int = 16
    G: int = 8
    log_every: int = 1  # k: the logged value is the mean of k batches (TRL); 1 = every step
    kl: Level | None = None  # None: no KL term is computed or logged
    entropy: Level = field(default_factory=lambda: flat(0.45))
    length: Level = field(default_factory=lambda: flat(520.0))
    cap: int = 2048
    trunc: Level = field(default_factory=lambda: flat(0.01))
    clip: Level = field(default_factory=lambda: flat(0.0))
    grad: Level = field(default_factory=lambda: flat(0.2))
    lr: Level = field(default_factory=lambda: flat(1e-6))
    extra: dict[str, tuple[Level, float]] = field(default_factory=dict)  # raw key -> (level, log-noise sd)
    add: dict[str, tuple[Level, float]] = field(default_factory=dict)  # raw key -> (level, additive sd)
    zero_grad_when_flat: bool = False
    hook: Callable[[int, dict], None] | None = None
    mode: str = "rl"  # rl | dpo
    dpo: dict[str, Level] = field(default_factory=dict)
    sec_per_step: float = 60.0

    def eval_steps(self, reached: int) -> list[int]:
        if self.eval_list is not None:
            return [s for s in self.eval_list if s <= reached]
        if not self.eval_every:
            return []
        return list(range(0 if self.eval_at_zero else self.eval_every, reached + 1, self.eval_every))


class AR:
    """AR(1) log-noise per signal: neighbouring steps wander together."""

    def __init__(self, rng: np.random.Generator, phi: float = 0.7):
        self.rng, self.phi, self.state = rng, phi, {}

    def __call__(self, key: str, sd: float) -> float:
        e = self.state.get(key)
        z = self.rng.standard_normal()
        e = sd * z if e is None else self.phi * e + math.sqrt(1 - self.phi ** 2) * sd * z
        self.state[key] = e
        return e


def draw_terms(st: Story, rng: np.random.Generator, s: int) -> dict:
    P, G = st.P, st.G
    total = np.zeros((P, G))
    comp = {}
    for name, t in st.terms.items():
        lv = t.level(s)
        if t.kind == "binary":
            if lv <= 0:
                x = np.zeros((P, G))
            else:
                q = _sig(centre(round(clamp(lv), 7), t.spread) + t.spread * rng.standard_normal(P))
                x = (rng.random((P, G)) < q[:, None]).astype(float)
        else:
            x = np.clip(lv + 0.5 * t.sd * rng.standard_normal((P, 1)) + t.sd * rng.standard_normal((P, G)), 0, 1)
        comp[name] = (float(x.mean()), float(x.std(ddof=1)) if x.size > 1 else 0.0)
        total += t.weight * x
    same = np.isclose(total.std(axis=1), 0.0)
    gm = total.mean(axis=1)
    return dict(reward=float(total.mean()), reward_std=float(total.std(ddof=1)) if total.size > 1 else 0.0,
                zero_std=float(same.mean()), group_std=float(total.std(axis=1, ddof=1).mean()) if G > 1 else 0.0,
                rmax=float(total.max()), rmin=float(total.min()),
                pct0=float(100 * (same & np.isclose(gm, 0)).mean()), pct1=float(100 * (same & (gm > 0)).mean()),
                comp=comp)


def draw_step(st: Story, rng: np.random.Generator, ar: AR, s: int) -> dict:
    if st.mode == "dpo":
        return draw_dpo(st, rng, ar, s)
    v = draw_terms(st, rng, s)
    ln = st.length(s) * math.exp(ar("len", 0.04))
    v["len"] = min(ln, st.cap)
    v["len_max"] = float(min(st.cap, round(ln * (2.2 + 0.6 * rng.random()))))
    v["len_min"] = float(max(3, round(ln * (0.12 + 0.1 * rng.random()))))
    n = st.P * st.G
    v["trunc"] = rng.binomial(n, min(max(st.trunc(s), 0.0), 1.0)) / n
    if v["trunc"] > 0:
        v["len_max"] = float(st.cap)
    v["entropy"] = st.entropy(s) * math.exp(ar("ent", 0.03))
    if st.kl is not None:
        v["kl"] = max(st.kl(s), 1e-6) * math.exp(ar("kl", 0.08))
    c = st.clip(s)
    v["clip"] = c * math.exp(ar("clip", 0.1)) if c > 0 else 0.0
    g = st.grad(s) * math.exp(0.3 * rng.standard_normal())
    if rng.random() < 0.05:
        g *= 1 + rng.pareto(1.5)
    flat_batch = v["zero_std"] >= 1.0
    if st.zero_grad_when_flat and flat_batch and st.kl is None:
        g = 0.0
    v["grad_norm"] = g
    v["lr"] = st.lr(s)
    v["loss"] = 0.0 if (flat_batch and st.kl is None) else 0.012 * rng.standard_normal() + 0.04 * v.get("kl", 0.0)
    v["tokens"] = n * (v["len"] + 180)
    v["x"] = {}
    for k, (lvl, sd) in st.extra.items():
        v["x"][k] = lvl(s) * math.exp(ar("x" + k, sd)) if sd else lvl(s)
    for k, (lvl, sd) in st.add.items():
        v["x"][k] = lvl(s) + sd * rng.standard_normal()
    if st.hook:
        st.hook(s, v)
    return v


def draw_dpo(st: Story, rng: np.random.Generator, ar: AR, s: int) -> dict:
    d, B = st.dpo, st.P
    ch = d["chosen"](s) + 0.12 * rng.standard_normal()
    mg = d["margin"](s) + 0.18 * rng.standard_normal()
    return dict(acc=rng.binomial(B, clamp(d["acc"](s))) / B, margin=mg, chosen=ch, rejected=ch - mg,
                loss=max(0.05, d["loss"](s) + 0.035 * rng.standard_normal()),
                logp_c=d["logp_c"](s) + 9 * rng.standard_normal(), logp_r=d["logp_r"](s) + 9 * rng.standard_normal(),
                logit_c=-1.9 + 0.15 * rng.standard_normal(), logit_r=-2.0 + 0.15 * rng.standard_normal(),
                grad_norm=st.grad(s) * math.exp(0.3 * rng.standard_normal()) * (1 + rng.pareto(1.5)
                                                                                 if rng.random() < .05 else 1),
                lr=st.lr(s), x={})


# ------------------------------------------------------------------------------------------------------- the runs

@dataclass
class Attempt:
    train: dict[int, dict]
    evals: dict[int, dict]
    t0: float  # wall clock of step 0 of this attempt's timeline
    sps: float

    def t(self, s: float) -> float:
        return self.t0 + s * self.sps


@dataclass
class Run:
    attempts: list[Attempt]
    planned: int
    reached: int
    end: float  # wall clock of the newest write
    spec: Spec

    @property
    def last(self) -> Attempt:
        return self.attempts[-1]


def draw_attempt(st: Story, rng: np.random.Generator, first: int, last: int, t0: float,
                 eval_from: int | None = None) -> Attempt:
    ar = AR(rng)
    train = {s: draw_step(st, rng, ar, s) for s in range(first, last + 1)}
    evals = {}
    for s in st.eval_steps(last):
        if eval_from is not None and s < eval_from:
            continue
        evals[s] = {k: rng.binomial(n, clamp(lvl(s))) / n for k, (lvl, n) in st.evals.items()}
    return Attempt(train, evals, t0, st.sec_per_step)


# -------------------------------------------------------------------------------------------- logging and files

def logged(att: Attempt, k: int, how: str = "mean", first: int | None = None) -> list[tuple[int, dict]]:
    """(step, row) as a trainer logging every k steps writes them: TRL averages the k batches; `current` logs the
    step's own values. grad_norm and lr are always the last step's."""
    steps = sorted(att.train)
    lo = steps[0] if first is None else first
    out = []
    for s in steps:
        if s % k or s < lo:
            continue
        win = [att.train[j] for j in range(s - k + 1, s + 1) if j in att.train] if how == "mean" else [att.train[s]]
        row = {}
        for key, val in win[-1].items():
            if key in ("grad_norm", "lr", "x"):
                row[key] = val
            elif key == "comp":
                row[key] = {n: (float(np.mean([w["comp"][n][0] for w in win])),
                                float(np.mean([w["comp"][n][1] for w in win]))) for n in val}
            elif key == "len_max":
                row[key] = max(w[key] for w in win)
            elif key == "len_min":
                row[key] = min(w[key] for w in win)
            elif key == "tokens":
                row[key] = sum(w[key] for w in win)
            else:
                row[key] = float(np.mean([w[key] for w in win]))
        out.append((s, row))
    return out


def touch(path: Path, t: float) -> None:
    os.utime(path, (t, t))


def touch_tree(root: Path, t: float) -> None:
    for p in sorted(root.rglob("*"), key=lambda p: -len(p.parts)):
        touch(p, t)
    touch(root, t)


def dummy(path: Path, size: int = 64) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\0" * size)


# ------------------------------------------------------------------------------------------------------------ TRL

def ver(v: str) -> tuple[int, int]:
    a, b = v.split(".")[:2]
    return int(a), int(b)


def trl_train_row(r: dict, version: str, fns: list[str], cum_tokens: float, step_time: float) -> dict:
    v = ver(version)
    d: dict = {"loss": round(r["loss"], 4), "grad_norm": f32(r["grad_norm"]), "learning_rate": r["lr"]}
    if v >= (0, 16):
        d["num_tokens"] = float(round(cum_tokens))
    if v < (0, 17):
        d["completion_length"] = f32(r["len"])
    else:
        term = r["len"] * (1 - 0.6 * r["trunc"])
        d.update({"completions/mean_length": f32(r["len"]), "completions/min_length": r["len_min"],
                  "completions/max_length": r["len_max"], "completions/mean_terminated_length": f32(term),
                  "completions/min_terminated_length": r["len_min"],
                  "completions/max_terminated_length": float(min(r["len_max"] if r["trunc"] == 0 else
                                                                  round(r["len_max"] * 0.97), round(term * 2.4))),
                  "completions/clipped_ratio": f32(r["trunc"])})
    for fn in fns:
        m, sd = r["comp"][fn]
        if v < (0, 17):
            d[f"rewards/{fn}"] = f32(m)
        else:
            d[f"rewards/{fn}/mean"] = f32(m)
            d[f"rewards/{fn}/std"] = f32(sd)
    d["reward"] = f32(r["reward"])
    d["reward_std"] = f32(r["reward_std"])
    if v >= (0, 18):
        d["frac_reward_zero_std"] = f32(r["zero_std"])
    if "kl" in r:
        d["kl"] = f32(r["kl"])
    if v >= (0, 20):
        d["entropy"] = f32(r["entropy"])
    if v >= (0, 17):
        d.update({"clip_ratio/low_mean": 0.0, "clip_ratio/low_min": 0.0, "clip_ratio/high_mean": 0.0,
                  "clip_ratio/high_max": 0.0, "clip_ratio/region_mean": 0.0})
    elif v >= (0, 16):
        d["clip_ratio"] = 0.0
    if v >= (0, 26):
        d["step_time"] = round(step_time, 3)
    d.update({k: f32(x) for k, x in r["x"].items()})
    return d


def dpo_train_row(r: dict) -> dict:
    return {"loss": round(r["loss"], 4), "grad_norm": f32(r["grad_norm"]), "learning_rate": r["lr"],
            "rewards/chosen": f32(r["chosen"]), "rewards/rejected": f32(r["rejected"]),
            "rewards/accuracies": f32(r["acc"]), "rewards/margins": f32(r["margin"]),
            "logps/chosen": f32(r["logp_c"]), "logps/rejected": f32(r["logp_r"]),
            "logits/chosen": f32(r["logit_c"]), "logits/rejected": f32(r["logit_r"])}


def trl_rows(run: Run, version: str, fns: list[str], spe: int, eval_extra: Callable | None = None) -> list[dict]:
    """log_history rows of the newest attempt: train rows every logging_steps, eval rows, sorted by step."""
    st = run.spec.story
    att = run.last
    rows, cum = [], 0.0
    for s, r in logged(att, st.log_every):
        if st.mode == "dpo":
            d = dpo_train_row(r)
        else:
            cum += r["tokens"] * st.log_every
            d = trl_train_row(r, version, fns, cum, att.sps * (0.97 + 0.06 * math.sin(s)))
        d.update(epoch=round(s / spe, 4), step=s)
        rows.append(d)
    for s, ev in sorted(att.evals.items()):
        d = {"eval_loss": round(0.0009 * math.cos(s), 6)}
        d.update({k: f32(x) for k, x in ev.items()})
        if eval_extra:
            d.update(eval_extra(s, ev))
        d.update(eval_runtime=round(140 + 9 * math.sin(s / 7.0), 4), eval_samples_per_second=round(3.1, 3),
                 eval_steps_per_second=0.098, epoch=round(s / spe, 4), step=s)
        rows.append(d)
    rows.sort(key=lambda r: (r["step"], "eval_runtime" in r))
    return rows


def w_trl_state(run: Run, folder: Path, version: str = "0.21.0", fns: tuple[str, ...] = ("accuracy_reward",),
                save_every: int = 100, keep: int | None = None, finished: bool = False, top_only: bool = False,
                spe: int = 0, eval_extra: Callable | None = None, sub: str = "", adapter: bool = True) -> None:
    """TRL output_dir: checkpoint-N/{trainer_state.json, weights...} (save_total_limit keeps `keep`), and a top-level
    trainer_state.json from trainer.save_state() when training ended. top_only: the published folder where only
    the final trainer_state.json was uploaded (checkpoints were saved every save_every steps, elsewhere)."""
    st = run.spec.story
    out = folder / sub if sub else folder
    spe = spe or run.planned
    rows = trl_rows(run, version, list(fns), spe, eval_extra)
    reached, att = run.reached, run.last
    ev_steps = st.eval_every or None
    saves = [] if top_only else list(range(save_every, reached + 1, save_every))
    kept: list[int] = []
    for n in saves:
        hist = [r for r in rows if r["step"] <= n]
        state = trainer_state(hist, n, run.planned, st.log_every, save_every, ev_steps, round(n / spe, 4),
                              max(1, round(run.planned / spe)))
        ck = out / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", state)
        if adapter:
            (ck / "adapter_config.json").write_text('{"peft_type": "LORA", "r": 32, "lora_alpha": 64}\n')
            dummy(ck / "adapter_model.safetensors")
        else:
            (ck / "config.json").write_text('{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}\n')
            dummy(ck / "model.safetensors")
        for f in ("optimizer.pt", "scheduler.pt", "rng_state.pth", "training_args.bin"):
            dummy(ck / f, 32)
        touch_tree(ck, att.t(n) + 25)
        kept.append(n)
        if keep and len(kept) > keep:
            old = kept.pop(0)
            for p in sorted((out / f"checkpoint-{old}").rglob("*"), reverse=True):
                p.unlink()
            (out / f"checkpoint-{old}").rmdir()
    if finished:
        last = rows[-1]
        hist = [*rows, dict(train_runtime=round(run.reached * att.sps, 1),
                            train_samples_per_second=round(st.P * st.G / att.sps, 3),
                            train_steps_per_second=round(1 / att.sps, 3), total_flos=0.0,
                            train_loss=round(float(np.mean([r.get("loss", 0) for r in rows])), 6),
                            epoch=last["epoch"], step=reached)]
        state = trainer_state(hist, reached, run.planned, st.log_every, save_every, ev_steps, last["epoch"],
                              max(1, round(run.planned / spe)), training_stop=True)
        dump_json(out / "trainer_state.json", state)
        touch(out / "trainer_state.json", run.end)
        if top_only:
            (out / "README.md").write_text("# GRPO run (published logs)\n\nFinal trainer_state.json of the run; "
                                           "checkpoints were pushed to the Hub as separate revisions.\n")
            touch(out / "README.md", run.end + 600)
    if out != folder:
        touch(out, run.end)


def hf_tb_events(run: Run, version: str, fns: list[str], spe: int, finished: bool = False,
                 eval_extra: Callable | None = None) -> list:
    """HF TensorBoardCallback: rewrite_logs turns eval_X into eval/X and everything else into train/X."""
    rows = trl_rows(run, version, fns, spe, eval_extra)
    att, ev = run.last, []
    for r in rows:
        s = r["step"]
        is_eval = "eval_runtime" in r
        vals = {}
        for k, x in r.items():
            if k == "step" or x is None:
                continue
            vals[("eval/" + k[5:]) if k.startswith("eval_") else ("train/" + k)] = x
        ev.append((att.t(s) + (40 if is_eval else 0), s, vals))
    if finished:
        s = run.reached
        ev.append((run.end, s, {"train/train_runtime": s * att.sps, "train/train_loss": 0.004,
                                "train/total_flos": 0.0, "train/epoch": round(s / spe, 4)}))
    return ev


def w_hf_tb(run: Run, folder: Path, version: str = "0.21.0", fns: tuple[str, ...] = ("accuracy_reward",),
            host: str = "gpu-node-07", save_every: int = 0, keep: int | None = None, adapter: bool = False,
            eval_extra: Callable | None = None) -> None:
    """TRL run with report_to=tensorboard: runs/<MonDD_HH-MM-SS>_<host>/events.out.tfevents.*, plus (if saving)
    checkpoint-N folders whose trainer_state.json carries max_steps."""
    att = run.last
    start = att.t(0) - 95
    stamp = time.strftime("%b%d_%H-%M-%S", time.localtime(start))
    tb = folder / "runs" / f"{stamp}_{host}"
    ev = hf_tb_events(run, version, list(fns), run.planned, eval_extra=eval_extra)
    path = tb_file(tb / f"events.out.tfevents.{int(start)}.{host}.{31000 + run.spec.seed % 997}.0", ev)
    touch(path, run.end)
    touch(tb, run.end)
    touch(folder / "runs", run.end)
    if save_every:
        w_trl_state(run, folder, version, fns, save_every, keep, adapter=adapter, eval_extra=eval_extra)


def trl_console_line(d: dict) -> str:
    d = {k: v for k, v in d.items() if k != "step"}
    if "epoch" in d:
        d["epoch"] = round(d["epoch"], 2)
    return str(d)


def tqdm_bar(n: int, total: int, sps: float) -> str:
    frac = n / total
    full = int(frac * 10)
    bar = "█" * full + ("▌" if frac * 10 - full >= 0.5 else " ") + " " * (9 - full)
    bar = bar[:10]

    def hms(x: float) -> str:
        x = int(x)
        return f"{x // 3600}:{x % 3600 // 60:02d}:{x % 60:02d}" if x >= 3600 else f"{x // 60:02d}:{x % 60:02d}"

    return f"{int(100 * frac):3d}%|{bar}| {n}/{total} [{hms(n * sps)}<{hms((total - n) * sps)}, {sps:.2f}s/it]"


def w_trl_console(run: Run, folder: Path, version: str = "0.21.0", fns: tuple[str, ...] = ("accuracy_reward",),
                  name: str = "train.log", model: str = "Qwen/Qwen2.5-1.5B-Instruct", spe: int = 0,
                  eval_extra: Callable | None = None) -> None:
    """stdout of a TRL script (nohup): the Trainer's printed log dicts between tqdm redraws (\\r, no newline)."""
    st, att = run.spec.story, run.last
    spe = spe or run.planned
    rows = trl_rows(run, version, list(fns), spe, eval_extra)
    total = run.planned
    trainer = "DPOTrainer" if st.mode == "dpo" else "GRPOTrainer"
    out = [f"INFO {time.strftime('%m-%d %H:%M:%S', time.localtime(att.t(0) - 300))} [__init__.py:244] "
           "Automatically detected platform cuda.",
           "Loading checkpoint shards: 100%|██████████| 2/2 [00:03<00:00,  1.71s/it]",
           f"launching {trainer} on {model} (trl=={version}) max_steps={total} logging_steps={st.log_every}",
           f"  0%|          | 0/{total} [00:00<?, ?it/s]"]
    text = "\n".join(out) + "\n"
    prev = 0
    for r in rows:
        s = r["step"]
        if "eval_runtime" in r:
            n_eval = 25
            text += "\n" + "".join(f"\r{int(100 * i / n_eval):3d}%|{'█' * (10 * i // n_eval):<10}| {i}/{n_eval} "
                                   f"[00:{min(59, 5 * i):02d}<00:{max(0, 5 * (n_eval - i)) % 60:02d}, 5.60s/it]"
                                   for i in (0, 12, 25)) + "\n"
            text += trl_console_line(r) + "\n"
            continue
        for j in sorted({prev + 1, (prev + s) // 2, s}):
            if prev < j <= s:
                text += "\r" + tqdm_bar(j, total, att.sps)
        text += "\n" + trl_console_line(r) + "\n"
        prev = s
    if run.reached > prev:
        text += "\r" + tqdm_bar(run.reached, total, att.sps)
    p = folder / name
    p.write_text(text, encoding="utf-8")
    touch(p, run.end)


# ----------------------------------------------------------------------------------------------------------- verl

def verl_rows(run: Run, val_keys_first: bool = True, ppo: bool = False, save_every: int = 0,
              spe: int = 10**9) -> dict[int, dict]:
    st = run.spec.story
    att = run.last
    rows: dict[int, dict] = {}
    for s, ev in att.evals.items():
        rows[s] = dict(ev)
    for s, r in logged(att, 1):
        d = rows.setdefault(s, {})
        gen = att.sps * 0.62 * (r["len"] / max(st.length(0), 1)) ** 0.5
        upd = att.sps * 0.22
        d.update({"training/global_step": s, "training/epoch": (s - 1) // spe})
        d.update({"actor/entropy": r["entropy"]})
        if "kl" in r:
            d.update({"actor/kl_loss": r["kl"], "actor/kl_coef": 0.001})
        d.update({"actor/pg_loss": 0.004 * math.sin(s * 1.7) + r["loss"] * 0.3,
                  "actor/pg_clipfrac": r["clip"], "actor/ppo_kl": 2e-5 * math.cos(s),
                  "actor/pg_clipfrac_lower": 0.0, "actor/grad_norm": r["grad_norm"], "actor/lr": r["lr"]})
        d.update({"critic/score/mean": r["reward"], "critic/score/max": r["rmax"], "critic/score/min": r["rmin"],
                  "critic/rewards/mean": r["reward"], "critic/rewards/max": r["rmax"],
                  "critic/rewards/min": r["rmin"],
                  "critic/advantages/mean": 0.0003 * math.sin(s), "critic/advantages/max": 2.47 if r["reward"] else 0.0,
                  "critic/advantages/min": -2.47 if r["reward"] else 0.0,
                  "critic/returns/mean": 0.0003 * math.sin(s), "critic/returns/max": 2.47 if r["reward"] else 0.0,
                  "critic/returns/min": -2.47 if r["reward"] else 0.0})
        d.update({"response_length/mean": r["len"], "response_length/max": r["len_max"],
                  "response_length/min": r["len_min"], "response_length/clip_ratio": r["trunc"],
                  "prompt_length/mean": 182.4 + 3 * math.sin(s), "prompt_length/max": 611.0,
                  "prompt_length/min": 74.0, "prompt_length/clip_ratio": 0.0})
        d.update(r["x"])
        tt = {"timing_s/gen": gen, "timing_s/reward": 1.9, "timing_s/old_log_prob": att.sps * 0.05,
              "timing_s/ref": att.sps * 0.05 if "kl" in r else None, "timing_s/adv": 0.21,
              "timing_s/update_actor": upd}
        if s in att.evals and s:
            tt["timing_s/testing"] = 48.0
        if save_every and s % save_every == 0:
            tt["timing_s/save_checkpoint"] = 31.5
        tt = {k: x for k, x in tt.items() if x is not None}
        tt["timing_s/step"] = sum(tt.values()) + 3.1
        d.update(tt)
        ntok = st.P * st.G * (r["len"] + 182)
        d.update({"perf/total_num_tokens": int(ntok), "perf/time_per_step": tt["timing_s/step"],
                  "perf/throughput": ntok / tt["timing_s/step"] / 8, "perf/max_memory_allocated_gb": 61.3,
                  "perf/max_memory_reserved_gb": 70.2, "perf/cpu_memory_used_gb": 212.7})
    return rows


def verl_fmt(x, np2: bool) -> str:
    if isinstance(x, int):
        return f"np.int64({x})" if np2 else str(x)
    if isinstance(x, float) and math.isnan(x):
        return "np.float64(nan)" if np2 else "nan"
    return f"np.float64({x!r})" if np2 else repr(x)


def w_verl_console(run: Run, folder: Path, np2: bool = False, name: str = "verl_train.log", project: str = "rl",
                   exp: str = "exp", save_every: int = 0, spe: int = 10**9) -> None:
    """verl LocalLogger ('console') lines `step:N - key:value - ...` behind the TaskRunner prefix, mixed with
    Ray/vLLM lines; validation-only line at step 0; 'Total training steps' printed at start."""
    rows = verl_rows(run, save_every=save_every, spe=spe)
    att = run.last
    pid = 18000 + run.spec.seed % 4000
    t0 = att.t(0)
    ts = lambda t: time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))  # noqa: E731
    lines = [f"{ts(t0 - 400)},331\tINFO worker.py:1888 -- Started a local Ray instance. View the dashboard at "
             "127.0.0.1:8265",
             f"(TaskRunner pid={pid}) TaskRunner hostname: node-a100-03, PID: {pid}",
             f"(TaskRunner pid={pid}) Size of train dataloader: {spe if spe < 10**9 else run.planned}, "
             f"Size of val dataloader: 1",
             f"(TaskRunner pid={pid}) Total training steps: {run.planned}",
             f"(WorkerDict pid={pid + 311}) INFO {ts(t0 - 120)} [vllm] Automatically detected platform cuda."]
    for s in sorted(rows):
        body = " - ".join(f"{k}:{verl_fmt(x, np2)}" for k, x in rows[s].items())
        lines.append(f"(TaskRunner pid={pid}) step:{s} - {body}")
        if save_every and s and s % save_every == 0:
            lines.append(f"(TaskRunner pid={pid}) local_global_step_folder: "
                         f"checkpoints/{project}/{exp}/global_step_{s}")
        if s and s % 97 == 0:
            lines.append(f"(WorkerDict pid={pid + 311}) WARNING {ts(att.t(s))} [scheduler.py:1077] Sequence group "
                         f"{s * 64} is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV "
                         "cache space.")
    p = folder / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    touch(p, run.end)


def w_verl_jsonl(run: Run, folder: Path, project: str = "rl", exp: str = "exp", torn: bool = False,
                 save_every: int = 0, keep: int | None = None, spe: int = 10**9) -> None:
    """verl FileLogger: $VERL_FILE_LOGGER_ROOT/<project>/<experiment>.jsonl, {"step": N, "data": {...}} per line,
    NaN written as null (orjson); optional checkpoints/<project>/<exp>/global_step_N kept by max_ckpt_to_keep."""
    rows = verl_rows(run, save_every=save_every, spe=spe)
    att = run.last
    lines = []
    for s in sorted(rows):
        data = {k: (None if isinstance(x, float) and not math.isfinite(x) else x) for k, x in rows[s].items()}
        lines.append(json.dumps({"step": s, "data": data}, separators=(",", ":")))
    text = "\n".join(lines) + "\n"
    if torn:
        text = text[: len(text) - len(lines[-1]) // 2 - 1]
    p = folder / "verl_logs" / project / f"{exp}.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    touch(p, run.end)
    touch(p.parent, run.end)
    if save_every:
        ck = folder / "checkpoints" / project / exp
        saved = list(range(save_every, run.reached + 1, save_every))
        kept = saved[-keep:] if keep else saved
        for n in kept:
            d = ck / f"global_step_{n}"
            for part in ("actor/model_world_size_8_rank_0.pt", "actor/optim_world_size_8_rank_0.pt",
                         "actor/extra_state_world_size_8_rank_0.pt", "actor/huggingface/config.json",
                         "data.pt"):
                dummy(d / part, 48)
            touch_tree(d, att.t(n) + 30)
        (ck / "latest_checkpointed_iteration.txt").write_text(str(saved[-1]))
        touch(ck / "latest_checkpointed_iteration.txt", att.t(saved[-1]) + 31)


# ------------------------------------------------------------------------------------------------------- OpenRLHF

def openrlhf_row(r: dict, s: int, sps: float, v010: bool = True) -> dict:
    d = {"policy_loss": 0.01 * math.sin(1.3 * s) + r["loss"], "reward": r["reward"]}
    if "kl" in r:
        d["kl"] = r["kl"]
    d.update({"return": r["reward"] - 0.01 * r.get("kl", 0.0), "response_length": r["len"],
              "total_length": r["len"] + 212.0, "truncated": r["trunc"], "actor_lr": r["lr"],
              "actor_grad_norm": r["grad_norm"], "ppo_clip_ratio": r["clip"], "ppo_kl": 1e-4 * math.cos(s),
              "vllm_kl": 2e-4 * (1 + 0.1 * math.sin(s)), "group_reward_std": r["group_std"]})
    if v010:
        gen = sps * 0.58 * math.sqrt(r["len"] / 900)
        d.update({"logprobs_diff": 0.02 * math.sin(s / 9), "rollout/reward_mean": r["reward"],
                  "rollout/reward_std": r["reward_std"], "rollout/response_length_mean": r["len"],
                  "rollout/truncated_rate": r["trunc"], "rollout/num_samples": 1024,
                  "timing/generation": gen, "timing/make_experience": sps * 0.12, "timing/ppo_train": sps * 0.21,
                  "timing/broadcast": 4.2})
        d["timing/step_total"] = gen + sps * 0.33 + 4.2
    d.update(r["x"])
    return d


def w_openrlhf_tb(run: Run, folder: Path, sub: str = "tb/run", log_every: int = 1, v010: bool = True) -> None:
    """OpenRLHF TensorBoard: train/<status key> every logging_steps (the current step), eval/<key> on eval steps."""
    att = run.last
    ev = []
    for s, r in logged(att, log_every, "current"):
        ev.append((att.t(s), s, {"train/" + k: x for k, x in openrlhf_row(r, s, att.sps, v010).items()}))
    for s, e in att.evals.items():
        ev.append((att.t(s) + 70, s, {"eval/" + k: x for k, x in e.items()}))
    ev.sort(key=lambda e: (e[1], e[0]))
    tb = folder / sub
    path = tb_file(tb / f"events.out.tfevents.{int(att.t(0))}.ray-head-0.{2200 + run.spec.seed % 500}.0", ev)
    touch(path, run.end)
    touch(tb, run.end)


def pyrepr(d: dict) -> str:
    return "{" + ", ".join(f"'{k}': {v!r}" for k, v in d.items()) + "}"


def w_openrlhf_console(run: Run, folder: Path, name: str = "train.log", v010: bool = False,
                       eval_ds: str = "math") -> None:
    """OpenRLHF stdout: `✨ Global step N: {dict}` per step, `Evaluation completed ..., eval_metrics: {...}`."""
    att = run.last
    ts = lambda t: time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))  # noqa: E731
    lines = [f"[{ts(att.t(0) - 500)},102] [INFO] [real_accelerator.py:219:get_accelerator] Setting ds_accelerator "
             "to cuda (auto detect)",
             f"{ts(att.t(0) - 200)},944\tINFO worker.py:1852 -- Started a local Ray instance.",
             "(LLMRayActor pid=7712) INFO: vLLM engine 0 ready (tp=1)"]
    for s, r in logged(att, 1, "current"):
        row = openrlhf_row(r, s, att.sps, v010)
        row = {k: float(f"{x:.6g}") if isinstance(x, float) else x for k, x in row.items()}
        lines.append(f"{ts(att.t(s))} ✨ Global step {s}: {pyrepr(row)}")
        if s in att.evals:
            e = {k: round(float(x), 4) for k, x in att.evals[s].items()}
            lines.append(f"{ts(att.t(s) + 70)} Evaluation completed in 66.82 seconds, global_step {s}, "
                         f"eval_metrics: {pyrepr(e)}")
    p = folder / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    touch(p, run.end)


# --------------------------------------------------------------------------------------------------------- NeMo-RL

def w_nemo_tb(run: Run, folder: Path, exp: str = "exp_001") -> None:
    """NeMo-RL <log_dir>/exp_NNN/tensorboard: train/*, timing/train/*, validation/* at step = iteration + 1."""
    att, st = run.last, run.spec.story
    ev = []
    for s, r in logged(att, 1):
        gen = att.sps * 0.6 * math.sqrt(r["len"] / 600)
        d = {"train/loss": r["loss"] * 0.5 + 0.002 * math.sin(s), "train/reward": r["reward"],
             "train/grad_norm": r["grad_norm"], "train/lr": r["lr"], "train/wd": 0.01,
             "train/kl_penalty": r.get("kl", 0.0), "train/approx_entropy": r["entropy"],
             "train/probs_ratio": 1.0 + 1e-4 * math.sin(s), "train/probs_ratio_clamped": 1.0,
             "train/token_mult_prob_error": 1.0031 + 0.0004 * math.sin(s / 3),
             "train/advantages/mean": 1e-4 * math.cos(s), "train/baseline_reward/pct_0": r["pct0"],
             "train/baseline_reward/pct_1": r["pct1"],
             "train/baseline_reward/pct_mixed": 100 - r["pct0"] - r["pct1"],
             "train/mean_gen_tokens_per_sample": r["len"], "train/max_gen_tokens_per_sample": r["len_max"],
             "train/truncation_rate": r["trunc"], "train/natural_termination_rate": 1 - r["trunc"],
             "train/num_valid_samples": st.P * st.G,
             "timing/train/generation": gen, "timing/train/policy_training": att.sps * 0.25,
             "timing/train/policy_and_reference_logprobs": att.sps * 0.08,
             "timing/train/total_step_time": gen + att.sps * 0.36}
        d.update(r["x"])
        ev.append((att.t(s), s, d))
    for s, e in att.evals.items():
        d = dict(e)
        d["validation/avg_length"] = st.length(s) * 0.93
        ev.append((att.t(s) + 50, s, d))
    ev.sort(key=lambda e: (e[1], e[0]))
    tb = folder / "logs" / exp / "tensorboard"
    path = tb_file(tb / f"events.out.tfevents.{int(att.t(0))}.nemo-node-2.{5100 + run.spec.seed % 300}.0", ev)
    touch(path, run.end)
    touch_tree(folder / "logs", run.end)


# ------------------------------------------------------------------------------------------------ W&B CSV exports

def w_wandb_csv(run: Run, folder: Path, panels: dict[str, Callable[[int, dict], float | None]],
                display: str = "run", xkey: str = "train/global_step", log_every: int = 1,
                budget: int = 500, exported_min_ago: float = 4.0) -> None:
    """W&B UI 'Export panel data (CSV)': one file per panel, x column, '<run> - <key>' plus __MIN / __MAX of the
    bucket when the panel downsampled. Files are named as the browser saves them."""
    att = run.last
    rows = logged(att, log_every)
    t = NOW - exported_min_ago * 60
    for i, (key, fn) in enumerate(panels.items()):
        if key.startswith("eval/"):
            pts = [(s, fn(s, e)) for s, e in sorted(att.evals.items())]
        else:
            pts = [(s, fn(s, r)) for s, r in rows]
        pts = [(s, v) for s, v in pts if v is not None]
        bucket = max(1, math.ceil(len(pts) / budget))
        col = f"{display} - {key}"
        name = time.strftime("wandb_export_%Y-%m-%dT%H_%M_%S", time.gmtime(t + 7 * i)) + f".{117 + 61 * i:03d}+00_00.csv"
        with (folder / name).open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow([xkey, col, col + "__MIN", col + "__MAX"])
            for j in range(0, len(pts), bucket):
                chunk = pts[j:j + bucket]
                vals = [v for _, v in chunk]
                w.writerow([chunk[0][0], repr(float(np.mean(vals))), repr(min(vals)), repr(max(vals))])
        touch(folder / name, t + 7 * i)


# --------------------------------------------------------------------------------------------------------- MLflow

def hf_mlflow_metrics(run: Run, version: str, fns: list[str]) -> list[tuple[int, float, list[tuple[str, float]]]]:
    """(step, wall, [(raw key, value)]) per log call of every attempt, in logging order (HF MLflowCallback: raw keys)."""
    st = run.spec.story
    calls = []
    seen: dict[int, float] = {0: 0.0}  # num_tokens is restored with the checkpoint on resume
    for att in run.attempts:
        first = min(att.train)
        cum = seen[max(k for k in seen if k < first)]
        for s, r in logged(att, st.log_every, first=first):
            cum += r["tokens"] * st.log_every
            seen[s] = cum
            d = trl_train_row(r, version, fns, cum, att.sps)
            d["epoch"] = round(s / run.planned, 4)
            calls.append((s, att.t(s), list(d.items())))
        for s, e in sorted(att.evals.items()):
            d = {k: f32(x) for k, x in e.items()}
            d.update(eval_runtime=151.2, eval_samples_per_second=3.3, eval_steps_per_second=0.104,
                     epoch=round(s / run.planned, 4))
            calls.append((s, att.t(s) + 45, list(d.items())))
    return calls


def w_mlflow_files(run: Run, folder: Path, version: str = "0.21.0", fns: tuple[str, ...] = ("accuracy_reward",),
                   run_name: str = "grpo", params: dict | None = None) -> None:
    """MLflow file store ./mlruns/<exp>/<run>/metrics/<key> ('/' -> nested dirs), '<ms> <value> <step>' lines."""
    eid, rid = "284615039274119856", hashlib.md5(run_name.encode()).hexdigest()
    exp, rd = folder / "mlruns" / eid, folder / "mlruns" / eid / rid
    t0 = run.attempts[0].t(0)
    (rd / "params").mkdir(parents=True)
    (rd / "tags").mkdir()
    (rd / "artifacts").mkdir()
    (exp / "meta.yaml").write_text(f"artifact_location: file://{exp}\ncreation_time: {int(t0 * 1000) - 86400000}\n"
                                   f"experiment_id: '{eid}'\nlast_update_time: {int(t0 * 1000)}\n"
                                   "lifecycle_stage: active\nname: grpo-posttrain\n")
    (rd / "meta.yaml").write_text(f"artifact_uri: file://{rd}/artifacts\nend_time: null\nentry_point_name: ''\n"
                                  f"experiment_id: '{eid}'\nlifecycle_stage: active\nrun_id: {rid}\n"
                                  f"run_name: {run_name}\nrun_uuid: {rid}\nsource_name: ''\nsource_type: 4\n"
                                  f"source_version: ''\nstart_time: {int(t0 * 1000)}\nstatus: 1\ntags: []\n"
                                  "user_id: researcher\n")
    (rd / "tags" / "mlflow.runName").write_text(run_name)
    (rd / "tags" / "mlflow.user").write_text("researcher")
    for k, v in {"max_steps": run.planned, "logging_steps": run.spec.story.log_every, **(params or {})}.items():
        (rd / "params" / k).write_text(str(v))
    lines: dict[str, list[str]] = {}
    for s, wall, kv in hf_mlflow_metrics(run, version, list(fns)):
        for k, x in kv:
            lines.setdefault(k, []).append(f"{int(wall * 1000)} {float(x)!r} {s}")
    for k, ls in lines.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")
    touch_tree(folder / "mlruns", run.end)


def w_mlflow_db(run: Run, folder: Path, version: str = "0.21.0", fns: tuple[str, ...] = ("accuracy_reward",),
                run_name: str = "grpo", finished: bool = False) -> None:
    """MLflow SQL store (sqlite:///mlflow.db): runs.status FINISHED and end_time when training ended."""
    path = folder / "mlflow.db"
    db = sqlite3.connect(path)
    db.executescript("""
    CREATE TABLE experiments (experiment_id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(256) NOT NULL UNIQUE,
        artifact_location VARCHAR(256), lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT);
    CREATE TABLE runs (run_uuid VARCHAR(32) NOT NULL PRIMARY KEY, name VARCHAR(250), source_type VARCHAR(20),
        source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9),
        start_time BIGINT, end_time BIGINT, deleted_time BIGINT, source_version VARCHAR(50),
        lifecycle_stage VARCHAR(20), artifact_uri VARCHAR(200), experiment_id INTEGER);
    CREATE TABLE metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT NOT NULL,
        run_uuid VARCHAR(32) NOT NULL, step BIGINT DEFAULT '0' NOT NULL, is_nan BOOLEAN DEFAULT '0' NOT NULL,
        PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
    CREATE TABLE latest_metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT,
        step BIGINT NOT NULL, is_nan BOOLEAN NOT NULL, run_uuid VARCHAR(32) NOT NULL, PRIMARY KEY (key, run_uuid));
    CREATE TABLE params (key VARCHAR(250) NOT NULL, value VARCHAR(8000) NOT NULL, run_uuid VARCHAR(32) NOT NULL,
        PRIMARY KEY (key, run_uuid));
    CREATE TABLE tags (key VARCHAR(250) NOT NULL, value VARCHAR(8000), run_uuid VARCHAR(32) NOT NULL,
        PRIMARY KEY (key, run_uuid));
    """)
    rid = "b7d2e0c94f1a4c0e9a3f55d1c8e27f60"
    t0 = int(run.attempts[0].t(0) * 1000)
    db.execute("INSERT INTO experiments VALUES (1, 'grpo-math', 'mlflow-artifacts:/1', 'active', ?, ?)", (t0, t0))
    db.execute("INSERT INTO runs VALUES (?, ?, 'UNKNOWN', '', '', 'researcher', ?, ?, ?, NULL, '', 'active', ?, 1)",
               (rid, run_name, "FINISHED" if finished else "RUNNING", t0, int(run.end * 1000) if finished else None,
                f"mlflow-artifacts:/1/{rid}/artifacts"))
    for k, v in {"max_steps": run.planned, "logging_steps": run.spec.story.log_every}.items():
        db.execute("INSERT INTO params VALUES (?, ?, ?)", (k, str(v), rid))
    db.execute("INSERT INTO tags VALUES ('mlflow.runName', ?, ?)", (run_name, rid))
    latest = {}
    calls = hf_mlflow_metrics(run, version, list(fns))
    if finished:
        calls.append((run.reached, run.end, [("train_runtime", run.reached * run.last.sps), ("train_loss", 0.0051),
                                             ("train_samples_per_second", 2.31), ("train_steps_per_second", 0.018),
                                             ("total_flos", 0.0), ("epoch", 1.0)]))
    for s, wall, kv in calls:
        for k, x in kv:
            rec = (k, float(x), int(wall * 1000), rid, s, 0)
            db.execute("INSERT OR IGNORE INTO metrics VALUES (?, ?, ?, ?, ?, ?)", rec)
            latest[k] = rec
    for k, x, ts, r, s, nan in latest.values():
        db.execute("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, ?, ?)", (k, x, ts, s, nan, r))
    db.commit()
    db.close()
    touch(path, run.end)


# ------------------------------------------------------------------------------------------ hand-written loops

def w_custom_jsonl(run: Run, folder: Path, keys: dict[str, Callable[[dict], float]], eval_file: str | None = None,
                   name: str = "metrics.jsonl", step_key: str = "step", torn: bool = False,
                   eval_inline: bool = False, config: dict | None = None) -> None:
    """A hand-written loop: one json.dumps(dict) per step (Python json: NaN stays NaN), evals to a second file or
    inline as {"split": "eval"} records; a crash mid-write leaves half a line."""
    att = run.last
    lines = []
    for s, r in logged(att, 1):
        d = {step_key: s, "time": round(att.t(s), 2)}
        d.update({k: fn(r) for k, fn in keys.items()})
        if eval_inline:
            d = {"split": "train", **d}
        lines.append(json.dumps(d))
        if eval_inline and s in att.evals:
            lines.append(json.dumps({"split": "eval", step_key: s, "time": round(att.t(s) + 60, 2),
                                     **{k: round(x, 4) for k, x in att.evals[s].items()}}))
    if eval_inline and 0 in att.evals:
        lines.insert(0, json.dumps({"split": "eval", step_key: 0, "time": round(att.t(0), 2),
                                    **{k: round(x, 4) for k, x in att.evals[0].items()}}))
    text = "\n".join(lines) + "\n"
    if torn:
        text = text[: len(text) - len(lines[-1]) // 3 - 1]
    p = folder / name
    p.write_text(text)
    touch(p, run.end)
    if eval_file:
        e = folder / eval_file
        e.write_text("".join(json.dumps({step_key: s, **{k: round(x, 4) for k, x in ev.items()}}) + "\n"
                             for s, ev in sorted(att.evals.items())))
        touch(e, att.t(max(att.evals)) + 60 if att.evals else run.end)
    if config:
        c = folder / "config.json"
        c.write_text(json.dumps(config, indent=2) + "\n")
        touch(c, att.t(0) - 120)


RASBT_75 = ["step", "total_steps", "loss", "kl_loss", "policy_ratio", "reward_avg", "tokens_per_sec",
            "avg_response_len", "adv_avg", "adv_std", "entropy_avg", "eval_acc"]


def w_rasbt_csv(run: Run, folder: Path, script: str = "7_5_plus_kl") -> None:
    """reasoning-from-scratch ch07 script log: logs/<script>_metrics.csv (one row per step, eval_acc only on
    checkpoint steps, fraction with 6 decimals) and the human-readable _metrics.txt."""
    att = run.last
    logs = folder / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    rows, txt = [], []
    for s, r in logged(att, 1):
        skipped = r["zero_std"] >= 1.0
        ev = att.evals.get(s)
        row = {"step": s, "total_steps": run.planned,
               "loss": "0.0" if skipped else f"{r['x'].get('loss_raw', 0.0):.4f}",
               "kl_loss": f"{r.get('kl', 0.0):.6f}",
               "policy_ratio": "" if skipped else f"{1 + 0.002 * math.sin(s):.6f}",
               "reward_avg": f"{r['reward']:.4f}", "tokens_per_sec": f"{r['x'].get('tps', 41.0):.2f}",
               "avg_response_len": f"{r['len']:.2f}", "adv_avg": "0.000000" if skipped else f"{1e-8:.6f}",
               "adv_std": "0.000000" if skipped else "0.935414",
               "entropy_avg": f"{r['entropy']:.4f}", "eval_acc": "" if ev is None else f"{ev['eval_acc']:.6f}"}
        rows.append(row)
        txt.append(f"[Step {s}/{run.planned}] loss={row['loss']} reward_avg={row['reward_avg']} "
                   f"kl_loss={row['kl_loss']} avg_response_len={row['avg_response_len']}"
                   + (f" eval_acc={row['eval_acc']}" if ev else ""))
    p = logs / f"{script}_metrics.csv"
    with p.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=RASBT_75, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    (logs / f"{script}_metrics.txt").write_text("\n".join(txt) + "\n")
    touch(p, run.end)
    touch(logs / f"{script}_metrics.txt", run.end)
    touch(logs, run.end)


# -------------------------------------------------------------------------------------------------------- the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable  # (run, folder) -> None
    seed: int
    steps: tuple[int, int]  # (reached, planned)
    kind: str  # ok | conv | stop | rb | sor
    tags: str
    why: str
    onset: int | None = None
    age_min: float = 5.0  # minutes since the newest write
    resume: tuple[int, int, Story, float] | None = None  # (died after, restored from, story after, gap minutes)

    def headline_level(self, s: float) -> float:
        st = self.story
        if self.resume and s > self.resume[1]:
            st = self.resume[2]
        if st.headline == "train":
            return sum(t.weight * t.level(s) for t in st.terms.values())
        return st.evals[st.headline][0](s)

    def headline_steps(self) -> list[int]:
        reached, st = self.steps[0], self.story
        if st.headline == "train":
            return list(range(st.log_every, reached + 1, st.log_every))
        return st.eval_steps(reached)

    def headline_sd(self, p: float) -> float:
        st = self.story
        if st.headline == "train":
            (t,) = st.terms.values()
            return batch_sd(p, t.spread, st.P, st.G, st.log_every)
        n = st.evals[st.headline][1]
        return math.sqrt(clamp(p) * (1 - clamp(p)) / n)

    def window(self) -> tuple[int, int]:
        steps = self.headline_steps()
        best = max(self.headline_level(s) for s in steps)
        sd = self.headline_sd(best)
        good = [s for s in steps if self.headline_level(s) >= best - sd - 1e-12]
        assert self.onset is not None
        return good[0], max(s for s in good if s <= self.onset)

    def labels(self) -> dict:
        if self.kind == "ok":
            return HEALTHY
        if self.kind == "conv":
            return {**converged(), "onset_step": self.onset}
        if self.kind == "stop":
            return stop(self.onset)
        lo, hi = self.window()
        return (rollback if self.kind == "rb" else stop_or_rollback)(lo, hi, self.onset)

    def case(self) -> Case:
        return Case(self.name, lambda *_: None, self.write, self.seed, self.steps, self.labels(), self.tags,
                    self.why)


def make_run(spec: Spec) -> Run:
    rng = np.random.default_rng(spec.seed)
    reached, planned = spec.steps
    end = NOW - spec.age_min * 60
    st = spec.story
    if spec.resume:
        died, frm, st_b, gap = spec.resume
        t0_b = end - reached * st_b.sec_per_step
        t_died = t0_b + frm * st_b.sec_per_step - gap * 60
        a = draw_attempt(st, rng, 1, died, t_died - died * st.sec_per_step)
        b = draw_attempt(st_b, rng, frm + 1, reached, t0_b, eval_from=frm + 1)
        atts = [a, b]
    else:
        atts = [draw_attempt(st, rng, 1, reached, end - reached * st.sec_per_step)]
    return Run(atts, planned, reached, end, spec)


def w(fn: Callable, **opts) -> Callable:
    return lambda run, folder: fn(run, folder, **opts)


def hook_nan_after(step: int, zero_reward: bool = True) -> Callable[[int, dict], None]:
    def h(s: int, v: dict) -> None:
        if s > step:
            v["loss"] = float("nan")
            v["grad_norm"] = float("nan")
            v["entropy"] = float("nan")
            if "kl" in v:
                v["kl"] = float("nan")
    return h


# headline eval keys
V_MATH = "val-core/HuggingFaceH4/MATH-500/acc/mean@1"
V_GSM = "val-core/openai/gsm8k/acc/mean@1"
V_DSR = "val-core/deepscaler/acc/mean@1"
V_OLY = "val-core/olympiad_bench/acc/mean@1"
V_LMATH = "val-core/lighteval/MATH/acc/mean@1"

SPECS: list[Spec] = []


def eval_copy(src: str, dst: str = "eval_reward") -> Callable:
    """TRL logs the total eval reward beside the per-function means; one function: the same number."""
    return lambda s, ev: {dst: f32(ev[src])}


def eval_sum(*terms: tuple[str | Level, float], dst: str = "eval_reward") -> Callable:
    """Total eval reward: drawn keys (str) or levels of functions not drawn separately, weighted."""
    def fn(s: int, ev: dict) -> dict:
        tot = sum(w_ * (ev[k] if isinstance(k, str) else k(s) + 0.004 * math.sin(s / 13.0)) for k, w_ in terms)
        return {dst: f32(tot)}
    return fn


def dpo_eval(s: int, ev: dict) -> dict:
    m = pw((0, 0.0), (900, 1.25), (1300, 1.45), (2000, 1.5))(s) + 0.03 * math.sin(s / 11.0)
    c = pw((0, 0.0), (1300, -0.95), (2000, -1.05))(s) + 0.02 * math.cos(s / 7.0)
    return {"eval_loss": round(pw((0, .6931), (900, .545), (1300, .521), (2000, .519))(s) + .004 * math.sin(s), 4),
            "eval_rewards/chosen": f32(c), "eval_rewards/rejected": f32(c - m), "eval_rewards/margins": f32(m),
            "eval_logps/chosen": f32(-288 - 0.006 * s), "eval_logps/rejected": f32(-303 - 0.011 * s),
            "eval_logits/chosen": f32(-1.93), "eval_logits/rejected": f32(-2.02)}


def hand_keys(**spec: Callable[[dict], float]) -> dict:
    return spec


SPECS += [
    # ================================================================================================== healthy
    Spec("ok-verl-console-np2-score-near-0-for-first-60-of-500-then-takes-off-math500-0.04-to-0.15-live-210",
         Story(terms={"acc": Term(pw((0, .006), (60, .01), (120, .07), (210, .19), (500, .33)), spread=2.0)},
               evals={V_MATH: (pw((0, .04), (60, .043), (120, .08), (210, .15), (500, .27)), 500)},
               eval_every=30, eval_at_zero=True, headline=V_MATH, P=32, G=16,
               kl=pw((0, 1e-4), (60, 3e-4), (210, .0035)), entropy=pw((0, .68), (60, .69), (210, .57)),
               length=pw((0, 1450), (60, 1380), (210, 1820)), cap=4096, trunc=pw((0, .02), (210, .03)),
               clip=flat(.0015), grad=pw((0, .04), (60, .05), (120, .16), (210, .21)), sec_per_step=150),
         w(w_verl_console, np2=True, project="dapo_math", exp="qwen2.5-7b-grpo-hard", save_every=50), 3401,
         (210, 500), "ok", "healthy slow-starter sparse-reward verl console numpy2 live",
         "verl GRPO on a hard math pool (32 prompts x 16 samples per step, 500 steps planned, 'Total training "
         "steps: 500' in the log). For the first 60 steps (12%) the batch score sits at 0.006-0.01: steps "
         "score 0 to ~13 correct samples out of 512, grad norm is tiny (0.04-0.05). Then it takes off: 0.07 at "
         "120 and 0.19 now at step 210, and MATH-500 val acc (N=500, every 30) moves 0.04 -> 0.043 at step 60 -> "
         "0.08 -> 0.15 (sd 0.016, about 7 sd above the start). Entropy drifts 0.68 -> 0.57, responses lengthen "
         "1380 -> 1820 tokens; nothing alarming. The flat start is the slow starter, not a dead run: it is "
         "learning now with 58% of the budget left. Continue."),
    Spec("ok-trl021-ckpts-format-reward-1.0-from-step-1-accuracy-0.10-to-0.21-limit2-live-700-of-2000",
         Story(terms={"format_reward": Term(flat(.997), spread=1.0),
                      "accuracy_reward": Term(pw((0, .10), (700, .21), (2000, .31)), spread=1.6)},
               evals={"eval_rewards/format_reward/mean": (flat(.997), 400),
                      "eval_rewards/accuracy_reward/mean": (pw((0, .11), (700, .205), (2000, .29)), 400)},
               eval_every=100, headline="eval_rewards/accuracy_reward/mean", P=8, G=8, log_every=10,
               entropy=pw((0, .36), (700, .31)), length=pw((0, 480), (700, 560)), cap=1024, trunc=flat(.008),
               grad=flat(.08), lr=pw((0, 0), (60, 1e-6), (2000, 0)), sec_per_step=42),
         w(w_trl_state, version="0.21.0", fns=("format_reward", "accuracy_reward"), save_every=100, keep=2,
           eval_extra=eval_sum(("eval_rewards/format_reward/mean", 1.0), ("eval_rewards/accuracy_reward/mean", 1.0))),
         3402, (700, 2000), "ok", "healthy format-ceiling trl trainer_state checkpoints save-limit live",
         "TRL 0.21 GRPO on an SFT'd model with two reward functions. rewards/format_reward/mean is at its "
         "ceiling (~0.997) from the first log, so it carries no signal, but rewards/accuracy_reward/mean is not "
         "pinned: it climbs 0.10 -> 0.21 over 700 of 2000 steps (checkpoint-600 and -700 on disk, "
         "save_total_limit 2). The eval accuracy reward (N=400, every 100) rises 0.12 -> 0.205 (sd 0.02, ~4 sd), "
         "step after step. A format term at ceiling is only bad when the task term is stuck; here it is "
         "learning. Continue."),
    Spec("ok-hf-tb-trl023-completion-length-hump-760-to-1650-back-to-900-eval-rising-ckpts-live-1200-of-3000",
         Story(terms={"accuracy_reward": Term(pw((0, .34), (300, .44), (800, .52), (1200, .57), (3000, .66)))},
               evals={"eval_rewards/accuracy_reward/mean":
                      (pw((0, .33), (300, .41), (800, .49), (1200, .545), (3000, .62)), 500)},
               eval_every=100, headline="eval_rewards/accuracy_reward/mean", P=16, G=8, log_every=10,
               entropy=pw((0, .52), (350, .58), (800, .47), (1200, .44)),
               length=pw((0, 760), (350, 1650), (650, 1550), (1000, 960), (1200, 900)), cap=2048,
               trunc=pw((0, .006), (350, .085), (700, .05), (1000, .015), (1200, .012)), grad=flat(.14),
               sec_per_step=30),
         w(w_hf_tb, version="0.23.0", save_every=200, keep=3, eval_extra=eval_copy(
             "eval_rewards/accuracy_reward/mean")), 3403, (1200, 3000), "ok",
         "healthy side-signal-hump length tensorboard hf trl checkpoints live",
         "TRL 0.23 GRPO logged to TensorBoard (train/*, eval/*) with checkpoint-800/1000/1200 on disk "
         "(max_steps 3000). completions/mean_length rises 760 -> 1650 tokens by step 350 and clipped_ratio to "
         "~0.085, then the policy learns to be concise again: 900 tokens and 1% clipped at step 1200. The hump "
         "is a side signal rising and falling; the reward never turned: train accuracy 0.34 -> 0.57 and eval "
         "accuracy (N=500, every 100) 0.33 -> 0.545 (sd 0.022), still rising ~0.011 per 100 steps. Continue."),
    Spec("ok-wandb-csv-trl020-zero-std-0.89-falls-to-0.58-reward-0.02-to-0.15-eval-0.02-to-0.13-at-450-of-1500",
         Story(terms={"accuracy_reward": Term(pw((0, .015), (100, .03), (450, .15), (1500, .35)), spread=2.2)},
               evals={"eval_reward": (pw((0, .02), (100, .03), (450, .13), (1500, .30)), 300)}, eval_every=50,
               headline="eval_reward", P=16, G=8, log_every=5, entropy=pw((0, .48), (450, .44)),
               length=pw((0, 700), (450, 820)), grad=pw((0, .05), (450, .12)), sec_per_step=35),
         w(w_wandb_csv, display="qwen2.5-3b-grpo-numina-hard", log_every=5, panels={
             "train/reward": lambda s, r: f32(r["reward"]),
             "train/frac_reward_zero_std": lambda s, r: f32(r["zero_std"]),
             "train/reward_std": lambda s, r: f32(r["reward_std"]),
             "train/completions/mean_length": lambda s, r: f32(r["len"]),
             "train/grad_norm": lambda s, r: f32(r["grad_norm"]),
             "train/entropy": lambda s, r: f32(r["entropy"]),
             "eval/reward": lambda s, e: e["eval_reward"]}),
         3404, (450, 1500), "ok", "healthy sparse-reward zero-std wandb csv-export",
         "W&B panel exports (x = train/global_step) of a TRL 0.20 GRPO run on hard problems, logging every 5. "
         "At the start ~89% of groups agree (almost all all-zero; frac_reward_zero_std ~0.89) and the reward is "
         "0.015-0.03, "
         "which looks like the no-signal failure. But the signal is there and growing: by step 450 the reward "
         "is ~0.15, zero-std groups are down to ~0.58, and the eval reward (N=300, every 50) went 0.02 -> 0.13 "
         "(sd 0.019 at the end, 5 sd). A sparse start that is lifting; continue."),
    Spec("ok-mlflow-files-trl-eval-fell-560-680-user-restored-ckpt-500-lr-halved-steps-501-680-twice-new-high-at-1000",
         Story(terms={"accuracy_reward": Term(pw((0, .30), (500, .52), (560, .53), (680, .40)))},
               evals={"eval_reward": (pw((0, .30), (500, .50), (560, .51), (680, .41)), 500)}, eval_every=50,
               headline="eval_reward", P=16, G=8, log_every=10, entropy=pw((0, .45), (560, .38), (680, .06)),
               length=pw((0, 600), (560, 560), (680, 240)), grad=pw((0, .2), (560, .2), (680, .9)),
               lr=flat(2e-6), sec_per_step=40),
         w(w_mlflow_files, run_name="grpo-qwen2.5-7b-math-lr2e-6", params={"learning_rate": "2e-06 -> 1e-06",
                                                                         "resume_from_checkpoint": "checkpoint-500"}),
         3405, (1000, 1500), "ok", "healthy resumed-from-earlier-checkpoint duplicate-steps mlflow file-store",
         "HF MLflow callback (file store, raw TRL keys) of a GRPO run that went wrong and was fixed by its "
         "owner. First attempt: eval_reward (N=500, every 50) rose 0.30 -> 0.51 by step 550, then entropy "
         "collapsed (0.38 -> 0.06) and eval fell to ~0.43 by 650; the job was killed at 680. The user restored "
         "checkpoint-500 with half the learning rate and resumed into the same MLflow run, so steps 510-680 "
         "appear twice (the newer lines have later timestamps). The resumed attempt is healthy: entropy ~0.35, "
         "eval 0.50 -> 0.58 at step 1000 of 1500, above the first attempt's 0.51 peak. The fall belongs to a "
         "superseded branch; the live run is improving. Continue.",
         resume=(680, 500, Story(terms={"accuracy_reward": Term(pw((500, .52), (1000, .62)))},
                                 evals={"eval_reward": (pw((500, .50), (1000, .58)), 500)}, eval_every=50,
                                 headline="eval_reward", P=16, G=8, log_every=10,
                                 entropy=pw((500, .38), (1000, .33)), length=pw((500, 560), (1000, 600)),
                                 grad=flat(.18), lr=flat(1e-6), sec_per_step=40), 35.0), age_min=6),
    Spec("ok-verl-jsonl-crashed-3h-ago-torn-last-line-gsm8k-val-0.48-to-0.72-rising-at-380-of-1000",
         Story(terms={"acc": Term(pw((0, .45), (380, .70), (1000, .80)))},
               evals={V_GSM: (pw((0, .48), (380, .72), (1000, .80)), 1319)}, eval_every=20, eval_at_zero=True,
               headline=V_GSM, P=64, G=8, kl=pw((0, 1e-4), (380, .004)), entropy=pw((0, .42), (380, .33)),
               length=pw((0, 290), (380, 240)), cap=1024, clip=flat(.002), grad=flat(.3), sec_per_step=55),
         w(w_verl_jsonl, project="gsm8k_grpo", exp="qwen2.5-3b-grpo-n8", torn=True, save_every=100),
         3406, (380, 1000), "ok", "healthy crashed torn-tail verl jsonl file-logger",
         "verl GRPO with the file logger; the job died (node lost) 3 hours ago in the middle of writing step "
         "380's line, so the JSONL ends in half a record and nothing has been written since. Up to the crash the "
         "run was healthy and improving: score 0.45 -> 0.70, GSM8K val acc (N=1319, every 20) 0.48 -> 0.72 "
         "(sd 0.012), still rising ~0.01 per 20 steps at 38% of the plan; global_step_300 is on disk. The right "
         "call is to resume it: continue (not stop; nothing says the model is done).", age_min=190),
    Spec("ok-mlflow-db-finished-1200-of-1200-status-finished-eval-still-climbing-0.40-to-0.61-extend",
         Story(terms={"accuracy_reward": Term(pw((0, .38), (1200, .63)))},
               evals={"eval_reward": (pw((0, .40), (1200, .61)), 600)}, eval_every=100, headline="eval_reward",
               P=16, G=8, log_every=10, entropy=pw((0, .47), (1200, .39)), length=pw((0, 520), (1200, 610)),
               grad=flat(.16), sec_per_step=38),
         w(w_mlflow_db, run_name="grpo-llama3.1-8b-gsm-plus", finished=True), 3407, (1200, 1200), "ok",
         "healthy finished still-rising mlflow sqlite",
         "MLflow SQL store (mlflow.db), run status FINISHED with an end time: the planned 1200 steps are done. "
         "The eval reward (N=600, every 100) climbed steadily 0.40 -> 0.61 with constant lr and was still rising "
         "at the same pace at the end (0.555 at 900, 0.61 at 1200; sd 0.02, +2.7 sd over the last 300 steps); "
         "train reward 0.38 -> 0.63 the same. For a finished run continue means extending is worth it, and it "
         "is: the run stopped because the budget ran out, not because it converged. Continue (extend)."),
    Spec("ok-nemo-tb-approx-entropy-hump-0.42-to-0.95-back-to-0.40-validation-0.31-to-0.50-live-700",
         Story(terms={"acc": Term(pw((0, .30), (700, .52), (1500, .62)))},
               evals={"validation/accuracy": (pw((0, .31), (700, .50), (1500, .58)), 500)}, eval_every=50,
               eval_at_zero=True, headline="validation/accuracy", P=32, G=16,
               kl=pw((0, 1e-4), (700, .012)), entropy=pw((0, .42), (150, .95), (300, .80), (450, .45), (700, .40)),
               length=pw((0, 600), (200, 900), (700, 780)), cap=4096, grad=flat(.25), lr=flat(5e-7),
               sec_per_step=70),
         w(w_nemo_tb, exp="exp_002"), 3408, (700, 1500), "ok",
         "healthy side-signal-hump entropy nemo-rl tensorboard live",
         "NeMo-RL GRPO. train/approx_entropy rises 0.42 -> 0.95 over the first 150 steps (the policy explores a "
         "longer chain-of-thought style; lengths 600 -> 900) and then comes back down to ~0.40 by step 450. The "
         "entropy hump never touched the outcome: train reward 0.30 -> 0.52 and validation/accuracy (N=500, every "
         "50) 0.31 -> 0.50 by step 700 (sd 0.022), still rising, KL a modest 0.012. A side signal that rose and "
         "fell is not a rise-then-fall of the model. Continue."),
    Spec("ok-rasbt-7_5-csv-reward-0-first-40-of-300-steps-then-climbs-eval-0.09-to-0.19-at-150",
         Story(terms={"acc": Term(pw((0, .01), (40, .02), (150, .30), (300, .42)))},
               evals={"eval_acc": (pw((1, .09), (50, .10), (100, .145), (150, .19), (300, .26)), 500)},
               eval_list=[1, 50, 100, 150, 200, 250, 300], headline="eval_acc", P=1, G=8,
               kl=pw((0, 1e-5), (150, .0035)), entropy=pw((0, .62), (150, .55)), length=pw((0, 380), (150, 330)),
               cap=512, extra={"tps": (flat(41.0), .05)}, add={"loss_raw": (flat(0.0), 60.0)}, sec_per_step=55),
         w(w_rasbt_csv, script="7_5_plus_kl"), 3409, (150, 300), "ok",
         "healthy slow-starter rasbt csv one-prompt-per-step",
         "reasoning-from-scratch 7_5_plus_kl.py: one MATH prompt x 8 rollouts per step, 300 steps planned "
         "(total_steps column), MATH-500 eval at step 1 and every 50. For the first ~40 steps (13%) almost every "
         "reward_avg is 0.0 and adv_std 0 (update skipped, loss 0.0, empty policy_ratio), with a rare 0.125. "
         "Then correct answers start to appear: reward level ~0.30 by 150 (still single-step noisy in eighths), "
         "and eval_acc 0.09 (step 1), 0.10 (50), 0.145 (100), 0.19 (150) on N=500 (sd 0.018): a 5.7 sd rise. "
         "Half the budget left and learning; continue."),
    Spec("conv-trl019-dpo-console-at-1850-of-2000-eval-pref-acc-flat-0.72-since-1300-lr-decayed-to-4e-8",
         Story(evals={"eval_rewards/accuracies": (pw((0, .50), (400, .64), (900, .705), (1300, .72), (2000, .72)),
                                                 1000)},
               eval_every=100, headline="eval_rewards/accuracies", P=32, log_every=10, mode="dpo",
               dpo={"acc": pw((0, .5), (400, .68), (1300, .80), (2000, .81)),
                    "margin": pw((0, 0), (400, .9), (1300, 1.9), (2000, 2.05)),
                    "chosen": pw((0, 0), (400, -.3), (1300, -.9), (2000, -1.0)),
                    "loss": pw((0, .693), (400, .56), (1300, .45), (2000, .44)),
                    "logp_c": pw((0, -285), (2000, -296)), "logp_r": pw((0, -301), (2000, -322))},
               grad=flat(18.0), lr=pw((0, 0), (100, 5e-7), (2000, 0)), sec_per_step=9),
         w(w_trl_console, version="0.19.1", model="meta-llama/Llama-3.1-8B-Instruct", eval_extra=dpo_eval,
           name="dpo_train.out"),
         3410, (1850, 2000), "conv", "converged dpo trl console-dicts near-end",
         "TRL 0.19 DPO stdout (printed log dicts, tqdm at 1850/2000). eval_rewards/accuracies (N=1000 pairs, every "
         "100) rose 0.50 -> 0.705 by step 900 and has been flat at ~0.72 since 1300 (sd 0.014; six evals in a "
         "band); train accuracies ~0.80, margins still widening slowly (1.9 -> 2.0), the usual DPO drift that "
         "doesn't move held-out accuracy. The linear schedule has lr at ~4e-8, so the last 150 steps cannot "
         "change much. Converged near the end: stopping now or letting it finish are both fine.", onset=1300),
    # ================================================================================================ no signal
    Spec("stop-trl021-console-g16-one-prompt-per-step-reward-0-on-most-steps-1-16-blips-grad-norm-0-at-420-of-1200",
         Story(terms={"accuracy_reward": Term(flat(.009), spread=1.5)},
               evals={"eval_reward": (flat(.006), 200)}, eval_every=100, headline="eval_reward", P=1, G=16,
               log_every=1, zero_grad_when_flat=True, entropy=flat(.31), length=pw((0, 1900), (420, 1950)),
               cap=2048, trunc=flat(.35), grad=flat(.6), sec_per_step=24),
         w(w_trl_console, version="0.21.0", model="Qwen/Qwen2.5-0.5B-Instruct", name="nohup.out"),
         3411, (420, 1200), "stop", "stop no-signal sparse-binary zero-std trl console-dicts logging-every-step",
         "TRL 0.21 GRPO on a 0.5B model with one prompt x 16 generations per step and logging_steps=1 on "
         "competition problems. The reward is exactly 0.0 on the large majority of the 420 logged steps, with an "
         "occasional 0.0625 (1 of 16) or 0.125; frac_reward_zero_std is 1.0 and loss and grad_norm are exactly "
         "0.0 on every all-zero step, so those steps do not update the model at all. Most completions run into "
         "the 2048 cap (clipped_ratio ~0.35). eval_reward (N=200, every 100) is 0.005-0.02 (1 to 4 of 200) at "
         "every eval, no "
         "trend. The level is flat at ~0.01 from step 1: the task is too hard for this model and no signal "
         "arrives. 780 more steps will not change it. Stop (nothing was learned, nothing to roll back to)."),
    Spec("stop-hf-tb-trl019-format-reward-1.0-from-step-1-correctness-0.003-eval-correctness-0.00-at-800-of-2500",
         Story(terms={"format_reward": Term(flat(.998), spread=1.0),
                      "correctness_reward": Term(flat(.003), spread=1.2)},
               evals={"eval_rewards/format_reward/mean": (flat(.998), 300),
                      "eval_rewards/correctness_reward/mean": (flat(.003), 300)},
               eval_every=100, headline="eval_rewards/correctness_reward/mean", P=16, G=8, log_every=10,
               zero_grad_when_flat=True, entropy=flat(.21), length=pw((0, 140), (800, 150)), cap=512,
               trunc=flat(0.0), grad=flat(.02), sec_per_step=18),
         w(w_hf_tb, version="0.19.0", fns=("format_reward", "correctness_reward"), save_every=200, keep=1,
           eval_extra=eval_sum(("eval_rewards/format_reward/mean", 1.0),
                               ("eval_rewards/correctness_reward/mean", 1.0))),
         3412, (800, 2500), "stop", "stop no-signal format-ceiling task-floor tensorboard hf trl",
         "TRL 0.19 GRPO (TensorBoard, checkpoint-800 with max_steps 2500). The SFT'd model already emits the "
         "required tags, so train/rewards/format_reward/mean is ~0.998 from the first log, while "
         "train/rewards/correctness_reward/mean sits at ~0.003 throughout (1 to 8 of the 1280 samples per log); "
         "the total "
         "reward is flat at ~1.0, frac_reward_zero_std ~0.97, grad norm ~0.02 (0 on fully flat batches). "
         "eval/rewards/correctness_reward/mean (N=300, every 100) is 0 to 0.01 (0 to 3 of 300) at all 8 evals. Short, "
         "confident, wrong answers (~145 tokens, entropy 0.21). No learning signal; the weights are as good as "
         "any earlier ones. Stop."),
    Spec("stop-custom-jsonl-total-reward-0.28-to-1.13-from-format-and-brevity-terms-correct-term-0-heldout-0.004",
         Story(terms={"correct": Term(flat(.0008), spread=1.0),
                      "format": Term(pw((0, .25), (300, .95), (900, .98)), spread=1.2),
                      "brevity": Term(pw((0, .12), (900, .58)), kind="cont", weight=0.25, sd=.1)},
               evals={"heldout_acc": (flat(.004), 250)}, eval_every=100, eval_at_zero=True,
               headline="heldout_acc", P=32, G=8, kl=pw((0, 1e-4), (900, .03)), entropy=pw((0, .55), (900, .40)),
               length=pw((0, 700), (900, 310)), cap=1024, grad=flat(.35), lr=flat(1e-6), sec_per_step=28),
         w(w_custom_jsonl, name="metrics.jsonl", eval_file="eval.jsonl", step_key="iter",
           config={"model": "Qwen2.5-Math-1.5B", "total_iters": 3000, "group_size": 8, "prompts_per_iter": 32,
                   "reward": "correct + format + 0.25 * brevity", "lr": 1e-6, "kl_coef": 0.02},
           keys=hand_keys(reward=lambda r: round(r["reward"], 5),
                          r_correct=lambda r: round(r["comp"]["correct"][0], 5),
                          r_format=lambda r: round(r["comp"]["format"][0], 5),
                          r_brevity=lambda r: round(r["comp"]["brevity"][0], 5),
                          kl=lambda r: round(r["kl"], 6), entropy=lambda r: round(r["entropy"], 4),
                          gen_len=lambda r: round(r["len"], 1), grad_norm=lambda r: round(r["grad_norm"], 4),
                          lr=lambda r: r["lr"], pg_loss=lambda r: round(r["loss"], 5))),
         3413, (900, 3000), "stop", "stop summed-reward hides-task-floor custom jsonl hand-loop",
         "A hand-written GRPO loop whose logged reward is correct + format + 0.25 * brevity. The total climbs "
         "0.28 -> ~1.13 over 900 of 3000 iterations, which looks like learning, but every bit of it is the "
         "format term (0.25 -> 0.98) and the brevity score (0.12 -> 0.58; answers shrink 700 -> 310 tokens). "
         "r_correct is exactly 0 on ~83% of iterations and 1/256 or 2/256 on the rest, and held-out accuracy (eval.jsonl, N=250, "
         "every 100) is 0.0-0.01 at all 10 evals. The task part never moved, so no earlier weights are better at "
         "the task and more iterations only polish the format. Stop."),
    Spec("stop-verl-jsonl-val-core-flat-0.41-over-14-evals-score-creeps-0.395-to-0.41-inside-noise-at-650-of-1000",
         Story(terms={"acc": Term(pw((0, .395), (650, .41)), spread=1.6)},
               evals={V_DSR: (flat(.412), 500)}, eval_every=50, eval_at_zero=True, headline=V_DSR, P=32, G=8,
               kl=pw((0, 1e-4), (650, .006)), entropy=pw((0, .50), (650, .44)), length=flat(780.0), cap=3072,
               clip=flat(.003), grad=flat(.22), sec_per_step=65),
         w(w_verl_jsonl, project="deepscaler", exp="r1-distill-1.5b-grpo-lr1e-6", save_every=100, keep=3),
         3488, (650, 1000), "stop", "stop no-signal eval-never-moves verl jsonl",
         "verl GRPO (file logger). val-core/deepscaler/acc/mean@1 (N=500, every 50 from step 0) is flat at "
         "~0.41 over 14 evaluations (sd 0.022; the drawn values wander inside +-2 sd with no trend). The batch "
         "score creeps 0.395 -> 0.41 over 650 steps, a 0.015 change against a per-step sd of ~0.05: nothing "
         "that can be told from noise. KL (0.006) and entropy (0.50 -> 0.44) barely move. 650 of 1000 steps "
         "bought nothing, and the remaining 350 have no reason to behave differently. Stop."),
    Spec("stop-openrlhf09-console-easy-set-reward-0.985-group-reward-std-0.03-math500-flat-0.52-at-500-of-1500",
         Story(terms={"acc": Term(pw((0, .93), (40, .985), (500, .986)), spread=1.5)},
               evals={"eval_math500_pass1": (pw((0, .515), (40, .52), (500, .52)), 500)}, eval_every=25,
               headline="eval_math500_pass1", P=64, G=8, kl=pw((0, 1e-4), (500, .008)),
               length=pw((0, 420), (500, 380)), cap=4096, clip=flat(.03), grad=pw((0, .3), (40, .05), (500, .04)),
               lr=flat(5e-7), sec_per_step=45),
         w(w_openrlhf_console, name="train_grpo.log", v010=False), 3415, (500, 1500), "stop",
         "stop no-signal saturated zero-group-std openrlhf console",
         "OpenRLHF 0.9 GRPO (console log, ✨ Global step lines). The prompt set is far too easy for the model: "
         "reward is 0.93 at step 1 and ~0.985 from step 40 on, group_reward_std (mean within-group std) ~0.035 "
         "because ~90% of the groups of 8 are all-correct (zero std), grad norm down to ~0.04. Held-out MATH-500 pass@1 "
         "(N=500, every 25) is 0.515-0.52 throughout (sd 0.022). There is no signal left to learn from; the "
         "current weights are as good as any. Stop (and pick harder prompts).", onset=40),
    Spec("stop-trl12-finished-1600-of-1600-top-level-state-eval-plateau-0.60-since-1100-final-at-best-limit2",
         Story(terms={"accuracy_reward": Term(pw((0, .40), (700, .60), (1100, .63), (1600, .635)))},
               evals={"eval_rewards/accuracy_reward/mean": (pw((0, .42), (700, .57), (1100, .60), (1600, .60)),
                                                            800)},
               eval_every=100, headline="eval_rewards/accuracy_reward/mean", P=16, G=8, log_every=10,
               entropy=pw((0, .45), (1100, .30), (1600, .29)), length=pw((0, 600), (1600, 640)),
               lr=lambda s: 1e-6 * 0.5 * (1 + math.cos(math.pi * s / 1600)), sec_per_step=33),
         w(w_trl_state, version="1.2.0", save_every=100, keep=2, finished=True, adapter=False,
           eval_extra=eval_copy("eval_rewards/accuracy_reward/mean")),
         3416, (1600, 1600), "stop", "stop finished plateau trl trainer_state top-level checkpoints",
         "TRL 1.2 GRPO that ran to its planned end: top-level trainer_state.json with the train_runtime row and "
         "should_training_stop, plus checkpoint-1500 and checkpoint-1600. Eval accuracy (N=800, every 100) rose "
         "0.42 -> 0.60 by step 1100 and stayed there (sd 0.017; the last 6 evals in one band); cosine lr reached "
         "0. The final weights are at the plateau level, as good as any earlier point, and the plateau under a "
         "decayed lr says extending would not pay. Stop: keep the final weights.", onset=1100, age_min=240),
    Spec("stop-nemo-tb-stalled-6h-at-340-pct0-92-reward-0.008-validation-0.01-flat-never-learned",
         Story(terms={"acc": Term(flat(.008), spread=2.0)},
               evals={"validation/accuracy": (flat(.011), 500)}, eval_every=20, eval_at_zero=True,
               headline="validation/accuracy", P=32, G=16, kl=pw((0, 1e-4), (340, .0009)), entropy=flat(.58),
               length=flat(3600.0), cap=4096, trunc=flat(.22), grad=flat(.03), sec_per_step=160),
         w(w_nemo_tb, exp="exp_001"), 3417, (340, 1000), "stop", "stop no-signal stalled nemo-rl tensorboard",
         "NeMo-RL GRPO on olympiad problems; the event file was last written 6 hours ago at step 340 (the job "
         "hung). Over those 340 steps train/reward stays ~0.008, train/baseline_reward/pct_0 is ~92% (all 16 "
         "samples wrong on nearly every prompt), 22% of samples truncated at 4096, and validation/accuracy (N=500, "
         "every 20) is 0.002-0.018 at all 18 evals. It never learned anything. Restarting the hung job would "
         "only buy more of the same: stop.", age_min=360),
    Spec("sor-wandb-csv-trl023-rloo-eval-plateau-0.47-from-600-eases-to-0.452-at-1400-kl-creeps-0.05-to-0.15",
         Story(terms={"accuracy_reward": Term(pw((0, .30), (600, .50), (1400, .53)))},
               evals={"eval_reward": (pw((0, .31), (600, .47), (1000, .47), (1400, .452)), 600)}, eval_every=100,
               headline="eval_reward", P=16, G=4, log_every=10, kl=pw((0, 1e-3), (600, .05), (1400, .15)),
               entropy=pw((0, .5), (600, .36), (1400, .27)), length=pw((0, 450), (1400, 520)), grad=flat(.2),
               sec_per_step=26),
         w(w_wandb_csv, display="rloo-k4-qwen2.5-7b", log_every=10, panels={
             "train/reward": lambda s, r: f32(r["reward"]), "train/kl": lambda s, r: f32(r["kl"]),
             "train/entropy": lambda s, r: f32(r["entropy"]),
             "train/completions/mean_length": lambda s, r: f32(r["len"]),
             "train/grad_norm": lambda s, r: f32(r["grad_norm"]), "eval/reward": lambda s, e: e["eval_reward"]}),
         3566, (1400, 3000), "sor", "stop-or-rollback drift kl-creep wandb csv-export rloo",
         "W&B panel CSVs of a TRL 0.23 RLOO run (k=4, beta 0.05 so train/kl is logged). eval/reward (N=600, every "
         "100) rose 0.31 -> 0.47 by step 600, held 0.47 to ~1000, and has eased to ~0.452 by 1400: 0.018, about "
         "0.9 sd of one eval (0.020), not separable from noise. Meanwhile train reward creeps 0.50 -> 0.53 and KL "
         "triples 0.05 -> 0.15, entropy 0.36 -> 0.27: the policy keeps drifting without getting better "
         "held-out. Nothing more to gain: stop; going back to the plateau (600-1000) is as good.", onset=1000),
    # ================================================================================================ rollback
    Spec("rb-trl023-ckpts-eval-rises-0.31-to-0.52-back-to-0.32-by-1000-start-to-now-flat-kept-ckpts-900-1000",
         Story(terms={"accuracy_reward": Term(pw((0, .30), (400, .50), (480, .51), (1000, .31)))},
               evals={"eval_rewards/accuracy_reward/mean":
                      (pw((0, .31), (400, .51), (470, .52), (500, .52), (1000, .32)), 500)},
               eval_every=50, headline="eval_rewards/accuracy_reward/mean", P=16, G=8, log_every=10,
               entropy=pw((0, .42), (500, .36), (1000, .11)), length=pw((0, 620), (500, 600), (1000, 230)),
               grad=flat(.15), sec_per_step=36),
         w(w_trl_state, version="0.23.0", save_every=100, keep=2,
           eval_extra=eval_copy("eval_rewards/accuracy_reward/mean")),
         3419, (1000, 2000), "rb", "rollback rise-then-fall start-equals-now trl trainer_state checkpoints-past-peak",
         "TRL 0.23 GRPO; only checkpoint-900 and -1000 are on disk (save_total_limit 2), their trainer_state "
         "holds the whole history. Eval accuracy (N=500, every 50) climbs 0.31 -> 0.52 (steps 450-500), then "
         "slides back to 0.32 at step 1000 as answers shrink 600 -> 230 tokens and entropy falls 0.36 -> 0.11; "
         "train reward does the same 0.30 -> 0.51 -> 0.31. Start and now are level, so a start-to-now trend "
         "says 'flat', but peak-to-now is 0.20 (9 sd of one eval, sd 0.022). The step-400..500 weights are "
         "better; no checkpoint at or before 500 survives here, so restore it from wherever saves went (or "
         "re-run to 500). Rollback to 500.", onset=500),
    Spec("rb-verl-console-math-val-peaks-0.58-at-325-375-falls-to-0.49-at-600-train-score-holds-0.66",
         Story(terms={"acc": Term(pw((0, .35), (300, .62), (600, .66)))},
               evals={V_LMATH: (pw((0, .30), (325, .58), (375, .58), (600, .49)), 500)}, eval_every=25,
               eval_at_zero=True, headline=V_LMATH, P=64, G=8, kl=pw((0, 1e-4), (375, .006), (600, .018)),
               entropy=pw((0, .48), (375, .33), (600, .19)), length=pw((0, 640), (375, 560), (600, 410)),
               cap=2048, clip=flat(.004), grad=flat(.25), sec_per_step=80),
         w(w_verl_console, np2=False, project="math_grpo", exp="qwen2.5-7b-math-n8", save_every=100,
           name="train_math.log"),
         3420, (600, 1000), "rb", "rollback eval-only-fall train-holds verl console",
         "verl GRPO console log (plain floats). Train critic/score/mean rises 0.35 -> 0.62 by step 300 and keeps "
         "creeping to 0.66: from the train side nothing is wrong. The held-out val-core/lighteval/MATH/acc/mean@1 "
         "(N=500, every 25) tells otherwise: 0.30 -> 0.58 at 325-375, then down to 0.49 at 600 (sd 0.022; 4 sd). "
         "The policy fits the training pool's quirks (entropy 0.33 -> 0.19, answers 560 -> 410 tokens, KL "
         "0.006 -> 0.018) and loses generality. The fall is only in the eval, and the eval is what counts. "
         "Rollback to the newest peak point, ~375 (save_freq 100: restore global_step_300).", onset=375),
    Spec("rb-trl024-console-no-eval-reward-plateau-0.61-300-560-last-4-logs-fall-to-0.33-entropy-1.7-live-600",
         Story(terms={"accuracy_reward": Term(pw((0, .22), (300, .61), (560, .61), (570, .52), (580, .44),
                                                 (590, .37), (600, .33)))},
               P=16, G=8, log_every=10, entropy=pw((0, .40), (560, .34), (570, .7), (600, 1.7)),
               length=pw((0, 520), (560, 500), (600, 1300)), trunc=pw((0, .01), (560, .01), (600, .2)),
               grad=pw((0, .2), (560, .2), (570, 1.8), (600, 3.5)), lr=flat(3e-6), sec_per_step=20),
         w(w_trl_console, version="0.24.0", model="Qwen/Qwen2.5-3B-Instruct", name="grpo_run.log"),
         3421, (600, 1500), "rb", "rollback late-fall last-points entropy-blowup trl console-dicts no-eval live",
         "TRL 0.24 GRPO stdout, logging every 10 steps, no eval set. The reward climbs 0.22 -> 0.61 by step 300 "
         "and holds 0.61 to 560 (26 logs on a plateau; sd of one logged mean ~0.02). Only the last four logs "
         "(570-600) break: reward 0.52, 0.44, 0.37, 0.33, with entropy jumping 0.34 -> 1.7, grad norm 0.2 -> 3.5 "
         "and completions ballooning 500 -> 1300 tokens (20% clipped): a blow-up at lr 3e-6, seen minutes ago. "
         "The drop is ~12 sd. The best weights are the newest plateau ones, ~560. Rollback to 560.", onset=560,
         age_min=2),
    Spec("rb-verl-jsonl-entropy-collapse-0.40-to-0.03-from-450-olympiad-val-0.355-to-0.27-ckpts-only-500-600",
         Story(terms={"acc": Term(pw((0, .25), (400, .40), (450, .41), (680, .34)), spread=1.6)},
               evals={V_OLY: (pw((0, .22), (400, .35), (450, .355), (680, .27)), 675)}, eval_every=50,
               eval_at_zero=True, headline=V_OLY, P=64, G=8, kl=pw((0, 1e-4), (450, .01), (680, .05)),
               entropy=pw((0, .55), (450, .40), (550, .08), (680, .03)), length=pw((0, 1800), (450, 1700), (680, 1100)),
               cap=4096, clip=pw((0, .003), (450, .004), (680, .02)), grad=flat(.2), sec_per_step=95),
         w(w_verl_jsonl, project="olympiad_grpo", exp="qwen2.5-math-7b-n8-ent", save_every=100, keep=2),
         3422, (680, 1200), "rb", "rollback entropy-collapse verl jsonl checkpoints-past-peak",
         "verl GRPO with the file logger; checkpoints/olympiad_grpo/... holds only global_step_500 and "
         "global_step_600 (max_ckpt_to_keep 2). From step 450 actor/entropy collapses 0.40 -> 0.08 (by 550) -> "
         "0.03, KL climbs 0.01 -> 0.05 and pg_clipfrac rises 5x. The OlympiadBench val acc (N=675, every 50) "
         "had peaked at 0.35-0.355 (steps 400-450) and is down to 0.28 at the last eval, 650 (sd 0.018; 4 sd), "
         "heading for 0.27; the train "
         "score with it (0.41 -> 0.34). The kept checkpoints are both past the peak: the target is ~450, to be "
         "restored from an earlier save if one exists elsewhere. Rollback.", onset=450),
    Spec("rb-openrlhf010-tb-lengths-to-4096-cap-truncated-0.05-to-0.62-math-pass1-0.505-to-0.38-from-700",
         Story(terms={"acc": Term(pw((0, .28), (700, .52), (800, .47), (900, .36)))},
               evals={"eval_math_pass1": (pw((0, .30), (650, .50), (700, .505), (900, .38)), 500),
                      "eval_math_truncated_rate": (pw((0, .01), (700, .05), (900, .60)), 500)},
               eval_every=50, headline="eval_math_pass1", P=128, G=8, kl=pw((0, 1e-4), (700, .02), (900, .06)),
               length=pw((0, 900), (650, 1600), (700, 1700), (900, 3900)), cap=4096,
               trunc=pw((0, .01), (700, .05), (900, .62)), clip=flat(.02), grad=pw((0, .25), (700, .25), (900, .6)),
               lr=flat(5e-7), sec_per_step=110),
         w(w_openrlhf_tb, sub="tb_logs/qwen2.5-7b-rpp-math", v010=True), 3423, (900, 2000), "rb",
         "rollback length-explosion truncation openrlhf tensorboard",
         "OpenRLHF 0.10 REINFORCE++ (TensorBoard train/*, eval/*). Response length grows healthily 900 -> 1700 "
         "tokens by step 700, then runs away to ~3900 against the 4096 cap by 900: train/truncated and "
         "rollout/truncated_rate go 0.05 -> 0.62, and truncated answers score 0. Train reward falls 0.52 -> "
         "0.36; eval/eval_math_pass1 (N=500, every 50) peaked at 0.50-0.505 (650-700) and is 0.38 at 900 (sd "
         "0.022; 5.6 sd), eval truncated rate 0.05 -> 0.60. Rollback to ~700.", onset=700),
    Spec("rb-wandb-csv-trl018-grpo-beta-0.04-kl-0.04-to-4.5-from-820-reward-0.71-to-0.38-eval-0.71-to-0.40",
         Story(terms={"accuracy_reward": Term(pw((0, .45), (800, .71), (820, .71), (1100, .38)))},
               evals={"eval_reward": (pw((0, .45), (700, .70), (820, .71), (1100, .40)), 400)}, eval_every=100,
               headline="eval_reward", P=16, G=8, log_every=10, kl=pw((0, 1e-3), (800, .04), (850, .3), (1100, 4.5)),
               entropy=pw((0, .4), (820, .33), (1100, .9)), length=pw((0, 300), (820, 280), (1100, 700)),
               grad=pw((0, .3), (820, .3), (860, 2.5), (1100, 4.0)), sec_per_step=22),
         w(w_wandb_csv, display="grpo-gsm8k-beta0.04", log_every=10, panels={
             "train/reward": lambda s, r: f32(r["reward"]), "train/kl": lambda s, r: f32(r["kl"]),
             "train/grad_norm": lambda s, r: f32(r["grad_norm"]),
             "train/completions/mean_length": lambda s, r: f32(r["len"]),
             "train/rewards/accuracy_reward/mean": lambda s, r: f32(r["comp"]["accuracy_reward"][0]),
             "eval/reward": lambda s, e: e["eval_reward"]}),
         3424, (1100, 2000), "rb", "rollback kl-blowup wandb csv-export trl",
         "W&B panel exports of a TRL 0.18 GRPO run (beta 0.04, so train/kl exists). KL sits at ~0.04 until "
         "step 820, then blows up: 0.3 by 850 and ~4.5 by 1100, with grad norm 0.3 -> 4 and completions 280 -> "
         "700 tokens. Train reward falls from its 0.71 plateau to 0.38; eval/reward (N=400, every 100) was 0.70 "
         "at 700 and ~0.71 at 800, and is 0.40 at 1100 (sd 0.023; 13 sd). Rollback to 800, the last eval "
         "before the blow-up.", onset=820),
    Spec("rb-trl0222-published-top-level-state-no-ckpt-folders-save-every-100-finished-1500-plateau-400-900-falls",
         Story(terms={"accuracy_reward": Term(pw((0, .36), (400, .56), (900, .57), (1500, .47)))},
               evals={"eval_rewards/accuracy_reward/mean": (pw((0, .38), (400, .55), (900, .555), (1500, .45)),
                                                            600)},
               eval_every=50, headline="eval_rewards/accuracy_reward/mean", P=16, G=8, log_every=10,
               entropy=pw((0, .44), (900, .30), (1500, .13)), length=pw((0, 540), (900, 500), (1500, 310)),
               grad=flat(.17), sec_per_step=31),
         w(w_trl_state, version="0.22.2", save_every=100, finished=True, top_only=True,
           eval_extra=eval_copy("eval_rewards/accuracy_reward/mean")),
         3425, (1500, 1500), "rb", "rollback long-plateau published-logs no-checkpoint-folders trl finished",
         "A published TRL 0.22 GRPO run: only the final trainer_state.json (train_runtime row, "
         "should_training_stop, save_steps 100) was uploaded, no checkpoint folders. Eval accuracy (N=600, every "
         "50) rose 0.38 -> 0.55 by step 400 and held 0.55-0.555 for 500 steps (400-900), then slid to 0.45 by "
         "the end at 1500 (sd 0.020; 5 sd) as entropy drained 0.30 -> 0.13 and answers shortened 500 -> 310. "
         "The run is finished, so the question is which weights to keep: not the final ones. The best target is "
         "the newest plateau point, 900 (checkpoint-900 by the save interval, wherever the saves were pushed), "
         "not the first one at 400. Rollback.", onset=900, age_min=3 * 24 * 60),
    Spec("rb-custom-jsonl-hand-loop-nan-from-731-reward-0-crashed-2h-ago-torn-last-line-eval-best-600-700",
         Story(terms={"acc": Term(pw((0, .25), (600, .52), (730, .53), (730.5, 0.0), (2000, 0.0)))},
               evals={"pass@1": (pw((0, .24), (600, .50), (730, .51)), 300)}, eval_every=100, eval_at_zero=True,
               headline="pass@1", P=32, G=8, kl=pw((0, 1e-4), (730, .02)), entropy=pw((0, .5), (730, .38)),
               length=pw((0, 480), (730, 410), (733, 4096)), cap=4096, grad=pw((0, .4), (720, .4), (730, 9.0)),
               lr=flat(2e-6), hook=hook_nan_after(730), sec_per_step=30),
         w(w_custom_jsonl, name="train_log.jsonl", eval_inline=True, torn=True,
           keys=hand_keys(loss=lambda r: r["loss"], reward_mean=lambda r: round(r["reward"], 5),
                          reward_std=lambda r: round(r["reward_std"], 5), kl=lambda r: r.get("kl"),
                          entropy=lambda r: r["entropy"], grad_norm=lambda r: r["grad_norm"], lr=lambda r: r["lr"],
                          resp_len=lambda r: round(r["len"], 1))),
         3426, (790, 2000), "rb", "rollback nan crashed torn-tail custom jsonl hand-loop",
         "A hand-written GRPO loop writing one JSON line per step, eval records inline (split=eval, every 100). "
         "Reward rose 0.25 -> 0.53 by step 730 and pass@1 (N=300) 0.24 -> 0.50 (600) / 0.51 (700). At step 731 "
         "the grad norm had spiked to ~9 and from then on loss, grad_norm and entropy are NaN (Python json writes "
         "NaN), reward_mean is exactly 0 and responses run to the 4096 cap: the weights are NaN. The process "
         "crashed 2 hours ago at step 790 halfway through a line. The model before 731 is the one to keep: the "
         "newest eval as good as the best is 700. Rollback.", onset=730, age_min=125),
    Spec("rb-trl024-ckpts-three-reward-fns-total-keeps-rising-accuracy-peaks-0.48-at-520-falls-0.38-limit5",
         Story(terms={"accuracy_reward": Term(pw((0, .25), (450, .47), (520, .48), (900, .38))),
                      "format_reward": Term(pw((0, .6), (300, .95), (900, .995)), weight=0.5, spread=1.0),
                      "length_reward": Term(pw((0, .2), (500, .45), (900, .85)), kind="cont", weight=0.5, sd=.1)},
               evals={"eval_rewards/accuracy_reward/mean": (pw((0, .26), (450, .47), (520, .48), (900, .37)), 500)},
               eval_every=50, headline="eval_rewards/accuracy_reward/mean", P=16, G=8, log_every=10,
               entropy=pw((0, .45), (900, .28)), length=pw((0, 650), (500, 480), (900, 260)), grad=flat(.15),
               sec_per_step=34),
         w(w_trl_state, version="0.24.0", fns=("accuracy_reward", "format_reward", "length_reward"),
           save_every=100, keep=5,
           eval_extra=eval_sum(("eval_rewards/accuracy_reward/mean", 1.0),
                               (pw((0, .6), (300, .95), (900, .995)), 0.5), (pw((0, .2), (500, .45), (900, .85)), 0.5))),
         3427, (900, 2000), "rb", "rollback summed-reward hides-task-decline trl trainer_state checkpoints",
         "TRL 0.24 GRPO with three reward functions (weights 1, 0.5, 0.5): accuracy, format, and a length "
         "reward that pays for short answers. The total reward keeps rising (0.65 -> 1.19 at 500 -> ~1.30 at "
         "900) because format (0.6 -> 0.995) and length (0.2 -> 0.85) keep paying, while "
         "rewards/accuracy_reward/mean peaks at 0.48 around 500-520 and falls to 0.38 as answers are cut "
         "480 -> 260 tokens. The eval accuracy (N=500, every 50) follows: 0.47-0.477 at 450-500, 0.37 at 900 "
         "(sd 0.022; 4.8 sd). checkpoint-500..900 are on disk (limit 5); checkpoint-500 is the target. Rollback.",
         onset=520),
    Spec("rb-rasbt-7_5-csv-stalled-4h-entropy-jumps-to-11.9-at-237-reward-0-eval-peak-0.305-at-200",
         Story(terms={"acc": Term(pw((0, .05), (150, .33), (200, .35), (236, .35), (238, 0.0)))},
               evals={"eval_acc": (pw((1, .15), (150, .30), (200, .305), (236, .30), (245, .02)), 500)},
               eval_list=[1, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500], headline="eval_acc", P=1, G=8,
               kl=pw((0, 1e-5), (200, .02), (236, .05), (245, 27.0)),
               entropy=pw((0, .6), (230, .5), (236, .52), (238, 11.93)),
               length=pw((0, 350), (236, 330), (239, 512)), cap=512, trunc=pw((0, 0), (236, 0), (239, 1.0)),
               extra={"tps": (flat(41.0), .05)}, add={"loss_raw": (flat(0.0), 80.0)}, sec_per_step=60),
         w(w_rasbt_csv, script="7_5_plus_kl"), 3428, (262, 500), "rb",
         "rollback entropy-blowup uniform-noise stalled rasbt csv",
         "reasoning-from-scratch 7_5_plus_kl.py (one prompt x 8 rollouts per step, total_steps 500, eval on "
         "MATH-500 at 1 and every 50). eval_acc 0.15 (step 1) -> 0.30 (150) -> 0.305 (200). Around step 237 "
         "entropy_avg jumps from ~0.5 to ~11.9, ln(151936) for the Qwen3 vocabulary: the model emits uniform "
         "noise; kl_loss explodes, every response hits the 512 cap, reward_avg is 0.0 on every step after, and "
         "eval_acc at 250 is ~0.02. The log stopped at step 262 four hours ago (stalled). The step-200 "
         "checkpoint is the newest good one: rollback.", onset=236, age_min=240),
    Spec("rb-hf-tb-trl022-sparse-reward-0.01-lifts-to-0.24-then-fades-to-0.03-zero-std-back-to-0.8-ckpts-700-800",
         Story(terms={"accuracy_reward": Term(pw((0, .01), (120, .012), (420, .24), (480, .245), (800, .03)),
                                              spread=2.0)},
               evals={"eval_rewards/accuracy_reward/mean":
                      (pw((0, .015), (120, .02), (420, .21), (480, .215), (800, .03)), 300)},
               eval_every=50, headline="eval_rewards/accuracy_reward/mean", P=16, G=8, log_every=10,
               zero_grad_when_flat=True, entropy=pw((0, .5), (480, .36), (800, .05)),
               length=pw((0, 900), (480, 850), (800, 380)), grad=pw((0, .05), (420, .2), (800, .04)),
               sec_per_step=28),
         w(w_hf_tb, version="0.22.0", save_every=100, keep=2, adapter=True,
           eval_extra=eval_copy("eval_rewards/accuracy_reward/mean")),
         3429, (800, 2000), "rb", "rollback sparse-reward learned-then-lost tensorboard hf trl checkpoints",
         "TRL 0.22 GRPO (TensorBoard plus checkpoint-700/800) on hard problems. The reward starts at ~0.01 with "
         "frac_reward_zero_std ~0.93, lifts off after step 120 to ~0.24 by 420-480 (zero-std down to ~0.4), and "
         "then loses it all: entropy collapses 0.36 -> 0.05 onto one wrong strategy, reward back to ~0.03 and "
         "zero-std back to ~0.8 by step 800. Eval accuracy (N=300, every 50) 0.015 -> 0.21 at 450 -> 0.03 at 800 "
         "(sd 0.024; 7.7 sd below the peak). Start and now look alike (sparse, flat), but a much better model "
         "existed at 400-450. Rollback to 450.", onset=480),
]

CASES = [s.case() for s in SPECS]
STORY = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    spec = STORY[case.name]
    run = make_run(spec)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    settle_dirs(folder)


def settle_dirs(folder: Path) -> None:
    """A directory's mtime is when an entry was last added: the newest mtime below it, bottom-up."""
    dirs = sorted([p for p in folder.rglob("*") if p.is_dir()] + [folder], key=lambda p: -len(p.parts))
    for d in dirs:
        kids = list(d.iterdir())
        if kids:
            t = max(k.stat().st_mtime for k in kids)
            touch(d, t)


def check(cases: list[Case]) -> None:
    for c in cases:
        spec = STORY[c.name]
        run = make_run(spec)
        steps = spec.headline_steps()
        lv = spec.headline_level
        best = max(steps, key=lambda s: (lv(s), s))
        sd = spec.headline_sd(lv(best))
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')} "
              f"steps={spec.steps} age={spec.age_min:.0f}min")
        print(f"    headline {spec.story.headline}: start {lv(steps[0]):.3f}@{steps[0]} best {lv(best):.3f}@{best} "
              f"last {lv(steps[-1]):.3f}@{steps[-1]} sd {sd:.4f} ({(lv(best) - lv(steps[-1])) / sd:.1f} sd below "
              f"best; {(lv(steps[-1]) - lv(steps[0])) / sd:+.1f} sd vs start)")
        att = run.last
        if spec.story.headline == "train":
            pts = [(s, r["reward"]) for s, r in logged(att, spec.story.log_every)]
        else:
            pts = [(s, e[spec.story.headline]) for s, e in sorted(att.evals.items())]
        pick = pts[:: max(1, len(pts) // 14)]
        print("    drawn " + " ".join(f"{s}:{v:.3f}" for s, v in pick) + f" | last {pts[-1][0]}:{pts[-1][1]:.3f}")
        tr = logged(att, spec.story.log_every)
        if spec.story.mode != "dpo":
            zs = np.mean([r["zero_std"] for _, r in tr])
            z0 = np.mean([r["reward"] == 0 for _, r in tr])
            print(f"    train reward first {tr[0][1]['reward']:.3f} last {tr[-1][1]['reward']:.3f}; "
                  f"mean zero-std {zs:.2f}; share of logs with reward exactly 0: {z0:.2f}")


HEADER = """# Holdout set 34: runs that learn nothing, or learn and then lose it, written by make_holdout34.py
# independently of the assessor, its judges and the other holdout generators. Labels: what a careful practitioner
# should do under DESIGN.md's decision contract, read from each story's noise-free levels. rollback_window is
# inclusive: from the first logged headline step whose level is within one sampling sd of the best level to the
# newest such step not after onset_step, in the run's own logged steps.
# Run `.venv/bin/python evals/holdout34/make_holdout34.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout34.py", "holdout34.yaml", "h34-", "holdout34", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
