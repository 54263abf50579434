"""Holdout set 32: blind-labelled RL post-training runs in real on-disk formats, independent of the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout32/make_holdout32.py           # writes runs/ (gitignored) and holdout32.yaml
    .venv/bin/python evals/holdout32/make_holdout32.py --check   # also prints levels and rollback windows

Every case is a story told in noise-free levels (functions of the logged step) for the train reward, the held-out
evals and the side signals, drawn through this set's own noise model and written the way one framework (and one
version of it) writes its logs. The labels come from the stories, never from a tool.

Noise model (this set's own):
  * binary train rewards follow a one-parameter item-response model: every run has a fixed pool of prompts with
    logit difficulties b ~ N(0, 1.5); the noise-free level p fixes the policy's ability theta so that the pool's
    mean solve rate is p. A step draws P prompts from the pool and G Bernoulli(sigmoid(theta - b)) rollouts each;
    mean, std, max/min, zero-std share and group stds all come from the same draws. DAPO-style +-1 scores are
    2x - 1 of the same draws. Trainers that log every L steps log the mean of the L batches (TRL); OpenRLHF logs
    the current step only;
  * reward-model / judge scores: per-sample normal scores around the level, the batch mean logged;
  * preference pairs (DPO, IPO): the implicit reward margin of each pair is normal around a level with a spread
    that grows as the policy overfits; loss, accuracy, margins and chosen/rejected rewards come from those draws;
  * held-out evals: Binomial(N, p)/N for pass@1 on N problems; mean@k on N problems draws each problem's solve
    rate at that eval from Beta(6p, 6(1-p)) (problems drift between evals as the policy changes) and k rollouts
    per problem, so a 30-problem mean@32 is still coarse (sd ~0.03 at p = 0.25), far coarser than 960 samples;
  * side signals (KL, entropy, lengths, clip fractions, value losses, ...): level times AR(1) log-normal noise
    (phi = 0.6), or AR(1) additive noise for signed quantities, so neighbouring logs wander together;
  * grad norms: level * exp(0.3 N(0,1)), and on about one log in 25 times (1 + Pareto(1.5)) (heavy right tail).

Labels follow DESIGN.md ("What the three decisions mean"). The rollback window runs from the first logged headline
step whose noise-free level is within one sampling sd of the best level (the sd of one logged headline point at
the best level) to the newest such step not after onset_step; it is computed from the story, and `--check` prints
it with the levels and the drawn values.
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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import HEALTHY, Case, dump_json, rollback, stop, stop_or_rollback, tb_file, trainer_state

HERE = Path(__file__).resolve().parent
NOW = time.time()
Level = Callable[[float], float]
TRAIN = "@train"
CONC = 6.0  # mean@k evals: per-eval problem solve rates ~ Beta(CONC p, CONC (1 - p))


# ------------------------------------------------------------------------------------------------------ curve words

def lin(*pts: tuple[float, float]) -> Level:
    """Piecewise linear through the knots, flat outside them."""
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def ease(t0: float, y0: float, t1: float, y1: float, k: float = 2.5) -> Level:
    """A concave rise (or fall) from (t0, y0) to (t1, y1): fast first, flattening towards t1; k sets the bend."""
    def f(s: float) -> float:
        u = min(max((s - t0) / (t1 - t0), 0.0), 1.0)
        return y0 + (y1 - y0) * (1 - math.exp(-k * u)) / (1 - math.exp(-k))
    return f


def pieces(*parts: tuple[float, Level]) -> Level:
    """parts = (start, level), ...: each level from its start step on."""
    def f(s: float) -> float:
        cur = parts[0][1]
        for start, lv in parts:
            if s >= start:
                cur = lv
        return cur(s)
    return f


def const(v: float) -> Level:
    return lambda s: v


def decay(y0: float, y_inf: float, tau: float) -> Level:
    return lambda s: y_inf + (y0 - y_inf) * math.exp(-s / tau)


def shift(lv: Level, dt: float) -> Level:
    return lambda s: lv(s - dt)


def scaled(lv: Level, a: float, b: float = 0.0) -> Level:
    return lambda s: a * lv(s) + b


# -------------------------------------------------------------------------------------------------- the noise model

def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


class Pool:
    """A run's fixed prompt pool in a one-parameter item-response model."""

    def __init__(self, seed: int, spread: float = 1.5, m: int = 3000):
        self.b = np.random.default_rng(seed + 7919).normal(0.0, spread, m)
        self.grid = np.linspace(-12, 12, 2401)
        self.mean_at = np.array([sigmoid(t - self.b).mean() for t in self.grid])

    def theta(self, p: float) -> float:
        p = min(max(p, 1e-4), 1 - 1e-4)
        return float(np.interp(p, self.mean_at, self.grid))

    def solve_rates(self, p: float) -> np.ndarray:
        return sigmoid(self.theta(p) - self.b)

    def batch_sd(self, p: float, prompts: int, g: int, logs: int) -> float:
        q = self.solve_rates(p)
        return math.sqrt((q.var() + (q * (1 - q)).mean() / g) / (prompts * logs))


@dataclass
class Reward:
    """The train reward: `kind` binary (0/1 rollouts), pm1 (DAPO +-1 scores) or score (RM / judge scores)."""

    level: Level
    names: dict[str, str | list[str]]  # stat -> key(s): mean std max min zero_std group_std pct0 pct1 pct_mixed
    kind: str = "binary"
    P: int = 32
    G: int = 8
    sd: float = 1.0  # per-sample sd of score rewards
    lo: float = -math.inf  # clamp of score samples (judge scores in [0, 1])
    hi: float = math.inf

    def batch(self, rng: np.random.Generator, pool: Pool, p: float) -> dict[str, float]:
        if self.kind == "score":
            x = np.clip(rng.normal(p, self.sd, (self.P, self.G)), self.lo, self.hi)
            same = np.zeros(self.P, bool)
        else:
            q = pool.solve_rates(p)[rng.integers(0, len(pool.b), self.P)]
            x = (rng.random((self.P, self.G)) < q[:, None]).astype(float)
            same = x.std(axis=1) == 0
            if self.kind == "pm1":
                x = 2 * x - 1
        top = x.max(axis=1)
        return dict(mean=float(x.mean()), std=float(x.std()), max=float(x.max()), min=float(x.min()),
                    zero_std=float(same.mean()), group_std=float(x.std(axis=1).mean()),
                    pct0=float(100 * (same & (top <= 0)).mean()), pct1=float(100 * (same & (top > 0)).mean()),
                    pct_mixed=float(100 * (~same).mean()))

    def sd_at(self, pool: Pool, p: float, logs: int) -> float:
        if self.kind == "score":
            return self.sd / math.sqrt(self.P * self.G * logs)
        sd = pool.batch_sd(p, self.P, self.G, logs)
        return 2 * sd if self.kind == "pm1" else sd


@dataclass
class Pairs:
    """Preference pairs: the implicit reward margin x = beta * h of a pair is N(m(t), s(t)) (train batches)."""

    m: Level
    s: Level
    beta: float = 0.1
    loss: str = "sigmoid"  # sigmoid (DPO) | ipo
    B: int = 64
    chosen: Level = field(default=lambda t: -0.1)  # mean implicit reward of the chosen answers
    logp_chosen: Level = field(default=lambda t: -210.0)
    logp_rejected: Level = field(default=lambda t: -235.0)

    def per_pair_loss(self, x: np.ndarray) -> np.ndarray:
        if self.loss == "ipo":
            return (x / self.beta - 1 / (2 * self.beta)) ** 2
        return np.logaddexp(0.0, -x)

    def draw(self, rng: np.random.Generator, t: float, n: int, m: float, s: float, prefix: str = "") -> dict:
        x = rng.normal(m, s, n)
        c = self.chosen(t) + 0.5 * (x - m) + rng.normal(0, 0.05 * s + 0.01, n)
        return {f"{prefix}loss": float(self.per_pair_loss(x).mean()),
                f"{prefix}rewards/chosen": float(c.mean()), f"{prefix}rewards/rejected": float((c - x).mean()),
                f"{prefix}rewards/accuracies": float((x > 0).mean()), f"{prefix}rewards/margins": float(x.mean()),
                f"{prefix}logps/chosen": float(self.logp_chosen(t) + rng.normal(0, 1.5)),
                f"{prefix}logps/rejected": float(self.logp_rejected(t) + rng.normal(0, 1.5)),
                f"{prefix}logits/chosen": float(-1.9 + 0.02 * rng.normal()),
                f"{prefix}logits/rejected": float(-1.95 + 0.02 * rng.normal())}

    def loss_moments(self, m: float, s: float) -> tuple[float, float]:
        z, w = np.polynomial.hermite_e.hermegauss(60)
        w = w / w.sum()
        lv = self.per_pair_loss(m + s * z)
        mean = float((w * lv).sum())
        return mean, math.sqrt(max(float((w * lv * lv).sum()) - mean * mean, 0.0))


@dataclass
class Eval:
    """A held-out eval: pass@1 (k=1) or mean@k on n problems, or a preference eval (pairs) for DPO runs."""

    key: str
    level: Level = field(default=lambda s: 0.0)
    n: int = 500
    k: int = 1
    steps: list[int] = field(default_factory=list)
    pairs: tuple[Level, Level] | None = None  # (m_eval, s_eval) for a preference eval; then `key` is a prefix
    alias: tuple[str, ...] = ()  # the same number under more keys (TRL: eval_reward = the only reward function)
    extra: dict[str, Level] = field(default_factory=dict)  # more values on the eval row, 3 % log-normal noise

    def draw(self, rng: np.random.Generator, s: int, story: Story) -> dict:
        if self.pairs is not None:
            m, sd = self.pairs[0](s), self.pairs[1](s)
            return story.pairs.draw(rng, s, self.n, m, sd, prefix=self.key)
        p = min(max(self.level(s), 1e-4), 1 - 1e-4)
        if self.k == 1:
            v = rng.binomial(self.n, p) / self.n
        else:
            q = rng.beta(CONC * p, CONC * (1 - p), self.n)
            v = float(rng.binomial(self.k, q).mean() / self.k)
        out = dict.fromkeys((self.key, *self.alias), v)
        out.update({k: lv(s) * math.exp(0.03 * rng.normal()) for k, lv in self.extra.items()})
        return out

    def sd_at(self, p: float) -> float:
        return math.sqrt(p * (1 - p) / self.n * (1 / (CONC + 1) + CONC / ((CONC + 1) * self.k)))


@dataclass
class Sig:
    """A side signal. noise: m = AR(1) log-normal, a = AR(1) additive, g = heavy-tailed grad norm, x = exact,
    c = cumulative (a running sum of level-times-noise), i = integer-valued."""

    key: str
    level: Level
    noise: str = "m"
    sd: float = 0.04
    nan_from: int | None = None  # from this step on the value is NaN (a broken run)
    every: int = 1  # logged only on steps divisible by this
    digits: int | None = None
    start: int = 0  # not logged before this step (e.g. actor metrics during a critic warm-up)


@dataclass
class Story:
    reward: Reward | None
    evals: list[Eval]
    side: list[Sig]
    headline: str  # an eval key, TRAIN, or a train key listed in `custom_head`
    log_every: int = 1
    first_step: int | None = None  # first logged train step (default: log_every)
    pairs: Pairs | None = None
    derived: Callable[[dict], dict] | None = None  # more train keys computed from a drawn row
    custom_head: tuple[str, Level, float] | None = None  # (train key, level, sd of one logged point)
    lower_better: bool = False
    spread: float = 1.5  # prompt-difficulty spread of the pool

    # ----------------------------------------------------------------------------------------------- the draws
    def train_steps(self, reached: int) -> list[int]:
        first = self.first_step if self.first_step is not None else self.log_every
        return list(range(first, reached + 1, self.log_every))

    def draws(self, seed: int, reached: int) -> dict:
        rng = np.random.default_rng(seed)
        pool = Pool(seed, self.spread)
        ar: dict[str, float] = {}
        cum: dict[str, float] = {}
        train = []
        for s in self.train_steps(reached):
            row: dict[str, float] = {}
            if self.reward is not None:
                bs = [self.reward.batch(rng, pool, self.reward.level(s - j)) for j in range(self.log_every)]
                for stat, keys in self.reward.names.items():
                    v = float(np.mean([b[stat] for b in bs]))
                    for k in [keys] if isinstance(keys, str) else keys:
                        row[k] = v
            if self.pairs is not None:
                n = self.pairs.B * self.log_every
                row.update(self.pairs.draw(rng, s, n, self.pairs.m(s), self.pairs.s(s)))
            for sig in self.side:
                if s % sig.every or s < sig.start:
                    continue
                lv = sig.level(s)
                e = 0.6 * ar.get(sig.key, 0.0) + 0.8 * rng.normal()
                ar[sig.key] = e
                if sig.noise == "m":
                    v = lv * math.exp(sig.sd * e)
                elif sig.noise == "a":
                    v = lv + sig.sd * e
                elif sig.noise == "g":
                    v = lv * math.exp(0.3 * rng.normal())
                    if rng.random() < 1 / 25:
                        v *= 1 + rng.pareto(1.5)
                elif sig.noise == "c":
                    cum[sig.key] = cum.get(sig.key, 0.0) + lv * math.exp(sig.sd * rng.normal())
                    v = cum[sig.key]
                elif sig.noise == "i":
                    v = float(max(0, round(lv + sig.sd * rng.normal())))
                else:
                    v = lv
                if sig.nan_from is not None and s >= sig.nan_from:
                    v = float("nan")
                row[sig.key] = round(v, sig.digits) if sig.digits is not None and math.isfinite(v) else v
            if self.derived:
                row.update(self.derived(row))
            row = {k: v for k, v in row.items() if not k.startswith("_")}
            train.append((s, row))
        ev: dict[int, dict] = {}
        for e in self.evals:
            for s in e.steps:
                if s <= reached:
                    ev.setdefault(s, {}).update(e.draw(rng, s, self))
        return dict(train=train, eval=sorted(ev.items()), pool=pool)

    # ------------------------------------------------------------------------------------------- the headline
    def head(self, reached: int, pool: Pool) -> tuple[Level, list[int], Callable[[float], float]]:
        if self.custom_head:
            _, lv, sd = self.custom_head
            return lv, self.train_steps(reached), lambda p: sd
        if self.headline == TRAIN:
            r = self.reward
            return r.level, self.train_steps(reached), lambda p: r.sd_at(pool, p, self.log_every)
        e = next(e for e in self.evals if e.key == self.headline or (e.pairs and self.headline.startswith(e.key)))
        steps = [s for s in e.steps if s <= reached]
        if e.pairs is not None:
            def lv(s: float) -> float:
                return self.pairs.loss_moments(e.pairs[0](s), e.pairs[1](s))[0]

            def sd(p: float) -> float:  # sd of the eval loss at the best step
                best = min(steps, key=lv)
                return self.pairs.loss_moments(e.pairs[0](best), e.pairs[1](best))[1] / math.sqrt(e.n)
            return lv, steps, sd
        return e.level, steps, e.sd_at


