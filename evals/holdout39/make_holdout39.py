"""Holdout set 39: blind-labelled RL post-training runs, written without looking at how the assessor works.

Run from the worktree root:
    .venv/bin/python evals/holdout39/make_holdout39.py           # writes runs/ (gitignored) and holdout39.yaml
    .venv/bin/python evals/holdout39/make_holdout39.py --check   # also prints levels and rollback windows

Every case is a story: noise-free levels per optimiser step for the train reward(s), the held-out evals and the side
signals, drawn through this set's noise model and written exactly as one framework and version writes them.

Noise model (this set's own):
  * binary rewards: each logged batch is P prompts x G rollouts. A prompt's solve rate is logit-normal around the
    level (logit spread `spread`, its centre shifted so the mean solve rate equals the level); rollouts are
    Bernoulli. Mean, overall std, mean per-group std and the share of all-equal groups come from the same draws.
    Trainers that average over k steps per log (TRL) get k batches per logged row;
  * reward-model / judge scores: per-sample normal around the level, batch mean (and std) logged;
  * held-out evals: Binomial(N, p) / N (accuracies, pass@k, win rates over N pairs or prompts);
  * grad norm: log-normal (sigma 0.3) with a Pareto(1.5) spike on about one logged step in 40;
  * smooth side signals (KL, entropy, lengths, clip and truncation rates, timings): multiplicative AR(1) noise
    (phi 0.6, 3-5 % innovations); signed ones (losses, advantages, returns) additive normal.

Labels follow DESIGN.md ("What the three decisions mean") and come from the stories, never from a tool. The
rollback window runs from the first logged headline-eval step whose noise-free level is within one sampling sd
(sqrt(p(1-p)/N) at the best level) of the best level, to the newest such step not after onset_step.
"""

from __future__ import annotations

import csv
import functools
import hashlib
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
from holdout_kit import HEALTHY, Case, converged, dump_json, rollback, stop, tb_file, trainer_state

HERE = Path(__file__).resolve().parent
NOW = time.time()
NAN = float("nan")
Level = Callable[[float], float]


def pw(*pts: tuple[float, float]) -> Level:
    """Piecewise-linear level through the knots, flat outside them."""
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def const(v: float) -> Level:
    return lambda s: v


def cosine(peak: float, warm: int, total: int, floor: float = 0.0) -> Level:
    def f(s: float) -> float:
        if s < warm:
            return peak * (s + 1) / warm
        x = min(1.0, (s - warm) / max(1, total - warm))
        return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * x))
    return f


def sw(at: float, before: Level | float, after: Level | float) -> Level:
    """Switch from one level to another at a step (a planned change or a breakage)."""
    b = before if callable(before) else const(before)
    a = after if callable(after) else const(after)
    return lambda s: b(s) if s < at else a(s)


# ------------------------------------------------------------------------------------------------ noise generators

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(40)
_GH_W = _GH_W / _GH_W.sum()


@functools.lru_cache(maxsize=20000)
def _centre(p: float, spread: float) -> float:
    """Logit centre m with E[sigmoid(m + spread*Z)] = p (bisection on Gauss-Hermite quadrature)."""
    lo, hi = -15.0, 15.0
    for _ in range(50):
        m = (lo + hi) / 2
        if float((_GH_W / (1 + np.exp(-(m + spread * _GH_X)))).sum()) < p:
            lo = m
        else:
            hi = m
    return (lo + hi) / 2


class Gen:
    def draw(self, rng: np.random.Generator, s: int, k: int, st: dict, key: str) -> dict:
        raise NotImplementedError


@dataclass
class Bern(Gen):
    """A batch of binary rewards. out maps mean/std/gstd/zero/pct0/pct1 to the framework's key names."""
    level: Level
    out: dict
    P: int = 64
    G: int = 8
    spread: float = 1.4

    def draw(self, rng, s, k, st, key):
        p = min(max(self.level(s), 1e-4), 1 - 1e-4)
        m = _centre(round(p, 4), self.spread)
        q = 1 / (1 + np.exp(-(m + self.spread * rng.normal(size=self.P * k))))
        x = (rng.random((self.P * k, self.G)) < q[:, None]).astype(float)
        same = x.std(axis=1) == 0
        vals = dict(mean=x.mean(), std=x.std(), gstd=x.std(axis=1).mean(), zero=same.mean(),
                    pct0=100 * (same & (x[:, 0] == 0)).mean(), pct1=100 * (same & (x[:, 0] == 1)).mean())
        return {name: float(vals[v]) for v, name in self.out.items()}


@dataclass
class Score(Gen):
    """Per-sample normal scores (reward model, judge, partial credit) around the level; batch mean and std."""
    level: Level
    out: dict
    sd: float = 1.0
    n: int = 256

    def draw(self, rng, s, k, st, key):
        mu = self.level(s)
        x = rng.normal(mu, self.sd, self.n * k)
        return {name: float({"mean": x.mean(), "std": x.std(), "max": x.max(), "min": x.min()}[v])
                for v, name in self.out.items()}


@dataclass
class Smooth(Gen):
    """Positive side signal with multiplicative AR(1) noise."""
    level: Level
    rel: float = 0.04
    phi: float = 0.6
    hi: float | None = None

    def draw(self, rng, s, k, st, key):
        e = self.phi * st.get(key, 0.0) + self.rel * rng.normal()
        st[key] = e
        v = self.level(s) * math.exp(e)
        if any(w in key for w in ("clip_ratio", "clipped_ratio", "clipfrac", "truncat", "_rate")):
            v = min(v, 1.0)
        if self.hi is not None:
            v = min(v, self.hi)
        return {key: v}


@dataclass
class Signed(Gen):
    level: Level
    sd: float = 0.01

    def draw(self, rng, s, k, st, key):
        return {key: self.level(s) + self.sd * rng.normal() / math.sqrt(k)}


@dataclass
class Grad(Gen):
    level: Level
    sigma: float = 0.3
    spike: float = 1 / 40

    def draw(self, rng, s, k, st, key):
        v = self.level(s) * math.exp(self.sigma * rng.normal())
        if rng.random() < self.spike:
            v *= 1 + rng.pareto(1.5)
        return {key: v}


@dataclass
class Exact(Gen):
    level: Level

    def draw(self, rng, s, k, st, key):
        return {key: self.level(s)}


@dataclass
class Cum(Gen):
    """Cumulative counter (TRL num_tokens) growing by rate(s) per step."""
    rate: Level

    def draw(self, rng, s, k, st, key):
        last = st.get(key + "@s", 0)
        tot = st.get(key, 0.0) + sum(self.rate(t) * (1 + 0.03 * rng.normal()) for t in range(last + 1, s + 1))
        st[key], st[key + "@s"] = tot, s
        return {key: float(round(tot))}


@dataclass
class Derived(Gen):
    """Computed from the other values of the same row (e.g. a weighted total of reward functions)."""
    fn: Callable[[int, dict], float]

    def draw(self, rng, s, k, st, key):
        return {}


# ------------------------------------------------------------------------------------------------------ the stories

@dataclass
class Story:
    train: dict[str, Gen]  # key (or a label for multi-key generators) -> generator
    evals: dict[str, tuple[Level, int]]  # eval key -> (level, N)
    headline: str  # an eval key
    eval_steps: list[int] = field(default_factory=list)
    log_every: int = 1  # steps between logged train rows
    avg: int = 1  # batches averaged per logged row (TRL averages since the last log)
    segments: list[tuple[int, int]] | None = None  # launches: (first step, last step) of each; default one launch
    sps: float = 30.0  # seconds per step
    age_min: float = 5.0  # minutes since the newest write
    gap_s: float = 0.0  # downtime between launches (seconds)
    note: dict = field(default_factory=dict)  # writer-specific facts (planned, framework options...)

    def draws(self, rng: np.random.Generator, reached: int) -> dict:
        segs = self.segments or [(1, reached)]
        train, st = [], {}
        for i, (a, b) in enumerate(segs):
            first = a if a % self.log_every == 0 else a + self.log_every - a % self.log_every
            for s in range(first, min(b, reached) + 1, self.log_every):
                row: dict = {}
                for key, g in self.train.items():
                    if not isinstance(g, Derived):
                        row.update(g.draw(rng, s, self.avg, st, key))
                for key, g in self.train.items():
                    if isinstance(g, Derived):
                        row[key] = g.fn(s, row)
                train.append((s, i, row))
        ev = []
        for s in self.eval_steps:
            if s <= reached:
                ev.append((s, {k: rng.binomial(n, min(max(lv(s), 0.0), 1.0)) / n for k, (lv, n) in self.evals.items()}))
        # wall clock: launches back to back (plus gap_s between them), the newest write age_min ago
        end = NOW - self.age_min * 60
        nsteps = sum(min(b, reached) - a + 1 for a, b in segs)
        start = end - nsteps * self.sps - self.gap_s * (len(segs) - 1)
        walls, t = {}, start
        for i, (a, b) in enumerate(segs):
            for s in range(a, min(b, reached) + 1):
                t += self.sps
                walls[(i, s)] = t
            t += self.gap_s
        return dict(train=train, eval=ev, walls=walls, start=start, end=end, segs=segs, reached=reached)

    def sd_at(self, p: float) -> float:
        return math.sqrt(p * (1 - p) / self.evals[self.headline][1])


def window(story: Story, reached: int, onset: int) -> tuple[int, int]:
    lv = story.evals[story.headline][0]
    steps = [s for s in story.eval_steps if s <= reached]
    best = max(lv(s) for s in steps)
    good = [s for s in steps if lv(s) >= best - story.sd_at(best)]
    return good[0], max(s for s in good if s <= onset)


def wall_of(run: dict, s: int, seg: int | None = None) -> float:
    walls = run["walls"]
    if seg is not None and (seg, s) in walls:
        return walls[(seg, s)]
    hits = [t for (i, x), t in walls.items() if x == s]
    if hits:
        return max(hits)
    return run["start"] + 1.0 if s == 0 else run["end"]


def rows_by_step(run: dict) -> list[tuple[int, int, dict]]:
    return run["train"]


def evals_at(run: dict) -> dict[int, dict]:
    return dict(run["eval"])


# ------------------------------------------------------------------------------------------------- file-time helper

TOUCHED: dict[Path, float] = {}


def touch(p: Path, t: float) -> None:
    TOUCHED[p] = t


def finish_times(folder: Path, end: float) -> None:
    """Give every file its write time: the ones marked by a writer, else the newest write of the run."""
    paths = sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True)
    for p in paths:
        t = TOUCHED.get(p, end)
        if p.is_dir():
            kids = [TOUCHED.get(c, end) for c in p.iterdir()]
            t = TOUCHED.get(p, max(kids) if kids else end)
        os.utime(p, (t, t))
    os.utime(folder, (end, end))


def fnum(x: float, nd: int = 6) -> float | None:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return x
    return float(f"{x:.{nd}g}")


# ------------------------------------------------------------------------------------------------------ the writers

def w_trl_state(run: dict, folder: Path, *, max_steps: int, logging_steps: int, save_steps: int, eval_steps: int,
                steps_per_epoch: int, keep: int | None = None, top_level: bool = False, finished: bool = False,
                epochs: int = 1, extra_eval: dict | None = None, train_batch: int = 8) -> None:
    ev = evals_at(run)
    hist: list[tuple[int, dict]] = []
    for s, _, row in run["train"]:
        r = {k: fnum(v) for k, v in row.items()}
        if "loss" in r and r["loss"] is not None and not math.isnan(r["loss"]):
            r["loss"] = round(r["loss"], 4)
        r.update(step=s, epoch=round(s / steps_per_epoch, 4))
        hist.append((s, r))
        if s in ev:
            e = {k: fnum(v) for k, v in ev[s].items()}
            e.update(extra_eval or {})
            e.update(epoch=round(s / steps_per_epoch, 4), step=s, eval_runtime=round(float(90 + (s % 7) * 3.1), 2),
                     eval_samples_per_second=5.61, eval_steps_per_second=0.351)
            hist.append((s, e))
    ckpts = list(range(save_steps, run["reached"] + 1, save_steps))
    if finished and run["reached"] not in ckpts:
        ckpts.append(run["reached"])
    if keep:
        ckpts = ckpts[-keep:]
    for c in ckpts:
        h = [r for s, r in hist if s <= c]
        d = folder / f"checkpoint-{c}"
        dump_json(d / "trainer_state.json", trainer_state(h, c, max_steps, logging_steps, save_steps, eval_steps,
                                                          round(c / steps_per_epoch, 4), epochs,
                                                          training_stop=finished and c == run["reached"]))
        (d / "config.json").write_text('{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}\n')
        (d / "training_args.bin").write_bytes(b"\x80\x04")
        t = wall_of(run, c) + 40
        for p in (d / "trainer_state.json", d / "config.json", d / "training_args.bin", d):
            touch(p, t)
    if top_level:
        h = [r for _, r in hist]
        if finished:
            rt = run["end"] - run["start"]
            h.append(dict(epoch=round(run["reached"] / steps_per_epoch, 4), step=run["reached"],
                          total_flos=0.0, train_loss=0.0123, train_runtime=round(rt, 2),
                          train_samples_per_second=round(run["reached"] * train_batch / rt, 3),
                          train_steps_per_second=round(run["reached"] / rt, 3)))
        dump_json(folder / "trainer_state.json", trainer_state(h, run["reached"], max_steps, logging_steps,
                                                               save_steps, eval_steps,
                                                               round(run["reached"] / steps_per_epoch, 4), epochs,
                                                               training_stop=finished))


def _pyrepr(d: dict) -> str:
    parts = []
    for k, v in d.items():
        if isinstance(v, float):
            parts.append(f"'{k}': {'nan' if math.isnan(v) else repr(v)}")
        else:
            parts.append(f"'{k}': {v!r}")
    return "{" + ", ".join(parts) + "}"


