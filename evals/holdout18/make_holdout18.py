"""Holdout set 18: blind-labelled RL post-training runs, written without looking at the assessor.

Run from the worktree root:
    .venv/bin/python evals/holdout18/make_holdout18.py           # writes runs/ (gitignored) and holdout18.yaml
    .venv/bin/python evals/holdout18/make_holdout18.py --check   # also prints levels, draws and rollback windows

This set leans on what earlier sets cover least: runs checked early and mid-way (10-40 % of plan), staircases and
plateaus at 30 %, agentic / tool-use and code RL, bounded reward-model scores, pass@k, custom loops with their own
metric names (some lower-is-better), OpenRLHF JSONL/TensorBoard, verl with a W&B offline run (binary .wandb log)
and a W&B history export, TRL 1.x keys, NeMo-RL and a ROLL-style layout, long good stretches whose END is the
target, rotated or sparse checkpoints, decline in one of several evals, finished / stalled / crashed runs.

Every case is a plot: noise-free levels per step for each logged signal ("tracks"), drawn through this set's
noise model:
  * binary rewards: P prompts per batch whose solve rates are logit-normal around the level (spread tau, the
    centre calibrated so the mean solve rate equals the level), G Bernoulli rollouts each; the logged mean, batch
    std and the share of all-equal groups come from the same draws; loggers that log every L steps average L
    batches;
  * bounded reward-model scores in [lo, hi]: per-sample Beta(c m, c (1 - m)) around the level, batch mean;
  * agent episodes: success as above, turns 1 + Poisson(level - 1) capped, return = success - penalty * turns;
  * held-out evals: Binomial(N, p)/N (accuracies, win rates, error rates); perplexity as exp of the mean of N
    per-document log-perplexities, N(log level, 0.4);
  * grad norms: level * exp(0.3 N(0,1)), and on ~3 % of steps times (1 + Pareto(1.5)) (heavy right tail);
  * KL, entropy, lengths and other side signals: AR(1) noise (phi 0.7), multiplicative for positive signals,
    additive for signed ones; rates such as truncation or env errors are Binomial over the batch.
Labels come from the plots, never from a tool. The rollback window runs from the first logged headline step whose
noise-free level is within one sampling sd of the best level (sd of one eval, or of one logged train value for a
train headline; for a lower-is-better headline "best" is the minimum) to the newest such step not after onset.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import struct
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import holdout_kit
from holdout_kit import HEALTHY, Case, converged, dump_json, rollback, stop, stop_or_rollback, tb_file, trainer_state

HERE = Path(__file__).resolve().parent
NOW = time.time()
Lvl = Callable[[float], float]


def pw(*pts: tuple[float, float]) -> Lvl:
    xs, ys = zip(*pts, strict=True)
    return lambda s: float(np.interp(s, xs, ys))


def k(v: float) -> Lvl:
    return lambda s: v


# --------------------------------------------------------------------------------------------------- noise model

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(48)
_GH_W = _GH_W / _GH_W.sum()
_MU_GRID = np.linspace(-40, 40, 3201)
_TABLES: dict[float, np.ndarray] = {}


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _mean_table(tau: float) -> np.ndarray:
    if tau not in _TABLES:
        _TABLES[tau] = np.array([(_sig(m + tau * _GH_X) * _GH_W).sum() for m in _MU_GRID])
    return _TABLES[tau]


def mu_for(p: float, tau: float) -> float:
    """Centre of the logit-normal prompt solve rates whose mean is p."""
    return float(np.interp(min(max(p, 1e-5), 1 - 1e-5), _mean_table(tau), _MU_GRID))


def solve_var(p: float, tau: float, G: int) -> float:
    q = _sig(mu_for(p, tau) + tau * _GH_X)
    m = (q * _GH_W).sum()
    return float(((q - m) ** 2 * _GH_W).sum() + (q * (1 - q) * _GH_W).sum() / G)


class Track:
    is_eval = False
    lower = False

    def __init__(self, key: str, level: Lvl):
        self.key, self.level = key, level

    def reset(self) -> None:
        pass

    def draw(self, rng, s: int, L: int) -> dict:
        raise NotImplementedError

    def sd(self, s: int, L: int) -> float:
        raise NotImplementedError


class Bern(Track):
    """Binary rewards: batch mean over P prompts x G rollouts, prompts of varying difficulty."""

    def __init__(self, key, level, P=32, G=8, tau=1.2, std=None, zero=None, pct=None, copy=()):
        super().__init__(key, level)
        self.P, self.G, self.tau, self.std, self.zero, self.pct, self.copy = P, G, tau, std, zero, pct, copy

    def tau_at(self, s) -> float:
        """Spread of prompt difficulty (logit sd); a callable polarises prompts over the run (rounded to 0.5)."""
        return round(2 * self.tau(s)) / 2 if callable(self.tau) else self.tau

    def draw(self, rng, s, L):
        means, stds, zeros, p0s, p1s = [], [], [], [], []
        for j in range(L):
            p = self.level(s - j)
            tau = self.tau_at(s - j)
            if p <= 0 or p >= 1:
                x = np.full((self.P, self.G), float(p >= 1))
            else:
                q = _sig(mu_for(p, tau) + tau * rng.standard_normal(self.P))
                x = (rng.random((self.P, self.G)) < q[:, None]).astype(float)
            same = x.min(axis=1) == x.max(axis=1)
            means.append(x.mean())
            stds.append(x.std(ddof=1))
            zeros.append(same.mean())
            p0s.append(100 * (same & (x[:, 0] == 0)).mean())
            p1s.append(100 * (same & (x[:, 0] == 1)).mean())
        out = {self.key: float(np.mean(means))}
        for c in self.copy:
            out[c] = out[self.key]
        if self.std:
            out[self.std] = float(np.mean(stds))
        if self.zero:
            out[self.zero] = float(np.mean(zeros))
        if self.pct:
            out[self.pct[0]], out[self.pct[1]] = float(np.mean(p0s)), float(np.mean(p1s))
        return out

    def sd(self, s, L):
        return math.sqrt(solve_var(self.level(s), self.tau_at(s), self.G) / self.P / L)


class Score(Track):
    """Bounded reward-model score in [lo, hi]: Beta per sample around the level, batch mean."""

    def __init__(self, key, level, B=256, c=6.0, lo=0.0, hi=1.0, std=None):
        super().__init__(key, level)
        self.B, self.c, self.lo, self.hi, self.std = B, c, lo, hi, std

    def draw(self, rng, s, L):
        vals = []
        for j in range(L):
            m = min(max((self.level(s - j) - self.lo) / (self.hi - self.lo), 1e-4), 1 - 1e-4)
            vals.append(rng.beta(self.c * m, self.c * (1 - m), self.B))
        x = self.lo + (self.hi - self.lo) * np.concatenate(vals)
        out = {self.key: float(x.mean())}
        if self.std:
            out[self.std] = float(x.std())
        return out

    def sd(self, s, L):
        m = (self.level(s) - self.lo) / (self.hi - self.lo)
        return (self.hi - self.lo) * math.sqrt(m * (1 - m) / (self.c + 1) / self.B / L)


class Episodes(Track):
    """Agent episodes: success (logit-normal task difficulty), turns, return = success - pen * turns."""

    def __init__(self, keys: dict, level, turns: Lvl, E=64, pen=0.0, cap=10, tau=1.5):
        super().__init__(keys["ret"], level)
        self.keys, self.turns, self.E, self.pen, self.cap, self.tau = keys, turns, E, pen, cap, tau

    def draw(self, rng, s, L):
        p = self.level(s)
        q = _sig(mu_for(p, self.tau) + self.tau * rng.standard_normal(self.E))
        succ = (rng.random(self.E) < q).astype(float)
        t = np.minimum(self.cap, 1 + rng.poisson(max(self.turns(s) - 1, 0), self.E)).astype(float)
        ret = succ - self.pen * t
        out = {self.keys["ret"]: float(ret.mean()), self.keys["succ"]: float(succ.mean()),
               self.keys["turns"]: float(t.mean())}
        if "cap" in self.keys:
            out[self.keys["cap"]] = float((t >= self.cap).mean())
        return out


class Side(Track):
    """Positive side signal with multiplicative AR(1) noise."""

    def __init__(self, key, level, cv=0.05, phi=0.7):
        super().__init__(key, level)
        self.cv, self.phi, self.e = cv, phi, 0.0

    def reset(self):
        self.e = 0.0

    def draw(self, rng, s, L):
        self.e = self.phi * self.e + math.sqrt(1 - self.phi ** 2) * self.cv * rng.standard_normal()
        return {self.key: self.level(s) * math.exp(self.e)}


class Signed(Side):
    def draw(self, rng, s, L):
        self.e = self.phi * self.e + math.sqrt(1 - self.phi ** 2) * self.cv * rng.standard_normal()
        return {self.key: self.level(s) + self.e}


class Exact(Track):
    def draw(self, rng, s, L):
        return {self.key: self.level(s)}


class Heavy(Track):
    """Grad norm: log-normal body with an occasional Pareto spike."""

    def __init__(self, key, level, sig=0.3, p=0.03):
        super().__init__(key, level)
        self.sig, self.p = sig, p

    def draw(self, rng, s, L):
        g = self.level(s) * math.exp(self.sig * rng.standard_normal())
        if rng.random() < self.p:
            g *= 1 + rng.pareto(1.5)
        return {self.key: g}


class Rate(Track):
    def __init__(self, key, level, n=256):
        super().__init__(key, level)
        self.n = n

    def draw(self, rng, s, L):
        p = min(max(self.level(s), 0.0), 1.0)
        return {self.key: rng.binomial(self.n, p) / self.n}


class Binom(Track):
    is_eval = True

    def __init__(self, key, level, N, lower=False):
        super().__init__(key, level)
        self.N, self.lower = N, lower

    def draw(self, rng, s, L):
        return {self.key: rng.binomial(self.N, min(max(self.level(s), 0), 1)) / self.N}

    def sd(self, s, L):
        p = self.level(s)
        return math.sqrt(p * (1 - p) / self.N)


class PPL(Track):
    is_eval = True
    lower = True

    def __init__(self, key, level, N, spread=0.4):
        super().__init__(key, level)
        self.N, self.spread = N, spread

    def draw(self, rng, s, L):
        return {self.key: float(math.exp(rng.normal(math.log(self.level(s)), self.spread, self.N).mean()))}

    def sd(self, s, L):
        return self.level(s) * self.spread / math.sqrt(self.N)


# ------------------------------------------------------------------------------------------------------ the plots

@dataclass
class Plot:
    tracks: list[Track]
    head: str  # key of the headline track
    plan: int
    reached: int
    log_every: int = 1
    eval_every: int = 0
    eval0: bool = False
    state: str = "live"  # live | finished | stalled | crashed
    age_min: float = 5.0
    sps: float = 60.0  # seconds per optimizer step

    def track(self, key: str) -> Track:
        return next(t for t in self.tracks if t.key == key)

    def eval_steps(self) -> list[int]:
        if not self.eval_every:
            return []
        return list(range(0 if self.eval0 else self.eval_every, self.reached + 1, self.eval_every))

    def head_steps(self) -> list[int]:
        if self.track(self.head).is_eval:
            return self.eval_steps()
        return list(range(self.log_every, self.reached + 1, self.log_every))

    def draw(self, seed: int) -> dict:
        rng = np.random.default_rng(seed)
        for t in self.tracks:
            t.reset()
        train, evals = [], []
        for s in range(self.log_every, self.reached + 1, self.log_every):
            row: dict = {}
            for t in self.tracks:
                if not t.is_eval:
                    row.update(t.draw(rng, s, self.log_every))
            train.append((s, row))
        for s in self.eval_steps():
            row = {}
            for t in self.tracks:
                if t.is_eval:
                    row.update(t.draw(rng, s, 1))
            evals.append((s, row))
        t_end = NOW - self.age_min * 60
        return dict(train=train, eval=evals, plot=self, t_end=t_end,
                    t=lambda s: t_end - (self.reached - s) * self.sps)


def head_window(p: Plot, onset: int) -> tuple[int, int]:
    tr = p.track(p.head)
    steps = p.head_steps()
    sign = -1 if tr.lower else 1
    best_s = max(steps, key=lambda s: sign * tr.level(s))
    sd = tr.sd(best_s, p.log_every)
    good = [s for s in steps if sign * (tr.level(best_s) - tr.level(s)) <= sd]
    return good[0], max(s for s in good if s <= onset)


# ------------------------------------------------------------------------------------------------------ writers

def cum_tokens(run: dict, len_key: str, per_step: int) -> dict[int, float]:
    out, tot, prev = {}, 0.0, 0
    for s, v in run["train"]:
        tot += (v.get(len_key, 500.0) + 180.0) * per_step * (s - prev)
        prev = s
        out[s] = tot
    return out


def trl_rows(run: dict, spe: int, fn: str | None, trl1x: bool) -> list[dict]:
    rows = []
    toks = cum_tokens(run, "completions/mean_length", 256)
    for s, v in run["train"]:
        r = {k: (None if isinstance(x, float) and math.isnan(x) else x) for k, x in v.items()}
        if fn and "reward" in v:
            r[f"rewards/{fn}/mean"] = v["reward"]
            r[f"rewards/{fn}/std"] = v.get("reward_std", 0.0)
        if trl1x:
            r.update({"clip_ratio/region_mean": 0.0, "clip_ratio/low_mean": 0.0, "clip_ratio/low_min": 0.0,
                      "clip_ratio/high_mean": 0.0, "clip_ratio/high_max": 0.0, "num_tokens": toks[s]})
        r.update(loss=round(float(0.004 * math.sin(s / 7)), 4), epoch=round(s / spe, 4), step=s)
        rows.append(r)
    for s, v in run["eval"]:
        r = dict(v)
        r.update(eval_runtime=round(210.0 + 7 * math.cos(s), 3), eval_samples_per_second=2.38,
                 eval_steps_per_second=0.075, epoch=round(s / spe, 4), step=s)
        rows.append(r)
    rows.sort(key=lambda r: (r["step"], "eval_runtime" in r))
    return rows


def w_trl_state(run: dict, folder: Path, save_every: int, keep: int | None = None, fn: str | None = "accuracy_reward",
                trl1x: bool = True, out: str = "") -> None:
    """TRL GRPOTrainer output_dir: checkpoint-N/trainer_state.json (save_total_limit rotates old ones);
    a finished run also gets the top-level trainer_state.json with the summary row (trainer.save_state())."""
    p: Plot = run["plot"]
    base = folder / out if out else folder
    rows = trl_rows(run, p.plan, fn, trl1x)
    saves = list(range(save_every, p.reached + 1, save_every))
    if p.state == "finished" and p.reached not in saves:
        saves.append(p.reached)
    kept: list[int] = []
    for n in saves:
        st = trainer_state([r for r in rows if r["step"] <= n], n, p.plan, p.log_every, save_every,
                           p.eval_every or None, round(n / p.plan, 4),
                           training_stop=p.state == "finished" and n == p.reached)
        ck = base / f"checkpoint-{n}"
        dump_json(ck / "trainer_state.json", st)
        (ck / "adapter_config.json").write_text('{"peft_type": "LORA", "r": 32, "lora_alpha": 64}\n')
        (ck / "training_args.bin").write_bytes(b"\x80\x04stub")
        kept.append(n)
        while keep and len(kept) > keep:
            old = kept.pop(0)
            for f in sorted((base / f"checkpoint-{old}").rglob("*"), reverse=True):
                f.unlink()
            (base / f"checkpoint-{old}").rmdir()
    if p.state == "finished":
        summ = dict(train_runtime=round(p.reached * p.sps, 1), train_samples_per_second=0.9,
                    train_steps_per_second=round(1 / p.sps, 4), total_flos=0.0, train_loss=0.0021,
                    epoch=round(p.reached / p.plan, 4), step=p.reached)
        dump_json(base / "trainer_state.json", trainer_state([*rows, summ], p.reached, p.plan, p.log_every,
                                                             save_every, p.eval_every or None, 1.0,
                                                             training_stop=True))


def _tqdm(n: int, total: int, sps: float) -> str:
    frac = n / total
    bar = ("█" * int(frac * 10)).ljust(10)
    el, rem = int(n * sps), int((total - n) * sps)
    hms = lambda x: f"{x // 3600}:{x // 60 % 60:02d}:{x % 60:02d}"  # noqa: E731
    return f"{int(frac * 100):3d}%|{bar}| {n}/{total} [{hms(el)}<{hms(rem)}, {sps:.2f}s/it]"


def _pyrepr(d: dict) -> str:
    return "{" + ", ".join(f"'{k}': {'nan' if isinstance(x, float) and math.isnan(x) else repr(x)}"
                           for k, x in d.items()) + "}"


def w_trl_console(run: dict, folder: Path, spe: int, fn: str | None = None, name: str = "train.log",
                  traceback: str | None = None) -> None:
    """What `python train_grpo.py 2>&1 | tee train.log` shows: tqdm bars (carriage returns) and the dicts
    Trainer.log prints, without a step key (only epoch)."""
    p: Plot = run["plot"]
    lines = ["INFO 11-27 02:01:13 [__init__.py:239] Automatically detected platform cuda.",
             "***** Running training *****", f"  Num examples = {spe * 16}", "  Num Epochs = 1",
             "  Instantaneous batch size per device = 8", "  Gradient Accumulation steps = 4",
             f"  Total optimization steps = {p.plan}", "  Number of trainable parameters = 40,370,176"]
    rows = {}
    for s, v in run["train"]:
        d = dict(v.items())
        if fn:
            d[f"rewards/{fn}"] = v["reward"]
        rows.setdefault(s, []).append(dict(loss=round(0.003 * math.sin(s), 4), **d, epoch=round(s / spe, 2)))
    for s, v in run["eval"]:
        rows.setdefault(s, []).append(dict(eval_loss=round(0.002 * math.cos(s), 4), **v,
                                           eval_runtime=round(160 + 4 * math.sin(s), 4),
                                           eval_samples_per_second=3.1, eval_steps_per_second=0.1,
                                           epoch=round(s / spe, 2)))
    bars, last = [], 0
    for s in sorted(rows):
        bars = "\r".join(_tqdm(n, p.plan, p.sps) for n in range(max(last, s - 3), s + 1))
        last = s
        lines.append("\r" + bars)
        for d in rows[s]:
            lines.append(_pyrepr(d))
    if traceback:
        lines += traceback.strip("\n").split("\n")
    (folder / name).write_text("\n".join(lines) + "\n")


def w_tb(run: dict, folder: Path, sub: str, tp: str = "train/", ep: str = "eval/", rename: dict | None = None,
         host: str = "gpu-node-07", extra_ckpt: Callable | None = None) -> None:
    ren = rename or {}
    ev = []
    for s, v in run["train"]:
        ev.append((run["t"](s), s, {tp + ren.get(k, k): x for k, x in v.items()}))
    for s, v in run["eval"]:
        ev.append((run["t"](s) + 40, s, {ep + ren.get(k, k): x for k, x in v.items()}))
    ev.sort(key=lambda e: (e[0], e[1]))
    t0 = ev[0][0] - 120
    tb_file(folder / sub / f"events.out.tfevents.{int(t0)}.{host}.{2000 + len(sub)}.0", ev)
    if extra_ckpt:
        extra_ckpt(run, folder)


def g6(x: float) -> float:
    return float(f"{x:.6g}")


def _v(x: float, np2: bool) -> str:
    if isinstance(x, int):
        return f"np.int64({x})" if np2 else str(x)
    if math.isnan(x):
        return "np.float64(nan)" if np2 else "nan"
    return f"np.float64({x!r})" if np2 else repr(g6(x))


def w_verl_console(run: dict, folder: Path, np2: bool, project: str, exp: str, save_freq: int, name: str,
                   tail: list[str] | None = None) -> None:
    p: Plot = run["plot"]
    lines = ["2026-11-27 01:02:11,501\tINFO worker.py:1879 -- Started a local Ray instance. View the dashboard at "
             "127.0.0.1:8265", f"(TaskRunner pid=41873) trainer.project_name={project} trainer.experiment_name={exp}",
             f"(TaskRunner pid=41873) Size of train dataloader: {p.plan}, Size of val dataloader: 1",
             f"(TaskRunner pid=41873) Total training steps: {p.plan}",
             "(TaskRunner pid=41873) Checkpoint tracker file does not exist: "
             f"/mnt/ckpt/{project}/{exp}/latest_checkpointed_iteration.txt",
             "(TaskRunner pid=41873) Training from scratch"]
    rows: dict[int, dict] = {}
    for s, v in run["eval"]:
        rows.setdefault(s, {}).update(v)
    for s, v in run["train"]:
        rows.setdefault(s, {}).update(v)
        rows[s]["training/global_step"] = s
        rows[s]["training/epoch"] = 0
        rows[s]["timing_s/step"] = p.sps * math.exp(0.05 * math.sin(s))
    for s in sorted(rows):
        if s == 0:
            lines.append("(TaskRunner pid=41873) test_gen_batch meta info: {'eos_token_id': 151645, 'pad_token_id': "
                         "151643, 'recompute_log_prob': False, 'do_sample': False, 'validate': True}")
            lines.append(f"(TaskRunner pid=41873) Initial validation metrics: {{{', '.join(repr(k) + ': ' + _v(x, np2) for k, x in rows[0].items())}}}")
        lines.append(f"(TaskRunner pid=41873) step:{s} - " + " - ".join(f"{k}:{_v(x, np2)}" for k, x in rows[s].items()))
        if save_freq and s and s % save_freq == 0:
            lines.append(f"(TaskRunner pid=41873) local_global_step_folder: /mnt/ckpt/{project}/{exp}/global_step_{s}")
    if tail:
        lines += tail
    (folder / name).write_text("\n".join(lines) + "\n")


def w_verl_jsonl(run: dict, folder: Path, project: str, exp: str, save_freq: int, test_freq: int,
                 ckpt_local: bool = True) -> None:
    p: Plot = run["plot"]
    rows: dict[int, dict] = {}
    for s, v in run["eval"]:
        rows.setdefault(s, {}).update(v)
    for s, v in run["train"]:
        rows.setdefault(s, {}).update({k: (None if isinstance(x, float) and math.isnan(x) else x) for k, x in v.items()})
        rows[s]["training/global_step"] = s
        rows[s]["perf/time_per_step"] = p.sps
    path = folder / "metrics" / project / f"{exp}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"step": s, "data": rows[s]}) + "\n" for s in sorted(rows)))
    hy = folder / "outputs" / "2026-11-26" / "21-40-07" / ".hydra"
    hy.mkdir(parents=True)
    hy.joinpath("config.yaml").write_text(
        f"data:\n  train_batch_size: 256\n  max_response_length: 4096\nactor_rollout_ref:\n  rollout:\n    n: 8\n"
        f"algorithm:\n  adv_estimator: grpo\ntrainer:\n  total_epochs: 1\n  total_training_steps: {p.plan}\n"
        f"  save_freq: {save_freq}\n  test_freq: {test_freq}\n  val_before_train: true\n"
        f"  project_name: {project}\n  experiment_name: {exp}\n  logger: [console, file]\n"
        f"  default_local_dir: checkpoints/{project}/{exp}\n")
    if ckpt_local and save_freq:
        saves = list(range(save_freq, p.reached + 1, save_freq))
        for n in saves:
            d = folder / "checkpoints" / project / exp / f"global_step_{n}" / "actor"
            d.mkdir(parents=True)
            (d / "huggingface").mkdir()
            (d / "huggingface" / "config.json").write_text('{"architectures": ["Qwen2ForCausalLM"]}\n')
        if saves:
            (folder / "checkpoints" / project / exp / "latest_checkpointed_iteration.txt").write_text(str(saves[-1]))


def _wandb_records(payloads: list[bytes]) -> bytes:
    """W&B transaction log: 7-byte header, then LevelDB-log chunks in 32 KiB blocks, zlib CRC-32 over type+data."""
    out = bytearray(b":W&B" + struct.pack("<H", 0xBEE1) + bytes([0]))
    block = 32768
    for data in payloads:
        pos, first = 0, True
        while True:
            left = block - len(out) % block
            if left < 7:
                out += b"\x00" * left
                continue
            frag = data[pos:pos + left - 7]
            pos += len(frag)
            end = pos >= len(data)
            typ = 1 if first and end else 2 if first else 4 if end else 3
            crc = zlib.crc32(frag, zlib.crc32(bytes([typ]))) & 0xFFFFFFFF
            out += struct.pack("<IHB", crc, len(frag), typ) + frag
            first = False
            if end:
                break
    return bytes(out)


def w_wandb_offline(run: dict, folder: Path, project: str, exp: str, config: dict, rid: str = "k3x9q2vd") -> None:
    """verl with trainer.logger=[wandb] and WANDB_MODE=offline: only wandb/offline-run-*/ on disk."""
    from wandb.proto import wandb_internal_pb2 as pb

    p: Plot = run["plot"]
    t0 = run["t"](0) - 300
    stamp = time.strftime("%Y%m%d_%H%M%S", time.gmtime(t0))
    rd = folder / "wandb" / f"offline-run-{stamp}-{rid}"
    (rd / "files").mkdir(parents=True)
    (rd / "logs").mkdir()
    recs, num = [], 0

    def add(r):
        nonlocal num
        num += 1
        r.num = num
        recs.append(r.SerializeToString())

    r = pb.Record()
    r.run.run_id, r.run.project, r.run.display_name = rid, project, exp
    for key, val in config.items():
        it = r.run.config.update.add()
        it.key, it.value_json = key, json.dumps(val)
    add(r)
    rows: dict[int, dict] = {}
    for s, v in run["eval"]:
        rows.setdefault(s, {}).update(v)
    for s, v in run["train"]:
        rows.setdefault(s, {}).update(v)
        rows[s]["training/global_step"] = s
    for _i, s in enumerate(sorted(rows)):
        r = pb.Record()
        ts = run["t"](s)
        for key, val in [*rows[s].items(), ("_step", s), ("_runtime", ts - t0), ("_timestamp", ts)]:
            it = r.history.item.add()
            it.key, it.value_json = key, json.dumps(val)
        r.history.step.num = s
        add(r)
    if p.state == "finished":
        r = pb.Record()
        r.exit.exit_code = 0
        add(r)
    (rd / f"run-{rid}.wandb").write_bytes(_wandb_records(recs))
    (rd / "files" / "config.yaml").write_text("_wandb:\n  value:\n    cli_version: 0.21.0\n" + "".join(
        f"{k}:\n  value: {json.dumps(v)}\n" for k, v in config.items()))
    (rd / "files" / "wandb-metadata.json").write_text(json.dumps(
        {"os": "Linux-5.15.0-1063-nvidia-x86_64", "python": "CPython 3.11.11", "program": "-m verl.trainer.main_ppo",
         "startedAt": time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime(t0)), "gpu": "NVIDIA H100 80GB HBM3",
         "gpu_count": 8}, indent=2))
    (rd / "files" / "requirements.txt").write_text("verl==0.6.1\nvllm==0.11.0\ntorch==2.8.0\n")
    (rd / "logs" / "debug.log").write_text(f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(t0))},001 INFO    "
                                           "MainThread:41873 [wandb_init.py:init():1011] starting backend\n")
    os.symlink(rd.name, folder / "wandb" / "latest-run")


def w_wandb_history_csv(run: dict, folder: Path, name: str, config: dict) -> None:
    """`api.run(path).history(samples=100000).to_csv(...)`: pandas index column, _step/_runtime/_timestamp, keys
    sorted, empty cells where a row lacks a key."""
    rows: dict[int, dict] = {}
    for s, v in run["eval"]:
        rows.setdefault(s, {}).update(v)
    for s, v in run["train"]:
        rows.setdefault(s, {}).update(v)
    keys = sorted({k for r in rows.values() for k in r})
    t0 = run["t"](0) - 200
    with (folder / name).open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["", "_step", "_runtime", "_timestamp", *keys])
        for i, s in enumerate(sorted(rows)):
            ts = run["t"](s)
            w.writerow([i, s, round(ts - t0, 3), round(ts, 3), *[repr(rows[s][k]) if k in rows[s] else "" for k in keys]])
    (folder / "run_config.json").write_text(json.dumps(config, indent=2))


def w_custom_csv(run: dict, folder: Path, name: str, cols: list[str], config: dict, eval_file: str | None = None,
                 done_line: str | None = None) -> None:
    """A hand-written loop's CSV: one row per logged step; eval columns empty except on eval steps (or a file of
    their own)."""
    ev = dict(run["eval"])
    ekeys = sorted({k for v in ev.values() for k in v})
    with (folder / name).open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", *cols, *([] if eval_file else ekeys)])
        for s, v in run["train"]:
            row = [s, *[f"{v[c]:.6g}" for c in cols]]
            if not eval_file:
                row += [f"{ev[s][k]:.4f}" if s in ev else "" for k in ekeys]
            w.writerow(row)
    if eval_file:
        with (folder / eval_file).open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["step", *ekeys])
            for s, v in run["eval"]:
                w.writerow([s, *[f"{v[k]:.4f}" for k in ekeys]])
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    if done_line:
        (folder / "DONE").write_text(done_line + "\n")


def w_custom_jsonl(run: dict, folder: Path, name: str, config: dict, split_key: str = "split",
                   tail: list[dict] | None = None, cfg_name: str = "run_config.json") -> None:
    """A hand-written loop's JSONL: {"step", "split": "train"|"val", ...metrics} per line."""
    recs = [(s, 0, {"step": s, split_key: "train", **{k: g6(x) for k, x in v.items()}}) for s, v in run["train"]]
    recs += [(s, 1, {"step": s, split_key: "val", **{k: g6(x) for k, x in v.items()}}) for s, v in run["eval"]]
    recs.sort(key=lambda r: (r[0], r[1]))
    text = "".join(json.dumps({**r, "time": round(run["t"](s), 1)}) + "\n" for s, _, r in recs)
    if tail:
        text += "".join(json.dumps(t) + "\n" for t in tail)
    (folder / name).write_text(text)
    (folder / cfg_name).write_text(json.dumps(config, indent=2))