def window(story: Story, seed: int, reached: int, onset: int) -> tuple[int, int]:
    lv, steps, sd = story.head(reached, Pool(seed, story.spread))
    if story.lower_better:
        best = min(lv(s) for s in steps)
        good = [s for s in steps if lv(s) <= best + sd(best)]
    else:
        best = max(lv(s) for s in steps)
        good = [s for s in steps if lv(s) >= best - sd(best)]
    return good[0], max(s for s in good if s <= onset)


# ------------------------------------------------------------------------------------------------ time and mtimes

def stamp(run: dict, path: Path, t: float) -> None:
    run["stamps"][path] = t


def at(run: dict, s: float) -> float:
    """Wall time at which step s was logged."""
    return run["t_end"] - (run["reached"] - s) * run["sps"]


def apply_mtimes(folder: Path, run: dict) -> None:
    stamps = run["stamps"]
    paths = sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True)
    for p in paths:
        if p.is_file():
            t = stamps.get(p, run["t_end"])
            os.utime(p, (t, t))
    for p in paths:
        if p.is_dir():
            kids = [c.stat().st_mtime for c in p.iterdir()]
            t = stamps.get(p, max(kids) if kids else run["t_end"])
            os.utime(p, (t, t))


def stamp_text(run: dict, t: float, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    return time.strftime(fmt, time.localtime(t))


def clean(v: float) -> float | None:
    return None if isinstance(v, float) and not math.isfinite(v) else v


def g6(x: float) -> float:
    return float(f"{x:.6g}") if math.isfinite(x) else x


# ------------------------------------------------------------------------------------- writers: HF Trainer family

def hf_rows(run: dict, steps_per_epoch: int, loss_dp: int = 4, eval_extra: dict | None = None) -> list[dict]:
    rows = []
    for s, v in run["train"]:
        row = dict(v)
        if "loss" in row and math.isfinite(row["loss"]):
            row["loss"] = round(row["loss"], loss_dp)
        row.update(epoch=round(s / steps_per_epoch, 4), step=s)
        rows.append(row)
    for s, v in run["eval"]:
        row = dict(v)
        row.update(eval_extra or {})
        row.update(eval_runtime=round(140 + 12 * math.sin(s), 3), eval_samples_per_second=round(3.4 + 0.1 * math.cos(s), 3),
                   eval_steps_per_second=0.107, epoch=round(s / steps_per_epoch, 4), step=s)
        rows.append(row)
    rows.sort(key=lambda r: (r["step"], "eval_runtime" in r))
    return rows


def w_hf_state(run: dict, folder: Path, save_steps: int | None, keep: int | None = None, top: bool = False,
               logging_steps: int = 10, eval_steps: int | None = None, steps_per_epoch: int = 0, epochs: int = 1,
               tb: bool = False, files: tuple[str, ...] = ("adapter_model.safetensors", "adapter_config.json"),
               eval_extra: dict | None = None, host: str = "gpu-node-07") -> None:
    """An HF Trainer output_dir: checkpoint-N/trainer_state.json at every save (save_total_limit keeps `keep`),
    the top-level trainer_state.json and train_results.json from save_state()/save_metrics() when `top` (finished),
    and TensorBoard events under runs/ when `tb`."""
    planned, reached = run["planned"], run["reached"]
    spe = steps_per_epoch or planned
    rows = hf_rows(run, spe, eval_extra=eval_extra)
    finished = run["finished"]
    saves = list(range(save_steps, reached + 1, save_steps)) if save_steps else []
    if finished and save_steps and reached not in saves:
        saves.append(reached)
    kept: list[int] = []
    for n in saves:
        hist = [r for r in rows if r["step"] <= n]
        st = trainer_state(hist, n, planned, logging_steps, save_steps, eval_steps, round(n / spe, 4), epochs,
                           training_stop=finished and n == reached)
        ck = folder / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        for name in files:
            (ck / name).write_bytes(b'{"r": 16, "lora_alpha": 32}\n' if name.endswith(".json") else b"\0" * 64)
        for name in ("optimizer.pt", "scheduler.pt", "rng_state.pth", "training_args.bin"):
            (ck / name).write_bytes(b"\0" * 32)
        t = at(run, n) + 40
        for p in [ck, *ck.iterdir()]:
            stamp(run, p, t)
        kept.append(n)
        if keep:
            while len(kept) > keep:
                old = kept.pop(0)
                for p in sorted((folder / f"checkpoint-{old}").rglob("*"), reverse=True):
                    p.unlink()
                (folder / f"checkpoint-{old}").rmdir()
    final = dict(train_runtime=round(run["sps"] * reached, 1), train_samples_per_second=0.412,
                 train_steps_per_second=round(1 / run["sps"], 4), total_flos=0.0,
                 train_loss=round(float(np.mean([r.get("loss", 0.0) for r in rows if "loss" in r
                                                 and math.isfinite(r["loss"])] or [0.0])), 6),
                 epoch=round(reached / spe, 4), step=reached)
    if top:
        st = trainer_state([*rows, final], reached, planned, logging_steps, save_steps or 500, eval_steps,
                           round(reached / spe, 4), epochs, training_stop=True)
        dump_json(folder / "trainer_state.json", st)
        res = {k: final[k] for k in ("epoch", "total_flos", "train_loss", "train_runtime",
                                     "train_samples_per_second", "train_steps_per_second")}
        dump_json(folder / "train_results.json", res)
        dump_json(folder / "all_results.json", res)
        for name in files:
            (folder / name).write_bytes(b'{"r": 16, "lora_alpha": 32}\n' if name.endswith(".json") else b"\0" * 64)
    if tb:
        t0 = at(run, 0)
        d = folder / "runs" / (time.strftime("%b%d_%H-%M-%S", time.localtime(t0)) + f"_{host}")
        ev = []
        for r in rows:
            vals = {}
            for k, x in r.items():
                if k == "step" or not isinstance(x, (int, float)) or x is None:
                    continue
                vals[("eval/" + k[5:]) if k.startswith("eval_") else ("train/" + k)] = x
            ev.append((at(run, r["step"]) + (30 if "eval_runtime" in r else 0), r["step"], vals))
        if finished:
            ev.append((at(run, reached) + 60, reached, {"train/" + k: v for k, v in final.items() if k != "step"}))
        p = tb_file(d / f"events.out.tfevents.{int(t0)}.{host}.{31337}.0", ev)
        stamp(run, p, ev[-1][0])


def w_trl_console(run: dict, folder: Path, name: str = "train.log", sec_per_it: float = 31.0) -> None:
    """TRL/transformers console: str(dict) per log with tqdm snapshots (the bar carries the step, the dicts don't)."""
    planned, reached = run["planned"], run["reached"]
    lines = [f"{stamp_text(run, at(run, 0) - 240)} - INFO - __main__ - Loading dataset openai/gsm8k (main)",
             f"[INFO|trainer.py:2423] {stamp_text(run, at(run, 0) - 60)},004 >> ***** Running training *****",
             "[INFO|trainer.py:2424] >>   Num examples = 7,473",
             "[INFO|trainer.py:2425] >>   Num Epochs = 2",
             "[INFO|trainer.py:2426] >>   Instantaneous batch size per device = 8",
             f"[INFO|trainer.py:2431] >>   Total optimization steps = {planned:,}",
             "[INFO|trainer.py:2432] >>   Number of trainable parameters = 40,370,176"]
    spe = planned / 2

    def bar(s: int) -> str:
        frac = s / planned
        fill = int(frac * 10)
        el, rem = s * sec_per_it, (planned - s) * sec_per_it
        hms = lambda x: f"{int(x // 3600)}:{int(x % 3600 // 60):02d}:{int(x % 60):02d}"  # noqa: E731
        return (f"{int(100 * frac):3d}%|{'█' * fill}{' ' * (10 - fill)}| {s}/{planned} "
                f"[{hms(el)}<{hms(rem)}, {sec_per_it:.2f}s/it]")

    evs = dict(run["eval"])
    for s, v in run["train"]:
        lines.append(bar(s))
        d = {k: (round(x, 4) if k == "loss" else x) for k, x in v.items()}
        d["epoch"] = round(s / spe, 2)
        lines.append(str(d))
        if s in evs:
            lines.append(bar(s))
            e = dict(evs[s])
            e.update(eval_runtime=round(201.4 + 3 * math.sin(s), 4), eval_samples_per_second=1.49,
                     eval_steps_per_second=0.189, epoch=round(s / spe, 2))
            lines.append(str(e))
    if run["finished"]:
        lines.append(bar(reached))
        lines.append(str({"train_runtime": reached * sec_per_it, "train_samples_per_second": 0.516,
                          "train_steps_per_second": round(1 / sec_per_it, 3), "train_loss": 0.0041,
                          "epoch": 2.0}))
    (folder / name).write_text("\n".join(lines) + "\n")


# ------------------------------------------------------------------------------------------------- writers: verl

def verl_rows(run: dict, val_at_0: bool = True) -> dict[int, dict]:
    rows: dict[int, dict] = {}
    for s, v in run["eval"]:
        if s == 0 and not val_at_0:
            continue
        rows.setdefault(s, {}).update(v)
    for s, v in run["train"]:
        r = rows.setdefault(s, {})
        r.update(v)
        r["training/global_step"] = s
        if any(k.startswith("val-") for k in r):
            r["timing_s/testing"] = 95.0 + 4 * math.sin(s)
    return rows


def hydra_config(run: dict, folder: Path, project: str, exp: str, total: int, test_freq: int, save_freq: int,
                 logger: list[str], adv: str = "grpo", extra: dict | None = None) -> None:
    import yaml
    t0 = at(run, 0) - 300
    d = folder / "outputs" / time.strftime("%Y-%m-%d", time.localtime(t0)) / time.strftime("%H-%M-%S", time.localtime(t0)) / ".hydra"
    d.mkdir(parents=True, exist_ok=True)
    cfg = {"data": {"train_batch_size": 256, "max_prompt_length": 1024, "max_response_length": 4096},
           "actor_rollout_ref": {"model": {"path": "Qwen/Qwen2.5-7B"},
                                 "actor": {"optim": {"lr": 1e-6}, "ppo_mini_batch_size": 64, "use_kl_loss": True,
                                           "kl_loss_coef": 0.001, "entropy_coeff": 0},
                                 "rollout": {"name": "vllm", "n": 8}},
           "algorithm": {"adv_estimator": adv, "use_kl_in_reward": False},
           "trainer": {"project_name": project, "experiment_name": exp, "logger": logger, "nnodes": 1,
                       "n_gpus_per_node": 8, "total_epochs": 30, "total_training_steps": total,
                       "test_freq": test_freq, "save_freq": save_freq, "val_before_train": True,
                       "critic_warmup": 0, "default_local_dir": f"checkpoints/{project}/{exp}"}}
    for path, v in (extra or {}).items():
        node = cfg
        *head, last = path.split(".")
        for h in head:
            node = node.setdefault(h, {})
        node[last] = v
    (d / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    (d / "overrides.yaml").write_text(f"- trainer.total_training_steps={total}\n- trainer.project_name={project}\n"
                                      f"- trainer.experiment_name={exp}\n")
    for p in [d, *d.iterdir()]:
        stamp(run, p, t0)


def fmt_verl(x: float, np2: bool) -> str:
    if isinstance(x, int):
        return str(x)
    if not math.isfinite(x):
        return "np.float64(nan)" if np2 else "nan"
    return f"np.float64({x!r})" if np2 else repr(x)


def w_verl_console(run: dict, folder: Path, project: str, exp: str, test_freq: int, save_freq: int,
                   np2: bool = True, name: str = "verl_train.log", ckpt_dirs: bool = False, adv: str = "grpo",
                   hydra_extra: dict | None = None, warn_from: int | None = None) -> None:
    """verl LocalLogger lines behind Ray prefixes, plus the hydra config of the launch (and saved checkpoints)."""
    total = run["planned"]
    hydra_config(run, folder, project, exp, total, test_freq, save_freq, ["console", "wandb"], adv, hydra_extra)
    t0 = at(run, 0)
    lines = [f"{stamp_text(run, t0 - 290)},417 INFO worker.py:1888 -- Started a local "
             "Ray instance. View the dashboard at 127.0.0.1:8265",
             "(TaskRunner pid=118204) TaskRunner hostname: gpu-h100-03, PID: 118204",
             "(TaskRunner pid=118204) Using dataset class: RLHFDataset",
             "(TaskRunner pid=118204) Size of train dataloader: 48, Size of val dataloader: 1",
             f"(TaskRunner pid=118204) Total training steps: {total}",
             f"(WorkerDict pid=119377) INFO {stamp_text(run, t0 - 250, '%m-%d %H:%M:%S')} [__init__.py:239] "
             "Automatically detected platform cuda."]
    rows = verl_rows(run)
    saves = []
    for s in sorted(rows):
        body = " - ".join(f"{k}:{fmt_verl(x, np2)}" for k, x in rows[s].items())
        if warn_from is not None and s >= warn_from:
            lines += [f"(WorkerDict pid={119377 + r}) WARN: rank {r} grad_norm is not finite: nan" for r in range(2)]
        lines.append(f"(TaskRunner pid=118204) step:{s} - {body}")
        if s > 0 and save_freq and s % save_freq == 0:
            saves.append(s)
            lines.append(f"(TaskRunner pid=118204) local_global_step_folder: checkpoints/{project}/{exp}/global_step_{s}")
        if s > 0 and s % 40 == 0:
            lines.append(f"(WorkerDict pid=119377) INFO {stamp_text(run, at(run, s) - 30, '%m-%d %H:%M:%S')} "
                         "[block_pool.py:321] Successfully reset prefix cache")
    if run["finished"]:
        last_val = {k: v for k, v in rows[max(rows)].items() if k.startswith("val-")}
        lines.append(f"(TaskRunner pid=118204) ('Final validation metrics: {last_val}')")
    p = folder / name
    p.write_text("\n".join(lines) + "\n")
    if ckpt_dirs:
        base = folder / "checkpoints" / project / exp
        for s in saves:
            d = base / f"global_step_{s}" / "actor"
            d.mkdir(parents=True)
            (d / "model_world_size_8_rank_0.pt").write_bytes(b"\0" * 64)
            (d / "huggingface").mkdir()
            (d / "huggingface" / "config.json").write_text('{"model_type": "qwen2"}\n')
            for q in [d.parent, d, *d.rglob("*")]:
                stamp(run, q, at(run, s) + 90)
        if saves:
            (base / "latest_checkpointed_iteration.txt").write_text(str(saves[-1]))
            stamp(run, base / "latest_checkpointed_iteration.txt", at(run, saves[-1]) + 95)


def w_verl_jsonl(run: dict, folder: Path, project: str, exp: str, test_freq: int, save_freq: int,
                 hydra_extra: dict | None = None) -> None:
    """verl FileLogger JSONL ({"step": N, "data": {...}}, NaN as null) under $VERL_FILE_LOGGER_ROOT."""
    hydra_config(run, folder, project, exp, run["planned"], test_freq, save_freq, ["console", "file"],
                 extra=hydra_extra)
    rows = verl_rows(run)
    path = folder / "verl_logs" / project / f"{exp}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"step": s, "data": {k: clean(x) for k, x in rows[s].items()}},
                                       separators=(",", ":")) + "\n" for s in sorted(rows)))