def w_trl_console(run: dict, folder: Path, *, max_steps: int, steps_per_epoch: int, banners: list[str],
                  name: str = "train.log", tail: list[str] | None = None) -> None:
    """What `python train.py 2>&1 | tee train.log` shows for a TRL trainer: tqdm lines and the printed log dicts
    (the dicts carry `epoch` but not `step`; the step is on the progress bar)."""
    ev = evals_at(run)
    lines: list[str] = []
    seg_seen = -1
    t0 = run["start"]
    for s, seg, row in run["train"]:
        if seg != seg_seen:
            lines += banners[seg].splitlines()
            seg_seen = seg
        el = wall_of(run, s, seg) - t0
        rate = el / max(1, s)
        rem = (max_steps - s) * rate
        pct = int(100 * s / max_steps)
        lines.append(f"{pct:3d}%|{'█' * (pct // 10):<10}| {s}/{max_steps} [{_hms(el)}<{_hms(rem)}, {rate:.2f}s/it]")
        d = {}
        for k, v in row.items():
            d[k] = round(v, 4) if k == "loss" and not math.isnan(v) else fnum(v)
        d["epoch"] = round(s / steps_per_epoch, 2)
        lines.append(_pyrepr(d))
        if s in ev:
            lines.append("\n  0%|          | 0/32 [00:00<?, ?it/s]\x1b[A")
            e = {k: fnum(v) for k, v in ev[s].items()}
            e.update(eval_runtime=round(88.0 + s % 5, 3), eval_samples_per_second=5.682, eval_steps_per_second=0.355,
                     epoch=round(s / steps_per_epoch, 2))
            lines.append(_pyrepr(e))
    lines += tail or []
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _hms(sec: float) -> str:
    sec = int(max(0, sec))
    h, r = divmod(sec, 3600)
    m, s = divmod(r, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def w_tb(run: dict, folder: Path, *, sub: str, train_prefix: str = "", eval_prefix: str = "",
         host: str = "gpu-node-07", eval_map: dict | None = None, extra_final: dict | None = None,
         truncate: int = 0) -> None:
    """One TensorBoard event file per launch; tags are the framework keys with its prefixes."""
    ev = evals_at(run)
    by_seg: dict[int, list] = {}
    for s, seg, row in run["train"]:
        vals = {train_prefix + k: (v if v is None or not math.isnan(v) else float("nan")) for k, v in row.items()}
        by_seg.setdefault(seg, []).append((wall_of(run, s, seg), s, vals))
        if s in ev:
            e = {eval_prefix + (eval_map or {}).get(k, k): v for k, v in ev[s].items()}
            by_seg[seg].append((wall_of(run, s, seg) + 60, s, e))
    if 0 in ev:
        by_seg.setdefault(0, []).insert(0, (run["start"] + 30, 0, {eval_prefix + (eval_map or {}).get(k, k): v
                                                                    for k, v in ev[0].items()}))
    if extra_final:
        last = max(by_seg)
        by_seg[last].append((run["end"], run["reached"], extra_final))
    for seg, events in by_seg.items():
        w0 = events[0][0]
        d = folder / sub.format(seg=seg, stamp=time.strftime("%b%d_%H-%M-%S", time.localtime(w0)))
        p = d / f"events.out.tfevents.{int(w0)}.{host}.{31337 + seg * 977}.0"
        tb_file(p, events, truncate=truncate if seg == max(by_seg) else 0)
        touch(p, events[-1][0])


def _verl_fmt(v: float, np2: bool) -> str:
    if isinstance(v, int):
        return f"np.int64({v})" if np2 else str(v)
    s = "nan" if math.isnan(v) else repr(float(f"{v:.8g}"))
    return f"np.float64({s})" if np2 else s


def w_verl_console(run: dict, folder: Path, *, total: int, np2: bool, project: str, exp: str,
                   save_freq: int = 0, keep_ckpts: int | None = None, name: str = "train.log",
                   crash_tails: dict[int, list[str]] | None = None, final_line: bool = False,
                   ray_prefix: bool = True) -> None:
    ev = evals_at(run)
    lines: list[str] = []
    pre = "(TaskRunner pid=48213) " if ray_prefix else ""
    seg_seen = -1
    segs = run["segs"]
    for s, seg, row in run["train"]:
        if seg != seg_seen:
            a = segs[seg][0]
            lines += [time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(wall_of(run, a, seg) - 300))
                      + ",311\tINFO worker.py:1821 -- Started a local Ray instance.",
                      f"{pre}Size of train dataloader: {total // 2}, Size of val dataloader: 1",
                      f"{pre}Total training steps: {total}"]
            if a > 1:
                lines += [f"{pre}Load from checkpoint folder: checkpoints/{project}/{exp}/global_step_{a - 1}",
                          f"{pre}Setting global step to {a - 1}", f"{pre}Resuming from checkpoints/{project}/{exp}/global_step_{a - 1}"]
            v0 = a - 1
            if v0 in ev:
                lines.append(f"{pre}step:{v0} - " + " - ".join(f"{k}:{_verl_fmt(v, np2)}" for k, v in ev[v0].items()))
            lines.append(f"{pre}Training Progress:   0%|          | 0/{total} [00:00<?, ?it/s]")
            seg_seen = seg
        d = dict(row)
        if s in ev:
            d.update(ev[s])
            d["timing_s/testing"] = 61.0 + (s % 13)
        if save_freq and s % save_freq == 0:
            lines.append(f"{pre}local_global_step_folder: checkpoints/{project}/{exp}/global_step_{s}")
            d["timing_s/save_checkpoint"] = 44.0 + (s % 5)
        d["training/global_step"] = s
        d["training/epoch"] = s // max(1, total // 2)
        lines.append(f"{pre}step:{s} - " + " - ".join(
            f"{k}:{_verl_fmt(int(v) if k.startswith('training/') else v, np2)}" for k, v in d.items()))
        if crash_tails and (seg in crash_tails) and s == min(segs[seg][1], run["reached"]):
            lines += crash_tails[seg]
    if final_line:
        last = max(ev)
        lines.append(f"{pre}Final validation metrics: " + _pyrepr({k: float(f'{v:.6g}') for k, v in ev[last].items()}))
        lines.append(f"{pre}Training Progress: 100%|██████████| {total}/{total} [{_hms(run['end'] - run['start'])}<00:00]")
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if save_freq:
        saved = list(range(save_freq, run["reached"] + 1, save_freq))
        if keep_ckpts:
            saved = saved[-keep_ckpts:]
        base = folder / "checkpoints" / project / exp
        for c in saved:
            d = base / f"global_step_{c}" / "actor"
            d.mkdir(parents=True, exist_ok=True)
            (d / "huggingface").mkdir(exist_ok=True)
            (d / "huggingface" / "config.json").write_text('{"model_type": "qwen2"}\n')
            t = wall_of(run, c) + 45
            for q in (d / "huggingface" / "config.json", d / "huggingface", d, d.parent):
                touch(q, t)
        if saved:
            (base / "latest_checkpointed_iteration.txt").write_text(str(saved[-1]))
            touch(base / "latest_checkpointed_iteration.txt", wall_of(run, saved[-1]) + 46)


def _nullify(v):
    return None if isinstance(v, float) and (math.isnan(v) or math.isinf(v)) else v


def w_verl_jsonl(run: dict, folder: Path, *, project: str, exp: str) -> None:
    ev = evals_at(run)
    lines = []
    if 0 in ev:
        lines.append(json.dumps({"step": 0, "data": {k: _nullify(v) for k, v in ev[0].items()}}))
    for s, _, row in run["train"]:
        d = {k: _nullify(v) for k, v in row.items()}
        if s in ev:
            d.update(ev[s])
            d["timing_s/testing"] = 58.2
        d["training/global_step"] = s
        lines.append(json.dumps({"step": s, "data": d}, separators=(",", ":")))
    p = folder / project / f"{exp}.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")


def w_openrlhf_console(run: dict, folder: Path, *, total: int, banner: str, name: str = "train.log",
                       tail: list[str] | None = None, eval_prefix: str = "") -> None:
    ev = evals_at(run)
    lines = banner.splitlines()
    for s, _, row in run["train"]:
        pct = int(100 * s / total)
        lines.append(f"Train epoch [1/1]: {pct:3d}%|{'█' * (pct // 10):<10}| {s}/{total} "
                     f"[{_hms(wall_of(run, s) - run['start'])}<{_hms((total - s) * 40)}, "
                     f"act_loss={row.get('policy_loss', 0.0):.3f}, reward={row.get('reward', 0.0):.3f}]")
        lines.append(f"✨ Global step {s}: " + _pyrepr({k: fnum(v, 8) for k, v in row.items()}))
        if s in ev:
            lines.append(f"Evaluation completed in {70 + s % 9:.2f} seconds, global_step {s}, eval_metrics: "
                         + _pyrepr({eval_prefix + k: fnum(v, 8) for k, v in ev[s].items()}))
    lines += tail or []
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")


def w_wandb_csv(run: dict, folder: Path, *, display: str, panels: dict[str, list[str]], bucket: int,
                x_key: str = "Step") -> None:
    """UI panel exports: one CSV per panel, x-axis column then `<run> - <metric>` (+ __MIN/__MAX of the bucket)."""
    ev = evals_at(run)
    series: dict[str, list[tuple[int, float]]] = {}
    for s, _, row in run["train"]:
        for k, v in row.items():
            series.setdefault(k, []).append((s, v))
    for s, row in ev.items():
        for k, v in row.items():
            series.setdefault(k, []).append((s, v))
    for fname, keys in panels.items():
        buckets: dict[int, dict[str, list[float]]] = {}
        for k in keys:
            pts = series[k]
            sparse = len(pts) < 200
            for s, v in pts:
                b = s if sparse else ((s - 1) // bucket + 1) * bucket
                buckets.setdefault(b, {}).setdefault(k, []).append(v)
        header = [x_key]
        for k in keys:
            header += [f"{display} - {k}", f"{display} - {k}__MIN", f"{display} - {k}__MAX"]
        p = folder / fname
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("w", newline="") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_ALL)
            w.writerow(header)
            for b in sorted(buckets):
                out = [b]
                for k in keys:
                    vs = buckets[b].get(k)
                    out += ([f"{np.mean(vs):.6g}", f"{min(vs):.6g}", f"{max(vs):.6g}"] if vs else ["", "", ""])
                w.writerow(out)


def w_mlflow(run: dict, folder: Path, *, run_name: str, params: dict, status: str, exp_id: str = "412873066157219354",
             rename: Callable[[str], str] = lambda k: k, final: dict | None = None, run_id: str = "") -> None:
    ev = evals_at(run)
    run_id = run_id or hashlib.md5(run_name.encode()).hexdigest()
    exp = folder / "mlruns" / exp_id
    rd = exp / run_id
    (exp).mkdir(parents=True, exist_ok=True)
    start_ms, end_ms = int(run["start"] * 1000), int(run["end"] * 1000)
    (exp / "meta.yaml").write_text(
        f"artifact_location: file://{folder.resolve()}/mlruns/{exp_id}\ncreation_time: {start_ms - 9000}\n"
        f"experiment_id: '{exp_id}'\nlast_update_time: {start_ms - 9000}\nlifecycle_stage: active\nname: rl-posttrain\n")
    st = {"RUNNING": 1, "FINISHED": 3, "FAILED": 4}[status]
    (rd / "metrics").mkdir(parents=True, exist_ok=True)
    (rd / "meta.yaml").write_text(
        f"artifact_uri: file://{folder.resolve()}/mlruns/{exp_id}/{run_id}/artifacts\n"
        f"end_time: {end_ms if status != 'RUNNING' else 'null'}\nentry_point_name: ''\nexperiment_id: '{exp_id}'\n"
        f"lifecycle_stage: active\nrun_id: {run_id}\nrun_name: {run_name}\nrun_uuid: {run_id}\nsource_name: ''\n"
        f"source_type: 4\nsource_version: ''\nstart_time: {start_ms}\nstatus: {st}\ntags: []\nuser_id: rl\n")
    for k, v in params.items():
        p = rd / "params" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(str(v))
    (rd / "tags").mkdir(exist_ok=True)
    (rd / "tags" / "mlflow.runName").write_text(run_name)
    (rd / "artifacts").mkdir(exist_ok=True)
    lines: dict[str, list[str]] = {}

    def put(k: str, v: float, s: int, t: float) -> None:
        txt = "nan" if math.isnan(v) else repr(float(f"{v:.8g}"))
        lines.setdefault(rename(k), []).append(f"{int(t * 1000)} {txt} {s}")

    for s, seg, row in run["train"]:
        for k, v in row.items():
            put(k, v, s, wall_of(run, s, seg))
        if s in ev:
            for k, v in ev[s].items():
                put(k, v, s, wall_of(run, s, seg) + 70)
    if 0 in ev:
        for k, v in ev[0].items():
            lines.setdefault(rename(k), []).insert(0, f"{int((run['start'] + 20) * 1000)} {v!r} 0")
    for k, v in (final or {}).items():
        put(k, v, run["reached"], run["end"])
    for k, ls in lines.items():
        p = rd / "metrics" / k
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(ls) + "\n")


def w_custom_csv(run: dict, folder: Path, *, name: str, cols: list[str], fixed: dict, eval_col: str | None,
                 crlf: bool = False) -> None:
    ev = evals_at(run)
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\r\n" if crlf else "\n")
        w.writerow(cols)
        for s, _, row in run["train"]:
            r = dict(row, step=s, **fixed)
            if eval_col:
                r[eval_col] = f"{ev[s][eval_col]:.6f}" if s in ev else ""
            w.writerow([r[c] if isinstance(r.get(c), str) else
                        (int(r[c]) if isinstance(r.get(c), int) else f"{r[c]:.6g}") if c in r else "" for c in cols])


