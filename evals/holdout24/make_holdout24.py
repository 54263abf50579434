"""Holdout set 24: blind-labelled RL post-training runs aimed at the core of the decision contract.

Run from the worktree root:
    .venv/bin/python evals/holdout24/make_holdout24.py           # writes runs/ (gitignored) and holdout24.yaml
    .venv/bin/python evals/holdout24/make_holdout24.py --check   # also prints levels and rollback windows

Written without reading the assessor. Each case is a plot: noise-free levels per optimiser step (the solve rate of
the task reward, other reward terms, held-out evals, and side signals), drawn through this set's noise model and
written the way one framework at one version writes them.

Noise model (this set's own):
  * prompts come from a fixed pool with item-response difficulties d_i ~ N(0, spread); at level L the policy's
    skill theta is set so that the pool's mean solve rate is L, and prompt i is solved with sigmoid(theta - d_i).
    A batch samples P prompts and G rollouts each (Bernoulli). The batch mean, the batch std, the share of groups
    whose G rollouts agree, the mean within-group std and the all-wrong / all-right percentages all come from the
    same draws. A level of exactly 0 gives exactly-zero rewards. Trainers that average since the last log (TRL)
    log the mean of n batches; the others log the current batch;
  * tied groups (greedy sampling, a collapsed policy) draw one outcome per prompt and repeat it G times;
  * other reward terms (format, tag counts, ...) are per-rollout Bernoulli(level) times the term's weight;
  * held-out evals are Binomial(N, level) / N;
  * side signals (KL, entropy, lengths, clip fractions, step time) carry AR(1) log-normal noise (rho 0.85), so
    they wander rather than jitter; grad norms are log-normal with a Pareto(1.3) burst on about 3 % of steps.

Labels come from the plots (never from a tool), under DESIGN.md's "What the three decisions mean". The rollback
window runs from the first logged headline step whose noise-free level is within one sampling sd of the best
level (sd of one eval for an eval headline, of one logged value for a train headline) to the newest such step not
after the onset of the breakage; `--check` prints them.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
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
    writer,
)

HERE = Path(__file__).resolve().parent
NOW = time.time()
Level = Callable[[float], float]
NAN = float("nan")


# ---------------------------------------------------------------------------------------------------------- levels


def lin(*pts: tuple[float, float]) -> Level:
    """Piecewise-linear level through the knots."""
    xs = np.array([p[0] for p in pts], float)
    ys = np.array([p[1] for p in pts], float)
    return lambda s: float(np.interp(s, xs, ys))


def ease(*pts: tuple[float, float]) -> Level:
    """Through the knots with a cosine ease between each pair (flat at every knot): curves that bend."""
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]

    def f(s: float) -> float:
        if s <= xs[0]:
            return ys[0]
        for (x0, y0), (x1, y1) in itertools.pairwise(pts):
            if s <= x1:
                u = (s - x0) / (x1 - x0) if x1 > x0 else 1.0
                return y0 + (y1 - y0) * (1 - math.cos(math.pi * u)) / 2
        return ys[-1]

    return f


def const(v: float) -> Level:
    return lambda s: v


def warm_const(peak: float, warm: int, start: float = 0.0) -> Level:
    return lambda s: peak * min(1.0, start + (1 - start) * s / warm) if warm else peak


def warm_cos(peak: float, warm: int, total: int, floor: float = 0.0) -> Level:
    def f(s: float) -> float:
        if s < warm:
            return peak * s / warm
        u = min(1.0, (s - warm) / max(1, total - warm))
        return floor + (peak - floor) * (1 + math.cos(math.pi * u)) / 2

    return f


def warm_lin(peak: float, warm: int, total: int) -> Level:
    return lambda s: peak * s / warm if s < warm else peak * max(0.0, (total - s) / max(1, total - warm))


def trunc_of(length: Level, cap: float) -> Level:
    """Share of completions cut at the cap, from how close the mean length sits to it."""
    return lambda s: 1 / (1 + math.exp(-(length(s) / cap - 0.86) / 0.055))


# ----------------------------------------------------------------------------------------------- the prompt pool


def _sig(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


class Pool:
    """Fixed prompts with item-response difficulties; the policy's skill is set from the story's level."""

    GRID = np.linspace(-16, 16, 3201)

    def __init__(self, rng: np.random.Generator, spread: float, size: int = 384):
        self.d = rng.normal(0.0, spread, size)
        self.mean_p = _sig(self.GRID[:, None] - self.d[None, :]).mean(1)

    def probs(self, level: float) -> np.ndarray:
        if level <= 0:
            return np.zeros_like(self.d)
        if level >= 1:
            return np.ones_like(self.d)
        return _sig(float(np.interp(level, self.mean_p, self.GRID)) - self.d)

    def sd(self, level: float, prompts: int, group: int) -> float:
        """Sampling sd of one batch mean."""
        p = self.probs(level)
        return math.sqrt((p.var() + (p * (1 - p)).mean() / group) / prompts)

    def rollouts(self, rng: np.random.Generator, level: float, prompts: int, group: int, tie: float) -> np.ndarray:
        p = self.probs(level)[rng.integers(0, len(self.d), prompts)]
        wins = rng.random((prompts, group)) < p[:, None]
        tied = rng.random(prompts) < tie
        wins[tied] = wins[tied, :1]
        return wins.astype(float)


def ar_noise(rng: np.random.Generator, n: int, sigma: float, rho: float = 0.85) -> np.ndarray:
    z = rng.normal(size=n)
    out = np.empty(n)
    a = z[0]
    for i in range(n):
        a = rho * a + math.sqrt(1 - rho * rho) * z[i] if i else a
        out[i] = a
    return np.exp(sigma * out)


# ------------------------------------------------------------------------------------------------------ the plots


ZERO, HALF, GN, LR, LEN = const(0.0), const(0.5), const(0.25), const(1e-6), const(400.0)


@dataclass
class Plot:
    """A run's noise-free story. Levels are functions of the optimiser step."""

    solve: Level  # solve rate of the task reward (or the preference accuracy for DPO)
    weight: float = 1.0  # the task reward's value when solved
    fn: str = "accuracy_reward"
    extras: dict[str, tuple[Level, float]] = field(default_factory=dict)  # other reward terms: level, weight
    prompts: int = 32
    group: int = 8
    spread: float = 1.4
    tie: Level = ZERO  # share of groups whose rollouts are all identical by construction
    every: int = 1  # logging interval
    average: bool = True  # logged values average the batches since the last log (TRL) or are the current one
    evals: dict[str, tuple[Level, int]] = field(default_factory=dict)
    eval_every: int = 0
    eval_at_zero: bool = False
    eval_fixed: bool = False  # greedy validation of weights that never change: the same score every time
    headline: str = "train"  # "train" or an eval key: what the labels are read from
    kl: Level | None = None
    ent: Level | None = HALF
    gn: Level = GN
    lr: Level = LR
    length: Level = LEN
    cap: int = 1024
    trunc: Level | None = None
    clip: Level = ZERO
    nan_from: int | None = None
    gn_spikes: dict[int, float] = field(default_factory=dict)  # step -> multiplier
    zero_gn_when_flat: bool = False  # grad norm is exactly 0 when every group is flat
    sps: float = 30.0  # wall seconds per step
    age: float = 5.0  # minutes since the newest write
    done: bool = False  # the trainer wrote its end-of-training marker
    # DPO
    margin: Level | None = None
    chosen: Level | None = None
    pairs: int = 64

    def trunc_level(self) -> Level:
        return self.trunc or trunc_of(self.length, self.cap)

    def train_level(self, s: float) -> float:
        lv = self.weight * self.solve(s)
        return lv + sum(w * f(s) for f, w in self.extras.values())

    def headline_level(self) -> Level:
        return self.train_level if self.headline == "train" else self.evals[self.headline][0]

    def headline_sd(self, pool: Pool, step: int) -> float:
        """Sampling sd of one logged headline value at this step's level."""
        if self.headline != "train":
            lv, n = self.evals[self.headline]
            return math.sqrt(max(lv(step) * (1 - lv(step)), 1e-6) / n)
        sd = self.weight * pool.sd(self.solve(step), self.prompts, self.group)
        return sd / math.sqrt(self.every if self.average else 1)

    def train_steps(self, reached: int) -> list[int]:
        return list(range(self.every, reached + 1, self.every))

    def eval_steps(self, reached: int) -> list[int]:
        if not self.evals:
            return []
        first = 0 if self.eval_at_zero else self.eval_every
        return list(range(first, reached + 1, self.eval_every))

    def headline_steps(self, reached: int) -> list[int]:
        return self.train_steps(reached) if self.headline == "train" else self.eval_steps(reached)


@dataclass
class Run:
    plot: Plot
    reached: int
    planned: int
    rows: list[tuple[int, dict]]
    evals: list[tuple[int, dict]]
    t_end: float

    def wall(self, s: float) -> float:
        return self.t_end - (self.reached - s) * self.plot.sps

    @property
    def finished(self) -> bool:
        return self.plot.done


def draw(plot: Plot, rng: np.random.Generator, reached: int, planned: int) -> Run:
    pool = Pool(rng, plot.spread)
    steps = plot.train_steps(reached)
    n = len(steps)
    noise = {
        k: ar_noise(rng, n, sig) for k, sig in dict(kl=0.06, ent=0.04, len=0.035, clip=0.15, time=0.05, tr=0.10).items()
    }
    trunc = plot.trunc_level()
    top = plot.weight + sum(w for _, w in plot.extras.values())
    rows = []
    for i, s in enumerate(steps):
        span = range(s - plot.every + 1, s + 1) if plot.average else [s]
        acc: dict[str, list[float]] = {}
        for b in span:
            r = pool.rollouts(rng, plot.solve(b), plot.prompts, plot.group, plot.tie(b)) * plot.weight
            total = r.copy()
            parts = {plot.fn: r}
            for name, (lv, w) in plot.extras.items():
                x = (rng.random(r.shape) < lv(b)).astype(float) * w
                parts[name] = x
                total = total + x
            if plot.nan_from is not None and b >= plot.nan_from:
                total = total * 0
                parts = {k: v * 0 for k, v in parts.items()}
            flat = total.max(1) == total.min(1)
            grp = total.mean(1)
            vals = dict(
                reward=total.mean(),
                reward_std=total.std(ddof=1),
                zero_std=flat.mean(),
                group_std=total.std(1, ddof=1).mean(),
                pct0=100 * np.mean(grp == 0),
                pct1=100 * np.mean(np.isclose(grp, top)),
                flat_all=float(flat.all()),
            )
            for k, v in parts.items():
                vals[f"part:{k}"] = v.mean()
                vals[f"partsd:{k}"] = v.std(ddof=1)
            for k, v in vals.items():
                acc.setdefault(k, []).append(float(v))
        row = {k: float(np.mean(v)) for k, v in acc.items()}
        row["any_signal"] = 1.0 - min(acc["flat_all"])
        ln = plot.length(s) * noise["len"][i]
        row["len"] = min(ln, plot.cap)
        row["len_max"] = float(min(plot.cap, ln * rng.uniform(2.0, 3.2)))
        row["len_min"] = float(max(3, ln * rng.uniform(0.08, 0.25)))
        row["trunc"] = float(min(1.0, trunc(s) * noise["tr"][i]))
        row["kl"] = plot.kl(s) * noise["kl"][i] if plot.kl else None
        row["ent"] = plot.ent(s) * noise["ent"][i] if plot.ent else None
        g = plot.gn(s) * math.exp(0.25 * rng.normal())
        if rng.random() < 0.03:
            g *= 1 + 1.5 * rng.pareto(1.3)
        g *= plot.gn_spikes.get(s, 1.0)
        if plot.zero_gn_when_flat and row["any_signal"] == 0:
            g = 0.0
        row["gn"] = g
        row["lr"] = plot.lr(s)
        row["clip"] = plot.clip(s) * noise["clip"][i]
        row["loss"] = float(rng.normal(0, 0.004)) + (0.04 * row["kl"] if row["kl"] else 0.0)
        row["time"] = plot.sps * noise["time"][i] * (0.6 + 0.4 * row["len"] / plot.length(0))
        row["tokens"] = plot.prompts * plot.group * (row["len"] + 180.0)
        if plot.margin is not None:
            dpo_row(plot, rng, s, row)
        if plot.nan_from is not None and s >= plot.nan_from:
            row.update(
                kl=NAN if plot.kl else None,
                ent=NAN if plot.ent else None,
                gn=NAN,
                loss=NAN,
                len=float(plot.cap),
                len_max=float(plot.cap),
                len_min=float(plot.cap),
                trunc=1.0,
            )
        row["z"] = float(rng.normal())
        row = {k: (float(v) if isinstance(v, np.floating | np.integer) else v) for k, v in row.items()}
        rows.append((s, row))
    evals = []
    for s in plot.eval_steps(reached):
        ev = {}
        for key, (lv, num) in plot.evals.items():
            p = 0.0 if plot.nan_from is not None and s >= plot.nan_from else min(1.0, max(0.0, lv(s)))
            ev[key] = round(p * num) / num if plot.eval_fixed else float(rng.binomial(num, p) / num)
        evals.append((s, ev))
    t_end = NOW - plot.age * 60
    return Run(plot, reached, planned, rows, evals, t_end)


def dpo_row(plot: Plot, rng: np.random.Generator, s: int, row: dict) -> None:
    """Preference-pair metrics: accuracy is Binomial over the logged pairs; margins, rewards and the sigmoid loss
    follow the margin level (the loss falls from ln 2 as the margin grows)."""
    n = plot.pairs * plot.every
    m = max(0.0, plot.margin(s) if plot.margin else 0.0)
    margin = m + float(rng.normal(0, 0.03 + 0.08 * m / math.sqrt(plot.every)))
    chosen = (plot.chosen(s) if plot.chosen else 0.0) + float(rng.normal(0, 0.03 + 0.05 * m))
    loss = 0.6931 - 0.42 * m / (1 + m) + float(rng.normal(0, 0.004 + 0.03 * m / (1 + m)))
    row.update(
        acc=float(rng.binomial(n, plot.solve(s)) / n),
        margins=margin,
        chosen=chosen,
        rejected=chosen - margin,
        dloss=loss,
    )