def w_openrlhf_console(run: dict, folder: Path, name: str, total: int, traceback: str | None = None) -> None:
    p: Plot = run["plot"]
    lines = ["[2026-11-27 00:41:07,220] [INFO] [real_accelerator.py:254:get_accelerator] Setting ds_accelerator to "
             "cuda (auto detect)", f"Total training steps: {total} (num_episodes=1, rollout_batch_size=128)"]
    ev = dict(run["eval"])
    for s, v in run["train"]:
        lines.append(f"Episode [1/1]:  {100 * s // total}%|{'█' * (10 * s // total):<10}| {s}/{total} "
                     f"[{int(s * p.sps) // 3600}:{int(s * p.sps) // 60 % 60:02d}:00<?, {p.sps:.2f}s/it]")
        lines.append(f"✨ Global step {s}: {_pyrepr(v)}")
        if s in ev:
            lines.append(f"Evaluation completed in 88.31s, global_step {s}, eval_metrics: {_pyrepr(ev[s])}")
    if traceback:
        lines += traceback.strip("\n").split("\n")
    (folder / name).write_text("\n".join(lines) + "\n")


def stamp(folder: Path, run: dict) -> None:
    """mtimes: a file under a step-named folder was written at that step; everything else at the newest write."""
    p: Plot = run["plot"]
    pat = re.compile(r"(?:checkpoint-|global_step_?|step_)(\d+)$")
    for path in sorted(folder.rglob("*"), key=lambda x: -len(x.parts)):
        t = run["t_end"]
        for part in path.relative_to(folder).parts:
            m = pat.search(part)
            if m and int(m.group(1)) <= p.reached:
                t = min(run["t"](int(m.group(1))) + 60, run["t_end"])
        os.utime(path, (t, t), follow_symlinks=False)