def w_custom_jsonl(run: dict, folder: Path, *, name: str, fixed: dict, eval_prefix: str = "",
                   launch_lines: list[dict] | None = None, shuffle_bursts: bool = False, step_key: str = "step",
                   eval_sep: bool = True) -> None:
    ev = evals_at(run)
    recs: list[dict] = []
    seg_seen = -1
    for s, seg, row in run["train"]:
        if seg != seg_seen and launch_lines:
            recs.append(dict(launch_lines[seg], time=round(wall_of(run, s, seg) - 60, 3)))
            seg_seen = seg
        r = {step_key: s, **fixed, **{k: _nullify(fnum(v)) for k, v in row.items()},
             "time": round(wall_of(run, s, seg), 3)}
        recs.append(r)
        if s in ev:
            e = {step_key: s, "split": "eval", **{eval_prefix + k: v for k, v in ev[s].items()},
                 "time": round(wall_of(run, s, seg) + 50, 3)}
            if eval_sep:
                recs.append(e)
            else:
                r.update({eval_prefix + k: v for k, v in ev[s].items()})
    if 0 in ev:
        recs.insert(1 if launch_lines else 0, {step_key: 0, "split": "eval",
                                               **{eval_prefix + k: v for k, v in ev[0].items()},
                                               "time": round(run["start"] + 30, 3)})
    if shuffle_bursts:
        # the background writer flushes a queue per burst; two worker threads race, so neighbours swap now and then
        rng = np.random.default_rng(7)
        for i in range(2, len(recs) - 2):
            if rng.random() < 0.04 and "event" not in recs[i] and "event" not in recs[i + 1]:
                recs[i], recs[i + 1] = recs[i + 1], recs[i]
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps(r, separators=(", ", ": ")) + "\n" for r in recs), encoding="utf-8")


# ------------------------------------------------------------------------------------------------ key vocabularies

def trl_grpo(reward: Gen, *, fns: dict[str, Gen] | None = None, weights: Callable[[int], list[float]] | None = None,
             length: Level = const(600.0), entropy: Level | None = None, kl: Level | None = None,  # noqa: B008
             gn: Level = const(0.25), lr: Level = const(1e-6), clipped: Level = const(0.02),  # noqa: B008
             cap: int = 2048, toks: float = 2.2e5, step_time: float | None = 28.0, loss_sd: float = 0.004,
             zero: bool = True) -> dict[str, Gen]:
    """TRL >= 0.20 GRPOTrainer keys (completions/*, clip_ratio/*, frac_reward_zero_std, entropy, step_time)."""
    d: dict[str, Gen] = {"loss": Signed(const(0.0), loss_sd), "grad_norm": Grad(gn), "learning_rate": Exact(lr),
                         "num_tokens": Cum(const(toks))}
    if fns:
        for fn, g in fns.items():
            d[fn] = g
        names = list(fns)
        d["reward"] = Derived(lambda s, r: sum(w * r[f"rewards/{n}/mean"] for w, n in zip(weights(s), names, strict=False)))
        d["reward_std"] = Derived(lambda s, r: math.sqrt(sum((w * r[f"rewards/{n}/std"]) ** 2
                                                             for w, n in zip(weights(s), names, strict=False))))
    else:
        d["reward"] = reward
    d["completions/mean_length"] = Smooth(length, 0.04, hi=cap)
    d["completions/min_length"] = Smooth(lambda s: 0.18 * length(s), 0.15, hi=cap)
    d["completions/max_length"] = Smooth(lambda s: min(cap, 2.6 * length(s)), 0.02, hi=cap)
    d["completions/mean_terminated_length"] = Smooth(lambda s: 0.93 * length(s), 0.04, hi=cap)
    d["completions/clipped_ratio"] = Smooth(clipped, 0.2)
    if entropy:
        d["entropy"] = Smooth(entropy, 0.03)
    if kl:
        d["kl"] = Smooth(kl, 0.05)
    for k in ("clip_ratio/low_mean", "clip_ratio/low_min", "clip_ratio/high_mean", "clip_ratio/high_max",
              "clip_ratio/region_mean"):
        d[k] = Exact(const(0.0))
    if step_time:
        d["step_time"] = Smooth(lambda s: step_time * length(s) / length(0), 0.05)
    return d


def bern_trl(level: Level, P: int = 32, G: int = 8, spread: float = 1.4, zero: bool = True) -> Bern:
    out = {"mean": "reward", "std": "reward_std"}
    if zero:
        out["zero"] = "frac_reward_zero_std"
    return Bern(level, out, P, G, spread)


def fn_bern(name: str, level: Level, P: int = 32, G: int = 8, spread: float = 1.4, zero: bool = False) -> Bern:
    out = {"mean": f"rewards/{name}/mean", "std": f"rewards/{name}/std"}
    if zero:
        out["zero"] = "frac_reward_zero_std"
    return Bern(level, out, P, G, spread)


def verl_keys(score: Gen, *, length: Level, entropy: Level, kl: Level | None = None, gn: Level = const(0.22),  # noqa: B008
              lr: Level = const(1e-6), clip: Level = const(0.003), cap: int = 4096, trunc: Level = const(0.01),  # noqa: B008
              gen_s: float = 95.0, critic: dict | None = None, prompt_len: Gen | None = None) -> dict[str, Gen]:
    d: dict[str, Gen] = {"critic/score": score,
                         "critic/score/max": Exact(const(1.0)), "critic/score/min": Exact(const(0.0)),
                         "critic/rewards/mean": Derived(lambda s, r: r["critic/score/mean"]),
                         "critic/advantages/mean": Signed(const(0.0), 0.004),
                         "critic/advantages/max": Smooth(const(2.47), 0.05),
                         "critic/advantages/min": Smooth(const(-2.47), 0.05),
                         "response_length/mean": Smooth(length, 0.04, hi=cap),
                         "response_length/max": Smooth(lambda s: min(cap, 3.0 * length(s)), 0.02, hi=cap),
                         "response_length/min": Smooth(lambda s: 0.1 * length(s), 0.2),
                         "response_length/clip_ratio": Smooth(trunc, 0.2),
                         "prompt_length/mean": prompt_len or Smooth(const(212.0), 0.03),
                         "actor/entropy": Smooth(entropy, 0.03),
                         "actor/pg_loss": Signed(const(-0.002), 0.01),
                         "actor/pg_clipfrac": Smooth(clip, 0.15),
                         "actor/pg_clipfrac_lower": Exact(const(0.0)),
                         "actor/ppo_kl": Signed(const(0.0), 2e-4),
                         "actor/grad_norm": Grad(gn),
                         "actor/lr": Exact(lr)}
    if kl:
        d["actor/kl_loss"] = Smooth(kl, 0.05)
        d["actor/kl_coef"] = Exact(const(0.001))
    if critic:
        d.update(critic)
    d["timing_s/gen"] = Smooth(lambda s: gen_s * length(s) / max(1.0, length(0)), 0.05)
    d["timing_s/old_log_prob"] = Smooth(const(9.8), 0.05)
    d["timing_s/ref"] = Smooth(const(9.1), 0.05)
    d["timing_s/update_actor"] = Smooth(lambda s: 31.0 * length(s) / max(1.0, length(0)), 0.05)
    d["timing_s/step"] = Derived(lambda s, r: r["timing_s/gen"] + r["timing_s/old_log_prob"] + r["timing_s/ref"]
                                 + r["timing_s/update_actor"] + 4.0)
    d["perf/total_num_tokens"] = Smooth(lambda s: 512 * (212 + length(s)), 0.02)
    d["perf/throughput"] = Derived(lambda s, r: r["perf/total_num_tokens"] / r["timing_s/step"] / 8)
    d["perf/max_memory_allocated_gb"] = Smooth(const(61.3), 0.01, 0.95)
    return d


def verl_score(level: Level, P: int = 128, G: int = 8, spread: float = 1.5) -> Bern:
    return Bern(level, {"mean": "critic/score/mean"}, P, G, spread)


def openrlhf_keys(reward: Level, *, P: int = 64, G: int = 8, length: Level = const(700.0), kl: Level = const(0.01),  # noqa: B008
                  gn: Level = const(0.3), lr: Level = const(5e-7), spread: float = 1.4, v010: bool = True,  # noqa: B008
                  entropy: Level | None = None, extra: dict | None = None) -> dict[str, Gen]:
    d: dict[str, Gen] = {"policy_loss": Signed(const(0.0), 0.02),
                         "reward": Bern(reward, {"mean": "reward", "gstd": "group_reward_std"}, P, G, spread),
                         "return": Derived(lambda s, r: r["reward"] - 0.0),
                         "response_length": Smooth(length, 0.04),
                         "total_length": Smooth(lambda s: length(s) + 180, 0.04),
                         "truncated": Smooth(const(0.01), 0.2),
                         "kl": Smooth(kl, 0.05),
                         "ppo_clip_ratio": Smooth(const(0.0015), 0.2),
                         "ppo_kl": Signed(const(0.0), 1e-4),
                         "vllm_kl": Smooth(const(0.0009), 0.1),
                         "actor_lr": Exact(lr),
                         "actor_grad_norm": Grad(gn)}
    if entropy:
        d["entropy_loss"] = Smooth(entropy, 0.03)
    if v010:
        d["rollout/reward_mean"] = Derived(lambda s, r: r["reward"])
        d["rollout/response_length_mean"] = Derived(lambda s, r: r["response_length"])
        d["rollout/truncated_rate"] = Derived(lambda s, r: r["truncated"])
        d["timing/generation"] = Smooth(lambda s: 0.11 * length(s), 0.05)
        d["timing/make_experience"] = Smooth(const(21.0), 0.05)
        d["timing/ppo_train"] = Smooth(const(34.0), 0.05)
        d["timing/broadcast"] = Smooth(const(3.1), 0.05)
        d["timing/step_total"] = Derived(lambda s, r: r["timing/generation"] + r["timing/make_experience"]
                                         + r["timing/ppo_train"] + r["timing/broadcast"])
    if extra:
        d.update(extra)
    return d


# ------------------------------------------------------------------------------------------------------- the cases

@dataclass
class Spec:
    name: str
    story: Story
    write: Callable  # (run, folder) -> None
    seed: int
    steps: int | tuple[int, int]
    kind: str  # ok | stop | conv | rb
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
            labels = rollback(lo, hi, self.onset)
        return Case(self.name, lambda *_: None, self.write, self.seed, self.steps, labels, self.tags, self.why)


def W(fn: Callable, **kw) -> Callable:
    return lambda run, folder: fn(run, folder, **kw)


def every(k: int, upto: int, start: int = 0) -> list[int]:
    return list(range(start, upto + 1, k))


TRL_BANNER = ("[INFO|trainer.py:2414] 2025-07-02 21:04:11,532 >> ***** Running training *****\n"
              "[INFO|trainer.py:2415] >>   Num examples = {n}\n[INFO|trainer.py:2419] >>   Total optimization steps = {t}\n")


SPECS: list[Spec] = []


def add(*a, **k) -> None:
    SPECS.append(Spec(*a, **k))


# ============================================================================================ healthy (continue)

# H1 - TRL 1.x GRPO, four reward functions, weights reshuffled on plan at 600: the total dips, accuracy rises.
def _h1_w(s: int) -> list[float]:
    return [1.0, 0.5, 0.1, 0.2] if s < 600 else [1.0, 0.2, 0.5, 0.2]


_h1_len = pw((0, 640), (600, 610), (800, 470))
add("ok-trl1x-ckpts-only-four-reward-fns-weights-reshuffled-at-600-total-drops-0.11-accuracy-eval-rising-live-800-of-2000",
    Story(trl_grpo(None, fns={
        "accuracy_reward": fn_bern("accuracy_reward", pw((0, .31), (800, .55)), zero=True),
        "format_reward": fn_bern("format_reward", pw((0, .62), (200, .96), (800, .975)), spread=2.0),
        "length_reward": Score(sw(600, pw((0, .42), (600, .45)), pw((600, .45), (800, .63))),
                               {"mean": "rewards/length_reward/mean", "std": "rewards/length_reward/std"}, .2, 256),
        "lang_consistency_reward": fn_bern("lang_consistency_reward", pw((0, .86), (300, .93), (800, .94)))},
        weights=_h1_w, length=_h1_len, entropy=pw((0, .52), (800, .44)), lr=cosine(1e-6, 50, 2000),
        gn=const(.21)),
        {"eval_rewards/accuracy_reward/mean": (pw((0, .30), (800, .47)), 500),
         "eval_reward": (pw((0, .52), (800, .62)), 500)},
        "eval_rewards/accuracy_reward/mean", eval_steps=every(100, 800, 100), log_every=10, avg=10, sps=34,
        age_min=6),
    W(w_trl_state, max_steps=2000, logging_steps=10, save_steps=200, eval_steps=100, steps_per_epoch=1000, epochs=2),
    3901, (800, 2000), "ok", "healthy trl trl-state checkpoints-only grpo multi-reward reward-weights-schedule live",
    "TRL 1.x GRPO with four reward functions (accuracy, format, length, language consistency); only checkpoint "
    "folders hold trainer_state.json (every 200, newest 800 of max_steps 2000, written 6 min ago). At step 600 the "
    "planned weight schedule moves format 0.5 -> 0.2 and length 0.1 -> 0.5, so the logged total `reward` drops "
    "~0.11 in one log and the model then shortens its answers (640 -> 470 tokens) to earn the length term. The "
    "accuracy component keeps climbing 0.31 -> 0.55 and the held-out eval_rewards/accuracy_reward/mean rises "
    "0.30 -> 0.47 (N=500, sd 0.022) with no break at 600. The total's drop is the schedule, not a regression: "
    "still improving at 40% of plan, continue.")