def _erfinv(y: float) -> float:
    y = min(max(y, -0.999), 0.999)
    a = 0.147
    ln = math.log(1 - y * y)
    t = 2 / (math.pi * a) + ln / 2
    return math.copysign(math.sqrt(math.sqrt(t * t - ln / a) - t), y)


# ------------------------------------------------------------------------------------------------- file helpers


def stamp(path: Path, t: float) -> None:
    os.utime(path, (t, t))


def stamp_tree(folder: Path, t: float, keep: set[Path] | None = None) -> None:
    """Every file (and folder) under `folder` gets mtime t, except the paths already stamped in `keep`."""
    keep = keep or set()
    for p in sorted(folder.rglob("*"), key=lambda q: len(q.parts), reverse=True):
        if p not in keep and not any(k in p.parents for k in keep):
            stamp(p, t)
    stamp(folder, t)


def write(path: Path, text: str, newline: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline=newline) as fh:
        fh.write(text)
    return path


def iso(t: float, sep: str = " ") -> str:
    return time.strftime(f"%Y-%m-%d{sep}%H:%M:%S", time.gmtime(t))


def hms(sec: float) -> str:
    sec = int(sec)
    h, rest = divmod(sec, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60:02d}:{rest % 60:02d}"


def tqdm_line(done: int, total: int, elapsed: float, rate: float, prefix: str = "") -> str:
    frac = done / total
    bar = "█" * int(frac * 10) + (" " * (10 - int(frac * 10)))
    left = (total - done) * rate
    return f"{prefix}{int(frac * 100):3d}%|{bar}| {done}/{total} [{hms(elapsed)}<{hms(left)}, {rate:.2f}s/it]"


def yaml_text(obj: dict, indent: int = 0) -> str:
    out = []
    for k, v in obj.items():
        if isinstance(v, dict):
            out.append(" " * indent + f"{k}:")
            out.append(yaml_text(v, indent + 2))
        else:
            out.append(" " * indent + f"{k}: {json.dumps(v) if isinstance(v, str) else v}")
    return "\n".join(out)


def safetensors_stub(path: Path) -> None:
    header = json.dumps({"__metadata__": {"format": "pt"}}).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(len(header).to_bytes(8, "little") + header)