# --------------------------------------------------------------------------------------------- side-track kits

def grpo_side(trl: bool, kl=None, ent=None, length=None, trunc=None, gn=None, lr=None, P=32) -> list[Track]:
    """Side tracks under TRL 1.x names (trl=True) or verl names."""
    ent = ent or k(0.42)
    length = length or k(650.0)
    trunc = trunc or k(0.02)
    gn = gn or k(0.25)
    lr = lr or k(1e-6)
    if trl:
        out = [Side("entropy", ent, 0.04), Side("completions/mean_length", length, 0.04),
               Side("completions/max_length", lambda s: min(4096, 2.6 * length(s)), 0.05),
               Side("completions/min_length", lambda s: 0.18 * length(s), 0.08),
               Rate("completions/clipped_ratio", trunc, P * 8), Heavy("grad_norm", gn), Exact("learning_rate", lr),
               Side("step_time", lambda s: 40 + length(s) / 25, 0.04)]
        if kl:
            out.append(Side("kl", kl, 0.06))
        return out
    out = [Side("actor/entropy", ent, 0.04), Side("response_length/mean", length, 0.04),
           Rate("response_length/clip_ratio", trunc, P * 8), Heavy("actor/grad_norm", gn), Exact("actor/lr", lr),
           Signed("actor/pg_loss", k(0.0), 0.01), Side("actor/pg_clipfrac", k(0.004), 0.2),
           Signed("actor/ppo_kl", k(0.0), 0.0004)]
    if kl:
        out += [Side("actor/kl_loss", kl, 0.06), Exact("actor/kl_coef", k(0.001))]
    return out


TB_CRASH_OPENRLHF = """
Traceback (most recent call last):
  File "/opt/conda/lib/python3.11/runpy.py", line 198, in _run_module_as_main
    return _run_code(code, main_globals, None,
  File "/workspace/OpenRLHF/openrlhf/cli/train_ppo_ray.py", line 471, in <module>
    train(args)
  File "/workspace/OpenRLHF/openrlhf/cli/train_ppo_ray.py", line 196, in train
    ray.get(trainer.fit.remote())
  File "/opt/conda/lib/python3.11/site-packages/ray/_private/worker.py", line 2822, in get
    raise value.as_instanceof_cause()
ray.exceptions.RayTaskError(FloatingPointError): ray::PPOTrainer.fit() (pid=88214, ip=10.0.4.17)
  File "/workspace/OpenRLHF/openrlhf/trainer/ppo_trainer.py", line 402, in fit
    status = self.ppo_train(steps)
  File "/workspace/OpenRLHF/openrlhf/trainer/ray/ppo_actor.py", line 157, in training_step
    raise FloatingPointError(f"non-finite loss at global step {self.global_step}, stopping")
FloatingPointError: non-finite loss at global step 560, stopping
"""