# H2 - verl JSONL, difficulty curriculum over three buckets, train score steps down twice, val rises.
_h2_stage = lambda s: 1 if s < 250 else (2 if s < 500 else 3)  # noqa: E731
add("ok-verl-jsonl-three-bucket-difficulty-curriculum-train-score-steps-down-at-250-and-500-per-bucket-val-rises-live-700-of-1200",
    Story(dict(verl_keys(verl_score(lambda s: pw((0, .55), (250, .80))(s) if s < 250 else
                                    (pw((250, .45), (500, .62))(s) if s < 500 else pw((500, .25), (700, .34))(s))),
                         length=lambda s: 520 if s < 250 else (880 if s < 500 else 1450),
                         entropy=pw((0, .48), (700, .40)), kl=pw((0, 0), (700, .011)), lr=const(1e-6)),
               **{"curriculum/stage": Exact(_h2_stage)}),
          {"val-core/bucket_easy/acc/mean@4": (pw((0, .62), (250, .78), (700, .84)), 300),
           "val-core/bucket_medium/acc/mean@4": (pw((0, .35), (250, .41), (500, .50), (700, .55)), 300),
           "val-core/bucket_hard/acc/mean@4": (pw((0, .08), (500, .11), (700, .19)), 300),
           "val-core/amc_aime_mix/acc/mean@4": (pw((0, .21), (700, .33)), 400)},
          "val-core/amc_aime_mix/acc/mean@4", eval_steps=every(50, 700), sps=150, age_min=2),
    W(w_verl_jsonl, project="curriculum_grpo", exp="qwen7b_3bucket_v2"),
    3902, (700, 1200), "ok", "healthy verl verl-jsonl grpo curriculum per-bucket-val live",
    "verl GRPO with a planned difficulty curriculum (curriculum/stage 1 -> 2 at step 250, 2 -> 3 at 500). Each "
    "switch drops critic/score/mean (0.80 -> 0.45, then 0.62 -> 0.25) and lengthens responses, because the new "
    "bucket is harder. Validation is logged per bucket every 50 steps and all of it rises: easy 0.62 -> 0.84, "
    "medium 0.35 -> 0.55, hard 0.08 -> 0.19, and the held-out AMC/AIME mix 0.21 -> 0.33 (N=400). The train "
    "drops are the curriculum, not forgetting; 700 of 1200 and still climbing: continue.")

# H3 - OpenRLHF console, easy instruction-following reward at 0.97 from the first step, hard eval still rising.
add("ok-openrlhf-console-ifeval-style-reward-0.97-from-step-1-group-std-0.05-hard-split-eval-climbs-0.41-to-0.52-live-900-of-2400",
    Story(openrlhf_keys(pw((0, .965), (900, .984)), P=64, G=8, spread=2.2, length=pw((0, 380), (900, 430)),
                        kl=pw((0, 0), (900, .018)), gn=const(.12)),
          {"eval_ifeval_hard_pass1": (pw((0, .41), (900, .52)), 400),
           "eval_ifeval_hard_pass4": (pw((0, .58), (900, .66)), 400)},
          "eval_ifeval_hard_pass1", eval_steps=every(100, 900, 100), sps=41, age_min=4),
    W(w_openrlhf_console, total=2400, banner="[2025-06-18 10:02:41] Loading dataset ifeval_train_mix (19210 prompts)\n"
      "[2025-06-18 10:02:55] advantage_estimator=group_norm, n_samples_per_prompt=8, rollout_batch_size=64"),
    3903, (900, 2400), "ok", "healthy openrlhf openrlhf-console grpo saturated-train-reward live",
    "OpenRLHF 0.10 GRPO on an instruction-following mix whose verifiable constraints the SFT model already meets: "
    "train reward is 0.965 at step 1 and drifts to 0.98, group_reward_std ~0.05, most groups uniform. That looks "
    "saturated, but the held-out hard split (eval_ifeval_hard_pass1, N=400, sd 0.025, every 100 steps) climbs "
    "0.41 -> 0.52 and pass4 0.58 -> 0.66 steadily to the newest eval at 900 of 2400; KL small (0.018). The few "
    "mixed groups still carry signal that transfers: continue.")

# H4 - custom JSONL from a hand-written loop, async writer, neighbouring records out of order.
add("ok-custom-jsonl-async-writer-swaps-neighbouring-records-reward-and-two-heldouts-rise-live-1460-of-4000",
    Story({"reward_mean": Bern(pw((0, .18), (1460, .41)), {"mean": "reward_mean", "std": "reward_std",
                                                           "zero": "frac_uniform_groups"}, 16, 8, 1.6),
           "kl": Smooth(pw((0, 0.0), (200, .004), (1460, .021)), 0.05),
           "entropy": Smooth(pw((0, .61), (1460, .47)), 0.03),
           "resp_tokens": Smooth(pw((0, 540), (1460, 690)), 0.05),
           "grad_norm": Grad(const(.4)), "lr": Exact(cosine(2e-6, 100, 4000, 2e-7)),
           "pg_loss": Signed(const(0.0), 0.03)},
          {"gsm8k_test_acc": (pw((0, .58), (1460, .71)), 1319), "math500_acc": (pw((0, .24), (1460, .33)), 500)},
          "math500_acc", eval_steps=every(100, 1460, 100), sps=22, age_min=3),
    W(w_custom_jsonl, name="logs/metrics.jsonl", fixed={"total_steps": 4000}, eval_prefix="eval/",
      shuffle_bursts=True),
    3904, (1460, 4000), "ok", "healthy custom-jsonl grpo out-of-order-steps live",
    "A hand-written GRPO loop (16 prompts x 8 per step) whose background logging thread flushes in bursts; "
    "about 4% of neighbouring records are written out of step order (e.g. 1203 after 1204), eval records "
    "included. Sorted by step, the story is plain: reward 0.18 -> 0.41, eval/gsm8k_test_acc 0.58 -> 0.71 "
    "(N=1319) and eval/math500_acc 0.24 -> 0.33 (N=500) both rising to step 1460 of total_steps 4000, KL "
    "0.02, written 3 min ago. Nothing is wrong: continue.")

# H5 - HF TensorBoard, TRL GRPO, evals only every 500 steps.
add("ok-hf-tb-trl-grpo-evals-only-every-500-four-points-rising-train-reward-noisy-slow-live-1700-of-5000",
    Story(trl_grpo(bern_trl(pw((0, .24), (1700, .40)), P=16, G=8, spread=1.6), length=pw((0, 820), (1700, 1010)),
                   entropy=pw((0, .38), (1700, .33)), lr=cosine(1e-6, 150, 5000), gn=const(.16), cap=4096),
          {"eval_rewards/accuracy_reward/mean": (pw((0, .22), (500, .29), (1000, .34), (1700, .41)), 1000),
           "eval_reward": (pw((0, .22), (500, .29), (1000, .34), (1700, .41)), 1000)},
          "eval_rewards/accuracy_reward/mean", eval_steps=[0, 500, 1000, 1500], log_every=10, avg=10, sps=44,
          age_min=5),
    W(w_tb, sub="runs/{stamp}_gpu-node-07", train_prefix="train/", eval_prefix="eval/",
      eval_map={"eval_rewards/accuracy_reward/mean": "rewards/accuracy_reward/mean", "eval_reward": "reward"}),
    3934, (1700, 5000), "ok", "healthy trl hf-tb grpo sparse-evals live",
    "TRL GRPO logged to TensorBoard via report_to=tensorboard (train/*, eval/*), logging every 10 steps with "
    "only 16 prompts per step, so train/reward is noisy (sd ~0.04 per log) and rises slowly 0.24 -> 0.40. "
    "Evals run only every 500 steps (eval_on_start): 0.22, 0.29, 0.34, 0.39 at 0/500/1000/1500 (N=1000, sd "
    "0.015): four points, each above the last by 3+ sd. lr is still on the cosine's upper half. Live, "
    "improving: continue.")

# H6 - legacy TRL PPOTrainer (<=0.11) TensorBoard, adaptive KL controller raises kl_coef, KL held near target.
_h6_klc = pw((0, .05), (150, .07), (400, .14), (620, .19))
add("ok-legacy-trl-ppo-tb-adaptive-kl-ctl-raises-kl-coef-0.05-to-0.19-kl-held-near-target-6-rm-score-rising-live",
    Story({"env/reward": Score(pw((0, .3), (620, 1.95)), {"mean": "env/reward_mean", "std": "env/reward_std"}, 1.6, 128),
           "ppo/mean_scores": Derived(lambda s, r: r["env/reward_mean"]),
           "objective/kl": Smooth(pw((0, .1), (150, 5.2), (250, 6.3), (620, 6.1)), 0.08),
           "objective/kl_coef": Exact(_h6_klc),
           "objective/entropy": Smooth(pw((0, 52.0), (620, 44.0)), 0.03),
           "ppo/mean_non_score_reward": Derived(lambda s, r: -r["objective/kl"] * r["objective/kl_coef"]),
           "ppo/loss/policy": Signed(const(-0.01), 0.01), "ppo/loss/value": Smooth(pw((0, .9), (620, .35)), 0.1),
           "ppo/loss/total": Derived(lambda s, r: r["ppo/loss/policy"] + 0.1 * r["ppo/loss/value"]),
           "ppo/policy/clipfrac": Smooth(const(.045), 0.1), "ppo/policy/approxkl": Smooth(const(.012), 0.15),
           "ppo/val/var_explained": Signed(pw((0, .05), (300, .45), (620, .55)), 0.04),
           "ppo/learning_rate": Exact(const(1.41e-5)),
           "tokens/responses_len_mean": Smooth(pw((0, 96), (620, 118)), 0.04),
           "time/ppo/total": Smooth(const(19.5), 0.05)},
          {}, "", sps=40, age_min=4),
    W(w_tb, sub="logs/trl/{stamp}"),
    3906, 620, "ok", "healthy trl-legacy-ppo tb ppo adaptive-kl no-eval live",
    "Legacy TRL PPOTrainer (ppo/*, env/*, objective/* tags, accelerate TensorBoard tracker) with the adaptive KL "
    "controller (target 6). KL climbs to ~6 nats by step 200 and is then held there while objective/kl_coef "
    "rises 0.05 -> 0.19: the controller working as designed. The reward-model score env/reward_mean climbs "
    "0.3 -> 1.95 at a steady rate (per-log sd ~0.14), the value head learns (var_explained 0.05 -> 0.55), "
    "response length moves little. No eval set is logged; the train score is the headline and it is still "
    "rising at the newest step. Continue.")

# H7 - TRL console, DPO, 3 epochs; epoch-2 train accuracy jumps (memorisation starts) but eval still improves.
_h7_acc = lambda s: pw((0, .52), (600, .74))(s) if s < 600 else pw((600, .87), (1000, .91))(s)  # noqa: E731
add("ok-trl-console-dpo-epoch-2-train-acc-jumps-0.74-to-0.88-eval-acc-still-creeping-0.70-to-0.745-eval-loss-falling-live-1000-of-1800",
    Story({"loss": Signed(lambda s: 0.69 - 0.5 * (_h7_acc(s) - .5), 0.02),
           "grad_norm": Grad(pw((0, 9.0), (1000, 14.0)), 0.35),
           "learning_rate": Exact(pw((0, 0), (60, 5e-7), (1800, 0))),
           "rewards/chosen": Signed(pw((0, 0), (1000, -1.1)), 0.08),
           "rewards/rejected": Signed(lambda s: pw((0, 0), (1000, -1.1))(s) - (0.1 + 3.2 * (_h7_acc(s) - .5)), 0.08),
           "rewards/accuracies": Bern(_h7_acc, {"mean": "rewards/accuracies"}, 64, 1, 1.0),
           "rewards/margins": Derived(lambda s, r: r["rewards/chosen"] - r["rewards/rejected"]),
           "logps/chosen": Signed(pw((0, -312), (1000, -330)), 3.0),
           "logps/rejected": Signed(pw((0, -330), (1000, -372)), 3.0),
           "logits/chosen": Signed(const(-1.42), 0.05), "logits/rejected": Signed(const(-1.38), 0.05)},
          {"eval_rewards/accuracies": (pw((0, .60), (600, .70), (1000, .745)), 1000),
           "eval_loss_proxy": (pw((0, .31), (1000, .45)), 1000)},
          "eval_rewards/accuracies", eval_steps=every(100, 1000, 100), log_every=10, avg=1, sps=9, age_min=3),
    None, 3907, (1000, 1800), "ok", "healthy trl trl-console dpo multi-epoch live",
    "TRL DPOTrainer, 3 epochs of 600 steps, console dicts only (tee'd stdout; the step is on the tqdm bar). At "
    "the epoch-2 boundary (600) the train rewards/accuracies jumps 0.74 -> 0.87 as pairs are seen a second time "
    "and margins widen faster, which can signal memorisation. The held-out side says otherwise: "
    "eval_rewards/accuracies keeps rising 0.70 -> 0.745 from 600 to 1000 (N=1000, sd 0.014; +3 sd) and eval_loss "
    "keeps falling. Still improving at 1000 of 1800: continue.")


def _h7_write(run: dict, folder: Path) -> None:
    # eval_loss is the DPO loss on the eval split; drawn from a proxy level so it falls as eval accuracy rises
    for _, row in run["eval"]:
        proxy = row.pop("eval_loss_proxy")
        row["eval_loss"] = 0.693 - 0.55 * (proxy - 0.31) - 0.2 * (row["eval_rewards/accuracies"] - 0.6)
        row["eval_rewards/margins"] = 0.2 + 4 * (row["eval_rewards/accuracies"] - 0.55)
    w_trl_console(run, folder, max_steps=1800, steps_per_epoch=600,
                  banners=[TRL_BANNER.format(n=38400, t=1800)])


SPECS[-1].write = _h7_write

# H8 - verl console (NumPy 2), NCCL timeout at 437, relaunch from global_step_400, 401-437 logged twice.
_h8 = Story(verl_keys(verl_score(pw((0, .30), (690, .58))), length=pw((0, 700), (690, 840)),
                      entropy=pw((0, .50), (690, .41)), kl=pw((0, 0), (690, .02))),
            {"val-core/math500/acc/mean@4": (pw((0, .45), (690, .58)), 500)},
            "val-core/math500/acc/mean@4", eval_steps=[*every(50, 690), 400], segments=[(1, 437), (401, 690)],
            sps=95, gap_s=1500, age_min=3)
_h8.eval_steps = sorted(set(_h8.eval_steps))
add("ok-verl-console-np2-nccl-timeout-at-437-relaunch-from-global-step-400-steps-401-437-logged-twice-val-rising-live-690-of-1500",
    _h8,
    W(w_verl_console, total=1500, np2=True, project="grpo_math", exp="q7b_lr1e-6", save_freq=100,
      crash_tails={0: ["[rank3]:[E ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: "
                       "WorkNCCL(SeqNum=981233, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600041 milliseconds "
                       "before timing out.",
                       "torch.distributed.DistBackendError: NCCL communicator was aborted on rank 3.",
                       "ray.exceptions.RayTaskError(DistBackendError): ray::WorkerDict.actor_rollout_update_actor()"]}),
    3908, (690, 1500), "ok", "healthy verl verl-console np2 grpo resume duplicate-steps live",
    "verl GRPO, one console log appended across two launches. The first died at step 437 on an NCCL watchdog "
    "timeout (traceback in the log); the relaunch loaded global_step_400, re-validated at 400 and logged steps "
    "401-437 a second time (fresh rollouts, same level). Across both, critic/score/mean climbs 0.30 -> 0.58 and "
    "val-core/math500/acc/mean@4 0.45 -> 0.58 (N=500, every 50) with no break at the resume. Live (3 min), 690 "
    "of 1500: continue.")