def uid(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


# ------------------------------------------------------------------------------------------------- TRL metric keys


def trl_row(run: Run, row: dict, step: int, ver: tuple[int, int], cum_tokens: float) -> dict:
    """One TRL GRPO/RLOO log entry (no epoch/step), key names and set as that TRL version logs them."""
    p = run.plot
    out: dict = {
        "loss": round(0.04 * (row["kl"] or 0.0) + 0.0007 * row["z"], 4) if not math.isnan(row["loss"]) else NAN,
        "grad_norm": row["gn"],
        "learning_rate": row["lr"],
    }
    if ver >= (0, 16):
        out["num_tokens"] = float(cum_tokens)
    if ver < (0, 17):
        out["completion_length"] = row["len"]
    else:
        out["completions/mean_length"] = row["len"]
        out["completions/min_length"] = float(round(row["len_min"]))
        out["completions/max_length"] = float(round(row["len_max"]))
        out["completions/clipped_ratio"] = row["trunc"]
        term = row["len"] * (1 - 0.5 * row["trunc"]) if row["trunc"] < 0.99 else 0.0
        out["completions/mean_terminated_length"] = term
        out["completions/min_terminated_length"] = float(round(row["len_min"])) if term else 0.0
        out["completions/max_terminated_length"] = float(min(round(row["len_max"]), p.cap - 1)) if term else 0.0
    names = [p.fn, *p.extras]
    for name in names:
        if ver < (0, 17):
            out[f"rewards/{name}"] = row[f"part:{name}"]
        else:
            out[f"rewards/{name}/mean"] = row[f"part:{name}"]
            out[f"rewards/{name}/std"] = row[f"partsd:{name}"]
    out["reward"] = row["reward"]
    out["reward_std"] = row["reward_std"]
    if ver >= (0, 18):
        out["frac_reward_zero_std"] = row["zero_std"]
    if row["kl"] is not None:
        out["kl"] = row["kl"]
    if ver >= (0, 20) and row["ent"] is not None:
        out["entropy"] = row["ent"]
    if ver == (0, 16):
        out["clip_ratio"] = 0.0
    elif ver >= (0, 17):
        c = row["clip"]
        out.update(
            {
                "clip_ratio/low_mean": c / 2,
                "clip_ratio/low_min": 0.0,
                "clip_ratio/high_mean": c / 2,
                "clip_ratio/high_max": 2 * c,
                "clip_ratio/region_mean": c,
            }
        )
    if ver >= (0, 26):
        out["step_time"] = row["time"]
    return out


def trl_eval_row(run: Run, ev: dict, step: int) -> dict:
    out = {"eval_loss": round(float(abs(np.random.default_rng(step).normal(0, 0.01))), 4)}
    if run.plot.margin is not None:  # DPO: the eval pass logs every trainer metric again with eval_
        m = 0.9 * max(0.0, run.plot.margin(step))
        c = run.plot.chosen(step) if run.plot.chosen else 0.0
        out = {
            "eval_loss": round(0.6931 - 0.42 * m / (1 + m), 4),
            "eval_rewards/chosen": c,
            "eval_rewards/rejected": c - m,
            "eval_rewards/margins": m,
        }
    out.update(ev)
    out.update({"eval_runtime": 180.0 + 3 * len(ev), "eval_samples_per_second": 2.7, "eval_steps_per_second": 0.085})
    return out


def dpo_trl_row(row: dict) -> dict:
    return {
        "loss": round(row["dloss"], 4),
        "grad_norm": row["gn"],
        "learning_rate": row["lr"],
        "rewards/chosen": row["chosen"],
        "rewards/rejected": row["rejected"],
        "rewards/accuracies": row["acc"],
        "rewards/margins": row["margins"],
        "logps/chosen": -312.0 + 10 * row["chosen"],
        "logps/rejected": -318.0 + 10 * row["rejected"],
        "logits/chosen": -1.21 - 0.01 * row["margins"],
        "logits/rejected": -1.19,
        "entropy": row["ent"],
        "mean_token_accuracy": 0.71 + 0.005 * row["margins"],
        "num_tokens": row["cum_tokens"],
    }


def trl_history(run: Run, ver: tuple[int, int], spe: float, dpo: bool = False) -> list[dict]:
    """The full log_history of a TRL run: train rows, eval rows (separate dicts), and the summary row if done."""
    hist, cum = [], 0.0
    evals = dict(run.evals)
    for s, row in run.rows:
        cum += row["tokens"] * run.plot.every
        row["cum_tokens"] = cum
        entry = dpo_trl_row(row) if dpo else trl_row(run, row, s, ver, cum)
        entry.update(epoch=round(s / spe, 4), step=s)
        hist.append(entry)
        if s in evals:
            hist.append({**trl_eval_row(run, evals.pop(s), s), "epoch": round(s / spe, 4), "step": s})
    for s, ev in evals.items():
        hist.append({**trl_eval_row(run, ev, s), "epoch": round(s / spe, 4), "step": s})
    if run.finished:
        secs = run.reached * run.plot.sps
        hist.append(
            {
                "epoch": round(run.reached / spe, 4),
                "step": run.reached,
                "total_flos": 0.0,
                "train_loss": float(np.nanmean([h.get("loss", 0.0) for h in hist if "loss" in h])),
                "train_runtime": secs,
                "train_samples_per_second": 0.43,
                "train_steps_per_second": round(1 / run.plot.sps, 3),
            }
        )
    return hist


# --------------------------------------------------------------------------------------------------------- writers


def w_trl_state(
    run: Run,
    folder: Path,
    ver: tuple[int, int],
    save_every: int | None,
    limit: int | None = None,
    top: bool = False,
    spe: float = 0.0,
    dpo: bool = False,
    tb: bool = False,
) -> None:
    """TRL with checkpoint-N/trainer_state.json folders (history up to N) and/or the top-level one at the end."""
    spe = spe or run.planned
    hist = trl_history(run, ver, spe, dpo)
    every = run.plot.every
    keep: set[Path] = set()
    if save_every:
        saves = list(range(save_every, run.reached + 1, save_every))
        if run.finished and run.reached not in saves:
            saves.append(run.reached)
        if limit:
            saves = saves[-limit:]
        for n in saves:
            ck = folder / f"checkpoint-{n}"
            part = [h for h in hist if h["step"] <= n and "train_runtime" not in h]
            dump_json(
                ck / "trainer_state.json",
                trainer_state(part, n, run.planned, every, save_every, run.plot.eval_every or None, round(n / spe, 4)),
            )
            safetensors_stub(ck / "adapter_model.safetensors" if dpo else ck / "model.safetensors")
            write(ck / "config.json", json.dumps({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}))
            (ck / "optimizer.pt").write_bytes(b"PK\x03\x04")
            (ck / "scheduler.pt").write_bytes(b"PK\x03\x04")
            (ck / "rng_state.pth").write_bytes(b"PK\x03\x04")
            (ck / "training_args.bin").write_bytes(b"PK\x03\x04")
            stamp_tree(ck, run.wall(n) + 20)
            keep.add(ck)
    if top:
        dump_json(
            folder / "trainer_state.json",
            trainer_state(
                hist,
                run.reached,
                run.planned,
                every,
                save_every or 500,
                run.plot.eval_every or None,
                round(run.reached / spe, 4),
                training_stop=run.finished,
            ),
        )
        safetensors_stub(folder / "model.safetensors")
        write(folder / "config.json", json.dumps({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}))
        (folder / "training_args.bin").write_bytes(b"PK\x03\x04")
        write(
            folder / "README.md",
            "---\nlibrary_name: transformers\ntags:\n- generated_from_trainer\n- trl\n"
            f"- {'dpo' if dpo else 'grpo'}\n---\n\n# Model Card\n\nThis model was trained with TRL.\n",
        )
    if tb:
        w_hf_tb_events(run, folder, hist)
    stamp_tree(folder, run.t_end, keep)


def w_hf_tb_events(run: Run, folder: Path, hist: list[dict]) -> None:
    """What transformers' TensorBoardCallback writes: train/<key>, eval/<key> (rewrite_logs), step = global_step."""
    t0 = run.wall(0)
    name = time.strftime("%b%d_%H-%M-%S", time.gmtime(t0)) + "_gpu-node-07"
    events = []
    for h in hist:
        if "train_runtime" in h:
            continue
        s = h["step"]
        vals = {}
        for k, v in h.items():
            if k == "step" or v is None:
                continue
            if k.startswith("eval_"):
                vals["eval/" + k[5:]] = v
            else:
                vals["train/" + k] = v
        events.append((run.wall(s), s, vals))
    tb_file(folder / "runs" / name / f"events.out.tfevents.{int(t0)}.gpu-node-07.31337.0", events)


def w_hf_tb(run: Run, folder: Path, ver: tuple[int, int], save_every: int) -> None:
    """HF TensorBoard logs (the full live history) next to the checkpoint folders saved so far."""
    w_trl_state(run, folder, ver, save_every, tb=True)


def py_repr(v: object) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else repr(v)
    return repr(v)


def dict_repr(d: dict) -> str:
    return "{" + ", ".join(f"'{k}': {py_repr(v)}" for k, v in d.items() if v is not None) + "}"


def w_trl_console(
    run: Run, folder: Path, ver: tuple[int, int], dpo: bool = False, name: str = "train.log", spe: float = 0.0
) -> None:
    """`python train_grpo.py 2>&1 | tee train.log`: tqdm bars with the dicts ProgressCallback prints."""
    spe = spe or run.planned
    hist = trl_history(run, ver, spe, dpo)
    lines = [
        f"INFO {iso(run.wall(0) - 200)} Loading checkpoint shards: 100%|██████████| 4/4",
        f"INFO {iso(run.wall(0) - 90)} vLLM engine initialised (gpu_memory_utilization=0.35)",
        f"  0%|          | 0/{run.planned} [00:00<?, ?it/s]",
    ]
    last = 0
    for h in hist:
        s = h["step"]
        if s != last:
            lines.append(tqdm_line(s, run.planned, s * run.plot.sps, run.plot.sps))
            last = s
        lines.append(dict_repr({k: v for k, v in h.items() if k != "step"}))
    if run.finished:
        lines.append(tqdm_line(run.planned, run.planned, run.reached * run.plot.sps, run.plot.sps))
        lines.append(f"Saving model checkpoint to outputs/{folder.name}")
    write(folder / name, "\n".join(lines) + "\n")
    stamp_tree(folder, run.t_end)


def w_unsloth_notebook(run: Run, folder: Path, examples: int = 7473) -> None:
    """The cell output of an Unsloth GRPO notebook saved as text: banners, the progress line and the log table."""
    p = run.plot
    ver = (0, 14)
    hist = trl_history(run, ver, examples / p.prompts)
    cols = ["reward", "reward_std", "completion_length", "kl", *[f"rewards/{n}" for n in [*p.extras, p.fn]]]
    head = [
        "==((====))==  Unsloth 2025.2.12: Fast Qwen2 patching. Transformers: 4.48.3.",
        "   \\\\   /|    GPU: Tesla T4. Max memory: 14.741 GB. Platform: Linux.",
        "O^O/ \\_/ \\    Torch: 2.5.1+cu124. CUDA: 7.5. CUDA Toolkit: 12.4. Triton: 3.1.0",
        "\\        /    Bfloat16 = FALSE. FA [Xformers = 0.0.28.post3. FA2 = False]",
        ' "-____-"     Free Apache license: http://github.com/unslothai/unsloth',
        "Unsloth: vLLM loading unsloth/qwen2.5-3b-instruct-unsloth-bnb-4bit with actual GPU utilization = 59.6%",
        "==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1",
        f"   \\\\   /|    Num examples = {examples:,} | Num Epochs = 1",
        f"O^O/ \\_/ \\    Batch size per device = {p.group} | Gradient Accumulation steps = 1",
        f"\\        /    Total batch size = {p.group} | Total steps = {run.planned}",
        ' "-____-"     Number of trainable parameters = 29,933,568',
        "",
        f"[{run.reached}/{run.planned} {hms(run.reached * p.sps)} < {hms((run.planned - run.reached) * p.sps)}, "
        f"{1 / p.sps:.2f} it/s, Epoch {run.reached * p.prompts / examples:.2f}/1]",
        "Step\tTraining Loss\t" + "\t".join(cols),
    ]
    body = []
    for h in hist:
        if "reward" not in h:
            continue
        body.append("\t".join([str(h["step"]), f"{h['loss']:.6f}", *[f"{h.get(c, 0.0):.6f}" for c in cols]]))
    write(folder / "grpo_notebook_output.txt", "\n".join(head + body) + "\n")
    stamp_tree(folder, run.t_end)


# verl ------------------------------------------------------------------------------------------------------------


def verl_row(run: Run, row: dict, s: int, ver: str, spe: float) -> dict:
    p = run.plot
    score = row["reward"]
    ent_key = "actor/entropy_loss" if ver == "0.3" else "actor/entropy"
    out = {
        "actor/pg_loss": row["loss"] if not math.isnan(row["gn"]) else NAN,
        "actor/pg_clipfrac": row["clip"] if not math.isnan(row["gn"]) else NAN,
        "actor/ppo_kl": (1e-5 * row["clip"] * 10) if not math.isnan(row["gn"]) else NAN,
        "actor/grad_norm": row["gn"],
        "actor/lr": row["lr"],
    }
    if ver != "0.3":
        out["actor/pg_clipfrac_lower"] = 0.0 if not math.isnan(row["gn"]) else NAN
    if row["ent"] is not None:
        out[ent_key] = row["ent"]
    if row["kl"] is not None:
        out["actor/kl_loss"] = row["kl"]
        out["actor/kl_coef"] = 0.001
    top = p.weight * (1 + len(p.extras))
    out.update(
        {
            "critic/score/mean": score,
            "critic/score/max": top if score > 0 else 0.0,
            "critic/score/min": 0.0,
            "critic/rewards/mean": score,
            "critic/rewards/max": top if score > 0 else 0.0,
            "critic/rewards/min": 0.0,
            "critic/advantages/mean": 0.0 if row["zero_std"] == 1 else float(np.random.default_rng(s).normal(0, 0.004)),
            "critic/advantages/max": 0.0 if row["zero_std"] == 1 else 2.47,
            "critic/advantages/min": 0.0 if row["zero_std"] == 1 else -2.47,
            "critic/returns/mean": 0.0
            if row["zero_std"] == 1
            else float(np.random.default_rng(s + 1).normal(0, 0.004)),
            "response_length/mean": row["len"],
            "response_length/max": row["len_max"],
            "response_length/min": row["len_min"],
            "response_length/clip_ratio": row["trunc"],
            "prompt_length/mean": 182.4,
            "prompt_length/max": 412.0,
            "prompt_length/min": 61.0,
            "prompt_length/clip_ratio": 0.0,
        }
    )
    gen = 0.62 * row["time"]
    out.update(
        {
            "timing_s/gen": gen,
            "timing_s/old_log_prob": 0.08 * row["time"],
            "timing_s/ref": 0.07 * row["time"],
            "timing_s/adv": 0.004,
            "timing_s/update_actor": 0.21 * row["time"],
            "timing_s/step": row["time"],
            "perf/total_num_tokens": int(row["tokens"]),
            "perf/time_per_step": row["time"],
            "perf/throughput": row["tokens"] / row["time"] / 8,
            "perf/max_memory_allocated_gb": 61.3,
            "training/global_step": s,
            "training/epoch": int(s // spe),
        }
    )
    return out


def fmt_np(v: object, np2: bool) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"np.int64({v})" if np2 else str(v)
    f = float(v)  # type: ignore[arg-type]
    text = "nan" if math.isnan(f) else repr(f)
    return f"np.float64({text})" if np2 else text


def w_verl_console(
    run: Run, folder: Path, ver: str = "0.5", np2: bool = False, spe: float = 0.0, name: str = "main_ppo.log"
) -> None:
    """verl's LocalLogger on stdout (`step:N - key:value - ...`), mixed with Ray/vLLM lines, tee'd to a file."""
    spe = spe or run.planned
    evals = dict(run.evals)
    pre = "(TaskRunner pid=48213) "
    lines = [
        f"{iso(run.wall(0) - 400)},002\tINFO worker.py:1832 -- Connected to Ray cluster.",
        f"{pre}Using dataset class: RLHFDataset",
        f"{pre}Size of train dataloader: {int(spe)}",
        f"{pre}Total training steps: {run.planned}",
    ]
    if 0 in evals:
        val = evals.pop(0)
        lines.append(f"{pre}Initial validation metrics: {dict_repr(val)}")
        lines.append(pre + "step:0 - " + " - ".join(f"{k}:{fmt_np(v, np2)}" for k, v in val.items()))
    for i, (s, row) in enumerate(run.rows):
        met = verl_row(run, row, s, ver, spe)
        if s in evals:
            met = {**evals.pop(s), **met, "timing_s/testing": 61.5}
        lines.append(pre + f"step:{s} - " + " - ".join(f"{k}:{fmt_np(v, np2)}" for k, v in met.items()))
        if i % 97 == 13:
            lines.append(f"{pre}INFO {iso(run.wall(s))} [vllm] Sleep mode freed 41.37 GiB memory, 12.60 GiB remains.")
        if i % 10 == 0:
            lines.append(pre + tqdm_line(s, run.planned, s * run.plot.sps, run.plot.sps, "Training Progress: "))
    if run.finished:
        last = run.evals[-1][1] if run.evals else {}
        lines.append(f"{pre}Final validation metrics: {dict_repr(last)}")
    write(folder / name, "\n".join(lines) + "\n")
    stamp_tree(folder, run.t_end)


def verl_config(run: Run, project: str, exp: str, spe: float, extra: dict | None = None) -> str:
    cfg = {
        "data": {"train_batch_size": run.plot.prompts, "max_response_length": run.plot.cap},
        "actor_rollout_ref": {
            "rollout": {"n": run.plot.group, "temperature": 1.0},
            "actor": {"optim": {"lr": float(run.plot.lr(run.reached))}},
        },
        "algorithm": {"adv_estimator": "grpo"},
        "trainer": {
            "project_name": project,
            "experiment_name": exp,
            "total_epochs": max(1, round(run.planned / spe)),
            "total_training_steps": run.planned,
            "test_freq": run.plot.eval_every or -1,
            "save_freq": -1,
            "logger": ["console", "file"],
        },
    }
    for k, v in (extra or {}).items():
        cfg[k].update(v)
    return yaml_text(cfg) + "\n"


def w_verl_jsonl(run: Run, folder: Path, project: str, exp: str, spe: float = 0.0, extra: dict | None = None) -> None:
    """verl's FileLogger: {"step": N, "data": {...}} per line, NaN written as null (orjson)."""
    spe = spe or run.planned
    evals = dict(run.evals)
    lines = []
    if 0 in evals:
        lines.append(json.dumps({"step": 0, "data": evals.pop(0)}))
    for s, row in run.rows:
        met = verl_row(run, row, s, "0.5", spe)
        if extra:
            met.update({k: f(s) for k, f in extra.items()})
        if s in evals:
            met = {**evals.pop(s), **met, "timing_s/testing": 88.0}
        met = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in met.items()}
        lines.append(json.dumps({"step": s, "data": met}))
    write(folder / project / f"{exp}.jsonl", "\n".join(lines) + "\n")
    write(folder / "config.yaml", verl_config(run, project, exp, spe))
    stamp_tree(folder, run.t_end)
    stamp(folder / "config.yaml", run.wall(0) - 300)


def w_verl_tb(run: Run, folder: Path, project: str, exp: str, spe: float = 0.0) -> None:
    spe = spe or run.planned
    evals = dict(run.evals)
    events = []
    if 0 in evals:
        events.append((run.wall(0), 0, evals.pop(0)))
    for s, row in run.rows:
        met = verl_row(run, row, s, "0.5", spe)
        if s in evals:
            met.update(evals.pop(s))
        events.append((run.wall(s), s, met))
    t0 = int(run.wall(0))
    tb_file(folder / "tensorboard_log" / project / exp / f"events.out.tfevents.{t0}.worker-0.7781.0", events)
    stamp_tree(folder, run.t_end)


# OpenRLHF ---------------------------------------------------------------------------------------------------------


def openrlhf_row(run: Run, row: dict, s: int) -> dict:
    p = run.plot
    out = {
        "policy_loss": row["loss"],
        "actor_lr": row["lr"],
        "actor_grad_norm": row["gn"],
        "reward": row["reward"],
        "rollout/reward_mean": row["reward"],
        "rollout/reward_std": row["reward_std"],
        "group_reward_std": row["group_std"],
        "return": row["reward"] - (0.01 * row["kl"] if row["kl"] else 0),
    }
    if row["kl"] is not None:
        out["kl"] = row["kl"]
        out["logprobs_diff"] = -row["kl"] * 0.9
    out.update(
        {
            "ppo_clip_ratio": row["clip"],
            "ppo_kl": 1e-4 * (1 + row["clip"] * 30),
            "vllm_kl": 6e-4,
            "response_length": row["len"],
            "total_length": row["len"] + 190.0,
            "truncated": row["trunc"],
            "rollout/response_length_mean": row["len"],
            "rollout/truncated_rate": row["trunc"],
            "rollout/num_samples": p.prompts * p.group,
            "timing/generation": 0.55 * row["time"],
            "timing/make_experience": 0.15 * row["time"],
            "timing/ppo_train": 0.27 * row["time"],
            "timing/broadcast": 0.03 * row["time"],
            "timing/step_total": row["time"],
        }
    )
    return out


def openrlhf_eval(ds: str, ev: dict, run: Run, s: int) -> dict:
    out = {}
    for k, v in ev.items():
        out[k] = v
    out[f"eval_{ds}_response_length_mean"] = run.plot.length(s)
    out["eval_num_samples"] = 500
    return out


def w_openrlhf_tb(run: Run, folder: Path, ds: str, run_name: str) -> None:
    evals = dict(run.evals)
    events = []
    for s, row in run.rows:
        vals = {f"train/{k}": v for k, v in openrlhf_row(run, row, s).items()}
        vals["train/global_step"] = s
        events.append((run.wall(s), s, vals))
        if s in evals:
            events.append(
                (run.wall(s) + 40, s, {f"eval/{k}": v for k, v in openrlhf_eval(ds, evals.pop(s), run, s).items()})
            )
    for s, ev in evals.items():
        events.insert(0, (run.wall(s), s, {f"eval/{k}": v for k, v in openrlhf_eval(ds, ev, run, s).items()}))
    events.sort(key=lambda e: e[0])
    t0 = int(run.wall(0))
    tb_file(folder / "logs" / run_name / f"events.out.tfevents.{t0}.h100-node-3.5120.0", events)
    stamp_tree(folder, run.t_end)


def w_openrlhf_console(run: Run, folder: Path, ds: str, save_path: str) -> None:
    evals = dict(run.evals)
    lines = [
        f"[{iso(run.wall(0) - 600)},114] [INFO] [real_accelerator.py:222:get_accelerator] Setting ds_accelerator to cuda",
        f"{iso(run.wall(0) - 300)} INFO ppo_trainer: num_update_steps_per_episodes={run.planned}; max_steps={run.planned}",
    ]

    def ev_line(s: int, ev: dict) -> str:
        return f"{iso(run.wall(s))} INFO Evaluation completed in 34.81s, global_step {s}, eval_metrics: " + dict_repr(
            openrlhf_eval(ds, ev, run, s)
        )

    if 0 in evals:
        lines.append(ev_line(0, evals.pop(0)))
    for i, (s, row) in enumerate(run.rows):
        lines.append(f"{iso(run.wall(s))} INFO ✨ Global step {s}: " + dict_repr(openrlhf_row(run, row, s)))
        if i % 20 == 0:
            lines.append(tqdm_line(s, run.planned, s * run.plot.sps, run.plot.sps, "Episode [1/1]: "))
        if s in evals:
            lines.append(ev_line(s, evals.pop(s)))
    if run.finished:
        lines.append(tqdm_line(run.planned, run.planned, run.reached * run.plot.sps, run.plot.sps, "Episode [1/1]: "))
        lines.append(f"{iso(run.t_end)} INFO Saving model to {save_path} (final)")
    write(folder / "train_grpo_ray.log", "\n".join(lines) + "\n")
    stamp_tree(folder, run.t_end)


# NeMo-RL -----------------------------------------------------------------------------------------------------------


def nemo_row(run: Run, row: dict) -> dict:
    out = {
        "train/reward": row["reward"],
        "train/loss": row["loss"] if row["any_signal"] or row["gn"] else 0.0,
        "train/grad_norm": row["gn"],
        "train/lr": row["lr"],
        "train/wd": 0.01,
        "train/kl_penalty": row["kl"] if row["kl"] is not None else 0.0,
    }
    if row["ent"] is not None:
        out["train/approx_entropy"] = row["ent"]
    out.update(
        {
            "train/probs_ratio": 1.0 + 0.002 * row["clip"],
            "train/probs_ratio_clamped": 1.0,
            "train/token_mult_prob_error": 1.0 + 0.004 * (1 + row["clip"]),
            "train/baseline_reward/pct_0": row["pct0"],
            "train/baseline_reward/pct_1": row["pct1"],
            "train/baseline_reward/pct_mixed": max(0.0, 100 - row["pct0"] - row["pct1"]),
            "train/mean_gen_tokens_per_sample": row["len"],
            "train/max_gen_tokens_per_sample": row["len_max"],
            "train/truncation_rate": row["trunc"],
            "train/natural_termination_rate": 1 - row["trunc"],
            "train/num_valid_samples": float(run.plot.prompts * run.plot.group),
            "timing/train/total_step_time": row["time"],
            "timing/train/generation": 0.58 * row["time"],
            "timing/train/policy_training": 0.26 * row["time"],
            "timing/train/policy_and_reference_logprobs": 0.1 * row["time"],
        }
    )
    return out


def w_nemo_tb(run: Run, folder: Path, exp: str = "exp_003", cfg: dict | None = None) -> None:
    evals = dict(run.evals)
    events = []
    for s, row in run.rows:
        events.append((run.wall(s), s, nemo_row(run, row)))
        if s in evals:
            ev = evals.pop(s)
            events.append((run.wall(s) + 50, s, {**ev, "validation/avg_length": run.plot.length(s) * 0.95}))
    for s, ev in evals.items():
        events.insert(0, (run.wall(s), s, {**ev, "validation/avg_length": run.plot.length(s) * 0.95}))
    events.sort(key=lambda e: (e[0], e[1]))
    t0 = int(run.wall(0))
    tb_file(folder / "logs" / exp / "tensorboard" / f"events.out.tfevents.{t0}.dgx-a100-02.2207.0", events)
    base = {
        "grpo": {
            "num_prompts_per_step": run.plot.prompts,
            "num_generations_per_prompt": run.plot.group,
            "max_num_steps": run.planned,
            "val_period": run.plot.eval_every,
            "val_at_start": True,
        },
        "policy": {"model_name": "Qwen/Qwen2.5-1.5B", "max_total_sequence_length": run.plot.cap + 512},
        "logger": {"log_dir": "logs", "tensorboard_enabled": True, "wandb_enabled": False},
    }
    for k, v in (cfg or {}).items():
        base.setdefault(k, {}).update(v)
    write(folder / "grpo_math_1B.yaml", yaml_text(base) + "\n")
    stamp_tree(folder, run.t_end)
    stamp(folder / "grpo_math_1B.yaml", run.wall(0) - 900)


# MLflow, Trackio, W&B exports ---------------------------------------------------------------------------------------


def trl_flat(run: Run, ver: tuple[int, int]) -> list[tuple[int, dict]]:
    """(step, {raw TRL key: value}) for every train and eval entry, as HF's MLflow callback logs them."""
    out = []
    for h in trl_history(run, ver, run.planned):
        if "train_runtime" in h:
            continue
        out.append((h["step"], {k: v for k, v in h.items() if k != "step" and v is not None}))
    return out


def verl_flat(run: Run, spe: float) -> list[tuple[int, dict]]:
    evals = dict(run.evals)
    out = []
    if 0 in evals:
        out.append((0, evals.pop(0)))
    for s, row in run.rows:
        met = verl_row(run, row, s, "0.5", spe)
        if s in evals:
            met.update(evals.pop(s))
        out.append((s, met))
    return out


def mlflow_key(k: str) -> str:
    return k.replace("@", "_at_")


def w_mlflow_files(run: Run, folder: Path, source: str, params: dict, run_name: str) -> None:
    """MLflow's file store: mlruns/<exp>/<run>/metrics/<key, nested at '/'> with `ts value step` lines."""
    flat = trl_flat(run, (0, 24)) if source == "trl" else verl_flat(run, run.planned)
    exp_id, run_id = "418733062415", uid(run_name)
    base = folder / "mlruns" / exp_id / run_id
    series: dict[str, list[str]] = {}
    for s, met in flat:
        ts = int((run.wall(s) + (40 if any("val" in k or "eval" in k for k in met) else 0)) * 1000)
        for k, v in met.items():
            val = "nan" if isinstance(v, float) and math.isnan(v) else repr(float(v))
            series.setdefault(mlflow_key(k), []).append(f"{ts} {val} {s}")
    for k, lines in series.items():
        write(base / "metrics" / k, "\n".join(lines) + "\n")
    for k, v in params.items():
        write(base / "params" / k, str(v))
    write(base / "tags" / "mlflow.runName", run_name)
    write(base / "tags" / "mlflow.user", "rlteam")
    status = 3 if run.finished else 1
    end = int(run.t_end * 1000) if run.finished else "null"
    write(
        base / "meta.yaml",
        f"artifact_uri: file:///data/mlruns/{exp_id}/{run_id}/artifacts\nend_time: {end}\nentry_point_name: ''\n"
        f"experiment_id: '{exp_id}'\nlifecycle_stage: active\nrun_id: {run_id}\nrun_name: {run_name}\n"
        f"run_uuid: {run_id}\nsource_name: ''\nsource_type: 4\nsource_version: ''\n"
        f"start_time: {int(run.wall(0) * 1000)}\nstatus: {status}\ntags: []\nuser_id: rlteam\n",
    )
    write(
        folder / "mlruns" / exp_id / "meta.yaml",
        f"artifact_location: file:///data/mlruns/{exp_id}\ncreation_time: {int(run.wall(0) * 1000) - 86400000}\n"
        f"experiment_id: '{exp_id}'\nlast_update_time: {int(run.wall(0) * 1000)}\nlifecycle_stage: active\n"
        f"name: {params.get('experiment', 'grpo')}\n",
    )
    stamp_tree(folder, run.t_end)


def w_mlflow_db(run: Run, folder: Path, params: dict, run_name: str) -> None:
    """MLflow's SQL store (sqlite:///mlflow.db, the default since MLflow 3.7), HF callback raw keys."""
    flat = trl_flat(run, (1, 2))
    path = folder / "mlflow.db"
    folder.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL PRIMARY KEY);
        CREATE TABLE experiments (experiment_id INTEGER PRIMARY KEY, name VARCHAR(256) NOT NULL UNIQUE,
            artifact_location VARCHAR(256), lifecycle_stage VARCHAR(32), creation_time BIGINT, last_update_time BIGINT);
        CREATE TABLE runs (run_uuid VARCHAR(32) NOT NULL PRIMARY KEY, name VARCHAR(250), source_type VARCHAR(20),
            source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status VARCHAR(9),
            start_time BIGINT, end_time BIGINT, deleted_time BIGINT, source_version VARCHAR(50),
            lifecycle_stage VARCHAR(20), artifact_uri VARCHAR(200), experiment_id INTEGER);
        CREATE TABLE metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT NOT NULL,
            run_uuid VARCHAR(32) NOT NULL, step BIGINT DEFAULT 0 NOT NULL, is_nan BOOLEAN DEFAULT 0 NOT NULL,
            PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan));
        CREATE TABLE latest_metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT,
            step BIGINT NOT NULL, is_nan BOOLEAN NOT NULL, run_uuid VARCHAR(32) NOT NULL, PRIMARY KEY (key, run_uuid));
        CREATE TABLE params (key VARCHAR(250) NOT NULL, value VARCHAR(8000) NOT NULL, run_uuid VARCHAR(32) NOT NULL,
            PRIMARY KEY (key, run_uuid));
        CREATE TABLE tags (key VARCHAR(250) NOT NULL, value VARCHAR(8000), run_uuid VARCHAR(32) NOT NULL,
            PRIMARY KEY (key, run_uuid));
    """)
    run_id = uid(run_name + "db")
    con.execute("INSERT INTO alembic_version VALUES ('1b5f0d9ad7c1')")
    con.execute(
        "INSERT INTO experiments VALUES (0, 'Default', 'mlflow-artifacts:/0', 'active', ?, ?)",
        (int(run.wall(0) * 1000) - 5 * 86400000,) * 2,
    )
    con.execute(
        "INSERT INTO experiments VALUES (1, ?, 'mlflow-artifacts:/1', 'active', ?, ?)",
        (params.get("experiment", "grpo"), int(run.wall(0) * 1000) - 86400000, int(run.wall(0) * 1000)),
    )
    con.execute(
        "INSERT INTO runs VALUES (?, ?, 'LOCAL', '', '', 'rlteam', ?, ?, ?, NULL, '', 'active', ?, 1)",
        (
            run_id,
            run_name,
            "FINISHED" if run.finished else "RUNNING",
            int(run.wall(0) * 1000),
            int(run.t_end * 1000) if run.finished else None,
            f"mlflow-artifacts:/1/{run_id}/artifacts",
        ),
    )
    latest: dict[str, tuple] = {}
    for s, met in flat:
        ts = int(run.wall(s) * 1000)
        for k, v in met.items():
            nan = isinstance(v, float) and math.isnan(v)
            rec = (k, 0.0 if nan else float(v), ts, run_id, s, int(nan))
            con.execute("INSERT OR IGNORE INTO metrics VALUES (?, ?, ?, ?, ?, ?)", rec)
            latest[k] = (k, rec[1], ts, s, int(nan), run_id)
    con.executemany("INSERT INTO latest_metrics VALUES (?, ?, ?, ?, ?, ?)", list(latest.values()))
    con.executemany("INSERT INTO params VALUES (?, ?, ?)", [(k, str(v), run_id) for k, v in params.items()])
    con.executemany(
        "INSERT INTO tags VALUES (?, ?, ?)", [("mlflow.runName", run_name, run_id), ("mlflow.user", "rlteam", run_id)]
    )
    con.commit()
    con.close()
    stamp_tree(folder, run.t_end)


def w_trackio(run: Run, folder: Path, project: str, run_name: str, ver: tuple[int, int]) -> None:
    """Trackio's per-project SQLite file, keys as HF's rewrite_logs gives them (train/..., eval/...)."""
    path = folder / "trackio" / f"{project}.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT, run_name TEXT,
            step INTEGER, metrics TEXT);
        CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, run_name TEXT, config TEXT,
            created_at TEXT);
        CREATE TABLE system_metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, timestamp TEXT,
            run_name TEXT, metrics TEXT);
    """)
    rid = uid(run_name)[:12]
    cfg = {
        "max_steps": run.planned,
        "learning_rate": 1e-6,
        "num_generations": run.plot.group,
        "per_device_train_batch_size": 8,
        "logging_steps": run.plot.every,
        "eval_steps": run.plot.eval_every,
        "beta": 0.0,
        "_Created": iso(run.wall(0) - 60, "T"),
    }
    con.execute(
        "INSERT INTO configs (run_id, run_name, config, created_at) VALUES (?, ?, ?, ?)",
        (rid, run_name, json.dumps(cfg), iso(run.wall(0) - 60, "T")),
    )
    for s, met in trl_flat(run, ver):
        vals = {}
        for k, v in met.items():
            key = ("eval/" + k[5:]) if k.startswith("eval_") else ("train/" + k)
            vals[key] = "NaN" if isinstance(v, float) and math.isnan(v) else v
        vals["train/global_step"] = s
        con.execute(
            "INSERT INTO metrics (run_id, timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)",
            (rid, iso(run.wall(s), "T"), run_name, s, json.dumps(vals)),
        )
        if s % 50 == 0:
            sysm = {"gpu/0/utilization": 87.0, "gpu/0/allocated_memory": 61.2, "gpu/0/power": 540.0}
            con.execute(
                "INSERT INTO system_metrics (run_id, timestamp, run_name, metrics) VALUES (?, ?, ?, ?)",
                (rid, iso(run.wall(s), "T"), run_name, json.dumps(sysm)),
            )
    con.commit()
    con.close()
    stamp_tree(folder, run.t_end)