class EvalSide(Side):
    is_eval = True


def w_nemo(run: dict, folder: Path, exp: str, save_every: int, val_period: int) -> None:
    p: Plot = run["plot"]
    w_tb(run, folder, f"logs/{exp}/tensorboard", "", "", host="nemo-rl-head-0")
    (folder / "config.yaml").write_text(
        f"grpo:\n  num_prompts_per_step: 64\n  num_generations_per_prompt: 16\n  max_num_steps: {p.plan}\n"
        f"  val_period: {val_period}\n  val_at_start: true\nloss_fn:\n  reference_policy_kl_penalty: 0.01\n"
        f"checkpointing:\n  enabled: true\n  checkpoint_dir: results/grpo\n  save_period: {save_every}\n"
        f"  metric_name: val_reward\n  higher_is_better: true\n  keep_top_k: null\n"
        f"logger:\n  log_dir: logs\n  tensorboard_enabled: true\n  wandb_enabled: false\n")
    for n in range(save_every, p.reached + 1, save_every):
        d = folder / "results" / "grpo" / f"step_{n}"
        (d / "policy" / "weights").mkdir(parents=True)
        (d / "training_info.json").write_text(json.dumps({"step": n, "total_steps": n, "consumed_samples": n * 64}))
    if p.state == "finished":
        (folder / "logs" / exp / "train.out").write_text(
            f"▶ Step {p.reached}/{p.plan}\n📊 Training Results:\n  • Loss: 0.0012\n  • Avg Reward: "
            f"{run['train'][-1][1]['train/reward']:.4f}\nMax number of steps has been reached, stopping training.\n"
            f"Saving checkpoint for step {p.reached}...\n")


def w_roll(run: dict, folder: Path, exp: str, save_every: int) -> None:
    """A ROLL-style pipeline dir (plausible layout): TensorBoard tracker, checkpoint-N folders, the yaml config."""
    p: Plot = run["plot"]
    w_tb(run, folder, f"output/tensorboard/{exp}", "", "", host="roll-worker-0")
    (folder / "config.yaml").write_text(
        f"exp_name: {exp}\nmax_steps: {p.plan}\nsave_steps: {save_every}\neval_steps: {p.eval_every}\n"
        f"rollout_batch_size: 64\nnum_return_sequences_in_group: 8\nadv_estimator: grpo\n"
        f"track_with: tensorboard\ntracker_kwargs:\n  log_dir: ./output/tensorboard/{exp}\n"
        f"checkpoint_config:\n  output_dir: ./output/checkpoints/{exp}\n")
    for n in range(save_every, p.reached + 1, save_every):
        d = folder / "output" / "checkpoints" / exp / f"checkpoint-{n}" / "actor_train"
        d.mkdir(parents=True)
        (d / "config.json").write_text('{"architectures": ["Qwen2ForCausalLM"]}\n')


def w_openrlhf_jsonl(run: dict, folder: Path, total: int, save_every: int) -> None:
    """OpenRLHF with a small patch that appends every logs_dict / eval dict to metrics.jsonl (the team's own
    logger; OpenRLHF ships no file logger), plus its console log and ckpt/global_step<N> tags."""
    p: Plot = run["plot"]
    recs = [(s, 0, {"global_step": s, **{k: g6(x) for k, x in v.items()}}) for s, v in run["train"]]
    recs += [(s, 1, {"global_step": s, **v}) for s, v in run["eval"]]
    recs.sort(key=lambda r: (r[0], r[1]))
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for *_, r in recs))
    (folder / "launch.sh").write_text(
        "ray job submit -- python3 -m openrlhf.cli.train_ppo_ray --advantage_estimator group_norm \\\n"
        "  --pretrain Qwen/Qwen2.5-Coder-7B-Instruct --remote_rm_url ./reward_code_sandbox.py \\\n"
        f"  --num_episodes 1 --rollout_batch_size 128 --n_samples_per_prompt 8 --max_samples {128 * total} \\\n"
        f"  --save_steps {save_every} --eval_steps {p.eval_every} --logging_steps {p.log_every} \\\n"
        "  --save_path ./final --ckpt_path ./ckpt --use_tensorboard ''  # metrics.jsonl via our patch\n")
    for n in range(save_every, p.reached + 1, save_every):
        d = folder / "ckpt" / f"global_step{n}"
        d.mkdir(parents=True)
        (d / "client_state.json").write_text(json.dumps({"global_step": n, "episode": 0,
                                                         "total_consumed_prompts": n * 128}))
    lines = [f"Total training steps: {total}"]
    if p.state == "finished":
        (folder / "final").mkdir()
        (folder / "final" / "config.json").write_text('{"architectures": ["Qwen2ForCausalLM"]}\n')
        lines += [f"✨ Global step {p.reached}: saving checkpoint ckpt/global_step{p.reached}",
                  "Saving model to ./final", "Training finished. Total time: 31:07:45"]
    (folder / "train.log").write_text("\n".join(lines) + "\n")


@dataclass
class Spec:
    name: str
    plot: Plot
    write: Callable
    seed: int
    label: tuple
    tags: str
    why: str

    def labels(self) -> dict:
        kind = self.label[0]
        if kind == "ok":
            return HEALTHY
        if kind == "conv":
            return converged()
        if kind == "stop":
            return stop(self.label[1] if len(self.label) > 1 else None)
        lo, hi = head_window(self.plot, self.label[1])
        return (rollback if kind == "rb" else stop_or_rollback)(lo, hi, self.label[1])

    def case(self) -> Case:
        return Case(self.name, self.plot.draw, self.write, self.seed, (self.plot.reached, self.plot.plan),
                    self.labels(), self.tags, self.why)


def cosine(peak: float, total: int, warm: int = 0, floor: float = 0.0) -> Lvl:
    def f(s):
        if s < warm:
            return peak * s / warm
        return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, total - warm)))
    return f


def nan_after(step: int, lvl: Lvl) -> Lvl:
    return lambda s: float("nan") if s >= step else lvl(s)


STALL_TAIL = ["(WorkerDict pid=52210, ip=10.0.7.21) [rank5]:[W1127 02:48:10.118273 ProcessGroupNCCL.cpp:1783] "
              "[PG ID 1 PG GUID 1 Rank 5] Watchdog: no progress on collective ALLREDUCE (SeqNum=982213) for 600s"]
EV_TRL = "eval_reward"
# verl-side names
SC = "critic/score/mean"