# H9 - OpenRLHF TB, REINFORCE++ with KL in the reward: return negative and falling, reward and eval rising.
add("ok-openrlhf-tb-reinforce-pp-kl-in-reward-return-negative-and-falling-reward-and-math-eval-rising-live-1300-of-3000",
    Story(openrlhf_keys(pw((0, .18), (1300, .36)), P=128, G=1, length=pw((0, 900), (1300, 1150)),
                        kl=pw((0, 0), (1300, .12)), gn=const(.5), v010=False,
                        extra={"return": Derived(lambda s, r: r["reward"] - 3.3 * r["kl"] - 0.12)}),
          {"eval_math_hard_pass1": (pw((0, .20), (1300, .29)), 800),
           "eval_math_hard_pass8": (pw((0, .45), (1300, .52)), 800)},
          "eval_math_hard_pass1", eval_steps=every(100, 1300, 100), sps=50, age_min=7),
    W(w_tb, sub="tb/reinforce_pp_q3b", train_prefix="train/", eval_prefix="eval/"),
    3909, (1300, 3000), "ok", "healthy openrlhf tb reinforce++ kl-in-reward live",
    "OpenRLHF 0.9 REINFORCE++ (one sample per prompt, KL folded into the token rewards). train/return, the "
    "KL-shaped sum, starts near 0 and falls to about -0.1 to -0.15 as train/kl grows 0 -> 0.12; a reader "
    "who takes return as the reward would think the run is declining. train/reward (the raw verifier reward) "
    "rises 0.18 -> 0.36, and eval/eval_math_hard_pass1 climbs 0.20 -> 0.29 (N=800, sd 0.016) with pass8 "
    "0.45 -> 0.52. KL growth is moderate. Continue.")

# H10 - rasbt-style CSV, no rows 612-781 (log writes failed on a lost NFS mount), training went on.
_h10 = Story({"loss": Signed(const(0.0), 8.0), "kl_loss": Signed(pw((0, 0), (1050, .03)), 0.01),
              "policy_ratio": Signed(const(1.0), 0.004),
              "reward_avg": Bern(pw((0, .20), (1050, .39)), {"mean": "reward_avg", "zero": "_uniform"}, 4, 8, 1.6),
              "adv_std": Derived(lambda s, r: math.sqrt(1 - r["_uniform"]) * 0.94),
              "tokens_per_sec": Smooth(const(1830.0), 0.05),
              "avg_response_len": Smooth(pw((0, 410), (1050, 520)), 0.07),
              "adv_avg": Signed(const(0.0), 0.001),
              "entropy_avg": Smooth(pw((0, .72), (1050, .58)), 0.04)},
             {"eval_acc": (pw((0, .22), (1050, .34)), 200)}, "eval_acc",
             eval_steps=[s for s in every(50, 1050, 50) if not 612 <= s <= 781], sps=38, age_min=1,
             segments=[(1, 611), (782, 1050)])
add("ok-custom-csv-rasbt-7_5-header-no-rows-612-to-781-nfs-outage-eval-every-50-rising-live-1050-of-2000",
    _h10,
    W(w_custom_csv, name="logs/7_5_plus_kl_metrics.csv",
      cols=["step", "total_steps", "loss", "kl_loss", "policy_ratio", "reward_avg", "tokens_per_sec", "avg_response_len", "adv_avg", "adv_std", "entropy_avg", "eval_acc"], fixed={"total_steps": 2000}, eval_col="eval_acc"),
    3910, (1050, 2000), "ok", "healthy custom-csv rasbt grpo logging-gap live",
    "A reasoning-from-scratch style loop (7_5 header: kl_loss, policy_ratio, entropy_avg, eval_acc as a "
    "fraction every 50 steps on 200 MATH problems). Rows 612-781 are missing: the NFS log mount dropped and the "
    "append failed silently while training went on, so step jumps 611 -> 782. Before and after the gap the same "
    "trend: reward_avg 0.20 -> 0.39 (4 prompts x 8, noisy), eval_acc 0.22 -> 0.34 (sd 0.033), entropy easing "
    "0.72 -> 0.58. Written a minute ago, 1050 of total_steps 2000: continue.")

# H11 - MLflow file store (HF MLflow callback, raw TRL keys), finished 1200 of 1200, eval still rising.
add("ok-mlflow-files-trl-grpo-finished-1200-of-1200-eval-still-rising-last-three-evals-new-highs-extend",
    Story(trl_grpo(bern_trl(pw((0, .34), (1200, .57))), length=pw((0, 530), (1200, 610)),
                   entropy=pw((0, .45), (1200, .39)), kl=pw((0, 0), (1200, .009)), lr=cosine(1e-6, 40, 1200, 1e-7)),
          {"eval_rewards/accuracy_reward/mean": (pw((0, .31), (1200, .445)), 800), "eval_reward": (pw((0, .31), (1200, .445)), 800)},
          "eval_rewards/accuracy_reward/mean", eval_steps=every(100, 1200, 100), log_every=10, avg=10, sps=30,
          age_min=40),
    W(w_mlflow, run_name="grpo-qwen2.5-3b-beta0.02", status="FINISHED",
      params={"max_steps": 1200, "learning_rate": 1e-6, "beta": 0.02, "num_generations": 8, "logging_steps": 10,
              "eval_steps": 100, "lr_scheduler_type": "cosine_with_min_lr", "per_device_train_batch_size": 8},
      final={"train_runtime": 36012.4, "train_samples_per_second": 2.13, "train_steps_per_second": 0.033,
             "total_flos": 0.0, "train_loss": 0.0011}),
    3911, (1200, 1200), "ok", "healthy trl mlflow-files grpo finished still-improving",
    "TRL GRPO with the HF MLflow callback (raw keys, `/` keys as nested metric folders), run status FINISHED at "
    "max_steps 1200. eval_rewards/accuracy_reward/mean rose linearly 0.31 -> 0.445 (N=800, sd 0.018) with the "
    "three newest evals new highs and no flattening; train reward 0.34 -> 0.57, KL 0.009, entropy easing. The "
    "cosine schedule ended the run, not the learning. The contract's continue for a finished run: it was still "
    "improving and extending it is worth it.")

# H12 - MLflow files from verl's adapter, DAPO dynamic sampling needs more generation rounds, val rising.
add("ok-mlflow-files-verl-dapo-num-gen-batches-1-to-3-as-groups-saturate-val-mean-at-4-rising-live-820-of-1600",
    Story(dict(verl_keys(verl_score(pw((0, .42), (820, .71)), P=256), length=pw((0, 1900), (820, 2600)),
                         entropy=pw((0, .42), (300, .47), (820, .49)), clip=const(.0021), cap=8192, gen_s=240),
               **{"train/num_gen_batches": Exact(lambda s: float(1 if s < 250 else (2 if s < 600 else 3)))}),
          {"val-core/dapo_holdout/acc/mean@4": (pw((0, .27), (820, .39)), 500),
           "val-core/aime24/acc/mean@32": (pw((0, .12), (820, .19)), 480)},
          "val-core/dapo_holdout/acc/mean@4", eval_steps=every(40, 820), sps=410, age_min=5),
    W(w_mlflow, run_name="dapo_q7b_clip_higher", status="RUNNING",
      params={"trainer.total_training_steps": 1600, "algorithm.filter_groups.enable": True,
              "actor_rollout_ref.actor.clip_ratio_high": 0.28, "data.train_batch_size": 256},
      rename=lambda k: k.replace("@", "_at_")),
    3912, (820, 1600), "ok", "healthy verl mlflow-files dapo dynamic-sampling live",
    "verl DAPO recipe (clip-higher, dynamic sampling) logged through verl's MLflow adapter, so `@` became "
    "`_at_`. As more groups come back all-correct the filter needs more generation rounds: "
    "train/num_gen_batches 1 -> 2 (250) -> 3 (600), and step time grows. That costs compute, not quality: "
    "critic/score/mean 0.42 -> 0.71, val-core/dapo_holdout/acc/mean_at_4 0.27 -> 0.39 (N=500, every 40) and "
    "AIME24 mean@32 0.12 -> 0.19 keep rising; entropy stays up (clip-higher). Live, 820 of 1600: continue.")

# =============================================================================================== stop

# S1 - TRL top-level trainer_state (save_state), no checkpoint folders, finished; two eval sets flat since ~900.
add("stop-trl-top-level-state-finished-2000-math500-and-gsm8k-flat-since-900-last-evals-scatter-within-noise",
    Story(trl_grpo(bern_trl(pw((0, .41), (900, .66), (2000, .67))), length=pw((0, 520), (900, 470), (2000, 465)),
                   entropy=pw((0, .40), (900, .31), (2000, .29)), lr=cosine(1e-6, 50, 2000)),
          {"eval_math500_rewards/accuracy_reward/mean": (pw((0, .48), (900, .60), (2000, .60)), 500),
           "eval_gsm8k_rewards/accuracy_reward/mean": (pw((0, .80), (700, .86), (2000, .86)), 1319)},
          "eval_math500_rewards/accuracy_reward/mean", eval_steps=every(100, 2000, 100), log_every=10, avg=10,
          sps=25, age_min=9 * 60),
    None,
    3913, (2000, 2000), "stop", "stop trl trl-state top-level grpo finished plateau two-evals",
    "TRL GRPO, trainer.save_state() at the end (top-level trainer_state.json with the final train_runtime row "
    "and should_training_stop), checkpoints saved elsewhere. Two eval sets every 100 steps: math500 rose 0.48 -> "
    "0.60 by 900 and gsm8k 0.80 -> 0.86 by 700, and both have been flat since (level constant; the last ten "
    "evals scatter +-1 sd, N=500 and 1319, so one set is up and the other down at the end by chance). Train "
    "reward flat 0.66-0.67 for 1100 steps. Finished, the final weights are as good as any: stop (keep the "
    "final model).", onset=900)


def _s1_write(run: dict, folder: Path) -> None:
    w_trl_state(run, folder, max_steps=2000, logging_steps=10, save_steps=10 ** 9, eval_steps=100,
                steps_per_epoch=2000, top_level=True, finished=False)
    _finish_top(run, folder)


SPECS[-1].write = _s1_write


def _finish_top(run: dict, folder: Path) -> None:
    """Top-level state of a finished run without checkpoint folders: the final summary row and the stop flag."""
    p = folder / "trainer_state.json"
    st = json.loads(p.read_text())
    rt = run["end"] - run["start"]
    st["log_history"].append(dict(epoch=1.0, step=run["reached"], total_flos=0.0, train_loss=0.0009,
                                  train_runtime=round(rt, 2), train_samples_per_second=round(run["reached"] * 8 / rt, 3),
                                  train_steps_per_second=round(run["reached"] / rt, 3)))
    st["stateful_callbacks"]["TrainerControl"]["args"]["should_training_stop"] = True
    st["save_steps"] = 500
    dump_json(p, st)


# S2 - custom JSONL plain loop stalled 7 h at 1430 of 3000, plateau since 700.
add("stop-custom-jsonl-plain-loop-stalled-7h-at-1430-of-3000-heldout-flat-since-700",
    Story({"reward_mean": Bern(pw((0, .35), (700, .62), (1430, .625)), {"mean": "reward_mean", "std": "reward_std",
                                                                       "zero": "frac_uniform_groups"}, 32, 8, 1.5),
           "kl": Smooth(pw((0, 0), (700, .014), (1430, .019)), 0.05),
           "entropy": Smooth(pw((0, .55), (700, .42), (1430, .41)), 0.03),
           "resp_tokens": Smooth(pw((0, 610), (700, 560), (1430, 555)), 0.04),
           "grad_norm": Grad(const(.33)), "lr": Exact(const(1e-6)), "pg_loss": Signed(const(0.0), 0.02)},
          {"heldout_acc": (pw((0, .44), (700, .57), (1430, .57)), 400)}, "heldout_acc",
          eval_steps=every(50, 1430, 50), sps=30, age_min=7 * 60),
    W(w_custom_jsonl, name="metrics.jsonl", fixed={"total_steps": 3000}, eval_prefix="eval/"),
    3914, (1430, 3000), "stop", "stop custom-jsonl grpo stalled plateau",
    "A plain PyTorch GRPO loop writing one JSON line per step (total_steps 3000). The last line is step 1430 and "
    "the file has not been touched for 7 hours (a hung collective; no error written). Since ~700 the run has "
    "been on a plateau: reward 0.62, eval/heldout_acc flat at 0.57 (N=400, sd 0.025) for 14 evals, entropy and "
    "lengths level, constant lr. Restarting it to spend the other 1570 steps has nothing to gain on this curve "
    "and the current weights are as good as any: stop.", onset=700)