def w_wandb_csv(run: Run, folder: Path, display: str, panels: dict[str, list[str]], ver: tuple[int, int]) -> None:
    """Panel exports from the W&B UI (x-axis train/global_step), one CSV per panel, plus the run's config.yaml."""
    flat = trl_flat(run, ver)
    for fname, keys in panels.items():
        rows: dict[int, dict] = {}
        for s, met in flat:
            for k in keys:
                raw = ("eval_" + k[5:]) if k.startswith("eval/") else k.removeprefix("train/")
                if raw in met:
                    rows.setdefault(s, {})[k] = met[raw]
        buf = io.StringIO()
        cw = csv.writer(buf, quoting=csv.QUOTE_ALL)
        header = ["train/global_step"]
        for k in keys:
            header += [f"{display} - {k}", f"{display} - {k}__MIN", f"{display} - {k}__MAX"]
        cw.writerow(header)
        for s in sorted(rows):
            line: list = [s]
            for k in keys:
                v = rows[s].get(k)
                line += ["", "", ""] if v is None else [v, v, v]
            cw.writerow(line)
        write(folder / fname, buf.getvalue())
    write(
        folder / "config.yaml",
        "_wandb:\n  value:\n    cli_version: 0.19.8\n    python_version: 3.11.10\n"
        f"max_steps:\n  value: {run.planned}\nlogging_steps:\n  value: {run.plot.every}\n"
        f"eval_steps:\n  value: {run.plot.eval_every}\nbeta:\n  value: 0.02\nlearning_rate:\n  value: 1.0e-06\n"
        f"num_generations:\n  value: {run.plot.group}\n",
    )
    stamp_tree(folder, run.t_end)
    stamp(folder / "config.yaml", run.wall(0))


# hand-written loops -------------------------------------------------------------------------------------------------


def w_rasbt_csv(run: Run, folder: Path) -> None:
    """reasoning-from-scratch 7_5_plus_kl.py: one CRLF row per step, eval_acc (percent) on step 1 and every 50."""
    evals = dict(run.evals)
    rng = np.random.default_rng(run.reached)
    header = (
        "step,total_steps,loss,kl_loss,policy_ratio,reward_avg,tokens_per_sec,avg_response_len,adv_avg,"
        "adv_std,entropy_avg,eval_acc"
    )
    lines, txt = [header], []
    for s, row in run.rows:
        flat = row["zero_std"] == 1.0
        kl = row["kl"] * (1 + 0.4 * rng.normal()) if row["kl"] is not None else 0.0
        loss = 0.0 if flat else float(rng.normal(0, 55)) + kl
        ratio = "" if flat else f"{1 + rng.normal(0, 0.004):.6f}"
        adv_std = 0.0 if flat else 0.9999
        ev = evals.pop(s, None)
        if s == 1 and 0 in evals:
            ev = evals.pop(0)
        ev_txt = "" if ev is None else f"{100 * ev['eval_acc']:.1f}"
        lines.append(
            f"{s},{run.planned},{loss:.4f},{kl:.6f},{ratio},{row['reward']:.4f},"
            f"{38.0 * (1 + 0.05 * rng.normal()):.2f},{row['len']:.1f},{0.0 if flat else 1e-9:.6f},"
            f"{adv_std:.4f},{row['ent']:.4f},{ev_txt}"
        )
        txt.append(
            f"[Step {s}/{run.planned}] loss={loss:.4f} reward_avg={row['reward']:.3f} "
            f"avg_response_len={row['len']:.1f}" + (f" eval_acc={ev_txt}" if ev_txt else "")
        )
    write(folder / "logs" / "7_5_plus_kl_metrics.csv", "\r\n".join(lines) + "\r\n", newline="")
    write(folder / "logs" / "7_5_plus_kl_metrics.txt", "\n".join(txt) + "\n")
    stamp_tree(folder, run.t_end)