SPECS: list[Spec] = [
    # ================================================================================ healthy (continue)
    Spec("ok-staircase-flat-250-to-520-then-second-climb-checked-at-35pct-trl1x-state",
         Plot([Bern("reward", pw((0, .28), (250, .46), (520, .47), (700, .55)), P=32, std="reward_std",
                    zero="frac_reward_zero_std"),
               *grpo_side(True, ent=pw((0, .55), (250, .38), (470, .34), (540, .43), (700, .40)),
                          length=pw((0, 480), (250, 620), (520, 640), (700, 760)), gn=k(.22),
                          lr=pw((0, 0), (40, 1e-6), (2000, 1e-6))),
               Binom(EV_TRL, pw((0, .30), (250, .44), (520, .445), (700, .51)), 500)],
              EV_TRL, 2000, 700, log_every=10, eval_every=50, age_min=7, sps=75),
         lambda r, f: w_trl_state(r, f, 100, 3), 1801, ("ok",),
         "healthy trl1x trainer_state staircase early-check save-limit",
         "TRL 1.x GRPO (beta 0, no kl key), checked at step 700 of 2000 (35%). Held-out reward rose 0.30 -> 0.44 by "
         "step 250 and then sat flat for ~270 steps (0.44-0.445), which looked like the end; from ~520 it climbs "
         "again to 0.51 at 700 (N=500, sd 0.022: +3 sd in 180 steps), train reward 0.47 -> 0.55 with it, and "
         "entropy bumped 0.34 -> 0.43 just before the second climb (a new strategy being explored). A staircase, "
         "not a plateau: 65% of the budget left and the run is climbing. Continue."),
    Spec("ok-lr-warmup-300-flat-start-lifts-at-360-of-3000-openrlhf-tb",
         Plot([Bern("reward", pw((0, .22), (260, .225), (360, .27)), P=128, tau=1.3),
               Side("kl", pw((0, .0001), (260, .0006), (360, .0015)), .08), Signed("policy_loss", k(0.0), .01),
               Exact("actor_lr", pw((0, 0), (300, 5e-7), (3000, 5e-7))),
               Heavy("actor_grad_norm", pw((0, .08), (300, .3), (360, .3))),
               Side("response_length", pw((0, 900), (360, 980)), .03), Rate("truncated", k(.03), 1024),
               Side("ppo_clip_ratio", k(.002), .2), Side("ppo_kl", k(.0004), .2),
               Binom("eval_gsm8k_pass1", pw((0, .40), (260, .40), (360, .43)), 1319)],
              "eval_gsm8k_pass1", 3000, 360, eval_every=40, age_min=4, sps=95),
         lambda r, f: (w_tb(r, f, "logs/tb/qwen25-7b-grpo-gsm8k_1127T0103"),
                       (f / "launch.sh").write_text(
                           "python3 -m openrlhf.cli.train_ppo_ray --advantage_estimator group_norm \\\n"
                           "  --pretrain Qwen/Qwen2.5-7B --prompt_data openai/gsm8k --max_samples 384000 \\\n"
                           "  --rollout_batch_size 128 --n_samples_per_prompt 8 --num_episodes 1 \\\n"
                           "  --actor_learning_rate 5e-7 --lr_warmup_ratio 0.1 --eval_steps 40 \\\n"
                           "  --use_tensorboard logs/tb   # 384000 / 128 = 3000 steps\n")),
         1802, ("ok",), "healthy openrlhf tensorboard early-check lr-warmup slow-start",
         "OpenRLHF GRPO with a 10% linear lr warmup (300 of 3000 steps, visible in train/actor_lr), checked at "
         "step 360 (12%). For 260 steps the reward barely moves (0.22) and gsm8k pass@1 sits at 0.40: updates are "
         "tiny while lr is near zero. Since ~260 the reward lifts (~0.22 -> ~0.26 over the last 80 steps) and KL "
         "grows from nothing; the eval only starts to follow (level 0.40 -> ~0.43 by 360, draws still ~0.41; "
         "N=1319, sd 0.013). A slow starter, far too early to judge flat: continue."),
    Spec("ok-agent-shop-turns-rise-return-dips-solve-rate-climbs-custom-jsonl",
         Plot([Episodes({"ret": "train/ret", "succ": "train/succ", "turns": "turns_per_ep", "cap": "turn_cap_hit"},
                        pw((0, .12), (150, .16), (420, .30)), pw((0, 2.5), (200, 5.5), (420, 5.0)), E=64, pen=.02,
                        cap=12),
               Side("tool_ok_rate", pw((0, .55), (420, .85)), .03),
               Rate("env_err_rate", pw((0, .015), (225, .015), (235, .12), (255, .12), (265, .015), (420, .015)), 320),
               Side("kl_ref", pw((0, 0), (420, .05)), .06), Side("ent", pw((0, .9), (420, .7)), .03),
               Heavy("gnorm", k(.6)), Exact("lr", k(2e-6)),
               Binom("val_solve_rate", pw((0, .10), (150, .13), (420, .27)), 300)],
              "val_solve_rate", 1200, 420, eval_every=25, eval0=True, age_min=6, sps=150),
         lambda r, f: w_custom_jsonl(r, f, "agent_metrics.jsonl",
                                     {"total_updates": 1200, "episodes_per_update": 64, "turn_penalty": 0.02,
                                      "max_turns": 12, "env": "webshop-lite", "eval_every": 25}),
         1804, ("ok",), "healthy custom-jsonl agentic multi-turn tool-use early-check own-metric-names",
         "Hand-written multi-turn agent loop (webshop-style, 12-turn cap, -0.02 per turn), checked at update 420 "
         "of 1200 (35%). The agent first learns to use more tools (turns 2.5 -> 5.5), so train/ret dips slightly "
         "(0.07 -> ~0.06) while success is still low; tool-call success rises 0.55 -> 0.85; env errors spike to 12% "
         "for ~30 updates around 240 (sandbox hiccup) and return to 1.5%. val_solve_rate rises 0.10 -> 0.27 "
         "(N=300, sd 0.026; +6 sd) and return climbs to ~0.20. Learning well: continue."),
    Spec("ok-code-rl-compile-errors-fall-noisy-first-evals-verl-wandb-offline",
         Plot([Bern(SC, pw((0, .21), (450, .31)), P=64, copy=("critic/rewards/mean",)),
               *grpo_side(False, kl=pw((0, 0), (450, .004)), ent=pw((0, .6), (450, .5)),
                          length=pw((0, 700), (450, 820)), trunc=k(.03), gn=k(.18), P=64),
               Binom("val-core/livecodebench/acc/mean@1", pw((0, .17), (450, .25)), 400),
               Binom("val-aux/livecodebench/compile_error/mean@1", pw((0, .14), (450, .06)), 400, lower=True)],
              "val-core/livecodebench/acc/mean@1", 1500, 450, eval_every=25, eval0=True, age_min=9, sps=140),
         lambda r, f: w_wandb_offline(r, f, "code-rl", "qwen25-coder-7b-grpo-lcb",
                                      {"trainer": {"total_training_steps": 1500, "test_freq": 25, "save_freq": 100,
                                                   "project_name": "code-rl", "logger": ["console", "wandb"]},
                                       "algorithm": {"adv_estimator": "grpo"},
                                       "data": {"train_batch_size": 64, "max_response_length": 4096}}),
         1804, ("ok",), "healthy verl wandb-offline binary code-rl unit-tests noisy-eval early-check",
         "verl GRPO on code with W&B in offline mode: only wandb/offline-run-*/run-*.wandb holds the metrics. "
         "Checked at step 450 of 1500 (30%). Unit-test pass rate (critic/score/mean) 0.21 -> 0.31; livecodebench "
         "val acc (N=400, sd ~0.02) moves 0.17 -> 0.25 (+4 sd) though the first evaluations jump around by 0.03-"
         "0.04; compile errors in val-aux fall 0.14 -> 0.06. Improving: continue."),
    Spec("ok-bounded-rm-score-creeps-0.84-to-0.87-win-rate-vs-ref-rises-custom-csv",
         Plot([Score("rm_score", pw((0, .62), (400, .84), (1100, .87)), B=256, c=6, std="rm_score_std"),
               Side("kl_ref", pw((0, 0), (400, 3.0), (1100, 5.5)), .05),
               Side("entropy", pw((0, 1.9), (1100, 1.6)), .03), Heavy("grad_norm", k(.9)), Exact("lr", k(1e-6)),
               Side("resp_len", pw((0, 210), (1100, 260)), .04),
               Binom("win_rate_vs_ref", pw((0, .50), (400, .58), (1100, .66)), 500)],
              "win_rate_vs_ref", 3000, 1100, eval_every=100, eval0=True, age_min=11, sps=45),
         lambda r, f: w_custom_csv(r, f, "ppo_log.csv", ["rm_score", "rm_score_std", "kl_ref", "entropy",
                                                          "grad_norm", "lr", "resp_len"],
                                   {"total_steps": 3000, "algo": "ppo", "rm": "sigmoid-head RM, score in [0, 1]",
                                    "judge_eval": "win_rate_vs_ref on 500 prompts vs the SFT model, every 100"}),
         1805, ("ok",), "healthy custom-csv rlhf bounded-rm-score win-rate mid-way",
         "PPO RLHF in a hand-written loop; the RM has a sigmoid head so the score lives in [0, 1]. Checked at 1100 "
         "of 3000 (37%). rm_score shot up 0.62 -> 0.84 in 400 steps and since then only creeps to 0.87, so the "
         "train curve looks saturated; but the judged win_rate_vs_ref (N=500, sd 0.021) keeps rising 0.58 -> 0.66 "
         "over those 700 steps (+4 sd), KL grows moderately. Real gains, budget left: continue."),
    Spec("ok-fn-calling-heldout-call-err-lower-better-falls-heldout-em-rises-custom-jsonl",
         Plot([Bern("reward", pw((0, .35), (600, .55)), P=32),
               Side("kl", pw((0, 0), (600, .02)), .06), Side("entropy", pw((0, .5), (600, .42)), .03),
               Heavy("grad_norm", k(.35)), Exact("lr", k(1e-6)), Side("resp_tokens", pw((0, 140), (600, 120)), .03),
               Binom("heldout_em", pw((0, .41), (600, .52)), 800),
               Binom("heldout_call_err", pw((0, .21), (600, .11)), 800, lower=True)],
              "heldout_call_err", 2000, 600, eval_every=50, eval0=True, age_min=5, sps=50),
         lambda r, f: w_custom_jsonl(r, f, "log.jsonl", {"max_steps": 2000, "task": "function calling",
                                                          "heldout_call_err": "fraction of held-out calls that "
                                                          "fail schema validation (lower is better)"}),
         1806, ("ok",), "healthy custom-jsonl tool-use function-calling lower-is-better own-metric-names early-check",
         "Function-calling RL in a custom loop, checked at 600 of 2000 (30%). The held-out error rate "
         "heldout_call_err (lower is better) falls 0.21 -> 0.11 (N=800, sd 0.011-0.014; ~8 sd) and heldout_em "
         "rises 0.41 -> 0.52; reward 0.35 -> 0.55. Improving on every measure: continue."),
    Spec("ok-two-eval-sets-aime-flat-within-noise-math500-rises-trl1x-hf-tb",
         Plot([Bern("reward", pw((0, .45), (560, .60)), P=16, std="reward_std", zero="frac_reward_zero_std",
                    copy=("rewards/accuracy_reward/mean",)),
               Rate("rewards/format_reward/mean", pw((0, .7), (100, .97), (560, .99)), 128),
               *grpo_side(True, ent=pw((0, .5), (560, .41)), length=pw((0, 900), (560, 1150)), gn=k(.12)),
               Binom("eval_math500_reward", pw((0, .52), (560, .62)), 500),
               Binom("eval_aime24_reward", pw((0, .10), (560, .11)), 240)],
              "eval_math500_reward", 1600, 560, log_every=10, eval_every=40, age_min=8, sps=110),
         lambda r, f: (w_tb(r, f, "runs/Nov27_01-12-09_gpu-node-07",
                            rename={"eval_math500_reward": "math500_reward", "eval_aime24_reward": "aime24_reward"}),
                       w_trl_state(r, f, 250, None, fn=None)),
         1807, ("ok",), "healthy hf-tensorboard trl1x two-eval-sets aime-noise mid-way",
         "TRL 1.x GRPO with two eval datasets (eval/math500_reward, eval/aime24_reward) in TensorBoard plus "
         "checkpoint-250/500. Checked at 560 of 1600 (35%). MATH-500 rises 0.52 -> 0.62 (N=500, sd 0.022; 4.5 "
         "sd). AIME24 (30 problems x 8 samples) wobbles 0.07-0.13 around a flat ~0.10-0.11: its sd is ~0.02 and "
         "really larger (samples of one problem are correlated), so its dips say nothing. Continue."),
    Spec("ok-pass1-rises-pass-k-flat-sharpening-nemo-tb-at-25pct",
         Plot([Bern("train/reward", pw((0, .36), (500, .48)), P=64, G=16,
                    pct=("train/baseline_reward/pct_0", "train/baseline_reward/pct_1")),
               Side("train/kl_penalty", pw((0, 0), (500, .004)), .06),
               Side("train/approx_entropy", pw((0, .55), (500, .38)), .04),
               Side("train/mean_gen_tokens_per_sample", pw((0, 1300), (500, 1250)), .03),
               Rate("train/truncation_rate", k(.02), 1024), Heavy("train/grad_norm", k(.15)),
               Exact("train/lr", k(1e-6)), Side("train/token_mult_prob_error", k(1.004), .0005),
               Binom("validation/accuracy", pw((0, .38), (500, .47)), 800),
               Binom("validation/pass_k", pw((0, .72), (500, .71)), 500)],
              "validation/accuracy", 2000, 500, eval_every=25, eval0=True, age_min=6, sps=170),
         lambda r, f: w_nemo(r, f, "exp_004", 100, 25), 1808, ("ok",),
         "healthy nemo-rl tensorboard pass-at-k sharpening early-check",
         "NeMo-RL GRPO, checked at 500 of 2000 (25%). validation/accuracy (pass@1 over 4 samples x 500 problems, "
         "sd ~0.017) rises 0.38 -> 0.47 while validation/pass_k (k=16) stays ~0.71-0.72: the policy sharpens "
         "onto answers it could already find, the usual RLVR pattern, not a failure. pass@1 is the target "
         "metric and it is climbing: continue."),
    Spec("ok-format-adaptation-dip-first-40-steps-recovers-above-start-verl-jsonl-at-10pct",
         Plot([Bern(SC, pw((0, .60), (40, .50), (80, .60), (130, .68)), P=128, G=5),
               *grpo_side(False, kl=pw((0, 0), (130, .003)), ent=pw((0, .45), (40, .7), (90, .45), (130, .40)),
                          length=pw((0, 300), (40, 180), (90, 240), (130, 250)), gn=pw((0, .5), (40, .9), (90, .3), (130, .3)),
                          P=128),
               Binom("val-core/openai/gsm8k/acc/mean@1", pw((0, .62), (40, .52), (80, .60), (130, .67)), 1319)],
              "val-core/openai/gsm8k/acc/mean@1", 1300, 130, eval_every=10, eval0=True, age_min=3, sps=80),
         lambda r, f: w_verl_jsonl(r, f, "gsm8k-grpo", "qwen3-4b-base-fmt", 100, 10), 1809, ("ok",),
         "healthy verl jsonl very-early dip-recovered format-adaptation",
         "verl GRPO from a base model, checked at step 130 of 1300 (10%). The first 40 steps the model adapts to "
         "the answer format: entropy jumps 0.45 -> 0.7, responses shorten, val acc drops 0.62 -> 0.52. It has "
         "recovered since: 0.60 at 80 and 0.67 at 130 (N=1319, sd 0.013), above the step-0 value by ~4 sd. The "
         "best is now; nothing behind to go back to. Continue."),
    Spec("ok-last-two-evals-low-by-chance-small-eval-level-rising-verl-console-np2",
         Plot([Bern(SC, pw((0, .28), (380, .40)), P=64),
               *grpo_side(False, kl=pw((0, 0), (380, .005)), ent=pw((0, .52), (380, .44)),
                          length=pw((0, 1400), (380, 1700)), gn=k(.2), P=64),
               Binom("val-core/amc23/acc/mean@5", pw((0, .30), (380, .42)), 200)],
              "val-core/amc23/acc/mean@5", 1000, 380, eval_every=20, eval0=True, age_min=4, sps=130),
         lambda r, f: w_verl_console(r, f, True, "amc-grpo", "qwen25-math-7b", 100, "main_ppo.out"), 1851,
         ("ok",), "healthy verl console numpy2 small-eval noise mid-way",
         "verl GRPO, console log with NumPy-2 reprs, checked at 380 of 1000. The val set is AMC23 x 5 samples "
         "(200, sd ~0.035). The noise-free level climbs steadily 0.30 -> 0.42 and train score 0.28 -> 0.40, but "
         "the last evaluations drew low against an earlier lucky high, so the eval curve looks like it "
         "turned down. Score, entropy and length all still trend the healthy way: continue."),
    Spec("ok-plateau-since-320-checked-at-600-of-2000-signal-intact-verl-console",
         Plot([Bern(SC, pw((0, .30), (320, .52), (600, .525)), P=128),
               *grpo_side(False, kl=pw((0, 0), (320, .004), (600, .006)), ent=pw((0, .5), (320, .41), (600, .40)),
                          length=pw((0, 600), (320, 820), (600, 840)), gn=k(.2), P=128),
               Binom("val-core/math/acc/mean@1", pw((0, .34), (320, .50), (600, .505)), 500)],
              "val-core/math/acc/mean@1", 2000, 600, eval_every=20, eval0=True, age_min=5, sps=100),
         lambda r, f: w_verl_console(r, f, False, "math-grpo", "qwen25-7b-plateau", 200, "train.log"), 1811,
         ("ok",), "healthy verl console plateau-with-budget mid-way signal-intact",
         "verl GRPO checked at 600 of 2000 (30%). Score and MATH val acc rose fast to step 320 (0.50) and have "
         "held there for 280 steps (0.505 now, N=500, sd 0.022). Nothing is broken: entropy steady ~0.40, KL "
         "tiny and stable, grad norm and lengths steady, no decline. With 70% of the budget left and learning "
         "signal intact, a plateau this early is 'holding healthily': continue (staircases are common)."),
    # ================================================================================ stop
    Spec("stop-finished-2000-code-pass-plateau-since-1100-best-at-end-openrlhf-jsonl",
         Plot([Bern("train/reward", pw((0, .40), (1100, .62), (2000, .63)), P=128),
               Side("train/kl", pw((0, 0), (1100, .02), (2000, .03)), .06),
               Side("train/response_length", pw((0, 600), (1100, 700), (2000, 710)), .03),
               Rate("train/truncated", k(.02), 1024), Heavy("train/actor_grad_norm", k(.2)),
               Exact("train/actor_lr", cosine(5e-7, 2000, 100, 5e-8)), Signed("train/policy_loss", k(0.0), .01),
               Side("train/ppo_clip_ratio", k(.003), .2),
               Binom("eval/eval_mbpp_pass1", pw((0, .45), (1100, .58), (2000, .585)), 500),
               Binom("eval/eval_humaneval_pass1", pw((0, .55), (1100, .66), (2000, .665)), 164)],
              "eval/eval_mbpp_pass1", 2000, 2000, log_every=5, eval_every=100, state="finished", age_min=190,
              sps=55),
         lambda r, f: w_openrlhf_jsonl(r, f, 2000, 500), 1819, ("stop", 1100),
         "stop openrlhf jsonl finished code-rl plateau best-at-end",
         "OpenRLHF GRPO on code, finished (2000 of 2000, final model saved, 'Training finished'). MBPP pass@1 "
         "rose 0.45 -> 0.58 by step 1100 and then flattened (0.585 at the end; N=500, sd 0.022); HumanEval "
         "(N=164) the same. The final weights are as good as any: keep them (stop); nothing earlier is better."),
    Spec("stop-plateau-at-40pct-entropy-floor-zero-std-near-90pct-not-a-staircase-trl1x-state",
         Plot([Bern("reward", pw((0, .35), (240, .80), (800, .805)), P=16, tau=pw((0, 1.2), (240, 9), (400, 12)), std="reward_std",
                    zero="frac_reward_zero_std"),
               *grpo_side(True, ent=pw((0, .5), (240, .09), (800, .05)), length=pw((0, 700), (240, 420), (800, 400)),
                          gn=pw((0, .3), (240, .06), (800, .035)), P=16),
               Binom(EV_TRL, pw((0, .33), (240, .58), (800, .58)), 500)],
              EV_TRL, 2000, 800, log_every=10, eval_every=50, age_min=6, sps=60),
         lambda r, f: w_trl_state(r, f, 100, 4), 1813, ("stop", 300),
         "stop trl1x trainer_state plateau no-signal entropy-collapse mid-way",
         "TRL 1.x GRPO at 800 of 2000 (40%). Reward jumped 0.35 -> 0.80 by step 240 and eval to 0.58; both are "
         "flat for 550 steps since. Unlike a staircase, the learning signal is gone: frac_reward_zero_std "
         "climbed 0.2 -> ~0.89 (each prompt is now always solved or never solved), entropy collapsed 0.5 -> 0.05, grad norm 0.3 -> 0.035, "
         "completions stopped changing. Nothing more to gain and no decline: stop and keep the current weights."),
    Spec("stop-sandbox-misconfigured-every-test-errors-reward-zero-at-15pct-roll-tb",
         Plot([Exact(SC, k(0.0)), Exact("critic/score/max", k(0.0)), Exact("critic/rewards/mean", k(0.0)),
               Rate("env/sandbox_error_rate", k(1.0), 512), Exact("actor/grad_norm", k(0.0)),
               Side("actor/entropy", k(.62), .02), Exact("actor/pg_loss", k(0.0)),
               Side("tokens/response_length/mean", k(640), .03), Exact("actor/lr", k(1e-6)),
               Binom("val/score/livecodebench", k(0.0), 400)],
              "val/score/livecodebench", 2000, 300, eval_every=50, eval0=True, age_min=5, sps=70),
         lambda r, f: w_roll(r, f, "coder7b-rlvr-sbx", 100), 1814, ("stop",),
         "stop roll tensorboard code-rl env-errors never-learns early-check",
         "ROLL-style code RL pipeline at 300 of 2000 (15%). Every rollout's unit tests error in the sandbox "
         "(env/sandbox_error_rate = 1.0 from step 1), so the score is exactly 0 on every step, all advantages "
         "are 0, grad norm and pg_loss are exactly 0 and the weights never change; validation is 0 too. This "
         "is not a slow start: there is no learning signal at all. Stop (fix the sandbox); the weights equal "
         "the initial ones."),
    Spec("stop-bounded-rm-score-pinned-0.985-win-rate-flat-since-650-kl-grows-custom-csv",
         Plot([Score("rm_score", pw((0, .60), (600, .978), (1300, .985)), B=256, c=8, std="rm_score_std"),
               Side("kl_ref", pw((0, 0), (650, 8), (1300, 11.5)), .05),
               Side("entropy", pw((0, 1.8), (650, 1.1), (1300, .95)), .03),
               Heavy("grad_norm", pw((0, 1.0), (650, .4), (1300, .3))), Exact("lr", k(1e-6)),
               Side("resp_len", pw((0, 200), (650, 260), (1300, 270)), .04),
               Binom("win_rate_vs_ref", pw((0, .50), (650, .71), (1300, .71)), 500)],
              "win_rate_vs_ref", 3000, 1300, eval_every=100, eval0=True, age_min=9, sps=45),
         lambda r, f: w_custom_csv(r, f, "ppo_log.csv", ["rm_score", "rm_score_std", "kl_ref", "entropy",
                                                          "grad_norm", "lr", "resp_len"],
                                   {"total_steps": 3000, "algo": "ppo", "rm": "sigmoid-head RM, score in [0, 1]"}),
         1815, ("stop", 700), "stop custom-csv rlhf bounded-rm-score saturated kl-drift mid-way",
         "PPO RLHF with a [0, 1] reward model, at 1300 of 3000 (43%). rm_score is pinned at the ceiling "
         "(0.978 -> 0.985 since step 600; per-sample spread ~0.04, so almost no advantage signal), the judged "
         "win_rate_vs_ref has been flat at 0.71 since 650 (N=500, sd 0.02), while KL to the reference keeps "
         "growing 8 -> 11.5 nats. Drift without gain and without a decline yet: stop, current weights are as "
         "good as any."),
    Spec("conv-heldout-ppl-flat-last-500-at-90pct-cosine-tail-custom-jsonl",
         Plot([Score("reward", pw((0, .45), (1500, .70), (2200, .72), (2700, .72)), B=512, c=4),
               Side("kl", pw((0, 0), (1500, .9), (2700, 1.1)), .05), Exact("lr", cosine(1e-6, 3000)),
               Heavy("grad_norm", k(.5)), Side("entropy", pw((0, 2.1), (2700, 1.8)), .03),
               PPL("val_ppl", pw((0, 14.0), (1500, 11.2), (2200, 11.0), (2700, 11.0)), 2000),
               Binom("val_pref_acc", pw((0, .5), (1500, .66), (2200, .67), (2700, .67)), 1000)],
              "val_ppl", 3000, 2700, log_every=10, eval_every=100, eval0=True, age_min=12, sps=30),
         lambda r, f: w_custom_jsonl(r, f, "train_log.jsonl",
                                     {"num_updates": 3000, "lr_schedule": "cosine", "log_every": 10,
                                      "val_ppl": "perplexity of held-out human replies (lower is better)"}),
         1816, ("conv",), "converged custom-jsonl lower-is-better perplexity cosine-tail near-end",
         "Dialogue RL in a custom loop at 2700 of 3000 (90%), cosine lr almost at zero. Held-out perplexity of "
         "human replies (lower is better) fell 14.0 -> 11.2 by 1500 and has sat at ~11.0 since 2200 (sd ~0.1 "
         "per eval); preference accuracy flat at 0.67; train reward flat. Converged near its end: stopping now "
         "or letting the last 300 steps run are both fine."),
    Spec("stop-dpo-stalled-5h-eval-acc-flat-since-500-margins-keep-growing-openrlhf-tb",
         Plot([Side("loss", pw((0, .69), (500, .52), (900, .40)), .04),
               Rate("acc", pw((0, .5), (500, .72), (900, .82)), 128),
               Signed("chosen_reward", pw((0, 0), (500, -.4), (900, -1.2)), .05),
               Signed("reject_reward", pw((0, 0), (500, -1.4), (900, -3.0)), .05),
               Exact("lr", k(5e-7)), Heavy("grad_norm", k(6.0)),
               Binom("acc_mean", pw((0, .55), (500, .68), (900, .68)), 1000),
               EvalSide("eval_loss", pw((0, .69), (500, .60), (900, .61)), .01)],
              "acc_mean", 2400, 900, log_every=10, eval_every=50, state="stalled", age_min=300, sps=20),
         lambda r, f: (w_tb(r, f, "tb_logs/dpo-qwen3-8b-uf"),
                       (f / "launch.sh").write_text(
                           "deepspeed --module openrlhf.cli.train_dpo --pretrain ./sft-qwen3-8b \\\n"
                           "  --dataset HuggingFaceH4/ultrafeedback_binarized --max_samples 153600 \\\n"
                           "  --train_batch_size 64 --max_epochs 1 --beta 0.1 --learning_rate 5e-7 \\\n"
                           "  --eval_steps 50 --logging_steps 10 --use_tensorboard tb_logs  # 153600 / 64 = 2400 steps\n")),
         1817, ("stop", 500),
         "stop openrlhf tensorboard dpo stalled eval-flat margins-grow",
         "OpenRLHF DPO whose last TensorBoard write is 5 hours old at step 900 of 2400 (hung). Held-out "
         "preference accuracy rose 0.55 -> 0.68 by step 500 and is flat since (N=1000, sd 0.015); eval loss "
         "bottomed at 0.60 and sits at 0.61; meanwhile train acc 0.72 -> 0.82 and margins keep widening "
         "(rejected -1.4 -> -3.0): it is fitting the training pairs. Nothing more to gain and no real decline: "
         "do not restart, stop and keep the weights."),
    # ================================================================================ rollback
    Spec("bad-long-best-stretch-400-to-1150-then-entropy-blowup-ckpts-every-500-verl-jsonl",
         Plot([Bern(SC, pw((0, .42), (400, .60), (1150, .61), (1200, .52), (1300, .30)), P=128),
               *grpo_side(False, kl=pw((0, 0), (1150, .01), (1300, .09)),
                          ent=pw((0, .5), (1150, .32), (1220, 1.1), (1300, 2.3)),
                          length=pw((0, 800), (1150, 900), (1230, 2600), (1300, 3900)),
                          trunc=pw((0, .02), (1150, .03), (1300, .55)),
                          gn=pw((0, .2), (1150, .2), (1200, 1.5), (1300, 4)), P=128),
               Binom("val-core/math500/acc/mean@1", pw((0, .40), (400, .56), (1150, .565), (1200, .50), (1300, .36)),
                     500)],
              "val-core/math500/acc/mean@1", 3000, 1300, eval_every=50, eval0=True, age_min=4, sps=120),
         lambda r, f: w_verl_jsonl(r, f, "math-rl", "qwen25-7b-dapo-long", 500, 50), 1818, ("rb", 1150),
         "rollback verl jsonl long-good-stretch sparse-checkpoints entropy-blowup",
         "verl GRPO at 1300 of 3000, checkpoints every 500 (global_step_500, _1000 on disk). MATH-500 val acc "
         "reached 0.56 at step 400 and held 0.56-0.565 until 1150: a 750-step good stretch. Then entropy blows "
         "up 0.32 -> 2.3, lengths 900 -> 3900 with 55% truncated, grad norm x20, and val acc falls to 0.36 at "
         "1300 (N=500, sd 0.022; 9 sd). Roll back to the END of the good stretch (~1150; the newest saved "
         "checkpoint at or before it is global_step_1000), not to its start at 400."),
    Spec("bad-save-limit-2-rotated-past-the-peak-exit-code-hack-heldout-falls-trl1x-state",
         Plot([Bern("reward", pw((0, .45), (550, .62), (620, .64), (1000, .74)), P=16, std="reward_std",
                    zero="frac_reward_zero_std"),
               *grpo_side(True, ent=pw((0, .5), (620, .35), (1000, .28)), length=pw((0, 520), (620, 480), (1000, 260)),
                          gn=k(.25), P=16),
               Binom(EV_TRL, pw((0, .30), (550, .47), (620, .475), (1000, .38)), 400)],
              EV_TRL, 1500, 1000, log_every=10, eval_every=50, age_min=6, sps=65),
         lambda r, f: w_trl_state(r, f, 100, 2, fn="unit_test_reward"), 1820, ("rb", 620),
         "rollback trl1x trainer_state save-limit checkpoints-rotated code-rl reward-hacking",
         "TRL 1.x GRPO on code, save_total_limit=2 so only checkpoint-900 and -1000 remain. The training harness "
         "counts a clean exit as a pass; from ~620 the policy learns to call sys.exit(0) before the asserts: "
         "train reward keeps rising 0.64 -> 0.74 while completions shrink 480 -> 260 tokens. The held-out "
         "harness checks outputs: eval_reward peaked ~0.475 (600-620) and is 0.38 at 1000 (N=400, sd 0.025; "
         "3.8 sd). A better model lies behind (~600), though no checkpoint of it is on disk any more: rollback."),
    Spec("bad-safety-refusal-eval-falls-helpfulness-flat-one-of-three-evals-openrlhf-tb",
         Plot([Score("reward", pw((0, -.2), (500, 1.3), (1000, 2.1)), B=512, c=3, lo=-4, hi=4),
               Side("kl", pw((0, 0), (700, .05), (1000, .11)), .06),
               Side("response_length", pw((0, 240), (700, 330), (1000, 420)), .04),
               Heavy("actor_grad_norm", k(.4)), Exact("actor_lr", k(5e-7)), Signed("policy_loss", k(0.0), .02),
               Side("critic_loss", pw((0, .5), (1000, .2)), .06),
               Binom("eval_harmful_refusal_pass1", pw((0, .93), (300, .94), (700, .935), (1000, .78)), 500),
               Binom("eval_alpaca_winrate_pass1", pw((0, .40), (500, .56), (700, .58), (1000, .585)), 800),
               Binom("eval_xstest_comply_pass1", pw((0, .85), (1000, .87)), 250)],
              "eval_harmful_refusal_pass1", 2500, 1000, eval_every=50, age_min=7, sps=80),
         lambda r, f: w_tb(r, f, "logs/tb/llama31-8b-ppo-hh"), 1820, ("rb", 700),
         "rollback openrlhf tensorboard ppo rlhf several-evals one-eval-declines safety",
         "OpenRLHF PPO RLHF at 1000 of 2500 with three eval sets. RM reward keeps rising (1.3 -> 2.1). "
         "Helpfulness win rate rose 0.40 -> 0.58 by 700 and is flat since (0.585); XSTest compliance flat. The "
         "harmful-prompt refusal rate held 0.93-0.94 through 700 and then falls to 0.78 at 1000 (N=500, sd "
         "0.011; 14 sd): the policy learned that complying scores higher. Since 700 nothing was gained and "
         "safety was lost: roll back to ~700 (the end of the stretch where refusal was intact)."),
    Spec("bad-finished-3200-validation-best-1300-to-2200-slides-nemo-tb-step-ckpts",
         Plot([Bern("train/reward", pw((0, .33), (1300, .56), (2200, .57), (3200, .50)), P=64, G=16,
                    pct=("train/baseline_reward/pct_0", "train/baseline_reward/pct_1")),
               Side("train/kl_penalty", pw((0, 0), (2200, .01), (3200, .05)), .06),
               Side("train/approx_entropy", pw((0, .55), (2200, .35), (3200, .15)), .04),
               Side("train/mean_gen_tokens_per_sample", pw((0, 1200), (2200, 1350), (3200, 900)), .03),
               Rate("train/truncation_rate", k(.02), 1024), Heavy("train/grad_norm", k(.15)),
               Exact("train/lr", k(1e-6)), Side("train/token_mult_prob_error", k(1.004), .0005),
               Binom("validation/accuracy", pw((0, .35), (1300, .52), (2200, .525), (3200, .45)), 500)],
              "validation/accuracy", 3200, 3200, eval_every=100, eval0=True, state="finished", age_min=400, sps=90),
         lambda r, f: w_nemo(r, f, "exp_002", 400, 100), 1821, ("rb", 2200),
         "rollback nemo-rl tensorboard finished long-good-stretch entropy-drain",
         "NeMo-RL GRPO, finished at max_num_steps 3200, checkpoints every 400. validation/accuracy reached 0.51 "
         "by ~1200 and held ~0.52 to 2200 (a 1000-step good stretch); over the last 1000 steps entropy drains "
         "0.35 -> 0.15, responses shorten 1350 -> 900 tokens and validation slides to 0.45 (N=500, sd 0.022; "
         "3.4 sd). Keep an earlier model: the end of the good stretch, ~2200 (step_2000 is the newest saved "
         "checkpoint at or before it)."),
    Spec("bad-grad-spikes-then-nan-crash-traceback-openrlhf-console",
         Plot([Bern("reward", pw((0, .30), (400, .50), (470, .51), (520, .35), (560, .05)), P=128),
               Side("kl", pw((0, 0), (470, .02), (500, .05), (530, .4), (560, 2.0)), .06),
               Heavy("actor_grad_norm", nan_after(540, pw((0, .3), (470, .3), (500, .9), (530, 8)))),
               Signed("policy_loss", nan_after(540, k(0.0)), .01),
               Side("response_length", pw((0, 900), (470, 1000), (540, 3500), (560, 4096)), .03),
               Rate("truncated", pw((0, .02), (470, .03), (540, .7), (560, 1.0)), 1024),
               Exact("actor_lr", k(5e-7)), Side("ppo_clip_ratio", pw((0, .002), (470, .004), (540, .2)), .1),
               Binom("eval_math_pass1", pw((0, .30), (400, .50), (470, .505), (520, .38), (560, .03)), 500)],
              "eval_math_pass1", 1200, 560, eval_every=40, state="crashed", age_min=40, sps=75),
         lambda r, f: w_openrlhf_console(r, f, "train_reinforce.log", 1200, TB_CRASH_OPENRLHF), 1822, ("rb", 470),
         "rollback openrlhf console crashed traceback nan grad-explosion",
         "OpenRLHF REINFORCE++ console log ending in a FloatingPointError traceback at step 560 of 1200 (40 "
         "minutes ago). Grad norm, steady ~0.3 with the usual rare spikes, climbs from ~470 (0.9 at 500, 8 at 530), then policy_loss and grad_norm "
         "are nan from 540, responses run to the 4096 cap and reward falls 0.51 -> 0.05. MATH pass@1 peaked "
         "~0.50 (400-440) and is 0.03 at 560. The last weights are garbage: roll back to ~440, before the "
         "explosion began, and restart from there."),
    Spec("bad-agent-quits-early-to-dodge-turn-penalty-return-up-solve-rate-down-custom-jsonl",
         Plot([Episodes({"ret": "train/ret", "succ": "train/succ", "turns": "turns_per_ep"},
                        pw((0, .15), (300, .34), (330, .345), (600, .25)), pw((0, 4), (330, 5), (600, 1.8)),
                        E=64, pen=.05, cap=12),
               Rate("early_final_rate", pw((0, .02), (330, .03), (600, .45)), 64),
               Side("tool_ok_rate", k(.88), .02), Side("kl_ref", pw((0, 0), (330, .04), (600, .12)), .06),
               Side("ent", pw((0, .8), (330, .7), (600, .45)), .03), Heavy("gnorm", k(.5)), Exact("lr", k(1e-6)),
               Binom("val_solve_rate", pw((0, .14), (300, .33), (330, .335), (600, .24)), 300)],
              "val_solve_rate", 1500, 600, eval_every=30, eval0=True, age_min=5, sps=160),
         lambda r, f: w_custom_jsonl(r, f, "agent_metrics.jsonl",
                                     {"total_updates": 1500, "episodes_per_update": 64, "turn_penalty": 0.05,
                                      "max_turns": 12, "env": "sql-agent", "eval_every": 30}),
         1823, ("rb", 330), "rollback custom-jsonl agentic multi-turn reward-hacking turn-penalty mid-way",
         "Multi-turn SQL agent, custom loop, at 600 of 1500 (40%). Reward = success - 0.05 per turn. Until ~330 "
         "it learns honestly (val_solve_rate 0.14 -> 0.335). Then it learns to give a final answer at once on "
         "hard tasks: early_final_rate 3% -> 45%, turns 5 -> 1.8; train/ret still RISES (0.10 -> 0.16, fewer "
         "penalties) while train success falls and val_solve_rate drops to 0.24 (N=300, sd 0.027; 3.5 sd). "
         "Roll back to ~330."),
    Spec("bad-code-solutions-grow-into-exec-timeouts-lcb-falls-humaneval-holds-roll-tb",
         Plot([Bern(SC, pw((0, .25), (500, .42), (540, .43), (800, .36)), P=64),
               Rate("env/exec_timeout_rate", pw((0, .02), (540, .04), (800, .30)), 512),
               Side("tokens/response_length/mean", pw((0, 700), (540, 760), (800, 1500)), .04),
               Side("actor/entropy", pw((0, .55), (540, .45), (800, .42)), .04), Heavy("actor/grad_norm", k(.2)),
               Exact("actor/lr", k(1e-6)), Signed("actor/pg_loss", k(0.0), .01),
               Binom("val/score/lcb_v5", pw((0, .20), (500, .31), (540, .312), (800, .24)), 400),
               Binom("val/score/humaneval_plus", pw((0, .55), (540, .63), (800, .615)), 164)],
              "val/score/lcb_v5", 2000, 800, eval_every=20, eval0=True, age_min=8, sps=90),
         lambda r, f: w_roll(r, f, "coder7b-rlvr-lcb", 200), 1824, ("rb", 540),
         "rollback roll tensorboard code-rl exec-timeouts several-evals mid-way",
         "ROLL-style code RL at 800 of 2000. From ~540 solutions grow (760 -> 1500 tokens) into brute-force "
         "loops: env/exec_timeout_rate 4% -> 30%, train score 0.43 -> 0.36. LiveCodeBench val peaked ~0.31 "
         "(500-540) and is 0.24 at 800 (N=400, sd 0.023; 3 sd); HumanEval+ (N=164, sd 0.038) barely moves and "
         "cannot tell. Roll back to ~540 (checkpoint-400 is the newest on disk before it)."),
    Spec("bad-early-peak-at-15pct-lr-5e-6-slides-checked-at-30pct-trl-console-dicts",
         Plot([Bern("reward", pw((0, .40), (120, .58), (200, .585), (450, .41)), P=16, std="reward_std",
                    zero="frac_reward_zero_std"),
               Side("kl", pw((0, 0), (200, .02), (450, .35)), .06),
               Side("entropy", pw((0, .45), (200, .44), (450, .95)), .04),
               Side("completions/mean_length", pw((0, 420), (200, 400), (450, 780)), .04),
               Rate("completions/clipped_ratio", pw((0, .01), (200, .01), (450, .2)), 128),
               Heavy("grad_norm", pw((0, .3), (200, .5), (450, 1.6))),
               Exact("learning_rate", pw((0, 0), (20, 5e-6), (1500, 5e-6))),
               Binom(EV_TRL, pw((0, .42), (120, .60), (200, .605), (450, .45)), 500)],
              EV_TRL, 1500, 450, log_every=10, eval_every=30, age_min=3, sps=40),
         lambda r, f: w_trl_console(r, f, 1500), 1825, ("rb", 200),
         "rollback trl console dicts early-peak lr-too-high kl-runaway early-check",
         "TRL GRPO (beta 0.04, lr 5e-6: 5x the usual) printed as console dicts with tqdm bars, checked at 450 "
         "of 1500 (30%). Eval reward rose fast to ~0.60 at 120-200, then KL runs away 0.02 -> 0.35, entropy "
         "doubles 0.44 -> 0.95, lengths grow and eval falls to 0.45 at 450 (N=500, sd 0.022; 7 sd). The good "
         "model is behind: roll back to ~180-200 (last eval 180) and lower the lr."),
    Spec("bad-slow-erosion-3sd-over-700-steps-train-flat-wandb-history-export-csv",
         Plot([Bern(SC, pw((0, .38), (800, .55), (1600, .56)), P=128),
               *grpo_side(False, kl=pw((0, 0), (900, .006), (1600, .012)), ent=pw((0, .45), (900, .30), (1600, .38)),
                          length=pw((0, 1200), (900, 1500), (1600, 1650)), gn=k(.2), P=128),
               Binom("val-core/math_dapo/acc/mean@1", pw((0, .30), (700, .46), (900, .465), (1600, .415)), 1000)],
              "val-core/math_dapo/acc/mean@1", 3000, 1600, eval_every=50, eval0=True, age_min=14, sps=100),
         lambda r, f: w_wandb_history_csv(r, f, "wandb_history_qwen3-8b-dapo-v3.csv",
                                          {"trainer": {"total_training_steps": 3000, "save_freq": 100,
                                                       "test_freq": 50}, "algorithm": {"adv_estimator": "grpo"}}),
         1826, ("rb", 900), "rollback wandb history-export csv verl slow-erosion train-flat subtle",
         "verl GRPO exported from W&B with run.history() to CSV, at 1600 of 3000. Train score is flat ~0.55-"
         "0.56 since 800 and looks healthy, but held-out acc (N=1000, sd 0.016) peaked ~0.465 around 900 and "
         "has eroded steadily to 0.415 at 1600 (3 sd; every eval since 1200 below the peak band) while entropy "
         "creeps back up 0.30 -> 0.38. A slow real decline: roll back to ~900."),
    Spec("bad-stalled-4h-gsm8k-slid-math-flat-verl-console",
         Plot([Bern(SC, pw((0, .55), (300, .74), (340, .745), (520, .70)), P=128),
               *grpo_side(False, kl=pw((0, 0), (340, .006), (520, .03)), ent=pw((0, .4), (340, .3), (520, .18)),
                          length=pw((0, 260), (340, 230), (520, 170)), gn=k(.25), P=128),
               Binom("val-core/openai/gsm8k/acc/mean@1", pw((0, .55), (300, .74), (340, .745), (520, .69)), 1319),
               Binom("val-core/hendrycks_math/acc/mean@1", pw((0, .30), (340, .36), (520, .36)), 500)],
              "val-core/openai/gsm8k/acc/mean@1", 1000, 520, eval_every=20, eval0=True, state="stalled",
              age_min=250, sps=60),
         lambda r, f: w_verl_console(r, f, False, "gsm8k-math", "qwen25-3b-grpo-mix", 100, "verl_run.log",
                                     tail=STALL_TAIL), 1827, ("rb", 340),
         "rollback verl console stalled several-evals one-eval-declines entropy-drain",
         "verl GRPO whose log stopped 4 hours ago at step 520 of 1000 after an NCCL watchdog warning (hung). "
         "GSM8K val acc peaked ~0.745 (300-340) and slid to 0.69 at 520 (N=1319, sd 0.012; 4.6 sd) as entropy "
         "drained 0.30 -> 0.18 and answers shortened 230 -> 170 tokens; the MATH val set stays flat at 0.36. "
         "Do not just restart from the latest checkpoint: roll back to ~340."),
    Spec("sor-bleu-reward-creeps-heldout-em-eases-1sd-kl-creeps-custom-csv",
         Plot([Score("bleu", pw((0, 22), (500, 31), (700, 31.5), (1400, 31.8)), B=128, c=3, lo=0, hi=100),
               Side("kl", pw((0, 0), (700, .03), (1400, .08)), .06), Side("entropy", pw((0, .9), (700, .75), (1400, .62)), .03),
               Heavy("grad_norm", k(.6)), Exact("lr", k(1e-6)), Side("gen_len", pw((0, 38), (1400, 41)), .03),
               Binom("heldout_em", pw((0, .31), (500, .42), (700, .425), (1400, .41)), 1000)],
              "heldout_em", 2000, 1400, eval_every=100, eval0=True, age_min=10, sps=35),
         lambda r, f: w_custom_csv(r, f, "metrics.csv", ["bleu", "kl", "entropy", "grad_norm", "lr", "gen_len"],
                                   {"max_steps": 2000, "reward": "sentence BLEU (0-100)", "task": "data-to-text",
                                    "heldout_em": "exact match of extracted slot values on 1000 held-out tables"},
                                   eval_file="heldout.csv"),
         1828, ("sor", 700), "stop-or-rollback custom-csv own-metric-names bleu drift within-noise",
         "Data-to-text RL with sentence-BLEU as the reward, at 1400 of 2000. BLEU rose 22 -> 31 by 500 and has "
         "crept only to ~31.8 since; heldout_em peaked ~0.425 around 700 and is ~0.41 now (N=1000, sd 0.016: one "
         "sd), while KL keeps growing 0.03 -> 0.08 and entropy falls. No gain left and a drift that cannot be "
         "told from noise: stop; going back to ~700 is as good."),
]