def w_tb_keys(run: dict, folder: Path, sub: str, train_prefix: str = "", eval_prefix: str = "",
              host: str = "gpu-h100-03", pid: int = 204417, hf: bool = False) -> None:
    """TensorBoard scalars with the framework's own tags (verl raw keys; OpenRLHF train/ eval/; NeMo-RL prefixed;
    HF train/ eval/ under runs/<MonDD_HH-MM-SS>_<host>, `{run}` in `sub`)."""
    ev = []
    for s, v in run["train"]:
        ev.append((at(run, s), s, {train_prefix + k: x for k, x in v.items()}))
    for s, v in run["eval"]:
        ev.append((at(run, s) + 25, s, {eval_prefix + (k[5:] if hf and k.startswith("eval_") else k): x
                                        for k, x in v.items()}))
    ev.sort(key=lambda e: (e[0], e[1]))
    t0 = ev[0][0] - 60
    sub = sub.replace("{run}", time.strftime("%b%d_%H-%M-%S", time.localtime(t0)) + f"_{host}")
    p = tb_file(folder / sub / f"events.out.tfevents.{int(t0)}.{host}.{pid}.0", ev)
    stamp(run, p, ev[-1][0])


# --------------------------------------------------------------------------------------------- writers: OpenRLHF

def w_openrlhf_console(run: dict, folder: Path, name: str = "train_reinforce_pp.log") -> None:
    """OpenRLHF console: `✨ Global step N: {dict}` lines and `Evaluation completed ... eval_metrics: {...}`."""
    lines = [f"[{stamp_text(run, at(run, 0) - 400)},112] [INFO] [real_accelerator.py:219:get_accelerator] "
             "Setting ds_accelerator to cuda (auto detect)",
             "(ActorModelRayActor pid=52211) [Rank 0] Loading pretrained model from Qwen/Qwen2.5-Math-7B",
             f"(LLMRayActor pid=52871) INFO {stamp_text(run, at(run, 0) - 200, '%m-%d %H:%M:%S')} [llm_engine.py:431] "
             "init engine (profile, create kv cache, warmup model) took 38.12 seconds"]
    evs = dict(run["eval"])
    for s, v in run["train"]:
        d = {k: g6(x) for k, x in v.items()}
        ts = stamp_text(run, at(run, s))
        lines.append(f"(PPOTrainer pid=51990) [{ts},{s * 37 % 1000:03d}] [INFO] [ppo_trainer.py:402:fit] "
                     f"✨ Global step {s}: {d}")
        if s in evs:
            em = {k: g6(x) for k, x in evs[s].items()}
            lines.append(f"(PPOTrainer pid=51990) [{stamp_text(run, at(run, s) + 70)},518] [INFO] "
                         f"[ppo_trainer.py:471:evaluate] Evaluation completed in 68.4s, global_step {s}, "
                         f"eval_metrics: {em}")
    (folder / name).write_text("\n".join(lines) + "\n")


# ------------------------------------------------------------------------------------------ writers: W&B export

def w_wandb_csv(run: dict, folder: Path, display: str, panels: list[str], every: int = 1) -> None:
    """W&B UI panel exports: one CSV per panel, `Step` then `<run> - <metric>`, `__MIN`, `__MAX` (all quoted)."""
    series: dict[str, dict[int, float]] = {k: {} for k in panels}
    for s, v in [*run["train"], *run["eval"]]:
        for k, x in v.items():
            if k in series and (s % every == 0 or k.startswith("val")):
                series[k][s] = x
    for i, k in enumerate(panels):
        buf = io.StringIO()
        wr = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
        col = f"{display} - {k}"
        wr.writerow(["Step", col, col + "__MIN", col + "__MAX"])
        for s in sorted(series[k]):
            x = series[k][s]
            wr.writerow([s, repr(x), repr(x), repr(x)])
        t = run["t_end"] + 30 * i
        name = time.strftime("wandb_export_%Y-%m-%dT%H_%M_%S", time.localtime(t)) + f".{(i * 137) % 1000:03d}+01_00.csv"
        p = folder / name
        p.write_text(buf.getvalue())
        stamp(run, p, t)


# ------------------------------------------------------------------------------ writers: hand-written training loops

def w_rasbt_csv(run: dict, folder: Path, script: str = "7_5_plus_kl") -> None:
    """reasoning-from-scratch style append-only CSV (7_5 header, eval_acc as a 6-decimal fraction on eval steps)."""
    cols = ["step", "total_steps", "loss", "kl_loss", "policy_ratio", "reward_avg", "tokens_per_sec",
            "avg_response_len", "adv_avg", "adv_std", "entropy_avg", "eval_acc"]
    evs = dict(run["eval"])
    lines = [",".join(cols)]
    txt = []
    for s, v in run["train"]:
        vals = dict(v, step=s, total_steps=run["planned"])
        if vals.get("adv_std", 1.0) == 0.0:
            vals["loss"], vals["policy_ratio"] = 0.0, ""
        e = evs.get(s)
        vals["eval_acc"] = f"{e['eval_acc']:.6f}" if e else ""
        out = []
        for c in cols:
            x = vals.get(c, "")
            out.append(f"{x:.4f}" if isinstance(x, float) and c not in ("eval_acc",) else str(x))
        lines.append(",".join(out))
        txt.append(f"[Step {s}/{run['planned']}] loss={vals['loss']:.4f} reward_avg={vals['reward_avg']:.3f} "
                   f"avg_resp_len={vals['avg_response_len']:.1f}")
    d = folder / "logs"
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{script}_metrics.csv").write_text("\n".join(lines) + "\n")
    (d / f"{script}_metrics.txt").write_text("\n".join(txt) + "\n")


def w_custom_jsonl(run: dict, folder: Path, config: dict, name: str = "metrics.jsonl", eval_name: str | None = None,
                   crash: str | None = None, ckpt_every: int = 0, ckpt_fmt: str = "checkpoints/step_{:06d}.pt") -> None:
    """A hand-written loop: one JSON object per step (and eval objects, in the same or a separate file)."""
    (folder / "run_config.json").write_text(json.dumps(config, indent=2) + "\n")
    stamp(run, folder / "run_config.json", at(run, 0) - 120)
    evs = dict(run["eval"])
    tr, el = [], []
    for s, v in run["train"]:
        tr.append(json.dumps({"step": s, "time": round(at(run, s), 1), **{k: clean(g6(x)) for k, x in v.items()}}))
        if s in evs:
            el.append(json.dumps({"step": s, "time": round(at(run, s) + 45, 1), **evs[s]}))
    if 0 in evs:
        el.insert(0, json.dumps({"step": 0, "time": round(at(run, 0), 1), **evs[0]}))
    if eval_name:
        (folder / name).write_text("\n".join(tr) + "\n")
        (folder / eval_name).write_text("\n".join(el) + "\n")
    else:
        merged = sorted([(json.loads(x)["step"], 0, x) for x in tr] + [(json.loads(x)["step"], 1, x) for x in el])
        (folder / name).write_text("\n".join(x for _, _, x in merged) + "\n")
    if ckpt_every:
        for s in range(ckpt_every, run["reached"] + 1, ckpt_every):
            p = folder / ckpt_fmt.format(s)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(b"\0" * 64)
            stamp(run, p, at(run, s) + 20)
    if crash:
        (folder / "stderr.log").write_text(crash)


# ---------------------------------------------------------------------------------------------------- the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable
    seed: int
    steps: tuple[int, int]  # (reached, planned)
    label: str  # ok | hold | stop | sor | rb
    tags: str
    why: str
    onset: int | None = None
    finished: bool = False
    age_min: float = 5.0
    sps: float = 60.0  # seconds per logged step unit

    def labels(self) -> dict:
        reached = self.steps[0]
        if self.label == "ok":
            return HEALTHY
        if self.label == "hold":
            return dict(accept=["continue", "stop"], preferred="continue")
        if self.label == "stop":
            return stop(self.onset)
        lo, hi = window(self.story, self.seed, reached, self.onset)
        return (rollback if self.label == "rb" else stop_or_rollback)(lo, hi, self.onset)

    def case(self) -> Case:
        return Case(self.name, self.story, self.write, self.seed, self.steps, self.labels(), self.tags, self.why)


def every(n: int, start: int, stop_at: int) -> list[int]:
    return list(range(start, stop_at + 1, n))


# vocabularies of the frameworks' own keys --------------------------------------------------------------------------

TRL_R = dict(mean=["reward", "rewards/accuracy_reward/mean"], std=["reward_std", "rewards/accuracy_reward/std"],
             zero_std="frac_reward_zero_std")
VERL_R = {"mean": ["critic/score/mean", "critic/rewards/mean"], "max": ["critic/score/max", "critic/rewards/max"],
          "min": ["critic/score/min", "critic/rewards/min"]}
ORL_R = dict(mean="reward", group_std="group_reward_std")
NEMO_R = {"mean": "train/reward", "pct0": "train/baseline_reward/pct_0", "pct1": "train/baseline_reward/pct_1",
          "pct_mixed": "train/baseline_reward/pct_mixed"}


def trl_side(entropy: Level, length: Level, clipped: Level, grad: Level, lr: Level, kl: Level | None = None,
             tok_per_step: float = 2.2e5, step_time: Level | None = None) -> list[Sig]:
    sig = [Sig("loss", const(0.0), "a", 0.004), Sig("grad_norm", grad, "g"), Sig("learning_rate", lr, "x"),
           Sig("num_tokens", const(tok_per_step), "c", 0.05),
           Sig("completions/mean_length", length, "m", 0.03),
           Sig("completions/min_length", scaled(length, 0.22), "m", 0.10),
           Sig("completions/max_length", scaled(length, 2.6), "m", 0.04),
           Sig("completions/clipped_ratio", clipped, "m", 0.15),
           Sig("completions/mean_terminated_length", scaled(length, 0.93), "m", 0.03),
           Sig("entropy", entropy, "m", 0.03),
           Sig("clip_ratio/low_mean", const(0.0), "x"), Sig("clip_ratio/high_mean", const(0.0), "x"),
           Sig("clip_ratio/region_mean", const(0.0), "x")]
    if kl is not None:
        sig.append(Sig("kl", kl, "m", 0.06))
    if step_time is not None:
        sig.append(Sig("step_time", step_time, "m", 0.04))
    return sig