# S3 - OpenRLHF console, crash (CUDA illegal memory access) at 1212 of 2500 after a long plateau.
_s3_tail = ["Traceback (most recent call last):",
            '  File "/opt/openrlhf/openrlhf/cli/train_ppo_ray.py", line 512, in <module>',
            "    train(args)",
            '  File "/opt/openrlhf/openrlhf/trainer/ppo_trainer.py", line 301, in fit',
            "    status = self.ppo_train(steps)",
            "ray.exceptions.RayTaskError(RuntimeError): ray::PolicyModelActor.fit() (pid=88123, ip=10.0.3.17)",
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
            "might be incorrect.",
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."]
add("stop-openrlhf-console-crashed-cuda-illegal-memory-access-at-1212-of-2500-gsm8k-and-math-flat-since-600",
    Story(openrlhf_keys(pw((0, .48), (600, .74), (1212, .75)), length=pw((0, 480), (600, 430), (1212, 425)),
                        kl=pw((0, 0), (600, .02), (1212, .028)), gn=const(.2)),
          {"eval_gsm8k_pass1": (pw((0, .71), (600, .83), (1212, .83)), 1319),
           "eval_math_pass1": (pw((0, .38), (500, .47), (1212, .47)), 500)},
          "eval_math_pass1", eval_steps=every(100, 1212, 100), sps=33, age_min=150),
    W(w_openrlhf_console, total=2500, tail=_s3_tail,
      banner="[2025-08-02 01:14:09] advantage_estimator=reinforce_baseline, n_samples_per_prompt=8"),
    3915, (1212, 2500), "stop", "stop openrlhf openrlhf-console rloo crashed plateau",
    "OpenRLHF 0.10 (reinforce_baseline), console log ending in a Ray traceback (CUDA illegal memory access) at "
    "step 1212 of 2500, 2.5 h ago. Before the crash: train reward flat at 0.74-0.75 since 600, eval gsm8k_pass1 "
    "flat at 0.83 (N=1319) since 600, math_pass1 flat at 0.47 (N=500, sd 0.022) since 500; KL barely moving. "
    "Relaunching for the remaining 1288 steps would not pay and the last weights are as good as any: stop.",
    onset=600)

# S4 - HF TB, TRL GRPO with five reward components all flat since 1100, groups uniform, eval flat.
_s4_fns = {"correctness_reward": pw((0, .22), (1100, .47), (1500, .47)), "int_answer_reward": pw((0, .7), (400, .97), (1500, .98)),
           "strict_format_reward": pw((0, .1), (500, .93), (1500, .95)), "soft_format_reward": pw((0, .3), (300, .99), (1500, .99)),
           "xml_count_reward": pw((0, .25), (600, .48), (1500, .49))}
add("stop-hf-tb-trl-grpo-five-reward-components-all-flat-since-1100-two-thirds-of-groups-uniform-eval-flat-live-1500-of-2000",
    Story(trl_grpo(None, fns={f"{k}": (fn_bern(k, v, zero=(k == "correctness_reward"), spread=5.0)
                                      if k != "xml_count_reward" else
                                      Score(v, {"mean": f"rewards/{k}/mean", "std": f"rewards/{k}/std"}, .08, 256))
                              for k, v in _s4_fns.items()},
                   weights=lambda s: [2.0, 0.5, 0.5, 0.5, 0.5], length=pw((0, 300), (1100, 240), (1500, 238)),
                   entropy=pw((0, .35), (1100, .16), (1500, .15)), lr=cosine(5e-6, 100, 2000), gn=const(.12)),
          {"eval_rewards/correctness_reward/mean": (pw((0, .24), (1000, .41), (1500, .41)), 600)},
          "eval_rewards/correctness_reward/mean", eval_steps=every(100, 1500, 100), log_every=10, avg=10, sps=20,
          age_min=5),
    W(w_tb, sub="runs/{stamp}_a100-box", train_prefix="train/", eval_prefix="eval/",
      eval_map={"eval_rewards/correctness_reward/mean": "rewards/correctness_reward/mean"}),
    3916, (1500, 2000), "stop", "stop trl hf-tb grpo multi-reward saturated no-signal live",
    "TRL GRPO on GSM8K with the five classic reward functions (correctness x2, int answer, strict/soft format, "
    "xml count), TensorBoard only. Format-type rewards saturated by 300-600; correctness rose 0.22 -> 0.47 by "
    "1100 and every component has been flat since. frac_reward_zero_std sits at ~0.65 (two thirds of the "
    "groups all-right or all-wrong: the problems split into solved and hopeless), entropy has fallen to 0.15 and stopped, "
    "eval correctness flat at 0.41 (N=600, sd 0.02) since 1000. Live at 1500 of 2000 with lr on the cosine "
    "tail: the last 500 steps have nothing to work with and the current weights are as good as any: stop.",
    onset=1100)

# S5 - verl TB, PPO with a critic, lr cosine at its floor, score and val flat since 1500, at 1880 of 2000.
_s5_crit = {"critic/values/mean": Signed(pw((0, .1), (1500, .6), (1880, .61)), .02),
            "critic/vf_loss": Smooth(pw((0, .3), (600, .08), (1880, .06)), .08),
            "critic/vf_explained_var": Signed(pw((0, -.4), (500, .6), (1880, .78)), .03),
            "critic/vf_clipfrac": Smooth(const(.004), .2), "critic/grad_norm": Grad(const(2.1)),
            "critic/lr": Exact(cosine(1e-5, 50, 2000, 1e-6)),
            "timing_s/values": Smooth(const(8.4), .05), "timing_s/update_critic": Smooth(const(22.0), .05)}
add("conv-verl-tb-ppo-gae-critic-lr-cosine-at-floor-score-and-val-flat-since-1500-at-1880-of-2000",
    Story(verl_keys(verl_score(pw((0, .38), (1500, .67), (1880, .675))), length=pw((0, 620), (1880, 700)),
                    entropy=pw((0, .46), (1500, .33), (1880, .32)), lr=cosine(1e-6, 50, 2000, 1e-7),
                    kl=None, critic=_s5_crit),
          {"val-core/math/acc/mean@1": (pw((0, .41), (1450, .55), (1880, .55)), 2000)},
          "val-core/math/acc/mean@1", eval_steps=every(50, 1880), sps=70, age_min=6),
    W(w_tb, sub="tensorboard_log/verl_ppo_math/gae_q1.5b"),
    3917, (1880, 2000), "conv", "converged verl tb ppo critic lr-floor live",
    "verl PPO with a GAE critic, TensorBoard only (raw verl tags). The critic is healthy (vf_explained_var "
    "0.78), lr is at the bottom of its cosine, critic/score/mean has been flat at 0.67 since 1500 and "
    "val-core/math/acc/mean@1 flat at 0.55 since ~1450 (N=2000, sd 0.011; nine flat evals). 120 steps are left "
    "at a floor lr: letting it finish or stopping now are both fine; nothing is declining.", onset=1500)

# S6 - custom CSV, curriculum finished at 1800 of 1800; hard bucket stuck at 0.04 without signal, eval flat since 1300.
_s6_stage = lambda s: 1 if s <= 500 else (2 if s <= 1000 else 3)  # noqa: E731
_s6_hard = pw((0, .02), (1800, .045))
_s6 = Story({"stage": Exact(_s6_stage),
             "acc_easy": Bern(pw((0, .55), (500, .86), (1800, .90)), {"mean": "acc_easy"}, 24, 8, 1.3),
             "acc_medium": Bern(pw((0, .30), (1000, .58), (1300, .62), (1800, .62)), {"mean": "acc_medium"}, 24, 8, 1.3),
             "acc_hard": Bern(_s6_hard, {"mean": "acc_hard", "zero": "zero_adv_frac_hard"}, 48, 8, 1.0),
             "reward_avg": Derived(lambda s, r: r["acc_easy"] if s <= 500 else
                                   (r["acc_medium"] if s <= 1000 else 0.2 * r["acc_medium"] + 0.8 * r["acc_hard"])),
             "avg_response_len": Smooth(lambda s: 380 if s <= 500 else (720 if s <= 1000 else 1350), 0.05),
             "entropy_avg": Smooth(pw((0, .6), (1300, .44), (1800, .43)), 0.03),
             "lr": Exact(const(1e-6))},
            {"eval_acc": (pw((0, .31), (1300, .47), (1800, .47)), 500)}, "eval_acc",
            eval_steps=every(100, 1800, 100), sps=45, age_min=3 * 60)
add("stop-custom-csv-curriculum-finished-1800-of-1800-hard-stage-acc-0.04-groups-uniform-eval-flat-since-1300",
    _s6,
    W(w_custom_csv, name="curriculum_log.csv",
      cols=["step", "total_steps", "stage", "reward_avg", "acc_easy", "acc_medium", "acc_hard", "zero_adv_frac_hard", "avg_response_len", "entropy_avg", "lr", "eval_acc"], fixed={"total_steps": 1800}, eval_col="eval_acc"),
    3918, (1800, 1800), "stop", "stop custom-csv grpo curriculum finished no-signal plateau",
    "Hand-written curriculum loop, one CSV row per step with per-bucket train accuracy. Stage 1 (easy, to 500) "
    "and stage 2 (medium, to 1000) trained well; stage 3 (from 1001) samples 80% competition problems, where "
    "acc_hard sits at 0.02-0.045 and zero_adv_frac_hard is ~0.8: almost no group has a correct answer, so there "
    "is no gradient. eval_acc (N=500, sd 0.022) rose 0.31 -> 0.47 by 1300 and has been flat for five evals. "
    "The last row is step 1800 = total_steps, file untouched for 3 h: finished, the final weights are as good "
    "as any: stop.", onset=1300)

# S7 - verl console (plain floats), PPO with critic finished 1500 of 1500; val plateau since 1000, best at the end.
add("stop-verl-console-ppo-gae-finished-1500-of-1500-val-plateau-since-1000-final-validation-line",
    Story(verl_keys(verl_score(pw((0, .44), (1000, .71), (1500, .715))), length=pw((0, 560), (1500, 610)),
                    entropy=pw((0, .44), (1000, .34), (1500, .33)), lr=const(1e-6),
                    critic={"critic/values/mean": Signed(pw((0, .2), (1000, .68), (1500, .7)), .02),
                            "critic/vf_loss": Smooth(pw((0, .25), (500, .07), (1500, .05)), .08),
                            "critic/vf_explained_var": Signed(pw((0, -.2), (400, .55), (1500, .74)), .03),
                            "critic/grad_norm": Grad(const(1.8)), "critic/lr": Exact(const(1e-5))}),
          {"val-core/openai/gsm8k/acc/mean@1": (pw((0, .63), (1000, .80), (1500, .80)), 1319)},
          "val-core/openai/gsm8k/acc/mean@1", eval_steps=every(50, 1500), sps=40, age_min=90),
    W(w_verl_console, total=1500, np2=False, project="ppo_gsm8k", exp="gae_q3b", save_freq=250, keep_ckpts=2,
      final_line=True, ray_prefix=True),
    3919, (1500, 1500), "stop", "stop verl verl-console ppo critic finished plateau",
    "verl PPO with a critic on GSM8K, plain-float console log (older NumPy). 'Total training steps: 1500' and "
    "the last step is 1500 followed by the 'Final validation metrics' line: finished 1.5 h ago. Validation "
    "gsm8k acc rose 0.63 -> 0.80 by 1000 and stayed flat (N=1319, sd 0.011) for the last ten evals; score "
    "flat, critic fine. The final weights (global_step_1500 on disk) are as good as any: stop.", onset=1000)

# S8 - MLflow files, TRL raw keys, the answer-tag reward never fires (template mismatch), eval at base level.
add("stop-mlflow-files-trl-grpo-never-learns-answer-tag-reward-0.02-groups-95pct-uniform-eval-at-base-0.31-live-300-of-3000",
    Story(trl_grpo(None, fns={"strict_answer_tag_reward": fn_bern("strict_answer_tag_reward", const(.02), zero=True,
                                                                  spread=1.2),
                              "format_reward": fn_bern("format_reward", const(.03), spread=1.2)},
                   weights=lambda s: [1.0, 0.2], length=const(880.0), entropy=const(.51), lr=cosine(1e-6, 30, 3000),
                   gn=const(.03)),
          {"eval_gsm8k_accuracy": (const(.31), 1319)}, "eval_gsm8k_accuracy", eval_steps=every(50, 300, 50),
          log_every=10, avg=10, sps=31, age_min=3),
    W(w_mlflow, run_name="grpo-llama3.2-3b-answer-tags", status="RUNNING",
      params={"max_steps": 3000, "beta": 0.0, "num_generations": 8, "learning_rate": 1e-6,
              "chat_template_path": "None"}),
    3920, (300, 3000), "stop", "stop trl mlflow-files grpo never-learns no-signal live",
    "TRL GRPO via the HF MLflow callback. The reward expects <answer>...</answer> tags that the chat template "
    "never asks for, so rewards/strict_answer_tag_reward/mean sits at ~0.02 and the format reward at ~0.03 from "
    "step 10 to 300; frac_reward_zero_std ~0.9, grad norms tiny, length and entropy unchanged, and the held-out "
    "eval_gsm8k_accuracy (scored by a tolerant extractor, N=1319) stays at the base model's 0.31. 300 steps "
    "with no signal: nothing will change without fixing the reward/template; the weights are the base model's. "
    "Stop.", onset=10)

# =============================================================================================== rollback

# R1 - verl JSONL, gradual entropy collapse; pass@16 (best@16) falls from 600 while mean@16 plateaus then eases.
add("rb-verl-jsonl-gradual-entropy-collapse-0.55-to-0.06-best-at-16-falls-0.81-to-0.66-mean-at-16-plateaus-live-1100-of-2000",
    Story(verl_keys(verl_score(pw((0, .38), (600, .60), (1100, .71))), length=pw((0, 900), (600, 820), (1100, 610)),
                    entropy=pw((0, .55), (300, .47), (600, .21), (1100, .06)), kl=pw((0, 0), (1100, .05)),
                    clip=pw((0, .003), (600, .001), (1100, .0004))),
          {"val-core/math500/acc/best@16/mean": (pw((0, .78), (450, .81), (600, .81), (1100, .66)), 500),
           "val-core/math500/acc/mean@16": (pw((0, .42), (600, .53), (1100, .515)), 8000),
           "val-core/math500/acc/maj@16/mean": (pw((0, .55), (600, .63), (1100, .61)), 500)},
          "val-core/math500/acc/best@16/mean", eval_steps=every(50, 1100), sps=120, age_min=4),
    W(w_verl_jsonl, project="grpo_entropy", exp="q7b_nokl_bs512"),
    3921, (1100, 2000), "rb", "rollback verl verl-jsonl grpo entropy-collapse pass-at-k slow live",
    "verl GRPO without entropy control. actor/entropy slides 0.55 -> 0.21 by 600 and on to 0.06 by 1100, "
    "clip fraction falls, responses shorten; train score keeps rising 0.60 -> 0.71 (sharpening on the train "
    "set). Validation on MATH-500 with 16 samples: best@16 (pass@16) held 0.81 from 450 to 600 and has fallen to "
    "0.66 (N=500, sd 0.018: 8 sd); mean@16 peaked at 0.53 around 600 and eases to 0.515; maj@16 also past its "
    "peak. The model has lost diversity it cannot regain by training on. Roll back to the end of the "
    "plateau (~600, where pass@1 also peaked) and add entropy control.", onset=600)

# R2 - W&B CSV panels, TRL PPO: KL drifts 3 -> 28 nats, RLHF reward still rising, judge win rate erodes from 1100.
add("rb-wandb-csv-trl-ppo-kl-drifts-3-to-28-nats-rlhf-reward-still-rising-judge-winrate-erodes-from-1100-live-2300",
    Story({"objective/scores": Score(pw((0, -0.4), (1100, 1.6), (2300, 3.3)), {"mean": "objective/scores"}, 1.4, 64),
           "objective/kl": Smooth(pw((0, .5), (300, 3.0), (1100, 8.0), (2300, 28.0)), 0.06),
           "objective/non_score_reward": Derived(lambda s, r: -0.05 * r["objective/kl"]),
           "objective/rlhf_reward": Derived(lambda s, r: r["objective/scores"] + r["objective/non_score_reward"]),
           "objective/entropy": Smooth(pw((0, 61), (2300, 47)), 0.03),
           "policy/approxkl_avg": Smooth(pw((0, .01), (2300, .02)), 0.15),
           "policy/clipfrac_avg": Smooth(pw((0, .05), (2300, .09)), 0.1),
           "loss/policy_avg": Signed(const(-0.01), .01), "loss/value_avg": Smooth(pw((0, .4), (2300, .22)), .1),
           "val/ratio": Signed(const(1.0), .003), "val/num_eos_tokens": Smooth(pw((0, 60), (2300, 52)), .04),
           "lr": Exact(pw((0, 3e-6), (2300, 3e-6 * (1 - 2300 / 3000))))},
          {"eval/judge_winrate_vs_sft": (pw((0, .50), (1100, .66), (2300, .56)), 400)},
          "eval/judge_winrate_vs_sft", eval_steps=every(100, 2300, 100), sps=25, age_min=12),
    None,
    3931, 2300, "rb", "rollback trl wandb-csv ppo kl-drift rm-overoptimisation slow",
    "TRL PPOTrainer (objective/*, policy/* keys) exported from W&B panels as CSV (10-step buckets with "
    "__MIN/__MAX), plus a judge win-rate callback every 100 steps on 400 held-out prompts. objective/scores "
    "and rlhf_reward keep climbing to 2300, but objective/kl drifts from 3 to 28 nats, accelerating after 1100. "
    "The judge win rate against the SFT policy rose 0.50 -> 0.66 at 1100 and has eroded to ~0.56 (sd 0.024; "
    "4 sd): the policy is over-optimising the reward model. A better model lies behind: roll back to ~1100.",
    onset=1100)


def _r2_write(run: dict, folder: Path) -> None:
    for i, (s, seg, row) in enumerate(run["train"]):
        run["train"][i] = (s, seg, {"train/" + k: v for k, v in row.items()})
    w_wandb_csv(run, folder, display="ppo-tldr-1b-kl0.05", bucket=10, x_key="train/global_step",
                panels={"wandb_export_2025-09-14T10_21_07.811+02_00.csv": ["train/objective/rlhf_reward",
                                                                           "train/objective/scores"],
                        "wandb_export_2025-09-14T10_21_31.094+02_00.csv": ["train/objective/kl"],
                        "wandb_export_2025-09-14T10_22_02.520+02_00.csv": ["eval/judge_winrate_vs_sft"],
                        "wandb_export_2025-09-14T10_22_40.377+02_00.csv": ["train/policy/approxkl_avg",
                                                                           "train/policy/clipfrac_avg",
                                                                           "train/val/ratio"]})


SPECS[-1].write = _r2_write

# R3 - TRL console dicts; resumed at 800 with lr 1e-5 (typo); grad norm spikes, NaN loss from 870, reward to 0.
_r3_gn = lambda s: .25 if s <= 800 else (.25 + (s - 800) * 0.12 if s < 870 else NAN)  # noqa: E731
_r3_rw = lambda s: pw((0, .30), (800, .55))(s) if s <= 800 else (pw((800, .55), (850, .50), (870, .0))(s))  # noqa: E731
_r3 = Story(trl_grpo(bern_trl(_r3_rw), length=lambda s: 520 if s <= 860 else (2048 if s >= 870 else 1200),
                     entropy=lambda s: .42 if s <= 840 else (1.6 if s < 870 else 11.9),
                     lr=lambda s: 1e-6 if s <= 800 else 1e-5, gn=_r3_gn,
                     clipped=lambda s: .02 if s <= 860 else 1.0),
            {"eval_rewards/accuracy_reward/mean": (lambda s: pw((0, .40), (800, .52))(s) if s <= 800 else .02, 500),
             "eval_reward": (lambda s: pw((0, .40), (800, .52))(s) if s <= 800 else .02, 500)},
            "eval_rewards/accuracy_reward/mean", eval_steps=every(100, 960, 100), log_every=10, avg=10,
            segments=[(1, 800), (801, 960)], sps=27, gap_s=2400, age_min=4)
add("rb-trl-console-resumed-at-800-lr-typo-1e-5-grad-norm-climbs-nan-loss-from-870-reward-to-zero-live-960-of-2000",
    _r3, None, 3923, (960, 2000), "rb", "rollback trl trl-console grpo nan lr-spike resume sudden live",
    "TRL GRPO, console log of two launches. The first ran to checkpoint-800 (eval accuracy 0.40 -> 0.52, N=500, "
    "sd 0.022) and was stopped for a node swap; the relaunch resumed from checkpoint-800 with learning_rate "
    "1e-05 instead of 1e-06 (visible in the printed dicts). grad_norm climbs from 0.25 to ~8 within 60 steps, "
    "entropy jumps, and from 870 loss and grad_norm are nan, reward 0, completions at the length cap. The eval "
    "at 900 is 0.02. The weights are destroyed: roll back to checkpoint-800 and fix the lr.", onset=800)


def _r3_write(run: dict, folder: Path) -> None:
    for _, _, row in run["train"]:
        if math.isnan(row["grad_norm"]):
            row["loss"] = NAN
    w_trl_console(run, folder, max_steps=2000, steps_per_epoch=2000,
                  banners=[TRL_BANNER.format(n=16000, t=2000),
                           "\n[INFO|trainer.py:2403] >> Continuing training from checkpoint, will skip to saved "
                           "global_step\n[INFO|trainer.py:2404] >>   Continuing training from epoch 0\n"
                           "[INFO|trainer.py:2405] >>   Continuing training from global step 800\n"
                           + TRL_BANNER.format(n=16000, t=2000)])


SPECS[-1].write = _r3_write

# R4 - verl console np2; after a resume at 1300 the sampler repeats one batch; score -> 0.99, entropy collapses.
_r4_bug = 1300
_r4 = Story(verl_keys(verl_score(lambda s: pw((0, .40), (1300, .62))(s) if s <= _r4_bug else
                                 pw((1300, .62), (1330, .97), (1420, .995))(s)),
                      length=lambda s: 780 if s <= _r4_bug else pw((1300, 780), (1420, 310))(s),
                      entropy=lambda s: pw((0, .48), (1300, .41))(s) if s <= _r4_bug else pw((1300, .41), (1420, .05))(s),
                      kl=lambda s: pw((0, 0), (1300, .02))(s) if s <= _r4_bug else pw((1300, .02), (1420, .19))(s),
                      prompt_len=Smooth(lambda s: 212.0, 0.03)),
            {"val-core/math/acc/mean@1": (lambda s: pw((0, .50), (1300, .61))(s) if s <= _r4_bug else
                                          pw((1300, .61), (1420, .47))(s), 500)},
            "val-core/math/acc/mean@1", eval_steps=[*every(50, 1420), 1300], segments=[(1, 1300), (1301, 1420)],
            sps=80, gap_s=900, age_min=2)
_r4.eval_steps = sorted(set(_r4.eval_steps))
add("rb-verl-console-np2-resume-at-1300-sampler-repeats-one-batch-prompt-length-constant-score-to-0.99-val-falls-live-1420-of-3000",
    _r4, None, 3924, (1420, 3000), "rb", "rollback verl verl-console np2 grpo data-loader-bug sudden resume live",
    "verl GRPO, console log of two launches. After the relaunch from global_step_1300 a dataloader-state bug "
    "feeds the same 128 prompts every step: prompt_length/mean/max/min become exactly constant, "
    "critic/score/mean shoots 0.62 -> 0.97 within 30 steps and ~0.99 after, entropy collapses 0.41 -> 0.05, "
    "responses shrink, KL climbs. Validation (math, N=500, sd 0.022, every 50) had risen 0.50 -> 0.61 at 1300 "
    "and is now ~0.47. The model is memorising one batch: roll back to global_step_1300 (on disk) and fix the "
    "sampler.", onset=1300)


def _r4_write(run: dict, folder: Path) -> None:
    for s, _seg, row in run["train"]:
        if s > _r4_bug:
            row["prompt_length/mean"] = 187.4453125
            row["prompt_length/max"] = 411.0
            row["prompt_length/min"] = 64.0
        else:
            row["prompt_length/max"] = float(int(row["prompt_length/mean"] * 2.4))
            row["prompt_length/min"] = float(int(row["prompt_length/mean"] * 0.27))
    w_verl_console(run, folder, total=3000, np2=True, project="verl_grpo_math", exp="q7b_bs128_n8", save_freq=100,
                   keep_ckpts=3)


SPECS[-1].write = _r4_write

# R5 - custom JSONL; relaunch at 2000 loads a tokenizer whose chat template drops the <think> prefix.
_r5_after = 2000
_r5 = Story({"reward/total": Derived(lambda s, r: r["reward/correct"] + 0.5 * r["reward/format"]),
             "reward/correct": Bern(lambda s: pw((0, .42), (2000, .63))(s) if s <= _r5_after else
                                    pw((2000, .50), (2060, .46), (2240, .47))(s), {"mean": "reward/correct"}, 32, 8),
             "reward/format": Bern(lambda s: pw((0, .8), (300, .97), (2000, .975))(s) if s <= _r5_after else
                                   pw((2000, .31), (2240, .38))(s), {"mean": "reward/format"}, 32, 8, 1.0),
             "response_tokens": Smooth(lambda s: pw((0, 700), (2000, 820))(s) if s <= _r5_after else 430.0, 0.04),
             "entropy": Smooth(lambda s: .44 if s <= _r5_after else .58, 0.03),
             "kl": Smooth(lambda s: pw((0, 0), (2000, .03))(s) if s <= _r5_after else pw((2000, .03), (2240, .09))(s), .05),
             "grad_norm": Grad(lambda s: .3 if s <= _r5_after else .55), "lr": Exact(const(8e-7))},
            {"math_acc": (lambda s: pw((0, .50), (1000, .55), (2000, .58))(s) if s <= _r5_after else
                          pw((2000, .58), (2100, .44), (2240, .42))(s), 600)},
            "math_acc", eval_steps=every(100, 2240, 100), segments=[(1, 2000), (2001, 2240)], sps=36, gap_s=3 * 3600,
            age_min=6)
add("rb-custom-jsonl-relaunch-at-2000-new-tokenizer-chat-template-drops-think-prefix-format-0.97-to-0.31-heldout-falls-live-2240-of-5000",
    _r5,
    W(w_custom_jsonl, name="run_log.jsonl", fixed={"total_steps": 5000}, eval_prefix="heldout/",
      launch_lines=[{"event": "launch", "resume_from": None, "tokenizer": "ckpt/base/tokenizer", "git": "4be81c2"},
                    {"event": "launch", "resume_from": "ckpt/step_2000", "tokenizer": "Qwen/Qwen3-8B",
                     "git": "9d0e7aa"}]),
    3925, (2240, 5000), "rb", "rollback custom-jsonl grpo template-change tokenizer sudden resume live",
    "A custom GRPO loop logging JSONL, relaunched from its step-2000 checkpoint after a 3 h break; the launch "
    "record shows the tokenizer now loaded from the hub instead of the checkpoint, and its chat template no "
    "longer opens the <think> block. reward/format drops 0.975 -> 0.31 at once, responses shrink 820 -> 430 "
    "tokens, entropy and grad norm jump, and heldout/math_acc (N=600, sd 0.020) falls from 0.58 at 2000 to "
    "0.44-0.42. The model trained after 2000 is learning the broken format. Roll back to step 2000 and restore "
    "the tokenizer.", onset=2000)

# R6 - TRL top-level state + two newest checkpoints; finished 4000; math500 peaked at 2600, slid 3 sd; AIME flat.
add("rb-trl-state-top-level-finished-4000-math500-peaked-2600-slid-3sd-aime-flat-noisy-ckpts-limit-2-at-3600-4000",
    Story(trl_grpo(bern_trl(pw((0, .45), (2600, .66), (4000, .74))), length=pw((0, 900), (2600, 820), (4000, 590)),
                   entropy=pw((0, .41), (2600, .30), (4000, .22)), lr=cosine(1e-6, 100, 4000, 1e-7)),
          {"eval_math500_rewards/accuracy_reward/mean": (pw((0, .55), (2400, .66), (2600, .665), (4000, .60)), 500),
           "eval_aime_rewards/accuracy_reward/mean": (pw((0, .12), (2000, .16), (4000, .16)), 240)},
          "eval_math500_rewards/accuracy_reward/mean", eval_steps=every(200, 4000, 200), log_every=10, avg=10,
          sps=32, age_min=5 * 60),
    W(w_trl_state, max_steps=4000, logging_steps=10, save_steps=400, eval_steps=200, steps_per_epoch=2000,
      keep=2, top_level=True, finished=True, epochs=2),
    3926, (4000, 4000), "rb", "rollback trl trl-state top-level checkpoints grpo finished two-evals slow",
    "TRL GRPO, 2 epochs, finished at max_steps 4000 (final summary row, should_training_stop); "
    "save_total_limit 2 keeps only checkpoint-3600 and checkpoint-4000. Two eval sets every 200 steps disagree: "
    "AIME (N=240, sd 0.024) has been flat at ~0.16 since 2000, while math500 (N=500, sd 0.021) peaked at "
    "0.665 around 2600 and slid to 0.60 by 4000 (3 sd) as responses shortened 820 -> 590 and train reward kept "
    "rising (epoch-2 overfitting). The end model is worse on math500 and no better on AIME: roll back to "
    "~2600 (the checkpoint must come from elsewhere; it is not in the folder).", onset=2600)

# R7 - TRL DPO, checkpoint folders only (limit 3), beta 0.01: margins blow up, eval accuracy peaks 1000-1250.
_r7_acc = pw((0, .55), (900, .86), (2250, .97))
add("rb-trl-ckpts-only-dpo-beta-0.01-margins-blow-up-logps-chosen-collapse-eval-acc-peaks-1000-1250-slides-live-2250-of-3000",
    Story({"loss": Signed(lambda s: max(0.02, 0.69 - 0.75 * (_r7_acc(s) - .5)), 0.02),
           "grad_norm": Grad(pw((0, 6.0), (2250, 21.0)), 0.35), "learning_rate": Exact(pw((0, 0), (100, 5e-7), (3000, 0))),
           "rewards/chosen": Signed(pw((0, 0), (1000, -.6), (2250, -3.9)), 0.1),
           "rewards/rejected": Signed(pw((0, 0), (1000, -2.3), (2250, -11.5)), 0.2),
           "rewards/margins": Derived(lambda s, r: r["rewards/chosen"] - r["rewards/rejected"]),
           "rewards/accuracies": Bern(_r7_acc, {"mean": "rewards/accuracies"}, 64, 1, 1.0),
           "logps/chosen": Signed(pw((0, -290), (1000, -350), (2250, -680)), 4.0),
           "logps/rejected": Signed(pw((0, -305), (1000, -530), (2250, -1450)), 6.0),
           "logits/chosen": Signed(const(-0.9), 0.05), "logits/rejected": Signed(const(-0.85), 0.05)},
          {"eval_rewards/accuracies": (pw((0, .58), (1000, .705), (1250, .705), (2250, .655)), 1500)},
          "eval_rewards/accuracies", eval_steps=every(250, 2250, 250), log_every=10, sps=11, age_min=8),
    None, 3927, (2250, 3000), "rb", "rollback trl trl-state checkpoints-only dpo overoptimisation live",
    "TRL DPOTrainer with beta 0.01, checkpoint folders only (save_steps 250, save_total_limit 3: 1750, 2000, "
    "2250; the newest written 8 min ago), eval every 250 inside log_history. Train accuracy climbs to 0.97 and "
    "margins balloon past 7 while logps/chosen falls -290 -> -680 (likelihood displacement). Held out, "
    "eval_rewards/accuracies rose 0.58 -> 0.705 at 1000, held at 1250 and slid to 0.655 by 2250 (N=1500, sd "
    "0.012; 4 sd); eval_loss turned up after 1250. A better model lies behind: roll back to 1250 (not on disk "
    "any more; the limit deleted it).", onset=1250)


def _r7_write(run: dict, folder: Path) -> None:
    for s, row in run["eval"]:
        a = row["eval_rewards/accuracies"]
        row["eval_loss"] = 0.693 - 0.9 * (a - 0.5) + (0.0 if s <= 1250 else 0.00011 * (s - 1250))
        row["eval_rewards/margins"] = 0.05 + (s / 2250) * 7.5
        row["eval_rewards/chosen"] = -0.5 - s / 700
        row["eval_rewards/rejected"] = row["eval_rewards/chosen"] - row["eval_rewards/margins"]
        row["eval_logps/chosen"] = -300 - s / 6
        row["eval_logps/rejected"] = -320 - s / 2.2
    w_trl_state(run, folder, max_steps=3000, logging_steps=10, save_steps=250, eval_steps=250, steps_per_epoch=1000,
                keep=3, epochs=3)


SPECS[-1].write = _r7_write

# R8 - verl console (plain), curriculum adds an olympiad bucket at 1000; earlier buckets and the mix val fall.
_r8_after = 1000
add("rb-verl-console-curriculum-adds-olympiad-bucket-at-1000-lengths-to-cap-easy-and-medium-val-forget-mix-val-falls-live-1600-of-2400",
    Story(dict(verl_keys(verl_score(lambda s: pw((0, .60), (1000, .72))(s) if s <= _r8_after else pw((1000, .22), (1600, .27))(s)),
                         length=lambda s: pw((0, 900), (1000, 980))(s) if s <= _r8_after else pw((1000, 1400), (1600, 2600))(s),
                         trunc=lambda s: .01 if s <= _r8_after else pw((1000, .06), (1600, .35))(s),
                         entropy=pw((0, .45), (1000, .38), (1600, .47)), kl=pw((0, 0), (1000, .02), (1600, .06)),
                         cap=3072),
               **{"curriculum/stage": Exact(lambda s: 1 if s <= _r8_after else 2)}),
          {"val-core/bucket_easy/acc/mean@1": (pw((0, .82), (1000, .86), (1600, .74)), 500),
           "val-core/bucket_medium/acc/mean@1": (pw((0, .55), (1000, .62), (1600, .53)), 500),
           "val-core/bucket_olympiad/acc/mean@1": (pw((0, .08), (1000, .10), (1600, .12)), 500),
           "val-core/math_mix/acc/mean@4": (pw((0, .48), (1000, .56), (1600, .49)), 1000)},
          "val-core/math_mix/acc/mean@4", eval_steps=every(100, 1600), sps=130, age_min=9),
    W(w_verl_console, total=2400, np2=False, project="curriculum_v3", exp="q7b_olympiad_stage", save_freq=200,
      ray_prefix=False),
    3928, (1600, 2400), "rb", "rollback verl verl-console grpo curriculum forgetting truncation live",
    "verl GRPO with a two-stage curriculum (curriculum/stage 1 -> 2 at 1000, adding an olympiad bucket). Unlike "
    "a healthy switch, the held-out side falls: per-bucket val easy 0.86 -> 0.74 and medium 0.62 -> 0.53, "
    "olympiad only 0.10 -> 0.12, and the mixed held-out val-core/math_mix/acc/mean@4 0.56 -> 0.49 (N=1000, sd "
    "0.016; 4 sd). Responses balloon 980 -> 2600 tokens toward the 3072 cap (clip_ratio 0.35), train score on "
    "the hard mix barely moves. The stage-2 model is worse across the board: roll back to the end of stage 1 "
    "(1000; global_step_1000 on disk).", onset=1000)

# R9 - HF TB, TRL GRPO; safety weight raised on plan at 1500; helpfulness win rate erodes, over-refusal climbs.
_r9_w = lambda s: [1.0, 0.5, 0.2] if s < 1500 else [1.0, 2.0, 0.2]  # noqa: E731
add("rb-hf-tb-trl-grpo-safety-reward-weight-raised-at-1500-helpful-winrate-erodes-0.64-to-0.53-over-refusal-5pct-to-30pct-live-2100-of-3000",
    Story(trl_grpo(None, fns={
        "helpfulness_rm": Score(lambda s: pw((0, .2), (1500, 1.4))(s) if s < 1500 else pw((1500, 1.4), (2100, .9))(s),
                                {"mean": "rewards/helpfulness_rm/mean", "std": "rewards/helpfulness_rm/std"}, 1.2, 256),
        "safety_classifier": fn_bern("safety_classifier", lambda s: pw((0, .84), (1500, .93))(s) if s < 1500 else
                                     pw((1500, .93), (1700, .985), (2100, .992))(s), spread=1.0),
        "format_reward": fn_bern("format_reward", pw((0, .9), (300, .99)), spread=1.0)},
        weights=_r9_w, length=lambda s: pw((0, 310), (1500, 360))(s) if s < 1500 else pw((1500, 360), (2100, 190))(s),
        entropy=pw((0, .7), (2100, .6)), kl=pw((0, 0), (1500, .05), (2100, .11)), lr=const(1e-6)),
        {"eval_judge_helpful_winrate": (lambda s: pw((0, .50), (1500, .64))(s) if s <= 1500 else
                                        pw((1500, .64), (2100, .53))(s), 500),
         "eval_safety_refusal_acc": (pw((0, .90), (1500, .96), (2100, .985)), 400),
         "eval_xstest_overrefusal_rate": (lambda s: pw((0, .05), (1500, .06))(s) if s <= 1500 else
                                          pw((1500, .06), (2100, .30))(s), 250)},
        "eval_judge_helpful_winrate", eval_steps=every(100, 2100, 100), log_every=10, avg=10, sps=24, age_min=5),
    W(w_tb, sub="runs/{stamp}_h100-12", train_prefix="train/", eval_prefix="eval/",
      eval_map={"eval_judge_helpful_winrate": "judge_helpful_winrate", "eval_safety_refusal_acc": "safety_refusal_acc",
                "eval_xstest_overrefusal_rate": "xstest_overrefusal_rate"}),
    3929, (2100, 3000), "rb", "rollback trl hf-tb grpo multi-reward reward-weights-schedule over-refusal",
    "TRL GRPO with three reward functions (helpfulness RM score, safety classifier, format), TensorBoard. At "
    "1500 the planned schedule raises the safety weight 0.5 -> 2.0. Safety refusal accuracy goes 0.96 -> "
    "0.985, but the model learns to refuse: XSTest over-refusal 6% -> 30% (N=250), answers shrink 360 -> 190 "
    "tokens, the helpfulness RM term falls, and the judge win rate against the SFT model drops from 0.64 at "
    "1500 to ~0.53 at 2100 (N=500, sd 0.021; 5 sd). Small safety gain, large helpfulness loss: the model at "
    "1500 is the better one. Roll back and use a smaller safety weight.", onset=1500)

# R10 - verl console np2, long run checked late (2700 of 3000), math500 peaked 1600 then erodes; AIME and GPQA flat.
add("rb-verl-console-np2-long-run-at-2700-of-3000-math500-peaked-1600-slow-erosion-3sd-aime-and-gpqa-flat-ckpts-every-400",
    Story(verl_keys(verl_score(pw((0, .35), (1600, .61), (2700, .68)), P=64), length=pw((0, 1500), (1600, 1700), (2700, 1450)),
                    entropy=pw((0, .40), (1600, .27), (2700, .17)), kl=pw((0, 0), (2700, .04)), gen_s=130),
          {"val-core/math500/acc/mean@4": (pw((0, .52), (1500, .63), (1600, .635), (2700, .565)), 500),
           "val-core/aime24/acc/mean@16": (pw((0, .10), (1200, .13), (2700, .13)), 480),
           "val-core/gpqa_diamond/acc/mean@4": (pw((0, .31), (2700, .33)), 198)},
          "val-core/math500/acc/mean@4", eval_steps=every(100, 2700), sps=190, age_min=11),
    W(w_verl_console, total=3000, np2=True, project="long_grpo", exp="q14b_math_6k", save_freq=400),
    3937, (2700, 3000), "rb", "rollback verl verl-console np2 grpo long-run three-evals slow live",
    "verl GRPO, a long run checked at 2700 of 3000 (console log, live 11 min ago; global_step_400 ... 2400 "
    "on disk). Three validation sets disagree: AIME24 mean@16 (N=480) flat at 0.13 since 1200 and GPQA-diamond "
    "(N=198, sd 0.033) within noise, but MATH-500 mean@4 peaked at 0.635 around 1600 and has eroded slowly to "
    "~0.565 (N=500, sd 0.022; 3 sd) while train score still rises and entropy slides 0.27 -> 0.17. Nothing "
    "gained elsewhere for the loss: roll back to ~1600 (global_step_1600 is on disk).", onset=1600)


CASES = [s.case() for s in SPECS]
STORY = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    spec = STORY[case.name]
    rng = np.random.default_rng(case.seed)
    run = spec.story.draws(rng, case.reached)
    folder.mkdir(parents=True, exist_ok=True)
    TOUCHED.clear()
    case.write(run, folder)
    finish_times(folder, run["end"])


def check(cases: list[Case]) -> None:
    for c in cases:
        st = STORY[c.name].story
        print(f"{c.name}: {c.labels.get('preferred')} accept={c.labels.get('accept')} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')} steps={c.steps}")
        if not st.evals:
            run = st.draws(np.random.default_rng(c.seed), c.reached)
            tr = run["train"]
            k = next(iter(tr[0][2]))
            print("    train " + " ".join(f"{s}:{r[k]:.3f}" for s, _, r in tr[:: max(1, len(tr) // 12)]))
            continue
        lv = st.evals[st.headline][0]
        steps = [s for s in st.eval_steps if s <= c.reached]
        best_s = max(steps, key=lv)
        sd = st.sd_at(lv(best_s))
        print(f"    headline {st.headline}: best {lv(best_s):.3f}@{best_s} last {lv(steps[-1]):.3f}@{steps[-1]} "
              f"sd {sd:.4f} ({(lv(best_s) - lv(steps[-1])) / sd:.1f} sd below best)")
        run = st.draws(np.random.default_rng(c.seed), c.reached)
        ev = run["eval"]
        print("    drawn " + " ".join(f"{s}:{v[st.headline]:.3f}" for s, v in ev[:: max(1, len(ev) // 14)])
              + f" | last {ev[-1][0]}:{ev[-1][1][st.headline]:.3f}")


HEADER = """# Holdout set 39: blind-labelled runs written by make_holdout39.py without reading the assessor, its tests or
# the other sets' generators. Labels: what a careful practitioner should do under DESIGN.md's decision contract,
# read from each story's noise-free levels. rollback_window is inclusive: from the first logged headline-eval step
# whose level is within one sampling sd of the best level to the newest such step not after onset_step; steps are
# in each run's own logged units. `.venv/bin/python evals/holdout39/make_holdout39.py --check` prints the levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout39.py", "holdout39.yaml", "h39-", "holdout39", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