CASES = [s.case() for s in SPECS]
BY_NAME = {s.name: s for s in SPECS}


def write_run(case: Case, folder: Path) -> None:
    spec = BY_NAME[case.name]
    run = spec.plot.draw(case.seed)
    folder.mkdir(parents=True, exist_ok=True)
    case.write(run, folder)
    stamp(folder, run)


def check(cases: list[Case]) -> None:
    for c in cases:
        p = BY_NAME[c.name].plot
        tr = p.track(p.head)
        steps = p.head_steps()
        sign = -1 if tr.lower else 1
        best_s = max(steps, key=lambda s: sign * tr.level(s))
        sd = tr.sd(best_s, p.log_every)
        gap = sign * (tr.level(best_s) - tr.level(steps[-1])) / sd if sd else 0.0
        print(f"{c.name}: {c.labels['preferred']} accept={c.labels['accept']} "
              f"window={c.labels.get('rollback_window')} onset={c.labels.get('onset_step')} "
              f"[{p.state}, {p.reached}/{p.plan} = {100 * p.reached / p.plan:.0f}%, age {p.age_min:.0f} min]")
        print(f"    headline {p.head}{' (lower better)' if tr.lower else ''}: best {tr.level(best_s):.4g}@{best_s} "
              f"last {tr.level(steps[-1]):.4g}@{steps[-1]} sd {sd:.4f} ({gap:.1f} sd worse than best)")
        run = p.draw(c.seed)
        pts = run["eval"] if tr.is_eval else run["train"]
        pts = [(s, v[p.head]) for s, v in pts]
        stride = max(1, len(pts) // 14)
        print("    drawn " + " ".join(f"{s}:{x:.3f}" for s, x in pts[::stride]) + " | last "
              + " ".join(f"{s}:{x:.3f}" for s, x in pts[-3:]))


HEADER = """# Holdout set 18: blind-labelled runs written by make_holdout18.py, without reading the assessor, its tests or
# the other holdout generators. Labels: what a careful practitioner should do under DESIGN.md's decision contract,
# read from each plot's noise-free levels. rollback_window is inclusive: from the first logged headline step whose
# level is within one sampling sd of the best level (the minimum for lower-is-better headlines) to the newest such
# step not after onset_step, in the run's own step units.
# Run `.venv/bin/python evals/holdout18/make_holdout18.py` to write runs/ (gitignored); `--check` prints levels.
"""


def main() -> None:
    holdout_kit.main(HERE, "make_holdout18.py", "holdout18.yaml", "h18-", "holdout18", HEADER, CASES, write_run,
                     check)


if __name__ == "__main__":
    main()