def verl_side(entropy: Level, length: Level, clip: Level, grad: Level, lr: Level, kl: Level | None = None,
              kl_coef: float = 0.001, gen_share: float = 0.62, cap: int = 4096, step_s: Level | None = None,
              nan_from: int | None = None, entropy_key: str = "actor/entropy") -> list[Sig]:
    step_s = step_s or (lambda s: 60 + length(s) / 18)
    sig = [Sig("actor/pg_loss", const(0.0), "a", 0.02, nan_from), Sig("actor/pg_clipfrac", const(0.0016), "m", 0.2),
           Sig("actor/ppo_kl", const(0.0), "a", 2e-4), Sig("actor/pg_clipfrac_lower", const(0.0), "x"),
           Sig(entropy_key, entropy, "m", 0.03), Sig("actor/grad_norm", grad, "g", nan_from=nan_from),
           Sig("actor/lr", lr, "x"), Sig("critic/advantages/mean", const(0.0), "a", 0.002),
           Sig("critic/advantages/max", const(2.47), "m", 0.05), Sig("critic/advantages/min", const(-2.47), "m", 0.05),
           Sig("response_length/mean", length, "m", 0.03), Sig("response_length/max", const(float(cap)), "x"),
           Sig("response_length/min", scaled(length, 0.1), "m", 0.2), Sig("response_length/clip_ratio", clip, "m", 0.15),
           Sig("prompt_length/mean", const(212.0), "m", 0.01), Sig("timing_s/step", step_s, "m", 0.03),
           Sig("timing_s/gen", scaled(step_s, gen_share), "m", 0.04),
           Sig("timing_s/update_actor", scaled(step_s, 0.22), "m", 0.03),
           Sig("perf/throughput", lambda s: 256 * 8 * (212 + length(s)) / step_s(s) / 8, "m", 0.03)]
    if kl is not None:
        sig += [Sig("actor/kl_loss", kl, "m", 0.05), Sig("actor/kl_coef", const(kl_coef), "x")]
    return sig


def orl_side(length: Level, trunc: Level, grad: Level, lr: Level, kl: Level, clip: Level | None = None,
             vllm_kl: Level | None = None, ppo_kl: Level | None = None, total_s: Level | None = None) -> list[Sig]:
    clip, vllm_kl = clip or const(0.012), vllm_kl or const(8e-4)
    ppo_kl, total_s = ppo_kl or const(2e-4), total_s or const(210.0)
    return [Sig("policy_loss", const(0.0), "a", 0.01), Sig("kl", kl, "m", 0.05),
            Sig("response_length", length, "m", 0.03), Sig("total_length", lambda s: length(s) + 180, "m", 0.025),
            Sig("truncated", trunc, "m", 0.15), Sig("ppo_clip_ratio", clip, "m", 0.12),
            Sig("ppo_kl", ppo_kl, "m", 0.2), Sig("vllm_kl", vllm_kl, "m", 0.15),
            Sig("actor_lr", lr, "x"), Sig("actor_grad_norm", grad, "g"),
            Sig("timing/generation", scaled(total_s, 0.64), "m", 0.04),
            Sig("timing/make_experience", scaled(total_s, 0.11), "m", 0.04),
            Sig("timing/ppo_train", scaled(total_s, 0.22), "m", 0.04),
            Sig("timing/broadcast", scaled(total_s, 0.03), "m", 0.05),
            Sig("timing/step_total", total_s, "m", 0.03)]


# ---- the shared shape of the timing quartet: a rise to 45 % of the plan, a broad flat top to 65 %, a slow slide
def shape_a_eval(plan: int) -> Level:
    return pieces((0, ease(0, 0.38, 0.45 * plan, 0.56, 2.0)), (0.45 * plan, const(0.56)),
                  (0.65 * plan, lin((0.65 * plan, 0.56), (plan, 0.49))))


def shape_a_train(plan: int) -> Level:
    return pieces((0, ease(0, 0.28, 0.45 * plan, 0.58, 2.0)), (0.45 * plan, lin((0.45 * plan, 0.58), (0.65 * plan, 0.62),
                                                                                 (plan, 0.67))))


def shape_a_entropy(plan: int) -> Level:
    return decay(0.70, 0.22, 0.45 * plan)


def shape_a_len(plan: int) -> Level:
    return lin((0, 640), (0.45 * plan, 820), (0.65 * plan, 900), (plan, 1240))


def shape_a_kl(plan: int) -> Level:
    return lin((0, 0.0), (0.45 * plan, 0.020), (0.65 * plan, 0.035), (plan, 0.085))


def crash_text(step: int) -> str:
    return (f"step {step}: generating rollouts...\n"
            "Traceback (most recent call last):\n"
            '  File "/home/mk/rl/train_grpo.py", line 412, in <module>\n    main()\n'
            '  File "/home/mk/rl/train_grpo.py", line 361, in main\n    logps = policy_logprobs(model, batch)\n'
            '  File "/home/mk/rl/train_grpo.py", line 188, in policy_logprobs\n    logits = model(ids).logits.float()\n'
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 9.27 GiB. GPU 0 has a total capacity of "
            "79.10 GiB of which 3.41 GiB is free. Including non-PyTorch memory, this process has 75.67 GiB memory in "
            "use.\n")


def ppo_derived(beta: float) -> Callable[[dict], dict]:
    def f(row: dict) -> dict:
        nsr = -beta * row["objective/kl"]
        return {"objective/non_score_reward": nsr, "objective/rlhf_reward": row["objective/scores"] + nsr}
    return f


P1000, P2000, P600, P1500 = 1000, 2000, 600, 1500