def w_custom_csv(run: Run, folder: Path, eval_key: str) -> None:
    """A hand-written GRPO loop's CSV: one row per step, eval column filled on eval steps only."""
    evals = dict(run.evals)
    head = [
        "step",
        "reward_mean",
        "reward_std",
        "frac_groups_all_same",
        "kl",
        "entropy",
        "resp_len",
        "lr",
        "grad_norm",
        eval_key,
    ]
    lines = [",".join(head)]
    for s, row in run.rows:
        ev = evals.pop(s, None)
        lines.append(
            ",".join(
                [
                    str(s),
                    f"{row['reward']:.4f}",
                    f"{row['reward_std']:.4f}",
                    f"{row['zero_std']:.3f}",
                    f"{row['kl']:.5f}",
                    f"{row['ent']:.4f}",
                    f"{row['len']:.1f}",
                    f"{row['lr']:.3g}",
                    f"{row['gn']:.4f}",
                    "" if ev is None else f"{ev[eval_key]:.4f}",
                ]
            )
        )
    write(folder / "metrics.csv", "\n".join(lines) + "\n")
    write(
        folder / "config.json",
        json.dumps(
            {
                "model": "Qwen/Qwen2.5-Math-1.5B",
                "total_steps": run.planned,
                "prompts_per_step": run.plot.prompts,
                "group_size": run.plot.group,
                "lr": 5e-7,
                "kl_coef": 0.02,
                "eval_every": run.plot.eval_every,
                "eval_problems": 80,
            },
            indent=2,
        ),
    )
    stamp_tree(folder, run.t_end)
    stamp(folder / "config.json", run.wall(0) - 120)


def w_custom_jsonl(run: Run, folder: Path) -> None:
    """A hand-written loop's JSONL: train records every step, eval records in the same file."""
    evals = dict(run.evals)
    lines = []
    for s, row in run.rows:
        lines.append(
            json.dumps(
                {
                    "step": s,
                    "split": "train",
                    "time": round(run.wall(s), 1),
                    "reward": round(row["reward"], 5),
                    "reward_std": round(row["reward_std"], 5),
                    "resp_len": round(row["len"], 1),
                    "trunc_frac": round(row["trunc"], 4),
                    "kl": round(row["kl"], 6),
                    "entropy": round(row["ent"], 5),
                    "grad_norm": round(row["gn"], 5),
                    "lr": row["lr"],
                }
            )
        )
        if s in evals:
            ev = evals.pop(s)
            lines.append(
                json.dumps(
                    {
                        "step": s,
                        "split": "eval",
                        "time": round(run.wall(s) + 70, 1),
                        **{k: round(v, 4) for k, v in ev.items()},
                        "n": 500,
                    }
                )
            )
    write(folder / "log.jsonl", "\n".join(lines) + "\n")
    write(
        folder / "config.json",
        json.dumps(
            {
                "total_steps": run.planned,
                "group_size": run.plot.group,
                "prompts_per_step": run.plot.prompts,
                "max_new_tokens": run.plot.cap,
                "eval_every": run.plot.eval_every,
            },
            indent=2,
        ),
    )
    stamp_tree(folder, run.t_end)
    stamp(folder / "config.json", run.wall(0) - 60)


# --------------------------------------------------------------------------------------------------------- the cases


@dataclass
class Spec:
    name: str
    plot: Plot
    write: Callable
    seed: int
    steps: tuple[int, int]
    verdict: str  # ok | stop | conv | rb | sor
    tags: str
    why: str
    onset: int | None = None

    def window(self) -> tuple[int, int, float, float, int]:
        """(lo, hi, best level, sd, best step) from the noise-free headline levels."""
        pool = Pool(np.random.default_rng(self.seed), self.plot.spread)
        lv = self.plot.headline_level()
        steps = self.plot.headline_steps(self.steps[0])
        best_s = max(steps, key=lv)
        best = lv(best_s)
        sd = self.plot.headline_sd(pool, best_s)
        good = [s for s in steps if lv(s) >= best - sd]
        lo = good[0]
        hi = max(s for s in good if self.onset is None or s <= self.onset)
        return lo, hi, best, sd, best_s

    def labels(self) -> dict:
        if self.verdict == "ok":
            return HEALTHY
        if self.verdict == "conv":
            return converged()
        if self.verdict == "stop":
            return stop(self.onset)
        lo, hi, *_ = self.window()
        return (rollback if self.verdict == "rb" else stop_or_rollback)(lo, hi, self.onset)

    def case(self) -> Case:
        return Case(self.name, self.plot, self.write, self.seed, self.steps, self.labels(), self.tags, self.why)


GSM = "val-core/openai/gsm8k/acc/mean@1"
ACC = "eval_rewards/accuracy_reward/mean"