SPECS: list[Spec] = [
    # ================================================================ the timing quartet (one shape, four moments)
    Spec("ok-shape-a-at-20pct-rising-trl-state-ckpts",
         Story(Reward(shape_a_train(P1000), TRL_R, P=16, G=8),
               [Eval("eval_rewards/accuracy_reward/mean", shape_a_eval(P1000), 250, 4, every(50, 50, P1000))],
               trl_side(shape_a_entropy(P1000), shape_a_len(P1000), const(0.01), const(0.22), const(1e-6),
                        kl=shape_a_kl(P1000)),
               "eval_rewards/accuracy_reward/mean", log_every=10),
         holdout_kit.writer(w_hf_state)(100, None, False, 10, 50, 0, 1, False, eval_extra=None), 3201, (200, 1000),
         "ok", "healthy trl-state checkpoints timing-20pct rising",
         "Timing quartet, shape A (a rise to 45% of the plan, a broad flat top to 65%, then a slow slide), judged at "
         "20%: TRL GRPO (beta 0.04, kl logged) at step 200 of max_steps 1000, checkpoint-100 and -200 on disk, "
         "written 4 minutes ago. Eval accuracy (250 prompts x 4) climbs 0.42 -> 0.50 over evals 50..200 (sd ~0.019) "
         "and the train reward 0.30 -> 0.48; entropy eases, KL small. Nothing has peaked yet: continue.",
         age_min=4, sps=45),
    Spec("hold-shape-a-at-55pct-flat-top-since-900-verl-jsonl",
         Story(Reward(shape_a_train(P2000), VERL_R, P=64, G=8),
               [Eval("val-core/HuggingFaceH4/MATH-500/reward/mean@1", shape_a_eval(P2000), 500, 1,
                     every(50, 0, P2000))],
               verl_side(shape_a_entropy(P2000), shape_a_len(P2000), const(0.008), const(0.25), const(1e-6),
                         kl=shape_a_kl(P2000)),
               "val-core/HuggingFaceH4/MATH-500/reward/mean@1"),
         holdout_kit.writer(w_verl_jsonl)("math-grpo", "qwen25-7b-math500-shapeA", 50, 100), 3205, (1100, 2000),
         "hold", "hold verl jsonl timing-55pct plateau budget-left",
         "Timing quartet, shape A, judged at 55%: verl GRPO file logger at step 1100 of total_training_steps 2000 "
         "(hydra config), live. MATH-500 val rose 0.38 -> 0.56 by step 900 and has held 0.56 for four evals since "
         "(sd 0.022); train score still creeps 0.58 -> 0.60, entropy keeps easing, KL 0.020 -> 0.027, no warning "
         "sign. A flat top with 45% of the budget left is a healthy hold: continue is preferred, stopping here is "
         "acceptable (the current weights are as good as any).",
         age_min=6, sps=75),
    Spec("rb-shape-a-at-90pct-slow-slide-since-390-verl-console",
         Story(Reward(shape_a_train(P600), VERL_R, P=64, G=8),
               [Eval("val-core/lighteval/MATH/reward/mean@1", shape_a_eval(P600), 1000, 1, every(20, 0, P600))],
               verl_side(shape_a_entropy(P600), shape_a_len(P600), const(0.012), const(0.3), const(1e-6),
                         kl=shape_a_kl(P600)),
               "val-core/lighteval/MATH/reward/mean@1"),
         holdout_kit.writer(w_verl_console)("math-grpo", "qwen25-3b-shapeA-600", 20, 100, False), 3206, (540, 600),
         "rb", "rollback verl console timing-90pct broad-peak slow-decline",
         "Timing quartet, shape A, judged at 90%: verl GRPO console (plain floats), step 540 of 600 (Total training "
         "steps: 600). Val MATH (1000 problems, sd 0.016) rose to 0.56 by 270, stayed flat to 390 and has slid "
         "slowly since, 0.51 at 540 (3 sd), while the train score keeps rising 0.62 -> 0.66, lengths drift up and "
         "KL doubles. A better model lies behind: roll back to the newest step of the flat top, ~380 (global_step_300 "
         "is the newest saved checkpoint at or before it).",
         onset=390, age_min=3, sps=110),
    Spec("rb-shape-a-finished-keep-975-not-final-trl-state",
         Story(Reward(shape_a_train(P1500), TRL_R, P=16, G=8),
               [Eval("eval_rewards/accuracy_reward/mean", shape_a_eval(P1500), 250, 4, every(75, 75, P1500))],
               trl_side(shape_a_entropy(P1500), shape_a_len(P1500), const(0.01), const(0.22),
                        lambda s: 1e-6 * min(1.0, s / 50), kl=shape_a_kl(P1500)),
               "eval_rewards/accuracy_reward/mean", log_every=10),
         holdout_kit.writer(w_hf_state)(250, None, True, 10, 75, 0, 1, False), 3204, (1500, 1500),
         "rb", "rollback trl-state finished timing-100pct keep-earlier-weights",
         "Timing quartet, shape A, finished: TRL GRPO ran all 1500 steps (top-level trainer_state.json, "
         "train_results.json, checkpoints every 250 incl. checkpoint-1500). Eval accuracy (250 x 4, sd ~0.019) rose "
         "to 0.56 by ~675, held to 975, then slid to 0.49 at 1500 (3.7 sd) while train reward kept rising 0.62 -> 0.67. The final "
         "weights are not the ones to keep: the best point is the end of the flat top, 975 (newest saved at or "
         "before it: checkpoint-750).",
         onset=975, finished=True, age_min=600, sps=40),

    # ==================================================================================================== healthy
    Spec("ok-dapo-kl-monitor-coef-0-kl-0.3-aime30-mean32-verl-console-np2",
         Story(Reward(ease(0, 0.22, 800, 0.62, 1.6), {"mean": ["critic/score/mean", "critic/rewards/mean"],
                                                      "max": "critic/score/max", "min": "critic/score/min"},
                      kind="pm1", P=32, G=16),
               [Eval("val-core/aime24/acc/mean@32", ease(0, 0.10, 800, 0.33, 1.5), 30, 32, every(20, 0, 800))],
               [*verl_side(lin((0, 0.55), (360, 0.62)), lin((0, 1400), (360, 3300)), lin((0, 0.01), (360, 0.06)),
                           const(0.18), lambda s: 1e-6 * min(1.0, s / 10), kl=lin((0, 0.0005), (120, 0.05),
                                                                                  (360, 0.31)), kl_coef=0.0,
                           cap=20480, step_s=lambda s: 280 + s * 0.9, gen_share=0.71),
                Sig("train/num_gen_batches", lin((0, 1.3), (360, 2.1)), "i", 0.6)],
               "val-core/aime24/acc/mean@32"),
         holdout_kit.writer(w_verl_console)("DAPO", "DAPO-Qwen2.5-32B-kl-monitor", 20, 50, True,
                                            hydra_extra={"actor_rollout_ref.actor.kl_loss_coef": 0.0,
                                                         "actor_rollout_ref.rollout.n": 16,
                                                         "actor_rollout_ref.actor.clip_ratio_high": 0.28}),
         3205, (360, 800), "ok", "healthy verl console np2 dapo kl-rises-fast kl-coef-0 aime-small-eval mean@k",
         "verl DAPO recipe (clip-higher 0.28, dynamic sampling, +-1 scores) that logs the KL to the reference only "
         "as a monitor: use_kl_loss with kl_loss_coef 0.0, so actor/kl_loss climbs fast 0.0005 -> 0.31 by step 360 "
         "of 800 without any penalty acting on it. That drift is expected here. The score mean rises -0.56 -> -0.05 "
         "(solve rate 0.22 -> 0.48), lengths grow 1400 -> 3300 with clip ratio 1% -> 7% of a 20k cap, entropy drifts "
         "up 0.55 -> 0.62 (clip-higher), AIME24 mean@32 on 30 problems rises 0.10 -> 0.25 (one eval sd ~0.03, so "
         "single points wobble by several points). Healthy and still improving: continue.",
         age_min=3, sps=330),
    Spec("ok-entropy-0.62-to-0.20-eval-still-rising-hf-tb",
         Story(Reward(ease(0, 0.35, 1500, 0.66, 2.0), TRL_R, P=16, G=8),
               [Eval("eval_rewards/accuracy_reward/mean", ease(0, 0.40, 1500, 0.565, 1.8), 256, 4,
                     every(100, 100, 1500), alias=("eval_reward",),
                     extra={"eval_completions/mean_length": lin((0, 530), (1500, 440)),
                            "eval_entropy": decay(0.60, 0.10, 900)})],
               [*trl_side(decay(0.62, 0.10, 900), lin((0, 520), (1500, 430)), const(0.004), const(0.16),
                          lambda s: 1e-6 * min(1.0, s / 30), step_time=const(38.0)),
                Sig("frac_reward_zero_std", lin((0, 0.30), (1500, 0.5)), "m", 0.08)],
               "eval_rewards/accuracy_reward/mean", log_every=10),
         holdout_kit.writer(w_tb_keys)("runs/{run}", "train/", "eval/", "gpu-a100-12", 88412, True), 3206, (1500, 3000),
         "ok", "healthy tensorboard hf trl entropy-falls-steadily eval-rising",
         "TRL GRPO logged to TensorBoard only (train/ and eval/ tags, beta 0 so no kl), live at step 1500. "
         "Entropy falls steadily 0.62 -> 0.20 and frac_reward_zero_std rises to 0.5, which a careless reader calls "
         "entropy collapse. But it is a smooth exponential decay, not a cliff, and the evals keep rising: eval "
         "accuracy (256 x 4, sd ~0.019) 0.44 at 200 -> 0.54 at 1000 -> 0.565 at 1500, train reward 0.36 -> 0.66, "
         "lengths stable, grad norm quiet. Still improving: continue.",
         age_min=5, sps=38),
    Spec("ok-distill-lengths-2900-to-5600-math500-mean4-rising-verl-jsonl",
         Story(Reward(ease(0, 0.38, 1200, 0.68, 1.5), VERL_R, P=64, G=8),
               [Eval("val-core/HuggingFaceH4/MATH-500/acc/mean@4", ease(0, 0.72, 1200, 0.88, 1.0), 500, 4,
                     every(25, 0, 1200)),
                Eval("val-aux/aime24/acc/mean@16", ease(0, 0.26, 1200, 0.36, 1.4), 30, 16, every(25, 0, 1200))],
               verl_side(lin((0, 0.42), (700, 0.36)), lin((0, 2900), (700, 5600)), lin((0, 0.02), (700, 0.07)),
                         const(0.12), const(1e-6), kl=lin((0, 0.0), (700, 0.012)), cap=16384,
                         step_s=lambda s: 150 + (2900 + 2700 * s / 700) / 25, gen_share=0.78),
               "val-core/HuggingFaceH4/MATH-500/acc/mean@4"),
         holdout_kit.writer(w_verl_jsonl)("deepscaler-grpo", "r1-distill-qwen-1.5b-16k", 25, 100,
                                          {"data.max_response_length": 16384}),
         3213, (700, 1200), "ok", "healthy verl jsonl length-growth reasoning mean@k two-evals",
         "verl GRPO on a distilled reasoning model, file logger, live at 700 of 1200. Responses grow 2900 -> 5600 "
         "tokens (clip ratio 2% -> 7% of a 16k cap, step time up with them). Here the growth pays: MATH-500 mean@4 "
         "(sd ~0.010) rises 0.72 -> 0.83 and is still climbing (+0.02 over the last 175 steps), the 30-problem "
         "AIME24 mean@16 wobbles between 0.25 and 0.40 around a level rising 0.26 -> 0.32, train score 0.38 -> 0.60. Length growth with rising held-out accuracy is healthy: continue.",
         age_min=7, sps=260),
    Spec("ok-eval-every-200-last-point-dips-1.7sd-trl-state",
         Story(Reward(ease(0, 0.40, 3000, 0.71, 1.6), TRL_R, P=16, G=8),
               [Eval("eval_rewards/accuracy_reward/mean", ease(0, 0.46, 3000, 0.66, 1.6), 200, 4,
                     every(200, 200, 3000))],
               trl_side(decay(0.58, 0.25, 1500), lin((0, 610), (1600, 540)), const(0.012), const(0.2),
                        lambda s: 1e-6 * min(1.0, s / 100), kl=lin((0, 0.0), (1600, 0.045))),
               "eval_rewards/accuracy_reward/mean", log_every=10),
         holdout_kit.writer(w_hf_state)(200, 3, False, 10, 200, 0, 1, False), 3262, (1600, 3000),
         "ok", "healthy trl-state coarse-eval eval-every-200 one-point-dip noise",
         "TRL GRPO, checkpoints every 200 (save_total_limit 3), evals only every 200 steps on 200 prompts x 4 "
         "(sd ~0.021). At 1600 of 3000 the last eval point dips ~1.7 sd below the one before, but that is one point "
         "of a coarse eval: the noise-free level keeps rising (0.55 at 800 -> 0.60 at 1600), the train reward rises "
         "0.40 -> 0.62 without a break, entropy and lengths are calm. One dipping point is noise: continue.",
         age_min=9, sps=52),
    Spec("ok-looks-flat-gsm8k-0.78-to-0.815-over-900-steps-wandb-csv",
         Story(Reward(pieces((0, ease(0, 0.55, 500, 0.80, 2.5)), (500, lin((500, 0.80), (1400, 0.835)))), VERL_R,
                      P=128, G=5),
               [Eval("val-core/openai/gsm8k/reward/mean@1",
                     pieces((0, ease(0, 0.62, 500, 0.78, 2.5)), (500, lin((500, 0.78), (1400, 0.815)))), 1319, 1,
                     every(50, 0, 1400))],
               verl_side(decay(0.45, 0.28, 600), const(230.0), const(0.0), const(0.1), const(5e-7),
                         kl=lin((0, 0.0), (1400, 0.02)), cap=1024),
               "val-core/openai/gsm8k/reward/mean@1"),
         holdout_kit.writer(w_wandb_csv)("qwen25-3b-gsm8k-grpo-lr5e-7",
                                         ["critic/score/mean", "val-core/openai/gsm8k/reward/mean@1",
                                          "actor/kl_loss", "actor/entropy", "response_length/mean"]),
         3210, (1400, 3000), "ok", "healthy wandb csv-export slow-climb looks-flat",
         "Five W&B panel exports (one CSV per metric, `<run> - <metric>` with __MIN/__MAX) of a verl GRPO GSM8K run "
         "at step 1400, exported minutes ago. After a fast rise to 0.78 by step 500 the val curve looks flat, but it "
         "is a slow climb: 0.78 -> 0.815 over 900 steps (19 evals, N=1319, sd 0.011, 3 sd of total gain with a "
         "steady slope), the train score climbs alongside, KL small, entropy settles. Still improving: continue.",
         age_min=8, sps=55),
    Spec("ok-grpo-dip-at-250-recovered-above-old-best-openrlhf-console",
         Story(Reward(lin((0, 0.30), (220, 0.50), (265, 0.42), (340, 0.50), (520, 0.57)), ORL_R, P=64, G=8),
               [Eval("eval_math500_pass1", lin((0, 0.44), (220, 0.55), (265, 0.50), (340, 0.555), (520, 0.60)), 500, 1,
                     every(20, 20, 520))],
               [*orl_side(lin((0, 650), (520, 720)), const(0.02), lin((0, 0.2), (230, 0.2), (255, 0.9), (290, 0.22),
                                                                    (520, 0.2)),
                        const(5e-7), lin((0, 0), (520, 0.02)),
                        clip=lin((0, 0.01), (230, 0.012), (255, 0.08), (300, 0.014), (520, 0.013))),
                Sig("return", const(0.0), "a", 0.01)],
               "eval_math500_pass1"),
         holdout_kit.writer(w_openrlhf_console)(), 3210, (520, 1000),
         "ok", "healthy openrlhf console grpo dip-recovers-by-itself",
         "OpenRLHF GRPO (group_norm), console log, live at step 520. Around 230-270 grad norm spikes to ~1 and "
         "ppo_clip_ratio to 8%, the reward falls 0.50 -> 0.42 and eval pass@1 0.55 -> 0.50 (N=500, sd 0.022). It "
         "recovered by itself: by 340 both are back at their old level and they kept rising, eval 0.60 and "
         "reward 0.57 at 520, above the pre-dip best, with clip ratio and grad norm back to normal. The best model "
         "is the current one and still improving: continue.",
         age_min=4, sps=200),
    Spec("ok-oom-crash-7h-ago-at-830-of-2000-rising-custom-jsonl",
         Story(Reward(lin((0, 0.12), (830, 0.41)), dict(mean="reward_mean", std="reward_std",
                                                          zero_std="frac_groups_all_same"), P=16, G=8),
               [Eval("heldout_acc", lin((0, 0.15), (830, 0.38)), 300, 1, every(50, 0, 830))],
               [Sig("kl_ref", lin((0, 0.0), (830, 0.03)), "m", 0.06), Sig("entropy", decay(0.8, 0.4, 700), "m", 0.03),
                Sig("len_mean", lin((0, 310), (830, 470)), "m", 0.03), Sig("grad_norm", const(0.35), "g"),
                Sig("lr", const(2e-6), "x"), Sig("sec", lin((0, 38), (830, 55)), "m", 0.05)],
               "heldout_acc"),
         holdout_kit.writer(w_custom_jsonl)({"model": "meta-llama/Llama-3.1-8B-Instruct", "algo": "grpo",
                                             "max_steps": 2000, "group_size": 8, "prompts_per_step": 16,
                                             "lr": 2e-6, "beta": 0.02, "eval_every": 50, "save_every": 100},
                                            "metrics.jsonl", "eval.jsonl", crash_text(831), 100,
                                            "ckpt/step_{:06d}.pt"),
         3211, (830, 2000), "ok", "healthy custom jsonl crashed stalled-7h oom still-rising resume",
         "A hand-written GRPO loop (metrics.jsonl, eval.jsonl, run_config.json with max_steps 2000, ckpt/ every "
         "100) died with a CUDA OOM at step 831; nothing was written for 7.5 hours. Up to the crash it was learning "
         "steadily: held-out accuracy 0.15 -> 0.38 (N=300, sd 0.028) and train reward 0.12 -> 0.41, both still "
         "rising, KL and entropy calm. The weights at the end are the best so far and more steps would pay: "
         "continue (resume from ckpt/step_000800), not stop.",
         age_min=450, sps=50),
    Spec("ok-ppo-gae-critic-warmup-explained-var-rises-verl-tb",
         Story(Reward(pieces((0, const(0.28)), (20, ease(20, 0.28, 900, 0.70, 1.8))),
                      {"mean": "critic/score/mean", "max": "critic/score/max", "min": "critic/score/min"}, P=64, G=1),
               [Eval("val-core/openai/gsm8k/reward/mean@1", pieces((0, const(0.30)), (20, ease(20, 0.30, 900, 0.70, 1.8))),
                     1319, 1, every(10, 0, 420))],
               [Sig("critic/vf_loss", lin((0, 8.0), (20, 1.1), (150, 0.5), (160, 1.6), (175, 0.48), (420, 0.26)), "m", 0.08),
                Sig("critic/vf_explained_var", lin((0, -0.6), (20, 0.15), (150, 0.55), (160, 0.3), (175, 0.56),
                                                   (420, 0.70)), "a", 0.03),
                Sig("critic/vf_clipfrac", lin((0, 0.3), (20, 0.05), (420, 0.02)), "m", 0.1),
                Sig("critic/grad_norm", lin((0, 60), (20, 9), (420, 3)), "g"),
                Sig("critic/values/mean", lin((0, 0.0), (20, 0.25), (420, 0.55)), "a", 0.02),
                Sig("critic/returns/mean", pieces((0, const(0.27)), (20, ease(20, 0.27, 900, 0.69, 1.8))), "a", 0.01),
                Sig("critic/rewards/mean", pieces((0, const(0.28)), (20, ease(20, 0.28, 900, 0.69, 1.8))), "a", 0.01),
                Sig("critic/advantages/mean", const(0.0), "a", 0.003),
                Sig("actor/reward_kl_penalty", lin((0, 0), (420, 0.018)), "m", 0.06, start=20),
                Sig("actor/reward_kl_penalty_coeff", const(0.001), "x", start=20),
                Sig("actor/entropy", lin((0, 0.52), (420, 0.41)), "m", 0.03, start=20),
                Sig("actor/pg_clipfrac", const(0.004), "m", 0.2, start=20), Sig("actor/ppo_kl", const(0.0), "a", 1e-4, start=20),
                Sig("actor/grad_norm", const(0.4), "g", start=20), Sig("actor/lr", const(1e-6), "x", start=20),
                Sig("response_length/mean", lin((0, 240), (420, 205)), "m", 0.03),
                Sig("timing_s/step", const(61.0), "m", 0.03)],
               "val-core/openai/gsm8k/reward/mean@1", first_step=1),
         holdout_kit.writer(w_tb_keys)("tensorboard_log/gsm8k-ppo/qwen25-1.5b-gae-critic-warmup20"), 3212, (420, 900),
         "ok", "healthy verl tensorboard ppo critic gae explained-variance warmup",
         "verl PPO with a critic (GAE, critic_warmup 20, KL in reward), TensorBoard with verl's raw tags, live at 420. "
         "For the first 20 steps only the critic trains (no actor/ tags, score flat 0.28) and explained variance is "
         "negative; then it rises to ~0.7 while vf_loss falls 8 -> 0.26 (one transient vf_loss bump at 160 that "
         "heals in 15 steps). The score climbs 0.28 -> 0.56 and GSM8K val (N=1319) 0.30 -> 0.57, still rising. A "
         "healthy PPO run: continue.",
         age_min=2, sps=61),
    Spec("ok-ipo-loss-starts-25-eval-loss-still-falling-epoch-1.3-trl-state",
         Story(None,
               [Eval("eval_", steps=every(100, 100, 800), n=1000,
                     pairs=(ease(0, 0.0, 1800, 0.24, 2.5), lin((0, 0.1), (300, 0.2), (1800, 0.26))))],
               [Sig("grad_norm", lin((0, 18.0), (800, 11.0)), "g"),
                Sig("learning_rate", lambda s: 5e-7 * min(1.0, s / 90) * (1 - max(0, s - 90) / 1710), "x")],
               "eval_loss", log_every=10, lower_better=True,
               pairs=Pairs(pieces((0, ease(0, 0.0, 600, 0.22, 1.2)), (600, lin((600, 0.26), (800, 0.31)))),
                           lin((0, 0.1), (600, 0.22), (800, 0.23)), beta=0.1, loss="ipo", B=32,
                           chosen=lin((0, 0.0), (800, -0.35)), logp_chosen=lin((0, -292), (800, -318)),
                           logp_rejected=lin((0, -301), (800, -352)))),
         holdout_kit.writer(w_hf_state)(200, None, False, 10, 100, 600, 3, False), 3214, (800, 1800),
         "ok", "healthy trl-state dpo ipo loss-scale epoch-boundary",
         "TRL DPOTrainer with loss_type ipo (beta 0.1), 3 epochs of 600 steps, checkpoint-800 the newest "
         "(epoch 1.33). The IPO loss is (h - 1/(2 beta))^2, so it starts near 25, not at ln 2: train loss "
         "25 -> ~9, eval loss 25.7 -> ~15.4 (sd ~0.5 per eval). Train loss drops a notch at the epoch boundary "
         "(600) as usual, logps of both answers drift down with rejected falling faster. Eval loss still falls "
         "and eval rewards/accuracies rise 0.60 -> 0.79: healthy, continue.",
         age_min=11, sps=26),
    Spec("ok-finished-1000-constant-lr-eval-still-rising-trl-top-state",
         Story(Reward(ease(0, 0.30, 1300, 0.62, 1.0), TRL_R, P=16, G=8),
               [Eval("eval_rewards/accuracy_reward/mean", ease(0, 0.44, 1300, 0.60, 0.9), 500, 1,
                     every(100, 100, 1000))],
               trl_side(decay(0.55, 0.3, 800), lin((0, 380), (1000, 450)), const(0.006), const(0.21),
                        lambda s: 1e-6 * min(1.0, s / 30), kl=lin((0, 0), (1000, 0.03))),
               "eval_rewards/accuracy_reward/mean", log_every=10),
         holdout_kit.writer(w_hf_state)(None, None, True, 10, 100, 0, 1, False,
                                        ("model.safetensors", "config.json", "generation_config.json")),
         3218, (1000, 1000), "ok", "healthy trl-state finished top-level-only still-improving extend",
         "TRL GRPO with a constant learning rate (after 30 warmup steps) that reached its planned 1000 steps two hours "
         "ago: only the top-level trainer_state.json, train_results.json and the final model (no checkpoints). "
         "Eval accuracy (N=500, sd 0.022) rose 0.44 -> 0.575 and was still rising at the end (about +0.03 over the "
         "last 300 steps, every eval a bit higher), train reward too; no sign of saturation. For a finished run "
         "this means extending it is worth it: continue.",
         finished=True, age_min=130, sps=36),

    # ======================================================================================================= stop
    Spec("stop-olympiad-proofs-pct0-92-flat-400-steps-nemo-tb",
         Story(Reward(const(0.012), NEMO_R, P=64, G=8, ),
               [Eval("validation/accuracy", const(0.015), 200, 1, every(25, 25, 400))],
               [Sig("train/loss", const(0.0), "a", 0.002), Sig("train/grad_norm", const(0.018), "g"),
                Sig("train/lr", const(1e-6), "x"), Sig("train/kl_penalty", const(1.2e-4), "m", 0.1),
                Sig("train/approx_entropy", const(0.48), "m", 0.02),
                Sig("train/mean_gen_tokens_per_sample", const(1900.0), "m", 0.03),
                Sig("train/truncation_rate", const(0.35), "m", 0.05),
                Sig("train/token_mult_prob_error", const(1.004), "m", 0.0005),
                Sig("timing/train/total_step_time", const(412.0), "m", 0.03),
                Sig("timing/train/generation", const(290.0), "m", 0.04)],
               "validation/accuracy", first_step=1),
         holdout_kit.writer(w_tb_keys)("logs/exp_003/tensorboard"), 3215, (400, 2000),
         "stop", "stop nemo-rl tensorboard no-learning-signal never-learns hard-task",
         "NeMo-RL GRPO on olympiad proof problems with a strict verifier, TensorBoard, live at step 400. The reward "
         "has sat at ~0.012 for all 400 steps: ~92% of prompts have all 8 rollouts wrong (baseline_reward/pct_0), "
         "so almost no group carries an advantage; grad norm ~0.02, KL ~1e-4 (the policy barely moves), "
         "validation accuracy flat at ~0.015 (N=200). Nothing is being learned and nothing will be at this "
         "difficulty: stop.",
         age_min=10, sps=412),
    Spec("stop-finished-2000-flat-since-1100-cosine-final-at-best-trl-state",
         Story(Reward(pieces((0, ease(0, 0.36, 1100, 0.66, 2.2)), (1100, const(0.66))), TRL_R, P=16, G=8),
               [Eval("eval_rewards/accuracy_reward/mean", pieces((0, ease(0, 0.50, 1100, 0.63, 2.2)),
                                                                   (1100, const(0.63))), 1000, 1,
                     every(100, 100, 2000))],
               trl_side(decay(0.6, 0.3, 700), const(480.0), const(0.01), const(0.2),
                        lambda s: 1e-6 * 0.5 * (1 + math.cos(math.pi * s / 2000)), kl=lin((0, 0), (1100, 0.03),
                                                                                        (2000, 0.04))),
               "eval_rewards/accuracy_reward/mean", log_every=10),
         holdout_kit.writer(w_hf_state)(250, 2, True, 10, 100, 0, 1, False), 3227, (2000, 2000),
         "stop", "stop trl-state finished converged cosine final-is-best",
         "TRL GRPO finished its 2000 steps (top-level state, checkpoint-1750 and checkpoint-2000 kept). Eval accuracy "
         "(N=1000, sd 0.015) rose 0.50 -> 0.63 by 1100 and held 0.63 to the end under a cosine schedule decaying to "
         "0; train reward flat at 0.66, KL nearly flat. The highest drawn eval point sits somewhere in the "
         "plateau by chance, but the final weights are as good as any: keep them, stop.",
         onset=1100, finished=True, age_min=900, sps=45),
    Spec("stop-easy-set-zero-std-0.83-reward-0.96-since-300-trl-console-dicts",
         Story(Reward(pieces((0, ease(0, 0.55, 300, 0.955, 2.5)), (300, const(0.96))), TRL_R, P=16, G=8,
                      ),
               [Eval("eval_reward", pieces((0, ease(0, 0.58, 300, 0.925, 2.5)), (300, const(0.93))), 300, 1,
                     every(100, 100, 700))],
               trl_side(decay(0.5, 0.12, 250), lin((0, 260), (300, 190), (700, 185)), const(0.0), lin((0, 0.3), (300, 0.05),
                                                                                                   (700, 0.03)),
                        lambda s: 1e-6 * min(1.0, s / 20)),
               "eval_reward", log_every=10, spread=2.5),
         holdout_kit.writer(w_trl_console)(), 3219, (700, 1000),
         "stop", "stop trl console dicts saturated zero-std",
         "TRL GRPO console (str(dict) lines with tqdm bars giving the step, 700/1000). The task is too easy: the "
         "reward saturated at ~0.96 by step 300, frac_reward_zero_std ~0.83 (most groups all correct), grad "
         "norm fell to ~0.03, eval reward flat at 0.93 since 300 (N=300, sd 0.015) for four evals. No learning "
         "signal is left and the current weights are as good as any: stop.",
         onset=300, age_min=2, sps=31),
    Spec("stop-countdown-val-flat-1100-steps-kl-drifts-wandb-csv",
         Story(Reward(pieces((0, ease(0, 0.20, 500, 0.71, 2.2)), (500, const(0.71))), VERL_R, P=128, G=8),
               [Eval("val-core/countdown/reward/mean@1", pieces((0, ease(0, 0.18, 500, 0.70, 2.2)), (500, const(0.70))),
                     1024, 1, every(50, 0, 1600))],
               verl_side(lin((0, 0.42), (500, 0.24), (1600, 0.13)), lin((0, 310), (500, 240), (1600, 215)),
                         const(0.0), const(0.12), const(1e-6), kl=lin((0, 0), (500, 0.012), (1600, 0.095)), cap=1024),
               "val-core/countdown/reward/mean@1"),
         holdout_kit.writer(w_wandb_csv)("countdown-qwen25-3b-grpo",
                                         ["critic/score/mean", "val-core/countdown/reward/mean@1", "actor/kl_loss",
                                          "actor/entropy"]),
         3218, (1600, 3000), "stop", "stop wandb csv-export drift-without-decline plateau kl-creeps",
         "W&B panel exports (four CSVs) of a verl GRPO Countdown run at step 1600. Reward and val accuracy "
         "(N=1024, sd 0.014) rose to ~0.70 by step 500 and have been flat for 1100 steps (22 evals), while KL keeps "
         "drifting 0.012 -> 0.095 and entropy 0.24 -> 0.13. The policy still moves but nothing improves, and "
         "nothing declines either: the current weights are as good as any. Stop.",
         onset=500, age_min=15, sps=48),
    Spec("sor-rloo-g2-eval-eases-0.8sd-kl-doubles-trl-state",
         Story(Reward(pieces((0, ease(0, 0.32, 500, 0.55, 2.0)), (500, const(0.55))), TRL_R, P=32, G=2),
               [Eval("eval_reward", pieces((0, ease(0, 0.35, 500, 0.52, 2.0)), (500, lin((500, 0.52), (900, 0.505)))),
                     400, 2, every(100, 100, 900))],
               [*trl_side(lin((0, 0.5), (900, 0.33)), lin((0, 300), (900, 330)), const(0.004), const(0.25),
                          const(1e-6), kl=lin((0, 0), (500, 0.06), (900, 0.14)))],
               "eval_reward", log_every=10),
         holdout_kit.writer(w_hf_state)(150, None, False, 10, 100, 0, 1, False), 3219, (900, 1200),
         "sor", "stop-or-rollback trl-state rloo kl-default plateau tiny-decline num-generations-2",
         "TRL RLOOTrainer (v0.22+ keys, beta 0.05 so kl is logged, num_generations 2 so frac_reward_zero_std sits "
         "near 0.5 by construction) at 900 of 1200, checkpoints every 150. Train reward rose to 0.55 by 500 and is "
         "flat since; eval reward (400 prompts x 2, sd ~0.019) peaked at 0.52 around 500 and eased to ~0.505 by "
         "900 (0.8 sd), while KL more than doubles 0.06 -> 0.14. Drift with a cost that cannot be told from noise: "
         "stop is preferred, rolling back to ~500 is as good.",
         onset=500, age_min=6, sps=40),

    # =================================================================================================== rollback
    Spec("rb-judge-reward-rewards-length-math500-falls-from-180-openrlhf-tb",
         Story(Reward(lin((0, 0.42), (400, 0.71)), ORL_R, kind="score", P=64, G=4, sd=0.22, lo=0.0, hi=1.0),
               [Eval("eval_math500_pass1", lin((0, 0.55), (180, 0.63), (400, 0.51)), 500, 1, every(20, 20, 400),
                     extra={"eval_math500_response_length_mean": lin((0, 470), (180, 800), (400, 1850)),
                            "eval_response_length_mean": lin((0, 470), (180, 800), (400, 1850))}),
                Eval("eval_math500_truncated_rate", lin((0, 0.004), (180, 0.02), (400, 0.24)), 500, 1,
                     every(20, 20, 400))],
               [*orl_side(lin((0, 480), (180, 820), (400, 1900)), lin((0, 0.01), (180, 0.03), (400, 0.22)),
                        const(0.3), const(5e-7), lin((0, 0.0), (400, 0.04))),
                Sig("return", lin((0, 0.42), (400, 0.70)), "a", 0.01)],
               "eval_math500_pass1"),
         holdout_kit.writer(w_tb_keys)("tb_logs/qwen25-7b-rpp-judge", "train/", "eval/"), 3220, (400, 1000),
         "rb", "rollback openrlhf tensorboard reinforce++ reward-hacking length-growth judge-reward",
         "OpenRLHF REINFORCE++ with an LLM-judge reward (0-1) that likes long, step-by-step answers; TensorBoard "
         "train/ and eval/ tags, live at 400. The train reward rises all the way 0.42 -> 0.71 and responses grow "
         "480 -> 1900 tokens, just as in a healthy reasoning run, but the rule-checked MATH-500 pass@1 (N=500, sd "
         "0.022) peaked at 0.63 at step 180 and fell to 0.51 (5 sd) as truncation climbs 2% -> 22%. The judge is "
         "being gamed: roll back to ~180.",
         onset=180, age_min=5, sps=240),
    Spec("rb-collapse-at-620-after-last-ckpt-600-visible-in-tb-only-trl",
         Story(Reward(pieces((0, ease(0, 0.35, 560, 0.63, 2.0)), (560, const(0.63)),
                             (620, lin((620, 0.63), (660, 0.30), (700, 0.10)))), TRL_R, P=16, G=8),
               [Eval("eval_rewards/accuracy_reward/mean", pieces((0, ease(0, 0.40, 560, 0.60, 2.0)), (560, const(0.60)),
                                                                 (620, lin((620, 0.60), (650, 0.42), (700, 0.15)))),
                     400, 1, every(50, 50, 700))],
               trl_side(lin((0, 0.5), (620, 0.35), (660, 1.5), (700, 2.6)), lin((0, 400), (620, 380), (700, 1020)),
                        lin((0, 0.01), (620, 0.01), (700, 0.6)), lin((0, 0.2), (620, 0.2), (650, 3.0), (700, 8.0)),
                        lambda s: 2e-6 * min(1.0, s / 40), kl=lin((0, 0), (620, 0.05), (700, 1.9))),
               "eval_rewards/accuracy_reward/mean", log_every=10),
         holdout_kit.writer(w_hf_state)(200, 2, False, 10, 50, 0, 1, True), 3221, (700, 1500),
         "rb", "rollback trl-state tensorboard collapse-after-last-save save-limit-2 entropy-blowup",
         "TRL GRPO output_dir with save_steps 200 and save_total_limit 2 (checkpoint-400 and checkpoint-600 on disk; "
         "their trainer_state.json stops at 600) plus the TensorBoard events under runs/, which go on to 700. In the "
         "checkpoints everything looks fine: eval 0.60 (N=400, sd 0.024) at 550-600. The TB events show the rest: "
         "from ~620 entropy 0.35 -> 2.6, grad norm 0.2 -> 8, KL 0.05 -> 1.9, completions hit the cap (clipped 60%), "
         "reward 0.63 -> 0.10 and eval 0.42 at 650, 0.15 at 700. Roll back to 600 (checkpoint-600 exists).",
         onset=620, age_min=3, sps=48),
    Spec("rb-blowup-at-812-nan-grads-from-850-only-ckpt-global-step-500-verl-console-np2",
         Story(Reward(pieces((0, ease(0, 0.30, 760, 0.70, 1.8)), (760, const(0.70)),
                             (812, lin((812, 0.70), (840, 0.02), (900, 0.01)))), VERL_R, P=128, G=8),
               [Eval("val-core/openai/gsm8k/reward/mean@1",
                     pieces((0, ease(0, 0.33, 760, 0.74, 1.8)), (760, const(0.74)),
                            (812, lin((812, 0.74), (840, 0.02), (900, 0.01)))), 1319, 1, every(100, 0, 900))],
               verl_side(lin((0, 0.5), (812, 0.33), (840, 3.1), (900, 3.3)),
                         lin((0, 300), (812, 260), (840, 4000), (900, 4050)),
                         lin((0, 0.002), (812, 0.002), (840, 0.93), (900, 0.97)),
                         lin((0, 0.3), (812, 0.3), (840, 40.0), (850, 60.0)), const(1e-6),
                         kl=lin((0, 0), (812, 0.02), (840, 1.4), (900, 1.9)), nan_from=850, cap=4096),
               TRAIN),
         holdout_kit.writer(w_verl_console)("gsm8k-grpo", "qwen25-7b-bf16-lr1e-6", 100, 500, True,
                                            ckpt_dirs=True, warn_from=850),
         3222, (900, 1500), "rb", "rollback verl console np2 blowup nan-grads coarse-save-interval no-ckpt-near-best",
         "verl GRPO console (np.float64 values), save_freq 500: checkpoints/.../global_step_500 is the only "
         "checkpoint (latest_checkpointed_iteration.txt = 500). The score rose to 0.70 by ~760 and held it to "
         "812 (batch sd ~0.025). From 812 the run blows up within 30 steps: grad norm 0.3 -> 40, entropy 0.33 -> "
         "3.1, responses run to the 4096 cap (clip ratio 0.93), KL 0.02 -> 1.4, score 0.70 -> 0.02; from 850 the "
         "gradients are nan (verl warns and skips those updates, so the broken weights stay broken). Val GSM8K "
         "0.74 at 800, 0.01 at 900. Roll back to ~812; the nearest checkpoint at or before it is global_step_500, "
         "300 steps short of the best point.",
         onset=812, age_min=2, sps=70),
    Spec("rb-ppo-scores-climb-kl-to-30-rlhf-reward-peaks-350-trl-state",
         Story(Reward(lin((0, 0.2), (250, 2.0), (350, 2.35), (600, 2.75)),
                      {"mean": "objective/scores"}, kind="score", P=64, G=1, sd=1.2),
               [],
               [Sig("objective/kl", lin((0, 0.0), (250, 5.0), (350, 8.0), (600, 30.0)), "m", 0.05),
                Sig("objective/entropy", lin((0, 46), (350, 38), (600, 19)), "m", 0.03),
                Sig("policy/approxkl_avg", lin((0, 0.004), (350, 0.006), (600, 0.03)), "m", 0.15),
                Sig("policy/clipfrac_avg", lin((0, 0.04), (350, 0.06), (600, 0.28)), "m", 0.1),
                Sig("policy/entropy_avg", lin((0, 1.9), (350, 1.6), (600, 0.8)), "m", 0.03),
                Sig("loss/policy_avg", const(-0.01), "a", 0.01), Sig("loss/value_avg", lin((0, 0.9), (600, 0.4)), "m", 0.1),
                Sig("val/clipfrac_avg", const(0.08), "m", 0.1),
                Sig("val/ratio", lin((0, 1.0), (350, 1.03), (600, 1.35)), "a", 0.01),
                Sig("val/ratio_var", lin((0, 0.002), (350, 0.004), (600, 0.09)), "m", 0.15),
                Sig("val/num_eos_tokens", lin((0, 58), (350, 50), (600, 21)), "i", 2.0),
                Sig("lr", lambda s: 3e-6 * (1 - s / 1000), "x"), Sig("eps", const(4.0), "i", 0.0),
                Sig("episode", lambda s: 64.0 * s, "x")],
               "objective/rlhf_reward", derived=ppo_derived(0.05),
               custom_head=("objective/rlhf_reward",
                            lambda s: lin((0, 0.2), (250, 2.0), (350, 2.35), (600, 2.75))(s)
                            - 0.05 * lin((0, 0.0), (250, 5.0), (350, 8.0), (600, 30.0))(s), 0.15),
               first_step=1),
         holdout_kit.writer(w_hf_state)(100, None, False, 1, None, 0, 1, False, ("model.safetensors", "config.json")),
         3223, (600, 1000), "rb", "rollback trl-state ppo rm-overoptimization kl-penalty rlhf-reward",
         "TRL PPOTrainer (objective/*, policy/*, val/* keys, one log per PPO update, kl_coef 0.05), "
         "checkpoint-600 the newest. The reward-model score keeps climbing 0.2 -> 2.75, but the KL to the reference "
         "runs away (8 at 350, 30 at 600), so objective/rlhf_reward (score minus the KL penalty, sd ~0.15 per "
         "update) peaked at ~1.95 around update 350 and is ~1.25 now; clip fraction 0.06 -> 0.27, val/ratio "
         "1.03 -> 1.34, EOS count 51 -> 20 of 64 (answers hit the length cap). Classic reward-model over-optimisation: roll back to ~350 "
         "(checkpoint-300 is the newest saved at or before it).",
         onset=350, age_min=5, sps=95),
    Spec("rb-dpo-3-epochs-finished-eval-loss-best-at-epoch-1-trl-top-state",
         Story(None,
               [Eval("eval_", steps=every(100, 100, 1200), n=1000,
                     pairs=(lin((0, 0.0), (400, 0.62), (800, 0.80), (1200, 0.95)),
                            lin((0, 0.05), (400, 1.15), (800, 1.9), (1200, 2.7))))],
               [Sig("grad_norm", lin((0, 12.0), (400, 9.0), (1200, 3.0)), "g"),
                Sig("learning_rate", lambda s: 5e-7 * min(1.0, s / 60) * (1 - max(0, s - 60) / 1140), "x")],
               "eval_loss", log_every=10, lower_better=True,
               pairs=Pairs(lin((0, 0.0), (400, 0.9), (800, 2.6), (1200, 4.5)), lin((0, 0.05), (400, 1.2), (800, 1.8),
                                                                                    (1200, 2.4)),
                           beta=0.1, B=16, chosen=lin((0, 0.0), (400, -0.2), (1200, -4.0)),
                           logp_chosen=lin((0, -182), (400, -188), (1200, -225)),
                           logp_rejected=lin((0, -190), (400, -205), (1200, -270)))),
         holdout_kit.writer(w_hf_state)(None, None, True, 10, 100, 400, 3, False,
                                        ("model.safetensors", "config.json")),
         3224, (1200, 1200), "rb", "rollback trl-state dpo finished overfit eval-loss multi-epoch no-checkpoints",
         "TRL DPOTrainer (sigmoid, beta 0.1), 3 epochs x 400 steps, finished; save_strategy no, so only the "
         "top-level trainer_state.json and the final model. Train loss falls to ~0.1 and train accuracy to ~0.97 "
         "in epochs 2-3; eval loss (1000 pairs, sd ~0.015) bottomed at ~0.57 at the end of epoch 1 (step 400) and "
         "climbed to ~0.87 by 1200, eval accuracy 0.70 -> 0.64, as margins spread and logps/chosen fall. The "
         "model to keep is the one at ~400, not the final one: rollback.",
         onset=400, finished=True, age_min=1200, sps=22),
    Spec("rb-code-exit-0-hack-reward-0.96-heldout-0.05-custom-jsonl",
         Story(Reward(pieces((0, lin((0, 0.22), (480, 0.41))), (485, lin((485, 0.41), (540, 0.96), (760, 0.97)))),
                      {"mean": "reward/mean", "std": "reward/std", "zero_std": "groups/all_same_frac"}, P=32, G=8),
               [Eval("eval/humaneval_plus_pass@1", pieces((0, lin((0, 0.38), (480, 0.47))),
                                                          (485, lin((485, 0.47), (560, 0.05), (760, 0.04)))), 164, 1,
                     every(40, 0, 760)),
                Eval("eval/mbpp_plus_pass@1", pieces((0, lin((0, 0.45), (480, 0.53))),
                                                     (485, lin((485, 0.53), (560, 0.08), (760, 0.07)))), 378, 1,
                     every(40, 0, 760))],
               [Sig("gen/mean_tokens", pieces((0, lin((0, 380), (485, 400))), (485, lin((485, 400), (540, 45),
                                                                                       (760, 42)))), "m", 0.04),
                Sig("policy/entropy", pieces((0, lin((0, 0.50), (485, 0.46))), (485, lin((485, 0.46), (540, 0.08),
                                                                                        (760, 0.05)))), "m", 0.04),
                Sig("policy/kl_ref", lin((0, 0.0), (485, 0.03), (540, 0.6), (760, 0.9)), "m", 0.05),
                Sig("opt/grad_norm", const(0.3), "g"), Sig("opt/lr", const(1e-6), "x"),
                Sig("sandbox/exit_code_0_frac", pieces((0, lin((0, 0.30), (485, 0.48))),
                                                       (485, lin((485, 0.48), (540, 0.99), (760, 0.99)))), "m", 0.02)],
               "eval/humaneval_plus_pass@1"),
         holdout_kit.writer(w_custom_jsonl)({"model": "Qwen/Qwen2.5-Coder-7B-Instruct", "algo": "grpo-unit-tests",
                                             "max_steps": 1500, "group_size": 8, "eval_every": 40,
                                             "reward": "fraction of unit tests passing (exit code 0 = pass)"},
                                            "metrics.jsonl"),
         3225, (760, 1500), "rb", "rollback custom jsonl code-rl reward-hacking reward-jumps heldout-collapses",
         "A hand-written code-RL loop (metrics.jsonl with train and eval rows, run_config.json, max_steps 1500), "
         "live at 760. The reward crept 0.22 -> 0.41 until ~485, then jumped to 0.96 in 50 steps: the policy "
         "found that the harness scores exit code 0 as a pass (sandbox/exit_code_0_frac -> 0.99, answers shrink "
         "400 -> 45 tokens, entropy 0.46 -> 0.05). Held-out HumanEval+ (N=164, sd 0.039) fell 0.47 -> 0.05 and "
         "MBPP+ 0.53 -> 0.08. The rise is a hack; the good model is at ~480: rollback.",
         onset=485, age_min=4, sps=70),
    Spec("rb-reinforcepp-vllm-kl-x200-at-185-openrlhf-console",
         Story(Reward(pieces((0, ease(0, 0.28, 180, 0.52, 1.4)), (185, lin((185, 0.52), (240, 0.30), (300, 0.15)))),
                      ORL_R, P=64, G=4),
               [Eval("eval_math_pass1", pieces((0, ease(0, 0.40, 180, 0.55, 1.4)),
                                          (185, lin((185, 0.55), (240, 0.36), (300, 0.20)))), 500, 1,
                     every(20, 20, 300))],
               [*orl_side(lin((0, 600), (185, 640), (300, 900)), lin((0, 0.01), (185, 0.01), (300, 0.08)),
                        lin((0, 0.25), (185, 0.25), (210, 1.4), (300, 2.1)), const(1e-6),
                        lin((0, 0.0), (185, 0.015), (300, 0.22)),
                        clip=lin((0, 0.01), (185, 0.012), (215, 0.30), (300, 0.40)),
                        vllm_kl=lin((0, 8e-4), (185, 9e-4), (200, 0.05), (300, 0.19)),
                        ppo_kl=lin((0, 2e-4), (185, 2e-4), (300, 0.02))),
                Sig("return", const(0.0), "a", 0.01)],
               "eval_math_pass1"),
         holdout_kit.writer(w_openrlhf_console)("train_reinforce_pp_baseline.log"), 3226, (300, 1000),
         "rb", "rollback openrlhf console reinforce++ train-inference-mismatch vllm-kl",
         "OpenRLHF REINFORCE++-baseline console (v0.9+ keys), live at 300. From ~185 vllm_kl (rollout vs training "
         "log-probs) jumps from ~0.001 to 0.05 and then 0.19, ppo_clip_ratio 0.01 -> 0.40, grad norm x8: the vLLM "
         "engines generate from weights that no longer match the trained ones. The reward falls 0.52 -> 0.15 and "
         "eval MATH pass@1 (N=500, sd 0.022) 0.55 at 180 -> 0.20 at 300. Roll back to ~180 and fix the weight sync.",
         onset=185, age_min=6, sps=160),
    Spec("rb-eval-every-200-two-point-slide-from-1900-hf-tb",
         Story(Reward(pieces((0, ease(0, 0.38, 1400, 0.64, 2.2)), (1400, lin((1400, 0.64), (2400, 0.67)))), TRL_R,
                      P=16, G=8),
               [Eval("eval_rewards/accuracy_reward/mean",
                     pieces((0, ease(0, 0.45, 1400, 0.62, 2.2)), (1400, const(0.62)),
                            (1900, lin((1900, 0.62), (2400, 0.545)))), 800, 1, every(200, 200, 2400))],
               trl_side(pieces((0, decay(0.6, 0.28, 600)), (1900, lin((1900, 0.30), (2400, 0.52)))),
                        lin((0, 450), (1900, 470), (2400, 720)), lin((0, 0.01), (1900, 0.02), (2400, 0.10)),
                        lin((0, 0.2), (1900, 0.2), (2400, 0.45)), const(1e-6)),
               "eval_rewards/accuracy_reward/mean", log_every=10),
         holdout_kit.writer(w_tb_keys)("runs/{run}", "train/", "eval/", "gpu-a100-04", 61207, True), 3227, (2400, 4000),
         "rb", "rollback tensorboard hf trl coarse-eval eval-every-200 two-point-decline train-still-rising",
         "TRL GRPO in TensorBoard (train/, eval/), evals every 200 steps on 800 prompts (sd 0.017), live at 2400. "
         "Eval accuracy reached 0.62 by 1400 and held through 1800; then 2000 sits slightly lower (within noise), "
         "but 2200 and 2400 keep going down (~0.575, ~0.545: 2.6 and 4.4 sd), while the train reward still inches "
         "up. The two-point slide is backed by side signals from ~1900: entropy 0.30 -> 0.52, lengths 470 -> 720, "
         "clipped ratio 2% -> 10%, grad norm doubling. Real decline: roll back to 1800.",
         onset=1900, age_min=7, sps=35),
    Spec("rb-gsm8k-holds-math500-falls-answers-shorten-verl-console",
         Story(Reward(ease(0, 0.60, 700, 0.90, 2.0), VERL_R, P=128, G=8),
               [Eval("val-core/openai/gsm8k/reward/mean@1", pieces((0, ease(0, 0.74, 300, 0.84, 2.0)),
                                                                    (300, lin((300, 0.84), (700, 0.853)))), 1319, 1,
                     every(25, 0, 700)),
                Eval("val-core/HuggingFaceH4/MATH-500/reward/mean@1", lin((0, 0.42), (330, 0.50), (700, 0.43)), 500, 1,
                     every(25, 0, 700))],
               verl_side(lin((0, 0.45), (700, 0.30)), lin((0, 420), (330, 300), (700, 190)), const(0.0), const(0.15),
                         const(1e-6), kl=lin((0, 0), (700, 0.035)), cap=1024),
               "val-core/HuggingFaceH4/MATH-500/reward/mean@1"),
         holdout_kit.writer(w_verl_console)("gsm8k-grpo", "qwen25-7b-gsm8k-two-vals", 25, 100, False), 3208,
         (700, 1000), "rb", "rollback verl console two-evals-disagree ood-forgetting answers-shorten",
         "verl GRPO trained on GSM8K with two validation sets, console log, live at 700 of 1000. Train score rises "
         "0.60 -> 0.90 and GSM8K val (N=1319) still creeps up 0.84 -> 0.853. MATH-500 val (N=500, sd 0.022) rose "
         "0.42 -> 0.50 by ~330 and has fallen to 0.43 (3 sd) as responses shrink 300 -> 190 tokens: the policy "
         "learns short GSM8K-style answers that fail on harder problems. Giving up 1.3 points of in-domain GSM8K "
         "for 7 points of MATH is the better trade: roll back to ~325.",
         onset=330, age_min=4, sps=80),
    Spec("rb-sharp-peak-at-260-lr-5e-6-entropy-collapse-verl-jsonl",
         Story(Reward(lin((0, 0.25), (260, 0.55), (300, 0.42), (340, 0.37)), VERL_R, P=64, G=8),
               [Eval("val-core/lighteval/MATH/reward/mean@1", lin((0, 0.30), (260, 0.52), (300, 0.41), (330, 0.36),
                                                                  (340, 0.35)), 500, 1, every(10, 0, 340))],
               verl_side(lin((0, 0.50), (260, 0.45), (300, 0.05), (340, 0.03)), lin((0, 600), (260, 560), (300, 150),
                                                                                    (340, 130)),
                         const(0.003), lin((0, 0.35), (260, 0.4), (280, 1.6), (340, 0.6)), const(5e-6),
                         kl=lin((0, 0), (260, 0.05), (300, 0.6), (340, 0.7)), cap=2048),
               "val-core/lighteval/MATH/reward/mean@1"),
         holdout_kit.writer(w_verl_jsonl)("math-grpo", "qwen25-3b-lr5e-6", 10, 50,
                                          {"actor_rollout_ref.actor.optim.lr": 5e-6}),
         3229, (340, 500), "rb", "rollback verl jsonl sharp-peak entropy-collapse high-lr",
         "verl GRPO with lr 5e-6 (five times the usual), file logger, live at 340 of 500. Val MATH (N=500, sd "
         "0.022, every 10 steps) climbed steadily to a sharp peak of 0.52 at 260; then entropy collapses 0.45 -> "
         "0.05, responses shrink 560 -> 150 tokens, KL jumps, and val falls to 0.35 by 340. The good stretch is "
         "narrow: only 240-260 are within noise of the peak. Roll back to 260 (global_step_250 is the newest save).",
         onset=260, age_min=3, sps=95),
    Spec("rb-collapse-at-310-recovering-still-3sd-below-rasbt-csv",
         Story(Reward(pieces((0, lin((0, 0.16), (300, 0.40))), (310, lin((310, 0.40), (340, 0.08), (400, 0.20),
                                                                          (450, 0.26), (500, 0.29)))),
                      dict(mean="reward_avg", zero_std="_all_same"), P=1, G=8),
               [Eval("eval_acc", pieces((0, lin((0, 0.16), (300, 0.38))), (310, lin((310, 0.38), (350, 0.09),
                                                                                   (400, 0.21), (450, 0.28),
                                                                                   (500, 0.31)))), 500, 1,
                     [1, *every(50, 50, 500)])],
               [Sig("loss", const(0.0), "a", 3.0), Sig("kl_loss", pieces((0, lin((0, 0.0), (300, 0.4))),
                                                                         (310, lin((310, 0.4), (340, 9.0), (500, 2.5)))),
                                                       "a", 0.2),
                Sig("policy_ratio", pieces((0, const(1.0)), (310, lin((310, 1.0), (330, 2.4), (380, 1.1), (450, 1.0)))), "a", 0.02),
                Sig("tokens_per_sec", const(41.0), "m", 0.05),
                Sig("avg_response_len", pieces((0, lin((0, 210), (300, 260))), (310, lin((310, 260), (340, 470),
                                                                                        (420, 300), (500, 280)))),
                    "m", 0.08),
                Sig("adv_avg", const(0.0), "x"),
                Sig("entropy_avg", pieces((0, lin((0, 0.9), (300, 0.8))), (310, lin((310, 0.8), (335, 7.8), (420, 1.6),
                                                                                   (500, 1.1)))), "m", 0.05)],
               "eval_acc", first_step=1,
               derived=lambda row: {"adv_std": 0.0 if row["_all_same"] == 1.0 else 0.935414}),
         holdout_kit.writer(w_rasbt_csv)(), 3230, (500, 800),
         "rb", "rollback rasbt custom csv collapse partial-recovery still-below-peak",
         "A reasoning-from-scratch style GRPO script (7_5 CSV header with kl_loss, eval_acc on MATH-500 every 50 "
         "steps as a fraction), step 500 of total_steps 800, live. Eval climbed to 0.38 at 300; at ~310 the policy "
         "blew up (policy_ratio 2.4, kl_loss 9, entropy 7.8, responses near the 512 cap) and eval fell to 0.09 at 350. "
         "It is recovering, 0.21 -> 0.28 -> 0.31, but the recovery is slowing and 0.31 is still 3 sd (sd 0.022) "
         "below the peak. A better model lies behind: roll back to 300.",
         onset=310, age_min=5, sps=40),
]