SPECS = [
    # ---------------------------------------------------------------------------------------- healthy look-alikes
    Spec(
        "ok-unsloth-notebook-table-correctness-exactly-0-until-90-then-lifts-at-250-of-500",
        Plot(
            solve=lin((0, 0.0), (90, 0.0), (130, 0.08), (250, 0.36)),
            weight=2.0,
            fn="correctness_reward_func",
            extras={
                "xmlcount_reward_func": (lin((0, 0.10), (80, 0.80), (250, 0.88)), 0.5),
                "soft_format_reward_func": (lin((0, 0.02), (70, 0.85), (250, 0.95)), 0.5),
                "strict_format_reward_func": (lin((0, 0.0), (100, 0.0), (250, 0.40)), 0.5),
                "int_reward_func": (lin((0, 0.20), (90, 0.75), (250, 0.90)), 0.5),
            },
            prompts=1,
            group=6,
            spread=1.2,
            kl=lin((0, 0.0), (100, 0.0009), (250, 0.0048)),
            length=lin((0, 190), (90, 115), (250, 165)),
            cap=200,
            lr=warm_cos(5e-6, 50, 500),
            gn=const(0.3),
            sps=17,
            age=3,
        ),
        writer(w_unsloth_notebook)(),
        2401,
        (250, 500),
        "ok",
        "healthy unsloth notebook-table trl014-keys exact-zero-reward lift-off format-first",
        "Unsloth GSM8K GRPO notebook (Qwen2.5-3B, one prompt x 6 completions per step, TRL 0.14-era keys, output "
        "saved as text). The correctness reward (2.0 when right) only reads answers inside <answer> tags, so it is "
        "exactly 0.0 on every step until the model adopts the tags (soft format 0.01 -> 0.43 of its 0.5 by step "
        "70, xmlcount close behind). From ~90 correctness starts paying: solve rate 0 -> 0.36 by step 250 (reward "
        "2 x 0.36 = 0.72 on average, still climbing), total reward ~0.3 -> ~2.3. 250 of 500 steps done, written "
        "3 minutes ago. Exact zeros early are a format gate, not a dead task; the lift-off is under way: continue.",
    ),
    Spec(
        "ok-trl019-hf-tb-hard-task-85pct-flat-groups-reward-0.03-until-200-then-0.11-at-440-of-2000",
        Plot(
            solve=lin((0, 0.03), (200, 0.031), (300, 0.06), (440, 0.11)),
            prompts=16,
            group=8,
            spread=1.8,
            every=10,
            ent=None,
            kl=None,
            length=lin((0, 700), (440, 820)),
            cap=2048,
            lr=warm_lin(1e-6, 100, 2000),
            gn=lin((0, 0.05), (440, 0.09)),
            sps=45,
            age=2,
        ),
        writer(w_hf_tb)((0, 19), 200),
        2402,
        (440, 2000),
        "ok",
        "healthy hf-tensorboard trl019 checkpoint-folders slow-lift-off sparse-reward zero-std-high",
        "TRL 0.19 GRPO on competition math (beta 0, so no kl; no entropy key in 0.19), TensorBoard via "
        "report_to, checkpoint-200 and checkpoint-400 on disk (max_steps 2000). Reward sits at 0.03 for 200 steps "
        "with ~85 % of groups all-wrong (frac_reward_zero_std ~0.85), then lifts: 0.06 by 300, 0.11 by 440 (each "
        "logged value averages 10 batches of 128 rollouts, sd <= 0.014, so the rise is 6+ sd). Zero-std share "
        "falls with it. Live (2 minutes ago), 22 % of budget used. A sparse reward that climbs: continue.",
    ),
    Spec(
        "ok-verl-console-np2-val-n60-every-25-swings-level-0.30-to-0.42-train-rising-at-400-of-1000",
        Plot(
            solve=ease((0, 0.25), (150, 0.34), (400, 0.45)),
            prompts=128,
            group=8,
            spread=1.4,
            evals={"val-core/olympiad_bench/acc/mean@1": (ease((0, 0.30), (400, 0.42)), 60)},
            eval_every=25,
            eval_at_zero=True,
            headline="val-core/olympiad_bench/acc/mean@1",
            kl=lin((0, 0.0), (400, 0.012)),
            ent=lin((0, 0.62), (400, 0.48)),
            length=lin((0, 900), (400, 1250)),
            cap=4096,
            lr=const(1e-6),
            gn=const(0.18),
            clip=lin((0, 0.002), (400, 0.004)),
            sps=95,
            age=6,
        ),
        writer(w_verl_console)("0.5", True),
        2403,
        (400, 1000),
        "ok",
        "healthy verl console np2 noisy-small-eval eval-every-25",
        "verl GRPO (NumPy 2 console, np.float64(...) values), validation on a 60-problem olympiad subset every 25 "
        "steps: one eval has sd ~0.06, so consecutive evals swing by 0.1 while the level rises 0.30 -> 0.42. The "
        "train score (1024 rollouts per step) rises smoothly 0.25 -> 0.45, KL grows slowly to 0.012, entropy "
        "eases 0.62 -> 0.48, lengths 900 -> 1250 of 4096 with no truncation. 400 of 1000 steps, live. The small "
        "eval's low points are noise on a rising level: continue.",
    ),
    Spec(
        "ok-finished-mlflow-db-trl1x-1200-of-1200-eval-still-climbing-last-300-steps-extend",
        Plot(
            solve=ease((0, 0.40), (400, 0.50), (900, 0.58), (1200, 0.65)),
            prompts=32,
            group=8,
            every=10,
            evals={ACC: (lin((0, 0.48), (400, 0.52), (900, 0.55), (1200, 0.615)), 500)},
            eval_every=100,
            headline=ACC,
            ent=lin((0, 0.45), (1200, 0.38)),
            length=lin((0, 600), (1200, 720)),
            cap=2048,
            lr=warm_const(1e-6, 50),
            gn=const(0.12),
            sps=60,
            age=20 * 60,
            done=True,
        ),
        writer(w_mlflow_db)(
            {
                "max_steps": 1200,
                "learning_rate": 1e-6,
                "lr_scheduler_type": "constant_with_warmup",
                "experiment": "grpo-numina",
            },
            "grpo-qwen3b-numina-1200",
        ),
        2404,
        (1200, 1200),
        "ok",
        "healthy finished mlflow-db trl1x still-rising-at-end extend",
        "TRL 1.x GRPO logged to MLflow (sqlite store, HF callback raw keys), run FINISHED at its planned 1200 "
        "steps with a constant learning rate. Held-out accuracy (N=500, sd ~0.022) is 0.55 at 900 and 0.615 at "
        "1200: +3 sd over the last 300 steps, and the last eval is the highest; the train reward is still "
        "climbing too. A finished run that was still improving: extending it is worth it (continue); the final "
        "weights are the best so far, so nothing lies behind.",
    ),
    Spec(
        "ok-openrlhf-tb-train-reward-back-to-start-after-hard-shard-at-600-eval-pass1-still-rising",
        Plot(
            solve=lin((0, 0.35), (300, 0.52), (600, 0.62), (601, 0.30), (900, 0.36)),
            prompts=64,
            group=8,
            spread=1.3,
            average=False,
            evals={"eval_math_pass1": (lin((0, 0.40), (300, 0.47), (600, 0.52), (900, 0.57)), 500)},
            eval_every=50,
            eval_at_zero=True,
            headline="eval_math_pass1",
            kl=lin((0, 0.0), (600, 0.04), (900, 0.06)),
            ent=None,
            length=lin((0, 500), (600, 560), (601, 760), (900, 800)),
            cap=2048,
            lr=warm_const(5e-7, 20),
            gn=const(0.2),
            clip=const(0.01),
            sps=60,
            age=5,
        ),
        writer(w_openrlhf_tb)("math", "qwen2.5-7b-grpo-mix"),
        2405,
        (900, 2000),
        "ok",
        "healthy openrlhf tensorboard rise-then-fall-lookalike data-shift eval-rising",
        "OpenRLHF GRPO; the prompt file is easy problems followed by hard ones, unshuffled. Train reward climbs "
        "0.35 -> 0.62 by 600, drops to 0.30 the step the hard shard starts (lengths jump 560 -> 760 with it) and "
        "is 0.36 at 900: start-to-now looks flat, peak-to-now looks like a collapse. The held-out MATH pass@1 "
        "(N=500, every 50) never turns: 0.40 -> 0.52 at 600 -> 0.57 at 900. KL and grad norm stay calm. The "
        "drop is the data, not the model: continue.",
    ),
    Spec(
        "ok-nemo-tb-lr-warms-from-0.0-over-100-reward-flat-until-110-lifts-at-190-of-1000",
        Plot(
            solve=lin((0, 0.22), (105, 0.225), (190, 0.35)),
            prompts=64,
            group=16,
            spread=1.2,
            evals={"validation/accuracy": (lin((0, 0.24), (110, 0.245), (190, 0.30)), 500)},
            eval_every=50,
            eval_at_zero=True,
            kl=lin((0, 0.0), (100, 0.0003), (190, 0.003)),
            ent=lin((0, 0.55), (190, 0.52)),
            length=lin((0, 650), (190, 700)),
            cap=4096,
            lr=lin((0, 0.0), (100, 1e-6), (1000, 1e-6)),
            gn=lin((0, 0.10), (190, 0.14)),
            sps=50,
            age=4,
        ),
        writer(w_nemo_tb)(),
        2406,
        (190, 1000),
        "ok",
        "healthy nemo tensorboard lr-warmup-from-zero early-check lift-off",
        "NeMo-RL GRPO with a linear warmup from 0: train/lr is 1e-8 at step 1 and reaches 1e-6 at 100. Reward "
        "is flat at 0.22 while the LR is tiny (KL ~0), then lifts 0.225 -> 0.35 between 105 and 190 (1024 "
        "rollouts per step, one step's sd ~0.03, so the lift is ~4 sd and sustained). Validation (N=500) at 0/50/100/150 is 0.24-0.26, as expected "
        "before the lift. 19 % of 1000 steps, live. A warm-up, not a dead learning rate: continue.",
    ),
    Spec(
        "ok-trl-rloo-0.24-checkpoints-keep3-kl-climbs-to-0.35-with-reward-live-at-900-of-2000",
        Plot(
            solve=ease((0, 0.40), (900, 0.66)),
            prompts=64,
            group=4,
            spread=1.3,
            every=10,
            evals={"eval_reward": (ease((0, 0.42), (900, 0.58)), 300)},
            eval_every=100,
            headline="eval_reward",
            kl=lin((0, 0.0), (300, 0.08), (900, 0.35)),
            ent=lin((0, 0.90), (900, 0.60)),
            length=lin((0, 350), (900, 420)),
            cap=1024,
            lr=const(1e-6),
            gn=const(0.3),
            sps=40,
            age=8,
        ),
        writer(w_trl_state)((0, 24), 100, 3),
        7600,
        (900, 2000),
        "ok",
        "healthy trl-rloo trl024 checkpoint-folders save-limit kl-rises-with-reward",
        "TRL 0.24 RLOO (GRPO-style keys; beta 0.05 so kl is logged), checkpoints every 100 with save_total_limit "
        "3: checkpoint-700/800/900 on disk, the newest written 8 minutes ago. KL to the reference climbs fast, "
        "0 -> 0.08 by 300 -> 0.35 by 900, but it moves with the reward (0.40 -> 0.66) and the held-out reward "
        "(N=300, every 100) rises 0.42 -> 0.58; entropy eases 0.90 -> 0.60, lengths steady. KL rising with "
        "reward and eval is the policy learning: continue.",
    ),
    Spec(
        "ok-rasbt-csv-crlf-eval-pct-flat-for-4-evals-then-up-at-350-of-500",
        Plot(
            solve=lin((0, 0.20), (350, 0.42)),
            prompts=1,
            group=8,
            spread=1.2,
            evals={"eval_acc": (lin((0, 0.156), (150, 0.16), (350, 0.29)), 500)},
            eval_every=50,
            eval_at_zero=True,
            headline="eval_acc",
            kl=lin((0, 0.0), (350, 0.05)),
            ent=lin((0, 0.90), (350, 0.70)),
            length=lin((0, 380), (350, 330)),
            cap=512,
            sps=14,
            age=2,
        ),
        writer(w_rasbt_csv)(),
        2408,
        (350, 500),
        "ok",
        "healthy rasbt-csv crlf eval-percent one-prompt-per-step",
        "reasoning-from-scratch 7_5_plus_kl.py loop (one prompt x 8 rollouts per step, CRLF CSV, total_steps 500, "
        "eval_acc in percent on step 1 and every 50). reward_avg is very noisy step to step (0 or 1 groups give "
        "adv_std 0 and loss 0.0) but its level rises 0.20 -> 0.42. MATH-500 sits at ~13-16 % for the first "
        "four evals (1-150), then climbs to ~29 % at 350 (sd ~2 points). Live, 70 % through. Continue.",
    ),
    Spec(
        "ok-verl-jsonl-dapo-at-930-of-1000-val-still-rising-live",
        Plot(
            solve=ease((0, 0.30), (930, 0.55)),
            prompts=96,
            group=16,
            spread=1.5,
            evals={"val-core/math500/acc/mean@8": (lin((0, 0.20), (530, 0.27), (930, 0.345)), 500)},
            eval_every=50,
            eval_at_zero=True,
            headline="val-core/math500/acc/mean@8",
            ent=lin((0, 0.40), (930, 0.46)),
            kl=None,
            length=lin((0, 1200), (930, 2600)),
            cap=8192,
            lr=const(1e-6),
            gn=const(0.15),
            clip=const(0.0015),
            sps=180,
            age=3,
        ),
        writer(w_verl_jsonl)("dapo", "qwen2.5-7b-dapo-math-17k"),
        7800,
        (930, 1000),
        "ok",
        "healthy verl jsonl dapo near-planned-end still-rising constant-lr",
        "verl DAPO recipe (file logger JSONL, total_training_steps 1000 in config.yaml, constant LR 1e-6, "
        "clip-higher so entropy creeps up 0.40 -> 0.46). At step 930 of 1000 validation mean@8 on MATH-500 is "
        "still climbing: 0.27 at 530 -> 0.345 at 930 (sd ~0.021, +3.5 sd over the last 400 steps, no flattening). "
        "Train score rises with it; lengths grow 1200 -> 2600 of 8192 without truncation. Near the planned end "
        "but not converged: the last 70 steps should still pay, and a longer run would too. Continue.",
    ),
    Spec(
        "ok-trl-dpo-029-console-acc-0.5-during-warmup-eval-pref-acc-0.53-to-0.665-at-700-of-2000",
        Plot(
            solve=lin((0, 0.50), (60, 0.505), (200, 0.60), (700, 0.71)),
            every=10,
            pairs=64,
            evals={"eval_rewards/accuracies": (lin((0, 0.51), (100, 0.53), (700, 0.665)), 1000)},
            eval_every=100,
            headline="eval_rewards/accuracies",
            margin=lin((0, 0.0), (60, 0.002), (200, 0.35), (700, 1.6)),
            chosen=lin((0, 0.0), (700, -0.6)),
            ent=const(0.62),
            lr=warm_cos(5e-7, 100, 2000),
            gn=const(12.0),
            sps=12,
            age=5,
        ),
        writer(w_trl_console)((0, 29), True, "dpo_train.log"),
        2410,
        (700, 2000),
        "ok",
        "healthy trl-dpo trl029 console warmup flat-start",
        "TRL 0.29 DPO (console dicts, beta 0.1, 100 warmup steps from lr 0). For the first ~60 steps "
        "rewards/accuracies hovers at 0.5 and the loss at 0.693, as expected while the LR is tiny; then margins "
        "grow 0 -> 1.6 and train accuracy reaches ~0.71. Eval preference accuracy (1000 pairs, every 100) rises "
        "0.53 -> 0.665. Chosen rewards drift slightly negative (-0.6), which is common. 35 % through, live: "
        "continue.",
    ),
    # ---------------------------------------------------------------------------------------------------- stop
    Spec(
        "stop-trackio-trl1x-accuracy-reward-pinned-at-0.0-format-and-tag-rewards-saturate-at-600-of-2000",
        Plot(
            solve=const(0.0),
            extras={
                "format_reward": (lin((0, 0.10), (250, 0.97), (600, 0.99)), 1.0),
                "tag_count_reward": (lin((0, 0.30), (200, 0.95), (600, 0.98)), 1.0),
            },
            prompts=32,
            group=8,
            every=10,
            evals={
                ACC: (const(0.0), 200),
                "eval_rewards/format_reward/mean": (lin((0, 0.10), (250, 0.97), (600, 0.99)), 200),
                "eval_rewards/tag_count_reward/mean": (lin((0, 0.30), (200, 0.95), (600, 0.98)), 200),
            },
            eval_every=100,
            headline=ACC,
            ent=lin((0, 0.70), (600, 0.35)),
            length=lin((0, 600), (300, 320), (600, 280)),
            cap=1024,
            lr=const(1e-6),
            gn=lin((0, 0.3), (300, 0.06), (600, 0.04)),
            sps=40,
            age=10,
        ),
        writer(w_trackio)("grpo-math-fmt", "qwen2.5-1.5b-fmt-acc", (1, 3)),
        2411,
        (600, 2000),
        "stop",
        "stop trackio trl1x task-reward-at-floor format-reward-rises never-learns",
        "TRL 1.3 GRPO logged to Trackio (train/... keys). Three reward functions: the accuracy reward is exactly "
        "0.0 on every logged step and every eval (N=200), while the format and tag-count rewards saturate (0.10 "
        "-> 0.99 and 0.30 -> 0.98 by ~250), so the total reward climbs 0.4 -> ~1.97 and looks like learning. "
        "Once format is saturated most groups score the same (frac_reward_zero_std 0.03 -> ~0.8, grad norm 0.3 -> "
        "0.04): no signal is left and the task was never learnt. No earlier point is better on accuracy (all "
        "0). 600 of 2000, live: stop (fix the verifier or the answer format), nothing to roll back to.",
    ),
    Spec(
        "stop-verl-console-actor-lr-0.0-on-every-step-score-flat-0.31-kl-exactly-0-at-300-of-1000",
        Plot(
            solve=const(0.31),
            prompts=256,
            group=5,
            spread=1.3,
            evals={GSM: (const(0.33), 1319)},
            eval_fixed=True,
            eval_every=50,
            eval_at_zero=True,
            headline=GSM,
            kl=const(0.0),
            ent=const(0.52),
            lr=const(0.0),
            gn=const(0.22),
            length=const(230),
            cap=1024,
            clip=const(0.0),
            sps=35,
            age=2,
        ),
        writer(w_verl_console)("0.5", False),
        2412,
        (300, 1000),
        "stop",
        "stop verl console lr-zero never-learns weights-frozen",
        "verl GRPO on GSM8K whose scheduler config leaves actor/lr at 0.0 on every step (warm-up misconfigured). "
        "Gradients are computed (grad_norm ~0.2, heavy-tailed) but nothing moves: actor/kl_loss, ppo_kl and "
        "pg_clipfrac are exactly 0, entropy flat at 0.52, critic/score/mean flat at 0.31 within batch noise, "
        "greedy GSM8K validation exactly 0.33 at every eval (N=1319: same weights, same answers). 300 of 1000 steps, live. The weights are the initial "
        "ones and will stay so: stop (fix the LR); the current weights are as good as any.",
    ),
    Spec(
        "stop-nemo-tb-greedy-rollouts-identical-within-every-group-pct-mixed-0-grad-norm-0-at-250-of-1000",
        Plot(
            solve=const(0.41),
            prompts=64,
            group=8,
            spread=1.4,
            tie=const(1.0),
            evals={"validation/accuracy": (const(0.40), 500)},
            eval_fixed=True,
            eval_every=50,
            eval_at_zero=True,
            headline="validation/accuracy",
            kl=const(0.0),
            ent=const(0.38),
            lr=const(1e-6),
            gn=const(0.0),
            length=const(420),
            cap=2048,
            sps=45,
            age=8,
        ),
        writer(w_nemo_tb)(cfg={"policy": {"generation": {"temperature": 0.0}}}),
        2413,
        (250, 1000),
        "stop",
        "stop nemo tensorboard identical-rewards-in-groups no-signal never-learns",
        "NeMo-RL GRPO launched with generation temperature 0: all 8 rollouts of a prompt are the same, so every "
        "group is all-right or all-wrong (baseline_reward pct_mixed 0.0 on every step, pct_0 + pct_1 = 100). "
        "Advantages are all zero: loss 0.0, grad_norm 0.0, kl_penalty 0.0 throughout. train/reward wobbles "
        "around 0.41 only because different prompts are drawn; validation/accuracy exactly 0.40 at every eval (greedy, unchanged weights). 250 of "
        "1000, live: nothing can be learnt as configured and nothing was; stop.",
    ),
    Spec(
        "stop-mlflow-files-trl-grpo-heldout-flat-0.44-for-1500-steps-train-0.30-to-0.71-six-epochs",
        Plot(
            solve=ease((0, 0.30), (1500, 0.71)),
            prompts=16,
            group=8,
            spread=1.6,
            every=10,
            evals={ACC: (const(0.44), 500)},
            eval_every=100,
            headline=ACC,
            ent=lin((0, 0.5), (1500, 0.2)),
            length=lin((0, 500), (1500, 380)),
            cap=1024,
            lr=const(1e-6),
            gn=const(0.2),
            sps=30,
            age=6,
        ),
        writer(w_mlflow_files)(
            "trl",
            {"max_steps": 3000, "num_train_epochs": 12, "learning_rate": 1e-6, "experiment": "grpo-smalltrain"},
            "grpo-4k-prompts",
        ),
        2414,
        (1500, 3000),
        "stop",
        "stop mlflow-files trl eval-never-moves train-rises memorising",
        "TRL GRPO on a 4,000-prompt train set (250 steps per epoch), logged to an MLflow file store. Train "
        "reward climbs 0.30 -> 0.71 over six epochs as the prompts are memorised (entropy 0.5 -> "
        "0.2), but the held-out accuracy (N=500, every 100) has not moved from 0.44 at any eval "
        "in 1500 steps. Nothing the run has learnt transfers and nothing suggests it will; every checkpoint is "
        "as good as the current one on held-out. Stop.",
    ),
    Spec(
        "stop-finished-openrlhf-console-2000-of-2000-gsm8k-plateau-since-1100-final-eval-at-best",
        Plot(
            solve=ease((0, 0.50), (1100, 0.78), (2000, 0.785)),
            prompts=128,
            group=4,
            spread=1.3,
            every=5,
            average=False,
            evals={"eval_gsm8k_pass1": (lin((0, 0.55), (1100, 0.74), (2000, 0.742)), 1319)},
            eval_every=100,
            eval_at_zero=True,
            headline="eval_gsm8k_pass1",
            kl=lin((0, 0.0), (1100, 0.05), (2000, 0.08)),
            ent=None,
            length=lin((0, 280), (2000, 210)),
            cap=1024,
            lr=warm_cos(1e-6, 40, 2000, 1e-7),
            gn=const(0.15),
            sps=25,
            age=26 * 60,
            done=True,
        ),
        writer(w_openrlhf_console)("gsm8k", "/ckpt/qwen2.5-3b-grpo-gsm8k"),
        2415,
        (2000, 2000),
        "stop",
        "stop finished openrlhf console plateau best-at-end",
        "OpenRLHF GRPO, finished at 2000/2000 (final save line). GSM8K pass@1 (N=1319, sd ~0.012) rose 0.55 -> "
        "0.74 by 1100 and held 0.74 to the end; train reward flat at ~0.78 since 1100, KL creeping 0.05 -> 0.08. "
        "The final weights are as good as any earlier point (the plateau never turned down), so there is no "
        "better model to go back to and no reason to extend: stop, keep the final weights.",
    ),
    Spec(
        "conv-trl021-console-at-1860-of-2000-cosine-tail-eval-flat-since-1200",
        Plot(
            solve=ease((0, 0.45), (1200, 0.70), (1860, 0.705)),
            prompts=32,
            group=8,
            every=10,
            evals={"eval_reward": (lin((0, 0.47), (1200, 0.62), (1860, 0.622)), 500)},
            eval_every=100,
            headline="eval_reward",
            ent=lin((0, 0.5), (1860, 0.32)),
            length=lin((0, 700), (1860, 640)),
            cap=2048,
            lr=warm_cos(1e-6, 60, 2000),
            gn=const(0.15),
            sps=35,
            age=4,
        ),
        writer(w_trl_console)((0, 21)),
        2416,
        (1860, 2000),
        "conv",
        "converged trl021 console near-planned-end cosine-tail plateau",
        "TRL 0.21 GRPO (console log), 1860 of 2000 steps, cosine LR now ~1e-8. Held-out reward (N=500) reached "
        "0.62 at 1200 and has been flat since (0.62 +/- noise over seven evals); train reward flat at ~0.70. "
        "140 steps remain at an almost-zero learning rate. Converged: stopping now or letting it finish are both "
        "fine; the current weights are as good as any.",
    ),
    Spec(
        "stop-verl-jsonl-stalled-7h-at-410-of-1200-score-exactly-0-on-most-steps-val-0",
        Plot(
            solve=const(0.0001),
            prompts=64,
            group=16,
            spread=2.6,
            evals={"val-core/olympiad/acc/mean@4": (const(0.001), 480)},
            eval_every=50,
            eval_at_zero=True,
            headline="val-core/olympiad/acc/mean@4",
            kl=const(1e-5),
            ent=const(0.61),
            lr=const(1e-6),
            gn=const(0.03),
            zero_gn_when_flat=True,
            length=lin((0, 3000), (410, 3400)),
            cap=8192,
            sps=200,
            age=7 * 60,
        ),
        writer(w_verl_jsonl)("olymp", "qwen2.5-1.5b-olymp-grpo"),
        2417,
        (410, 1200),
        "stop",
        "stop verl jsonl stalled exact-zero-reward never-learns too-hard",
        "verl GRPO on olympiad problems with a 1.5B model, file logger JSONL; the last line (step 410 of 1200) "
        "was written 7 hours ago and there is no end marker, so the job died. critic/score/mean is exactly 0.0 on "
        "most steps (1024 rollouts each; the rare non-zero steps come from a handful of easy prompts), grad norm "
        "is 0.0 whenever the whole batch scored 0, validation mean@4 is ~0 at every eval. The model never got "
        "off the floor, so there is nothing to restart or roll back to: stop (the task is out of reach).",
    ),
    Spec(
        "sor-wandb-panel-csv-eval-n100-every-50-plateau-then-eases-1.1sd-kl-creeps-at-1400-of-3000",
        Plot(
            solve=lin((0, 0.42), (400, 0.60), (900, 0.62), (1400, 0.60)),
            prompts=32,
            group=8,
            every=10,
            evals={"eval_rewards/accuracy_reward/mean": (lin((0, 0.40), (400, 0.58), (900, 0.585), (1400, 0.53)), 100)},
            eval_every=50,
            headline="eval_rewards/accuracy_reward/mean",
            kl=lin((0, 0.0), (400, 0.03), (1400, 0.09)),
            ent=lin((0, 0.45), (1400, 0.33)),
            lr=const(1e-6),
            length=const(520),
            sps=40,
            age=15,
        ),
        writer(w_wandb_csv)(
            "qwen3-4b-grpo-r3",
            {
                "train_reward.csv": ["train/reward"],
                "eval_accuracy.csv": ["eval/rewards/accuracy_reward/mean"],
                "kl.csv": ["train/kl"],
                "entropy.csv": ["train/entropy"],
            },
            (1, 0),
        ),
        2418,
        (1400, 3000),
        "sor",
        "stop-or-rollback wandb-csv noisy-small-eval coarse plateau-vs-slide kl-creep",
        "W&B panel CSV exports (x-axis train/global_step) of a TRL 1.0 GRPO run with beta 0.02, plus its "
        "config.yaml (max_steps 3000). Held-out accuracy on 100 problems every 50 steps (sd ~0.05): level 0.40 "
        "-> 0.58 by 400, flat to 900, then eases to 0.53 by 1400 -- 1.1 sd, which single evals cannot tell from "
        "noise; train reward 0.62 -> 0.60, KL creeping 0.03 -> 0.09. Whatever the drift costs, nothing more is "
        "being gained: stop is right; going back to the plateau (350-900) is as good.",
        onset=900,
    ),
    Spec(
        "stop-custom-csv-eval-n80-every-40-flat-0.55-since-300-entropy-floor-kl-creeps-at-900-of-1500",
        Plot(
            solve=ease((0, 0.35), (300, 0.62), (900, 0.625)),
            prompts=16,
            group=8,
            spread=5.0,
            evals={"heldout_acc": (ease((0, 0.40), (300, 0.55), (900, 0.55)), 80)},
            eval_every=40,
            headline="heldout_acc",
            kl=lin((0, 0.0), (300, 0.05), (900, 0.14)),
            ent=lin((0, 0.55), (300, 0.12), (900, 0.08)),
            length=lin((0, 420), (900, 300)),
            cap=1024,
            lr=const(5e-7),
            gn=lin((0, 0.3), (900, 0.12)),
            sps=20,
            age=9,
        ),
        writer(w_custom_csv)("heldout_acc"),
        2419,
        (900, 1500),
        "stop",
        "stop custom-csv noisy-small-eval plateau entropy-floor flat-groups",
        "Hand-written GRPO loop, one CSV row per step (config.json: 1500 steps, 80-problem held-out eval every "
        "40). Held-out level rose 0.40 -> 0.55 by 300 and has been flat for 600 steps; single evals scatter "
        "+/- 0.055 (sd), so the latest few can sit 1-2 sd under the best draw by chance. Entropy hit a floor "
        "(0.12 -> 0.08), about two thirds of the groups are all-same (frac_groups_all_same ~0.65), KL keeps creeping 0.05 -> 0.14 "
        "without gains. No real decline, no signal left: stop; the current weights are as good as any.",
    ),
    # ------------------------------------------------------------------------------------------------ rollback
    Spec(
        "rb-finished-trl1x-top-level-state-no-checkpoints-eval-0.30-to-0.52-holds-420-550-back-to-0.31-at-1000",
        Plot(
            solve=lin((0, 0.35), (420, 0.58), (550, 0.58), (1000, 0.37)),
            prompts=32,
            group=8,
            spread=1.4,
            every=10,
            evals={
                ACC: (lin((0, 0.30), (420, 0.52), (550, 0.522), (1000, 0.31)), 500),
                "eval_reward": (lin((0, 0.30), (420, 0.52), (550, 0.522), (1000, 0.31)), 500),
            },
            eval_every=50,
            headline=ACC,
            ent=lin((0, 0.42), (550, 0.45), (1000, 1.10)),
            length=lin((0, 600), (550, 650), (1000, 1900)),
            cap=2048,
            lr=const(3e-6),
            gn=lin((0, 0.15), (550, 0.17), (1000, 0.4)),
            sps=50,
            age=2 * 24 * 60,
            done=True,
        ),
        writer(w_trl_state)((1, 1), None, None, True),
        2420,
        (1000, 1000),
        "rb",
        "rollback finished trl1x top-level-state no-checkpoints rise-then-fall-to-start",
        "TRL 1.1 GRPO with save_strategy='no': only the top-level trainer_state.json and the final model were "
        "written (no checkpoint folders). Held-out accuracy (N=500, every 50) climbed 0.30 -> 0.52 by 420 and held to 550, "
        "then slid back to 0.31 by the end as entropy rose 0.45 -> 1.1 and completions grew 650 -> 1900 of "
        "2048 (truncation up). Start and end look alike; the middle was 10 sd better. The run is finished and "
        "its final weights are no better than the base: roll back to the end of the good stretch, 550 (restore "
        "from wherever the weights of that step can be had, or retrain to it).",
        onset=550,
    ),
    Spec(
        "rb-verl-tb-no-val-train-score-0.22-to-0.49-holds-then-back-to-0.23-entropy-collapse-live",
        Plot(
            solve=lin((0, 0.22), (350, 0.49), (420, 0.49), (800, 0.23)),
            prompts=64,
            group=8,
            spread=1.3,
            tie=lin((0, 0.0), (420, 0.0), (800, 0.75)),
            ent=lin((0, 0.45), (420, 0.40), (600, 0.08), (800, 0.03)),
            kl=lin((0, 0.0), (420, 0.01), (800, 0.09)),
            length=lin((0, 450), (420, 430), (800, 140)),
            cap=1024,
            lr=const(2e-6),
            gn=lin((0, 0.2), (420, 0.2), (800, 0.5)),
            sps=40,
            age=12,
        ),
        writer(w_verl_tb)("grpo_countdown", "qwen2.5-3b-countdown-lr2e-6"),
        2421,
        (800, 1500),
        "rb",
        "rollback verl tensorboard no-eval train-headline rise-then-fall-to-start entropy-collapse no-checkpoints",
        "verl GRPO on Countdown, TensorBoard only, validation disabled (test_freq -1), no checkpoints in the "
        "folder. critic/score/mean climbs 0.22 -> 0.49 by 350 and holds to ~420; then actor/entropy collapses "
        "0.40 -> 0.03, responses shrink 430 -> 140 tokens, groups become identical and the score falls back to "
        "0.23 by 800 -- the same as at step 0. Start-to-now is flat, peak-to-now is -0.26 (~7 sd of one step's "
        "score). Live. The model at ~420 is clearly better than the current one: roll back there.",
        onset=420,
    ),
    Spec(
        "rb-verl-console-v03-keys-val-test-score-plateau-300-to-700-slow-slide-to-1100-train-rising",
        Plot(
            solve=ease((0, 0.68), (300, 0.84), (700, 0.86), (1100, 0.875)),
            prompts=256,
            group=5,
            spread=1.2,
            evals={"val/test_score/openai/gsm8k": (ease((0, 0.62), (300, 0.80), (700, 0.805), (1100, 0.755)), 1319)},
            eval_every=50,
            eval_at_zero=True,
            headline="val/test_score/openai/gsm8k",
            kl=lin((0, 0.0), (300, 0.02), (700, 0.06), (1100, 0.14)),
            ent=lin((0, 0.55), (700, 0.40), (1100, 0.30)),
            length=lin((0, 240), (700, 230), (1100, 300)),
            cap=1024,
            lr=const(1e-6),
            gn=const(0.2),
            sps=30,
            age=5,
        ),
        writer(w_verl_console)("0.3", False),
        5100,
        (1100, 1500),
        "rb",
        "rollback verl03 console slow-slide plateau-then-slide train-rising newest-good-point",
        "verl 0.3 GRPO (console; keys val/test_score/openai/gsm8k and actor/entropy_loss). GSM8K test accuracy "
        "(N=1319, sd ~0.011, every 50) rises 0.62 -> 0.80 by 300, creeps to 0.805 by 700, then slides slowly "
        "and steadily to 0.755 at 1100 (~4.5 sd) while the train score keeps rising 0.86 -> 0.875 and KL more "
        "than doubles (0.06 -> 0.14): over-optimising the train distribution. 1100 of 1500, live. Roll back; the "
        "newest point still as good as the best is the end of the plateau, 700, not its start.",
        onset=700,
    ),
    Spec(
        "rb-openrlhf-tb-plateau-500-to-800-then-cliff-at-801-grad-spike-lengths-to-cap-eval-0.66-to-0.20",
        Plot(
            solve=lin((0, 0.35), (500, 0.60), (800, 0.61), (810, 0.12), (890, 0.10)),
            prompts=128,
            group=8,
            spread=1.3,
            average=False,
            evals={"eval_math500_pass1": (lin((0, 0.42), (500, 0.655), (800, 0.66), (810, 0.23), (890, 0.20)), 500)},
            eval_every=40,
            eval_at_zero=True,
            headline="eval_math500_pass1",
            kl=lin((0, 0.0), (800, 0.03), (814, 0.9), (890, 1.1)),
            ent=None,
            length=lin((0, 520), (800, 560), (814, 2048)),
            cap=2048,
            lr=const(5e-7),
            gn=lin((0, 0.2), (800, 0.2), (803, 1.5)),
            gn_spikes={801: 40.0, 802: 25.0, 803: 60.0},
            sps=55,
            age=6,
        ),
        writer(w_openrlhf_tb)("math500", "qwen2.5-7b-grpo-math"),
        2423,
        (890, 2000),
        "rb",
        "rollback openrlhf tensorboard cliff grad-spike length-explosion after-plateau no-checkpoints",
        "OpenRLHF GRPO (TensorBoard, logging every step, eval every 40 on MATH-500). pass@1 rises 0.42 -> 0.655 "
        "by 500 and holds ~0.66 to 800. At 801-803 actor_grad_norm spikes 25-60x, then KL jumps 0.03 -> 0.9, "
        "responses run into the 2048 cap (truncated -> 1) and train reward collapses 0.61 -> 0.10 within ten "
        "steps; pass@1 is ~0.22 at 840 and 0.20 at 880. Live at 890 of 2000. Roll back to before the cliff: the "
        "newest good point is 800, the last eval and the last step before the spikes.",
        onset=801,
    ),
    Spec(
        "rb-nemo-tb-kl-penalty-jumps-30x-at-1301-after-plateau-validation-0.71-to-0.58-at-1450-of-2000",
        Plot(
            solve=ease((0, 0.40), (900, 0.70), (1300, 0.70), (1320, 0.60), (1450, 0.55)),
            prompts=64,
            group=16,
            spread=1.2,
            evals={
                "validation/accuracy": (ease((0, 0.45), (900, 0.71), (1300, 0.712), (1320, 0.64), (1450, 0.58)), 500)
            },
            eval_every=50,
            eval_at_zero=True,
            headline="validation/accuracy",
            kl=lin((0, 0.0), (1300, 0.004), (1301, 0.12), (1450, 0.15)),
            ent=lin((0, 0.40), (1300, 0.35), (1320, 0.55), (1450, 0.60)),
            length=const(900),
            cap=4096,
            lr=const(1e-6),
            gn=lin((0, 0.12), (1300, 0.12), (1301, 0.5), (1450, 0.45)),
            sps=70,
            age=6,
        ),
        writer(w_nemo_tb)(),
        2424,
        (1450, 2000),
        "rb",
        "rollback nemo tensorboard kl-jump breakage-after-plateau",
        "NeMo-RL GRPO. Validation accuracy (N=500, every 50) rises 0.45 -> 0.71 by 900 and holds there to 1300. "
        "At step 1301 train/kl_penalty jumps from 0.004 to 0.12 in one step and stays high, grad norm "
        "quadruples, entropy rises; train reward drops 0.70 -> 0.55 and validation falls to ~0.62 at 1350 and "
        "0.58 at 1450 (6 sd). Live at 1450 of 2000. Roll back to the last eval before the jump, 1300; anything "
        "in the plateau from ~750 is as good but gives up steps.",
        onset=1301,
    ),
    Spec(
        "rb-trl020-console-entropy-collapse-from-640-flat-groups-reward-sags-eval-0.49-to-0.39-at-1000-of-1500",
        Plot(
            solve=ease((0, 0.35), (400, 0.57), (640, 0.575), (1000, 0.45)),
            prompts=32,
            group=8,
            spread=1.3,
            every=10,
            tie=lin((0, 0.0), (640, 0.0), (760, 0.7), (1000, 0.8)),
            evals={"eval_reward": (ease((0, 0.36), (400, 0.49), (640, 0.492), (1000, 0.39)), 400)},
            eval_every=40,
            headline="eval_reward",
            ent=lin((0, 0.55), (640, 0.50), (760, 0.05), (1000, 0.04)),
            length=lin((0, 520), (640, 500), (760, 260), (1000, 230)),
            cap=1024,
            lr=const(1e-6),
            gn=lin((0, 0.3), (640, 0.28), (800, 0.08)),
            sps=30,
            age=3,
        ),
        writer(w_trl_console)((0, 20)),
        5400,
        (1000, 1500),
        "rb",
        "rollback trl020 console entropy-collapse zero-std subtle",
        "TRL 0.20 GRPO console log (entropy and frac_reward_zero_std logged, beta 0). Held-out reward (N=400, "
        "every 40) rises 0.36 -> 0.49 by 400 and holds to 640. From 640 entropy collapses 0.50 -> 0.05 within "
        "120 steps, completions halve 500 -> 250 tokens, frac_reward_zero_std climbs to ~0.8 and grad norm "
        "fades; train reward sags 0.575 -> 0.45 and held-out to 0.39 by 1000 (~4 sd below the plateau). Live at "
        "1000 of 1500. Roll back to the end of the plateau, 640.",
        onset=640,
    ),
    Spec(
        "rb-custom-jsonl-lengths-explode-from-1150-to-4096-cap-eval-0.58-to-0.37-at-1400-of-3000",
        Plot(
            solve=ease((0, 0.40), (800, 0.63), (1150, 0.635), (1300, 0.45), (1400, 0.38)),
            prompts=32,
            group=8,
            spread=1.3,
            evals={"eval/math_acc": (ease((0, 0.42), (800, 0.58), (1150, 0.582), (1300, 0.44), (1400, 0.37)), 500)},
            eval_every=50,
            headline="eval/math_acc",
            kl=lin((0, 0.0), (1150, 0.03), (1400, 0.11)),
            ent=lin((0, 0.40), (1150, 0.45), (1400, 0.80)),
            length=lin((0, 900), (1150, 1000), (1300, 3600), (1400, 4050)),
            cap=4096,
            lr=const(1e-6),
            gn=lin((0, 0.2), (1150, 0.2), (1400, 0.6)),
            sps=70,
            age=7,
        ),
        writer(w_custom_jsonl)(),
        2426,
        (1400, 3000),
        "rb",
        "rollback custom-jsonl length-explosion truncation after-plateau",
        "Hand-written GRPO loop, JSONL with train and eval records (config.json: 3000 steps, max_new_tokens "
        "4096). Held-out MATH accuracy (N=500, every 50) rises 0.42 -> 0.58 by 800 and holds to 1150. Then "
        "responses balloon 1000 -> 4050 tokens within 250 steps, trunc_frac goes ~0 -> ~0.9, entropy rises; "
        "train reward falls 0.635 -> 0.38 and eval to 0.37 by 1400 (~9 sd). Live. Roll back to 1150, the last "
        "eval before the lengths took off.",
        onset=1150,
    ),
    Spec(
        "rb-verl-mlflow-files-at-keys-grad-norm-nan-from-751-score-0-live-last-val-750",
        Plot(
            solve=ease((0, 0.30), (500, 0.52), (750, 0.525)),
            prompts=128,
            group=8,
            spread=1.3,
            evals={"val-core/math/acc/mean@4": (ease((0, 0.33), (500, 0.47), (750, 0.472)), 500)},
            eval_every=50,
            eval_at_zero=True,
            headline="val-core/math/acc/mean@4",
            kl=lin((0, 0.0), (750, 0.02)),
            ent=lin((0, 0.5), (750, 0.42)),
            length=lin((0, 700), (750, 760)),
            cap=4096,
            lr=const(1e-6),
            gn=const(0.2),
            nan_from=751,
            sps=60,
            age=4,
        ),
        writer(w_mlflow_files)(
            "verl",
            {
                "trainer.total_training_steps": 1500,
                "trainer.test_freq": 50,
                "actor_rollout_ref.actor.optim.lr": 1e-6,
                "experiment": "verl-math",
            },
            "qwen2.5-7b-math-grpo-bf16",
        ),
        2427,
        (790, 1500),
        "rb",
        "rollback verl mlflow-files nan breakage no-checkpoints eval-before-breakage",
        "verl GRPO logged to an MLflow file store (keys with @ rewritten to _at_, e.g. "
        "val-core/math/acc/mean_at_4). Validation (N=500, every 50) rises 0.33 -> 0.47 by 500 and holds to "
        "750. From step 751 actor/grad_norm, pg_loss, entropy and kl_loss are nan on every step, "
        "critic/score/mean is 0.0 and every response runs to the 4096 cap: the weights are NaN. No validation "
        "has run since (next at 800), but the train metrics show the breakage. Live at 790, still writing nan. "
        "Roll back to 750, the last validated point and the last step before the NaNs.",
        onset=751,
    ),
    Spec(
        "rb-finished-trl023-checkpoints-limit-2-eval-peak-1250-1500-slides-to-3000-kept-ckpts-past-peak",
        Plot(
            solve=ease((0, 0.40), (1250, 0.66), (1500, 0.665), (3000, 0.70)),
            prompts=32,
            group=8,
            every=10,
            evals={ACC: (ease((0, 0.45), (1250, 0.64), (1500, 0.641), (3000, 0.55)), 500)},
            eval_every=250,
            headline=ACC,
            ent=lin((0, 0.5), (1500, 0.45), (3000, 0.30)),
            length=lin((0, 800), (1500, 760), (3000, 560)),
            cap=2048,
            lr=warm_lin(1e-6, 60, 3000),
            gn=const(0.15),
            sps=45,
            age=30 * 60,
            done=True,
        ),
        writer(w_trl_state)((0, 23), 500, 2, True),
        2428,
        (3000, 3000),
        "rb",
        "rollback finished trl023 checkpoint-folders save-limit coarse-eval checkpoint-past-peak",
        "TRL 0.23 GRPO, finished (top-level trainer_state.json plus checkpoint-2500 and checkpoint-3000 kept by "
        "save_total_limit 2). Held-out accuracy is evaluated only every 250 steps (N=500): 0.45 -> 0.64 at 1250, "
        "0.64 at 1500, then down at every eval to 0.55 at 3000 (~4 sd) while train reward keeps rising and "
        "answers shorten. Both kept checkpoints are past the peak. The better model is at 1250-1500: roll back "
        "to 1500 (its checkpoint-1500 was rotated away, so it must come from elsewhere or be retrained).",
        onset=1500,
    ),
    Spec(
        "rb-trl016-console-logging-every-50-eval-n150-every-100-plateau-300-700-slide-3.5sd-live",
        Plot(
            solve=lin((0, 0.42), (300, 0.55), (700, 0.56), (1300, 0.50)),
            prompts=16,
            group=8,
            every=50,
            evals={"eval_reward": (lin((0, 0.45), (300, 0.60), (700, 0.602), (1300, 0.46)), 150)},
            eval_every=100,
            headline="eval_reward",
            kl=lin((0, 0.0), (700, 0.05), (1300, 0.20)),
            ent=None,
            length=lin((0, 380), (700, 370), (1300, 520)),
            cap=1024,
            lr=const(1e-6),
            gn=const(0.25),
            sps=30,
            age=10,
        ),
        writer(w_trl_console)((0, 16)),
        2429,
        (1300, 2000),
        "rb",
        "rollback trl016 console coarse-logging noisy-small-eval slow-slide subtle",
        "TRL 0.16 GRPO console (completion_length, single clip_ratio, kl with beta 0.04), logging_steps 50 so "
        "only 26 train points, and a 150-problem eval every 100 (sd ~0.04). Eval level 0.45 -> 0.60 by 300, "
        "flat to 700, then a steady slide to 0.46 by 1300 (3.5 sd); train reward (each point the mean of 50 "
        "batches) eases 0.56 -> 0.50 and KL quadruples 0.05 -> 0.20. Any one eval is noisy, but six in a row "
        "below the plateau with KL running is a real decline. Live at 1300 of 2000: roll back to 700.",
        onset=700,
    ),
    Spec(
        "rb-trl1x-checkpoints-every-200-live-eval-plateau-800-1000-slides-to-1400-newest-ckpt-1400",
        Plot(
            solve=ease((0, 0.40), (800, 0.60), (1000, 0.605), (1400, 0.56)),
            prompts=32,
            group=8,
            every=10,
            evals={ACC: (ease((0, 0.38), (800, 0.55), (1000, 0.552), (1400, 0.47)), 500)},
            eval_every=100,
            headline=ACC,
            kl=lin((0, 0.0), (1000, 0.02), (1400, 0.12)),
            ent=lin((0, 0.5), (1400, 0.36)),
            length=lin((0, 900), (1000, 880), (1400, 450)),
            cap=2048,
            lr=const(1e-6),
            gn=const(0.18),
            sps=50,
            age=12,
        ),
        writer(w_trl_state)((1, 5), 200),
        5900,
        (1400, 3000),
        "rb",
        "rollback trl1x checkpoint-folders live checkpoint-on-disk length-shrink",
        "TRL 1.5 GRPO (beta 0.01), checkpoints every 200 with no save limit; the newest, checkpoint-1400, was "
        "written 12 minutes ago and its trainer_state.json holds the history. Held-out accuracy (N=500, every "
        "100) rises 0.38 -> 0.55 by 800, holds to 1000, then falls at each eval to 0.47 at 1400 (3.6 sd) as "
        "completions shrink 880 -> 450 tokens and KL climbs 0.02 -> 0.12. Roll back to checkpoint-1000, the "
        "newest one still as good as the best.",
        onset=1000,
    ),
]