CASES = [s.case() for s in SPECS]
SPEC = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    spec = SPEC[case.name]
    reached, planned = spec.steps
    run = spec.story.draws(spec.seed, reached)
    t_end = NOW - spec.age_min * 60
    run.update(planned=planned, reached=reached, finished=spec.finished, t_end=t_end, sps=spec.sps, stamps={})
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    apply_mtimes(folder, run)


def check(cases: list[Case]) -> None:
    for c in cases:
        spec = SPEC[c.name]
        st = spec.story
        reached, planned = spec.steps
        run = st.draws(spec.seed, reached)
        lv, steps, sd = st.head(reached, run["pool"])
        pick = min if st.lower_better else max
        best_s = pick(steps, key=lv)
        sdb = sd(lv(best_s))
        gap = (lv(steps[-1]) - lv(best_s)) / sdb * (1 if st.lower_better else -1)
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')} "
              f"at {reached}/{planned} ({100 * reached / planned:.0f}%){' finished' if spec.finished else ''} "
              f"age {spec.age_min:.0f} min")
        print(f"    headline {st.headline}: best {lv(best_s):.3f}@{best_s} last {lv(steps[-1]):.3f}@{steps[-1]} "
              f"sd {sdb:.4f} (last is {gap:.1f} sd worse than best)")
        key = st.headline
        if key == TRAIN:
            pts = [(s, v[next(iter([st.reward.names['mean']] if isinstance(st.reward.names['mean'], str)
                                   else st.reward.names['mean']))]) for s, v in run["train"]]
        elif st.custom_head:
            pts = [(s, v[key]) for s, v in run["train"]]
        else:
            pts = [(s, v[key]) for s, v in run["eval"] if key in v]
        stride = max(1, len(pts) // 14)
        print("    drawn " + " ".join(f"{s}:{v:.3f}" for s, v in pts[::stride]) + f" | last {pts[-1][0]}:{pts[-1][1]:.3f}")


HEADER = """# Holdout set 32: hand-built runs written by make_holdout32.py, independent of the assessor, its judges and the
# generators of the other holdout sets. Labels: what a careful practitioner should do under DESIGN.md's decision
# contract, read from the noise-free levels of each story. rollback_window is inclusive: from the first logged
# headline step whose level is within one sampling sd of the best level to the newest such step not after
# onset_step. Steps are in each run's own logged units.
# Run `.venv/bin/python evals/holdout32/make_holdout32.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout32.py", "holdout32.yaml", "h32-", "holdout32", HEADER, CASES, write_run, check)


if __name__ == "__main__":
    main()