CASES = [s.case() for s in SPECS]
BY_NAME = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    spec = BY_NAME[case.name]
    run = draw(spec.plot, np.random.default_rng(case.seed), case.reached, case.planned or case.reached)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)


def check(cases: list[Case]) -> None:
    for c in cases:
        spec = BY_NAME[c.name]
        lo, hi, best, sd, best_s = spec.window()
        lv = spec.plot.headline_level()
        steps = spec.plot.headline_steps(c.reached)
        last = steps[-1]
        print(
            f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
            f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')}"
        )
        print(
            f"    headline {spec.plot.headline}: best {best:.3f}@{best_s} last {lv(last):.3f}@{last} sd {sd:.4f} "
            f"({(best - lv(last)) / sd:.1f} sd below best); within-1sd steps from {lo}, newest<=onset {hi}"
        )
        run = draw(spec.plot, np.random.default_rng(c.seed), c.reached, c.planned or c.reached)
        if spec.plot.headline == "train":
            seq = [(s, r["reward"]) for s, r in run.rows]
        else:
            seq = [(s, e[spec.plot.headline]) for s, e in run.evals]
        pick = seq[:: max(1, len(seq) // 12)]
        print("    drawn " + " ".join(f"{s}:{v:.3f}" for s, v in pick) + f" | last {seq[-1][0]}:{seq[-1][1]:.3f}")
        tr = run.rows
        zeros = np.mean([r["reward"] == 0 for _, r in tr])
        tail = [r["zero_std"] for _, r in tr[-max(1, len(tr) // 10) :]]
        print(
            f"    train reward {tr[0][1]['reward']:.3f} -> {tr[-1][1]['reward']:.3f}; exact-zero steps {zeros:.0%}; "
            f"zero-std {tr[0][1]['zero_std']:.2f} -> last tenth {np.mean(tail):.2f}"
        )
        if spec.onset is not None:
            top_s = max(seq, key=lambda x: x[1])[0]
            flag = "  <-- drawn best after onset" if top_s > spec.onset else ""
            print(f"    drawn best at {top_s}{flag}")


HEADER = """# Holdout set 24: blind-labelled runs written by make_holdout24.py, independent of the assessor, its judges and
# the generators of the other holdout sets. Aimed at the core of the decision contract: better models behind with
# no checkpoint on disk, rises that fall back to the start, runs that learn nothing and their healthy look-alikes,
# finished and nearly finished runs, and where exactly the newest good point is.
# Labels: what a careful practitioner should do under DESIGN.md's decision contract, read from each story's
# noise-free levels. rollback_window is inclusive: from the first logged headline step whose level is within one
# sampling sd of the best level to the newest such step not after onset_step. Steps are the run's own logged units.
# Run `.venv/bin/python evals/holdout24/make_holdout24.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout24.py", "holdout24.yaml", "h24-", "holdout24", HEADER, CASES, write_run, check)


if __name__ == "__main__":
    main()
